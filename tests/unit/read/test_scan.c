/* SPDX-License-Identifier: MIT */
/*
 * test_scan.c - scan.c, finding chunks in damaged input: the next chunk
 * header, recovery after damage (resynchronising on the next good header,
 * a cut tail), each problem reported with its status, chunk index and
 * offset.  Moved from test_reader_damage.c: t_every_truncation (every cut
 * point, in memory and in files), t_flip_each_byte (every byte flipped),
 * t_damaged_middle (a bad chunk among good ones), t_garbage_between
 * (garbage with decoy magics between chunks).  Recordings are made by the
 * real writer with the real compressor.
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
#include <unistd.h>

#include "common/common_internal.h"
#include "rec/rec.h"
#include "../../lib/damage.h"

/* ---- truncation ---------------------------------------------------------------- */
static void t_every_truncation(void **state)
{
	(void)state;
	uint64_t off[3];
	membuf m = make_rec(2, 5, REC_CODEC_ZSTD, off);
	outcome o;
	for (size_t cut = 0; cut <= m.len; cut++) {
		for (int mode = 0; mode < 3; mode++) {
			if (mode == 0) {
				drain_mem(m.p, cut, 0, &o);
			} else if (mode == 1) {
				drain_mem(m.p, cut, REC_READ_ORDERED, &o);
			} else {
				if (cut % 5 != 0 && cut != m.len)
					continue; /* files: a sample of the cuts */
				write_file(tpath("cut.rec"), m.p, cut);
				rec_reader *r;
				assert_int_equal(rec_reader_open_path(&r, tpath("cut.rec"), NULL), REC_OK);
				drain(r, &o);
				rec_reader_close(r);
			}
			if (cut == 0 || cut == off[1] || cut == m.len) {
				assert_int_equal(o.problems, 0);
				assert_int_equal(o.events, cut == 0 ? 0 : cut == off[1] ? 5 : 10);
				continue;
			}
			assert_int_equal(o.problems, 1);
			assert_int_equal(o.pr[0].status, REC_ERR_TRUNCATED);
			assert_non_null(strstr(o.msg[0], "truncated"));
			uint64_t at = cut < off[1] ? off[0] : off[1];
			assert_int_equal(o.pr[0].offset, at);
			assert_int_equal(o.pr[0].chunk, cut < off[1] ? 0 : 1);
			assert_int_equal(o.events, cut < off[1] ? 0 : 5);
			for (int i = 0; i < o.events; i++)
				assert_int_equal(o.ev[i], i);
			if (cut - at >= REC_HEADER_SIZE_V1) {
				char want[128];
				snprintf(want, sizeof(want), "needs %llu bytes, file ends after %llu",
					 (unsigned long long)(cut < off[1] ? off[1] : m.len) - at,
					 (unsigned long long)(cut - at));
				assert_non_null(strstr(o.msg[0], want));
			}
		}
	}
	free(m.p);
}

/* ---- flipped bytes ---------------------------------------------------------------- */
static void t_flip_each_byte(void **state)
{
	(void)state;
	uint64_t off[3];
	membuf m = make_rec(2, 3, REC_CODEC_ZSTD, off);
	uint8_t *d = malloc(m.len);
	assert_non_null(d);
	outcome o;
	for (size_t i = 0; i < m.len; i++) {
		for (int x = 0; x < 2; x++) {
			memcpy(d, m.p, m.len);
			d[i] ^= x ? 0xFF : 0x01;
			int hit = i < off[1] ? 0 : 1; /* damaged chunk */
			uint64_t hoff = off[hit];
			for (int ordered = 0; ordered < 2; ordered++) {
				drain_mem(d, m.len, ordered ? REC_READ_ORDERED : 0, &o);
				/* Exactly the other chunk's events, one problem. */
				assert_int_equal(o.events, 3);
				for (int k = 0; k < 3; k++)
					assert_int_equal(o.ev[k], (hit ? 0 : 3) + k);
				assert_int_equal(o.problems, 1);
				assert_int_equal(o.pr[0].offset, hoff);
				if (i - hoff >= REC_HEADER_SIZE_V1) {
					assert_int_equal(o.pr[0].status, REC_ERR_CORRUPT);
					assert_non_null(strstr(o.msg[0], "payload checksum mismatch"));
					assert_int_equal(o.pr[0].chunk, hit);
				} else if (i - hoff < REC_MAGIC_LEN) {
					assert_int_equal(o.pr[0].status, REC_ERR_BAD_MAGIC);
					assert_non_null(strstr(o.msg[0], "garbage"));
				} else if (i - hoff >= 12 && i - hoff < 16 && o.pr[0].status == REC_ERR_TRUNCATED) {
					/* Header_Size grew past the end of the input: the
					 * header cannot be checked, the input looks cut. */
					assert_int_equal(hit, 1);
					assert_non_null(strstr(o.msg[0], "truncated"));
				} else {
					assert_int_equal(o.pr[0].status, REC_ERR_CORRUPT);
					assert_non_null(strstr(o.msg[0], "damaged chunk header"));
					assert_int_equal(o.pr[0].chunk, hit);
				}
			}
			/* Summary with verification: the same chunk is reported. */
			rec_reader *r;
			rec_reader_options ro = REC_READER_OPTIONS_INIT;
			ro.flags = REC_READ_VERIFY;
			assert_int_equal(rec_reader_open_mem(&r, d, m.len, "f", &ro), REC_OK);
			const rec_chunk_info *c;
			rec_status st;
			int ok = 0, bad = 0;
			while ((st = rec_reader_next_chunk(r, &c)) != REC_END) {
				if (st == REC_OK) {
					assert_int_equal(c->offset, off[!hit]);
					assert_int_equal(rec_reader_verify_chunk(r), REC_OK);
					ok++;
				} else {
					bad++;
				}
			}
			assert_int_equal(ok, 1);
			assert_int_equal(bad, 1);
			rec_reader_close(r);
		}
	}
	free(d);
	free(m.p);
}

/* ---- a bad chunk among good ones ---------------------------------------------------- */
static void t_damaged_middle(void **state)
{
	(void)state;
	uint64_t off[4];
	membuf m = make_rec(3, 4, REC_CODEC_ZSTD, off);
	m.p[off[1] + 128 + 20] ^= 0x40; /* inside chunk 1's payload */
	write_file(tpath("mid.rec"), m.p, m.len);
	for (int mode = 0; mode < 3; mode++) {
		outcome o;
		if (mode < 2) {
			rec_reader *r;
			rec_reader_options ro = REC_READER_OPTIONS_INIT;
			ro.flags = mode ? REC_READ_ORDERED : 0;
			assert_int_equal(rec_reader_open_path(&r, tpath("mid.rec"), &ro), REC_OK);
			drain(r, &o);
			rec_reader_stats rs;
			rec_reader_get_stats(r, &rs);
			assert_int_equal(rs.chunks, 3);
			assert_int_equal(rs.chunks_damaged, 1);
			assert_int_equal(rs.events, 8);
			rec_reader_close(r);
		} else {
			drain_mem(m.p, m.len, 0, &o);
		}
		assert_int_equal(o.problems, 1);
		assert_int_equal(o.pr[0].status, REC_ERR_CORRUPT);
		assert_int_equal(o.pr[0].chunk, 1);
		assert_int_equal(o.pr[0].offset, off[1]);
		assert_int_equal(o.events, 8);
		static const uint32_t want[] = { 0, 1, 2, 3, 8, 9, 10, 11 };
		for (int i = 0; i < 8; i++)
			assert_int_equal(o.ev[i], want[i]);
	}
	free(m.p);
}

static void t_garbage_between(void **state)
{
	(void)state;
	uint64_t off[3];
	membuf m = make_rec(2, 3, REC_CODEC_ZSTD, off);
	/* 100 bytes of garbage with decoys: 0x89 bytes, a magic with a bad
	 * header, a magic cut short. */
	uint8_t g[100];
	for (int i = 0; i < 100; i++)
		g[i] = (uint8_t)(i * 37);
	g[5] = 0x89;
	memcpy(g + 10, m.p, 60); /* a real magic and header start */
	memcpy(g + 80, m.p, 6);
	size_t n = m.len + sizeof(g);
	uint8_t *d = malloc(n);
	assert_non_null(d);
	memcpy(d, m.p, off[1]);
	memcpy(d + off[1], g, sizeof(g));
	memcpy(d + off[1] + sizeof(g), m.p + off[1], m.len - off[1]);
	for (int mode = 0; mode < 2; mode++) {
		rec_reader *r;
		if (mode == 0) {
			assert_int_equal(rec_reader_open_mem(&r, d, n, "g", NULL), REC_OK);
		} else {
			write_file(tpath("garbage.rec"), d, n);
			assert_int_equal(rec_reader_open_path(&r, tpath("garbage.rec"), NULL), REC_OK);
		}
		outcome o;
		drain(r, &o);
		assert_int_equal(o.events, 6);
		for (int i = 0; i < 6; i++)
			assert_int_equal(o.ev[i], i);
		assert_int_equal(o.problems, 1);
		assert_int_equal(o.pr[0].status, REC_ERR_BAD_MAGIC);
		assert_int_equal(o.pr[0].offset, off[1]);
		char want[80];
		snprintf(want, sizeof(want), "skipped 100 bytes of garbage"); /* where: the offset */
		assert_string_equal(o.msg[0], want);
		rec_reader_stats rs;
		rec_reader_get_stats(r, &rs);
		assert_int_equal(rs.bytes_skipped, 100);
		assert_int_equal(rs.chunks, 2);
		rec_reader_close(r);
	}
	free(d);
	free(m.p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_every_truncation), cmocka_unit_test(t_flip_each_byte),
		cmocka_unit_test(t_damaged_middle),   cmocka_unit_test(t_garbage_between),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
