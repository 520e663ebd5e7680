/* SPDX-License-Identifier: MIT */
/*
 * test_view_latency.c - rec-view's latency (libfmt/analysis/view_latency.c):
 * count, mean, percentiles, max and total per event type with a duration
 * and per --by value, on recording A (tests/lib/view_fixture.h), and on
 * recording B: 20,000 app.Request with durations from a fixed generator,
 * paths /a /b /c, whose percentiles are checked against the nearest-rank
 * values sorted here (within the histogram's 1/256).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "../../lib/view_fixture.h"

static void t_latency(void **state)
{
	(void)state;
	run r;
	simple(&r, &rec_a, "latency", NULL);
	const rec_view_table *t = table(&r, "latency");
	assert_int_equal(t->row_count, 4); /* app.Request, rec.Sleep, rec.LockWait, rec.CondWait */
	size_t q = row_of(t, "type", "app.Request");
	assert_int_equal(U(t, q, "count"), 3);
	assert_int_equal(U(t, q, "max"), 200 * MS);
	assert_int_equal(U(t, q, "total"), 410 * MS);
	/* 10, 200, 200 ms: p50 is rank 2, within 1/256 */
	assert_true(fabs((double)U(t, q, "p50") - 200e6) <= 200e6 / 256);
	size_t s = row_of(t, "type", "rec.Sleep");
	assert_int_equal(U(t, s, "count"), 2);
	assert_int_equal(U(t, s, "total"), 550 * MS);
	assert_int_equal(U(t, s, "mean"), 275 * MS);
	assert_int_equal(U(t, row_of(t, "type", "rec.LockWait"), "max"), 160 * MS);
	assert_int_equal(U(t, row_of(t, "type", "rec.CondWait"), "total"), 5 * MS);
	/* heaviest total first */
	assert_string_equal(S(t, 0, "type"), "rec.Sleep");
	rec_view_close(r.v);

	simple(&r, &rec_a, "latency", "path");
	t = table(&r, "latency");
	assert_int_equal(t->row_count, 2);
	assert_true(rec_view_by_found(r.v));
	size_t g = row_of(t, "by", "/get");
	assert_int_equal(U(t, g, "count"), 2);
	assert_int_equal(U(t, g, "p50"), 10 * MS); /* rank 1 of 2 */
	assert_int_equal(U(t, g, "p99"), 200 * MS);
	assert_int_equal(U(t, row_of(t, "by", "/fill"), "count"), 1);
	/* each row's histogram (for drawing it): its count, min and max, the
	 * values below a bucket boundary; none past the last row */
	for (size_t i = 0; i < t->row_count; i++) {
		const rec_histogram *h = rec_view_latency_histogram(r.v, i);
		assert_non_null(h);
		assert_int_equal(rec_histogram_count(h), U(t, i, "count"));
		assert_int_equal(rec_histogram_max(h), U(t, i, "max"));
	}
	const rec_histogram *hg = rec_view_latency_histogram(r.v, g);
	assert_int_equal(rec_histogram_min(hg), 10 * MS);
	assert_int_equal(rec_histogram_count_below(hg, 1u << 27), 1); /* 134 ms: 10 below, 200 above */
	assert_null(rec_view_latency_histogram(r.v, t->row_count));
	rec_view_close(r.v);

	rec_view_options o = REC_VIEW_OPTIONS_INIT;
	o.view = "latency";
	o.type = "rec.Sleep";
	run_view(&r, &rec_a, &o);
	assert_true(rec_view_type_found(r.v));
	t = table(&r, "latency");
	assert_int_equal(t->row_count, 1);
	assert_string_equal(S(t, 0, "type"), "rec.Sleep");
	rec_view_close(r.v);
	o.type = "app.Nothing";
	run_view(&r, &rec_a, &o);
	assert_false(rec_view_type_found(r.v));
	rec_view_close(r.v);

	simple(&r, &rec_a, "contention-by-lock", NULL);
	assert_null(rec_view_latency_histogram(r.v, 0)); /* another view */
	rec_view_close(r.v);

	simple(&r, &rec_a, "latency", "nosuchfield");
	assert_false(rec_view_by_found(r.v));
	assert_int_equal(table(&r, "latency")->row_count, 0);
	rec_view_close(r.v);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t nearest_rank(const uint64_t *v, size_t n, double pct)
{
	size_t rank = (size_t)ceil(pct / 100.0 * (double)n - 1e-9);
	return v[(rank < 1 ? 1 : rank) - 1];
}

static void t_latency_percentiles(void **state)
{
	(void)state;
	membuf m = { 0 };
	gen g;
	open_gen(&g, &m, 4096);
	enum { N = 20000 };
	static uint64_t all[N], by[3][N];
	size_t nb[3] = { 0, 0, 0 };
	static const char *const paths[] = { "/a", "/b", "/c" };
	uint64_t pstr[3];
	for (int p = 0; p < 3; p++)
		pstr[p] = str(&g, paths[p]);
	uint64_t seed = 12345;
	for (size_t i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		/* 10 us .. ~10 s, log-uniform; path by i % 3, /c 100x slower */
		double e = 4.0 + 4.0 * (double)((seed >> 20) % 100000) / 1e5;
		int p = (int)(i % 3);
		uint64_t d = (uint64_t)pow(10.0, e) * (p == 2 ? 100 : 1);
		all[i] = d;
		by[p][nb[p]++] = d;
		ok(rec_writer_begin(g.w, T_REQ, T0 + i * 1000, d, 1 + i % 3, 0));
		ok(rec_writer_put_u64(g.w, pstr[p]));
		ok(rec_writer_put_u64(g.w, 200));
		ok(rec_writer_end(g.w));
	}
	ok(rec_writer_close(g.w));
	qsort(all, N, sizeof all[0], cmp_u64);
	for (int p = 0; p < 3; p++)
		qsort(by[p], nb[p], sizeof by[p][0], cmp_u64);

	run r;
	simple(&r, &m, "latency", NULL);
	const rec_view_table *t = table(&r, "latency");
	static const struct { const char *key; double pct; } ps[] = {
		{ "p50", 50 }, { "p90", 90 }, { "p99", 99 }, { "p99_9", 99.9 },
	};
	for (size_t k = 0; k < 4; k++) {
		uint64_t want = nearest_rank(all, N, ps[k].pct), got = U(t, 0, ps[k].key);
		if (fabs((double)got - (double)want) > (double)want / 256.0)
			fail_msg("%s: %llu, true %llu", ps[k].key, (unsigned long long)got,
				 (unsigned long long)want);
	}
	assert_int_equal(U(t, 0, "max"), all[N - 1]);
	assert_int_equal(U(t, 0, "count"), N);
	rec_view_close(r.v);

	simple(&r, &m, "latency", "path");
	t = table(&r, "latency");
	assert_int_equal(t->row_count, 3);
	assert_string_equal(S(t, 0, "by"), "/c"); /* heaviest first */
	for (int p = 0; p < 3; p++) {
		size_t row = row_of(t, "by", paths[p]);
		assert_int_equal(U(t, row, "count"), nb[p]);
		for (size_t k = 0; k < 4; k++) {
			uint64_t want = nearest_rank(by[p], nb[p], ps[k].pct);
			uint64_t got = U(t, row, ps[k].key);
			if (fabs((double)got - (double)want) > (double)want / 256.0)
				fail_msg("%s %s: %llu, true %llu", paths[p], ps[k].key,
					 (unsigned long long)got, (unsigned long long)want);
		}
	}
	rec_view_close(r.v);
	free(m.p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_latency),
		cmocka_unit_test(t_latency_percentiles),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
