/* SPDX-License-Identifier: MIT */
/*
 * event.c - decoding event records into rec_event/rec_value, file-order
 * iteration across chunks, and full verification of a chunk.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/read_internal.h"

#define BAD(...)                                                              \
	do {                                                                  \
		snprintf(r->detail, sizeof(r->detail), __VA_ARGS__);          \
		return REC_ERR_CORRUPT;                                       \
	} while (0)

/* The largest value of each unsigned field kind (0: not one). */
static const uint64_t umax[] = {
	[REC_K_BOOL] = 1,
	[REC_K_U8] = UINT8_MAX,
	[REC_K_U16] = UINT16_MAX,
	[REC_K_U32] = UINT32_MAX,
	[REC_K_U64] = UINT64_MAX,
	[REC_K_TIMESTAMP] = UINT64_MAX,
	[REC_K_DURATION] = UINT64_MAX,
};

uint64_t rec_rd_kind_umax(unsigned kind)
{
	return kind < sizeof umax / sizeof umax[0] ? umax[kind] : 0;
}

/* rec_varint_get() through rec_varint_next(): inline, the cursor's address
 * goes nowhere (so it stays in a register), and values of up to four bytes
 * (periods, durations, thread ids) are decoded without a call. */
static inline __attribute__((always_inline)) bool vget(const uint8_t **pp, const uint8_t *end,
							uint64_t *out)
{
	rec_varint_res q = rec_varint_next(*pp, end);
	if (!q.p)
		return false;
	*pp = q.p;
	*out = q.v;
	return true;
}

/* The record at rec whose frame (Size, Type_Id tid, Time_Delta) was read:
 * its fields from p to rend, its timestamp ticks. */
static inline __attribute__((always_inline)) rec_status
decode_body(rec_reader *r, rec_rchunk *c, const uint8_t *rec, const uint8_t *p,
	    const uint8_t *rend, uint64_t tid, uint64_t ticks, rec_event *ev, bool *known)
{
	const size_t roff = (size_t)(rec - c->ev) + c->ev_shift;
	const uint64_t size = (uint64_t)(rend - rec);
	uint64_t u;
	uint32_t ti;
	const rec_type *t = rec_rd_type(c, tid, &ti);
	if (!t) {
		*known = false;
		return REC_OK;
	}
	*known = true;
	const uint32_t tf = t->flags;
	uint64_t dur = 0, th = 0, sk = 0;
	if ((tf & REC_EVENT_HAS_DURATION) && !vget(&p, rend, &dur))
		BAD("record at byte %zu (%s): malformed Duration", roff, t->name);
	ev->thread = NULL;
	ev->stack = NULL;
	if (tf & REC_EVENT_HAS_THREAD) {
		if (!vget(&p, rend, &th))
			BAD("record at byte %zu (%s): malformed Thread", roff, t->name);
		if (th && !(ev->thread = rec_rd_thread_at(c, th)))
			BAD("record at byte %zu (%s): references missing thread %llu", roff, t->name,
			    (unsigned long long)th);
	}
	if (tf & REC_EVENT_HAS_STACK) {
		if (!vget(&p, rend, &sk))
			BAD("record at byte %zu (%s): malformed Stack", roff, t->name);
		if (sk && !(ev->stack = rec_rd_stack_at(c, sk)))
			BAD("record at byte %zu (%s): references missing stack %llu", roff, t->name,
			    (unsigned long long)sk);
	}

	const uint32_t nf = t->field_count;
	const uint8_t *kinds = c->kinds[ti];
	rec_value *vals = r->values;
	uint8_t *scr = NULL;
	uint32_t f;
	for (f = 0; f < nf; f++) {
		rec_value *v = &vals[f];
		v->type = t->fields[f].type;
		v->present = 1;
		const unsigned kd = kinds[f];
		if (kd < sizeof umax / sizeof umax[0] && umax[kd]) {
			/* the unsigned kinds, without a second dispatch */
			if (!vget(&p, rend, &u))
				goto short_rec;
			if (u > umax[kd])
				goto width;
			v->v.u = u;
			continue;
		}
		switch (kd) {
		case REC_K_UNK0:
			if (!vget(&p, rend, &u))
				goto short_rec;
			r->stats.unknown_fields++;
			v->v.u = u;
			break;
		case REC_K_I8:
		case REC_K_I16:
		case REC_K_I32:
		case REC_K_I64:
		case REC_K_UNK1: {
			if (!vget(&p, rend, &u))
				goto short_rec;
			int64_t s = rec_unzigzag(u);
			switch (kinds[f]) {
			case REC_K_I8: if (s < INT8_MIN || s > INT8_MAX) goto width; break;
			case REC_K_I16: if (s < INT16_MIN || s > INT16_MAX) goto width; break;
			case REC_K_I32: if (s < INT32_MIN || s > INT32_MAX) goto width; break;
			case REC_K_UNK1: r->stats.unknown_fields++; break;
			default: break;
			}
			v->v.i = s;
			break;
		}
		case REC_K_F32:
		case REC_K_UNK2:
			if (rend - p < 4)
				goto short_rec;
			if (kinds[f] == REC_K_F32) {
				uint32_t b = rec_le32(p);
				float fl;
				memcpy(&fl, &b, sizeof(fl));
				v->v.f = fl;
			} else {
				v->v.u = rec_le32(p);
				r->stats.unknown_fields++;
			}
			p += 4;
			break;
		case REC_K_F64:
		case REC_K_UNK3:
			if (rend - p < 8)
				goto short_rec;
			if (kinds[f] == REC_K_F64) {
				uint64_t b = rec_le64(p);
				memcpy(&v->v.f, &b, sizeof(double));
			} else {
				v->v.u = rec_le64(p);
				r->stats.unknown_fields++;
			}
			p += 8;
			break;
		case REC_K_STRING:
			if (!vget(&p, rend, &u))
				goto short_rec;
			if (u == 0) {
				v->v.s.ptr = NULL;
				v->v.s.len = 0;
			} else {
				const rec_pstring *s = rec_rd_string(c, u);
				if (!s)
					BAD("record at byte %zu (%s): field '%s' references missing string %llu",
					    roff, t->name, t->fields[f].name, (unsigned long long)u);
				v->v.s.ptr = s->ptr;
				v->v.s.len = s->len;
			}
			break;
		case REC_K_THREAD:
			if (!vget(&p, rend, &u))
				goto short_rec;
			v->v.thread = NULL;
			if (u && !(v->v.thread = rec_rd_thread(c, u)))
				BAD("record at byte %zu (%s): field '%s' references missing thread %llu",
				    roff, t->name, t->fields[f].name, (unsigned long long)u);
			break;
		case REC_K_STACK:
			if (!vget(&p, rend, &u))
				goto short_rec;
			v->v.stack = NULL;
			if (u && !(v->v.stack = rec_rd_stack(c, u)))
				BAD("record at byte %zu (%s): field '%s' references missing stack %llu",
				    roff, t->name, t->fields[f].name, (unsigned long long)u);
			break;
		case REC_K_BLOB:
		case REC_K_TEXT:
		case REC_K_UNK4:
		default:
			if (!vget(&p, rend, &u))
				goto short_rec;
			if (u > (uint64_t)(rend - p))
				goto short_rec;
			if (!scr) {
				/* Copies of this record's byte fields, NUL-terminated:
				 * they fit in size + one terminator per field. */
				r->scratch.len = 0;
				if (!rec_buf_reserve(&r->scratch, (size_t)size + nf + 1)) {
					snprintf(r->detail, sizeof(r->detail), "out of memory");
					return REC_ERR_NOMEM;
				}
				scr = r->scratch.data;
			}
			memcpy(scr, p, (size_t)u);
			scr[u] = 0;
			v->v.s.ptr = (const char *)scr;
			v->v.s.len = (size_t)u;
			scr += u + 1;
			p += u;
			if (kinds[f] >= REC_K_UNK0)
				r->stats.unknown_fields++;
			break;
		}
	}
	if (p < rend)
		r->stats.trailing_bytes += (uint64_t)(rend - p);

	ev->type = t;
	ev->chunk = &c->info;
	ev->ticks = ticks;
	ev->wall_ns = rec_rd_wall(&c->info, ticks);
	ev->duration_ticks = dur;
	/* spec "Time": k ticks above INT64_MAX count as INT64_MAX (not negative) */
	if (!dur)
		ev->duration_ns = 0;
	else if (c->h.tick_frequency == 1000000000u && dur <= INT64_MAX)
		ev->duration_ns = (int64_t)dur; /* what rec_rd_ticks_ns() gives */
	else
		ev->duration_ns = rec_rd_ticks_ns(dur > INT64_MAX ? INT64_MAX : (int64_t)dur,
						  c->h.tick_frequency);
	ev->value_count = nf;
	ev->values = vals;
	ev->offset = roff;
	return REC_OK;

short_rec:
	BAD("record at byte %zu (%s): ends before all %u declared fields are read", roff, t->name, nf);
width:
	BAD("record at byte %zu (%s): field '%s' holds a value outside the width of %s", roff,
	    t->name, t->fields[f].name, rec_field_type_name(t->fields[f].type));
}

rec_status rec_rd_decode_record(rec_reader *r, rec_rchunk *c, const uint8_t **pp,
				uint64_t *ticks, rec_event *ev, bool *known, bool fixed_ticks)
{
	const uint8_t *p = *pp, *end = c->ev_end, *rec = p;
	const size_t roff = (size_t)(p - c->ev) + c->ev_shift;
	uint64_t size, tid, u;

	if (!vget(&p, end, &size))
		BAD("record at byte %zu: malformed Size", roff);
	if (size < 2 || size > (uint64_t)(end - p))
		BAD("record at byte %zu: Size %llu crosses the end of the events section", roff,
		    (unsigned long long)size);
	const uint8_t *rend = p + size;
	if (!vget(&p, rend, &tid) || !vget(&p, rend, &u))
		BAD("record at byte %zu: malformed Type_Id or Time_Delta", roff);
	*pp = rend;
	if (!fixed_ticks)
		*ticks += (uint64_t)rec_unzigzag(u);
	return decode_body(r, c, rec, p, rend, tid, *ticks, ev, known);
}

rec_status rec_rd_decode_framed(rec_reader *r, rec_rchunk *c, const uint8_t *rec,
				const uint8_t *body, const uint8_t *rend, uint64_t tid,
				uint64_t ticks, rec_event *ev, bool *known)
{
	return decode_body(r, c, rec, body, rend, tid, ticks, ev, known);
}

/* A bad record in chunk c: report it (the rest of the chunk is skipped). */
static rec_status record_problem(rec_reader *r, rec_rchunk *c, rec_status st)
{
	const rec_rsec *s = &c->secs[c->known[REC_SECTION_EVENTS]];
	return rec_rd_chunk_problem(r, c, st, s->hoff, "section 8 (EVENTS): %s",
				    r->detail);
}

/* With a type selection: pass over the record at c->cur when its type is
 * known and not selected (its framing and timestamp read, its fields not);
 * false leaves it to rec_rd_decode_record() (a selected or unknown type, or
 * a malformed record, which that reports). */
static bool skip_record(rec_reader *r, rec_rchunk *c)
{
	const uint8_t *p = c->cur, *end = c->ev_end;
	uint64_t size, tid, d;
	if (!vget(&p, end, &size) || size < 2 || size > (uint64_t)(end - p))
		return false;
	const uint8_t *rend = p + size;
	if (!vget(&p, rend, &tid) || !vget(&p, rend, &d))
		return false;
	uint32_t ti;
	if (!rec_rd_type(c, tid, &ti) || c->want[ti])
		return false;
	c->cur = rend;
	c->cur_ticks += (uint64_t)rec_unzigzag(d);
	c->cur_count++;
	r->stats.events_skipped++;
	return true;
}

/* in_chunk: REC_END at the end of the current chunk instead of entering the
 * next one (rec_reader_next_chunk_event). */
static rec_status next_event_file_order(rec_reader *r, rec_event *ev, bool in_chunk)
{
	for (;;) {
		rec_rchunk *c = r->cur;
		if (in_chunk && (!c || c->done))
			return REC_END;
		if (!c || c->done) {
			if (c) {
				rec_rd_chunk_put(r, c);
				r->cur = NULL;
			}
			rec_status st = rec_rd_read_chunk(r, &c, true);
			if (st != REC_OK)
				return st;
			r->cur = c;
		}
		if (!c->events_loaded) {
			rec_status st = rec_rd_load_events(r, c);
			if (st != REC_OK) {
				c->done = true;
				return st;
			}
		}
		if (c->cur >= c->ev_end) {
			c->done = true;
			if (c->cur_count != c->ev_items) {
				snprintf(r->detail, sizeof(r->detail),
					 "holds %llu records but Item_Count is %u",
					 (unsigned long long)c->cur_count, c->ev_items);
				return record_problem(r, c, REC_ERR_CORRUPT);
			}
			continue;
		}
		if (c->want && skip_record(r, c))
			continue;
		bool known;
		rec_status st = rec_rd_decode_record(r, c, &c->cur, &c->cur_ticks, ev, &known, false);
		if (st != REC_OK)
			return record_problem(r, c, st);
		c->cur_count++;
		if (!known) {
			r->stats.unknown_types++;
			continue;
		}
		r->stats.events++;
		return REC_OK;
	}
}

REC_API rec_status rec_reader_next_event(rec_reader *r, rec_event *ev)
{
	if (!r || !ev)
		return REC_ERR_INVALID_ARG;
	if (r->flags & REC_READ_ORDERED)
		return rec_rd_order_next(r, ev);
	return next_event_file_order(r, ev, false);
}

REC_API rec_status rec_reader_next_chunk_event(rec_reader *r, rec_event *ev)
{
	if (!r || !ev)
		return REC_ERR_INVALID_ARG;
	if (r->flags & REC_READ_ORDERED)
		return rec_rd_problem(r, REC_ERR_STATE, r->pos, -1,
				      "rec_reader_next_chunk_event() on an ordered reader");
	return next_event_file_order(r, ev, true);
}

/* ---- verification ---------------------------------------------------------------- */
typedef struct vcount {
	uint64_t count, bytes;
} vcount;

REC_API rec_status rec_reader_verify_chunk(rec_reader *r)
{
	if (!r)
		return REC_ERR_INVALID_ARG;
	rec_rchunk *c = r->cur;
	if (!c)
		return rec_rd_problem(r, REC_ERR_STATE, r->pos, -1, "no current chunk to verify");
	rec_status st = rec_rd_load_events_reported(r, c);
	if (st != REC_OK)
		return st;
	const rec_chunk_info *ci = &c->info;
	const int64_t idx = (int64_t)ci->index;

	/* Every known section decodes (the others were decoded by loading). */
	uint64_t raw_sum = 0;
	for (uint32_t i = 0; i < c->nsec; i++)
		raw_sum += c->secs[i].raw;
	if (raw_sum != c->h.raw_size)
		return rec_rd_problem(r, REC_ERR_CORRUPT, ci->offset, idx,
				      "header Raw_Size %llu differs from the sections' sum %llu",
				      (unsigned long long)c->h.raw_size,
				      (unsigned long long)raw_sum);

	/* Decode every event with a private cursor. */
	vcount *seen = calloc((size_t)ci->type_count + 1, sizeof(vcount));
	if (!seen)
		return rec_rd_problem(r, REC_ERR_NOMEM, ci->offset, idx, "out of memory");
	vcount unknown = { 0, 0 };
	const uint8_t *p = c->ev;
	uint64_t ticks = c->h.start_ticks, n = 0, first = 0, last = 0;
	bool any = false;
	while (p < c->ev_end) {
		const uint8_t *rec = p;
		rec_event ev;
		bool known;
		uint64_t before = r->stats.unknown_fields, tb = r->stats.trailing_bytes;
		st = rec_rd_decode_record(r, c, &p, &ticks, &ev, &known, false);
		r->stats.unknown_fields = before; /* verification counts nothing twice */
		r->stats.trailing_bytes = tb;
		if (st != REC_OK) {
			free(seen);
			return rec_rd_problem(r, st, c->secs[c->known[REC_SECTION_EVENTS]].hoff, idx,
					      "section 8 (EVENTS): %s",
					      r->detail);
		}
		n++;
		uint64_t bytes = (uint64_t)(p - rec);
		uint64_t endt = ticks + (known ? ev.duration_ticks : 0);
		if (!known) {
			/* The duration of an unknown type cannot be read. */
			unknown.count++;
			unknown.bytes += bytes;
			endt = ticks;
		} else {
			uint32_t ti = (uint32_t)(ev.type - c->types);
			seen[ti].count++;
			seen[ti].bytes += bytes;
		}
		if (!any || (int64_t)(ticks - first) < 0)
			first = ticks;
		if (!any || (int64_t)(endt - last) > 0)
			last = endt;
		any = true;
	}
	const char *what = NULL;
	char buf[200];
	if (n != c->ev_items || n != c->h.event_count) {
		snprintf(buf, sizeof(buf), "%llu records, but Item_Count is %u and Event_Count %llu",
			 (unsigned long long)n, c->ev_items, (unsigned long long)c->h.event_count);
		what = buf;
	} else if (any && (first != ci->first_ticks || last != ci->last_ticks)) {
		snprintf(buf, sizeof(buf),
			 "STATS First/Last_Delta %lld/%lld, events show %lld/%lld",
			 (long long)(ci->first_ticks - ci->start_ticks),
			 (long long)(ci->last_ticks - ci->start_ticks), (long long)(first - ci->start_ticks),
			 (long long)(last - ci->start_ticks));
		what = buf;
	} else if (!any && (ci->first_ticks != ci->start_ticks || ci->last_ticks != ci->start_ticks)) {
		what = "STATS of an empty chunk have non-zero First/Last_Delta";
	} else if (ci->duration_ticks != (any ? last - ci->start_ticks : 0)) {
		snprintf(buf, sizeof(buf), "header Duration_Ticks %llu, events end %llu ticks after Start_Ticks",
			 (unsigned long long)ci->duration_ticks,
			 (unsigned long long)(any ? last - ci->start_ticks : 0));
		what = buf;
	} else {
		vcount unk_stats = { 0, 0 };
		for (uint32_t i = 0; i < ci->type_stats_count && !what; i++) {
			const rec_type_stats *ts = &ci->type_stats[i];
			if (!ts->type) {
				unk_stats.count += ts->count;
				unk_stats.bytes += ts->bytes;
				continue;
			}
			vcount *sv = &seen[ts->type - c->types];
			if (sv->count == UINT64_MAX) {
				snprintf(buf, sizeof(buf), "STATS lists type %u twice", ts->type_id);
				what = buf;
			} else if (sv->count != ts->count || sv->bytes != ts->bytes) {
				snprintf(buf, sizeof(buf),
					 "STATS say type %u (%s) has %llu events in %llu bytes, events show %llu in %llu",
					 ts->type_id, ts->type->name, (unsigned long long)ts->count,
					 (unsigned long long)ts->bytes, (unsigned long long)sv->count,
					 (unsigned long long)sv->bytes);
				what = buf;
			}
			sv->count = UINT64_MAX; /* matched */
		}
		for (uint32_t i = 0; i < ci->type_count && !what; i++) {
			if (seen[i].count != UINT64_MAX && seen[i].count != 0) {
				snprintf(buf, sizeof(buf),
					 "type %u (%s) has %llu events but no STATS entry",
					 c->types[i].id, c->types[i].name,
					 (unsigned long long)seen[i].count);
				what = buf;
			}
		}
		if (!what && (unk_stats.count != unknown.count || unk_stats.bytes != unknown.bytes)) {
			snprintf(buf, sizeof(buf),
				 "STATS of types without metadata say %llu events in %llu bytes, events show %llu in %llu",
				 (unsigned long long)unk_stats.count, (unsigned long long)unk_stats.bytes,
				 (unsigned long long)unknown.count, (unsigned long long)unknown.bytes);
			what = buf;
		}
	}
	free(seen);
	if (what)
		return rec_rd_problem(r, REC_ERR_CORRUPT, c->secs[c->known[REC_SECTION_STATS]].hoff, idx,
				      "statistics do not match the events: %s",
				      what);
	return REC_OK;
}
