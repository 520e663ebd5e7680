/* SPDX-License-Identifier: MIT */
/*
 * test_tools.c - the archive tools' run functions (tools/common/tools.h:
 * rec_check_run, rec_summary_tool_run, rec_cat_run, rec_recover_run,
 * rec_split_run, rec_scrub_run) called directly, as main() calls them, on
 * recordings made by the real writer in real files (and one in memory).
 * Each result is checked against what the test wrote: chunk sizes and
 * counts from the writer's own bytes (read back through the reader), the
 * output files byte for byte, the exit codes, the messages.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../../tools/common/tools.h"
#include "../../lib/tmpdir.h"
#include "rec/analysis.h"
#include "rec/rec.h"

static char tmpdir[256];

static const char *tpath(const char *name)
{
	static char buf[8][512];
	static int k;
	char *p = buf[k++ & 7];
	snprintf(p, 512, "%s/%s", tmpdir, name);
	return p;
}

typedef struct bytes {
	uint8_t *p;
	size_t n;
} bytes;

static bytes read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	bytes b = { NULL, 0 };
	size_t cap = 0;
	for (;;) {
		if (b.n == cap) {
			cap = cap ? cap * 2 : 4096;
			b.p = realloc(b.p, cap);
			assert_non_null(b.p);
		}
		size_t k = fread(b.p + b.n, 1, cap - b.n, f);
		if (k == 0)
			break;
		b.n += k;
	}
	fclose(f);
	return b;
}

static void write_all(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* ---- the recordings ------------------------------------------------------------ */
/* A run of 3 chunks of 10 events each (types test.One and test.Two in
 * turn), the last written by close (FINAL). */
static const rec_field fields[] = { { "n", "N", "", REC_TYPE_U64, 0 } };

static void make_run(const char *path, uint64_t run_id, int64_t wall)
{
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.run_id = run_id;
	o.pid = 4242;
	o.process_start_ns = wall - 1000000000;
	o.anchor_wall_ns = wall;
	o.anchor_ticks = 0;
	o.tick_frequency = 1000000000u;
	rec_writer *w;
	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	rec_type one = { 1, 0, "test.One", "", "", "test", 1, fields };
	rec_type two = { 2, 0, "test.Two", "", "", "test", 1, fields };
	assert_int_equal(rec_writer_add_type(w, &one), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &two), REC_OK);
	for (uint64_t i = 0; i < 30; i++) {
		assert_int_equal(rec_writer_begin(w, 1 + (uint32_t)(i % 2), 1000 + i * 1000, 0, 0, 0),
				 REC_OK);
		assert_int_equal(rec_writer_put_u64(w, i), REC_OK);
		assert_int_equal(rec_writer_end(w), REC_OK);
		if (i == 9 || i == 19)
			assert_int_equal(rec_writer_flush(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
}

/* The chunks of a file as the reader sees them (the ground truth). */
typedef struct chunks {
	size_t n;
	uint64_t offset[8], size[8], events[8];
	uint64_t total_events;
} chunks;

static chunks chunks_of(const char *path)
{
	chunks c;
	memset(&c, 0, sizeof c);
	rec_reader *r;
	assert_int_equal(rec_reader_open_path(&r, path, NULL), REC_OK);
	const rec_chunk_info *ci;
	rec_status st;
	while ((st = rec_reader_next_chunk(r, &ci)) == REC_OK) {
		assert_true(c.n < 8);
		c.offset[c.n] = ci->offset;
		c.size[c.n] = ci->size;
		c.events[c.n] = ci->event_count;
		c.total_events += ci->event_count;
		c.n++;
	}
	assert_int_equal(st, REC_END);
	rec_reader_close(r);
	return c;
}

/* Events of each type in a file, through the reader. */
static void count_types(const char *path, uint64_t *one, uint64_t *two)
{
	*one = *two = 0;
	rec_reader *r;
	assert_int_equal(rec_reader_open_path(&r, path, NULL), REC_OK);
	rec_event ev;
	rec_status st;
	while ((st = rec_reader_next_event(r, &ev)) == REC_OK) {
		if (strcmp(ev.type->name, "test.One") == 0)
			(*one)++;
		else if (strcmp(ev.type->name, "test.Two") == 0)
			(*two)++;
		else
			fail_msg("unexpected type %s", ev.type->name);
	}
	assert_int_equal(st, REC_END);
	rec_reader_close(r);
}

static bytes A, B, D; /* run 1, run 2 (later), run 1 with chunk 1 damaged */
static chunks CA, CB;

static int setup(void **state)
{
	(void)state;
	assert_int_equal(rec_t_tmpdir_create(tmpdir, sizeof tmpdir, "test_tools"), 0);
	make_run(tpath("a.rec"), 0xA1, 1796206443000000000LL);
	make_run(tpath("b.rec"), 0xB2, 1796206543000000000LL);
	A = read_all(tpath("a.rec"));
	B = read_all(tpath("b.rec"));
	CA = chunks_of(tpath("a.rec"));
	CB = chunks_of(tpath("b.rec"));
	assert_int_equal(CA.n, 3);
	assert_int_equal(CA.total_events, 30);
	/* A byte in the middle of chunk 1's payload: its checksum fails. */
	D.n = A.n;
	D.p = malloc(D.n);
	assert_non_null(D.p);
	memcpy(D.p, A.p, A.n);
	D.p[CA.offset[1] + CA.size[1] - 8] ^= 0x5a;
	write_all(tpath("d.rec"), D.p, D.n);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(A.p);
	free(B.p);
	free(D.p);
	return rec_t_tmpdir_remove(tmpdir);
}

/* ---- a run function's streams --------------------------------------------------- */
typedef struct streams {
	FILE *out, *err;
	char *o, *e; /* their contents after the run */
} streams;

static void streams_open(streams *s)
{
	s->out = tmpfile();
	s->err = tmpfile();
	assert_non_null(s->out);
	assert_non_null(s->err);
	s->o = s->e = NULL;
}

static char *slurp(FILE *f)
{
	fflush(f);
	long n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	char *p = malloc((size_t)n + 1);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
	p[n] = '\0';
	return p;
}

/* After a run: the contents, the default streams back. */
static void streams_done(streams *s)
{
	rec_cli_set_streams(NULL, NULL);
	s->o = slurp(s->out);
	s->e = slurp(s->err);
	fclose(s->out);
	fclose(s->err);
}

static void streams_free(streams *s)
{
	free(s->o);
	free(s->e);
}

static void assert_has(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("'%s' not in:\n%s", part, text);
}

static void assert_same_file(const char *path, const void *p, size_t n)
{
	bytes b = read_all(path);
	assert_int_equal(b.n, n);
	assert_memory_equal(b.p, p, n);
	free(b.p);
}

/* ---- rec-check ------------------------------------------------------------------ */
static void t_check(void **state)
{
	(void)state;
	char want[1024];
	streams s;
	rec_check_opts o = { 0 };

	rec_cli_input in1[] = { { .name = tpath("a.rec") } };
	streams_open(&s);
	assert_int_equal(rec_check_run(&o, in1, 1, s.out, s.err), REC_EXIT_OK);
	streams_done(&s);
	snprintf(want, sizeof want, "%s: OK, 3 chunks, 30 events\n", tpath("a.rec"));
	assert_string_equal(s.o, want);
	assert_string_equal(s.e, "");
	streams_free(&s);

	/* The damaged copy: chunk 1 named on stderr, its bytes skipped. */
	rec_cli_input in2[] = { { .name = tpath("a.rec") }, { .name = tpath("d.rec") } };
	streams_open(&s);
	assert_int_equal(rec_check_run(&o, in2, 2, s.out, s.err), REC_EXIT_DATA);
	streams_done(&s);
	snprintf(want, sizeof want, "%s: DAMAGED, 1 of 3 chunks, %" PRIu64 " bytes skipped\n",
		 tpath("d.rec"), CA.size[1]);
	assert_has(s.o, want);
	snprintf(want, sizeof want, "%s: chunk 1 at offset %" PRIu64 ": ", tpath("d.rec"),
		 CA.offset[1]);
	assert_has(s.e, want);
	streams_free(&s);

	/* In memory, --json, --quiet. */
	rec_cli_input mem[] = { { .name = "mem", .data = A.p, .size = A.n } };
	o.json = true;
	streams_open(&s);
	assert_int_equal(rec_check_run(&o, mem, 1, s.out, s.err), REC_EXIT_OK);
	streams_done(&s);
	assert_has(s.o, "\"ok\": true");
	assert_has(s.o, "\"path\": \"mem\"");
	snprintf(want, sizeof want, "\"size\": %zu", A.n);
	assert_has(s.o, want);
	assert_has(s.o, "\"events\": 30");
	streams_free(&s);
	o.json = false;
	o.quiet = true;
	streams_open(&s);
	assert_int_equal(rec_check_run(&o, mem, 1, s.out, s.err), REC_EXIT_OK);
	streams_done(&s);
	assert_string_equal(s.o, "");
	streams_free(&s);

	/* Usage errors the inputs show. */
	rec_cli_input two_stdin[] = { { .name = "-" }, { .name = "-" } };
	streams_open(&s);
	assert_int_equal(rec_check_run(&o, two_stdin, 2, s.out, s.err), REC_EXIT_USAGE);
	assert_int_equal(rec_check_run(&o, in1, 0, s.out, s.err), REC_EXIT_USAGE);
	streams_done(&s);
	assert_has(s.e, "standard input ('-') given more than once");
	assert_has(s.e, "no input file");
	assert_string_equal(s.o, "");
	streams_free(&s);
}

/* ---- rec-summary ---------------------------------------------------------------- */
static void t_summary(void **state)
{
	(void)state;
	streams s;
	rec_summary_tool_opts o = { .json = true, .flags = REC_SUMMARY_COUNTERS | REC_SUMMARY_DROPS };
	rec_cli_input in[] = { { .name = tpath("a.rec") }, { .name = tpath("b.rec") } };
	streams_open(&s);
	assert_int_equal(rec_summary_tool_run(&o, in, 2, s.out, s.err), REC_EXIT_OK);
	streams_done(&s);
	assert_has(s.o, "\"chunks\": 6,");
	assert_has(s.o, "\"events\": 60,");
	assert_has(s.o, "\"run_id\": \"00000000000000a1\"");
	assert_has(s.o, "\"run_id\": \"00000000000000b2\"");
	assert_has(s.o, "{\"name\": \"test.One\", \"label\": \"\", \"category\": \"test\", \"count\": 30,");
	assert_has(s.o, "{\"name\": \"test.Two\", \"label\": \"\", \"category\": \"test\", \"count\": 30,");
	assert_string_equal(s.e, "");
	streams_free(&s);

	/* The damaged copy: what is readable, the problem, exit 1. */
	rec_cli_input d[] = { { .name = tpath("d.rec") } };
	o.flags |= REC_SUMMARY_VERIFY;
	streams_open(&s);
	assert_int_equal(rec_summary_tool_run(&o, d, 1, s.out, s.err), REC_EXIT_DATA);
	streams_done(&s);
	char want[64];
	snprintf(want, sizeof want, "\"events\": %" PRIu64 ",", CA.events[0] + CA.events[2]);
	assert_has(s.o, want);
	assert_has(s.o, "\"chunks_damaged\": 1,");
	assert_has(s.e, "chunk 1 at offset");
	streams_free(&s);

	streams_open(&s);
	assert_int_equal(rec_summary_tool_run(&o, in, 0, s.out, s.err), REC_EXIT_USAGE);
	streams_done(&s);
	assert_has(s.e, "no input file");
	streams_free(&s);
}

/* ---- rec-cat -------------------------------------------------------------------- */
static void t_cat(void **state)
{
	(void)state;
	streams s;
	char want[512];
	/* B, A, A: the duplicate run goes, runs come in start order (A first). */
	rec_cli_input in[] = { { .name = tpath("b.rec") }, { .name = tpath("a.rec") },
			       { .name = tpath("a.rec") } };
	rec_cat_opts o = { .output = tpath("cat.rec") };
	streams_open(&s);
	assert_int_equal(rec_cat_run(&o, in, 3, s.out, s.err), REC_EXIT_OK);
	streams_done(&s);
	uint8_t *ab = malloc(A.n + B.n);
	assert_non_null(ab);
	memcpy(ab, A.p, A.n);
	memcpy(ab + A.n, B.p, B.n);
	assert_same_file(tpath("cat.rec"), ab, A.n + B.n);
	snprintf(want, sizeof want,
		 "3 files: 6 chunks of 2 runs written (%zu bytes), 3 duplicate chunks removed (%zu bytes)\n",
		 A.n + B.n, A.n);
	assert_has(s.e, want);
	assert_string_equal(s.o, "");
	streams_free(&s);

	/* --keep-order: B first. */
	o.keep_order = true;
	o.quiet = true;
	streams_open(&s);
	assert_int_equal(rec_cat_run(&o, in, 3, s.out, s.err), REC_EXIT_OK);
	streams_done(&s);
	memcpy(ab, B.p, B.n);
	memcpy(ab + B.n, A.p, A.n);
	assert_same_file(tpath("cat.rec"), ab, A.n + B.n);
	assert_string_equal(s.e, "");
	streams_free(&s);
	free(ab);

	/* The damaged chunk is left out and counted. */
	rec_cli_input ad[] = { { .name = tpath("d.rec") } };
	o.keep_order = o.quiet = false;
	o.output = tpath("cat-d.rec");
	streams_open(&s);
	assert_int_equal(rec_cat_run(&o, ad, 1, s.out, s.err), REC_EXIT_DATA);
	streams_done(&s);
	assert_has(s.e, "1 file: 2 chunks of 1 run written");
	assert_has(s.e, ", 1 damaged chunk left out\n");
	bytes got = read_all(tpath("cat-d.rec"));
	assert_int_equal(got.n, A.n - CA.size[1]);
	free(got.p);
	streams_free(&s);

	/* Usage errors: standard input, memory, the output among the inputs. */
	rec_cli_input bad[] = { { .name = "-" } };
	rec_cli_input mem[] = { { .name = "mem", .data = A.p, .size = A.n } };
	rec_cli_input self[] = { { .name = tpath("a.rec") } };
	rec_cat_opts so = { .output = tpath("a.rec") };
	streams_open(&s);
	assert_int_equal(rec_cat_run(&o, bad, 1, s.out, s.err), REC_EXIT_USAGE);
	assert_int_equal(rec_cat_run(&o, mem, 1, s.out, s.err), REC_EXIT_USAGE);
	assert_int_equal(rec_cat_run(&so, self, 1, s.out, s.err), REC_EXIT_USAGE);
	streams_done(&s);
	assert_has(s.e, "rec-cat reads its inputs twice and needs files");
	snprintf(want, sizeof want, "output %s is also an input", tpath("a.rec"));
	assert_has(s.e, want);
	assert_same_file(tpath("a.rec"), A.p, A.n);
	streams_free(&s);
}

/* ---- rec-recover ---------------------------------------------------------------- */
static void t_recover(void **state)
{
	(void)state;
	streams s;
	char want[512];
	rec_cli_input d = { .name = tpath("d.rec") };
	rec_recover_opts o = { .output = tpath("rec.rec") };
	streams_open(&s);
	assert_int_equal(rec_recover_run(&o, &d, s.out, s.err), REC_EXIT_DATA);
	streams_done(&s);
	/* OUT: chunks 0 and 2 of A, byte for byte. */
	size_t n0 = (size_t)CA.size[0], n2 = (size_t)CA.size[2];
	uint8_t *kept = malloc(n0 + n2);
	assert_non_null(kept);
	memcpy(kept, A.p + CA.offset[0], n0);
	memcpy(kept + n0, A.p + CA.offset[2], n2);
	assert_same_file(tpath("rec.rec"), kept, n0 + n2);
	free(kept);
	snprintf(want, sizeof want, "%s: dropped %" PRIu64 " bytes at offset %" PRIu64 " (to offset %" PRIu64 ")\n",
		 tpath("d.rec"), CA.size[1], CA.offset[1], CA.offset[2]);
	assert_has(s.e, want);
	snprintf(want, sizeof want, "kept 2 of 3 chunks (%" PRIu64 " events, %zu bytes); dropped 1 chunk, %" PRIu64 " bytes\n",
		 CA.events[0] + CA.events[2], n0 + n2, CA.size[1]);
	assert_has(s.e, want);
	streams_free(&s);

	/* An intact input in memory: a byte copy, exit 0. */
	rec_cli_input mem = { .name = "mem", .data = A.p, .size = A.n };
	o.quiet = true;
	streams_open(&s);
	assert_int_equal(rec_recover_run(&o, &mem, s.out, s.err), REC_EXIT_OK);
	streams_done(&s);
	assert_same_file(tpath("rec.rec"), A.p, A.n);
	assert_string_equal(s.e, "");
	streams_free(&s);

	/* OUT is IN. */
	rec_recover_opts same = { .output = tpath("d.rec") };
	streams_open(&s);
	assert_int_equal(rec_recover_run(&same, &d, s.out, s.err), REC_EXIT_USAGE);
	streams_done(&s);
	assert_has(s.e, "OUT is the same file as IN");
	assert_same_file(tpath("d.rec"), D.p, D.n);
	streams_free(&s);
}

/* ---- rec-split ------------------------------------------------------------------ */
static void t_split(void **state)
{
	(void)state;
	streams s;
	char want[1024];
	/* A then B in one file, split by run: A and B again. */
	uint8_t *ab = malloc(A.n + B.n);
	assert_non_null(ab);
	memcpy(ab, A.p, A.n);
	memcpy(ab + A.n, B.p, B.n);
	write_all(tpath("ab.rec"), ab, A.n + B.n);
	rec_cli_input in = { .name = tpath("ab.rec") };
	rec_split_opts o = { .by = REC_SPLIT_BY_RUN };
	streams_open(&s);
	assert_int_equal(rec_split_run(&o, &in, s.out, s.err), REC_EXIT_OK);
	streams_done(&s);
	assert_same_file(tpath("ab-0001.rec"), A.p, A.n);
	assert_same_file(tpath("ab-0002.rec"), B.p, B.n);
	snprintf(want, sizeof want,
		 "%s: 3 chunks, 30 events, %zu bytes, run 00000000000000a1 pid 4242\n"
		 "%s: 3 chunks, 30 events, %zu bytes, run 00000000000000b2 pid 4242\n",
		 tpath("ab-0001.rec"), A.n, tpath("ab-0002.rec"), B.n);
	assert_string_equal(s.o, want);
	assert_string_equal(s.e, "");
	streams_free(&s);

	/* By size, from memory: pieces of at most A's first two chunks. */
	rec_cli_input mem = { .name = "mem", .data = ab, .size = A.n + B.n };
	rec_split_opts so = { .by = REC_SPLIT_BY_SIZE, .size = CA.size[0] + CA.size[1],
			      .prefix = tpath("sz") };
	streams_open(&s);
	assert_int_equal(rec_split_run(&so, &mem, s.out, s.err), REC_EXIT_OK);
	streams_done(&s);
	assert_same_file(tpath("sz-0001.rec"), A.p, (size_t)(CA.size[0] + CA.size[1]));
	assert_has(s.o, tpath("sz-0001.rec"));
	assert_has(s.o, "sz-0001.rec: 2 chunks, 20 events");
	assert_null(strstr(s.o, "larger than the size limit"));
	streams_free(&s);
	free(ab);

	/* The damaged chunk is left out and said after the pieces. */
	rec_cli_input d = { .name = tpath("d.rec") };
	streams_open(&s);
	assert_int_equal(rec_split_run(&o, &d, s.out, s.err), REC_EXIT_DATA);
	streams_done(&s);
	snprintf(want, sizeof want, "%s: 2 chunks, %" PRIu64 " events", tpath("d-0001.rec"),
		 CA.events[0] + CA.events[2]);
	assert_has(s.o, want);
	assert_has(s.e, "1 damaged chunk left out\n");
	streams_free(&s);

	/* No --by. */
	rec_split_opts none = { 0 };
	streams_open(&s);
	assert_int_equal(rec_split_run(&none, &in, s.out, s.err), REC_EXIT_USAGE);
	streams_done(&s);
	assert_has(s.e, "--by run|time=DUR|size=SIZE is required");
	streams_free(&s);
}

/* ---- rec-scrub ------------------------------------------------------------------ */
static void t_scrub(void **state)
{
	(void)state;
	streams s;
	char want[512];
	const char *excl[] = { "test.Two" };
	rec_cli_input in = { .name = tpath("a.rec") };
	rec_scrub_opts o = { .output = tpath("scrub.rec"), .exclude = excl, .nexclude = 1 };
	streams_open(&s);
	assert_int_equal(rec_scrub_run(&o, &in, s.out, s.err), REC_EXIT_OK);
	streams_done(&s);
	uint64_t one, two;
	count_types(tpath("scrub.rec"), &one, &two);
	assert_int_equal(one, 15);
	assert_int_equal(two, 0);
	snprintf(want, sizeof want,
		 "%s: 15 of 30 events kept (15 removed), 0 fields blanked, 3 chunks read\n",
		 tpath("a.rec"));
	assert_has(s.e, want);
	streams_free(&s);

	/* --include-events of a type the input lacks: a usage error, OUT untouched. */
	const char *nosuch[] = { "test.Three" };
	rec_scrub_opts bad = { .output = tpath("scrub2.rec"), .include = nosuch, .ninclude = 1 };
	streams_open(&s);
	assert_int_equal(rec_scrub_run(&bad, &in, s.out, s.err), REC_EXIT_USAGE);
	streams_done(&s);
	assert_has(s.e, "no event type matches 'test.Three'; the input has: test.One, test.Two");
	assert_int_equal(access(tpath("scrub2.rec"), F_OK), -1);
	streams_free(&s);

	/* Nothing to scrub. */
	rec_scrub_opts none = { .output = tpath("scrub3.rec") };
	streams_open(&s);
	assert_int_equal(rec_scrub_run(&none, &in, s.out, s.err), REC_EXIT_USAGE);
	streams_done(&s);
	assert_has(s.e, "nothing to scrub");
	streams_free(&s);

	/* Blanking every field from memory: all events kept, 30 fields blanked. */
	const char *blank[] = { "test.*.n" };
	rec_cli_input mem = { .name = "mem", .data = A.p, .size = A.n };
	rec_scrub_opts bl = { .output = tpath("scrub4.rec"), .blank = blank, .nblank = 1 };
	streams_open(&s);
	assert_int_equal(rec_scrub_run(&bl, &mem, s.out, s.err), REC_EXIT_OK);
	streams_done(&s);
	assert_has(s.e, "mem: 30 of 30 events kept (0 removed), 30 fields blanked, 3 chunks read\n");
	count_types(tpath("scrub4.rec"), &one, &two);
	assert_int_equal(one + two, 30);
	streams_free(&s);
}

static void t_symbolize(void **state)
{
	(void)state;
	streams s;
	char want[512];
	rec_cli_input in = { .name = tpath("a.rec") };
	const char *dirs[] = { tpath("no-debug") };
	rec_symbolize_opts o = { .output = tpath("sym.rec"), .debug_dirs = dirs, .ndebug_dirs = 1,
				 .only_debug_dirs = true };
	streams_open(&s);
	assert_int_equal(rec_symbolize_run(&o, &in, s.out, s.err), REC_EXIT_OK);
	streams_done(&s);
	uint64_t one, two;
	count_types(tpath("sym.rec"), &one, &two);
	assert_int_equal(one, 15);
	assert_int_equal(two, 15);
	snprintf(want, sizeof want,
		 "%s: 0 frames: 0 resolved, 0 left unresolved, 0 had source lines already; "
		 "30 events, 3 chunks\n", tpath("a.rec"));
	assert_has(s.e, want);
	streams_free(&s);

	/* --only-debug-dirs without a directory; OUT the same file as IN */
	rec_symbolize_opts bad = { .output = tpath("sym2.rec"), .only_debug_dirs = true };
	streams_open(&s);
	assert_int_equal(rec_symbolize_run(&bad, &in, s.out, s.err), REC_EXIT_USAGE);
	streams_done(&s);
	assert_has(s.e, "--only-debug-dirs needs a --debug-dir");
	assert_int_equal(access(tpath("sym2.rec"), F_OK), -1);
	streams_free(&s);
	rec_symbolize_opts same = { .output = tpath("a.rec"), .quiet = true };
	streams_open(&s);
	assert_int_equal(rec_symbolize_run(&same, &in, s.out, s.err), REC_EXIT_USAGE);
	streams_done(&s);
	assert_has(s.e, "OUT is the same file as IN");
	streams_free(&s);
}

int main(void)
{
	rec_cli_init("rec-tool");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_check),   cmocka_unit_test(t_summary), cmocka_unit_test(t_cat),
		cmocka_unit_test(t_recover), cmocka_unit_test(t_split),   cmocka_unit_test(t_scrub),
		cmocka_unit_test(t_symbolize),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
