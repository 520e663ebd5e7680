/* SPDX-License-Identifier: MIT */
/*
 * findings.c - the findings engine of rec/findings.h: the rules' list, one
 * pass that feeds every event to the views the rules read (requests,
 * contention-by-lock, allocation-by-span, startup, recording, latency,
 * allocation-by-site) and to the lock-order graph, the few event details
 * no view keeps (the longest waits per lock, crashes, write failures,
 * sampler overruns), and the finding builder the rule files use.  The rules
 * themselves are in findings_locks.c, findings_spans.c and
 * findings_recording.c.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h" /* rec_strdup_opt() */
#include "findings_internal.h"

/* ---- the rules --------------------------------------------------------- */

static const rec_finding_rule rules[] = {
	{ "lock-held-while-blocked",
	  "a lock's holder slept, waited on I/O or on a condition for >= 25 % of the time others "
	  "waited for the lock (waits >= 1 ms in total; critical from 40 %)" },
	{ "lock-dominates-latency",
	  "lock waits are >= 25 % of a span type's (or --by value's) mean wall time (spans of "
	  ">= 1 ms; critical from 50 %)" },
	{ "lock-order-cycle", "locks taken in orders that form a cycle (rec.LockOrder): a deadlock "
			      "waiting to happen" },
	{ "allocation-outlier",
	  "one span type or --by value allocates >= 10x per span what every other one does, and "
	  ">= 64 KiB per span" },
	{ "startup-work", "before the first span: >= 100 ms of sleeps, CPU or lock waits, or >= 1 "
			  "MiB allocated" },
	{ "waiting-not-computing",
	  "spans of >= 10 ms mean whose CPU samples are < 10 % of their wall time while recorded "
	  "waits (locks, conditions, sleeps, I/O) are >= 50 % of it" },
	{ "dropped-events", "events were lost (rec.Dropped / the chunks' counts; critical from 1 % "
			    "of the events)" },
	{ "write-failures", "chunks could not be written (rec.WriteFailed)" },
	{ "crashes", "a run ended with a fatal signal (rec.Crash)" },
	{ "restarts", "the recording holds more than one run of the program" },
	{ "counter-resets", "a counter went down within a run (a reset, not a wrap)" },
	{ "sampler-behind", ">= 10 % of the CPU samples stand for several timer expirations "
			    "(overruns: the kernel delivered the timer late)" },
	{ "damaged-chunks", "chunks of the input are damaged and were skipped" },
};

const rec_finding_rule *rec_findings_rules(size_t *count)
{
	if (count)
		*count = sizeof rules / sizeof rules[0];
	return rules;
}

const char *rec_finding_severity_name(rec_finding_severity s)
{
	switch (s) {
	case REC_FINDING_INFO: return "info";
	case REC_FINDING_WARNING: return "warning";
	case REC_FINDING_CRITICAL: return "critical";
	}
	return "info";
}

static size_t rule_index(const char *name)
{
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
		if (strcmp(rules[i].name, name) == 0)
			return i;
	return sizeof rules / sizeof rules[0];
}

/* ---- open, close ------------------------------------------------------- */

static const char *const view_names[FV_COUNT] = {
	"requests", "contention-by-lock", "allocation-by-span", "startup",
	"recording", "latency", "allocation-by-site",
};

rec_status rec_findings_open(rec_findings **out, const rec_findings_options *opts)
{
	if (!out)
		return REC_ERR_INVALID_ARG;
	*out = NULL;
	rec_findings_options o = REC_FINDINGS_OPTIONS_INIT;
	if (opts) {
		if (opts->struct_size < sizeof o || (opts->flags & ~(REC_VIEW_FROM | REC_VIEW_TO)))
			return REC_ERR_INVALID_ARG;
		for (size_t i = 0; i < 4; i++)
			if (opts->reserved[i])
				return REC_ERR_INVALID_ARG;
		o = *opts;
	}
	rec_findings *f = calloc(1, sizeof *f);
	if (!f)
		return REC_ERR_NOMEM;
	bool nomem = false;
	f->by = rec_strdup_opt(o.by, &nomem);
	f->type = rec_strdup_opt(o.type, &nomem);
	o.by = f->by;
	o.type = f->type;
	f->o = o;
	f->dig_first = INT64_MAX;
	rec_vi_vmap_init(&f->locks, sizeof(flock));
	rec_vi_vmap_init(&f->threads, sizeof(uint32_t));
	rec_vi_vmap_init(&f->names, 1);
	rec_status st = nomem ? REC_ERR_NOMEM : REC_OK;
	for (int k = 0; k < FV_COUNT && st == REC_OK; k++) {
		rec_view_options vo = REC_VIEW_OPTIONS_INIT;
		vo.view = view_names[k];
		vo.flags = o.flags;
		vo.from_wall_ns = o.from_wall_ns;
		vo.to_wall_ns = o.to_wall_ns;
		vo.type = o.type;
		if (k == FV_REQUESTS || k == FV_ALLOC_SPAN || k == FV_LATENCY)
			vo.by = o.by;
		st = rec_view_open(&f->views[k], &vo);
	}
	if (st == REC_OK) {
		rec_lockgraph_options lo = REC_LOCKGRAPH_OPTIONS_INIT;
		lo.graphs = REC_LOCKGRAPH_ORDER;
		if (o.flags & REC_VIEW_FROM)
			lo.from_wall_ns = o.from_wall_ns;
		if (o.flags & REC_VIEW_TO)
			lo.to_wall_ns = o.to_wall_ns;
		st = rec_lockgraph_open(&f->order, &lo);
	}
	if (st != REC_OK) {
		rec_findings_close(f);
		return st;
	}
	*out = f;
	return REC_OK;
}

void rec_findings_close(rec_findings *f)
{
	if (!f)
		return;
	for (int k = 0; k < FV_COUNT; k++)
		rec_view_close(f->views[k]);
	rec_lockgraph_close(f->order);
	rec_vi_vmap_free(&f->locks);
	rec_vi_vmap_free(&f->threads);
	rec_vi_vmap_free(&f->names);
	for (size_t i = 0; i < f->nresets; i++)
		free(f->resets[i].name);
	free(f->resets);
	for (size_t i = 0; i < f->nstrs; i++)
		free(f->strs[i]);
	free(f->strs);
	free(f->built);
	free(f->list);
	free(f->by);
	free(f->type);
	free(f);
}

const char *rec_findings_errmsg(const rec_findings *f)
{
	return f && f->err[0] ? f->err : "no error";
}

bool rec_findings_by_found(const rec_findings *f)
{
	return f && (rec_view_by_found(f->views[FV_REQUESTS]) || rec_view_by_found(f->views[FV_ALLOC_SPAN]));
}

bool rec_findings_type_found(const rec_findings *f)
{
	return f && rec_view_type_found(f->views[FV_REQUESTS]);
}

bool rec_findings_wants_type(const rec_findings *f, const rec_type *t)
{
	if (!f || !t)
		return false;
	/* note_thread() takes the name of every event's thread (a lock's
	 * holder may show itself only in events no rule counts), and the
	 * startup, requests and allocation-by-span views read every event;
	 * were it not so, the union of the views' (rec_view_wants_type()), the
	 * lock-order graph's and note_event()'s types would be read. */
	return true;
}

int rec_findings_type_filter(void *ctx, const rec_type *t)
{
	return rec_findings_wants_type(ctx, t);
}

static rec_status fail(rec_findings *f, rec_status st, const char *msg)
{
	snprintf(f->err, sizeof f->err, "%s", msg);
	return st;
}

/* The input's start known (its first event at first_ev, INT64_MAX: none
 * came, only digests): the offset of a worst overrun noted before it. */
static void place_start(rec_findings *f, int64_t first_ev)
{
	f->input_start = first_ev < f->dig_first ? first_ev : f->dig_first;
	if (f->overrun_unplaced)
		f->worst_overrun.offset = f->worst_overrun.wall - f->input_start;
	f->overrun_unplaced = false;
}

rec_status rec_findings_begin_input(rec_findings *f)
{
	if (!f || f->finished)
		return REC_ERR_INVALID_ARG;
	if (!f->have_start && f->dig_first != INT64_MAX)
		place_start(f, INT64_MAX);
	f->dig_first = INT64_MAX;
	memset(f->dig_threads, 0, sizeof f->dig_threads);
	f->have_start = false;
	memset(f->tcache, 0, sizeof f->tcache);
	memset(f->masks, 0, sizeof f->masks);
	for (int k = 0; k < FV_COUNT; k++) {
		rec_status st = rec_view_begin_input(f->views[k]);
		if (st != REC_OK)
			return fail(f, st, rec_view_errmsg(f->views[k]));
	}
	return REC_OK;
}

/* ---- the event details no view keeps ------------------------------------ */

static void thread_key(char key[12], uint32_t pid, uint64_t tid)
{
	memcpy(key, &pid, 4);
	memcpy(key + 4, &tid, 8);
}

static rec_status note_thread_name(rec_findings *f, const rec_event *ev);

static rec_status note_thread(rec_findings *f, const rec_event *ev)
{
	if (!ev->thread || !ev->thread->name || !ev->thread->name[0])
		return REC_OK;
	/* A thread of the chunk's pool noted before: nothing new. */
	const rec_chunk_info *c = ev->chunk;
	vptr_ent *e = c ? &f->tcache[((uintptr_t)ev->thread / sizeof *ev->thread) % VTHREAD_CACHE]
			: NULL;
	if (e && e->p == ev->thread && e->chunk_offset == c->offset && e->run_id == c->run_id &&
	    e->chunk_seq == c->sequence)
		return REC_OK;
	rec_status st = note_thread_name(f, ev);
	if (st == REC_OK && e) {
		e->p = ev->thread;
		e->chunk_offset = c->offset;
		e->run_id = c->run_id;
		e->chunk_seq = c->sequence;
	}
	return st;
}

/* The first name of ev's thread (by process and OS tid). */
static rec_status note_thread_name(rec_findings *f, const rec_event *ev)
{
	char key[12];
	thread_key(key, ev->chunk ? ev->chunk->pid : 0, ev->thread->os_tid);
	bool created;
	size_t i = rec_vi_vmap_get(&f->threads, key, sizeof key, &created);
	if (i == SIZE_MAX)
		return REC_ERR_NOMEM;
	uint32_t *name = vmap_at(&f->threads, i);
	if (*name)
		return REC_OK;
	size_t n = rec_vi_vmap_get(&f->names, ev->thread->name, strlen(ev->thread->name), NULL);
	if (n == SIZE_MAX)
		return REC_ERR_NOMEM;
	name = vmap_at(&f->threads, i);
	*name = (uint32_t)n + 1;
	return REC_OK;
}

const char *rec_fi_thread(rec_findings *f, uint32_t pid, uint64_t tid)
{
	char key[12];
	thread_key(key, pid, tid);
	size_t i = rec_vi_vmap_find(&f->threads, key, sizeof key);
	if (i != SIZE_MAX) {
		const uint32_t *name = vmap_at(&f->threads, i);
		if (*name)
			return vmap_key(&f->names, *name - 1);
	}
	return rec_fi_str(f, "tid=%" PRIu64, tid);
}

static const char *field_str(const vtype *vt, const rec_event *ev, int k, size_t *len)
{
	int i = vt_field(vt, ev, k);
	if (i < 0 || (ev->values[i].type != REC_TYPE_STRING && ev->values[i].type != REC_TYPE_TEXT) ||
	    !ev->values[i].v.s.ptr) {
		*len = 0;
		return NULL;
	}
	*len = ev->values[i].v.s.len;
	return ev->values[i].v.s.ptr;
}

static bool selected(const rec_findings *f, const rec_event *ev)
{
	if ((f->o.flags & REC_VIEW_FROM) && ev->wall_ns < f->o.from_wall_ns)
		return false;
	if ((f->o.flags & REC_VIEW_TO) && ev->wall_ns >= f->o.to_wall_ns)
		return false;
	return true;
}

static rec_status note_wait(rec_findings *f, const vtype *vt, const rec_event *ev)
{
	size_t len;
	const char *name = field_str(vt, ev, VF_LOCKNAME, &len);
	char addr[32];
	if (!name || !len) {
		len = (size_t)snprintf(addr, sizeof addr, "0x%" PRIx64,
				       vt_u64(vt, ev, VF_LOCKADDR, 0));
		name = addr;
	}
	size_t i = rec_vi_vmap_get(&f->locks, name, len, NULL);
	if (i == SIZE_MAX)
		return REC_ERR_NOMEM;
	flock *l = vmap_at(&f->locks, i);
	fwait w = { ev->wall_ns, ev->wall_ns - f->input_start, ev->duration_ns,
		    ev->thread ? ev->thread->os_tid : 0, vt_u64(vt, ev, VF_HOLDER, 0),
		    ev->chunk ? ev->chunk->pid : 0 };
	uint32_t k = l->n < F_MAX_EXAMPLES ? l->n++ : F_MAX_EXAMPLES - 1;
	if (k == F_MAX_EXAMPLES - 1 && l->n == F_MAX_EXAMPLES && l->top[k].dur >= w.dur &&
	    l->top[k].wall)
		return REC_OK;
	l->top[k] = w;
	while (k > 0 && l->top[k - 1].dur < l->top[k].dur) { /* longest first */
		fwait t = l->top[k - 1];
		l->top[k - 1] = l->top[k];
		l->top[k] = t;
		k--;
	}
	return REC_OK;
}

static void note_event(rec_findings *f, fnote *list, uint32_t *n, const rec_event *ev, uint64_t u,
		       const char *text, size_t tlen)
{
	if (*n >= F_MAX_EXAMPLES)
		return;
	fnote *x = &list[(*n)++];
	x->wall = ev->wall_ns;
	x->offset = ev->wall_ns - f->input_start;
	x->dur = ev->duration_ns;
	x->tid = ev->thread ? ev->thread->os_tid : 0;
	x->pid = ev->chunk ? ev->chunk->pid : 0;
	x->u = u;
	snprintf(x->text, sizeof x->text, "%.*s", (int)(tlen < 100 ? tlen : 100), text ? text : "");
}

/* A selected CPU sample ev (as an event or a digest) with ov overruns. */
static void note_cpu(rec_findings *f, const rec_event *ev, uint64_t ov)
{
	f->cpu_samples++;
	if (!ov)
		return;
	f->cpu_overrun_samples++;
	f->cpu_overruns += ov;
	if (ov > f->worst_overrun.u) {
		uint32_t one = 0;
		note_event(f, &f->worst_overrun, &one, ev, ov, NULL, 0);
		/* a digest before the input's first event: its start may be
		 * earlier (place_start() sets the offset) */
		f->overrun_unplaced = !f->have_start;
	}
}

/* Which views read ev's type (bit k: views[k]), once per type of a chunk:
 * a view is given only those (rec_view_add_event() would pass over the
 * others). */
/* The views that read ev's type, in *views; the mask entry of ev's type in
 * its chunk, or NULL (an event without a chunk). */
static struct fmask *views_of(rec_findings *f, const rec_event *ev, uint32_t *views)
{
	const rec_chunk_info *c = ev->chunk;
	struct fmask *m = &f->masks[VTYPE_SLOT(ev->type)];
	if (c && m->type == ev->type && m->chunk_offset == c->offset && m->run_id == c->run_id &&
	    m->chunk_seq == c->sequence) {
		*views = m->views;
		return m;
	}
	uint32_t vs = 0;
	for (int k = 0; k < FV_COUNT; k++)
		if (rec_view_wants_type(f->views[k], ev->type))
			vs |= 1u << k;
	if (f->no_spans && (!ev->type->name || strncmp(ev->type->name, "rec.", 4) != 0)) {
		if (f->digested) { /* they were counted as if none could come */
			f->unexpected = ev->type->name ? ev->type->name : "(unnamed)";
		} else {
			f->no_spans = false;
			rec_vi_startup_no_span(f->views[FV_STARTUP], false);
		}
	}
	*views = vs;
	if (!c)
		return NULL;
	m->type = ev->type;
	m->chunk_offset = c->offset;
	m->run_id = c->run_id;
	m->chunk_seq = c->sequence;
	m->views = vs;
	m->have_vt = false;
	return m;
}

rec_status rec_findings_add_event(rec_findings *f, const rec_event *ev)
{
	if (!f || !ev || f->finished)
		return REC_ERR_INVALID_ARG;
	if (f->dig_status != REC_OK)
		return f->dig_status;
	f->pass_begun = true;
	if (!f->have_start) {
		f->have_start = true;
		place_start(f, ev->wall_ns);
	}
	uint32_t views;
	struct fmask *m = views_of(f, ev, &views);
	if (f->unexpected) {
		char msg[200];
		snprintf(msg, sizeof msg,
			 "an event of type %.100s, of which the summary added counted none (the input "
			 "changed while it was read?)",
			 f->unexpected);
		return f->dig_status = fail(f, REC_ERR_STATE, msg);
	}
	for (int k = 0; k < FV_COUNT; k++) {
		if (!(views & (1u << k)))
			continue;
		if ((k == FV_REQUESTS || k == FV_ALLOC_SPAN) && rec_vi_spans_pass(f->views[k], ev))
			continue;
		rec_status st = rec_view_add_event(f->views[k], ev);
		if (st != REC_OK)
			return fail(f, st, rec_view_errmsg(f->views[k]));
	}
	rec_status st = rec_lockgraph_add_event(f->order, ev);
	if (st != REC_OK)
		return fail(f, st, rec_lockgraph_errmsg(f->order));
	if (note_thread(f, ev) != REC_OK)
		return fail(f, REC_ERR_NOMEM, "out of memory");
	if (!selected(f, ev))
		return REC_OK;
	/* the type as the latency view resolved it for this chunk (kept in
	 * the mask entry: one lookup per type and chunk) */
	const vtype *vt;
	if (m && m->have_vt) {
		vt = &m->vt;
	} else {
		vt = rec_vi_vtype(f->views[FV_LATENCY], ev);
		if (m) {
			m->vt = *vt;
			m->have_vt = true;
		}
	}
	if (vt->role == VT_LOCKWAIT) {
		if (note_wait(f, vt, ev) != REC_OK)
			return fail(f, REC_ERR_NOMEM, "out of memory");
	} else if (vt->role == VT_CPU) {
		note_cpu(f, ev, vt_u64(vt, ev, VF_OVERRUNS, 0));
	} else if (vt->role == VT_CRASH) {
		note_event(f, f->crashes, &f->ncrashes, ev, vt_u64(vt, ev, VF_SIGNAL, 0), NULL, 0);
	} else if (vt->role == VT_WRITEFAILED) {
		size_t len;
		const char *msg = field_str(vt, ev, VF_MESSAGE, &len);
		note_event(f, f->wfails, &f->nwfails, ev, vt_u64(vt, ev, VF_CHUNKS, 0), msg, len);
	}
	return REC_OK;
}

const char *rec_findings_digest_type(const rec_findings *f)
{
	/* the views that read CPU samples take them as digests (the others:
	 * latency, recording and the allocation views read none of them) */
	if (!f || f->type)
		return NULL;
	static const int dig_views[] = { FV_REQUESTS, FV_CONTENTION, FV_STARTUP };
	for (size_t k = 0; k < sizeof dig_views / sizeof dig_views[0]; k++)
		if (!rec_view_digest_type(f->views[dig_views[k]]))
			return NULL;
	return "rec.CPUSample";
}

/* Whether view k is given the digests (requests is not when no span can
 * come: it would hold them for none). */
static bool gives_digests(const rec_findings *f, int k)
{
	return rec_view_digest_type(f->views[k]) && !(k == FV_REQUESTS && f->no_spans);
}

void rec_findings_add_digests(void *ctx, const rec_chunk_info *chunk, const rec_type *type,
			      const rec_digest *d, size_t n)
{
	rec_findings *f = ctx;
	if (!f || f->finished || !chunk || !type || (n && !d) || !rec_findings_digest_type(f) ||
	    f->dig_status != REC_OK)
		return;
	f->pass_begun = true;
	f->digested |= n > 0;
	for (int k = 0; k < FV_COUNT; k++)
		if (gives_digests(f, k))
			rec_view_add_digests(f->views[k], chunk, type, d, n);
	int fp, fo; /* (the findings read the overruns; the views, the weight) */
	rec_vi_dig_cpu_fields(type, &fp, &fo);
	/* as rec_findings_add_event() does with each as an event */
	rec_event ev;
	memset(&ev, 0, sizeof ev);
	ev.chunk = chunk;
	ev.type = type;
	for (size_t i = 0; i < n; i++) {
		ev.ticks = d[i].ticks;
		ev.wall_ns = d[i].wall_ns;
		ev.thread = d[i].thread;
		ev.stack = d[i].stack;
		if (!f->have_start && d[i].wall_ns < f->dig_first)
			f->dig_first = d[i].wall_ns;
		struct fdig_thread *dt = &f->dig_threads[((uintptr_t)d[i].thread >> 4) % 64];
		if (d[i].thread && (dt->p != d[i].thread || dt->chunk_offset != chunk->offset)) {
			/* the thread's name (the lock-order graph reads nothing
			 * else of a CPU sample), once per thread of a chunk */
			dt->p = d[i].thread;
			dt->chunk_offset = chunk->offset;
			rec_status st = rec_lockgraph_add_event(f->order, &ev);
			if (st != REC_OK) {
				f->dig_status = fail(f, st, rec_lockgraph_errmsg(f->order));
				return;
			}
			if (note_thread(f, &ev) != REC_OK) {
				f->dig_status = fail(f, REC_ERR_NOMEM, "out of memory");
				return;
			}
		}
		if (!selected(f, &ev))
			continue;
		note_cpu(f, &ev, fo >= 0 ? d[i].field[fo] : 0);
	}
	/* (a view's failure is said by its next rec_view_add_event() or
	 * rec_view_get()) */
}

rec_status rec_findings_add_summary(rec_findings *f, const rec_summary_result *res)
{
	if (!f || !res || f->finished)
		return REC_ERR_INVALID_ARG;
	if (!f->pass_begun && !f->type) {
		bool user = false;
		for (size_t i = 0; i < res->type_count && !user; i++)
			user = res->types[i].count &&
			       (!res->types[i].name || strncmp(res->types[i].name, "rec.", 4) != 0);
		f->no_spans = !user;
		rec_vi_startup_no_span(f->views[FV_STARTUP], f->no_spans);
	}
	rec_status st = rec_view_add_summary(f->views[FV_RECORDING], res);
	if (st != REC_OK)
		return fail(f, st, rec_view_errmsg(f->views[FV_RECORDING]));
	for (size_t i = 0; i < f->nresets; i++)
		free(f->resets[i].name);
	free(f->resets);
	f->resets = NULL;
	f->nresets = 0;
	if (res->counter_count) {
		f->resets = calloc(res->counter_count, sizeof *f->resets);
		if (!f->resets)
			return fail(f, REC_ERR_NOMEM, "out of memory");
		for (size_t i = 0; i < res->counter_count; i++) {
			if (!res->counters[i].resets)
				continue;
			char *n = strdup(res->counters[i].name ? res->counters[i].name : "");
			if (!n)
				return fail(f, REC_ERR_NOMEM, "out of memory");
			f->resets[f->nresets].name = n;
			f->resets[f->nresets++].resets = res->counters[i].resets;
		}
	}
	f->have_summary = true;
	f->chunks_damaged = res->chunks_damaged;
	f->problems = res->problem_count;
	f->first_problem[0] = '\0';
	if (res->problem_count) {
		const rec_summary_problem *p = &res->problems[0];
		snprintf(f->first_problem, sizeof f->first_problem, "%s: chunk %" PRId64
			 " at offset %" PRIu64 ": %s", p->file ? p->file : "", p->chunk, p->offset,
			 p->message ? p->message : "");
	}
	return REC_OK;
}

/* ---- the builder ---------------------------------------------------------- */

static const char *keep(rec_findings *f, char *s)
{
	if (!s)
		return "";
	if (f->nstrs == f->capstrs) {
		size_t nc = f->capstrs ? f->capstrs * 2 : 64;
		char **n = realloc(f->strs, nc * sizeof *n);
		if (!n) {
			free(s);
			snprintf(f->err, sizeof f->err, "out of memory");
			return "";
		}
		f->strs = n;
		f->capstrs = nc;
	}
	f->strs[f->nstrs++] = s;
	return s;
}

static const char *vfmt(rec_findings *f, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static const char *vfmt(rec_findings *f, const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	return keep(f, s);
}

const char *rec_fi_str(rec_findings *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	const char *s = vfmt(f, fmt, ap);
	va_end(ap);
	return s;
}

void rec_fi_subject(rec_findings *f, fbuilt *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	b->pub.subject = vfmt(f, fmt, ap);
	va_end(ap);
}

void rec_fi_summary(rec_findings *f, fbuilt *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	b->pub.summary = vfmt(f, fmt, ap);
	va_end(ap);
}

fbuilt *rec_fi_new(rec_findings *f, const char *rule, rec_finding_severity sev, const char *next)
{
	if (f->nbuilt == f->capbuilt) {
		size_t nc = f->capbuilt ? f->capbuilt * 2 : 16;
		fbuilt *n = realloc(f->built, nc * sizeof *n);
		if (!n) {
			snprintf(f->err, sizeof f->err, "out of memory");
			return NULL;
		}
		f->built = n;
		f->capbuilt = nc;
	}
	fbuilt *b = &f->built[f->nbuilt++];
	memset(b, 0, sizeof *b);
	b->pub.rule = rule;
	b->pub.severity = sev;
	b->pub.subject = "";
	b->pub.summary = "";
	b->pub.next = next;
	return b;
}

static rec_finding_fact *fact(fbuilt *b, const char *key, const char *title, rec_view_kind kind)
{
	if (b->pub.fact_count >= F_MAX_FACTS)
		return NULL;
	rec_finding_fact *x = &b->facts[b->pub.fact_count++];
	memset(x, 0, sizeof *x);
	x->key = key;
	x->title = title;
	x->kind = kind;
	return x;
}

void rec_fi_fact_u(fbuilt *b, const char *key, const char *title, rec_view_kind kind, uint64_t u)
{
	rec_finding_fact *x = fact(b, key, title, kind);
	if (x)
		x->value.u = u;
}

void rec_fi_fact_f(fbuilt *b, const char *key, const char *title, double pct)
{
	rec_finding_fact *x = fact(b, key, title, REC_VIEW_PERCENT);
	if (x)
		x->value.f = pct;
}

void rec_fi_fact_text(rec_findings *f, fbuilt *b, const char *key, const char *title, const char *s)
{
	rec_finding_fact *x = fact(b, key, title, REC_VIEW_TEXT);
	if (x)
		x->value.text = rec_fi_str(f, "%s", s ? s : "");
}

void rec_fi_example(rec_findings *f, fbuilt *b, int64_t wall, int64_t offset, int64_t dur,
		    const char *thread, const char *what)
{
	if (b->pub.example_count >= F_MAX_EXAMPLES)
		return;
	rec_finding_example *x = &b->examples[b->pub.example_count++];
	x->timed = true;
	x->wall_ns = wall;
	x->offset_ns = offset;
	x->duration_ns = dur;
	x->thread = rec_fi_str(f, "%s", thread ? thread : "");
	x->what = rec_fi_str(f, "%s", what ? what : "");
}

void rec_fi_example_untimed(rec_findings *f, fbuilt *b, const char *what)
{
	if (b->pub.example_count >= F_MAX_EXAMPLES)
		return;
	rec_finding_example *x = &b->examples[b->pub.example_count++];
	memset(x, 0, sizeof *x);
	x->thread = "";
	x->what = rec_fi_str(f, "%s", what ? what : "");
}

const char *rec_fi_dur(rec_findings *f, uint64_t ns)
{
	double d = (double)ns;
	if (ns >= 1000000000ull)
		return rec_fi_str(f, "%.2f s", d / 1e9);
	if (ns >= 1000000ull)
		return rec_fi_str(f, "%.1f ms", d / 1e6);
	if (ns >= 1000ull)
		return rec_fi_str(f, "%.1f us", d / 1e3);
	return rec_fi_str(f, "%" PRIu64 " ns", ns);
}

const char *rec_fi_bytes(rec_findings *f, uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	if (bytes < 1024)
		return rec_fi_str(f, "%" PRIu64 " bytes", bytes);
	double v = (double)bytes / 1024.0;
	size_t u = 0;
	while (v >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
		v /= 1024.0;
		u++;
	}
	return rec_fi_str(f, "%.1f %s", v, units[u]);
}

/* ---- tables ----------------------------------------------------------------- */

const rec_view_table *rec_fi_table(const rec_findings *f, int k, const char *name)
{
	for (size_t i = 0; i < f->ntables[k]; i++)
		if (strcmp(f->tables[k][i].name, name) == 0)
			return &f->tables[k][i];
	return NULL;
}

const rec_view_table *rec_findings_table(const rec_findings *f, const char *name)
{
	if (!f || !f->finished || !name)
		return NULL;
	for (int k = 0; k < FV_COUNT; k++) {
		const rec_view_table *t = rec_fi_table(f, k, name);
		if (t)
			return t;
	}
	return NULL;
}

int rec_fi_col(const rec_view_table *t, const char *key)
{
	for (size_t c = 0; t && c < t->column_count; c++)
		if (strcmp(t->columns[c].key, key) == 0)
			return (int)c;
	return -1;
}

const rec_view_cell *rec_fi_cell(const rec_view_table *t, size_t r, const char *key)
{
	int c = rec_fi_col(t, key);
	return c < 0 || r >= t->row_count ? NULL : &t->cells[r * t->column_count + (size_t)c];
}

uint64_t rec_fi_u(const rec_view_table *t, size_t r, const char *key)
{
	const rec_view_cell *c = rec_fi_cell(t, r, key);
	return c && !c->null ? c->u : 0;
}

const char *rec_fi_text(const rec_view_table *t, size_t r, const char *key)
{
	const rec_view_cell *c = rec_fi_cell(t, r, key);
	return c && !c->null && c->text ? c->text : "";
}

/* ---- evaluation ------------------------------------------------------------- */

static int cmp_finding(const void *a, const void *b, void *ctx)
{
	(void)ctx;
	const rec_finding *x = a, *y = b;
	if (x->severity != y->severity)
		return x->severity > y->severity ? -1 : 1;
	size_t ix = rule_index(x->rule), iy = rule_index(y->rule);
	if (ix != iy)
		return ix < iy ? -1 : 1;
	/* then in the order built (the facts live in f->built, in order) */
	return x->facts < y->facts ? -1 : x->facts > y->facts ? 1 : 0;
}

rec_status rec_fi_run_rules(rec_findings *f, const rec_fi_rule *list, size_t n)
{
	rec_status st = REC_OK;
	for (size_t i = 0; i < n && st == REC_OK; i++)
		st = list[i](f);
	return st;
}

rec_status rec_findings_get(rec_findings *f, const rec_finding **list, size_t *count)
{
	if (!f || !list || !count)
		return REC_ERR_INVALID_ARG;
	if (f->dig_status != REC_OK)
		return f->dig_status;
	if (!f->finished) {
		if (!f->have_start && f->dig_first != INT64_MAX)
			place_start(f, INT64_MAX);
		for (int k = 0; k < FV_COUNT; k++) {
			rec_status st = rec_view_get(f->views[k], &f->tables[k], &f->ntables[k]);
			if (st != REC_OK)
				return fail(f, st, rec_view_errmsg(f->views[k]));
		}
		rec_status st = rec_lockgraph_get(f->order, &f->order_res);
		if (st != REC_OK)
			return fail(f, st, rec_lockgraph_errmsg(f->order));
		f->finished = true;
		f->err[0] = '\0';
		static const rec_fi_rule families[] = { rec_fi_rules_locks, rec_fi_rules_spans,
							rec_fi_rules_recording };
		st = rec_fi_run_rules(f, families, sizeof families / sizeof families[0]);
		if (st == REC_OK && f->err[0])
			st = REC_ERR_NOMEM;
		if (st == REC_OK && f->nbuilt) {
			f->list = malloc(f->nbuilt * sizeof *f->list);
			if (!f->list)
				st = fail(f, REC_ERR_NOMEM, "out of memory");
		}
		if (st != REC_OK) {
			f->nbuilt = 0;
			return st;
		}
		for (size_t i = 0; i < f->nbuilt; i++) {
			f->list[i] = f->built[i].pub;
			f->list[i].facts = f->built[i].facts;
			f->list[i].examples = f->built[i].examples;
		}
		rec_vi_sort(f->list, f->nbuilt, sizeof *f->list, cmp_finding, NULL);
	}
	*list = f->list;
	*count = f->nbuilt;
	return REC_OK;
}
