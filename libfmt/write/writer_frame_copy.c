/* SPDX-License-Identifier: MIT */
/*
 * writer_frame_copy.c - a read stack's frame source (format 1.2) defined in
 * a writer again, for the tools that re-encode recordings (rec-scrub,
 * rec-symbolize): the reader lists a frame's inlined functions before it
 * (rec_frame.inline_depth > 0); the writer takes them as the frame's source.
 */
#include <string.h>

#include "write/writer_internal.h"

rec_status rec_writer_copy_frame_source(rec_writer *w, const rec_stack *s, uint32_t first,
					uint32_t i)
{
	if (!w || !s || i >= s->depth || first > i || !s->frames[i])
		return REC_ERR_INVALID_ARG;
	const rec_frame *f = s->frames[i];
	uint32_t n = i - first;
	if (!f->flags && !(f->file && *f->file) && !f->line && n == 0)
		return REC_OK;
	rec_frame_inline inl[REC_MAX_INLINE];
	if (n > REC_MAX_INLINE) {
		first = i - REC_MAX_INLINE;
		n = REC_MAX_INLINE;
	}
	rec_status st;
	uint64_t file = 0;
	if (f->file && *f->file && (st = rec_writer_intern_string(w, f->file, strlen(f->file), &file)) != REC_OK)
		return st;
	for (uint32_t k = 0; k < n; k++) {
		const rec_frame *x = s->frames[first + k];
		inl[k].function_string = inl[k].file_string = 0;
		inl[k].line = x->line;
		if (x->function && *x->function &&
		    (st = rec_writer_intern_string(w, x->function, strlen(x->function),
						   &inl[k].function_string)) != REC_OK)
			return st;
		if (x->file && *x->file &&
		    (st = rec_writer_intern_string(w, x->file, strlen(x->file), &inl[k].file_string)) != REC_OK)
			return st;
	}
	return rec_writer_define_frame_source(w, f->id, f->flags, file, f->line, inl, n);
}
