/* SPDX-License-Identifier: MIT */
/*
 * tsc.h - the time stamp counter, read as the recorder reads it (rdtsc), for
 * the bench programs that time things by hand and link no part of rec
 * (preload_calls.c, preload_floor.c) or time a floor beside it (hotpath.c);
 * CLOCK_MONOTONIC nanoseconds where there is no TSC.
 */
#ifndef REC_BENCH_TSC_H
#define REC_BENCH_TSC_H

#include <stdint.h>
#include <time.h>

static inline uint64_t bench_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

#endif /* REC_BENCH_TSC_H */
