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
#include <sys/mman.h>

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

/* pcs and their flags; never 0.  Every event with a stack hashes its pcs
 * (rec_stack_intern), so the loop is two independent lanes of one xor and
 * one multiply each (odd, so every step is a bijection and no pc's bits are
 * lost), half the dependent chain of one lane with a shift in every step;
 * the high bits the multiplies leave the differences in are folded into the
 * low ones (the table's index) once at the end. */
uint64_t rec_hash_pcs(const uintptr_t *pcs, size_t n, uint32_t flags)
{
	const uint64_t k = 0xc4ceb9fe1a85ec53ull;
	uint64_t a = 0x9E3779B97F4A7C15ull ^ (n * 0xff51afd7ed558ccdull) ^ flags;
	uint64_t b = 0x6a09e667f3bcc909ull;
	size_t i = 0;
	for (; i + 2 <= n; i += 2) {
		a = (a ^ (uint64_t)pcs[i]) * k;
		b = (b ^ (uint64_t)pcs[i + 1]) * k;
	}
	if (i < n)
		a = (a ^ (uint64_t)pcs[i]) * k;
	uint64_t h = a ^ ((b << 32) | (b >> 32));
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 29;
	return h ? h : 1;
}

/* ---- strings ------------------------------------------------------------------- */
/*
 * The table's memory (slots, entries and the bytes of the strings) is
 * mapped, never malloc'ed, and never allocated under r->lock: a thread that
 * interns may be a program thread inside an interposer, holding the
 * program's own locks (its allocator's: jemalloc's mutexes, or any lock the
 * program took around a call to pthread_*), and a holder of r->lock that
 * called the program's allocator could wait for one of them (LOCK ORDER,
 * recorder_internal.h).  A lookup runs under r->lock; a string not there is
 * copied into the current chunk of the table's arena if there is room, and
 * else the lock is dropped, the room made (mmap), the lock taken again and
 * the lookup done anew.  The background thread keeps headroom in all three
 * (rec_strtab_reserve), so a program thread seldom maps anything.
 */
#define STR_CHUNK ((size_t)256 << 10) /* arena chunk; longer strings: one each */
#define STR_SLOTS0 1024u
#define STR_ENTS0 256u

/* A chunk of the arena: this header, then the strings' bytes. */
typedef struct rec_str_chunk {
	struct rec_str_chunk *next;
	size_t size; /* of the mapping */
} str_chunk;

static size_t page_round(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

static void *map_zero(size_t n)
{
	void *p = mmap(NULL, page_round(n), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);
	if (p == MAP_FAILED)
		return NULL;
	return p;
}

static void unmap(void *p, size_t n)
{
	if (p != NULL && n != 0)
		munmap(p, page_round(n));
}

/* Write one byte per page so the kernel maps them now (not later, in a
 * page fault under r->lock). */
static void prefault(void *p, size_t n)
{
	volatile uint8_t *b = p;
	for (size_t i = 0; i < n; i += 4096)
		b[i] = 0;
}

/* Rehash st into slots (n of them, zeroed); returns the old ones to unmap. */
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

/* What an insertion lacked, and the sizes then (read under r->lock). */
enum { NEED_SLOTS = 1, NEED_ENTS = 2, NEED_ARENA = 4 };
typedef struct strtab_room {
	unsigned need;
	size_t count, nslots, cap, len;
} strtab_room;

/* Memory made without the lock, to install under it; what is not
 * installed is unmapped after it. */
typedef struct strtab_growth {
	uint64_t *slots;
	size_t nslots;
	rec_strent *ents;
	size_t cap;
	str_chunk *chunk;
} strtab_growth;

static bool strtab_prepare(strtab_growth *g, const strtab_room *rm, size_t want)
{
	memset(g, 0, sizeof *g);
	if (want < rm->count + 1)
		want = rm->count + 1;
	if (rm->need & NEED_SLOTS || want * 2 > rm->nslots) {
		size_t n = rm->nslots ? rm->nslots : STR_SLOTS0;
		while (want * 2 > n)
			n *= 2;
		if (n > rm->nslots) {
			if (!(g->slots = map_zero(n * sizeof *g->slots)))
				return false;
			prefault(g->slots, n * sizeof *g->slots);
			g->nslots = n;
		}
	}
	if (rm->need & NEED_ENTS || want > rm->cap) {
		size_t n = rm->cap ? rm->cap : STR_ENTS0;
		while (want > n)
			n *= 2;
		if (n > rm->cap) {
			if (!(g->ents = map_zero(n * sizeof *g->ents)))
				return false;
			prefault(g->ents, n * sizeof *g->ents);
			g->cap = n;
		}
	}
	if (rm->need & NEED_ARENA) {
		size_t n = sizeof(str_chunk) + rm->len + 1;
		n = n < STR_CHUNK ? STR_CHUNK : page_round(n);
		if (!(g->chunk = map_zero(n)))
			return false;
		g->chunk->size = n;
	}
	return true;
}

/* Under r->lock: put what g holds in place where st still lacks it; g
 * keeps what st no longer uses (to unmap). */
static void strtab_install(rec_strtab *st, strtab_growth *g)
{
	if (g->slots && g->nslots > st->nslots) {
		size_t old_n = st->nslots;
		g->slots = rec_strtab_rehash(st, g->slots, g->nslots);
		g->nslots = old_n;
	}
	if (g->ents && g->cap > st->cap) {
		if (st->count)
			memcpy(g->ents, st->ents, st->count * sizeof *g->ents);
		rec_strent *old = st->ents;
		size_t old_cap = st->cap;
		st->ents = g->ents;
		st->cap = g->cap;
		g->ents = old;
		g->cap = old_cap;
	}
	if (g->chunk) {
		g->chunk->next = st->chunks;
		st->chunks = g->chunk;
		st->arena = (char *)(g->chunk + 1);
		st->arena_left = g->chunk->size - sizeof(str_chunk);
		g->chunk = NULL;
	}
}

static void strtab_release(strtab_growth *g)
{
	unmap(g->slots, g->nslots * sizeof *g->slots);
	unmap(g->ents, g->cap * sizeof *g->ents);
	if (g->chunk)
		unmap(g->chunk, g->chunk->size);
}

/* Under r->lock: the id of s, inserting it when there is room without
 * allocating; 0 with rm->need set when there is not. */
static uint64_t strtab_lookup_put(rec_strtab *st, const char *s, size_t len, uint64_t h,
				  const char **stored, strtab_room *rm)
{
	size_t j = 0;
	if (st->nslots) {
		j = h & (st->nslots - 1);
		while (st->slots[j]) {
			rec_strent *e = &st->ents[st->slots[j] - 1];
			if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0) {
				if (stored)
					*stored = e->s;
				return st->slots[j];
			}
			j = (j + 1) & (st->nslots - 1);
		}
	}
	rm->need = 0;
	if ((st->count + 1) * 2 > st->nslots)
		rm->need |= NEED_SLOTS;
	if (st->count == st->cap)
		rm->need |= NEED_ENTS;
	if (st->arena_left < len + 1)
		rm->need |= NEED_ARENA;
	if (rm->need) {
		rm->count = st->count;
		rm->nslots = st->nslots;
		rm->cap = st->cap;
		rm->len = len;
		return 0;
	}
	char *copy = st->arena;
	memcpy(copy, s, len);
	copy[len] = 0;
	st->arena += len + 1;
	st->arena_left -= len + 1;
	st->ents[st->count] = (rec_strent){ copy, len, h };
	st->count++;
	st->slots[j] = st->count;
	if (stored)
		*stored = copy;
	return st->count;
}

/* s's id in r's table (0 on failure; the recorder closing, unless bg),
 * *stored (if not NULL) the table's copy.  Takes r->lock; never calls the
 * program's allocator. */
static uint64_t strtab_intern(rec_recorder *r, const char *s, size_t len, uint64_t h,
			      const char **stored, bool bg)
{
	if (len > REC_MAX_STRING)
		return 0;
	rec_strtab *st = &r->strs;
	strtab_room rm = { 0, 0, 0, 0, 0 };
	uint64_t id = 0;
	pthread_mutex_lock(&r->lock);
	for (;;) {
		if (!bg && (r->closing || r->forked_child))
			break;
		if ((id = strtab_lookup_put(st, s, len, h, stored, &rm)) != 0)
			break;
		pthread_mutex_unlock(&r->lock);
		strtab_growth g;
		bool ok = strtab_prepare(&g, &rm, 0);
		pthread_mutex_lock(&r->lock);
		if (ok)
			strtab_install(st, &g);
		pthread_mutex_unlock(&r->lock);
		strtab_release(&g);
		if (!ok)
			return 0;
		pthread_mutex_lock(&r->lock);
	}
	pthread_mutex_unlock(&r->lock);
	return id;
}

/* The background thread, each round: room for a quarter more strings than
 * the table holds (at least 1024) and a quarter of a chunk of bytes, made
 * here, without the lock, and swapped in under it (measured before: 13-40
 * ms stalls of every thread that registered meanwhile, at 1900 new
 * threads/s, when the tables grew under r->lock). */
void rec_strtab_reserve(rec_recorder *r)
{
	rec_strtab *st = &r->strs;
	strtab_room rm = { 0, 0, 0, 0, 0 };
	pthread_mutex_lock(&r->lock);
	rm.count = st->count;
	rm.nslots = st->nslots;
	rm.cap = st->cap;
	if (st->arena_left < STR_CHUNK / 4)
		rm.need |= NEED_ARENA;
	pthread_mutex_unlock(&r->lock);
	size_t want = rm.count + rm.count / 4 + 1024;
	if (!rm.need && want * 2 <= rm.nslots && want <= rm.cap)
		return;
	strtab_growth g;
	if (!strtab_prepare(&g, &rm, want)) {
		strtab_release(&g);
		return;
	}
	pthread_mutex_lock(&r->lock);
	if (g.chunk && st->arena_left >= STR_CHUNK / 4) { /* a thread made room meanwhile */
		str_chunk *c = g.chunk;
		g.chunk = NULL;
		strtab_install(st, &g);
		g.chunk = c;
	} else {
		strtab_install(st, &g);
	}
	pthread_mutex_unlock(&r->lock);
	strtab_release(&g);
}

/* At close: everything the table mapped. */
void rec_strtab_free(rec_strtab *st)
{
	unmap(st->slots, st->nslots * sizeof *st->slots);
	unmap(st->ents, st->cap * sizeof *st->ents);
	for (str_chunk *c = st->chunks, *n; c; c = n) {
		n = c->next;
		unmap(c, c->size);
	}
	memset(st, 0, sizeof *st);
}

rec_str rec_recorder_intern_len(rec_recorder *r, const char *s, size_t len)
{
	rec_str out = { 0 };
	if (!r || !s)
		return out;
	out.id = strtab_intern(r, s, len, rec_hash_bytes(s, len), NULL, false);
	return out;
}

/* Background thread: interning also while closing. */
uint64_t rec_intern_bg(rec_recorder *r, const char *s)
{
	size_t len = strlen(s);
	return strtab_intern(r, s, len, rec_hash_bytes(s, len), NULL, true);
}

rec_str rec_recorder_intern(rec_recorder *r, const char *s)
{
	return rec_recorder_intern_len(r, s, s ? strlen(s) : 0);
}

uint64_t rec_emit_intern_dyn_(struct rec_tbuf_ *b, const char *s, size_t len)
{
	rec_tbuf_full *fb = (rec_tbuf_full *)b;
	rec_dyn_ptr_slot *a = NULL;
	if (len <= REC_DYN_PTR_INLINE) {
		const uint64_t k = ((uint64_t)(uintptr_t)s ^ len) * 0x9E3779B97F4A7C15ull;
		_Static_assert(REC_DYN_CACHE == 64u, "the slot is the key's top 6 bits");
		a = &fb->dyn_ptr[k >> 58];
		if (a->ptr == s && a->len == len && a->id && memcmp(a->inl, s, len) == 0)
			return a->id;
	}
	uint64_t h = rec_hash_bytes(s, len);
	rec_dyn_slot *d = &fb->dyn[h & (REC_DYN_CACHE - 1)];
	if (d->hash == h && d->len == len && d->id &&
	    memcmp(len <= REC_DYN_INLINE ? d->inl : d->s, s, len) == 0) {
		if (a) {
			a->ptr = s;
			a->id = d->id;
			a->len = (uint32_t)len;
			memcpy(a->inl, s, len);
		}
		return d->id;
	}
	const char *stored = NULL;
	/* as before the fix: interned also while the recorder closes (the
	 * thread is inside an emit that began before) */
	uint64_t id = strtab_intern(fb->r, s, len, h, &stored, true);
	if (id && len <= UINT32_MAX) {
		d->hash = h;
		d->id = id;
		d->s = stored;
		d->len = (uint32_t)len;
		memcpy(d->inl, s, len < REC_DYN_INLINE ? len : REC_DYN_INLINE);
		if (a) {
			a->ptr = s;
			a->id = id;
			a->len = (uint32_t)len;
			memcpy(a->inl, s, len);
		}
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

/* A stack a few frames deep compares faster in a loop than in a call to
 * memcmp (every event with a stack that is already known ends here). */
static inline bool same_pcs(const uintptr_t *a, const uintptr_t *b, size_t n)
{
	uintptr_t d = 0;
	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

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
			if (e->depth == n && e->flags == flags && same_pcs(&st->arena[e->off], pcs, n))
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

