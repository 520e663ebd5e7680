/* SPDX-License-Identifier: MIT */
/*
 * intern.c - the recorder's two intern tables: strings (rec_strtab: under
 * r->lock, rec_recorder_intern*, the emitter's per-thread cache in front of
 * it) and stacks (rec_stacktab: lock-free and insert-only, so a signal
 * handler may intern; ids are dense and published with release).  The
 * background thread defines what they hold in the writer (bg.c,
 * stack_symbolize.c); nothing is ever removed while the recorder is open.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "record/recorder_internal.h"
#include "record/stack_internal.h"

/* The stack table: slots (power of two), entries up to half of them, an
 * arena of pcs. */
#define STACK_SLOTS (1u << 16)
#define STACK_ARENA (1u << 20) /* pcs (8 MiB, touched lazily) */

/* ---- hashes ------------------------------------------------------------------- */
/* 8 bytes per step (multiply, xor-shift); never 0. */
uint64_t rec_hash_bytes(const void *p, size_t len)
{
	const uint8_t *s = p;
	uint64_t h = 0x9E3779B97F4A7C15ull ^ (len * 0xff51afd7ed558ccdull);
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 32;
	}
	if (i < len) {
		uint64_t w = 0;
		memcpy(&w, s + i, len - i);
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 32;
	}
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 29;
	return h ? h : 1;
}

/* pcs and their flags; never 0. */
uint64_t rec_hash_pcs(const uintptr_t *pcs, size_t n, uint32_t flags)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xff51afd7ed558ccdull) ^ flags;
	for (size_t i = 0; i < n; i++) {
		h ^= (uint64_t)pcs[i];
		h *= 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

/* ---- strings ------------------------------------------------------------------- */
/* Rehash st into slots (n of them, zeroed); returns the old ones to free. */
uint64_t *rec_strtab_rehash(rec_strtab *st, uint64_t *slots, size_t n)
{
	for (size_t i = 0; i < st->count; i++) {
		size_t j = st->ents[i].hash & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = i + 1;
	}
	uint64_t *old = st->slots;
	st->slots = slots;
	st->nslots = n;
	return old;
}

static bool strtab_grow(rec_strtab *st)
{
	size_t n = st->nslots ? st->nslots * 2 : 1024;
	uint64_t *slots = calloc(n, sizeof *slots);
	if (!slots)
		return false;
	free(rec_strtab_rehash(st, slots, n));
	return true;
}

/* Caller holds r->lock.  Returns the id, 0 on failure. */
uint64_t rec_strtab_intern(rec_recorder *r, const char *s, size_t len, uint64_t h,
			   const char **stored)
{
	rec_strtab *st = &r->strs;
	if (len > REC_MAX_STRING)
		return 0;
	if ((st->count + 1) * 2 > st->nslots && !strtab_grow(st))
		return 0;
	size_t j = h & (st->nslots - 1);
	while (st->slots[j]) {
		rec_strent *e = &st->ents[st->slots[j] - 1];
		if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0) {
			if (stored)
				*stored = e->s;
			return st->slots[j];
		}
		j = (j + 1) & (st->nslots - 1);
	}
	if (st->count == st->cap) {
		size_t nc = st->cap ? st->cap * 2 : 256;
		rec_strent *ne = realloc(st->ents, nc * sizeof *ne);
		if (!ne)
			return 0;
		st->ents = ne;
		st->cap = nc;
	}
	char *copy = malloc(len + 1);
	if (!copy)
		return 0;
	memcpy(copy, s, len);
	copy[len] = 0;
	st->ents[st->count] = (rec_strent){ copy, len, h };
	st->count++;
	st->slots[j] = st->count;
	if (stored)
		*stored = copy;
	return st->count;
}

rec_str rec_recorder_intern_len(rec_recorder *r, const char *s, size_t len)
{
	rec_str out = { 0 };
	if (!r || !s)
		return out;
	pthread_mutex_lock(&r->lock);
	if (!r->closing && !r->forked_child)
		out.id = rec_strtab_intern(r, s, len, rec_hash_bytes(s, len), NULL);
	pthread_mutex_unlock(&r->lock);
	return out;
}

/* Background thread: interning also while closing. */
uint64_t rec_intern_bg(rec_recorder *r, const char *s)
{
	size_t len = strlen(s);
	pthread_mutex_lock(&r->lock);
	uint64_t id = rec_strtab_intern(r, s, len, rec_hash_bytes(s, len), NULL);
	pthread_mutex_unlock(&r->lock);
	return id;
}

rec_str rec_recorder_intern(rec_recorder *r, const char *s)
{
	return rec_recorder_intern_len(r, s, s ? strlen(s) : 0);
}

uint64_t rec_emit_intern_dyn_(struct rec_tbuf_ *b, const char *s, size_t len)
{
	rec_tbuf_full *fb = (rec_tbuf_full *)b;
	uint64_t h = rec_hash_bytes(s, len);
	unsigned i = (unsigned)(h & (REC_DYN_CACHE - 1));
	if (fb->dyn[i].hash == h && fb->dyn[i].len == len && memcmp(fb->dyn[i].s, s, len) == 0)
		return fb->dyn[i].id;
	const char *stored = NULL;
	pthread_mutex_lock(&fb->r->lock);
	uint64_t id = rec_strtab_intern(fb->r, s, len, h, &stored);
	pthread_mutex_unlock(&fb->r->lock);
	if (id) {
		fb->dyn[i].hash = h;
		fb->dyn[i].id = id;
		fb->dyn[i].s = stored;
		fb->dyn[i].len = len;
	}
	return id;
}

/* ---- stacks (lock-free) -------------------------------------------------------- */
bool rec_stacktab_init(rec_stacktab *st)
{
	st->nslots = STACK_SLOTS;
	st->slot_hash = calloc(st->nslots, sizeof *st->slot_hash);
	st->slot_id = calloc(st->nslots, sizeof *st->slot_id);
	st->ents_cap = STACK_SLOTS / 2;
	st->ents = calloc(st->ents_cap, sizeof *st->ents);
	st->arena_cap = STACK_ARENA;
	st->arena = calloc(st->arena_cap, sizeof *st->arena);
	return st->slot_hash && st->slot_id && st->ents && st->arena;
}

void rec_stacktab_free(rec_stacktab *st)
{
	free(st->slot_hash);
	free(st->slot_id);
	free(st->ents);
	free(st->arena);
	memset(st, 0, sizeof *st);
}

#define SLOT_FAILED UINT32_MAX

/* may_yield: the caller is not in a signal handler, so when another thread
 * is inserting the same stack right now (it may have been preempted between
 * claiming the slot and publishing the id) it can yield the CPU and wait for
 * it instead of recording the event without a stack. */
uint64_t rec_stack_intern(rec_stacktab *st, const uintptr_t *pcs, size_t n, uint32_t flags,
			  int may_yield)
{
	for (size_t i = 0; i < n; i++)
		if (pcs[i] == 0) { /* 0 ends a stack (and is the frame map's empty key) */
			n = i;
			break;
		}
	if (!st->slot_hash || n == 0)
		return 0;
	if (n > REC_STACK_MAX_DEPTH) {
		n = REC_STACK_MAX_DEPTH;
		flags |= REC_STACK_TRUNCATED;
	}
	const uint64_t h = rec_hash_pcs(pcs, n, flags);
	const size_t mask = st->nslots - 1;
	size_t i = h & mask, probes = 0;
	while (probes < st->nslots) {
		uint64_t cur = __atomic_load_n(&st->slot_hash[i], __ATOMIC_ACQUIRE);
		if (cur == 0) {
			if (!__atomic_compare_exchange_n(&st->slot_hash[i], &cur, h, false,
							 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				continue; /* someone took it: look at what they put */
			uint64_t off = __atomic_fetch_add(&st->arena_used, n, __ATOMIC_RELAXED);
			uint64_t id = __atomic_fetch_add(&st->next_id, 1, __ATOMIC_RELAXED) + 1;
			if (off + n > st->arena_cap || id > st->ents_cap) {
				__atomic_store_n(&st->slot_id[i], SLOT_FAILED, __ATOMIC_RELEASE);
				if (id <= st->ents_cap) /* keep ids dense: mark it empty but ready */
					__atomic_store_n(&st->ents[id - 1].ready, 2u, __ATOMIC_RELEASE);
				return 0;
			}
			memcpy(&st->arena[off], pcs, n * sizeof *pcs);
			st->ents[id - 1].off = off;
			st->ents[id - 1].depth = (uint32_t)n;
			st->ents[id - 1].flags = flags;
			__atomic_store_n(&st->ents[id - 1].ready, 1u, __ATOMIC_RELEASE);
			__atomic_store_n(&st->slot_id[i], (uint32_t)id, __ATOMIC_RELEASE);
			return id;
		}
		if (cur == h) {
			uint32_t id = 0;
			for (int spin = 0; spin < 100000 && id == 0; spin++)
				id = __atomic_load_n(&st->slot_id[i], __ATOMIC_ACQUIRE);
			/* ~1e6 yields is seconds: only a stopped inserter exhausts it */
			for (int y = 0; may_yield && y < 1000000 && id == 0; y++) {
				sched_yield();
				id = __atomic_load_n(&st->slot_id[i], __ATOMIC_ACQUIRE);
			}
			if (id == 0 || id == SLOT_FAILED)
				return 0;
			const rec_stackent *e = &st->ents[id - 1];
			if (e->depth == n && e->flags == flags &&
			    memcmp(&st->arena[e->off], pcs, n * sizeof *pcs) == 0)
				return id;
		}
		i = (i + 1) & mask;
		probes++;
	}
	return 0;
}

uint64_t rec_emit_intern_pcs_(struct rec_tbuf_ *b, const uintptr_t *pcs, size_t n, int truncated)
{
	rec_tbuf_full *fb = (rec_tbuf_full *)b;
	return rec_stack_intern(&fb->r->stacks, pcs, n, truncated ? REC_STACK_TRUNCATED : 0, 0);
}

uintptr_t rec_stack_hide_lo_, rec_stack_hide_hi_;

uint64_t rec_emit_capture_stack_(struct rec_tbuf_ *b, rec_event_type *t, int in_signal)
{
	(void)t;
	uintptr_t pcs[REC_STACK_MAX_DEPTH];
	int trunc = 0;
	size_t n = rec_stack_capture_ex(pcs, REC_STACK_MAX_DEPTH, 1, &trunc), k = 0;
	/* The preload library's frames (the recorder and its interposers) are
	 * not the program's: the stack starts at the caller of the interposed
	 * function. */
	while (k < n && pcs[k] >= rec_stack_hide_lo_ && pcs[k] < rec_stack_hide_hi_)
		k++;
	if (k == n)
		k = 0;
	rec_tbuf_full *fb = (rec_tbuf_full *)b;
	return rec_stack_intern(&fb->r->stacks, pcs + k, n - k, trunc ? REC_STACK_TRUNCATED : 0,
				!in_signal);
}

uint64_t rec_stack_intern_signal(rec_recorder *r, const uintptr_t *pcs, size_t n, int truncated)
{
	return rec_stack_intern(&r->stacks, pcs, n, truncated ? REC_STACK_TRUNCATED : 0, 0);
}

