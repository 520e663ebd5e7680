/* SPDX-License-Identifier: MIT */
/*
 * parquet.c - the Parquet file writer of parquet.h, from the specification
 * (apache/parquet-format: README.md for the layout, Encodings.md for PLAIN,
 * RLE_DICTIONARY and the RLE/bit-packed hybrid, parquet.thrift for the page
 * headers and the footer).  A file is "PAR1", row groups (per column: an
 * optional dictionary page and one data page v1, each zstd-compressed),
 * the FileMetaData footer, its length and "PAR1".
 */
#include "parquet.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "thrift_compact.h"

/* Appending to a buffer (the library's rec_buf): an allocation failure
 * sets *failed. */
static void b_add(bool *failed, rec_buf *b, const void *p, size_t n)
{
	if (!rec_buf_append(b, p, n))
		*failed = true;
}

static void b_byte(bool *failed, rec_buf *b, uint8_t c)
{
	b_add(failed, b, &c, 1);
}

static void b_le32(bool *failed, rec_buf *b, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	b_add(failed, b, x, 4);
}

static void b_le64(bool *failed, rec_buf *b, uint64_t v)
{
	b_le32(failed, b, (uint32_t)v);
	b_le32(failed, b, (uint32_t)(v >> 32));
}

static bool b_reserve(bool *failed, rec_buf *b, size_t n)
{
	if (!rec_buf_reserve(b, n))
		*failed = true;
	return !*failed;
}

/* A row group is written once its values hold this many bytes, whatever
 * the row count: memory stays bounded with long strings too. */
#define PQ_GROUP_BYTES (32u << 20)
/* Byte-array statistics are kept when no value is longer (else omitted). */
#define PQ_STAT_MAX 256
/* Dictionaries larger than this are not tried. */
#define PQ_DICT_MAX 65536u
#define PQ_ZSTD_LEVEL 3

enum { PQ_ENC_PLAIN = 0, PQ_ENC_RLE = 3, PQ_ENC_RLE_DICTIONARY = 8 };
enum { PQ_PAGE_DATA = 0, PQ_PAGE_DICTIONARY = 2 };
enum { PQ_CODEC_ZSTD = 6 };

/* A column chunk's facts for the footer. */
typedef struct pq_chunk_meta {
	bool dict;
	int64_t data_offset, dict_offset; /* dict_offset: -1 without */
	int64_t uncompressed, compressed; /* with page headers */
	int64_t nulls;
	bool has_minmax;
	uint8_t min[8], max[8]; /* fixed-width types */
	rec_buf smin, smax;     /* byte arrays */
	size_t stat_len;        /* fixed-width: bytes of min and max */
} pq_chunk_meta;

typedef struct pq_group_meta {
	int64_t rows, offset, uncompressed, compressed;
	pq_chunk_meta *chunks;
} pq_group_meta;

typedef struct pq_col {
	rec_pq_column c; /* name and unit owned */
	rec_buf plain;   /* the values PLAIN-encoded (BOOLEAN: a byte each) */
	rec_buf defs;    /* a definition level (0 null, 1 value) per row */
	bool set;        /* given in the current row */
	int64_t nulls, nvals;
	/* statistics of the row group */
	bool has_minmax, stat_ok;
	int64_t imin, imax;
	double dmin, dmax;
	rec_buf smin, smax;
} pq_col;

struct rec_pq_writer {
	FILE *out;
	bool failed;
	int err;
	int64_t pos;
	size_t ncols, group_rows;
	pq_col *cols;
	rec_pq_kv *kv;
	size_t nkv;
	int64_t rows_in_group;
	size_t buffered; /* bytes the current row group holds */
	uint64_t rows;
	pq_group_meta *groups;
	size_t ngroups;
	rec_buf page, body, scratch;
};

/* ---- output ------------------------------------------------------------------------ */
static void put(rec_pq_writer *w, const void *p, size_t n)
{
	if (w->failed || n == 0)
		return;
	if (fwrite(p, 1, n, w->out) != n) {
		w->failed = true;
		w->err = errno ? errno : EIO;
		return;
	}
	w->pos += (int64_t)n;
}

static char *dup_str(rec_pq_writer *w, const char *s)
{
	if (!s)
		return NULL;
	char *p = strdup(s);
	if (!p)
		w->failed = true;
	return p;
}

rec_pq_writer *rec_pq_writer_create(FILE *out, const rec_pq_column *cols, size_t ncols,
				    const rec_pq_kv *kv, size_t nkv, size_t group_rows)
{
	rec_pq_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->out = out;
	w->group_rows = group_rows ? group_rows : 1;
	w->ncols = ncols;
	w->cols = calloc(ncols ? ncols : 1, sizeof(*w->cols));
	w->kv = calloc(nkv ? nkv : 1, sizeof(*w->kv));
	if (!w->cols || !w->kv) {
		rec_pq_writer_free(w);
		return NULL;
	}
	for (size_t i = 0; i < ncols; i++) {
		w->cols[i].c = cols[i];
		w->cols[i].c.name = dup_str(w, cols[i].name ? cols[i].name : "");
		w->cols[i].c.unit = dup_str(w, cols[i].unit && *cols[i].unit ? cols[i].unit : NULL);
	}
	w->nkv = nkv;
	for (size_t i = 0; i < nkv; i++) {
		w->kv[i].key = dup_str(w, kv[i].key);
		w->kv[i].value = dup_str(w, kv[i].value ? kv[i].value : "");
	}
	if (w->failed) {
		rec_pq_writer_free(w);
		return NULL;
	}
	put(w, "PAR1", 4);
	return w;
}

uint64_t rec_pq_rows(const rec_pq_writer *w)
{
	return w->rows;
}

/* ---- values and statistics -------------------------------------------------------- */
static bool is_unsigned(const pq_col *c)
{
	return c->c.logical == REC_PQ_INT && !c->c.is_signed;
}

/* a < b in the column's sort order (integers as given: bits of the type) */
static bool int_less(const pq_col *c, int64_t a, int64_t b)
{
	if (c->c.physical == REC_PQ_INT32) {
		if (is_unsigned(c))
			return (uint32_t)a < (uint32_t)b;
		return (int32_t)a < (int32_t)b;
	}
	if (is_unsigned(c))
		return (uint64_t)a < (uint64_t)b;
	return a < b;
}

static pq_col *value_of(rec_pq_writer *w, size_t col)
{
	if (col >= w->ncols)
		return NULL;
	pq_col *c = &w->cols[col];
	if (c->set) {
		/* a second value for the column in the row: the later one wins
		 * is not supported, the row would be corrupt */
		w->failed = true;
		return NULL;
	}
	c->set = true;
	return c;
}

void rec_pq_null(rec_pq_writer *w, size_t col)
{
	pq_col *c = value_of(w, col);
	if (!c)
		return;
	b_byte(&w->failed, &c->defs, 0);
	c->nulls++;
}

static void present(rec_pq_writer *w, pq_col *c)
{
	b_byte(&w->failed, &c->defs, 1);
	c->nvals++;
}

/* Whether v fits an INT32 column of the logical width (INT64 columns take
 * every value as its bits). */
static bool fits(const pq_col *c, int64_t v)
{
	if (c->c.physical != REC_PQ_INT32)
		return true;
	unsigned bits = c->c.logical == REC_PQ_INT && c->c.bits && c->c.bits < 32 ? c->c.bits : 32;
	if (is_unsigned(c))
		return v >= 0 && v <= (int64_t)((1ull << bits) - 1);
	return v >= -(int64_t)(1ull << (bits - 1)) && v <= (int64_t)((1ull << (bits - 1)) - 1);
}

void rec_pq_int(rec_pq_writer *w, size_t col, int64_t v)
{
	pq_col *c = value_of(w, col);
	if (!c)
		return;
	if (c->c.physical == REC_PQ_FLOAT || c->c.physical == REC_PQ_DOUBLE ||
	    c->c.physical == REC_PQ_BYTE_ARRAY) {
		/* a value of another type than the column's (a field declared
		 * otherwise in a later chunk): as a double, or as decimal text */
		c->set = false;
		if (c->c.physical == REC_PQ_BYTE_ARRAY) {
			char num[32];
			int n = snprintf(num, sizeof num, "%lld", (long long)v);
			rec_pq_bytes(w, col, num, (size_t)n);
		} else {
			rec_pq_double(w, col, (double)v);
		}
		return;
	}
	if (!fits(c, v)) {
		c->set = false;
		rec_pq_null(w, col);
		return;
	}
	switch (c->c.physical) {
	case REC_PQ_BOOLEAN:
		v = v != 0;
		b_byte(&w->failed, &c->plain, (uint8_t)v);
		break;
	case REC_PQ_INT32:
		b_le32(&w->failed, &c->plain, (uint32_t)v);
		break;
	default:
		b_le64(&w->failed, &c->plain, (uint64_t)v);
		break;
	}
	present(w, c);
	if (!c->has_minmax || int_less(c, v, c->imin))
		c->imin = v;
	if (!c->has_minmax || int_less(c, c->imax, v))
		c->imax = v;
	c->has_minmax = true;
}

void rec_pq_double(rec_pq_writer *w, size_t col, double v)
{
	pq_col *c = value_of(w, col);
	if (!c)
		return;
	if (c->c.physical == REC_PQ_FLOAT) {
		float f = (float)v;
		uint32_t u;
		memcpy(&u, &f, 4);
		b_le32(&w->failed, &c->plain, u);
		v = f;
	} else if (c->c.physical == REC_PQ_DOUBLE) {
		uint64_t u;
		memcpy(&u, &v, 8);
		b_le64(&w->failed, &c->plain, u);
	} else {
		/* another type than the column's: an integral double in range as
		 * the integer, text as its shortest %g, anything else NULL */
		c->set = false;
		if (c->c.physical == REC_PQ_BYTE_ARRAY) {
			char num[40];
			int n = snprintf(num, sizeof num, "%.17g", v);
			rec_pq_bytes(w, col, num, (size_t)n);
		} else if (v == v && v >= -9.2e18 && v <= 9.2e18 && v == (double)(int64_t)v) {
			rec_pq_int(w, col, (int64_t)v);
		} else {
			rec_pq_null(w, col);
		}
		return;
	}
	present(w, c);
	if (v != v) /* NaN: in no order, not in min/max */
		return;
	if (!c->has_minmax || v < c->dmin)
		c->dmin = v;
	if (!c->has_minmax || v > c->dmax)
		c->dmax = v;
	c->has_minmax = true;
}

/* memcmp order, shorter first on a tie */
static int bytes_cmp(const void *a, size_t na, const void *b, size_t nb)
{
	size_t n = na < nb ? na : nb;
	int r = n ? memcmp(a, b, n) : 0;
	return r ? r : (na > nb) - (na < nb);
}

static void set_buf(bool *failed, rec_buf *b, const void *p, size_t n)
{
	b->len = 0;
	b_add(failed, b, p, n);
}

void rec_pq_bytes(rec_pq_writer *w, size_t col, const void *p, size_t n)
{
	pq_col *c = value_of(w, col);
	if (!c)
		return;
	if (c->c.physical != REC_PQ_BYTE_ARRAY || n > UINT32_MAX) {
		c->set = false;
		rec_pq_null(w, col);
		return;
	}
	b_le32(&w->failed, &c->plain, (uint32_t)n);
	b_add(&w->failed, &c->plain, p, n);
	present(w, c);
	if (c->nvals == 1)
		c->stat_ok = true;
	if (!c->stat_ok)
		return;
	if (n > PQ_STAT_MAX) {
		c->stat_ok = false;
		return;
	}
	if (!c->has_minmax || bytes_cmp(p, n, c->smin.data, c->smin.len) < 0)
		set_buf(&w->failed, &c->smin, p, n);
	if (!c->has_minmax || bytes_cmp(p, n, c->smax.data, c->smax.len) > 0)
		set_buf(&w->failed, &c->smax, p, n);
	c->has_minmax = true;
}

/* ---- the RLE/bit-packed hybrid ------------------------------------------------------ */
static void bitpack(bool *failed, rec_buf *b, const uint32_t *v, size_t n, unsigned width)
{
	size_t groups = (n + 7) / 8;
	if (!rec_buf_varint(b, (uint64_t)groups << 1 | 1))
		*failed = true;
	size_t bytes = groups * width;
	if (!b_reserve(failed, b, bytes))
		return;
	uint8_t *o = b->data + b->len;
	memset(o, 0, bytes);
	size_t bit = 0;
	for (size_t i = 0; i < n; i++)
		for (unsigned k = 0; k < width; k++, bit++)
			if (v[i] >> k & 1)
				o[bit >> 3] |= (uint8_t)(1u << (bit & 7));
	b->len += bytes;
}

static void rle_run(bool *failed, rec_buf *b, uint32_t value, size_t count, unsigned width)
{
	if (!rec_buf_varint(b, (uint64_t)count << 1))
		*failed = true;
	for (unsigned k = 0; k < (width + 7) / 8; k++)
		b_byte(failed, b, (uint8_t)(value >> (8 * k)));
}

/* Runs of 8 or more equal values (starting on a group boundary of the
 * pending bit-packed values) are RLE runs; the rest is bit-packed in
 * groups of 8, the last group padded with zeros. */
bool rec_pq_hybrid(rec_buf *b, const uint32_t *v, size_t n, unsigned width)
{
	bool failed = false;
	size_t i = 0, ps = 0, np = 0;
	while (i < n) {
		size_t r = 1;
		while (i + r < n && v[i + r] == v[i])
			r++;
		if (np % 8 == 0 && r >= 8) {
			if (np)
				bitpack(&failed, b, v + ps, np, width);
			rle_run(&failed, b, v[i], r, width);
			i += r;
			ps = i;
			np = 0;
		} else if (np % 8 != 0) {
			size_t k = 8 - np % 8;
			k = k < r ? k : r;
			np += k;
			i += k;
		} else {
			np += r;
			i += r;
		}
	}
	if (np)
		bitpack(&failed, b, v + ps, np, width);
	return !failed;
}

/* ---- pages ------------------------------------------------------------------------- */
static unsigned bits_for(uint32_t max)
{
	unsigned w = 1;
	while (w < 32 && (max >> w) != 0)
		w++;
	return w;
}

/* One page: its header, then body compressed; sizes added to m. */
static void write_page(rec_pq_writer *w, int type, const rec_buf *body, int64_t nvalues, int enc,
		       pq_chunk_meta *m)
{
	size_t bound = ZSTD_compressBound(body->len);
	w->scratch.len = 0;
	if (!b_reserve(&w->failed, &w->scratch, bound))
		return;
	size_t z = ZSTD_compress(w->scratch.data, bound, body->data ? body->data : (const uint8_t *)"", body->len,
				 PQ_ZSTD_LEVEL);
	if (ZSTD_isError(z)) {
		w->failed = true;
		w->err = EINVAL;
		return;
	}
	w->page.len = 0;
	rec_tc tc;
	rec_tc_init(&tc, &w->page);
	rec_tc_i32(&tc, 1, type);
	rec_tc_i32(&tc, 2, (int32_t)body->len);
	rec_tc_i32(&tc, 3, (int32_t)z);
	if (type == PQ_PAGE_DATA) {
		rec_tc_begin(&tc, 5); /* DataPageHeader */
		rec_tc_i32(&tc, 1, (int32_t)nvalues);
		rec_tc_i32(&tc, 2, enc);
		rec_tc_i32(&tc, 3, PQ_ENC_RLE); /* definition levels */
		rec_tc_i32(&tc, 4, PQ_ENC_RLE); /* repetition levels (none) */
		rec_tc_end(&tc);
	} else {
		rec_tc_begin(&tc, 7); /* DictionaryPageHeader */
		rec_tc_i32(&tc, 1, (int32_t)nvalues);
		rec_tc_i32(&tc, 2, PQ_ENC_PLAIN);
		rec_tc_end(&tc);
	}
	rec_tc_end(&tc);
	if (tc.failed || body->len > INT32_MAX) {
		w->failed = true;
		return;
	}
	put(w, w->page.data, w->page.len);
	put(w, w->scratch.data, z);
	m->uncompressed += (int64_t)(w->page.len + body->len);
	m->compressed += (int64_t)(w->page.len + z);
}

/* The byte arrays of c's PLAIN buffer: offsets of their length prefixes. */
static size_t *byte_array_offsets(const pq_col *c)
{
	size_t *off = calloc((size_t)(c->nvals ? c->nvals : 1), sizeof(*off));
	if (!off)
		return NULL;
	size_t pos = 0;
	for (int64_t i = 0; i < c->nvals; i++) {
		off[i] = pos;
		uint32_t n;
		memcpy(&n, c->plain.data + pos, 4); /* little-endian hosts only, as the format */
		pos += 4 + n;
	}
	return off;
}

static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h ^ (h >> 31);
}

/* The dictionary encoding of a byte-array column, when it is smaller than
 * PLAIN: dict gets the PLAIN dictionary, idx one index per value.  Returns
 * the number of dictionary entries, 0 when PLAIN is better (or no memory). */
static size_t dictionary(const pq_col *c, rec_buf *dict, uint32_t **idx_out)
{
	size_t n = (size_t)c->nvals;
	if (n < 2)
		return 0;
	size_t *off = byte_array_offsets(c);
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	uint32_t *slots = calloc(cap, sizeof(*slots)); /* entry + 1, 0 free */
	size_t *entry = malloc(n * sizeof(*entry));    /* offset of each entry's value */
	uint32_t *idx = malloc(n * sizeof(*idx));
	size_t nd = 0, dict_bytes = 0;
	bool ok = off && slots && entry && idx;
	for (size_t i = 0; ok && i < n; i++) {
		const uint8_t *p = c->plain.data + off[i];
		uint32_t len;
		memcpy(&len, p, 4);
		size_t s = (size_t)hash_bytes(p + 4, len) & (cap - 1);
		for (;; s = (s + 1) & (cap - 1)) {
			if (!slots[s]) {
				if (nd == PQ_DICT_MAX) {
					ok = false;
					break;
				}
				entry[nd] = off[i];
				slots[s] = (uint32_t)++nd;
				dict_bytes += 4 + len;
				idx[i] = (uint32_t)(nd - 1);
				break;
			}
			const uint8_t *q = c->plain.data + entry[slots[s] - 1];
			if (memcmp(p, q, 4 + (size_t)len) == 0) {
				idx[i] = slots[s] - 1;
				break;
			}
		}
	}
	size_t est = ok ? dict_bytes + 1 + (n * bits_for((uint32_t)(nd - 1)) + 7) / 8 + 16 : 0;
	if (ok && est < c->plain.len) {
		bool failed = false;
		dict->len = 0;
		for (size_t k = 0; k < nd; k++) {
			uint32_t len;
			memcpy(&len, c->plain.data + entry[k], 4);
			b_add(&failed, dict, c->plain.data + entry[k], 4 + (size_t)len);
		}
		*idx_out = idx;
		idx = NULL;
		if (failed) {
			free(*idx_out);
			*idx_out = NULL;
			nd = 0;
		}
	} else {
		nd = 0;
	}
	free(off);
	free(slots);
	free(entry);
	free(idx);
	return nd;
}

static void stat_bytes(const pq_col *c, pq_chunk_meta *m)
{
	m->has_minmax = c->has_minmax && (c->c.physical != REC_PQ_BYTE_ARRAY || c->stat_ok);
	if (!m->has_minmax)
		return;
	switch (c->c.physical) {
	case REC_PQ_BOOLEAN:
	case REC_PQ_INT32:
	case REC_PQ_INT64:
		/* PLAIN: little-endian, in the type's width (a boolean: one byte) */
		m->stat_len = c->c.physical == REC_PQ_BOOLEAN ? 1 : c->c.physical == REC_PQ_INT32 ? 4 : 8;
		for (size_t k = 0; k < m->stat_len; k++) {
			m->min[k] = (uint8_t)((uint64_t)c->imin >> (8 * k));
			m->max[k] = (uint8_t)((uint64_t)c->imax >> (8 * k));
		}
		break;
	case REC_PQ_FLOAT: {
		/* a zero bound is -0.0 as the minimum, +0.0 as the maximum */
		float lo = c->dmin == 0 ? -0.0f : (float)c->dmin, hi = c->dmax == 0 ? 0.0f : (float)c->dmax;
		m->stat_len = 4;
		memcpy(m->min, &lo, 4);
		memcpy(m->max, &hi, 4);
		break;
	}
	case REC_PQ_DOUBLE: {
		double lo = c->dmin == 0 ? -0.0 : c->dmin, hi = c->dmax == 0 ? 0.0 : c->dmax;
		m->stat_len = 8;
		memcpy(m->min, &lo, 8);
		memcpy(m->max, &hi, 8);
		break;
	}
	case REC_PQ_BYTE_ARRAY:
		if (!rec_buf_append(&m->smin, c->smin.data, c->smin.len) ||
		    !rec_buf_append(&m->smax, c->smax.data, c->smax.len))
			m->has_minmax = false;
		break;
	}
}

/* Column c of the row group: its pages and footer facts. */
static void write_chunk(rec_pq_writer *w, pq_col *c, pq_chunk_meta *m, int64_t rows)
{
	m->dict_offset = -1;
	m->nulls = c->nulls;
	stat_bytes(c, m);
	rec_buf *body = &w->body;
	body->len = 0;
	/* definition levels: a 4-byte length, then the hybrid (bit width 1) */
	uint32_t *lv = calloc((size_t)(rows ? rows : 1), sizeof(*lv));
	if (!lv) {
		w->failed = true;
		return;
	}
	for (int64_t i = 0; i < rows; i++)
		lv[i] = c->defs.data[i];
	b_le32(&w->failed, body, 0);
	size_t at = body->len;
	if (!rec_pq_hybrid(body, lv, (size_t)rows, 1))
		w->failed = true;
	free(lv);
	if (w->failed)
		return;
	uint32_t dl = (uint32_t)(body->len - at);
	memcpy(body->data, &dl, 4);

	int enc = PQ_ENC_PLAIN;
	uint32_t *idx = NULL;
	rec_buf dict = { 0 };
	size_t nd = c->c.physical == REC_PQ_BYTE_ARRAY ? dictionary(c, &dict, &idx) : 0;
	if (nd > 0) {
		m->dict = true;
		m->dict_offset = w->pos;
		write_page(w, PQ_PAGE_DICTIONARY, &dict, (int64_t)nd, PQ_ENC_PLAIN, m);
		unsigned bw = bits_for((uint32_t)(nd - 1));
		b_byte(&w->failed, body, (uint8_t)bw);
		if (!rec_pq_hybrid(body, idx, (size_t)c->nvals, bw))
			w->failed = true;
		enc = PQ_ENC_RLE_DICTIONARY;
	} else if (c->c.physical == REC_PQ_BOOLEAN) {
		size_t nb = ((size_t)c->nvals + 7) / 8;
		if (b_reserve(&w->failed, body, nb)) {
			uint8_t *o = body->data + body->len;
			memset(o, 0, nb);
			for (int64_t i = 0; i < c->nvals; i++)
				if (c->plain.data[i])
					o[i >> 3] |= (uint8_t)(1u << (i & 7));
			body->len += nb;
		}
	} else {
		b_add(&w->failed, body, c->plain.data, c->plain.len);
	}
	free(idx);
	rec_buf_free(&dict);
	if (w->failed)
		return;
	m->data_offset = w->pos;
	write_page(w, PQ_PAGE_DATA, body, rows, enc, m);
}

static bool flush_group(rec_pq_writer *w)
{
	if (w->failed || w->rows_in_group == 0)
		return !w->failed;
	pq_group_meta *g = realloc(w->groups, (w->ngroups + 1) * sizeof(*g));
	if (!g) {
		w->failed = true;
		return false;
	}
	w->groups = g;
	g = &w->groups[w->ngroups++];
	memset(g, 0, sizeof(*g));
	g->rows = w->rows_in_group;
	g->offset = w->pos;
	g->chunks = calloc(w->ncols ? w->ncols : 1, sizeof(*g->chunks));
	if (!g->chunks) {
		w->failed = true;
		return false;
	}
	for (size_t i = 0; i < w->ncols && !w->failed; i++) {
		pq_col *c = &w->cols[i];
		write_chunk(w, c, &g->chunks[i], g->rows);
		g->uncompressed += g->chunks[i].uncompressed;
		g->compressed += g->chunks[i].compressed;
		c->plain.len = c->defs.len = 0;
		c->nulls = c->nvals = 0;
		c->has_minmax = c->stat_ok = false;
	}
	w->rows_in_group = 0;
	return !w->failed;
}

bool rec_pq_end_row(rec_pq_writer *w)
{
	size_t bytes = 0;
	for (size_t i = 0; i < w->ncols; i++) {
		pq_col *c = &w->cols[i];
		if (!c->set)
			rec_pq_null(w, i);
		c->set = false;
		bytes += c->plain.len;
	}
	if (w->failed)
		return false;
	w->rows++;
	w->rows_in_group++;
	w->buffered = bytes + (size_t)w->rows_in_group; /* values and definition levels */
	if ((size_t)w->rows_in_group >= w->group_rows || bytes >= PQ_GROUP_BYTES)
		return flush_group(w);
	return true;
}

size_t rec_pq_buffered(const rec_pq_writer *w)
{
	return w->rows_in_group ? w->buffered : 0;
}

bool rec_pq_flush(rec_pq_writer *w)
{
	return flush_group(w);
}

/* ---- the footer -------------------------------------------------------------------- */
static int converted_type(const rec_pq_column *c)
{
	if (c->logical == REC_PQ_STRING)
		return 0; /* UTF8 */
	if (c->logical != REC_PQ_INT)
		return -1;
	int k = c->bits == 8 ? 0 : c->bits == 16 ? 1 : c->bits == 32 ? 2 : 3;
	return (c->is_signed ? 15 : 11) + k; /* INT_8.. or UINT_8.. */
}

static void schema_element(rec_tc *tc, const rec_pq_column *c)
{
	rec_tc_begin(tc, 0);
	rec_tc_i32(tc, 1, c->physical);
	rec_tc_i32(tc, 3, 1); /* OPTIONAL */
	rec_tc_string(tc, 4, c->name);
	int ct = converted_type(c);
	if (ct >= 0)
		rec_tc_i32(tc, 6, ct);
	if (c->logical != REC_PQ_NONE) {
		rec_tc_begin(tc, 10); /* LogicalType */
		switch (c->logical) {
		case REC_PQ_STRING:
			rec_tc_begin(tc, 1);
			rec_tc_end(tc);
			break;
		case REC_PQ_TIMESTAMP_NS:
			rec_tc_begin(tc, 8);
			rec_tc_bool(tc, 1, true); /* isAdjustedToUTC */
			rec_tc_begin(tc, 2);      /* TimeUnit */
			rec_tc_begin(tc, 3);      /* NANOS */
			rec_tc_end(tc);
			rec_tc_end(tc);
			rec_tc_end(tc);
			break;
		case REC_PQ_INT:
			rec_tc_begin(tc, 10);
			rec_tc_i8(tc, 1, (int8_t)c->bits);
			rec_tc_bool(tc, 2, c->is_signed);
			rec_tc_end(tc);
			break;
		case REC_PQ_NONE:
			break;
		}
		rec_tc_end(tc);
	}
	rec_tc_end(tc);
}

static void column_chunk(rec_tc *tc, const pq_col *c, const pq_chunk_meta *m, int64_t rows)
{
	rec_tc_begin(tc, 0);
	rec_tc_i64(tc, 2, m->dict ? m->dict_offset : m->data_offset); /* file_offset */
	rec_tc_begin(tc, 3); /* ColumnMetaData */
	rec_tc_i32(tc, 1, c->c.physical);
	rec_tc_list(tc, 2, REC_TC_I32, m->dict ? 3 : 2);
	rec_tc_elem_i32(tc, PQ_ENC_PLAIN);
	rec_tc_elem_i32(tc, PQ_ENC_RLE);
	if (m->dict)
		rec_tc_elem_i32(tc, PQ_ENC_RLE_DICTIONARY);
	rec_tc_list(tc, 3, REC_TC_BINARY, 1);
	rec_tc_elem_string(tc, c->c.name);
	rec_tc_i32(tc, 4, PQ_CODEC_ZSTD);
	rec_tc_i64(tc, 5, rows);
	rec_tc_i64(tc, 6, m->uncompressed);
	rec_tc_i64(tc, 7, m->compressed);
	if (c->c.unit) {
		rec_tc_list(tc, 8, REC_TC_STRUCT, 1);
		rec_tc_begin(tc, 0);
		rec_tc_string(tc, 1, "unit");
		rec_tc_string(tc, 2, c->c.unit);
		rec_tc_end(tc);
	}
	rec_tc_i64(tc, 9, m->data_offset);
	if (m->dict)
		rec_tc_i64(tc, 11, m->dict_offset);
	rec_tc_begin(tc, 12); /* Statistics */
	rec_tc_i64(tc, 3, m->nulls);
	if (m->has_minmax) {
		if (c->c.physical == REC_PQ_BYTE_ARRAY) {
			rec_tc_binary(tc, 5, m->smax.data, m->smax.len);
			rec_tc_binary(tc, 6, m->smin.data, m->smin.len);
		} else {
			rec_tc_binary(tc, 5, m->max, m->stat_len);
			rec_tc_binary(tc, 6, m->min, m->stat_len);
		}
	}
	rec_tc_end(tc);
	rec_tc_end(tc); /* ColumnMetaData */
	rec_tc_end(tc); /* ColumnChunk */
}

static bool footer(rec_pq_writer *w, rec_buf *b)
{
	rec_tc tc;
	rec_tc_init(&tc, b);
	rec_tc_i32(&tc, 1, 1); /* version */
	rec_tc_list(&tc, 2, REC_TC_STRUCT, w->ncols + 1);
	rec_tc_begin(&tc, 0); /* the root */
	rec_tc_string(&tc, 4, "schema");
	rec_tc_i32(&tc, 5, (int32_t)w->ncols);
	rec_tc_end(&tc);
	for (size_t i = 0; i < w->ncols; i++)
		schema_element(&tc, &w->cols[i].c);
	rec_tc_i64(&tc, 3, (int64_t)w->rows);
	rec_tc_list(&tc, 4, REC_TC_STRUCT, w->ngroups);
	for (size_t g = 0; g < w->ngroups; g++) {
		const pq_group_meta *gm = &w->groups[g];
		rec_tc_begin(&tc, 0);
		rec_tc_list(&tc, 1, REC_TC_STRUCT, w->ncols);
		for (size_t i = 0; i < w->ncols; i++)
			column_chunk(&tc, &w->cols[i], &gm->chunks[i], gm->rows);
		rec_tc_i64(&tc, 2, gm->uncompressed);
		rec_tc_i64(&tc, 3, gm->rows);
		rec_tc_i64(&tc, 5, gm->offset);
		rec_tc_i64(&tc, 6, gm->compressed);
		rec_tc_end(&tc);
	}
	if (w->nkv) {
		rec_tc_list(&tc, 5, REC_TC_STRUCT, w->nkv);
		for (size_t i = 0; i < w->nkv; i++) {
			rec_tc_begin(&tc, 0);
			rec_tc_string(&tc, 1, w->kv[i].key);
			rec_tc_string(&tc, 2, w->kv[i].value);
			rec_tc_end(&tc);
		}
	}
	rec_tc_string(&tc, 6, "rec-export (librec)");
	/* column_orders: every column in its type's order (min_value/max_value) */
	rec_tc_list(&tc, 7, REC_TC_STRUCT, w->ncols);
	for (size_t i = 0; i < w->ncols; i++) {
		rec_tc_begin(&tc, 0);
		rec_tc_begin(&tc, 1); /* TYPE_ORDER */
		rec_tc_end(&tc);
		rec_tc_end(&tc);
	}
	rec_tc_end(&tc);
	return !tc.failed;
}

bool rec_pq_finish(rec_pq_writer *w)
{
	if (!flush_group(w))
		return false;
	rec_buf b = { 0 };
	if (!footer(w, &b) || b.len > UINT32_MAX) {
		rec_buf_free(&b);
		w->failed = true;
		return false;
	}
	put(w, b.data, b.len);
	uint8_t tail[8] = { (uint8_t)b.len, (uint8_t)(b.len >> 8), (uint8_t)(b.len >> 16),
			    (uint8_t)(b.len >> 24), 'P', 'A', 'R', '1' };
	put(w, tail, 8);
	rec_buf_free(&b);
	if (!w->failed && fflush(w->out) != 0) {
		w->failed = true;
		w->err = errno;
	}
	if (w->failed && w->err)
		errno = w->err;
	return !w->failed;
}

void rec_pq_writer_free(rec_pq_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; w->cols && i < w->ncols; i++) {
		pq_col *c = &w->cols[i];
		free((char *)c->c.name);
		free((char *)c->c.unit);
		rec_buf_free(&c->plain);
		rec_buf_free(&c->defs);
		rec_buf_free(&c->smin);
		rec_buf_free(&c->smax);
	}
	for (size_t i = 0; w->kv && i < w->nkv; i++) {
		free((char *)w->kv[i].key);
		free((char *)w->kv[i].value);
	}
	for (size_t g = 0; g < w->ngroups; g++) {
		for (size_t i = 0; i < w->ncols; i++) {
			rec_buf_free(&w->groups[g].chunks[i].smin);
			rec_buf_free(&w->groups[g].chunks[i].smax);
		}
		free(w->groups[g].chunks);
	}
	free(w->groups);
	free(w->cols);
	free(w->kv);
	rec_buf_free(&w->page);
	rec_buf_free(&w->body);
	rec_buf_free(&w->scratch);
	free(w);
}
