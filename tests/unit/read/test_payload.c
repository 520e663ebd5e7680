/* SPDX-License-Identifier: MIT */
/*
 * test_payload.c - payload.c, loading a chunk's payload: for the
 * statistics (rec_reader_next_chunk) a format 1.1 chunk's front (header,
 * section table, METADATA, STATS, covered by the Front_Checksum) is read
 * and its events are not, while a 1.0 chunk's whole payload must be read
 * for its checksum; measured on a real file with the kernel's count of
 * bytes read (/proc/self/io rchar).  Moved from test_reader_damage.c:
 * t_front_reads_little.
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
#include <unistd.h>

#include "common/common_internal.h"
#include "rec/rec.h"
#include "../../lib/v10.h"

static char tmpdir[] = "/tmp/test_payload.XXXXXX";

static const char *tpath(const char *name)
{
	static char buf[4][256];
	static int k;
	char *p = buf[k++ & 3];
	snprintf(p, 256, "%s/%s", tmpdir, name);
	return p;
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

typedef struct mem_sink {
	uint8_t *p;
	size_t n, cap;
} mem_sink;

static int mem_write(void *o, const void *b, size_t n)
{
	mem_sink *m = o;
	if (m->n + n > m->cap) {
		size_t c = (m->n + n) * 2;
		uint8_t *q = realloc(m->p, c);
		if (!q)
			return -ENOMEM;
		m->p = q;
		m->cap = c;
	}
	memcpy(m->p + m->n, b, n);
	m->n += n;
	return 0;
}

static const rec_field fields[] = {
	{ "n", "", "", REC_TYPE_U32, 0 },
	{ "s", "", "", REC_TYPE_STRING, 0 },
	{ "t", "", "", REC_TYPE_TEXT, 0 },
};

/* A recording of nchunks chunks of per events each (type 1, u32 n = event
 * number, a pooled string, a text); chunk offsets in off[] (off[nchunks] =
 * length). */
static mem_sink make_rec(int nchunks, int per, unsigned codec, uint64_t *off)
{
	mem_sink m = { 0 };
	rec_sink s = { mem_write, NULL, &m };
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.codec = codec;
	o.anchor_wall_ns = 1000;
	o.anchor_ticks = 1;
	rec_writer *w;
	assert_int_equal(rec_writer_open(&w, &s, &o), REC_OK);
	rec_type t = { 1, REC_EVENT_HAS_THREAD, "d.T", "", "", "", 3, fields };
	assert_int_equal(rec_writer_add_type(w, &t), REC_OK);
	uint64_t name, str;
	assert_int_equal(rec_writer_intern_string(w, "main", 4, &name), REC_OK);
	assert_int_equal(rec_writer_intern_string(w, "pooled", 6, &str), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 7, name), REC_OK);
	uint32_t n = 0;
	for (int c = 0; c < nchunks; c++) {
		off[c] = m.n;
		for (int i = 0; i < per; i++, n++) {
			assert_int_equal(rec_writer_begin(w, 1, 10 + n, 0, 1, 0), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, n), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, str), REC_OK);
			assert_int_equal(rec_writer_put_bytes(w, "text", 4), REC_OK);
			assert_int_equal(rec_writer_end(w), REC_OK);
		}
		if (c + 1 < nchunks)
			assert_int_equal(rec_writer_flush(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
	off[nchunks] = m.n;
	return m;
}




/* rec_reader_next_chunk() on a 1.1 file reads the section headers, METADATA
 * and STATS, not the EVENTS bytes (the kernel's count of bytes this process
 * read, /proc/self/io rchar, grows by a small part of the file); on the same
 * recording as 1.0 it reads every payload byte to check its checksum. */
static uint64_t rchar(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	assert_non_null(f);
	char line[128];
	uint64_t v = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "rchar: %llu", (unsigned long long *)&v) == 1)
			break;
	fclose(f);
	return v;
}

static void t_front_reads_little(void **state)
{
	(void)state;
	uint64_t off[5];
	mem_sink m = make_rec(4, 20000, REC_CODEC_NONE, off);
	for (int v10 = 0; v10 < 2; v10++) {
		if (v10)
			assert_int_equal(rec_t_to_v10(m.p, m.n), 4);
		write_file(tpath("little.rec"), m.p, m.n);
		rec_reader *r;
		assert_int_equal(rec_reader_open_path(&r, tpath("little.rec"), NULL), REC_OK);
		uint64_t before = rchar(), events = 0;
		const rec_chunk_info *c;
		rec_status st;
		while ((st = rec_reader_next_chunk(r, &c)) == REC_OK)
			events += c->event_count;
		uint64_t read = rchar() - before;
		assert_int_equal(st, REC_END);
		assert_int_equal(events, 80000);
		rec_reader_close(r);
		print_message("format 1.%d: read %llu of %zu bytes\n", 1 - v10, (unsigned long long)read, m.n);
		if (v10)
			assert_true(read >= m.n);
		else
			assert_true(read < m.n / 4);
	}
	free(m.p);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_front_reads_little),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
