/* SPDX-License-Identifier: MIT */
/*
 * test_reader_damage.c - the reader on damaged input: bad magic, a newer
 * major version, huge declared sizes, malformed
 * sections and references (hand-crafted with valid checksums), and random
 * mutations.  Recordings are made by the real writer.  (Every truncation
 * point, every flipped byte, a damaged chunk among good ones and garbage
 * between chunks: test_scan.c; malformed sections: test_sections.c;
 * METADATA: test_metadata.c; implausible counts: test_stats.c; how little
 * of a file the statistics read: test_payload.c.)
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
#include "rec/analysis.h"
#include "rec/rec.h"
#include "../../lib/damage.h"
#include "../../lib/v10.h"

/* ---- magic, version, sizes -------------------------------------------------------- */
static void craft_header(rec_buf *out, uint16_t major, uint64_t payload_size, const void *payload,
			 size_t plen)
{
	rec_chunk_header h;
	memset(&h, 0, sizeof(h));
	h.major = major;
	h.header_size = REC_HEADER_SIZE_V1;
	h.payload_size = payload_size;
	h.payload_crc = rec_crc32c(0, payload, plen);
	h.codec = REC_CODEC_NONE;
	h.tick_frequency = 1000000000u;
	uint8_t hb[REC_HEADER_SIZE_V1];
	rec_chunk_header_encode(&h, hb);
	assert_true(rec_buf_append(out, hb, sizeof(hb)));
	assert_true(rec_buf_append(out, payload, plen));
}

static void t_wrong_magic(void **state)
{
	(void)state;
	uint64_t off[2];
	membuf m = make_rec(1, 3, REC_CODEC_ZSTD, off);
	m.p[3] = 'X';
	outcome o;
	drain_mem(m.p, m.len, 0, &o);
	assert_int_equal(o.events, 0);
	assert_int_equal(o.problems, 1);
	assert_int_equal(o.pr[0].status, REC_ERR_BAD_MAGIC);
	assert_int_equal(o.pr[0].offset, 0);
	assert_int_equal(o.pr[0].chunk, -1);
	char want[64];
	snprintf(want, sizeof(want), "skipped %zu bytes of garbage", m.len); /* where: the offset field */
	assert_string_equal(o.msg[0], want);
	/* A text file. */
	static const char text[] = "hello, this is not a recording\n";
	drain_mem(text, sizeof(text) - 1, 0, &o);
	assert_int_equal(o.problems, 1);
	assert_int_equal(o.pr[0].status, REC_ERR_BAD_MAGIC);
	free(m.p);
}

static void t_major_2(void **state)
{
	(void)state;
	uint64_t off[2];
	membuf m = make_rec(1, 3, REC_CODEC_LZ4, off);
	rec_buf f = { 0 };
	craft_header(&f, 2, 40, "a future chunk's payload, forty bytes...", 40);
	assert_true(rec_buf_append(&f, m.p, m.len));
	write_file(tpath("major2.rec"), f.data, f.len);
	rec_reader *r;
	assert_int_equal(rec_reader_open_path(&r, tpath("major2.rec"), NULL), REC_OK);
	outcome o;
	drain(r, &o);
	assert_int_equal(o.problems, 1);
	assert_int_equal(o.pr[0].status, REC_ERR_UNSUPPORTED_VERSION);
	assert_non_null(strstr(o.msg[0], "unsupported format version 2.0"));
	assert_int_equal(o.pr[0].offset, 0);
	assert_int_equal(o.pr[0].chunk, 0);
	assert_int_equal(o.events, 3); /* stepped over it */
	rec_reader_close(r);
	/* The chunk after it has index 1. */
	assert_int_equal(rec_reader_open_mem(&r, f.data, f.len, "m", NULL), REC_OK);
	const rec_chunk_info *c;
	assert_int_equal(rec_reader_next_chunk(r, &c), REC_ERR_UNSUPPORTED_VERSION);
	assert_int_equal(rec_reader_next_chunk(r, &c), REC_OK);
	assert_int_equal(c->index, 1);
	assert_int_equal(c->offset, 128 + 40);
	assert_int_equal(rec_reader_next_chunk(r, &c), REC_END);
	rec_reader_close(r);
	rec_buf_free(&f);
	free(m.p);
}

static void t_huge_payload(void **state)
{
	(void)state;
	/* Payload_Size 4 GiB in a tiny input: refused by the default limit. */
	rec_buf f = { 0 };
	craft_header(&f, 1, 4ull << 30, "tiny", 4);
	outcome o;
	drain_mem(f.data, f.len, 0, &o);
	assert_int_equal(o.problems, 1);
	assert_int_equal(o.pr[0].status, REC_ERR_LIMIT);
	assert_non_null(strstr(o.msg[0], "Payload_Size 4294967296 exceeds the limit"));
	/* With the limit raised: truncated, decided before allocating (the
	 * file's size is known). */
	write_file(tpath("huge.rec"), f.data, f.len);
	rec_reader *r;
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.max_payload_size = 8ull << 30;
	assert_int_equal(rec_reader_open_path(&r, tpath("huge.rec"), &ro), REC_OK);
	drain(r, &o);
	assert_int_equal(o.problems, 1);
	assert_int_equal(o.pr[0].status, REC_ERR_TRUNCATED);
	assert_non_null(strstr(o.msg[0], "needs 4294967424 bytes, file ends after 132"));
	rec_reader_close(r);
	rec_buf_free(&f);

	/* A small limit refuses real chunks by their header alone, and the
	 * reader steps over them. */
	uint64_t off[3];
	membuf m = make_rec(2, 3, REC_CODEC_ZSTD, off);
	ro.max_payload_size = 16;
	ro.flags = REC_READ_VERIFY;
	assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "m", &ro), REC_OK);
	const rec_chunk_info *c;
	assert_int_equal(rec_reader_next_chunk(r, &c), REC_ERR_LIMIT);
	assert_int_equal(rec_reader_problem(r)->offset, 0);
	assert_int_equal(rec_reader_next_chunk(r, &c), REC_ERR_LIMIT);
	assert_int_equal(rec_reader_problem(r)->offset, off[1]);
	assert_int_equal(rec_reader_problem(r)->chunk, 1);
	assert_int_equal(rec_reader_next_chunk(r, &c), REC_END);
	rec_reader_close(r);
	free(m.p);
}

/* A byte flipped in the EVENTS section (the end of chunk 1's payload) of a
 * format 1.0 recording: the header, METADATA and STATS are intact, but
 * rec_reader_next_chunk() without REC_READ_VERIFY must not return that
 * chunk's statistics as true, since 1.0 has only the whole payload's
 * checksum.  (1.1: t_front_checksum.) */
static void t_unverified_stats(void **state)
{
	(void)state;
	uint64_t off[4];
	membuf m = make_rec(3, 4, REC_CODEC_ZSTD, off);
	assert_int_equal(rec_t_to_v10(m.p, m.len), 3);
	m.p[off[2] - 3] ^= 0x10;
	write_file(tpath("stats.rec"), m.p, m.len);
	for (int src = 0; src < 2; src++) {
		rec_reader *r;
		if (src)
			assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "m", NULL), REC_OK);
		else
			assert_int_equal(rec_reader_open_path(&r, tpath("stats.rec"), NULL), REC_OK);
		const rec_chunk_info *c;
		assert_int_equal(rec_reader_next_chunk(r, &c), REC_OK);
		assert_int_equal(c->offset, 0);
		assert_int_equal(rec_reader_next_chunk(r, &c), REC_ERR_CORRUPT);
		const rec_problem *p = rec_reader_problem(r);
		assert_int_equal(p->chunk, 1);
		assert_int_equal(p->offset, off[1]);
		assert_non_null(strstr(p->message, "payload checksum mismatch"));
		assert_int_equal(rec_reader_next_chunk(r, &c), REC_OK);
		assert_int_equal(c->offset, off[2]);
		assert_int_equal(c->event_count, 4);
		assert_int_equal(rec_reader_next_chunk(r, &c), REC_END);
		rec_reader_stats rs;
		rec_reader_get_stats(r, &rs);
		assert_int_equal(rs.chunks_damaged, 1);
		rec_reader_close(r);
	}
	free(m.p);
}

/* Offset of the stored bytes of chunk `at`'s first section of kind `kind`. */
static size_t stored_of(const uint8_t *p, size_t at, uint16_t kind, uint32_t *size)
{
	size_t o = at + REC_HEADER_SIZE_V1;
	unsigned n = rec_le16(p + at + REC_HOFF_SECTION_COUNT);
	for (unsigned i = 0; i < n; i++) {
		rec_section_header sh;
		rec_section_header_decode(p + o, &sh);
		if (sh.kind == kind) {
			*size = sh.stored_size;
			return o + REC_SECTION_HEADER_SIZE;
		}
		o += REC_SECTION_HEADER_SIZE + sh.stored_size;
	}
	fail_msg("no section of kind %u", kind);
	return 0;
}

/* Format 1.1: Front_Checksum covers the section headers, METADATA and STATS.
 * A byte flipped in chunk 1's STATS, METADATA or a section header is refused
 * by the statistics-only path (next_chunk, file and memory), naming the front
 * checksum.  A byte flipped in its EVENTS is not seen by that path (the
 * statistics it presents come from checked bytes), but is by event decoding
 * and by REC_READ_VERIFY (the whole payload's checksum). */
static void t_front_checksum(void **state)
{
	(void)state;
	uint64_t off[4];
	for (int what = 0; what < 4; what++) {
		membuf m = make_rec(3, 4, REC_CODEC_ZSTD, off);
		assert_int_equal(rec_le16(m.p + off[1] + REC_HOFF_MINOR), REC_FORMAT_MINOR);
		assert_true(rec_le32(m.p + off[1] + REC_HOFF_FLAGS) & REC_CHUNK_FRONT_CRC);
		uint32_t sz;
		size_t at;
		if (what == 0) {
			at = stored_of(m.p, off[1], REC_SECTION_STATS, &sz) + sz / 2;
		} else if (what == 1) {
			at = stored_of(m.p, off[1], REC_SECTION_METADATA, &sz) + sz - 1;
		} else if (what == 2) { /* the EVENTS section header's Item_Count */
			at = stored_of(m.p, off[1], REC_SECTION_EVENTS, &sz) - REC_SECTION_HEADER_SIZE + 4;
		} else {
			at = off[2] - 3; /* inside the EVENTS stored bytes */
			(void)stored_of(m.p, off[1], REC_SECTION_EVENTS, &sz);
			assert_true(at >= off[2] - sz);
		}
		m.p[at] ^= what == 2 ? 0x01 : 0x10;
		write_file(tpath("front.rec"), m.p, m.len);
		for (int src = 0; src < 2; src++) {
			rec_reader *r;
			if (src)
				assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "m", NULL), REC_OK);
			else
				assert_int_equal(rec_reader_open_path(&r, tpath("front.rec"), NULL), REC_OK);
			const rec_chunk_info *c;
			assert_int_equal(rec_reader_next_chunk(r, &c), REC_OK);
			assert_int_equal(c->offset, 0);
			rec_status st = rec_reader_next_chunk(r, &c);
			if (what < 3) {
				assert_int_equal(st, REC_ERR_CORRUPT);
				const rec_problem *p = rec_reader_problem(r);
				assert_int_equal(p->chunk, 1);
				assert_int_equal(p->offset, off[1]);
				assert_non_null(strstr(p->message, "front checksum mismatch"));
			} else {
				/* statistics from checked bytes: presented */
				assert_int_equal(st, REC_OK);
				assert_int_equal(c->offset, off[1]);
				assert_int_equal(c->event_count, 4);
				assert_int_equal(c->minor, REC_FORMAT_MINOR);
				/* ... but its events are refused */
				rec_event ev;
				assert_int_equal(rec_reader_next_event(r, &ev), REC_ERR_CORRUPT);
				assert_non_null(strstr(rec_reader_problem(r)->message,
						       "payload checksum mismatch"));
				assert_int_equal(rec_reader_problem(r)->chunk, 1);
			}
			assert_int_equal(rec_reader_next_chunk(r, &c), REC_OK);
			assert_int_equal(c->offset, off[2]);
			assert_int_equal(rec_reader_next_chunk(r, &c), REC_END);
			rec_reader_close(r);
		}
		/* REC_READ_VERIFY: the whole payload is checked, whatever was hit. */
		rec_reader_options ro = REC_READER_OPTIONS_INIT;
		ro.flags = REC_READ_VERIFY;
		rec_reader *r;
		assert_int_equal(rec_reader_open_path(&r, tpath("front.rec"), &ro), REC_OK);
		const rec_chunk_info *c;
		assert_int_equal(rec_reader_next_chunk(r, &c), REC_OK);
		assert_int_equal(rec_reader_next_chunk(r, &c), REC_ERR_CORRUPT);
		assert_int_equal(rec_reader_problem(r)->chunk, 1);
		assert_non_null(strstr(rec_reader_problem(r)->message, "checksum mismatch"));
		assert_int_equal(rec_reader_next_chunk(r, &c), REC_OK);
		assert_int_equal(c->offset, off[2]);
		rec_reader_close(r);
		free(m.p);
	}
}

/* A chunk whose header checksum holds but whose Payload_Size is over the
 * limit (3 GiB), or runs past the end of the input: the reader names the
 * limit and resumes at the next good chunk header, so the chunk after it is
 * read (stepping over the declared size lost it). */
static void t_over_limit_resync(void **state)
{
	(void)state;
	for (int kind = 0; kind < 2; kind++) {
		uint64_t off[4];
		membuf m = make_rec(3, 4, REC_CODEC_ZSTD, off);
		uint64_t ps = kind ? (uint64_t)m.len : 3ull << 30;
		rec_put_le64(m.p + off[1] + REC_HOFF_PAYLOAD_SIZE, ps);
		fix_header_crc(m.p + off[1]);
		write_file(tpath("limit.rec"), m.p, m.len);
		for (int mode = 0; mode < 3; mode++) {
			outcome o;
			rec_reader *r;
			rec_reader_options ro = REC_READER_OPTIONS_INIT;
			ro.flags = mode == 1 ? REC_READ_ORDERED : 0;
			if (mode == 2)
				assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "m", &ro), REC_OK);
			else
				assert_int_equal(rec_reader_open_path(&r, tpath("limit.rec"), &ro), REC_OK);
			drain(r, &o);
			rec_reader_stats rs;
			rec_reader_get_stats(r, &rs);
			rec_reader_close(r);
			assert_int_equal(o.problems, 1);
			assert_int_equal(o.pr[0].chunk, 1);
			assert_int_equal(o.pr[0].offset, off[1]);
			if (kind == 0) {
				assert_int_equal(o.pr[0].status, REC_ERR_LIMIT);
				assert_non_null(strstr(o.msg[0], "declares 3 GiB, over the 256 MiB payload limit"));
			} else {
				assert_int_equal(o.pr[0].status, REC_ERR_CORRUPT);
				assert_non_null(strstr(o.msg[0], "runs past the end of the input"));
			}
			assert_int_equal(rs.chunks_damaged, 1);
			assert_int_equal(rs.bytes_skipped, off[2] - off[1]);
			assert_int_equal(o.events, 8);
			static const uint32_t want[] = { 0, 1, 2, 3, 8, 9, 10, 11 };
			for (int i = 0; i < 8; i++)
				assert_int_equal(o.ev[i], want[i]);
		}
		/* The chunk after it keeps its index and offset. */
		rec_reader *r;
		assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "m", NULL), REC_OK);
		const rec_chunk_info *c;
		assert_int_equal(rec_reader_next_chunk(r, &c), REC_OK);
		assert_true(rec_reader_next_chunk(r, &c) < 0);
		assert_int_equal(rec_reader_next_chunk(r, &c), REC_OK);
		assert_int_equal(c->index, 2);
		assert_int_equal(c->offset, off[2]);
		assert_int_equal(rec_reader_next_chunk(r, &c), REC_END);
		rec_reader_close(r);
		free(m.p);
	}
}

/* A record count that differs from Item_Count (more records, fewer): file
 * order and timestamp order behave the same (spec, "Damage"): every record
 * that decodes is returned, and the chunk is reported once. */
static void t_count_mismatch(void **state)
{
	(void)state;
	const hsec M = { REC_SECTION_METADATA, 1, 0, meta, sizeof(meta) };
	const hsec S = { REC_SECTION_STATS, 1, 0, stats, sizeof(stats) };
	uint8_t two[2 * sizeof(good_ev)];
	memcpy(two, good_ev, sizeof(good_ev));
	memcpy(two + sizeof(good_ev), good_ev, sizeof(good_ev));
	for (uint32_t items = 1; items <= 3; items += 2) {
		hsec e = { REC_SECTION_EVENTS, items, 0, two, sizeof(two) };
		hsec s[] = { M, S, e };
		rec_buf f = { 0 };
		craft(&f, s, 3, 0, 0, 0);
		/* a good chunk after it */
		craft(&f, (hsec[]){ M, S, { REC_SECTION_EVENTS, 1, 0, good_ev, sizeof(good_ev) } }, 3, 0, 0, 0);
		char want[64];
		snprintf(want, sizeof want, "holds 2 records but Item_Count is %u", items);
		for (int ordered = 0; ordered < 2; ordered++) {
			rec_reader *r;
			rec_reader_options ro = REC_READER_OPTIONS_INIT;
			ro.flags = ordered ? REC_READ_ORDERED : 0;
			assert_int_equal(rec_reader_open_mem(&r, f.data, f.len, "c", &ro), REC_OK);
			rec_event ev;
			rec_status st;
			int events = 0, problems = 0;
			while ((st = rec_reader_next_event(r, &ev)) != REC_END) {
				if (st == REC_OK) {
					assert_int_equal(ev.values[0].v.u, 9);
					events++;
					continue;
				}
				const rec_problem *p = rec_reader_problem(r);
				assert_int_equal(st, REC_ERR_CORRUPT);
				assert_int_equal(p->chunk, 0);
				assert_non_null(strstr(p->message, want));
				problems++;
			}
			rec_reader_stats rs;
			rec_reader_get_stats(r, &rs);
			rec_reader_close(r);
			assert_int_equal(events, 3);
			assert_int_equal(problems, 1);
			assert_int_equal(rs.chunks_damaged, 1);
		}
		rec_buf_free(&f);
	}
}

/* Invalid UTF-8 in a pooled string and in a text value (spec, "Damage"):
 * not damage; the reader returns the bytes as they are. */
static void t_invalid_utf8(void **state)
{
	(void)state;
	membuf m = { 0 };
	rec_sink sk = { mem_write, NULL, &m };
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	rec_writer *w;
	assert_int_equal(rec_writer_open(&w, &sk, &o), REC_OK);
	rec_type t = { 1, REC_EVENT_HAS_THREAD, "d.T", "", "", "", 3, fields };
	assert_int_equal(rec_writer_add_type(w, &t), REC_OK);
	uint64_t name, str;
	assert_int_equal(rec_writer_intern_string(w, "m\xffn", 3, &name), REC_OK);
	assert_int_equal(rec_writer_intern_string(w, "\xc3", 1, &str), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 7, name), REC_OK);
	assert_int_equal(rec_writer_begin(w, 1, 10, 0, 1, 0), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 5), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, str), REC_OK);
	assert_int_equal(rec_writer_put_bytes(w, "a\xed\xa0\x80z", 5), REC_OK);
	assert_int_equal(rec_writer_end(w), REC_OK);
	assert_int_equal(rec_writer_close(w), REC_OK);
	for (uint32_t flags = 0; flags <= REC_READ_ORDERED; flags += REC_READ_ORDERED) {
		rec_reader *r;
		rec_reader_options ro = REC_READER_OPTIONS_INIT;
		ro.flags = flags | REC_READ_VERIFY;
		assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "u", &ro), REC_OK);
		rec_event ev;
		assert_int_equal(rec_reader_next_event(r, &ev), REC_OK);
		assert_int_equal(ev.values[1].v.s.len, 1);
		assert_memory_equal(ev.values[1].v.s.ptr, "\xc3", 1);
		assert_int_equal(ev.values[2].v.s.len, 5);
		assert_memory_equal(ev.values[2].v.s.ptr, "a\xed\xa0\x80z", 5);
		assert_non_null(ev.thread);
		assert_int_equal(rec_reader_next_event(r, &ev), REC_END);
		rec_reader_close(r);
	}
	free(m.p);
}

/* ---- random damage ------------------------------------------------------------------- */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void t_random_mutations(void **state)
{
	(void)state;
	uint64_t off[4];
	membuf m = make_rec(3, 6, REC_CODEC_NONE, off);
	membuf z = make_rec(3, 6, REC_CODEC_ZSTD, off);
	uint8_t *d = malloc(m.len + 64);
	assert_non_null(d);
	/* REC_DAMAGE_ITERS=N runs more (a longer soak by hand). */
	const char *env = getenv("REC_DAMAGE_ITERS");
	long iters = env ? atol(env) : 3000;
	for (long it = 0; it < iters; it++) {
		membuf *src = it & 1 ? &z : &m;
		size_t n = src->len;
		memcpy(d, src->p, n);
		int edits = 1 + (int)(rnd() % 4);
		for (int e = 0; e < edits; e++) {
			size_t at = rnd() % n;
			switch (rnd() % 4) {
			case 0: d[at] ^= (uint8_t)(1u << (rnd() % 8)); break;
			case 1: d[at] = (uint8_t)rnd(); break;
			case 2: n = at + 1; break; /* truncate */
			default: /* duplicate a run of bytes */
				if (n + 16 <= src->len + 64) {
					memmove(d + at + 16, d + at, n - at);
					n += 16;
				}
				break;
			}
		}
		/* Payload checksums would catch these: also recompute them so
		 * the structure decoders see the damage. */
		if (it % 3 == 0 && n >= 128 && memcmp(d, rec_magic, 8) == 0) {
			uint64_t ps = rec_le64(d + 24);
			if (128 + ps <= n) {
				rec_put_le32(d + 20, rec_crc32c(0, d + 128, (size_t)ps));
				fix_header_crc(d);
			}
		}
		for (int mode = 0; mode < 3; mode++) {
			rec_reader *r;
			rec_reader_options ro = REC_READER_OPTIONS_INIT;
			ro.flags = mode == 1 ? REC_READ_ORDERED : mode == 2 ? REC_READ_VERIFY : 0;
			assert_int_equal(rec_reader_open_mem(&r, d, n, "rnd", &ro), REC_OK);
			rec_event ev;
			const rec_chunk_info *c;
			rec_status st;
			int steps = 0;
			if (mode == 2) {
				while ((st = rec_reader_next_chunk(r, &c)) != REC_END && steps++ < 1000)
					if (st == REC_OK)
						(void)rec_reader_verify_chunk(r);
			} else {
				while ((st = rec_reader_next_event(r, &ev)) != REC_END && steps++ < 1000)
					if (st == REC_OK)
						assert_non_null(ev.type);
			}
			assert_int_equal(st, REC_END);
			rec_reader_close(r);
		}
	}
	free(d);
	free(m.p);
	free(z.p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_wrong_magic),      cmocka_unit_test(t_major_2),
		cmocka_unit_test(t_huge_payload),
		cmocka_unit_test(t_random_mutations), cmocka_unit_test(t_unverified_stats),
		cmocka_unit_test(t_front_checksum),
		cmocka_unit_test(t_over_limit_resync),
		cmocka_unit_test(t_count_mismatch), cmocka_unit_test(t_invalid_utf8),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
