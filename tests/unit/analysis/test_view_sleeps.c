/* SPDX-License-Identifier: MIT */
/*
 * test_view_sleeps.c - rec-view's sleeps-by-site (libfmt/analysis/view_sleeps.c)
 * on recording A (tests/lib/view_fixture.h): the 400 ms sleep at warmup and
 * the 150 ms one at cache_fill, by call site, heaviest first.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/view_fixture.h"

static void t_sleeps_by_site(void **state)
{
	(void)state;
	run r;
	simple(&r, &rec_a, "sleeps-by-site", NULL);
	const rec_view_table *t = table(&r, "sleeps_by_site");
	assert_int_equal(t->row_count, 2);
	assert_string_equal(S(t, 0, "site"), "warmup");
	assert_int_equal(U(t, 0, "total"), 400 * MS);
	assert_string_equal(S(t, 1, "site"), "cache_fill");
	assert_int_equal(U(t, 1, "max"), 150 * MS);
	rec_view_close(r.v);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_sleeps_by_site),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
