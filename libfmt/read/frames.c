/* SPDX-License-Identifier: MIT */
/*
 * frames.c - what every tool and analysis makes of a stack's frames (rec.h):
 * the one text spelling of a frame (rec_frame_format()) and the frame that is
 * an event's call site (rec_stack_site()).
 */
#include <inttypes.h>
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

size_t rec_frame_format(const rec_frame *fr, unsigned flags, char *buf, size_t cap)
{
	if (cap == 0)
		return 0;
	int n;
	const char *mod = rec_frame_module_name(fr);
	if (!fr)
		n = snprintf(buf, cap, "[unknown]");
	else if (fr->function && *fr->function && (flags & REC_FRAME_FUNCTION))
		n = snprintf(buf, cap, "%s", fr->function);
	else if (fr->function && *fr->function && *mod)
		n = snprintf(buf, cap, "%s+0x%" PRIx64 " (%s)", fr->function, fr->function_offset, mod);
	else if (fr->function && *fr->function)
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

uint32_t rec_stack_site(const rec_stack *s)
{
	if (!s || !s->frames)
		return 0;
	uint32_t k = 0;
	while (k < s->depth && s->frames[k] && s->frames[k]->function &&
	       strncmp(s->frames[k]->function, "rec_", 4) == 0)
		k++;
	return k < s->depth ? k : 0;
}
