/* SPDX-License-Identifier: MIT */
/*
 * rewrite.h - a copy of a recording re-encoded through the writer, chunk by
 * chunk (rewrite.c): what rec-scrub and rec-symbolize share.  Each intact
 * input chunk becomes one output chunk of the same run (Run_Id, Pid,
 * Process_Start, tick frequency), its types, threads, modules, frames and
 * stacks defined once per output run, its events copied value by value; a
 * run that ended with a FINAL chunk still does.  The tool chooses which
 * types stay, how a frame is defined and how an event is written.
 *
 *   static rec_rewrite rw;          // zeroed; set in_name and the hooks
 *   if (!rec_rewrite_open(&rw, out)) ...       // after opening the reader
 *   bool failed = !rec_rewrite_all(&rw, r, &rc);
 *   failed = rec_rewrite_end(&rw, failed);
 *   failed = rec_rewrite_commit(&rw, failed);
 *   rec_rewrite_free(&rw);
 */
#ifndef REC_TOOLS_REWRITE_H
#define REC_TOOLS_REWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "rec/rec.h"

typedef struct rec_rewrite rec_rewrite;
struct rec_rewrite {
	/* set by the tool */
	const char *in_name;   /* IN, in messages */
	void *ctx;             /* for the hooks */
	/* Whether events of type t are copied (NULL: every type). */
	bool (*keep_type)(void *ctx, const rec_type *t);
	/* Define the frame s->frames[i] (inlined functions from first) and its
	 * module (NULL: rec_rewrite_copy_frame, as read). */
	rec_status (*def_frame)(rec_rewrite *rw, const rec_stack *s, uint32_t first, uint32_t i);
	/* Write one event of a kept type (NULL: rec_rewrite_event, unchanged). */
	rec_status (*put_event)(rec_rewrite *rw, const rec_event *ev);
	/* Told of each intact chunk before it is copied (NULL: nothing). */
	void (*chunk_read)(void *ctx, const rec_chunk_info *ci);
	/* The output's EVENTS layout (rec_events_layout); 0: each run's as
	 * its first input chunk has it, so that a copy of a file written for
	 * readers before format 1.3 (one stream) stays readable by them. */
	uint32_t layout;

	/* the output run */
	rec_writer *w;
	rec_cli_outfile of;
	rec_sink sink; /* onto of */
	bool open;
	bool last_final; /* the run's latest input chunk was FINAL */
	uint64_t run_id, tick_frequency;
	int64_t process_start_ns;
	uint32_t pid;
	/* ids defined in the current output run; aux: the tool's own, cleared
	 * with them at each run */
	rec_cli_idmap types, threads, modules, frames, stacks, aux;
	uint64_t frame_ids[REC_MAX_STACK_DEPTH];

	/* counts */
	uint64_t chunks_in;     /* intact chunks read */
	uint64_t chunks_copied; /* of them, copied */
	uint64_t events_kept, events_removed;
};

/* "OUT is the same file as IN": whether out names the file in reads (not
 * standard input or memory, out not "-"). */
bool rec_rewrite_same_file(const rec_cli_input *in, const char *out);
/* Open OUT (rec_cli_outfile_open) as the writers' sink; false after the
 * message. */
bool rec_rewrite_open(rec_rewrite *rw, const char *out);

/* A writer failure of what ("define_frame"): reported unless the output
 * file's own failure was (then it names OUT once).  Returns st. */
rec_status rec_rewrite_fail(rec_rewrite *rw, rec_status st, const char *what);
/* The string id of s (len bytes) in the current run: 0 for NULL, and for
 * "" when empty_is_none. */
rec_status rec_rewrite_string(rec_rewrite *rw, const char *s, size_t len, bool empty_is_none,
			      uint64_t *id);
/* Thread t (NULL: id 0), defined once per run; *id its id. */
rec_status rec_rewrite_thread(rec_rewrite *rw, const rec_thread *t, uint64_t *id);
/* Module m (NULL: nothing), defined once per run. */
rec_status rec_rewrite_module(rec_rewrite *rw, const rec_module *m);
/* The frame s->frames[i] and its module as read, with its source position
 * and inlined functions (from first). */
rec_status rec_rewrite_copy_frame(rec_rewrite *rw, const rec_stack *s, uint32_t first, uint32_t i);
/* Stack s (NULL: id 0) and its new frames (through def_frame), defined once
 * per run; *id its id. */
rec_status rec_rewrite_stack(rec_rewrite *rw, const rec_stack *s, uint64_t *id);
/* Event ev with every value as read, but the fields blanked[i] (blanked
 * NULL: none) written as "", empty or 0; each blanked field written is
 * added to *nblanked. */
rec_status rec_rewrite_event(rec_rewrite *rw, const rec_event *ev, const bool *blanked,
			     uint64_t *nblanked);

/* Every intact chunk of r copied into the output.  false if the output
 * failed (reported); *rc becomes REC_EXIT_DATA after a damaged chunk or
 * one that could not be copied (reported). */
bool rec_rewrite_all(rec_rewrite *rw, rec_reader *r, int *rc);
/* Finish the output run (a FINAL chunk if the input's had one), or abandon
 * it when failed.  Returns whether anything failed. */
bool rec_rewrite_end(rec_rewrite *rw, bool failed);
/* Commit OUT, or discard it when failed.  Returns whether anything failed. */
bool rec_rewrite_commit(rec_rewrite *rw, bool failed);
/* Free the maps; rw is zeroed. */
void rec_rewrite_free(rec_rewrite *rw);

#endif /* REC_TOOLS_REWRITE_H */
