/* SPDX-License-Identifier: MIT */
/*
 * test_writer_pool.c - writer_pool.c, the writer's constant pools (open
 * addressing by caller-chosen, possibly sparse ids), through the real
 * writer into real files read back with the real reader.  Moved from
 * test_writer.c: t_retire_threads (entries forgotten, the others still
 * found).  New: many sparse ids of every pool found again (a second
 * definition with the same values is accepted, with other values
 * refused), interned strings by content, and each chunk carrying exactly
 * the entries its events reference, with their values.
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

#include "common/common_internal.h"
#include "rec/rec.h"
#include "write/writer_internal.h" /* rec_w_pool_count, rec_w_retire_* */
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

static rec_writer_options fixed_opts(unsigned codec)
{
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.codec = codec;
	o.run_id = 0x1122334455667788ull;
	o.pid = 4321;
	o.process_start_ns = 1700000000000000000ll;
	o.tick_frequency = 1000000000u;
	o.anchor_wall_ns = 1700000000500000000ll;
	o.anchor_ticks = 1000;
	return o;
}

static const rec_field ev_fields[] = {
	{ "name", "", "", REC_TYPE_STRING, 0 },
	{ "value", "", "", REC_TYPE_U64, 0 },
	{ "delta", "", "", REC_TYPE_I32, 0 },
};
static const rec_type ev_type = { 7, REC_EVENT_HAS_THREAD, "test.Ev", "", "", "", 3, ev_fields };

/* ---- retired threads (moved from test_writer.c) ---------------------------------------------------------------- */

/* ic_record() for thread th. */
static size_t ic_record_th(uint8_t *out, uint64_t ticks, uint64_t th, uint64_t str, uint64_t v)
{
	uint8_t body[64];
	size_t n = 0, k;
	n += rec_varint_put(body + n, 7);
	n += rec_varint_put(body + n, ticks);
	n += rec_varint_put(body + n, th);
	n += rec_varint_put(body + n, str);
	n += rec_varint_put(body + n, v);
	n += rec_varint_put(body + n, rec_zigzag(0));
	k = rec_varint_put(out, n);
	memcpy(out + k, body, n);
	return k + n;
}

#define NAME_ID(i) ((UINT64_C(1) << 32) + (i))

/* The recorder forgets exited threads and their private name strings:
 * removal from the open-addressing pools must keep every other entry
 * findable, must wait until the records appended before it are in a chunk,
 * and the strings' bytes are compacted once removed ones dominate. */
static void t_retire_threads(void **state)
{
	(void)state;
	const char *path = tpath("retire.rec");
	rec_writer_options o = fixed_opts(REC_CODEC_ZSTD);
	rec_writer *w = NULL;
	const uint64_t n = 10000;
	char name[32];
	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &ev_type), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 1, "first", 5), REC_OK);
	for (uint64_t i = 1; i <= n; i++) {
		snprintf(name, sizeof name, "thread-%08llu", (unsigned long long)i);
		assert_int_equal(rec_w_define_string_private(w, NAME_ID(i), name, strlen(name)), REC_OK);
		assert_int_equal(rec_writer_define_thread(w, i, 1000 + i, NAME_ID(i)), REC_OK);
	}
	/* thread 8 has a record pending, then it and two of every three go */
	uint8_t rec[64];
	size_t len = ic_record_th(rec, 100, 8, 1, 8);
	assert_int_equal(rec_writer_append_records(w, rec, len), REC_OK);
	for (uint64_t i = 1; i <= n; i++)
		if (i % 3 != 0)
			assert_int_equal(rec_w_retire_thread(w, i, NAME_ID(i)), REC_OK);
	rec_w_retire_now(w); /* a record is pending: nothing goes yet */
	assert_int_equal(rec_w_pool_count(w, REC_W_THREADS), n);
	assert_int_equal(rec_writer_flush(w), REC_OK);
	const uint64_t kept = n / 3;
	assert_int_equal(rec_w_pool_count(w, REC_W_THREADS), kept);
	assert_int_equal(rec_w_pool_count(w, REC_W_STRINGS), kept + 1);
	for (uint64_t i = 1; i <= n; i++) {
		snprintf(name, sizeof name, "thread-%08llu", (unsigned long long)i);
		if (i % 3 == 0) { /* still there, with its values and its name's bytes */
			assert_int_equal(rec_writer_define_thread(w, i, 1000 + i, NAME_ID(i)), REC_OK);
			assert_int_equal(rec_writer_define_thread(w, i, 1, NAME_ID(i)), REC_ERR_INVALID_ARG);
			assert_int_equal(rec_w_define_string_private(w, NAME_ID(i), name, strlen(name)), REC_OK);
			assert_int_equal(rec_w_define_string_private(w, NAME_ID(i), "x", 1), REC_ERR_INVALID_ARG);
		} else { /* gone: may be defined anew */
			assert_int_equal(rec_writer_define_thread(w, i, 1, 0), REC_OK);
		}
	}
	/* a kept thread is referenced after the retirement */
	len = ic_record_th(rec, 200, 9, 1, 9);
	assert_int_equal(rec_writer_append_records(w, rec, len), REC_OK);
	assert_int_equal(rec_writer_close(w), REC_OK);

	rec_reader *rd;
	rec_event e;
	rec_status st;
	int seen = 0;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	while ((st = rec_reader_next_event(rd, &e)) == REC_OK) {
		assert_non_null(e.thread);
		snprintf(name, sizeof name, "thread-%08llu", (unsigned long long)e.thread->id);
		assert_string_equal(e.thread->name, name);
		assert_int_equal(e.thread->os_tid, 1000 + e.thread->id);
		seen |= e.thread->id == 8 ? 1 : e.thread->id == 9 ? 2 : 4;
	}
	assert_int_equal(st, REC_END);
	rec_reader_close(rd);
	assert_int_equal(seen, 3);
}

/* ---- sparse ids, found again ---------------------------------------------------------- */
#define NSTR 20000u
#define NTHR 3000u

/* A sparse id (odd multiples of a large constant: every bit varies). */
static uint64_t sparse_id(uint64_t i, uint64_t salt)
{
	return ((i + 1) * 0x9E3779B97F4A7C15ull ^ salt) | 1;
}

static void str_of(uint64_t i, char *s, size_t cap)
{
	snprintf(s, cap, "str-%llu-%llx", (unsigned long long)i,
		 (unsigned long long)(i * 2654435761u));
}

static void t_sparse_lookup(void **state)
{
	(void)state;
	const char *path = tpath("pool.rec");
	rec_writer_options o = fixed_opts(REC_CODEC_ZSTD);
	rec_writer *w = NULL;
	char s[64];
	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &ev_type), REC_OK);
	for (uint64_t i = 0; i < NSTR; i++) {
		str_of(i, s, sizeof s);
		assert_int_equal(rec_writer_define_string(w, sparse_id(i, 0), s, strlen(s)), REC_OK);
	}
	for (uint64_t i = 0; i < NTHR; i++)
		assert_int_equal(rec_writer_define_thread(w, sparse_id(i, 0x55), 100000 + i,
							  sparse_id(i, 0)),
				 REC_OK);
	assert_int_equal(rec_w_pool_count(w, REC_W_STRINGS), NSTR);
	assert_int_equal(rec_w_pool_count(w, REC_W_THREADS), NTHR);
	/* every entry is found: the same definition again is accepted, another
	 * value for the id is refused, and nothing is added */
	for (uint64_t i = 0; i < NSTR; i++) {
		str_of(i, s, sizeof s);
		assert_int_equal(rec_writer_define_string(w, sparse_id(i, 0), s, strlen(s)), REC_OK);
		assert_int_equal(rec_writer_define_string(w, sparse_id(i, 0), "other", 5),
				 REC_ERR_INVALID_ARG);
	}
	for (uint64_t i = 0; i < NTHR; i++) {
		assert_int_equal(rec_writer_define_thread(w, sparse_id(i, 0x55), 100000 + i,
							  sparse_id(i, 0)),
				 REC_OK);
		assert_int_equal(rec_writer_define_thread(w, sparse_id(i, 0x55), 7, sparse_id(i, 0)),
				 REC_ERR_INVALID_ARG);
	}
	assert_int_equal(rec_w_pool_count(w, REC_W_STRINGS), NSTR);
	assert_int_equal(rec_w_pool_count(w, REC_W_THREADS), NTHR);

	/* interned strings: by content, new content a new id */
	uint64_t a = 0, b = 0, a2 = 0;
	assert_int_equal(rec_writer_intern_string(w, "interned-a", 10, &a), REC_OK);
	assert_int_equal(rec_writer_intern_string(w, "interned-b", 10, &b), REC_OK);
	assert_int_equal(rec_writer_intern_string(w, "interned-a", 10, &a2), REC_OK);
	assert_true(a != 0 && b != 0 && a != b);
	assert_int_equal(a, a2);
	assert_int_equal(rec_w_pool_count(w, REC_W_STRINGS), NSTR + 2);

	/* events referencing every 7th string and thread i % NTHR, four chunks */
	uint64_t nev = 0;
	for (uint64_t c = 0; c < 4; c++) {
		for (uint64_t i = c; i < NSTR; i += 7 * 4) {
			assert_int_equal(rec_writer_begin(w, 7, 2000 + nev, 0,
							  sparse_id(i % NTHR, 0x55), 0),
					 REC_OK);
			assert_int_equal(rec_writer_put_u64(w, sparse_id(i, 0)), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, i), REC_OK);
			assert_int_equal(rec_writer_put_i64(w, 0), REC_OK);
			assert_int_equal(rec_writer_end(w), REC_OK);
			nev++;
		}
		assert_int_equal(rec_writer_flush(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);

	/* every event names its string and its thread (and the thread's name)
	 * with the values defined */
	rec_reader *rd;
	rec_event e;
	rec_status st;
	uint64_t seen = 0;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	while ((st = rec_reader_next_event(rd, &e)) == REC_OK) {
		uint64_t i = e.values[1].v.u;
		assert_true(i < NSTR);
		str_of(i, s, sizeof s);
		assert_int_equal(e.values[0].v.s.len, strlen(s));
		assert_memory_equal(e.values[0].v.s.ptr, s, strlen(s));
		assert_non_null(e.thread);
		assert_int_equal(e.thread->id, sparse_id(i % NTHR, 0x55));
		assert_int_equal(e.thread->os_tid, 100000 + i % NTHR);
		str_of(i % NTHR, s, sizeof s);
		assert_string_equal(e.thread->name, s);
		seen++;
	}
	assert_int_equal(st, REC_END);
	rec_reader_stats rs;
	rec_reader_get_stats(rd, &rs);
	rec_reader_close(rd);
	assert_int_equal(seen, nev);
	assert_int_equal(rs.chunks, 5); /* the four flushed, and close's final one */
}

int main(void)
{
	if (rec_t_tmpdir_create(g_dir, sizeof g_dir, "rec-test-writer-pool") != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_retire_threads),
		cmocka_unit_test(t_sparse_lookup),
	};
	return rec_t_tmpdir_finish(g_dir, cmocka_run_group_tests(tests, NULL, NULL));
}
