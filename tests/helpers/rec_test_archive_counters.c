/* SPDX-License-Identifier: MIT */
/*
 * rec_test_archive_counters.c - writes the recording of tests/unit/
 * test_counters.c to argv[1]: five runs of a service (four end without a
 * FINAL chunk), counters "requests" (total 88, 1 reset) and "errors" (total
 * 5, 1 reset), for CLI tests of tools that show counter totals.
 * Exits 0 on success, 1 on any failure.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec/rec.h"

#define CHECK(expr, want)                                                              \
	do {                                                                           \
		if ((expr) != (want)) {                                                \
			fprintf(stderr, "rec_test_archive_counters: %s failed\n", #expr); \
			exit(1);                                                       \
		}                                                                      \
	} while (0)
#define CHECK_TRUE(expr) CHECK(!!(expr), 1)

#define T_COUNTER 24u /* rec.Counter, as the recorder declares it */
#define T_OTHER 7u

static const rec_field counter_fields[] = {
	{ "name", "Name", "counter name", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "value", "Value", "total since the counter was created", REC_TYPE_U64, REC_UNIT_COUNT },
};
static const rec_type counter_type = {
	T_COUNTER, 0, "rec.Counter", "Counter", "", "rec/Metrics", 2, counter_fields,
};
/* Another type with the same field names: must be ignored. */
static const rec_type other_type = {
	T_OTHER, 0, "app.NotACounter", "", "", "app", 2, counter_fields,
};

/* One run: samples of "requests" (and of "errors" when given), one chunk per
 * sample so that chunk boundaries fall between samples; final = clean close. */
typedef struct run_spec {
	const uint64_t *requests;
	size_t nreq;
	const uint64_t *errors;
	size_t nerr;
	int final;
} run_spec;

static void write_run(int fd, int k, const run_spec *rs)
{
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.codec = REC_CODEC_LZ4;
	o.run_id = 0xC0FFEE00ull + (uint64_t)k;
	o.pid = 1000u + (uint32_t)k;
	o.process_start_ns = 1764670000000000000ll + (int64_t)k * 60000000000ll;
	o.anchor_wall_ns = o.process_start_ns;
	o.anchor_ticks = 1000;
	rec_writer *w = NULL;
	CHECK(rec_writer_open_fd(&w, fd, &o), REC_OK);
	CHECK(rec_writer_add_type(w, &counter_type), REC_OK);
	CHECK(rec_writer_add_type(w, &other_type), REC_OK);
	uint64_t s_req, s_err;
	CHECK(rec_writer_intern_string(w, "requests", 8, &s_req), REC_OK);
	CHECK(rec_writer_intern_string(w, "errors", 6, &s_err), REC_OK);
	/* A first chunk without any counter (the default reading skips it). */
	CHECK(rec_writer_begin(w, T_OTHER, 1500, 0, 0, 0), REC_OK);
	CHECK(rec_writer_put_u64(w, s_req), REC_OK);
	CHECK(rec_writer_put_u64(w, 777777), REC_OK);
	CHECK(rec_writer_end(w), REC_OK);
	CHECK(rec_writer_flush(w), REC_OK);
	uint64_t t = 2000;
	size_t n = rs->nreq > rs->nerr ? rs->nreq : rs->nerr;
	for (size_t i = 0; i < n; i++, t += 1000000) {
		if (i < rs->nreq) {
			CHECK(rec_writer_begin(w, T_COUNTER, t, 0, 0, 0), REC_OK);
			CHECK(rec_writer_put_u64(w, s_req), REC_OK);
			CHECK(rec_writer_put_u64(w, rs->requests[i]), REC_OK);
			CHECK(rec_writer_end(w), REC_OK);
			/* a decoy with a huge value in between */
			CHECK(rec_writer_begin(w, T_OTHER, t + 1, 0, 0, 0), REC_OK);
			CHECK(rec_writer_put_u64(w, s_req), REC_OK);
			CHECK(rec_writer_put_u64(w, 999999999), REC_OK);
			CHECK(rec_writer_end(w), REC_OK);
		}
		if (i < rs->nerr) {
			CHECK(rec_writer_begin(w, T_COUNTER, t + 2, 0, 0, 0), REC_OK);
			CHECK(rec_writer_put_u64(w, s_err), REC_OK);
			CHECK(rec_writer_put_u64(w, rs->errors[i]), REC_OK);
			CHECK(rec_writer_end(w), REC_OK);
		}
		if (i + 1 < n)
			CHECK(rec_writer_flush(w), REC_OK);
	}
	if (rs->final) {
		CHECK(rec_writer_close(w), REC_OK);
	} else {
		CHECK(rec_writer_flush(w), REC_OK);
		rec_writer_abandon(w); /* killed: no FINAL chunk */
	}
}

/* The five runs.  requests: run 0 counts 0 -> 25 (+25); run 1 5 -> 7 (+2),
 * then a reset to 3, then 9 (+6); run 2 starts at 100 (a baseline, not a
 * delta) and reaches 150 (+50); run 3 has one sample (+0); run 4 40 -> 40 ->
 * 45 (+5).  Total 88, one reset.  (Last minus first would be 45; the sum of
 * all positive steps across runs, reading restarts as deltas, 88 + 100 + 40.) */
static const uint64_t r0[] = { 0, 10, 25 }, r1[] = { 5, 7, 3, 9 }, r2[] = { 100, 150 },
		      r3[] = { 0 }, r4[] = { 40, 40, 45 };
static const uint64_t e0[] = { 1, 2 }, e2[] = { 0, 0, 4 }, e4[] = { 7, 3 };
static const run_spec runs[5] = {
	{ r0, 3, e0, 2, 0 }, { r1, 4, NULL, 0, 0 }, { r2, 2, e2, 3, 0 },
	{ r3, 1, NULL, 0, 0 }, { r4, 3, e4, 2, 1 },
};


int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: rec_test_archive_counters OUT\n");
		return 2;
	}
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	for (int k = 0; k < 5; k++)
		write_run(fd, k, &runs[k]);
	return close(fd) == 0 ? 0 : 1;
}
