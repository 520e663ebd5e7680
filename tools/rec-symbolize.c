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
#include <sys/stat.h>

#include "common/cli.h"
#include "rec/archive.h"
#include "rec/rec.h"
#include "rec/symbols.h"

/* ---- a map of ids (pool entries defined in the current writer; module id ->
 * rec_symbols handle + 1) ---------------------------------------------------- */
typedef struct idmap {
	uint64_t *k, *v;
	size_t cap, n;
} idmap;

static uint64_t *idmap_slot(idmap *m, uint64_t id, bool *fresh)
{
	if (m->n * 2 >= m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 256;
		uint64_t *nk = rec_cli_xmalloc(ncap * sizeof(uint64_t));
		uint64_t *nv = rec_cli_xmalloc(ncap * sizeof(uint64_t));
		memset(nk, 0, ncap * sizeof(uint64_t));
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->k[i])
				continue;
			size_t j = (size_t)((m->k[i] * 0x9E3779B97F4A7C15ull) >> 20) & (ncap - 1);
			while (nk[j])
				j = (j + 1) & (ncap - 1);
			nk[j] = m->k[i];
			nv[j] = m->v[i];
		}
		free(m->k);
		free(m->v);
		m->k = nk;
		m->v = nv;
		m->cap = ncap;
	}
	size_t j = (size_t)((id * 0x9E3779B97F4A7C15ull) >> 20) & (m->cap - 1);
	for (;; j = (j + 1) & (m->cap - 1)) {
		if (m->k[j] == id) {
			*fresh = false;
			return &m->v[j];
		}
		if (!m->k[j]) {
			m->k[j] = id;
			m->v[j] = 0;
			m->n++;
			*fresh = true;
			return &m->v[j];
		}
	}
}

static void idmap_clear(idmap *m)
{
	if (m->k)
		memset(m->k, 0, m->cap * sizeof(uint64_t));
	m->n = 0;
}

static void idmap_free(idmap *m)
{
	free(m->k);
	free(m->v);
	memset(m, 0, sizeof *m);
}

/* ---- the run being written -------------------------------------------------- */
static struct {
	rec_writer *w;
	rec_cli_outfile of;
	rec_sink sink;
	bool open, last_final;
	uint64_t run_id, tick_frequency;
	int64_t process_start_ns;
	uint32_t pid;
	idmap types, threads, modules, frames, stacks, handles;
	uint64_t frame_ids[REC_MAX_STACK_DEPTH];
} o;

static rec_symbols *syms;
static const char *in_name;
/* Distinct frames of each run: resolved, left as they were (no debug file
 * or nothing at their address), already with a source position. */
static uint64_t n_resolved, n_unresolved, n_had, n_events, n_chunks;
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

static rec_status wfail(rec_status st, const char *what)
{
	if (!rec_cli_outfile_failed(&o.of))
		rec_cli_error("%s: %s", what, rec_writer_errmsg(o.w));
	return st;
}

static rec_status str_id(const char *s, uint64_t *id)
{
	*id = 0;
	if (!s || !*s)
		return REC_OK;
	rec_status st = rec_writer_intern_string(o.w, s, strlen(s), id);
	return st == REC_OK ? st : wfail(st, "intern_string");
}

static rec_status def_thread(const rec_thread *t, uint64_t *id)
{
	bool fresh;
	*id = t ? t->id : 0;
	if (!t)
		return REC_OK;
	idmap_slot(&o.threads, t->id, &fresh);
	if (!fresh)
		return REC_OK;
	uint64_t name = 0;
	rec_status st = t->name && *t->name
				? rec_writer_intern_string(o.w, t->name, strlen(t->name), &name)
				: REC_OK;
	if (st == REC_OK)
		st = rec_writer_define_thread(o.w, t->id, t->os_tid, name);
	return st == REC_OK ? st : wfail(st, "define_thread");
}

/* The rec_symbols handle of module m (opened on first use in the run), 0. */
static uint32_t module_handle(const rec_module *m)
{
	bool fresh;
	uint64_t *h = idmap_slot(&o.handles, m->id, &fresh);
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
static rec_status def_frame(const rec_stack *s, uint32_t first, uint32_t i)
{
	const rec_frame *f = s->frames[i];
	const rec_module *m = f->module;
	rec_status st;
	uint64_t mod = m ? m->id : 0;
	if (m) {
		bool fresh;
		idmap_slot(&o.modules, m->id, &fresh);
		uint64_t path, bid;
		if (fresh && ((st = str_id(m->path, &path)) != REC_OK ||
			      (st = str_id(m->build_id, &bid)) != REC_OK ||
			      (st = rec_writer_define_module(o.w, m->id, path, bid, m->base)) != REC_OK))
			return st == REC_ERR_NOMEM ? st : wfail(st, "define_module");
	}
	rec_symbolized d;
	memset(&d, 0, sizeof d);
	bool want = m && !(f->file && *f->file) && i == first;
	uint32_t h = want ? module_handle(m) : 0;
	if (h && rec_symbols_resolve(syms, h, f->module_offset, (f->flags & REC_FRAME_PC_EXACT) != 0,
				     &d) == REC_OK &&
	    (d.function[0] || d.file[0])) {
		uint64_t fn, file;
		if ((st = str_id(d.function[0] ? d.function : f->function, &fn)) != REC_OK)
			return st;
		uint64_t foff = d.function[0] ? d.function_offset : f->function_offset;
		if ((st = rec_writer_define_frame(o.w, f->id, fn, mod, f->module_offset, foff)) != REC_OK)
			return wfail(st, "define_frame");
		rec_frame_inline inl[REC_MAX_INLINE];
		uint32_t n = d.inline_count > REC_MAX_INLINE ? REC_MAX_INLINE : d.inline_count;
		for (uint32_t k = 0; k < n; k++) {
			inl[k].line = d.inlined[k].line;
			if ((st = str_id(d.inlined[k].function, &inl[k].function_string)) != REC_OK ||
			    (st = str_id(d.inlined[k].file, &inl[k].file_string)) != REC_OK)
				return st;
		}
		if ((st = str_id(d.file, &file)) != REC_OK)
			return st;
		uint32_t flags = f->flags & ~(uint32_t)REC_FRAME_UNSYMBOLIZED;
		if (flags || file || d.line || n) {
			st = rec_writer_define_frame_source(o.w, f->id, flags, file, d.line, inl, n);
			if (st != REC_OK)
				return wfail(st, "define_frame_source");
		}
		n_resolved++;
		return REC_OK;
	}
	if (f->file && *f->file)
		n_had++;
	else
		n_unresolved++;
	uint64_t fn;
	if ((st = str_id(f->function, &fn)) != REC_OK)
		return st;
	if ((st = rec_writer_define_frame(o.w, f->id, fn, mod, f->module_offset, f->function_offset)) != REC_OK)
		return wfail(st, "define_frame");
	if ((st = rec_writer_copy_frame_source(o.w, s, first, i)) != REC_OK)
		return wfail(st, "define_frame_source");
	return REC_OK;
}

static rec_status def_stack(const rec_stack *s, uint64_t *id)
{
	bool fresh;
	*id = s ? s->id : 0;
	if (!s)
		return REC_OK;
	idmap_slot(&o.stacks, s->id, &fresh);
	if (!fresh)
		return REC_OK;
	rec_status st = REC_OK;
	uint32_t depth = 0, first = 0;
	for (uint32_t i = 0; i < s->depth && depth < REC_MAX_STACK_DEPTH && st == REC_OK; i++) {
		const rec_frame *f = s->frames[i];
		if (f->inline_depth)
			continue;
		uint32_t inl = first;
		first = i + 1;
		o.frame_ids[depth++] = f->id;
		idmap_slot(&o.frames, f->id, &fresh);
		if (fresh)
			st = def_frame(s, inl, i);
	}
	if (st == REC_OK && (st = rec_writer_define_stack(o.w, s->id, s->flags, o.frame_ids, depth)) != REC_OK)
		return wfail(st, "define_stack");
	return st;
}

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
		rec_writer_abandon(o.w);
	}
	o.w = NULL;
	return st;
}

static rec_status start_run(const rec_chunk_info *ci)
{
	if (ci->run_id == 0 || ci->pid == 0 || ci->process_start_ns == 0) {
		rec_cli_file_error(in_name, "chunk %" PRIu64 ": a zero Run_Id, Pid or Process_Start_Ns cannot be kept",
				   ci->index);
		return REC_ERR_UNSUPPORTED;
	}
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
	o.open = true;
	o.run_id = ci->run_id;
	o.pid = ci->pid;
	o.process_start_ns = ci->process_start_ns;
	o.tick_frequency = ci->tick_frequency;
	o.last_final = false;
	idmap_clear(&o.types);
	idmap_clear(&o.threads);
	idmap_clear(&o.modules);
	idmap_clear(&o.frames);
	idmap_clear(&o.stacks);
	idmap_clear(&o.handles);
	return REC_OK;
}

static rec_status put_event(const rec_event *ev)
{
	const rec_type *t = ev->type;
	uint64_t th = 0, sk = 0, refs[REC_MAX_FIELDS];
	rec_status st;
	if ((t->flags & REC_EVENT_HAS_THREAD) && (st = def_thread(ev->thread, &th)) != REC_OK)
		return st;
	if ((t->flags & REC_EVENT_HAS_STACK) && (st = def_stack(ev->stack, &sk)) != REC_OK)
		return st;
	for (uint32_t i = 0; i < t->field_count; i++) {
		const rec_value *v = &ev->values[i];
		refs[i] = 0;
		st = REC_OK;
		if (t->fields[i].type == REC_TYPE_STRING && v->v.s.ptr)
			st = rec_writer_intern_string(o.w, v->v.s.ptr, v->v.s.len, &refs[i]);
		else if (t->fields[i].type == REC_TYPE_THREAD)
			st = def_thread(v->v.thread, &refs[i]);
		else if (t->fields[i].type == REC_TYPE_STACK)
			st = def_stack(v->v.stack, &refs[i]);
		if (st != REC_OK)
			return st;
	}
	if ((st = rec_writer_begin(o.w, t->id, ev->ticks, ev->duration_ticks, th, sk)) != REC_OK)
		return wfail(st, "begin");
	for (uint32_t i = 0; i < t->field_count && st == REC_OK; i++) {
		const rec_value *v = &ev->values[i];
		switch (t->fields[i].type) {
		case REC_TYPE_STRING:
		case REC_TYPE_THREAD:
		case REC_TYPE_STACK:
			st = rec_writer_put_u64(o.w, refs[i]);
			break;
		case REC_TYPE_I8: case REC_TYPE_I16: case REC_TYPE_I32: case REC_TYPE_I64:
			st = rec_writer_put_i64(o.w, v->v.i);
			break;
		case REC_TYPE_F32: case REC_TYPE_F64:
			st = rec_writer_put_f64(o.w, v->v.f);
			break;
		case REC_TYPE_BLOB: case REC_TYPE_TEXT:
			st = rec_writer_put_bytes(o.w, v->v.s.ptr, v->v.s.len);
			break;
		default:
			st = rec_writer_put_u64(o.w, v->v.u);
			break;
		}
	}
	if (st == REC_OK)
		st = rec_writer_end(o.w);
	return st == REC_OK ? st : wfail(st, "event");
}

/* One verified chunk: its events through the writer.  *left_out: the chunk
 * could not be copied (reported). */
static rec_status copy_chunk(rec_reader *r, const rec_chunk_info *ci, bool *left_out)
{
	*left_out = false;
	for (uint32_t i = 0; i < ci->type_count; i++)
		for (uint32_t k = 0; k < ci->types[i].field_count; k++)
			if (strcmp(rec_field_type_name(ci->types[i].fields[k].type), "unknown") == 0) {
				*left_out = true;
				rec_cli_file_error(in_name, "chunk %" PRIu64 " at offset %" PRIu64
						   ": type %s: field %s has a type unknown to this version: chunk left out",
						   ci->index, ci->offset, ci->types[i].name,
						   ci->types[i].fields[k].name);
				return REC_OK;
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
			*left_out = true;
			return REC_OK;
		}
		if (st != REC_OK)
			return st;
	}
	for (uint32_t i = 0; i < ci->type_count; i++) {
		bool fresh;
		idmap_slot(&o.types, ci->types[i].id, &fresh);
		rec_status st = fresh ? rec_writer_add_type(o.w, &ci->types[i]) : REC_OK;
		if (st != REC_OK)
			return wfail(st, "add_type");
	}
	uint64_t n = 0;
	for (uint32_t i = 0; i < ci->type_stats_count; i++)
		if (ci->type_stats[i].type)
			n += ci->type_stats[i].count;
	if (ci->dropped_events)
		rec_writer_note_dropped(o.w, ci->dropped_events);
	for (uint64_t k = 0; k < n; k++) {
		rec_event ev;
		rec_status st = rec_reader_next_event(r, &ev);
		if (st != REC_OK) {
			rec_cli_problem(in_name, rec_reader_problem(r), st);
			return st;
		}
		if ((st = put_event(&ev)) != REC_OK)
			return st;
		n_events++;
	}
	o.last_final = ci->flags & REC_CHUNK_FINAL;
	n_chunks++;
	if (!o.last_final) {
		rec_status st = rec_writer_flush(o.w);
		if (st != REC_OK)
			return wfail(st, "flush");
	}
	return REC_OK;
}

static int symbolize(const char *in, const char *out, bool quiet)
{
	bool to_stdout = strcmp(out, "-") == 0;
	struct stat si, so;
	if (!to_stdout && strcmp(in, "-") != 0 && stat(in, &si) == 0 && stat(out, &so) == 0 &&
	    si.st_dev == so.st_dev && si.st_ino == so.st_ino)
		return rec_cli_usage_fail("OUT is the same file as IN");
	const rec_cli_input input = { .name = in };
	rec_reader *r = rec_cli_input_open(&input, REC_READ_VERIFY);
	if (!r)
		return REC_EXIT_DATA;
	if (!rec_cli_outfile_open(&o.of, out)) {
		rec_reader_close(r);
		return REC_EXIT_DATA;
	}
	o.sink = rec_cli_outfile_sink(&o.of);
	int rc = REC_EXIT_OK;
	bool failed = false;
	rec_intact_tally t;
	memset(&t, 0, sizeof t);
	for (;;) {
		const rec_chunk_info *ci;
		rec_status st = rec_reader_next_intact(r, &ci, &t);
		if (st == REC_END)
			break;
		if (st != REC_OK) {
			rec_cli_problem(in_name, rec_reader_problem(r), st);
			rc = REC_EXIT_DATA;
			if (t.stopped)
				break;
			continue;
		}
		bool left_out;
		if (copy_chunk(r, ci, &left_out) != REC_OK) {
			failed = true;
			break;
		}
		if (left_out)
			rc = REC_EXIT_DATA;
	}
	rec_reader_close(r);
	if (failed) {
		if (o.open)
			rec_writer_abandon(o.w);
		o.open = false;
	} else if (end_run() != REC_OK) {
		failed = true;
	}
	if (failed)
		rec_cli_outfile_discard(&o.of);
	else if (!rec_cli_outfile_commit(&o.of))
		failed = true;
	if (!quiet) {
		rec_cli_file_error(in_name, "%" PRIu64 " frames: %" PRIu64 " resolved, %" PRIu64
				   " left unresolved, %" PRIu64 " had source lines already; %" PRIu64
				   " events, %" PRIu64 " chunk%s",
				   n_resolved + n_unresolved + n_had, n_resolved, n_unresolved, n_had,
				   n_events, n_chunks, n_chunks == 1 ? "" : "s");
		for (size_t i = 0; i < missing.count; i++)
			rec_cli_file_error(in_name, "no debug file or binary found for %s",
					   missing.items[i]);
	}
	return failed ? REC_EXIT_DATA : rc;
}

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

enum { OPT_VERSION = 256, OPT_DEBUG_DIR, OPT_ONLY };

static const struct option long_opts[] = {
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "only-debug-dirs", no_argument, NULL, OPT_ONLY },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	rec_cli_init("rec-symbolize");
	strlist dirs = { 0 };
	bool quiet = false, only = false;
	int c;
	while ((c = rec_cli_getopt(argc, argv, "hq", long_opts)) != -1) {
		switch (c) {
		case OPT_DEBUG_DIR: strlist_add(&dirs, optarg); break;
		case OPT_ONLY: only = true; break;
		case 'q': quiet = true; break;
		case 'h': rec_cli_help(usage_text);
		case OPT_VERSION: rec_cli_version();
		default: rec_cli_usage_error("unexpected option");
		}
	}
	if (argc - optind != 2)
		rec_cli_usage_error(argc - optind < 2 ? "need IN and OUT" : "too many arguments");
	if (!only)
		strlist_add(&dirs, "/usr/lib/debug");
	if (only && !dirs.count)
		rec_cli_usage_error("--only-debug-dirs needs a --debug-dir");
	if (rec_symbols_open(&syms, (const char *const *)dirs.items, dirs.count) != REC_OK) {
		rec_cli_error("out of memory");
		return rec_cli_finish(REC_EXIT_DATA);
	}
	in_name = argv[optind];
	int rc = symbolize(argv[optind], argv[optind + 1], quiet);
	rec_symbols_close(syms);
	idmap_free(&o.types);
	idmap_free(&o.threads);
	idmap_free(&o.modules);
	idmap_free(&o.frames);
	idmap_free(&o.stacks);
	idmap_free(&o.handles);
	strlist_free(&dirs);
	strlist_free(&missing);
	return rec_cli_finish(rc);
}
