/* SPDX-License-Identifier: MIT */
/*
 * writer_event.c - events into the pending buffer, in the record interchange
 * form (spec "Record interchange form"): uvarint Size, uvarint Type_Id,
 * uvarint absolute Ticks, [Duration], [Thread], [Stack], Fields.
 *
 * The builder (begin, put_*, end) writes the record in place: begin reserves
 * one byte for Size and room for every fixed-size field of the type (so puts
 * do not check capacity), end stores Size (moving the body when Size needs
 * more than one byte).  Any builder error discards the partial record.
 *
 * rec_writer_append_records() validates the whole input first (framing,
 * known type, every header field and field decodable within Size by its wire
 * class, values within their width, shortest varints) and appends nothing
 * if any record is malformed.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "write/writer_internal.h"

/* Discard the record being built and fail with st. */
__attribute__((format(printf, 3, 4)))
static rec_status builder_fail(rec_writer *w, rec_status st, const char *fmt, ...)
{
	va_list ap;

	if (w->cur) {
		w->pending.len = w->cur_start;
		w->cur = NULL;
	}
	va_start(ap, fmt);
	vsnprintf(w->errmsg, sizeof(w->errmsg), fmt, ap);
	va_end(ap);
	return st;
}

/* A put or end without an open event: the sticky error if there is one
 * (begin refuses after it, so no event can be open), else a state error. */
static rec_status no_event(rec_writer *w, const char *what)
{
	if (w->sticky)
		return w->sticky;
	return rec_w_fail(w, REC_ERR_STATE, "%s: no event is being built (call begin first)", what);
}

/* Enough events are pending: take them into the open chunk (which closes
 * at chunk_size).  The event that got us here is accepted whatever happens,
 * so only a sink failure (sticky) is returned; a chunk that cannot be built
 * (an undefined reference, memory) keeps its records, is retried after the
 * next define_* or add_type, and is reported by flush and close (and
 * errmsg). */
__attribute__((noinline)) static rec_status auto_build(rec_writer *w)
{
	rec_status st = rec_w_ingest(w);

	if (st != REC_OK && w->sticky)
		return st;
	return REC_OK;
}

static inline rec_status after_append(rec_writer *w)
{
	if ((w->pending.len >= REC_W_STREAM_SLICE || w->pending.len >= w->chunk_size) &&
	    !w->build_blocked)
		return auto_build(w);
	return REC_OK;
}

/* Why the pending events cannot be written (for LIMIT messages). */
static const char *block_reason(const rec_writer *w)
{
	return w->build_blocked ? w->blockmsg : "events are produced faster than written";
}

rec_status rec_writer_begin(rec_writer *w, uint32_t type_id, uint64_t ticks, uint64_t duration_ticks,
			    uint64_t thread, uint64_t stack)
{
	rec_wtype *t;
	uint8_t *p;
	size_t start;

	if (!w)
		return REC_ERR_INVALID_ARG;
	if (w->sticky)
		return w->sticky;
	if (w->cur)
		return builder_fail(w, REC_ERR_STATE,
				    "begin: the previous event (type %u) was not ended; it is discarded",
				    w->cur->id);
	t = rec_w_type_find(w, type_id);
	if (!t)
		return rec_w_fail(w, REC_ERR_INVALID_ARG, "begin: unknown type id %u", type_id);
	start = w->pending.len;
	if (start + t->fixed_max > REC_W_PENDING_CAP)
		return rec_w_fail(w, REC_ERR_LIMIT, "begin: %zu bytes of events pending (%s)", start,
				  block_reason(w));
	if (w->pending.cap - start < t->fixed_max && !rec_buf_reserve(&w->pending, t->fixed_max))
		return rec_w_fail(w, REC_ERR_NOMEM, "begin: out of memory");
	p = w->pending.data + start + 1; /* Size is stored by end() */
	p += rec_varint_put(p, type_id);
	p += rec_varint_put(p, ticks);
	if (t->flags & REC_EVENT_HAS_DURATION)
		p += rec_varint_put(p, duration_ticks);
	if (t->flags & REC_EVENT_HAS_THREAD)
		p += rec_varint_put(p, thread);
	if (t->flags & REC_EVENT_HAS_STACK)
		p += rec_varint_put(p, stack);
	w->pending.len = (size_t)(p - w->pending.data);
	w->cur = t;
	w->cur_field = 0;
	w->cur_start = start;
	return REC_OK;
}

/* The field the next put fills, or NULL (error set, record discarded). */
static inline const rec_wfield *next_field(rec_writer *w, unsigned wire, rec_status *st)
{
	const rec_wtype *t = w->cur;
	const rec_wfield *f;

	if (!t) {
		*st = no_event(w, "put");
		return NULL;
	}
	if (w->cur_field >= t->nfields) {
		*st = builder_fail(w, REC_ERR_INVALID_ARG,
				   "put: type %s has only %u fields; event discarded", t->name,
				   t->nfields);
		return NULL;
	}
	f = &t->fields[w->cur_field];
	if (f->wire != wire) {
		*st = builder_fail(w, REC_ERR_INVALID_ARG,
				   "put: field %u of type %s is %s, not written by this put; event "
				   "discarded",
				   w->cur_field, t->name, rec_field_type_name(f->type));
		return NULL;
	}
	return f;
}

/* Error paths of the puts (out of line: the fast paths stay small). */
__attribute__((noinline, cold)) static rec_status put_u64_slow(rec_writer *w, uint64_t v)
{
	const rec_wfield *f;
	rec_status st;

	if (!w)
		return REC_ERR_INVALID_ARG;
	f = next_field(w, REC_WIRE_UVARINT, &st);
	if (!f)
		return st;
	if (v > f->umax)
		return builder_fail(w, REC_ERR_INVALID_ARG,
				    "put_u64: %llu does not fit field %u (%s) of type %s; event discarded",
				    (unsigned long long)v, w->cur_field, rec_field_type_name(f->type),
				    w->cur->name);
	w->pending.len += rec_varint_put(w->pending.data + w->pending.len, v);
	w->cur_field++;
	return REC_OK;
}

rec_status rec_writer_put_u64(rec_writer *w, uint64_t v)
{
	const rec_wtype *t;

	if (w && (t = w->cur) != NULL && w->cur_field < t->nfields) {
		const rec_wfield *f = &t->fields[w->cur_field];
		if (f->wire == REC_WIRE_UVARINT && v <= f->umax) {
			w->pending.len += rec_varint_put(w->pending.data + w->pending.len, v);
			w->cur_field++;
			return REC_OK;
		}
	}
	return put_u64_slow(w, v);
}

__attribute__((noinline, cold)) static rec_status put_i64_slow(rec_writer *w, int64_t v)
{
	const rec_wfield *f;
	rec_status st;

	if (!w)
		return REC_ERR_INVALID_ARG;
	f = next_field(w, REC_WIRE_SVARINT, &st);
	if (!f)
		return st;
	if (v < f->smin || v > f->smax)
		return builder_fail(w, REC_ERR_INVALID_ARG,
				    "put_i64: %lld does not fit field %u (%s) of type %s; event discarded",
				    (long long)v, w->cur_field, rec_field_type_name(f->type),
				    w->cur->name);
	w->pending.len += rec_varint_put(w->pending.data + w->pending.len, rec_zigzag(v));
	w->cur_field++;
	return REC_OK;
}

rec_status rec_writer_put_i64(rec_writer *w, int64_t v)
{
	const rec_wtype *t;

	if (w && (t = w->cur) != NULL && w->cur_field < t->nfields) {
		const rec_wfield *f = &t->fields[w->cur_field];
		if (f->wire == REC_WIRE_SVARINT && v >= f->smin && v <= f->smax) {
			w->pending.len += rec_varint_put(w->pending.data + w->pending.len,
							 rec_zigzag(v));
			w->cur_field++;
			return REC_OK;
		}
	}
	return put_i64_slow(w, v);
}

rec_status rec_writer_put_f64(rec_writer *w, double v)
{
	const rec_wtype *t;
	const rec_wfield *f;
	uint8_t *p;

	if (!w)
		return REC_ERR_INVALID_ARG;
	t = w->cur;
	if (!t)
		return no_event(w, "put");
	if (w->cur_field >= t->nfields)
		return builder_fail(w, REC_ERR_INVALID_ARG,
				    "put: type %s has only %u fields; event discarded", t->name,
				    t->nfields);
	f = &t->fields[w->cur_field];
	p = w->pending.data + w->pending.len;
	if (f->wire == REC_WIRE_FIXED32 && f->is_f32) {
		/* Out-of-range finite values become +-inf (the cast would be UB). */
		float x = (v > FLT_MAX) ? INFINITY : (v < -FLT_MAX) ? -INFINITY : (float)v;
		uint32_t bits;
		memcpy(&bits, &x, 4);
		rec_put_le32(p, bits);
		w->pending.len += 4;
	} else if (f->wire == REC_WIRE_FIXED64 && f->type == REC_TYPE_F64) {
		uint64_t bits;
		memcpy(&bits, &v, 8);
		rec_put_le64(p, bits);
		w->pending.len += 8;
	} else {
		return builder_fail(w, REC_ERR_INVALID_ARG,
				    "put_f64: field %u of type %s is %s; event discarded", w->cur_field,
				    t->name, rec_field_type_name(f->type));
	}
	w->cur_field++;
	return REC_OK;
}

rec_status rec_writer_put_bytes(rec_writer *w, const void *ptr, size_t len)
{
	const rec_wfield *f;
	rec_status st;
	size_t body, room;

	if (!w)
		return REC_ERR_INVALID_ARG;
	f = next_field(w, REC_WIRE_LENGTH, &st);
	if (!f)
		return st;
	if (!ptr && len)
		return builder_fail(w, REC_ERR_INVALID_ARG, "put_bytes: NULL pointer with length %zu",
				    len);
	body = w->pending.len - w->cur_start - 1;
	if (len > REC_W_MAX_RECORD || body + len + REC_VARINT_MAX > REC_W_MAX_RECORD)
		return builder_fail(w, REC_ERR_LIMIT,
				    "put_bytes: %zu bytes make the event larger than %u bytes; event "
				    "discarded",
				    len, REC_W_MAX_RECORD);
	if (w->pending.len + len > REC_W_PENDING_CAP + (size_t)REC_W_MAX_RECORD)
		return builder_fail(w, REC_ERR_LIMIT, "put_bytes: too many events pending (%s)",
				    block_reason(w));
	/* Keep room for the remaining fixed fields (the begin() invariant). */
	room = REC_VARINT_MAX + len + (size_t)(w->cur->nfields - w->cur_field) * REC_VARINT_MAX;
	if (w->pending.cap - w->pending.len < room && !rec_buf_reserve(&w->pending, room))
		return builder_fail(w, REC_ERR_NOMEM, "put_bytes: out of memory");
	w->pending.len += rec_varint_put(w->pending.data + w->pending.len, len);
	if (len)
		memcpy(w->pending.data + w->pending.len, ptr, len);
	w->pending.len += len;
	w->cur_field++;
	return REC_OK;
}

rec_status rec_writer_end(rec_writer *w)
{
	const rec_wtype *t;
	size_t body;
	uint8_t *rec;

	if (!w)
		return REC_ERR_INVALID_ARG;
	t = w->cur;
	if (!t)
		return no_event(w, "end");
	if (w->cur_field != t->nfields)
		return builder_fail(w, REC_ERR_INVALID_ARG,
				    "end: type %s has %u fields, %u were put; event discarded",
				    t->name, t->nfields, w->cur_field);
	body = w->pending.len - w->cur_start - 1;
	rec = w->pending.data + w->cur_start;
	if (body < 0x80) {
		rec[0] = (uint8_t)body;
	} else {
		size_t k = rec_varint_len(body);
		if (w->pending.cap - w->pending.len < k && !rec_buf_reserve(&w->pending, k))
			return builder_fail(w, REC_ERR_NOMEM, "end: out of memory");
		rec = w->pending.data + w->cur_start;
		memmove(rec + k, rec + 1, body);
		rec_varint_put(rec, body);
		w->pending.len += k - 1;
	}
	w->cur = NULL;
	return after_append(w);
}

/* ---- append_records ------------------------------------------------------------ */

/* Read a uvarint that must lie in [*pp, end) and be shortest-encoded.  It
 * is decoded against lim (the end of the whole input, >= end) so the fast
 * word-at-a-time decoder applies inside short records; a varint that would
 * need bytes past end is then refused by the end check. */
static inline bool get_uv(const uint8_t **pp, const uint8_t *end, const uint8_t *lim, uint64_t *v)
{
	const uint8_t *start = *pp;

	if (start >= end || !rec_varint_get(pp, lim, v) || *pp > end) {
		*pp = start;
		return false;
	}
	return (size_t)(*pp - start) == rec_varint_len(*v);
}

/* Validate one record body [p, end) of type t; NULL on success, else what. */
/* With w->check_refs: is id (0 = none) defined in pool? */
static inline bool ref_ok(rec_writer *w, int pool, uint64_t id)
{
	if (!w->check_refs || id == 0 || w->ref_last[pool] == id)
		return true;
	if (!rec_w_pool_find(&w->pools[pool], id))
		return false;
	w->ref_last[pool] = id;
	return true;
}

static const char *check_body(rec_writer *w, const rec_wtype *t, const uint8_t *p,
			      const uint8_t *end, const uint8_t *lim)
{
	uint64_t v;

	if (!get_uv(&p, end, lim, &v))
		return "bad Ticks";
	if ((t->flags & REC_EVENT_HAS_DURATION) && !get_uv(&p, end, lim, &v))
		return "bad Duration";
	if (t->flags & REC_EVENT_HAS_THREAD) {
		if (!get_uv(&p, end, lim, &v))
			return "bad Thread";
		if (!ref_ok(w, REC_W_THREADS, v))
			return "its Thread is not a defined thread id";
	}
	if (t->flags & REC_EVENT_HAS_STACK) {
		if (!get_uv(&p, end, lim, &v))
			return "bad Stack";
		if (!ref_ok(w, REC_W_STACKS, v))
			return "its Stack is not a defined stack id";
	}
	for (uint32_t i = 0; i < t->nfields; i++) {
		const rec_wfield *f = &t->fields[i];
		switch (f->wire) {
		case REC_WIRE_UVARINT:
			if (!get_uv(&p, end, lim, &v))
				return "field ends early or is not a valid uvarint";
			if (v > f->umax)
				return "field value exceeds its width";
			if (f->ref == REC_W_REF_STRING && !ref_ok(w, REC_W_STRINGS, v))
				return "a string field is not a defined string id";
			if (f->ref == REC_W_REF_THREAD && !ref_ok(w, REC_W_THREADS, v))
				return "a thread field is not a defined thread id";
			if (f->ref == REC_W_REF_STACK && !ref_ok(w, REC_W_STACKS, v))
				return "a stack field is not a defined stack id";
			break;
		case REC_WIRE_SVARINT: {
			int64_t s;
			if (!get_uv(&p, end, lim, &v))
				return "field ends early or is not a valid svarint";
			s = rec_unzigzag(v);
			if (s < f->smin || s > f->smax)
				return "field value exceeds its width";
			break;
		}
		case REC_WIRE_FIXED32:
			if (end - p < 4)
				return "field ends early";
			p += 4;
			break;
		case REC_WIRE_FIXED64:
			if (end - p < 8)
				return "field ends early";
			p += 8;
			break;
		default: /* REC_WIRE_LENGTH */
			if (!get_uv(&p, end, lim, &v))
				return "field length is not a valid uvarint";
			if (v > (uint64_t)(end - p))
				return "field length runs past the record";
			p += v;
			break;
		}
	}
	return NULL; /* bytes after the last field are trailing bytes: kept */
}

rec_status rec_writer_append_records(rec_writer *w, const void *buf, size_t len)
{
	const uint8_t *p = buf, *end = p + len;
	uint64_t size, type_id;

	if (!w)
		return REC_ERR_INVALID_ARG;
	if (w->sticky)
		return w->sticky;
	if (w->cur)
		return rec_w_fail(w, REC_ERR_STATE,
				  "append_records: an event is being built (call end first)");
	if (!buf && len)
		return rec_w_fail(w, REC_ERR_INVALID_ARG, "append_records: NULL buffer");
	if (len == 0)
		return REC_OK;
	if (rec_w_take_checked(w, buf, len))
		return w->sticky; /* a chunk it closed may have failed to write */

	while (p < end) {
		const size_t off = (size_t)(p - (const uint8_t *)buf);
		const uint8_t *body;
		const rec_wtype *t;
		const char *why;

		if (!get_uv(&p, end, end, &size))
			return rec_w_fail(w, REC_ERR_INVALID_ARG,
					  "append_records: record at offset %zu: bad Size", off);
		if (size < 2 || size > (uint64_t)(end - p))
			return rec_w_fail(w, REC_ERR_INVALID_ARG,
					  "append_records: record at offset %zu: Size %llu does not "
					  "fit the %zu bytes left",
					  off, (unsigned long long)size, (size_t)(end - p));
		if (size > REC_W_MAX_RECORD)
			return rec_w_fail(w, REC_ERR_INVALID_ARG,
					  "append_records: record at offset %zu: Size %llu above %u",
					  off, (unsigned long long)size, REC_W_MAX_RECORD);
		body = p;
		p += size;
		if (!get_uv(&body, p, end, &type_id))
			return rec_w_fail(w, REC_ERR_INVALID_ARG,
					  "append_records: record at offset %zu: bad Type_Id", off);
		t = type_id <= UINT32_MAX ? rec_w_type_find(w, (uint32_t)type_id) : NULL;
		if (!t)
			return rec_w_fail(w, REC_ERR_INVALID_ARG,
					  "append_records: record at offset %zu: unknown type id %llu",
					  off, (unsigned long long)type_id);
		why = check_body(w, t, body, p, end);
		if (why)
			return rec_w_fail(w, REC_ERR_INVALID_ARG,
					  "append_records: record at offset %zu (type %s): %s", off,
					  t->name, why);
	}

	/* Straight into the open chunk when nothing waits before these. */
	if (!w->pending.len && !w->build_blocked)
		return rec_w_ingest_from(w, buf, len);
	/* Make room: a large input may first push the pending events out. */
	if (w->pending.len && w->pending.len + len > REC_W_PENDING_CAP && !w->build_blocked) {
		rec_status st = rec_w_build_chunks(w, 1, 0);
		if (st != REC_OK)
			return st;
	}
	if (w->pending.len + len > REC_W_PENDING_CAP)
		return rec_w_fail(w, REC_ERR_LIMIT,
				  "append_records: %zu bytes pending + %zu new exceed %u (%s)",
				  w->pending.len, len, REC_W_PENDING_CAP, block_reason(w));
	if (!rec_buf_append(&w->pending, buf, len))
		return rec_w_fail(w, REC_ERR_NOMEM, "append_records: out of memory");
	return after_append(w);
}
