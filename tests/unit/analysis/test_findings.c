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

/* The cells of table name the same in a and b. */
static void same_table(const run *a, const run *b, const char *name)
{
	const rec_view_table *x = rec_findings_table(a->f, name), *y = rec_findings_table(b->f, name);
	assert_non_null(x);
	assert_non_null(y);
	assert_int_equal(x->row_count, y->row_count);
	assert_int_equal(x->column_count, y->column_count);
	for (size_t i = 0; i < x->row_count * x->column_count; i++) {
		assert_int_equal(x->cells[i].null, y->cells[i].null);
		same_text(x->cells[i].text, y->cells[i].text);
		assert_int_equal(x->cells[i].u, y->cells[i].u);
		assert_int_equal(x->cells[i].i, y->cells[i].i);
	}
}

/* A recording whose summary counts no type of the user's (so no span can
 * come): its CPU samples as digests give the same findings and startup
 * tables as events (sampler-behind from the overruns, the whole recording
 * as before the first span).  Its summary added to the findings of one
 * with a span after all: with digests, that span fails the pass
 * (REC_ERR_STATE, naming its type: rec-report reads again without
 * digests); without, nothing of it is refused and the findings are those
 * of that recording. */
static void t_digests_no_span(void **state)
{
	(void)state;
	membuf none = { 0 }, late = { 0 };
	write_nospan(&none, false);
	write_nospan(&late, true);
	unsigned before = digest_runs;
	run r;
	run_findings(&r, &none, NULL);
	assert_int_equal(digest_runs, before + 1);
	assert_int_equal(count(&r, "sampler-behind"), 1);
	run e;
	ok(read_findings(&e, &none, NULL, NULL, false));
	same_table(&r, &e, "startup");
	same_table(&r, &e, "cpu");
	const rec_view_table *cpu = rec_findings_table(r.f, "cpu");
	assert_int_equal(cpu->row_count, 1); /* hash: 11 samples, 2 overruns on 10 */
	assert_int_equal(cpu->cells[2].u, (10 * 3 + 1) * 10 * MS);
	rec_findings_close(e.f);
	rec_findings_close(r.f);

	assert_int_equal(read_findings(&r, &late, &none, NULL, true), REC_ERR_STATE);
	assert_non_null(strstr(rec_findings_errmsg(r.f), "app.Request"));
	rec_findings_close(r.f);
	ok(read_findings(&r, &late, &none, NULL, false));
	run_findings(&e, &late, NULL);
	same_findings(&r, &e);
	same_table(&r, &e, "startup");
	same_table(&r, &e, "cpu");
	rec_findings_close(e.f);
	rec_findings_close(r.f);
	free(none.p);
	free(late.p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_api),
		cmocka_unit_test(t_digests_no_span),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
