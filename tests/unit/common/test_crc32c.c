/* SPDX-License-Identifier: MIT */
/* Unit tests: CRC32C, software and SSE4.2 paths. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/common_internal.h"
#include "common/crc32c_internal.h"

/* Bitwise reference, independent of the library's tables. */
static uint32_t ref_crc32c(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
	}
	return ~crc;
}

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

static void check_vectors(crc_fn f)
{
	uint8_t buf[32];
	assert_int_equal(f(0, "123456789", 9), 0xE3069283u);
	assert_int_equal(f(0, "", 0), 0);
	assert_int_equal(f(0, NULL, 0), 0);
	memset(buf, 0, 32);
	assert_int_equal(f(0, buf, 32), 0x8A9136AAu);
	memset(buf, 0xFF, 32);
	assert_int_equal(f(0, buf, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	assert_int_equal(f(0, buf, 32), 0x46DD794Eu);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	assert_int_equal(f(0, buf, 32), 0x113FDB5Cu);
	assert_int_equal(f(0, "a", 1), 0xC1D04330u);
}

/* The first calls of the process come from several threads at once: the
 * lazy implementation choice must be safe and every result right.  This is
 * the first test, so the choice has not been made yet. */
static void *crc_thread(void *arg)
{
	uint8_t buf[1000];
	uintptr_t bad = 0;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 13 + (uintptr_t)arg);
	uint32_t want = ref_crc32c(0, buf, sizeof(buf));
	for (int i = 0; i < 2000; i++)
		bad += rec_crc32c(0, buf, sizeof(buf)) != want;
	return (void *)bad;
}

static void t_first_use_threads(void **state)
{
	(void)state;
	pthread_t th[4];
	for (uintptr_t i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&th[i], NULL, crc_thread, (void *)i), 0);
	for (int i = 0; i < 4; i++) {
		void *bad;
		assert_int_equal(pthread_join(th[i], &bad), 0);
		assert_null(bad);
	}
}

static void t_vectors(void **state)
{
	(void)state;
	check_vectors(rec_crc32c);
	check_vectors(rec_crc32c_sw);
	if (rec_crc32c_hw_available())
		check_vectors(rec_crc32c_hw);
	else
		print_message("SSE4.2 not available: hardware path not tested\n");
}

static uint8_t *random_buf(size_t n, uint32_t seed)
{
	uint8_t *b = malloc(n ? n : 1);
	assert_non_null(b);
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		b[i] = (uint8_t)(seed >> 16);
	}
	return b;
}

static void t_incremental(void **state)
{
	(void)state;
	enum { N = 777 };
	uint8_t *b = random_buf(N, 1);
	crc_fn fns[3] = { rec_crc32c, rec_crc32c_sw, rec_crc32c_hw_available() ? rec_crc32c_hw : rec_crc32c_sw };
	uint32_t whole = ref_crc32c(0, b, N);
	for (int f = 0; f < 3; f++) {
		assert_int_equal(fns[f](0, b, N), whole);
		for (size_t cut = 0; cut <= N; cut++) {
			uint32_t c = fns[f](0, b, cut);
			assert_int_equal(fns[f](c, b + cut, N - cut), whole);
		}
		/* three pieces, mixing implementations */
		uint32_t c = fns[f](0, b, 100);
		c = fns[(f + 1) % 3](c, b + 100, 333);
		c = fns[(f + 2) % 3](c, b + 433, N - 433);
		assert_int_equal(c, whole);
	}
	free(b);
}

static void t_sw_hw_all_lengths(void **state)
{
	(void)state;
	enum { MAXLEN = 300, MAXOFF = 16 };
	uint8_t *b = random_buf(MAXLEN + MAXOFF, 42);
	bool hw = rec_crc32c_hw_available();
	for (size_t off = 0; off < MAXOFF; off++) {
		for (size_t len = 0; len <= MAXLEN; len++) {
			uint32_t want = ref_crc32c(0, b + off, len);
			assert_int_equal(rec_crc32c_sw(0, b + off, len), want);
			assert_int_equal(rec_crc32c(0, b + off, len), want);
			if (hw)
				assert_int_equal(rec_crc32c_hw(0, b + off, len), want);
			/* a non-zero starting crc too */
			uint32_t seed = (uint32_t)(len * 2654435761u);
			want = ref_crc32c(seed, b + off, len);
			assert_int_equal(rec_crc32c_sw(seed, b + off, len), want);
			if (hw)
				assert_int_equal(rec_crc32c_hw(seed, b + off, len), want);
		}
	}
	free(b);
}

/* Around the block sizes of the three-stream hardware loop (3 x 256 and
 * 3 x 8192 bytes) and their multiples, at every alignment. */
static void t_three_stream_lengths(void **state)
{
	(void)state;
	static const size_t bases[] = { 3 * 256, 2 * 3 * 256, 3 * 8192, 3 * 8192 + 3 * 256,
					2 * 3 * 8192, 5 * 3 * 8192 + 7 * 3 * 256 };
	enum { MAXOFF = 9, SPREAD = 17 };
	size_t maxlen = bases[sizeof(bases) / sizeof(bases[0]) - 1] + SPREAD;
	uint8_t *b = random_buf(maxlen + MAXOFF, 99);
	bool hw = rec_crc32c_hw_available();
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		for (size_t len = bases[i] - SPREAD; len <= bases[i] + SPREAD; len++) {
			for (size_t off = 0; off < MAXOFF; off++) {
				uint32_t seed = (uint32_t)(len * 2654435761u + off);
				uint32_t want = ref_crc32c(seed, b + off, len);
				assert_int_equal(rec_crc32c_sw(seed, b + off, len), want);
				assert_int_equal(rec_crc32c(seed, b + off, len), want);
				if (hw)
					assert_int_equal(rec_crc32c_hw(seed, b + off, len), want);
			}
		}
	}
	free(b);
}

static void t_large(void **state)
{
	(void)state;
	size_t n = (4u << 20) + 13;
	uint8_t *b = random_buf(n, 7);
	uint32_t want = ref_crc32c(0, b, n);
	assert_int_equal(rec_crc32c_sw(0, b, n), want);
	assert_int_equal(rec_crc32c(0, b, n), want);
	if (rec_crc32c_hw_available())
		assert_int_equal(rec_crc32c_hw(0, b, n), want);
	/* a single flipped bit changes the crc */
	b[n / 2] ^= 0x10;
	assert_int_not_equal(rec_crc32c(0, b, n), want);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_first_use_threads),
		cmocka_unit_test(t_vectors),
		cmocka_unit_test(t_incremental),
		cmocka_unit_test(t_sw_hw_all_lengths),
		cmocka_unit_test(t_three_stream_lengths),
		cmocka_unit_test(t_large),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
