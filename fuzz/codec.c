/* SPDX-License-Identifier: MIT */
/*
 * codec.c - fuzz each codec's decompression with its size limit.
 * Input: byte 0 picks the codec (mod 4: none, zstd, lz4, and an unknown
 * one), bytes 1-4 the declared raw length (little-endian, mod 256 KiB + 1),
 * the rest is the stored payload.  rec_codec_decompress() must either fill
 * exactly raw_len bytes or fail, never write past them (ASan checks the
 * heap block is exactly raw_len).  Then the payload is compressed with the
 * same codec and decompressed back: the round trip must be exact.  zstd
 * also streams it (the writer's EVENTS: pieces of 1 + byte 1 * 97 bytes,
 * blocks ended after each when byte 2 is odd, the frame header rewritten
 * with the content size at the end): the strict decompressor must give the
 * payload back exactly.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/common_internal.h"
#include "fuzz.h"

#define REC_FUZZ_MAX_RAW (256u * 1024u)

static rec_codec_ctx *ctx;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 5)
		return 0;
	if (!ctx && !(ctx = rec_codec_ctx_new()))
		return 0;
	unsigned codec = data[0] % 4u;
	size_t raw_len = rec_le32(data + 1) % (REC_FUZZ_MAX_RAW + 1u);
	const uint8_t *src = data + 5;
	size_t src_len = size - 5;

	/* malloc(0) may return NULL; keep a real, exactly-sized block. */
	uint8_t *dst = malloc(raw_len ? raw_len : 1);
	if (!dst)
		return 0;
	rec_status st = rec_codec_decompress(ctx, codec, src, src_len, dst, raw_len);
	if (st == REC_OK)
		rec_fuzz_touch(dst, raw_len);
	if (st == REC_OK && codec == REC_CODEC_NONE &&
	    (raw_len != src_len || (raw_len && memcmp(dst, src, raw_len) != 0))) {
		fprintf(stderr, "codec: stored payload accepted with raw_len %zu != %zu\n", raw_len, src_len);
		abort();
	}
	if (codec == 3 && st != REC_ERR_UNSUPPORTED) {
		fprintf(stderr, "codec: unknown codec 3 gave status %d\n", (int)st);
		abort();
	}
	if (st != REC_OK && st != REC_ERR_CORRUPT && st != REC_ERR_UNSUPPORTED && st != REC_ERR_CODEC &&
	    st != REC_ERR_NOMEM && st != REC_ERR_LIMIT) {
		fprintf(stderr, "codec: unexpected status %d\n", (int)st);
		abort();
	}
	free(dst);

	/* Round trip of the payload itself. */
	if (codec == 3)
		return 0;
	size_t bound = rec_codec_bound(codec, src_len);
	uint8_t *comp = malloc(bound ? bound : 1);
	uint8_t *back = malloc(src_len ? src_len : 1);
	if (comp && back) {
		size_t clen = 0;
		st = rec_codec_compress(ctx, codec, 0, src, src_len, comp, bound, &clen);
		if (st != REC_OK) {
			fprintf(stderr, "codec: compress failed (%d) on %zu bytes\n", (int)st, src_len);
			abort();
		}
		st = rec_codec_decompress(ctx, codec, comp, clen, back, src_len);
		if (st != REC_OK || (src_len && memcmp(back, src, src_len) != 0)) {
			fprintf(stderr, "codec: round trip failed (%d) on %zu bytes\n", (int)st, src_len);
			abort();
		}
		/* One byte short must be refused, not overrun. */
		if (src_len > 0) {
			uint8_t *shorter = malloc(src_len - 1 ? src_len - 1 : 1);
			if (shorter) {
				st = rec_codec_decompress(ctx, codec, comp, clen, shorter, src_len - 1);
				if (st == REC_OK) {
					fprintf(stderr, "codec: %zu-byte payload accepted as %zu bytes\n",
						src_len, src_len - 1);
					abort();
				}
				free(shorter);
			}
		}
	}
	if (codec == REC_CODEC_ZSTD && back) {
		rec_buf out = { NULL, 0, 0 };
		size_t piece = 1 + (size_t)data[1] * 97u, off = 0;
		st = rec_codec_zstream_begin(ctx, 3, &out);
		for (size_t i = 0; st == REC_OK && i < src_len; i += piece)
			st = rec_codec_zstream_add(ctx, src + i, src_len - i < piece ? src_len - i : piece,
						   &out, data[2] & 1);
		if (st == REC_OK)
			st = rec_codec_zstream_end(ctx, &out, src_len, &off);
		if (st == REC_OK)
			st = rec_codec_decompress(ctx, codec, out.data + off, out.len - off, back, src_len);
		if (st != REC_OK || (src_len && memcmp(back, src, src_len) != 0)) {
			fprintf(stderr, "codec: streamed round trip failed (%d) on %zu bytes\n", (int)st,
				src_len);
			abort();
		}
		rec_buf_free(&out);
	}
	free(comp);
	free(back);
	return 0;
}
