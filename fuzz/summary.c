/* SPDX-License-Identifier: MIT */
/*
 * summary.c - fuzz the summary analysis (rec_summary_*, what rec-summary
 * prints) on an in-memory reader, without and with REC_SUMMARY_VERIFY, the
 * same input added twice (merging runs, types and problems across files).
 * Every string of the result is read.
 */
#include <stdio.h>
#include <stdlib.h>

#include "rec/analysis.h"
#include "fuzz.h"

static void add(rec_summary *s, const uint8_t *data, size_t size, const char *name, uint32_t flags)
{
	rec_reader_options o = rec_fuzz_options(0);
	rec_reader *r = NULL;
	if (rec_reader_open_mem(&r, data, size, name, &o) == REC_OK) {
		if (rec_summary_add_reader(s, r, name, flags) != REC_OK)
			rec_fuzz_str(rec_summary_errmsg(s));
	}
	rec_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rec_summary *s = NULL;
	if (rec_summary_open(&s) != REC_OK)
		return 0;
	add(s, data, size, "a.rec", 0);
	add(s, data, size, "b.rec", REC_SUMMARY_VERIFY);
	const rec_summary_result *res = rec_summary_get(s);
	if (!res) {
		fprintf(stderr, "summary: rec_summary_get returned NULL\n");
		abort();
	}
	for (size_t i = 0; i < res->file_count; i++) {
		rec_fuzz_str(res->files[i].path);
		rec_fuzz_sink += res->files[i].chunks + res->files[i].problems;
	}
	for (size_t i = 0; i < res->run_count; i++) {
		rec_fuzz_str(res->runs[i].file);
		rec_fuzz_str(rec_run_end_name(res->runs[i].ended));
		rec_fuzz_sink += res->runs[i].events + (uint64_t)res->runs[i].last_wall_ns;
	}
	for (size_t i = 0; i < res->type_count; i++) {
		rec_fuzz_str(res->types[i].name);
		rec_fuzz_str(res->types[i].label);
		rec_fuzz_str(res->types[i].category);
		rec_fuzz_sink += res->types[i].count + res->types[i].bytes;
	}
	for (size_t i = 0; i < res->problem_count; i++) {
		rec_fuzz_str(res->problems[i].file);
		rec_fuzz_str(res->problems[i].message);
		rec_fuzz_str(rec_strerror(res->problems[i].status));
	}
	for (size_t i = 0; i < res->version_count; i++)
		rec_fuzz_sink += res->versions[i];
	rec_fuzz_sink += res->events + res->chunks + res->restarts;
	rec_summary_close(s);
	return 0;
}
