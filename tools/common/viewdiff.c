/* SPDX-License-Identifier: MIT */
/*
 * viewdiff.c - printing before-and-after comparisons of rec/view.h's tables
 * (the library's rec_view_diff_*): aligned text, one line per row and
 * column with before, after and the change, or a JSON object with both
 * sides and the deltas.  rec-view --baseline and rec-report --baseline print
 * with it.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "viewdiff.h"
#include "viewtab.h"

size_t rec_viewdiff_change_str(rec_view_kind k, const rec_view_delta *x, char *buf, size_t cap)
{
	buf[0] = '\0';
	if (x->null)
		return 0;
	if (k == REC_VIEW_PERCENT) {
		if (x->f == 0.0)
			return (size_t)snprintf(buf, cap, "0");
		return (size_t)snprintf(buf, cap, "%+.2f pts", x->f);
	}
	if (x->i == 0)
		return (size_t)snprintf(buf, cap, "0");
	buf[0] = x->i > 0 ? '+' : '-';
	uint64_t mag = x->i > 0 ? (uint64_t)x->i : (uint64_t)0 - (uint64_t)x->i;
	switch (k) {
	case REC_VIEW_DURATION: return 1 + rec_fmt_duration(buf + 1, (int64_t)mag);
	case REC_VIEW_BYTES: return 1 + rec_fmt_bytes(buf + 1, mag);
	default: return 1 + (size_t)snprintf(buf + 1, cap - 1, "%" PRIu64, mag);
	}
}

size_t rec_viewdiff_rel_str(const rec_view_delta *x, char *buf, size_t cap)
{
	buf[0] = '\0';
	if (x->null || x->rel_null)
		return 0;
	if (x->rel == 0.0)
		return (size_t)snprintf(buf, cap, "0.00%%");
	return (size_t)snprintf(buf, cap, "%+.2f%%", x->rel);
}

/* ---- text ---------------------------------------------------------------------- */

#define EXTRA 5 /* Measure, Before, After, Change, % */

static void print_keyed(const rec_view_diff_table *d, const rec_view_table *after, uint32_t width)
{
	size_t nc = d->column_count, nk = 0;
	for (size_t c = 0; c < nc; c++)
		nk += d->key[c];
	size_t gc = nk + EXTRA, lines = 0;
	for (size_t r = 0; r < d->row_count; r++)
		lines += nc - nk;
	const char **heads = rec_cli_xmalloc(gc * sizeof *heads);
	bool *left = rec_cli_xmalloc(gc * sizeof *left);
	char **cells = rec_cli_xmalloc((lines * gc + 1) * sizeof *cells);
	size_t h = 0;
	for (size_t c = 0; c < nc; c++)
		if (d->key[c]) {
			left[h] = true;
			heads[h++] = d->columns[c].title;
		}
	static const char *const extra[EXTRA] = { "Measure", "Before", "After", "Change", "%" };
	for (size_t e = 0; e < EXTRA; e++) {
		left[h] = e == 0;
		heads[h++] = extra[e];
	}
	char buf[4096];
	size_t i = 0;
	for (size_t r = 0; r < d->row_count; r++) {
		const rec_view_diff_row *row = &d->rows[r];
		bool first = true;
		for (size_t c = 0; c < nc; c++) {
			if (d->key[c])
				continue;
			const rec_view_column *col = &d->columns[c];
			const rec_view_cell *key_row = row->after ? row->after : row->before;
			for (size_t k = 0; k < nc; k++) {
				if (!d->key[k])
					continue;
				if (first)
					rec_viewtab_cell_str(&d->columns[k], &key_row[k], buf, sizeof buf);
				else
					buf[0] = '\0';
				cells[i++] = rec_cli_xstrdup(buf);
			}
			first = false;
			cells[i++] = rec_cli_xstrdup(col->title);
			for (int side = 0; side < 2; side++) {
				const rec_view_cell *s = side ? row->after : row->before;
				if (s)
					rec_viewtab_cell_str(col, &s[c], buf, sizeof buf);
				else
					snprintf(buf, sizeof buf, "-");
				cells[i++] = rec_cli_xstrdup(buf);
			}
			if (row->change != REC_VIEW_ROW_BOTH)
				snprintf(buf, sizeof buf, "%s", rec_view_row_change_name(row->change));
			else if (d->compared[c])
				rec_viewdiff_change_str(col->kind, &row->delta[c], buf, sizeof buf);
			else if (col->kind == REC_VIEW_TEXT && !row->before[c].null && !row->after[c].null)
				snprintf(buf, sizeof buf, "%s",
					 strcmp(row->before[c].text, row->after[c].text) ? "changed" : "");
			else
				buf[0] = '\0';
			cells[i++] = rec_cli_xstrdup(buf);
			rec_viewdiff_rel_str(&row->delta[c], buf, sizeof buf);
			cells[i++] = rec_cli_xstrdup(buf);
		}
	}
	char title[512];
	snprintf(title, sizeof title, "%s (before -> after)", d->title);
	rec_viewtab_print_grid(title, gc, heads, left, lines, (const char *const *)cells, width);
	for (size_t k = 0; k < i; k++)
		free(cells[k]);
	free(cells);
	free(left);
	free(heads);
	if (d->row_count == 0)
		REC_OUT_LIT("(no rows)\n");
	if (d->rows_total > d->row_count)
		rec_out_printf("(%zu of %zu rows: --top)\n", d->row_count, d->rows_total);
	rec_out_printf("Rows: %zu changed, %zu the same, %zu new, %zu gone\n", d->changed, d->same,
		       d->added, d->gone);
	if (after && after->note) {
		REC_OUT_LIT("Note: ");
		rec_out_str(after->note);
		rec_out_char('\n');
	}
}

/* A table cut to top rows, under another title. */
static rec_view_table cut(const rec_view_table *t, uint32_t top, const char *title)
{
	rec_view_table c = *t;
	c.title = title;
	if (top && c.row_count > top)
		c.row_count = top;
	return c;
}

/* ---- JSON ---------------------------------------------------------------------- */

static void json_side(rec_json *j, const rec_view_diff_table *d, const rec_view_cell *row)
{
	if (!row) {
		rec_json_null(j);
		return;
	}
	rec_json_begin_object(j, true);
	for (size_t c = 0; c < d->column_count; c++) {
		rec_json_key(j, d->columns[c].key);
		rec_viewtab_json_cell(j, d->columns[c].kind, &row[c]);
	}
	rec_json_end_object(j);
}

void rec_viewdiff_json_delta(rec_json *j, rec_view_kind k, const rec_view_delta *x, bool rel)
{
	if (x->null || (rel && x->rel_null))
		rec_json_null(j);
	else if (rel)
		rec_json_double(j, x->rel);
	else if (k == REC_VIEW_PERCENT)
		rec_json_double(j, x->f);
	else
		rec_json_i64(j, x->i);
}

static void json_deltas(rec_json *j, const rec_view_diff_table *d, const rec_view_diff_row *row,
			bool rel)
{
	if (row->change != REC_VIEW_ROW_BOTH) {
		rec_json_null(j);
		return;
	}
	rec_json_begin_object(j, true);
	for (size_t c = 0; c < d->column_count; c++) {
		if (!d->compared[c])
			continue;
		rec_json_key(j, d->columns[c].key);
		rec_viewdiff_json_delta(j, d->columns[c].kind, &row->delta[c], rel);
	}
	rec_json_end_object(j);
}

static void json_keyed(rec_json *j, const rec_view_diff_table *d, const rec_view_table *after)
{
	rec_json_key(j, "key");
	rec_json_begin_array(j, true);
	for (size_t c = 0; c < d->column_count; c++)
		if (d->key[c])
			rec_json_str(j, d->columns[c].key);
	rec_json_end_array(j);
	rec_json_key(j, "columns");
	rec_json_begin_array(j, false);
	for (size_t c = 0; c < d->column_count; c++) {
		rec_json_begin_object(j, true);
		rec_viewtab_json_column(j, d->columns[c].key, d->columns[c].title,
					d->columns[c].kind);
		rec_json_key(j, "compared");
		rec_json_bool(j, d->compared[c]);
		rec_json_end_object(j);
	}
	rec_json_end_array(j);
	rec_json_key(j, "rows");
	rec_json_begin_array(j, false);
	for (size_t r = 0; r < d->row_count; r++) {
		const rec_view_diff_row *row = &d->rows[r];
		rec_json_begin_object(j, false);
		rec_json_key(j, "change");
		rec_json_str(j, rec_view_row_change_name(row->change));
		rec_json_key(j, "before");
		json_side(j, d, row->before);
		rec_json_key(j, "after");
		json_side(j, d, row->after);
		rec_json_key(j, "delta");
		json_deltas(j, d, row, false);
		rec_json_key(j, "delta_pct");
		json_deltas(j, d, row, true);
		rec_json_end_object(j);
	}
	rec_json_end_array(j);
	rec_json_key(j, "rows_total");
	rec_json_u64(j, d->rows_total);
	rec_json_key(j, "changed");
	rec_json_u64(j, d->changed);
	rec_json_key(j, "same");
	rec_json_u64(j, d->same);
	rec_json_key(j, "new");
	rec_json_u64(j, d->added);
	rec_json_key(j, "gone");
	rec_json_u64(j, d->gone);
	rec_json_key(j, "note");
	rec_json_str(j, after ? after->note : NULL);
}

/* ---- both ---------------------------------------------------------------------- */

bool rec_viewdiff_print(rec_json *j, const rec_view_table *before, const rec_view_table *after,
			uint32_t top, uint32_t width)
{
	rec_view_diff *diff = NULL;
	if (rec_view_diff_open(&diff, before, after, top) != REC_OK)
		return false;
	const rec_view_diff_table *d = rec_view_diff_get(diff);
	if (j) {
		rec_json_begin_object(j, false);
		rec_json_key(j, "name");
		rec_json_str(j, d->name);
		rec_json_key(j, "title");
		rec_json_str(j, d->title);
		rec_json_key(j, "keyed");
		rec_json_bool(j, d->keyed);
		if (d->keyed) {
			json_keyed(j, d, after);
		} else {
			for (int side = 0; side < 2; side++) {
				const rec_view_table *t = side ? after : before;
				rec_json_key(j, side ? "after" : "before");
				if (t) {
					rec_view_table c = cut(t, top, t->title);
					rec_viewtab_json(j, &c);
				} else {
					rec_json_null(j);
				}
			}
		}
		rec_json_end_object(j);
	} else if (d->keyed) {
		print_keyed(d, after, width);
	} else {
		for (int side = 0; side < 2; side++) {
			const rec_view_table *t = side ? after : before;
			if (!t)
				continue;
			char title[512];
			snprintf(title, sizeof title, "%s (%s)", t->title, side ? "after" : "before");
			rec_view_table c = cut(t, top, title);
			rec_viewtab_print(&c, width);
		}
	}
	rec_view_diff_close(diff);
	return true;
}

bool rec_viewdiff_print_all(rec_json *j, const rec_view_table *before, size_t before_count,
			    const rec_view_table *after, size_t after_count, uint32_t top,
			    uint32_t width)
{
	bool ok = true;
	for (size_t a = 0; a < after_count; a++) {
		const rec_view_table *b = NULL;
		for (size_t i = 0; i < before_count && !b; i++)
			if (strcmp(before[i].name, after[a].name) == 0)
				b = &before[i];
		ok = rec_viewdiff_print(j, b, &after[a], top, width) && ok;
	}
	for (size_t i = 0; i < before_count; i++) {
		bool found = false;
		for (size_t a = 0; a < after_count && !found; a++)
			found = strcmp(before[i].name, after[a].name) == 0;
		if (!found)
			ok = rec_viewdiff_print(j, &before[i], NULL, top, width) && ok;
	}
	return ok;
}
