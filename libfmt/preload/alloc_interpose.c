/* SPDX-License-Identifier: MIT */
/*
 * alloc_interpose.c - malloc, calloc, realloc, free, posix_memalign,
 * aligned_alloc, memalign, valloc and pvalloc for the whole process (C++'s
 * new arrives through malloc).  Each calls the real function and counts the
 * block with the sampling of rec_malloc & co. (libfmt/record/alloc.c:
 * rec_alloc_account_, rec_alloc_realloc_with_, rec_alloc_free_with_): the
 * sampled blocks are rec.Alloc events with weights that sum to the bytes
 * allocated, and their frees rec.Free, for the live-heap view.
 *
 * Inside the recorder (rec_in_recorder_) or before it records, nothing is
 * counted.  The real allocator runs inside the recorder too: its own locks
 * (jemalloc's pthread mutexes, as in redis-server) are not the program's,
 * and recording them would call into the recorder, which allocates, while
 * the allocator holds them: a thread that re-enters jemalloc for the lock
 * it already holds waits for itself forever.  Before the real functions are known, and while dlsym looks them
 * up, blocks come from the bootstrap allocator; free and realloc recognise
 * them.
 */
#include "preload/preload_internal.h"
#include "record/builtin_internal.h"
#include "record/stack_internal.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The resolving thread is inside the recorder: dlsym's allocations. */
static inline int booting(void)
{
	if (__builtin_expect(__atomic_load_n(&rec_real_ready_, __ATOMIC_ACQUIRE), 1))
		return 0;
	if (rec_in_recorder_ > 0)
		return 1;
	rec_preload_resolve();
	return 0;
}

static inline void count(void *p, size_t size)
{
	if (rec_preload_active()) {
		rec_in_recorder_++;
		rec_alloc_account_(p, size);
		rec_in_recorder_--;
	}
}

REC_PRELOAD_API void *malloc(size_t size)
{
	if (booting())
		return rec_boot_alloc(size, 16);
	rec_in_recorder_++;
	void *p = rec_real_.malloc(size);
	rec_in_recorder_--;
	count(p, size);
	return p;
}

REC_PRELOAD_API void *calloc(size_t n, size_t size)
{
	if (booting()) {
		if (size != 0 && n > SIZE_MAX / size)
			return NULL;
		return rec_boot_alloc(n * size, 16); /* the arena is zero */
	}
	rec_in_recorder_++;
	void *p = rec_real_.calloc(n, size);
	rec_in_recorder_--;
	count(p, n * size); /* calloc fails (NULL) if n * size overflows */
	return p;
}

static void real_free(void *p)
{
	rec_real_.free(p);
}

REC_PRELOAD_API void free(void *p)
{
	if (p == NULL || rec_boot_owns(p))
		return;
	rec_preload_ensure();
	if (!rec_preload_active()) {
		rec_real_.free(p);
		return;
	}
	rec_in_recorder_++;
	rec_alloc_free_with_(real_free, p);
	rec_in_recorder_--;
}

static void *real_realloc(void *p, size_t size)
{
	return rec_real_.realloc(p, size);
}

REC_PRELOAD_API void *realloc(void *p, size_t size)
{
	if (booting() || rec_boot_owns(p)) {
		void *q = rec_real_ready_ ? malloc(size) : rec_boot_alloc(size, 16);
		if (q != NULL && p != NULL) {
			size_t old = rec_boot_size(p);
			memcpy(q, p, old < size ? old : size);
		}
		return q;
	}
	if (!rec_preload_active())
		return rec_real_.realloc(p, size);
	rec_in_recorder_++;
	void *q = rec_alloc_realloc_with_(real_realloc, p, size);
	rec_in_recorder_--;
	return q;
}

REC_PRELOAD_API int posix_memalign(void **out, size_t align, size_t size)
{
	if (booting()) {
		*out = rec_boot_alloc(size, align);
		return *out ? 0 : ENOMEM;
	}
	rec_in_recorder_++;
	int rc = rec_real_.posix_memalign(out, align, size);
	rec_in_recorder_--;
	if (rc == 0)
		count(*out, size);
	return rc;
}

REC_PRELOAD_API void *aligned_alloc(size_t align, size_t size)
{
	if (booting())
		return rec_boot_alloc(size, align);
	rec_in_recorder_++;
	void *p = rec_real_.aligned_alloc(align, size);
	rec_in_recorder_--;
	count(p, size);
	return p;
}

REC_PRELOAD_API void *memalign(size_t align, size_t size)
{
	if (booting())
		return rec_boot_alloc(size, align);
	if (rec_real_.memalign == NULL)
		return aligned_alloc(align, size);
	rec_in_recorder_++;
	void *p = rec_real_.memalign(align, size);
	rec_in_recorder_--;
	count(p, size);
	return p;
}

REC_PRELOAD_API void *valloc(size_t size)
{
	if (booting())
		return rec_boot_alloc(size, 4096);
	if (rec_real_.valloc == NULL)
		return memalign((size_t)sysconf(_SC_PAGESIZE), size);
	rec_in_recorder_++;
	void *p = rec_real_.valloc(size);
	rec_in_recorder_--;
	count(p, size);
	return p;
}

REC_PRELOAD_API void *pvalloc(size_t size)
{
	if (booting())
		return rec_boot_alloc(size, 4096);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t rounded = (size + page - 1) & ~(page - 1);
	if (rec_real_.pvalloc == NULL)
		return memalign(page, rounded);
	rec_in_recorder_++;
	void *p = rec_real_.pvalloc(size);
	rec_in_recorder_--;
	count(p, rounded);
	return p;
}
