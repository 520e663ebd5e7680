/* SPDX-License-Identifier: MIT */
/*
 * test_findings_locks.c - the lock rules (libfmt/analysis/findings_locks.c):
 * lock-held-while-blocked and lock-dominates-latency on recording SLOW,
 * which triggers them, and FIXED, which must not (tests/lib/
 * findings_fixture.h); lock-order-cycle is in test_findings_recording.c's
 * quiet list and in test_lock_graph.c's cycles.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/findings_fixture.h"

static void t_lock_held_while_blocked(void **state)
{
	(void)state;
	run r;
	run_findings(&r, &slow, "path");
	const rec_finding *x = get(&r, "lock-held-while-blocked", "cache-lock");
	assert_non_null(x);
	assert_int_equal(x->severity, REC_FINDING_CRITICAL); /* 140 of 160 ms: 87.5 % */
	assert_string_equal(fact(x, "holder_site")->value.text, "cache_fill");
	assert_string_equal(fact(x, "holders")->value.text, "w2 (1)");
	assert_int_equal(U(x, "waits"), 1);
	assert_int_equal(U(x, "waiters_total"), 160 * MS);
	assert_int_equal(U(x, "waiters_max"), 160 * MS);
	assert_int_equal(U(x, "holder_sleeping"), 140 * MS);
	assert_true(fact(x, "blocked_percent")->value.f > 87.4 && fact(x, "blocked_percent")->value.f < 87.6);
	assert_int_equal(x->example_count, 1);
	assert_true(x->examples[0].timed);
	assert_int_equal(x->examples[0].wall_ns, WALL0 + (int64_t)(420 * MS));
	assert_int_equal(x->examples[0].offset_ns, (int64_t)(420 * MS));
	assert_int_equal(x->examples[0].duration_ns, (int64_t)(160 * MS));
	assert_string_equal(x->examples[0].thread, "w1");
	assert_string_equal(x->examples[0].what, "rec.LockWait on cache-lock, held by w2");
	assert_string_equal(x->next, "rec-view contention-by-lock");
	assert_non_null(strstr(x->summary, "cache_fill"));
	assert_true(r.list[0].severity == REC_FINDING_CRITICAL); /* the heaviest first */
	for (size_t i = 1; i < r.n; i++)
		assert_true(r.list[i - 1].severity >= r.list[i].severity);
	rec_findings_close(r.f);

	run_findings(&r, &fixed, "path"); /* 1 ms wait while the holder ran */
	assert_int_equal(count(&r, "lock-held-while-blocked"), 0);
	rec_findings_close(r.f);
}

static void t_lock_dominates_latency(void **state)
{
	(void)state;
	run r;
	run_findings(&r, &slow, "path");
	assert_int_equal(count(&r, "lock-dominates-latency"), 1);
	const rec_finding *x = get(&r, "lock-dominates-latency", "app.Request path=/get");
	assert_non_null(x);
	assert_int_equal(U(x, "lock_wait"), 160 * MS);
	assert_int_equal(U(x, "mean"), 200 * MS);
	assert_string_equal(fact(x, "lock")->value.text, "cache-lock");
	assert_string_equal(x->next, "rec-view requests --by path");
	rec_findings_close(r.f);
	run_findings(&r, &fixed, "path");
	assert_int_equal(count(&r, "lock-dominates-latency"), 0);
	rec_findings_close(r.f);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_lock_held_while_blocked),
		cmocka_unit_test(t_lock_dominates_latency),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
