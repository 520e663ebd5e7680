/* SPDX-License-Identifier: MIT */
/*
 * writer_pool.c - the writer's constant pools (strings, threads, modules,
 * frames, stacks).  Ids are chosen by the caller (any uint64 >= 1, possibly
 * sparse: hashes are fine), so each pool is an open-addressing hash map keyed
 * by id.  Each entry carries the build mark of the last chunk that referenced
 * it; writer_chunk.c emits the marked entries.  The string pool also has a
 * content index for rec_writer_intern_string().
 */
#include <stdint.h>
#include <stdlib.h>

#include "write/writer_internal.h"

static const char *const pool_names[REC_W_NPOOLS] = { "string", "thread", "module", "frame",
						      "stack" };

void rec_w_pools_init(rec_writer *w)
{
	for (int i = 0; i < REC_W_NPOOLS; i++)
		w->pools[i].name = pool_names[i];
	w->fsrc.name = "frame source";
}

void rec_w_pools_free(rec_writer *w)
{
	for (int i = 0; i < REC_W_NPOOLS; i++) {
		rec_wpool *p = &w->pools[i];
		free(p->slots);
		free(p->used);
		rec_buf_free(&p->data);
	}
	free(w->fsrc.slots);
	free(w->fsrc.used);
	rec_buf_free(&w->fsrc.data);
	free(w->intern);
	free(w->retire);
}

/* n zeroed elements of size, written rather than calloc'd: a large
 * calloc is fresh pages that a map's first probe reads, which maps the
 * shared zero page, and the insert's write after it is then a
 * copy-on-write fault that flushes the TLB of every CPU running the
 * program (an interrupt each).  A thread per connection's thread pool
 * grows to 65536 slots (3 MiB) between retirements: those faults were 12 %
 * of a 20000-thread churn's CPU under rec-record. */
static void *zeroed(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	void *p = malloc(n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

/* Grow the map so one more entry keeps the load factor <= 1/2. */
static bool pool_grow(rec_wpool *p)
{
	size_t cap, i;
	rec_wentry *slots;

	if ((p->count + 1) * 2 <= p->cap)
		return true;
	cap = p->cap ? p->cap * 2 : 64;
	slots = zeroed(cap, sizeof(*slots));
	if (!slots)
		return false;
	for (i = 0; i < p->cap; i++) {
		const rec_wentry *e = &p->slots[i];
		size_t j;
		if (!e->id)
			continue;
		for (j = rec_w_hash_slot(e->id, cap); slots[j].id; j = (j + 1) & (cap - 1))
			;
		slots[j] = *e;
	}
	free(p->slots);
	p->slots = slots;
	p->cap = cap;
	return true;
}

/* Insert id (not present) and return its entry, or NULL on allocation failure. */
static rec_wentry *pool_insert(rec_wpool *p, uint64_t id)
{
	size_t j;

	if (!pool_grow(p))
		return NULL;
	for (j = rec_w_hash_slot(id, p->cap); p->slots[j].id; j = (j + 1) & (p->cap - 1))
		;
	p->slots[j].id = id;
	p->slots[j].mark = 0;
	p->count++;
	if (id > p->max_id)
		p->max_id = id;
	return &p->slots[j];
}

/* Common checks of define_*: returns REC_OK to go on, else the status. */
static rec_status define_check(rec_writer *w, const char *what, uint64_t id)
{
	if (!w)
		return REC_ERR_INVALID_ARG;
	if (w->sticky)
		return w->sticky;
	if (id == 0)
		return rec_w_fail(w, REC_ERR_INVALID_ARG, "define_%s: id 0 is reserved for \"none\"",
				  what);
	return REC_OK;
}

static rec_status redefined(rec_writer *w, const char *what, uint64_t id)
{
	return rec_w_fail(w, REC_ERR_INVALID_ARG,
			  "define_%s: %s %llu is already defined with a different value", what, what,
			  (unsigned long long)id);
}

/* Define (or confirm) a pool entry with up to four values. */
static rec_status define_values(rec_writer *w, int pool, uint64_t id, const uint64_t v[4])
{
	rec_wpool *p = &w->pools[pool];
	rec_wentry *e;
	rec_status st = define_check(w, p->name, id);

	if (st != REC_OK)
		return st;
	e = rec_w_pool_find(p, id);
	if (e) {
		if (memcmp(e->v, v, sizeof(e->v)) != 0)
			return redefined(w, p->name, id);
		return REC_OK;
	}
	e = pool_insert(p, id);
	if (!e)
		return rec_w_fail(w, REC_ERR_NOMEM, "define_%s: out of memory", p->name);
	memcpy(e->v, v, sizeof(e->v));
	w->build_blocked = 0;
	return REC_OK;
}

/* ---- strings ---------------------------------------------------------------- */

/* 64-bit content hash (8 bytes at a time, murmur-style finalizer). */
static uint64_t str_hash(const uint8_t *s, size_t len)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ (len * 0xC2B2AE3D27D4EB4Full);
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t k = rec_le64(s + i);
		k *= 0x87C37B91114253D5ull;
		k = (k << 31) | (k >> 33);
		h ^= k * 0x4CF5AD432745937Full;
		h = ((h << 27) | (h >> 37)) * 5 + 0x52DCE729;
	}
	if (i < len) {
		uint64_t k = 0;
		for (size_t j = 0; i + j < len; j++)
			k |= (uint64_t)s[i + j] << (8 * j);
		k *= 0x87C37B91114253D5ull;
		k = (k << 31) | (k >> 33);
		h ^= k * 0x4CF5AD432745937Full;
	}
	return rec_mix64(h);
}

static bool str_equal(const rec_writer *w, const rec_wentry *e, const void *s, size_t len)
{
	return e->v[1] == len && (len == 0 || memcmp(w->pools[REC_W_STRINGS].data.data + e->v[0], s, len) == 0);
}

/* Id of the string with this content, or 0. */
static uint64_t intern_find(const rec_writer *w, uint64_t hash, const void *s, size_t len)
{
	size_t i, mask;

	if (!w->intern_cap)
		return 0;
	mask = w->intern_cap - 1;
	for (i = rec_w_hash_slot(hash, w->intern_cap);; i = (i + 1) & mask) {
		const rec_wintern *x = &w->intern[i];
		if (!x->id)
			return 0;
		if (x->hash == hash) {
			const rec_wentry *e = rec_w_pool_find(&w->pools[REC_W_STRINGS], x->id);
			if (e && str_equal(w, e, s, len))
				return x->id;
		}
	}
}

static bool intern_add(rec_writer *w, uint64_t hash, uint64_t id)
{
	size_t i;

	if ((w->intern_count + 1) * 2 > w->intern_cap) {
		size_t cap = w->intern_cap ? w->intern_cap * 2 : 64;
		rec_wintern *t = zeroed(cap, sizeof(*t));
		if (!t)
			return false;
		for (i = 0; i < w->intern_cap; i++) {
			const rec_wintern *x = &w->intern[i];
			size_t j;
			if (!x->id)
				continue;
			for (j = rec_w_hash_slot(x->hash, cap); t[j].id; j = (j + 1) & (cap - 1))
				;
			t[j] = *x;
		}
		free(w->intern);
		w->intern = t;
		w->intern_cap = cap;
	}
	for (i = rec_w_hash_slot(hash, w->intern_cap); w->intern[i].id;
	     i = (i + 1) & (w->intern_cap - 1))
		;
	w->intern[i].hash = hash;
	w->intern[i].id = id;
	w->intern_count++;
	return true;
}

/* Store a new string under id (not present); index = enter it in the
 * content index (intern). */
static rec_status string_add(rec_writer *w, const char *what, uint64_t id, const void *s,
			     size_t len, uint64_t hash, bool index)
{
	rec_wpool *p = &w->pools[REC_W_STRINGS];
	size_t off = p->data.len;
	rec_wentry *e;

	if (!rec_buf_append(&p->data, s, len))
		return rec_w_fail(w, REC_ERR_NOMEM, "%s: out of memory", what);
	e = pool_insert(p, id);
	if (!e) {
		p->data.len = off;
		return rec_w_fail(w, REC_ERR_NOMEM, "%s: out of memory", what);
	}
	e->v[0] = off;
	e->v[1] = len;
	e->v[2] = hash;
	/* Keep the first id of a content; a failure here only loses dedup. */
	if (index && !intern_find(w, hash, s, len))
		(void)intern_add(w, hash, id);
	w->build_blocked = 0;
	return REC_OK;
}

static rec_status string_args(rec_writer *w, const char *what, const char *s, size_t len)
{
	if (!s && len)
		return rec_w_fail(w, REC_ERR_INVALID_ARG, "%s: NULL string of length %zu", what, len);
	if (len > REC_MAX_STRING)
		return rec_w_fail(w, REC_ERR_INVALID_ARG, "%s: string of %zu bytes (max %u)", what,
				  len, REC_MAX_STRING);
	return REC_OK;
}

/* define_string; index = also enter it in the content index. */
static rec_status define_string(rec_writer *w, uint64_t id, const char *s, size_t len, bool index)
{
	rec_status st = define_check(w, "string", id);
	const rec_wentry *e;

	if (st != REC_OK)
		return st;
	if ((st = string_args(w, "define_string", s, len)) != REC_OK)
		return st;
	e = rec_w_pool_find(&w->pools[REC_W_STRINGS], id);
	if (e)
		return str_equal(w, e, s, len) ? REC_OK : redefined(w, "string", id);
	return string_add(w, "define_string", id, s, len,
			  index ? str_hash((const uint8_t *)s, len) : 0, index);
}

rec_status rec_writer_define_string(rec_writer *w, uint64_t id, const char *s, size_t len)
{
	return define_string(w, id, s, len, true);
}

rec_status rec_writer_define_private_string(rec_writer *w, uint64_t id, const char *s, size_t len)
{
	return define_string(w, id, s, len, false);
}

/* ---- retiring entries (a thread and its name) ------------------------------------------------------------ */

/* Remove id from p (linear probing: later entries of the cluster that may
 * not stay behind the hole move into it).  Returns the removed entry's
 * values in *v (if found). */
static bool pool_remove(rec_wpool *p, uint64_t id, uint64_t v[4])
{
	if (!p->cap)
		return false;
	size_t mask = p->cap - 1, i = rec_w_hash_slot(id, p->cap);
	while (p->slots[i].id != id) {
		if (!p->slots[i].id)
			return false;
		i = (i + 1) & mask;
	}
	memcpy(v, p->slots[i].v, sizeof p->slots[i].v);
	for (size_t j = i;;) {
		j = (j + 1) & mask;
		if (!p->slots[j].id)
			break;
		size_t home = rec_w_hash_slot(p->slots[j].id, p->cap);
		/* j stays if its home lies cyclically in (i, j] */
		bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
		if (stays)
			continue;
		p->slots[i] = p->slots[j];
		i = j;
	}
	memset(&p->slots[i], 0, sizeof p->slots[i]);
	p->count--;
	return true;
}

/* Rewrite the strings' data without the bytes of removed strings. */
static void strings_compact(rec_writer *w)
{
	rec_wpool *p = &w->pools[REC_W_STRINGS];
	size_t live = p->data.len - w->str_holes;
	uint8_t *nd = malloc(live ? live : 1);
	if (!nd)
		return; /* keep the holes; try again at the next retirement */
	size_t off = 0;
	for (size_t i = 0; i < p->cap; i++) {
		rec_wentry *e = &p->slots[i];
		if (!e->id)
			continue;
		memcpy(nd + off, p->data.data + e->v[0], (size_t)e->v[1]);
		e->v[0] = off;
		off += (size_t)e->v[1];
	}
	free(p->data.data);
	p->data.data = nd;
	p->data.len = off;
	p->data.cap = live ? live : 1;
	w->str_holes = 0;
}

rec_status rec_writer_retire_entries(rec_writer *w, uint64_t thread_id, uint64_t name_id)
{
	if (!w || !thread_id)
		return REC_ERR_INVALID_ARG;
	if (w->nretire + 2 > w->retire_cap) {
		size_t nc = w->retire_cap ? w->retire_cap * 2 : 256;
		uint64_t *n = realloc(w->retire, nc * sizeof *n);
		if (!n)
			return REC_ERR_NOMEM; /* the thread stays defined: only memory */
		w->retire = n;
		w->retire_cap = nc;
	}
	w->retire[w->nretire++] = thread_id;
	w->retire[w->nretire++] = name_id;
	return REC_OK;
}

void rec_w_retire_now(rec_writer *w)
{
	if (!w->nretire || w->pending.len || w->cur || w->c_count)
		return;
	rec_wpool *strs = &w->pools[REC_W_STRINGS];
	for (size_t i = 0; i < w->nretire; i += 2) {
		uint64_t v[4];
		(void)pool_remove(&w->pools[REC_W_THREADS], w->retire[i], v);
		if (w->retire[i + 1] && pool_remove(strs, w->retire[i + 1], v))
			w->str_holes += (size_t)v[1];
	}
	w->nretire = 0;
	memset(w->ref_last, 0, sizeof w->ref_last); /* may name a removed entry */
	if (w->str_holes > 65536 && w->str_holes * 2 > strs->data.len)
		strings_compact(w);
}

size_t rec_w_pool_count(const rec_writer *w, int pool)
{
	return w->pools[pool].count;
}

rec_status rec_writer_intern_string(rec_writer *w, const char *s, size_t len, uint64_t *id)
{
	rec_wpool *p;
	uint64_t hash, found;
	rec_status st;

	if (!w)
		return REC_ERR_INVALID_ARG;
	if (w->sticky)
		return w->sticky;
	if (!id)
		return rec_w_fail(w, REC_ERR_INVALID_ARG, "intern_string: id is NULL");
	if ((st = string_args(w, "intern_string", s, len)) != REC_OK)
		return st;
	p = &w->pools[REC_W_STRINGS];
	hash = str_hash((const uint8_t *)s, len);
	found = intern_find(w, hash, s, len);
	if (found) {
		*id = found;
		return REC_OK;
	}
	if (p->max_id == UINT64_MAX)
		return rec_w_fail(w, REC_ERR_LIMIT, "intern_string: no string id left");
	st = string_add(w, "intern_string", p->max_id + 1, s, len, hash, true);
	if (st == REC_OK)
		*id = p->max_id;
	return st;
}

/* ---- threads, modules, frames, stacks ------------------------------------------ */

rec_status rec_writer_define_thread(rec_writer *w, uint64_t id, uint64_t os_tid, uint64_t name_string)
{
	const uint64_t v[4] = { os_tid, name_string, 0, 0 };
	return define_values(w, REC_W_THREADS, id, v);
}

rec_status rec_writer_define_module(rec_writer *w, uint64_t id, uint64_t path_string,
				    uint64_t build_id_string, uint64_t base)
{
	const uint64_t v[4] = { path_string, build_id_string, base, 0 };
	return define_values(w, REC_W_MODULES, id, v);
}

rec_status rec_writer_define_frame(rec_writer *w, uint64_t id, uint64_t function_string,
				   uint64_t module, uint64_t module_offset, uint64_t function_offset)
{
	const uint64_t v[4] = { function_string, module, module_offset, function_offset };
	return define_values(w, REC_W_FRAMES, id, v);
}

rec_status rec_writer_define_stack(rec_writer *w, uint64_t id, uint32_t flags,
				   const uint64_t *frames, uint32_t depth)
{
	rec_wpool *p = &w->pools[REC_W_STACKS];
	rec_status st = define_check(w, "stack", id);
	const rec_wentry *e;
	uint64_t v[4];
	size_t off;

	if (st != REC_OK)
		return st;
	if (flags & ~(uint32_t)REC_STACK_TRUNCATED)
		return rec_w_fail(w, REC_ERR_INVALID_ARG, "define_stack: unknown flags 0x%x", flags);
	if (depth > REC_MAX_STACK_DEPTH)
		return rec_w_fail(w, REC_ERR_INVALID_ARG, "define_stack: depth %u (max %u)", depth,
				  REC_MAX_STACK_DEPTH);
	if (depth && !frames)
		return rec_w_fail(w, REC_ERR_INVALID_ARG, "define_stack: frames is NULL");
	for (uint32_t i = 0; i < depth; i++)
		if (frames[i] == 0)
			return rec_w_fail(w, REC_ERR_INVALID_ARG,
					  "define_stack: stack %llu: frame %u has id 0",
					  (unsigned long long)id, i);
	e = rec_w_pool_find(p, id);
	if (e) {
		if (e->v[0] != flags || e->v[1] != depth ||
		    (depth && memcmp(p->data.data + e->v[2], frames, depth * sizeof(uint64_t)) != 0))
			return redefined(w, "stack", id);
		return REC_OK;
	}
	off = p->data.len;
	if (!rec_buf_append(&p->data, frames, depth * sizeof(uint64_t)))
		return rec_w_fail(w, REC_ERR_NOMEM, "define_stack: out of memory");
	v[0] = flags;
	v[1] = depth;
	v[2] = off;
	v[3] = 0;
	st = define_values(w, REC_W_STACKS, id, v);
	if (st != REC_OK)
		p->data.len = off;
	return st;
}

/* ---- frame sources (1.2) --------------------------------------------------------- */

rec_status rec_writer_define_frame_source(rec_writer *w, uint64_t frame_id, uint32_t flags,
					  uint64_t file_string, uint32_t line,
					  const rec_frame_inline *inl, uint32_t inline_count)
{
	rec_wpool *p = &w->fsrc;
	rec_status st = define_check(w, "frame_source", frame_id);
	if (st != REC_OK)
		return st;
	if (flags & ~(uint32_t)(REC_FRAME_PC_EXACT | REC_FRAME_UNSYMBOLIZED))
		return rec_w_fail(w, REC_ERR_INVALID_ARG, "define_frame_source: unknown flags 0x%x",
				  flags);
	if (inline_count > REC_MAX_INLINE || (inline_count && !inl))
		return rec_w_fail(w, REC_ERR_INVALID_ARG,
				  "define_frame_source: %u inline frames (max %u)", inline_count,
				  REC_MAX_INLINE);
	if (!rec_w_pool_find(&w->pools[REC_W_FRAMES], frame_id))
		return rec_w_fail(w, REC_ERR_INVALID_ARG,
				  "define_frame_source: frame %llu is not defined",
				  (unsigned long long)frame_id);
	size_t off = p->data.len;
	bool ok = rec_buf_varint(&p->data, flags) && rec_buf_varint(&p->data, file_string) &&
		  rec_buf_varint(&p->data, line) && rec_buf_varint(&p->data, inline_count);
	for (uint32_t i = 0; ok && i < inline_count; i++)
		ok = rec_buf_varint(&p->data, inl[i].function_string) &&
		     rec_buf_varint(&p->data, inl[i].file_string) &&
		     rec_buf_varint(&p->data, inl[i].line);
	if (!ok) {
		p->data.len = off;
		return rec_w_fail(w, REC_ERR_NOMEM, "define_frame_source: out of memory");
	}
	size_t len = p->data.len - off;
	rec_wentry *e = rec_w_pool_find(p, frame_id);
	if (e) {
		/* the same again, or a newer source (the recorder resolves
		 * flags first, file and line later): chunks built from now on
		 * carry the newer one */
		if (e->v[1] == len && memcmp(p->data.data + e->v[0], p->data.data + off, len) == 0) {
			p->data.len = off;
			return REC_OK;
		}
		e->v[0] = off;
		e->v[1] = len;
		w->build_blocked = 0;
		return REC_OK;
	}
	e = pool_insert(p, frame_id);
	if (!e) {
		p->data.len = off;
		return rec_w_fail(w, REC_ERR_NOMEM, "define_frame_source: out of memory");
	}
	e->v[0] = off;
	e->v[1] = len;
	w->build_blocked = 0;
	return REC_OK;
}
