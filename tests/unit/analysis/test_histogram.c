/* SPDX-License-Identifier: MIT */
/*
 * test_histogram.c - rec_histogram (rec/view.h): every percentile of known
 * value sets within the stated relative error (1/256) of the nearest-rank
 * value of the same values sorted here, exact values below 128, exact min,
 * max, mean and the extreme ranks, merging equal to adding, and memory that
 * does not grow with the number of values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rec/view.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The nearest-rank percentile of sorted v[0..n). */
static uint64_t exact_pct(const uint64_t *v, size_t n, double pct)
{
	if (pct <= 0)
		return v[0];
	double want = pct / 100.0 * (double)n;
	size_t rank = (size_t)ceil(want - 1e-9);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

static void check_all(rec_histogram *h, uint64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_u64);
	static const double pcts[] = { 0, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100 };
	for (size_t i = 0; i < sizeof pcts / sizeof pcts[0]; i++) {
		uint64_t want = exact_pct(v, n, pcts[i]);
		uint64_t got = rec_histogram_percentile(h, pcts[i]);
		double err = fabs((double)got - (double)want);
		if (err > (double)want * REC_HISTOGRAM_REL_ERROR)
			fail_msg("p%g: got %llu, true %llu (error %.5f > 1/256)", pcts[i],
				 (unsigned long long)got, (unsigned long long)want,
				 err / (double)want);
	}
	assert_int_equal(rec_histogram_min(h), v[0]);
	assert_int_equal(rec_histogram_max(h), v[n - 1]);
	assert_int_equal(rec_histogram_count(h), n);
	/* count_below at bucket boundaries (below 128, powers of two, 8
	 * significant bits) is the exact number of values below. */
	static const uint64_t bounds[] = { 0, 1, 5, 127, 128, 129, 255, 256, 384, 1000, 1024,
					   1536, 4096, 1u << 20, 3u << 19, 255u << 22, 1ull << 40 };
	for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
		uint64_t below = 0;
		while (below < n && v[below] < bounds[i])
			below++;
		assert_int_equal(rec_histogram_count_below(h, bounds[i]), below);
	}
}

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 11;
}

static void t_uniform(void **state)
{
	(void)state;
	rec_histogram *h = NULL;
	assert_int_equal(rec_histogram_open(&h), REC_OK);
	size_t n = 100000;
	uint64_t *v = malloc(n * sizeof *v);
	long double sum = 0;
	for (size_t i = 0; i < n; i++) {
		v[i] = (i + 1) * 1000; /* 1 us .. 100 ms */
		sum += v[i];
		assert_int_equal(rec_histogram_add(h, v[i]), REC_OK);
	}
	assert_true(fabs(rec_histogram_mean(h) - (double)(sum / n)) < 1e-6 * (double)(sum / n));
	/* p50 of 1..100000 us is the 50000th value: 50 ms */
	uint64_t p50 = rec_histogram_percentile(h, 50);
	assert_true(fabs((double)p50 - 50e6) <= 50e6 / 256);
	check_all(h, v, n);
	free(v);
	rec_histogram_close(h);
}

static void t_log_spread(void **state)
{
	(void)state;
	rec_histogram *h = NULL;
	assert_int_equal(rec_histogram_open(&h), REC_OK);
	size_t n = 200000;
	uint64_t *v = malloc(n * sizeof *v);
	uint64_t seed = 42;
	for (size_t i = 0; i < n; i++) {
		/* log-uniform from 100 ns to ~100 s */
		double e = 2.0 + 9.0 * (double)(lcg(&seed) % 1000000) / 1e6;
		v[i] = (uint64_t)pow(10.0, e);
		assert_int_equal(rec_histogram_add(h, v[i]), REC_OK);
	}
	check_all(h, v, n);
	free(v);
	rec_histogram_close(h);
}

static void t_small_exact(void **state)
{
	(void)state;
	rec_histogram *h = NULL;
	assert_int_equal(rec_histogram_open(&h), REC_OK);
	assert_int_equal(rec_histogram_percentile(h, 50), 0);
	assert_int_equal(rec_histogram_count(h), 0);
	for (uint64_t x = 0; x < 128; x++)
		assert_int_equal(rec_histogram_add(h, x), REC_OK);
	/* below 128 every value has its bucket: exact */
	assert_int_equal(rec_histogram_percentile(h, 50), 63);
	assert_int_equal(rec_histogram_percentile(h, 100), 127);
	assert_int_equal(rec_histogram_percentile(h, 0), 0);
	assert_int_equal(rec_histogram_percentile(h, 10), 12); /* rank 13 (12.8 up) */
	rec_histogram_close(h);
	/* extreme ranks are exact even in wide buckets */
	assert_int_equal(rec_histogram_open(&h), REC_OK);
	assert_int_equal(rec_histogram_add(h, 150866123), REC_OK);
	assert_int_equal(rec_histogram_add(h, 150109001), REC_OK);
	assert_int_equal(rec_histogram_add(h, UINT64_MAX), REC_OK);
	assert_int_equal(rec_histogram_percentile(h, 99), UINT64_MAX);
	assert_int_equal(rec_histogram_percentile(h, 1), 150109001);
	rec_histogram_close(h);
}

static void t_merge(void **state)
{
	(void)state;
	rec_histogram *a = NULL, *b = NULL, *all = NULL;
	assert_int_equal(rec_histogram_open(&a), REC_OK);
	assert_int_equal(rec_histogram_open(&b), REC_OK);
	assert_int_equal(rec_histogram_open(&all), REC_OK);
	uint64_t seed = 7;
	for (int i = 0; i < 50000; i++) {
		uint64_t x = lcg(&seed) % 5000000000ull;
		assert_int_equal(rec_histogram_add(i % 3 ? a : b, x), REC_OK);
		assert_int_equal(rec_histogram_add(all, x), REC_OK);
	}
	assert_int_equal(rec_histogram_merge(a, b), REC_OK);
	for (double p = 0; p <= 100; p += 0.5)
		assert_int_equal(rec_histogram_percentile(a, p), rec_histogram_percentile(all, p));
	assert_int_equal(rec_histogram_count(a), 50000);
	assert_int_equal(rec_histogram_min(a), rec_histogram_min(all));
	assert_int_equal(rec_histogram_max(a), rec_histogram_max(all));
	rec_histogram_close(a);
	rec_histogram_close(b);
	rec_histogram_close(all);
}

static void t_memory_bounded(void **state)
{
	(void)state;
	rec_histogram *h = NULL;
	assert_int_equal(rec_histogram_open(&h), REC_OK);
	uint64_t seed = 1;
	/* 1 ms .. 2 ms: one power of two beside the empty histogram's base */
	for (int i = 0; i < 1000; i++)
		assert_int_equal(rec_histogram_add(h, 1000000 + lcg(&seed) % 1000000), REC_OK);
	size_t m1 = rec_histogram_memory(h);
	for (int i = 0; i < 2000000; i++)
		assert_int_equal(rec_histogram_add(h, 1000000 + lcg(&seed) % 1000000), REC_OK);
	assert_int_equal(rec_histogram_memory(h), m1);
	assert_true(m1 <= 3 * 1024 + 1024);
	/* every power of two: at most 58 rows of 1 KiB */
	for (int s = 0; s < 64; s++)
		assert_int_equal(rec_histogram_add(h, 1ull << s), REC_OK);
	assert_int_equal(rec_histogram_add(h, UINT64_MAX), REC_OK);
	assert_true(rec_histogram_memory(h) <= 58 * 1024 + 1024);
	rec_histogram_close(h);
	rec_histogram_close(NULL);
	assert_int_equal(rec_histogram_open(NULL), REC_ERR_INVALID_ARG);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_uniform),     cmocka_unit_test(t_log_spread),
		cmocka_unit_test(t_small_exact), cmocka_unit_test(t_merge),
		cmocka_unit_test(t_memory_bounded),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
