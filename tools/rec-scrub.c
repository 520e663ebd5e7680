/* SPDX-License-Identifier: MIT */
/*
 * rec-scrub - write a copy of a recording without chosen event types, or
 * with chosen fields blanked (secrets, user data in paths), like `jfr
 * scrub`.  Every chunk is decoded and re-encoded through the writer; the
 * rest stays equivalent in content: run identity, times, threads, stacks,
 * types and every other value.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cli.h"
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

/* ---- a set of ids (pool entries defined in the current writer) ------------ */
typedef struct idset {
	uint64_t *v;
	size_t cap, n;
} idset;

static bool idset_add(idset *s, uint64_t id) /* true if new */
{
	if (s->n * 2 >= s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 256;
		uint64_t *nv = rec_cli_xmalloc(ncap * sizeof(uint64_t));
		memset(nv, 0, ncap * sizeof(uint64_t));
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->v[i])
				continue;
			size_t j = (size_t)((s->v[i] * 0x9E3779B97F4A7C15ull) >> 20) & (ncap - 1);
			while (nv[j])
				j = (j + 1) & (ncap - 1);
			nv[j] = s->v[i];
		}
		free(s->v);
		s->v = nv;
		s->cap = ncap;
	}
	size_t j = (size_t)((id * 0x9E3779B97F4A7C15ull) >> 20) & (s->cap - 1);
	for (;; j = (j + 1) & (s->cap - 1)) {
		if (s->v[j] == id)
			return false;
		if (!s->v[j]) {
			s->v[j] = id;
			s->n++;
			return true;
		}
	}
}

static void idset_clear(idset *s)
{
	if (s->v)
		memset(s->v, 0, s->cap * sizeof(uint64_t));
	s->n = 0;
}

/* ---- the output ------------------------------------------------------------ */
typedef struct out_state {
	rec_writer *w;
	rec_cli_outfile of;
	rec_sink sink;   /* onto of */
	bool open;
	uint64_t run_id;
	int64_t process_start_ns;
	uint32_t pid;
	uint64_t tick_frequency;
	bool last_final;       /* the run's latest input chunk was FINAL */
	idset types, threads, modules, frames, stacks;
	uint64_t frame_ids[REC_MAX_STACK_DEPTH];
	uint64_t chunks_before;
} out_state;

static out_state o;
static const char *in_name;

static rec_status wfail(rec_status st, const char *what)
{
	if (!rec_cli_outfile_failed(&o.of)) /* else reported once, naming OUT */
		rec_cli_error("%s: %s", what, rec_writer_errmsg(o.w));
	return st;
}

static rec_status str_id(const char *s, size_t len, bool empty_is_none, uint64_t *id)
{
	if (!s || (empty_is_none && len == 0)) {
		*id = 0;
		return REC_OK;
	}
	rec_status st = rec_writer_intern_string(o.w, s, len, id);
	return st == REC_OK ? st : wfail(st, "intern_string");
}

static rec_status def_thread(const rec_thread *t, uint64_t *id)
{
	*id = t ? t->id : 0;
	if (!t || !idset_add(&o.threads, t->id))
		return REC_OK;
	uint64_t name;
	rec_status st = str_id(t->name, t->name ? strlen(t->name) : 0, true, &name);
	if (st == REC_OK && (st = rec_writer_define_thread(o.w, t->id, t->os_tid, name)) != REC_OK)
		return wfail(st, "define_thread");
	return st;
}

static rec_status def_stack(const rec_stack *s, uint64_t *id)
{
	*id = s ? s->id : 0;
	if (!s || !idset_add(&o.stacks, s->id))
		return REC_OK;
	rec_status st = REC_OK;
	uint32_t depth = 0, first = 0; /* first: the frame's first inlined function */
	for (uint32_t i = 0; i < s->depth && depth < REC_MAX_STACK_DEPTH && st == REC_OK; i++) {
		const rec_frame *f = s->frames[i];
		if (f->inline_depth) /* part of the next FRAMES entry's source */
			continue;
		uint32_t inl = first;
		first = i + 1;
		o.frame_ids[depth++] = f->id;
		if (!idset_add(&o.frames, f->id))
			continue;
		const rec_module *m = f->module;
		if (m && idset_add(&o.modules, m->id)) {
			uint64_t path, bid;
			if ((st = str_id(m->path, strlen(m->path), true, &path)) != REC_OK ||
			    (st = str_id(m->build_id, strlen(m->build_id), true, &bid)) != REC_OK)
				return st;
			if ((st = rec_writer_define_module(o.w, m->id, path, bid, m->base)) != REC_OK)
				return wfail(st, "define_module");
		}
		uint64_t fn;
		if ((st = str_id(f->function, strlen(f->function), true, &fn)) != REC_OK)
			return st;
		if ((st = rec_writer_define_frame(o.w, f->id, fn, m ? m->id : 0, f->module_offset,
						  f->function_offset)) != REC_OK)
			return wfail(st, "define_frame");
		if ((st = rec_writer_copy_frame_source(o.w, s, inl, i)) != REC_OK)
			return wfail(st, "define_frame_source");
	}
	if (st == REC_OK && (st = rec_writer_define_stack(o.w, s->id, s->flags, o.frame_ids, depth)) != REC_OK)
		return wfail(st, "define_stack");
	return st;
}

/* Finish the current run's writer: a FINAL chunk if the input run had one. */
static rec_status end_run(void)
{
	if (!o.open)
		return REC_OK;
	rec_status st;
	o.open = false;
	if (o.last_final) {
		st = rec_writer_close(o.w);
		if (st != REC_OK && !rec_cli_outfile_failed(&o.of))
			rec_cli_error("closing the output: %s", rec_strerror(st));
	} else {
		st = rec_writer_flush(o.w);
		if (st != REC_OK && !rec_cli_outfile_failed(&o.of))
			rec_cli_error("writing the output: %s", rec_writer_errmsg(o.w));
		rec_writer_abandon(o.w); /* the input run has no FINAL chunk either */
	}
	o.w = NULL;
	return st;
}

static rec_status start_run(const rec_chunk_info *ci)
{
	rec_writer_options wo = REC_WRITER_OPTIONS_INIT;
	wo.codec = ci->codec;
	wo.chunk_events_size = 32u << 20; /* one output chunk per input chunk */
	wo.run_id = ci->run_id;
	wo.pid = ci->pid;
	wo.process_start_ns = ci->process_start_ns;
	wo.tick_frequency = ci->tick_frequency;
	wo.anchor_wall_ns = ci->start_wall_ns;
	wo.anchor_ticks = ci->start_ticks;
	rec_status st = rec_writer_open(&o.w, &o.sink, &wo);
	if (st != REC_OK) {
		rec_cli_error("cannot start a writer: %s", rec_strerror(st));
		return st;
	}
	if (ci->run_id == 0 || ci->pid == 0 || ci->process_start_ns == 0) {
		/* 0 means "choose" to the writer: the run identity would change. */
		rec_writer_abandon(o.w);
		o.w = NULL;
		rec_cli_file_error(in_name, "chunk %" PRIu64 ": a zero Run_Id, Pid or Process_Start_Ns cannot be kept",
				   ci->index);
		return REC_ERR_UNSUPPORTED;
	}
	o.open = true;
	o.run_id = ci->run_id;
	o.pid = ci->pid;
	o.process_start_ns = ci->process_start_ns;
	o.tick_frequency = ci->tick_frequency;
	o.last_final = false;
	idset_clear(&o.types);
	idset_clear(&o.threads);
	idset_clear(&o.modules);
	idset_clear(&o.frames);
	idset_clear(&o.stacks);
	return REC_OK;
}

static uint64_t n_kept, n_removed, n_blanked;

static rec_status put_event(const rec_event *ev)
{
	const rec_type *t = ev->type;
	uint64_t th = 0, sk = 0;
	rec_status st;
	if ((t->flags & REC_EVENT_HAS_THREAD) && (st = def_thread(ev->thread, &th)) != REC_OK)
		return st;
	if ((t->flags & REC_EVENT_HAS_STACK) && (st = def_stack(ev->stack, &sk)) != REC_OK)
		return st;
	/* References in fields are defined before the event begins. */
	uint64_t refs[REC_MAX_FIELDS];
	bool blanked[REC_MAX_FIELDS];
	for (uint32_t i = 0; i < t->field_count; i++) {
		const rec_value *v = &ev->values[i];
		blanked[i] = field_blanked(t, &t->fields[i]);
		refs[i] = 0;
		switch (t->fields[i].type) {
		case REC_TYPE_STRING:
			if (blanked[i])
				st = str_id("", 0, false, &refs[i]);
			else
				st = str_id(v->v.s.ptr, v->v.s.len, false, &refs[i]);
			break;
		case REC_TYPE_THREAD:
			st = blanked[i] ? REC_OK : def_thread(v->v.thread, &refs[i]);
			break;
		case REC_TYPE_STACK:
			st = blanked[i] ? REC_OK : def_stack(v->v.stack, &refs[i]);
			break;
		default:
			st = REC_OK;
		}
		if (st != REC_OK)
			return st;
	}
	if ((st = rec_writer_begin(o.w, t->id, ev->ticks, ev->duration_ticks, th, sk)) != REC_OK)
		return wfail(st, "begin");
	for (uint32_t i = 0; i < t->field_count && st == REC_OK; i++) {
		const rec_value *v = &ev->values[i];
		bool b = blanked[i];
		n_blanked += b;
		switch (t->fields[i].type) {
		case REC_TYPE_STRING:
		case REC_TYPE_THREAD:
		case REC_TYPE_STACK:
			st = rec_writer_put_u64(o.w, refs[i]);
			break;
		case REC_TYPE_I8: case REC_TYPE_I16: case REC_TYPE_I32: case REC_TYPE_I64:
			st = rec_writer_put_i64(o.w, b ? 0 : v->v.i);
			break;
		case REC_TYPE_F32: case REC_TYPE_F64:
			st = rec_writer_put_f64(o.w, b ? 0.0 : v->v.f);
			break;
		case REC_TYPE_BLOB: case REC_TYPE_TEXT:
			st = rec_writer_put_bytes(o.w, b ? "" : v->v.s.ptr, b ? 0 : v->v.s.len);
			break;
		default: /* bool, u*, timestamp, duration */
			st = rec_writer_put_u64(o.w, b ? 0 : v->v.u);
			break;
		}
	}
	if (st == REC_OK)
		st = rec_writer_end(o.w);
	if (st != REC_OK)
		return wfail(st, "event");
	return REC_OK;
}

static bool known_field_type(uint32_t type)
{
	return strcmp(rec_field_type_name(type), "unknown") != 0;
}

/* One verified chunk: its events through the writer. */
static rec_status scrub_chunk(rec_reader *r, const rec_chunk_info *ci, bool *unsupported)
{
	*unsupported = false;
	for (uint32_t i = 0; i < ci->type_count; i++) {
		const rec_type *t = &ci->types[i];
		if (!type_kept(t))
			continue;
		for (uint32_t k = 0; k < t->field_count; k++)
			if (!known_field_type(t->fields[k].type)) {
				*unsupported = true;
				rec_cli_file_error(in_name, "chunk %" PRIu64 " at offset %" PRIu64
						   ": type %s: field %s has a type unknown to this version (0x%x): chunk left out",
						   ci->index, ci->offset, t->name, t->fields[k].name,
						   t->fields[k].type);
				return REC_OK;
			}
	}
	if (o.open && (o.run_id != ci->run_id || o.pid != ci->pid ||
		       o.process_start_ns != ci->process_start_ns ||
		       o.tick_frequency != ci->tick_frequency || o.last_final)) {
		rec_status st = end_run();
		if (st != REC_OK)
			return st;
	}
	if (!o.open) {
		rec_status st = start_run(ci);
		if (st == REC_ERR_UNSUPPORTED) {
			*unsupported = true;
			return REC_OK;
		}
		if (st != REC_OK)
			return st;
	}
	for (uint32_t i = 0; i < ci->type_count; i++) {
		const rec_type *t = &ci->types[i];
		if (!type_kept(t) || !idset_add(&o.types, t->id))
			continue;
		rec_status st = rec_writer_add_type(o.w, t);
		if (st != REC_OK)
			return wfail(st, "add_type");
	}
	/* The chunk's events: as many as its statistics count for known types
	 * (verified), so the iteration stops at the chunk's end. */
	uint64_t n = 0;
	for (uint32_t i = 0; i < ci->type_stats_count; i++)
		if (ci->type_stats[i].type)
			n += ci->type_stats[i].count;
	if (ci->dropped_events)
		rec_writer_note_dropped(o.w, ci->dropped_events);
	bool final = ci->flags & REC_CHUNK_FINAL;
	for (uint64_t k = 0; k < n; k++) {
		rec_event ev;
		rec_status st = rec_reader_next_event(r, &ev);
		if (st != REC_OK) {
			rec_cli_problem(in_name, rec_reader_problem(r), st);
			return st;
		}
		if (!type_kept(ev.type)) {
			n_removed++;
			continue;
		}
		st = put_event(&ev);
		if (st != REC_OK)
			return st;
		n_kept++;
	}
	o.last_final = final;
	if (!final) {
		rec_status st = rec_writer_flush(o.w);
		if (st != REC_OK)
			return wfail(st, "flush");
	}
	return REC_OK;
}

/* Every intact chunk of r scrubbed into the output.  false if the output
 * failed (reported); *rc is REC_EXIT_DATA after a chunk left out.  The
 * selections are checked on the chunks read when IN could not be scanned
 * first (!scanned). */
static bool scrub_all(rec_reader *r, bool scanned, uint64_t *chunks_in, int *rc)
{
	rec_intact_tally t;
	memset(&t, 0, sizeof t);
	for (;;) {
		const rec_chunk_info *ci;
		rec_status st = rec_reader_next_intact(r, &ci, &t);
		if (st == REC_END)
			return true;
		if (st != REC_OK) {
			rec_cli_problem(in_name, rec_reader_problem(r), st);
			*rc = REC_EXIT_DATA;
			if (t.stopped)
				return true;
			continue;
		}
		(*chunks_in)++;
		if (!scanned) {
			rec_cli_typesel_chunk(&incl_sel, ci);
			rec_cli_typesel_chunk(&excl_sel, ci);
		}
		bool unsupported;
		st = scrub_chunk(r, ci, &unsupported);
		if (unsupported)
			*rc = REC_EXIT_DATA;
		if (st != REC_OK)
			return false;
	}
}

/* The report line on stderr. */
static void report(const rec_reader_stats *rs, uint64_t chunks_in)
{
	char extra[96] = "";
	if (rs->unknown_types)
		snprintf(extra, sizeof extra, ", %" PRIu64 " events of types without metadata left out",
			 rs->unknown_types);
	rec_cli_file_error(in_name, "%" PRIu64 " of %" PRIu64 " events kept (%" PRIu64
			   " removed), %" PRIu64 " field%s blanked, %" PRIu64 " chunk%s read%s",
			   n_kept, n_kept + n_removed, n_removed, n_blanked,
			   n_blanked == 1 ? "" : "s", chunks_in, chunks_in == 1 ? "" : "s", extra);
}

static void free_run(void)
{
	free(o.types.v);
	free(o.threads.v);
	free(o.modules.v);
	free(o.frames.v);
	free(o.stacks.v);
	memset(&o, 0, sizeof o);
	rec_cli_typesel_free(&incl_sel);
	rec_cli_typesel_free(&excl_sel);
	n_kept = n_removed = n_blanked = 0;
	in_name = NULL;
	g_opts = NULL;
}

/* Scrub IN into OUT: the usage checks (before OUT is touched for a regular
 * IN), the chunks, OUT committed or discarded, the report. */
static int scrub(const rec_cli_input *input, const char *out)
{
	const char *in = input->name;
	/* A regular IN is checked before OUT is touched; standard input while
	 * it is read (OUT is then discarded, or was written already if it is
	 * not a regular file). */
	bool scanned = rec_cli_typesel_scan(&incl_sel, input) && rec_cli_typesel_scan(&excl_sel, input);
	if (scanned && (rec_cli_typesel_check(&incl_sel) != REC_EXIT_OK ||
			rec_cli_typesel_check(&excl_sel) != REC_EXIT_OK))
		return REC_EXIT_USAGE;
	bool to_stdout = strcmp(out, "-") == 0;
	struct stat si, so;
	if (!to_stdout && !rec_cli_input_is_stdin(input) && !input->data && stat(in, &si) == 0 &&
	    stat(out, &so) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
		return rec_cli_usage_fail("OUT is the same file as IN");

	rec_reader *r = rec_cli_input_open(input, REC_READ_VERIFY);
	if (!r)
		return REC_EXIT_DATA;
	if (!rec_cli_outfile_open(&o.of, out)) {
		rec_reader_close(r);
		return REC_EXIT_DATA;
	}
	o.sink = rec_cli_outfile_sink(&o.of);

	int rc = REC_EXIT_OK;
	uint64_t chunks_in = 0;
	bool failed = !scrub_all(r, scanned, &chunks_in, &rc);
	rec_reader_stats rs;
	rec_reader_get_stats(r, &rs);
	rec_reader_close(r);
	if (failed) {
		if (o.open) {
			rec_writer_abandon(o.w);
			o.open = false;
		}
	} else if (end_run() != REC_OK) {
		failed = true;
	}
	int usage = REC_EXIT_OK;
	if (!failed && !scanned &&
	    ((usage = rec_cli_typesel_check(&incl_sel)) != REC_EXIT_OK ||
	     (usage = rec_cli_typesel_check(&excl_sel)) != REC_EXIT_OK))
		failed = true;
	if (failed)
		rec_cli_outfile_discard(&o.of);
	else if (!rec_cli_outfile_commit(&o.of))
		failed = true;
	if (!g_opts->quiet && usage == REC_EXIT_OK)
		report(&rs, chunks_in);
	return usage != REC_EXIT_OK ? usage : failed ? REC_EXIT_DATA : rc;
}

int rec_scrub_run(const rec_scrub_opts *opts, const rec_cli_input *input, FILE *out, FILE *err)
{
	rec_cli_set_streams(out ? out : stdout, err);
	if (!opts->nexclude && !opts->ninclude && !opts->nblank)
		return rec_cli_usage_fail("nothing to scrub: give --exclude-events, --include-events or --blank");
	g_opts = opts;
	in_name = input->name;
	memset(&o, 0, sizeof o);
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

enum { OPT_VERSION = 256, OPT_EXCLUDE, OPT_INCLUDE, OPT_BLANK };

static const struct option long_opts[] = {
	{ "exclude-events", required_argument, NULL, OPT_EXCLUDE },
	{ "include-events", required_argument, NULL, OPT_INCLUDE },
	{ "blank", required_argument, NULL, OPT_BLANK },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
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
		case 'q': so.quiet = true; break;
		case 'h': rec_cli_help(usage_text);
		case OPT_VERSION: rec_cli_version();
		default: rec_cli_usage_error("unexpected option");
		}
	}
	if (!excl.count && !incl.count && !blank.count)
		rec_cli_usage_error("nothing to scrub: give --exclude-events, --include-events or --blank");
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
