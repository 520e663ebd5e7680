/* SPDX-License-Identifier: MIT */
/*
 * frames.c - what every tool and analysis makes of a stack's frames (rec.h):
 * the one text spelling of a frame (rec_frame_format()) and the frame that is
 * an event's call site (rec_stack_site()).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "rec/rec.h"

const char *rec_frame_module_name(const rec_frame *fr)
{
	if (!fr || !fr->module || !fr->module->path)
		return "";
	const char *s = strrchr(fr->module->path, '/');
	return s ? s + 1 : fr->module->path;
}

/* The base name of a path. */
static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

size_t rec_frame_format(const rec_frame *fr, unsigned flags, char *buf, size_t cap)
{
	if (cap == 0)
		return 0;
	int n;
	const char *mod = rec_frame_module_name(fr);
	bool named = fr && fr->function && *fr->function;
	bool src = named && fr->file && *fr->file;
	const char *mark = fr && fr->inline_depth ? " [inlined]" : "";
	if (!fr)
		n = snprintf(buf, cap, "[unknown]");
	else if (named && (flags & REC_FRAME_LINE) && fr->line)
		n = snprintf(buf, cap, "%s:%" PRIu32, fr->function, fr->line);
	else if (named && (flags & (REC_FRAME_FUNCTION | REC_FRAME_LINE)))
		n = snprintf(buf, cap, "%s", fr->function);
	else if (src && fr->line)
		n = snprintf(buf, cap, "%s (%s:%" PRIu32 ")%s", fr->function, base_name(fr->file),
			     fr->line, mark);
	else if (src)
		n = snprintf(buf, cap, "%s (%s)%s", fr->function, base_name(fr->file), mark);
	else if (named && fr->inline_depth)
		n = snprintf(buf, cap, "%s%s", fr->function, mark);
	else if (named && *mod)
		n = snprintf(buf, cap, "%s+0x%" PRIx64 " (%s)", fr->function, fr->function_offset, mod);
	else if (named)
		n = snprintf(buf, cap, "%s+0x%" PRIx64, fr->function, fr->function_offset);
	else if (*mod)
		n = snprintf(buf, cap, "%s+0x%" PRIx64, mod, fr->module_offset);
	else
		n = snprintf(buf, cap, "0x%" PRIx64, fr->module_offset);
	if (n < 0) {
		buf[0] = '\0';
		return 0;
	}
	return (size_t)n < cap ? (size_t)n : cap - 1;
}

int rec_frame_unsymbolized(const rec_frame *fr)
{
	return fr && fr->inline_depth == 0 && fr->module && fr->module->build_id &&
	       *fr->module->build_id &&
	       ((fr->flags & REC_FRAME_UNSYMBOLIZED) || !fr->function || !*fr->function);
}

uint32_t rec_stack_site(const rec_stack *s)
{
	if (!s || !s->frames)
		return 0;
	/* The first frame of code the program's function is in: an inlined
	 * function is not a site of its own (its frame is named in stacks,
	 * rec-print, flame graphs), so a site is the same in rec-view and in
	 * the SQL over the frames table (spec/SCHEMA.md: frames are the real
	 * ones); recorder functions are skipped. */
	uint32_t k = 0;
	while (k < s->depth && s->frames[k] &&
	       (s->frames[k]->inline_depth > 0 ||
		(s->frames[k]->function && strncmp(s->frames[k]->function, "rec_", 4) == 0)))
		k++;
	return k < s->depth ? k : 0;
}
