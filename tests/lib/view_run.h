/* SPDX-License-Identifier: MIT */
/*
 * view_run.h - test support for the tests of rec/view.h's views
 * (tests/unit/analysis/test_view*.c): run a view over a recording in memory
 * (membuf.h, written with the real writer) read back with the real reader in
 * timestamp order (the recording view is also given rec_summary's result),
 * and look up its tables, columns, rows and cells, failing the test with a
 * message naming what is missing.  ok() asserts REC_OK.
 *
 * Header-only (the helpers assert with cmocka; tests/lib's objects are also
 * linked into the tests/helpers programs, which have no cmocka): include it
 * from one .c file per binary, after <stdarg.h> <stddef.h> <stdint.h>
 * <setjmp.h> <cmocka.h>.  view_fixture.h includes it.
 */
#ifndef REC_TESTS_LIB_VIEW_RUN_H
#define REC_TESTS_LIB_VIEW_RUN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rec/analysis.h"
#include "rec/rec.h"
#include "rec/view.h"

#include "membuf.h"

#ifndef REC_TESTS_LIB_OK
#define REC_TESTS_LIB_OK
/* ok(): the call returned REC_OK. */
static __attribute__((unused))
void ok(rec_status st) { assert_int_equal(st, REC_OK); }
#endif

typedef struct run {
	rec_view *v;
	const rec_view_table *t;
	size_t n;
} run;

static __attribute__((unused))
void run_view(run *r, const membuf *m, rec_view_options *o)
{
	memset(r, 0, sizeof *r);
	ok(rec_view_open(&r->v, o));
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.flags = REC_READ_ORDERED;
	rec_reader *rd = NULL;
	ok(rec_reader_open_mem(&rd, m->p, m->len, "mem", &ro));
	ok(rec_view_begin_input(r->v));
	rec_event ev;
	rec_status st;
	while ((st = rec_reader_next_event(rd, &ev)) == REC_OK)
		ok(rec_view_add_event(r->v, &ev));
	assert_int_equal(st, REC_END);
	rec_reader_close(rd);
	if (strcmp(o->view, "recording") == 0) {
		rec_summary *s = NULL;
		ok(rec_summary_open(&s));
		ok(rec_reader_open_mem(&rd, m->p, m->len, "mem", NULL));
		ok(rec_summary_add_reader(s, rd, "mem", REC_SUMMARY_DROPS));
		rec_reader_close(rd);
		ok(rec_view_add_summary(r->v, rec_summary_get(s)));
		rec_summary_close(s);
	}
	ok(rec_view_get(r->v, &r->t, &r->n));
}

static __attribute__((unused))
void simple(run *r, const membuf *m, const char *view, const char *by)
{
	rec_view_options o = REC_VIEW_OPTIONS_INIT;
	o.view = view;
	o.by = by;
	run_view(r, m, &o);
}

static __attribute__((unused))
const rec_view_table *table(const run *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->t[i].name, name) == 0)
			return &r->t[i];
	fail_msg("no table %s", name);
	return NULL;
}

static __attribute__((unused))
int col(const rec_view_table *t, const char *key)
{
	for (size_t c = 0; c < t->column_count; c++)
		if (strcmp(t->columns[c].key, key) == 0)
			return (int)c;
	fail_msg("no column %s in %s", key, t->name);
	return -1;
}

static __attribute__((unused))
const rec_view_cell *cell(const rec_view_table *t, size_t row, const char *key)
{
	assert_true(row < t->row_count);
	return &t->cells[row * t->column_count + (size_t)col(t, key)];
}

static __attribute__((unused))
uint64_t U(const rec_view_table *t, size_t row, const char *key)
{
	const rec_view_cell *c = cell(t, row, key);
	assert_false(c->null);
	return c->u;
}

static __attribute__((unused))
const char *S(const rec_view_table *t, size_t row, const char *key)
{
	const rec_view_cell *c = cell(t, row, key);
	assert_false(c->null);
	return c->text;
}

/* The row whose text column key is value. */
static __attribute__((unused))
size_t row_of(const rec_view_table *t, const char *key, const char *value)
{
	for (size_t r = 0; r < t->row_count; r++) {
		const rec_view_cell *c = cell(t, r, key);
		if (!c->null && strcmp(c->text, value) == 0)
			return r;
	}
	fail_msg("no row %s=%s in %s", key, value, t->name);
	return 0;
}

#endif /* REC_TESTS_LIB_VIEW_RUN_H */
