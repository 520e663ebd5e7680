/* SPDX-License-Identifier: MIT */
/*
 * damage.h - test support shared by the reader's damage tests
 * (tests/unit/read/test_reader_damage.c, test_scan.c, test_stats.c,
 * test_payload.c, test_metadata.c, test_sections.c): a real recording of
 * numbered events written to memory by the writer (make_rec), a reader
 * drained into an outcome (events read, problems reported), chunks crafted
 * by hand with valid checksums (craft, fix_header_crc), and a scratch
 * directory /tmp/PROGRAM.XXXXXX (setup and teardown for
 * cmocka_run_group_tests, tpath, write_file).
 *
 * Header-only on purpose, like readback.h: the helpers assert with cmocka,
 * and every object in tests/lib (*.c) is also linked into the tests/helpers
 * programs, which are not linked with -lcmocka.  Include it from one .c file
 * per binary, after <stdarg.h> <stddef.h> <stdint.h> <setjmp.h> <cmocka.h>.
 */
#ifndef REC_TESTS_LIB_DAMAGE_H
#define REC_TESTS_LIB_DAMAGE_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common_internal.h"
#include "rec/rec.h"
#include "membuf.h"
#include "write_file.h"

/* ---- the scratch directory ----------------------------------------------------------- */
static char tmpdir[200] __attribute__((unused));

static __attribute__((unused)) const char *tpath(const char *name)
{
	static char buf[4][256];
	static int k;
	char *p = buf[k++ & 3];
	snprintf(p, 256, "%s/%s", tmpdir, name);
	return p;
}

static __attribute__((unused)) int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/%s.XXXXXX", program_invocation_short_name);
	return mkdtemp(tmpdir) ? 0 : -1;
}

static __attribute__((unused)) int teardown(void **state)
{
	(void)state;
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- a real recording, read back -------------------------------------------------------- */
static const rec_field fields[] __attribute__((unused)) = {
	{ "n", "", "", REC_TYPE_U32, 0 },
	{ "s", "", "", REC_TYPE_STRING, 0 },
	{ "t", "", "", REC_TYPE_TEXT, 0 },
};

/* A recording of nchunks chunks of per events each (type 1, u32 n = event
 * number, a pooled string, a text); chunk offsets in off[] (off[nchunks] =
 * length). */
static __attribute__((unused)) membuf make_rec(int nchunks, int per, unsigned codec, uint64_t *off)
{
	membuf m = { 0 };
	rec_sink s = { mem_write, NULL, &m };
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.codec = codec;
	o.anchor_wall_ns = 1000;
	o.anchor_ticks = 1;
	rec_writer *w;
	assert_int_equal(rec_writer_open(&w, &s, &o), REC_OK);
	rec_type t = { 1, REC_EVENT_HAS_THREAD, "d.T", "", "", "", 3, fields };
	assert_int_equal(rec_writer_add_type(w, &t), REC_OK);
	uint64_t name, str;
	assert_int_equal(rec_writer_intern_string(w, "main", 4, &name), REC_OK);
	assert_int_equal(rec_writer_intern_string(w, "pooled", 6, &str), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 7, name), REC_OK);
	uint32_t n = 0;
	for (int c = 0; c < nchunks; c++) {
		off[c] = m.len;
		for (int i = 0; i < per; i++, n++) {
			assert_int_equal(rec_writer_begin(w, 1, 10 + n, 0, 1, 0), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, n), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, str), REC_OK);
			assert_int_equal(rec_writer_put_bytes(w, "text", 4), REC_OK);
			assert_int_equal(rec_writer_end(w), REC_OK);
		}
		if (c + 1 < nchunks)
			assert_int_equal(rec_writer_flush(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
	off[nchunks] = m.len;
	return m;
}

/* Read everything with next_event; record the event numbers and problems. */
typedef struct outcome {
	int events;
	uint32_t ev[64];
	int problems;
	rec_problem pr[8];
	char msg[8][512];
} outcome;

static __attribute__((unused)) void drain(rec_reader *r, outcome *o)
{
	memset(o, 0, sizeof(*o));
	rec_event ev;
	for (int guard = 0; guard < 10000; guard++) {
		rec_status st = rec_reader_next_event(r, &ev);
		if (st == REC_END)
			return;
		if (st == REC_OK) {
			assert_string_equal(ev.type->name, "d.T");
			assert_string_equal(ev.values[2].v.s.ptr, "text");
			if (o->events < 64)
				o->ev[o->events] = (uint32_t)ev.values[0].v.u;
			o->events++;
			continue;
		}
		assert_true(st < 0);
		const rec_problem *p = rec_reader_problem(r);
		assert_int_equal(p->status, st);
		assert_non_null(p->message);
		assert_true(strlen(p->message) > 0);
		if (o->problems < 8) {
			o->pr[o->problems] = *p;
			snprintf(o->msg[o->problems], 512, "%s", p->message);
		}
		o->problems++;
	}
	fail_msg("reader does not reach the end");
}

static __attribute__((unused)) void drain_mem(const void *p, size_t n, uint32_t flags, outcome *o)
{
	rec_reader *r;
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.flags = flags;
	assert_int_equal(rec_reader_open_mem(&r, p, n, "damaged", &ro), REC_OK);
	drain(r, o);
	rec_reader_close(r);
}

/* Recompute the Header_Checksum of a 128-byte header in place. */
static __attribute__((unused)) void fix_header_crc(uint8_t *d)
{
	rec_put_le32(d + REC_HOFF_HEADER_CRC, 0);
	rec_put_le32(d + REC_HOFF_HEADER_CRC, rec_crc32c(0, d, REC_HEADER_SIZE_V1));
}

/* ---- chunks crafted by hand -------------------------------------------------------------- */
typedef struct hsec {
	uint16_t kind;
	uint32_t items, raw; /* raw: 0 = data length */
	const void *data;
	size_t len;
} hsec;

static __attribute__((unused)) void craft(rec_buf *out, const hsec *s, int n, size_t extra, uint8_t codec, uint32_t flags)
{
	rec_buf pay = { 0 };
	uint64_t raw = 0;
	for (int i = 0; i < n; i++) {
		rec_section_header sh = { s[i].kind, 0, s[i].items, (uint32_t)s[i].len,
					  s[i].raw ? s[i].raw : (uint32_t)s[i].len };
		uint8_t hb[REC_SECTION_HEADER_SIZE];
		rec_section_header_encode(&sh, hb);
		assert_true(rec_buf_append(&pay, hb, sizeof(hb)));
		assert_true(rec_buf_append(&pay, s[i].data, s[i].len));
		raw += sh.raw_size;
	}
	for (size_t i = 0; i < extra; i++)
		assert_true(rec_buf_append(&pay, "", 1));
	rec_chunk_header h;
	memset(&h, 0, sizeof(h));
	h.major = 1;
	h.header_size = REC_HEADER_SIZE_V1;
	h.payload_size = pay.len;
	h.payload_crc = rec_crc32c(0, pay.data, pay.len);
	h.codec = codec;
	h.flags = flags;
	h.section_count = (uint16_t)n;
	h.raw_size = raw;
	h.event_count = 1;
	for (int i = 0; i < n; i++)
		if (s[i].kind == REC_SECTION_EVENTS)
			h.event_count = s[i].items;
	h.start_ticks = 100;
	h.tick_frequency = 1000000000u;
	uint8_t hb[REC_HEADER_SIZE_V1];
	rec_chunk_header_encode(&h, hb);
	assert_true(rec_buf_append(out, hb, sizeof(hb)));
	assert_true(rec_buf_append(out, pay.data, pay.len));
	rec_buf_free(&pay);
}

/* type 1 "x" {u8 v, string s}, flags HAS_THREAD */
static const uint8_t meta[] __attribute__((unused)) = { 1, 2, 1, 'x', 0, 0, 0, 2, 1, 'v', 0, 0x10, 0, 0,
				1, 's', 0, 0x60, 0, 0 };
static const uint8_t stats[] __attribute__((unused)) = { 2, 2, 0, 1, 1, 1, 6 };
static const uint8_t good_ev[] __attribute__((unused)) = { 5, 1, 2, 0, 9, 0 }; /* +1 tick, thread 0, v=9, s=null */

#endif /* REC_TESTS_LIB_DAMAGE_H */
