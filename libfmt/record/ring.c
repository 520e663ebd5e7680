/* SPDX-License-Identifier: MIT */
/*
 * ring.c - the per-thread SPSC byte ring (layout: recorder_internal.h): the
 * producer's slow path (wrap, full buffer: drop or wait), the half-full
 * wake-up of the background thread, and the consumer's drain; and the
 * ring's memory: mapped at registration (rec_ring_alloc), populated as the
 * thread uses it (rec_ring_grow, by the background thread).
 */
#include <linux/futex.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "record/recorder_internal.h"

/* ---- the ring's memory ----------------------------------------------------- */
/* A thread's ring is mapped, and its pages are put in place (faulted in
 * writable, MADV_POPULATE_WRITE) before the thread writes them: the first
 * RING_FIRST bytes here, the rest by the background thread as the thread
 * uses it (ring_grow).  Faulting a ring in a page at a time costs the
 * emitting thread one fault per 4 KiB inside whatever it was doing when its
 * writes reached the page (on the benchmark's virtual machine: 64 faults,
 * 0.8-1.0 ms, for 256 KiB; populating the same in one call, 33-40 us).
 * Growing with use keeps a short-lived thread's ring (a thread per request
 * writes a few hundred bytes) at RING_FIRST resident.  Without
 * MADV_POPULATE_WRITE (Linux < 5.14) the thread faults its pages in itself.
 * NULL on failure. */
#define RING_FIRST ((size_t)16384)

static bool ring_populate(uint8_t *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	return madvise(p, len, MADV_POPULATE_WRITE) == 0;
#else
	(void)p;
	(void)len;
	return false;
#endif
}

uint8_t *rec_ring_alloc(size_t size, uint64_t *populated)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	const size_t first = size < RING_FIRST ? size : RING_FIRST;
	/* on failure: not populated, and rec_ring_grow() does not try again */
	*populated = ring_populate(p, first) ? first : size;
	return p;
}

/* Background thread, after draining live buffer b: once the thread has
 * written half of what is populated, populate twice as much (up to the
 * whole ring), so it keeps writing into pages that are in place as long as
 * it writes less than that half between two rounds. */
void rec_ring_grow(rec_tbuf_full *b)
{
	if (!b->has_ring || b->populated >= b->cap)
		return;
	const uint64_t head = __atomic_load_n(&b->pub.pub_head, __ATOMIC_ACQUIRE);
	if (head < b->populated / 2)
		return;
	uint64_t want = b->populated * 2;
	while (want < b->cap && want < head * 2)
		want *= 2;
	if (want > b->cap)
		want = b->cap;
	if (!ring_populate(b->pub.base + b->populated, (size_t)(want - b->populated)))
		want = b->cap; /* the thread faults the rest in itself */
	b->populated = want;
}


void rec_emit_kick_(struct rec_tbuf_ *b)
{
	rec_tbuf_full *fb = (rec_tbuf_full *)b;
	rec_recorder *r = fb->r;

	if (!fb->has_ring) {
		b->kick_at = UINT64_MAX;
		return;
	}
	/* Wake the background thread only when the buffer is really half full
	 * (the consumer may have drained it since kick_at was set). */
	const uint64_t tail = __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE);
	if (b->head - tail < fb->cap / 2) {
		b->kick_at = tail + fb->cap / 2;
		return;
	}
	b->kick_at = b->head + fb->cap / 2;
	if (__atomic_exchange_n(&r->wake, 1u, __ATOMIC_ACQ_REL) == 0)
		rec_futex_wake(&r->wake, 1);
}

/* Full and throttled drops are counted inside the thread's emit (busy set),
 * where its signal handlers do not count them (a nested begin counts as
 * nested): a plain increment, stored atomically for the background thread.
 * Nested drops can nest themselves (a signal inside a handler's drop). */
static inline void count_one(uint64_t *n, int kind)
{
	if (kind == REC_DK_NESTED)
		__atomic_fetch_add(n, 1, __ATOMIC_RELAXED);
	else
		__atomic_store_n(n, __atomic_load_n(n, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

void rec_drop_count(rec_tbuf_full *b, const rec_event_type *t, int kind)
{
	const uint32_t id = ((const rec_type_entry *)t)->id;
	const uint32_t h = (id * 2654435761u) >> 28; /* REC_DROP_SLOTS = 16 */
	for (uint32_t i = 0; i < REC_DROP_SLOTS; i++) {
		rec_drop_slot *s = &b->drops[(h + i) % REC_DROP_SLOTS];
		uint32_t cur = __atomic_load_n(&s->type_id, __ATOMIC_ACQUIRE);
		if (cur == 0 && id != 0) {
			/* A signal handler of this thread may claim it first. */
			if (__atomic_compare_exchange_n(&s->type_id, &cur, id, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				cur = id;
		}
		if (cur == id) {
			count_one(&s->n[kind], kind);
			return;
		}
	}
	count_one(&b->drops_other[kind], kind);
}

static inline void count_drop(struct rec_tbuf_ *b, const rec_event_type *t)
{
	rec_drop_count((rec_tbuf_full *)b, t, REC_DK_FULL);
}

void rec_emit_drop_nested_(struct rec_tbuf_ *b, rec_event_type *t)
{
	rec_drop_count((rec_tbuf_full *)b, t, REC_DK_NESTED);
}

bool rec_emit_throttle_(struct rec_tbuf_ *b, rec_event_type *t, uint64_t ticks)
{
	rec_type_entry *e = (rec_type_entry *)t;
	const uint64_t wt = e->thr_window_ticks;
	const uint32_t budget = e->thr_budget;
	const uint32_t w = (uint32_t)(wt ? ticks / wt : 0);
	uint64_t s = __atomic_load_n(&e->thr_state, __ATOMIC_RELAXED);
	for (;;) {
		const uint32_t sw = (uint32_t)(s >> 32), n = (uint32_t)s;
		uint64_t ns;
		if ((int32_t)(w - sw) > 0) { /* a later window: it starts with us */
			if (budget == 0)
				break;
			ns = ((uint64_t)w << 32) | 1u;
		} else if (n >= budget) { /* this window's budget is spent (no store) */
			break;
		} else {
			ns = s + 1;
		}
		if (__atomic_compare_exchange_n(&e->thr_state, &s, ns, true, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return true;
	}
	rec_drop_count((rec_tbuf_full *)b, t, REC_DK_THROTTLED);
	return false;
}

bool rec_emit_reserve_slow_(struct rec_tbuf_ *b, rec_event_type *t, uint32_t need, int in_signal)
{
	rec_tbuf_full *fb = (rec_tbuf_full *)b;
	rec_recorder *r = fb->r;

	if (!fb->has_ring || need > fb->cap) {
		count_drop(b, t);
		return false;
	}
	const uint64_t cap = fb->cap;
	for (unsigned spins = 0;; spins++) {
		const uint64_t tail = __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE);
		const uint64_t off = b->head & b->mask, room = cap - off;
		const uint64_t used = b->head - tail;

		if (room >= need) {
			if (cap - used >= need) {
				b->wlimit = tail + cap < b->head + room ? tail + cap : b->head + room;
				return true;
			}
		} else if (cap - used >= room + need) {
			if (room >= 2) {
				b->base[off] = 0;
				b->base[off + 1] = 0;
			}
			b->head += room;
			b->wlimit = tail + cap < b->head + cap ? tail + cap : b->head + cap;
			return true;
		}
		/* Full.  The background thread itself never waits (nobody else
		 * drains its buffer), nor does a signal handler. */
		if (r->full_policy != REC_FULL_WAIT || in_signal ||
		    !__atomic_load_n(&t->enabled, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&r->closing, __ATOMIC_ACQUIRE) ||
		    pthread_equal(pthread_self(), r->bg))
			break;
		if (spins == 0)
			rec_wake_bg(r);
		if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
		} else {
			struct timespec ts = { 0, 50L * 1000 };
			if (spins % 64 == 0)
				rec_wake_bg(r);
			nanosleep(&ts, NULL);
		}
	}
	count_drop(b, t);
	if (fb->has_ring)
		rec_wake_bg(r); /* let the background thread make room (no syscall if already woken) */
	return false;
}

bool rec_ring_drain(rec_tbuf_full *b, rec_buf *out, uint64_t *records)
{
	*records = 0;
	if (!b->has_ring)
		return true;
	const uint64_t h = __atomic_load_n(&b->pub.pub_head, __ATOMIC_ACQUIRE);
	uint64_t t = b->pub.tail;
	const uint64_t cap = b->cap, mask = cap - 1;
	const uint8_t *base = b->pub.base;
	uint64_t n = 0;

	if (t == h)
		return true;
	/* Each record grows by at most 1 byte (2-byte length -> 3-byte uvarint). */
	if (!rec_buf_reserve(out, (size_t)(h - t) + (size_t)(h - t) / 2 + 16))
		return false;
	while (t < h) {
		const uint64_t off = t & mask, room = cap - off;
		if (room < 2) {
			t += room;
			continue;
		}
		const uint8_t *p = base + off;
		const uint32_t len = (uint32_t)p[0] | ((uint32_t)p[1] << 8);
		if (len == 0) {
			t += room;
			continue;
		}
		uint8_t *d = out->data + out->len + rec_varint_put(out->data + out->len, len);
		if (len >= 16 && len <= 32) { /* most records: overlapping pieces, no call */
			uint8_t w0[16], w1[16];
			memcpy(w0, p + 2, 16);
			memcpy(w1, p + 2 + len - 16, 16);
			memcpy(d, w0, 16);
			memcpy(d + len - 16, w1, 16);
		} else if (len >= 8 && len < 16) {
			uint64_t w0, w1;
			memcpy(&w0, p + 2, 8);
			memcpy(&w1, p + 2 + len - 8, 8);
			memcpy(d, &w0, 8);
			memcpy(d + len - 8, &w1, 8);
		} else {
			memcpy(d, p + 2, len);
		}
		out->len = (size_t)(d - out->data) + len;
		t += 2u + len;
		n++;
	}
	__atomic_store_n(&b->pub.tail, t, __ATOMIC_RELEASE);
	*records = n;
	return true;
}
