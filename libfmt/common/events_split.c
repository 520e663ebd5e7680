/* SPDX-License-Identifier: MIT */
/*
 * events_split.c - the 1.3 split EVENTS layout (spec/FORMAT.md "Split
 * EVENTS"): a chunk's event records cut into four streams of like bytes,
 * each compressed on its own, and joined back into the records.
 *
 *   heads   Size and Type_Id of every record
 *   times   Time_Delta of every record
 *   refs    Duration and Stack, of the records whose type has them
 *   bodies  Thread (if the type has one), then the fields and any
 *           trailing bytes: the rest of the record
 *
 * The streams hold exactly the bytes of the records, so the joined
 * section is byte for byte the EVENTS section of an unsplit chunk: the
 * reader decodes it as before (offsets, STATS byte counts and all).  Only
 * the lengths of Time_Delta, Duration, Thread and Stack are read here; a
 * value that is not a shortest encoding or out of range is the record
 * decoder's to refuse, after the join.  Cutting a record needs its type's
 * flags (METADATA), so a split section may hold no record of a type the
 * chunk does not declare.
 */
#include <string.h>

#include "common/common_internal.h"

/* Bytes of the uvarint at p (at most 10, within end); 0 if it does not
 * end.  Up to 8 bytes from one load where 8 can be read (before lim): the
 * first byte without its high bit ends it. */
static inline size_t vlen(const uint8_t *p, const uint8_t *end, const uint8_t *lim)
{
	if (lim - p >= 8) {
		uint64_t stop = ~rec_le64(p) & 0x8080808080808080ull; /* byte i at bits 8i.. */
		if (stop) {
			size_t n = (size_t)(__builtin_ctzll(stop) >> 3) + 1;
			return n <= (size_t)(end - p) ? n : 0;
		}
	}
	size_t max = (size_t)(end - p) < REC_VARINT_MAX ? (size_t)(end - p) : REC_VARINT_MAX;
	for (size_t i = 0; i < max; i++)
		if (p[i] < 0x80)
			return i + 1;
	return 0;
}

static inline unsigned type_flags(const rec_evs_types *ty, uint64_t id)
{
	if (id < ty->n)
		return ty->tf[id];
	return ty->more ? ty->more(ty->ctx, id) : 0;
}

/* n bytes from p to q; q has REC_EVS_SLACK bytes of room past them.  Most
 * pieces are a varint or a few fields: one 16-byte copy (the bytes past n
 * are overwritten by the next piece) where 16 bytes can be read at p
 * (before lim), instead of a call with a length the CPU cannot predict. */
static inline uint8_t *put(uint8_t *q, const uint8_t *p, size_t n, const uint8_t *lim)
{
	if (n <= REC_EVS_SLACK && (size_t)(lim - p) >= REC_EVS_SLACK)
		memcpy(q, p, REC_EVS_SLACK);
	else
		memcpy(q, p, n);
	return q + n;
}

bool rec_events_split(const uint8_t *p, const uint8_t *end, const rec_evs_types *ty,
		      rec_buf out[REC_EVS_N])
{
	size_t len = (size_t)(end - p);
	/* Every stream gets at most the section's bytes: reserve once. */
	for (int i = 0; i < REC_EVS_N; i++)
		if (out[i].cap - out[i].len < len + REC_EVS_SLACK &&
		    !rec_buf_reserve(&out[i], len + REC_EVS_SLACK))
			return false;
	uint8_t *h = out[REC_EVS_HEADS].data + out[REC_EVS_HEADS].len;
	uint8_t *t = out[REC_EVS_TIMES].data + out[REC_EVS_TIMES].len;
	uint8_t *r = out[REC_EVS_REFS].data + out[REC_EVS_REFS].len;
	uint8_t *b = out[REC_EVS_BODIES].data + out[REC_EVS_BODIES].len;
	uint64_t last_id = UINT64_MAX;
	unsigned f = 0;
	while (p < end) {
		const uint8_t *rec = p;
		uint64_t size, id;
		if (!rec_varint_get(&p, end, &size) || size > (uint64_t)(end - p))
			return false;
		const uint8_t *rend = p + size;
		if (!rec_varint_get(&p, rend, &id))
			return false;
		if (id != last_id) { /* records of one type come in runs */
			f = type_flags(ty, id);
			if (!(f & REC_EVS_KNOWN))
				return false;
			last_id = id;
		}
		h = put(h, rec, (size_t)(p - rec), end);
		size_t n = vlen(p, rend, end); /* Time_Delta */
		if (!n)
			return false;
		t = put(t, p, n, end);
		p += n;
		if (f & REC_EVENT_HAS_DURATION) {
			if (!(n = vlen(p, rend, end)))
				return false;
			r = put(r, p, n, end);
			p += n;
		}
		const uint8_t *body = p;
		if (f & REC_EVENT_HAS_THREAD) {
			if (!(n = vlen(p, rend, end)))
				return false;
			p += n;
		}
		if (f & REC_EVENT_HAS_STACK) {
			if (!(n = vlen(p, rend, end)))
				return false;
			b = put(b, body, (size_t)(p - body), end); /* the Thread */
			r = put(r, p, n, end);
			p += n;
			body = p;
		}
		b = put(b, body, (size_t)(rend - body), end);
		p = rend;
	}
	out[REC_EVS_HEADS].len = (size_t)(h - out[REC_EVS_HEADS].data);
	out[REC_EVS_TIMES].len = (size_t)(t - out[REC_EVS_TIMES].data);
	out[REC_EVS_REFS].len = (size_t)(r - out[REC_EVS_REFS].data);
	out[REC_EVS_BODIES].len = (size_t)(b - out[REC_EVS_BODIES].data);
	return true;
}

/* The join, every piece checked against its stream's end: where the fast
 * join below found something wrong, what and where. */
static const char *join_checked(const uint8_t *const s[REC_EVS_N], const size_t len[REC_EVS_N],
				uint32_t items, const rec_evs_types *ty, uint8_t *dst, size_t raw,
				uint32_t *bad_record)
{
	const uint8_t *h = s[REC_EVS_HEADS], *he = h + len[REC_EVS_HEADS];
	const uint8_t *t = s[REC_EVS_TIMES], *te = t + len[REC_EVS_TIMES];
	const uint8_t *r = s[REC_EVS_REFS], *re = r + len[REC_EVS_REFS];
	const uint8_t *b = s[REC_EVS_BODIES], *be = b + len[REC_EVS_BODIES];
	uint8_t *q = dst, *qe = dst + raw;
	uint32_t i = 0;
	/* The streams lie one after the other: reads may run on into the next. */
	const uint8_t *lim = s[REC_EVS_N - 1] + len[REC_EVS_N - 1];

	*bad_record = 0;
	for (; i < items; i++) {
		const uint8_t *h0 = h;
		uint64_t size, id;
		*bad_record = i;
		if (!rec_varint_get(&h, he, &size))
			return "the heads stream ends inside a record's Size";
		const uint8_t *hid = h;
		if (!rec_varint_get(&h, he, &id))
			return "the heads stream ends inside a record's Type_Id";
		unsigned f = type_flags(ty, id);
		if (!(f & REC_EVS_KNOWN))
			return "a record's Type_Id has no metadata in the chunk";
		size_t id_len = (size_t)(h - hid), nt, nd = 0, nth = 0, ns = 0;
		if (!(nt = vlen(t, te, lim)))
			return "the times stream ends inside a record's Time_Delta";
		if ((f & REC_EVENT_HAS_DURATION) && !(nd = vlen(r, re, lim)))
			return "the refs stream ends inside a record's Duration";
		if ((f & REC_EVENT_HAS_THREAD) && !(nth = vlen(b, be, lim)))
			return "the bodies stream ends inside a record's Thread";
		if ((f & REC_EVENT_HAS_STACK) && !(ns = vlen(r + nd, re, lim)))
			return "the refs stream ends inside a record's Stack";
		size_t head = id_len + nt + nd + nth + ns;
		if (size < head)
			return "a record's Size is less than its header fields";
		size_t rest = (size_t)size - head; /* the fields and trailing bytes */
		if (rest > (size_t)(be - b) - nth)
			return "the bodies stream ends inside a record's fields";
		size_t whole = (size_t)(hid - h0) + (size_t)size;
		if (whole > (size_t)(qe - q))
			return "the records are longer than the section's Raw_Size";
		q = put(q, h0, (size_t)(h - h0), lim);
		q = put(q, t, nt, lim);
		t += nt;
		q = put(q, r, nd, lim);
		q = put(q, b, nth, lim);
		b += nth;
		q = put(q, r + nd, ns, lim);
		r += nd + ns;
		q = put(q, b, rest, lim);
		b += rest;
	}
	*bad_record = items;
	if (h != he || t != te || r != re || b != be)
		return "the streams hold more bytes than the section's records";
	if (q != qe)
		return "the records are shorter than the section's Raw_Size";
	return NULL;
}

/* The uvarint at p (before end) by value, so that the cursor of an inlined
 * caller stays in a register: its length 0 if it does not end. */
static inline __attribute__((always_inline)) rec_varint_vn head_varint(const uint8_t *p,
									 const uint8_t *end)
{
	if (p < end && *p < 0x80)
		return (rec_varint_vn){ *p, 1 };
	return rec_varint_decode_slow(p, end);
}

/* 16 bytes from p to q (the caller has room and bytes to read). */
static inline void copy16(uint8_t *q, const uint8_t *p)
{
	memcpy(q, p, 16);
}

/* One record into q from its pieces: Size and Type_Id (hl bytes at h0, at
 * most 20: two moves), then Time_Delta (nt bytes at *t), Duration (nd at
 * *r), Thread (nth at *b), Stack (ns at *r after the Duration) and the rest
 * (rest at *b), each cursor moved past its piece; where the record ends.
 * Short pieces move 16 bytes at a time (the caller has the room and bytes
 * to read: REC_EVS_SLACK, REC_EVS_READ_SLACK). */
static inline __attribute__((always_inline)) uint8_t *
put_record(uint8_t *q, const uint8_t *h0, size_t hl, const uint8_t **t, const uint8_t **r,
	   const uint8_t **b, size_t nt, size_t nd, size_t nth, size_t ns, size_t rest)
{
	copy16(q, h0);
	if (hl > 16)
		copy16(q + 16, h0 + 16);
	q += hl;
	copy16(q, *t);
	q += nt;
	*t += nt;
	copy16(q, *r);
	q += nd;
	copy16(q, *b);
	q += nth;
	*b += nth;
	copy16(q, *r + nd);
	q += ns;
	*r += nd + ns;
	if (rest <= 16)
		copy16(q, *b);
	else
		memcpy(q, *b, rest);
	*b += rest;
	return q + rest;
}

/* The join of well-formed streams, the way the reader meets them: each
 * record's varints measured with one load, its short pieces moved 16 bytes
 * at a time, the streams' ends checked once a record; false at anything
 * unexpected (join_checked() then says what).  Reads run up to
 * REC_EVS_READ_SLACK bytes past the last stream's end. */
static bool join_fast(const uint8_t *const s[REC_EVS_N], const size_t len[REC_EVS_N],
		      uint32_t items, const rec_evs_types *ty, uint8_t *dst, size_t raw)
{
	const uint8_t *h = s[REC_EVS_HEADS], *t = s[REC_EVS_TIMES];
	const uint8_t *r = s[REC_EVS_REFS], *b = s[REC_EVS_BODIES];
	const uint8_t *const he = h + len[REC_EVS_HEADS], *const te = t + len[REC_EVS_TIMES];
	const uint8_t *const re = r + len[REC_EVS_REFS], *const be = b + len[REC_EVS_BODIES];
	uint8_t *q = dst, *const qe = dst + raw;
	uint64_t last_id = UINT64_MAX;
	unsigned f = 0;

	for (uint32_t i = 0; i < items; i++) {
		const uint8_t *h0 = h;
		rec_varint_vn sv = head_varint(h, he);
		if (!sv.n)
			return false;
		const uint64_t size = sv.v;
		const uint8_t *hid = h += sv.n;
		rec_varint_vn iv = head_varint(h, he);
		if (!iv.n)
			return false;
		const uint64_t id = iv.v;
		h += iv.n;
		if (id != last_id) {
			f = type_flags(ty, id);
			if (!(f & REC_EVS_KNOWN))
				return false;
			last_id = id;
		}
		size_t nt = vlen(t, te, te + REC_EVS_READ_SLACK), nd = 0, nth = 0, ns = 0;
		if (f & REC_EVENT_HAS_DURATION)
			nd = vlen(r, re, re + REC_EVS_READ_SLACK);
		if (f & REC_EVENT_HAS_THREAD)
			nth = vlen(b, be, be + REC_EVS_READ_SLACK);
		if (f & REC_EVENT_HAS_STACK)
			ns = vlen(r + nd, re, re + REC_EVS_READ_SLACK);
		if (!nt || ((f & REC_EVENT_HAS_DURATION) && !nd) || ((f & REC_EVENT_HAS_THREAD) && !nth) ||
		    ((f & REC_EVENT_HAS_STACK) && !ns))
			return false;
		size_t head = (size_t)(h - hid) + nt + nd + nth + ns;
		if (size < head || (size_t)size - head > (size_t)(be - b) - nth ||
		    (size_t)(hid - h0) + (size_t)size > (size_t)(qe - q))
			return false;
		size_t rest = (size_t)size - head;
		q = put_record(q, h0, (size_t)(h - h0), &t, &r, &b, nt, nd, nth, ns, rest);
	}
	return h == he && t == te && r == re && b == be && q == qe;
}

/* The time delta at t (vlen n there): by one load where 8 bytes can be
 * read (the streams have REC_EVS_READ_SLACK after their ends). */
static inline uint64_t time_delta(const uint8_t *t, const uint8_t *te, size_t n)
{
	rec_varint_w8 w = rec_varint_next_w8(t);
	if (w.n == n)
		return w.v;
	rec_varint_res q = rec_varint_next(t, te);
	return q.v;
}

/* Where a sparse join is in its streams. */
typedef struct sp_pos {
	const uint8_t *h, *t, *r, *b;
	uint8_t *q;
	uint64_t ticks;
	uint32_t i;
} sp_pos;

/* The next record of a run of Type_Id id (< 128, flags f: a constant where
 * inlined) at *p, when its frame is a common one (Size and Type_Id of a byte
 * each, Time_Delta of at most 8) and holds by the checks of the general
 * loop: its Time_Delta, the lengths of its refs and its body's length in
 * *x; false where the general loop must take it. */
typedef struct run_rec {
	rec_varint_w8 tw;
	size_t nd, ns, body, size;
} run_rec;

static inline __attribute__((always_inline)) bool run_next(const sp_pos *p, uint64_t id, unsigned f,
							    uint32_t items, const uint8_t *he,
							    const uint8_t *te, const uint8_t *re,
							    const uint8_t *be, const uint8_t *qe,
							    run_rec *x)
{
	const uint8_t *h = p->h;
	if (!(p->i < items && he - h >= 2 && h[0] < 0x80 && h[1] == id))
		return false;
	x->size = h[0];
	x->tw = rec_varint_next_w8(p->t);
	x->nd = x->ns = 0;
	if (!x->tw.n || x->tw.n > (size_t)(te - p->t))
		return false;
	if ((f & REC_EVENT_HAS_DURATION) && !(x->nd = vlen(p->r, re, re + REC_EVS_READ_SLACK)))
		return false;
	if ((f & REC_EVENT_HAS_STACK) && !(x->ns = vlen(p->r + x->nd, re, re + REC_EVS_READ_SLACK)))
		return false;
	const size_t head = 1 + x->tw.n + x->nd + x->ns;
	if (x->size < head + ((f & REC_EVENT_HAS_THREAD) != 0) || x->size - head > (size_t)(be - p->b) ||
	    1 + x->size > (size_t)(qe - p->q))
		return false;
	x->body = x->size - head;
	return true;
}

/* Past the record run_next() read. */
static inline __attribute__((always_inline)) void run_past(sp_pos *p, const run_rec *x)
{
	p->ticks += (uint64_t)rec_unzigzag(x->tw.v);
	p->h += 2;
	p->t += x->tw.n;
	p->r += x->nd + x->ns;
	p->b += x->body;
	p->q += 1 + x->size;
	p->i++;
}

/* The records of Type_Id id passed over from *p while they come in a run
 * and their frames are the common ones (run_next()): only where the next
 * record starts.  It stops before any other record; the general loop takes
 * that one (and refuses it if it does not hold). */
static inline __attribute__((always_inline)) void skip_run(sp_pos *p, uint64_t id, unsigned f,
							   uint32_t items, const uint8_t *he,
							   const uint8_t *te, const uint8_t *re,
							   const uint8_t *be, const uint8_t *qe)
{
	sp_pos at = *p;
	run_rec x;
	while (run_next(&at, id, f, items, he, te, re, be, qe, &x))
		run_past(&at, &x);
	*p = at;
}

/* A uvarint at *p below end into *v, at most max. */
static inline bool dig_get(const uint8_t **p, const uint8_t *end, uint64_t max, uint64_t *v)
{
	return rec_varint_get(p, end, v) && *v <= max;
}

/* dig_get() in the bodies or refs stream, which have REC_EVS_READ_SLACK
 * readable bytes after them: by one load where the varint has at most 8
 * bytes. */
static inline bool dig_w8(const uint8_t **p, const uint8_t *end, uint64_t max, uint64_t *v)
{
	rec_varint_w8 w = rec_varint_next_w8(*p);
	if (w.n && w.n <= (size_t)(end - *p)) {
		*p += w.n;
		*v = w.v;
		return w.v <= max;
	}
	return dig_get(p, end, max, v);
}

/* skip_run() for the digested records of Type_Id id: each one's digest
 * made (rec_evs_digest_body() from the bodies stream: Thread, then the
 * fields; the Stack from the refs stream).  It stops before a record whose digest does not hold, or when
 * sp has no room left; the general loop takes that one. */
static inline __attribute__((always_inline)) void dig_run(sp_pos *p, uint64_t id, unsigned f,
							  uint32_t items, const uint8_t *he,
							  const uint8_t *te, const uint8_t *re,
							  const uint8_t *be, const uint8_t *qe,
							  rec_evs_sparse *sp, size_t *dk)
{
	sp_pos at = *p;
	size_t k = *dk;
	const unsigned nf = sp->dig.nf;
	const uint64_t max0 = sp->dig.max[0],
		       max1 = sp->dig.max[1] < UINT32_MAX ? sp->dig.max[1] : UINT32_MAX;
	run_rec x;
	while (k < sp->dcap && run_next(&at, id, f, items, he, te, re, be, qe, &x)) {
		const uint8_t *y = at.b, *ye = at.b + x.body;
		const uint8_t *z = at.r + x.nd; /* the Stack in the refs stream */
		uint64_t th = 0, v0 = 0, v1 = 0, sk = 0;
		if (((f & REC_EVENT_HAS_THREAD) && !dig_w8(&y, ye, UINT32_MAX, &th)) ||
		    (nf > 0 && !dig_w8(&y, ye, max0, &v0)) || (nf > 1 && !dig_w8(&y, ye, max1, &v1)) ||
		    ((f & REC_EVENT_HAS_STACK) && !dig_w8(&z, re, UINT32_MAX, &sk)))
			break;
		run_past(&at, &x);
		sp->digs[k++] = (rec_evs_dig){ at.ticks, v0, (uint32_t)th, (uint32_t)v1, (uint32_t)sk };
	}
	*dk = k;
	*p = at;
}

bool rec_evs_digest_body(const uint8_t *p, const uint8_t *end, unsigned f,
			 const rec_evs_digfields *df, rec_evs_dig *d)
{
	uint64_t v = 0;
	d->thread = 0;
	d->stack = 0;
	d->f0 = 0;
	d->f1 = 0;
	if ((f & REC_EVENT_HAS_DURATION) && !rec_varint_get(&p, end, &v))
		return false;
	if (f & REC_EVENT_HAS_THREAD) {
		if (!dig_get(&p, end, UINT32_MAX, &v))
			return false;
		d->thread = (uint32_t)v;
	}
	if (f & REC_EVENT_HAS_STACK) {
		if (!dig_get(&p, end, UINT32_MAX, &v))
			return false;
		d->stack = (uint32_t)v;
	}
	if (df->nf > 0 && !dig_get(&p, end, df->max[0], &d->f0))
		return false;
	if (df->nf > 1) {
		if (!dig_get(&p, end, df->max[1] < UINT32_MAX ? df->max[1] : UINT32_MAX, &v))
			return false;
		d->f1 = (uint32_t)v;
	}
	return true;
}

bool rec_events_join_sparse(const uint8_t *const s[REC_EVS_N], const size_t len[REC_EVS_N],
			    uint32_t items, const rec_evs_types *ty, uint8_t *dst, size_t raw,
			    rec_evs_sparse *sp)
{
	const uint8_t *h = s[REC_EVS_HEADS], *t = s[REC_EVS_TIMES];
	const uint8_t *r = s[REC_EVS_REFS], *b = s[REC_EVS_BODIES];
	const uint8_t *const he = h + len[REC_EVS_HEADS], *const te = t + len[REC_EVS_TIMES];
	const uint8_t *const re = r + len[REC_EVS_REFS], *const be = b + len[REC_EVS_BODIES];
	/* q: where the record stands in the section (no byte is written
	 * there); w: where a selected one is written */
	uint8_t *q = dst, *const qe = dst + raw, *w = dst;
	uint64_t last_id = UINT64_MAX, ticks = sp->start_ticks, lo = 0, hi = 0;
	unsigned f = 0;
	bool take = false, dig = false, sorted = true;
	size_t k = 0, dk = 0;

	sp->k = 0;
	sp->dk = 0;
	sp->overflow = false;
	for (uint32_t i = 0; i < items; i++) {
		if (!take && last_id < 0x80 && i) {
			/* the rest of a run of records passed over, or digested */
			sp_pos at = { h, t, r, b, q, ticks, i };
			if (!dig) {
				switch (f & 7u) {
#define SKIP_RUN(F)                                                    \
	case F:                                                         \
		skip_run(&at, last_id, F, items, he, te, re, be, qe); \
		break;
					SKIP_RUN(0) SKIP_RUN(1) SKIP_RUN(2) SKIP_RUN(3)
					SKIP_RUN(4) SKIP_RUN(5) SKIP_RUN(6) SKIP_RUN(7)
#undef SKIP_RUN
				}
			} else if ((f & 7u) == (REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK)) {
				/* (CPU samples: the run specialized for their flags) */
				dig_run(&at, last_id, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, items,
					he, te, re, be, qe, sp, &dk);
			} else {
				dig_run(&at, last_id, f, items, he, te, re, be, qe, sp, &dk);
			}
			h = at.h, t = at.t, r = at.r, b = at.b, q = at.q, ticks = at.ticks, i = at.i;
			if (i == items)
				break;
		}
		const uint8_t *h0 = h;
		uint64_t size, id;
		const uint8_t *hid;
		if (he - h >= 2 && h[0] < 0x80 && h[1] < 0x80) { /* Size and Type_Id of a byte each */
			size = h[0];
			id = h[1];
			hid = h + 1;
			h += 2;
		} else {
			rec_varint_vn sv = head_varint(h, he);
			if (!sv.n)
				return false;
			size = sv.v;
			hid = h += sv.n;
			rec_varint_vn iv = head_varint(h, he);
			if (!iv.n)
				return false;
			id = iv.v;
			h += iv.n;
		}
		if (id != last_id) {
			f = type_flags(ty, id);
			if (!(f & REC_EVS_KNOWN) || id >= sp->nact)
				return false;
			take = sp->act[id] == 2;
			dig = sp->act[id] == 3;
			last_id = id;
		}
		/* Time_Delta: length and value from one load */
		rec_varint_w8 tw = rec_varint_next_w8(t);
		size_t nt = tw.n, nd = 0, nth = 0, ns = 0;
		uint64_t delta = tw.v;
		if (!nt || nt > (size_t)(te - t)) {
			if (!(nt = vlen(t, te, te + REC_EVS_READ_SLACK)))
				return false;
			delta = time_delta(t, te, nt);
		}
		if (f & REC_EVENT_HAS_DURATION)
			nd = vlen(r, re, re + REC_EVS_READ_SLACK);
		if (f & REC_EVENT_HAS_STACK)
			ns = vlen(r + nd, re, re + REC_EVS_READ_SLACK);
		if (((f & REC_EVENT_HAS_DURATION) && !nd) || ((f & REC_EVENT_HAS_STACK) && !ns))
			return false;
		ticks += (uint64_t)rec_unzigzag(delta);
		if (!take) { /* passed over: only where the next one starts */
			size_t head = (size_t)(h - hid) + nt + nd + ns;
			if (size < head + ((f & REC_EVENT_HAS_THREAD) != 0) ||
			    (size_t)size - head > (size_t)(be - b) ||
			    (size_t)(hid - h0) + (size_t)size > (size_t)(qe - q))
				return false;
			if (dig) { /* the body in the bodies stream: Thread, then the fields */
				if (dk == sp->dcap) {
					sp->overflow = true;
					return false;
				}
				rec_evs_dig *d = &sp->digs[dk++];
				const uint8_t *z = r + nd; /* the Stack in the refs stream */
				uint64_t sk = 0;
				if (!rec_evs_digest_body(b, b + ((size_t)size - head),
							 f & REC_EVENT_HAS_THREAD, &sp->dig, d) ||
				    ((f & REC_EVENT_HAS_STACK) && !dig_get(&z, re, UINT32_MAX, &sk)))
					return false;
				d->ticks = ticks;
				d->stack = (uint32_t)sk;
			}
			q += (size_t)(hid - h0) + (size_t)size;
			t += nt;
			r += nd + ns;
			b += (size_t)size - head;
			continue;
		}
		if ((f & REC_EVENT_HAS_THREAD) && !(nth = vlen(b, be, be + REC_EVS_READ_SLACK)))
			return false;
		size_t head = (size_t)(h - hid) + nt + nd + nth + ns;
		if (size < head || (size_t)size - head > (size_t)(be - b) - nth ||
		    (size_t)(hid - h0) + (size_t)size > (size_t)(qe - q))
			return false;
		size_t rest = (size_t)size - head;
		if (k == sp->cap) {
			sp->overflow = true;
			return false;
		}
		if (k && ticks < hi)
			sorted = false;
		if (!k || ticks < lo)
			lo = ticks;
		if (!k || ticks > hi)
			hi = ticks;
		sp->ents[k].ticks = ticks;
		sp->ents[k].off = (uint32_t)(w - dst);
		sp->ents[k].at = (uint32_t)(q - dst);
		k++;
		/* the record after the last one written (w <= q: the room and
		 * the slack put_record() needs are the section's) */
		w = put_record(w, h0, (size_t)(h - h0), &t, &r, &b, nt, nd, nth, ns, rest);
		q += (size_t)(hid - h0) + (size_t)size;
	}
	if (h != he || t != te || r != re || b != be || q != qe)
		return false;
	sp->k = k;
	sp->dk = dk;
	sp->lo = lo;
	sp->hi = hi;
	sp->sorted = sorted;
	return true;
}

const char *rec_events_join(const uint8_t *const s[REC_EVS_N], const size_t len[REC_EVS_N],
			    uint32_t items, const rec_evs_types *ty, uint8_t *dst, size_t raw,
			    uint32_t *bad_record)
{
	*bad_record = items;
	if (join_fast(s, len, items, ty, dst, raw))
		return NULL;
	return join_checked(s, len, items, ty, dst, raw, bad_record);
}

/* Past a str (uvarint length, bytes) at *p. */
static bool skip_str(const uint8_t **p, const uint8_t *end)
{
	uint64_t n;
	if (!rec_varint_get(p, end, &n) || n > (uint64_t)(end - *p))
		return false;
	*p += n;
	return true;
}

bool rec_events_meta_flags(const uint8_t *p, size_t n, uint8_t *tf, size_t cap)
{
	const uint8_t *end = p + n;
	memset(tf, 0, cap);
	while (p < end) {
		uint64_t id, flags, nf, v;
		if (!rec_varint_get(&p, end, &id) || !rec_varint_get(&p, end, &flags) || id >= cap)
			return false;
		for (int i = 0; i < 4; i++) /* Name, Label, Description, Category */
			if (!skip_str(&p, end))
				return false;
		if (!rec_varint_get(&p, end, &nf))
			return false;
		for (uint64_t f = 0; f < nf; f++)
			if (!skip_str(&p, end) || !skip_str(&p, end) || !rec_varint_get(&p, end, &v) ||
			    !rec_varint_get(&p, end, &v) || !skip_str(&p, end))
				return false;
		tf[id] = (uint8_t)((flags & 0x7u) | REC_EVS_KNOWN);
	}
	return true;
}

bool rec_events_split_table_decode(const uint8_t *p, size_t stored, uint32_t raw,
				   uint32_t sstored[REC_EVS_N], uint32_t sraw[REC_EVS_N])
{
	if (stored < REC_EVS_TABLE_SIZE)
		return false;
	uint64_t st = REC_EVS_TABLE_SIZE, rs = 0;
	for (int i = 0; i < REC_EVS_N; i++) {
		sstored[i] = rec_le32(p + 8 * (size_t)i);
		sraw[i] = rec_le32(p + 8 * (size_t)i + 4);
		if ((sraw[i] == 0) != (sstored[i] == 0))
			return false;
		st += sstored[i];
		rs += sraw[i];
	}
	return st == stored && rs == raw;
}

void rec_events_split_table_encode(uint8_t *p, const uint32_t sstored[REC_EVS_N],
				   const uint32_t sraw[REC_EVS_N])
{
	for (int i = 0; i < REC_EVS_N; i++) {
		rec_put_le32(p + 8 * (size_t)i, sstored[i]);
		rec_put_le32(p + 8 * (size_t)i + 4, sraw[i]);
	}
}
