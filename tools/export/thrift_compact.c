/* SPDX-License-Identifier: MIT */
/*
 * thrift_compact.c - the Thrift compact protocol writer (thrift_compact.h).
 */
#include "thrift_compact.h"

#include <stdlib.h>
#include <string.h>

static void add(rec_tc *tc, const void *p, size_t n)
{
	if (!rec_buf_append(tc->b, p, n))
		tc->failed = true;
}

static void byte(rec_tc *tc, uint8_t c)
{
	add(tc, &c, 1);
}

static void varint(rec_tc *tc, uint64_t v)
{
	if (!rec_buf_varint(tc->b, v))
		tc->failed = true;
}

/* ---- the compact protocol ----------------------------------------------------- */
void rec_tc_init(rec_tc *tc, rec_buf *b)
{
	memset(tc, 0, sizeof(*tc));
	tc->b = b;
}

/* A field header: the id as a delta from the previous one in the same
 * struct when it is 1..15, else the type byte and the id as a zigzag varint. */
static void field(rec_tc *tc, int16_t id, uint8_t type)
{
	int delta = id - tc->last[tc->depth];
	if (delta > 0 && delta <= 15) {
		byte(tc, (uint8_t)(delta << 4 | type));
	} else {
		byte(tc, type);
		varint(tc, rec_zigzag(id));
	}
	tc->last[tc->depth] = id;
}

void rec_tc_i32(rec_tc *tc, int16_t id, int32_t v)
{
	field(tc, id, REC_TC_I32);
	varint(tc, rec_zigzag(v));
}

void rec_tc_i64(rec_tc *tc, int16_t id, int64_t v)
{
	field(tc, id, REC_TC_I64);
	varint(tc, rec_zigzag(v));
}

void rec_tc_i8(rec_tc *tc, int16_t id, int8_t v)
{
	field(tc, id, REC_TC_BYTE);
	byte(tc, (uint8_t)v);
}

void rec_tc_bool(rec_tc *tc, int16_t id, bool v)
{
	field(tc, id, v ? REC_TC_TRUE : REC_TC_FALSE);
}

void rec_tc_binary(rec_tc *tc, int16_t id, const void *p, size_t n)
{
	field(tc, id, REC_TC_BINARY);
	varint(tc, n);
	add(tc, p, n);
}

void rec_tc_string(rec_tc *tc, int16_t id, const char *s)
{
	rec_tc_binary(tc, id, s, strlen(s));
}

void rec_tc_begin(rec_tc *tc, int16_t id)
{
	if (id > 0)
		field(tc, id, REC_TC_STRUCT);
	if (tc->depth + 1 < REC_TC_DEPTH)
		tc->last[++tc->depth] = 0;
	else
		tc->failed = true; /* deeper than any Parquet structure */
}

void rec_tc_end(rec_tc *tc)
{
	byte(tc, 0); /* stop */
	if (tc->depth > 0)
		tc->depth--;
}

void rec_tc_list(rec_tc *tc, int16_t id, uint8_t elem_type, size_t n)
{
	field(tc, id, REC_TC_LIST);
	if (n < 15) {
		byte(tc, (uint8_t)(n << 4 | elem_type));
	} else {
		byte(tc, (uint8_t)(0xf0 | elem_type));
		varint(tc, n);
	}
}

void rec_tc_elem_i32(rec_tc *tc, int32_t v)
{
	varint(tc, rec_zigzag(v));
}

void rec_tc_elem_string(rec_tc *tc, const char *s)
{
	size_t n = strlen(s);
	varint(tc, n);
	add(tc, s, n);
}
