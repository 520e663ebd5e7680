/* SPDX-License-Identifier: MIT */
/*
 * bootstrap_alloc.c - memory for the allocations made while the real malloc
 * is not known yet (dlsym's own, while real.c resolves it): a static arena
 * handed out by an atomic bump pointer, each block after a 16-byte header
 * that keeps its size (for realloc).  free() recognises these blocks by
 * address and leaves them; they are few and small (dlsym's error buffer).
 */
#include "preload/preload_internal.h"

#include <stdint.h>

#define BOOT_SIZE REC_BOOT_SIZE
#define HDR ((size_t)16)

_Alignas(64) unsigned char rec_boot_arena_[BOOT_SIZE];
static size_t used;

void *rec_boot_alloc(size_t size, size_t align)
{
	if (align < HDR)
		align = HDR;
	if (size > BOOT_SIZE || align > 4096)
		return NULL;
	size_t cur = __atomic_load_n(&used, __ATOMIC_RELAXED), start, end;
	do {
		start = (cur + HDR + align - 1) & ~(align - 1);
		end = start + ((size + HDR - 1) & ~(size_t)(HDR - 1));
		if (end > BOOT_SIZE)
			return NULL;
	} while (!__atomic_compare_exchange_n(&used, &cur, end, 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	*(size_t *)(void *)&rec_boot_arena_[start - HDR] = size;
	return &rec_boot_arena_[start]; /* zero: the arena is never reused */
}

int rec_boot_owns(const void *p)
{
	return rec_boot_has(p);
}

size_t rec_boot_size(const void *p)
{
	return *(const size_t *)(const void *)((const unsigned char *)p - HDR);
}
