/* SPDX-License-Identifier: MIT */
/*
 * findings_fixture.h - test support shared by the tests of rec/findings.h
 * (tests/unit/analysis/test_findings.c and test_findings_MODULE.c, one per
 * module of libfmt/analysis/findings_*.c): two recordings written with the
 * real writer (zstd, small chunks, events in commit order: a span after
 * the events inside it) and read back with the real reader in timestamp
 * order, each rule tested on the one that triggers it and on the one that
 * must not; running the rules and looking up a finding and its facts.
 *
 * Recording SLOW (ms from the first event; threads main 100, w1 101, w2 102,
 * w3 103):
 *   main  0-300 rec.Sleep at warmup; 1, 2 two 2 MiB rec.Alloc at warmup;
 *         700-701 app.Request /fast
 *   w2    400-600 app.Request /fill: 410-560 rec.Sleep at cache_fill while
 *         holding cache-lock
 *   w1    405-605 app.Request /get: 420-580 rec.LockWait on cache-lock held by
 *         w2 (tid 102), site handle
 *   w3    400-500 app.Request /hash: CPU samples (10 ms, no overrun) at 410,
 *         420 ... 500; 450 a 1 MiB rec.Alloc at handle
 * Recording FIXED: the same spans, but w2 sleeps 410-560 without the lock and
 *   w1 waits 1 ms (561-562) while w2 runs (a CPU sample at 561.5); every
 *   path allocates 1 MiB per span (no outlier); no warm-up; w3's CPU samples
 *   carry 3 overruns each (sampler-behind); 800 a rec.Dropped of 7 rec.Alloc.
 *
 * Header-only, like readback.h (the helpers assert with cmocka): include it
 * from one .c file per binary, after <stdarg.h> <stddef.h> <stdint.h>
 * <setjmp.h> <cmocka.h>; a test group uses setup/teardown (they write and
 * free slow and fixed).
 */
#ifndef REC_TESTS_LIB_FINDINGS_FIXTURE_H
#define REC_TESTS_LIB_FINDINGS_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rec/analysis.h"
#include "rec/findings.h"
#include "rec/rec.h"

#include "gen.h"
#include "membuf.h"

enum { TH_MAIN = 1, TH_W1, TH_W2, TH_W3 };
enum { S_LOCK = 1, S_HOLD, S_WARM, S_CPU, S_ALLOC, S_ALLOC_WARM };

static __attribute__((unused))
void open_gen(gen *g, membuf *m)
{
	gen_open(g, m, 200);
	const rec_type types[] = {
		{ T_DROPPED, 0, "rec.Dropped", "", "", "rec", 4, f_dropped },
		{ T_LOCKWAIT, D_T_S, "rec.LockWait", "", "", "rec/Locks", 4, f_lock },
		{ T_SLEEP, D_T_S, "rec.Sleep", "", "", "rec/Waits", 3, f_sleep },
		{ T_ALLOC, T_S, "rec.Alloc", "", "", "rec/Memory", 4, f_alloc },
		{ T_CPU, T_S, "rec.CPUSample", "", "", "rec/Profiling", 2, f_cpu },
		{ T_REQ, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD, "app.Request", "", "", "app", 2,
		  f_req },
	};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		ok(rec_writer_add_type(g->w, &types[i]));
	ok(rec_writer_define_thread(g->w, TH_MAIN, 100, str(g, "main")));
	ok(rec_writer_define_thread(g->w, TH_W1, 101, str(g, "w1")));
	ok(rec_writer_define_thread(g->w, TH_W2, 102, str(g, "w2")));
	ok(rec_writer_define_thread(g->w, TH_W3, 103, str(g, "w3")));
	gen_frames(g);
	const uint64_t s_lock[] = { F_LOCKREC, F_HANDLE, F_LOOP };
	const uint64_t s_hold[] = { F_SLEEPREC, F_FILL, F_LOOP };
	const uint64_t s_warm[] = { F_SLEEPREC, F_WARMUP };
	const uint64_t s_cpu[] = { F_HASH, F_HANDLE, F_LOOP };
	const uint64_t s_alloc[] = { F_MALLOCREC, F_HANDLE, F_LOOP };
	const uint64_t s_alloc_warm[] = { F_MALLOCREC, F_WARMUP };
	ok(rec_writer_define_stack(g->w, S_LOCK, 0, s_lock, 3));
	ok(rec_writer_define_stack(g->w, S_HOLD, 0, s_hold, 3));
	ok(rec_writer_define_stack(g->w, S_WARM, 0, s_warm, 2));
	ok(rec_writer_define_stack(g->w, S_CPU, 0, s_cpu, 3));
	ok(rec_writer_define_stack(g->w, S_ALLOC, 0, s_alloc, 3));
	ok(rec_writer_define_stack(g->w, S_ALLOC_WARM, 0, s_alloc_warm, 2));
}

static __attribute__((unused))
void alloc_ev(gen *g, uint64_t th, uint64_t stack, double t, uint64_t addr, uint64_t size)
{
	ok(rec_writer_begin(g->w, T_ALLOC, at(t), 0, th, stack));
	ok(rec_writer_put_u64(g->w, addr));
	ok(rec_writer_put_u64(g->w, size));
	ok(rec_writer_put_u64(g->w, size));
	ok(rec_writer_put_u64(g->w, false));
	ok(rec_writer_end(g->w));
}

static __attribute__((unused))
void cpu_ev(gen *g, uint64_t th, double t, uint32_t overruns)
{
	ok(rec_writer_begin(g->w, T_CPU, at(t), 0, th, S_CPU));
	ok(rec_writer_put_u64(g->w, 10 * MS));
	ok(rec_writer_put_u64(g->w, overruns));
	ok(rec_writer_end(g->w));
}

static __attribute__((unused))
void wait_ev(gen *g, double s, double e)
{
	ok(rec_writer_begin(g->w, T_LOCKWAIT, at(s), at(e) - at(s), TH_W1, S_LOCK));
	ok(rec_writer_put_u64(g->w, 0xbeef));
	ok(rec_writer_put_u64(g->w, str(g, "cache-lock")));
	ok(rec_writer_put_u64(g->w, 102));
	ok(rec_writer_put_u64(g->w, 0));
	ok(rec_writer_end(g->w));
}

static __attribute__((unused))
void write_rec(membuf *m, bool fixed)
{
	gen g;
	open_gen(&g, m);
	if (!fixed) {
		alloc_ev(&g, TH_MAIN, S_ALLOC_WARM, 1, 0x1000, 2 * MIB);
		alloc_ev(&g, TH_MAIN, S_ALLOC_WARM, 2, 0x2000, 2 * MIB);
		sleep_ev(&g, TH_MAIN, S_WARM, 0, 300);
	}
	for (int i = 0; i < 10; i++) {
		cpu_ev(&g, TH_W3, 410 + 10 * i - 0.5, fixed ? 3 : 0);
		if (i == 4)
			alloc_ev(&g, TH_W3, S_ALLOC, 450, 0x9000, MIB);
	}
	req_ev(&g, TH_W3, 400, 500, "/hash");
	sleep_ev(&g, TH_W2, S_HOLD, 410, 560);
	if (fixed) {
		cpu_ev(&g, TH_W2, 561.5, 0);
		wait_ev(&g, 561, 562);
		alloc_ev(&g, TH_W2, S_ALLOC, 570, 0xa000, MIB);
		alloc_ev(&g, TH_W1, S_ALLOC, 590, 0xb000, MIB);
	} else {
		wait_ev(&g, 420, 580);
	}
	req_ev(&g, TH_W2, 400, 600, "/fill");
	req_ev(&g, TH_W1, 405, 605, "/get");
	if (fixed)
		alloc_ev(&g, TH_MAIN, S_ALLOC, 700.5, 0xc000, MIB);
	req_ev(&g, TH_MAIN, 700, 701, "/fast");
	if (fixed) {
		rec_writer_note_dropped(g.w, 7);
		ok(rec_writer_begin(g.w, T_DROPPED, at(800), 0, 0, 0));
		ok(rec_writer_put_u64(g.w, 7));
		ok(rec_writer_put_u64(g.w, 0));
		ok(rec_writer_put_u64(g.w, 0));
		ok(rec_writer_put_u64(g.w, T_ALLOC));
		ok(rec_writer_end(g.w));
	}
	ok(rec_writer_close(g.w));
}

/* Recording NOSPAN: SLOW's events without its spans (only types named
 * rec.*), w3's CPU samples with 2 overruns each; with late_span, one
 * app.Request at 900-901 after them all. */
static __attribute__((unused))
void write_nospan(membuf *m, bool late_span)
{
	gen g;
	open_gen(&g, m);
	alloc_ev(&g, TH_MAIN, S_ALLOC_WARM, 1, 0x1000, 2 * MIB);
	sleep_ev(&g, TH_MAIN, S_WARM, 0, 300);
	for (int i = 0; i < 10; i++)
		cpu_ev(&g, TH_W3, 410 + 10 * i - 0.5, 2);
	cpu_ev(&g, TH_W2, 415, 0);
	sleep_ev(&g, TH_W2, S_HOLD, 410, 560);
	wait_ev(&g, 420, 580);
	if (late_span)
		req_ev(&g, TH_MAIN, 900, 901, "/late");
	ok(rec_writer_close(g.w));
}

/* ---- running the rules ---- */

typedef struct run {
	rec_findings *f;
	const rec_finding *list;
	size_t n;
} run;

/* The findings of m in r (by: the --by field), the summary of sum (NULL:
 * m) added first as rec-report does; its CPU samples given as digests when
 * dig and the findings take them (rec_findings_digest_type()).  The status
 * of the first event the findings refuse (the reading stops there), or
 * REC_OK with r->list made. */
static __attribute__((unused))
rec_status read_findings(run *r, const membuf *m, const membuf *sum, const char *by, bool dig)
{
	memset(r, 0, sizeof *r);
	rec_findings_options o = REC_FINDINGS_OPTIONS_INIT;
	o.by = by;
	ok(rec_findings_open(&r->f, &o));
	if (!sum)
		sum = m;
	rec_reader *rd = NULL;
	rec_summary *s = NULL;
	ok(rec_summary_open(&s));
	ok(rec_reader_open_mem(&rd, sum->p, sum->len, "mem", NULL));
	ok(rec_summary_add_reader(s, rd, "mem", REC_SUMMARY_DROPS | REC_SUMMARY_COUNTERS));
	rec_reader_close(rd);
	ok(rec_findings_add_summary(r->f, rec_summary_get(s)));
	rec_summary_close(s);
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.flags = REC_READ_ORDERED;
	ok(rec_reader_open_mem(&rd, m->p, m->len, "mem", &ro));
	if (dig && rec_findings_digest_type(r->f))
		ok(rec_reader_digest_type(rd, rec_findings_digest_type(r->f), rec_findings_add_digests,
					  r->f));
	ok(rec_findings_begin_input(r->f));
	rec_event ev;
	rec_status st, add = REC_OK;
	while (add == REC_OK && (st = rec_reader_next_event(rd, &ev)) == REC_OK)
		add = rec_findings_add_event(r->f, &ev);
	rec_reader_close(rd);
	if (add != REC_OK)
		return add;
	assert_int_equal(st, REC_END);
	ok(rec_findings_get(r->f, &r->list, &r->n));
	return REC_OK;
}

static __attribute__((unused))
void same_text(const char *a, const char *b)
{
	assert_true((a == NULL) == (b == NULL));
	if (a)
		assert_string_equal(a, b);
}

/* a and b say the same, number for number. */
static __attribute__((unused))
void same_findings(const run *a, const run *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		const rec_finding *x = &a->list[i], *y = &b->list[i];
		same_text(x->rule, y->rule);
		assert_int_equal(x->severity, y->severity);
		same_text(x->subject, y->subject);
		same_text(x->summary, y->summary);
		same_text(x->next, y->next);
		assert_int_equal(x->fact_count, y->fact_count);
		for (size_t k = 0; k < x->fact_count; k++) {
			const rec_finding_fact *p = &x->facts[k], *q = &y->facts[k];
			same_text(p->key, q->key);
			assert_int_equal(p->kind, q->kind);
			assert_int_equal(p->value.null, q->value.null);
			same_text(p->value.text, q->value.text);
			assert_int_equal(p->value.u, q->value.u);
			assert_int_equal(p->value.i, q->value.i);
			assert_true(p->value.f == q->value.f);
		}
		assert_int_equal(x->example_count, y->example_count);
		for (size_t k = 0; k < x->example_count; k++) {
			const rec_finding_example *p = &x->examples[k], *q = &y->examples[k];
			assert_int_equal(p->timed, q->timed);
			assert_int_equal(p->wall_ns, q->wall_ns);
			assert_int_equal(p->offset_ns, q->offset_ns);
			assert_int_equal(p->duration_ns, q->duration_ns);
			same_text(p->thread, q->thread);
			same_text(p->what, q->what);
		}
	}
}

/* How many runs gave CPU samples as digests (a test that the comparison
 * below happened). */
static __attribute__((unused)) unsigned digest_runs;

/* The findings of m, read as rec-report reads it (CPU samples as digests)
 * and as events: the same findings both ways (the one kept: digests). */
static __attribute__((unused))
void run_findings(run *r, const membuf *m, const char *by)
{
	ok(read_findings(r, m, NULL, by, true));
	if (!rec_findings_digest_type(r->f))
		return;
	run e;
	ok(read_findings(&e, m, NULL, by, false));
	same_findings(r, &e);
	rec_findings_close(e.f);
	digest_runs++;
}

static __attribute__((unused))
size_t count(const run *r, const char *rule)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += strcmp(r->list[i].rule, rule) == 0;
	return n;
}

static __attribute__((unused))
const rec_finding *get(const run *r, const char *rule, const char *subject)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->list[i].rule, rule) == 0 && strcmp(r->list[i].subject, subject) == 0)
			return &r->list[i];
	return NULL;
}

static __attribute__((unused))
const rec_finding_fact *fact(const rec_finding *x, const char *key)
{
	for (size_t i = 0; i < x->fact_count; i++)
		if (strcmp(x->facts[i].key, key) == 0)
			return &x->facts[i];
	fail_msg("finding %s has no fact %s", x->rule, key);
	return NULL;
}

static __attribute__((unused))
uint64_t U(const rec_finding *x, const char *key) { return fact(x, key)->value.u; }

static __attribute__((unused)) membuf slow, fixed;

static __attribute__((unused))
int setup(void **state)
{
	(void)state;
	write_rec(&slow, false);
	write_rec(&fixed, true);
	return 0;
}

static __attribute__((unused))
int teardown(void **state)
{
	(void)state;
	free(slow.p);
	free(fixed.p);
	return 0;
}

#endif /* REC_TESTS_LIB_FINDINGS_FIXTURE_H */
