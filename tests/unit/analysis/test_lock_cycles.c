/* SPDX-License-Identifier: MIT */
/*
 * test_lock_cycles.c - the cycle search of the lock-order graph
 * (libfmt/analysis/lock_cycles.c, rec_lg_find_cycles) on its own, on edge
 * lists built here as lock_graph.c builds them (sorted by from, then to):
 * a 3-lock cycle with an edge into it and one out of it (found once,
 * rotated to its smallest lock, only its own edges marked); a DAG with
 * diamonds and a self edge (no cycle, nothing marked); two separate cycles;
 * an empty graph.  Through recordings it is tested in test_lock_graph.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/lock_cycles.h"

/* edges[] from "from,to" pairs (already sorted), in_cycle cleared */
static void set_edges(rec_lockgraph_order_edge *e, const size_t (*pairs)[2], size_t n)
{
	memset(e, 0, n * sizeof *e);
	for (size_t i = 0; i < n; i++) {
		e[i].from = pairs[i][0];
		e[i].to = pairs[i][1];
		e[i].count = 1;
	}
}

static void free_cycles(rec_lg_cycles *c)
{
	free(c->cycles);
	free(c->idx);
}

static void t_three_lock_cycle(void **state)
{
	(void)state;
	/* 0 -> 1 -> 2 -> 0, 1 -> 4 out of it, 3 -> 0 into it */
	static const size_t pairs[][2] = { { 0, 1 }, { 1, 2 }, { 1, 4 }, { 2, 0 }, { 3, 0 } };
	rec_lockgraph_order_edge e[5];
	set_edges(e, pairs, 5);
	rec_lg_cycles c;
	memset(&c, 0, sizeof c);
	assert_int_equal(rec_lg_find_cycles(e, 5, 5, &c), REC_OK);
	assert_int_equal(c.count, 1); /* each of its 3 edges closes it: listed once */
	assert_false(c.truncated);
	const rec_lockgraph_cycle *cy = &c.cycles[0];
	assert_int_equal(cy->length, 3);
	const size_t locks[] = { 0, 1, 2 }, edges[] = { 0, 1, 3 };
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(cy->locks[i], locks[i]);
		assert_int_equal(cy->edges[i], edges[i]);
	}
	const bool marked[] = { true, true, false, true, false };
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(e[i].in_cycle, marked[i]);
	free_cycles(&c);
}

static void t_no_cycle(void **state)
{
	(void)state;
	/* a DAG with diamonds; 2 -> 2 a recursive lock taken again */
	static const size_t pairs[][2] = { { 0, 1 }, { 0, 2 }, { 0, 3 }, { 1, 2 },
					   { 1, 3 }, { 2, 2 }, { 2, 3 } };
	rec_lockgraph_order_edge e[7];
	set_edges(e, pairs, 7);
	rec_lg_cycles c;
	memset(&c, 0, sizeof c);
	assert_int_equal(rec_lg_find_cycles(e, 7, 4, &c), REC_OK);
	assert_int_equal(c.count, 0);
	for (size_t i = 0; i < 7; i++)
		assert_false(e[i].in_cycle);
	free_cycles(&c);
	memset(&c, 0, sizeof c);
	assert_int_equal(rec_lg_find_cycles(e, 0, 4, &c), REC_OK); /* no edges */
	assert_int_equal(c.count, 0);
	free_cycles(&c);
}

static void t_two_cycles(void **state)
{
	(void)state;
	/* 4 <-> 1 and 2 -> 5 -> 3 -> 2, joined by 1 -> 2 (on neither) */
	static const size_t pairs[][2] = { { 1, 2 }, { 1, 4 }, { 2, 5 }, { 3, 2 }, { 4, 1 }, { 5, 3 } };
	rec_lockgraph_order_edge e[6];
	set_edges(e, pairs, 6);
	rec_lg_cycles c;
	memset(&c, 0, sizeof c);
	assert_int_equal(rec_lg_find_cycles(e, 6, 6, &c), REC_OK);
	assert_int_equal(c.count, 2);
	const bool marked[] = { false, true, true, true, true, true };
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(e[i].in_cycle, marked[i]);
	bool seen2 = false, seen3 = false;
	for (size_t k = 0; k < 2; k++) {
		const rec_lockgraph_cycle *cy = &c.cycles[k];
		/* it follows its edges, from its smallest lock */
		for (size_t i = 0; i < cy->length; i++) {
			assert_int_equal(e[cy->edges[i]].from, cy->locks[i]);
			assert_int_equal(e[cy->edges[i]].to, cy->locks[(i + 1) % cy->length]);
			assert_true(cy->locks[0] <= cy->locks[i]);
		}
		if (cy->length == 2) {
			seen2 = true;
			assert_int_equal(cy->locks[0], 1);
			assert_int_equal(cy->locks[1], 4);
		} else {
			assert_int_equal(cy->length, 3);
			seen3 = true;
			assert_int_equal(cy->locks[0], 2);
			assert_int_equal(cy->locks[1], 5);
			assert_int_equal(cy->locks[2], 3);
		}
	}
	assert_true(seen2 && seen3);
	free_cycles(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_three_lock_cycle),
		cmocka_unit_test(t_no_cycle),
		cmocka_unit_test(t_two_cycles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
