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
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tp.h"

#define MAX_THREADS 2
#define MAX_ROUNDS 64

static const char *const names[16] = {
	"alpha.events", "bravo.events", "charlie.evts", "delta.events",
	"echo.events1", "foxtrot.evts", "golf.events1", "hotel.events",
	"india.events", "juliet.evnts", "kilo.events1", "lima.events1",
	"mike.events1", "november.evt", "oscar.events", "papa.events1",
};

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static __attribute__((noinline)) void emit_round(long from, long k)
{
	for (long i = from; i < from + k; i++)
		lttng_ust_tracepoint(bench, sample, names[i & 15], (int64_t)((uint64_t)i * 7919u),
				     (int32_t)(i % 1000));
}

struct run {
	long k;
	int rounds, warm, threads;
	long pause_ms;
	pthread_barrier_t bar;
	double ns[MAX_THREADS][MAX_ROUNDS];
	double cpu[MAX_THREADS][MAX_ROUNDS];
};

struct targ {
	struct run *r;
	int idx;
};

static void *worker(void *arg)
{
	struct targ *ta = arg;
	struct run *r = ta->r;
	long base = (long)ta->idx * r->k * (r->warm + r->rounds);
	for (int round = 0; round < r->warm + r->rounds; round++) {
		pthread_barrier_wait(&r->bar);
		long from = base + (long)round * r->k;
		double c0 = cpu_ns();
		double t0 = now_ns();
		emit_round(from, r->k);
		double t1 = now_ns();
		double c1 = cpu_ns();
		if (round >= r->warm) {
			r->ns[ta->idx][round - r->warm] = (t1 - t0) / (double)r->k;
			r->cpu[ta->idx][round - r->warm] = (c1 - c0) / (double)r->k;
		}
		pthread_barrier_wait(&r->bar);
		if (ta->idx == 0)
			sleep_ms(r->pause_ms); /* consumer drains, outside the timed part */
		pthread_barrier_wait(&r->bar);
	}
	return NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int run_case(int threads, long k, int rounds, int warm, long pause_ms)
{
	struct run *r = calloc(1, sizeof(*r));
	if (!r) {
		fprintf(stderr, "lttng_hot: out of memory\n");
		return 1;
	}
	r->k = k;
	r->rounds = rounds;
	r->warm = warm;
	r->threads = threads;
	r->pause_ms = pause_ms;
	if (pthread_barrier_init(&r->bar, NULL, (unsigned)threads) != 0) {
		fprintf(stderr, "lttng_hot: pthread_barrier_init failed\n");
		free(r);
		return 1;
	}
	pthread_t th[MAX_THREADS];
	struct targ ta[MAX_THREADS];
	for (int t = 0; t < threads; t++) {
		ta[t].r = r;
		ta[t].idx = t;
		if (pthread_create(&th[t], NULL, worker, &ta[t]) != 0) {
			fprintf(stderr, "lttng_hot: pthread_create failed\n");
			exit(1); /* the barrier would never complete */
		}
	}
	for (int t = 0; t < threads; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&r->bar);
	double all[MAX_THREADS * MAX_ROUNDS], allc[MAX_THREADS * MAX_ROUNDS];
	int n = 0;
	for (int t = 0; t < threads; t++)
		for (int j = 0; j < rounds; j++) {
			allc[n] = r->cpu[t][j];
			all[n++] = r->ns[t][j];
		}
	qsort(all, (size_t)n, sizeof(double), cmp_d);
	qsort(allc, (size_t)n, sizeof(double), cmp_d);
	double med = n % 2 ? all[n / 2] : (all[n / 2 - 1] + all[n / 2]) / 2;
	double medc = n % 2 ? allc[n / 2] : (allc[n / 2 - 1] + allc[n / 2]) / 2;
	printf("threads=%d median=%.2f min=%.2f max=%.2f cpu_median=%.2f cpu_min=%.2f events=%lld\n",
	       threads, med, all[0], all[n - 1], medc, allc[0], (long long)threads * k * (rounds + warm));
	fflush(stdout);
	free(r);
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
		double t0 = now_ns();
		for (long from = 0; from < n; from += chunk) {
			emit_round(from, from + chunk <= n ? chunk : n - from);
			sleep_ms(pause_ms);
		}
		printf("bulk events=%ld wall_s=%.3f\n", n, (now_ns() - t0) / 1e9);
		return 0;
	}
	int rc = 0;
	for (int threads = 1; threads <= MAX_THREADS; threads++)
		rc |= run_case(threads, k, rounds, warm, pause_ms);
	return rc;
}
