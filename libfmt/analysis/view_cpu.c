/* SPDX-License-Identifier: MIT */
/*
 * view_cpu.c - "hot-functions": CPU time per function from rec.CPUSample
 * stacks (each sample weighs period x (1 + overruns)): self (the sample's
 * leaf frame) and total (every function on the stack, once per sample).
 * A chunk's samples are summed per stack, each stack's functions found once
 * (the rows it adds to), and added to the rows when the chunk changes.
 */
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "view_internal.h"

typedef struct fn_row {
	uint32_t name;
	uint64_t self_n, self_ns, total_n, total_ns;
	uint64_t last;       /* the stack that counted it in total last */
} fn_row;

/* The samples of one stack of the current chunk, added to its functions'
 * rows when the chunk changes (or at the end): the stack's rows are found
 * once per chunk, not once per sample.  Its rows: rowix[off], the leaf's
 * (self), then each function once (total). */
typedef struct stk_acc {
	uint64_t n, w;
	uint32_t off, cnt;
} stk_acc;

typedef struct cpu_state {
	vmap rows;
	uint64_t samples, ns, seq;
	/* the current chunk's stacks (their index in acc by stack id:
	 * rec_view.row_dense) */
	bool have_chunk;
	uint64_t chunk_offset, run_id;
	uint32_t chunk_seq;
	stk_acc *acc;
	size_t nacc, cap_acc;
	uint32_t *rowix;
	size_t nrowix, cap_rowix;
} cpu_state;

static rec_status cpu_init(rec_view *v)
{
	cpu_state *s = v->state;
	rec_vi_vmap_init(&s->rows, sizeof(fn_row));
	return REC_OK;
}

static void cpu_free(rec_view *v)
{
	cpu_state *s = v->state;
	rec_vi_vmap_free(&s->rows);
	free(s->acc);
	free(s->rowix);
}

static fn_row *row_of(rec_view *v, uint32_t name)
{
	cpu_state *s = v->state;
	return rec_vi_id_row(&s->rows, name, NULL);
}

/* n samples weighing w of a's stack into its rows. */
static void add_acc(cpu_state *s, const stk_acc *a, uint64_t n, uint64_t w)
{
	fn_row *leaf = vmap_at(&s->rows, s->rowix[a->off]);
	leaf->self_n += n;
	leaf->self_ns += w;
	for (uint32_t k = 1; k < a->cnt; k++) {
		fn_row *r = vmap_at(&s->rows, s->rowix[a->off + k]);
		r->total_n += n;
		r->total_ns += w;
	}
}

/* The current chunk's stacks into their rows. */
static void flush_stacks(cpu_state *s)
{
	for (size_t i = 0; i < s->nacc; i++)
		if (s->acc[i].n)
			add_acc(s, &s->acc[i], s->acc[i].n, s->acc[i].w);
	s->nacc = 0;
	s->nrowix = 0;
}

/* The rows of ev's stack (depth > 0) into s->rowix, as a new stk_acc: its
 * index, or SIZE_MAX when out of memory. */
static size_t stack_rows(rec_view *v, cpu_state *s, const rec_event *ev)
{
	const rec_stack *st = ev->stack;
	if (!rec_array_grow((void **)&s->acc, &s->cap_acc, s->nacc + 1, sizeof *s->acc, 256) ||
	    !rec_array_grow((void **)&s->rowix, &s->cap_rowix, s->nrowix + (size_t)st->depth + 1,
			    sizeof *s->rowix, 4096))
		return SIZE_MAX;
	stk_acc *a = &s->acc[s->nacc];
	*a = (stk_acc){ 0, 0, (uint32_t)s->nrowix, 0 };
	s->seq++; /* each function once per stack */
	for (uint32_t k = 0; k < st->depth; k++) {
		uint32_t n = rec_vi_ev_frame(v, ev, k);
		fn_row *r = n == UINT32_MAX ? NULL : row_of(v, n);
		if (!r)
			return SIZE_MAX;
		uint32_t ix = (uint32_t)(((unsigned char *)r - s->rows.vals) / s->rows.esize);
		if (k == 0)
			s->rowix[a->off + a->cnt++] = ix;
		if (r->last != s->seq) {
			r->last = s->seq;
			s->rowix[a->off + a->cnt++] = ix;
		}
	}
	s->nrowix += a->cnt;
	return s->nacc++;
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
	const rec_stack *st = ev->stack;
	if (!st || !st->depth || !st->frames) {
		uint32_t n = rec_vi_intern(v, "[no stack]", 10);
		fn_row *r = n == UINT32_MAX ? NULL : row_of(v, n);
		if (!r)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		r->self_n++, r->self_ns += w, r->total_n++, r->total_ns += w;
		return REC_OK;
	}
	const rec_chunk_info *c = ev->chunk;
	if (!s->have_chunk || c->offset != s->chunk_offset || c->run_id != s->run_id ||
	    c->sequence != s->chunk_seq) {
		flush_stacks(s);
		s->have_chunk = true;
		s->chunk_offset = c->offset;
		s->run_id = c->run_id;
		s->chunk_seq = c->sequence;
	}
	uint32_t ai = rec_vi_dense_get(&v->row_dense, st->id, c);
	if (ai == UINT32_MAX || ai >= s->nacc) {
		size_t i = stack_rows(v, s, ev);
		if (i == SIZE_MAX)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		rec_vi_dense_fill(&v->row_dense, st->id, c, (uint32_t)i);
		ai = (uint32_t)i;
		if (rec_vi_dense_get(&v->row_dense, st->id, c) != ai) {
			/* not kept (a large stack id): counted now, the entry dropped */
			add_acc(s, &s->acc[ai], 1, w);
			s->nrowix = s->acc[ai].off;
			s->nacc--;
			return REC_OK;
		}
	}
	s->acc[ai].n++;
	s->acc[ai].w += w;
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
	flush_stacks(s);
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
	NULL,
};
