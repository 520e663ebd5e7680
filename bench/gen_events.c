/* SPDX-License-Identifier: MIT */
/*
 * gen_events - the benchmark event generator (bench/run.sh; not built by make).
 *
 * Writes N events of one 3-field type through the public writer API
 * (rec_writer_begin/put/end) into a file, with the value sequence of
 * bench/jfr/BenchEvents.java:  name = NAMES[i % 16] (pooled string),
 * value = i * 7919 (i64), count = i % 1000 (i32).  Each event carries a
 * thread reference (one thread, "main"), as JFR's eventThread does, and a
 * CLOCK_MONOTONIC timestamp read per event.
 *
 *   gen_events [--codec zstd|lz4|none] [--level L] [--chunk-size BYTES] [--no-clock]
 *              [--value-step S] N FILE
 *
 * Prints one line: events=N seconds=S events_per_s=E bytes=B bytes_per_event=X.
 * seconds covers open .. close (compression and writes included).  --no-clock uses ticks = i * 50 instead of the clock;
 * --chunk-size sets the raw event bytes per chunk (0 = the writer's 4 MiB);
 * --value-step S makes value = i * S (default 7919, as the JFR program).
 */
#include <stdio.h>
#include <string.h>

#include "common.h"

static int usage(void)
{
	fprintf(stderr, "usage: gen_events [--codec zstd|lz4|none] [--layout one|split] [--level L] [--chunk-size BYTES] [--no-clock]\n"
		"                  [--value-step S] N FILE\n");
	return 2;
}

static int fail(const char *what, rec_status st, rec_writer *w)
{
	return bench_fail("gen_events", what, st, w);
}

struct gen_opts {
	int use_clock;
	unsigned long long step;
};

/* --value-step S, --no-clock */
static int gen_option(int argc, char **argv, int *i, void *ctx)
{
	struct gen_opts *g = ctx;
	if (strcmp(argv[*i], "--value-step") == 0 && *i + 1 < argc)
		g->step = strtoull(argv[++*i], NULL, 10);
	else if (strcmp(argv[*i], "--no-clock") == 0)
		g->use_clock = 0;
	else
		return 0;
	return 1;
}

int main(int argc, char **argv)
{
	struct bench_out out = { .prog = "gen_events", .opts = REC_WRITER_OPTIONS_INIT };
	struct gen_opts g = { .use_clock = 1, .step = 7919 };
	int rc = bench_out_open(&out, argc, argv, BENCH_OPT_LEVEL | BENCH_OPT_CHUNK_SIZE, gen_option, &g);
	if (rc != 0)
		return rc == 2 ? usage() : rc;
	rec_writer *w = out.w;
	const unsigned long long n = out.n, step = g.step;
	const int use_clock = g.use_clock;

	const rec_type type = bench_sample_type(1, REC_EVENT_HAS_THREAD);
	rec_status st = rec_writer_add_type(w, &type);
	if (st != REC_OK)
		return fail("add_type", st, w);
	uint64_t ids[16];
	for (int k = 0; k < 16; k++) {
		st = rec_writer_intern_string(w, bench_names[k], strlen(bench_names[k]), &ids[k]);
		if (st != REC_OK)
			return fail("intern_string", st, w);
	}
	uint64_t thread_name = 0;
	st = rec_writer_intern_string(w, "main", 4, &thread_name);
	if (st != REC_OK)
		return fail("intern_string", st, w);
	st = rec_writer_define_thread(w, 1, 1, thread_name);
	if (st != REC_OK)
		return fail("define_thread", st, w);

	uint64_t base = bench_mono_ns();
	for (unsigned long long k = 0; k < n; k++) {
		uint64_t ticks = use_clock ? bench_mono_ns() : base + k * 50u;
		st = rec_writer_begin(w, 1, ticks, 0, 1, 0);
		if (st == REC_OK)
			st = rec_writer_put_u64(w, ids[k & 15]);
		if (st == REC_OK)
			st = rec_writer_put_i64(w, (int64_t)(k * step));
		if (st == REC_OK)
			st = rec_writer_put_i64(w, (int64_t)(k % 1000u));
		if (st == REC_OK)
			st = rec_writer_end(w);
		if (st != REC_OK)
			return fail("event", st, w);
	}
	if (bench_out_close(&out) != 0)
		return 1;
	double s = out.t1 - out.t0;
	printf("events=%llu seconds=%.3f events_per_s=%.0f bytes=%lld bytes_per_event=%.3f\n", n, s,
	       (double)n / s, out.size, (double)out.size / (double)n);
	return 0;
}
