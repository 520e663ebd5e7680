/* SPDX-License-Identifier: MIT */
/*
 * scan.c - finding chunks: the next chunk header (its checksum), recovery
 * after damage (resynchronising on the next good header, a cut tail), the
 * header's sizes against the limits and the input, and reading one chunk
 * as the protocol the spec gives: header, then the payload's checksum or
 * the front checksum, section table, METADATA, STATS, plausibility
 * (sections.c, metadata.c, stats.c, payload.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/read_internal.h"

/* ---- header scanning ----------------------------------------------------------------- */
static bool header_crc_ok(const uint8_t *b, uint32_t hs)
{
	static const uint8_t zero[4];
	uint32_t c = rec_crc32c(0, b, REC_HOFF_HEADER_CRC);
	c = rec_crc32c(c, zero, 4);
	c = rec_crc32c(c, b + REC_HOFF_PAYLOAD_CRC, hs - REC_HOFF_PAYLOAD_CRC);
	return c == rec_le32(b + REC_HOFF_HEADER_CRC);
}

/* Is there a complete chunk header with a good checksum at c? */
static bool good_header_at(rec_reader *r, uint64_t c)
{
	const uint8_t *p;
	size_t got;
	if (rec_src_peek(&r->src, c, REC_PREFIX_SIZE, &p, &got) != REC_OK || got < REC_PREFIX_SIZE ||
	    memcmp(p, rec_magic, REC_MAGIC_LEN) != 0)
		return false;
	uint32_t hs = rec_le32(p + REC_HOFF_HEADER_SIZE);
	if (hs < REC_PREFIX_SIZE || hs > REC_MAX_HEADER_SIZE)
		return false;
	if (rec_src_peek(&r->src, c, hs, &p, &got) != REC_OK || got < hs)
		return false;
	return header_crc_ok(p, hs);
}

/* Find the next offset >= from where a chunk header with a good checksum
 * starts, or where a chunk that the input cuts short starts (magic seen, not
 * enough bytes left to check it), or the end of the input.  Linear: each
 * candidate costs at most one header checksum. */
static rec_status scan_for_header(rec_reader *r, uint64_t from, uint64_t *found)
{
	uint64_t off = from;
	/* A magic whose header runs past the end of the input is a cut-off chunk
	 * only if no good header follows it: remember the first such place and
	 * keep looking (a damaged header near the end must not hide a good chunk
	 * after it). */
	uint64_t tail = UINT64_MAX;
	for (;;) {
		const uint8_t *p;
		size_t got;
		rec_status st = rec_src_peek(&r->src, off, (size_t)64 * 1024, &p, &got);
		if (st != REC_OK)
			return st;
		if (got == 0) {
			*found = tail != UINT64_MAX ? tail : off;
			return REC_OK;
		}
		const uint8_t *q = memchr(p, rec_magic[0], got);
		if (!q) {
			off += got;
			continue;
		}
		uint64_t c = off + (uint64_t)(q - p);
		st = rec_src_peek(&r->src, c, REC_PREFIX_SIZE, &p, &got);
		if (st != REC_OK)
			return st;
		size_t m = got < REC_MAGIC_LEN ? got : REC_MAGIC_LEN;
		if (memcmp(p, rec_magic, m) != 0) {
			off = c + 1;
			continue;
		}
		if (got < REC_PREFIX_SIZE) { /* a cut-off chunk at the end */
			*found = tail != UINT64_MAX ? tail : c;
			return REC_OK;
		}
		uint32_t hs = rec_le32(p + REC_HOFF_HEADER_SIZE);
		if (hs < REC_PREFIX_SIZE || hs > REC_MAX_HEADER_SIZE) {
			off = c + 1;
			continue;
		}
		st = rec_src_peek(&r->src, c, hs, &p, &got);
		if (st != REC_OK)
			return st;
		if (got < hs) {
			if (tail == UINT64_MAX)
				tail = c;
			off = c + 1;
			continue;
		}
		if (header_crc_ok(p, hs)) {
			*found = c;
			return REC_OK;
		}
		off = c + 1;
	}
}

static rec_status io_problem(rec_reader *r, uint64_t off, rec_status st)
{
	r->at_end = true;
	if (st == REC_ERR_IO)
		return rec_rd_problem(r, st, off, -1, "read error: %s", strerror(r->src.err));
	return rec_rd_problem(r, st, off, -1, "read failed: %s", rec_strerror(st));
}

/* The input ends inside the chunk at off (whose index is idx). */
static rec_status truncated(rec_reader *r, uint64_t off, int64_t idx, uint64_t need, uint64_t have)
{
	r->at_end = true;
	r->stats.chunks_damaged++;
	r->stats.bytes_skipped += have;
	return rec_rd_problem(r, REC_ERR_TRUNCATED, off, idx,
			      "truncated: the chunk needs %llu bytes, file ends after %llu",
			      (unsigned long long)need, (unsigned long long)have);
}

/* A size for messages: "3 GiB", "256 MiB", "1.5 GiB", "900 bytes". */
static void fmt_size(char *b, size_t n, uint64_t v)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	if (v < 1024) {
		snprintf(b, n, "%llu bytes", (unsigned long long)v);
		return;
	}
	int u = 0;
	uint64_t scale = 1024;
	while (u < 5 && v / scale >= 1024) {
		scale *= 1024;
		u++;
	}
	if (v % scale == 0)
		snprintf(b, n, "%llu %s", (unsigned long long)(v / scale), units[u]);
	else
		snprintf(b, n, "%.1f %s", (double)v / (double)scale, units[u]);
}

/* ---- reading one chunk -------------------------------------------------------------------- */
/* Step 1: a chunk header with a good checksum at r->pos, whose hs bytes are
 * at *p (REC_OK).  Otherwise the end of the input (REC_END), or a problem:
 * a cut tail, a damaged header or garbage, stepped over up to the next good
 * header (r->pos moves there). */
static rec_status find_header(rec_reader *r, const uint8_t **p, size_t *got)
{
	uint64_t off = r->pos;
	rec_status st = rec_src_peek(&r->src, off, REC_PREFIX_SIZE, p, got);
	if (st != REC_OK)
		return io_problem(r, off, st);
	if (*got == 0) {
		r->at_end = true;
		return REC_END;
	}
	size_t m = *got < REC_MAGIC_LEN ? *got : REC_MAGIC_LEN;
	bool magic = memcmp(*p, rec_magic, m) == 0;
	if (magic) {
		int64_t idx = (int64_t)r->next_index;
		if (*got < REC_PREFIX_SIZE) {
			r->next_index++;
			return truncated(r, off, idx, REC_PREFIX_SIZE, *got);
		}
		uint32_t hs = rec_le32(*p + REC_HOFF_HEADER_SIZE);
		if (hs >= REC_PREFIX_SIZE && hs <= REC_MAX_HEADER_SIZE) {
			st = rec_src_peek(&r->src, off, hs, p, got);
			if (st != REC_OK)
				return io_problem(r, off, st);
			if (*got < hs) {
				/* Cut off, unless a good chunk header follows within
				 * the few bytes left: then this header is damaged. */
				uint64_t next;
				st = scan_for_header(r, off + 1, &next);
				if (st != REC_OK)
					return io_problem(r, off, st);
				if (!good_header_at(r, next)) {
					r->next_index++;
					return truncated(r, off, idx, hs, *got);
				}
			} else if (header_crc_ok(*p, hs)) {
				return REC_OK;
			}
		}
	}
	/* A damaged header or garbage: step over it to the next good header. */
	uint64_t next;
	st = scan_for_header(r, off + 1, &next);
	if (st != REC_OK)
		return io_problem(r, off, st);
	uint64_t n = next - off;
	r->stats.bytes_skipped += n;
	r->pos = next;
	if (magic) {
		int64_t idx = (int64_t)r->next_index++;
		r->stats.chunks_damaged++;
		return rec_rd_problem(r, REC_ERR_CORRUPT, off, idx,
				      "damaged chunk header (bad header checksum or size): skipped %llu bytes",
				      (unsigned long long)n);
	}
	return rec_rd_problem(r, REC_ERR_BAD_MAGIC, off, -1,
			      "skipped %llu bytes of garbage", (unsigned long long)n);
}

/* Step 2's failure: a header whose checksum holds but which this reader
 * cannot use (st from rec_chunk_header_decode); the chunk is stepped over. */
static rec_status header_problem(rec_reader *r, rec_status st, const uint8_t *p, const char *hmsg,
				 uint64_t off, int64_t idx, uint64_t end)
{
	r->pos = end;
	r->stats.chunks_damaged++;
	if (end == UINT64_MAX || (r->src.size_known && end > r->src.size))
		r->at_end = true;
	if (st == REC_ERR_UNSUPPORTED_VERSION)
		return rec_rd_problem(r, st, off, idx,
				      "unsupported format version %u.%u",
				      rec_le16(p + REC_HOFF_MAJOR), rec_le16(p + REC_HOFF_MINOR));
	if (st == REC_ERR_UNSUPPORTED && p[REC_HOFF_CODEC] > REC_CODEC_LZ4)
		return rec_rd_problem(r, st, off, idx,
				      "unknown codec %u",
				      p[REC_HOFF_CODEC]);
	if (st == REC_ERR_UNSUPPORTED)
		return rec_rd_problem(r, st, off, idx,
				      "reserved header flags set (0x%08x)",
				      rec_le32(p + REC_HOFF_FLAGS) & REC_CHUNK_RESERVED_MASK);
	return rec_rd_problem(r, st == REC_ERR_TRUNCATED ? REC_ERR_CORRUPT : st, off, idx,
			      "%s", hmsg ? hmsg : "bad header");
}

/* Step 3: the declared Payload_Size ps against the limit and the input's
 * end (a chunk of hs + ps bytes at off, ending at end).  A size over the
 * limit, or one past the end when a good header follows, resumes at the
 * next good header; past the end otherwise is a cut tail. */
static rec_status check_sizes(rec_reader *r, uint64_t off, int64_t idx, uint32_t hs, uint64_t ps,
			      uint64_t end)
{
	rec_status st;
	if (ps > r->max_payload) {
		/* The header is intact but its size cannot be used to step over
		 * the chunk (stepping 3 GiB would skip every chunk after it):
		 * resume at the next good chunk header after this one. */
		r->stats.chunks_damaged++;
		uint64_t next;
		st = scan_for_header(r, off + hs, &next);
		if (st != REC_OK)
			return io_problem(r, off, st);
		r->stats.bytes_skipped += next - off;
		r->pos = next;
		char want[32], lim[32];
		fmt_size(want, sizeof want, ps);
		fmt_size(lim, sizeof lim, r->max_payload);
		return rec_rd_problem(r, REC_ERR_LIMIT, off, idx,
				      "Payload_Size %llu exceeds the limit %llu "
				      "(the chunk declares %s, over the %s payload limit); skipped %llu bytes",
				      (unsigned long long)ps,
				      (unsigned long long)r->max_payload, want, lim,
				      (unsigned long long)(next - off));
	}
	if (r->src.size_known && end > r->src.size) {
		rec_src_refresh_size(&r->src);
		if (end > r->src.size) {
			r->stats.file_size = r->src.mem ? r->stats.file_size : r->src.size;
			/* Past the end of the input: a cut tail, unless a good chunk
			 * header follows (the size is wrong, or a cut file had more
			 * appended): then resume there. */
			uint64_t next;
			st = scan_for_header(r, off + hs, &next);
			if (st != REC_OK)
				return io_problem(r, off, st);
			if (next < r->src.size && good_header_at(r, next)) {
				r->stats.chunks_damaged++;
				r->stats.bytes_skipped += next - off;
				r->pos = next;
				return rec_rd_problem(r, REC_ERR_CORRUPT, off, idx,
						      "Payload_Size %llu runs past the end of the input "
						      "(%llu bytes left) but a chunk header follows at offset %llu; skipped %llu bytes",
						      (unsigned long long)ps,
						      (unsigned long long)(r->src.size - off - hs),
						      (unsigned long long)next, (unsigned long long)(next - off));
			}
			r->pos = r->src.size;
			return truncated(r, off, idx, end - off, r->src.size - off);
		}
		r->stats.file_size = r->src.size;
	}
	return REC_OK;
}

/* Step 4: a chunk object for the header h of the chunk [off, end). */
static rec_rchunk *chunk_from_header(rec_reader *r, const rec_chunk_header *h, int64_t idx,
				     uint64_t off, uint64_t end)
{
	rec_rchunk *c = rec_rd_chunk_get(r);
	if (!c)
		return NULL;
	c->h = *h;
	c->end = end;
	rec_chunk_info *ci = &c->info;
	ci->index = (uint64_t)idx;
	ci->offset = off;
	ci->size = end - off;
	ci->major = h->major;
	ci->minor = h->minor;
	ci->header_size = h->header_size;
	ci->flags = h->flags;
	ci->codec = h->codec;
	ci->payload_size = h->payload_size;
	ci->raw_size = h->raw_size;
	ci->event_count = h->event_count;
	ci->start_wall_ns = h->start_wall_ns;
	ci->start_ticks = h->start_ticks;
	ci->tick_frequency = h->tick_frequency;
	ci->duration_ticks = h->duration_ticks;
	ci->run_id = h->run_id;
	ci->process_start_ns = h->process_start_ns;
	ci->pid = h->pid;
	ci->sequence = h->sequence;
	return c;
}

/* Step 5: what a chunk presents, from checked bytes only: the checksum,
 * then the section table, METADATA, STATS and their plausibility. */
static rec_status read_front(rec_reader *r, rec_rchunk *c, bool for_events)
{
	/* Nothing of a chunk is presented from bytes nobody checked.  A 1.0
	 * chunk (or one without Front_Checksum) has only the whole payload's
	 * checksum, so it is read and checked whole, also when only the header,
	 * METADATA and STATS are wanted.  A 1.1 chunk's Front_Checksum covers
	 * exactly those (rec_rd_read_section_table checks it), so a summary
	 * reads the section headers, METADATA and STATS only and skips the
	 * EVENTS bytes; the whole payload is checked when events are read or on
	 * request. */
	rec_status st;
	if (!rec_chunk_has_front_crc(&c->h) || for_events || (r->flags & REC_READ_VERIFY))
		st = rec_rd_check_payload(r, c);
	else if (!r->src.seekable)
		st = rec_rd_load_payload(r, c); /* a pipe cannot come back for it */
	else
		st = REC_OK;
	if (st == REC_OK)
		st = rec_rd_read_section_table(r, c);
	if (st == REC_OK)
		st = rec_rd_decode_metadata(r, c);
	if (st == REC_OK)
		st = rec_rd_decode_stats(r, c);
	if (st == REC_OK)
		st = rec_rd_check_plausible(r, c);
	return st;
}

rec_status rec_rd_read_chunk(rec_reader *r, rec_rchunk **out, bool for_events)
{
	*out = NULL;
	r->failed_size = 0;
	if (r->at_end)
		return REC_END;
	/* 1. a good header */
	const uint8_t *p;
	size_t got;
	rec_status st = find_header(r, &p, &got);
	if (st != REC_OK)
		return st;
	uint64_t off = r->pos;
	int64_t idx = (int64_t)r->next_index++;
	uint32_t hs = rec_le32(p + REC_HOFF_HEADER_SIZE);
	uint64_t ps = rec_le64(p + REC_HOFF_PAYLOAD_SIZE);
	uint64_t end = off + hs;
	end = ps > UINT64_MAX - end ? UINT64_MAX : end + ps;
	r->stats.chunks++;
	/* 2. that this reader can use */
	rec_chunk_header h;
	const char *hmsg = NULL;
	st = rec_chunk_header_decode(p, got, &h, &hmsg);
	if (st != REC_OK)
		return header_problem(r, st, p, hmsg, off, idx, end);
	/* 3. whose sizes hold */
	st = check_sizes(r, off, idx, hs, ps, end);
	if (st != REC_OK)
		return st;
	/* 4. the chunk */
	rec_rchunk *c = chunk_from_header(r, &h, idx, off, end);
	if (!c)
		return rec_rd_problem(r, REC_ERR_NOMEM, off, idx, "out of memory");
	r->pos = end;
	/* 5. its checked front: sections, METADATA, STATS */
	st = read_front(r, c, for_events);
	if (st != REC_OK) {
		r->failed_size = c->info.size;
		rec_rd_chunk_put(r, c);
		return st;
	}
	*out = c;
	return REC_OK;
}

REC_API rec_status rec_reader_next_chunk(rec_reader *r, const rec_chunk_info **info)
{
	if (!r || !info)
		return REC_ERR_INVALID_ARG;
	*info = NULL;
	if (r->ord.started)
		return rec_rd_problem(r, REC_ERR_STATE, r->pos, -1,
				      "rec_reader_next_chunk() after ordered event iteration started");
	if (r->cur) {
		rec_rd_chunk_put(r, r->cur);
		r->cur = NULL;
	}
	rec_rchunk *c;
	rec_status st = rec_rd_read_chunk(r, &c, false);
	if (st != REC_OK)
		return st;
	r->cur = c;
	*info = &c->info;
	return REC_OK;
}
