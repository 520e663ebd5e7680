/* SPDX-License-Identifier: MIT */
/*
 * lock_interpose.c - pthread_mutex_lock/trylock/timedlock/unlock,
 * pthread_rwlock_* and pthread_spin_lock for the whole process, with the
 * bookkeeping of the rec_mutex wrappers (libfmt/record/lock_wrap.c:
 * rec_lock_acquired_ & co.): a contended acquisition that waited at least
 * rec.LockWait's threshold is one event with the lock's address, its name
 * (lock_names.c), the thread that held it when the wait began and a stack;
 * every (held, acquired) pair of a thread is one rec.LockOrder.
 *
 * Uncontended path: trylock, then the held-lock push (a TLS stack; names
 * are looked up only when an event is written): one load says the recorder
 * records, one TLS load that the thread is not inside it, and when the
 * thread held no other lock the push is all (rec_lock_acquired_fast_, no
 * guard); else rec_lock_acquired_ looks the (held, acquired) pairs up inside
 * the guard.  Unlock pops.  No clock.  Contended path: read the holder, take
 * the time, block in the real function (marked for wall-clock sampling,
 * state "lock": wall_internal.h), take the time again.
 *
 * The holder: glibc keeps the owner's tid in the mutex (__data.__owner, set
 * for every mutex type; read again while it is 0 as the lock changes hands:
 * REC_HOLDER_REREADS) and a write-locked rwlock's writer
 * (__data.__cur_writer); a rwlock held by readers has no owner (0, unknown).
 * Spinlocks have no owner (0) and are not on the held-lock stack (their
 * unlock is not interposed), so they take part in no rec.LockOrder.
 */
#include "preload/preload_internal.h"
#include "record/builtin_internal.h"
#include "record/stack_internal.h"

#include <errno.h>

/* The lock is now held by the calling thread (inside the recorder). */
static inline void took(const void *lock, uintptr_t caller)
{
	if (__builtin_expect(rec_lock_acquired_fast_(lock, caller), 1))
		return;
	rec_in_recorder_++;
	/* named when an event needs it (lock_names.c's hook) */
	rec_lock_acquired_(lock, NULL, caller);
	rec_in_recorder_--;
}

/* A trylock that succeeded: held, but no rec.LockOrder pair (lock_wrap.c,
 * rec_lock_tried_: a trylock cannot close a deadlock). */
static inline void took_try(const void *lock, uintptr_t caller)
{
	if (__builtin_expect(rec_lock_acquired_fast_(lock, caller), 1))
		return;
	rec_in_recorder_++;
	rec_lock_tried_(lock, NULL, caller);
	rec_in_recorder_--;
}

/* The fast path's test: recording, this thread not inside the recorder,
 * and the call not made by librec's own code in this library (caller: the
 * interposer's return address).  A program that calls librec's API itself
 * (linked with librec.so, whose API this library's copy answers) runs the
 * recorder's code outside any interposer: its locks are the recorder's, and
 * recording them would take them again (rec_type_declare's lock, then a
 * rec.LockOrder interned under the same). */
static inline int fast_from(uintptr_t caller)
{
	return rec_preload_recording() && rec_in_recorder_ == 0 &&
	       caller - rec_preload_hot_.text_lo >=
		       rec_preload_hot_.text_hi - rec_preload_hot_.text_lo;
}
#define fast() fast_from((uintptr_t)__builtin_return_address(0))

static inline int got(int rc)
{
	return rc == 0 || rc == EOWNERDEAD;
}

/* After a contended wait that began at t0 (on: rec.LockWait is on) and
 * acquired the lock: the event, then the bookkeeping. */
static __attribute__((noinline)) void waited(const void *lock, uint64_t holder, unsigned kind,
					     int on, uint64_t t0, uintptr_t caller, int stack)
{
	rec_in_recorder_++;
	if (on)
		rec_lock_wait_end_(lock, rec_lock_name(lock, caller), holder, kind, t0);
	if (stack)
		rec_lock_acquired_(lock, NULL, caller);
	rec_in_recorder_--;
}

/* Before a contended wait on lock: 1 and *t0 set if rec.LockWait is on.
 * A thread that holds no lock taken through these interposers holds none
 * of its allocator's (jemalloc's are pthread mutexes; glibc's malloc never
 * calls them), so when the lock's or the caller's module has not been read
 * yet (a library dlopen'ed since), it reads it now, allocating
 * (lock_names.c): the name is ready for the event.  An allocator's own
 * code and data were read at start, so it never gets there. */
static inline int wait_begin(uint64_t *t0, const void *lock, uintptr_t caller)
{
	rec_in_recorder_++;
	int on = rec_lock_wait_begin_(t0);
	if (on && rec_lock_held_count_() == 0 && rec_lock_name_load(lock, caller))
		on = rec_lock_wait_begin_(t0); /* the wait starts after the naming */
	rec_in_recorder_--;
	return on;
}

static inline uint64_t mutex_owner(const pthread_mutex_t *m)
{
	return (uint32_t)__atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED);
}

static inline uint64_t rwlock_writer(const pthread_rwlock_t *l)
{
	return (uint32_t)__atomic_load_n(&l->__data.__cur_writer, __ATOMIC_RELAXED);
}

/* ---- mutex ------------------------------------------------------------------ */

static __attribute__((noinline)) int mutex_contended(pthread_mutex_t *m,
						     const struct timespec *abstime,
						     uintptr_t caller)
{
	uint64_t holder = mutex_owner(m), t0 = 0;
	for (int i = 0; holder == 0 && i < REC_HOLDER_REREADS; i++) {
		rec_holder_pause(i); /* changing hands: builtin_internal.h */
		int rc = rec_real_.mutex_trylock(m);
		if (got(rc)) {
			took(m, caller);
			return rc;
		}
		holder = mutex_owner(m);
	}
	int on = wait_begin(&t0, m, caller);
	unsigned w = rec_wall_enter(REC_WALL_LOCK);
	int rc = abstime ? rec_real_.mutex_timedlock(m, abstime) : rec_real_.mutex_lock(m);
	rec_preload_wall_leave(w);
	if (got(rc))
		waited(m, holder, 0, on, t0, caller, 1);
	return rc;
}

REC_PRELOAD_API int pthread_mutex_lock(pthread_mutex_t *m)
{
	if (!fast()) {
		rec_preload_ensure();
		return rec_real_.mutex_lock(m);
	}
	int rc = rec_real_.mutex_trylock(m);
	if (__builtin_expect(got(rc), 1)) {
		took(m, (uintptr_t)__builtin_return_address(0));
		return rc;
	}
	return mutex_contended(m, NULL, (uintptr_t)__builtin_return_address(0));
}

REC_PRELOAD_API int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	if (!fast()) {
		rec_preload_ensure();
		return rec_real_.mutex_timedlock(m, abstime);
	}
	int rc = rec_real_.mutex_trylock(m);
	if (got(rc)) {
		took(m, (uintptr_t)__builtin_return_address(0));
		return rc;
	}
	return mutex_contended(m, abstime, (uintptr_t)__builtin_return_address(0));
}

REC_PRELOAD_API int pthread_mutex_trylock(pthread_mutex_t *m)
{
	rec_preload_ensure();
	int rc = rec_real_.mutex_trylock(m);
	if (got(rc) && rec_preload_active() && fast())
		took_try(m, (uintptr_t)__builtin_return_address(0));
	return rc;
}

REC_PRELOAD_API int pthread_mutex_unlock(pthread_mutex_t *m)
{
	if (fast())
		(void)rec_lock_released_(m);
	else
		rec_preload_ensure();
	return rec_real_.mutex_unlock(m);
}

/* ---- rwlock ----------------------------------------------------------------- */

static __attribute__((noinline)) int rw_contended(pthread_rwlock_t *l, int write,
						  const struct timespec *abstime, uintptr_t caller)
{
	uint64_t holder = rwlock_writer(l), t0 = 0;
	/* changing hands (builtin_internal.h), unless readers hold it: then
	 * there is no one holder to wait for */
	for (int i = 0; holder == 0 && !rec_rwlock_readers(l) && i < REC_HOLDER_REREADS; i++) {
		rec_holder_pause(i);
		if ((write ? rec_real_.rw_trywrlock(l) : rec_real_.rw_tryrdlock(l)) == 0) {
			took(l, caller);
			return 0;
		}
		holder = rwlock_writer(l);
	}
	int on = wait_begin(&t0, l, caller);
	int rc;
	unsigned w = rec_wall_enter(REC_WALL_LOCK);
	if (abstime)
		rc = write ? rec_real_.rw_timedwrlock(l, abstime) : rec_real_.rw_timedrdlock(l, abstime);
	else
		rc = write ? rec_real_.rw_wrlock(l) : rec_real_.rw_rdlock(l);
	rec_preload_wall_leave(w);
	if (rc == 0)
		waited(l, holder, write ? 2 : 1, on, t0, caller, 1);
	return rc;
}

static inline int rw_lock(pthread_rwlock_t *l, int write, const struct timespec *abstime,
			  uintptr_t caller)
{
	if (!fast_from(caller)) {
		rec_preload_ensure();
		if (abstime)
			return write ? rec_real_.rw_timedwrlock(l, abstime)
				     : rec_real_.rw_timedrdlock(l, abstime);
		return write ? rec_real_.rw_wrlock(l) : rec_real_.rw_rdlock(l);
	}
	int rc = write ? rec_real_.rw_trywrlock(l) : rec_real_.rw_tryrdlock(l);
	if (__builtin_expect(rc == 0, 1)) {
		took(l, caller);
		return 0;
	}
	if (rc != EBUSY) /* EAGAIN (too many readers), EDEADLK: as the lock says */
		return rc;
	return rw_contended(l, write, abstime, caller);
}

REC_PRELOAD_API int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	return rw_lock(l, 0, NULL, (uintptr_t)__builtin_return_address(0));
}

REC_PRELOAD_API int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	return rw_lock(l, 1, NULL, (uintptr_t)__builtin_return_address(0));
}

REC_PRELOAD_API int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *t)
{
	return rw_lock(l, 0, t, (uintptr_t)__builtin_return_address(0));
}

REC_PRELOAD_API int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *t)
{
	return rw_lock(l, 1, t, (uintptr_t)__builtin_return_address(0));
}

REC_PRELOAD_API int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	rec_preload_ensure();
	int rc = rec_real_.rw_tryrdlock(l);
	if (rc == 0 && rec_preload_active() && fast())
		took_try(l, (uintptr_t)__builtin_return_address(0));
	return rc;
}

REC_PRELOAD_API int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	rec_preload_ensure();
	int rc = rec_real_.rw_trywrlock(l);
	if (rc == 0 && rec_preload_active() && fast())
		took_try(l, (uintptr_t)__builtin_return_address(0));
	return rc;
}

REC_PRELOAD_API int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	if (fast())
		(void)rec_lock_released_(l);
	else
		rec_preload_ensure();
	return rec_real_.rw_unlock(l);
}

/* ---- spinlock --------------------------------------------------------------- */

REC_PRELOAD_API int pthread_spin_lock(pthread_spinlock_t *s)
{
	if (!fast()) {
		rec_preload_ensure();
		return rec_real_.spin_lock(s);
	}
	int rc = rec_real_.spin_trylock(s);
	if (__builtin_expect(rc != EBUSY, 1))
		return rc;
	uint64_t t0 = 0;
	int on = wait_begin(&t0, (const void *)s, (uintptr_t)__builtin_return_address(0));
	unsigned w = rec_wall_enter(REC_WALL_LOCK);
	rc = rec_real_.spin_lock(s);
	rec_preload_wall_leave(w);
	if (rc == 0)
		waited((const void *)s, 0, 0, on, t0, (uintptr_t)__builtin_return_address(0), 0);
	return rc;
}
