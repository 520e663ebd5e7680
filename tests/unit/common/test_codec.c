/* SPDX-License-Identifier: MIT */
/* Unit tests: section codecs (none, zstd, LZ4) with the real libraries. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include <zstd.h>

#include "common/common_internal.h"

static const unsigned codecs[] = { REC_CODEC_NONE, REC_CODEC_ZSTD, REC_CODEC_LZ4 };
#define NCODECS (sizeof(codecs) / sizeof(codecs[0]))

/* Event-like, compressible data: 24-byte records with a fixed layout, a few
 * type ids, small pseudo-random time deltas and values, and repeated text. */
static uint8_t *make_compressible(size_t n)
{
	static const char text[] = "lock.wait mutex-0001 abc";
	uint8_t *b = malloc(n ? n : 1);
	uint32_t seed = 12345;
	assert_non_null(b);
	for (size_t i = 0; i < n; i++) {
		size_t rec = i / 24;
		seed = seed * 1103515245u + 12345u;
		switch (i % 24) {
		case 0: b[i] = 22; break;
		case 1: b[i] = (uint8_t)(1 + (seed >> 16) % 4); break;
		case 2: case 3: b[i] = (uint8_t)((seed >> 16) % 200); break;
		case 4: b[i] = (uint8_t)(rec % 5); break;
		default: b[i] = (uint8_t)text[i % 24]; break;
		}
	}
	return b;
}

static uint8_t *make_random(size_t n, uint64_t seed)
{
	uint8_t *b = malloc(n ? n : 1);
	assert_non_null(b);
	for (size_t i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		b[i] = (uint8_t)(seed >> 56);
	}
	return b;
}

/* Compress with codec, returning a malloc'd buffer of exactly *clen bytes. */
static uint8_t *compress_exact(rec_codec_ctx *ctx, unsigned codec, int level, const uint8_t *src,
			       size_t n, size_t *clen)
{
	size_t bound = rec_codec_bound(codec, n);
	uint8_t *tmp = malloc(bound ? bound : 1);
	assert_non_null(tmp);
	assert_int_equal(rec_codec_compress(ctx, codec, level, src, n, tmp, bound, clen), REC_OK);
	assert_true(*clen <= bound);
	uint8_t *out = malloc(*clen ? *clen : 1);
	assert_non_null(out);
	memcpy(out, tmp, *clen);
	free(tmp);
	return out;
}

/* Decompress into a malloc'd buffer of exactly raw_len bytes (ASan catches
 * any write past it). */
static rec_status decompress_exact(rec_codec_ctx *ctx, unsigned codec, const uint8_t *c,
				   size_t clen, size_t raw_len, const uint8_t *expect)
{
	uint8_t *out = malloc(raw_len ? raw_len : 1);
	assert_non_null(out);
	rec_status st = rec_codec_decompress(ctx, codec, c, clen, out, raw_len);
	if (st == REC_OK && expect)
		assert_memory_equal(out, expect, raw_len);
	free(out);
	return st;
}

static void roundtrip(rec_codec_ctx *ctx, unsigned codec, int level, const uint8_t *src, size_t n,
		      size_t *clen_out)
{
	size_t clen;
	uint8_t *c = compress_exact(ctx, codec, level, src, n, &clen);
	if (codec == REC_CODEC_NONE) {
		assert_int_equal(clen, n);
	} else if (codec == REC_CODEC_ZSTD) {
		/* one frame that states its content size */
		assert_int_equal(ZSTD_getFrameContentSize(c, clen), n);
		assert_int_equal(ZSTD_findFrameCompressedSize(c, clen), clen);
	}
	assert_int_equal(decompress_exact(ctx, codec, c, clen, n, src), REC_OK);
	if (clen_out)
		*clen_out = clen;
	free(c);
}

static void t_roundtrip(void **state)
{
	(void)state;
	static const size_t sizes[] = { 0, 1, 2, 15, 100, 4096, 65536 + 7, 1u << 20 };
	rec_codec_ctx *ctx = rec_codec_ctx_new();
	assert_non_null(ctx);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint8_t *comp = make_compressible(sizes[s]);
		uint8_t *rnd = make_random(sizes[s], sizes[s] + 1);
		for (size_t k = 0; k < NCODECS; k++) {
			roundtrip(ctx, codecs[k], 0, comp, sizes[s], NULL);
			roundtrip(ctx, codecs[k], 0, rnd, sizes[s], NULL);
			roundtrip(NULL, codecs[k], 0, comp, sizes[s], NULL); /* temporary context */
		}
		free(comp);
		free(rnd);
	}
	rec_codec_ctx_free(ctx);
	rec_codec_ctx_free(NULL);
}

static void t_empty_null_buffers(void **state)
{
	(void)state;
	for (size_t k = 0; k < NCODECS; k++) {
		uint8_t dst[64];
		size_t clen = 99;
		assert_int_equal(rec_codec_compress(NULL, codecs[k], 0, NULL, 0, dst, sizeof(dst), &clen),
				 REC_OK);
		assert_int_equal(rec_codec_decompress(NULL, codecs[k], dst, clen, NULL, 0), REC_OK);
		if (codecs[k] == REC_CODEC_NONE)
			assert_int_equal(clen, 0);
		else
			assert_true(clen > 0);
	}
}

static void t_compresses(void **state)
{
	(void)state;
	size_t n = 256 * 1024, clen;
	uint8_t *src = make_compressible(n);
	rec_codec_ctx *ctx = rec_codec_ctx_new();
	assert_non_null(ctx);
	roundtrip(ctx, REC_CODEC_ZSTD, 0, src, n, &clen);
	assert_true(clen < n / 3);
	size_t zdef = clen;
	roundtrip(ctx, REC_CODEC_LZ4, 0, src, n, &clen);
	assert_true(clen < n / 2);
	size_t lz4_1 = clen;
	/* other levels work and are honoured */
	roundtrip(ctx, REC_CODEC_ZSTD, 19, src, n, &clen);
	assert_true(clen < n / 3);
	roundtrip(ctx, REC_CODEC_ZSTD, -5, src, n, &clen);
	assert_true(clen < n);
	assert_true(clen > zdef); /* a faster level compresses less */
	roundtrip(ctx, REC_CODEC_ZSTD, 1000, src, n, NULL); /* clamped to max */
	roundtrip(ctx, REC_CODEC_LZ4, 50, src, n, &clen);
	assert_true(clen < n);
	assert_true(clen >= lz4_1); /* higher acceleration: faster, not smaller */
	assert_true(zdef < lz4_1);
	/* level 3 really is zstd's level 3; level 0 (the default) is level 1
	 * with the shorter minimum match and smaller table codec.c documents
	 * (minMatch 4, hashLog 13) */
	size_t bound = rec_codec_bound(REC_CODEC_ZSTD, n);
	uint8_t *ref = malloc(bound);
	assert_non_null(ref);
	size_t rlen = ZSTD_compress(ref, bound, src, n, 3);
	assert_false(ZSTD_isError(rlen));
	roundtrip(ctx, REC_CODEC_ZSTD, 3, src, n, &clen);
	assert_int_equal(rlen, clen);
	ZSTD_CCtx *zc = ZSTD_createCCtx();
	assert_non_null(zc);
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(zc, ZSTD_c_compressionLevel, 1)));
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(zc, ZSTD_c_minMatch, 4)));
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(zc, ZSTD_c_hashLog, 13)));
	rlen = ZSTD_compress2(zc, ref, bound, src, n);
	assert_false(ZSTD_isError(rlen));
	assert_int_equal(rlen, zdef);
	assert_int_equal(ZSTD_getFrameContentSize(ref, rlen), n);
	ZSTD_freeCCtx(zc);
	free(ref);
	rec_codec_ctx_free(ctx);
	free(src);
}

static void t_bound_and_small_dst(void **state)
{
	(void)state;
	uint8_t src[1000], dst[1200];
	size_t clen;
	uint8_t *rnd = make_random(sizeof(src), 3);
	memcpy(src, rnd, sizeof(src));
	free(rnd);
	assert_int_equal(rec_codec_bound(REC_CODEC_NONE, 1000), 1000);
	assert_true(rec_codec_bound(REC_CODEC_ZSTD, 1000) >= 1000);
	assert_true(rec_codec_bound(REC_CODEC_LZ4, 1000) >= 1000);
	assert_int_equal(rec_codec_bound(3, 1000), 0);
	assert_int_equal(rec_codec_bound(REC_CODEC_LZ4, (size_t)INT_MAX + 1), 0);
	assert_int_equal(rec_codec_compress(NULL, REC_CODEC_NONE, 0, src, 1000, dst, 999, &clen),
			 REC_ERR_INVALID_ARG);
	assert_int_equal(rec_codec_compress(NULL, REC_CODEC_ZSTD, 0, src, 1000, dst, 100, &clen),
			 REC_ERR_CODEC);
	assert_int_equal(rec_codec_compress(NULL, REC_CODEC_LZ4, 0, src, 1000, dst, 100, &clen),
			 REC_ERR_CODEC);
	assert_int_equal(rec_codec_compress(NULL, REC_CODEC_LZ4, 0, src, (size_t)INT_MAX + 1, dst,
					    sizeof(dst), &clen),
			 REC_ERR_LIMIT);
}

static void t_wrong_raw_len(void **state)
{
	(void)state;
	size_t n = 10000;
	uint8_t *src = make_compressible(n);
	for (size_t k = 0; k < NCODECS; k++) {
		size_t clen;
		uint8_t *c = compress_exact(NULL, codecs[k], 0, src, n, &clen);
		static const long deltas[] = { -1, +1, -1000, +1000 };
		for (size_t d = 0; d < 4; d++)
			assert_int_equal(decompress_exact(NULL, codecs[k], c, clen,
							  (size_t)((long)n + deltas[d]), NULL),
					 REC_ERR_CORRUPT);
		assert_int_equal(decompress_exact(NULL, codecs[k], c, clen, 0, NULL), REC_ERR_CORRUPT);
		assert_int_equal(decompress_exact(NULL, codecs[k], c, clen, n, src), REC_OK);
		free(c);
	}
	free(src);
}

/* Every truncation is refused; every single-byte change either is refused
 * or decodes to exactly raw_len bytes (zstd and LZ4 blocks carry no
 * checksum of their own: the payload CRC32C catches those). */
static void t_truncated_and_flipped(void **state)
{
	(void)state;
	size_t n = 3000;
	uint8_t *srcs[2] = { make_compressible(n), make_random(n, 9) };
	rec_codec_ctx *ctx = rec_codec_ctx_new();
	assert_non_null(ctx);
	for (size_t s = 0; s < 2; s++) {
		for (size_t k = 0; k < NCODECS; k++) {
			size_t clen, refused = 0;
			uint8_t *c = compress_exact(ctx, codecs[k], 0, srcs[s], n, &clen);
			for (size_t cut = 0; cut < clen; cut++) {
				uint8_t *t = malloc(cut ? cut : 1);
				assert_non_null(t);
				memcpy(t, c, cut);
				assert_int_equal(decompress_exact(ctx, codecs[k], t, cut, n, NULL),
						 REC_ERR_CORRUPT);
				free(t);
			}
			for (size_t i = 0; i < clen; i++) {
				for (unsigned x = 1; x < 256; x <<= 3) {
					c[i] ^= (uint8_t)x;
					rec_status st = decompress_exact(ctx, codecs[k], c, clen, n, NULL);
					assert_true(st == REC_OK || st == REC_ERR_CORRUPT);
					refused += st != REC_OK;
					c[i] ^= (uint8_t)x;
				}
			}
			if (codecs[k] != REC_CODEC_NONE)
				assert_true(refused > 0);
			assert_int_equal(decompress_exact(ctx, codecs[k], c, clen, n, srcs[s]), REC_OK);
			free(c);
		}
	}
	/* zstd frame header damage is always caught */
	size_t clen;
	uint8_t *c = compress_exact(ctx, REC_CODEC_ZSTD, 0, srcs[0], n, &clen);
	for (size_t i = 0; i < 4; i++) {
		c[i] ^= 0x40;
		assert_int_equal(decompress_exact(ctx, REC_CODEC_ZSTD, c, clen, n, NULL), REC_ERR_CORRUPT);
		c[i] ^= 0x40;
	}
	free(c);
	rec_codec_ctx_free(ctx);
	free(srcs[0]);
	free(srcs[1]);
}

static void t_zstd_bomb_and_framing(void **state)
{
	(void)state;
	size_t big = 1u << 20, small = 1000, clen;
	uint8_t *src = calloc(1, big); /* zeros: a tiny frame for a big size */
	assert_non_null(src);
	rec_codec_ctx *ctx = rec_codec_ctx_new();
	assert_non_null(ctx);

	/* A frame that declares 1 MiB, offered as a 1000-byte section. */
	uint8_t *c = compress_exact(ctx, REC_CODEC_ZSTD, 0, src, big, &clen);
	assert_true(clen < small);
	assert_int_equal(decompress_exact(ctx, REC_CODEC_ZSTD, c, clen, small, NULL), REC_ERR_CORRUPT);
	free(c);

	/* Trailing garbage after a valid frame. */
	c = compress_exact(ctx, REC_CODEC_ZSTD, 0, src, small, &clen);
	uint8_t *g = malloc(clen + 8);
	assert_non_null(g);
	memcpy(g, c, clen);
	memset(g + clen, 0, 8);
	assert_int_equal(decompress_exact(ctx, REC_CODEC_ZSTD, g, clen + 1, small, NULL), REC_ERR_CORRUPT);
	assert_int_equal(decompress_exact(ctx, REC_CODEC_ZSTD, g, clen + 8, small, NULL), REC_ERR_CORRUPT);
	/* Two frames back to back (each half the data): refused. */
	size_t c1, c2;
	uint8_t *f1 = compress_exact(ctx, REC_CODEC_ZSTD, 0, src, small / 2, &c1);
	uint8_t *f2 = compress_exact(ctx, REC_CODEC_ZSTD, 0, src + small / 2, small / 2, &c2);
	uint8_t *two = malloc(c1 + c2);
	assert_non_null(two);
	memcpy(two, f1, c1);
	memcpy(two + c1, f2, c2);
	assert_int_equal(decompress_exact(ctx, REC_CODEC_ZSTD, two, c1 + c2, small, NULL), REC_ERR_CORRUPT);
	free(two);
	free(f1);
	free(f2);
	free(g);
	free(c);

	/* A frame without a content size: refused. */
	ZSTD_CCtx *z = ZSTD_createCCtx();
	assert_non_null(z);
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_contentSizeFlag, 0)));
	size_t bound = ZSTD_compressBound(small);
	uint8_t *nf = malloc(bound);
	assert_non_null(nf);
	ZSTD_inBuffer in = { src, small, 0 };
	ZSTD_outBuffer out = { nf, bound, 0 };
	assert_int_equal(ZSTD_compressStream2(z, &out, &in, ZSTD_e_end), 0);
	assert_int_equal(ZSTD_getFrameContentSize(nf, out.pos), ZSTD_CONTENTSIZE_UNKNOWN);
	assert_int_equal(decompress_exact(ctx, REC_CODEC_ZSTD, nf, out.pos, small, NULL), REC_ERR_CORRUPT);
	free(nf);
	ZSTD_freeCCtx(z);

	/* A skippable frame (content size 0) is not a zstd data frame. */
	uint8_t skip[8 + 4];
	rec_put_le32(skip, 0x184D2A50u);
	rec_put_le32(skip + 4, 4);
	memset(skip + 8, 0, 4);
	assert_int_equal(rec_codec_decompress(ctx, REC_CODEC_ZSTD, skip, sizeof(skip), NULL, 0),
			 REC_ERR_CORRUPT);
	rec_codec_ctx_free(ctx);
	free(src);
}

static void t_lz4_limits(void **state)
{
	(void)state;
	uint8_t b[16] = { 0 };
	/* Sizes an LZ4 block cannot have are refused before any access. */
	assert_int_equal(rec_codec_decompress(NULL, REC_CODEC_LZ4, b, sizeof(b), b, (size_t)INT_MAX + 1),
			 REC_ERR_LIMIT);
	assert_int_equal(rec_codec_decompress(NULL, REC_CODEC_LZ4, b, (size_t)INT_MAX + 1, b, 16),
			 REC_ERR_LIMIT);
	assert_int_equal(rec_codec_decompress(NULL, REC_CODEC_LZ4, b, SIZE_MAX, b, 16), REC_ERR_LIMIT);
	/* An empty block is not a block. */
	assert_int_equal(rec_codec_decompress(NULL, REC_CODEC_LZ4, b, 0, b, 0), REC_ERR_CORRUPT);
	/* A literal-only block claiming 15+255 literals with 3 bytes present. */
	uint8_t lie[4] = { 0xF0, 0xFF, 0x00, 'x' };
	assert_int_equal(decompress_exact(NULL, REC_CODEC_LZ4, lie, sizeof(lie), 270, NULL),
			 REC_ERR_CORRUPT);
	/* none: the stored size must be the raw size */
	assert_int_equal(rec_codec_decompress(NULL, REC_CODEC_NONE, b, 15, b, 16), REC_ERR_CORRUPT);
}

static void t_unknown_codec(void **state)
{
	(void)state;
	uint8_t src[10] = { 1, 2, 3 }, dst[100];
	size_t clen;
	for (unsigned codec = 3; codec < 300; codec += 37) {
		assert_int_equal(rec_codec_compress(NULL, codec, 0, src, sizeof(src), dst, sizeof(dst), &clen),
				 REC_ERR_UNSUPPORTED);
		assert_int_equal(rec_codec_decompress(NULL, codec, src, sizeof(src), dst, sizeof(src)),
				 REC_ERR_UNSUPPORTED);
	}
	assert_int_equal(rec_codec_decompress(NULL, UINT_MAX, src, sizeof(src), dst, 10),
			 REC_ERR_UNSUPPORTED);
}

/* One section compressed piece by piece (the writer's streamed EVENTS): the
 * frame states its content size (the rewritten header), decodes with the
 * strict one-shot decompressor to exactly the input, spans several blocks,
 * and is refused with any other raw size; pieces ending a block (flush) and
 * pieces left to zstd's own blocks both work. */
static void t_zstream(void **state)
{
	(void)state;
	const size_t sizes[] = { 1, 1000, 131072, 300000, 1u << 20 };
	rec_codec_ctx *ctx = rec_codec_ctx_new();
	assert_non_null(ctx);
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		for (int flush = 0; flush <= 1; flush++) {
			const size_t n = sizes[k];
			uint8_t *src = make_compressible(n);
			rec_buf out = { NULL, 0, 0 };
			size_t off = 0, piece = 7000 + 3000 * (size_t)flush;
			assert_int_equal(rec_codec_zstream_begin(ctx, 3, &out), REC_OK);
			for (size_t i = 0; i < n; i += piece) {
				size_t m = n - i < piece ? n - i : piece;
				assert_int_equal(rec_codec_zstream_add(ctx, src + i, m, &out, flush), REC_OK);
				/* one-shot compression on the same context meanwhile */
				if (i == 0) {
					size_t clen;
					free(compress_exact(ctx, REC_CODEC_ZSTD, 3, src, m, &clen));
				}
			}
			assert_int_equal(rec_codec_zstream_end(ctx, &out, n, &off), REC_OK);
			const uint8_t *f = out.data + off;
			size_t flen = out.len - off;
			assert_int_equal(ZSTD_getFrameContentSize(f, flen), (unsigned long long)n);
			assert_int_equal(ZSTD_findFrameCompressedSize(f, flen), flen);
			uint8_t *back = malloc(n + 1);
			assert_non_null(back);
			assert_int_equal(rec_codec_decompress(ctx, REC_CODEC_ZSTD, f, flen, back, n), REC_OK);
			assert_memory_equal(back, src, n);
			assert_int_equal(rec_codec_decompress(ctx, REC_CODEC_ZSTD, f, flen, back, n - 1),
					 REC_ERR_CORRUPT);
			/* a streamed frame: no Single_Segment, 4-byte content size */
			if (n > piece) {
				assert_int_equal(f[4] >> 6, 2);
				assert_int_equal(f[4] & 0x20, 0);
			}
			/* more than one block once the input exceeds one (128 KiB) */
			if (n > 131072) {
				/* RFC 8878 3.1.1.1: magic, descriptor, window
				 * descriptor (not single-segment), no dictionary,
				 * then the 4-byte content size */
				assert_int_equal(f[4] & 3, 0);
				size_t pos = 4 + 1 + 1 + 4, blocks = 0;
				for (;;) {
					uint32_t bh = (uint32_t)f[pos] | (uint32_t)f[pos + 1] << 8 |
						      (uint32_t)f[pos + 2] << 16;
					uint32_t type = (bh >> 1) & 3, bsize = bh >> 3;
					pos += 3 + (type == 1 ? 1 : bsize);
					blocks++;
					if (bh & 1)
						break;
					assert_true(pos < flen);
				}
				assert_true(blocks >= 2);
			}
			free(back);
			free(src);
			rec_buf_free(&out);
		}
	}
	/* arguments */
	rec_buf out = { NULL, 0, 0 };
	size_t off;
	assert_int_equal(rec_codec_zstream_begin(NULL, 3, &out), REC_ERR_INVALID_ARG);
	rec_codec_ctx *fresh = rec_codec_ctx_new();
	assert_non_null(fresh);
	assert_int_equal(rec_codec_zstream_add(fresh, "x", 1, &out, 0), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_codec_zstream_end(fresh, &out, 1, &off), REC_ERR_INVALID_ARG);
	rec_codec_ctx_free(fresh);
	rec_codec_ctx_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_roundtrip),
		cmocka_unit_test(t_empty_null_buffers),
		cmocka_unit_test(t_compresses),
		cmocka_unit_test(t_bound_and_small_dst),
		cmocka_unit_test(t_wrong_raw_len),
		cmocka_unit_test(t_truncated_and_flipped),
		cmocka_unit_test(t_zstd_bomb_and_framing),
		cmocka_unit_test(t_lz4_limits),
		cmocka_unit_test(t_unknown_codec),
		cmocka_unit_test(t_zstream),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
