/* SPDX-License-Identifier: MIT */
/*
 * analysis.h - analyses of recordings that more than one tool needs, built
 * on the public reader API of rec.h only.
 *
 * Summary: what is in one recording or a set of files, from chunk headers,
 * METADATA and STATS alone (no event is decompressed unless verification is
 * asked for): runs and restarts, per-type counts and bytes, totals, and the
 * problems the reader met.  With REC_SUMMARY_COUNTERS also the totals of
 * rec.Counter counters (rec/counters.h): only the rec.Counter records of the
 * chunks that have some are decoded.
 */
#ifndef LIBREC_ANALYSIS_H
#define LIBREC_ANALYSIS_H

#include <stdbool.h>

#include "rec/counters.h"
#include "rec/rec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Summary                                                                  */
/* ------------------------------------------------------------------------ */
typedef struct rec_summary rec_summary;

/* How a run ended, as far as the input shows. */
typedef enum {
	REC_RUN_CLEAN = 0,     /* its last chunk has REC_CHUNK_FINAL */
	REC_RUN_TRUNCATED = 1, /* a file ended inside the run's next chunk */
	REC_RUN_NO_FINAL = 2,  /* no FINAL chunk (crash, kill -9, or still running) */
	REC_RUN_CRASH = 3      /* no FINAL chunk, and a rec.Crash event (a fatal signal) */
} rec_run_end;

/*! rec_run_end_name() : "clean close", "truncated", "no final chunk",
 *  "crash event". */
REC_API const char *rec_run_end_name(rec_run_end end);

/* One recorder run: chunks sharing Run_Id, Pid and Process_Start_Ns. */
typedef struct rec_summary_run {
	uint64_t run_id;
	uint32_t pid;
	int64_t process_start_ns;
	int64_t first_wall_ns;  /* first event's wall time (0 if no event) */
	int64_t last_wall_ns;   /* end of the last event (includes durations) */
	uint64_t chunks;
	uint64_t events;
	uint64_t dropped;
	uint32_t last_sequence; /* highest Chunk_Sequence seen */
	rec_run_end ended;
	const char *file;       /* file holding the run's first chunk */
} rec_summary_run;

/* One event type, merged by name across chunks, runs and files. */
typedef struct rec_summary_type {
	const char *name;       /* "type id N" when a chunk lacks its metadata */
	const char *label;
	const char *category;
	uint64_t count;
	uint64_t bytes;         /* encoded bytes, Size prefix included */
} rec_summary_type;

/* Events lost, by event type and reason (the rec.Dropped events of the
 * input, merged by type name and reason across chunks, runs and files). */
typedef struct rec_summary_drop {
	const char *type;       /* lost events' type name; "type id N" when the chunk
				 * has no metadata for it; "(not known)" for type 0
				 * or a rec.Dropped without a type field */
	uint32_t reason;        /* REC_DROP_* of rec/recorder.h */
	uint64_t count;
} rec_summary_drop;

/*! rec_thread_selected() : whether thread t is the one a user named with
 *  pattern: its OS thread id in decimal, or a glob (fnmatch) on its name.
 *  A NULL pattern selects every thread, even none; a NULL t (an event
 *  without a thread) matches no pattern. */
REC_API bool rec_thread_selected(const char *pattern, const rec_thread *t);

/*! rec_drop_reason_name() : the name of a rec.Dropped reason ("buffer full",
 *  "no buffer", "nested emit", "rejected", "write failed", "throttled"),
 *  NULL for a reason this library does not know. */
REC_API const char *rec_drop_reason_name(uint64_t reason);

/*! rec_drop_reason_text() : one line saying what the reason means, naming
 *  the type ("rejected: fields do not match app.Job, or it names an id the
 *  recorder never defined") into buf (size bytes; always terminated);
 *  type may be NULL.  @return buf. */
REC_API const char *rec_drop_reason_text(uint64_t reason, const char *type, char *buf,
					 size_t size);

/* A problem the reader reported (a damaged chunk, skipped bytes ...). */
typedef struct rec_summary_problem {
	const char *file;
	int64_t chunk;          /* chunk index in its file, or -1 */
	uint64_t offset;
	rec_status status;
	const char *message;
} rec_summary_problem;

/* One input file. */
typedef struct rec_summary_file {
	const char *path;
	uint64_t size;           /* bytes; 0 if unknown (a pipe) */
	uint64_t chunks;         /* chunks read */
	uint64_t chunks_damaged; /* from the reader's statistics */
	uint64_t bytes_skipped;
	uint64_t problems;
	uint64_t unknown_sections; /* sections of a newer minor version, skipped */
} rec_summary_file;

/* Everything at once.  Arrays are owned by the summary and stay valid until
 * the next rec_summary_add_*(), rec_summary_get() or rec_summary_close(). */
typedef struct rec_summary_result {
	size_t file_count;
	const rec_summary_file *files;
	size_t run_count;
	const rec_summary_run *runs;       /* in order of first appearance */
	size_t type_count;
	const rec_summary_type *types;     /* by count descending, then name */
	size_t problem_count;
	const rec_summary_problem *problems; /* in the order met */
	size_t version_count;
	const uint32_t *versions;          /* format versions seen: major << 16 | minor, ascending */
	uint32_t codecs;                   /* bit (1 << codec) for each codec seen */
	uint64_t total_size;               /* sum of the files' sizes */
	uint64_t chunks;                   /* chunks read */
	uint64_t chunks_damaged;           /* reader statistics, summed */
	uint64_t bytes_skipped;
	uint64_t unknown_sections;         /* newer-minor sections skipped, summed */
	uint64_t events;
	uint64_t dropped;
	uint64_t restarts;                 /* runs - 1 (0 when at most one run) */
	int64_t first_wall_ns, last_wall_ns; /* over all events; 0 if none */
	/* Added after 0.1.0 (appended: the layout above is unchanged). */
	size_t counter_count;
	const rec_counter_total *counters; /* by name; only with REC_SUMMARY_COUNTERS */
	uint64_t chunks_unsupported;       /* chunks of an unknown major format version,
					    * stepped over (also in chunks_damaged) */
	size_t drop_count;
	const rec_summary_drop *drops;     /* only with REC_SUMMARY_DROPS: by count
					    * descending, then type, then reason */
	uint64_t drops_unread;             /* always 0 (kept for binary compatibility):
					    * a chunk whose rec.Dropped records cannot be
					    * read is a damaged chunk, not counted at all */
	uint64_t chunks_split;             /* chunks read whose EVENTS are split in four
					    * streams (format 1.3, REC_CHUNK_SPLIT_EVENTS):
					    * what a reader before 1.3 refuses */
} rec_summary_result;

/* Flags for rec_summary_add_*(). */
#define REC_SUMMARY_VERIFY 0x1u   /* also rec_reader_verify_chunk() every chunk */
#define REC_SUMMARY_COUNTERS 0x2u /* also counter totals (rec_counters_add_chunk()):
				   * decodes the rec.Counter records of the chunks
				   * that have some; a damaged one is a problem */
#define REC_SUMMARY_DROPS 0x4u    /* also drops by type and reason: decodes the
				   * rec.Dropped records of the chunks that have
				   * some; a damaged one is a problem */

/*! rec_summary_open() : an empty summary; free with rec_summary_close(). */
REC_API rec_status rec_summary_open(rec_summary **out);
/*! rec_summary_close() : NULL is a no-op. */
REC_API void rec_summary_close(rec_summary *s);

/*! rec_summary_add_path() :
 *  Read one file ("-" is standard input) into the summary.  Problems in the
 *  file are recorded (see rec_summary_result.problems), not returned.
 *  @return REC_OK, or an error that stopped reading the file (cannot open
 *          it, out of memory); rec_summary_errmsg() says what. */
REC_API rec_status rec_summary_add_path(rec_summary *s, const char *path, uint32_t flags);

/*! rec_summary_add_reader() :
 *  As rec_summary_add_path() from a reader the caller opened (and closes),
 *  positioned before its first chunk.  name is used for runs and problems. */
REC_API rec_status rec_summary_add_reader(rec_summary *s, rec_reader *r, const char *name,
					  uint32_t flags);

/*! rec_summary_get() : the summary of everything added so far (never NULL
 *  for a valid s; if sorting memory is short the types come unsorted). */
REC_API const rec_summary_result *rec_summary_get(rec_summary *s);

/*! rec_summary_errmsg() : text of the last failure; never NULL. */
REC_API const char *rec_summary_errmsg(const rec_summary *s);

#ifdef __cplusplus
}
#endif
#endif /* LIBREC_ANALYSIS_H */
