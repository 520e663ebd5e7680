/* SPDX-License-Identifier: MIT */
/*
 * test_view_recording.c - rec-view's recording (libfmt/analysis/view_recording.c)
 * on recording A (tests/lib/view_fixture.h): files, chunks, events, runs and
 * the 7 rec.Alloc lost (buffer full), from rec_summary's result.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/view_fixture.h"

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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_recording),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
