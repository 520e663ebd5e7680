/* SPDX-License-Identifier: MIT */
/*
 * findings_spans.c - the span rules of rec/findings.h: allocation-outlier
 * (allocation-by-span's bytes per span), startup-work (the startup view)
 * and waiting-not-computing (the requests view's breakdown of span time).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "findings_internal.h"

#define ALLOC_FACTOR UINT64_C(10)              /* per span vs every other group */
#define ALLOC_MIN_BYTES (UINT64_C(64) * 1024)
#define STARTUP_MIN_NS 100000000ull     /* sleeps, CPU, lock waits before the first span */
#define STARTUP_MIN_BYTES (UINT64_C(1024) * 1024)
#define WAIT_SPAN_MIN_NS 10000000ull    /* mean span wall time */
#define WAIT_CPU_MAX_PCT 10.0
#define WAIT_RECORDED_MIN_PCT 50.0

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char *group(rec_findings *f, const rec_view_table *t, size_t r)
{
	if (rec_fi_col(t, "by") < 0)
		return rec_fi_str(f, "%s", rec_fi_text(t, r, "type"));
	return rec_fi_str(f, "%s %s=%s", rec_fi_text(t, r, "type"), f->by, rec_fi_text(t, r, "by"));
}

static rec_status allocation_outlier(rec_findings *f)
{
	const rec_view_table *t = rec_fi_table(f, FV_ALLOC_SPAN, "allocation_by_span");
	if (!t || t->row_count < 2)
		return REC_OK;
	for (size_t r = 0; r < t->row_count; r++) {
		uint64_t per = rec_fi_u(t, r, "per_span");
		uint64_t others = 0;
		size_t other_row = SIZE_MAX;
		for (size_t k = 0; k < t->row_count; k++)
			if (k != r && rec_fi_u(t, k, "per_span") >= others) {
				others = rec_fi_u(t, k, "per_span");
				other_row = k;
			}
		if (per < ALLOC_MIN_BYTES || per < ALLOC_FACTOR * others || other_row == SIZE_MAX)
			continue;
		const bool by = rec_fi_col(t, "by") >= 0;
		fbuilt *b = rec_fi_new(f, "allocation-outlier", REC_FINDING_WARNING,
				       by ? rec_fi_str(f, "rec-view allocation-by-span --by %s", f->by)
					  : "rec-view allocation-by-span");
		if (!b)
			return REC_ERR_NOMEM;
		const char *g = group(f, t, r), *og = group(f, t, other_row);
		rec_fi_subject(f, b, "%s", g);
		if (others)
			rec_fi_summary(f, b,
				       "%s allocates %s per span, %.0fx the next heaviest (%s: %s per "
				       "span; this rule: >= %" PRIu64 "x and >= %s).", g,
				       rec_fi_bytes(f, per), (double)per / (double)others, og,
				       rec_fi_bytes(f, others), ALLOC_FACTOR, rec_fi_bytes(f, ALLOC_MIN_BYTES));
		else
			rec_fi_summary(f, b,
				       "%s allocates %s per span; no other span group allocates at all "
				       "(this rule: >= %" PRIu64 "x the others and >= %s).", g,
				       rec_fi_bytes(f, per), ALLOC_FACTOR, rec_fi_bytes(f, ALLOC_MIN_BYTES));
		rec_fi_fact_text(f, b, "group", "span group", g);
		rec_fi_fact_u(b, "spans", "spans", REC_VIEW_COUNT, rec_fi_u(t, r, "spans"));
		rec_fi_fact_u(b, "bytes", "allocated", REC_VIEW_BYTES, rec_fi_u(t, r, "bytes"));
		rec_fi_fact_u(b, "per_span", "per span", REC_VIEW_BYTES, per);
		rec_fi_fact_u(b, "max", "most in one span", REC_VIEW_BYTES, rec_fi_u(t, r, "max"));
		rec_fi_fact_text(f, b, "next_group", "next heaviest group", og);
		rec_fi_fact_u(b, "next_per_span", "its per span", REC_VIEW_BYTES, others);
	}
	return REC_OK;
}

/* The heaviest site of a startup table, as "site (total)". */
static const char *top_site(rec_findings *f, const char *table, bool bytes)
{
	const rec_view_table *t = rec_fi_table(f, FV_STARTUP, table);
	if (!t || !t->row_count)
		return "";
	uint64_t v = rec_fi_u(t, 0, "total");
	return bytes ? rec_fi_str(f, "%s (%s)", rec_fi_text(t, 0, "site"), rec_fi_bytes(f, v))
		     : rec_fi_str(f, "%s (%s)", rec_fi_text(t, 0, "site"), rec_fi_dur(f, v));
}

static rec_status startup_work(rec_findings *f)
{
	const rec_view_table *t = rec_fi_table(f, FV_STARTUP, "startup");
	if (!t || !t->row_count)
		return REC_OK;
	const rec_view_cell *at = rec_fi_cell(t, 0, "at");
	if (!at || at->null) /* no span: nothing is "before the first" */
		return REC_OK;
	uint64_t sleep = rec_fi_u(t, 0, "sleep"), bytes = rec_fi_u(t, 0, "allocated"),
		 cpu = rec_fi_u(t, 0, "cpu"), lw = rec_fi_u(t, 0, "lock_wait");
	if (sleep < STARTUP_MIN_NS && bytes < STARTUP_MIN_BYTES && cpu < STARTUP_MIN_NS &&
	    lw < STARTUP_MIN_NS)
		return REC_OK;
	fbuilt *b = rec_fi_new(f, "startup-work", REC_FINDING_INFO, "rec-view startup");
	if (!b)
		return REC_ERR_NOMEM;
	const char *first = rec_fi_text(t, 0, "before");
	rec_fi_subject(f, b, "before the first %s", first);
	const char *ss = top_site(f, "sleeps", false), *as = top_site(f, "allocations", true);
	rec_fi_summary(f, b,
		       "Before the first %s (at +%s) the program slept %s (sleeps: %" PRIu64 ")%s%s, "
		       "allocated %s (allocations: %" PRIu64 ")%s%s, used %s of CPU and waited %s "
		       "for locks (this rule: >= %s of sleeps, CPU or lock waits, or >= %s).", first,
		       rec_fi_dur(f, (uint64_t)(at->i > 0 ? at->i : 0)), rec_fi_dur(f, sleep),
		       rec_fi_u(t, 0, "sleeps"), ss[0] ? ", the most at " : "", ss, rec_fi_bytes(f, bytes),
		       rec_fi_u(t, 0, "allocations"), as[0] ? ", the most at " : "", as,
		       rec_fi_dur(f, cpu), rec_fi_dur(f, lw), rec_fi_dur(f, STARTUP_MIN_NS),
		       rec_fi_bytes(f, STARTUP_MIN_BYTES));
	rec_fi_fact_text(f, b, "before", "before the first", first);
	rec_fi_fact_u(b, "at", "first span at (offset)", REC_VIEW_DURATION, (uint64_t)(at->i > 0 ? at->i : 0));
	rec_fi_fact_u(b, "sleeps", "sleeps", REC_VIEW_COUNT, rec_fi_u(t, 0, "sleeps"));
	rec_fi_fact_u(b, "sleep", "slept", REC_VIEW_DURATION, sleep);
	rec_fi_fact_u(b, "allocations", "allocations", REC_VIEW_COUNT, rec_fi_u(t, 0, "allocations"));
	rec_fi_fact_u(b, "allocated", "allocated", REC_VIEW_BYTES, bytes);
	rec_fi_fact_u(b, "cpu", "CPU", REC_VIEW_DURATION, cpu);
	rec_fi_fact_u(b, "lock_wait", "lock waits", REC_VIEW_DURATION, lw);
	if (ss[0])
		rec_fi_fact_text(f, b, "sleep_site", "heaviest sleep site", ss);
	if (as[0])
		rec_fi_fact_text(f, b, "allocation_site", "heaviest allocation site", as);
	return REC_OK;
}

static rec_status waiting_not_computing(rec_findings *f)
{
	const rec_view_table *t = rec_fi_table(f, FV_REQUESTS, "requests");
	static const struct { const char *key, *title; } parts[] = {
		{ "lock_wait", "lock waits" }, { "cond_wait", "condition waits" },
		{ "sleep", "sleeps" },         { "io", "I/O" },
	};
	for (size_t r = 0; t && r < t->row_count; r++) {
		uint64_t mean = rec_fi_u(t, r, "mean"), cpu = rec_fi_u(t, r, "cpu");
		uint64_t waits = 0, top = 0;
		size_t topk = 0;
		for (size_t k = 0; k < 4; k++) {
			uint64_t v = rec_fi_u(t, r, parts[k].key);
			waits += v;
			if (v > top) {
				top = v;
				topk = k;
			}
		}
		double cpu_pct = pct(cpu, mean), wait_pct = pct(waits, mean);
		if (mean < WAIT_SPAN_MIN_NS || cpu_pct >= WAIT_CPU_MAX_PCT || wait_pct < WAIT_RECORDED_MIN_PCT)
			continue;
		const bool by = rec_fi_col(t, "by") >= 0;
		fbuilt *b = rec_fi_new(f, "waiting-not-computing", REC_FINDING_WARNING,
				       by ? rec_fi_str(f, "rec-view requests --by %s", f->by)
					  : "rec-view requests");
		if (!b)
			return REC_ERR_NOMEM;
		const char *g = group(f, t, r);
		rec_fi_subject(f, b, "%s", g);
		rec_fi_summary(f, b,
			       "%s spans take %s on average but run on a CPU for %s of it (%.0f %%, from "
			       "CPU samples; %" PRIu64 " samples in the recording); %.0f %% is recorded "
			       "waiting, most of it %s (%s).  (This rule: mean >= %s, CPU < %.0f %%, waits "
			       ">= %.0f %%.)", g, rec_fi_dur(f, mean), rec_fi_dur(f, cpu), cpu_pct,
			       f->cpu_samples, wait_pct, parts[topk].title, rec_fi_dur(f, top),
			       rec_fi_dur(f, WAIT_SPAN_MIN_NS), WAIT_CPU_MAX_PCT, WAIT_RECORDED_MIN_PCT);
		rec_fi_fact_text(f, b, "group", "span group", g);
		rec_fi_fact_u(b, "spans", "spans", REC_VIEW_COUNT, rec_fi_u(t, r, "spans"));
		rec_fi_fact_u(b, "mean", "mean wall time", REC_VIEW_DURATION, mean);
		rec_fi_fact_u(b, "cpu", "mean CPU", REC_VIEW_DURATION, cpu);
		for (size_t k = 0; k < 4; k++)
			rec_fi_fact_u(b, parts[k].key, rec_fi_str(f, "mean %s", parts[k].title),
				      REC_VIEW_DURATION, rec_fi_u(t, r, parts[k].key));
		rec_fi_fact_f(b, "cpu_percent", "CPU / wall time", cpu_pct);
		rec_fi_fact_f(b, "wait_percent", "recorded waits / wall time", wait_pct);
		rec_fi_fact_u(b, "cpu_samples", "CPU samples in the recording", REC_VIEW_COUNT, f->cpu_samples);
	}
	return REC_OK;
}

rec_status rec_fi_rules_spans(rec_findings *f)
{
	static const rec_fi_rule rules[] = { allocation_outlier, startup_work, waiting_not_computing };
	return rec_fi_run_rules(f, rules, sizeof rules / sizeof rules[0]);
}
