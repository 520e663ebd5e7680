/* SPDX-License-Identifier: MIT */
/*
 * test_summary.c - the summary of rec/analysis.h (libfmt/analysis/summary.c)
 * on recordings written with the real writer (zstd) into real files: three
 * runs of a service in one file (a clean close over two chunks, a crash, a
 * run killed without a FINAL chunk), with the events, drops and times this
 * test chose, so every number is known here: events per type (a declared
 * type without events too), the time range of the file and of each run
 * (durations included), runs and restarts, drops by type and reason, and the
 * same file with a damaged chunk header and cut inside its last chunk.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rec/analysis.h"
#include "rec/rec.h"

#include "../../lib/tmpdir.h"

#define T_REQ 5u     /* app.Req: with a duration */
#define T_TICK 6u    /* app.Tick */
#define T_IDLE 7u    /* app.Idle: declared, never written */
#define T_DROPPED 3u /* rec.Dropped: count, reason, type (what the summary reads) */
#define T_CRASH 9u   /* rec.Crash */

/* The recorder's reasons (rec/recorder.h), spelled here so that this test
 * does not include the recorder's header. */
enum { REC_DROP_FULL_ = 0, REC_DROP_REJECTED_ = 3, REC_DROP_THROTTLED_ = 5 };

static const rec_field req_fields[] = { { "n", "N", "", REC_TYPE_U64, REC_UNIT_NONE } };
static const rec_field dropped_fields[] = {
	{ "count", "Count", "", REC_TYPE_U64, REC_UNIT_COUNT },
	{ "reason", "Reason", "", REC_TYPE_U8, REC_UNIT_NONE },
	{ "type", "Event Type", "", REC_TYPE_U32, REC_UNIT_NONE },
};
static const rec_type req_type = { T_REQ, REC_EVENT_HAS_DURATION, "app.Req", "Req", "", "app", 1,
				   req_fields };
static const rec_type tick_type = { T_TICK, 0, "app.Tick", "Tick", "", "app", 1, req_fields };
static const rec_type idle_type = { T_IDLE, 0, "app.Idle", "Idle", "", "app", 1, req_fields };
static const rec_type dropped_type = { T_DROPPED, 0, "rec.Dropped", "Dropped", "", "rec", 3,
				       dropped_fields };
static const rec_type crash_type = { T_CRASH, 0, "rec.Crash", "Crash", "", "rec", 0, NULL };

/* Run k: run id RUN_ID0 + k, pid 100 + k; ticks are ns (1e9 Hz) from the
 * anchor: wall(t) = WALL0 + k * RUN_GAP + (t - TICKS0). */
#define RUN_ID0 0x5EED0000ull
#define WALL0 1764670000000000000ll
#define RUN_GAP 60000000000ll
#define TICKS0 1000u

static int64_t wall(int k, uint64_t ticks)
{
	return WALL0 + k * RUN_GAP + (int64_t)(ticks - TICKS0);
}

static rec_writer *open_run(int fd, int k)
{
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.run_id = RUN_ID0 + (uint64_t)k;
	o.pid = 100u + (uint32_t)k;
	o.process_start_ns = WALL0 + k * RUN_GAP - 5000;
	o.anchor_wall_ns = WALL0 + k * RUN_GAP;
	o.anchor_ticks = TICKS0;
	rec_writer *w = NULL;
	assert_int_equal(rec_writer_open_fd(&w, fd, &o), REC_OK);
	const rec_type *types[] = { &req_type, &tick_type, &idle_type, &dropped_type, &crash_type };
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		assert_int_equal(rec_writer_add_type(w, types[i]), REC_OK);
	return w;
}

static void put(rec_writer *w, uint32_t type, uint64_t ticks, uint64_t dur, uint64_t n)
{
	assert_int_equal(rec_writer_begin(w, type, ticks, dur, 0, 0), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, n), REC_OK);
	assert_int_equal(rec_writer_end(w), REC_OK);
}

/* A rec.Dropped: count events of type `type` lost for `reason`; the chunk's
 * Dropped_Events grows by count, as the recorder keeps them. */
static void drop(rec_writer *w, uint64_t ticks, uint64_t count, uint64_t reason, uint64_t type)
{
	assert_int_equal(rec_writer_begin(w, T_DROPPED, ticks, 0, 0, 0), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, count), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, reason), REC_OK);
	assert_int_equal(rec_writer_put_u64(w, type), REC_OK);
	assert_int_equal(rec_writer_end(w), REC_OK);
	rec_writer_note_dropped(w, count);
}

/* The three runs (events per run and chunk):
 *   run 0, clean: chunk 1: app.Req at 2000 (+500), 3000 (+9000: ends at
 *     12000, the run's last instant), 4000 (+100); app.Tick at 2500, 5000;
 *     rec.Dropped app.Req buffer full 3, app.Tick throttled 2 (at 6000).
 *     chunk 2 (FINAL): app.Tick at 7000.
 *   run 1, crash: app.Req at 1500 (+1000); rec.Dropped app.Req buffer full
 *     4, type 0 rejected 1 (at 1800); rec.Crash at 2000.  No FINAL chunk.
 *   run 2, killed: chunk 1: app.Tick at 1200, 1300.  chunk 2: app.Tick at
 *     4000, app.Req at 4100 (+50).  No FINAL chunk.
 * Totals: app.Tick 6, app.Req 5, rec.Dropped 4, rec.Crash 1, app.Idle 0;
 * 16 events in 5 chunks (8, 4 and 4 per run); dropped 5 + 5 = 10. */
static void write_file(const char *path)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	int fd = fileno(f);

	rec_writer *w = open_run(fd, 0);
	put(w, T_REQ, 2000, 500, 1);
	put(w, T_TICK, 2500, 0, 2);
	put(w, T_REQ, 3000, 9000, 3);
	put(w, T_REQ, 4000, 100, 4);
	put(w, T_TICK, 5000, 0, 5);
	drop(w, 6000, 3, REC_DROP_FULL_, T_REQ);
	drop(w, 6000, 2, REC_DROP_THROTTLED_, T_TICK);
	assert_int_equal(rec_writer_flush(w), REC_OK);
	put(w, T_TICK, 7000, 0, 6);
	assert_int_equal(rec_writer_close(w), REC_OK);

	w = open_run(fd, 1);
	put(w, T_REQ, 1500, 1000, 7);
	drop(w, 1800, 4, REC_DROP_FULL_, T_REQ);
	drop(w, 1800, 1, REC_DROP_REJECTED_, 0);
	assert_int_equal(rec_writer_begin(w, T_CRASH, 2000, 0, 0, 0), REC_OK);
	assert_int_equal(rec_writer_end(w), REC_OK);
	assert_int_equal(rec_writer_flush(w), REC_OK);
	rec_writer_abandon(w);

	w = open_run(fd, 2);
	put(w, T_TICK, 1200, 0, 8);
	put(w, T_TICK, 1300, 0, 9);
	assert_int_equal(rec_writer_flush(w), REC_OK);
	put(w, T_TICK, 4000, 0, 10);
	put(w, T_REQ, 4100, 50, 11);
	assert_int_equal(rec_writer_flush(w), REC_OK);
	rec_writer_abandon(w);
	assert_int_equal(fclose(f), 0);
}

static char dir[256];
static char good[300], damaged[300], cut[300], evdamaged[300];

/* Chunk offsets of path, from the reader (5 chunks). */
static void chunk_offsets(const char *path, uint64_t off[5], uint64_t *size)
{
	rec_reader *r = NULL;
	assert_int_equal(rec_reader_open_path(&r, path, NULL), REC_OK);
	const rec_chunk_info *c = NULL;
	size_t n = 0;
	while (rec_reader_next_chunk(r, &c) == REC_OK) {
		assert_true(n < 5);
		off[n++] = c->offset;
	}
	assert_int_equal(n, 5);
	rec_reader_close(r);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	*size = (uint64_t)st.st_size;
}

static void copy_file(const char *from, const char *to, uint64_t len, int64_t flip_at)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	assert_non_null(in);
	assert_non_null(out);
	uint8_t *buf = malloc(len);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, len, in), len);
	if (flip_at >= 0)
		buf[flip_at] ^= 0x40;
	assert_int_equal(fwrite(buf, 1, len, out), len);
	free(buf);
	assert_int_equal(fclose(in), 0);
	assert_int_equal(fclose(out), 0);
}

static uint64_t off[5], good_size;

static int setup(void **state)
{
	(void)state;
	if (rec_t_tmpdir_create(dir, sizeof dir, "test_summary") != 0)
		return -1;
	snprintf(good, sizeof good, "%s/good.rec", dir);
	snprintf(damaged, sizeof damaged, "%s/damaged.rec", dir);
	snprintf(cut, sizeof cut, "%s/cut.rec", dir);
	snprintf(evdamaged, sizeof evdamaged, "%s/evdamaged.rec", dir);
	write_file(good);
	chunk_offsets(good, off, &good_size);
	/* run 0's second chunk with a flipped byte in its header's Run_Id
	 * (header checksum mismatch); the file cut 10 bytes into run 2's second
	 * chunk. */
	copy_file(good, damaged, good_size, (int64_t)off[1] + 24);
	copy_file(good, cut, off[4] + 10, -1);
	/* run 0's first chunk with a flipped byte at the end of its payload
	 * (its EVENTS: the header, METADATA and STATS still pass the front
	 * checksum, so the chunk is listed; its events fail to decode). */
	copy_file(good, evdamaged, good_size, (int64_t)off[1] - 2);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rec_t_tmpdir_remove(dir);
	return 0;
}

static const rec_summary_type *type_named(const rec_summary_result *res, const char *name)
{
	for (size_t i = 0; i < res->type_count; i++)
		if (strcmp(res->types[i].name, name) == 0)
			return &res->types[i];
	return NULL;
}

static uint64_t count_of(const rec_summary_result *res, const char *name)
{
	const rec_summary_type *t = type_named(res, name);
	assert_non_null(t);
	return t->count;
}

static void check_run(const rec_summary_run *r, int k, uint64_t chunks, uint64_t events,
		      uint64_t dropped, int64_t first, int64_t last, rec_run_end ended,
		      const char *file)
{
	assert_int_equal(r->run_id, RUN_ID0 + (uint64_t)k);
	assert_int_equal(r->pid, 100 + k);
	assert_int_equal(r->process_start_ns, WALL0 + k * RUN_GAP - 5000);
	assert_int_equal(r->chunks, chunks);
	assert_int_equal(r->events, events);
	assert_int_equal(r->dropped, dropped);
	assert_int_equal(r->first_wall_ns, first);
	assert_int_equal(r->last_wall_ns, last);
	assert_int_equal(r->ended, ended);
	assert_string_equal(r->file, file);
}

static const rec_summary_result *summarize(rec_summary **s, const char *path, uint32_t flags)
{
	assert_int_equal(rec_summary_open(s), REC_OK);
	assert_int_equal(rec_summary_add_path(*s, path, flags), REC_OK);
	const rec_summary_result *res = rec_summary_get(*s);
	assert_non_null(res);
	return res;
}

static void t_counts_runs_and_times(void **state)
{
	(void)state;
	rec_summary *s = NULL;
	const rec_summary_result *res = summarize(&s, good, 0);
	assert_int_equal(res->file_count, 1);
	assert_string_equal(res->files[0].path, good);
	assert_int_equal(res->files[0].size, good_size);
	assert_int_equal(res->files[0].chunks, 5);
	assert_int_equal(res->files[0].chunks_damaged, 0);
	assert_int_equal(res->files[0].problems, 0);
	assert_int_equal(res->total_size, good_size);
	assert_int_equal(res->chunks, 5);
	assert_int_equal(res->chunks_damaged, 0);
	assert_int_equal(res->bytes_skipped, 0);
	assert_int_equal(res->problem_count, 0);
	assert_int_equal(res->events, 16);
	assert_int_equal(res->dropped, 10);
	assert_int_equal(res->codecs, 1u << REC_CODEC_ZSTD);
	assert_int_equal(res->version_count, 1);
	assert_int_equal(res->versions[0] >> 16, REC_FORMAT_MAJOR);

	/* Types by count descending, then name; app.Idle declared only. */
	assert_int_equal(res->type_count, 5);
	static const char *order[] = { "app.Tick", "app.Req", "rec.Dropped", "rec.Crash", "app.Idle" };
	static const uint64_t counts[] = { 6, 5, 4, 1, 0 };
	for (size_t i = 0; i < 5; i++) {
		assert_string_equal(res->types[i].name, order[i]);
		assert_int_equal(res->types[i].count, counts[i]);
		if (counts[i])
			assert_true(res->types[i].bytes >= 3 * counts[i]);
		else
			assert_int_equal(res->types[i].bytes, 0);
	}
	assert_string_equal(type_named(res, "app.Req")->label, "Req");
	assert_string_equal(type_named(res, "app.Req")->category, "app");

	/* The file's range: run 0's first event to run 2's app.Req end. */
	assert_int_equal(res->first_wall_ns, wall(0, 2000));
	assert_int_equal(res->last_wall_ns, wall(2, 4150));

	/* Runs in order of appearance, two restarts. */
	assert_int_equal(res->run_count, 3);
	assert_int_equal(res->restarts, 2);
	check_run(&res->runs[0], 0, 2, 8, 5, wall(0, 2000), wall(0, 12000), REC_RUN_CLEAN, good);
	check_run(&res->runs[1], 1, 1, 4, 5, wall(1, 1500), wall(1, 2500), REC_RUN_CRASH, good);
	check_run(&res->runs[2], 2, 2, 4, 0, wall(2, 1200), wall(2, 4150), REC_RUN_NO_FINAL,
		  good);
	/* Without REC_SUMMARY_DROPS no drop is decoded. */
	assert_int_equal(res->drop_count, 0);
	rec_summary_close(s);
}

static void t_drops_by_type_and_reason(void **state)
{
	(void)state;
	rec_summary *s = NULL;
	const rec_summary_result *res = summarize(&s, good, REC_SUMMARY_DROPS);
	/* app.Req buffer full 3 + 4, app.Tick throttled 2, type 0 rejected 1;
	 * by count descending. */
	assert_int_equal(res->drop_count, 3);
	assert_string_equal(res->drops[0].type, "app.Req");
	assert_int_equal(res->drops[0].reason, REC_DROP_FULL_);
	assert_int_equal(res->drops[0].count, 7);
	assert_string_equal(res->drops[1].type, "app.Tick");
	assert_int_equal(res->drops[1].reason, REC_DROP_THROTTLED_);
	assert_int_equal(res->drops[1].count, 2);
	assert_string_equal(res->drops[2].type, "(not known)");
	assert_int_equal(res->drops[2].reason, REC_DROP_REJECTED_);
	assert_int_equal(res->drops[2].count, 1);
	uint64_t sum = 0;
	for (size_t i = 0; i < res->drop_count; i++)
		sum += res->drops[i].count;
	assert_int_equal(sum, res->dropped);
	assert_int_equal(res->problem_count, 0);
	assert_string_equal(rec_drop_reason_name(REC_DROP_FULL_), "buffer full");
	assert_string_equal(rec_drop_reason_name(REC_DROP_THROTTLED_), "throttled");
	assert_null(rec_drop_reason_name(99));
	rec_summary_close(s);
}

/* Run 0's second chunk (1 app.Tick) is damaged: counted nowhere, reported
 * once with its chunk index and offset; run 0 has no FINAL chunk left. */
static void t_damaged_chunk(void **state)
{
	(void)state;
	rec_summary *s = NULL;
	const rec_summary_result *res = summarize(&s, damaged, REC_SUMMARY_DROPS);
	assert_int_equal(res->chunks, 4);
	assert_int_equal(res->files[0].chunks, 4);
	assert_int_equal(res->chunks_damaged, 1);
	assert_int_equal(res->files[0].chunks_damaged, 1);
	assert_int_equal(res->problem_count, 1);
	assert_int_equal(res->files[0].problems, 1);
	assert_string_equal(res->problems[0].file, damaged);
	assert_int_equal(res->problems[0].chunk, 1);
	assert_int_equal(res->problems[0].offset, off[1]);
	assert_true(res->problems[0].status < 0);
	assert_true(res->bytes_skipped > 0);
	assert_int_equal(res->events, 15);
	assert_int_equal(count_of(res, "app.Tick"), 5);
	assert_int_equal(count_of(res, "app.Req"), 5);
	assert_int_equal(res->dropped, 10);
	assert_int_equal(res->run_count, 3);
	check_run(&res->runs[0], 0, 1, 7, 5, wall(0, 2000), wall(0, 12000), REC_RUN_NO_FINAL,
		  damaged);
	assert_int_equal(res->runs[1].ended, REC_RUN_CRASH);
	assert_int_equal(res->drop_count, 3);
	assert_int_equal(res->drops[0].count, 7);
	rec_summary_close(s);
}

/* Run 0's first chunk (7 events, 5 dropped) has a damaged payload behind
 * an intact header: a summary that decodes its events (drops, counters,
 * verify) finds the damage, and then nothing of the chunk is counted, not
 * even its statistics: it is a damaged chunk, never also a readable one.
 * A summary that reads headers only cannot see the damage. */
static void t_damaged_events(void **state)
{
	(void)state;
	static const uint32_t decoding[] = { REC_SUMMARY_DROPS, REC_SUMMARY_VERIFY,
					     REC_SUMMARY_COUNTERS | REC_SUMMARY_DROPS };
	for (size_t i = 0; i < sizeof decoding / sizeof decoding[0]; i++) {
		rec_summary *s = NULL;
		const rec_summary_result *res = summarize(&s, evdamaged, decoding[i]);
		assert_int_equal(res->chunks, 4);
		assert_int_equal(res->chunks_damaged, 1);
		assert_int_equal(res->files[0].chunks + res->files[0].chunks_damaged, 5);
		assert_int_equal(res->problem_count, 1);
		assert_int_equal(res->problems[0].chunk, 0);
		assert_int_equal(res->problems[0].offset, off[0]);
		assert_int_equal(res->events, 9);
		assert_int_equal(res->dropped, 5);
		assert_int_equal(count_of(res, "app.Tick"), 4);
		assert_int_equal(count_of(res, "app.Req"), 2);
		assert_int_equal(res->runs[0].chunks, 1);
		assert_int_equal(res->runs[0].events, 1);
		assert_int_equal(res->runs[0].dropped, 0);
		if (decoding[i] & REC_SUMMARY_DROPS) { /* run 1's drops only */
			uint64_t sum = 0;
			for (size_t k = 0; k < res->drop_count; k++)
				sum += res->drops[k].count;
			assert_int_equal(sum, res->dropped);
		}
		rec_summary_close(s);
	}
	rec_summary *s = NULL;
	const rec_summary_result *res = summarize(&s, evdamaged, 0);
	assert_int_equal(res->chunks, 5);
	assert_int_equal(res->chunks_damaged, 0);
	assert_int_equal(res->events, 16);
	rec_summary_close(s);
}

/* Cut 10 bytes into run 2's second chunk: run 2 is truncated, its events
 * are those of its first chunk. */
static void t_truncated_run(void **state)
{
	(void)state;
	rec_summary *s = NULL;
	const rec_summary_result *res = summarize(&s, cut, 0);
	assert_int_equal(res->chunks, 4);
	assert_int_equal(res->files[0].size, off[4] + 10);
	assert_int_equal(res->problem_count, 1);
	assert_int_equal(res->problems[0].status, REC_ERR_TRUNCATED);
	assert_int_equal(res->problems[0].offset, off[4]);
	assert_int_equal(res->events, 14);
	assert_int_equal(count_of(res, "app.Tick"), 5);
	assert_int_equal(count_of(res, "app.Req"), 4);
	assert_int_equal(res->last_wall_ns, wall(2, 1300));
	check_run(&res->runs[2], 2, 1, 2, 0, wall(2, 1200), wall(2, 1300), REC_RUN_TRUNCATED, cut);
	assert_int_equal(res->runs[0].ended, REC_RUN_CLEAN);
	rec_summary_close(s);
}

/* Two files in one summary: the same runs are merged (same run id, pid and
 * start), their counts added; sizes and problems stay per file. */
static void t_two_files(void **state)
{
	(void)state;
	rec_summary *s = NULL;
	assert_int_equal(rec_summary_open(&s), REC_OK);
	assert_int_equal(rec_summary_add_path(s, good, 0), REC_OK);
	assert_int_equal(rec_summary_add_path(s, cut, 0), REC_OK);
	const rec_summary_result *res = rec_summary_get(s);
	assert_int_equal(res->file_count, 2);
	assert_int_equal(res->total_size, good_size + off[4] + 10);
	assert_int_equal(res->chunks, 9);
	assert_int_equal(res->events, 30);
	assert_int_equal(res->run_count, 3);
	assert_int_equal(res->restarts, 2);
	assert_int_equal(res->runs[0].chunks, 4);
	assert_int_equal(res->runs[0].events, 16);
	assert_string_equal(res->runs[0].file, good);
	assert_int_equal(count_of(res, "app.Tick"), 11);
	assert_int_equal(res->files[0].problems, 0);
	assert_int_equal(res->files[1].problems, 1);
	assert_int_equal(res->problem_count, 1);
	assert_string_equal(res->problems[0].file, cut);
	rec_summary_close(s);
}

static void t_open_errors(void **state)
{
	(void)state;
	rec_summary *s = NULL;
	assert_int_equal(rec_summary_open(&s), REC_OK);
	char missing[300];
	snprintf(missing, sizeof missing, "%s/missing.rec", dir);
	assert_int_not_equal(rec_summary_add_path(s, missing, 0), REC_OK);
	assert_true(strlen(rec_summary_errmsg(s)) > 0);
	const rec_summary_result *res = rec_summary_get(s);
	assert_int_equal(res->file_count, 0);
	assert_int_equal(res->run_count, 0);
	assert_int_equal(res->restarts, 0);
	assert_int_equal(res->events, 0);
	assert_int_equal(rec_summary_add_path(NULL, good, 0), REC_ERR_INVALID_ARG);
	assert_string_equal(rec_run_end_name(REC_RUN_CRASH), "crash event");
	rec_summary_close(s);
	rec_summary_close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_counts_runs_and_times),
		cmocka_unit_test(t_drops_by_type_and_reason),
		cmocka_unit_test(t_damaged_chunk),
		cmocka_unit_test(t_damaged_events),
		cmocka_unit_test(t_truncated_run),
		cmocka_unit_test(t_two_files),
		cmocka_unit_test(t_open_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
