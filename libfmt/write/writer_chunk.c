/* SPDX-License-Identifier: MIT */
/*
 * writer_chunk.c - build one chunk from the pending records and write it
 * (spec "Chunk header", "Sections", "STATS", "Pools", "EVENTS").
 *
 * One pass over the pending records transcodes each one from the interchange
 * form to the EVENTS form (absolute Ticks -> svarint Time_Delta), counts the
 * per-type STATS and marks every referenced pool entry with this build's
 * mark.  The first record's delta is relative to Start_Ticks (the minimum
 * tick), which is known only at the end of the pass, so the pass leaves room
 * for the first record in front and writes it last.  The marks are then
 * closed over the pool references (stacks -> frames -> strings, modules;
 * modules -> strings; threads -> strings), the marked ids sorted, and the
 * chunk (header + METADATA, STATS, pools, EVENTS) written with one sink
 * write.  A reference to an id that was never defined fails the build with
 * nothing written and the records kept pending.
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

/* Append one section (header + stored bytes) to w->out. */
static rec_status add_section(rec_writer *w, rec_wchunk *c, uint16_t kind, size_t items,
			      const void *raw, size_t raw_len)
{
	rec_section_header sh;
	size_t bound = raw_len, stored = raw_len;
	uint16_t flags = 0;
	uint8_t *dst;

	if (raw_len > (size_t)REC_MAX_SECTION_RAW || items > UINT32_MAX)
		return rec_w_fail(w, REC_ERR_LIMIT,
				  "chunk: section %u would hold %zu bytes (limit %u)", kind, raw_len,
				  REC_MAX_SECTION_RAW);
	if (w->codec != REC_CODEC_NONE && raw_len > 0) {
		bound = rec_codec_bound(w->codec, raw_len);
		if (bound < raw_len)
			bound = raw_len;
	}
	if (w->out.cap - w->out.len < REC_SECTION_HEADER_SIZE + bound &&
	    !rec_buf_reserve(&w->out, REC_SECTION_HEADER_SIZE + bound))
		return rec_w_fail(w, REC_ERR_NOMEM, "chunk: out of memory");
	dst = w->out.data + w->out.len + REC_SECTION_HEADER_SIZE;
	if (w->codec != REC_CODEC_NONE && raw_len > 0) {
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
	sh.kind = kind;
	sh.flags = flags;
	sh.item_count = (uint32_t)items;
	sh.stored_size = (uint32_t)stored;
	sh.raw_size = (uint32_t)raw_len;
	rec_section_header_encode(&sh, w->out.data + w->out.len);
	w->out.len += REC_SECTION_HEADER_SIZE + stored;
	c->sections++;
	c->raw_size += raw_len;
	return REC_OK;
}

static bool prepare_used(rec_writer *w)
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
		p->nused = 0;
		memset(p->seen, 0, sizeof(p->seen));
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

/* Build and write one chunk from the front of the pending records. */
static rec_status build_one(rec_writer *w, int final)
{
	const uint8_t *base = w->pending.data, *p = base;
	const uint8_t *lim = base + w->pending.len;
	const uint64_t mark = ++w->mark;
	uint64_t start, max_end = 0, min_t = UINT64_MAX, bad = 0, count = 0;
	const uint8_t *ev_raw = NULL;
	size_t ev_len = 0, consumed;
	rec_chunk_header h;
	rec_wchunk c = { 0, 0 };
	rec_status st;
	int rc;

	if (!prepare_used(w))
		return rec_w_fail(w, REC_ERR_NOMEM, "chunk: out of memory");
	for (size_t i = 0; i < w->ntypes; i++)
		w->types[i]->count = w->types[i]->bytes = 0;
	w->events.len = 0;

	if (p < lim) {
		rec_wscan s0, s;
		uint64_t prev;
		size_t head, n0, body0;

		rc = scan_record(w, &p, lim, mark, &s0, &bad);
		if (rc != SCAN_OK)
			return scan_fail(w, rc, bad, 0);
		head = (size_t)(p - base) + REC_W_RECORD_GROWTH; /* room for the first record */
		if (w->events.cap < head && !rec_buf_reserve(&w->events, head))
			return rec_w_fail(w, REC_ERR_NOMEM, "chunk: out of memory");
		w->events.len = head;
		prev = min_t = s0.ticks;
		max_end = s0.end_ticks;
		count = 1;
		while (p < lim && (size_t)(p - base) < w->chunk_size) {
			size_t in = record_len(p, lim);
			uint8_t *q;
			if (in == 0)
				return scan_fail(w, SCAN_CORRUPT, 0, (size_t)(p - base));
			if (w->events.len + in + REC_W_RECORD_GROWTH > REC_W_EVENTS_BUDGET)
				break;
			if (w->events.cap - w->events.len < in + REC_W_RECORD_GROWTH &&
			    !rec_buf_reserve(&w->events, in + REC_W_RECORD_GROWTH))
				return rec_w_fail(w, REC_ERR_NOMEM, "chunk: out of memory");
			rc = scan_record(w, &p, lim, mark, &s, &bad);
			if (rc != SCAN_OK)
				return scan_fail(w, rc, bad, (size_t)(p - base));
			q = w->events.data + w->events.len;
			{
				size_t n = emit_record(q, &s, prev);
				w->events.len += n;
				s.t->count++;
				s.t->bytes += n;
			}
			prev = s.ticks;
			if (s.ticks < min_t)
				min_t = s.ticks;
			if (s.end_ticks > max_end)
				max_end = s.end_ticks;
			count++;
		}
		start = min_t;
		{
			uint64_t zz0 = rec_zigzag((int64_t)(s0.ticks - start));
			n0 = out_len(&s0, zz0, &body0);
		}
		ev_raw = w->events.data + head - n0;
		emit_record(w->events.data + head - n0, &s0, start);
		s0.t->count++;
		s0.t->bytes += n0;
		ev_len = w->events.len - (head - n0);
	} else {
		start = w->have_prev ? w->prev_end_ticks : w->anchor_ticks;
		max_end = start;
	}
	consumed = (size_t)(p - base);

	st = close_refs(w, mark);
	if (st != REC_OK)
		return st;
	for (int i = 0; i < REC_W_NPOOLS; i++)
		if (w->pools[i].nused > 1)
			qsort(w->pools[i].used, w->pools[i].nused, sizeof(uint64_t), cmp_u64);

	/* Sections. */
	w->out.len = 0;
	if (!rec_buf_reserve(&w->out, REC_HEADER_SIZE_V1))
		return rec_w_fail(w, REC_ERR_NOMEM, "chunk: out of memory");
	w->out.len = REC_HEADER_SIZE_V1;
	st = add_section(w, &c, REC_SECTION_METADATA, w->ntypes, w->meta.data, w->meta.len);
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
	h.flags = (final && consumed == w->pending.len) ? REC_CHUNK_FINAL : 0;
	/* 1.1: a checksum over what a statistics-only reader reads (section
	 * headers, METADATA, STATS), so it need not read the EVENTS bytes. */
	if (!rec_front_checksum(w->out.data + REC_HEADER_SIZE_V1, h.payload_size, c.sections,
				&h.front_crc))
		return rec_w_fail(w, REC_ERR_STATE, "chunk: section table does not fit its payload");
	h.flags |= REC_CHUNK_FRONT_CRC;
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
	if (consumed < w->pending.len)
		memmove(w->pending.data, w->pending.data + consumed, w->pending.len - consumed);
	w->pending.len -= consumed;
	return REC_OK;
}

static rec_status build_loop(rec_writer *w, int all, int final)
{
	rec_status st;

	if (!all) {
		while (w->pending.len >= w->chunk_size) {
			st = build_one(w, 0);
			if (st != REC_OK)
				return st;
		}
		return REC_OK;
	}
	do {
		st = build_one(w, final);
		if (st != REC_OK)
			return st;
	} while (w->pending.len > 0);
	return REC_OK;
}

rec_status rec_w_build_chunks(rec_writer *w, int all, int final)
{
	rec_status st;

	if (w->sticky)
		return w->sticky;
	st = build_loop(w, all, final);
	if (st != REC_OK && !w->sticky) {
		/* Nothing was written for the failing chunk; its records stay. */
		w->build_blocked = 1;
		memcpy(w->blockmsg, w->errmsg, sizeof(w->blockmsg));
	}
	return st;
}
