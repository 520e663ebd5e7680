/* SPDX-License-Identifier: MIT */
/* Unit tests: status texts, names, version and tick conversion
 * (common/status.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/common_internal.h"

static void t_strerror(void **state)
{
	(void)state;
	static const rec_status all[] = {
		REC_OK, REC_END, REC_ERR_INVALID_ARG, REC_ERR_NOMEM, REC_ERR_IO,
		REC_ERR_BAD_MAGIC, REC_ERR_UNSUPPORTED_VERSION, REC_ERR_TRUNCATED,
		REC_ERR_CORRUPT, REC_ERR_LIMIT, REC_ERR_UNSUPPORTED, REC_ERR_CODEC,
		REC_ERR_STATE, REC_ERR_NOT_FOUND,
	};
	size_t n = sizeof(all) / sizeof(all[0]);
	for (size_t i = 0; i < n; i++) {
		const char *s = rec_strerror(all[i]);
		assert_non_null(s);
		assert_true(strlen(s) > 0);
		assert_string_not_equal(s, "unknown error");
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(s, rec_strerror(all[j]));
	}
	/* every value in a wide range is named; unknown ones say so */
	for (int v = -200; v <= 200; v++) {
		const char *s = rec_strerror((rec_status)v);
		assert_non_null(s);
		int known = 0;
		for (size_t i = 0; i < n; i++)
			known |= (int)all[i] == v;
		if (!known)
			assert_string_equal(s, "unknown error");
	}
	assert_string_equal(rec_strerror((rec_status)INT_MIN), "unknown error");
	assert_string_equal(rec_strerror((rec_status)INT_MAX), "unknown error");
	assert_string_equal(rec_strerror(REC_ERR_CORRUPT), "corrupt data");
}

static void t_names(void **state)
{
	(void)state;
	assert_string_equal(rec_codec_name(REC_CODEC_NONE), "none");
	assert_string_equal(rec_codec_name(REC_CODEC_ZSTD), "zstd");
	assert_string_equal(rec_codec_name(REC_CODEC_LZ4), "lz4");
	assert_string_equal(rec_codec_name(3), "unknown");
	assert_string_equal(rec_codec_name(UINT_MAX), "unknown");

	static const struct { unsigned t; const char *name; } types[] = {
		{ REC_TYPE_BOOL, "bool" }, { REC_TYPE_U8, "u8" }, { REC_TYPE_U16, "u16" },
		{ REC_TYPE_U32, "u32" }, { REC_TYPE_U64, "u64" }, { REC_TYPE_I8, "i8" },
		{ REC_TYPE_I16, "i16" }, { REC_TYPE_I32, "i32" }, { REC_TYPE_I64, "i64" },
		{ REC_TYPE_F32, "f32" }, { REC_TYPE_F64, "f64" }, { REC_TYPE_STRING, "string" },
		{ REC_TYPE_TIMESTAMP, "timestamp" }, { REC_TYPE_DURATION, "duration" },
		{ REC_TYPE_THREAD, "thread" }, { REC_TYPE_STACK, "stack" },
		{ REC_TYPE_BLOB, "blob" }, { REC_TYPE_TEXT, "text" },
	};
	size_t known = 0;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		assert_string_equal(rec_field_type_name(types[i].t), types[i].name);
	for (unsigned t = 0; t < 1024; t++) {
		const char *s = rec_field_type_name(t);
		assert_non_null(s);
		known += strcmp(s, "unknown") != 0;
	}
	assert_int_equal(known, sizeof(types) / sizeof(types[0]));
	assert_string_equal(rec_field_type_name(0x09), "unknown");
	assert_string_equal(rec_field_type_name(UINT_MAX), "unknown");

	static const char *const units[] = { "", "bytes", "percent", "address",
					     "ns", "epoch-ns", "count", "Hz" };
	for (unsigned u = 0; u < 8; u++)
		assert_string_equal(rec_unit_name(u), units[u]);
	assert_string_equal(rec_unit_name(REC_UNIT_HZ), "Hz");
	/* unknown units display plain */
	assert_string_equal(rec_unit_name(8), "");
	assert_string_equal(rec_unit_name(UINT_MAX), "");
}

static void t_version(void **state)
{
	(void)state;
	char want[32];
	snprintf(want, sizeof(want), "%d.%d.%d", REC_VERSION_MAJOR, REC_VERSION_MINOR,
		 REC_VERSION_PATCH);
	assert_string_equal(rec_version_string(), want);
	assert_int_equal(rec_version_number(), REC_VERSION_NUMBER);
	assert_int_equal(rec_version_number(),
			 REC_VERSION_MAJOR * 10000 + REC_VERSION_MINOR * 100 + REC_VERSION_PATCH);
}

static void t_ticks_to_ns(void **state)
{
	(void)state;
	assert_int_equal(rec_ticks_to_ns(12345, 1000000000u), 12345);
	assert_int_equal(rec_ticks_to_ns(5, 1000), 5000000);
	assert_int_equal(rec_ticks_to_ns(1, 3), 333333333);
	assert_int_equal(rec_ticks_to_ns(-1, 3), -333333333);
	assert_int_equal(rec_ticks_to_ns(-7, 1000), -7000000);
	assert_int_equal(rec_ticks_to_ns(123, 0), 0);
	assert_int_equal(rec_ticks_to_ns(0, 0), 0);
	/* a TSC at 2.4 GHz: one hour (beyond the 64-bit fast path) */
	assert_int_equal(rec_ticks_to_ns(2400000000ll * 3600, 2400000000u), 3600000000000ll);
	assert_int_equal(rec_ticks_to_ns(-2400000000ll * 3600, 2400000000u), -3600000000000ll);
	/* 10 years at 3 GHz */
	int64_t t = 3000000000ll * 86400 * 3650;
	assert_int_equal(rec_ticks_to_ns(t, 3000000000u), 1000000000ll * 86400 * 3650);
	/* saturation */
	assert_int_equal(rec_ticks_to_ns(INT64_MAX, 1), INT64_MAX);
	assert_true(rec_ticks_to_ns(INT64_MIN, 1) == INT64_MIN);
	assert_int_equal(rec_ticks_to_ns(INT64_MAX, 1000), INT64_MAX);
	/* huge frequencies */
	assert_int_equal(rec_ticks_to_ns(INT64_MAX, UINT64_MAX), 499999999);
	assert_int_equal(rec_ticks_to_ns(1, UINT64_MAX), 0);
	/* fast path and 128-bit path agree at their border */
	int64_t lim = INT64_MAX / 1000000000;
	for (int64_t d = -2; d <= 2; d++) {
		__extension__ __int128 want = (__int128)(lim + d) * 1000000000 / 7;
		assert_true(rec_ticks_to_ns(lim + d, 7) == (int64_t)want);
		want = (__int128)(-lim - d) * 1000000000 / 7;
		assert_true(rec_ticks_to_ns(-lim - d, 7) == (int64_t)want);
	}
	assert_int_equal(rec_ticks_to_ns_internal(1000, 10), 100000000000ll);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_strerror),
		cmocka_unit_test(t_names),
		cmocka_unit_test(t_version),
		cmocka_unit_test(t_ticks_to_ns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
