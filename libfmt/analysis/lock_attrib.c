/* SPDX-License-Identifier: MIT */
/*
 * lock_attrib.c - lock waits split by who held the lock during each part
 * (rec/lock_attrib.h says how and what it cannot see): the waits are kept,
 * their ends sorted per lock, and each wait's parts are found by walking the
 * ends inside it.
 */
#include "rec/lock_attrib.h"

#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"

/* An end of a wait: the hand-off to its waiter. */
typedef struct attrib_end {
	uint64_t lock;
	int64_t end;
	size_t idx; /* into waits */
} attrib_end;

struct rec_lockattrib {
	rec_lockattrib_wait *waits;
	size_t n, cap;
	attrib_end *ends; /* sorted by lock, end, then order added */
	bool finished;
	/* iteration: the wait being split and where it is */
	size_t cur;
	bool splitting;
	size_t pos;       /* next end to look at */
	int64_t t;        /* where the next part starts */
	uint64_t holder;
	bool handoff;
};

rec_status rec_lockattrib_open(rec_lockattrib **out)
{
	if (!out)
		return REC_ERR_INVALID_ARG;
	*out = calloc(1, sizeof **out);
	return *out ? REC_OK : REC_ERR_NOMEM;
}

void rec_lockattrib_close(rec_lockattrib *a)
{
	if (!a)
		return;
	free(a->waits);
	free(a->ends);
	free(a);
}

rec_status rec_lockattrib_add(rec_lockattrib *a, const rec_lockattrib_wait *w)
{
	if (!a || !w || w->end_ns < w->start_ns)
		return REC_ERR_INVALID_ARG;
	if (a->finished) { /* a new round: finish again before iterating */
		free(a->ends);
		a->ends = NULL;
		a->finished = false;
	}
	if (!rec_array_grow((void **)&a->waits, &a->cap, a->n + 1, sizeof *a->waits, 64))
		return REC_ERR_NOMEM;
	a->waits[a->n++] = *w;
	return REC_OK;
}

static int cmp_end(const void *x, const void *y)
{
	const attrib_end *a = x, *b = y;
	if (a->lock != b->lock)
		return a->lock < b->lock ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

rec_status rec_lockattrib_finish(rec_lockattrib *a)
{
	if (!a)
		return REC_ERR_INVALID_ARG;
	if (a->finished)
		return REC_OK;
	a->ends = malloc((a->n ? a->n : 1) * sizeof *a->ends);
	if (!a->ends)
		return REC_ERR_NOMEM;
	for (size_t i = 0; i < a->n; i++) {
		a->ends[i].lock = a->waits[i].lock;
		a->ends[i].end = a->waits[i].end_ns;
		a->ends[i].idx = i;
	}
	qsort(a->ends, a->n, sizeof *a->ends, cmp_end);
	a->finished = true;
	rec_lockattrib_rewind(a);
	return REC_OK;
}

void rec_lockattrib_rewind(rec_lockattrib *a)
{
	if (!a)
		return;
	a->cur = 0;
	a->splitting = false;
}

size_t rec_lockattrib_count(const rec_lockattrib *a)
{
	return a ? a->n : 0;
}

/* The first end of lock after t (ends[i].lock == lock && ends[i].end > t),
 * or where it would be. */
static size_t first_end_after(const rec_lockattrib *a, uint64_t lock, int64_t t)
{
	size_t lo = 0, hi = a->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const attrib_end *e = &a->ends[mid];
		if (e->lock < lock || (e->lock == lock && e->end <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void part(const rec_lockattrib *a, int64_t end, rec_lockattrib_part *out)
{
	const rec_lockattrib_wait *w = &a->waits[a->cur];
	out->wait = a->cur;
	out->tag = w->tag;
	out->lock = w->lock;
	out->waiter = w->waiter;
	out->holder = a->holder;
	out->start_ns = a->t;
	out->end_ns = end;
	out->handoff = a->handoff;
}

rec_status rec_lockattrib_next(rec_lockattrib *a, rec_lockattrib_part *out)
{
	if (!a || !out)
		return REC_ERR_INVALID_ARG;
	if (!a->finished)
		return REC_ERR_STATE;
	for (;;) {
		if (!a->splitting) {
			while (a->cur < a->n && !a->waits[a->cur].counted)
				a->cur++;
			if (a->cur >= a->n)
				return REC_END;
			const rec_lockattrib_wait *w = &a->waits[a->cur];
			a->t = w->start_ns;
			a->holder = w->holder;
			a->handoff = false;
			a->pos = first_end_after(a, w->lock, w->start_ns);
			a->splitting = true;
		}
		const rec_lockattrib_wait *w = &a->waits[a->cur];
		/* the next hand-off inside (t, end): another thread's wait ending */
		while (a->pos < a->n && a->ends[a->pos].lock == w->lock &&
		       a->ends[a->pos].end < w->end_ns) {
			const attrib_end *e = &a->ends[a->pos++];
			const rec_lockattrib_wait *o = &a->waits[e->idx];
			if (e->idx == a->cur || o->waiter == w->waiter || e->end <= a->t)
				continue;
			part(a, e->end, out);
			a->t = e->end;
			a->holder = o->waiter;
			a->handoff = true;
			return REC_OK;
		}
		/* the last part, up to the wait's end */
		a->splitting = false;
		bool any = w->end_ns > a->t;
		if (any)
			part(a, w->end_ns, out);
		a->cur++;
		if (any)
			return REC_OK;
	}
}
