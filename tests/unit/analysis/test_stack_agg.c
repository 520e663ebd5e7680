/* SPDX-License-Identifier: MIT */
/*
 * test_stack_agg.c - stack aggregation (rec/stack_agg.h) on recordings written with
 * the real writer (zstd, several chunks) and read back with the real reader:
 * exact weights, order, frame names, filters, reverse, per-thread roots, the
 * time window, two columns, per-chunk caching when stack ids change meaning,
 * and memory that grows with distinct stacks, not events.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/rec.h"
#include "rec/stack_agg.h"
#include "../../lib/membuf.h"

/* ---- a recording in memory (membuf.h) ------------------------------------ */

enum { T_SAMPLE = 21, T_NOSTACK = 22 };
#define T0 1000000000000ull  /* ticks of the first event */
#define WALL0 1796206443000000000ll

static const rec_field f_sample[] = {
	{ "weight", "Weight", "", REC_TYPE_U64, REC_UNIT_COUNT },
};

typedef struct rec_w {
	rec_writer *w;
	uint64_t str;
} rec_w;

static uint64_t def_str(rec_w *r, const char *s)
{
	uint64_t id = ++r->str;
	assert_int_equal(rec_writer_define_string(r->w, id, s, strlen(s)), REC_OK);
	return id;
}

static void open_writer(rec_w *r, membuf *m, uint64_t run_id, uint32_t chunk_size)
{
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.run_id = run_id;
	o.pid = 77;
	o.process_start_ns = WALL0;
	o.anchor_wall_ns = WALL0;
	o.anchor_ticks = T0;
	o.chunk_events_size = chunk_size;
	rec_sink sink = { mem_write, NULL, m };
	r->str = 0;
	assert_int_equal(rec_writer_open(&r->w, &sink, &o), REC_OK);
	rec_type t = { T_SAMPLE, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "t.Sample", "", "", "t",
		       1, f_sample };
	assert_int_equal(rec_writer_add_type(r->w, &t), REC_OK);
	rec_type t2 = { T_NOSTACK, REC_EVENT_HAS_THREAD, "t.NoStack", "", "", "t", 1, f_sample };
	assert_int_equal(rec_writer_add_type(r->w, &t2), REC_OK);
}

/* frames: ids 1..n with the given function names ("" = none, module 1) */
static void def_frames(rec_w *r, const char *const *fn, size_t n)
{
	uint64_t mpath = def_str(r, "/usr/lib/libdemo.so.1");
	assert_int_equal(rec_writer_define_module(r->w, 1, mpath, 0, 0x10000), REC_OK);
	for (size_t i = 0; i < n; i++) {
		uint64_t s = fn[i][0] ? def_str(r, fn[i]) : 0;
		assert_int_equal(rec_writer_define_frame(r->w, i + 1, s, 1, 0x100 * (i + 1), 4),
				 REC_OK);
	}
}

static void sample(rec_w *r, uint64_t ticks, uint64_t thread, uint64_t stack, uint64_t weight)
{
	assert_int_equal(rec_writer_begin(r->w, T_SAMPLE, ticks, 0, thread, stack), REC_OK);
	assert_int_equal(rec_writer_put_u64(r->w, weight), REC_OK);
	assert_int_equal(rec_writer_end(r->w), REC_OK);
}

/* Read every event of m into a, weight = the "weight" field. */
static void feed(rec_stackagg *a, const membuf *m, unsigned column)
{
	rec_reader *rd = NULL;
	assert_int_equal(rec_reader_open_mem(&rd, m->p, m->len, "mem", NULL), REC_OK);
	assert_int_equal(rec_stackagg_begin_input(a, column), REC_OK);
	rec_event ev;
	rec_status st;
	while ((st = rec_reader_next_event(rd, &ev)) == REC_OK)
		assert_int_equal(rec_stackagg_add_event(a, &ev, ev.values[0].v.u), REC_OK);
	assert_int_equal(st, REC_END);
	rec_reader_close(rd);
}

/* The iteration as text: "a;b;c w0 w1 t0 t1\n" per stack. */
static char *dump(rec_stackagg *a)
{
	size_t cap = 1 << 16, len = 0;
	char *out = malloc(cap);
	assert_non_null(out);
	out[0] = 0;
	assert_int_equal(rec_stackagg_rewind(a), REC_OK);
	rec_stackagg_stack s;
	rec_status st;
	while ((st = rec_stackagg_next(a, &s)) == REC_OK) {
		for (size_t i = 0; i < s.depth; i++)
			len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? ";" : "", s.frames[i]);
		len += (size_t)snprintf(out + len, cap - len, " %llu %llu %llu %llu\n",
					(unsigned long long)s.weight[0], (unsigned long long)s.weight[1],
					(unsigned long long)s.total[0], (unsigned long long)s.total[1]);
		assert_true(len < cap);
	}
	assert_int_equal(st, REC_END);
	return out;
}

/* The standard recording: frames main, run, work, hash, "", "a;b\nc", and
 * stacks (leaf first):
 *   1: hash work run main      2: work run main    3: run main
 *   4: (no function) main      5: "a;b\nc" main    6: hash work (TRUNCATED)
 * threads 1 "main" tid 10, 2 unnamed tid 11; events every 1 ms from T0. */
static void write_standard(membuf *m, uint32_t chunk_size)
{
	rec_w r;
	open_writer(&r, m, 0x5eed, chunk_size);
	static const char *const fn[] = { "main", "run", "work", "hash", "", "a;b\nc" };
	def_frames(&r, fn, 6);
	assert_int_equal(rec_writer_define_thread(r.w, 1, 10, def_str(&r, "main")), REC_OK);
	assert_int_equal(rec_writer_define_thread(r.w, 2, 11, 0), REC_OK);
	const uint64_t s1[] = { 4, 3, 2, 1 }, s2[] = { 3, 2, 1 }, s3[] = { 2, 1 }, s4[] = { 5, 1 },
		       s5[] = { 6, 1 }, s6[] = { 4, 3 };
	assert_int_equal(rec_writer_define_stack(r.w, 1, 0, s1, 4), REC_OK);
	assert_int_equal(rec_writer_define_stack(r.w, 2, 0, s2, 3), REC_OK);
	assert_int_equal(rec_writer_define_stack(r.w, 3, 0, s3, 2), REC_OK);
	assert_int_equal(rec_writer_define_stack(r.w, 4, 0, s4, 2), REC_OK);
	assert_int_equal(rec_writer_define_stack(r.w, 5, 0, s5, 2), REC_OK);
	assert_int_equal(rec_writer_define_stack(r.w, 6, REC_STACK_TRUNCATED, s6, 2), REC_OK);
	/* event k at T0 + k ms: (thread, stack, weight) */
	static const uint64_t evs[][3] = {
		{ 1, 1, 10 }, { 2, 1, 5 }, { 1, 2, 7 }, { 1, 3, 3 }, { 2, 4, 2 },
		{ 1, 5, 1 },  { 2, 6, 4 }, { 1, 1, 20 }, { 2, 2, 6 }, { 1, 0, 99 },
	};
	uint64_t k = 0;
	for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++, k++)
		sample(&r, T0 + k * 1000000ull, evs[i][0], evs[i][1], evs[i][2]);
	/* a type without stacks is "no stack" too */
	assert_int_equal(rec_writer_begin(r.w, T_NOSTACK, T0 + k * 1000000ull, 0, 1, 0), REC_OK);
	assert_int_equal(rec_writer_put_u64(r.w, 1000), REC_OK);
	assert_int_equal(rec_writer_end(r.w), REC_OK);
	assert_int_equal(rec_writer_close(r.w), REC_OK);
}

static rec_stackagg *open_agg(uint32_t flags)
{
	rec_stackagg_options o = REC_STACKAGG_OPTIONS_INIT;
	o.flags = flags;
	rec_stackagg *a = NULL;
	assert_int_equal(rec_stackagg_open(&a, &o), REC_OK);
	return a;
}

static void t_aggregate_exact(void **state)
{
	(void)state;
	membuf m = { 0 };
	write_standard(&m, 100); /* tiny chunks: stacks and threads in many chunks */
	rec_stackagg *a = open_agg(0);
	feed(a, &m, 0);
	char *d = dump(a);
	assert_string_equal(d,
			    "[truncated];work;hash 4 0 4 0\n"
			    "main;a:b c 1 0 1 0\n"
			    "main;libdemo.so.1+0x500 2 0 2 0\n"
			    "main;run 3 0 51 0\n"
			    "main;run;work 13 0 48 0\n"
			    "main;run;work;hash 35 0 35 0\n");
	rec_stackagg_stats st;
	rec_stackagg_get_stats(a, &st);
	assert_int_equal(st.events, 11);
	assert_int_equal(st.aggregated, 9);
	assert_int_equal(st.no_stack, 2);
	assert_int_equal(st.filtered, 0);
	assert_int_equal(st.outside_window, 0);
	assert_int_equal(st.weight[0], 58);
	assert_int_equal(st.weight[1], 0);
	assert_int_equal(st.stacks, 6);
	/* nodes: main, run, work, hash, a:b c, libdemo, [truncated], work, hash */
	assert_int_equal(st.nodes, 9);
	free(d);
	/* iterating twice gives the same */
	d = dump(a);
	assert_non_null(strstr(d, "main;run;work;hash 35 0 35 0\n"));
	free(d);
	rec_stackagg_close(a);
	free(m.p);
}

/* REC_STACKAGG_FRAME_INFO and rec_stackagg_add_event_pair(): what each name
 * was built from, and a count beside the weight (rec-flame --format pprof). */
static void t_frame_info_pairs(void **state)
{
	(void)state;
	membuf m = { 0 };
	write_standard(&m, 100);
	rec_stackagg *a = open_agg(REC_STACKAGG_THREADS | REC_STACKAGG_FRAME_INFO);
	rec_reader *rd = NULL;
	assert_int_equal(rec_reader_open_mem(&rd, m.p, m.len, "mem", NULL), REC_OK);
	rec_event ev;
	rec_status st;
	while ((st = rec_reader_next_event(rd, &ev)) == REC_OK)
		assert_int_equal(rec_stackagg_add_event_pair(a, &ev, 1, ev.values[0].v.u), REC_OK);
	assert_int_equal(st, REC_END);
	rec_reader_close(rd);
	char *d = dump(a);
	/* column 0 counts the events, column 1 weighs them */
	assert_string_equal(d,
			    "[main tid=10];main;a:b c 1 1 1 1\n"
			    "[main tid=10];main;run 1 3 4 40\n"
			    "[main tid=10];main;run;work 1 7 3 37\n"
			    "[main tid=10];main;run;work;hash 2 30 2 30\n"
			    "[tid=11];[truncated];work;hash 1 4 1 4\n"
			    "[tid=11];main;libdemo.so.1+0x500 1 2 1 2\n"
			    "[tid=11];main;run;work 1 6 2 11\n"
			    "[tid=11];main;run;work;hash 1 5 1 5\n");
	free(d);
	rec_stackagg_stats sts;
	rec_stackagg_get_stats(a, &sts);
	assert_int_equal(sts.weight[0], 9);
	assert_int_equal(sts.weight[1], 58);
	assert_int_equal(sts.stacks, 8);

	rec_stackagg_frame_info fi;
	assert_int_equal(rec_stackagg_name_info(a, "hash", &fi), REC_OK);
	assert_int_equal(fi.kind, REC_STACKAGG_NAME_FRAME);
	assert_string_equal(fi.function, "hash");
	assert_string_equal(fi.module, "/usr/lib/libdemo.so.1");
	assert_string_equal(fi.build_id, "");
	assert_int_equal(fi.module_base, 0x10000);
	assert_int_equal(fi.module_offset, 0x400 - 4); /* the function's start */
	assert_int_equal(rec_stackagg_name_info(a, "libdemo.so.1+0x500", &fi), REC_OK);
	assert_int_equal(fi.kind, REC_STACKAGG_NAME_FRAME);
	assert_string_equal(fi.function, "");
	assert_int_equal(fi.module_offset, 0x500); /* no function: the pc */
	assert_int_equal(rec_stackagg_name_info(a, "a:b c", &fi), REC_OK);
	assert_string_equal(fi.function, "a;b\nc"); /* as recorded, not as printed */
	assert_int_equal(rec_stackagg_name_info(a, "[main tid=10]", &fi), REC_OK);
	assert_int_equal(fi.kind, REC_STACKAGG_NAME_THREAD);
	assert_string_equal(fi.thread_name, "main");
	assert_int_equal(fi.os_tid, 10);
	assert_int_equal(rec_stackagg_name_info(a, "[tid=11]", &fi), REC_OK);
	assert_int_equal(fi.kind, REC_STACKAGG_NAME_THREAD);
	assert_string_equal(fi.thread_name, "");
	assert_int_equal(fi.os_tid, 11);
	assert_int_equal(rec_stackagg_name_info(a, "[truncated]", &fi), REC_OK);
	assert_int_equal(fi.kind, REC_STACKAGG_NAME_OTHER);
	assert_int_equal(rec_stackagg_name_info(a, "nope", &fi), REC_ERR_NOT_FOUND);
	rec_stackagg_close(a);

	/* without the flag: every name is OTHER */
	a = open_agg(0);
	feed(a, &m, 0);
	assert_int_equal(rec_stackagg_name_info(a, "hash", &fi), REC_OK);
	assert_int_equal(fi.kind, REC_STACKAGG_NAME_OTHER);
	assert_string_equal(fi.module, "");
	rec_stackagg_close(a);
	free(m.p);
}

static void t_reverse(void **state)
{
	(void)state;
	membuf m = { 0 };
	write_standard(&m, 0);
	rec_stackagg *a = open_agg(REC_STACKAGG_REVERSE);
	feed(a, &m, 0);
	char *d = dump(a);
	assert_string_equal(d,
			    "a:b c;main 1 0 1 0\n"
			    "hash;work;[truncated] 4 0 4 0\n"
			    "hash;work;run;main 35 0 35 0\n"
			    "libdemo.so.1+0x500;main 2 0 2 0\n"
			    "run;main 3 0 3 0\n"
			    "work;run;main 13 0 13 0\n");
	free(d);
	rec_stackagg_close(a);
	free(m.p);
}

static void t_threads(void **state)
{
	(void)state;
	membuf m = { 0 };
	write_standard(&m, 0);
	rec_stackagg *a = open_agg(REC_STACKAGG_THREADS);
	feed(a, &m, 0);
	char *d = dump(a);
	assert_string_equal(d,
			    "[main tid=10];main;a:b c 1 0 1 0\n"
			    "[main tid=10];main;run 3 0 40 0\n"
			    "[main tid=10];main;run;work 7 0 37 0\n"
			    "[main tid=10];main;run;work;hash 30 0 30 0\n"
			    "[tid=11];[truncated];work;hash 4 0 4 0\n"
			    "[tid=11];main;libdemo.so.1+0x500 2 0 2 0\n"
			    "[tid=11];main;run;work 6 0 11 0\n"
			    "[tid=11];main;run;work;hash 5 0 5 0\n");
	free(d);
	rec_stackagg_close(a);
	/* threads and reverse: the thread stays the root */
	a = open_agg(REC_STACKAGG_THREADS | REC_STACKAGG_REVERSE);
	feed(a, &m, 0);
	d = dump(a);
	assert_non_null(strstr(d, "[tid=11];hash;work;[truncated] 4 0 4 0\n"));
	assert_non_null(strstr(d, "[main tid=10];hash;work;run;main 30 0 30 0\n"));
	free(d);
	rec_stackagg_close(a);
	free(m.p);
}

static void t_filters(void **state)
{
	(void)state;
	membuf m = { 0 };
	write_standard(&m, 0);
	const char *inc[] = { "^hash$", "^a:" };
	const char *exc[] = { "trunc" };
	rec_stackagg_options o = REC_STACKAGG_OPTIONS_INIT;
	o.include = inc;
	o.include_count = 2;
	o.exclude = exc;
	o.exclude_count = 1;
	rec_stackagg *a = NULL;
	assert_int_equal(rec_stackagg_open(&a, &o), REC_OK);
	feed(a, &m, 0);
	char *d = dump(a);
	assert_string_equal(d, "main;a:b c 1 0 1 0\n"
			       "main;run;work;hash 35 0 35 0\n");
	rec_stackagg_stats st;
	rec_stackagg_get_stats(a, &st);
	assert_int_equal(st.aggregated, 4);
	assert_int_equal(st.filtered, 5);
	assert_int_equal(st.weight[0], 36);
	free(d);
	rec_stackagg_close(a);
	/* the thread root is not matched: include "main tid" keeps nothing */
	const char *inc2[] = { "tid=" };
	o.include = inc2;
	o.include_count = 1;
	o.exclude_count = 0;
	o.flags = REC_STACKAGG_THREADS;
	assert_int_equal(rec_stackagg_open(&a, &o), REC_OK);
	feed(a, &m, 0);
	rec_stackagg_get_stats(a, &st);
	assert_int_equal(st.aggregated, 0);
	assert_int_equal(st.filtered, 9);
	rec_stackagg_close(a);
	/* a bad expression: INVALID_ARG, a message naming it, a handle to close */
	const char *bad[] = { "ok", "x(" };
	o.include = bad;
	o.include_count = 2;
	a = NULL;
	assert_int_equal(rec_stackagg_open(&a, &o), REC_ERR_INVALID_ARG);
	assert_non_null(a);
	assert_non_null(strstr(rec_stackagg_errmsg(a), "x("));
	rec_stackagg_close(a);
	free(m.p);
}

static void t_window(void **state)
{
	(void)state;
	membuf m = { 0 };
	write_standard(&m, 100);
	/* relative: events 2..4 ms after the start (k = 2, 3, 4) */
	rec_stackagg_options o = REC_STACKAGG_OPTIONS_INIT;
	o.flags = REC_STACKAGG_FROM | REC_STACKAGG_TO | REC_STACKAGG_RELATIVE;
	o.from_ns = 2000000;
	o.to_ns = 5000000;
	rec_stackagg *a = NULL;
	assert_int_equal(rec_stackagg_open(&a, &o), REC_OK);
	feed(a, &m, 0);
	char *d = dump(a);
	assert_string_equal(d, "main;libdemo.so.1+0x500 2 0 2 0\n"
			       "main;run 3 0 10 0\n"
			       "main;run;work 7 0 7 0\n");
	rec_stackagg_stats st;
	rec_stackagg_get_stats(a, &st);
	assert_int_equal(st.outside_window, 8);
	free(d);
	rec_stackagg_close(a);
	/* absolute: from event 7 on (wall time of T0 is WALL0) */
	o.flags = REC_STACKAGG_FROM;
	o.from_ns = WALL0 + 7000000;
	assert_int_equal(rec_stackagg_open(&a, &o), REC_OK);
	feed(a, &m, 0);
	d = dump(a);
	assert_string_equal(d, "main;run;work 6 0 26 0\n"
			       "main;run;work;hash 20 0 20 0\n");
	free(d);
	rec_stackagg_close(a);
	free(m.p);
}

static void t_two_columns(void **state)
{
	(void)state;
	membuf m = { 0 };
	write_standard(&m, 0);
	rec_stackagg *a = open_agg(0);
	feed(a, &m, 0);
	feed(a, &m, 1);
	feed(a, &m, 1);
	char *d = dump(a);
	assert_non_null(strstr(d, "main;run;work;hash 35 70 35 70\n"));
	assert_non_null(strstr(d, "main;run 3 6 51 102\n"));
	rec_stackagg_stats st;
	rec_stackagg_get_stats(a, &st);
	assert_int_equal(st.weight[0], 58);
	assert_int_equal(st.weight[1], 116);
	assert_int_equal(st.stacks, 6);
	assert_int_equal(rec_stackagg_begin_input(a, 2), REC_ERR_INVALID_ARG);
	free(d);
	rec_stackagg_close(a);
	free(m.p);
}

/* Two runs concatenated: stack id 1 and thread id 1 mean different things
 * in each; the per-chunk cache must not carry them over. */
static void t_ids_change_meaning(void **state)
{
	(void)state;
	membuf m = { 0 };
	for (int run = 0; run < 2; run++) {
		rec_w r;
		open_writer(&r, &m, 0x100 + (uint64_t)run, 0);
		static const char *const fa[] = { "alpha", "beta" };
		static const char *const fb[] = { "gamma", "delta" };
		def_frames(&r, run ? fb : fa, 2);
		assert_int_equal(rec_writer_define_thread(r.w, 1, 50 + (uint64_t)run,
							  def_str(&r, run ? "two" : "one")), REC_OK);
		const uint64_t s[] = { 2, 1 };
		assert_int_equal(rec_writer_define_stack(r.w, 1, 0, s, 2), REC_OK);
		for (int i = 0; i < 3; i++)
			sample(&r, T0 + (uint64_t)i, 1, 1, run ? 100 : 1);
		assert_int_equal(rec_writer_close(r.w), REC_OK);
	}
	rec_stackagg *a = open_agg(REC_STACKAGG_THREADS);
	feed(a, &m, 0);
	char *d = dump(a);
	assert_string_equal(d, "[one tid=50];alpha;beta 3 0 3 0\n"
			       "[two tid=51];gamma;delta 300 0 300 0\n");
	free(d);
	rec_stackagg_close(a);
	free(m.p);
}

/* Many events, few distinct stacks: the tree does not grow with events. */
static void t_memory_distinct(void **state)
{
	(void)state;
	membuf m = { 0 };
	rec_w r;
	open_writer(&r, &m, 0x77, 1 << 16);
	static const char *const fn[] = { "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7" };
	def_frames(&r, fn, 8);
	assert_int_equal(rec_writer_define_thread(r.w, 1, 1, 0), REC_OK);
	for (uint64_t s = 1; s <= 8; s++) {
		uint64_t fr[8];
		for (uint64_t i = 0; i < s; i++)
			fr[i] = s - i; /* leaf f(s-1) ... root f0 */
		assert_int_equal(rec_writer_define_stack(r.w, s, 0, fr, (uint32_t)s), REC_OK);
	}
	const uint64_t n = 200000;
	for (uint64_t i = 0; i < n; i++)
		sample(&r, T0 + i, 1, 1 + i % 8, 1 + i % 3);
	assert_int_equal(rec_writer_close(r.w), REC_OK);
	rec_stackagg *a = open_agg(0);
	feed(a, &m, 0);
	rec_stackagg_stats st;
	rec_stackagg_get_stats(a, &st);
	assert_int_equal(st.events, n);
	assert_int_equal(st.aggregated, n);
	assert_int_equal(st.stacks, 8);
	assert_int_equal(st.nodes, 8);   /* one chain f0;f1;...;f7 */
	assert_int_equal(st.names, 8);
	/* exact weights: stack s gets the events i with i % 8 == s - 1 */
	uint64_t want[8] = { 0 }, sum = 0;
	for (uint64_t i = 0; i < n; i++) {
		want[i % 8] += 1 + i % 3;
		sum += 1 + i % 3;
	}
	assert_int_equal(st.weight[0], sum);
	assert_int_equal(rec_stackagg_rewind(a), REC_OK);
	rec_stackagg_stack s;
	for (size_t k = 0; k < 8; k++) {
		assert_int_equal(rec_stackagg_next(a, &s), REC_OK);
		assert_int_equal(s.depth, k + 1);
		assert_string_equal(s.frames[k], fn[k]);
		assert_int_equal(s.weight[0], want[k]);
	}
	assert_int_equal(rec_stackagg_next(a, &s), REC_END);
	rec_stackagg_close(a);
	free(m.p);
}

static void t_add_frames_order(void **state)
{
	(void)state;
	rec_stackagg *a = open_agg(0);
	const char *s1[] = { "b", "x" }, *s2[] = { "a b" }, *s3[] = { "a", "z;1" }, *s4[] = { "a" },
		   *s5[] = { "b", "x" }, *s6[] = { "a\nb" };
	assert_int_equal(rec_stackagg_add_frames(a, s1, 2, 5), REC_OK);
	assert_int_equal(rec_stackagg_add_frames(a, s2, 1, 1), REC_OK);
	assert_int_equal(rec_stackagg_add_frames(a, s3, 2, 2), REC_OK);
	assert_int_equal(rec_stackagg_add_frames(a, s4, 1, 3), REC_OK);
	assert_int_equal(rec_stackagg_add_frames(a, s5, 2, UINT64_MAX), REC_OK); /* saturates */
	assert_int_equal(rec_stackagg_add_frames(a, s6, 1, 0), REC_OK); /* no weight: not listed */
	/* not rewound since the change */
	rec_stackagg_stack s;
	assert_int_equal(rec_stackagg_next(a, &s), REC_ERR_STATE);
	char *d = dump(a);
	char want[256];
	snprintf(want, sizeof want,
		 "a 3 0 5 0\n"
		 "a;z:1 2 0 2 0\n"
		 "a b 1 0 1 0\n"
		 "b;x %llu 0 %llu 0\n",
		 (unsigned long long)UINT64_MAX, (unsigned long long)UINT64_MAX);
	assert_string_equal(d, want);
	free(d);
	rec_stackagg_close(a);
	rec_stackagg_close(NULL);
}

/* The one spelling of a frame (rec_frame_format), every case; the call
 * site of a stack (rec_stack_site). */
static void t_frame_format(void **state)
{
	(void)state;
	const rec_module m = { 1, "/lib/x86_64-linux-gnu/libc.so.6", "ab", 0x7f0000 };
	const rec_module bare = { 2, "requestwatch", "", 0 };
	const rec_module nopath = { 3, "", "", 0 };
	const rec_frame named = { 1, "serve_blocking", &bare, 0x930f, 0x1f, "", 0, 0, 0 };
	const rec_frame named_lib = { 2, "__poll", &m, 0x10ab0, 0x10, "", 0, 0, 0 };
	const rec_frame no_mod = { 3, "handler", NULL, 0x40, 0x4, "", 0, 0, 0 };
	const rec_frame unnamed = { 4, "", &m, 0x891f5, 0, "", 0, 0, 0 };
	const rec_frame nothing = { 5, "", NULL, 0x2a, 0, "", 0, 0, 0 };
	const rec_frame empty_mod = { 6, NULL, &nopath, 0x10, 0, "", 0, 0, 0 };
	const rec_frame src = { 9, "serve_blocking", &bare, 0x930f, 0x1f, "/src/requestwatch.c", 214, 0, 0 };
	const rec_frame src_noline = { 9, "serve_blocking", &bare, 0x930f, 0x1f, "/src/requestwatch.c", 0, 0, 0 };
	const rec_frame inl = { 9, "parse_len", &bare, 0x930f, 0, "/src/proto.h", 31, 1, 0 };
	const rec_frame inl_nofile = { 9, "parse_len", &bare, 0x930f, 0, "", 0, 2, 0 };
	/* no name: the file says nothing without one */
	const rec_frame unnamed_src = { 10, "", &m, 0x891f5, 0, "/x.c", 3, 0, 0 };
	const struct { const rec_frame *fr; const char *full, *fn; } c[] = {
		{ &named, "serve_blocking+0x1f (requestwatch)", "serve_blocking" },
		{ &named_lib, "__poll+0x10 (libc.so.6)", "__poll" },
		{ &no_mod, "handler+0x4", "handler" },
		{ &unnamed, "libc.so.6+0x891f5", "libc.so.6+0x891f5" },
		{ &nothing, "0x2a", "0x2a" },
		{ &empty_mod, "0x10", "0x10" },
		{ NULL, "[unknown]", "[unknown]" },
		/* format 1.2: a source position, an inlined function */
		{ &src, "serve_blocking (requestwatch.c:214)", "serve_blocking" },
		{ &src_noline, "serve_blocking (requestwatch.c)", "serve_blocking" },
		{ &inl, "parse_len (proto.h:31) [inlined]", "parse_len" },
		{ &inl_nofile, "parse_len [inlined]", "parse_len" },
		{ &unnamed_src, "libc.so.6+0x891f5", "libc.so.6+0x891f5" },
	};
	char buf[64];
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		assert_int_equal(rec_frame_format(c[i].fr, 0, buf, sizeof buf), strlen(c[i].full));
		assert_string_equal(buf, c[i].full);
		assert_int_equal(rec_frame_format(c[i].fr, REC_FRAME_FUNCTION, buf, sizeof buf), strlen(c[i].fn));
		assert_string_equal(buf, c[i].fn);
	}
	/* REC_FRAME_LINE (rec-flame --lines): function:line, else as REC_FRAME_FUNCTION */
	assert_int_equal(rec_frame_format(&src, REC_FRAME_LINE, buf, sizeof buf), 18);
	assert_string_equal(buf, "serve_blocking:214");
	rec_frame_format(&inl, REC_FRAME_LINE, buf, sizeof buf);
	assert_string_equal(buf, "parse_len:31");
	rec_frame_format(&named, REC_FRAME_LINE, buf, sizeof buf);
	assert_string_equal(buf, "serve_blocking");
	rec_frame_format(&unnamed, REC_FRAME_LINE, buf, sizeof buf);
	assert_string_equal(buf, "libc.so.6+0x891f5");
	/* what rec-symbolize could name: no name (or flagged), a build-id, not inlined */
	const rec_frame flagged = { 11, "f", &m, 0x10, 0x1, "", 0, 0, REC_FRAME_UNSYMBOLIZED };
	assert_true(rec_frame_unsymbolized(&unnamed));
	assert_true(rec_frame_unsymbolized(&flagged));
	assert_false(rec_frame_unsymbolized(&named_lib));
	assert_false(rec_frame_unsymbolized(&nothing));   /* no module */
	assert_false(rec_frame_unsymbolized(&empty_mod)); /* no build-id */
	assert_false(rec_frame_unsymbolized(&inl));
	assert_false(rec_frame_unsymbolized(NULL));
	assert_string_equal(rec_frame_module_name(&named_lib), "libc.so.6");
	assert_string_equal(rec_frame_module_name(&no_mod), "");
	assert_string_equal(rec_frame_module_name(NULL), "");
	/* cut to the buffer, NUL-terminated, the length written returned */
	assert_int_equal(rec_frame_format(&named, 0, buf, 8), 7);
	assert_string_equal(buf, "serve_b");
	assert_int_equal(rec_frame_format(&named, 0, buf, 1), 0);
	assert_string_equal(buf, "");
	assert_int_equal(rec_frame_format(&named, 0, buf, 0), 0);

	/* the call site: the leaf; in an old recording the first frame not
	 * named rec_*, the leaf again when all are */
	const rec_frame wrap = { 7, "rec_lock_wait_record_", &bare, 0x100, 0x2e, "", 0, 0, 0 };
	const rec_frame wrap2 = { 8, "rec_mutex_lock", &bare, 0x200, 0x10, "", 0, 0, 0 };
	const rec_frame *const now[] = { &named, &unnamed };
	const rec_frame *const old[] = { &wrap, &wrap2, &unnamed, &named };
	const rec_frame *const all_rec[] = { &wrap, &wrap2 };
	const rec_frame *const later[] = { &named, &wrap, &no_mod };
	const rec_stack s_now = { 1, 0, 2, now }, s_old = { 2, 0, 4, old }, s_all = { 3, 0, 2, all_rec },
			s_later = { 4, 0, 3, later }, s_empty = { 5, 0, 0, NULL };
	assert_int_equal(rec_stack_site(&s_now), 0);
	assert_int_equal(rec_stack_site(&s_old), 2);
	assert_int_equal(rec_stack_site(&s_all), 0);
	assert_int_equal(rec_stack_site(&s_later), 0);
	assert_int_equal(rec_stack_site(&s_empty), 0);
	assert_int_equal(rec_stack_site(NULL), 0);
}

/* librec's own leaf frames (rec_*) are left out with TRIM_RECORDER; a
 * stack of such frames only stays whole. */
static void t_trim_recorder(void **state)
{
	(void)state;
	membuf m = { 0 };
	rec_w r;
	open_writer(&r, &m, 0x99, 0);
	static const char *const fn[] = { "main", "serve", "rec_mutex_lock_contended_",
					  "rec_lock_wait_record_", "rec_only" };
	def_frames(&r, fn, 5);
	assert_int_equal(rec_writer_define_thread(r.w, 1, 1, 0), REC_OK);
	const uint64_t s1[] = { 4, 3, 2, 1 }, s2[] = { 5 }, s3[] = { 2, 3, 1 };
	assert_int_equal(rec_writer_define_stack(r.w, 1, 0, s1, 4), REC_OK);
	assert_int_equal(rec_writer_define_stack(r.w, 2, 0, s2, 1), REC_OK);
	assert_int_equal(rec_writer_define_stack(r.w, 3, 0, s3, 3), REC_OK);
	sample(&r, T0, 1, 1, 5);
	sample(&r, T0 + 1, 1, 2, 2);
	sample(&r, T0 + 2, 1, 3, 1);
	assert_int_equal(rec_writer_close(r.w), REC_OK);
	rec_stackagg *a = open_agg(REC_STACKAGG_TRIM_RECORDER);
	feed(a, &m, 0);
	char *d = dump(a);
	/* only leading leaf frames go: a rec_ frame under the leaf stays */
	assert_string_equal(d, "main;rec_mutex_lock_contended_;serve 1 0 1 0\n"
			       "main;serve 5 0 5 0\n"
			       "rec_only 2 0 2 0\n");
	free(d);
	rec_stackagg_close(a);
	a = open_agg(REC_STACKAGG_TRIM_RECORDER | REC_STACKAGG_REVERSE);
	feed(a, &m, 0);
	d = dump(a);
	assert_string_equal(d, "rec_only 2 0 2 0\n"
			       "serve;main 5 0 5 0\n"
			       "serve;rec_mutex_lock_contended_;main 1 0 1 0\n");
	free(d);
	rec_stackagg_close(a);
	a = open_agg(0);
	feed(a, &m, 0);
	d = dump(a);
	assert_non_null(strstr(d, "main;serve;rec_mutex_lock_contended_;rec_lock_wait_record_ 5 0 5 0\n"));
	free(d);
	rec_stackagg_close(a);
	free(m.p);
}

static void t_bad_options(void **state)
{
	(void)state;
	rec_stackagg *a = NULL;
	assert_int_equal(rec_stackagg_open(NULL, NULL), REC_ERR_INVALID_ARG);
	rec_stackagg_options o = REC_STACKAGG_OPTIONS_INIT;
	o.reserved[1] = 1;
	assert_int_equal(rec_stackagg_open(&a, &o), REC_ERR_INVALID_ARG);
	rec_stackagg_close(a);
	o.reserved[1] = 0;
	o.flags = 0x100; /* the first unknown flag */
	assert_int_equal(rec_stackagg_open(&a, &o), REC_ERR_INVALID_ARG);
	rec_stackagg_close(a);
	assert_int_equal(rec_stackagg_open(&a, NULL), REC_OK);
	assert_int_equal(rec_stackagg_add_event(a, NULL, 1), REC_ERR_INVALID_ARG);
	assert_string_equal(rec_stackagg_errmsg(a), "no error");
	rec_stackagg_close(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_aggregate_exact),
		cmocka_unit_test(t_frame_info_pairs),
		cmocka_unit_test(t_reverse),
		cmocka_unit_test(t_threads),
		cmocka_unit_test(t_filters),
		cmocka_unit_test(t_window),
		cmocka_unit_test(t_two_columns),
		cmocka_unit_test(t_ids_change_meaning),
		cmocka_unit_test(t_memory_distinct),
		cmocka_unit_test(t_add_frames_order),
		cmocka_unit_test(t_trim_recorder),
		cmocka_unit_test(t_frame_format),
		cmocka_unit_test(t_bad_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
