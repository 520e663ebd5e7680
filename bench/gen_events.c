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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "rec/rec.h"

static const char *const names[16] = {
	"alpha.events", "bravo.events", "charlie.evts", "delta.events",
	"echo.events1", "foxtrot.evts", "golf.events1", "hotel.events",
	"india.events", "juliet.evnts", "kilo.events1", "lima.events1",
	"mike.events1", "november.evt", "oscar.events", "papa.events1",
};

static const rec_field sample_fields[3] = {
	{ "name", "Name", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "value", "Value", "", REC_TYPE_I64, REC_UNIT_NONE },
	{ "count", "Count", "", REC_TYPE_I32, REC_UNIT_NONE },
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int usage(void)
{
	fprintf(stderr, "usage: gen_events [--codec zstd|lz4|none] [--level L] [--chunk-size BYTES] [--no-clock]\n"
		"                  [--value-step S] N FILE\n");
	return 2;
}

static int fail(const char *what, rec_status st, rec_writer *w)
{
	fprintf(stderr, "gen_events: %s: %s (%s)\n", what, rec_strerror(st),
		w ? rec_writer_errmsg(w) : "");
	return 1;
}

int main(int argc, char **argv)
{
	rec_writer_options opts = REC_WRITER_OPTIONS_INIT;
	int use_clock = 1;
	unsigned long long step = 7919;
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		if (strcmp(argv[i], "--codec") == 0 && i + 1 < argc) {
			const char *c = argv[++i];
			if (strcmp(c, "zstd") == 0)
				opts.codec = REC_CODEC_ZSTD;
			else if (strcmp(c, "lz4") == 0)
				opts.codec = REC_CODEC_LZ4;
			else if (strcmp(c, "none") == 0)
				opts.codec = REC_CODEC_NONE;
			else
				return usage();
		} else if (strcmp(argv[i], "--level") == 0 && i + 1 < argc) {
			opts.level = (int32_t)strtol(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--value-step") == 0 && i + 1 < argc) {
			step = strtoull(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--chunk-size") == 0 && i + 1 < argc) {
			opts.chunk_events_size = (uint32_t)strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--no-clock") == 0) {
			use_clock = 0;
		} else {
			return usage();
		}
	}
	if (argc - i != 2)
		return usage();
	char *end = NULL;
	errno = 0;
	unsigned long long n = strtoull(argv[i], &end, 10);
	if (errno || !end || *end || n == 0)
		return usage();
	const char *path = argv[i + 1];

	double t0 = now_s();
	rec_writer *w = NULL;
	rec_status st = rec_writer_open_path(&w, path, &opts);
	if (st != REC_OK)
		return fail(path, st, NULL);

	const rec_type type = {
		.id = 1,
		.flags = REC_EVENT_HAS_THREAD,
		.name = "bench.Sample",
		.label = "Sample",
		.description = "benchmark event: a pooled string, an i64 and an i32",
		.category = "Bench",
		.field_count = 3,
		.fields = sample_fields,
	};
	st = rec_writer_add_type(w, &type);
	if (st != REC_OK)
		return fail("add_type", st, w);
	uint64_t ids[16];
	for (int k = 0; k < 16; k++) {
		st = rec_writer_intern_string(w, names[k], strlen(names[k]), &ids[k]);
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

	uint64_t base = mono_ns();
	for (unsigned long long k = 0; k < n; k++) {
		uint64_t ticks = use_clock ? mono_ns() : base + k * 50u;
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
	st = rec_writer_close(w);
	if (st != REC_OK)
		return fail("close", st, NULL);
	double t1 = now_s();

	struct stat sb;
	if (stat(path, &sb) != 0) {
		fprintf(stderr, "gen_events: %s: %s\n", path, strerror(errno));
		return 1;
	}
	double s = t1 - t0;
	printf("events=%llu seconds=%.3f events_per_s=%.0f bytes=%lld bytes_per_event=%.3f\n", n, s,
	       (double)n / s, (long long)sb.st_size, (double)sb.st_size / (double)n);
	return 0;
}
