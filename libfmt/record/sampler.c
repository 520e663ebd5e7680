/* SPDX-License-Identifier: MIT */
/*
 * sampler.c - rec.CPUSample: a per-thread CPU-time sampling profiler.
 *
 * Every attached thread owns a POSIX timer on its own CPU-time clock
 * (CLOCK_THREAD_CPUTIME_ID) that sends SIGPROF to that very thread
 * (SIGEV_THREAD_ID) every period of CPU time it consumes (default 10 ms), so
 * an idle thread costs nothing and samples measure CPU, not wall time.  The
 * SIGPROF handler captures the interrupted stack from the ucontext
 * (rec_stack_capture_ucontext(): the CFI walk of stack_unwind.c over tables
 * built and refreshed by the background thread's arming round, frame
 * pointers where a module has none; no malloc, no lock) and
 * emits through rec_emit_begin_signal_pcs(), which interns the stack without
 * locks and drops (and counts) a sample that interrupted an emit of the same
 * thread.
 *
 * Threads are attached by the core's "seen" thread hook (builtin_internal.h:
 * when the recorder registers them, when they capture a stack), when
 * they open the default recorder, when they call
 * rec_cpu_sampler_attach_thread(), and when they use a rec_ lock/sleep/alloc
 * wrapper.  Attaching makes no system call: the thread is put on a list
 * with its CPU-time clock, and the recorder's background thread creates and
 * arms the timers of the threads that were on the list at its previous
 * round (every ARM_ROUND_MS while threads wait for it, every ARM_IDLE_MS
 * when none does), so a short-lived thread (a thread per request)
 * never pays for timer_create/settime/delete; the CPU a thread uses
 * before its timer is armed is not sampled (a thread that exits within
 * ARM_ROUND_MS of wall time is not).  An explicit
 * rec_cpu_sampler_attach_thread() arms at once; the preload library's
 * threads are attached so from their start.  A timer's first expiry comes
 * at a random point of its first period (period_spec), and the expiries
 * the kernel had not yet signalled when the thread ends (it checks CPU
 * timers at its tick) are written then as one sample (tail_periods()),
 * so an armed thread is sampled CPU time / period times on average
 * however little it runs.  The timers are disarmed
 * when the default recorder starts closing, re-armed when one opens again,
 * and deleted when their thread exits.  If the program has its own SIGPROF
 * handler the sampler stays off.
 */
#include "rec/builtins.h"
#include "record/builtin_internal.h"
#include "record/recorder_internal.h"
#include "record/stack_internal.h"
#include "record/stack_cfi.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

static const rec_field cpu_fields[] = {
	{ "period", "Period", "thread CPU time between two samples (the weight of one sample)",
	  REC_TYPE_U64, REC_UNIT_NANOS },
	{ "overruns", "Overruns", "timer expirations merged into this sample (the sample stands "
	  "for (1 + overruns) periods)", REC_TYPE_U32, REC_UNIT_COUNT },
};
static const rec_type cpu_def = {
	REC_TYPE_ID_CPU_SAMPLE, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "rec.CPUSample",
	"CPU Sample", "The stack of a thread that was running on a CPU", "rec/Profiling",
	2, cpu_fields
};

#define MAX_DEPTH 128

static rec_event_type *T_cpu;
static int ready;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static uint64_t g_period_ns = UINT64_C(10) * 1000 * 1000;
static int g_on;          /* sampling active (a default recorder is open) */
static int g_handler_ok;  /* our SIGPROF handler is installed */
static uint64_t g_taken, g_dropped;
static char g_marker;     /* sival_ptr of our timers */

/* ---- attached threads ---------------------------------------------------- */

typedef struct sampled_thread {
	struct sampled_thread *next;
	timer_t timer;
	uint64_t tid;
	clockid_t clock;  /* the thread's CPU-time clock */
	pthread_t self;
	int armed;        /* timer created (reg_lock) */
	int rounds;       /* arming rounds that saw it unarmed (reg_lock) */
	int held;         /* its sample waiting in g_held: slot + 1 (0: none) */
	/* The tail (see tail_periods()): the timer's period (0: disarmed),
	 * the thread's CPU clock at its first expiry, the periods its signals
	 * had brought at that arming (all set under reg_lock by arm_timer()),
	 * and the periods its signals brought so far (the thread's handler). */
	uint64_t period_ns, first_cpu, arm_periods;
	uint64_t periods;
	/* Its CPU clock at the last arming, and the CPU before the timer that
	 * tail_periods() counts too (a thread the preload library started,
	 * armed before its start routine: its start), else 0. */
	uint64_t arm_cpu, pre_cpu;
	int timed;        /* its timer was set with a period once */
} sampled_thread;

/* A sample whose signal came while its thread was inside an emit of its
 * own (a built-in's or the program's event half written: the thread's
 * buffer busy) cannot be written there: a second record would be dropped
 * as nested, and the CPU time spent inside emits with it.  Its time and
 * stack wait in a slot instead (claimed by the handler, no allocation),
 * and the thread's next sample writes it first, with its own timestamp
 * (the reader orders it); more signals before that sample is written add
 * their periods to it (the same emit still running; rarely a later emit
 * of the thread, whose period then counts on the first one's stack).  A
 * thread that ends first writes it from thread_gone().
 * Only when every slot is taken is a sample dropped as nested (counted).
 * The slots live outside TLS: a thread's static TLS stays small (librec
 * may be dlopen()ed), and most threads never hold one. */
#define HELD_SLOTS 64
typedef struct held_sample {
	int taken;          /* claimed (atomic) */
	int truncated;
	size_t n;
	uint64_t ticks, overruns;
	uintptr_t pcs[MAX_DEPTH];
} held_sample;
static held_sample g_held[HELD_SLOTS];

/* Period of the background thread's arming round while a thread waits to
 * be armed: it is armed at the first round after the one that first saw it
 * (10-20 ms after attaching).  When none waits, the round runs every
 * ARM_IDLE_MS (the default flush interval's period: the background thread
 * runs it in the flush's wake-up, bg.c), only to refresh the unwind tables
 * for modules loaded since, so a service whose threads all live long (a
 * pool, an event loop) does not wake the background thread for nothing; a
 * thread that attaches after such a quiet spell brings the round forward
 * itself (attach_thread: g_arm_idle, one wake-up of the background thread)
 * and is armed 10-20 ms later. */
#define ARM_ROUND_MS 10u
#define ARM_IDLE_MS 1000u

/* A leaf of the lock order (recorder_internal.h, LOCK ORDER). */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static sampled_thread *reg_head;
/* The arming round runs every ARM_IDLE_MS (no thread waited at its last
 * run): the next thread to attach brings it forward (reg_lock). */
static int g_arm_idle;
static pthread_key_t reg_key;
static int reg_key_ok;

static __thread sampled_thread *tls_self; /* its registry entry: &tls_node */
/* In TLS, not malloc'd: a thread that never calls malloc itself (a request
 * thread) would otherwise pay for glibc's per-thread cache set-up and
 * tear-down.  Valid until thread_gone() unlinks it (key destructors run
 * before the thread's TLS goes). */
static __thread sampled_thread tls_node;

/* A uniform draw (splitmix64 over a counter seeded at start-up). */
static uint64_t g_phase_state;

static uint64_t phase_draw(void)
{
	uint64_t z = __atomic_add_fetch(&g_phase_state, 0x9E3779B97F4A7C15ull, __ATOMIC_RELAXED);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Every ns of the thread's CPU time, the first expiry at a random point
 * of the first period (1..ns): a timer that waited a whole period first
 * never sampled a thread that used less than one period after it was
 * armed (a connection thread of a service at 3 ms of CPU a second, a
 * thread per request) and left out the last partial period of every
 * thread, so the profile missed such threads' CPU.  With a uniform phase
 * a thread is sampled (CPU time / period) times on average, however
 * little it runs. */
static struct itimerspec period_spec(uint64_t ns)
{
	struct itimerspec its;
	memset(&its, 0, sizeof(its));
	its.it_interval.tv_sec = (time_t)(ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(ns % 1000000000u);
	if (ns) {
		const uint64_t first = 1 + phase_draw() % ns;
		its.it_value.tv_sec = (time_t)(first / 1000000000u);
		its.it_value.tv_nsec = (long)(first % 1000000000u);
	}
	return its;
}

static void emit_held(sampled_thread *st);
static void emit_tail(uint64_t periods);

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	if (clock_gettime(c, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The calling thread's start routine, when the preload library started it
 * (rec_cpu_sampler_thread_root_()): the one frame of its tail sample. */
static __thread uintptr_t tls_root;

void rec_cpu_sampler_thread_root_(uintptr_t pc)
{
	tls_root = pc;
}

/* The expiries of the calling thread's timer that its CPU clock has passed
 * and no signal brought.  The kernel checks CPU-time timers at the
 * scheduler's tick (every 4 ms of wall time at CONFIG_HZ=250), so an
 * expiry that falls after the last tick the thread ran through waits for
 * the next one, and the thread's end comes first: without these a thread
 * lost the last 0-4 ms of its CPU from the profile (measured: 20 threads
 * of 5 ms each showed 61 of their 100 ms at --cpu 997), and a thread that
 * runs for less than a tick (a thread per request) was hardly ever
 * sampled.  Counted from the schedule arm_timer() noted (the CPU clock at
 * the first expiry, the period) against the periods the thread's signals
 * brought since. */
static uint64_t tail_periods(const sampled_thread *st)
{
	if (st->period_ns == 0)
		return 0;
	const uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	if (cpu < st->first_cpu)
		return 0;
	uint64_t due = 1 + (cpu - st->first_cpu) / st->period_ns;
	const uint64_t got = __atomic_load_n(&st->periods, __ATOMIC_RELAXED) - st->arm_periods;
	due = due > got ? due - got : 0;
	/* The CPU before the timer: its periods, the last partial one counted
	 * with the probability of its fraction (a uniform phase, as the
	 * timer's own first period has). */
	if (st->pre_cpu != 0)
		due += st->pre_cpu / st->period_ns +
		       (phase_draw() % st->period_ns < st->pre_cpu % st->period_ns);
	return due;
}

/* The thread's end: from the recorder's exit hook (thread.c runs it before
 * the thread's rec.ThreadEnd, while its buffer still takes events), or
 * from reg_key's destructor when that did not run (whichever comes first;
 * the other finds tls_self NULL). */
static void thread_gone(void *p)
{
	sampled_thread *st = p;
	if (st == NULL || tls_self != st)
		return;
	/* SIGPROF stays blocked to the thread's end: a signal of its timer
	 * still pending would otherwise come after the tail below counted its
	 * period, and be counted twice. */
	sigset_t prof;
	sigemptyset(&prof);
	sigaddset(&prof, SIGPROF);
	pthread_sigmask(SIG_BLOCK, &prof, NULL);
	pthread_mutex_lock(&reg_lock);
	for (sampled_thread **pp = &reg_head; *pp != NULL; pp = &(*pp)->next)
		if (*pp == st) {
			*pp = st->next;
			break;
		}
	int armed = st->armed; /* stable: unlinked, no round sees it now */
	pthread_mutex_unlock(&reg_lock);
	const uint64_t tail = armed ? tail_periods(st) : 0;
	if (armed)
		timer_delete(st->timer);
	tls_self = NULL; /* the SIGPROF handler reads it */
	if (st->held)
		emit_held(st);
	if (tail != 0)
		emit_tail(tail);
}

static void thread_seen_hook(void);

static void thread_exit_hook(void)
{
	thread_gone(tls_self);
}

static void on_fork_child(void)
{
	/* POSIX timers are not inherited; forget the parent's threads (their
	 * entries live in their TLS: nothing to free). */
	reg_head = NULL;
	tls_self = NULL;
	tls_node.held = 0; /* the parent's waiting samples are not the child's */
	for (int i = 0; i < HELD_SLOTS; i++)
		g_held[i].taken = 0;
	__atomic_store_n(&g_on, 0, __ATOMIC_RELAXED);
	rec_thread_seen_again();
	pthread_mutex_init(&reg_lock, NULL);
}

/* ---- the signal handler -------------------------------------------------- */

/* One rec.CPUSample: true if written. */
static bool emit_sample(uint64_t ticks, const uintptr_t *pcs, size_t n, int truncated,
			uint64_t overruns)
{
	rec_emit e;
	if (!rec_emit_begin_signal_pcs(&e, T_cpu, ticks, 0, pcs, n, truncated)) {
		__atomic_add_fetch(&g_dropped, 1, __ATOMIC_RELAXED);
		return false;
	}
	rec_emit_u64(&e, __atomic_load_n(&g_period_ns, __ATOMIC_RELAXED));
	rec_emit_u64(&e, overruns);
	rec_emit_commit(&e);
	__atomic_add_fetch(&g_taken, 1, __ATOMIC_RELAXED);
	return true;
}

/* The thread's held sample written and its slot freed (the thread's own
 * signal handler, or thread_gone() with SIGPROF blocked). */
static void emit_held(sampled_thread *st)
{
	held_sample *h = &g_held[st->held - 1];
	st->held = 0;
	(void)emit_sample(h->ticks, h->pcs, h->n, h->truncated, h->overruns);
	__atomic_store_n(&h->taken, 0, __ATOMIC_RELEASE);
}

/* The thread's tail (tail_periods()), at its end: one sample of that many
 * periods whose stack is the thread's start routine alone when the preload
 * library started the thread (where inside the routine the CPU went is not
 * known: views show it as the routine's self time), else no stack (Stack
 * 0).  The timestamp is the thread's end; the tail's CPU came before it:
 * after the last tick that found the thread running (for a thread that runs
 * in short bursts, possibly long before), and at its start. */
static void emit_tail(uint64_t periods)
{
	if (!__atomic_load_n(&g_on, __ATOMIC_RELAXED) || T_cpu == NULL || !rec_type_enabled(T_cpu))
		return;
	const uintptr_t root[1] = { tls_root };
	(void)emit_sample(rec_type_ticks(T_cpu), root, tls_root != 0, 0, periods - 1);
}

/* A sample of a thread inside its own emit: held (see held_sample), or
 * added to the one it holds already; false if no slot was free. */
static bool hold_sample(sampled_thread *st, uint64_t ticks, const uintptr_t *pcs, size_t n,
			int truncated, uint64_t overruns)
{
	if (st->held) { /* not written yet: the periods add up on its stack */
		g_held[st->held - 1].overruns += 1 + overruns;
		return true;
	}
	for (int i = 0; i < HELD_SLOTS; i++) {
		int free_ = 0;
		if (__atomic_load_n(&g_held[i].taken, __ATOMIC_RELAXED) ||
		    !__atomic_compare_exchange_n(&g_held[i].taken, &free_, 1, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		held_sample *h = &g_held[i];
		h->ticks = ticks;
		h->n = n;
		h->truncated = truncated;
		h->overruns = overruns;
		memcpy(h->pcs, pcs, n * sizeof pcs[0]);
		st->held = i + 1;
		return true;
	}
	return false;
}

static void on_sigprof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	if (si == NULL || si->si_code != SI_TIMER || si->si_value.sival_ptr != &g_marker)
		return; /* not one of our timers */
	sampled_thread *self = tls_self;
	if (self != NULL) /* the periods it brings, for tail_periods() */
		__atomic_store_n(&self->periods,
				 self->periods + 1 + (si->si_overrun > 0 ? (uint64_t)si->si_overrun : 0),
				 __ATOMIC_RELAXED);
	if (!__atomic_load_n(&g_on, __ATOMIC_RELAXED) || T_cpu == NULL || !rec_type_enabled(T_cpu))
		return;
	int saved_errno = errno;
	rec_stack_signal_enter();
	/* The walk's stack bounds: found at the thread's first sample (the
	 * mapping that holds its stack pointer in /proc/self/maps, read once
	 * per thread: async-signal-safe) unless the thread has them already
	 * (the preload library's threads, a stack captured before).  Not at
	 * attach: pthread_getattr_np there cost every thread a system call
	 * and its first malloc (the thread cache), and most threads of a
	 * thread-per-request service never live to be sampled.  The mapping
	 * can be wider than pthread_getattr_np's stack (merged with a
	 * neighbour of the same protection: still mapped memory), and a first
	 * sample on an alternate signal stack would keep that one's. */
	(void)rec_stack_bounds_signal(uc);
	uintptr_t pcs[MAX_DEPTH];
	int truncated = 0;
	size_t n = rec_stack_capture_ucontext(uc, pcs, MAX_DEPTH, &truncated);
	uint64_t now = rec_type_ticks(T_cpu);
	uint64_t over = si->si_overrun > 0 ? (uint64_t)si->si_overrun : 0;
	sampled_thread *st = tls_self;
	struct rec_tbuf_ *b = REC_TLS_TBUF_;
	if (st != NULL && b != NULL && __atomic_load_n(&b->busy, __ATOMIC_RELAXED)) {
		/* inside an emit of the thread's own: hold the sample */
		if (!hold_sample(st, now, pcs, n, truncated, over)) {
			rec_emit_drop_nested_(b, T_cpu);
			__atomic_add_fetch(&g_dropped, 1, __ATOMIC_RELAXED);
		}
	} else {
		if (st != NULL && st->held)
			emit_held(st);
		(void)emit_sample(now, pcs, n, truncated, over);
	}
	rec_stack_signal_leave();
	errno = saved_errno;
}

/* ---- start / stop ----------------------------------------------------------- */

static void install_handler(void)
{
	struct sigaction old;
	if (sigaction(SIGPROF, NULL, &old) != 0)
		return;
	if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == on_sigprof) {
		g_handler_ok = 1;
		return;
	}
	if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)
		return; /* the program profiles itself */
	if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction != NULL)
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigprof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) == 0)
		g_handler_ok = 1;
}

/* REC_CPU_SAMPLE_PERIOD: rec_parse_duration()'s grammar (a bare number is
 * seconds); UINT64_MAX if invalid. */
static uint64_t parse_duration(const char *s)
{
	int64_t ns;
	return rec_parse_duration(s, strlen(s), &ns) == REC_OK ? (uint64_t)ns : UINT64_MAX;
}

static void on_default(rec_recorder *r, int opened, void *opaque);

static void init_sampler(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	__atomic_store_n(&g_phase_state,
			 (uint64_t)now.tv_nsec ^ ((uint64_t)now.tv_sec << 32) ^ (uint64_t)getpid(),
			 __ATOMIC_RELAXED);
	const char *env = getenv("REC_CPU_SAMPLE_PERIOD");
	if (env != NULL && *env != '\0') {
		uint64_t ns = parse_duration(env);
		if (ns != UINT64_MAX)
			__atomic_store_n(&g_period_ns, ns, __ATOMIC_RELAXED);
	}
	reg_key_ok = pthread_key_create(&reg_key, thread_gone) == 0;
	(void)rec_thread_hooks_add(thread_seen_hook, thread_exit_hook);
	(void)pthread_atfork(NULL, NULL, on_fork_child);
	if (rec_type_declare(&cpu_def, 0, 0, &T_cpu) != REC_OK)
		T_cpu = NULL;
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	/* Last: may call on_default() right away. */
	(void)rec_default_listen(on_default, NULL);
}

static inline void ensure_init(void)
{
	if (__builtin_expect(!__atomic_load_n(&ready, __ATOMIC_ACQUIRE), 0))
		pthread_once(&once, init_sampler);
}

/* Library constructor: the sampler must know when REC_OUTPUT's recorder
 * opens even if the program never calls into this file. */
__attribute__((constructor)) static void sampler_ctor(void) { ensure_init(); }

/* Arm st's timer: every ns of its thread's CPU time, a random phase (0:
 * disarmed); the schedule noted for tail_periods().  Caller holds reg_lock,
 * or is st's thread before linking it. */
static int arm_timer(sampled_thread *st, uint64_t ns)
{
	const struct itimerspec its = period_spec(ns);
	const uint64_t cpu = ns ? clock_ns(st->clock) : 0;
	const int rc = timer_settime(st->timer, 0, &its, NULL);
	st->period_ns = rc == 0 && cpu != 0 ? ns : 0;
	st->timed |= st->period_ns != 0;
	st->arm_cpu = cpu;
	st->pre_cpu = 0;
	st->first_cpu = cpu + (uint64_t)its.it_value.tv_sec * 1000000000u +
			(uint64_t)its.it_value.tv_nsec;
	st->arm_periods = __atomic_load_n(&st->periods, __ATOMIC_RELAXED);
	return rc;
}

static void arm_all(uint64_t ns)
{
	pthread_mutex_lock(&reg_lock);
	for (sampled_thread *st = reg_head; st != NULL; st = st->next)
		if (st->armed)
			(void)arm_timer(st, ns); /* a phase each */
	pthread_mutex_unlock(&reg_lock);
}

/* Create st's timer (on its thread's CPU clock, SIGPROF to that thread) and
 * arm it with ns (0: created disarmed).  Caller holds reg_lock or is st's
 * thread before linking it: the thread has not run thread_gone(), so its
 * tid still names it. */
static int create_timer(sampled_thread *st, uint64_t ns)
{
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev.sigev_value.sival_ptr = &g_marker;
	sev.sigev_notify_thread_id = (pid_t)st->tid;
	if (timer_create(st->clock, &sev, &st->timer) != 0)
		return -1;
	st->armed = 1;
	return ns ? arm_timer(st, ns) : 0;
}

/* The background thread's round: arm the threads attached before the
 * previous round and still alive (thread_gone() unlinks under reg_lock). */
static void arm_round(rec_recorder *r, void *opaque)
{
	int waiting = 0; /* threads left unarmed by this round */
	/* The unwind tables the handler walks (stack_cfi.h): built here, in
	 * the background thread (~10 ms for a program and a few libraries: not
	 * in the program's start-up), then rebuilt only for modules loaded or
	 * unloaded since.  Samples before the first round walk frame pointers. */
	(void)rec_cfi_refresh();
	pthread_mutex_lock(&reg_lock);
	uint64_t ns = __atomic_load_n(&g_period_ns, __ATOMIC_RELAXED);
	if (__atomic_load_n(&g_on, __ATOMIC_RELAXED) && ns != 0)
		for (sampled_thread *st = reg_head; st != NULL; st = st->next) {
			if (!st->armed && st->rounds++ >= 1) {
				(void)create_timer(st, ns);
			}
			waiting |= !st->armed;
		}
	pthread_mutex_unlock(&reg_lock);
	(void)rec_recorder_set_periodic(r, arm_round, opaque, waiting ? ARM_ROUND_MS : ARM_IDLE_MS);
	if (waiting)
		return;
	/* Idle from now on, unless a thread attached since the scan: it did
	 * not see g_arm_idle, so it is looked at here (after the period set
	 * above, which a later attach's brings forward again). */
	pthread_mutex_lock(&reg_lock);
	for (sampled_thread *st = reg_head; st != NULL; st = st->next)
		waiting |= !st->armed;
	g_arm_idle = !waiting;
	pthread_mutex_unlock(&reg_lock);
	if (waiting)
		(void)rec_recorder_set_periodic(r, arm_round, opaque, ARM_ROUND_MS);
}

static void on_default(rec_recorder *r, int opened, void *opaque)
{
	(void)r;
	(void)opaque;
	if (!opened) {
		__atomic_store_n(&g_on, 0, __ATOMIC_RELAXED);
		arm_all(0); /* disarm */
		return;
	}
	uint64_t ns = __atomic_load_n(&g_period_ns, __ATOMIC_RELAXED);
	if (ns == 0 || T_cpu == NULL || !rec_type_enabled(T_cpu))
		return;
	install_handler();
	if (!g_handler_ok)
		return;
	rec_thread_seen_again(); /* every thread attaches again */
	__atomic_store_n(&g_on, 1, __ATOMIC_RELAXED);
	arm_all(ns);
	(void)rec_recorder_add_periodic(r, arm_round, NULL, ARM_ROUND_MS);
	(void)rec_cpu_sampler_attach_thread();
}

/* ---- attaching threads ---------------------------------------------------- */

static __thread int tls_attaching; /* attach -> recorder registration -> attach */

static rec_status attach_thread(int now);

/* attach_thread(now), unless called back from our own registration. */
static rec_status attach_guarded(int now)
{
	if (tls_attaching)
		return REC_OK;
	tls_attaching = 1;
	rec_status st = attach_thread(now);
	tls_attaching = 0;
	return st;
}

rec_status rec_cpu_sampler_attach_thread(void)
{
	return attach_guarded(1);
}

/* Attach the calling thread: now = arm its timer here, else leave it to the
 * background thread's next rounds (no system call). */
static rec_status attach_thread(int now)
{
	ensure_init();
	if (!__atomic_load_n(&g_on, __ATOMIC_RELAXED))
		return REC_ERR_STATE;
	rec_recorder *r = rec_recorder_default();
	if (r == NULL)
		return REC_ERR_STATE;
	/* The handler needs the thread registered with the recorder (no
	 * registration from a signal handler). */
	rec_status st = rec_recorder_attach_thread(r);
	if (st != REC_OK)
		return st;
	if (now)
		(void)rec_stack_thread_register();
	uint64_t ns = __atomic_load_n(&g_period_ns, __ATOMIC_RELAXED);
	if (tls_self == NULL) {
		if (!reg_key_ok)
			return REC_ERR_STATE;
		sampled_thread *t = &tls_node;
		memset(t, 0, sizeof *t);
		t->tid = rec_builtin_tid();
		t->self = pthread_self();
		if (pthread_getcpuclockid(pthread_self(), &t->clock) != 0)
			t->clock = CLOCK_THREAD_CPUTIME_ID;
		if (now && create_timer(t, 0) != 0)
			return REC_ERR_IO;
		if (pthread_setspecific(reg_key, t) != 0) {
			if (t->armed)
				timer_delete(t->timer);
			return REC_ERR_NOMEM;
		}
		pthread_mutex_lock(&reg_lock);
		t->next = reg_head;
		reg_head = t;
		const int kick = !now && g_arm_idle;
		g_arm_idle = 0;
		pthread_mutex_unlock(&reg_lock);
		tls_self = t;
		if (kick) {
			/* The arming round was idle: due in ARM_ROUND_MS (not
			 * reg_lock: r->lock comes first in the lock order), and
			 * the background thread told so (it sleeps until the
			 * deadlines it knew). */
			(void)rec_recorder_set_periodic(r, arm_round, NULL, ARM_ROUND_MS);
			rec_wake_bg(r);
		}
	}
	if (!now && !tls_self->armed)
		return REC_OK; /* the background thread arms it */
	pthread_mutex_lock(&reg_lock); /* against arm_round creating it meanwhile */
	const int fresh = !tls_self->timed;
	int rc = tls_self->armed ? 0 : create_timer(tls_self, 0);
	if (rc == 0)
		rc = arm_timer(tls_self, __atomic_load_n(&g_on, __ATOMIC_RELAXED) ? ns : 0);
	/* A thread the preload library started, armed before its start
	 * routine while the recording is on: the CPU of its start so far (the
	 * kernel's and libc's thread set-up, the recorder's attach: some
	 * microseconds, much of a short thread's CPU) is counted in its tail.
	 * Not for a thread armed later: its CPU clock counts from its start,
	 * which may be long before the recording's. */
	if (rc == 0 && fresh && tls_root != 0)
		tls_self->pre_cpu = tls_self->arm_cpu;
	pthread_mutex_unlock(&reg_lock);
	return rc == 0 ? REC_OK : REC_ERR_IO;
}

/* The core's "seen" thread hook: a thread used rec (once per generation). */
static void thread_seen_hook(void)
{
	if (__atomic_load_n(&g_on, __ATOMIC_RELAXED))
		(void)attach_guarded(0);
}

void rec_cpu_sampler_set_period(uint64_t ns)
{
	ensure_init();
	__atomic_store_n(&g_period_ns, ns, __ATOMIC_RELAXED);
	if (__atomic_load_n(&g_on, __ATOMIC_RELAXED))
		arm_all(ns);
}

uint64_t rec_cpu_sampler_period(void)
{
	return __atomic_load_n(&g_period_ns, __ATOMIC_RELAXED);
}

void rec_cpu_sampler_counts(uint64_t *taken, uint64_t *dropped)
{
	if (taken)
		*taken = __atomic_load_n(&g_taken, __ATOMIC_RELAXED);
	if (dropped)
		*dropped = __atomic_load_n(&g_dropped, __ATOMIC_RELAXED);
}
