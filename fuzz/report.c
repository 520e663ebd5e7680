/* SPDX-License-Identifier: MIT */
/*
 * report.c - fuzz rec-report's code path (rec_report_run, tools/rec-report.c,
 * over the findings engine of libfmt/analysis/findings*.c, which takes the
 * CPU samples as digests, and the views it reads) on an in-memory file: the
 * findings as --json, which must be strict JSON with valid UTF-8, as text
 * cut to --width 40 with --by path, and compared with a baseline (the
 * input's first half) as --json, which must be strict JSON too.
 */
#include "json_check.h"
#include "tool_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rec_fuzz_tool t;
	rec_fuzz_tool_init(&t, "rec-report", data, size);
	rec_report_tool_opts o = { .json = true };
	int rc = rec_report_run(&o, &t.in, 1, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
	rec_fuzz_tool_end(&t, rc, "report");
	REC_FUZZ_CHECK(rc != REC_EXIT_USAGE, "report: a usage error without options");
	if (t.len)
		REC_FUZZ_CHECK(rec_fuzz_json_ok(t.buf, t.len, true), "report: invalid JSON:\n%.*s",
			       (int)(t.len > 4000 ? 4000 : t.len), t.buf);

	rec_report_tool_opts x = { .width = 40, .by = "path" };
	rc = rec_report_run(&x, &t.in, 1, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
	rec_fuzz_tool_end(&t, rc, "report --by path"); /* (a usage error if no span has it) */

	rec_cli_input base = t.in;
	base.name = "baseline.rec";
	base.size = size / 2;
	rec_report_tool_opts b = { .json = true, .baseline = &base };
	rc = rec_report_run(&b, &t.in, 1, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
	rec_fuzz_tool_end(&t, rc, "report --baseline");
	REC_FUZZ_CHECK(rc != REC_EXIT_USAGE, "report --baseline: a usage error");
	if (t.len)
		REC_FUZZ_CHECK(rec_fuzz_json_ok(t.buf, t.len, true),
			       "report --baseline: invalid JSON:\n%.*s", (int)(t.len > 4000 ? 4000 : t.len),
			       t.buf);
	rec_fuzz_tool_free(&t);
	return 0;
}
