/* SPDX-License-Identifier: MIT */
/*
 * test_writer_frame_copy.c - writer_frame_copy.c: a read stack's frame
 * sources (format 1.2: file, line, flags and the functions inlined into a
 * frame) defined in a writer again, as rec-scrub and rec-symbolize do.  A
 * recording made by the real writer is read, re-encoded frame by frame
 * into a second writer with rec_writer_copy_frame_source, and read again:
 * every frame of every stack comes back the same (function, file, line,
 * inline depth, flags, module, offsets); a frame without a source defines
 * nothing; bad arguments are refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/rec.h"
#include "../../lib/frames_rec.h"


/* Interns s (non-empty) in w; 0 for "". */
static uint64_t intern(rec_writer *w, const char *s)
{
	uint64_t id = 0;
	if (s && *s)
		assert_int_equal(rec_writer_intern_string(w, s, strlen(s), &id), REC_OK);
	return id;
}

/* Defines stack s (its modules, frames and frame sources) in w. */
static void copy_stack(rec_writer *w, const rec_stack *s)
{
	uint64_t ids[64];
	uint32_t n = 0, first = 0;
	assert_true(s->depth <= 64);
	for (uint32_t i = 0; i < s->depth; i++) {
		const rec_frame *f = s->frames[i];
		if (f->inline_depth > 0)
			continue; /* defined with the FRAMES entry after it */
		uint64_t mod = 0;
		if (f->module) {
			mod = f->module->id;
			assert_int_equal(rec_writer_define_module(w, mod, intern(w, f->module->path),
								  intern(w, f->module->build_id),
								  f->module->base),
					 REC_OK);
		}
		assert_int_equal(rec_writer_define_frame(w, f->id, intern(w, f->function), mod,
							 f->module_offset, f->function_offset),
				 REC_OK);
		assert_int_equal(rec_writer_copy_frame_source(w, s, first, i), REC_OK);
		ids[n++] = f->id;
		first = i + 1;
	}
	assert_int_equal(rec_writer_define_stack(w, s->id, s->flags, ids, n), REC_OK);
}

typedef struct stack_copy {
	uint64_t id;
	uint32_t depth;
	rec_frame fr[64];
	char text[64][160]; /* strings copied */
} stack_copy;

static void frame_text(const rec_frame *f, char *out, size_t cap)
{
	snprintf(out, cap, "%s|%s|%u|%u|%u|%s|%s|%llx|%llx|%llx", f->function, f->file, f->line,
		 f->inline_depth, f->flags, f->module ? f->module->path : "-",
		 f->module ? f->module->build_id : "-", (unsigned long long)f->module_offset,
		 (unsigned long long)f->function_offset,
		 (unsigned long long)(f->module ? f->module->base : 0));
}

static void t_copy_round_trip(void **state)
{
	(void)state;
	membuf a = frames_rec();
	static stack_copy want[3];
	memset(want, 0, sizeof want);
	/* read a, write b */
	membuf b = { 0 };
	rec_sink sk = { mem_write, NULL, &b };
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.anchor_wall_ns = 1000;
	o.anchor_ticks = 1;
	rec_writer *w;
	assert_int_equal(rec_writer_open(&w, &sk, &o), REC_OK);
	rec_type t = { 1, REC_EVENT_HAS_STACK, "d.T", "", "", "", 1, frames_fields };
	assert_int_equal(rec_writer_add_type(w, &t), REC_OK);
	rec_reader *r;
	assert_int_equal(rec_reader_open_mem(&r, a.p, a.len, "a", NULL), REC_OK);
	rec_event ev;
	rec_status st;
	int n = 0;
	while ((st = rec_reader_next_event(r, &ev)) == REC_OK) {
		const rec_stack *s = ev.stack;
		assert_non_null(s);
		assert_true(n < 3);
		want[n].id = s->id;
		want[n].depth = s->depth;
		for (uint32_t i = 0; i < s->depth; i++)
			frame_text(s->frames[i], want[n].text[i], sizeof want[n].text[i]);
		copy_stack(w, s);
		/* arguments */
		assert_int_equal(rec_writer_copy_frame_source(NULL, s, 0, 0), REC_ERR_INVALID_ARG);
		assert_int_equal(rec_writer_copy_frame_source(w, NULL, 0, 0), REC_ERR_INVALID_ARG);
		assert_int_equal(rec_writer_copy_frame_source(w, s, 0, s->depth), REC_ERR_INVALID_ARG);
		if (s->depth > 1)
			assert_int_equal(rec_writer_copy_frame_source(w, s, 1, 0), REC_ERR_INVALID_ARG);
		assert_int_equal(rec_writer_begin(w, 1, ev.ticks, 0, 0, s->id), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, ev.values[0].v.u), REC_OK);
		assert_int_equal(rec_writer_end(w), REC_OK);
		n++;
	}
	assert_int_equal(st, REC_END);
	rec_reader_close(r);
	assert_int_equal(n, 3);
	assert_int_equal(rec_writer_close(w), REC_OK);

	/* b's stacks are a's */
	assert_int_equal(rec_reader_open_mem(&r, b.p, b.len, "b", NULL), REC_OK);
	n = 0;
	char got[160];
	int sourced = 0;
	while ((st = rec_reader_next_event(r, &ev)) == REC_OK) {
		const rec_stack *s = ev.stack;
		assert_non_null(s);
		assert_int_equal(s->id, want[n].id);
		assert_int_equal(s->depth, want[n].depth);
		for (uint32_t i = 0; i < s->depth; i++) {
			frame_text(s->frames[i], got, sizeof got);
			assert_string_equal(got, want[n].text[i]);
			sourced += *s->frames[i]->file != 0 || s->frames[i]->inline_depth > 0;
		}
		n++;
	}
	assert_int_equal(st, REC_END);
	rec_reader_close(r);
	assert_int_equal(n, 3);
	assert_true(sourced >= 5); /* the sources really were copied */
	free(a.p);
	free(b.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_copy_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
