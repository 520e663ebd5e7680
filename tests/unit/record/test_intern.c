/* SPDX-License-Identifier: MIT */
/*
 * test_intern.c - intern.c's stack table (lock-free, insert-only): one id per
 * distinct (pcs, flags), ids dense from 1, stacks cut at a 0 entry and at
 * the maximum depth (flagged truncated), a full table answering 0 instead of
 * a wrong id, and two real threads interning the same and different stacks
 * at once agreeing on every id.  Also the hashes it rests on.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "record/recorder_internal.h"

static void t_ids(void **state)
{
	(void)state;
	rec_stacktab st;
	memset(&st, 0, sizeof st);
	assert_true(rec_stacktab_init(&st));
	uintptr_t a[3] = { 0x1000, 0x2000, 0x3000 }, b[3] = { 0x1000, 0x2000, 0x3001 };
	uint64_t ia = rec_stack_intern(&st, a, 3, 0, 1);
	uint64_t ib = rec_stack_intern(&st, b, 3, 0, 1);
	assert_int_equal(ia, 1);
	assert_int_equal(ib, 2);
	assert_int_equal(rec_stack_intern(&st, a, 3, 0, 1), ia);
	/* The same pcs with another flag are another stack. */
	uint64_t it = rec_stack_intern(&st, a, 3, REC_STACK_TRUNCATED, 1);
	assert_int_equal(it, 3);
	/* A prefix is another stack; a 0 entry ends a stack. */
	assert_int_equal(rec_stack_intern(&st, a, 2, 0, 1), 4);
	uintptr_t z[4] = { 0x1000, 0x2000, 0, 0x9999 };
	assert_int_equal(rec_stack_intern(&st, z, 4, 0, 1), 4);
	/* Nothing to intern: 0. */
	assert_int_equal(rec_stack_intern(&st, z + 2, 2, 0, 1), 0);
	assert_int_equal(rec_stack_intern(&st, a, 0, 0, 1), 0);
	/* The entries say what was interned. */
	const rec_stackent *e = &st.ents[ib - 1];
	assert_int_equal(e->depth, 3);
	assert_int_equal(e->ready, 1);
	assert_memory_equal(&st.arena[e->off], b, sizeof b);
	assert_int_equal(st.ents[it - 1].flags, REC_STACK_TRUNCATED);
	rec_stacktab_free(&st);
}

static void t_too_deep(void **state)
{
	(void)state;
	rec_stacktab st;
	memset(&st, 0, sizeof st);
	assert_true(rec_stacktab_init(&st));
	size_t n = REC_STACK_MAX_DEPTH + 5;
	uintptr_t *pcs = malloc(n * sizeof *pcs);
	assert_non_null(pcs);
	for (size_t i = 0; i < n; i++)
		pcs[i] = 0x400000 + i * 16;
	uint64_t id = rec_stack_intern(&st, pcs, n, 0, 1);
	assert_int_equal(id, 1);
	assert_int_equal(st.ents[0].depth, REC_STACK_MAX_DEPTH);
	assert_int_equal(st.ents[0].flags, REC_STACK_TRUNCATED);
	/* The same stack cut by hand and flagged is the same id. */
	assert_int_equal(rec_stack_intern(&st, pcs, REC_STACK_MAX_DEPTH, REC_STACK_TRUNCATED, 1), id);
	free(pcs);
	rec_stacktab_free(&st);
}

static void t_full(void **state)
{
	(void)state;
	rec_stacktab st;
	memset(&st, 0, sizeof st);
	assert_true(rec_stacktab_init(&st));
	uint64_t cap = st.ents_cap, zeros = 0, last = 0;
	for (uint64_t i = 0; i < cap + 100; i++) {
		uintptr_t pcs[2] = { 0x10000 + i, 0x20000 };
		uint64_t id = rec_stack_intern(&st, pcs, 2, 0, 1);
		if (id == 0) {
			zeros++;
			continue;
		}
		assert_int_equal(id, last + 1); /* dense, never reused */
		last = id;
	}
	assert_int_equal(last, cap);
	assert_int_equal(zeros, 100);
	/* What is in stays findable. */
	uintptr_t first[2] = { 0x10000, 0x20000 };
	assert_int_equal(rec_stack_intern(&st, first, 2, 0, 1), 1);
	rec_stacktab_free(&st);
}

#define PER_THREAD 20000u
typedef struct racer {
	rec_stacktab *st;
	unsigned salt; /* 0 or 1: half of the stacks are shared */
	uint64_t ids[PER_THREAD];
} racer;

static void *race(void *p)
{
	racer *r = p;
	for (unsigned i = 0; i < PER_THREAD; i++) {
		/* even i: the same stack in both threads; odd i: this thread's own */
		uintptr_t pcs[3] = { 0x7000 + i, (i & 1) ? 0x100 + r->salt : 0x100, 0x55 };
		r->ids[i] = rec_stack_intern(r->st, pcs, 3, 0, 1);
	}
	return NULL;
}

static void t_two_threads(void **state)
{
	(void)state;
	rec_stacktab st;
	memset(&st, 0, sizeof st);
	assert_true(rec_stacktab_init(&st));
	racer *r = calloc(2, sizeof *r);
	assert_non_null(r);
	pthread_t th[2];
	for (unsigned k = 0; k < 2; k++) {
		r[k].st = &st;
		r[k].salt = k + 1;
		assert_int_equal(pthread_create(&th[k], NULL, race, &r[k]), 0);
	}
	for (unsigned k = 0; k < 2; k++)
		assert_int_equal(pthread_join(th[k], NULL), 0);
	uint64_t distinct = PER_THREAD / 2 + PER_THREAD; /* shared + 2 x own */
	assert_int_equal(st.next_id, distinct);
	for (unsigned i = 0; i < PER_THREAD; i++) {
		assert_true(r[0].ids[i] != 0 && r[1].ids[i] != 0);
		if (i & 1)
			assert_true(r[0].ids[i] != r[1].ids[i]);
		else
			assert_int_equal(r[0].ids[i], r[1].ids[i]);
		/* Every id's entry holds what was interned under it. */
		const rec_stackent *e = &st.ents[r[0].ids[i] - 1];
		assert_int_equal(e->depth, 3);
		assert_int_equal(st.arena[e->off], 0x7000 + i);
	}
	free(r);
	rec_stacktab_free(&st);
}

static void t_hashes(void **state)
{
	(void)state;
	uintptr_t a[2] = { 1, 2 }, b[2] = { 2, 1 };
	assert_true(rec_hash_pcs(a, 2, 0) != rec_hash_pcs(b, 2, 0));
	assert_true(rec_hash_pcs(a, 2, 0) != rec_hash_pcs(a, 2, REC_STACK_TRUNCATED));
	assert_true(rec_hash_pcs(a, 1, 0) != rec_hash_pcs(a, 2, 0));
	assert_true(rec_hash_bytes("abc", 3) != rec_hash_bytes("abd", 3));
	assert_true(rec_hash_bytes("", 0) != 0);
	/* The length is part of the hash: "a\0" is not "a". */
	assert_true(rec_hash_bytes("a\0", 2) != rec_hash_bytes("a", 1));
}

/* The table indexes by the hash's low bits: stacks that differ in a few
 * low bits of one frame (call sites of one function) or only in the high
 * bits (the same code in modules mapped at other bases) must spread over
 * them; 16384 stacks into 4096 buckets average 4, and a hash whose low bits
 * ignored either kind would put all of a kind into one. */
static void t_hash_spread(void **state)
{
	(void)state;
	enum { N = 16384, B = 4096 };
	static unsigned short count[B];
	for (int kind = 0; kind < 4; kind++) {
		memset(count, 0, sizeof count);
		unsigned maxc = 0;
		for (uintptr_t j = 0; j < N; j++) {
			uintptr_t pcs[5] = { 0x55550000a010, 0x55550000b020, 0x7f1200004000,
					     0x7f1200005000, 0x55550000c030 };
			if (kind == 0)
				pcs[1] += j * 16; /* call sites 16 bytes apart */
			else if (kind == 1)
				pcs[2] += (uint64_t)j << 32; /* other module bases */
			else if (kind == 2)
				pcs[4] ^= j; /* the outermost frame */
			else
				pcs[(j & 3)] += (j >> 2) * 4096; /* pages apart, any frame */
			unsigned c = ++count[rec_hash_pcs(pcs, 5, 0) & (B - 1)];
			if (c > maxc)
				maxc = c;
		}
		assert_true(maxc < 24);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_ids),
		cmocka_unit_test(t_too_deep),
		cmocka_unit_test(t_full),
		cmocka_unit_test(t_two_threads),
		cmocka_unit_test(t_hashes),
		cmocka_unit_test(t_hash_spread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
