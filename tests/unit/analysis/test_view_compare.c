/* SPDX-License-Identifier: MIT */
/*
 * test_view_compare.c - before and after (rec_view_diff_* of rec/view.h,
 * rec_findings_diff_* of rec/findings.h) on two recordings written with the
 * real writer (zstd, small chunks) and read back with the real reader in
 * timestamp order; every delta is asserted against what the test wrote:
 *
 * BEFORE (ms from the first event; threads main 100, worker-1 101, worker-2 102):
 *   worker-1  0-100 app.Request /get; 40-560 rec.Sleep at cache_fill (it holds
 *             cache-lock); 5 ms rec.Alloc 1 MiB at handle
 *   worker-2  0-600 app.Request /get: 50-550 rec.LockWait on cache-lock held
 *             by worker-1, at handle
 *   main      2 ms rec.Alloc 2 MiB at warmup; 700-720 app.Request /fill
 * AFTER:
 *   worker-1  0-100 app.Request /get; 5 ms rec.Alloc 3 MiB at handle
 *   worker-2  0-200 app.Request /get (no lock wait)
 *   main      300-310 app.Request /new
 * So: latency by path /get 2 -> 2 spans, max 600 -> 200 ms, total 700 -> 300
 * ms; /fill gone, /new new; contention on cache-lock gone; allocation at
 * handle 1 -> 3 MiB (+200 %), at warmup gone; lock-held-while-blocked
 * went away.  Matching of repeated keys, --top, a side without the table
 * and bad arguments on tables built here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/findings.h"
#include "rec/rec.h"
#include "rec/view.h"

#include "../../lib/membuf.h"

#define T0 1000000000000ull
#define WALL0 1796206443000000000ll
#define MS 1000000ll
#define MIB (1024ull * 1024ull)

enum { T_LOCKWAIT = 16, T_SLEEP = 18, T_ALLOC = 19, T_REQ = 300 };
enum { TH_MAIN = 1, TH_W1, TH_W2 };
enum { F_LOCKREC = 1, F_HANDLE, F_WARMUP, F_FILL, F_SLEEPREC, F_MALLOCREC };
enum { S_LOCK = 1, S_HOLD, S_ALLOC, S_ALLOC_WARM };

#define D_T_S (REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK)

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
static const rec_field f_req[] = {
	{ "path", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "status", "", "", REC_TYPE_U32, REC_UNIT_NONE },
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

static uint64_t at(double ms) { return T0 + (uint64_t)(ms * (double)MS); }

static void open_gen(gen *g, membuf *m)
{
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.run_id = 0xabc;
	o.pid = 77;
	o.process_start_ns = WALL0;
	o.anchor_wall_ns = WALL0;
	o.anchor_ticks = T0;
	o.chunk_events_size = 100;
	rec_sink sink = { mem_write, NULL, m };
	g->str = 0;
	ok(rec_writer_open(&g->w, &sink, &o));
	const rec_type types[] = {
		{ T_LOCKWAIT, D_T_S, "rec.LockWait", "", "", "rec/Locks", 4, f_lock },
		{ T_SLEEP, D_T_S, "rec.Sleep", "", "", "rec/Waits", 3, f_sleep },
		{ T_ALLOC, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "rec.Alloc", "", "", "rec/Memory",
		  4, f_alloc },
		{ T_REQ, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD, "app.Request", "", "", "app", 2,
		  f_req },
	};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		ok(rec_writer_add_type(g->w, &types[i]));
	ok(rec_writer_define_thread(g->w, TH_MAIN, 100, str(g, "main")));
	ok(rec_writer_define_thread(g->w, TH_W1, 101, str(g, "worker-1")));
	ok(rec_writer_define_thread(g->w, TH_W2, 102, str(g, "worker-2")));
	static const char *const fn[] = { "rec_mutex_lock_contended_", "handle", "warmup",
					  "cache_fill", "rec_sleep_ns", "rec_malloc" };
	for (size_t i = 0; i < 6; i++)
		ok(rec_writer_define_frame(g->w, i + 1, str(g, fn[i]), 0, 0x100 * (i + 1), 4));
	const uint64_t s_lock[] = { F_LOCKREC, F_HANDLE };
	const uint64_t s_hold[] = { F_SLEEPREC, F_FILL };
	const uint64_t s_alloc[] = { F_MALLOCREC, F_HANDLE };
	const uint64_t s_alloc_warm[] = { F_MALLOCREC, F_WARMUP };
	ok(rec_writer_define_stack(g->w, S_LOCK, 0, s_lock, 2));
	ok(rec_writer_define_stack(g->w, S_HOLD, 0, s_hold, 2));
	ok(rec_writer_define_stack(g->w, S_ALLOC, 0, s_alloc, 2));
	ok(rec_writer_define_stack(g->w, S_ALLOC_WARM, 0, s_alloc_warm, 2));
}

static void alloc_ev(gen *g, uint64_t th, uint64_t stack, double t, uint64_t weight)
{
	ok(rec_writer_begin(g->w, T_ALLOC, at(t), 0, th, stack));
	ok(rec_writer_put_u64(g->w, 0x1000 + (uint64_t)t));
	ok(rec_writer_put_u64(g->w, weight));
	ok(rec_writer_put_u64(g->w, weight));
	ok(rec_writer_put_u64(g->w, 0));
	ok(rec_writer_end(g->w));
}

static void req_ev(gen *g, uint64_t th, double s, double e, const char *path)
{
	ok(rec_writer_begin(g->w, T_REQ, at(s), at(e) - at(s), th, 0));
	ok(rec_writer_put_u64(g->w, str(g, path)));
	ok(rec_writer_put_u64(g->w, 200));
	ok(rec_writer_end(g->w));
}

/* In commit order: each event when it ends. */
static void write_before(membuf *m)
{
	gen g;
	open_gen(&g, m);
	alloc_ev(&g, TH_MAIN, S_ALLOC_WARM, 2, 2 * MIB);
	alloc_ev(&g, TH_W1, S_ALLOC, 5, MIB);
	req_ev(&g, TH_W1, 0, 100, "/get");
	ok(rec_writer_begin(g.w, T_SLEEP, at(40), at(560) - at(40), TH_W1, S_HOLD));
	ok(rec_writer_put_u64(g.w, str(&g, "sleep")));
	ok(rec_writer_put_u64(g.w, at(560) - at(40)));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_end(g.w));
	ok(rec_writer_begin(g.w, T_LOCKWAIT, at(50), at(550) - at(50), TH_W2, S_LOCK));
	ok(rec_writer_put_u64(g.w, 0xbeef));
	ok(rec_writer_put_u64(g.w, str(&g, "cache-lock")));
	ok(rec_writer_put_u64(g.w, 101));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_end(g.w));
	req_ev(&g, TH_W2, 0, 600, "/get");
	req_ev(&g, TH_MAIN, 700, 720, "/fill");
	ok(rec_writer_close(g.w));
}

static void write_after(membuf *m)
{
	gen g;
	open_gen(&g, m);
	alloc_ev(&g, TH_W1, S_ALLOC, 5, 3 * MIB);
	req_ev(&g, TH_W1, 0, 100, "/get");
	req_ev(&g, TH_W2, 0, 200, "/get");
	req_ev(&g, TH_MAIN, 300, 310, "/new");
	ok(rec_writer_close(g.w));
}

/* ---- views and findings of a recording ---- */

typedef struct side {
	membuf m;
	rec_view *v;
	const rec_view_table *t;
	size_t n;
} side;

static void read_into(const membuf *m, rec_status (*begin)(void *), rec_status (*add)(void *, const rec_event *),
		      void *obj)
{
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.flags = REC_READ_ORDERED;
	rec_reader *rd = NULL;
	ok(rec_reader_open_mem(&rd, m->p, m->len, "mem", &ro));
	ok(begin(obj));
	rec_event ev;
	rec_status st;
	while ((st = rec_reader_next_event(rd, &ev)) == REC_OK)
		ok(add(obj, &ev));
	assert_int_equal(st, REC_END);
	rec_reader_close(rd);
}

static rec_status view_begin(void *v) { return rec_view_begin_input(v); }
static rec_status view_add(void *v, const rec_event *ev) { return rec_view_add_event(v, ev); }
static rec_status findings_begin(void *f) { return rec_findings_begin_input(f); }
static rec_status findings_add(void *f, const rec_event *ev) { return rec_findings_add_event(f, ev); }

static void view_of(side *s, const char *view, const char *by)
{
	rec_view_options o = REC_VIEW_OPTIONS_INIT;
	o.view = view;
	o.by = by;
	ok(rec_view_open(&s->v, &o));
	read_into(&s->m, view_begin, view_add, s->v);
	ok(rec_view_get(s->v, &s->t, &s->n));
}

static const rec_view_table *table(const side *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->t[i].name, name) == 0)
			return &s->t[i];
	fail_msg("no table %s", name);
	return NULL;
}

static int col(const rec_view_diff_table *d, const char *key)
{
	for (size_t c = 0; c < d->column_count; c++)
		if (strcmp(d->columns[c].key, key) == 0)
			return (int)c;
	fail_msg("no column %s in %s", key, d->name);
	return -1;
}

/* The row whose key column keycol is text (a --by or a site). */
static const rec_view_diff_row *row(const rec_view_diff_table *d, const char *keycol, const char *text)
{
	int c = col(d, keycol);
	for (size_t r = 0; r < d->row_count; r++) {
		const rec_view_cell *k = d->rows[r].after ? d->rows[r].after : d->rows[r].before;
		if (!k[c].null && strcmp(k[c].text, text) == 0)
			return &d->rows[r];
	}
	fail_msg("no row %s=%s in %s", keycol, text, d->name);
	return NULL;
}

static const rec_view_delta *delta(const rec_view_diff_table *d, const rec_view_diff_row *r,
				   const char *key)
{
	return &r->delta[col(d, key)];
}

static void both(side *b, side *a)
{
	memset(b, 0, sizeof *b);
	memset(a, 0, sizeof *a);
	write_before(&b->m);
	write_after(&a->m);
}

static void done(side *b, side *a)
{
	rec_view_close(b->v);
	rec_view_close(a->v);
	free(b->m.p);
	free(a->m.p);
}

/* ---- tests ---- */

static void t_latency_by_path(void **state)
{
	(void)state;
	side b, a;
	both(&b, &a);
	view_of(&b, "latency", "path");
	view_of(&a, "latency", "path");
	rec_view_diff *diff = NULL;
	ok(rec_view_diff_open(&diff, table(&b, "latency"), table(&a, "latency"), 0));
	const rec_view_diff_table *d = rec_view_diff_get(diff);
	assert_true(d->keyed);
	assert_true(d->key[col(d, "type")] && d->key[col(d, "by")]);
	assert_false(d->key[col(d, "max")]);
	assert_true(d->compared[col(d, "max")] && d->compared[col(d, "p99")]);
	assert_false(d->compared[col(d, "type")]);
	assert_int_equal(d->row_count, 3);
	assert_int_equal(d->rows_total, 3);
	assert_int_equal(d->changed, 1);
	assert_int_equal(d->same, 0);
	assert_int_equal(d->added, 1);
	assert_int_equal(d->gone, 1);

	const rec_view_diff_row *get = row(d, "by", "/get");
	assert_int_equal(get->change, REC_VIEW_ROW_BOTH);
	assert_int_equal(get->before[col(d, "max")].u, 600 * MS);
	assert_int_equal(get->after[col(d, "max")].u, 200 * MS);
	assert_int_equal(delta(d, get, "count")->i, 0);
	assert_false(delta(d, get, "count")->rel_null);
	assert_true(delta(d, get, "count")->rel == 0.0);
	assert_int_equal(delta(d, get, "max")->i, -400 * MS);
	assert_true(fabs(delta(d, get, "max")->rel - (-400.0 / 600.0 * 100.0)) < 1e-9);
	assert_int_equal(delta(d, get, "total")->i, -400 * MS);
	assert_int_equal(delta(d, get, "mean")->i, (150 - 350) * MS);
	assert_true(fabs(delta(d, get, "mean")->rel - (-200.0 / 350.0 * 100.0)) < 1e-9);
	/* percentiles: as the histograms give them (each within 1/256 of the
	 * true value of its rank: 100 ms before and after for p50, 600 and 200
	 * for p99), the delta their difference */
	for (int s = 0; s < 2; s++) {
		rec_histogram *h = NULL;
		ok(rec_histogram_open(&h));
		ok(rec_histogram_add(h, 100 * MS));
		ok(rec_histogram_add(h, (uint64_t)(s ? 200 : 600) * MS));
		const rec_view_cell *c = s ? get->after : get->before;
		assert_int_equal(c[col(d, "p50")].u, rec_histogram_percentile(h, 50));
		assert_int_equal(c[col(d, "p99")].u, rec_histogram_percentile(h, 99));
		assert_true(fabs((double)c[col(d, "p50")].u - 100.0 * MS) <= 100.0 * MS / 256.0);
		rec_histogram_close(h);
	}
	assert_int_equal(delta(d, get, "p99")->i,
			 (int64_t)get->after[col(d, "p99")].u - (int64_t)get->before[col(d, "p99")].u);

	const rec_view_diff_row *fill = row(d, "by", "/fill");
	assert_int_equal(fill->change, REC_VIEW_ROW_GONE);
	assert_null(fill->after);
	assert_int_equal(fill->before[col(d, "total")].u, 20 * MS);
	assert_true(delta(d, fill, "total")->null);
	const rec_view_diff_row *nw = row(d, "by", "/new");
	assert_int_equal(nw->change, REC_VIEW_ROW_NEW);
	assert_null(nw->before);
	assert_int_equal(nw->after[col(d, "max")].u, 10 * MS);
	/* after's rows first (in its order), then the gone one */
	assert_ptr_equal(&d->rows[2], fill);
	rec_view_diff_close(diff);

	/* --top 1: one row kept, three counted */
	ok(rec_view_diff_open(&diff, table(&b, "latency"), table(&a, "latency"), 1));
	assert_int_equal(rec_view_diff_get(diff)->row_count, 1);
	assert_int_equal(rec_view_diff_get(diff)->rows_total, 3);
	rec_view_diff_close(diff);
	done(&b, &a);
}

static void t_latency_no_by(void **state)
{
	(void)state;
	side b, a;
	both(&b, &a);
	view_of(&b, "latency", NULL);
	view_of(&a, "latency", NULL);
	rec_view_diff *diff = NULL;
	ok(rec_view_diff_open(&diff, table(&b, "latency"), table(&a, "latency"), 0));
	const rec_view_diff_table *d = rec_view_diff_get(diff);
	const rec_view_diff_row *req = row(d, "type", "app.Request");
	assert_int_equal(req->change, REC_VIEW_ROW_BOTH);
	assert_int_equal(delta(d, req, "count")->i, 0);
	assert_int_equal(delta(d, req, "max")->i, -400 * MS);
	assert_int_equal(delta(d, req, "total")->i, (310 - 720) * MS);
	/* the lock wait and the holder's sleep are gone */
	assert_int_equal(row(d, "type", "rec.LockWait")->change, REC_VIEW_ROW_GONE);
	assert_int_equal(row(d, "type", "rec.LockWait")->before[col(d, "total")].u, 500 * MS);
	assert_int_equal(row(d, "type", "rec.Sleep")->change, REC_VIEW_ROW_GONE);
	rec_view_diff_close(diff);
	done(&b, &a);
}

static void t_contention_allocation_threads(void **state)
{
	(void)state;
	side b, a;
	both(&b, &a);
	view_of(&b, "contention-by-lock", NULL);
	view_of(&a, "contention-by-lock", NULL);
	rec_view_diff *diff = NULL;
	ok(rec_view_diff_open(&diff, table(&b, "contention_by_lock"), table(&a, "contention_by_lock"), 0));
	const rec_view_diff_table *d = rec_view_diff_get(diff);
	assert_int_equal(d->row_count, 1);
	const rec_view_diff_row *lk = row(d, "lock", "cache-lock");
	assert_int_equal(lk->change, REC_VIEW_ROW_GONE);
	assert_int_equal(lk->before[col(d, "waits")].u, 1);
	assert_int_equal(lk->before[col(d, "total")].u, 500 * MS);
	assert_false(d->compared[col(d, "holders")]); /* text: shown, not compared */
	rec_view_diff_close(diff);
	done(&b, &a);

	both(&b, &a);
	view_of(&b, "allocation-by-site", NULL);
	view_of(&a, "allocation-by-site", NULL);
	ok(rec_view_diff_open(&diff, table(&b, "allocation_by_site"), table(&a, "allocation_by_site"), 0));
	d = rec_view_diff_get(diff);
	const rec_view_diff_row *h = row(d, "site", "handle");
	assert_int_equal(h->change, REC_VIEW_ROW_BOTH);
	assert_int_equal(delta(d, h, "bytes")->i, (int64_t)(2 * MIB));
	assert_true(fabs(delta(d, h, "bytes")->rel - 200.0) < 1e-9);
	assert_int_equal(delta(d, h, "allocations")->i, 0);
	/* percent of all bytes: 1/3 -> 1, in percentage points */
	assert_true(fabs(delta(d, h, "percent")->f - (100.0 - 100.0 / 3.0)) < 1e-9);
	assert_true(fabs(delta(d, h, "percent")->rel - 200.0) < 1e-9);
	assert_int_equal(row(d, "site", "warmup")->change, REC_VIEW_ROW_GONE);
	assert_int_equal(d->changed, 1);
	assert_int_equal(d->gone, 1);
	rec_view_diff_close(diff);
	done(&b, &a);

	both(&b, &a);
	view_of(&b, "threads", NULL);
	view_of(&a, "threads", NULL);
	ok(rec_view_diff_open(&diff, table(&b, "threads"), table(&a, "threads"), 0));
	d = rec_view_diff_get(diff);
	assert_false(d->compared[col(d, "tid")]); /* an identity, not a measure */
	const rec_view_diff_row *w2 = row(d, "thread", "worker-2");
	assert_int_equal(w2->change, REC_VIEW_ROW_BOTH);
	assert_int_equal(delta(d, w2, "lock_wait")->i, -500 * MS);
	assert_true(delta(d, w2, "tid")->null);
	const rec_view_diff_row *w1 = row(d, "thread", "worker-1");
	assert_int_equal(delta(d, w1, "sleep")->i, -520 * MS);
	assert_int_equal(delta(d, w1, "allocated")->i, (int64_t)(2 * MIB));
	rec_view_diff_close(diff);
	done(&b, &a);
}

static void t_unkeyed_and_one_side(void **state)
{
	(void)state;
	side b, a;
	both(&b, &a);
	view_of(&b, "requests", NULL);
	view_of(&a, "requests", NULL);
	rec_view_diff *diff = NULL;
	ok(rec_view_diff_open(&diff, table(&b, "slowest"), table(&a, "slowest"), 0));
	assert_false(rec_view_diff_get(diff)->keyed);
	assert_int_equal(rec_view_diff_get(diff)->row_count, 0);
	rec_view_diff_close(diff);
	/* requests is keyed by type: lock wait per span 166.7 ms -> 0 */
	ok(rec_view_diff_open(&diff, table(&b, "requests"), table(&a, "requests"), 0));
	const rec_view_diff_table *d = rec_view_diff_get(diff);
	const rec_view_diff_row *r = row(d, "type", "app.Request");
	assert_int_equal(r->before[col(d, "spans")].u, 3);
	assert_int_equal(delta(d, r, "lock_wait")->i, -166666667); /* 500 ms / 3 spans, rounded */
	assert_true(fabs(delta(d, r, "lock_wait")->rel + 100.0) < 1e-9);
	rec_view_diff_close(diff);
	/* a table only after has: every row new */
	ok(rec_view_diff_open(&diff, NULL, table(&a, "requests"), 0));
	assert_int_equal(rec_view_diff_get(diff)->added, 1);
	assert_int_equal(rec_view_diff_get(diff)->rows[0].change, REC_VIEW_ROW_NEW);
	rec_view_diff_close(diff);
	ok(rec_view_diff_open(&diff, table(&b, "requests"), NULL, 0));
	assert_int_equal(rec_view_diff_get(diff)->gone, 1);
	rec_view_diff_close(diff);
	/* both missing, or tables of two views: refused */
	assert_int_equal(rec_view_diff_open(&diff, NULL, NULL, 0), REC_ERR_INVALID_ARG);
	assert_null(diff);
	assert_int_equal(rec_view_diff_open(&diff, table(&b, "requests"), table(&a, "slowest"), 0),
			 REC_ERR_INVALID_ARG);
	assert_int_equal(rec_view_diff_open(NULL, table(&b, "requests"), NULL, 0), REC_ERR_INVALID_ARG);
	done(&b, &a);
}

/* Repeated keys (two threads named alike): the k-th with the k-th. */
static void t_repeated_keys(void **state)
{
	(void)state;
	static const rec_view_column cols[] = {
		{ "Thread", "thread", REC_VIEW_TEXT },
		{ "Tid", "tid", REC_VIEW_COUNT },
		{ "Events", "events", REC_VIEW_COUNT },
	};
	rec_view_cell bc[] = {
		{ .text = "conn" }, { .u = 10 }, { .u = 5 },
		{ .text = "conn" }, { .u = 11 }, { .u = 7 },
		{ .text = "main" }, { .u = 1 }, { .u = 0 },
	};
	rec_view_cell ac[] = {
		{ .text = "conn" }, { .u = 20 }, { .u = 6 },
		{ .text = "main" }, { .u = 2 }, { .null = true },
		{ .text = "conn" }, { .u = 21 }, { .u = 7 },
		{ .text = "conn" }, { .u = 22 }, { .u = 1 },
	};
	rec_view_table bt = { "threads", "Threads", NULL, 3, cols, 3, bc, 3 };
	rec_view_table at = { "threads", "Threads", NULL, 3, cols, 4, ac, 4 };
	rec_view_diff *diff = NULL;
	ok(rec_view_diff_open(&diff, &bt, &at, 0));
	const rec_view_diff_table *d = rec_view_diff_get(diff);
	assert_int_equal(d->row_count, 4);
	assert_int_equal(d->rows[0].change, REC_VIEW_ROW_BOTH);
	assert_ptr_equal(d->rows[0].before, &bc[0]);
	assert_int_equal(d->rows[0].delta[2].i, 1);
	assert_true(fabs(d->rows[0].delta[2].rel - 20.0) < 1e-9);
	assert_true(d->rows[0].delta[1].null); /* tid */
	/* main: a value missing after is no change */
	assert_ptr_equal(d->rows[1].before, &bc[6]);
	assert_true(d->rows[1].delta[2].null);
	assert_ptr_equal(d->rows[2].before, &bc[3]);
	assert_int_equal(d->rows[2].delta[2].i, 0);
	assert_int_equal(d->rows[3].change, REC_VIEW_ROW_NEW);
	/* 0 -> x has no relative change */
	rec_view_cell z = { .u = 0 }, x = { .u = 9 };
	rec_view_delta dz = rec_view_cell_delta(REC_VIEW_BYTES, &z, &x);
	assert_false(dz.null);
	assert_int_equal(dz.i, 9);
	assert_true(dz.rel_null);
	assert_true(rec_view_cell_delta(REC_VIEW_TEXT, &bc[0], &ac[0]).null);
	assert_int_equal(d->changed, 2); /* conn #1 (+1) and main (a value lost) */
	assert_int_equal(d->same, 1);
	assert_int_equal(d->added, 1);
	rec_view_diff_close(diff);
	assert_string_equal(rec_view_row_change_name(REC_VIEW_ROW_GONE), "gone");
}

static rec_findings *findings_of(const membuf *m)
{
	rec_findings *f = NULL;
	ok(rec_findings_open(&f, NULL));
	read_into(m, findings_begin, findings_add, f);
	return f;
}

static const rec_findings_change *change_of(const rec_findings_change *l, size_t n,
					    const char *rule, const char *subject)
{
	for (size_t i = 0; i < n; i++) {
		const rec_finding *x = l[i].after ? l[i].after : l[i].before;
		if (strcmp(x->rule, rule) == 0 && strcmp(x->subject, subject) == 0)
			return &l[i];
	}
	return NULL;
}

static void t_findings(void **state)
{
	(void)state;
	side b, a;
	both(&b, &a);
	rec_findings *fb = findings_of(&b.m), *fa = findings_of(&a.m);
	const rec_finding *bl, *al;
	size_t bn, an;
	ok(rec_findings_get(fb, &bl, &bn));
	ok(rec_findings_get(fa, &al, &an));
	rec_findings_diff *d = NULL;
	ok(rec_findings_diff_open(&d, bl, bn, al, an));
	const rec_findings_change *l;
	size_t n;
	rec_findings_diff_get(d, &l, &n);
	const rec_findings_change *c = change_of(l, n, "lock-held-while-blocked", "cache-lock");
	assert_non_null(c);
	assert_int_equal(c->change, REC_VIEW_ROW_GONE);
	assert_null(c->after);
	assert_int_equal(c->fact_count, 0);
	for (size_t i = 0; i < n; i++) /* nothing about the lock after */
		assert_true(l[i].change == REC_VIEW_ROW_GONE || strstr(l[i].after->rule, "lock") == NULL);
	size_t matched = 0, gone = 0, added = 0;
	for (size_t i = 0; i < n; i++) {
		matched += l[i].change == REC_VIEW_ROW_BOTH;
		gone += l[i].change == REC_VIEW_ROW_GONE;
		added += l[i].change == REC_VIEW_ROW_NEW;
	}
	assert_int_equal(n, bn + an - matched);
	assert_int_equal(gone, bn - matched);
	assert_int_equal(added, an - matched);
	rec_findings_diff_close(d);

	/* the comparison tables the rules read */
	assert_non_null(rec_findings_table(fb, "contention_by_lock"));
	rec_view_diff *vd = NULL;
	ok(rec_view_diff_open(&vd, rec_findings_table(fb, "contention_by_lock"),
			      rec_findings_table(fa, "contention_by_lock"), 0));
	assert_int_equal(rec_view_diff_get(vd)->gone, 1);
	rec_view_diff_close(vd);
	rec_findings_close(fb);
	rec_findings_close(fa);
	done(&b, &a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_latency_by_path),
		cmocka_unit_test(t_latency_no_by),
		cmocka_unit_test(t_contention_allocation_threads),
		cmocka_unit_test(t_unkeyed_and_one_side),
		cmocka_unit_test(t_repeated_keys),
		cmocka_unit_test(t_findings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
