/* SPDX-License-Identifier: MIT */
/*
 * test_writer_event.c - writer_event.c, the record builder (begin, put_*,
 * end) into the pending buffer, through the real writer into a real file
 * read back by the real reader: records of every size from a few bytes to
 * past 16 KiB (a Size of one, two and three varint bytes: end moves the
 * body), each field read back exactly; and builder errors in the middle of
 * records (a put of the wrong kind, a value out of its field's range, too
 * few or too many fields, a second begin) discard that record only: the
 * file holds exactly the good ones, in order, and the writer counts only
 * them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec/rec.h"
#include "../../lib/tmpdir.h"

static char g_dir[256];

static const char *tpath(const char *name)
{
	static char buf[4][512];
	static int k;
	char *p = buf[k++ & 3];
	snprintf(p, 512, "%s/%s", g_dir, name);
	return p;
}

static const rec_field mix_fields[] = {
	{ "s", "", "", REC_TYPE_STRING, 0 }, { "u8", "", "", REC_TYPE_U8, 0 },
	{ "i32", "", "", REC_TYPE_I32, 0 },  { "f64", "", "", REC_TYPE_F64, 0 },
	{ "text", "", "", REC_TYPE_TEXT, 0 }, { "blob", "", "", REC_TYPE_BLOB, 0 },
};
static const rec_type mix_type = { 5, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_DURATION, "w.Mix", "",
				   "", "", 6, mix_fields };

/* The values of record i. */
static uint64_t v_u8(uint64_t i) { return i * 7 % 256; }
static int64_t v_i32(uint64_t i) { return i % 2 ? -(int64_t)(i * 100003 % 2147483647) : (int64_t)i; }
static double v_f64(uint64_t i) { return (double)i * 0.5 - 3.25; }
static size_t v_text_len(uint64_t i) { return (size_t)(i * 37 % 200); }
static size_t v_blob_len(uint64_t i) { return i % 50 == 0 ? 17000 + (size_t)i : (size_t)(i * 11 % 300); }
static void v_fill(uint64_t i, uint8_t *p, size_t n, int salt)
{
	for (size_t k = 0; k < n; k++)
		p[k] = salt ? (uint8_t)(i + k * 3) : (uint8_t)('a' + (i + k) % 26);
}

static void put_good(rec_writer *w, uint64_t i, uint8_t *tmp)
{
	assert_int_equal(rec_writer_begin(w, 5, 1000 + 10 * i, i % 5, 1, 0), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 1 + i % 2), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, v_u8(i)), REC_OK);
	assert_int_equal(rec_writer_put_i64(w, v_i32(i)), REC_OK);
	assert_int_equal(rec_writer_put_f64(w, v_f64(i)), REC_OK);
	v_fill(i, tmp, v_text_len(i), 0);
	assert_int_equal(rec_writer_put_bytes(w, tmp, v_text_len(i)), REC_OK);
	v_fill(i, tmp, v_blob_len(i), 1);
	assert_int_equal(rec_writer_put_bytes(w, tmp, v_blob_len(i)), REC_OK);
	assert_int_equal(rec_writer_end(w), REC_OK);
}

/* A record that goes wrong in one of several ways (by i), leaving the
 * builder without a record. */
static void put_bad(rec_writer *w, uint64_t i)
{
	assert_int_equal(rec_writer_begin(w, 5, 1000 + 10 * i, 0, 1, 0), REC_OK);
	switch (i % 6) {
	case 0: /* a float into the string field */
		assert_int_equal(rec_writer_put_f64(w, 1.0), REC_ERR_INVALID_ARG);
		break;
	case 1: /* u8 out of range */
		assert_int_equal(rec_writer_put_u64(w, 1), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, 256), REC_ERR_INVALID_ARG);
		break;
	case 2: /* i32 out of range */
		assert_int_equal(rec_writer_put_u64(w, 1), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, 1), REC_OK);
		assert_int_equal(rec_writer_put_i64(w, (int64_t)INT32_MAX + 1), REC_ERR_INVALID_ARG);
		break;
	case 3: /* too few fields */
		assert_int_equal(rec_writer_put_u64(w, 1), REC_OK);
		assert_int_equal(rec_writer_end(w), REC_ERR_INVALID_ARG);
		break;
	case 4: /* too many */
		assert_int_equal(rec_writer_put_u64(w, 1), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, 1), REC_OK);
		assert_int_equal(rec_writer_put_i64(w, 1), REC_OK);
		assert_int_equal(rec_writer_put_f64(w, 1.0), REC_OK);
		assert_int_equal(rec_writer_put_bytes(w, "t", 1), REC_OK);
		assert_int_equal(rec_writer_put_bytes(w, "b", 1), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, 1), REC_ERR_INVALID_ARG);
		break;
	default: /* begin while a record is open: the open one is discarded */
		assert_int_equal(rec_writer_put_u64(w, 1), REC_OK);
		assert_int_equal(rec_writer_begin(w, 5, 1, 0, 1, 0), REC_ERR_STATE);
		break;
	}
	/* nothing open now */
	assert_int_equal(rec_writer_put_u64(w, 1), REC_ERR_STATE);
	assert_int_equal(rec_writer_end(w), REC_ERR_STATE);
}

static void t_builder(void **state)
{
	(void)state;
	const char *path = tpath("builder.rec");
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.codec = REC_CODEC_ZSTD;
	o.tick_frequency = 1000000000u;
	o.anchor_wall_ns = 1700000000000000000;
	o.anchor_ticks = 0;
	rec_writer *w = NULL;
	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &mix_type), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 1, "one", 3), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 2, "two", 3), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 77, 0), REC_OK);
	uint8_t *tmp = malloc(20000);
	assert_non_null(tmp);
	const uint64_t n = 600;
	uint64_t good = 0;
	for (uint64_t i = 0; i < n; i++) {
		if (i % 4 == 3) {
			put_bad(w, i);
			continue;
		}
		put_good(w, i, tmp);
		good++;
		if (i % 200 == 199)
			assert_int_equal(rec_writer_flush(w), REC_OK);
	}
	rec_writer_stats ws;
	assert_int_equal(rec_writer_flush(w), REC_OK);
	rec_writer_get_stats(w, &ws);
	assert_int_equal(ws.events, good);
	assert_int_equal(rec_writer_close(w), REC_OK);

	rec_reader *r;
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.flags = REC_READ_VERIFY;
	assert_int_equal(rec_reader_open_path(&r, path, &ro), REC_OK);
	rec_event e;
	rec_status st;
	uint64_t i = 0, seen = 0;
	while ((st = rec_reader_next_event(r, &e)) == REC_OK) {
		while (i % 4 == 3)
			i++; /* the bad ones are not there */
		assert_int_equal(e.ticks, 1000 + 10 * i);
		assert_int_equal(e.duration_ticks, i % 5);
		assert_non_null(e.thread);
		assert_int_equal(e.thread->os_tid, 77);
		assert_int_equal(e.values[0].v.s.len, 3);
		assert_memory_equal(e.values[0].v.s.ptr, i % 2 ? "two" : "one", 3);
		assert_int_equal(e.values[1].v.u, v_u8(i));
		assert_int_equal(e.values[2].v.i, v_i32(i));
		assert_true(e.values[3].v.f == v_f64(i));
		v_fill(i, tmp, v_text_len(i), 0);
		assert_int_equal(e.values[4].v.s.len, v_text_len(i));
		assert_memory_equal(e.values[4].v.s.ptr, tmp, v_text_len(i));
		v_fill(i, tmp, v_blob_len(i), 1);
		assert_int_equal(e.values[5].v.s.len, v_blob_len(i));
		if (v_blob_len(i))
			assert_memory_equal(e.values[5].v.s.ptr, tmp, v_blob_len(i));
		i++;
		seen++;
	}
	assert_int_equal(st, REC_END);
	rec_reader_close(r);
	assert_int_equal(seen, good);
	free(tmp);
}

int main(void)
{
	if (rec_t_tmpdir_create(g_dir, sizeof g_dir, "rec-test-writer-event") != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_builder),
	};
	return rec_t_tmpdir_finish(g_dir, cmocka_run_group_tests(tests, NULL, NULL));
}
