/* SPDX-License-Identifier: MIT */
/* test_writer_take.c - writer_chunk.c's fast take (take_run: records checked
 * and transcoded in one pass, varints read 8 bytes at a time) against the
 * path every record took before it (check_scan + place_record, which
 * rec_w_take_checked() still takes for a chunk's first record and near a
 * batch's end; w->take_no_run makes it take every record so).  Two writers
 * get the same batches: each case record R is followed by at least 40 bytes
 * of valid records, so that in the fast writer R is taken by take_run.
 * Both must accept or reject each batch alike (and as the spec says for the
 * hand-made edge cases: varints of every length 1-10, values at the width
 * limits, non-shortest and overflowing varints, truncated records, a Size
 * that disagrees with the fields, undefined references), for random
 * mutations of valid records too, and the two files must be the same bytes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/rec.h"
#include "write/writer_internal.h"

/* ---- two writers to memory ------------------------------------------------ */

typedef struct membuf {
	uint8_t *b;
	size_t n, cap;
} membuf;

static int mem_write(void *opaque, const void *buf, size_t len)
{
	membuf *m = opaque;
	if (m->n + len > m->cap) {
		size_t cap = (m->n + len) * 2;
		uint8_t *b = realloc(m->b, cap);
		if (!b)
			return -12;
		m->b = b;
		m->cap = cap;
	}
	memcpy(m->b + m->n, buf, len);
	m->n += len;
	return 0;
}

static const rec_field a_fields[] = {
	{ "flag", "", "", REC_TYPE_BOOL, 0 },	   { "u8", "", "", REC_TYPE_U8, 0 },
	{ "u16", "", "", REC_TYPE_U16, 0 },	   { "u32", "", "", REC_TYPE_U32, 0 },
	{ "u64", "", "", REC_TYPE_U64, 0 },	   { "i8", "", "", REC_TYPE_I8, 0 },
	{ "i16", "", "", REC_TYPE_I16, 0 },	   { "i32", "", "", REC_TYPE_I32, 0 },
	{ "i64", "", "", REC_TYPE_I64, 0 },	   { "name", "", "", REC_TYPE_STRING, 0 },
	{ "other", "", "", REC_TYPE_THREAD, 0 },   { "where", "", "", REC_TYPE_STACK, 0 },
	{ "at", "", "", REC_TYPE_TIMESTAMP, 0 },   { "took", "", "", REC_TYPE_DURATION, 0 },
	{ "f", "", "", REC_TYPE_F32, 0 },	   { "d", "", "", REC_TYPE_F64, 0 },
	{ "blob", "", "", REC_TYPE_BLOB, 0 },	   { "text", "", "", REC_TYPE_TEXT, 0 },
};
enum { A_ID = 3, B_ID = 300, C_ID = 1, A_NF = 18 };
static const rec_type a_type = { A_ID, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD |
					   REC_EVENT_HAS_STACK,
				 "take.A", "", "", "", A_NF, a_fields };
static const rec_field b_fields[] = {
	{ "name", "", "", REC_TYPE_STRING, 0 },
	{ "value", "", "", REC_TYPE_U64, 0 },
	{ "delta", "", "", REC_TYPE_I64, 0 },
};
static const rec_type b_type = { B_ID, REC_EVENT_HAS_THREAD, "take.B", "", "", "", 3, b_fields };
static const rec_type c_type = { C_ID, 0, "take.C", "", "", "", 0, NULL };

static rec_writer *open_writer(membuf *m, int no_run, unsigned codec)
{
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	rec_sink sink = { mem_write, NULL, m };
	rec_writer *w = NULL;
	uint64_t frame = 1;
	char name[16];

	o.codec = codec;
	o.run_id = 0x1122334455667788ull;
	o.pid = 4321;
	o.process_start_ns = 1700000000000000000LL;
	o.tick_frequency = 1000000000u;
	o.anchor_wall_ns = 1700000000500000000LL;
	o.anchor_ticks = 1000;
	o.chunk_events_size = REC_W_MAX_CHUNK;
	assert_int_equal(rec_writer_open(&w, &sink, &o), REC_OK);
	w->take_no_run = no_run;
	assert_int_equal(rec_writer_add_type(w, &a_type), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &b_type), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &c_type), REC_OK);
	for (uint64_t id = 1; id <= 20; id++) {
		snprintf(name, sizeof name, "s%llu", (unsigned long long)id);
		assert_int_equal(rec_writer_define_string(w, id, name, strlen(name)), REC_OK);
	}
	assert_int_equal(rec_writer_define_string(w, 1000, "far", 3), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 101, 1), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 2, 102, 2), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 200, 300, 1000), REC_OK);
	assert_int_equal(rec_writer_define_module(w, 1, 3, 4, 0x400000), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 1, 5, 1, 0x10, 0x20), REC_OK);
	assert_int_equal(rec_writer_define_stack(w, 5, 0, &frame, 1), REC_OK);
	return w;
}

/* ---- records ---------------------------------------------------------------- */

typedef struct rbuf {
	uint8_t b[1024];
	size_t n;
} rbuf;

/* v as a uvarint with pad extra bytes (pad > 0: not the shortest form). */
static void put_uv(rbuf *r, uint64_t v, int pad)
{
	uint8_t t[16];
	size_t n = rec_varint_put(t, v);
	if (pad) {
		t[n - 1] |= 0x80;
		for (int i = 1; i < pad; i++)
			t[n++] = 0x80;
		t[n++] = 0x00;
	}
	memcpy(r->b + r->n, t, n);
	r->n += n;
}

static void put_raw(rbuf *r, const void *p, size_t n)
{
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

/* Size (its value size + size_adj, padded by size_pad) and body. */
static void frame_record(rbuf *out, const rbuf *body, int64_t size_adj, int size_pad)
{
	put_uv(out, (uint64_t)((int64_t)body->n + size_adj), size_pad);
	put_raw(out, body->b, body->n);
}

/* The fields of a take.A record, as values (each written shortest). */
typedef struct arec {
	uint64_t ticks, dur, thread, stack;
	uint64_t u[5];	/* flag, u8, u16, u32, u64 */
	int64_t s[4];	/* i8 .. i64 */
	uint64_t name, other, where, at, took;
	uint8_t f[4], d[8];
	uint8_t blob_len, text_len;
} arec;

static arec a_default(uint64_t ticks)
{
	arec a;
	memset(&a, 0, sizeof a);
	a.ticks = ticks;
	a.dur = 250;
	a.thread = 1;
	a.stack = 5;
	a.u[0] = 1;
	a.u[1] = 200;
	a.u[2] = 40000;
	a.u[3] = 70000;
	a.u[4] = 123456789;
	a.s[0] = -5;
	a.s[1] = 300;
	a.s[2] = -70000;
	a.s[3] = 1LL << 40;
	a.name = 7;
	a.other = 2;
	a.where = 5;
	a.at = ticks + 3;
	a.took = 9;
	memcpy(a.f, "\x01\x02\x03\x04", 4);
	memcpy(a.d, "\x05\x06\x07\x08\x09\x0a\x0b\x0c", 8);
	a.blob_len = 3;
	a.text_len = 5;
	return a;
}

static void a_body(rbuf *r, const arec *a)
{
	r->n = 0;
	put_uv(r, A_ID, 0);
	put_uv(r, a->ticks, 0);
	put_uv(r, a->dur, 0);
	put_uv(r, a->thread, 0);
	put_uv(r, a->stack, 0);
	for (int i = 0; i < 5; i++)
		put_uv(r, a->u[i], 0);
	for (int i = 0; i < 4; i++)
		put_uv(r, rec_zigzag(a->s[i]), 0);
	put_uv(r, a->name, 0);
	put_uv(r, a->other, 0);
	put_uv(r, a->where, 0);
	put_uv(r, a->at, 0);
	put_uv(r, a->took, 0);
	put_raw(r, a->f, 4);
	put_raw(r, a->d, 8);
	put_uv(r, a->blob_len, 0);
	for (unsigned i = 0; i < a->blob_len; i++)
		r->b[r->n++] = (uint8_t)(0xA0 + i);
	put_uv(r, a->text_len, 0);
	for (unsigned i = 0; i < a->text_len; i++)
		r->b[r->n++] = (uint8_t)('a' + i);
}

static void a_record(rbuf *out, const arec *a)
{
	rbuf body;
	a_body(&body, a);
	out->n = 0;
	frame_record(out, &body, 0, 0);
}

static void b_record(rbuf *out, uint64_t ticks, uint64_t thread, uint64_t name, uint64_t v,
		     int64_t d)
{
	rbuf body = { .n = 0 };
	put_uv(&body, B_ID, 0);
	put_uv(&body, ticks, 0);
	put_uv(&body, thread, 0);
	put_uv(&body, name, 0);
	put_uv(&body, v, 0);
	put_uv(&body, rec_zigzag(d), 0);
	frame_record(out, &body, 0, 0);
}

/* ---- the comparison ------------------------------------------------------------ */

typedef struct pair {
	membuf mf, ms;
	rec_writer *fast, *slow;
	uint64_t ticks;
	unsigned accepted, rejected, direct;
} pair;

/* codec: NONE keeps every chunk's records in the EVENTS buffer; ZSTD cuts
 * them into the four streams as they are taken once a chunk's first slice
 * is fed (c_direct). */
static void pair_open(pair *p, unsigned codec)
{
	memset(p, 0, sizeof *p);
	p->fast = open_writer(&p->mf, 0, codec);
	p->slow = open_writer(&p->ms, 1, codec);
	p->ticks = 5000000;
}

/* Batch = r, then valid take.B records (>= 40 bytes): both writers must
 * decide alike; returns the decision (1 taken, 0 not). */
static int take_both(pair *p, const uint8_t *r, size_t n)
{
	uint8_t batch[4096];
	size_t len = 0;
	int a, b;

	memcpy(batch, r, n);
	len = n;
	for (size_t pad = 0; pad < 40;) {
		rbuf x = { .n = 0 };
		p->ticks += 17;
		b_record(&x, p->ticks, 1 + (p->ticks & 1), 1 + (p->ticks % 20), p->ticks * 7919,
			 -(int64_t)(p->ticks % 1000));
		memcpy(batch + len, x.b, x.n);
		len += x.n;
		pad += x.n;
	}
	a = rec_w_take_checked(p->fast, batch, len);
	b = rec_w_take_checked(p->slow, batch, len);
	assert_int_equal(a, b);
	assert_int_equal(p->fast->c_count, p->slow->c_count);
	assert_int_equal(p->fast->events.len, p->slow->events.len);
	assert_int_equal(p->fast->c_direct, p->slow->c_direct);
	assert_int_equal(p->fast->c_dlen, p->slow->c_dlen);
	for (int i = 0; i < REC_EVS_N; i++)
		assert_int_equal(p->fast->sbuf[i].len, p->slow->sbuf[i].len);
	p->direct += p->fast->c_direct != 0;
	if (a)
		p->accepted++;
	else
		p->rejected++;
	return a;
}

static void expect(pair *p, const rbuf *r, int want, const char *what)
{
	int got = take_both(p, r->b, r->n);
	if (got != want)
		fail_msg("%s: taken %d, expected %d", what, got, want);
}

/* Flush both and compare the files byte for byte. */
static void pair_close(pair *p)
{
	assert_int_equal(rec_writer_flush(p->fast), REC_OK);
	assert_int_equal(rec_writer_flush(p->slow), REC_OK);
	assert_int_equal(rec_writer_close(p->fast), REC_OK);
	assert_int_equal(rec_writer_close(p->slow), REC_OK);
	assert_true(p->mf.n > 1000);
	assert_int_equal(p->mf.n, p->ms.n);
	assert_memory_equal(p->mf.b, p->ms.b, p->mf.n);
	free(p->mf.b);
	free(p->ms.b);
}

static void t_edge_cases(void **state)
{
	(void)state;
	pair p;
	rbuf r, body;
	arec a;
	char what[96];

	pair_open(&p, REC_CODEC_NONE);
	/* The chunk's first record (check_scan in both). */
	a = a_default(p.ticks);
	a_record(&r, &a);
	expect(&p, &r, 1, "first record");

	/* Varints of every length, 1-10 bytes: Ticks, a u64 field, a Duration. */
	for (int len = 1; len <= 10; len++) {
		uint64_t v = len == 1 ? 5 : 1ull << (7 * (len - 1)); /* the least of that length */
		uint64_t top = len == 10 ? UINT64_MAX : (1ull << (7 * len)) - 1; /* the largest */
		for (int k = 0; k < 2; k++) {
			uint64_t x = k ? top : v;
			rbuf t = { .n = 0 };
			put_uv(&t, x, 0);
			assert_int_equal(t.n, (size_t)len);
			a = a_default(p.ticks);
			a.ticks = x;
			a_record(&r, &a);
			snprintf(what, sizeof what, "Ticks of %d bytes (%llu)", len, (unsigned long long)x);
			expect(&p, &r, 1, what);
			a = a_default(p.ticks);
			a.u[4] = x;
			a.at = x;
			a.dur = x;
			a_record(&r, &a);
			snprintf(what, sizeof what, "u64 of %d bytes", len);
			expect(&p, &r, 1, what);
			a = a_default(p.ticks);
			a.s[3] = rec_unzigzag(x);
			a_record(&r, &a);
			snprintf(what, sizeof what, "i64 of %d bytes", len);
			expect(&p, &r, 1, what);
		}
	}

	/* Values at the width limits: the largest accepted, one more rejected. */
	static const uint64_t umax[5] = { 1, UINT8_MAX, UINT16_MAX, UINT32_MAX, UINT64_MAX };
	for (int i = 0; i < 5; i++) {
		a = a_default(p.ticks);
		a.u[i] = umax[i];
		a_record(&r, &a);
		expect(&p, &r, 1, "unsigned at its width");
		if (i < 4) {
			a.u[i] = umax[i] + 1;
			a_record(&r, &a);
			expect(&p, &r, 0, "unsigned above its width");
		}
	}
	static const int64_t smin[4] = { INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN };
	static const int64_t smax[4] = { INT8_MAX, INT16_MAX, INT32_MAX, INT64_MAX };
	for (int i = 0; i < 4; i++) {
		a = a_default(p.ticks);
		a.s[i] = smin[i];
		a_record(&r, &a);
		expect(&p, &r, 1, "signed at its minimum");
		a.s[i] = smax[i];
		a_record(&r, &a);
		expect(&p, &r, 1, "signed at its maximum");
		if (i < 3) {
			a.s[i] = smin[i] - 1;
			a_record(&r, &a);
			expect(&p, &r, 0, "signed below its minimum");
			a.s[i] = smax[i] + 1;
			a_record(&r, &a);
			expect(&p, &r, 0, "signed above its maximum");
		}
	}

	/* Non-shortest varints: Size, Type_Id, Ticks, a field, each with 1-9
	 * extra bytes (a 10-byte non-shortest one among them; 11 bytes and more
	 * do not decode). */
	for (int pad = 1; pad <= 9; pad++) {
		a = a_default(p.ticks);
		a_body(&body, &a);
		r.n = 0;
		frame_record(&r, &body, 0, pad);
		expect(&p, &r, 0, "non-shortest Size");
		for (int field = 0; field < 3; field++) {
			rbuf b2 = { .n = 0 };
			put_uv(&b2, A_ID, field == 0 ? pad : 0);
			put_uv(&b2, a.ticks, field == 1 ? pad : 0);
			put_raw(&b2, body.b + 1 + (size_t)rec_varint_len(a.ticks),
				body.n - 1 - (size_t)rec_varint_len(a.ticks));
			if (field == 2) { /* the Duration, 250: two bytes */
				b2.n = 0;
				put_uv(&b2, A_ID, 0);
				put_uv(&b2, a.ticks, 0);
				put_uv(&b2, a.dur, pad);
				put_raw(&b2, body.b + 1 + rec_varint_len(a.ticks) + 2,
					body.n - 1 - rec_varint_len(a.ticks) - 2);
			}
			r.n = 0;
			frame_record(&r, &b2, 0, 0);
			snprintf(what, sizeof what, "non-shortest field %d, %d extra bytes", field, pad);
			expect(&p, &r, 0, what);
		}
	}
	{
		/* A 10-byte varint whose last byte carries more than bit 63. */
		static const uint8_t over[10] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
						  0xFF, 0xFF, 0xFF, 0xFF, 0x02 };
		a = a_default(p.ticks);
		a_body(&body, &a);
		rbuf b2 = { .n = 0 };
		put_uv(&b2, A_ID, 0);
		put_raw(&b2, over, sizeof over);
		put_raw(&b2, body.b + 1 + rec_varint_len(a.ticks), body.n - 1 - rec_varint_len(a.ticks));
		r.n = 0;
		frame_record(&r, &b2, 0, 0);
		expect(&p, &r, 0, "Ticks overflowing 64 bits");
	}

	/* Size against the fields: trailing bytes are kept; a Size that cuts the
	 * last field (a truncated record) or any before it is rejected. */
	a = a_default(p.ticks);
	a_body(&body, &a);
	for (int adj = -(int)body.n; adj <= 3; adj++) {
		r.n = 0;
		if (adj > 0) {
			rbuf b2 = body;
			for (int i = 0; i < adj; i++)
				b2.b[b2.n++] = (uint8_t)(0x11 * (i + 1));
			frame_record(&r, &b2, 0, 0);
		} else {
			frame_record(&r, &body, adj, 0);
		}
		snprintf(what, sizeof what, "Size %+d against the fields", adj);
		/* A short Size makes the rest of the record the batch's next
		 * record, which both must judge alike; the record itself fails. */
		if (adj >= 0)
			expect(&p, &r, 1, what);
		else if (take_both(&p, r.b, r.n))
			fail_msg("%s: taken", what);
	}
	/* The batch ending inside the record (Size past the bytes left). */
	a = a_default(p.ticks);
	a_record(&r, &a);
	{
		int x = rec_w_take_checked(p.fast, r.b, r.n - 4);
		int y = rec_w_take_checked(p.slow, r.b, r.n - 4);
		assert_int_equal(x, 0);
		assert_int_equal(y, 0);
	}
	/* A length field running past the record, a fixed field cut. */
	a = a_default(p.ticks);
	a.text_len = 40;
	a_record(&r, &a);
	r.n -= 40;
	r.b[0] = (uint8_t)(r.b[0] - 40);
	expect(&p, &r, 0, "length past the record");
	a = a_default(p.ticks);
	a.blob_len = 0;
	a.text_len = 0;
	a_body(&body, &a);
	r.n = 0;
	frame_record(&r, &body, -6, 0); /* inside the f64 */
	assert_int_equal(take_both(&p, r.b, r.n), 0);

	/* Types and references. */
	a = a_default(p.ticks);
	a_body(&body, &a);
	body.b[0] = 4; /* no type 4 */
	r.n = 0;
	frame_record(&r, &body, 0, 0);
	expect(&p, &r, 0, "unknown type");
	body.b[0] = 0;
	r.n = 0;
	frame_record(&r, &body, 0, 0);
	expect(&p, &r, 0, "type 0");
	static const struct {
		int which;
		uint64_t id;
		int ok;
	} refs[] = { { 0, 7, 0 }, { 0, 200, 1 }, { 1, 6, 0 }, { 1, 0, 1 }, { 2, 999, 0 },
		     { 2, 1000, 1 }, { 2, 0, 1 }, { 3, 3, 0 }, { 3, 200, 1 }, { 4, 5, 1 }, { 4, 9, 0 } };
	for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
		a = a_default(p.ticks);
		switch (refs[i].which) {
		case 0: a.thread = refs[i].id; break;
		case 1: a.stack = refs[i].id; break;
		case 2: a.name = refs[i].id; break;
		case 3: a.other = refs[i].id; break;
		default: a.where = refs[i].id; break;
		}
		a_record(&r, &a);
		snprintf(what, sizeof what, "reference %d to id %llu", refs[i].which,
			 (unsigned long long)refs[i].id);
		expect(&p, &r, refs[i].ok, what);
	}
	/* A type without fields; a Size of 0 and 1. */
	r.n = 0;
	put_uv(&r, 2, 0);
	put_uv(&r, C_ID, 0);
	put_uv(&r, 77, 0);
	expect(&p, &r, 1, "type without fields");
	r.n = 0;
	put_uv(&r, 1, 0);
	put_uv(&r, C_ID, 0);
	expect(&p, &r, 0, "Size 1");
	r.n = 0;
	put_uv(&r, 0, 0);
	expect(&p, &r, 0, "Size 0");
	assert_true(p.accepted > 60 && p.rejected > 60);
	pair_close(&p);
}

/* Random valid records, some mutated (a byte changed, inserted or removed,
 * the Size moved), after 0-3 valid ones: the same decisions and bytes,
 * with the records kept in EVENTS (no codec) and cut into the zstd
 * streams as they are taken (most batches of the second). */
static void random_mutations(unsigned codec)
{
	pair p;
	uint64_t seed = 0x9E3779B97F4A7C15ull;
	uint8_t batch[2048];

	pair_open(&p, codec);
	for (int iter = 0; iter < 30000; iter++) {
		size_t len = 0;
		rbuf r;
		int nrec = (int)(seed % 4) + 1;
		for (int k = 0; k < nrec; k++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			uint64_t x = seed >> 11;
			p.ticks += x % 100;
			if (x & 1) {
				arec a = a_default(p.ticks);
				a.ticks = (x & 2) ? p.ticks : p.ticks - (x % 5000);
				a.u[4] = x >> (x % 64);
				a.s[3] = (int64_t)(x >> (x % 60)) * ((x & 4) ? -1 : 1);
				a.u[1] = (x >> 8) & 0xFF;
				a.s[0] = (int64_t)((x >> 16) & 0xFF) - 128;
				a.name = 1 + (x % 20);
				a.thread = (x & 8) ? 200 : 1;
				a.blob_len = (uint8_t)(x % 7);
				a.text_len = (uint8_t)((x >> 4) % 30);
				a_record(&r, &a);
			} else {
				r.n = 0;
				b_record(&r, p.ticks, 1 + ((x >> 3) & 1), 1 + (x % 20), x >> (x % 64),
					 (int64_t)(x >> 20) - (1LL << 42));
			}
			if (k == nrec - 1 && (x >> 40) % 3 == 0) { /* mutate the last one */
				size_t at = (x >> 8) % r.n;
				switch ((x >> 50) % 6) {
				case 0: r.b[at] = (uint8_t)(x >> 32); break;
				case 1: r.b[at] = 0x80; break;
				case 2: r.b[at] = 0x00; break;
				case 3:
					memmove(r.b + at + 1, r.b + at, r.n - at);
					r.b[at] = (uint8_t)(x >> 24);
					r.n++;
					break;
				case 4:
					memmove(r.b + at, r.b + at + 1, r.n - at - 1);
					r.n--;
					break;
				default: r.b[0] = (uint8_t)(r.b[0] + ((x >> 12) & 1 ? 1 : -1)); break;
				}
			}
			memcpy(batch + len, r.b, r.n);
			len += r.n;
		}
		take_both(&p, batch, len);
	}
	assert_true(p.accepted > 10000 && p.rejected > 3000);
	if (codec == REC_CODEC_ZSTD)
		assert_true(p.direct > 20000);
	else
		assert_int_equal(p.direct, 0);
	pair_close(&p);
}

static void t_random_mutations(void **state)
{
	(void)state;
	random_mutations(REC_CODEC_NONE);
	random_mutations(REC_CODEC_ZSTD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_edge_cases),
		cmocka_unit_test(t_random_mutations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
