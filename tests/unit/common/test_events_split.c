/* SPDX-License-Identifier: MIT */
/*
 * Unit tests: the split EVENTS layout (common/events_split.c).  A section of
 * records of three kinds of type (thread and stack, like rec.CPUSample;
 * duration, thread and stack, like rec.LockWait; no header fields), with
 * time deltas of one to ten bytes, some negative, and fields shorter and
 * longer than the join's 16-byte moves, is cut into the four streams and
 * joined back byte for byte.  The sparse join writes only the selected
 * types' records, each at its offset in the section, with an entry per
 * record whose time is the record's timestamp (the chain of deltas through
 * the records passed over); its bounds and order flag are those of the
 * entries; too little room for the entries is an overflow, not damage; and
 * where the join refuses streams that do not add up, so does the sparse
 * join with every type selected (with one selected, whatever the join
 * accepts), without reading or writing outside its buffers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"

#define NREC 3000
#define START_TICKS 1000000ull

/* Type_Id -> flags: 1 thread and stack, 2 duration, thread and stack, 3 none */
static const uint8_t tflags[4] = {
	0,
	REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK | REC_EVS_KNOWN,
	REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK | REC_EVS_KNOWN,
	REC_EVS_KNOWN,
};

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

typedef struct section {
	uint8_t *p;
	size_t len;
	uint32_t n;
	uint32_t off[NREC];    /* each record's offset */
	uint32_t id[NREC];
	uint64_t ticks[NREC];  /* its timestamp */
} section;

/* A section of NREC records (about 6 in 10 of type 1, 3 of type 2, 1 of 3). */
static void make_section(section *s)
{
	s->p = malloc((size_t)NREC * 80);
	assert_non_null(s->p);
	s->len = 0;
	s->n = NREC;
	uint64_t ticks = START_TICKS;
	for (uint32_t i = 0; i < NREC; i++) {
		uint64_t r = next_rand();
		uint32_t id = r % 10 < 6 ? 1 : r % 10 < 9 ? 2 : 3;
		/* deltas of 1 to 10 bytes; every 17th record goes back in time */
		int64_t d = (int64_t)((r >> 8) % 300);
		if (i % 97 == 5)
			d = (int64_t)(r >> 4); /* a large one */
		if (i % 17 == 3)
			d = -(int64_t)((r >> 20) % 500);
		ticks += (uint64_t)d;
		uint8_t rec[64];
		size_t n = 0;
		n += rec_varint_put(rec + n, id);
		n += rec_varint_put(rec + n, rec_zigzag(d));
		if (tflags[id] & REC_EVENT_HAS_DURATION)
			n += rec_varint_put(rec + n, (r >> 30) % 100000);
		if (tflags[id] & REC_EVENT_HAS_THREAD)
			n += rec_varint_put(rec + n, 1 + (r >> 40) % 200);
		if (tflags[id] & REC_EVENT_HAS_STACK)
			n += rec_varint_put(rec + n, (r >> 48) % 3000);
		size_t fl = (size_t)(next_rand() % 30); /* fields: 0-29 bytes */
		for (size_t k = 0; k < fl; k++)
			rec[n++] = (uint8_t)next_rand();
		s->off[i] = (uint32_t)s->len;
		s->id[i] = id;
		s->ticks[i] = ticks;
		s->len += rec_varint_put(s->p + s->len, n);
		memcpy(s->p + s->len, rec, n);
		s->len += n;
	}
}

/* The streams of s one after the other in one buffer with
 * REC_EVS_READ_SLACK readable bytes after the last, as the reader has
 * them. */
typedef struct streams {
	uint8_t *buf;
	const uint8_t *s[REC_EVS_N];
	size_t len[REC_EVS_N];
} streams;

static void make_streams(const section *sec, streams *st)
{
	rec_buf out[REC_EVS_N];
	memset(out, 0, sizeof out);
	rec_evs_types ty = { tflags, 4, NULL, NULL };
	assert_true(rec_events_split(sec->p, sec->p + sec->len, &ty, out));
	size_t total = 0;
	for (int i = 0; i < REC_EVS_N; i++)
		total += out[i].len;
	st->buf = calloc(1, total + REC_EVS_READ_SLACK);
	assert_non_null(st->buf);
	uint8_t *q = st->buf;
	for (int i = 0; i < REC_EVS_N; i++) {
		memcpy(q, out[i].data, out[i].len);
		st->s[i] = q;
		st->len[i] = out[i].len;
		q += out[i].len;
		rec_buf_free(&out[i]);
	}
}

/* The section and its streams every test reads (setup). */
static section g_sec;
static streams g_st;

static void t_join_round_trip(void **state)
{
	(void)state;
	const section *sec = &g_sec;
	const streams *st = &g_st;
	rec_evs_types ty = { tflags, 4, NULL, NULL };
	uint8_t *dst = malloc(sec->len + REC_EVS_SLACK);
	assert_non_null(dst);
	uint32_t bad = 0;
	assert_null(rec_events_join(st->s, st->len, sec->n, &ty, dst, sec->len, &bad));
	assert_memory_equal(dst, sec->p, sec->len);
	free(dst);
}

/* Sparse join of sec with the types where sel[id] is set; checks every
 * entry (where the record stands in the section, where it was written:
 * one after the other from dst) and the bytes of every selected record,
 * and that nothing was written after the last. */
static void check_sparse(const section *sec, const streams *st, const bool sel[4])
{
	rec_evs_types ty = { tflags, 4, NULL, NULL };
	uint8_t act[4];
	for (int i = 0; i < 4; i++)
		act[i] = sel[i] ? 2 : 1;
	uint8_t *dst = malloc(sec->len + REC_EVS_SLACK);
	rec_evs_ent *ents = malloc(sizeof(rec_evs_ent) * NREC);
	assert_non_null(dst);
	assert_non_null(ents);
	memset(dst, 0xEE, sec->len + REC_EVS_SLACK);
	rec_evs_sparse sp = { .act = act, .nact = 4, .start_ticks = START_TICKS, .ents = ents,
			      .cap = NREC };
	assert_true(rec_events_join_sparse(st->s, st->len, sec->n, &ty, dst, sec->len, &sp));
	assert_false(sp.overflow);
	size_t k = 0, w = 0;
	uint64_t lo = 0, hi = 0;
	bool sorted = true;
	for (uint32_t i = 0; i < sec->n; i++) {
		if (!sel[sec->id[i]])
			continue;
		assert_true(k < sp.k);
		assert_int_equal(ents[k].at, sec->off[i]);
		assert_int_equal(ents[k].off, w);
		assert_int_equal(ents[k].ticks, sec->ticks[i]);
		size_t end = i + 1 < sec->n ? sec->off[i + 1] : sec->len;
		assert_memory_equal(dst + w, sec->p + sec->off[i], end - sec->off[i]);
		w += end - sec->off[i];
		uint64_t t = sec->ticks[i];
		if (k && t < hi)
			sorted = false;
		if (!k || t < lo)
			lo = t;
		if (!k || t > hi)
			hi = t;
		k++;
	}
	assert_int_equal(sp.k, k);
	/* past the records written, only the copies' slack was touched */
	for (size_t i = w + REC_EVS_SLACK; i < sec->len + REC_EVS_SLACK; i++)
		assert_int_equal(dst[i], 0xEE);
	if (k) {
		assert_int_equal(sp.lo, lo);
		assert_int_equal(sp.hi, hi);
	}
	assert_int_equal(sp.sorted, sorted);
	/* one entry less room than selected records: an overflow */
	if (k) {
		sp.cap = k - 1;
		assert_false(rec_events_join_sparse(st->s, st->len, sec->n, &ty, dst, sec->len, &sp));
		assert_true(sp.overflow);
	}
	free(ents);
	free(dst);
}

static void t_sparse_selections(void **state)
{
	(void)state;
	const section *sec = &g_sec;
	const streams *st = &g_st;
	static const bool sels[][4] = {
		{ false, false, true, false }, /* the lock waits alone */
		{ false, true, false, false },
		{ false, false, false, true },
		{ false, true, true, true },   /* everything */
		{ false, false, false, false }, /* nothing */
	};
	size_t unsorted = 0;
	for (size_t i = 0; i < sizeof sels / sizeof sels[0]; i++)
		check_sparse(sec, st, sels[i]);
	/* the section goes back in time between records of one type too (the
	 * sorted flag above was tested both ways) */
	for (uint32_t i = 1; i < sec->n; i++)
		unsorted += sec->ticks[i] < sec->ticks[i - 1];
	assert_true(unsorted > 0);
}

/* Sparse joins that digest type dig (nf fields at most dmax0, dmax1) and
 * select type 3: each record's digest (thread, stack, fields) made from its
 * bytes in the section
 * (rec_evs_digest_body() after its frame) is the oracle: the join gives
 * exactly those digests, in file order with the records' times, or fails
 * when one of them does not hold (the fields are random bytes); with one
 * digest less room, an overflow. */
static void check_digests(const section *sec, const streams *st, uint8_t dig, unsigned nf,
			  uint64_t dmax0, uint64_t dmax1, size_t *held, size_t *failed)
{
	rec_evs_types ty = { tflags, 4, NULL, NULL };
	uint8_t act[4] = { 1, 1, 1, 2 };
	act[dig] = 3;
	const rec_evs_digfields df = { nf, { dmax0, dmax1 } };
	rec_evs_dig *want = malloc(sizeof *want * NREC);
	rec_evs_dig *digs = malloc(sizeof *digs * NREC);
	uint8_t *dst = malloc(sec->len + REC_EVS_SLACK);
	rec_evs_ent *ents = malloc(sizeof(rec_evs_ent) * NREC);
	assert_non_null(want);
	assert_non_null(digs);
	assert_non_null(dst);
	assert_non_null(ents);
	size_t nwant = 0, nsel = 0, stacks = 0;
	bool ok = true;
	for (uint32_t i = 0; i < sec->n; i++) {
		nsel += sec->id[i] == 3;
		if (sec->id[i] != dig)
			continue;
		const uint8_t *p = sec->p + sec->off[i], *end = sec->p + sec->len;
		uint64_t size, id, d;
		assert_true(rec_varint_get(&p, end, &size));
		const uint8_t *rend = p + size;
		assert_true(rec_varint_get(&p, rend, &id) && rec_varint_get(&p, rend, &d));
		if (!rec_evs_digest_body(p, rend, tflags[dig], &df, &want[nwant]))
			ok = false;
		want[nwant++].ticks = sec->ticks[i];
	}
	rec_evs_sparse sp = { .act = act, .nact = 4, .start_ticks = START_TICKS, .ents = ents,
			      .cap = NREC, .digs = digs, .dcap = NREC, .dig = df };
	bool got = rec_events_join_sparse(st->s, st->len, sec->n, &ty, dst, sec->len, &sp);
	assert_int_equal(got, ok);
	assert_false(sp.overflow);
	if (ok) {
		(*held)++;
		assert_int_equal(sp.dk, nwant);
		assert_int_equal(sp.k, nsel);
		for (size_t k = 0; k < nwant; k++) {
			assert_int_equal(digs[k].ticks, want[k].ticks);
			assert_int_equal(digs[k].thread, want[k].thread);
			assert_int_equal(digs[k].stack, want[k].stack);
			assert_int_equal(digs[k].f0, want[k].f0);
			assert_int_equal(digs[k].f1, want[k].f1);
			assert_true(want[k].thread >= 1 && want[k].thread <= 200);
			assert_true(want[k].stack < 3000);
			stacks += want[k].stack != 0;
		}
		sp.dcap = nwant - 1;
		assert_false(rec_events_join_sparse(st->s, st->len, sec->n, &ty, dst, sec->len, &sp));
		assert_true(sp.overflow);
		assert_true(stacks > nwant / 2); /* the stacks are read, not left 0 */
	} else {
		(*failed)++;
	}
	free(ents);
	free(dst);
	free(digs);
	free(want);
}

static void t_sparse_digests(void **state)
{
	(void)state;
	size_t held = 0, failed = 0;
	for (uint8_t dig = 1; dig <= 2; dig++)
		for (unsigned nf = 0; nf <= 2; nf++) {
			check_digests(&g_sec, &g_st, dig, nf, UINT64_MAX, UINT32_MAX, &held, &failed);
			check_digests(&g_sec, &g_st, dig, nf, 200, 100, &held, &failed);
		}
	/* both outcomes seen: the thread alone always holds; random field
	 * bytes make a digest fail somewhere */
	assert_true(held >= 2);
	assert_true(failed >= 1);
	/* the oracle itself: a field missing, past its max, a varint cut */
	const rec_evs_digfields two = { 2, { 300, 5 } }, one = { 1, { 300, 5 } },
				none = { 0, { 300, 5 } };
	rec_evs_dig d;
	const uint8_t full[] = { 9, 0xAC, 0x02, 5 }; /* thread 9, 300, 5 */
	assert_true(rec_evs_digest_body(full, full + 4, REC_EVENT_HAS_THREAD, &two, &d));
	assert_int_equal(d.thread, 9);
	assert_int_equal(d.f0, 300);
	assert_int_equal(d.f1, 5);
	assert_false(rec_evs_digest_body(full, full + 3, REC_EVENT_HAS_THREAD, &two, &d));
	assert_true(rec_evs_digest_body(full, full + 3, REC_EVENT_HAS_THREAD, &one, &d));
	assert_false(rec_evs_digest_body(full, full + 2, REC_EVENT_HAS_THREAD, &one, &d));
	const rec_evs_digfields small = { 2, { 299, 5 } };
	assert_false(rec_evs_digest_body(full, full + 4, REC_EVENT_HAS_THREAD, &small, &d));
	const rec_evs_digfields small1 = { 2, { 300, 4 } };
	assert_false(rec_evs_digest_body(full, full + 4, REC_EVENT_HAS_THREAD, &small1, &d));
	const uint8_t big_thread[] = { 0x80, 0x80, 0x80, 0x80, 0x10 }; /* 2^32 */
	assert_false(rec_evs_digest_body(big_thread, big_thread + 5, REC_EVENT_HAS_THREAD, &none, &d));
	/* a Stack after the Thread: its id, at most UINT32_MAX */
	const unsigned ts = REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK;
	assert_true(rec_evs_digest_body(full, full + 4, ts, &one, &d));
	assert_int_equal(d.thread, 9);
	assert_int_equal(d.stack, 300);
	assert_int_equal(d.f0, 5);
	const uint8_t big_stack[] = { 9, 0x80, 0x80, 0x80, 0x80, 0x10 };
	assert_false(rec_evs_digest_body(big_stack, big_stack + 6, ts, &none, &d));
	assert_true(rec_evs_digest_body(big_stack, big_stack + 1, REC_EVENT_HAS_THREAD, &none, &d));
	assert_int_equal(d.stack, 0);
}

/* A record of a type without metadata, or of an id the selection does not
 * cover, is refused. */
static void t_sparse_unknown_type(void **state)
{
	(void)state;
	const section *sec = &g_sec;
	const streams *st = &g_st;
	uint8_t act[4] = { 1, 1, 2, 1 };
	uint8_t *dst = malloc(sec->len + REC_EVS_SLACK);
	rec_evs_ent *ents = malloc(sizeof(rec_evs_ent) * NREC);
	rec_evs_sparse sp = { .act = act, .nact = 3, .start_ticks = START_TICKS, .ents = ents,
			      .cap = NREC };
	rec_evs_types ty = { tflags, 4, NULL, NULL };
	assert_false(rec_events_join_sparse(st->s, st->len, sec->n, &ty, dst, sec->len, &sp));
	assert_false(sp.overflow);
	const uint8_t no3[4] = { 0, tflags[1], tflags[2], 0 };
	rec_evs_types ty3 = { no3, 4, NULL, NULL };
	sp.nact = 4;
	assert_false(rec_events_join_sparse(st->s, st->len, sec->n, &ty3, dst, sec->len, &sp));
	free(ents);
	free(dst);
}

/* Streams spoiled one byte or one length at a time: with every type
 * selected the sparse join accepts exactly what the join accepts, and
 * neither reads or writes outside its buffers (ASan, valgrind). */
static void t_sparse_refuses_what_join_refuses(void **state)
{
	(void)state;
	const section *sec = &g_sec;
	const streams *st = &g_st;
	rec_evs_types ty = { tflags, 4, NULL, NULL };
	uint8_t act[4] = { 1, 2, 2, 2 };
	uint8_t *dst = malloc(sec->len + REC_EVS_SLACK);
	rec_evs_ent *ents = malloc(sizeof(rec_evs_ent) * NREC);
	size_t total = 0;
	for (int i = 0; i < REC_EVS_N; i++)
		total += st->len[i];
	unsigned refused = 0, partial_differs = 0;
	for (int round = 0; round < 400; round++) {
		streams t = *st;
		t.buf = malloc(total + REC_EVS_READ_SLACK);
		assert_non_null(t.buf);
		memcpy(t.buf, st->buf, total + REC_EVS_READ_SLACK);
		for (int i = 0; i < REC_EVS_N; i++)
			t.s[i] = t.buf + (st->s[i] - st->buf);
		uint64_t r = next_rand();
		int which = (int)(r % REC_EVS_N);
		if (round % 4 == 3 && t.len[which]) {
			t.len[which]--; /* a stream one byte short */
		} else {
			size_t at = (size_t)((r >> 8) % (st->len[which] ? st->len[which] : 1));
			((uint8_t *)t.s[which])[at] ^= (uint8_t)(1u << ((r >> 40) % 8));
		}
		uint32_t bad;
		bool joined = rec_events_join(t.s, t.len, sec->n, &ty, dst, sec->len, &bad) == NULL;
		rec_evs_sparse sp = { .act = act, .nact = 4, .start_ticks = START_TICKS,
				      .ents = ents, .cap = NREC };
		bool sparse = rec_events_join_sparse(t.s, t.len, sec->n, &ty, dst, sec->len, &sp);
		assert_int_equal(sparse, joined);
		/* with the lock waits alone selected, the records passed over
		 * are only framed: what the join accepts, it accepts */
		uint8_t act2[4] = { 1, 1, 2, 1 };
		sp = (rec_evs_sparse){ .act = act2, .nact = 4, .start_ticks = START_TICKS,
				       .ents = ents, .cap = NREC };
		bool partial = rec_events_join_sparse(t.s, t.len, sec->n, &ty, dst, sec->len, &sp);
		if (joined)
			assert_true(partial && sp.k > 0);
		partial_differs += partial != joined;
		refused += !joined;
		free(t.buf);
	}
	assert_true(refused > 100); /* the spoiling did spoil */
	/* (where it differs, it accepted a record passed over whose Thread
	 * does not end inside the record: framing holds, nothing reads it) */
	assert_true(partial_differs < refused);
	free(ents);
	free(dst);
}

static int setup(void **state)
{
	(void)state;
	make_section(&g_sec);
	make_streams(&g_sec, &g_st);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(g_st.buf);
	free(g_sec.p);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_join_round_trip),
		cmocka_unit_test(t_sparse_selections),
		cmocka_unit_test(t_sparse_digests),
		cmocka_unit_test(t_sparse_unknown_type),
		cmocka_unit_test(t_sparse_refuses_what_join_refuses),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
