/* SPDX-License-Identifier: MIT */
/*
 * test_view_spans.c - rec-view's requests and allocation-by-span
 * (libfmt/analysis/view_spans.c) on recording A (tests/lib/view_fixture.h):
 * each app.Request's wall time broken into CPU, lock wait, condition wait,
 * sleep, I/O and unaccounted, the slowest spans, and the bytes allocated
 * inside the spans per --by value.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/view_fixture.h"

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

/* A sample weighs a whole period: one inside a span that slept most of it
 * would make the parts more than the wall time.  CPU is then what the
 * waits leave (20 ms span, 15 ms asleep, one 10 ms sample: 5 ms CPU, 0
 * unaccounted), in the table of means and in the slowest spans. */
static void t_cpu_at_most_what_waits_leave(void **state)
{
	(void)state;
	membuf m = { 0 };
	gen g;
	open_gen(&g, &m, 100);
	sleep_ev(&g, TH_W1, S_HOLD, 101, 116);
	cpu_ev(&g, TH_W1, S_CPU, 117, 0);
	req_ev(&g, TH_W1, 100, 120, "/nap");
	ok(rec_writer_close(g.w));
	run r;
	simple(&r, &m, "requests", "path");
	const rec_view_table *t = table(&r, "requests");
	size_t k = row_of(t, "by", "/nap");
	assert_int_equal(U(t, k, "mean"), 20 * MS);
	assert_int_equal(U(t, k, "sleep"), 15 * MS);
	assert_int_equal(U(t, k, "cpu"), 5 * MS);
	assert_int_equal(U(t, k, "unaccounted"), 0);
	const rec_view_table *sl = table(&r, "slowest");
	assert_int_equal(U(sl, 0, "cpu"), 5 * MS);
	assert_int_equal(U(sl, 0, "unaccounted"), 0);
	rec_view_close(r.v);
	free(m.p);
}

static void t_allocation_by_span(void **state)
{
	(void)state;
	run r;
	simple(&r, &rec_a, "allocation-by-span", "path");
	const rec_view_table *t = table(&r, "allocation_by_span");
	size_t g = row_of(t, "by", "/get");
	assert_int_equal(U(t, g, "spans"), 2);
	assert_int_equal(U(t, g, "bytes"), 2 * MIB);
	assert_int_equal(U(t, g, "per_span"), MIB);
	assert_int_equal(U(t, g, "max"), 2 * MIB);
	assert_int_equal(U(t, row_of(t, "by", "/fill"), "bytes"), 0);
	rec_view_close(r.v);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_requests),
		cmocka_unit_test(t_cpu_at_most_what_waits_leave),
		cmocka_unit_test(t_allocation_by_span),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
