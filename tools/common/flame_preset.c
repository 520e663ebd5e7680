/* SPDX-License-Identifier: MIT */
/*
 * flame_preset.c - the default weights of flame graphs (flame_preset.h).
 */
#include <string.h>

#include "flame_preset.h"

rec_flame_preset_kind rec_flame_preset(const rec_type *t, const char **field)
{
	*field = NULL;
	if (!t || !t->name)
		return REC_FLAME_PRESET_NONE;
	if (strcmp(t->name, "rec.CPUSample") == 0)
		return REC_FLAME_PRESET_ONE;
	if ((strcmp(t->name, "rec.LockWait") == 0 || strcmp(t->name, "rec.Sleep") == 0 ||
	     strcmp(t->name, "rec.CondWait") == 0) && (t->flags & REC_EVENT_HAS_DURATION))
		return REC_FLAME_PRESET_DURATION;
	if (strcmp(t->name, "rec.WallSample") == 0)
		return REC_FLAME_PRESET_WALL;
	if (strcmp(t->name, "rec.Alloc") == 0) {
		*field = "size";
		for (uint32_t i = 0; i < t->field_count; i++)
			if (strcmp(t->fields[i].name, "weight") == 0)
				*field = "weight";
		return REC_FLAME_PRESET_FIELD;
	}
	return REC_FLAME_PRESET_NONE;
}

uint64_t rec_flame_wall_ns(const rec_event *ev)
{
	uint64_t w = 0, p = 0;
	for (uint32_t i = 0; i < ev->value_count && i < ev->type->field_count; i++) {
		if (!ev->values[i].present)
			continue;
		if (strcmp(ev->type->fields[i].name, "weight") == 0)
			w = ev->values[i].v.u;
		else if (strcmp(ev->type->fields[i].name, "period") == 0)
			p = ev->values[i].v.u;
	}
	return p && w > UINT64_MAX / p ? UINT64_MAX : w * p;
}
