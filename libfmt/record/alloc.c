/* SPDX-License-Identifier: MIT */
/*
 * alloc.c - allocation events: exact reports (rec_alloc_report,
 * rec_free_report) and sampled malloc/calloc/realloc/free wrappers.
 *
 * Interposition: explicit wrappers (rec_malloc & co.) rather than
 * LD_PRELOAD or the linker's --wrap=malloc: --wrap only affects objects
 * linked statically with the flag (not librec.so's users, not libraries the
 * program calls), and replacing malloc process-wide makes the recorder's own
 * allocations (thread buffers, interning) recursive.  A program that wants
 * all of its own allocations sampled can `#define malloc rec_malloc` (etc.)
 * in its sources.
 *
 * Sampling: each thread subtracts the bytes it allocates from a countdown
 * drawn from an exponential distribution with mean rec_alloc_sample_interval()
 * (a xorshift generator in TLS); when it reaches zero, the allocation that
 * crossed it is recorded with weight = the bytes the thread allocated since
 * its previous sample (so weights sum to the bytes allocated).  Cost of an
 * unsampled allocation: one TLS subtract and compare.
 *
 * Frees of sampled blocks: the addresses (and sizes) of live sampled blocks
 * are kept in a small lock-free open-addressing table (4096 slots, 8
 * probes); rec_free() looks there only while it is non-empty.
 */
#include "rec/builtins.h"
#include "record/stack_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* ---- types ------------------------------------------------------------------ */

static const rec_field alloc_fields[] = {
	{ "address", "Address", "address of the block", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "size", "Size", "bytes of this allocation", REC_TYPE_U64, REC_UNIT_BYTES },
	{ "weight", "Weight", "bytes this event stands for: size for a reported allocation; for a "
	  "sampled one, the bytes the thread allocated since its previous sample",
	  REC_TYPE_U64, REC_UNIT_BYTES },
	{ "sampled", "Sampled", "false: reported by the program (exact); true: picked by the "
	  "sampling wrappers", REC_TYPE_BOOL, REC_UNIT_NONE },
};
static const rec_type alloc_def = {
	REC_TYPE_ID_ALLOC, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "rec.Alloc", "Allocation",
	"A memory allocation (reported exactly, or sampled)", "rec/Memory", 4, alloc_fields
};

static const rec_field free_fields[] = {
	{ "address", "Address", "address of the block", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "size", "Size", "bytes of the block if known (sampled blocks), else 0", REC_TYPE_U64,
	  REC_UNIT_BYTES },
	{ "sampled", "Sampled", "false: reported by the program; true: a sampled block freed",
	  REC_TYPE_BOOL, REC_UNIT_NONE },
};
static const rec_type free_def = {
	REC_TYPE_ID_FREE, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "rec.Free", "Free",
	"A reported allocation or a sampled block was freed", "rec/Memory", 3, free_fields
};

static rec_event_type *T_alloc, *T_free;
static int ready;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_types(void)
{
	if (rec_type_declare(&alloc_def, 0, REC_TYPE_STACK, &T_alloc) != REC_OK)
		T_alloc = NULL;
	if (rec_type_declare(&free_def, 0, REC_TYPE_STACK, &T_free) != REC_OK)
		T_free = NULL;
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
}

static inline void ensure_types(void)
{
	if (__builtin_expect(!__atomic_load_n(&ready, __ATOMIC_ACQUIRE), 0))
		pthread_once(&once, init_types);
}

static __attribute__((noinline)) void rec_alloc_emit_(const void *p, uint64_t size,
						      uint64_t weight, bool sampled)
{
	ensure_types();
	rec_emit e;
	if (T_alloc == NULL || !rec_emit_begin(&e, T_alloc))
		return;
	rec_emit_u64(&e, (uintptr_t)p);
	rec_emit_u64(&e, size);
	rec_emit_u64(&e, weight);
	rec_emit_bool(&e, sampled);
	rec_emit_commit(&e);
}

/* Takes an address, not a pointer: the block is usually freed already. */
static __attribute__((noinline)) void rec_free_emit_(uintptr_t addr, uint64_t size, bool sampled)
{
	ensure_types();
	rec_emit e;
	if (T_free == NULL || !rec_emit_begin(&e, T_free))
		return;
	rec_emit_u64(&e, addr);
	rec_emit_u64(&e, size);
	rec_emit_bool(&e, sampled);
	rec_emit_commit(&e);
}

void rec_alloc_report(const void *ptr, uint64_t size)
{
	rec_sampler_thread_seen();
	rec_alloc_emit_(ptr, size, size, false);
}

void rec_free_report(const void *ptr)
{
	rec_free_emit_((uintptr_t)ptr, 0, false);
}

/* ---- live sampled blocks ------------------------------------------------------ */

#define LIVE_CAP 4096u /* power of two */
#define LIVE_PROBES 8u
#define TOMBSTONE ((uintptr_t)1)

static uintptr_t live_key[LIVE_CAP];
static uint64_t live_size[LIVE_CAP];
static uint64_t live_count;

static inline size_t live_hash(uintptr_t p)
{
	return (size_t)(((uint64_t)p * 0x9E3779B97F4A7C15ull) >> 40) & (LIVE_CAP - 1);
}

static void live_put(uintptr_t p, uint64_t size)
{
	size_t h = live_hash(p);
	for (unsigned i = 0; i < LIVE_PROBES; i++, h = (h + 1) & (LIVE_CAP - 1)) {
		uintptr_t k = __atomic_load_n(&live_key[h], __ATOMIC_ACQUIRE);
		if (k != 0 && k != TOMBSTONE)
			continue;
		/* Claim the slot with a tombstone-like "busy" marker: write the size
		 * first, then publish the key. */
		if (!__atomic_compare_exchange_n(&live_key[h], &k, TOMBSTONE + 1, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&live_size[h], size, __ATOMIC_RELAXED);
		__atomic_store_n(&live_key[h], p, __ATOMIC_RELEASE);
		__atomic_add_fetch(&live_count, 1, __ATOMIC_RELAXED);
		return;
	}
	/* Table crowded here: this block's free will not be recorded. */
}

/* Remove p; returns its size + 1 (0 if p is not a live sampled block). */
static uint64_t live_take(uintptr_t p)
{
	if (__atomic_load_n(&live_count, __ATOMIC_RELAXED) == 0)
		return 0;
	size_t h = live_hash(p);
	for (unsigned i = 0; i < LIVE_PROBES; i++, h = (h + 1) & (LIVE_CAP - 1)) {
		uintptr_t k = __atomic_load_n(&live_key[h], __ATOMIC_ACQUIRE);
		if (k == 0)
			return 0;
		if (k != p)
			continue;
		uint64_t size = __atomic_load_n(&live_size[h], __ATOMIC_RELAXED);
		if (!__atomic_compare_exchange_n(&live_key[h], &k, TOMBSTONE, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			return 0;
		__atomic_sub_fetch(&live_count, 1, __ATOMIC_RELAXED);
		return size + 1;
	}
	return 0;
}

/* ---- sampling ------------------------------------------------------------------- */

static uint64_t g_interval = UINT64_C(512) * 1024;

void rec_alloc_set_sample_interval(uint64_t bytes)
{
	__atomic_store_n(&g_interval, bytes, __ATOMIC_RELAXED);
}

uint64_t rec_alloc_sample_interval(void)
{
	return __atomic_load_n(&g_interval, __ATOMIC_RELAXED);
}

static __thread int64_t tls_left;    /* bytes until the next sample */
static __thread uint64_t tls_accum;  /* bytes since the previous sample */
static __thread uint64_t tls_rng;
static __thread int tls_started;

static uint64_t next_gap(void)
{
	uint64_t mean = rec_alloc_sample_interval();
	if (mean == 0)
		return UINT64_C(1) << 62; /* sampling off */
	if (tls_rng == 0) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		tls_rng = ((uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull) ^ (rec_builtin_tid() << 32) ^
			  (uint64_t)(uintptr_t)&tls_rng;
		if (tls_rng == 0)
			tls_rng = 0x2545F4914F6CDD1Dull;
	}
	tls_rng ^= tls_rng >> 12;
	tls_rng ^= tls_rng << 25;
	tls_rng ^= tls_rng >> 27;
	uint64_t r = tls_rng * 0x2545F4914F6CDD1Dull;
	double u = ((double)(r >> 11) + 1.0) / 9007199254740993.0; /* (0, 1] */
	double gap = -log(u) * (double)mean;
	if (gap < 1.0)
		gap = 1.0;
	if (gap > 4e18)
		gap = 4e18;
	return (uint64_t)gap;
}

static __attribute__((noinline)) void rec_alloc_sample_(void *p, size_t size)
{
	if (!tls_started) {
		/* First allocation of the thread: draw its first gap and count
		 * this allocation against it. */
		tls_started = 1;
		tls_left = (int64_t)next_gap() - (int64_t)size;
		if (tls_left > 0)
			return;
	}
	uint64_t weight = tls_accum;
	tls_accum = 0;
	rec_sampler_thread_seen();
	tls_left = (int64_t)next_gap();
	ensure_types();
	if (T_alloc == NULL || !rec_type_enabled(T_alloc))
		return;
	rec_alloc_emit_(p, size, weight, true);
	live_put((uintptr_t)p, size);
}

static inline void account(void *p, size_t size)
{
	if (p == NULL)
		return;
	tls_accum += size;
	tls_left -= (int64_t)size;
	if (__builtin_expect(tls_left <= 0, 0))
		rec_alloc_sample_(p, size);
}

void *rec_malloc(size_t size)
{
	void *p = malloc(size);
	account(p, size);
	return p;
}

void *rec_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
	account(p, n * size); /* calloc fails (NULL) if n * size overflows */
	return p;
}

void *rec_realloc(void *ptr, size_t size)
{
	const uintptr_t addr = (uintptr_t)ptr; /* only an address after realloc */
	uint64_t old = ptr != NULL ? live_take(addr) : 0;
	void *p = realloc(ptr, size);
	if (p == NULL && size != 0) {
		if (old != 0)
			live_put(addr, old - 1); /* still allocated */
		return NULL;
	}
	if (old != 0)
		rec_free_emit_(addr, old - 1, true);
	account(p, size);
	return p;
}

void rec_free(void *ptr)
{
	if (ptr == NULL)
		return;
	const uintptr_t addr = (uintptr_t)ptr;
	uint64_t old = live_take(addr);
	free(ptr);
	if (old != 0)
		rec_free_emit_(addr, old - 1, true);
}
