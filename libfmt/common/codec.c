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
 * Levels: 0 is the codec default.  zstd: the zstd level, clamped to
 * [ZSTD_minCLevel(), ZSTD_maxCLevel()]; 0 is level 1 with a shorter
 * minimum match and a smaller table (zstd_params; a split EVENTS section's
 * streams have their own default levels: write/writer_split.c).  LZ4: the acceleration of
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
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_getFrameProgression: exported by the shared library too */
#include <zstd.h>
#include <zstd_errors.h>

#include "common/common_internal.h"

struct rec_codec_ctx {
	ZSTD_CCtx *cctx; /* created on first zstd compression */
	ZSTD_DCtx *dctx; /* created on first zstd decompression */
	ZSTD_CCtx *zs;   /* the section being streamed (rec_codec_zstream_*) */
};

rec_codec_ctx *rec_codec_ctx_new(void)
{
	return calloc(1, sizeof(rec_codec_ctx));
}

static void codec_ctx_clear(rec_codec_ctx *ctx)
{
	ZSTD_freeCCtx(ctx->cctx);
	ZSTD_freeDCtx(ctx->dctx);
	ZSTD_freeCCtx(ctx->zs);
	ctx->cctx = NULL;
	ctx->dctx = NULL;
	ctx->zs = NULL;
}

void rec_codec_ctx_free(rec_codec_ctx *ctx)
{
	if (!ctx)
		return;
	codec_ctx_clear(ctx);
	free(ctx);
}

/* The codec default (level 0): zstd level 1 (the fast strategy, a 512 KiB
 * window) with minMatch 4 instead of 7 and hashLog 13 instead of 14 (one
 * 32 KiB table, which stays in a core's L1/L2 cache between the background
 * thread's rounds).  Chosen by measurement on format 1.3's split EVENTS
 * (bench/HISTORY.md "Background thread cost", 2026-12-06): against the
 * previous default (level 3's double-fast matcher, hashLog 15, chainLog 10)
 * the background thread's CPU 14 % lower, the recorder's 8-thread data the
 * same size, bench/gen_events' (the bytes goal's) 9 % smaller.  An explicit
 * level is zstd's own. */
enum { ZD_LEVEL = 1, ZD_MINMATCH = 4, ZD_HASHLOG = 13 };

static int zstd_level(int level)
{
	if (level == 0)
		return ZD_LEVEL;
	if (level < ZSTD_minCLevel())
		level = ZSTD_minCLevel();
	if (level > ZSTD_maxCLevel())
		level = ZSTD_maxCLevel();
	return level;
}

/* Set c's parameters for level (0: the codec default above). */
static size_t zstd_params(ZSTD_CCtx *c, int level)
{
	size_t r = ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, zstd_level(level));
	if (level != 0 || ZSTD_isError(r))
		return r;
	if (ZSTD_isError(r = ZSTD_CCtx_setParameter(c, ZSTD_c_minMatch, ZD_MINMATCH)))
		return r;
	return ZSTD_CCtx_setParameter(c, ZSTD_c_hashLog, ZD_HASHLOG);
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
		rec_codec_ctx tmp = { NULL, NULL, NULL };
		rec_codec_ctx *c = ctx ? ctx : &tmp;
		size_t r;

		if (!c->cctx && !(c->cctx = ZSTD_createCCtx()))
			return REC_ERR_NOMEM;
		/* ZSTD_compress2 writes the content size into the frame header
		 * (ZSTD_c_contentSizeFlag is 1 by default). */
		ZSTD_CCtx_reset(c->cctx, ZSTD_reset_session_and_parameters);
		r = zstd_params(c->cctx, level);
		if (!ZSTD_isError(r))
			r = ZSTD_compress2(c->cctx, dst, dst_cap, src, src_len);
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
	rec_codec_ctx tmp = { NULL, NULL, NULL };
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

/* ---- one zstd section compressed piece by piece --------------------------------
 *
 * The spec's zstd section is one frame whose Frame_Content_Size is present
 * and equals Raw_Size.  A stream does not know that size when it writes the
 * frame header, so zstd writes the header without it (Frame_Header_Descriptor
 * with FCS_Field_Size 0, Single_Segment 0, then a Window_Descriptor).  The
 * blocks that follow do not depend on the header beyond the window size, so
 * at the end the header is rewritten with a 4-byte Frame_Content_Size (flag
 * 2; Raw_Size is below 4 GiB by the limits) and the same window descriptor,
 * checksum and dictionary flags: the 4 bytes reserved in front of the
 * stream's output take the longer header, and the result is exactly the
 * frame a one-shot compression could have written (RFC 8878 3.1.1.1). */

#define ZS_RESERVE 4u /* FCS bytes the rewritten header adds */

rec_status rec_codec_zstream_begin(rec_codec_ctx *ctx, int level, rec_buf *out)
{
	if (!ctx || !out)
		return REC_ERR_INVALID_ARG;
	if (!ctx->zs && !(ctx->zs = ZSTD_createCCtx()))
		return REC_ERR_NOMEM;
	ZSTD_CCtx_reset(ctx->zs, ZSTD_reset_session_and_parameters);
	if (ZSTD_isError(zstd_params(ctx->zs, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(ctx->zs, ZSTD_c_contentSizeFlag, 1)))
		return REC_ERR_CODEC;
	out->len = 0;
	if (!rec_buf_reserve(out, ZS_RESERVE + 18u))
		return REC_ERR_NOMEM;
	memset(out->data, 0, ZS_RESERVE);
	out->len = ZS_RESERVE;
	return REC_OK;
}

/* Feed src; end: finish the frame.  Output is appended to out. */
static rec_status zstream_run(rec_codec_ctx *ctx, const void *src, size_t len, rec_buf *out,
			      ZSTD_EndDirective how)
{
	ZSTD_inBuffer in = { src, len, 0 };
	for (;;) {
		size_t room = ZSTD_CStreamOutSize();
		if (out->cap - out->len < room && !rec_buf_reserve(out, room))
			return REC_ERR_NOMEM;
		ZSTD_outBuffer o = { out->data + out->len, out->cap - out->len, 0 };
		size_t left = ZSTD_compressStream2(ctx->zs, &o, &in, how);
		if (ZSTD_isError(left))
			return ZSTD_getErrorCode(left) == ZSTD_error_memory_allocation ? REC_ERR_NOMEM
										: REC_ERR_CODEC;
		out->len += o.pos;
		if (in.pos == in.size && (how == ZSTD_e_continue || left == 0))
			return REC_OK;
	}
}

rec_status rec_codec_zstream_add(rec_codec_ctx *ctx, const void *src, size_t len, rec_buf *out,
				 int flush)
{
	if (!ctx || !ctx->zs || !out || (len && !src))
		return REC_ERR_INVALID_ARG;
	return zstream_run(ctx, src, len, out, flush ? ZSTD_e_flush : ZSTD_e_continue);
}

/* Bytes fed to the stream that zstd holds uncompressed (it compresses a
 * block when it has a whole one: 128 KiB). */
size_t rec_codec_zstream_pending(const rec_codec_ctx *ctx)
{
	if (!ctx || !ctx->zs)
		return 0;
	ZSTD_frameProgression fp = ZSTD_getFrameProgression(ctx->zs);
	return fp.ingested > fp.consumed ? (size_t)(fp.ingested - fp.consumed) : 0;
}

rec_status rec_codec_zstream_end(rec_codec_ctx *ctx, rec_buf *out, size_t raw_len, size_t *frame_off)
{
	if (!ctx || !ctx->zs || !out || !frame_off || raw_len > UINT32_MAX)
		return REC_ERR_INVALID_ARG;
	rec_status st = zstream_run(ctx, NULL, 0, out, ZSTD_e_end);
	if (st != REC_OK)
		return st;
	if (out->len < ZS_RESERVE + 6)
		return REC_ERR_CODEC;
	uint8_t *f = out->data + ZS_RESERVE;
	const uint8_t fhd = f[4];
	*frame_off = ZS_RESERVE;
	if ((fhd >> 6) == 0 && !(fhd & 0x20)) {
		/* No Frame_Content_Size: magic, FHD, Window_Descriptor, then
		 * Dictionary_ID (flag bits 0-1) and the blocks stay in place. */
		const uint8_t wd = f[5];
		uint8_t *h = out->data;
		memcpy(h, f, 4); /* magic */
		h[4] = (uint8_t)((fhd & 0x3F) | (2u << 6));
		h[5] = wd;
		/* The Dictionary_ID (none here: no dictionary is loaded) would
		 * sit between the window descriptor and the content size. */
		if (fhd & 0x03)
			return REC_ERR_CODEC;
		h[6] = (uint8_t)raw_len;
		h[7] = (uint8_t)(raw_len >> 8);
		h[8] = (uint8_t)(raw_len >> 16);
		h[9] = (uint8_t)(raw_len >> 24);
		*frame_off = 0;
	}
	/* Either way the frame now states raw_len. */
	unsigned long long fcs =
		ZSTD_getFrameContentSize(out->data + *frame_off, out->len - *frame_off);
	if (fcs != (unsigned long long)raw_len)
		return REC_ERR_CODEC;
	return REC_OK;
}
