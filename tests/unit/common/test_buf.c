/* SPDX-License-Identifier: MIT */
/* Unit tests: the growable buffer (common/buf.c) and what it appends. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "common/common_internal.h"

static void t_buf(void **state)
{
	(void)state;
	rec_buf b = { NULL, 0, 0 };
	uint8_t chunk[1000];
	for (size_t i = 0; i < sizeof(chunk); i++)
		chunk[i] = (uint8_t)(i * 7);

	assert_true(rec_buf_reserve(&b, 0));
	assert_true(rec_buf_reserve(&b, 10));
	assert_true(b.cap >= 10);
	assert_non_null(b.data);
	/* geometric growth: appending 1 MB byte by byte reallocates O(log n) times */
	size_t reallocs = 0, prev_cap = b.cap;
	for (size_t i = 0; i < 1000000; i++) {
		uint8_t c = (uint8_t)i;
		assert_true(rec_buf_append(&b, &c, 1));
		if (b.cap != prev_cap) {
			assert_true(b.cap >= prev_cap * 2 || b.cap >= b.len);
			prev_cap = b.cap;
			reallocs++;
		}
	}
	assert_int_equal(b.len, 1000000);
	assert_true(reallocs < 20);
	for (size_t i = 0; i < 1000000; i += 9973)
		assert_int_equal(b.data[i], (uint8_t)i);

	/* overflow-checked: a request that cannot fit fails cleanly */
	assert_false(rec_buf_reserve(&b, SIZE_MAX));
	assert_false(rec_buf_reserve(&b, SIZE_MAX - b.len + 1));
	assert_false(rec_buf_lenbytes(&b, chunk, SIZE_MAX - 3));
	assert_int_equal(b.len, 1000000);

	/* lenbytes and varint */
	b.len = 0;
	assert_true(rec_buf_lenbytes(&b, chunk, 200));
	assert_true(rec_buf_lenbytes(&b, "", 0));
	assert_true(rec_buf_varint(&b, UINT64_MAX));
	assert_int_equal(b.len, 2 + 200 + 1 + 10);
	const uint8_t *p = b.data, *end = b.data + b.len;
	uint64_t v;
	assert_true(rec_varint_get(&p, end, &v));
	assert_int_equal(v, 200);
	assert_memory_equal(p, chunk, 200);
	p += 200;
	assert_true(rec_varint_get(&p, end, &v));
	assert_int_equal(v, 0);
	assert_true(rec_varint_get(&p, end, &v));
	assert_int_equal(v, UINT64_MAX);
	assert_ptr_equal(p, end);

	rec_buf_free(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 0);
	rec_buf_free(&b);  /* twice is fine */
	rec_buf_free(NULL);

	/* lenbytes on an empty buffer */
	assert_true(rec_buf_lenbytes(&b, chunk, sizeof(chunk)));
	assert_int_equal(b.len, 2 + sizeof(chunk));
	assert_memory_equal(b.data + 2, chunk, sizeof(chunk));
	rec_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_buf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
