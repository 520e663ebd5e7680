/* SPDX-License-Identifier: MIT */
/*
 * analysis.c - fuzz the library halves of rec-flame and rec-lockgraph:
 * every event of the input (file order) goes to two stack aggregations
 * (per-thread roots with rec_ frames trimmed; reversed, in column 1 of a
 * second input) and to a lock graph (wait-for and lock-order, cycles); then
 * every aggregated stack and the whole lock graph result are read.
 */
#include <stdio.h>
#include <stdlib.h>

#include "rec/lock_graph.h"
#include "rec/stack_agg.h"
#include "fuzz.h"

static void read_stacks(rec_stackagg *a)
{
	if (rec_stackagg_rewind(a) != REC_OK)
		return;
	rec_stackagg_stack s;
	while (rec_stackagg_next(a, &s) == REC_OK) {
		for (size_t i = 0; i < s.depth; i++)
			rec_fuzz_str(s.frames[i]);
		rec_fuzz_sink += s.weight[0] + s.weight[1] + s.total[0] + s.total[1];
	}
	rec_stackagg_stats st;
	rec_stackagg_get_stats(a, &st);
	rec_fuzz_sink += st.events + st.nodes + st.names;
}

static void read_locks(rec_lockgraph *g)
{
	const rec_lockgraph_result *res = NULL;
	if (rec_lockgraph_get(g, &res) != REC_OK || !res) {
		rec_fuzz_str(rec_lockgraph_errmsg(g));
		return;
	}
	for (size_t i = 0; i < res->lock_count; i++) {
		rec_fuzz_str(res->locks[i].name);
		rec_fuzz_str(res->locks[i].site);
		rec_fuzz_str(res->locks[i].label);
	}
	for (size_t i = 0; i < res->thread_count; i++) {
		rec_fuzz_str(res->threads[i].name);
		rec_fuzz_str(res->threads[i].label);
	}
	for (size_t i = 0; i < res->wait_edge_count; i++) {
		if (res->wait_edges[i].thread >= res->thread_count || res->wait_edges[i].lock >= res->lock_count) {
			fprintf(stderr, "analysis: wait edge %zu indexes out of range\n", i);
			abort();
		}
	}
	for (size_t i = 0; i < res->order_edge_count; i++) {
		const rec_lockgraph_order_edge *e = &res->order_edges[i];
		if (e->from >= res->lock_count || e->to >= res->lock_count) {
			fprintf(stderr, "analysis: order edge %zu indexes out of range\n", i);
			abort();
		}
		for (size_t j = 0; j < e->example_count; j++)
			for (uint32_t d = 0; d < e->examples[j].depth; d++)
				rec_fuzz_str(e->examples[j].frames[d]);
	}
	for (size_t i = 0; i < res->cycle_count; i++) {
		const rec_lockgraph_cycle *c = &res->cycles[i];
		for (size_t j = 0; j < c->length; j++) {
			if (c->locks[j] >= res->lock_count || c->edges[j] >= res->order_edge_count) {
				fprintf(stderr, "analysis: cycle %zu indexes out of range\n", i);
				abort();
			}
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rec_stackagg_options so = REC_STACKAGG_OPTIONS_INIT;
	so.flags = REC_STACKAGG_THREADS | REC_STACKAGG_TRIM_RECORDER;
	rec_stackagg_options ro = REC_STACKAGG_OPTIONS_INIT;
	ro.flags = REC_STACKAGG_REVERSE;
	rec_stackagg *a = NULL, *rev = NULL;
	rec_lockgraph *g = NULL;
	if (rec_stackagg_open(&a, &so) != REC_OK || rec_stackagg_open(&rev, &ro) != REC_OK ||
	    rec_lockgraph_open(&g, NULL) != REC_OK)
		goto out;
	rec_stackagg_begin_input(rev, 1);

	rec_reader_options o = rec_fuzz_options(0);
	rec_reader *r = NULL;
	if (rec_reader_open_mem(&r, data, size, "fuzz", &o) == REC_OK) {
		for (;;) {
			rec_event ev;
			rec_status st = rec_reader_next_event(r, &ev);
			if (st == REC_END)
				break;
			if (st != REC_OK)
				continue;
			uint64_t w = ev.duration_ns > 0 ? (uint64_t)ev.duration_ns : 1;
			rec_stackagg_add_event(a, &ev, w);
			rec_stackagg_add_event(rev, &ev, 1);
			rec_lockgraph_add_event(g, &ev);
		}
	}
	rec_reader_close(r);
	read_stacks(a);
	read_stacks(rev);
	read_locks(g);
out:
	rec_stackagg_close(a);
	rec_stackagg_close(rev);
	rec_lockgraph_close(g);
	return 0;
}
