/* SPDX-License-Identifier: MIT */
/*
 * bg.c - the recorder's background thread.  Each round (bg_collect) it
 * moves what the threads recorded into the chunk writer: write failures
 * that ended, every thread buffer drained into staging (drops counted,
 * exited threads' buffers reclaimed), new stacks symbolized, and the new
 * strings, threads, modules, frames and stacks defined in the writer before
 * the records that refer to them are appended (the writer builds the chunk
 * from them as they come: writer_chunk.c).  rec_bg_main runs rounds every
 * quarter of the flush interval while they find records (less often while
 * they do not), at the flush interval (which closes the chunk), when a
 * buffer is half full, and on request (rec_bg_request: flush, dump,
 * periodic callbacks), and the last round at close; a crash round is
 * bounded (crash.c).
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "record/recorder_internal.h"
#include "record/stack_cfi.h"
#include "record/stack_internal.h"

/* The TSC frequency a recording's chunks carry is measured over at least
 * this (bg_collect): worst-case error ~12 ppm here, ~15 us over 1.2 s. */
#define CAL_SETTLE_NS (UINT64_C(5) * 1000 * 1000)
/* Rounds per flush interval while records come (rec_bg_main).  Each round
 * has a cost of its own whatever it takes (the wake-up; every ring, pool
 * table and compressor touched again after the service ran on the core):
 * bench/bgcost.sh at 12,500-100,000 events a second put it at about 1.4 ms
 * of the thread's CPU a second with 10 rounds, against about 75 ns an event.
 * 4 rounds: -7.6 % of the thread's CPU an event at 25,000 events a second
 * (15 alternating pairs, lower in 13; 2026-12-07), the largest round's work
 * about 2.5 times a tenth-interval's (bursts over 1 ms about 2 a second
 * instead of 1).  A thread that fills half its buffer between rounds wakes
 * the thread itself (ring.c).  (-DBG_ROUNDS=N builds another, to compare:
 * make BUILD=/tmp/b10 CFLAGS=-DBG_ROUNDS=10u /tmp/b10/lib/librec.a) */
#ifndef BG_ROUNDS
#define BG_ROUNDS 4u
#endif
/* A round that takes fewer records than this lets the rounds slow down:
 * the records the periodic tasks emit (metrics, process statistics, once
 * a second each) are no reason for three more wake-ups before the flush. */
#define BG_ROUND_RECORDS 64u
/* A round at most 1/BG_FLUSH_EARLY of the flush interval before the flush
 * is due flushes: a periodic task due a little before the flush (one
 * added as the recorder opened, before the thread computed its first
 * flush; one added a little before a requested flush) takes the flush
 * along, and both are due at the same time from then on; without it the
 * two kept their offset and an idle recorder woke twice an interval
 * (a periodic task due a little after the flush joins it: periodic_due). */
#define BG_FLUSH_EARLY 64u


static void put_write_failed(rec_recorder *r, const rec_wf_event *e, uint64_t msg)
{
	uint8_t body[128];
	uint8_t *p = body;
	p += rec_varint_put(p, REC_TYPE_ID_WRITE_FAILED);
	p += rec_varint_put(p, e->start_ticks);
	p += rec_varint_put(p, e->end_ticks > e->start_ticks ? e->end_ticks - e->start_ticks : 0);
	p += rec_varint_put(p, (uint64_t)(uint32_t)e->err);
	p += rec_varint_put(p, msg);
	p += rec_varint_put(p, e->action);
	p += rec_varint_put(p, e->chunks);
	p += rec_varint_put(p, e->events);
	p += rec_varint_put(p, e->bytes);
	size_t len = (size_t)(p - body);
	if (!rec_buf_varint(&r->staging, len) || !rec_buf_append(&r->staging, body, len))
		rec_report(r, REC_ERR_NOMEM, "recorder: out of memory for rec.WriteFailed");
}

static void put_dropped(rec_recorder *r, uint64_t ticks, uint64_t count, uint64_t thread,
			uint32_t reason, uint32_t type_id)
{
	uint8_t body[64];
	uint8_t *p = body;
	p += rec_varint_put(p, REC_TYPE_ID_DROPPED);
	p += rec_varint_put(p, ticks);
	p += rec_varint_put(p, count);
	p += rec_varint_put(p, thread);
	p += rec_varint_put(p, reason);
	p += rec_varint_put(p, type_id);
	size_t len = (size_t)(p - body);
	if (!rec_buf_varint(&r->staging, len) || !rec_buf_append(&r->staging, body, len)) {
		rec_report(r, REC_ERR_NOMEM, "recorder: out of memory for rec.Dropped");
		return;
	}
}

/* Append staging to the writer; on rejection, record by record. */
void rec_bg_append(rec_recorder *r, uint64_t records)
{
	rec_status st = rec_writer_append_records(r->w, r->staging.data, r->staging.len);
	if (st == REC_OK) {
		__atomic_fetch_add(&r->st_events, records, __ATOMIC_RELAXED);
		return;
	}
	if (st != REC_ERR_INVALID_ARG) {
		rec_report(r, st, rec_writer_errmsg(r->w));
		__atomic_fetch_add(&r->st_dropped, records, __ATOMIC_RELAXED);
		return;
	}
	rec_report(r, st, rec_writer_errmsg(r->w));
	const uint8_t *p = r->staging.data, *end = p + r->staging.len;
	uint64_t rejected = 0, ok = 0;
	rec_type_tally by_type;
	memset(&by_type, 0, sizeof by_type);
	while (p < end) {
		const uint8_t *q = p;
		uint64_t size, type_id;
		if (!rec_varint_get(&q, end, &size) || size > (uint64_t)(end - q))
			break;
		size_t n = (size_t)(q - p) + (size_t)size;
		if (rec_writer_append_records(r->w, p, n) == REC_OK) {
			ok++;
		} else {
			rejected++;
			/* The record's Type_Id, first in its body. */
			if (!rec_varint_get(&q, p + n, &type_id) || type_id > UINT32_MAX)
				type_id = 0;
			rec_tally_add(&by_type, (uint32_t)type_id, 1);
		}
		p += n;
	}
	__atomic_fetch_add(&r->st_events, ok, __ATOMIC_RELAXED);
	if (rejected) {
		uint64_t ticks = rec_now_ticks(r), nrec = 0;
		r->staging.len = 0;
		for (uint32_t i = 0; i < REC_TALLY_TYPES && by_type.id[i]; i++, nrec++)
			put_dropped(r, ticks, by_type.n[i], 0, REC_DROP_REJECTED, by_type.id[i]);
		if (by_type.other) {
			put_dropped(r, ticks, by_type.other, 0, REC_DROP_REJECTED, 0);
			nrec++;
		}
		if (rec_writer_append_records(r->w, r->staging.data, r->staging.len) == REC_OK)
			__atomic_fetch_add(&r->st_events, nrec, __ATOMIC_RELAXED);
		rec_writer_note_dropped(r->w, rejected);
		__atomic_fetch_add(&r->st_dropped, rejected, __ATOMIC_RELAXED);
	}
}

/* Write one byte per page of [p, p + len) so the kernel maps them now. */
static void touch_pages(void *p, size_t len)
{
	volatile uint8_t *b = p;
	for (size_t i = 0; i < len; i += 4096)
		b[i] = 0;
	if (len)
		b[len - 1] = 0;
}

/* Grow *arr (elements of size sz, capacity *cap) to hold at least n, with
 * every new page written once (faulted in here, not later under a lock). */
static bool pending_reserve(void **arr, size_t *cap, uint64_t n, size_t sz)
{
	if (n <= *cap)
		return true;
	size_t nc = *cap ? *cap : 256;
	while (nc < n)
		nc *= 2;
	void *p = realloc(*arr, nc * sz);
	if (!p)
		return false;
	touch_pages((uint8_t *)p + *cap * sz, (nc - *cap) * sz);
	*arr = p;
	*cap = nc;
	return true;
}

/* Queue b's thread (and its name) to be defined in the writer this round. */
static bool bg_define_later(rec_bg_pending *pd, rec_tbuf_full *b)
{
	if (!pending_reserve((void **)&pd->thrs, &pd->cthrs, pd->nthrs + 1, sizeof *pd->thrs))
		return false;
	rec_pending_thread *t = &pd->thrs[pd->nthrs++];
	t->id = b->thread_id;
	b->defined_id = t->id;
	t->os_tid = b->os_tid;
	pthread_mutex_lock(&b->r->lock); /* against rec_thread_renamed_() */
	t->name_id = b->name_id;
	memcpy(t->name, b->name, sizeof t->name);
	b->defined = 1; /* a rename from now on is too late */
	pthread_mutex_unlock(&b->r->lock);
	return true;
}

/* The drops b counted since they were last reported: one rec.Dropped per
 * (type, reason) with a non-zero increase.  Returns the records written. */
static uint64_t put_thread_drops(rec_recorder *r, rec_tbuf_full *b, uint64_t thread_id,
				 uint64_t ticks, uint64_t *dropped)
{
	const uint32_t reason[REC_DK_N] = { b->has_ring ? REC_DROP_FULL : REC_DROP_NO_BUFFER,
					    REC_DROP_NESTED, REC_DROP_THROTTLED };
	uint64_t recs = 0;
	for (uint32_t i = 0; i <= REC_DROP_SLOTS; i++) {
		const uint32_t id =
			i < REC_DROP_SLOTS ? __atomic_load_n(&b->drops[i].type_id, __ATOMIC_ACQUIRE) : 0;
		if (i < REC_DROP_SLOTS && id == 0)
			continue;
		for (int k = 0; k < REC_DK_N; k++) {
			uint64_t *rep = i < REC_DROP_SLOTS ? &b->drops_reported[i][k] : &b->other_reported[k];
			uint64_t n = __atomic_load_n(i < REC_DROP_SLOTS ? &b->drops[i].n[k]
									: &b->drops_other[k],
						     __ATOMIC_RELAXED);
			uint64_t d = n - *rep;
			*rep = n;
			if (i == REC_DROP_SLOTS && k == REC_DK_NESTED) {
				/* counted by inline code built with older headers */
				uint64_t old = __atomic_load_n(&b->pub.dropped_nested, __ATOMIC_RELAXED);
				d += old - b->nested_reported;
				b->nested_reported = old;
			}
			if (d == 0)
				continue;
			put_dropped(r, ticks, d, thread_id, reason[k], id);
			*dropped += d;
			recs++;
		}
	}
	return recs;
}

/* The signal-context emits that found no buffer for r on their thread
 * (thread.c: the CPU sampler's samples of a thread that registered with an
 * earlier recorder and has not emitted since r opened): one rec.Dropped
 * per type, reason "no buffer", thread 0 (it has no id in r).  The counts
 * are taken under r->lock (r->types can lose an entry) into a bounded
 * list, put without it; the declared types' list is append-only and read
 * without rec_g_lock.  Returns the records written. */
typedef struct sig_drop {
	uint32_t id;
	uint64_t n;
} sig_drop;

static void take_signal_drops(rec_type_entry *e, sig_drop *got, size_t *k)
{
	if (__atomic_load_n(&e->nobuf_signal, __ATOMIC_RELAXED) == 0)
		return;
	got[*k].id = e->id;
	got[*k].n = __atomic_exchange_n(&e->nobuf_signal, 0, __ATOMIC_RELAXED);
	(*k)++;
}

static uint64_t put_signal_drops(rec_recorder *r, uint64_t ticks, uint64_t *dropped)
{
	sig_drop got[32];
	size_t k = 0;
	pthread_mutex_lock(&r->lock);
	for (rec_type_entry *e = r->types; e && k < 32; e = e->next)
		take_signal_drops(e, got, &k);
	pthread_mutex_unlock(&r->lock);
	for (rec_type_entry *e = __atomic_load_n(&rec_g_declared, __ATOMIC_ACQUIRE); e && k < 32;
	     e = e->next)
		if (__atomic_load_n(&e->h.gen, __ATOMIC_RELAXED) == r->gen)
			take_signal_drops(e, got, &k);
	for (size_t i = 0; i < k; i++) {
		put_dropped(r, ticks, got[i].n, 0, REC_DROP_NO_BUFFER, got[i].id);
		*dropped += got[i].n;
	}
	return k;
}

/* ---- one round (bg_collect) and its steps --------------------------------------- */

/* Step 1, no lock held: until the first chunk is built, the TSC frequency is
 * re-measured over the time since the process's first calibration (200 us
 * at open): the first chunk (after a flush interval, or at close) and every
 * later one carry one frequency measured over that longer baseline, at
 * least CAL_SETTLE_NS long (a flush or close sooner waits for it here, on
 * this thread).  It is fixed from then on (step 2), so a recording has one
 * Tick_Frequency (the archive tools re-encode a run with one writer).
 * Returns the new frequency, 0 for none. */
static uint64_t tsc_remeasure(rec_recorder *r)
{
	uint64_t freq = 0;
	if (r->clock_kind == REC_CLOCK_TSC && !r->freq_fixed) {
		rec_clock_info ci;
		rec_clock_settle(CAL_SETTLE_NS);
		rec_clock_get(&ci);
		if (ci.kind == REC_CLOCK_TSC && ci.frequency != __atomic_load_n(&r->frequency, __ATOMIC_RELAXED))
			freq = ci.frequency;
	}
	return freq;
}

/* Step 2, under w_lock: the writer takes freq while it has built no chunk;
 * the write failures that ended and a removed file (output.c) are taken
 * into wfe.  Returns how many. */
static size_t take_output_news(rec_recorder *r, uint64_t freq, rec_wf_event wfe[2])
{
	size_t nwfe = 0;
	pthread_mutex_lock(&r->w_lock);
	if (r->clock_kind == REC_CLOCK_TSC && !r->freq_fixed) {
		rec_writer_stats ws;
		rec_writer_get_stats(r->w, &ws);
		if (ws.chunks == 0 && freq) {
			rec_writer_set_tick_frequency(r->w, freq);
			__atomic_store_n(&r->frequency, freq, __ATOMIC_RELAXED);
		}
		r->freq_fixed = ws.chunks != 0;
	}
	if (r->out.done.pending) {
		wfe[nwfe++] = r->out.done;
		memset(&r->out.done, 0, sizeof r->out.done);
	}
	if (r->out.removed.pending) {
		wfe[nwfe++] = r->out.removed;
		memset(&r->out.removed, 0, sizeof r->out.removed);
	}
	pthread_mutex_unlock(&r->w_lock);
	return nwfe;
}

/* Step 3: a rec.WriteFailed for each, and for discarded chunks the
 * rec.Dropped (reason 4) of their events, by type (*wf_dropped: those
 * events).  Returns the records staged. */
static uint64_t put_write_failures(rec_recorder *r, const rec_wf_event *wfe, size_t nwfe,
				   uint64_t *wf_dropped)
{
	uint64_t wmsg[2], records = 0;
	for (size_t i = 0; i < nwfe; i++) {
		char tmp[128];
		const char *msg = wfe[i].action == 1 ? "output file removed; reopened"
				  : wfe[i].err ? strerror_r(wfe[i].err, tmp, sizeof tmp)
					       : "the sink returned an error";
		wmsg[i] = rec_intern_bg(r, msg);
	}
	for (size_t i = 0; i < nwfe; i++) {
		put_write_failed(r, &wfe[i], wmsg[i]);
		records++;
		if (wfe[i].action == 0) {
			/* The lost chunks' events, and the drops their rec.Dropped
			 * records reported (lost with them). */
			const rec_type_tally *lt = &wfe[i].lost;
			uint64_t n = wfe[i].events + wfe[i].dropped, sum = 0;
			for (uint32_t k = 0; k < REC_TALLY_TYPES && lt->id[k]; k++) {
				put_dropped(r, wfe[i].end_ticks, lt->n[k], 0, REC_DROP_WRITE_FAILED,
					    lt->id[k]);
				sum += lt->n[k];
				records++;
			}
			if (sum < n) { /* types past the table, or not known */
				put_dropped(r, wfe[i].end_ticks, n - sum, 0, REC_DROP_WRITE_FAILED, 0);
				records++;
			}
			*wf_dropped += n;
		}
	}
	return records;
}

/* A rename of b by another thread since the last look (b->renamed_at):
 * its new id and name queued for definition and its rec.ThreadStart (at the
 * rename's time) put in staging, counted in *records.  Returns the id
 * defined last for b, the one its drops are reported under. */
static uint64_t define_renamed(rec_recorder *r, rec_bg_pending *pd, rec_tbuf_full *b,
			       uint64_t *records)
{
	if (!__atomic_load_n(&b->renamed_at, __ATOMIC_ACQUIRE))
		return b->defined_id;
	/* Room first: nothing is allocated under r->lock (a thread that
	 * registers from inside the program's allocator waits for it). */
	if (!pending_reserve((void **)&pd->thrs, &pd->cthrs, pd->nthrs + 1, sizeof *pd->thrs) ||
	    !rec_buf_reserve(&r->staging, 64)) {
		rec_report(r, REC_ERR_NOMEM, "recorder: out of memory defining a thread");
		return b->defined_id; /* the next round tries again */
	}
	pthread_mutex_lock(&r->lock);
	uint64_t at = b->renamed_at;
	rec_pending_thread *t = &pd->thrs[pd->nthrs++];
	*t = (rec_pending_thread){ b->thread_id, b->os_tid, b->name_id, { 0 } };
	memcpy(t->name, b->name, sizeof t->name);
	b->renamed_at = 0;
	b->defined_id = t->id;
	pthread_mutex_unlock(&r->lock);
	uint8_t body[48], *p = body;
	p += rec_varint_put(p, REC_TYPE_ID_THREAD_START);
	p += rec_varint_put(p, at);
	p += rec_varint_put(p, t->id);
	p += rec_varint_put(p, t->os_tid);
	p += rec_varint_put(p, t->name_id);
	size_t len = (size_t)(p - body);
	(void)rec_buf_varint(&r->staging, len); /* reserved */
	(void)rec_buf_append(&r->staging, body, len);
	(*records)++;
	return t->id;
}

/* Step 4: drain every thread buffer into staging, without r->lock: threads
 * register (push at the head) while we copy.  Only this thread unlinks
 * buffers (under the lock, step 6) and close() frees them after joining
 * it, so the list from the head we read is stable.  A new thread is queued
 * for definition; its drops are staged (once per chunk, and before an
 * exited thread's buffer is reclaimed); an exited thread's buffer is marked
 * for reclaiming (*nreclaim) and its thread queued for retirement.  Adds
 * the records staged to *records and the drops to *dropped; returns the
 * head it drained from. */
static rec_tbuf_full *drain_threads(rec_recorder *r, rec_bg_pending *pd, uint64_t ticks,
				    uint64_t *records, uint64_t *dropped, uint64_t *nreclaim)
{
	rec_strtab_reserve(r); /* headroom for the threads that intern (intern.c) */
	pthread_mutex_lock(&r->lock);
	rec_tbuf_full *head = r->threads;
	r->regs_since_drain = 0;
	pthread_mutex_unlock(&r->lock);
	const bool closing = __atomic_load_n(&r->closing, __ATOMIC_ACQUIRE) != 0;
	pd->nthrs = 0;
	pd->nretire = 0;
	for (rec_tbuf_full *b = head; b; b = b->rec_next) {
		uint32_t state = __atomic_load_n(&b->state, __ATOMIC_ACQUIRE);
		uint64_t n = 0;
		/* A new thread: defined (with its own name string) before the
		 * records that reference it are appended.  Under the preload
		 * library not before the round that ends a chunk (while its
		 * ring is under a quarter full and its id was not handed out),
		 * so that a name given just after its start is the one written. */
		if (!b->defined && state == REC_TB_LIVE && r->drops_defer && !closing &&
		    __atomic_load_n(&r->defer_new_threads, __ATOMIC_RELAXED) &&
		    !__atomic_load_n(&b->id_shared, __ATOMIC_RELAXED) &&
		    __atomic_load_n(&b->pub.pub_head, __ATOMIC_ACQUIRE) - b->pub.tail < b->cap / 4)
			continue;
		if (!b->defined) {
			if (!bg_define_later(pd, b)) {
				rec_report(r, REC_ERR_NOMEM, "recorder: out of memory defining a thread");
				continue; /* its records wait for the next round */
			}
			b->defined = 1;
		}
		if (!rec_ring_drain(b, &r->staging, &n)) {
			rec_report(r, REC_ERR_NOMEM, "recorder: out of memory draining a buffer");
			continue;
		}
		*records += n;
		/* Renamed by another thread (thread.c, switch_thread_id): the
		 * records just drained may carry the new id, defined here, before
		 * staging is appended; a switch after this look shows in the next
		 * round's drain and is defined then. */
		uint64_t tid = define_renamed(r, pd, b, records);
		if (state == REC_TB_LIVE)
			rec_ring_grow(b);
		/* Drops: once per chunk (in the round that ends one), and
		 * before an exited thread's buffer is reclaimed. */
		if (!r->drops_defer || state == REC_TB_ORPHAN)
			*records += put_thread_drops(r, b, tid, ticks, dropped);
		/* The thread exited before we looked (acquire): everything it
		 * wrote is drained and its drops are reported. */
		if (state == REC_TB_ORPHAN && !closing) {
			b->reclaim = 1;
			(*nreclaim)++;
			/* Its thread and name go from the writer's pools once these
			 * records are in a chunk, unless the id was handed out
			 * (rec_emit_thread() may still name it). */
			if (!__atomic_load_n(&b->id_shared, __ATOMIC_RELAXED) &&
			    pending_reserve((void **)&pd->retire, &pd->cretire,
					    pd->nretire + 2 + (size_t)2 * b->nold, sizeof *pd->retire)) {
				pd->retire[pd->nretire++] = b->thread_id;
				pd->retire[pd->nretire++] = b->name_id;
				for (uint32_t i = 0; i < 2 * b->nold; i++)
					pd->retire[pd->nretire++] = b->old_ids[i];
			}
		}
	}
	if (!r->drops_defer)
		*records += put_signal_drops(r, ticks, dropped);
	return head;
}

/* Step 5: threads that registered while we drained (before head) are
 * defined now too, so a drained record that names one (rec_emit_thread()
 * with an id handed out by rec_recorder_thread_id()) finds it defined when
 * appended.  Their records wait for the next round. */
static void define_late_threads(rec_recorder *r, rec_bg_pending *pd, const rec_tbuf_full *head)
{
	pthread_mutex_lock(&r->lock);
	rec_tbuf_full *newest = r->threads;
	pthread_mutex_unlock(&r->lock);
	for (rec_tbuf_full *b = newest; b && b != head; b = b->rec_next)
		if (!b->defined && bg_define_later(pd, b))
			b->defined = 1;
}

/* Step 6: the nreclaim buffers marked in step 4 leave the thread list
 * (under r->lock); one with a ring is reset here, without the lock, and
 * goes to the free list (the next thread that registers gets it, ready to
 * use: the reset's 3 KB of stores are this thread's, not the registering
 * one's), one without is freed. */
static void reclaim_buffers(rec_recorder *r, uint64_t nreclaim)
{
	if (!nreclaim)
		return;
	rec_tbuf_full *got = NULL, *next;
	pthread_mutex_lock(&r->lock);
	for (rec_tbuf_full **pp = &r->threads, *b; (b = *pp) != NULL && nreclaim;) {
		if (!b->reclaim) {
			pp = &b->rec_next;
			continue;
		}
		*pp = b->rec_next;
		nreclaim--;
		if (b->has_ring) {
			b->rec_next = got;
			got = b;
		} else {
			rec_tbuf_free(b);
		}
	}
	pthread_mutex_unlock(&r->lock);
	if (!got)
		return;
	rec_tbuf_full *head = NULL, *tail = got;
	for (rec_tbuf_full *b = got; b; b = next) {
		next = b->rec_next;
		rec_tbuf_reset(b);
		b->rec_next = head;
		head = b;
	}
	pthread_mutex_lock(&r->lock);
	tail->rec_next = r->free_bufs;
	r->free_bufs = head;
	pthread_mutex_unlock(&r->lock);
}

/* Step 8: strings added since the last round, copied under r->lock
 * (pointers to the interned bytes) into pd->strs, to be defined in the
 * writer without it (step 9), so threads that emit or register never wait
 * while the writer's pools grow (page faults: milliseconds each doubling on
 * some VMs).  [*s0, *s1): the string ids - 1 copied. */
static void copy_new_strings(rec_recorder *r, rec_bg_pending *pd, uint64_t *s0_out,
			     uint64_t *s1_out)
{
	uint64_t s0, s1;
	pthread_mutex_lock(&r->lock);
	for (;;) {
		s0 = r->defined_strings;
		s1 = r->strs.count;
		if (s1 - s0 <= pd->cstrs)
			break;
		pthread_mutex_unlock(&r->lock);
		bool ok = pending_reserve((void **)&pd->strs, &pd->cstrs, s1 - s0, sizeof *pd->strs);
		pthread_mutex_lock(&r->lock);
		if (!ok) { /* define what fits */
			rec_report(r, REC_ERR_NOMEM, "recorder: out of memory defining strings");
			s1 = s0 + (r->strs.count - s0 < pd->cstrs ? r->strs.count - s0 : pd->cstrs);
			break;
		}
	}
	for (uint64_t i = s0; i < s1; i++)
		pd->strs[i - s0] = (rec_pending_string){ r->strs.ents[i].s, r->strs.ents[i].len };
	pthread_mutex_unlock(&r->lock);
	*s0_out = s0;
	*s1_out = s1;
}

/* Step 9a, under w_lock: the copied strings and the queued threads (each
 * with its private name string) in the writer. */
static rec_status define_strings_threads(rec_recorder *r, rec_bg_pending *pd, uint64_t s0,
					 uint64_t s1)
{
	rec_status st = REC_OK;
	for (; r->defined_strings < s1 && st == REC_OK; r->defined_strings++) {
		const rec_pending_string *e = &pd->strs[r->defined_strings - s0];
		st = rec_writer_define_string(r->w, r->defined_strings + 1, e->s, e->len);
	}
	for (size_t i = 0; i < pd->nthrs; i++) {
		const rec_pending_thread *t = &pd->thrs[i];
		rec_status ts = t->name_id ? rec_writer_define_private_string(r->w, t->name_id, t->name,
									 strlen(t->name))
					   : REC_OK;
		if (ts == REC_OK)
			ts = rec_writer_define_thread(r->w, t->id, t->os_tid, t->name_id);
		if (ts != REC_OK && st == REC_OK)
			st = ts;
	}
	return st;
}

/* Step 9b, under w_lock: the queued modules and frames (step 7), then the
 * stacks up to last_stack whose frames they are; st: step 9a's status (a
 * failure stops here too). */
static rec_status define_stacks(rec_recorder *r, rec_bg_pending *pd, uint64_t last_stack,
				rec_status st)
{
	for (size_t i = 0; i < pd->nmods && st == REC_OK; i++)
		st = rec_writer_define_module(r->w, pd->mods[i].id, pd->mods[i].path,
					      pd->mods[i].build_id, pd->mods[i].base);
	pd->nmods = 0;
	for (size_t i = 0; i < pd->nframes && st == REC_OK; i++) {
		const rec_pending_frame *f = &pd->frames[i];
		st = rec_writer_define_frame(r->w, f->id, f->fn, f->module, f->module_off, f->fn_off);
	}
	pd->nframes = 0;
	for (size_t i = 0; i < pd->nsrcs && st == REC_OK; i++) {
		const rec_pending_frame *f = &pd->srcs[i];
		st = rec_writer_define_frame_source(r->w, f->id, f->flags, f->file, f->line,
						    pd->inl + f->inl_off, f->inl_n);
	}
	pd->nsrcs = 0;
	pd->ninl = 0;
	rec_stacktab *stk = &r->stacks;
	for (uint64_t id = stk->defined_upto + 1; id <= last_stack && st == REC_OK; id++) {
		rec_stackent *e = &stk->ents[id - 1];
		uint32_t ready = __atomic_load_n(&e->ready, __ATOMIC_ACQUIRE);
		if (e->defined || ready == 0)
			continue;
		if (ready == 1) {
			if (!e->mapped)
				continue; /* published after the symbolizer looked */
			uint64_t frames[REC_STACK_MAX_DEPTH];
			for (uint32_t k = 0; k < e->depth; k++)
				frames[k] = rec_frame_map_get(r->frame_map, stk->arena[e->off + k]);
			st = rec_writer_define_stack(r->w, id, e->flags, frames, e->depth);
		}
		e->defined = 1;
	}
	while (stk->defined_upto < last_stack && stk->ents[stk->defined_upto].defined)
		stk->defined_upto++;
	return st;
}

/* One round: take the output's news, stage the write failures, drain
 * every buffer, symbolize new stacks, then under w_lock define what the
 * staged records reference, append them, note the drops and retire the
 * exited threads' pool entries (once these records are in a chunk). */
void (*rec_test_after_symbolize_)(rec_recorder *r);

static uint64_t bg_collect(rec_recorder *r, rec_bg_pending *pd)
{
	uint64_t records = 0, dropped = 0, wf_dropped = 0, ticks = rec_now_ticks(r);
	/* Write failures that ended, a removed file: their rec.WriteFailed. */
	rec_wf_event wfe[2];
	const uint64_t freq = tsc_remeasure(r);                 /* 1 */
	const size_t nwfe = take_output_news(r, freq, wfe);      /* 2 */
	r->staging.len = 0;
	records += put_write_failures(r, wfe, nwfe, &wf_dropped); /* 3 */
	uint64_t nreclaim = 0;
	const rec_tbuf_full *head = drain_threads(r, pd, ticks, &records, &dropped, &nreclaim); /* 4 */
	define_late_threads(r, pd, head);                        /* 5 */
	reclaim_buffers(r, nreclaim);                            /* 6 */
	__atomic_fetch_add(&r->st_drains, 1, __ATOMIC_RELAXED);

	pd->drained = records;
	uint64_t last_stack = rec_bg_symbolize(r, pd);           /* 7 */
	if (rec_test_after_symbolize_)
		rec_test_after_symbolize_(r);
	uint64_t s0, s1;
	copy_new_strings(r, pd, &s0, &s1);                       /* 8 */

	pthread_mutex_lock(&r->w_lock);                          /* 9 */
	rec_types_write_pending(r); /* declared types bound since the last round */
	rec_status st = define_strings_threads(r, pd, s0, s1);
	st = define_stacks(r, pd, last_stack, st);
	if (st != REC_OK)
		rec_report(r, st, rec_writer_errmsg(r->w));
	if (r->staging.len) {                                    /* 10 */
		rec_process_info_put(r, ticks);
		rec_bg_append(r, records);
	}
	if (dropped) {
		rec_writer_note_dropped(r->w, dropped);
		__atomic_fetch_add(&r->st_dropped, dropped, __ATOMIC_RELAXED);
	}
	if (wf_dropped) /* already in st_dropped, counted when the chunks were lost */
		rec_writer_note_dropped(r->w, wf_dropped);
	for (size_t i = 0; i + 1 < pd->nretire; i += 2)
		(void)rec_writer_retire_entries(r->w, pd->retire[i], pd->retire[i + 1]);
	pd->nretire = 0;
	pthread_mutex_unlock(&r->w_lock);
	return records;
}

static void bg_flush(rec_recorder *r)
{
	pthread_mutex_lock(&r->w_lock);
	rec_out_check_removed(r);
	rec_status st = rec_writer_flush(r->w);
	pthread_mutex_unlock(&r->w_lock);
	if (st != REC_OK)
		rec_report(r, st, rec_writer_errmsg(r->w));
}

/* A periodic task runs in a round that comes at most an eighth of its
 * period before it is due: a wake-up for another deadline (the flush, a
 * task of the same period added a little later) takes it along, and both
 * are due at the same time from then on, so an idle recorder whose tasks
 * have the flush interval's period wakes once per interval, not once per
 * task (issue 22). */
static bool periodic_due(const rec_periodic *p, uint64_t now)
{
	return now + p->period_ns / 8 >= p->next_ns;
}

static void run_periodic(rec_recorder *r, uint64_t now, bool all)
{
	/* The copy is allocated without r->lock (LOCK ORDER: its holders
	 * never call malloc). */
	rec_periodic *copy = NULL;
	size_t n, cap = 0;
	pthread_mutex_lock(&r->lock);
	while ((n = r->nperiodic) > cap) {
		pthread_mutex_unlock(&r->lock);
		free(copy);
		copy = malloc(n * sizeof *copy);
		cap = copy ? n : 0;
		pthread_mutex_lock(&r->lock);
		if (!copy)
			break;
	}
	if (copy)
		memcpy(copy, r->periodic, n * sizeof *copy);
	for (size_t i = 0; i < n; i++)
		if (all || periodic_due(&r->periodic[i], now))
			r->periodic[i].next_ns = now + r->periodic[i].period_ns;
	pthread_mutex_unlock(&r->lock);
	for (size_t i = 0; copy && i < n; i++)
		if (all || periodic_due(&copy[i], now))
			copy[i].fn(r, copy[i].opaque);
	free(copy);
}

static uint64_t next_periodic(rec_recorder *r, uint64_t deadline)
{
	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->nperiodic; i++)
		if (r->periodic[i].next_ns < deadline)
			deadline = r->periodic[i].next_ns;
	pthread_mutex_unlock(&r->lock);
	return deadline;
}

/* A thread met a fatal signal (crash.c): drain everything now (its
 * rec.Crash included), write a chunk (flight mode: the retained data to the
 * path), tell the waiting handler.  No periodic callbacks. */
static void bg_crash_round(rec_recorder *r, rec_bg_pending *pd)
{
	rec_crash_slot *cs = &r->crash_slot;
	bg_collect(r, pd);
	if (__atomic_load_n(&cs->pending, __ATOMIC_ACQUIRE)) {
		/* The handler could not use its thread's buffer: write it here
		 * (its stack was interned before pending was set, so the
		 * collect above defined it). */
		uint8_t body[128];
		uint8_t *p = body;
		p += rec_varint_put(p, REC_TYPE_ID_CRASH);
		p += rec_varint_put(p, cs->ticks);
		p += rec_varint_put(p, cs->thread_id);
		p += rec_varint_put(p, cs->stack_id);
		p += rec_varint_put(p, cs->sig);
		p += rec_varint_put(p, rec_zigzag(cs->code));
		p += rec_varint_put(p, cs->addr);
		p += rec_varint_put(p, cs->sender_pid);
		p += rec_varint_put(p, cs->os_tid);
		r->staging.len = 0;
		size_t len = (size_t)(p - body);
		if (rec_buf_varint(&r->staging, len) && rec_buf_append(&r->staging, body, len)) {
			pthread_mutex_lock(&r->w_lock);
			rec_bg_append(r, 1);
			pthread_mutex_unlock(&r->w_lock);
		}
		__atomic_store_n(&cs->pending, 0u, __ATOMIC_RELEASE);
	}
	bg_flush(r);
	if (r->flags & REC_RECORDER_FLIGHT) {
		pthread_mutex_lock(&r->w_lock);
		(void)rec_flight_dump(r, r->path);
		pthread_mutex_unlock(&r->w_lock);
	}
	__atomic_store_n(&r->crash_done, 1u, __ATOMIC_RELEASE);
	rec_futex_wake(&r->crash_done, INT32_MAX);
}

void *rec_bg_main(void *arg)
{
	rec_recorder *r = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_setname_np(pthread_self(), "rec-writer");
	/* The round's scratch lives on the heap, reachable from r: after a
	 * fork() the child's leak check sees its arrays (this thread's stack
	 * is no root there). */
	rec_bg_pending pd_local;
	memset(&pd_local, 0, sizeof pd_local);
	rec_bg_pending *pd_heap = calloc(1, sizeof *pd_heap);
	rec_bg_pending *pd = pd_heap ? pd_heap : &pd_local;
	r->bg_scratch = pd_heap;
	/* The first flush is due an interval after the thread started, not
	 * after the work below (the unwind tables take milliseconds): the
	 * periodic tasks added as the recorder opened are due then too. */
	uint64_t next_flush = rec_clock_mono_ns() + r->flush_ns;
	rec_process_info_init(r);
	rec_stack_exec_init(); /* before the tables: a thread's registration needs it */
	(void)rec_cfi_refresh(); /* unwind tables for every capture (stack_cfi.h) */
	rec_out_truncate(r);
	/* Rounds between flushes: the chunk is built as the records come
	 * (the writer scans, transcodes and compresses what each round
	 * appends), so a flush is left with little to do.  Every
	 * BG_ROUNDS-th of the flush interval while rounds find records;
	 * a round that finds fewer than BG_ROUND_RECORDS doubles the wait,
	 * up to the flush interval, so an idle recorder wakes once per
	 * interval (its periodic tasks join that wake-up: periodic_due).  Any wake
	 * (a periodic task, a request, a full buffer) is a round and
	 * restarts the wait, so the rounds add no wake-up of their own to
	 * a recorder whose periodic tasks (the CPU sampler's arming) wake
	 * it at least as often. */
	const uint64_t round_min = r->flush_ns / BG_ROUNDS;
	uint64_t round_ns = round_min, next_round = rec_clock_mono_ns() + round_ns;

	for (;;) {
		uint64_t now = rec_clock_mono_ns();
		uint64_t deadline = next_periodic(r, next_flush < next_round ? next_flush : next_round);
		if (deadline > now && !__atomic_load_n(&r->wake, __ATOMIC_ACQUIRE)) {
			/* (the dump signal's handler wakes us: output.c) */
			rec_futex_wait(&r->wake, 0, deadline - now);
		}
		__atomic_store_n(&r->wake, 0, __ATOMIC_RELEASE);
		if (__atomic_load_n(&r->crash_req, __ATOMIC_ACQUIRE) &&
		    !__atomic_load_n(&r->crash_done, __ATOMIC_ACQUIRE))
			bg_crash_round(r, pd);

		pthread_mutex_lock(&r->req_lock);
		uint32_t req = r->req_flags;
		uint64_t seq = r->req_seq;
		int stop = r->stop;
		char *dump_path = r->dump_path;
		r->req_flags = 0;
		r->dump_path = NULL;
		pthread_mutex_unlock(&r->req_lock);
		bool sig_dump = false;
		if (__atomic_load_n(&rec_g_sig_owner, __ATOMIC_RELAXED) == r &&
		    __atomic_exchange_n(&rec_g_dump_pending, 0, __ATOMIC_RELAXED)) {
			sig_dump = true;
		}

		now = rec_clock_mono_ns();
		if (!stop) /* a dump carries the counters' values at the dump */
			run_periodic(r, now, (req & (REQ_PERIODIC | REQ_DUMP)) || sig_dump);
		const bool flush_now = now + r->flush_ns / BG_FLUSH_EARLY >= next_flush ||
				       (req & (REQ_FLUSH | REQ_DUMP)) || sig_dump;
		r->drops_defer = !flush_now && !stop;
		/* what a dump or an explicit flush writes has its frames' files
		 * and lines, however busy the round */
		pd->sources_all = (req & (REQ_FLUSH | REQ_DUMP)) || sig_dump;
		if (bg_collect(r, pd) >= BG_ROUND_RECORDS)
			round_ns = round_min;
		else if ((round_ns *= 2) > r->flush_ns)
			round_ns = r->flush_ns;
		next_round = now + round_ns;
		r->drops_defer = 0;
		rec_status rst = REC_OK;
		if (flush_now) {
			bg_flush(r);
			next_flush = now + r->flush_ns;
			if (req & REQ_FLUSH) {
				/* rec_recorder_flush() returns the write error:
				 * what it asked for is not in the file. */
				pthread_mutex_lock(&r->w_lock);
				if (r->out.failing)
					rst = REC_ERR_IO;
				pthread_mutex_unlock(&r->w_lock);
			}
		}
		if ((r->flags & REC_RECORDER_FLIGHT) && ((req & REQ_DUMP) || sig_dump)) {
			pthread_mutex_lock(&r->w_lock);
			if (req & REQ_DUMP)
				rst = rec_flight_dump(r, dump_path ? dump_path : r->path);
			if (sig_dump) {
				rec_status s2 = rec_flight_dump(r, r->path);
				if (s2 != REC_OK)
					rec_report(r, s2, "recorder: signal dump failed");
			}
			pthread_mutex_unlock(&r->w_lock);
		}
		free(dump_path);
		if (stop) {
			bg_collect(r, pd);
			pthread_mutex_lock(&r->w_lock);
			int failing = r->out.failing;
			pthread_mutex_unlock(&r->w_lock);
			if (failing) {
				/* Writing failed until now: try the pending chunk
				 * first; either way the failure so far goes into a
				 * rec.WriteFailed in the last chunk (written if
				 * that chunk can be). */
				bg_flush(r);
				pthread_mutex_lock(&r->w_lock);
				if (r->out.failing) {
					r->out.failing = 0;
					r->out.cur.end_ticks = rec_now_ticks(r);
					rec_wf_merge(&r->out.done, &r->out.cur);
				}
				pthread_mutex_unlock(&r->w_lock);
				bg_collect(r, pd);
			}
			pthread_mutex_lock(&r->w_lock);
			rec_writer_stats ws;
			rec_writer_get_stats(r->w, &ws);
			rec_status st = rec_writer_close(r->w);
			r->w = NULL;
			if (st != REC_OK)
				rec_report(r, st, "recorder: closing the writer failed");
			if (r->out.fd >= 0) {
				if (close(r->out.fd) != 0)
					rec_report(r, REC_ERR_IO, "recorder: closing the file failed");
				r->out.fd = -1;
			}
			if (r->flags & REC_RECORDER_FLIGHT) {
				st = rec_flight_dump(r, r->path);
				if (st != REC_OK)
					rec_report(r, st, "recorder: writing the flight recording failed");
			}
			pthread_mutex_unlock(&r->w_lock);
			rec_wf_deliver(r);
			pthread_mutex_lock(&r->req_lock);
			r->done_seq = seq;
			pthread_cond_broadcast(&r->req_cond);
			pthread_mutex_unlock(&r->req_lock);
			break;
		}
		rec_wf_deliver(r);
		pthread_mutex_lock(&r->req_lock);
		if (seq != r->done_seq) {
			/* Only a round that took requests answers them: a round
			 * right after must not overwrite the status a waiting
			 * rec_recorder_flush() has yet to read. */
			r->done_seq = seq;
			r->req_status = rst;
			pthread_cond_broadcast(&r->req_cond);
		}
		pthread_mutex_unlock(&r->req_lock);
	}
	free(pd->frames);
	free(pd->srcs);
	free(pd->inl);
	free(pd->mods);
	free(pd->mod_defined);
	free(pd->strs);
	free(pd->thrs);
	free(pd->retire);
	r->bg_scratch = NULL;
	free(pd_heap);
	return NULL;
}

/* Ask the background thread for work and wait for it. */
rec_status rec_bg_request(rec_recorder *r, uint32_t flags, const char *dump_path)
{
	rec_status st;
	pthread_mutex_lock(&r->req_lock);
	uint64_t my = ++r->req_seq;
	r->req_flags |= flags;
	if (dump_path) {
		free(r->dump_path);
		r->dump_path = strdup(dump_path);
	}
	pthread_mutex_unlock(&r->req_lock);
	rec_wake_bg(r);
	pthread_mutex_lock(&r->req_lock);
	while (r->done_seq < my)
		pthread_cond_wait(&r->req_cond, &r->req_lock);
	st = r->req_status;
	pthread_mutex_unlock(&r->req_lock);
	return st;
}

