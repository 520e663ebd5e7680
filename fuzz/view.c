/* SPDX-License-Identifier: MIT */
/*
 * view.c - fuzz rec-view's code path (rec_view_run, tools/rec-view.c, over
 * the views of libfmt/analysis/view*.c) on an in-memory file: every view as
 * --json, which must be strict JSON with valid UTF-8, and as text cut to
 * --width 40 with --top 3 (and --by path, --thread '*' and a --from/--to
 * window where the view takes them), and compared with a baseline (the
 * input's first half, a shorter or damaged recording: rows new, gone and in
 * both) as --json, which must be strict JSON too, and as text with --top 3.
 */
#include "json_check.h"
#include "tool_fuzz.h"
#include "rec/view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rec_fuzz_tool t;
	rec_fuzz_tool_init(&t, "rec-view", data, size);
	size_t n;
	const rec_view_info *l = rec_view_list(&n);
	for (size_t i = 0; i < n; i++) {
		rec_view_tool_opts o = { .view = l[i].name, .json = true };
		int rc = rec_view_run(&o, &t.in, 1, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
		rec_fuzz_tool_end(&t, rc, l[i].name);
		REC_FUZZ_CHECK(rc != REC_EXIT_USAGE, "%s: a usage error without options", l[i].name);
		if (t.len)
			REC_FUZZ_CHECK(rec_fuzz_json_ok(t.buf, t.len, true), "%s: invalid JSON:\n%.*s",
				       l[i].name, (int)(t.len > 4000 ? 4000 : t.len), t.buf);

		rec_view_tool_opts x = { .view = l[i].name, .width = 40, .top = 3, .thread = "*",
					 .window = { .from_kind = 1, .to_kind = 1, .from = 1000,
						     .to = 3600000000000ll },
					 .by = l[i].by ? "path" : NULL };
		rc = rec_view_run(&x, &t.in, 1, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
		rec_fuzz_tool_end(&t, rc, l[i].name);
		REC_FUZZ_CHECK(rc != REC_EXIT_USAGE || l[i].by, "%s: a usage error", l[i].name);

		rec_cli_input base = t.in;
		base.name = "baseline.rec";
		base.size = size / 2;
		rec_view_tool_opts b = { .view = l[i].name, .json = true, .baseline = &base };
		rc = rec_view_run(&b, &t.in, 1, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
		rec_fuzz_tool_end(&t, rc, l[i].name);
		REC_FUZZ_CHECK(rc != REC_EXIT_USAGE, "%s --baseline: a usage error", l[i].name);
		if (t.len)
			REC_FUZZ_CHECK(rec_fuzz_json_ok(t.buf, t.len, true), "%s --baseline: invalid JSON:\n%.*s",
				       l[i].name, (int)(t.len > 4000 ? 4000 : t.len), t.buf);
		b.json = false;
		b.top = 3;
		rc = rec_view_run(&b, &t.in, 1, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
		rec_fuzz_tool_end(&t, rc, l[i].name);
	}
	rec_fuzz_tool_free(&t);
	return 0;
}
