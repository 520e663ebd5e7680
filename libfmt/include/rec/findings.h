/* SPDX-License-Identifier: MIT */
/*
 * findings.h - findings: rules that look at a recording and say what is
 * wrong (a lock held while its holder slept, a span type that waits instead
 * of computing, dropped events ...), each with a severity, the evidence (the
 * numbers, the lock or site, example events with their times) and the
 * command that shows more.  What rec-report prints.
 *
 * Built on the views of rec/view.h (requests, contention-by-lock,
 * allocation-by-span, startup, recording) and the lock-order graph of
 * rec/lock_graph.h, fed the same events in one pass: memory follows what
 * those keep (distinct keys, never the number of events).
 *
 * Use:
 *   rec_findings_open(&f, &opts);
 *   for each input: rec_findings_begin_input(f);
 *       for each event of a reader opened with REC_READ_ORDERED:
 *           rec_findings_add_event(f, &ev);
 *   rec_findings_add_summary(f, res);  // rec_summary_get() of the same inputs,
 *                                      // read with REC_SUMMARY_DROPS | _COUNTERS
 *   rec_findings_get(f, &list, &n);    // the heaviest first
 *   rec_findings_close(f);
 *
 * One findings object is used by one thread at a time.
 */
#ifndef LIBREC_FINDINGS_H
#define LIBREC_FINDINGS_H

#include <stdbool.h>
#include "rec/analysis.h"
#include "rec/rec.h"
#include "rec/view.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rec_findings rec_findings;

typedef enum {
	REC_FINDING_INFO = 0,     /* worth knowing (work before the first request) */
	REC_FINDING_WARNING = 1,  /* costs time or data */
	REC_FINDING_CRITICAL = 2  /* the main cause of latency, lost or damaged data */
} rec_finding_severity;
/*! rec_finding_severity_name() : "info", "warning", "critical". */
REC_API const char *rec_finding_severity_name(rec_finding_severity s);

/* The rules there are, for `rec-report --rules`. */
typedef struct rec_finding_rule {
	const char *name;        /* "lock-held-while-blocked" */
	const char *description; /* one line, the threshold included */
} rec_finding_rule;
/*! rec_findings_rules() : every rule, in a fixed order; the array is static. */
REC_API const rec_finding_rule *rec_findings_rules(size_t *count);

/* One number (or name) of the evidence, typed as a view's cell is. */
typedef struct rec_finding_fact {
	const char *key;         /* JSON key: "waiters_total" */
	const char *title;       /* "waiters' total" */
	rec_view_kind kind;
	rec_view_cell value;
} rec_finding_fact;

/* An event (or a run) that shows the finding. */
typedef struct rec_finding_example {
	bool timed;              /* offset_ns (and wall_ns unless 0) are known */
	int64_t wall_ns;         /* start, ns since the epoch; 0: not known */
	int64_t offset_ns;       /* start since the first event of its input */
	int64_t duration_ns;     /* 0: an instant */
	const char *thread;      /* "conn-4", "" if none */
	const char *what;        /* "rec.LockWait on quote-cache-lock, held by conn-1" */
} rec_finding_example;

typedef struct rec_finding {
	const char *rule;        /* a name of rec_findings_rules() */
	rec_finding_severity severity;
	const char *subject;     /* what it is about: a lock, "app.Request path=/x", a site */
	const char *summary;     /* one or two sentences with the numbers */
	size_t fact_count;
	const rec_finding_fact *facts;
	size_t example_count;
	const rec_finding_example *examples;
	/* What to run next, without the file names (the caller appends them):
	 * "rec-view contention-by-lock". */
	const char *next;
} rec_finding;

typedef struct rec_findings_options {
	uint32_t struct_size;    /* sizeof(rec_findings_options) */
	uint32_t flags;          /* REC_VIEW_FROM / REC_VIEW_TO */
	const char *by;          /* split span types by this field (allocation-outlier,
				  * lock-dominates-latency, waiting-not-computing), or NULL */
	const char *type;        /* the span type; NULL: every duration type not "rec.*" */
	int64_t from_wall_ns, to_wall_ns; /* with REC_VIEW_FROM / REC_VIEW_TO */
	uint64_t reserved[4];    /* must be zero */
} rec_findings_options;
#define REC_FINDINGS_OPTIONS_INIT { sizeof(rec_findings_options), 0, NULL, NULL, 0, 0, {0, 0, 0, 0} }

/*! rec_findings_open() :
 *  @return REC_OK with *out set (free with rec_findings_close()),
 *          REC_ERR_INVALID_ARG for bad options, REC_ERR_NOMEM. */
REC_API rec_status rec_findings_open(rec_findings **out, const rec_findings_options *opts);
/*! rec_findings_close() : NULL is a no-op. */
REC_API void rec_findings_close(rec_findings *f);
/*! rec_findings_begin_input() : the events added next are of a new input. */
REC_API rec_status rec_findings_begin_input(rec_findings *f);
/*! rec_findings_add_event() : one event of a REC_READ_ORDERED reader, used
 *  during the call only.  @return REC_OK, REC_ERR_NOMEM, or
 *  REC_ERR_INVALID_ARG after rec_findings_get(). */
REC_API rec_status rec_findings_add_event(rec_findings *f, const rec_event *ev);
/*! rec_findings_add_summary() : the recording-level rules' input (chunks,
 *  damaged chunks, runs, crashes, drops, counter resets): rec_summary_get()
 *  of the same inputs, copied.  Without it those rules say nothing. */
REC_API rec_status rec_findings_add_summary(rec_findings *f, const rec_summary_result *res);
/*! rec_findings_get() :
 *  Evaluate the rules (the first call; later calls return the same) and
 *  return the findings, critical first, then warning, then info (in rule
 *  order within a severity), valid until rec_findings_close(f).
 *  @return REC_OK or REC_ERR_NOMEM. */
REC_API rec_status rec_findings_get(rec_findings *f, const rec_finding **list, size_t *count);
/*! rec_findings_table() : a table of the views the findings were computed
 *  from, by its rec_view_table name ("latency", "contention_by_lock",
 *  "allocation_by_site" ...; valid after rec_findings_get()), or NULL.
 *  For comparing two recordings with the same numbers the rules saw. */
REC_API const rec_view_table *rec_findings_table(const rec_findings *f, const char *name);
/*! rec_findings_by_found() : with opts.by, whether any span had that field. */
REC_API bool rec_findings_by_found(const rec_findings *f);
/*! rec_findings_type_found() : with opts.type, whether any event was of it. */
REC_API bool rec_findings_type_found(const rec_findings *f);
/*! rec_findings_wants_type() : whether the rules read the events of type t:
 *  the union of what their views, the lock-order graph and the findings'
 *  own details need (every type today: the startup, requests and
 *  allocation-by-span views and the threads' names read every event).  A
 *  reader may leave the others out: rec_reader_select_types(r,
 *  rec_findings_type_filter, f). */
REC_API bool rec_findings_wants_type(const rec_findings *f, const rec_type *t);
/*! rec_findings_type_filter() : rec_findings_wants_type() as a
 *  rec_type_filter, ctx the rec_findings. */
REC_API int rec_findings_type_filter(void *ctx, const rec_type *t);
/*! rec_findings_digest_type() : the type whose events the findings can take
 *  as digests (rec.CPUSample; NULL with opts.type), with the same findings:
 *  rec_reader_digest_type(r, rec_findings_digest_type(f),
 *  rec_findings_add_digests, f), as rec_view_digest_type().  (A thread's
 *  name is the one it has in the first chunk that shows it, events or
 *  digests.) */
REC_API const char *rec_findings_digest_type(const rec_findings *f);
/*! rec_findings_add_digests() : a rec_digest_fn, ctx the rec_findings.  A
 *  failure here makes the next rec_findings_add_event() and
 *  rec_findings_get() fail. */
REC_API void rec_findings_add_digests(void *ctx, const rec_chunk_info *chunk, const rec_type *type,
				      const rec_digest *d, size_t n);
/*! rec_findings_errmsg() : text of the last failure; never NULL. */
REC_API const char *rec_findings_errmsg(const rec_findings *f);


/* ---- before and after (findings_compare.c) ---- */

/* One finding of either side, matched by rule and subject (the k-th
 * finding with a rule and subject before with the k-th after). */
typedef struct rec_findings_change {
	rec_view_row_change change;   /* NEW: appeared; GONE: went away; BOTH */
	const rec_finding *before;    /* NULL when new */
	const rec_finding *after;     /* NULL when gone */
	bool changed;                 /* both: the severity or a fact differs */
	size_t fact_count;            /* both: after's facts, else 0 */
	const rec_finding_fact *const *before_facts; /* per after fact: before's
					* fact with the same key, or NULL */
	const rec_view_delta *deltas; /* per after fact: after - before */
} rec_findings_change;

typedef struct rec_findings_diff rec_findings_diff;

/*! rec_findings_diff_open() :
 *  Match the findings of a baseline (before) with those of another
 *  recording (after), as rec_findings_get() returns them; the lists must
 *  outlive *out.  The changes: after's findings in its order (new or in
 *  both), then those that went away, in before's order.
 *  @return REC_OK with *out set (free with rec_findings_diff_close()),
 *          REC_ERR_INVALID_ARG, REC_ERR_NOMEM. */
REC_API rec_status rec_findings_diff_open(rec_findings_diff **out, const rec_finding *before,
					  size_t before_count, const rec_finding *after,
					  size_t after_count);
/*! rec_findings_diff_close() : NULL is a no-op. */
REC_API void rec_findings_diff_close(rec_findings_diff *d);
/*! rec_findings_diff_get() : the changes, valid until rec_findings_diff_close(d). */
REC_API void rec_findings_diff_get(const rec_findings_diff *d, const rec_findings_change **list,
				   size_t *count);

#ifdef __cplusplus
}
#endif

#endif /* LIBREC_FINDINGS_H */
