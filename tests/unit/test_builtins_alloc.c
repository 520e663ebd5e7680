/* SPDX-License-Identifier: MIT */
/*
 * test_builtins_alloc.c - rec.Alloc and rec.Free produced for real: exact
 * reports (768 x 8192 bytes must total 6,291,456), and the sampling
 * wrappers on real threads (sample count, weights summing to the bytes
 * allocated, frees of sampled blocks), recorded to a file and read back.
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

#include "../lib/readback.h"

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
			assert_string_equal(rec_t_first_user_frame(e, buf, sizeof(buf)), "al_request");
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
		uint64_t n = 0, weight = 0, frees = 0, no_stack = 0;
		for (size_t i = 0; i < rec_t_nev; i++) {
			const rec_t_ev *e = &rec_t_evs[i];
			if (e->tid != tids[t])
				continue;
			if (strcmp(e->type, "rec.Alloc") == 0) {
				assert_int_equal(rec_t_fu(e, "sampled"), 1);
				uint64_t sz = rec_t_fu(e, "size");
				assert_true(sz == SAMPLED_SIZE || sz == SAMPLED_SIZE / 2);
				assert_true(rec_t_fu(e, "weight") >= sz);
				/* Both threads sample the same call sites: the core's
				 * lock-free stack table may give up on an insert racing
				 * with a preempted one (no stack id); rare. */
				if (e->has_stack)
					assert_true(rec_t_stack_has(e, "al_sampled_worker"));
				else
					no_stack++;
				weight += rec_t_fu(e, "weight");
				n++;
			} else if (strcmp(e->type, "rec.Free") == 0) {
				assert_int_equal(rec_t_fu(e, "sampled"), 1);
				uint64_t sz = rec_t_fu(e, "size");
				assert_true(sz == SAMPLED_SIZE || sz == SAMPLED_SIZE / 2);
				frees++;
			}
		}
		/* ~per_thread / 64 KiB samples (~343); weights sum to the bytes
		 * allocated up to the last sample. */
		print_message("thread %d: %" PRIu64 " samples, weight %" PRIu64 " of %" PRIu64 " bytes, %" PRIu64 " frees\n",
			      t, n, weight, per_thread, frees);
		assert_true(n >= per_thread / 65536 / 2 && n <= per_thread / 65536 * 2);
		assert_true(weight <= per_thread);
		assert_true(weight >= per_thread - 2 * 1024 * 1024);
		/* Every sampled block was freed through rec_free/rec_realloc. */
		assert_int_equal(frees, n);
		assert_true(no_stack <= n / 50);
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
		cmocka_unit_test(t_sampling_off),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
