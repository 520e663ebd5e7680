/* SPDX-License-Identifier: MIT */
/*
 * plain_alloc.c - a program that knows nothing of rec (built without
 * librec), for the preload library's tests: 4 threads allocate through
 * every interposed allocation function (malloc, calloc, realloc,
 * posix_memalign, aligned_alloc, memalign, valloc), free most of it and keep
 * LIVE bytes; a constructor allocates before main; dlsym/dlerror allocate
 * inside libdl.  It prints, one "key value" a line, the bytes it asked for
 * in all (a realloc counts its new size) and the bytes still allocated at
 * exit.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define ROUNDS 4000
#define KEEP_BLOCK (64 * 1024)
#define KEEP_PER_THREAD 32 /* 2 MiB live per thread, 8 MiB in all */

static unsigned long long total[THREADS + 1], live;
/* Every block goes through here, so the compiler keeps each allocation (it
 * may drop a malloc/free pair whose block nobody uses). */
static void *volatile sink;
#define USE(p) (sink = (p))
static void *early;

__attribute__((constructor)) static void early_alloc(void)
{
	early = malloc(1000); /* before main: kept until exit */
	USE(early);
	total[THREADS] += 1000;
}

static void *work(void *arg)
{
	unsigned long long n = 0, id = (unsigned long long)(uintptr_t)arg;
	static __thread void *keep[KEEP_PER_THREAD];
	char name[16];
	snprintf(name, sizeof name, "alloc-%llu", id);
	pthread_setname_np(pthread_self(), name);
	for (int i = 0; i < ROUNDS; i++) {
		size_t sz = 16 + (size_t)((i * 7919 + (int)id * 31) % 4000);
		void *p = malloc(sz), *q = calloc(4, sz), *r;
		n += sz + 4 * sz;
		p = realloc(p, 2 * sz);
		n += 2 * sz;
		if (posix_memalign(&r, 64, sz) == 0)
			n += sz;
		void *a = aligned_alloc(256, 512), *m = memalign(128, sz), *v = valloc(100);
		n += 512 + sz + 100;
		USE(p), USE(q), USE(r), USE(a), USE(m), USE(v);
		memset(p, 1, 2 * sz);
		free(p);
		free(q);
		free(r);
		free(a);
		free(m);
		free(v);
	}
	for (int i = 0; i < KEEP_PER_THREAD; i++) {
		keep[i] = malloc(KEEP_BLOCK);
		USE(keep[i]);
		memset(keep[i], 2, KEEP_BLOCK);
		n += KEEP_BLOCK;
	}
	total[id] = n;
	__atomic_add_fetch(&live, (unsigned long long)KEEP_PER_THREAD * KEEP_BLOCK, __ATOMIC_RELAXED);
	return NULL; /* keep[] is not freed: live at exit */
}

int main(void)
{
	pthread_t th[THREADS];
	/* dlsym/dlerror allocate inside libdl (dlerror's message). */
	if (dlsym(RTLD_DEFAULT, "rec_no_such_symbol_anywhere") == NULL)
		(void)dlerror();
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, work, (void *)(uintptr_t)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	unsigned long long sum = 0;
	for (int i = 0; i <= THREADS; i++)
		sum += total[i];
	printf("allocated %llu\nlive %llu\n", sum, live + 1000);
	fflush(stdout);
	return early != NULL ? 0 : 1;
}
