/* SPDX-License-Identifier: MIT */
/*
 * test_frames.c - frames.c: the one text spelling of a frame
 * (rec_frame_format, every form of spec/FORMAT.md "Frames in text", with
 * REC_FRAME_FUNCTION and REC_FRAME_LINE, cut to the buffer), a frame's
 * module name, whether rec-symbolize may name it, and an event's call site
 * (rec_stack_site: recorder frames and inlined functions are not sites).
 * The frames are read by the real reader from a recording made by the real
 * writer (modules, frames, format 1.2 frame sources with inlined
 * functions).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/rec.h"
#include "../../lib/frames_rec.h"


typedef struct want_frame {
	const char *plain, *function, *line; /* rec_frame_format: 0, FUNCTION, LINE */
	const char *module;                  /* rec_frame_module_name */
	int unsymbolized;
} want_frame;

static void check_stack(const rec_stack *s, const want_frame *want, uint32_t n, uint32_t site)
{
	char buf[256];
	assert_non_null(s);
	assert_int_equal(s->depth, n);
	for (uint32_t i = 0; i < n; i++) {
		const rec_frame *f = s->frames[i];
		size_t len = rec_frame_format(f, 0, buf, sizeof buf);
		assert_string_equal(buf, want[i].plain);
		assert_int_equal(len, strlen(want[i].plain));
		rec_frame_format(f, REC_FRAME_FUNCTION, buf, sizeof buf);
		assert_string_equal(buf, want[i].function);
		rec_frame_format(f, REC_FRAME_LINE, buf, sizeof buf);
		assert_string_equal(buf, want[i].line);
		assert_string_equal(rec_frame_module_name(f), want[i].module);
		assert_int_equal(rec_frame_unsymbolized(f), want[i].unsymbolized);
	}
	assert_int_equal(rec_stack_site(s), site);
}

static void t_frames_as_read(void **state)
{
	(void)state;
	membuf m = frames_rec();
	static const want_frame w1[] = {
		{ "rec_emit_x+0x8 (p)", "rec_emit_x", "rec_emit_x", "p", 0 },
		{ "leaf (b.h:7) [inlined]", "leaf", "leaf:7", "p", 0 },
		{ "mid (a.c:20) [inlined]", "mid", "mid:20", "p", 0 },
		{ "outer (a.c:300)", "outer", "outer:300", "p", 0 },
		{ "main (a.c:12)", "main", "main:12", "p", 0 },
	};
	static const want_frame w2[] = {
		{ "p+0x3000", "p+0x3000", "p+0x3000", "p", 1 },
		{ "0x99", "0x99", "0x99", "", 0 },
		{ "nosrc+0x5", "nosrc", "nosrc", "", 0 },
		{ "fileonly (c.c)", "fileonly", "fileonly", "p", 0 },
		{ "main+0xc (libq.so.2)", "main", "main", "libq.so.2", 0 },
	};
	static const want_frame w3[] = {
		{ "rec_emit_x+0x8 (p)", "rec_emit_x", "rec_emit_x", "p", 0 },
	};
	rec_reader *r;
	assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "frames", NULL), REC_OK);
	rec_event ev;
	rec_status st;
	int seen = 0;
	while ((st = rec_reader_next_event(r, &ev)) == REC_OK) {
		switch (ev.values[0].v.u) {
		case 1: /* the recorder's frame and the inlined ones are not the site */
			check_stack(ev.stack, w1, 5, 3);
			break;
		case 2:
			check_stack(ev.stack, w2, 5, 0);
			break;
		default: /* every frame the recorder's: the leaf */
			check_stack(ev.stack, w3, 1, 0);
			break;
		}
		seen++;
	}
	assert_int_equal(st, REC_END);
	rec_reader_close(r);
	assert_int_equal(seen, 3);
	free(m.p);
}

/* NULL frames and stacks; a text cut to the buffer. */
static void t_edges(void **state)
{
	(void)state;
	char buf[64];
	assert_int_equal(rec_frame_format(NULL, 0, buf, sizeof buf), 9);
	assert_string_equal(buf, "[unknown]");
	assert_string_equal(rec_frame_module_name(NULL), "");
	assert_int_equal(rec_frame_unsymbolized(NULL), 0);
	assert_int_equal(rec_stack_site(NULL), 0);
	const rec_stack empty = { 1, 0, 0, NULL };
	assert_int_equal(rec_stack_site(&empty), 0);
	const rec_module mod = { 1, "/opt/x/libz.so", "", 0 };
	const rec_frame f = { 1, "a_rather_long_function_name", &mod, 0x10, 0x2, "", 0, 0, 0 };
	assert_int_equal(rec_frame_format(&f, 0, buf, sizeof buf), 41);
	assert_string_equal(buf, "a_rather_long_function_name+0x2 (libz.so)");
	assert_int_equal(rec_frame_format(&f, 0, buf, 9), 8); /* cut: 8 bytes and a NUL */
	assert_string_equal(buf, "a_rather");
	assert_int_equal(rec_frame_format(&f, 0, buf, 0), 0);
	/* a module without a build-id is not for rec-symbolize, even unnamed */
	const rec_frame g = { 2, "", &mod, 0x10, 0, "", 0, 0, REC_FRAME_UNSYMBOLIZED };
	assert_int_equal(rec_frame_unsymbolized(&g), 0);
	rec_frame_format(&g, 0, buf, sizeof buf);
	assert_string_equal(buf, "libz.so+0x10");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_frames_as_read),
		cmocka_unit_test(t_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
