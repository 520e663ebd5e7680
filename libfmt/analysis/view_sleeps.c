/* SPDX-License-Identifier: MIT */
/*
 * view_sleeps.c - "sleeps-by-site": rec.Sleep per call site (the first
 * frame that is not librec's): sleeps, total, mean, p99, max.
 */
#include <stdlib.h>
#include <string.h>

#include "view_internal.h"

typedef struct sl_row {
	uint32_t site;
	uint64_t total;
	rec_histogram *h;
} sl_row;

typedef struct sl_state {
	vmap rows;
} sl_state;

static rec_status sl_init(rec_view *v)
{
	rec_vi_vmap_init(&((sl_state *)v->state)->rows, sizeof(sl_row));
	return REC_OK;
}

static void sl_free(rec_view *v)
{
	sl_state *s = v->state;
	for (size_t i = 0; i < s->rows.n; i++)
		rec_histogram_close(((sl_row *)vmap_at(&s->rows, i))->h);
	rec_vi_vmap_free(&s->rows);
}

static bool sl_wants(const rec_view *v, const rec_type *t)
{
	(void)v;
	return rec_vi_named(t, "rec.Sleep");
}

static rec_status sl_add(rec_view *v, const rec_event *ev, bool selected)
{
	sl_state *s = v->state;
	if (!selected || rec_vi_vtype(v, ev)->role != VT_SLEEP)
		return REC_OK;
	uint32_t site = rec_vi_ev_site(v, ev);
	if (site == UINT32_MAX)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	bool created;
	sl_row *r = rec_vi_id_row(&s->rows, site, &created);
	if (!r || (created && rec_histogram_open(&r->h) != REC_OK))
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	uint64_t d = ev->duration_ns > 0 ? (uint64_t)ev->duration_ns : 0;
	r->total += d;
	if (rec_histogram_add(r->h, d) != REC_OK)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	return REC_OK;
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	rec_view *v = ctx;
	const sl_row *x = a, *y = b;
	return rec_vi_rank(v, x->total, y->total, x->site, y->site, 0, 0);
}

static rec_status sl_finish(rec_view *v)
{
	sl_state *s = v->state;
	static const rec_view_column cols[] = {
		{ "Site", "site", REC_VIEW_TEXT },     { "Sleeps", "sleeps", REC_VIEW_COUNT },
		{ "Total", "total", REC_VIEW_DURATION }, { "Mean", "mean", REC_VIEW_DURATION },
		{ "P99", "p99", REC_VIEW_DURATION },   { "Max", "max", REC_VIEW_DURATION },
	};
	vtable *t = rec_vi_table(v, "sleeps_by_site", "Sleeps by Site", cols, 6);
	if (!t)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	rec_vi_sort(s->rows.vals, s->rows.n, sizeof(sl_row), cmp_rows, v);
	for (size_t i = 0; i < s->rows.n; i++) {
		sl_row *r = vmap_at(&s->rows, i);
		rec_view_cell *c = rec_vi_row(v, t);
		if (!c)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		rec_vi_cell_text(v, &c[0], view_name(v, r->site));
		cell_u(&c[1], rec_histogram_count(r->h));
		cell_u(&c[2], r->total);
		cell_u(&c[3], (uint64_t)(rec_histogram_mean(r->h) + 0.5));
		cell_u(&c[4], rec_histogram_percentile(r->h, 99));
		cell_u(&c[5], rec_histogram_max(r->h));
	}
	rec_vi_cut(v, t, v->o.top);
	return REC_OK;
}

const view_impl rec_view_sleeps_site = {
	"sleeps-by-site", "rec.Sleep per call site: sleeps, total, mean, p99, max",
	false, sizeof(sl_state), sl_init, sl_add, NULL, sl_finish, sl_free, sl_wants,
	NULL,
};
