/* SPDX-License-Identifier: MIT */
/*
 * burner - an LD_PRELOAD library that gives a program a background thread
 * doing nothing but work in bursts, the way the recorder's background
 * thread does (bench/p99budget.sh; not built by make, no part of rec).
 *
 *   LD_PRELOAD=burner.so BURN_US=B BURN_PERIOD_US=P program ...
 *
 * A thread named "burner" sleeps P microseconds, then works for B
 * microseconds of wall time (writing one byte in each 64-byte line of a
 * private 4 MiB buffer in turn, as the recorder's thread walks its rings
 * and streams), and again, until the program exits: B/P of a CPU.  Without
 * both variables it starts nothing.  The script reads the thread's CPU
 * time from /proc (schedstat), so the figure it prints is measured, not
 * taken from B and P.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define BUF_BYTES (4u << 20)

static long burst_us, period_us;
static unsigned char buf[BUF_BYTES];

static int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void *burner(void *arg)
{
	size_t at = 0;
	(void)arg;
	pthread_setname_np(pthread_self(), "burner");
	for (;;) {
		struct timespec ts = { period_us / 1000000, (period_us % 1000000) * 1000 };
		nanosleep(&ts, NULL);
		int64_t end = now_ns() + (int64_t)burst_us * 1000;
		while (now_ns() < end) {
			for (int k = 0; k < 64; k++) {
				buf[at]++;
				at = (at + 64) & (BUF_BYTES - 1);
			}
		}
	}
	return NULL;
}

__attribute__((constructor)) static void burner_start(void)
{
	const char *b = getenv("BURN_US"), *p = getenv("BURN_PERIOD_US");
	pthread_t t;

	if (!b || !p || (burst_us = atol(b)) <= 0 || (period_us = atol(p)) <= 0)
		return;
	if (pthread_create(&t, NULL, burner, NULL) == 0)
		pthread_detach(t);
}
