/* SPDX-License-Identifier: MIT */
/*
 * tools.h - the work of rec-print, rec-flame, rec-lockgraph and
 * rec-timeline as functions: each tool's main() only parses its arguments
 * into these options and calls its run function, which the fuzzing
 * harnesses (fuzz/) also call on inputs in memory.
 *
 * The run functions are defined in tools/rec-TOOL.c; building that file
 * with -DREC_TOOL_NO_MAIN leaves main() out.  They write the tool's output
 * on out (through the fast buffer of cli.h) and its messages on err (the
 * streams stay set afterwards: see rec_cli_set_streams), never exit (except
 * on out-of-memory through rec_cli_xmalloc), and return the tool's exit code
 * (REC_EXIT_*).  They are not reentrant (module-level caches), and need
 * rec_cli_init() to have been called once.  The caller closes out.
 */
#ifndef REC_TOOLS_TOOLS_H
#define REC_TOOLS_TOOLS_H

#include "cli.h"
#include "rec/lock_graph.h"
#include "rec/stack_agg.h"

/* ---- rec-print ---- */
typedef struct rec_print_opts {
	const char *const *events;   /* --events patterns (exact or glob) */
	size_t nevents;
	const char *const *cats;     /* --categories patterns, no trailing '/' */
	size_t ncats;
	bool json, unsorted;
	uint32_t stack_depth;        /* frames per stack */
} rec_print_opts;
/* Prints the inputs one after another.  A pattern that matches nothing is a
 * usage error (REC_EXIT_USAGE, message on err): before any output when every
 * input is rereadable, else after. */
int rec_print_run(const rec_print_opts *o, const rec_cli_input *in, size_t n, FILE *out,
		  FILE *err);

/* ---- rec-flame ---- */
typedef struct rec_flame_opts {
	const char *event;           /* event type */
	bool event_given;            /* --event given: a type no input has is a usage
				      * error (the default rec.CPUSample is not checked) */
	const char *weight;          /* field name; NULL: the type's preset */
	bool html;
	const char *output;          /* write there instead of out (NULL: out) */
	const char *title;           /* HTML title; NULL: default */
	double min_pct;              /* --minwidth as a percentage, < 0: not */
	uint64_t min_weight;         /* --minwidth as a weight (min_pct < 0) */
	bool min_set;
	const char *const *include, *const *exclude; /* regular expressions */
	size_t ninclude, nexclude;
	uint32_t flags;              /* REC_STACKAGG_THREADS, _REVERSE */
	rec_cli_window window;       /* --from/--to (offsets: from each input's start) */
	bool keep_rec;               /* keep librec's own leaf frames */
} rec_flame_opts;
/* The flame graph of in, or with before != NULL the differential one
 * (before -> in).  Usage errors found only on reading (a type without
 * stacks, no such --weight field, a bad regular expression) return
 * REC_EXIT_USAGE before any output. */
int rec_flame_run(const rec_flame_opts *o, const rec_cli_input *in, const rec_cli_input *before,
		  FILE *out, FILE *err);

/* ---- rec-lockgraph ---- */
typedef struct rec_lockgraph_tool_opts {
	bool order;                  /* the lock-order graph, else the wait-for graph */
	const char *format;          /* dot, svg, png or pdf */
	const char *output;          /* write there instead of out (NULL: out) */
	int64_t min_wait_ns;
	uint32_t top;
	const char *thread;
	rec_cli_window window;       /* --from/--to */
	bool check;                  /* exit 3 on a lock-order cycle */
} rec_lockgraph_tool_opts;
#define REC_EXIT_CYCLE 3
int rec_lockgraph_tool_run(const rec_lockgraph_tool_opts *o, const rec_cli_input *in, FILE *out,
			   FILE *err);

/* ---- rec-timeline ---- */
typedef struct rec_timeline_opts {
	const char *output;          /* write there instead of out (NULL: out) */
	const char *const *events;   /* --events: type names or globs (NULL: all) */
	size_t nevents;
	rec_cli_window window;       /* --from/--to */
	const char *thread;          /* --thread NAME|TID (rec_thread_selected) */
} rec_timeline_opts;
int rec_timeline_run(const rec_timeline_opts *o, const rec_cli_input *in, FILE *out, FILE *err);

/* ---- rec-view ---- */
typedef struct rec_view_tool_opts {
	const char *view;            /* a name of rec_view_list() */
	bool json;
	uint32_t width;              /* text: widest line (0: 160) */
	uint32_t top;                /* rows per table (0: all) */
	const char *by, *type, *thread;
	int64_t from, to;            /* --from/--to */
	int from_kind, to_kind;      /* 0 unset, 1 offset from the first event, 2 time */
} rec_view_tool_opts;
/* The view over the inputs, read one after another.  An unknown view, a
 * --by on a view without it, a --type no type of the inputs has (the
 * shared type-name check of cli.h) or a --by FIELD that no event has is a
 * usage error (REC_EXIT_USAGE, before any output). */
int rec_view_run(const rec_view_tool_opts *o, const rec_cli_input *in, size_t n, FILE *out,
		 FILE *err);

#endif /* REC_TOOLS_TOOLS_H */
