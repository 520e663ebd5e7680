/* SPDX-License-Identifier: MIT */
/*
 * view_startup.c - "startup": what happened before the first event of the
 * first user duration type (opts.type, else the first event of any duration
 * type whose name does not start with "rec.", e.g. the first request):
 * sleeps, allocations (rec.Alloc weight), CPU (samples by leaf function),
 * lock waits and condition waits, by call site.  Events come in timestamp
 * order, so reading stops counting at that first event.
 *
 * CPU samples may come as digests (rec_view_add_digests()), ahead of the
 * events: one before the latest event's time is before the first span (no
 * span came by then), so it counts at once; a later one waits (pend) until
 * an event passes it, the first span comes (it counts if before it) or the
 * input ends (it counts).  Those waiting are a few chunks' worth, unless
 * the samples are most of the input: at rec_vi_su_pend_max the older half is
 * summed in its rows and counts if the first span comes after all of it, the view
 * failing if it comes among them (never a number that may be wrong).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "view_internal.h"

enum { K_SLEEP = 0, K_ALLOC, K_CPU, K_LOCK, K_COND, K_KINDS };

typedef struct su_row {
	uint32_t kind, site;
	uint64_t count, total;
	/* CPU rows: digested samples held summed (too many waited): they
	 * count if the first span comes after the latest of them (held_hi) */
	uint64_t held_count, held_total;
} su_row;

/* A digested CPU sample not yet known to be before the first span, and the
 * row it counts in if it is (made for it: a row of no samples is shown
 * nowhere). */
typedef struct su_pend {
	int64_t ts;
	uint32_t row;
	uint64_t w;
} su_pend;

size_t rec_vi_su_pend_max = (size_t)1 << 21;

typedef struct su_state {
	vmap rows;
	uint32_t *row_of;       /* [site * K_KINDS + kind]: row index + 1 (0: none yet) */
	size_t nrow_of;
	bool cut;
	int64_t cut_at;
	uint32_t cut_type;
	uint64_t totals[K_KINDS], counts[K_KINDS];
	su_pend *pend;
	size_t npend, pcap;
	bool held;              /* some rows hold samples (su_row.held_*) */
	int64_t held_hi;        /* the latest time among them (INT64_MIN: none) */
	bool no_span;           /* rec_vi_startup_no_span() */
} su_state;

void rec_vi_startup_no_span(rec_view *v, bool none)
{
	if (v && v->impl == &rec_view_startup)
		((su_state *)v->state)->no_span = none;
}

static rec_status su_init(rec_view *v)
{
	su_state *s = v->state;
	rec_vi_vmap_init(&s->rows, sizeof(su_row));
	s->held_hi = INT64_MIN;
	return REC_OK;
}

static void su_free(rec_view *v)
{
	su_state *s = v->state;
	rec_vi_vmap_free(&s->rows);
	free(s->row_of);
	free(s->pend);
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

/* The CPU row of site (made with no samples when new): its index, or
 * UINT32_MAX when out of memory. */
static uint32_t cpu_row(su_state *s, uint32_t site)
{
	size_t i = row_index(s, K_CPU, site);
	if (i >= UINT32_MAX)
		return UINT32_MAX;
	su_row *r = vmap_at(&s->rows, i);
	r->kind = K_CPU;
	r->site = site;
	return (uint32_t)i;
}

/* count samples of weight total in CPU row ri: before the first span. */
static void cpu_count(su_state *s, uint32_t ri, uint64_t count, uint64_t total)
{
	su_row *r = vmap_at(&s->rows, ri);
	r->count += count;
	r->total += total;
	s->counts[K_CPU] += count;
	s->totals[K_CPU] += total;
}

/* The pending samples before cut counted, the others kept (cut INT64_MAX:
 * all counted; keep false: the others dropped, the first span came). */
static void pend_settle(su_state *s, int64_t cut, bool keep)
{
	size_t k = 0;
	for (size_t i = 0; i < s->npend; i++) {
		const su_pend *p = &s->pend[i];
		if (p->ts < cut)
			cpu_count(s, p->row, 1, p->w);
		else if (keep)
			s->pend[k++] = *p;
	}
	s->npend = k;
}

/* The held sums counted (the first span comes after them, or none does). */
static void held_settle(su_state *s)
{
	for (size_t i = 0; s->held && i < s->rows.n; i++) {
		su_row *r = vmap_at(&s->rows, i);
		if (r->held_count)
			cpu_count(s, (uint32_t)i, r->held_count, r->held_total);
		r->held_count = r->held_total = 0;
	}
	s->held = false;
	s->held_hi = INT64_MIN;
}

static int cmp_pend(const void *a, const void *b, void *ctx)
{
	(void)ctx;
	const su_pend *x = a, *y = b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* At rec_vi_su_pend_max pending: the older half summed in their rows. */
static void pend_hold(su_state *s)
{
	rec_vi_sort(s->pend, s->npend, sizeof *s->pend, cmp_pend, NULL);
	size_t half = s->npend / 2;
	for (size_t i = 0; i < half; i++) {
		const su_pend *p = &s->pend[i];
		su_row *r = vmap_at(&s->rows, p->row);
		r->held_count++;
		r->held_total += p->w;
		if (p->ts > s->held_hi)
			s->held_hi = p->ts;
	}
	s->held = s->held || half;
	memmove(s->pend, s->pend + half, (s->npend - half) * sizeof *s->pend);
	s->npend -= half;
}

/* The first span at (absolute) time at: the samples that waited for it
 * counted if before it. */
static rec_status cut_digests(rec_view *v, su_state *s, int64_t at)
{
	if (s->held && at <= s->held_hi) {
		/* (sticky: rec_view_get() fails too) */
		char msg[240];
		snprintf(msg, sizeof msg,
			 "startup: more than %zu CPU samples came as digests ahead of every other "
			 "event, and the first span began among them: which were before it is not "
			 "known (read the CPU samples as events)",
			 rec_vi_su_pend_max);
		v->dig_status = REC_ERR_LIMIT;
		v->quick = false;
		return rec_vi_fail(v, REC_ERR_LIMIT, msg);
	}
	held_settle(s);
	pend_settle(s, at, false);
	free(s->pend);
	s->pend = NULL;
	s->pcap = 0;
	return REC_OK;
}

static void su_digests(rec_view *v, const rec_chunk_info *chunk, const rec_type *type,
		       const rec_digest *d, size_t n)
{
	su_state *s = v->state;
	if (s->cut || v->dig_status != REC_OK)
		return; /* (the samples after the first span count nothing) */
	int fp, fo;
	rec_vi_dig_cpu_fields(type, &fp, &fo);
	rec_event ev;
	memset(&ev, 0, sizeof ev);
	ev.chunk = chunk;
	ev.type = type;
	for (size_t i = 0; i < n; i++) {
		if (!rec_vi_dig_selected(v, &d[i]))
			continue;
		uint64_t p = fp >= 0 ? d[i].field[fp] : 0, o = fo >= 0 ? d[i].field[fo] : 0;
		const rec_stack *st = d[i].stack;
		bool framed = st && st->depth && st->frames;
		/* the row of its leaf: by stack id for the chunk (as su_add()) */
		uint32_t ri = framed ? rec_vi_dense_get(&v->row_dense, st->id, chunk) : UINT32_MAX;
		if (ri == UINT32_MAX) {
			uint32_t site;
			if (framed) {
				ev.stack = st;
				site = rec_vi_ev_frame(v, &ev, 0);
			} else {
				site = rec_vi_intern(v, "[no stack]", 10);
			}
			ri = site == UINT32_MAX ? UINT32_MAX : cpu_row(s, site);
			if (ri == UINT32_MAX)
				goto nomem;
			if (framed && ri < UINT32_MAX - 1)
				rec_vi_dense_fill(&v->row_dense, st->id, chunk, ri);
		}
		if (s->no_span || (v->have_start && d[i].wall_ns < v->now)) {
			/* no span by the latest event: before the first */
			cpu_count(s, ri, 1, p * (1 + o));
			continue;
		}
		if (s->npend == s->pcap) {
			/* the ones an event has passed counted; the room doubled
			 * unless half of it is free (so that each is walked
			 * over a bounded number of times) */
			if (v->have_start)
				pend_settle(s, v->now, true);
			if (s->npend >= rec_vi_su_pend_max)
				pend_hold(s);
			if ((!s->pcap || s->npend > s->pcap / 2) &&
			    !rec_array_grow((void **)&s->pend, &s->pcap, s->pcap + 1, sizeof *s->pend, 1024))
				goto nomem;
		}
		s->pend[s->npend++] = (su_pend){ d[i].wall_ns, ri, p * (1 + o) };
	}
	return;
nomem:
	v->dig_status = REC_ERR_NOMEM;
}

/* The input is over: no span in it, so the samples that waited count. */
static rec_status su_end_input(rec_view *v)
{
	su_state *s = v->state;
	if (!s->cut) {
		held_settle(s);
		pend_settle(s, INT64_MAX, false);
	}
	return REC_OK;
}

static rec_status su_add(rec_view *v, const rec_event *ev, bool selected)
{
	su_state *s = v->state;
	if (s->cut)
		return REC_OK;
	const vtype *vt = rec_vi_vtype(v, ev);
	if (vt->span) {
		if (s->no_span)
			return rec_vi_fail(v, REC_ERR_STATE, "startup: a span in an input said to have none");
		s->cut = true;
		s->cut_at = ev_start(ev) - v->input_start;
		s->cut_type = vt->name;
		if (s->cut_type == UINT32_MAX)
			s->cut_type = 0;
		return cut_digests(v, s, ev_start(ev));
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
			if (r->kind != (uint32_t)k || !r->count) /* (a row made for samples after the first span) */
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
	false, sizeof(su_state), su_init, su_add, su_end_input, su_finish, su_free, NULL,
	su_digests,
};
