/* SPDX-License-Identifier: MIT */
/*
 * thrift_compact.h - a writer of the Thrift compact protocol (the encoding
 * of Parquet's metadata: thrift/doc/specs/thrift-compact-protocol.md):
 * structs with delta-coded field headers, zigzag varints, binaries, lists.
 * Writes into the library's growable byte buffer (rec_buf); an allocation
 * failure is sticky (rec_tc.failed).
 */
#ifndef REC_TOOLS_THRIFT_COMPACT_H
#define REC_TOOLS_THRIFT_COMPACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common_internal.h" /* rec_buf */


/* Compact protocol element types. */
enum {
	REC_TC_TRUE = 1,
	REC_TC_FALSE = 2,
	REC_TC_BYTE = 3,
	REC_TC_I16 = 4,
	REC_TC_I32 = 5,
	REC_TC_I64 = 6,
	REC_TC_DOUBLE = 7,
	REC_TC_BINARY = 8,
	REC_TC_LIST = 9,
	REC_TC_STRUCT = 12
};

#define REC_TC_DEPTH 16

/* A struct being written: the last field id per nesting level. */
typedef struct rec_tc {
	rec_buf *b;
	int16_t last[REC_TC_DEPTH];
	int depth;
	bool failed; /* out of memory, or nested too deep */
} rec_tc;

/* Start the outermost struct on b. */
void rec_tc_init(rec_tc *tc, rec_buf *b);
/* Fields of the current struct (ids strictly need not increase). */
void rec_tc_i32(rec_tc *tc, int16_t id, int32_t v);
void rec_tc_i64(rec_tc *tc, int16_t id, int64_t v);
void rec_tc_i8(rec_tc *tc, int16_t id, int8_t v);
void rec_tc_bool(rec_tc *tc, int16_t id, bool v);
void rec_tc_binary(rec_tc *tc, int16_t id, const void *p, size_t n);
void rec_tc_string(rec_tc *tc, int16_t id, const char *s);
/* A struct field (id > 0) or a struct element of a list (id 0); ended by
 * rec_tc_end, which also ends the outermost struct. */
void rec_tc_begin(rec_tc *tc, int16_t id);
void rec_tc_end(rec_tc *tc);
/* A list field of n elements of elem_type, then the n elements: structs
 * (rec_tc_begin(tc, 0)), or rec_tc_elem_i32 / rec_tc_elem_string. */
void rec_tc_list(rec_tc *tc, int16_t id, uint8_t elem_type, size_t n);
void rec_tc_elem_i32(rec_tc *tc, int32_t v);
void rec_tc_elem_string(rec_tc *tc, const char *s);

#endif /* REC_TOOLS_THRIFT_COMPACT_H */
