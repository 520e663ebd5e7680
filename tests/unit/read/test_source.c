/* SPDX-License-Identifier: MIT */
/*
 * test_source.c - source.c, where the reader's bytes come from: the caller's
 * memory, a regular file (pread at any offset) or a pipe (read forward
 * only, here a real pipe on standard input fed by a thread in small odd
 * writes with pauses).  The same recording (made by the real writer with
 * the real compressor) reads the same from all three; a pipe that ends
 * inside a chunk delivers every earlier event and reports the cut chunk; a
 * missing file, a directory and an empty file are told apart.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rec/rec.h"
#include "../../lib/membuf.h"
#include "../../lib/tmpdir.h"

static char g_dir[256];

static const char *tpath(const char *name)
{
	static char buf[4][512];
	static int k;
	char *p = buf[k++ & 3];
	snprintf(p, 512, "%s/%s", g_dir, name);
	return p;
}

static const rec_field fields[] = {
	{ "seq", "", "", REC_TYPE_U64, 0 },
	{ "text", "", "", REC_TYPE_TEXT, 0 },
};

#define NEV 3000u

/* NEV events in chunks of 150, zstd; chunk offsets in off[] (NULL: not
 * wanted). */
static membuf make_rec(uint64_t *off, size_t *nchunks)
{
	membuf m = { 0 };
	rec_sink s = { mem_write, NULL, &m };
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.codec = REC_CODEC_ZSTD;
	o.anchor_wall_ns = 1700000000000000000;
	o.anchor_ticks = 0;
	o.tick_frequency = 1000000000u;
	rec_writer *w;
	assert_int_equal(rec_writer_open(&w, &s, &o), REC_OK);
	rec_type t = { 1, 0, "src.T", "", "", "", 2, fields };
	assert_int_equal(rec_writer_add_type(w, &t), REC_OK);
	char text[64];
	size_t c = 0;
	for (uint64_t i = 0; i < NEV; i++) {
		if (i % 150 == 0 && off)
			off[c++] = m.len;
		int n = snprintf(text, sizeof text, "event %llu of the source test",
				 (unsigned long long)i);
		assert_int_equal(rec_writer_begin(w, 1, 10 + i, 0, 0, 0), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, i), REC_OK);
		assert_int_equal(rec_writer_put_bytes(w, text, (size_t)n), REC_OK);
		assert_int_equal(rec_writer_end(w), REC_OK);
		if (i % 150 == 149 && i + 1 < NEV)
			assert_int_equal(rec_writer_flush(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
	if (nchunks)
		*nchunks = c;
	return m;
}

/* Reads every event of r: their seqs must be 0, 1, ...; returns how many,
 * the status that ended it in *end. */
static uint64_t read_all(rec_reader *r, rec_status *end)
{
	rec_event ev;
	rec_status st;
	uint64_t n = 0;
	char want[64];
	while ((st = rec_reader_next_event(r, &ev)) != REC_END) {
		if (st != REC_OK)
			break;
		assert_int_equal(ev.values[0].v.u, n);
		int k = snprintf(want, sizeof want, "event %llu of the source test",
				 (unsigned long long)n);
		assert_int_equal(ev.values[1].v.s.len, (size_t)k);
		assert_memory_equal(ev.values[1].v.s.ptr, want, (size_t)k);
		assert_int_equal(ev.ticks, 10 + n);
		n++;
	}
	*end = st;
	return n;
}

/* A thread feeding a pipe in small odd writes, pausing now and then. */
typedef struct pipe_job {
	int fd;
	const uint8_t *p;
	size_t n;
} pipe_job;

static void *pipe_writer(void *arg)
{
	pipe_job *j = arg;
	size_t done = 0, writes = 0;
	while (done < j->n) {
		size_t k = j->n - done < 1013 ? j->n - done : 1013;
		ssize_t w = write(j->fd, j->p + done, k);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
		if (++writes % 16 == 0)
			rec_t_sleep_ms(1); /* the reader waits for more */
	}
	close(j->fd);
	return NULL;
}

/* Reads n bytes of p through a pipe on standard input ("-"). */
static uint64_t read_through_pipe(const uint8_t *p, size_t n, rec_status *end, rec_reader_stats *rs)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	int saved = dup(STDIN_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fds[0], STDIN_FILENO) >= 0);
	close(fds[0]);
	pipe_job j = { fds[1], p, n };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, pipe_writer, &j), 0);
	rec_reader *r;
	assert_int_equal(rec_reader_open_path(&r, "-", NULL), REC_OK);
	uint64_t got = read_all(r, end);
	if (*end != REC_END) {
		const rec_problem *pr = rec_reader_problem(r);
		assert_int_equal(pr->status, *end);
		/* the rest of the input, after the problem */
		rec_event ev;
		assert_int_equal(rec_reader_next_event(r, &ev), REC_END);
	}
	rec_reader_get_stats(r, rs);
	rec_reader_close(r);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(dup2(saved, STDIN_FILENO) >= 0);
	close(saved);
	return got;
}

static void t_three_sources(void **state)
{
	(void)state;
	size_t nchunks;
	uint64_t off[64];
	membuf m = make_rec(off, &nchunks);
	assert_int_equal(nchunks, NEV / 150);
	rec_status end;
	rec_reader_stats rs;
	rec_reader *r;

	/* memory */
	assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "mem", NULL), REC_OK);
	assert_int_equal(read_all(r, &end), NEV);
	assert_int_equal(end, REC_END);
	rec_reader_get_stats(r, &rs);
	assert_int_equal(rs.chunks, nchunks);
	rec_reader_close(r);

	/* a regular file */
	FILE *f = fopen(tpath("src.rec"), "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(m.p, 1, m.len, f), m.len);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rec_reader_open_path(&r, tpath("src.rec"), NULL), REC_OK);
	assert_int_equal(read_all(r, &end), NEV);
	assert_int_equal(end, REC_END);
	rec_reader_get_stats(r, &rs);
	assert_int_equal(rs.file_size, m.len);
	assert_int_equal(rs.chunks, nchunks);
	rec_reader_close(r);
	/* a file's chunks can be passed over without reading their events */
	assert_int_equal(rec_reader_open_path(&r, tpath("src.rec"), NULL), REC_OK);
	const rec_chunk_info *ci;
	size_t c = 0;
	while (rec_reader_next_chunk(r, &ci) == REC_OK) {
		assert_int_equal(ci->offset, off[c]);
		c++;
	}
	assert_int_equal(c, nchunks);
	rec_reader_close(r);

	/* a pipe */
	assert_int_equal(read_through_pipe(m.p, m.len, &end, &rs), NEV);
	assert_int_equal(end, REC_END);
	assert_int_equal(rs.file_size, 0); /* not known */
	assert_int_equal(rs.chunks, nchunks);
	free(m.p);
}

/* A pipe that ends inside chunk k: every event before it, then the cut
 * chunk reported as truncated. */
static void t_pipe_cut(void **state)
{
	(void)state;
	size_t nchunks;
	uint64_t off[64];
	membuf m = make_rec(off, &nchunks);
	for (size_t k = 1; k < nchunks; k += 6) {
		const size_t cut = (size_t)off[k] + 200;
		rec_status end;
		rec_reader_stats rs;
		uint64_t got = read_through_pipe(m.p, cut, &end, &rs);
		assert_int_equal(end, REC_ERR_TRUNCATED);
		assert_int_equal(got, 150 * k);
	}
	free(m.p);
}

static void t_not_a_recording(void **state)
{
	(void)state;
	rec_reader *r = NULL;
	errno = 0;
	assert_int_equal(rec_reader_open_path(&r, tpath("not-there.rec"), NULL), REC_ERR_IO);
	assert_int_equal(errno, ENOENT);
	assert_null(r);
	/* a directory: refused when opened, or its first read fails */
	rec_status st = rec_reader_open_path(&r, g_dir, NULL);
	if (st == REC_OK) {
		const rec_chunk_info *ci;
		assert_true(rec_reader_next_chunk(r, &ci) < 0);
		rec_reader_close(r);
	} else {
		assert_int_equal(st, REC_ERR_IO);
	}
	/* an empty file: no chunks, no problem */
	int fd = open(tpath("empty.rec"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(rec_reader_open_path(&r, tpath("empty.rec"), NULL), REC_OK);
	rec_event ev;
	assert_int_equal(rec_reader_next_event(r, &ev), REC_END);
	rec_reader_close(r);
}

int main(void)
{
	if (rec_t_tmpdir_create(g_dir, sizeof g_dir, "rec-test-source") != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_three_sources),
		cmocka_unit_test(t_pipe_cut),
		cmocka_unit_test(t_not_a_recording),
	};
	return rec_t_tmpdir_finish(g_dir, cmocka_run_group_tests(tests, NULL, NULL));
}
