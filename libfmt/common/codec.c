/* SPDX-License-Identifier: MIT */
/*
 * codec.c - section (de)compression, exactly as spec/FORMAT.md "Codecs":
 *   none: the bytes themselves;
 *   zstd: one zstd frame whose Frame_Content_Size is present and equals the
 *         raw size (ZSTD_compressCCtx always writes it);
 *   lz4:  one raw LZ4 block (no frame) that decodes to exactly the raw size.
 * Decompression is strict and safe on hostile input: it never writes past
 * dst + raw_len and refuses any result other than exactly raw_len bytes.
 *
 * Levels: 0 is the codec default.  zstd: the zstd level (0 = 3), clamped to
 * [ZSTD_minCLevel(), ZSTD_maxCLevel()].  LZ4: the acceleration of
 * LZ4_compress_fast (<= 1 means 1; larger is faster and compresses less).
 *
 * Status codes:
 *   compress:   REC_ERR_UNSUPPORTED unknown codec, REC_ERR_INVALID_ARG NULL
 *               buffers or dst_cap too small for NONE, REC_ERR_LIMIT input
 *               too large for the codec, REC_ERR_NOMEM context allocation,
 *               REC_ERR_CODEC the compressor failed (e.g. dst_cap below
 *               rec_codec_bound() and the data did not fit).
 *   decompress: REC_ERR_UNSUPPORTED unknown codec, REC_ERR_INVALID_ARG NULL
 *               buffers, REC_ERR_LIMIT sizes an LZ4 block cannot have
 *               (> LZ4_MAX_INPUT_SIZE / INT_MAX), REC_ERR_NOMEM context
 *               allocation, REC_ERR_CORRUPT everything else.
 */
#include <limits.h>
#include <stdlib.h>

#include <lz4.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "common/common_internal.h"

struct rec_codec_ctx {
	ZSTD_CCtx *cctx; /* created on first zstd compression */
	ZSTD_DCtx *dctx; /* created on first zstd decompression */
};

rec_codec_ctx *rec_codec_ctx_new(void)
{
	return calloc(1, sizeof(rec_codec_ctx));
}

static void codec_ctx_clear(rec_codec_ctx *ctx)
{
	ZSTD_freeCCtx(ctx->cctx);
	ZSTD_freeDCtx(ctx->dctx);
	ctx->cctx = NULL;
	ctx->dctx = NULL;
}

void rec_codec_ctx_free(rec_codec_ctx *ctx)
{
	if (!ctx)
		return;
	codec_ctx_clear(ctx);
	free(ctx);
}

size_t rec_codec_bound(unsigned codec, size_t n)
{
	switch (codec) {
	case REC_CODEC_NONE:
		return n;
	case REC_CODEC_ZSTD: {
		size_t b = ZSTD_compressBound(n);
		return ZSTD_isError(b) ? 0 : b;
	}
	case REC_CODEC_LZ4:
		if (n > (size_t)LZ4_MAX_INPUT_SIZE)
			return 0;
		return (size_t)LZ4_compressBound((int)n);
	default:
		return 0;
	}
}

rec_status rec_codec_compress(rec_codec_ctx *ctx, unsigned codec, int level, const void *src,
			      size_t src_len, void *dst, size_t dst_cap, size_t *out_len)
{
	if (!out_len || (src_len && !src) || (dst_cap && !dst))
		return REC_ERR_INVALID_ARG;
	*out_len = 0;

	switch (codec) {
	case REC_CODEC_NONE:
		if (dst_cap < src_len)
			return REC_ERR_INVALID_ARG;
		if (src_len)
			memcpy(dst, src, src_len);
		*out_len = src_len;
		return REC_OK;

	case REC_CODEC_ZSTD: {
		rec_codec_ctx tmp = { NULL, NULL };
		rec_codec_ctx *c = ctx ? ctx : &tmp;
		size_t r;

		if (level == 0)
			level = ZSTD_CLEVEL_DEFAULT;
		if (level < ZSTD_minCLevel())
			level = ZSTD_minCLevel();
		if (level > ZSTD_maxCLevel())
			level = ZSTD_maxCLevel();
		if (!c->cctx && !(c->cctx = ZSTD_createCCtx()))
			return REC_ERR_NOMEM;
		/* ZSTD_compressCCtx ignores parameters set earlier and writes the
		 * content size into the frame header. */
		r = ZSTD_compressCCtx(c->cctx, dst, dst_cap, src, src_len, level);
		if (c == &tmp)
			codec_ctx_clear(&tmp);
		if (ZSTD_isError(r)) {
			if (ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation)
				return REC_ERR_NOMEM;
			return REC_ERR_CODEC;
		}
		*out_len = r;
		return REC_OK;
	}

	case REC_CODEC_LZ4: {
		int accel = level > 1 ? level : 1; /* level = LZ4 acceleration */
		int cap = dst_cap > (size_t)INT_MAX ? INT_MAX : (int)dst_cap;
		int r;

		if (src_len > (size_t)LZ4_MAX_INPUT_SIZE)
			return REC_ERR_LIMIT;
		r = LZ4_compress_fast(src, dst, (int)src_len, cap, accel);
		if (r <= 0)
			return REC_ERR_CODEC;
		*out_len = (size_t)r;
		return REC_OK;
	}

	default:
		return REC_ERR_UNSUPPORTED;
	}
}

static rec_status zstd_decompress(rec_codec_ctx *ctx, const void *src, size_t src_len, void *dst,
				  size_t raw_len)
{
	rec_codec_ctx tmp = { NULL, NULL };
	rec_codec_ctx *c = ctx ? ctx : &tmp;
	unsigned long long fcs;
	size_t fsz, r;

	/* Exactly one regular frame (no skippable or legacy frame) ... */
	if (src_len < 4 || rec_le32(src) != ZSTD_MAGICNUMBER)
		return REC_ERR_CORRUPT;
	/* ... that declares its content size, equal to raw_len ... */
	fcs = ZSTD_getFrameContentSize(src, src_len);
	if (fcs == ZSTD_CONTENTSIZE_ERROR || fcs == ZSTD_CONTENTSIZE_UNKNOWN ||
	    fcs != (unsigned long long)raw_len)
		return REC_ERR_CORRUPT;
	/* ... and takes all of src. */
	fsz = ZSTD_findFrameCompressedSize(src, src_len);
	if (ZSTD_isError(fsz) || fsz != src_len)
		return REC_ERR_CORRUPT;

	if (!c->dctx && !(c->dctx = ZSTD_createDCtx()))
		return REC_ERR_NOMEM;
	r = ZSTD_decompressDCtx(c->dctx, dst, raw_len, src, src_len);
	if (c == &tmp)
		codec_ctx_clear(&tmp);
	if (ZSTD_isError(r)) {
		if (ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation)
			return REC_ERR_NOMEM;
		return REC_ERR_CORRUPT;
	}
	return r == raw_len ? REC_OK : REC_ERR_CORRUPT;
}

rec_status rec_codec_decompress(rec_codec_ctx *ctx, unsigned codec, const void *src,
				size_t src_len, void *dst, size_t raw_len)
{
	if (codec > REC_CODEC_LZ4)
		return REC_ERR_UNSUPPORTED;
	if ((src_len && !src) || (raw_len && !dst))
		return REC_ERR_INVALID_ARG;

	switch (codec) {
	case REC_CODEC_NONE:
		if (src_len != raw_len)
			return REC_ERR_CORRUPT;
		if (raw_len)
			memcpy(dst, src, raw_len);
		return REC_OK;

	case REC_CODEC_ZSTD:
		return zstd_decompress(ctx, src, src_len, dst, raw_len);

	default: { /* REC_CODEC_LZ4 */
		uint8_t dummy;
		int r;

		if (raw_len > (size_t)LZ4_MAX_INPUT_SIZE || src_len > (size_t)INT_MAX)
			return REC_ERR_LIMIT;
		if (src_len == 0)
			return REC_ERR_CORRUPT; /* a block is at least one byte */
		/* LZ4_decompress_safe never writes past dst + raw_len, and fails
		 * unless the block ends exactly at src + src_len. */
		r = LZ4_decompress_safe(src, raw_len ? dst : (void *)&dummy, (int)src_len,
					(int)raw_len);
		if (r < 0 || (size_t)r != raw_len)
			return REC_ERR_CORRUPT;
		return REC_OK;
	}
	}
}
