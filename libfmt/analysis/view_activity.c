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
	return t->act;
}

void rec_vi_act_note_wait(rec_view *v, const vtype *vt, const rec_event *ev)
{
	int kind = -1;
	if (vt->role == VT_CONDWAIT)
		kind = ACT_COND;
	else if (vt->role == VT_SLEEP) {
		int k = vt_field(vt, ev, VF_KIND);
		kind = (k >= 0 && ev->values[k].v.s.ptr && ev->values[k].v.s.len == 4 &&
			memcmp(ev->values[k].v.s.ptr, "cond", 4) == 0) ? ACT_COND : ACT_SLEEP;
	} else if (vt->role == VT_LOCKWAIT)
		kind = ACT_LOCK;
	else if (vt->io && (ev->type->flags & REC_EVENT_HAS_DURATION))
		kind = ACT_IO;
	if (kind < 0)
		return;
	uint32_t site = rec_vi_ev_site(v, ev);
	vact *a = rec_vi_act_of(v, ev);
	if (!a)
		return;
	act_interval *iv = &a->ring[a->ring_pos];
	iv->s = ev_start(ev);
	iv->e = ev_end(ev);
	iv->site = site == UINT32_MAX ? 0 : site;
	iv->kind = (uint8_t)kind;
	a->ring_pos = (a->ring_pos + 1) % ACT_RING;
	if (a->nring < ACT_RING)
		a->nring++;
}

/* The number of the n samples from first on (in ring order, times not
 * decreasing) whose time is below ts. */
static uint32_t lower_ts(const vact *a, uint32_t first, uint32_t n, int64_t ts)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (a->cpu_ts[(first + mid) % CPU_RING] < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
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
	for (uint32_t i = 0; i < a->nring; i++) {
		const act_interval *iv = &a->ring[i];
		int64_t lo = iv->s > s ? iv->s : s;
		int64_t hi = iv->e < e ? iv->e : e;
		if (hi <= lo)
			continue;
		uint64_t ov = (uint64_t)(hi - lo);
		out->ns[iv->kind] += ov;
		if (ov > out->top_ns) {
			out->top_ns = ov;
			out->top_site = iv->site;
		}
	}
	if (a->cpu_unsorted) {
		for (uint32_t i = 0; i < a->ncpu; i++)
			if (a->cpu_ts[i] >= s && a->cpu_ts[i] < e)
				out->cpu_ns += a->cpu_w[i];
		cap_at(out, (uint64_t)(e - s));
		return;
	}
	/* The samples in time order (oldest first from first): the ones in
	 * [s, e) are a range, found by bisection, summed by the running sums
	 * (the same sum mod 2^64 as adding them one by one). */
	uint32_t n = a->ncpu, first = n < CPU_RING ? 0 : a->cpu_pos;
	uint32_t lo = lower_ts(a, first, n, s), hi = lower_ts(a, first, n, e);
	if (lo < hi) {
		uint32_t x = (first + lo) % CPU_RING, y = (first + hi - 1) % CPU_RING;
		out->cpu_ns += a->cpu_cum[y] - a->cpu_cum[x] + a->cpu_w[x];
	}
	cap_at(out, (uint64_t)(e - s));
}
