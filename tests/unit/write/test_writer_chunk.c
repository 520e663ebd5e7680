/* SPDX-License-Identifier: MIT */
/* test_writer_chunk.c (was test_writer_stream.c) - writer_chunk.c, the
 * writer's incremental chunk build (records taken into the
 * open chunk as they are appended, EVENTS compressed by the real zstd as a
 * stream) read back by the real reader: every event, its time and fields,
 * chunks that verify completely (checksums, STATS against the events, pool
 * references), Start_Ticks chosen before an earlier record arrives
 * (negative First_Delta), a batch with a bad record taken back whole, a
 * record waiting for its definition, and a file cut inside a streamed
 * chunk. */
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
#include "write/writer_internal.h"

static char g_dir[256];

static const char *tpath(const char *name)
{
	static char buf[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
	return buf[k];
}

static const rec_field ev_fields[] = {
	{ "name", "", "", REC_TYPE_STRING, 0 },
	{ "value", "", "", REC_TYPE_U64, 0 },
	{ "delta", "", "", REC_TYPE_I32, 0 },
};
static const rec_type ev_type = { 7, REC_EVENT_HAS_THREAD, "test.Ev", "", "", "", 3, ev_fields };

static rec_writer_options opts(unsigned codec, uint32_t chunk)
{
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.codec = codec;
	o.run_id = 0x1122334455667788ull;
	o.pid = 4321;
	o.process_start_ns = 1700000000000000000ll;
	o.tick_frequency = 1000000000u;
	o.anchor_wall_ns = 1700000000500000000ll;
	o.anchor_ticks = 1000;
	o.chunk_events_size = chunk;
	return o;
}

/* One interchange record of ev_type (thread 1 or 2, string 1..16). */
static size_t ic_record(uint8_t *out, uint64_t ticks, uint64_t thread, uint64_t str, uint64_t v,
			int64_t d)
{
	uint8_t body[64];
	size_t n = 0, k;
	n += rec_varint_put(body + n, 7);
	n += rec_varint_put(body + n, ticks);
	n += rec_varint_put(body + n, thread);
	n += rec_varint_put(body + n, str);
	n += rec_varint_put(body + n, v);
	n += rec_varint_put(body + n, rec_zigzag(d));
	k = rec_varint_put(out, n);
	memcpy(out + k, body, n);
	return k + n;
}

/* The i-th event of the test sequence: ticks mostly rising, every 4001st
 * event (after the first) 5000 ticks before the run's start, so it arrives
 * after Start_Ticks was chosen from earlier ones. */
static uint64_t ev_ticks(uint64_t i)
{
	return (i % 4001 == 4000) ? 1000000 - 5000 + i : 1000000 + 37 * i + (i * 7919 % 13);
}

static void define_all(rec_writer *w)
{
	char name[32];
	assert_int_equal(rec_writer_add_type(w, &ev_type), REC_OK);
	for (int s = 1; s <= 16; s++) {
		snprintf(name, sizeof name, "name-%02d", s);
		assert_int_equal(rec_writer_define_string(w, (uint64_t)s, name, strlen(name)), REC_OK);
	}
	assert_int_equal(rec_writer_define_string(w, 100, "t1", 2), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 11, 100), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 2, 22, 0), REC_OK);
}

/* Append events [from, to) in batches of batch records. */
static void append_range(rec_writer *w, uint64_t from, uint64_t to, size_t batch)
{
	uint8_t *buf = malloc(batch * 48);
	assert_non_null(buf);
	for (uint64_t i = from; i < to;) {
		size_t len = 0;
		for (size_t k = 0; k < batch && i < to; k++, i++)
			len += ic_record(buf + len, ev_ticks(i), 1 + i % 2, 1 + i % 16, i * 7919,
					 -(int64_t)(i % 1000));
		assert_int_equal(rec_writer_append_records(w, buf, len), REC_OK);
	}
	free(buf);
}

/* Read path back: every chunk verifies, its events are exactly events
 * [0, n) of the sequence (skipping those in skip, sorted) in order.
 * Returns the chunks; *negative: chunks whose First_Delta < 0. */
static size_t check_file(const char *path, uint64_t n, const uint64_t *skip, size_t nskip,
			 size_t *negative, int want_truncated)
{
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	rec_reader *rd = NULL;
	const rec_chunk_info *ci;
	uint64_t i = 0;
	size_t chunks = 0, sk = 0;
	rec_status st;
	ro.flags = REC_READ_VERIFY;
	if (negative)
		*negative = 0;
	assert_int_equal(rec_reader_open_path(&rd, path, &ro), REC_OK);
	while ((st = rec_reader_next_chunk(rd, &ci)) == REC_OK) {
		rec_event e;
		chunks++;
		assert_int_equal(rec_reader_verify_chunk(rd), REC_OK);
		if (negative && ci->event_count && ci->first_ticks < ci->start_ticks)
			(*negative)++;
		while ((st = rec_reader_next_chunk_event(rd, &e)) == REC_OK) {
			while (sk < nskip && skip[sk] == i) {
				sk++;
				i++;
			}
			assert_true(i < n);
			assert_int_equal(e.ticks, ev_ticks(i));
			assert_non_null(e.thread);
			assert_int_equal(e.thread->os_tid, i % 2 ? 22 : 11);
			assert_int_equal(e.values[1].v.u, i * 7919);
			assert_int_equal(e.values[2].v.i, -(int64_t)(i % 1000));
			char name[32];
			snprintf(name, sizeof name, "name-%02d", (int)(1 + i % 16));
			assert_int_equal(e.values[0].v.s.len, strlen(name));
			assert_memory_equal(e.values[0].v.s.ptr, name, strlen(name));
			i++;
		}
		assert_int_equal(st, REC_END);
	}
	if (want_truncated) {
		assert_int_equal(st, REC_ERR_TRUNCATED);
		while ((st = rec_reader_next_chunk(rd, &ci)) == REC_OK)
			chunks++;
	}
	assert_int_equal(st, REC_END);
	while (sk < nskip && skip[sk] == i) {
		sk++;
		i++;
	}
	if (!want_truncated)
		assert_int_equal(i, n);
	rec_reader_close(rd);
	return chunks;
}

/* Each chunk's EVENTS section of the file at path: how many are a zstd
 * frame with the header a stream's end writes (a 4-byte content size, not
 * single-segment: a one-shot compression of these sizes writes a
 * single-segment frame), or, split (1.3), four streams each such a frame. */
static int streamed_header(const uint8_t *f)
{
	return rec_le32(f) == 0xFD2FB528u && (f[4] >> 6) == 2 && !(f[4] & 0x20);
}

static size_t streamed_frames(const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t size, off = 0, n = 0;
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	size = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(size);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, size, f), size);
	fclose(f);
	while (off + 128 <= size) {
		const uint8_t *h = b + off;
		uint32_t hsize = rec_le32(h + 12);
		uint64_t payload = rec_le64(h + 24);
		uint16_t nsec = (uint16_t)(h[38] | h[39] << 8);
		size_t p = off + hsize;
		const int split = (rec_le32(h + 32) & REC_CHUNK_SPLIT_EVENTS) != 0;
		for (uint16_t k = 0; k < nsec; k++) {
			uint16_t kind = (uint16_t)(b[p] | b[p + 1] << 8);
			uint32_t stored = rec_le32(b + p + 8);
			if (kind == REC_SECTION_EVENTS && (b[p + 2] & 1) && !split &&
			    streamed_header(b + p + 16))
				n++;
			if (kind == REC_SECTION_EVENTS && (b[p + 2] & 1) && split) {
				/* 1.3: every stream that has bytes is such a frame */
				size_t at = p + 16 + 32;
				int all = 1;
				for (int i = 0; i < 4; i++) {
					uint32_t sst = rec_le32(b + p + 16 + 8 * i);
					if (sst && !streamed_header(b + at))
						all = 0;
					at += sst;
				}
				n += all;
			}
			p += 16 + stored;
		}
		off += hsize + payload;
	}
	free(b);
	return n;
}

/* Many small appends (as the recorder's rounds): several chunks, each a
 * multi-block zstd frame built while the records came, read back exactly;
 * chunks where an earlier record came after Start_Ticks was chosen say so
 * with a negative First_Delta and their events keep their times. */
static void streamed_chunks(uint32_t layout)
{
	const char *path = tpath("streamed.rec");
	rec_writer_options o = opts(REC_CODEC_ZSTD, 400u << 10);
	o.events_layout = layout;
	rec_writer *w = NULL;
	rec_writer_stats ws;
	size_t negative = 0;
	const uint64_t n = 120000;

	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	define_all(w);
	append_range(w, 0, n, 97);
	rec_writer_get_stats(w, &ws);
	assert_true(ws.chunks >= 2); /* closed at chunk_size while appending */
	assert_int_equal(rec_writer_close(w), REC_OK);
	size_t chunks = check_file(path, n, NULL, 0, &negative, 0);
	assert_true(chunks >= 3);
	size_t sf = streamed_frames(path); /* the last chunk may be too small to stream */
	assert_true(sf >= 2 && sf + 1 >= chunks);
	assert_true(negative >= 1);
}

static void t_streamed_chunks(void **state)
{
	(void)state;
	streamed_chunks(REC_EVENTS_ONE_STREAM);
	streamed_chunks(REC_EVENTS_DEFAULT); /* split, four frames streamed */
}

/* The same events through the builder (begin/put/end) and with LZ4 and no
 * codec (not streamed) read back the same. */
static void t_builder_and_codecs(void **state)
{
	(void)state;
	const unsigned codecs[] = { REC_CODEC_ZSTD, REC_CODEC_LZ4, REC_CODEC_NONE };
	for (size_t c = 0; c < 3; c++) {
		const char *path = tpath("codecs.rec");
		rec_writer_options o = opts(codecs[c], 300u << 10);
		rec_writer *w = NULL;
		const uint64_t n = 50000;
		assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
		define_all(w);
		for (uint64_t i = 0; i < n; i++) {
			assert_int_equal(rec_writer_begin(w, 7, ev_ticks(i), 0, 1 + i % 2, 0), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, 1 + i % 16), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, i * 7919), REC_OK);
			assert_int_equal(rec_writer_put_i64(w, -(int64_t)(i % 1000)), REC_OK);
			assert_int_equal(rec_writer_end(w), REC_OK);
			if (i == n / 2)
				assert_int_equal(rec_writer_flush(w), REC_OK);
		}
		assert_int_equal(rec_writer_close(w), REC_OK);
		assert_true(check_file(path, n, NULL, 0, NULL, 0) >= 2);
	}
}

/* METADATA is stored once and reused while no type is added (writer_chunk.c
 * add_metadata): in a file of four chunks with a type added before the
 * third, every chunk's METADATA section is byte for byte the first's until
 * then, the third's and fourth's hold both types (they differ from the
 * first's), and every event reads back with its type. */
static void t_metadata_reused(void **state)
{
	(void)state;
	const char *path = tpath("meta.rec");
	rec_writer_options o = opts(REC_CODEC_ZSTD, 1u << 20);
	rec_writer *w = NULL;
	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	define_all(w);
	static const rec_field late_fields[] = { { "n", "", "", REC_TYPE_U64, 0 } };
	static const rec_type late = { 8, REC_EVENT_HAS_THREAD, "test.Late", "", "", "", 1,
				       late_fields };
	for (uint64_t c = 0; c < 4; c++) {
		if (c == 2)
			assert_int_equal(rec_writer_add_type(w, &late), REC_OK);
		for (uint64_t i = 0; i < 100; i++) {
			uint64_t k = c * 100 + i;
			assert_int_equal(rec_writer_begin(w, 7, ev_ticks(k), 0, 1, 0), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, 1 + k % 16), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, k), REC_OK);
			assert_int_equal(rec_writer_put_i64(w, 0), REC_OK);
			assert_int_equal(rec_writer_end(w), REC_OK);
			if (c >= 2) {
				assert_int_equal(rec_writer_begin(w, 8, ev_ticks(k), 0, 2, 0), REC_OK);
				assert_int_equal(rec_writer_put_u64(w, k), REC_OK);
				assert_int_equal(rec_writer_end(w), REC_OK);
			}
		}
		assert_int_equal(rec_writer_flush(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);

	/* each chunk's METADATA section, stored bytes, from the file */
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static uint8_t file[1 << 20];
	size_t len = fread(file, 1, sizeof file, f);
	fclose(f);
	rec_reader *r = NULL;
	assert_int_equal(rec_reader_open_path(&r, path, NULL), REC_OK);
	const uint8_t *meta[4] = { NULL };
	size_t mlen[4] = { 0 }, nc = 0;
	const rec_chunk_info *ci;
	while (rec_reader_next_chunk(r, &ci) == REC_OK) {
		if (ci->event_count == 0) /* close's final chunk, if any */
			continue;
		assert_true(nc < 4);
		rec_chunk_header h;
		assert_int_equal(rec_chunk_header_decode(file + ci->offset, len - ci->offset, &h, NULL),
				 REC_OK);
		const uint8_t *p = file + ci->offset + ci->header_size;
		for (uint32_t k = 0; k < h.section_count; k++) {
			rec_section_header sh;
			assert_true((size_t)(p - file) + REC_SECTION_HEADER_SIZE <= len);
			rec_section_header_decode(p, &sh);
			if (sh.kind == REC_SECTION_METADATA) {
				meta[nc] = p + REC_SECTION_HEADER_SIZE;
				mlen[nc] = sh.stored_size;
			}
			p += REC_SECTION_HEADER_SIZE + sh.stored_size;
		}
		assert_int_equal(ci->type_count, nc < 2 ? 1 : 2);
		nc++;
	}
	assert_int_equal(nc, 4);
	assert_true(mlen[0] > 0 && mlen[1] == mlen[0] && !memcmp(meta[1], meta[0], mlen[0]));
	assert_true(mlen[3] == mlen[2] && !memcmp(meta[3], meta[2], mlen[2]));
	assert_false(mlen[2] == mlen[0] && !memcmp(meta[2], meta[0], mlen[0]));
	rec_reader_close(r);

	assert_int_equal(rec_reader_open_path(&r, path, NULL), REC_OK);
	rec_event ev;
	rec_status st;
	uint64_t n7 = 0, n8 = 0;
	while ((st = rec_reader_next_event(r, &ev)) == REC_OK) {
		if (ev.type->id == 8) {
			assert_string_equal(ev.type->name, "test.Late");
			assert_int_equal(ev.values[0].v.u, 200 + n8);
			n8++;
		} else {
			assert_int_equal(ev.type->id, 7);
			n7++;
		}
	}
	assert_int_equal(st, REC_END);
	assert_int_equal(n7, 400);
	assert_int_equal(n8, 200);
	rec_reader_close(r);
}

/* A batch with a malformed record after many good ones is refused whole
 * (nothing of it in the file, the open chunk's statistics as before), with
 * the same message as ever; the writer goes on. */
static void t_bad_batch_taken_back(void **state)
{
	(void)state;
	const char *path = tpath("rollback.rec");
	rec_writer_options o = opts(REC_CODEC_ZSTD, 0);
	rec_writer *w = NULL;
	uint8_t buf[64 * 48];
	uint64_t skip[64];
	size_t len = 0, nskip = 0;

	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	define_all(w);
	rec_writer_set_check_refs(w, 1);
	append_range(w, 0, 1000, 50); /* a chunk is open */
	for (uint64_t i = 1000; i < 1040; i++) {
		/* record 1030 names thread 9, which is not defined */
		len += ic_record(buf + len, ev_ticks(i), i == 1030 ? 9 : 1 + i % 2, 1 + i % 16,
				 i * 7919, -(int64_t)(i % 1000));
		skip[nskip++] = i;
	}
	assert_int_equal(rec_writer_append_records(w, buf, len), REC_ERR_INVALID_ARG);
	assert_non_null(strstr(rec_writer_errmsg(w), "not a defined thread id"));
	/* a value out of its width (i32 field) in the first record of a batch */
	len = ic_record(buf, ev_ticks(1040), 1, 1, 1, (int64_t)1 << 40);
	len += ic_record(buf + len, ev_ticks(1041), 1, 1, 1, 0);
	skip[nskip++] = 1040;
	skip[nskip++] = 1041;
	assert_int_equal(rec_writer_append_records(w, buf, len), REC_ERR_INVALID_ARG);
	assert_non_null(strstr(rec_writer_errmsg(w), "exceeds its width"));
	append_range(w, 1042, 3000, 50);
	assert_int_equal(rec_writer_close(w), REC_OK);
	check_file(path, 3000, skip, nskip, NULL, 0);
}

/* Without reference checks a record may come before its definition: the
 * records before it are in the open chunk, it and those after it wait; a
 * flush says why and writes nothing; after the definition everything is
 * written in order. */
static void t_waiting_for_definition(void **state)
{
	(void)state;
	const char *path = tpath("waiting.rec");
	rec_writer_options o = opts(REC_CODEC_ZSTD, 0);
	rec_writer *w = NULL;
	char name[32];
	uint8_t buf[200 * 48];
	size_t len = 0;

	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &ev_type), REC_OK);
	for (int s = 1; s <= 15; s++) { /* string 16 comes later */
		snprintf(name, sizeof name, "name-%02d", s);
		assert_int_equal(rec_writer_define_string(w, (uint64_t)s, name, strlen(name)), REC_OK);
	}
	assert_int_equal(rec_writer_define_string(w, 100, "t1", 2), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 11, 100), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 2, 22, 0), REC_OK);
	for (uint64_t i = 0; i < 200; i++)
		len += ic_record(buf + len, ev_ticks(i), 1 + i % 2, 1 + i % 16, i * 7919,
				 -(int64_t)(i % 1000));
	assert_int_equal(rec_writer_append_records(w, buf, len), REC_OK);
	append_range(w, 200, 5000, 100);
	assert_int_equal(rec_writer_flush(w), REC_ERR_INVALID_ARG);
	assert_non_null(strstr(rec_writer_errmsg(w), "string id 16"));
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	assert_int_equal(ftell(f), 0);
	fclose(f);
	assert_int_equal(rec_writer_define_string(w, 16, "name-16", 7), REC_OK);
	append_range(w, 5000, 40000, 100);
	assert_int_equal(rec_writer_close(w), REC_OK);
	check_file(path, 40000, NULL, 0, NULL, 0);
}

/* A file cut inside its last streamed chunk (a writer killed while writing
 * it): the chunks before it read completely, the cut one is a truncated
 * tail, never damage. */
static void t_cut_inside_streamed_chunk(void **state)
{
	(void)state;
	const char *path = tpath("cut-src.rec");
	rec_writer_options o = opts(REC_CODEC_ZSTD, 300u << 10);
	rec_writer *w = NULL;
	rec_writer_stats ws;
	const uint64_t n = 60000;

	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	define_all(w);
	append_range(w, 0, n, 64);
	rec_writer_get_stats(w, &ws);
	uint64_t before = ws.stored_bytes; /* the chunks written before close */
	assert_true(ws.chunks >= 2);
	assert_int_equal(rec_writer_close(w), REC_OK);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	assert_true(size > (long)before);
	uint8_t *all = malloc((size_t)size);
	assert_non_null(all);
	fseek(f, 0, SEEK_SET);
	assert_int_equal(fread(all, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	const long cuts[] = { (long)before + 1, (long)before + 127, (long)before + 128,
			      (long)before + 200, (size + (long)before) / 2, size - 1 };
	for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
		const char *cut = tpath("cut.rec");
		FILE *g = fopen(cut, "wb");
		assert_non_null(g);
		assert_int_equal(fwrite(all, 1, (size_t)cuts[k], g), (size_t)cuts[k]);
		fclose(g);
		assert_int_equal(check_file(cut, n, NULL, 0, NULL, 1), ws.chunks);
	}
	free(all);
}

/* The first chunk's section of kind at path: its flags, Stored_Size and
 * Raw_Size (-1 flags: none). */
static void first_section(const char *path, uint16_t kind, int *flags, uint32_t *stored,
			  uint32_t *raw)
{
	uint8_t b[1 << 16];
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t n = fread(b, 1, sizeof b, f);
	fclose(f);
	assert_true(n >= 128);
	uint32_t hsize = rec_le32(b + 12);
	uint16_t nsec = (uint16_t)(b[38] | b[39] << 8);
	size_t p = hsize;
	*flags = -1;
	for (uint16_t k = 0; k < nsec && p + 16 <= n; k++) {
		uint32_t st = rec_le32(b + p + 8);
		if ((uint16_t)(b[p] | b[p + 1] << 8) == kind) {
			*flags = b[p + 2] | b[p + 3] << 8;
			*stored = st;
			*raw = rec_le32(b + p + 12);
			return;
		}
		p += 16 + st;
	}
}

/* Sections of fewer than 64 bytes are stored raw with zstd, even one
 * that a frame would shrink (the strings: one string of 40 'a's, 42
 * bytes); larger ones compressed (METADATA); the file reads back. */
static void t_small_sections_raw(void **state)
{
	(void)state;
	const char *path = tpath("small.rec");
	rec_writer_options o = opts(REC_CODEC_ZSTD, 0);
	rec_writer *w = NULL;
	int flags;
	uint32_t stored = 0, raw = 0;
	char a40[41];
	uint8_t buf[5 * 48];
	size_t len = 0;
	memset(a40, 'a', 40);
	a40[40] = 0;
	static const rec_field big_fields[] = {
		{ "name", "a field with a long description", "", REC_TYPE_STRING, 0 },
		{ "value", "another field with a long description", "", REC_TYPE_U64, 0 },
		{ "delta", "a third field with a long description", "", REC_TYPE_I32, 0 },
	};
	static const rec_type big = { 7, REC_EVENT_HAS_THREAD, "test.Ev", "Test event",
				      "a type whose metadata is above 64 bytes", "test", 3,
				      big_fields };
	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &big), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 1, a40, 40), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 11, 0), REC_OK);
	for (uint64_t i = 0; i < 5; i++)
		len += ic_record(buf + len, 1000 + i, 1, 1, i, 0);
	assert_int_equal(rec_writer_append_records(w, buf, len), REC_OK);
	assert_int_equal(rec_writer_close(w), REC_OK);
	first_section(path, REC_SECTION_STRINGS, &flags, &stored, &raw);
	assert_int_equal(flags, 0);
	assert_true(raw >= 40 && raw < 64);
	assert_int_equal(stored, raw);
	first_section(path, REC_SECTION_STATS, &flags, &stored, &raw);
	assert_int_equal(flags, 0);
	first_section(path, REC_SECTION_METADATA, &flags, &stored, &raw);
	assert_int_equal(flags, REC_SECTION_COMPRESSED);
	assert_true(raw >= 64 && stored < raw);
	rec_reader *rd = NULL;
	const rec_chunk_info *ci;
	rec_event e;
	uint64_t n = 0;
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.flags = REC_READ_VERIFY;
	assert_int_equal(rec_reader_open_path(&rd, path, &ro), REC_OK);
	while (rec_reader_next_chunk(rd, &ci) == REC_OK) {
		assert_int_equal(rec_reader_verify_chunk(rd), REC_OK);
		while (rec_reader_next_chunk_event(rd, &e) == REC_OK) {
			assert_int_equal(e.values[0].v.s.len, 40);
			assert_memory_equal(e.values[0].v.s.ptr, a40, 40);
			n++;
		}
	}
	rec_reader_close(rd);
	assert_int_equal(n, 5);
}

/* ---- records cut into the four streams as they are taken (c_direct) ---- */

/* Three kinds of record: test.Ev (a thread), test.Span (duration, thread,
 * stack, a u64) and test.Note (no thread: a string and a text of 0-40
 * bytes), so that every piece of the split is cut: refs from Duration and
 * Stack, bodies from Thread and fields, bodies longer than 16 bytes. */
static const rec_field span_fields[] = { { "n", "", "", REC_TYPE_U64, 0 } };
static const rec_type span_type = { 9,
				    REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD |
					    REC_EVENT_HAS_STACK,
				    "test.Span", "", "", "", 1, span_fields };
static const rec_field note_fields[] = {
	{ "name", "", "", REC_TYPE_STRING, 0 },
	{ "text", "", "", REC_TYPE_TEXT, 0 },
};
static const rec_type note_type = { 10, 0, "test.Note", "", "", "", 2, note_fields };

static uint64_t mix_duration(uint64_t i)
{
	return i % 7 == 0 ? (uint64_t)1 << 40 : 1 + i % 700;
}

static size_t mix_record(uint8_t *out, uint64_t i)
{
	uint8_t body[128];
	size_t n = 0, k;
	switch (i % 5) {
	case 3:
		n += rec_varint_put(body + n, 9);
		n += rec_varint_put(body + n, ev_ticks(i));
		n += rec_varint_put(body + n, mix_duration(i));
		n += rec_varint_put(body + n, 1 + i % 2);
		n += rec_varint_put(body + n, 1 + i % 3);
		n += rec_varint_put(body + n, i * 31);
		break;
	case 4: {
		size_t tl = (size_t)(i % 41);
		n += rec_varint_put(body + n, 10);
		n += rec_varint_put(body + n, ev_ticks(i));
		n += rec_varint_put(body + n, 1 + i % 16);
		n += rec_varint_put(body + n, tl);
		for (size_t c = 0; c < tl; c++)
			body[n++] = (uint8_t)('a' + (i + c) % 26);
		break;
	}
	default:
		return ic_record(out, ev_ticks(i), 1 + i % 2, 1 + i % 16, i * 7919,
				 -(int64_t)(i % 1000));
	}
	k = rec_varint_put(out, n);
	memcpy(out + k, body, n);
	return k + n;
}

static void define_mix(rec_writer *w)
{
	define_all(w);
	assert_int_equal(rec_writer_add_type(w, &span_type), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &note_type), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 200, "f", 1), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 1, 200, 0, 0, 0), REC_OK);
	for (uint64_t s = 1; s <= 3; s++) {
		const uint64_t frames[3] = { 1, 1, 1 };
		assert_int_equal(rec_writer_define_stack(w, s, 0, frames, (uint32_t)s), REC_OK);
	}
}

/* Every event of [0, n) but skip, in order, each exactly as made; returns
 * the chunks (each verified: checksums, STATS against its events). */
static size_t check_mix(const char *path, uint64_t n, uint64_t skip_from, uint64_t skip_to)
{
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	rec_reader *rd = NULL;
	const rec_chunk_info *ci;
	uint64_t i = 0;
	size_t chunks = 0;
	rec_status st;
	ro.flags = REC_READ_VERIFY;
	assert_int_equal(rec_reader_open_path(&rd, path, &ro), REC_OK);
	while ((st = rec_reader_next_chunk(rd, &ci)) == REC_OK) {
		rec_event e;
		chunks++;
		assert_int_equal(rec_reader_verify_chunk(rd), REC_OK);
		while ((st = rec_reader_next_chunk_event(rd, &e)) == REC_OK) {
			if (i == skip_from)
				i = skip_to;
			assert_true(i < n);
			assert_int_equal(e.ticks, ev_ticks(i));
			char name[32];
			snprintf(name, sizeof name, "name-%02d", (int)(1 + i % 16));
			switch (i % 5) {
			case 3:
				assert_string_equal(e.type->name, "test.Span");
				assert_int_equal(e.duration_ticks, mix_duration(i));
				assert_int_equal(e.thread->os_tid, i % 2 ? 22 : 11);
				assert_non_null(e.stack);
				assert_int_equal(e.stack->id, 1 + i % 3);
				assert_int_equal(e.stack->depth, 1 + i % 3);
				assert_int_equal(e.values[0].v.u, i * 31);
				break;
			case 4:
				assert_string_equal(e.type->name, "test.Note");
				assert_null(e.thread);
				assert_int_equal(e.values[0].v.s.len, strlen(name));
				assert_memory_equal(e.values[0].v.s.ptr, name, strlen(name));
				assert_int_equal(e.values[1].v.s.len, i % 41);
				for (size_t c = 0; c < i % 41; c++)
					assert_int_equal(e.values[1].v.s.ptr[c], 'a' + (i + c) % 26);
				break;
			default:
				assert_string_equal(e.type->name, "test.Ev");
				assert_int_equal(e.thread->os_tid, i % 2 ? 22 : 11);
				assert_int_equal(e.values[1].v.u, i * 7919);
				assert_memory_equal(e.values[0].v.s.ptr, name, strlen(name));
				break;
			}
			i++;
		}
		assert_int_equal(st, REC_END);
	}
	assert_int_equal(st, REC_END);
	if (i == skip_from)
		i = skip_to;
	assert_int_equal(i, n);
	rec_reader_close(rd);
	return chunks;
}

/* Append mix records [from, to) in batches of batch (the last records of a
 * batch go through check_scan and place_record, the others through
 * take_run); returns how many appends found the records cut as taken. */
static size_t append_mix(rec_writer *w, uint64_t from, uint64_t to, size_t batch)
{
	uint8_t *buf = malloc(batch * 80);
	size_t direct = 0;
	assert_non_null(buf);
	for (uint64_t i = from; i < to;) {
		size_t len = 0;
		for (size_t k = 0; k < batch && i < to; k++, i++)
			len += mix_record(buf + len, i);
		assert_int_equal(rec_writer_append_records(w, buf, len), REC_OK);
		direct += w->c_direct == 1;
	}
	free(buf);
	return direct;
}

/* With zstd's four streams, once a chunk's first slice is fed its records
 * are cut into the streams as they are taken (no EVENTS buffer, no second
 * pass): every event reads back as made (and every chunk verifies: its
 * STATS byte counts against its records), through the fast take
 * (take_run) and the checked one (take_no_run: emit_split), as from a
 * file whose chunks are one stream. */
static void t_records_cut_as_taken(void **state)
{
	(void)state;
	const uint64_t n = 60000;
	for (int mode = 0; mode < 3; mode++) {
		const char *path = tpath("cut-taken.rec");
		rec_writer_options o = opts(REC_CODEC_ZSTD, 400u << 10);
		if (mode == 2)
			o.events_layout = REC_EVENTS_ONE_STREAM;
		rec_writer *w = NULL;
		assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
		define_mix(w);
		w->take_no_run = mode == 1;
		size_t direct = append_mix(w, 0, n, 37);
		if (mode < 2)
			assert_true(direct > 100); /* most appends, in every chunk */
		else
			assert_int_equal(direct, 0);
		assert_int_equal(rec_writer_close(w), REC_OK);
		assert_true(check_mix(path, n, n, n) >= 3);
		if (mode < 2)
			assert_true(streamed_frames(path) >= 3);
	}
}

/* A test.Span whose stack (9) was never defined. */
static size_t bad_span(uint8_t *out, uint64_t ticks)
{
	uint8_t b[64];
	size_t m = 0, k;
	m += rec_varint_put(b + m, 9);
	m += rec_varint_put(b + m, ticks);
	m += rec_varint_put(b + m, 5);
	m += rec_varint_put(b + m, 1);
	m += rec_varint_put(b + m, 9);
	m += rec_varint_put(b + m, 1);
	k = rec_varint_put(out, m);
	memcpy(out + k, b, m);
	return k + m;
}

/* A bad record in a batch taken while records are cut into the streams:
 * the batch is taken back whole (the streams and the statistics as they
 * were), the writer goes on; the file holds every other event. */
static void t_cut_as_taken_rollback(void **state)
{
	(void)state;
	const char *path = tpath("cut-rollback.rec");
	rec_writer_options o = opts(REC_CODEC_ZSTD, 0);
	rec_writer *w = NULL;
	uint8_t buf[64 * 80];
	size_t len = 0;

	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	define_mix(w);
	rec_writer_set_check_refs(w, 1);
	assert_true(append_mix(w, 0, 5000, 50) > 0);
	assert_int_equal(w->c_direct, 1);
	for (uint64_t i = 5000; i < 5040; i++) /* record 5030: an undefined stack (9) */
		len += i == 5030 ? bad_span(buf + len, ev_ticks(i)) : mix_record(buf + len, i);
	size_t before[REC_EVS_N];
	for (int k = 0; k < REC_EVS_N; k++)
		before[k] = w->sbuf[k].len;
	assert_int_equal(rec_writer_append_records(w, buf, len), REC_ERR_INVALID_ARG);
	assert_non_null(strstr(rec_writer_errmsg(w), "stack"));
	for (int k = 0; k < REC_EVS_N; k++)
		assert_int_equal(w->sbuf[k].len, before[k]);
	append_mix(w, 5040, 20000, 50);
	assert_int_equal(rec_writer_close(w), REC_OK);
	check_mix(path, 20000, 5000, 5040);
}

/* A stream that fails while records are cut into it (its compressor out
 * of memory): the chunk is written without its events, which it counts as
 * dropped; the next chunks are whole.  A close that fails after it ended
 * the streams keeps what it made: the next flush writes it, records
 * appended in between go to the next chunk. */
static void t_cut_as_taken_failures(void **state)
{
	(void)state;
	const char *path = tpath("cut-fail.rec");
	rec_writer_options o = opts(REC_CODEC_ZSTD, 0);
	rec_writer *w = NULL;
	rec_reader *rd = NULL;
	const rec_chunk_info *ci;

	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	define_mix(w);
	append_mix(w, 0, 5000, 50);
	assert_int_equal(w->c_direct, 1);
	w->test_fail = REC_W_FAIL_PUSH;
	append_mix(w, 5000, 10000, 50); /* a push fails in there */
	assert_int_equal(w->test_fail, 0);
	assert_int_equal(rec_writer_flush(w), REC_OK); /* chunk 0: events 0-9999 lost */
	append_mix(w, 10000, 15000, 50);
	assert_int_equal(w->c_direct, 1);
	w->test_fail = REC_W_FAIL_CLOSE;
	assert_int_equal(rec_writer_flush(w), REC_ERR_NOMEM);
	assert_int_equal(w->c_direct, 2);
	append_mix(w, 15000, 16000, 50);
	assert_int_equal(rec_writer_flush(w), REC_OK); /* chunk 1: 10000-14999, 2: the rest */
	assert_int_equal(rec_writer_close(w), REC_OK);

	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	uint64_t events[5] = { 0 }, dropped[5] = { 0 };
	size_t c = 0;
	assert_int_equal(rec_reader_open_path(&rd, path, &ro), REC_OK);
	while (rec_reader_next_chunk(rd, &ci) == REC_OK && c < 5) {
		events[c] = ci->event_count;
		dropped[c] = ci->dropped_events;
		c++;
	}
	rec_reader_close(rd);
	assert_int_equal(c, 4); /* the last: close's final chunk, empty */
	assert_int_equal(events[0], 0);
	assert_int_equal(dropped[0], 10000);
	assert_int_equal(events[1], 5000);
	assert_int_equal(events[2], 1000);
	assert_int_equal(events[3], 0);
	assert_int_equal(dropped[1] + dropped[2] + dropped[3], 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(g_dir, sizeof g_dir, "/tmp/rec_test_stream_XXXXXX");
	return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	const char *names[] = { "streamed.rec", "codecs.rec", "rollback.rec", "waiting.rec",
				"cut-src.rec", "cut.rec", "cut-taken.rec", "cut-rollback.rec",
				"cut-fail.rec", "small.rec" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		unlink(tpath(names[i]));
	rmdir(g_dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_streamed_chunks),
		cmocka_unit_test(t_builder_and_codecs),
		cmocka_unit_test(t_metadata_reused),
		cmocka_unit_test(t_bad_batch_taken_back),
		cmocka_unit_test(t_small_sections_raw),
		cmocka_unit_test(t_records_cut_as_taken),
		cmocka_unit_test(t_cut_as_taken_rollback),
		cmocka_unit_test(t_cut_as_taken_failures),
		cmocka_unit_test(t_waiting_for_definition),
		cmocka_unit_test(t_cut_inside_streamed_chunk),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
