/* SPDX-License-Identifier: MIT */
/*
 * test_alloc.c - rec.Alloc and rec.Free produced for real: exact
 * reports (768 x 8192 bytes must total 6,291,456), and the sampling
 * wrappers on real threads (sample count, weights summing to exactly the
 * bytes allocated, with the tails of threads that exit and of the close;
 * frees of sampled blocks), recorded to a file and read back.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rec/builtins.h"
#include "rec/recorder.h"

#include "../../lib/readback.h"

/* ---- reported allocations: exact ------------------------------------------- */

void al_request(void **bufs);
__attribute__((noinline)) void al_request(void **bufs)
{
	for (int i = 0; i < 768; i++) {
		bufs[i] = malloc(8192);
		assert_non_null(bufs[i]);
		rec_alloc_report(bufs[i], 8192);
	}
}

static void t_reported_exact(void **state)
{
	(void)state;
	rec_t_start(NULL);
	static void *bufs[768];
	al_request(bufs);
	for (int i = 0; i < 768; i++) {
		rec_free_report(bufs[i]);
		free(bufs[i]);
	}
	rec_t_stop_and_load();
	uint64_t total = 0, n = 0, frees = 0;
	for (size_t i = 0; i < rec_t_nev; i++) {
		const rec_t_ev *e = &rec_t_evs[i];
		if (strcmp(e->type, "rec.Alloc") == 0) {
			assert_int_equal(rec_t_fu(e, "sampled"), 0);
			assert_int_equal(rec_t_fu(e, "size"), 8192);
			assert_int_equal(rec_t_fu(e, "weight"), 8192);
			assert_int_equal(rec_t_fu(e, "address"), (uintptr_t)bufs[n]);
			assert_int_equal(e->tid, rec_t_my_tid());
			char buf[128];
			assert_string_equal(rec_t_first_frame(e, buf, sizeof(buf)), "al_request");
			total += rec_t_fu(e, "size");
			n++;
		} else if (strcmp(e->type, "rec.Free") == 0) {
			assert_int_equal(rec_t_fu(e, "sampled"), 0);
			assert_int_equal(rec_t_fu(e, "size"), 0);
			assert_int_equal(rec_t_fu(e, "address"), (uintptr_t)bufs[frees]);
			frees++;
		}
	}
	assert_int_equal(n, 768);
	assert_int_equal(total, 6291456);
	assert_int_equal(frees, 768);
}

/* ---- sampled malloc/free ---------------------------------------------------- */

#define SAMPLED_THREADS 2
#define SAMPLED_ALLOCS 20000
#define SAMPLED_SIZE 1000

void *al_sampled_worker(void *arg);
void *al_sampled_worker(void *arg)
{
	uint64_t *tid = arg;
	*tid = rec_t_my_tid();
	static _Thread_local void *keep[64];
	for (int i = 0; i < SAMPLED_ALLOCS; i++) {
		void *p;
		switch (i % 4) {
		case 0: p = rec_malloc(SAMPLED_SIZE); break;
		case 1: p = rec_calloc(10, SAMPLED_SIZE / 10); break;
		case 2: p = rec_realloc(NULL, SAMPLED_SIZE); break;
		default:
			p = rec_malloc(SAMPLED_SIZE / 2);
			assert_non_null(p);
			p = rec_realloc(p, SAMPLED_SIZE); /* counts 500 + 1000 */
			break;
		}
		assert_non_null(p);
		memset(p, 1, SAMPLED_SIZE);
		void **slot = &keep[i % 64];
		rec_free(*slot);
		*slot = p;
	}
	for (int i = 0; i < 64; i++) {
		rec_free(keep[i]);
		keep[i] = NULL;
	}
	return NULL;
}

static void t_sampled(void **state)
{
	(void)state;
	rec_alloc_set_sample_interval(64 * 1024);
	assert_int_equal(rec_alloc_sample_interval(), 64 * 1024);
	rec_t_start(NULL);
	uint64_t tids[SAMPLED_THREADS];
	pthread_t th[SAMPLED_THREADS];
	for (int i = 0; i < SAMPLED_THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, al_sampled_worker, &tids[i]), 0);
	for (int i = 0; i < SAMPLED_THREADS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	rec_t_stop_and_load();
	rec_alloc_set_sample_interval(512 * 1024);

	/* Bytes each thread allocated through the wrappers. */
	const uint64_t per_thread = (uint64_t)SAMPLED_ALLOCS / 4 * (3 * SAMPLED_SIZE + SAMPLED_SIZE / 2 + SAMPLED_SIZE);
	for (int t = 0; t < SAMPLED_THREADS; t++) {
		uint64_t n = 0, weight = 0, frees = 0, no_stack = 0, tails = 0;
		for (size_t i = 0; i < rec_t_nev; i++) {
			const rec_t_ev *e = &rec_t_evs[i];
			if (e->tid != tids[t])
				continue;
			if (strcmp(e->type, "rec.Alloc") == 0) {
				assert_int_equal(rec_t_fu(e, "sampled"), 1);
				uint64_t sz = rec_t_fu(e, "size");
				weight += rec_t_fu(e, "weight");
				if (sz == 0) { /* the tail the thread recorded as it exited */
					assert_int_equal(rec_t_fu(e, "address"), 0);
					assert_false(e->has_stack);
					tails++;
					continue;
				}
				assert_true(sz == SAMPLED_SIZE || sz == SAMPLED_SIZE / 2);
				assert_true(rec_t_fu(e, "weight") >= sz);
				/* Both threads sample the same call sites: the core's
				 * lock-free stack table may give up on an insert racing
				 * with a preempted one (no stack id); rare. */
				if (e->has_stack)
					assert_true(rec_t_stack_has(e, "al_sampled_worker"));
				else
					no_stack++;
				n++;
			} else if (strcmp(e->type, "rec.Free") == 0) {
				assert_int_equal(rec_t_fu(e, "sampled"), 1);
				uint64_t sz = rec_t_fu(e, "size");
				assert_true(sz == SAMPLED_SIZE || sz == SAMPLED_SIZE / 2);
				frees++;
			}
		}
		/* ~per_thread / 64 KiB samples (~343); with the tail the
		 * weights sum to exactly the bytes allocated. */
		print_message("thread %d: %" PRIu64 " samples, weight %" PRIu64 " of %" PRIu64 " bytes, %" PRIu64 " frees\n",
			      t, n, weight, per_thread, frees);
		assert_true(n >= per_thread / 65536 / 2 && n <= per_thread / 65536 * 2);
		assert_true(tails <= 1);
		assert_int_equal(weight, per_thread);
		/* Every sampled block was freed through rec_free/rec_realloc. */
		assert_int_equal(frees, n);
		assert_true(no_stack <= n / 50);
	}
}

/* ---- the unsampled tail: weights sum to the bytes, exactly ------------------ */

#define TAIL_THREADS 4

typedef struct tail_job {
	uint64_t tid;
	uint64_t bytes;   /* allocated through the wrappers */
	int allocs, size;
	int hold;         /* stay alive until released (counted at close) */
} tail_job;

static pthread_mutex_t g_hold_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_hold_cv = PTHREAD_COND_INITIALIZER;
static int g_hold_state; /* 1: the holder allocated; 2: released */

void *al_tail_worker(void *arg);
__attribute__((noinline)) void *al_tail_worker(void *arg)
{
	tail_job *j = arg;
	j->tid = rec_t_my_tid();
	for (int i = 0; i < j->allocs; i++) {
		/* sizes vary: size, size + 1, ..., size + 6 */
		size_t n = (size_t)j->size + (size_t)(i % 7);
		void *p = (i % 3 == 0) ? rec_calloc(1, n) : rec_malloc(n);
		assert_non_null(p);
		j->bytes += n;
		rec_free(p);
	}
	if (j->hold) {
		pthread_mutex_lock(&g_hold_mu);
		g_hold_state = 1;
		pthread_cond_broadcast(&g_hold_cv);
		while (g_hold_state != 2)
			pthread_cond_wait(&g_hold_cv, &g_hold_mu);
		pthread_mutex_unlock(&g_hold_mu);
	}
	return NULL;
}

static void t_tail_exact(void **state)
{
	(void)state;
	rec_alloc_set_sample_interval(64 * 1024);
	/* Bytes allocated before the recording opens are not counted in it. */
	void *before = rec_malloc(50000);
	assert_non_null(before);
	rec_free(before);
	rec_t_start(NULL);
	/* Threads that exit: three that sample many times, one that
	 * allocates less than any likely gap (exp(-100 / 65536) ~ 0.998
	 * odds of no sample: it need not emit anything before its tail). */
	tail_job jobs[TAIL_THREADS + 1] = {
		{ 0, 0, 30000, 100, 0 }, { 0, 0, 7001, 1000, 0 }, { 0, 0, 123, 4096, 0 },
		{ 0, 0, 1, 100, 0 },
		{ 0, 0, 5000, 333, 1 }, /* still running at close */
	};
	pthread_t th[TAIL_THREADS + 1];
	for (int i = 0; i < TAIL_THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, al_tail_worker, &jobs[i]), 0);
	for (int i = 0; i < TAIL_THREADS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	g_hold_state = 0;
	assert_int_equal(pthread_create(&th[TAIL_THREADS], NULL, al_tail_worker, &jobs[TAIL_THREADS]), 0);
	pthread_mutex_lock(&g_hold_mu);
	while (g_hold_state != 1)
		pthread_cond_wait(&g_hold_cv, &g_hold_mu);
	pthread_mutex_unlock(&g_hold_mu);
	/* and the closing thread itself */
	tail_job self = { 0, 0, 777, 2000, 0 };
	al_tail_worker(&self);
	rec_t_stop_and_load();
	pthread_mutex_lock(&g_hold_mu);
	g_hold_state = 2;
	pthread_cond_broadcast(&g_hold_cv);
	pthread_mutex_unlock(&g_hold_mu);
	assert_int_equal(pthread_join(th[TAIL_THREADS], NULL), 0);
	rec_alloc_set_sample_interval(512 * 1024);

	uint64_t all = self.bytes, got_all = 0;
	for (int i = 0; i <= TAIL_THREADS; i++)
		all += jobs[i].bytes;
	uint64_t per[TAIL_THREADS] = { 0 }, tails[TAIL_THREADS] = { 0 };
	for (size_t i = 0; i < rec_t_nev; i++) {
		const rec_t_ev *e = &rec_t_evs[i];
		if (strcmp(e->type, "rec.Alloc") != 0)
			continue;
		assert_int_equal(rec_t_fu(e, "sampled"), 1);
		got_all += rec_t_fu(e, "weight");
		for (int t = 0; t < TAIL_THREADS; t++)
			if (e->tid == jobs[t].tid) {
				per[t] += rec_t_fu(e, "weight");
				tails[t] += rec_t_fu(e, "size") == 0;
			}
	}
	print_message("weights %" PRIu64 " of %" PRIu64 " bytes\n", got_all, all);
	assert_int_equal(got_all, all);
	/* A thread's tail is recorded on that thread as it exits, at most
	 * once (none when its last allocation was sampled: nothing left). */
	for (int t = 0; t < TAIL_THREADS; t++) {
		assert_int_equal(per[t], jobs[t].bytes);
		assert_true(tails[t] <= 1);
	}
}

/* Sampling off: the wrappers record nothing. */
static void t_sampling_off(void **state)
{
	(void)state;
	rec_alloc_set_sample_interval(0);
	rec_t_start(NULL);
	uint64_t tid;
	al_sampled_worker(&tid);
	rec_t_stop_and_load();
	rec_alloc_set_sample_interval(512 * 1024);
	assert_int_equal(rec_t_count_type("rec.Alloc"), 0);
	assert_int_equal(rec_t_count_type("rec.Free"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_reported_exact),
		cmocka_unit_test(t_sampled),
		cmocka_unit_test(t_tail_exact),
		cmocka_unit_test(t_sampling_off),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
