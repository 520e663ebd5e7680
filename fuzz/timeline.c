/* SPDX-License-Identifier: MIT */
/*
 * timeline.c - fuzz rec-timeline's code path (rec_timeline_run,
 * tools/rec-timeline.c) on an in-memory file: the Chrome trace-event JSON
 * must be valid JSON (strict syntax, valid UTF-8), whatever the input.
 */
#include "json_check.h"
#include "tool_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rec_fuzz_tool t;
	rec_fuzz_tool_init(&t, "rec-timeline", data, size);
	rec_timeline_opts o = { 0 };
	int rc = rec_timeline_run(&o, &t.in, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
	rec_fuzz_tool_end(&t, rc, "timeline");
	if (t.len)
		REC_FUZZ_CHECK(rec_fuzz_json_ok(t.buf, t.len, true), "timeline: invalid JSON:\n%.*s",
			       (int)(t.len > 4000 ? 4000 : t.len), t.buf);

	/* the selections: types by glob, a window of offsets, a thread */
	static const char *const events[] = { "rec.*", "app.Request" };
	rec_timeline_opts s = { .events = events, .nevents = 2, .thread = "*[0-9]*",
				.window = { .from_kind = 1, .to_kind = 1, .from = 1000,
					    .to = 3600000000000 } };
	rc = rec_timeline_run(&s, &t.in, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
	rec_fuzz_tool_end(&t, rc, "timeline selected");
	if (t.len)
		REC_FUZZ_CHECK(rec_fuzz_json_ok(t.buf, t.len, true), "timeline selected: invalid JSON:\n%.*s",
			       (int)(t.len > 4000 ? 4000 : t.len), t.buf);
	rec_fuzz_tool_free(&t);
	return 0;
}
