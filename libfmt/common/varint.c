/* SPDX-License-Identifier: MIT */
/*
 * varint.c - the out-of-line part of the LEB128 decoder.  rec_varint_get()
 * (common_internal.h) handles one-byte values inline and calls this for the
 * rest.  This is the only varint decoder of the project.
 */
#include "common/common_internal.h"

/* One step of the unrolled decoder: byte i of a varint that is known to have
 * REC_VARINT_MAX bytes available. */
#define REC_VARINT_STEP(i)                                       \
	do {                                                     \
		b = p[i];                                        \
		v |= (uint64_t)(b & 0x7Fu) << (7 * (i));         \
		if (b < 0x80u) {                                 \
			*out = v;                                \
			*pp = p + (i) + 1;                       \
			return true;                             \
		}                                                \
	} while (0)

bool rec_varint_get_slow(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	uint8_t b;

	if (p >= end)
		return false;
	if ((size_t)(end - p) >= REC_VARINT_MAX) {
		/* Common case: no bounds check per byte. */
		REC_VARINT_STEP(0);
		REC_VARINT_STEP(1);
		REC_VARINT_STEP(2);
		REC_VARINT_STEP(3);
		REC_VARINT_STEP(4);
		REC_VARINT_STEP(5);
		REC_VARINT_STEP(6);
		REC_VARINT_STEP(7);
		REC_VARINT_STEP(8);
		/* 10th byte: only bit 0 is left of a uint64, and it must end the
		 * varint (so > 1 covers both overflow and an 11th byte). */
		b = p[9];
		if (b > 1u)
			return false;
		*out = v | ((uint64_t)b << 63);
		*pp = p + 10;
		return true;
	}

	/* Near the end of the input: check every byte. */
	for (unsigned i = 0; p + i < end; i++) {
		b = p[i];
		if (i == REC_VARINT_MAX - 1) {
			if (b > 1u)
				return false;
			*out = v | ((uint64_t)b << 63);
			*pp = p + i + 1;
			return true;
		}
		v |= (uint64_t)(b & 0x7Fu) << (7 * i);
		if (b < 0x80u) {
			*out = v;
			*pp = p + i + 1;
			return true;
		}
	}
	return false; /* truncated inside the varint */
}
