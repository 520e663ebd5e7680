/* SPDX-License-Identifier: MIT */
/*
 * test_findings.c - the findings engine (libfmt/analysis/findings.c): the
 * list of rules, the options, rec_findings_get's contract, events refused
 * and the tables the rules read.  The rules themselves are tested in
 * test_findings_locks.c, test_findings_spans.c and test_findings_recording.c
 * on the recordings of tests/lib/findings_fixture.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/findings_fixture.h"

static void t_api(void **state)
{
	(void)state;
	size_t n;
	const rec_finding_rule *rules = rec_findings_rules(&n);
	assert_int_equal(n, 13);
	for (size_t i = 0; i < n; i++) {
		assert_true(rules[i].description[0]);
		for (size_t k = 0; k < i; k++)
			assert_string_not_equal(rules[i].name, rules[k].name);
	}
	assert_string_equal(rec_finding_severity_name(REC_FINDING_CRITICAL), "critical");
	rec_findings *f = NULL;
	rec_findings_options o = REC_FINDINGS_OPTIONS_INIT;
	o.reserved[2] = 1;
	assert_int_equal(rec_findings_open(&f, &o), REC_ERR_INVALID_ARG);
	assert_null(f);
	o.reserved[2] = 0;
	o.flags = 0x80;
	assert_int_equal(rec_findings_open(&f, &o), REC_ERR_INVALID_ARG);
	ok(rec_findings_open(&f, NULL));
	const rec_finding *l1, *l2;
	size_t n1, n2;
	ok(rec_findings_get(f, &l1, &n1));
	assert_int_equal(n1, 0);
	ok(rec_findings_get(f, &l2, &n2));
	assert_true(l1 == l2 && n1 == n2);
	rec_event ev;
	memset(&ev, 0, sizeof ev);
	assert_int_equal(rec_findings_add_event(f, &ev), REC_ERR_INVALID_ARG);
	assert_non_null(rec_findings_table(f, "latency"));
	assert_null(rec_findings_table(f, "no-such-table"));
	rec_findings_close(f);
	rec_findings_close(NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_api),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
