/* SPDX-License-Identifier: MIT */
/*
 * order.c - REC_READ_ORDERED: events in timestamp order in bounded memory
 * (spec "Order").  Each chunk's records are scanned once for (ticks,
 * offset); consecutive chunks whose event times overlap form a group that is
 * sorted (stable: equal times keep file order) and emitted; an event is
 * fully decoded only when it is returned.  A group stops growing at the
 * window cap (order_window_overflows counts it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/read_internal.h"

#define WALL_KEY(w) ((uint64_t)(w) ^ (1ull << 63))

static bool grow(rec_oent **a, size_t *cap, size_t need)
{
	if (need <= *cap)
		return true;
	size_t n = *cap ? *cap : 1024;
	while (n < need) {
		if (n > SIZE_MAX / 2 / sizeof(rec_oent))
			return false;
		n *= 2;
	}
	rec_oent *p = realloc(*a, n * sizeof(rec_oent));
	if (!p)
		return false;
	*a = p;
	*cap = n;
	return true;
}

/* Stable sort by key: a fast path for sorted input, insertion sort of small
 * runs, then bottom-up merges (skipped where two runs are already in
 * order).  Returns the buffer that holds the result (a or aux). */
static rec_oent *sort_ents(rec_oent *a, rec_oent *aux, size_t n)
{
	size_t i;
	for (i = 1; i < n; i++)
		if (a[i].key < a[i - 1].key)
			break;
	if (i >= n)
		return a;
	const size_t run = 32;
	for (size_t lo = 0; lo < n; lo += run) {
		size_t hi = lo + run < n ? lo + run : n;
		for (size_t j = lo + 1; j < hi; j++) {
			rec_oent x = a[j];
			size_t k = j;
			while (k > lo && a[k - 1].key > x.key) {
				a[k] = a[k - 1];
				k--;
			}
			a[k] = x;
		}
	}
	rec_oent *src = a, *dst = aux;
	for (size_t w = run; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n;
			size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
			if (mid >= hi || src[mid - 1].key <= src[mid].key) {
				memcpy(dst + lo, src + lo, (hi - lo) * sizeof(rec_oent));
				continue;
			}
			size_t x = lo, y = mid, k = lo;
			while (x < mid && y < hi)
				dst[k++] = src[y].key < src[x].key ? src[y++] : src[x++];
			while (x < mid)
				dst[k++] = src[x++];
			while (y < hi)
				dst[k++] = src[y++];
		}
		rec_oent *t = src;
		src = dst;
		dst = t;
	}
	return src;
}

static rec_status chunk_problem(rec_reader *r, rec_rchunk *c, rec_status st)
{
	const rec_rsec *s = &c->secs[c->known[REC_SECTION_EVENTS]];
	return rec_rd_chunk_problem(r, c, st, s->hoff, "chunk %llu at offset %llu: section 8 (EVENTS): %s",
				    (unsigned long long)c->info.index,
				    (unsigned long long)c->info.offset, r->detail);
}

/* First pass over a chunk's records: framing, timestamps, known types. */
static rec_status scan_chunk(rec_reader *r, rec_rchunk *c)
{
	rec_order *o = &r->ord;
	o->npend = 0;
	const uint8_t *p = c->ev, *end = c->ev_end;
	uint64_t ticks = c->h.start_ticks, n = 0;
	uint64_t unknown = 0;
	bool any = false;
	while (p < end) {
		const uint8_t *rec = p;
		uint64_t size, tid, d;
		if (!rec_varint_get(&p, end, &size) || size < 2 || size > (uint64_t)(end - p)) {
			snprintf(r->detail, sizeof(r->detail),
				 "record at byte %zu: Size crosses the end of the events section",
				 (size_t)(rec - c->ev));
			return chunk_problem(r, c, REC_ERR_CORRUPT);
		}
		const uint8_t *rend = p + size;
		if (!rec_varint_get(&p, rend, &tid) || !rec_varint_get(&p, rend, &d)) {
			snprintf(r->detail, sizeof(r->detail),
				 "record at byte %zu: malformed Type_Id or Time_Delta",
				 (size_t)(rec - c->ev));
			return chunk_problem(r, c, REC_ERR_CORRUPT);
		}
		p = rend;
		n++;
		ticks += (uint64_t)rec_unzigzag(d);
		uint32_t ti;
		if (!rec_rd_type(c, tid, &ti)) {
			unknown++;
			continue;
		}
		if (o->npend == o->pend_cap && !grow(&o->pend, &o->pend_cap, o->npend + 1)) {
			snprintf(r->detail, sizeof(r->detail), "out of memory");
			return chunk_problem(r, c, REC_ERR_NOMEM);
		}
		rec_oent *e = &o->pend[o->npend++];
		e->key = ticks;
		e->ticks = ticks;
		e->off = (uint32_t)(rec - c->ev);
		e->slot = 0;
		if (!any || ticks < c->min_ticks)
			c->min_ticks = ticks;
		if (!any || ticks > c->max_ticks)
			c->max_ticks = ticks;
		any = true;
	}
	if (n != c->ev_items) {
		snprintf(r->detail, sizeof(r->detail), "holds %llu records but Item_Count is %u",
			 (unsigned long long)n, c->ev_items);
		return chunk_problem(r, c, REC_ERR_CORRUPT);
	}
	r->stats.unknown_types += unknown;
	c->scanned = true;
	c->mem_bytes = (size_t)(c->h.payload_size + c->h.raw_size) + o->npend * 2 * sizeof(rec_oent);
	return REC_OK;
}

static void release_group(rec_reader *r)
{
	rec_order *o = &r->ord;
	for (uint32_t i = 0; i < o->nheld; i++)
		rec_rd_chunk_put(r, o->held[i]);
	o->nheld = 0;
	o->nents = 0;
	o->bytes = 0;
	o->mixed = false;
	o->emitting = false;
	o->emit_pos = 0;
}

/* Add the pending entries of c (scanned) to the group. */
static rec_status add_to_group(rec_reader *r, rec_rchunk *c)
{
	rec_order *o = &r->ord;
	if (o->nheld == o->held_cap) {
		uint32_t n = o->held_cap ? o->held_cap * 2 : 16;
		rec_rchunk **h = realloc(o->held, n * sizeof(*h));
		if (!h)
			return REC_ERR_NOMEM;
		o->held = h;
		o->held_cap = n;
	}
	if (!grow(&o->ents, &o->ents_cap, o->nents + o->npend))
		return REC_ERR_NOMEM;
	uint32_t slot = o->nheld;
	o->held[o->nheld++] = c;
	int64_t cmax_wall = rec_rd_wall(&c->info, c->max_ticks);
	if (slot == 0) {
		o->run_id = c->info.run_id;
		o->max_ticks = c->max_ticks;
		o->max_wall = cmax_wall;
		o->mixed = false;
	} else {
		if (!o->mixed && c->info.run_id != o->run_id) {
			/* Runs mix: order by wall time from now on. */
			o->mixed = true;
			for (size_t i = 0; i < o->nents; i++) {
				rec_oent *e = &o->ents[i];
				e->key = WALL_KEY(rec_rd_wall(&o->held[e->slot]->info, e->ticks));
			}
		}
		if (c->max_ticks > o->max_ticks)
			o->max_ticks = c->max_ticks;
		if (cmax_wall > o->max_wall)
			o->max_wall = cmax_wall;
	}
	rec_oent *dst = o->ents + o->nents;
	for (size_t i = 0; i < o->npend; i++) {
		dst[i] = o->pend[i];
		dst[i].slot = slot;
		if (o->mixed)
			dst[i].key = WALL_KEY(rec_rd_wall(&c->info, dst[i].ticks));
	}
	o->nents += o->npend;
	o->npend = 0;
	o->bytes += c->mem_bytes;
	return REC_OK;
}

static bool overlaps(const rec_order *o, const rec_rchunk *c)
{
	if (!o->mixed && c->info.run_id == o->run_id)
		return c->min_ticks < o->max_ticks;
	return rec_rd_wall(&c->info, c->min_ticks) < o->max_wall;
}

static rec_status start_emit(rec_reader *r)
{
	rec_order *o = &r->ord;
	if (!grow(&o->aux, &o->aux_cap, o->nents))
		return rec_rd_problem(r, REC_ERR_NOMEM, r->pos, -1, "out of memory sorting events");
	o->sorted = sort_ents(o->ents, o->aux, o->nents);
	o->emitting = true;
	o->emit_pos = 0;
	return REC_OK;
}

rec_status rec_rd_order_next(rec_reader *r, rec_event *ev)
{
	rec_order *o = &r->ord;
	rec_status st;
	if (!o->started) {
		o->started = true;
		/* A chunk entered with rec_reader_next_chunk() comes first. */
		if (r->cur && !r->cur->done && !r->cur->damaged)
			o->pending = r->cur;
		else
			rec_rd_chunk_put(r, r->cur);
		r->cur = NULL;
	}
	for (;;) {
		if (o->emitting) {
			while (o->emit_pos < o->nents) {
				const rec_oent *e = &o->sorted[o->emit_pos++];
				rec_rchunk *c = o->held[e->slot];
				if (c->dead)
					continue;
				const uint8_t *p = c->ev + e->off;
				uint64_t t = e->ticks;
				bool known;
				st = rec_rd_decode_record(r, c, &p, &t, ev, &known, true);
				if (st != REC_OK)
					return chunk_problem(r, c, st);
				if (!known)
					continue;
				r->stats.events++;
				return REC_OK;
			}
			release_group(r);
		}
		if (o->input_end && !o->pending) {
			if (o->nheld) {
				st = start_emit(r);
				if (st != REC_OK)
					return st;
				continue;
			}
			return REC_END;
		}
		rec_rchunk *c = o->pending;
		o->pending = NULL;
		if (!c) {
			st = rec_rd_read_chunk(r, &c, true);
			if (st == REC_END) {
				o->input_end = true;
				continue;
			}
			if (st != REC_OK)
				return st;
		}
		if (!c->scanned) {
			st = rec_rd_load_events(r, c);
			if (st == REC_OK)
				st = scan_chunk(r, c);
			if (st != REC_OK) {
				rec_rd_chunk_put(r, c);
				return st;
			}
		}
		if (o->npend == 0) { /* no events to order */
			rec_rd_chunk_put(r, c);
			continue;
		}
		if (o->nheld == 0 ||
		    (overlaps(o, c) && o->bytes + c->mem_bytes <= r->max_window)) {
			if (add_to_group(r, c) != REC_OK) {
				rec_rd_chunk_put(r, c);
				o->npend = 0;
				return rec_rd_problem(r, REC_ERR_NOMEM, r->pos, -1,
						      "out of memory ordering events");
			}
			continue;
		}
		if (overlaps(o, c))
			r->stats.order_window_overflows++;
		o->pending = c;
		st = start_emit(r);
		if (st != REC_OK)
			return st;
	}
}

void rec_rd_order_free(rec_reader *r)
{
	rec_order *o = &r->ord;
	release_group(r);
	if (o->pending)
		rec_rd_chunk_put(r, o->pending);
	o->pending = NULL;
	free(o->held);
	free(o->ents);
	free(o->aux);
	free(o->pend);
	memset(o, 0, sizeof(*o));
}
