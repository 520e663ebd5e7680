/* SPDX-License-Identifier: MIT */
/*
 * builtin_internal.h - what the recorder core offers the built-in sources
 * (lock_wrap.c, sleep.c, alloc.c, io.c, sampler.c, metrics.c) beyond the
 * public API, and what the built-ins offer the preload library's
 * interposers (libfmt/preload/).  Never installed.
 *
 * Who calls what (the rest of the layer's rules: recorder_internal.h):
 *   - the core (thread.c) knows no built-in by name: a built-in that must
 *     see every thread registers thread hooks here (rec_thread_hooks_add:
 *     "seen" when a thread first uses rec in a hook generation, "exit"
 *     before its rec.ThreadEnd);
 *   - built-ins never call each other: the condition waits over a
 *     rec_mutex live with the mutex (lock_wrap.c) and record through
 *     sleep.c's cond-wait interface below, the same one the preload's
 *     pthread_cond_* interposers use;
 *   - the preload library calls only the "for the preload library"
 *     functions below, and the public API.
 */
#ifndef LIBREC_RECORD_BUILTIN_INTERNAL_H
#define LIBREC_RECORD_BUILTIN_INTERNAL_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rec/rec.h"

/* ---- thread hooks (thread.c) ------------------------------------------------ */

typedef void (*rec_thread_hook)(void);

/*! rec_thread_hooks_add() : run seen (may be NULL) in every thread the first
 *  time it calls rec_thread_seen() in a hook generation, and on_exit (may be
 *  NULL) in every thread the recorder registered when it exits, before its
 *  rec.ThreadEnd while its buffers are live.  At most 8 hooks of each kind;
 *  adding the same function twice adds it once.  Call from a built-in's
 *  initialization (pthread_once), not from a hook.
 *  @return REC_OK, or REC_ERR_NOMEM when the table is full. */
rec_status rec_thread_hooks_add(rec_thread_hook seen, rec_thread_hook on_exit);

/*! rec_thread_seen_again() : start a new hook generation: every thread runs
 *  the seen hooks again at its next rec_thread_seen() (the CPU sampler,
 *  when a default recorder opens and in a fork child). */
void rec_thread_seen_again(void);

/*! rec_thread_seen() : the calling thread uses rec (a wrapper, a capture, a
 *  registration); runs the seen hooks once per generation.  After that a TLS
 *  load, a load and a compare. */
extern __thread uint64_t rec_thread_seen_tls_;
extern uint64_t rec_thread_seen_gen_;
void rec_thread_seen_slow_(void);
static inline void rec_thread_seen(void)
{
	if (__builtin_expect(rec_thread_seen_tls_ != __atomic_load_n(&rec_thread_seen_gen_, __ATOMIC_RELAXED), 0))
		rec_thread_seen_slow_();
}

/* ---- the built-ins' shared pieces -------------------------------------------- */

/*! rec_builtin_tid() : the calling thread's OS thread id (gettid's), read
 *  from its CPU-clock id (no system call; gettid if that does not work) and
 *  cached in TLS (reset in a fork child).  Async-signal-safe once cached. */
uint64_t rec_builtin_tid(void);

/* A lock changes hands with its holder field at 0 for a moment: the old
 * holder clears it before it releases, the new one stores its tid after it
 * acquired.  A contended path that reads 0 reads again up to this many
 * times, pausing and trying the lock in between (a retry that gets the lock
 * has no wait to record), so that a wait names the thread it waited behind;
 * 0 stays only where the holder is not known (a lock held by readers, a
 * holder preempted inside that moment for longer than the rereads).
 * tests: test_lock_wrap.c t_every_wait_names_its_holder. */
#define REC_HOLDER_REREADS 72

/* Whether readers hold (or are taking) l: glibc counts them in
 * __data.__readers above its three state bits.  Such a lock has no one
 * holder to read again for. */
static inline int rec_rwlock_readers(const pthread_rwlock_t *l)
{
	return (__atomic_load_n(&l->__data.__readers, __ATOMIC_RELAXED) >> 3) != 0;
}

/* The pause before reread i: a CPU pause, and for the last few a yield, so
 * that a new holder preempted before its store (more threads than cores)
 * can run and make it. */
static inline void rec_holder_pause(int i)
{
	if (i >= REC_HOLDER_REREADS - 8) {
		sched_yield();
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}


/* alloc.c, for the preload library's malloc interposers (libfmt/preload/):
 * count an allocation of size bytes at p (NULL: nothing) against the
 * thread's sampling countdown, as rec_malloc does after calling malloc;
 * realloc and free through the given real functions, recording rec.Free for
 * a sampled block as rec_realloc and rec_free do. */
void rec_alloc_account_(void *p, size_t size);
void *rec_alloc_realloc_with_(void *(*realloc_fn)(void *, size_t), void *ptr, size_t size);
void rec_alloc_free_with_(void (*free_fn)(void *), void *ptr);

/* lock_wrap.c, for the preload library's pthread lock interposers: the
 * bookkeeping of rec_mutex_lock & co. for a lock whose holder the caller
 * knows itself.  rec_lock_acquired_() : the calling thread now holds lock
 * (rec.LockOrder pairs, the held-lock stack; name may be NULL).
 * rec_lock_released_() : it released lock; returns 1 if it still holds it.
 * rec_lock_wait_begin_() : 1 and *t0 set if rec.LockWait is on.
 * rec_lock_wait_end_() : record the wait that began at t0 if it reached
 * the threshold (kind: 0 mutex, 1 read, 2 write). */
void rec_lock_acquired_(const void *lock, const char *name, uintptr_t site);
/* The same for a lock taken by a trylock: held, no rec.LockOrder pair (a
 * trylock never waits, so it cannot close a deadlock).  site: the call
 * site that took the lock (the lock's class when it is not a static
 * variable: lock_wrap.c), 0 if not known. */
void rec_lock_tried_(const void *lock, const char *name, uintptr_t site);
int rec_lock_released_slow_(const void *lock);
/* Names a lock that has none (NULL) when an event is written, if set (the
 * preload library's lock_names.c); NULL: "0x<address>". */
extern const char *(*rec_lock_name_hook_)(const void *lock);
/* How many locks the calling thread holds by rec_lock_acquired_ (the
 * held-lock stack's depth, saturated at its size). */
uint32_t rec_lock_held_count_(void);
/* Back on the held stack after a condition wait, without a lock-order check. */
void rec_lock_reacquired_(const void *lock, const char *name);
int rec_lock_wait_begin_(uint64_t *t0);
void rec_lock_wait_end_(const void *lock, const char *name, uint64_t holder, unsigned kind,
			uint64_t t0);

/* sleep.c, for the preload library's pthread_cond_* interposers: rec.CondWait's
 * start (1 and *t0 set if it is on), and one event for a wait on c with the
 * mutex at m (named mname, NULL: 0x<address>). */
int rec_cond_wait_begin_(uint64_t *t0);
void rec_cond_wait_end_(const void *c, const void *m, const char *mname, uint64_t timeout_ns,
			bool timed, bool timed_out, uint64_t t0);

/* io.c, for the preload library's I/O interposers: rec.IO's type (declared
 * on first use, NULL if that failed), its threshold before the declaration
 * (REC_OPTIONS io=), and one event (kept if t1 - t0 reached the threshold). */
struct rec_event_type *rec_io_type_(void);
void rec_io_set_threshold(uint64_t ns);
void rec_io_emit_(int fd, const char *call, const char *kind, const char *address,
		  uint64_t bytes, int err, uint64_t t0, uint64_t t1);
/* io.c, for the preload library's poll interposers: rec.Poll's type (off
 * unless the events list names it) and one event (rc: the call's result;
 * err: its errno when rc < 0; timeout_ns -1: none). */
struct rec_event_type *rec_poll_type_(void);
void rec_poll_emit_(const char *call, int fd, uint64_t watched, int64_t timeout_ns, int rc,
		    int err, uint64_t t0, uint64_t t1);

/* thread.c: the calling thread named itself (pthread_setname_np): its
 * rec.ThreadStart name follows if the thread was not written out yet. */
void rec_thread_renamed_(const char *name);
void rec_thread_renamed_tid_(uint64_t os_tid, const char *name);

/* sampler.c, for the preload library's thread start: pc is the calling
 * thread's start routine, the stack of the CPU sample that carries the
 * periods its timer's signals did not bring before the thread's end. */
void rec_cpu_sampler_thread_root_(uintptr_t pc);

/* sleep.c: record one rec.Sleep of requested ns, from start to end ticks
 * of the Sleep type's recorder.  rec_sleep_type() is NULL until declared. */
struct rec_event_type;
struct rec_event_type *rec_sleep_type(void);
void rec_sleep_emit(uint64_t requested_ns, uint64_t start_ticks, uint64_t end_ticks);

/* The preload library's fast paths (libfmt/preload/), without its "inside
 * the recorder" guard.  lock_wrap.c: rec_lock_acquired_fast_() pushes lock
 * on the calling thread's held-lock stack and returns 1 when that is all
 * rec_lock_acquired_() would do (the stack was empty: no rec.LockOrder
 * pair to look up; the thread is attached to the CPU sampler); else 0 and
 * nothing done (call rec_lock_acquired_() inside the guard).  alloc.c:
 * rec_alloc_maybe_live_() is 0 when p is certainly not a live sampled
 * block (one byte load; nearly every free), so that its free needs no
 * rec_alloc_free_with_(). */
#define REC_HELD_MAX 32
typedef struct rec_held_lock {
	const void *lock;
	const char *name;
	uintptr_t site; /* the call site that took it; 0 if not known */
} rec_held_lock;
/* The calling thread's held-lock stack (lock_wrap.c): depth, the locks
 * past REC_HELD_MAX (counted, not kept), the locks, oldest first. */
extern __thread uint32_t rec_held_depth_tls_, rec_held_overflow_tls_;
extern __thread rec_held_lock rec_held_tls_[REC_HELD_MAX];
static inline int rec_lock_acquired_fast_(const void *lock, uintptr_t site)
{
	if (__builtin_expect(rec_held_depth_tls_ == 0 && rec_held_overflow_tls_ == 0 &&
				     rec_thread_seen_tls_ ==
					     __atomic_load_n(&rec_thread_seen_gen_, __ATOMIC_RELAXED),
			     1)) {
		rec_held_tls_[0].lock = lock;
		rec_held_tls_[0].name = NULL;
		rec_held_tls_[0].site = site;
		rec_held_depth_tls_ = 1;
		return 1;
	}
	return 0;
}
/* rec_lock_released_() : lock is released by the calling thread: off its
 * held-lock stack; 1 if it still holds it (recursively).  Inline for the
 * usual case, the only lock held. */
static inline int rec_lock_released_(const void *lock)
{
	if (__builtin_expect(rec_held_depth_tls_ == 1 && rec_held_overflow_tls_ == 0 &&
				     rec_held_tls_[0].lock == lock,
			     1)) {
		rec_held_depth_tls_ = 0;
		return 0;
	}
	return rec_lock_released_slow_(lock);
}
#define REC_ALLOC_LIVE_SLOTS 4096u
extern uint8_t rec_alloc_live_home_[REC_ALLOC_LIVE_SLOTS];
static inline size_t rec_alloc_live_slot_(uintptr_t p)
{
	return (size_t)(((uint64_t)p * 0x9E3779B97F4A7C15ull) >> 40) & (REC_ALLOC_LIVE_SLOTS - 1);
}
static inline int rec_alloc_maybe_live_(const void *p)
{
	return __atomic_load_n(&rec_alloc_live_home_[rec_alloc_live_slot_((uintptr_t)p)],
			       __ATOMIC_RELAXED) != 0;
}

#endif /* LIBREC_RECORD_BUILTIN_INTERNAL_H */
