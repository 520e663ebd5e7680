/* SPDX-License-Identifier: MIT */
/*
 * test_select_types.c - select_types.c, the reader's type selection
 * (rec_reader_select_types() and its by-name and by-id forms): the events
 * of the types left out are not returned, those of the selected types come
 * in the same number and order as an unselected read gives them (file order
 * and timestamp order over chunks whose times overlap), and damaged chunks,
 * drops and unknown types are reported exactly as without a selection.
 * Recordings are files made by the real writer (zstd).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec/rec.h"
#include "../../lib/membuf.h"
#include "../../lib/write_file.h"

static char tmpdir[] = "/tmp/test_select_types.XXXXXX";

static const char *tpath(const char *name)
{
	static char buf[4][256];
	static int k;
	char *p = buf[k++ & 3];
	snprintf(p, 256, "%s/%s", tmpdir, name);
	return p;
}

/* Three types: t.Wait (id 1, a duration, a stack), t.Sample (id 2, the
 * many), t.Note (id 7, a text). */
static const rec_field wait_f[] = { { "n", "", "", REC_TYPE_U32, 0 },
				    { "lock", "", "", REC_TYPE_STRING, 0 } };
static const rec_field sample_f[] = { { "n", "", "", REC_TYPE_U32, 0 },
				      { "period", "", "", REC_TYPE_U64, 0 } };
static const rec_field note_f[] = { { "n", "", "", REC_TYPE_U32, 0 },
				    { "text", "", "", REC_TYPE_TEXT, 0 } };

#define NCHUNKS 6
#define PER 300
#define DROPS_PER_CHUNK 3

/* NCHUNKS chunks of PER events each: in each chunk every 7th event a
 * t.Wait, every 11th a t.Note, the rest t.Sample; chunk 3 holds only
 * t.Sample events.  Event times of chunks 2k and 2k+1 interleave (the
 * second's start between the first's), so ordered reading merges them.
 * Each chunk notes DROPS_PER_CHUNK dropped events.  n numbers all events.
 * off[]: the chunks' offsets, off[NCHUNKS] the file's length. */
static membuf make_rec(uint64_t *off)
{
	membuf m = { 0 };
	rec_sink s = { mem_write, NULL, &m };
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.anchor_wall_ns = 1000;
	o.anchor_ticks = 1;
	rec_writer *w;
	assert_int_equal(rec_writer_open(&w, &s, &o), REC_OK);
	rec_type tw = { 1, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK,
			"t.Wait", "", "", "t/Locks", 2, wait_f };
	rec_type ts = { 2, REC_EVENT_HAS_THREAD, "t.Sample", "", "", "t/CPU", 2, sample_f };
	rec_type tn = { 7, 0, "t.Note", "", "", "t", 2, note_f };
	assert_int_equal(rec_writer_add_type(w, &tw), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &ts), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &tn), REC_OK);
	uint64_t name, lock, fn;
	assert_int_equal(rec_writer_intern_string(w, "main", 4, &name), REC_OK);
	assert_int_equal(rec_writer_intern_string(w, "big-lock", 8, &lock), REC_OK);
	assert_int_equal(rec_writer_intern_string(w, "f", 1, &fn), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 77, name), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 1, fn, 0, 0, 0), REC_OK);
	uint64_t frames[1] = { 1 };
	assert_int_equal(rec_writer_define_stack(w, 1, 0, frames, 1), REC_OK);
	uint32_t n = 0;
	for (int c = 0; c < NCHUNKS; c++) {
		off[c] = m.len;
		uint64_t base = 1000000ull * (uint64_t)(c / 2) + (c % 2 ? 5 : 0);
		for (int i = 0; i < PER; i++, n++) {
			uint64_t ticks = base + 10ull * (uint64_t)i;
			int kind = c == 3 ? 2 : (i % 7 == 0 ? 1 : i % 11 == 0 ? 7 : 2);
			if (kind == 1) {
				assert_int_equal(rec_writer_begin(w, 1, ticks, 3 + (uint64_t)i, 1, 1), REC_OK);
				assert_int_equal(rec_writer_put_u64(w, n), REC_OK);
				assert_int_equal(rec_writer_put_u64(w, lock), REC_OK);
			} else if (kind == 7) {
				assert_int_equal(rec_writer_begin(w, 7, ticks, 0, 0, 0), REC_OK);
				assert_int_equal(rec_writer_put_u64(w, n), REC_OK);
				assert_int_equal(rec_writer_put_bytes(w, "note", 4), REC_OK);
			} else {
				assert_int_equal(rec_writer_begin(w, 2, ticks, 0, 1, 0), REC_OK);
				assert_int_equal(rec_writer_put_u64(w, n), REC_OK);
				assert_int_equal(rec_writer_put_u64(w, 1000), REC_OK);
			}
			assert_int_equal(rec_writer_end(w), REC_OK);
		}
		rec_writer_note_dropped(w, DROPS_PER_CHUNK);
		if (c + 1 < NCHUNKS)
			assert_int_equal(rec_writer_flush(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
	off[NCHUNKS] = m.len;
	return m;
}

/* What a read gave: the events (type id, n, ticks) and the problems. */
#define MAXEV (NCHUNKS * PER)
typedef struct outcome {
	size_t events;
	uint32_t type[MAXEV], n[MAXEV];
	uint64_t ticks[MAXEV];
	int problems;
	rec_status st[8];
	int64_t chunk[8];
	uint64_t offset[8];
	rec_reader_stats stats;
} outcome;

static void note_event(outcome *o, const rec_event *ev)
{
	assert_true(o->events < MAXEV);
	o->type[o->events] = ev->type->id;
	o->n[o->events] = (uint32_t)ev->values[0].v.u;
	o->ticks[o->events] = ev->ticks;
	/* the fields of what is returned are decoded as always */
	if (ev->type->id == 1) {
		assert_string_equal(ev->values[1].v.s.ptr, "big-lock");
		assert_non_null(ev->stack);
		assert_true(ev->duration_ticks > 0);
	} else if (ev->type->id == 7) {
		assert_string_equal(ev->values[1].v.s.ptr, "note");
	} else {
		assert_int_equal(ev->values[1].v.u, 1000);
	}
	o->events++;
}

static void note_problem(outcome *o, rec_reader *r, rec_status st)
{
	assert_true(st < 0);
	const rec_problem *p = rec_reader_problem(r);
	assert_int_equal(p->status, st);
	if (o->problems < 8) {
		o->st[o->problems] = st;
		o->chunk[o->problems] = p->chunk;
		o->offset[o->problems] = p->offset;
	}
	o->problems++;
}

enum { SEL_NONE, SEL_NAMES, SEL_IDS, SEL_FILTER, SEL_EMPTY };

/* t.Wait and t.Note, by category: what a consumer's own test may be. */
static int want_not_cpu(void *ctx, const rec_type *t)
{
	int *calls = ctx;
	(*calls)++;
	return strcmp(t->category, "t/CPU") != 0;
}

static int filter_calls;

static void select_types(rec_reader *r, int how)
{
	static const char *const names[] = { "t.Wait", "t.Note", "t.Absent" };
	static const uint32_t ids[] = { 1, 7, 99 };
	switch (how) {
	case SEL_NAMES:
		assert_int_equal(rec_reader_select_type_names(r, names, 3), REC_OK);
		break;
	case SEL_IDS:
		assert_int_equal(rec_reader_select_type_ids(r, ids, 3), REC_OK);
		break;
	case SEL_FILTER:
		assert_int_equal(rec_reader_select_types(r, want_not_cpu, &filter_calls), REC_OK);
		break;
	case SEL_EMPTY:
		assert_int_equal(rec_reader_select_type_names(r, NULL, 0), REC_OK);
		break;
	default:
		break;
	}
}

/* Read path with flags (0 or REC_READ_ORDERED) and selection how. */
static void read_all(const char *path, uint32_t flags, int how, outcome *o)
{
	memset(o, 0, sizeof *o);
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.flags = flags;
	rec_reader *r;
	assert_int_equal(rec_reader_open_path(&r, path, &ro), REC_OK);
	select_types(r, how);
	rec_event ev;
	for (int guard = 0; guard < 100000; guard++) {
		rec_status st = rec_reader_next_event(r, &ev);
		if (st == REC_END)
			break;
		if (st == REC_OK)
			note_event(o, &ev);
		else
			note_problem(o, r, st);
	}
	rec_reader_get_stats(r, &o->stats);
	rec_reader_close(r);
}

/* Chunk by chunk (rec_reader_next_chunk + rec_reader_next_chunk_event),
 * summing the chunks' dropped events into *drops. */
static void read_chunks(const char *path, int how, outcome *o, uint64_t *drops)
{
	memset(o, 0, sizeof *o);
	*drops = 0;
	rec_reader *r;
	assert_int_equal(rec_reader_open_path(&r, path, NULL), REC_OK);
	select_types(r, how);
	for (int guard = 0; guard < 1000; guard++) {
		const rec_chunk_info *ci;
		rec_status st = rec_reader_next_chunk(r, &ci);
		if (st == REC_END)
			break;
		if (st != REC_OK) {
			note_problem(o, r, st);
			continue;
		}
		*drops += ci->dropped_events;
		rec_event ev;
		while ((st = rec_reader_next_chunk_event(r, &ev)) != REC_END) {
			if (st == REC_OK)
				note_event(o, &ev);
			else
				note_problem(o, r, st);
		}
	}
	rec_reader_get_stats(r, &o->stats);
	rec_reader_close(r);
}

static bool is_selected(uint32_t type, int how)
{
	return how == SEL_NONE || (how != SEL_EMPTY && (type == 1 || type == 7));
}

/* sel equals all with the events of unselected types taken out, in order;
 * problems and the other totals alike. */
static void assert_subset(const outcome *all, const outcome *sel, int how)
{
	size_t k = 0, skipped = 0;
	for (size_t i = 0; i < all->events; i++) {
		if (!is_selected(all->type[i], how)) {
			skipped++;
			continue;
		}
		assert_true(k < sel->events);
		assert_int_equal(sel->type[k], all->type[i]);
		assert_int_equal(sel->n[k], all->n[i]);
		assert_int_equal(sel->ticks[k], all->ticks[i]);
		k++;
	}
	assert_int_equal(k, sel->events);
	assert_int_equal(sel->stats.events, sel->events);
	assert_int_equal(sel->stats.events_skipped, skipped);
	assert_int_equal(all->stats.events_skipped, 0);
	assert_int_equal(sel->problems, all->problems);
	for (int i = 0; i < all->problems && i < 8; i++) {
		assert_int_equal(sel->st[i], all->st[i]);
		assert_int_equal(sel->chunk[i], all->chunk[i]);
		assert_int_equal(sel->offset[i], all->offset[i]);
	}
	assert_int_equal(sel->stats.chunks, all->stats.chunks);
	assert_int_equal(sel->stats.chunks_damaged, all->stats.chunks_damaged);
	assert_int_equal(sel->stats.bytes_skipped, all->stats.bytes_skipped);
	assert_int_equal(sel->stats.unknown_types, all->stats.unknown_types);
}

static outcome o_all, o_sel;

static void t_file_order(void **state)
{
	(void)state;
	uint64_t off[NCHUNKS + 1];
	membuf m = make_rec(off);
	const char *path = tpath("good.rec");
	write_file(path, m.p, m.len);
	free(m.p);
	read_all(path, 0, SEL_NONE, &o_all);
	assert_int_equal(o_all.events, NCHUNKS * PER);
	assert_int_equal(o_all.problems, 0);
	int hows[] = { SEL_NAMES, SEL_IDS, SEL_FILTER, SEL_EMPTY };
	for (size_t h = 0; h < sizeof hows / sizeof hows[0]; h++) {
		filter_calls = 0;
		read_all(path, 0, hows[h], &o_sel);
		assert_subset(&o_all, &o_sel, hows[h]);
		if (hows[h] == SEL_FILTER) /* once per type per chunk */
			assert_int_equal(filter_calls, 3 * NCHUNKS);
		if (hows[h] != SEL_EMPTY)
			assert_true(o_sel.events > 0 && o_sel.events < o_all.events);
		else
			assert_int_equal(o_sel.events, 0);
	}
}

static void t_ordered(void **state)
{
	(void)state;
	const char *path = tpath("good.rec");
	read_all(path, REC_READ_ORDERED, SEL_NONE, &o_all);
	assert_int_equal(o_all.events, NCHUNKS * PER);
	/* the chunks' times interleave: the order is not the file's */
	bool merged = false;
	for (size_t i = 1; i < o_all.events; i++) {
		assert_true(o_all.ticks[i - 1] <= o_all.ticks[i]);
		if (o_all.n[i] < o_all.n[i - 1])
			merged = true;
	}
	assert_true(merged);
	int hows[] = { SEL_NAMES, SEL_IDS, SEL_FILTER, SEL_EMPTY };
	for (size_t h = 0; h < sizeof hows / sizeof hows[0]; h++) {
		read_all(path, REC_READ_ORDERED, hows[h], &o_sel);
		assert_subset(&o_all, &o_sel, hows[h]);
	}
}

static void t_chunk_events_and_drops(void **state)
{
	(void)state;
	const char *path = tpath("good.rec");
	uint64_t drops_all, drops_sel;
	read_chunks(path, SEL_NONE, &o_all, &drops_all);
	read_chunks(path, SEL_NAMES, &o_sel, &drops_sel);
	assert_int_equal(drops_all, NCHUNKS * DROPS_PER_CHUNK);
	assert_int_equal(drops_sel, drops_all);
	assert_subset(&o_all, &o_sel, SEL_NAMES);
}

static void t_state(void **state)
{
	(void)state;
	rec_reader *r;
	assert_int_equal(rec_reader_open_path(&r, tpath("good.rec"), NULL), REC_OK);
	/* a chunk entered, its events not read: still possible */
	const rec_chunk_info *ci;
	assert_int_equal(rec_reader_next_chunk(r, &ci), REC_OK);
	assert_int_equal(rec_reader_select_type_names(r, (const char *const[]){ "t.Wait" }, 1), REC_OK);
	rec_event ev;
	assert_int_equal(rec_reader_next_event(r, &ev), REC_OK);
	assert_string_equal(ev.type->name, "t.Wait");
	/* events read: the selection stays as it was */
	assert_int_equal(rec_reader_select_types(r, NULL, NULL), REC_ERR_STATE);
	assert_int_equal(rec_reader_problem(r)->status, REC_ERR_STATE);
	assert_int_equal(rec_reader_select_type_ids(r, (const uint32_t[]){ 2 }, 1), REC_ERR_STATE);
	assert_int_equal(rec_reader_next_event(r, &ev), REC_OK);
	assert_string_equal(ev.type->name, "t.Wait");
	rec_reader_close(r);
	assert_int_equal(rec_reader_select_types(NULL, NULL, NULL), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_reader_open_path(&r, tpath("good.rec"), NULL), REC_OK);
	assert_int_equal(rec_reader_select_type_names(r, NULL, 2), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_reader_select_type_ids(r, NULL, 1), REC_ERR_INVALID_ARG);
	rec_reader_close(r);
}

/* A damaged chunk is reported with a selection as without one: chunk 1
 * (mixed types) with a flipped payload byte, and chunk 3, which holds only
 * t.Sample events, the type the selection leaves out. */
static void t_damaged(void **state)
{
	(void)state;
	uint64_t off[NCHUNKS + 1];
	membuf m = make_rec(off);
	m.p[off[1] + (off[2] - off[1]) * 3 / 4] ^= 0x40;
	m.p[off[3] + (off[4] - off[3]) * 3 / 4] ^= 0x40;
	const char *path = tpath("damaged.rec");
	write_file(path, m.p, m.len);
	free(m.p);
	uint32_t flags[] = { 0, REC_READ_ORDERED };
	for (size_t f = 0; f < 2; f++) {
		read_all(path, flags[f], SEL_NONE, &o_all);
		assert_int_equal(o_all.problems, 2);
		assert_int_equal(o_all.chunk[0], 1);
		assert_int_equal(o_all.chunk[1], 3);
		assert_int_equal(o_all.stats.chunks_damaged, 2);
		assert_int_equal(o_all.events, (NCHUNKS - 2) * PER);
		int hows[] = { SEL_NAMES, SEL_FILTER, SEL_EMPTY };
		for (size_t h = 0; h < sizeof hows / sizeof hows[0]; h++) {
			read_all(path, flags[f], hows[h], &o_sel);
			assert_subset(&o_all, &o_sel, hows[h]);
		}
	}
	uint64_t drops_all, drops_sel;
	read_chunks(path, SEL_NONE, &o_all, &drops_all);
	read_chunks(path, SEL_NAMES, &o_sel, &drops_sel);
	assert_int_equal(drops_sel, drops_all);
	assert_int_equal(o_sel.problems, o_all.problems);
	assert_true(o_all.problems >= 2);
	assert_subset(&o_all, &o_sel, SEL_NAMES);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_file_order), cmocka_unit_test(t_ordered),
		cmocka_unit_test(t_chunk_events_and_drops), cmocka_unit_test(t_state),
		cmocka_unit_test(t_damaged),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
