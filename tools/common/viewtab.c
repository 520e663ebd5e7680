/* SPDX-License-Identifier: MIT */
/*
 * viewtab.c - printing rec/view.h's tables: aligned text (a centred title,
 * a dashed rule, text columns cut with "..." to fit a width) and one
 * table as a JSON object.  rec-view and rec-report print with it.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "viewtab.h"

#define MIN_TEXT 8

size_t rec_viewtab_cell_str(const rec_view_column *col, const rec_view_cell *c, char *buf, size_t cap)
{
	if (c->null) {
		buf[0] = '-';
		buf[1] = '\0';
		return 1;
	}
	switch (col->kind) {
	case REC_VIEW_TEXT: {
		size_t n = strlen(c->text);
		if (n >= cap)
			n = cap - 1;
		memcpy(buf, c->text, n);
		buf[n] = '\0';
		return n;
	}
	case REC_VIEW_COUNT: return (size_t)snprintf(buf, cap, "%" PRIu64, c->u);
	case REC_VIEW_DURATION: return rec_fmt_duration(buf, (int64_t)(c->u > INT64_MAX ? INT64_MAX : c->u));
	case REC_VIEW_BYTES: return rec_fmt_bytes(buf, c->u);
	case REC_VIEW_PERCENT: return (size_t)snprintf(buf, cap, "%.2f%%", c->f);
	case REC_VIEW_OFFSET: {
		char d[64];
		rec_fmt_duration(d, c->i);
		return (size_t)snprintf(buf, cap, "+%s", d);
	}
	case REC_VIEW_TIME: return rec_fmt_wall(buf, c->i);
	}
	buf[0] = '\0';
	return 0;
}

void rec_viewtab_spaces(size_t n)
{
	while (n--)
		rec_out_char(' ');
}

/* Text cut to w bytes, "..." at the end when cut. */
void rec_viewtab_cut(const char *s, size_t len, size_t w)
{
	if (len <= w) {
		rec_out_write(s, len);
		return;
	}
	if (w <= 3) {
		rec_out_write(s, w);
		return;
	}
	size_t keep = w - 3;
	while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
		keep--; /* not inside a UTF-8 sequence */
	rec_out_write(s, keep);
	REC_OUT_LIT("...");
	rec_viewtab_spaces(w - 3 - keep);
}

/* s wrapped at width, each line after indent spaces. */
void rec_viewtab_wrapped(const char *s, size_t indent, size_t width)
{
	size_t avail = width > indent + 20 ? width - indent : 20;
	while (*s) {
		rec_viewtab_spaces(indent);
		size_t len = strlen(s);
		size_t take = len;
		if (len > avail) {
			take = avail;
			while (take > 0 && s[take] != ' ')
				take--;
			if (take == 0)
				take = avail;
		}
		rec_out_write(s, take);
		rec_out_char('\n');
		s += take;
		while (*s == ' ')
			s++;
	}
}

void rec_viewtab_print_grid(const char *title, size_t nc, const char *const *heads,
			    const bool *left, size_t nr, const char *const *cells, uint32_t width)
{
	size_t *w = rec_cli_xmalloc((nc ? nc : 1) * sizeof *w);
	for (size_t c = 0; c < nc; c++) {
		w[c] = strlen(heads[c]);
		for (size_t r = 0; r < nr; r++) {
			size_t n = strlen(cells[r * nc + c]);
			if (n > w[c])
				w[c] = n;
		}
	}
	/* Too wide: shrink the widest text columns, not below MIN_TEXT. */
	size_t total = nc ? nc - 1 : 0;
	for (size_t c = 0; c < nc; c++)
		total += w[c];
	while (total > width) {
		size_t widest = SIZE_MAX;
		for (size_t c = 0; c < nc; c++)
			if (left[c] && w[c] > MIN_TEXT && (widest == SIZE_MAX || w[c] > w[widest]))
				widest = c;
		if (widest == SIZE_MAX)
			break;
		w[widest]--;
		total--;
	}
	size_t tl = strlen(title);
	rec_out_char('\n');
	rec_viewtab_spaces(total > tl ? (total - tl) / 2 : 0);
	rec_out_str(title);
	REC_OUT_LIT("\n\n");
	for (size_t c = 0; c < nc; c++) {
		const char *h = heads[c];
		size_t hl = strlen(h);
		if (c)
			rec_out_char(' ');
		if (!left[c])
			rec_viewtab_spaces(w[c] > hl ? w[c] - hl : 0);
		rec_viewtab_cut(h, hl, w[c] < hl ? w[c] : hl);
		if (left[c] && c + 1 < nc)
			rec_viewtab_spaces(w[c] > hl ? w[c] - hl : 0);
	}
	rec_out_char('\n');
	for (size_t c = 0; c < nc; c++) {
		if (c)
			rec_out_char(' ');
		for (size_t k = 0; k < w[c]; k++)
			rec_out_char('-');
	}
	rec_out_char('\n');
	for (size_t r = 0; r < nr; r++) {
		for (size_t c = 0; c < nc; c++) {
			const char *buf = cells[r * nc + c];
			size_t n = strlen(buf);
			if (c)
				rec_out_char(' ');
			if (left[c]) {
				if (c + 1 < nc) {
					rec_viewtab_cut(buf, n, w[c]);
					rec_viewtab_spaces(w[c] > n ? w[c] - n : 0);
				} else {
					rec_viewtab_cut(buf, n, w[c]);
				}
			} else {
				rec_viewtab_spaces(w[c] > n ? w[c] - n : 0);
				rec_out_write(buf, n);
			}
		}
		rec_out_char('\n');
	}
	free(w);
}

void rec_viewtab_print(const rec_view_table *t, uint32_t width)
{
	size_t nc = t->column_count, nr = t->row_count;
	const char **heads = rec_cli_xmalloc((nc ? nc : 1) * sizeof *heads);
	bool *left = rec_cli_xmalloc((nc ? nc : 1) * sizeof *left);
	char **cells = rec_cli_xmalloc((nc * nr + 1) * sizeof *cells);
	char buf[4096];
	for (size_t c = 0; c < nc; c++) {
		heads[c] = t->columns[c].title;
		left[c] = t->columns[c].kind == REC_VIEW_TEXT;
	}
	for (size_t i = 0; i < nc * nr; i++) {
		rec_viewtab_cell_str(&t->columns[i % nc], &t->cells[i], buf, sizeof buf);
		cells[i] = rec_cli_xstrdup(buf);
	}
	rec_viewtab_print_grid(t->title, nc, heads, left, nr, (const char *const *)cells, width);
	for (size_t i = 0; i < nc * nr; i++)
		free(cells[i]);
	free(cells);
	free(left);
	free(heads);
	if (t->row_count == 0)
		REC_OUT_LIT("(no rows)\n");
	if (t->rows_total > t->row_count)
		rec_out_printf("(%zu of %zu rows: --top)\n", t->row_count, t->rows_total);
	if (t->note) {
		REC_OUT_LIT("Note: ");
		rec_out_str(t->note);
		rec_out_char('\n');
	}
}

const char *rec_viewtab_kind_name(rec_view_kind k)
{
	switch (k) {
	case REC_VIEW_TEXT: return "text";
	case REC_VIEW_COUNT: return "count";
	case REC_VIEW_DURATION: return "duration_ns";
	case REC_VIEW_BYTES: return "bytes";
	case REC_VIEW_PERCENT: return "percent";
	case REC_VIEW_OFFSET: return "offset_ns";
	case REC_VIEW_TIME: return "time_ns";
	}
	return "text";
}

size_t rec_viewtab_fact_str(const rec_finding_fact *x, char *buf, size_t cap)
{
	rec_view_column col = { x->title, x->key, x->kind };
	return rec_viewtab_cell_str(&col, &x->value, buf, cap);
}

void rec_viewtab_json_cell(rec_json *j, rec_view_kind k, const rec_view_cell *cl)
{
	if (cl->null) {
		rec_json_null(j);
		return;
	}
	switch (k) {
	case REC_VIEW_TEXT: rec_json_str(j, cl->text); break;
	case REC_VIEW_PERCENT: rec_json_double(j, cl->f); break;
	case REC_VIEW_OFFSET:
	case REC_VIEW_TIME: rec_json_i64(j, cl->i); break;
	default: rec_json_u64(j, cl->u); break;
	}
}

void rec_viewtab_json_column(rec_json *j, const char *key, const char *title, rec_view_kind kind)
{
	rec_json_key(j, "key");
	rec_json_str(j, key);
	rec_json_key(j, "title");
	rec_json_str(j, title);
	rec_json_key(j, "kind");
	rec_json_str(j, rec_viewtab_kind_name(kind));
}

void rec_viewtab_json(rec_json *j, const rec_view_table *tb)
{
	rec_json_begin_object(j, false);
	rec_json_key(j, "name");
	rec_json_str(j, tb->name);
	rec_json_key(j, "title");
	rec_json_str(j, tb->title);
	rec_json_key(j, "columns");
	rec_json_begin_array(j, false);
	for (size_t c = 0; c < tb->column_count; c++) {
		rec_json_begin_object(j, true);
		rec_viewtab_json_column(j, tb->columns[c].key, tb->columns[c].title,
					tb->columns[c].kind);
		rec_json_end_object(j);
	}
	rec_json_end_array(j);
	rec_json_key(j, "rows");
	rec_json_begin_array(j, false);
	for (size_t r = 0; r < tb->row_count; r++) {
		rec_json_begin_object(j, true);
		for (size_t c = 0; c < tb->column_count; c++) {
			const rec_view_cell *cl = &tb->cells[r * tb->column_count + c];
			rec_json_key(j, tb->columns[c].key);
			rec_viewtab_json_cell(j, tb->columns[c].kind, cl);
		}
		rec_json_end_object(j);
	}
	rec_json_end_array(j);
	rec_json_key(j, "rows_total");
	rec_json_u64(j, tb->rows_total);
	rec_json_key(j, "note");
	rec_json_str(j, tb->note);
	rec_json_end_object(j);
}
