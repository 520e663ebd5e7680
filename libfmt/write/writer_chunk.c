/* SPDX-License-Identifier: MIT */
/*
 * writer_chunk.c - the open chunk: records taken into it as they arrive,
 * and the chunk closed and written (spec "Chunk header", "Sections",
 * "STATS", "Pools", "EVENTS", "Streamed EVENTS").
 *
 * Taking a record (take_records from pending, rec_w_take_checked straight
 * from append_records' buffer) decodes it once: it is transcoded from the
 * interchange form to the EVENTS form (absolute Ticks -> svarint
 * Time_Delta from the previous record) into w->events, counted in the
 * per-type STATS and every pool entry it references marked with the
 * chunk's mark (rec_w_take_checked's records away from the batch's end:
 * take_run, which checks and transcodes in one pass, reading each varint
 * 8 bytes at a time).  The first record's delta is relative to Start_Ticks,
 * chosen as late as possible (fix_start: the earliest tick taken so far),
 * so room is left for it in front of the others.  With zstd, once
 * REC_W_STREAM_SLICE bytes are taken, Start_Ticks is fixed and the EVENTS
 * bytes go to a zstd stream piece by piece (stream_more); zstd compresses
 * each 128 KiB block as it fills, so the work is spread over the interval.
 * With the four streams of split EVENTS (writer_split.c), from then on the
 * records are cut into the streams as they are taken (c_direct: take_run's
 * direct form, emit_split), not transcoded into w->events and cut from
 * there in a second pass; the streams are fed a slice at a time, and a
 * chunk's section is what they made (its raw bytes are not kept: a stream
 * that fails takes its chunk's records with it, counted as dropped).
 * Closing the chunk (close_chunk, at chunk_size interchange bytes taken,
 * or on flush/close) closes the marks over the pool references (stacks ->
 * frames -> strings, modules; modules -> strings; threads -> strings),
 * sorts the marked ids, encodes METADATA, STATS and the pools, ends the
 * stream (its frame header rewritten to state the content size: codec.c),
 * and writes the chunk with one sink write.  A reference to an id that was
 * never defined stops the take (the record and those after it wait in
 * pending, build_blocked) or fails the close with nothing written and the
 * chunk kept open, until a define_* retries.
 */
#include <stdlib.h>

#include "write/writer_internal.h"

typedef struct rec_wscan {
	rec_wtype *t;
	const uint8_t *tid;  /* Type_Id bytes */
	const uint8_t *rest; /* bytes after Ticks */
	const uint8_t *end;  /* end of the record */
	size_t tid_len;
	uint64_t ticks, end_ticks;
} rec_wscan;

/* Scan outcome: 0 ok; else the pool (REC_W_*) + 1 of an undefined ref, or -1
 * for a record that does not decode (cannot happen: input was validated). */
enum { SCAN_OK = 0, SCAN_CORRUPT = -1 };

static inline __attribute__((always_inline)) bool mark_ref(rec_wpool *p, uint64_t id, uint64_t mark)
{
	uint64_t *seen;
	rec_wentry *e;

	if (id == 0)
		return true;
	seen = &p->seen[(id * 0x9E3779B97F4A7C15ull) >> 56];
	if (*seen == id)
		return true;
	e = rec_w_pool_find(p, id);
	if (!e)
		return false;
	if (e->mark != mark) {
		e->mark = mark;
		p->used[p->nused++] = id; /* used_cap >= count: no overflow */
	}
	*seen = id;
	return true;
}

/* Copy n bytes (records are mostly short: avoid a libc call for them). */
static inline void copy_bytes(uint8_t *d, const uint8_t *s, size_t n)
{
	if (n >= 8 && n <= 16) {
		uint64_t a, b;
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n < 8) {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	} else {
		memcpy(d, s, n);
	}
}

/* Pool of a field's REC_W_REF_* (not REC_W_REF_NONE).  A switch rather than a table:
 * clang-analyzer then sees that scan_record's "pool + 1" is never SCAN_OK. */
static inline int ref_pool(uint8_t ref)
{
	switch (ref) {
	case REC_W_REF_STRING: return REC_W_STRINGS;
	case REC_W_REF_THREAD: return REC_W_THREADS;
	default: return REC_W_STACKS;
	}
}

/* Decode the record at *pp (bounded by lim), mark its references. */
static inline __attribute__((always_inline)) int scan_record(rec_writer *w, const uint8_t **pp, const uint8_t *lim, uint64_t mark,
			      rec_wscan *s, uint64_t *bad_id)
{
	const uint8_t *p = *pp, *end;
	uint64_t size, v, dur = 0;
	rec_wtype *t;

	if (!rec_varint_get(&p, lim, &size) || size > (uint64_t)(lim - p))
		return SCAN_CORRUPT;
	end = p + size;
	s->tid = p;
	if (!rec_varint_get(&p, lim, &v) || v > UINT32_MAX)
		return SCAN_CORRUPT;
	t = rec_w_type_find(w, (uint32_t)v);
	if (!t)
		return SCAN_CORRUPT;
	s->tid_len = (size_t)(p - s->tid);
	if (!rec_varint_get(&p, lim, &s->ticks))
		return SCAN_CORRUPT;
	s->rest = p;
	if (t->flags & REC_EVENT_HAS_DURATION) {
		if (!rec_varint_get(&p, lim, &dur))
			return SCAN_CORRUPT;
	}
	if (t->flags & REC_EVENT_HAS_THREAD) {
		if (!rec_varint_get(&p, lim, &v))
			return SCAN_CORRUPT;
		if (!mark_ref(&w->pools[REC_W_THREADS], v, mark)) {
			*bad_id = v;
			return REC_W_THREADS + 1;
		}
	}
	if (t->flags & REC_EVENT_HAS_STACK) {
		if (!rec_varint_get(&p, lim, &v))
			return SCAN_CORRUPT;
		if (!mark_ref(&w->pools[REC_W_STACKS], v, mark)) {
			*bad_id = v;
			return REC_W_STACKS + 1;
		}
	}
	for (uint32_t i = 0; i < t->scan_fields; i++) {
		const rec_wfield *f = &t->fields[i];
		switch (f->wire) {
		case REC_WIRE_UVARINT:
		case REC_WIRE_SVARINT:
			if (!rec_varint_get(&p, lim, &v))
				return SCAN_CORRUPT;
			if (f->ref) {
				int pool = ref_pool(f->ref);
				if (!mark_ref(&w->pools[pool], v, mark)) {
					*bad_id = v;
					return pool + 1;
				}
			}
			break;
		case REC_WIRE_FIXED32:
			p += 4;
			break;
		case REC_WIRE_FIXED64:
			p += 8;
			break;
		default:
			if (!rec_varint_get(&p, lim, &v) || v > (uint64_t)(end - p))
				return SCAN_CORRUPT;
			p += v;
			break;
		}
		if (p > end)
			return SCAN_CORRUPT;
	}
	if (p > end)
		return SCAN_CORRUPT;
	s->t = t;
	s->end = end;
	s->end_ticks = s->ticks + dur < s->ticks ? UINT64_MAX : s->ticks + dur;
	*pp = end;
	return SCAN_OK;
}

/* Bytes of the EVENTS form of s with this Time_Delta. */
static inline size_t out_len(const rec_wscan *s, uint64_t zz, size_t *body_out)
{
	size_t ticks_len = (size_t)(s->rest - s->tid) - s->tid_len;
	size_t body = (size_t)(s->end - s->tid) - ticks_len + rec_varint_len(zz);

	*body_out = body;
	return rec_varint_len(body) + body;
}

/* Write the EVENTS form of s at q (room for out_len()); returns its length. */
static inline __attribute__((always_inline)) size_t emit_record(uint8_t *q, const rec_wscan *s, uint64_t ticks_base)
{
	const uint64_t zz = rec_zigzag((int64_t)(s->ticks - ticks_base));
	size_t body, n = out_len(s, zz, &body);

	q += rec_varint_put(q, body);
	copy_bytes(q, s->tid, s->tid_len);
	q += s->tid_len;
	q += rec_varint_put(q, zz);
	copy_bytes(q, s->rest, (size_t)(s->end - s->rest));
	return n;
}

/* Append n bytes at s to b (room reserved). */
static inline void split_put(rec_buf *b, const uint8_t *s, size_t n)
{
	copy_bytes(b->data + b->len, s, n);
	b->len += n;
}

/* The EVENTS form of s cut into the four streams (c_direct), as
 * common/events_split.c cuts a record: Size and Type_Id to heads, the
 * Time_Delta to times, Duration and Stack to refs, Thread and the fields to
 * bodies (room reserved in each).  Returns the record's EVENTS length. */
static size_t emit_split(rec_writer *w, const rec_wscan *s, uint64_t ticks_base)
{
	const uint64_t zz = rec_zigzag((int64_t)(s->ticks - ticks_base));
	const unsigned f = s->t->flags;
	size_t body, n = out_len(s, zz, &body);
	rec_buf *sb = w->sbuf;
	const uint8_t *p = s->rest, *q, *body0;
	uint64_t v;

	sb[REC_EVS_HEADS].len += rec_varint_put(sb[REC_EVS_HEADS].data + sb[REC_EVS_HEADS].len, body);
	split_put(&sb[REC_EVS_HEADS], s->tid, s->tid_len);
	sb[REC_EVS_TIMES].len += rec_varint_put(sb[REC_EVS_TIMES].data + sb[REC_EVS_TIMES].len, zz);
	/* The record was scanned: its varints end inside it. */
	if (f & REC_EVENT_HAS_DURATION) {
		q = p;
		(void)rec_varint_get(&p, s->end, &v);
		split_put(&sb[REC_EVS_REFS], q, (size_t)(p - q));
	}
	body0 = p;
	if (f & REC_EVENT_HAS_THREAD)
		(void)rec_varint_get(&p, s->end, &v);
	if (f & REC_EVENT_HAS_STACK) {
		split_put(&sb[REC_EVS_BODIES], body0, (size_t)(p - body0));
		q = p;
		(void)rec_varint_get(&p, s->end, &v);
		split_put(&sb[REC_EVS_REFS], q, (size_t)(p - q));
		body0 = p;
	}
	split_put(&sb[REC_EVS_BODIES], body0, (size_t)(s->end - body0));
	w->c_dlen += n;
	return n;
}

/* Room for n more EVENTS bytes where the open chunk's records go: events,
 * or each of the four streams (c_direct). */
static bool reserve_ev(rec_writer *w, size_t n)
{
	if (!w->c_direct)
		return rec_buf_reserve(&w->events, n);
	for (int i = 0; i < REC_EVS_N; i++)
		if (!rec_buf_reserve(&w->sbuf[i], n))
			return false;
	return true;
}

/* The open chunk's EVENTS bytes so far, with the room before them (the
 * events budget's measure). */
static inline size_t ev_total(const rec_writer *w)
{
	return w->events.len + w->c_dlen;
}

static rec_status scan_fail(rec_writer *w, int rc, uint64_t id, size_t off)
{
	if (rc == SCAN_CORRUPT)
		return rec_w_fail(w, REC_ERR_CORRUPT,
				  "chunk: pending record at offset %zu does not decode (internal error)",
				  off);
	return rec_w_fail(w, REC_ERR_INVALID_ARG,
			  "chunk: an event references %s id %llu, which was never defined",
			  w->pools[rc - 1].name, (unsigned long long)id);
}

static rec_status ref_fail(rec_writer *w, int pool, uint64_t id, int from_pool, uint64_t from_id)
{
	return rec_w_fail(w, REC_ERR_INVALID_ARG,
			  "chunk: %s %llu references %s id %llu, which was never defined",
			  w->pools[from_pool].name, (unsigned long long)from_id, w->pools[pool].name,
			  (unsigned long long)id);
}

/* Close the marks over pool references (entries only reference earlier pools). */
static rec_status close_refs(rec_writer *w, uint64_t mark)
{
	rec_wpool *strings = &w->pools[REC_W_STRINGS], *threads = &w->pools[REC_W_THREADS];
	rec_wpool *modules = &w->pools[REC_W_MODULES], *frames = &w->pools[REC_W_FRAMES];
	rec_wpool *stacks = &w->pools[REC_W_STACKS];

	for (size_t i = 0; i < stacks->nused; i++) {
		const rec_wentry *e = rec_w_pool_find(stacks, stacks->used[i]);
		for (uint64_t d = 0; d < e->v[1]; d++) {
			uint64_t fid;
			memcpy(&fid, stacks->data.data + e->v[2] + d * sizeof(uint64_t), sizeof(fid));
			if (!mark_ref(frames, fid, mark))
				return ref_fail(w, REC_W_FRAMES, fid, REC_W_STACKS, e->id);
		}
	}
	for (size_t i = 0; i < frames->nused; i++) {
		const rec_wentry *e = rec_w_pool_find(frames, frames->used[i]);
		if (!mark_ref(strings, e->v[0], mark))
			return ref_fail(w, REC_W_STRINGS, e->v[0], REC_W_FRAMES, e->id);
		if (!mark_ref(modules, e->v[1], mark))
			return ref_fail(w, REC_W_MODULES, e->v[1], REC_W_FRAMES, e->id);
	}
	/* 1.2: the strings of the used frames' sources (file, inline names). */
	for (size_t i = 0; w->fsrc.count && i < frames->nused; i++) {
		const rec_wentry *e = rec_w_pool_find(&w->fsrc, frames->used[i]);
		if (!e)
			continue;
		const uint8_t *q = w->fsrc.data.data + e->v[0], *end = q + e->v[1];
		uint64_t v[4];
		bool ok = rec_varint_get(&q, end, &v[0]) && rec_varint_get(&q, end, &v[1]) &&
			  rec_varint_get(&q, end, &v[2]) && rec_varint_get(&q, end, &v[3]);
		if (ok && !mark_ref(strings, v[1], mark))
			return ref_fail(w, REC_W_STRINGS, v[1], REC_W_FRAMES, e->id);
		for (uint64_t k = 0; ok && k < v[3]; k++) {
			uint64_t fn, file, line;
			ok = rec_varint_get(&q, end, &fn) && rec_varint_get(&q, end, &file) &&
			     rec_varint_get(&q, end, &line);
			if (ok && (!mark_ref(strings, fn, mark) || !mark_ref(strings, file, mark)))
				return ref_fail(w, REC_W_STRINGS, mark_ref(strings, fn, mark) ? file : fn,
						REC_W_FRAMES, e->id);
		}
	}
	for (size_t i = 0; i < modules->nused; i++) {
		const rec_wentry *e = rec_w_pool_find(modules, modules->used[i]);
		if (!mark_ref(strings, e->v[0], mark))
			return ref_fail(w, REC_W_STRINGS, e->v[0], REC_W_MODULES, e->id);
		if (!mark_ref(strings, e->v[1], mark))
			return ref_fail(w, REC_W_STRINGS, e->v[1], REC_W_MODULES, e->id);
	}
	for (size_t i = 0; i < threads->nused; i++) {
		const rec_wentry *e = rec_w_pool_find(threads, threads->used[i]);
		if (!mark_ref(strings, e->v[1], mark))
			return ref_fail(w, REC_W_STRINGS, e->v[1], REC_W_THREADS, e->id);
	}
	return REC_OK;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Serialize the used entries of a pool (increasing id, Id_Delta) into scratch. */
static bool encode_pool(rec_writer *w, int pool)
{
	const rec_wpool *p = &w->pools[pool];
	rec_buf *b = &w->scratch;
	uint64_t prev = 0;

	b->len = 0;
	for (size_t i = 0; i < p->nused; i++) {
		const rec_wentry *e = rec_w_pool_find(p, p->used[i]);
		if (!rec_buf_varint(b, e->id - prev))
			return false;
		prev = e->id;
		switch (pool) {
		case REC_W_STRINGS:
			if (!rec_buf_lenbytes(b, e->v[1] ? p->data.data + e->v[0] : NULL,
					      (size_t)e->v[1]))
				return false;
			break;
		case REC_W_THREADS:
			if (!rec_buf_varint(b, e->v[0]) || !rec_buf_varint(b, e->v[1]))
				return false;
			break;
		case REC_W_MODULES:
			if (!rec_buf_varint(b, e->v[0]) || !rec_buf_varint(b, e->v[1]) ||
			    !rec_buf_varint(b, e->v[2]))
				return false;
			break;
		case REC_W_FRAMES:
			for (int k = 0; k < 4; k++)
				if (!rec_buf_varint(b, e->v[k]))
					return false;
			break;
		default: { /* REC_W_STACKS */
			if (!rec_buf_varint(b, e->v[0]) || !rec_buf_varint(b, e->v[1]))
				return false;
			for (uint64_t d = 0; d < e->v[1]; d++) {
				uint64_t fid;
				memcpy(&fid, p->data.data + e->v[2] + d * sizeof(uint64_t), sizeof(fid));
				if (!rec_buf_varint(b, fid))
					return false;
			}
			break;
		}
		}
	}
	return true;
}

typedef struct rec_wchunk {
	uint16_t sections;
	uint64_t raw_size;
} rec_wchunk;

/* The header of the section whose stored bytes stand after room for it at
 * the end of w->out: written, and the section taken into w->out and c. */
static void seal_section(rec_writer *w, rec_wchunk *c, uint16_t kind, uint16_t flags,
			 size_t items, size_t stored_len, size_t raw_len)
{
	rec_section_header sh;
	sh.kind = kind;
	sh.flags = flags;
	sh.item_count = (uint32_t)items;
	sh.stored_size = (uint32_t)stored_len;
	sh.raw_size = (uint32_t)raw_len;
	rec_section_header_encode(&sh, w->out.data + w->out.len);
	w->out.len += REC_SECTION_HEADER_SIZE + stored_len;
	c->sections++;
	c->raw_size += raw_len;
}

/* Append one section header and its stored bytes (flags as stored) to w->out. */
static rec_status put_section(rec_writer *w, rec_wchunk *c, uint16_t kind, size_t items,
			      size_t raw_len, uint16_t flags, const void *stored, size_t stored_len)
{
	if (w->out.cap - w->out.len < REC_SECTION_HEADER_SIZE + stored_len &&
	    !rec_buf_reserve(&w->out, REC_SECTION_HEADER_SIZE + stored_len))
		return rec_w_fail(w, REC_ERR_NOMEM, "chunk: out of memory");
	if (stored_len)
		memcpy(w->out.data + w->out.len + REC_SECTION_HEADER_SIZE, stored, stored_len);
	seal_section(w, c, kind, flags, items, stored_len, raw_len);
	return REC_OK;
}

/* Sections smaller than this are stored as they are: a frame of so few
 * bytes does not shrink them (STATS, about 22 bytes a chunk, never did),
 * and its compression was the dearest of a chunk's close (about 20 us:
 * the compressor's tables are cold by then; bench/bgcost.c --default,
 * 2026-12-06). */
#define REC_W_MIN_COMPRESS 64u

/* Append one section (header + stored bytes) to w->out. */
static rec_status add_section(rec_writer *w, rec_wchunk *c, uint16_t kind, size_t items,
			      const void *raw, size_t raw_len)
{
	size_t bound = raw_len, stored = raw_len;
	uint16_t flags = 0;
	uint8_t *dst;
	const int compress = w->codec != REC_CODEC_NONE && raw_len >= REC_W_MIN_COMPRESS;

	if (raw_len > (size_t)REC_MAX_SECTION_RAW || items > UINT32_MAX)
		return rec_w_fail(w, REC_ERR_LIMIT,
				  "chunk: section %u would hold %zu bytes (limit %u)", kind, raw_len,
				  REC_MAX_SECTION_RAW);
	if (compress) {
		bound = rec_codec_bound(w->codec, raw_len);
		if (bound < raw_len)
			bound = raw_len;
	}
	if (w->out.cap - w->out.len < REC_SECTION_HEADER_SIZE + bound &&
	    !rec_buf_reserve(&w->out, REC_SECTION_HEADER_SIZE + bound))
		return rec_w_fail(w, REC_ERR_NOMEM, "chunk: out of memory");
	dst = w->out.data + w->out.len + REC_SECTION_HEADER_SIZE;
	if (compress) {
		size_t clen = 0;
		rec_status st = rec_codec_compress(w->cctx, w->codec, w->level, raw, raw_len, dst,
						   bound, &clen);
		if (st == REC_OK && clen < raw_len) {
			flags = REC_SECTION_COMPRESSED;
			stored = clen;
		} else if (st != REC_OK && st != REC_ERR_CODEC) {
			return rec_w_fail(w, st, "chunk: %s compression of section %u failed: %s",
					  rec_codec_name(w->codec), kind, rec_strerror(st));
		}
		/* REC_ERR_CODEC or no gain: store the raw bytes. */
	}
	if (!flags && raw_len)
		memcpy(dst, raw, raw_len);
	seal_section(w, c, kind, flags, items, stored, raw_len);
	return REC_OK;
}

/* The METADATA section.  Its bytes are the same chunk after chunk (types
 * are only added), so its stored form is kept and reused while they stay
 * the same: compressing its 3 KiB anew was 60 us of every chunk's close
 * on the background thread (bgcost --default, 2026-12-06). */
static rec_status add_metadata(rec_writer *w, rec_wchunk *c)
{
	const size_t n = w->meta.len;
	if (w->meta_raw.data && w->meta_raw.len == n &&
	    (n == 0 || memcmp(w->meta_raw.data, w->meta.data, n) == 0))
		return put_section(w, c, REC_SECTION_METADATA, w->ntypes, n, w->meta_flags,
				   w->meta_stored.data, w->meta_stored.len);
	const size_t at = w->out.len;
	rec_status st = add_section(w, c, REC_SECTION_METADATA, w->ntypes, w->meta.data, n);
	if (st != REC_OK)
		return st;
	rec_section_header sh;
	rec_section_header_decode(w->out.data + at, &sh);
	w->meta_raw.len = 0;
	w->meta_stored.len = 0;
	if (n && rec_buf_reserve(&w->meta_raw, n) && rec_buf_reserve(&w->meta_stored, sh.stored_size) &&
	    w->meta_raw.data && w->meta_stored.data) {
		memcpy(w->meta_raw.data, w->meta.data, n);
		w->meta_raw.len = n;
		memcpy(w->meta_stored.data, w->out.data + at + REC_SECTION_HEADER_SIZE, sh.stored_size);
		w->meta_stored.len = sh.stored_size;
		w->meta_flags = sh.flags;
	} else { /* kept nothing: made anew next time */
		rec_buf_free(&w->meta_raw);
		rec_buf_free(&w->meta_stored);
	}
	return REC_OK;
}

/* Room in every pool's used list for all its entries (pools grow while a
 * chunk is open: define_* between appends). */
static bool reserve_used(rec_writer *w)
{
	for (int i = 0; i < REC_W_NPOOLS; i++) {
		rec_wpool *p = &w->pools[i];
		if (p->used_cap < p->count) {
			size_t cap = p->count * 2;
			uint64_t *u = realloc(p->used, cap * sizeof(*u));
			if (!u)
				return false;
			p->used = u;
			p->used_cap = cap;
		}
	}
	return true;
}

/* Peek at the Size of the record at p: bytes of the whole record, or 0. */
static inline size_t record_len(const uint8_t *p, const uint8_t *lim)
{
	const uint8_t *q = p;
	uint64_t size;

	if (!rec_varint_get(&q, lim, &size) || size > (uint64_t)(lim - q))
		return 0;
	return (size_t)(q - p) + (size_t)size;
}

/* ---- the open chunk ------------------------------------------------------------ */

/* Start a chunk: a new mark, no pool entry used, no type counted. */
static rec_status chunk_open(rec_writer *w)
{
	if (!reserve_used(w))
		return rec_w_fail(w, REC_ERR_NOMEM, "chunk: out of memory");
	for (int i = 0; i < REC_W_NPOOLS; i++) {
		w->pools[i].nused = 0;
		memset(w->pools[i].seen, 0, sizeof(w->pools[i].seen));
	}
	for (size_t i = 0; i < w->ntypes; i++)
		w->types[i]->count = w->types[i]->bytes = 0;
	w->mark++;
	w->c_open = 1;
	w->c_count = 0;
	w->c_in = 0;
	w->c_fixed = 0;
	w->c_zin = 0;
	w->c_zended = 0;
	w->c_ev0 = w->c_head = 0;
	w->c_direct = 0;
	w->c_dlen = 0;
	w->events.len = 0;
	rec_w_split_reset(w);
	return REC_OK;
}

size_t rec_w_open_bytes(const rec_writer *w)
{
	if (!w->c_count)
		return 0;
	if (w->c_fixed)
		return w->events.len - w->c_ev0 + w->c_dlen;
	return w->events.len - w->c_head + w->c_first.len;
}

/* Choose Start_Ticks (the earliest tick taken so far) and transcode the
 * first record, whose Time_Delta is relative to it, into the room left in
 * front of the others.  Records taken later may start earlier: First_Delta
 * is then negative, which the spec allows (a signed delta). */
static rec_status fix_start(rec_writer *w)
{
	const uint8_t *p = w->c_first.data;
	rec_wscan s0;
	uint64_t bad = 0, zz0;
	size_t n0, body0;
	int rc = scan_record(w, &p, p + w->c_first.len, w->mark, &s0, &bad);

	if (rc != SCAN_OK)
		return scan_fail(w, rc, bad, 0);
	zz0 = rec_zigzag((int64_t)(s0.ticks - w->c_min));
	n0 = out_len(&s0, zz0, &body0);
	w->c_ev0 = w->c_head - n0;
	emit_record(w->events.data + w->c_ev0, &s0, w->c_min);
	s0.t->count++;
	s0.t->bytes += n0;
	w->c_start = w->c_min;
	w->c_fixed = 1;
	return REC_OK;
}

/* Place a scanned record (in bytes at p0) in the open chunk: the first is
 * kept whole in c_first, its delta waiting for Start_Ticks (fix_start),
 * with room left for it in front of EVENTS (and, when more is not 0, room
 * for more bytes after it); each later one is transcoded onto EVENTS.  false
 * when out of memory (nothing placed). */
static inline __attribute__((always_inline)) bool place_record(rec_writer *w, const rec_wscan *s,
							       const uint8_t *p0, size_t in, size_t more)
{
	if (w->c_count == 0) {
		w->c_first.len = 0;
		if (!rec_buf_append(&w->c_first, p0, in) ||
		    (more && w->events.cap < in + REC_W_RECORD_GROWTH + more &&
		     !rec_buf_reserve(&w->events, in + REC_W_RECORD_GROWTH + more)))
			return false;
		w->c_head = in + REC_W_RECORD_GROWTH;
		w->events.len = w->c_head;
		w->c_prev = w->c_min = s->ticks;
		w->c_max_end = s->end_ticks;
	} else {
		size_t n;
		if (w->c_direct) {
			n = emit_split(w, s, w->c_prev);
		} else {
			n = emit_record(w->events.data + w->events.len, s, w->c_prev);
			w->events.len += n;
		}
		s->t->count++;
		s->t->bytes += n;
		w->c_prev = s->ticks;
		if (s->ticks < w->c_min)
			w->c_min = s->ticks;
		if (s->end_ticks > w->c_max_end)
			w->c_max_end = s->end_ticks;
	}
	w->c_count++;
	return true;
}

/* Take one record at *pp into the open chunk (room for it reserved).
 * Returns SCAN_OK, SCAN_CORRUPT or an undefined reference's pool + 1. */
static inline int take_record(rec_writer *w, const uint8_t **pp, const uint8_t *lim, size_t in,
			      uint64_t *bad)
{
	const uint8_t *p0 = *pp;
	rec_wscan s;
	int rc = scan_record(w, pp, lim, w->mark, &s, bad);

	if (rc != SCAN_OK)
		return rc;
	if (!place_record(w, &s, p0, in, 0)) {
		*pp = p0;
		return SCAN_CORRUPT - 1;
	}
	w->c_in += in;
	return SCAN_OK;
}

/* zstd: hand the EVENTS bytes taken since the last piece to the stream
 * once there are REC_W_STREAM_SLICE of them; zstd compresses each block
 * (128 KiB of input) as soon as it has one, so the work of a chunk is done
 * a block at a time while it fills, not at its end.  (Ending a block at
 * each piece, ZSTD_e_flush, made the pieces smaller still but cost 15-50 %
 * more CPU on the background thread: bench/bgcost.sh.)  A failure only
 * stops the streaming: the chunk is then compressed whole when it closes. */
static void stream_more(rec_writer *w)
{
	size_t unfed;

	if (w->codec != REC_CODEC_ZSTD || !w->c_count || w->c_zended)
		return;
	if (w->c_direct) {
		size_t held = 0;
		for (int i = 0; i < REC_EVS_N; i++)
			held += w->sbuf[i].len;
		if (held >= REC_W_STREAM_SLICE && !rec_w_split_push(w))
			w->c_zended = 1; /* the bytes it held are lost: close_chunk says so */
		return;
	}
	if (!w->c_fixed)
		unfed = rec_w_open_bytes(w);
	else
		unfed = w->events.len - (w->c_zin ? w->c_zin : w->c_ev0);
	if (unfed < REC_W_STREAM_SLICE)
		return;
	if (!w->c_fixed && fix_start(w) != REC_OK) {
		w->c_zended = 1;
		return;
	}
	if (w->split) { /* four streams (writer_split.c), begun as they get bytes */
		size_t from = w->c_zin ? w->c_zin : w->c_ev0;
		if (!rec_w_split_feed(w, w->events.data + from, w->events.len - from)) {
			w->c_zended = 1;
			return;
		}
		/* From here the records are cut as they are taken: no pass
		 * over EVENTS bytes to cut them, no EVENTS buffer growing. */
		w->c_zin = w->events.len;
		w->c_direct = 1;
		return;
	}
	if (!w->c_zin) {
		if (rec_codec_zstream_begin(w->cctx, w->level, &w->zout) != REC_OK) {
			w->c_zended = 1;
			return;
		}
		w->c_zin = w->c_ev0;
	}
	if (rec_codec_zstream_add(w->cctx, w->events.data + w->c_zin, w->events.len - w->c_zin,
				  &w->zout, 0) != REC_OK) {
		w->c_zended = 1;
		return;
	}
	w->c_zin = w->events.len;
}

/* Close the open chunk (none open: an empty chunk) and write it.  On a
 * failure before the write (an undefined reference among the pools,
 * memory) nothing is written and the chunk stays open. */
static rec_status close_chunk(rec_writer *w, int final)
{
	uint64_t start, max_end, min_t, count;
	const uint8_t *ev_raw = NULL;
	size_t ev_len = 0;
	rec_chunk_header h;
	rec_wchunk c = { 0, 0 };
	rec_status st;
	int split = 0; /* the EVENTS section was stored in four streams */

	if (!w->c_open && (st = chunk_open(w)) != REC_OK)
		return st;
	if (!reserve_used(w))
		return rec_w_fail(w, REC_ERR_NOMEM, "chunk: out of memory");
	count = w->c_count;
	if (count) {
		if (!w->c_fixed && (st = fix_start(w)) != REC_OK)
			return st;
		start = w->c_start;
		min_t = w->c_min;
		max_end = w->c_max_end;
		ev_raw = w->events.data + w->c_ev0;
		ev_len = w->events.len - w->c_ev0 + w->c_dlen;
	} else {
		start = w->have_prev ? w->prev_end_ticks : w->anchor_ticks;
		max_end = start;
		min_t = UINT64_MAX;
	}

	st = close_refs(w, w->mark);
	if (st != REC_OK)
		return st;
	for (int i = 0; i < REC_W_NPOOLS; i++)
		if (w->pools[i].nused > 1)
			qsort(w->pools[i].used, w->pools[i].nused, sizeof(uint64_t), cmp_u64);
	if (w->c_direct == 1) {
		/* The streams' ends, into w->ssec (kept there if this close
		 * fails later: c_direct 2).  A stream that failed (memory)
		 * took the records cut into it: the chunk goes without
		 * them, counted as dropped. */
		w->c_direct = 2;
		if (w->c_zended || !rec_w_split_push(w) || !rec_w_split_end(w)) {
			w->dropped_pending += count;
			for (size_t i = 0; i < w->ntypes; i++)
				w->types[i]->count = w->types[i]->bytes = 0;
			w->c_count = count = 0;
			start = max_end = w->have_prev ? w->prev_end_ticks : w->anchor_ticks;
			min_t = UINT64_MAX;
			ev_len = 0;
		}
		w->c_zended = 1;
		if (w->test_fail & REC_W_FAIL_CLOSE) {
			w->test_fail &= ~REC_W_FAIL_CLOSE;
			return rec_w_fail(w, REC_ERR_NOMEM, "chunk: out of memory (test)");
		}
	}

	/* Sections. */
	w->out.len = 0;
	if (!rec_buf_reserve(&w->out, REC_HEADER_SIZE_V1))
		return rec_w_fail(w, REC_ERR_NOMEM, "chunk: out of memory");
	w->out.len = REC_HEADER_SIZE_V1;
	st = add_metadata(w, &c);
	if (st != REC_OK)
		return st;
	{
		rec_buf *b = &w->scratch;
		size_t ntypes = 0;
		bool ok;
		b->len = 0;
		for (size_t i = 0; i < w->ntypes; i++)
			ntypes += w->types_by_id[i]->count != 0;
		ok = rec_buf_varint(b, rec_zigzag((int64_t)(min_t == UINT64_MAX ? 0 : min_t - start))) &&
		     rec_buf_varint(b, rec_zigzag((int64_t)(max_end - start))) &&
		     rec_buf_varint(b, w->dropped_pending) && rec_buf_varint(b, ntypes);
		for (size_t i = 0; ok && i < w->ntypes; i++) {
			const rec_wtype *t = w->types_by_id[i];
			if (!t->count)
				continue;
			ok = rec_buf_varint(b, t->id) && rec_buf_varint(b, t->count) &&
			     rec_buf_varint(b, t->bytes);
		}
		if (!ok)
			return rec_w_fail(w, REC_ERR_NOMEM, "chunk: out of memory");
		st = add_section(w, &c, REC_SECTION_STATS, ntypes, b->data, b->len);
		if (st != REC_OK)
			return st;
	}
	for (int i = 0; i < REC_W_NPOOLS; i++) {
		if (!w->pools[i].nused)
			continue;
		if (!encode_pool(w, i))
			return rec_w_fail(w, REC_ERR_NOMEM, "chunk: out of memory");
		st = add_section(w, &c, (uint16_t)(REC_SECTION_STRINGS + i), w->pools[i].nused,
				 w->scratch.data, w->scratch.len);
		if (st != REC_OK)
			return st;
	}
	if (w->fsrc.count && w->pools[REC_W_FRAMES].nused) { /* 1.2 FRAME_SOURCE */
		const rec_wpool *fr = &w->pools[REC_W_FRAMES];
		rec_buf *b = &w->scratch;
		size_t items = 0;
		bool ok = true;
		b->len = 0;
		for (size_t i = 0; ok && i < fr->nused; i++) {
			const rec_wentry *e = rec_w_pool_find(&w->fsrc, fr->used[i]);
			if (!e)
				continue;
			ok = rec_buf_varint(b, e->id) && rec_buf_varint(b, e->v[1]) &&
			     rec_buf_append(b, w->fsrc.data.data + e->v[0], (size_t)e->v[1]);
			items++;
		}
		if (!ok)
			return rec_w_fail(w, REC_ERR_NOMEM, "chunk: out of memory");
		if (items) {
			st = add_section(w, &c, REC_SECTION_FRAME_SOURCE, items, b->data, b->len);
			if (st != REC_OK)
				return st;
		}
	}
	st = REC_ERR_CODEC;
	if (ev_len > (size_t)REC_MAX_SECTION_RAW)
		return rec_w_fail(w, REC_ERR_LIMIT, "chunk: section %u would hold %zu bytes (limit %u)",
				  REC_SECTION_EVENTS, ev_len, REC_MAX_SECTION_RAW);
	if (w->c_direct == 2) {
		/* Stored whatever its size: the raw bytes are not kept. */
		if (count) {
			st = put_section(w, &c, REC_SECTION_EVENTS, count, ev_len,
					 REC_SECTION_COMPRESSED, w->ssec.data, w->ssec.len);
			split = 1;
		} else { /* its records lost: an empty EVENTS section */
			st = add_section(w, &c, REC_SECTION_EVENTS, 0, NULL, 0);
		}
		if (st != REC_OK)
			return st;
	} else if (w->c_zin && !w->c_zended && w->split) {
		/* The four frames streamed while the records came: their ends. */
		w->c_zended = 1;
		if (rec_w_split_feed(w, w->events.data + w->c_zin, w->events.len - w->c_zin) &&
		    rec_w_split_end(w) && w->ssec.len < ev_len) {
			st = put_section(w, &c, REC_SECTION_EVENTS, count, ev_len,
					 REC_SECTION_COMPRESSED, w->ssec.data, w->ssec.len);
			if (st != REC_OK)
				return st;
			split = 1;
			st = REC_OK;
		}
	} else if (w->c_zin && !w->c_zended) {
		/* The frame streamed while the records came: its end. */
		size_t off = 0;
		w->c_zended = 1;
		if (rec_codec_zstream_add(w->cctx, w->events.data + w->c_zin,
					  w->events.len - w->c_zin, &w->zout, 0) == REC_OK &&
		    rec_codec_zstream_end(w->cctx, &w->zout, ev_len, &off) == REC_OK &&
		    w->zout.len - off < ev_len)
			st = put_section(w, &c, REC_SECTION_EVENTS, count, ev_len,
					 REC_SECTION_COMPRESSED, w->zout.data + off, w->zout.len - off);
		else
			st = REC_ERR_CODEC;
		if (st != REC_OK && st != REC_ERR_CODEC)
			return st;
	}
	if (st == REC_ERR_CODEC && w->split && count && rec_w_split_oneshot(w, ev_raw, ev_len)) {
		st = put_section(w, &c, REC_SECTION_EVENTS, count, ev_len, REC_SECTION_COMPRESSED,
				 w->ssec.data, w->ssec.len);
		if (st != REC_OK)
			return st;
		split = 1;
	}
	if (st == REC_ERR_CODEC) /* not streamed, or the stream failed */
		st = add_section(w, &c, REC_SECTION_EVENTS, count, ev_raw, ev_len);
	if (st != REC_OK)
		return st;
	if (w->out.len - REC_HEADER_SIZE_V1 > (size_t)REC_MAX_PAYLOAD_SIZE)
		return rec_w_fail(w, REC_ERR_LIMIT, "chunk: payload of %zu bytes exceeds %u",
				  w->out.len - REC_HEADER_SIZE_V1, REC_MAX_PAYLOAD_SIZE);

	/* Header. */
	memset(&h, 0, sizeof(h));
	h.major = REC_FORMAT_MAJOR;
	h.minor = REC_FORMAT_MINOR;
	h.payload_size = w->out.len - REC_HEADER_SIZE_V1;
	h.payload_crc = rec_crc32c(0, w->out.data + REC_HEADER_SIZE_V1, (size_t)h.payload_size);
	h.flags = final ? REC_CHUNK_FINAL : 0;
	/* 1.1: a checksum over what a statistics-only reader reads (section
	 * headers, METADATA, STATS), so it need not read the EVENTS bytes. */
	if (!rec_front_checksum(w->out.data + REC_HEADER_SIZE_V1, h.payload_size, c.sections,
				&h.front_crc))
		return rec_w_fail(w, REC_ERR_STATE, "chunk: section table does not fit its payload");
	h.flags |= REC_CHUNK_FRONT_CRC;
	if (split)
		h.flags |= REC_CHUNK_SPLIT_EVENTS;
	h.codec = (uint8_t)w->codec;
	h.level = w->header_level;
	h.section_count = c.sections;
	h.raw_size = c.raw_size;
	h.event_count = count;
	h.start_wall_ns = w->anchor_wall_ns +
			  rec_ticks_to_ns_internal((int64_t)(start - w->anchor_ticks), w->tick_frequency);
	h.start_ticks = start;
	h.tick_frequency = w->tick_frequency;
	h.duration_ticks = max_end - start;
	h.run_id = w->run_id;
	h.process_start_ns = w->process_start_ns;
	h.pid = w->pid;
	h.sequence = w->sequence;
	rec_chunk_header_encode(&h, w->out.data);

	st = rec_w_sink_write(w, w->out.data, w->out.len);
	if (st != REC_OK)
		return st;

	w->sequence++;
	w->have_prev = 1;
	w->prev_end_ticks = max_end;
	w->stats.chunks++;
	w->stats.events += count;
	w->stats.raw_bytes += c.raw_size;
	w->stats.stored_bytes += w->out.len;
	w->dropped_pending = 0;
	w->c_open = 0;
	w->c_count = 0;
	w->c_fixed = 0;
	w->c_zin = 0;
	w->c_zended = 0;
	w->c_direct = 0;
	w->c_dlen = 0;
	w->events.len = 0;
	return REC_OK;
}

/* Take the records of [*pp, lim) into the open chunk, closing it at
 * chunk_size (and before the events budget); *pp: where it stopped. */
static rec_status take_records(rec_writer *w, const uint8_t **pp, const uint8_t *lim)
{
	rec_status st;

	if (!reserve_used(w))
		return rec_w_fail(w, REC_ERR_NOMEM, "chunk: out of memory");
	while (*pp < lim) {
		size_t in = record_len(*pp, lim);
		uint64_t bad = 0;
		int rc;

		if (in == 0)
			return scan_fail(w, SCAN_CORRUPT, 0, 0);
		/* (c_direct 2: a close that failed ended the streams; the
		 * chunk takes nothing more) */
		if (w->c_count && (w->c_in >= w->chunk_size || w->c_direct == 2 ||
				   ev_total(w) + in + REC_W_RECORD_GROWTH > REC_W_EVENTS_BUDGET)) {
			if ((st = close_chunk(w, 0)) != REC_OK)
				return st;
		}
		if (!w->c_open && (st = chunk_open(w)) != REC_OK)
			return st;
		if (!reserve_ev(w, in + REC_W_RECORD_GROWTH))
			return rec_w_fail(w, REC_ERR_NOMEM, "chunk: out of memory");
		rc = take_record(w, pp, lim, in, &bad);
		if (rc == SCAN_CORRUPT - 1)
			return rec_w_fail(w, REC_ERR_NOMEM, "chunk: out of memory");
		if (rc != SCAN_OK)
			return scan_fail(w, rc, bad, 0);
		if (w->c_in >= w->chunk_size && (st = close_chunk(w, 0)) != REC_OK)
			return st;
	}
	stream_more(w);
	return REC_OK;
}

/* ---- append_records' fast path: check and take in one decode ------------------ */

/* A uvarint inside [*pp, end), shortest-encoded (as writer_event.c's get_uv). */
static inline __attribute__((always_inline)) bool take_uv(const uint8_t **pp, const uint8_t *end,
							   const uint8_t *lim, uint64_t *v)
{
	const uint8_t *start = *pp;
	if (start >= end)
		return false;
	rec_varint_res r = rec_varint_next(start, lim);
	if (r.p == NULL || r.p > end)
		return false;
	*v = r.v;
	*pp = r.p;
	/* Shortest: a varint of more than one byte does not end in 0x00. */
	return *pp - start == 1 || (*pp)[-1] != 0;
}

/* Check one interchange record at *pp exactly as append_records' check_body
 * does (framing, known type, every field decodable by its wire class,
 * values in their width, shortest varints) and mark its references (an
 * undefined one fails too); fills s.  false: anything wrong. */
static inline __attribute__((always_inline)) bool check_scan(rec_writer *w, const uint8_t **pp,
							      const uint8_t *lim, rec_wscan *s)
{
	const uint8_t *p = *pp, *end;
	uint64_t size, v, dur = 0;
	const uint64_t mark = w->mark;
	rec_wtype *t;

	if (!take_uv(&p, lim, lim, &size) || size < 2 || size > (uint64_t)(lim - p) ||
	    size > REC_W_MAX_RECORD)
		return false;
	end = p + size;
	s->tid = p;
	if (!take_uv(&p, end, lim, &v) || v > UINT32_MAX || !(t = rec_w_type_find(w, (uint32_t)v)))
		return false;
	s->tid_len = (size_t)(p - s->tid);
	if (!take_uv(&p, end, lim, &s->ticks))
		return false;
	s->rest = p;
	if ((t->flags & REC_EVENT_HAS_DURATION) && !take_uv(&p, end, lim, &dur))
		return false;
	if (t->flags & REC_EVENT_HAS_THREAD) {
		if (!take_uv(&p, end, lim, &v) || !mark_ref(&w->pools[REC_W_THREADS], v, mark))
			return false;
	}
	if (t->flags & REC_EVENT_HAS_STACK) {
		if (!take_uv(&p, end, lim, &v) || !mark_ref(&w->pools[REC_W_STACKS], v, mark))
			return false;
	}
	for (uint32_t i = 0; i < t->nfields; i++) {
		const rec_wfield *f = &t->fields[i];
		switch (f->wire) {
		case REC_WIRE_UVARINT:
			if (!take_uv(&p, end, lim, &v) || v > f->umax)
				return false;
			if (f->ref && !mark_ref(&w->pools[ref_pool(f->ref)], v, mark))
				return false;
			break;
		case REC_WIRE_SVARINT: {
			int64_t sv;
			if (!take_uv(&p, end, lim, &v))
				return false;
			sv = rec_unzigzag(v);
			if (sv < f->smin || sv > f->smax)
				return false;
			break;
		}
		case REC_WIRE_FIXED32:
			if (end - p < 4)
				return false;
			p += 4;
			break;
		case REC_WIRE_FIXED64:
			if (end - p < 8)
				return false;
			p += 8;
			break;
		default:
			if (!take_uv(&p, end, lim, &v) || v > (uint64_t)(end - p))
				return false;
			p += v;
			break;
		}
	}
	s->t = t;
	s->end = end;
	s->end_ticks = s->ticks + dur < s->ticks ? UINT64_MAX : s->ticks + dur;
	*pp = end;
	return true;
}

/* ---- the take's fast path: records away from the batch's end ---------------- */

/* Bytes that take_run may write past a record it transcodes (its 8- and
 * 16-byte stores), reserved on top of the records' growth. */
#define REC_W_TAKE_SLACK 16u

/* A varint at p (p <= end, end + 8 <= lim) that must end inside the record
 * [.., end) and be shortest: the position after it, or NULL.  The same
 * decisions and value as take_uv(), one 8-byte load for 1-8 bytes. */
static inline __attribute__((always_inline)) const uint8_t *
take_v(const uint8_t *p, const uint8_t *end, const uint8_t *lim, uint64_t *v)
{
	const rec_varint_w8 d = rec_varint_next_w8(p);

	if (__builtin_expect(d.n != 0, 1)) {
		*v = d.v;
		p += d.n;
		return d.overlong || p > end ? NULL : p;
	}
	const rec_varint_res r = rec_varint_next(p, lim); /* 9 or 10 bytes */
	if (!r.p || r.p > end || r.p[-1] == 0)
		return NULL;
	*v = r.v;
	return r.p;
}

/* n bytes from s to d (room for 16 past them), one 16-byte copy where 16
 * bytes can be read at s (before lim): most pieces are a varint or a few
 * fields. */
static inline __attribute__((always_inline)) uint8_t *put16(uint8_t *d, const uint8_t *s, size_t n,
							      const uint8_t *lim)
{
	if (n <= 16 && lim - s >= 16)
		memcpy(d, s, 16);
	else
		copy_bytes(d, s, n);
	return d + n;
}

/* A record's Size (body bytes) and its Type_Id (the tl bytes at tid, 8
 * readable there) at d (room for 8 past them). */
static inline __attribute__((always_inline)) uint8_t *put_head(uint8_t *d, size_t body,
								 const uint8_t *tid, size_t tl)
{
	if (body < 0x80)
		*d++ = (uint8_t)body;
	else
		d += rec_varint_put(d, body);
	memcpy(d, tid, 8); /* tl <= 5 */
	return d + tl;
}

/* Check and transcode, in one pass, the records at *pp while each ends at
 * least 8 bytes before lim (so that every varint of it can be loaded 8 bytes
 * at a time) and the chunk has its first record: the checks of check_scan()
 * (the same accept and reject decisions), the marks of its references, and
 * the bytes of place_record() (Time_Delta to the previous record), with the
 * chunk's state in registers; direct: those bytes cut into the four streams
 * (as emit_split() cuts them).  Room: every record's growth and
 * REC_W_TAKE_SLACK after them (in each stream, direct).  Returns false at
 * a record that fails (the batch goes to the checked path, as with
 * check_scan()); true when it stopped at lim or at a record for
 * check_scan() (*pp there). */
static inline __attribute__((always_inline)) bool take_run(rec_writer *w, const uint8_t **pp,
							    const uint8_t *lim, const bool direct)
{
	const uint8_t *p = *pp;
	uint8_t *const q0 = w->events.data, *q = q0 + w->events.len;
	/* direct: the four streams' ends (writer_split.c's cut, done here) */
	rec_buf *const sb = w->sbuf;
	uint8_t *hq = direct ? sb[REC_EVS_HEADS].data + sb[REC_EVS_HEADS].len : NULL;
	uint8_t *tq = direct ? sb[REC_EVS_TIMES].data + sb[REC_EVS_TIMES].len : NULL;
	uint8_t *rq = direct ? sb[REC_EVS_REFS].data + sb[REC_EVS_REFS].len : NULL;
	uint8_t *bq = direct ? sb[REC_EVS_BODIES].data + sb[REC_EVS_BODIES].len : NULL;
	size_t dlen = w->c_dlen;
	uint64_t prev = w->c_prev, cmin = w->c_min, cmax = w->c_max_end, count = w->c_count;
	const uint64_t mark = w->mark;
	rec_wtype *t = w->last_type;
	uint64_t last_tid = 0; /* the thread last marked (records come in runs of a thread) */
	bool ok = false;

	while (lim - p >= 8) {
		const uint8_t *const r0 = p, *end, *tid, *tk, *rest, *thr0, *stk0, *fld0;
		uint64_t v, ticks, dur = 0, zz, endt;
		rec_varint_w8 d = rec_varint_next_w8(p);

		/* Size: 9-10 bytes is above REC_W_MAX_RECORD (or overlong). */
		if (!d.n || d.overlong || d.v < 2 || d.v > REC_W_MAX_RECORD)
			goto out;
		p += d.n;
		if (d.v > (uint64_t)(lim - p))
			goto out;
		end = p + d.v;
		if (lim - end < 8) { /* near the batch's end: check_scan() */
			p = r0;
			ok = true;
			goto out;
		}
		tid = p;
		d = rec_varint_next_w8(p);
		if (!d.n || d.overlong || d.v > UINT32_MAX)
			goto out;
		tk = p += d.n;
		if (p > end)
			goto out;
		if (!t || t->id != d.v) {
			t = rec_w_type_find(w, (uint32_t)d.v);
			if (!t)
				goto out;
		}
		if (!(p = take_v(p, end, lim, &ticks)))
			goto out;
		rest = p;
		if ((t->flags & REC_EVENT_HAS_DURATION) && !(p = take_v(p, end, lim, &dur)))
			goto out;
		thr0 = p;
		if (t->flags & REC_EVENT_HAS_THREAD) {
			if (!(p = take_v(p, end, lim, &v)))
				goto out;
			if (v != last_tid) {
				if (!mark_ref(&w->pools[REC_W_THREADS], v, mark))
					goto out;
				last_tid = v;
			}
		}
		stk0 = p;
		if (t->flags & REC_EVENT_HAS_STACK) {
			if (!(p = take_v(p, end, lim, &v)) ||
			    !mark_ref(&w->pools[REC_W_STACKS], v, mark))
				goto out;
		}
		fld0 = p;
		for (const rec_wfield *f = t->fields, *fe = f + t->nfields; f < fe; f++) {
			if (f->wire <= REC_WIRE_SVARINT) {
				if (!(p = take_v(p, end, lim, &v)) || v > f->vmax)
					goto out;
				if (f->ref && !mark_ref(&w->pools[ref_pool(f->ref)], v, mark))
					goto out;
			} else if (f->wire == REC_WIRE_FIXED32) {
				if (end - p < 4)
					goto out;
				p += 4;
			} else if (f->wire == REC_WIRE_FIXED64) {
				if (end - p < 8)
					goto out;
				p += 8;
			} else {
				if (!(p = take_v(p, end, lim, &v)) || v > (uint64_t)(end - p))
					goto out;
				p += v;
			}
		}
		{
			const size_t tl = (size_t)(tk - tid), rl = (size_t)(end - rest);
			zz = rec_zigzag((int64_t)(ticks - prev));
			const size_t body = tl + rec_varint_len(zz) + rl;
			const size_t n = rec_varint_len(body) + body;
			if (direct) { /* the EVENTS form cut into the four streams */
				hq = put_head(hq, body, tid, tl);
				tq += rec_varint_put_w8(tq, zz);
				if (t->flags & REC_EVENT_HAS_DURATION)
					rq = put16(rq, rest, (size_t)(thr0 - rest), lim);
				if (t->flags & REC_EVENT_HAS_STACK) {
					bq = put16(bq, thr0, (size_t)(stk0 - thr0), lim);
					rq = put16(rq, stk0, (size_t)(fld0 - stk0), lim);
					bq = put16(bq, fld0, (size_t)(end - fld0), lim);
				} else {
					bq = put16(bq, thr0, (size_t)(end - thr0), lim);
				}
				dlen += n;
			} else { /* Size, Type_Id, Time_Delta, the rest as it is */
				q = put_head(q, body, tid, tl);
				q += rec_varint_put_w8(q, zz);
				q = put16(q, rest, rl, lim);
			}
			t->count++;
			t->bytes += n;
		}
		prev = ticks;
		if (ticks < cmin)
			cmin = ticks;
		endt = ticks + dur < ticks ? UINT64_MAX : ticks + dur;
		if (endt > cmax)
			cmax = endt;
		count++;
		p = end;
	}
	ok = true;
out:
	if (direct) {
		sb[REC_EVS_HEADS].len = (size_t)(hq - sb[REC_EVS_HEADS].data);
		sb[REC_EVS_TIMES].len = (size_t)(tq - sb[REC_EVS_TIMES].data);
		sb[REC_EVS_REFS].len = (size_t)(rq - sb[REC_EVS_REFS].data);
		sb[REC_EVS_BODIES].len = (size_t)(bq - sb[REC_EVS_BODIES].data);
		w->c_dlen = dlen;
	} else {
		w->events.len = (size_t)(q - q0);
	}
	w->c_prev = prev;
	w->c_min = cmin;
	w->c_max_end = cmax;
	w->c_count = count;
	*pp = p;
	return ok;
}

/* A type's count and bytes less the records of the EVENTS form at [q, lim)
 * (whole records, or their Size and Type_Id: the heads stream). */
static void uncount(rec_writer *w, const uint8_t *q, const uint8_t *lim, int heads_only)
{
	while (q < lim) {
		const uint8_t *r = q;
		uint64_t size, id;
		rec_wtype *t;
		if (!rec_varint_get(&r, lim, &size))
			break;
		const size_t n = (size_t)(r - q) + (size_t)size;
		if (!rec_varint_get(&r, lim, &id))
			break;
		t = rec_w_type_find(w, (uint32_t)id);
		if (t) {
			t->count--;
			t->bytes -= n;
		}
		q = heads_only ? r : q + n;
	}
}

/* Undo the takes of a batch that failed: the open chunk as it was (extra
 * marks stay: an unreferenced pool entry in a chunk is harmless).  slen:
 * the streams' lengths before it (c_direct), dlen its c_dlen. */
static void untake(rec_writer *w, size_t ev_len, const size_t slen[REC_EVS_N], size_t dlen,
		   uint64_t count, uint64_t prev, uint64_t min, uint64_t max_end)
{
	if (w->c_direct) {
		uncount(w, w->sbuf[REC_EVS_HEADS].data + slen[REC_EVS_HEADS],
			w->sbuf[REC_EVS_HEADS].data + w->sbuf[REC_EVS_HEADS].len, 1);
		for (int i = 0; i < REC_EVS_N; i++)
			w->sbuf[i].len = slen[i];
		w->c_dlen = dlen;
		w->c_count = count;
		w->c_prev = prev;
		w->c_min = min;
		w->c_max_end = max_end;
		return;
	}
	/* c_in grows only once the whole batch is taken. */
	if (count == 0) {
		for (size_t i = 0; i < w->ntypes; i++)
			w->types[i]->count = w->types[i]->bytes = 0;
		w->c_count = 0;
		w->events.len = 0;
		return;
	}
	uncount(w, w->events.data + ev_len, w->events.data + w->events.len, 0);
	w->events.len = ev_len;
	w->c_count = count;
	w->c_prev = prev;
	w->c_min = min;
	w->c_max_end = max_end;
}

int rec_w_take_checked(rec_writer *w, const uint8_t *buf, size_t len)
{
	const uint8_t *p = buf, *lim = buf + len;
	const size_t ev_len = w->events.len, dlen = w->c_dlen;
	const uint64_t count = w->c_count, prev = w->c_prev, min = w->c_min, max_end = w->c_max_end;
	const size_t need = len + (len / 3 + 1) * REC_W_RECORD_GROWTH + REC_W_TAKE_SLACK;
	size_t slen[REC_EVS_N];

	if (w->sticky || w->pending.len || w->build_blocked || w->c_direct == 2)
		return 0;
	if (w->c_in + len >= w->chunk_size ||
	    ev_total(w) + len + (len / 3 + 1) * REC_W_RECORD_GROWTH > REC_W_EVENTS_BUDGET)
		return 0; /* this batch closes the chunk: the checked path */
	if (!w->c_open && chunk_open(w) != REC_OK)
		return 0;
	if (!reserve_used(w))
		return 0;
	/* Room for every record grown by REC_W_RECORD_GROWTH (at least 3 bytes
	 * each), and for take_run's wide stores after the last (in each
	 * stream, when the records are cut as they are taken). */
	if (!reserve_ev(w, need))
		return 0;
	for (int i = 0; i < REC_EVS_N; i++)
		slen[i] = w->sbuf[i].len;
	while (p < lim) {
		const uint8_t *p0 = p;
		rec_wscan s;
		if (w->c_count && !w->take_no_run) {
			if (!(w->c_direct ? take_run(w, &p, lim, true) : take_run(w, &p, lim, false))) {
				untake(w, ev_len, slen, dlen, count, prev, min, max_end);
				return 0;
			}
			if (p >= lim)
				break;
			p0 = p;
		}
		/* The chunk's first record, or one near the batch's end. */
		if (!check_scan(w, &p, lim, &s)) {
			untake(w, ev_len, slen, dlen, count, prev, min, max_end);
			return 0;
		}
		if (!place_record(w, &s, p0, (size_t)(p - p0), need)) {
			untake(w, ev_len, slen, dlen, count, prev, min, max_end);
			return 0;
		}
	}
	w->c_in += len;
	if (w->c_in >= w->chunk_size) {
		rec_status st = close_chunk(w, 0);
		if (st != REC_OK && !w->sticky) {
			w->build_blocked = 1;
			memcpy(w->blockmsg, w->errmsg, sizeof(w->blockmsg));
		}
	}
	stream_more(w);
	return 1;
}

/* A take that stopped: later takes wait for a define_* (build_blocked). */
static rec_status take_blocked(rec_writer *w, rec_status st)
{
	if (!w->sticky) {
		w->build_blocked = 1;
		memcpy(w->blockmsg, w->errmsg, sizeof(w->blockmsg));
	}
	return st;
}

rec_status rec_w_ingest(rec_writer *w)
{
	const uint8_t *base = w->pending.data, *p = base;
	rec_status st;
	size_t consumed;

	if (w->sticky)
		return w->sticky;
	if (!w->pending.len)
		return REC_OK;
	st = take_records(w, &p, base + w->pending.len);
	consumed = (size_t)(p - base);
	if (consumed < w->pending.len)
		memmove(w->pending.data, w->pending.data + consumed, w->pending.len - consumed);
	w->pending.len -= consumed;
	return st == REC_OK ? REC_OK : take_blocked(w, st);
}

rec_status rec_w_ingest_from(rec_writer *w, const uint8_t *buf, size_t len)
{
	const uint8_t *p = buf;
	rec_status st = take_records(w, &p, buf + len);

	if (st == REC_OK)
		return REC_OK;
	if (w->sticky)
		return st;
	/* The rest waits in pending (the caller checked the cap). */
	if (!rec_buf_append(&w->pending, p, (size_t)(buf + len - p)))
		return rec_w_fail(w, REC_ERR_NOMEM, "append_records: out of memory");
	(void)take_blocked(w, st);
	return REC_OK;
}

rec_status rec_w_build_chunks(rec_writer *w, int all, int final)
{
	rec_status st;

	if (w->sticky)
		return w->sticky;
	st = rec_w_ingest(w);
	if (st != REC_OK)
		return st;
	if (!all)
		return REC_OK;
	st = close_chunk(w, final);
	if (st != REC_OK)
		return take_blocked(w, st);
	return REC_OK;
}
