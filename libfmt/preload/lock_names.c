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
 */
#include "preload/preload_internal.h"
#include "record/stack_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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

static char *copy(const char *s)
{
	size_t n = strlen(s) + 1;
	char *c = rec_real_.malloc(n);
	if (c != NULL)
		memcpy(c, s, n);
	return c;
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
	pthread_mutex_lock(&names_lock);
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

/* For lock_wrap.c's events (rec.LockOrder) of locks not named yet. */
static const char *name_hook(const void *lock)
{
	return rec_lock_name(lock, 0);
}

__attribute__((constructor(102))) static void set_hook(void)
{
	rec_lock_name_hook_ = name_hook;
}
