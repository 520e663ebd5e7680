/* SPDX-License-Identifier: MIT */
/*
 * sections.c - a chunk's section table (every section header checked
 * against the payload and the limits, the 1.1 Front_Checksum over the
 * section headers, METADATA and STATS) and a section's bytes (stored,
 * decompressed).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "read/read_internal.h"

/* ---- sections ----------------------------------------------------------------------- */
/* The stored bytes of section s, at file offset off, read into b (b->len
 * = s->stored): a read error or the input's end is a problem of chunk c. */
static rec_status read_stored(rec_reader *r, rec_rchunk *c, const rec_rsec *s, uint64_t off,
			      rec_buf *b)
{
	b->len = 0;
	if (!rec_buf_reserve(b, s->stored ? s->stored : 1))
		return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, s->hoff, "out of memory");
	size_t got;
	rec_status st = rec_src_read(&r->src, off, s->stored, b->data, &got);
	if (st != REC_OK)
		return rec_rd_chunk_problem(r, c, st, off, "read error: %s",
					    strerror(r->src.err ? r->src.err : EIO));
	if (got < s->stored)
		return rec_rd_chunk_problem(r, c, REC_ERR_TRUNCATED, off,
					    "truncated: section %u (%s) at offset %llu: file ends",
					    s->kind, rec_rd_kind_name(s->kind),
					    (unsigned long long)s->hoff);
	b->len = s->stored;
	return REC_OK;
}

/* Stored bytes of section si, from the payload or read for this section. */
static rec_status section_stored(rec_reader *r, rec_rchunk *c, const rec_rsec *s,
				 const uint8_t **p)
{
	if (rec_section_in_front(s->kind) && c->front[s->kind == REC_SECTION_STATS]) {
		*p = c->front[s->kind == REC_SECTION_STATS];
		return REC_OK;
	}
	if (c->payload) {
		*p = c->payload + s->poff;
		return REC_OK;
	}
	uint64_t off = c->info.offset + c->info.header_size + s->poff;
	const uint8_t *m = rec_src_map(&r->src, off, s->stored);
	if (m) {
		*p = m;
		return REC_OK;
	}
	rec_status st = read_stored(r, c, s, off, &c->tmp);
	if (st != REC_OK)
		return st;
	*p = c->tmp.data;
	return REC_OK;
}

rec_status rec_rd_section(rec_reader *r, rec_rchunk *c, uint32_t si, const uint8_t **p)
{
	const rec_rsec *s = &c->secs[si];
	const uint8_t *sp = NULL;
	*p = NULL; /* on every failure path too (callers read it only after REC_OK) */
	rec_status st = section_stored(r, c, s, &sp);
	if (st != REC_OK)
		return st;
	rec_bigbuf *b = &c->raw[s->kind < REC_NKINDS ? s->kind : 0];
	if (s->kind == REC_SECTION_EVENTS && (c->h.flags & REC_CHUNK_SPLIT_EVENTS)) {
		if ((st = rec_rd_split_events(r, c, s, sp, b)) != REC_OK)
			return st;
		*p = b->data;
		return REC_OK;
	}
	if (!(s->flags & REC_SECTION_COMPRESSED)) {
		*p = sp;
		return REC_OK;
	}
	if (rec_rd_prefetch_take(r, c, s, sp, b)) {
		*p = b->data;
		return REC_OK;
	}
	if (!rec_bigbuf_reserve(b, s->raw))
		return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, s->hoff, "out of memory");
	st = rec_codec_decompress(r->codec, c->h.codec, sp, s->stored, b->data, s->raw);
	if (st != REC_OK)
		return rec_rd_chunk_problem(
			r, c, st == REC_ERR_NOMEM ? st : REC_ERR_CORRUPT, s->hoff,
			"section %u (%s) does not decompress: %s data does not decode to %u bytes",
			s->kind, rec_rd_kind_name(s->kind), rec_codec_name(c->h.codec), s->raw);
	*p = b->data;
	return REC_OK;
}

/* The stored bytes of a METADATA or STATS section, into c->front (format
 * 1.1: checked by Front_Checksum, then decoded from the same bytes).  Only
 * these are read: the EVENTS bytes stay on disk. */
static rec_status front_stored(rec_reader *r, rec_rchunk *c, const rec_rsec *s)
{
	int k = s->kind == REC_SECTION_STATS;
	uint64_t off = c->info.offset + c->info.header_size + s->poff;
	const uint8_t *m = c->payload ? c->payload + s->poff : rec_src_map(&r->src, off, s->stored);
	if (m) {
		c->front[k] = m;
		return REC_OK;
	}
	rec_buf *b = &c->front_buf[k];
	rec_status st = read_stored(r, c, s, off, b);
	if (st != REC_OK)
		return st;
	c->front[k] = b->data;
	return REC_OK;
}

rec_status rec_rd_read_section_table(rec_reader *r, rec_rchunk *c)
{
	const bool front = rec_chunk_has_front_crc(&c->h);
	uint32_t fcrc = 0;
	uint64_t ps = c->h.payload_size;
	uint64_t at = 0; /* offset in payload */
	uint64_t pbase = c->info.offset + c->info.header_size;
	uint64_t raw_sum = 0;
	if (c->h.section_count > c->secs_cap) {
		rec_rsec *ns = realloc(c->secs, c->h.section_count * sizeof(*ns));
		if (!ns)
			return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, c->info.offset, "out of memory");
		c->secs = ns;
		c->secs_cap = c->h.section_count;
	}
	for (uint32_t i = 0; i < c->h.section_count; i++) {
		uint64_t hoff = pbase + at;
		if (ps - at < REC_SECTION_HEADER_SIZE)
			return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, hoff,
						    "section header %u crosses the end of the payload", i);
		const uint8_t *p;
		if (c->payload) {
			p = c->payload + at;
		} else {
			size_t got;
			rec_status st = rec_src_peek(&r->src, hoff, REC_SECTION_HEADER_SIZE, &p, &got);
			if (st != REC_OK)
				return rec_rd_chunk_problem(r, c, st, hoff, "read error: %s",
							    strerror(r->src.err ? r->src.err : EIO));
			if (got < REC_SECTION_HEADER_SIZE)
				return rec_rd_chunk_problem(r, c, REC_ERR_TRUNCATED, hoff,
							    "truncated: the file ends in a section header");
		}
		rec_section_header sh;
		rec_section_header_decode(p, &sh);
		if (front)
			fcrc = rec_crc32c(fcrc, p, REC_SECTION_HEADER_SIZE);
		at += REC_SECTION_HEADER_SIZE;
		if (sh.stored_size > ps - at)
			return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, hoff,
						    "section %u (%s): stored size %u crosses the end of the payload",
						    sh.kind, rec_rd_kind_name(sh.kind), sh.stored_size);
		rec_rsec *s = &c->secs[c->nsec++];
		s->kind = sh.kind;
		s->flags = sh.flags;
		s->items = sh.item_count;
		s->stored = sh.stored_size;
		s->raw = sh.raw_size;
		s->hoff = hoff;
		s->poff = at;
		at += sh.stored_size;
		raw_sum += sh.raw_size;
		if (front && rec_section_in_front(sh.kind)) {
			rec_status st = front_stored(r, c, s);
			if (st != REC_OK)
				return st;
			fcrc = rec_crc32c(fcrc, c->front[sh.kind == REC_SECTION_STATS], sh.stored_size);
		}
		if (sh.kind == 0 || sh.kind >= REC_NKINDS) {
			c->info.unknown_sections++;
			r->stats.unknown_sections++;
			continue;
		}
		const char *kn = rec_rd_kind_name(sh.kind);
		if (c->known[sh.kind] >= 0)
			return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, hoff,
						    "section %u (%s) appears twice in the chunk", sh.kind, kn);
		c->known[sh.kind] = (int)(c->nsec - 1);
		if ((sh.flags & REC_SECTION_COMPRESSED) && c->h.codec == REC_CODEC_NONE)
			return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, hoff,
						    "section %u (%s) is flagged compressed in a chunk without codec",
						    sh.kind, kn);
		if (!(sh.flags & REC_SECTION_COMPRESSED) && sh.stored_size != sh.raw_size)
			return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, hoff,
						    "section %u (%s) is stored raw but Stored_Size %u differs from Raw_Size %u",
						    sh.kind, kn, sh.stored_size, sh.raw_size);
		if (sh.raw_size > r->max_section_raw)
			return rec_rd_chunk_problem(r, c, REC_ERR_LIMIT, hoff,
						    "section %u (%s): Raw_Size %u exceeds the limit %llu",
						    sh.kind, kn, sh.raw_size,
						    (unsigned long long)r->max_section_raw);
		if (sh.item_count > sh.raw_size)
			return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, hoff,
						    "section %u (%s): Item_Count %u exceeds Raw_Size %u",
						    sh.kind, kn, sh.item_count, sh.raw_size);
	}
	(void)raw_sum;
	if (at != ps)
		return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, c->info.offset,
					    "sections cover %llu bytes but Payload_Size is %llu",
					    (unsigned long long)at, (unsigned long long)ps);
	if (front && fcrc != c->h.front_crc)
		return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, c->info.offset,
					    "front checksum mismatch (stored %08x, computed %08x)",
					    c->h.front_crc, fcrc);
	static const unsigned required[] = { REC_SECTION_METADATA, REC_SECTION_STATS,
					     REC_SECTION_EVENTS };
	for (size_t i = 0; i < 3; i++)
		if (c->known[required[i]] < 0)
			return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, c->info.offset,
						    "the chunk has no %s section",
						    rec_rd_kind_name(required[i]));
	return REC_OK;
}

rec_status rec_rd_dec_section(rec_reader *r, rec_rchunk *c, int kind, const rec_rsec **s,
			      rec_rd_dec *d)
{
	*s = &c->secs[c->known[kind]];
	const uint8_t *p;
	rec_status st = rec_rd_section(r, c, (uint32_t)c->known[kind], &p);
	if (st != REC_OK)
		return st;
	*d = (rec_rd_dec){ p, p + (*s)->raw, p, NULL, REC_OK };
	return REC_OK;
}
