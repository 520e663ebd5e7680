/* SPDX-License-Identifier: MIT */
/*
 * rec-report - findings: what is wrong in a recording (a lock held while its
 * holder slept, spans that wait instead of computing, one path that
 * allocates far more than the others, lost or damaged data ...), each with
 * a severity, the evidence and the command that shows more.  The rules are
 * the library's (rec/findings.h, libfmt/analysis/findings*.c); this file
 * reads the inputs into them and prints the findings as text or JSON.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cli.h"
#include "common/findingdiff.h"
#include "common/tools.h"
#include "common/viewtab.h"
#include "report/report_html.h"
#include "rec/analysis.h"
#include "rec/findings.h"
#include "rec/rec.h"

#define DEFAULT_WIDTH 100

/* ---- reading one side (the inputs, or the baseline) into findings ---------------- */

typedef struct read_ctx {
	rec_findings *f;
	bool stop;    /* out of memory, or changed */
	bool changed; /* the input is not what its summary said: read again */
	const char *name;
} read_ctx;

static void begin_input(void *ctx, const rec_cli_input *in)
{
	read_ctx *c = ctx;
	rec_findings_begin_input(c->f);
	c->name = in->name;
}

/* The summary of the inputs (flags: REC_SUMMARY_*) into f's recording
 * rules, replacing an earlier one.  The exit code. */
static int add_summary(rec_findings *f, const rec_cli_input *in, size_t n, uint32_t flags)
{
	rec_summary *s = NULL;
	if (rec_summary_open(&s) != REC_OK) {
		rec_cli_error("out of memory");
		return REC_EXIT_DATA;
	}
	int rc = rec_cli_summary_inputs(s, in, n, flags);
	if (rec_findings_add_summary(f, rec_summary_get(s)) != REC_OK)
		rc = REC_EXIT_DATA;
	rec_summary_close(s);
	return rc;
}

static int add_one(void *ctx, const rec_event *ev)
{
	read_ctx *c = ctx;
	rec_status st = rec_findings_add_event(c->f, ev);
	if (st == REC_ERR_STATE || st == REC_ERR_LIMIT) { /* (said by the reading again) */
		c->changed = c->stop = true;
		return REC_EXIT_DATA;
	}
	if (st == REC_ERR_NOMEM) {
		rec_cli_file_error(c->name, "%s", rec_findings_errmsg(c->f));
		c->stop = true;
		return REC_EXIT_DATA;
	}
	return REC_EXIT_OK;
}

/* rec_report_findings(), the CPU samples as digests when digests; *changed
 * set when the input was not what its summary said (nothing is said then:
 * the caller reads again, without digests). */
static int findings_pass(const rec_report_tool_opts *o, const rec_cli_input *in, size_t n,
			 rec_findings **out, bool digests, bool *changed)
{
	*out = NULL;
	rec_findings_options fo = REC_FINDINGS_OPTIONS_INIT;
	fo.by = o->by;
	fo.type = o->type;
	int64_t lo = INT64_MIN, hi = INT64_MAX;
	if (n)
		rec_cli_window_bounds(&o->window, &in[0], &lo, &hi);
	if (lo != INT64_MIN) {
		fo.flags |= REC_VIEW_FROM;
		fo.from_wall_ns = lo;
	}
	if (hi != INT64_MAX) {
		fo.flags |= REC_VIEW_TO;
		fo.to_wall_ns = hi;
	}
	rec_findings *f = NULL;
	if (rec_findings_open(&f, &fo) != REC_OK) {
		rec_cli_error("out of memory");
		return REC_EXIT_DATA;
	}
	/* The recording rules' numbers: rec-summary's, read first (damaged
	 * chunks are reported once, by the event pass below). */
	int rc = add_summary(f, in, n, REC_SUMMARY_DROPS | REC_SUMMARY_COUNTERS);
	/* one pass with the union of the types the rules read, the CPU samples
	 * as digests */
	read_ctx ctx = { f, false, false, NULL };
	rec_cli_event_pass pass = { begin_input, rec_findings_type_filter, f, add_one, &ctx,
				    &ctx.stop, digests ? rec_findings_digest_type(f) : NULL,
				    rec_findings_add_digests, f };
	int frc = rec_cli_each_input_event(in, n, &pass);
	if (ctx.changed) {
		*changed = true;
		rec_findings_close(f);
		return REC_EXIT_DATA;
	}
	/* The pass met damage that the summary, which decodes only the
	 * chunks with counters or drops, may not have seen (a chunk whose
	 * header and statistics are intact but whose events are not): then
	 * the summary again, verifying every chunk, so that a damaged chunk
	 * is counted as damaged and nothing of it as readable.  Intact
	 * input never pays for this pass. */
	if (frc == REC_EXIT_DATA && !ctx.stop)
		rc = add_summary(f, in, n,
				 REC_SUMMARY_DROPS | REC_SUMMARY_COUNTERS | REC_SUMMARY_VERIFY);
	if (frc > rc)
		rc = frc;
	const rec_finding *list;
	size_t count;
	if (rec_findings_get(f, &list, &count) != REC_OK) {
		rec_cli_error("%s", rec_findings_errmsg(f));
		rec_findings_close(f);
		return REC_EXIT_DATA;
	}
	if (rc == REC_EXIT_OK && o->type && !rec_findings_type_found(f)) {
		rec_findings_close(f);
		return rec_cli_usage_fail("--type: no event of type '%s' in the input", o->type);
	}
	if (rc == REC_EXIT_OK && o->by && !rec_findings_by_found(f)) {
		rec_findings_close(f);
		return rec_cli_usage_fail("--by: no %s event has a field '%s'",
					  o->type ? o->type : "span", o->by);
	}
	*out = f;
	return rc;
}

int rec_report_findings(const rec_report_tool_opts *o, const rec_cli_input *in, size_t n,
			rec_findings **out)
{
	/* The CPU samples as digests; once more as events if the inputs were
	 * not what their summary said (a file that grew in between: the
	 * digests' handling trusted the summary). */
	bool changed = false;
	int rc = findings_pass(o, in, n, out, true, &changed);
	if (changed) {
		rec_cli_reading_again();
		rc = findings_pass(o, in, n, out, false, &changed);
	}
	return rc;
}

/* ---- text -------------------------------------------------------------------------------- */

static void print_finding(const rec_finding *x, size_t index, const rec_cli_input *in, size_t n,
			      uint32_t width)
{
	char buf[4096];
	rec_out_printf("%zu. [%s] %s: %s\n", index, rec_finding_severity_name(x->severity), x->rule,
		       x->subject);
	rec_viewtab_wrapped(x->summary, 3, width);
	if (x->fact_count) {
		REC_OUT_LIT("   Evidence:\n");
		size_t tw = 0;
		for (size_t i = 0; i < x->fact_count; i++)
			if (strlen(x->facts[i].title) > tw)
				tw = strlen(x->facts[i].title);
		for (size_t i = 0; i < x->fact_count; i++) {
			REC_OUT_LIT("     ");
			rec_out_str(x->facts[i].title);
			REC_OUT_LIT(": ");
			rec_viewtab_spaces(tw - strlen(x->facts[i].title));
			rec_viewtab_fact_str(&x->facts[i], buf, sizeof buf);
			rec_out_str(buf);
			rec_out_char('\n');
		}
	}
	if (x->example_count) {
		REC_OUT_LIT("   Examples:\n");
		for (size_t i = 0; i < x->example_count; i++) {
			const rec_finding_example *e = &x->examples[i];
			REC_OUT_LIT("     ");
			if (e->timed) {
				if (e->wall_ns) {
					rec_out_wall(e->wall_ns);
					rec_out_char(' ');
				}
				if (e->offset_ns || !e->wall_ns) {
					rec_out_char('+');
					rec_out_duration(e->offset_ns);
					rec_out_char(' ');
				}
				if (e->duration_ns) {
					REC_OUT_LIT("for ");
					rec_out_duration(e->duration_ns);
					rec_out_char(' ');
				}
			}
			if (e->thread[0]) {
				rec_out_str(e->thread);
				REC_OUT_LIT(": ");
			}
			rec_out_str(e->what);
			rec_out_char('\n');
		}
	}
	REC_OUT_LIT("   Next: ");
	rec_out_str(x->next);
	rec_out_input_names(in, n);
	rec_out_char('\n');
}

static void print_text(const rec_cli_input *in, size_t n, const rec_finding *list, size_t count,
		       uint32_t width)
{
	size_t sev[3] = { 0, 0, 0 };
	for (size_t i = 0; i < count; i++)
		sev[list[i].severity]++;
	rec_out_printf("%zu finding%s (%zu critical, %zu warning, %zu info) in", count,
		       count == 1 ? "" : "s", sev[REC_FINDING_CRITICAL], sev[REC_FINDING_WARNING],
		       sev[REC_FINDING_INFO]);
	rec_out_input_names(in, n);
	rec_out_char('\n');
	for (size_t i = 0; i < count; i++) {
		rec_out_char('\n');
		print_finding(&list[i], i + 1, in, n, width);
	}
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static char *next_command(const rec_finding *x, const rec_cli_input *in, size_t n)
{
	size_t len = strlen(x->next) + 1;
	for (size_t i = 0; i < n; i++)
		len += strlen(in[i].name) + 1;
	char *s = rec_cli_xmalloc(len);
	char *p = stpcpy(s, x->next);
	for (size_t i = 0; i < n; i++) {
		*p++ = ' ';
		p = stpcpy(p, in[i].name);
	}
	return s;
}

static void json_finding(rec_json *j, const rec_finding *x, const rec_cli_input *in, size_t n)
{
	rec_json_begin_object(j, false);
	rec_json_key(j, "rule");
	rec_json_str(j, x->rule);
	rec_json_key(j, "severity");
	rec_json_str(j, rec_finding_severity_name(x->severity));
	rec_json_key(j, "subject");
	rec_json_str(j, x->subject);
	rec_json_key(j, "summary");
	rec_json_str(j, x->summary);
	rec_json_key(j, "facts");
	rec_json_begin_array(j, false);
	for (size_t i = 0; i < x->fact_count; i++) {
		rec_json_begin_object(j, true);
		rec_viewtab_json_column(j, x->facts[i].key, x->facts[i].title, x->facts[i].kind);
		rec_json_key(j, "value");
		rec_viewtab_json_cell(j, x->facts[i].kind, &x->facts[i].value);
		rec_json_end_object(j);
	}
	rec_json_end_array(j);
	rec_json_key(j, "examples");
	rec_json_begin_array(j, false);
	for (size_t i = 0; i < x->example_count; i++) {
		const rec_finding_example *e = &x->examples[i];
		rec_json_begin_object(j, true);
		rec_json_key(j, "time_ns");
		if (e->timed && e->wall_ns)
			rec_json_i64(j, e->wall_ns);
		else
			rec_json_null(j);
		rec_json_key(j, "offset_ns");
		if (e->timed)
			rec_json_i64(j, e->offset_ns);
		else
			rec_json_null(j);
		rec_json_key(j, "duration_ns");
		rec_json_i64(j, e->duration_ns);
		rec_json_key(j, "thread");
		rec_json_str(j, e->thread);
		rec_json_key(j, "what");
		rec_json_str(j, e->what);
		rec_json_end_object(j);
	}
	rec_json_end_array(j);
	rec_json_key(j, "next");
	char *cmd = next_command(x, in, n);
	rec_json_str(j, cmd);
	free(cmd);
	rec_json_end_object(j);
}

static void print_json(const rec_report_tool_opts *o, const rec_cli_input *in, size_t n,
		       const rec_finding *list, size_t count)
{
	rec_json j = { 0 };
	rec_json_head(&j, NULL, NULL, in, n, o->by);
	rec_json_key(&j, "findings");
	rec_json_begin_array(&j, false);
	for (size_t i = 0; i < count; i++)
		json_finding(&j, &list[i], in, n);
	rec_json_end_array(&j);
	rec_json_end_object(&j);
	rec_json_end(&j);
}

/* ---- before and after: --baseline (tools/common/findingdiff.c) ---------------------- */

/* The baseline's findings with the same options (--from/--to offsets from
 * its own first event), compared with f's; frees f.  The exit code. */
static int report_baseline(const rec_report_tool_opts *o, const rec_cli_input *in, size_t n,
			   rec_findings *f, int rc)
{
	rec_findings *fb = NULL;
	int brc = rec_report_findings(o, o->baseline, 1, &fb);
	if (brc > rc)
		rc = brc;
	if (fb && !rec_findingdiff_print(fb, o->baseline->name, f, in, n, o->by, o->json,
					 o->width ? o->width : DEFAULT_WIDTH)) {
		rec_cli_error("out of memory comparing with the baseline");
		rc = REC_EXIT_DATA;
	}
	rec_findings_close(fb);
	rec_findings_close(f);
	return rc;
}

/* ---- the tool ------------------------------------------------------------------------------ */

int rec_report_run(const rec_report_tool_opts *o, const rec_cli_input *in, size_t n, FILE *out,
		   FILE *err)
{
	if (!out)
		out = stdout;
	rec_cli_set_streams(out, err);
	if (o->baseline && !rec_cli_input_probe(o->baseline))
		return REC_EXIT_DATA;
	rec_findings *f = NULL;
	int rc = rec_report_findings(o, in, n, &f);
	if (!f)
		return rc;
	if (o->baseline)
		return report_baseline(o, in, n, f, rc);
	const rec_finding *list;
	size_t count;
	rec_findings_get(f, &list, &count);
	if (o->output) { /* the HTML page (tools/report/) */
		int hrc = rec_report_html_write(o, in, n, list, count, o->output, out);
		rec_findings_close(f);
		return hrc > rc ? hrc : rc;
	}
	if (o->json)
		print_json(o, in, n, list, count);
	else
		print_text(in, n, list, count, o->width ? o->width : DEFAULT_WIDTH);
	rec_findings_close(f);
	return rc;
}

/* ---- main: the arguments ---------------------------------------------------------------- */
#ifndef REC_TOOL_NO_MAIN

static const char usage_text[] =
	"Usage: rec-report [OPTIONS] FILE...\n"
	"       rec-report --baseline BEFORE.rec [OPTIONS] FILE...\n"
	"       rec-report --rules\n"
	"What is wrong in rec recordings: findings with a severity (critical, warning,\n"
	"info), the evidence (numbers, the lock or site, example events with their\n"
	"times) and the command that shows more.  The FILEs are read one after another\n"
	"as one recording.\n"
	"\n"
	"Options:\n"
	"  --rules           the rules with their thresholds, one a line, and exit\n"
	"  --json            one JSON document (\"schema\": 1) with the findings\n"
	"  --by FIELD        split span types by a field's value (the span rules):\n"
	"                    --by path\n"
	"  --type TYPE       the span type (default every duration type whose name\n"
	"                    does not start with \"rec.\")\n"
	"  --from T, --to T  only events that start in [from, to): T is an offset from\n"
	"                    the first FILE's first event (1.5s, 250ms) or a time\n"
	"                    2026-12-02T10:14:03.5 (local time; add Z or +HH:MM)\n"
	"  --baseline FILE   compare with FILE (before, read with the same options):\n"
	"                    the findings that went away, appeared (matched by rule\n"
	"                    and subject), changed (each fact before, after and the\n"
	"                    change) or stayed, then latency, where the time of spans\n"
	"                    goes, contention per lock, allocation per site and per\n"
	"                    span row by row (as rec-view --baseline)\n"
	"  --width N         text: wrap at N characters (default 100)\n"
	"  -o, --output FILE write an HTML page there instead of the text: the\n"
	"                    findings, latency histograms per span type (and --by\n"
	"                    value), a timeline of the threads (spans, lock waits,\n"
	"                    sleeps, condition waits, I/O, CPU samples; it zooms and\n"
	"                    pans), the wait-for graph and flame graphs of CPU,\n"
	"                    allocation and lock wait; self-contained, it opens from\n"
	"                    the file\n"
	"  -h, --help        show this help and exit\n"
	"  --version         show the library version and exit\n"
	"\n"
	"FILE must be a regular file (the recording is read twice: its summary, then\n"
	"its events in timestamp order).\n"
	"Exit status: 0 with or without findings (they are information), 1 damaged or\n"
	"unreadable input (after printing the findings of what was readable), 2 usage\n"
	"error.\n";

enum { OPT_RULES = 256, OPT_JSON, OPT_BY, OPT_TYPE, OPT_FROM, OPT_TO, OPT_WIDTH,
       OPT_BASELINE };
#define OPT_OUTPUT 'o'
#define SHORT_OPTS "ho:"

static const struct option long_opts[] = {
	{ "rules", no_argument, NULL, OPT_RULES },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "by", required_argument, NULL, OPT_BY },
	{ "type", required_argument, NULL, OPT_TYPE },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "baseline", required_argument, NULL, OPT_BASELINE },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	REC_CLI_COMMON_OPTIONS,
};

static void list_rules(void)
{
	size_t n;
	const rec_finding_rule *l = rec_findings_rules(&n);
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (strlen(l[i].name) > w)
			w = strlen(l[i].name);
	for (size_t i = 0; i < n; i++) {
		rec_out_str(l[i].name);
		rec_viewtab_spaces(w + 2 - strlen(l[i].name));
		rec_out_str(l[i].description);
		rec_out_char('\n');
	}
}

static rec_cli_input regular_input(const char *name)
{
	struct stat st; /* a missing file is reported when read (exit 1) */
	if (strcmp(name, "-") == 0 || (stat(name, &st) == 0 && !S_ISREG(st.st_mode)))
		rec_cli_usage_error("%s: not a regular file (rec-report reads it twice)", name);
	return (rec_cli_input){ .name = name };
}

static void inputs(int argc, char **argv, int first, rec_cli_input **in, size_t *n)
{
	*n = (size_t)(argc - first);
	*in = rec_cli_xmalloc(*n * sizeof **in);
	for (size_t i = 0; i < *n; i++)
		(*in)[i] = regular_input(argv[first + (int)i]);
}

int main(int argc, char **argv)
{
	rec_cli_init("rec-report");
	rec_report_tool_opts o = { 0 };
	bool rules = false;
	rec_cli_input baseline;
	int c;
	while ((c = rec_cli_getopt(argc, argv, SHORT_OPTS, long_opts)) != -1) {
		switch (c) {
		case OPT_RULES: rules = true; break;
		case OPT_JSON: o.json = true; break;
		case OPT_BY: o.by = rec_cli_opt_nonempty("--by", "value", optarg); break;
		case OPT_TYPE: o.type = rec_cli_opt_nonempty("--type", "value", optarg); break;
		case OPT_FROM: rec_cli_window_opt(&o.window, false, optarg); break;
		case OPT_TO: rec_cli_window_opt(&o.window, true, optarg); break;
		case OPT_WIDTH: o.width = (uint32_t)rec_cli_opt_u64("--width", optarg, 40, 100000); break;
		case OPT_BASELINE:
			if (o.baseline)
				rec_cli_usage_error("--baseline given twice");
			baseline = regular_input(optarg);
			o.baseline = &baseline;
			break;
		case OPT_OUTPUT: o.output = rec_cli_opt_nonempty("--output", "value", optarg); break;
		default: rec_cli_common_option(c, usage_text);
		}
	}
	if (rules) {
		if (optind < argc)
			rec_cli_usage_error("--rules takes no operands");
		list_rules();
		return rec_cli_finish(REC_EXIT_OK);
	}
	if (optind >= argc)
		rec_cli_usage_error("no input file");
	rec_cli_input *in;
	size_t n;
	inputs(argc, argv, optind, &in, &n);
	rec_cli_window_check(&o.window, true);
	if (o.output && o.json)
		rec_cli_usage_error("--output writes the HTML page: not with --json");
	if (o.output && o.baseline)
		rec_cli_usage_error("--output writes the HTML page of one recording: not with --baseline");
	int rc = rec_report_run(&o, in, n, NULL, NULL);
	free(in);
	return rec_cli_finish(rc);
}
#endif /* REC_TOOL_NO_MAIN */
