/* SPDX-License-Identifier: MIT */
/*
 * rec_test_pending_gen.c - a recording whose CPU samples, read as digests,
 * all come ahead of its only other event, for tests/cli/view_pending.sh:
 *
 *   rec_test_pending_gen OUT.rec [EXTRA]
 *
 * 2^21 + 2^16 (+ EXTRA x 2^16) rec.CPUSample of thread 1 ("cruncher", tid 77) on one stack
 * (leaf "hot", then "main"), sample i at i us after the first (period
 * 1000 ns, no overruns), chunks of 2^16 records; the first chunk also holds
 * one app.Request at 1 ms (10 us long, path "/first").  The reader gives
 * the digests of a chunk without entered events at once, so every sample's
 * digest comes before that request: more than startup holds one by one.
 * Before the first span: 1000 samples, 1 ms of CPU.  Exits 0 on success.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/rec.h"

#include "../lib/file_gen.h"

#define T0 5000000000ull

static const rec_field cpu_fields[] = {
	{ "period", "", "", REC_TYPE_U64, REC_UNIT_NANOS },
	{ "overruns", "", "", REC_TYPE_U32, REC_UNIT_COUNT },
};
static const rec_field req_fields[] = { { "path", "", "", REC_TYPE_STRING, REC_UNIT_NONE } };

static rec_t_fgen g;

static void ck(rec_status st, const char *what)
{
	rec_t_fgen_ck(&g, st, what);
}

static uint64_t str(const char *s)
{
	return rec_t_fgen_str(&g, s);
}

int main(int argc, char **argv)
{
	if (argc != 2 && (argc != 3 || atoi(argv[2]) < 0 || atoi(argv[2]) > 64)) {
		fprintf(stderr, "usage: rec_test_pending_gen OUT.rec [EXTRA]\n");
		return 2;
	}
	const uint32_t N = (1u << 21) + (1u << 16) * (1u + (argc == 3 ? (uint32_t)atoi(argv[2]) : 0u));
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.run_id = 5;
	o.pid = 4242;
	o.anchor_wall_ns = 1700000000000000000LL;
	o.anchor_ticks = 0;
	o.tick_frequency = 1000000000u;
	if (!rec_t_fgen_open(&g, "rec_test_pending_gen", argv[1], &o))
		return 1;
	const rec_type cpu = { 21, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "rec.CPUSample", "", "",
			       "rec/Profiling", 2, cpu_fields };
	const rec_type req = { 256, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD, "app.Request", "",
			       "", "app", 1, req_fields };
	ck(rec_writer_add_type(g.w, &cpu), "add_type");
	ck(rec_writer_add_type(g.w, &req), "add_type");
	ck(rec_writer_define_thread(g.w, 1, 77, str("cruncher")), "thread");
	const uint64_t frames[2] = { 10, 11 };
	ck(rec_writer_define_frame(g.w, 10, str("hot"), 0, 0x10, 0), "frame");
	ck(rec_writer_define_frame(g.w, 11, str("main"), 0, 0x20, 0), "frame");
	ck(rec_writer_define_stack(g.w, 1, 0, frames, 2), "stack");
	for (uint32_t i = 0; i < N && !g.failed; i++) {
		if (i == 1000) {
			ck(rec_writer_begin(g.w, 256, T0 + 1000000, 10000, 1, 0), "begin");
			ck(rec_writer_put_u64(g.w, str("/first")), "put");
			ck(rec_writer_end(g.w), "end");
		}
		ck(rec_writer_begin(g.w, 21, T0 + (uint64_t)i * 1000, 0, 1, 1), "begin");
		ck(rec_writer_put_u64(g.w, 1000), "put");
		ck(rec_writer_put_u64(g.w, 0), "put");
		ck(rec_writer_end(g.w), "end");
		if (i % 65536 == 65535)
			ck(rec_writer_flush(g.w), "flush");
	}
	ck(rec_writer_close(g.w), "close");
	return g.failed;
}
