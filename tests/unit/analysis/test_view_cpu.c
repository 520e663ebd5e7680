/* SPDX-License-Identifier: MIT */
/*
 * test_view_cpu.c - rec-view's hot-functions (libfmt/analysis/view_cpu.c) on
 * recording A (tests/lib/view_fixture.h): self and total CPU per function,
 * each sample weighing period x (1 + overruns).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "../../lib/view_fixture.h"

static void t_hot_functions(void **state)
{
	(void)state;
	run r;
	simple(&r, &rec_a, "hot-functions", NULL);
	const rec_view_table *t = table(&r, "hot_functions");
	assert_string_equal(S(t, 0, "function"), "hash");
	assert_int_equal(U(t, 0, "self_samples"), 4);
	assert_int_equal(U(t, 0, "self_cpu"), 50 * MS);
	size_t h = row_of(t, "function", "handle");
	assert_int_equal(U(t, h, "self_samples"), 0);
	assert_int_equal(U(t, h, "total_samples"), 3);
	assert_int_equal(U(t, h, "total_cpu"), 30 * MS);
	assert_true(fabs(cell(t, h, "total_percent")->f - 60.0) < 1e-9);
	assert_int_equal(U(t, row_of(t, "function", "warmup"), "total_cpu"), 20 * MS);
	rec_view_close(r.v);
}

/* Samples summed per stack within a chunk: 3,000 samples in chunks of a
 * few hundred events, every pair of chunks overlapping in time (the ordered
 * reader switches between them at every sample), over three stacks: S_CPU
 * (hash, handle, main_loop), S_CPU_WARM (hash, warmup) and a stack whose id
 * is past the dense table's (2^20 + 5: hash, hash, main_loop, hash counted
 * once per sample in total), one sample in 7 with an overrun (20 ms). */
static void t_hot_functions_chunks(void **state)
{
	(void)state;
	membuf m = { 0 };
	gen g;
	open_gen(&g, &m, 1 << 20);
	const uint64_t big = ((uint64_t)1 << 20) + 5;
	const uint64_t s_big[] = { F_HASH, F_HASH, F_LOOP };
	ok(rec_writer_define_stack(g.w, big, 0, s_big, 3));
	const uint64_t stacks[3] = { S_CPU, S_CPU_WARM, big };
	uint64_t n[3] = { 0 }, w[3] = { 0 };
	for (int c = 0; c < 10; c++) {
		/* chunk pair p: times 1000 p + 2 k ms (even chunk) and + 1 (odd) */
		int p = c / 2;
		for (int k = 0; k < 300; k++) {
			int i = c * 300 + k, si = (i / 3 + i) % 3;
			uint32_t ov = i % 7 == 0;
			cpu_ev(&g, TH_W1, stacks[si], 1000.0 * p + 2 * k + (c % 2), ov);
			n[si]++;
			w[si] += (1 + ov) * 10 * MS;
		}
		ok(rec_writer_flush(g.w));
	}
	ok(rec_writer_close(g.w));
	run r;
	simple(&r, &m, "hot-functions", NULL);
	const rec_view_table *t = table(&r, "hot_functions");
	size_t hash = row_of(t, "function", "hash"), handle = row_of(t, "function", "handle"),
	       warm = row_of(t, "function", "warmup"), loop = row_of(t, "function", "main_loop");
	assert_int_equal(U(t, hash, "self_samples"), 3000);
	assert_int_equal(U(t, hash, "self_cpu"), w[0] + w[1] + w[2]);
	assert_int_equal(U(t, hash, "total_samples"), 3000);
	assert_int_equal(U(t, hash, "total_cpu"), w[0] + w[1] + w[2]);
	assert_int_equal(U(t, handle, "self_samples"), 0);
	assert_int_equal(U(t, handle, "total_samples"), n[0]);
	assert_int_equal(U(t, handle, "total_cpu"), w[0]);
	assert_int_equal(U(t, warm, "total_samples"), n[1]);
	assert_int_equal(U(t, warm, "total_cpu"), w[1]);
	assert_int_equal(U(t, loop, "total_samples"), n[0] + n[2]);
	assert_int_equal(U(t, loop, "total_cpu"), w[0] + w[2]);
	assert_true(n[0] > 900 && n[1] > 900 && n[2] > 900);
	rec_view_close(r.v);
	free(m.p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_hot_functions),
		cmocka_unit_test(t_hot_functions_chunks),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
