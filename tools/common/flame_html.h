/* SPDX-License-Identifier: MIT */
/*
 * flame_html.h - interactive flame graphs in HTML, as rec-flame -o x.html
 * writes them and as other pages embed them (several graphs, one script):
 *
 *   rec_flame_html_page_begin(title)      doctype, <head> with the style
 *   rec_flame_html_graph(agg, &graph)     one graph (any number of them)
 *   rec_flame_html_page_end()             the script, </body></html>
 *
 * or, in a page of one's own: rec_flame_html_style() once in <head>,
 * rec_flame_html_graph() per graph, rec_flame_html_script() once after the
 * last graph.  Everything goes through cli.h's output buffer (rec_out_*).
 *
 * A graph is a <section class="rec-flame" id=ID> holding its bar (title,
 * info line, search box, Clear and Reset zoom buttons, matched share), a
 * legend, the chart (one <canvas>) and its data: one JSON object in a
 * <script type="application/json" class="rec-flame-data"> element, with
 * '<', '>' and '&' written as \u00XX so that no "</script>" appears in it:
 *   {"title", "event", "unit": samples|events|bytes|ns|count, "reverse",
 *    "diff", "total" (weight of the graph), "totalBefore" (diff: of BEFORE),
 *    "tree": [name, self, selfBefore, child...] nested, root first,
 *    "names": [frame names; 0 is the root "all"]}
 * The script draws each graph on its canvas (flame: root at the bottom;
 * reverse: icicle, root on top): only what is visible at the current zoom,
 * one rectangle per frame at least a pixel wide; a run of narrower sibling
 * frames is one grey rectangle ("N frames under F") and their callees are
 * not drawn, so the work of a search or a zoom is bounded by the chart's
 * width times its depth, not by the profile's size.  A click zooms (the
 * ancestors stay full width, faded), the button or Escape resets, the search
 * takes a regular expression (a substring when it does not compile),
 * highlights matches and shows the matched share of the whole graph (a match
 * inside a match counted once); a tooltip per frame (hit-testing by row and
 * x).  A graph drawn while hidden is drawn again when its chart gets a width.
 * window.recFlames[ID] (and window.recFlame, the first graph) expose root,
 * data, search(), zoomTo(), render(), tipText(), at(x, y), frames() (what is
 * drawn, in CSS pixels of the chart) and stats() (ms of the last search or
 * render, rectangles drawn, merged runs) for tests and for the page around.
 */
#ifndef REC_TOOLS_FLAME_HTML_H
#define REC_TOOLS_FLAME_HTML_H

#include <stdbool.h>
#include <stdint.h>

#include "rec/stack_agg.h"

typedef struct rec_flame_graph {
	const char *id;      /* element id, unique in the page: letters, digits, '-', '_' */
	const char *title;   /* the graph's heading (written escaped) */
	const char *event;   /* the event type the stacks are of (the info line) */
	const char *unit;    /* how weights print: samples, events, bytes, ns or count */
	bool reverse;        /* aggregated with REC_STACKAGG_REVERSE: an icicle graph */
	bool diff;           /* differential: column 1 is the graph, column 0 before */
	uint64_t min_weight; /* stacks whose total is below this are left out */
} rec_flame_graph;

/* The <style> element of the graphs (once per page, in <head>). */
void rec_flame_html_style(void);
/* The <script> element that draws every graph of the page (once, after the
 * last graph). */
void rec_flame_html_script(void);
/* One graph from agg's stacks, iterated from where agg is (rewound by the
 * caller) to its end.  Returns REC_EXIT_OK, or REC_EXIT_DATA when the
 * iteration failed (rec_stackagg_errmsg says why; the page is still
 * well-formed). */
int rec_flame_html_graph(rec_stackagg *agg, const rec_flame_graph *g);
/* A page of its own: doctype, <head> with TITLE and the style, <body>. */
void rec_flame_html_page_begin(const char *title);
/* The script, then </body></html>. */
void rec_flame_html_page_end(void);

/* Text written escaped for HTML (element content or attribute values). */
void rec_out_html_text(const char *s);
/* A JSON string safe inside a <script> element: '<', '>' and '&' as \u00XX
 * too, so no "</script>" or "<!--" can appear in it. */
void rec_out_js_string(const char *s);

#endif /* REC_TOOLS_FLAME_HTML_H */
