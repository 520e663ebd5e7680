/* SPDX-License-Identifier: MIT */
/*
 * counter_runs.h - the five runs of a service (four end without a FINAL
 * chunk) with counters "requests" (total 91, 1 reset) and "errors" (total 8,
 * 1 reset), written by tests/unit/analysis/test_counters.c and by the helper
 * tests/helpers/rec_test_archive_counters.c.
 */
#ifndef REC_TESTS_LIB_COUNTER_RUNS_H
#define REC_TESTS_LIB_COUNTER_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "rec/rec.h"

/* rec.Counter (id 24, as the recorder declares it), and app.NotACounter (id 7)
 * with the same
 * field names, which counter totals must ignore. */
extern const rec_type rec_t_counter_type;
extern const rec_type rec_t_other_type;

/* One run: samples of "requests" (and of "errors" when given), one chunk per
 * sample so that chunk boundaries fall between samples; final = clean close. */
typedef struct rec_t_run_spec {
	const uint64_t *requests;
	size_t nreq;
	const uint64_t *errors;
	size_t nerr;
	int final;
} rec_t_run_spec;

extern const rec_t_run_spec rec_t_counter_runs[5];

/* Write run k (run id 0xC0FFEE00 + k, pid 1000 + k) described by rs to fd.
 * Returns REC_OK, or the status of the first writer call that failed, whose
 * source text is then stored in *failed (when failed is not NULL). */
rec_status rec_t_counter_write_run(int fd, int k, const rec_t_run_spec *rs, const char **failed);

#endif /* REC_TESTS_LIB_COUNTER_RUNS_H */
