/* SPDX-License-Identifier: MIT */
/*
 * frames_rec.h - test support shared by tests/unit/read/test_frames.c and
 * tests/unit/write/test_writer_frame_copy.c: a recording made by the real
 * writer into a membuf (membuf.h) whose three stacks hold every kind of
 * frame: inlined functions with their files and lines, unnamed frames with
 * and without a module, frames without a source position or with a file
 * only, librec's own frame and one in a library.
 *
 * Header-only on purpose, like readback.h: the helpers assert with cmocka,
 * and every object in tests/lib (*.c) is also linked into the tests/helpers
 * programs, which are not linked with -lcmocka.  Include it from one .c file
 * per binary, after <stdarg.h> <stddef.h> <stdint.h> <setjmp.h> <cmocka.h>.
 */
#ifndef REC_TESTS_LIB_FRAMES_REC_H
#define REC_TESTS_LIB_FRAMES_REC_H

#include <stdint.h>
#include <string.h>

#include "rec/rec.h"
#include "membuf.h"

static const rec_field frames_fields[] __attribute__((unused)) = { { "n", "", "", REC_TYPE_U32, 0 } };

enum { S_MOD = 1, S_BID, S_OUTER, S_MID, S_LEAF, S_FILE_A, S_FILE_B, S_MAIN, S_REC, S_NOSRC,
       S_FILEONLY, S_FILE_C, S_LIB, S_NSTR = S_LIB };

/* Stacks: 1 = [rec_emit_x, outer (leaf and mid inlined), main],
 * 2 = [unnamed in /bin/p, unnamed nowhere, nosrc, fileonly, in-lib],
 * 3 = [rec_emit_x]. */
static __attribute__((unused)) membuf frames_rec(void)
{
	membuf m = { 0 };
	rec_sink s = { mem_write, NULL, &m };
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.anchor_wall_ns = 1000;
	o.anchor_ticks = 1;
	rec_writer *w;
	assert_int_equal(rec_writer_open(&w, &s, &o), REC_OK);
	rec_type t = { 1, REC_EVENT_HAS_STACK, "d.T", "", "", "", 1, frames_fields };
	assert_int_equal(rec_writer_add_type(w, &t), REC_OK);
	static const char *const str[] = { NULL,      "/bin/p",  "abcd",     "outer",
					   "mid",     "leaf",    "/src/a.c", "/src/b.h",
					   "main",    "rec_emit_x", "nosrc", "fileonly",
					   "/src/c.c", "/usr/lib/libq.so.2" };
	for (uint64_t i = 1; i <= S_NSTR; i++)
		assert_int_equal(rec_writer_define_string(w, i, str[i], strlen(str[i])), REC_OK);
	assert_int_equal(rec_writer_define_module(w, 1, S_MOD, S_BID, 0x400000), REC_OK);
	assert_int_equal(rec_writer_define_module(w, 2, S_LIB, 0, 0x7f0000), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 1, S_OUTER, 1, 0x1234, 0x34), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 2, S_MAIN, 1, 0x2000, 0x10), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 3, 0, 1, 0x3000, 0), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 4, 0, 0, 0x99, 0), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 5, S_REC, 1, 0x5008, 0x8), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 6, S_NOSRC, 0, 0x605, 0x5), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 7, S_FILEONLY, 1, 0x700, 0x1), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 8, S_MAIN, 2, 0x800, 0xc), REC_OK);
	rec_frame_inline inl[] = { { S_LEAF, S_FILE_B, 7 }, { S_MID, S_FILE_A, 20 } };
	assert_int_equal(rec_writer_define_frame_source(w, 1, 0, S_FILE_A, 300, inl, 2), REC_OK);
	assert_int_equal(rec_writer_define_frame_source(w, 2, 0, S_FILE_A, 12, NULL, 0), REC_OK);
	assert_int_equal(rec_writer_define_frame_source(w, 3, REC_FRAME_PC_EXACT | REC_FRAME_UNSYMBOLIZED,
							0, 0, NULL, 0),
			 REC_OK);
	assert_int_equal(rec_writer_define_frame_source(w, 7, 0, S_FILE_C, 0, NULL, 0), REC_OK);
	const uint64_t st1[] = { 5, 1, 2 }, st2[] = { 3, 4, 6, 7, 8 }, st3[] = { 5 };
	assert_int_equal(rec_writer_define_stack(w, 1, 0, st1, 3), REC_OK);
	assert_int_equal(rec_writer_define_stack(w, 2, 0, st2, 5), REC_OK);
	assert_int_equal(rec_writer_define_stack(w, 3, 0, st3, 1), REC_OK);
	for (uint64_t k = 1; k <= 3; k++) {
		assert_int_equal(rec_writer_begin(w, 1, 10 + k, 0, 0, k), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, k), REC_OK);
		assert_int_equal(rec_writer_end(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
	return m;
}

#endif /* REC_TESTS_LIB_FRAMES_REC_H */
