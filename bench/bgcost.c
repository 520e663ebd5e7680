/* SPDX-License-Identifier: MIT */
/*
 * bgcost - what the recorder's background thread costs while a program
 * records at a steady rate (bench/bgcost.sh; not built by make).
 *
 *   bgcost [--rate N] [--threads T] [--seconds S] [--warm W] [--codec C]
 *          [--level L] FILE
 *   REC_OUTPUT=FILE [REC_OPTIONS=...] bgcost --default [...]
 *
 * T threads emit the 3-field event of gen_events.c / hotpath.c (a pooled
 * string, an i64 i * 7919, an i64 i % 1000, the thread) at N events a second
 * in all (default 25000 on 8 threads, about the keep-alive service's request
 * rate at 70 % of capacity), in slices of 2 ms, for W seconds of warm-up and
 * S measured seconds (--warm 0: measured from the recorder's open, the
 * background thread's CPU since it started and every event, so that the
 * start-up's one-time work is in whichever way it falls; --rate 0: the threads only sleep, an idle recorder:
 * its wake-ups), into FILE with the recorder's defaults (codec C and
 * level L when given: none, zstd, lz4).  --default records into the default
 * recorder that REC_OUTPUT opened (the set-up of an unmodified service: the
 * CPU sampler and the process statistics on; REC_OPTIONS applies), after
 * 0.3 s of CPU in qsort (burn_cpu(): the symbolizer's one-time read of
 * libc's and the driver's debug information falls in the warm-up).  Over
 * the measured seconds:
 *
 *   bg_ns_per_event  CPU time of the background thread ("rec-writer": its
 *                    thread CPU clock) / events the recorder took
 *   wakeups_per_s    its voluntary context switches a second
 *                    (/proc/self/task/TID/status): each is one sleep, so one
 *                    wake-up
 *   burst_us         the largest stretch of its work: a monitor thread reads
 *                    its CPU clock every 1 ms; consecutive readings that grew
 *                    form one stretch, whose CPU time is summed
 *   bursts_over_1ms  stretches of more than 1 ms of CPU
 * and, of the whole file (closed): bytes_per_event (file bytes / events the
 * recorder took, its own rec.* events included).  One line:
 *   bg_ns_per_event=X wakeups_per_s=W burst_us=B bursts_over_1ms=K
 *   events=E bytes_per_event=Y dropped=D
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rec/recorder.h"
#include "common.h"

#define SLICE_NS 2000000L

static rec_event_type *g_type;
static rec_str g_ids[16];
static long g_per_slice;
static volatile int g_stop;
static volatile int g_measuring;

static void *emitter(void *arg)
{
	long base = (long)(intptr_t)arg * 1000000000L, i = 0;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!g_stop) {
		for (long k = 0; k < g_per_slice; k++, i++) {
			rec_emit e;
			long v = base + i;
			if (rec_emit_begin(&e, g_type)) {
				rec_emit_string(&e, g_ids[v & 15]);
				rec_emit_i64(&e, (int64_t)((uint64_t)v * 7919u));
				rec_emit_i64(&e, (int64_t)(v % 1000));
				rec_emit_commit(&e);
			}
		}
		next.tv_nsec += SLICE_NS;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return NULL;
}

/* The background thread's id: the task named rec-writer. */
static int find_bg_tid(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int tid = 0;
	if (!d)
		return 0;
	while (!tid && (de = readdir(d)) != NULL) {
		char path[300], comm[64] = "";
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof comm, f) && strncmp(comm, "rec-writer", 10) == 0)
			tid = atoi(de->d_name);
		fclose(f);
	}
	closedir(d);
	return tid;
}

static clockid_t g_bg_clock;

static uint64_t bg_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(g_bg_clock, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long voluntary_switches(int tid)
{
	char path[64], line[256];
	long v = -1;
	snprintf(path, sizeof path, "/proc/self/task/%d/status", tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static uint64_t g_burst_max, g_bursts_1ms;

static void *monitor(void *arg)
{
	(void)arg;
	struct timespec next;
	uint64_t prev = bg_cpu_ns(), stretch = 0;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!g_stop) {
		next.tv_nsec += 1000000L;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		uint64_t now = bg_cpu_ns();
		if (now > prev) {
			stretch += now - prev;
		} else if (stretch) {
			if (g_measuring) {
				if (stretch > g_burst_max)
					g_burst_max = stretch;
				g_bursts_1ms += stretch > 1000000u;
			}
			stretch = 0;
		}
		prev = now;
	}
	return NULL;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* s seconds of this thread's CPU in libc's code and the driver's (qsort
 * with a comparison of ours): --default's CPU sampler takes samples there,
 * so the symbolizer's one-time read of their debug information (libc's
 * from Debian's libc6-dbg when installed: 24-46 ms of zlib's inflate on the
 * background thread) comes in the warm-up, not in some measured runs and
 * not in others. */
static void burn_cpu(double s)
{
	static int buf[4096];
	struct timespec t0, t;
	unsigned x = 1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (size_t i = 0; i < sizeof buf / sizeof buf[0]; i++)
			buf[i] = (int)(x = x * 1103515245u + 12345u);
		qsort(buf, sizeof buf / sizeof buf[0], sizeof buf[0], cmp_int);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 < s);
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) != 0)
		;
}

int main(int argc, char **argv)
{
	long rate = 25000;
	int threads = 8;
	double seconds = 6, warm = 1.5;
	const char *path = NULL, *codec = NULL;
	int level = 0, use_default = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rate") && i + 1 < argc)
			rate = atol(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--warm") && i + 1 < argc)
			warm = atof(argv[++i]);
		else if (!strcmp(argv[i], "--codec") && i + 1 < argc)
			codec = argv[++i];
		else if (!strcmp(argv[i], "--level") && i + 1 < argc)
			level = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--default"))
			use_default = 1;
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else {
			fprintf(stderr, "usage: bgcost [--rate N] [--threads T] [--seconds S] [--warm W] "
					"[--codec none|zstd|lz4] [--level L] FILE\n");
			return 2;
		}
	}
	if (use_default && !path)
		path = getenv("REC_OUTPUT");
	if (!path || threads < 1 || threads > 64 || rate < 0 || (rate > 0 && rate < threads)) {
		fprintf(stderr, "bgcost: bad arguments\n");
		return 2;
	}
	g_per_slice = rate / threads / (1000000000L / SLICE_NS);
	if (g_per_slice < 1 && rate > 0)
		g_per_slice = 1;

	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	o.level = level;
	if (codec)
		o.codec = !strcmp(codec, "none") ? REC_CODEC_NONE
			  : !strcmp(codec, "lz4") ? REC_CODEC_LZ4 : REC_CODEC_ZSTD;
	rec_recorder *r = use_default ? rec_recorder_default() : NULL;
	rec_status s = r ? REC_OK : use_default ? REC_ERR_STATE : rec_recorder_open(&r, &o);
	if (s != REC_OK) {
		fprintf(stderr, "bgcost: rec_recorder_open(%s): %s\n", path, rec_strerror(s));
		return 1;
	}
	const rec_type def = bench_sample_type(0, REC_EVENT_HAS_THREAD);
	if (rec_recorder_register_type(r, &def, 0, 0, &g_type) != REC_OK) {
		fprintf(stderr, "bgcost: register_type failed\n");
		return 1;
	}
	for (int j = 0; j < 16; j++)
		g_ids[j] = rec_recorder_intern(r, bench_names[j]);
	int tid = 0;
	for (int k = 0; k < 100 && !(tid = find_bg_tid()); k++)
		sleep_s(0.01);
	if (!tid) {
		fprintf(stderr, "bgcost: no rec-writer thread\n");
		return 1;
	}
	g_bg_clock = (clockid_t)((~(unsigned)tid << 3) | 6); /* CPUCLOCK_SCHED, per thread */

	if (use_default)
		burn_cpu(0.3);
	pthread_t th[64], mon;
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, emitter, (void *)(intptr_t)i);
	pthread_create(&mon, NULL, monitor, NULL);
	sleep_s(warm);
	rec_recorder_stats st0 = { 0 }, st1;
	uint64_t cpu0 = 0;
	if (warm > 0) { /* --warm 0: from the open (the thread's CPU since it started) */
		rec_recorder_get_stats(r, &st0);
		cpu0 = bg_cpu_ns();
	}
	long sw0 = voluntary_switches(tid);
	g_measuring = 1;
	sleep_s(seconds);
	g_measuring = 0;
	rec_recorder_get_stats(r, &st1);
	uint64_t cpu1 = bg_cpu_ns();
	long sw1 = voluntary_switches(tid);
	g_stop = 1;
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	pthread_join(mon, NULL);
	rec_recorder_flush(r);
	rec_recorder_stats stf;
	rec_recorder_get_stats(r, &stf);
	rec_recorder_close(r);
	struct stat sb;
	if (stat(path, &sb) != 0) {
		fprintf(stderr, "bgcost: %s: no file\n", path);
		return 1;
	}
	uint64_t ev = st1.events - st0.events;
	printf("bg_ns_per_event=%.1f wakeups_per_s=%.1f burst_us=%.0f bursts_over_1ms=%llu "
	       "events=%llu bytes_per_event=%.3f dropped=%llu\n",
	       ev ? (double)(cpu1 - cpu0) / (double)ev : 0.0, (double)(sw1 - sw0) / seconds,
	       (double)g_burst_max / 1e3, (unsigned long long)g_bursts_1ms,
	       (unsigned long long)ev, stf.events ? (double)sb.st_size / (double)stf.events : 0.0,
	       (unsigned long long)stf.dropped);
	return 0;
}
