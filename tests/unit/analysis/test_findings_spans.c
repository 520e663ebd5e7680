/* SPDX-License-Identifier: MIT */
/*
 * test_findings_spans.c - the span rules (libfmt/analysis/findings_spans.c):
 * waiting-not-computing, allocation-outlier and startup-work on recording
 * SLOW, which triggers them, and FIXED, which must not (tests/lib/
 * findings_fixture.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/findings_fixture.h"

static void t_waiting_not_computing(void **state)
{
	(void)state;
	run r;
	run_findings(&r, &slow, "path");
	assert_int_equal(count(&r, "waiting-not-computing"), 2); /* /get (lock), /fill (sleep) */
	const rec_finding *x = get(&r, "waiting-not-computing", "app.Request path=/fill");
	assert_non_null(x);
	assert_int_equal(U(x, "sleep"), 150 * MS);
	assert_int_equal(U(x, "cpu"), 0);
	assert_non_null(get(&r, "waiting-not-computing", "app.Request path=/get"));
	/* /hash computes (100 ms of samples in 100 ms), /fast is 1 ms */
	assert_null(get(&r, "waiting-not-computing", "app.Request path=/hash"));
	assert_null(get(&r, "waiting-not-computing", "app.Request path=/fast"));
	rec_findings_close(r.f);
}

static void t_allocation_outlier(void **state)
{
	(void)state;
	run r;
	run_findings(&r, &slow, "path");
	assert_int_equal(count(&r, "allocation-outlier"), 1);
	const rec_finding *x = get(&r, "allocation-outlier", "app.Request path=/hash");
	assert_non_null(x);
	assert_int_equal(U(x, "per_span"), MIB);
	assert_int_equal(U(x, "next_per_span"), 0);
	rec_findings_close(r.f);
	run_findings(&r, &slow, NULL); /* one span type: nothing to compare */
	assert_int_equal(count(&r, "allocation-outlier"), 0);
	rec_findings_close(r.f);
	run_findings(&r, &fixed, "path"); /* 1 MiB per span everywhere */
	assert_int_equal(count(&r, "allocation-outlier"), 0);
	rec_findings_close(r.f);
}

static void t_startup(void **state)
{
	(void)state;
	run r;
	run_findings(&r, &slow, NULL);
	const rec_finding *x = get(&r, "startup-work", "before the first app.Request");
	assert_non_null(x);
	assert_int_equal(x->severity, REC_FINDING_INFO);
	assert_int_equal(U(x, "sleep"), 300 * MS);
	assert_int_equal(U(x, "allocated"), 4 * MIB);
	assert_int_equal(U(x, "allocations"), 2);
	assert_string_equal(fact(x, "sleep_site")->value.text, "warmup (300.0 ms)");
	rec_findings_close(r.f);
	run_findings(&r, &fixed, NULL);
	assert_int_equal(count(&r, "startup-work"), 0);
	rec_findings_close(r.f);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_waiting_not_computing),
		cmocka_unit_test(t_allocation_outlier),
		cmocka_unit_test(t_startup),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
