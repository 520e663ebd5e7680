/* SPDX-License-Identifier: MIT */
/*
 * LTTng-UST tracepoint provider for bench/sidebyside.sh: requestwatch's
 * app.Request event (examples/requestwatch.c built with -DREQUESTWATCH_PLAIN
 * -DREQUESTWATCH_LTTNG) as the tracepoint requestwatch:request, with the
 * fields of app.Request: path (string, at most 128 bytes as rec interns it),
 * status, and the request's start and duration (CLOCK_MONOTONIC ns; the
 * event's own timestamp is its end).  The thread is the vtid context that
 * the session adds (`lttng add-context -u -t vtid`), as app.Request has
 * the recording thread.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER requestwatch

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./rw_tp.h"

#if !defined(BENCH_LTTNG_RW_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_LTTNG_RW_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(
	requestwatch, request,
	LTTNG_UST_TP_ARGS(const char *, path, unsigned, status, uint64_t, start_ns, uint64_t, duration_ns),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(path, path)
		lttng_ust_field_integer(uint16_t, status, status)
		lttng_ust_field_integer(uint64_t, start_ns, start_ns)
		lttng_ust_field_integer(uint64_t, duration_ns, duration_ns)
	)
)

#endif /* BENCH_LTTNG_RW_TP_H */

#include <lttng/tracepoint-event.h>

#ifndef BENCH_LTTNG_RW_TP_HELPER
#define BENCH_LTTNG_RW_TP_HELPER
#include <string.h>
#include <time.h>
/* The end of a request that began at *begin: one event, as rec_span_end +
 * rec_emit_commit make one app.Request (the path capped at 128 bytes). */
static inline void rw_tp_request(const struct timespec *begin, const char *path, unsigned status)
{
	struct timespec end;
	clock_gettime(CLOCK_MONOTONIC, &end);
	uint64_t b = (uint64_t)begin->tv_sec * 1000000000u + (uint64_t)begin->tv_nsec;
	uint64_t e = (uint64_t)end.tv_sec * 1000000000u + (uint64_t)end.tv_nsec;
	char p[129];
	size_t n = strnlen(path, 128);
	memcpy(p, path, n);
	p[n] = '\0';
	lttng_ust_tracepoint(requestwatch, request, p, status, b, e - b);
}
#endif
