/* SPDX-License-Identifier: MIT */
/*
 * lock_cycles.h - the lock-order cycle search of lock_graph.c, in
 * lock_cycles.c (not installed).
 */
#ifndef REC_LOCK_CYCLES_H
#define REC_LOCK_CYCLES_H

#include <stdbool.h>
#include <stddef.h>

#include "rec/lock_graph.h"

/* The cycles found: cycles[count], whose locks and edges point into idx
 * (both malloc'ed, the caller frees them); truncated when the search
 * stopped at its bounds (the edges it did not reach are still in_cycle). */
typedef struct rec_lg_cycles {
	rec_lockgraph_cycle *cycles;
	size_t *idx;
	size_t count;
	bool truncated;
} rec_lg_cycles;

/* The cycles of the graph of nv locks and edges[0..ne) (sorted by from, then
 * to): marks every edge on a cycle in_cycle and lists each cycle once.
 * REC_OK, or REC_ERR_NOMEM (nothing in *out to free then). */
rec_status rec_lg_find_cycles(rec_lockgraph_order_edge *edges, size_t ne, size_t nv,
			      rec_lg_cycles *out);

#endif /* REC_LOCK_CYCLES_H */
