/* SPDX-License-Identifier: MIT */
/*
 * counters.h - counter totals over runs and restarts (rec.Counter events,
 * what rec-summary's counters show): the sum of the positive deltas within
 * each run, with resets counted, never last minus first.  Built on the
 * public reader API of rec.h and rec_reader_chunk_events() (rec/archive.h).
 */
#ifndef LIBREC_COUNTERS_H
#define LIBREC_COUNTERS_H

#include "rec/rec.h"

#ifdef __cplusplus
extern "C" {
#endif

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
#endif /* LIBREC_COUNTERS_H */
