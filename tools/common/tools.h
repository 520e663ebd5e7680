/* SPDX-License-Identifier: MIT */
/*
 * tools.h - the work of every rec-* tool as a function of one shape,
 *   int rec_TOOL_run(const opts *, inputs, [n,] FILE *out, FILE *err):
 * each tool's main() only parses its arguments into these options and calls
 * its run function, which the unit tests (tests/unit/tools/test_tools.c) and the
 * fuzzing harnesses (fuzz/) also call, the latter on inputs in memory.
 *
 * The run functions are defined in tools/rec-TOOL.c; building that file
 * with -DREC_TOOL_NO_MAIN leaves main() out.  They write the tool's output
 * on out (through the fast buffer of cli.h) and its messages on err (the
 * streams stay set afterwards: see rec_cli_set_streams), never exit (except
 * on out-of-memory through rec_cli_xmalloc), and return the tool's exit code
 * (REC_EXIT_*).  They are not reentrant (module-level caches), and need
 * rec_cli_init() to have been called once.  The caller closes out.
 * Usage errors that only the inputs show (no input, '-' twice, an output
 * that is an input) are the run function's: REC_EXIT_USAGE after the
 * message, as main() would exit.
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
	bool json_lines;             /* with json: one event object per line */
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
	bool pprof;                  /* --format pprof: a gzipped profile.proto */
	const char *output;          /* write there instead of out (NULL: out) */
	const char *title;           /* HTML title (pprof: a comment); NULL: default */
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
	uint32_t top;                /* 0: REC_LOCKGRAPH_DEFAULT_TOP in the wait-for
				      * graph (grouped), every lock in the order graph */
	bool all;                    /* --all, --top 0: every lock, thread and edge */
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
	rec_cli_window window;       /* --from/--to */
	const rec_cli_input *baseline; /* --baseline: compare with it (before); NULL: none */
} rec_view_tool_opts;
/* The view over the inputs, read one after another.  An unknown view, a
 * --by on a view without it, a --type no type of the inputs has (the
 * shared type-name check of cli.h) or a --by FIELD that no event has is a
 * usage error (REC_EXIT_USAGE, before any output). */
int rec_view_run(const rec_view_tool_opts *o, const rec_cli_input *in, size_t n, FILE *out,
		 FILE *err);

/* ---- the archive tools ----
 * Their output recording (rec-cat, rec-recover, rec-scrub) goes to the
 * file named by output (cli.h's rec_cli_outfile: NULL or "-" is standard
 * output's descriptor, not out); out gets what they print on standard
 * output (rec-check's verdicts, rec-split's pieces, the summary). */

/* ---- rec-cat ---- */
typedef struct rec_cat_opts {
	const char *output;          /* -o OUT; NULL: standard output */
	bool keep_order, quiet;
} rec_cat_opts;
/* The inputs must be files (read twice): '-' or memory is a usage error,
 * and so is an output that is one of them. */
int rec_cat_run(const rec_cat_opts *o, const rec_cli_input *in, size_t n, FILE *out, FILE *err);

/* ---- rec-check ---- */
typedef struct rec_check_opts {
	bool json, quiet;
} rec_check_opts;
int rec_check_run(const rec_check_opts *o, const rec_cli_input *in, size_t n, FILE *out,
		  FILE *err);

/* ---- rec-recover ---- */
typedef struct rec_recover_opts {
	const char *output;          /* OUT ("-": standard output) */
	bool quiet;
} rec_recover_opts;
int rec_recover_run(const rec_recover_opts *o, const rec_cli_input *in, FILE *out, FILE *err);

/* ---- rec-split ---- */
enum { REC_SPLIT_BY_RUN = 1, REC_SPLIT_BY_TIME, REC_SPLIT_BY_SIZE };
typedef struct rec_split_opts {
	int by;                      /* REC_SPLIT_BY_* */
	uint64_t window_ns;          /* --by time=DUR (> 0) */
	uint64_t size;               /* --by size=SIZE */
	const char *prefix;          /* NULL: the input's name without .rec */
} rec_split_opts;
int rec_split_run(const rec_split_opts *o, const rec_cli_input *in, FILE *out, FILE *err);

/* ---- rec-scrub ---- */
typedef struct rec_scrub_opts {
	const char *output;          /* OUT ("-": standard output) */
	const char *const *include, *const *exclude, *const *blank; /* type names, TYPE.FIELD */
	size_t ninclude, nexclude, nblank;
	bool quiet;
	uint32_t layout;             /* rec_events_layout of OUT; 0: as IN's runs */
} rec_scrub_opts;
/* Nothing to do (no list and no layout) is a usage error. */
int rec_scrub_run(const rec_scrub_opts *o, const rec_cli_input *in, FILE *out, FILE *err);

/* ---- rec-export (Parquet, JSON lines; --format pprof is rec_flame_run) ---- */
typedef struct rec_export_opts {
	const char *dir;          /* -o DIR: the archive's root */
	unsigned format;          /* rec_ds_format of sql/: REC_DS_PARQUET, REC_DS_JSONL */
	size_t group_rows;        /* rows per Parquet row group */
} rec_export_opts;
/* No DIR, no input, '-' as an input or a DIR that is a file: usage errors. */
int rec_export_run(const rec_export_opts *o, const rec_cli_input *in, size_t n, FILE *out,
		   FILE *err);

/* ---- rec-sql ---- */
typedef struct rec_sql_tool_opts {
	unsigned format;          /* sql_out_format of sql/sql.h: text, csv, jsonl */
	const char *query;        /* NULL: --schema, --export or the interactive shell */
	const char *export_path;  /* --export FILE.db */
	bool schema, stats;
} rec_sql_tool_opts;
/* --schema with --export or a query, and '-' as an input, are usage errors. */
int rec_sql_tool_run(const rec_sql_tool_opts *o, const rec_cli_input *in, size_t n, FILE *out,
		     FILE *err);

/* ---- rec-symbolize ---- */
typedef struct rec_symbolize_opts {
	const char *output;            /* OUT ("-": standard output) */
	const char *const *debug_dirs; /* searched in this order */
	size_t ndebug_dirs;
	bool only_debug_dirs;          /* not /usr/lib/debug after them */
	bool quiet;                    /* no report */
} rec_symbolize_opts;
/* --only-debug-dirs without a directory is a usage error. */
int rec_symbolize_run(const rec_symbolize_opts *o, const rec_cli_input *in, FILE *out, FILE *err);

/* ---- rec-summary ---- */
typedef struct rec_summary_tool_opts {
	bool json;
	uint32_t flags;              /* REC_SUMMARY_* of rec/analysis.h */
} rec_summary_tool_opts;
int rec_summary_tool_run(const rec_summary_tool_opts *o, const rec_cli_input *in, size_t n,
			 FILE *out, FILE *err);
/* ---- rec-report ---- */
typedef struct rec_report_tool_opts {
	bool json;
	uint32_t width;              /* text: wrap at (0: 100) */
	const char *by, *type;
	rec_cli_window window;       /* --from/--to (offsets: from the first input's start) */
	const rec_cli_input *baseline; /* --baseline: compare with it (before); NULL: none */
	const char *output;          /* -o: the HTML page there (tools/report/), not the text */
} rec_report_tool_opts;
struct rec_findings;
/* The findings of the inputs (read twice: the summary, then the events in
 * timestamp order) in *out (NULL when nothing could be computed); the
 * exit code: REC_EXIT_DATA for damaged or unreadable input. */
int rec_report_findings(const rec_report_tool_opts *o, const rec_cli_input *in, size_t n,
			struct rec_findings **out);
int rec_report_run(const rec_report_tool_opts *o, const rec_cli_input *in, size_t n, FILE *out,
		   FILE *err);

/* ---- rec-record ---- */
/* Option values as given (NULL: not given); rec_record_run checks them. */
typedef struct rec_record_opts {
	const char *output;          /* -o FILE; NULL: PROGRAM-PID.rec in the current directory */
	const char *events;          /* --events LIST (the recorder's grammar, ',' between) */
	bool flight;                 /* --flight */
	const char *max_age, *max_size; /* with --flight: DUR, SIZE */
	const char *duration;        /* --duration DUR */
	const char *cpu_hz, *wall_hz; /* --cpu HZ, --wall HZ */
	const char *alloc_interval;  /* --alloc-interval SIZE */
	const char *io_threshold;    /* --io-threshold DUR */
	const char *symbolize;       /* --symbolize on|all|names|off */
	bool follow_forks, quiet;
} rec_record_opts;
/* Runs argv (PROGRAM and its arguments, argv[0] found on PATH) under the
 * preload library, waits for it and reports the recording on err.  Returns
 * the program's exit status (128 + N when signal N killed it), or
 * REC_EXIT_USAGE after the message when it could not be started.  rec-record
 * writes nothing on standard output (the program's). */
int rec_record_run(const rec_record_opts *o, char *const argv[], FILE *err);

#endif /* REC_TOOLS_TOOLS_H */
