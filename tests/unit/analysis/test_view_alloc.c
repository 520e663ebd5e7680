/* SPDX-License-Identifier: MIT */
/*
 * test_view_alloc.c - rec-view's allocation-by-site and live-heap
 * (libfmt/analysis/view_alloc.c) on recording A (tests/lib/view_fixture.h):
 * 4 MiB at warmup in four reported blocks (one freed), 2 MiB of weight at
 * handle in one sampled block of 1000 bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "../../lib/view_fixture.h"

static void t_allocation_by_site_live_heap(void **state)
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_allocation_by_site_live_heap),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
