/* SPDX-License-Identifier: MIT */
/*
 * rec-scrub - write a copy of a recording without chosen event types, or
 * with chosen fields blanked (secrets, user data in paths), like `jfr
 * scrub`.  Every chunk is decoded and re-encoded through the writer; the
 * rest stays equivalent in content: run identity, times, threads, stacks,
 * types and every other value.
 */
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/rewrite.h"
#include "common/tools.h"
#include "rec/archive.h"
#include "rec/rec.h"

/* The run's options (rec_scrub_run sets them). */
static const rec_scrub_opts *g_opts;

/* --include-events and --exclude-events against the types of IN: a
 * pattern that matches no type is a usage error (cli.h's shared check). */
static rec_cli_typesel incl_sel, excl_sel;

static bool match_any(const char *const *patterns, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (rec_cli_name_matches(patterns[i], s))
			return true;
	return false;
}

static bool type_kept(const rec_type *t)
{
	if (g_opts->ninclude && !match_any(g_opts->include, g_opts->ninclude, t->name))
		return false;
	return !match_any(g_opts->exclude, g_opts->nexclude, t->name);
}

static bool field_blanked(const rec_type *t, const rec_field *f)
{
	for (size_t i = 0; i < g_opts->nblank; i++) {
		const char *p = g_opts->blank[i];
		const char *dot = strrchr(p, '.');
		if (!dot) {
			if (fnmatch(p, f->name, 0) == 0)
				return true;
			continue;
		}
		char tp[512];
		size_t n = (size_t)(dot - p);
		if (n >= sizeof tp)
			continue;
		memcpy(tp, p, n);
		tp[n] = '\0';
		if (fnmatch(tp, t->name, 0) == 0 && fnmatch(dot + 1, f->name, 0) == 0)
			return true;
	}
	return false;
}

/* ---- the output ------------------------------------------------------------ */
static rec_rewrite rw;
static uint64_t n_blanked;

static bool keep_type(void *ctx, const rec_type *t)
{
	(void)ctx;
	return type_kept(t);
}

static rec_status put_event(rec_rewrite *w, const rec_event *ev)
{
	const rec_type *t = ev->type;
	bool blanked[REC_MAX_FIELDS];
	for (uint32_t i = 0; i < t->field_count; i++)
		blanked[i] = field_blanked(t, &t->fields[i]);
	return rec_rewrite_event(w, ev, blanked, &n_blanked);
}

/* The selections are checked on the chunks read when IN could not be
 * scanned first. */
static void note_chunk(void *ctx, const rec_chunk_info *ci)
{
	(void)ctx;
	rec_cli_typesel_chunk(&incl_sel, ci);
	rec_cli_typesel_chunk(&excl_sel, ci);
}

/* The report line on stderr. */
static void report(const rec_reader_stats *rs)
{
	char extra[96] = "";
	if (rs->unknown_types)
		snprintf(extra, sizeof extra, ", %" PRIu64 " events of types without metadata left out",
			 rs->unknown_types);
	uint64_t kept = rw.events_kept, removed = rw.events_removed, chunks_in = rw.chunks_in;
	rec_cli_file_error(rw.in_name, "%" PRIu64 " of %" PRIu64 " events kept (%" PRIu64
			   " removed), %" PRIu64 " field%s blanked, %" PRIu64 " chunk%s read%s",
			   kept, kept + removed, removed, n_blanked,
			   n_blanked == 1 ? "" : "s", chunks_in, chunks_in == 1 ? "" : "s", extra);
}

static void free_run(void)
{
	rec_rewrite_free(&rw);
	rec_cli_typesel_free(&incl_sel);
	rec_cli_typesel_free(&excl_sel);
	n_blanked = 0;
	g_opts = NULL;
}

/* Scrub IN into OUT: the usage checks (before OUT is touched for a regular
 * IN), the chunks, OUT committed or discarded, the report. */
static int scrub(const rec_cli_input *input, const char *out)
{
	/* A regular IN is checked before OUT is touched; standard input while
	 * it is read (OUT is then discarded, or was written already if it is
	 * not a regular file). */
	bool scanned = rec_cli_typesel_scan(&incl_sel, input) && rec_cli_typesel_scan(&excl_sel, input);
	if (scanned && (rec_cli_typesel_check(&incl_sel) != REC_EXIT_OK ||
			rec_cli_typesel_check(&excl_sel) != REC_EXIT_OK))
		return REC_EXIT_USAGE;
	if (rec_rewrite_same_file(input, out))
		return rec_cli_usage_fail("OUT is the same file as IN");

	rec_reader *r = rec_cli_input_open(input, REC_READ_VERIFY);
	if (!r)
		return REC_EXIT_DATA;
	if (!rec_rewrite_open(&rw, out)) {
		rec_reader_close(r);
		return REC_EXIT_DATA;
	}
	rw.keep_type = keep_type;
	rw.put_event = put_event;
	rw.chunk_read = scanned ? NULL : note_chunk;

	int rc = REC_EXIT_OK;
	bool failed = !rec_rewrite_all(&rw, r, &rc);
	rec_reader_stats rs;
	rec_reader_get_stats(r, &rs);
	rec_reader_close(r);
	failed = rec_rewrite_end(&rw, failed);
	int usage = REC_EXIT_OK;
	if (!failed && !scanned &&
	    ((usage = rec_cli_typesel_check(&incl_sel)) != REC_EXIT_OK ||
	     (usage = rec_cli_typesel_check(&excl_sel)) != REC_EXIT_OK))
		failed = true;
	failed = rec_rewrite_commit(&rw, failed);
	if (!g_opts->quiet && usage == REC_EXIT_OK)
		report(&rs);
	return usage != REC_EXIT_OK ? usage : failed ? REC_EXIT_DATA : rc;
}

int rec_scrub_run(const rec_scrub_opts *opts, const rec_cli_input *input, FILE *out, FILE *err)
{
	rec_cli_set_streams(out ? out : stdout, err);
	if (!opts->nexclude && !opts->ninclude && !opts->nblank && !opts->layout)
		return rec_cli_usage_fail(
			"nothing to scrub: give --exclude-events, --include-events, --blank or --layout");
	g_opts = opts;
	memset(&rw, 0, sizeof rw);
	rw.in_name = input->name;
	rw.layout = opts->layout;
	rec_cli_typesel_init(&incl_sel, opts->include, opts->ninclude, 0);
	rec_cli_typesel_init(&excl_sel, opts->exclude, opts->nexclude, 0);
	int rc = scrub(input, opts->output ? opts->output : "-");
	free_run();
	rec_out_flush();
	return rc;
}

#ifndef REC_TOOL_NO_MAIN
static const char usage_text[] =
	"Usage: rec-scrub [OPTIONS] IN OUT\n"
	"Write a copy of the recording IN to OUT without the chosen event types,\n"
	"or with the chosen fields blanked.  Each chunk of IN becomes one chunk of\n"
	"OUT, re-encoded by the writer: same runs (Run_Id, Pid, Process_Start), same\n"
	"event times and durations, threads, stack traces, types and every value\n"
	"not blanked; pool ids and compression may differ (content, not bytes, is\n"
	"kept).  Ticks are kept exactly; with a tick frequency other than 1 GHz a\n"
	"tick's wall-clock time may round up to 2 ns the other way (the writer's\n"
	"time anchor is the run's first chunk, not the original writer's anchor).\n"
	"A run that closed cleanly still ends with a FINAL chunk, a run without\n"
	"one still has none.\n"
	"\n"
	"Options (at least one of them):\n"
	"  --exclude-events=GLOB[,GLOB...]  leave out events whose type name matches\n"
	"                                   (e.g. 'rec.Log,app.*'); their types are\n"
	"                                   left out of the metadata too\n"
	"  --include-events=GLOB[,GLOB...]  keep only events whose type name matches\n"
	"  --blank=FIELD[,FIELD...]         blank matching fields of the events kept:\n"
	"                                   strings become \"\", text and blobs empty,\n"
	"                                   numbers, times, thread and stack fields 0.\n"
	"                                   FIELD is TYPE.FIELD (split at the last\n"
	"                                   dot: 'rec.FileRead.path') or FIELD for\n"
	"                                   every type; both parts may be globs\n"
	"                                   ('*.path', 'app.*.user')\n"
	"  --layout=one|split               the EVENTS layout of OUT: one stream (what\n"
	"                                   readers before format 1.3 read) or split\n"
	"                                   in four streams (1.3, smaller); default:\n"
	"                                   each run's as in IN.  '--layout=one' alone\n"
	"                                   converts a file for such a reader\n"
	"  -q, --quiet                      no report line\n"
	"  -h, --help                       show this help and exit\n"
	"  --version                        show the library version and exit\n"
	"Options may be repeated; exclusion wins over inclusion.  A GLOB that matches\n"
	"no type of IN is a usage error that lists the types IN has.  IN may be '-'\n"
	"(standard input), OUT '-' (standard output); OUT must not be IN.  A regular\n"
	"file OUT is written through a temporary file renamed at the end; a device\n"
	"or a FIFO is written directly, never replaced.  The report on stderr:\n"
	"  rec-scrub: IN: 120 of 150 events kept (30 removed), 40 fields blanked, 3 chunks\n"
	"Not handled: the event header's own thread and stack (eventThread,\n"
	"stackTrace) cannot be blanked; fields of a type unknown to this version\n"
	"make their chunk unsupported (reported, left out); a run whose chunks are\n"
	"not adjacent in IN gets chunk sequence numbers from 0 again where it\n"
	"resumes (rec-cat orders runs first).\n"
	"\n"
	"Exit status: 0 success, 1 a damaged or unsupported chunk was left out or\n"
	"reading or writing failed, 2 usage error.\n";

enum { OPT_EXCLUDE = 256, OPT_INCLUDE, OPT_BLANK, OPT_LAYOUT };

static const struct option long_opts[] = {
	{ "exclude-events", required_argument, NULL, OPT_EXCLUDE },
	{ "include-events", required_argument, NULL, OPT_INCLUDE },
	{ "blank", required_argument, NULL, OPT_BLANK },
	{ "layout", required_argument, NULL, OPT_LAYOUT },
	{ "quiet", no_argument, NULL, 'q' },
	REC_CLI_COMMON_OPTIONS,
};


int main(int argc, char **argv)
{
	rec_cli_init("rec-scrub");
	rec_cli_list excl = { 0 }, incl = { 0 }, blank = { 0 };
	rec_scrub_opts so = { 0 };
	int c;
	while ((c = rec_cli_getopt(argc, argv, "hq", long_opts)) != -1) {
		switch (c) {
		case OPT_EXCLUDE: rec_cli_list_add_csv(&excl, optarg); break;
		case OPT_INCLUDE: rec_cli_list_add_csv(&incl, optarg); break;
		case OPT_BLANK: rec_cli_list_add_csv(&blank, optarg); break;
		case OPT_LAYOUT:
			if (strcmp(optarg, "one") == 0)
				so.layout = REC_EVENTS_ONE_STREAM;
			else if (strcmp(optarg, "split") == 0)
				so.layout = REC_EVENTS_SPLIT;
			else
				rec_cli_usage_error("--layout: '%s' is not one or split", optarg);
			break;
		case 'q': so.quiet = true; break;
		default: rec_cli_common_option(c, usage_text);
		}
	}
	if (!excl.count && !incl.count && !blank.count && !so.layout)
		rec_cli_usage_error(
			"nothing to scrub: give --exclude-events, --include-events, --blank or --layout");
	if (argc - optind != 2)
		rec_cli_usage_error(argc - optind < 2 ? "need IN and OUT" : "too many arguments");
	const rec_cli_input in = { .name = argv[optind] };
	so.output = argv[optind + 1];
	so.include = (const char *const *)incl.items;
	so.ninclude = incl.count;
	so.exclude = (const char *const *)excl.items;
	so.nexclude = excl.count;
	so.blank = (const char *const *)blank.items;
	so.nblank = blank.count;
	int rc = rec_scrub_run(&so, &in, NULL, NULL);
	rec_cli_list_free(&excl);
	rec_cli_list_free(&incl);
	rec_cli_list_free(&blank);
	return rec_cli_finish(rc);
}
#endif /* REC_TOOL_NO_MAIN */
