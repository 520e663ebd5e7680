/* SPDX-License-Identifier: MIT */
/*
 * counters.c - counter totals over runs and restarts (rec/counters.h): per
 * rec.Counter name, the sum over runs of what each run counted from its
 * first sample (the counter's start), with wraps and resets (drops within a
 * run).  Uses only the public reader API.
 */
#include "rec/archive.h"
#include "rec/counters.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Per (run, counter) state: the previous sample. */
typedef struct run_slot {
	uint64_t run_id;
	int64_t process_start_ns;
	uint32_t pid;
	size_t counter; /* index into totals, +1; 0 = empty */
	uint64_t last;
} run_slot;

struct rec_counters {
	rec_counter_total *totals;
	char **names;
	size_t count, cap;
	run_slot *slots; /* open addressing on (run, counter) */
	size_t nslots, slot_cap;
	bool sorted;
	rec_counter_total *view;
};

REC_API rec_status rec_counters_open(rec_counters **out)
{
	if (!out)
		return REC_ERR_INVALID_ARG;
	*out = calloc(1, sizeof(rec_counters));
	return *out ? REC_OK : REC_ERR_NOMEM;
}

REC_API void rec_counters_close(rec_counters *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->count; i++)
		free(c->names[i]);
	free(c->names);
	free(c->totals);
	free(c->slots);
	free(c->view);
	free(c);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

/* Index of the counter named (s, len); created if new.  SIZE_MAX on NOMEM. */
static size_t counter_index(rec_counters *c, const char *s, size_t len)
{
	/* Counters are few (tens): a linear search is enough. */
	for (size_t i = 0; i < c->count; i++)
		if (strlen(c->names[i]) == len && memcmp(c->names[i], s, len) == 0)
			return i;
	if (c->count == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 16;
		rec_counter_total *nt = realloc(c->totals, ncap * sizeof(*nt));
		if (!nt)
			return SIZE_MAX;
		c->totals = nt;
		char **nn = realloc(c->names, ncap * sizeof(*nn));
		if (!nn)
			return SIZE_MAX;
		c->names = nn;
		c->cap = ncap;
	}
	char *name = malloc(len + 1);
	if (!name)
		return SIZE_MAX;
	memcpy(name, s, len);
	name[len] = '\0';
	c->names[c->count] = name;
	memset(&c->totals[c->count], 0, sizeof(rec_counter_total));
	c->totals[c->count].name = name;
	return c->count++;
}

static size_t slot_hash(const run_slot *k)
{
	uint64_t h = mix(mix(mix(0, k->run_id), (uint64_t)k->process_start_ns), k->pid);
	return (size_t)mix(h, k->counter);
}

static bool slots_grow(rec_counters *c)
{
	size_t ncap = c->slot_cap ? c->slot_cap * 2 : 64;
	run_slot *ns = calloc(ncap, sizeof(run_slot));
	if (!ns)
		return false;
	for (size_t i = 0; i < c->slot_cap; i++) {
		const run_slot *s = &c->slots[i];
		if (!s->counter)
			continue;
		size_t j = slot_hash(s) & (ncap - 1);
		while (ns[j].counter)
			j = (j + 1) & (ncap - 1);
		ns[j] = *s;
	}
	free(c->slots);
	c->slots = ns;
	c->slot_cap = ncap;
	return true;
}

/* u64 additions that stop at UINT64_MAX instead of wrapping. */
static uint64_t add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/* One sample of counter ci in the run of chunk ch. */
static rec_status add_sample(rec_counters *c, const rec_chunk_info *ch, size_t ci, uint64_t v)
{
	rec_counter_total *tot = &c->totals[ci];
	tot->samples++;
	tot->last_value = v;

	if (c->nslots * 2 >= c->slot_cap && !slots_grow(c))
		return REC_ERR_NOMEM;
	run_slot key = { ch->run_id, ch->process_start_ns, ch->pid, ci + 1, 0 };
	size_t j = slot_hash(&key) & (c->slot_cap - 1);
	for (;; j = (j + 1) & (c->slot_cap - 1)) {
		run_slot *s = &c->slots[j];
		if (!s->counter) {
			/* First sample of this counter in this run: its start
			 * (the recorder samples a counter when it is created,
			 * at 0, and when a recording opens). */
			key.last = v;
			*s = key;
			c->nslots++;
			tot->runs++;
			return REC_OK;
		}
		if (s->counter == key.counter && s->run_id == key.run_id && s->pid == key.pid &&
		    s->process_start_ns == key.process_start_ns) {
			if (v >= s->last || s->last - v > UINT64_MAX / 2) {
				/* Up; or down by at least half the range: the
				 * u64 wrapped past 2^64 - 1 (exact for a counter
				 * that moves less than 2^63 between two
				 * samples).  Either way the increase is
				 * v - last, mod 2^64. */
				tot->total = add_sat(tot->total, v - s->last);
			} else {
				/* A reset: counting went on from 0. */
				tot->resets++;
				tot->total = add_sat(tot->total, v);
			}
			s->last = v;
			return REC_OK;
		}
	}
}

/* The counter index and value of a rec.Counter event: 1, 0 (not a counter
 * sample, ignored), or -1 (NOMEM). */
static int event_sample(rec_counters *c, const rec_event *ev, size_t *ci, uint64_t *value)
{
	const rec_type *t = ev->type;
	if (!t->name || strcmp(t->name, "rec.Counter") != 0)
		return 0;
	const rec_value *name = NULL, *val = NULL;
	for (uint32_t i = 0; i < t->field_count && i < ev->value_count; i++) {
		const rec_field *f = &t->fields[i];
		const rec_value *v = &ev->values[i];
		if (!v->present)
			continue;
		if (strcmp(f->name, "name") == 0 && f->type == REC_TYPE_STRING)
			name = v;
		else if (strcmp(f->name, "value") == 0 &&
			 (f->type == REC_TYPE_U64 || f->type == REC_TYPE_U32 ||
			  f->type == REC_TYPE_U16 || f->type == REC_TYPE_U8))
			val = v;
	}
	if (!name || !val || !name->v.s.ptr)
		return 0;
	*ci = counter_index(c, name->v.s.ptr, name->v.s.len);
	if (*ci == SIZE_MAX)
		return -1;
	c->sorted = false;
	*value = val->v.u;
	return 1;
}

REC_API rec_status rec_counters_add_event(rec_counters *c, const rec_event *ev)
{
	if (!c || !ev || !ev->type || !ev->chunk)
		return REC_ERR_INVALID_ARG;
	size_t ci;
	uint64_t v;
	int k = event_sample(c, ev, &ci, &v);
	if (k <= 0)
		return k < 0 ? REC_ERR_NOMEM : REC_OK;
	return add_sample(c, ev->chunk, ci, v);
}

/* After a failed read or add: whether st stops the reading (out of memory,
 * misuse, or I/O outside every chunk); otherwise the damage is counted and
 * the reading goes on. */
static bool stops_reading(rec_status st, const rec_reader *r, uint64_t *damaged)
{
	if (st == REC_ERR_NOMEM || st == REC_ERR_INVALID_ARG || st == REC_ERR_STATE)
		return true;
	if (st == REC_ERR_IO && rec_reader_problem(r)->chunk < 0)
		return true;
	if (damaged)
		(*damaged)++;
	return false;
}

/* The samples of one chunk, taken in timestamp order: records of different
 * threads interleave in any order within a chunk (spec/FORMAT.md, "Order"),
 * and a counter's start sample is committed by the thread that created it. */
typedef struct chunk_sample {
	uint64_t ticks;
	size_t seq; /* file order, for equal timestamps */
	size_t ci;
	uint64_t value;
} chunk_sample;

typedef struct chunk_samples {
	rec_counters *c;
	chunk_sample *v;
	size_t n, cap;
	rec_chunk_info chunk; /* a copy: its run identity */
	bool nomem;
} chunk_samples;

static rec_status collect_one(void *opaque, const rec_event *ev)
{
	chunk_samples *cs = opaque;
	if (!ev || !ev->type || !ev->chunk)
		return REC_ERR_INVALID_ARG;
	size_t ci;
	uint64_t v;
	int k = event_sample(cs->c, ev, &ci, &v);
	if (k < 0) {
		cs->nomem = true;
		return REC_ERR_NOMEM;
	}
	if (k == 0)
		return REC_OK;
	if (cs->n == cs->cap) {
		size_t ncap = cs->cap ? cs->cap * 2 : 64;
		chunk_sample *nv = realloc(cs->v, ncap * sizeof(*nv));
		if (!nv) {
			cs->nomem = true;
			return REC_ERR_NOMEM;
		}
		cs->v = nv;
		cs->cap = ncap;
	}
	cs->chunk = *ev->chunk;
	cs->v[cs->n] = (chunk_sample){ ev->ticks, cs->n, ci, v };
	cs->n++;
	return REC_OK;
}

static int cmp_sample(const void *a, const void *b)
{
	const chunk_sample *x = a, *y = b;
	if (x->ticks != y->ticks)
		return x->ticks < y->ticks ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

REC_API rec_status rec_counters_add_chunk(rec_counters *c, rec_reader *r)
{
	if (!c || !r)
		return REC_ERR_INVALID_ARG;
	chunk_samples cs;
	memset(&cs, 0, sizeof cs);
	cs.c = c;
	rec_status st = rec_reader_chunk_events(r, "rec.Counter", collect_one, &cs);
	/* A damaged chunk: the samples before the damage still count. */
	if (cs.n)
		qsort(cs.v, cs.n, sizeof(*cs.v), cmp_sample);
	for (size_t i = 0; i < cs.n; i++) {
		rec_status s2 = add_sample(c, &cs.chunk, cs.v[i].ci, cs.v[i].value);
		if (s2 != REC_OK) {
			st = s2;
			break;
		}
	}
	free(cs.v);
	if (cs.nomem)
		return REC_ERR_NOMEM;
	return st;
}

REC_API rec_status rec_counters_add_reader(rec_counters *c, rec_reader *r, uint32_t flags,
					   uint64_t *damaged)
{
	if (!c || !r || (flags & ~REC_COUNTERS_EVENTS))
		return REC_ERR_INVALID_ARG;
	bool events = (flags & REC_COUNTERS_EVENTS) != 0;
	for (;;) {
		const rec_chunk_info *ci;
		rec_event ev;
		rec_status st = events ? rec_reader_next_event(r, &ev) : rec_reader_next_chunk(r, &ci);
		if (st == REC_END)
			return REC_OK;
		if (st != REC_OK) {
			if (stops_reading(st, r, damaged))
				return st;
			continue;
		}
		if (events) {
			st = rec_counters_add_event(c, &ev);
			if (st != REC_OK)
				return st;
		} else {
			st = rec_counters_add_chunk(c, r);
			if (st != REC_OK && stops_reading(st, r, damaged))
				return st;
		}
	}
}

static int cmp_total(const void *a, const void *b)
{
	return strcmp(((const rec_counter_total *)a)->name, ((const rec_counter_total *)b)->name);
}

REC_API const rec_counter_total *rec_counters_get(rec_counters *c, size_t *count)
{
	if (count)
		*count = c ? c->count : 0;
	if (!c || !c->count)
		return NULL;
	if (!c->sorted) {
		rec_counter_total *nv = realloc(c->view, c->count * sizeof(*nv));
		if (!nv)
			return c->totals; /* unsorted, still correct */
		c->view = nv;
		memcpy(c->view, c->totals, c->count * sizeof(*nv));
		qsort(c->view, c->count, sizeof(*nv), cmp_total);
		c->sorted = true;
	}
	return c->view;
}
