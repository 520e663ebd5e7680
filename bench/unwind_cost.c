/* SPDX-License-Identifier: MIT */
/*
 * unwind_cost - the cost per CPU sample of three stack walks from the same
 * SIGPROF ucontext, and how many of them reach the thread's root
 * (bench/unwind.sh; not built by make):
 *   fp         rec_stack_capture_ucontext_fp(): the frame-pointer walk
 *   cfi        rec_stack_capture_ucontext_ex(): librec's table walk over
 *              .eh_frame rows (stack_cfi.c, stack_unwind.c)
 *   libunwind  Debian's libunwind: unw_init_local2(UNW_INIT_SIGNAL_FRAME)
 *              on the ucontext, then unw_step() to the end
 *
 *   unwind_cost [--threads T] [--seconds S] [--period-us P]
 *
 * T threads (default 2) each run a workload in the manner of requestwatch's
 * allocating endpoint, through code without frame pointers: a random
 * recursion depth of this file's functions, then libc's qsort with a
 * callback that mallocs, touches and frees 8 KiB blocks (libc: no frame
 * pointers).  Each thread has a timer on its own CPU-time clock sending it
 * SIGPROF every P us (default 1000); the handler runs the three walks on the
 * ucontext in a rotating order and times each with clock_gettime
 * (CLOCK_MONOTONIC, vDSO; the cost of an empty timed section, measured the
 * same way, is subtracted).  "root": cfi's walk ended because the CFI says
 * the return address is undefined; for fp and libunwind: their last entry
 * is the same address as cfi's last when cfi reached the root.
 * Output, one line per walk:
 *   walk=cfi samples=N median_ns=M p90_ns=Q mean_ns=A frames=F root_pct=R
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record/stack_cfi.h"
#include "record/stack_internal.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define MAXS 400000
#define DEPTH 128
enum { W_FP, W_CFI, W_UNW, NW };
static const char *const wname[NW] = { "fp", "cfi", "libunwind" };

static uint32_t g_ns[NW][MAXS];
static uint64_t g_frames[NW], g_root[NW];
static atomic_uint g_next;
static atomic_int g_stop;
static volatile unsigned long g_sink;
static uint64_t g_empty_ns;

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static size_t walk_unw(void *uc, uintptr_t *pcs)
{
	unw_cursor_t cur;
	if (unw_init_local2(&cur, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0)
		return 0;
	size_t n = 0;
	do {
		unw_word_t ip;
		if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		pcs[n++] = (uintptr_t)ip;
	} while (n < DEPTH && unw_step(&cur) > 0);
	return n;
}

static void on_sigprof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	int saved = errno;
	unsigned i = atomic_fetch_add(&g_next, 1);
	if (i >= MAXS) {
		errno = saved;
		return;
	}
	rec_stack_signal_enter();
	uintptr_t pcs[NW][DEPTH];
	size_t n[NW];
	rec_unwind_end end = REC_UNWIND_END_COUNT;
	for (int k = 0; k < NW; k++) {
		int w = (int)((i + (unsigned)k) % NW); /* rotating order */
		uint64_t t0 = now_ns();
		switch (w) {
		case W_FP: n[w] = rec_stack_capture_ucontext_fp(uc, pcs[w], DEPTH, NULL); break;
		case W_CFI: n[w] = rec_stack_capture_ucontext_ex(uc, pcs[w], DEPTH, NULL, &end); break;
		default: n[w] = walk_unw(uc, pcs[w]); break;
		}
		uint64_t t = now_ns() - t0;
		t = t > g_empty_ns ? t - g_empty_ns : 0;
		g_ns[w][i] = (uint32_t)(t > UINT32_MAX ? UINT32_MAX : t);
	}
	rec_stack_signal_leave();
	for (int w = 0; w < NW; w++)
		__atomic_add_fetch(&g_frames[w], n[w], __ATOMIC_RELAXED);
	if (end == REC_UNWIND_ROOT && n[W_CFI] > 0) {
		uintptr_t last = REC_STACK_PC(pcs[W_CFI][n[W_CFI] - 1]);
		for (int w = 0; w < NW; w++)
			if (n[w] > 0 && REC_STACK_PC(pcs[w][n[w] - 1]) == last)
				__atomic_add_fetch(&g_root[w], 1, __ATOMIC_RELAXED);
	}
	errno = saved;
}

/* ---- the workload (this file is compiled with -fomit-frame-pointer) ------- */

static int cmp_alloc(const void *a, const void *b)
{
	char *p = malloc(8192);
	if (p != NULL) {
		memset(p, *(const int *)a & 0xff, 8192);
		g_sink += (unsigned char)p[4096];
		free(p);
	}
	return *(const int *)a - *(const int *)b;
}

__attribute__((noinline)) static void sort_some(unsigned seed)
{
	int v[64];
	for (int i = 0; i < 64; i++)
		v[i] = (int)((seed * 2654435761u + (unsigned)i * 40503u) & 0xffff);
	qsort(v, 64, sizeof v[0], cmp_alloc);
	g_sink += (unsigned)v[0];
}

__attribute__((noinline)) static void recurse(int depth, unsigned seed)
{
	if (depth <= 0)
		sort_some(seed);
	else
		recurse(depth - 1, seed * 31u + 7u);
	g_sink++;
}

static unsigned g_period_us = 1000;

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	if (rec_stack_thread_register() != REC_OK) {
		fprintf(stderr, "unwind_cost: no stack bounds\n");
		exit(1);
	}
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev.sigev_notify_thread_id = gettid();
	timer_t tm;
	clockid_t clk;
	if (pthread_getcpuclockid(pthread_self(), &clk) != 0 || timer_create(clk, &sev, &tm) != 0) {
		perror("unwind_cost: timer_create");
		exit(1);
	}
	struct itimerspec its;
	memset(&its, 0, sizeof its);
	its.it_interval.tv_nsec = (long)g_period_us * 1000;
	its.it_value = its.it_interval;
	timer_settime(tm, 0, &its, NULL);
	while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
		seed = seed * 1103515245u + 12345u;
		recurse((int)(seed >> 16) % 16, seed);
	}
	memset(&its, 0, sizeof its);
	timer_settime(tm, 0, &its, NULL);
	timer_delete(tm);
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int threads = 2;
	double seconds = 3;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--threads") == 0)
			threads = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--seconds") == 0)
			seconds = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--period-us") == 0)
			g_period_us = (unsigned)atoi(argv[i + 1]);
	}
	if (threads < 1 || threads > 64 || seconds <= 0 || g_period_us < 100) {
		fprintf(stderr, "usage: unwind_cost [--threads T] [--seconds S] [--period-us P]\n");
		return 2;
	}
	/* the cost of the timing itself */
	uint32_t e[1001];
	for (int i = 0; i < 1001; i++) {
		uint64_t t0 = now_ns();
		e[i] = (uint32_t)(now_ns() - t0);
	}
	qsort(e, 1001, sizeof e[0], cmp_u32);
	g_empty_ns = e[500];
	if (rec_cfi_refresh() != REC_OK)
		return 1;
	/* libunwind's first walk caches its tables: not in the timing either
	 * (librec's tables are built by the refresh above) */
	unw_cursor_t cur;
	unw_context_t ctx;
	unw_getcontext(&ctx);
	unw_init_local(&cur, &ctx);
	while (unw_step(&cur) > 0)
		;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigprof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	pthread_t th[64];
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	usleep((useconds_t)(seconds * 1e6));
	atomic_store(&g_stop, 1);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	unsigned n = atomic_load(&g_next);
	if (n > MAXS)
		n = MAXS;
	if (n == 0) {
		fprintf(stderr, "unwind_cost: no samples\n");
		return 1;
	}
	for (int w = 0; w < NW; w++) {
		uint64_t sum = 0;
		for (unsigned i = 0; i < n; i++)
			sum += g_ns[w][i];
		qsort(g_ns[w], n, sizeof g_ns[w][0], cmp_u32);
		printf("walk=%s samples=%u median_ns=%u p90_ns=%u mean_ns=%.0f frames=%.1f root_pct=%.2f\n",
		       wname[w], n, g_ns[w][n / 2], g_ns[w][n * 9 / 10], (double)sum / n,
		       (double)g_frames[w] / n, 100.0 * (double)g_root[w] / n);
	}
	return 0;
}
