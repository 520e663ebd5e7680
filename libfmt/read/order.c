/* SPDX-License-Identifier: MIT */
/*
 * order.c - REC_READ_ORDERED: events in timestamp order in bounded memory
 * (spec "Order").  Each chunk's records are scanned once for (ticks,
 * offset); consecutive chunks whose event times overlap form a group that is
 * sorted (stable: equal times keep file order) and emitted; an event is
 * fully decoded only when it is returned.  A chunk whose records are in
 * time order already (one writer's chunk) needs no sort: alone in its group
 * and with most of its records selected, it is emitted by walking its
 * records once more; else its entries are made in file order (by the
 * prefetch worker's sparse join where it had the selection: prefetch.c, and
 * then no pass here reads the records passed over).  A group
 * stops growing at the window cap (order_window_overflows counts it).
 *
 * A chunk may hold an event that started before earlier chunks ended (a
 * duration longer than the chunks written while it lasted, an emit
 * descheduled across chunks).  On a seekable input the reader first reads
 * every chunk's front (header, METADATA, STATS: no events are decompressed)
 * and keeps, per chunk, the earliest start in it or any later chunk; a group
 * is released only when no later chunk starts before its latest event.  On
 * a pipe, or past the window cap, such an event is returned late and counted
 * (order_late): the order is approximate there, never silently.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/read_internal.h"

#define WALL_KEY(w) ((uint64_t)(w) ^ (1ull << 63))

/* Room for n entries in b (contents may be discarded). */
static bool ents_reserve(rec_bigbuf *b, size_t n)
{
	if (n > SIZE_MAX / sizeof(rec_oent))
		return false;
	return rec_bigbuf_reserve(b, n * sizeof(rec_oent));
}

/* Stable sort by ticks: a fast path for sorted input, insertion sort of small
 * runs, then bottom-up merges (skipped where two runs are already in
 * order).  Returns the buffer that holds the result (a or aux). */
static rec_oent *sort_ents(rec_oent *a, rec_oent *aux, size_t n)
{
	size_t i;
	for (i = 1; i < n; i++)
		if (a[i].ticks < a[i - 1].ticks)
			break;
	if (i >= n)
		return a;
	const size_t run = 32;
	for (size_t lo = 0; lo < n; lo += run) {
		size_t hi = lo + run < n ? lo + run : n;
		for (size_t j = lo + 1; j < hi; j++) {
			rec_oent x = a[j];
			size_t k = j;
			while (k > lo && a[k - 1].ticks > x.ticks) {
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
			if (mid >= hi || src[mid - 1].ticks <= src[mid].ticks) {
				memcpy(dst + lo, src + lo, (hi - lo) * sizeof(rec_oent));
				continue;
			}
			size_t x = lo, y = mid, k = lo;
			while (x < mid && y < hi)
				dst[k++] = src[y].ticks < src[x].ticks ? src[y++] : src[x++];
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
	return rec_rd_chunk_problem(r, c, st, s->hoff, "section 8 (EVENTS): %s",
				    r->detail);
}

/* How many of c's records the scan enters: all (Item_Count), or with a
 * type selection what STATS count of the selected types, so that a view
 * of the rarer types does not map room for every record.  (STATS that
 * count too few only cost the growth below.) */
static size_t expected_entries(const rec_rchunk *c)
{
	if (!c->want && c->dig_ti == UINT32_MAX)
		return c->ev_items;
	uint64_t n = 0;
	for (uint32_t i = 0; i < c->info.type_stats_count; i++) {
		const rec_type_stats *ts = &c->info.type_stats[i];
		if (ts->type && rec_rd_wanted(c, (uint32_t)(ts->type - c->types)) &&
		    (uint32_t)(ts->type - c->types) != c->dig_ti)
			n += ts->count;
	}
	return n < c->ev_items ? (size_t)n : c->ev_items;
}

#if defined(__GNUC__)
#define ORDER_INLINE inline __attribute__((always_inline))
#else
#define ORDER_INLINE inline
#endif

/* What the scan does with a record of type index ti. */
static ORDER_INLINE unsigned type_action(const rec_rchunk *c, uint32_t ti)
{
	return ti == c->dig_ti ? 3 : rec_rd_wanted(c, ti) ? 2 : 1;
}

/* What the scan does with a record of Type_Id tid: 0 an unknown type, 1
 * passed over (not selected), 2 entered, 3 digested (c->act: the ids the
 * dense lookup covers, made by scan_chunk).  A later walk enters only 2. */
static ORDER_INLINE unsigned record_action(const rec_rchunk *c, uint64_t tid)
{
	if (tid < c->nact && c->act)
		return c->act[tid];
	uint32_t ti;
	return !rec_rd_type(c, tid, &ti) ? 0 : type_action(c, ti);
}

/* The digest of the record of c whose body is [body, rend) into r->digs
 * (room made by the scan): false when it does not hold (the record is then
 * entered, so that its decoding reports it). */
static bool digest_record(rec_reader *r, rec_rchunk *c, const uint8_t *body, const uint8_t *rend,
			  uint64_t ticks)
{
	rec_evs_dig *d = (rec_evs_dig *)r->digs.data + c->ndigs;
	if (!rec_evs_digest_body(body, rend, c->types[c->dig_ti].flags, &c->dig, d))
		return false;
	d->ticks = ticks;
	c->ndigs++;
	return true;
}

/* The entries (ticks, offset) of c's entered records in file order, into
 * c->oents (room for c->noents was made by the scan; the frames were
 * checked by it). */
static void fill_entries(rec_rchunk *c)
{
	const uint8_t *p = c->ev, *end = c->ev_end;
	uint64_t ticks = c->h.start_ticks;
	rec_oent *ents = c->oents.data;
	size_t k = 0;
	while (p < end && k < c->noents) {
		const uint8_t *rec = p;
		uint64_t tid, d;
		REC_RD_PREFETCH(p);
		if (rec_rd_frame_next(&p, end, &tid, &d) != 0)
			break;
		ticks += (uint64_t)rec_unzigzag(d);
		if (record_action(c, tid) != 2)
			continue;
		ents[k].ticks = ticks;
		ents[k].off = (uint32_t)(rec - c->ev);
		k++;
	}
	c->ents_built = true;
}

/* The end of a scan: c's room for the entries' sort, its sort when its
 * entries are out of order, its copied payload dropped, its counts. */
static rec_status scan_done(rec_reader *r, rec_rchunk *c, size_t k, bool sorted, uint64_t skipped,
			    uint64_t unknown);

/* The scan of a chunk joined sparse (prefetch.c): its entries and their
 * bounds came with the section; every record framed, and every one not
 * entered is of a type passed over. */
static rec_status scan_sparse(rec_reader *r, rec_rchunk *c)
{
	if (c->sp_k) {
		c->min_ticks = c->sp_lo;
		c->max_ticks = c->sp_hi;
	}
	r->sparse_used++;
	c->count_mismatch = false; /* the join took exactly Item_Count records */
	c->seq = false;
	c->ents_built = true;
	return scan_done(r, c, c->sp_k, c->sp_sorted, (uint64_t)c->ev_items - c->sp_k - c->ndigs,
			 0);
}

/* A selection of most of c's records (STATS say) may not need entries:
 * they are made as the scan goes only for the others (and always with
 * digests: a record whose digest fails is entered instead). */
static bool scan_dense(const rec_rchunk *c)
{
	return expected_entries(c) * 2 >= c->ev_items && c->dig_ti == UINT32_MAX;
}

void rec_rd_order_plan(rec_reader *r, rec_rchunk *c)
{
	/* What to do with a record by its Type_Id, for the ids the dense
	 * lookup covers (record_action()). */
	uint32_t nact = c->dense_n;
	c->nact = 0;
	c->act = rec_arena_alloc(&c->arena, nact ? nact : 1);
	if (c->act) {
		for (uint32_t id = 0; id < nact; id++) {
			uint32_t ti;
			c->act[id] = !rec_rd_type(c, id, &ti) ? 0 : type_action(c, ti);
		}
		c->nact = nact;
	}
	bool dense = scan_dense(c);
	/* The worker may join the coming chunks sparse for a selection of the
	 * rarer types (their scans then have only their entries to take), or
	 * pass over their records for scans that make no entries. */
	rec_rd_prefetch_select(r, dense ? NULL : c);
	r->prescan_wanted = dense;
	c->planned = true;
}

/* First pass over a chunk's records (framing, timestamps, known types).
 * Records of types left out by a type selection are passed over here: they
 * never enter the sort or the merge.  When the entered records are in time
 * order already (a chunk of one writer, the common case) and make most of
 * them, nothing more is made: a group of that chunk alone is returned by
 * walking its records again (c->seq); else their entries are made (and
 * sorted when out of order). */
static rec_status scan_chunk(rec_reader *r, rec_rchunk *c)
{
	const uint8_t *p = c->ev, *end = c->ev_end;
	uint64_t ticks = c->h.start_ticks, n = 0;
	uint64_t unknown = 0, skipped = 0;
	size_t k = 0;
	bool any = false, sorted = true;
	size_t expect = expected_entries(c);
	if (c->ev_sparse)
		return scan_sparse(r, c);
	c->ndigs = 0;
	const bool digest = c->dig_ti != UINT32_MAX;
	if (!ents_reserve(&c->oents, expect) ||
	    (digest && !rec_bigbuf_reserve(&r->digs, ((size_t)c->ev_items + 1) * sizeof(rec_evs_dig)))) {
		snprintf(r->detail, sizeof(r->detail), "out of memory");
		return chunk_problem(r, c, REC_ERR_NOMEM);
	}
	bool dense = scan_dense(c);
	rec_oent *ents = dense ? NULL : c->oents.data;
	size_t cap = c->oents.cap / sizeof(rec_oent);
	if (!c->planned)
		rec_rd_order_plan(r, c);
	uint64_t lo = 0, hi = 0;
	/* The prefetch worker passed over these records already (every frame
	 * held, the times never go down): the counts and bounds of the entered
	 * records from its counts per Type_Id, no pass here.  It does that for
	 * the chunks to come while the scans take it (no entries to make). */
	if (!ents && c->ps_valid && c->ps) {
		const rec_prescan *ps = c->ps;
		for (uint32_t id = 0; id < REC_PRESCAN_IDS; id++) {
			uint64_t cnt = ps->count[id];
			if (!cnt)
				continue;
			unsigned what = record_action(c, id);
			if (what != 2) {
				if (what == 0)
					unknown += cnt;
				else
					skipped += cnt;
				continue;
			}
			k += (size_t)cnt;
			if (!any || ps->first[id] < lo)
				lo = ps->first[id];
			if (!any || ps->last[id] > hi)
				hi = ps->last[id];
			any = true;
		}
		n = ps->n;
		p = end;
		r->prescans_used++;
	}
	while (p < end) {
		const uint8_t *rec = p, *body;
		uint64_t tid, d;
		REC_RD_PREFETCH(p);
		int bad = rec_rd_frame_body(&p, end, &tid, &d, &body);
		if (bad) {
			snprintf(r->detail, sizeof(r->detail),
				 bad == 1 ? "record at byte %zu: Size crosses the end of the events section"
					  : "record at byte %zu: malformed Type_Id or Time_Delta",
				 (size_t)(rec - c->ev));
			return chunk_problem(r, c, REC_ERR_CORRUPT);
		}
		n++;
		ticks += (uint64_t)rec_unzigzag(d);
		unsigned what = record_action(c, tid);
		if (what == 3 && c->ndigs <= c->ev_items && digest_record(r, c, body, p, ticks))
			continue;
		if (what == 3)
			what = 2;
		if (what != 2) {
			if (what == 0)
				unknown++;
			else
				skipped++;
			continue;
		}
		if (ents) {
			if (k == cap) {
				rec_bigbuf nb = { NULL, 0 };
				if (!ents_reserve(&nb, cap * 2 + 16)) {
					snprintf(r->detail, sizeof(r->detail), "out of memory");
					return chunk_problem(r, c, REC_ERR_NOMEM);
				}
				memcpy(nb.data, ents, k * sizeof(rec_oent));
				rec_bigbuf_free(&c->oents);
				c->oents = nb;
				ents = c->oents.data;
				cap = c->oents.cap / sizeof(rec_oent);
			}
			ents[k].ticks = ticks;
			ents[k].off = (uint32_t)(rec - c->ev);
		}
		k++;
		if (!any || ticks < lo) {
			if (any)
				sorted = false;
			lo = ticks;
		}
		if (!any || ticks > hi)
			hi = ticks;
		else if (ticks < hi)
			sorted = false;
		any = true;
	}
	if (any) {
		c->min_ticks = lo;
		c->max_ticks = hi;
	}
	/* Room for every entry, grown as the scan that stored them grew it
	 * (more records than Item_Count: they are still ordered and printed,
	 * and the mismatch reported, as in file order). */
	while (k > cap) {
		rec_bigbuf nb = { NULL, 0 };
		if (!ents_reserve(&nb, cap * 2 + 16)) {
			snprintf(r->detail, sizeof(r->detail), "out of memory");
			return chunk_problem(r, c, REC_ERR_NOMEM);
		}
		rec_bigbuf_free(&c->oents);
		c->oents = nb;
		cap = c->oents.cap / sizeof(rec_oent);
	}
	c->count_mismatch = n != c->ev_items;
	if (c->count_mismatch)
		snprintf(r->detail, sizeof(r->detail), "holds %llu records but Item_Count is %u",
			 (unsigned long long)n, c->ev_items);
	/* Walking again pays where most records are entered; a selection of
	 * the rarer types has its few entries made by the scan. */
	c->seq = sorted && !ents;
	c->ents_built = ents != NULL;
	return scan_done(r, c, k, sorted, skipped, unknown);
}

static rec_status scan_done(rec_reader *r, rec_rchunk *c, size_t k, bool sorted, uint64_t skipped,
			    uint64_t unknown)
{
	rec_order *o = &r->ord;
	c->noents = k;
	if (!ents_reserve(&o->aux, k)) {
		snprintf(r->detail, sizeof(r->detail), "out of memory");
		return chunk_problem(r, c, REC_ERR_NOMEM);
	}
	if (!c->ents_built && !sorted)
		fill_entries(c);
	if (!sorted) {
		if (sort_ents(c->oents.data, o->aux.data, k) == o->aux.data) {
			/* The result is in the sort buffer: trade buffers. */
			rec_bigbuf t = c->oents;
			c->oents = o->aux;
			o->aux = t;
		}
	}
	/* Held chunks need only their decoded parts: drop a copied payload
	 * when the events live in their own decompressed buffer. */
	int si = c->known[REC_SECTION_EVENTS];
	size_t payload = (size_t)c->h.payload_size;
	if ((c->secs[si].flags & REC_SECTION_COMPRESSED) && c->payload &&
	    c->payload == c->payload_buf.data) {
		/* kept as the reader's one spare (the next chunk's payload is
		 * read into pages already there: a fresh one is a fault every
		 * 4 KiB, at once a copy of the file's bytes) */
		if (!r->spare_payload.data) {
			r->spare_payload = c->payload_buf;
			c->payload_buf = (rec_buf){ 0 };
		} else {
			rec_buf_free(&c->payload_buf);
		}
		c->payload = NULL;
		payload = 0;
	}
	r->stats.unknown_types += unknown;
	r->stats.events_skipped += skipped;
	c->ocur = 0;
	c->scanned = true;
	c->mem_bytes = payload + (size_t)c->h.raw_size + c->oents.cap;
	if (c->secs[si].flags & REC_SECTION_COMPRESSED) /* the mapping, rounded up */
		c->mem_bytes += c->raw[REC_SECTION_EVENTS].cap - c->secs[si].raw;
	return REC_OK;
}

static void release_group(rec_reader *r)
{
	rec_order *o = &r->ord;
	for (uint32_t i = 0; i < o->nheld; i++)
		rec_rd_chunk_put(r, o->held[i]);
	o->nheld = 0;
	o->nheap = 0;
	o->bytes = 0;
	o->mixed = false;
	o->emitting = false;
}

/* Add the scanned chunk c to the group. */
static rec_status add_to_group(rec_reader *r, rec_rchunk *c)
{
	rec_order *o = &r->ord;
	if (o->nheld == o->held_cap) {
		uint32_t n = o->held_cap ? o->held_cap * 2 : 16;
		rec_rchunk **h = realloc(o->held, n * sizeof(rec_rchunk *));
		uint32_t *hp = realloc(o->heap, n * sizeof(*hp));
		if (h)
			o->held = h;
		if (hp)
			o->heap = hp;
		if (!h || !hp)
			return REC_ERR_NOMEM;
		o->held_cap = n;
	}
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
			/* Runs mix: merge by wall time from now on.  Wall time
			 * grows with ticks, so each chunk stays sorted. */
			o->mixed = true;
		}
		if (c->max_ticks > o->max_ticks)
			o->max_ticks = c->max_ticks;
		if (cmax_wall > o->max_wall)
			o->max_wall = cmax_wall;
	}
	o->bytes += c->mem_bytes;
	return REC_OK;
}

static bool overlaps(const rec_order *o, const rec_rchunk *c)
{
	if (!o->mixed && c->info.run_id == o->run_id)
		return c->min_ticks < o->max_ticks;
	return rec_rd_wall(&c->info, c->min_ticks) < o->max_wall;
}

/* ---- look-ahead ------------------------------------------------------------------------- */
static void ahead_free(rec_order *o)
{
	free(o->ahead_off);
	free(o->ahead_min);
	o->ahead_off = NULL;
	o->ahead_min = NULL;
	o->nahead = 0;
}

/* Read the fronts of the chunks from r->pos on, remember where each starts,
 * and put the reader back as it was (position, statistics, problem): the
 * chunks are read again, and any damage reported, by the ordered pass.  No
 * look-ahead (the order falls back to the release rule alone) on a pipe,
 * when memory runs out, or at a 1.0 chunk (no Front_Checksum: its front
 * cannot be checked without reading its whole payload). */
static void ahead_build(rec_reader *r)
{
	rec_order *o = &r->ord;
	if (!r->src.seekable)
		return;
	rec_reader_stats stats = r->stats;
	rec_problem problem = r->problem;
	char msg[sizeof r->msg], detail[sizeof r->detail];
	memcpy(msg, r->msg, sizeof msg);
	memcpy(detail, r->detail, sizeof detail);
	uint64_t pos = r->pos, next_index = r->next_index, failed_size = r->failed_size;
	bool at_end = r->at_end;
	size_t cap = 0;
	bool ok = true;
	for (;;) {
		uint64_t before = r->pos;
		rec_rchunk *c;
		rec_status st = rec_rd_read_chunk(r, &c, false);
		if (st == REC_END)
			break;
		if (st != REC_OK) {
			if (st == REC_ERR_NOMEM || st == REC_ERR_IO || r->pos <= before) {
				ok = false; /* no progress: leave it to the ordered pass */
				break;
			}
			continue; /* a damaged chunk: its events are not read either */
		}
		bool front_crc = rec_chunk_has_front_crc(&c->h);
		if (front_crc && c->info.event_count) {
			if (o->nahead == cap) {
				size_t n = cap ? cap * 2 : 64;
				uint64_t *off = realloc(o->ahead_off, n * sizeof(*off));
				if (off)
					o->ahead_off = off;
				int64_t *mn = off ? realloc(o->ahead_min, n * sizeof(*mn)) : NULL;
				if (mn)
					o->ahead_min = mn;
				if (!off || !mn) {
					rec_rd_chunk_put(r, c);
					ok = false;
					break;
				}
				cap = n;
			}
			o->ahead_off[o->nahead] = c->info.offset;
			o->ahead_min[o->nahead] = rec_rd_wall(&c->info, c->info.first_ticks);
			o->nahead++;
		}
		rec_rd_chunk_put(r, c);
		if (!front_crc) {
			ok = false;
			break;
		}
	}
	r->stats = stats;
	r->problem = problem;
	memcpy(r->msg, msg, sizeof msg);
	memcpy(r->detail, detail, sizeof detail);
	r->pos = pos;
	r->next_index = next_index;
	r->failed_size = failed_size;
	r->at_end = at_end;
	if (!ok) {
		ahead_free(o);
		return;
	}
	for (size_t i = o->nahead; i-- > 1;)
		if (o->ahead_min[i] < o->ahead_min[i - 1])
			o->ahead_min[i - 1] = o->ahead_min[i];
}

/* Does a chunk after c start before the group's latest event? */
static bool later_starts_before(const rec_order *o, const rec_rchunk *c)
{
	size_t lo = 0, hi = o->nahead; /* first entry past c's offset */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->ahead_off[mid] <= c->info.offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < o->nahead && o->ahead_min[lo] < o->max_wall;
}

/* Heap order: the smaller next key first; equal keys in file order. */
static inline bool heap_less(const rec_order *o, uint32_t a, uint32_t b)
{
	const rec_rchunk *ca = o->held[a], *cb = o->held[b];
	uint64_t ka = ((const rec_oent *)ca->oents.data)[ca->ocur].ticks;
	uint64_t kb = ((const rec_oent *)cb->oents.data)[cb->ocur].ticks;
	if (o->mixed) {
		ka = WALL_KEY(rec_rd_wall(&ca->info, ka));
		kb = WALL_KEY(rec_rd_wall(&cb->info, kb));
	}
	return ka < kb || (ka == kb && a < b);
}

static void heap_down(rec_order *o, uint32_t i)
{
	uint32_t n = o->nheap;
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		if (l < n && heap_less(o, o->heap[l], o->heap[m]))
			m = l;
		if (l + 1 < n && heap_less(o, o->heap[l + 1], o->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		uint32_t t = o->heap[i];
		o->heap[i] = o->heap[m];
		o->heap[m] = t;
		i = m;
	}
}

static void start_emit(rec_reader *r)
{
	rec_order *o = &r->ord;
	o->nheap = 0;
	/* A chunk in time order alone: its records walked once more, in place. */
	o->seq = o->nheld == 1 && o->held[0]->seq;
	if (o->seq) {
		rec_rchunk *c = o->held[0];
		c->walk = c->ev;
		c->walk_ticks = c->h.start_ticks;
		c->ocur = 0;
		o->emitting = true;
		return;
	}
	for (uint32_t i = 0; i < o->nheld; i++) {
		if (!o->held[i]->ents_built)
			fill_entries(o->held[i]);
		o->held[i]->ocur = 0;
		if (o->held[i]->noents)
			o->heap[o->nheap++] = i;
	}
	for (uint32_t i = o->nheap / 2; i-- > 0;)
		heap_down(o, i);
	o->emitting = true;
}

/* After decoding a record of c (st) at ticks into ev: count it returned,
 * *known false for a record of a type not selected (nothing returned); the
 * chunk's problem if it did not decode.  A start before one already
 * returned is counted late: its chunk came after the group that held the
 * later one was released. */
static ORDER_INLINE rec_status took_record(rec_reader *r, rec_rchunk *c, rec_status st,
					   uint64_t ticks, const bool *known)
{
	rec_order *o = &r->ord;
	if (st != REC_OK)
		return chunk_problem(r, c, st);
	if (!*known)
		return REC_OK;
	int64_t w = rec_rd_wall(&c->info, ticks);
	if (o->returned && w < o->last_wall)
		r->stats.order_late++;
	else
		o->last_wall = w;
	o->returned = true;
	r->stats.events++;
	return REC_OK;
}

/* Decode the record at rec (its frame's ticks) of c into ev: took_record(). */
static ORDER_INLINE rec_status take_record(rec_reader *r, rec_rchunk *c, const uint8_t *rec,
					  uint64_t ticks, rec_event *ev, bool *known)
{
	const uint8_t *p = rec;
	uint64_t t = ticks;
	rec_status st = rec_rd_decode_record(r, c, &p, &t, ev, known, true);
	return took_record(r, c, st, ticks, known);
}

/* take_record() of a record whose frame the walk read (Type_Id tid, its
 * fields from body to rend). */
static ORDER_INLINE rec_status take_framed(rec_reader *r, rec_rchunk *c, const uint8_t *rec,
					  const uint8_t *body, const uint8_t *rend, uint64_t tid,
					  uint64_t ticks, rec_event *ev, bool *known)
{
	rec_status st = rec_rd_decode_framed(r, c, rec, body, rend, tid, ticks, ev, known);
	return took_record(r, c, st, ticks, known);
}

/* c's digests to the consumer (rec_reader_digest_type()), their threads
 * and stacks found in its pools; a digest whose thread or stack is not there
 * is a problem of the chunk, reported after the others are given. */
static rec_status give_digests(rec_reader *r, rec_rchunk *c)
{
	enum { BATCH = 256 };
	rec_digest batch[BATCH];
	const rec_type *t = &c->types[c->dig_ti];
	const rec_evs_dig *d = r->digs.data;
	size_t bad = 0;
	const char *bad_what = NULL;
	uint32_t bad_id = 0;
	/* what each digest reads of the chunk, in locals: the consumer's
	 * call between two batches could change nothing of it, but the
	 * compiler cannot know */
	const bool dense = c->threads_dense && c->stacks_dense;
	const rec_thread *const threads = c->threads;
	const rec_stack *const stacks = c->stacks;
	const uint64_t nthreads = c->nthreads, nstacks = c->nstacks;
	const uint64_t start = c->info.start_ticks;
	const int64_t wall0 = c->info.start_wall_ns;
	const bool ns_ticks = c->info.tick_frequency == 1000000000u;
	for (size_t i = 0; i < c->ndigs;) {
		size_t nb = 0;
		for (; i < c->ndigs && nb < BATCH; i++) {
			const rec_evs_dig *x = &d[i];
			const rec_thread *th = NULL;
			const rec_stack *sk = NULL;
			if (dense && x->thread - 1u < nthreads && x->stack - 1u < nstacks) {
				th = &threads[x->thread - 1];
				sk = &stacks[x->stack - 1];
			} else {
				/* (also a digest without a thread or a stack: id 0) */
				if ((x->thread && !(th = rec_rd_thread_at(c, x->thread))) ||
				    (x->stack && !(sk = rec_rd_stack_at(c, x->stack)))) {
					if (!bad++) {
						bool thread = x->thread && !th;
						bad_what = thread ? "thread" : "stack";
						bad_id = thread ? x->thread : x->stack;
					}
					continue;
				}
			}
			rec_digest *b = &batch[nb++];
			b->ticks = x->ticks;
			b->wall_ns = ns_ticks ? (int64_t)((uint64_t)wall0 + (x->ticks - start))
					      : rec_rd_wall(&c->info, x->ticks);
			b->thread = th;
			b->stack = sk;
			b->field[0] = x->f0;
			b->field[1] = x->f1;
		}
		if (nb)
			r->dig_fn(r->dig_ctx, &c->info, t, batch, nb);
	}
	r->stats.events_digested += c->ndigs - bad;
	if (!bad)
		return REC_OK;
	const rec_rsec *s = &c->secs[c->known[REC_SECTION_EVENTS]];
	r->stats.chunks_damaged++;
	c->damaged = true;
	return rec_rd_problem(r, REC_ERR_CORRUPT, s->hoff, (int64_t)c->info.index,
			      "section 8 (EVENTS): %zu records of %s reference a thread or stack not "
			      "in the chunk's pools (the first: %s %" PRIu32 "); left out",
			      bad, t->name, bad_what, bad_id);
}

rec_status rec_rd_order_next(rec_reader *r, rec_event *ev)
{
	rec_order *o = &r->ord;
	rec_status st;
	if (!o->started) {
		o->started = true;
		ahead_build(r);
		/* A chunk entered with rec_reader_next_chunk() comes first. */
		if (r->cur && !r->cur->done && !r->cur->damaged)
			o->pending = r->cur;
		else
			rec_rd_chunk_put(r, r->cur);
		r->cur = NULL;
	}
	for (;;) {
		if (o->emitting && o->seq) {
			rec_rchunk *c = o->held[0];
			while (!c->dead && c->ocur < c->noents && c->walk < c->ev_end) {
				const uint8_t *rec = c->walk, *body;
				uint64_t tid, d;
				REC_RD_PREFETCH(rec);
				if (rec_rd_frame_body(&c->walk, c->ev_end, &tid, &d, &body) != 0)
					break; /* not after the scan checked every frame */
				c->walk_ticks += (uint64_t)rec_unzigzag(d);
				if (record_action(c, tid) != 2)
					continue;
				c->ocur++;
				bool known;
				st = take_framed(r, c, rec, body, c->walk, tid, c->walk_ticks, ev, &known);
				if (st != REC_OK)
					return st;
				if (known)
					return REC_OK;
			}
			release_group(r);
		} else if (o->emitting) {
			while (o->nheap) {
				uint32_t slot = o->heap[0];
				rec_rchunk *c = o->held[slot];
				if (c->dead) {
					o->heap[0] = o->heap[--o->nheap];
					heap_down(o, 0);
					continue;
				}
				const rec_oent *e = (const rec_oent *)c->oents.data + c->ocur++;
				if (c->ocur == c->noents)
					o->heap[0] = o->heap[--o->nheap];
				if (o->nheap > 1)
					heap_down(o, 0);
				bool known;
				if (c->ev_sparse)
					c->ev_shift = (size_t)(e->at - e->off);
				st = take_record(r, c, c->ev + e->off, e->ticks, ev, &known);
				if (st != REC_OK)
					return st;
				if (known)
					return REC_OK;
			}
			release_group(r);
		}
		if (o->input_end && !o->pending) {
			if (o->nheld) {
				start_emit(r);
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
			r->sparse_ok = true;
			st = rec_rd_load_events(r, c);
			r->sparse_ok = false;
			if (st == REC_OK)
				st = scan_chunk(r, c);
			if (st != REC_OK) {
				rec_rd_chunk_put(r, c);
				return st;
			}
			if (c->count_mismatch) {
				/* Reported once, now; its records that decode are still
				 * ordered and returned (spec, "Damage"), as in file order. */
				const rec_rsec *s = &c->secs[c->known[REC_SECTION_EVENTS]];
				char detail[sizeof(r->detail)];
				memcpy(detail, r->detail, sizeof detail);
				rec_rd_problem(r, REC_ERR_CORRUPT, s->hoff, (int64_t)c->info.index,
					       "section 8 (EVENTS): %s",
					       detail);
				r->stats.chunks_damaged++;
				c->damaged = true;
				o->pending = c;
				return REC_ERR_CORRUPT;
			}
		}
		if (c->ndigs && !c->digs_given) {
			c->digs_given = true;
			if (give_digests(r, c) != REC_OK) {
				o->pending = c;
				return REC_ERR_CORRUPT;
			}
		}
		if (c->noents == 0) { /* no events to order */
			rec_rd_chunk_put(r, c);
			continue;
		}
		/* Held: c overlaps the group, or a chunk after it starts
		 * before the group's latest event (look-ahead). */
		bool hold = o->nheld && (overlaps(o, c) || later_starts_before(o, c));
		if (o->nheld == 0 || (hold && o->bytes + c->mem_bytes <= r->max_window)) {
			if (add_to_group(r, c) != REC_OK) {
				rec_rd_chunk_put(r, c);
				return rec_rd_problem(r, REC_ERR_NOMEM, r->pos, -1,
						      "out of memory ordering events");
			}
			continue;
		}
		if (hold)
			r->stats.order_window_overflows++;
		o->pending = c;
		start_emit(r);
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
	free(o->heap);
	ahead_free(o);
	rec_bigbuf_free(&o->aux);
	memset(o, 0, sizeof(*o));
}
