/* SPDX-License-Identifier: MIT */
/*
 * buf.c - the growable byte buffer and the growable arrays of
 * common_internal.h.
 */
#include <stdlib.h>

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
