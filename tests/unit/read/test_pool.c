/* SPDX-License-Identifier: MIT */
/*
 * test_pool.c - pool.c: a chunk's constant pools (strings, threads,
 * modules, frames, stacks) decoded, sorted by id, their references
 * resolved and looked up by id.  A recording made by the real writer
 * with the real compressor, its ids sparse and defined in an order that is
 * not the ids' order, many chunks each carrying only what its events
 * reference: every event's thread (id, OS tid, name), string field and
 * stack (depth, truncation flag, every frame's function, module path,
 * build-id and offsets) is what was defined for the ids it named.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/rec.h"
#include "../../lib/membuf.h"

#define NTHR 40u
#define NMOD 8u
#define NFR 300u
#define NST 120u
#define NEV 4000u

/* Sparse ids: a pool's k-th entry; defined in a scrambled order. */
static uint64_t str_id(uint64_t k) { return 1000003u * (k + 1) + 17; }
static uint64_t thr_id(uint64_t k) { return 7919u * (k + 1); }
static uint64_t mod_id(uint64_t k) { return 50000u + 999u * k; }
static uint64_t fr_id(uint64_t k) { return (k + 1) * 0x10001u; }
static uint64_t st_id(uint64_t k) { return 3u + 104729u * k; }
/* A permutation of 0..n-1 for n prime to 7 (every pool size here is). */
static uint64_t scramble(uint64_t i, uint64_t n) { return (i * 7u + 3u) % n; }

/* Strings: 0..NTHR-1 thread names, then module paths, build-ids, function
 * names, then event strings. */
#define S_THR 0u
#define S_MOD (S_THR + NTHR)
#define S_BID (S_MOD + NMOD)
#define S_FN (S_BID + NMOD)
#define S_EV (S_FN + NFR)
#define NSTR (S_EV + 51u) /* 407: prime to 7 */

static void str_text(uint64_t k, char *s, size_t cap)
{
	if (k < S_MOD)
		snprintf(s, cap, "worker-%llu", (unsigned long long)k);
	else if (k < S_BID)
		snprintf(s, cap, "/opt/lib/libm%llu.so", (unsigned long long)(k - S_MOD));
	else if (k < S_FN)
		snprintf(s, cap, "%08llxbeef", (unsigned long long)(k - S_BID));
	else if (k < S_EV)
		snprintf(s, cap, "function_%llu", (unsigned long long)(k - S_FN));
	else
		snprintf(s, cap, "event string %llu", (unsigned long long)(k - S_EV));
}

static uint32_t st_depth(uint64_t k) { return 1 + (uint32_t)(k % 17); }
static uint64_t st_frame(uint64_t k, uint32_t j) { return (k * 31u + j * 7u) % NFR; }
static uint64_t fr_mod(uint64_t f) { return f % NMOD; }

static const rec_field fields[] = { { "s", "", "", REC_TYPE_STRING, 0 },
				    { "k", "", "", REC_TYPE_U64, 0 } };

static membuf make_rec(void)
{
	membuf m = { 0 };
	rec_sink sk = { mem_write, NULL, &m };
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.codec = REC_CODEC_ZSTD;
	o.anchor_wall_ns = 1000;
	o.anchor_ticks = 1;
	rec_writer *w;
	assert_int_equal(rec_writer_open(&w, &sk, &o), REC_OK);
	rec_type t = { 1, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "p.T", "", "", "", 2, fields };
	assert_int_equal(rec_writer_add_type(w, &t), REC_OK);
	char s[64];
	for (uint64_t i = 0; i < NSTR; i++) {
		uint64_t k = scramble(i, NSTR);
		str_text(k, s, sizeof s);
		assert_int_equal(rec_writer_define_string(w, str_id(k), s, strlen(s)), REC_OK);
	}
	for (uint64_t i = 0; i < NTHR; i++) {
		uint64_t k = scramble(i, NTHR);
		assert_int_equal(rec_writer_define_thread(w, thr_id(k), 20000 + k, str_id(S_THR + k)),
				 REC_OK);
	}
	for (uint64_t k = NMOD; k-- > 0;)
		assert_int_equal(rec_writer_define_module(w, mod_id(k), str_id(S_MOD + k),
							  str_id(S_BID + k), 0x400000 + k * 0x100000),
				 REC_OK);
	for (uint64_t i = 0; i < NFR; i++) {
		uint64_t k = scramble(i, NFR);
		assert_int_equal(rec_writer_define_frame(w, fr_id(k), str_id(S_FN + k),
							 mod_id(fr_mod(k)), 0x1000 + k * 16, k % 64),
				 REC_OK);
	}
	for (uint64_t i = 0; i < NST; i++) {
		uint64_t k = scramble(i, NST), frames[32];
		for (uint32_t j = 0; j < st_depth(k); j++)
			frames[j] = fr_id(st_frame(k, j));
		rec_status ds = rec_writer_define_stack(w, st_id(k), k % 5 == 0 ? REC_STACK_TRUNCATED : 0,
							frames, st_depth(k));
		if (ds != REC_OK)
			fail_msg("define_stack %llu: %s", (unsigned long long)k, rec_writer_errmsg(w));
	}
	for (uint64_t i = 0; i < NEV; i++) {
		assert_int_equal(rec_writer_begin(w, 1, 10 + i, 0, thr_id(i % NTHR), st_id(i * 13 % NST)),
				 REC_OK);
		assert_int_equal(rec_writer_put_u64(w, str_id(S_EV + i % 51)), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, i), REC_OK);
		assert_int_equal(rec_writer_end(w), REC_OK);
		if (i % 700 == 699)
			assert_int_equal(rec_writer_flush(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
	return m;
}

static void t_pools_resolved(void **state)
{
	(void)state;
	membuf m = make_rec();
	rec_reader *r;
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.flags = REC_READ_VERIFY;
	assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "pools", &ro), REC_OK);
	rec_event ev;
	rec_status st;
	uint64_t n = 0;
	char s[64];
	while ((st = rec_reader_next_event(r, &ev)) == REC_OK) {
		uint64_t i = ev.values[1].v.u;
		assert_int_equal(i, n);
		/* the thread and its name */
		assert_non_null(ev.thread);
		assert_int_equal(ev.thread->id, thr_id(i % NTHR));
		assert_int_equal(ev.thread->os_tid, 20000 + i % NTHR);
		str_text(S_THR + i % NTHR, s, sizeof s);
		assert_string_equal(ev.thread->name, s);
		/* the string field */
		str_text(S_EV + i % 51, s, sizeof s);
		assert_int_equal(ev.values[0].v.s.len, strlen(s));
		assert_memory_equal(ev.values[0].v.s.ptr, s, strlen(s));
		/* the stack, its frames and their modules */
		const uint64_t k = i * 13 % NST;
		assert_non_null(ev.stack);
		assert_int_equal(ev.stack->id, st_id(k));
		assert_int_equal(ev.stack->depth, st_depth(k));
		assert_int_equal(ev.stack->flags, k % 5 == 0 ? REC_STACK_TRUNCATED : 0);
		for (uint32_t j = 0; j < st_depth(k); j++) {
			const rec_frame *f = ev.stack->frames[j];
			const uint64_t fk = st_frame(k, j);
			assert_non_null(f);
			assert_int_equal(f->id, fr_id(fk));
			str_text(S_FN + fk, s, sizeof s);
			assert_string_equal(f->function, s);
			assert_int_equal(f->module_offset, 0x1000 + fk * 16);
			assert_int_equal(f->function_offset, fk % 64);
			assert_non_null(f->module);
			assert_int_equal(f->module->id, mod_id(fr_mod(fk)));
			str_text(S_MOD + fr_mod(fk), s, sizeof s);
			assert_string_equal(f->module->path, s);
			str_text(S_BID + fr_mod(fk), s, sizeof s);
			assert_string_equal(f->module->build_id, s);
			assert_int_equal(f->module->base, 0x400000 + fr_mod(fk) * 0x100000);
		}
		n++;
	}
	assert_int_equal(st, REC_END);
	rec_reader_stats rs;
	rec_reader_get_stats(r, &rs);
	rec_reader_close(r);
	assert_int_equal(n, NEV);
	assert_true(rs.chunks >= NEV / 700);
	assert_int_equal(rs.chunks_damaged, 0);
	free(m.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_pools_resolved),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
