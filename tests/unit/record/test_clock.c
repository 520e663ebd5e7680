/* SPDX-License-Identifier: MIT */
/*
 * test_clock.c - clock.c, the recorder's tick source: the kind it chose and
 * why, a frequency that converts ticks to the CLOCK_MONOTONIC time that
 * passed (within 1 % over 300 ms, a loose bound for a loaded machine: the
 * calibration itself is checked far tighter by the recordings' time
 * reconciliation tests), ticks that never go back in one thread, the
 * (wall, ticks) anchor, and the process start time against /proc.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "record/recorder_internal.h"

static uint64_t ticks_of(int kind)
{
	return kind == REC_CLOCK_TSC ? rec_clock_tsc() : rec_clock_mono_ns();
}

/* A monotonic reading and a tick reading taken together: the ticks before
 * and after the monotonic clock, the pair with the least ticks between of
 * 20 tries, the ticks at its middle.  One pair read plainly can straddle a
 * preemption (a few ms under a sanitizer on a loaded machine: the 1 % below
 * of 300 ms is 3 ms). */
static void tight_pair(int kind, uint64_t *mono, uint64_t *ticks)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 20; i++) {
		uint64_t a = ticks_of(kind), m = rec_clock_mono_ns(), b = ticks_of(kind);
		if (b - a < best) {
			best = b - a;
			*mono = m;
			*ticks = a + (b - a) / 2;
		}
	}
}

static void t_kind_and_frequency(void **state)
{
	(void)state;
	rec_clock_info ci;
	rec_clock_get(&ci);
	assert_true(ci.kind == REC_CLOCK_TSC || ci.kind == REC_CLOCK_MONO);
	assert_non_null(ci.why);
	assert_true(strlen(ci.why) > 0);
	if (ci.kind == REC_CLOCK_MONO)
		assert_int_equal(ci.frequency, 1000000000u);
	else
		assert_true(ci.frequency > 100000000u && ci.frequency < 10000000000u);

	/* 300 ms measured both ways. */
	rec_clock_settle(300000000u);
	rec_clock_get(&ci);
	uint64_t m0, t0, m1, t1;
	tight_pair(ci.kind, &m0, &t0);
	struct timespec d = { 0, 300000000 };
	while (nanosleep(&d, &d) != 0)
		;
	tight_pair(ci.kind, &m1, &t1);
	double ns_from_ticks = (double)(t1 - t0) * 1e9 / (double)ci.frequency;
	double ns = (double)(m1 - m0);
	assert_true(ns >= 300e6);
	assert_true(ns_from_ticks > ns * 0.99 && ns_from_ticks < ns * 1.01);
}

static void t_monotonic(void **state)
{
	(void)state;
	rec_clock_info ci;
	rec_clock_get(&ci);
	uint64_t prev = ticks_of(ci.kind);
	for (int i = 0; i < 1000000; i++) {
		uint64_t t = ticks_of(ci.kind);
		assert_true(t >= prev);
		prev = t;
	}
}

static void t_anchor(void **state)
{
	(void)state;
	rec_clock_info ci;
	rec_clock_get(&ci);
	int64_t w0 = rec_clock_wall_ns();
	uint64_t k0 = ticks_of(ci.kind);
	int64_t wall;
	uint64_t ticks;
	rec_clock_anchor(ci.kind, &wall, &ticks);
	int64_t w1 = rec_clock_wall_ns();
	uint64_t k1 = ticks_of(ci.kind);
	assert_true(wall >= w0 && wall <= w1);
	assert_true(ticks >= k0 && ticks <= k1);
}

static void t_process_start(void **state)
{
	(void)state;
	int64_t start = rec_process_start_ns();
	int64_t now = rec_clock_wall_ns();
	/* This process started before now and (a test binary) not an hour ago;
	 * the value has 1/CLK_TCK precision and boot time's own rounding. */
	assert_true(start > 0);
	assert_true(start <= now + 1000000000);
	assert_true(now - start < (int64_t)3600 * 1000000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_kind_and_frequency),
		cmocka_unit_test(t_monotonic),
		cmocka_unit_test(t_anchor),
		cmocka_unit_test(t_process_start),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
