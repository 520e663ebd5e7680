/* SPDX-License-Identifier: MIT */
/*
 * viewdiff.h - how the tools print before-and-after comparisons of
 * rec/view.h's tables (viewdiff.c): rec-view --baseline and rec-report
 * --baseline.
 */
#ifndef REC_TOOLS_VIEWDIFF_H
#define REC_TOOLS_VIEWDIFF_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "rec/view.h"

/* A change with its sign into buf (cap >= 64): "+150.000 ms", "-3",
 * "+1.25 pts" (a percent column), "0" when nothing changed; "" when null. */
size_t rec_viewdiff_change_str(rec_view_kind k, const rec_view_delta *x, char *buf, size_t cap);
/* The relative change: "+42.86%", "-100.00%"; "" when it has none. */
size_t rec_viewdiff_rel_str(const rec_view_delta *x, char *buf, size_t cap);
/* A change's JSON value in a column of kind k: the change (rel false) or
 * the relative change (rel true); null when it has none. */
void rec_viewdiff_json_delta(rec_json *j, rec_view_kind k, const rec_view_delta *x, bool rel);
/* The comparison of before with after (either may be NULL, not both; same
 * view, computed without --top), at most top rows (0: all): as aligned text
 * (j NULL; lines at most width wide) or as one JSON object into j.  A table
 * with a natural key: one line per row and column, its key, before, after,
 * the change and the relative change ("new"/"gone" for a row on one side);
 * one without (the slowest spans, the runs): the two tables as they are.
 * @return false when out of memory or the tables do not match (nothing
 * printed). */
bool rec_viewdiff_print(rec_json *j, const rec_view_table *before, const rec_view_table *after,
			uint32_t top, uint32_t width);
/* Every table of two views' results, matched by name (after's order, then
 * those only before has); JSON: objects of an array already open in j. */
bool rec_viewdiff_print_all(rec_json *j, const rec_view_table *before, size_t before_count,
			    const rec_view_table *after, size_t after_count, uint32_t top,
			    uint32_t width);

#endif /* REC_TOOLS_VIEWDIFF_H */
