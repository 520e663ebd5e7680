/* SPDX-License-Identifier: MIT */
/*
 * craft_chunk.h - test support shared by tests/unit/read/test_reader.c and
 * test_event.c: a chunk built by hand from raw sections (stored as they
 * are, or compressed with the real codec), with valid checksums.
 *
 * Header-only on purpose, like readback.h: the helpers assert with cmocka,
 * and every object in tests/lib (*.c) is also linked into the tests/helpers
 * programs, which are not linked with -lcmocka.  Include it from one .c file
 * per binary, after <stdarg.h> <stddef.h> <stdint.h> <setjmp.h> <cmocka.h>.
 */
#ifndef REC_TESTS_LIB_CRAFT_CHUNK_H
#define REC_TESTS_LIB_CRAFT_CHUNK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "rec/rec.h"

/* ---- forward compatibility: a hand-crafted minor-7 chunk -------------------------------- */
typedef struct hsec {
	uint16_t kind;
	uint32_t items;
	rec_buf data;
} hsec;

static __attribute__((unused)) void put_str(rec_buf *b, const char *s)
{
	assert_true(rec_buf_lenbytes(b, s, strlen(s)));
}

/* Build a chunk from raw sections (stored uncompressed, or zstd). */
static __attribute__((unused)) void craft_chunk(rec_buf *out, uint16_t minor, hsec *secs, int n, uint64_t events,
			unsigned codec, uint64_t duration)
{
	rec_buf pay = { 0 };
	uint64_t raw = 0;
	for (int i = 0; i < n; i++) {
		rec_section_header sh = { secs[i].kind, 0, secs[i].items, (uint32_t)secs[i].data.len,
					  (uint32_t)secs[i].data.len };
		uint8_t hb[REC_SECTION_HEADER_SIZE];
		if (codec != REC_CODEC_NONE) {
			size_t cap = rec_codec_bound(codec, secs[i].data.len);
			uint8_t *z = malloc(cap);
			size_t zl;
			assert_non_null(z);
			assert_int_equal(rec_codec_compress(NULL, codec, 0, secs[i].data.data,
							    secs[i].data.len, z, cap, &zl),
					 REC_OK);
			sh.flags = REC_SECTION_COMPRESSED;
			sh.stored_size = (uint32_t)zl;
			rec_section_header_encode(&sh, hb);
			assert_true(rec_buf_append(&pay, hb, sizeof(hb)));
			assert_true(rec_buf_append(&pay, z, zl));
			free(z);
		} else {
			rec_section_header_encode(&sh, hb);
			assert_true(rec_buf_append(&pay, hb, sizeof(hb)));
			assert_true(rec_buf_append(&pay, secs[i].data.data, secs[i].data.len));
		}
		raw += secs[i].data.len;
	}
	rec_chunk_header h;
	memset(&h, 0, sizeof(h));
	h.major = 1;
	h.minor = minor;
	h.header_size = REC_HEADER_SIZE_V1;
	h.payload_size = pay.len;
	h.payload_crc = rec_crc32c(0, pay.data, pay.len);
	h.codec = (uint8_t)codec;
	h.section_count = (uint16_t)n;
	h.raw_size = raw;
	h.event_count = events;
	h.start_wall_ns = 2000000000000LL;
	h.start_ticks = 1000;
	h.duration_ticks = duration;
	h.tick_frequency = 1000000000u;
	h.run_id = 99;
	h.pid = 1;
	uint8_t hb[REC_HEADER_SIZE_V1];
	rec_chunk_header_encode(&h, hb);
	assert_true(rec_buf_append(out, hb, sizeof(hb)));
	assert_true(rec_buf_append(out, pay.data, pay.len));
	rec_buf_free(&pay);
}

#endif /* REC_TESTS_LIB_CRAFT_CHUNK_H */
