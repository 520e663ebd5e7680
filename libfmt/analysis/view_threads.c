/* SPDX-License-Identifier: MIT */
/*
 * view_threads.c - "threads": per thread (process and OS tid), its events,
 * CPU time (rec.CPUSample weights), lock waits, condition waits, sleeps,
 * I/O waits (category rec/IO) and allocated bytes (rec.Alloc weight); a
 * note says how much of the process's CPU (rec.ProcessStats) the samples
 * cover.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_internal.h"

typedef struct th_row {
	size_t thread;       /* index in v->threads */
	uint64_t events, cpu, lock, cond, sleep, io, alloc;
} th_row;

/* The process's CPU time by run (rec.ProcessStats, cumulative within a
 * run) against the CPU samples' between its first and last statistics. */
#define TH_RUNS 64
typedef struct th_run {
	uint64_t run_id;
	uint64_t cpu0, cpu;            /* at the first and the last statistics */
	uint64_t sampled, sampled_last; /* since the first; at the last */
	uint32_t stats;
} th_run;

typedef struct th_state {
	vmap rows;           /* by thread index */
	th_run runs[TH_RUNS];
	size_t nruns;
	bool runs_over;      /* more runs than TH_RUNS: no note */
	th_run *last_run;    /* the last one looked up (events come run by run) */
} th_state;

static th_run *run_of(th_state *s, const rec_event *ev, bool add)
{
	const uint64_t id = ev->chunk ? ev->chunk->run_id : 0;
	if (s->last_run && s->last_run->run_id == id)
		return s->last_run;
	for (size_t i = 0; i < s->nruns; i++)
		if (s->runs[i].run_id == id)
			return s->last_run = &s->runs[i];
	if (!add)
		return NULL;
	if (s->nruns == TH_RUNS) {
		s->runs_over = true;
		return NULL;
	}
	th_run *r = &s->runs[s->nruns++];
	memset(r, 0, sizeof *r);
	r->run_id = id;
	return s->last_run = r;
}

static rec_status th_init(rec_view *v)
{
	rec_vi_vmap_init(&((th_state *)v->state)->rows, sizeof(th_row));
	return REC_OK;
}

static void th_free(rec_view *v)
{
	rec_vi_vmap_free(&((th_state *)v->state)->rows);
}

static rec_status th_add(rec_view *v, const rec_event *ev, bool selected)
{
	th_state *s = v->state;
	if (selected && !ev->thread && ev->type && strcmp(ev->type->name, "rec.ProcessStats") == 0) {
		th_run *r = run_of(s, ev, true);
		if (r) {
			const uint64_t cpu = rec_vi_field_u64(ev, "cpuUser", 0) +
					     rec_vi_field_u64(ev, "cpuSystem", 0);
			if (r->stats++ == 0)
				r->cpu0 = cpu;
			r->cpu = cpu;
			r->sampled_last = r->sampled;
		}
		return REC_OK;
	}
	if (!selected || !ev->thread)
		return REC_OK;
	size_t ti;
	if (!rec_vi_thread(v, ev, &ti))
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	size_t i = rec_vi_vmap_get(&s->rows, (const char *)&ti, sizeof ti, NULL);
	if (i == SIZE_MAX)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	th_row *r = vmap_at(&s->rows, i);
	r->thread = ti;
	r->events++;
	uint64_t d = (uint64_t)(ev->duration_ns > 0 ? ev->duration_ns : 0);
	const vtype *vt = rec_vi_vtype(v, ev);
	if (vt->role == VT_CPU) {
		const uint64_t w = rec_vi_cpu_weight(vt, ev);
		r->cpu += w;
		th_run *run = run_of(s, ev, false);
		if (run && run->stats)
			run->sampled += w;
	} else if (vt->role == VT_LOCKWAIT)
		r->lock += d;
	else if (vt->role == VT_CONDWAIT)
		r->cond += d;
	else if (vt->role == VT_SLEEP)
		r->sleep += d;
	else if (vt->role == VT_ALLOC)
		r->alloc += rec_vi_alloc_bytes(vt, ev);
	else if (vt->io)
		r->io += d;
	return REC_OK;
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	rec_view *v = ctx;
	const th_row *x = a, *y = b;
	if (x->cpu != y->cpu)
		return x->cpu > y->cpu ? -1 : 1;
	uint64_t wx = x->lock + x->cond + x->sleep + x->io, wy = y->lock + y->cond + y->sleep + y->io;
	if (wx != wy)
		return wx > wy ? -1 : 1;
	if (x->events != y->events)
		return x->events > y->events ? -1 : 1;
	const vthread *tx = vmap_at(&v->threads, x->thread), *ty = vmap_at(&v->threads, y->thread);
	return tx->tid < ty->tid ? -1 : tx->tid > ty->tid;
}

static rec_status th_finish(rec_view *v)
{
	th_state *s = v->state;
	static const rec_view_column cols[] = {
		{ "Thread", "thread", REC_VIEW_TEXT },   { "Tid", "tid", REC_VIEW_COUNT },
		{ "Events", "events", REC_VIEW_COUNT },  { "CPU", "cpu", REC_VIEW_DURATION },
		{ "Lock Wait", "lock_wait", REC_VIEW_DURATION }, { "Cond Wait", "cond_wait", REC_VIEW_DURATION },
		{ "Sleep", "sleep", REC_VIEW_DURATION }, { "I/O", "io", REC_VIEW_DURATION },
		{ "Allocated", "allocated", REC_VIEW_BYTES },
	};
	vtable *t = rec_vi_table(v, "threads", "Threads", cols, 9);
	if (!t)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	rec_vi_sort(s->rows.vals, s->rows.n, sizeof(th_row), cmp_rows, v);
	for (size_t i = 0; i < s->rows.n; i++) {
		th_row *r = vmap_at(&s->rows, i);
		const vthread *th = vmap_at(&v->threads, r->thread);
		rec_view_cell *c = rec_vi_row(v, t);
		if (!c)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		char buf[40];
		rec_vi_cell_text(v, &c[0], th->name ? view_name(v, th->name) : (snprintf(buf, sizeof buf, "(unnamed)"), buf));
		cell_u(&c[1], th->tid);
		cell_u(&c[2], r->events);
		cell_u(&c[3], r->cpu);
		cell_u(&c[4], r->lock);
		cell_u(&c[5], r->cond);
		cell_u(&c[6], r->sleep);
		cell_u(&c[7], r->io);
		cell_u(&c[8], r->alloc);
	}
	rec_vi_cut(v, t, v->o.top);
	/* How much of the process's CPU the samples cover (not with --thread:
	 * the process's time is every thread's). */
	uint64_t used = 0, sampled = 0;
	size_t runs = 0;
	for (size_t i = 0; i < s->nruns && !s->runs_over && !v->thread; i++) {
		const th_run *r = &s->runs[i];
		if (r->stats < 2 || r->cpu < r->cpu0)
			continue;
		used += r->cpu - r->cpu0;
		sampled += r->sampled_last;
		runs++;
	}
	if (runs && used) {
		char note[400];
		snprintf(note, sizeof note,
			 "CPU: samples x period x (1 + overruns) of rec.CPUSample. From its first "
			 "rec.ProcessStats to its last the process used %.3f s of CPU, and its samples "
			 "in that time stand for %.3f s (%.0f %%): the recorder's own threads, each "
			 "thread's start and end and threads never attached (without the preload "
			 "library) are not sampled",
			 (double)used / 1e9, (double)sampled / 1e9, 100.0 * (double)sampled / (double)used);
		rec_vi_note(v, t, note);
	} else {
		rec_vi_note(v, t, "CPU: samples x period x (1 + overruns) of rec.CPUSample");
	}
	return REC_OK;
}

const view_impl rec_view_threads = {
	"threads", "per thread: events, CPU time, lock, condition, sleep and I/O waits, allocated bytes",
	false, sizeof(th_state), th_init, th_add, NULL, th_finish, th_free, NULL,
	NULL,
};
