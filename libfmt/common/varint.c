/* SPDX-License-Identifier: MIT */
/*
 * varint.c - the out-of-line part of the LEB128 decoder,
 * rec_varint_decode_slow().  rec_varint_get() (common_internal.h) handles
 * one- and two-byte values inline and calls it for the rest;
 * rec_varint_next() handles up to four bytes inline, then calls it through
 * rec_varint_next_slow().  This is the only varint decoder of the project.
 *
 * With 10 or more bytes left, one 8-byte load finds the terminating byte
 * (the first with bit 7 clear) and the 7-bit groups are packed with three
 * mask-and-shift steps: no branch depends on the varint's length, which is
 * what makes a loop slow on mixed-length data.  Near the end of the input a
 * byte loop checks every byte against end.
 */
#include "common/common_internal.h"

#define REC_LO7 0x7F7F7F7F7F7F7F7Full
#define REC_HI1 0x8080808080808080ull

rec_varint_vn rec_varint_decode_slow(const uint8_t *p, const uint8_t *end)
{
	const rec_varint_vn fail = { 0, 0 };
	uint64_t v = 0;
	uint8_t b;

	if (p >= end)
		return fail;
	if ((size_t)(end - p) >= REC_VARINT_MAX) {
		uint64_t x;
		/* Two bytes (the commonest case here, since one-byte values are
		 * decoded inline) with a well-predicted branch. */
		if (p[1] < 0x80u)
			return (rec_varint_vn){ (uint64_t)(p[0] & 0x7Fu) | ((uint64_t)p[1] << 7), 2 };
		x = rec_load_le64(p);
		uint64_t stop = ~x & REC_HI1; /* bit 7 of every final-candidate byte */
		if (stop) {
			/* stop ^ (stop - 1): every bit up to the first final byte's bit 7 */
			uint64_t keep = stop ^ (stop - 1);
			return (rec_varint_vn){ rec_varint_pack7x8(x & keep & REC_LO7),
						 (size_t)(__builtin_ctzll(stop) >> 3) + 1 };
		}
		/* 9 or 10 bytes: the first 8 all continue. */
		v = rec_varint_pack7x8(x & REC_LO7);
		b = p[8];
		v |= (uint64_t)(b & 0x7Fu) << 56;
		if (b < 0x80u)
			return (rec_varint_vn){ v, 9 };
		/* 10th byte: only bit 0 is left of a uint64, and it must end the
		 * varint (so > 1 covers both overflow and an 11th byte). */
		b = p[9];
		if (b > 1u)
			return fail;
		return (rec_varint_vn){ v | ((uint64_t)b << 63), 10 };
	}

	/* Near the end of the input: check every byte. */
	for (unsigned i = 0; p + i < end; i++) {
		b = p[i];
		if (i == REC_VARINT_MAX - 1) {
			if (b > 1u)
				return fail;
			return (rec_varint_vn){ v | ((uint64_t)b << 63), i + 1 };
		}
		v |= (uint64_t)(b & 0x7Fu) << (7 * i);
		if (b < 0x80u)
			return (rec_varint_vn){ v, i + 1 };
	}
	return fail; /* truncated inside the varint */
}

bool rec_varint_get_slow(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	rec_varint_vn r = rec_varint_decode_slow(*pp, end);
	if (!r.n)
		return false;
	*out = r.v;
	*pp += r.n;
	return true;
}

rec_varint_res rec_varint_next_slow(const uint8_t *p, const uint8_t *end)
{
	rec_varint_vn d = rec_varint_decode_slow(p, end);
	return (rec_varint_res){ d.n ? p + d.n : NULL, d.v };
}
