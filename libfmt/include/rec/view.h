/* SPDX-License-Identifier: MIT */
/*
 * view.h - views: predefined tables that answer questions about a recording
 * (which lock made requests wait and what its holder was doing, where memory
 * is allocated, what ran before the first request), computed while the
 * events stream by, in the shape of `jfr view`.  Built on rec.h's reader
 * only; the rec-view tool prints them as aligned text or JSON.
 *
 * Memory follows the distinct keys of a view (event types, sites, locks,
 * threads, --by values, live sampled blocks), never the number of events:
 * durations go into log-linear histograms (rec_histogram below, relative
 * error at most 1/256), never into a sorted list of all values.
 *
 * Use:
 *   rec_view_open(&v, &opts);                    // opts.view = "latency", ...
 *   for each input: rec_view_begin_input(v);
 *       (optional) rec_reader_select_types(r, rec_view_type_filter, v);
 *       for each event of a reader opened with REC_READ_ORDERED:
 *           rec_view_add_event(v, &ev);
 *   rec_view_add_summary(v, res);                // the "recording" view only
 *   rec_view_get(v, &tables, &n);                // then print them
 *   rec_view_close(v);
 *
 * Events must come in timestamp order (REC_READ_ORDERED): the views that
 * relate events of one thread to a span or a wait (requests, startup,
 * contention-by-*, allocation-by-span) rely on it.  One view is used by one
 * thread at a time.
 */
#ifndef LIBREC_VIEW_H
#define LIBREC_VIEW_H

#include <stdbool.h>
#include "rec/analysis.h"
#include "rec/rec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Latency histogram                                                        */
/* ------------------------------------------------------------------------ */

/* A log-linear histogram of u64 values (nanoseconds, bytes): exact below
 * 128; above, 128 buckets per power of two.  A percentile is the middle of
 * the bucket holding the value of that rank (nearest rank: the
 * ceil(p/100 * count)-th smallest), clamped to the exact minimum and
 * maximum, so it is within REC_HISTOGRAM_REL_ERROR (1/256) of the true
 * value of that rank.  Memory: 1 KiB per power of two holding values (at
 * most 58 KiB).  Two histograms merge exactly (counts add). */
typedef struct rec_histogram rec_histogram;
#define REC_HISTOGRAM_SUB 128
#define REC_HISTOGRAM_REL_ERROR (1.0 / 256.0)

/*! rec_histogram_open() : an empty histogram; free with rec_histogram_close(). */
REC_API rec_status rec_histogram_open(rec_histogram **out);
/*! rec_histogram_close() : NULL is a no-op. */
REC_API void rec_histogram_close(rec_histogram *h);
/*! rec_histogram_add() : count one value.  @return REC_OK or REC_ERR_NOMEM
 *  (the value is not counted). */
REC_API rec_status rec_histogram_add(rec_histogram *h, uint64_t v);
/*! rec_histogram_merge() : add every value of from into into. */
REC_API rec_status rec_histogram_merge(rec_histogram *into, const rec_histogram *from);
REC_API uint64_t rec_histogram_count(const rec_histogram *h);
REC_API uint64_t rec_histogram_min(const rec_histogram *h);   /* exact; 0 if empty */
REC_API uint64_t rec_histogram_max(const rec_histogram *h);   /* exact; 0 if empty */
REC_API double rec_histogram_mean(const rec_histogram *h);    /* exact sum / count */
/*! rec_histogram_percentile() : pct in [0, 100]; a rank of 1 (pct 0) gives
 *  the exact minimum, the last rank (pct 100) the exact maximum; 0 for an
 *  empty histogram. */
REC_API uint64_t rec_histogram_percentile(const rec_histogram *h, double pct);
/*! rec_histogram_count_below() : the values in the buckets that lie below
 *  v: exactly the number of values < v when v is a bucket boundary (below
 *  128, or a number of at most 8 significant bits such as a power of two);
 *  else the bucket holding v counts when its lowest value is below v.  For
 *  drawing the histogram with bins of one's own. */
REC_API uint64_t rec_histogram_count_below(const rec_histogram *h, uint64_t v);
/*! rec_histogram_memory() : bytes the histogram holds (for tests). */
REC_API size_t rec_histogram_memory(const rec_histogram *h);

/* ------------------------------------------------------------------------ */
/* Views                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct rec_view rec_view;

/* The views there are, for `rec-view --list`. */
typedef struct rec_view_info {
	const char *name;        /* "latency" */
	const char *description; /* one line */
	bool by;                 /* takes a --by FIELD */
} rec_view_info;
/*! rec_view_list() : every view, in a fixed order; the array is static. */
REC_API const rec_view_info *rec_view_list(size_t *count);

/* How a column's values are to be shown. */
typedef enum {
	REC_VIEW_TEXT = 0,     /* cell.text */
	REC_VIEW_COUNT = 1,    /* cell.u */
	REC_VIEW_DURATION = 2, /* cell.u nanoseconds */
	REC_VIEW_BYTES = 3,    /* cell.u bytes */
	REC_VIEW_PERCENT = 4,  /* cell.f percent (0-100) */
	REC_VIEW_OFFSET = 5,   /* cell.i nanoseconds since the first event of the input */
	REC_VIEW_TIME = 6      /* cell.i nanoseconds since the Unix epoch */
} rec_view_kind;

typedef struct rec_view_column {
	const char *title;  /* "P99" */
	const char *key;    /* JSON key: "p99" */
	rec_view_kind kind;
} rec_view_column;

typedef struct rec_view_cell {
	bool null;          /* no value (e.g. no holder): "-" in text, null in JSON */
	const char *text;   /* REC_VIEW_TEXT */
	uint64_t u;
	int64_t i;
	double f;
} rec_view_cell;

/* One table of a view.  Rows are in the view's order (the heaviest first). */
typedef struct rec_view_table {
	const char *name;   /* JSON key: "latency", "slowest" */
	const char *title;  /* "Latency by Event Type" */
	const char *note;   /* a line under the table, or NULL */
	size_t column_count;
	const rec_view_column *columns;
	size_t row_count;
	const rec_view_cell *cells; /* row_count x column_count, row-major */
	size_t rows_total;  /* rows before --top cut them (>= row_count) */
} rec_view_table;

#define REC_VIEW_FROM 0x1u   /* keep events with from_wall_ns <= start */
#define REC_VIEW_TO 0x2u     /* keep events with start < to_wall_ns */

typedef struct rec_view_options {
	uint32_t struct_size;  /* sizeof(rec_view_options) */
	uint32_t flags;        /* REC_VIEW_* */
	const char *view;      /* a name of rec_view_list() */
	const char *by;        /* a field name to split rows by, or NULL */
	const char *type;      /* the span type (requests, allocation-by-span,
				* startup's first event; latency: only it);
				* NULL: every event type with a duration whose
				* name does not start with "rec." */
	const char *thread;    /* only events of threads named so (a glob) or
				* with this OS tid; NULL: all */
	int64_t from_wall_ns, to_wall_ns; /* with REC_VIEW_FROM / REC_VIEW_TO */
	uint32_t top;          /* rows per table; 0: all (the slowest-spans
				* table of requests: 10) */
	uint32_t reserved32;
	uint64_t reserved[4];  /* must be zero */
} rec_view_options;
#define REC_VIEW_OPTIONS_INIT { sizeof(rec_view_options), 0, NULL, NULL, NULL, NULL, 0, 0, 0, 0, {0, 0, 0, 0} }

/*! rec_view_open() :
 *  @return REC_OK with *out set (free with rec_view_close()),
 *          REC_ERR_INVALID_ARG for an unknown view or bad options (no *out),
 *          REC_ERR_NOMEM. */
REC_API rec_status rec_view_open(rec_view **out, const rec_view_options *opts);
/*! rec_view_close() : NULL is a no-op. */
REC_API void rec_view_close(rec_view *v);
/*! rec_view_begin_input() : the events added next are of a new input (a
 *  file): what waited for later events of the previous one is settled, and
 *  offsets count from the new input's first event. */
REC_API rec_status rec_view_begin_input(rec_view *v);
/*! rec_view_add_event() :
 *  One event from rec_reader_next_event() of a REC_READ_ORDERED reader, used
 *  during the call only.
 *  @return REC_OK, REC_ERR_NOMEM (the view stays usable; the event is not
 *          counted), REC_ERR_INVALID_ARG after rec_view_get(). */
REC_API rec_status rec_view_add_event(rec_view *v, const rec_event *ev);
/*! rec_view_add_summary() : the "recording" view's chunks, runs, restarts
 *  and crashes: rec_summary_get()'s result of the same inputs, copied (other
 *  views ignore it). */
REC_API rec_status rec_view_add_summary(rec_view *v, const rec_summary_result *res);
/*! rec_view_get() :
 *  The view's tables, valid until rec_view_close(v).  Call after the last
 *  event: the first call settles what is pending and builds the tables,
 *  later calls return the same; rec_view_add_event() after it returns
 *  REC_ERR_INVALID_ARG.
 *  @return REC_OK or REC_ERR_NOMEM. */
REC_API rec_status rec_view_get(rec_view *v, const rec_view_table **tables, size_t *count);
/*! rec_view_latency_histogram() : the histogram behind row `row` of the
 *  "latency" view's table (rows as rec_view_get() returned them), valid
 *  until rec_view_close(v); NULL for another view, before rec_view_get()
 *  or for a row out of range. */
REC_API const rec_histogram *rec_view_latency_histogram(const rec_view *v, size_t row);
/*! rec_view_errmsg() : text of the last failure; never NULL. */
REC_API const char *rec_view_errmsg(const rec_view *v);
/*! rec_view_by_found() : with opts.by, whether any event had that field
 *  (false: the --by FIELD names nothing in the input). */
REC_API bool rec_view_by_found(const rec_view *v);
/*! rec_view_type_found() : with opts.type, whether any event was of that
 *  type (false: --type names nothing in the input). */
REC_API bool rec_view_type_found(const rec_view *v);
/*! rec_view_wants_type() : whether the view reads the events of type t
 *  (latency: the types with a duration; contention-by-*: lock waits and
 *  what tells what a holder did; hot-functions: CPU samples ...; opts.type's
 *  type always).  Its tables are the same whether the events of the other
 *  types are added or not, so a reader may leave them out:
 *  rec_reader_select_types(r, rec_view_type_filter, v). */
REC_API bool rec_view_wants_type(const rec_view *v, const rec_type *t);
/*! rec_view_type_filter() : rec_view_wants_type() as a rec_type_filter,
 *  ctx the rec_view. */
REC_API int rec_view_type_filter(void *ctx, const rec_type *t);
/*! rec_view_digest_type() : the type whose events the view can take as
 *  digests (rec.CPUSample, of which contention-by-* and requests need the
 *  time, thread and weight, startup the stack too), NULL for none (the
 *  other views; any view with opts.type): a reader may give them so, with
 *  the same tables:
 *  rec_reader_digest_type(r, rec_view_digest_type(v), rec_view_add_digests, v).
 *  (What a view holds of the digests read ahead of the events is a few
 *  chunks' worth; startup fails with REC_ERR_LIMIT, rather than count
 *  wrong, if more than 2^21 samples come before any other event and the
 *  first span begins among them.) */
REC_API const char *rec_view_digest_type(const rec_view *v);
/*! rec_view_add_digests() : a rec_digest_fn, ctx the rec_view.  A failure
 *  here (out of memory, or startup's limit) makes the next
 *  rec_view_add_event() and rec_view_get() fail with its status. */
REC_API void rec_view_add_digests(void *ctx, const rec_chunk_info *chunk, const rec_type *type,
				  const rec_digest *d, size_t n);


/* ------------------------------------------------------------------------ */
/* Before and after (view_compare.c)                                        */
/* ------------------------------------------------------------------------ */

/* Two tables of the same view, one of each recording (rec-view --baseline,
 * rec-report --baseline): rows matched by the view's natural key (latency:
 * the event type and --by value; contention-by-lock: the lock; the sites,
 * functions, threads by name ...), each numeric column with the change from
 * before to after, computed from the cells themselves (exact counts, totals
 * and maxima; percentiles as the histograms give them).  A table without a
 * natural key (the slowest spans, the runs) is not matched: keyed is false
 * and there are no rows; show the two tables as they are. */
typedef enum {
	REC_VIEW_ROW_BOTH = 0,  /* the key is in both tables */
	REC_VIEW_ROW_NEW = 1,   /* only after */
	REC_VIEW_ROW_GONE = 2   /* only before */
} rec_view_row_change;
/*! rec_view_row_change_name() : "both", "new", "gone". */
REC_API const char *rec_view_row_change_name(rec_view_row_change c);

/* The change of one column of a matched row. */
typedef struct rec_view_delta {
	bool null;     /* no change defined: a text column, an identity (a tid or
			* pid), a time, or a value missing on one side */
	int64_t i;     /* after - before, counts, ns and bytes (exact) */
	double f;      /* after - before, percent columns (percentage points) */
	bool rel_null; /* no relative change (before is 0, or null) */
	double rel;    /* 100 * (after - before) / before */
} rec_view_delta;

typedef struct rec_view_diff_row {
	rec_view_row_change change;
	const rec_view_cell *before; /* column_count cells; NULL when new */
	const rec_view_cell *after;  /* column_count cells; NULL when gone */
	const rec_view_delta *delta; /* column_count; all null unless both */
} rec_view_diff_row;

typedef struct rec_view_diff_table {
	const char *name;            /* the tables' name: "latency" */
	const char *title;           /* the after table's title */
	size_t column_count;
	const rec_view_column *columns; /* the after table's columns */
	const bool *key;             /* per column: part of the row's key */
	const bool *compared;        /* per column: its rows have a delta */
	bool keyed;                  /* false: no natural key, no rows */
	size_t row_count;            /* after --top */
	size_t rows_total;           /* before --top */
	/* The rows of after in its order (both or new), then those only
	 * before, in before's order. */
	const rec_view_diff_row *rows;
	size_t same, changed, added, gone; /* rows by what happened (before --top;
					    * changed: some delta not 0) */
} rec_view_diff_table;

typedef struct rec_view_diff rec_view_diff;

/*! rec_view_diff_open() :
 *  Compare before with after (tables of the same view with the same
 *  options, computed without --top so that no row is cut on one side
 *  only); keep at most top rows (0: all).  One of them may be NULL (a
 *  table only one side has, such as startup's sleeps): every row is then
 *  new or gone.  The tables must outlive *out.
 *  @return REC_OK with *out set (free with rec_view_diff_close()),
 *          REC_ERR_INVALID_ARG when both are NULL or the tables' names or
 *          columns differ,
 *          REC_ERR_NOMEM. */
REC_API rec_status rec_view_diff_open(rec_view_diff **out, const rec_view_table *before,
				      const rec_view_table *after, uint32_t top);
/*! rec_view_diff_close() : NULL is a no-op. */
REC_API void rec_view_diff_close(rec_view_diff *d);
/*! rec_view_diff_get() : the comparison, valid until rec_view_diff_close(d). */
REC_API const rec_view_diff_table *rec_view_diff_get(const rec_view_diff *d);
/*! rec_view_cell_delta() : the change of one cell of a column of kind k
 *  from before to after (what rec_view_diff_open() computes per column;
 *  null for text, offsets and times). */
REC_API rec_view_delta rec_view_cell_delta(rec_view_kind k, const rec_view_cell *before,
					   const rec_view_cell *after);

#ifdef __cplusplus
}
#endif

#endif /* LIBREC_VIEW_H */
