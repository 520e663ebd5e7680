/* SPDX-License-Identifier: MIT */
/*
 * rec-lockgraph - the wait-for graph or the lock-order graph of a recording
 * (rec.LockWait, rec.LockOrder; analysis in libfmt/analysis/lock_graph.c), built
 * with Graphviz's libcgraph and written as DOT (agwrite) or rendered with
 * libgvc (dot layout) to SVG, PNG or PDF (tools/graphviz/lock_graphs.c, which
 * rec-report's HTML page uses too).  Lock-order cycles (potential
 * deadlocks) are coloured red and listed on stderr with the threads and
 * stacks involved.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/cli.h"
#include "common/tools.h"
#include "graphviz/lock_graphs.h"
#include "rec/lock_graph.h"
#include "rec/rec.h"

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

int rec_lockgraph_tool_run(const rec_lockgraph_tool_opts *o, const rec_cli_input *in, FILE *out,
			   FILE *err)
{
	if (!out)
		out = stdout;
	rec_cli_set_streams(out, err);
	rec_lockgraph_options lo = REC_LOCKGRAPH_OPTIONS_INIT;
	lo.min_wait_ns = o->min_wait_ns;
	/* The wait-for graph is pruned and grouped unless --all (rec/lock_graph.h) */
	lo.top = o->all ? 0 : o->top ? o->top : o->order ? 0 : REC_LOCKGRAPH_DEFAULT_TOP;
	lo.group = o->all || o->order ? 0 : REC_LOCKGRAPH_DEFAULT_GROUP;
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

	Agraph_t *g = rec_lockgraph_gv_build(res, o->order);
	bool has_cycle = res->cycle_count > 0;
	rec_lockgraph_close(lg);
	if (!g)
		return REC_EXIT_DATA;

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
		agclose(g);
		return REC_EXIT_DATA;
	}
	bool ok = rec_lockgraph_gv_write(g, o->format, f);
	agclose(g);
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
	"                      events); in the wait-for graph the default is 10, the\n"
	"                      locks left out are one node \"K other locks\", and per\n"
	"                      lock the 3 heaviest waiters and holders are drawn, the\n"
	"                      rest one node \"K other waiters (holders) of LOCK\"\n"
	"                      with their summed count and total (kind=group): no\n"
	"                      wait leaves the picture, the title says what was\n"
	"                      grouped\n"
	"  --all, --top 0      every lock, thread and edge (the order graph's default)\n"
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
       OPT_THREAD, OPT_CHECK, OPT_ALL };

static const struct option long_opts[] = {
	{ "graph", required_argument, NULL, OPT_GRAPH },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "output", required_argument, NULL, 'o' },
	{ "min-wait", required_argument, NULL, OPT_MIN_WAIT },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "thread", required_argument, NULL, OPT_THREAD },
	{ "check", no_argument, NULL, OPT_CHECK },
	REC_CLI_COMMON_OPTIONS,
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
		case 'o': o.output = rec_cli_opt_nonempty("--output", "file name", optarg); break;
		case OPT_MIN_WAIT: o.min_wait_ns = opt_duration("--min-wait", optarg); break;
		case OPT_TOP:
			o.top = (uint32_t)rec_cli_opt_u64("--top", optarg, 0, UINT32_MAX);
			o.all = o.top == 0;
			break;
		case OPT_ALL: o.all = true; break;
		case OPT_FROM:
			rec_cli_window_opt(&o.window, false, optarg);
			break;
		case OPT_TO:
			rec_cli_window_opt(&o.window, true, optarg);
			break;
		case OPT_THREAD: o.thread = rec_cli_opt_nonempty("--thread", "name", optarg); break;
		case OPT_CHECK: o.check = true; break;
		default: rec_cli_common_option(c, usage_text);
		}
	}
	rec_cli_input in = { .name = rec_cli_one_file(argc, argv) };
	if (!o.format)
		o.format = (o.output && format_from_name(o.output)) ? format_from_name(o.output) : "dot";
	rec_cli_window_check(&o.window, rec_cli_input_rereadable(&in));
	return rec_cli_finish(rec_lockgraph_tool_run(&o, &in, NULL, NULL));
}
#endif /* REC_TOOL_NO_MAIN */
