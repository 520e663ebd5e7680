/* SPDX-License-Identifier: MIT */
/*
 * view_cpu.c - "hot-functions": CPU time per function from rec.CPUSample
 * stacks (each sample weighs period x (1 + overruns)): self (the sample's
 * leaf frame) and total (every function on the stack, once per sample).
 */
#include <stdlib.h>
#include <string.h>

#include "view_internal.h"

typedef struct fn_row {
	uint32_t name;
	uint64_t self_n, self_ns, total_n, total_ns;
	uint64_t last;       /* the sample that counted it in total last */
} fn_row;

typedef struct cpu_state {
	vmap rows;
	uint64_t samples, ns, seq;
} cpu_state;

static rec_status cpu_init(rec_view *v)
{
	cpu_state *s = v->state;
	rec_vi_vmap_init(&s->rows, sizeof(fn_row));
	return REC_OK;
}

static void cpu_free(rec_view *v)
{
	rec_vi_vmap_free(&((cpu_state *)v->state)->rows);
}

static fn_row *row_of(rec_view *v, uint32_t name)
{
	cpu_state *s = v->state;
	return rec_vi_id_row(&s->rows, name, NULL);
}

static rec_status cpu_add(rec_view *v, const rec_event *ev, bool selected)
{
	cpu_state *s = v->state;
	if (!selected)
		return REC_OK;
	const vtype *vt = rec_vi_vtype(v, ev);
	if (vt->role != VT_CPU)
		return REC_OK;
	uint64_t w = rec_vi_cpu_weight(vt, ev);
	s->samples++;
	s->ns += w;
	s->seq++;
	const rec_stack *st = ev->stack;
	if (!st || !st->depth || !st->frames) {
		uint32_t n = rec_vi_intern(v, "[no stack]", 10);
		fn_row *r = n == UINT32_MAX ? NULL : row_of(v, n);
		if (!r)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		r->self_n++, r->self_ns += w, r->total_n++, r->total_ns += w;
		return REC_OK;
	}
	for (uint32_t k = 0; k < st->depth; k++) {
		uint32_t n = rec_vi_ev_frame(v, ev, k);
		fn_row *r = n == UINT32_MAX ? NULL : row_of(v, n);
		if (!r)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		if (k == 0) {
			r->self_n++;
			r->self_ns += w;
		}
		if (r->last != s->seq) {
			r->last = s->seq;
			r->total_n++;
			r->total_ns += w;
		}
	}
	return REC_OK;
}

static bool cpu_wants(const rec_view *v, const rec_type *t)
{
	(void)v;
	return rec_vi_named(t, "rec.CPUSample");
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	rec_view *v = ctx;
	const fn_row *x = a, *y = b;
	if (x->self_ns != y->self_ns)
		return x->self_ns > y->self_ns ? -1 : 1;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return strcmp(view_name(v, x->name), view_name(v, y->name));
}

static rec_status cpu_finish(rec_view *v)
{
	cpu_state *s = v->state;
	static const rec_view_column cols[] = {
		{ "Function", "function", REC_VIEW_TEXT },
		{ "Self Samples", "self_samples", REC_VIEW_COUNT },
		{ "Self CPU", "self_cpu", REC_VIEW_DURATION },
		{ "Self %", "self_percent", REC_VIEW_PERCENT },
		{ "Total Samples", "total_samples", REC_VIEW_COUNT },
		{ "Total CPU", "total_cpu", REC_VIEW_DURATION },
		{ "Total %", "total_percent", REC_VIEW_PERCENT },
	};
	vtable *t = rec_vi_table(v, "hot_functions", "Functions that Use the Most CPU", cols, 7);
	if (!t)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	rec_vi_sort(s->rows.vals, s->rows.n, sizeof(fn_row), cmp_rows, v);
	for (size_t i = 0; i < s->rows.n; i++) {
		fn_row *r = vmap_at(&s->rows, i);
		rec_view_cell *c = rec_vi_row(v, t);
		if (!c)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		rec_vi_cell_text(v, &c[0], view_name(v, r->name));
		cell_u(&c[1], r->self_n);
		cell_u(&c[2], r->self_ns);
		cell_f(&c[3], s->ns ? 100.0 * (double)r->self_ns / (double)s->ns : 0.0);
		cell_u(&c[4], r->total_n);
		cell_u(&c[5], r->total_ns);
		cell_f(&c[6], s->ns ? 100.0 * (double)r->total_ns / (double)s->ns : 0.0);
	}
	rec_vi_note(v, t, "CPU: samples x period x (1 + overruns) of rec.CPUSample");
	rec_vi_cut(v, t, v->o.top);
	return REC_OK;
}

const view_impl rec_view_hot_functions = {
	"hot-functions", "CPU time per function from rec.CPUSample stacks: self and total",
	false, sizeof(cpu_state), cpu_init, cpu_add, NULL, cpu_finish, cpu_free, cpu_wants,
};
