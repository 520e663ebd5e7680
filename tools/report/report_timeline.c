/* SPDX-License-Identifier: MIT */
/*
 * report_timeline.c - the lanes and items of rec-report's HTML timeline
 * (report_timeline.h): a lane per OS tid, labels interned, at most max items
 * kept in time order.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cli.h"
#include "../common/flame_html.h"
#include "rec/lock_attrib.h"
#include "report_timeline.h"

enum { K_SPAN, K_LOCK, K_SLEEP, K_COND, K_IO, K_CPU, K_KINDS };
static const char *const kind_names[K_KINDS] = { "span", "lock wait", "sleep", "condition wait",
						 "I/O", "CPU sample" };

typedef struct item {
	int64_t start, dur;
	uint64_t holder;
	uint32_t lane, kind, label;
} item;

typedef struct lane {
	uint64_t tid;
	char *name;
} lane;

/* interned strings: open addressing on a hash of the bytes */
typedef struct strtab {
	char **s;
	size_t n, cap;
	uint32_t *slot; /* index + 1, 0 empty */
	size_t slots;
} strtab;

struct rec_report_timeline {
	const char *by, *type;
	uint32_t max;
	bool have_start;
	int64_t start, end, cut_at;
	item *items;
	size_t n, cap;
	uint64_t seen[K_KINDS], kept[K_KINDS];
	lane *lanes;
	size_t nlanes, lanecap;
	uint32_t *lane_slot; /* lane index + 1 by tid hash */
	size_t lane_slots;
	strtab labels;
	rec_lockattrib *attrib; /* the lock waits, split at hand-offs */
	bool attrib_failed;
};

static uint64_t hash_bytes(const char *p, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

static uint32_t intern(strtab *t, const char *p, size_t len)
{
	if ((t->n + 1) * 2 > t->slots) {
		size_t ns = t->slots ? t->slots * 2 : 256;
		uint32_t *sl = rec_cli_xmalloc(ns * sizeof *sl);
		memset(sl, 0, ns * sizeof *sl);
		for (size_t i = 0; i < t->n; i++) {
			size_t j = hash_bytes(t->s[i], strlen(t->s[i])) % ns;
			while (sl[j])
				j = (j + 1) % ns;
			sl[j] = (uint32_t)i + 1;
		}
		free(t->slot);
		t->slot = sl;
		t->slots = ns;
	}
	size_t j = hash_bytes(p, len) % t->slots;
	while (t->slot[j]) {
		const char *s = t->s[t->slot[j] - 1];
		if (strlen(s) == len && memcmp(s, p, len) == 0)
			return t->slot[j] - 1;
		j = (j + 1) % t->slots;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->s = rec_cli_xrealloc(t->s, t->cap * sizeof *t->s);
	}
	char *c = rec_cli_xmalloc(len + 1);
	memcpy(c, p, len);
	c[len] = 0;
	for (size_t i = 0; i < len; i++) /* labels are one line */
		if ((unsigned char)c[i] < 0x20)
			c[i] = ' ';
	t->s[t->n] = c;
	t->slot[j] = (uint32_t)t->n + 1;
	return (uint32_t)t->n++;
}

rec_report_timeline *rec_report_timeline_new(const char *by, const char *type, uint32_t max)
{
	rec_report_timeline *t = rec_cli_xmalloc(sizeof *t);
	memset(t, 0, sizeof *t);
	t->by = by;
	t->type = type;
	t->max = max;
	t->cut_at = -1;
	(void)intern(&t->labels, "", 0);
	if (rec_lockattrib_open(&t->attrib) != REC_OK)
		t->attrib_failed = true;
	return t;
}

void rec_report_timeline_free(rec_report_timeline *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->labels.n; i++)
		free(t->labels.s[i]);
	free(t->labels.s);
	free(t->labels.slot);
	for (size_t i = 0; i < t->nlanes; i++)
		free(t->lanes[i].name);
	free(t->lanes);
	free(t->lane_slot);
	free(t->items);
	rec_lockattrib_close(t->attrib);
	free(t);
}

int64_t rec_report_timeline_start(const rec_report_timeline *t) { return t->start; }

static uint32_t lane_of(rec_report_timeline *t, const rec_thread *th)
{
	uint64_t tid = th ? th->os_tid : 0;
	if ((t->nlanes + 1) * 2 > t->lane_slots) {
		size_t ns = t->lane_slots ? t->lane_slots * 2 : 64;
		uint32_t *sl = rec_cli_xmalloc(ns * sizeof *sl);
		memset(sl, 0, ns * sizeof *sl);
		for (size_t i = 0; i < t->nlanes; i++) {
			size_t j = (t->lanes[i].tid * 0x9E3779B97F4A7C15ull) % ns;
			while (sl[j])
				j = (j + 1) % ns;
			sl[j] = (uint32_t)i + 1;
		}
		free(t->lane_slot);
		t->lane_slot = sl;
		t->lane_slots = ns;
	}
	size_t j = (tid * 0x9E3779B97F4A7C15ull) % t->lane_slots;
	while (t->lane_slot[j]) {
		lane *l = &t->lanes[t->lane_slot[j] - 1];
		if (l->tid == tid) {
			if (!*l->name && th && th->name && *th->name) { /* named later */
				free(l->name);
				l->name = rec_cli_xstrdup(th->name);
			}
			return t->lane_slot[j] - 1;
		}
		j = (j + 1) % t->lane_slots;
	}
	if (t->nlanes == t->lanecap) {
		t->lanecap = t->lanecap ? t->lanecap * 2 : 32;
		t->lanes = rec_cli_xrealloc(t->lanes, t->lanecap * sizeof *t->lanes);
	}
	t->lanes[t->nlanes] = (lane){ tid, rec_cli_xstrdup(th && th->name ? th->name : "") };
	t->lane_slot[j] = (uint32_t)t->nlanes + 1;
	return (uint32_t)t->nlanes++;
}

static int field_index(const rec_event *ev, const char *name)
{
	for (uint32_t i = 0; i < ev->value_count && i < ev->type->field_count; i++)
		if (ev->values[i].present && strcmp(ev->type->fields[i].name, name) == 0)
			return (int)i;
	return -1;
}

static uint64_t field_u64(const rec_event *ev, const char *name)
{
	int i = field_index(ev, name);
	return i < 0 ? 0 : ev->values[i].v.u;
}

/* A string field's bytes (len 0 when absent or null). */
static const char *field_str(const rec_event *ev, const char *name, size_t *len)
{
	int i = field_index(ev, name);
	*len = 0;
	if (i < 0)
		return "";
	const rec_value *v = &ev->values[i];
	if ((v->type != REC_TYPE_STRING && v->type != REC_TYPE_TEXT) || !v->v.s.ptr)
		return "";
	*len = v->v.s.len;
	return v->v.s.ptr;
}

/* "TYPE BYVALUE" of a span: the --by field's value as text. */
static uint32_t span_label(rec_report_timeline *t, const rec_event *ev)
{
	char buf[512];
	int n = snprintf(buf, sizeof buf, "%s", ev->type->name);
	int i = t->by ? field_index(ev, t->by) : -1;
	if (i >= 0 && n > 0 && (size_t)n < sizeof buf - 2) {
		const rec_value *v = &ev->values[i];
		size_t room = sizeof buf - (size_t)n;
		switch (v->type) {
		case REC_TYPE_STRING:
		case REC_TYPE_TEXT: {
			size_t len = v->v.s.ptr ? v->v.s.len : 0;
			if (len > room - 2)
				len = room - 2;
			buf[n] = ' ';
			memcpy(buf + n + 1, v->v.s.ptr ? v->v.s.ptr : "", len);
			n += 1 + (int)len;
			break;
		}
		case REC_TYPE_I8: case REC_TYPE_I16: case REC_TYPE_I32: case REC_TYPE_I64:
			n += snprintf(buf + n, room, " %" PRId64, v->v.i);
			break;
		case REC_TYPE_F32: case REC_TYPE_F64:
			n += snprintf(buf + n, room, " %g", v->v.f);
			break;
		default:
			n += snprintf(buf + n, room, " %" PRIu64, v->v.u);
			break;
		}
	}
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof buf)
		n = (int)sizeof buf - 1;
	return intern(&t->labels, buf, (size_t)n);
}

static bool is_span(const rec_report_timeline *t, const rec_type *ty)
{
	if (t->type)
		return strcmp(ty->name, t->type) == 0;
	return (ty->flags & REC_EVENT_HAS_DURATION) && strncmp(ty->name, "rec.", 4) != 0;
}

void rec_report_timeline_add(rec_report_timeline *t, const rec_event *ev)
{
	const rec_type *ty = ev->type;
	if (!ty || !ty->name)
		return;
	int kind = -1;
	uint32_t label = 0;
	uint64_t holder = 0;
	int64_t dur = ev->duration_ns > 0 ? ev->duration_ns : 0;
	const char *s;
	size_t len;
	if (is_span(t, ty)) {
		kind = K_SPAN;
	} else if (strcmp(ty->name, "rec.LockWait") == 0) {
		kind = K_LOCK;
		holder = field_u64(ev, "holderOsThreadId");
	} else if (strcmp(ty->name, "rec.CondWait") == 0) {
		kind = K_COND;
		s = field_str(ev, "mutexName", &len);
		label = intern(&t->labels, s, len);
	} else if (strcmp(ty->name, "rec.Sleep") == 0) {
		s = field_str(ev, "kind", &len);
		kind = len == 4 && memcmp(s, "cond", 4) == 0 ? K_COND : K_SLEEP;
	} else if (strcmp(ty->name, "rec.CPUSample") == 0) {
		kind = K_CPU;
		uint64_t p = field_u64(ev, "period"), o = field_u64(ev, "overruns");
		dur = p ? (int64_t)(p * (1 + o)) : 0;
	} else if (ty->category && strncmp(ty->category, "rec/IO", 6) == 0 &&
		   (ty->flags & REC_EVENT_HAS_DURATION)) {
		kind = K_IO;
		label = intern(&t->labels, ty->name, strlen(ty->name));
	}
	if (!t->have_start) {
		t->have_start = true;
		t->start = ev->wall_ns;
	}
	int64_t off = ev->wall_ns - t->start;
	if (off + dur > t->end)
		t->end = off + dur;
	if (kind < 0)
		return;
	t->seen[kind]++;
	if (kind == K_LOCK && !t->attrib_failed) {
		/* every wait is a hand-off for the others; the kept ones are split */
		rec_lockattrib_wait w = { field_u64(ev, "lockAddress"), ev->thread ? ev->thread->os_tid : 0,
					  holder, off, off + dur, t->n, t->n < t->max };
		if (rec_lockattrib_add(t->attrib, &w) != REC_OK)
			t->attrib_failed = true;
	}
	if (t->n >= t->max) {
		if (t->cut_at < 0)
			t->cut_at = off;
		return;
	}
	if (kind == K_SPAN)
		label = span_label(t, ev);
	else if (kind == K_LOCK) {
		s = field_str(ev, "lockName", &len);
		label = intern(&t->labels, s, len);
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 4096;
		t->items = rec_cli_xrealloc(t->items, t->cap * sizeof *t->items);
	}
	t->items[t->n++] = (item){ off, dur, holder, lane_of(t, ev->thread), (uint32_t)kind, label };
	t->kept[kind]++;
}

static void out_u64_array(const uint64_t *v, size_t n)
{
	rec_out_char('[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			rec_out_char(',');
		rec_out_u64(v[i]);
	}
	rec_out_char(']');
}

/* "parts": [item, holderTid, start, end, ...]: who held the lock during
 * each part of each kept lock wait (rec/lock_attrib.h); [] when that could
 * not be computed (out of memory). */
static void out_parts(rec_report_timeline *t)
{
	REC_OUT_LIT("[");
	if (!t->attrib_failed && rec_lockattrib_finish(t->attrib) == REC_OK) {
		rec_lockattrib_part p;
		bool first = true;
		while (rec_lockattrib_next(t->attrib, &p) == REC_OK) {
			if (!first)
				rec_out_char(',');
			first = false;
			rec_out_u64(p.tag);
			rec_out_char(',');
			rec_out_u64(p.holder);
			rec_out_char(',');
			rec_out_i64(p.start_ns);
			rec_out_char(',');
			rec_out_i64(p.end_ns);
		}
	}
	REC_OUT_LIT("]");
}

void rec_report_timeline_json(rec_report_timeline *t)
{
	REC_OUT_LIT("{\"start\":\""); /* a string: ns since the epoch exceed 2^53 */
	rec_out_i64(t->start);
	REC_OUT_LIT("\",\"end\":");
	rec_out_i64(t->end);
	REC_OUT_LIT(",\"max\":");
	rec_out_u64(t->max);
	REC_OUT_LIT(",\"cutAt\":");
	rec_out_i64(t->cut_at);
	REC_OUT_LIT(",\"kinds\":[");
	for (size_t k = 0; k < K_KINDS; k++) {
		if (k)
			rec_out_char(',');
		rec_out_js_string(kind_names[k]);
	}
	REC_OUT_LIT("],\"seen\":");
	out_u64_array(t->seen, K_KINDS);
	REC_OUT_LIT(",\"kept\":");
	out_u64_array(t->kept, K_KINDS);
	REC_OUT_LIT(",\n\"lanes\":[");
	for (size_t i = 0; i < t->nlanes; i++) {
		if (i)
			rec_out_char(',');
		rec_out_char('[');
		rec_out_js_string(t->lanes[i].name);
		rec_out_char(',');
		rec_out_u64(t->lanes[i].tid);
		rec_out_char(']');
	}
	REC_OUT_LIT("],\n\"labels\":[");
	for (size_t i = 0; i < t->labels.n; i++) {
		if (i)
			rec_out_char(',');
		rec_out_js_string(t->labels.s[i]);
	}
	REC_OUT_LIT("],\n\"parts\":");
	out_parts(t);
	REC_OUT_LIT(",\n\"items\":[");
	for (size_t i = 0; i < t->n; i++) {
		const item *x = &t->items[i];
		if (i)
			rec_out_str(i % 8 ? "," : ",\n");
		rec_out_u64(x->lane);
		rec_out_char(',');
		rec_out_u64(x->kind);
		rec_out_char(',');
		rec_out_i64(x->start);
		rec_out_char(',');
		rec_out_i64(x->dur);
		rec_out_char(',');
		rec_out_u64(x->label);
		rec_out_char(',');
		rec_out_u64(x->holder);
	}
	REC_OUT_LIT("]}");
}
