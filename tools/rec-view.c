/* SPDX-License-Identifier: MIT */
/*
 * rec-view - predefined tables over a recording, in the shape of `jfr view`:
 * latency per event type, where the time of requests goes, lock contention
 * and what the holders did, allocation by site and per span, the live heap,
 * hot functions, sleeps, start-up, threads, the recording itself.  The
 * tables are computed by the library (rec/view.h, libfmt/analysis/view*.c);
 * this file parses options and prints them as aligned text or JSON.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/tools.h"
#include "common/viewdiff.h"
#include "common/viewtab.h"
#include "rec/analysis.h"
#include "rec/rec.h"
#include "rec/view.h"

#define DEFAULT_WIDTH 160

static void print_json(const rec_view_tool_opts *o, const rec_cli_input *in, size_t n,
		       const rec_view_table *tables, size_t count)
{
	rec_json j = { 0 };
	rec_json_head(&j, o->view, NULL, in, n, o->by);
	rec_json_key(&j, "tables");
	rec_json_begin_array(&j, false);
	for (size_t t = 0; t < count; t++)
		rec_viewtab_json(&j, &tables[t]);
	rec_json_end_array(&j);
	rec_json_end_object(&j);
	rec_json_end(&j);
}

/* ---- reading -------------------------------------------------------------------------- */

typedef struct read_ctx {
	rec_view *v;
	const char *name;
	bool nomem;
	rec_cli_typesel *tsel;      /* --type checked while reading (not rereadable) */
	const rec_chunk_info *chunk;
} read_ctx;

static void begin_input(void *ctx, const rec_cli_input *in)
{
	read_ctx *c = ctx;
	rec_view_begin_input(c->v);
	c->name = in->name;
}

static int add_one(void *ctx, const rec_event *ev)
{
	read_ctx *c = ctx;
	if (c->tsel && ev->chunk != c->chunk) {
		c->chunk = ev->chunk;
		rec_cli_typesel_chunk(c->tsel, ev->chunk);
	}
	rec_status st = rec_view_add_event(c->v, ev);
	if (st == REC_ERR_NOMEM) {
		rec_cli_file_error(c->name, "%s", rec_view_errmsg(c->v));
		c->nomem = true;
		return REC_EXIT_DATA;
	}
	return REC_EXIT_OK;
}

static const rec_view_info *find_view(const char *name)
{
	size_t n;
	const rec_view_info *l = rec_view_list(&n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(l[i].name, name) == 0)
			return &l[i];
	return NULL;
}

/* The view's options for inputs whose first is first: --from/--to offsets
 * count from its first event (the baseline's own for the baseline). */
static rec_view_options view_options(const rec_view_tool_opts *o, const rec_cli_input *first,
				     uint32_t top)
{
	rec_view_options vo = REC_VIEW_OPTIONS_INIT;
	vo.view = o->view;
	vo.by = o->by;
	vo.type = o->type;
	vo.thread = o->thread;
	vo.top = top;
	int64_t lo = INT64_MIN, hi = INT64_MAX;
	if (first)
		rec_cli_window_bounds(&o->window, first, &lo, &hi);
	if (lo != INT64_MIN) {
		vo.flags |= REC_VIEW_FROM;
		vo.from_wall_ns = lo;
	}
	if (hi != INT64_MAX) {
		vo.flags |= REC_VIEW_TO;
		vo.to_wall_ns = hi;
	}
	return vo;
}

/* Read the inputs into v (the recording view: their summary first), its
 * CPU samples as digests when digests; tsel checks --type while reading, or
 * NULL.  The exit code. */
static int read_inputs(rec_view *v, const rec_view_tool_opts *o, const rec_cli_input *in, size_t n,
		       rec_cli_typesel *tsel, bool digests)
{
	int rc = REC_EXIT_OK;
	if (strcmp(o->view, "recording") == 0) {
		rec_summary *s = NULL;
		if (rec_summary_open(&s) != REC_OK) {
			rec_cli_error("out of memory");
			return REC_EXIT_DATA;
		}
		rc = rec_cli_summary_inputs(s, in, n, REC_SUMMARY_DROPS | REC_SUMMARY_VERIFY);
		if (rec_view_add_summary(v, rec_summary_get(s)) != REC_OK)
			rc = REC_EXIT_DATA;
		rec_summary_close(s);
	}
	/* Only the types the view reads are decoded and ordered; not while
	 * --type is checked against the chunks the events come from. */
	read_ctx ctx = { v, NULL, false, tsel, NULL };
	rec_cli_event_pass pass = { begin_input, tsel ? NULL : rec_view_type_filter, v, add_one,
				    &ctx, &ctx.nomem, digests ? rec_view_digest_type(v) : NULL,
				    rec_view_add_digests, v };
	int frc = rec_cli_each_input_event(in, n, &pass);
	return frc > rc ? frc : rc;
}

static void print_json_diff(const rec_view_tool_opts *o, const rec_cli_input *in, size_t n,
			    const rec_view_table *bt, size_t bn, const rec_view_table *at, size_t an,
			    bool *ok)
{
	rec_json j = { 0 };
	rec_json_head(&j, o->view, o->baseline->name, in, n, o->by);
	rec_json_key(&j, "tables");
	rec_json_begin_array(&j, false);
	*ok = rec_viewdiff_print_all(&j, bt, bn, at, an, o->top, 0);
	rec_json_end_array(&j);
	rec_json_end_object(&j);
	rec_json_end(&j);
}

int rec_view_run(const rec_view_tool_opts *o, const rec_cli_input *in, size_t n, FILE *out,
		 FILE *err)
{
	if (!out)
		out = stdout;
	rec_cli_set_streams(out, err);
	const rec_view_info *info = o->view ? find_view(o->view) : NULL;
	if (!info)
		return rec_cli_usage_fail("'%s' is not a view (rec-view --list shows them)",
					  o->view ? o->view : "");
	if (o->by && !info->by)
		return rec_cli_usage_fail("--by: the %s view does not split by a field", info->name);

	if (o->baseline && !rec_cli_input_probe(o->baseline))
		return REC_EXIT_DATA;
	/* With a baseline both sides keep every row (a row cut by --top on
	 * one side only would look new or gone); --top cuts the comparison. */
	rec_view_options vo = view_options(o, n ? &in[0] : NULL, o->baseline ? 0 : o->top);
	/* --type names a type of the input (tools/common's one check): from the
	 * chunks' metadata before reading when every input can be read twice,
	 * else while reading (the tables are printed after it anyway). */
	rec_cli_typesel tsel;
	rec_cli_typesel_init(&tsel, &o->type, o->type ? 1 : 0, REC_CLI_TYPESEL_EXACT);
	bool scanned = true;
	for (size_t i = 0; o->type && i < n; i++)
		scanned = rec_cli_typesel_scan(&tsel, &in[i]) && scanned;
	if (o->type && scanned && rec_cli_typesel_check(&tsel) != REC_EXIT_OK) {
		rec_cli_typesel_free(&tsel);
		return REC_EXIT_USAGE;
	}
	rec_view *v = NULL, *vb = NULL;
	rec_status st = rec_view_open(&v, &vo);
	if (st == REC_OK && o->baseline) {
		rec_view_options bo = view_options(o, o->baseline, 0);
		st = rec_view_open(&vb, &bo);
	}
	if (st != REC_OK) {
		rec_cli_error("%s", rec_strerror(st));
		rec_view_close(v);
		rec_cli_typesel_free(&tsel);
		return REC_EXIT_DATA;
	}
	int brc = o->baseline ? read_inputs(vb, o, o->baseline, 1, NULL, true) : REC_EXIT_OK;
	int irc = read_inputs(v, o, in, n, (o->type && !scanned) ? &tsel : NULL, true);
	/* A side read once more with its CPU samples as events where their
	 * digests could not be told apart (startup, most rarely: REC_ERR_LIMIT)
	 * and its inputs can be read again.  (--type takes no digests.) */
	const rec_view_table *tables = NULL, *btables = NULL;
	size_t count = 0, bcount = 0;
	bool again = rec_view_get(v, &tables, &count) == REC_ERR_LIMIT;
	bool again_b = vb && rec_view_get(vb, &btables, &bcount) == REC_ERR_LIMIT &&
		       rec_cli_input_rereadable(o->baseline);
	for (size_t i = 0; again && i < n; i++)
		again = rec_cli_input_rereadable(&in[i]);
	if (again) {
		rec_view_close(v);
		v = NULL;
		st = rec_view_open(&v, &vo);
	}
	if (again_b && st == REC_OK) {
		rec_view_options bo = view_options(o, o->baseline, 0);
		rec_view_close(vb);
		vb = NULL;
		st = rec_view_open(&vb, &bo);
	}
	if (st != REC_OK) {
		rec_cli_error("%s", rec_strerror(st));
		rec_view_close(v);
		rec_view_close(vb);
		rec_cli_typesel_free(&tsel);
		return REC_EXIT_DATA;
	}
	if (again || again_b)
		rec_cli_reading_again();
	if (again_b)
		brc = read_inputs(vb, o, o->baseline, 1, NULL, false);
	if (again)
		irc = read_inputs(v, o, in, n, NULL, false);
	int rc = irc > brc ? irc : brc;
	int trc = (o->type && !scanned) ? rec_cli_typesel_check(&tsel) : REC_EXIT_OK;
	rec_cli_typesel_free(&tsel);
	if (trc != REC_EXIT_OK) {
		rec_view_close(v);
		rec_view_close(vb);
		return trc;
	}
	st = rec_view_get(v, &tables, &count);
	if (st != REC_OK || (vb && rec_view_get(vb, &btables, &bcount) != REC_OK)) {
		rec_cli_error("%s", rec_view_errmsg(st != REC_OK ? v : vb));
		rec_view_close(v);
		rec_view_close(vb);
		return REC_EXIT_DATA;
	}
	if (o->by && !rec_view_by_found(v) && !(vb && rec_view_by_found(vb)) && rc == REC_EXIT_OK) {
		rec_view_close(v);
		rec_view_close(vb);
		return rec_cli_usage_fail("--by: no %s event has a field '%s'",
					  o->type ? o->type : "matching", o->by);
	}
	bool ok = true;
	uint32_t width = o->width ? o->width : DEFAULT_WIDTH;
	if (vb && o->json)
		print_json_diff(o, in, n, btables, bcount, tables, count, &ok);
	else if (vb)
		ok = rec_viewdiff_print_all(NULL, btables, bcount, tables, count, o->top, width);
	else if (o->json)
		print_json(o, in, n, tables, count);
	else
		for (size_t t = 0; t < count; t++)
			rec_viewtab_print(&tables[t], width);
	if (!ok) {
		rec_cli_error("out of memory comparing the tables");
		rc = REC_EXIT_DATA;
	}
	rec_view_close(v);
	rec_view_close(vb);
	return rc;
}

/* ---- main: the arguments ---------------------------------------------------------------- */
#ifndef REC_TOOL_NO_MAIN

/* ---- --sql: the views as SQL over spec/SCHEMA.md's tables ---------------------------------- */

typedef struct view_sql {
	const char *view;
	int by;                      /* 1: the --by form */
	const char *text;            /* with {type} {table} {by} {column} {site} to fill in */
} view_sql;

/* spec/views/VIEW.sql and VIEW.by.sql, generated by the Makefile; site.with
 * is no view but the text of {site}. */
static const view_sql view_sqls[] = {
#include "view_sql.h"
};

/* Append s to b, doubling ' when quote. */
static void sql_put(rec_cli_strbuf *b, const char *s, bool quote)
{
	for (; *s; s++) {
		if (quote && *s == '\'')
			rec_cli_strbuf_add(b, "'", 1);
		rec_cli_strbuf_add(b, s, 1);
	}
}

/* rec-view --sql VIEW [--type TYPE] [--by FIELD]: the view's SQL, its
 * placeholders filled in. */
static int print_sql(const char *view, const char *type, const char *by, uint32_t top)
{
	const view_sql *q = NULL;
	bool any = false;
	for (size_t i = 0; i < sizeof view_sqls / sizeof view_sqls[0]; i++)
		if (strcmp(view_sqls[i].view, view) == 0) {
			any = true;
			if (view_sqls[i].by == (by != NULL))
				q = &view_sqls[i];
		}
	if (!any)
		return rec_cli_usage_fail("--sql: the %s view has no SQL (no spec/views/%s.sql)", view, view);
	if (!q)
		return rec_cli_usage_fail("--sql: the %s view's SQL has %s--by form", view,
					  by ? "no " : "only a ");
	if (strstr(q->text, "{type}") && !type)
		return rec_cli_usage_fail("--sql %s: give --type TYPE (its SQL reads one event "
					  "type's table)", view);
	if (type && !strstr(q->text, "{type}"))
		return rec_cli_usage_fail("--sql %s: its SQL takes no --type (it reads the types "
					  "rec-view reads without one)", view);
	char *table = type ? rec_cli_sql_ident(type, "") : NULL;
	char *column = by ? rec_cli_sql_ident(by, "") : NULL;
	const char *site = NULL;     /* spec/views/site.with.sql */
	for (size_t i = 0; i < sizeof view_sqls / sizeof view_sqls[0]; i++)
		if (strcmp(view_sqls[i].view, "site.with") == 0)
			site = view_sqls[i].text;
	/* {top}: rec-view's --top, else its default for the slowest spans (10) */
	char top_s[16];
	snprintf(top_s, sizeof top_s, "%" PRIu32, top ? top : 10);
	rec_cli_strbuf b = { 0 };
	rec_cli_strbuf_str(&b, "");
	for (const char *s = q->text; *s;) {
		static const char *const names[] = { "{type}", "{table}", "{by}", "{column}", "{site}", "{top}" };
		const char *vals[] = { type, table, by, column, site, top_s };
		size_t k = 0;
		while (k < 6 && strncmp(s, names[k], strlen(names[k])) != 0)
			k++;
		if (k < 6 && vals[k]) {
			sql_put(&b, vals[k], k == 0 || k == 2);
			s += strlen(names[k]);
		} else {
			rec_cli_strbuf_add(&b, s++, 1);
		}
	}
	/* --top N cuts a view's tables to their N heaviest rows, as rec-view
	 * does: a query without {top} gets LIMIT N, but for a table rec-view
	 * does not cut (its SQL says so: recording.runs) */
	if (top && !strstr(q->text, "{top}") && !strstr(q->text, "\n-- --top: every row")) {
		while (b.len && (b.s[b.len - 1] == '\n' || b.s[b.len - 1] == ' '))
			b.s[--b.len] = '\0';
		rec_cli_strbuf_str(&b, "\nLIMIT ");
		rec_cli_strbuf_str(&b, top_s);
		rec_cli_strbuf_str(&b, "\n");
	}
	rec_out_str(b.s);
	rec_cli_strbuf_free(&b);
	free(table);
	free(column);
	return REC_EXIT_OK;
}

static const char usage_text[] =
	"Usage: rec-view [OPTIONS] VIEW FILE...\n"
	"       rec-view --baseline BEFORE.rec [OPTIONS] VIEW FILE...\n"
	"       rec-view --list\n"
	"       rec-view --sql VIEW[.TABLE] [--type TYPE] [--by FIELD] [--top N]\n"
	"Show a predefined table (a view) of rec recordings, like `jfr view`.  The\n"
	"FILEs are read one after another into one table; FILE may be '-' for\n"
	"standard input.\n"
	"\n"
	"Options:\n"
	"  --list            the views, one a line, and exit\n"
	"  --sql VIEW        print the view's SQL over rec-sql's tables (spec/SCHEMA.md;\n"
	"                    the same text runs in DuckDB over rec-export's Parquet)\n"
	"                    and exit (latency, requests and allocation-by-span need\n"
	"                    --type); its comment says which columns it gives;\n"
	"                    VIEW.TABLE: another table of the view (requests.slowest);\n"
	"                    with --top N: N slowest spans, else LIMIT N\n"
	"  --json            one JSON document (\"schema\": 1): the tables with their\n"
	"                    columns and rows (durations in ns, sizes in bytes)\n"
	"  --width N         text: lines at most N characters (default 160); the widest\n"
	"                    text columns are cut, with \"...\"\n"
	"  --top N           at most N rows per table (the heaviest first; requests:\n"
	"                    also the N slowest spans, default 10)\n"
	"  --by FIELD        split rows by the value of a field (latency, requests,\n"
	"                    allocation-by-span): --by path\n"
	"  --type TYPE       the span type (requests, allocation-by-span, startup's\n"
	"                    first event; latency: only TYPE); default every duration\n"
	"                    type whose name does not start with \"rec.\"\n"
	"  --from T, --to T  only events that start in [from, to): T is an offset from\n"
	"                    the first FILE's first event (1.5s, 250ms; needs a FILE,\n"
	"                    not '-') or a time 2026-12-02T10:14:03.5 (local time; add Z\n"
	"                    or +HH:MM for another zone)\n"
	"  --baseline FILE   compare with FILE (before): per row of the view's key (the\n"
	"                    event type and --by value, the lock, the site, the\n"
	"                    thread) each column before, after and the change\n"
	"                    (absolute and %), rows only before \"gone\", only after\n"
	"                    \"new\"; the options apply to both sides (--from/--to\n"
	"                    offsets from each side's first event; --top: rows of the\n"
	"                    comparison)\n"
	"  --thread NAME     only events of threads named NAME (a glob) or with OS tid\n"
	"                    NAME (contention: the waiters; the holders are looked at\n"
	"                    whatever their name)\n"
	"  -h, --help        show this help and exit\n"
	"  --version         show the library version and exit\n"
	"\n"
	"Percentiles come from a log-linear histogram: within 0.4 % (1/256) of the\n"
	"true value; count, mean, max and totals are exact.  Sites are the first\n"
	"frame of a stack that is not librec's own (rec_*), spelt as rec-flame spells\n"
	"frames.  Events are read in timestamp order.\n"
	"Exit status: 0 success, 1 damaged or unreadable input (after printing what\n"
	"was readable), 2 usage error.\n";

enum { OPT_LIST = 256, OPT_JSON, OPT_WIDTH, OPT_TOP, OPT_BY, OPT_TYPE, OPT_FROM, OPT_TO,
       OPT_THREAD, OPT_BASELINE, OPT_SQL };

static const struct option long_opts[] = {
	{ "list", no_argument, NULL, OPT_LIST },
	{ "sql", required_argument, NULL, OPT_SQL },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "by", required_argument, NULL, OPT_BY },
	{ "type", required_argument, NULL, OPT_TYPE },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "thread", required_argument, NULL, OPT_THREAD },
	{ "baseline", required_argument, NULL, OPT_BASELINE },
	REC_CLI_COMMON_OPTIONS,
};

static void list_views(void)
{
	size_t n;
	const rec_view_info *l = rec_view_list(&n);
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (strlen(l[i].name) > w)
			w = strlen(l[i].name);
	for (size_t i = 0; i < n; i++) {
		rec_out_str(l[i].name);
		rec_viewtab_spaces(w + 2 - strlen(l[i].name));
		rec_out_str(l[i].description);
		if (l[i].by)
			REC_OUT_LIT(" (--by FIELD)");
		rec_out_char('\n');
	}
}

int main(int argc, char **argv)
{
	rec_cli_init("rec-view");
	rec_view_tool_opts o = { 0 };
	const char *from_s = NULL, *to_s = NULL;
	bool list = false;
	const char *sql_view = NULL;
	rec_cli_input baseline = { 0 };
	int c;
	while ((c = rec_cli_getopt(argc, argv, "h", long_opts)) != -1) {
		switch (c) {
		case OPT_LIST: list = true; break;
		case OPT_SQL: sql_view = optarg; break;
		case OPT_JSON: o.json = true; break;
		case OPT_WIDTH: o.width = (uint32_t)rec_cli_opt_u64("--width", optarg, 20, 100000); break;
		case OPT_TOP: o.top = (uint32_t)rec_cli_opt_u64("--top", optarg, 1, UINT32_MAX); break;
		case OPT_BY: o.by = rec_cli_opt_nonempty("--by", "value", optarg); break;
		case OPT_TYPE: o.type = rec_cli_opt_nonempty("--type", "value", optarg); break;
		case OPT_FROM:
			from_s = optarg;
			rec_cli_window_opt(&o.window, false, optarg);
			break;
		case OPT_TO:
			to_s = optarg;
			rec_cli_window_opt(&o.window, true, optarg);
			break;
		case OPT_THREAD: o.thread = rec_cli_opt_nonempty("--thread", "value", optarg); break;
		case OPT_BASELINE:
			if (o.baseline)
				rec_cli_usage_error("--baseline given twice");
			baseline.name = rec_cli_opt_nonempty("--baseline", "value", optarg);
			o.baseline = &baseline;
			break;
		default: rec_cli_common_option(c, usage_text);
		}
	}
	if (list) {
		if (optind < argc)
			rec_cli_usage_error("--list takes no operands");
		list_views();
		return rec_cli_finish(REC_EXIT_OK);
	}
	if (sql_view) {
		if (optind < argc)
			rec_cli_usage_error("--sql takes no operands");
		/* VIEW.TABLE: another table of the view (requests.slowest) */
		char base[64];
		snprintf(base, sizeof base, "%.*s", (int)strcspn(sql_view, "."), sql_view);
		const rec_view_info *vi = find_view(base);
		if (!vi)
			rec_cli_usage_error("'%s' is not a view (rec-view --list shows them)", base);
		if (o.by && !vi->by)
			rec_cli_usage_error("--by: the %s view does not split by a field", vi->name);
		return rec_cli_finish(print_sql(sql_view, o.type, o.by, o.top));
	}
	if (optind >= argc)
		rec_cli_usage_error("no view (rec-view --list shows them)");
	o.view = argv[optind++];
	if (!find_view(o.view))
		rec_cli_usage_error("'%s' is not a view (rec-view --list shows them)", o.view);
	if (optind >= argc)
		rec_cli_usage_error("no input file");
	size_t n = (size_t)(argc - optind);
	rec_cli_input *in = rec_cli_xmalloc(n * sizeof *in);
	size_t stdin_count = o.baseline && baseline.name && strcmp(baseline.name, "-") == 0;
	for (size_t i = 0; i < n; i++) {
		in[i] = (rec_cli_input){ .name = argv[optind + (int)i] };
		stdin_count += strcmp(in[i].name, "-") == 0;
	}
	if (stdin_count > 1)
		rec_cli_usage_error("standard input ('-') given more than once");
	const rec_cli_window *w = &o.window;
	if (w->from_kind && w->to_kind && w->from_kind != w->to_kind)
		rec_cli_usage_error("--from and --to must both be offsets or both be times");
	if (from_s && to_s && w->to <= w->from)
		rec_cli_usage_error("--to %s is not after --from %s", to_s, from_s);
	if ((w->from_kind == 1 || w->to_kind == 1) &&
	    (!rec_cli_input_rereadable(&in[0]) || (o.baseline && !rec_cli_input_rereadable(o.baseline))))
		rec_cli_usage_error("--from/--to need a regular FILE (not standard input)");
	int rc = rec_view_run(&o, in, n, NULL, NULL);
	free(in);
	return rec_cli_finish(rc);
}
#endif /* REC_TOOL_NO_MAIN */
