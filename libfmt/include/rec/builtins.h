/* SPDX-License-Identifier: MIT */
/*
 * builtins.h - the recorder's built-in event sources a program calls into:
 * lock wrappers (rec.LockWait, rec.LockOrder), sleep wrappers (rec.Sleep),
 * condition-wait wrappers (rec.CondWait), allocation reports and sampled allocation wrappers
 * (rec.Alloc, rec.Free) and the CPU-time sampling profiler (rec.CPUSample).
 * spec/EVENTS.md lists every type with its fields and units.
 *
 *   #include <rec/builtins.h>
 *
 *   static rec_mutex cache_lock = REC_MUTEX_INITIALIZER("cache");
 *   rec_mutex_lock(&cache_lock);   // records rec.LockWait if it waited
 *   ...
 *   rec_mutex_unlock(&cache_lock);
 *   rec_sleep_ns(150 * 1000000);    // records rec.Sleep
 *   void *p = rec_malloc(n);        // sampled every 512 KiB (rec.Alloc)
 *   rec_alloc_report(buf, size);    // exact: one rec.Alloc per report
 *
 * All of them record into the default recorder (rec_recorder_default(),
 * REC_OUTPUT): with no default recorder open they behave exactly like the
 * pthread/libc functions they wrap, at the cost of a few loads.  Every
 * function may be called from any thread.  None is async-signal-safe except
 * where said.
 */
#ifndef LIBREC_BUILTINS_H
#define LIBREC_BUILTINS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "rec/recorder.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fixed type ids of these built-ins (spec/EVENTS.md). */
#define REC_TYPE_ID_LOCK_WAIT 16u  /* rec.LockWait */
#define REC_TYPE_ID_LOCK_ORDER 17u /* rec.LockOrder */
#define REC_TYPE_ID_SLEEP 18u      /* rec.Sleep */
#define REC_TYPE_ID_ALLOC 19u      /* rec.Alloc */
#define REC_TYPE_ID_FREE 20u       /* rec.Free */
#define REC_TYPE_ID_CPU_SAMPLE 21u /* rec.CPUSample */
#define REC_TYPE_ID_COND_WAIT 22u  /* rec.CondWait */
#define REC_TYPE_ID_IO 23u         /* rec.IO (the preload library's I/O interposers) */
#define REC_TYPE_ID_WALL_SAMPLE 28u /* rec.WallSample (wall-clock samples; the preload library) */
#define REC_TYPE_ID_POLL 29u        /* rec.Poll (poll/select/epoll waits; off unless asked) */

/* Default thresholds (the options' events list overrides them, e.g.
 * "rec.LockWait:threshold=1ms"). */
#define REC_LOCK_WAIT_THRESHOLD_NS 10000u /* 10 us */
#define REC_SLEEP_THRESHOLD_NS 0u         /* every sleep */
#define REC_COND_WAIT_THRESHOLD_NS 0u     /* every condition wait ("rec.CondWait:threshold=") */
#define REC_IO_THRESHOLD_NS 10000000u     /* 10 ms, like JFR's socket and file events */
#define REC_POLL_THRESHOLD_NS 10000000u   /* 10 ms (rec.Poll is off unless the events list names it) */

/* ------------------------------------------------------------------------ */
/* Locks                                                                    */
/* ------------------------------------------------------------------------ */
/* A pthread mutex with a name and the OS thread id of its current holder.
 * Initialize with REC_MUTEX_INITIALIZER(name) or rec_mutex_init(). */
typedef struct rec_mutex {
	pthread_mutex_t mu;
	const char *name;  /* borrowed, NULL = shown as "0x<address>"; must
			    * outlive the recording */
	uint64_t holder;   /* OS tid of the holder, 0 = none (relaxed atomics) */
} rec_mutex;
#define REC_MUTEX_INITIALIZER(name) { PTHREAD_MUTEX_INITIALIZER, (name), 0 }

/* A pthread rwlock, named; holder = the writer, or the last reader that
 * acquired it. */
typedef struct rec_rwlock {
	pthread_rwlock_t rw;
	const char *name;
	uint64_t holder;
} rec_rwlock;
#define REC_RWLOCK_INITIALIZER(name) { PTHREAD_RWLOCK_INITIALIZER, (name), 0 }

/* Same return values as the pthread functions they wrap (0 or an errno). */
REC_API int rec_mutex_init(rec_mutex *m, const pthread_mutexattr_t *attr, const char *name);
REC_API int rec_mutex_destroy(rec_mutex *m);
/*! rec_mutex_lock() : trylock first; if that fails, lock and, when the wait
 *  was at least rec.LockWait's threshold, record rec.LockWait (lock address
 *  and name, wait duration, the holder when the wait began, stack).  On
 *  every acquisition while the thread holds other rec_ locks, record each
 *  (held, acquired) pair the thread has not recorded before as
 *  rec.LockOrder.  Cost when uncontended: the trylock, a TLS read, one
 *  relaxed store and a push on a per-thread held-lock stack. */
REC_API int rec_mutex_lock(rec_mutex *m);
REC_API int rec_mutex_trylock(rec_mutex *m);
REC_API int rec_mutex_unlock(rec_mutex *m);

REC_API int rec_rwlock_init(rec_rwlock *l, const pthread_rwlockattr_t *attr, const char *name);
REC_API int rec_rwlock_destroy(rec_rwlock *l);
REC_API int rec_rwlock_rdlock(rec_rwlock *l);
REC_API int rec_rwlock_wrlock(rec_rwlock *l);
REC_API int rec_rwlock_tryrdlock(rec_rwlock *l);
REC_API int rec_rwlock_trywrlock(rec_rwlock *l);
REC_API int rec_rwlock_unlock(rec_rwlock *l);

/* ------------------------------------------------------------------------ */
/* Sleeps (rec.Sleep) and condition waits (rec.CondWait)                   */
/* ------------------------------------------------------------------------ */
/*! rec_sleep_ns() : sleep ns nanoseconds (resuming after signals); records
 *  one rec.Sleep of the whole time.  Returns 0, or -1 with errno. */
REC_API int rec_sleep_ns(uint64_t ns);
/*! rec_nanosleep() : nanosleep() (same semantics: EINTR returns -1 with the
 *  remaining time in rem), recording the time actually slept. */
REC_API int rec_nanosleep(const struct timespec *req, struct timespec *rem);
/*! rec_usleep() : usleep() recording rec.Sleep. */
REC_API int rec_usleep(unsigned long usec);
/*! rec_cond_wait()/rec_cond_timedwait() : pthread_cond_wait/timedwait on
 *  m's mutex, recording one rec.CondWait (not a rec.Sleep) for the whole
 *  wait, including re-acquiring m: the condition variable's and m's
 *  addresses, m's name, the timeout (0 for rec_cond_wait), whether it timed
 *  out, and the stack; its own threshold (default 0, every wait).  m's
 *  holder and the thread's held-lock stack are updated as the mutex is
 *  released and re-acquired. */
REC_API int rec_cond_wait(pthread_cond_t *c, rec_mutex *m);
REC_API int rec_cond_timedwait(pthread_cond_t *c, rec_mutex *m, const struct timespec *abstime);

/* ------------------------------------------------------------------------ */
/* Allocations (rec.Alloc, rec.Free)                                        */
/* ------------------------------------------------------------------------ */
/*! rec_alloc_report() : record one rec.Alloc of exactly size bytes at ptr
 *  (sampled = false, weight = size): for allocations the program makes
 *  itself (pools, arenas, mmap) or wants counted exactly. */
REC_API void rec_alloc_report(const void *ptr, uint64_t size);
/*! rec_free_report() : record one rec.Free of ptr (size unknown: 0). */
REC_API void rec_free_report(const void *ptr);

/* malloc/calloc/realloc/free that sample: every thread counts the bytes it
 * allocates and records one rec.Alloc (sampled = true) each time its count
 * passes a randomized threshold with mean rec_alloc_sample_interval() bytes
 * (exponentially distributed, as tcmalloc and JFR do, so periodic patterns
 * do not alias); the event's weight is the bytes allocated by the thread
 * since its previous sample (or since the default recorder opened).  The
 * bytes after a thread's last sample are recorded as one more rec.Alloc, a
 * tail (address 0, size 0, no stack): by the thread when it exits, and for
 * the threads still running by the thread that closes the default recorder.
 * So the weights sum to exactly the bytes allocated through these functions
 * while the recording was open (bytes allocated while it opens or closes,
 * racing with that, may be missed or counted twice).  Freeing
 * a sampled block records rec.Free with its size (up to 4096 sampled blocks
 * live at once are tracked).  Blocks from these functions are ordinary
 * malloc blocks: free() and rec_free() are interchangeable. */
REC_API void *rec_malloc(size_t size);
REC_API void *rec_calloc(size_t n, size_t size);
REC_API void *rec_realloc(void *ptr, size_t size);
REC_API void rec_free(void *ptr);
/* Mean bytes between samples; default 512 KiB, 0 = no sampling (at once:
 * no sample and no tail is recorded while it is 0).  Threads pick up a new
 * mean at their next sample. */
REC_API void rec_alloc_set_sample_interval(uint64_t bytes);
REC_API uint64_t rec_alloc_sample_interval(void);

/* ------------------------------------------------------------------------ */
/* CPU sampling (rec.CPUSample)                                             */
/* ------------------------------------------------------------------------ */
/*! rec_cpu_sampler_set_period() : CPU time between samples of one thread,
 *  in ns; default 10 ms (also REC_CPU_SAMPLE_PERIOD=DUR, e.g. 1ms, in the
 *  environment); 0 stops sampling.  Applies to timers armed afterwards. */
REC_API void rec_cpu_sampler_set_period(uint64_t ns);
REC_API uint64_t rec_cpu_sampler_period(void);
/*! rec_cpu_sampler_attach_thread() : start sampling the calling thread
 *  (registers it with the default recorder and arms, now, a
 *  CLOCK_THREAD_CPUTIME_ID timer that sends SIGPROF to this thread).  Rarely
 *  needed: the sampler attaches every thread the default recorder registers
 *  (its first event), the thread that opens it, and every thread that uses a
 *  rec_ wrapper; for those, the recorder's background thread arms the timer
 *  10-20 ms later if the thread still runs (no system call in the thread).
 *  @return REC_OK, REC_ERR_STATE (no default recorder or sampling off), or
 *          REC_ERR_IO (timer_create failed). */
REC_API rec_status rec_cpu_sampler_attach_thread(void);
/* Samples taken and dropped (interrupted an emit, no buffer) so far. */
REC_API void rec_cpu_sampler_counts(uint64_t *taken, uint64_t *dropped);

#ifdef __cplusplus
}
#endif
#endif /* LIBREC_BUILTINS_H */
