/* SPDX-License-Identifier: MIT */
/*
 * view_activity.c - what a thread was doing lately: its last ACT_RING
 * sleeps, condition waits, I/O waits and lock waits (intervals with their
 * call site) and its last CPU_RING CPU samples, kept per thread while the
 * events stream by in timestamp order, so that a lock wait can be told what
 * its holder did while it waited (contention-by-lock, contention-by-site).
 * Bounded: a thread that did more than ACT_RING things during one wait has
 * only its last ones counted.  Each state's time in one wait is at most the
 * wait's length: a CPU sample claims its whole period (rec.CPUSample's
 * period x (1 + overruns)), and samples closer together than their period,
 * or intervals of one kind that overlap (two I/O waits at once), would sum
 * to more than the thread can have spent in the wait.
 */
#include <stdlib.h>
#include <string.h>

#include "view_internal.h"

bool rec_vi_act_wants(const rec_type *t)
{
	return rec_vi_named(t, "rec.CPUSample") || rec_vi_named(t, "rec.CondWait") ||
	       rec_vi_named(t, "rec.Sleep") || rec_vi_named(t, "rec.LockWait") ||
	       rec_vi_is_io_wait(t);
}

vact *rec_vi_act_new(vthread *t)
{
	t->act = calloc(1, sizeof *t->act);
	if (t->act) {
		t->act->cpu_last = INT64_MIN;
		t->act->ring_pmax = INT64_MIN;
	}
	return t->act;
}

rec_status rec_vi_act_cpu_miss(rec_view *v, const vtype *vt, const rec_event *ev)
{
	size_t index;
	vthread *t = rec_vi_thread(v, ev, &index);
	if (!t)
		return REC_OK;
	vact *a = t->act ? t->act : rec_vi_act_new(t);
	if (!a)
		return REC_OK;
	if (vt->gen != UINT32_MAX && index < UINT32_MAX) {
		/* what rec_vi_thread() does for the thread next time: the name
		 * its pool entry carries, if any, is the thread's again */
		vact_ent *e = &v->act_cache[VACT_SLOT(ev->thread)];
		e->p = ev->thread;
		e->gen = vt->gen;
		e->index = (uint32_t)index;
		e->name = ev->thread->name && ev->thread->name[0] ? t->name : 0;
		e->act = a;
	}
	rec_vi_act_cpu(a, ev_start(ev), rec_vi_cpu_weight(vt, ev));
	return REC_OK;
}

void rec_vi_act_note_wait(rec_view *v, const vtype *vt, const rec_event *ev)
{
	int kind = rec_vi_act_kind(vt, ev);
	if (kind >= 0)
		rec_vi_act_interval(v, ev, kind, rec_vi_ev_site(v, ev));
}

/* The number of the n samples from first on (in ring order, times not
 * decreasing) whose time is below ts. */
static uint32_t lower_ts(const vact *a, uint32_t first, uint32_t n, int64_t ts)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (a->cpu[(first + mid) % CPU_RING].ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* lower_ts(), looking back from the newest first: a wait is settled soon
 * after it ends, so its holder's samples are among the last few (a
 * bisection finds the ones further back). */
static inline uint32_t lower_ts_back(const vact *a, uint32_t first, uint32_t n, int64_t ts)
{
	uint32_t stop = n > 8 ? n - 8 : 0;
	while (n > stop) {
		if (a->cpu[(first + n - 1) % CPU_RING].ts < ts)
			return n;
		n--;
	}
	return n ? lower_ts(a, first, n, ts) : 0;
}

/* The running sum after sample slot i: the sum before the sample noted
 * next, or the total after the newest. */
static uint64_t cpu_after(const vact *a, uint32_t i)
{
	return i == (a->cpu_count + CPU_RING - 1) % CPU_RING ? a->cpu_total
							    : a->cpu[(i + 1) % CPU_RING].before;
}

/* No state of one wait counts longer than the wait (len ns). */
static void cap_at(act_overlap *out, uint64_t len)
{
	for (int k = 0; k < ACT_KINDS; k++)
		if (out->ns[k] > len)
			out->ns[k] = len;
	if (out->cpu_ns > len)
		out->cpu_ns = len;
}

void rec_vi_act_during(const vthread *t, int64_t s, int64_t e, act_overlap *out)
{
	memset(out, 0, sizeof *out);
	out->top_site = UINT32_MAX;
	if (!t || !t->act || e <= s)
		return;
	const vact *a = t->act;
	/* Newest first, back to the first interval that, with all noted before
	 * it, ended by s (the ones left out overlap nothing).  The site kept
	 * is that of the largest overlap, on a tie the one in the lowest slot
	 * of the ring. */
	uint32_t top_idx = ACT_RING, idx = a->ring_pos;
	for (uint32_t j = 0; j < a->nring; j++) {
		idx = (idx + ACT_RING - 1) % ACT_RING;
		const act_interval *iv = &a->ring[idx];
		if (iv->pmax <= s)
			break;
		int64_t lo = iv->s > s ? iv->s : s;
		int64_t hi = iv->e < e ? iv->e : e;
		if (hi <= lo)
			continue;
		uint64_t ov = (uint64_t)(hi - lo);
		out->ns[iv->kind] += ov;
		if (ov > out->top_ns || (ov == out->top_ns && idx < top_idx)) {
			out->top_ns = ov;
			out->top_site = iv->site;
			top_idx = idx;
		}
	}
	if (a->cpu_unsorted) {
		uint32_t n = a->cpu_count < CPU_RING ? (uint32_t)a->cpu_count : CPU_RING;
		for (uint32_t i = 0; i < n; i++)
			if (a->cpu[i].ts >= s && a->cpu[i].ts < e)
				out->cpu_ns += cpu_after(a, i) - a->cpu[i].before;
		cap_at(out, (uint64_t)(e - s));
		return;
	}
	/* The samples in time order (oldest first from first): the ones in
	 * [s, e) are a range, found by bisection, summed by the running sums
	 * (the same sum mod 2^64 as adding them one by one). */
	uint32_t n = a->cpu_count < CPU_RING ? (uint32_t)a->cpu_count : CPU_RING;
	uint32_t first = n < CPU_RING ? 0 : (uint32_t)(a->cpu_count % CPU_RING);
	uint32_t hi = lower_ts_back(a, first, n, e);
	uint32_t lo = hi && a->cpu[(first + hi - 1) % CPU_RING].ts >= s ? lower_ts_back(a, first, hi - 1, s)
								   : hi;
	if (lo < hi) {
		uint64_t end = hi == n ? a->cpu_total : a->cpu[(first + hi) % CPU_RING].before;
		out->cpu_ns += end - a->cpu[(first + lo) % CPU_RING].before;
	}
	cap_at(out, (uint64_t)(e - s));
}
