/* SPDX-License-Identifier: MIT */
/*
 * test_findings_compare.c - before and after for findings
 * (rec_findings_diff_*, libfmt/analysis/findings_compare.c): findings built
 * here (matched by rule and subject, the k-th with the k-th, facts by key,
 * the deltas exact), and the findings of recording SLOW against FIXED
 * (tests/lib/findings_fixture.h): the lock and startup findings went away,
 * dropped-events and sampler-behind appeared, each change once.  The
 * comparison on rec-view's BEFORE and AFTER recordings is in
 * test_view_compare.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "rec/view.h"

#include "../../lib/findings_fixture.h"

/* Findings built here: matched by rule and subject (k-th with k-th), facts
 * by key, the deltas exact. */
static void t_findings_facts(void **state)
{
	(void)state;
	const rec_finding_fact fb1[] = {
		{ "waiters_total", "waiters' total", REC_VIEW_DURATION, { .u = 900 } },
		{ "holder", "holder", REC_VIEW_TEXT, { .text = "conn-1" } },
		{ "share", "share", REC_VIEW_PERCENT, { .f = 50.0 } },
	};
	const rec_finding_fact fa1[] = {
		{ "share", "share", REC_VIEW_PERCENT, { .f = 30.0 } },
		{ "waiters_total", "waiters' total", REC_VIEW_DURATION, { .u = 300 } },
		{ "holder", "holder", REC_VIEW_TEXT, { .text = "conn-1" } },
		{ "extra", "extra", REC_VIEW_COUNT, { .u = 1 } },
	};
	const rec_finding_fact same[] = { { "n", "n", REC_VIEW_COUNT, { .u = 4 } } };
	const rec_finding before[] = {
		{ "r1", REC_FINDING_CRITICAL, "lock-a", "s", 3, fb1, 0, NULL, "x" },
		{ "r2", REC_FINDING_INFO, "p", "s", 1, same, 0, NULL, "x" },
		{ "r2", REC_FINDING_INFO, "p", "s", 1, same, 0, NULL, "x" },
		{ "r3", REC_FINDING_WARNING, "gone", "s", 0, NULL, 0, NULL, "x" },
	};
	const rec_finding after[] = {
		{ "r4", REC_FINDING_INFO, "new", "s", 0, NULL, 0, NULL, "x" },
		{ "r2", REC_FINDING_INFO, "p", "s", 1, same, 0, NULL, "x" },
		{ "r1", REC_FINDING_WARNING, "lock-a", "s", 4, fa1, 0, NULL, "x" },
	};
	rec_findings_diff *d = NULL;
	ok(rec_findings_diff_open(&d, before, 4, after, 3));
	const rec_findings_change *l;
	size_t n;
	rec_findings_diff_get(d, &l, &n);
	assert_int_equal(n, 5);
	assert_int_equal(l[0].change, REC_VIEW_ROW_NEW);
	assert_ptr_equal(l[0].after, &after[0]);
	assert_int_equal(l[1].change, REC_VIEW_ROW_BOTH);
	assert_ptr_equal(l[1].before, &before[1]);
	assert_false(l[1].changed);
	assert_int_equal(l[2].change, REC_VIEW_ROW_BOTH);
	assert_true(l[2].changed);
	assert_int_equal(l[2].fact_count, 4);
	assert_ptr_equal(l[2].before_facts[0], &fb1[2]);
	assert_true(fabs(l[2].deltas[0].f + 20.0) < 1e-9);
	assert_true(fabs(l[2].deltas[0].rel + 40.0) < 1e-9);
	assert_ptr_equal(l[2].before_facts[1], &fb1[0]);
	assert_int_equal(l[2].deltas[1].i, -600);
	assert_true(fabs(l[2].deltas[1].rel - (-600.0 / 900.0 * 100.0)) < 1e-9);
	assert_true(l[2].deltas[2].null); /* text */
	assert_null(l[2].before_facts[3]);
	assert_true(l[2].deltas[3].null);
	/* then the gone, in before's order: the second r2/p and r3 */
	assert_int_equal(l[3].change, REC_VIEW_ROW_GONE);
	assert_ptr_equal(l[3].before, &before[2]);
	assert_ptr_equal(l[4].before, &before[3]);
	rec_findings_diff_close(d);
	assert_int_equal(rec_findings_diff_open(&d, NULL, 1, after, 3), REC_ERR_INVALID_ARG);
	ok(rec_findings_diff_open(&d, NULL, 0, NULL, 0));
	rec_findings_diff_get(d, &l, &n);
	assert_int_equal(n, 0);
	rec_findings_diff_close(d);
}

/* The change of rule/subject, which occurs once in l. */
static const rec_findings_change *change_of(const rec_findings_change *l, size_t n,
					    const char *rule, const char *subject)
{
	const rec_findings_change *found = NULL;
	for (size_t i = 0; i < n; i++) {
		const rec_finding *x = l[i].after ? l[i].after : l[i].before;
		if (strcmp(x->rule, rule) == 0 && strcmp(x->subject, subject) == 0) {
			assert_null(found); /* once */
			found = &l[i];
		}
	}
	if (!found)
		fail_msg("no change of %s / %s", rule, subject);
	return found;
}

static void t_slow_to_fixed(void **state)
{
	(void)state;
	run b, a;
	run_findings(&b, &slow, "path");
	run_findings(&a, &fixed, "path");
	rec_findings_diff *d = NULL;
	ok(rec_findings_diff_open(&d, b.list, b.n, a.list, a.n));
	const rec_findings_change *l;
	size_t n;
	rec_findings_diff_get(d, &l, &n);
	static const char *const gone[][2] = {
		{ "lock-held-while-blocked", "cache-lock" },
		{ "lock-dominates-latency", "app.Request path=/get" },
		{ "allocation-outlier", "app.Request path=/hash" },
	};
	for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
		const rec_findings_change *c = change_of(l, n, gone[i][0], gone[i][1]);
		assert_int_equal(c->change, REC_VIEW_ROW_GONE);
		assert_ptr_equal(c->before, get(&b, gone[i][0], gone[i][1]));
		assert_null(c->after);
	}
	static const char *const added[][2] = {
		{ "dropped-events", "7 events lost" },
		{ "sampler-behind", "rec.CPUSample" },
	};
	for (size_t i = 0; i < sizeof added / sizeof added[0]; i++) {
		const rec_findings_change *c = change_of(l, n, added[i][0], added[i][1]);
		assert_int_equal(c->change, REC_VIEW_ROW_NEW);
		assert_ptr_equal(c->after, get(&a, added[i][0], added[i][1]));
		assert_null(c->before);
	}
	/* every finding of either side once: matched, gone or new */
	size_t matched = 0, nb = 0, na = 0;
	for (size_t i = 0; i < n; i++) {
		matched += l[i].change == REC_VIEW_ROW_BOTH;
		nb += l[i].before != NULL;
		na += l[i].after != NULL;
	}
	assert_int_equal(nb, b.n);
	assert_int_equal(na, a.n);
	assert_int_equal(n, b.n + a.n - matched);
	rec_findings_diff_close(d);

	/* against itself: all matched, nothing changed */
	ok(rec_findings_diff_open(&d, b.list, b.n, b.list, b.n));
	rec_findings_diff_get(d, &l, &n);
	assert_int_equal(n, b.n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(l[i].change, REC_VIEW_ROW_BOTH);
		assert_false(l[i].changed);
	}
	rec_findings_diff_close(d);
	rec_findings_close(b.f);
	rec_findings_close(a.f);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_findings_facts),
		cmocka_unit_test(t_slow_to_fixed),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
