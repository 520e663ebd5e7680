/* SPDX-License-Identifier: MIT */
/*
 * rec-symbolize - write a copy of a recording whose frames carry names,
 * source files, lines and inline frames resolved after the fact from debug
 * files found by the modules' build-ids (rec/symbols.h: elfutils' libdwfl),
 * for recordings of stripped programs or made with REC_OPTIONS
 * symbolize=off.  Every chunk is decoded and re-encoded through the
 * writer, as rec-scrub does; only the frames change.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/rewrite.h"
#include "common/tools.h"
#include "rec/rec.h"
#include "rec/symbols.h"

/* The copy being written; its aux map: module id -> rec_symbols handle + 1,
 * per run. */
static rec_rewrite rw;

static rec_symbols *syms;
/* Distinct frames of each run: resolved, left as they were (no debug file
 * or nothing at their address), already with a source position. */
static uint64_t n_resolved, n_unresolved, n_had;
/* A list of strings (heap copies). */
typedef struct strlist {
	char **items;
	size_t count;
} strlist;

static void strlist_add(strlist *l, const char *s)
{
	l->items = rec_cli_xrealloc(l->items, (l->count + 1) * sizeof *l->items);
	l->items[l->count++] = rec_cli_xstrdup(s);
}

static void strlist_free(strlist *l)
{
	for (size_t i = 0; i < l->count; i++)
		free(l->items[i]);
	free(l->items);
	memset(l, 0, sizeof *l);
}

static strlist missing; /* modules without a debug file, "path (build-id)" */

static rec_status str_id(rec_rewrite *w, const char *s, uint64_t *id)
{
	return rec_rewrite_string(w, s, s ? strlen(s) : 0, true, id);
}

/* The rec_symbols handle of module m (opened on first use in the run), 0. */
static uint32_t module_handle(const rec_module *m)
{
	bool fresh;
	uint64_t *h = rec_cli_idmap_slot(&rw.aux, m->id, &fresh);
	if (fresh) {
		uint32_t hd = 0;
		if (rec_symbols_module(syms, m->path, m->build_id, m->base, &hd) == REC_OK) {
			*h = hd;
		} else {
			char what[4200];
			snprintf(what, sizeof what, "%s (build-id %s)", *m->path ? m->path : "?",
				 *m->build_id ? m->build_id : "none");
			bool seen = false;
			for (size_t i = 0; i < missing.count && !seen; i++)
				seen = strcmp(missing.items[i], what) == 0;
			if (!seen)
				strlist_add(&missing, what);
		}
	}
	return (uint32_t)*h;
}

/* Define frame f (s->frames[i], inlined functions from first): resolved
 * from the debug files when it has no source position yet, else as read. */
static rec_status def_frame(rec_rewrite *w, const rec_stack *s, uint32_t first, uint32_t i)
{
	const rec_frame *f = s->frames[i];
	const rec_module *m = f->module;
	rec_status st;
	uint64_t mod = m ? m->id : 0;
	if ((st = rec_rewrite_module(w, m)) != REC_OK)
		return st;
	rec_symbolized d;
	memset(&d, 0, sizeof d);
	bool want = m && !(f->file && *f->file) && i == first;
	uint32_t h = want ? module_handle(m) : 0;
	if (h && rec_symbols_resolve(syms, h, f->module_offset, (f->flags & REC_FRAME_PC_EXACT) != 0,
				     &d) == REC_OK &&
	    (d.function[0] || d.file[0])) {
		uint64_t fn, file;
		if ((st = str_id(w, d.function[0] ? d.function : f->function, &fn)) != REC_OK)
			return st;
		uint64_t foff = d.function[0] ? d.function_offset : f->function_offset;
		if ((st = rec_writer_define_frame(w->w, f->id, fn, mod, f->module_offset, foff)) != REC_OK)
			return rec_rewrite_fail(w, st, "define_frame");
		rec_frame_inline inl[REC_MAX_INLINE];
		uint32_t n = d.inline_count > REC_MAX_INLINE ? REC_MAX_INLINE : d.inline_count;
		for (uint32_t k = 0; k < n; k++) {
			inl[k].line = d.inlined[k].line;
			if ((st = str_id(w, d.inlined[k].function, &inl[k].function_string)) != REC_OK ||
			    (st = str_id(w, d.inlined[k].file, &inl[k].file_string)) != REC_OK)
				return st;
		}
		if ((st = str_id(w, d.file, &file)) != REC_OK)
			return st;
		uint32_t flags = f->flags & ~(uint32_t)REC_FRAME_UNSYMBOLIZED;
		if (flags || file || d.line || n) {
			st = rec_writer_define_frame_source(w->w, f->id, flags, file, d.line, inl, n);
			if (st != REC_OK)
				return rec_rewrite_fail(w, st, "define_frame_source");
		}
		n_resolved++;
		return REC_OK;
	}
	if (f->file && *f->file)
		n_had++;
	else
		n_unresolved++;
	return rec_rewrite_copy_frame(w, s, first, i);
}

static int symbolize(const char *in, const char *out, bool quiet)
{
	const rec_cli_input input = { .name = in };
	if (rec_rewrite_same_file(&input, out))
		return rec_cli_usage_fail("OUT is the same file as IN");
	rec_reader *r = rec_cli_input_open(&input, REC_READ_VERIFY);
	if (!r)
		return REC_EXIT_DATA;
	if (!rec_rewrite_open(&rw, out)) {
		rec_reader_close(r);
		return REC_EXIT_DATA;
	}
	rw.in_name = in;
	rw.def_frame = def_frame;
	int rc = REC_EXIT_OK;
	bool failed = !rec_rewrite_all(&rw, r, &rc);
	rec_reader_close(r);
	failed = rec_rewrite_end(&rw, failed);
	failed = rec_rewrite_commit(&rw, failed);
	if (!quiet) {
		uint64_t n_events = rw.events_kept, n_chunks = rw.chunks_copied;
		rec_cli_file_error(in, "%" PRIu64 " frames: %" PRIu64 " resolved, %" PRIu64
				   " left unresolved, %" PRIu64 " had source lines already; %" PRIu64
				   " events, %" PRIu64 " chunk%s",
				   n_resolved + n_unresolved + n_had, n_resolved, n_unresolved, n_had,
				   n_events, n_chunks, n_chunks == 1 ? "" : "s");
		for (size_t i = 0; i < missing.count; i++)
			rec_cli_file_error(in, "no debug file or binary found for %s",
					   missing.items[i]);
	}
	return failed ? REC_EXIT_DATA : rc;
}


int rec_symbolize_run(const rec_symbolize_opts *o, const rec_cli_input *in, FILE *out, FILE *err)
{
	rec_cli_set_streams(out ? out : stdout, err);
	if (o->only_debug_dirs && !o->ndebug_dirs)
		return rec_cli_usage_fail("--only-debug-dirs needs a --debug-dir");
	strlist dirs = { 0 };
	for (size_t i = 0; i < o->ndebug_dirs; i++)
		strlist_add(&dirs, o->debug_dirs[i]);
	if (!o->only_debug_dirs)
		strlist_add(&dirs, "/usr/lib/debug");
	n_resolved = n_unresolved = n_had = 0;
	memset(&rw, 0, sizeof rw);
	int rc = REC_EXIT_DATA;
	if (rec_symbols_open(&syms, (const char *const *)dirs.items, dirs.count) != REC_OK) {
		rec_cli_error("out of memory");
	} else {
		rc = symbolize(in->name, o->output ? o->output : "-", o->quiet);
		rec_symbols_close(syms);
		syms = NULL;
	}
	rec_rewrite_free(&rw);
	strlist_free(&dirs);
	strlist_free(&missing);
	rec_out_flush();
	return rc;
}

#ifndef REC_TOOL_NO_MAIN
static const char usage_text[] =
	"Usage: rec-symbolize [OPTIONS] IN OUT\n"
	"Write a copy of the recording IN to OUT whose frames have function names,\n"
	"source files, lines and inline frames, resolved from the modules' debug\n"
	"information: for recordings of stripped programs, or made with\n"
	"REC_OPTIONS=symbolize=off.  A frame's module is found by its path when the\n"
	"file there has the recorded build-id, else by build-id in each debug\n"
	"directory (DIR/.build-id/xx/yyyy.debug, or the binary DIR/.build-id/xx/yyyy);\n"
	"its debug file by build-id in the debug directories or by .gnu_debuglink\n"
	"(beside the module, in its .debug/ directory, under each DIR).  A frame\n"
	"that has a source position already is copied as it is; one that cannot be\n"
	"resolved stays as it was.  Events, times, threads and every value are\n"
	"kept, as rec-scrub keeps them (pool ids and compression may differ).\n"
	"\n"
	"Options:\n"
	"  --debug-dir DIR   search DIR for debug files (repeatable; default\n"
	"                    /usr/lib/debug, which is also searched after the DIRs)\n"
	"  --only-debug-dirs search only the --debug-dir DIRs, not /usr/lib/debug\n"
	"  -q, --quiet       no report\n"
	"  -h, --help        show this help and exit\n"
	"  --version         show the library version and exit\n"
	"IN may be '-' (standard input), OUT '-' (standard output); OUT must not be IN.\n"
	"The report on stderr counts the distinct frames of each run:\n"
	"  rec-symbolize: IN: 120 frames: 100 resolved, 20 left unresolved, 0 had source\n"
	"  lines already; 5000 events, 3 chunks\n"
	"and names each module for which no file was found.\n"
	"\n"
	"Exit status: 0 success (also with unresolved frames), 1 a damaged or\n"
	"unsupported chunk was left out or reading or writing failed, 2 usage error.\n";

enum { OPT_DEBUG_DIR = 256, OPT_ONLY };

static const struct option long_opts[] = {
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "only-debug-dirs", no_argument, NULL, OPT_ONLY },
	{ "quiet", no_argument, NULL, 'q' },
	REC_CLI_COMMON_OPTIONS,
};

int main(int argc, char **argv)
{
	rec_cli_init("rec-symbolize");
	strlist dirs = { 0 };
	rec_symbolize_opts so = { 0 };
	int c;
	while ((c = rec_cli_getopt(argc, argv, "hq", long_opts)) != -1) {
		switch (c) {
		case OPT_DEBUG_DIR: strlist_add(&dirs, optarg); break;
		case OPT_ONLY: so.only_debug_dirs = true; break;
		case 'q': so.quiet = true; break;
		default: rec_cli_common_option(c, usage_text);
		}
	}
	if (argc - optind != 2)
		rec_cli_usage_error(argc - optind < 2 ? "need IN and OUT" : "too many arguments");
	const rec_cli_input in = { .name = argv[optind] };
	so.output = argv[optind + 1];
	so.debug_dirs = (const char *const *)dirs.items;
	so.ndebug_dirs = dirs.count;
	int rc = rec_symbolize_run(&so, &in, NULL, NULL);
	strlist_free(&dirs);
	return rec_cli_finish(rc);
}
#endif /* REC_TOOL_NO_MAIN */
