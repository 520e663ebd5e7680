/* SPDX-License-Identifier: MIT */
/*
 * view_recording.c - "recording": files, chunks, runs, restarts, crashes
 * and write failures from the summary (rec/analysis.h: rec_summary_get()'s
 * result, given with rec_view_add_summary(); nothing re-derived here), plus
 * the events lost per type and reason (rec.Dropped; its `type` field, a
 * Type_Id named by the chunk's metadata, when the recording has it) and the
 * write failures (rec.WriteFailed).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_internal.h"

typedef struct drop_row {
	uint32_t type, reason;
	uint64_t count, records;
} drop_row;

typedef struct run_copy {
	uint64_t run_id, chunks, events, dropped;
	uint32_t pid;
	int64_t first, last;
	rec_run_end ended;
} run_copy;

typedef struct rc_state {
	vmap drops;
	bool have_summary;
	uint64_t files, chunks, damaged, events, dropped, restarts, crashes, problems;
	run_copy *runs;
	size_t nruns;
	uint64_t wf_records, wf_chunks, wf_events, wf_bytes;
} rc_state;

static rec_status rc_init(rec_view *v)
{
	rec_vi_vmap_init(&((rc_state *)v->state)->drops, sizeof(drop_row));
	return REC_OK;
}

static void rc_free(rec_view *v)
{
	rc_state *s = v->state;
	rec_vi_vmap_free(&s->drops);
	free(s->runs);
}

/* The names rec-summary's drop reasons have (spec/EVENTS.md, rec.Dropped). */
static const char *reason_name(uint64_t r, char *buf, size_t cap)
{
	static const char *const names[] = { "buffer full", "no buffer", "nested emit",
					     "rejected", "write failed", "throttled" };
	if (r < sizeof names / sizeof names[0])
		return names[r];
	snprintf(buf, cap, "reason %" PRIu64, r);
	return buf;
}

static rec_status rc_add(rec_view *v, const rec_event *ev, bool selected)
{
	rc_state *s = v->state;
	if (!selected)
		return REC_OK;
	if (rec_vi_type_is(ev, "rec.WriteFailed")) {
		s->wf_records++;
		if (rec_vi_field_u64(ev, "action", 0) == 0) {
			s->wf_chunks += rec_vi_field_u64(ev, "chunks", 0);
			s->wf_events += rec_vi_field_u64(ev, "events", 0);
			s->wf_bytes += rec_vi_field_u64(ev, "bytes", 0);
		}
		return REC_OK;
	}
	if (!rec_vi_type_is(ev, "rec.Dropped"))
		return REC_OK;
	char buf[64];
	const char *tn = "(not recorded)";
	int ti = rec_vi_field(ev, "type");
	if (ti >= 0) {
		uint64_t id = ev->values[ti].v.u;
		tn = "(not known)";
		if (id && ev->chunk) {
			snprintf(buf, sizeof buf, "type id %" PRIu64, id);
			tn = buf;
			for (uint32_t k = 0; k < ev->chunk->type_count; k++)
				if (ev->chunk->types[k].id == id && ev->chunk->types[k].name)
					tn = ev->chunk->types[k].name;
		}
	}
	uint32_t type = rec_vi_intern(v, tn, strlen(tn));
	char rb[32];
	const char *rn = reason_name(rec_vi_field_u64(ev, "reason", 0), rb, sizeof rb);
	uint32_t reason = rec_vi_intern(v, rn, strlen(rn));
	if (type == UINT32_MAX || reason == UINT32_MAX)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	uint32_t key[2] = { type, reason };
	size_t i = rec_vi_vmap_get(&s->drops, (const char *)key, sizeof key, NULL);
	if (i == SIZE_MAX)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	drop_row *r = vmap_at(&s->drops, i);
	r->type = type;
	r->reason = reason;
	r->count += rec_vi_field_u64(ev, "count", 0);
	r->records++;
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

static int cmp_drops(const void *a, const void *b, void *ctx)
{
	rec_view *v = ctx;
	const drop_row *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	int c = strcmp(view_name(v, x->type), view_name(v, y->type));
	return c ? c : strcmp(view_name(v, x->reason), view_name(v, y->reason));
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
		{ "Event Type", "type", REC_VIEW_TEXT }, { "Reason", "reason", REC_VIEW_TEXT },
		{ "Lost", "lost", REC_VIEW_COUNT },      { "Records", "records", REC_VIEW_COUNT },
	};
	vtable *dt = rec_vi_table(v, "drops", "Dropped Events by Type and Reason", dcols, 4);
	if (!dt)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	rec_vi_sort(s->drops.vals, s->drops.n, sizeof(drop_row), cmp_drops, v);
	for (size_t i = 0; i < s->drops.n; i++) {
		drop_row *r = vmap_at(&s->drops, i);
		rec_view_cell *dc = rec_vi_row(v, dt);
		if (!dc)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		rec_vi_cell_text(v, &dc[0], view_name(v, r->type));
		rec_vi_cell_text(v, &dc[1], view_name(v, r->reason));
		cell_u(&dc[2], r->count);
		cell_u(&dc[3], r->records);
	}
	rec_vi_note(v, dt, "Records: rec.Dropped events; \"(not recorded)\": recordings made before "
			 "rec.Dropped had a type field");
	rec_vi_cut(v, dt, v->o.top);
	return REC_OK;
}

const view_impl rec_view_recording = {
	"recording", "chunks, runs, restarts, crashes, write failures, drops per type and reason",
	false, sizeof(rc_state), rc_init, rc_add, NULL, rc_finish, rc_free,
};
