/* SPDX-License-Identifier: MIT */
/*
 * v10.h - turn the chunks of a recording the writer made (format 1.3, in
 * one stream: REC_EVENTS_ONE_STREAM or codec none) into
 * format 1.0 chunks, in place: Minor_Version 0, the FRONT_CRC flag clear,
 * Front_Checksum (bytes 112..115) zero, Header_Checksum fixed.  Nothing else
 * differs between the two versions, so this is how a 1.0 writer wrote them:
 * the tests use it to check that 1.0 input keeps the whole-payload check.
 */
#ifndef REC_TEST_V10_H
#define REC_TEST_V10_H

#include <stddef.h>
#include <stdint.h>

#include "common/common_internal.h"

/* Returns the number of chunks converted (stops at anything not a chunk). */
static __attribute__((unused)) size_t rec_t_to_v10(uint8_t *p, size_t n)
{
	size_t off = 0, k = 0;
	while (n - off >= REC_HEADER_SIZE_V1 && memcmp(p + off, rec_magic, REC_MAGIC_LEN) == 0) {
		uint8_t *h = p + off;
		uint32_t hs = rec_le32(h + REC_HOFF_HEADER_SIZE);
		uint64_t ps = rec_le64(h + REC_HOFF_PAYLOAD_SIZE);
		if (hs < REC_HEADER_SIZE_V1 || hs > n - off || ps > n - off - hs ||
		    (rec_le32(h + REC_HOFF_FLAGS) & REC_CHUNK_SPLIT_EVENTS)) /* cannot be 1.0 */
			break;
		rec_put_le16(h + REC_HOFF_MINOR, 0);
		rec_put_le32(h + REC_HOFF_FLAGS, rec_le32(h + REC_HOFF_FLAGS) & ~(uint32_t)REC_CHUNK_FRONT_CRC);
		rec_put_le32(h + REC_HOFF_FRONT_CRC, 0);
		rec_put_le32(h + REC_HOFF_HEADER_CRC, 0);
		rec_put_le32(h + REC_HOFF_HEADER_CRC, rec_crc32c(0, h, hs));
		off += hs + (size_t)ps;
		k++;
	}
	return k;
}

/* The chunks of a recording the writer made (1.2) as format 1.1 chunks, in
 * place: Minor_Version 1, Header_Checksum fixed; for chunks without the
 * 1.2 FRAME_SOURCE section nothing else differs.  Returns the number of
 * chunks converted. */
static __attribute__((unused)) size_t rec_t_to_v11(uint8_t *p, size_t n)
{
	size_t off = 0, k = 0;
	while (n - off >= REC_HEADER_SIZE_V1 && memcmp(p + off, rec_magic, REC_MAGIC_LEN) == 0) {
		uint8_t *h = p + off;
		uint32_t hs = rec_le32(h + REC_HOFF_HEADER_SIZE);
		uint64_t ps = rec_le64(h + REC_HOFF_PAYLOAD_SIZE);
		if (hs < REC_HEADER_SIZE_V1 || hs > n - off || ps > n - off - hs ||
		    (rec_le32(h + REC_HOFF_FLAGS) & REC_CHUNK_SPLIT_EVENTS)) /* cannot be 1.1 */
			break;
		rec_put_le16(h + REC_HOFF_MINOR, 1);
		rec_put_le32(h + REC_HOFF_HEADER_CRC, 0);
		rec_put_le32(h + REC_HOFF_HEADER_CRC, rec_crc32c(0, h, hs));
		off += hs + (size_t)ps;
		k++;
	}
	return k;
}

/* The chunks of a recording the writer made (1.3) in one stream
 * (REC_EVENTS_ONE_STREAM, or codec none) as format 1.2 chunks, in place:
 * Minor_Version 2, Header_Checksum fixed.  A split chunk cannot be 1.2:
 * the conversion stops there.  Returns the number of chunks converted. */
static __attribute__((unused)) size_t rec_t_to_v12(uint8_t *p, size_t n)
{
	size_t off = 0, k = 0;
	while (n - off >= REC_HEADER_SIZE_V1 && memcmp(p + off, rec_magic, REC_MAGIC_LEN) == 0) {
		uint8_t *h = p + off;
		uint32_t hs = rec_le32(h + REC_HOFF_HEADER_SIZE);
		uint64_t ps = rec_le64(h + REC_HOFF_PAYLOAD_SIZE);
		if (hs < REC_HEADER_SIZE_V1 || hs > n - off || ps > n - off - hs ||
		    (rec_le32(h + REC_HOFF_FLAGS) & REC_CHUNK_SPLIT_EVENTS))
			break;
		rec_put_le16(h + REC_HOFF_MINOR, 2);
		rec_put_le32(h + REC_HOFF_HEADER_CRC, 0);
		rec_put_le32(h + REC_HOFF_HEADER_CRC, rec_crc32c(0, h, hs));
		off += hs + (size_t)ps;
		k++;
	}
	return k;
}

#endif
