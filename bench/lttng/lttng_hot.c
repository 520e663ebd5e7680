/* SPDX-License-Identifier: MIT */
/*
 * lttng_hot - ns per event of an LTTng-UST tracepoint with the 3 fields of
 * bench/hotpath.c (string of 12 characters from a set of 16, int64 value =
 * i * 7919, int32 count = i % 1000), for bench/lttng.sh.
 *
 *   lttng_hot hot [--events-per-round K] [--rounds R] [--warm W] [--pause-ms P]
 *       For 1 and 2 threads: W warm-up rounds, then R timed rounds of K
 *       events per thread (threads start each round together at a barrier);
 *       between rounds everyone sleeps P ms (outside the timed part) so the
 *       consumer daemon drains the ring buffers and discard mode does not
 *       turn timed events into cheap discards.  Prints one line per case:
 *         threads=T median=M min=A max=B cpu_median=C cpu_min=D events=E
 *       (median/min/max over rounds x threads of round time / K, in ns;
 *       cpu_* the same with the thread's CPU time, CLOCK_THREAD_CPUTIME_ID,
 *       which leaves out time the thread was preempted on a loaded host).
 *   lttng_hot bulk N [--chunk C] [--pause-ms P]
 *       Emits N events on one thread, C at a time with a P ms pause between
 *       chunks (so the consumer keeps up), for the bytes/event trace.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NO_REC /* not linked with librec */
#include "../common.h"
#include "tp.h"

#define MAX_THREADS BENCH_MAX_THREADS
#define MAX_ROUNDS BENCH_MAX_ROUNDS

static __attribute__((noinline)) void emit_round(long from, long k)
{
	for (long i = from; i < from + k; i++)
		lttng_ust_tracepoint(bench, sample, bench_names[i & 15], (int64_t)((uint64_t)i * 7919u),
				     (int32_t)(i % 1000));
}

/* the timed part of a round */
static void round_emit(void *ctx, long from, long k)
{
	(void)ctx;
	emit_round(from, k);
}

/* thread 0 between rounds: the consumer drains, outside the timed part */
static void round_pause(void *ctx)
{
	bench_sleep_ms(*(const long *)ctx);
}

static int run_case(int threads, long k, int rounds, int warm, long pause_ms)
{
	struct bench_rounds *b = calloc(1, sizeof(*b));
	if (!b) {
		fprintf(stderr, "lttng_hot: out of memory\n");
		return 1;
	}
	b->k = k;
	b->rounds = rounds;
	b->warm = warm;
	b->with_cpu = 1;
	b->ctx = &pause_ms;
	b->emit = round_emit;
	b->between = round_pause;
	if (bench_rounds_run(b, threads, "lttng_hot") != 0) {
		free(b);
		return 1;
	}
	double all[MAX_THREADS * MAX_ROUNDS], allc[MAX_THREADS * MAX_ROUNDS];
	size_t n = bench_rounds_gather(b, threads, 0, all);
	bench_rounds_gather(b, threads, 1, allc);
	double med = bench_sort_median(all, n);
	double medc = bench_sort_median(allc, n);
	printf("threads=%d median=%.2f min=%.2f max=%.2f cpu_median=%.2f cpu_min=%.2f events=%lld\n",
	       threads, med, all[0], all[n - 1], medc, allc[0], (long long)threads * k * (rounds + warm));
	fflush(stdout);
	free(b);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: lttng_hot hot [--events-per-round K] [--rounds R (1-%d)] [--warm W] "
			"[--pause-ms P]\n       lttng_hot bulk N [--chunk C] [--pause-ms P]\n",
		MAX_ROUNDS);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	long k = 200000, chunk = 500000, pause_ms = 300, n = 0;
	int rounds = 5, warm = 2, i = 2;
	int bulk = strcmp(argv[1], "bulk") == 0;
	if (!bulk && strcmp(argv[1], "hot") != 0)
		return usage();
	if (bulk) {
		if (argc < 3)
			return usage();
		n = strtol(argv[2], NULL, 10);
		i = 3;
	}
	for (; i < argc; i++) {
		if (i + 1 >= argc)
			return usage();
		if (strcmp(argv[i], "--events-per-round") == 0)
			k = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--rounds") == 0)
			rounds = (int)strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--warm") == 0)
			warm = (int)strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--pause-ms") == 0)
			pause_ms = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--chunk") == 0)
			chunk = strtol(argv[++i], NULL, 10);
		else
			return usage();
	}
	if (k <= 0 || rounds <= 0 || rounds > MAX_ROUNDS || warm < 0 || pause_ms < 0 || chunk <= 0 ||
	    (bulk && n <= 0))
		return usage();
	if (bulk) {
		double t0 = bench_now_ns();
		for (long from = 0; from < n; from += chunk) {
			emit_round(from, from + chunk <= n ? chunk : n - from);
			bench_sleep_ms(pause_ms);
		}
		printf("bulk events=%ld wall_s=%.3f\n", n, (bench_now_ns() - t0) / 1e9);
		return 0;
	}
	int rc = 0;
	for (int threads = 1; threads <= MAX_THREADS; threads++)
		rc |= run_case(threads, k, rounds, warm, pause_ms);
	return rc;
}
