/* SPDX-License-Identifier: MIT */
/*
 * report_html.c - rec-report's HTML page (report_html.h): one pass over the
 * inputs in timestamp order feeds the latency view, the wait-for graph, the
 * three flame graphs' stack aggregations and the timeline; then the page is
 * written: the findings as HTML, the latency histograms and the timeline as
 * JSON data the page's script draws, the graph as inline SVG, the flame
 * graphs as flame_html.c writes them.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cli.h"
#include "../common/flame_html.h"
#include "../common/flame_preset.h"
#include "../common/viewtab.h"
#include "../graphviz/lock_graphs.h"
#include "rec/lock_graph.h"
#include "rec/view.h"
#include "report_html.h"
#include "report_timeline.h"

/* ---- the pass over the events -------------------------------------------------- */

enum { FG_CPU, FG_ALLOC, FG_LOCK, FG_WALL, FG_GRAPHS };
static const struct {
	const char *id, *tab, *title, *event, *unit;
} flames[FG_GRAPHS] = {
	{ "flame-cpu", "CPU", "CPU samples", "rec.CPUSample", "samples" },
	{ "flame-alloc", "Allocation", "Allocated bytes", "rec.Alloc", "bytes" },
	{ "flame-lock", "Lock wait", "Lock wait time", "rec.LockWait", "ns" },
	{ "flame-wall", "Wall", "Wall time, running or waiting", "rec.WallSample", "ns" },
};

typedef struct pass {
	const char *name;
	rec_view *lat;
	rec_lockgraph *lg;
	rec_stackagg *agg[FG_GRAPHS];
	rec_report_timeline *tl;
	int64_t lo, hi;
	bool failed;
} pass;

static uint64_t u64_field(const rec_event *ev, const char *name, bool *found)
{
	for (uint32_t i = 0; i < ev->value_count && i < ev->type->field_count; i++)
		if (ev->values[i].present && strcmp(ev->type->fields[i].name, name) == 0) {
			*found = true;
			return ev->values[i].v.u;
		}
	*found = false;
	return 0;
}

/* The flame graph an event weighs in, and its weight: rec-flame's presets
 * (flame_preset.h: a CPU sample counts 1, an allocation its bytes, a lock
 * wait its duration, a wall sample its weight x period). */
static int flame_of(const rec_event *ev, uint64_t *w)
{
	const char *t = ev->type->name, *field;
	int f = -1;
	if (strcmp(t, "rec.CPUSample") == 0)
		f = FG_CPU;
	else if (strcmp(t, "rec.Alloc") == 0)
		f = FG_ALLOC;
	else if (strcmp(t, "rec.LockWait") == 0)
		f = FG_LOCK;
	else if (strcmp(t, "rec.WallSample") == 0)
		f = FG_WALL;
	else
		return -1;
	bool found;
	switch (rec_flame_preset(ev->type, &field)) {
	case REC_FLAME_PRESET_ONE: *w = 1; break;
	case REC_FLAME_PRESET_DURATION: *w = ev->duration_ns > 0 ? (uint64_t)ev->duration_ns : 0; break;
	case REC_FLAME_PRESET_FIELD: *w = u64_field(ev, field, &found); break;
	case REC_FLAME_PRESET_WALL: *w = rec_flame_wall_ns(ev); break;
	default: *w = 0; break;
	}
	return f;
}

static int add_one(void *ctx, const rec_event *ev)
{
	pass *p = ctx;
	if (!ev->type || !ev->type->name)
		return REC_EXIT_OK;
	if (rec_view_add_event(p->lat, ev) == REC_ERR_NOMEM ||
	    rec_lockgraph_add_event(p->lg, ev) == REC_ERR_NOMEM) {
		p->failed = true;
		return REC_EXIT_DATA;
	}
	if (ev->wall_ns < p->lo || ev->wall_ns >= p->hi)
		return REC_EXIT_OK;
	rec_report_timeline_add(p->tl, ev);
	uint64_t w;
	int f = flame_of(ev, &w);
	if (f >= 0 && w && rec_stackagg_add_event(p->agg[f], ev, w) == REC_ERR_NOMEM) {
		p->failed = true;
		return REC_EXIT_DATA;
	}
	return REC_EXIT_OK;
}

static bool pass_open(pass *p, const rec_report_tool_opts *o)
{
	rec_view_options vo = REC_VIEW_OPTIONS_INIT;
	vo.view = "latency";
	vo.by = o->by;
	vo.type = o->type;
	if (p->lo != INT64_MIN) {
		vo.flags |= REC_VIEW_FROM;
		vo.from_wall_ns = p->lo;
	}
	if (p->hi != INT64_MAX) {
		vo.flags |= REC_VIEW_TO;
		vo.to_wall_ns = p->hi;
	}
	rec_lockgraph_options lo = REC_LOCKGRAPH_OPTIONS_INIT;
	lo.graphs = REC_LOCKGRAPH_WAIT;
	lo.top = REC_LOCKGRAPH_DEFAULT_TOP; /* the picture rec-lockgraph draws */
	lo.group = REC_LOCKGRAPH_DEFAULT_GROUP;
	if (p->lo != INT64_MIN)
		lo.from_wall_ns = p->lo;
	if (p->hi != INT64_MAX)
		lo.to_wall_ns = p->hi;
	rec_stackagg_options ao = REC_STACKAGG_OPTIONS_INIT;
	ao.flags = REC_STACKAGG_TRIM_RECORDER;
	if (rec_view_open(&p->lat, &vo) != REC_OK || rec_lockgraph_open(&p->lg, &lo) != REC_OK)
		return false;
	for (size_t i = 0; i < FG_GRAPHS; i++)
		if (rec_stackagg_open(&p->agg[i], &ao) != REC_OK)
			return false;
	p->tl = rec_report_timeline_new(o->by, o->type, REC_REPORT_TIMELINE_MAX);
	return true;
}

static void pass_close(pass *p)
{
	rec_view_close(p->lat);
	rec_lockgraph_close(p->lg);
	for (size_t i = 0; i < FG_GRAPHS; i++)
		rec_stackagg_close(p->agg[i]);
	rec_report_timeline_free(p->tl);
}

static void begin_input(void *ctx, const rec_cli_input *in)
{
	pass *p = ctx;
	(void)rec_view_begin_input(p->lat);
	for (size_t f = 0; f < FG_GRAPHS; f++)
		(void)rec_stackagg_begin_input(p->agg[f], 0);
	p->name = in->name;
}

/* The inputs read again.  Quiet: what is damaged or unreadable in them was
 * reported by the findings' pass over the same files (it still makes the
 * exit code 1); out of memory is reported here. */
static int pass_run(pass *p, const rec_cli_input *in, size_t n, FILE *out)
{
	FILE *err = rec_cli_err(), *quiet = fopen("/dev/null", "w");
	rec_out_flush();
	if (quiet)
		rec_cli_set_streams(out, quiet);
	rec_cli_event_pass ep = { begin_input, NULL, NULL, add_one, p, &p->failed, NULL, NULL, NULL };
	int rc = rec_cli_each_input_event(in, n, &ep);
	if (quiet) {
		rec_cli_set_streams(out, err);
		fclose(quiet);
	}
	if (p->failed)
		rec_cli_file_error(p->name, "out of memory");
	return rc;
}

/* ---- the findings --------------------------------------------------------------- */

static void out_attr(const char *name, const char *value)
{
	rec_out_char(' ');
	rec_out_str(name);
	REC_OUT_LIT("=\"");
	rec_out_html_text(value);
	rec_out_char('"');
}

/* A fact's value as the JSON of rec-report --json has it (data-value). */
static void fact_raw(const rec_finding_fact *x, char *buf, size_t cap)
{
	switch (x->kind) {
	case REC_VIEW_TEXT: snprintf(buf, cap, "%s", x->value.text ? x->value.text : ""); break;
	case REC_VIEW_PERCENT: snprintf(buf, cap, "%.17g", x->value.f); break;
	case REC_VIEW_OFFSET:
	case REC_VIEW_TIME: snprintf(buf, cap, "%" PRId64, x->value.i); break;
	default: snprintf(buf, cap, "%" PRIu64, x->value.u); break;
	}
}

static void out_example(const rec_finding_example *e)
{
	REC_OUT_LIT("<li>");
	if (e->timed) {
		REC_OUT_LIT("<span class=\"rr-when\">");
		if (e->wall_ns)
			rec_out_wall(e->wall_ns);
		if (e->offset_ns || !e->wall_ns) {
			REC_OUT_LIT(" +");
			rec_out_duration(e->offset_ns);
		}
		if (e->duration_ns) {
			REC_OUT_LIT(" for ");
			rec_out_duration(e->duration_ns);
		}
		REC_OUT_LIT("</span> ");
	}
	if (e->thread[0]) {
		REC_OUT_LIT("<b>");
		rec_out_html_text(e->thread);
		REC_OUT_LIT("</b>: ");
	}
	rec_out_html_text(e->what);
	REC_OUT_LIT("</li>\n");
}

static void out_finding(const rec_finding *x, size_t index, const rec_cli_input *in, size_t n)
{
	char buf[4096];
	const char *sev = rec_finding_severity_name(x->severity);
	REC_OUT_LIT("<article class=\"rr-finding sev-");
	rec_out_str(sev);
	rec_out_printf("\" id=\"finding-%zu\"", index);
	out_attr("data-rule", x->rule);
	out_attr("data-severity", sev);
	out_attr("data-subject", x->subject);
	REC_OUT_LIT(">\n<h3><span class=\"rr-num\">");
	rec_out_u64(index);
	REC_OUT_LIT(".</span> <span class=\"rr-sev\">");
	rec_out_str(sev);
	REC_OUT_LIT("</span> <span class=\"rr-rule\">");
	rec_out_html_text(x->rule);
	REC_OUT_LIT("</span> <span class=\"rr-subject\">");
	rec_out_html_text(x->subject);
	REC_OUT_LIT("</span></h3>\n<p class=\"rr-summary\">");
	rec_out_html_text(x->summary);
	REC_OUT_LIT("</p>\n");
	if (x->fact_count) {
		REC_OUT_LIT("<table class=\"rr-facts\">\n");
		for (size_t i = 0; i < x->fact_count; i++) {
			const rec_finding_fact *f = &x->facts[i];
			REC_OUT_LIT("<tr");
			out_attr("data-key", f->key);
			out_attr("data-kind", rec_viewtab_kind_name(f->kind));
			fact_raw(f, buf, sizeof buf);
			out_attr("data-value", buf);
			REC_OUT_LIT("><th>");
			rec_out_html_text(f->title);
			REC_OUT_LIT("</th><td>");
			rec_view_column col = { f->title, f->key, f->kind };
			rec_viewtab_cell_str(&col, &f->value, buf, sizeof buf);
			rec_out_html_text(buf);
			REC_OUT_LIT("</td></tr>\n");
		}
		REC_OUT_LIT("</table>\n");
	}
	if (x->example_count) {
		REC_OUT_LIT("<details class=\"rr-examples\"><summary>Examples (");
		rec_out_u64(x->example_count);
		REC_OUT_LIT(")</summary><ul>\n");
		for (size_t i = 0; i < x->example_count; i++)
			out_example(&x->examples[i]);
		REC_OUT_LIT("</ul></details>\n");
	}
	REC_OUT_LIT("<p class=\"rr-next\">Next: <code>");
	rec_out_html_text(x->next);
	for (size_t i = 0; i < n; i++) {
		rec_out_char(' ');
		rec_out_html_text(in[i].name);
	}
	REC_OUT_LIT("</code></p>\n</article>\n");
}

static void out_findings(const rec_finding *list, size_t count, const rec_cli_input *in, size_t n)
{
	size_t sev[3] = { 0, 0, 0 };
	for (size_t i = 0; i < count; i++)
		sev[list[i].severity]++;
	REC_OUT_LIT("<section id=\"findings\" class=\"rr-section\"");
	rec_out_printf(" data-count=\"%zu\" data-critical=\"%zu\" data-warning=\"%zu\" data-info=\"%zu\">\n",
		       count, sev[REC_FINDING_CRITICAL], sev[REC_FINDING_WARNING], sev[REC_FINDING_INFO]);
	rec_out_printf("<h2>Findings</h2>\n<p class=\"rr-lead\">%zu finding%s: %zu critical, %zu warning, "
		       "%zu info.</p>\n", count, count == 1 ? "" : "s", sev[REC_FINDING_CRITICAL],
		       sev[REC_FINDING_WARNING], sev[REC_FINDING_INFO]);
	if (!count)
		REC_OUT_LIT("<p class=\"rr-empty\">No rule found anything wrong.</p>\n");
	else /* one line each, linking to the finding */
		REC_OUT_LIT("<ol class=\"rr-toc\">\n");
	for (size_t i = 0; i < count; i++) {
		const char *name = rec_finding_severity_name(list[i].severity);
		rec_out_printf("<li class=\"sev-%s\"><a href=\"#finding-%zu\"><span class=\"rr-sev\">%s</span> ",
			       name, i + 1, name);
		rec_out_html_text(list[i].rule);
		REC_OUT_LIT(": <b>");
		rec_out_html_text(list[i].subject);
		REC_OUT_LIT("</b></a></li>\n");
	}
	if (count)
		REC_OUT_LIT("</ol>\n");
	for (size_t i = 0; i < count; i++)
		out_finding(&list[i], i + 1, in, n);
	REC_OUT_LIT("</section>\n");
}

/* ---- the latency histograms (JSON) -------------------------------------------- */

/* v rounded down to at most 8 significant bits: a bucket boundary of
 * rec_histogram, where rec_histogram_count_below is exact. */
static uint64_t boundary(double x)
{
	if (x >= 1.8e19)
		return UINT64_MAX;
	uint64_t v = (uint64_t)x;
	if (v < 256)
		return v;
	unsigned shift = 63u - (unsigned)__builtin_clzll(v) - 7u;
	return (v >> shift) << shift;
}

static size_t column(const rec_view_table *t, const char *key)
{
	for (size_t i = 0; i < t->column_count; i++)
		if (strcmp(t->columns[i].key, key) == 0)
			return i;
	return SIZE_MAX;
}

static void out_cell_u(const rec_view_table *t, const rec_view_cell *row, const char *key)
{
	size_t c = column(t, key);
	rec_out_js_string(key);
	rec_out_char(':');
	rec_out_u64(c == SIZE_MAX || row[c].null ? 0 : row[c].u);
}

/* Bins of a quarter of a power of two, from two powers of two below the
 * minimum to two above the maximum (room for the page to centre a narrow
 * distribution): [lo, hi, count] each. */
static void out_bins(const rec_histogram *h)
{
	uint64_t min = rec_histogram_min(h), max = rec_histogram_max(h);
	double e = 1;
	while (e * 2 <= (double)min)
		e *= 2;
	if (e >= 4)
		e /= 4;
	uint64_t lo = min ? boundary(e) : 0, below = rec_histogram_count_below(h, lo);
	REC_OUT_LIT("[");
	int after = 0;
	for (int k = 1; after < 8 && k < 400; k++) {
		uint64_t hi = boundary(e * pow(2.0, k / 4.0));
		if (hi <= lo)
			hi = lo + 1;
		uint64_t b = rec_histogram_count_below(h, hi);
		if (k > 1)
			rec_out_char(',');
		rec_out_printf("[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", lo, hi, b - below);
		below = b;
		lo = hi;
		if (lo > max)
			after++;
	}
	REC_OUT_LIT("]");
}

static void out_latency(const pass *p, const rec_report_tool_opts *o)
{
	const rec_view_table *tables;
	size_t nt;
	REC_OUT_LIT("[");
	if (rec_view_get(p->lat, &tables, &nt) != REC_OK || !nt) {
		REC_OUT_LIT("]");
		return;
	}
	const rec_view_table *t = &tables[0];
	size_t ct = column(t, "type"), cb = column(t, "by");
	bool first = true;
	for (size_t r = 0; r < t->row_count; r++) {
		const rec_view_cell *row = &t->cells[r * t->column_count];
		const char *type = row[ct].text ? row[ct].text : "";
		if (!o->type && strncmp(type, "rec.", 4) == 0)
			continue; /* the span types: the program's own */
		const rec_histogram *h = rec_view_latency_histogram(p->lat, r);
		if (!h)
			continue;
		if (!first)
			REC_OUT_LIT(",\n");
		first = false;
		REC_OUT_LIT("{\"type\":");
		rec_out_js_string(type);
		REC_OUT_LIT(",\"by\":");
		rec_out_js_string(cb != SIZE_MAX && row[cb].text ? row[cb].text : "");
		static const char *const keys[] = { "count", "mean", "p50", "p90", "p99", "p99_9", "max",
						    "total" };
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
			rec_out_char(',');
			out_cell_u(t, row, keys[k]);
		}
		REC_OUT_LIT(",\"min\":");
		rec_out_u64(rec_histogram_min(h));
		REC_OUT_LIT(",\"bins\":");
		out_bins(h);
		rec_out_char('}');
	}
	REC_OUT_LIT("]");
}

/* ---- the wait-for graph (inline SVG) --------------------------------------------- */

static int out_wait_graph(pass *p)
{
	REC_OUT_LIT("<section id=\"waitgraph\" class=\"rr-section\">\n<h2>Wait-for graph</h2>\n");
	const rec_lockgraph_result *res = NULL;
	if (rec_lockgraph_get(p->lg, &res) != REC_OK) {
		rec_cli_error("%s", rec_lockgraph_errmsg(p->lg));
		REC_OUT_LIT("<p class=\"rr-empty\">The graph could not be computed.</p></section>\n");
		return REC_EXIT_DATA;
	}
	if (!res->lock_wait_events) {
		REC_OUT_LIT("<p class=\"rr-empty\">No rec.LockWait events: no thread waited for a lock "
			    "(longer than the recording's threshold).</p></section>\n");
		return REC_EXIT_OK;
	}
	rec_out_printf("<p class=\"rr-lead\">Threads (boxes) waited for locks (ellipses); a dashed edge "
		       "leads from a lock to the threads that held it meanwhile, each part of a wait "
		       "charged to the thread that held the lock during it (rec-lockgraph's graph). "
		       "%" PRIu64 " lock waits.</p>\n", res->lock_wait_events);
	Agraph_t *g = rec_lockgraph_gv_build(res, false);
	size_t len = 0;
	char *svg = g ? rec_lockgraph_gv_svg(g, &len) : NULL;
	if (g)
		agclose(g);
	if (!svg) {
		REC_OUT_LIT("<p class=\"rr-empty\">Graphviz could not render the graph.</p></section>\n");
		return REC_EXIT_DATA;
	}
	/* Inline from <svg on: Graphviz escapes the labels as XML text; the
	 * prolog, doctype and comments before it are left out. */
	const char *s = strstr(svg, "<svg");
	REC_OUT_LIT("<div class=\"rr-graph\">");
	if (s)
		rec_out_write(s, len - (size_t)(s - svg));
	REC_OUT_LIT("</div>\n</section>\n");
	free(svg);
	return REC_EXIT_OK;
}

/* ---- flame graphs --------------------------------------------------------------- */

static int out_flames(pass *p)
{
	int rc = REC_EXIT_OK;
	REC_OUT_LIT("<section id=\"flames\" class=\"rr-section\">\n<h2>Flame graphs</h2>\n"
		    "<div class=\"rr-tabs\" role=\"tablist\">");
	for (size_t i = 0; i < FG_GRAPHS; i++) {
		rec_stackagg_stats st;
		rec_stackagg_get_stats(p->agg[i], &st);
		rec_out_printf("<button type=\"button\" data-flame=\"%s\"%s>%s</button>", flames[i].id,
			       st.weight[0] ? "" : " disabled title=\"no events with stacks\"",
			       flames[i].tab);
	}
	REC_OUT_LIT("</div>\n");
	for (size_t i = 0; i < FG_GRAPHS; i++) {
		rec_stackagg_stats st;
		rec_stackagg_get_stats(p->agg[i], &st);
		if (!st.weight[0])
			continue;
		if (rec_stackagg_rewind(p->agg[i]) != REC_OK) {
			rec_cli_error("%s", rec_stackagg_errmsg(p->agg[i]));
			rc = REC_EXIT_DATA;
			continue;
		}
		rec_flame_graph g = { flames[i].id, flames[i].title, flames[i].event, flames[i].unit,
				      false, false, 0 };
		int grc = rec_flame_html_graph(p->agg[i], &g);
		if (grc > rc)
			rc = grc;
	}
	REC_OUT_LIT("</section>\n");
	return rc;
}

/* ---- the page ------------------------------------------------------------------- */

static void out_files_text(const rec_cli_input *in, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			REC_OUT_LIT(", ");
		rec_out_html_text(in[i].name);
	}
}

/* " TEXT <code>S</code>" (s escaped), or nothing when s is NULL. */
static void out_code(const char *text, const char *s)
{
	if (!s)
		return;
	rec_out_str(text);
	REC_OUT_LIT("<code>");
	rec_out_html_text(s);
	REC_OUT_LIT("</code>");
}

static int write_page(pass *p, const rec_report_tool_opts *o, const rec_cli_input *in, size_t n,
		      const rec_finding *list, size_t count)
{
	int rc = REC_EXIT_OK;
	REC_OUT_LIT("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		    "<title>rec-report: ");
	out_files_text(in, n);
	REC_OUT_LIT("</title>\n");
	rec_report_page_style();
	rec_flame_html_style();
	REC_OUT_LIT("</head>\n<body>\n<header class=\"rr-head\">\n<h1>rec-report <span class=\"rr-files\">");
	out_files_text(in, n);
	REC_OUT_LIT("</span></h1>\n<p class=\"rr-meta\">");
	int64_t start = rec_report_timeline_start(p->tl);
	if (start) {
		REC_OUT_LIT("from ");
		rec_out_wall(start);
	}
	out_code(" &middot; spans split by ", o->by);
	out_code(" &middot; span type ", o->type);
	REC_OUT_LIT("</p>\n<nav><a href=\"#findings\">Findings</a><a href=\"#latency\">Latency</a>"
		    "<a href=\"#timeline\">Timeline</a><a href=\"#waitgraph\">Wait-for graph</a>"
		    "<a href=\"#flames\">Flame graphs</a></nav>\n</header>\n<main>\n");
	out_findings(list, count, in, n);
	REC_OUT_LIT("<section id=\"latency\" class=\"rr-section\">\n<h2>Latency</h2>\n"
		    "<p class=\"rr-lead\">Per span type");
	out_code(" and ", o->by);
	REC_OUT_LIT(": how many spans took how long (a bar per quarter of a power of two, log "
		    "scale; the numbers are rec-view latency's, percentiles within 0.4 %).</p>\n"
		    "<div class=\"rr-lat\"></div>\n</section>\n"
		    "<section id=\"timeline\" class=\"rr-section\">\n<h2>Timeline</h2>\n"
		    "<div class=\"rr-tl-bar\"><button type=\"button\" class=\"rr-zin\">Zoom in</button>"
		    "<button type=\"button\" class=\"rr-zout\">Zoom out</button>"
		    "<button type=\"button\" class=\"rr-zreset\">Reset</button>"
		    "<span class=\"rr-legend\"></span><span class=\"rr-tl-info\"></span></div>\n"
		    "<p class=\"rr-tl-note\"></p>\n"
		    "<div class=\"rr-tl-wrap\"><canvas></canvas></div>\n<div class=\"rr-tip\"></div>\n"
		    "</section>\n");
	if (out_wait_graph(p) > rc)
		rc = REC_EXIT_DATA;
	if (out_flames(p) > rc)
		rc = REC_EXIT_DATA;
	REC_OUT_LIT("</main>\n<script type=\"application/json\" id=\"rec-report-data\">{\"files\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			rec_out_char(',');
		rec_out_js_string(in[i].name);
	}
	REC_OUT_LIT("],\"by\":");
	rec_out_js_string(o->by ? o->by : "");
	REC_OUT_LIT(",\n\"latency\":");
	out_latency(p, o);
	REC_OUT_LIT(",\n\"timeline\":");
	rec_report_timeline_json(p->tl);
	REC_OUT_LIT("}</script>\n");
	rec_flame_html_script();
	rec_report_page_script();
	REC_OUT_LIT("</body>\n</html>\n");
	return rc;
}

int rec_report_html_write(const rec_report_tool_opts *o, const rec_cli_input *in, size_t n,
			  const rec_finding *list, size_t count, const char *path, FILE *out)
{
	pass p;
	memset(&p, 0, sizeof p);
	p.lo = INT64_MIN;
	p.hi = INT64_MAX;
	if (n)
		rec_cli_window_bounds(&o->window, &in[0], &p.lo, &p.hi);
	if (!pass_open(&p, o)) {
		rec_cli_error("out of memory");
		pass_close(&p);
		return REC_EXIT_DATA;
	}
	int rc = pass_run(&p, in, n, out);
	FILE *f = rec_cli_export_open(path, out);
	if (!f) {
		pass_close(&p);
		return REC_EXIT_DATA;
	}
	FILE *err = rec_cli_err();
	rec_out_flush();
	rec_cli_set_streams(f, err);
	int wrc = write_page(&p, o, in, n, list, count);
	rec_out_flush();
	rec_cli_set_streams(out, err);
	if (wrc > rc)
		rc = wrc;
	pass_close(&p);
	if (!rec_cli_export_close(f, path, out))
		rc = REC_EXIT_DATA;
	return rc;
}
