/* SPDX-License-Identifier: MIT */
/*
 * view_internal.h - what the view files of libfmt/analysis/ share (not
 * installed): the view object, a string-keyed map, interned names, event
 * helpers (sites, threads, fields), the thread activity tracker and the
 * table builder.  Each view_*.c defines one or more view_impl.
 *
 * What may call what in libfmt/analysis/: the analyses read recordings only
 * through the reader's public API (rec/rec.h, rec/archive.h) and use
 * common/ (arenas, growable arrays, hashes); they never include read/,
 * write/ or record/ internals, and nothing below them (the reader, the
 * writer, the recorder) calls them.  Their users are the tools, through
 * the public headers rec/view.h, rec/findings.h, rec/lock_graph.h,
 * rec/stack_agg.h, rec/pprof.h, rec/counters.h, rec/analysis.h.
 */
#ifndef REC_VIEW_INTERNAL_H
#define REC_VIEW_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rec/view.h"

/* ---- a map from strings to fixed-size values (open addressing) ---- */
typedef struct vmap {
	size_t esize;           /* bytes per value, zeroed when created */
	size_t n, cap;          /* entries */
	char **keys;            /* NUL-terminated copies */
	size_t *klens;
	unsigned char *vals;    /* n * esize */
	uint32_t *slots;        /* index + 1, 0 empty */
	size_t nslots;
} vmap;
void rec_vi_vmap_init(vmap *m, size_t esize);
void rec_vi_vmap_free(vmap *m);
/* The index of key (created zeroed if absent: *created true), or SIZE_MAX
 * when out of memory.  Indexes are stable; value pointers are not (use
 * vmap_at after every rec_vi_vmap_get). */
size_t rec_vi_vmap_get(vmap *m, const char *key, size_t klen, bool *created);
/* The index of key, or SIZE_MAX if absent. */
size_t rec_vi_vmap_find(const vmap *m, const char *key, size_t klen);
static inline void *vmap_at(const vmap *m, size_t i) { return m->vals + i * m->esize; }
static inline const char *vmap_key(const vmap *m, size_t i) { return m->keys[i]; }
/* The row of id in m, a map of rows whose first member is their uint32_t
 * id (a site, a function name): created zeroed with that id when new
 * (*created true; created may be NULL).  NULL when out of memory. */
void *rec_vi_id_row(vmap *m, uint32_t id, bool *created);

/* ---- tables ---- */
typedef struct vtable {
	rec_view_table t;
	rec_view_column *cols;
	rec_view_cell *cells;
	size_t cap;             /* cells */
	size_t row;             /* the row being filled */
} vtable;

#define VIEW_MAX_TABLES 8

/* ---- per-thread activity (view_activity.c) ---- */
enum { ACT_SLEEP = 0, ACT_COND, ACT_IO, ACT_LOCK, ACT_KINDS };
#define ACT_RING 32
#define CPU_RING 128
typedef struct act_interval {
	int64_t s, e;
	/* the latest end of this interval and every one noted before it in
	 * its thread: a look back from the newest stops at the first whose
	 * pmax is before the time looked at */
	int64_t pmax;
	uint32_t site;   /* interned name */
	uint8_t kind;
} act_interval;
/* A CPU sample: its time and the running sum of the weights noted before
 * it (mod 2^64): a range of samples sums as the difference of the sums
 * before its first and after its last (the sum before the next one, or the
 * total after the newest), and each weight is one such difference. */
typedef struct act_cpu {
	int64_t ts;
	uint64_t before;
} act_cpu;
typedef struct vact {
	/* what every CPU sample reads and writes, first, next to the ring
	 * positions (a few lines are touched per sample, not three arrays) */
	int64_t cpu_last;  /* the time of the latest sample (INT64_MIN: none) */
	uint64_t cpu_total;
	uint64_t cpu_count; /* samples noted: the next goes to slot cpu_count % CPU_RING */
	bool cpu_unsorted; /* a sample came before the one noted before it */
	uint32_t nring, ring_pos;
	int64_t ring_pmax; /* the latest end of the intervals noted (INT64_MIN: none) */
	/* the earliest start of what was noted (INT64_MAX: nothing): digests
	 * come ahead of the events, so a thread is looked at as a holder only
	 * once the stream has passed it (what the events alone would give).
	 * A CPU sample given as an event sets it where its thread's entry of
	 * the cache is made (rec_vi_act_cpu_miss(): the thread's first in its
	 * chunk, the earliest as the events come in time order). */
	int64_t first_ns;
	act_cpu cpu[CPU_RING];
	act_interval ring[ACT_RING];
	/* The CPU samples given as digests (rec_view_add_digests()), ahead of
	 * the events: in time order, dig_total the sum after the last; the
	 * ones no wait can look at any more are dropped as it grows. */
	act_cpu *dig;
	uint32_t ndig;
	size_t dig_cap;
	uint32_t dig_hint; /* where the last wait's samples began */
	uint64_t dig_total;
} vact;
/* A chunk's thread (its pool entry) and its activity, for digests. */
typedef struct vdig_ent {
	const rec_thread *p;
	uint64_t chunk_offset;
	vact *act;
} vdig_ent;
#define VDIG_CACHE 64
typedef struct vthread {
	uint32_t name;   /* interned thread name (0: unnamed) */
	uint32_t pid;
	uint64_t tid;
	vact *act;       /* recent activity, when a view tracks it (rec_vi_act_note) */
} vthread;

/* ---- event types, resolved once per chunk's metadata (view.c) ---- */
/* What a view needs to know of an event type, found by name once per type
 * of a chunk instead of per event: its role (the built-in types the views
 * read), whether it is an I/O or span type, and the indexes of the fields
 * the views read (-1: none). */
enum { VT_OTHER = 0, VT_CPU, VT_LOCKWAIT, VT_CONDWAIT, VT_SLEEP, VT_ALLOC, VT_FREE,
       VT_WRITEFAILED, VT_WALL, VT_CRASH };
enum { VF_LOCKNAME, VF_LOCKADDR, VF_HOLDER, VF_PERIOD, VF_OVERRUNS, VF_KIND, VF_WEIGHT,
       VF_SIZE, VF_ADDRESS, VF_SAMPLED, VF_STATE, VF_ACTION, VF_CHUNKS, VF_EVENTS, VF_BYTES,
       VF_SIGNAL, VF_MESSAGE, VF_COUNT };
typedef struct vtype {
	/* the key: the type in its chunk (a chunk's types live as long as it
	 * is read; its offset, run and sequence tell chunks apart) */
	const rec_type *type;
	uint64_t chunk_offset, run_id;
	uint32_t chunk_seq;
	uint8_t role;    /* VT_* */
	bool io;         /* rec_vi_is_io() */
	bool span;       /* rec_vi_is_span_type() */
	bool wanted;     /* rec_view_wants_type() */
	bool cpu;        /* role VT_CPU and wanted: a sample rec_view_add_event()
			  * may note itself (rec_view.act_wake) */
	uint32_t name;   /* the type's interned name (UINT32_MAX: out of memory) */
	/* the number the view gave its chunk (rec_view.chunk_gens; UINT32_MAX:
	 * none): what else is cached for the chunk is keyed by it, checked
	 * once with the type instead of again by the chunk's identity */
	uint32_t gen;
	int16_t f[VF_COUNT];
} vtype;
#define VTYPE_CACHE 32
/* A pointer of a chunk's pools (a stack, a frame, a thread) and what was
 * made of it, for the chunk's lifetime. */
typedef struct vptr_ent {
	const void *p;
	uint64_t chunk_offset, run_id;
	uint32_t chunk_seq;
	uint32_t id;     /* interned name, or thread index */
	uint32_t name;   /* threads: the interned name it carries (0: none) */
} vptr_ent;
#define VPTR_CACHE 4096
#define VTHREAD_CACHE 256
/* A thread of a chunk's pool (by the chunk's gen, vtype.gen) and what a CPU
 * sample of it notes: its index in the tracker, the name it carries (0:
 * none) and its activity record. */
typedef struct vact_ent {
	const void *p;
	uint32_t gen;
	uint32_t index;
	uint32_t name;
	vact *act;
} vact_ent;
#define VACT_CACHE 64
/* (a chunk's threads lie in one array, 24 bytes apart: up to 64 consecutive
 * ones take different slots, as 3 and 64 have no common factor) */
#define VACT_SLOT(p) ((size_t)((uintptr_t)(p) >> 3) % VACT_CACHE)
/* The chunks a view numbered lately (vtype.gen). */
typedef struct vchunk_gen {
	uint64_t offset, run_id;
	uint32_t sequence, gen;
} vchunk_gen;
#define VCHUNK_GENS 8

/* The names of one chunk's stacks by stack id (ids are unique in a chunk's
 * pool): gen << 32 | (name + 1) per id, valid while gen is the table's;
 * moving to another chunk takes a new gen (the entries need no clearing).
 * Filled where the pointer caches miss, so it serves the chunk whose stacks
 * were last met new, the caches the others. */
typedef struct vdense {
	uint64_t chunk_offset, run_id;
	uint32_t chunk_seq;
	uint32_t gen;
	bool valid;
	uint64_t *e;
	size_t n;
} vdense;
#define VDENSE_MAX_ID ((uint64_t)1 << 20)
/* Note val (< UINT32_MAX - 1) for stack id sid of chunk c in d (moving d to c
 * first when it holds another chunk); nothing when out of memory or for a
 * large id. */
void rec_vi_dense_fill(vdense *d, uint64_t sid, const rec_chunk_info *c, uint32_t val);
/* The value noted for stack id sid of chunk c in d, or UINT32_MAX. */
static inline uint32_t rec_vi_dense_get(const vdense *d, uint64_t sid, const rec_chunk_info *c)
{
	if (c && sid < d->n && d->valid && d->chunk_offset == c->offset && d->run_id == c->run_id &&
	    d->chunk_seq == c->sequence) {
		uint64_t x = d->e[sid];
		if ((uint32_t)(x >> 32) == d->gen)
			return (uint32_t)x - 1;
	}
	return UINT32_MAX;
}

typedef struct view_impl view_impl;

struct rec_view {
	rec_view_options o;
	char *by, *type, *thread;
	const view_impl *impl;
	void *state;
	vtable tables[VIEW_MAX_TABLES];
	size_t ntables;
	rec_view_table out[VIEW_MAX_TABLES];
	/* interned strings: id -> name (id 0 is "") */
	vmap names;
	/* threads by process and OS tid */
	vmap threads;           /* vthread */
	bool by_found;
	bool type_found;
	bool finished;          /* rec_view_get() built the tables */
	bool have_start;
	/* have_start, not finished, no --type to look for: what
	 * rec_view_add_event() checks before it notes a CPU sample itself */
	bool quick;
	int64_t input_start;    /* wall ns of the current input's first event */
	int64_t now;            /* start of the latest event */
	char err[256];
	char scratch[4096];
	/* caches of what is resolved per chunk (cleared per input) */
	vtype tcache[VTYPE_CACHE];
	vptr_ent *site_cache;   /* stacks -> site (VPTR_CACHE, when used) */
	vptr_ent *frame_cache;  /* frames -> name (VPTR_CACHE, when used) */
	vptr_ent *thread_cache; /* threads -> index (VTHREAD_CACHE, when used) */
	vptr_ent *str_cache;    /* pooled strings -> interned (VPTR_CACHE, when used) */
	vptr_ent *leaf_cache;   /* stacks -> name of frame 0 (VPTR_CACHE, when used) */
	vdense leaf_dense;      /* the same by stack id for one chunk (rec_vi_ev_frame) */
	vdense site_dense;      /* sites by stack id for one chunk (rec_vi_ev_site) */
	vdense row_dense;       /* the view's own value by stack id for one chunk
				 * (rec_vi_dense_get/_fill; the startup view's CPU row) */
	const vtype *cur_vt;    /* the type of the event being added, during the add */
	/* A view that only notes CPU samples in their thread's activity
	 * (rec_vi_act_note()) until some time sets that time here: the samples
	 * before it are noted without calling the view.  INT64_MIN: none. */
	int64_t act_wake;
	/* chunk numbers (vtype.gen): the last ones given, and the next */
	vchunk_gen chunk_gens[VCHUNK_GENS];
	uint32_t chunk_gen_pos, chunk_gen_next;
	vact_ent act_cache[VACT_CACHE]; /* threads -> activity, for CPU samples */
	/* Digests (rec_view_add_digests()): the earliest time the view may
	 * still ask a thread's CPU samples about (a view whose digests are its
	 * threads' activity: rec_vi_act_digests()), and a failure to report
	 * at the next call */
	int64_t (*act_floor)(const rec_view *v);
	rec_status dig_status;
	vdig_ent dig_cache[VDIG_CACHE];
	/* digests came in this input (dig_seen), the earliest of those before
	 * its first event: that event's time if later (the input's start, as
	 * if the samples had come as events) */
	bool dig_seen;
	int64_t dig_first;
};

struct view_impl {
	const char *name;
	const char *description;
	bool by;
	size_t state_size;
	rec_status (*init)(rec_view *v);
	/* every event (selected: it passes --thread/--from/--to) */
	rec_status (*add)(rec_view *v, const rec_event *ev, bool selected);
	/* the events of an input are over (settle what waited for more) */
	rec_status (*end_input)(rec_view *v);
	rec_status (*finish)(rec_view *v);
	void (*free)(rec_view *v);
	/* whether the view reads events of type t (NULL: every type); the
	 * tables must be the same whether the others are given or not */
	bool (*wants)(const rec_view *v, const rec_type *t);
	/* the view's CPU samples as digests (rec_view_add_digests(); NULL: it
	 * takes them as events only); the tables must be the same either way */
	void (*digests)(rec_view *v, const rec_chunk_info *chunk, const rec_type *type,
			const rec_digest *d, size_t n);
};

extern const view_impl rec_view_latency, rec_view_contention_lock, rec_view_contention_site,
	rec_view_alloc_site, rec_view_alloc_span, rec_view_live_heap, rec_view_hot_functions,
	rec_view_sleeps_site, rec_view_requests, rec_view_startup, rec_view_threads,
	rec_view_recording;
extern const view_impl rec_view_wall_site; /* view_wall.c */
extern const view_impl rec_view_io_site;   /* view_io.c */
/* Whether the inputs of the startup view v have no span (their summary
 * says so): its digested CPU samples count at once, none waits for the
 * first span (a span given to it then fails it with REC_ERR_STATE). */
void rec_vi_startup_no_span(rec_view *v, bool none);
/* The most digested CPU samples startup holds one by one while it cannot
 * tell whether the first span is before them (2^21; a test sets it lower). */
extern size_t rec_vi_su_pend_max;
/* Whether ev, given to requests or allocation-by-span (view_spans.c), would
 * change nothing in it (no span open, ev no span: most events of a
 * recording without spans): rec_view_add_event()'s bookkeeping done, the
 * event need not be added. */
bool rec_vi_spans_pass(rec_view *v, const rec_event *ev);

/* ---- helpers (view.c) ---- */
rec_status rec_vi_fail(rec_view *v, rec_status st, const char *msg);
/* Intern s (len bytes): its id, or UINT32_MAX when out of memory. */
uint32_t rec_vi_intern(rec_view *v, const char *s, size_t len);
static inline const char *view_name(const rec_view *v, uint32_t id) { return vmap_key(&v->names, id); }
/* The program's call site of a stack (rec_stack_site), named as
 * rec_frame_format() names frames with REC_FRAME_FUNCTION; "[no stack]"
 * without one. */
uint32_t rec_vi_site(rec_view *v, const rec_stack *s);
/* A frame's name: rec_frame_format() with REC_FRAME_FUNCTION. */
uint32_t rec_vi_frame(rec_view *v, const rec_frame *fr);
/* rec_vi_site() of ev's stack, and rec_vi_frame() of its frame k: each
 * stack and frame of a chunk's pools is named once per chunk. */
uint32_t rec_vi_ev_site_miss(rec_view *v, const rec_event *ev);
uint32_t rec_vi_ev_frame_miss(rec_view *v, const rec_event *ev, uint32_t k);
/* (Inline: the cache of the chunk's pool pointers tried first, as
 * ptr_slot() in view.c finds an entry; the _miss functions do the rest.) */
static inline const vptr_ent *rec_vi_ptr_hit(const vptr_ent *cache, size_t n, const void *p,
					     size_t unit, const rec_chunk_info *c)
{
	if (!cache || !p || !c)
		return NULL;
	const vptr_ent *e = &cache[((uintptr_t)p / unit) & (n - 1)];
	return e->p == p && e->chunk_offset == c->offset && e->run_id == c->run_id &&
			       e->chunk_seq == c->sequence
		       ? e
		       : NULL;
}
static inline uint32_t rec_vi_ev_site(rec_view *v, const rec_event *ev)
{
	const rec_stack *s = ev->stack;
	if (s && s->depth && s->frames) {
		const vdense *d = &v->site_dense;
		const rec_chunk_info *c = ev->chunk;
		if (c && s->id < d->n && d->valid && d->chunk_offset == c->offset &&
		    d->run_id == c->run_id && d->chunk_seq == c->sequence) {
			uint64_t x = d->e[s->id];
			if ((uint32_t)(x >> 32) == d->gen)
				return (uint32_t)x - 1;
		}
		const vptr_ent *e = rec_vi_ptr_hit(v->site_cache, VPTR_CACHE, s, sizeof *s, ev->chunk);
		if (e)
			return e->id;
	}
	return rec_vi_ev_site_miss(v, ev);
}
static inline uint32_t rec_vi_ev_frame(rec_view *v, const rec_event *ev, uint32_t k)
{
	if (k == 0) {
		const vdense *d = &v->leaf_dense;
		const rec_stack *s = ev->stack;
		const rec_chunk_info *c = ev->chunk;
		if (s && c && s->id < d->n && d->valid && d->chunk_offset == c->offset &&
		    d->run_id == c->run_id && d->chunk_seq == c->sequence) {
			uint64_t x = d->e[s->id];
			if ((uint32_t)(x >> 32) == d->gen)
				return (uint32_t)x - 1;
		}
		const vptr_ent *e = rec_vi_ptr_hit(v->leaf_cache, VPTR_CACHE, ev->stack,
						   sizeof *ev->stack, ev->chunk);
		if (e)
			return e->id;
	}
	return rec_vi_ev_frame_miss(v, ev, k);
}
/* The event's thread in the tracker (NULL: none or out of memory):
 * rec_vi_thread() tries the cache of the chunk's pool pointers inline (what
 * every CPU sample of contention-by-* asks), rec_vi_thread_miss() the rest. */
vthread *rec_vi_thread_miss(rec_view *v, const rec_event *ev, size_t *index);
static inline vthread *rec_vi_thread(rec_view *v, const rec_event *ev, size_t *index)
{
	const rec_thread *th = ev->thread;
	const rec_chunk_info *c = ev->chunk;
	if (th && c && v->thread_cache) {
		const vptr_ent *e =
			&v->thread_cache[((uintptr_t)th / sizeof *th) & (VTHREAD_CACHE - 1)];
		if (e->p == th && e->chunk_offset == c->offset && e->run_id == c->run_id &&
		    e->chunk_seq == c->sequence) {
			vthread *t = vmap_at(&v->threads, e->id);
			if (e->name)
				t->name = e->name;
			if (index)
				*index = e->id;
			return t;
		}
	}
	return rec_vi_thread_miss(v, ev, index);
}
/* A thread of the event's process by OS tid, if seen. */
vthread *rec_vi_thread_by_tid(rec_view *v, uint32_t pid, uint64_t tid);
/* "conn-2" or "tid=N" for an unnamed thread. */
const char *rec_vi_thread_label(rec_view *v, const vthread *t, char *buf, size_t cap);
/* The value of the field named name: its index, or -1. */
int rec_vi_field(const rec_event *ev, const char *name);
uint64_t rec_vi_field_u64(const rec_event *ev, const char *name, uint64_t dflt);
/* The --by value of ev as text in v->scratch ("(none)" without the field);
 * its length. */
size_t rec_vi_by_value(rec_view *v, const rec_event *ev);
/* A type is a user span type (opts.type, else a duration type not "rec.*"). */
bool rec_vi_is_span_type(const rec_view *v, const rec_type *t);
/* Category starts with "rec/IO": I/O waits. */
bool rec_vi_is_io(const rec_type *t);
/* Event start / end in wall ns. */
static inline int64_t ev_start(const rec_event *ev) { return ev->wall_ns; }
static inline int64_t ev_end(const rec_event *ev) { return ev->wall_ns + (ev->duration_ns > 0 ? ev->duration_ns : 0); }
bool rec_vi_type_is(const rec_event *ev, const char *name);
/* ev's type as resolved for its chunk (never NULL). */
const vtype *rec_vi_vtype_fill(rec_view *v, const rec_event *ev);
/* The cache slot of a type: a chunk's types lie in one array (8 * 7 bytes
 * apart), so that consecutive types take different slots. */
#define VTYPE_SLOT(type) ((((uintptr_t)(type)) >> 3) % VTYPE_CACHE)
static inline const vtype *rec_vi_vtype_lookup(rec_view *v, const rec_event *ev)
{
	const rec_chunk_info *c = ev->chunk;
	const vtype *t = &v->tcache[VTYPE_SLOT(ev->type)];
	if (c && t->type == ev->type && t->chunk_offset == c->offset && t->run_id == c->run_id &&
	    t->chunk_seq == c->sequence)
		return t;
	return rec_vi_vtype_fill(v, ev);
}
static inline const vtype *rec_vi_vtype(rec_view *v, const rec_event *ev)
{
	return v->cur_vt ? v->cur_vt : rec_vi_vtype_lookup(v, ev);
}
/* rec_vi_intern() of a string or text value of ev (a pooled string, whose
 * bytes stay at their address for the chunk, is interned once per chunk). */
uint32_t rec_vi_ev_str(rec_view *v, const rec_event *ev, const rec_value *val);
/* The index of field k (VF_*) of ev, present in it, or -1: rec_vi_field()
 * without the name. */
static inline int vt_field(const vtype *t, const rec_event *ev, int k)
{
	uint32_t i = (uint32_t)(int)t->f[k]; /* none (-1): above any count */
	return i < ev->value_count && ev->values[i].present ? (int)i : -1;
}
static inline uint64_t vt_u64(const vtype *t, const rec_event *ev, int k, uint64_t dflt)
{
	uint32_t i = (uint32_t)(int)t->f[k]; /* as vt_field() */
	return i < ev->value_count && ev->values[i].present ? ev->values[i].v.u : dflt;
}
/* The built-in type named name, or of category rec/IO with a duration:
 * what the views' wants() test. */
bool rec_vi_named(const rec_type *t, const char *name);
bool rec_vi_is_io_wait(const rec_type *t);

/* tables */
vtable *rec_vi_table(rec_view *v, const char *name, const char *title,
		   const rec_view_column *cols, size_t ncols);
/* A new row; its cells start null.  NULL when out of memory. */
rec_view_cell *rec_vi_row(rec_view *v, vtable *t);
void rec_vi_cell_text(rec_view *v, rec_view_cell *c, const char *s);
static inline void cell_u(rec_view_cell *c, uint64_t u) { c->null = false; c->u = u; }
static inline void cell_i(rec_view_cell *c, int64_t i) { c->null = false; c->i = i; }
static inline void cell_f(rec_view_cell *c, double f) { c->null = false; c->f = f; }
void rec_vi_note(rec_view *v, vtable *t, const char *note);
/* Keep the first top rows (opts.top; 0 all), recording rows_total. */
void rec_vi_cut(rec_view *v, vtable *t, uint32_t top);

/* The first columns of a table with a row per type (and --by value): the
 * type, titled title, then the --by field when given; how many (1 or 2). */
size_t rec_vi_cols_type_by(const rec_view *v, rec_view_column *cols, const char *title);
/* The cells of those columns (type and by: interned names); how many. */
size_t rec_vi_cells_type_by(rec_view *v, rec_view_cell *c, uint32_t type, uint32_t by);
/* The views' usual order of rows: the larger key first, then by name a, then
 * by name b (interned ids; pass 0 for a name not used). */
int rec_vi_rank(const rec_view *v, uint64_t kx, uint64_t ky, uint32_t ax, uint32_t ay, uint32_t bx,
		uint32_t by);

/* ---- an array from small ids (interned names) to rows ---- */
/* The slot of index k in *a, a zero-filled array of *n uint32_t (a row
 * index + 1, 0: none yet), grown by doubling from first to hold k; NULL when
 * out of memory (*a unchanged); inline while k fits, rec_vi_id_slot_grow()
 * grows. */
uint32_t *rec_vi_id_slot_grow(uint32_t **a, size_t *n, size_t k, size_t first);
static inline uint32_t *rec_vi_id_slot(uint32_t **a, size_t *n, size_t k, size_t first)
{
	return k < *n ? &(*a)[k] : rec_vi_id_slot_grow(a, n, k, first);
}

/* CPU weight of a rec.CPUSample: period x (1 + overruns). */
static inline uint64_t rec_vi_cpu_weight(const vtype *t, const rec_event *ev)
{
	uint64_t p = vt_u64(t, ev, VF_PERIOD, 0);
	uint64_t o = vt_u64(t, ev, VF_OVERRUNS, 0);
	return p * (1 + o);
}

/* ---- activity tracker (view_activity.c) ---- */
/* Note the event in its thread's recent activity (sleeps, condition waits,
 * I/O, lock waits, CPU samples), for what a holder was doing: a CPU sample
 * inline (most events), the waits by rec_vi_act_note_wait(). */
void rec_vi_act_note_wait(rec_view *v, const vtype *t, const rec_event *ev);
/* t's activity, allocated (NULL: out of memory). */
vact *rec_vi_act_new(vthread *t);
/* The activity record of ev's thread, made on first need; NULL when the
 * thread is not known or memory ran out. */
static inline vact *rec_vi_act_of(rec_view *v, const rec_event *ev)
{
	vthread *t = rec_vi_thread(v, ev, NULL);
	if (!t)
		return NULL;
	return t->act ? t->act : rec_vi_act_new(t);
}
/* Note a CPU sample of weight w at ts in a. */
static inline void rec_vi_act_cpu(vact *a, int64_t ts, uint64_t w)
{
	uint64_t n = a->cpu_count;
	uint32_t p = (uint32_t)(n % CPU_RING);
	a->cpu_unsorted |= ts < a->cpu_last;
	a->cpu_last = ts;
	a->cpu[p].ts = ts;
	a->cpu[p].before = a->cpu_total;
	a->cpu_total += w;
	a->cpu_count = n + 1;
}
/* Note CPU sample ev of type vt: its thread's activity record from the
 * cache of its chunk's threads (vact_ent), else by rec_vi_act_cpu_miss().
 * REC_OK (a status, so that callers can end with it). */
rec_status rec_vi_act_cpu_miss(rec_view *v, const vtype *vt, const rec_event *ev);
static inline rec_status rec_vi_act_note_cpu(rec_view *v, const vtype *vt, const rec_event *ev)
{
	const vact_ent *e = &v->act_cache[VACT_SLOT(ev->thread)];
	/* (an entry is filled for a thread and a chunk gen, never UINT32_MAX;
	 * an empty one has gen 0, never a type's) */
	if (e->p != ev->thread || e->gen != vt->gen)
		return rec_vi_act_cpu_miss(v, vt, ev);
	if (e->name)
		((vthread *)(void *)v->threads.vals)[e->index].name = e->name;
	rec_vi_act_cpu(e->act, ev_start(ev), rec_vi_cpu_weight(vt, ev));
	return REC_OK;
}
static inline void rec_vi_act_note(rec_view *v, const vtype *vt, const rec_event *ev)
{
	if (vt->role != VT_CPU)
		rec_vi_act_note_wait(v, vt, ev);
	else
		(void)rec_vi_act_note_cpu(v, vt, ev);
}
/* What rec_vi_act_note_wait() does in two steps, for a caller that needs
 * ev's site too: the ACT_* kind of ev (-1: none of them), and noting ev as
 * an interval of that kind at site (rec_vi_ev_site(), asked first). */
static inline int rec_vi_act_kind(const vtype *vt, const rec_event *ev)
{
	if (vt->role == VT_LOCKWAIT)
		return ACT_LOCK;
	if (vt->role == VT_CONDWAIT)
		return ACT_COND;
	if (vt->role == VT_SLEEP) {
		int k = vt_field(vt, ev, VF_KIND);
		return (k >= 0 && ev->values[k].v.s.ptr && ev->values[k].v.s.len == 4 &&
			memcmp(ev->values[k].v.s.ptr, "cond", 4) == 0) ? ACT_COND : ACT_SLEEP;
	}
	if (vt->io && (ev->type->flags & REC_EVENT_HAS_DURATION))
		return ACT_IO;
	return -1;
}
static inline void rec_vi_act_interval(rec_view *v, const rec_event *ev, int kind, uint32_t site)
{
	vact *a = rec_vi_act_of(v, ev);
	if (!a)
		return;
	act_interval *iv = &a->ring[a->ring_pos];
	iv->s = ev_start(ev);
	if (iv->s < a->first_ns)
		a->first_ns = iv->s;
	iv->e = ev_end(ev);
	if (iv->e > a->ring_pmax)
		a->ring_pmax = iv->e;
	iv->pmax = a->ring_pmax;
	iv->site = site == UINT32_MAX ? 0 : site;
	iv->kind = (uint8_t)kind;
	a->ring_pos = (a->ring_pos + 1) % ACT_RING;
	if (a->nring < ACT_RING)
		a->nring++;
}
/* The types rec_vi_act_note() notes. */
bool rec_vi_act_wants(const rec_type *t);
/* What thread t did in [s, e): ns per ACT_* kind (overlap of its recorded
 * intervals), CPU ns from samples (each at most e - s), and the site of the interval that
 * overlapped most (UINT32_MAX: none). */
typedef struct act_overlap {
	uint64_t ns[ACT_KINDS];
	uint64_t cpu_ns;
	uint32_t top_site;
	uint64_t top_ns;
} act_overlap;
void rec_vi_act_during(const vthread *t, int64_t s, int64_t e, act_overlap *out);
/* Note n digests of CPU samples (rec_view_add_digests()). */
void rec_vi_act_digests(rec_view *v, const rec_chunk_info *chunk, const rec_type *type,
			const rec_digest *d, size_t n);
/* Forget the digests of every thread (an input is over). */
void rec_vi_act_digests_clear(rec_view *v);
/* The weight of thread t's CPU samples given as digests before time ts (a
 * running sum: the difference of two is the weight between them), for ts
 * at or after the view's act_floor when they were given. */
uint64_t rec_vi_act_cpu_before(vact *a, int64_t ts);
/* Which of a digested type's two fields are the CPU sample's period and
 * overruns (-1: not among them). */
void rec_vi_dig_cpu_fields(const rec_type *type, int *period, int *overruns);
/* Whether a digest passes --thread, --from and --to. */
bool rec_vi_dig_selected(rec_view *v, const rec_digest *d);
/* Bytes of a rec.Alloc: weight (size in recordings without it). */
uint64_t rec_vi_alloc_bytes(const vtype *t, const rec_event *ev);

/* ---- sorting helper ---- */
void rec_vi_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *),
	       void *ctx);

#endif /* REC_VIEW_INTERNAL_H */
