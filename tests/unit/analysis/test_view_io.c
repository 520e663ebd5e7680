/* SPDX-License-Identifier: MIT */
/*
 * test_view_io.c - rec-view's io-by-site (libfmt/analysis/view_io.c): a
 * recording of 400 rec.IO calls from a fixed generator (three call sites,
 * three kinds, a few peers and paths each, random bytes and durations of
 * 1 us to 20 ms, one without a stack), 30 calls of a program's own I/O type
 * (category rec/IO, a `bytes` field and no kind or address) and sleeps
 * that are not I/O, in small chunks: every row's calls, bytes, total,
 * mean, max and the longest call's peer or path (the earliest of equal
 * ones: the generator makes ties) equal what the test kept while writing,
 * p99 within 1/256 of the true nearest-rank value, rows by total, --top.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/view_fixture.h"

enum { T_IO = 23, T_DISK = 301, NROWS = 16, MAXD = 512 };

static const rec_field f_io[] = {
	{ "fd", "", "", REC_TYPE_I64, REC_UNIT_NONE },
	{ "call", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "kind", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "address", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "bytes", "", "", REC_TYPE_U64, REC_UNIT_BYTES },
	{ "error", "", "", REC_TYPE_U64, REC_UNIT_NONE },
};
static const rec_field f_disk[] = { { "bytes", "", "", REC_TYPE_U64, REC_UNIT_BYTES } };

typedef struct io_want {
	const char *site, *kind, *address;
	uint64_t calls, bytes, total, max;
	uint64_t d[MAXD];
} io_want;

static io_want g_want[NROWS];
static size_t g_nwant;
static membuf g_rec;

static io_want *find_want(const char *site, const char *kind)
{
	for (size_t i = 0; i < g_nwant; i++)
		if (!strcmp(g_want[i].site, site) && !strcmp(g_want[i].kind, kind))
			return &g_want[i];
	return NULL;
}

static io_want *want_of(const char *site, const char *kind)
{
	io_want *f = find_want(site, kind);
	if (f)
		return f;
	assert_true(g_nwant < NROWS);
	io_want *w = &g_want[g_nwant++];
	memset(w, 0, sizeof *w);
	w->site = site;
	w->kind = kind;
	return w;
}

static void note(const char *site, const char *kind, const char *address, uint64_t bytes,
		 uint64_t d)
{
	io_want *w = want_of(site, kind);
	assert_true(w->calls < MAXD);
	w->d[w->calls++] = d;
	w->bytes += bytes;
	w->total += d;
	if (w->calls == 1 || d > w->max) { /* written in time order: the earliest of equal ones */
		w->max = d;
		w->address = address;
	}
}

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

static void write_io(membuf *m)
{
	static const uint64_t stacks[3] = { S_LOCK, S_HOLD, S_WARM };
	static const char *const sites[3] = { "handle", "cache_fill", "warmup" };
	static const char *const kinds[3] = { "socket", "file", "pipe" };
	static const char *const addrs[3][3] = {
		{ "10.0.0.1:80", "10.0.0.2:80", "[::1]:6379" },
		{ "/var/lib/db/a", "/var/lib/db/b", "/etc/hosts" },
		{ "", "", "" },
	};
	gen g;
	open_gen(&g, m, 2000);
	const rec_type tio = { T_IO, D_T_S, "rec.IO", "", "", "rec/IO", 6, f_io };
	const rec_type tdisk = { T_DISK, D_T_S, "app.DiskRead", "", "", "rec/IO/app", 1, f_disk };
	ok(rec_writer_add_type(g.w, &tio));
	ok(rec_writer_add_type(g.w, &tdisk));
	g_nwant = 0;
	uint64_t seed = 7, t = T0;
	for (int i = 0; i < 430; i++) {
		t += 100000 + lcg(&seed) % 900000;
		uint64_t th = 1 + lcg(&seed) % 3;
		/* durations in a few steps, so that rows have equal longest calls */
		uint64_t d = 1000 + (lcg(&seed) % 40) * 500000;
		if (i % 43 == 42) { /* the program's own I/O type */
			uint64_t bytes = lcg(&seed) % 65536;
			ok(rec_writer_begin(g.w, T_DISK, t, d, th, S_COND));
			ok(rec_writer_put_u64(g.w, bytes));
			ok(rec_writer_end(g.w));
			note("handle", "", "", bytes, d);
		} else {
			unsigned si = (unsigned)(lcg(&seed) % 3), ki = (unsigned)(lcg(&seed) % 3);
			unsigned ai = (unsigned)(lcg(&seed) % 3);
			uint64_t bytes = lcg(&seed) % 100000;
			bool nostack = i == 100;
			ok(rec_writer_begin(g.w, T_IO, t, d, th, nostack ? 0 : stacks[si]));
			ok(rec_writer_put_i64(g.w, 3 + (int64_t)ki));
			ok(rec_writer_put_u64(g.w, str(&g, ki == 0 ? "recv" : "read")));
			ok(rec_writer_put_u64(g.w, str(&g, kinds[ki])));
			ok(rec_writer_put_u64(g.w, str(&g, addrs[ki][ai])));
			ok(rec_writer_put_u64(g.w, bytes));
			ok(rec_writer_put_u64(g.w, 0));
			ok(rec_writer_end(g.w));
			note(nostack ? "[no stack]" : sites[si], kinds[ki], addrs[ki][ai], bytes, d);
		}
		if (i % 10 == 0) /* not I/O */
			sleep_ev(&g, th, S_WARM, (double)(t - T0) / (double)MS + 0.01,
				 (double)(t - T0) / (double)MS + 5);
	}
	ok(rec_writer_close(g.w));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int setup_io(void **state)
{
	(void)state;
	write_io(&g_rec);
	return 0;
}

static int teardown_io(void **state)
{
	(void)state;
	free(g_rec.p);
	return 0;
}

static void t_io_by_site(void **state)
{
	(void)state;
	run r;
	simple(&r, &g_rec, "io-by-site", NULL);
	const rec_view_table *t = table(&r, "io_by_site");
	assert_int_equal(t->row_count, g_nwant);
	uint64_t calls = 0, ties = 0;
	for (size_t k = 0; k < t->row_count; k++) {
		const io_want *w = find_want(S(t, k, "site"), S(t, k, "kind"));
		if (!w)
			fail_msg("a row the recording has no calls for: %s/%s", S(t, k, "site"),
				 S(t, k, "kind"));
		char what[96];
		snprintf(what, sizeof what, "%s/%s", w->site, w->kind);
		if (U(t, k, "calls") != w->calls || U(t, k, "bytes") != w->bytes ||
		    U(t, k, "total") != w->total || U(t, k, "max") != w->max)
			fail_msg("%s: calls %llu bytes %llu total %llu max %llu, want %llu %llu %llu %llu",
				 what, (unsigned long long)U(t, k, "calls"),
				 (unsigned long long)U(t, k, "bytes"), (unsigned long long)U(t, k, "total"),
				 (unsigned long long)U(t, k, "max"), (unsigned long long)w->calls,
				 (unsigned long long)w->bytes, (unsigned long long)w->total,
				 (unsigned long long)w->max);
		assert_int_equal(U(t, k, "mean"), (w->total + w->calls / 2) / w->calls);
		assert_string_equal(S(t, k, "address"), w->address);
		/* p99: the true nearest-rank value, within 1/256 */
		uint64_t d[MAXD];
		memcpy(d, w->d, w->calls * sizeof d[0]);
		qsort(d, w->calls, sizeof d[0], cmp_u64);
		uint64_t p99 = d[(99 * w->calls + 99) / 100 - 1], got = U(t, k, "p99");
		uint64_t diff = got > p99 ? got - p99 : p99 - got;
		if (diff * 256 > p99)
			fail_msg("%s: p99 %llu, true %llu", what, (unsigned long long)got,
				 (unsigned long long)p99);
		for (size_t i = 0; i + 1 < w->calls; i++)
			ties += d[i] == d[i + 1] && d[i + 1] == w->max;
		/* heaviest first, then by site and kind */
		if (k > 0) {
			uint64_t a = U(t, k - 1, "total"), b = U(t, k, "total");
			assert_true(a > b || (a == b && strcmp(S(t, k - 1, "site"), S(t, k, "site")) <= 0));
		}
		calls += w->calls;
	}
	assert_int_equal(calls, 430);
	assert_true(ties > 0); /* the address test met equal longest calls */
	/* the program's own type: its row without a kind or an address */
	size_t own = row_of(t, "kind", "");
	assert_string_equal(S(t, own, "site"), "handle");
	assert_string_equal(S(t, own, "address"), "");
	(void)row_of(t, "site", "[no stack]");
	rec_view_close(r.v);

	rec_view_options o = REC_VIEW_OPTIONS_INIT;
	o.view = "io-by-site";
	o.top = 2;
	run top;
	run_view(&top, &g_rec, &o);
	const rec_view_table *tt = table(&top, "io_by_site");
	assert_int_equal(tt->row_count, 2);
	rec_view_close(top.v);
}

/* Recording A has no I/O: no rows. */
static void t_io_none(void **state)
{
	(void)state;
	run r;
	simple(&r, &rec_a, "io-by-site", NULL);
	assert_int_equal(table(&r, "io_by_site")->row_count, 0);
	rec_view_close(r.v);
}

static int setup_all(void **state)
{
	setup(state);
	return setup_io(state);
}

static int teardown_all(void **state)
{
	teardown(state);
	return teardown_io(state);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_io_by_site),
		cmocka_unit_test(t_io_none),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
