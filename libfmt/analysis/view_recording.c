/* SPDX-License-Identifier: MIT */
/*
 * view_recording.c - "recording": files, chunks, runs, restarts, crashes
 * and the events lost per type and reason from the summary (rec/analysis.h:
 * rec_summary_get()'s result of a summary made with REC_SUMMARY_DROPS, given
 * with rec_view_add_summary(); nothing re-derived here), plus the write
 * failures (rec.WriteFailed events, which the summary does not count).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_internal.h"

typedef struct drop_row {
	uint32_t type, reason;  /* interned names */
	uint64_t count;
} drop_row;

typedef struct run_copy {
	uint64_t run_id, chunks, events, dropped;
	uint32_t pid;
	int64_t first, last;
	rec_run_end ended;
} run_copy;

typedef struct rc_state {
	drop_row *drops;
	size_t ndrops;
	bool have_summary;
	uint64_t files, chunks, damaged, events, dropped, restarts, crashes, problems;
	run_copy *runs;
	size_t nruns;
	uint64_t wf_records, wf_chunks, wf_events, wf_bytes;
} rc_state;

static void rc_free(rec_view *v)
{
	rc_state *s = v->state;
	free(s->drops);
	free(s->runs);
}

/* Write failures (the rest comes from rec_view_add_summary()). */
static bool rc_wants(const rec_view *v, const rec_type *t)
{
	(void)v;
	return rec_vi_named(t, "rec.WriteFailed");
}

static rec_status rc_add(rec_view *v, const rec_event *ev, bool selected)
{
	rc_state *s = v->state;
	if (!selected)
		return REC_OK;
	const vtype *vt = rec_vi_vtype(v, ev);
	if (vt->role != VT_WRITEFAILED)
		return REC_OK;
	s->wf_records++;
	if (vt_u64(vt, ev, VF_ACTION, 0) == 0) {
		s->wf_chunks += vt_u64(vt, ev, VF_CHUNKS, 0);
		s->wf_events += vt_u64(vt, ev, VF_EVENTS, 0);
		s->wf_bytes += vt_u64(vt, ev, VF_BYTES, 0);
	}
	return REC_OK;
}

rec_status rec_view_add_summary(rec_view *v, const rec_summary_result *res)
{
	if (!v || !res)
		return REC_ERR_INVALID_ARG;
	if (v->impl != &rec_view_recording)
		return REC_OK;
	rc_state *s = v->state;
	run_copy *runs = res->run_count ? calloc(res->run_count, sizeof *runs) : NULL;
	if (res->run_count && !runs)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	free(s->runs);
	s->runs = runs;
	s->nruns = res->run_count;
	s->crashes = 0;
	for (size_t i = 0; i < res->run_count; i++) {
		const rec_summary_run *r = &res->runs[i];
		runs[i] = (run_copy){ r->run_id, r->chunks, r->events, r->dropped, r->pid,
				      r->first_wall_ns, r->last_wall_ns, r->ended };
		if (r->ended == REC_RUN_CRASH)
			s->crashes++;
	}
	drop_row *drops = res->drop_count ? calloc(res->drop_count, sizeof *drops) : NULL;
	if (res->drop_count && !drops)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < res->drop_count; i++) {
		const rec_summary_drop *d = &res->drops[i];
		char buf[32];
		const char *rn = rec_drop_reason_name(d->reason);
		if (!rn) {
			snprintf(buf, sizeof buf, "reason %" PRIu32, d->reason);
			rn = buf;
		}
		const char *tn = d->type ? d->type : "(not known)";
		drops[i].type = rec_vi_intern(v, tn, strlen(tn));
		drops[i].reason = rec_vi_intern(v, rn, strlen(rn));
		drops[i].count = d->count;
		if (drops[i].type == UINT32_MAX || drops[i].reason == UINT32_MAX) {
			free(drops);
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		}
	}
	free(s->drops);
	s->drops = drops;
	s->ndrops = res->drop_count;
	s->have_summary = true;
	s->files = res->file_count;
	s->chunks = res->chunks;
	s->damaged = res->chunks_damaged;
	s->events = res->events;
	s->dropped = res->dropped;
	s->restarts = res->restarts;
	s->problems = res->problem_count;
	return REC_OK;
}

static rec_status rc_finish(rec_view *v)
{
	rc_state *s = v->state;
	static const rec_view_column tcols[] = {
		{ "Files", "files", REC_VIEW_COUNT },       { "Chunks", "chunks", REC_VIEW_COUNT },
		{ "Damaged", "chunks_damaged", REC_VIEW_COUNT }, { "Events", "events", REC_VIEW_COUNT },
		{ "Dropped", "dropped", REC_VIEW_COUNT },   { "Runs", "runs", REC_VIEW_COUNT },
		{ "Restarts", "restarts", REC_VIEW_COUNT }, { "Crashes", "crashes", REC_VIEW_COUNT },
		{ "Write Failures", "write_failures", REC_VIEW_COUNT },
		{ "Chunks Not Written", "chunks_not_written", REC_VIEW_COUNT },
	};
	vtable *t = rec_vi_table(v, "recording", "Recording", tcols, 10);
	if (!t)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	rec_view_cell *c = rec_vi_row(v, t);
	if (!c)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	if (s->have_summary) {
		cell_u(&c[0], s->files);
		cell_u(&c[1], s->chunks);
		cell_u(&c[2], s->damaged);
		cell_u(&c[3], s->events);
		cell_u(&c[4], s->dropped);
		cell_u(&c[5], s->nruns);
		cell_u(&c[6], s->restarts);
		cell_u(&c[7], s->crashes);
	}
	cell_u(&c[8], s->wf_records);
	cell_u(&c[9], s->wf_chunks);

	static const rec_view_column rcols[] = {
		{ "Run", "run_id", REC_VIEW_TEXT },   { "Pid", "pid", REC_VIEW_COUNT },
		{ "Start", "start", REC_VIEW_TIME },  { "Duration", "duration", REC_VIEW_DURATION },
		{ "Chunks", "chunks", REC_VIEW_COUNT }, { "Events", "events", REC_VIEW_COUNT },
		{ "Dropped", "dropped", REC_VIEW_COUNT }, { "Ended", "ended", REC_VIEW_TEXT },
	};
	vtable *rt = rec_vi_table(v, "runs", "Runs", rcols, 8);
	if (!rt)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < s->nruns; i++) {
		const run_copy *r = &s->runs[i];
		rec_view_cell *rc = rec_vi_row(v, rt);
		if (!rc)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		char id[24];
		snprintf(id, sizeof id, "%016" PRIx64, r->run_id);
		rec_vi_cell_text(v, &rc[0], id);
		cell_u(&rc[1], r->pid);
		if (r->first) {
			cell_i(&rc[2], r->first);
			cell_u(&rc[3], (uint64_t)(r->last > r->first ? r->last - r->first : 0));
		}
		cell_u(&rc[4], r->chunks);
		cell_u(&rc[5], r->events);
		cell_u(&rc[6], r->dropped);
		rec_vi_cell_text(v, &rc[7], rec_run_end_name(r->ended));
	}

	static const rec_view_column dcols[] = {
		{ "Event Type", "type", REC_VIEW_TEXT },
		{ "Reason", "reason", REC_VIEW_TEXT },
		{ "Lost", "lost", REC_VIEW_COUNT },
	};
	vtable *dt = rec_vi_table(v, "drops", "Dropped Events by Type and Reason", dcols, 3);
	if (!dt)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < s->ndrops; i++) { /* the summary's order: by count */
		rec_view_cell *dc = rec_vi_row(v, dt);
		if (!dc)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		rec_vi_cell_text(v, &dc[0], view_name(v, s->drops[i].type));
		rec_vi_cell_text(v, &dc[1], view_name(v, s->drops[i].reason));
		cell_u(&dc[2], s->drops[i].count);
	}
	rec_vi_cut(v, dt, v->o.top);
	return REC_OK;
}

const view_impl rec_view_recording = {
	"recording", "chunks, runs, restarts, crashes, write failures, drops per type and reason",
	false, sizeof(rc_state), NULL, rc_add, NULL, rc_finish, rc_free, rc_wants,
	NULL,
};
