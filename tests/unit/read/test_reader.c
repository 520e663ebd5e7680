/* SPDX-License-Identifier: MIT */
/*
 * test_reader.c - the reader (libfmt/read) on recordings made by the real
 * writer in real files with real codecs: every field type round trip, pools,
 * time conversion, chunk information and statistics, concatenated runs,
 * pipes, and forward compatibility (a hand-crafted newer minor version
 * chunk).  (Ordered iteration: test_order.c; a chunk's events alone and
 * full verification: test_event.c.)
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
#include <sys/stat.h>
#include <unistd.h>

#include "common/common_internal.h"
#include "rec/rec.h"
#include "../../lib/ordrec.h"
#include "../../lib/craft_chunk.h"
#include "../../lib/write_file.h"

/* ---- helpers ------------------------------------------------------------------ */
static char tmpdir[] = "/tmp/test_reader.XXXXXX";

static const char *tpath(const char *name)
{
	static char buf[4][256];
	static int k;
	char *p = buf[k++ & 3];
	snprintf(p, 256, "%s/%s", tmpdir, name);
	return p;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	uint8_t *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Exact wall time of ticks t, from a chunk's time base (spec "Time"). */
static int64_t exact_wall(int64_t wall0, uint64_t ticks0, uint64_t freq, uint64_t t)
{
	__extension__ __int128 d = (__int128)(int64_t)(t - ticks0) * 1000000000 / (__int128)freq;
	return wall0 + (int64_t)d;
}

/* ---- the all-types recording ---------------------------------------------------- */
enum { T_ALL = 1, T_SMALL = 2, T_THR = 7 };
static const rec_field all_fields[] = {
	{ "b", "B", "", REC_TYPE_BOOL, 0 },        { "u8", "", "", REC_TYPE_U8, 0 },
	{ "u16", "", "", REC_TYPE_U16, 0 },        { "u32", "", "", REC_TYPE_U32, REC_UNIT_COUNT },
	{ "u64", "", "", REC_TYPE_U64, REC_UNIT_BYTES }, { "i8", "", "", REC_TYPE_I8, 0 },
	{ "i16", "", "", REC_TYPE_I16, 0 },        { "i32", "", "", REC_TYPE_I32, 0 },
	{ "i64", "", "", REC_TYPE_I64, 0 },        { "f32", "", "", REC_TYPE_F32, 0 },
	{ "f64", "", "", REC_TYPE_F64, REC_UNIT_PERCENT }, { "s", "", "", REC_TYPE_STRING, 0 },
	{ "ts", "", "", REC_TYPE_TIMESTAMP, 0 },   { "dur", "", "", REC_TYPE_DURATION, 0 },
	{ "thr", "", "", REC_TYPE_THREAD, 0 },     { "stk", "", "", REC_TYPE_STACK, 0 },
	{ "blob", "", "", REC_TYPE_BLOB, 0 },      { "text", "Text", "a message", REC_TYPE_TEXT, 0 },
};
#define NALL (sizeof(all_fields) / sizeof(all_fields[0]))
static const rec_field small_fields[] = {
	{ "n", "N", "", REC_TYPE_U32, 0 },
	{ "name", "", "", REC_TYPE_STRING, 0 },
};
static const rec_field thr_fields[] = { { "v", "", "", REC_TYPE_I64, 0 } };

static const char *const pool_strs[] = { "alpha", "", "with\0nul", "f_leaf", "f_mid", "f_root",
					  "/usr/lib/libx.so", "abcdef0123", "worker-1" };
static const size_t pool_lens[] = { 5, 0, 8, 6, 5, 6, 16, 10, 8 };
static uint64_t sid[9];

#define ANCHOR_WALL 1764672000123456789LL
#define ANCHOR_TICKS 5000ull

typedef struct expect_ev {
	uint32_t type;
	uint64_t ticks, dur, thread, stack;
} expect_ev;

static uint64_t ev_ticks(uint64_t i) { return ANCHOR_TICKS + 30 + i * 3; }
static uint64_t g_u(uint64_t i, int k)
{
	static const uint64_t mx[] = { 1, 255, 65535, UINT32_MAX, UINT64_MAX };
	if (i % 4 == 0)
		return mx[k];
	if (i % 4 == 1)
		return 0;
	return (i * 0x9E3779B97F4A7C15ull) & mx[k];
}
static int64_t g_i(uint64_t i, int k)
{
	static const int64_t mn[] = { INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN };
	static const int64_t mx[] = { INT8_MAX, INT16_MAX, INT32_MAX, INT64_MAX };
	if (i % 4 == 0)
		return mn[k];
	if (i % 4 == 1)
		return mx[k];
	if (i % 4 == 2)
		return -(int64_t)(i % 100);
	return (int64_t)(i % 100);
}
static float g_f32(uint64_t i) { return i % 4 == 0 ? -1.5f : (float)i * 0.25f; }
static double g_f64(uint64_t i) { return i % 4 == 0 ? -1e300 : (double)i * 1.1 - 7.0; }
static int g_s(uint64_t i) { return i % 5 == 0 ? -1 : (int)(i % 3); } /* index into pool_strs */
static size_t g_blob(uint64_t i, uint8_t *b)
{
	size_t n = i % 7;
	for (size_t k = 0; k < n; k++)
		b[k] = (uint8_t)(i + k * 31); /* includes zero bytes */
	return n;
}
static size_t g_text(uint64_t i, char *b)
{
	if (i % 6 == 0) {
		b[0] = 0;
		return 0;
	}
	return (size_t)snprintf(b, 64, "message %llu", (unsigned long long)i);
}

/* Write n events (T_ALL, T_SMALL, T_THR in turns) to path. */
static void write_all_types(const char *path, unsigned codec, uint64_t freq, uint64_t n,
			    uint32_t chunk_bytes)
{
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.codec = codec;
	o.chunk_events_size = chunk_bytes;
	o.run_id = 0x1234567890abcdefull;
	o.pid = 4321;
	o.process_start_ns = ANCHOR_WALL - 1000;
	o.tick_frequency = freq;
	o.anchor_wall_ns = ANCHOR_WALL;
	o.anchor_ticks = ANCHOR_TICKS;
	rec_writer *w;
	assert_int_equal(rec_writer_open_path(&w, path, &o), REC_OK);
	rec_type t = { T_ALL, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK,
		       "test.All", "All Types", "every field type", "test/Types", NALL, all_fields };
	assert_int_equal(rec_writer_add_type(w, &t), REC_OK);
	rec_type t2 = { T_SMALL, 0, "test.Small", "Small", "", "test", 2, small_fields };
	assert_int_equal(rec_writer_add_type(w, &t2), REC_OK);
	rec_type t3 = { T_THR, REC_EVENT_HAS_THREAD, "test.Thr", "Thr", "", "test", 1, thr_fields };
	assert_int_equal(rec_writer_add_type(w, &t3), REC_OK);
	for (int k = 0; k < 9; k++)
		assert_int_equal(rec_writer_intern_string(w, pool_strs[k], pool_lens[k], &sid[k]), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 100, sid[8]), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 2, 101, 0), REC_OK);
	assert_int_equal(rec_writer_define_module(w, 1, sid[6], sid[7], 0x400000), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 1, sid[3], 1, 0x1234, 0x10), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 2, sid[4], 1, 0x2234, 0x20), REC_OK);
	assert_int_equal(rec_writer_define_frame(w, 3, sid[5], 0, 0x3234, 0), REC_OK);
	const uint64_t f123[] = { 1, 2, 3 }, f3[] = { 3 };
	assert_int_equal(rec_writer_define_stack(w, 1, 0, f123, 3), REC_OK);
	assert_int_equal(rec_writer_define_stack(w, 2, REC_STACK_TRUNCATED, f3, 1), REC_OK);

	for (uint64_t i = 0; i < n; i++) {
		uint64_t tk = ev_ticks(i);
		uint32_t type = i % 3 == 0 ? T_ALL : i % 3 == 1 ? T_SMALL : T_THR;
		assert_int_equal(rec_writer_begin(w, type, tk, i % 9, 1 + i % 2, i % 3), REC_OK);
		if (type == T_ALL) {
			for (int k = 0; k < 5; k++)
				assert_int_equal(rec_writer_put_u64(w, g_u(i, k)), REC_OK);
			for (int k = 0; k < 4; k++)
				assert_int_equal(rec_writer_put_i64(w, g_i(i, k)), REC_OK);
			assert_int_equal(rec_writer_put_f64(w, g_f32(i)), REC_OK);
			assert_int_equal(rec_writer_put_f64(w, g_f64(i)), REC_OK);
			int s = g_s(i);
			assert_int_equal(rec_writer_put_u64(w, s < 0 ? 0 : sid[s]), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, tk + 5), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, i * 3), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, i % 3 == 0 ? 0 : 1 + i % 2), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, i % 3), REC_OK);
			uint8_t b[8];
			size_t bl = g_blob(i, b);
			assert_int_equal(rec_writer_put_bytes(w, b, bl), REC_OK);
			char tx[64];
			size_t tl = g_text(i, tx);
			assert_int_equal(rec_writer_put_bytes(w, tx, tl), REC_OK);
		} else if (type == T_SMALL) {
			assert_int_equal(rec_writer_put_u64(w, (uint32_t)(i * 7)), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, sid[i % 3]), REC_OK);
		} else {
			assert_int_equal(rec_writer_put_i64(w, -(int64_t)i * 1000), REC_OK);
		}
		assert_int_equal(rec_writer_end(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
}

static void check_stack(const rec_stack *s, uint64_t id)
{
	if (id == 0) {
		assert_null(s);
		return;
	}
	assert_non_null(s);
	assert_int_equal(s->id, id);
	if (id == 1) {
		assert_int_equal(s->depth, 3);
		assert_int_equal(s->flags, 0);
		assert_string_equal(s->frames[0]->function, "f_leaf");
		assert_string_equal(s->frames[1]->function, "f_mid");
		assert_string_equal(s->frames[2]->function, "f_root");
		assert_int_equal(s->frames[0]->module_offset, 0x1234);
		assert_int_equal(s->frames[1]->function_offset, 0x20);
		assert_non_null(s->frames[0]->module);
		assert_string_equal(s->frames[0]->module->build_id, "abcdef0123");
		assert_string_equal(s->frames[0]->module->path, "/usr/lib/libx.so");
		assert_int_equal(s->frames[0]->module->base, 0x400000);
		assert_ptr_equal(s->frames[0]->module, s->frames[1]->module);
		assert_null(s->frames[2]->module);
	} else {
		assert_int_equal(s->depth, 1);
		assert_int_equal(s->flags, REC_STACK_TRUNCATED);
		assert_string_equal(s->frames[0]->function, "f_root");
	}
}

static void check_thread(const rec_thread *t, uint64_t id)
{
	if (id == 0) {
		assert_null(t);
		return;
	}
	assert_non_null(t);
	assert_int_equal(t->id, id);
	assert_int_equal(t->os_tid, id == 1 ? 100 : 101);
	assert_string_equal(t->name, id == 1 ? "worker-1" : "");
}

/* Check event i as written by write_all_types(). */
static void check_event(const rec_event *ev, uint64_t i, uint64_t freq)
{
	uint64_t tk = ev_ticks(i);
	uint32_t type = i % 3 == 0 ? T_ALL : i % 3 == 1 ? T_SMALL : T_THR;
	assert_non_null(ev->type);
	assert_int_equal(ev->type->id, type);
	assert_int_equal(ev->ticks, tk);
	const rec_chunk_info *c = ev->chunk;
	assert_int_equal(ev->wall_ns, exact_wall(c->start_wall_ns, c->start_ticks, freq, tk));
	assert_int_equal(rec_chunk_wall_ns(c, tk), ev->wall_ns);
	/* From the anchor: exact at 1 GHz; otherwise the chunk's Start_Wall_Ns
	 * was itself rounded down from the anchor, so within 1 ns. */
	int64_t from_anchor = exact_wall(ANCHOR_WALL, ANCHOR_TICKS, freq, tk);
	if (freq == 1000000000u)
		assert_int_equal(ev->wall_ns, from_anchor);
	else
		assert_true(ev->wall_ns - from_anchor >= -1 && ev->wall_ns - from_anchor <= 1);
	assert_int_equal(ev->value_count, ev->type->field_count);
	if (type == T_ALL) {
		assert_string_equal(ev->type->name, "test.All");
		assert_int_equal(ev->duration_ticks, i % 9);
		assert_int_equal(ev->duration_ns, rec_ticks_to_ns((int64_t)(i % 9), freq));
		check_thread(ev->thread, 1 + i % 2);
		check_stack(ev->stack, i % 3);
		const rec_value *v = ev->values;
		for (uint32_t k = 0; k < NALL; k++) {
			assert_int_equal(v[k].present, 1);
			assert_int_equal(v[k].type, all_fields[k].type);
		}
		for (int k = 0; k < 5; k++)
			assert_true(v[k].v.u == g_u(i, k));
		for (int k = 0; k < 4; k++)
			assert_true(v[5 + k].v.i == g_i(i, k));
		assert_true(v[9].v.f == (double)g_f32(i));
		assert_true(v[10].v.f == g_f64(i));
		int s = g_s(i);
		if (s < 0) {
			assert_null(v[11].v.s.ptr);
			assert_int_equal(v[11].v.s.len, 0);
		} else {
			assert_non_null(v[11].v.s.ptr);
			assert_int_equal(v[11].v.s.len, pool_lens[s]);
			assert_memory_equal(v[11].v.s.ptr, pool_strs[s], pool_lens[s] + 1);
		}
		assert_int_equal(v[12].v.u, tk + 5);
		assert_int_equal(v[13].v.u, i * 3);
		check_thread(v[14].v.thread, i % 3 == 0 ? 0 : 1 + i % 2);
		check_stack(v[15].v.stack, i % 3);
		uint8_t b[8];
		size_t bl = g_blob(i, b);
		assert_int_equal(v[16].v.s.len, bl);
		if (bl)
			assert_memory_equal(v[16].v.s.ptr, b, bl);
		assert_int_equal(v[16].v.s.ptr[bl], 0);
		char tx[64];
		size_t tl = g_text(i, tx);
		assert_int_equal(v[17].v.s.len, tl);
		assert_string_equal(v[17].v.s.ptr, tx);
	} else if (type == T_SMALL) {
		assert_int_equal(ev->duration_ticks, 0);
		assert_null(ev->thread);
		assert_null(ev->stack);
		assert_int_equal(ev->values[0].v.u, (uint32_t)(i * 7));
		assert_int_equal(ev->values[1].v.s.len, pool_lens[i % 3]);
		assert_memory_equal(ev->values[1].v.s.ptr, pool_strs[i % 3], pool_lens[i % 3] + 1);
	} else {
		check_thread(ev->thread, 1 + i % 2);
		assert_null(ev->stack);
		assert_true(ev->values[0].v.i == -(int64_t)i * 1000);
	}
}

static void roundtrip(unsigned codec, uint64_t freq)
{
	const uint64_t n = 3000;
	const char *path = tpath("all.rec");
	write_all_types(path, codec, freq, n, 16 * 1024);

	/* Events, from the file. */
	rec_reader *r;
	assert_int_equal(rec_reader_open_path(&r, path, NULL), REC_OK);
	rec_event ev;
	uint64_t i = 0;
	rec_status st;
	while ((st = rec_reader_next_event(r, &ev)) == REC_OK) {
		check_event(&ev, i, freq);
		i++;
	}
	assert_int_equal(st, REC_END);
	assert_int_equal(i, n);
	assert_int_equal(rec_reader_next_event(r, &ev), REC_END);
	rec_reader_stats rs;
	rec_reader_get_stats(r, &rs);
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(rs.file_size, (uint64_t)sb.st_size);
	assert_int_equal(rs.events, n);
	assert_true(rs.chunks >= 3);
	assert_int_equal(rs.chunks_damaged, 0);
	assert_int_equal(rs.bytes_skipped, 0);
	assert_int_equal(rs.unknown_types + rs.unknown_fields + rs.trailing_bytes + rs.unknown_sections, 0);
	rec_reader_close(r);

	/* Chunks: header fields, statistics and verification. */
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.flags = REC_READ_VERIFY;
	assert_int_equal(rec_reader_open_path(&r, path, &ro), REC_OK);
	const rec_chunk_info *c;
	uint64_t off = 0, idx = 0, counts[8] = { 0 }, events = 0;
	bool final_seen = false;
	while ((st = rec_reader_next_chunk(r, &c)) == REC_OK) {
		assert_int_equal(c->index, idx);
		assert_int_equal(c->offset, off);
		assert_int_equal(c->major, 1);
		assert_int_equal(c->minor, REC_FORMAT_MINOR);
		assert_true(c->flags & REC_CHUNK_FRONT_CRC);
		assert_int_equal(c->header_size, 128);
		assert_int_equal(c->size, c->header_size + c->payload_size);
		assert_int_equal(c->codec, codec);
		assert_int_equal(c->run_id, 0x1234567890abcdefull);
		assert_int_equal(c->pid, 4321);
		assert_int_equal(c->process_start_ns, ANCHOR_WALL - 1000);
		assert_int_equal(c->tick_frequency, freq);
		assert_int_equal(c->sequence, idx);
		assert_int_equal(c->unknown_sections, 0);
		assert_false(final_seen);
		final_seen = (c->flags & REC_CHUNK_FINAL) != 0;
		assert_int_equal(c->type_count, 3);
		assert_string_equal(c->types[0].name, "test.All");
		assert_string_equal(c->types[0].category, "test/Types");
		assert_int_equal(c->types[0].field_count, NALL);
		assert_string_equal(c->types[0].fields[17].label, "Text");
		assert_string_equal(c->types[0].fields[17].description, "a message");
		assert_int_equal(c->types[0].fields[3].unit, REC_UNIT_COUNT);
		uint64_t sum = 0;
		for (uint32_t k = 0; k < c->type_stats_count; k++) {
			const rec_type_stats *ts = &c->type_stats[k];
			assert_non_null(ts->type);
			assert_int_equal(ts->type->id, ts->type_id);
			assert_true(ts->type_id < 8);
			counts[ts->type_id] += ts->count;
			sum += ts->count;
			assert_true(ts->bytes >= 3 * ts->count);
		}
		assert_int_equal(sum, c->event_count);
		events += c->event_count;
		if (c->event_count) {
			assert_true(c->first_ticks >= ev_ticks(0));
			assert_true(c->last_ticks >= c->first_ticks);
			assert_true(c->last_ticks <= ev_ticks(n - 1) + 8);
		}
		assert_int_equal(rec_reader_verify_chunk(r), REC_OK);
		off += c->size;
		idx++;
	}
	assert_int_equal(st, REC_END);
	assert_true(final_seen);
	assert_int_equal(off, (uint64_t)sb.st_size);
	assert_int_equal(events, n);
	assert_int_equal(counts[T_ALL], n / 3);
	assert_int_equal(counts[T_SMALL], n / 3);
	assert_int_equal(counts[T_THR], n / 3);
	rec_reader_close(r);

	/* The same from memory, ordered (already sorted: same order). */
	size_t len;
	uint8_t *buf = read_file(path, &len);
	ro.flags = REC_READ_ORDERED;
	assert_int_equal(rec_reader_open_mem(&r, buf, len, "all", &ro), REC_OK);
	for (i = 0; (st = rec_reader_next_event(r, &ev)) == REC_OK; i++)
		check_event(&ev, i, freq);
	assert_int_equal(st, REC_END);
	assert_int_equal(i, n);
	rec_reader_close(r);
	free(buf);
}

static void t_roundtrip_zstd(void **state)
{
	(void)state;
	roundtrip(REC_CODEC_ZSTD, 1000000000u);
}
static void t_roundtrip_lz4(void **state)
{
	(void)state;
	roundtrip(REC_CODEC_LZ4, 3000000000u);
}
static void t_roundtrip_none(void **state)
{
	(void)state;
	roundtrip(REC_CODEC_NONE, 3000000000u);
}

/* ---- a pipe on standard input ------------------------------------------------------- */
typedef struct pipe_job {
	int fd;
	const uint8_t *p;
	size_t n;
} pipe_job;

static void *pipe_writer(void *arg)
{
	pipe_job *j = arg;
	size_t done = 0;
	while (done < j->n) {
		size_t k = j->n - done < 777 ? j->n - done : 777; /* small, odd writes */
		ssize_t w = write(j->fd, j->p + done, k);
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	close(j->fd);
	return NULL;
}

static void t_pipe_stdin(void **state)
{
	(void)state;
	const char *path = tpath("pipe.rec");
	write_all_types(path, REC_CODEC_ZSTD, 1000000000u, 900, 4096);
	size_t len;
	uint8_t *buf = read_file(path, &len);
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	int saved = dup(STDIN_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fds[0], STDIN_FILENO) >= 0);
	close(fds[0]);
	pipe_job j = { fds[1], buf, len };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, pipe_writer, &j), 0);
	rec_reader *r;
	assert_int_equal(rec_reader_open_path(&r, "-", NULL), REC_OK);
	rec_event ev;
	uint64_t i = 0;
	rec_status st;
	while ((st = rec_reader_next_event(r, &ev)) == REC_OK)
		check_event(&ev, i++, 1000000000u);
	assert_int_equal(st, REC_END);
	assert_int_equal(i, 900);
	rec_reader_stats rs;
	rec_reader_get_stats(r, &rs);
	assert_int_equal(rs.file_size, 0);
	assert_true(rs.chunks > 3);
	rec_reader_close(r);
	pthread_join(th, NULL);
	assert_true(dup2(saved, STDIN_FILENO) >= 0);
	close(saved);
	free(buf);
}

/* ---- concatenated recordings (two runs) ------------------------------------------------- */
static void t_concat_runs(void **state)
{
	(void)state;
	membuf a = { 0 }, b = { 0 };
	/* Run 1 at wall 1e12 + ticks; run 2 starts 250 ns later in wall time
	 * with its own tick base (ticks 0..), so the runs overlap in time. */
	rec_writer *w = ord_writer(&a, 111, 1000000000000LL);
	for (uint32_t i = 0; i < 4; i++)
		ord_put(w, 100 * (i + 1), i); /* wall +100 +200 +300 +400 */
	assert_int_equal(rec_writer_close(w), REC_OK);
	w = ord_writer(&b, 222, 1000000000000LL + 250);
	for (uint32_t i = 0; i < 3; i++)
		ord_put(w, 100 * i + 10, 10 + i); /* wall +260 +360 +460 */
	assert_int_equal(rec_writer_close(w), REC_OK);
	uint8_t *cat = malloc(a.len + b.len);
	assert_non_null(cat);
	memcpy(cat, a.p, a.len);
	memcpy(cat + a.len, b.p, b.len);
	write_file(tpath("cat.rec"), cat, a.len + b.len);

	rec_reader *r;
	rec_event ev;
	assert_int_equal(rec_reader_open_path(&r, tpath("cat.rec"), NULL), REC_OK);
	static const uint32_t file_order[] = { 0, 1, 2, 3, 10, 11, 12 };
	for (int i = 0; i < 7; i++) {
		assert_int_equal(rec_reader_next_event(r, &ev), REC_OK);
		assert_int_equal(ev.values[0].v.u, file_order[i]);
		assert_int_equal(ev.chunk->run_id, i < 4 ? 111 : 222);
	}
	assert_int_equal(rec_reader_next_event(r, &ev), REC_END);
	rec_reader_close(r);

	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.flags = REC_READ_ORDERED;
	assert_int_equal(rec_reader_open_path(&r, tpath("cat.rec"), &ro), REC_OK);
	static const uint32_t wall_order[] = { 0, 1, 10, 2, 11, 3, 12 };
	int64_t prev = INT64_MIN;
	for (int i = 0; i < 7; i++) {
		assert_int_equal(rec_reader_next_event(r, &ev), REC_OK);
		assert_int_equal(ev.values[0].v.u, wall_order[i]);
		assert_true(ev.wall_ns >= prev);
		prev = ev.wall_ns;
	}
	assert_int_equal(rec_reader_next_event(r, &ev), REC_END);
	rec_reader_close(r);
	free(a.p);
	free(b.p);
	free(cat);
}

static void craft_newer_minor(rec_buf *out, unsigned codec)
{
	hsec s[4];
	memset(s, 0, sizeof(s));
	/* METADATA: type 1 {u32 a, 0xA0 x (unknown, wire 0), text t}. */
	s[0].kind = REC_SECTION_METADATA;
	s[0].items = 1;
	rec_buf *b = &s[0].data;
	assert_true(rec_buf_varint(b, 1) && rec_buf_varint(b, 0));
	put_str(b, "new.Type");
	put_str(b, "New");
	put_str(b, "");
	put_str(b, "new");
	assert_true(rec_buf_varint(b, 3));
	put_str(b, "a");
	put_str(b, "");
	assert_true(rec_buf_varint(b, REC_TYPE_U32) && rec_buf_varint(b, 0));
	put_str(b, "");
	put_str(b, "x");
	put_str(b, "");
	assert_true(rec_buf_varint(b, 0xA0) && rec_buf_varint(b, 0));
	put_str(b, "");
	put_str(b, "t");
	put_str(b, "");
	assert_true(rec_buf_varint(b, REC_TYPE_TEXT) && rec_buf_varint(b, 0));
	put_str(b, "");
	/* Unknown section kind 42. */
	s[1].kind = 42;
	s[1].items = 3;
	assert_true(rec_buf_append(&s[1].data, "future!", 7));
	/* EVENTS: type 1 with trailing bytes; type 9 (no metadata); type 1. */
	s[2].kind = REC_SECTION_EVENTS;
	s[2].items = 3;
	b = &s[2].data;
	/* size, type 1, delta +5, a=7, x=300, t="hi", trailing 3 bytes */
	static const uint8_t e1[] = { 12, 1, 10, 7, 0xAC, 0x02, 2, 'h', 'i', 0xEE, 0xEE, 0xEE, 0xEE - 1 };
	assert_true(rec_buf_append(b, e1, sizeof(e1)));
	static const uint8_t e2[] = { 4, 9, 4, 0x55, 0x66 }; /* type 9, delta +2 */
	assert_true(rec_buf_append(b, e2, sizeof(e2)));
	static const uint8_t e3[] = { 6, 1, 2, 8, 1, 0 + 1, 'z' }; /* +1, a=8, x=1, t="z" */
	assert_true(rec_buf_append(b, e3, sizeof(e3)));
	/* STATS after the events (any order is valid). */
	s[3].kind = REC_SECTION_STATS;
	s[3].items = 2;
	b = &s[3].data;
	assert_true(rec_buf_varint(b, rec_zigzag(5)) && rec_buf_varint(b, rec_zigzag(8)) &&
		    rec_buf_varint(b, 0) && rec_buf_varint(b, 2));
	assert_true(rec_buf_varint(b, 1) && rec_buf_varint(b, 2) &&
		    rec_buf_varint(b, sizeof(e1) + sizeof(e3)));
	assert_true(rec_buf_varint(b, 9) && rec_buf_varint(b, 1) && rec_buf_varint(b, sizeof(e2)));
	craft_chunk(out, 7, s, 4, 3, codec, 8);
	for (int i = 0; i < 4; i++)
		rec_buf_free(&s[i].data);
}

/* The tick-to-nanosecond rule of spec/FORMAT.md "Time", to the nanosecond:
 * d = t - Start_Ticks as i64, ns = trunc(d * 1e9 / f) (toward zero, so a
 * tick before Start_Ticks rounds up), wall = Start_Wall_Ns + ns; a duration
 * of k ticks is trunc(k * 1e9 / f). */
__extension__ typedef __int128 i128;

static void t_tick_rounding(void **state)
{
	(void)state;
	static const rec_field df[] = { { "d", "", "", REC_TYPE_DURATION, 0 } };
	membuf m = { 0 };
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.tick_frequency = 3;
	o.anchor_wall_ns = 1000;
	o.anchor_ticks = 10;
	o.codec = REC_CODEC_NONE;
	rec_sink sk = { mem_write, NULL, &m };
	rec_writer *w;
	assert_int_equal(rec_writer_open(&w, &sk, &o), REC_OK);
	rec_type t = { 1, REC_EVENT_HAS_DURATION, "test.Tick", "", "", "", 1, df };
	assert_int_equal(rec_writer_add_type(w, &t), REC_OK);
	static const uint64_t ticks[] = { 14, 11, 9, 10, 4 };
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(rec_writer_begin(w, 1, ticks[i], 2, 0, 0), REC_OK);
		assert_int_equal(rec_writer_put_u64(w, 2), REC_OK);
		assert_int_equal(rec_writer_end(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
	rec_reader *r;
	assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "t", NULL), REC_OK);
	rec_event ev;
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(rec_reader_next_event(r, &ev), REC_OK);
		const rec_chunk_info *c = ev.chunk;
		assert_int_equal(c->tick_frequency, 3);
		int64_t d = (int64_t)(ev.ticks - c->start_ticks);
		i128 ns = (i128)d * 1000000000 / 3;
		assert_int_equal(ev.wall_ns, c->start_wall_ns + (int64_t)ns);
		assert_int_equal(ev.duration_ns, 666666666);
		/* a duration value converts the same way */
		assert_int_equal(rec_ticks_to_ns((int64_t)ev.values[0].v.u, 3), 666666666);
		/* and from the anchor: 1000 ns at tick 10, one tick is 333333333 ns */
		int64_t from_anchor = 1000 + (int64_t)((i128)((int64_t)ticks[i] - 10) * 1000000000 / 3);
		if (c->start_ticks == 10)
			assert_int_equal(ev.wall_ns, from_anchor);
	}
	/* The writer starts a chunk at its earliest tick, so d >= 0 above; a
	 * negative d goes through the same conversion: */
	assert_int_equal(rec_ticks_to_ns(-1, 3), -333333333);
	assert_int_equal(rec_ticks_to_ns(1, 3), 333333333);
	assert_int_equal(rec_reader_next_event(r, &ev), REC_END);
	rec_reader_close(r);
	free(m.p);
}

static void t_forward_compat(void **state)
{
	(void)state;
	for (unsigned codec = 0; codec < 2; codec++) {
		rec_buf f = { 0 };
		craft_newer_minor(&f, codec);
		craft_newer_minor(&f, codec); /* twice: two chunks */
		write_file(tpath("minor7.rec"), f.data, f.len);

		rec_reader *r;
		rec_reader_options ro = REC_READER_OPTIONS_INIT;
		ro.flags = REC_READ_VERIFY;
		assert_int_equal(rec_reader_open_path(&r, tpath("minor7.rec"), &ro), REC_OK);
		const rec_chunk_info *c;
		assert_int_equal(rec_reader_next_chunk(r, &c), REC_OK);
		assert_int_equal(c->minor, 7);
		assert_int_equal(c->unknown_sections, 1);
		assert_int_equal(c->type_count, 1);
		assert_int_equal(c->types[0].fields[1].type, 0xA0);
		assert_int_equal(c->type_stats_count, 2);
		assert_non_null(c->type_stats[0].type);
		assert_null(c->type_stats[1].type);
		assert_int_equal(c->type_stats[1].type_id, 9);
		assert_int_equal(c->first_ticks, 1005);
		assert_int_equal(c->last_ticks, 1008);
		assert_int_equal(rec_reader_verify_chunk(r), REC_OK);

		rec_event ev;
		assert_int_equal(rec_reader_next_event(r, &ev), REC_OK);
		assert_int_equal(ev.ticks, 1005);
		assert_int_equal(ev.wall_ns, 2000000000005LL);
		assert_int_equal(ev.values[0].v.u, 7);
		assert_int_equal(ev.values[1].present, 1);
		assert_int_equal(ev.values[1].type, 0xA0);
		assert_int_equal(ev.values[1].v.u, 300);
		assert_string_equal(ev.values[2].v.s.ptr, "hi");
		assert_int_equal(rec_reader_next_event(r, &ev), REC_OK);
		assert_int_equal(ev.ticks, 1008); /* the skipped record's delta counted */
		assert_int_equal(ev.values[0].v.u, 8);
		assert_string_equal(ev.values[2].v.s.ptr, "z");
		assert_int_equal(ev.offset, 13 + 5);
		/* The second chunk, entered by the iteration. */
		assert_int_equal(rec_reader_next_event(r, &ev), REC_OK);
		assert_int_equal(ev.chunk->index, 1);
		assert_int_equal(rec_reader_next_event(r, &ev), REC_OK);
		assert_int_equal(rec_reader_next_event(r, &ev), REC_END);
		rec_reader_stats rs;
		rec_reader_get_stats(r, &rs);
		assert_int_equal(rs.events, 4);
		assert_int_equal(rs.unknown_types, 2);
		assert_int_equal(rs.unknown_fields, 4);
		assert_int_equal(rs.trailing_bytes, 8);
		assert_int_equal(rs.unknown_sections, 2);
		assert_int_equal(rs.chunks_damaged, 0);
		rec_reader_close(r);
		rec_buf_free(&f);
	}
}

static void t_api_args(void **state)
{
	(void)state;
	rec_reader *r = (rec_reader *)1;
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.reserved[1] = 1;
	assert_int_equal(rec_reader_open_mem(&r, "", 0, NULL, &ro), REC_ERR_INVALID_ARG);
	assert_null(r);
	assert_int_equal(rec_reader_open_path(&r, tpath("does-not-exist"), NULL), REC_ERR_IO);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(rec_reader_open_mem(&r, NULL, 0, NULL, NULL), REC_OK);
	rec_event ev;
	const rec_chunk_info *c;
	assert_int_equal(rec_reader_next_chunk(r, &c), REC_END);
	assert_int_equal(rec_reader_next_event(r, &ev), REC_END);
	assert_int_equal(rec_reader_verify_chunk(r), REC_ERR_STATE);
	rec_reader_close(r);
	rec_reader_close(NULL);
	assert_int_equal(rec_chunk_wall_ns(NULL, 5), 0);
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_roundtrip_zstd), cmocka_unit_test(t_roundtrip_lz4),
		cmocka_unit_test(t_roundtrip_none), cmocka_unit_test(t_pipe_stdin),
		cmocka_unit_test(t_concat_runs),
		cmocka_unit_test(t_forward_compat),
		cmocka_unit_test(t_tick_rounding),
		cmocka_unit_test(t_api_args),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
