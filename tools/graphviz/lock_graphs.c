/* SPDX-License-Identifier: MIT */
/*
 * lock_graphs.c - the lock graphs built with libcgraph and rendered with
 * libgvc (lock_graphs.h): node and edge labels, widths and colours, the
 * machine-readable attributes (kind, counts, totals in ns) that tests read
 * back, the layout and the rendering.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <graphviz/gvc.h>

#include "../common/cli.h"
#include "lock_graphs.h"

/* ---- cgraph helpers (G4: the headers take char *; values are copied) --------------- */

static char *cs(const char *s) { return (char *)(uintptr_t)s; }

typedef struct gctx {
	Agraph_t *g;
	bool failed;
	const char *what;
} gctx;

static void declare(gctx *c, int kind, const char *name, const char *def)
{
	if (!c->failed && !agattr(c->g, kind, cs(name), cs(def))) {
		c->failed = true;
		c->what = "agattr";
	}
}

static void set(gctx *c, void *obj, const char *name, const char *value)
{
	if (!c->failed && agsafeset(obj, cs(name), cs(value), cs("")) != 0) {
		c->failed = true;
		c->what = "agsafeset";
	}
}

static Agnode_t *node(gctx *c, const char *name)
{
	if (c->failed)
		return NULL;
	Agnode_t *n = agnode(c->g, cs(name), 1);
	if (!n) {
		c->failed = true;
		c->what = "agnode";
	}
	return n;
}

/* Strict graph: agedge returns the existing edge for the same pair (G3). */
static Agedge_t *edge(gctx *c, Agnode_t *t, Agnode_t *h)
{
	if (c->failed || !t || !h)
		return NULL;
	Agedge_t *e = agedge(c->g, t, h, NULL, 1);
	if (!e) {
		c->failed = true;
		c->what = "agedge";
	}
	return e;
}

/* Text inside a Graphviz escString: a backslash would start an escape. */
static void sb_esc(rec_cli_strbuf *b, const char *s)
{
	for (const char *p = s; *p; p++) {
		if (*p == '\\')
			rec_cli_strbuf_add(b, "\\\\", 2);
		else if (*p == '\n')
			rec_cli_strbuf_add(b, "\\n", 2);
		else
			rec_cli_strbuf_add(b, p, 1);
	}
}

static const char *dur(char *buf, int64_t ns)
{
	rec_fmt_duration(buf, ns);
	return buf;
}

static const char *num(char *buf, int64_t v)
{
	buf[rec_fmt_i64(buf, v)] = 0;
	return buf;
}

/* 1 .. 1 + scale, by total / max. */
static void penwidth(char *buf, int64_t total, int64_t max, double scale)
{
	double w = max > 0 ? 1.0 + scale * (double)total / (double)max : 1.0;
	snprintf(buf, 32, "%.2f", w);
}

/* ---- the two graphs ------------------------------------------------------------------ */

static void build_wait(gctx *c, const rec_lockgraph_result *res)
{
	Agraph_t *g = c->g;
	declare(c, AGRAPH, "rankdir", "LR");
	declare(c, AGRAPH, "label", "");
	declare(c, AGNODE, "shape", "ellipse");
	declare(c, AGNODE, "label", "\\N");
	declare(c, AGNODE, "style", "");
	declare(c, AGNODE, "fillcolor", "");
	declare(c, AGNODE, "penwidth", "1");
	declare(c, AGNODE, "kind", "");
	declare(c, AGNODE, "wait_count", "0");
	declare(c, AGNODE, "wait_total_ns", "0");
	declare(c, AGNODE, "wait_max_ns", "0");
	declare(c, AGNODE, "held_total_ns", "0");
	declare(c, AGNODE, "grouped", "0");
	declare(c, AGEDGE, "label", "");
	declare(c, AGEDGE, "penwidth", "1");
	declare(c, AGEDGE, "style", "");
	declare(c, AGEDGE, "kind", "");
	declare(c, AGEDGE, "count", "0");
	declare(c, AGEDGE, "total_ns", "0");
	declare(c, AGEDGE, "max_ns", "0");
	char b1[64], b2[64], b3[64], pw[32];
	rec_cli_strbuf s = { 0 };
	/* what is drawn: the real locks with waits, and what the groups stand for */
	size_t drawn = 0;
	uint64_t locks_grouped = 0, groups = 0;
	for (size_t i = 0; i < res->lock_count; i++) {
		drawn += !res->locks[i].grouped && res->locks[i].wait_count;
		locks_grouped += res->locks[i].grouped;
		groups += res->locks[i].grouped > 0;
	}
	for (size_t i = 0; i < res->thread_count; i++)
		groups += res->threads[i].grouped > 0;
	if (drawn < res->wait_lock_count || groups || res->threads_grouped) {
		double pct = res->wait_total_ns > 0 ? 100.0 * (double)res->kept_wait_total_ns /
							      (double)res->wait_total_ns : 100.0;
		rec_cli_strbuf_printf(&s, "wait-for graph: %zu of %" PRIu64 " locks (%.1f %% of %s of waiting), %" PRIu64
			  " lock waits; %" PRIu64 " lock%s, %" PRIu64 " thread%s grouped", drawn,
			  res->wait_lock_count, pct, dur(b1, res->wait_total_ns), res->lock_wait_events,
			  locks_grouped, locks_grouped == 1 ? "" : "s", res->threads_grouped,
			  res->threads_grouped == 1 ? "" : "s");
	} else {
		rec_cli_strbuf_printf(&s, "wait-for graph: %" PRIu64 " lock waits", res->lock_wait_events);
	}
	rec_cli_strbuf_str(&s, "\\nholders charged by hand-off: each part of a wait to the thread that held the "
	       "lock during it");
	set(c, g, "label", s.s);

	int64_t max_lock = 0, max_edge = 0;
	for (size_t i = 0; i < res->lock_count; i++)
		if (res->locks[i].wait_total_ns > max_lock)
			max_lock = res->locks[i].wait_total_ns;
	for (size_t i = 0; i < res->wait_edge_count; i++)
		if (res->wait_edges[i].total_ns > max_edge)
			max_edge = res->wait_edges[i].total_ns;

	Agnode_t **ln = rec_cli_xmalloc((res->lock_count + 1) * sizeof(Agnode_t *));
	Agnode_t **tn = rec_cli_xmalloc((res->thread_count + 1) * sizeof(Agnode_t *));
	for (size_t i = 0; i < res->lock_count; i++) {
		const rec_lockgraph_lock *l = &res->locks[i];
		ln[i] = NULL;
		if (!l->wait_count)
			continue; /* only in the lock-order graph */
		ln[i] = node(c, l->label);
		rec_cli_strbuf_reset(&s);
		sb_esc(&s, l->label);
		rec_cli_strbuf_printf(&s, "\\n%" PRIu64 " wait%s, total %s\\nmax %s", l->wait_count,
			  l->wait_count == 1 ? "" : "s", dur(b1, l->wait_total_ns), dur(b2, l->wait_max_ns));
		set(c, ln[i], "label", s.s);
		set(c, ln[i], "kind", l->grouped ? "group" : "lock");
		if (l->grouped)
			set(c, ln[i], "grouped", num(b3, (int64_t)l->grouped));
		set(c, ln[i], "shape", "ellipse");
		set(c, ln[i], "style", "filled");
		set(c, ln[i], "fillcolor", l->wait_total_ns == max_lock ? "#f4a582" : "#fddbc7");
		penwidth(pw, l->wait_total_ns, max_lock, 3.0);
		set(c, ln[i], "penwidth", pw);
		set(c, ln[i], "wait_count", num(b3, (int64_t)l->wait_count));
		set(c, ln[i], "wait_total_ns", num(b3, l->wait_total_ns));
		set(c, ln[i], "wait_max_ns", num(b3, l->wait_max_ns));
	}
	for (size_t i = 0; i < res->thread_count; i++) {
		const rec_lockgraph_thread *t = &res->threads[i];
		tn[i] = node(c, t->label);
		rec_cli_strbuf_reset(&s);
		sb_esc(&s, t->label);
		if (t->wait_total_ns)
			rec_cli_strbuf_printf(&s, "\\nwaited %s", dur(b1, t->wait_total_ns));
		if (t->held_total_ns)
			rec_cli_strbuf_printf(&s, "\\nmade others wait %s", dur(b1, t->held_total_ns));
		set(c, tn[i], "label", s.s);
		set(c, tn[i], "kind", t->grouped ? "group" : "thread");
		set(c, tn[i], "shape", "box");
		set(c, tn[i], "style", t->grouped ? "rounded,dashed" : "rounded");
		if (t->grouped)
			set(c, tn[i], "grouped", num(b3, (int64_t)t->grouped));
		set(c, tn[i], "wait_count", num(b3, (int64_t)t->wait_count));
		set(c, tn[i], "wait_total_ns", num(b3, t->wait_total_ns));
		set(c, tn[i], "held_total_ns", num(b3, t->held_total_ns));
	}
	for (size_t i = 0; i < res->wait_edge_count; i++) {
		const rec_lockgraph_wait_edge *w = &res->wait_edges[i];
		if (!ln[w->lock])
			continue;
		Agedge_t *e = w->holder ? edge(c, ln[w->lock], tn[w->thread])
					: edge(c, tn[w->thread], ln[w->lock]);
		if (!e)
			continue;
		rec_cli_strbuf_reset(&s);
		if (w->holder)
			rec_cli_strbuf_printf(&s, "held during %" PRIu64 " part%s of waits\\ntotal %s, max %s", w->count,
				  w->count == 1 ? "" : "s", dur(b1, w->total_ns), dur(b2, w->max_ns));
		else
			rec_cli_strbuf_printf(&s, "%" PRIu64 " wait%s\\ntotal %s, max %s", w->count,
				  w->count == 1 ? "" : "s", dur(b1, w->total_ns), dur(b2, w->max_ns));
		set(c, e, "label", s.s);
		set(c, e, "kind", w->holder ? "holder" : "wait");
		if (w->holder)
			set(c, e, "style", "dashed");
		penwidth(pw, w->total_ns, max_edge, 7.0);
		set(c, e, "penwidth", pw);
		set(c, e, "count", num(b3, (int64_t)w->count));
		set(c, e, "total_ns", num(b3, w->total_ns));
		set(c, e, "max_ns", num(b3, w->max_ns));
	}
	free(ln);
	free(tn);
	free(s.s);
}

static void build_order(gctx *c, const rec_lockgraph_result *res)
{
	Agraph_t *g = c->g;
	declare(c, AGRAPH, "label", "");
	declare(c, AGNODE, "shape", "ellipse");
	declare(c, AGNODE, "color", "black");
	declare(c, AGNODE, "fontcolor", "black");
	declare(c, AGNODE, "kind", "");
	declare(c, AGEDGE, "label", "");
	declare(c, AGEDGE, "color", "black");
	declare(c, AGEDGE, "fontcolor", "black");
	declare(c, AGEDGE, "penwidth", "1");
	declare(c, AGEDGE, "tooltip", "");
	declare(c, AGEDGE, "kind", "");
	declare(c, AGEDGE, "count", "0");
	declare(c, AGEDGE, "threads", "");
	declare(c, AGEDGE, "cycle", "false");
	char b3[64];
	rec_cli_strbuf s = { 0 };
	rec_cli_strbuf_printf(&s, "lock-order graph: %" PRIu64 " nested acquisitions, %zu cycle%s%s",
		  res->lock_order_events, res->cycle_count, res->cycle_count == 1 ? "" : "s",
		  res->cycle_count ? " (red: potential deadlock)" : "");
	set(c, g, "label", s.s);
	bool *used = rec_cli_xmalloc((res->lock_count + 1) * sizeof *used);
	bool *red = rec_cli_xmalloc((res->lock_count + 1) * sizeof *red);
	memset(used, 0, (res->lock_count + 1) * sizeof *used);
	memset(red, 0, (res->lock_count + 1) * sizeof *red);
	for (size_t i = 0; i < res->order_edge_count; i++) {
		const rec_lockgraph_order_edge *o = &res->order_edges[i];
		used[o->from] = used[o->to] = true;
		if (o->in_cycle)
			red[o->from] = red[o->to] = true;
	}
	Agnode_t **ln = rec_cli_xmalloc((res->lock_count + 1) * sizeof(Agnode_t *));
	for (size_t i = 0; i < res->lock_count; i++) {
		ln[i] = NULL;
		if (!used[i])
			continue;
		ln[i] = node(c, res->locks[i].label);
		set(c, ln[i], "kind", "lock");
		if (red[i]) {
			set(c, ln[i], "color", "red");
			set(c, ln[i], "fontcolor", "red");
		}
	}
	for (size_t i = 0; i < res->order_edge_count; i++) {
		const rec_lockgraph_order_edge *o = &res->order_edges[i];
		Agedge_t *e = edge(c, ln[o->from], ln[o->to]);
		if (!e)
			continue;
		rec_cli_strbuf_reset(&s);
		rec_cli_strbuf_printf(&s, "%" PRIu64 "x", o->count);
		rec_cli_strbuf th = { 0 };
		for (size_t k = 0; k < o->example_count; k++) {
			const rec_lockgraph_thread *t = &res->threads[o->examples[k].thread];
			if (k)
				rec_cli_strbuf_str(&th, ", ");
			rec_cli_strbuf_str(&th, *t->name ? t->name : t->label);
		}
		if (th.s) {
			rec_cli_strbuf_str(&s, " by ");
			sb_esc(&s, th.s);
		}
		set(c, e, "label", s.s);
		set(c, e, "kind", "order");
		set(c, e, "count", num(b3, (int64_t)o->count));
		set(c, e, "threads", th.s ? th.s : "");
		free(th.s);
		if (o->example_count && o->examples[0].depth) {
			const rec_lockgraph_example *x = &o->examples[0];
			rec_cli_strbuf_reset(&s);
			for (uint32_t f = 0; f < x->depth && f < 32; f++) {
				sb_esc(&s, x->frames[f]);
				rec_cli_strbuf_str(&s, "\\n");
			}
			set(c, e, "tooltip", s.s);
		}
		if (o->in_cycle) {
			set(c, e, "color", "red");
			set(c, e, "fontcolor", "red");
			set(c, e, "penwidth", "2.5");
			set(c, e, "cycle", "true");
		}
	}
	free(used);
	free(red);
	free(ln);
	free(s.s);
}

/* The cycles on stderr, with the threads and the stacks of each edge. */
Agraph_t *rec_lockgraph_gv_build(const rec_lockgraph_result *res, bool order)
{
	gctx gc = { 0 };
	gc.g = agopen(cs(order ? "lock_order" : "wait_for"), Agstrictdirected, NULL);
	if (!gc.g) {
		rec_cli_error("agopen failed");
		return NULL;
	}
	if (order)
		build_order(&gc, res);
	else
		build_wait(&gc, res);
	if (gc.failed) {
		rec_cli_error("building the graph failed (%s)", gc.what);
		agclose(gc.g);
		return NULL;
	}
	return gc.g;
}

/* Write the graph as DOT or render it with the dot layout; false on failure
 * (reported). */
bool rec_lockgraph_gv_write(Agraph_t *g, const char *format, FILE *out)
{
	bool ok = true;
	if (strcmp(format, "dot") == 0) {
		if (agwrite(g, out) != 0) {
			if (!ferror(out)) /* a failed write is reported once, naming the output */
				rec_cli_error("agwrite failed");
			ok = false;
		}
		return ok;
	}
	GVC_t *gvc = gvContext();
	if (!gvc) {
		rec_cli_error("gvContext failed");
		return false;
	}
	if (gvLayout(gvc, g, "dot") != 0) {
		rec_cli_error("graphviz: dot layout failed");
		ok = false;
	} else {
		if (gvRender(gvc, g, format, out) != 0) {
			rec_cli_error("graphviz: rendering %s failed (is its plugin installed?)", format);
			ok = false;
		}
		if (gvFreeLayout(gvc, g) != 0)
			ok = false;
	}
	if (gvFreeContext(gvc) != 0)
		ok = false;
	return ok;
}

char *rec_lockgraph_gv_svg(Agraph_t *g, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f) {
		rec_cli_error("open_memstream: out of memory");
		return NULL;
	}
	bool ok = rec_lockgraph_gv_write(g, "svg", f);
	if (fclose(f) != 0 || !ok) {
		free(buf);
		return NULL;
	}
	if (len)
		*len = n;
	return buf;
}
