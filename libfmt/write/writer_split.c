/* SPDX-License-Identifier: MIT */
/*
 * writer_split.c - the open chunk's EVENTS section in four streams
 * (format 1.3, spec/FORMAT.md "Split EVENTS"; common/events_split.c cuts
 * the records): with zstd, each stream is its own frame, fed while the
 * records arrive (writer_chunk.c's stream_more hands over the first slice
 * of EVENTS bytes, cut here, then the records it cut into sbuf as it took
 * them: rec_w_split_push), and the section is the stream table and the four frames;
 * otherwise, or when streaming failed, the records are cut and each stream
 * compressed in one step when the chunk closes.  Like bytes together
 * (sizes and type ids, time deltas, durations and stack ids, thread ids
 * and fields) compress to fewer bytes for less CPU than the records do in
 * one stream (bench/HISTORY.md, "Encodings of EVENTS").
 */
#include <stdlib.h>
#include <string.h>

#include "write/writer_internal.h"

/* A small stream's bytes waiting in its compressor that end a block. */
#define REC_W_SPLIT_FLUSH ((size_t)16 << 10)
/* The zstd levels of the codec default (level 0) per stream. The bodies
 * (thread and fields) at zstd's level -3: the fast matcher with an
 * acceleration of 3 (a longer step between the positions it tries), its
 * literals stored, not Huffman-coded; the other three at zstd's own level
 * 1. Against level 0's one setting for all four (codec.c: level 1,
 * minMatch 4, hashLog 13), measured 2026-12-06 with the bodies at -1
 * (bench/HISTORY.md, "Background thread cost"): the background thread's
 * CPU 15 % lower on bgcost's load; a service's recording about as large
 * (requestwatch under load 3 % larger, memcached under rec-record the same
 * within the runs' spread: their bodies are mostly matches); synthetic
 * fields larger (gen_events 3.84 -> 4.80 bytes an event, 0.68x JFR's;
 * bgcost's 7.85 -> 11.42). The bodies at -3 instead of -1 (2026-12-07):
 * the thread's instructions 2 % fewer on bgcost's load (callgrind),
 * requestwatch under a keep-alive load as large (5.55-5.59 bytes an event,
 * 5.54-5.68 at -1), gen_events smaller (1M events: 4.96 -> 4.56; zstd's
 * fast levels are not monotonic on it: -2 6.32, -4 5.36, -5 7.75 at 2M),
 * bgcost's 3 % larger. The small streams at -1 saved 7 % of the
 * instructions but made requestwatch's file 18 % larger (their literals
 * are the deltas: Huffman is what compresses them). An explicit level
 * applies to every stream. (-D on the compiler's line sets either, to
 * compare builds as above.) */
#ifndef REC_W_BODIES_LEVEL
#define REC_W_BODIES_LEVEL (-3)
#endif
#ifndef REC_W_SMALL_LEVEL
#define REC_W_SMALL_LEVEL 1
#endif
/* Type ids at or above this are looked up in the writer's type map. */
#define TF_DENSE_MAX 65536u

static unsigned map_flags(const void *ctx, uint64_t id)
{
	const rec_wtype *t = id <= UINT32_MAX ? rec_w_type_find_slow(ctx, (uint32_t)id) : NULL;
	return t ? (t->flags & 0x7u) | REC_EVS_KNOWN : 0;
}

/* The flags of the writer's types by id, rebuilt when types were added. */
static bool split_types(rec_writer *w, rec_evs_types *ty)
{
	if (w->tf_ntypes != w->ntypes || !w->tf) {
		uint32_t max = 0;
		for (size_t i = 0; i < w->ntypes; i++)
			if (w->types_by_id[i]->id > max)
				max = w->types_by_id[i]->id;
		size_t n = max < TF_DENSE_MAX ? (size_t)max + 1 : 1;
		uint8_t *tf = realloc(w->tf, n);
		if (!tf)
			return false;
		memset(tf, 0, n);
		if (max < TF_DENSE_MAX)
			for (size_t i = 0; i < w->ntypes; i++)
				tf[w->types_by_id[i]->id] =
					(uint8_t)((w->types_by_id[i]->flags & 0x7u) | REC_EVS_KNOWN);
		w->tf = tf;
		w->ntf = max < TF_DENSE_MAX ? n : 0;
		w->tf_ntypes = w->ntypes;
	}
	*ty = (rec_evs_types){ w->tf, w->ntf, w->ntf ? NULL : map_flags, w };
	return true;
}

static int stream_level(const rec_writer *w, int stream)
{
	if (w->level != 0 || w->codec != REC_CODEC_ZSTD)
		return w->level;
	return stream == REC_EVS_BODIES ? REC_W_BODIES_LEVEL : REC_W_SMALL_LEVEL;
}

static bool cut(rec_writer *w, const uint8_t *p, size_t n)
{
	rec_evs_types ty;
	for (int i = 0; i < REC_EVS_N; i++)
		w->sbuf[i].len = 0;
	return split_types(w, &ty) && rec_events_split(p, p + n, &ty, w->sbuf);
}

void rec_w_split_reset(rec_writer *w)
{
	for (int i = 0; i < REC_EVS_N; i++) {
		w->s_raw[i] = 0;
		w->s_begun[i] = 0;
	}
}

bool rec_w_split_feed(rec_writer *w, const uint8_t *p, size_t n)
{
	return cut(w, p, n) && rec_w_split_push(w);
}

bool rec_w_split_push(rec_writer *w)
{
	if (w->test_fail & REC_W_FAIL_PUSH) {
		w->test_fail &= ~REC_W_FAIL_PUSH;
		return false;
	}
	for (int i = 0; i < REC_EVS_N; i++) {
		if (!w->sbuf[i].len)
			continue;
		if (!w->s_begun[i]) {
			if (!w->sctx[i] && !(w->sctx[i] = rec_codec_ctx_new()))
				return false;
			if (rec_codec_zstream_begin(w->sctx[i], stream_level(w, i), &w->szout[i]) !=
			    REC_OK)
				return false;
			w->s_begun[i] = 1;
		}
		if (rec_codec_zstream_add(w->sctx[i], w->sbuf[i].data, w->sbuf[i].len, &w->szout[i],
					  0) != REC_OK)
			return false;
		w->s_raw[i] += w->sbuf[i].len;
		/* The small streams (a few bytes an event) would not fill a
		 * zstd block (128 KiB) in a chunk's time: all their bytes
		 * would be compressed when the chunk closes, a burst of the
		 * background thread's work.  Ending a block once 16 KiB wait
		 * spreads it (bench/bgcost.sh: bursts over 1 ms 4 -> 1-2 a
		 * run, the largest 1.33 -> 1.07 ms, CPU about 7 % more). */
		if (i != REC_EVS_BODIES && rec_codec_zstream_pending(w->sctx[i]) >= REC_W_SPLIT_FLUSH &&
		    rec_codec_zstream_add(w->sctx[i], NULL, 0, &w->szout[i], 1) != REC_OK)
			return false;
		w->sbuf[i].len = 0;
	}
	return true;
}

/* The stream table and the stored streams into w->ssec. */
static bool assemble(rec_writer *w, const uint32_t sst[REC_EVS_N], const uint32_t srw[REC_EVS_N],
		     const uint8_t *const frame[REC_EVS_N])
{
	size_t need = REC_EVS_TABLE_SIZE;
	for (int i = 0; i < REC_EVS_N; i++)
		need += sst[i];
	w->ssec.len = 0;
	if (!rec_buf_reserve(&w->ssec, need))
		return false;
	rec_events_split_table_encode(w->ssec.data, sst, srw);
	w->ssec.len = REC_EVS_TABLE_SIZE;
	for (int i = 0; i < REC_EVS_N; i++)
		if (frame[i] && !rec_buf_append(&w->ssec, frame[i], sst[i]))
			return false;
	return true;
}

bool rec_w_split_end(rec_writer *w)
{
	uint32_t sst[REC_EVS_N] = { 0 }, srw[REC_EVS_N] = { 0 };
	const uint8_t *frame[REC_EVS_N] = { NULL };
	for (int i = 0; i < REC_EVS_N; i++) {
		if (!w->s_raw[i])
			continue;
		size_t off = 0;
		if (!w->s_begun[i] || w->s_raw[i] > UINT32_MAX ||
		    rec_codec_zstream_end(w->sctx[i], &w->szout[i], (size_t)w->s_raw[i], &off) != REC_OK)
			return false;
		w->s_begun[i] = 0;
		srw[i] = (uint32_t)w->s_raw[i];
		sst[i] = (uint32_t)(w->szout[i].len - off);
		frame[i] = w->szout[i].data + off;
	}
	return assemble(w, sst, srw, frame);
}

bool rec_w_split_oneshot(rec_writer *w, const uint8_t *ev, size_t n)
{
	uint32_t sst[REC_EVS_N] = { 0 }, srw[REC_EVS_N] = { 0 };
	const uint8_t *frame[REC_EVS_N] = { NULL };
	size_t need = REC_EVS_TABLE_SIZE;
	if (!cut(w, ev, n))
		return false;
	for (int i = 0; i < REC_EVS_N; i++) {
		size_t b = w->sbuf[i].len ? rec_codec_bound(w->codec, w->sbuf[i].len) : 0;
		if (w->sbuf[i].len && !b)
			return false;
		need += b;
	}
	/* Compressed into w->scratch (free while the EVENTS section is
	 * built), then assembled. */
	rec_buf *z = &w->scratch;
	z->len = 0;
	if (!rec_buf_reserve(z, need))
		return false;
	for (int i = 0; i < REC_EVS_N; i++) {
		size_t len = w->sbuf[i].len, clen = 0;
		if (!len)
			continue;
		if (rec_codec_compress(w->cctx, w->codec, stream_level(w, i), w->sbuf[i].data, len,
				       z->data + z->len, z->cap - z->len, &clen) != REC_OK || clen == 0)
			return false;
		srw[i] = (uint32_t)len;
		sst[i] = (uint32_t)clen;
		z->len += clen;
	}
	size_t at = 0;
	for (int i = 0; i < REC_EVS_N; i++) {
		frame[i] = sst[i] ? z->data + at : NULL;
		at += sst[i];
	}
	return assemble(w, sst, srw, frame) && w->ssec.len < n;
}

void rec_w_split_free(rec_writer *w)
{
	for (int i = 0; i < REC_EVS_N; i++) {
		rec_buf_free(&w->sbuf[i]);
		rec_buf_free(&w->szout[i]);
		rec_codec_ctx_free(w->sctx[i]);
		w->sctx[i] = NULL;
	}
	rec_buf_free(&w->ssec);
	free(w->tf);
	w->tf = NULL;
}
