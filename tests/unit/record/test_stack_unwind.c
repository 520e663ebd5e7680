/* SPDX-License-Identifier: MIT */
/*
 * test_stack_unwind.c - the CFI walk (stack_cfi.c, stack_unwind.c) for
 * real.  This file is compiled with -fomit-frame-pointer (Makefile), so no
 * function of its own keeps a frame pointer: a thread spinning in a call
 * chain of them, through libc's qsort (its callback) and through a signal
 * handler (the kernel's signal frame), is interrupted by a signal and its
 * captured stack must be exactly the expected callers, down to the thread's
 * root (the walk ends because the CFI says so); a capture in the thread
 * itself (rec_stack_capture_ex) from qsort's callback likewise.  Then
 * hostile input: garbage
 * stacks end the walk without a fault.  (The tables themselves, bogus ones
 * and libc's: test_stack_cfi.c.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "record/stack_cfi.h"
#include "record/stack_internal.h"

#define NOINLINE __attribute__((noinline))

/* Exported so the symbolizer names them (the test binary is -rdynamic). */
void uw_spin(void);
int uw_cmp(const void *a, const void *b);
void uw_sorter(void);
void uw_mid(void);
void *uw_thread(void *arg);
void uw_sig_spin(void);
void uw_on_sigusr2(int sig);
void uw_sig_mid(void);
void *uw_sig_thread(void *arg);
int uw_here_cmp(const void *a, const void *b);
void uw_here_sorter(void);
void uw_here_mid(void);
void *uw_here_thread(void *arg);

static atomic_int g_spinning, g_stop, g_handled;
static volatile unsigned long g_sink;
static uintptr_t g_pcs[128];
static size_t g_n;
static rec_unwind_end g_end;
static uintptr_t g_fp_pcs[128];
static size_t g_fp_n;

NOINLINE void uw_spin(void)
{
	atomic_store(&g_spinning, 1);
	while (!atomic_load_explicit(&g_stop, memory_order_relaxed))
		g_sink++;
}

NOINLINE int uw_cmp(const void *a, const void *b)
{
	if (!atomic_load(&g_spinning))
		uw_spin();
	g_sink++;
	return *(const int *)a - *(const int *)b;
}

NOINLINE void uw_sorter(void)
{
	int v[4] = { 4, 3, 2, 1 };
	qsort(v, 4, sizeof v[0], uw_cmp);
	g_sink += (unsigned long)v[0];
}

NOINLINE void uw_mid(void)
{
	uw_sorter();
	g_sink++;
}

NOINLINE void *uw_thread(void *arg)
{
	(void)arg;
	assert_int_equal(rec_stack_thread_register(), REC_OK);
	uw_mid();
	g_sink++;
	return NULL;
}

NOINLINE void uw_sig_spin(void)
{
	uw_spin();
	g_sink++;
}

NOINLINE void uw_on_sigusr2(int sig)
{
	(void)sig;
	uw_sig_spin();
	g_sink++;
}

NOINLINE void uw_sig_mid(void)
{
	pthread_kill(pthread_self(), SIGUSR2); /* runs uw_on_sigusr2 right here */
	g_sink++;
}

NOINLINE void *uw_sig_thread(void *arg)
{
	(void)arg;
	assert_int_equal(rec_stack_thread_register(), REC_OK);
	uw_sig_mid();
	g_sink++;
	return NULL;
}

/* A capture in the thread itself (what a lock wait, a sleep or an
 * allocation sample does), inside qsort's callback: the first call only. */
static int g_here_truncated;

NOINLINE int uw_here_cmp(const void *a, const void *b)
{
	if (g_n == 0)
		g_n = rec_stack_capture_ex(g_pcs, 128, 0, &g_here_truncated);
	g_sink++;
	return *(const int *)a - *(const int *)b;
}

NOINLINE void uw_here_sorter(void)
{
	int v[4] = { 4, 3, 2, 1 };
	qsort(v, 4, sizeof v[0], uw_here_cmp);
	g_sink += (unsigned long)v[0];
}

NOINLINE void uw_here_mid(void)
{
	uw_here_sorter();
	g_sink++;
}

NOINLINE void *uw_here_thread(void *arg)
{
	(void)arg;
	assert_int_equal(rec_stack_thread_register(), REC_OK);
	uw_here_mid();
	g_sink++;
	return NULL;
}

static void on_sigusr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	rec_stack_signal_enter();
	g_n = rec_stack_capture_ucontext_ex(uc, g_pcs, 128, NULL, &g_end);
	g_fp_n = rec_stack_capture_ucontext_fp(uc, g_fp_pcs, 128, NULL);
	rec_stack_signal_leave();
	atomic_store(&g_handled, 1);
}

static void handlers(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigusr1;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = uw_on_sigusr2;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR2, &sa, NULL), 0);
}

/* Start fn on a thread, wait until it spins, capture its stack from a
 * SIGUSR1 handler, stop it. */
static void capture_thread(void *(*fn)(void *))
{
	handlers();
	assert_int_equal(rec_cfi_refresh(), REC_OK);
	atomic_store(&g_spinning, 0);
	atomic_store(&g_stop, 0);
	atomic_store(&g_handled, 0);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, fn, NULL), 0);
	while (!atomic_load(&g_spinning))
		usleep(1000);
	assert_int_equal(pthread_kill(th, SIGUSR1), 0);
	while (!atomic_load(&g_handled))
		usleep(1000);
	atomic_store(&g_stop, 1);
	assert_int_equal(pthread_join(th, NULL), 0);
}

/* The names of the captured frames; the module of each. */
static void names(const char **fn, const char **mod, size_t n, rec_symbolizer *sym)
{
	for (size_t i = 0; i < n; i++) {
		rec_symbol s;
		assert_int_equal(rec_symbolizer_lookup(sym, g_pcs[i], &s), REC_OK);
		fn[i] = s.function;
		mod[i] = s.module_path;
		printf("  #%zu %s (%s)\n", i, s.function, s.module_path);
	}
}

/* libc, or the sanitizers' runtime in a SAN=1 build (its qsort interceptor
 * calls the callback itself) */
static int is_libc(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	return strncmp(b, "libc.so", 7) == 0 || strncmp(b, "libasan.so", 10) == 0 ||
	       strncmp(b, "libubsan.so", 11) == 0;
}

static int in_self(const char *path, const char *self)
{
	return strcmp(path, self) == 0;
}

static char g_self[4096];

static void self_path(void)
{
	ssize_t k = readlink("/proc/self/exe", g_self, sizeof g_self - 1);
	assert_true(k > 0);
	g_self[k] = '\0';
}

/* The frames of this program, in order, must be exactly want[]; frames of
 * libc may lie between where allowed (libc_between[i]: between want[i] and
 * want[i+1]), and every frame after the last is libc's (start_thread,
 * clone3); no other module appears. */
static void expect_chain(const char *const *want, size_t nwant, const int *libc_between)
{
	rec_symbolizer *sym = NULL;
	assert_int_equal(rec_symbolizer_open(&sym), REC_OK);
	const char *fn[128], *mod[128];
	names(fn, mod, g_n, sym);
	size_t k = 0;
	for (size_t i = 0; i < g_n; i++) {
		if (in_self(mod[i], g_self)) {
			assert_true(k < nwant);
			assert_string_equal(fn[i], want[k]);
			k++;
		} else {
			assert_true(is_libc(mod[i]));
			assert_true(k > 0);
			assert_true(k == nwant || libc_between[k - 1]);
		}
	}
	assert_int_equal(k, nwant);
	assert_true(!in_self(mod[g_n - 1], g_self)); /* under uw_thread: libc's */
	rec_symbolizer_close(sym);
}

/* Through libc's qsort calling back into code without frame pointers. */
static void t_chain_through_qsort(void **state)
{
	(void)state;
	self_path();
	uint64_t before[REC_UNWIND_END_COUNT], after[REC_UNWIND_END_COUNT];
	rec_unwind_counts(before);
	capture_thread(uw_thread);
	assert_int_equal(g_end, REC_UNWIND_ROOT);
	rec_unwind_counts(after); /* the walk was counted by how it ended */
	assert_int_equal(after[REC_UNWIND_ROOT], before[REC_UNWIND_ROOT] + 1);
	assert_true(g_pcs[0] & REC_STACK_PC_EXACT);
	const char *want[] = { "uw_spin", "uw_cmp", "uw_sorter", "uw_mid", "uw_thread" };
	const int between[] = { 0, 1, 0, 0 }; /* qsort's frames after uw_cmp */
	expect_chain(want, 5, between);
	/* the frame-pointer walk of the same stack misses callers (this file
	 * really has no frame pointers) */
	size_t ours = 0;
	for (size_t i = 0; i < g_fp_n; i++) {
		Dl_info di;
		if (dladdr((void *)(REC_STACK_PC(g_fp_pcs[i]) - 1), &di) && di.dli_sname &&
		    strncmp(di.dli_sname, "uw_", 3) == 0)
			ours++;
	}
	printf("  frame-pointer walk: %zu entries, %zu of the 5 functions\n", g_fp_n, ours);
	assert_true(ours < 5);
}

/* Through the kernel's signal frame: a handler running on the thread's
 * stack, interrupted. */
static void t_chain_through_signal_frame(void **state)
{
	(void)state;
	self_path();
	capture_thread(uw_sig_thread);
	assert_int_equal(g_end, REC_UNWIND_ROOT);
	const char *want[] = { "uw_spin", "uw_sig_spin", "uw_on_sigusr2", "uw_sig_mid",
			       "uw_sig_thread" };
	const int between[] = { 0, 0, 1, 0 }; /* __restore_rt, pthread_kill */
	expect_chain(want, 5, between);
}

/* rec_stack_capture_ex() in the thread itself walks the same tables: from
 * qsort's callback, in code without frame pointers, every caller up to the
 * thread's root; the first entry is the callback's return address (not an
 * exact pc: nothing interrupted it). */
static void t_capture_here_through_qsort(void **state)
{
	(void)state;
	self_path();
	assert_int_equal(rec_cfi_refresh(), REC_OK);
	uint64_t before[REC_UNWIND_END_COUNT], after[REC_UNWIND_END_COUNT];
	rec_unwind_here_counts(before);
	g_n = 0;
	g_here_truncated = -1;
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, uw_here_thread, NULL), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	rec_unwind_here_counts(after);
	assert_int_equal(after[REC_UNWIND_ROOT], before[REC_UNWIND_ROOT] + 1);
	assert_int_equal(g_here_truncated, 0);
	assert_true(g_n > 0);
	assert_false(g_pcs[0] & REC_STACK_PC_EXACT);
	const char *want[] = { "uw_here_cmp", "uw_here_sorter", "uw_here_mid", "uw_here_thread" };
	const int between[] = { 1, 0, 0 }; /* qsort's frames after uw_here_cmp */
	expect_chain(want, 4, between);
}

/* A capture on the main thread, from a test function cmocka called: its
 * stack goes through libcmocka (built without frame pointers), whose table
 * a first snapshot lacks.  The walk meets it, waits for the whole snapshot
 * (built here: no recorder's thread builds it in this test) and walks
 * again, counted once; it reaches the root through cmocka's frames, and a
 * capture at the same site afterwards gives the same stack. */
static NOINLINE size_t uw_main_capture(uintptr_t *pcs, size_t max, int *truncated)
{
	size_t n = rec_stack_capture_ex(pcs, max, 0, truncated);
	g_sink++;
	return n;
}

static void uw_main_through_cmocka(uint64_t *before, uint64_t *after)
{
	rec_cfi_walk cw;
	assert_int_equal(rec_stack_thread_register(), REC_OK);
	uintptr_t pcs[2][128];
	size_t n[2];
	int trunc[2];
	rec_unwind_here_counts(before);
	static volatile int twice = 2; /* one call site: the loop not unrolled */
	for (int i = 0; i < twice; i++)
		n[i] = uw_main_capture(pcs[i], 128, &trunc[i]);
	rec_unwind_here_counts(after);
	const rec_cfi_snapshot *s = rec_cfi_enter(&cw);
	rec_cfi_leave(&cw);
	assert_non_null(s);
	assert_int_equal(s->pending, 0);
	assert_int_equal(after[REC_UNWIND_ROOT], before[REC_UNWIND_ROOT] + 2);
	for (int k = 0; k < REC_UNWIND_END_COUNT; k++)
		if (k != REC_UNWIND_ROOT)
			assert_int_equal(after[k], before[k]);
	assert_int_equal(trunc[0], 0);
	assert_int_equal(n[0], n[1]);
	assert_memory_equal(pcs[0], pcs[1], n[0] * sizeof pcs[0][0]);
	int cmocka = 0;
	for (size_t i = 0; i < n[0]; i++) {
		Dl_info di;
		if (dladdr((void *)(pcs[0][i] - 1), &di) != 0 && di.dli_fname != NULL &&
		    strstr(di.dli_fname, "libcmocka") != NULL)
			cmocka++;
	}
	assert_true(cmocka > 0);
}

/* Tables are built on demand (rec_recorder_open no longer builds them: its
 * background thread does as it starts): once rec_cfi_want() says a
 * recorder wants them, the first capture in normal context builds them
 * itself if no one has yet, so it walks them as every later capture does
 * (one stack per site).  Before that, none is built and a capture walks
 * frame pointers.  The first build is the first snapshot only (the
 * program's and libc's tables: stack_cfi.h), enough for a stack through
 * them; one through another library completes it (uw_main_through_cmocka).
 * Runs first: no table exists yet in this process. */
static void t_first_capture_builds_tables(void **state)
{
	(void)state;
	rec_cfi_walk cw;
	self_path();
	const rec_cfi_snapshot *s = rec_cfi_enter(&cw);
	rec_cfi_leave(&cw);
	assert_null(s);
	uint64_t before[REC_UNWIND_END_COUNT], after[REC_UNWIND_END_COUNT];
	pthread_t th;
	/* not wanted: nothing is built, the walk is the frame-pointer one */
	rec_unwind_here_counts(before);
	g_n = 0;
	assert_int_equal(pthread_create(&th, NULL, uw_here_thread, NULL), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	rec_unwind_here_counts(after);
	assert_memory_equal(before, after, sizeof before);
	s = rec_cfi_enter(&cw);
	rec_cfi_leave(&cw);
	assert_null(s);
	/* wanted: the capture builds the tables and walks them to the root */
	rec_cfi_want();
	g_n = 0;
	g_here_truncated = -1;
	assert_int_equal(pthread_create(&th, NULL, uw_here_thread, NULL), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	rec_unwind_here_counts(after);
	s = rec_cfi_enter(&cw);
	rec_cfi_leave(&cw);
	assert_non_null(s);
	assert_int_equal(after[REC_UNWIND_ROOT], before[REC_UNWIND_ROOT] + 1);
	assert_int_equal(g_here_truncated, 0);
	const char *want[] = { "uw_here_cmp", "uw_here_sorter", "uw_here_mid", "uw_here_thread" };
	const int between[] = { 1, 0, 0 }; /* qsort's frames after uw_here_cmp */
	expect_chain(want, 4, between);
#if !defined(__SANITIZE_ADDRESS__) /* there libasan's qsort is on that stack */
	/* that stack is of this program and libc only: the first snapshot,
	 * which lacks the tables of the other modules (cmocka's), was enough */
	assert_true(s->pending > 0);
	assert_int_equal(s->gen, 1);
#endif
	uw_main_through_cmocka(before, after);
}

/* The main thread reaches its root too (_start's undefined return address). */
static void t_main_thread_root(void **state)
{
	(void)state;
	handlers();
	assert_int_equal(rec_stack_thread_register(), REC_OK);
	assert_int_equal(rec_cfi_refresh(), REC_OK);
	atomic_store(&g_handled, 0);
	raise(SIGUSR1);
	assert_true(atomic_load(&g_handled));
	assert_int_equal(g_end, REC_UNWIND_ROOT);
	assert_true(g_n >= 3);
}

/* ---- hostile input ------------------------------------------------------------ */

static uint64_t g_rng = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return g_rng;
}

/* Code addresses to start from: this program's and libc's. */
static uintptr_t g_code[2][2];
static int code_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	int which = info->dlpi_name[0] == '\0' ? 0 : strstr(info->dlpi_name, "libc.so") ? 1 : -1;
	if (which < 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X)) {
			g_code[which][0] = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			g_code[which][1] = g_code[which][0] + info->dlpi_phdr[i].p_memsz;
		}
	return 0;
}

/* Garbage on the stack, random pcs in real code and elsewhere: every walk
 * ends, within max entries, without a fault (ASan and valgrind watch the
 * reads in the sanitizer runs). */
static void t_garbage_stack(void **state)
{
	(void)state;
	rec_cfi_walk cw;
	assert_int_equal(rec_stack_thread_register(), REC_OK);
	assert_int_equal(rec_cfi_refresh(), REC_OK);
	dl_iterate_phdr(code_cb, NULL);
	assert_true(g_code[0][1] > g_code[0][0] && g_code[1][1] > g_code[1][0]);
	uintptr_t lo, hi;
	assert_true(rec_stack_thread_bounds(&lo, &hi));
	uintptr_t junk[512] __attribute__((aligned(16)));
	uintptr_t pcs[64];
	const rec_cfi_snapshot *s = rec_cfi_enter(&cw);
	assert_non_null(s);
	unsigned ends[REC_UNWIND_END_COUNT] = { 0 };
	for (int it = 0; it < 20000; it++) {
		for (size_t i = 0; i < 512; i++) {
			uint64_t r = rnd();
			switch (r & 3) {
			case 0: junk[i] = (uintptr_t)&junk[(r >> 8) % 512]; break;   /* stack */
			case 1: junk[i] = g_code[(r >> 2) & 1][0] +
					  (uintptr_t)((r >> 8) % (g_code[(r >> 2) & 1][1] - g_code[(r >> 2) & 1][0]));
				break;                                              /* code */
			case 2: junk[i] = (uintptr_t)(r >> 3); break;             /* anything */
			default: junk[i] = 0; break;
			}
		}
		int which = (int)(rnd() & 1);
		uintptr_t pc = g_code[which][0] + (uintptr_t)(rnd() % (g_code[which][1] - g_code[which][0]));
		if (it % 7 == 0)
			pc = (uintptr_t)rnd(); /* not code at all */
		uintptr_t sp = (uintptr_t)&junk[rnd() % 256];
		uintptr_t fp = junk[rnd() % 512];
		rec_unwind_end why = REC_UNWIND_END_COUNT;
		size_t n = rec_unwind_regs(s, pc, sp, fp, lo, hi, pcs, 64, &why);
		assert_true(n <= 64);
		assert_true(why < REC_UNWIND_END_COUNT);
		ends[why]++;
	}
	rec_cfi_leave(&cw);
	printf("  garbage walks ended: root %u full %u no-info %u bad-frame %u steps %u\n",
	       ends[REC_UNWIND_ROOT], ends[REC_UNWIND_FULL], ends[REC_UNWIND_NO_INFO],
	       ends[REC_UNWIND_BAD_FRAME], ends[REC_UNWIND_STEPS]);
	/* a stack pointer off the thread's stack: the leaf only, nothing read */
	uintptr_t n = rec_unwind_regs(s, g_code[0][0] + 16, (uintptr_t)junk, 0, hi, hi + 4096, pcs, 64, NULL);
	assert_int_equal(n, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_first_capture_builds_tables),
		cmocka_unit_test(t_chain_through_qsort),
		cmocka_unit_test(t_chain_through_signal_frame),
		cmocka_unit_test(t_capture_here_through_qsort),
		cmocka_unit_test(t_main_thread_root),
		cmocka_unit_test(t_garbage_stack),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
