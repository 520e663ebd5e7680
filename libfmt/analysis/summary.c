/* SPDX-License-Identifier: MIT */
/*
 * summary.c - aggregate a recording's chunk infos into a summary (runs,
 * restarts, per-type counts, totals, problems).  Uses only the public reader
 * API: chunk headers, METADATA and STATS; events are decoded only when
 * REC_SUMMARY_VERIFY asks for rec_reader_verify_chunk(), and the rec.Counter
 * records only when REC_SUMMARY_COUNTERS asks for counter totals.
 */
#include "rec/analysis.h"
#include "rec/archive.h"
#include "common/common_internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct type_slot {
	uint64_t hash;
	size_t index; /* into types, +1; 0 = empty */
} type_slot;

typedef struct run_state {
	bool last_final;          /* the chunk with the highest sequence is FINAL */
	bool truncated;           /* a file ended inside a chunk after this run's chunk */
	bool has_events;
	bool crashed;             /* a chunk of the run has a rec.Crash event */
} run_state;

struct rec_summary {
	rec_arena strings; /* owned strings, freed at close */
	rec_summary_file *files;
	size_t file_count, file_cap;
	rec_summary_run *runs;
	run_state *run_states;
	size_t run_count, run_cap, run_state_cap;
	rec_summary_type *types;
	size_t type_count, type_cap;
	type_slot *slots;
	size_t slot_cap; /* power of two */
	rec_summary_type *sorted; /* types sorted for the result */
	rec_summary_problem *problems;
	size_t problem_count, problem_cap;
	uint32_t versions[16];
	size_t version_count;
	rec_summary_result result;
	rec_counters *counters; /* opened on the first REC_SUMMARY_COUNTERS */
	rec_summary_drop *drops;  /* REC_SUMMARY_DROPS: by (type, reason) */
	size_t drop_count, drop_cap;
	rec_summary_drop *drops_sorted;
	uint64_t chunks_unsupported;
	bool have_time;
	char errmsg[256];
};

const char *rec_run_end_name(rec_run_end end)
{
	switch (end) {
	case REC_RUN_CLEAN: return "clean close";
	case REC_RUN_TRUNCATED: return "truncated";
	case REC_RUN_NO_FINAL: return "no final chunk";
	case REC_RUN_CRASH: return "crash event";
	}
	return "unknown";
}

static rec_status fail(rec_summary *s, rec_status st, const char *msg)
{
	snprintf(s->errmsg, sizeof s->errmsg, "%s", msg);
	return st;
}

static const char *str_save(rec_summary *s, const char *p)
{
	if (!p)
		p = "";
	return rec_arena_strndup(&s->strings, p, strlen(p));
}

static bool grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	return rec_array_grow(arr, cap, need, elem, 8);
}

rec_status rec_summary_open(rec_summary **out)
{
	if (!out)
		return REC_ERR_INVALID_ARG;
	rec_summary *s = calloc(1, sizeof *s);
	if (!s)
		return REC_ERR_NOMEM;
	*out = s;
	return REC_OK;
}

void rec_summary_close(rec_summary *s)
{
	if (!s)
		return;
	rec_arena_free(&s->strings);
	free(s->files);
	free(s->runs);
	free(s->run_states);
	free(s->types);
	free(s->slots);
	free(s->sorted);
	free(s->problems);
	rec_counters_close(s->counters);
	free(s->drops);
	free(s->drops_sorted);
	free(s);
}

const char *rec_summary_errmsg(const rec_summary *s)
{
	return (s && s->errmsg[0]) ? s->errmsg : "no error";
}

/* ---- types by name ---------------------------------------------------------- */

static bool slots_rehash(rec_summary *s, size_t cap)
{
	type_slot *ns = calloc(cap, sizeof *ns);
	if (!ns)
		return false;
	for (size_t i = 0; i < s->slot_cap; i++) {
		if (!s->slots[i].index)
			continue;
		size_t j = (size_t)s->slots[i].hash & (cap - 1);
		while (ns[j].index)
			j = (j + 1) & (cap - 1);
		ns[j] = s->slots[i];
	}
	free(s->slots);
	s->slots = ns;
	s->slot_cap = cap;
	return true;
}

static rec_summary_type *type_find(rec_summary *s, const char *name, const rec_type *meta)
{
	if ((s->type_count + 1) * 2 > s->slot_cap && !slots_rehash(s, s->slot_cap ? s->slot_cap * 2 : 64))
		return NULL;
	uint64_t h = rec_fnv1a(REC_NAME_HASH_SEED, name, strlen(name));
	size_t j = (size_t)h & (s->slot_cap - 1);
	while (s->slots[j].index) {
		if (s->slots[j].hash == h && strcmp(s->types[s->slots[j].index - 1].name, name) == 0)
			return &s->types[s->slots[j].index - 1];
		j = (j + 1) & (s->slot_cap - 1);
	}
	if (!grow((void **)&s->types, &s->type_cap, s->type_count + 1, sizeof *s->types))
		return NULL;
	rec_summary_type *t = &s->types[s->type_count];
	memset(t, 0, sizeof *t);
	t->name = str_save(s, name);
	t->label = str_save(s, meta ? meta->label : "");
	t->category = str_save(s, meta ? meta->category : "");
	if (!t->name || !t->label || !t->category)
		return NULL;
	s->type_count++;
	s->slots[j].hash = h;
	s->slots[j].index = s->type_count;
	return t;
}

/* ---- runs ------------------------------------------------------------------------ */

static rec_summary_run *run_find(rec_summary *s, const rec_chunk_info *c, const char *file,
				 size_t *index)
{
	/* Few runs per input: a backwards linear search finds the current one first. */
	for (size_t i = s->run_count; i-- > 0;) {
		rec_summary_run *r = &s->runs[i];
		if (r->run_id == c->run_id && r->pid == c->pid && r->process_start_ns == c->process_start_ns) {
			*index = i;
			return r;
		}
	}
	if (!grow((void **)&s->runs, &s->run_cap, s->run_count + 1, sizeof *s->runs))
		return NULL;
	if (!grow((void **)&s->run_states, &s->run_state_cap, s->run_count + 1, sizeof *s->run_states))
		return NULL;
	rec_summary_run *r = &s->runs[s->run_count];
	memset(r, 0, sizeof *r);
	memset(&s->run_states[s->run_count], 0, sizeof s->run_states[0]);
	r->run_id = c->run_id;
	r->pid = c->pid;
	r->process_start_ns = c->process_start_ns;
	r->file = str_save(s, file);
	if (!r->file)
		return NULL;
	r->last_sequence = c->sequence;
	*index = s->run_count++;
	return r;
}

static bool add_problem(rec_summary *s, const char *file, const rec_problem *p, rec_status st)
{
	if (!grow((void **)&s->problems, &s->problem_cap, s->problem_count + 1, sizeof *s->problems))
		return false;
	rec_summary_problem *q = &s->problems[s->problem_count];
	q->file = file;
	q->chunk = p ? p->chunk : -1;
	q->offset = p ? p->offset : 0;
	q->status = (p && p->status) ? p->status : st;
	q->message = str_save(s, (p && p->message && *p->message) ? p->message
								  : rec_strerror(q->status));
	if (!q->message)
		return false;
	s->problem_count++;
	return true;
}

static void note_version(rec_summary *s, uint16_t major, uint16_t minor)
{
	uint32_t v = (uint32_t)major << 16 | minor;
	for (size_t i = 0; i < s->version_count; i++)
		if (s->versions[i] == v)
			return;
	if (s->version_count < sizeof s->versions / sizeof s->versions[0])
		s->versions[s->version_count++] = v;
}

/* a + b, or false (and *out untouched) when the sum does not fit. */
static bool sum_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	uint64_t v;
	if (__builtin_add_overflow(a, b, &v))
		return false;
	*out = v;
	return true;
}

/* Would counting chunk c overflow a 64-bit total?  Then it is not counted
 * (REC_ERR_LIMIT from add_chunk; the caller reports it).  The reader bounds
 * every per-chunk count by the chunk's sizes, so this takes more chunks than
 * a file holds; it is checked anyway, as every sum is. */
static bool totals_fit(const rec_summary *s, const rec_summary_run *r, const rec_chunk_info *c)
{
	uint64_t v;
	return sum_u64(s->result.events, c->event_count, &v) &&
	       sum_u64(s->result.dropped, c->dropped_events, &v) && sum_u64(s->result.chunks, 1, &v) &&
	       (!r || (sum_u64(r->events, c->event_count, &v) &&
		       sum_u64(r->dropped, c->dropped_events, &v)));
}

/* A per-type total: saturates (it is bounded by the event total, checked). */
static void add_sat(uint64_t *acc, uint64_t v)
{
	if (!sum_u64(*acc, v, acc))
		*acc = UINT64_MAX;
}

/* Can chunk c be counted without overflowing the totals or its run's? */
static bool chunk_fits(const rec_summary *s, const rec_chunk_info *c)
{
	if (!totals_fit(s, NULL, c))
		return false;
	for (size_t i = s->run_count; i-- > 0;)
		if (s->runs[i].run_id == c->run_id && s->runs[i].pid == c->pid &&
		    s->runs[i].process_start_ns == c->process_start_ns && !totals_fit(s, &s->runs[i], c))
			return false;
	return true;
}

/* Count chunk c (chunk_fits() said it fits). */
static rec_status add_chunk(rec_summary *s, const rec_chunk_info *c, const char *file,
			    size_t *last_run)
{
	size_t ri;
	rec_summary_run *r = run_find(s, c, file, &ri);
	if (!r)
		return fail(s, REC_ERR_NOMEM, "out of memory");
	run_state *rs = &s->run_states[ri];
	*last_run = ri;
	if (r->chunks == 0 || c->sequence >= r->last_sequence) {
		r->last_sequence = c->sequence;
		rs->last_final = (c->flags & REC_CHUNK_FINAL) != 0;
	}
	r->chunks++;
	r->events += c->event_count;
	r->dropped += c->dropped_events;
	s->result.chunks++;
	if (c->flags & REC_CHUNK_SPLIT_EVENTS)
		s->result.chunks_split++;
	s->result.events += c->event_count;
	s->result.dropped += c->dropped_events;
	note_version(s, c->major, c->minor);
	if (c->codec < 32)
		s->result.codecs |= 1u << c->codec;

	if (c->event_count > 0) {
		int64_t first = rec_chunk_wall_ns(c, c->first_ticks);
		int64_t last = rec_chunk_wall_ns(c, c->last_ticks);
		if (!rs->has_events || first < r->first_wall_ns)
			r->first_wall_ns = first;
		if (!rs->has_events || last > r->last_wall_ns)
			r->last_wall_ns = last;
		rs->has_events = true;
		if (!s->have_time || first < s->result.first_wall_ns)
			s->result.first_wall_ns = first;
		if (!s->have_time || last > s->result.last_wall_ns)
			s->result.last_wall_ns = last;
		s->have_time = true;
	}

	for (uint32_t i = 0; i < c->type_stats_count; i++) {
		const rec_type_stats *ts = &c->type_stats[i];
		const rec_type *meta = ts->type;
		if (!meta) {
			for (uint32_t k = 0; k < c->type_count; k++)
				if (c->types[k].id == ts->type_id)
					meta = &c->types[k];
		}
		char anon[48];
		const char *name = meta && meta->name ? meta->name : NULL;
		if (!name) {
			snprintf(anon, sizeof anon, "type id %u", (unsigned)ts->type_id);
			name = anon;
		}
		rec_summary_type *t = type_find(s, name, meta);
		if (!t)
			return fail(s, REC_ERR_NOMEM, "out of memory");
		add_sat(&t->count, ts->count);
		add_sat(&t->bytes, ts->bytes);
		if (ts->count && strcmp(name, "rec.Crash") == 0)
			rs->crashed = true;
	}
	/* Types declared in the metadata but without events still appear (count 0). */
	for (uint32_t k = 0; k < c->type_count; k++) {
		if (c->types[k].name && !type_find(s, c->types[k].name, &c->types[k]))
			return fail(s, REC_ERR_NOMEM, "out of memory");
	}
	return REC_OK;
}

/* ---- drops by type and reason ------------------------------------------------------ */

const char *rec_drop_reason_name(uint64_t reason)
{
	static const char *const names[] = { "buffer full", "no buffer", "nested emit",
					     "rejected",    "write failed", "throttled" };
	return reason < sizeof names / sizeof names[0] ? names[reason] : NULL;
}

const char *rec_drop_reason_text(uint64_t reason, const char *type, char *buf, size_t size)
{
	const char *t = type && type[0] ? type : "the type";
	if (!buf || size == 0)
		return buf;
	switch (reason) {
	case 0: snprintf(buf, size, "buffer full: the thread's buffer had no room for %s", t); break;
	case 1: snprintf(buf, size, "no buffer: memory limit reached, the thread got no buffer"); break;
	case 2: snprintf(buf, size, "nested emit: %s began inside another emit of the thread", t); break;
	case 3:
		snprintf(buf, size, "rejected: fields do not match %s, or it names an id the recorder "
			 "never defined", t);
		break;
	case 4: snprintf(buf, size, "write failed: in chunks that could not be written"); break;
	case 5: snprintf(buf, size, "throttled: over the throttle rate of %s", t); break;
	default:
		snprintf(buf, size, "reason %llu (not known to this reader)", (unsigned long long)reason);
		break;
	}
	return buf;
}

static int field_index(const rec_type *t, const char *name)
{
	for (uint32_t i = 0; i < t->field_count; i++)
		if (t->fields[i].name && strcmp(t->fields[i].name, name) == 0)
			return (int)i;
	return -1;
}

static rec_status add_drop(void *opaque, const rec_event *ev)
{
	rec_summary *s = opaque;
	int ic = field_index(ev->type, "count"), ir = field_index(ev->type, "reason"),
	    it = field_index(ev->type, "type");
	if (ic < 0 || (uint32_t)ic >= ev->value_count || !ev->values[ic].present)
		return REC_OK;
	uint64_t count = ev->values[ic].v.u;
	uint64_t reason = ir >= 0 && (uint32_t)ir < ev->value_count && ev->values[ir].present
				  ? ev->values[ir].v.u
				  : UINT32_MAX;
	uint64_t tid = it >= 0 && (uint32_t)it < ev->value_count && ev->values[it].present
			       ? ev->values[it].v.u
			       : 0;
	char anon[48];
	const char *name = "(not known)";
	if (tid) {
		name = NULL;
		for (uint32_t k = 0; k < ev->chunk->type_count; k++)
			if (ev->chunk->types[k].id == tid)
				name = ev->chunk->types[k].name;
		if (!name) {
			snprintf(anon, sizeof anon, "type id %llu", (unsigned long long)tid);
			name = anon;
		}
	}
	const uint32_t r32 = reason > UINT32_MAX ? UINT32_MAX : (uint32_t)reason;
	for (size_t i = 0; i < s->drop_count; i++)
		if (s->drops[i].reason == r32 && strcmp(s->drops[i].type, name) == 0) {
			s->drops[i].count += count;
			return REC_OK;
		}
	if (!grow((void **)&s->drops, &s->drop_cap, s->drop_count + 1, sizeof *s->drops))
		return REC_ERR_NOMEM;
	const char *saved = str_save(s, name);
	if (!saved)
		return REC_ERR_NOMEM;
	s->drops[s->drop_count++] = (rec_summary_drop){ saved, r32, count };
	return REC_OK;
}

static int drop_cmp(const void *a, const void *b)
{
	const rec_summary_drop *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	int c = strcmp(x->type, y->type);
	if (c)
		return c;
	return x->reason < y->reason ? -1 : x->reason > y->reason;
}

static bool fatal_status(rec_status st)
{
	return st == REC_ERR_NOMEM || st == REC_ERR_IO || st == REC_ERR_INVALID_ARG ||
	       st == REC_ERR_STATE;
}

rec_status rec_summary_add_reader(rec_summary *s, rec_reader *r, const char *name, uint32_t flags)
{
	if (!s || !r)
		return REC_ERR_INVALID_ARG;
	if (!name)
		name = "(input)";
	if (!grow((void **)&s->files, &s->file_cap, s->file_count + 1, sizeof *s->files))
		return fail(s, REC_ERR_NOMEM, "out of memory");
	const char *fname = str_save(s, name);
	if (!fname)
		return fail(s, REC_ERR_NOMEM, "out of memory");
	size_t fi = s->file_count++;
	rec_summary_file *f = &s->files[fi];
	memset(f, 0, sizeof *f);
	f->path = fname;

	if ((flags & REC_SUMMARY_COUNTERS) && !s->counters && rec_counters_open(&s->counters) != REC_OK)
		return fail(s, REC_ERR_NOMEM, "out of memory");
	size_t last_run = SIZE_MAX;
	uint64_t last_err_offset = UINT64_MAX;
	unsigned same_offset_errors = 0;
	uint64_t not_counted = 0;
	rec_status result = REC_OK;
	for (;;) {
		const rec_chunk_info *c = NULL;
		rec_status st = rec_reader_next_chunk(r, &c);
		if (st == REC_END)
			break;
		if (st != REC_OK) {
			const rec_problem *p = rec_reader_problem(r);
			if (!add_problem(s, fname, p, st)) {
				result = fail(s, REC_ERR_NOMEM, "out of memory");
				break;
			}
			s->files[fi].problems++;
			rec_status ps = (p && p->status) ? p->status : st;
			if (ps == REC_ERR_TRUNCATED && last_run != SIZE_MAX)
				s->run_states[last_run].truncated = true;
			if (ps == REC_ERR_UNSUPPORTED_VERSION)
				s->chunks_unsupported++;
			if (fatal_status(st))
				break;
			/* Defensive: a reader that does not advance would loop forever. */
			uint64_t off = p ? p->offset : 0;
			if (off == last_err_offset && ++same_offset_errors > 16)
				break;
			if (off != last_err_offset)
				same_offset_errors = 0;
			last_err_offset = off;
			continue;
		}
		/* A chunk is counted only after the checks asked for: one
		 * whose events fail to decode (a payload checksum, a
		 * malformed record) is a damaged chunk (the reader counts it
		 * in chunks_damaged), and nothing of it, not even the totals
		 * of its STATS, is counted beside the readable ones. */
		if (!chunk_fits(s, c)) {
			char msg[160];
			snprintf(msg, sizeof msg,
				 "not counted: its %llu events and %llu dropped "
				 "would overflow a 64-bit total",
				 (unsigned long long)c->event_count,
				 (unsigned long long)c->dropped_events);
			rec_problem p = { REC_ERR_LIMIT, c->offset, (int64_t)c->index, msg };
			if (!add_problem(s, fname, &p, REC_ERR_LIMIT)) {
				result = fail(s, REC_ERR_NOMEM, "out of memory");
				break;
			}
			s->files[fi].problems++;
			not_counted++; /* shown with the damaged chunks */
			continue;
		}
		rec_reader_stats before;
		memset(&before, 0, sizeof before);
		rec_reader_get_stats(r, &before);
		rec_status cs = REC_OK;
		if (flags & REC_SUMMARY_VERIFY)
			cs = rec_reader_verify_chunk(r);
		if (cs >= 0 && (flags & REC_SUMMARY_COUNTERS))
			cs = rec_counters_add_chunk(s->counters, r);
		if (cs >= 0 && (flags & REC_SUMMARY_DROPS) && c->dropped_events)
			cs = rec_reader_chunk_events(r, "rec.Dropped", add_drop, s);
		if (cs < 0) {
			if (!add_problem(s, fname, rec_reader_problem(r), cs)) {
				result = fail(s, REC_ERR_NOMEM, "out of memory");
				break;
			}
			s->files[fi].problems++;
			if (fatal_status(cs))
				break;
			/* Damaged (the reader counted it): nothing of it.  A
			 * chunk whose events decode but whose statistics do
			 * not match them is not damaged: counted, with the
			 * problem beside it. */
			rec_reader_stats after;
			memset(&after, 0, sizeof after);
			rec_reader_get_stats(r, &after);
			if (after.chunks_damaged > before.chunks_damaged)
				continue;
		}
		rec_status as = add_chunk(s, c, fname, &last_run);
		if (as != REC_OK) {
			result = as;
			break;
		}
		s->files[fi].chunks++;
	}
	rec_reader_stats st;
	memset(&st, 0, sizeof st);
	rec_reader_get_stats(r, &st);
	f = &s->files[fi];
	f->size = st.file_size;
	f->chunks_damaged = st.chunks_damaged + not_counted;
	f->bytes_skipped = st.bytes_skipped;
	f->unknown_sections = st.unknown_sections;
	return result;
}

rec_status rec_summary_add_path(rec_summary *s, const char *path, uint32_t flags)
{
	if (!s || !path)
		return REC_ERR_INVALID_ARG;
	rec_reader_options o = REC_READER_OPTIONS_INIT;
	if (flags & REC_SUMMARY_VERIFY)
		o.flags |= REC_READ_VERIFY;
	rec_reader *r = NULL;
	rec_status st = rec_reader_open_path(&r, path, &o);
	if (st != REC_OK) {
		const char *why = rec_strerror(st);
		return fail(s, st, why);
	}
	st = rec_summary_add_reader(s, r, path, flags);
	rec_reader_close(r);
	return st;
}

static int type_cmp(const void *a, const void *b)
{
	const rec_summary_type *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

const rec_summary_result *rec_summary_get(rec_summary *s)
{
	if (!s)
		return NULL;
	rec_summary_result *res = &s->result;
	free(s->sorted);
	s->sorted = NULL;
	if (s->type_count) {
		s->sorted = malloc(s->type_count * sizeof *s->sorted);
		if (s->sorted) {
			memcpy(s->sorted, s->types, s->type_count * sizeof *s->sorted);
			qsort(s->sorted, s->type_count, sizeof *s->sorted, type_cmp);
		}
	}
	/* Out of memory for the sorted copy: the types come unsorted. */
	res->types = s->sorted ? s->sorted : s->types;
	res->type_count = s->type_count;
	for (size_t i = 0; i < s->run_count; i++) {
		const run_state *rs = &s->run_states[i];
		s->runs[i].ended = rs->last_final ? REC_RUN_CLEAN
				   : rs->crashed   ? REC_RUN_CRASH
				   : rs->truncated ? REC_RUN_TRUNCATED
						   : REC_RUN_NO_FINAL;
	}
	res->runs = s->runs;
	res->run_count = s->run_count;
	res->restarts = s->run_count > 1 ? s->run_count - 1 : 0;
	res->files = s->files;
	res->file_count = s->file_count;
	res->counters = rec_counters_get(s->counters, &res->counter_count);
	res->chunks_unsupported = s->chunks_unsupported;
	free(s->drops_sorted);
	s->drops_sorted = NULL;
	if (s->drop_count && (s->drops_sorted = malloc(s->drop_count * sizeof *s->drops)) != NULL) {
		memcpy(s->drops_sorted, s->drops, s->drop_count * sizeof *s->drops);
		qsort(s->drops_sorted, s->drop_count, sizeof *s->drops, drop_cmp);
	}
	res->drops = s->drops_sorted ? s->drops_sorted : s->drops;
	res->drop_count = s->drop_count;
	res->drops_unread = 0;
	res->problems = s->problems;
	res->problem_count = s->problem_count;
	qsort(s->versions, s->version_count, sizeof s->versions[0], u32_cmp);
	res->versions = s->versions;
	res->version_count = s->version_count;
	res->total_size = 0;
	res->chunks_damaged = 0;
	res->bytes_skipped = 0;
	res->unknown_sections = 0;
	for (size_t i = 0; i < s->file_count; i++) {
		res->unknown_sections += s->files[i].unknown_sections;
		res->total_size += s->files[i].size;
		res->chunks_damaged += s->files[i].chunks_damaged;
		res->bytes_skipped += s->files[i].bytes_skipped;
	}
	return res;
}
