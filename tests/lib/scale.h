/* SPDX-License-Identifier: MIT */
/*
 * scale.h - heavy and timing-based tests under slow runners.
 * make test-valgrind (tests/valgrind.sh) sets
 *   REC_TEST_SCALE     0 < s <= 1: the fraction of its work a heavy test does
 *                      (rec_t_scaled), and
 *   REC_TEST_SLOWDOWN  >= 1: the factor a timing-based test applies to its
 *                      time budgets (rec_t_budget_ns).
 * Unset (make test, make test-asan): full size and the normal budgets.
 * Each test that uses them says so where it does.
 */
#ifndef REC_TESTS_LIB_SCALE_H
#define REC_TESTS_LIB_SCALE_H

#include <stdint.h>
#include <stdlib.h>

static inline double rec_t_env_number(const char *name, double lo, double hi, double dflt)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return dflt;
	char *end;
	double v = strtod(s, &end);
	return *end == 0 && v >= lo && v <= hi ? v : dflt;
}

/* n scaled by REC_TEST_SCALE, at least 1. */
static inline uint64_t rec_t_scaled(uint64_t n)
{
	double v = (double)n * rec_t_env_number("REC_TEST_SCALE", 1e-6, 1.0, 1.0);
	return v < 1.0 ? 1 : (uint64_t)v;
}

/* A time budget of ns nanoseconds multiplied by REC_TEST_SLOWDOWN. */
static inline uint64_t rec_t_budget_ns(uint64_t ns)
{
	return (uint64_t)((double)ns * rec_t_env_number("REC_TEST_SLOWDOWN", 1.0, 1000.0, 1.0));
}

#endif
