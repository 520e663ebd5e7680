/* SPDX-License-Identifier: MIT */
/*
 * wall_internal.h - wall-clock sampling (wall_sampler.c): the per-thread
 * state the preload library's blocking-call interposers mark, and the
 * sampler's controls.  Never installed.
 *
 * A thread the sampler knows (rec_wall_attach_thread(), made by the preload
 * library for every thread it starts and for the main thread) has one
 * rec_wall_thread in TLS.  An interposed blocking call (a contended lock,
 * a condition wait, a sleep, a blocking I/O call, poll/select/epoll)
 * brackets the real call with rec_wall_enter(KIND) and rec_wall_leave():
 * a store, a load and a clock read (vDSO) on the way in, a clock read and
 * two stores on the way out.  Time is counted on a fixed grid of ticks
 * (origin + k x period): a call spans the ticks between its two clock
 * reads, and when it spanned any the thread itself emits one
 * rec.WallSample (state KIND, weight = those ticks, the stack of its call
 * site).  The sampler wakes at each tick, never signals a thread inside a
 * marked call, and gives a thread outside one the ticks since it attached
 * that none of its calls spanned (exact however late the sampler wakes),
 * signalling it: its handler emits them as a "running" sample with the
 * interrupted stack.
 *
 * The hand-off that keeps a signal out of a blocking call (Dekker's, on
 * sequentially consistent stores): the thread stores kind, then loads
 * pending; the sampler stores pending = 1, then loads kind, and signals
 * only if kind is still 0, then sets pending = 2 (sent).  So a thread that
 * sees pending != 0 after marking itself may have a signal on its way: it
 * waits in rec_wall_mark_() until the handler ran (pending 0) before
 * it enters the real call.  If the signal is blocked in the thread it
 * takes it back (sigtimedwait, zero timeout) so that no signal of the
 * sampler is ever pending in a thread that blocks in a call.
 */
#ifndef LIBREC_RECORD_WALL_INTERNAL_H
#define LIBREC_RECORD_WALL_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* What a thread's wall samples say it was doing (rec.WallSample's state). */
enum {
	REC_WALL_RUNNING = 0, /* no marked call: running (or in a wait it cannot tell) */
	REC_WALL_LOCK = 1,    /* a contended pthread mutex, rwlock or spinlock */
	REC_WALL_COND = 2,    /* pthread_cond_wait & co. */
	REC_WALL_SLEEP = 3,   /* nanosleep, clock_nanosleep, usleep, sleep */
	REC_WALL_IO = 4,      /* read, write, recv, send, accept, connect & co. */
	REC_WALL_POLL = 5,    /* poll, ppoll, select, pselect, epoll_wait, epoll_pwait */
	REC_WALL_WAIT = 6,    /* signalled inside a system call the kernel restarts (a wait
			       * the preload does not see: pthread_join, a raw futex, waitpid) */
	REC_WALL_NKINDS = 7
};

/* The signal the sampler sends to a running thread (SIGURG: ignored by
 * default, so a late one after the recording closed is harmless; Go's
 * runtime uses it to preempt goroutines for the same reason). */
#define REC_WALL_SIGNAL SIGURG

typedef struct rec_wall_thread {
	struct rec_wall_thread *next; /* the sampler's list (its lock) */
	uint64_t tid;
	pthread_t self;
	uint64_t gen;                 /* the sampler generation it attached in */
	uintptr_t stack_lo, stack_hi; /* the sampler takes them; hi published last */
	uint64_t attach_tick;         /* the grid tick it attached at */
	uint64_t call_tick;           /* the thread's: the grid tick its call began at */
	uint64_t run_reported;        /* the sampler's: running ticks handed to the handler */
	uint32_t listed;              /* on the list: its calls are marked */
	uint32_t kind;                /* atomic: REC_WALL_* of the call it is in, 0 none */
	uint32_t pending;             /* atomic: 1 the sampler may signal, 2 signal sent */
	uint32_t call_ticks;          /* atomic: grid ticks of its finished calls, in all */
	uint32_t ticks_run;           /* atomic: running ticks for the handler to emit */
} rec_wall_thread;

extern __thread rec_wall_thread rec_wall_tls_;
/* The grid: tick k is at origin + k x period (CLOCK_MONOTONIC ns), set
 * before the sampler starts. */
extern uint64_t rec_wall_origin_ns_, rec_wall_period_ns_;

/* wall_sampler.c */
void rec_wall_set_period(uint64_t ns); /* 0 = off (the default) */
uint64_t rec_wall_period(void);
/* Attach the calling thread (normal context; once per sampler generation). */
void rec_wall_attach_thread(void);
/* The program set its own handler of REC_WALL_SIGNAL: no more running
 * samples (blocked-call samples go on); said once on stderr (not with
 * quiet=on) if wall sampling is on. */
void rec_wall_program_takes_signal(void);
/* Defined (1) by the preload library, whose interposers mark blocking
 * calls (poll_interpose.c); a weak hidden reference here, so NULL in
 * librec.a and librec.so: there wall= says it needs rec-record and samples
 * nothing. */
extern const int rec_wall_preload_marker_ __attribute__((weak, visibility("hidden")));
/* Emit the rec.WallSample of a marked call that got ticks (the caller is
 * inside the recorder; the stack is captured here). */
void rec_wall_emit_call_(unsigned kind, uint32_t ticks);

/* The grid tick of now (the last tick at or before it). */
static inline uint64_t rec_wall_tick_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	uint64_t o = __atomic_load_n(&rec_wall_origin_ns_, __ATOMIC_RELAXED);
	uint64_t p = __atomic_load_n(&rec_wall_period_ns_, __ATOMIC_RELAXED);
	return ns > o && p ? (ns - o) / p : 0;
}

/* The marking itself (wall_sampler.c), out of line so that an
 * interposer's fast path, when wall sampling is off, is one thread-local
 * load and holds no clock buffer (no stack-protector canary, fewer saved
 * registers: the short read's per-call cost, issue 18). */
unsigned rec_wall_mark_(rec_wall_thread *w, unsigned kind);
uint32_t rec_wall_unmark_(unsigned marked);

/* Mark the calling thread inside a blocking call of kind; returns what to
 * pass to rec_wall_leave() (0: not marked: the thread is not sampled, or
 * already inside a marked call).  The clock is read after the mark: a
 * tick the sampler saw the thread running at is never also the call's. */
static inline unsigned rec_wall_enter(unsigned kind)
{
	rec_wall_thread *w = &rec_wall_tls_;
	if (__builtin_expect(!__atomic_load_n(&w->listed, __ATOMIC_RELAXED), 1))
		return 0;
	return rec_wall_mark_(w, kind);
}

/* The marked call returned: the grid ticks it spanned (0: nothing to emit),
 * counted in call_ticks before the mark goes (the sampler takes the
 * thread's running ticks as the ticks since it attached less those). */
static inline uint32_t rec_wall_leave(unsigned marked)
{
	if (__builtin_expect(!marked, 1))
		return 0;
	return rec_wall_unmark_(marked);
}

#endif /* LIBREC_RECORD_WALL_INTERNAL_H */
