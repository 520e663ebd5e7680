/* SPDX-License-Identifier: MIT */
/*
 * test_view_threads.c - rec-view's threads (libfmt/analysis/view_threads.c):
 * on recording A (tests/lib/view_fixture.h), and on a recording of five
 * threads whose CPU samples (with overruns), lock waits, condition waits,
 * sleeps, I/O waits (a duration type of category rec/IO) and allocations
 * come from a fixed generator: every cell of every row equals the totals
 * the test kept while writing them, rows by CPU time, --top cuts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../../lib/view_fixture.h"

static void t_threads_a(void **state)
{
	(void)state;
	run r;
	simple(&r, &rec_a, "threads", NULL);
	const rec_view_table *t = table(&r, "threads");
	assert_int_equal(t->row_count, 3);
	size_t w1 = row_of(t, "thread", "worker-1");
	assert_int_equal(U(t, w1, "tid"), 101);
	assert_int_equal(U(t, w1, "events"), 6);
	assert_int_equal(U(t, w1, "cpu"), 20 * MS);
	assert_int_equal(U(t, w1, "lock_wait"), 160 * MS);
	assert_int_equal(U(t, w1, "cond_wait"), 5 * MS);
	assert_int_equal(U(t, w1, "allocated"), 2 * MIB);
	size_t mn = row_of(t, "thread", "main");
	assert_int_equal(U(t, mn, "events"), 8);
	assert_int_equal(U(t, mn, "sleep"), 400 * MS);
	assert_int_equal(U(t, mn, "allocated"), 4 * MIB);
	assert_int_equal(U(t, row_of(t, "thread", "worker-2"), "sleep"), 150 * MS);
	rec_view_close(r.v);
}

enum { T_IO = 40, T_PS = 41, NTH = 5 };

static const rec_field f_io[] = { { "bytes", "", "", REC_TYPE_U64, REC_UNIT_BYTES } };
static const rec_field f_ps[] = { { "cpuUser", "", "", REC_TYPE_U64, REC_UNIT_NANOS },
				  { "cpuSystem", "", "", REC_TYPE_U64, REC_UNIT_NANOS } };
/* The CPU samples' weight between the first and the last rec.ProcessStats
 * write_threads() wrote (the process's CPU went from 1 s to 6 s there). */
static uint64_t g_ps_sampled;

static void ps_ev(gen *g, uint64_t t, uint64_t user, uint64_t sys)
{
	ok(rec_writer_begin(g->w, T_PS, t, 0, 0, 0));
	ok(rec_writer_put_u64(g->w, user));
	ok(rec_writer_put_u64(g->w, sys));
	ok(rec_writer_end(g->w));
}

typedef struct th_want {
	uint64_t tid, events, cpu, lock, cond, sleep, io, alloc;
} th_want;

static void wait_like(gen *g, uint64_t type, uint64_t th, uint64_t t, uint64_t d)
{
	ok(rec_writer_begin(g->w, type, t, d, th, type == T_IO ? 0 : S_COND));
	if (type == T_LOCKWAIT) {
		ok(rec_writer_put_u64(g->w, 0xbeef));
		ok(rec_writer_put_u64(g->w, 0));
		ok(rec_writer_put_u64(g->w, 0));
		ok(rec_writer_put_u64(g->w, 0));
	} else if (type == T_COND) {
		for (int k = 0; k < 6; k++)
			ok(rec_writer_put_u64(g->w, 0));
	} else if (type == T_SLEEP) {
		ok(rec_writer_put_u64(g->w, str(g, "sleep")));
		ok(rec_writer_put_u64(g->w, d));
		ok(rec_writer_put_u64(g->w, 0));
	} else {
		ok(rec_writer_put_u64(g->w, 4096));
	}
	ok(rec_writer_end(g->w));
}

/* Threads 1..5 (TH_MAIN, TH_W1, TH_W2 of the fixture and two more), tid
 * 100..104; thread k gets 10 * k CPU samples, so CPU orders them 5..1. */
static void write_threads(membuf *m, th_want *want)
{
	gen g;
	open_gen(&g, m, 700);
	const rec_type tio = { T_IO, D_T_S, "rec.FileRead", "", "", "rec/IO", 1, f_io };
	ok(rec_writer_add_type(g.w, &tio));
	const rec_type tps = { T_PS, 0, "rec.ProcessStats", "", "", "rec/Process", 2, f_ps };
	ok(rec_writer_add_type(g.w, &tps));
	g_ps_sampled = 0;
	ok(rec_writer_define_thread(g.w, 4, 103, str(&g, "worker-3")));
	ok(rec_writer_define_thread(g.w, 5, 104, str(&g, "worker-4")));
	memset(want, 0, NTH * sizeof *want);
	uint64_t seed = 42, t = T0;
	for (int k = 1; k <= NTH; k++)
		want[k - 1].tid = 99 + (uint64_t)k;
	for (int round = 0; round < 60; round++)
		for (uint64_t th = 1; th <= NTH; th++) {
			th_want *w = &want[th - 1];
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			uint64_t d = 1000 + (seed >> 40) % 900000; /* 1 us .. 0.9 ms */
			t += 1000000;
			if (round < 10 * (int)th) {
				uint32_t over = (uint32_t)((seed >> 20) % 3);
				cpu_ev(&g, th, S_CPU, (double)(t - T0) / (double)MS, over);
				w->cpu += 10 * MS * (1 + over);
				w->events++;
				if (round >= 3) /* after the first statistics */
					g_ps_sampled += 10 * MS * (1 + over);
			}
			switch ((seed >> 33) % 6) {
			case 0: wait_like(&g, T_LOCKWAIT, th, t + 1, d); w->lock += d; break;
			case 1: wait_like(&g, T_COND, th, t + 1, d); w->cond += d; break;
			case 2: wait_like(&g, T_SLEEP, th, t + 1, d); w->sleep += d; break;
			case 3: wait_like(&g, T_IO, th, t + 1, d); w->io += d; break;
			case 4:
				alloc_ev(&g, th, S_ALLOC, (double)(t + 1 - T0) / (double)MS,
					 0x100000 + t, d, 2 * d, true);
				w->alloc += 2 * d; /* the weight */
				break;
			default: req_ev(&g, th, (double)(t + 1 - T0) / (double)MS,
					(double)(t + 1 + d - T0) / (double)MS, "/x");
				break;
			}
			w->events++;
			if (round == 2 && th == NTH)
				ps_ev(&g, t + 2, 700 * MS, 300 * MS);
			if (round == 30 && th == NTH)
				ps_ev(&g, t + 2, 2000 * MS, 900 * MS);
		}
	ps_ev(&g, t + 2 * MS, 4500 * MS, 1500 * MS);
	/* an event of no thread counts nowhere */
	ok(rec_writer_begin(g.w, T_DROPPED, t + MS, 0, 0, 0));
	ok(rec_writer_put_u64(g.w, 1));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_put_u64(g.w, T_ALLOC));
	ok(rec_writer_end(g.w));
	ok(rec_writer_close(g.w));
}

static void t_threads_written(void **state)
{
	(void)state;
	membuf m = { 0 };
	th_want want[NTH];
	write_threads(&m, want);
	run r;
	simple(&r, &m, "threads", NULL);
	const rec_view_table *t = table(&r, "threads");
	assert_int_equal(t->row_count, NTH);
	static const char *const names[NTH] = { "main", "worker-1", "worker-2", "worker-3",
						"worker-4" };
	for (size_t k = 0; k < NTH; k++) {
		const th_want *w = &want[k];
		size_t row = row_of(t, "thread", names[k]);
		assert_int_equal(row, NTH - 1 - k); /* most CPU first */
		assert_int_equal(U(t, row, "tid"), w->tid);
		assert_int_equal(U(t, row, "events"), w->events);
		assert_int_equal(U(t, row, "cpu"), w->cpu);
		assert_int_equal(U(t, row, "lock_wait"), w->lock);
		assert_int_equal(U(t, row, "cond_wait"), w->cond);
		assert_int_equal(U(t, row, "sleep"), w->sleep);
		assert_int_equal(U(t, row, "io"), w->io);
		assert_int_equal(U(t, row, "allocated"), w->alloc);
		/* every kind occurs on every thread */
		assert_true(w->lock && w->cond && w->sleep && w->io && w->alloc);
	}
	/* the process's CPU from its first statistics to its last, 5 s, and
	 * the samples in that time (not those before the first) */
	char want_note[200];
	snprintf(want_note, sizeof want_note,
		 "the process used 5.000 s of CPU, and its samples in that time stand for %.3f s (%.0f %%)",
		 (double)g_ps_sampled / 1e9, 100.0 * (double)g_ps_sampled / 5e9);
	assert_non_null(t->note);
	print_message("%s\n", t->note);
	assert_non_null(strstr(t->note, want_note));
	rec_view_close(r.v);

	/* --thread: the process's time is not one thread's: no such note */
	rec_view_options ot = REC_VIEW_OPTIONS_INIT;
	ot.view = "threads";
	ot.thread = "worker-1";
	run_view(&r, &m, &ot);
	t = table(&r, "threads");
	assert_int_equal(t->row_count, 1);
	assert_null(strstr(t->note, "ProcessStats"));
	rec_view_close(r.v);

	rec_view_options o = REC_VIEW_OPTIONS_INIT;
	o.view = "threads";
	o.top = 2;
	run_view(&r, &m, &o);
	t = table(&r, "threads");
	assert_int_equal(t->row_count, 2);
	assert_int_equal(t->rows_total, NTH);
	assert_string_equal(S(t, 0, "thread"), "worker-4");
	assert_string_equal(S(t, 1, "thread"), "worker-3");
	rec_view_close(r.v);
	free(m.p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_threads_a),
		cmocka_unit_test(t_threads_written),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
