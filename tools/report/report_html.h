/* SPDX-License-Identifier: MIT */
/*
 * report_html.h - rec-report -o report.html: one self-contained HTML page
 * (no network fetch; it opens from a file) with, in this order,
 *
 *   the findings          (rec/findings.h, as rec-report prints them)
 *   latency histograms    per span type and --by value (the "latency" view
 *                         of rec/view.h and its rec_histogram per row)
 *   a timeline            one lane per thread: spans, lock waits (with the
 *                         holder at the wait's start), sleeps, condition
 *                         waits, I/O and CPU samples; zoom and pan on a
 *                         canvas that draws only what is visible
 *   the wait-for graph    SVG rendered by Graphviz (tools/graphviz/)
 *   flame graphs          CPU samples, allocation, lock wait; one shown at a
 *                         time (tools/common/flame_html.c's graphs)
 *
 * Every string of the recording is written escaped: as HTML text, or in the
 * page's JSON data with '<', '>' and '&' as \u00XX.  The page's state is
 * written into the DOM for tests and scripts (data-* attributes of the
 * sections, window.recReport): report_page.c says which.
 */
#ifndef REC_TOOLS_REPORT_HTML_H
#define REC_TOOLS_REPORT_HTML_H

#include <stdio.h>

#include "../common/tools.h"
#include "rec/findings.h"

/* Items (spans, waits, samples) the timeline embeds at most; the rest are
 * counted per kind and the page says what was left out. */
#define REC_REPORT_TIMELINE_MAX 200000u

/* Write the page of the inputs (read once more, in timestamp order) with
 * the findings list[count] to path (replaced; "-": out).  Returns the exit
 * code: REC_EXIT_OK, REC_EXIT_DATA for damaged input (the page shows what
 * was readable) or a failed write (reported). */
int rec_report_html_write(const rec_report_tool_opts *o, const rec_cli_input *in, size_t n,
			  const rec_finding *list, size_t count, const char *path, FILE *out);

/* The page's <style> and <script> elements (report_page.c). */
void rec_report_page_style(void);
void rec_report_page_script(void);

#endif /* REC_TOOLS_REPORT_HTML_H */
