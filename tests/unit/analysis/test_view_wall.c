/* SPDX-License-Identifier: MIT */
/*
 * test_view_wall.c - rec-view's wall-by-site (libfmt/analysis/view_wall.c)
 * on a recording written with the real writer (zstd, small chunks) and read
 * back with the real reader.  rec.WallSample events of two threads, period
 * 5 ms (ms from the first event):
 *   worker (tid 101), stack serve <- loop:
 *     sleep 30 ticks, lock 60 ticks, running 2 + 1 ticks, wait 4 ticks,
 *     a state this build does not know ("zzz") 3 ticks;
 *   worker, stack poll_loop: poll 100 ticks; io 7 ticks;
 *   main (tid 100), stack compute: running 40 ticks in 40 samples, a
 *     sample with period 10 ms and weight 2 (20 ms), cond 5 ticks;
 *   one sample without a stack: running 1 tick.
 * Every cell is asserted: wall = weight x period by site, split by state
 * (other: the unknown state), rows by wall time; --thread main keeps only
 * main's; --top 1 keeps the first; a recording without rec.WallSample has
 * no rows and a note saying how to record them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/view_run.h"

#define T0 1000000000000ull
#define WALL0 1796206443000000000ll
#define MS 1000000ull

enum { T_WALL = 28, T_OTHER = 300 };
enum { TH_MAIN = 1, TH_WORKER };
enum { F_SERVE = 1, F_LOOP, F_POLL, F_COMPUTE };
enum { S_SERVE = 1, S_POLL, S_COMPUTE };

static const rec_field f_wall[] = {
	{ "state", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "weight", "", "", REC_TYPE_U32, REC_UNIT_COUNT },
	{ "period", "", "", REC_TYPE_U64, REC_UNIT_NANOS },
};
static const rec_field f_other[] = { { "n", "", "", REC_TYPE_U64, REC_UNIT_COUNT } };

typedef struct gen {
	rec_writer *w;
	uint64_t str;
	double t; /* ms */
} gen;

static uint64_t str(gen *g, const char *s)
{
	uint64_t id = ++g->str;
	ok(rec_writer_define_string(g->w, id, s, strlen(s)));
	return id;
}

static void open_gen(gen *g, membuf *m, bool wall)
{
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.run_id = 0xabc;
	o.pid = 77;
	o.process_start_ns = WALL0;
	o.anchor_wall_ns = WALL0;
	o.anchor_ticks = T0;
	o.chunk_events_size = 512;
	rec_sink sink = { mem_write, NULL, m };
	memset(g, 0, sizeof *g);
	ok(rec_writer_open(&g->w, &sink, &o));
	const rec_type tw = { T_WALL, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "rec.WallSample",
			      "", "", "rec/Profiling", 3, f_wall };
	const rec_type to = { T_OTHER, REC_EVENT_HAS_THREAD, "app.Other", "", "", "app", 1, f_other };
	ok(rec_writer_add_type(g->w, wall ? &tw : &to));
	ok(rec_writer_define_thread(g->w, TH_MAIN, 100, str(g, "main")));
	ok(rec_writer_define_thread(g->w, TH_WORKER, 101, str(g, "worker")));
	static const char *const fn[] = { "serve", "loop", "poll_loop", "compute" };
	for (size_t i = 0; i < 4; i++)
		ok(rec_writer_define_frame(g->w, i + 1, str(g, fn[i]), 0, 0x100 * (i + 1), 4));
	const uint64_t s_serve[] = { F_SERVE, F_LOOP }, s_poll[] = { F_POLL },
		       s_compute[] = { F_COMPUTE };
	ok(rec_writer_define_stack(g->w, S_SERVE, 0, s_serve, 2));
	ok(rec_writer_define_stack(g->w, S_POLL, 0, s_poll, 1));
	ok(rec_writer_define_stack(g->w, S_COMPUTE, 0, s_compute, 1));
}

static void ws(gen *g, uint64_t th, uint64_t stack, const char *state, uint64_t weight,
	       uint64_t period_ms)
{
	g->t += 1;
	ok(rec_writer_begin(g->w, T_WALL, T0 + (uint64_t)(g->t * (double)MS), 0, th, stack));
	ok(rec_writer_put_u64(g->w, str(g, state)));
	ok(rec_writer_put_u64(g->w, weight));
	ok(rec_writer_put_u64(g->w, period_ms * MS));
	ok(rec_writer_end(g->w));
}

static void write_rec(membuf *m)
{
	gen g;
	open_gen(&g, m, true);
	ws(&g, TH_WORKER, S_SERVE, "sleep", 30, 5);
	ws(&g, TH_WORKER, S_SERVE, "lock", 60, 5);
	ws(&g, TH_WORKER, S_SERVE, "running", 2, 5);
	ws(&g, TH_WORKER, S_SERVE, "running", 1, 5);
	ws(&g, TH_WORKER, S_SERVE, "wait", 4, 5);
	ws(&g, TH_WORKER, S_SERVE, "zzz", 3, 5);
	ws(&g, TH_WORKER, S_POLL, "poll", 100, 5);
	ws(&g, TH_WORKER, S_POLL, "io", 7, 5);
	for (int i = 0; i < 40; i++)
		ws(&g, TH_MAIN, S_COMPUTE, "running", 1, 5);
	ws(&g, TH_MAIN, S_COMPUTE, "running", 2, 10);
	ws(&g, TH_MAIN, S_COMPUTE, "cond", 5, 5);
	ws(&g, TH_MAIN, 0, "running", 1, 5);
	ok(rec_writer_close(g.w));
}

/* wall-by-site over m: one table */
static void run_wall(run *r, const membuf *m, rec_view_options *o)
{
	run_view(r, m, o);
	assert_int_equal(r->n, 1);
	assert_string_equal(r->t[0].name, "wall_by_site");
}

static const char *site(const rec_view_table *t, size_t row)
{
	assert_true(row < t->row_count);
	assert_string_equal(t->columns[0].key, "site");
	return t->cells[row * t->column_count].text;
}

static membuf rec_w;

static int setup(void **state)
{
	(void)state;
	write_rec(&rec_w);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(rec_w.p);
	return 0;
}

#define P5 (5 * MS)

static void t_by_site(void **state)
{
	(void)state;
	run r;
	rec_view_options o = REC_VIEW_OPTIONS_INIT;
	o.view = "wall-by-site";
	run_wall(&r, &rec_w, &o);
	const rec_view_table *t = &r.t[0];
	assert_int_equal(t->row_count, 4);
	/* serve: 30 + 60 + 3 + 4 + 3 = 100 ticks; poll_loop 107; compute 40 +
	 * 4 (10 ms x 2) + 5 = 49; [no stack] 1 */
	assert_string_equal(site(t, 0), "poll_loop");
	assert_int_equal(U(t, 0, "samples"), 2);
	assert_int_equal(U(t, 0, "wall"), 107 * P5);
	assert_int_equal(U(t, 0, "poll"), 100 * P5);
	assert_int_equal(U(t, 0, "io"), 7 * P5);
	assert_int_equal(U(t, 0, "running"), 0);
	assert_string_equal(site(t, 1), "serve");
	assert_int_equal(U(t, 1, "samples"), 6);
	assert_int_equal(U(t, 1, "wall"), 100 * P5);
	assert_int_equal(U(t, 1, "sleep"), 30 * P5);
	assert_int_equal(U(t, 1, "lock"), 60 * P5);
	assert_int_equal(U(t, 1, "running"), 3 * P5);
	assert_int_equal(U(t, 1, "wait"), 4 * P5);
	assert_int_equal(U(t, 1, "other"), 3 * P5);
	assert_int_equal(U(t, 1, "cond"), 0);
	assert_string_equal(site(t, 2), "compute");
	assert_int_equal(U(t, 2, "samples"), 42);
	assert_int_equal(U(t, 2, "wall"), 40 * P5 + 20 * MS + 5 * P5);
	assert_int_equal(U(t, 2, "running"), 40 * P5 + 20 * MS);
	assert_int_equal(U(t, 2, "cond"), 5 * P5);
	assert_string_equal(site(t, 3), "[no stack]");
	assert_int_equal(U(t, 3, "wall"), P5);
	rec_view_close(r.v);
}

static void t_thread_top(void **state)
{
	(void)state;
	run r;
	rec_view_options o = REC_VIEW_OPTIONS_INIT;
	o.view = "wall-by-site";
	o.thread = "main";
	run_wall(&r, &rec_w, &o);
	assert_int_equal(r.t[0].row_count, 2);
	assert_string_equal(site(&r.t[0], 0), "compute");
	assert_string_equal(site(&r.t[0], 1), "[no stack]");
	rec_view_close(r.v);
	o.thread = NULL;
	o.top = 1;
	run_wall(&r, &rec_w, &o);
	assert_int_equal(r.t[0].row_count, 1);
	assert_int_equal(r.t[0].rows_total, 4);
	assert_string_equal(site(&r.t[0], 0), "poll_loop");
	rec_view_close(r.v);
}

static void t_none(void **state)
{
	(void)state;
	membuf m = { 0 };
	gen g;
	open_gen(&g, &m, false);
	ok(rec_writer_begin(g.w, T_OTHER, T0, 0, TH_MAIN, 0));
	ok(rec_writer_put_u64(g.w, 1));
	ok(rec_writer_end(g.w));
	ok(rec_writer_close(g.w));
	run r;
	rec_view_options o = REC_VIEW_OPTIONS_INIT;
	o.view = "wall-by-site";
	run_wall(&r, &m, &o);
	assert_int_equal(r.t[0].row_count, 0);
	assert_non_null(r.t[0].note);
	assert_non_null(strstr(r.t[0].note, "rec-record --wall"));
	rec_view_close(r.v);
	free(m.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_by_site),
		cmocka_unit_test(t_thread_top),
		cmocka_unit_test(t_none),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
