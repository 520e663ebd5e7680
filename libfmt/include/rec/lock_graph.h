/* SPDX-License-Identifier: MIT */
/*
 * lock_graph.h - lock analyses of recordings (what rec-lockgraph draws), built on
 * the public reader API of rec.h only.
 *
 *   rec_lockgraph *g;
 *   rec_lockgraph_open(&g, &opts);           // filters, NULL = none
 *   while (rec_reader_next_event(r, &ev) == REC_OK)
 *           rec_lockgraph_add_event(g, &ev);  // other types are ignored
 *   const rec_lockgraph_result *res;
 *   rec_lockgraph_get(g, &res);              // graphs, ranking, cycles
 *   rec_lockgraph_close(g);
 *
 * Two graphs come out of the events of spec/EVENTS.md:
 *   - the wait-for graph, from rec.LockWait: thread -> lock edges for the
 *     threads that waited (count, total and max wait) and lock -> thread
 *     edges for the holders that made them wait: each wait is split by the
 *     hand-offs inside it (rec/lock_attrib.h) and each part weighs on the
 *     thread that held the lock during it (the event's holderOsThreadId
 *     until the first hand-off, then the waiter who acquired it); a holder
 *     edge's count is the parts charged to it; a part whose holder is not
 *     known (holderOsThreadId 0) weighs on the thread of tid 0, labelled
 *     "(holder unknown)", so that the holder edges add up to the waits.
 *     The waits the filters leave out still count as hand-offs;
 *   - the lock-order graph, from rec.LockOrder: an edge A -> B when some
 *     thread acquired B while holding A, with the threads that did and the
 *     stack of each thread's first such acquisition.  Every cycle of it is
 *     a potential deadlock (even if it never happened) and is returned.
 * Memory is proportional to the distinct threads, locks and edges, plus
 * 80 bytes per rec.LockWait (the attribution needs every wait of a lock
 * before it splits one).  One graph is used by one thread at a time.
 */
#ifndef LIBREC_LOCK_GRAPH_H
#define LIBREC_LOCK_GRAPH_H

#include <stdbool.h>

#include "rec/rec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rec_lockgraph rec_lockgraph;

/* Which graphs to build (rec_lockgraph_options.graphs; 0 = both). */
#define REC_LOCKGRAPH_WAIT 0x1u  /* wait-for edges (rec.LockWait) */
#define REC_LOCKGRAPH_ORDER 0x2u /* lock-order edges and cycles (rec.LockOrder) */

typedef struct rec_lockgraph_options {
	uint32_t struct_size;  /* sizeof(rec_lockgraph_options) */
	uint32_t top;          /* keep the N heaviest locks (see result.locks); 0 = all */
	uint32_t graphs;       /* REC_LOCKGRAPH_WAIT | REC_LOCKGRAPH_ORDER; 0 = both.
				* Without WAIT, waits still rank the locks (top) */
	/* Group the wait-for graph (0 = every edge, as recorded): per kept lock
	 * the `group` heaviest waiter edges and the `group` heaviest holder
	 * edges stay, the rest of its waiters (holders) become one node
	 * standing for them (rec_lockgraph_thread.grouped) with one edge whose
	 * count and total are their sums and max their max; the locks `top`
	 * leaves out become one lock node (rec_lockgraph_lock.grouped) with one
	 * waiter and one holder group.  So no wait time leaves the picture: the
	 * waiter edges' totals sum to result.wait_total_ns.  The threads left
	 * with no edge of their own are not listed (result.threads_grouped);
	 * a listed thread's totals still count its waits (holds) in groups.
	 * Only with REC_LOCKGRAPH_WAIT. */
	uint32_t group;
	int64_t min_wait_ns;   /* rec.LockWait events shorter than this are ignored */
	int64_t from_wall_ns;  /* only events starting at or after (ns since epoch); 0 = no bound */
	int64_t to_wall_ns;    /* only events starting before; 0 = no bound */
	/* Only events of threads whose name matches this glob (fnmatch) or whose
	 * OS tid is this decimal number; NULL = every thread.  Copied. */
	const char *thread;
	uint64_t reserved[4];  /* must be zero */
} rec_lockgraph_options;
/* What rec-lockgraph and rec-report draw by default (options.top, .group). */
#define REC_LOCKGRAPH_DEFAULT_TOP 10u
#define REC_LOCKGRAPH_DEFAULT_GROUP 3u
#define REC_LOCKGRAPH_OPTIONS_INIT { sizeof(rec_lockgraph_options), 0, 0, 0, 0, 0, 0, NULL, {0, 0, 0, 0} }

/* A thread, identified by its OS tid (holders are known by tid only). */
typedef struct rec_lockgraph_thread {
	uint64_t os_tid;
	const char *name;        /* "" if the recording never named it */
	const char *label;       /* "NAME (tid N)" or "tid N"; unique in the result */
	uint64_t wait_count;     /* rec.LockWait events of this thread (kept ones) */
	int64_t wait_total_ns;   /* time it waited */
	int64_t held_total_ns;   /* time others waited for locks it held */
	uint64_t grouped;        /* 0: a thread; N: options.group's node for N
				  * threads (os_tid 0, name ""), its totals
				  * those of its one edge */
} rec_lockgraph_thread;

/* A lock, identified by its address. */
typedef struct rec_lockgraph_lock {
	uint64_t address;
	const char *name;        /* the name the program gave it, "" if none */
	const char *site;        /* first non-rec_ frame that took it, "" if unknown */
	/* The program's name, else "0x<address> (site)" (or "0x<address>");
	 * unique in the result (" @0x<address>" is appended when two locks
	 * share a name). */
	const char *label;
	uint64_t wait_count;
	int64_t wait_total_ns;
	int64_t wait_max_ns;
	uint64_t events;         /* rec.LockWait + rec.LockOrder events naming it */
	uint64_t grouped;        /* 0: a lock; N: options.group's node (last in
				  * result.locks, address 0) for the N locks
				  * with waits that options.top left out */
} rec_lockgraph_lock;

/* A wait-for edge: thread -> lock (waiter) or lock -> thread (holder). */
typedef struct rec_lockgraph_wait_edge {
	size_t thread;           /* index into result.threads */
	size_t lock;             /* index into result.locks */
	bool holder;             /* false: thread waited for lock; true: lock was
				  * held by thread while others waited */
	uint64_t count;
	int64_t total_ns;
	int64_t max_ns;
} rec_lockgraph_wait_edge;

/* Where a thread first acquired `to` while holding `from`. */
typedef struct rec_lockgraph_example {
	size_t thread;            /* index into result.threads */
	uint32_t depth;
	const char *const *frames; /* leaf (the call site, rec_stack_site) first:
				    * frames as rec_frame_format() spells them
				    * with REC_FRAME_FUNCTION */
} rec_lockgraph_example;

/* A lock-order edge from -> to. */
typedef struct rec_lockgraph_order_edge {
	size_t from, to;         /* indices into result.locks */
	uint64_t count;          /* rec.LockOrder events (thread x run) */
	size_t example_count;    /* one per thread (at most 16 per edge) */
	const rec_lockgraph_example *examples;
	bool in_cycle;           /* the edge lies on a cycle (same non-trivial SCC) */
} rec_lockgraph_order_edge;

/* A cycle of the lock-order graph: locks[0] -> locks[1] -> ... ->
 * locks[length - 1] -> locks[0]; edges[i] is the edge locks[i] -> locks[i+1]. */
typedef struct rec_lockgraph_cycle {
	size_t length;
	const size_t *locks;     /* into result.locks */
	const size_t *edges;     /* into result.order_edges */
} rec_lockgraph_cycle;

/* Everything, after filtering.  Owned by the graph, valid until the next
 * rec_lockgraph_add_event(), rec_lockgraph_get() or rec_lockgraph_close(). */
typedef struct rec_lockgraph_result {
	size_t lock_count;
	const rec_lockgraph_lock *locks;       /* heaviest first: total wait, then
						* events, then address */
	size_t thread_count;
	const rec_lockgraph_thread *threads;   /* most waiting first, then tid */
	size_t wait_edge_count;
	const rec_lockgraph_wait_edge *wait_edges; /* by lock, thread, waiter first */
	size_t order_edge_count;
	const rec_lockgraph_order_edge *order_edges; /* by from, to */
	size_t cycle_count;
	const rec_lockgraph_cycle *cycles;     /* every order edge on a cycle is on
						* at least one listed cycle */
	bool cycles_truncated;                 /* more than 10000 cycles, or the search
						* visited 5e7 edges: the rest are not
						* listed (their edges are still in_cycle) */
	uint64_t lock_wait_events;             /* events used (after filters) */
	uint64_t lock_order_events;
	uint64_t locks_dropped;                /* locks not kept by options.top */
	uint64_t wait_lock_count;              /* locks with a wait, kept or not */
	int64_t wait_total_ns;                 /* every wait (after filters), kept or not */
	int64_t kept_wait_total_ns;            /* the waits on the locks kept by top */
	uint64_t threads_grouped;              /* waiting or holding threads not listed:
						* all their edges are in group nodes */
} rec_lockgraph_result;

/*! rec_lockgraph_open() : an empty graph with the given filters (NULL = none).
 *  Free with rec_lockgraph_close(). */
REC_API rec_status rec_lockgraph_open(rec_lockgraph **out, const rec_lockgraph_options *opts);
/*! rec_lockgraph_close() : NULL is a no-op. */
REC_API void rec_lockgraph_close(rec_lockgraph *g);

/*! rec_lockgraph_add_event() :
 *  Feed one event from rec_reader_next_event().  rec.LockWait and
 *  rec.LockOrder events are used (fields looked up by name and type, so a
 *  missing field leaves that part out); everything else is ignored.
 *  @return REC_OK, REC_ERR_NOMEM or REC_ERR_LIMIT (more than 2^30 locks or
 *          threads); rec_lockgraph_errmsg() says what. */
REC_API rec_status rec_lockgraph_add_event(rec_lockgraph *g, const rec_event *ev);

/*! rec_lockgraph_get() :
 *  Apply options.top and options.group, number everything, find the lock-order cycles (when
 *  the ORDER graph is built)
 *  (iterative Tarjan SCC, then one shortest cycle through each edge of a
 *  non-trivial component; self edges, which recursive locks make, are not
 *  cycles) and return the result (see its lifetime above).
 *  @return REC_OK or REC_ERR_NOMEM. */
REC_API rec_status rec_lockgraph_get(rec_lockgraph *g, const rec_lockgraph_result **out);

/*! rec_lockgraph_errmsg() : text of the last failure; never NULL. */
REC_API const char *rec_lockgraph_errmsg(const rec_lockgraph *g);

#ifdef __cplusplus
}
#endif
#endif /* LIBREC_LOCK_GRAPH_H */
