/* SPDX-License-Identifier: MIT */
/*
 * view_wall.c - "wall-by-site": where wall time went, per call site, from
 * rec.WallSample (rec-record --wall HZ): samples, the wall time they stand
 * for (weight x period) and its split by the thread's state: running
 * (on a CPU or ready to run), lock, cond, sleep, io, poll (interposed
 * blocking calls), wait (a restarted system call the preload library does
 * not interpose); a state this build does not know is "other".
 */
#include <stdlib.h>
#include <string.h>

#include "view_internal.h"

static const char *const states[] = { "running", "lock", "cond", "sleep", "io", "poll", "wait" };
#define NSTATES (sizeof states / sizeof states[0])

typedef struct wl_row {
	uint32_t site;
	uint64_t samples;
	uint64_t total;
	uint64_t by_state[NSTATES + 1]; /* the last: other */
} wl_row;

typedef struct wl_state {
	vmap rows;
	uint64_t seen;
} wl_state;

static rec_status wl_init(rec_view *v)
{
	rec_vi_vmap_init(&((wl_state *)v->state)->rows, sizeof(wl_row));
	return REC_OK;
}

static void wl_free(rec_view *v)
{
	rec_vi_vmap_free(&((wl_state *)v->state)->rows);
}

static size_t state_of(const vtype *vt, const rec_event *ev)
{
	int i = vt_field(vt, ev, VF_STATE);
	if (i < 0 || ev->values[i].v.s.ptr == NULL)
		return NSTATES;
	const char *s = ev->values[i].v.s.ptr;
	size_t len = ev->values[i].v.s.len;
	for (size_t k = 0; k < NSTATES; k++)
		if (strlen(states[k]) == len && memcmp(states[k], s, len) == 0)
			return k;
	return NSTATES;
}

static bool wl_wants(const rec_view *v, const rec_type *t)
{
	(void)v;
	return rec_vi_named(t, "rec.WallSample");
}

static rec_status wl_add(rec_view *v, const rec_event *ev, bool selected)
{
	wl_state *s = v->state;
	if (!selected)
		return REC_OK;
	const vtype *vt = rec_vi_vtype(v, ev);
	if (vt->role != VT_WALL)
		return REC_OK;
	uint32_t site = rec_vi_ev_site(v, ev);
	if (site == UINT32_MAX)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	wl_row *r = rec_vi_id_row(&s->rows, site, NULL);
	if (!r)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	uint64_t ns = vt_u64(vt, ev, VF_WEIGHT, 0) * vt_u64(vt, ev, VF_PERIOD, 0);
	r->samples++;
	r->total += ns;
	r->by_state[state_of(vt, ev)] += ns;
	s->seen++;
	return REC_OK;
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	rec_view *v = ctx;
	const wl_row *x = a, *y = b;
	return rec_vi_rank(v, x->total, y->total, x->site, y->site, 0, 0);
}

static rec_status wl_finish(rec_view *v)
{
	wl_state *s = v->state;
	static const rec_view_column cols[] = {
		{ "Site", "site", REC_VIEW_TEXT },        { "Samples", "samples", REC_VIEW_COUNT },
		{ "Wall", "wall", REC_VIEW_DURATION },    { "Running", "running", REC_VIEW_DURATION },
		{ "Lock", "lock", REC_VIEW_DURATION },    { "Cond", "cond", REC_VIEW_DURATION },
		{ "Sleep", "sleep", REC_VIEW_DURATION },  { "I/O", "io", REC_VIEW_DURATION },
		{ "Poll", "poll", REC_VIEW_DURATION },    { "Wait", "wait", REC_VIEW_DURATION },
		{ "Other", "other", REC_VIEW_DURATION },
	};
	vtable *t = rec_vi_table(v, "wall_by_site", "Wall Time by Site", cols, 11);
	if (!t)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	if (s->seen == 0)
		rec_vi_note(v, t, "no rec.WallSample events: record with rec-record --wall HZ");
	rec_vi_sort(s->rows.vals, s->rows.n, sizeof(wl_row), cmp_rows, v);
	for (size_t i = 0; i < s->rows.n; i++) {
		wl_row *r = vmap_at(&s->rows, i);
		rec_view_cell *c = rec_vi_row(v, t);
		if (!c)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		rec_vi_cell_text(v, &c[0], view_name(v, r->site));
		cell_u(&c[1], r->samples);
		cell_u(&c[2], r->total);
		for (size_t k = 0; k <= NSTATES; k++)
			cell_u(&c[3 + k], r->by_state[k]);
	}
	rec_vi_cut(v, t, v->o.top);
	return REC_OK;
}

const view_impl rec_view_wall_site = {
	"wall-by-site", "rec.WallSample per call site: wall time, running or waiting (lock, cond, "
	"sleep, io, poll, wait)",
	false, sizeof(wl_state), wl_init, wl_add, NULL, wl_finish, wl_free, wl_wants,
	NULL,
};
