/* SPDX-License-Identifier: MIT */
/*
 * lock_graphs.h - the wait-for graph and the lock-order graph of a
 * recording (rec/lock_graph.h's analysis) built with Graphviz's libcgraph
 * and written as DOT or rendered with libgvc (dot layout): what
 * rec-lockgraph writes and what rec-report's HTML page embeds as SVG.
 * Only the programs that link libcgraph and libgvc use this directory
 * (tools/common/ is linked into every tool).
 */
#ifndef REC_TOOLS_LOCK_GRAPHS_H
#define REC_TOOLS_LOCK_GRAPHS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <graphviz/cgraph.h>

#include "rec/lock_graph.h"

/* The wait-for graph (order false: threads and locks, waits and the
 * holders charged by hand-off) or the lock-order graph (cycles in red) of
 * res, as a strict directed graph named wait_for or lock_order; free it
 * with agclose().  NULL when building it failed (reported on stderr). */
Agraph_t *rec_lockgraph_gv_build(const rec_lockgraph_result *res, bool order);
/* Write g as DOT (format "dot") or render it with the dot layout in format
 * (svg, png, pdf) to out; false on failure (reported, except a failed
 * write of DOT: the caller's stream keeps its error). */
bool rec_lockgraph_gv_write(Agraph_t *g, const char *format, FILE *out);
/* g rendered as SVG, in a malloc'd NUL-terminated string (the caller
 * frees it); NULL on failure (reported). */
char *rec_lockgraph_gv_svg(Agraph_t *g, size_t *len);

#endif /* REC_TOOLS_LOCK_GRAPHS_H */
