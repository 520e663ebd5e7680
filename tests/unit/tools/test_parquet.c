/* SPDX-License-Identifier: MIT */
/*
 * Unit tests: the Parquet writer of rec-export (tools/export/parquet.c) and
 * its Thrift compact protocol encoder (thrift_compact.c), against the
 * specifications' byte layouts decoded here independently: compact field
 * headers, zigzag varints, list headers; the RLE/bit-packed hybrid (a
 * decoder below round-trips random runs); a file's layout (PAR1, pages,
 * footer length, PAR1), its zstd pages, definition levels and PLAIN
 * values, dictionary pages, and row groups bounded in rows.  DuckDB reads
 * whole files in tests/cli/export.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "../../../tools/export/parquet.h"
#include "../../../tools/export/thrift_compact.h"

/* ---- the compact protocol --------------------------------------------------------- */
static void t_thrift_fields(void **state)
{
	(void)state;
	rec_buf b = { 0 };
	rec_tc tc;
	rec_tc_init(&tc, &b);
	rec_tc_i32(&tc, 1, 1);      /* delta 1, type 5: 0x15, zigzag(1) = 2 */
	rec_tc_i64(&tc, 2, -1);     /* 0x16, zigzag(-1) = 1 */
	rec_tc_bool(&tc, 3, true);  /* delta 1, true: 0x11 */
	rec_tc_bool(&tc, 4, false); /* 0x12 */
	rec_tc_string(&tc, 5, "ab");/* 0x18 02 'a' 'b' */
	rec_tc_i32(&tc, 40, 300);   /* long form: 0x05, zigzag(40) = 80, zigzag(300) = 600: d8 04 */
	rec_tc_begin(&tc, 41);      /* delta 1, struct: 0x1c */
	rec_tc_i8(&tc, 1, -2);      /* inner deltas restart: 0x13 fe */
	rec_tc_end(&tc);            /* 00 */
	rec_tc_list(&tc, 42, REC_TC_I32, 2); /* 0x19, 0x25 */
	rec_tc_elem_i32(&tc, 3);    /* 06 */
	rec_tc_elem_i32(&tc, -3);   /* 05 */
	rec_tc_list(&tc, 43, REC_TC_BINARY, 15); /* 0x19, 0xf8, 0x0f */
	for (int i = 0; i < 15; i++)
		rec_tc_elem_string(&tc, "");
	rec_tc_end(&tc);
	static const uint8_t want[] = { 0x15, 0x02, 0x16, 0x01, 0x11, 0x12, 0x18, 0x02, 'a', 'b',
					0x05, 80, 0xd8, 0x04, 0x1c, 0x13, 0xfe, 0x00, 0x19, 0x25,
					0x06, 0x05, 0x19, 0xf8, 0x0f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					0, 0, 0, 0, 0, 0x00 };
	assert_false(tc.failed);
	assert_int_equal(b.len, sizeof want);
	assert_memory_equal(b.data, want, sizeof want);
	rec_buf_free(&b);
}

/* ---- the RLE/bit-packed hybrid: an independent decoder ------------------------------ */
static size_t uleb(const uint8_t *p, size_t *pos, size_t end)
{
	size_t v = 0;
	for (unsigned sh = 0; *pos < end; sh += 7) {
		uint8_t c = p[(*pos)++];
		v |= (size_t)(c & 0x7f) << sh;
		if (!(c & 0x80))
			break;
	}
	return v;
}

/* Decodes up to n values; returns how many were decoded (padding of the
 * last bit-packed group is cut at n). */
static size_t hybrid_decode(const uint8_t *p, size_t len, unsigned width, uint32_t *out, size_t n)
{
	size_t pos = 0, k = 0;
	while (pos < len && k < n) {
		size_t h = uleb(p, &pos, len);
		if (h & 1) {
			size_t count = (h >> 1) * 8;
			size_t bit = pos * 8;
			for (size_t i = 0; i < count; i++) {
				uint32_t v = 0;
				for (unsigned b = 0; b < width; b++, bit++)
					v |= (uint32_t)((p[bit / 8] >> (bit % 8)) & 1) << b;
				if (k < n)
					out[k++] = v;
			}
			pos += (h >> 1) * width;
		} else {
			uint32_t v = 0;
			for (unsigned b = 0; b < (width + 7) / 8; b++)
				v |= (uint32_t)p[pos++] << (8 * b);
			for (size_t i = 0; i < (h >> 1) && k < n; i++)
				out[k++] = v;
		}
	}
	return k;
}

static void t_hybrid_known(void **state)
{
	(void)state;
	rec_buf b = { 0 };
	uint32_t ones[20];
	for (int i = 0; i < 20; i++)
		ones[i] = 1;
	assert_true(rec_pq_hybrid(&b, ones, 20, 1)); /* one RLE run: 20 << 1, value 1 */
	assert_int_equal(b.len, 2);
	assert_int_equal(b.data[0], 40);
	assert_int_equal(b.data[1], 1);
	b.len = 0;
	uint32_t alt[10] = { 1, 0, 1, 0, 1, 0, 1, 0, 1, 1 };
	assert_true(rec_pq_hybrid(&b, alt, 10, 1)); /* bit-packed, 2 groups: (2 << 1) | 1 */
	assert_int_equal(b.len, 3);
	assert_int_equal(b.data[0], 5);
	assert_int_equal(b.data[1], 0x55);
	assert_int_equal(b.data[2], 0x03);
	b.len = 0;
	uint32_t wide[3] = { 300, 300, 7 }; /* width 9 */
	assert_true(rec_pq_hybrid(&b, wide, 3, 9));
	assert_int_equal(b.len, 1 + 9);
	uint32_t back[3];
	assert_int_equal(hybrid_decode(b.data, b.len, 9, back, 3), 3);
	assert_memory_equal(back, wide, sizeof wide);
	rec_buf_free(&b);
}

static void t_hybrid_roundtrip(void **state)
{
	(void)state;
	srand(7);
	for (int round = 0; round < 200; round++) {
		unsigned width = 1 + (unsigned)rand() % 20;
		size_t n = (size_t)rand() % 3000;
		uint32_t *v = malloc((n + 1) * sizeof(*v)), *back = malloc((n + 1) * sizeof(*back));
		for (size_t i = 0; i < n;) {
			uint32_t x = (uint32_t)rand() & ((1u << width) - 1);
			size_t run = rand() % 3 == 0 ? 1 + (size_t)rand() % 40 : 1;
			for (size_t k = 0; k < run && i < n; k++)
				v[i++] = x;
		}
		rec_buf b = { 0 };
		assert_true(rec_pq_hybrid(&b, v, n, width));
		assert_int_equal(hybrid_decode(b.data, b.len, width, back, n), n);
		if (n)
			assert_memory_equal(back, v, n * sizeof(*v));
		rec_buf_free(&b);
		free(v);
		free(back);
	}
}

/* ---- files ------------------------------------------------------------------------ */
/* A minimal compact-protocol reader: the i32 fields of a page header
 * (type 1, uncompressed size 2, compressed size 3) and of its nested data
 * or dictionary page header (num_values 1, encoding 2), skipping the rest. */
typedef struct page_hdr {
	int32_t type, usize, csize, nvalues, encoding;
	size_t len; /* bytes of the header */
} page_hdr;

static int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static void read_struct(const uint8_t *p, size_t *pos, size_t end, page_hdr *h, int depth)
{
	int16_t last = 0;
	while (*pos < end) {
		uint8_t c = p[(*pos)++];
		if (c == 0)
			return;
		uint8_t type = c & 0x0f;
		int16_t id = (c >> 4) ? (int16_t)(last + (c >> 4)) : (int16_t)unzigzag(uleb(p, pos, end));
		last = id;
		if (type == REC_TC_I32 || type == REC_TC_I64) {
			int64_t v = unzigzag(uleb(p, pos, end));
			if (depth == 0 && id == 1) h->type = (int32_t)v;
			if (depth == 0 && id == 2) h->usize = (int32_t)v;
			if (depth == 0 && id == 3) h->csize = (int32_t)v;
			if (depth == 1 && id == 1) h->nvalues = (int32_t)v;
			if (depth == 1 && id == 2) h->encoding = (int32_t)v;
		} else if (type == REC_TC_STRUCT) {
			read_struct(p, pos, end, h, depth + 1);
		} else if (type == REC_TC_BINARY) {
			*pos += uleb(p, pos, end);
		} else if (type == REC_TC_BYTE) {
			(*pos)++;
		} else {
			assert_true(type == REC_TC_TRUE || type == REC_TC_FALSE);
		}
	}
}

typedef struct file_img {
	uint8_t *p;
	size_t len, footer; /* footer: offset of FileMetaData */
} file_img;

static file_img finish_file(rec_pq_writer *w, FILE *f)
{
	assert_true(rec_pq_finish(w));
	rec_pq_writer_free(w);
	file_img img = { 0 };
	long n = ftell(f);
	assert_true(n > 12);
	img.len = (size_t)n;
	img.p = malloc(img.len);
	rewind(f);
	assert_int_equal(fread(img.p, 1, img.len, f), img.len);
	fclose(f);
	assert_memory_equal(img.p, "PAR1", 4);
	assert_memory_equal(img.p + img.len - 4, "PAR1", 4);
	uint32_t flen = (uint32_t)img.p[img.len - 8] | (uint32_t)img.p[img.len - 7] << 8 |
			(uint32_t)img.p[img.len - 6] << 16 | (uint32_t)img.p[img.len - 5] << 24;
	assert_true(flen > 0 && flen + 12 <= img.len);
	img.footer = img.len - 8 - flen;
	return img;
}

/* The page at *pos: header, decompressed body (caller frees). */
static uint8_t *read_page(const file_img *img, size_t *pos, page_hdr *h)
{
	memset(h, 0, sizeof(*h));
	size_t start = *pos;
	read_struct(img->p, pos, img->footer, h, 0);
	h->len = *pos - start;
	assert_true(h->csize > 0 && *pos + (size_t)h->csize <= img->footer);
	uint8_t *body = malloc((size_t)h->usize + 1);
	size_t got = ZSTD_decompress(body, (size_t)h->usize + 1, img->p + *pos, (size_t)h->csize);
	assert_false(ZSTD_isError(got));
	assert_int_equal(got, (size_t)h->usize);
	*pos += (size_t)h->csize;
	return body;
}

static void t_file_int64_nulls(void **state)
{
	(void)state;
	FILE *f = tmpfile();
	assert_non_null(f);
	rec_pq_column col = { "v", REC_PQ_INT64, REC_PQ_INT, 64, true, "ns" };
	rec_pq_writer *w = rec_pq_writer_create(f, &col, 1, NULL, 0, 1000);
	assert_non_null(w);
	int64_t vals[5] = { 5, -7, 0, 0, 1LL << 40 };
	for (int i = 0; i < 5; i++) {
		if (i == 2)
			rec_pq_null(w, 0);
		else
			rec_pq_int(w, 0, vals[i]);
		assert_true(rec_pq_end_row(w));
	}
	assert_int_equal(rec_pq_rows(w), 5);
	file_img img = finish_file(w, f);
	size_t pos = 4;
	page_hdr h;
	uint8_t *body = read_page(&img, &pos, &h);
	assert_int_equal(h.type, 0);     /* DATA_PAGE */
	assert_int_equal(h.nvalues, 5);  /* with the null */
	assert_int_equal(h.encoding, 0); /* PLAIN */
	assert_int_equal(pos, img.footer); /* one page, then the footer */
	uint32_t dlen = (uint32_t)body[0] | (uint32_t)body[1] << 8 | (uint32_t)body[2] << 16 |
			(uint32_t)body[3] << 24;
	uint32_t defs[5];
	assert_int_equal(hybrid_decode(body + 4, dlen, 1, defs, 5), 5);
	uint32_t want_defs[5] = { 1, 1, 0, 1, 1 };
	assert_memory_equal(defs, want_defs, sizeof defs);
	assert_int_equal(h.usize, 4 + (int32_t)dlen + 4 * 8); /* four values present */
	int64_t got[4];
	memcpy(got, body + 4 + dlen, sizeof got); /* little-endian host */
	assert_int_equal(got[0], 5);
	assert_int_equal(got[1], -7);
	assert_int_equal(got[2], 0);
	assert_int_equal(got[3], 1LL << 40);
	free(body);
	free(img.p);
}

static void t_file_dictionary_and_groups(void **state)
{
	(void)state;
	FILE *f = tmpfile();
	assert_non_null(f);
	rec_pq_column cols[2] = {
		{ "s", REC_PQ_BYTE_ARRAY, REC_PQ_STRING, 0, false, NULL },
		{ "b", REC_PQ_BOOLEAN, REC_PQ_NONE, 0, false, NULL },
	};
	rec_pq_writer *w = rec_pq_writer_create(f, cols, 2, NULL, 0, 40);
	static const char *const names[3] = { "worker-alpha", "worker-beta", "worker-gamma" };
	for (int i = 0; i < 100; i++) {
		rec_pq_bytes(w, 0, names[i % 3], strlen(names[i % 3]));
		rec_pq_int(w, 1, i % 2);
		assert_true(rec_pq_end_row(w));
	}
	file_img img = finish_file(w, f);
	/* 3 row groups (40, 40, 20 rows), each: s as dictionary + data page, b as a data page */
	size_t pos = 4;
	int groups = 0;
	static const int rows[3] = { 40, 40, 20 };
	while (pos < img.footer) {
		page_hdr h;
		uint8_t *dict = read_page(&img, &pos, &h);
		assert_int_equal(h.type, 2); /* DICTIONARY_PAGE */
		assert_int_equal(h.nvalues, 3);
		assert_int_equal(h.usize, 3 * 4 + 12 + 11 + 12);
		/* entries in the order first met: the group's first row first */
		const char *first = names[(groups * 40) % 3];
		assert_memory_equal(dict + 4, first, strlen(first));
		free(dict);
		uint8_t *data = read_page(&img, &pos, &h);
		assert_int_equal(h.type, 0);
		assert_int_equal(h.encoding, 8); /* RLE_DICTIONARY */
		assert_int_equal(h.nvalues, rows[groups]);
		uint32_t dlen;
		memcpy(&dlen, data, 4);
		uint8_t bw = data[4 + dlen];
		assert_int_equal(bw, 2);
		uint32_t idx[40];
		assert_int_equal(hybrid_decode(data + 5 + dlen, (size_t)h.usize - 5 - dlen, bw, idx,
					       (size_t)rows[groups]),
				 (size_t)rows[groups]);
		for (int i = 0; i < rows[groups]; i++)
			assert_int_equal(idx[i], (uint32_t)(i % 3));
		free(data);
		uint8_t *bools = read_page(&img, &pos, &h);
		assert_int_equal(h.encoding, 0);
		memcpy(&dlen, bools, 4);
		/* PLAIN booleans: bit-packed, LSB first: 0,1,0,1... = 0xaa */
		assert_int_equal(bools[4 + dlen], 0xaa);
		assert_int_equal((size_t)h.usize, 4 + dlen + ((size_t)rows[groups] + 7) / 8);
		free(bools);
		groups++;
	}
	assert_int_equal(groups, 3);
	assert_int_equal(pos, img.footer);
	free(img.p);
}

static void t_file_plain_strings(void **state)
{
	(void)state;
	/* all distinct: PLAIN is smaller than a dictionary */
	FILE *f = tmpfile();
	rec_pq_column col = { "s", REC_PQ_BYTE_ARRAY, REC_PQ_STRING, 0, false, NULL };
	rec_pq_writer *w = rec_pq_writer_create(f, &col, 1, NULL, 0, 1000);
	char s[32];
	for (int i = 0; i < 50; i++) {
		int n = snprintf(s, sizeof s, "v%d", i);
		rec_pq_bytes(w, 0, s, (size_t)n);
		assert_true(rec_pq_end_row(w));
	}
	file_img img = finish_file(w, f);
	size_t pos = 4;
	page_hdr h;
	uint8_t *body = read_page(&img, &pos, &h);
	assert_int_equal(h.type, 0);
	assert_int_equal(h.encoding, 0);
	uint32_t dlen, len;
	memcpy(&dlen, body, 4);
	memcpy(&len, body + 4 + dlen, 4);
	assert_int_equal(len, 2);
	assert_memory_equal(body + 8 + dlen, "v0", 2);
	free(body);
	free(img.p);
}

static void t_file_flush(void **state)
{
	(void)state;
	/* a row group written early (rec_pq_flush) is a smaller one */
	FILE *f = tmpfile();
	rec_pq_column col = { "v", REC_PQ_INT32, REC_PQ_INT, 16, false, NULL };
	rec_pq_writer *w = rec_pq_writer_create(f, &col, 1, NULL, 0, 1000);
	assert_int_equal(rec_pq_buffered(w), 0);
	for (int i = 0; i < 8; i++) {
		if (i == 5) {
			assert_int_equal(rec_pq_buffered(w), 5 * 4 + 5); /* values and levels */
			assert_true(rec_pq_flush(w));
			assert_int_equal(rec_pq_buffered(w), 0);
		}
		rec_pq_int(w, 0, 60000 + i);
		assert_true(rec_pq_end_row(w));
	}
	file_img img = finish_file(w, f);
	size_t pos = 4;
	page_hdr h;
	free(read_page(&img, &pos, &h));
	assert_int_equal(h.nvalues, 5);
	uint8_t *body = read_page(&img, &pos, &h);
	assert_int_equal(h.nvalues, 3);
	uint32_t dlen, v;
	memcpy(&dlen, body, 4);
	memcpy(&v, body + 4 + dlen, 4);
	assert_int_equal(v, 60005);
	assert_int_equal(pos, img.footer);
	free(body);
	free(img.p);
}

static void t_values_of_other_types(void **state)
{
	(void)state;
	/* a field declared with another type in a later chunk: converted, or NULL */
	FILE *f = tmpfile();
	rec_pq_column cols[3] = {
		{ "s", REC_PQ_BYTE_ARRAY, REC_PQ_STRING, 0, false, NULL },
		{ "u8", REC_PQ_INT32, REC_PQ_INT, 8, false, NULL },
		{ "d", REC_PQ_DOUBLE, REC_PQ_NONE, 0, false, NULL },
	};
	rec_pq_writer *w = rec_pq_writer_create(f, cols, 3, NULL, 0, 1000);
	rec_pq_int(w, 0, -42);     /* "-42" */
	rec_pq_int(w, 1, 300);     /* out of UINT_8: NULL */
	rec_pq_int(w, 2, 7);       /* 7.0 */
	assert_true(rec_pq_end_row(w));
	rec_pq_double(w, 0, 0.5);  /* "0.5" */
	rec_pq_double(w, 1, 255);  /* 255 */
	rec_pq_bytes(w, 2, "x", 1); /* NULL */
	assert_true(rec_pq_end_row(w));
	rec_pq_double(w, 1, 1.5);  /* not integral: NULL */
	assert_true(rec_pq_end_row(w));
	file_img img = finish_file(w, f);
	size_t pos = 4;
	page_hdr h;
	uint8_t *s = read_page(&img, &pos, &h); /* 2 distinct strings, 3 rows: PLAIN */
	uint32_t dlen, len;
	memcpy(&dlen, s, 4);
	memcpy(&len, s + 4 + dlen, 4);
	assert_int_equal(len, 3);
	assert_memory_equal(s + 8 + dlen, "-42", 3);
	memcpy(&len, s + 11 + dlen, 4);
	assert_int_equal(len, 3);
	assert_memory_equal(s + 15 + dlen, "0.5", 3);
	free(s);
	uint8_t *u = read_page(&img, &pos, &h);
	memcpy(&dlen, u, 4);
	uint32_t defs[3], v;
	assert_int_equal(hybrid_decode(u + 4, dlen, 1, defs, 3), 3);
	assert_int_equal(defs[0], 0);
	assert_int_equal(defs[1], 1);
	assert_int_equal(defs[2], 0);
	memcpy(&v, u + 4 + dlen, 4);
	assert_int_equal(v, 255);
	assert_int_equal(h.usize, 4 + (int32_t)dlen + 4);
	free(u);
	uint8_t *d = read_page(&img, &pos, &h);
	memcpy(&dlen, d, 4);
	double x;
	memcpy(&x, d + 4 + dlen, 8);
	assert_true(x == 7.0);
	assert_int_equal(h.usize, 4 + (int32_t)dlen + 8);
	free(d);
	free(img.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_thrift_fields),
		cmocka_unit_test(t_hybrid_known),
		cmocka_unit_test(t_hybrid_roundtrip),
		cmocka_unit_test(t_file_int64_nulls),
		cmocka_unit_test(t_file_dictionary_and_groups),
		cmocka_unit_test(t_file_plain_strings),
		cmocka_unit_test(t_file_flush),
		cmocka_unit_test(t_values_of_other_types),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
