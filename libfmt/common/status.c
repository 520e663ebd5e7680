/* SPDX-License-Identifier: MIT */
/*
 * status.c - status texts, version, names of codecs, field types and units,
 * and tick conversion.
 */
#include <stdarg.h>
#include <stdio.h>

#include "common/common_internal.h"

#define REC_STR2(x) #x
#define REC_STR(x) REC_STR2(x)

REC_API unsigned rec_version_number(void)
{
	return REC_VERSION_NUMBER;
}

REC_API const char *rec_version_string(void)
{
	return REC_STR(REC_VERSION_MAJOR) "." REC_STR(REC_VERSION_MINOR) "." REC_STR(
		REC_VERSION_PATCH);
}

REC_API const char *rec_strerror(rec_status status)
{
	switch (status) {
	case REC_OK: return "success";
	case REC_END: return "end of input";
	case REC_ERR_INVALID_ARG: return "invalid argument";
	case REC_ERR_NOMEM: return "out of memory";
	case REC_ERR_IO: return "input/output error";
	case REC_ERR_BAD_MAGIC: return "not a rec chunk (bad magic)";
	case REC_ERR_UNSUPPORTED_VERSION: return "unsupported format version";
	case REC_ERR_TRUNCATED: return "truncated input";
	case REC_ERR_CORRUPT: return "corrupt data";
	case REC_ERR_LIMIT: return "size exceeds a limit";
	case REC_ERR_UNSUPPORTED: return "unsupported feature";
	case REC_ERR_CODEC: return "compression codec failed";
	case REC_ERR_STATE: return "call not valid in this state";
	case REC_ERR_NOT_FOUND: return "not found";
	}
	return "unknown error";
}

REC_API const char *rec_codec_name(unsigned codec)
{
	switch (codec) {
	case REC_CODEC_NONE: return "none";
	case REC_CODEC_ZSTD: return "zstd";
	case REC_CODEC_LZ4: return "lz4";
	default: return "unknown";
	}
}

REC_API const char *rec_field_type_name(unsigned type)
{
	switch (type) {
	case REC_TYPE_BOOL: return "bool";
	case REC_TYPE_U8: return "u8";
	case REC_TYPE_U16: return "u16";
	case REC_TYPE_U32: return "u32";
	case REC_TYPE_U64: return "u64";
	case REC_TYPE_I8: return "i8";
	case REC_TYPE_I16: return "i16";
	case REC_TYPE_I32: return "i32";
	case REC_TYPE_I64: return "i64";
	case REC_TYPE_F32: return "f32";
	case REC_TYPE_F64: return "f64";
	case REC_TYPE_STRING: return "string";
	case REC_TYPE_TIMESTAMP: return "timestamp";
	case REC_TYPE_DURATION: return "duration";
	case REC_TYPE_THREAD: return "thread";
	case REC_TYPE_STACK: return "stack";
	case REC_TYPE_BLOB: return "blob";
	case REC_TYPE_TEXT: return "text";
	default: return "unknown";
	}
}

REC_API const char *rec_unit_name(unsigned unit)
{
	static const char *const names[] = { "", "bytes", "percent", "address",
					     "ns", "epoch-ns", "count", "Hz" };
	/* Unknown units display plain (spec "Units"), like NONE. */
	return unit < sizeof(names) / sizeof(names[0]) ? names[unit] : "";
}

__extension__ typedef __int128 rec_i128;

int64_t rec_ticks_to_ns_internal(int64_t ticks, uint64_t freq)
{
	const int64_t lim = INT64_MAX / 1000000000; /* |ticks| <= lim: ticks*1e9 fits */
	rec_i128 r;

	if (freq == 1000000000u)
		return ticks;
	if (freq == 0)
		return 0;
	if (ticks <= lim && ticks >= -lim && freq <= (uint64_t)INT64_MAX)
		return ticks * 1000000000 / (int64_t)freq; /* fast path, truncates toward 0 */
	r = (rec_i128)ticks * 1000000000 / (rec_i128)freq;
	if (r > INT64_MAX)
		return INT64_MAX;
	if (r < INT64_MIN)
		return INT64_MIN;
	return (int64_t)r;
}

REC_API int64_t rec_ticks_to_ns(int64_t ticks, uint64_t frequency)
{
	return rec_ticks_to_ns_internal(ticks, frequency);
}

rec_status rec_errorf(char msg[REC_ERRMSG_SIZE], rec_status st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, REC_ERRMSG_SIZE, fmt, ap);
	va_end(ap);
	return st;
}
