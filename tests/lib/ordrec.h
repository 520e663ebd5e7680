/* SPDX-License-Identifier: MIT */
/*
 * ordrec.h - test support shared by tests/unit/read/test_reader.c,
 * test_order.c and test_event.c: recordings of test.Ord events (a u32 seq,
 * threads 1 and 2) made by the real writer into a membuf (membuf.h), and
 * the three-chunk layout whose timestamps the order tests sort.
 *
 * Header-only on purpose, like readback.h: the helpers assert with cmocka,
 * and every object in tests/lib (*.c) is also linked into the tests/helpers
 * programs, which are not linked with -lcmocka.  Include it from one .c file
 * per binary, after <stdarg.h> <stddef.h> <stdint.h> <setjmp.h> <cmocka.h>.
 */
#ifndef REC_TESTS_LIB_ORDREC_H
#define REC_TESTS_LIB_ORDREC_H

#include <stdint.h>

#include "rec/rec.h"
#include "membuf.h"

/* test.Ord: a u32 seq. */
static const rec_field ord_fields[] __attribute__((unused)) = { { "seq", "", "", REC_TYPE_U32, 0 } };

static __attribute__((unused)) rec_writer *ord_writer(membuf *m, uint64_t run, int64_t wall)
{
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.run_id = run;
	o.anchor_wall_ns = wall;
	o.anchor_ticks = 0;
	o.tick_frequency = 1000000000u;
	rec_sink s = { mem_write, NULL, m };
	rec_writer *w;
	assert_int_equal(rec_writer_open(&w, &s, &o), REC_OK);
	rec_type t = { 1, REC_EVENT_HAS_THREAD, "test.Ord", "", "", "", 1, ord_fields };
	assert_int_equal(rec_writer_add_type(w, &t), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 11, 0), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 2, 12, 0), REC_OK);
	return w;
}

static __attribute__((unused)) void ord_put(rec_writer *w, uint64_t ticks, uint32_t seq)
{
	assert_int_equal(rec_writer_begin(w, 1, ticks, 0, 1 + seq % 2, 0), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, seq), REC_OK);
	assert_int_equal(rec_writer_end(w), REC_OK);
}

/* Chunk 0: 100 300 200 500 400(a); chunk 1: 250 450 600 400(b) 350; chunk 2:
 * 1000 900 (after the others: its own group). seq = position in the file. */
static const uint64_t ord_ticks[] __attribute__((unused)) = { 100, 300, 200, 500, 400, 250, 450, 600, 400, 350, 1000, 900 };

static const int ord_chunk_end[] __attribute__((unused)) = { 5, 10, 12 };

#endif /* REC_TESTS_LIB_ORDREC_H */
