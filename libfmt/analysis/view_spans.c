/* SPDX-License-Identifier: MIT */
/*
 * view_spans.c - span breakdowns over a user duration type (opts.type, else
 * every duration type whose name does not start with "rec."):
 *
 *   "requests": each span's wall time broken into CPU (its thread's
 *   rec.CPUSample inside it, period x (1 + overruns) each, at most what the
 *   waits leave of the wall time), lock wait
 *   (rec.LockWait), condition wait (rec.CondWait, and rec.Sleep kind=cond of
 *   older recordings), sleep (rec.Sleep), I/O wait (category rec/IO) and
 *   unaccounted (the rest): events of the span's thread that start inside it,
 *   their durations cut at the span's end.  The mean per type (and --by
 *   value), and the N slowest spans with the longest lock wait's lock and
 *   holder.
 *
 *   "allocation-by-span": rec.Alloc bytes (weight) of the span's thread
 *   inside each span, per type and --by value: total, per span, max.
 *
 * A span is settled when the stream (in timestamp order) passes its end:
 * memory follows the spans in flight, the rows and the N slowest kept.
 * "requests" may take the CPU samples as digests (rec_view_add_digests(),
 * ahead of the events): its thread's running sum of them at the span's
 * start and at its end (view_activity.c keeps them from the earliest end of
 * a span in flight on).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_internal.h"

enum { P_CPU = 0, P_LOCK, P_COND, P_SLEEP, P_IO, P_UNACC, P_PARTS };

typedef struct span {
	size_t thread;       /* index in v->threads */
	int64_t s, e;
	uint32_t type, by, thread_name;
	uint64_t part[P_PARTS];
	uint64_t alloc;
	uint64_t max_lock;
	uint32_t lock, holder;
	uint64_t cpu0;       /* its thread's digested CPU before it began */
} span;

typedef struct span_row {
	uint32_t type, by;
	uint64_t spans, wall, max_wall;
	uint64_t part[P_PARTS];
	uint64_t alloc, max_alloc;
	rec_histogram *h;
} span_row;

typedef struct span_state {
	bool alloc_view;
	vmap rows;
	span *open;
	size_t nopen, cap;
	int64_t min_end;
	span *slow;          /* the slowest, unsorted */
	size_t nslow, maxslow;
} span_state;

/* The earliest time a span may still ask its thread's digested CPU samples
 * about: the earliest end of the spans open, or the latest event's time
 * (spans come in the order they start). */
static int64_t sp_floor(const rec_view *v)
{
	const span_state *s = v->state;
	if (!v->have_start)
		return INT64_MIN; /* an input's digests before its first event */
	return s->min_end < v->now ? s->min_end : v->now;
}

static rec_status sp_init(rec_view *v)
{
	span_state *s = v->state;
	s->alloc_view = v->impl == &rec_view_alloc_span;
	if (!s->alloc_view)
		v->act_floor = sp_floor;
	rec_vi_vmap_init(&s->rows, sizeof(span_row));
	s->min_end = INT64_MAX;
	s->maxslow = v->o.top ? v->o.top : 10;
	s->slow = calloc(s->maxslow, sizeof *s->slow);
	return s->slow ? REC_OK : REC_ERR_NOMEM;
}

static void sp_free(rec_view *v)
{
	span_state *s = v->state;
	for (size_t i = 0; i < s->rows.n; i++)
		rec_histogram_close(((span_row *)vmap_at(&s->rows, i))->h);
	rec_vi_vmap_free(&s->rows);
	free(s->open);
	free(s->slow);
}

static rec_status settle(rec_view *v, span *sp)
{
	span_state *s = v->state;
	uint64_t wall = (uint64_t)(sp->e - sp->s);
	/* its thread's CPU samples given as digests: all of those before its
	 * end have been (the stream is past it) */
	vact *a = ((vthread *)vmap_at(&v->threads, sp->thread))->act;
	if (a && !s->alloc_view)
		sp->part[P_CPU] += rec_vi_act_cpu_before(a, sp->e) - sp->cpu0;
	/* CPU is estimated from samples (a period each): at most what the
	 * recorded waits leave of the wall time, so that the parts add up to
	 * it (a sample taken just inside a span that mostly slept weighs a
	 * whole period). */
	const uint64_t waits = sp->part[P_LOCK] + sp->part[P_COND] + sp->part[P_SLEEP] + sp->part[P_IO];
	const uint64_t room = waits < wall ? wall - waits : 0;
	if (sp->part[P_CPU] > room)
		sp->part[P_CPU] = room;
	uint64_t seen = 0;
	for (int k = 0; k < P_UNACC; k++)
		seen += sp->part[k];
	sp->part[P_UNACC] = seen < wall ? wall - seen : 0;
	uint32_t key[2] = { sp->type, sp->by };
	bool created;
	size_t i = rec_vi_vmap_get(&s->rows, (const char *)key, sizeof key, &created);
	if (i == SIZE_MAX)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	span_row *r = vmap_at(&s->rows, i);
	if (created) {
		r->type = sp->type;
		r->by = sp->by;
		if (rec_histogram_open(&r->h) != REC_OK)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	}
	r->spans++;
	r->wall += wall;
	if (wall > r->max_wall)
		r->max_wall = wall;
	for (int k = 0; k < P_PARTS; k++)
		r->part[k] += sp->part[k];
	r->alloc += sp->alloc;
	if (sp->alloc > r->max_alloc)
		r->max_alloc = sp->alloc;
	if (rec_histogram_add(r->h, wall) != REC_OK)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	/* the N slowest */
	if (s->nslow < s->maxslow) {
		s->slow[s->nslow++] = *sp;
	} else {
		size_t low = 0;
		for (size_t k = 1; k < s->nslow; k++)
			if (s->slow[k].e - s->slow[k].s < s->slow[low].e - s->slow[low].s)
				low = k;
		if (s->slow[low].e - s->slow[low].s < sp->e - sp->s)
			s->slow[low] = *sp;
	}
	return REC_OK;
}

static rec_status settle_until(rec_view *v, int64_t now)
{
	span_state *s = v->state;
	if (now < s->min_end)
		return REC_OK;
	int64_t m = INT64_MAX;
	size_t k = 0;
	for (size_t i = 0; i < s->nopen; i++) {
		if (s->open[i].e <= now) {
			rec_status st = settle(v, &s->open[i]);
			if (st != REC_OK)
				return st;
		} else {
			if (s->open[i].e < m)
				m = s->open[i].e;
			s->open[k++] = s->open[i];
		}
	}
	s->nopen = k;
	s->min_end = m;
	return REC_OK;
}

static uint64_t clipped(const rec_event *ev, int64_t end)
{
	int64_t e = ev_end(ev) < end ? ev_end(ev) : end;
	return e > ev_start(ev) ? (uint64_t)(e - ev_start(ev)) : 0;
}

static rec_status sp_add(rec_view *v, const rec_event *ev, bool selected);

bool rec_vi_spans_pass(rec_view *v, const rec_event *ev)
{
	const span_state *s = v->state;
	if (v->impl->add != sp_add || !v->have_start || v->type || v->finished || s->nopen ||
	    (ev->type->flags & REC_EVENT_HAS_DURATION))
		return false;
	v->now = ev->wall_ns;
	return true;
}

static rec_status sp_add(rec_view *v, const rec_event *ev, bool selected)
{
	span_state *s = v->state;
	/* No span open and ev none: nothing to settle or to add to (most
	 * events of a recording without spans, e.g. its CPU samples). */
	if (!s->nopen && !rec_vi_vtype(v, ev)->span)
		return REC_OK;
	rec_status st = settle_until(v, ev_start(ev));
	if (st != REC_OK)
		return st;
	if (!ev->thread)
		return REC_OK;
	const vtype *vt = rec_vi_vtype(v, ev);
	if (vt->span) {
		if (!selected)
			return REC_OK;
		size_t ti;
		vthread *t = rec_vi_thread(v, ev, &ti);
		if (!t)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		uint32_t thread_name = t->name;
		uint32_t type = vt->name;
		uint32_t by = 0;
		if (v->by) {
			size_t n = rec_vi_by_value(v, ev);
			by = rec_vi_intern(v, v->scratch, n);
		}
		if (type == UINT32_MAX || by == UINT32_MAX)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		if (s->nopen == s->cap) {
			size_t nc = s->cap ? s->cap * 2 : 16;
			span *p = realloc(s->open, nc * sizeof *p);
			if (!p)
				return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
			s->open = p;
			s->cap = nc;
		}
		span *sp = &s->open[s->nopen++];
		memset(sp, 0, sizeof *sp);
		sp->thread = ti;
		sp->s = ev_start(ev);
		sp->e = ev_end(ev);
		sp->type = type;
		sp->by = by;
		sp->thread_name = thread_name;
		/* (every digest before its start has been given) */
		sp->cpu0 = t->act && !s->alloc_view ? rec_vi_act_cpu_before(t->act, sp->s) : 0;
		if (!sp->thread_name) {
			char buf[40];
			snprintf(buf, sizeof buf, "tid=%" PRIu64, ev->thread->os_tid);
			sp->thread_name = rec_vi_intern(v, buf, strlen(buf));
			if (sp->thread_name == UINT32_MAX)
				sp->thread_name = 0;
		}
		if (sp->e < s->min_end)
			s->min_end = sp->e;
		return REC_OK;
	}
	if (!s->nopen)
		return REC_OK;
	int part = -1;
	bool alloc = false, cpu = false;
	if (vt->role == VT_CPU)
		cpu = true;
	else if (vt->role == VT_LOCKWAIT)
		part = P_LOCK;
	else if (vt->role == VT_CONDWAIT)
		part = P_COND;
	else if (vt->role == VT_SLEEP) {
		int k = vt_field(vt, ev, VF_KIND);
		part = (k >= 0 && ev->values[k].v.s.ptr && ev->values[k].v.s.len == 4 &&
			memcmp(ev->values[k].v.s.ptr, "cond", 4) == 0) ? P_COND : P_SLEEP;
	} else if (vt->role == VT_ALLOC)
		alloc = true;
	else if (vt->io && (ev->type->flags & REC_EVENT_HAS_DURATION))
		part = P_IO;
	if (part < 0 && !alloc && !cpu)
		return REC_OK;
	size_t ti;
	if (!rec_vi_thread(v, ev, &ti))
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	int64_t t0 = ev_start(ev);
	for (size_t i = 0; i < s->nopen; i++) {
		span *sp = &s->open[i];
		if (sp->thread != ti || t0 < sp->s || t0 >= sp->e)
			continue;
		if (cpu) {
			sp->part[P_CPU] += rec_vi_cpu_weight(vt, ev);
		} else if (alloc) {
			sp->alloc += rec_vi_alloc_bytes(vt, ev);
		} else {
			uint64_t d = clipped(ev, sp->e);
			sp->part[part] += d;
			if (part == P_LOCK && d > sp->max_lock) {
				sp->max_lock = d;
				int li = vt_field(vt, ev, VF_LOCKNAME);
				sp->lock = (li >= 0 && ev->values[li].v.s.ptr)
						   ? rec_vi_intern(v, ev->values[li].v.s.ptr, ev->values[li].v.s.len)
						   : 0;
				uint64_t htid = vt_u64(vt, ev, VF_HOLDER, 0);
				vthread *h = htid ? rec_vi_thread_by_tid(v, ev->chunk ? ev->chunk->pid : 0, htid) : NULL;
				char buf[40];
				const char *hl = !htid ? "(unknown)" : rec_vi_thread_label(v, h, buf, sizeof buf);
				if (!h && htid) {
					snprintf(buf, sizeof buf, "tid=%" PRIu64, htid);
					hl = buf;
				}
				sp->holder = rec_vi_intern(v, hl, strlen(hl));
				if (sp->lock == UINT32_MAX)
					sp->lock = 0;
				if (sp->holder == UINT32_MAX)
					sp->holder = 0;
			}
		}
	}
	return REC_OK;
}

static rec_status sp_end_input(rec_view *v)
{
	rec_status st = settle_until(v, INT64_MAX);
	rec_vi_act_digests_clear(v);
	return st;
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	rec_view *v = ctx;
	const span_row *x = a, *y = b;
	span_state *s = v->state;
	uint64_t kx = s->alloc_view ? x->alloc : x->wall, ky = s->alloc_view ? y->alloc : y->wall;
	return rec_vi_rank(v, kx, ky, x->type, y->type, x->by, y->by);
}

static int cmp_slow(const void *a, const void *b, void *ctx)
{
	(void)ctx;
	const span *x = a, *y = b;
	int64_t wx = x->e - x->s, wy = y->e - y->s;
	if (wx != wy)
		return wx > wy ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

static const char *const part_titles[P_PARTS] = { "CPU", "Lock Wait", "Cond Wait", "Sleep",
						  "I/O", "Unaccounted" };
static const char *const part_keys[P_PARTS] = { "cpu", "lock_wait", "cond_wait", "sleep",
						"io", "unaccounted" };

static rec_status requests_finish(rec_view *v)
{
	span_state *s = v->state;
	rec_view_column cols[16];
	size_t n = rec_vi_cols_type_by(v, cols, "Span Type");
	cols[n++] = (rec_view_column){ "Spans", "spans", REC_VIEW_COUNT };
	cols[n++] = (rec_view_column){ "Mean", "mean", REC_VIEW_DURATION };
	cols[n++] = (rec_view_column){ "Max", "max", REC_VIEW_DURATION };
	for (int k = 0; k < P_PARTS; k++)
		cols[n++] = (rec_view_column){ part_titles[k], part_keys[k], REC_VIEW_DURATION };
	vtable *t = rec_vi_table(v, "requests", "Where the Time of a Span Goes (mean per span)", cols, n);
	if (!t)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	rec_vi_sort(s->rows.vals, s->rows.n, sizeof(span_row), cmp_rows, v);
	for (size_t i = 0; i < s->rows.n; i++) {
		span_row *r = vmap_at(&s->rows, i);
		rec_view_cell *c = rec_vi_row(v, t);
		if (!c)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		size_t k = rec_vi_cells_type_by(v, c, r->type, r->by);
		cell_u(&c[k++], r->spans);
		cell_u(&c[k++], (r->wall + r->spans / 2) / r->spans);
		cell_u(&c[k++], r->max_wall);
		for (int p = 0; p < P_PARTS; p++)
			cell_u(&c[k++], (r->part[p] + r->spans / 2) / r->spans);
	}
	rec_vi_note(v, t, "from the events of the span's own thread inside it; CPU: its samples x "
			"period, at most what the waits leave; Unaccounted: the rest (running between "
			"samples, or waiting unrecorded)");
	rec_vi_cut(v, t, v->o.top);

	n = 0;
	cols[n++] = (rec_view_column){ "Start", "start", REC_VIEW_OFFSET };
	cols[n++] = (rec_view_column){ "Thread", "thread", REC_VIEW_TEXT };
	n += rec_vi_cols_type_by(v, &cols[n], "Span Type");
	cols[n++] = (rec_view_column){ "Wall", "wall", REC_VIEW_DURATION };
	for (int k = 0; k < P_PARTS; k++)
		cols[n++] = (rec_view_column){ part_titles[k], part_keys[k], REC_VIEW_DURATION };
	cols[n++] = (rec_view_column){ "Lock", "lock", REC_VIEW_TEXT };
	cols[n++] = (rec_view_column){ "Holder", "holder", REC_VIEW_TEXT };
	vtable *sl = rec_vi_table(v, "slowest", "Slowest Spans", cols, n);
	if (!sl)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	rec_vi_sort(s->slow, s->nslow, sizeof(span), cmp_slow, NULL);
	for (size_t i = 0; i < s->nslow; i++) {
		const span *sp = &s->slow[i];
		rec_view_cell *c = rec_vi_row(v, sl);
		if (!c)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		size_t k = 0;
		cell_i(&c[k++], sp->s - v->input_start);
		rec_vi_cell_text(v, &c[k++], view_name(v, sp->thread_name));
		k += rec_vi_cells_type_by(v, &c[k], sp->type, sp->by);
		cell_u(&c[k++], (uint64_t)(sp->e - sp->s));
		for (int p = 0; p < P_PARTS; p++)
			cell_u(&c[k++], sp->part[p]);
		if (sp->max_lock) {
			rec_vi_cell_text(v, &c[k], view_name(v, sp->lock));
			rec_vi_cell_text(v, &c[k + 1], view_name(v, sp->holder));
		}
	}
	return REC_OK;
}

static rec_status alloc_finish(rec_view *v)
{
	span_state *s = v->state;
	rec_view_column cols[8];
	size_t n = rec_vi_cols_type_by(v, cols, "Span Type");
	cols[n++] = (rec_view_column){ "Spans", "spans", REC_VIEW_COUNT };
	cols[n++] = (rec_view_column){ "Bytes", "bytes", REC_VIEW_BYTES };
	cols[n++] = (rec_view_column){ "Per Span", "per_span", REC_VIEW_BYTES };
	cols[n++] = (rec_view_column){ "Max", "max", REC_VIEW_BYTES };
	vtable *t = rec_vi_table(v, "allocation_by_span", "Allocation per Span", cols, n);
	if (!t)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	rec_vi_sort(s->rows.vals, s->rows.n, sizeof(span_row), cmp_rows, v);
	for (size_t i = 0; i < s->rows.n; i++) {
		span_row *r = vmap_at(&s->rows, i);
		rec_view_cell *c = rec_vi_row(v, t);
		if (!c)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		size_t k = rec_vi_cells_type_by(v, c, r->type, r->by);
		cell_u(&c[k++], r->spans);
		cell_u(&c[k++], r->alloc);
		cell_u(&c[k++], (r->alloc + r->spans / 2) / r->spans);
		cell_u(&c[k++], r->max_alloc);
	}
	rec_vi_note(v, t, "rec.Alloc weight of the span's own thread inside each span");
	rec_vi_cut(v, t, v->o.top);
	return REC_OK;
}

const view_impl rec_view_requests = {
	"requests",
	"each span of a user duration type broken into CPU, lock, condition, sleep, I/O "
	"and unaccounted time; the slowest spans",
	true, sizeof(span_state), sp_init, sp_add, sp_end_input, requests_finish, sp_free, NULL,
	rec_vi_act_digests,
};

const view_impl rec_view_alloc_span = {
	"allocation-by-span", "allocated bytes inside the spans of a user duration type, per span",
	true, sizeof(span_state), sp_init, sp_add, sp_end_input, alloc_finish, sp_free, NULL,
	NULL,
};
