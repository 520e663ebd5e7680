/* SPDX-License-Identifier: MIT */
/*
 * stack_agg.h - stack aggregation: the weighted call tree behind flame graphs,
 * built from events read with rec.h's reader.  Streaming: memory grows with
 * the number of distinct stacks (and distinct frame names), never with the
 * number of events.
 *
 * A stack aggregation is a tree of frame names rooted at a virtual root.
 * rec_stackagg_add_event() walks an event's stack root first (outermost
 * caller first; leaf first with REC_STACKAGG_REVERSE), finds or creates the
 * path of frames and adds the weight to the last node ("self" weight).  The
 * aggregated stacks are then iterated root first, sorted.
 *
 * Frame names
 *   - as rec_frame_format() spells it with REC_FRAME_FUNCTION (<rec/rec.h>):
 *     the frame's function when it is known ("handle_request");
 *   - else "MODULE+0xOFFSET": the basename of the module path and the
 *     offset in it ("libc.so.6+0x8f2a0");
 *   - else "0xOFFSET" (the frame's module offset, no module known), or
 *     "[unknown]" for a frame the reader could not resolve at all.
 *   - With REC_STACKAGG_TRIM_RECORDER, a stack starts at its call site
 *     (rec_stack_site()): the leaf, except in recordings made before the
 *     recorder dropped its own frames, whose leading rec_* frames go.
 *   - A stack the recorder cut short (REC_STACK_TRUNCATED) gets a
 *     "[truncated]" frame where its outermost frames are missing.
 *   - With REC_STACKAGG_THREADS the first frame is the thread:
 *     "[NAME tid=OSTID]", "[tid=OSTID]" when unnamed, "[no thread]".
 *   Names never contain ';' (replaced by ':') nor control characters such
 *   as newlines (replaced by ' '), so they can be written as collapsed
 *   stacks "a;b;c 12" as they are.
 *
 * Two weight columns: an aggregation can hold two inputs side by side (a
 * differential flame graph's "before" in column 0 and "after" in column 1);
 * rec_stackagg_begin_input() chooses the column.  A plain aggregation uses
 * column 0 only.
 *
 * One aggregation is used by one thread at a time.
 */
#ifndef LIBREC_STACK_AGG_H
#define LIBREC_STACK_AGG_H

#include "rec/rec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rec_stackagg rec_stackagg;

/* Flags of rec_stackagg_options. */
#define REC_STACKAGG_REVERSE 0x1u  /* leaf first: the callers (icicle) view */
#define REC_STACKAGG_THREADS 0x2u  /* a root frame per thread */
#define REC_STACKAGG_FROM 0x4u     /* keep events at or after from_ns */
#define REC_STACKAGG_TO 0x8u       /* keep events before to_ns */
#define REC_STACKAGG_RELATIVE 0x10u/* from_ns/to_ns are ns since the start of
				    * the input (Start_Wall of the first chunk
				    * seen after rec_stackagg_begin_input()),
				    * not ns since the Unix epoch */
#define REC_STACKAGG_TRIM_RECORDER 0x20u /* start each stack at its call site,
				    * rec_stack_site(): in recordings made
				    * before the recorder dropped its own frames,
				    * the leading rec_* frames go (spec/EVENTS.md);
				    * a stack made of such frames only is kept
				    * whole */
#define REC_STACKAGG_FRAME_INFO 0x40u /* remember what each name was built
				    * from (rec_stackagg_name_info()): module,
				    * build id, address, thread */
#define REC_STACKAGG_LINES 0x80u   /* a named frame with a source line is
				    * "function:line" (REC_FRAME_LINE), so
				    * lines of a function are apart */

typedef struct rec_stackagg_options {
	uint32_t struct_size;       /* sizeof(rec_stackagg_options) */
	uint32_t flags;             /* REC_STACKAGG_* */
	/* POSIX extended regular expressions (regcomp REG_EXTENDED), matched
	 * anywhere in a frame name (anchor with ^ and $).  The thread root frame
	 * is not matched.  include: keep only stacks with at least one frame
	 * matching at least one of them (none given: keep all).  exclude: drop
	 * stacks with a frame matching any of them.  Copied at open. */
	const char *const *include;
	size_t include_count;
	const char *const *exclude;
	size_t exclude_count;
	/* Time window on the event's time (rec_event.wall_ns), used when
	 * REC_STACKAGG_FROM / REC_STACKAGG_TO are set: from_ns <= t < to_ns. */
	int64_t from_ns;
	int64_t to_ns;
	uint64_t reserved[4];       /* must be zero */
} rec_stackagg_options;
#define REC_STACKAGG_OPTIONS_INIT { sizeof(rec_stackagg_options), 0, NULL, 0, NULL, 0, 0, 0, {0, 0, 0, 0} }

/*! rec_stackagg_open() :
 *  An empty aggregation.  opts may be NULL for defaults.
 *  @return REC_OK with *out set (free with rec_stackagg_close()),
 *          REC_ERR_INVALID_ARG for bad options or a regular expression that
 *          does not compile (rec_stackagg_errmsg() of *out says which; *out
 *          is set and must still be closed), REC_ERR_NOMEM. */
REC_API rec_status rec_stackagg_open(rec_stackagg **out, const rec_stackagg_options *opts);
/*! rec_stackagg_close() : NULL is a no-op. */
REC_API void rec_stackagg_close(rec_stackagg *a);

/*! rec_stackagg_begin_input() :
 *  Start a new input (a recording, a reader): weights of the events added
 *  next go to column (0 or 1), and the relative time window starts again from
 *  the next event's chunk.  Call it between events of different readers: the
 *  aggregation caches what it learnt of stack and thread ids per run (Run_Id,
 *  Pid, Process_Start_Ns; ids keep their meaning for a run, spec/FORMAT.md
 *  "Pools"), so one input's ids must not be taken for another's.  An
 *  aggregation starts with column 0 as if this had been called. */
REC_API rec_status rec_stackagg_begin_input(rec_stackagg *a, unsigned column);

/*! rec_stackagg_add_event() :
 *  Add weight for ev's stack (an event from rec_reader_next_event(), used
 *  only during the call).  An event without a stack (or with depth 0), out
 *  of the time window or dropped by include/exclude is counted in the
 *  statistics and otherwise ignored.  Weights add up saturating at
 *  UINT64_MAX.
 *  @return REC_OK, REC_ERR_NOMEM (the aggregation stays usable: the event is
 *          not counted), REC_ERR_LIMIT beyond 2^32 - 2 tree nodes. */
REC_API rec_status rec_stackagg_add_event(rec_stackagg *a, const rec_event *ev, uint64_t weight);

/*! rec_stackagg_add_frames() :
 *  Add weight for a stack given as frame names, root first (used as they
 *  are, except ';' and control characters replaced; no filter, no window
 *  applied).  For stacks that do not come from a reader. */
REC_API rec_status rec_stackagg_add_frames(rec_stackagg *a, const char *const *frames,
					   size_t depth, uint64_t weight);

/*! rec_stackagg_add_event_pair() :
 *  As rec_stackagg_add_event(), but with two measures of the same event:
 *  w0 is added to column 0 and w1 to column 1 whatever the input's column
 *  (for an aggregation of one input that keeps, say, an event count beside
 *  a total: rec-flame --format pprof).  Not for a differential aggregation. */
REC_API rec_status rec_stackagg_add_event_pair(rec_stackagg *a, const rec_event *ev, uint64_t w0,
					       uint64_t w1);

/* What a frame name stands for (REC_STACKAGG_FRAME_INFO). */
#define REC_STACKAGG_NAME_OTHER 0u     /* "[truncated]", "[unknown]", a name given to
					* rec_stackagg_add_frames(), or no FRAME_INFO */
#define REC_STACKAGG_NAME_FRAME 1u     /* a frame of a stack */
#define REC_STACKAGG_NAME_THREAD 2u    /* a thread root frame "[NAME tid=N]" */
#define REC_STACKAGG_NAME_NO_THREAD 3u /* the root frame "[no thread]" */
typedef struct rec_stackagg_frame_info {
	uint32_t kind;          /* REC_STACKAGG_NAME_* */
	/* FRAME: of the first frame the name was built from (frames of other
	 * modules or other pcs of the same function share the name) */
	const char *function;   /* "" if unknown */
	const char *module;     /* module path, "" if unknown */
	const char *build_id;   /* lowercase hex, "" if unknown */
	uint64_t module_base;   /* the module's load address, 0 if unknown */
	uint64_t module_offset; /* the function's start in the module
				 * (Module_Offset - Function_Offset) when the
				 * function is known, else the frame's pc offset */
	/* THREAD */
	const char *thread_name; /* "" if unnamed */
	uint64_t os_tid;
	/* FRAME (format 1.2): the first frame's source file ("" if unknown)
	 * and line (0 if unknown) */
	const char *file;
	uint32_t line;
} rec_stackagg_frame_info;

/*! rec_stackagg_name_info() :
 *  What name (a frame name of this aggregation, as iterated) stands for.
 *  Strings are valid until rec_stackagg_close().
 *  @return REC_OK (kind OTHER for a name not built from a frame or thread,
 *          or when the aggregation was opened without
 *          REC_STACKAGG_FRAME_INFO), REC_ERR_NOT_FOUND for a name the
 *          aggregation does not have. */
REC_API rec_status rec_stackagg_name_info(const rec_stackagg *a, const char *name,
					   rec_stackagg_frame_info *out);

/* Counts of what was added, per the current state. */
typedef struct rec_stackagg_stats {
	uint64_t events;          /* events given to rec_stackagg_add_event() */
	uint64_t aggregated;      /* of those, aggregated */
	uint64_t no_stack;        /* skipped: no stack or an empty one */
	uint64_t outside_window;  /* skipped: outside the time window */
	uint64_t filtered;        /* skipped: by include or exclude */
	uint64_t weight[2];       /* total weight aggregated per column */
	uint64_t stacks;          /* distinct stacks with a non-zero weight */
	uint64_t nodes;           /* tree nodes (distinct paths), root excluded */
	uint64_t names;           /* distinct frame names */
} rec_stackagg_stats;
REC_API void rec_stackagg_get_stats(const rec_stackagg *a, rec_stackagg_stats *st);

/* One aggregated stack, as iterated. */
typedef struct rec_stackagg_stack {
	size_t depth;
	const char *const *frames; /* depth names, root first */
	uint64_t weight[2];        /* this exact stack's weight per column */
	uint64_t total[2];         /* weight of this stack and every stack it is
				    * a prefix of (the width of its last frame in
				    * a flame graph) */
} rec_stackagg_stack;

/*! rec_stackagg_rewind() :
 *  Prepare to iterate from the first stack: sorts the tree and computes
 *  totals (O(nodes log nodes)).  Call again after adding more.
 *  @return REC_OK or REC_ERR_NOMEM. */
REC_API rec_status rec_stackagg_rewind(rec_stackagg *a);

/*! rec_stackagg_next() :
 *  The next stack with a non-zero weight in some column, in order: frame by
 *  frame from the root, names compared bytewise (strcmp), a stack before
 *  the stacks it is a prefix of.  That is a depth-first walk of the tree, so
 *  consecutive stacks share their common prefix.
 *  @return REC_OK with *out valid until the next call on a, REC_END after the
 *          last, REC_ERR_STATE without rec_stackagg_rewind() since the last
 *          change. */
REC_API rec_status rec_stackagg_next(rec_stackagg *a, rec_stackagg_stack *out);

/*! rec_stackagg_errmsg() : text of the last failure; never NULL. */
REC_API const char *rec_stackagg_errmsg(const rec_stackagg *a);

#ifdef __cplusplus
}
#endif
#endif /* LIBREC_STACK_AGG_H */
