/* SPDX-License-Identifier: MIT */
/*
 * rewrite.c - a copy of a recording re-encoded through the writer, chunk by
 * chunk, for rec-scrub and rec-symbolize (see rewrite.h).
 */
#include "rewrite.h"

#include "rec/archive.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- the output ----------------------------------------------------------------- */

bool rec_rewrite_same_file(const rec_cli_input *in, const char *out)
{
	struct stat si, so;
	return strcmp(out, "-") != 0 && !rec_cli_input_is_stdin(in) && !in->data &&
	       stat(in->name, &si) == 0 && stat(out, &so) == 0 && si.st_dev == so.st_dev &&
	       si.st_ino == so.st_ino;
}

bool rec_rewrite_open(rec_rewrite *rw, const char *out)
{
	if (!rec_cli_outfile_open(&rw->of, out))
		return false;
	rw->sink = rec_cli_outfile_sink(&rw->of);
	return true;
}

rec_status rec_rewrite_fail(rec_rewrite *rw, rec_status st, const char *what)
{
	if (!rec_cli_outfile_failed(&rw->of)) /* else reported once, naming OUT */
		rec_cli_error("%s: %s", what, rec_writer_errmsg(rw->w));
	return st;
}

/* ---- pool entries, defined once per output run ------------------------------------- */

rec_status rec_rewrite_string(rec_rewrite *rw, const char *s, size_t len, bool empty_is_none,
			      uint64_t *id)
{
	if (!s || (empty_is_none && len == 0)) {
		*id = 0;
		return REC_OK;
	}
	rec_status st = rec_writer_intern_string(rw->w, s, len, id);
	return st == REC_OK ? st : rec_rewrite_fail(rw, st, "intern_string");
}

/* A NUL-terminated string: 0 for NULL and "". */
static rec_status cstr_id(rec_rewrite *rw, const char *s, uint64_t *id)
{
	return rec_rewrite_string(rw, s, s ? strlen(s) : 0, true, id);
}

rec_status rec_rewrite_thread(rec_rewrite *rw, const rec_thread *t, uint64_t *id)
{
	*id = t ? t->id : 0;
	if (!t || !rec_cli_idmap_add(&rw->threads, t->id))
		return REC_OK;
	uint64_t name;
	rec_status st = cstr_id(rw, t->name, &name);
	if (st == REC_OK && (st = rec_writer_define_thread(rw->w, t->id, t->os_tid, name)) != REC_OK)
		return rec_rewrite_fail(rw, st, "define_thread");
	return st;
}

rec_status rec_rewrite_module(rec_rewrite *rw, const rec_module *m)
{
	if (!m || !rec_cli_idmap_add(&rw->modules, m->id))
		return REC_OK;
	uint64_t path, bid;
	rec_status st;
	if ((st = cstr_id(rw, m->path, &path)) != REC_OK ||
	    (st = cstr_id(rw, m->build_id, &bid)) != REC_OK)
		return st;
	if ((st = rec_writer_define_module(rw->w, m->id, path, bid, m->base)) != REC_OK)
		return rec_rewrite_fail(rw, st, "define_module");
	return REC_OK;
}

rec_status rec_rewrite_copy_frame(rec_rewrite *rw, const rec_stack *s, uint32_t first, uint32_t i)
{
	const rec_frame *f = s->frames[i];
	const rec_module *m = f->module;
	rec_status st;
	uint64_t fn;
	if ((st = rec_rewrite_module(rw, m)) != REC_OK || (st = cstr_id(rw, f->function, &fn)) != REC_OK)
		return st;
	if ((st = rec_writer_define_frame(rw->w, f->id, fn, m ? m->id : 0, f->module_offset,
					  f->function_offset)) != REC_OK)
		return rec_rewrite_fail(rw, st, "define_frame");
	if ((st = rec_writer_copy_frame_source(rw->w, s, first, i)) != REC_OK)
		return rec_rewrite_fail(rw, st, "define_frame_source");
	return REC_OK;
}

rec_status rec_rewrite_stack(rec_rewrite *rw, const rec_stack *s, uint64_t *id)
{
	*id = s ? s->id : 0;
	if (!s || !rec_cli_idmap_add(&rw->stacks, s->id))
		return REC_OK;
	rec_status st = REC_OK;
	uint32_t depth = 0, first = 0; /* first: the frame's first inlined function */
	for (uint32_t i = 0; i < s->depth && depth < REC_MAX_STACK_DEPTH && st == REC_OK; i++) {
		const rec_frame *f = s->frames[i];
		if (f->inline_depth) /* part of the next FRAMES entry's source */
			continue;
		uint32_t inl = first;
		first = i + 1;
		rw->frame_ids[depth++] = f->id;
		if (rec_cli_idmap_add(&rw->frames, f->id))
			st = rw->def_frame ? rw->def_frame(rw, s, inl, i)
					   : rec_rewrite_copy_frame(rw, s, inl, i);
	}
	if (st == REC_OK &&
	    (st = rec_writer_define_stack(rw->w, s->id, s->flags, rw->frame_ids, depth)) != REC_OK)
		return rec_rewrite_fail(rw, st, "define_stack");
	return st;
}

/* ---- events ------------------------------------------------------------------------ */

rec_status rec_rewrite_event(rec_rewrite *rw, const rec_event *ev, const bool *blanked,
			     uint64_t *nblanked)
{
	const rec_type *t = ev->type;
	uint64_t th = 0, sk = 0;
	rec_status st;
	if ((t->flags & REC_EVENT_HAS_THREAD) && (st = rec_rewrite_thread(rw, ev->thread, &th)) != REC_OK)
		return st;
	if ((t->flags & REC_EVENT_HAS_STACK) && (st = rec_rewrite_stack(rw, ev->stack, &sk)) != REC_OK)
		return st;
	/* References in fields are defined before the event begins. */
	uint64_t refs[REC_MAX_FIELDS];
	for (uint32_t i = 0; i < t->field_count; i++) {
		const rec_value *v = &ev->values[i];
		bool b = blanked && blanked[i];
		refs[i] = 0;
		switch (t->fields[i].type) {
		case REC_TYPE_STRING:
			if (b)
				st = rec_rewrite_string(rw, "", 0, false, &refs[i]);
			else
				st = rec_rewrite_string(rw, v->v.s.ptr, v->v.s.len, false, &refs[i]);
			break;
		case REC_TYPE_THREAD:
			st = b ? REC_OK : rec_rewrite_thread(rw, v->v.thread, &refs[i]);
			break;
		case REC_TYPE_STACK:
			st = b ? REC_OK : rec_rewrite_stack(rw, v->v.stack, &refs[i]);
			break;
		default:
			st = REC_OK;
		}
		if (st != REC_OK)
			return st;
	}
	if ((st = rec_writer_begin(rw->w, t->id, ev->ticks, ev->duration_ticks, th, sk)) != REC_OK)
		return rec_rewrite_fail(rw, st, "begin");
	for (uint32_t i = 0; i < t->field_count && st == REC_OK; i++) {
		const rec_value *v = &ev->values[i];
		bool b = blanked && blanked[i];
		if (nblanked)
			*nblanked += b;
		switch (t->fields[i].type) {
		case REC_TYPE_STRING:
		case REC_TYPE_THREAD:
		case REC_TYPE_STACK:
			st = rec_writer_put_u64(rw->w, refs[i]);
			break;
		case REC_TYPE_I8: case REC_TYPE_I16: case REC_TYPE_I32: case REC_TYPE_I64:
			st = rec_writer_put_i64(rw->w, b ? 0 : v->v.i);
			break;
		case REC_TYPE_F32: case REC_TYPE_F64:
			st = rec_writer_put_f64(rw->w, b ? 0.0 : v->v.f);
			break;
		case REC_TYPE_BLOB: case REC_TYPE_TEXT:
			st = rec_writer_put_bytes(rw->w, b ? "" : v->v.s.ptr, b ? 0 : v->v.s.len);
			break;
		default: /* bool, u*, timestamp, duration */
			st = rec_writer_put_u64(rw->w, b ? 0 : v->v.u);
			break;
		}
	}
	if (st == REC_OK)
		st = rec_writer_end(rw->w);
	if (st != REC_OK)
		return rec_rewrite_fail(rw, st, "event");
	return REC_OK;
}

/* ---- runs and chunks ----------------------------------------------------------------- */

/* Finish the current run's writer: a FINAL chunk if the input run had one. */
static rec_status end_run(rec_rewrite *rw)
{
	if (!rw->open)
		return REC_OK;
	rec_status st;
	rw->open = false;
	if (rw->last_final) {
		st = rec_writer_close(rw->w);
		if (st != REC_OK && !rec_cli_outfile_failed(&rw->of))
			rec_cli_error("closing the output: %s", rec_strerror(st));
	} else {
		st = rec_writer_flush(rw->w);
		if (st != REC_OK && !rec_cli_outfile_failed(&rw->of))
			rec_cli_error("writing the output: %s", rec_writer_errmsg(rw->w));
		rec_writer_abandon(rw->w); /* the input run has no FINAL chunk either */
	}
	rw->w = NULL;
	return st;
}

static rec_status start_run(rec_rewrite *rw, const rec_chunk_info *ci)
{
	if (ci->run_id == 0 || ci->pid == 0 || ci->process_start_ns == 0) {
		/* 0 means "choose" to the writer: the run identity would change. */
		rec_cli_file_error(rw->in_name,
				   "chunk %" PRIu64 ": a zero Run_Id, Pid or Process_Start_Ns cannot be kept",
				   ci->index);
		return REC_ERR_UNSUPPORTED;
	}
	rec_writer_options wo = REC_WRITER_OPTIONS_INIT;
	wo.codec = ci->codec;
	wo.events_layout = rw->layout ? rw->layout
				      : (ci->flags & REC_CHUNK_SPLIT_EVENTS) ? REC_EVENTS_SPLIT
									   : REC_EVENTS_ONE_STREAM;
	wo.chunk_events_size = 32u << 20; /* one output chunk per input chunk */
	wo.run_id = ci->run_id;
	wo.pid = ci->pid;
	wo.process_start_ns = ci->process_start_ns;
	wo.tick_frequency = ci->tick_frequency;
	wo.anchor_wall_ns = ci->start_wall_ns;
	wo.anchor_ticks = ci->start_ticks;
	rec_status st = rec_writer_open(&rw->w, &rw->sink, &wo);
	if (st != REC_OK) {
		rec_cli_error("cannot start a writer: %s", rec_strerror(st));
		return st;
	}
	rw->open = true;
	rw->run_id = ci->run_id;
	rw->pid = ci->pid;
	rw->process_start_ns = ci->process_start_ns;
	rw->tick_frequency = ci->tick_frequency;
	rw->last_final = false;
	rec_cli_idmap_clear(&rw->types);
	rec_cli_idmap_clear(&rw->threads);
	rec_cli_idmap_clear(&rw->modules);
	rec_cli_idmap_clear(&rw->frames);
	rec_cli_idmap_clear(&rw->stacks);
	rec_cli_idmap_clear(&rw->aux);
	return REC_OK;
}

static bool type_kept(const rec_rewrite *rw, const rec_type *t)
{
	return !rw->keep_type || rw->keep_type(rw->ctx, t);
}

/* One verified chunk: its events through the writer.  *left_out: the chunk
 * could not be copied (reported). */
static rec_status copy_chunk(rec_rewrite *rw, rec_reader *r, const rec_chunk_info *ci,
			     bool *left_out)
{
	*left_out = false;
	for (uint32_t i = 0; i < ci->type_count; i++) {
		const rec_type *t = &ci->types[i];
		if (!type_kept(rw, t))
			continue;
		for (uint32_t k = 0; k < t->field_count; k++)
			if (strcmp(rec_field_type_name(t->fields[k].type), "unknown") == 0) {
				*left_out = true;
				rec_cli_file_error(rw->in_name, "chunk %" PRIu64 " at offset %" PRIu64
						   ": type %s: field %s has a type unknown to this version (0x%x): chunk left out",
						   ci->index, ci->offset, t->name, t->fields[k].name,
						   t->fields[k].type);
				return REC_OK;
			}
	}
	if (rw->open && (rw->run_id != ci->run_id || rw->pid != ci->pid ||
			 rw->process_start_ns != ci->process_start_ns ||
			 rw->tick_frequency != ci->tick_frequency || rw->last_final)) {
		rec_status st = end_run(rw);
		if (st != REC_OK)
			return st;
	}
	if (!rw->open) {
		rec_status st = start_run(rw, ci);
		if (st == REC_ERR_UNSUPPORTED) {
			*left_out = true;
			return REC_OK;
		}
		if (st != REC_OK)
			return st;
	}
	for (uint32_t i = 0; i < ci->type_count; i++) {
		const rec_type *t = &ci->types[i];
		if (!type_kept(rw, t) || !rec_cli_idmap_add(&rw->types, t->id))
			continue;
		rec_status st = rec_writer_add_type(rw->w, t);
		if (st != REC_OK)
			return rec_rewrite_fail(rw, st, "add_type");
	}
	/* The chunk's events: as many as its statistics count for known types
	 * (verified), so the iteration stops at the chunk's end. */
	uint64_t n = 0;
	for (uint32_t i = 0; i < ci->type_stats_count; i++)
		if (ci->type_stats[i].type)
			n += ci->type_stats[i].count;
	if (ci->dropped_events)
		rec_writer_note_dropped(rw->w, ci->dropped_events);
	for (uint64_t k = 0; k < n; k++) {
		rec_event ev;
		rec_status st = rec_reader_next_event(r, &ev);
		if (st != REC_OK) {
			rec_cli_problem(rw->in_name, rec_reader_problem(r), st);
			return st;
		}
		if (!type_kept(rw, ev.type)) {
			rw->events_removed++;
			continue;
		}
		st = rw->put_event ? rw->put_event(rw, &ev) : rec_rewrite_event(rw, &ev, NULL, NULL);
		if (st != REC_OK)
			return st;
		rw->events_kept++;
	}
	rw->last_final = ci->flags & REC_CHUNK_FINAL;
	rw->chunks_copied++;
	if (!rw->last_final) {
		rec_status st = rec_writer_flush(rw->w);
		if (st != REC_OK)
			return rec_rewrite_fail(rw, st, "flush");
	}
	return REC_OK;
}

bool rec_rewrite_all(rec_rewrite *rw, rec_reader *r, int *rc)
{
	rec_intact_tally t;
	memset(&t, 0, sizeof t);
	for (;;) {
		const rec_chunk_info *ci;
		rec_status st = rec_reader_next_intact(r, &ci, &t);
		if (st == REC_END)
			return true;
		if (st != REC_OK) {
			rec_cli_problem(rw->in_name, rec_reader_problem(r), st);
			*rc = REC_EXIT_DATA;
			if (t.stopped)
				return true;
			continue;
		}
		rw->chunks_in++;
		if (rw->chunk_read)
			rw->chunk_read(rw->ctx, ci);
		bool left_out;
		st = copy_chunk(rw, r, ci, &left_out);
		if (left_out)
			*rc = REC_EXIT_DATA;
		if (st != REC_OK)
			return false;
	}
}

bool rec_rewrite_end(rec_rewrite *rw, bool failed)
{
	if (failed) {
		if (rw->open)
			rec_writer_abandon(rw->w);
		rw->open = false;
		rw->w = NULL;
		return true;
	}
	return end_run(rw) != REC_OK;
}

bool rec_rewrite_commit(rec_rewrite *rw, bool failed)
{
	if (failed) {
		rec_cli_outfile_discard(&rw->of);
		return true;
	}
	return !rec_cli_outfile_commit(&rw->of);
}

void rec_rewrite_free(rec_rewrite *rw)
{
	rec_cli_idmap_free(&rw->types);
	rec_cli_idmap_free(&rw->threads);
	rec_cli_idmap_free(&rw->modules);
	rec_cli_idmap_free(&rw->frames);
	rec_cli_idmap_free(&rw->stacks);
	rec_cli_idmap_free(&rw->aux);
	memset(rw, 0, sizeof *rw);
}
