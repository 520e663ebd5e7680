/* SPDX-License-Identifier: MIT */
/*
 * rec-lockgraph - the wait-for graph or the lock-order graph of a recording
 * (rec.LockWait, rec.LockOrder; analysis in libfmt/analysis/lock_graph.c), built
 * with Graphviz's libcgraph and written as DOT (agwrite) or rendered with
 * libgvc (dot layout) to SVG, PNG or PDF.  Lock-order cycles (potential
 * deadlocks) are coloured red and listed on stderr with the threads and
 * stacks involved.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include "common/cli.h"
#include "common/tools.h"
#include "rec/lock_graph.h"
#include "rec/rec.h"

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

/* A growing string for labels. */
typedef struct sbuf {
	char *p;
	size_t n, cap;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t nc = b->cap ? b->cap : 256;
		while (b->n + n + 1 > nc)
			nc *= 2;
		b->p = rec_cli_xrealloc(b->p, nc);
		b->cap = nc;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void sb_str(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

static void sb_printf(sbuf *b, const char *fmt, ...) REC_CLI_PRINTF(2, 3);
static void sb_printf(sbuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof tmp)
		n = (int)sizeof tmp - 1;
	sb_add(b, tmp, (size_t)n);
}

/* Text inside a Graphviz escString: a backslash would start an escape. */
static void sb_esc(sbuf *b, const char *s)
{
	for (const char *p = s; *p; p++) {
		if (*p == '\\')
			sb_add(b, "\\\\", 2);
		else if (*p == '\n')
			sb_add(b, "\\n", 2);
		else
			sb_add(b, p, 1);
	}
}

static void sb_reset(sbuf *b)
{
	b->n = 0;
	if (b->p)
		b->p[0] = 0;
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
	declare(c, AGEDGE, "label", "");
	declare(c, AGEDGE, "penwidth", "1");
	declare(c, AGEDGE, "style", "");
	declare(c, AGEDGE, "kind", "");
	declare(c, AGEDGE, "count", "0");
	declare(c, AGEDGE, "total_ns", "0");
	declare(c, AGEDGE, "max_ns", "0");
	char b1[64], b2[64], b3[64], pw[32];
	sbuf s = { 0 };
	sb_printf(&s, "wait-for graph: %" PRIu64 " lock waits\\nholders charged by hand-off: each part "
		  "of a wait to the thread that held the lock during it", res->lock_wait_events);
	set(c, g, "label", s.p);

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
		sb_reset(&s);
		sb_esc(&s, l->label);
		sb_printf(&s, "\\n%" PRIu64 " wait%s, total %s\\nmax %s", l->wait_count,
			  l->wait_count == 1 ? "" : "s", dur(b1, l->wait_total_ns), dur(b2, l->wait_max_ns));
		set(c, ln[i], "label", s.p);
		set(c, ln[i], "kind", "lock");
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
		sb_reset(&s);
		sb_esc(&s, t->label);
		if (t->wait_total_ns)
			sb_printf(&s, "\\nwaited %s", dur(b1, t->wait_total_ns));
		if (t->held_total_ns)
			sb_printf(&s, "\\nmade others wait %s", dur(b1, t->held_total_ns));
		set(c, tn[i], "label", s.p);
		set(c, tn[i], "kind", "thread");
		set(c, tn[i], "shape", "box");
		set(c, tn[i], "style", "rounded");
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
		sb_reset(&s);
		if (w->holder)
			sb_printf(&s, "held during %" PRIu64 " part%s of waits\\ntotal %s, max %s", w->count,
				  w->count == 1 ? "" : "s", dur(b1, w->total_ns), dur(b2, w->max_ns));
		else
			sb_printf(&s, "%" PRIu64 " wait%s\\ntotal %s, max %s", w->count,
				  w->count == 1 ? "" : "s", dur(b1, w->total_ns), dur(b2, w->max_ns));
		set(c, e, "label", s.p);
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
	free(s.p);
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
	sbuf s = { 0 };
	sb_printf(&s, "lock-order graph: %" PRIu64 " nested acquisitions, %zu cycle%s%s",
		  res->lock_order_events, res->cycle_count, res->cycle_count == 1 ? "" : "s",
		  res->cycle_count ? " (red: potential deadlock)" : "");
	set(c, g, "label", s.p);
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
		sb_reset(&s);
		sb_printf(&s, "%" PRIu64 "x", o->count);
		sbuf th = { 0 };
		for (size_t k = 0; k < o->example_count; k++) {
			const rec_lockgraph_thread *t = &res->threads[o->examples[k].thread];
			if (k)
				sb_str(&th, ", ");
			sb_str(&th, *t->name ? t->name : t->label);
		}
		if (th.p) {
			sb_str(&s, " by ");
			sb_esc(&s, th.p);
		}
		set(c, e, "label", s.p);
		set(c, e, "kind", "order");
		set(c, e, "count", num(b3, (int64_t)o->count));
		set(c, e, "threads", th.p ? th.p : "");
		free(th.p);
		if (o->example_count && o->examples[0].depth) {
			const rec_lockgraph_example *x = &o->examples[0];
			sb_reset(&s);
			for (uint32_t f = 0; f < x->depth && f < 32; f++) {
				sb_esc(&s, x->frames[f]);
				sb_str(&s, "\\n");
			}
			set(c, e, "tooltip", s.p);
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
	free(s.p);
}

/* The cycles on stderr, with the threads and the stacks of each edge. */
static void report_cycles(const char *file, const rec_lockgraph_result *res)
{
	FILE *err = rec_cli_err();
	for (size_t k = 0; k < res->cycle_count; k++) {
		const rec_lockgraph_cycle *cy = &res->cycles[k];
		fprintf(err, "%s: %s: lock-order cycle %zu (potential deadlock): ", rec_cli_tool(), file,
			k + 1);
		for (size_t i = 0; i < cy->length; i++)
			fprintf(err, "%s -> ", res->locks[cy->locks[i]].label);
		fprintf(err, "%s\n", res->locks[cy->locks[0]].label);
		for (size_t i = 0; i < cy->length; i++) {
			const rec_lockgraph_order_edge *o = &res->order_edges[cy->edges[i]];
			fprintf(err, "  %s -> %s (acquired while holding), %" PRIu64 " time%s:\n",
				res->locks[o->from].label, res->locks[o->to].label, o->count,
				o->count == 1 ? "" : "s");
			for (size_t x = 0; x < o->example_count; x++) {
				const rec_lockgraph_example *ex = &o->examples[x];
				fprintf(err, "    by thread %s\n", res->threads[ex->thread].label);
				for (uint32_t f = 0; f < ex->depth && f < 12; f++)
					fprintf(err, "      at %s\n", ex->frames[f]);
				if (ex->depth > 12)
					fprintf(err, "      ...\n");
			}
		}
	}
	if (res->cycles_truncated)
		fprintf(err, "%s: %s: more cycles not listed\n", rec_cli_tool(), file);
}

/* ---- the run ------------------------------------------------------------------------- */

typedef struct read_ctx {
	rec_lockgraph *lg;
	const char *name;
} read_ctx;

static int add_one(void *ctx, const rec_event *ev)
{
	const read_ctx *c = ctx;
	if (rec_lockgraph_add_event(c->lg, ev) != REC_OK) {
		rec_cli_file_error(c->name, "%s", rec_lockgraph_errmsg(c->lg));
		return REC_EXIT_DATA;
	}
	return REC_EXIT_OK;
}

/* Write the graph as DOT or render it with the dot layout; false on failure
 * (reported). */
static bool write_graph(Agraph_t *g, const char *format, FILE *out)
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

int rec_lockgraph_tool_run(const rec_lockgraph_tool_opts *o, const rec_cli_input *in, FILE *out,
			   FILE *err)
{
	if (!out)
		out = stdout;
	rec_cli_set_streams(out, err);
	rec_lockgraph_options lo = REC_LOCKGRAPH_OPTIONS_INIT;
	lo.min_wait_ns = o->min_wait_ns;
	lo.top = o->top;
	lo.thread = o->thread;
	lo.graphs = o->order ? REC_LOCKGRAPH_ORDER : REC_LOCKGRAPH_WAIT;
	/* Offsets count from the recording's first event (empty chunks do not
	 * count), as rec-flame's offsets and rec-timeline's ts 0. */
	int64_t wlo, whi;
	rec_cli_window_bounds(&o->window, in, &wlo, &whi);
	if (wlo != INT64_MIN)
		lo.from_wall_ns = wlo;
	if (whi != INT64_MAX)
		lo.to_wall_ns = whi;

	rec_reader *r = rec_cli_input_open(in, 0);
	if (!r)
		return REC_EXIT_DATA;
	rec_lockgraph *lg = NULL;
	rec_status st = rec_lockgraph_open(&lg, &lo);
	if (st != REC_OK) {
		rec_cli_error("%s", rec_strerror(st));
		rec_reader_close(r);
		return REC_EXIT_DATA;
	}
	read_ctx ctx = { lg, in->name };
	int rc = rec_cli_each_event(r, in->name, add_one, &ctx);
	rec_reader_close(r);

	const rec_lockgraph_result *res = NULL;
	st = rec_lockgraph_get(lg, &res);
	if (st != REC_OK) {
		rec_cli_error("%s", rec_lockgraph_errmsg(lg));
		rec_lockgraph_close(lg);
		return REC_EXIT_DATA;
	}
	bool filtered = o->thread || o->window.from_kind || o->window.to_kind;
	if (o->order && res->cycle_count)
		report_cycles(in->name, res);
	if (!o->order && !res->lock_wait_events)
		rec_cli_file_error(in->name, "no rec.LockWait events%s (the graph is empty)",
				   (o->min_wait_ns || filtered) ? " match the filters" : "");
	if (o->order && !res->lock_order_events)
		rec_cli_file_error(in->name, "no rec.LockOrder events%s (the graph is empty)",
				   filtered ? " match the filters" : "");

	gctx gc = { 0 };
	gc.g = agopen(cs(o->order ? "lock_order" : "wait_for"), Agstrictdirected, NULL);
	if (!gc.g) {
		rec_cli_error("agopen failed");
		rec_lockgraph_close(lg);
		return REC_EXIT_DATA;
	}
	if (o->order)
		build_order(&gc, res);
	else
		build_wait(&gc, res);
	bool has_cycle = res->cycle_count > 0;
	rec_lockgraph_close(lg);
	if (gc.failed) {
		rec_cli_error("building the graph failed (%s)", gc.what);
		agclose(gc.g);
		return REC_EXIT_DATA;
	}

	/* DOT to standard output through a FILE that keeps the errno of the
	 * first failed write (rec_cli_finish reports it); png, pdf and svg
	 * are rendered by Graphviz straight into out. */
	rec_out_flush();
	FILE *f = out;
	if (o->output)
		f = rec_cli_export_open(o->output, out);
	else if (strcmp(o->format, "dot") == 0)
		f = rec_cli_export_stdout(out);
	if (!f) {
		agclose(gc.g);
		return REC_EXIT_DATA;
	}
	bool ok = write_graph(gc.g, o->format, f);
	agclose(gc.g);
	if (!rec_cli_export_close(f, o->output, out))
		ok = false;
	if (!ok)
		rc = REC_EXIT_DATA;
	if (rc == REC_EXIT_OK && o->check && has_cycle)
		rc = REC_EXIT_CYCLE;
	return rc;
}

/* ---- main: the arguments ---------------------------------------------------------------- */
#ifndef REC_TOOL_NO_MAIN

static const char usage_text[] =
	"Usage: rec-lockgraph [OPTIONS] FILE\n"
	"Draw the locks of a rec recording with Graphviz.  FILE may be '-' for\n"
	"standard input.\n"
	"\n"
	"  --graph wait    (default) the wait-for graph, from rec.LockWait: threads\n"
	"                  (boxes) and locks (ellipses); thread -> lock: it waited,\n"
	"                  labelled with count, total and max wait; lock -> thread\n"
	"                  (dashed): the holders that made them wait.  A wait is\n"
	"                  split at the hand-offs inside it (another thread's wait\n"
	"                  for the lock ending: it holds the lock from then on);\n"
	"                  each part is charged to the thread that held the lock\n"
	"                  during it.  A thread that took the lock without a\n"
	"                  recorded wait is not seen: its hold is charged to the\n"
	"                  holder before it.  Edge width follows the total wait.\n"
	"  --graph order   the lock-order graph, from rec.LockOrder: an edge A -> B\n"
	"                  when a thread acquired B while holding A (count, threads;\n"
	"                  the first stack in the edge's tooltip).  Every cycle is a\n"
	"                  potential deadlock: coloured red and listed on stderr with\n"
	"                  the threads and stacks involved.\n"
	"\n"
	"Options:\n"
	"  --graph wait|order  which graph (default wait)\n"
	"  --format FMT        dot (default: DOT text), svg, png or pdf (rendered with\n"
	"                      the dot layout); default from the --output name's\n"
	"                      extension (.dot .gv .svg .png .pdf), else dot\n"
	"  -o, --output FILE   write there instead of standard output\n"
	"  --min-wait DUR      ignore lock waits shorter than DUR\n"
	"  --top N             only the N heaviest locks (most total wait, then most\n"
	"                      events)\n"
	"  --from T, --to T    only events that start in [from, to): T is an offset\n"
	"                      from the recording's first event (1.5s, 250ms; needs a\n"
	"                      FILE, not '-') or a time 2026-12-02T10:14:03.5 (local\n"
	"                      time; add Z or +HH:MM for another zone)\n"
	"  --thread NAME       only events of threads named NAME (a glob) or with OS\n"
	"                      tid NAME\n"
	"  --check             exit 3 when the lock-order graph has a cycle\n"
	"  -h, --help          show this help and exit\n"
	"  --version           show the library version and exit\n"
	"\n"
	"DUR and T: a number (a fraction allowed) with a unit ns, us, ms, s, m or\n"
	"min, h (e.g. 10ms, 1.5s, 1h); a bare number is seconds; any other unit is a\n"
	"usage error.  Lock names are the program's (REC_MUTEX_INITIALIZER), else the\n"
	"address and the first frame that took the lock.\n"
	"-o/--output FILE that cannot be written (a missing directory, a full disk):\n"
	"\"rec-lockgraph: FILE: REASON\" on stderr, exit 1 (png and pdf are written\n"
	"by Graphviz, whose own message on a failed write does not name FILE).\n"
	"Exit status: 0 success, also when cycles are found (a potential deadlock is\n"
	"a finding, reported on stderr, not a failure of the tool; --check makes it\n"
	"3), 1 damaged or unreadable input (after writing the graph of what was\n"
	"readable) or a failed render/write, 2 usage error.\n";

enum { OPT_GRAPH = 256, OPT_FORMAT, OPT_MIN_WAIT, OPT_TOP, OPT_FROM, OPT_TO,
       OPT_THREAD, OPT_CHECK, OPT_VERSION };

static const struct option long_opts[] = {
	{ "graph", required_argument, NULL, OPT_GRAPH },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "output", required_argument, NULL, 'o' },
	{ "min-wait", required_argument, NULL, OPT_MIN_WAIT },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "thread", required_argument, NULL, OPT_THREAD },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static int64_t opt_duration(const char *option, const char *s)
{
	int64_t v;
	if (!rec_cli_parse_duration(s, &v))
		rec_cli_usage_error("%s: '%s' is not a duration (e.g. 10ms, 1.5s)%s", option, s,
				    option[2] == 'f' || option[2] == 't'
					    ? " nor a time (2026-12-02T10:14:03[.frac][Z|+HH:MM])" : "");
	return v;
}

static const char *format_from_name(const char *name)
{
	const char *dot = strrchr(name, '.');
	if (!dot)
		return NULL;
	static const char *const known[] = { "dot", "gv", "svg", "png", "pdf" };
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strcmp(dot + 1, known[i]) == 0)
			return strcmp(known[i], "gv") == 0 ? "dot" : known[i];
	return NULL;
}

int main(int argc, char **argv)
{
	rec_cli_init("rec-lockgraph");
	rec_lockgraph_tool_opts o = { 0 };
	int c;
	while ((c = rec_cli_getopt(argc, argv, "ho:", long_opts)) != -1) {
		switch (c) {
		case OPT_GRAPH:
			if (strcmp(optarg, "wait") && strcmp(optarg, "order"))
				rec_cli_usage_error("--graph: '%s' is not wait or order", optarg);
			o.order = strcmp(optarg, "order") == 0;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "dot") && strcmp(optarg, "svg") && strcmp(optarg, "png") &&
			    strcmp(optarg, "pdf"))
				rec_cli_usage_error("--format: '%s' is not dot, svg, png or pdf", optarg);
			o.format = optarg;
			break;
		case 'o':
			if (!*optarg)
				rec_cli_usage_error("--output: empty file name");
			o.output = optarg;
			break;
		case OPT_MIN_WAIT: o.min_wait_ns = opt_duration("--min-wait", optarg); break;
		case OPT_TOP: o.top = (uint32_t)rec_cli_opt_u64("--top", optarg, 1, UINT32_MAX); break;
		case OPT_FROM:
			rec_cli_window_opt(&o.window, false, optarg);
			break;
		case OPT_TO:
			rec_cli_window_opt(&o.window, true, optarg);
			break;
		case OPT_THREAD:
			if (!*optarg)
				rec_cli_usage_error("--thread: empty name");
			o.thread = optarg;
			break;
		case OPT_CHECK: o.check = true; break;
		case 'h': rec_cli_help(usage_text);
		case OPT_VERSION: rec_cli_version();
		default: rec_cli_usage_error("unexpected option");
		}
	}
	rec_cli_input in = { .name = rec_cli_one_file(argc, argv) };
	if (!o.format)
		o.format = (o.output && format_from_name(o.output)) ? format_from_name(o.output) : "dot";
	rec_cli_window_check(&o.window, rec_cli_input_rereadable(&in));
	return rec_cli_finish(rec_lockgraph_tool_run(&o, &in, NULL, NULL));
}
#endif /* REC_TOOL_NO_MAIN */
