/* SPDX-License-Identifier: MIT */
/*
 * test_scan.c - scan.c, finding chunks in damaged input: the next chunk
 * header, recovery after damage (resynchronising on the next good header,
 * a cut tail), each problem reported with its status, chunk index and
 * offset.  Moved from test_reader_damage.c: t_every_truncation (every cut
 * point, in memory and in files), t_flip_each_byte (every byte flipped),
 * t_damaged_middle (a bad chunk among good ones), t_garbage_between
 * (garbage with decoy magics between chunks).  Recordings are made by the
 * real writer with the real compressor.
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
#include <unistd.h>

#include "common/common_internal.h"
#include "rec/rec.h"

static char tmpdir[] = "/tmp/test_scan.XXXXXX";

static const char *tpath(const char *name)
{
	static char buf[4][256];
	static int k;
	char *p = buf[k++ & 3];
	snprintf(p, 256, "%s/%s", tmpdir, name);
	return p;
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

typedef struct mem_sink {
	uint8_t *p;
	size_t n, cap;
} mem_sink;

static int mem_write(void *o, const void *b, size_t n)
{
	mem_sink *m = o;
	if (m->n + n > m->cap) {
		size_t c = (m->n + n) * 2;
		uint8_t *q = realloc(m->p, c);
		if (!q)
			return -ENOMEM;
		m->p = q;
		m->cap = c;
	}
	memcpy(m->p + m->n, b, n);
	m->n += n;
	return 0;
}

static const rec_field fields[] = {
	{ "n", "", "", REC_TYPE_U32, 0 },
	{ "s", "", "", REC_TYPE_STRING, 0 },
	{ "t", "", "", REC_TYPE_TEXT, 0 },
};

/* A recording of nchunks chunks of per events each (type 1, u32 n = event
 * number, a pooled string, a text); chunk offsets in off[] (off[nchunks] =
 * length). */
static mem_sink make_rec(int nchunks, int per, unsigned codec, uint64_t *off)
{
	mem_sink m = { 0 };
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
		off[c] = m.n;
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
	off[nchunks] = m.n;
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

static void drain(rec_reader *r, outcome *o)
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

static void drain_mem(const void *p, size_t n, uint32_t flags, outcome *o)
{
	rec_reader *r;
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.flags = flags;
	assert_int_equal(rec_reader_open_mem(&r, p, n, "damaged", &ro), REC_OK);
	drain(r, o);
	rec_reader_close(r);
}

/* ---- truncation ---------------------------------------------------------------- */
static void t_every_truncation(void **state)
{
	(void)state;
	uint64_t off[3];
	mem_sink m = make_rec(2, 5, REC_CODEC_ZSTD, off);
	outcome o;
	for (size_t cut = 0; cut <= m.n; cut++) {
		for (int mode = 0; mode < 3; mode++) {
			if (mode == 0) {
				drain_mem(m.p, cut, 0, &o);
			} else if (mode == 1) {
				drain_mem(m.p, cut, REC_READ_ORDERED, &o);
			} else {
				if (cut % 5 != 0 && cut != m.n)
					continue; /* files: a sample of the cuts */
				write_file(tpath("cut.rec"), m.p, cut);
				rec_reader *r;
				assert_int_equal(rec_reader_open_path(&r, tpath("cut.rec"), NULL), REC_OK);
				drain(r, &o);
				rec_reader_close(r);
			}
			if (cut == 0 || cut == off[1] || cut == m.n) {
				assert_int_equal(o.problems, 0);
				assert_int_equal(o.events, cut == 0 ? 0 : cut == off[1] ? 5 : 10);
				continue;
			}
			assert_int_equal(o.problems, 1);
			assert_int_equal(o.pr[0].status, REC_ERR_TRUNCATED);
			assert_non_null(strstr(o.msg[0], "truncated"));
			uint64_t at = cut < off[1] ? off[0] : off[1];
			assert_int_equal(o.pr[0].offset, at);
			assert_int_equal(o.pr[0].chunk, cut < off[1] ? 0 : 1);
			assert_int_equal(o.events, cut < off[1] ? 0 : 5);
			for (int i = 0; i < o.events; i++)
				assert_int_equal(o.ev[i], i);
			if (cut - at >= REC_HEADER_SIZE_V1) {
				char want[128];
				snprintf(want, sizeof(want), "needs %llu bytes, file ends after %llu",
					 (unsigned long long)(cut < off[1] ? off[1] : m.n) - at,
					 (unsigned long long)(cut - at));
				assert_non_null(strstr(o.msg[0], want));
			}
		}
	}
	free(m.p);
}

/* ---- flipped bytes ---------------------------------------------------------------- */
static void t_flip_each_byte(void **state)
{
	(void)state;
	uint64_t off[3];
	mem_sink m = make_rec(2, 3, REC_CODEC_ZSTD, off);
	uint8_t *d = malloc(m.n);
	assert_non_null(d);
	outcome o;
	for (size_t i = 0; i < m.n; i++) {
		for (int x = 0; x < 2; x++) {
			memcpy(d, m.p, m.n);
			d[i] ^= x ? 0xFF : 0x01;
			int hit = i < off[1] ? 0 : 1; /* damaged chunk */
			uint64_t hoff = off[hit];
			for (int ordered = 0; ordered < 2; ordered++) {
				drain_mem(d, m.n, ordered ? REC_READ_ORDERED : 0, &o);
				/* Exactly the other chunk's events, one problem. */
				assert_int_equal(o.events, 3);
				for (int k = 0; k < 3; k++)
					assert_int_equal(o.ev[k], (hit ? 0 : 3) + k);
				assert_int_equal(o.problems, 1);
				assert_int_equal(o.pr[0].offset, hoff);
				if (i - hoff >= REC_HEADER_SIZE_V1) {
					assert_int_equal(o.pr[0].status, REC_ERR_CORRUPT);
					assert_non_null(strstr(o.msg[0], "payload checksum mismatch"));
					assert_int_equal(o.pr[0].chunk, hit);
				} else if (i - hoff < REC_MAGIC_LEN) {
					assert_int_equal(o.pr[0].status, REC_ERR_BAD_MAGIC);
					assert_non_null(strstr(o.msg[0], "garbage"));
				} else if (i - hoff >= 12 && i - hoff < 16 && o.pr[0].status == REC_ERR_TRUNCATED) {
					/* Header_Size grew past the end of the input: the
					 * header cannot be checked, the input looks cut. */
					assert_int_equal(hit, 1);
					assert_non_null(strstr(o.msg[0], "truncated"));
				} else {
					assert_int_equal(o.pr[0].status, REC_ERR_CORRUPT);
					assert_non_null(strstr(o.msg[0], "damaged chunk header"));
					assert_int_equal(o.pr[0].chunk, hit);
				}
			}
			/* Summary with verification: the same chunk is reported. */
			rec_reader *r;
			rec_reader_options ro = REC_READER_OPTIONS_INIT;
			ro.flags = REC_READ_VERIFY;
			assert_int_equal(rec_reader_open_mem(&r, d, m.n, "f", &ro), REC_OK);
			const rec_chunk_info *c;
			rec_status st;
			int ok = 0, bad = 0;
			while ((st = rec_reader_next_chunk(r, &c)) != REC_END) {
				if (st == REC_OK) {
					assert_int_equal(c->offset, off[!hit]);
					assert_int_equal(rec_reader_verify_chunk(r), REC_OK);
					ok++;
				} else {
					bad++;
				}
			}
			assert_int_equal(ok, 1);
			assert_int_equal(bad, 1);
			rec_reader_close(r);
		}
	}
	free(d);
	free(m.p);
}

/* ---- a bad chunk among good ones ---------------------------------------------------- */
static void t_damaged_middle(void **state)
{
	(void)state;
	uint64_t off[4];
	mem_sink m = make_rec(3, 4, REC_CODEC_ZSTD, off);
	m.p[off[1] + 128 + 20] ^= 0x40; /* inside chunk 1's payload */
	write_file(tpath("mid.rec"), m.p, m.n);
	for (int mode = 0; mode < 3; mode++) {
		outcome o;
		if (mode < 2) {
			rec_reader *r;
			rec_reader_options ro = REC_READER_OPTIONS_INIT;
			ro.flags = mode ? REC_READ_ORDERED : 0;
			assert_int_equal(rec_reader_open_path(&r, tpath("mid.rec"), &ro), REC_OK);
			drain(r, &o);
			rec_reader_stats rs;
			rec_reader_get_stats(r, &rs);
			assert_int_equal(rs.chunks, 3);
			assert_int_equal(rs.chunks_damaged, 1);
			assert_int_equal(rs.events, 8);
			rec_reader_close(r);
		} else {
			drain_mem(m.p, m.n, 0, &o);
		}
		assert_int_equal(o.problems, 1);
		assert_int_equal(o.pr[0].status, REC_ERR_CORRUPT);
		assert_int_equal(o.pr[0].chunk, 1);
		assert_int_equal(o.pr[0].offset, off[1]);
		assert_int_equal(o.events, 8);
		static const uint32_t want[] = { 0, 1, 2, 3, 8, 9, 10, 11 };
		for (int i = 0; i < 8; i++)
			assert_int_equal(o.ev[i], want[i]);
	}
	free(m.p);
}

static void t_garbage_between(void **state)
{
	(void)state;
	uint64_t off[3];
	mem_sink m = make_rec(2, 3, REC_CODEC_ZSTD, off);
	/* 100 bytes of garbage with decoys: 0x89 bytes, a magic with a bad
	 * header, a magic cut short. */
	uint8_t g[100];
	for (int i = 0; i < 100; i++)
		g[i] = (uint8_t)(i * 37);
	g[5] = 0x89;
	memcpy(g + 10, m.p, 60); /* a real magic and header start */
	memcpy(g + 80, m.p, 6);
	size_t n = m.n + sizeof(g);
	uint8_t *d = malloc(n);
	assert_non_null(d);
	memcpy(d, m.p, off[1]);
	memcpy(d + off[1], g, sizeof(g));
	memcpy(d + off[1] + sizeof(g), m.p + off[1], m.n - off[1]);
	for (int mode = 0; mode < 2; mode++) {
		rec_reader *r;
		if (mode == 0) {
			assert_int_equal(rec_reader_open_mem(&r, d, n, "g", NULL), REC_OK);
		} else {
			write_file(tpath("garbage.rec"), d, n);
			assert_int_equal(rec_reader_open_path(&r, tpath("garbage.rec"), NULL), REC_OK);
		}
		outcome o;
		drain(r, &o);
		assert_int_equal(o.events, 6);
		for (int i = 0; i < 6; i++)
			assert_int_equal(o.ev[i], i);
		assert_int_equal(o.problems, 1);
		assert_int_equal(o.pr[0].status, REC_ERR_BAD_MAGIC);
		assert_int_equal(o.pr[0].offset, off[1]);
		char want[80];
		snprintf(want, sizeof(want), "skipped 100 bytes of garbage at offset %llu",
			 (unsigned long long)off[1]);
		assert_string_equal(o.msg[0], want);
		rec_reader_stats rs;
		rec_reader_get_stats(r, &rs);
		assert_int_equal(rs.bytes_skipped, 100);
		assert_int_equal(rs.chunks, 2);
		rec_reader_close(r);
	}
	free(d);
	free(m.p);
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
		cmocka_unit_test(t_every_truncation), cmocka_unit_test(t_flip_each_byte),
		cmocka_unit_test(t_damaged_middle),   cmocka_unit_test(t_garbage_between),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
