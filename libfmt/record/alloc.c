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
 * its previous sample.  The bytes after the last sample are recorded as a
 * tail record when the thread exits (a thread-exit hook of the core,
 * builtin_internal.h, run before its rec.ThreadEnd; threads the recorder
 * never registered use the key destructor here) and, for running threads, when the default recorder
 * closes (a listener; every thread that allocated is in a registry for
 * that), so the weights sum to the bytes allocated.  Cost of an unsampled
 * allocation: one TLS add, subtract and compare.
 *
 * Frees of sampled blocks: the addresses (and sizes) of live sampled blocks
 * are kept in a small lock-free open-addressing table (4096 slots, 8
 * probes); rec_free() looks there only when a byte per slot (how many live
 * blocks start their probes there) says it may hold the address.
 */
#include "rec/builtins.h"
#include "record/builtin_internal.h"
#include "record/stack_internal.h"

#include <math.h>
#include <pthread.h>
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
	if (rec_type_declare(&alloc_def, 0, REC_DECLARE_STACK, &T_alloc) != REC_OK)
		T_alloc = NULL;
	if (rec_type_declare(&free_def, 0, REC_DECLARE_STACK, &T_free) != REC_OK)
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
	rec_thread_seen();
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
/* How many live keys have each slot as their first probe (at most
 * LIVE_PROBES): a free looks at this one byte of a 4 KiB array, not at the
 * 32 KiB of keys, for the blocks that were not sampled (nearly all).
 * Raised before the key is published, lowered after it is taken. */
uint8_t rec_alloc_live_home_[REC_ALLOC_LIVE_SLOTS];
_Static_assert(REC_ALLOC_LIVE_SLOTS == LIVE_CAP, "stack_internal.h's slot count");

static inline size_t live_hash(uintptr_t p)
{
	return rec_alloc_live_slot_(p);
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
		__atomic_add_fetch(&rec_alloc_live_home_[live_hash(p)], 1, __ATOMIC_RELAXED);
		__atomic_store_n(&live_key[h], p, __ATOMIC_RELEASE);
		return;
	}
	/* Table crowded here: this block's free will not be recorded. */
}

/* Remove p; returns its size + 1 (0 if p is not a live sampled block). */
static uint64_t live_take(uintptr_t p)
{
	if (!rec_alloc_maybe_live_((const void *)p))
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
		__atomic_sub_fetch(&rec_alloc_live_home_[live_hash(p)], 1, __ATOMIC_RELAXED);
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

/* A thread's sampling state.  accum is written by its thread only (relaxed
 * atomic load and store: a plain add), and taken (exchanged with 0) by the
 * thread that opens or closes the default recorder, through the registry
 * of threads that allocated. */
typedef struct alloc_thread {
	int64_t left;   /* bytes until the next sample */
	uint64_t accum; /* bytes since the previous sample (or the recording's start) */
	uint64_t rng;
	int started;    /* in the registry, its key set */
	struct alloc_thread *next, **pprev;
} alloc_thread;

static __thread alloc_thread tls_a;

/* Held while emitting (on_default): its place in the lock order is in
 * recorder_internal.h (LOCK ORDER). */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static alloc_thread *reg_head;
static pthread_key_t reg_key;
static int reg_key_ok;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;

static void on_default(rec_recorder *r, int opened, void *opaque);
static void thread_gone(void *arg);
static void thread_exit_hook(void);

static void reset_in_child(void)
{
	/* Only the forking thread lives on in the child. */
	pthread_mutex_init(&reg_lock, NULL);
	reg_head = NULL;
	if (tls_a.started) {
		tls_a.next = NULL;
		tls_a.pprev = &reg_head;
		reg_head = &tls_a;
	}
}

static void reg_init(void)
{
	reg_key_ok = pthread_key_create(&reg_key, thread_gone) == 0;
	(void)pthread_atfork(NULL, NULL, reset_in_child);
	(void)rec_thread_hooks_add(NULL, thread_exit_hook);
	(void)rec_default_listen(on_default, NULL);
}

static void reg_add(alloc_thread *a)
{
	pthread_once(&reg_once, reg_init);
	pthread_mutex_lock(&reg_lock);
	a->next = reg_head;
	a->pprev = &reg_head;
	if (reg_head)
		reg_head->pprev = &a->next;
	reg_head = a;
	pthread_mutex_unlock(&reg_lock);
	if (reg_key_ok)
		(void)pthread_setspecific(reg_key, a);
}

static inline uint64_t accum_take(alloc_thread *a)
{
	return __atomic_exchange_n(&a->accum, 0, __ATOMIC_RELAXED);
}

/* One rec.Alloc for weight bytes counted since the last sample that no
 * sample will account: address 0, size 0, sampled, Stack 0 (the bytes came
 * from wherever the thread allocated since; no one stack stands for them). */
static __attribute__((noinline)) void rec_alloc_tail_emit_(uint64_t weight)
{
	ensure_types();
	rec_emit e;
	if (weight == 0 || rec_alloc_sample_interval() == 0 || T_alloc == NULL ||
	    !rec_emit_begin_pcs(&e, T_alloc, rec_type_ticks(T_alloc), 0, NULL, 0))
		return;
	rec_emit_u64(&e, 0);
	rec_emit_u64(&e, 0);
	rec_emit_u64(&e, weight);
	rec_emit_bool(&e, true);
	rec_emit_commit(&e);
}

static void thread_exit_hook(void)
{
	if (tls_a.started)
		rec_alloc_tail_emit_(accum_take(&tls_a));
}

/* The thread's key destructor: a thread the recorder never registered
 * (it allocated less than one gap and emitted nothing) records its tail
 * here; then it leaves the registry. */
static void thread_gone(void *arg)
{
	alloc_thread *a = arg;
	rec_alloc_tail_emit_(accum_take(a));
	pthread_mutex_lock(&reg_lock);
	*a->pprev = a->next;
	if (a->next)
		a->next->pprev = a->pprev;
	pthread_mutex_unlock(&reg_lock);
	a->started = 0;
}

/* A default recorder opened: the bytes counted before belong to no
 * recording.  Closing: every thread's tail, recorded by the closing thread
 * (before the types are disabled and the last chunk is written). */
static void on_default(rec_recorder *r, int opened, void *opaque)
{
	(void)r;
	(void)opaque;
	pthread_mutex_lock(&reg_lock);
	for (alloc_thread *a = reg_head; a; a = a->next) {
		uint64_t w = accum_take(a);
		if (!opened)
			rec_alloc_tail_emit_(w);
	}
	pthread_mutex_unlock(&reg_lock);
}

static uint64_t next_gap(void)
{
	uint64_t mean = rec_alloc_sample_interval();
	if (mean == 0)
		return UINT64_C(1) << 62; /* sampling off */
	if (tls_a.rng == 0) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		tls_a.rng = ((uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull) ^
			    (rec_builtin_tid() << 32) ^ (uint64_t)(uintptr_t)&tls_a;
		if (tls_a.rng == 0)
			tls_a.rng = 0x2545F4914F6CDD1Dull;
	}
	tls_a.rng ^= tls_a.rng >> 12;
	tls_a.rng ^= tls_a.rng << 25;
	tls_a.rng ^= tls_a.rng >> 27;
	uint64_t r = tls_a.rng * 0x2545F4914F6CDD1Dull;
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
	if (!tls_a.started) {
		/* First allocation of the thread: join the registry (for its
		 * tail at exit and close), draw its first gap and count this
		 * allocation against it. */
		tls_a.started = 1;
		reg_add(&tls_a);
		tls_a.left = (int64_t)next_gap() - (int64_t)size;
		if (tls_a.left > 0)
			return;
	}
	uint64_t weight = accum_take(&tls_a);
	rec_thread_seen();
	tls_a.left = (int64_t)next_gap();
	ensure_types();
	/* Sampling turned off since the gap was drawn: no sample. */
	if (T_alloc == NULL || !rec_type_enabled(T_alloc) || rec_alloc_sample_interval() == 0)
		return;
	rec_alloc_emit_(p, size, weight, true);
	live_put((uintptr_t)p, size);
}

static inline void account(void *p, size_t size)
{
	if (p == NULL)
		return;
	__atomic_store_n(&tls_a.accum, __atomic_load_n(&tls_a.accum, __ATOMIC_RELAXED) + size,
			 __ATOMIC_RELAXED);
	tls_a.left -= (int64_t)size;
	if (__builtin_expect(tls_a.left <= 0, 0))
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

void rec_alloc_account_(void *p, size_t size)
{
	account(p, size);
}

void *rec_alloc_realloc_with_(void *(*realloc_fn)(void *, size_t), void *ptr, size_t size)
{
	const uintptr_t addr = (uintptr_t)ptr; /* only an address after realloc */
	uint64_t old = ptr != NULL ? live_take(addr) : 0;
	void *p = realloc_fn(ptr, size);
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

void rec_alloc_free_with_(void (*free_fn)(void *), void *ptr)
{
	if (ptr == NULL)
		return;
	const uintptr_t addr = (uintptr_t)ptr;
	uint64_t old = live_take(addr);
	free_fn(ptr);
	if (old != 0)
		rec_free_emit_(addr, old - 1, true);
}

void *rec_realloc(void *ptr, size_t size)
{
	return rec_alloc_realloc_with_(realloc, ptr, size);
}

void rec_free(void *ptr)
{
	rec_alloc_free_with_(free, ptr);
}
