/* SPDX-License-Identifier: MIT */
/*
 * test_findings_recording.c - the rules about the recording itself
 * (libfmt/analysis/findings_recording.c): none on recording SLOW; on FIXED
 * (tests/lib/findings_fixture.h) dropped-events (7 rec.Alloc lost, buffer
 * full) and sampler-behind (10 of w3's 11 samples with 3 overruns each).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/findings_fixture.h"

static void t_recording_rules(void **state)
{
	(void)state;
	run r;
	run_findings(&r, &slow, NULL);
	static const char *const quiet[] = { "dropped-events", "write-failures", "crashes", "restarts",
					     "counter-resets", "sampler-behind", "damaged-chunks",
					     "lock-order-cycle" };
	for (size_t i = 0; i < sizeof quiet / sizeof quiet[0]; i++)
		assert_int_equal(count(&r, quiet[i]), 0);
	rec_findings_close(r.f);

	run_findings(&r, &fixed, NULL);
	const rec_finding *x = get(&r, "dropped-events", "7 events lost");
	assert_non_null(x);
	assert_int_equal(U(x, "dropped"), 7);
	assert_string_equal(fact(x, "by_type")->value.text, "7 rec.Alloc (buffer full)");
	x = get(&r, "sampler-behind", "rec.CPUSample");
	assert_non_null(x);
	assert_int_equal(U(x, "samples"), 11);
	assert_int_equal(U(x, "overrun_samples"), 10);
	assert_int_equal(U(x, "overruns"), 30);
	assert_int_equal(x->example_count, 1);
	assert_string_equal(x->examples[0].thread, "w3");
	rec_findings_close(r.f);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_recording_rules),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
