/* SPDX-License-Identifier: MIT */
/*
 * rec_test_timeline_gen.c - writes a small deterministic recording for
 * tests/cli/timeline.sh with the real writer: pid 4321, ticks at 1 GHz,
 * two named threads, a duration event, a lock wait, a thread instant, a
 * thread-less instant, counters and a gauge, at fixed odd nanoseconds.
 *
 *   rec_test_timeline_gen OUT.rec
 *
 * Events (ns after the first one, which is at wall 1700000005000000000):
 *   0          rec.Counter requests = 0                  (no thread)
 *   1234567    app.Request  tid 501 dur 2000001  path "/a" status 200
 *   1500000    rec.LockWait tid 502 dur 750250 lock 0xdead0 "big-lock" holder 501
 *   3000003    app.Mark     tid 502 note "he said \"hi\"\n"
 *   4000000    rec.Gauge   inflight = 2 (max 5)          (no thread)
 *   4000000    rec.Counter requests = 1                  (no thread)
 *   5000000    app.Tick     n = 7                        (no thread)
 * Threads: 501 "worker-a", 502 "worker-b".  Exits 0 on success.
 */
#include <stdio.h>
#include <string.h>

#include "rec/rec.h"

#include "../lib/file_gen.h"

#define T0 5000000000ull

static const rec_field req_fields[] = {
	{ "path", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "status", "", "", REC_TYPE_U16, REC_UNIT_NONE },
};
static const rec_field wait_fields[] = {
	{ "lockAddress", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "lockName", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "holderOsThreadId", "", "", REC_TYPE_U64, REC_UNIT_NONE },
	{ "lockKind", "", "", REC_TYPE_U8, REC_UNIT_NONE },
};
static const rec_field counter_fields[] = {
	{ "name", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "value", "", "", REC_TYPE_U64, REC_UNIT_COUNT },
};
static const rec_field gauge_fields[] = {
	{ "name", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "value", "", "", REC_TYPE_I64, REC_UNIT_NONE },
	{ "max", "", "", REC_TYPE_I64, REC_UNIT_NONE },
};
static const rec_field mark_fields[] = { { "note", "", "", REC_TYPE_TEXT, REC_UNIT_NONE } };
static const rec_field tick_fields[] = { { "n", "", "", REC_TYPE_U32, REC_UNIT_COUNT } };

static rec_t_fgen g;

static void ck(rec_status st, const char *what)
{
	rec_t_fgen_ck(&g, st, what);
}

static uint64_t str(const char *s)
{
	return rec_t_fgen_str(&g, s);
}

static void counter(uint64_t at, uint32_t type, const char *name, int64_t v, int64_t max)
{
	ck(rec_writer_begin(g.w, type, T0 + at, 0, 0, 0), "begin");
	ck(rec_writer_put_u64(g.w, str(name)), "put");
	if (type == 24) {
		ck(rec_writer_put_u64(g.w, (uint64_t)v), "put");
	} else {
		ck(rec_writer_put_i64(g.w, v), "put");
		ck(rec_writer_put_i64(g.w, max), "put");
	}
	ck(rec_writer_end(g.w), "end");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: rec_test_timeline_gen OUT.rec\n");
		return 2;
	}
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.run_id = 99;
	o.pid = 4321;
	o.process_start_ns = 1700000000000000000ll;
	o.anchor_wall_ns = 1700000000000000000ll;
	o.anchor_ticks = 0;
	o.tick_frequency = 1000000000u;
	if (!rec_t_fgen_open(&g, "rec_test_timeline_gen", argv[1], &o))
		return 1;
	rec_type types[] = {
		{ 16, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "rec.LockWait",
		  "", "", "rec/Locks", 4, wait_fields },
		{ 24, 0, "rec.Counter", "", "", "rec/Metrics", 2, counter_fields },
		{ 25, 0, "rec.Gauge", "", "", "rec/Metrics", 3, gauge_fields },
		{ 256, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD, "app.Request", "", "", "app", 2,
		  req_fields },
		{ 257, REC_EVENT_HAS_THREAD, "app.Mark", "", "", "app", 1, mark_fields },
		{ 258, 0, "app.Tick", "", "", "app", 1, tick_fields },
	};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		ck(rec_writer_add_type(g.w, &types[i]), "add_type");
	ck(rec_writer_define_thread(g.w, 1, 501, str("worker-a")), "thread");
	ck(rec_writer_define_thread(g.w, 2, 502, str("worker-b")), "thread");
	uint64_t frames[3];
	const char *fns[3] = { "rec_lock_wait_record_", "handler", "main" };
	for (int i = 0; i < 3; i++) {
		frames[i] = (uint64_t)(10 + i);
		ck(rec_writer_define_frame(g.w, frames[i], str(fns[i]), 0, (uint64_t)i * 16, 4), "frame");
	}
	ck(rec_writer_define_stack(g.w, 1, 0, frames, 3), "stack");

	counter(0, 24, "requests", 0, 0);

	ck(rec_writer_begin(g.w, 256, T0 + 1234567, 2000001, 1, 0), "begin");
	ck(rec_writer_put_u64(g.w, str("/a")), "put");
	ck(rec_writer_put_u64(g.w, 200), "put");
	ck(rec_writer_end(g.w), "end");

	ck(rec_writer_begin(g.w, 16, T0 + 1500000, 750250, 2, 1), "begin");
	ck(rec_writer_put_u64(g.w, 0xdead0), "put");
	ck(rec_writer_put_u64(g.w, str("big-lock")), "put");
	ck(rec_writer_put_u64(g.w, 501), "put");
	ck(rec_writer_put_u64(g.w, 0), "put");
	ck(rec_writer_end(g.w), "end");

	static const char note[] = "he said \"hi\"\n";
	ck(rec_writer_begin(g.w, 257, T0 + 3000003, 0, 2, 0), "begin");
	ck(rec_writer_put_bytes(g.w, note, sizeof note - 1), "put");
	ck(rec_writer_end(g.w), "end");

	counter(4000000, 25, "inflight", 2, 5);
	counter(4000000, 24, "requests", 1, 0);

	ck(rec_writer_begin(g.w, 258, T0 + 5000000, 0, 0, 0), "begin");
	ck(rec_writer_put_u64(g.w, 7), "put");
	ck(rec_writer_end(g.w), "end");

	ck(rec_writer_close(g.w), "close");
	return g.failed;
}
