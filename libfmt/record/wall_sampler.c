/* SPDX-License-Identifier: MIT */
/*
 * wall_sampler.c - rec.WallSample: where wall time goes, whether a thread
 * runs or waits (REC_OPTIONS wall=HZ, rec-record --wall HZ; off by default).
 *
 * A thread of the sampler's own (started when the default recorder opens
 * with wall=HZ > 0, all signals blocked, inside the recorder) wakes at
 * every tick of a fixed grid (origin + k x 1/HZ on CLOCK_MONOTONIC) and
 * looks at every attached thread (wall_internal.h):
 *   - inside a blocking call the preload library marks (lock, cond, sleep,
 *     io, poll): the thread is not disturbed; the call reads the clock as
 *     it starts and ends, and if it spanned ticks of the grid the thread
 *     emits one sample when it returns, weight = those ticks, with the
 *     stack of its call site (the stack it blocked in), state = its kind;
 *   - anywhere else: the thread is given the ticks since it attached that
 *     none of its calls spanned and it was not given yet, and is sent
 *     REC_WALL_SIGNAL (SIGURG, SA_RESTART) unless one is still on its way;
 *     the handler emits them as one "running" sample (or "wait", below)
 *     with the interrupted stack, as the CPU sampler's SIGPROF handler does.
 * Every tick of a thread's life is so counted once, in one state, however
 * late the sampler thread wakes on a loaded machine (a late wake only
 * delays a running sample, and takes its stack later).
 *
 * What it cannot see: a wait that does not go through an interposed libc
 * function (a raw futex or syscall(2), a libc-internal call such as
 * getaddrinfo's poll, pthread_join, sem_wait, waitpid, sigwaitinfo, pause)
 * is signalled like a running thread.  Its sample says "wait" when the
 * kernel restarts the call (the handler finds the pc rewound to the
 * syscall instruction: futex, wait4, read ...), else "running"; the stack
 * is that of the wait (often only its libc leaf).  Such a wait gets the
 * signal: with SA_RESTART the kernel restarts read/write/recv/send/accept/
 * connect and the other restartable calls (a socket with SO_RCVTIMEO or
 * SO_SNDTIMEO excepted), futex waits and wait(2); it does not restart
 * nanosleep, clock_nanosleep, poll, ppoll, select, pselect, epoll_wait,
 * sigtimedwait/sigwaitinfo, pause, sigsuspend, semop, msgrcv, io_getevents:
 * those return EINTR (or a short sleep) when they were made without libc's
 * interposed entry point.  The interposed calls never see the signal (the
 * hand-off in wall_internal.h).
 *
 * A program that installs its own SIGURG handler (sigprof_guard.c) turns
 * the running samples off; a program that has one when the recording opens
 * gets none.  Blocked-call samples go on either way.
 */
#include "record/wall_internal.h"
#include "rec/builtins.h"
#include "record/builtin_internal.h"
#include "record/recorder_internal.h"
#include "record/stack_internal.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static const rec_field wall_fields[] = {
	{ "state", "State", "what the thread was doing: lock, cond, sleep, io or poll (an "
	  "interposed blocking call), wait (signalled inside a system call the kernel restarts: "
	  "a wait the preload does not interpose), running (anything else: on a CPU or ready "
	  "to run)", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "weight", "Weight", "sampler ticks this sample stands for (the sample is weight x "
	  "period of wall time)", REC_TYPE_U32, REC_UNIT_COUNT },
	{ "period", "Period", "wall time between two ticks of the sampler", REC_TYPE_U64,
	  REC_UNIT_NANOS },
};
static const rec_type wall_def = {
	REC_TYPE_ID_WALL_SAMPLE, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "rec.WallSample",
	"Wall-Clock Sample", "Where a thread's wall time went, running or waiting", "rec/Profiling",
	3, wall_fields
};

static const char *const state_names[REC_WALL_NKINDS] = { "running", "lock", "cond", "sleep",
							  "io",      "poll", "wait" };

#define MAX_DEPTH 128

__thread rec_wall_thread rec_wall_tls_;
uint64_t rec_wall_origin_ns_, rec_wall_period_ns_;

static rec_event_type *T_wall;
static rec_str g_state[REC_WALL_NKINDS];
static int ready;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static uint64_t g_period_ns;     /* 0 = off */
static int g_on;                 /* the sampler thread runs (a recording is open) */
static uint64_t g_gen = 1;       /* bumped on open and in a fork child */
static int g_handler_ok;         /* our handler is installed */
static int g_signals_off;        /* the program took the signal */
static pid_t g_pid;
static int g_said;

/* A leaf of the lock order, like the CPU sampler's reg_lock. */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static rec_wall_thread *reg_head;
static pthread_key_t reg_key;
static int reg_key_ok;

static pthread_t g_thread;
static int g_thread_on;
static int g_stop;

/* ---- the signal handler (a running thread) -------------------------------- */

/* Whether the signal interrupted a system call the kernel restarts (its
 * SA_RESTART rewinds the pc to the syscall instruction): the thread was
 * blocked in a wait the preload library does not see, not running.  (A
 * thread stopped just before such an instruction also counts.) */
static int in_restarted_syscall(const void *ucontext)
{
	const ucontext_t *uc = ucontext;
#if defined(__x86_64__)
	const unsigned char *pc = (const unsigned char *)uc->uc_mcontext.gregs[REG_RIP];
	return pc != NULL && pc[0] == 0x0f && pc[1] == 0x05; /* syscall */
#elif defined(__aarch64__)
	const uint32_t *pc = (const uint32_t *)uc->uc_mcontext.pc;
	return pc != NULL && *pc == 0xd4000001u; /* svc #0 */
#else
	(void)uc;
	return 0;
#endif
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	if (si == NULL || si->si_code != SI_TKILL || si->si_pid != g_pid)
		return; /* not the sampler's (a socket's out-of-band data: ignored, as by default) */
	rec_wall_thread *w = &rec_wall_tls_;
	if (__atomic_load_n(&w->pending, __ATOMIC_ACQUIRE) == 0)
		return;
	int saved_errno = errno;
	/* Interrupting the thread's own emit (as the preload's call-end sample
	 * right after rec_wall_leave()): a begin here would be a nested one,
	 * dropped with its ticks.  The ticks stay for the next signal (or are
	 * counted as not emitted when none comes). */
	const struct rec_tbuf_ *tb = REC_TLS_TBUF_;
	if (tb != NULL && __atomic_load_n(&tb->busy, __ATOMIC_RELAXED)) {
		__atomic_store_n(&w->pending, 0, __ATOMIC_RELEASE);
		return;
	}
	uint32_t n = __atomic_exchange_n(&w->ticks_run, 0, __ATOMIC_RELAXED);
	rec_event_type *t = T_wall;
	if (n != 0 && t != NULL && __atomic_load_n(&g_on, __ATOMIC_RELAXED) && rec_type_enabled(t)) {
		rec_stack_signal_enter();
		uintptr_t hi = __atomic_load_n(&w->stack_hi, __ATOMIC_ACQUIRE);
		if (hi)
			rec_stack_set_bounds(w->stack_lo, hi);
		uintptr_t pcs[MAX_DEPTH];
		int truncated = 0;
		size_t np = rec_stack_capture_ucontext(uc, pcs, MAX_DEPTH, &truncated);
		rec_emit e;
		if (rec_emit_begin_signal_pcs(&e, t, rec_type_ticks(t), 0, pcs, np, truncated)) {
			rec_emit_string(&e, g_state[in_restarted_syscall(uc) ? REC_WALL_WAIT
									  : REC_WALL_RUNNING]);
			rec_emit_u64(&e, n);
			rec_emit_u64(&e, __atomic_load_n(&g_period_ns, __ATOMIC_RELAXED));
			rec_emit_commit(&e);
		}
		rec_stack_signal_leave();
	}
	__atomic_store_n(&w->pending, 0, __ATOMIC_RELEASE);
	errno = saved_errno;
}

/* ---- the hand-off and the call's sample ------------------------------------- */

static void wait_for_pending(rec_wall_thread *w)
{
	int saved = errno;
	/* pending 1: the sampler is between its look at kind and its signal */
	for (int i = 0; i < 100000 && __atomic_load_n(&w->pending, __ATOMIC_ACQUIRE) == 1; i++)
		sched_yield();
	/* pending 2: sent; an unblocked signal is handled on the way out of
	 * this system call at the latest */
	if (__atomic_load_n(&w->pending, __ATOMIC_ACQUIRE) != 0)
		sched_yield();
	if (__atomic_load_n(&w->pending, __ATOMIC_ACQUIRE) == 2) {
		/* blocked here: take it back so it interrupts no later call */
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, REC_WALL_SIGNAL);
		struct timespec zero = { 0, 0 };
		(void)syscall(SYS_rt_sigtimedwait, &set, NULL, &zero, (size_t)8);
		uint32_t two = 2;
		(void)__atomic_compare_exchange_n(&w->pending, &two, 0, false, __ATOMIC_ACQ_REL,
						  __ATOMIC_RELAXED);
	}
	errno = saved;
}

unsigned rec_wall_mark_(rec_wall_thread *w, unsigned kind)
{
	if (__atomic_load_n(&w->kind, __ATOMIC_RELAXED) != 0)
		return 0; /* already inside a marked call */
	__atomic_store_n(&w->kind, kind, __ATOMIC_SEQ_CST);
	if (__builtin_expect(__atomic_load_n(&w->pending, __ATOMIC_SEQ_CST) != 0, 0))
		wait_for_pending(w);
	w->call_tick = rec_wall_tick_now();
	return kind;
}

uint32_t rec_wall_unmark_(unsigned marked)
{
	(void)marked;
	rec_wall_thread *w = &rec_wall_tls_;
	uint64_t t = rec_wall_tick_now();
	uint32_t n = t > w->call_tick ? (uint32_t)(t - w->call_tick) : 0;
	if (n)
		__atomic_store_n(&w->call_ticks, w->call_ticks + n, __ATOMIC_RELAXED);
	__atomic_store_n(&w->kind, 0, __ATOMIC_SEQ_CST);
	return n;
}

void rec_wall_emit_call_(unsigned kind, uint32_t ticks)
{
	rec_event_type *t = T_wall;
	if (t == NULL || kind >= REC_WALL_NKINDS || !__atomic_load_n(&g_on, __ATOMIC_RELAXED))
		return;
	rec_emit e;
	if (!rec_emit_begin(&e, t))
		return;
	rec_emit_string(&e, g_state[kind]);
	rec_emit_u64(&e, ticks);
	rec_emit_u64(&e, __atomic_load_n(&g_period_ns, __ATOMIC_RELAXED));
	rec_emit_commit(&e);
}

/* ---- the sampler thread ------------------------------------------------------ */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One look at every attached thread at grid tick now. */
static void tick(uint64_t now, uint64_t gen)
{
	int signals = __atomic_load_n(&g_handler_ok, __ATOMIC_RELAXED) &&
		      !__atomic_load_n(&g_signals_off, __ATOMIC_RELAXED);
	pthread_mutex_lock(&reg_lock);
	for (rec_wall_thread *w = reg_head; w != NULL; w = w->next) {
		if (w->gen != gen)
			continue;
		if (__atomic_load_n(&w->kind, __ATOMIC_SEQ_CST) != 0)
			continue; /* in a marked call: its ticks are its own */
		/* running since its last call: the ticks since it attached that no
		 * call of it spanned, less those already handed out (a call that
		 * began after the look above starts after tick now) */
		uint64_t in_calls = __atomic_load_n(&w->call_ticks, __ATOMIC_RELAXED);
		if (now <= w->attach_tick || now - w->attach_tick <= in_calls + w->run_reported)
			continue;
		uint64_t fresh = now - w->attach_tick - in_calls - w->run_reported;
		w->run_reported += fresh;
		__atomic_add_fetch(&w->ticks_run, (uint32_t)fresh, __ATOMIC_RELAXED);
		if (!signals || __atomic_load_n(&w->pending, __ATOMIC_ACQUIRE) != 0)
			continue; /* the signal on its way emits these too */
		__atomic_store_n(&w->pending, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&w->kind, __ATOMIC_SEQ_CST) != 0) {
			/* it entered a call meanwhile: no signal (it may wait for this);
			 * the ticks go with its next running sample */
			__atomic_store_n(&w->pending, 0, __ATOMIC_RELEASE);
			continue;
		}
		if (syscall(SYS_tgkill, (long)g_pid, (long)w->tid, REC_WALL_SIGNAL) != 0) {
			__atomic_store_n(&w->pending, 0, __ATOMIC_RELEASE);
			continue;
		}
		uint32_t one = 1;
		(void)__atomic_compare_exchange_n(&w->pending, &one, 2, false, __ATOMIC_ACQ_REL,
						  __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&reg_lock);
}

static void *sampler_main(void *arg)
{
	uint64_t gen = (uint64_t)(uintptr_t)arg;
	uint64_t origin = __atomic_load_n(&rec_wall_origin_ns_, __ATOMIC_RELAXED);
	uint64_t period = __atomic_load_n(&rec_wall_period_ns_, __ATOMIC_RELAXED);
	uint64_t k = 0;
	while (!__atomic_load_n(&g_stop, __ATOMIC_ACQUIRE)) {
		uint64_t next = origin + (k + 1) * period;
		struct timespec ts = { (time_t)(next / 1000000000u), (long)(next % 1000000000u) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		if (__atomic_load_n(&g_stop, __ATOMIC_ACQUIRE))
			break;
		k = rec_wall_tick_now(); /* a late wake skips the ticks it missed */
		tick(k, gen);
	}
	return NULL;
}

static void stop_thread(void)
{
	if (!g_thread_on)
		return;
	__atomic_store_n(&g_stop, 1, __ATOMIC_RELEASE);
	pthread_join(g_thread, NULL);
	g_thread_on = 0;
}

static void start_thread(void)
{
	__atomic_store_n(&g_stop, 0, __ATOMIC_RELEASE);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	uint64_t gen = __atomic_load_n(&g_gen, __ATOMIC_RELAXED);
	g_thread_on = pthread_create(&g_thread, NULL, sampler_main, (void *)(uintptr_t)gen) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- start / stop ----------------------------------------------------------- */

static void install_handler(void)
{
	struct sigaction old;
	if (g_handler_ok || sigaction(REC_WALL_SIGNAL, NULL, &old) != 0)
		return;
	if ((old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != NULL
					: (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN))
		return; /* the program's own: no running samples */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(REC_WALL_SIGNAL, &sa, NULL) == 0)
		__atomic_store_n(&g_handler_ok, 1, __ATOMIC_RELAXED);
}

static void thread_gone(void *p)
{
	rec_wall_thread *w = p;
	pthread_mutex_lock(&reg_lock);
	for (rec_wall_thread **pp = &reg_head; *pp != NULL; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	pthread_mutex_unlock(&reg_lock);
	__atomic_store_n(&w->listed, 0, __ATOMIC_RELAXED);
}

static void on_fork_child(void)
{
	/* the other threads and the sampler thread are gone; the forking
	 * thread attaches again if the child records (forks=on) */
	reg_head = NULL;
	g_thread_on = 0;
	__atomic_store_n(&g_on, 0, __ATOMIC_RELAXED);
	__atomic_add_fetch(&g_gen, 1, __ATOMIC_RELAXED);
	rec_wall_tls_.listed = 0;
	rec_wall_tls_.kind = 0;
	rec_wall_tls_.pending = 0;
	rec_wall_tls_.call_ticks = rec_wall_tls_.ticks_run = 0;
	g_pid = getpid();
	pthread_mutex_init(&reg_lock, NULL);
}

static void on_default(rec_recorder *r, int opened, void *opaque)
{
	(void)opaque;
	if (!opened) {
		__atomic_store_n(&g_on, 0, __ATOMIC_RELAXED);
		stop_thread();
		return;
	}
	if (__atomic_load_n(&g_period_ns, __ATOMIC_RELAXED) == 0 || T_wall == NULL ||
	    !rec_type_enabled(T_wall))
		return;
	if (&rec_wall_preload_marker_ == NULL) {
		if (!__atomic_exchange_n(&g_said, 1, __ATOMIC_RELAXED) && !rec_env_quiet_()) {
			/* one line, in env.c's shape */
			const char *opt = getenv("REC_OPTIONS");
			char line[1024];
			int n = snprintf(line, sizeof line,
					 "rec: REC_OPTIONS=%s: wall= needs the preload library "
					 "(rec-record --wall HZ); recording without wall-clock "
					 "samples\n", opt ? opt : "");
			if (n > 0)
				(void)!write(STDERR_FILENO, line,
					     (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
		}
		return;
	}
	for (int k = 0; k < REC_WALL_NKINDS; k++)
		g_state[k] = rec_recorder_intern(r, state_names[k]);
	g_pid = getpid();
	__atomic_store_n(&rec_wall_period_ns_, __atomic_load_n(&g_period_ns, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&rec_wall_origin_ns_, mono_ns(), __ATOMIC_RELAXED);
	install_handler();
	__atomic_add_fetch(&g_gen, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&g_on, 1, __ATOMIC_RELEASE);
	start_thread();
	if (!g_thread_on)
		__atomic_store_n(&g_on, 0, __ATOMIC_RELAXED);
}

static void init_sampler(void)
{
	reg_key_ok = pthread_key_create(&reg_key, thread_gone) == 0;
	(void)pthread_atfork(NULL, NULL, on_fork_child);
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	(void)rec_default_listen(on_default, NULL);
}

static inline void ensure_init(void)
{
	if (__builtin_expect(!__atomic_load_n(&ready, __ATOMIC_ACQUIRE), 0))
		pthread_once(&once, init_sampler);
}

__attribute__((constructor)) static void wall_ctor(void) { ensure_init(); }

/* The type is declared once wall sampling is asked for (a recording
 * without it has no rec.WallSample type). */
static pthread_once_t declare_once = PTHREAD_ONCE_INIT;
static void declare_type(void)
{
	rec_event_type *t;
	if (rec_type_declare(&wall_def, 0, REC_DECLARE_STACK, &t) == REC_OK)
		__atomic_store_n(&T_wall, t, __ATOMIC_RELEASE);
}

void rec_wall_set_period(uint64_t ns)
{
	ensure_init();
	if (ns != 0)
		pthread_once(&declare_once, declare_type);
	__atomic_store_n(&g_period_ns, ns, __ATOMIC_RELAXED);
}

uint64_t rec_wall_period(void)
{
	return __atomic_load_n(&g_period_ns, __ATOMIC_RELAXED);
}

void rec_wall_program_takes_signal(void)
{
	if (__atomic_exchange_n(&g_signals_off, 1, __ATOMIC_RELAXED) ||
	    !__atomic_load_n(&g_on, __ATOMIC_RELAXED) || rec_env_quiet_())
		return;
	static const char msg[] = "rec: the program sets its own SIGURG handler; wall-clock "
				  "samples of running threads are off for the rest of the "
				  "recording (waits are still sampled)\n";
	(void)!write(STDERR_FILENO, msg, sizeof msg - 1);
}

void rec_wall_attach_thread(void)
{
	ensure_init();
	rec_wall_thread *w = &rec_wall_tls_;
	uint64_t gen = __atomic_load_n(&g_gen, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&g_on, __ATOMIC_ACQUIRE) || !reg_key_ok ||
	    (w->listed && w->gen == gen))
		return;
	if (w->listed)
		thread_gone(w); /* of an earlier recording */
	memset(w, 0, sizeof *w);
	w->tid = rec_builtin_tid();
	w->self = pthread_self();
	w->gen = gen;
	w->attach_tick = rec_wall_tick_now();
	uintptr_t lo, hi; /* for the handler's walk, found by the thread itself */
	if (rec_stack_bounds_here(&lo, &hi)) {
		w->stack_lo = lo;
		__atomic_store_n(&w->stack_hi, hi, __ATOMIC_RELEASE);
	}
	if (pthread_setspecific(reg_key, w) != 0)
		return;
	pthread_mutex_lock(&reg_lock);
	w->next = reg_head;
	reg_head = w;
	pthread_mutex_unlock(&reg_lock);
	__atomic_store_n(&w->listed, 1, __ATOMIC_RELEASE);
}
