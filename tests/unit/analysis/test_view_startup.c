/* SPDX-License-Identifier: MIT */
/*
 * test_view_startup.c - rec-view's startup (libfmt/analysis/view_startup.c)
 * on recording A (tests/lib/view_fixture.h): what main did before the first
 * app.Request at 500 ms (a 400 ms sleep at warmup, 4 MiB in four
 * allocations, 20 ms of CPU in hash), by call site.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/view_fixture.h"

static void t_startup(void **state)
{
	(void)state;
	run r;
	simple(&r, &rec_a, "startup", NULL);
	const rec_view_table *t = table(&r, "startup");
	assert_string_equal(S(t, 0, "before"), "app.Request");
	assert_int_equal(cell(t, 0, "at")->i, (int64_t)(500 * MS));
	assert_int_equal(U(t, 0, "sleeps"), 1);
	assert_int_equal(U(t, 0, "sleep"), 400 * MS);
	assert_int_equal(U(t, 0, "allocations"), 4);
	assert_int_equal(U(t, 0, "allocated"), 4 * MIB);
	assert_int_equal(U(t, 0, "cpu"), 20 * MS);
	assert_int_equal(U(t, 0, "lock_waits"), 0);
	const rec_view_table *s = table(&r, "sleeps");
	assert_string_equal(S(s, 0, "site"), "warmup");
	assert_int_equal(U(s, 0, "total"), 400 * MS);
	s = table(&r, "allocations");
	assert_string_equal(S(s, 0, "site"), "warmup");
	assert_int_equal(U(s, 0, "total"), 4 * MIB);
	s = table(&r, "cpu");
	assert_string_equal(S(s, 0, "site"), "hash");
	rec_view_close(r.v);
}

/* A recording without spans: CPU samples at stack 9 (leaf leaf9) and
 * stack 10 (leaf leaf10), n9 and n10 of them interleaved, sample i with i % 3
 * overruns, in chunks of chunk event bytes; *w9 and *w10 get the CPU time of
 * each stack (10 ms x (1 + overruns)). */
static void write_cpu(membuf *m, uint32_t chunk, uint64_t leaf9, uint64_t leaf10, int n9, int n10,
		      uint64_t *w9, uint64_t *w10)
{
	gen g;
	open_gen(&g, m, chunk);
	const uint64_t s9[] = { leaf9, F_LOOP };
	const uint64_t s10[] = { leaf10, F_LOOP };
	ok(rec_writer_define_stack(g.w, 9, 0, s9, 2));
	ok(rec_writer_define_stack(g.w, 10, 0, s10, 2));
	*w9 = *w10 = 0;
	for (int i = 0, a = 0, b = 0; a < n9 || b < n10; i++) {
		bool nine = b >= n10 || (a < n9 && i % 2 == 0);
		uint32_t ov = (uint32_t)(i % 3);
		cpu_ev(&g, TH_MAIN, nine ? 9 : 10, 1 + i, ov);
		*(nine ? w9 : w10) += 10 * MS * (1 + ov);
		if (nine)
			a++;
		else
			b++;
	}
	ok(rec_writer_close(g.w));
}

/* The CPU rows by call site (the startup view finds a sample's row by its
 * stack id within a chunk): over two inputs, the first one chunk, the second
 * a dozen, whose first chunks have the same offset, run and sequence while
 * their stacks 9 and 10 have each other's leaf (a row noted for the first
 * input's stack id must not be taken for the second's). */
static void t_cpu_rows(void **state)
{
	(void)state;
	membuf p = { 0 }, q = { 0 };
	uint64_t p9, p10, q9, q10;
	write_cpu(&p, 1u << 20, F_HASH, F_FILL, 50, 30, &p9, &p10);
	write_cpu(&q, 100, F_FILL, F_HASH, 20, 40, &q9, &q10);
	rec_view_options o = REC_VIEW_OPTIONS_INIT;
	o.view = "startup";
	run r;
	memset(&r, 0, sizeof r);
	ok(rec_view_open(&r.v, &o));
	size_t chunks = 0;
	const membuf *in[2] = { &p, &q };
	for (int k = 0; k < 2; k++) {
		rec_reader_options ro = REC_READER_OPTIONS_INIT;
		ro.flags = REC_READ_ORDERED;
		rec_reader *rd = NULL;
		ok(rec_reader_open_mem(&rd, in[k]->p, in[k]->len, "mem", &ro));
		ok(rec_view_begin_input(r.v));
		rec_event ev;
		rec_status st;
		uint64_t last = UINT64_MAX;
		while ((st = rec_reader_next_event(rd, &ev)) == REC_OK) {
			if (ev.chunk->offset != last)
				chunks++;
			last = ev.chunk->offset;
			ok(rec_view_add_event(r.v, &ev));
		}
		assert_int_equal(st, REC_END);
		rec_reader_close(rd);
	}
	ok(rec_view_get(r.v, &r.t, &r.n));
	assert_true(chunks >= 6); /* the second input's samples span several chunks */
	const rec_view_table *t = table(&r, "startup");
	assert_string_equal(S(t, 0, "before"), "(no span: the whole recording)");
	assert_int_equal(U(t, 0, "cpu"), p9 + p10 + q9 + q10);
	const rec_view_table *c = table(&r, "cpu");
	size_t h = row_of(c, "site", "hash"), f = row_of(c, "site", "cache_fill");
	assert_int_equal(U(c, h, "count"), 50 + 40);
	assert_int_equal(U(c, h, "total"), p9 + q10);
	assert_int_equal(U(c, f, "count"), 30 + 20);
	assert_int_equal(U(c, f, "total"), p10 + q9);
	assert_int_equal(c->row_count, 2);
	rec_view_close(r.v);
	free(p.p);
	free(q.p);
}

/* (libfmt/analysis/view_internal.h) */
extern size_t rec_vi_su_pend_max;

/* CPU samples given as digests ahead of every event, more than startup
 * holds one by one (1024 here: the older half summed by row, again and
 * again): with no span, or a span after them all, the same tables as the
 * samples as events; a span among the summed ones fails the view
 * (REC_ERR_LIMIT, saying why) rather than count wrong. */
static void t_digests_held(void **state)
{
	(void)state;
	size_t keep = rec_vi_su_pend_max;
	rec_vi_su_pend_max = 1024;
	for (int span = 0; span < 3; span++) { /* none, after all, among them */
		membuf m = { 0 };
		gen g;
		open_gen(&g, &m, 1u << 22); /* one chunk: its digests before any event */
		const uint64_t s9[] = { F_HASH, F_LOOP }, s10[] = { F_FILL, F_LOOP };
		ok(rec_writer_define_stack(g.w, 9, 0, s9, 2));
		ok(rec_writer_define_stack(g.w, 10, 0, s10, 2));
		for (int i = 0; i < 3000; i++)
			cpu_ev(&g, TH_MAIN, i % 3 ? 9 : 10, 1 + i, (uint32_t)(i % 2));
		if (span)
			req_ev(&g, TH_MAIN, span == 1 ? 5000 : 100, span == 1 ? 5001 : 101, "/x");
		ok(rec_writer_close(g.w));
		rec_view_options o = REC_VIEW_OPTIONS_INIT;
		o.view = "startup";
		rec_view *d = NULL, *e = NULL;
		ok(rec_view_open(&d, &o));
		ok(rec_view_open(&e, &o));
		read_view(e, &m, false);
		const rec_view_table *et, *dt;
		size_t en, dn;
		ok(rec_view_get(e, &et, &en));
		rec_reader_options ro = REC_READER_OPTIONS_INIT;
		ro.flags = REC_READ_ORDERED;
		rec_reader *rd = NULL;
		ok(rec_reader_open_mem(&rd, m.p, m.len, "mem", &ro));
		ok(rec_reader_digest_type(rd, rec_view_digest_type(d), rec_view_add_digests, d));
		ok(rec_view_begin_input(d));
		rec_event ev;
		rec_status st, add = REC_OK;
		while ((st = rec_reader_next_event(rd, &ev)) == REC_OK && add == REC_OK)
			add = rec_view_add_event(d, &ev);
		rec_reader_stats rs;
		rec_reader_get_stats(rd, &rs);
		assert_int_equal(rs.events_digested, 3000);
		rec_reader_close(rd);
		if (span == 2) {
			assert_int_equal(add, REC_ERR_LIMIT);
			assert_non_null(strstr(rec_view_errmsg(d), "more than 1024 CPU samples"));
			assert_int_equal(rec_view_get(d, &dt, &dn), REC_ERR_LIMIT);
		} else {
			ok(add);
			assert_int_equal(st, REC_END);
			ok(rec_view_get(d, &dt, &dn));
			same_tables(dt, dn, et, en);
			const rec_view_table *c = table(&(run){ .v = d, .t = dt, .n = dn }, "cpu");
			assert_int_equal(U(c, row_of(c, "site", "hash"), "count"), 2000);
			assert_int_equal(U(c, row_of(c, "site", "cache_fill"), "count"), 1000);
		}
		rec_view_close(d);
		rec_view_close(e);
		free(m.p);
	}
	rec_vi_su_pend_max = keep;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_startup),
		cmocka_unit_test(t_cpu_rows),
		cmocka_unit_test(t_digests_held),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
