/* SPDX-License-Identifier: MIT */
/* Unit tests: chunk and section headers (common/header.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/common_internal.h"

/* Bitwise CRC32C, independent of the library. */
static uint32_t ref_crc32c(const uint8_t *p, size_t n)
{
	uint32_t crc = ~0u;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
	}
	return ~crc;
}

/* Recompute Header_Checksum of buf[0..size) in place (for crafting headers). */
static void reseal(uint8_t *buf, size_t size)
{
	memset(buf + REC_HOFF_HEADER_CRC, 0, 4);
	rec_put_le32(buf + REC_HOFF_HEADER_CRC, ref_crc32c(buf, size));
}

static rec_chunk_header sample(void)
{
	rec_chunk_header h;
	memset(&h, 0, sizeof(h));
	h.major = REC_FORMAT_MAJOR;
	h.minor = 7;
	h.header_size = 999; /* encode writes 128 */
	h.payload_crc = 0xDEADBEEFu;
	h.payload_size = 0x0102030405060708ull;
	h.flags = REC_CHUNK_FINAL | 0x8000u; /* bit 15 is Unused, allowed */
	h.codec = REC_CODEC_LZ4;
	h.level = -3;
	h.section_count = 0xABCD;
	h.raw_size = 0x1112131415161718ull;
	h.event_count = 123456789012ull;
	h.start_wall_ns = -1234567890123456789ll;
	h.start_ticks = 0xF0E0D0C0B0A09080ull;
	h.tick_frequency = 2400000000ull;
	h.duration_ticks = 77777777777ull;
	h.run_id = 0x8877665544332211ull;
	h.process_start_ns = -42;
	h.pid = 0xFEDCBA98u;
	h.sequence = 0x7FFFFFFFu;
	return h;
}

static void t_roundtrip(void **state)
{
	(void)state;
	rec_chunk_header h = sample(), g;
	uint8_t buf[REC_HEADER_SIZE_V1];
	const char *msg = "x";
	rec_chunk_header_encode(&h, buf);
	assert_int_equal(h.header_size, REC_HEADER_SIZE_V1);
	assert_int_equal(rec_chunk_header_decode(buf, sizeof(buf), &g, &msg), REC_OK);
	assert_null(msg);
	assert_int_equal(g.major, h.major);
	assert_int_equal(g.minor, 7);
	assert_int_equal(g.header_size, 128);
	assert_int_equal(g.header_crc, h.header_crc);
	assert_int_equal(g.payload_crc, 0xDEADBEEFu);
	assert_int_equal(g.payload_size, 0x0102030405060708ull);
	assert_int_equal(g.flags, REC_CHUNK_FINAL | 0x8000u);
	assert_int_equal(g.codec, REC_CODEC_LZ4);
	assert_int_equal(g.level, -3);
	assert_int_equal(g.section_count, 0xABCD);
	assert_int_equal(g.raw_size, 0x1112131415161718ull);
	assert_int_equal(g.event_count, 123456789012ull);
	assert_true(g.start_wall_ns == -1234567890123456789ll);
	assert_int_equal(g.start_ticks, 0xF0E0D0C0B0A09080ull);
	assert_int_equal(g.tick_frequency, 2400000000ull);
	assert_int_equal(g.duration_ticks, 77777777777ull);
	assert_int_equal(g.run_id, 0x8877665544332211ull);
	assert_true(g.process_start_ns == -42);
	assert_int_equal(g.pid, 0xFEDCBA98u);
	assert_int_equal(g.sequence, 0x7FFFFFFFu);
	/* msg may be NULL */
	assert_int_equal(rec_chunk_header_decode(buf, sizeof(buf), &g, NULL), REC_OK);
	/* more bytes available than the header is fine */
	uint8_t more[300];
	memcpy(more, buf, sizeof(buf));
	memset(more + 128, 0xEE, sizeof(more) - 128);
	assert_int_equal(rec_chunk_header_decode(more, sizeof(more), &g, &msg), REC_OK);
}

static void t_layout(void **state)
{
	(void)state;
	rec_chunk_header h = sample();
	uint8_t buf[REC_HEADER_SIZE_V1];
	memset(buf, 0x5A, sizeof(buf));
	rec_chunk_header_encode(&h, buf);
	static const uint8_t magic[8] = { 0x89, 'R', 'E', 'C', 0x0D, 0x0A, 0x1A, 0x0A };
	assert_memory_equal(buf, magic, 8);
	assert_memory_equal(rec_magic, magic, 8);
	assert_int_equal(buf[8], 1);
	assert_int_equal(buf[9], 0);
	assert_int_equal(buf[10], 7);
	assert_int_equal(buf[12], 128);
	assert_int_equal(buf[13], 0);
	assert_int_equal(buf[20], 0xEF); /* payload crc, little-endian */
	assert_int_equal(buf[23], 0xDE);
	assert_int_equal(buf[24], 0x08);
	assert_int_equal(buf[31], 0x01);
	assert_int_equal(buf[32], 0x01);
	assert_int_equal(buf[33], 0x80);
	assert_int_equal(buf[36], 2);
	assert_int_equal(buf[37], 0xFD); /* -3 */
	assert_int_equal(buf[38], 0xCD);
	assert_int_equal(buf[39], 0xAB);
	assert_int_equal(buf[40], 0x18);
	/* -1234567890123456789 = 0xEEDDEF0B82167EEB */
	static const uint8_t wall[8] = { 0xEB, 0x7E, 0x16, 0x82, 0x0B, 0xEF, 0xDD, 0xEE };
	assert_memory_equal(buf + 56, wall, 8);
	assert_int_equal(buf[64], 0x80);
	assert_int_equal(rec_le64(buf + 72), 2400000000ull);
	assert_int_equal(rec_le64(buf + 88), 0x8877665544332211ull);
	assert_int_equal(buf[96], 0xD6); /* -42 */
	assert_int_equal(buf[103], 0xFF);
	assert_int_equal(rec_le32(buf + 104), 0xFEDCBA98u);
	assert_int_equal(rec_le32(buf + 108), 0x7FFFFFFFu);
	for (int i = 112; i < 128; i++)
		assert_int_equal(buf[i], 0);
	/* Header_Checksum = CRC32C of the header with the field as zero. */
	uint8_t copy[REC_HEADER_SIZE_V1];
	memcpy(copy, buf, sizeof(copy));
	memset(copy + 16, 0, 4);
	assert_int_equal(rec_le32(buf + 16), ref_crc32c(copy, sizeof(copy)));
	assert_int_equal(h.header_crc, rec_le32(buf + 16));
}

static rec_status dec(const uint8_t *buf, size_t avail, const char **msg)
{
	rec_chunk_header g;
	*msg = NULL;
	rec_status st = rec_chunk_header_decode(buf, avail, &g, msg);
	if (st != REC_OK)
		assert_non_null(*msg);
	return st;
}

static void t_errors(void **state)
{
	(void)state;
	rec_chunk_header h = sample(), g;
	uint8_t good[REC_HEADER_SIZE_V1], buf[REC_MAX_HEADER_SIZE + 64];
	const char *msg;
	rec_chunk_header_encode(&h, good);

	/* short input */
	for (size_t n = 0; n < 8; n++)
		assert_int_equal(dec(good, n, &msg), REC_ERR_TRUNCATED);
	for (size_t n = 8; n < REC_PREFIX_SIZE; n++)
		assert_int_equal(dec(good, n, &msg), REC_ERR_TRUNCATED);
	for (size_t n = REC_PREFIX_SIZE; n < 128; n += 7)
		assert_int_equal(dec(good, n, &msg), REC_ERR_TRUNCATED);
	/* the prefix is reported even then */
	assert_int_equal(rec_chunk_header_decode(good, 100, &g, &msg), REC_ERR_TRUNCATED);
	assert_int_equal(g.header_size, 128);
	assert_int_equal(g.payload_size, 0x0102030405060708ull);

	/* bad magic is told before truncation of the rest */
	memcpy(buf, good, 128);
	buf[3] = 'X';
	assert_int_equal(dec(buf, 8, &msg), REC_ERR_BAD_MAGIC);
	assert_string_equal(msg, "bad magic");
	assert_int_equal(dec(buf, 128, &msg), REC_ERR_BAD_MAGIC);
	/* text is never a recording */
	assert_int_equal(dec((const uint8_t *)"hello world, this is text......!", 32, &msg),
			 REC_ERR_BAD_MAGIC);

	/* any flipped byte is caught */
	for (size_t i = 0; i < 128; i++) {
		memcpy(buf, good, 128);
		buf[i] ^= 0xFF;
		rec_status st = dec(buf, 128, &msg);
		if (i < 8)
			assert_int_equal(st, REC_ERR_BAD_MAGIC);
		else if (i >= 12 && i < 16)
			assert_true(st == REC_ERR_CORRUPT || st == REC_ERR_TRUNCATED);
		else {
			assert_int_equal(st, REC_ERR_CORRUPT);
			assert_string_equal(msg, "header checksum mismatch");
		}
	}

	/* header size out of bounds (checked before the checksum) */
	static const uint32_t bad_sizes[] = { 0, 20, 31, REC_MAX_HEADER_SIZE + 1, 5000, UINT32_MAX };
	for (size_t i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++) {
		memcpy(buf, good, 128);
		rec_put_le32(buf + 12, bad_sizes[i]);
		assert_int_equal(dec(buf, sizeof(buf), &msg), REC_ERR_CORRUPT);
	}

	/* major 2 with a valid checksum: unsupported version, prefix readable */
	h = sample();
	h.major = 2;
	rec_chunk_header_encode(&h, buf);
	assert_int_equal(dec(buf, 128, &msg), REC_ERR_UNSUPPORTED_VERSION);
	assert_string_equal(msg, "unsupported format major version");
	assert_int_equal(rec_chunk_header_decode(buf, 128, &g, &msg), REC_ERR_UNSUPPORTED_VERSION);
	assert_int_equal(g.major, 2);
	assert_int_equal(g.minor, 7);
	assert_int_equal(g.payload_size, 0x0102030405060708ull);
	h.major = 0;
	rec_chunk_header_encode(&h, buf);
	assert_int_equal(dec(buf, 128, &msg), REC_ERR_UNSUPPORTED_VERSION);
	/* a future major may have a small header: the 32-byte prefix is enough */
	memcpy(buf, good, 128);
	rec_put_le16(buf + 8, 9);
	rec_put_le32(buf + 12, 32);
	reseal(buf, 32);
	assert_int_equal(dec(buf, 32, &msg), REC_ERR_UNSUPPORTED_VERSION);

	/* major 1 needs the 128-byte layout */
	memcpy(buf, good, 128);
	rec_put_le32(buf + 12, 64);
	reseal(buf, 64);
	assert_int_equal(dec(buf, 128, &msg), REC_ERR_CORRUPT);
	assert_string_not_equal(msg, "header checksum mismatch");

	/* reserved flags (each bit 17..31) with a valid checksum; bit 16 is
	 * 1.3's SPLIT_EVENTS */
	h = sample();
	h.flags = REC_CHUNK_SPLIT_EVENTS;
	rec_chunk_header_encode(&h, buf);
	assert_int_equal(dec(buf, 128, &msg), REC_OK);
	for (unsigned bit = 17; bit < 32; bit++) {
		h = sample();
		h.flags = 1u << bit;
		rec_chunk_header_encode(&h, buf);
		assert_int_equal(dec(buf, 128, &msg), REC_ERR_UNSUPPORTED);
		assert_string_equal(msg, "reserved header flag set");
		assert_int_equal(rec_chunk_header_decode(buf, 128, &g, &msg), REC_ERR_UNSUPPORTED);
		assert_int_equal(g.flags, 1u << bit); /* caller can name the flag */
	}
	/* unused flags 1..15 are fine */
	h = sample();
	h.flags = 0xFFFFu;
	rec_chunk_header_encode(&h, buf);
	assert_int_equal(dec(buf, 128, &msg), REC_OK);

	/* codec */
	for (unsigned c = 0; c < 256; c++) {
		h = sample();
		h.codec = (uint8_t)c;
		rec_chunk_header_encode(&h, buf);
		rec_status st = dec(buf, 128, &msg);
		if (c <= REC_CODEC_LZ4) {
			assert_int_equal(st, REC_OK);
		} else {
			assert_int_equal(st, REC_ERR_UNSUPPORTED);
			assert_string_equal(msg, "unknown codec");
		}
	}

	/* tick frequency */
	h = sample();
	h.tick_frequency = 0;
	rec_chunk_header_encode(&h, buf);
	assert_int_equal(dec(buf, 128, &msg), REC_ERR_CORRUPT);
	assert_string_equal(msg, "tick frequency is zero");
}

/* A longer header (a newer minor) with junk in the Unused tail is read. */
static void t_larger_header(void **state)
{
	(void)state;
	rec_chunk_header h = sample(), g;
	uint8_t buf[REC_MAX_HEADER_SIZE];
	const char *msg;
	static const uint32_t sizes[] = { 129, 256, REC_MAX_HEADER_SIZE };
	for (size_t i = 0; i < 3; i++) {
		uint32_t size = sizes[i];
		rec_chunk_header_encode(&h, buf);
		for (size_t j = 112; j < size; j++)
			buf[j] = (uint8_t)(j * 31 + 1);
		rec_put_le32(buf + 12, size);
		reseal(buf, size);
		assert_int_equal(rec_chunk_header_decode(buf, size, &g, &msg), REC_OK);
		assert_int_equal(g.header_size, size);
		assert_int_equal(g.sequence, h.sequence);
		assert_int_equal(g.run_id, h.run_id);
		assert_int_equal(rec_chunk_header_decode(buf, size - 1, &g, &msg), REC_ERR_TRUNCATED);
		assert_string_equal(msg, "truncated chunk header");
	}
}

static void t_section_header(void **state)
{
	(void)state;
	rec_section_header s = { REC_SECTION_EVENTS, REC_SECTION_COMPRESSED | 0x8000u, 0x01020304u,
				 0xA0B0C0D0u, 0xFFFFFFFFu },
			   t;
	uint8_t buf[REC_SECTION_HEADER_SIZE];
	rec_section_header_encode(&s, buf);
	static const uint8_t want[16] = { 8, 0, 0x01, 0x80, 0x04, 0x03, 0x02, 0x01,
					  0xD0, 0xC0, 0xB0, 0xA0, 0xFF, 0xFF, 0xFF, 0xFF };
	assert_memory_equal(buf, want, 16);
	memset(&t, 0, sizeof(t));
	rec_section_header_decode(buf, &t);
	assert_int_equal(t.kind, REC_SECTION_EVENTS);
	assert_int_equal(t.flags, REC_SECTION_COMPRESSED | 0x8000u);
	assert_int_equal(t.item_count, 0x01020304u);
	assert_int_equal(t.stored_size, 0xA0B0C0D0u);
	assert_int_equal(t.raw_size, 0xFFFFFFFFu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_roundtrip),
		cmocka_unit_test(t_layout),
		cmocka_unit_test(t_errors),
		cmocka_unit_test(t_larger_header),
		cmocka_unit_test(t_section_header),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
