/* SPDX-License-Identifier: MIT */
/*
 * flame_preset.h - what an event weighs in a flame graph when no weight is
 * chosen: rec-flame without --weight, and the flame graphs of rec-report's
 * HTML page (flame_preset.c).
 */
#ifndef REC_TOOLS_FLAME_PRESET_H
#define REC_TOOLS_FLAME_PRESET_H

#include "rec/rec.h"

typedef enum {
	REC_FLAME_PRESET_NONE = 0, /* no preset: every event counts 1 ("events") */
	REC_FLAME_PRESET_ONE,      /* rec.CPUSample: each counts 1 ("samples") */
	REC_FLAME_PRESET_DURATION, /* rec.LockWait, rec.Sleep, rec.CondWait with a
				    * duration: the header duration (ns) */
	REC_FLAME_PRESET_FIELD,    /* rec.Alloc: the field *field (bytes) */
	REC_FLAME_PRESET_WALL      /* rec.WallSample: weight x period, the wall
				    * time the sample stands for (ns):
				    * rec_flame_wall_ns() */
} rec_flame_preset_kind;

/* The preset of event type t; with REC_FLAME_PRESET_FIELD, *field is the
 * field's name: rec.Alloc's "weight" (the bytes a sampled event stands for:
 * what its thread allocated since its previous sample; a reported one's
 * size), or "size" in recordings whose rec.Alloc has no weight. */
rec_flame_preset_kind rec_flame_preset(const rec_type *t, const char **field);

/* A rec.WallSample's wall time: weight x period (ns; 0 without them). */
uint64_t rec_flame_wall_ns(const rec_event *ev);

#endif /* REC_TOOLS_FLAME_PRESET_H */
