/* SPDX-License-Identifier: MIT */
/*
 * buf.c - the growable byte buffer, the growable arrays and the arena of
 * common_internal.h (the arena was the reader's, in read/source.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"

#define REC_BUF_MIN_CAP 256u

void rec_buf_free(rec_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

bool rec_buf_reserve(rec_buf *b, size_t extra)
{
	size_t need, cap;
	uint8_t *p;

	if (b->cap - b->len >= extra)
		return true;
	if (extra > SIZE_MAX - b->len)
		return false;
	need = b->len + extra;
	cap = b->cap ? b->cap : REC_BUF_MIN_CAP;
	while (cap < need) {
		if (cap > SIZE_MAX / 2) {
			cap = need;
			break;
		}
		cap *= 2;
	}
	p = realloc(b->data, cap);
	if (!p)
		return false;
	b->data = p;
	b->cap = cap;
	return true;
}

bool rec_buf_lenbytes(rec_buf *b, const void *p, size_t n)
{
	if (n > SIZE_MAX - REC_VARINT_MAX)
		return false;
	if (b->cap - b->len < REC_VARINT_MAX + n && !rec_buf_reserve(b, REC_VARINT_MAX + n))
		return false;
	b->len += rec_varint_put(b->data + b->len, (uint64_t)n);
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return true;
}

bool rec_array_grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	if (need <= *cap)
		return true;
	size_t nc = *cap ? *cap : first;
	while (nc < need) {
		if (nc > SIZE_MAX / 2 / elem)
			return false;
		nc *= 2;
	}
	void *p = realloc(*arr, nc * elem);
	if (!p)
		return false;
	*arr = p;
	*cap = nc;
	return true;
}

/* ---- arena ----------------------------------------------------------------- */
struct rec_arena_blk {
	rec_arena_blk *next;
	size_t used, cap;
	max_align_t data[];
};

void *rec_arena_alloc(rec_arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	rec_arena_blk *b = a->head;
	if (!b || b->cap - b->used < n) {
		size_t cap = (size_t)64 * 1024;
		if (b && b->cap < (SIZE_MAX / 4) && cap < b->cap * 2)
			cap = b->cap * 2;
		if (cap < n)
			cap = n;
		if (cap > SIZE_MAX - sizeof(rec_arena_blk))
			return NULL;
		rec_arena_blk *nb = malloc(sizeof(rec_arena_blk) + cap);
		if (!nb)
			return NULL;
		nb->next = b;
		nb->used = 0;
		nb->cap = cap;
		a->head = nb;
		b = nb;
	}
	void *p = (unsigned char *)b->data + b->used;
	b->used += n;
	return p;
}

void rec_arena_reset(rec_arena *a)
{
	/* Keep the largest block (usually the newest), free the rest. */
	rec_arena_blk *keep = NULL;
	for (rec_arena_blk *b = a->head; b; b = b->next)
		if (!keep || b->cap > keep->cap)
			keep = b;
	rec_arena_blk *b = a->head;
	while (b) {
		rec_arena_blk *n = b->next;
		if (b != keep)
			free(b);
		b = n;
	}
	if (keep) {
		keep->next = NULL;
		keep->used = 0;
	}
	a->head = keep;
}

void rec_arena_free(rec_arena *a)
{
	rec_arena_blk *b = a->head;
	while (b) {
		rec_arena_blk *n = b->next;
		free(b);
		b = n;
	}
	a->head = NULL;
}

char *rec_arena_strndup(rec_arena *a, const char *s, size_t n)
{
	char *p = rec_arena_alloc(a, n + 1);
	if (!p)
		return NULL;
	if (n)
		memcpy(p, s, n);
	p[n] = 0;
	return p;
}
