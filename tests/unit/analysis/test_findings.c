/* SPDX-License-Identifier: MIT */
/*
 * test_findings.c - the rules of rec/findings.h on two recordings written
 * with the real writer (zstd, small chunks, events in commit order: a span
 * after the events inside it) and read back with the real reader in
 * timestamp order, each rule on the recording that triggers it and on the
 * one that must not; every number asserted against what the test wrote.
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
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/analysis.h"
#include "rec/findings.h"
#include "rec/rec.h"

typedef struct membuf {
	unsigned char *p;
	size_t len, cap;
} membuf;

static int mem_write(void *opaque, const void *buf, size_t len)
{
	membuf *m = opaque;
	if (m->len + len > m->cap) {
		size_t nc = m->cap ? m->cap : 4096;
		while (nc < m->len + len)
			nc *= 2;
		unsigned char *np = realloc(m->p, nc);
		if (!np)
			return -12;
		m->p = np;
		m->cap = nc;
	}
	memcpy(m->p + m->len, buf, len);
	m->len += len;
	return 0;
}

#define T0 1000000000000ull
#define WALL0 1796206443000000000ll
#define MS 1000000ull
#define MIB (1024ull * 1024ull)

enum { T_DROPPED = 3, T_LOCKWAIT = 16, T_SLEEP = 18, T_ALLOC = 19, T_CPU = 21, T_REQ = 300 };
enum { TH_MAIN = 1, TH_W1, TH_W2, TH_W3 };
enum { F_LOCKREC = 1, F_HANDLE, F_LOOP, F_WARMUP, F_HASH, F_FILL, F_SLEEPREC, F_MALLOCREC };
enum { S_LOCK = 1, S_HOLD, S_WARM, S_CPU, S_ALLOC, S_ALLOC_WARM };

#define D_T_S (REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK)
#define T_S (REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK)

static const rec_field f_lock[] = {
	{ "lockAddress", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "lockName", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "holderOsThreadId", "", "", REC_TYPE_U64, REC_UNIT_NONE },
	{ "lockKind", "", "", REC_TYPE_U8, REC_UNIT_NONE },
};
static const rec_field f_sleep[] = {
	{ "kind", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "requested", "", "", REC_TYPE_U64, REC_UNIT_NANOS },
	{ "objectAddress", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
};
static const rec_field f_alloc[] = {
	{ "address", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "size", "", "", REC_TYPE_U64, REC_UNIT_BYTES },
	{ "weight", "", "", REC_TYPE_U64, REC_UNIT_BYTES },
	{ "sampled", "", "", REC_TYPE_BOOL, REC_UNIT_NONE },
};
static const rec_field f_cpu[] = {
	{ "period", "", "", REC_TYPE_U64, REC_UNIT_NANOS },
	{ "overruns", "", "", REC_TYPE_U32, REC_UNIT_COUNT },
};
static const rec_field f_req[] = {
	{ "path", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "status", "", "", REC_TYPE_U32, REC_UNIT_NONE },
};
static const rec_field f_dropped[] = {
	{ "count", "", "", REC_TYPE_U64, REC_UNIT_COUNT },
	{ "thread", "", "", REC_TYPE_THREAD, REC_UNIT_NONE },
	{ "reason", "", "", REC_TYPE_U8, REC_UNIT_NONE },
	{ "type", "", "", REC_TYPE_U32, REC_UNIT_NONE },
};

typedef struct gen {
	rec_writer *w;
	uint64_t str;
} gen;

static void ok(rec_status st) { assert_int_equal(st, REC_OK); }

static uint64_t str(gen *g, const char *s)
{
	uint64_t id = ++g->str;
	ok(rec_writer_define_string(g->w, id, s, strlen(s)));
	return id;
}

static void open_gen(gen *g, membuf *m)
{
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.run_id = 0xabc;
	o.pid = 77;
	o.process_start_ns = WALL0;
	o.anchor_wall_ns = WALL0;
	o.anchor_ticks = T0;
	o.chunk_events_size = 200;
	rec_sink sink = { mem_write, NULL, m };
	g->str = 0;
	ok(rec_writer_open(&g->w, &sink, &o));
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
	static const char *const fn[] = { "rec_mutex_lock_contended_", "handle", "main_loop",
					  "warmup", "hash", "cache_fill", "rec_sleep_ns",
					  "rec_malloc" };
	for (size_t i = 0; i < 8; i++)
		ok(rec_writer_define_frame(g->w, i + 1, str(g, fn[i]), 0, 0x100 * (i + 1), 4));
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

static uint64_t at(double ms) { return T0 + (uint64_t)(ms * (double)MS); }

static void sleep_ev(gen *g, uint64_t th, uint64_t stack, double s, double e)
{
	ok(rec_writer_begin(g->w, T_SLEEP, at(s), at(e) - at(s), th, stack));
	ok(rec_writer_put_u64(g->w, str(g, "sleep")));
	ok(rec_writer_put_u64(g->w, at(e) - at(s)));
	ok(rec_writer_put_u64(g->w, 0));
	ok(rec_writer_end(g->w));
}

static void alloc_ev(gen *g, uint64_t th, uint64_t stack, double t, uint64_t addr, uint64_t size)
{
	ok(rec_writer_begin(g->w, T_ALLOC, at(t), 0, th, stack));
	ok(rec_writer_put_u64(g->w, addr));
	ok(rec_writer_put_u64(g->w, size));
	ok(rec_writer_put_u64(g->w, size));
	ok(rec_writer_put_u64(g->w, false));
	ok(rec_writer_end(g->w));
}

static void cpu_ev(gen *g, uint64_t th, double t, uint32_t overruns)
{
	ok(rec_writer_begin(g->w, T_CPU, at(t), 0, th, S_CPU));
	ok(rec_writer_put_u64(g->w, 10 * MS));
	ok(rec_writer_put_u64(g->w, overruns));
	ok(rec_writer_end(g->w));
}

static void req_ev(gen *g, uint64_t th, double s, double e, const char *path)
{
	ok(rec_writer_begin(g->w, T_REQ, at(s), at(e) - at(s), th, 0));
	ok(rec_writer_put_u64(g->w, str(g, path)));
	ok(rec_writer_put_u64(g->w, 200));
	ok(rec_writer_end(g->w));
}

static void wait_ev(gen *g, double s, double e)
{
	ok(rec_writer_begin(g->w, T_LOCKWAIT, at(s), at(e) - at(s), TH_W1, S_LOCK));
	ok(rec_writer_put_u64(g->w, 0xbeef));
	ok(rec_writer_put_u64(g->w, str(g, "cache-lock")));
	ok(rec_writer_put_u64(g->w, 102));
	ok(rec_writer_put_u64(g->w, 0));
	ok(rec_writer_end(g->w));
}

static void write_rec(membuf *m, bool fixed)
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

/* ---- running the rules ---- */

typedef struct run {
	rec_findings *f;
	const rec_finding *list;
	size_t n;
} run;

static void run_findings(run *r, const membuf *m, const char *by)
{
	memset(r, 0, sizeof *r);
	rec_findings_options o = REC_FINDINGS_OPTIONS_INIT;
	o.by = by;
	ok(rec_findings_open(&r->f, &o));
	rec_reader *rd = NULL;
	rec_summary *s = NULL;
	ok(rec_summary_open(&s));
	ok(rec_reader_open_mem(&rd, m->p, m->len, "mem", NULL));
	ok(rec_summary_add_reader(s, rd, "mem", REC_SUMMARY_DROPS | REC_SUMMARY_COUNTERS));
	rec_reader_close(rd);
	ok(rec_findings_add_summary(r->f, rec_summary_get(s)));
	rec_summary_close(s);
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.flags = REC_READ_ORDERED;
	ok(rec_reader_open_mem(&rd, m->p, m->len, "mem", &ro));
	ok(rec_findings_begin_input(r->f));
	rec_event ev;
	rec_status st;
	while ((st = rec_reader_next_event(rd, &ev)) == REC_OK)
		ok(rec_findings_add_event(r->f, &ev));
	assert_int_equal(st, REC_END);
	rec_reader_close(rd);
	ok(rec_findings_get(r->f, &r->list, &r->n));
}

static size_t count(const run *r, const char *rule)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += strcmp(r->list[i].rule, rule) == 0;
	return n;
}

static const rec_finding *get(const run *r, const char *rule, const char *subject)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->list[i].rule, rule) == 0 && strcmp(r->list[i].subject, subject) == 0)
			return &r->list[i];
	return NULL;
}

static const rec_finding_fact *fact(const rec_finding *x, const char *key)
{
	for (size_t i = 0; i < x->fact_count; i++)
		if (strcmp(x->facts[i].key, key) == 0)
			return &x->facts[i];
	fail_msg("finding %s has no fact %s", x->rule, key);
	return NULL;
}

static uint64_t U(const rec_finding *x, const char *key) { return fact(x, key)->value.u; }

static membuf slow, fixed;

static int setup(void **state)
{
	(void)state;
	write_rec(&slow, false);
	write_rec(&fixed, true);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(slow.p);
	free(fixed.p);
	return 0;
}

static void t_lock_held_while_blocked(void **state)
{
	(void)state;
	run r;
	run_findings(&r, &slow, "path");
	const rec_finding *x = get(&r, "lock-held-while-blocked", "cache-lock");
	assert_non_null(x);
	assert_int_equal(x->severity, REC_FINDING_CRITICAL); /* 140 of 160 ms: 87.5 % */
	assert_string_equal(fact(x, "holder_site")->value.text, "cache_fill");
	assert_string_equal(fact(x, "holders")->value.text, "w2 (1)");
	assert_int_equal(U(x, "waits"), 1);
	assert_int_equal(U(x, "waiters_total"), 160 * MS);
	assert_int_equal(U(x, "waiters_max"), 160 * MS);
	assert_int_equal(U(x, "holder_sleeping"), 140 * MS);
	assert_true(fact(x, "blocked_percent")->value.f > 87.4 && fact(x, "blocked_percent")->value.f < 87.6);
	assert_int_equal(x->example_count, 1);
	assert_true(x->examples[0].timed);
	assert_int_equal(x->examples[0].wall_ns, WALL0 + (int64_t)(420 * MS));
	assert_int_equal(x->examples[0].offset_ns, (int64_t)(420 * MS));
	assert_int_equal(x->examples[0].duration_ns, (int64_t)(160 * MS));
	assert_string_equal(x->examples[0].thread, "w1");
	assert_string_equal(x->examples[0].what, "rec.LockWait on cache-lock, held by w2");
	assert_string_equal(x->next, "rec-view contention-by-lock");
	assert_non_null(strstr(x->summary, "cache_fill"));
	assert_true(r.list[0].severity == REC_FINDING_CRITICAL); /* the heaviest first */
	for (size_t i = 1; i < r.n; i++)
		assert_true(r.list[i - 1].severity >= r.list[i].severity);
	rec_findings_close(r.f);

	run_findings(&r, &fixed, "path"); /* 1 ms wait while the holder ran */
	assert_int_equal(count(&r, "lock-held-while-blocked"), 0);
	rec_findings_close(r.f);
}

static void t_lock_dominates_latency(void **state)
{
	(void)state;
	run r;
	run_findings(&r, &slow, "path");
	assert_int_equal(count(&r, "lock-dominates-latency"), 1);
	const rec_finding *x = get(&r, "lock-dominates-latency", "app.Request path=/get");
	assert_non_null(x);
	assert_int_equal(U(x, "lock_wait"), 160 * MS);
	assert_int_equal(U(x, "mean"), 200 * MS);
	assert_string_equal(fact(x, "lock")->value.text, "cache-lock");
	assert_string_equal(x->next, "rec-view requests --by path");
	rec_findings_close(r.f);
	run_findings(&r, &fixed, "path");
	assert_int_equal(count(&r, "lock-dominates-latency"), 0);
	rec_findings_close(r.f);
}

static void t_waiting_not_computing(void **state)
{
	(void)state;
	run r;
	run_findings(&r, &slow, "path");
	assert_int_equal(count(&r, "waiting-not-computing"), 2); /* /get (lock), /fill (sleep) */
	const rec_finding *x = get(&r, "waiting-not-computing", "app.Request path=/fill");
	assert_non_null(x);
	assert_int_equal(U(x, "sleep"), 150 * MS);
	assert_int_equal(U(x, "cpu"), 0);
	assert_non_null(get(&r, "waiting-not-computing", "app.Request path=/get"));
	/* /hash computes (100 ms of samples in 100 ms), /fast is 1 ms */
	assert_null(get(&r, "waiting-not-computing", "app.Request path=/hash"));
	assert_null(get(&r, "waiting-not-computing", "app.Request path=/fast"));
	rec_findings_close(r.f);
}

static void t_allocation_outlier(void **state)
{
	(void)state;
	run r;
	run_findings(&r, &slow, "path");
	assert_int_equal(count(&r, "allocation-outlier"), 1);
	const rec_finding *x = get(&r, "allocation-outlier", "app.Request path=/hash");
	assert_non_null(x);
	assert_int_equal(U(x, "per_span"), MIB);
	assert_int_equal(U(x, "next_per_span"), 0);
	rec_findings_close(r.f);
	run_findings(&r, &slow, NULL); /* one span type: nothing to compare */
	assert_int_equal(count(&r, "allocation-outlier"), 0);
	rec_findings_close(r.f);
	run_findings(&r, &fixed, "path"); /* 1 MiB per span everywhere */
	assert_int_equal(count(&r, "allocation-outlier"), 0);
	rec_findings_close(r.f);
}

static void t_startup(void **state)
{
	(void)state;
	run r;
	run_findings(&r, &slow, NULL);
	const rec_finding *x = get(&r, "startup-work", "before the first app.Request");
	assert_non_null(x);
	assert_int_equal(x->severity, REC_FINDING_INFO);
	assert_int_equal(U(x, "sleep"), 300 * MS);
	assert_int_equal(U(x, "allocated"), 4 * MIB);
	assert_int_equal(U(x, "allocations"), 2);
	assert_string_equal(fact(x, "sleep_site")->value.text, "warmup (300.0 ms)");
	rec_findings_close(r.f);
	run_findings(&r, &fixed, NULL);
	assert_int_equal(count(&r, "startup-work"), 0);
	rec_findings_close(r.f);
}

static void t_recording_rules(void **state)
{
	(void)state;
	run r;
	run_findings(&r, &slow, NULL);
	static const char *const quiet[] = { "dropped-events", "write-failures", "crashes", "restarts",
					     "counter-resets", "sampler-behind", "damaged-chunks",
					     "lock-order-cycle" };
	for (size_t i = 0; i < sizeof quiet / sizeof quiet[0]; i++)
		assert_int_equal(count(&r, quiet[i]), 0);
	rec_findings_close(r.f);

	run_findings(&r, &fixed, NULL);
	const rec_finding *x = get(&r, "dropped-events", "7 events lost");
	assert_non_null(x);
	assert_int_equal(U(x, "dropped"), 7);
	assert_string_equal(fact(x, "by_type")->value.text, "7 rec.Alloc (buffer full)");
	x = get(&r, "sampler-behind", "rec.CPUSample");
	assert_non_null(x);
	assert_int_equal(U(x, "samples"), 11);
	assert_int_equal(U(x, "overrun_samples"), 10);
	assert_int_equal(U(x, "overruns"), 30);
	assert_int_equal(x->example_count, 1);
	assert_string_equal(x->examples[0].thread, "w3");
	rec_findings_close(r.f);
}

static void t_api(void **state)
{
	(void)state;
	size_t n;
	const rec_finding_rule *rules = rec_findings_rules(&n);
	assert_int_equal(n, 13);
	for (size_t i = 0; i < n; i++) {
		assert_true(rules[i].description[0]);
		for (size_t k = 0; k < i; k++)
			assert_string_not_equal(rules[i].name, rules[k].name);
	}
	assert_string_equal(rec_finding_severity_name(REC_FINDING_CRITICAL), "critical");
	rec_findings *f = NULL;
	rec_findings_options o = REC_FINDINGS_OPTIONS_INIT;
	o.reserved[2] = 1;
	assert_int_equal(rec_findings_open(&f, &o), REC_ERR_INVALID_ARG);
	assert_null(f);
	o.reserved[2] = 0;
	o.flags = 0x80;
	assert_int_equal(rec_findings_open(&f, &o), REC_ERR_INVALID_ARG);
	ok(rec_findings_open(&f, NULL));
	const rec_finding *l1, *l2;
	size_t n1, n2;
	ok(rec_findings_get(f, &l1, &n1));
	assert_int_equal(n1, 0);
	ok(rec_findings_get(f, &l2, &n2));
	assert_true(l1 == l2 && n1 == n2);
	rec_event ev;
	memset(&ev, 0, sizeof ev);
	assert_int_equal(rec_findings_add_event(f, &ev), REC_ERR_INVALID_ARG);
	assert_non_null(rec_findings_table(f, "latency"));
	assert_null(rec_findings_table(f, "no-such-table"));
	rec_findings_close(f);
	rec_findings_close(NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_lock_held_while_blocked), cmocka_unit_test(t_lock_dominates_latency),
		cmocka_unit_test(t_waiting_not_computing),   cmocka_unit_test(t_allocation_outlier),
		cmocka_unit_test(t_startup),                 cmocka_unit_test(t_recording_rules),
		cmocka_unit_test(t_api),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
