/* SPDX-License-Identifier: MIT */
/*
 * bench/common.h - what the bench programs share.  Header only (static
 * inline): each program is still compiled from its one .c file by
 * bench/run.sh, bench/exporters.sh and bench/lttng.sh, with the same command.
 *
 * Every program:
 *   bench_now_s, bench_now_ns, bench_mono_ns, bench_cpu_ns, bench_sleep_ms
 *   bench_sort_median    sort doubles, return the median
 *   bench_names          the 16 pooled strings of the 3-field event
 *                        (as bench/jfr/BenchEvents.java)
 * Rounds on threads (hotpath.c, lttng/lttng_hot.c):
 *   struct bench_rounds, bench_rounds_run, bench_rounds_gather
 * Writer set-up (gen_events.c, gen_stacks.c; left out where BENCH_NO_REC is
 * defined before this header, as lttng_hot.c, which does not link librec):
 *   bench_writer_option, struct bench_out, bench_option_fn, bench_out_open, bench_out_close,
 *   bench_fail, bench_sample_fields, bench_sample_type
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- clocks ---------------------------------------------------------------- */
static inline double bench_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline double bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline uint64_t bench_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* the calling thread's CPU time: leaves out time it was preempted */
static inline double bench_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline void bench_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* ---- median ---------------------------------------------------------------- */
static inline int bench_cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorts v[0..n-1] ascending (v[0] is then the minimum, v[n-1] the maximum)
 * and returns the median; n >= 1. */
static inline double bench_sort_median(double *v, size_t n)
{
	qsort(v, n, sizeof(double), bench_cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- the 3-field event's pooled strings ------------------------------------ */
static const char *const bench_names[16] = {
	"alpha.events", "bravo.events", "charlie.evts", "delta.events",
	"echo.events1", "foxtrot.evts", "golf.events1", "hotel.events",
	"india.events", "juliet.evnts", "kilo.events1", "lima.events1",
	"mike.events1", "november.evt", "oscar.events", "papa.events1",
};

/* ---- timed rounds on 1..BENCH_MAX_THREADS threads -------------------------- */
/*
 * Each thread runs warm + rounds rounds; thread idx emits the events
 * idx * k * (warm + rounds) + round * k onwards, k per round.  All threads
 * start a round together at a barrier; only emit() is timed (wall clock,
 * and with_cpu: the thread's CPU time around that); after the round, thread 0
 * calls between() while the others wait, outside the timed part.  The timed
 * rounds' ns per event land in ns[idx][round] (and cpu[idx][round]).
 */
#define BENCH_MAX_THREADS 2
#define BENCH_MAX_ROUNDS 64

struct bench_rounds {
	long k;      /* events per round per thread */
	int warm;    /* untimed warm-up rounds */
	int rounds;  /* timed rounds, 1..BENCH_MAX_ROUNDS */
	int with_cpu;
	void *ctx;   /* passed to the hooks */
	void (*thread_begin)(void *ctx); /* each thread, before its rounds; may be NULL */
	void (*thread_end)(void *ctx);   /* each thread, after them; may be NULL */
	void (*emit)(void *ctx, long from, long k);
	void (*between)(void *ctx);      /* may be NULL */
	pthread_barrier_t bar;
	double ns[BENCH_MAX_THREADS][BENCH_MAX_ROUNDS];
	double cpu[BENCH_MAX_THREADS][BENCH_MAX_ROUNDS];
};

struct bench_rounds_targ {
	struct bench_rounds *b;
	int idx;
};

static inline void *bench_rounds_thread(void *arg)
{
	struct bench_rounds_targ *ta = arg;
	struct bench_rounds *b = ta->b;
	long base = (long)ta->idx * b->k * (b->warm + b->rounds);
	if (b->thread_begin)
		b->thread_begin(b->ctx);
	for (int round = 0; round < b->warm + b->rounds; round++) {
		pthread_barrier_wait(&b->bar);
		long from = base + (long)round * b->k;
		double c0 = b->with_cpu ? bench_cpu_ns() : 0;
		double t0 = bench_now_ns();
		b->emit(b->ctx, from, b->k);
		double t1 = bench_now_ns();
		double c1 = b->with_cpu ? bench_cpu_ns() : 0;
		if (round >= b->warm) {
			b->ns[ta->idx][round - b->warm] = (t1 - t0) / (double)b->k;
			b->cpu[ta->idx][round - b->warm] = (c1 - c0) / (double)b->k;
		}
		pthread_barrier_wait(&b->bar);
		if (ta->idx == 0 && b->between)
			b->between(b->ctx);
		pthread_barrier_wait(&b->bar);
	}
	if (b->thread_end)
		b->thread_end(b->ctx);
	return NULL;
}

/* Runs b's rounds on `threads` threads and waits for them.  Returns 0, or
 * -1 after a message on stderr (prog: the program's name); exits the process
 * if a thread cannot be created (the barrier would never complete). */
static inline int bench_rounds_run(struct bench_rounds *b, int threads, const char *prog)
{
	if (threads < 1 || threads > BENCH_MAX_THREADS || b->rounds < 1 || b->rounds > BENCH_MAX_ROUNDS) {
		fprintf(stderr, "%s: %d threads, %d rounds: out of range\n", prog, threads, b->rounds);
		return -1;
	}
	if (pthread_barrier_init(&b->bar, NULL, (unsigned)threads) != 0) {
		fprintf(stderr, "%s: pthread_barrier_init failed\n", prog);
		return -1;
	}
	pthread_t th[BENCH_MAX_THREADS];
	struct bench_rounds_targ ta[BENCH_MAX_THREADS];
	for (int t = 0; t < threads; t++) {
		ta[t].b = b;
		ta[t].idx = t;
		if (pthread_create(&th[t], NULL, bench_rounds_thread, &ta[t]) != 0) {
			fprintf(stderr, "%s: pthread_create failed\n", prog);
			exit(1);
		}
	}
	for (int t = 0; t < threads; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&b->bar);
	return 0;
}

/* The timed rounds' ns per event of all threads (cpu: the CPU-time ones)
 * into out; returns how many (threads * rounds). */
static inline size_t bench_rounds_gather(const struct bench_rounds *b, int threads, int cpu,
					 double out[BENCH_MAX_THREADS * BENCH_MAX_ROUNDS])
{
	size_t n = 0;
	for (int t = 0; t < threads; t++)
		for (int j = 0; j < b->rounds; j++)
			out[n++] = cpu ? b->cpu[t][j] : b->ns[t][j];
	return n;
}

#ifndef BENCH_NO_REC
/* ---- writer set-up (gen_events, gen_stacks) -------------------------------- */
#include <errno.h>
#include <sys/stat.h>

#include "rec/rec.h"

/* the 3-field event: a pooled string, an i64 and an i32 */
static const rec_field bench_sample_fields[3] = {
	{ "name", "Name", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "value", "Value", "", REC_TYPE_I64, REC_UNIT_NONE },
	{ "count", "Count", "", REC_TYPE_I32, REC_UNIT_NONE },
};

static inline rec_type bench_sample_type(uint32_t id, uint32_t flags)
{
	const rec_type t = {
		.id = id,
		.flags = flags,
		.name = "bench.Sample",
		.label = "Sample",
		.description = "benchmark event: a pooled string, an i64 and an i32",
		.category = "Bench",
		.field_count = 3,
		.fields = bench_sample_fields,
	};
	return t;
}

/* which writer options bench_writer_option() takes besides --codec */
#define BENCH_OPT_LEVEL 0x1u      /* --level L */
#define BENCH_OPT_CHUNK_SIZE 0x2u /* --chunk-size BYTES */

/* argv[*i] as a writer option: --codec zstd|lz4|none, and those of accept.
 * Returns 1 if it is one (*i then at its value, opts set), 0 if it is not
 * one or has no value after it, -1 if the codec is unknown. */
static inline int bench_writer_option(int argc, char **argv, int *i, rec_writer_options *opts,
				      unsigned accept)
{
	const char *a = argv[*i];
	if (*i + 1 >= argc)
		return 0;
	if (strcmp(a, "--codec") == 0) {
		const char *c = argv[++*i];
		if (strcmp(c, "zstd") == 0)
			opts->codec = REC_CODEC_ZSTD;
		else if (strcmp(c, "lz4") == 0)
			opts->codec = REC_CODEC_LZ4;
		else if (strcmp(c, "none") == 0)
			opts->codec = REC_CODEC_NONE;
		else
			return -1;
	} else if (strcmp(a, "--layout") == 0) { /* how EVENTS is stored (format 1.3) */
		const char *l = argv[++*i];
		if (strcmp(l, "one") == 0)
			opts->events_layout = REC_EVENTS_ONE_STREAM;
		else if (strcmp(l, "split") == 0)
			opts->events_layout = REC_EVENTS_SPLIT;
		else
			return -1;
	} else if ((accept & BENCH_OPT_LEVEL) && strcmp(a, "--level") == 0) {
		opts->level = (int32_t)strtol(argv[++*i], NULL, 10);
	} else if ((accept & BENCH_OPT_CHUNK_SIZE) && strcmp(a, "--chunk-size") == 0) {
		opts->chunk_events_size = (uint32_t)strtoul(argv[++*i], NULL, 10);
	} else {
		return 0;
	}
	return 1;
}

/* "prog: what: status (writer message)" on stderr; returns the exit status 1 */
static inline int bench_fail(const char *prog, const char *what, rec_status st, rec_writer *w)
{
	fprintf(stderr, "%s: %s: %s (%s)\n", prog, what, rec_strerror(st), w ? rec_writer_errmsg(w) : "");
	return 1;
}

/* A generator's output: N events into FILE through a writer, timed from
 * open to close. */
struct bench_out {
	const char *prog;          /* for messages */
	rec_writer_options opts;   /* set by the caller (bench_writer_option) */
	unsigned long long n;      /* the operand N */
	const char *path;          /* the operand FILE */
	rec_writer *w;
	double t0, t1;             /* bench_now_s() before open, after close */
	long long size;            /* FILE's size after close */
};

/* A generator's own options: argv[*i] is one (1, *i then at its last
 * word) or not (0). */
typedef int bench_option_fn(int argc, char **argv, int *i, void *ctx);

/* The command line [OPTIONS] N FILE: the writer options of accept
 * (bench_writer_option) and those extra() takes (may be NULL), then the
 * operands (N a positive integer); then opens the writer on FILE.  Returns 0,
 * 2 for a usage error (the caller prints its usage), or 1 after a message. */
static inline int bench_out_open(struct bench_out *o, int argc, char **argv, unsigned accept,
				 bench_option_fn *extra, void *ctx)
{
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		int r = bench_writer_option(argc, argv, &i, &o->opts, accept);
		if (r < 0 || (r == 0 && !(extra && extra(argc, argv, &i, ctx))))
			return 2;
	}
	if (argc - i != 2)
		return 2;
	char *end = NULL;
	errno = 0;
	o->n = strtoull(argv[i], &end, 10);
	if (errno || !end || *end || o->n == 0)
		return 2;
	o->path = argv[i + 1];
	o->t0 = bench_now_s();
	o->w = NULL;
	rec_status st = rec_writer_open_path(&o->w, o->path, &o->opts);
	if (st != REC_OK)
		return bench_fail(o->prog, o->path, st, NULL);
	return 0;
}

/* Closes the writer, then t1 and size.  Returns 0, or 1 after a message. */
static inline int bench_out_close(struct bench_out *o)
{
	rec_status st = rec_writer_close(o->w);
	o->w = NULL;
	if (st != REC_OK)
		return bench_fail(o->prog, "close", st, NULL);
	o->t1 = bench_now_s();
	struct stat sb;
	if (stat(o->path, &sb) != 0) {
		fprintf(stderr, "%s: %s: %s\n", o->prog, o->path, strerror(errno));
		return 1;
	}
	o->size = (long long)sb.st_size;
	return 0;
}
#endif /* BENCH_NO_REC */

#endif /* BENCH_COMMON_H */
