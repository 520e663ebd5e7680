/* SPDX-License-Identifier: MIT */
/*
 * view_io.c - "io-by-site": blocking I/O (rec.IO, and a program's own
 * duration types of category rec/IO) per call site (the first frame that
 * is not librec's) and kind (the `kind` field: socket, file, pipe, other;
 * empty for a type without one): calls, bytes (the `bytes` field), total,
 * mean, p99, max, and the peer or path (`address`) of the longest call,
 * the earliest of equal ones.  Like JFR's socket-reads-by-host and
 * file-reads-by-path, but by the code that waited.
 */
#include <stdlib.h>
#include <string.h>

#include "view_internal.h"

typedef struct io_row {
	uint32_t site, kind; /* the key: interned names */
	uint32_t address;    /* the longest call's (interned; "" without one) */
	uint64_t total, bytes, longest;
	bool any;
	rec_histogram *h;
} io_row;

typedef struct io_state {
	vmap rows;
	uint32_t empty; /* "" interned (UINT32_MAX: not yet) */
} io_state;

static rec_status io_init(rec_view *v)
{
	io_state *s = v->state;
	rec_vi_vmap_init(&s->rows, sizeof(io_row));
	s->empty = UINT32_MAX;
	return REC_OK;
}

static void io_free(rec_view *v)
{
	io_state *s = v->state;
	for (size_t i = 0; i < s->rows.n; i++)
		rec_histogram_close(((io_row *)vmap_at(&s->rows, i))->h);
	rec_vi_vmap_free(&s->rows);
}

static bool io_wants(const rec_view *v, const rec_type *t)
{
	(void)v;
	return rec_vi_is_io_wait(t);
}

/* The text of field k of ev interned; "" when ev has no such field or it
 * is not a string or text (a program's own type may have another kind). */
static uint32_t io_text(rec_view *v, io_state *s, const vtype *vt, const rec_event *ev, int k)
{
	int i = vt_field(vt, ev, k);
	if (i >= 0 && (ev->values[i].type == REC_TYPE_STRING || ev->values[i].type == REC_TYPE_TEXT) &&
	    ev->values[i].v.s.ptr)
		return rec_vi_ev_str(v, ev, &ev->values[i]);
	if (s->empty == UINT32_MAX)
		s->empty = rec_vi_intern(v, "", 0);
	return s->empty;
}

/* The `bytes` field of ev when it is an integer (a negative one counts 0),
 * else 0. */
static uint64_t io_bytes(const vtype *vt, const rec_event *ev)
{
	int i = vt_field(vt, ev, VF_BYTES);
	if (i < 0)
		return 0;
	const rec_value *x = &ev->values[i];
	switch (x->type) {
	case REC_TYPE_U8:
	case REC_TYPE_U16:
	case REC_TYPE_U32:
	case REC_TYPE_U64:
		return x->v.u;
	case REC_TYPE_I8:
	case REC_TYPE_I16:
	case REC_TYPE_I32:
	case REC_TYPE_I64:
		return x->v.i > 0 ? (uint64_t)x->v.i : 0;
	default:
		return 0;
	}
}

static rec_status io_add(rec_view *v, const rec_event *ev, bool selected)
{
	io_state *s = v->state;
	const vtype *vt = rec_vi_vtype(v, ev);
	if (!selected || !vt->io || !(ev->type->flags & REC_EVENT_HAS_DURATION))
		return REC_OK;
	uint32_t key[2];
	key[0] = rec_vi_ev_site(v, ev);
	key[1] = io_text(v, s, vt, ev, VF_KIND);
	if (key[0] == UINT32_MAX || key[1] == UINT32_MAX)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	bool created;
	size_t i = rec_vi_vmap_get(&s->rows, (const char *)key, sizeof key, &created);
	if (i == SIZE_MAX)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	io_row *r = vmap_at(&s->rows, i);
	if (created) {
		r->site = key[0];
		r->kind = key[1];
		if (rec_histogram_open(&r->h) != REC_OK)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	}
	uint64_t d = ev->duration_ns > 0 ? (uint64_t)ev->duration_ns : 0;
	r->total += d;
	r->bytes += io_bytes(vt, ev);
	if (!r->any || d > r->longest) { /* events come in time order: the earliest of equal ones */
		uint32_t a = io_text(v, s, vt, ev, VF_ADDRESS);
		if (a == UINT32_MAX)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		r->address = a;
		r->longest = d;
		r->any = true;
	}
	if (rec_histogram_add(r->h, d) != REC_OK)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	return REC_OK;
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	rec_view *v = ctx;
	const io_row *x = a, *y = b;
	return rec_vi_rank(v, x->total, y->total, x->site, y->site, x->kind, y->kind);
}

static rec_status io_finish(rec_view *v)
{
	io_state *s = v->state;
	static const rec_view_column cols[] = {
		{ "Site", "site", REC_VIEW_TEXT },	 { "Kind", "kind", REC_VIEW_TEXT },
		{ "Calls", "calls", REC_VIEW_COUNT },	 { "Bytes", "bytes", REC_VIEW_BYTES },
		{ "Total", "total", REC_VIEW_DURATION }, { "Mean", "mean", REC_VIEW_DURATION },
		{ "P99", "p99", REC_VIEW_DURATION },	 { "Max", "max", REC_VIEW_DURATION },
		{ "Longest's Peer or Path", "address", REC_VIEW_TEXT },
	};
	vtable *t = rec_vi_table(v, "io_by_site", "Blocking I/O by Site", cols, 9);
	if (!t)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	rec_vi_sort(s->rows.vals, s->rows.n, sizeof(io_row), cmp_rows, v);
	for (size_t i = 0; i < s->rows.n; i++) {
		io_row *r = vmap_at(&s->rows, i);
		rec_view_cell *c = rec_vi_row(v, t);
		if (!c)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		rec_vi_cell_text(v, &c[0], view_name(v, r->site));
		rec_vi_cell_text(v, &c[1], view_name(v, r->kind));
		cell_u(&c[2], rec_histogram_count(r->h));
		cell_u(&c[3], r->bytes);
		cell_u(&c[4], r->total);
		cell_u(&c[5], (uint64_t)(rec_histogram_mean(r->h) + 0.5));
		cell_u(&c[6], rec_histogram_percentile(r->h, 99));
		cell_u(&c[7], rec_histogram_max(r->h));
		rec_vi_cell_text(v, &c[8], view_name(v, r->address));
	}
	rec_vi_cut(v, t, v->o.top);
	return REC_OK;
}

const view_impl rec_view_io_site = {
	"io-by-site",
	"blocking I/O (rec.IO) per call site and kind: calls, bytes, total, mean, p99, max, the longest's peer or path",
	false, sizeof(io_state), io_init, io_add, NULL, io_finish, io_free, io_wants,
	NULL,
};
