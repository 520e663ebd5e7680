/* SPDX-License-Identifier: MIT */
/*
 * v10.h - turn the chunks of a recording the writer made (format 1.3, in
 * one stream: REC_EVENTS_ONE_STREAM or codec none) into chunks of an older
 * minor version, in place, as a writer of that version wrote them: 1.0
 * (no Front_Checksum), 1.1 and 1.2 (gen_testdata's golden files, the
 * tests of 1.0 input).
 */
#ifndef REC_TEST_V10_H
#define REC_TEST_V10_H

#include <stddef.h>
#include <stdint.h>

#include "common/common_internal.h"

/* Every chunk of p..p+n made format 1.minor in place: Minor_Version set,
 * Header_Checksum fixed, and for 1.0 (no_front) the FRONT_CRC flag cleared
 * and Front_Checksum zeroed.  A chunk with split EVENTS (1.3) cannot be
 * older: the conversion stops there, as at anything not a chunk.  Returns
 * the number of chunks converted. */
static __attribute__((unused)) size_t rec_t_to_minor(uint8_t *p, size_t n, uint16_t minor, int no_front)
{
	size_t off = 0, k = 0;
	while (n - off >= REC_HEADER_SIZE_V1 && memcmp(p + off, rec_magic, REC_MAGIC_LEN) == 0) {
		uint8_t *h = p + off;
		uint32_t hs = rec_le32(h + REC_HOFF_HEADER_SIZE);
		uint64_t ps = rec_le64(h + REC_HOFF_PAYLOAD_SIZE);
		if (hs < REC_HEADER_SIZE_V1 || hs > n - off || ps > n - off - hs ||
		    (rec_le32(h + REC_HOFF_FLAGS) & REC_CHUNK_SPLIT_EVENTS))
			break;
		rec_put_le16(h + REC_HOFF_MINOR, minor);
		if (no_front) {
			rec_put_le32(h + REC_HOFF_FLAGS,
				     rec_le32(h + REC_HOFF_FLAGS) & ~(uint32_t)REC_CHUNK_FRONT_CRC);
			rec_put_le32(h + REC_HOFF_FRONT_CRC, 0);
		}
		rec_put_le32(h + REC_HOFF_HEADER_CRC, 0);
		rec_put_le32(h + REC_HOFF_HEADER_CRC, rec_crc32c(0, h, hs));
		off += hs + (size_t)ps;
		k++;
	}
	return k;
}

/* 1.0: nothing else differs from 1.1, so this is how a 1.0 writer wrote
 * them (the tests check that 1.0 input keeps the whole-payload check). */
static __attribute__((unused)) size_t rec_t_to_v10(uint8_t *p, size_t n)
{
	return rec_t_to_minor(p, n, 0, 1);
}

/* 1.1: for chunks without 1.2's FRAME_SOURCE section nothing else differs. */
static __attribute__((unused)) size_t rec_t_to_v11(uint8_t *p, size_t n)
{
	return rec_t_to_minor(p, n, 1, 0);
}

/* 1.2: for chunks in one stream (REC_EVENTS_ONE_STREAM, or codec none). */
static __attribute__((unused)) size_t rec_t_to_v12(uint8_t *p, size_t n)
{
	return rec_t_to_minor(p, n, 2, 0);
}

#endif
