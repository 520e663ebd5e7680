/* SPDX-License-Identifier: MIT */
/*
 * histogram.c - the log-linear latency histogram of rec/view.h (HDR-style).
 *
 * Values below REC_HISTOGRAM_SUB (128) have a bucket each (exact).  Above,
 * a value v with its highest set bit at position m >= 7 falls in one of 128
 * buckets of width 2^(m-7) that split [2^m, 2^(m+1)): a bucket's width is at
 * most 1/128 of its lower bound, and a percentile reports the bucket's
 * middle (clamped to the exact minimum and maximum), so it is within 1/256
 * (0.39 %) of a value in that bucket.  Buckets are held in rows of 128
 * counts, one row per power of two, allocated when a value first lands in
 * it: at most 58 rows (58 KiB) whatever the number of values, 1 KiB per
 * power of two actually used.
 */
#include <stdlib.h>
#include <string.h>

#include "rec/view.h"

#define SUB REC_HISTOGRAM_SUB
#define SUB_BITS 7
#define ROWS (64 - SUB_BITS + 1) /* row 0: 0..127 exact; row r >= 1: msb = r + 6 */

struct rec_histogram {
	uint64_t *rows[ROWS];
	uint64_t count, min, max;
	long double sum;
};

rec_status rec_histogram_open(rec_histogram **out)
{
	if (!out)
		return REC_ERR_INVALID_ARG;
	*out = calloc(1, sizeof **out);
	return *out ? REC_OK : REC_ERR_NOMEM;
}

void rec_histogram_close(rec_histogram *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < ROWS; i++)
		free(h->rows[i]);
	free(h);
}

static void locate(uint64_t v, unsigned *row, unsigned *col)
{
	if (v < SUB) {
		*row = 0;
		*col = (unsigned)v;
		return;
	}
	unsigned msb = 63u - (unsigned)__builtin_clzll(v);
	unsigned shift = msb - SUB_BITS;
	*row = shift + 1;
	*col = (unsigned)((v >> shift) - SUB);
}

/* The lowest value of a bucket and its width. */
static void bucket_range(unsigned row, unsigned col, uint64_t *lo, uint64_t *width)
{
	if (row == 0) {
		*lo = col;
		*width = 1;
		return;
	}
	unsigned shift = row - 1;
	*lo = ((uint64_t)SUB + col) << shift;
	*width = 1ull << shift;
}

static rec_status add_n(rec_histogram *h, unsigned row, unsigned col, uint64_t n)
{
	if (!h->rows[row]) {
		h->rows[row] = calloc(SUB, sizeof(uint64_t));
		if (!h->rows[row])
			return REC_ERR_NOMEM;
	}
	uint64_t *c = &h->rows[row][col];
	*c = (UINT64_MAX - *c < n) ? UINT64_MAX : *c + n;
	return REC_OK;
}

rec_status rec_histogram_add(rec_histogram *h, uint64_t v)
{
	if (!h)
		return REC_ERR_INVALID_ARG;
	unsigned row, col;
	locate(v, &row, &col);
	rec_status st = add_n(h, row, col, 1);
	if (st != REC_OK)
		return st;
	if (h->count == 0 || v < h->min)
		h->min = v;
	if (h->count == 0 || v > h->max)
		h->max = v;
	h->count++;
	h->sum += (long double)v;
	return REC_OK;
}

rec_status rec_histogram_merge(rec_histogram *into, const rec_histogram *from)
{
	if (!into || !from)
		return REC_ERR_INVALID_ARG;
	if (from->count == 0)
		return REC_OK;
	for (unsigned r = 0; r < ROWS; r++) {
		if (!from->rows[r])
			continue;
		for (unsigned c = 0; c < SUB; c++)
			if (from->rows[r][c]) {
				rec_status st = add_n(into, r, c, from->rows[r][c]);
				if (st != REC_OK)
					return st;
			}
	}
	if (into->count == 0 || from->min < into->min)
		into->min = from->min;
	if (into->count == 0 || from->max > into->max)
		into->max = from->max;
	into->count += from->count;
	into->sum += from->sum;
	return REC_OK;
}

uint64_t rec_histogram_count(const rec_histogram *h) { return h ? h->count : 0; }
uint64_t rec_histogram_min(const rec_histogram *h) { return h && h->count ? h->min : 0; }
uint64_t rec_histogram_max(const rec_histogram *h) { return h ? h->max : 0; }

double rec_histogram_mean(const rec_histogram *h)
{
	return h && h->count ? (double)(h->sum / (long double)h->count) : 0.0;
}

uint64_t rec_histogram_percentile(const rec_histogram *h, double pct)
{
	if (!h || h->count == 0)
		return 0;
	if (!(pct > 0.0))
		return h->min;
	if (pct >= 100.0)
		return h->max;
	/* The value of rank ceil(pct/100 * count) (1-based), nearest-rank. */
	long double want = (long double)pct / 100.0L * (long double)h->count;
	uint64_t rank = (uint64_t)want;
	if ((long double)rank < want)
		rank++;
	if (rank <= 1)
		return h->min; /* the extreme ranks are known exactly */
	if (rank >= h->count)
		return h->max;
	uint64_t seen = 0;
	for (unsigned r = 0; r < ROWS; r++) {
		if (!h->rows[r])
			continue;
		for (unsigned c = 0; c < SUB; c++) {
			uint64_t n = h->rows[r][c];
			if (!n)
				continue;
			seen = (UINT64_MAX - seen < n) ? UINT64_MAX : seen + n;
			if (seen >= rank) {
				uint64_t lo, width;
				bucket_range(r, c, &lo, &width);
				uint64_t mid = lo + (width - 1) / 2;
				if (mid < h->min)
					mid = h->min;
				if (mid > h->max)
					mid = h->max;
				return mid;
			}
		}
	}
	return h->max;
}

uint64_t rec_histogram_count_below(const rec_histogram *h, uint64_t v)
{
	if (!h || h->count == 0 || v == 0)
		return 0;
	if (v > h->max)
		return h->count;
	unsigned vrow, vcol;
	locate(v, &vrow, &vcol);
	uint64_t lo, width;
	bucket_range(vrow, vcol, &lo, &width);
	if (lo < v) /* v inside its bucket: that bucket counts too */
		vcol++;
	uint64_t n = 0;
	for (unsigned r = 0; r <= vrow && r < ROWS; r++) {
		if (!h->rows[r])
			continue;
		unsigned end = r == vrow ? vcol : SUB;
		for (unsigned c = 0; c < end; c++)
			n = (UINT64_MAX - n < h->rows[r][c]) ? UINT64_MAX : n + h->rows[r][c];
	}
	return n;
}

size_t rec_histogram_memory(const rec_histogram *h)
{
	if (!h)
		return 0;
	size_t n = sizeof *h;
	for (unsigned r = 0; r < ROWS; r++)
		if (h->rows[r])
			n += SUB * sizeof(uint64_t);
	return n;
}
