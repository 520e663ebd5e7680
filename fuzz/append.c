/* SPDX-License-Identifier: MIT */
/*
 * append.c - fuzz the writer's take: rec_writer_append_records() with
 * records a program could hand it (the fast take, its checked fallback, a
 * batch taken back whole, and, once a chunk's first 32 KiB are fed to
 * zstd, the records cut into the four split EVENTS streams as they are
 * taken).  A writer to memory (zstd, the default split layout, references
 * checked) with three types (f.A: a thread and u8, i32, string, u64
 * fields; f.B: a duration, a thread, a stack, a u64 and a text; f.C: no
 * thread, a blob, an i64, an f64 and an f32) and their pools; 40 KiB of
 * valid records first, then the input as batches: each piece is one byte
 * of length (0-255) and that many bytes, appended as one batch, with three
 * valid records after each.  What is refused must leave no trace and what
 * is taken must read back: the file, read with REC_READ_VERIFY, verifies
 * chunk by chunk and holds exactly the records of the batches taken, none
 * dropped; anything else aborts.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../tests/lib/membuf.h" /* the in-memory sink the tests use */
#include "common/common_internal.h"
#include "fuzz.h"

static const rec_field a_fields[] = {
	{ "u8", "", "", REC_TYPE_U8, 0 },
	{ "i32", "", "", REC_TYPE_I32, 0 },
	{ "name", "", "", REC_TYPE_STRING, 0 },
	{ "u64", "", "", REC_TYPE_U64, 0 },
};
static const rec_type a_type = { 1, REC_EVENT_HAS_THREAD, "f.A", "", "", "", 4, a_fields };
static const rec_field b_fields[] = {
	{ "n", "", "", REC_TYPE_U64, 0 },
	{ "text", "", "", REC_TYPE_TEXT, 0 },
};
static const rec_type b_type = { 2,
				  REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD |
					  REC_EVENT_HAS_STACK,
				  "f.B", "", "", "", 2, b_fields };
static const rec_field c_fields[] = {
	{ "blob", "", "", REC_TYPE_BLOB, 0 },
	{ "i64", "", "", REC_TYPE_I64, 0 },
	{ "d", "", "", REC_TYPE_F64, 0 },
	{ "f", "", "", REC_TYPE_F32, 0 },
};
static const rec_type c_type = { 3, 0, "f.C", "", "", "", 4, c_fields };

static rec_writer *open_writer(membuf *m)
{
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	rec_sink sink = { mem_write, NULL, m };
	rec_writer *w = NULL;
	o.codec = REC_CODEC_ZSTD;
	o.run_id = 0x1122334455667788ull;
	o.pid = 4321;
	o.tick_frequency = 1000000000u;
	o.anchor_wall_ns = 1700000000500000000LL;
	o.anchor_ticks = 1000;
	o.chunk_events_size = 256u << 10;
	if (rec_writer_open(&w, &sink, &o) != REC_OK)
		return NULL;
	rec_writer_set_check_refs(w, 1);
	static const uint64_t frames[3] = { 1, 1, 1 };
	bool ok = rec_writer_add_type(w, &a_type) == REC_OK &&
		  rec_writer_add_type(w, &b_type) == REC_OK &&
		  rec_writer_add_type(w, &c_type) == REC_OK;
	for (uint64_t s = 1; ok && s <= 8; s++) {
		char name[8];
		snprintf(name, sizeof name, "s%u", (unsigned)s);
		ok = rec_writer_define_string(w, s, name, strlen(name)) == REC_OK;
	}
	ok = ok && rec_writer_define_thread(w, 1, 11, 1) == REC_OK &&
	     rec_writer_define_thread(w, 2, 22, 0) == REC_OK &&
	     rec_writer_define_frame(w, 1, 2, 0, 0, 0) == REC_OK;
	for (uint64_t s = 1; ok && s <= 3; s++)
		ok = rec_writer_define_stack(w, s, 0, frames, (uint32_t)s) == REC_OK;
	if (!ok) {
		rec_writer_abandon(w);
		return NULL;
	}
	return w;
}

/* One valid record of the k-th kind at ticks into p; returns its bytes. */
static size_t valid_record(uint8_t *p, uint64_t k, uint64_t ticks)
{
	uint8_t body[96];
	size_t n = 0;
	switch (k % 3) {
	case 0:
		n += rec_varint_put(body + n, 1);
		n += rec_varint_put(body + n, ticks);
		n += rec_varint_put(body + n, 1 + k % 2);
		n += rec_varint_put(body + n, k & 0xFF);
		n += rec_varint_put(body + n, rec_zigzag(-(int64_t)(k % 100000)));
		n += rec_varint_put(body + n, 1 + k % 8);
		n += rec_varint_put(body + n, k * 0x9E3779B97F4A7C15ull);
		break;
	case 1:
		n += rec_varint_put(body + n, 2);
		n += rec_varint_put(body + n, ticks);
		n += rec_varint_put(body + n, k % 7 ? k % 1000 : (uint64_t)1 << 40);
		n += rec_varint_put(body + n, 1 + k % 2);
		n += rec_varint_put(body + n, 1 + k % 3);
		n += rec_varint_put(body + n, k);
		n += rec_varint_put(body + n, k % 23);
		for (uint64_t i = 0; i < k % 23; i++)
			body[n++] = (uint8_t)('a' + (k + i) % 26);
		break;
	default:
		n += rec_varint_put(body + n, 3);
		n += rec_varint_put(body + n, ticks);
		n += rec_varint_put(body + n, k % 5);
		for (uint64_t i = 0; i < k % 5; i++)
			body[n++] = (uint8_t)(k >> (8 * i));
		n += rec_varint_put(body + n, rec_zigzag((int64_t)k));
		memcpy(body + n, &k, 8);
		n += 8;
		memcpy(body + n, &k, 4);
		n += 4;
		break;
	}
	size_t h = rec_varint_put(p, n);
	memcpy(p + h, body, n);
	return h + n;
}

/* Records in a batch the writer took (every one framed by its Size). */
static uint64_t count_records(const uint8_t *p, size_t n)
{
	const uint8_t *end = p + n;
	uint64_t size, count = 0;
	while (p < end) {
		if (!rec_varint_get(&p, end, &size) || size > (uint64_t)(end - p))
			abort(); /* taken, yet not framed */
		p += size;
		count++;
	}
	return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	membuf m = { NULL, 0, 0 };
	rec_writer *w = open_writer(&m);
	if (!w)
		return 0;
	uint8_t buf[1024];
	uint64_t k = 0, ticks = 5000000, want = 0;

	/* 40 KiB of valid records: the open chunk's first slice is fed */
	for (size_t fed = 0; fed < (40u << 10);) {
		size_t len = 0;
		for (int i = 0; i < 16; i++, k++, ticks += 37)
			len += valid_record(buf + len, k, ticks);
		if (rec_writer_append_records(w, buf, len) != REC_OK)
			abort();
		want += 16;
		fed += len;
	}
	for (size_t at = 0; at < size;) {
		size_t len = data[at++];
		if (len > size - at)
			len = size - at;
		if (rec_writer_append_records(w, data + at, len) == REC_OK)
			want += count_records(data + at, len);
		at += len;
		size_t n = 0;
		for (int i = 0; i < 3; i++, k++, ticks += 37)
			n += valid_record(buf + n, k, ticks);
		if (rec_writer_append_records(w, buf, n) != REC_OK)
			abort(); /* a refused batch left something behind */
		want += 3;
	}
	if (rec_writer_close(w) != REC_OK)
		abort();

	rec_reader_options o = rec_fuzz_options(REC_READ_VERIFY);
	rec_reader *r = NULL;
	const rec_chunk_info *ci;
	uint64_t got = 0, dropped = 0;
	rec_status st;
	if (rec_reader_open_mem(&r, m.p, m.len, "fuzz", &o) != REC_OK)
		abort();
	while ((st = rec_reader_next_chunk(r, &ci)) == REC_OK) {
		rec_event e;
		if (rec_reader_verify_chunk(r) != REC_OK)
			abort();
		dropped += ci->dropped_events;
		while ((st = rec_reader_next_chunk_event(r, &e)) == REC_OK) {
			rec_fuzz_type(e.type);
			got++;
		}
		if (st != REC_END)
			abort();
	}
	if (st != REC_END || got != want || dropped != 0)
		abort();
	rec_reader_close(r);
	free(m.p);
	return 0;
}
