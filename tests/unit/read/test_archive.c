/* SPDX-License-Identifier: MIT */
/*
 * test_archive.c - rec_reader_chunk_events() (rec/archive.h), what
 * rec-summary's counter totals rest on: the events of one type in the
 * current chunk, the others stepped over by Size.  Written with the real
 * writer (zstd) into memory and read with the real reader: the wanted
 * events come out with their exact values and timestamps (the Time_Delta
 * chain runs through the skipped records, deltas of both signs), the
 * file-order iteration is not moved, a chunk without the type calls
 * nothing, a damaged payload is reported for its chunk, the callback's
 * status stops the walk, and rec_counters_add_chunk() gives the same totals
 * as decoding every event.  Also rec_reader_next_intact(), the archive
 * tools' loop: its tally of intact, damaged and newer-major chunks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "rec/archive.h"
#include "rec/counters.h"
#include "rec/rec.h"
#include "../../lib/membuf.h"

static const rec_field a_fields[] = { { "v", "V", "", REC_TYPE_U64, REC_UNIT_NONE } };
static const rec_field b_fields[] = {
	{ "s", "S", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "v", "V", "", REC_TYPE_I64, REC_UNIT_NONE },
};
static const rec_field c_fields[] = {
	{ "name", "Name", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "value", "Value", "", REC_TYPE_U64, REC_UNIT_COUNT },
};
static const rec_type a_type = { 5, REC_EVENT_HAS_DURATION, "app.A", "A", "", "app", 1, a_fields };
static const rec_type b_type = { 6, 0, "app.B", "B", "", "app", 2, b_fields };
static const rec_type c_type = { 24, 0, "rec.Counter", "Counter", "", "rec/Metrics", 2, c_fields };

#define N0 3000u /* events of each type in chunk 0 */
#define N1 500u  /* app.A events in chunk 1 */

static uint64_t b_ticks(unsigned i) { return 1000000u + i * 997u - (i % 7u) * 300u; }
static uint64_t a_ticks(unsigned i) { return 1000000u + i * 1000u; }

/* Chunk 0: A, B and rec.Counter interleaved (B's ticks jump back and forth
 * around A's); chunk 1: only A.  FINAL close. */
static membuf write_recording(void)
{
	membuf m = { NULL, 0, 0 };
	rec_sink sink = { mem_write, NULL, &m };
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.run_id = 77;
	o.pid = 1234;
	o.process_start_ns = 1764670000000000000ll;
	o.anchor_wall_ns = o.process_start_ns;
	o.anchor_ticks = 1;
	rec_writer *w = NULL;
	assert_int_equal(rec_writer_open(&w, &sink, &o), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &a_type), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &b_type), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &c_type), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 1, "odd", 3), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 2, "even", 4), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 3, "requests", 8), REC_OK);
	for (unsigned i = 0; i < N0; i++) {
		assert_int_equal(rec_writer_begin(w, 5, a_ticks(i), 10u + i, 0, 0), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, i), REC_OK);
		assert_int_equal(rec_writer_end(w), REC_OK);
		assert_int_equal(rec_writer_begin(w, 6, b_ticks(i), 0, 0, 0), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, (i & 1) ? 1 : 2), REC_OK);
		assert_int_equal(rec_writer_put_i64(w, -(int64_t)i * 3), REC_OK);
		assert_int_equal(rec_writer_end(w), REC_OK);
		if (i % 100 == 0) { /* 0, 10, 20, ... with a reset to 5 at i = 1500 */
			uint64_t v = i == 1500 ? 5 : i / 10;
			assert_int_equal(rec_writer_begin(w, 24, a_ticks(i) + 1, 0, 0, 0), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, 3), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, v), REC_OK);
			assert_int_equal(rec_writer_end(w), REC_OK);
		}
	}
	assert_int_equal(rec_writer_flush(w), REC_OK);
	for (unsigned i = 0; i < N1; i++) {
		assert_int_equal(rec_writer_begin(w, 5, a_ticks(N0 + i), 1, 0, 0), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, N0 + i), REC_OK);
		assert_int_equal(rec_writer_end(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
	return m;
}

typedef struct seen {
	unsigned n;
	unsigned stop_after; /* 0 = never */
	int bad;             /* events that differ from what was written */
} seen;

static rec_status on_b(void *opaque, const rec_event *ev)
{
	seen *s = opaque;
	unsigned i = s->n++;
	if (strcmp(ev->type->name, "app.B") != 0 || ev->ticks != b_ticks(i) ||
	    ev->value_count != 2 || ev->values[1].v.i != -(int64_t)i * 3 ||
	    strcmp(ev->values[0].v.s.ptr, (i & 1) ? "odd" : "even") != 0 ||
	    ev->chunk->index != 0)
		s->bad++;
	if (s->stop_after && s->n == s->stop_after)
		return REC_ERR_NOT_FOUND;
	return REC_OK;
}

static rec_reader *open_mem(const membuf *m)
{
	rec_reader *r = NULL;
	assert_int_equal(rec_reader_open_mem(&r, m->p, m->len, "mem", NULL), REC_OK);
	return r;
}

static void t_only_the_wanted_type(void **state)
{
	(void)state;
	membuf m = write_recording();
	rec_reader *r = open_mem(&m);
	const rec_chunk_info *ci;
	assert_int_equal(rec_reader_chunk_events(r, "app.B", on_b, NULL), REC_ERR_STATE);
	assert_int_equal(rec_reader_next_chunk(r, &ci), REC_OK);
	assert_int_equal(ci->index, 0);
	seen s = { 0, 0, 0 };
	assert_int_equal(rec_reader_chunk_events(r, "app.B", on_b, &s), REC_OK);
	assert_int_equal(s.n, N0);
	assert_int_equal(s.bad, 0);
	/* A second walk gives the same (nothing consumed). */
	seen s2 = { 0, 0, 0 };
	assert_int_equal(rec_reader_chunk_events(r, "app.B", on_b, &s2), REC_OK);
	assert_int_equal(s2.n, N0);
	/* A type the chunk does not have: nothing, no error. */
	assert_int_equal(rec_reader_chunk_events(r, "app.Missing", on_b, &s2), REC_OK);
	assert_int_equal(s2.n, N0);
	/* The file-order iteration still starts at the chunk's first event. */
	rec_event ev;
	assert_int_equal(rec_reader_next_event(r, &ev), REC_OK);
	assert_string_equal(ev.type->name, "app.A");
	assert_int_equal(ev.values[0].v.u, 0);
	assert_int_equal(ev.ticks, a_ticks(0));
	assert_int_equal(ev.duration_ticks, 10);
	rec_reader_close(r);

	/* Chunk 1 has only app.A: the callback is never called. */
	r = open_mem(&m);
	assert_int_equal(rec_reader_next_chunk(r, &ci), REC_OK);
	assert_int_equal(rec_reader_next_chunk(r, &ci), REC_OK);
	assert_int_equal(ci->index, 1);
	seen s3 = { 0, 0, 0 };
	assert_int_equal(rec_reader_chunk_events(r, "app.B", on_b, &s3), REC_OK);
	assert_int_equal(s3.n, 0);
	assert_int_equal(rec_reader_next_chunk(r, &ci), REC_END);
	rec_reader_close(r);
	free(m.p);
}

static void t_callback_stops(void **state)
{
	(void)state;
	membuf m = write_recording();
	rec_reader *r = open_mem(&m);
	const rec_chunk_info *ci;
	assert_int_equal(rec_reader_next_chunk(r, &ci), REC_OK);
	seen s = { 0, 17, 0 };
	assert_int_equal(rec_reader_chunk_events(r, "app.B", on_b, &s), REC_ERR_NOT_FOUND);
	assert_int_equal(s.n, 17);
	assert_int_equal(s.bad, 0);
	rec_reader_close(r);
	free(m.p);
}

static void t_damaged_payload(void **state)
{
	(void)state;
	membuf m = write_recording();
	rec_reader *r = open_mem(&m);
	const rec_chunk_info *ci;
	assert_int_equal(rec_reader_next_chunk(r, &ci), REC_OK);
	uint64_t end0 = ci->offset + ci->size;
	rec_reader_close(r);
	m.p[end0 - 40] ^= 0x5a; /* inside chunk 0's payload: its EVENTS */
	r = open_mem(&m);
	/* Format 1.1: the chunk's statistics are covered by Front_Checksum and
	 * are returned; its events are refused by the payload checksum. */
	assert_int_equal(rec_reader_next_chunk(r, &ci), REC_OK);
	assert_int_equal(ci->index, 0);
	seen s = { 0, 0, 0 };
	assert_int_equal(rec_reader_chunk_events(r, "app.B", on_b, &s), REC_ERR_CORRUPT);
	assert_int_equal(s.n, 0);
	const rec_problem *p = rec_reader_problem(r);
	assert_int_equal(p->chunk, 0);
	assert_non_null(strstr(p->message, "payload checksum"));
	/* The reader goes on with the next chunk. */
	assert_int_equal(rec_reader_next_chunk(r, &ci), REC_OK);
	assert_int_equal(ci->index, 1);
	rec_reader_close(r);
	free(m.p);
}

/* rec_counters_add_chunk() on every chunk == every event through rec_counters_add_event(). */
static void t_counters_same_as_full_decode(void **state)
{
	(void)state;
	membuf m = write_recording();
	rec_counters *fast = NULL, *full = NULL;
	assert_int_equal(rec_counters_open(&fast), REC_OK);
	assert_int_equal(rec_counters_open(&full), REC_OK);
	rec_reader *r = open_mem(&m);
	const rec_chunk_info *ci;
	while (rec_reader_next_chunk(r, &ci) == REC_OK)
		assert_int_equal(rec_counters_add_chunk(fast, r), REC_OK);
	rec_reader_close(r);
	r = open_mem(&m);
	rec_event ev;
	while (rec_reader_next_event(r, &ev) == REC_OK)
		assert_int_equal(rec_counters_add_event(full, &ev), REC_OK);
	rec_reader_close(r);
	size_t nf = 0, nd = 0;
	const rec_counter_total *a = rec_counters_get(fast, &nf), *b = rec_counters_get(full, &nd);
	assert_int_equal(nf, 1);
	assert_int_equal(nd, 1);
	assert_string_equal(a[0].name, "requests");
	/* 0, 10, ..., 140 (+140), a reset to 5 (counting went on from 0: +5),
	 * then 160 (+155) .. 290 (+130): 430. */
	assert_int_equal(a[0].total, 430);
	assert_int_equal(a[0].resets, 1);
	assert_int_equal(a[0].samples, 30);
	assert_int_equal(a[0].runs, 1);
	assert_int_equal(b[0].total, a[0].total);
	assert_int_equal(b[0].resets, a[0].resets);
	assert_int_equal(b[0].samples, a[0].samples);
	rec_counters_close(fast);
	rec_counters_close(full);
	free(m.p);
}

/* Chunk 0 of three copies: intact, payload damaged, major version 2
 * (header checksum recomputed, so it is a well-formed newer chunk). */
static void t_next_intact_tally(void **state)
{
	(void)state;
	membuf m = write_recording();
	rec_reader *r = open_mem(&m);
	const rec_chunk_info *ci;
	assert_int_equal(rec_reader_next_chunk(r, &ci), REC_OK);
	const size_t size0 = (size_t)ci->size;
	const uint64_t events0 = ci->event_count;
	rec_reader_close(r);
	membuf f = { NULL, 0, 0 };
	for (int k = 0; k < 3; k++)
		assert_int_equal(mem_write(&f, m.p, size0), 0);
	f.p[2 * size0 - 40] ^= 0x5a;           /* copy 1: payload */
	uint8_t *h = f.p + 2 * size0;          /* copy 2: major 2 */
	h[8] = 2;
	memset(h + 16, 0, 4);
	uint32_t crc = rec_crc32c(0, h, rec_le32(h + 12));
	rec_put_le32(h + 16, crc);

	r = open_mem(&f);
	rec_intact_tally t;
	memset(&t, 0, sizeof t);
	assert_int_equal(rec_reader_next_intact(r, &ci, &t), REC_OK);
	assert_int_equal(ci->index, 0);
	assert_int_equal(rec_reader_next_intact(r, &ci, &t), REC_ERR_CORRUPT);
	assert_null(ci);
	assert_int_equal(rec_reader_problem(r)->chunk, 1);
	assert_int_equal(rec_reader_next_intact(r, &ci, &t), REC_ERR_UNSUPPORTED_VERSION);
	assert_int_equal(rec_reader_problem(r)->chunk, 2);
	assert_int_equal(rec_reader_problem(r)->offset, 2 * size0);
	assert_int_equal(rec_reader_next_intact(r, &ci, &t), REC_END);
	assert_int_equal(t.chunks, 1);
	assert_int_equal(t.events, events0);
	assert_int_equal(t.bytes, size0);
	assert_int_equal(t.damaged, 2);
	assert_int_equal(t.damaged_bytes, size0); /* the 2.0 chunk's size is not read */
	assert_int_equal(t.unsupported, 1);
	assert_int_equal(t.problems, 2);
	assert_int_equal(t.stopped, 0);
	rec_reader_close(r);
	free(f.p);
	free(m.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_only_the_wanted_type),
		cmocka_unit_test(t_callback_stops),
		cmocka_unit_test(t_damaged_payload),
		cmocka_unit_test(t_counters_same_as_full_decode),
		cmocka_unit_test(t_next_intact_tally),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
