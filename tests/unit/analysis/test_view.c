/* SPDX-License-Identifier: MIT */
/*
 * test_view.c - what libfmt/analysis/view.c does for every view of
 * rec/view.h: the window (--from, --to) and --thread selection of events,
 * the options and the list of views, rec_view_get's contract, and memory
 * that follows the views' keys, not the events.  Each view's own numbers
 * are tested in test_view_MODULE.c, one per libfmt/analysis/view_MODULE.c;
 * recording A and the helpers are tests/lib/view_fixture.h's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <malloc.h>

#include "../../lib/view_fixture.h"

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
	assert_true(n >= 14);
	static const char *const want[] = { "latency", "requests", "contention-by-lock",
					    "contention-by-site", "allocation-by-site",
					    "allocation-by-span", "live-heap", "hot-functions",
					    "sleeps-by-site", "io-by-site", "startup", "threads",
					    "recording", "wall-by-site" };
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
		{ "sleeps-by-site", NULL }, { "io-by-site", NULL }, { "startup", NULL },
		{ "threads", NULL },
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_window),
		cmocka_unit_test(t_options),
		cmocka_unit_test(t_memory_flat),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
