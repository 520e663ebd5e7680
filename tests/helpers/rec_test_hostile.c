/* SPDX-License-Identifier: MIT */
/*
 * rec_test_hostile - write hostile recordings for tests/cli/limits.sh,
 * chunk by chunk with the library's own encoders (common_internal.h), so
 * each file is well formed except for the one thing it attacks.
 *
 * Usage: rec_test_hostile CASE OUT [N]
 *   huge-chunk       a chunk header declaring a 4 GiB payload (file is short)
 *   huge-section     a section declaring a 2 GiB Raw_Size
 *   billion-events   Event_Count and EVENTS Item_Count of 1e9 in a tiny section
 *   huge-string      a string pool entry declaring 2 GiB of bytes
 *   missing-module   a frame referencing module id 7 that the chunk lacks
 *   missing-frame    a stack referencing frame id 99 that the chunk lacks
 *   too-deep         a stack declaring depth 4097 (limit 4096)
 *   zstd-bomb        a zstd EVENTS section of 64 MiB of zeros in ~2 KiB,
 *                    declared as 4096 raw bytes
 *   zstd-bomb-nosize the same bomb as a frame without a content size
 *   many-chunks      N valid tiny chunks (one event each)
 *   decoys           N garbage blocks of 64 bytes, each starting with the
 *                    magic and a Header_Size of 4096 but a wrong checksum,
 *                    then 4096 zero bytes and one valid chunk
 *   decoys-tail      the same without the zero bytes: the last decoys lie
 *                    within 4096 bytes of the end of the file
 *   deep-stacks      one chunk: N stacks of depth 4096 over 64 frames and
 *                    N events, each referencing one of them
 *   billion-header   a valid chunk of 3 events whose header's Event_Count
 *                    says 1e9 (the EVENTS section says 3)
 *   dropped-wrap     two valid chunks whose STATS each say 2^63 dropped
 *                    events (the sum wraps to 0 in 64 bits)
 *   wall-min         a valid chunk, then one whose Start_Wall_Ns is INT64_MIN
 *   count-mismatch   a chunk of 3 good records whose EVENTS Item_Count (and
 *                    header Event_Count) say 2, then a valid chunk of 2
 * Exit 0 on success, 1 on a usage or I/O error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "common/common_internal.h"

static void die(const char *what)
{
	fprintf(stderr, "rec_test_hostile: %s\n", what);
	exit(1);
}

static void need(bool ok)
{
	if (!ok)
		die("out of memory");
}

/* ---- chunk builder --------------------------------------------------- */
typedef struct chunk {
	rec_buf payload;
	uint16_t sections;
	uint64_t raw;
	uint64_t events;
	uint64_t payload_size_override; /* 0 = the real size */
	uint64_t event_count_override;  /* 0 = the real count */
	bool wall_override;
	int64_t wall;                   /* Start_Wall_Ns if wall_override */
} chunk;

static void section_raw(chunk *c, uint16_t kind, uint32_t items, const rec_buf *body)
{
	rec_section_header sh = { kind, 0, items, (uint32_t)body->len, (uint32_t)body->len };
	uint8_t h[REC_SECTION_HEADER_SIZE];
	rec_section_header_encode(&sh, h);
	need(rec_buf_append(&c->payload, h, sizeof h));
	need(rec_buf_append(&c->payload, body->data, body->len));
	c->sections++;
	c->raw += body->len;
}

/* A section whose header says whatever the caller wants. */
static void section_lying(chunk *c, uint16_t kind, uint16_t flags, uint32_t items,
			  uint32_t raw_size, const void *stored, size_t stored_len)
{
	rec_section_header sh = { kind, flags, items, (uint32_t)stored_len, raw_size };
	uint8_t h[REC_SECTION_HEADER_SIZE];
	rec_section_header_encode(&sh, h);
	need(rec_buf_append(&c->payload, h, sizeof h));
	need(rec_buf_append(&c->payload, stored, stored_len));
	c->sections++;
	c->raw += raw_size;
}

static void str(rec_buf *b, const char *s) { need(rec_buf_lenbytes(b, s, strlen(s))); }
static void uv(rec_buf *b, uint64_t v) { need(rec_buf_varint(b, v)); }
static void sv(rec_buf *b, int64_t v) { need(rec_buf_varint(b, rec_zigzag(v))); }

/* METADATA: type 1 "test.Hostile" with thread and stack, one u64 field. */
static void metadata(chunk *c)
{
	rec_buf b = { 0 };
	uv(&b, 1);
	uv(&b, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK);
	str(&b, "test.Hostile");
	str(&b, "Hostile");
	str(&b, "An event of a hostile test file.");
	str(&b, "test");
	uv(&b, 1);
	str(&b, "value");
	str(&b, "Value");
	uv(&b, REC_TYPE_U64);
	uv(&b, REC_UNIT_NONE);
	str(&b, "");
	section_raw(c, REC_SECTION_METADATA, 1, &b);
	rec_buf_free(&b);
}

/* STATS for n events of type 1, bytes in all, at ticks 0..n-1, and
 * dropped events. */
static void stats_dropped(chunk *c, uint64_t n, uint64_t bytes, uint64_t dropped)
{
	rec_buf b = { 0 };
	sv(&b, 0);
	sv(&b, n ? (int64_t)n - 1 : 0);
	uv(&b, dropped);
	uv(&b, n ? 1 : 0);
	if (n) {
		uv(&b, 1);
		uv(&b, n);
		uv(&b, bytes);
	}
	section_raw(c, REC_SECTION_STATS, n ? 1 : 0, &b);
	rec_buf_free(&b);
}

static void stats(chunk *c, uint64_t n, uint64_t bytes)
{
	stats_dropped(c, n, bytes, 0);
}

/* One event record of type 1: thread, stack, value; returns its bytes. */
static size_t record(rec_buf *b, int64_t delta, uint64_t thread, uint64_t stack, uint64_t value)
{
	rec_buf body = { 0 };
	uv(&body, 1);
	sv(&body, delta);
	uv(&body, thread);
	uv(&body, stack);
	uv(&body, value);
	size_t before = b->len;
	uv(b, body.len);
	need(rec_buf_append(b, body.data, body.len));
	rec_buf_free(&body);
	return b->len - before;
}

/* Pools: string 1 "main", 2 "f", 3 "/bin/x"; thread 1; module 1; frames
 * 1..nframes (module mod_ref). */
static void pools(chunk *c, uint64_t nframes, uint64_t mod_ref)
{
	rec_buf b = { 0 };
	uv(&b, 1); str(&b, "main");
	uv(&b, 1); str(&b, "f");
	uv(&b, 1); str(&b, "/bin/x");
	section_raw(c, REC_SECTION_STRINGS, 3, &b);
	b.len = 0;
	uv(&b, 1); uv(&b, 100); uv(&b, 1);
	section_raw(c, REC_SECTION_THREADS, 1, &b);
	b.len = 0;
	uv(&b, 1); uv(&b, 3); uv(&b, 0); uv(&b, 0x400000);
	section_raw(c, REC_SECTION_MODULES, 1, &b);
	b.len = 0;
	for (uint64_t i = 0; i < nframes; i++) {
		uv(&b, 1); uv(&b, 2); uv(&b, mod_ref); uv(&b, 0x10 * i); uv(&b, 4);
	}
	if (nframes)
		section_raw(c, REC_SECTION_FRAMES, (uint32_t)nframes, &b);
	rec_buf_free(&b);
}

static void stack_section(chunk *c, uint64_t nstacks, uint64_t depth, uint64_t nframes, uint64_t frame_ref)
{
	rec_buf b = { 0 };
	for (uint64_t s = 0; s < nstacks; s++) {
		uv(&b, 1);
		uv(&b, 0);
		uv(&b, depth);
		for (uint64_t d = 0; d < depth; d++)
			uv(&b, frame_ref ? frame_ref : 1 + (d + s) % nframes);
	}
	section_raw(c, REC_SECTION_STACKS, (uint32_t)nstacks, &b);
	rec_buf_free(&b);
}

static void events_section(chunk *c, uint64_t n, uint64_t nstacks, size_t *bytes)
{
	rec_buf b = { 0 };
	*bytes = 0;
	for (uint64_t i = 0; i < n; i++)
		*bytes += record(&b, i ? 1 : 0, 1, nstacks ? 1 + i % nstacks : 0, i);
	section_raw(c, REC_SECTION_EVENTS, (uint32_t)n, &b);
	c->events = n;
	rec_buf_free(&b);
}

static void chunk_write(FILE *f, chunk *c, uint32_t seq, uint32_t flags)
{
	rec_chunk_header h;
	memset(&h, 0, sizeof h);
	h.major = REC_FORMAT_MAJOR;
	h.minor = REC_FORMAT_MINOR;
	h.payload_size = c->payload_size_override ? c->payload_size_override : c->payload.len;
	h.payload_crc = rec_crc32c(0, c->payload.data, c->payload.len);
	h.flags = flags;
	h.codec = REC_CODEC_ZSTD;
	h.section_count = c->sections;
	h.raw_size = c->raw;
	h.event_count = c->event_count_override ? c->event_count_override : c->events;
	h.start_wall_ns = c->wall_override ? c->wall : 1700000000000000000LL;
	h.start_ticks = 1000;
	h.tick_frequency = 1000000000u;
	h.duration_ticks = c->events;
	h.run_id = 0x1234;
	h.process_start_ns = 1700000000000000000LL;
	h.pid = 42;
	h.sequence = seq;
	uint8_t hdr[REC_HEADER_SIZE_V1];
	rec_chunk_header_encode(&h, hdr);
	if (fwrite(hdr, 1, sizeof hdr, f) != sizeof hdr ||
	    (c->payload.len && fwrite(c->payload.data, 1, c->payload.len, f) != c->payload.len))
		die("write failed");
	rec_buf_free(&c->payload);
	memset(c, 0, sizeof *c);
}

/* A complete valid chunk of n events over one stack of depth 2, with the
 * header and STATS fields of *like (event count, wall time, dropped). */
static void valid_chunk_like(FILE *f, uint32_t seq, uint32_t flags, uint64_t n, const chunk *like,
			     uint64_t dropped)
{
	chunk c = { 0 };
	c.event_count_override = like->event_count_override;
	c.wall_override = like->wall_override;
	c.wall = like->wall;
	size_t bytes;
	metadata(&c);
	pools(&c, 2, 1);
	stack_section(&c, 1, 2, 2, 0);
	chunk tmp = { 0 };
	events_section(&tmp, n, 1, &bytes);
	rec_buf_free(&tmp.payload);
	stats_dropped(&c, n, bytes, dropped);
	events_section(&c, n, 1, &bytes);
	chunk_write(f, &c, seq, flags);
}

/* A complete valid chunk of n events over one stack of depth 2. */
static void valid_chunk(FILE *f, uint32_t seq, uint32_t flags, uint64_t n)
{
	chunk c = { 0 };
	size_t bytes;
	metadata(&c);
	pools(&c, 2, 1);
	stack_section(&c, 1, 2, 2, 0);
	/* STATS needs the event bytes: build events first into a scratch chunk. */
	chunk tmp = { 0 };
	events_section(&tmp, n, 1, &bytes);
	rec_buf_free(&tmp.payload);
	stats(&c, n, bytes);
	events_section(&c, n, 1, &bytes);
	chunk_write(f, &c, seq, flags);
}

static void bomb(FILE *f, bool with_size)
{
	size_t big = 64u * 1024u * 1024u;
	uint8_t *zeros = calloc(1, big);
	size_t cap = ZSTD_compressBound(big);
	uint8_t *z = malloc(cap);
	if (!zeros || !z)
		die("out of memory");
	size_t zlen;
	if (with_size) {
		zlen = ZSTD_compress(z, cap, zeros, big, 19);
	} else {
		ZSTD_CCtx *cc = ZSTD_createCCtx();
		ZSTD_outBuffer out = { z, cap, 0 };
		ZSTD_inBuffer in = { zeros, big, 0 };
		if (!cc)
			die("out of memory");
		ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 19);
		ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0);
		size_t r;
		do
			r = ZSTD_compressStream2(cc, &out, &in, ZSTD_e_end);
		while (r != 0 && !ZSTD_isError(r));
		if (ZSTD_isError(r))
			die("zstd failed");
		zlen = out.pos;
		ZSTD_freeCCtx(cc);
	}
	if (ZSTD_isError(zlen))
		die("zstd failed");
	chunk c = { 0 };
	metadata(&c);
	stats(&c, 1, 5);
	section_lying(&c, REC_SECTION_EVENTS, REC_SECTION_COMPRESSED, 1, 4096, z, zlen);
	c.events = 1;
	chunk_write(f, &c, 0, REC_CHUNK_FINAL);
	free(zeros);
	free(z);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		die("usage: rec_test_hostile CASE OUT [N]");
	const char *k = argv[1];
	uint64_t n = argc > 3 ? strtoull(argv[3], NULL, 10) : 1000;
	FILE *f = fopen(argv[2], "wb");
	if (!f)
		die("cannot open the output");
	chunk c = { 0 };
	size_t bytes;

	if (!strcmp(k, "billion-header")) {
		c.event_count_override = 1000000000u;
		valid_chunk_like(f, 0, REC_CHUNK_FINAL, 3, &c, 0);
	} else if (!strcmp(k, "dropped-wrap")) {
		valid_chunk_like(f, 0, 0, 1, &c, 1ull << 63);
		valid_chunk_like(f, 1, REC_CHUNK_FINAL, 1, &c, 1ull << 63);
	} else if (!strcmp(k, "wall-min")) {
		valid_chunk(f, 0, 0, 2);
		c.wall_override = true;
		c.wall = INT64_MIN;
		valid_chunk_like(f, 1, REC_CHUNK_FINAL, 2, &c, 0);
	} else if (!strcmp(k, "count-mismatch")) {
		rec_buf b = { 0 };
		size_t nb = 0;
		for (int i = 0; i < 3; i++)
			nb += record(&b, i ? 1 : 0, 1, 1, (uint64_t)i);
		metadata(&c);
		pools(&c, 2, 1);
		stack_section(&c, 1, 2, 2, 0);
		stats(&c, 2, nb);
		section_lying(&c, REC_SECTION_EVENTS, 0, 2, (uint32_t)b.len, b.data, b.len);
		c.events = 2;
		chunk_write(f, &c, 0, 0);
		rec_buf_free(&b);
		valid_chunk(f, 1, REC_CHUNK_FINAL, 2);
	} else if (!strcmp(k, "huge-chunk")) {
		valid_chunk(f, 0, 0, 3);
		metadata(&c);
		stats(&c, 0, 0);
		c.payload_size_override = 4ull << 30;
		chunk_write(f, &c, 1, REC_CHUNK_FINAL);
	} else if (!strcmp(k, "huge-section")) {
		metadata(&c);
		stats(&c, 0, 0);
		section_lying(&c, REC_SECTION_EVENTS, REC_SECTION_COMPRESSED, 1, 2u << 30, "\x28\xb5\x2f\xfd", 4);
		chunk_write(f, &c, 0, REC_CHUNK_FINAL);
	} else if (!strcmp(k, "billion-events")) {
		rec_buf b = { 0 };
		record(&b, 0, 0, 0, 1);
		metadata(&c);
		stats(&c, 1000000000u, 5000000000u);
		section_lying(&c, REC_SECTION_EVENTS, 0, 1000000000u, (uint32_t)b.len, b.data, b.len);
		c.events = 1000000000u;
		chunk_write(f, &c, 0, REC_CHUNK_FINAL);
		rec_buf_free(&b);
	} else if (!strcmp(k, "huge-string")) {
		rec_buf b = { 0 };
		uv(&b, 1);
		uv(&b, 2ull << 30);
		need(rec_buf_append(&b, "abcdefgh", 8));
		metadata(&c);
		stats(&c, 1, 6);
		section_raw(&c, REC_SECTION_STRINGS, 1, &b);
		b.len = 0;
		uv(&b, 1); uv(&b, 100); uv(&b, 1);
		section_raw(&c, REC_SECTION_THREADS, 1, &b);
		rec_buf_free(&b);
		events_section(&c, 1, 0, &bytes);
		chunk_write(f, &c, 0, REC_CHUNK_FINAL);
	} else if (!strcmp(k, "missing-module") || !strcmp(k, "missing-frame") || !strcmp(k, "too-deep")) {
		bool mm = !strcmp(k, "missing-module"), deep = !strcmp(k, "too-deep");
		chunk tmp = { 0 };
		events_section(&tmp, 1, 1, &bytes);
		rec_buf_free(&tmp.payload);
		metadata(&c);
		stats(&c, 1, bytes);
		pools(&c, 4, mm ? 7 : 1);
		stack_section(&c, 1, deep ? REC_MAX_STACK_DEPTH + 1 : 3, 4, mm || deep ? 0 : 99);
		events_section(&c, 1, 1, &bytes);
		chunk_write(f, &c, 0, REC_CHUNK_FINAL);
	} else if (!strcmp(k, "zstd-bomb") || !strcmp(k, "zstd-bomb-nosize")) {
		bomb(f, !strcmp(k, "zstd-bomb"));
	} else if (!strcmp(k, "many-chunks")) {
		for (uint64_t i = 0; i < n; i++)
			valid_chunk(f, (uint32_t)i, i + 1 == n ? REC_CHUNK_FINAL : 0, 1);
	} else if (!strcmp(k, "decoys") || !strcmp(k, "decoys-tail")) {
		uint8_t blk[64];
		for (uint64_t i = 0; i < n; i++) {
			for (size_t j = 0; j < sizeof blk; j++)
				blk[j] = (uint8_t)(i * 131 + j * 7);
			memcpy(blk, rec_magic, REC_MAGIC_LEN);
			rec_put_le16(blk + REC_HOFF_MAJOR, 1);
			rec_put_le16(blk + REC_HOFF_MINOR, 0);
			rec_put_le32(blk + REC_HOFF_HEADER_SIZE, REC_MAX_HEADER_SIZE);
			rec_put_le32(blk + REC_HOFF_HEADER_CRC, 0xdeadbeef);
			if (fwrite(blk, 1, sizeof blk, f) != sizeof blk)
				die("write failed");
		}
		if (!strcmp(k, "decoys")) {
			static const uint8_t pad[REC_MAX_HEADER_SIZE];
			if (fwrite(pad, 1, sizeof pad, f) != sizeof pad)
				die("write failed");
		}
		valid_chunk(f, 0, REC_CHUNK_FINAL, 2);
	} else if (!strcmp(k, "deep-stacks")) {
		chunk tmp = { 0 };
		events_section(&tmp, n, n, &bytes);
		rec_buf_free(&tmp.payload);
		metadata(&c);
		stats(&c, n, bytes);
		pools(&c, 64, 1);
		stack_section(&c, n, REC_MAX_STACK_DEPTH, 64, 0);
		events_section(&c, n, n, &bytes);
		chunk_write(f, &c, 0, REC_CHUNK_FINAL);
	} else {
		die("unknown case");
	}
	if (fclose(f) != 0)
		die("write failed");
	return 0;
}
