/* SPDX-License-Identifier: MIT */
/*
 * LTTng-UST tracepoint provider for bench/lttng.sh: the 3-field event of
 * issue #3/#7 (a ~12-character string, an int64 and an int32).  The 2.13
 * names lttng_ust_field_string / lttng_ust_field_integer are the
 * ctf_string / ctf_integer of the older API.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tp.h"

#if !defined(BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(
	bench, sample,
	LTTNG_UST_TP_ARGS(const char *, name, int64_t, value, int32_t, count),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(name, name)
		lttng_ust_field_integer(int64_t, value, value)
		lttng_ust_field_integer(int32_t, count, count)
	)
)

#endif /* BENCH_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
