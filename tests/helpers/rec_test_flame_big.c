/* SPDX-License-Identifier: MIT */
/*
 * rec_test_flame_big - a large CPU profile for tests/cli/flame_browser.sh,
 * written with the writer API: the HTML flame graph at scale.
 *
 *   rec_test_flame_big FILE [CHAINS DEPTH LEAVES]    (default 900 32 1000)
 *
 * One thread (main, tid 100) and rec.CPUSample events (leaf last):
 *   main;deep_C_00;deep_C_01;...;deep_C_{DEPTH-1}   20 samples per chain C
 *   main;fanout;leaf_L                              1 sample per leaf L
 * Every frame of a chain is its own (deep_C_D, distinct names), so the
 * graph has 2 + CHAINS * DEPTH + LEAVES frames below the root (29,802 by
 * default) and 20 * CHAINS + LEAVES samples (19,000): a chain is about a
 * pixel wide in a 1,200-pixel chart and a leaf far less.  The test knows:
 * "^deep_[0-9]+_07$" matches CHAINS frames holding 20 * CHAINS samples,
 * "leaf_" LEAVES frames holding LEAVES samples.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/rec.h"

enum { T_CPU = 21, TH_MAIN = 1, PER_CHAIN = 20 };

static void check(rec_status st, const char *what)
{
	if (st != REC_OK) {
		fprintf(stderr, "rec_test_flame_big: %s: %s\n", what, rec_strerror(st));
		exit(1);
	}
}

static const rec_field f_cpu[] = {
	{ "period", "Period", "", REC_TYPE_U64, REC_UNIT_NANOS },
	{ "overruns", "Overruns", "", REC_TYPE_U32, REC_UNIT_COUNT },
};

static uint64_t g_str;

static uint64_t str(rec_writer *w, const char *s)
{
	check(rec_writer_define_string(w, ++g_str, s, strlen(s)), "define_string");
	return g_str;
}

static uint64_t frame(rec_writer *w, uint64_t id, const char *name)
{
	check(rec_writer_define_frame(w, id, str(w, name), 0, 0x1000 + 16 * id, 0), "frame");
	return id;
}

static void sample(rec_writer *w, uint64_t t, uint64_t stack)
{
	check(rec_writer_begin(w, T_CPU, t, 0, TH_MAIN, stack), "begin");
	check(rec_writer_put_u64(w, 10000000), "period");
	check(rec_writer_put_u64(w, 0), "overruns");
	check(rec_writer_end(w), "end");
}

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 5) {
		fprintf(stderr, "usage: rec_test_flame_big FILE [CHAINS DEPTH LEAVES]\n");
		return 2;
	}
	unsigned long chains = 900, depth = 32, leaves = 1000;
	if (argc == 5) {
		chains = strtoul(argv[2], NULL, 10);
		depth = strtoul(argv[3], NULL, 10);
		leaves = strtoul(argv[4], NULL, 10);
	}
	if (!depth || depth > 100) {
		fprintf(stderr, "rec_test_flame_big: DEPTH must be 1..100\n");
		return 2;
	}
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.codec = REC_CODEC_ZSTD;
	o.pid = 4242;
	o.process_start_ns = 1796206443000000000ll;
	o.tick_frequency = 1000000000u;
	o.anchor_wall_ns = 1796206443000000000ll;
	o.anchor_ticks = 1000000000ull;
	rec_writer *w;
	check(rec_writer_open_path(&w, argv[1], &o), "open");
	rec_type t = { T_CPU, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "rec.CPUSample",
		       "rec.CPUSample", "", "rec/Profiling", 2, f_cpu };
	check(rec_writer_add_type(w, &t), "add_type");
	check(rec_writer_define_thread(w, TH_MAIN, 100, str(w, "main")), "thread");

	uint64_t fid = 0, sid = 0, tick = 1000000000ull;
	uint64_t f_main = frame(w, ++fid, "main"), f_fan = frame(w, ++fid, "fanout");
	uint64_t st[102];
	char name[64];
	for (unsigned long c = 0; c < chains; c++) {
		/* leaf first: deep_C_{DEPTH-1} ... deep_C_00, main */
		for (unsigned long d = 0; d < depth; d++) {
			snprintf(name, sizeof name, "deep_%lu_%02lu", c, d);
			st[depth - 1 - d] = frame(w, ++fid, name);
		}
		st[depth] = f_main;
		check(rec_writer_define_stack(w, ++sid, 0, st, (uint32_t)depth + 1), "stack");
		for (int k = 0; k < PER_CHAIN; k++, tick += 1000000)
			sample(w, tick, sid);
	}
	for (unsigned long l = 0; l < leaves; l++) {
		snprintf(name, sizeof name, "leaf_%lu", l);
		st[0] = frame(w, ++fid, name);
		st[1] = f_fan;
		st[2] = f_main;
		check(rec_writer_define_stack(w, ++sid, 0, st, 3), "stack");
		sample(w, tick, sid);
		tick += 1000000;
	}
	check(rec_writer_close(w), "close");
	return 0;
}
