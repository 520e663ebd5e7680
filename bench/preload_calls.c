/* SPDX-License-Identifier: MIT */
/*
 * preload_calls - ns per call of the libc calls the preload library
 * interposes, timed inside the process (bench/preload.sh runs it without and
 * with LD_PRELOAD=librec-preload.so; it knows nothing of rec and links no
 * part of it).
 *
 *   preload_calls [N] [ROUNDS] [single]   (default 200000 21)
 *
 * Each case runs ROUNDS rounds of N calls (N/16 for the system calls) on
 * the main thread, after one untimed warm-up round; the rounds of the cases
 * interleave, so that a burst of load on the machine falls on all of them
 * alike.  It prints the median and the minimum over the rounds of (round
 * time / calls), one line:
 *   lock=NS lock_min=NS malloc=NS malloc_min=NS read=NS ... clock2_mono_min=NS
 * It first starts a thread that waits (in read on a pipe) until the end:
 * glibc runs a single-threaded process's mutexes and malloc without atomic
 * instructions, and under the preload no process is single-threaded (the
 * recorder's background thread), so without that thread the runs without
 * the preload would time calls no service makes.  ("single": no such
 * thread, for what a single-threaded program pays.)  Then it allocates 8 MiB in 1 KiB blocks and keeps them, as a
 * service keeps its data: under the preload some of them are sampled blocks
 * still allocated, so every free looks its address up among them, as it
 * does in a real program.
 * lock        pthread_mutex_lock + pthread_mutex_unlock of one uncontended
 *             (default) mutex
 * malloc      malloc + free of a size from a service-like mix (a fixed
 *             table of 4096 sizes: 50 % 16-64 bytes, 30 % 65-256, 15 %
 *             257-1024, 5 % 1025-8192; mean about 350 bytes), the block
 *             written once so that neither call can be elided
 * read        read of 64 bytes from /dev/zero (a short call, far under
 *             the I/O threshold)
 * pipe        write of 64 bytes into a pipe and read of them back (two
 *             interposed calls)
 * read_tsc    the read above timed by hand as the preload times it: a TSC
 *             read before and after, the difference compared with a
 *             threshold (the floor of a timed read in this binary)
 * pipe_tsc    the pipe's write and read, each timed by hand the same way
 *             (the floor of two timed calls)
 * clock2_tsc  two reads of the TSC (rdtsc), the recorder's clock where the
 *             TSC is invariant: what a timed call adds at the least
 * clock2_mono two clock_gettime(CLOCK_MONOTONIC), its clock elsewhere
 * Times come from clock_gettime(CLOCK_MONOTONIC) around each round.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tsc.h"

#define SIZES 4096
#define MAX_ROUNDS 101

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static size_t sizes[SIZES];
static void *volatile sink;
static volatile uint64_t tsink;
static int zero_fd, pipe_fd[2];

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void make_sizes(void)
{
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (int i = 0; i < SIZES; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		unsigned r = (unsigned)(x % 100), v = (unsigned)(x >> 32);
		size_t lo, hi;
		if (r < 50) {
			lo = 16;
			hi = 64;
		} else if (r < 80) {
			lo = 65;
			hi = 256;
		} else if (r < 95) {
			lo = 257;
			hi = 1024;
		} else {
			lo = 1025;
			hi = 8192;
		}
		sizes[i] = lo + v % (hi - lo + 1);
	}
}

static void do_lock(long n)
{
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&mu);
		pthread_mutex_unlock(&mu);
	}
}

static void do_malloc(long n)
{
	for (long i = 0; i < n; i++) {
		char *p = malloc(sizes[i & (SIZES - 1)]);
		if (p == NULL)
			abort();
		p[0] = (char)i;
		sink = p;
		free(p);
	}
}

static void do_read(long n)
{
	char buf[64];
	for (long i = 0; i < n; i++)
		if (read(zero_fd, buf, sizeof buf) != (ssize_t)sizeof buf)
			abort();
}

static void do_pipe(long n)
{
	char buf[64];
	memset(buf, 'x', sizeof buf);
	for (long i = 0; i < n; i++) {
		if (write(pipe_fd[1], buf, sizeof buf) != (ssize_t)sizeof buf ||
		    read(pipe_fd[0], buf, sizeof buf) != (ssize_t)sizeof buf)
			abort();
	}
}

static volatile uint64_t threshold = UINT64_MAX;
static volatile unsigned long over;

static void do_read_tsc(long n)
{
	char buf[64];
	for (long i = 0; i < n; i++) {
		uint64_t t0 = bench_tsc();
		if (read(zero_fd, buf, sizeof buf) != (ssize_t)sizeof buf)
			abort();
		if (bench_tsc() - t0 >= threshold)
			over++;
	}
}


static void do_pipe_tsc(long n)
{
	char buf[64];
	memset(buf, 'x', sizeof buf);
	for (long i = 0; i < n; i++) {
		uint64_t t0 = bench_tsc();
		if (write(pipe_fd[1], buf, sizeof buf) != (ssize_t)sizeof buf)
			abort();
		if (bench_tsc() - t0 >= threshold)
			over++;
		t0 = bench_tsc();
		if (read(pipe_fd[0], buf, sizeof buf) != (ssize_t)sizeof buf)
			abort();
		if (bench_tsc() - t0 >= threshold)
			over++;
	}
}

static void do_clock2_tsc(long n)
{
	for (long i = 0; i < n; i++) {
		uint64_t a = bench_tsc();
		uint64_t b = bench_tsc();
		tsink = b - a;
	}
}

static void do_clock2_mono(long n)
{
	for (long i = 0; i < n; i++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		clock_gettime(CLOCK_MONOTONIC, &b);
		tsink = (uint64_t)(b.tv_nsec - a.tv_nsec);
	}
}

static int idle_fd[2];

static void *idle(void *arg)
{
	char c;
	(void)arg;
	while (read(idle_fd[0], &c, 1) < 0)
		;
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

#define CASES 8
static void (*const case_fn[CASES])(long) = { do_lock,	   do_malloc,	  do_read,	 do_pipe,
					       do_read_tsc, do_pipe_tsc, do_clock2_tsc, do_clock2_mono };
static const char *const case_name[CASES] = { "lock",	  "malloc",   "read",	    "pipe",
					       "read_tsc", "pipe_tsc", "clock2_tsc", "clock2_mono" };
static const long case_div[CASES] = { 1, 1, 16, 16, 16, 16, 1, 1 }; /* the system calls: N/16 */

/* The rounds of the cases interleave (a burst of load on the machine
 * falls on all of them alike): v[c][r] = ns per call of case c in round r. */
static void run_rounds(long n, int rounds, double v[CASES][MAX_ROUNDS])
{
	for (int c = 0; c < CASES; c++)
		case_fn[c](n / case_div[c]); /* warm-up */
	for (int r = 0; r < rounds; r++)
		for (int c = 0; c < CASES; c++) {
			long k = n / case_div[c];
			uint64_t t0 = now_ns();
			case_fn[c](k);
			v[c][r] = (double)(now_ns() - t0) / (double)k;
		}
}
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	int rounds = argc > 2 ? atoi(argv[2]) : 21;
	if (n < 16 || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: preload_calls [N >= 16] [ROUNDS 1..%d]\n", MAX_ROUNDS);
		return 2;
	}
	pthread_t th;
	int single = argc > 3 && strcmp(argv[3], "single") == 0;
	if (pipe(idle_fd) != 0 || (!single && pthread_create(&th, NULL, idle, NULL) != 0)) {
		perror("preload_calls: the idle thread");
		return 1;
	}
	make_sizes();
	for (int i = 0; i < 8192; i++) {
		char *keep = malloc(1024);
		if (keep == NULL)
			abort();
		keep[0] = 1;
		sink = keep; /* kept to the end */
	}
	zero_fd = open("/dev/zero", O_RDONLY);
	if (zero_fd < 0 || pipe(pipe_fd) != 0) {
		perror("preload_calls: /dev/zero or pipe");
		return 1;
	}
	static double v[CASES][MAX_ROUNDS];
	run_rounds(n, rounds, v);
	for (int c = 0; c < CASES; c++) {
		qsort(v[c], (size_t)rounds, sizeof v[c][0], cmp_double);
		double med = rounds % 2 ? v[c][rounds / 2]
					: (v[c][rounds / 2 - 1] + v[c][rounds / 2]) / 2;
		printf("%s%s=%.2f %s_min=%.2f", c ? " " : "", case_name[c], med, case_name[c], v[c][0]);
	}
	printf("\n");
	if (!single && (write(idle_fd[1], "x", 1) != 1 || pthread_join(th, NULL) != 0))
		return 1;
	return 0;
}
