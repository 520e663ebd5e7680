/* SPDX-License-Identifier: MIT */
/*
 * test_view_startup.c - rec-view's startup (libfmt/analysis/view_startup.c)
 * on recording A (tests/lib/view_fixture.h): what main did before the first
 * app.Request at 500 ms (a 400 ms sleep at warmup, 4 MiB in four
 * allocations, 20 ms of CPU in hash), by call site.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/view_fixture.h"

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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_startup),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
