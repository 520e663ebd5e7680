/* SPDX-License-Identifier: MIT */
/*
 * lock_attrib.h - who made a lock wait last as long as it did: each wait
 * split into the parts during which one thread held the lock.
 *
 * A rec.LockWait event says who held the lock when the wait began
 * (holderOsThreadId), not who held it later.  In a mutex, a waiter whose
 * wait ends at t holds the lock from t: so the waits on the same lock that
 * end inside another wait's interval are hand-offs.  A wait [s, e] with
 * hand-offs at t1 < t2 < ... < tk (ends of other waits of the lock, by
 * other threads) is charged
 *     [s, t1] to the holder at s (the event's holderOsThreadId),
 *     [t1, t2] to the waiter whose wait ended at t1, ...,
 *     [tk, e] to the waiter whose wait ended at tk.
 * The parts of a wait add up to it exactly.
 *
 *   rec_lockattrib *a;
 *   rec_lockattrib_open(&a);
 *   for each rec.LockWait:  rec_lockattrib_add(a, &wait);   // any order
 *   rec_lockattrib_finish(a);
 *   rec_lockattrib_part p;
 *   while (rec_lockattrib_next(a, &p) == REC_OK) ...         // by wait, in time
 *   rec_lockattrib_close(a);
 *
 * What it cannot see, and how that shows: a thread that took the lock
 * without a recorded wait (it waited less than rec.LockWait's threshold, or
 * its trylock succeeded: it barged in between a release and the woken
 * waiter) leaves no hand-off, so the time it held the lock is charged to
 * the holder before it (the thread at the wait's start or the last waiter
 * seen acquiring).  Likewise a holder of 0 (the lock was free when the wait
 * began, or unknown) stays 0 until the first hand-off.  Waits shorter than
 * an analysis's own minimum should still be added (counted = false): they
 * are hand-offs too.  For a read-held rwlock the readers share the lock,
 * so a reader's acquisition is charged as if it held it alone.
 *
 * Memory: 80 bytes per wait added (the waits of a lock must all be seen
 * before any is split, since events come in no particular order).  One
 * object is used by one thread at a time.
 */
#ifndef LIBREC_LOCK_ATTRIB_H
#define LIBREC_LOCK_ATTRIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rec/rec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rec_lockattrib rec_lockattrib;

/* One wait, as a rec.LockWait event gives it. */
typedef struct rec_lockattrib_wait {
	uint64_t lock;      /* the lock's identity (its address, or the caller's index) */
	uint64_t waiter;    /* the waiting thread (OS tid, or the caller's index) */
	uint64_t holder;    /* the holder when the wait began; 0 = unknown */
	int64_t start_ns;   /* when the wait began */
	int64_t end_ns;     /* when the waiter acquired the lock (>= start_ns) */
	uint64_t tag;       /* the caller's, returned with each part */
	bool counted;       /* false: only a hand-off for others, no parts of its own */
} rec_lockattrib_wait;

/* A part of a wait and the thread charged for it. */
typedef struct rec_lockattrib_part {
	size_t wait;        /* which wait: its rec_lockattrib_add() order, from 0 */
	uint64_t tag;       /* the wait's tag */
	uint64_t lock, waiter;
	uint64_t holder;    /* who held the lock during [start_ns, end_ns]; 0 = unknown */
	int64_t start_ns, end_ns;
	bool handoff;       /* holder came from a hand-off (a wait that ended), not
			     * from the event's holder field */
} rec_lockattrib_part;

/*! rec_lockattrib_open() : an empty attribution.  Free with rec_lockattrib_close(). */
REC_API rec_status rec_lockattrib_open(rec_lockattrib **out);
/*! rec_lockattrib_close() : NULL is a no-op. */
REC_API void rec_lockattrib_close(rec_lockattrib *a);
/*! rec_lockattrib_add() : one wait (copied).  After rec_lockattrib_finish()
 *  it starts a new round (finish again to iterate all the waits).
 *  REC_ERR_INVALID_ARG when end_ns < start_ns; REC_ERR_NOMEM. */
REC_API rec_status rec_lockattrib_add(rec_lockattrib *a, const rec_lockattrib_wait *w);
/*! rec_lockattrib_finish() : no more waits; the parts can be iterated
 *  (REC_OK or REC_ERR_NOMEM). */
REC_API rec_status rec_lockattrib_finish(rec_lockattrib *a);
/*! rec_lockattrib_next() : the next part: the counted waits in the order
 *  they were added, each wait's parts in time order (parts of zero length
 *  are left out, so a wait of zero duration has none).  REC_END after the
 *  last; REC_ERR_STATE before rec_lockattrib_finish(). */
REC_API rec_status rec_lockattrib_next(rec_lockattrib *a, rec_lockattrib_part *out);
/*! rec_lockattrib_rewind() : iterate the parts again from the first. */
REC_API void rec_lockattrib_rewind(rec_lockattrib *a);
/*! rec_lockattrib_count() : waits added. */
REC_API size_t rec_lockattrib_count(const rec_lockattrib *a);

#ifdef __cplusplus
}
#endif
#endif /* LIBREC_LOCK_ATTRIB_H */
