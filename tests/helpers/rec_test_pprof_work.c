/* SPDX-License-Identifier: MIT */
/*
 * rec_test_pprof_work.c - a real program for tests/cli/flame_pprof.sh: CPU
 * samples, allocations and lock waits from the built-in recorder, in named
 * threads, so that a pprof profile of each has stacks, modules and labels.
 *
 *   REC_OUTPUT=OUT.rec rec_test_pprof_work
 *
 *   - threads "spin-a" and "spin-b" each burn about 150 ms of CPU in
 *     pprof_spin_a / pprof_spin_b (the CPU sampler armed at once);
 *   - each then takes the rec_mutex "pprof-lock", which the main thread
 *     holds for 60 ms meanwhile: lock waits in pprof_take_lock;
 *   - each allocates 2 MiB through rec_malloc in pprof_alloc_blocks
 *     (sampling interval 64 KiB) and frees it.
 * Exits 0 on success.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rec/builtins.h"
#include "rec/recorder.h"

void pprof_spin_a(uint64_t ns);
void pprof_spin_b(uint64_t ns);
void pprof_take_lock(void);
void pprof_alloc_blocks(size_t total);

static rec_mutex lock = REC_MUTEX_INITIALIZER("pprof-lock");
static pthread_barrier_t started;
static volatile uint64_t sink;

static uint64_t cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin(uint64_t ns)
{
	uint64_t end = cpu_now() + ns;
	uint64_t h = 1469598103934665603ull;
	while (cpu_now() < end)
		for (int i = 0; i < 1000; i++)
			h = (h ^ (uint64_t)i) * 1099511628211ull;
	sink = h;
}

__attribute__((noinline)) void pprof_spin_a(uint64_t ns)
{
	spin(ns);
	__asm__ volatile("" ::: "memory"); /* not a tail call: keep this frame */
}

__attribute__((noinline)) void pprof_spin_b(uint64_t ns)
{
	spin(ns);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void pprof_take_lock(void)
{
	rec_mutex_lock(&lock);
	rec_mutex_unlock(&lock);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void pprof_alloc_blocks(size_t total)
{
	void *blocks[512];
	size_t n = 0, size = 4096;
	for (size_t done = 0; done < total && n < 512; done += size) {
		blocks[n] = rec_malloc(size);
		if (blocks[n])
			memset(blocks[n++], 1, size);
	}
	for (size_t i = 0; i < n; i++)
		rec_free(blocks[i]);
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
	bool a = arg != NULL;
	pthread_setname_np(pthread_self(), a ? "spin-a" : "spin-b");
	(void)rec_recorder_attach_thread(rec_recorder_default());
	(void)rec_cpu_sampler_attach_thread();
	if (a)
		pprof_spin_a(150000000u);
	else
		pprof_spin_b(150000000u);
	pthread_barrier_wait(&started); /* main holds the lock now */
	pprof_take_lock();
	pprof_alloc_blocks(2u << 20);
	return NULL;
}

int main(void)
{
	if (!rec_recorder_default()) {
		fprintf(stderr, "rec_test_pprof_work: no default recorder (set REC_OUTPUT)\n");
		return 1;
	}
	rec_alloc_set_sample_interval(65536);
	pthread_barrier_init(&started, NULL, 3);
	pthread_t t[2];
	if (pthread_create(&t[0], NULL, worker, (void *)1) ||
	    pthread_create(&t[1], NULL, worker, NULL)) {
		fprintf(stderr, "rec_test_pprof_work: pthread_create failed\n");
		return 1;
	}
	rec_mutex_lock(&lock);
	pthread_barrier_wait(&started);
	struct timespec hold = { 0, 60000000 };
	nanosleep(&hold, NULL);
	rec_mutex_unlock(&lock);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	pthread_barrier_destroy(&started);
	return 0;
}
