/* SPDX-License-Identifier: MIT */
/*
 * cold_emit.c - what one event costs the emitting thread when its caches are
 * cold, as in a service whose request touches megabytes between two events
 * (issue 22: the persistent-connection setting, where the recording's cost is
 * a few hundred nanoseconds a request).  The event is requestwatch's
 * app.Request: a span's end, the path as a string, the status, commit.
 *
 *   cold_emit dyn|interned [EVICT_KIB] [ITERS]
 *
 * THREADS threads take turns under one mutex (one runs, the others wait: the
 * program measures latency, not contention); between two of its events each
 * walks a private buffer of EVICT_KIB (default 4096), a store every 64 bytes,
 * which pushes the recorder's lines (its thread buffer, the dynamic-string
 * cache, the string table) out of the caches.  The emit is timed alone, from
 * the span's end to the commit, with the TSC (bench/tsc.h) inside lfence
 * fences.  dyn: the path by rec_emit_string_dyn_len (what requestwatch does);
 * interned: the same string interned once before (rec_emit_string), the floor
 * the dynamic string's cache is measured against.  The recorder is
 * REC_OUTPUT's (the caller sets it).  Prints one line:
 *   mode=dyn evict_kib=4096 emits=48000 median=231 p25=210 p75=273 iqm=229.4
 * in TSC ticks (iqm: the mean of the middle half, which resolves differences
 * finer than the counter's step; this host's TSC moves in steps of 21).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/recorder.h"
#include "tsc.h"

#define THREADS 16

static const rec_field g_fields[] = {
	{ "path", "Path", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "status", "Status", "", REC_TYPE_U16, REC_UNIT_NONE },
};
static const rec_type g_def = { 0, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD, "app.Request",
				"Request", "", "app", 2, g_fields };
static rec_event_type *g_type;
static rec_str g_path;
static int g_interned;
static size_t g_evict = (size_t)4096 << 10;
static int g_iters = 3000;
static pthread_mutex_t g_turn = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *g_ticks;

static inline uint64_t fenced_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("lfence" ::: "memory");
	uint64_t t = bench_tsc();
	__asm__ __volatile__("lfence" ::: "memory");
	return t;
#else
	return bench_tsc();
#endif
}

static void *worker(void *arg)
{
	const int id = (int)(intptr_t)arg;
	volatile unsigned char *buf = malloc(g_evict);
	if (buf == NULL)
		return NULL;
	memset((void *)buf, 1, g_evict);
	for (int i = 0; i < g_iters; i++) {
		pthread_mutex_lock(&g_turn);
		for (size_t k = 0; k < g_evict; k += 64)
			buf[k]++;
		rec_span s;
		rec_span_begin(&s, g_type);
		const uint64_t t0 = fenced_tsc();
		rec_emit e;
		if (rec_span_end(&s, &e)) {
			if (g_interned)
				rec_emit_string(&e, g_path);
			else
				rec_emit_string_dyn_len(&e, "/requests/fast", 14);
			rec_emit_u64(&e, 200);
			rec_emit_commit(&e);
		}
		g_ticks[(size_t)id * (size_t)g_iters + (size_t)i] = fenced_tsc() - t0;
		pthread_mutex_unlock(&g_turn);
	}
	free((void *)buf);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "dyn") != 0 && strcmp(argv[1], "interned") != 0)) {
		fprintf(stderr, "usage: cold_emit dyn|interned [EVICT_KIB] [ITERS]\n");
		return 2;
	}
	g_interned = strcmp(argv[1], "interned") == 0;
	if (argc > 2)
		g_evict = (size_t)strtoul(argv[2], NULL, 10) << 10;
	if (argc > 3)
		g_iters = atoi(argv[3]);
	if (g_evict < 64 || g_iters < 1) {
		fprintf(stderr, "cold_emit: EVICT_KIB and ITERS must be positive\n");
		return 2;
	}
	rec_recorder *r = rec_recorder_default();
	if (r == NULL) {
		fprintf(stderr, "cold_emit: no recorder (set REC_OUTPUT)\n");
		return 1;
	}
	if (rec_type_declare(&g_def, 0, 0, &g_type) != REC_OK) {
		fprintf(stderr, "cold_emit: declaring app.Request failed\n");
		return 1;
	}
	g_path = rec_recorder_intern(r, "/requests/fast");
	const size_t n = (size_t)THREADS * (size_t)g_iters;
	g_ticks = calloc(n, sizeof *g_ticks);
	if (g_ticks == NULL)
		return 1;
	pthread_t th[THREADS];
	for (intptr_t i = 0; i < THREADS; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i) != 0) {
			fprintf(stderr, "cold_emit: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	qsort(g_ticks, n, sizeof *g_ticks, cmp_u64);
	double iqm = 0;
	for (size_t i = n / 4; i < n * 3 / 4; i++)
		iqm += (double)g_ticks[i];
	iqm /= (double)(n * 3 / 4 - n / 4);
	printf("mode=%s evict_kib=%zu emits=%zu median=%llu p25=%llu p75=%llu iqm=%.1f\n", argv[1],
	       g_evict >> 10, n, (unsigned long long)g_ticks[n / 2], (unsigned long long)g_ticks[n / 4],
	       (unsigned long long)g_ticks[n * 3 / 4], iqm);
	free(g_ticks);
	return 0;
}
