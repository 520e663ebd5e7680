/* SPDX-License-Identifier: MIT */
/*
 * lock_graph.c - the wait-for graph and the lock-order graph of a recording
 * (rec.LockWait, rec.LockOrder); the cycles of the lock-order graph are
 * found by lock_cycles.c.  See rec/lock_graph.h.  Uses only the public reader API; events are aggregated into
 * hash maps as they come, so memory follows distinct locks, threads and
 * edges, not events.
 */
#include "rec/analysis.h"
#include "rec/lock_attrib.h"
#include "rec/lock_graph.h"
#include "common/common_internal.h"
#include "lock_cycles.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INDEX (1u << 30)
#define MAX_EXAMPLES 16u

/* ---- u64 -> index map (open addressing) --------------------------------------- */

typedef struct map_slot {
	uint64_t key;
	uint32_t idx; /* index + 1; 0 = empty */
} map_slot;

typedef struct map {
	map_slot *slots;
	size_t cap, n; /* cap: power of two */
} map;

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* Index of key, or UINT32_MAX if absent. */
static uint32_t map_find(const map *m, uint64_t key)
{
	if (!m->cap)
		return UINT32_MAX;
	size_t mask = m->cap - 1;
	for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
		if (!m->slots[i].idx)
			return UINT32_MAX;
		if (m->slots[i].key == key)
			return m->slots[i].idx - 1;
	}
}

static bool map_grow(map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	map_slot *s = calloc(cap, sizeof *s);
	if (!s)
		return false;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->slots[i].idx)
			continue;
		size_t j = mix64(m->slots[i].key) & (cap - 1);
		while (s[j].idx)
			j = (j + 1) & (cap - 1);
		s[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = s;
	m->cap = cap;
	return true;
}

/* Insert a key known to be absent. */
static bool map_put(map *m, uint64_t key, uint32_t idx)
{
	if ((m->n + 1) * 4 > m->cap * 3 && !map_grow(m))
		return false;
	size_t mask = m->cap - 1;
	size_t i = mix64(key) & mask;
	while (m->slots[i].idx)
		i = (i + 1) & mask;
	m->slots[i].key = key;
	m->slots[i].idx = idx + 1;
	m->n++;
	return true;
}

/* ---- aggregated state ----------------------------------------------------------- */

typedef struct lg_thread {
	uint64_t tid;
	const char *name; /* arena or "" */
} lg_thread;

typedef struct lg_lock {
	uint64_t addr;
	const char *name; /* program's name, arena or "" */
	const char *site; /* arena or "" */
	uint64_t wait_count;
	int64_t wait_total, wait_max;
	uint64_t events;
} lg_lock;

typedef struct lg_wedge {
	uint32_t thread, lock;
	bool holder;
	uint64_t count;
	int64_t total, max;
} lg_wedge;

/* A stack, interned by (run, stack pool id): its frames as text, each text
 * interned too, so memory follows distinct stacks and frames. */
typedef struct lg_stack {
	uint64_t run_id, id;
	uint32_t depth;
	const char *const *frames;
} lg_stack;

/* Examples of an order edge: a list through a shared array. */
typedef struct lg_example {
	uint32_t thread;
	uint32_t stack; /* index into stacks, UINT32_MAX = none */
	uint32_t next;  /* next example of the edge, UINT32_MAX = end */
} lg_example;

typedef struct lg_oedge {
	uint32_t from, to;
	uint64_t count;
	uint32_t nex, ex_head, ex_tail;
} lg_oedge;

/* Field positions of one event type in one chunk. */
typedef struct type_cache {
	const rec_type *type;
	uint64_t chunk_offset, run_id;
	uint32_t chunk_seq;
	int kind; /* 0 other, 1 LockWait, 2 LockOrder */
	int f[4]; /* LockWait: address, name, holder; LockOrder: heldAddr, heldName, acqAddr, acqName */
} type_cache;

struct rec_lockgraph {
	rec_lockgraph_options opt;
	char *thread_pat;
	uint32_t graphs;     /* REC_LOCKGRAPH_WAIT | REC_LOCKGRAPH_ORDER */
	rec_arena strings;       /* names, sites, frames: live as long as the graph */
	lg_thread *threads;
	size_t nthreads, cthreads;
	map thread_map;
	lg_lock *locks;
	size_t nlocks, clocks;
	map lock_map;
	lg_wedge *wedges;
	size_t nwedges, cwedges;
	map wedge_map;
	lg_oedge *oedges;
	size_t noedges, coedges;
	map oedge_map;
	lg_example *examples;
	size_t nexamples, cexamples;
	lg_stack *stacks;
	size_t nstacks, cstacks;
	map stack_map;
	const char **ftexts;  /* interned frame texts */
	size_t nftexts, cftexts;
	map ftext_map;         /* hash of text -> index into ftexts */
	type_cache tc[8];
	struct {               /* reader thread -> index, per chunk */
		const rec_thread *ptr;
		uint64_t chunk;
		uint32_t idx;
	} tcache[256];
	uint64_t wait_events, order_events;
	/* every rec.LockWait (the ones filtered out too, as hand-offs): the
	 * holder edges are its parts (rec/lock_attrib.h), made in get */
	rec_lockattrib *attrib;
	/* result */
	rec_arena rstrings;
	rec_lockgraph_result res;
	rec_lockgraph_lock *rlocks;
	rec_lockgraph_thread *rthreads;
	rec_lockgraph_wait_edge *rwedges;
	rec_lockgraph_order_edge *roedges;
	rec_lockgraph_example *rexamples;
	rec_lockgraph_cycle *rcycles;
	size_t *rcycle_idx;
	char errmsg[REC_ERRMSG_SIZE];
};

static rec_status nomem(rec_lockgraph *g)
{
	return rec_errorf(g->errmsg, REC_ERR_NOMEM, "out of memory");
}

const char *rec_lockgraph_errmsg(const rec_lockgraph *g)
{
	return g ? g->errmsg : "no lock graph";
}

rec_status rec_lockgraph_open(rec_lockgraph **out, const rec_lockgraph_options *opts)
{
	if (!out)
		return REC_ERR_INVALID_ARG;
	*out = NULL;
	rec_lockgraph_options def = REC_LOCKGRAPH_OPTIONS_INIT;
	if (opts) {
		if (opts->struct_size != sizeof *opts)
			return REC_ERR_INVALID_ARG;
		for (size_t i = 0; i < sizeof opts->reserved / sizeof opts->reserved[0]; i++)
			if (opts->reserved[i])
				return REC_ERR_INVALID_ARG;
		if (opts->min_wait_ns < 0 ||
		    (opts->graphs & ~(uint32_t)(REC_LOCKGRAPH_WAIT | REC_LOCKGRAPH_ORDER)))
			return REC_ERR_INVALID_ARG;
		def = *opts;
	}
	rec_lockgraph *g = calloc(1, sizeof *g);
	if (!g)
		return REC_ERR_NOMEM;
	g->opt = def;
	if (def.thread) {
		g->thread_pat = strdup(def.thread);
		if (!g->thread_pat) {
			free(g);
			return REC_ERR_NOMEM;
		}
	}
	g->opt.thread = g->thread_pat;
	g->graphs = def.graphs ? def.graphs : REC_LOCKGRAPH_WAIT | REC_LOCKGRAPH_ORDER;
	if (rec_lockattrib_open(&g->attrib) != REC_OK) {
		free(g->thread_pat);
		free(g);
		return REC_ERR_NOMEM;
	}
	*out = g;
	return REC_OK;
}

static void free_result(rec_lockgraph *g)
{
	free(g->rlocks);
	free(g->rthreads);
	free(g->rwedges);
	free(g->roedges);
	free(g->rexamples);
	free(g->rcycles);
	free(g->rcycle_idx);
	g->rlocks = NULL;
	g->rthreads = NULL;
	g->rwedges = NULL;
	g->roedges = NULL;
	g->rexamples = NULL;
	g->rcycles = NULL;
	g->rcycle_idx = NULL;
	rec_arena_free(&g->rstrings);
	memset(&g->res, 0, sizeof g->res);
}

void rec_lockgraph_close(rec_lockgraph *g)
{
	if (!g)
		return;
	free_result(g);
	rec_arena_free(&g->strings);
	free(g->threads);
	free(g->locks);
	free(g->wedges);
	free(g->oedges);
	free(g->examples);
	free(g->stacks);
	free(g->ftexts);
	free(g->stack_map.slots);
	free(g->ftext_map.slots);
	free(g->thread_map.slots);
	free(g->lock_map.slots);
	free(g->wedge_map.slots);
	free(g->oedge_map.slots);
	free(g->thread_pat);
	rec_lockattrib_close(g->attrib);
	free(g);
}

/* Grow an array of elements of size sz to hold n + 1. */
static bool grow(void **arr, size_t *cap, size_t n, size_t sz)
{
	return rec_array_grow(arr, cap, n + 1, sz, 64);
}

/* ---- events ---------------------------------------------------------------------- */

static const type_cache *lookup_type(rec_lockgraph *g, const rec_event *ev)
{
	const rec_chunk_info *c = ev->chunk;
	size_t slot = ((uintptr_t)ev->type >> 4) & 7u;
	type_cache *t = &g->tc[slot];
	if (t->type == ev->type && t->chunk_offset == c->offset && t->run_id == c->run_id &&
	    t->chunk_seq == c->sequence)
		return t;
	memset(t, 0, sizeof *t);
	t->type = ev->type;
	t->chunk_offset = c->offset;
	t->run_id = c->run_id;
	t->chunk_seq = c->sequence;
	for (int i = 0; i < 4; i++)
		t->f[i] = -1;
	const rec_type *ty = ev->type;
	static const char *const wait_f[4] = { "lockAddress", "lockName", "holderOsThreadId", NULL };
	static const char *const order_f[4] = { "heldAddress", "heldName", "acquiredAddress", "acquiredName" };
	static const uint32_t wait_t[4] = { REC_TYPE_U64, REC_TYPE_STRING, REC_TYPE_U64, 0 };
	static const uint32_t order_t[4] = { REC_TYPE_U64, REC_TYPE_STRING, REC_TYPE_U64, REC_TYPE_STRING };
	const char *const *names;
	const uint32_t *types;
	if (ty->name && strcmp(ty->name, "rec.LockWait") == 0) {
		t->kind = 1;
		names = wait_f;
		types = wait_t;
	} else if (ty->name && strcmp(ty->name, "rec.LockOrder") == 0) {
		t->kind = 2;
		names = order_f;
		types = order_t;
	} else {
		return t;
	}
	for (uint32_t i = 0; i < ty->field_count; i++) {
		for (int k = 0; k < 4; k++) {
			if (names[k] && ty->fields[i].name && strcmp(ty->fields[i].name, names[k]) == 0 &&
			    ty->fields[i].type == types[k])
				t->f[k] = (int)i;
		}
	}
	return t;
}

static bool value_u64(const rec_event *ev, int f, uint64_t *out)
{
	if (f < 0 || (uint32_t)f >= ev->value_count || !ev->values[f].present)
		return false;
	*out = ev->values[f].v.u;
	return true;
}

static bool value_str(const rec_event *ev, int f, const char **p, size_t *n)
{
	if (f < 0 || (uint32_t)f >= ev->value_count || !ev->values[f].present ||
	    !ev->values[f].v.s.ptr)
		return false;
	*p = ev->values[f].v.s.ptr;
	*n = ev->values[f].v.s.len;
	return true;
}

static bool thread_selected(const rec_lockgraph *g, const rec_thread *t)
{
	return rec_thread_selected(g->thread_pat, t);
}

/* Index of the thread with OS tid; created if new.  name may be NULL. */
static rec_status get_thread(rec_lockgraph *g, uint64_t tid, const char *name, uint32_t *out)
{
	*out = UINT32_MAX; /* also on failure: callers read it only after REC_OK */
	uint32_t i = map_find(&g->thread_map, tid);
	if (i == UINT32_MAX) {
		if (g->nthreads >= MAX_INDEX)
			return rec_errorf(g->errmsg, REC_ERR_LIMIT,
					  "more than %u threads", MAX_INDEX);
		if (!grow((void **)&g->threads, &g->cthreads, g->nthreads, sizeof *g->threads))
			return nomem(g);
		i = (uint32_t)g->nthreads;
		if (!map_put(&g->thread_map, tid, i))
			return nomem(g);
		g->threads[i].tid = tid;
		g->threads[i].name = "";
		g->nthreads++;
	}
	lg_thread *t = &g->threads[i];
	if (name && *name && strcmp(t->name, name) != 0) {
		char *p = rec_arena_strndup(&g->strings, name, strlen(name));
		if (!p)
			return nomem(g);
		t->name = p;
	}
	*out = i;
	return REC_OK;
}

/* Whether name is just "0x<addr>" (what the recorder writes for an unnamed lock). */
static bool is_address_name(const char *s, size_t n, uint64_t addr)
{
	char buf[24];
	int k = snprintf(buf, sizeof buf, "0x%" PRIx64, addr);
	return n == 0 || (k > 0 && (size_t)k == n && memcmp(buf, s, n) == 0);
}

static rec_status get_lock(rec_lockgraph *g, uint64_t addr, const char *name, size_t name_len,
			   uint32_t *out)
{
	*out = UINT32_MAX; /* also on failure: callers read it only after REC_OK */
	uint32_t i = map_find(&g->lock_map, addr);
	if (i == UINT32_MAX) {
		if (g->nlocks >= MAX_INDEX)
			return rec_errorf(g->errmsg, REC_ERR_LIMIT,
					  "more than %u locks", MAX_INDEX);
		if (!grow((void **)&g->locks, &g->clocks, g->nlocks, sizeof *g->locks))
			return nomem(g);
		i = (uint32_t)g->nlocks;
		if (!map_put(&g->lock_map, addr, i))
			return nomem(g);
		memset(&g->locks[i], 0, sizeof g->locks[i]);
		g->locks[i].addr = addr;
		g->locks[i].name = "";
		g->locks[i].site = "";
		g->nlocks++;
	}
	lg_lock *l = &g->locks[i];
	if (name && !*l->name && !is_address_name(name, name_len, addr)) {
		char *p = rec_arena_strndup(&g->strings, name, name_len);
		if (!p)
			return nomem(g);
		l->name = p;
	}
	l->events++;
	*out = i;
	return REC_OK;
}

/* An interned copy of p[0..n) (NULL if out of memory). */
static const char *intern_text(rec_lockgraph *g, const char *p, size_t n)
{
	uint64_t h = rec_fnv1a(REC_NAME_HASH_SEED, p, n);
	uint32_t i = map_find(&g->ftext_map, h);
	if (i != UINT32_MAX && strlen(g->ftexts[i]) == n && memcmp(g->ftexts[i], p, n) == 0)
		return g->ftexts[i];
	char *c = rec_arena_strndup(&g->strings, p, n);
	if (!c)
		return NULL;
	if (i == UINT32_MAX) { /* (a hash collision keeps its own copy, unindexed) */
		if (!grow((void **)&g->ftexts, &g->cftexts, g->nftexts, sizeof *g->ftexts) ||
		    !map_put(&g->ftext_map, h, (uint32_t)g->nftexts))
			return NULL;
		g->ftexts[g->nftexts++] = c;
	}
	return c;
}

/* A frame as (interned) text. */
static const char *frame_text(rec_lockgraph *g, const rec_frame *fr)
{
	if (!fr)
		return "?";
	char buf[4096];
	size_t n = rec_frame_format(fr, REC_FRAME_FUNCTION, buf, sizeof buf);
	return intern_text(g, buf, n);
}

/* Index of the interned copy of the event's stack (UINT32_MAX with *st set
 * on failure, or for no stack with *st = REC_OK). */
static uint32_t intern_stack(rec_lockgraph *g, const rec_event *ev, rec_status *st)
{
	const rec_stack *stk = ev->stack;
	*st = REC_OK;
	if (!stk || !stk->depth || !stk->frames)
		return UINT32_MAX;
	uint64_t run = ev->chunk->run_id;
	uint64_t key = mix64(run) ^ stk->id;
	uint32_t i = map_find(&g->stack_map, key);
	if (i != UINT32_MAX && g->stacks[i].run_id == run && g->stacks[i].id == stk->id)
		return i;
	/* from the call site on (an old recording's librec frames left out) */
	const uint32_t site = rec_stack_site(stk), depth = stk->depth - site;
	const char **fr = rec_arena_alloc(&g->strings, depth * sizeof *fr);
	if (!fr) {
		*st = nomem(g);
		return UINT32_MAX;
	}
	for (uint32_t k = 0; k < depth; k++) {
		fr[k] = frame_text(g, stk->frames[site + k]);
		if (!fr[k]) {
			*st = nomem(g);
			return UINT32_MAX;
		}
	}
	if (g->nstacks >= MAX_INDEX) {
		*st = rec_errorf(g->errmsg, REC_ERR_LIMIT, "more than %u stacks", MAX_INDEX);
		return UINT32_MAX;
	}
	if (!grow((void **)&g->stacks, &g->cstacks, g->nstacks, sizeof *g->stacks)) {
		*st = nomem(g);
		return UINT32_MAX;
	}
	uint32_t idx = (uint32_t)g->nstacks++;
	g->stacks[idx].run_id = run;
	g->stacks[idx].id = stk->id;
	g->stacks[idx].depth = depth;
	g->stacks[idx].frames = fr;
	if (i == UINT32_MAX && !map_put(&g->stack_map, key, idx)) {
		*st = nomem(g);
		return UINT32_MAX;
	}
	return idx;
}

/* The call site (rec_stack_site): where the lock was taken. */
static void note_site(rec_lockgraph *g, uint32_t lock, const rec_stack *st)
{
	lg_lock *l = &g->locks[lock];
	if (*l->site || !st || !st->depth || !st->frames)
		return;
	const char *s = frame_text(g, st->frames[rec_stack_site(st)]);
	if (s)
		l->site = s;
}

static rec_status add_wait_edge(rec_lockgraph *g, uint32_t thread, uint32_t lock, bool holder,
				int64_t d)
{
	uint64_t key = ((uint64_t)thread << 33) | ((uint64_t)lock << 1) | (holder ? 1u : 0u);
	uint32_t i = map_find(&g->wedge_map, key);
	if (i == UINT32_MAX) {
		if (!grow((void **)&g->wedges, &g->cwedges, g->nwedges, sizeof *g->wedges))
			return nomem(g);
		i = (uint32_t)g->nwedges;
		if (!map_put(&g->wedge_map, key, i))
			return nomem(g);
		memset(&g->wedges[i], 0, sizeof g->wedges[i]);
		g->wedges[i].thread = thread;
		g->wedges[i].lock = lock;
		g->wedges[i].holder = holder;
		g->nwedges++;
	}
	lg_wedge *e = &g->wedges[i];
	e->count++;
	e->total += d;
	if (d > e->max)
		e->max = d;
	return REC_OK;
}

/* A rec.LockWait for the attribution: counted (its parts are charged), or
 * only a hand-off to its waiter (a wait the filters leave out). */
static rec_status note_wait(rec_lockgraph *g, const rec_event *ev, const type_cache *t,
			    bool counted)
{
	uint64_t addr, holder = 0;
	if (!(g->graphs & REC_LOCKGRAPH_WAIT) || !ev->thread || !value_u64(ev, t->f[0], &addr))
		return REC_OK;
	(void)value_u64(ev, t->f[2], &holder);
	int64_t d = ev->duration_ns > 0 ? ev->duration_ns : 0;
	rec_lockattrib_wait w = { addr, ev->thread->os_tid, holder, ev->wall_ns, ev->wall_ns + d,
				  0, counted };
	rec_status st = rec_lockattrib_add(g->attrib, &w);
	return st == REC_OK ? REC_OK : nomem(g);
}

static rec_status add_lock_wait(rec_lockgraph *g, const rec_event *ev, const type_cache *t,
				uint32_t thread)
{
	uint64_t addr;
	if (!value_u64(ev, t->f[0], &addr))
		return REC_OK;
	int64_t d = ev->duration_ns > 0 ? ev->duration_ns : 0;
	if (d < g->opt.min_wait_ns)
		return note_wait(g, ev, t, false);
	const char *name = NULL;
	size_t name_len = 0;
	(void)value_str(ev, t->f[1], &name, &name_len);
	uint32_t lock;
	rec_status st = get_lock(g, addr, name, name_len, &lock);
	if (st != REC_OK)
		return st;
	note_site(g, lock, ev->stack);
	lg_lock *l = &g->locks[lock];
	l->wait_count++;
	l->wait_total += d;
	if (d > l->wait_max)
		l->wait_max = d;
	if (!(g->graphs & REC_LOCKGRAPH_WAIT)) {
		g->wait_events++;
		return REC_OK; /* the lock's totals rank it; no edges */
	}
	/* the waiter's edge now; the holders' edges in get, from the parts */
	st = add_wait_edge(g, thread, lock, false, d);
	if (st == REC_OK)
		st = note_wait(g, ev, t, ev->thread != NULL);
	if (st == REC_OK)
		g->wait_events++;
	return st;
}

/* The holder edges (lock -> thread) from the attribution's parts: each part
 * of a wait weighs on the thread that held the lock during it.  Made anew
 * on every get. */
static rec_status holder_edges(rec_lockgraph *g)
{
	for (size_t i = 0; i < g->nwedges; i++) {
		if (g->wedges[i].holder) {
			g->wedges[i].count = 0;
			g->wedges[i].total = 0;
			g->wedges[i].max = 0;
		}
	}
	if (!(g->graphs & REC_LOCKGRAPH_WAIT))
		return REC_OK;
	if (rec_lockattrib_finish(g->attrib) != REC_OK)
		return nomem(g);
	rec_lockattrib_rewind(g->attrib);
	rec_lockattrib_part p;
	rec_status st;
	while ((st = rec_lockattrib_next(g->attrib, &p)) == REC_OK) {
		/* holder 0 (not known): the thread node of tid 0, "(holder
		 * unknown)", so that the holder edges add up to the waits */
		uint32_t lock = map_find(&g->lock_map, p.lock), hthread;
		if (lock == UINT32_MAX)
			continue;
		st = get_thread(g, p.holder, NULL, &hthread);
		if (st == REC_OK)
			st = add_wait_edge(g, hthread, lock, true, p.end_ns - p.start_ns);
		if (st != REC_OK)
			return st;
	}
	return st == REC_END ? REC_OK : nomem(g);
}

static rec_status add_example(rec_lockgraph *g, lg_oedge *e, uint32_t thread, const rec_event *ev)
{
	for (uint32_t k = e->ex_head; k != UINT32_MAX; k = g->examples[k].next)
		if (g->examples[k].thread == thread)
			return REC_OK;
	if (e->nex >= MAX_EXAMPLES)
		return REC_OK;
	rec_status st;
	uint32_t stack = intern_stack(g, ev, &st);
	if (st != REC_OK)
		return st;
	if (g->nexamples >= MAX_INDEX)
		return rec_errorf(g->errmsg, REC_ERR_LIMIT,
				  "more than %u lock-order examples", MAX_INDEX);
	if (!grow((void **)&g->examples, &g->cexamples, g->nexamples, sizeof *g->examples))
		return nomem(g);
	uint32_t x = (uint32_t)g->nexamples++;
	g->examples[x].thread = thread;
	g->examples[x].stack = stack;
	g->examples[x].next = UINT32_MAX;
	if (e->ex_head == UINT32_MAX)
		e->ex_head = x;
	else
		g->examples[e->ex_tail].next = x;
	e->ex_tail = x;
	e->nex++;
	return REC_OK;
}

static rec_status add_lock_order(rec_lockgraph *g, const rec_event *ev, const type_cache *t,
				 uint32_t thread)
{
	uint64_t ha, aa;
	if (!value_u64(ev, t->f[0], &ha) || !value_u64(ev, t->f[2], &aa))
		return REC_OK;
	const char *hn = NULL, *an = NULL;
	size_t hl = 0, al = 0;
	(void)value_str(ev, t->f[1], &hn, &hl);
	(void)value_str(ev, t->f[3], &an, &al);
	uint32_t from, to;
	rec_status st = get_lock(g, ha, hn, hl, &from);
	if (st == REC_OK)
		st = get_lock(g, aa, an, al, &to);
	if (st != REC_OK)
		return st;
	note_site(g, to, ev->stack);
	uint64_t key = ((uint64_t)from << 32) | to;
	uint32_t i = map_find(&g->oedge_map, key);
	if (i == UINT32_MAX) {
		if (!grow((void **)&g->oedges, &g->coedges, g->noedges, sizeof *g->oedges))
			return nomem(g);
		i = (uint32_t)g->noedges;
		if (!map_put(&g->oedge_map, key, i))
			return nomem(g);
		lg_oedge *e = &g->oedges[i];
		e->from = from;
		e->to = to;
		e->count = 0;
		e->nex = 0;
		e->ex_head = e->ex_tail = UINT32_MAX;
		g->noedges++;
	}
	lg_oedge *e = &g->oedges[i];
	e->count++;
	st = add_example(g, e, thread, ev);
	if (st == REC_OK)
		g->order_events++;
	return st;
}

rec_status rec_lockgraph_add_event(rec_lockgraph *g, const rec_event *ev)
{
	if (!g || !ev || !ev->type || !ev->chunk)
		return REC_ERR_INVALID_ARG;
	/* Any event teaches a thread's name (holders may never wait themselves). */
	uint32_t thread = UINT32_MAX;
	if (ev->thread) {
		size_t h = ((uintptr_t)ev->thread >> 4) & 255u;
		if (g->tcache[h].ptr == ev->thread && g->tcache[h].chunk == ev->chunk->offset &&
		    g->threads[g->tcache[h].idx].tid == ev->thread->os_tid) {
			thread = g->tcache[h].idx;
		} else {
			rec_status st = get_thread(g, ev->thread->os_tid, ev->thread->name, &thread);
			if (st != REC_OK)
				return st;
			g->tcache[h].ptr = ev->thread;
			g->tcache[h].chunk = ev->chunk->offset;
			g->tcache[h].idx = thread;
		}
	}
	const type_cache *t = lookup_type(g, ev);
	if (!t->kind || (t->kind == 2 && !(g->graphs & REC_LOCKGRAPH_ORDER)))
		return REC_OK;
	if ((g->opt.from_wall_ns && ev->wall_ns < g->opt.from_wall_ns) ||
	    (g->opt.to_wall_ns && ev->wall_ns >= g->opt.to_wall_ns) ||
	    !thread_selected(g, ev->thread))
		return t->kind == 1 ? note_wait(g, ev, t, false) : REC_OK;
	if (thread == UINT32_MAX) {
		rec_status st = get_thread(g, 0, NULL, &thread);
		if (st != REC_OK)
			return st;
	}
	return t->kind == 1 ? add_lock_wait(g, ev, t, thread) : add_lock_order(g, ev, t, thread);
}

/* ---- result ------------------------------------------------------------------------ */

/* Whether an edge is in the result: a wait edge with waits on a kept lock
 * (lmap: old lock index -> new, UINT32_MAX for a lock left out), an order
 * edge between two kept locks. */
static inline bool wedge_kept(const lg_wedge *e, const uint32_t *lmap)
{
	return e->count && lmap[e->lock] != UINT32_MAX;
}

static inline bool oedge_kept(const lg_oedge *e, const uint32_t *lmap)
{
	return lmap[e->from] != UINT32_MAX && lmap[e->to] != UINT32_MAX;
}

typedef struct lock_rank {
	int64_t total;
	uint64_t events, addr;
	uint32_t idx;
} lock_rank;

static int cmp_lock_rank(const void *a, const void *b)
{
	const lock_rank *x = a, *y = b;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->events != y->events)
		return x->events > y->events ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_thread_rank(const void *a, const void *b)
{
	const rec_lockgraph_thread *x = a, *y = b;
	if (x->wait_total_ns != y->wait_total_ns)
		return x->wait_total_ns > y->wait_total_ns ? -1 : 1;
	if (x->held_total_ns != y->held_total_ns)
		return x->held_total_ns > y->held_total_ns ? -1 : 1;
	return x->os_tid < y->os_tid ? -1 : x->os_tid > y->os_tid;
}

static int cmp_wedge(const void *a, const void *b)
{
	const rec_lockgraph_wait_edge *x = a, *y = b;
	if (x->lock != y->lock)
		return x->lock < y->lock ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return (int)x->holder - (int)y->holder;
}

static int cmp_oedge(const void *a, const void *b)
{
	const rec_lockgraph_order_edge *x = a, *y = b;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

static int cmp_str_ptr(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	return strcmp(x, y);
}

static const char *rprintf(rec_lockgraph *g, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
static const char *rprintf(rec_lockgraph *g, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *p = rec_arena_alloc(&g->rstrings, (size_t)n + 1);
	if (!p)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

/* Make lock labels unique among themselves and against thread labels. */
static rec_status unique_labels(rec_lockgraph *g)
{
	size_t n = g->res.lock_count + g->res.thread_count;
	if (!n)
		return REC_OK;
	const char **v = malloc(n * sizeof *v);
	if (!v)
		return nomem(g);
	size_t k = 0;
	for (size_t i = 0; i < g->res.lock_count; i++)
		v[k++] = g->rlocks[i].label;
	for (size_t i = 0; i < g->res.thread_count; i++)
		v[k++] = g->rthreads[i].label;
	qsort(v, n, sizeof *v, cmp_str_ptr);
	rec_status st = REC_OK;
	for (size_t i = 0; i < g->res.lock_count && st == REC_OK; i++) {
		rec_lockgraph_lock *l = &g->rlocks[i];
		const char **hit = bsearch(&l->label, v, n, sizeof *v, cmp_str_ptr);
		bool dup = hit && ((hit > v && strcmp(hit[-1], l->label) == 0) ||
				   (hit + 1 < v + n && strcmp(hit[1], l->label) == 0));
		if (dup) {
			const char *s = rprintf(g, "%s @0x%" PRIx64, l->label, l->address);
			if (!s)
				st = nomem(g);
			else
				l->label = s;
		}
	}
	free(v);
	return st;
}

/* ---- options.group ------------------------------------------------------------------ */

static int cmp_wedge_heavy(const void *a, const void *b)
{
	const rec_lockgraph_wait_edge *x = a, *y = b;
	if (x->holder != y->holder)
		return (int)x->holder - (int)y->holder;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* Sum e into the group edge *sum (members counted by the caller). */
static void sum_edge(rec_lockgraph_wait_edge *sum, uint64_t count, int64_t total, int64_t max)
{
	sum->count += count;
	sum->total_ns += total;
	if (max > sum->max_ns)
		sum->max_ns = max;
}

/* A group node for `members` threads with one edge *e (thread index set here). */
static rec_status add_group_thread(rec_lockgraph *g, rec_lockgraph_thread *threads, size_t *nt,
				   rec_lockgraph_wait_edge *e, uint64_t members, const char *lock)
{
	rec_lockgraph_thread *t = &threads[*nt];
	memset(t, 0, sizeof *t);
	t->name = "";
	t->grouped = members;
	t->label = rprintf(g, "%" PRIu64 " other %s of %s", members,
			   e->holder ? (members == 1 ? "holder" : "holders")
				     : (members == 1 ? "waiter" : "waiters"), lock);
	if (!t->label)
		return nomem(g);
	if (e->holder) {
		t->held_total_ns = e->total_ns;
	} else {
		t->wait_count = e->count;
		t->wait_total_ns = e->total_ns;
	}
	e->thread = (*nt)++;
	return REC_OK;
}

/* options.group (see rec/lock_graph.h): the result's wait edges, threads
 * and locks made anew.  lmap/tmap: internal lock/thread -> result index. */
static rec_status group_wait(rec_lockgraph *g, const uint32_t *lmap, const uint32_t *tmap)
{
	const size_t n = g->res.wait_edge_count, nt = g->res.thread_count, nl = g->res.lock_count;
	const size_t keep_per = g->opt.group;
	rec_lockgraph_wait_edge *e = g->rwedges;
	/* at most 2 group edges per kept lock and 2 for the left-out locks */
	size_t cap = n + 2 * nl + 2;
	rec_lockgraph_wait_edge *ne = calloc(cap, sizeof *ne);
	rec_lockgraph_thread *nth = calloc(nt + 2 * nl + 2, sizeof *nth);
	rec_lockgraph_lock *nlk = calloc(nl + 1, sizeof *nlk);
	size_t *tnew = malloc((nt ? nt : 1) * sizeof *tnew);
	bool *seen = calloc(g->nthreads + 1, 2 * sizeof *seen); /* [2 * thread + holder] */
	bool *stay = calloc(nt + 1, sizeof *stay);
	rec_status st = REC_OK;
	if (!ne || !nth || !nlk || !tnew || !seen || !stay) {
		st = nomem(g);
		goto done;
	}
	/* per lock: waiters then holders, heaviest first; the rest summed */
	size_t m = 0;
	rec_lockgraph_wait_edge *gsum = calloc(2 * nl + 2, sizeof *gsum);
	uint64_t *gmem = calloc(2 * nl + 2, sizeof *gmem);
	if (!gsum || !gmem) {
		free(gsum);
		free(gmem);
		st = nomem(g);
		goto done;
	}
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && e[j].lock == e[i].lock)
			j++;
		qsort(e + i, j - i, sizeof *e, cmp_wedge_heavy);
		size_t rank[2] = { 0, 0 };
		for (size_t k = i; k < j; k++) {
			int h = e[k].holder;
			if (rank[h]++ < keep_per) {
				ne[m++] = e[k];
				continue;
			}
			rec_lockgraph_wait_edge *s = &gsum[2 * e[k].lock + (size_t)h];
			s->lock = e[k].lock;
			s->holder = e[k].holder;
			sum_edge(s, e[k].count, e[k].total_ns, e[k].max_ns);
			gmem[2 * e[k].lock + (size_t)h]++;
		}
		i = j;
	}
	/* threads that keep an edge, or an order example, stay (in their order) */
	for (size_t i = 0; i < m; i++)
		stay[ne[i].thread] = true;
	for (size_t i = 0; i < g->res.order_edge_count; i++)
		for (size_t k = 0; k < g->roedges[i].example_count; k++)
			stay[g->roedges[i].examples[k].thread] = true;
	size_t ntk = 0;
	for (size_t i = 0; i < nt; i++) {
		tnew[i] = SIZE_MAX;
		if (stay[i]) {
			tnew[i] = ntk;
			nth[ntk++] = g->rthreads[i];
		}
	}
	g->res.threads_grouped = nt - ntk;
	for (size_t i = 0; i < m; i++)
		ne[i].thread = tnew[ne[i].thread];
	for (size_t i = 0; i < g->res.order_edge_count; i++)
		for (size_t k = 0; k < g->roedges[i].example_count; k++) {
			rec_lockgraph_example *x = (rec_lockgraph_example *)&g->roedges[i].examples[k];
			x->thread = tnew[x->thread];
		}
	for (size_t i = 0; i < 2 * nl && st == REC_OK; i++) {
		if (!gmem[i])
			continue;
		ne[m] = gsum[i];
		st = add_group_thread(g, nth, &ntk, &ne[m], gmem[i], g->rlocks[gsum[i].lock].label);
		m++;
	}
	free(gsum);
	free(gmem);
	/* the locks top left out (with waits): one lock, one waiter and one holder group */
	memcpy(nlk, g->rlocks, nl * sizeof *nlk);
	size_t nlk_n = nl;
	if (st == REC_OK) {
		rec_lockgraph_lock *o = &nlk[nl];
		rec_lockgraph_wait_edge sum[2];
		uint64_t members[2] = { 0, 0 };
		memset(o, 0, sizeof *o);
		memset(sum, 0, sizeof sum);
		for (size_t i = 0; i < g->nlocks; i++) {
			const lg_lock *l = &g->locks[i];
			if (lmap[i] != UINT32_MAX || !l->wait_count)
				continue;
			o->grouped++;
			o->wait_count += l->wait_count;
			o->wait_total_ns += l->wait_total;
			if (l->wait_max > o->wait_max_ns)
				o->wait_max_ns = l->wait_max;
			o->events += l->events;
		}
		for (size_t i = 0; i < g->nwedges; i++) {
			const lg_wedge *w = &g->wedges[i];
			if (!w->count || lmap[w->lock] != UINT32_MAX)
				continue;
			int h = w->holder;
			sum[h].holder = w->holder;
			sum_edge(&sum[h], w->count, w->total, w->max);
			bool *mark = &seen[(size_t)w->thread * 2 + (size_t)h];
			if (!*mark) {
				*mark = true;
				members[h]++;
			}
		}
		if (o->grouped) {
			o->name = o->site = "";
			o->label = rprintf(g, "%" PRIu64 " other lock%s", o->grouped,
					   o->grouped == 1 ? "" : "s");
			if (!o->label)
				st = nomem(g);
			nlk_n++;
			for (int h = 0; h < 2 && st == REC_OK; h++) {
				if (!members[h])
					continue;
				ne[m] = sum[h];
				ne[m].lock = nl;
				st = add_group_thread(g, nth, &ntk, &ne[m], members[h], o->label);
				m++;
			}
			/* a thread whose only waits are on left-out locks */
			for (size_t i = 0; i < g->nthreads; i++)
				if ((seen[2 * i] || seen[2 * i + 1]) && tmap[i] == UINT32_MAX)
					g->res.threads_grouped++;
		}
	}
	if (st != REC_OK)
		goto done;
	qsort(ne, m, sizeof *ne, cmp_wedge);
	free(g->rwedges);
	free(g->rthreads);
	free(g->rlocks);
	g->rwedges = ne;
	g->rthreads = nth;
	g->rlocks = nlk;
	ne = NULL;
	nth = NULL;
	nlk = NULL;
	g->res.wait_edges = g->rwedges;
	g->res.wait_edge_count = m;
	g->res.threads = g->rthreads;
	g->res.thread_count = ntk;
	g->res.locks = g->rlocks;
	g->res.lock_count = nlk_n;
done:
	free(ne);
	free(nth);
	free(nlk);
	free(tnew);
	free(seen);
	free(stay);
	return st;
}

rec_status rec_lockgraph_get(rec_lockgraph *g, const rec_lockgraph_result **out)
{
	if (!g || !out)
		return REC_ERR_INVALID_ARG;
	*out = NULL;
	free_result(g);
	rec_status st = holder_edges(g);
	if (st != REC_OK)
		return st;
	size_t nl = g->nlocks, nt = g->nthreads;
	lock_rank *order = malloc((nl ? nl : 1) * sizeof *order);
	uint32_t *lmap = malloc((nl ? nl : 1) * sizeof *lmap);
	uint32_t *tmap = malloc((nt ? nt : 1) * sizeof *tmap);
	uint32_t *tback = malloc((nt ? nt : 1) * sizeof *tback);
	if (!order || !lmap || !tmap || !tback) {
		st = nomem(g);
		goto out;
	}
	/* rank the locks, keep the top N */
	for (size_t i = 0; i < nl; i++) {
		order[i].total = g->locks[i].wait_total;
		order[i].events = g->locks[i].events;
		order[i].addr = g->locks[i].addr;
		order[i].idx = (uint32_t)i;
	}
	qsort(order, nl, sizeof *order, cmp_lock_rank);
	for (size_t i = 0; i < nl; i++) {
		g->res.wait_total_ns += g->locks[i].wait_total;
		g->res.wait_lock_count += g->locks[i].wait_count > 0;
	}
	size_t keep = nl;
	if (g->opt.top && g->opt.top < keep)
		keep = g->opt.top;
	for (size_t i = 0; i < nl; i++)
		lmap[i] = UINT32_MAX;
	g->rlocks = calloc(keep ? keep : 1, sizeof *g->rlocks);
	if (!g->rlocks) {
		st = nomem(g);
		goto out;
	}
	for (size_t r = 0; r < keep; r++) {
		const lg_lock *l = &g->locks[order[r].idx];
		rec_lockgraph_lock *o = &g->rlocks[r];
		lmap[order[r].idx] = (uint32_t)r;
		o->address = l->addr;
		o->name = l->name;
		o->site = l->site;
		o->wait_count = l->wait_count;
		o->wait_total_ns = l->wait_total;
		o->wait_max_ns = l->wait_max;
		o->events = l->events;
		if (*l->name)
			o->label = l->name;
		else if (*l->site)
			o->label = rprintf(g, "0x%" PRIx64 " (%s)", l->addr, l->site);
		else
			o->label = rprintf(g, "0x%" PRIx64, l->addr);
		if (!o->label) {
			st = nomem(g);
			goto out;
		}
	}
	g->res.lock_count = keep;
	g->res.locks = g->rlocks;
	g->res.locks_dropped = nl - keep;
	for (size_t r = 0; r < keep; r++)
		g->res.kept_wait_total_ns += g->rlocks[r].wait_total_ns;

	/* threads used by kept edges */
	for (size_t i = 0; i < nt; i++)
		tmap[i] = UINT32_MAX;
	size_t ntk = 0;
	for (size_t i = 0; i < g->nwedges; i++) {
		const lg_wedge *e = &g->wedges[i];
		if (wedge_kept(e, lmap) && tmap[e->thread] == UINT32_MAX) {
			tmap[e->thread] = (uint32_t)ntk;
			tback[ntk++] = e->thread;
		}
	}
	for (size_t i = 0; i < g->noedges; i++) {
		const lg_oedge *e = &g->oedges[i];
		if (!oedge_kept(e, lmap))
			continue;
		for (uint32_t k = e->ex_head; k != UINT32_MAX; k = g->examples[k].next) {
			uint32_t t = g->examples[k].thread;
			if (tmap[t] == UINT32_MAX) {
				tmap[t] = (uint32_t)ntk;
				tback[ntk++] = t;
			}
		}
	}
	g->rthreads = calloc(ntk ? ntk : 1, sizeof *g->rthreads);
	if (!g->rthreads) {
		st = nomem(g);
		goto out;
	}
	for (size_t i = 0; i < ntk; i++) {
		const lg_thread *t = &g->threads[tback[i]];
		rec_lockgraph_thread *o = &g->rthreads[i];
		o->os_tid = t->tid;
		o->name = t->name;
		o->label = !t->tid   ? rprintf(g, "(holder unknown)")
			   : *t->name ? rprintf(g, "%s (tid %" PRIu64 ")", t->name, t->tid)
				      : rprintf(g, "tid %" PRIu64, t->tid);
		if (!o->label) {
			st = nomem(g);
			goto out;
		}
	}
	for (size_t i = 0; i < g->nwedges; i++) {
		const lg_wedge *e = &g->wedges[i];
		if (!wedge_kept(e, lmap))
			continue;
		rec_lockgraph_thread *o = &g->rthreads[tmap[e->thread]];
		if (e->holder) {
			o->held_total_ns += e->total;
		} else {
			o->wait_total_ns += e->total;
			o->wait_count += e->count;
		}
	}
	/* sort threads, then renumber tmap */
	{
		/* remember old position through os_tid: sort a copy of indices */
		uint32_t *pos = malloc((ntk ? ntk : 1) * sizeof *pos);
		if (!pos) {
			st = nomem(g);
			goto out;
		}
		qsort(g->rthreads, ntk, sizeof *g->rthreads, cmp_thread_rank);
		for (size_t i = 0; i < ntk; i++) {
			uint32_t orig = map_find(&g->thread_map, g->rthreads[i].os_tid);
			pos[i] = orig;
		}
		for (size_t i = 0; i < ntk; i++)
			tmap[pos[i]] = (uint32_t)i;
		free(pos);
	}
	g->res.thread_count = ntk;
	g->res.threads = g->rthreads;

	/* wait edges */
	size_t nwe = 0;
	g->rwedges = calloc(g->nwedges ? g->nwedges : 1, sizeof *g->rwedges);
	if (!g->rwedges) {
		st = nomem(g);
		goto out;
	}
	for (size_t i = 0; i < g->nwedges; i++) {
		const lg_wedge *e = &g->wedges[i];
		if (!wedge_kept(e, lmap))
			continue;
		rec_lockgraph_wait_edge *o = &g->rwedges[nwe++];
		o->thread = tmap[e->thread];
		o->lock = lmap[e->lock];
		o->holder = e->holder;
		o->count = e->count;
		o->total_ns = e->total;
		o->max_ns = e->max;
	}
	qsort(g->rwedges, nwe, sizeof *g->rwedges, cmp_wedge);
	g->res.wait_edge_count = nwe;
	g->res.wait_edges = g->rwedges;

	/* order edges */
	size_t noe = 0, nex = 0;
	for (size_t i = 0; i < g->noedges; i++) {
		const lg_oedge *e = &g->oedges[i];
		if (oedge_kept(e, lmap))
			nex += e->nex;
	}
	g->roedges = calloc(g->noedges ? g->noedges : 1, sizeof *g->roedges);
	g->rexamples = calloc(nex ? nex : 1, sizeof *g->rexamples);
	if (!g->roedges || !g->rexamples) {
		st = nomem(g);
		goto out;
	}
	nex = 0;
	for (size_t i = 0; i < g->noedges; i++) {
		const lg_oedge *e = &g->oedges[i];
		if (!oedge_kept(e, lmap))
			continue;
		rec_lockgraph_order_edge *o = &g->roedges[noe++];
		o->from = lmap[e->from];
		o->to = lmap[e->to];
		o->count = e->count;
		o->examples = g->rexamples + nex;
		o->example_count = e->nex;
		for (uint32_t k = e->ex_head; k != UINT32_MAX; k = g->examples[k].next) {
			const lg_example *ex = &g->examples[k];
			rec_lockgraph_example *x = &g->rexamples[nex++];
			x->thread = tmap[ex->thread];
			x->depth = ex->stack == UINT32_MAX ? 0 : g->stacks[ex->stack].depth;
			x->frames = ex->stack == UINT32_MAX ? NULL : g->stacks[ex->stack].frames;
		}
	}
	qsort(g->roedges, noe, sizeof *g->roedges, cmp_oedge);
	g->res.order_edge_count = noe;
	g->res.order_edges = g->roedges;
	g->res.lock_wait_events = g->wait_events;
	g->res.lock_order_events = g->order_events;

	st = unique_labels(g);
	if (st == REC_OK && (g->graphs & REC_LOCKGRAPH_ORDER)) {
		rec_lg_cycles cy = { NULL, NULL, 0, false };
		st = rec_lg_find_cycles(g->roedges, g->res.order_edge_count, g->res.lock_count, &cy);
		g->res.cycles_truncated = cy.truncated;
		if (st == REC_OK && cy.count) {
			g->rcycles = cy.cycles;
			g->rcycle_idx = cy.idx;
			g->res.cycle_count = cy.count;
			g->res.cycles = g->rcycles;
		}
		if (st != REC_OK)
			st = nomem(g);
	}
	if (st == REC_OK && g->opt.group && (g->graphs & REC_LOCKGRAPH_WAIT))
		st = group_wait(g, lmap, tmap);
out:
	free(order);
	free(lmap);
	free(tmap);
	free(tback);
	if (st != REC_OK) {
		free_result(g);
		return st;
	}
	*out = &g->res;
	return REC_OK;
}
