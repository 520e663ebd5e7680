/* SPDX-License-Identifier: MIT */
/*
 * viewtab.h - how the tools print rec/view.h's tables (viewtab.c): rec-view
 * and rec-report.
 */
#ifndef REC_TOOLS_VIEWTAB_H
#define REC_TOOLS_VIEWTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "rec/findings.h"
#include "rec/view.h"

/* One cell as text ("-" when null) into buf (cap >= 64); its length. */
size_t rec_viewtab_cell_str(const rec_view_column *col, const rec_view_cell *c, char *buf, size_t cap);
/* A finding's fact (a cell of its own column) as rec_viewtab_cell_str. */
size_t rec_viewtab_fact_str(const rec_finding_fact *x, char *buf, size_t cap);
/* The table as aligned text on the tool's output, lines at most width wide
 * (text columns are cut first). */
void rec_viewtab_print(const rec_view_table *t, uint32_t width);
/* A grid of strings as rec_viewtab_print() prints a table: the title
 * centred, the heads, a dashed rule, nr rows of nc cells (row-major); left
 * columns are left-aligned and cut first (with "...") when wider than width,
 * the others right-aligned.  No footer. */
void rec_viewtab_print_grid(const char *title, size_t nc, const char *const *heads,
			    const bool *left, size_t nr, const char *const *cells, uint32_t width);
/* The table as one JSON object: name, title, columns, rows, rows_total, note. */
void rec_viewtab_json(rec_json *j, const rec_view_table *t);
/* One cell's JSON value for a column of kind k (null when null). */
void rec_viewtab_json_cell(rec_json *j, rec_view_kind k, const rec_view_cell *c);
/* A column's (or a fact's) members "key", "title" and "kind" in the JSON
 * object begun. */
void rec_viewtab_json_column(rec_json *j, const char *key, const char *title, rec_view_kind kind);
/* The JSON name of a column kind ("duration_ns"). */
const char *rec_viewtab_kind_name(rec_view_kind k);
/* s wrapped at width (at spaces), each line after indent spaces. */
void rec_viewtab_wrapped(const char *s, size_t indent, size_t width);
/* n spaces; s cut to w bytes with "..." (padded to w when cut). */
void rec_viewtab_spaces(size_t n);
void rec_viewtab_cut(const char *s, size_t len, size_t w);

#endif /* REC_TOOLS_VIEWTAB_H */
