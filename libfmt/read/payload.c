/* SPDX-License-Identifier: MIT */
/*
 * payload.c - a chunk's payload: loading it (mapped, read from a file, or
 * grown as a pipe delivers it), its checksum, and the events section with
 * the pools, ready for decoding.
 */
#include <stdlib.h>
#include <string.h>

#include "read/read_internal.h"

/* ---- payload ---------------------------------------------------------------------------- */
rec_status rec_rd_load_payload(rec_reader *r, rec_rchunk *c)
{
	if (c->payload)
		return REC_OK;
	uint64_t poff = c->info.offset + c->info.header_size;
	size_t ps = (size_t)c->h.payload_size;
	const uint8_t *m = rec_src_map(&r->src, poff, ps);
	if (m) {
		c->payload = m;
		return REC_OK;
	}
	if (!c->payload_buf.data && r->spare_payload.data) { /* (order.c) */
		c->payload_buf = r->spare_payload;
		r->spare_payload = (rec_buf){ 0 };
	}
	c->payload_buf.len = 0;
	size_t got = 0;
	rec_status st = REC_OK;
	if (r->src.seekable) {
		/* The size was checked against the file's. */
		if (!rec_buf_reserve(&c->payload_buf, ps ? ps : 1))
			return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, c->info.offset,
						    "out of memory for a payload of %zu bytes", ps);
		st = rec_src_read(&r->src, poff, ps, c->payload_buf.data, &got);
	} else {
		/* A pipe may end early: grow with what actually arrives, so a
		 * declared size allocates nothing the input does not back. */
		if (!rec_buf_reserve(&c->payload_buf, 1))
			return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, c->info.offset, "out of memory");
		while (got < ps && st == REC_OK) {
			size_t step = c->payload_buf.cap - got;
			if (step == 0) {
				size_t more = got < ((size_t)1 << 20) ? ((size_t)1 << 20) : got;
				if (more > ps - got)
					more = ps - got;
				c->payload_buf.len = got;
				if (!rec_buf_reserve(&c->payload_buf, more))
					return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, c->info.offset,
								    "out of memory for a payload of %zu bytes", ps);
				step = c->payload_buf.cap - got;
			}
			if (step > ps - got)
				step = ps - got;
			size_t k;
			st = rec_src_read(&r->src, poff + got, step, c->payload_buf.data + got, &k);
			got += k;
			if (k < step)
				break;
		}
	}
	if (st != REC_OK) {
		r->at_end = true;
		return rec_rd_chunk_problem(r, c, st, poff, "read error: %s", strerror(r->src.err));
	}
	if (got < ps) {
		r->at_end = true;
		r->stats.bytes_skipped += c->info.header_size + got;
		return rec_rd_chunk_problem(r, c, REC_ERR_TRUNCATED, c->info.offset,
					    "truncated: the chunk needs %llu bytes, file ends after %llu",
					    (unsigned long long)c->info.size,
					    (unsigned long long)c->info.header_size + got);
	}
	c->payload_buf.len = ps;
	c->payload = c->payload_buf.data;
	return REC_OK;
}

rec_status rec_rd_check_payload(rec_reader *r, rec_rchunk *c)
{
	if (c->payload_checked)
		return REC_OK;
	rec_status st = rec_rd_load_payload(r, c);
	if (st != REC_OK)
		return st;
	uint32_t crc = rec_crc32c(0, c->payload, (size_t)c->h.payload_size);
	if (crc != c->h.payload_crc)
		return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, c->info.offset,
					    "payload checksum mismatch (stored %08x, computed %08x)",
					    c->h.payload_crc, crc);
	c->payload_checked = true;
	return REC_OK;
}

rec_status rec_rd_load_events(rec_reader *r, rec_rchunk *c)
{
	if (c->events_loaded)
		return REC_OK;
	if (c->damaged)
		return REC_ERR_CORRUPT;
	rec_status st = rec_rd_check_payload(r, c);
	if (st != REC_OK)
		return st;
	/* The worker on the chunks after c from now, while c's events are
	 * decompressed here (prefetch.c). */
	rec_rd_prefetch_next(r, c);
	st = rec_rd_load_pools(r, c);
	if (st != REC_OK)
		return st;
	int si = c->known[REC_SECTION_EVENTS];
	c->ev_items = c->secs[si].items;
	st = rec_rd_select_chunk(r, c);
	if (st != REC_OK)
		return st;
	/* The ordered scan's plan for c before its events are decompressed:
	 * the worker, busy with the chunk after it, joins that one for this
	 * selection (order.c). */
	if (r->sparse_ok)
		rec_rd_order_plan(r, c);
	const uint8_t *p;
	st = rec_rd_section(r, c, (uint32_t)si, &p);
	if (st != REC_OK)
		return st;
	c->ev = p;
	c->ev_end = p + c->secs[si].raw;
	c->cur = c->ev;
	c->cur_ticks = c->h.start_ticks;
	c->cur_count = 0;
	/* Room for the widest type's values. */
	if (c->max_fields > r->values_cap) {
		rec_value *nv = realloc(r->values, (size_t)c->max_fields * sizeof(rec_value));
		if (!nv)
			return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, c->info.offset, "out of memory");
		r->values = nv;
		r->values_cap = c->max_fields;
	}
	c->events_loaded = true;
	return REC_OK;
}

rec_status rec_rd_load_events_reported(rec_reader *r, rec_rchunk *c)
{
	if (c->damaged)
		return rec_rd_problem(r, REC_ERR_CORRUPT, c->info.offset, (int64_t)c->info.index,
				      "the chunk was already found damaged");
	return rec_rd_load_events(r, c);
}
