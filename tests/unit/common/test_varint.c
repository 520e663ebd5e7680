/* SPDX-License-Identifier: MIT */
/* Unit tests: LEB128 varints and zigzag (common/varint.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "common/common_internal.h"

/* Expected encoding of v, built independently of rec_varint_put. */
static size_t ref_encode(uint64_t v, uint8_t *out)
{
	size_t n = 0;
	do {
		uint8_t b = (uint8_t)(v & 0x7F);
		v >>= 7;
		out[n++] = (uint8_t)(b | (v ? 0x80 : 0));
	} while (v);
	return n;
}

/* Decode buf[0..len) (optionally inside a bigger buffer) and check, with
 * rec_varint_get() and rec_varint_next(). */
static void check_decode(const uint8_t *buf, size_t len, size_t room, uint64_t want)
{
	const uint8_t *p = buf;
	uint64_t got = ~want;
	assert_true(rec_varint_get(&p, buf + room, &got));
	assert_ptr_equal(p, buf + len);
	assert_int_equal(got, want);
	rec_varint_res q = rec_varint_next(buf, buf + room);
	assert_ptr_equal(q.p, buf + len);
	assert_int_equal(q.v, want);
}

static void t_boundaries(void **state)
{
	(void)state;
	uint64_t vals[64];
	size_t lens[64], nv = 0;

	vals[nv] = 0, lens[nv++] = 1;
	for (unsigned k = 1; k <= 9; k++) {
		uint64_t b = (uint64_t)1 << (7 * k);
		vals[nv] = b - 1, lens[nv++] = k;   /* largest k-byte value */
		vals[nv] = b, lens[nv++] = k + 1;   /* smallest (k+1)-byte value */
	}
	vals[nv] = (uint64_t)1 << 63, lens[nv++] = 10;
	vals[nv] = UINT64_MAX, lens[nv++] = 10;
	vals[nv] = UINT64_MAX - 1, lens[nv++] = 10;

	for (size_t i = 0; i < nv; i++) {
		uint8_t enc[REC_VARINT_MAX + 8], ref[16];
		size_t n;

		memset(enc, 0xAA, sizeof(enc));
		n = rec_varint_put(enc, vals[i]);
		assert_int_equal(n, lens[i]);
		assert_int_equal(rec_varint_len(vals[i]), lens[i]);
		assert_int_equal(ref_encode(vals[i], ref), lens[i]);
		assert_memory_equal(enc, ref, n);
		assert_int_equal(enc[n], 0xAA); /* nothing written past n */
		/* Exact end (bounds-checked path) and with room (unrolled path). */
		check_decode(enc, n, n, vals[i]);
		check_decode(enc, n, sizeof(enc), vals[i]);
	}
}

static void t_exact_bytes(void **state)
{
	(void)state;
	static const struct {
		uint64_t v;
		size_t n;
		uint8_t b[10];
	} cases[] = {
		{ 0, 1, { 0x00 } },
		{ 1, 1, { 0x01 } },
		{ 127, 1, { 0x7F } },
		{ 128, 2, { 0x80, 0x01 } },
		{ 300, 2, { 0xAC, 0x02 } },
		{ 16383, 2, { 0xFF, 0x7F } },
		{ 16384, 3, { 0x80, 0x80, 0x01 } },
		{ (1u << 21) - 1, 3, { 0xFF, 0xFF, 0x7F } },
		{ 1u << 21, 4, { 0x80, 0x80, 0x80, 0x01 } },
		{ (uint64_t)1 << 63, 10, { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 } },
		{ UINT64_MAX, 10, { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01 } },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t enc[REC_VARINT_MAX];
		assert_int_equal(rec_varint_put(enc, cases[i].v), cases[i].n);
		assert_memory_equal(enc, cases[i].b, cases[i].n);
		check_decode(cases[i].b, cases[i].n, cases[i].n, cases[i].v);
	}
}

static void t_truncated(void **state)
{
	(void)state;
	for (unsigned k = 1; k <= 10; k++) {
		uint64_t v = k == 10 ? UINT64_MAX : ((uint64_t)1 << (7 * k)) - 1;
		uint8_t enc[REC_VARINT_MAX];
		size_t n = rec_varint_put(enc, v);
		assert_int_equal(n, k);
		for (size_t cut = 0; cut < n; cut++) {
			const uint8_t *p = enc;
			uint64_t out = 12345;
			assert_false(rec_varint_get(&p, enc + cut, &out));
			assert_ptr_equal(p, enc);
			/* the slow path directly, too */
			assert_false(rec_varint_get_slow(&p, enc + cut, &out));
			assert_ptr_equal(p, enc);
			assert_null(rec_varint_next(enc, enc + cut).p);
		}
	}
}

static void t_overlong(void **state)
{
	(void)state;
	uint8_t buf[16];
	const uint8_t *p;
	uint64_t out;

	/* 11 bytes: 10 continuation bytes then 0x00. */
	memset(buf, 0x80, 10);
	buf[10] = 0x00;
	for (size_t room = 10; room <= 11; room++) {
		p = buf;
		assert_false(rec_varint_get(&p, buf + room, &out));
		assert_ptr_equal(p, buf);
		assert_null(rec_varint_next(buf, buf + room).p);
	}
	/* 10th byte = 2 (bit 64) and 0x7F: do not fit in 64 bits. */
	static const uint8_t bad10[] = { 0x02, 0x7F, 0x03, 0x81 };
	for (size_t i = 0; i < sizeof(bad10); i++) {
		memset(buf, 0xFF, 9);
		buf[9] = bad10[i];
		memset(buf + 10, 0, 6);
		for (size_t room = 10; room <= 16; room += 6) {
			p = buf;
			assert_false(rec_varint_get(&p, buf + room, &out));
			assert_ptr_equal(p, buf);
		}
	}
	/* 10th byte 1 and 0 are fine (0 is a non-shortest but fitting form). */
	memset(buf, 0x80, 9);
	buf[9] = 0x00;
	check_decode(buf, 10, 10, 0);
	buf[9] = 0x01;
	check_decode(buf, 10, 10, (uint64_t)1 << 63);
	memset(buf + 10, 0x55, 6);
	check_decode(buf, 10, 16, (uint64_t)1 << 63);
	/* empty input */
	p = buf;
	assert_false(rec_varint_get(&p, buf, &out));
	assert_ptr_equal(p, buf);
}

static uint64_t rnd_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void t_stream_random(void **state)
{
	(void)state;
	enum { N = 20000 };
	uint64_t *vals = malloc(N * sizeof(*vals));
	uint8_t *buf = malloc(N * REC_VARINT_MAX);
	size_t len = 0;
	assert_non_null(vals);
	assert_non_null(buf);
	for (size_t i = 0; i < N; i++) {
		unsigned bits = (unsigned)(rnd() % 65);
		vals[i] = bits == 0 ? 0 : rnd() >> (64 - bits);
		len += rec_varint_put(buf + len, vals[i]);
	}
	const uint8_t *p = buf, *end = buf + len;
	for (size_t i = 0; i < N; i++) {
		uint64_t v;
		assert_true(rec_varint_get(&p, end, &v));
		assert_int_equal(v, vals[i]);
	}
	assert_ptr_equal(p, end);
	uint64_t v;
	assert_false(rec_varint_get(&p, end, &v));
	free(vals);
	free(buf);
}

/* Every length, with every amount of input left after the varint (which
 * switches between the word-at-a-time and the byte-by-byte decoder), and
 * with following bytes that look like continuations. */
static void t_paths(void **state)
{
	(void)state;
	for (unsigned k = 1; k <= 10; k++) {
		for (int rep = 0; rep < 200; rep++) {
			uint64_t v = rnd();
			if (k < 10)
				v &= ((uint64_t)1 << (7 * k)) - 1;
			if (k > 1)
				v |= (uint64_t)1 << (7 * (k - 1)); /* force exactly k bytes */
			uint8_t buf[32];
			size_t n = rec_varint_put(buf, v);
			assert_int_equal(n, k);
			for (size_t extra = 0; extra <= 12; extra++) {
				memset(buf + n, rep & 1 ? 0xFF : 0x80 | (int)extra, extra);
				check_decode(buf, n, n + extra, v);
			}
		}
	}
	/* all two-byte values, through both decoders */
	for (uint64_t v = 128; v < 16384; v++) {
		uint8_t buf[16];
		memset(buf, 0xFF, sizeof(buf));
		size_t n = rec_varint_put(buf, v);
		assert_int_equal(n, 2);
		check_decode(buf, 2, 2, v);
		check_decode(buf, 2, sizeof(buf), v);
	}
}

/* rec_varint_next() against rec_varint_get() on random bytes (short,
 * non-minimal and overlong encodings, every amount of input left): the same
 * outcome, position and value. */
static void t_next_same(void **state)
{
	(void)state;
	uint8_t buf[16];
	for (int rep = 0; rep < 200000; rep++) {
		uint64_t a = rnd(), b = rnd();
		memcpy(buf, &a, 8);
		memcpy(buf + 8, &b, 8);
		/* more continuation bytes than random bytes have */
		unsigned cont = (unsigned)(rnd() % 12);
		for (unsigned i = 0; i < cont && i < sizeof buf; i++)
			buf[i] |= 0x80;
		size_t room = (size_t)(rnd() % (sizeof buf + 1));
		const uint8_t *p = buf;
		uint64_t v = 0;
		bool ok = rec_varint_get(&p, buf + room, &v);
		rec_varint_res q = rec_varint_next(buf, buf + room);
		if (!ok) {
			assert_null(q.p);
			continue;
		}
		assert_ptr_equal(q.p, p);
		assert_int_equal(q.v, v);
	}
}

static void t_zigzag(void **state)
{
	(void)state;
	assert_int_equal(rec_zigzag(0), 0);
	assert_int_equal(rec_zigzag(-1), 1);
	assert_int_equal(rec_zigzag(1), 2);
	assert_int_equal(rec_zigzag(-2), 3);
	assert_int_equal(rec_zigzag(2), 4);
	assert_int_equal(rec_zigzag(INT64_MAX), UINT64_MAX - 1);
	assert_int_equal(rec_zigzag(INT64_MIN), UINT64_MAX);
	assert_int_equal(rec_unzigzag(0), 0);
	assert_int_equal(rec_unzigzag(1), -1);
	assert_int_equal(rec_unzigzag(2), 1);
	assert_int_equal(rec_unzigzag(UINT64_MAX - 1), INT64_MAX);
	assert_true(rec_unzigzag(UINT64_MAX) == INT64_MIN);
	for (int i = 0; i < 10000; i++) {
		int64_t v = (int64_t)rnd();
		if (i & 1)
			v >>= rnd() % 64;
		assert_true(rec_unzigzag(rec_zigzag(v)) == v);
		/* small magnitudes stay short */
		if (v > -64 && v < 64)
			assert_int_equal(rec_varint_len(rec_zigzag(v)), 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_boundaries),
		cmocka_unit_test(t_exact_bytes),
		cmocka_unit_test(t_truncated),
		cmocka_unit_test(t_overlong),
		cmocka_unit_test(t_stream_random),
		cmocka_unit_test(t_paths),
		cmocka_unit_test(t_next_same),
		cmocka_unit_test(t_zigzag),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
