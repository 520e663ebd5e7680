/* SPDX-License-Identifier: MIT */
/*
 * archive.h - what the archive tools (rec-check, rec-recover, rec-cat,
 * rec-split, rec-scrub) and rec-summary need beyond rec.h:
 *
 *   - the exact bytes of the reader's current chunk, to copy intact chunks
 *     into a new file byte for byte (a file is a plain sequence of chunks, so
 *     any sequence of whole chunks is a valid recording);
 *   - counter totals over runs and restarts (rec.Counter events): the sum of
 *     the positive deltas within each run, with resets counted, never last
 *     minus first.
 */
#ifndef LIBREC_ARCHIVE_H
#define LIBREC_ARCHIVE_H

#include "rec/rec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Raw chunk bytes                                                          */
/* ------------------------------------------------------------------------ */

/*! rec_reader_chunk_write() :
 *  Write the current chunk (the one rec_reader_next_chunk() last returned)
 *  to sink exactly as it is in the input: Header_Size header bytes, then
 *  Payload_Size payload bytes (info->size bytes in all).  Call
 *  rec_reader_verify_chunk() first to copy only intact chunks: this function
 *  checks nothing but that the header still reads the same.
 *  The bytes are read again from the input (file or memory).  On a pipe the
 *  header is no longer buffered: it is re-encoded from the decoded fields and
 *  used only if its Header_Checksum equals the stored one (a 1.0 header, 128
 *  bytes, whose Unused bytes are zero, as every 1.0 writer makes them);
 *  otherwise REC_ERR_UNSUPPORTED.  The payload is taken from the reader's
 *  loaded copy when it has one (always after a successful verify).
 *  @return REC_OK, REC_ERR_STATE (no current chunk), REC_ERR_IO (the sink
 *          failed: its negative errno is in errno), a read error, or
 *          REC_ERR_UNSUPPORTED as above; rec_reader_problem() says what. */
REC_API rec_status rec_reader_chunk_write(rec_reader *r, const rec_sink *sink);

/* What rec_reader_next_intact() met so far (zero it before the first call). */
typedef struct rec_intact_tally {
	uint64_t chunks;        /* chunks that verified completely */
	uint64_t events;        /* their events */
	uint64_t bytes;         /* their bytes, headers included */
	uint64_t damaged;       /* chunks reported as problems (unsupported included) */
	uint64_t damaged_bytes; /* bytes of the damaged chunks whose header held */
	uint64_t unsupported;   /* of damaged: chunks of a newer major format version */
	uint64_t problems;      /* problems returned, in chunks or between them */
	uint32_t stopped;       /* 1: the last problem ends reading (out of memory,
				 * or a read error outside any chunk) */
	uint32_t reserved0;
} rec_intact_tally;

/*! rec_reader_next_intact() :
 *  rec_reader_next_chunk(), then rec_reader_verify_chunk(): the loop of the
 *  tools that use only intact chunks (rec-check, rec-recover, rec-cat,
 *  rec-split, rec-scrub), counted in *tally.
 *  @return REC_OK with *info: the next chunk, verified completely (copy it
 *          with rec_reader_chunk_write()); REC_END at the end of the input;
 *          or the error of a damaged chunk (or of bytes that are not one):
 *          rec_reader_problem() says where and what.  Call again to go on,
 *          unless tally->stopped is set. */
REC_API rec_status rec_reader_next_intact(rec_reader *r, const rec_chunk_info **info,
					  rec_intact_tally *tally);

/*! rec_reader_chunk_checksums() : Header_Checksum and Payload_Checksum of
 *  the current chunk as stored (a cheap key to find duplicate chunks; equal
 *  keys still need a byte comparison).  REC_ERR_STATE without a chunk. */
REC_API rec_status rec_reader_chunk_checksums(const rec_reader *r, uint32_t *header_checksum,
					      uint32_t *payload_checksum);

/* Called for each event by rec_reader_chunk_events(); ev is valid during the
 * call only.  Return REC_OK to go on; anything else stops and is returned. */
typedef rec_status (*rec_chunk_event_fn)(void *opaque, const rec_event *ev);

/*! rec_reader_chunk_events() :
 *  Call fn, in file order, for every event of the current chunk (the one
 *  rec_reader_next_chunk() last returned) whose type is named type_name.
 *  Records of other types are stepped over by their Size without being
 *  decoded, and nothing is loaded or decompressed when the chunk's
 *  statistics count no event of that type: this is how a summary reads a
 *  few rec.Counter events out of chunks of millions of others.  It does
 *  not move the iteration of rec_reader_next_event().
 *  @return REC_OK, REC_ERR_STATE (no current chunk), what fn returned, or
 *          the error of a damaged chunk (rec_reader_problem() says where). */
REC_API rec_status rec_reader_chunk_events(rec_reader *r, const char *type_name,
					   rec_chunk_event_fn fn, void *opaque);

/* ------------------------------------------------------------------------ */
/* Counter totals                                                           */
/* ------------------------------------------------------------------------ */
typedef struct rec_counters rec_counters;

/* One counter (rec.Counter events with this "name"), over everything added. */
typedef struct rec_counter_total {
	const char *name;
	uint64_t total;       /* sum over runs of what each run counted from its first sample
			       * (spec/EVENTS.md, rec.Counter); stays at UINT64_MAX */
	uint64_t resets;      /* drops within a run that are not wraps */
	uint64_t samples;     /* rec.Counter events seen */
	uint64_t runs;        /* runs that have at least one sample */
	uint64_t last_value;  /* value of the latest sample (in the order added) */
} rec_counter_total;

/*! rec_counters_open() : an empty set of counters; free with rec_counters_close(). */
REC_API rec_status rec_counters_open(rec_counters **out);
/*! rec_counters_close() : NULL is a no-op. */
REC_API void rec_counters_close(rec_counters *c);

/*! rec_counters_add_event() :
 *  Take one event into account: events that are not rec.Counter (or lack a
 *  string "name" and an unsigned "value") are ignored.  A run is the chunk's
 *  Run_Id, Pid and Process_Start_Ns.  Within a run, samples must come in
 *  time order (read with REC_READ_ORDERED, or one run's chunks in sequence):
 *    - the first sample of a counter in a run is its start (not a delta:
 *      the recorder samples a counter when it is created, at 0, and when a
 *      recording opens);
 *    - a higher value adds (value - previous) to the total;
 *    - a value at least 2^63 lower is a wrap past 2^64 - 1: it adds
 *      (value - previous) mod 2^64;
 *    - any other lower value is a reset: counted in resets, and counting
 *      went on from 0, so it adds value.
 *  The total stops at UINT64_MAX.
 *  @return REC_OK, or REC_ERR_NOMEM. */
REC_API rec_status rec_counters_add_event(rec_counters *c, const rec_event *ev);

/* Flags of rec_counters_add_reader(). */
#define REC_COUNTERS_EVENTS 0x1u /* every event through rec_reader_next_event(), in
				  * the reader's order (use with REC_READ_ORDERED) */

/*! rec_counters_add_reader() :
 *  rec_counters_add_event() for the rec.Counter events of r (opened by the
 *  caller, who closes it; positioned before its first chunk).
 *  Default (flags 0): chunk by chunk in file order; only the chunks whose
 *  statistics count rec.Counter events are decompressed and decoded, so a
 *  summary stays cheap.  This assumes each run's chunks come in sequence
 *  order (as a recorder writes them, and as rec-cat restores them); do not
 *  open r with REC_READ_ORDERED for this mode.
 *  REC_COUNTERS_EVENTS: iterate every event in the reader's order instead
 *  (with REC_READ_ORDERED: correct for any chunk order, decodes everything).
 *  Damaged chunks are skipped and counted in *damaged (if not NULL).
 *  @return REC_OK, or REC_ERR_NOMEM / REC_ERR_IO / REC_ERR_STATE that
 *          stopped reading. */
REC_API rec_status rec_counters_add_reader(rec_counters *c, rec_reader *r, uint32_t flags,
					   uint64_t *damaged);

/*! rec_counters_add_chunk() :
 *  rec_counters_add_event() for the rec.Counter events of r's current chunk
 *  (the one rec_reader_next_chunk() last returned), through
 *  rec_reader_chunk_events(): a chunk whose statistics count no rec.Counter
 *  event costs nothing, and in the others only rec.Counter records are
 *  decoded.  The chunk's samples are taken in timestamp order (records of
 *  different threads interleave in a chunk).  Call it once per chunk, a
 *  run's chunks in sequence order.
 *  @return REC_OK, REC_ERR_NOMEM, or the reader's error for a damaged
 *          chunk (rec_reader_problem() says what; the samples of the chunk
 *          before the damage are counted). */
REC_API rec_status rec_counters_add_chunk(rec_counters *c, rec_reader *r);

/*! rec_counters_get() : the counters sorted by name; *count gets how many.
 *  Valid until the next add or close. */
REC_API const rec_counter_total *rec_counters_get(rec_counters *c, size_t *count);

#ifdef __cplusplus
}
#endif
#endif /* LIBREC_ARCHIVE_H */
