/* SPDX-License-Identifier: MIT */
/*
 * plain_short_threads.c - a program that knows nothing of rec (built
 * without librec) and runs short threads one after another: for each
 * argument N:MS, N threads, each spinning MS ms of its own CPU time in
 * short_spin() and then ending (a thread per request, at the extreme).
 * Prints "thread GROUP TID CPU_NS" for each thread (its CPU time as its own
 * clock counted it at its end, start included) and "total CPU_NS".
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static uint64_t cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

__attribute__((noinline)) static void short_spin(uint64_t ns)
{
	const uint64_t t0 = cpu_ns();
	while (cpu_ns() - t0 < ns)
		for (int i = 0; i < 200; i++)
			sink += (unsigned long)i;
}

typedef struct job {
	uint64_t ns, cpu;
	pid_t tid;
} job;

static void *short_thread_main(void *p)
{
	job *j = p;
	j->tid = gettid();
	short_spin(j->ns);
	j->cpu = cpu_ns();
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t total = 0;
	for (int g = 1; g < argc; g++) {
		char *end;
		const long n = strtol(argv[g], &end, 10);
		const double ms = *end == ':' ? strtod(end + 1, &end) : 0;
		if (n <= 0 || n > 100000 || ms <= 0 || *end != '\0') {
			fprintf(stderr, "usage: plain_short_threads N:MS...\n");
			return 2;
		}
		for (long i = 0; i < n; i++) {
			job j = { (uint64_t)(ms * 1e6), 0, 0 };
			pthread_t th;
			if (pthread_create(&th, NULL, short_thread_main, &j) != 0 ||
			    pthread_join(th, NULL) != 0) {
				perror("pthread_create");
				return 1;
			}
			printf("thread %d %d %llu\n", g, (int)j.tid, (unsigned long long)j.cpu);
			total += j.cpu;
		}
	}
	printf("total %llu\n", (unsigned long long)total);
	return 0;
}
