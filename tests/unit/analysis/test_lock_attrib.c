/* SPDX-License-Identifier: MIT */
/*
 * test_lock_attrib.c - lock waits split by who held the lock
 * (rec/lock_attrib.h, libfmt/analysis/lock_attrib.c), on its own: the
 * parts of hand-written waits (a waiter behind two successive holders, a
 * barger, another lock, a hand-off only wait, rounds), and many generated
 * waits on three locks against a brute-force split done here: each wait's
 * parts cover it exactly, each part charged to the holder at the wait's
 * start or to the waiter whose wait ended where the part begins.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>

#include "rec/lock_attrib.h"

/* rec/lock_attrib.h on its own: the parts of each wait, in order; a wait
 * that only hands off (counted = false) has no parts of its own; a barging
 * thread (no wait recorded) is invisible: its hold is charged to the holder
 * before it; waits of another lock and of the waiter itself are not
 * hand-offs; a holder of 0 stays unknown until the first hand-off. */
static void t_lock_attrib_parts(void **state)
{
	(void)state;
	rec_lockattrib *a;
	assert_int_equal(rec_lockattrib_open(&a), REC_OK);
	const rec_lockattrib_wait w[] = {
		{ 1, 12, 11, 0, 100, 70, true },   /* 0: lock 1, [0,100] behind 11 */
		{ 1, 13, 11, 10, 40, 71, false },  /* 1: a hand-off to 13 at 40 only */
		{ 1, 14, 0, 20, 60, 72, true },    /* 2: holder unknown; 13 at 40 */
		{ 2, 15, 16, 0, 90, 73, true },    /* 3: lock 2: no hand-offs, though 13 and 14 end inside */
		{ 1, 12, 11, 200, 300, 74, true }, /* 4: 12 again; nobody ends inside (a barger held it) */
	};
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
		assert_int_equal(rec_lockattrib_add(a, &w[i]), REC_OK);
	rec_lockattrib_wait bad = { 1, 1, 0, 10, 5, 0, true };
	assert_int_equal(rec_lockattrib_add(a, &bad), REC_ERR_INVALID_ARG);
	rec_lockattrib_part p;
	assert_int_equal(rec_lockattrib_next(a, &p), REC_ERR_STATE);
	assert_int_equal(rec_lockattrib_finish(a), REC_OK);
	assert_int_equal(rec_lockattrib_count(a), 5);
	const struct { size_t wait; uint64_t holder; int64_t s, e; bool handoff; } want[] = {
		{ 0, 11, 0, 40, false }, { 0, 13, 40, 60, true }, { 0, 14, 60, 100, true },
		{ 2, 0, 20, 40, false }, { 2, 13, 40, 60, true },
		{ 3, 16, 0, 90, false },
		{ 4, 11, 200, 300, false },
	};
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
			assert_int_equal(rec_lockattrib_next(a, &p), REC_OK);
			assert_int_equal(p.wait, want[i].wait);
			assert_int_equal(p.tag, w[want[i].wait].tag);
			assert_int_equal(p.waiter, w[want[i].wait].waiter);
			assert_int_equal(p.holder, want[i].holder);
			assert_int_equal(p.start_ns, want[i].s);
			assert_int_equal(p.end_ns, want[i].e);
			assert_int_equal(p.handoff, want[i].handoff);
		}
		assert_int_equal(rec_lockattrib_next(a, &p), REC_END);
		rec_lockattrib_rewind(a);
	}
	/* adding after finish starts a new round */
	rec_lockattrib_wait late = { 1, 17, 11, 250, 260, 75, false };
	assert_int_equal(rec_lockattrib_add(a, &late), REC_OK);
	assert_int_equal(rec_lockattrib_next(a, &p), REC_ERR_STATE);
	assert_int_equal(rec_lockattrib_finish(a), REC_OK);
	size_t n = 0;
	int64_t last_part_holder = -1;
	while (rec_lockattrib_next(a, &p) == REC_OK) {
		n++;
		if (p.wait == 4 && p.start_ns == 260)
			last_part_holder = (int64_t)p.holder;
	}
	assert_int_equal(n, 8); /* wait 4 now split at 260 */
	assert_int_equal(last_part_holder, 17);
	rec_lockattrib_close(a);
	rec_lockattrib_close(NULL);
}

/* W (tid 21) waits 0-300 ms on lock 5, held by H (20) when it began; A (22)
 * got the lock at 100 after waiting since -50, B (23) at 250 after waiting
 * since 50 (behind H, then A).  W: H 0-100, A 100-250, B 250-300; B: H
 * 50-100, A 100-250.  Per holder over both: H 150, A 300, B 50 = 500 ms, the
 * two counted waits' total (A's own wait is not counted: a hand-off only). */
static void t_two_successive_holders(void **state)
{
	(void)state;
	const int64_t ms = 1000000;
	rec_lockattrib *a;
	assert_int_equal(rec_lockattrib_open(&a), REC_OK);
	const rec_lockattrib_wait w[] = {
		{ 5, 22, 20, -50 * ms, 100 * ms, 1, false },
		{ 5, 23, 20, 50 * ms, 250 * ms, 2, true },
		{ 5, 21, 20, 0, 300 * ms, 3, true },
	};
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(rec_lockattrib_add(a, &w[i]), REC_OK);
	assert_int_equal(rec_lockattrib_finish(a), REC_OK);
	const struct { uint64_t tag, holder; int64_t s, e; } want[] = {
		{ 2, 20, 50, 100 }, { 2, 22, 100, 250 },
		{ 3, 20, 0, 100 },  { 3, 22, 100, 250 }, { 3, 23, 250, 300 },
	};
	int64_t by_holder[4] = { 0 }; /* tids 20..23 */
	rec_lockattrib_part p;
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		assert_int_equal(rec_lockattrib_next(a, &p), REC_OK);
		assert_int_equal(p.tag, want[i].tag);
		assert_int_equal(p.lock, 5);
		assert_int_equal(p.holder, want[i].holder);
		assert_int_equal(p.start_ns, want[i].s * ms);
		assert_int_equal(p.end_ns, want[i].e * ms);
		by_holder[p.holder - 20] += p.end_ns - p.start_ns;
	}
	assert_int_equal(rec_lockattrib_next(a, &p), REC_END);
	assert_int_equal(by_holder[0], 150 * ms);
	assert_int_equal(by_holder[2], 300 * ms);
	assert_int_equal(by_holder[3], 50 * ms);
	assert_int_equal(by_holder[1], 0); /* W itself held nothing */
	rec_lockattrib_close(a);
}

/* 3000 waits by 12 threads on 3 locks, distinct ends, 1 in 5 not counted;
 * the parts against a split computed here by brute force. */
static void t_generated(void **state)
{
	(void)state;
	enum { N = 3000 };
	rec_lockattrib_wait *w = calloc(N, sizeof *w);
	assert_non_null(w);
	uint64_t seed = 7;
	for (size_t i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		w[i].lock = 1 + (seed >> 33) % 3;
		w[i].waiter = 100 + (seed >> 40) % 12;
		w[i].holder = (seed >> 50) % 4 == 0 ? 0 : 100 + (seed >> 44) % 12;
		/* over 10 s, up to 50 ms long; end % 10000 = i + 1: distinct ends */
		w[i].start_ns = (int64_t)((seed >> 20) % 1000000) * 10000;
		w[i].end_ns = w[i].start_ns + (int64_t)((seed >> 8) % 5000) * 10000 + (int64_t)i + 1;
		w[i].tag = i * 3;
		w[i].counted = (seed >> 60) % 5 != 0;
	}
	rec_lockattrib *a;
	assert_int_equal(rec_lockattrib_open(&a), REC_OK);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(rec_lockattrib_add(a, &w[i]), REC_OK);
	assert_int_equal(rec_lockattrib_finish(a), REC_OK);
	rec_lockattrib_part p;
	rec_status st = rec_lockattrib_next(a, &p);
	size_t parts = 0, handoffs = 0;
	for (size_t i = 0; i < N; i++) {
		if (!w[i].counted)
			continue;
		/* brute force: the ends of other threads' waits of the lock inside (s, e) */
		int64_t t = w[i].start_ns;
		uint64_t holder = w[i].holder;
		bool handoff = false;
		for (;;) {
			size_t next = SIZE_MAX;
			for (size_t k = 0; k < N; k++)
				if (k != i && w[k].lock == w[i].lock && w[k].waiter != w[i].waiter &&
				    w[k].end_ns > t && w[k].end_ns < w[i].end_ns &&
				    (next == SIZE_MAX || w[k].end_ns < w[next].end_ns))
					next = k;
			int64_t end = next == SIZE_MAX ? w[i].end_ns : w[next].end_ns;
			if (end > t) {
				assert_int_equal(st, REC_OK);
				assert_int_equal(p.wait, i);
				assert_int_equal(p.tag, w[i].tag);
				assert_int_equal(p.waiter, w[i].waiter);
				assert_int_equal(p.holder, holder);
				assert_int_equal(p.start_ns, t);
				assert_int_equal(p.end_ns, end);
				assert_int_equal(p.handoff, handoff);
				parts++;
				st = rec_lockattrib_next(a, &p);
			}
			if (next == SIZE_MAX)
				break;
			t = end;
			holder = w[next].waiter;
			handoff = true;
			handoffs++;
		}
	}
	assert_int_equal(st, REC_END);
	assert_true(handoffs > 1000); /* the waits do overlap */
	assert_true(parts > N);
	rec_lockattrib_close(a);
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_lock_attrib_parts),
		cmocka_unit_test(t_two_successive_holders),
		cmocka_unit_test(t_generated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
