/* SPDX-License-Identifier: MIT */
/*
 * rec_test_lock_dense.c - writes a dense lock recording for
 * tests/cli/lockgraph.sh with the real writer: 40 locks x 30 threads.
 *
 *   rec_test_lock_dense OUT.rec
 *
 * Thread t (1..30, tid 1000 + t, named "w<t>") waits once on lock i (0..39,
 * address 0x1000 + 16 i, named "L00".."L39") for (i + 1) * t us, held by
 * tid 5000 + t % 7 (never named, never waiting); the 1200 waits follow one
 * another 2 ms apart, so none overlaps another (no hand-offs).  Exits 0.
 */
#include <stdio.h>
#include <string.h>

#include "rec/rec.h"

#include "../lib/file_gen.h"

static const rec_field wait_fields[] = {
	{ "lockAddress", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "lockName", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "holderOsThreadId", "", "", REC_TYPE_U64, REC_UNIT_NONE },
	{ "lockKind", "", "", REC_TYPE_U8, REC_UNIT_NONE },
};

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
	if (argc != 2) {
		fprintf(stderr, "usage: rec_test_lock_dense OUT.rec\n");
		return 2;
	}
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.run_id = 40;
	o.pid = 4030;
	o.anchor_wall_ns = 1700000000000000000ll;
	o.anchor_ticks = 0;
	o.tick_frequency = 1000000000u;
	if (!rec_t_fgen_open(&g, "rec_test_lock_dense", argv[1], &o))
		return 1;
	rec_type tw = { 16, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK,
			"rec.LockWait", "", "", "rec/Locks", 4, wait_fields };
	ck(rec_writer_add_type(g.w, &tw), "add_type");
	for (uint64_t t = 1; t <= 30; t++) {
		char name[8];
		snprintf(name, sizeof name, "w%llu", (unsigned long long)t);
		ck(rec_writer_define_thread(g.w, t, 1000 + t, str(name)), "thread");
	}
	uint64_t at = 1000000;
	for (uint64_t i = 0; i < 40; i++) {
		char name[8];
		snprintf(name, sizeof name, "L%02llu", (unsigned long long)i);
		for (uint64_t t = 1; t <= 30; t++) {
			ck(rec_writer_begin(g.w, 16, at, (i + 1) * t * 1000, t, 0), "begin");
			ck(rec_writer_put_u64(g.w, 0x1000 + 16 * i), "put");
			ck(rec_writer_put_u64(g.w, str(name)), "put");
			ck(rec_writer_put_u64(g.w, 5000 + t % 7), "put");
			ck(rec_writer_put_u64(g.w, 0), "put");
			ck(rec_writer_end(g.w), "end");
			at += 2000000;
		}
	}
	ck(rec_writer_close(g.w), "close");
	return g.failed;
}
