/* SPDX-License-Identifier: MIT */
/*
 * test_view_locks.c - rec-view's contention-by-lock and contention-by-site
 * (libfmt/analysis/view_locks.c) on recording A (tests/lib/view_fixture.h):
 * worker-1's 160 ms wait on cache-lock held by worker-2, and what worker-2
 * did meanwhile (140 ms asleep at cache_fill, a 10 ms CPU sample); --thread
 * picks the waiters.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/view_fixture.h"

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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_contention),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
