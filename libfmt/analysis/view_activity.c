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
 *
 * CPU samples may come instead as digests (rec_view_add_digests(): the
 * reader gives a chunk's time, thread and weight of each, ahead of the
 * events): kept per thread in time order from the earliest time a wait in
 * flight or to come can ask about (rec_view.act_floor) on, at most DIG_MAX
 * (a wait of a holder with more samples has its last ones counted), with
 * their running sum (rec_vi_act_cpu_before(): what the requests view
 * reads at each span's start and end).  The
 * tables are the same either way, as far as both bounds hold; the samples
 * of a chunk that gives them as events (where they cannot be digested) add
 * to the digests.
 */
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
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
		t->act->first_ns = INT64_MAX;
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
	if (ev_start(ev) < a->first_ns)
		a->first_ns = ev_start(ev);
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

/* ---- CPU samples as digests ---- */

/* The first of a's digests in [lo, hi) at ts or later (hi: none). */
static uint32_t dig_bisect(const vact *a, uint32_t lo, uint32_t hi, int64_t ts)
{
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (a->dig[mid].ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first of a's digests (in time order) at ts or later. */
static uint32_t dig_lower(const vact *a, int64_t ts)
{
	return dig_bisect(a, 0, a->ndig, ts);
}

/* dig_lower() looked for from index h on, in steps that double (the waits
 * ask about times close to each other's). */
static uint32_t dig_seek(const vact *a, uint32_t h, int64_t ts)
{
	uint32_t n = a->ndig, lo, hi, step = 1;
	if (h > n)
		h = n;
	if (h < n && a->dig[h].ts < ts) { /* forward: [lo - 1] is before ts */
		lo = h + 1;
		hi = lo;
		while (hi < n && a->dig[hi].ts < ts) {
			lo = hi + 1;
			hi = lo + step;
			step *= 2;
		}
		return dig_bisect(a, lo, hi < n ? hi : n, ts);
	}
	/* back: [hi] is at ts or later (or hi == n) */
	hi = h;
	lo = h;
	while (lo > 0 && a->dig[lo - 1].ts >= ts) {
		hi = lo - 1;
		lo = hi > step ? hi - step : 0;
		step *= 2;
	}
	return dig_bisect(a, lo, hi, ts);
}

/* The weight of a's digested samples in [s, e). */
static uint64_t dig_during(vact *a, int64_t s, int64_t e)
{
	if (!a->ndig)
		return 0;
	uint32_t lo = dig_seek(a, a->dig_hint, s), hi = dig_seek(a, lo, e);
	a->dig_hint = lo;
	if (lo >= hi)
		return 0;
	return (hi == a->ndig ? a->dig_total : a->dig[hi].before) - a->dig[lo].before;
}

/* The most digests one thread keeps: a wait longer than this many of its
 * holder's samples has only the last ones counted (as the ring bounds the
 * samples given as events). */
#define DIG_MAX ((uint32_t)1 << 20)

/* Room for one more digest in a: the ones before floor dropped first, then
 * the room doubled unless a quarter of it is free (so that each digest is
 * moved a bounded number of times), at DIG_MAX the older half dropped.
 * false: out of memory. */
static bool dig_room(vact *a, int64_t floor)
{
	uint32_t drop = dig_lower(a, floor);
	if (drop < a->ndig / 2 && a->dig_cap >= DIG_MAX)
		drop = a->ndig / 2;
	if (drop && a->dig) {
		memmove(a->dig, a->dig + drop, (size_t)(a->ndig - drop) * sizeof *a->dig);
		a->ndig -= drop;
		a->dig_hint = a->dig_hint > drop ? a->dig_hint - drop : 0;
	}
	if (a->ndig < a->dig_cap && (a->ndig <= a->dig_cap - a->dig_cap / 4 || a->dig_cap >= DIG_MAX))
		return true;
	return rec_array_grow((void **)&a->dig, &a->dig_cap, a->dig_cap + 1, sizeof *a->dig, 256);
}

/* A digested sample of weight w at ts into a (room made). */
static void dig_add(vact *a, int64_t ts, uint64_t w)
{
	uint32_t n = a->ndig;
	if (n == 0 || a->dig[n - 1].ts <= ts) {
		a->dig[n] = (act_cpu){ ts, a->dig_total };
	} else {
		/* out of order (rare: chunks that overlap in time): in its
		 * place, after the ones of the same time, the sums after it
		 * moved by w */
		uint32_t i = dig_lower(a, ts);
		while (i < n && a->dig[i].ts == ts)
			i++;
		memmove(a->dig + i + 1, a->dig + i, (size_t)(n - i) * sizeof *a->dig);
		a->dig[i].ts = ts;
		for (uint32_t k = i + 1; k <= n; k++)
			a->dig[k].before += w;
	}
	a->dig_total += w;
	a->ndig = n + 1;
	if (ts < a->first_ns)
		a->first_ns = ts;
}

uint64_t rec_vi_act_cpu_before(vact *a, int64_t ts)
{
	if (!a || !a->ndig)
		return a ? a->dig_total : 0;
	uint32_t i = dig_seek(a, a->dig_hint, ts);
	a->dig_hint = i;
	return i == a->ndig ? a->dig_total : a->dig[i].before;
}

void rec_vi_act_digests(rec_view *v, const rec_chunk_info *chunk, const rec_type *type,
			const rec_digest *d, size_t n)
{
	if (!v->act_floor || v->dig_status != REC_OK)
		return;
	/* the weight's fields among the two a digest has (0: absent) */
	int fp, fo;
	rec_vi_dig_cpu_fields(type, &fp, &fo);
	int64_t floor = v->act_floor(v);
	rec_event ev;
	memset(&ev, 0, sizeof ev);
	ev.chunk = chunk;
	const rec_thread *last = NULL;
	vact *a = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!d[i].thread)
			continue;
		if (d[i].thread != last) {
			/* the thread's activity: from the cache by its pool entry
			 * in this chunk, else as for an event */
			last = d[i].thread;
			vdig_ent *e = &v->dig_cache[((uintptr_t)last >> 4) % VDIG_CACHE];
			if (e->p == last && e->chunk_offset == chunk->offset) {
				a = e->act;
			} else {
				ev.thread = last;
				vthread *t = rec_vi_thread(v, &ev, NULL);
				a = t ? (t->act ? t->act : rec_vi_act_new(t)) : NULL;
				if (!a) {
					v->dig_status = REC_ERR_NOMEM;
					return;
				}
				*e = (vdig_ent){ last, chunk->offset, a };
			}
		}
		if (a->ndig == a->dig_cap && !dig_room(a, floor)) {
			v->dig_status = REC_ERR_NOMEM;
			return;
		}
		uint64_t p = fp >= 0 ? d[i].field[fp] : 0, o = fo >= 0 ? d[i].field[fo] : 0;
		dig_add(a, d[i].wall_ns, p * (1 + o));
	}
}

void rec_vi_act_digests_clear(rec_view *v)
{
	memset(v->dig_cache, 0, sizeof v->dig_cache);
	for (size_t i = 0; i < v->threads.n; i++) {
		vact *a = ((vthread *)vmap_at(&v->threads, i))->act;
		if (a) {
			free(a->dig);
			a->dig = NULL;
			a->ndig = a->dig_cap = a->dig_hint = 0;
		}
	}
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
	out->cpu_ns = dig_during(t->act, s, e);
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
