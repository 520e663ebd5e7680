/* SPDX-License-Identifier: MIT */
/*
 * test_frame_source.c - format 1.2's FRAME_SOURCE section through the
 * writer (rec_writer_define_frame_source, writer_pool.c / writer_chunk.c)
 * and the reader (pool.c): frames' files, lines, flags and inlined
 * functions round trip, a stack lists the inlined functions before their
 * frame, every chunk carries the strings its frame sources need, a source
 * defined again reaches the chunks after it, the writer refuses bad
 * definitions, and the reader refuses a damaged
 * section (missing frame, missing string, an entry past the end, too many
 * inline frames, ids out of order) while skipping bytes a later version
 * appends to an entry.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/common_internal.h"
#include "rec/rec.h"
#include "../../lib/membuf.h"

static const rec_field fields[] = { { "n", "", "", REC_TYPE_U32, 0 } };

enum { S_MOD = 1, S_BID, S_OUTER, S_MID, S_LEAF, S_FILE_A, S_FILE_B, S_MAIN };

/* A recording: frames 1 (outer, with mid and leaf inlined), 2 (main, file
 * and line), 3 (no name, PC_EXACT | UNSYMBOLIZED), 4 (nothing); stack 1 =
 * [1, 2], stack 2 = [3, 4, 1]; one event per stack in each of nchunks chunks. */
static membuf make_rec(unsigned codec, int nchunks)
{
	membuf m = { 0 };
	rec_sink s = { mem_write, NULL, &m };
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.codec = codec;
	o.anchor_wall_ns = 1000;
	o.anchor_ticks = 1;
	rec_writer *w;
	assert_int_equal(rec_writer_open(&w, &s, &o), REC_OK);
	rec_type t = { 1, REC_EVENT_HAS_STACK, "d.T", "", "", "", 1, fields };
	assert_int_equal(rec_writer_add_type(w, &t), REC_OK);
	static const char *const str[] = { NULL, "/bin/p", "abcd", "outer", "mid", "leaf", "/src/a.c",
					   "/src/b.h", "main" };
	for (uint64_t i = 1; i <= S_MAIN; i++)
		assert_int_equal(rec_writer_define_string(w, i, str[i], strlen(str[i])), REC_OK);
	assert_int_equal(rec_writer_define_module(w, 1, S_MOD, S_BID, 0x400000), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 1, S_OUTER, 1, 0x1234, 0x34), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 2, S_MAIN, 1, 0x2000, 0x10), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 3, 0, 1, 0x3000, 0), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 4, 0, 0, 0x99, 0), REC_OK);
	rec_frame_inline inl[] = { { S_LEAF, S_FILE_B, 7 }, { S_MID, S_FILE_A, 20 } };
	assert_int_equal(rec_writer_define_frame_source(w, 1, 0, S_FILE_A, 300, inl, 2), REC_OK);
	assert_int_equal(rec_writer_define_frame_source(w, 2, 0, S_FILE_A, 12, NULL, 0), REC_OK);
	assert_int_equal(rec_writer_define_frame_source(w, 3, REC_FRAME_PC_EXACT | REC_FRAME_UNSYMBOLIZED,
							0, 0, NULL, 0),
			 REC_OK);
	/* the same definition again is fine */
	assert_int_equal(rec_writer_define_frame_source(w, 1, 0, S_FILE_A, 300, inl, 2), REC_OK);
	const uint64_t st1[] = { 1, 2 }, st2[] = { 3, 4, 1 };
	assert_int_equal(rec_writer_define_stack(w, 1, 0, st1, 2), REC_OK);
	assert_int_equal(rec_writer_define_stack(w, 2, 0, st2, 3), REC_OK);
	for (int c = 0; c < nchunks; c++) {
		for (uint64_t k = 1; k <= 2; k++) {
			assert_int_equal(rec_writer_begin(w, 1, 10 + 10 * (uint64_t)c + k, 0, 0, k), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, k), REC_OK);
			assert_int_equal(rec_writer_end(w), REC_OK);
		}
		if (c + 1 < nchunks)
			assert_int_equal(rec_writer_flush(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
	return m;
}

static void check_frame(const rec_frame *f, uint64_t id, const char *fn, const char *file,
			uint32_t line, uint32_t depth, uint32_t flags)
{
	assert_non_null(f);
	assert_int_equal(f->id, id);
	assert_string_equal(f->function, fn);
	assert_string_equal(f->file, file);
	assert_int_equal(f->line, line);
	assert_int_equal(f->inline_depth, depth);
	assert_int_equal(f->flags, flags);
}

/* The stacks of every event of the reading: [outer's chain, main] and
 * [unnamed, nothing, outer's chain]. */
static void check_read(const uint8_t *p, size_t n, uint64_t want_events)
{
	rec_reader *r;
	assert_int_equal(rec_reader_open_mem(&r, p, n, "fs", NULL), REC_OK);
	rec_event ev;
	rec_status st;
	uint64_t events = 0;
	while ((st = rec_reader_next_event(r, &ev)) == REC_OK) {
		events++;
		const rec_stack *s = ev.stack;
		assert_non_null(s);
		uint32_t o = 0;
		if (s->id == 2) {
			assert_int_equal(s->depth, 5);
			check_frame(s->frames[0], 3, "", "", 0, 0, REC_FRAME_PC_EXACT | REC_FRAME_UNSYMBOLIZED);
			assert_true(rec_frame_unsymbolized(s->frames[0]));
			check_frame(s->frames[1], 4, "", "", 0, 0, 0);
			o = 2;
		} else {
			assert_int_equal(s->id, 1);
			assert_int_equal(s->depth, 4);
		}
		check_frame(s->frames[o], 1, "leaf", "/src/b.h", 7, 2, 0);
		check_frame(s->frames[o + 1], 1, "mid", "/src/a.c", 20, 1, 0);
		check_frame(s->frames[o + 2], 1, "outer", "/src/a.c", 300, 0, 0);
		/* an inlined function: its frame's module and address, no offset */
		assert_ptr_equal(s->frames[o]->module, s->frames[o + 2]->module);
		assert_int_equal(s->frames[o]->module_offset, 0x1234);
		assert_int_equal(s->frames[o]->function_offset, 0);
		assert_int_equal(s->frames[o + 2]->function_offset, 0x34);
		if (s->id == 1)
			check_frame(s->frames[3], 2, "main", "/src/a.c", 12, 0, 0);
		char buf[128];
		rec_frame_format(s->frames[o], 0, buf, sizeof buf);
		assert_string_equal(buf, "leaf (b.h:7) [inlined]");
		rec_frame_format(s->frames[o + 2], 0, buf, sizeof buf);
		assert_string_equal(buf, "outer (a.c:300)");
	}
	assert_int_equal(st, REC_END);
	assert_int_equal(events, want_events);
	rec_reader_stats rs;
	rec_reader_get_stats(r, &rs);
	assert_int_equal(rs.unknown_sections, 0);
	rec_reader_close(r);
}

static void t_roundtrip(void **state)
{
	(void)state;
	const unsigned codecs[] = { REC_CODEC_NONE, REC_CODEC_ZSTD, REC_CODEC_LZ4 };
	for (size_t i = 0; i < 3; i++) {
		membuf m = make_rec(codecs[i], 1);
		assert_int_equal(rec_le16(m.p + REC_HOFF_MINOR), REC_FORMAT_MINOR);
		assert_true(REC_FORMAT_MINOR >= 2);
		check_read(m.p, m.len, 2);
		free(m.p);
	}
}

/* Every chunk carries the frame sources its stacks need and their strings:
 * the last chunk cut out alone reads the same. */
static void t_chunks_self_contained(void **state)
{
	(void)state;
	membuf m = make_rec(REC_CODEC_ZSTD, 3);
	check_read(m.p, m.len, 6);
	size_t off = 0, last = 0;
	int k = 0;
	while (off < m.len) {
		last = off;
		off += rec_le32(m.p + off + REC_HOFF_HEADER_SIZE) + (size_t)rec_le64(m.p + off + REC_HOFF_PAYLOAD_SIZE);
		k++;
	}
	assert_int_equal(k, 3);
	check_read(m.p + last, m.len - last, 2);
	free(m.p);
}

static void t_writer_refuses(void **state)
{
	(void)state;
	membuf m = { 0 };
	rec_sink s = { mem_write, NULL, &m };
	rec_writer *w;
	rec_frame_inline inl[REC_MAX_INLINE + 1];
	memset(inl, 0, sizeof inl);
	struct {
		int kind;
	} cases[] = { { 0 }, { 1 }, { 2 }, { 4 } };
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_int_equal(rec_writer_open(&w, &s, NULL), REC_OK);
		assert_int_equal(rec_writer_define_string(w, 1, "f", 1), REC_OK);
		assert_int_equal(rec_writer_define_frame(w, 1, 1, 0, 0x10, 0), REC_OK);
		rec_status st = REC_OK;
		switch (cases[i].kind) {
		case 0: /* a frame that is not defined */
			st = rec_writer_define_frame_source(w, 2, 0, 1, 3, NULL, 0);
			break;
		case 1: /* unknown flags */
			st = rec_writer_define_frame_source(w, 1, 0x4, 1, 3, NULL, 0);
			break;
		case 2: /* more inline frames than the limit */
			st = rec_writer_define_frame_source(w, 1, 0, 1, 3, inl, REC_MAX_INLINE + 1);
			break;
		case 4: /* inline frames without the array */
			st = rec_writer_define_frame_source(w, 1, 0, 1, 3, NULL, 1);
			break;
		}
		assert_int_equal(st, REC_ERR_INVALID_ARG);
		assert_non_null(strstr(rec_writer_errmsg(w), "define_frame_source"));
		rec_writer_abandon(w);
	}
	/* the limit itself is fine */
	assert_int_equal(rec_writer_open(&w, &s, NULL), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 1, 0, 0, 0x10, 0), REC_OK);
	assert_int_equal(rec_writer_define_frame_source(w, 1, 0, 0, 3, inl, REC_MAX_INLINE), REC_OK);
	rec_writer_abandon(w);
	free(m.p);
}

/* A frame's source defined again with another value (the recorder defines
 * a frame's flags first and its file and line later): the chunks built
 * after it carry the new one, those before keep theirs. */
static void t_source_replaced(void **state)
{
	(void)state;
	membuf m = { 0 };
	rec_sink s = { mem_write, NULL, &m };
	rec_writer *w;
	assert_int_equal(rec_writer_open(&w, &s, NULL), REC_OK);
	rec_type t = { 1, REC_EVENT_HAS_STACK, "d.T", "", "", "", 1, fields };
	assert_int_equal(rec_writer_add_type(w, &t), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 1, "f", 1), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 2, "/a.c", 4), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 1, 1, 0, 0x10, 0), REC_OK);
	assert_int_equal(rec_writer_define_frame_source(w, 1, REC_FRAME_PC_EXACT, 0, 0, NULL, 0), REC_OK);
	const uint64_t fr[] = { 1 };
	assert_int_equal(rec_writer_define_stack(w, 1, 0, fr, 1), REC_OK);
	for (uint64_t c = 0; c < 2; c++) {
		if (c == 1)
			assert_int_equal(rec_writer_define_frame_source(w, 1, REC_FRAME_PC_EXACT, 2, 9, NULL, 0),
					 REC_OK);
		assert_int_equal(rec_writer_begin(w, 1, 10 + c, 0, 0, 1), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, c), REC_OK);
		assert_int_equal(rec_writer_end(w), REC_OK);
		assert_int_equal(rec_writer_flush(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
	rec_reader *r;
	assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "fs", NULL), REC_OK);
	rec_event ev;
	assert_int_equal(rec_reader_next_event(r, &ev), REC_OK);
	check_frame(ev.stack->frames[0], 1, "f", "", 0, 0, REC_FRAME_PC_EXACT);
	assert_int_equal(rec_reader_next_event(r, &ev), REC_OK);
	check_frame(ev.stack->frames[0], 1, "f", "/a.c", 9, 0, REC_FRAME_PC_EXACT);
	rec_reader_close(r);
	free(m.p);
}

/* The FRAME_SOURCE section of the first chunk of an uncompressed recording:
 * its bytes after the section header, and their length. */
static uint8_t *find_section(uint8_t *p, unsigned kind, uint32_t *len)
{
	uint32_t hs = rec_le32(p + REC_HOFF_HEADER_SIZE);
	uint16_t n = rec_le16(p + REC_HOFF_SECTION_COUNT);
	uint8_t *s = p + hs;
	for (uint16_t i = 0; i < n; i++) {
		uint32_t stored = rec_le32(s + 8);
		if (rec_le16(s) == kind) {
			*len = stored;
			return s + REC_SECTION_HEADER_SIZE;
		}
		s += REC_SECTION_HEADER_SIZE + stored;
	}
	fail_msg("no section of kind %u", kind);
	return NULL;
}

static void fix_crcs(uint8_t *p)
{
	uint32_t hs = rec_le32(p + REC_HOFF_HEADER_SIZE);
	uint64_t ps = rec_le64(p + REC_HOFF_PAYLOAD_SIZE);
	rec_put_le32(p + REC_HOFF_PAYLOAD_CRC, rec_crc32c(0, p + hs, (size_t)ps));
	rec_put_le32(p + REC_HOFF_HEADER_CRC, 0);
	rec_put_le32(p + REC_HOFF_HEADER_CRC, rec_crc32c(0, p, hs));
}

/* Damage the section (entry 1 is "01 0b 00 06 ac 02 02 05 07 07 04 06 14":
 * Id 1, Length 11, Flags 0, File 6, Line 300, Inline_Count 2, (5, 7, 7),
 * (4, 6, 20)) and expect the events refused, naming it and what. */
static void t_reader_refuses(void **state)
{
	(void)state;
	static const char *const whats[] = { "names a missing frame", "crosses the end",
					     "references a missing string", "limit of 64",
					     "ids not increasing" };
	for (int k = 0; k < 5; k++) {
		membuf m = make_rec(REC_CODEC_NONE, 1);
		uint32_t len;
		uint8_t *fs = find_section(m.p, 9, &len);
		assert_int_equal(fs[0], 1);    /* Id */
		assert_int_equal(fs[1], 11);   /* Length */
		assert_int_equal(fs[6], 2);    /* Inline_Count */
		switch (k) {
		case 0: fs[0] = 9; break;      /* no frame 9 */
		case 1: fs[1] = 0x7f; break;   /* past the section */
		case 2: fs[3] = 0x70; break;   /* File: string 112 */
		case 3: fs[6] = 65; break;     /* Inline_Count */
		case 4: fs[2 + 11] = 1; break; /* entry 2's Id: 1 again */
		}
		fix_crcs(m.p);
		rec_reader *r;
		assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "fs", NULL), REC_OK);
		rec_event ev;
		assert_int_equal(rec_reader_next_event(r, &ev), REC_ERR_CORRUPT);
		const rec_problem *pr = rec_reader_problem(r);
		assert_non_null(pr);
		assert_non_null(strstr(pr->message, "FRAME_SOURCE"));
		if (!strstr(pr->message, whats[k]))
			fail_msg("case %d: %s", k, pr->message);
		rec_reader_close(r);
		free(m.p);
	}
}

/* Bytes a later version appends to an entry (inside its Length, after the
 * fields this version knows) are skipped: entry 1 says one inline frame
 * instead of two, so the second one's three bytes are such bytes. */
static void t_trailing_bytes(void **state)
{
	(void)state;
	membuf m = make_rec(REC_CODEC_NONE, 1);
	uint32_t len;
	uint8_t *fs = find_section(m.p, 9, &len);
	assert_int_equal(fs[6], 2);
	fs[6] = 1; /* one inline frame (leaf); mid's 3 bytes are trailing */
	fix_crcs(m.p);
	rec_reader *r;
	assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "fs", NULL), REC_OK);
	rec_event ev;
	assert_int_equal(rec_reader_next_event(r, &ev), REC_OK);
	const rec_stack *s = ev.stack;
	assert_int_equal(s->id, 1);
	assert_int_equal(s->depth, 3);
	check_frame(s->frames[0], 1, "leaf", "/src/b.h", 7, 1, 0);
	check_frame(s->frames[1], 1, "outer", "/src/a.c", 300, 0, 0);
	check_frame(s->frames[2], 2, "main", "/src/a.c", 12, 0, 0);
	rec_reader_close(r);
	free(m.p);
	(void)len;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_roundtrip),
		cmocka_unit_test(t_chunks_self_contained),
		cmocka_unit_test(t_writer_refuses),
		cmocka_unit_test(t_source_replaced),
		cmocka_unit_test(t_reader_refuses),
		cmocka_unit_test(t_trailing_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
