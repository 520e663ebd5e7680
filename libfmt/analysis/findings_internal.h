/* SPDX-License-Identifier: MIT */
/*
 * findings_internal.h - what the findings files of libfmt/analysis/ share
 * (not installed): the findings object (the views and the lock-order graph
 * it feeds, the few event details the views do not keep), the finding
 * builder, and table lookups by column key.  findings.c is the engine; each
 * findings_*.c holds one family of rules.
 */
#ifndef REC_FINDINGS_INTERNAL_H
#define REC_FINDINGS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rec/findings.h"
#include "rec/lock_graph.h"
#include "view_internal.h"

/* The views the rules read (one pass feeds them all). */
enum { FV_REQUESTS = 0, FV_CONTENTION, FV_ALLOC_SPAN, FV_STARTUP, FV_RECORDING, FV_LATENCY,
       FV_ALLOC_SITE, FV_COUNT };

#define F_MAX_FACTS 16
#define F_MAX_EXAMPLES 5

typedef struct fbuilt {
	rec_finding pub;
	rec_finding_fact facts[F_MAX_FACTS];
	rec_finding_example examples[F_MAX_EXAMPLES];
} fbuilt;

/* One of the longest waits on a lock (examples of the lock rules). */
typedef struct fwait {
	int64_t wall, offset, dur;
	uint64_t waiter_tid, holder_tid;
	uint32_t pid;
} fwait;
typedef struct flock {
	fwait top[F_MAX_EXAMPLES]; /* longest first */
	uint32_t n;
} flock;

/* An instant or interval the recording-level rules cite (crashes, write
 * failures, the worst sampler overrun). */
typedef struct fnote {
	int64_t wall, offset, dur;
	uint64_t tid;
	uint32_t pid;
	uint64_t u;      /* signal, errno, overruns */
	char text[120];
} fnote;

typedef struct fcounter_reset {
	char *name;
	uint64_t resets;
} fcounter_reset;

struct rec_findings {
	rec_findings_options o;
	char *by, *type;
	rec_view *views[FV_COUNT];
	const rec_view_table *tables[FV_COUNT];
	size_t ntables[FV_COUNT];
	rec_lockgraph *order;
	const rec_lockgraph_result *order_res;
	vmap locks;          /* lock name -> flock */
	vmap threads;        /* "pid:tid" -> uint32_t name id + 1 in names */
	vmap names;          /* interned strings (thread names) */
	vptr_ent tcache[VTHREAD_CACHE]; /* threads of a chunk's pool already noted */
	/* per type of a chunk: bit k set when views[k] reads it */
	struct fmask {
		const rec_type *type;
		uint64_t chunk_offset, run_id;
		uint32_t chunk_seq;
		uint32_t views;
		bool have_vt;   /* vt holds the latency view's vtype of the type */
		vtype vt;       /* (a copy: the view's own cache slot may move on) */
	} masks[VTYPE_CACHE];
	bool have_start;
	int64_t input_start;
	/* digests (rec_findings_add_digests()) of this input before its first
	 * event: the earliest time among them (its start if before that
	 * event's), whether worst_overrun is one of them (its offset not yet
	 * known); a failure to report at the next call */
	int64_t dig_first;
	bool overrun_unplaced;
	rec_status dig_status;
	/* the summary (added before the first event) counted no event of a
	 * type not named rec.*: no span can come, and the requests view needs
	 * no CPU sample (an event of such a type fails the pass) */
	bool no_spans, pass_begun, digested;
	const char *unexpected; /* the type of such an event after digests */
	struct fdig_thread {   /* the threads of a chunk whose names were noted */
		const rec_thread *p;
		uint64_t chunk_offset;
	} dig_threads[64];
	/* CPU samples */
	uint64_t cpu_samples, cpu_overrun_samples, cpu_overruns;
	fnote worst_overrun;
	fnote crashes[F_MAX_EXAMPLES];
	uint32_t ncrashes;
	fnote wfails[F_MAX_EXAMPLES];
	uint32_t nwfails;
	/* from rec_findings_add_summary() */
	bool have_summary;
	fcounter_reset *resets;
	size_t nresets;
	uint64_t chunks_damaged, problems;
	char first_problem[200];
	/* the result */
	bool finished;
	fbuilt *built;
	size_t nbuilt, capbuilt;
	rec_finding *list;
	char **strs;         /* every string of the result, freed at close */
	size_t nstrs, capstrs;
	char err[256];
};

/* ---- building findings (findings.c) ---- */
/* A new finding (NULL when out of memory: f->err says so). */
fbuilt *rec_fi_new(rec_findings *f, const char *rule, rec_finding_severity sev, const char *next);
/* A string kept until rec_findings_close() ("" when out of memory). */
const char *rec_fi_str(rec_findings *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rec_fi_subject(rec_findings *f, fbuilt *b, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void rec_fi_summary(rec_findings *f, fbuilt *b, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void rec_fi_fact_u(fbuilt *b, const char *key, const char *title, rec_view_kind kind, uint64_t u);
void rec_fi_fact_f(fbuilt *b, const char *key, const char *title, double pct);
void rec_fi_fact_text(rec_findings *f, fbuilt *b, const char *key, const char *title, const char *s);
/* An example at a time (wall 0: only its offset is known) ... */
void rec_fi_example(rec_findings *f, fbuilt *b, int64_t wall, int64_t offset, int64_t dur,
		    const char *thread, const char *what);
/* ... or without one. */
void rec_fi_example_untimed(rec_findings *f, fbuilt *b, const char *what);
/* A thread's name as the recording gave it ("tid=N" if none). */
const char *rec_fi_thread(rec_findings *f, uint32_t pid, uint64_t tid);
/* A duration ("445.6 ms") / a size ("6.0 MiB", "512 bytes") for summaries. */
const char *rec_fi_dur(rec_findings *f, uint64_t ns);
const char *rec_fi_bytes(rec_findings *f, uint64_t bytes);

/* ---- tables (findings.c) ---- */
/* A table of view k by name, or NULL. */
const rec_view_table *rec_fi_table(const rec_findings *f, int k, const char *name);
/* The column of key, or -1. */
int rec_fi_col(const rec_view_table *t, const char *key);
/* The cell of row r at key (NULL: no such column). */
const rec_view_cell *rec_fi_cell(const rec_view_table *t, size_t r, const char *key);
/* The cell's u (0 when null or missing) / text ("" when null or missing). */
uint64_t rec_fi_u(const rec_view_table *t, size_t r, const char *key);
const char *rec_fi_text(const rec_view_table *t, size_t r, const char *key);

/* ---- the families of rules ---- */
/* A rule (or a family of them): adds its findings to f. */
typedef rec_status (*rec_fi_rule)(rec_findings *f);
/* Run the n rules of list in order, up to the first that does not return REC_OK
 * (its status). */
rec_status rec_fi_run_rules(rec_findings *f, const rec_fi_rule *list, size_t n);
/* lock-held-while-blocked, lock-dominates-latency, lock-order-cycle */
rec_status rec_fi_rules_locks(rec_findings *f);
/* allocation-outlier, startup-work, waiting-not-computing */
rec_status rec_fi_rules_spans(rec_findings *f);
/* dropped-events, write-failures, crashes, restarts, counter-resets,
 * sampler-behind, damaged-chunks */
rec_status rec_fi_rules_recording(rec_findings *f);

#endif /* REC_FINDINGS_INTERNAL_H */
