/* SPDX-License-Identifier: MIT */
/*
 * archive.h - the reader's current chunk as the archive tools (rec-check,
 * rec-recover, rec-cat, rec-split, rec-scrub) and rec-summary use it beyond
 * rec.h: its exact bytes, to copy intact chunks into a new file byte for
 * byte (a file is a plain sequence of chunks, so any sequence of whole
 * chunks is a valid recording), its checksums, and its events of one type.
 * Counter totals, declared here before, are in rec/counters.h (included
 * below, so that existing includes keep building).
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

#ifdef __cplusplus
}
#endif
#include "rec/counters.h" /* compatibility: rec_counters_* moved there */

#endif /* LIBREC_ARCHIVE_H */
