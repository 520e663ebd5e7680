/* SPDX-License-Identifier: MIT */
/*
 * view_latency.c - "latency": per event type with a duration (and per value
 * of --by FIELD), count, mean, p50, p90, p99, p99.9, max and total, from a
 * log-linear histogram per row (rec_histogram: within 1/256 of the true
 * percentile; the mean, max and total are exact).
 */
#include <stdlib.h>
#include <string.h>

#include "view_internal.h"

typedef struct lat_row {
	rec_histogram *h;
	uint32_t type, by;
	uint64_t total;
} lat_row;

typedef struct lat_state {
	vmap rows;
	uint32_t *row_of;  /* without --by: [interned type name] -> row index + 1 */
	size_t nrow_of;
} lat_state;

static rec_status lat_init(rec_view *v)
{
	lat_state *s = v->state;
	rec_vi_vmap_init(&s->rows, sizeof(lat_row));
	return REC_OK;
}

static void lat_free(rec_view *v)
{
	lat_state *s = v->state;
	for (size_t i = 0; i < s->rows.n; i++)
		rec_histogram_close(((lat_row *)vmap_at(&s->rows, i))->h);
	rec_vi_vmap_free(&s->rows);
	free(s->row_of);
}

/* The row of (type, by): an array by type name without --by (the names
 * are interned ids), else the map.  SIZE_MAX when out of memory. */
static size_t row_index(lat_state *s, uint32_t type, uint32_t by, bool *created)
{
	*created = false;
	uint32_t *slot = NULL;
	if (by == 0) {
		slot = rec_vi_id_slot(&s->row_of, &s->nrow_of, type, 64);
		if (!slot)
			return SIZE_MAX;
		if (*slot)
			return *slot - 1;
	}
	uint32_t key[2] = { type, by };
	size_t i = rec_vi_vmap_get(&s->rows, (const char *)key, sizeof key, created);
	if (slot && i != SIZE_MAX && i < UINT32_MAX)
		*slot = (uint32_t)i + 1;
	return i;
}

static rec_status lat_add(rec_view *v, const rec_event *ev, bool selected)
{
	lat_state *s = v->state;
	if (!selected || !(ev->type->flags & REC_EVENT_HAS_DURATION))
		return REC_OK;
	const vtype *vt = rec_vi_vtype(v, ev);
	if (v->type && !vt->span) /* with opts.type, the span type is that type */
		return REC_OK;
	uint32_t by = 0;
	if (v->by) {
		if (rec_vi_field(ev, v->by) < 0)
			return REC_OK;
		size_t n = rec_vi_by_value(v, ev);
		by = rec_vi_intern(v, v->scratch, n);
		if (by == UINT32_MAX)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	}
	uint32_t type = vt->name;
	if (type == UINT32_MAX)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	bool created;
	size_t i = row_index(s, type, by, &created);
	if (i == SIZE_MAX)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	lat_row *r = vmap_at(&s->rows, i);
	if (created) {
		r->type = type;
		r->by = by;
		if (rec_histogram_open(&r->h) != REC_OK)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	}
	uint64_t d = ev->duration_ns > 0 ? (uint64_t)ev->duration_ns : 0;
	if (rec_histogram_add(r->h, d) != REC_OK)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	r->total += d;
	return REC_OK;
}

/* The types with a duration (opts.type: that type). */
static bool lat_wants(const rec_view *v, const rec_type *t)
{
	if (v->type)
		return rec_vi_named(t, v->type);
	return (t->flags & REC_EVENT_HAS_DURATION) != 0;
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	rec_view *v = ctx;
	const lat_row *x = a, *y = b;
	return rec_vi_rank(v, x->total, y->total, x->type, y->type, x->by, y->by);
}

static rec_status lat_finish(rec_view *v)
{
	lat_state *s = v->state;
	rec_view_column cols[11];
	size_t n = rec_vi_cols_type_by(v, cols, "Event Type");
	cols[n++] = (rec_view_column){ "Count", "count", REC_VIEW_COUNT };
	cols[n++] = (rec_view_column){ "Mean", "mean", REC_VIEW_DURATION };
	cols[n++] = (rec_view_column){ "P50", "p50", REC_VIEW_DURATION };
	cols[n++] = (rec_view_column){ "P90", "p90", REC_VIEW_DURATION };
	cols[n++] = (rec_view_column){ "P99", "p99", REC_VIEW_DURATION };
	cols[n++] = (rec_view_column){ "P99.9", "p99_9", REC_VIEW_DURATION };
	cols[n++] = (rec_view_column){ "Max", "max", REC_VIEW_DURATION };
	cols[n++] = (rec_view_column){ "Total", "total", REC_VIEW_DURATION };
	vtable *t = rec_vi_table(v, "latency", v->by ? "Latency by Event Type and Field" : "Latency by Event Type",
			       cols, n);
	if (!t)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	rec_vi_sort(s->rows.vals, s->rows.n, sizeof(lat_row), cmp_rows, v);
	for (size_t i = 0; i < s->rows.n; i++) {
		lat_row *r = vmap_at(&s->rows, i);
		rec_view_cell *c = rec_vi_row(v, t);
		if (!c)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		size_t k = rec_vi_cells_type_by(v, c, r->type, r->by);
		cell_u(&c[k++], rec_histogram_count(r->h));
		cell_u(&c[k++], (uint64_t)(rec_histogram_mean(r->h) + 0.5));
		cell_u(&c[k++], rec_histogram_percentile(r->h, 50));
		cell_u(&c[k++], rec_histogram_percentile(r->h, 90));
		cell_u(&c[k++], rec_histogram_percentile(r->h, 99));
		cell_u(&c[k++], rec_histogram_percentile(r->h, 99.9));
		cell_u(&c[k++], rec_histogram_max(r->h));
		cell_u(&c[k++], r->total);
	}
	rec_vi_note(v, t, "percentiles within 0.4 % (1/256) of the true value (log-linear histogram)");
	rec_vi_cut(v, t, v->o.top);
	return REC_OK;
}

const rec_histogram *rec_view_latency_histogram(const rec_view *v, size_t row)
{
	if (!v || v->impl != &rec_view_latency || !v->finished || !v->ntables)
		return NULL;
	const lat_state *s = v->state;
	if (row >= v->out[0].row_count || row >= s->rows.n)
		return NULL;
	return ((const lat_row *)vmap_at(&s->rows, row))->h;
}

const view_impl rec_view_latency = {
	"latency", "per event type with a duration: count, mean, p50, p90, p99, p99.9, max, total",
	true, sizeof(lat_state), lat_init, lat_add, NULL, lat_finish, lat_free, lat_wants,
	NULL,
};
