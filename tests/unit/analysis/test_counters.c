/* SPDX-License-Identifier: MIT */
/*
 * test_counters.c - counter totals over runs and restarts (rec/counters.h):
 * five runs of a service written with the real writer into one real file
 * (a crash loop: four runs end without a FINAL chunk), a reset inside a run,
 * two counters, runs in any file order; and rec_reader_chunk_write() copying
 * chunks byte for byte.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rec/archive.h"
#include "rec/counters.h"
#include "rec/rec.h"

#include "../../lib/counter_runs.h"

/* Write run k of rec_t_counter_runs, asserting that every writer call succeeds. */
static void write_run(int fd, int k)
{
	const char *failed = "";
	rec_status st = rec_t_counter_write_run(fd, k, &rec_t_counter_runs[k], &failed);
	if (st != REC_OK)
		print_error("%s failed\n", failed);
	assert_int_equal(st, REC_OK);
}

static char path[64];

static void write_file(const int *order)
{
	snprintf(path, sizeof path, "/tmp/test_counters.XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	for (int i = 0; i < 5; i++)
		write_run(fd, order[i]);
	assert_int_equal(close(fd), 0);
}

static const rec_counter_total *find(const rec_counter_total *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

static void check_totals(uint32_t flags, uint32_t cflags)
{
	rec_reader_options o = REC_READER_OPTIONS_INIT;
	o.flags = flags;
	rec_reader *r = NULL;
	assert_int_equal(rec_reader_open_path(&r, path, &o), REC_OK);
	rec_counters *c = NULL;
	assert_int_equal(rec_counters_open(&c), REC_OK);
	uint64_t damaged = 0;
	assert_int_equal(rec_counters_add_reader(c, r, cflags, &damaged), REC_OK);
	assert_int_equal(damaged, 0);
	size_t n = 0;
	const rec_counter_total *t = rec_counters_get(c, &n);
	assert_int_equal(n, 2);
	/* sorted by name */
	assert_string_equal(t[0].name, "errors");
	assert_string_equal(t[1].name, "requests");
	const rec_counter_total *req = find(t, n, "requests");
	assert_non_null(req);
	assert_int_equal(req->total, 91);
	assert_int_equal(req->resets, 1);
	assert_int_equal(req->samples, 13);
	assert_int_equal(req->runs, 5);
	/* errors: run 0 1 -> 2 (+1); run 2 0, 0, 4 (+4); run 4 7 -> 3 (a reset: +3). */
	const rec_counter_total *err = find(t, n, "errors");
	assert_non_null(err);
	assert_int_equal(err->total, 8);
	assert_int_equal(err->resets, 1);
	assert_int_equal(err->samples, 7);
	assert_int_equal(err->runs, 3);
	rec_counters_close(c);
	rec_reader_close(r);
}

static void t_five_restarts(void **state)
{
	(void)state;
	static const int order[5] = { 0, 1, 2, 3, 4 };
	write_file(order);
	check_totals(0, 0);
	check_totals(0, REC_COUNTERS_EVENTS);
	check_totals(REC_READ_ORDERED, REC_COUNTERS_EVENTS);
	unlink(path);
}

/* Runs concatenated in another order (rec-cat input, `cat b a`): the same. */
static void t_runs_out_of_order(void **state)
{
	(void)state;
	static const int order[5] = { 3, 0, 4, 2, 1 };
	write_file(order);
	check_totals(0, 0);
	check_totals(0, REC_COUNTERS_EVENTS);
	check_totals(REC_READ_ORDERED, REC_COUNTERS_EVENTS);
	unlink(path);
}

/* Single events by hand: baseline, deltas, reset, other runs, ignored types. */
static void t_events(void **state)
{
	(void)state;
	rec_counters *c = NULL;
	assert_int_equal(rec_counters_open(&c), REC_OK);
	rec_chunk_info ch1, ch2;
	memset(&ch1, 0, sizeof ch1);
	memset(&ch2, 0, sizeof ch2);
	ch1.run_id = 1;
	ch2.run_id = 2;
	rec_value v[2];
	memset(v, 0, sizeof v);
	v[0].type = REC_TYPE_STRING;
	v[0].present = 1;
	v[0].v.s.ptr = "x";
	v[0].v.s.len = 1;
	v[1].type = REC_TYPE_U64;
	v[1].present = 1;
	rec_event ev;
	memset(&ev, 0, sizeof ev);
	ev.type = &rec_t_counter_type;
	ev.value_count = 2;
	ev.values = v;
	static const struct { int run; uint64_t value; } seq[] = {
		{ 1, 10 }, { 1, 15 }, { 2, 1000 }, { 1, 12 }, { 2, 1001 }, { 1, 20 }, { 2, 0 },
	};
	for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
		ev.chunk = seq[i].run == 1 ? &ch1 : &ch2;
		v[1].v.u = seq[i].value;
		assert_int_equal(rec_counters_add_event(c, &ev), REC_OK);
	}
	ev.type = &rec_t_other_type;
	v[1].v.u = 5000;
	assert_int_equal(rec_counters_add_event(c, &ev), REC_OK);
	size_t n = 0;
	const rec_counter_total *t = rec_counters_get(c, &n);
	assert_int_equal(n, 1);
	/* run 1: 10 -> 15 (+5), reset to 12 (counted from 0: +12), -> 20 (+8);
	 * run 2: 1000 -> 1001 (+1), reset to 0 (+0) */
	assert_int_equal(t[0].total, 26);
	assert_int_equal(t[0].resets, 2);
	assert_int_equal(t[0].samples, 7);
	assert_int_equal(t[0].runs, 2);
	assert_int_equal(t[0].last_value, 0);
	rec_counters_close(c);
	rec_counters_close(NULL);
}

/* Feed one sample of counter name in run (run id) by hand. */
static void feed(rec_counters *c, const char *name, uint64_t run, uint64_t value)
{
	rec_chunk_info ch;
	memset(&ch, 0, sizeof ch);
	ch.run_id = run;
	rec_value v[2];
	memset(v, 0, sizeof v);
	v[0].type = REC_TYPE_STRING;
	v[0].present = 1;
	v[0].v.s.ptr = name;
	v[0].v.s.len = strlen(name);
	v[1].type = REC_TYPE_U64;
	v[1].present = 1;
	v[1].v.u = value;
	rec_event ev;
	memset(&ev, 0, sizeof ev);
	ev.type = &rec_t_counter_type;
	ev.chunk = &ch;
	ev.value_count = 2;
	ev.values = v;
	assert_int_equal(rec_counters_add_event(c, &ev), REC_OK);
}

/* A u64 that wraps within a run is told from a reset by how far it drops:
 * by at least 2^63 it wrapped (the increase is taken mod 2^64), by less it
 * was reset (counting went on from 0).  A total past 2^64 - 1 stays there. */
static void t_wrap_and_reset(void **state)
{
	(void)state;
	rec_counters *c = NULL;
	assert_int_equal(rec_counters_open(&c), REC_OK);
	/* 2^64 - 10 (the start), +5, then past 2^64 - 1 to 15: +20. */
	feed(c, "wrap", 1, UINT64_MAX - 9);
	feed(c, "wrap", 1, UINT64_MAX - 4);
	feed(c, "wrap", 1, 15);
	feed(c, "wrap", 1, 40); /* +25 */
	/* 2^63 + 10 down to 20: a drop of 2^63 - 10, a reset (+20). */
	feed(c, "reset", 1, 0);
	feed(c, "reset", 1, (1ull << 63) + 10);
	feed(c, "reset", 1, 20);
	/* Two runs that count 2^64 - 1 and 10 in all: the total saturates. */
	feed(c, "big", 1, 0);
	feed(c, "big", 1, UINT64_MAX);
	feed(c, "big", 2, 0);
	feed(c, "big", 2, 10);
	size_t n = 0;
	const rec_counter_total *t = rec_counters_get(c, &n);
	assert_int_equal(n, 3);
	const rec_counter_total *w = find(t, n, "wrap"), *r = find(t, n, "reset"),
				*b = find(t, n, "big");
	assert_non_null(w);
	assert_non_null(r);
	assert_non_null(b);
	assert_int_equal(w->total, 50);
	assert_int_equal(w->resets, 0);
	assert_int_equal(r->total, (1ull << 63) + 10 + 20);
	assert_int_equal(r->resets, 1);
	assert_true(b->total == UINT64_MAX);
	assert_int_equal(b->runs, 2);
	rec_counters_close(c);
}

/* Within a chunk, records of different threads interleave in any order: a
 * counter's start (committed by the thread that created it) may follow a
 * later sample in the file.  The chunk's samples are taken in timestamp
 * order: 0 at ticks 2000, 7 at ticks 3000 is +7, whatever the file order. */
static void t_chunk_timestamp_order(void **state)
{
	(void)state;
	snprintf(path, sizeof path, "/tmp/test_counters.XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.run_id = 77;
	o.pid = 4242;
	o.anchor_ticks = 1000;
	rec_writer *w = NULL;
	assert_int_equal(rec_writer_open_fd(&w, fd, &o), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &rec_t_counter_type), REC_OK);
	uint64_t s_jobs;
	assert_int_equal(rec_writer_intern_string(w, "jobs", 4, &s_jobs), REC_OK);
	static const uint64_t ticks[] = { 3000, 2000, 5000, 4000 }, vals[] = { 7, 0, 12, 9 };
	for (int i = 0; i < 4; i++) {
		assert_int_equal(rec_writer_begin(w, rec_t_counter_type.id, ticks[i], 0, 0, 0), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, s_jobs), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, vals[i]), REC_OK);
		assert_int_equal(rec_writer_end(w), REC_OK);
		if (i == 1)
			assert_int_equal(rec_writer_flush(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
	assert_int_equal(close(fd), 0);

	rec_reader *r = NULL;
	assert_int_equal(rec_reader_open_path(&r, path, NULL), REC_OK);
	rec_counters *c = NULL;
	assert_int_equal(rec_counters_open(&c), REC_OK);
	uint64_t damaged = 0;
	assert_int_equal(rec_counters_add_reader(c, r, 0, &damaged), REC_OK);
	assert_int_equal(damaged, 0);
	size_t n = 0;
	const rec_counter_total *t = rec_counters_get(c, &n);
	assert_int_equal(n, 1);
	assert_int_equal(t[0].total, 12);
	assert_int_equal(t[0].resets, 0);
	assert_int_equal(t[0].samples, 4);
	assert_int_equal(t[0].last_value, 12);
	rec_counters_close(c);
	rec_reader_close(r);
	unlink(path);
}

static int mem_write(void *opaque, const void *buf, size_t len)
{
	FILE *f = opaque;
	return fwrite(buf, 1, len, f) == len ? 0 : -5;
}

/* rec_reader_chunk_write(): every chunk of a real file, from a file reader
 * and from a memory reader, verified or not, gives back the file's bytes. */
static void t_chunk_write(void **state)
{
	(void)state;
	static const int order[5] = { 0, 1, 2, 3, 4 };
	write_file(order);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	size_t size = (size_t)sb.st_size;
	char *orig = malloc(size);
	assert_non_null(orig);
	assert_int_equal(fread(orig, 1, size, f), size);
	fclose(f);
	for (int mode = 0; mode < 4; mode++) {
		char *copy = NULL;
		size_t clen = 0;
		FILE *m = open_memstream(&copy, &clen);
		assert_non_null(m);
		rec_sink sink = { mem_write, NULL, m };
		rec_reader *r = NULL;
		if (mode & 1)
			assert_int_equal(rec_reader_open_mem(&r, orig, size, "mem", NULL), REC_OK);
		else
			assert_int_equal(rec_reader_open_path(&r, path, NULL), REC_OK);
		assert_int_equal(rec_reader_chunk_write(r, &sink), REC_ERR_STATE);
		const rec_chunk_info *ci;
		int chunks = 0;
		while (rec_reader_next_chunk(r, &ci) == REC_OK) {
			if (mode & 2)
				assert_int_equal(rec_reader_verify_chunk(r), REC_OK);
			uint32_t hc = 0, pc = 0;
			assert_int_equal(rec_reader_chunk_checksums(r, &hc, &pc), REC_OK);
			assert_true(hc != 0 || pc != 0);
			assert_int_equal(rec_reader_chunk_write(r, &sink), REC_OK);
			chunks++;
		}
		rec_reader_close(r);
		fclose(m);
		assert_true(chunks >= 18);
		assert_int_equal(clen, size);
		assert_memory_equal(copy, orig, size);
		free(copy);
	}
	free(orig);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_five_restarts),
		cmocka_unit_test(t_runs_out_of_order),
		cmocka_unit_test(t_events),
		cmocka_unit_test(t_wrap_and_reset),
		cmocka_unit_test(t_chunk_timestamp_order),
		cmocka_unit_test(t_chunk_write),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
