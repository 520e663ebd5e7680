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
		expect_problem(s, 3, 0, 0, 0x10000, NULL, REC_ERR_UNSUPPORTED, 0,
			       "reserved header flags set (0x00010000)");
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
