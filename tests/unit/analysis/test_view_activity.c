/* SPDX-License-Identifier: MIT */
/*
 * test_view_activity.c - what a lock's holder did while another thread
 * waited (libfmt/analysis/view_activity.c, read by contention-by-lock): a
 * recording written with the real writer where worker-1 (tid 101) waits
 * 100-500 ms on cache-lock held by worker-2 (tid 102), and worker-2 in
 * that time (ms):
 *     50-150 rec.Sleep at warmup          50 ms inside the wait: sleeping
 *    160-200 rec.CondWait                 40: cond wait
 *    210-230 rec.Sleep kind=cond          20: cond wait (older recordings)
 *    240-300 rec.FileRead (rec/IO)        60: I/O, at cache_fill
 *    310-330 rec.LockWait on other-lock   20: lock wait
 *    340, 350, 360 CPU samples of 10 ms, the last with 1 overrun: 40 running
 *    480-600 rec.Sleep at warmup          20 inside: sleeping
 *    90 and 500 CPU samples: outside [100, 500)
 * and main sleeps 100-500 (not the holder: not counted).  So sleeping 70,
 * cond wait 60, I/O 60, lock wait 20, running 40, other 400 - 250 = 150 ms,
 * and the holder's site is cache_fill (the longest overlap, 60 ms).
 * The bound: a holder that sleeps 40 times (1 ms each) during one 100 ms
 * wait has only its last 32 (ACT_RING) counted: 32 ms sleeping, 68 other;
 * likewise its last 128 CPU samples (CPU_RING, summed by bisection of the
 * ring), also when two inputs leave them out of time order.  And no state
 * counts more than the wait's length in one wait (samples 1 us apart that
 * each claim 10 ms, overlapping I/O).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/view_fixture.h"
#include "analysis/view_internal.h"

enum { T_IO = 40 };

static const rec_field f_io[] = { { "bytes", "", "", REC_TYPE_U64, REC_UNIT_BYTES } };

static void lock_wait(gen *g, uint64_t th, double s, double e, const char *lock, uint64_t holder)
{
	ok(rec_writer_begin(g->w, T_LOCKWAIT, at(s), at(e) - at(s), th, S_LOCK));
	ok(rec_writer_put_u64(g->w, lock[0] == 'c' ? 0xbeef : 0xf00d));
	ok(rec_writer_put_u64(g->w, str(g, lock)));
	ok(rec_writer_put_u64(g->w, holder));
	ok(rec_writer_put_u64(g->w, 0));
	ok(rec_writer_end(g->w));
}

static void write_holder(membuf *m)
{
	gen g;
	open_gen(&g, m, 300);
	const rec_type tio = { T_IO, D_T_S, "rec.FileRead", "", "", "rec/IO", 1, f_io };
	ok(rec_writer_add_type(g.w, &tio));
	cpu_ev(&g, TH_W2, S_CPU, 90, 0);
	sleep_ev(&g, TH_W2, S_WARM, 50, 150);
	ok(rec_writer_begin(g.w, T_COND, at(160), at(200) - at(160), TH_W2, S_COND));
	for (int k = 0; k < 6; k++)
		ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_end(g.w));
	ok(rec_writer_begin(g.w, T_SLEEP, at(210), at(230) - at(210), TH_W2, S_COND));
	ok(rec_writer_put_u64(g.w, str(&g, "cond")));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_end(g.w));
	ok(rec_writer_begin(g.w, T_IO, at(240), at(300) - at(240), TH_W2, S_HOLD));
	ok(rec_writer_put_u64(g.w, 4096));
	ok(rec_writer_end(g.w));
	lock_wait(&g, TH_W2, 310, 330, "other-lock", 0);
	cpu_ev(&g, TH_W2, S_CPU, 340, 0);
	cpu_ev(&g, TH_W2, S_CPU, 350, 0);
	cpu_ev(&g, TH_W2, S_CPU, 360, 1);
	sleep_ev(&g, TH_MAIN, S_WARM, 100, 500);
	lock_wait(&g, TH_W1, 100, 500, "cache-lock", 102);
	cpu_ev(&g, TH_W2, S_CPU, 500, 0);
	sleep_ev(&g, TH_W2, S_WARM, 480, 600);
	ok(rec_writer_close(g.w));
}

static void t_holder_activity(void **state)
{
	(void)state;
	membuf m = { 0 };
	write_holder(&m);
	run r;
	simple(&r, &m, "contention-by-lock", NULL);
	const rec_view_table *t = table(&r, "contention_by_lock");
	size_t row = row_of(t, "lock", "cache-lock");
	assert_int_equal(U(t, row, "waits"), 1);
	assert_int_equal(U(t, row, "total"), 400 * MS);
	assert_string_equal(S(t, row, "holders"), "worker-2 (1)");
	assert_int_equal(U(t, row, "holder_sleeping"), 70 * MS);
	assert_int_equal(U(t, row, "holder_cond_wait"), 60 * MS);
	assert_int_equal(U(t, row, "holder_io"), 60 * MS);
	assert_int_equal(U(t, row, "holder_lock_wait"), 20 * MS);
	assert_int_equal(U(t, row, "holder_running"), 40 * MS);
	assert_int_equal(U(t, row, "holder_other"), 150 * MS);
	assert_string_equal(S(t, row, "holder_site"), "cache_fill");
	rec_view_close(r.v);

	free(m.p);
}

static void t_ring_bound(void **state)
{
	(void)state;
	membuf m = { 0 };
	gen g;
	open_gen(&g, &m, 300);
	for (int k = 0; k < 40; k++)
		sleep_ev(&g, TH_W2, S_WARM, 1010 + 2 * k, 1011 + 2 * k);
	lock_wait(&g, TH_W1, 1000, 1100, "cache-lock", 102);
	req_ev(&g, TH_MAIN, 1200, 1201, "/after");
	ok(rec_writer_close(g.w));
	run r;
	simple(&r, &m, "contention-by-lock", NULL);
	const rec_view_table *t = table(&r, "contention_by_lock");
	assert_int_equal(t->row_count, 1);
	assert_int_equal(U(t, 0, "total"), 100 * MS);
	assert_int_equal(U(t, 0, "holder_sleeping"), 32 * MS);
	assert_int_equal(U(t, 0, "holder_other"), 68 * MS);
	rec_view_close(r.v);
	free(m.p);
}

/* The CPU samples' ring (CPU_RING = 128) wrapped: worker-2 runs 200
 * samples of 10 ms, 10 ms apart, at 1000..2990 ms.  cache-lock's wait
 * 1000-3000 settles after 2990 (the request at 3100): its last 128 samples,
 * 1720..2990, lie in the wait: 1280 ms running.  other-lock's wait
 * 1500-1800 settles at the sample of 1810: samples 1500..1790 are in it,
 * 300 ms.  The samples given as digests (kept up to 2^20 a thread): all
 * 200 in cache-lock's wait, 2000 ms. */
static void t_cpu_ring(void **state)
{
	(void)state;
	membuf m = { 0 };
	gen g;
	open_gen(&g, &m, 300);
	for (int k = 0; k < 200; k++)
		cpu_ev(&g, TH_W2, S_CPU, 1000 + 10 * k, 0);
	lock_wait(&g, TH_W1, 1000, 3000, "cache-lock", 102);
	lock_wait(&g, TH_MAIN, 1500, 1800, "other-lock", 102);
	req_ev(&g, TH_MAIN, 3100, 3101, "/after");
	ok(rec_writer_close(g.w));
	run r;
	for (int dig = 0; dig < 2; dig++) {
		view_digests = dig ? VIEW_DIGESTS : VIEW_EVENTS;
		simple(&r, &m, "contention-by-lock", NULL);
		const rec_view_table *t = table(&r, "contention_by_lock");
		assert_int_equal(U(t, row_of(t, "lock", "cache-lock"), "holder_running"),
				 (dig ? 2000 : 1280) * MS);
		assert_int_equal(U(t, row_of(t, "lock", "other-lock"), "holder_running"), 300 * MS);
		rec_view_close(r.v);
	}
	view_digests = VIEW_BOTH;
	free(m.p);
}

/* A holder's states count at most the wait's length per wait: worker-2
 * takes 50 CPU samples 1 us apart at 1000 ms, each claiming a 10 ms period
 * (500 ms in all), and two file reads that overlap wholly (1002-1018 ms,
 * twice: 32 ms of I/O), during cache-lock's wait 1000-1020 (20 ms) of
 * worker-1: running 20 ms and I/O 20 ms (the wait's length), other 0.
 * other-lock's wait 1000-1002 (2 ms, of main) holds the samples too:
 * running 2 ms, I/O 0.  Without the cap: running 500 ms in both, I/O 32. */
static void t_cap_at_wait(void **state)
{
	(void)state;
	membuf m = { 0 };
	gen g;
	open_gen(&g, &m, 300);
	const rec_type tio = { T_IO, D_T_S, "rec.FileRead", "", "", "rec/IO", 1, f_io };
	ok(rec_writer_add_type(g.w, &tio));
	for (int k = 0; k < 50; k++)
		cpu_ev(&g, TH_W2, S_CPU, 1000 + 0.001 * k, 0);
	for (int k = 0; k < 2; k++) {
		ok(rec_writer_begin(g.w, T_IO, at(1002), at(1018) - at(1002), TH_W2, S_HOLD));
		ok(rec_writer_put_u64(g.w, 4096));
		ok(rec_writer_end(g.w));
	}
	lock_wait(&g, TH_W1, 1000, 1020, "cache-lock", 102);
	lock_wait(&g, TH_MAIN, 1000, 1002, "other-lock", 102);
	req_ev(&g, TH_MAIN, 1100, 1101, "/after");
	ok(rec_writer_close(g.w));
	run r;
	simple(&r, &m, "contention-by-lock", NULL);
	const rec_view_table *t = table(&r, "contention_by_lock");
	size_t row = row_of(t, "lock", "cache-lock");
	assert_int_equal(U(t, row, "total"), 20 * MS);
	assert_int_equal(U(t, row, "holder_running"), 20 * MS);
	assert_int_equal(U(t, row, "holder_io"), 20 * MS);
	assert_int_equal(U(t, row, "holder_other"), 0);
	row = row_of(t, "lock", "other-lock");
	assert_int_equal(U(t, row, "total"), 2 * MS);
	assert_int_equal(U(t, row, "holder_running"), 2 * MS);
	assert_int_equal(U(t, row, "holder_io"), 0);
	assert_int_equal(U(t, row, "holder_other"), 0);
	rec_view_close(r.v);
	free(m.p);
}

/* Two inputs of one view, the second earlier: worker-2's ring holds its
 * samples of the first input (2000..2009 ms) before those of the second
 * (1000..1009), out of time order; the wait 1000-1100 of the second input
 * counts only the ten samples inside it (100 ms), not every sample of the
 * ring.  The same with the samples given as digests (an input's are
 * dropped at its end, and the next one's first times are earlier). */
static void t_cpu_unordered(void **state)
{
	(void)state;
	membuf a = { 0 }, b = { 0 };
	gen g;
	open_gen(&g, &a, 300);
	for (int k = 0; k < 10; k++)
		cpu_ev(&g, TH_W2, S_CPU, 2000 + k, 0);
	ok(rec_writer_close(g.w));
	open_gen(&g, &b, 300);
	for (int k = 0; k < 10; k++)
		cpu_ev(&g, TH_W2, S_CPU, 1000 + k, 0);
	lock_wait(&g, TH_W1, 1000, 1100, "cache-lock", 102);
	ok(rec_writer_close(g.w));
	for (int dig = 0; dig < 2; dig++) {
		rec_view_options o = REC_VIEW_OPTIONS_INIT;
		o.view = "contention-by-lock";
		rec_view *v = NULL;
		ok(rec_view_open(&v, &o));
		read_view(v, &a, dig);
		read_view(v, &b, dig);
		const rec_view_table *tt;
		size_t n;
		ok(rec_view_get(v, &tt, &n));
		run r = { v, tt, n };
		const rec_view_table *t = table(&r, "contention_by_lock");
		assert_int_equal(U(t, row_of(t, "lock", "cache-lock"), "holder_running"), 100 * MS);
		rec_view_close(v);
	}
	free(a.p);
	free(b.p);
}

/* The CPU samples given as digests are kept only as far back as a wait can
 * still ask about: worker-2 runs 20,000 samples of 10 ms, 10 ms apart (200
 * s), in chunks of a few hundred events, and holds cache-lock for worker-1's
 * 200 waits of 500 ms, one every second: each wait sees 50 samples, 500 ms
 * running (100 s in all, the same as the samples given as events, which
 * run_view() compares).  Read with digests by hand, the most digests a
 * thread holds at once stays under 2,000 (a few chunks' worth), never the
 * 20,000 of the recording; none are held once the input is over. */
static void t_digests_bounded(void **state)
{
	(void)state;
	membuf m = { 0 };
	gen g;
	open_gen(&g, &m, 4096);
	for (int k = 0; k < 20000; k++) {
		double t = 1000 + 10.0 * k;
		cpu_ev(&g, TH_W2, S_CPU, t, 0);
		if (k % 100 == 0)
			lock_wait(&g, TH_W1, t, t + 500, "cache-lock", 102);
	}
	ok(rec_writer_close(g.w));
	run r;
	simple(&r, &m, "contention-by-lock", NULL);
	const rec_view_table *t = table(&r, "contention_by_lock");
	assert_int_equal(U(t, 0, "waits"), 200);
	assert_int_equal(U(t, 0, "holder_running"), 200 * 500 * MS);
	rec_view_close(r.v);

	rec_view_options o = REC_VIEW_OPTIONS_INIT;
	o.view = "contention-by-lock";
	rec_view *v = NULL;
	ok(rec_view_open(&v, &o));
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.flags = REC_READ_ORDERED;
	rec_reader *rd = NULL;
	ok(rec_reader_open_mem(&rd, m.p, m.len, "mem", &ro));
	assert_string_equal(rec_view_digest_type(v), "rec.CPUSample");
	ok(rec_reader_digest_type(rd, "rec.CPUSample", rec_view_add_digests, v));
	ok(rec_view_begin_input(v));
	rec_event ev;
	rec_status st;
	uint32_t most = 0;
	size_t events = 0;
	while ((st = rec_reader_next_event(rd, &ev)) == REC_OK) {
		ok(rec_view_add_event(v, &ev));
		events++;
		for (size_t i = 0; i < v->threads.n; i++) {
			const vact *a = ((const vthread *)vmap_at(&v->threads, i))->act;
			if (a && a->ndig > most)
				most = a->ndig;
		}
	}
	assert_int_equal(st, REC_END);
	assert_int_equal(events, 200); /* the lock waits: the samples came as digests */
	rec_reader_stats rs;
	rec_reader_get_stats(rd, &rs);
	assert_int_equal(rs.events_digested, 20000);
	assert_true(rs.chunks >= 20);
	assert_true(most >= 50);
	assert_true(most < 2000);
	rec_reader_close(rd);
	ok(rec_view_begin_input(v)); /* the input is over: nothing held */
	for (size_t i = 0; i < v->threads.n; i++) {
		const vact *a = ((const vthread *)vmap_at(&v->threads, i))->act;
		assert_true(!a || (a->ndig == 0 && a->dig == NULL));
	}
	const rec_view_table *tt;
	size_t n;
	ok(rec_view_get(v, &tt, &n));
	r = (run){ v, tt, n };
	t = table(&r, "contention_by_lock");
	assert_int_equal(U(t, 0, "holder_running"), 200 * 500 * MS);
	rec_view_close(v);
	free(m.p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_holder_activity),
		cmocka_unit_test(t_ring_bound),
		cmocka_unit_test(t_cpu_ring),
		cmocka_unit_test(t_digests_bounded),
		cmocka_unit_test(t_cap_at_wait),
		cmocka_unit_test(t_cpu_unordered),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
