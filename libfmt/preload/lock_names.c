/* SPDX-License-Identifier: MIT */
/*
 * lock_names.c - names for the locks the interposers see: the symbol of the
 * global or static variable that holds the lock (STT_OBJECT in the module's
 * .symtab or .dynsym or its debug file's, through the recorder's symbolizer,
 * rec_symbolizer_data, over libdwfl's symbol tables: no DWARF is read), "SYMBOL+OFFSET" inside a larger object, else
 * "0x<address>@FUNCTION" with the function of the first frame that waited
 * on it (a lock on the heap or the stack), else "0x<address>".  A heap lock
 * freed and another made at the same address keeps the first one's name.
 *
 * Names are looked up when a lock's first event is written (a wait, by the
 * waiting thread after its wait; a rec.LockOrder pair, through
 * lock_wrap.c's name hook), never on the uncontended path, under one lock,
 * and cached for the process's life in a fixed open-addressing table read
 * without a lock.  A lock past a full table (4096 locks, 16 probes) is
 * not named: its events say 0x<address>.
 *
 * The thread looking a name up is inside an interposer and may hold the
 * program's own locks, its allocator's among them (jemalloc takes its
 * mutexes through pthread_mutex_lock, and its waits are events), so that
 * thread allocates nothing, walks no module list and reads no file: the
 * names' bytes are mapped, and the names come from the symbol indexes the
 * symbolizer has built already (rec_symbolizer_name_now).  The indexes are
 * built by threads that may allocate: the library's constructor for the
 * modules loaded at start (rec_lock_names_init), and the recorder's writer
 * thread every 250 ms when the loader added a module since or a lookup
 * found a module not read (names_tick); and by a thread about to wait that
 * holds no lock taken through the interposers (so none of its allocator's),
 * when the lock's or its caller's module is not read yet
 * (rec_lock_name_load, lock_interpose.c's wait_begin).  Until then such a
 * lock is named 0x<address>, not cached: a later event names it.  A lock in
 * a module loaded since the last walk looks like a heap lock
 * (0x<address>@FUNCTION, cached) until the writer's next tick reads the
 * module and renames it.  The writer holds the lookup's lock while it
 * reads (and allocates), so a waiting thread does not wait for it without
 * bound: after 50 ms of trying it gives up, the event names the lock
 * 0x<address> (not cached), and the give-up is counted
 * (rec_lock_names_given_up, reported on stderr at exit).
 */
#include "preload/preload_internal.h"
#include "rec/recorder.h"
#include "record/builtin_internal.h"
#include "record/stack_internal.h"

#include <inttypes.h>
#include <link.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define NAMES_CAP 4096u /* power of two */
#define NAMES_PROBES 16u

static uintptr_t keys[NAMES_CAP];
static const char *names[NAMES_CAP];
static unsigned count;
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static rec_symbolizer *sym;

static inline size_t slot_of(uintptr_t a)
{
	return (size_t)(((uint64_t)a * 0x9E3779B97F4A7C15ull) >> 40) & (NAMES_CAP - 1);
}

static const char *cached(const void *addr)
{
	if (__atomic_load_n(&count, __ATOMIC_RELAXED) == 0)
		return NULL;
	size_t h = slot_of((uintptr_t)addr);
	for (unsigned i = 0; i < NAMES_PROBES; i++, h = (h + 1) & (NAMES_CAP - 1)) {
		uintptr_t k = __atomic_load_n(&keys[h], __ATOMIC_ACQUIRE);
		if (k == (uintptr_t)addr)
			return __atomic_load_n(&names[h], __ATOMIC_RELAXED);
		if (k == 0)
			return NULL;
	}
	return NULL;
}

/* The names' bytes (names_lock): mapped chunks, never freed. */
#define NAMES_CHUNK ((size_t)64 << 10)
static char *arena;
static size_t arena_left;
uint64_t rec_lock_names_given_up;

static char *copy(const char *s)
{
	size_t n = strlen(s) + 1;
	if (n > arena_left) {
		size_t sz = n > NAMES_CHUNK ? (n + 4095) & ~(size_t)4095 : NAMES_CHUNK;
		void *p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		arena = p;
		arena_left = sz;
	}
	char *c = arena;
	memcpy(c, s, n);
	arena += n;
	arena_left -= n;
	return c;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* names_lock, or 0 after 50 ms of trying (counted); a thread that gave up
 * does not try again for the next 50 ms (its event's other name). */
static __thread uint64_t t_retry_at;
static int names_lock_bounded(void)
{
	if (pthread_mutex_trylock(&names_lock) == 0)
		return 1;
	uint64_t now = mono_ns();
	if (now < t_retry_at)
		return 0;
	const uint64_t until = now + 50000000u;
	do {
		sched_yield();
		if (pthread_mutex_trylock(&names_lock) == 0)
			return 1;
	} while ((now = mono_ns()) < until);
	t_retry_at = now + 50000000u;
	__atomic_add_fetch(&rec_lock_names_given_up, 1, __ATOMIC_RELAXED);
	return 0;
}

/* Set when a name could not be final because a module it needs is not read
 * yet; the writer's tick (names_tick) reads it. */
static int stale;

/* The name of the lock at a, from what sym has read already
 * (rec_symbolizer_name_now: no allocation, no walk, no file).  *final is 0
 * when a module it needed was not read: the name is 0x<address> for now. */
static const char *lookup(uintptr_t a, uintptr_t caller, int *final)
{
	char buf[256];
	uint64_t off = 0;
	int ready = 0;
	*final = 1;
	const char *obj = rec_symbolizer_name_now(sym, a, 1, 1, &off, &ready);
	if (obj != NULL && off == 0)
		return copy(obj);
	if (obj != NULL) {
		snprintf(buf, sizeof buf, "%s+%" PRIu64, obj, off);
		return copy(buf);
	}
	const char *fn = NULL;
	if (ready && caller != 0)
		fn = rec_symbolizer_name_now(sym, caller, 0, 0, NULL, &ready);
	if (!ready) {
		*final = 0;
		__atomic_store_n(&stale, 1, __ATOMIC_RELAXED);
	}
	if (fn != NULL)
		snprintf(buf, sizeof buf, "0x%" PRIxPTR "@%s", a, fn);
	else
		snprintf(buf, sizeof buf, "0x%" PRIxPTR, a);
	return copy(buf);
}

/* *h: the slot of a, or the free one where it goes (names_lock); 0 when
 * its probes are all taken by others. */
static int slot_for(uintptr_t a, size_t *h)
{
	*h = slot_of(a);
	for (unsigned i = 0; i < NAMES_PROBES; i++, *h = (*h + 1) & (NAMES_CAP - 1))
		if (keys[*h] == 0 || keys[*h] == a)
			return 1;
	return 0;
}

static void put(size_t h, uintptr_t a, const char *n)
{
	__atomic_store_n(&names[h], n, __ATOMIC_RELAXED);
	__atomic_store_n(&keys[h], a, __ATOMIC_RELEASE);
	__atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
}

const char *rec_lock_name(const void *addr, uintptr_t caller_pc)
{
	const char *n = cached(addr);
	if (n != NULL)
		return n;
	uintptr_t a = (uintptr_t)addr;
	if (!names_lock_bounded())
		return NULL;
	size_t h;
	if (slot_for(a, &h) && keys[h] == a) {
		n = names[h];
	} else if (slot_for(a, &h)) {
		int final = 0;
		n = lookup(a, caller_pc, &final);
		if (n != NULL && final)
			put(h, a, n);
	}
	pthread_mutex_unlock(&names_lock);
	return n;
}

int rec_lock_name_load(const void *addr, uintptr_t caller_pc)
{
	uintptr_t a = (uintptr_t)addr;
	size_t h;
	if (cached(addr) != NULL || !names_lock_bounded())
		return 0;
	int loaded = 0;
	if (slot_for(a, &h) && keys[h] == 0) {
		int final = 0;
		const char *n = lookup(a, caller_pc, &final);
		if (!final && sym != NULL) { /* a module not read yet: read it */
			uint64_t off = 0;
			(void)rec_symbolizer_data(sym, a, &off);
			if (caller_pc != 0)
				(void)rec_symbolizer_data(sym, caller_pc - 1, &off);
			n = lookup(a, caller_pc, &final);
			loaded = 1;
		}
		if (n != NULL && final)
			put(h, a, n);
	}
	pthread_mutex_unlock(&names_lock);
	return loaded;
}

/* Each module's symbol tables read (an address in each module, the first of
 * its first segment, looked up), by a thread that may allocate: the
 * library's constructor, then the writer's tick when a module was loaded
 * since (the loader's count of additions) or a lookup needed one. */
#define WARM_MAX 256
typedef struct warm_list {
	uintptr_t addr[WARM_MAX];
	size_t n;
	unsigned long long adds;
} warm_list;

static int warm_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	warm_list *w = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs))
		w->adds = info->dlpi_adds;
	for (int i = 0; i < info->dlpi_phnum && w->n < WARM_MAX; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			w->addr[w->n++] = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			break;
		}
	return 0;
}

static unsigned long long warmed_adds; /* names_lock */

static void warm(void)
{
	static warm_list w; /* names_lock */
	pthread_mutex_lock(&names_lock);
	w.n = 0;
	rec_dl_iterate_phdr(warm_cb, &w);
	if (sym == NULL && rec_symbolizer_open(&sym) != REC_OK)
		sym = NULL;
	for (size_t i = 0; sym != NULL && i < w.n; i++) {
		uint64_t off = 0;
		(void)rec_symbolizer_data(sym, w.addr[i], &off);
	}
	/* A lock named 0x<address> (no module of it known then) that lies in
	 * a module read since: its symbol from now on. */
	for (size_t h = 0; sym != NULL && h < NAMES_CAP; h++) {
		uint64_t off = 0;
		int ready = 0;
		const char *obj;
		if (keys[h] == 0 || strncmp(names[h], "0x", 2) != 0 ||
		    (obj = rec_symbolizer_name_now(sym, keys[h], 1, 1, &off, &ready)) == NULL)
			continue;
		char buf[256];
		if (off != 0)
			snprintf(buf, sizeof buf, "%s+%" PRIu64, obj, off);
		const char *n = copy(off != 0 ? buf : obj);
		if (n != NULL)
			__atomic_store_n(&names[h], n, __ATOMIC_RELAXED);
	}
	warmed_adds = w.adds;
	__atomic_store_n(&stale, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&names_lock);
}

/* A fork child has only the forking thread: the parent's writer may have
 * held names_lock at the fork (names_tick, warm), and a recording child's
 * writer takes it every 250 ms: it waited for ever.  The symbolizer it may
 * have been updating is left to the parent; the child opens its own at its
 * first warm().  The names cached so far stay (each published whole). */
static void names_fork_child(void)
{
	pthread_mutex_init(&names_lock, NULL);
	sym = NULL;
	stale = 1;
}

void rec_lock_names_init(void)
{
	(void)pthread_atfork(NULL, NULL, names_fork_child);
	warm();
}

static int adds_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs))
		*(unsigned long long *)arg = info->dlpi_adds;
	return 1;
}

static void names_tick(rec_recorder *r, void *opaque)
{
	(void)r;
	(void)opaque;
	unsigned long long adds = 0;
	rec_dl_iterate_phdr(adds_cb, &adds);
	pthread_mutex_lock(&names_lock);
	int due = adds != warmed_adds || __atomic_load_n(&stale, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&names_lock);
	if (due)
		warm();
}

void rec_lock_names_start(rec_recorder *r)
{
	(void)rec_recorder_add_periodic(r, names_tick, NULL, 250);
}

/* For lock_wrap.c's events (rec.LockOrder) of locks not named yet. */
static const char *name_hook(const void *lock)
{
	return rec_lock_name(lock, 0);
}

__attribute__((constructor(102))) static void set_hook(void)
{
	rec_lock_name_hook_ = name_hook;
}
