/* SPDX-License-Identifier: MIT */
/*
 * lock_cycles.c - the cycles of a lock-order graph (rec/lock_graph.h's
 * result.cycles): Tarjan's strongly connected components, then for each
 * order edge inside a component the shortest path back that closes a cycle
 * through it, rotated to start at its smallest lock and listed once.  Works
 * on the order edges lock_graph.c built; bounded by MAX_CYCLES cycles and
 * MAX_CYCLE_WORK edges visited.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "lock_cycles.h"

#define MAX_CYCLES 10000u
#define MAX_CYCLE_WORK 50000000u /* edges visited by the cycle searches */

/* Tarjan's strongly connected components without recursion.  adj_start[v] ..
 * adj_start[v + 1] index the out-edges of v (edges sorted by from); comp[v]
 * gets a component number; comp_size[c] its node count. */
static rec_status tarjan(size_t nv, const size_t *adj_start, const rec_lockgraph_order_edge *edges,
			 size_t *comp, size_t *comp_size)
{
	size_t *index = malloc(nv * sizeof *index);
	size_t *low = malloc(nv * sizeof *low);
	size_t *stack = malloc(nv * sizeof *stack);
	size_t *call_v = malloc(nv * sizeof *call_v);
	size_t *call_e = malloc(nv * sizeof *call_e);
	bool *on_stack = calloc(nv ? nv : 1, sizeof *on_stack);
	rec_status st = REC_OK;
	if (!index || !low || !stack || !call_v || !call_e || !on_stack) {
		st = REC_ERR_NOMEM;
		goto out;
	}
	const size_t UNSEEN = SIZE_MAX;
	for (size_t v = 0; v < nv; v++)
		index[v] = UNSEEN;
	size_t next_index = 0, sp = 0, ncomp = 0;
	for (size_t root = 0; root < nv; root++) {
		if (index[root] != UNSEEN)
			continue;
		size_t depth = 0;
		call_v[0] = root;
		call_e[0] = adj_start[root];
		index[root] = low[root] = next_index++;
		stack[sp++] = root;
		on_stack[root] = true;
		while (1) {
			size_t v = call_v[depth];
			if (call_e[depth] < adj_start[v + 1]) {
				size_t w = edges[call_e[depth]++].to;
				if (index[w] == UNSEEN) {
					index[w] = low[w] = next_index++;
					stack[sp++] = w;
					on_stack[w] = true;
					depth++;
					call_v[depth] = w;
					call_e[depth] = adj_start[w];
				} else if (on_stack[w] && index[w] < low[v]) {
					low[v] = index[w];
				}
				continue;
			}
			/* v is done */
			if (low[v] == index[v]) {
				size_t size = 0, w;
				do {
					w = stack[--sp];
					on_stack[w] = false;
					comp[w] = ncomp;
					size++;
				} while (w != v);
				comp_size[ncomp++] = size;
			}
			if (depth == 0)
				break;
			depth--;
			size_t u = call_v[depth];
			if (low[v] < low[u])
				low[u] = low[v];
		}
	}
out:
	free(index);
	free(low);
	free(stack);
	free(call_v);
	free(call_e);
	free(on_stack);
	return st;
}

typedef struct cycle_key {
	uint64_t hash;
	size_t start, len; /* into the cycle index buffer */
} cycle_key;

/* Find cycles: for each edge u -> v inside a non-trivial component, the
 * shortest path v ~> u inside the component closes a cycle through it.
 * Cycles are rotated to start at their smallest lock and deduplicated. */
rec_status rec_lg_find_cycles(rec_lockgraph_order_edge *edges, size_t ne, size_t nv,
			      rec_lg_cycles *out)
{
	if (!nv || !ne)
		return REC_OK;
	rec_status st = REC_OK;
	size_t *adj = calloc(nv + 1, sizeof *adj);
	size_t *comp = malloc(nv * sizeof *comp);
	size_t *comp_size = malloc(nv * sizeof *comp_size);
	size_t *prev_e = malloc(nv * sizeof *prev_e);
	size_t *queue = malloc(nv * sizeof *queue);
	size_t *seen = malloc(nv * sizeof *seen);
	size_t *path = malloc((nv + 1) * sizeof *path);
	size_t *rot = malloc((nv + 1) * sizeof *rot);
	cycle_key *keys = NULL;
	size_t nkeys = 0, ckeys = 0;
	size_t *idx = NULL; /* per cycle: len locks then len edges */
	size_t nidx = 0, cidx = 0;
	size_t work = 0;
	if (!adj || !comp || !comp_size || !prev_e || !queue || !seen || !path || !rot) {
		st = REC_ERR_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < ne; i++)
		adj[edges[i].from + 1]++;
	for (size_t v = 0; v < nv; v++)
		adj[v + 1] += adj[v];
	st = tarjan(nv, adj, edges, comp, comp_size);
	if (st != REC_OK)
		goto out;
	for (size_t v = 0; v < nv; v++)
		seen[v] = SIZE_MAX;
	for (size_t ei = 0; ei < ne; ei++) {
		rec_lockgraph_order_edge *e = &edges[ei];
		if (e->from == e->to || comp[e->from] != comp[e->to] || comp_size[comp[e->from]] < 2)
			continue;
		if (e->in_cycle)
			continue; /* already on a listed cycle */
		e->in_cycle = true;
		if (nkeys >= MAX_CYCLES || work > MAX_CYCLE_WORK) {
			out->truncated = true;
			continue;
		}
		/* BFS from e->to to e->from inside the component. */
		size_t u = e->from, c = comp[u], qh = 0, qt = 0;
		queue[qt++] = e->to;
		seen[e->to] = ei;
		prev_e[e->to] = SIZE_MAX;
		bool found = e->to == u;
		while (qh < qt && !found) {
			size_t x = queue[qh++];
			work += adj[x + 1] - adj[x];
			for (size_t k = adj[x]; k < adj[x + 1]; k++) {
				size_t y = edges[k].to;
				if (comp[y] != c || seen[y] == ei)
					continue;
				seen[y] = ei;
				prev_e[y] = k;
				if (y == u) {
					found = true;
					break;
				}
				queue[qt++] = y;
			}
		}
		if (!found)
			continue; /* cannot happen inside an SCC */
		/* path of edges: ei, then v ~> u reversed from prev_e */
		size_t len = 0;
		for (size_t x = u; prev_e[x] != SIZE_MAX; x = edges[prev_e[x]].from)
			path[len++] = prev_e[x];
		path[len++] = ei;
		/* reverse to forward order starting with ei */
		for (size_t i = 0; i < len / 2; i++) {
			size_t t = path[i];
			path[i] = path[len - 1 - i];
			path[len - 1 - i] = t;
		}
		/* rotate to the smallest from-lock */
		size_t best = 0;
		for (size_t i = 1; i < len; i++)
			if (edges[path[i]].from < edges[path[best]].from)
				best = i;
		uint64_t h = 1469598103934665603ull;
		for (size_t i = 0; i < len; i++) {
			rot[i] = path[(best + i) % len];
			h = (h ^ rot[i]) * 1099511628211ull;
		}
		bool dup = false;
		for (size_t k = 0; k < nkeys && !dup; k++)
			dup = keys[k].hash == h && keys[k].len == len &&
			      memcmp(idx + keys[k].start + len, rot, len * sizeof *rot) == 0;
		if (dup)
			continue;
		if (!rec_array_grow((void **)&keys, &ckeys, nkeys + 1, sizeof *keys, 64)) {
			st = REC_ERR_NOMEM;
			goto out;
		}
		while (nidx + 2 * len > cidx) {
			size_t nc = cidx ? cidx * 2 : 256;
			size_t *p = realloc(idx, nc * sizeof *p);
			if (!p) {
				st = REC_ERR_NOMEM;
				goto out;
			}
			idx = p;
			cidx = nc;
		}
		keys[nkeys].hash = h;
		keys[nkeys].start = nidx;
		keys[nkeys].len = len;
		nkeys++;
		for (size_t i = 0; i < len; i++) {
			idx[nidx + i] = edges[rot[i]].from;
			edges[rot[i]].in_cycle = true;
		}
		memcpy(idx + nidx + len, rot, len * sizeof *rot);
		nidx += 2 * len;
	}
	if (nkeys) {
		out->cycles = malloc(nkeys * sizeof *out->cycles);
		if (!out->cycles) {
			st = REC_ERR_NOMEM;
			goto out;
		}
		out->idx = idx;
		idx = NULL;
		for (size_t k = 0; k < nkeys; k++) {
			out->cycles[k].length = keys[k].len;
			out->cycles[k].locks = out->idx + keys[k].start;
			out->cycles[k].edges = out->idx + keys[k].start + keys[k].len;
		}
		out->count = nkeys;
	}
out:
	free(adj);
	free(comp);
	free(comp_size);
	free(prev_e);
	free(queue);
	free(seen);
	free(path);
	free(rot);
	free(keys);
	free(idx);
	return st;
}
