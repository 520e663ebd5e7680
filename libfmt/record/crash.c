/* SPDX-License-Identifier: MIT */
/*
 * crash.c - fatal signals in the host (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
 * SIGABRT): record a rec.Crash (signal, si_code, fault address, thread,
 * the interrupted stack), let the background thread drain every buffer and
 * write a last chunk, wait for it a bounded time, then give the signal back
 * to the disposition that was there before the recorder (the host dies as it
 * would have without it: same signal, core dump, exit status).
 *
 * The handler is async-signal-safe: no lock, no malloc, no stdio.  It uses
 * the signal-safe emit path (rec_emit_begin_signal_pcs) into the crashing
 * thread's own buffer, or, when that is not possible (the thread never
 * emitted, it crashed inside an emit, its buffer is full), a static slot
 * that the background thread turns into the record.  The wait is a futex
 * wait with a deadline (REC_CRASH_WAIT_NS): if the background thread cannot
 * make progress (the crashing thread holds the recorder's lock or the
 * malloc lock, a stopped disk) the process dies after the deadline with
 * what was written before.  A crash in the background thread itself, or
 * while the recorder closes, is not waited for (nobody would write it).
 *
 * Returning from the handler: the previous dispositions of all five signals
 * are restored first.  A fault the kernel raised (si_code > 0) re-executes
 * the faulting instruction and faults again into that disposition (with the
 * real siginfo, so a previous handler sees what it would have seen); a
 * signal that was sent (kill, raise, abort: si_code <= 0) is sent again to
 * the thread with tgkill and is delivered when the handler returns.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "record/recorder_internal.h"
#include "record/stack_internal.h"

static const int k_sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
#define NSIGS (sizeof k_sigs / sizeof k_sigs[0])

static struct sigaction g_prev[NSIGS];
static int g_have_prev;            /* g_prev is valid (handlers were installed once) */
static rec_recorder *g_owner;      /* atomic: the recorder the handler records into */
static uint32_t g_users;           /* atomic: handlers using g_owner right now */
static uint32_t g_crashing;        /* atomic: a thread is handling a crash */
static __thread int t_in_handler __attribute__((tls_model("initial-exec")));
/* A leaf of the lock order (recorder_internal.h, LOCK ORDER). */
static pthread_mutex_t g_install_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void restore_all(void)
{
	for (size_t i = 0; i < NSIGS; i++)
		sigaction(k_sigs[i], &g_prev[i], NULL);
}

/* Put a rec.Crash in r and wait (bounded) for the background thread to
 * write it with everything buffered. */
static void record_and_wait(rec_recorder *r, int sig, const siginfo_t *si, void *uc)
{
	if (__atomic_load_n(&r->closing, __ATOMIC_ACQUIRE) || r->forked_child)
		return;
	if (r->bg_started && pthread_equal(pthread_self(), r->bg))
		return; /* the background thread itself: nobody would write it */

	uintptr_t pcs[REC_STACK_MAX_DEPTH];
	int truncated = 0;
	rec_stack_signal_enter();
	(void)rec_stack_bounds_signal(uc); /* a thread registered without them */
	size_t n = uc ? rec_stack_capture_ucontext(uc, pcs, REC_STACK_MAX_DEPTH, &truncated) : 0;
	rec_stack_signal_leave();

	const int code = si ? si->si_code : 0;
	const uint64_t addr = (si && code > 0 && sig != SIGABRT) ? (uint64_t)(uintptr_t)si->si_addr : 0;
	const uint32_t sender = (si && code <= 0) ? (uint32_t)si->si_pid : 0;
	const uint64_t os_tid = (uint64_t)syscall(SYS_gettid);
	const uint64_t ticks = rec_now_ticks(r);

	/* Own buffer, signal-safe emit path, unless the thread is inside an
	 * emit (the begin would count a nested drop) or was never registered. */
	rec_tbuf_full *b = rec_thread_buffer_signal(r);
	bool done = false;
	if (b && !__atomic_load_n(&b->pub.busy, __ATOMIC_ACQUIRE) && r->t_crash) {
		rec_emit e;
		if (rec_emit_begin_signal_pcs(&e, r->t_crash, ticks, 0, pcs, n, truncated)) {
			rec_emit_u64(&e, (uint64_t)sig);
			rec_emit_i64(&e, code);
			rec_emit_u64(&e, addr);
			rec_emit_u64(&e, sender);
			rec_emit_u64(&e, os_tid);
			rec_emit_commit(&e);
			done = true;
		}
	}
	if (!done) {
		rec_crash_slot *s = &r->crash_slot;
		s->sig = (uint32_t)sig;
		s->code = code;
		s->sender_pid = sender;
		s->addr = addr;
		s->os_tid = os_tid;
		s->thread_id = b ? b->thread_id : 0;
		s->stack_id = rec_stack_intern_signal(r, pcs, n, truncated);
		s->ticks = ticks;
		__atomic_store_n(&s->pending, 1u, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&r->crash_req, 1u, __ATOMIC_RELEASE);
	rec_wake_bg(r);

	const uint64_t deadline = mono_ns() + REC_CRASH_WAIT_NS;
	while (!__atomic_load_n(&r->crash_done, __ATOMIC_ACQUIRE)) {
		uint64_t now = mono_ns();
		if (now >= deadline)
			break;
		rec_futex_wait(&r->crash_done, 0, deadline - now);
	}
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	const int saved_errno = errno;
	if (t_in_handler) {
		/* A fault inside this handler (another of the five signals):
		 * straight to the previous dispositions. */
		restore_all();
	} else {
		t_in_handler = 1;
		uint32_t expect = 0;
		if (__atomic_compare_exchange_n(&g_crashing, &expect, 1u, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			__atomic_add_fetch(&g_users, 1, __ATOMIC_ACQ_REL);
			rec_recorder *r = __atomic_load_n(&g_owner, __ATOMIC_ACQUIRE);
			if (r)
				record_and_wait(r, sig, si, uc);
			__atomic_sub_fetch(&g_users, 1, __ATOMIC_ACQ_REL);
		} else {
			/* Another thread is recording its crash: give it its
			 * time (the process normally dies meanwhile), then die
			 * of our own signal. */
			sleep_ns(REC_CRASH_WAIT_NS + 500000000u);
		}
		restore_all();
		t_in_handler = 0;
	}
	/* A fault raised by the kernel repeats when we return; a sent signal
	 * is sent again (pending until we return). */
	if (!si || si->si_code <= 0 || sig == SIGABRT)
		syscall(SYS_tgkill, (long)getpid(), (long)syscall(SYS_gettid), (long)sig);
	errno = saved_errno;
}

bool rec_crash_install(rec_recorder *r)
{
	bool ok = false;
	pthread_mutex_lock(&g_install_lock);
	if (__atomic_load_n(&g_owner, __ATOMIC_ACQUIRE) == NULL) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_fatal;
		sigfillset(&sa.sa_mask);
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
		struct sigaction prev[NSIGS];
		size_t i;
		for (i = 0; i < NSIGS; i++) {
			struct sigaction cur;
			if (sigaction(k_sigs[i], NULL, &cur) != 0)
				break;
			/* Still ours from an earlier recorder (another handler was
			 * installed over it since): keep the real previous one. */
			if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fatal && g_have_prev)
				prev[i] = g_prev[i];
			else
				prev[i] = cur;
		}
		if (i == NSIGS) {
			__atomic_store_n(&g_owner, r, __ATOMIC_RELEASE);
			for (i = 0; i < NSIGS; i++) {
				g_prev[i] = prev[i];
				if (sigaction(k_sigs[i], &sa, NULL) != 0)
					break;
			}
			g_have_prev = 1;
			if (i < NSIGS) { /* undo */
				for (size_t j = 0; j < i; j++)
					sigaction(k_sigs[j], &g_prev[j], NULL);
				__atomic_store_n(&g_owner, NULL, __ATOMIC_RELEASE);
			} else {
				ok = true;
			}
		}
	}
	pthread_mutex_unlock(&g_install_lock);
	return ok;
}

void rec_crash_uninstall(rec_recorder *r)
{
	pthread_mutex_lock(&g_install_lock);
	if (__atomic_load_n(&g_owner, __ATOMIC_ACQUIRE) == r) {
		for (size_t i = 0; i < NSIGS; i++) {
			struct sigaction cur;
			/* A handler the program installed over ours stays; ours
			 * (reached through it) then only passes signals on. */
			if (sigaction(k_sigs[i], NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
			    cur.sa_sigaction == on_fatal)
				sigaction(k_sigs[i], &g_prev[i], NULL);
		}
		__atomic_store_n(&g_owner, NULL, __ATOMIC_RELEASE);
		/* A handler that took r before: it uses r at most its bounded wait. */
		uint64_t deadline = mono_ns() + REC_CRASH_WAIT_NS + 1000000000u;
		while (__atomic_load_n(&g_users, __ATOMIC_ACQUIRE) && mono_ns() < deadline)
			sleep_ns(1000000);
	}
	pthread_mutex_unlock(&g_install_lock);
}

void rec_crash_atfork_child(void)
{
	/* The child's recorders are disabled: the handler passes signals on. */
	__atomic_store_n(&g_owner, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&g_users, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&g_crashing, 0, __ATOMIC_RELAXED);
	pthread_mutex_init(&g_install_lock, NULL);
}
