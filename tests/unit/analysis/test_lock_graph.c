/* SPDX-License-Identifier: MIT */
/*
 * test_lock_graph.c - the lock analyses of rec/lock_graph.h on recordings written with
 * the real writer (zstd chunks in memory) and read back with the real
 * reader: the wait-for graph (waiter and holder edges, totals, names from
 * the recording), the filters (--min-wait, --top, window, thread), and the
 * lock-order graph's cycles: a 3-lock cycle, two cycles sharing a lock, no
 * false cycle on a DAG or for a recursive lock, and a 100000-lock cycle
 * (no recursion on input-sized depth).  rec/lock_attrib.h alone is tested
 * in test_lock_attrib.c, the cycle search alone in test_lock_cycles.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/lock_graph.h"
#include "rec/rec.h"
#include "../../lib/membuf.h"

#define MS 1000000ll
#define T0 1000000000ull /* first tick */
#define WALL0 1700000000000000000ll

/* ---- a recording in memory -------------------------------------------------------- */

/* Fields as spec/EVENTS.md declares them. */
static const rec_field wait_fields[] = {
	{ "lockAddress", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "lockName", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "holderOsThreadId", "", "", REC_TYPE_U64, REC_UNIT_NONE },
	{ "lockKind", "", "", REC_TYPE_U8, REC_UNIT_NONE },
};
static const rec_field order_fields[] = {
	{ "heldAddress", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "heldName", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "acquiredAddress", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "acquiredName", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
};
static const rec_field tick_fields[] = { { "n", "", "", REC_TYPE_U64, REC_UNIT_NONE } };

typedef struct rec_mem {
	membuf sink;
	rec_writer *w;
	uint64_t next_stack;
} rec_mem;

static void rm_open(rec_mem *m)
{
	memset(m, 0, sizeof *m);
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.run_id = 7;
	o.pid = 4242;
	o.anchor_wall_ns = WALL0;
	o.anchor_ticks = 0;
	o.tick_frequency = 1000000000u;
	o.chunk_events_size = 4096; /* several chunks */
	rec_sink s = { mem_write, NULL, &m->sink };
	assert_int_equal(rec_writer_open(&m->w, &s, &o), REC_OK);
	rec_type tw = { 16, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK,
			"rec.LockWait", "", "", "rec/Locks", 4, wait_fields };
	rec_type to = { 17, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "rec.LockOrder", "", "",
			"rec/Locks", 4, order_fields };
	rec_type tt = { 300, REC_EVENT_HAS_THREAD, "app.Tick", "", "", "app", 1, tick_fields };
	assert_int_equal(rec_writer_add_type(m->w, &tw), REC_OK);
	assert_int_equal(rec_writer_add_type(m->w, &to), REC_OK);
	assert_int_equal(rec_writer_add_type(m->w, &tt), REC_OK);
	m->next_stack = 1;
}

static uint64_t str_id(rec_mem *m, const char *s)
{
	uint64_t id;
	assert_int_equal(rec_writer_intern_string(m->w, s, strlen(s), &id), REC_OK);
	return id;
}

/* Thread pool id = tid (ids are the caller's); name may be NULL. */
static void rm_thread(rec_mem *m, uint64_t tid, const char *name)
{
	assert_int_equal(rec_writer_define_thread(m->w, tid, tid, name ? str_id(m, name) : 0), REC_OK);
}

/* A stack of function names, leaf first, "|"-separated; returns its id. */
static uint64_t rm_stack(rec_mem *m, const char *fns)
{
	uint64_t frames[16];
	uint32_t depth = 0;
	char buf[256];
	snprintf(buf, sizeof buf, "%s", fns);
	char *save = NULL;
	for (char *tok = strtok_r(buf, "|", &save); tok && depth < 16; tok = strtok_r(NULL, "|", &save)) {
		uint64_t fid = 100000 + m->next_stack * 16 + depth;
		assert_int_equal(rec_writer_define_frame(m->w, fid, str_id(m, tok), 0, depth, 0), REC_OK);
		frames[depth++] = fid;
	}
	uint64_t sid = m->next_stack++;
	assert_int_equal(rec_writer_define_stack(m->w, sid, 0, frames, depth), REC_OK);
	return sid;
}

static void rm_wait(rec_mem *m, uint64_t at_ms, uint64_t tid, uint64_t addr, const char *name,
		    int64_t wait_ns, uint64_t holder, uint64_t stack)
{
	assert_int_equal(rec_writer_begin(m->w, 16, T0 + at_ms * MS, (uint64_t)wait_ns, tid, stack), REC_OK);
	assert_int_equal(rec_writer_put_u64(m->w, addr), REC_OK);
	assert_int_equal(rec_writer_put_u64(m->w, str_id(m, name)), REC_OK);
	assert_int_equal(rec_writer_put_u64(m->w, holder), REC_OK);
	assert_int_equal(rec_writer_put_u64(m->w, 0), REC_OK);
	assert_int_equal(rec_writer_end(m->w), REC_OK);
}

static void rm_order(rec_mem *m, uint64_t at_ms, uint64_t tid, uint64_t held, const char *hname,
		     uint64_t acq, const char *aname, uint64_t stack)
{
	assert_int_equal(rec_writer_begin(m->w, 17, T0 + at_ms * MS, 0, tid, stack), REC_OK);
	assert_int_equal(rec_writer_put_u64(m->w, held), REC_OK);
	assert_int_equal(rec_writer_put_u64(m->w, str_id(m, hname)), REC_OK);
	assert_int_equal(rec_writer_put_u64(m->w, acq), REC_OK);
	assert_int_equal(rec_writer_put_u64(m->w, str_id(m, aname)), REC_OK);
	assert_int_equal(rec_writer_end(m->w), REC_OK);
}

static void rm_tick(rec_mem *m, uint64_t at_ms, uint64_t tid)
{
	assert_int_equal(rec_writer_begin(m->w, 300, T0 + at_ms * MS, 0, tid, 0), REC_OK);
	assert_int_equal(rec_writer_put_u64(m->w, 1), REC_OK);
	assert_int_equal(rec_writer_end(m->w), REC_OK);
}

/* Close the writer, read every event into a new graph, return it. */
static rec_lockgraph *rm_graph(rec_mem *m, const rec_lockgraph_options *o, const rec_lockgraph_result **res)
{
	if (m->w) {
		assert_int_equal(rec_writer_close(m->w), REC_OK);
		m->w = NULL;
	}
	rec_reader *r;
	assert_int_equal(rec_reader_open_mem(&r, m->sink.p, m->sink.len, "mem", NULL), REC_OK);
	rec_lockgraph *g;
	assert_int_equal(rec_lockgraph_open(&g, o), REC_OK);
	rec_event ev;
	rec_status st;
	while ((st = rec_reader_next_event(r, &ev)) == REC_OK)
		assert_int_equal(rec_lockgraph_add_event(g, &ev), REC_OK);
	assert_int_equal(st, REC_END);
	rec_reader_close(r);
	assert_int_equal(rec_lockgraph_get(g, res), REC_OK);
	return g;
}

static void rm_free(rec_mem *m)
{
	if (m->w)
		rec_writer_abandon(m->w);
	free(m->sink.p);
}

static size_t lock_by_label(const rec_lockgraph_result *r, const char *label)
{
	for (size_t i = 0; i < r->lock_count; i++)
		if (strcmp(r->locks[i].label, label) == 0)
			return i;
	fail_msg("no lock labelled %s", label);
	return SIZE_MAX;
}

static size_t thread_by_tid(const rec_lockgraph_result *r, uint64_t tid)
{
	for (size_t i = 0; i < r->thread_count; i++)
		if (r->threads[i].os_tid == tid)
			return i;
	fail_msg("no thread %llu", (unsigned long long)tid);
	return SIZE_MAX;
}

static const rec_lockgraph_wait_edge *wedge(const rec_lockgraph_result *r, size_t thread, size_t lock,
					    bool holder)
{
	for (size_t i = 0; i < r->wait_edge_count; i++) {
		const rec_lockgraph_wait_edge *e = &r->wait_edges[i];
		if (e->thread == thread && e->lock == lock && e->holder == holder)
			return e;
	}
	return NULL;
}

static const rec_lockgraph_order_edge *oedge(const rec_lockgraph_result *r, size_t from, size_t to)
{
	for (size_t i = 0; i < r->order_edge_count; i++)
		if (r->order_edges[i].from == from && r->order_edges[i].to == to)
			return &r->order_edges[i];
	return NULL;
}

/* ---- wait-for graph --------------------------------------------------------------- */

/* w1 (101) waits 5 + 3 ms on "cache" held by h (103); w2 (102) waits 10 ms
 * on "cache" held by w1, and 1 ms on the unnamed lock at 0x2000 (taken in
 * take_m) with no holder known (charged to "(holder unknown)").  h only ever appears in an app.Tick. */
static void write_waits(rec_mem *m)
{
	rm_open(m);
	rm_thread(m, 101, "w1");
	rm_thread(m, 102, "w2");
	rm_thread(m, 103, "h");
	uint64_t s_cache = rm_stack(m, "rec_lock_wait_record_|rec_mutex_lock_contended_|get_quote|main");
	uint64_t s_m = rm_stack(m, "rec_lock_wait_record_|rec_mutex_lock_contended_|take_m|main");
	rm_tick(m, 0, 103);
	rm_wait(m, 10, 101, 0x1000, "cache", 5 * MS, 103, s_cache);
	rm_wait(m, 20, 101, 0x1000, "cache", 3 * MS, 103, s_cache);
	rm_wait(m, 30, 102, 0x1000, "cache", 10 * MS, 101, s_cache);
	rm_wait(m, 40, 102, 0x2000, "0x2000", 1 * MS, 0, s_m);
}

static void t_wait_graph(void **state)
{
	(void)state;
	rec_mem m;
	write_waits(&m);
	const rec_lockgraph_result *r;
	rec_lockgraph *g = rm_graph(&m, NULL, &r);
	assert_int_equal(r->lock_wait_events, 4);
	assert_int_equal(r->lock_count, 2);
	/* heaviest first */
	assert_string_equal(r->locks[0].label, "cache");
	assert_string_equal(r->locks[0].name, "cache");
	assert_string_equal(r->locks[0].site, "get_quote");
	assert_int_equal(r->locks[0].wait_count, 3);
	assert_int_equal(r->locks[0].wait_total_ns, 18 * MS);
	assert_int_equal(r->locks[0].wait_max_ns, 10 * MS);
	/* unnamed: address and first frame outside librec */
	assert_string_equal(r->locks[1].name, "");
	assert_string_equal(r->locks[1].label, "0x2000 (take_m)");
	assert_int_equal(r->locks[1].address, 0x2000);

	size_t w1 = thread_by_tid(r, 101), w2 = thread_by_tid(r, 102), h = thread_by_tid(r, 103);
	assert_string_equal(r->threads[w1].label, "w1 (tid 101)");
	assert_string_equal(r->threads[h].label, "h (tid 103)"); /* name from app.Tick */
	assert_int_equal(r->threads[w2].wait_total_ns, 11 * MS);
	assert_int_equal(r->threads[w1].wait_total_ns, 8 * MS);
	assert_int_equal(r->threads[w1].held_total_ns, 10 * MS);
	assert_int_equal(r->threads[h].held_total_ns, 8 * MS);
	assert_int_equal(w2, 0); /* most waiting thread first */

	const rec_lockgraph_wait_edge *e = wedge(r, w1, 0, false);
	assert_non_null(e);
	assert_int_equal(e->count, 2);
	assert_int_equal(e->total_ns, 8 * MS);
	assert_int_equal(e->max_ns, 5 * MS);
	e = wedge(r, h, 0, true);
	assert_non_null(e);
	assert_int_equal(e->count, 2);
	assert_int_equal(e->total_ns, 8 * MS);
	e = wedge(r, w1, 0, true);
	assert_non_null(e);
	assert_int_equal(e->count, 1);
	assert_int_equal(e->total_ns, 10 * MS);
	assert_non_null(wedge(r, w2, 0, false));
	assert_non_null(wedge(r, w2, 1, false));
	assert_null(wedge(r, h, 1, true));
	/* holder 0: the part weighs on "(holder unknown)", the edges add up */
	size_t u = thread_by_tid(r, 0);
	assert_string_equal(r->threads[u].label, "(holder unknown)");
	e = wedge(r, u, 1, true);
	assert_non_null(e);
	assert_int_equal(e->count, 1);
	assert_int_equal(e->total_ns, 1 * MS);
	assert_int_equal(r->threads[u].held_total_ns, 1 * MS);
	assert_int_equal(r->wait_edge_count, 6);
	assert_int_equal(r->order_edge_count, 0);
	assert_int_equal(r->cycle_count, 0);
	rec_lockgraph_close(g);
	rm_free(&m);
}

/* The demo's story (issue 20): conn-1 (201) holds "quote-cache-lock" for
 * 150 ms, then each waiter in turn: conn-2 (202), conn-3 (203) and conn-4
 * (204) all begin waiting at 10 ms with conn-1 as the holder, and get the
 * lock at 160, 310 and 460 ms.  Charged by hand-off: conn-1 450 ms (150
 * of each wait), conn-2 300 (150 of conn-3's and of conn-4's), conn-3 150;
 * 900 in all, the waits' total.  (Charged to the holder at each wait's
 * start, conn-1 would get all 900.) */
static void write_handoffs(rec_mem *m)
{
	rm_open(m);
	rm_thread(m, 201, "conn-1");
	rm_thread(m, 202, "conn-2");
	rm_thread(m, 203, "conn-3");
	rm_thread(m, 204, "conn-4");
	uint64_t s = rm_stack(m, "rec_lock_wait_record_|serve_blocking|conn_main");
	rm_tick(m, 0, 201);
	/* written at their ends, in the order they ended */
	rm_wait(m, 10, 202, 0x1000, "quote-cache-lock", 150 * MS, 201, s);
	rm_wait(m, 10, 203, 0x1000, "quote-cache-lock", 300 * MS, 201, s);
	rm_wait(m, 10, 204, 0x1000, "quote-cache-lock", 450 * MS, 201, s);
}

static void t_handoff_attribution(void **state)
{
	(void)state;
	rec_mem m;
	write_handoffs(&m);
	const rec_lockgraph_result *r;
	rec_lockgraph *g = rm_graph(&m, NULL, &r);
	assert_int_equal(r->lock_wait_events, 3);
	assert_int_equal(r->locks[0].wait_total_ns, 900 * MS);
	const int64_t held[] = { 450 * MS, 300 * MS, 150 * MS, 0 };
	const uint64_t count[] = { 3, 2, 1, 0 };
	int64_t sum = 0;
	for (uint64_t tid = 201; tid <= 204; tid++) {
		size_t t = thread_by_tid(r, tid);
		assert_int_equal(r->threads[t].held_total_ns, held[tid - 201]);
		const rec_lockgraph_wait_edge *e = wedge(r, t, 0, true);
		if (!count[tid - 201]) {
			assert_null(e);
			continue;
		}
		assert_non_null(e);
		assert_int_equal(e->count, count[tid - 201]);
		assert_int_equal(e->total_ns, held[tid - 201]);
		assert_int_equal(e->max_ns, 150 * MS);
		sum += e->total_ns;
	}
	assert_int_equal(sum, 900 * MS);
	/* a second get gives the same (the holder edges are made anew) */
	assert_int_equal(rec_lockgraph_get(g, &r), REC_OK);
	assert_int_equal(r->threads[thread_by_tid(r, 201)].held_total_ns, 450 * MS);
	rec_lockgraph_close(g);

	/* Only conn-4's wait is drawn (--thread), but the others' ends are
	 * still hand-offs: its 450 ms go 150 to each holder. */
	rec_lockgraph_options o = REC_LOCKGRAPH_OPTIONS_INIT;
	o.thread = "conn-4";
	g = rm_graph(&m, &o, &r);
	assert_int_equal(r->lock_wait_events, 1);
	for (uint64_t tid = 201; tid <= 203; tid++) {
		const rec_lockgraph_wait_edge *e = wedge(r, thread_by_tid(r, tid), 0, true);
		assert_non_null(e);
		assert_int_equal(e->count, 1);
		assert_int_equal(e->total_ns, 150 * MS);
	}
	rec_lockgraph_close(g);

	/* Likewise --min-wait: the 150 ms wait is left out, not its hand-off. */
	o = (rec_lockgraph_options)REC_LOCKGRAPH_OPTIONS_INIT;
	o.min_wait_ns = 200 * MS;
	g = rm_graph(&m, &o, &r);
	assert_int_equal(r->lock_wait_events, 2);
	assert_int_equal(r->threads[thread_by_tid(r, 201)].held_total_ns, 300 * MS);
	assert_int_equal(r->threads[thread_by_tid(r, 202)].held_total_ns, 300 * MS);
	assert_int_equal(r->threads[thread_by_tid(r, 203)].held_total_ns, 150 * MS);
	rec_lockgraph_close(g);
	rm_free(&m);
}

static void t_filters(void **state)
{
	(void)state;
	rec_mem m;
	write_waits(&m);
	const rec_lockgraph_result *r;
	rec_lockgraph_options o = REC_LOCKGRAPH_OPTIONS_INIT;

	o.min_wait_ns = 4 * MS; /* drops the 3 ms and 1 ms waits */
	rec_lockgraph *g = rm_graph(&m, &o, &r);
	assert_int_equal(r->lock_wait_events, 2);
	assert_int_equal(r->locks[0].wait_total_ns, 15 * MS);
	for (size_t i = 0; i < r->lock_count; i++)
		assert_int_equal(r->locks[i].wait_count, i == 0 ? 2 : 0);
	rec_lockgraph_close(g);

	o = (rec_lockgraph_options)REC_LOCKGRAPH_OPTIONS_INIT;
	o.top = 1;
	g = rm_graph(&m, &o, &r);
	assert_int_equal(r->lock_count, 1);
	assert_int_equal(r->locks_dropped, 1);
	assert_string_equal(r->locks[0].label, "cache");
	for (size_t i = 0; i < r->wait_edge_count; i++)
		assert_int_equal(r->wait_edges[i].lock, 0);
	assert_int_equal(r->wait_edge_count, 4);
	rec_lockgraph_close(g);

	o = (rec_lockgraph_options)REC_LOCKGRAPH_OPTIONS_INIT;
	o.thread = "w2";
	g = rm_graph(&m, &o, &r);
	assert_int_equal(r->lock_wait_events, 2);
	assert_int_equal(r->threads[thread_by_tid(r, 102)].wait_total_ns, 11 * MS);
	rec_lockgraph_close(g);

	o.thread = "101"; /* a tid */
	g = rm_graph(&m, &o, &r);
	assert_int_equal(r->lock_wait_events, 2);
	assert_int_equal(r->threads[thread_by_tid(r, 101)].wait_total_ns, 8 * MS);
	rec_lockgraph_close(g);

	o.thread = "w*"; /* a glob */
	g = rm_graph(&m, &o, &r);
	assert_int_equal(r->lock_wait_events, 4);
	rec_lockgraph_close(g);

	/* window: events starting in [wall(T0) + 15 ms, wall(T0) + 35 ms) */
	o = (rec_lockgraph_options)REC_LOCKGRAPH_OPTIONS_INIT;
	o.from_wall_ns = WALL0 + (int64_t)T0 + 15 * MS;
	o.to_wall_ns = WALL0 + (int64_t)T0 + 35 * MS;
	g = rm_graph(&m, &o, &r);
	assert_int_equal(r->lock_wait_events, 2);
	assert_int_equal(r->locks[0].wait_total_ns, 13 * MS);
	rec_lockgraph_close(g);

	/* only the lock-order graph: waits still rank the locks, no wait edges */
	o = (rec_lockgraph_options)REC_LOCKGRAPH_OPTIONS_INIT;
	o.graphs = REC_LOCKGRAPH_ORDER;
	g = rm_graph(&m, &o, &r);
	assert_int_equal(r->wait_edge_count, 0);
	assert_string_equal(r->locks[0].label, "cache");
	assert_int_equal(r->locks[0].wait_total_ns, 18 * MS);
	rec_lockgraph_close(g);

	rec_lockgraph_options bad = REC_LOCKGRAPH_OPTIONS_INIT;
	bad.reserved[0] = 1;
	assert_int_equal(rec_lockgraph_open(&g, &bad), REC_ERR_INVALID_ARG);
	rm_free(&m);
}

/* ---- lock-order graph -------------------------------------------------------------- */

static void t_three_lock_cycle(void **state)
{
	(void)state;
	rec_mem m;
	rm_open(&m);
	rm_thread(&m, 1, "t-ab");
	rm_thread(&m, 2, "t-bc");
	rm_thread(&m, 3, "t-ca");
	rm_thread(&m, 4, "t-da");
	uint64_t s1 = rm_stack(&m, "rec_lock_order_note_|rec_mutex_lock|take_ab|main");
	uint64_t s2 = rm_stack(&m, "rec_mutex_lock|take_bc|main");
	uint64_t s3 = rm_stack(&m, "rec_mutex_lock|take_ca|main");
	uint64_t s4 = rm_stack(&m, "rec_mutex_lock|take_da|main");
	rm_order(&m, 1, 1, 0xA, "A", 0xB, "B", s1);
	rm_order(&m, 2, 2, 0xB, "B", 0xC, "C", s2);
	rm_order(&m, 3, 3, 0xC, "C", 0xA, "A", s3);
	rm_order(&m, 4, 4, 0xD, "D", 0xA, "A", s4); /* into the cycle, not on it */
	rm_order(&m, 5, 1, 0xA, "A", 0xB, "B", s1); /* same pair again (another run) */
	const rec_lockgraph_result *r;
	rec_lockgraph *g = rm_graph(&m, NULL, &r);
	assert_int_equal(r->lock_order_events, 5);
	assert_int_equal(r->order_edge_count, 4);
	size_t a = lock_by_label(r, "A"), b = lock_by_label(r, "B"), c = lock_by_label(r, "C"),
	       d = lock_by_label(r, "D");
	const rec_lockgraph_order_edge *ab = oedge(r, a, b), *bc = oedge(r, b, c), *ca = oedge(r, c, a),
				       *da = oedge(r, d, a);
	assert_non_null(ab);
	assert_non_null(bc);
	assert_non_null(ca);
	assert_non_null(da);
	assert_int_equal(ab->count, 2);
	assert_int_equal(ab->example_count, 1); /* one thread */
	assert_true(ab->in_cycle && bc->in_cycle && ca->in_cycle);
	assert_false(da->in_cycle);
	assert_int_equal(r->cycle_count, 1);
	const rec_lockgraph_cycle *cy = &r->cycles[0];
	assert_int_equal(cy->length, 3);
	/* the cycle follows the edges: locks[i] -> locks[i + 1] */
	for (size_t i = 0; i < 3; i++) {
		const rec_lockgraph_order_edge *e = &r->order_edges[cy->edges[i]];
		assert_int_equal(e->from, cy->locks[i]);
		assert_int_equal(e->to, cy->locks[(i + 1) % 3]);
	}
	bool seen[3] = { false, false, false };
	for (size_t i = 0; i < 3; i++) {
		size_t l = cy->locks[i];
		assert_true(l == a || l == b || l == c);
		seen[l == a ? 0 : l == b ? 1 : 2] = true;
	}
	assert_true(seen[0] && seen[1] && seen[2]);
	/* threads and stacks of the edges, from the call site on (these stacks
	 * are an old recording's: its leading rec_* frames are left out) */
	assert_string_equal(r->threads[ab->examples[0].thread].label, "t-ab (tid 1)");
	assert_int_equal(ab->examples[0].depth, 2);
	assert_string_equal(ab->examples[0].frames[0], "take_ab");
	assert_string_equal(ab->examples[0].frames[1], "main");
	assert_string_equal(r->threads[ca->examples[0].thread].name, "t-ca");
	assert_int_equal(ca->examples[0].depth, 2);
	assert_string_equal(ca->examples[0].frames[0], "take_ca");
	/* the acquired lock's site is the first non-rec_ frame */
	assert_string_equal(r->locks[b].site, "take_ab");
	rec_lockgraph_close(g);

	/* only the wait-for graph: rec.LockOrder is not read, no cycles */
	rec_lockgraph_options o = REC_LOCKGRAPH_OPTIONS_INIT;
	o.graphs = REC_LOCKGRAPH_WAIT;
	g = rm_graph(&m, &o, &r);
	assert_int_equal(r->order_edge_count, 0);
	assert_int_equal(r->lock_order_events, 0);
	assert_int_equal(r->cycle_count, 0);
	rec_lockgraph_close(g);
	rm_free(&m);
}

static void t_dag_has_no_cycle(void **state)
{
	(void)state;
	rec_mem m;
	rm_open(&m);
	rm_thread(&m, 1, "t1");
	rm_thread(&m, 2, "t2");
	uint64_t s = rm_stack(&m, "rec_mutex_lock|work|main");
	/* A->B, A->C, B->C, C->D, B->D, A->D: a DAG with diamonds; A->A: a
	 * recursive lock taken again (self edge: not a cycle). */
	static const char pairs[][2] = { { 'A', 'B' }, { 'A', 'C' }, { 'B', 'C' }, { 'C', 'D' },
					 { 'B', 'D' }, { 'A', 'D' }, { 'A', 'A' } };
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		char h[2] = { pairs[i][0], 0 }, q[2] = { pairs[i][1], 0 };
		rm_order(&m, i, 1 + i % 2, (uint64_t)pairs[i][0], h, (uint64_t)pairs[i][1], q, s);
	}
	const rec_lockgraph_result *r;
	rec_lockgraph *g = rm_graph(&m, NULL, &r);
	assert_int_equal(r->order_edge_count, 7);
	assert_int_equal(r->cycle_count, 0);
	for (size_t i = 0; i < r->order_edge_count; i++)
		assert_false(r->order_edges[i].in_cycle);
	rec_lockgraph_close(g);
	rm_free(&m);
}

static void t_two_cycles_share_a_lock(void **state)
{
	(void)state;
	rec_mem m;
	rm_open(&m);
	rm_thread(&m, 1, "t1");
	rm_thread(&m, 2, "t2");
	uint64_t s = rm_stack(&m, "rec_mutex_lock|work|main");
	rm_order(&m, 1, 1, 0xA, "A", 0xB, "B", s);
	rm_order(&m, 2, 2, 0xB, "B", 0xA, "A", s);
	rm_order(&m, 3, 1, 0xB, "B", 0xC, "C", s);
	rm_order(&m, 4, 2, 0xC, "C", 0xB, "B", s);
	const rec_lockgraph_result *r;
	rec_lockgraph *g = rm_graph(&m, NULL, &r);
	assert_int_equal(r->order_edge_count, 4);
	assert_int_equal(r->cycle_count, 2);
	for (size_t i = 0; i < r->order_edge_count; i++)
		assert_true(r->order_edges[i].in_cycle);
	size_t b = lock_by_label(r, "B");
	for (size_t k = 0; k < 2; k++) {
		assert_int_equal(r->cycles[k].length, 2);
		assert_true(r->cycles[k].locks[0] == b || r->cycles[k].locks[1] == b);
	}
	assert_true(r->cycles[0].locks[0] != r->cycles[1].locks[0] ||
		    r->cycles[0].locks[1] != r->cycles[1].locks[1]);
	rec_lockgraph_close(g);
	rm_free(&m);
}

/* A cycle through 100000 locks: Tarjan and the cycle search must not recurse. */
static void t_long_cycle(void **state)
{
	(void)state;
	enum { N = 100000 };
	rec_mem m;
	rm_open(&m);
	rm_thread(&m, 1, "chain");
	uint64_t s = rm_stack(&m, "rec_mutex_lock|chain|main");
	for (uint64_t i = 0; i < N; i++)
		rm_order(&m, 1, 1, 0x10000 + i, "", 0x10000 + (i + 1) % N, "", s);
	const rec_lockgraph_result *r;
	rec_lockgraph *g = rm_graph(&m, NULL, &r);
	assert_int_equal(r->lock_count, N);
	assert_int_equal(r->order_edge_count, N);
	assert_int_equal(r->cycle_count, 1);
	assert_int_equal(r->cycles[0].length, N);
	for (size_t i = 0; i < N; i++)
		assert_true(r->order_edges[i].in_cycle);
	/* an unnamed lock: address and site */
	assert_non_null(strstr(r->locks[0].label, " (chain)"));
	assert_true(strncmp(r->locks[0].label, "0x", 2) == 0);
	rec_lockgraph_close(g);
	rm_free(&m);
}

/* ---- options.group: a dense graph, 40 locks x 30 threads ---------------------------- */

/* Thread t (1..30) waits once on lock i (0..39, "L00".."L39") for (i+1)*t us,
 * held by tid 5000 + t % 7; the waits never overlap (no hand-offs). */
static int64_t dense_wait(int i, int t) { return (int64_t)(i + 1) * t * 1000; }

static void t_dense_grouped(void **state)
{
	(void)state;
	rec_mem m;
	rm_open(&m);
	for (int t = 1; t <= 30; t++)
		rm_thread(&m, 1000 + (uint64_t)t, NULL);
	int64_t all = 0, lock_total[40] = { 0 };
	uint64_t at = 0;
	for (int i = 0; i < 40; i++)
		for (int t = 1; t <= 30; t++) {
			char name[16];
			snprintf(name, sizeof name, "L%02d", i);
			rm_wait(&m, at, 1000 + (uint64_t)t, 0x1000 + (uint64_t)i * 16, name,
				dense_wait(i, t), 5000 + (uint64_t)(t % 7), 0);
			at += 2;
			all += dense_wait(i, t);
			lock_total[i] += dense_wait(i, t);
		}
	const rec_lockgraph_result *r;
	rec_lockgraph_options o = REC_LOCKGRAPH_OPTIONS_INIT;
	o.top = 10;
	o.group = 3;
	rec_lockgraph *g = rm_graph(&m, &o, &r);
	assert_int_equal(r->lock_wait_events, 1200);
	assert_int_equal(r->wait_lock_count, 40);
	assert_int_equal(r->wait_total_ns, all);
	assert_int_equal(r->locks_dropped, 30);
	/* the 10 heaviest, then one node for the 30 others */
	assert_int_equal(r->lock_count, 11);
	int64_t kept = 0;
	for (int k = 0; k < 10; k++) {
		char name[16];
		snprintf(name, sizeof name, "L%02d", 39 - k);
		assert_string_equal(r->locks[k].label, name);
		assert_int_equal(r->locks[k].grouped, 0);
		assert_int_equal(r->locks[k].wait_total_ns, lock_total[39 - k]);
		kept += lock_total[39 - k];
	}
	assert_int_equal(r->kept_wait_total_ns, kept);
	const rec_lockgraph_lock *gl = &r->locks[10];
	assert_int_equal(gl->grouped, 30);
	assert_string_equal(gl->label, "30 other locks");
	assert_int_equal(gl->wait_count, 900);
	assert_int_equal(gl->wait_total_ns, all - kept);
	assert_int_equal(gl->wait_max_ns, dense_wait(29, 30));
	/* per lock: 3 waiters + 1 group of 27, 3 holders + 1 group of 4 (5000+3..6) */
	int64_t wsum = 0, hsum = 0;
	size_t per[11][2] = { { 0 } };
	for (size_t k = 0; k < r->wait_edge_count; k++) {
		const rec_lockgraph_wait_edge *e = &r->wait_edges[k];
		const rec_lockgraph_thread *t = &r->threads[e->thread];
		per[e->lock][e->holder]++;
		if (e->holder)
			hsum += e->total_ns;
		else
			wsum += e->total_ns;
		if (e->lock == 10) {
			assert_int_equal(t->grouped, e->holder ? 7 : 30);
			assert_int_equal(e->count, 900);
			assert_int_equal(e->total_ns, all - kept);
			continue;
		}
		int i = 39 - (int)e->lock;
		if (!t->grouped) {
			/* the heaviest: waiters 30, 29, 28; holders t % 7 = 2, 1, 0 */
			if (e->holder)
				assert_true(t->os_tid >= 5000 && t->os_tid <= 5002);
			else
				assert_true(t->os_tid >= 1028 && t->os_tid <= 1030);
			continue;
		}
		assert_int_equal(t->grouped, e->holder ? 4 : 27);
		int64_t want = 0;
		uint64_t n = 0;
		for (int w = 1; w <= 30; w++)
			if (e->holder ? w % 7 >= 3 : w <= 27) {
				want += dense_wait(i, w);
				n++;
			}
		assert_int_equal(e->count, n);
		assert_int_equal(e->total_ns, want);
		assert_int_equal(e->max_ns, e->holder ? dense_wait(i, 27) : dense_wait(i, 27));
		assert_int_equal(e->holder ? t->held_total_ns : t->wait_total_ns, want);
	}
	assert_int_equal(wsum, all); /* no wait leaves the picture */
	assert_int_equal(hsum, all);
	for (size_t l = 0; l < 11; l++) {
		assert_int_equal(per[l][0], l == 10 ? 1 : 4);
		assert_int_equal(per[l][1], l == 10 ? 1 : 4);
	}
	/* listed: 3 waiters, 3 holders, 22 group nodes; 31 threads in groups only */
	assert_int_equal(r->threads_grouped, 31);
	assert_int_equal(r->thread_count, 6 + 22);
	rec_lockgraph_close(g);

	/* group = 0, top = 0: every lock, thread and edge */
	o = (rec_lockgraph_options)REC_LOCKGRAPH_OPTIONS_INIT;
	g = rm_graph(&m, &o, &r);
	assert_int_equal(r->lock_count, 40);
	assert_int_equal(r->thread_count, 37);
	assert_int_equal(r->wait_edge_count, 40 * 30 + 40 * 7);
	assert_int_equal(r->threads_grouped, 0);
	assert_int_equal(r->kept_wait_total_ns, all);
	rec_lockgraph_close(g);
	rm_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_wait_graph),
		cmocka_unit_test(t_filters),
		cmocka_unit_test(t_handoff_attribution),
		cmocka_unit_test(t_three_lock_cycle),
		cmocka_unit_test(t_dag_has_no_cycle),
		cmocka_unit_test(t_two_cycles_share_a_lock),
		cmocka_unit_test(t_long_cycle),
		cmocka_unit_test(t_dense_grouped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
