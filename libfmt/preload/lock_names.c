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
 * program's own locks, its allocator's among them (jemalloc's mutexes), so
 * the names' bytes are mapped here, never malloc'ed, and the symbolizer's
 * tables of the modules loaded at start are read in the library's
 * constructor (rec_lock_names_init).  The lookup's lock is still held
 * while the symbolizer reads a module loaded later (it allocates), so a
 * thread never waits for it without bound: after 50 ms of trying it gives
 * up, the event names the lock 0x<address> (not cached: the next event
 * tries again), and the give-up is counted (rec_lock_names_given_up,
 * reported on stderr at exit).
 */
#include "preload/preload_internal.h"
#include "record/builtin_internal.h"
#include "record/stack_internal.h"

#include <inttypes.h>
#include <link.h>
#include <sched.h>
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

static const char *lookup(uintptr_t a, uintptr_t caller)
{
	if (sym == NULL && rec_symbolizer_open(&sym) != REC_OK)
		sym = NULL;
	rec_symbolizer_set_lines(sym, 0); /* names only: no DWARF in this thread */
	char buf[256];
	uint64_t off = 0;
	const char *obj = rec_symbolizer_data(sym, a, &off);
	if (obj != NULL && off == 0)
		return copy(obj);
	if (obj != NULL) {
		snprintf(buf, sizeof buf, "%s+%" PRIu64, obj, off);
		return copy(buf);
	}
	rec_symbol fs;
	if (caller != 0 && rec_symbolizer_lookup(sym, caller, &fs) == REC_OK && fs.function[0])
		snprintf(buf, sizeof buf, "0x%" PRIxPTR "@%s", a, fs.function);
	else
		snprintf(buf, sizeof buf, "0x%" PRIxPTR, a);
	return copy(buf);
}

const char *rec_lock_name(const void *addr, uintptr_t caller_pc)
{
	const char *n = cached(addr);
	if (n != NULL)
		return n;
	uintptr_t a = (uintptr_t)addr;
	if (!names_lock_bounded())
		return NULL;
	size_t h = slot_of(a);
	unsigned i;
	for (i = 0; i < NAMES_PROBES; i++, h = (h + 1) & (NAMES_CAP - 1))
		if (keys[h] == 0 || keys[h] == a)
			break;
	if (i < NAMES_PROBES && keys[h] == a) {
		n = names[h];
	} else if (i < NAMES_PROBES) {
		n = lookup(a, caller_pc);
		if (n != NULL) {
			__atomic_store_n(&names[h], n, __ATOMIC_RELAXED);
			__atomic_store_n(&keys[h], a, __ATOMIC_RELEASE);
			__atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
		}
	}
	pthread_mutex_unlock(&names_lock);
	return n;
}

/* Each module's symbol tables read now, in the constructor, not later by
 * a thread that may hold its allocator's locks: an address in each module
 * (the first of its first segment), then a lookup of each. */
#define WARM_MAX 256
typedef struct warm_list {
	uintptr_t addr[WARM_MAX];
	size_t n;
} warm_list;

static int warm_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	warm_list *w = arg;
	for (int i = 0; i < info->dlpi_phnum && w->n < WARM_MAX; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			w->addr[w->n++] = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			break;
		}
	return 0;
}

void rec_lock_names_init(void)
{
	static warm_list w; /* the constructor's, once */
	w.n = 0;
	rec_dl_iterate_phdr(warm_cb, &w);
	pthread_mutex_lock(&names_lock);
	if (sym == NULL && rec_symbolizer_open(&sym) != REC_OK)
		sym = NULL;
	for (size_t i = 0; sym != NULL && i < w.n; i++) {
		uint64_t off = 0;
		(void)rec_symbolizer_data(sym, w.addr[i], &off);
	}
	pthread_mutex_unlock(&names_lock);
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
