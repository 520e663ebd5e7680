/* SPDX-License-Identifier: MIT */
/*
 * print.c - fuzz rec-print's code path (rec_print_run, tools/rec-print.c)
 * on an in-memory file: text in timestamp order with the default stack
 * depth; JSON in file order with deep stacks, which must be valid JSON
 * (strict syntax, valid UTF-8); text of the same input given twice with
 * event and category filters (glob and prefix matching, the usage error
 * when a pattern matches nothing).
 */
#include "json_check.h"
#include "tool_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rec_fuzz_tool t;
	rec_fuzz_tool_init(&t, "rec-print", data, size);

	rec_print_opts o = { .stack_depth = 5 };
	int rc = rec_print_run(&o, &t.in, 1, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
	rec_fuzz_tool_end(&t, rc, "print text");

	o.json = true;
	o.unsorted = true;
	o.stack_depth = 4096;
	rc = rec_print_run(&o, &t.in, 1, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
	rec_fuzz_tool_end(&t, rc, "print --json");
	REC_FUZZ_CHECK(rc != REC_EXIT_USAGE, "print --json: usage error without a filter");
	REC_FUZZ_CHECK(rec_fuzz_json_ok(t.buf, t.len, true), "print --json: invalid JSON:\n%.*s",
		       (int)(t.len > 4000 ? 4000 : t.len), t.buf);

	static const char *const events[] = { "rec.Lock*", "app.Request" };
	static const char *const cats[] = { "rec/Memory", "rec" };
	rec_print_opts f = { .events = events, .nevents = 2, .cats = cats, .ncats = 2,
			     .stack_depth = 2 };
	rec_cli_input two[2] = { t.in, t.in };
	rc = rec_print_run(&f, two, 2, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
	rec_fuzz_tool_end(&t, rc, "print --events --categories");
	rec_fuzz_tool_free(&t);
	return 0;
}
