/* SPDX-License-Identifier: MIT */
/*
 * parquet.h - an Apache Parquet file writer (apache/parquet-format): flat
 * schemas of optional columns, rows appended one at a time and written as
 * row groups of at most a given number of rows (memory holds one row group),
 * one data page (v1) per column chunk, compressed with zstd; PLAIN encoding,
 * and for byte arrays RLE_DICTIONARY when it is smaller; definition levels
 * in the RLE/bit-packed hybrid; min/max statistics and null counts per
 * column chunk; the footer (FileMetaData, Thrift compact) with logical
 * types and key/value metadata.
 */
#ifndef REC_TOOLS_PARQUET_H
#define REC_TOOLS_PARQUET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Physical types (parquet.thrift Type). */
typedef enum {
	REC_PQ_BOOLEAN = 0,
	REC_PQ_INT32 = 1,
	REC_PQ_INT64 = 2,
	REC_PQ_FLOAT = 4,
	REC_PQ_DOUBLE = 5,
	REC_PQ_BYTE_ARRAY = 6
} rec_pq_physical;

/* Logical types (parquet.thrift LogicalType) this writer annotates. */
typedef enum {
	REC_PQ_NONE,
	REC_PQ_STRING,       /* BYTE_ARRAY, UTF-8 */
	REC_PQ_TIMESTAMP_NS, /* INT64, TIMESTAMP(NANOS, isAdjustedToUTC) */
	REC_PQ_INT           /* INT32/INT64: INTEGER(bits, is_signed) */
} rec_pq_logical;

typedef struct rec_pq_column {
	const char *name;
	rec_pq_physical physical;
	rec_pq_logical logical;
	uint8_t bits; /* REC_PQ_INT: 8, 16, 32 or 64 */
	bool is_signed;
	const char *unit; /* NULL or "": none; else key "unit" in the chunk's metadata */
} rec_pq_column;

typedef struct rec_pq_kv {
	const char *key, *value;
} rec_pq_kv;

typedef struct rec_pq_writer rec_pq_writer;

/* A writer of ncols columns (copied) onto out, which must be positioned at
 * its start; rows per row group at most group_rows (>= 1).  The kv pairs go
 * into the footer.  NULL when memory runs out. */
rec_pq_writer *rec_pq_writer_create(FILE *out, const rec_pq_column *cols, size_t ncols,
				    const rec_pq_kv *kv, size_t nkv, size_t group_rows);
/* The values of a row, one call per column (any order), then end_row.
 * An integer goes to INT32/INT64/BOOLEAN columns as its bits (a UINT64 as
 * its two's complement), a double to FLOAT/DOUBLE.  A value of another
 * kind is converted: an integer to a double or decimal text, an integral
 * double to the integer, a number that does not fit an INT32 column's
 * logical width or bytes to a number column is NULL. */
void rec_pq_null(rec_pq_writer *w, size_t col);
void rec_pq_int(rec_pq_writer *w, size_t col, int64_t v);
void rec_pq_double(rec_pq_writer *w, size_t col, double v);
void rec_pq_bytes(rec_pq_writer *w, size_t col, const void *p, size_t n);
/* End the row (a column not given is null); writes a full row group.
 * False after a failure (write error: errno; or memory). */
bool rec_pq_end_row(rec_pq_writer *w);
/* Bytes the row group being filled holds; write it now (a smaller row
 * group), to bound the memory of many writers.  False on failure. */
size_t rec_pq_buffered(const rec_pq_writer *w);
bool rec_pq_flush(rec_pq_writer *w);
/* Write the last row group and the footer.  False on failure. */
bool rec_pq_finish(rec_pq_writer *w);
/* Rows and row groups written so far. */
uint64_t rec_pq_rows(const rec_pq_writer *w);
void rec_pq_writer_free(rec_pq_writer *w);

/* The RLE/bit-packed hybrid encoding of n values of bit_width bits
 * (Encodings.md), appended to b (the library's rec_buf), without a length
 * prefix.  False when memory runs out. */
struct rec_buf;
bool rec_pq_hybrid(struct rec_buf *b, const uint32_t *v, size_t n, unsigned bit_width);

#endif /* REC_TOOLS_PARQUET_H */
