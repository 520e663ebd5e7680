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
 *
 * Fast path (bench/preload.sh measures it): one load says the recorder
 * records (and so that the real functions are known), the thread's guard
 * is read and set around the real call, and the sampling countdown is
 * counted inside it (rec_alloc_account_: a subtraction and a compare unless
 * the allocation is sampled).  free looks one byte up (rec_alloc_maybe_live_)
 * and calls the real free unless the block may be a live sampled one.
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

/* Allocate through the real function inside the recorder's guard; count
 * the block against the thread's sampling countdown if the thread was not
 * inside the recorder already.  Used once the recorder records. */
#define ALLOC_COUNTED(call, bytes)                      \
	do {                                            \
		unsigned in_ = rec_in_recorder_;        \
		rec_in_recorder_ = in_ + 1;             \
		void *p_ = (call);                      \
		if (in_ == 0)                           \
			rec_alloc_account_(p_, (bytes)); \
		rec_in_recorder_ = in_;                 \
		return p_;                              \
	} while (0)

/* Not recording (yet, or any more): the real function, or the bootstrap
 * arena while it is being looked up. */
static __attribute__((noinline)) void *malloc_off(size_t size)
{
	if (booting())
		return rec_boot_alloc(size, 16);
	return rec_real_.malloc(size);
}

REC_PRELOAD_API void *malloc(size_t size)
{
	if (!rec_preload_recording())
		return malloc_off(size);
	ALLOC_COUNTED(rec_real_.malloc(size), size);
}

static __attribute__((noinline)) void *calloc_off(size_t n, size_t size)
{
	if (booting()) {
		if (size != 0 && n > SIZE_MAX / size)
			return NULL;
		return rec_boot_alloc(n * size, 16); /* the arena is zero */
	}
	return rec_real_.calloc(n, size);
}

REC_PRELOAD_API void *calloc(size_t n, size_t size)
{
	if (!rec_preload_recording())
		return calloc_off(n, size);
	/* calloc fails (NULL: nothing counted) if n * size overflows */
	ALLOC_COUNTED(rec_real_.calloc(n, size), n * size);
}

static void real_free(void *p)
{
	rec_real_.free(p);
}

REC_PRELOAD_API void free(void *p)
{
	if (p == NULL || rec_boot_has(p))
		return;
	if (__builtin_expect(rec_preload_recording() && rec_in_recorder_ == 0, 1)) {
		rec_in_recorder_ = 1;
		if (__builtin_expect(!rec_alloc_maybe_live_(p), 1))
			rec_real_.free(p);
		else
			rec_alloc_free_with_(real_free, p);
		rec_in_recorder_ = 0;
		return;
	}
	rec_preload_ensure();
	rec_real_.free(p);
}

static void *real_realloc(void *p, size_t size)
{
	return rec_real_.realloc(p, size);
}

REC_PRELOAD_API void *realloc(void *p, size_t size)
{
	if (booting() || rec_boot_has(p)) {
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
	unsigned in = rec_in_recorder_;
	rec_in_recorder_ = in + 1;
	int rc = rec_real_.posix_memalign(out, align, size);
	if (rc == 0 && in == 0 && rec_preload_recording())
		rec_alloc_account_(*out, size);
	rec_in_recorder_ = in;
	return rc;
}

REC_PRELOAD_API void *aligned_alloc(size_t align, size_t size)
{
	if (booting())
		return rec_boot_alloc(size, align);
	if (!rec_preload_recording())
		return rec_real_.aligned_alloc(align, size);
	ALLOC_COUNTED(rec_real_.aligned_alloc(align, size), size);
}

REC_PRELOAD_API void *memalign(size_t align, size_t size)
{
	if (booting())
		return rec_boot_alloc(size, align);
	if (rec_real_.memalign == NULL)
		return aligned_alloc(align, size);
	if (!rec_preload_recording())
		return rec_real_.memalign(align, size);
	ALLOC_COUNTED(rec_real_.memalign(align, size), size);
}

REC_PRELOAD_API void *valloc(size_t size)
{
	if (booting())
		return rec_boot_alloc(size, 4096);
	if (rec_real_.valloc == NULL)
		return memalign((size_t)sysconf(_SC_PAGESIZE), size);
	if (!rec_preload_recording())
		return rec_real_.valloc(size);
	ALLOC_COUNTED(rec_real_.valloc(size), size);
}

REC_PRELOAD_API void *pvalloc(size_t size)
{
	if (booting())
		return rec_boot_alloc(size, 4096);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t rounded = (size + page - 1) & ~(page - 1);
	if (rec_real_.pvalloc == NULL)
		return memalign(page, rounded);
	if (!rec_preload_recording())
		return rec_real_.pvalloc(size);
	ALLOC_COUNTED(rec_real_.pvalloc(size), rounded);
}
