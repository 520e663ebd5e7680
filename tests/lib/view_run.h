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

#include <stdbool.h>
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

/* The view of m read by r (ordered), its CPU samples given as digests
 * when dig and the view takes them (rec_view_digest_type()). */
static __attribute__((unused))
void read_view(rec_view *v, const membuf *m, bool dig)
{
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.flags = REC_READ_ORDERED;
	rec_reader *rd = NULL;
	ok(rec_reader_open_mem(&rd, m->p, m->len, "mem", &ro));
	if (dig && rec_view_digest_type(v))
		ok(rec_reader_digest_type(rd, rec_view_digest_type(v), rec_view_add_digests, v));
	ok(rec_view_begin_input(v));
	rec_event ev;
	rec_status st;
	while ((st = rec_reader_next_event(rd, &ev)) == REC_OK)
		ok(rec_view_add_event(v, &ev));
	assert_int_equal(st, REC_END);
	rec_reader_close(rd);
}

/* Tables a and b (na, nb of them) the same, cell by cell. */
static __attribute__((unused))
void same_tables(const rec_view_table *a, size_t na, const rec_view_table *b, size_t nb)
{
	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++) {
		assert_string_equal(a[i].name, b[i].name);
		assert_int_equal(a[i].column_count, b[i].column_count);
		assert_int_equal(a[i].row_count, b[i].row_count);
		assert_int_equal(a[i].rows_total, b[i].rows_total);
		for (size_t k = 0; k < a[i].row_count * a[i].column_count; k++) {
			const rec_view_cell *x = &a[i].cells[k], *y = &b[i].cells[k];
			assert_int_equal(x->null, y->null);
			assert_int_equal(x->u, y->u);
			assert_int_equal(x->i, y->i);
			assert_true(x->f == y->f || (x->f != x->f && y->f != y->f));
			assert_int_equal(x->text == NULL, y->text == NULL);
			if (x->text)
				assert_string_equal(x->text, y->text);
		}
	}
}

/* How run_view() gives a view that takes CPU samples as digests: both ways
 * compared (VIEW_BOTH, the default), or only as events or digests (a test of
 * where the two differ: a bound of one of them). */
enum { VIEW_BOTH, VIEW_EVENTS, VIEW_DIGESTS };
static int view_digests __attribute__((unused)) = VIEW_BOTH;

/* The view o of m, in r.  A view that takes CPU samples as digests is run
 * both ways, with the same tables (the one kept: with digests, as rec-view
 * runs it), unless view_digests says otherwise. */
static __attribute__((unused))
void run_view(run *r, const membuf *m, rec_view_options *o)
{
	memset(r, 0, sizeof *r);
	ok(rec_view_open(&r->v, o));
	read_view(r->v, m, view_digests != VIEW_EVENTS);
	if (strcmp(o->view, "recording") == 0) {
		rec_summary *s = NULL;
		rec_reader *rd = NULL;
		ok(rec_summary_open(&s));
		ok(rec_reader_open_mem(&rd, m->p, m->len, "mem", NULL));
		ok(rec_summary_add_reader(s, rd, "mem", REC_SUMMARY_DROPS));
		rec_reader_close(rd);
		ok(rec_view_add_summary(r->v, rec_summary_get(s)));
		rec_summary_close(s);
	}
	ok(rec_view_get(r->v, &r->t, &r->n));
	if (rec_view_digest_type(r->v) && view_digests == VIEW_BOTH) {
		rec_view *e = NULL;
		const rec_view_table *et;
		size_t en;
		ok(rec_view_open(&e, o));
		read_view(e, m, false);
		ok(rec_view_get(e, &et, &en));
		same_tables(r->t, r->n, et, en);
		rec_view_close(e);
	}
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
