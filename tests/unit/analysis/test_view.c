/* SPDX-License-Identifier: MIT */
/*
 * test_view.c - the views of rec/view.h on recordings written with the real
 * writer (zstd, small chunks, events written in commit order: a span after
 * the events inside it, as the recorder writes them) and read back with the
 * real reader in timestamp order.  Every number of every view is asserted
 * against what the test wrote:
 *
 * Recording A (ms from the first event; threads main tid 100, worker-1 101,
 * worker-2 102):
 *   main      0-400 rec.Sleep at warmup; 1-4 ms four 1 MiB rec.Alloc at warmup
 *             (0x1000..0x4000), 5 ms rec.Free 0x1000; 10 ms a CPU sample
 *             (10 ms period, 1 overrun: 20 ms) in hash <- warmup;
 *             800-810 app.Request /get with nothing inside
 *   worker-2  500-700 app.Request /fill: 510-660 rec.Sleep at cache_fill
 *             (holding cache-lock), 670 a CPU sample (10 ms) hash <- handle
 *   worker-1  505-705 app.Request /get: 520-680 rec.LockWait on cache-lock held
 *             by worker-2, site handle; 681-686 rec.CondWait; 687 rec.Alloc
 *             2 MiB weight (size 1000, sampled) at handle; 690, 700 CPU
 *             samples (10 ms each)
 *   900       rec.Dropped: 7 rec.Alloc, buffer full
 * Recording B: 20,000 app.Request with durations from a fixed generator,
 * paths /a /b /c: percentiles against the nearest-rank values sorted here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <malloc.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/analysis.h"
#include "rec/rec.h"
#include "rec/view.h"

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

enum { T_DROPPED = 3, T_LOCKWAIT = 16, T_SLEEP = 18, T_ALLOC = 19, T_FREE = 20, T_CPU = 21,
       T_COND = 22, T_REQ = 300 };
enum { TH_MAIN = 1, TH_W1, TH_W2 };
enum { F_LOCKREC = 1, F_HANDLE, F_LOOP, F_WARMUP, F_HASH, F_FILL, F_SLEEPREC, F_MALLOCREC };
enum { S_LOCK = 1, S_HOLD, S_WARM, S_CPU_WARM, S_CPU, S_ALLOC, S_ALLOC_WARM, S_COND };

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
static const rec_field f_cond[] = {
	{ "condAddress", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "mutexAddress", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "mutexName", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "timeout", "", "", REC_TYPE_U64, REC_UNIT_NANOS },
	{ "timed", "", "", REC_TYPE_BOOL, REC_UNIT_NONE },
	{ "timedOut", "", "", REC_TYPE_BOOL, REC_UNIT_NONE },
};
static const rec_field f_alloc[] = {
	{ "address", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "size", "", "", REC_TYPE_U64, REC_UNIT_BYTES },
	{ "weight", "", "", REC_TYPE_U64, REC_UNIT_BYTES },
	{ "sampled", "", "", REC_TYPE_BOOL, REC_UNIT_NONE },
};
static const rec_field f_free[] = {
	{ "address", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "size", "", "", REC_TYPE_U64, REC_UNIT_BYTES },
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

static void open_gen(gen *g, membuf *m, uint32_t chunk)
{
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.run_id = 0xabc;
	o.pid = 77;
	o.process_start_ns = WALL0;
	o.anchor_wall_ns = WALL0;
	o.anchor_ticks = T0;
	o.chunk_events_size = chunk;
	rec_sink sink = { mem_write, NULL, m };
	g->str = 0;
	ok(rec_writer_open(&g->w, &sink, &o));
	const rec_type types[] = {
		{ T_DROPPED, 0, "rec.Dropped", "", "", "rec", 4, f_dropped },
		{ T_LOCKWAIT, D_T_S, "rec.LockWait", "", "", "rec/Locks", 4, f_lock },
		{ T_SLEEP, D_T_S, "rec.Sleep", "", "", "rec/Waits", 3, f_sleep },
		{ T_ALLOC, T_S, "rec.Alloc", "", "", "rec/Memory", 4, f_alloc },
		{ T_FREE, T_S, "rec.Free", "", "", "rec/Memory", 3, f_free },
		{ T_CPU, T_S, "rec.CPUSample", "", "", "rec/Profiling", 2, f_cpu },
		{ T_COND, D_T_S, "rec.CondWait", "", "", "rec/Waits", 6, f_cond },
		{ T_REQ, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD, "app.Request", "", "", "app", 2,
		  f_req },
	};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		ok(rec_writer_add_type(g->w, &types[i]));
	ok(rec_writer_define_thread(g->w, TH_MAIN, 100, str(g, "main")));
	ok(rec_writer_define_thread(g->w, TH_W1, 101, str(g, "worker-1")));
	ok(rec_writer_define_thread(g->w, TH_W2, 102, str(g, "worker-2")));
	static const char *const fn[] = { "rec_mutex_lock_contended_", "handle", "main_loop",
					  "warmup", "hash", "cache_fill", "rec_sleep_ns",
					  "rec_malloc" };
	for (size_t i = 0; i < 8; i++)
		ok(rec_writer_define_frame(g->w, i + 1, str(g, fn[i]), 0, 0x100 * (i + 1), 4));
	const uint64_t s_lock[] = { F_LOCKREC, F_HANDLE, F_LOOP };
	const uint64_t s_hold[] = { F_SLEEPREC, F_FILL, F_LOOP };
	const uint64_t s_warm[] = { F_SLEEPREC, F_WARMUP };
	const uint64_t s_cpu_warm[] = { F_HASH, F_WARMUP };
	const uint64_t s_cpu[] = { F_HASH, F_HANDLE, F_LOOP };
	const uint64_t s_alloc[] = { F_MALLOCREC, F_HANDLE, F_LOOP };
	const uint64_t s_alloc_warm[] = { F_MALLOCREC, F_WARMUP };
	const uint64_t s_cond[] = { F_HANDLE, F_LOOP };
	ok(rec_writer_define_stack(g->w, S_LOCK, 0, s_lock, 3));
	ok(rec_writer_define_stack(g->w, S_HOLD, 0, s_hold, 3));
	ok(rec_writer_define_stack(g->w, S_WARM, 0, s_warm, 2));
	ok(rec_writer_define_stack(g->w, S_CPU_WARM, 0, s_cpu_warm, 2));
	ok(rec_writer_define_stack(g->w, S_CPU, 0, s_cpu, 3));
	ok(rec_writer_define_stack(g->w, S_ALLOC, 0, s_alloc, 3));
	ok(rec_writer_define_stack(g->w, S_ALLOC_WARM, 0, s_alloc_warm, 2));
	ok(rec_writer_define_stack(g->w, S_COND, 0, s_cond, 2));
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

static void alloc_ev(gen *g, uint64_t th, uint64_t stack, double t, uint64_t addr, uint64_t size,
		     uint64_t weight, bool sampled)
{
	ok(rec_writer_begin(g->w, T_ALLOC, at(t), 0, th, stack));
	ok(rec_writer_put_u64(g->w, addr));
	ok(rec_writer_put_u64(g->w, size));
	ok(rec_writer_put_u64(g->w, weight));
	ok(rec_writer_put_u64(g->w, sampled));
	ok(rec_writer_end(g->w));
}

static void cpu_ev(gen *g, uint64_t th, uint64_t stack, double t, uint32_t overruns)
{
	ok(rec_writer_begin(g->w, T_CPU, at(t), 0, th, stack));
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

/* Recording A, in commit order (each event when it ends). */
static void write_a(membuf *m)
{
	gen g;
	open_gen(&g, m, 100);
	for (int i = 0; i < 4; i++)
		alloc_ev(&g, TH_MAIN, S_ALLOC_WARM, 1 + i, 0x1000 * (uint64_t)(i + 1), MIB, MIB, false);
	ok(rec_writer_begin(g.w, T_FREE, at(5), 0, TH_MAIN, S_ALLOC_WARM));
	ok(rec_writer_put_u64(g.w, 0x1000));
	ok(rec_writer_put_u64(g.w, MIB));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_end(g.w));
	cpu_ev(&g, TH_MAIN, S_CPU_WARM, 10, 1);
	sleep_ev(&g, TH_MAIN, S_WARM, 0, 400);
	sleep_ev(&g, TH_W2, S_HOLD, 510, 660);
	cpu_ev(&g, TH_W2, S_CPU, 670, 0);
	ok(rec_writer_begin(g.w, T_LOCKWAIT, at(520), at(680) - at(520), TH_W1, S_LOCK));
	ok(rec_writer_put_u64(g.w, 0xbeef));
	ok(rec_writer_put_u64(g.w, str(&g, "cache-lock")));
	ok(rec_writer_put_u64(g.w, 102));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_end(g.w));
	ok(rec_writer_begin(g.w, T_COND, at(681), at(686) - at(681), TH_W1, S_COND));
	ok(rec_writer_put_u64(g.w, 0xc0));
	ok(rec_writer_put_u64(g.w, 0xbeef));
	ok(rec_writer_put_u64(g.w, str(&g, "cache-lock")));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_end(g.w));
	alloc_ev(&g, TH_W1, S_ALLOC, 687, 0x9000, 1000, 2 * MIB, true);
	cpu_ev(&g, TH_W1, S_CPU, 690, 0);
	req_ev(&g, TH_W2, 500, 700, "/fill");
	cpu_ev(&g, TH_W1, S_CPU, 700, 0);
	req_ev(&g, TH_W1, 505, 705, "/get");
	req_ev(&g, TH_MAIN, 800, 810, "/get");
	rec_writer_note_dropped(g.w, 7); /* the chunk's Dropped_Events, as the recorder keeps it */
	ok(rec_writer_begin(g.w, T_DROPPED, at(900), 0, 0, 0));
	ok(rec_writer_put_u64(g.w, 7));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_put_u64(g.w, T_ALLOC));
	ok(rec_writer_end(g.w));
	ok(rec_writer_close(g.w));
}

/* ---- running a view ---- */

typedef struct run {
	rec_view *v;
	const rec_view_table *t;
	size_t n;
} run;

static void run_view(run *r, const membuf *m, rec_view_options *o)
{
	memset(r, 0, sizeof *r);
	ok(rec_view_open(&r->v, o));
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.flags = REC_READ_ORDERED;
	rec_reader *rd = NULL;
	ok(rec_reader_open_mem(&rd, m->p, m->len, "mem", &ro));
	ok(rec_view_begin_input(r->v));
	rec_event ev;
	rec_status st;
	while ((st = rec_reader_next_event(rd, &ev)) == REC_OK)
		ok(rec_view_add_event(r->v, &ev));
	assert_int_equal(st, REC_END);
	rec_reader_close(rd);
	if (strcmp(o->view, "recording") == 0) {
		rec_summary *s = NULL;
		ok(rec_summary_open(&s));
		ok(rec_reader_open_mem(&rd, m->p, m->len, "mem", NULL));
		ok(rec_summary_add_reader(s, rd, "mem", REC_SUMMARY_DROPS));
		rec_reader_close(rd);
		ok(rec_view_add_summary(r->v, rec_summary_get(s)));
		rec_summary_close(s);
	}
	ok(rec_view_get(r->v, &r->t, &r->n));
}

static void simple(run *r, const membuf *m, const char *view, const char *by)
{
	rec_view_options o = REC_VIEW_OPTIONS_INIT;
	o.view = view;
	o.by = by;
	run_view(r, m, &o);
}

static const rec_view_table *table(const run *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->t[i].name, name) == 0)
			return &r->t[i];
	fail_msg("no table %s", name);
	return NULL;
}

static int col(const rec_view_table *t, const char *key)
{
	for (size_t c = 0; c < t->column_count; c++)
		if (strcmp(t->columns[c].key, key) == 0)
			return (int)c;
	fail_msg("no column %s in %s", key, t->name);
	return -1;
}

static const rec_view_cell *cell(const rec_view_table *t, size_t row, const char *key)
{
	assert_true(row < t->row_count);
	return &t->cells[row * t->column_count + (size_t)col(t, key)];
}

static uint64_t U(const rec_view_table *t, size_t row, const char *key)
{
	const rec_view_cell *c = cell(t, row, key);
	assert_false(c->null);
	return c->u;
}

static const char *S(const rec_view_table *t, size_t row, const char *key)
{
	const rec_view_cell *c = cell(t, row, key);
	assert_false(c->null);
	return c->text;
}

/* The row whose text column key is value. */
static size_t row_of(const rec_view_table *t, const char *key, const char *value)
{
	for (size_t r = 0; r < t->row_count; r++) {
		const rec_view_cell *c = cell(t, r, key);
		if (!c->null && strcmp(c->text, value) == 0)
			return r;
	}
	fail_msg("no row %s=%s in %s", key, value, t->name);
	return 0;
}

/* ---- the views on recording A ---- */

static membuf rec_a;

static int setup(void **state)
{
	(void)state;
	write_a(&rec_a);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(rec_a.p);
	return 0;
}

static void t_latency(void **state)
{
	(void)state;
	run r;
	simple(&r, &rec_a, "latency", NULL);
	const rec_view_table *t = table(&r, "latency");
	assert_int_equal(t->row_count, 4); /* app.Request, rec.Sleep, rec.LockWait, rec.CondWait */
	size_t q = row_of(t, "type", "app.Request");
	assert_int_equal(U(t, q, "count"), 3);
	assert_int_equal(U(t, q, "max"), 200 * MS);
	assert_int_equal(U(t, q, "total"), 410 * MS);
	/* 10, 200, 200 ms: p50 is rank 2, within 1/256 */
	assert_true(fabs((double)U(t, q, "p50") - 200e6) <= 200e6 / 256);
	size_t s = row_of(t, "type", "rec.Sleep");
	assert_int_equal(U(t, s, "count"), 2);
	assert_int_equal(U(t, s, "total"), 550 * MS);
	assert_int_equal(U(t, s, "mean"), 275 * MS);
	assert_int_equal(U(t, row_of(t, "type", "rec.LockWait"), "max"), 160 * MS);
	assert_int_equal(U(t, row_of(t, "type", "rec.CondWait"), "total"), 5 * MS);
	/* heaviest total first */
	assert_string_equal(S(t, 0, "type"), "rec.Sleep");
	rec_view_close(r.v);

	simple(&r, &rec_a, "latency", "path");
	t = table(&r, "latency");
	assert_int_equal(t->row_count, 2);
	assert_true(rec_view_by_found(r.v));
	size_t g = row_of(t, "by", "/get");
	assert_int_equal(U(t, g, "count"), 2);
	assert_int_equal(U(t, g, "p50"), 10 * MS); /* rank 1 of 2 */
	assert_int_equal(U(t, g, "p99"), 200 * MS);
	assert_int_equal(U(t, row_of(t, "by", "/fill"), "count"), 1);
	/* each row's histogram (for drawing it): its count, min and max, the
	 * values below a bucket boundary; none past the last row */
	for (size_t i = 0; i < t->row_count; i++) {
		const rec_histogram *h = rec_view_latency_histogram(r.v, i);
		assert_non_null(h);
		assert_int_equal(rec_histogram_count(h), U(t, i, "count"));
		assert_int_equal(rec_histogram_max(h), U(t, i, "max"));
	}
	const rec_histogram *hg = rec_view_latency_histogram(r.v, g);
	assert_int_equal(rec_histogram_min(hg), 10 * MS);
	assert_int_equal(rec_histogram_count_below(hg, 1u << 27), 1); /* 134 ms: 10 below, 200 above */
	assert_null(rec_view_latency_histogram(r.v, t->row_count));
	rec_view_close(r.v);

	rec_view_options o = REC_VIEW_OPTIONS_INIT;
	o.view = "latency";
	o.type = "rec.Sleep";
	run_view(&r, &rec_a, &o);
	assert_true(rec_view_type_found(r.v));
	t = table(&r, "latency");
	assert_int_equal(t->row_count, 1);
	assert_string_equal(S(t, 0, "type"), "rec.Sleep");
	rec_view_close(r.v);
	o.type = "app.Nothing";
	run_view(&r, &rec_a, &o);
	assert_false(rec_view_type_found(r.v));
	rec_view_close(r.v);

	simple(&r, &rec_a, "contention-by-lock", NULL);
	assert_null(rec_view_latency_histogram(r.v, 0)); /* another view */
	rec_view_close(r.v);

	simple(&r, &rec_a, "latency", "nosuchfield");
	assert_false(rec_view_by_found(r.v));
	assert_int_equal(table(&r, "latency")->row_count, 0);
	rec_view_close(r.v);
}

static void t_requests(void **state)
{
	(void)state;
	run r;
	simple(&r, &rec_a, "requests", "path");
	const rec_view_table *t = table(&r, "requests");
	assert_int_equal(t->row_count, 2);
	size_t f = row_of(t, "by", "/fill");
	assert_int_equal(U(t, f, "spans"), 1);
	assert_int_equal(U(t, f, "mean"), 200 * MS);
	assert_int_equal(U(t, f, "sleep"), 150 * MS);
	assert_int_equal(U(t, f, "cpu"), 10 * MS);
	assert_int_equal(U(t, f, "lock_wait"), 0);
	assert_int_equal(U(t, f, "unaccounted"), 40 * MS);
	size_t g = row_of(t, "by", "/get");
	assert_int_equal(U(t, g, "spans"), 2);
	assert_int_equal(U(t, g, "mean"), 105 * MS);
	assert_int_equal(U(t, g, "max"), 200 * MS);
	assert_int_equal(U(t, g, "lock_wait"), 80 * MS);
	assert_int_equal(U(t, g, "cond_wait"), 2500000);
	assert_int_equal(U(t, g, "cpu"), 10 * MS);
	assert_int_equal(U(t, g, "unaccounted"), 12500000);
	assert_int_equal(U(t, g, "io"), 0);

	const rec_view_table *sl = table(&r, "slowest");
	assert_int_equal(sl->row_count, 3);
	/* two of 200 ms: the earlier first */
	assert_string_equal(S(sl, 0, "thread"), "worker-2");
	assert_true(cell(sl, 0, "lock")->null);
	assert_string_equal(S(sl, 1, "thread"), "worker-1");
	assert_int_equal(cell(sl, 1, "start")->i, (int64_t)(505 * MS));
	assert_int_equal(U(sl, 1, "wall"), 200 * MS);
	assert_int_equal(U(sl, 1, "lock_wait"), 160 * MS);
	assert_int_equal(U(sl, 1, "cond_wait"), 5 * MS);
	assert_int_equal(U(sl, 1, "cpu"), 20 * MS);
	assert_int_equal(U(sl, 1, "unaccounted"), 15 * MS);
	assert_string_equal(S(sl, 1, "lock"), "cache-lock");
	assert_string_equal(S(sl, 1, "holder"), "worker-2");
	assert_string_equal(S(sl, 2, "thread"), "main");
	assert_int_equal(U(sl, 2, "unaccounted"), 10 * MS);
	rec_view_close(r.v);

	/* --top 1: one row per table, the slowest only */
	rec_view_options o = REC_VIEW_OPTIONS_INIT;
	o.view = "requests";
	o.top = 1;
	run_view(&r, &rec_a, &o);
	t = table(&r, "slowest");
	assert_int_equal(t->row_count, 1);
	assert_string_equal(S(t, 0, "thread"), "worker-2");
	rec_view_close(r.v);
}

static void check_contention(const rec_view_table *t)
{
	assert_int_equal(t->row_count, 1);
	assert_string_equal(S(t, 0, "lock"), "cache-lock");
	assert_int_equal(U(t, 0, "waits"), 1);
	assert_int_equal(U(t, 0, "total"), 160 * MS);
	assert_int_equal(U(t, 0, "max"), 160 * MS);
	assert_int_equal(U(t, 0, "p99"), 160 * MS);
	assert_string_equal(S(t, 0, "holders"), "worker-2 (1)");
	assert_string_equal(S(t, 0, "holder_site"), "cache_fill");
	assert_int_equal(U(t, 0, "holder_sleeping"), 140 * MS);
	assert_int_equal(U(t, 0, "holder_running"), 10 * MS);
	assert_int_equal(U(t, 0, "holder_other"), 10 * MS);
	assert_int_equal(U(t, 0, "holder_cond_wait"), 0);
	assert_int_equal(U(t, 0, "holder_io"), 0);
}

static void t_contention(void **state)
{
	(void)state;
	run r;
	simple(&r, &rec_a, "contention-by-lock", NULL);
	check_contention(table(&r, "contention_by_lock"));
	rec_view_close(r.v);
	simple(&r, &rec_a, "contention-by-site", NULL);
	const rec_view_table *t = table(&r, "contention_by_site");
	check_contention(t);
	assert_string_equal(S(t, 0, "site"), "handle");
	rec_view_close(r.v);
	/* --thread picks the waiters; the holder is still looked at */
	rec_view_options o = REC_VIEW_OPTIONS_INIT;
	o.view = "contention-by-lock";
	o.thread = "worker-1";
	run_view(&r, &rec_a, &o);
	check_contention(table(&r, "contention_by_lock"));
	rec_view_close(r.v);
	o.thread = "worker-2";
	run_view(&r, &rec_a, &o);
	assert_int_equal(table(&r, "contention_by_lock")->row_count, 0);
	rec_view_close(r.v);
}

static void t_allocation(void **state)
{
	(void)state;
	run r;
	simple(&r, &rec_a, "allocation-by-site", NULL);
	const rec_view_table *t = table(&r, "allocation_by_site");
	assert_int_equal(t->row_count, 2);
	assert_string_equal(S(t, 0, "site"), "warmup");
	assert_int_equal(U(t, 0, "bytes"), 4 * MIB);
	assert_int_equal(U(t, 0, "allocations"), 4);
	assert_string_equal(S(t, 1, "site"), "handle");
	assert_int_equal(U(t, 1, "bytes"), 2 * MIB);
	assert_true(fabs(cell(t, 1, "percent")->f - 100.0 / 3.0) < 1e-9);
	rec_view_close(r.v);

	simple(&r, &rec_a, "allocation-by-span", "path");
	t = table(&r, "allocation_by_span");
	size_t g = row_of(t, "by", "/get");
	assert_int_equal(U(t, g, "spans"), 2);
	assert_int_equal(U(t, g, "bytes"), 2 * MIB);
	assert_int_equal(U(t, g, "per_span"), MIB);
	assert_int_equal(U(t, g, "max"), 2 * MIB);
	assert_int_equal(U(t, row_of(t, "by", "/fill"), "bytes"), 0);
	rec_view_close(r.v);

	simple(&r, &rec_a, "live-heap", NULL);
	t = table(&r, "live_heap");
	assert_int_equal(t->row_count, 2);
	assert_string_equal(S(t, 0, "stack"), "warmup");
	assert_string_equal(S(t, 0, "kind"), "reported");
	assert_string_equal(S(t, 1, "kind"), "sampled");
	assert_int_equal(U(t, 0, "blocks"), 3); /* 0x1000 was freed */
	assert_int_equal(U(t, 0, "bytes"), 3 * MIB);
	assert_string_equal(S(t, 1, "stack"), "main_loop;handle");
	assert_int_equal(U(t, 1, "bytes"), 1000);
	assert_int_equal(U(t, 1, "weight"), 2 * MIB);
	rec_view_close(r.v);
}

static void t_cpu_sleeps_threads(void **state)
{
	(void)state;
	run r;
	simple(&r, &rec_a, "hot-functions", NULL);
	const rec_view_table *t = table(&r, "hot_functions");
	assert_string_equal(S(t, 0, "function"), "hash");
	assert_int_equal(U(t, 0, "self_samples"), 4);
	assert_int_equal(U(t, 0, "self_cpu"), 50 * MS);
	size_t h = row_of(t, "function", "handle");
	assert_int_equal(U(t, h, "self_samples"), 0);
	assert_int_equal(U(t, h, "total_samples"), 3);
	assert_int_equal(U(t, h, "total_cpu"), 30 * MS);
	assert_true(fabs(cell(t, h, "total_percent")->f - 60.0) < 1e-9);
	assert_int_equal(U(t, row_of(t, "function", "warmup"), "total_cpu"), 20 * MS);
	rec_view_close(r.v);

	simple(&r, &rec_a, "sleeps-by-site", NULL);
	t = table(&r, "sleeps_by_site");
	assert_int_equal(t->row_count, 2);
	assert_string_equal(S(t, 0, "site"), "warmup");
	assert_int_equal(U(t, 0, "total"), 400 * MS);
	assert_string_equal(S(t, 1, "site"), "cache_fill");
	assert_int_equal(U(t, 1, "max"), 150 * MS);
	rec_view_close(r.v);

	simple(&r, &rec_a, "threads", NULL);
	t = table(&r, "threads");
	assert_int_equal(t->row_count, 3);
	size_t w1 = row_of(t, "thread", "worker-1");
	assert_int_equal(U(t, w1, "tid"), 101);
	assert_int_equal(U(t, w1, "events"), 6);
	assert_int_equal(U(t, w1, "cpu"), 20 * MS);
	assert_int_equal(U(t, w1, "lock_wait"), 160 * MS);
	assert_int_equal(U(t, w1, "cond_wait"), 5 * MS);
	assert_int_equal(U(t, w1, "allocated"), 2 * MIB);
	size_t mn = row_of(t, "thread", "main");
	assert_int_equal(U(t, mn, "events"), 8);
	assert_int_equal(U(t, mn, "sleep"), 400 * MS);
	assert_int_equal(U(t, mn, "allocated"), 4 * MIB);
	assert_int_equal(U(t, row_of(t, "thread", "worker-2"), "sleep"), 150 * MS);
	rec_view_close(r.v);
}

static void t_startup(void **state)
{
	(void)state;
	run r;
	simple(&r, &rec_a, "startup", NULL);
	const rec_view_table *t = table(&r, "startup");
	assert_string_equal(S(t, 0, "before"), "app.Request");
	assert_int_equal(cell(t, 0, "at")->i, (int64_t)(500 * MS));
	assert_int_equal(U(t, 0, "sleeps"), 1);
	assert_int_equal(U(t, 0, "sleep"), 400 * MS);
	assert_int_equal(U(t, 0, "allocations"), 4);
	assert_int_equal(U(t, 0, "allocated"), 4 * MIB);
	assert_int_equal(U(t, 0, "cpu"), 20 * MS);
	assert_int_equal(U(t, 0, "lock_waits"), 0);
	const rec_view_table *s = table(&r, "sleeps");
	assert_string_equal(S(s, 0, "site"), "warmup");
	assert_int_equal(U(s, 0, "total"), 400 * MS);
	s = table(&r, "allocations");
	assert_string_equal(S(s, 0, "site"), "warmup");
	assert_int_equal(U(s, 0, "total"), 4 * MIB);
	s = table(&r, "cpu");
	assert_string_equal(S(s, 0, "site"), "hash");
	rec_view_close(r.v);
}

static void t_recording(void **state)
{
	(void)state;
	run r;
	simple(&r, &rec_a, "recording", NULL);
	const rec_view_table *t = table(&r, "recording");
	assert_int_equal(U(t, 0, "files"), 1);
	assert_true(U(t, 0, "chunks") >= 3); /* small chunks */
	assert_int_equal(U(t, 0, "events"), 18);
	assert_int_equal(U(t, 0, "runs"), 1);
	assert_int_equal(U(t, 0, "restarts"), 0);
	assert_int_equal(U(t, 0, "crashes"), 0);
	t = table(&r, "runs");
	assert_string_equal(S(t, 0, "run_id"), "0000000000000abc");
	assert_int_equal(U(t, 0, "pid"), 77);
	t = table(&r, "drops");
	assert_int_equal(t->row_count, 1);
	assert_string_equal(S(t, 0, "type"), "rec.Alloc");
	assert_string_equal(S(t, 0, "reason"), "buffer full");
	assert_int_equal(U(t, 0, "lost"), 7);
	rec_view_close(r.v);
}

static void t_window(void **state)
{
	(void)state;
	run r;
	rec_view_options o = REC_VIEW_OPTIONS_INIT;
	o.view = "latency";
	o.flags = REC_VIEW_FROM | REC_VIEW_TO;
	o.from_wall_ns = WALL0 + (int64_t)(500 * MS);
	o.to_wall_ns = WALL0 + (int64_t)(800 * MS);
	run_view(&r, &rec_a, &o);
	const rec_view_table *t = table(&r, "latency");
	/* the warm-up sleep (0 ms) and the request at 800 ms are out */
	assert_int_equal(U(t, row_of(t, "type", "app.Request"), "count"), 2);
	assert_int_equal(U(t, row_of(t, "type", "rec.Sleep"), "count"), 1);
	rec_view_close(r.v);
	o.flags = 0;
	o.thread = "101"; /* an OS tid */
	run_view(&r, &rec_a, &o);
	t = table(&r, "latency");
	assert_int_equal(t->row_count, 3); /* worker-1: request, lock wait, condition wait */
	assert_int_equal(U(t, row_of(t, "type", "app.Request"), "count"), 1);
	rec_view_close(r.v);
}

static void t_options(void **state)
{
	(void)state;
	rec_view *v = NULL;
	rec_view_options o = REC_VIEW_OPTIONS_INIT;
	o.view = "no-such-view";
	assert_int_equal(rec_view_open(&v, &o), REC_ERR_INVALID_ARG);
	assert_null(v);
	o.view = "threads";
	o.by = "path"; /* threads has no --by */
	assert_int_equal(rec_view_open(&v, &o), REC_ERR_INVALID_ARG);
	o.by = NULL;
	o.reserved[0] = 1;
	assert_int_equal(rec_view_open(&v, &o), REC_ERR_INVALID_ARG);
	size_t n = 0;
	const rec_view_info *l = rec_view_list(&n);
	assert_true(n >= 12);
	static const char *const want[] = { "latency", "requests", "contention-by-lock",
					    "contention-by-site", "allocation-by-site",
					    "allocation-by-span", "live-heap", "hot-functions",
					    "sleeps-by-site", "startup", "threads", "recording" };
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		bool found = false;
		for (size_t k = 0; k < n; k++)
			found |= strcmp(l[k].name, want[i]) == 0;
		assert_true(found);
	}
	/* rec_view_get twice: the same tables; no events after it */
	run r;
	simple(&r, &rec_a, "sleeps-by-site", NULL);
	const rec_view_table *t2;
	size_t n2;
	ok(rec_view_get(r.v, &t2, &n2));
	assert_ptr_equal(t2, r.t);
	assert_int_equal(n2, r.n);
	assert_int_equal(t2[0].row_count, 2);
	rec_reader *rd = NULL;
	ok(rec_reader_open_mem(&rd, rec_a.p, rec_a.len, "mem", NULL));
	rec_event ev;
	ok(rec_reader_next_event(rd, &ev));
	assert_int_equal(rec_view_add_event(r.v, &ev), REC_ERR_INVALID_ARG);
	rec_reader_close(rd);
	rec_view_close(r.v);
	rec_view_close(NULL);
}

/* ---- memory follows keys, not events ---- */

/* n rounds of A's request pattern, 1 s apart (same threads, lock, sites). */
static void write_rounds(membuf *m, int n)
{
	gen g;
	open_gen(&g, m, 0);
	uint64_t lock = str(&g, "cache-lock"), get = str(&g, "/get"), fill = str(&g, "/fill");
	for (int i = 0; i < n; i++) {
		double b = 1000.0 * i;
		sleep_ev(&g, TH_W2, S_HOLD, b + 10, b + 160);
		cpu_ev(&g, TH_W2, S_CPU, b + 170, 0);
		ok(rec_writer_begin(g.w, T_LOCKWAIT, at(b + 20), at(b + 180) - at(b + 20), TH_W1, S_LOCK));
		ok(rec_writer_put_u64(g.w, 0xbeef));
		ok(rec_writer_put_u64(g.w, lock));
		ok(rec_writer_put_u64(g.w, 102));
		ok(rec_writer_put_u64(g.w, 0));
		ok(rec_writer_end(g.w));
		alloc_ev(&g, TH_W1, S_ALLOC, b + 187, 0x9000 + (uint64_t)i * 16, 1000, 2 * MIB, true);
		ok(rec_writer_begin(g.w, T_FREE, at(b + 188), 0, TH_W1, S_ALLOC));
		ok(rec_writer_put_u64(g.w, 0x9000 + (uint64_t)i * 16));
		ok(rec_writer_put_u64(g.w, 1000));
		ok(rec_writer_put_u64(g.w, 1));
		ok(rec_writer_end(g.w));
		cpu_ev(&g, TH_W1, S_CPU, b + 190, 0);
		ok(rec_writer_begin(g.w, T_REQ, at(b), at(b + 200) - at(b), TH_W2, 0));
		ok(rec_writer_put_u64(g.w, fill));
		ok(rec_writer_put_u64(g.w, 200));
		ok(rec_writer_end(g.w));
		ok(rec_writer_begin(g.w, T_REQ, at(b + 5), at(b + 205) - at(b + 5), TH_W1, 0));
		ok(rec_writer_put_u64(g.w, get));
		ok(rec_writer_put_u64(g.w, 200));
		ok(rec_writer_end(g.w));
	}
	ok(rec_writer_close(g.w));
}

/* Heap in use by a view after all events of m (the reader closed). */
static size_t view_heap(const membuf *m, const char *view, const char *by)
{
	rec_view_options o = REC_VIEW_OPTIONS_INIT;
	o.view = view;
	o.by = by;
	struct mallinfo2 before = mallinfo2();
	run r;
	run_view(&r, m, &o);
	struct mallinfo2 after = mallinfo2();
	rec_view_close(r.v);
	return after.uordblks > before.uordblks ? after.uordblks - before.uordblks : 0;
}

static void t_memory_flat(void **state)
{
	(void)state;
	membuf small = { 0 }, big = { 0 };
	write_rounds(&small, 1000);
	write_rounds(&big, 20000); /* 160,000 events */
	static const char *const views[][2] = {
		{ "latency", "path" }, { "requests", "path" }, { "contention-by-lock", NULL },
		{ "contention-by-site", NULL }, { "allocation-by-site", NULL },
		{ "allocation-by-span", "path" }, { "live-heap", NULL }, { "hot-functions", NULL },
		{ "sleeps-by-site", NULL }, { "startup", NULL }, { "threads", NULL },
	};
	for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
		size_t a = view_heap(&small, views[i][0], views[i][1]);
		size_t b = view_heap(&big, views[i][0], views[i][1]);
		/* 20 x the events: the same keys, so (nearly) the same memory */
		if (b > a + 16384)
			fail_msg("%s: %zu bytes for 8,000 events, %zu for 160,000", views[i][0], a, b);
	}
	free(small.p);
	free(big.p);
}

/* ---- recording B: percentiles of many values ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t nearest_rank(const uint64_t *v, size_t n, double pct)
{
	size_t rank = (size_t)ceil(pct / 100.0 * (double)n - 1e-9);
	return v[(rank < 1 ? 1 : rank) - 1];
}

static void t_latency_percentiles(void **state)
{
	(void)state;
	membuf m = { 0 };
	gen g;
	open_gen(&g, &m, 4096);
	enum { N = 20000 };
	static uint64_t all[N], by[3][N];
	size_t nb[3] = { 0, 0, 0 };
	static const char *const paths[] = { "/a", "/b", "/c" };
	uint64_t pstr[3];
	for (int p = 0; p < 3; p++)
		pstr[p] = str(&g, paths[p]);
	uint64_t seed = 12345;
	for (size_t i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		/* 10 us .. ~10 s, log-uniform; path by i % 3, /c 100x slower */
		double e = 4.0 + 4.0 * (double)((seed >> 20) % 100000) / 1e5;
		int p = (int)(i % 3);
		uint64_t d = (uint64_t)pow(10.0, e) * (p == 2 ? 100 : 1);
		all[i] = d;
		by[p][nb[p]++] = d;
		ok(rec_writer_begin(g.w, T_REQ, T0 + i * 1000, d, 1 + i % 3, 0));
		ok(rec_writer_put_u64(g.w, pstr[p]));
		ok(rec_writer_put_u64(g.w, 200));
		ok(rec_writer_end(g.w));
	}
	ok(rec_writer_close(g.w));
	qsort(all, N, sizeof all[0], cmp_u64);
	for (int p = 0; p < 3; p++)
		qsort(by[p], nb[p], sizeof by[p][0], cmp_u64);

	run r;
	simple(&r, &m, "latency", NULL);
	const rec_view_table *t = table(&r, "latency");
	static const struct { const char *key; double pct; } ps[] = {
		{ "p50", 50 }, { "p90", 90 }, { "p99", 99 }, { "p99_9", 99.9 },
	};
	for (size_t k = 0; k < 4; k++) {
		uint64_t want = nearest_rank(all, N, ps[k].pct), got = U(t, 0, ps[k].key);
		if (fabs((double)got - (double)want) > (double)want / 256.0)
			fail_msg("%s: %llu, true %llu", ps[k].key, (unsigned long long)got,
				 (unsigned long long)want);
	}
	assert_int_equal(U(t, 0, "max"), all[N - 1]);
	assert_int_equal(U(t, 0, "count"), N);
	rec_view_close(r.v);

	simple(&r, &m, "latency", "path");
	t = table(&r, "latency");
	assert_int_equal(t->row_count, 3);
	assert_string_equal(S(t, 0, "by"), "/c"); /* heaviest first */
	for (int p = 0; p < 3; p++) {
		size_t row = row_of(t, "by", paths[p]);
		assert_int_equal(U(t, row, "count"), nb[p]);
		for (size_t k = 0; k < 4; k++) {
			uint64_t want = nearest_rank(by[p], nb[p], ps[k].pct);
			uint64_t got = U(t, row, ps[k].key);
			if (fabs((double)got - (double)want) > (double)want / 256.0)
				fail_msg("%s %s: %llu, true %llu", paths[p], ps[k].key,
					 (unsigned long long)got, (unsigned long long)want);
		}
	}
	rec_view_close(r.v);
	free(m.p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_latency),     cmocka_unit_test(t_requests),
		cmocka_unit_test(t_contention),  cmocka_unit_test(t_allocation),
		cmocka_unit_test(t_cpu_sleeps_threads), cmocka_unit_test(t_startup),
		cmocka_unit_test(t_recording),   cmocka_unit_test(t_window),
		cmocka_unit_test(t_options),     cmocka_unit_test(t_latency_percentiles),
		cmocka_unit_test(t_memory_flat),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
