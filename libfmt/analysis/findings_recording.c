/* SPDX-License-Identifier: MIT */
/*
 * findings_recording.c - the rules of rec/findings.h about the recording
 * itself, from the recording view (fed rec_summary's result) and the
 * events it cites: dropped-events, write-failures, crashes, restarts,
 * counter-resets, sampler-behind and damaged-chunks.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "findings_internal.h"

#define DROP_CRIT_PCT 1.0
#define SAMPLER_BEHIND_PCT 10.0

static rec_status dropped(rec_findings *f, const rec_view_table *rt, const rec_view_table *dt)
{
	uint64_t n = rec_fi_u(rt, 0, "dropped"), events = rec_fi_u(rt, 0, "events");
	if (!n)
		return REC_OK;
	double share = 100.0 * (double)n / (double)(n + events);
	fbuilt *b = rec_fi_new(f, "dropped-events",
			       share >= DROP_CRIT_PCT ? REC_FINDING_CRITICAL : REC_FINDING_WARNING,
			       "rec-view recording");
	if (!b)
		return REC_ERR_NOMEM;
	char by[512] = "";
	size_t len = 0;
	for (size_t r = 0; dt && r < dt->row_count && r < 5 && len < sizeof by; r++)
		len += (size_t)snprintf(by + len, sizeof by - len, "%s%" PRIu64 " %s (%s)", r ? ", " : "",
					rec_fi_u(dt, r, "lost"), rec_fi_text(dt, r, "type"),
					rec_fi_text(dt, r, "reason"));
	rec_fi_subject(f, b, "%" PRIu64 " events lost", n);
	rec_fi_summary(f, b, "%" PRIu64 " events were lost (%.2f %% of %" PRIu64 " attempted)%s%s: "
		       "numbers of the lost types are short by that much.", n, share, n + events,
		       by[0] ? ": " : "", by);
	rec_fi_fact_u(b, "dropped", "dropped", REC_VIEW_COUNT, n);
	rec_fi_fact_u(b, "events", "events recorded", REC_VIEW_COUNT, events);
	rec_fi_fact_f(b, "dropped_percent", "dropped / attempted", share);
	if (by[0])
		rec_fi_fact_text(f, b, "by_type", "by type and reason", by);
	for (size_t r = 0; dt && r < dt->row_count; r++)
		rec_fi_example_untimed(f, b, rec_fi_str(f, "%" PRIu64 " %s lost: %s", rec_fi_u(dt, r, "lost"),
						      rec_fi_text(dt, r, "type"), rec_fi_text(dt, r, "reason")));
	return REC_OK;
}

static rec_status write_failures(rec_findings *f, const rec_view_table *rt)
{
	uint64_t n = rec_fi_u(rt, 0, "write_failures"), chunks = rec_fi_u(rt, 0, "chunks_not_written");
	if (!n)
		return REC_OK;
	fbuilt *b = rec_fi_new(f, "write-failures", REC_FINDING_CRITICAL,
			       "rec-print --events rec.WriteFailed");
	if (!b)
		return REC_ERR_NOMEM;
	rec_fi_subject(f, b, "%" PRIu64 " write failures", n);
	rec_fi_summary(f, b, "Writing the recording failed %" PRIu64 " times; %" PRIu64 " chunks were "
		       "not written%s%s.", n, chunks, f->nwfails ? ": " : "", f->nwfails ? f->wfails[0].text : "");
	rec_fi_fact_u(b, "write_failures", "write failures", REC_VIEW_COUNT, n);
	rec_fi_fact_u(b, "chunks_not_written", "chunks not written", REC_VIEW_COUNT, chunks);
	for (uint32_t i = 0; i < f->nwfails; i++) {
		const fnote *x = &f->wfails[i];
		rec_fi_example(f, b, x->wall, x->offset, x->dur, "",
			       rec_fi_str(f, "rec.WriteFailed: %s (%" PRIu64 " chunks)", x->text, x->u));
	}
	return REC_OK;
}

static rec_status crashes(rec_findings *f, const rec_view_table *rt, const rec_view_table *runs)
{
	uint64_t n = rec_fi_u(rt, 0, "crashes");
	if (!n)
		return REC_OK;
	fbuilt *b = rec_fi_new(f, "crashes", REC_FINDING_CRITICAL, "rec-print --events rec.Crash");
	if (!b)
		return REC_ERR_NOMEM;
	rec_fi_subject(f, b, "%" PRIu64 " crashed runs", n);
	rec_fi_summary(f, b, "%" PRIu64 " of %" PRIu64 " runs ended with a fatal signal%s.", n,
		       rec_fi_u(rt, 0, "runs"),
		       f->ncrashes ? rec_fi_str(f, " (the first: signal %" PRIu64 ")", f->crashes[0].u) : "");
	rec_fi_fact_u(b, "crashes", "crashed runs", REC_VIEW_COUNT, n);
	rec_fi_fact_u(b, "runs", "runs", REC_VIEW_COUNT, rec_fi_u(rt, 0, "runs"));
	for (uint32_t i = 0; i < f->ncrashes; i++) {
		const fnote *x = &f->crashes[i];
		rec_fi_example(f, b, x->wall, x->offset, 0, x->tid ? rec_fi_thread(f, x->pid, x->tid) : "",
			       rec_fi_str(f, "rec.Crash: signal %" PRIu64 " (pid %" PRIu32 ")", x->u, x->pid));
	}
	(void)runs;
	return REC_OK;
}

static rec_status restarts(rec_findings *f, const rec_view_table *rt, const rec_view_table *runs)
{
	uint64_t n = rec_fi_u(rt, 0, "restarts");
	if (!n)
		return REC_OK;
	fbuilt *b = rec_fi_new(f, "restarts", REC_FINDING_INFO, "rec-view recording");
	if (!b)
		return REC_ERR_NOMEM;
	rec_fi_subject(f, b, "%" PRIu64 " runs", rec_fi_u(rt, 0, "runs"));
	rec_fi_summary(f, b, "The recording holds %" PRIu64 " runs of the program (%" PRIu64 " restarts): "
		       "counters and totals are per run, summed.", rec_fi_u(rt, 0, "runs"), n);
	rec_fi_fact_u(b, "runs", "runs", REC_VIEW_COUNT, rec_fi_u(rt, 0, "runs"));
	rec_fi_fact_u(b, "restarts", "restarts", REC_VIEW_COUNT, n);
	for (size_t r = 0; runs && r < runs->row_count; r++) {
		const rec_view_cell *s = rec_fi_cell(runs, r, "start");
		rec_fi_example(f, b, s && !s->null ? s->i : 0, 0, (int64_t)rec_fi_u(runs, r, "duration"), "",
			       rec_fi_str(f, "run %s, pid %" PRIu64 ": %s", rec_fi_text(runs, r, "run_id"),
					  rec_fi_u(runs, r, "pid"), rec_fi_text(runs, r, "ended")));
		if (!s || s->null)
			b->examples[b->pub.example_count - 1].timed = false;
	}
	return REC_OK;
}

static rec_status counter_resets(rec_findings *f)
{
	for (size_t i = 0; i < f->nresets; i++) {
		fbuilt *b = rec_fi_new(f, "counter-resets", REC_FINDING_WARNING, "rec-summary");
		if (!b)
			return REC_ERR_NOMEM;
		rec_fi_subject(f, b, "%s", f->resets[i].name);
		rec_fi_summary(f, b, "Counter %s went down %" PRIu64 " times within a run (a reset, not a "
			       "wrap): something other than the recorder wrote it, or it was restarted "
			       "without a new run.", f->resets[i].name, f->resets[i].resets);
		rec_fi_fact_text(f, b, "counter", "counter", f->resets[i].name);
		rec_fi_fact_u(b, "resets", "resets", REC_VIEW_COUNT, f->resets[i].resets);
	}
	return REC_OK;
}

static rec_status sampler_behind(rec_findings *f)
{
	if (!f->cpu_samples)
		return REC_OK;
	double share = 100.0 * (double)f->cpu_overrun_samples / (double)f->cpu_samples;
	if (share < SAMPLER_BEHIND_PCT)
		return REC_OK;
	fbuilt *b = rec_fi_new(f, "sampler-behind", REC_FINDING_WARNING, "rec-view hot-functions");
	if (!b)
		return REC_ERR_NOMEM;
	rec_fi_subject(f, b, "rec.CPUSample");
	rec_fi_summary(f, b, "%" PRIu64 " of %" PRIu64 " CPU samples (%.0f %%; this rule: >= %.0f %%) "
		       "merged %" PRIu64 " timer expirations the sampler could not deliver one by one: "
		       "the kernel checks a thread's CPU-time timer at a scheduler tick while the thread "
		       "runs, so a period near or below the tick, or threads that run in bursts shorter "
		       "than a tick, make the samples coarser than asked (each counts as 1 + overruns "
		       "periods in the views).",
		       f->cpu_overrun_samples, f->cpu_samples, share, SAMPLER_BEHIND_PCT, f->cpu_overruns);
	rec_fi_fact_u(b, "samples", "CPU samples", REC_VIEW_COUNT, f->cpu_samples);
	rec_fi_fact_u(b, "overrun_samples", "samples with overruns", REC_VIEW_COUNT, f->cpu_overrun_samples);
	rec_fi_fact_u(b, "overruns", "expirations merged", REC_VIEW_COUNT, f->cpu_overruns);
	rec_fi_fact_f(b, "overrun_percent", "samples with overruns / samples", share);
	const fnote *x = &f->worst_overrun;
	if (x->u)
		rec_fi_example(f, b, x->wall, x->offset, 0, rec_fi_thread(f, x->pid, x->tid),
			       rec_fi_str(f, "rec.CPUSample with %" PRIu64 " overruns", x->u));
	return REC_OK;
}

static rec_status damaged(rec_findings *f, const rec_view_table *rt)
{
	uint64_t n = rec_fi_u(rt, 0, "chunks_damaged");
	if (!n)
		return REC_OK;
	fbuilt *b = rec_fi_new(f, "damaged-chunks", REC_FINDING_CRITICAL, "rec-check");
	if (!b)
		return REC_ERR_NOMEM;
	rec_fi_subject(f, b, "%" PRIu64 " damaged chunks", n);
	/* "chunks" counts the readable ones, never a damaged one too */
	uint64_t readable = rec_fi_u(rt, 0, "chunks");
	rec_fi_summary(f, b, "%" PRIu64 " of %" PRIu64 " chunks are damaged and were skipped: every "
		       "number here misses their events%s%s.", n, readable + n,
		       f->first_problem[0] ? "; the first problem: " : "", f->first_problem);
	rec_fi_fact_u(b, "chunks_damaged", "damaged chunks", REC_VIEW_COUNT, n);
	rec_fi_fact_u(b, "chunks", "readable chunks", REC_VIEW_COUNT, readable);
	rec_fi_fact_u(b, "problems", "problems reported", REC_VIEW_COUNT, f->problems);
	if (f->first_problem[0])
		rec_fi_example_untimed(f, b, f->first_problem);
	return REC_OK;
}

rec_status rec_fi_rules_recording(rec_findings *f)
{
	const rec_view_table *rt = rec_fi_table(f, FV_RECORDING, "recording");
	const rec_view_table *dt = rec_fi_table(f, FV_RECORDING, "drops");
	const rec_view_table *runs = rec_fi_table(f, FV_RECORDING, "runs");
	rec_status st = REC_OK;
	if (rt && rt->row_count) {
		if (f->have_summary) {
			st = dropped(f, rt, dt);
			if (st == REC_OK)
				st = crashes(f, rt, runs);
			if (st == REC_OK)
				st = restarts(f, rt, runs);
			if (st == REC_OK)
				st = damaged(f, rt);
		}
		if (st == REC_OK)
			st = write_failures(f, rt);
	}
	if (st == REC_OK)
		st = counter_resets(f);
	if (st == REC_OK)
		st = sampler_behind(f);
	return st;
}
