/* SPDX-License-Identifier: MIT */
/*
 * view.c - the view engine of rec/view.h: the list of views, options, the
 * event dispatch with the --thread/--from/--to selection, and the helpers
 * every view file shares (view_internal.h): a string map, interned names,
 * call sites in rec_frame_format()'s frame spelling, threads, fields, tables.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "view_internal.h"

/* ---- the list ----------------------------------------------------------- */

static const view_impl *const impls[] = {
	&rec_view_latency,     &rec_view_requests,        &rec_view_contention_lock,
	&rec_view_contention_site, &rec_view_alloc_site,  &rec_view_alloc_span,
	&rec_view_live_heap,   &rec_view_hot_functions,   &rec_view_sleeps_site,
	&rec_view_io_site,     &rec_view_startup,         &rec_view_threads,
	&rec_view_recording,   &rec_view_wall_site,
};
#define NIMPLS (sizeof impls / sizeof impls[0])

const rec_view_info *rec_view_list(size_t *count)
{
	static rec_view_info list[NIMPLS];
	for (size_t i = 0; i < NIMPLS; i++) {
		list[i].name = impls[i]->name;
		list[i].description = impls[i]->description;
		list[i].by = impls[i]->by;
	}
	if (count)
		*count = NIMPLS;
	return list;
}

/* ---- the map ------------------------------------------------------------ */

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = rec_fnv1a(REC_NAME_HASH_SEED, s, n);
	return h ^ (h >> 29);
}

void rec_vi_vmap_init(vmap *m, size_t esize)
{
	memset(m, 0, sizeof *m);
	m->esize = esize ? esize : 1;
}

void rec_vi_vmap_free(vmap *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->klens);
	free(m->vals);
	free(m->slots);
	memset(m, 0, sizeof *m);
}

size_t rec_vi_vmap_find(const vmap *m, const char *key, size_t klen)
{
	if (!m->nslots)
		return SIZE_MAX;
	size_t mask = m->nslots - 1;
	for (size_t i = hash_bytes(key, klen) & mask;; i = (i + 1) & mask) {
		uint32_t s = m->slots[i];
		if (!s)
			return SIZE_MAX;
		if (m->klens[s - 1] == klen && memcmp(m->keys[s - 1], key, klen) == 0)
			return s - 1;
	}
}

static bool vmap_rehash(vmap *m)
{
	size_t ns = m->nslots ? m->nslots * 2 : 64;
	uint32_t *t = calloc(ns, sizeof *t);
	if (!t)
		return false;
	for (size_t k = 0; k < m->n; k++) {
		uint64_t h = hash_bytes(m->keys[k], m->klens[k]);
		*rec_index_free_slot(t, ns, h) = (uint32_t)(k + 1);
	}
	free(m->slots);
	m->slots = t;
	m->nslots = ns;
	return true;
}

size_t rec_vi_vmap_get(vmap *m, const char *key, size_t klen, bool *created)
{
	if (created)
		*created = false;
	size_t f = rec_vi_vmap_find(m, key, klen);
	if (f != SIZE_MAX)
		return f;
	if (m->n >= UINT32_MAX - 1)
		return SIZE_MAX;
	if ((m->n + 1) * 2 > m->nslots && !vmap_rehash(m))
		return SIZE_MAX;
	if (m->n == m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 16;
		char **k = realloc(m->keys, nc * sizeof *k);
		if (!k)
			return SIZE_MAX;
		m->keys = k;
		size_t *l = realloc(m->klens, nc * sizeof *l);
		if (!l)
			return SIZE_MAX;
		m->klens = l;
		unsigned char *v = realloc(m->vals, nc * m->esize);
		if (!v)
			return SIZE_MAX;
		m->vals = v;
		m->cap = nc;
	}
	char *copy = malloc(klen + 1);
	if (!copy)
		return SIZE_MAX;
	memcpy(copy, key, klen);
	copy[klen] = '\0';
	size_t idx = m->n++;
	m->keys[idx] = copy;
	m->klens[idx] = klen;
	memset(m->vals + idx * m->esize, 0, m->esize);
	size_t mask = m->nslots - 1;
	size_t i = hash_bytes(key, klen) & mask;
	while (m->slots[i])
		i = (i + 1) & mask;
	m->slots[i] = (uint32_t)(idx + 1);
	if (created)
		*created = true;
	return idx;
}

/* ---- names, sites, threads, fields --------------------------------------- */

rec_status rec_vi_fail(rec_view *v, rec_status st, const char *msg)
{
	snprintf(v->err, sizeof v->err, "%s", msg);
	return st;
}

uint32_t rec_vi_intern(rec_view *v, const char *s, size_t len)
{
	size_t i = rec_vi_vmap_get(&v->names, s ? s : "", s ? len : 0, NULL);
	return i == SIZE_MAX ? UINT32_MAX : (uint32_t)i;
}

/* stacks.h's spelling: ';' becomes ':', control characters ' '. */
static uint32_t intern_clean(rec_view *v, const char *s, size_t n)
{
	if (n > sizeof v->scratch - 1)
		n = sizeof v->scratch - 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		v->scratch[i] = c == ';' ? ':' : (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	return rec_vi_intern(v, v->scratch, n);
}

/* The entry of cache (n entries, allocated on first use) for pool pointer
 * p of chunk c, and whether it holds p's value (else it is p's slot, to be
 * filled).  NULL: no cache (no chunk, or out of memory). */
static inline vptr_ent *ptr_slot(vptr_ent **cache, size_t n, const void *p, const rec_chunk_info *c,
			  size_t unit, bool *hit)
{
	*hit = false;
	if (!c || !p)
		return NULL;
	if (__builtin_expect(!*cache, 0) && !(*cache = calloc(n, sizeof **cache)))
		return NULL;
	vptr_ent *e = &(*cache)[((uintptr_t)p / unit) & (n - 1)];
	*hit = e->p == p && e->chunk_offset == c->offset && e->run_id == c->run_id &&
	       e->chunk_seq == c->sequence;
	return e;
}

static inline void ptr_fill(vptr_ent *e, const void *p, const rec_chunk_info *c, uint32_t id)
{
	e->p = p;
	e->chunk_offset = c->offset;
	e->run_id = c->run_id;
	e->chunk_seq = c->sequence;
	e->id = id;
	e->name = 0;
}

static uint32_t frame_name(rec_view *v, const rec_frame *fr)
{
	char buf[4096];
	size_t n = rec_frame_format(fr, REC_FRAME_FUNCTION, buf, sizeof buf);
	return intern_clean(v, buf, n);
}

/* Frames and stacks are resolved once per chunk: the pointers of its pools
 * stay valid while events of the chunk come (ev->chunk tells chunks apart). */
static uint32_t frame_of(rec_view *v, const rec_frame *fr, const rec_chunk_info *c)
{
	bool hit;
	vptr_ent *e = ptr_slot(&v->frame_cache, VPTR_CACHE, fr, c, sizeof *fr, &hit);
	if (hit)
		return e->id;
	uint32_t id = frame_name(v, fr);
	if (e && id != UINT32_MAX)
		ptr_fill(e, fr, c, id);
	return id;
}

/* Note name for stack id of chunk c in d (moving d to c first when it
 * holds another chunk); nothing when out of memory or for a large id. */
void rec_vi_dense_fill(vdense *d, uint64_t sid, const rec_chunk_info *c, uint32_t name)
{
	if (sid >= VDENSE_MAX_ID || name >= UINT32_MAX - 1)
		return;
	if (!d->valid || d->chunk_offset != c->offset || d->run_id != c->run_id ||
	    d->chunk_seq != c->sequence) {
		if (++d->gen == 0) { /* wrapped: no entry may look current */
			if (d->e)
				memset(d->e, 0, d->n * sizeof *d->e);
			d->gen = 1;
		}
		d->chunk_offset = c->offset;
		d->run_id = c->run_id;
		d->chunk_seq = c->sequence;
		d->valid = true;
	}
	if (!d->e || sid >= d->n) {
		size_t old = d->e ? d->n : 0, nn = old ? old : 1024;
		while (nn <= sid)
			nn *= 2;
		uint64_t *e = realloc(d->e, nn * sizeof *e);
		if (!e)
			return;
		memset(e + old, 0, (nn - old) * sizeof *e);
		d->e = e;
		d->n = nn;
	}
	d->e[sid] = (uint64_t)d->gen << 32 | (name + 1);
}

static uint32_t site_of(rec_view *v, const rec_stack *s, const rec_chunk_info *c)
{
	if (!s || s->depth == 0 || !s->frames)
		return rec_vi_intern(v, "[no stack]", 10);
	bool hit;
	vptr_ent *e = ptr_slot(&v->site_cache, VPTR_CACHE, s, c, sizeof *s, &hit);
	if (hit)
		return e->id;
	/* by its frame: the stacks of a chunk share few frames, each named
	 * once per chunk */
	uint32_t id = frame_of(v, s->frames[rec_stack_site(s)], c);
	if (e && id != UINT32_MAX) {
		ptr_fill(e, s, c, id);
		rec_vi_dense_fill(&v->site_dense, s->id, c, id);
	}
	return id;
}

uint32_t rec_vi_ev_str(rec_view *v, const rec_event *ev, const rec_value *val)
{
	const char *s = val->v.s.ptr;
	size_t len = val->v.s.len;
	if (val->type != REC_TYPE_STRING) /* a text's copy is at the same address each time */
		return rec_vi_intern(v, s, len);
	bool hit;
	vptr_ent *e = ptr_slot(&v->str_cache, VPTR_CACHE, s, ev->chunk, 8, &hit);
	if (hit && e->name == len)
		return e->id;
	uint32_t id = rec_vi_intern(v, s, len);
	if (e && id != UINT32_MAX && len <= UINT32_MAX) {
		ptr_fill(e, s, ev->chunk, id);
		e->name = (uint32_t)len;
	}
	return id;
}

uint32_t rec_vi_frame(rec_view *v, const rec_frame *fr)
{
	return frame_name(v, fr);
}

uint32_t rec_vi_site(rec_view *v, const rec_stack *s)
{
	return site_of(v, s, NULL);
}

uint32_t rec_vi_ev_site_miss(rec_view *v, const rec_event *ev)
{
	return site_of(v, ev->stack, ev->chunk);
}

uint32_t rec_vi_ev_frame_miss(rec_view *v, const rec_event *ev, uint32_t k)
{
	if (k != 0)
		return frame_of(v, ev->stack->frames[k], ev->chunk);
	/* The leaf, by its stack: no walk to the frame for a stack seen. */
	bool hit;
	vptr_ent *e = ptr_slot(&v->leaf_cache, VPTR_CACHE, ev->stack, ev->chunk,
			       sizeof *ev->stack, &hit);
	if (hit)
		return e->id;
	uint32_t id = frame_of(v, ev->stack->frames[0], ev->chunk);
	if (e && id != UINT32_MAX) {
		ptr_fill(e, ev->stack, ev->chunk, id);
		rec_vi_dense_fill(&v->leaf_dense, ev->stack->id, ev->chunk, id);
	}
	return id;
}

static vthread *thread_lookup(rec_view *v, const rec_event *ev, size_t *index, vptr_ent *e);

/* A thread's key in v->threads: its process and OS tid, as bytes. */
static void thread_key(char key[12], uint32_t pid, uint64_t tid)
{
	memcpy(key, &pid, 4);
	memcpy(key + 4, &tid, 8);
}

vthread *rec_vi_thread_miss(rec_view *v, const rec_event *ev, size_t *index)
{
	if (!ev->thread)
		return NULL;
	/* A thread of the chunk's pool seen before: its index, and the name
	 * it carries (what the lookup below would set again). */
	bool hit;
	vptr_ent *e = ptr_slot(&v->thread_cache, VTHREAD_CACHE, ev->thread, ev->chunk,
			       sizeof *ev->thread, &hit);
	if (hit) {
		vthread *t = vmap_at(&v->threads, e->id);
		if (e->name)
			t->name = e->name;
		if (index)
			*index = e->id;
		return t;
	}
	vthread *t = thread_lookup(v, ev, index, e);
	return t;
}

static vthread *thread_lookup(rec_view *v, const rec_event *ev, size_t *index, vptr_ent *e)
{
	uint32_t pid = ev->chunk ? ev->chunk->pid : 0;
	char key[12];
	thread_key(key, pid, ev->thread->os_tid);
	bool created;
	size_t i = rec_vi_vmap_get(&v->threads, key, sizeof key, &created);
	if (i == SIZE_MAX)
		return NULL;
	vthread *t = vmap_at(&v->threads, i);
	if (created) {
		t->pid = pid;
		t->tid = ev->thread->os_tid;
	}
	/* The name it had last: a thread renamed after it was written out
	 * (the preload library's pthread_setname_np) is a new pool entry of
	 * the same tid with the new name for its later events. */
	if (ev->thread->name && ev->thread->name[0] &&
	    (!t->name || strcmp(view_name(v, t->name), ev->thread->name) != 0)) {
		uint32_t id = intern_clean(v, ev->thread->name, strlen(ev->thread->name));
		t = vmap_at(&v->threads, i);
		if (id != UINT32_MAX)
			t->name = id;
	}
	if (e && i <= UINT32_MAX) {
		ptr_fill(e, ev->thread, ev->chunk, (uint32_t)i);
		if (ev->thread->name && ev->thread->name[0])
			e->name = t->name;
	}
	if (index)
		*index = i;
	return t;
}

vthread *rec_vi_thread_by_tid(rec_view *v, uint32_t pid, uint64_t tid)
{
	char key[12];
	thread_key(key, pid, tid);
	size_t i = rec_vi_vmap_find(&v->threads, key, sizeof key);
	return i == SIZE_MAX ? NULL : vmap_at(&v->threads, i);
}

const char *rec_vi_thread_label(rec_view *v, const vthread *t, char *buf, size_t cap)
{
	if (t && t->name)
		return view_name(v, t->name);
	snprintf(buf, cap, "tid=%" PRIu64, t ? t->tid : 0);
	return buf;
}

int rec_vi_field(const rec_event *ev, const char *name)
{
	for (uint32_t i = 0; i < ev->value_count && i < ev->type->field_count; i++)
		if (strcmp(ev->type->fields[i].name, name) == 0)
			return ev->values[i].present ? (int)i : -1;
	return -1;
}

uint64_t rec_vi_field_u64(const rec_event *ev, const char *name, uint64_t dflt)
{
	int i = rec_vi_field(ev, name);
	return i < 0 ? dflt : ev->values[i].v.u;
}

size_t rec_vi_by_value(rec_view *v, const rec_event *ev)
{
	int i = v->by ? rec_vi_field(ev, v->by) : -1;
	if (i < 0) {
		memcpy(v->scratch, "(none)", 7);
		return 6;
	}
	v->by_found = true;
	const rec_value *val = &ev->values[i];
	int n = 0;
	switch (val->type) {
	case REC_TYPE_STRING:
	case REC_TYPE_TEXT:
		if (!val->v.s.ptr) {
			n = snprintf(v->scratch, sizeof v->scratch, "(null)");
		} else {
			size_t len = val->v.s.len < sizeof v->scratch - 1 ? val->v.s.len : sizeof v->scratch - 1;
			memcpy(v->scratch, val->v.s.ptr, len);
			v->scratch[len] = '\0';
			for (size_t k = 0; k < len; k++)
				if ((unsigned char)v->scratch[k] < 0x20)
					v->scratch[k] = ' ';
			return len;
		}
		break;
	case REC_TYPE_I8:
	case REC_TYPE_I16:
	case REC_TYPE_I32:
	case REC_TYPE_I64:
		n = snprintf(v->scratch, sizeof v->scratch, "%" PRId64, val->v.i);
		break;
	case REC_TYPE_F32:
	case REC_TYPE_F64:
		n = snprintf(v->scratch, sizeof v->scratch, "%g", val->v.f);
		break;
	case REC_TYPE_THREAD:
		n = snprintf(v->scratch, sizeof v->scratch, "%s",
			     val->v.thread && val->v.thread->name ? val->v.thread->name : "");
		break;
	case REC_TYPE_STACK:
		n = snprintf(v->scratch, sizeof v->scratch, "(stack)");
		break;
	default:
		n = snprintf(v->scratch, sizeof v->scratch, "%" PRIu64, val->v.u);
		break;
	}
	return n < 0 ? 0 : (size_t)n < sizeof v->scratch ? (size_t)n : sizeof v->scratch - 1;
}

bool rec_vi_type_is(const rec_event *ev, const char *name)
{
	return ev->type && ev->type->name && strcmp(ev->type->name, name) == 0;
}

bool rec_vi_is_span_type(const rec_view *v, const rec_type *t)
{
	if (!t || !t->name)
		return false;
	if (v->type)
		return strcmp(t->name, v->type) == 0;
	return (t->flags & REC_EVENT_HAS_DURATION) && strncmp(t->name, "rec.", 4) != 0;
}

bool rec_vi_is_io(const rec_type *t)
{
	return t && t->category && strncmp(t->category, "rec/IO", 6) == 0;
}


bool rec_vi_named(const rec_type *t, const char *name)
{
	return t && t->name && strcmp(t->name, name) == 0;
}

bool rec_vi_is_io_wait(const rec_type *t)
{
	return rec_vi_is_io(t) && (t->flags & REC_EVENT_HAS_DURATION);
}

/* ---- event types, once per chunk -------------------------------------------------- */

static const char *const role_names[] = {
	[VT_CPU] = "rec.CPUSample", [VT_LOCKWAIT] = "rec.LockWait", [VT_CONDWAIT] = "rec.CondWait",
	[VT_SLEEP] = "rec.Sleep",   [VT_ALLOC] = "rec.Alloc",       [VT_FREE] = "rec.Free",
	[VT_WRITEFAILED] = "rec.WriteFailed", [VT_WALL] = "rec.WallSample", [VT_CRASH] = "rec.Crash",
};
static const char *const field_names[VF_COUNT] = {
	[VF_LOCKNAME] = "lockName", [VF_LOCKADDR] = "lockAddress", [VF_HOLDER] = "holderOsThreadId",
	[VF_PERIOD] = "period",     [VF_OVERRUNS] = "overruns",    [VF_KIND] = "kind",
	[VF_WEIGHT] = "weight",     [VF_SIZE] = "size",            [VF_ADDRESS] = "address",
	[VF_SAMPLED] = "sampled",   [VF_STATE] = "state",          [VF_ACTION] = "action",
	[VF_CHUNKS] = "chunks",     [VF_EVENTS] = "events",        [VF_BYTES] = "bytes",
	[VF_SIGNAL] = "signal",     [VF_MESSAGE] = "message",
};

static void vtype_fill(rec_view *v, vtype *t, const rec_type *ty)
{
	memset(t, 0, sizeof *t);
	t->type = ty;
	for (size_t r = 1; r < sizeof role_names / sizeof role_names[0]; r++)
		if (rec_vi_named(ty, role_names[r]))
			t->role = (uint8_t)r;
	t->io = rec_vi_is_io(ty);
	t->span = rec_vi_is_span_type(v, ty);
	t->wanted = rec_view_wants_type(v, ty);
	t->cpu = t->wanted && t->role == VT_CPU;
	t->name = rec_vi_intern(v, ty->name ? ty->name : "", ty->name ? strlen(ty->name) : 0);
	for (int k = 0; k < VF_COUNT; k++) {
		t->f[k] = -1;
		/* the first field of the name, as rec_vi_field() finds it */
		for (uint32_t i = 0; i < ty->field_count && i < INT16_MAX; i++)
			if (ty->fields[i].name && strcmp(ty->fields[i].name, field_names[k]) == 0) {
				t->f[k] = (int16_t)i;
				break;
			}
	}
}

/* The number of chunk c (vtype.gen): the one given to it lately, else a new
 * one; a number is never given to two chunks (UINT32_MAX, none, once they
 * have all been given: nothing is cached by it). */
static uint32_t chunk_gen(rec_view *v, const rec_chunk_info *c)
{
	for (size_t i = 0; i < VCHUNK_GENS; i++) {
		const vchunk_gen *g = &v->chunk_gens[i];
		if (g->gen && g->offset == c->offset && g->run_id == c->run_id &&
		    g->sequence == c->sequence)
			return g->gen;
	}
	if (v->chunk_gen_next == 0)
		v->chunk_gen_next = 1;
	if (v->chunk_gen_next == UINT32_MAX)
		return UINT32_MAX; /* all given: no more is cached by them */
	vchunk_gen *g = &v->chunk_gens[v->chunk_gen_pos++ % VCHUNK_GENS];
	g->offset = c->offset;
	g->run_id = c->run_id;
	g->sequence = c->sequence;
	g->gen = v->chunk_gen_next++;
	return g->gen;
}

const vtype *rec_vi_vtype_fill(rec_view *v, const rec_event *ev)
{
	const rec_chunk_info *c = ev->chunk;
	uint32_t gen = c ? chunk_gen(v, c) : UINT32_MAX; /* (may clear tcache) */
	vtype *t = &v->tcache[VTYPE_SLOT(ev->type)];
	if (!c) { /* nothing tells this type from another at its address later */
		vtype_fill(v, t, ev->type);
		t->type = NULL;
		t->gen = UINT32_MAX;
		return t;
	}
	vtype_fill(v, t, ev->type);
	t->chunk_offset = c->offset;
	t->run_id = c->run_id;
	t->chunk_seq = c->sequence;
	t->gen = gen;
	return t;
}

/* Forget what was resolved per chunk: the next input's chunks may reuse the
 * addresses and offsets. */
static void clear_caches(rec_view *v)
{
	memset(v->tcache, 0, sizeof v->tcache);
	memset(v->act_cache, 0, sizeof v->act_cache);
	memset(v->dig_cache, 0, sizeof v->dig_cache);
	memset(v->chunk_gens, 0, sizeof v->chunk_gens);
	if (v->site_cache)
		memset(v->site_cache, 0, VPTR_CACHE * sizeof *v->site_cache);
	if (v->frame_cache)
		memset(v->frame_cache, 0, VPTR_CACHE * sizeof *v->frame_cache);
	if (v->thread_cache)
		memset(v->thread_cache, 0, VTHREAD_CACHE * sizeof *v->thread_cache);
	if (v->str_cache)
		memset(v->str_cache, 0, VPTR_CACHE * sizeof *v->str_cache);
	if (v->leaf_cache)
		memset(v->leaf_cache, 0, VPTR_CACHE * sizeof *v->leaf_cache);
	v->leaf_dense.valid = false; /* their gen moves on at the next fill */
	v->site_dense.valid = false;
	v->row_dense.valid = false;
}

bool rec_view_wants_type(const rec_view *v, const rec_type *t)
{
	if (!v || !t)
		return false;
	if (v->type && rec_vi_named(t, v->type))
		return true; /* rec_view_type_found() */
	return !v->impl->wants || v->impl->wants(v, t);
}

int rec_view_type_filter(void *ctx, const rec_type *t)
{
	return rec_view_wants_type(ctx, t);
}

const char *rec_view_digest_type(const rec_view *v)
{
	/* not while --type is looked for among the events */
	return v && v->impl->digests && !v->type ? "rec.CPUSample" : NULL;
}

void rec_vi_dig_cpu_fields(const rec_type *type, int *period, int *overruns)
{
	*period = *overruns = -1;
	for (uint32_t f = 0; f < type->field_count && f < 2; f++) {
		if (strcmp(type->fields[f].name, "period") == 0)
			*period = (int)f;
		else if (strcmp(type->fields[f].name, "overruns") == 0)
			*overruns = (int)f;
	}
}

bool rec_vi_dig_selected(rec_view *v, const rec_digest *d)
{
	if ((v->o.flags & REC_VIEW_FROM) && d->wall_ns < v->o.from_wall_ns)
		return false;
	if ((v->o.flags & REC_VIEW_TO) && d->wall_ns >= v->o.to_wall_ns)
		return false;
	return !v->thread || rec_thread_selected(v->thread, d->thread);
}

void rec_view_add_digests(void *ctx, const rec_chunk_info *chunk, const rec_type *type,
			  const rec_digest *d, size_t n)
{
	rec_view *v = ctx;
	if (!v || v->finished || !chunk || !type || (n && !d) || !rec_view_digest_type(v))
		return;
	v->dig_seen = true;
	if (!v->have_start) /* the input's start may be one of these */
		for (size_t i = 0; i < n; i++)
			if (d[i].wall_ns < v->dig_first)
				v->dig_first = d[i].wall_ns;
	v->impl->digests(v, chunk, type, d, n);
	if (v->dig_status != REC_OK) {
		if (!v->err[0]) /* (else the view said what) */
			rec_vi_fail(v, v->dig_status, "out of memory");
		v->quick = false; /* add_slow() says so */
	}
}

/* ---- tables ---------------------------------------------------------------- */

vtable *rec_vi_table(rec_view *v, const char *name, const char *title,
		   const rec_view_column *cols, size_t ncols)
{
	if (v->ntables == VIEW_MAX_TABLES)
		return NULL;
	vtable *t = &v->tables[v->ntables];
	memset(t, 0, sizeof *t);
	t->cols = malloc(ncols * sizeof *t->cols);
	uint32_t n = rec_vi_intern(v, name, strlen(name));
	uint32_t ti = rec_vi_intern(v, title, strlen(title));
	if (!t->cols || n == UINT32_MAX || ti == UINT32_MAX) {
		free(t->cols);
		return NULL;
	}
	memcpy(t->cols, cols, ncols * sizeof *cols);
	t->t.name = view_name(v, n);
	t->t.title = view_name(v, ti);
	t->t.column_count = ncols;
	t->t.columns = t->cols;
	v->ntables++;
	return t;
}

rec_view_cell *rec_vi_row(rec_view *v, vtable *t)
{
	(void)v;
	size_t nc = t->t.column_count;
	if ((t->t.row_count + 1) * nc > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : nc * 16;
		while (cap < (t->t.row_count + 1) * nc)
			cap *= 2;
		rec_view_cell *c = realloc(t->cells, cap * sizeof *c);
		if (!c)
			return NULL;
		t->cells = c;
		t->cap = cap;
	}
	rec_view_cell *row = t->cells + t->t.row_count * nc;
	for (size_t i = 0; i < nc; i++) {
		memset(&row[i], 0, sizeof row[i]);
		row[i].null = true;
	}
	t->t.row_count++;
	t->t.rows_total = t->t.row_count;
	t->t.cells = t->cells;
	return row;
}

void rec_vi_cell_text(rec_view *v, rec_view_cell *c, const char *s)
{
	uint32_t id = rec_vi_intern(v, s, strlen(s));
	if (id == UINT32_MAX)
		return;
	c->null = false;
	c->text = view_name(v, id);
}

void rec_vi_note(rec_view *v, vtable *t, const char *note)
{
	uint32_t id = rec_vi_intern(v, note, strlen(note));
	t->t.note = id == UINT32_MAX ? NULL : view_name(v, id);
}

void rec_vi_cut(rec_view *v, vtable *t, uint32_t top)
{
	(void)v;
	t->t.rows_total = t->t.row_count;
	if (top && t->t.row_count > top)
		t->t.row_count = top;
}

void rec_vi_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *),
	       void *ctx)
{
	if (n > 1)
		qsort_r(base, n, size, cmp, ctx);
}

void *rec_vi_id_row(vmap *m, uint32_t id, bool *created)
{
	bool made;
	size_t i = rec_vi_vmap_get(m, (const char *)&id, sizeof id, &made);
	if (i == SIZE_MAX)
		return NULL;
	uint32_t *r = vmap_at(m, i);
	if (made)
		*r = id;
	if (created)
		*created = made;
	return r;
}

size_t rec_vi_cols_type_by(const rec_view *v, rec_view_column *cols, const char *title)
{
	size_t n = 0;
	cols[n++] = (rec_view_column){ title, "type", REC_VIEW_TEXT };
	if (v->by)
		cols[n++] = (rec_view_column){ v->by, "by", REC_VIEW_TEXT };
	return n;
}

size_t rec_vi_cells_type_by(rec_view *v, rec_view_cell *c, uint32_t type, uint32_t by)
{
	size_t k = 0;
	rec_vi_cell_text(v, &c[k++], view_name(v, type));
	if (v->by)
		rec_vi_cell_text(v, &c[k++], view_name(v, by));
	return k;
}

int rec_vi_rank(const rec_view *v, uint64_t kx, uint64_t ky, uint32_t ax, uint32_t ay, uint32_t bx,
		uint32_t by)
{
	if (kx != ky)
		return kx > ky ? -1 : 1;
	int c = strcmp(view_name(v, ax), view_name(v, ay));
	return c ? c : strcmp(view_name(v, bx), view_name(v, by));
}

uint32_t *rec_vi_id_slot_grow(uint32_t **a, size_t *n, size_t k, size_t first)
{
	if (k >= *n) {
		size_t nn = *n ? *n : first;
		while (nn <= k)
			nn *= 2;
		uint32_t *p = realloc(*a, nn * sizeof *p);
		if (!p)
			return NULL;
		memset(p + *n, 0, (nn - *n) * sizeof *p);
		*a = p;
		*n = nn;
	}
	return &(*a)[k];
}

/* ---- the view ------------------------------------------------------------------ */

rec_status rec_view_open(rec_view **out, const rec_view_options *opts)
{
	if (!out)
		return REC_ERR_INVALID_ARG;
	*out = NULL;
	if (!opts || opts->struct_size < sizeof(rec_view_options) || !opts->view)
		return REC_ERR_INVALID_ARG;
	for (size_t i = 0; i < 4; i++)
		if (opts->reserved[i])
			return REC_ERR_INVALID_ARG;
	const view_impl *impl = NULL;
	for (size_t i = 0; i < NIMPLS; i++)
		if (strcmp(impls[i]->name, opts->view) == 0)
			impl = impls[i];
	if (!impl || (opts->by && !impl->by))
		return REC_ERR_INVALID_ARG;
	rec_view *v = calloc(1, sizeof *v);
	if (!v)
		return REC_ERR_NOMEM;
	v->o = *opts;
	v->impl = impl;
	bool bad = false;
	v->by = rec_strdup_opt(opts->by, &bad);
	v->type = rec_strdup_opt(opts->type, &bad);
	v->thread = rec_strdup_opt(opts->thread, &bad);
	rec_vi_vmap_init(&v->names, 1);
	rec_vi_vmap_init(&v->threads, sizeof(vthread));
	v->act_wake = INT64_MIN;
	v->dig_first = INT64_MAX;
	v->state = calloc(1, impl->state_size ? impl->state_size : 1);
	if (bad || !v->state || rec_vi_intern(v, "", 0) != 0) {
		rec_view_close(v);
		return REC_ERR_NOMEM;
	}
	if (impl->init) {
		rec_status st = impl->init(v);
		if (st != REC_OK) {
			rec_view_close(v);
			return st;
		}
	}
	*out = v;
	return REC_OK;
}

void rec_view_close(rec_view *v)
{
	if (!v)
		return;
	if (v->impl && v->impl->free && v->state)
		v->impl->free(v);
	free(v->state);
	for (size_t i = 0; i < v->ntables; i++) {
		free(v->tables[i].cols);
		free(v->tables[i].cells);
	}
	for (size_t i = 0; i < v->threads.n; i++) {
		vact *a = ((vthread *)vmap_at(&v->threads, i))->act;
		if (a)
			free(a->dig);
		free(a);
	}
	rec_vi_vmap_free(&v->names);
	rec_vi_vmap_free(&v->threads);
	free(v->site_cache);
	free(v->frame_cache);
	free(v->thread_cache);
	free(v->str_cache);
	free(v->leaf_cache);
	free(v->leaf_dense.e);
	free(v->site_dense.e);
	free(v->row_dense.e);
	free(v->by);
	free(v->type);
	free(v->thread);
	free(v);
}

rec_status rec_view_begin_input(rec_view *v)
{
	if (!v)
		return REC_ERR_INVALID_ARG;
	rec_status st = REC_OK;
	if ((v->have_start || v->dig_seen) && v->impl->end_input)
		st = v->impl->end_input(v);
	v->have_start = false;
	v->quick = false;
	v->dig_seen = false;
	v->dig_first = INT64_MAX;
	clear_caches(v);
	return st;
}

static rec_status view_fail_state(rec_view *v)
{
	return rec_vi_fail(v, REC_ERR_INVALID_ARG, "events added after rec_view_get()");
}

static bool thread_selected(rec_view *v, const rec_event *ev)
{
	return !v->thread || rec_thread_selected(v->thread, ev->thread);
}

#if defined(__GNUC__)
#define VIEW_NOINLINE __attribute__((noinline))
#else
#define VIEW_NOINLINE
#endif

/* ev of type vt, one the view reads, given to the view with whether it is
 * selected (--thread, --from, --to). */
static VIEW_NOINLINE rec_status add_typed(rec_view *v, const rec_event *ev, const vtype *vt)
{
	bool sel = thread_selected(v, ev);
	if ((v->o.flags & REC_VIEW_FROM) && ev->wall_ns < v->o.from_wall_ns)
		sel = false;
	if ((v->o.flags & REC_VIEW_TO) && ev->wall_ns >= v->o.to_wall_ns)
		sel = false;
	v->cur_vt = vt;
	rec_status st = v->impl->add(v, ev, sel);
	v->cur_vt = NULL;
	return st;
}

/* rec_view_add_event() when not v->quick: the first event of an input, a
 * --type to look for, or the view finished. */
static VIEW_NOINLINE rec_status add_slow(rec_view *v, const rec_event *ev)
{
	if (v->finished)
		return view_fail_state(v);
	if (v->dig_status != REC_OK)
		return v->dig_status;
	if (!v->have_start) {
		v->have_start = true;
		v->quick = !v->type;
		v->input_start = ev->wall_ns < v->dig_first ? ev->wall_ns : v->dig_first;
		if (v->quick)
			return rec_view_add_event(v, ev);
	}
	v->now = ev->wall_ns;
	if (v->type && !v->type_found && ev->type->name && strcmp(ev->type->name, v->type) == 0)
		v->type_found = true;
	const vtype *vt = rec_vi_vtype_lookup(v, ev);
	if (!vt->wanted)
		return REC_OK;
	if (vt->cpu && ev->wall_ns < v->act_wake)
		return rec_vi_act_note_cpu(v, vt, ev);
	return add_typed(v, ev, vt);
}

rec_status rec_view_add_event(rec_view *v, const rec_event *ev)
{
	if (!v || !ev || !ev->type)
		return REC_ERR_INVALID_ARG;
	if (!v->quick)
		return add_slow(v, ev);
	/* (what add_slow() does once an input has begun, with no --type to
	 * look for) */
	v->now = ev->wall_ns;
	/* A type the view does not read changes nothing in it (what a reader
	 * with rec_view_type_filter() leaves out). */
	const vtype *vt = rec_vi_vtype_lookup(v, ev);
	if (!vt->wanted)
		return REC_OK;
	/* Most events of a view that follows what threads do (contention-by-*)
	 * are CPU samples with nothing due before them: noted here, without
	 * the view's own call (what it would do with them, selected or not). */
	if (vt->cpu && ev->wall_ns < v->act_wake)
		return rec_vi_act_note_cpu(v, vt, ev);
	return add_typed(v, ev, vt);
}

rec_status rec_view_get(rec_view *v, const rec_view_table **tables, size_t *count)
{
	if (!v || !tables || !count)
		return REC_ERR_INVALID_ARG;
	if (v->dig_status != REC_OK)
		return v->dig_status;
	if (!v->finished) {
		rec_status st = REC_OK;
		if ((v->have_start || v->dig_seen) && v->impl->end_input)
			st = v->impl->end_input(v);
		v->have_start = false;
		v->quick = false;
		if (st == REC_OK && v->impl->finish)
			st = v->impl->finish(v);
		if (st != REC_OK)
			return st;
		v->finished = true;
	}
	for (size_t i = 0; i < v->ntables; i++) {
		v->tables[i].t.cells = v->tables[i].cells;
		v->out[i] = v->tables[i].t;
	}
	*tables = v->out;
	*count = v->ntables;
	return REC_OK;
}

const char *rec_view_errmsg(const rec_view *v)
{
	return v && v->err[0] ? v->err : "no error";
}

bool rec_view_by_found(const rec_view *v)
{
	return v && v->by_found;
}

bool rec_view_type_found(const rec_view *v)
{
	return v && v->type_found;
}
