/* SPDX-License-Identifier: MIT */
/*
 * test_writer.c - the chunk writer (libfmt/write), checked byte by byte with
 * the common decoding functions (not the reader): real files, real codecs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common_internal.h"
#include "rec/rec.h"
#include "write/writer_internal.h" /* thread retirement */

/* ---- helpers ------------------------------------------------------------------ */

static char tmpdir[] = "/tmp/test_writer.XXXXXX";

static const char *tpath(const char *name)
{
	static char buf[4][256];
	static int k;
	char *p = buf[k++ & 3];
	snprintf(p, 256, "%s/%s", tmpdir, name);
	return p;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static off_t file_size(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

#define NKINDS 9
typedef struct tchunk {
	rec_chunk_header h;
	size_t size;               /* header + payload */
	int nsec;
	uint16_t kinds[16];        /* in file order */
	uint8_t *sec[NKINDS];      /* decompressed, by kind */
	size_t sec_len[NKINDS];
	uint32_t items[NKINDS];
	uint16_t flags[NKINDS];
	int present[NKINDS];
	int split; /* 1.3: EVENTS was stored in four streams */
	/* zstd: the kinds of literals in each stream's compressed blocks
	 * (bit t: Literals_Block_Type t, RFC 8878 3.1.1.3.1.1; 0 raw, 2
	 * Huffman-coded) */
	unsigned lit_kinds[4];
} tchunk;

static uint64_t uv(const uint8_t **p, const uint8_t *end);

/* Type_Flags by Type_Id from a METADATA section, read by the spec's
 * table (not the library's decoder). */
typedef struct tflags {
	size_t n;
	uint64_t id[64];
	unsigned flags[64];
} tflags;

static unsigned flags_of(const tflags *tf, uint64_t id)
{
	for (size_t i = 0; i < tf->n; i++)
		if (tf->id[i] == id)
			return tf->flags[i] | 0x100u;
	return 0;
}

static void meta_flags(const uint8_t *p, size_t len, tflags *tf)
{
	const uint8_t *end = p + len;
	tf->n = 0;
	while (p < end) {
		uint64_t id = uv(&p, end), flags = uv(&p, end);
		assert_true(tf->n < 64);
		tf->id[tf->n] = id;
		tf->flags[tf->n++] = (unsigned)flags;
		for (int i = 0; i < 4; i++) /* Name, Label, Description, Category */
			p += uv(&p, end);
		uint64_t nf = uv(&p, end);
		for (uint64_t f = 0; f < nf; f++) {
			p += uv(&p, end); /* Name */
			p += uv(&p, end); /* Label */
			(void)uv(&p, end); /* Field_Type */
			(void)uv(&p, end); /* Unit */
			p += uv(&p, end); /* Description */
		}
		assert_true(p <= end);
	}
}

static size_t vbytes(const uint8_t *p)
{
	size_t n = 1;
	while (p[n - 1] & 0x80)
		n++;
	return n;
}

/* A split EVENTS section (1.3) at buf, stored bytes: the stream table,
 * each stream decompressed, then the records put back together by the
 * spec's "Split EVENTS" (a second implementation, not the library's). */
/* The literals kinds of a zstd frame's compressed blocks (tchunk's
 * lit_kinds), read by RFC 8878 from its frame and block headers. */
static unsigned zstd_literal_kinds(const uint8_t *p, size_t n)
{
	assert_true(n >= 6);
	assert_int_equal(rec_le32(p), 0xFD2FB528u);
	const uint8_t fhd = p[4];
	const unsigned fcs_flag = fhd >> 6, single = (fhd >> 5) & 1, dict = fhd & 3;
	static const size_t dict_len[4] = { 0, 1, 2, 4 };
	const size_t fcs_len = fcs_flag == 0 ? single : (size_t)1 << fcs_flag;
	size_t at = 5 + (single ? 0 : 1) + dict_len[dict] + fcs_len;
	unsigned kinds = 0;
	for (;;) {
		assert_true(at + 3 <= n);
		const uint32_t bh = p[at] | (uint32_t)p[at + 1] << 8 | (uint32_t)p[at + 2] << 16;
		const uint32_t type = (bh >> 1) & 3, size = bh >> 3;
		at += 3;
		if (type == 2) {
			assert_true(size >= 1 && at + size <= n);
			kinds |= 1u << (p[at] & 3);
		}
		at += type == 1 ? 1 : size;
		if (bh & 1)
			break;
	}
	return kinds;
}

static void join_split(const uint8_t *buf, const rec_section_header *sh, unsigned codec,
		       const tflags *tf, uint8_t *out, unsigned lit_kinds[4])
{
	uint8_t *st[4];
	size_t at = 32, raw = 0;
	const uint8_t *q[4], *qe[4];
	assert_true(sh->stored_size >= 32);
	for (int i = 0; i < 4; i++) {
		uint32_t sst = rec_le32(buf + 8 * i), srw = rec_le32(buf + 8 * i + 4);
		assert_true((sst == 0) == (srw == 0));
		st[i] = malloc(srw + 1);
		assert_non_null(st[i]);
		if (srw)
			assert_int_equal(rec_codec_decompress(NULL, codec, buf + at, sst, st[i], srw), REC_OK);
		lit_kinds[i] = srw && codec == REC_CODEC_ZSTD ? zstd_literal_kinds(buf + at, sst) : 0;
		at += sst;
		raw += srw;
		q[i] = st[i];
		qe[i] = st[i] + srw;
	}
	assert_int_equal(at, sh->stored_size);
	assert_int_equal(raw, sh->raw_size);
	uint8_t *o = out;
	for (uint32_t k = 0; k < sh->item_count; k++) {
		const uint8_t *h0 = q[0];
		uint64_t size = uv(&q[0], qe[0]);
		const uint8_t *idp = q[0];
		uint64_t id = uv(&q[0], qe[0]);
		unsigned f = flags_of(tf, id);
		assert_true(f != 0);
		size_t head = (size_t)(q[0] - idp);
		memcpy(o, h0, (size_t)(q[0] - h0)), o += q[0] - h0;
		size_t n = vbytes(q[1]);
		memcpy(o, q[1], n), o += n, q[1] += n, head += n;
		size_t dn = (f & REC_EVENT_HAS_DURATION) ? vbytes(q[2]) : 0;
		memcpy(o, q[2], dn), o += dn, q[2] += dn, head += dn;
		size_t tn = (f & REC_EVENT_HAS_THREAD) ? vbytes(q[3]) : 0;
		memcpy(o, q[3], tn), o += tn, q[3] += tn, head += tn;
		size_t sn = (f & REC_EVENT_HAS_STACK) ? vbytes(q[2]) : 0;
		memcpy(o, q[2], sn), o += sn, q[2] += sn, head += sn;
		assert_true(size >= head);
		memcpy(o, q[3], size - head), o += size - head, q[3] += size - head;
	}
	for (int i = 0; i < 4; i++) {
		assert_ptr_equal(q[i], qe[i]);
		free(st[i]);
	}
	assert_int_equal((size_t)(o - out), sh->raw_size);
}

/* Parse and check one chunk at buf: header, checksums, sections. */
static void parse_chunk(const uint8_t *buf, size_t avail, tchunk *c)
{
	const char *msg = NULL;
	size_t off, raw_sum = 0;

	memset(c, 0, sizeof(*c));
	assert_int_equal(rec_chunk_header_decode(buf, avail, &c->h, &msg), REC_OK);
	assert_int_equal(c->h.header_size, REC_HEADER_SIZE_V1);
	assert_true(c->h.header_size + c->h.payload_size <= avail);
	assert_int_equal(c->h.major, REC_FORMAT_MAJOR);
	assert_int_equal(c->h.minor, REC_FORMAT_MINOR);
	c->size = c->h.header_size + c->h.payload_size;
	/* Payload checksum, computed here over the bytes. */
	assert_int_equal(rec_crc32c(0, buf + c->h.header_size, c->h.payload_size), c->h.payload_crc);
	/* 1.1: Front_Checksum announced (bytes 112..115, checked below); the
	 * Unused header bytes after it are zero. */
	assert_true(c->h.flags & REC_CHUNK_FRONT_CRC);
	for (int i = 116; i < 128; i++)
		assert_int_equal(buf[i], 0);
	uint32_t front = 0;

	off = c->h.header_size;
	while (off < c->size) {
		rec_section_header sh;
		assert_true(off + REC_SECTION_HEADER_SIZE <= c->size);
		rec_section_header_decode(buf + off, &sh);
		front = rec_crc32c(front, buf + off, REC_SECTION_HEADER_SIZE);
		off += REC_SECTION_HEADER_SIZE;
		assert_true(off + sh.stored_size <= c->size);
		if (sh.kind == 1 || sh.kind == 2) /* METADATA, STATS */
			front = rec_crc32c(front, buf + off, sh.stored_size);
		assert_true(sh.kind >= 1 && sh.kind <= 8);
		assert_false(c->present[sh.kind]);
		c->present[sh.kind] = 1;
		c->kinds[c->nsec++] = sh.kind;
		c->items[sh.kind] = sh.item_count;
		c->flags[sh.kind] = sh.flags;
		c->sec_len[sh.kind] = sh.raw_size;
		c->sec[sh.kind] = malloc(sh.raw_size + 1);
		assert_non_null(c->sec[sh.kind]);
		if (sh.kind == REC_SECTION_EVENTS && (c->h.flags & REC_CHUNK_SPLIT_EVENTS)) {
			tflags tf;
			assert_int_not_equal(c->h.codec, REC_CODEC_NONE);
			assert_int_equal(sh.flags, REC_SECTION_COMPRESSED);
			assert_true(sh.stored_size < sh.raw_size);
			assert_true(c->present[REC_SECTION_METADATA]);
			meta_flags(c->sec[REC_SECTION_METADATA], c->sec_len[REC_SECTION_METADATA], &tf);
			join_split(buf + off, &sh, c->h.codec, &tf, c->sec[sh.kind], c->lit_kinds);
		} else if (sh.flags & REC_SECTION_COMPRESSED) {
			assert_int_not_equal(c->h.codec, REC_CODEC_NONE);
			assert_true(sh.stored_size < sh.raw_size);
			assert_int_equal(rec_codec_decompress(NULL, c->h.codec, buf + off, sh.stored_size,
							      c->sec[sh.kind], sh.raw_size),
					 REC_OK);
		} else {
			assert_int_equal(sh.flags, 0);
			assert_int_equal(sh.stored_size, sh.raw_size);
			memcpy(c->sec[sh.kind], buf + off, sh.raw_size);
		}
		raw_sum += sh.raw_size;
		off += sh.stored_size;
	}
	assert_int_equal(off, c->size);
	assert_int_equal(rec_le32(buf + 112), front);
	c->h.flags &= ~(uint32_t)REC_CHUNK_FRONT_CRC; /* checked: callers look at the rest */
	c->split = (c->h.flags & REC_CHUNK_SPLIT_EVENTS) != 0;
	c->h.flags &= ~(uint32_t)REC_CHUNK_SPLIT_EVENTS; /* joined above */
	assert_int_equal(c->nsec, c->h.section_count);
	assert_int_equal(raw_sum, c->h.raw_size);
	/* Order: kinds strictly increasing, METADATA, STATS, EVENTS present. */
	for (int i = 1; i < c->nsec; i++)
		assert_true(c->kinds[i] > c->kinds[i - 1]);
	assert_true(c->present[REC_SECTION_METADATA]);
	assert_true(c->present[REC_SECTION_STATS]);
	assert_true(c->present[REC_SECTION_EVENTS]);
	assert_int_equal(c->items[REC_SECTION_EVENTS], c->h.event_count);
}

static void free_chunk(tchunk *c)
{
	for (int i = 0; i < NKINDS; i++)
		free(c->sec[i]);
}

static uint64_t uv(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	assert_true(rec_varint_get(p, end, &v));
	return v;
}

typedef struct tstats {
	int64_t first, last;
	uint64_t dropped, ntypes;
	uint64_t id[8], count[8], bytes[8];
} tstats;

static void parse_stats(const tchunk *c, tstats *s)
{
	const uint8_t *p = c->sec[REC_SECTION_STATS], *end = p + c->sec_len[REC_SECTION_STATS];
	memset(s, 0, sizeof(*s));
	s->first = rec_unzigzag(uv(&p, end));
	s->last = rec_unzigzag(uv(&p, end));
	s->dropped = uv(&p, end);
	s->ntypes = uv(&p, end);
	assert_true(s->ntypes <= 8);
	assert_int_equal(s->ntypes, c->items[REC_SECTION_STATS]);
	for (uint64_t i = 0; i < s->ntypes; i++) {
		s->id[i] = uv(&p, end);
		s->count[i] = uv(&p, end);
		s->bytes[i] = uv(&p, end);
	}
	assert_ptr_equal(p, end);
}

/* Ids of a pool section, in order (checks Id_Delta >= 1); returns the count.
 * per_entry: uvarints after the id (strings: -1 = one str). */
static size_t pool_ids(const tchunk *c, int kind, uint64_t *ids, size_t max, uint64_t vals[][8])
{
	const uint8_t *p = c->sec[kind], *end = p + c->sec_len[kind];
	uint64_t id = 0;
	size_t n = 0;

	if (!c->present[kind])
		return 0;
	while (p < end) {
		uint64_t d = uv(&p, end);
		assert_true(d >= 1);
		id += d;
		assert_true(n < max);
		ids[n] = id;
		switch (kind) {
		case REC_SECTION_STRINGS: {
			uint64_t len = uv(&p, end);
			assert_true(len <= (uint64_t)(end - p));
			if (vals) {
				vals[n][0] = len;
				vals[n][1] = (uint64_t)(p - c->sec[kind]); /* offset of the bytes */
			}
			p += len;
			break;
		}
		case REC_SECTION_THREADS:
		case REC_SECTION_MODULES:
		case REC_SECTION_FRAMES: {
			int k = kind == REC_SECTION_THREADS ? 2 : kind == REC_SECTION_MODULES ? 3 : 4;
			for (int i = 0; i < k; i++) {
				uint64_t v = uv(&p, end);
				if (vals)
					vals[n][i] = v;
			}
			break;
		}
		default: { /* stacks */
			uint64_t flags = uv(&p, end), depth = uv(&p, end);
			assert_true(depth <= 6);
			if (vals) {
				vals[n][0] = flags;
				vals[n][1] = depth;
			}
			for (uint64_t i = 0; i < depth; i++) {
				uint64_t v = uv(&p, end);
				if (vals)
					vals[n][2 + i] = v;
			}
			break;
		}
		}
		n++;
	}
	assert_int_equal(n, c->items[kind]);
	return n;
}

static const char *pool_string(const tchunk *c, uint64_t id, size_t *len)
{
	uint64_t ids[64], vals[64][8];
	size_t n = pool_ids(c, REC_SECTION_STRINGS, ids, 64, vals);
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id) {
			*len = vals[i][0];
			return (const char *)c->sec[REC_SECTION_STRINGS] + vals[i][1];
		}
	return NULL;
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

/* ---- the small recording ---------------------------------------------------------- */

static const rec_field lock_fields[] = {
	{ "lock", "Lock", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "count", "Count", "", REC_TYPE_U64, REC_UNIT_COUNT },
	{ "delta", "Delta", "a signed value", REC_TYPE_I32, REC_UNIT_NONE },
};
static const rec_type lock_type = { 1, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK,
				    "test.Lock", "Lock", "A lock wait", "test/Locks", 3, lock_fields };
static const rec_field msg_fields[] = {
	{ "text", "Text", "", REC_TYPE_TEXT, REC_UNIT_NONE },
	{ "level", "Level", "", REC_TYPE_U8, REC_UNIT_NONE },
};
static const rec_type msg_type = { 2, REC_EVENT_HAS_THREAD, "test.Msg", "Message", "", "test", 2,
				   msg_fields };

static void define_small(rec_writer *w)
{
	uint64_t id = 0;
	const uint64_t frames[2] = { 1, 2 };

	assert_int_equal(rec_writer_add_type(w, &lock_type), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &msg_type), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 1, "main", 4), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 2, "lockA", 5), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 3, "unused", 6), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 4, "func_a", 6), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 5, "/lib/x.so", 9), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 6, "abcdef", 6), REC_OK);
	assert_int_equal(rec_writer_intern_string(w, "func_b", 6, &id), REC_OK);
	assert_int_equal(id, 7);
	/* interning known content returns its id */
	assert_int_equal(rec_writer_intern_string(w, "lockA", 5, &id), REC_OK);
	assert_int_equal(id, 2);
	/* same value again: no-op */
	assert_int_equal(rec_writer_define_string(w, 2, "lockA", 5), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 4242, 1), REC_OK);
	assert_int_equal(rec_writer_define_module(w, 1, 5, 6, 0x400000), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 1, 4, 1, 0x10, 0x4), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 2, 7, 1, 0x20, 0), REC_OK);
	assert_int_equal(rec_writer_define_stack(w, 1, 0, frames, 2), REC_OK);
	assert_int_equal(rec_writer_define_stack(w, 1, 0, frames, 2), REC_OK);
}

static void write_small_events(rec_writer *w)
{
	assert_int_equal(rec_writer_begin(w, 1, 5000, 300, 1, 1), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 2), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 10), REC_OK);
	assert_int_equal(rec_writer_put_i64(w, -5), REC_OK);
	assert_int_equal(rec_writer_end(w), REC_OK);

	assert_int_equal(rec_writer_begin(w, 2, 4000, 999, 1, 999), REC_OK); /* dur/stack unused */
	assert_int_equal(rec_writer_put_bytes(w, "hello", 5), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 3), REC_OK);
	assert_int_equal(rec_writer_end(w), REC_OK);

	assert_int_equal(rec_writer_begin(w, 1, 6000, 50, 1, 0), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 2), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 20), REC_OK);
	assert_int_equal(rec_writer_put_i64(w, 7), REC_OK);
	assert_int_equal(rec_writer_end(w), REC_OK);
}

/* The EVENTS section, encoded by hand from spec "EVENTS". Start_Ticks 4000. */
static const uint8_t small_events[] = {
	/* ticks 5000 (delta +1000 = zz 2000), dur 300, thread 1, stack 1, lock 2, 10, -5 */
	0x0A, 0x01, 0xD0, 0x0F, 0xAC, 0x02, 0x01, 0x01, 0x02, 0x0A, 0x09,
	/* ticks 4000 (delta -1000 = zz 1999), thread 1, "hello", 3 */
	0x0B, 0x02, 0xCF, 0x0F, 0x01, 0x05, 'h', 'e', 'l', 'l', 'o', 0x03,
	/* ticks 6000 (delta +2000 = zz 4000), dur 50, thread 1, stack 0, lock 2, 20, 7 */
	0x09, 0x01, 0xA0, 0x1F, 0x32, 0x01, 0x00, 0x02, 0x14, 0x0E,
};

static void check_small(unsigned codec)
{
	rec_writer_options o = fixed_opts(codec);
	const char *path = tpath("small.rec");
	rec_writer *w = NULL;
	rec_writer_stats ws;
	tchunk c;
	tstats s;
	uint8_t *buf;
	size_t len, slen;
	uint64_t ids[16], vals[16][8];
	const char *str;

	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	define_small(w);
	write_small_events(w);
	assert_int_equal(rec_writer_close(w), REC_OK);

	buf = read_file(path, &len);
	parse_chunk(buf, len, &c);
	assert_int_equal(c.size, len); /* one chunk */

	/* header */
	assert_int_equal(c.h.flags, REC_CHUNK_FINAL);
	assert_int_equal(c.h.codec, codec);
	assert_int_equal(c.h.level, codec == REC_CODEC_ZSTD ? 1 : 0);
	assert_int_equal(c.h.event_count, 3);
	assert_int_equal(c.h.start_ticks, 4000);
	assert_int_equal(c.h.start_wall_ns, 1700000000500000000ll + 3000);
	assert_int_equal(c.h.tick_frequency, 1000000000u);
	assert_int_equal(c.h.duration_ticks, 6050 - 4000);
	assert_int_equal(c.h.run_id, 0x1122334455667788ull);
	assert_int_equal(c.h.process_start_ns, 1700000000000000000ll);
	assert_int_equal(c.h.pid, 4321);
	assert_int_equal(c.h.sequence, 0);

	/* sections, in order */
	assert_int_equal(c.nsec, 8);
	for (int i = 0; i < 8; i++)
		assert_int_equal(c.kinds[i], i + 1);
	if (codec == REC_CODEC_NONE)
		for (int k = 1; k <= 8; k++)
			assert_int_equal(c.flags[k], 0);

	/* METADATA: two types, declaration order */
	{
		const uint8_t *p = c.sec[REC_SECTION_METADATA], *end = p + c.sec_len[REC_SECTION_METADATA];
		uint64_t n;
		assert_int_equal(c.items[REC_SECTION_METADATA], 2);
		assert_int_equal(uv(&p, end), 1);
		assert_int_equal(uv(&p, end), 7);
		n = uv(&p, end);
		assert_int_equal(n, 9);
		assert_memory_equal(p, "test.Lock", 9);
		p += n;
		p += uv(&p, end); /* label */
		p += uv(&p, end); /* description */
		n = uv(&p, end);
		assert_memory_equal(p, "test/Locks", 10);
		p += n;
		assert_int_equal(uv(&p, end), 3);
		for (int i = 0; i < 3; i++) {
			n = uv(&p, end);
			assert_memory_equal(p, lock_fields[i].name, n);
			p += n;
			p += uv(&p, end); /* label */
			assert_int_equal(uv(&p, end), lock_fields[i].type);
			assert_int_equal(uv(&p, end), lock_fields[i].unit);
			p += uv(&p, end); /* description */
		}
		assert_int_equal(uv(&p, end), 2);
	}

	/* STATS */
	parse_stats(&c, &s);
	assert_int_equal(s.first, 0);
	assert_int_equal(s.last, 2050);
	assert_int_equal(s.dropped, 0);
	assert_int_equal(s.ntypes, 2);
	assert_int_equal(s.id[0], 1);
	assert_int_equal(s.count[0], 2);
	assert_int_equal(s.bytes[0], 11 + 10);
	assert_int_equal(s.id[1], 2);
	assert_int_equal(s.count[1], 1);
	assert_int_equal(s.bytes[1], 12);

	/* EVENTS, exact bytes */
	assert_int_equal(c.sec_len[REC_SECTION_EVENTS], sizeof(small_events));
	assert_memory_equal(c.sec[REC_SECTION_EVENTS], small_events, sizeof(small_events));

	/* pools: exactly what is referenced (string 3 is absent) */
	assert_int_equal(pool_ids(&c, REC_SECTION_STRINGS, ids, 16, NULL), 6);
	{
		const uint64_t want[6] = { 1, 2, 4, 5, 6, 7 };
		assert_memory_equal(ids, want, sizeof(want));
	}
	str = pool_string(&c, 7, &slen);
	assert_non_null(str);
	assert_int_equal(slen, 6);
	assert_memory_equal(str, "func_b", 6);
	str = pool_string(&c, 1, &slen);
	assert_non_null(str);
	assert_memory_equal(str, "main", 4);
	assert_null(pool_string(&c, 3, &slen));

	assert_int_equal(pool_ids(&c, REC_SECTION_THREADS, ids, 16, vals), 1);
	assert_int_equal(ids[0], 1);
	assert_int_equal(vals[0][0], 4242);
	assert_int_equal(vals[0][1], 1);
	assert_int_equal(pool_ids(&c, REC_SECTION_MODULES, ids, 16, vals), 1);
	assert_int_equal(vals[0][0], 5);
	assert_int_equal(vals[0][1], 6);
	assert_int_equal(vals[0][2], 0x400000);
	assert_int_equal(pool_ids(&c, REC_SECTION_FRAMES, ids, 16, vals), 2);
	assert_int_equal(ids[1], 2);
	assert_int_equal(vals[0][0], 4);
	assert_int_equal(vals[0][2], 0x10);
	assert_int_equal(vals[0][3], 0x4);
	assert_int_equal(vals[1][0], 7);
	assert_int_equal(vals[1][1], 1);
	assert_int_equal(vals[1][2], 0x20);
	assert_int_equal(pool_ids(&c, REC_SECTION_STACKS, ids, 16, vals), 1);
	assert_int_equal(vals[0][0], 0);
	assert_int_equal(vals[0][1], 2);
	assert_int_equal(vals[0][2], 1);
	assert_int_equal(vals[0][3], 2);

	free_chunk(&c);
	free(buf);
	(void)ws;
}

static void t_small_none(void **state) { (void)state; check_small(REC_CODEC_NONE); }
static void t_small_zstd(void **state) { (void)state; check_small(REC_CODEC_ZSTD); }
static void t_small_lz4(void **state) { (void)state; check_small(REC_CODEC_LZ4); }

/* ---- auto chunking ----------------------------------------------------------------- */

static const rec_field ev_fields[] = {
	{ "name", "", "", REC_TYPE_STRING, 0 },
	{ "value", "", "", REC_TYPE_U64, 0 },
	{ "delta", "", "", REC_TYPE_I32, 0 },
};
static const rec_type ev_type = { 7, REC_EVENT_HAS_THREAD, "test.Ev", "", "", "", 3, ev_fields };

/* Walk every chunk of a file; returns the chunk count.  Checks sequence,
 * sums events, rebuilds absolute ticks and checks them against base + 10*i. */
static size_t check_chunked_file(const char *path, size_t total, uint64_t base_ticks, int want_final)
{
	size_t len, off = 0, n = 0, events = 0;
	uint8_t *buf = read_file(path, &len);

	while (off < len) {
		tchunk c;
		tstats s;
		size_t slen;
		const char *str;
		const uint8_t *p, *end;
		uint64_t t;

		parse_chunk(buf + off, len - off, &c);
		assert_int_equal(c.h.sequence, n);
		assert_int_equal(c.h.run_id, 0x1122334455667788ull);
		assert_int_equal(c.h.flags, (want_final && off + c.size == len) ? REC_CHUNK_FINAL : 0);
		parse_stats(&c, &s);
		if (c.h.event_count) {
			assert_int_equal(s.ntypes, 1);
			assert_int_equal(s.count[0], c.h.event_count);
			assert_int_equal(s.bytes[0], c.sec_len[REC_SECTION_EVENTS]);
			/* self-contained: the string and thread defined at the start */
			str = pool_string(&c, 1, &slen);
			assert_non_null(str);
			assert_int_equal(slen, 5);
			assert_memory_equal(str, "first", 5);
			assert_true(c.present[REC_SECTION_THREADS]);
		}
		/* events: absolute ticks continue where the last chunk ended */
		p = c.sec[REC_SECTION_EVENTS];
		end = p + c.sec_len[REC_SECTION_EVENTS];
		t = c.h.start_ticks;
		while (p < end) {
			uint64_t size = uv(&p, end);
			const uint8_t *rec_end = p + size;
			assert_int_equal(uv(&p, end), 7);
			t += (uint64_t)rec_unzigzag(uv(&p, end));
			assert_int_equal(t, base_ticks + 10 * events);
			assert_int_equal(uv(&p, end), 1);  /* thread */
			assert_int_equal(uv(&p, end), events % 3 == 0 ? 1 : 2); /* string */
			assert_int_equal(uv(&p, end), events); /* value */
			assert_int_equal(rec_unzigzag(uv(&p, end)), -(int64_t)events);
			assert_ptr_equal(p, rec_end);
			events++;
		}
		if (c.h.event_count) {
			assert_int_equal(c.h.start_ticks, base_ticks + 10 * (events - c.h.event_count));
			assert_int_equal(c.h.duration_ticks, 10 * (c.h.event_count - 1));
		}
		off += c.size;
		n++;
		free_chunk(&c);
	}
	assert_int_equal(events, total);
	free(buf);
	return n;
}

static void t_auto_chunking(void **state)
{
	rec_writer_options o = fixed_opts(REC_CODEC_ZSTD);
	const char *path = tpath("chunks.rec");
	rec_writer *w = NULL;
	rec_writer_stats st;
	size_t n;
	(void)state;

	o.chunk_events_size = 1024;
	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &ev_type), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 1, "first", 5), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 2, "other", 5), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 99, 0), REC_OK);
	for (uint64_t i = 0; i < 2000; i++) {
		assert_int_equal(rec_writer_begin(w, 7, 1000000 + 10 * i, 0, 1, 0), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, i % 3 == 0 ? 1 : 2), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, i), REC_OK);
		assert_int_equal(rec_writer_put_i64(w, -(int64_t)i), REC_OK);
		assert_int_equal(rec_writer_end(w), REC_OK);
	}
	rec_writer_get_stats(w, &st);
	assert_true(st.chunks >= 5);
	assert_int_equal(rec_writer_close(w), REC_OK);
	n = check_chunked_file(path, 2000, 1000000, 1);
	assert_true(n >= 6);
	assert_int_equal(n, st.chunks + 1);
}

/* Encode one interchange record of ev_type. */
static size_t ic_record(uint8_t *out, uint64_t ticks, uint64_t str, uint64_t v, int64_t d)
{
	uint8_t body[64];
	size_t n = 0, k;
	n += rec_varint_put(body + n, 7);
	n += rec_varint_put(body + n, ticks);
	n += rec_varint_put(body + n, 1);
	n += rec_varint_put(body + n, str);
	n += rec_varint_put(body + n, v);
	n += rec_varint_put(body + n, rec_zigzag(d));
	k = rec_varint_put(out, n);
	memcpy(out + k, body, n);
	return k + n;
}

static void t_append_records(void **state)
{
	rec_writer_options o = fixed_opts(REC_CODEC_LZ4);
	const char *path = tpath("append.rec");
	rec_writer *w = NULL;
	uint8_t *buf = malloc(3000 * 40);
	size_t len = 0;
	uint8_t bad[64];
	size_t blen;
	(void)state;

	assert_non_null(buf);
	o.chunk_events_size = 4096;
	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &ev_type), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 1, "first", 5), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 2, "other", 5), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 99, 0), REC_OK);

	/* malformed input: nothing appended */
	blen = ic_record(bad, 5, 1, 1, 0);
	bad[0] += 1; /* Size runs past the buffer */
	assert_int_equal(rec_writer_append_records(w, bad, blen), REC_ERR_INVALID_ARG);
	blen = ic_record(bad, 5, 1, 1, 0);
	blen += ic_record(bad + blen, 5, 1, 1, 0);
	bad[blen - 6] = 3; /* second record: unknown type id 3 */
	assert_int_equal(rec_writer_append_records(w, bad, blen), REC_ERR_INVALID_ARG);
	assert_non_null(strstr(rec_writer_errmsg(w), "unknown type id 3"));
	{
		/* a u64 field ok, but the i32 field out of range */
		blen = ic_record(bad, 5, 1, 1, (int64_t)INT32_MAX + 1);
		assert_int_equal(rec_writer_append_records(w, bad, blen), REC_ERR_INVALID_ARG);
		/* a record that ends inside its fields */
		blen = ic_record(bad, 5, 1, 1, 0);
		bad[0] -= 1;
		assert_int_equal(rec_writer_append_records(w, bad, blen - 1), REC_ERR_INVALID_ARG);
	}
	assert_int_equal(rec_writer_flush(w), REC_OK); /* nothing pending */
	assert_int_equal(file_size(path), 0);

	/* 3000 records in one call: several chunks */
	for (uint64_t i = 0; i < 3000; i++)
		len += ic_record(buf + len, 500 + 10 * i, i % 3 == 0 ? 1 : 2, i, -(int64_t)i);
	assert_int_equal(rec_writer_append_records(w, buf, len), REC_OK);
	assert_int_equal(rec_writer_close(w), REC_OK);
	assert_true(check_chunked_file(path, 3000, 500, 1) >= 3);
	free(buf);
}

/* ---- every wire class, byte-exact; trailing bytes of appended records ------------- */

static const rec_field all_fields[] = {
	{ "b", "", "", REC_TYPE_BOOL, 0 },      { "i8", "", "", REC_TYPE_I8, 0 },
	{ "f32", "", "", REC_TYPE_F32, 0 },     { "f64", "", "", REC_TYPE_F64, 0 },
	{ "ts", "", "", REC_TYPE_TIMESTAMP, 0 }, { "blob", "", "", REC_TYPE_BLOB, 0 },
	{ "th", "", "", REC_TYPE_THREAD, 0 },   { "st", "", "", REC_TYPE_STACK, 0 },
};
static const rec_type all_type = { 3, REC_EVENT_HAS_DURATION, "test.All", "", "", "", 8, all_fields };

static void t_field_types(void **state)
{
	rec_writer_options o = fixed_opts(REC_CODEC_NONE);
	const char *path = tpath("types.rec");
	rec_writer *w = NULL;
	const uint64_t frames[1] = { 9 };
	uint8_t *buf;
	size_t len;
	tchunk c;
	tstats s;
	uint64_t ids[8];
	(void)state;

	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &all_type), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 4, 40, 0), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 9, 0, 0, 0, 0), REC_OK);
	assert_int_equal(rec_writer_define_stack(w, 6, 0, frames, 1), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 5, 50, 0), REC_OK); /* unreferenced */

	assert_int_equal(rec_writer_begin(w, 3, 200, 7, 0, 0), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 2), REC_ERR_INVALID_ARG); /* bool 2 */
	assert_int_equal(rec_writer_begin(w, 3, 200, 7, 0, 0), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 1), REC_OK);
	assert_int_equal(rec_writer_put_i64(w, -128), REC_OK);
	assert_int_equal(rec_writer_put_f64(w, 1.5), REC_OK);
	assert_int_equal(rec_writer_put_f64(w, -2.0), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 12345), REC_OK);
	assert_int_equal(rec_writer_put_bytes(w, "\x00\xff", 2), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 4), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 6), REC_OK);
	assert_int_equal(rec_writer_end(w), REC_OK);
	{
		/* appended: ticks 190, duration 1, all zero/empty values, 2 trailing bytes */
		const uint8_t rec[] = { 24, 3, 0xBE, 0x01, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					0, 0, 0, 0, 0, 0, 0xAA, 0xBB };
		assert_int_equal(rec_writer_append_records(w, rec, sizeof(rec)), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);

	buf = read_file(path, &len);
	parse_chunk(buf, len, &c);
	assert_int_equal(c.h.start_ticks, 190);
	assert_int_equal(c.h.duration_ticks, 207 - 190);
	{
		const uint8_t want[] = {
			/* Size 25: type 3, delta +10 (zz 20), duration 7 */
			25, 3, 20, 7,
			1,                      /* bool */
			0xFF, 0x01,             /* i8 -128: zz 255 */
			0x00, 0x00, 0xC0, 0x3F, /* f32 1.5 */
			0, 0, 0, 0, 0, 0, 0x00, 0xC0, /* f64 -2.0 */
			0xB9, 0x60,             /* ts 12345 */
			2, 0x00, 0xFF,          /* blob */
			4, 6,                   /* thread, stack */
			/* Size 23: type 3, delta -10 (zz 19), duration 1, zeros, trailing AA BB */
			23, 3, 19, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xAA, 0xBB,
		};
		assert_int_equal(c.sec_len[REC_SECTION_EVENTS], sizeof(want));
		assert_memory_equal(c.sec[REC_SECTION_EVENTS], want, sizeof(want));
	}
	parse_stats(&c, &s);
	assert_int_equal(s.count[0], 2);
	assert_int_equal(s.bytes[0], 26 + 24);
	assert_int_equal(s.last, 17);
	/* thread 4 and stack 6 (and frame 9) from fields; thread 5 absent */
	assert_int_equal(pool_ids(&c, REC_SECTION_THREADS, ids, 8, NULL), 1);
	assert_int_equal(ids[0], 4);
	assert_int_equal(pool_ids(&c, REC_SECTION_STACKS, ids, 8, NULL), 1);
	assert_int_equal(ids[0], 6);
	assert_int_equal(pool_ids(&c, REC_SECTION_FRAMES, ids, 8, NULL), 1);
	assert_int_equal(ids[0], 9);
	assert_false(c.present[REC_SECTION_STRINGS]);
	assert_false(c.present[REC_SECTION_MODULES]);
	free_chunk(&c);
	free(buf);
}

/* ---- close / abandon / flush ------------------------------------------------------- */

/* A writer on path with test.Ev, string 1 "first" and thread 1 (tid 99). */
static rec_writer *open_ev_writer(const char *path, const rec_writer_options *o)
{
	rec_writer *w;
	assert_int_equal(rec_writer_open_path(&w, path, o), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &ev_type), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 1, "first", 5), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 99, 0), REC_OK);
	return w;
}

/* One test.Ev at ticks on thread 1: string 1, 0, 0. */
static void put_ev(rec_writer *w, uint64_t ticks)
{
	assert_int_equal(rec_writer_begin(w, 7, ticks, 0, 1, 0), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 1), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 0), REC_OK);
	assert_int_equal(rec_writer_put_i64(w, 0), REC_OK);
	assert_int_equal(rec_writer_end(w), REC_OK);
}

static void t_close_final_abandon(void **state)
{
	rec_writer_options o = fixed_opts(REC_CODEC_ZSTD);
	const char *path = tpath("final.rec");
	rec_writer *w = NULL;
	uint8_t *buf;
	size_t len;
	tchunk c;
	tstats s;
	off_t size1;
	(void)state;

	/* close with nothing pending: one empty FINAL chunk at the anchor */
	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &ev_type), REC_OK);
	assert_int_equal(rec_writer_flush(w), REC_OK);
	assert_int_equal(file_size(path), 0);
	assert_int_equal(rec_writer_close(w), REC_OK);
	buf = read_file(path, &len);
	parse_chunk(buf, len, &c);
	assert_int_equal(c.size, len);
	assert_int_equal(c.h.flags, REC_CHUNK_FINAL);
	assert_int_equal(c.h.event_count, 0);
	assert_int_equal(c.h.start_ticks, 1000);
	assert_int_equal(c.h.duration_ticks, 0);
	assert_int_equal(c.sec_len[REC_SECTION_EVENTS], 0);
	assert_int_equal(c.nsec, 3); /* no pool sections */
	assert_int_equal(c.items[REC_SECTION_METADATA], 1);
	parse_stats(&c, &s);
	assert_int_equal(s.first, 0);
	assert_int_equal(s.last, 0);
	assert_int_equal(s.ntypes, 0);
	free_chunk(&c);
	free(buf);

	/* flush writes a non-final chunk; dropped counts go into it; close after
	 * a flush writes an empty FINAL chunk that starts where the last ended */
	w = open_ev_writer(path, &o);
	put_ev(w, 7777);
	rec_writer_note_dropped(w, 5);
	rec_writer_note_dropped(w, 2);
	assert_int_equal(rec_writer_flush(w), REC_OK);
	size1 = file_size(path);
	assert_true(size1 > 0);
	assert_int_equal(rec_writer_flush(w), REC_OK); /* nothing pending */
	assert_int_equal(file_size(path), size1);
	assert_int_equal(rec_writer_close(w), REC_OK);
	buf = read_file(path, &len);
	parse_chunk(buf, len, &c);
	assert_int_equal(c.h.flags, 0);
	assert_int_equal(c.h.event_count, 1);
	parse_stats(&c, &s);
	assert_int_equal(s.dropped, 7);
	free_chunk(&c);
	assert_true(c.size < len);
	parse_chunk(buf + c.size, len - c.size, &c);
	assert_int_equal(c.h.flags, REC_CHUNK_FINAL);
	assert_int_equal(c.h.sequence, 1);
	assert_int_equal(c.h.event_count, 0);
	assert_int_equal(c.h.start_ticks, 7777);
	assert_false(c.present[REC_SECTION_STRINGS]); /* only what this chunk references */
	assert_false(c.present[REC_SECTION_THREADS]);
	parse_stats(&c, &s);
	assert_int_equal(s.dropped, 0);
	free_chunk(&c);
	free(buf);

	/* abandon: what was flushed stays, nothing more is written */
	w = open_ev_writer(path, &o);
	put_ev(w, 1);
	assert_int_equal(rec_writer_flush(w), REC_OK);
	size1 = file_size(path);
	put_ev(w, 2);
	rec_writer_abandon(w);
	assert_int_equal(file_size(path), size1);
	buf = read_file(path, &len);
	parse_chunk(buf, len, &c);
	assert_int_equal(c.size, len);
	assert_int_equal(c.h.flags, 0);
	free_chunk(&c);
	free(buf);

	rec_writer_abandon(NULL);
	assert_int_equal(rec_writer_close(NULL), REC_OK);
}

/* ---- errors ------------------------------------------------------------------------- */

static rec_writer *open_small(const char *name, unsigned codec)
{
	rec_writer_options o = fixed_opts(codec);
	rec_writer *w = NULL;
	assert_int_equal(rec_writer_open_path(&w, tpath(name), &o), REC_OK);
	define_small(w);
	return w;
}

static void t_builder_errors(void **state)
{
	rec_writer *w = open_small("errors.rec", REC_CODEC_NONE);
	uint8_t *buf;
	size_t len;
	tchunk c;
	(void)state;

	/* put of the wrong type: the partial record is discarded */
	assert_int_equal(rec_writer_begin(w, 1, 5000, 1, 1, 1), REC_OK);
	assert_int_equal(rec_writer_put_i64(w, 2), REC_ERR_INVALID_ARG);
	assert_non_null(strstr(rec_writer_errmsg(w), "string"));
	assert_int_equal(rec_writer_put_u64(w, 2), REC_ERR_STATE);
	assert_int_equal(rec_writer_end(w), REC_ERR_STATE);
	/* out of range: u8 300 */
	assert_int_equal(rec_writer_begin(w, 2, 5000, 0, 1, 0), REC_OK);
	assert_int_equal(rec_writer_put_bytes(w, "x", 1), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 300), REC_ERR_INVALID_ARG);
	assert_non_null(strstr(rec_writer_errmsg(w), "300"));
	/* i32 out of range */
	assert_int_equal(rec_writer_begin(w, 1, 5000, 1, 1, 1), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 2), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 2), REC_OK);
	assert_int_equal(rec_writer_put_i64(w, (int64_t)INT32_MIN - 1), REC_ERR_INVALID_ARG);
	/* f64 into a u64 field */
	assert_int_equal(rec_writer_begin(w, 1, 5000, 1, 1, 1), REC_OK);
	assert_int_equal(rec_writer_put_f64(w, 1.0), REC_ERR_INVALID_ARG);
	/* too few fields at end */
	assert_int_equal(rec_writer_begin(w, 1, 5000, 1, 1, 1), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 2), REC_OK);
	assert_int_equal(rec_writer_end(w), REC_ERR_INVALID_ARG);
	assert_non_null(strstr(rec_writer_errmsg(w), "1 were put"));
	/* too many fields */
	assert_int_equal(rec_writer_begin(w, 2, 5000, 0, 1, 0), REC_OK);
	assert_int_equal(rec_writer_put_bytes(w, "x", 1), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 3), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 3), REC_ERR_INVALID_ARG);
	/* unknown type, begin twice */
	assert_int_equal(rec_writer_begin(w, 9, 5000, 0, 0, 0), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_writer_begin(w, 2, 5000, 0, 1, 0), REC_OK);
	assert_int_equal(rec_writer_begin(w, 2, 5000, 0, 1, 0), REC_ERR_STATE);
	/* a good event after all that */
	assert_int_equal(rec_writer_begin(w, 2, 4000, 0, 1, 0), REC_OK);
	assert_int_equal(rec_writer_put_bytes(w, "hello", 5), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 3), REC_OK);
	assert_int_equal(rec_writer_end(w), REC_OK);
	assert_int_equal(rec_writer_close(w), REC_OK);

	/* only the good event is in the file, byte-exact */
	buf = read_file(tpath("errors.rec"), &len);
	parse_chunk(buf, len, &c);
	assert_int_equal(c.h.event_count, 1);
	/* Size 10: type 2, delta 0, thread 1, text "hello", u8 3 */
	assert_int_equal(c.sec_len[REC_SECTION_EVENTS], 11);
	{
		const uint8_t want[11] = { 0x0A, 0x02, 0x00, 0x01, 0x05, 'h', 'e', 'l', 'l', 'o', 0x03 };
		assert_memory_equal(c.sec[REC_SECTION_EVENTS], want, 11);
	}
	free_chunk(&c);
	free(buf);
}

static void t_define_errors(void **state)
{
	rec_writer *w = open_small("defs.rec", REC_CODEC_ZSTD);
	const uint64_t frames[1] = { 55 };
	(void)state;

	/* redefinition conflicts */
	assert_int_equal(rec_writer_define_string(w, 2, "lockB", 5), REC_ERR_INVALID_ARG);
	assert_non_null(strstr(rec_writer_errmsg(w), "string 2"));
	assert_int_equal(rec_writer_define_thread(w, 1, 4243, 1), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_writer_define_frame(w, 2, 7, 1, 0x21, 0), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_writer_define_stack(w, 1, 0, frames, 1), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_writer_define_string(w, 0, "x", 1), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_writer_add_type(w, &lock_type), REC_ERR_INVALID_ARG);

	/* undefined string reference: flush fails, names the pool and id, and
	 * writes nothing; defining it makes the next flush succeed */
	assert_int_equal(rec_writer_begin(w, 1, 5000, 1, 1, 0), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 99), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 1), REC_OK);
	assert_int_equal(rec_writer_put_i64(w, 1), REC_OK);
	assert_int_equal(rec_writer_end(w), REC_OK);
	assert_int_equal(rec_writer_flush(w), REC_ERR_INVALID_ARG);
	assert_non_null(strstr(rec_writer_errmsg(w), "string id 99"));
	assert_int_equal(file_size(tpath("defs.rec")), 0);
	/* an undefined frame behind a defined stack */
	assert_int_equal(rec_writer_define_string(w, 99, "late", 4), REC_OK);
	assert_int_equal(rec_writer_define_stack(w, 2, REC_STACK_TRUNCATED, frames, 1), REC_OK);
	assert_int_equal(rec_writer_begin(w, 1, 5001, 1, 1, 2), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 0), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, 1), REC_OK);
	assert_int_equal(rec_writer_put_i64(w, 1), REC_OK);
	assert_int_equal(rec_writer_end(w), REC_OK);
	assert_int_equal(rec_writer_flush(w), REC_ERR_INVALID_ARG);
	assert_non_null(strstr(rec_writer_errmsg(w), "stack 2 references frame id 55"));
	assert_int_equal(file_size(tpath("defs.rec")), 0);
	assert_int_equal(rec_writer_define_frame(w, 55, 0, 0, 0, 0), REC_OK);
	assert_int_equal(rec_writer_flush(w), REC_OK);
	assert_true(file_size(tpath("defs.rec")) > 0);
	assert_int_equal(rec_writer_close(w), REC_OK);
}

/* Automatic chunks (at end) with an undefined reference: the events are
 * accepted and kept, the chunk waits for the definition. */
static void t_auto_chunk_undefined(void **state)
{
	rec_writer_options o = fixed_opts(REC_CODEC_LZ4);
	const char *path = tpath("autoundef.rec");
	rec_writer *w = NULL;
	rec_writer_stats st;
	(void)state;

	o.chunk_events_size = 200;
	w = open_ev_writer(path, &o);
	for (uint64_t i = 0; i < 300; i++) {
		assert_int_equal(rec_writer_begin(w, 7, 1000 + 10 * i, 0, 1, 0), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, i % 3 == 0 ? 1 : 2), REC_OK); /* 2: undefined */
		assert_int_equal(rec_writer_put_u64(w, i), REC_OK);
		assert_int_equal(rec_writer_put_i64(w, -(int64_t)i), REC_OK);
		assert_int_equal(rec_writer_end(w), REC_OK);
	}
	assert_non_null(strstr(rec_writer_errmsg(w), "string id 2"));
	assert_int_equal(file_size(path), 0);
	rec_writer_get_stats(w, &st);
	assert_int_equal(st.chunks, 0);
	assert_int_equal(rec_writer_flush(w), REC_ERR_INVALID_ARG);
	assert_non_null(strstr(rec_writer_errmsg(w), "string id 2"));
	/* defined now: the held events go out as chunks, nothing lost */
	assert_int_equal(rec_writer_define_string(w, 2, "other", 5), REC_OK);
	assert_int_equal(rec_writer_close(w), REC_OK);
	assert_true(check_chunked_file(path, 300, 1000, 1) >= 2);
}

/* ---- split EVENTS (1.3) ------------------------------------------------------------ */
static const rec_field far_fields[] = { { "v", "V", "", REC_TYPE_I64, REC_UNIT_NONE } };
/* a type id past the writer's dense flag table (writer_split.c) */
static const rec_type far_type = { 70000, 0, "test.Far", "Far", "", "test", 1, far_fields };

/* A file of the small types and a far type id, two chunks of 1500
 * events, in the given layout and codec level: its bytes. */
static uint8_t *layout_file(unsigned codec, int32_t level, uint32_t layout, size_t *len)
{
	const char *path = tpath("layout.rec");
	rec_writer_options o = fixed_opts(codec);
	o.events_layout = layout;
	o.level = level;
	rec_writer *w;
	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	define_small(w);
	assert_int_equal(rec_writer_add_type(w, &far_type), REC_OK);
	uint64_t x = 12345;
	for (int i = 0; i < 3000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t t = 10000 + (uint64_t)i * 1000 + (x >> 54);
		switch (i % 3) {
		case 0:
			assert_int_equal(rec_writer_begin(w, 1, t, x >> 40, 1, i % 7 ? 1 : 0), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, 2), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, x >> 33), REC_OK);
			assert_int_equal(rec_writer_put_i64(w, (int32_t)(x >> 32) >> 8), REC_OK);
			break;
		case 1:
			assert_int_equal(rec_writer_begin(w, 2, t, 0, 1, 0), REC_OK);
			assert_int_equal(rec_writer_put_bytes(w, "abcdefgh", 1 + (x >> 61)), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, x >> 62), REC_OK);
			break;
		default:
			assert_int_equal(rec_writer_begin(w, 70000, t, 0, 0, 0), REC_OK);
			assert_int_equal(rec_writer_put_i64(w, -(int64_t)(x >> 20)), REC_OK);
			break;
		}
		assert_int_equal(rec_writer_end(w), REC_OK);
		if (i == 1499)
			assert_int_equal(rec_writer_flush(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
	return read_file(path, len);
}

/* The same events in four streams and in one: every compressed chunk
 * split (zstd, LZ4), its streams joined by the spec (parse_chunk) byte for
 * byte the one-stream chunk's EVENTS, and, at the same zstd level for
 * every stream, smaller; without a codec, or asked for one stream, no
 * chunk split.  (zstd's default level is not one level: the split's
 * bodies stream is compressed faster and larger, writer_split.c.) */
static void t_split_layouts(void **state)
{
	(void)state;
	const unsigned codecs[] = { REC_CODEC_ZSTD, REC_CODEC_ZSTD, REC_CODEC_ZSTD, REC_CODEC_LZ4,
				    REC_CODEC_NONE };
	const int32_t levels[] = { 0, 1, 3, 0, 0 };
	for (size_t k = 0; k < 5; k++) {
		size_t ls, lo;
		uint8_t *fs = layout_file(codecs[k], levels[k], REC_EVENTS_DEFAULT, &ls);
		uint8_t *fo = layout_file(codecs[k], levels[k], REC_EVENTS_ONE_STREAM, &lo);
		size_t as = 0, ao = 0, chunks = 0, ev_s = 0, ev_o = 0;
		while (as < ls && ao < lo) {
			tchunk cs, co;
			parse_chunk(fs + as, ls - as, &cs);
			parse_chunk(fo + ao, lo - ao, &co);
			assert_int_equal(cs.split, codecs[k] != REC_CODEC_NONE && cs.h.event_count > 0);
			assert_false(co.split);
			assert_int_equal(cs.h.event_count, co.h.event_count);
			assert_int_equal(cs.sec_len[REC_SECTION_EVENTS], co.sec_len[REC_SECTION_EVENTS]);
			assert_memory_equal(cs.sec[REC_SECTION_EVENTS], co.sec[REC_SECTION_EVENTS],
					    cs.sec_len[REC_SECTION_EVENTS]);
			assert_int_equal(cs.h.raw_size, co.h.raw_size);
			if (cs.split) {
				ev_s += cs.size;
				ev_o += co.size;
			}
			/* zstd's default: the bodies (stream 3) at a negative
			 * level, their literals stored raw; an explicit level
			 * Huffman-codes them */
			if (cs.split && codecs[k] == REC_CODEC_ZSTD)
				assert_int_equal(cs.lit_kinds[3] == 1u, levels[k] == 0);
			as += cs.size;
			ao += co.size;
			chunks++;
			free_chunk(&cs);
			free_chunk(&co);
		}
		assert_int_equal(as, ls);
		assert_int_equal(ao, lo);
		assert_int_equal(chunks, 2); /* flushed at 1500, the rest at close */
		if (codecs[k] == REC_CODEC_ZSTD && levels[k] != 0)
			assert_true(ev_s < ev_o);
		/* the reader returns the same events from both */
		rec_reader *a, *b;
		assert_int_equal(rec_reader_open_mem(&a, fs, ls, "split", NULL), REC_OK);
		assert_int_equal(rec_reader_open_mem(&b, fo, lo, "one", NULL), REC_OK);
		rec_event ea, eb;
		size_t n = 0;
		rec_status sa, sb;
		while ((sa = rec_reader_next_event(a, &ea)) == REC_OK) {
			assert_int_equal(sb = rec_reader_next_event(b, &eb), REC_OK);
			assert_int_equal(ea.type->id, eb.type->id);
			assert_int_equal(ea.ticks, eb.ticks);
			assert_int_equal(ea.duration_ticks, eb.duration_ticks);
			assert_int_equal(ea.offset, eb.offset);
			assert_int_equal(ea.value_count, eb.value_count);
			n++;
		}
		assert_int_equal(sa, REC_END);
		assert_int_equal(rec_reader_next_event(b, &eb), REC_END);
		assert_int_equal(n, 3000);
		rec_reader_close(a);
		rec_reader_close(b);
		free(fs);
		free(fo);
	}
}

static void t_options(void **state)
{
	rec_writer_options o = fixed_opts(REC_CODEC_ZSTD);
	rec_writer *w = (rec_writer *)1;
	(void)state;

	o.reserved[2] = 1;
	assert_int_equal(rec_writer_open_path(&w, tpath("opts.rec"), &o), REC_ERR_INVALID_ARG);
	assert_null(w);
	assert_int_equal(access(tpath("opts.rec"), F_OK), -1); /* not created */
	o = fixed_opts(REC_CODEC_ZSTD);
	o.events_layout = 3;
	assert_int_equal(rec_writer_open_fd(&w, 1, &o), REC_ERR_INVALID_ARG);
	o = fixed_opts(REC_CODEC_ZSTD);
	o.struct_size = 8;
	assert_int_equal(rec_writer_open_fd(&w, 1, &o), REC_ERR_INVALID_ARG);
	o = fixed_opts(9);
	assert_int_equal(rec_writer_open_fd(&w, 1, &o), REC_ERR_UNSUPPORTED);
	o = fixed_opts(REC_CODEC_ZSTD);
	o.anchor_wall_ns = 0;
	o.anchor_ticks = 0;
	o.tick_frequency = 3000000000u; /* TSC-like without an anchor */
	assert_int_equal(rec_writer_open_fd(&w, 1, &o), REC_ERR_INVALID_ARG);

	/* defaults: random run id, getpid(), anchors from the clocks */
	assert_int_equal(rec_writer_open_path(&w, tpath("defaults.rec"), NULL), REC_OK);
	assert_int_equal(rec_writer_close(w), REC_OK);
	{
		size_t len;
		uint8_t *buf = read_file(tpath("defaults.rec"), &len);
		tchunk c;
		parse_chunk(buf, len, &c);
		assert_int_equal(c.h.pid, (uint32_t)getpid());
		assert_int_not_equal(c.h.run_id, 0);
		assert_int_equal(c.h.codec, REC_CODEC_ZSTD);
		assert_int_equal(c.h.tick_frequency, 1000000000u);
		assert_true(c.h.start_wall_ns > 1600000000000000000ll);
		assert_true(c.h.process_start_ns > 1600000000000000000ll);
		free_chunk(&c);
		free(buf);
	}
}

/* A sink that fails on its nth write with ENOSPC. */
typedef struct fail_sink {
	int writes, fail_at;
	size_t bytes;
} fail_sink;

static int fail_write(void *opaque, const void *buf, size_t len)
{
	fail_sink *s = opaque;
	(void)buf;
	if (++s->writes == s->fail_at)
		return -ENOSPC;
	s->bytes += len;
	return 0;
}

static void t_sink_failure(void **state)
{
	rec_writer_options o = fixed_opts(REC_CODEC_ZSTD);
	fail_sink fs = { 0, 2, 0 };
	rec_sink sink = { fail_write, NULL, &fs };
	rec_writer *w = NULL;
	rec_writer_stats st;
	uint64_t id;
	(void)state;

	assert_int_equal(rec_writer_open(&w, &sink, &o), REC_OK);
	define_small(w);
	write_small_events(w);
	assert_int_equal(rec_writer_flush(w), REC_OK);
	assert_int_equal(fs.writes, 1);
	write_small_events(w);
	assert_int_equal(rec_writer_flush(w), REC_ERR_IO);
	assert_string_equal(rec_writer_errmsg(w), "write: No space left on device");
	/* sticky */
	assert_int_equal(rec_writer_begin(w, 1, 1, 0, 1, 0), REC_ERR_IO);
	assert_int_equal(rec_writer_define_string(w, 50, "x", 1), REC_ERR_IO);
	assert_int_equal(rec_writer_intern_string(w, "x", 1, &id), REC_ERR_IO);
	assert_int_equal(rec_writer_append_records(w, "\x02\x01\x01", 3), REC_ERR_IO);
	assert_int_equal(rec_writer_flush(w), REC_ERR_IO);
	assert_string_equal(rec_writer_errmsg(w), "write: No space left on device");
	rec_writer_get_stats(w, &st);
	assert_int_equal(st.chunks, 1);
	assert_int_equal(st.events, 3);
	assert_int_equal(st.stored_bytes, fs.bytes);
	assert_int_equal(rec_writer_close(w), REC_ERR_IO);
	assert_int_equal(fs.writes, 2); /* close wrote nothing more */
}

/* A memory sink whose flush is counted and can fail. */
typedef struct mem_sink {
	uint8_t *buf;
	size_t len;
	int flushes, flush_rc;
} mem_sink;

static int mem_write(void *opaque, const void *buf, size_t len)
{
	mem_sink *m = opaque;
	uint8_t *nb = realloc(m->buf, m->len + len);
	if (!nb)
		return -ENOMEM;
	memcpy(nb + m->len, buf, len);
	m->buf = nb;
	m->len += len;
	return 0;
}

static int mem_flush(void *opaque)
{
	mem_sink *m = opaque;
	m->flushes++;
	return m->flush_rc;
}

static void t_callback_sink_flush(void **state)
{
	rec_writer_options o = fixed_opts(REC_CODEC_ZSTD);
	mem_sink m = { NULL, 0, 0, 0 };
	rec_sink sink = { mem_write, mem_flush, &m };
	rec_writer *w = NULL;
	tchunk c;
	(void)state;

	assert_int_equal(rec_writer_open(&w, &sink, &o), REC_OK);
	define_small(w);
	assert_int_equal(rec_writer_flush(w), REC_OK); /* nothing pending: no write, no flush */
	assert_int_equal(m.len, 0);
	assert_int_equal(m.flushes, 0);
	write_small_events(w);
	assert_int_equal(rec_writer_flush(w), REC_OK);
	assert_int_equal(m.flushes, 1);
	parse_chunk(m.buf, m.len, &c);
	assert_int_equal(c.size, m.len);
	assert_int_equal(c.h.event_count, 3);
	assert_int_equal(c.h.flags, 0);
	free_chunk(&c);
	/* a failing sink flush is sticky too */
	m.flush_rc = -EIO;
	write_small_events(w);
	assert_int_equal(rec_writer_flush(w), REC_ERR_IO);
	assert_string_equal(rec_writer_errmsg(w), "flush: Input/output error");
	assert_int_equal(rec_writer_begin(w, 1, 1, 0, 1, 0), REC_ERR_IO);
	assert_int_equal(rec_writer_put_u64(w, 1), REC_ERR_IO);
	assert_int_equal(rec_writer_put_i64(w, 1), REC_ERR_IO);
	assert_int_equal(rec_writer_put_f64(w, 1), REC_ERR_IO);
	assert_int_equal(rec_writer_put_bytes(w, "", 0), REC_ERR_IO);
	assert_int_equal(rec_writer_end(w), REC_ERR_IO);
	assert_int_equal(rec_writer_add_type(w, &ev_type), REC_ERR_IO);
	assert_int_equal(rec_writer_define_module(w, 9, 0, 0, 0), REC_ERR_IO);
	assert_string_equal(rec_writer_errmsg(w), "flush: Input/output error");
	assert_int_equal(rec_writer_close(w), REC_ERR_IO);
	free(m.buf);
}

/* Mutated interchange input: every call is either rejected (nothing
 * appended, a later flush writes nothing) or accepted, and an accepted input
 * gives a chunk whose events and statistics match it. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void t_append_mutations(void **state)
{
	rec_writer_options o = fixed_opts(REC_CODEC_NONE);
	uint8_t good[512], buf[512];
	size_t glen = 0;
	int accepted = 0, rejected = 0;
	(void)state;

	for (uint64_t i = 0; i < 12; i++)
		glen += ic_record(good + glen, 1000 + 7 * i, i & 1 ? 1 : 2, i * 1000, -(int64_t)i);
	for (int iter = 0; iter < 3000; iter++) {
		mem_sink m = { NULL, 0, 0, 0 };
		rec_sink sink = { mem_write, mem_flush, &m };
		rec_writer *w = NULL;
		size_t len = glen;
		int nmut = 1 + (int)(rng() % 3);
		rec_status st;

		memcpy(buf, good, glen);
		for (int k = 0; k < nmut; k++) {
			size_t at = (size_t)(rng() % len);
			switch (rng() % 4) {
			case 0: buf[at] = (uint8_t)rng(); break;
			case 1: buf[at] ^= (uint8_t)(1u << (rng() % 8)); break;
			case 2: len = at + 1; break; /* truncate */
			default: buf[at] = 0x80; break;
			}
		}
		assert_int_equal(rec_writer_open(&w, &sink, &o), REC_OK);
		assert_int_equal(rec_writer_add_type(w, &ev_type), REC_OK);
		assert_int_equal(rec_writer_add_type(w, &all_type), REC_OK);
		assert_int_equal(rec_writer_define_string(w, 1, "first", 5), REC_OK);
		assert_int_equal(rec_writer_define_string(w, 2, "other", 5), REC_OK);
		assert_int_equal(rec_writer_define_thread(w, 1, 99, 0), REC_OK);
		st = rec_writer_append_records(w, buf, len);
		if (st != REC_OK) {
			assert_int_equal(st, REC_ERR_INVALID_ARG);
			assert_true(strlen(rec_writer_errmsg(w)) > 0);
			assert_int_equal(rec_writer_flush(w), REC_OK);
			assert_int_equal(m.len, 0); /* nothing was appended */
			rejected++;
		} else {
			st = rec_writer_flush(w);
			if (st == REC_OK) {
				tchunk c;
				tstats s;
				size_t nrec = 0;
				uint64_t bytes = 0;
				const uint8_t *p = buf, *end = buf + len;
				while (p < end) {
					uint64_t size = uv(&p, end);
					p += size;
					nrec++;
				}
				parse_chunk(m.buf, m.len, &c);
				assert_int_equal(c.size, m.len);
				assert_int_equal(c.h.event_count, nrec);
				parse_stats(&c, &s);
				for (uint64_t k = 0; k < s.ntypes; k++)
					bytes += s.bytes[k];
				assert_int_equal(bytes, c.sec_len[REC_SECTION_EVENTS]);
				free_chunk(&c);
				accepted++;
			} else {
				/* only a mutated reference can make an accepted input fail */
				assert_int_equal(st, REC_ERR_INVALID_ARG);
				assert_non_null(strstr(rec_writer_errmsg(w), "never defined"));
			}
		}
		rec_writer_abandon(w);
		free(m.buf);
	}
	assert_true(accepted > 50);
	assert_true(rejected > 50);
}

/* ---- fd sink: a pipe, a slow reader, signals interrupting write() ---------------- */

typedef struct drain {
	int fd;
	uint8_t *buf;
	size_t len, cap;
	int err;
} drain;

static void *drain_main(void *arg)
{
	drain *d = arg;
	for (;;) {
		ssize_t n;
		struct timespec ts = { 0, 20000 };
		if (d->cap - d->len < 4096) {
			uint8_t *nb = realloc(d->buf, d->cap * 2 + 4096);
			if (!nb) {
				d->err = ENOMEM;
				return NULL;
			}
			d->buf = nb;
			d->cap = d->cap * 2 + 4096;
		}
		n = read(d->fd, d->buf + d->len, 4096);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			d->err = errno;
			return NULL;
		}
		if (n == 0)
			return NULL;
		d->len += (size_t)n;
		nanosleep(&ts, NULL); /* slow reader: the writer blocks in write() */
	}
}

static volatile sig_atomic_t alarms;
static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void write_pipe_events(rec_writer *w)
{
	assert_int_equal(rec_writer_add_type(w, &ev_type), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 1, "first", 5), REC_OK);
	assert_int_equal(rec_writer_define_string(w, 2, "other", 5), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 99, 0), REC_OK);
	for (uint64_t i = 0; i < 150000; i++) {
		assert_int_equal(rec_writer_begin(w, 7, 1000 + 10 * i, 0, 1, 0), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, i % 3 == 0 ? 1 : 2), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, i), REC_OK);
		assert_int_equal(rec_writer_put_i64(w, -(int64_t)i), REC_OK);
		assert_int_equal(rec_writer_end(w), REC_OK);
	}
	assert_int_equal(rec_writer_flush(w), REC_OK); /* fd sinks: no sync */
}

static void t_fd_pipe_signals(void **state)
{
	rec_writer_options o = fixed_opts(REC_CODEC_NONE);
	rec_writer *w = NULL;
	drain d = { -1, NULL, 0, 0, 0 };
	struct sigaction sa, old;
	struct itimerval it = { { 0, 300 }, { 0, 300 } }, off = { { 0, 0 }, { 0, 0 } };
	sigset_t set;
	pthread_t th;
	int p[2];
	uint8_t *want;
	size_t want_len;
	(void)state;

	o.chunk_events_size = 256 * 1024; /* chunks much larger than the pipe buffer */
	/* reference: the same events through open_path */
	assert_int_equal(rec_writer_open_path(&w, tpath("pipe_ref.rec"), &o), REC_OK);
	write_pipe_events(w);
	assert_int_equal(rec_writer_close(w), REC_OK);
	want = read_file(tpath("pipe_ref.rec"), &want_len);
	assert_true(want_len > 3 * 256 * 1024);

	assert_int_equal(pipe(p), 0);
	d.fd = p[0];
	/* the reader thread does not take SIGALRM: it interrupts the writer */
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	assert_int_equal(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
	assert_int_equal(pthread_create(&th, NULL, drain_main, &d), 0);
	assert_int_equal(pthread_sigmask(SIG_UNBLOCK, &set, NULL), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm; /* no SA_RESTART: write() returns short or EINTR */
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	alarms = 0;
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);

	assert_int_equal(rec_writer_open_fd(&w, p[1], &o), REC_OK);
	write_pipe_events(w);
	assert_int_equal(rec_writer_close(w), REC_OK);

	assert_int_equal(setitimer(ITIMER_REAL, &off, NULL), 0);
	/* A SIGALRM raised before the timer stopped can still be delivered after
	 * this (valgrind delivers signals late): ignored then, not fatal. */
	if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
		old.sa_handler = SIG_IGN;
	assert_int_equal(sigaction(SIGALRM, &old, NULL), 0);
	assert_int_not_equal(fcntl(p[1], F_GETFD), -1); /* the caller's fd stays open */
	assert_int_equal(close(p[1]), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(close(p[0]), 0);
	assert_int_equal(d.err, 0);
	assert_true(alarms > 0);
	assert_int_equal(d.len, want_len);
	assert_memory_equal(d.buf, want, want_len);
	free(d.buf);
	free(want);
}

/* ---- determinism ------------------------------------------------------------------- */

static void write_det(const char *path)
{
	rec_writer_options o = fixed_opts(REC_CODEC_ZSTD);
	rec_writer *w = NULL;

	o.chunk_events_size = 2048;
	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	define_small(w);
	for (int i = 0; i < 300; i++)
		write_small_events(w);
	rec_writer_note_dropped(w, 3);
	assert_int_equal(rec_writer_close(w), REC_OK);
}

static void t_deterministic(void **state)
{
	uint8_t *a, *b;
	size_t la, lb;
	(void)state;

	write_det(tpath("det1.rec"));
	write_det(tpath("det2.rec"));
	a = read_file(tpath("det1.rec"), &la);
	b = read_file(tpath("det2.rec"), &lb);
	assert_true(la > 2000);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	free(a);
	free(b);
}

/* Many sparse, large ids (hashes) and a stats cross-check of the writer. */
static void t_sparse_ids_stats(void **state)
{
	rec_writer_options o = fixed_opts(REC_CODEC_NONE);
	const char *path = tpath("sparse.rec");
	rec_writer *w = NULL;
	rec_writer_stats st;
	uint8_t *buf;
	size_t len;
	tchunk c;
	uint64_t *ids = malloc(5000 * sizeof(uint64_t)), *got = malloc(5000 * sizeof(uint64_t));
	(void)state;

	assert_non_null(ids);
	assert_non_null(got);
	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &ev_type), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 1, 0), REC_OK);
	for (uint64_t i = 0; i < 5000; i++) {
		char s[32];
		int n = snprintf(s, sizeof(s), "s%llu", (unsigned long long)i);
		ids[i] = (i + 1) * 0x9E3779B97F4A7C15ull | 1;
		assert_int_equal(rec_writer_define_string(w, ids[i], s, (size_t)n), REC_OK);
	}
	/* reference every other one */
	for (uint64_t i = 0; i < 5000; i += 2) {
		assert_int_equal(rec_writer_begin(w, 7, i, 0, 1, 0), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, ids[i]), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, i), REC_OK);
		assert_int_equal(rec_writer_put_i64(w, 0), REC_OK);
		assert_int_equal(rec_writer_end(w), REC_OK);
	}
	assert_int_equal(rec_writer_flush(w), REC_OK);
	rec_writer_get_stats(w, &st);
	assert_int_equal(st.chunks, 1);
	assert_int_equal(st.events, 2500);
	assert_int_equal(st.stored_bytes, file_size(path));
	assert_int_equal(rec_writer_close(w), REC_OK);

	buf = read_file(path, &len);
	parse_chunk(buf, len, &c);
	{
		uint64_t (*vals)[8] = NULL;
		size_t n = pool_ids(&c, REC_SECTION_STRINGS, got, 5000, vals);
		size_t k = 0;
		assert_int_equal(n, 2500);
		/* expected: the referenced ids, sorted */
		for (uint64_t i = 0; i < 5000; i += 2)
			ids[k++] = ids[i];
		for (size_t i = 1; i < k; i++)
			for (size_t j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
				uint64_t t = ids[j];
				ids[j] = ids[j - 1];
				ids[j - 1] = t;
			}
		assert_memory_equal(got, ids, k * sizeof(uint64_t));
	}
	free_chunk(&c);
	free(buf);
	free(ids);
	free(got);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_small_none),
		cmocka_unit_test(t_small_zstd),
		cmocka_unit_test(t_small_lz4),
		cmocka_unit_test(t_auto_chunking),
		cmocka_unit_test(t_append_records),
		cmocka_unit_test(t_field_types),
		cmocka_unit_test(t_close_final_abandon),
		cmocka_unit_test(t_builder_errors),
		cmocka_unit_test(t_define_errors),
		cmocka_unit_test(t_auto_chunk_undefined),
		cmocka_unit_test(t_options),
		cmocka_unit_test(t_split_layouts),
		cmocka_unit_test(t_sink_failure),
		cmocka_unit_test(t_callback_sink_flush),
		cmocka_unit_test(t_fd_pipe_signals),
		cmocka_unit_test(t_append_mutations),
		cmocka_unit_test(t_deterministic),
		cmocka_unit_test(t_sparse_ids_stats),
	};
	int rc;
	char cmd[64];

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
