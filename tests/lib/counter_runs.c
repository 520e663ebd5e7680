/* SPDX-License-Identifier: MIT */
/*
 * counter_runs.c - the recording of tests/unit/analysis/test_counters.c, shared with
 * tests/helpers/rec_test_archive_counters.c: five runs of a service written
 * with the real writer (see counter_runs.h).  No cmocka here (the helpers
 * are not linked with it): every writer call's status is returned, and the
 * failing call's text is given back through *failed.
 */
#include <stddef.h>
#include <stdint.h>

#include "rec/rec.h"

#include "counter_runs.h"

/* Return the status of the first writer call that does not return REC_OK
 * (the writer is left as is: the caller fails the test or exits). */
#define TRY(expr)                                  \
	do {                                       \
		if ((st = (expr)) != REC_OK) {     \
			if (failed != NULL)        \
				*failed = #expr;   \
			return st;                 \
		}                                  \
	} while (0)

#define T_COUNTER 24u /* rec.Counter, as the recorder declares it */
#define T_OTHER 7u

static const rec_field counter_fields[] = {
	{ "name", "Name", "counter name", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "value", "Value", "total since the counter was created", REC_TYPE_U64, REC_UNIT_COUNT },
};
const rec_type rec_t_counter_type = {
	T_COUNTER, 0, "rec.Counter", "Counter", "", "rec/Metrics", 2, counter_fields,
};
/* Another type with the same field names: must be ignored. */
const rec_type rec_t_other_type = {
	T_OTHER, 0, "app.NotACounter", "", "", "app", 2, counter_fields,
};

/* One run into fd (see counter_runs.h). */
rec_status rec_t_counter_write_run(int fd, int k, const rec_t_run_spec *rs, const char **failed)
{
	rec_status st;
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.codec = REC_CODEC_LZ4;
	o.run_id = 0xC0FFEE00ull + (uint64_t)k;
	o.pid = 1000u + (uint32_t)k;
	o.process_start_ns = 1764670000000000000ll + (int64_t)k * 60000000000ll;
	o.anchor_wall_ns = o.process_start_ns;
	o.anchor_ticks = 1000;
	rec_writer *w = NULL;
	TRY(rec_writer_open_fd(&w, fd, &o));
	TRY(rec_writer_add_type(w, &rec_t_counter_type));
	TRY(rec_writer_add_type(w, &rec_t_other_type));
	uint64_t s_req, s_err;
	TRY(rec_writer_intern_string(w, "requests", 8, &s_req));
	TRY(rec_writer_intern_string(w, "errors", 6, &s_err));
	/* A first chunk without any counter (the default reading skips it). */
	TRY(rec_writer_begin(w, T_OTHER, 1500, 0, 0, 0));
	TRY(rec_writer_put_u64(w, s_req));
	TRY(rec_writer_put_u64(w, 777777));
	TRY(rec_writer_end(w));
	TRY(rec_writer_flush(w));
	uint64_t t = 2000;
	size_t n = rs->nreq > rs->nerr ? rs->nreq : rs->nerr;
	for (size_t i = 0; i < n; i++, t += 1000000) {
		if (i < rs->nreq) {
			TRY(rec_writer_begin(w, T_COUNTER, t, 0, 0, 0));
			TRY(rec_writer_put_u64(w, s_req));
			TRY(rec_writer_put_u64(w, rs->requests[i]));
			TRY(rec_writer_end(w));
			/* a decoy with a huge value in between */
			TRY(rec_writer_begin(w, T_OTHER, t + 1, 0, 0, 0));
			TRY(rec_writer_put_u64(w, s_req));
			TRY(rec_writer_put_u64(w, 999999999));
			TRY(rec_writer_end(w));
		}
		if (i < rs->nerr) {
			TRY(rec_writer_begin(w, T_COUNTER, t + 2, 0, 0, 0));
			TRY(rec_writer_put_u64(w, s_err));
			TRY(rec_writer_put_u64(w, rs->errors[i]));
			TRY(rec_writer_end(w));
		}
		if (i + 1 < n)
			TRY(rec_writer_flush(w));
	}
	if (rs->final) {
		TRY(rec_writer_close(w));
	} else {
		TRY(rec_writer_flush(w));
		rec_writer_abandon(w); /* killed: no FINAL chunk */
	}
	return REC_OK;
}

/* The five runs.  requests: run 0 counts 0 -> 25 (+25); run 1 5 -> 7 (+2),
 * then a reset to 3 (counting went on from 0: +3), then 9 (+6); run 2 starts
 * at 100 (its first sample, the run's start: not a delta) and reaches 150
 * (+50); run 3 has one sample (+0); run 4 40 -> 40 -> 45 (+5).  Total 91,
 * one reset.  (Last minus first would be 45; the sum of all positive steps
 * across runs, reading restarts as deltas, 91 + 100 + 40 - 3.) */
static const uint64_t r0[] = { 0, 10, 25 }, r1[] = { 5, 7, 3, 9 }, r2[] = { 100, 150 },
		      r3[] = { 0 }, r4[] = { 40, 40, 45 };
static const uint64_t e0[] = { 1, 2 }, e2[] = { 0, 0, 4 }, e4[] = { 7, 3 };
const rec_t_run_spec rec_t_counter_runs[5] = {
	{ r0, 3, e0, 2, 0 }, { r1, 4, NULL, 0, 0 }, { r2, 2, e2, 3, 0 },
	{ r3, 1, NULL, 0, 0 }, { r4, 3, e4, 2, 1 },
};
