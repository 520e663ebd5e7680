/* SPDX-License-Identifier: MIT */
/*
 * rec_test_builtin_waits.c - a real program for the tools' view of the
 * built-in allocation and wait events (tests/cli/flame_builtins.sh):
 *
 *   - three threads ("alloc-N", exit before the close) and the main thread
 *     allocate through rec_malloc/rec_calloc/rec_realloc with the sampling
 *     interval set to 64 KiB, sizes 100..4099, in two call sites
 *     (alloc_small, alloc_large), and free what they allocated;
 *   - thread "waiter" waits on a condition variable (rec_cond_wait) until
 *     the main thread signals it 50 ms after the wait began, then once with
 *     a 20 ms timeout (rec_cond_timedwait);
 *   - thread "sleeper" sleeps 30 ms (rec_sleep_ns).
 *
 *   rec_test_builtin_waits OUT.rec
 * Prints "bytes N" (the bytes allocated through the wrappers, every thread)
 * and exits 0 on success.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rec/builtins.h"
#include "rec/recorder.h"

#define ALLOC_THREADS 3

static uint64_t g_bytes[ALLOC_THREADS + 1];
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static rec_mutex g_mu = REC_MUTEX_INITIALIZER("work-queue");
static int g_go, g_waiting;

/* Not static: -rdynamic exports them, so the stacks name them. */
void *alloc_small(uint64_t *bytes, int n);
void *alloc_large(uint64_t *bytes, int n);
void *alloc_worker(void *arg);
void *wait_for_work(void *arg);
void *sleep_a_while(void *arg);

__attribute__((noinline)) void *alloc_small(uint64_t *bytes, int n)
{
	for (int i = 0; i < n; i++) {
		size_t sz = 100 + (size_t)(i % 50);
		void *p = (i % 2) ? rec_calloc(1, sz) : rec_malloc(sz);
		if (!p)
			return NULL;
		*bytes += sz;
		rec_free(p);
	}
	return bytes;
}

__attribute__((noinline)) void *alloc_large(uint64_t *bytes, int n)
{
	for (int i = 0; i < n; i++) {
		size_t sz = 1000 + (size_t)(i % 3100);
		void *p = rec_malloc(sz / 2);
		if (!p)
			return NULL;
		*bytes += sz / 2;
		void *q = rec_realloc(p, sz); /* counts sz again: a new allocation */
		if (!q) {
			rec_free(p);
			return NULL;
		}
		*bytes += sz;
		rec_free(q);
	}
	return bytes;
}

__attribute__((noinline)) void *alloc_worker(void *arg)
{
	uint64_t *bytes = arg;
	char name[16];
	snprintf(name, sizeof name, "alloc-%d", (int)(bytes - g_bytes));
	pthread_setname_np(pthread_self(), name);
	if (!alloc_small(bytes, 40000) || !alloc_large(bytes, 5000))
		return NULL;
	return bytes;
}

__attribute__((noinline)) void *wait_for_work(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "waiter");
	rec_mutex_lock(&g_mu);
	g_waiting = 1; /* the main thread sees it once the wait released the mutex */
	while (!g_go)
		rec_cond_wait(&g_cond, &g_mu);
	struct timespec abs;
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_nsec += 20 * 1000 * 1000;
	if (abs.tv_nsec >= 1000000000) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000;
	}
	int rc;
	while ((rc = rec_cond_timedwait(&g_cond, &g_mu, &abs)) == 0)
		;
	rec_mutex_unlock(&g_mu);
	return rc == ETIMEDOUT ? arg : NULL;
}

__attribute__((noinline)) void *sleep_a_while(void *arg)
{
	pthread_setname_np(pthread_self(), "sleeper");
	return rec_sleep_ns(30u * 1000 * 1000) == 0 ? arg : NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: rec_test_builtin_waits OUT.rec\n");
		return 2;
	}
	rec_alloc_set_sample_interval(64 * 1024);
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.flags = REC_RECORDER_DEFAULT;
	o.path = argv[1];
	o.memory_limit = 64u << 20; /* nothing dropped */
	rec_recorder *r = NULL;
	rec_status st = rec_recorder_open(&r, &o);
	if (st != REC_OK) {
		fprintf(stderr, "rec_test_builtin_waits: recorder: %s\n", rec_strerror(st));
		return 1;
	}
	int ok = 1;
	pthread_t waiter, sleeper, th[ALLOC_THREADS];
	static int token;
	ok &= pthread_create(&waiter, NULL, wait_for_work, &token) == 0;
	ok &= pthread_create(&sleeper, NULL, sleep_a_while, &token) == 0;
	for (int i = 0; i < ALLOC_THREADS; i++)
		ok &= pthread_create(&th[i], NULL, alloc_worker, &g_bytes[i]) == 0;
	if (!ok)
		return 1;
	/* The main thread allocates too: its tail is recorded at the close. */
	ok &= alloc_small(&g_bytes[ALLOC_THREADS], 3000) != NULL;
	/* Signal 50 ms after the waiter is inside its wait. */
	for (;;) {
		pthread_mutex_lock(&g_mu.mu);
		int w = g_waiting;
		pthread_mutex_unlock(&g_mu.mu);
		if (w)
			break;
		struct timespec ms = { 0, 1000 * 1000 };
		nanosleep(&ms, NULL);
	}
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	rec_mutex_lock(&g_mu);
	g_go = 1;
	pthread_cond_signal(&g_cond);
	rec_mutex_unlock(&g_mu);
	void *res;
	for (int i = 0; i < ALLOC_THREADS; i++)
		ok &= pthread_join(th[i], &res) == 0 && res != NULL;
	ok &= pthread_join(waiter, &res) == 0 && res != NULL;
	ok &= pthread_join(sleeper, &res) == 0 && res != NULL;
	st = rec_recorder_close(r);
	if (st != REC_OK) {
		fprintf(stderr, "rec_test_builtin_waits: close: %s\n", rec_strerror(st));
		return 1;
	}
	uint64_t total = 0;
	for (int i = 0; i <= ALLOC_THREADS; i++)
		total += g_bytes[i];
	printf("bytes %" PRIu64 "\n", total);
	return ok ? 0 : 1;
}
