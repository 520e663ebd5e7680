/* SPDX-License-Identifier: MIT */
/*
 * test_select.c - --thread NAME|TID (rec_thread_selected(), libfmt/analysis/
 * select.c) on the threads of a recording written with the real writer and
 * read back with the real reader: main (tid 100), worker-1 (101), worker-2
 * (102), a thread named "7" (tid 300), one named "seven" (tid 7) and an
 * unnamed one (tid 400), each with one event, and an event of no thread.
 * For each pattern, the set of threads selected is asserted: a tid in
 * decimal, or a glob on the name (digits are never globbed against tids);
 * then the threads view with --thread "worker-*" keeps exactly those rows.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/view_fixture.h"

enum { NSEL = 6 };
static const uint64_t tids[NSEL] = { 100, 101, 102, 300, 7, 400 };

static void write_sel(membuf *m)
{
	gen g;
	open_gen(&g, m, 0);
	ok(rec_writer_define_thread(g.w, 4, 300, str(&g, "7")));
	ok(rec_writer_define_thread(g.w, 5, 7, str(&g, "seven")));
	ok(rec_writer_define_thread(g.w, 6, 400, 0));
	for (uint64_t th = 1; th <= NSEL; th++)
		cpu_ev(&g, th, S_CPU, (double)th, 0);
	ok(rec_writer_begin(g.w, T_DROPPED, at(10), 0, 0, 0));
	ok(rec_writer_put_u64(g.w, 1));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_put_u64(g.w, T_ALLOC));
	ok(rec_writer_end(g.w));
	ok(rec_writer_close(g.w));
}

/* The tids pattern selects among the events' threads, as a bit per tids[]
 * entry; *none_sel: whether the event of no thread was selected. */
static unsigned selected(const membuf *m, const char *pattern, bool *none_sel)
{
	rec_reader *rd = NULL;
	ok(rec_reader_open_mem(&rd, m->p, m->len, "mem", NULL));
	unsigned bits = 0;
	size_t seen = 0, none = 0;
	*none_sel = false;
	rec_event ev;
	rec_status st;
	while ((st = rec_reader_next_event(rd, &ev)) == REC_OK) {
		bool sel = rec_thread_selected(pattern, ev.thread);
		if (!ev.thread) {
			none++;
			*none_sel = sel;
			continue;
		}
		size_t k = 0;
		while (k < NSEL && tids[k] != ev.thread->os_tid)
			k++;
		assert_true(k < NSEL);
		seen++;
		if (sel)
			bits |= 1u << k;
	}
	assert_int_equal(st, REC_END);
	assert_int_equal(seen, NSEL);
	assert_int_equal(none, 1);
	rec_reader_close(rd);
	return bits;
}

static void t_patterns(void **state)
{
	(void)state;
	membuf m = { 0 };
	write_sel(&m);
	/* bits: 0 main/100, 1 worker-1/101, 2 worker-2/102, 3 "7"/300,
	 * 4 "seven"/7, 5 unnamed/400 */
	static const struct {
		const char *pattern;
		unsigned want;
	} cases[] = {
		{ "worker-*", 0x6 },
		{ "worker-1", 0x2 },
		{ "101", 0x2 },        /* a tid */
		{ "7", 0x18 },         /* the thread named "7" and tid 7 */
		{ "400", 0x20 },       /* an unnamed thread by its tid */
		{ "[mw]*", 0x7 },      /* a glob */
		{ "1*", 0x0 },         /* globs match names, never tids */
		{ "10", 0x0 },         /* a tid is matched whole */
		{ "main", 0x1 },
		{ "Main", 0x0 },       /* names are case-sensitive */
		{ "99999999999999999999999", 0x0 }, /* too large for a tid */
		{ "nobody", 0x0 },
	};
	bool none;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unsigned got = selected(&m, cases[i].pattern, &none);
		if (got != cases[i].want)
			fail_msg("--thread %s: selected 0x%x, want 0x%x", cases[i].pattern, got,
				 cases[i].want);
		assert_false(none); /* an event of no thread matches no pattern */
	}
	/* no pattern: every thread, and the event of none */
	assert_int_equal(selected(&m, NULL, &none), 0x3f);
	assert_true(none);
	assert_true(rec_thread_selected(NULL, NULL));
	assert_false(rec_thread_selected("*", NULL));

	/* the views select with it: threads --thread "worker-*" */
	rec_view_options o = REC_VIEW_OPTIONS_INIT;
	o.view = "threads";
	o.thread = "worker-*";
	run r;
	run_view(&r, &m, &o);
	const rec_view_table *t = table(&r, "threads");
	assert_int_equal(t->row_count, 2);
	assert_int_equal(U(t, row_of(t, "thread", "worker-1"), "tid"), 101);
	assert_int_equal(U(t, row_of(t, "thread", "worker-2"), "tid"), 102);
	rec_view_close(r.v);
	o.thread = "7";
	run_view(&r, &m, &o);
	t = table(&r, "threads");
	assert_int_equal(t->row_count, 2);
	assert_int_equal(U(t, row_of(t, "thread", "seven"), "tid"), 7);
	assert_int_equal(U(t, row_of(t, "thread", "7"), "tid"), 300);
	rec_view_close(r.v);
	free(m.p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_patterns),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
