/* SPDX-License-Identifier: MIT */
/*
 * archive.c - raw bytes of the reader's current chunk (rec/archive.h), for
 * the tools that copy whole chunks: rec-recover, rec-cat, rec-split; and
 * the events of one type in the current chunk, decoding nothing else (for
 * counter totals in rec-summary).
 * A new file next to the reader's: it uses read_internal.h (the current
 * chunk, its decoded header and loaded payload, the byte source) and changes
 * nothing in the reader's own files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "read/read_internal.h"
#include "rec/archive.h"

#define COPY_STEP ((size_t)1 << 20)

static rec_status sink_put(rec_reader *r, const rec_rchunk *c, const rec_sink *sink,
			   const void *p, size_t n)
{
	if (!n)
		return REC_OK;
	int e = sink->write(sink->opaque, p, n);
	if (e != 0) {
		errno = e < 0 ? -e : e;
		return rec_rd_problem(r, REC_ERR_IO, c->info.offset, (int64_t)c->info.index,
				      "writing the copy failed: %s",
				      strerror(errno));
	}
	return REC_OK;
}

/* The header bytes of c into hb (cap REC_MAX_HEADER_SIZE). */
static rec_status header_bytes(rec_reader *r, rec_rchunk *c, uint8_t *hb)
{
	uint32_t hs = c->info.header_size;
	const int64_t idx = (int64_t)c->info.index;
	if (r->src.seekable) {
		size_t got = 0;
		rec_status st = rec_src_read(&r->src, c->info.offset, hs, hb, &got);
		if (st != REC_OK)
			return rec_rd_problem(r, st, c->info.offset, idx,
					      "reading the header again failed: %s",
					      strerror(r->src.err));
		if (got < hs)
			return rec_rd_problem(r, REC_ERR_TRUNCATED, c->info.offset, idx,
					      "the input shrank under the reader");
	} else {
		/* A pipe cannot go back: re-encode, and use it only if it is
		 * provably the same header (its checksum holds). */
		if (hs != REC_HEADER_SIZE_V1)
			return rec_rd_problem(r, REC_ERR_UNSUPPORTED, c->info.offset, idx,
					      "a %u-byte header cannot be copied from a pipe (give a file)",
					      hs);
		rec_chunk_header h = c->h;
		rec_chunk_header_encode(&h, hb);
	}
	rec_chunk_header chk;
	const char *msg = NULL;
	if (rec_chunk_header_decode(hb, hs, &chk, &msg) != REC_OK || chk.header_crc != c->h.header_crc ||
	    chk.payload_size != c->h.payload_size || chk.payload_crc != c->h.payload_crc)
		return rec_rd_problem(r, REC_ERR_CORRUPT, c->info.offset, idx,
				      "the header bytes %s",
				      r->src.seekable ? "changed since they were read"
						      : "cannot be rebuilt exactly from a pipe (give a file)");
	return REC_OK;
}

REC_API rec_status rec_reader_chunk_write(rec_reader *r, const rec_sink *sink)
{
	if (!r || !sink || !sink->write)
		return REC_ERR_INVALID_ARG;
	rec_rchunk *c = r->cur;
	if (!c)
		return rec_rd_problem(r, REC_ERR_STATE, r->pos, -1, "no current chunk to copy");
	uint8_t hb[REC_MAX_HEADER_SIZE];
	rec_status st = header_bytes(r, c, hb);
	if (st != REC_OK)
		return st;
	st = sink_put(r, c, sink, hb, c->info.header_size);
	if (st != REC_OK)
		return st;
	uint64_t ps = c->h.payload_size;
	if (c->payload)
		return sink_put(r, c, sink, c->payload, (size_t)ps);
	/* Not loaded (a seekable input, chunk not verified): copy in steps. */
	const uint8_t *m = rec_src_map(&r->src, c->info.offset + c->info.header_size, (size_t)ps);
	if (m)
		return sink_put(r, c, sink, m, (size_t)ps);
	size_t step = ps < COPY_STEP ? (size_t)ps : COPY_STEP;
	uint8_t *buf = malloc(step ? step : 1);
	if (!buf)
		return rec_rd_problem(r, REC_ERR_NOMEM, c->info.offset, (int64_t)c->info.index,
				      "out of memory");
	uint64_t done = 0, base = c->info.offset + c->info.header_size;
	while (done < ps && st == REC_OK) {
		size_t n = ps - done < step ? (size_t)(ps - done) : step, got = 0;
		const uint64_t at = base + done;
		st = rec_src_read(&r->src, at, n, buf, &got);
		if (st != REC_OK) {
			st = rec_rd_problem(r, st, at, (int64_t)c->info.index, "read error: %s",
					    strerror(r->src.err));
			break;
		}
		if (got < n) {
			const uint64_t end = at + got;
			st = rec_rd_problem(r, REC_ERR_TRUNCATED, end, (int64_t)c->info.index,
					    "the input ends inside the chunk");
			break;
		}
		st = sink_put(r, c, sink, buf, n);
		done += n;
	}
	free(buf);
	return st;
}

REC_API rec_status rec_reader_chunk_checksums(const rec_reader *r, uint32_t *header_checksum,
					      uint32_t *payload_checksum)
{
	if (!r)
		return REC_ERR_INVALID_ARG;
	if (!r->cur)
		return REC_ERR_STATE;
	if (header_checksum)
		*header_checksum = r->cur->h.header_crc;
	if (payload_checksum)
		*payload_checksum = r->cur->h.payload_crc;
	return REC_OK;
}

/* ---- the intact chunks, one after another ----------------------------------- */

REC_API rec_status rec_reader_next_intact(rec_reader *r, const rec_chunk_info **info,
					  rec_intact_tally *t)
{
	if (!r || !info || !t)
		return REC_ERR_INVALID_ARG;
	*info = NULL;
	if (t->stopped)
		return REC_END;
	const rec_chunk_info *ci = NULL;
	rec_status st = rec_reader_next_chunk(r, &ci);
	if (st == REC_END)
		return REC_END;
	uint64_t size = st == REC_OK ? 0 : r->failed_size; /* damaged payload: its size held */
	if (st == REC_OK) {
		size = ci->size;
		st = rec_reader_verify_chunk(r);
		if (st == REC_OK) {
			t->chunks++;
			t->events += ci->event_count;
			t->bytes += ci->size;
			*info = ci;
			return REC_OK;
		}
	}
	const rec_problem *p = rec_reader_problem(r);
	t->problems++;
	if (p->chunk >= 0) {
		t->damaged++;
		t->damaged_bytes += size;
		if (p->status == REC_ERR_UNSUPPORTED_VERSION)
			t->unsupported++;
	}
	if (st == REC_ERR_NOMEM || st == REC_ERR_INVALID_ARG || st == REC_ERR_STATE ||
	    (st == REC_ERR_IO && p->chunk < 0))
		t->stopped = 1;
	return st;
}

/* ---- the events of one type in the current chunk --------------------------- */

REC_API rec_status rec_reader_chunk_events(rec_reader *r, const char *type_name,
					   rec_chunk_event_fn fn, void *opaque)
{
	if (!r || !type_name || !fn)
		return REC_ERR_INVALID_ARG;
	rec_rchunk *c = r->cur;
	if (!c)
		return rec_rd_problem(r, REC_ERR_STATE, r->pos, -1, "no current chunk");
	/* The type's id in this chunk, and whether the statistics count any. */
	uint64_t want = 0, count = 0;
	for (uint32_t i = 0; i < c->info.type_count; i++)
		if (c->info.types[i].name && strcmp(c->info.types[i].name, type_name) == 0)
			want = c->info.types[i].id;
	if (!want)
		return REC_OK;
	for (uint32_t i = 0; i < c->info.type_stats_count; i++)
		if (c->info.type_stats[i].type_id == want)
			count += c->info.type_stats[i].count;
	if (!count)
		return REC_OK;
	rec_status st = rec_rd_load_events_reported(r, c);
	if (st != REC_OK)
		return st;
	/* Records of other types are stepped over by Size (their Time_Delta
	 * still counts); only the wanted ones are decoded. */
	const uint8_t *p = c->ev;
	uint64_t ticks = c->h.start_ticks;
	while (p < c->ev_end) {
		const uint8_t *q = p;
		uint64_t size, tid, delta;
		if (rec_varint_get(&q, c->ev_end, &size) && size >= 2 &&
		    size <= (uint64_t)(c->ev_end - q)) {
			const uint8_t *rend = q + size;
			if (rec_varint_get(&q, rend, &tid) && rec_varint_get(&q, rend, &delta) &&
			    tid != want) {
				ticks += (uint64_t)rec_unzigzag(delta);
				p = rend;
				continue;
			}
		}
		/* The wanted type, or a malformed record: the reader's decoder
		 * decodes it or says what is wrong. */
		rec_event ev;
		bool known = false;
		st = rec_rd_decode_record(r, c, &p, &ticks, &ev, &known, false);
		if (st != REC_OK)
			return rec_rd_chunk_problem(r, c, st, c->secs[c->known[REC_SECTION_EVENTS]].hoff,
						    "section 8 (EVENTS): %s",
						    r->detail);
		if (!known)
			continue;
		st = fn(opaque, &ev);
		if (st != REC_OK)
			return st;
	}
	return REC_OK;
}
