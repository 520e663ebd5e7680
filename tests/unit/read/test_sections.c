/* SPDX-License-Identifier: MIT */
/*
 * test_sections.c - sections.c, a chunk's section table: every section
 * header checked against the payload and the limits (a kind twice, no
 * EVENTS, Item_Count past Raw_Size, Raw_Size over the limit, a stored size
 * that differs, sections that do not cover the payload, an unknown codec,
 * reserved flags, data that does not decompress) and the sections' bytes
 * as decoded after it, each problem with its status, chunk and offset.
 * Moved from test_reader_damage.c: t_bad_sections (chunks hand-crafted
 * with valid checksums).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common_internal.h"
#include "rec/rec.h"
#include "../../lib/damage.h"

static rec_status first_problem(const rec_buf *f, const rec_reader_options *ro, rec_problem *pr,
				char *msg)
{
	rec_reader *r;
	assert_int_equal(rec_reader_open_mem(&r, f->data, f->len, "c", ro), REC_OK);
	rec_event ev;
	rec_status st;
	int events = 0;
	while ((st = rec_reader_next_event(r, &ev)) == REC_OK)
		events++;
	if (st < 0) {
		*pr = *rec_reader_problem(r);
		snprintf(msg, 512, "%s", pr->message);
		/* A single chunk: nothing more follows. */
		assert_int_equal(rec_reader_next_event(r, &ev), REC_END);
	}
	rec_reader_close(r);
	return st;
}

static void expect_problem(const hsec *s, int n, size_t extra, uint8_t codec, uint32_t flags,
			   const rec_reader_options *ro, rec_status want, uint64_t want_off,
			   const char *want_msg)
{
	rec_buf f = { 0 };
	craft(&f, s, n, extra, codec, flags);
	rec_problem pr;
	char msg[512];
	rec_status st = first_problem(&f, ro, &pr, msg);
	if (st != want || !strstr(msg, want_msg) || pr.offset != want_off) {
		print_error("got %d '%s' at %llu, want %d '%s' at %llu\n", st,
			    st < 0 ? msg : "", (unsigned long long)(st < 0 ? pr.offset : 0), want,
			    want_msg, (unsigned long long)want_off);
		fail();
	}
	assert_int_equal(pr.chunk, 0);
	rec_buf_free(&f);
}

/* ---- split EVENTS (1.3) ------------------------------------------------------------ */
/* A split EVENTS section's stored bytes into out (cap bytes): the stream
 * table and each of the four raw streams zstd-compressed.  Returns the
 * stored length; *raw the streams' raw bytes. */
static size_t split_stored(uint8_t *out, size_t cap, const uint8_t *const st[4], const size_t len[4],
			   uint32_t *raw)
{
	size_t at = 32;
	*raw = 0;
	for (int i = 0; i < 4; i++) {
		size_t zl = 0;
		if (len[i])
			assert_int_equal(rec_codec_compress(NULL, REC_CODEC_ZSTD, 0, st[i], len[i], out + at,
							    cap - at, &zl),
					 REC_OK);
		rec_put_le32(out + 8 * i, (uint32_t)zl);
		rec_put_le32(out + 8 * i + 4, (uint32_t)len[i]);
		at += zl;
		*raw += (uint32_t)len[i];
	}
	return at;
}

/* A zstd chunk with the SPLIT_EVENTS flag: METADATA and STATS as in
 * damage.h, EVENTS holding items records in the streams given, stored
 * COMPRESSED (unless raw_events), its Raw_Size the streams' plus raw_extra
 * (a table that does not add up); each checksum holds. */
static void split_chunk(rec_buf *f, uint32_t items, const uint8_t *const st[4], const size_t len[4],
			uint32_t raw_extra, int raw_events, size_t *ev_off)
{
	static uint8_t stored[4096];
	uint32_t raw;
	size_t n = split_stored(stored, sizeof stored, st, len, &raw);
	const hsec s[] = { { REC_SECTION_METADATA, 1, 0, meta, sizeof(meta) },
			   { REC_SECTION_STATS, 1, 0, stats, sizeof(stats) },
			   { REC_SECTION_EVENTS, items, raw + raw_extra, stored, n } };
	craft(f, s, 3, 0, REC_CODEC_ZSTD, REC_CHUNK_SPLIT_EVENTS);
	*ev_off = 128 + 16 + sizeof(meta) + 16 + sizeof(stats);
	if (!raw_events)
		rec_put_le16(f->data + *ev_off + 2, REC_SECTION_COMPRESSED);
	rec_put_le32(f->data + 20, rec_crc32c(0, f->data + 128, f->len - 128));
	fix_header_crc(f->data);
}

static void expect_split(uint32_t items, const uint8_t *const st[4], const size_t len[4],
			 uint32_t raw_extra, int raw_events, const char *want_msg)
{
	rec_buf f = { 0 };
	size_t ev_off;
	split_chunk(&f, items, st, len, raw_extra, raw_events, &ev_off);
	rec_problem pr;
	char msg[512];
	rec_status st_ = first_problem(&f, NULL, &pr, msg);
	if (st_ != REC_ERR_CORRUPT || !strstr(msg, want_msg) || pr.offset != ev_off) {
		print_error("got %d '%s' at %llu, want '%s' at %zu\n", st_, st_ < 0 ? msg : "",
			    (unsigned long long)(st_ < 0 ? pr.offset : 0), want_msg, ev_off);
		fail();
	}
	assert_int_equal(pr.chunk, 0);
	rec_buf_free(&f);
}

/* Records of type 1 (HAS_THREAD; u8 v, string s): Size 5, Type_Id 1,
 * Time_Delta +1, thread 0, v, s null.  Split: heads {5, 1}, times {2},
 * refs nothing, bodies {0, v, 0}. */
static void t_split_damage(void **state)
{
	(void)state;
	static const uint8_t heads[] = { 5, 1, 5, 1 }, times[] = { 2, 2 },
			     bodies[] = { 0, 9, 0, 0, 7, 0, 0 };
	{ /* well formed: two events, v 9 and 7, one tick apart */
		const uint8_t *st[4] = { heads, times, NULL, bodies };
		const size_t len[4] = { 4, 2, 0, 6 };
		rec_buf f = { 0 };
		size_t ev_off;
		split_chunk(&f, 2, st, len, 0, 0, &ev_off);
		rec_reader *r;
		assert_int_equal(rec_reader_open_mem(&r, f.data, f.len, "c", NULL), REC_OK);
		rec_event ev;
		assert_int_equal(rec_reader_next_event(r, &ev), REC_OK);
		assert_int_equal(ev.values[0].v.u, 9);
		assert_int_equal(ev.ticks, 101);
		assert_int_equal(rec_reader_next_event(r, &ev), REC_OK);
		assert_int_equal(ev.values[0].v.u, 7);
		assert_int_equal(ev.ticks, 102);
		assert_int_equal(ev.offset, 6); /* the joined section: the second record's offset */
		assert_int_equal(rec_reader_next_event(r, &ev), REC_END);
		rec_reader_close(r);
		/* The same chunk without the flag is a one-stream section that does
		 * not decode: the flag is what says how to read it. */
		rec_put_le32(f.data + REC_HOFF_FLAGS, 0);
		fix_header_crc(f.data);
		rec_problem pr;
		char msg[512];
		assert_int_equal(first_problem(&f, NULL, &pr, msg), REC_ERR_CORRUPT);
		rec_buf_free(&f);
	}
	const uint8_t *st[4] = { heads, times, NULL, bodies };
	const size_t len[4] = { 4, 2, 0, 6 };
	expect_split(2, st, len, 1, 0, "stream table does not add up");
	expect_split(2, st, len, 0, 1, "differs from Raw_Size"); /* not COMPRESSED */
	expect_split(3, st, len, 0, 0, "the heads stream ends inside a record's Size");
	expect_split(1, st, len, 0, 0, "the streams hold more bytes than the section's records");
	{
		const size_t more[4] = { 4, 2, 0, 7 }; /* a byte past the last record */
		expect_split(2, st, more, 0, 0, "the streams hold more bytes than the section's records");
	}
	{
		static const uint8_t undeclared[] = { 5, 1, 5, 7 };
		const uint8_t *u[4] = { undeclared, times, NULL, bodies };
		expect_split(2, u, len, 0, 0, "record 1: a record's Type_Id has no metadata in the chunk");
	}
	{
		static const uint8_t small[] = { 5, 1, 2, 1 };
		const uint8_t *u[4] = { small, times, NULL, bodies };
		expect_split(2, u, len, 0, 0, "record 1: a record's Size is less than its header fields");
	}
	{
		const size_t short_times[4] = { 4, 1, 0, 6 };
		expect_split(2, st, short_times, 0, 0, "the times stream ends inside a record's Time_Delta");
	}
	{ /* a stream that is not zstd: the times frame's bytes overwritten */
		rec_buf f = { 0 };
		size_t ev_off;
		split_chunk(&f, 2, st, len, 0, 0, &ev_off);
		uint32_t hz = rec_le32(f.data + ev_off + 16), tz = rec_le32(f.data + ev_off + 16 + 8);
		memset(f.data + ev_off + 16 + 32 + hz, 0xEE, tz);
		rec_put_le32(f.data + 20, rec_crc32c(0, f.data + 128, f.len - 128));
		fix_header_crc(f.data);
		rec_problem pr;
		char msg[512];
		assert_int_equal(first_problem(&f, NULL, &pr, msg), REC_ERR_CORRUPT);
		assert_non_null(strstr(msg, "its times stream does not decompress"));
		assert_int_equal(pr.offset, ev_off);
		rec_buf_free(&f);
	}
}

/* (moved from test_reader_damage.c) */
static void t_bad_sections(void **state)
{
	(void)state;
	const hsec M = { REC_SECTION_METADATA, 1, 0, meta, sizeof(meta) };
	const hsec S = { REC_SECTION_STATS, 1, 0, stats, sizeof(stats) };
	const hsec E = { REC_SECTION_EVENTS, 1, 0, good_ev, sizeof(good_ev) };
	const uint64_t s0 = 128, s1 = s0 + 16 + sizeof(meta), s2 = s1 + 16 + sizeof(stats);

	/* The well-formed chunk reads. */
	{
		hsec s[] = { M, S, E };
		rec_buf f = { 0 };
		craft(&f, s, 3, 0, 0, 0);
		rec_problem pr;
		char msg[512];
		assert_int_equal(first_problem(&f, NULL, &pr, msg), REC_END);
		rec_buf_free(&f);
	}
	{ /* a known kind twice */
		hsec s[] = { M, S, E, S };
		expect_problem(s, 4, 0, 0, 0, NULL, REC_ERR_CORRUPT, s2 + 16 + sizeof(good_ev),
			       "section 2 (STATS) appears twice in the chunk");
	}
	{ /* missing EVENTS */
		hsec s[] = { M, S };
		expect_problem(s, 2, 0, 0, 0, NULL, REC_ERR_CORRUPT, 0, "has no EVENTS section");
	}
	{ /* Item_Count > Raw_Size */
		hsec e = E;
		e.items = 100;
		hsec s[] = { M, S, e };
		expect_problem(s, 3, 0, 0, 0, NULL, REC_ERR_CORRUPT, s2, "Item_Count 100 exceeds Raw_Size 6");
	}
	{ /* Raw_Size over the reader's limit */
		hsec s[] = { M, S, E };
		rec_reader_options ro = REC_READER_OPTIONS_INIT;
		ro.max_section_raw = 10;
		expect_problem(s, 3, 0, 0, 0, &ro, REC_ERR_LIMIT, s0, "Raw_Size 20 exceeds the limit 10");
	}
	{ /* stored raw, Raw_Size differs */
		hsec e = E;
		e.raw = 7;
		hsec s[] = { M, S, e };
		expect_problem(s, 3, 0, 0, 0, NULL, REC_ERR_CORRUPT, s2, "differs from Raw_Size");
	}
	{ /* sections do not cover the payload */
		hsec s[] = { M, S, E };
		expect_problem(s, 3, 3, 0, 0, NULL, REC_ERR_CORRUPT, 0,
			       "sections cover");
	}
	{ /* unknown codec, reserved flag */
		hsec s[] = { M, S, E };
		expect_problem(s, 3, 0, 9, 0, NULL, REC_ERR_UNSUPPORTED, 0, "unknown codec 9");
		/* bit 16 is 1.3's SPLIT_EVENTS (t_split_damage); 17 is still Reserved */
		expect_problem(s, 3, 0, 0, 0x20000, NULL, REC_ERR_UNSUPPORTED, 0,
			       "reserved header flags set (0x00020000)");
	}
	{ /* a compressed flag without codec... as a zstd chunk whose data is not zstd */
		hsec s[] = { M, S, E };
		rec_buf f = { 0 };
		craft(&f, s, 3, 0, REC_CODEC_ZSTD, 0);
		/* set COMPRESSED on EVENTS, fix the payload checksum */
		uint8_t *sh = f.data + s2;
		rec_put_le16(sh + 2, REC_SECTION_COMPRESSED);
		rec_put_le32(f.data + 20, rec_crc32c(0, f.data + 128, f.len - 128));
		fix_header_crc(f.data);
		rec_problem pr;
		char msg[512];
		assert_int_equal(first_problem(&f, NULL, &pr, msg), REC_ERR_CORRUPT);
		assert_non_null(strstr(msg, "section 8 (EVENTS) does not decompress"));
		assert_int_equal(pr.offset, s2);
		rec_buf_free(&f);
	}
	{ /* u8 holding 300, a missing thread, a missing string, short record */
		static const uint8_t wide[] = { 6, 1, 2, 0, 0xAC, 0x02, 0 };
		static const uint8_t nothr[] = { 5, 1, 2, 5, 9, 0 };
		static const uint8_t nostr[] = { 5, 1, 2, 0, 9, 3 };
		static const uint8_t shortr[] = { 4, 1, 2, 0, 9 };
		static const struct {
			const uint8_t *p;
			size_t n;
			const char *msg;
		} bad[] = {
			{ wide, sizeof(wide), "field 'v' holds a value outside the width of u8" },
			{ nothr, sizeof(nothr), "references missing thread 5" },
			{ nostr, sizeof(nostr), "field 's' references missing string 3" },
			{ shortr, sizeof(shortr), "ends before all 2 declared fields are read" },
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			hsec e = { REC_SECTION_EVENTS, 1, 0, bad[i].p, bad[i].n };
			/* STATS that fit the section (else the chunk is implausible
			 * before any record is decoded) */
			uint8_t st1[sizeof(stats)];
			memcpy(st1, stats, sizeof(stats));
			st1[sizeof(stats) - 1] = (uint8_t)bad[i].n;
			hsec sst = { REC_SECTION_STATS, 1, 0, st1, sizeof(st1) };
			hsec s[] = { M, sst, e };
			expect_problem(s, 3, 0, 0, 0, NULL, REC_ERR_CORRUPT, s2, bad[i].msg);
		}
	}
	{ /* malformed METADATA (cut inside its field list), malformed STATS */
		hsec mm = { REC_SECTION_METADATA, 1, 0, meta, 12 };
		hsec s[] = { mm, S, E };
		expect_problem(s, 3, 0, 0, 0, NULL, REC_ERR_CORRUPT, s0, "section 1 (METADATA) is malformed");
		static const uint8_t st2[] = { 2, 2, 0, 2, 1, 1, 6 }; /* Type_Count 2, Item_Count 1 */
		hsec ss = { REC_SECTION_STATS, 1, 0, st2, sizeof(st2) };
		hsec s3[] = { M, ss, E };
		expect_problem(s3, 3, 0, 0, 0, NULL, REC_ERR_CORRUPT, 128 + 16 + sizeof(meta),
			       "section 2 (STATS) is malformed: Type_Count differs from Item_Count");
	}
	{ /* reserved wire class in metadata */
		uint8_t m2[sizeof(meta)];
		memcpy(m2, meta, sizeof(meta));
		m2[11] = 0x15; /* wire class 5 */
		hsec mm = { REC_SECTION_METADATA, 1, 0, m2, sizeof(m2) };
		hsec s[] = { mm, S, E };
		expect_problem(s, 3, 0, 0, 0, NULL, REC_ERR_UNSUPPORTED, s0, "reserved wire class 5");
	}
	{ /* a stack deeper than the limit, a frame that does not exist */
		static const uint8_t deep[] = { 1, 0, 0x81, 0x20 }; /* id 1, flags 0, depth 4097 */
		hsec st = { REC_SECTION_STACKS, 1, 0, deep, sizeof(deep) };
		hsec s[] = { M, S, st, E };
		expect_problem(s, 4, 0, 0, 0, NULL, REC_ERR_CORRUPT, s2, "depth exceeds the limit");
		static const uint8_t nofr[] = { 1, 0, 1, 4 };
		hsec st2 = { REC_SECTION_STACKS, 1, 0, nofr, sizeof(nofr) };
		hsec s3[] = { M, S, st2, E };
		expect_problem(s3, 4, 0, 0, 0, NULL, REC_ERR_CORRUPT, s2, "references a missing frame");
	}
	{ /* a string pool entry longer than the section */
		static const uint8_t strs[] = { 1, 50, 'a' };
		hsec sp = { REC_SECTION_STRINGS, 1, 0, strs, sizeof(strs) };
		hsec s[] = { M, S, sp, E };
		expect_problem(s, 4, 0, 0, 0, NULL, REC_ERR_CORRUPT, s2,
			       "string crosses the end of the section");
	}
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_bad_sections),
		cmocka_unit_test(t_split_damage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
