/* SPDX-License-Identifier: MIT */
/*
 * split_events.c - the EVENTS section of a 1.3 chunk with the
 * SPLIT_EVENTS flag (spec/FORMAT.md "Split EVENTS"): its four streams
 * decompressed one after the other into the reader's split buffer, then
 * joined (common/events_split.c) into the section's records, byte for byte
 * what an unsplit chunk stores, so that everything after this reads both
 * alike.  The types' flags come from the chunk's METADATA, decoded before
 * any event is.  The prefetch worker does the same ahead of the reader
 * (prefetch.c), the flags read from the same METADATA bytes.
 */
#include "read/read_internal.h"

/* A Type_Id beyond the dense lookup (sparse ids). */
static unsigned sparse_flags(const void *ctx, uint64_t id)
{
	const rec_rchunk *c = ctx;
	uint32_t idx;
	const rec_type *t = rec_rd_type(c, id, &idx);
	return t ? (t->flags & 0x7u) | REC_EVS_KNOWN : 0;
}

rec_status rec_rd_split_events(rec_reader *r, rec_rchunk *c, const rec_rsec *s, const uint8_t *sp,
			       rec_bigbuf *b)
{
	uint32_t sstored[REC_EVS_N], sraw[REC_EVS_N];
	if (!(s->flags & REC_SECTION_COMPRESSED))
		return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, s->hoff,
					    "section 8 (EVENTS) of a split chunk is not compressed");
	if (!rec_events_split_table_decode(sp, s->stored, s->raw, sstored, sraw))
		return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, s->hoff,
					    "section 8 (EVENTS): its stream table does not add up to its "
					    "Stored_Size %u and Raw_Size %u", s->stored, s->raw);
	/* Joined by the prefetch worker, from these very bytes? */
	if (rec_rd_prefetch_take(r, c, s, sp, b))
		return REC_OK;
	static const char *const names[REC_EVS_N] = { "heads", "times", "refs", "bodies" };
	if (!rec_bigbuf_reserve(&r->split, (size_t)s->raw + REC_EVS_READ_SLACK) ||
	    !rec_bigbuf_reserve(b, (size_t)s->raw + REC_EVS_SLACK))
		return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, s->hoff, "out of memory");
	const uint8_t *in = sp + REC_EVS_TABLE_SIZE;
	uint8_t *out = r->split.data;
	const uint8_t *streams[REC_EVS_N];
	size_t lens[REC_EVS_N];
	for (int i = 0; i < REC_EVS_N; i++) {
		streams[i] = out;
		lens[i] = sraw[i];
		if (sraw[i]) {
			rec_status st = rec_codec_decompress(r->codec, c->h.codec, in, sstored[i], out, sraw[i]);
			if (st != REC_OK)
				return rec_rd_chunk_problem(
					r, c, st == REC_ERR_NOMEM ? st : REC_ERR_CORRUPT, s->hoff,
					"section 8 (EVENTS): its %s stream does not decompress: %s data "
					"does not decode to %u bytes",
					names[i], rec_codec_name(c->h.codec), sraw[i]);
		}
		in += sstored[i];
		out += sraw[i];
	}

	/* Each declared type's flags, by id. */
	uint8_t *tf = NULL;
	if (c->dense_n && !(tf = rec_arena_alloc(&c->arena, c->dense_n)))
		return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, s->hoff, "out of memory");
	for (uint32_t id = 0; id < c->dense_n; id++) {
		uint32_t v = c->dense[id];
		tf[id] = v ? (uint8_t)((c->types[v - 1].flags & 0x7u) | REC_EVS_KNOWN) : 0;
	}
	rec_evs_types ty = { tf, c->dense_n, c->sorted ? sparse_flags : NULL, c };
	uint32_t bad;
	const char *why = rec_events_join(streams, lens, s->items, &ty, b->data, s->raw, &bad);
	if (why)
		return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, s->hoff,
					    "section 8 (EVENTS), record %u: %s", bad, why);
	return REC_OK;
}
