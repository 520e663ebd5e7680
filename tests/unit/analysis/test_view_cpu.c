/* SPDX-License-Identifier: MIT */
/*
 * test_view_cpu.c - rec-view's hot-functions (libfmt/analysis/view_cpu.c) on
 * recording A (tests/lib/view_fixture.h): self and total CPU per function,
 * each sample weighing period x (1 + overruns).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "../../lib/view_fixture.h"

static void t_hot_functions(void **state)
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
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_hot_functions),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
