/* SPDX-License-Identifier: MIT */
/*
 * write_file.h - test support: bytes written to a new file, asserting every
 * step (tests/unit/read/: the reader on real files).
 *
 * Header-only on purpose, like readback.h: the helpers assert with cmocka,
 * and every object in tests/lib (*.c) is also linked into the tests/helpers
 * programs, which are not linked with -lcmocka.  Include it from one .c file
 * per binary, after <stdarg.h> <stddef.h> <stdint.h> <setjmp.h> <cmocka.h>.
 */
#ifndef REC_TESTS_LIB_WRITE_FILE_H
#define REC_TESTS_LIB_WRITE_FILE_H

#include <stdio.h>

static __attribute__((unused)) void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

#endif /* REC_TESTS_LIB_WRITE_FILE_H */
