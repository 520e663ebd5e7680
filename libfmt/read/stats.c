/* SPDX-License-Identifier: MIT */
/*
 * stats.c - decoding a chunk's STATS section (time range, dropped events,
 * per-type counts and bytes), and the plausibility of the numbers a summary
 * shows from the header and STATS alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/read_internal.h"

/* ---- STATS ---------------------------------------------------------------------------- */
rec_status rec_rd_decode_stats(rec_reader *r, rec_rchunk *c)
{
	const rec_rsec *s;
	rec_rd_dec d;
	rec_status st = rec_rd_dec_section(r, c, REC_SECTION_STATS, &s, &d);
	if (st != REC_OK)
		return st;
	uint64_t first, last, dropped, tc;
	const char *bad = NULL;
	if (!rec_rd_dec_u(&d, &first, "First_Delta") || !rec_rd_dec_u(&d, &last, "Last_Delta") ||
	    !rec_rd_dec_u(&d, &dropped, "Dropped_Events") || !rec_rd_dec_u(&d, &tc, "Type_Count"))
		goto fail;
	if (tc != s->items) {
		bad = "Type_Count differs from Item_Count";
		goto fail;
	}
	if (tc * 3 > (uint64_t)(d.end - d.p)) {
		bad = "Type_Count larger than the section";
		goto fail;
	}
	c->tstats = rec_arena_alloc(&c->arena, (size_t)tc * sizeof(rec_type_stats) + 1);
	if (!c->tstats)
		return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, s->hoff, "out of memory");
	for (uint64_t i = 0; i < tc; i++) {
		uint64_t id;
		rec_type_stats *ts = &c->tstats[i];
		if (!rec_rd_dec_u(&d, &id, "type id") || !rec_rd_dec_u(&d, &ts->count, "count") ||
		    !rec_rd_dec_u(&d, &ts->bytes, "bytes"))
			goto fail;
		if (id > UINT32_MAX) {
			bad = "type id out of range";
			goto fail;
		}
		uint32_t idx;
		ts->type_id = (uint32_t)id;
		ts->type = rec_rd_type(c, id, &idx);
	}
	c->info.first_ticks = c->h.start_ticks + (uint64_t)rec_unzigzag(first);
	c->info.last_ticks = c->h.start_ticks + (uint64_t)rec_unzigzag(last);
	c->info.dropped_events = dropped;
	c->info.type_stats_count = (uint32_t)tc;
	c->info.type_stats = c->tstats;
	return REC_OK;
fail:
	return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, s->hoff,
				    "section 2 (STATS) is malformed: %s at byte %zu",
				    bad ? bad : d.what, (size_t)(d.p - d.start));
}

/* ---- plausibility ------------------------------------------------------------------------ */
/* Counts and times a summary shows from the header and STATS alone must be
 * possible for the chunk's sizes (spec, "Limits", "Plausibility"); a chunk
 * whose numbers cannot be true is damaged, even under good checksums. */
#define REC_MIN_RECORD_BYTES 3u /* Size (1 byte) + Type_Id and Time_Delta (>= 2) */
#define REC_MAX_DROPPED_PER_CHUNK (1ull << 48)
#define REC_WALL_LIMIT (1ll << 62) /* |wall ns| below it: differences fit in i64 */

__extension__ typedef __int128 rd_i128;

static bool wall_ok(rd_i128 w)
{
	return w > -(rd_i128)REC_WALL_LIMIT && w < (rd_i128)REC_WALL_LIMIT;
}

/* Wall time of a tick delta from Start_Ticks, exactly (no saturation). */
static rd_i128 wall_of(const rec_chunk_header *h, int64_t dticks)
{
	return (rd_i128)h->start_wall_ns + (rd_i128)dticks * 1000000000 / (rd_i128)h->tick_frequency;
}

rec_status rec_rd_check_plausible(rec_reader *r, rec_rchunk *c)
{
	const rec_chunk_header *h = &c->h;
	const rec_rsec *ev = &c->secs[c->known[REC_SECTION_EVENTS]];
	char why[200];
	why[0] = 0;
	uint64_t raw_sum = 0, count_sum = 0, bytes_sum = 0;
	for (uint32_t i = 0; i < c->nsec; i++)
		raw_sum += c->secs[i].raw; /* at most 65535 * 2^32: no overflow */
	if (h->event_count != ev->items) {
		snprintf(why, sizeof why, "header Event_Count %llu differs from the EVENTS Item_Count %u",
			 (unsigned long long)h->event_count, ev->items);
	} else if ((uint64_t)ev->items * REC_MIN_RECORD_BYTES > ev->raw) {
		snprintf(why, sizeof why, "%u events in %u bytes of EVENTS (each takes at least %u)",
			 ev->items, ev->raw, REC_MIN_RECORD_BYTES);
	} else if (raw_sum != h->raw_size) {
		snprintf(why, sizeof why, "header Raw_Size %llu differs from the sections' sum %llu",
			 (unsigned long long)h->raw_size, (unsigned long long)raw_sum);
	} else if (c->info.dropped_events > REC_MAX_DROPPED_PER_CHUNK) {
		snprintf(why, sizeof why, "Dropped_Events %llu over the plausible %llu per chunk",
			 (unsigned long long)c->info.dropped_events,
			 (unsigned long long)REC_MAX_DROPPED_PER_CHUNK);
	} else if (!wall_ok(h->start_wall_ns) || !wall_ok(h->process_start_ns)) {
		snprintf(why, sizeof why, "Start_Wall_Ns %lld or Process_Start_Ns %lld is not a plausible time (|ns| < 2^62)",
			 (long long)h->start_wall_ns, (long long)h->process_start_ns);
	}
	for (uint32_t i = 0; !why[0] && i < c->info.type_stats_count; i++) {
		const rec_type_stats *ts = &c->tstats[i];
		/* Each term is at most Raw_Size (< 2^32) after the checks below,
		 * and there are fewer than 2^32 terms: the sums cannot wrap. */
		if (ts->count > ev->items || ts->bytes > ev->raw ||
		    ts->count * REC_MIN_RECORD_BYTES > ts->bytes) {
			snprintf(why, sizeof why, "STATS: type %u has %llu events in %llu bytes (EVENTS: %u in %u)",
				 ts->type_id, (unsigned long long)ts->count,
				 (unsigned long long)ts->bytes, ev->items, ev->raw);
			break;
		}
		count_sum += ts->count;
		bytes_sum += ts->bytes;
	}
	if (!why[0] && (count_sum > ev->items || bytes_sum > ev->raw))
		snprintf(why, sizeof why, "STATS count %llu events in %llu bytes, EVENTS holds %u in %u",
			 (unsigned long long)count_sum, (unsigned long long)bytes_sum, ev->items, ev->raw);
	if (!why[0] && ev->items) {
		int64_t f = (int64_t)(c->info.first_ticks - h->start_ticks);
		int64_t l = (int64_t)(c->info.last_ticks - h->start_ticks);
		rd_i128 fw = wall_of(h, f), lw = wall_of(h, l);
		if (l < f)
			snprintf(why, sizeof why, "STATS Last_Delta %lld before First_Delta %lld",
				 (long long)l, (long long)f);
		else if (!wall_ok(fw) || !wall_ok(lw))
			snprintf(why, sizeof why, "event times out of range (First_Delta %lld, Last_Delta %lld ticks at %llu Hz from %lld ns)",
				 (long long)f, (long long)l, (unsigned long long)h->tick_frequency,
				 (long long)h->start_wall_ns);
	}
	if (!why[0])
		return REC_OK;
	return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, c->info.offset,
				    "implausible counts: %s",
				    why);
}
