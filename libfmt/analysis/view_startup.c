/* SPDX-License-Identifier: MIT */
/*
 * view_startup.c - "startup": what happened before the first event of the
 * first user duration type (opts.type, else the first event of any duration
 * type whose name does not start with "rec.", e.g. the first request):
 * sleeps, allocations (rec.Alloc weight), CPU (samples by leaf function),
 * lock waits and condition waits, by call site.  Events come in timestamp
 * order, so reading stops counting at that first event.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_internal.h"

enum { K_SLEEP = 0, K_ALLOC, K_CPU, K_LOCK, K_COND, K_KINDS };

typedef struct su_row {
	uint32_t kind, site;
	uint64_t count, total;
} su_row;

typedef struct su_state {
	vmap rows;
	uint32_t *row_of;       /* [site * K_KINDS + kind]: row index + 1 (0: none yet) */
	size_t nrow_of;
	bool cut;
	int64_t cut_at;
	uint32_t cut_type;
	uint64_t totals[K_KINDS], counts[K_KINDS];
} su_state;

static rec_status su_init(rec_view *v)
{
	rec_vi_vmap_init(&((su_state *)v->state)->rows, sizeof(su_row));
	return REC_OK;
}

static void su_free(rec_view *v)
{
	rec_vi_vmap_free(&((su_state *)v->state)->rows);
	free(((su_state *)v->state)->row_of);
}

/* The row of (kind, site), created when new: SIZE_MAX when out of memory.
 * Sites are interned ids, so an array finds the row without hashing. */
static size_t row_index(su_state *s, int kind, uint32_t site)
{
	size_t k = (size_t)site * K_KINDS + (size_t)kind;
	uint32_t *slot = rec_vi_id_slot(&s->row_of, &s->nrow_of, k, 256);
	if (!slot)
		return SIZE_MAX;
	if (*slot)
		return *slot - 1;
	uint32_t key[2] = { (uint32_t)kind, site };
	size_t i = rec_vi_vmap_get(&s->rows, (const char *)key, sizeof key, NULL);
	if (i != SIZE_MAX && i < UINT32_MAX)
		*slot = (uint32_t)i + 1;
	return i;
}

static rec_status su_add(rec_view *v, const rec_event *ev, bool selected)
{
	su_state *s = v->state;
	if (s->cut)
		return REC_OK;
	const vtype *vt = rec_vi_vtype(v, ev);
	if (vt->span) {
		s->cut = true;
		s->cut_at = ev_start(ev) - v->input_start;
		s->cut_type = vt->name;
		if (s->cut_type == UINT32_MAX)
			s->cut_type = 0;
		return REC_OK;
	}
	if (!selected)
		return REC_OK;
	const rec_stack *st = ev->stack;
	bool framed = st && st->depth && st->frames;
	if (vt->role == VT_CPU && framed) {
		/* a stack of this chunk seen before: its row, by stack id */
		uint32_t ri = rec_vi_dense_get(&v->row_dense, st->id, ev->chunk);
		if (ri != UINT32_MAX) {
			uint64_t w = rec_vi_cpu_weight(vt, ev);
			su_row *r = vmap_at(&s->rows, ri);
			r->count++;
			r->total += w;
			s->counts[K_CPU]++;
			s->totals[K_CPU] += w;
			return REC_OK;
		}
	}
	int kind;
	uint64_t w;
	uint32_t site;
	if (vt->role == VT_SLEEP) {
		kind = K_SLEEP;
		w = (uint64_t)(ev->duration_ns > 0 ? ev->duration_ns : 0);
	} else if (vt->role == VT_ALLOC) {
		kind = K_ALLOC;
		w = rec_vi_alloc_bytes(vt, ev);
	} else if (vt->role == VT_CPU) {
		kind = K_CPU;
		w = rec_vi_cpu_weight(vt, ev);
	} else if (vt->role == VT_LOCKWAIT) {
		kind = K_LOCK;
		w = (uint64_t)(ev->duration_ns > 0 ? ev->duration_ns : 0);
	} else if (vt->role == VT_CONDWAIT) {
		kind = K_COND;
		w = (uint64_t)(ev->duration_ns > 0 ? ev->duration_ns : 0);
	} else {
		return REC_OK;
	}
	if (kind == K_CPU)
		site = framed ? rec_vi_ev_frame(v, ev, 0) : rec_vi_intern(v, "[no stack]", 10);
	else
		site = rec_vi_ev_site(v, ev);
	if (site == UINT32_MAX)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	size_t i = row_index(s, kind, site);
	if (i == SIZE_MAX)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	if (kind == K_CPU && framed && ev->chunk && i < UINT32_MAX - 1)
		rec_vi_dense_fill(&v->row_dense, st->id, ev->chunk, (uint32_t)i);
	su_row *r = vmap_at(&s->rows, i);
	r->kind = (uint32_t)kind;
	r->site = site;
	r->count++;
	r->total += w;
	s->counts[kind]++;
	s->totals[kind] += w;
	return REC_OK;
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	rec_view *v = ctx;
	const su_row *x = a, *y = b;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return rec_vi_rank(v, x->total, y->total, x->site, y->site, 0, 0);
}

static rec_status su_finish(rec_view *v)
{
	su_state *s = v->state;
	static const rec_view_column scols[] = {
		{ "Before", "before", REC_VIEW_TEXT },   { "At", "at", REC_VIEW_OFFSET },
		{ "Sleeps", "sleeps", REC_VIEW_COUNT },  { "Sleep", "sleep", REC_VIEW_DURATION },
		{ "Allocations", "allocations", REC_VIEW_COUNT }, { "Allocated", "allocated", REC_VIEW_BYTES },
		{ "CPU", "cpu", REC_VIEW_DURATION },     { "Lock Waits", "lock_waits", REC_VIEW_COUNT },
		{ "Lock Wait", "lock_wait", REC_VIEW_DURATION }, { "Cond Wait", "cond_wait", REC_VIEW_DURATION },
	};
	vtable *t = rec_vi_table(v, "startup", "Before the First Span", scols, 10);
	if (!t)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	rec_view_cell *c = rec_vi_row(v, t);
	if (!c)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	if (s->cut) {
		rec_vi_cell_text(v, &c[0], view_name(v, s->cut_type));
		cell_i(&c[1], s->cut_at);
	} else {
		rec_vi_cell_text(v, &c[0], "(no span: the whole recording)");
	}
	cell_u(&c[2], s->counts[K_SLEEP]);
	cell_u(&c[3], s->totals[K_SLEEP]);
	cell_u(&c[4], s->counts[K_ALLOC]);
	cell_u(&c[5], s->totals[K_ALLOC]);
	cell_u(&c[6], s->totals[K_CPU]);
	cell_u(&c[7], s->counts[K_LOCK]);
	cell_u(&c[8], s->totals[K_LOCK]);
	cell_u(&c[9], s->totals[K_COND]);

	static const struct {
		const char *name, *title;
		rec_view_kind kind;
	} kinds[K_KINDS] = {
		{ "sleeps", "Sleeps before the First Span", REC_VIEW_DURATION },
		{ "allocations", "Allocations before the First Span", REC_VIEW_BYTES },
		{ "cpu", "CPU before the First Span (leaf function)", REC_VIEW_DURATION },
		{ "lock_waits", "Lock Waits before the First Span", REC_VIEW_DURATION },
		{ "cond_waits", "Condition Waits before the First Span", REC_VIEW_DURATION },
	};
	rec_vi_sort(s->rows.vals, s->rows.n, sizeof(su_row), cmp_rows, v);
	for (int k = 0; k < K_KINDS; k++) {
		if (!s->counts[k])
			continue;
		rec_view_column cols[3] = {
			{ "Site", "site", REC_VIEW_TEXT },
			{ "Count", "count", REC_VIEW_COUNT },
			{ "Total", "total", kinds[k].kind },
		};
		vtable *kt = rec_vi_table(v, kinds[k].name, kinds[k].title, cols, 3);
		if (!kt)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		for (size_t i = 0; i < s->rows.n; i++) {
			su_row *r = vmap_at(&s->rows, i);
			if (r->kind != (uint32_t)k)
				continue;
			rec_view_cell *rc = rec_vi_row(v, kt);
			if (!rc)
				return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
			rec_vi_cell_text(v, &rc[0], view_name(v, r->site));
			cell_u(&rc[1], r->count);
			cell_u(&rc[2], r->total);
		}
		rec_vi_cut(v, kt, v->o.top);
	}
	return REC_OK;
}

const view_impl rec_view_startup = {
	"startup",
	"sleeps, allocations, CPU and lock waits before the first span (e.g. the first request)",
	false, sizeof(su_state), su_init, su_add, NULL, su_finish, su_free, NULL,
};
