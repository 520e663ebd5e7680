/* SPDX-License-Identifier: MIT */
/*
 * findings_locks.c - the lock rules of rec/findings.h: lock-held-while-
 * blocked (contention-by-lock's holder activity), lock-dominates-latency
 * (the requests view's lock-wait share of a span type) and lock-order-cycle
 * (the cycles of rec/lock_graph.h's lock-order graph).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "findings_internal.h"

#define BLOCKED_PCT 25.0      /* holder blocked / waiters' total */
#define BLOCKED_CRIT_PCT 40.0
#define BLOCKED_MIN_NS 1000000ull
#define LOCK_SHARE_PCT 25.0   /* lock wait / span wall */
#define LOCK_SHARE_CRIT_PCT 50.0
#define LOCK_SPAN_MIN_NS 1000000ull

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The longest waits on lock as examples. */
static void wait_examples(rec_findings *f, fbuilt *b, const char *lock)
{
	size_t i = rec_vi_vmap_find(&f->locks, lock, strlen(lock));
	if (i == SIZE_MAX)
		return;
	const flock *l = vmap_at(&f->locks, i);
	for (uint32_t k = 0; k < l->n; k++) {
		const fwait *w = &l->top[k];
		const char *what = w->holder_tid
			? rec_fi_str(f, "rec.LockWait on %s, held by %s", lock,
				     rec_fi_thread(f, w->pid, w->holder_tid))
			: rec_fi_str(f, "rec.LockWait on %s", lock);
		rec_fi_example(f, b, w->wall, w->offset, w->dur, rec_fi_thread(f, w->pid, w->waiter_tid),
			       what);
	}
}

static rec_status held_while_blocked(rec_findings *f)
{
	const rec_view_table *t = rec_fi_table(f, FV_CONTENTION, "contention_by_lock");
	for (size_t r = 0; t && r < t->row_count; r++) {
		uint64_t total = rec_fi_u(t, r, "total");
		uint64_t sleep = rec_fi_u(t, r, "holder_sleeping"), cond = rec_fi_u(t, r, "holder_cond_wait"),
			 io = rec_fi_u(t, r, "holder_io");
		uint64_t blocked = sleep + cond + io;
		double share = pct(blocked, total);
		if (total < BLOCKED_MIN_NS || share < BLOCKED_PCT)
			continue;
		const char *lock = rec_fi_text(t, r, "lock");
		fbuilt *b = rec_fi_new(f, "lock-held-while-blocked",
				       share >= BLOCKED_CRIT_PCT ? REC_FINDING_CRITICAL : REC_FINDING_WARNING,
				       "rec-view contention-by-lock");
		if (!b)
			return REC_ERR_NOMEM;
		const char *site = rec_fi_text(t, r, "holder_site");
		const char *holders = rec_fi_text(t, r, "holders");
		rec_fi_subject(f, b, "%s", lock);
		rec_fi_summary(f, b,
			       "%s was held by %s at %s while it slept %s, waited on a condition %s "
			       "and on I/O %s during the %" PRIu64 " waits for the lock (%s in total, "
			       "the longest %s): the holder was blocked for %.0f %% of the waiters' "
			       "time (this rule: >= %.0f %%).  Do the blocking work outside the lock.",
			       lock, holders[0] ? holders : "its holder", site[0] ? site : "an unknown site",
			       rec_fi_dur(f, sleep), rec_fi_dur(f, cond), rec_fi_dur(f, io),
			       rec_fi_u(t, r, "waits"), rec_fi_dur(f, total),
			       rec_fi_dur(f, rec_fi_u(t, r, "max")), share, BLOCKED_PCT);
		rec_fi_fact_text(f, b, "lock", "lock", lock);
		rec_fi_fact_text(f, b, "holders", "holders", holders);
		rec_fi_fact_text(f, b, "holder_site", "holder's site", site);
		rec_fi_fact_u(b, "waits", "waits", REC_VIEW_COUNT, rec_fi_u(t, r, "waits"));
		rec_fi_fact_u(b, "waiters_total", "waiters' total", REC_VIEW_DURATION, total);
		rec_fi_fact_u(b, "waiters_max", "waiters' max", REC_VIEW_DURATION, rec_fi_u(t, r, "max"));
		rec_fi_fact_u(b, "holder_sleeping", "holder sleeping", REC_VIEW_DURATION, sleep);
		rec_fi_fact_u(b, "holder_cond_wait", "holder in a condition wait", REC_VIEW_DURATION, cond);
		rec_fi_fact_u(b, "holder_io", "holder in I/O", REC_VIEW_DURATION, io);
		rec_fi_fact_u(b, "holder_running", "holder running (CPU samples)", REC_VIEW_DURATION,
			      rec_fi_u(t, r, "holder_running"));
		rec_fi_fact_f(b, "blocked_percent", "holder blocked / waiters' total", share);
		rec_fi_fact_f(b, "threshold_percent", "threshold", BLOCKED_PCT);
		wait_examples(f, b, lock);
	}
	return REC_OK;
}

/* The lock most named by the slowest spans of this type and --by value. */
static void span_examples(rec_findings *f, fbuilt *b, const char *type, const char *by,
			  const char **lock_out)
{
	const rec_view_table *sl = rec_fi_table(f, FV_REQUESTS, "slowest");
	*lock_out = "";
	for (size_t r = 0; sl && r < sl->row_count; r++) {
		if (strcmp(rec_fi_text(sl, r, "type"), type) != 0 ||
		    (by && strcmp(rec_fi_text(sl, r, "by"), by) != 0))
			continue;
		const char *lock = rec_fi_text(sl, r, "lock");
		if (!lock[0])
			continue;
		if (!(*lock_out)[0])
			*lock_out = lock;
		const char *holder = rec_fi_text(sl, r, "holder");
		const rec_view_cell *start = rec_fi_cell(sl, r, "start");
		rec_fi_example(f, b, 0, start && !start->null ? start->i : 0,
			       (int64_t)rec_fi_u(sl, r, "wall"), rec_fi_text(sl, r, "thread"),
			       holder[0] ? rec_fi_str(f, "%s%s%s: %s waiting for %s, held by %s", type,
						    by ? " " : "", by ? by : "",
						    rec_fi_dur(f, rec_fi_u(sl, r, "lock_wait")), lock, holder)
					 : rec_fi_str(f, "%s%s%s: %s waiting for %s", type, by ? " " : "",
						      by ? by : "",
						      rec_fi_dur(f, rec_fi_u(sl, r, "lock_wait")), lock));
	}
}

static rec_status dominates_latency(rec_findings *f)
{
	const rec_view_table *t = rec_fi_table(f, FV_REQUESTS, "requests");
	bool has_by = rec_fi_col(t, "by") >= 0;
	for (size_t r = 0; t && r < t->row_count; r++) {
		uint64_t mean = rec_fi_u(t, r, "mean"), lw = rec_fi_u(t, r, "lock_wait");
		double share = pct(lw, mean);
		if (mean < LOCK_SPAN_MIN_NS || share < LOCK_SHARE_PCT)
			continue;
		const char *type = rec_fi_text(t, r, "type");
		const char *by = has_by ? rec_fi_text(t, r, "by") : NULL;
		fbuilt *b = rec_fi_new(f, "lock-dominates-latency",
				       share >= LOCK_SHARE_CRIT_PCT ? REC_FINDING_CRITICAL : REC_FINDING_WARNING,
				       has_by ? rec_fi_str(f, "rec-view requests --by %s", f->by)
					      : "rec-view requests");
		if (!b)
			return REC_ERR_NOMEM;
		if (by)
			rec_fi_subject(f, b, "%s %s=%s", type, f->by, by);
		else
			rec_fi_subject(f, b, "%s", type);
		const char *lock;
		span_examples(f, b, type, by, &lock);
		rec_fi_summary(f, b,
			       "%s%s%s spans wait for locks %s of their mean %s (%.0f %%; this rule: >= "
			       "%.0f %%)%s%s; the slowest took %s.", type, by ? " " : "", by ? by : "",
			       rec_fi_dur(f, lw), rec_fi_dur(f, mean), share, LOCK_SHARE_PCT,
			       lock[0] ? ", mostly for " : "", lock, rec_fi_dur(f, rec_fi_u(t, r, "max")));
		rec_fi_fact_text(f, b, "type", "span type", type);
		if (by)
			rec_fi_fact_text(f, b, "by", f->by, by);
		rec_fi_fact_u(b, "spans", "spans", REC_VIEW_COUNT, rec_fi_u(t, r, "spans"));
		rec_fi_fact_u(b, "mean", "mean wall time", REC_VIEW_DURATION, mean);
		rec_fi_fact_u(b, "max", "slowest", REC_VIEW_DURATION, rec_fi_u(t, r, "max"));
		rec_fi_fact_u(b, "lock_wait", "mean lock wait", REC_VIEW_DURATION, lw);
		rec_fi_fact_f(b, "lock_wait_percent", "lock wait / wall time", share);
		rec_fi_fact_f(b, "threshold_percent", "threshold", LOCK_SHARE_PCT);
		if (lock[0])
			rec_fi_fact_text(f, b, "lock", "lock", lock);
	}
	return REC_OK;
}

static rec_status order_cycles(rec_findings *f)
{
	const rec_lockgraph_result *g = f->order_res;
	for (size_t c = 0; g && c < g->cycle_count && c < 20; c++) {
		const rec_lockgraph_cycle *cy = &g->cycles[c];
		fbuilt *b = rec_fi_new(f, "lock-order-cycle", REC_FINDING_CRITICAL,
				       "rec-lockgraph --graph order");
		if (!b)
			return REC_ERR_NOMEM;
		char path[1024];
		size_t n = 0;
		for (size_t k = 0; k <= cy->length && n < sizeof path; k++)
			n += (size_t)snprintf(path + n, sizeof path - n, "%s%s", k ? " -> " : "",
					      g->locks[cy->locks[k % cy->length]].label);
		rec_fi_subject(f, b, "%s", path);
		rec_fi_summary(f, b,
			       "%zu locks are taken in orders that form a cycle (%s): threads that take "
			       "them at the same time can deadlock.  Take them in one order.",
			       cy->length, path);
		rec_fi_fact_u(b, "locks", "locks in the cycle", REC_VIEW_COUNT, cy->length);
		rec_fi_fact_text(f, b, "cycle", "cycle", path);
		for (size_t k = 0; k < cy->length; k++) {
			const rec_lockgraph_order_edge *e = &g->order_edges[cy->edges[k]];
			if (!e->example_count)
				continue;
			const rec_lockgraph_example *x = &e->examples[0];
			rec_fi_example_untimed(
				f, b,
				rec_fi_str(f, "%s took %s while holding %s, at %s", g->threads[x->thread].label,
					   g->locks[e->to].label, g->locks[e->from].label,
					   x->depth ? x->frames[0] : "an unknown site"));
		}
	}
	return REC_OK;
}

rec_status rec_fi_rules_locks(rec_findings *f)
{
	static const rec_fi_rule rules[] = { held_while_blocked, dominates_latency, order_cycles };
	return rec_fi_run_rules(f, rules, sizeof rules / sizeof rules[0]);
}
