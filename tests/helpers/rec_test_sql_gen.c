/* SPDX-License-Identifier: MIT */
/*
 * rec_test_sql_gen.c - a deterministic multi-chunk recording for
 * tests/cli/sql*.sh, written with the real writer (zstd), and its truth.
 *
 *   rec_test_sql_gen OUT.rec CHUNKS [RUN_ID DAYS] [builtins]
 *
 * Chunk k (0-based, one flush each) starts at wall T0 + k s (T0 =
 * 1700000000000000000, 1 GHz ticks) and holds:
 *   100 app.Request (D T S), i = 0..99 at T0 + k s + i ms: duration
 *       (i + 1) us, thread 501 "worker-a" (i even) or 502 "worker-b", stack 1
 *       (i even) or 2, path "/p/<i % 4>", status 500 if i % 10 == 0 else
 *       200, bytes i * 10, a field named start_ns (i64: -i, a name that
 *       clashes with a fixed column), peer (thread: the other worker), big
 *       (u64: 2^63 + i), ratio (f64: i / 4), payload (blob: 2 bytes k, i);
 *   10 app.Wait (D T), j = 0..9 at T0 + k s + 500 ms + j ms, duration
 *       5000 (j + 1) ns, lockName "L<j % 2>";
 *   1 app.Tick (no thread) at T0 + k s + 900 ms, n = k.
 * Chunk 0 also holds one event each of "a.b", "a_b" (one table name after
 * the rules: a_b and a_b_2) and "9lives" (t_9lives), at T0 + 950 ms.
 * Stacks: 1 = frames 1, 2 (leaf first); 2 = frames 1, 3.  Frame functions
 * leaf, mid, other; module /usr/bin/app (build id "abcd").
 * RUN_ID (hex, default 5a1) and DAYS (whole days added to every time,
 * default 0) make another run of the same events (tests/cli/export.sh).
 * With "builtins" (tests/cli/view_sql.sh), each chunk also holds built-in
 * events (the types as libfmt/record declares them), at T0 + k s + 600 ms on:
 *   6 rec.Alloc, i = 0..5: stack 1 3 4 5 none 3, size 16 (i + 1), weight
 *       4096 (i + 1) + k (not the size: a sampled allocation's), sampled i % 2;
 *   6 rec.LockWait, j = 0..5: duration 2000 (j + 1) + k ns, stack 3 5 1 4 3 5,
 *       lockAddress 0xab00 + 16 (j % 3), lockName "L-a", "L-b" or none (j % 3),
 *       holderOsThreadId 502 9999 0 0 502 9999 (a thread of the recording, one
 *       no event names, released);
 *   4 rec.Sleep, j = 0..3: duration 1 ms (j + 1) + k ns, stack 1 3 5 none;
 *   6 rec.CPUSample, j = 0..5: stack 1 6 3 none 6 5, period 10 ms + k ns,
 *       overruns j % 3 (CPU time period x (1 + overruns));
 *   3 rec.Dropped: 5 + k app.Request of thread 501 (buffer full), 2
 *       app.Wait of thread 502 (throttled), 7 of a type not known (reason
 *       9, a number without a name), counted in the chunk's Dropped_Events;
 * with frames 4 rec_mutex_lock (librec's own), 5 (no function,
 * /usr/bin/app+0x1234) and 6 "ns;fn", stacks 3 = frames 4, 1, 2; 4 = frame
 * 4; 5 = 5, 3; 6 = 6, 2, 1, 2 (mid twice); and frame 1 (leaf) with its
 * source (format 1.2): app.c:10, where "inl_a" (inl.h:30, inline depth 1)
 * is inlined, into which "inl_b" (inl.h:42, depth 2, the address's line) is,
 * so rec-view's CPU leaf of stacks 1 is inl_b.
 * With "extra" (implies "builtins"; tests/cli/view_sql.sh) every chunk
 * starts 1 s later (T0 + 1 s + k s), and the recording has more:
 *   before the first request (chunk 0, at T0 + 100 ms ... 400 ms, so
 *   rec-view startup's at is 900 ms): 3 rec.CPUSample (thread 501, stacks
 *   1 6 none, period 10 ms, overruns 0 1 0), 1 rec.Sleep (501, stack 1,
 *   2 ms), 1 rec.Alloc (501, stack 3, weight 1000), 2 rec.LockWait (501,
 *   stacks 3 5, 3000 and 5000 ns, lock "L-a", holder 502) and 2
 *   rec.CondWait of thread 502 (stacks 1 5, 7000 and 11000 ns), the
 *   first of which covers the first lock wait (its holder in a cond wait);
 *   the holder of lock waits 0 and 4 of each chunk (502, worker-b) busy
 *   meanwhile: for wait 0 (at S = base + 700 ms) a rec.Sleep from S - 500
 *   for 1500 ns, a rec.IO at S + 1200 for 300 ns, a rec.CPUSample at
 *   S + 1600 (period 100 ns); for wait 4 (S = base + 704 ms) a
 *   rec.LockWait at S + 2000 for 3000 ns (lock "L-b", no holder) and a
 *   rec.CondWait at S + 6000 for 2000 ns;
 *   two rec.IO per chunk at base + 868 ms (+ 100 ns), thread 501, stack 6:
 *   recv on a socket, 4000 + k ns each, 100 + k bytes, peers 10.0.0.7:11211
 *   then 10.0.0.8:11211;
 *   8 rec.WallSample per chunk at base + 860 ms + j ms, j = 0..7: states
 *   running lock cond sleep io poll wait zzz (one rec-view calls other),
 *   weight j + 1, period 5 ms, stacks 1 3 5 none 6 1 3 2, threads 501, 502;
 *   the run ends with a rec.Crash (thread 501, in a last chunk at T0 + 10
 *   s) and no final chunk (the writer abandoned), and a second run (id
 *   5a2, pid 778) follows in the same file: an app.Tick and a
 *   rec.WriteFailed (action 0: 3 chunks, 120 events, 4096 bytes) at
 *   T0 + 20 s, closed cleanly (a restart, a crash, a write failure).
 * Prints the truth on stdout as NAME=VALUE lines.  Exits 0 on success.
 */
#include <fcntl.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/builtins.h"
#include "rec/rec.h"

#include "../lib/file_gen.h"

#define T0 1700000000000000000ll
#define SEC 1000000000ull
#define MS 1000000ull

static const rec_field req_fields[] = {
	{ "path", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "status", "", "", REC_TYPE_U16, REC_UNIT_NONE },
	{ "bytes", "", "", REC_TYPE_U64, REC_UNIT_BYTES },
	{ "start_ns", "", "", REC_TYPE_I64, REC_UNIT_NONE },
	{ "peer", "", "", REC_TYPE_THREAD, REC_UNIT_NONE },
	{ "big", "", "", REC_TYPE_U64, REC_UNIT_NONE },
	{ "ratio", "", "", REC_TYPE_F64, REC_UNIT_PERCENT },
	{ "payload", "", "", REC_TYPE_BLOB, REC_UNIT_NONE },
};
static const rec_field wait_fields[] = { { "lockName", "", "", REC_TYPE_STRING, REC_UNIT_NONE } };
static const rec_field tick_fields[] = { { "n", "", "", REC_TYPE_U32, REC_UNIT_COUNT } };

static rec_t_fgen g;
static bool extra;      /* "extra": see the header */

static void ck(rec_status st, const char *what)
{
	rec_t_fgen_ck(&g, st, what);
}

static uint64_t str(const char *s)
{
	return rec_t_fgen_str(&g, s);
}

static void tick_event(uint32_t type, uint64_t at, uint64_t n)
{
	ck(rec_writer_begin(g.w, type, at, 0, 0, 0), "begin");
	ck(rec_writer_put_u64(g.w, n), "put");
	ck(rec_writer_end(g.w), "end");
}

static const rec_field alloc_fields[] = {
	{ "address", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "size", "", "", REC_TYPE_U64, REC_UNIT_BYTES },
	{ "weight", "", "", REC_TYPE_U64, REC_UNIT_BYTES },
	{ "sampled", "", "", REC_TYPE_BOOL, REC_UNIT_NONE },
};
static const rec_field lock_fields[] = {
	{ "lockAddress", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "lockName", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "holderOsThreadId", "", "", REC_TYPE_U64, REC_UNIT_NONE },
	{ "lockKind", "", "", REC_TYPE_U8, REC_UNIT_NONE },
};
static const rec_field sleep_fields[] = {
	{ "kind", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "requested", "", "", REC_TYPE_U64, REC_UNIT_NANOS },
	{ "objectAddress", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
};
static const rec_field dropped_fields[] = {
	{ "count", "", "", REC_TYPE_U64, REC_UNIT_COUNT },
	{ "thread", "", "", REC_TYPE_THREAD, REC_UNIT_NONE },
	{ "reason", "", "", REC_TYPE_U8, REC_UNIT_NONE },
	{ "type", "", "", REC_TYPE_U32, REC_UNIT_NONE },
};
static const rec_field cpu_fields[] = {
	{ "period", "", "", REC_TYPE_U64, REC_UNIT_NANOS },
	{ "overruns", "", "", REC_TYPE_U32, REC_UNIT_COUNT },
};
#define FLAGS_TS (REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK)
#define FLAGS_DTS (REC_EVENT_HAS_DURATION | FLAGS_TS)
static const rec_type builtin_types[] = {
	{ REC_TYPE_ID_ALLOC, FLAGS_TS, "rec.Alloc", "", "", "rec/Memory", 4, alloc_fields },
	{ REC_TYPE_ID_LOCK_WAIT, FLAGS_DTS, "rec.LockWait", "", "", "rec/Locks", 4, lock_fields },
	{ REC_TYPE_ID_SLEEP, FLAGS_DTS, "rec.Sleep", "", "", "rec/Waits", 3, sleep_fields },
	{ REC_TYPE_ID_DROPPED, 0, "rec.Dropped", "", "", "rec", 4, dropped_fields },
	{ REC_TYPE_ID_CPU_SAMPLE, FLAGS_TS, "rec.CPUSample", "", "", "rec/Profiling", 2, cpu_fields },
};
static const rec_field cond_fields[] = {
	{ "condAddress", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "mutexAddress", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "mutexName", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "timeout", "", "", REC_TYPE_U64, REC_UNIT_NANOS },
	{ "timed", "", "", REC_TYPE_BOOL, REC_UNIT_NONE },
	{ "timedOut", "", "", REC_TYPE_BOOL, REC_UNIT_NONE },
};
static const rec_field io_fields[] = {
	{ "fd", "", "", REC_TYPE_I64, REC_UNIT_NONE },
	{ "call", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "kind", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "address", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "bytes", "", "", REC_TYPE_U64, REC_UNIT_BYTES },
	{ "error", "", "", REC_TYPE_U64, REC_UNIT_NONE },
};
static const rec_field crash_fields[] = {
	{ "signal", "", "", REC_TYPE_U32, REC_UNIT_NONE },
	{ "code", "", "", REC_TYPE_I32, REC_UNIT_NONE },
	{ "address", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "senderPid", "", "", REC_TYPE_U32, REC_UNIT_NONE },
	{ "osThreadId", "", "", REC_TYPE_U64, REC_UNIT_NONE },
};
static const rec_field write_failed_fields[] = {
	{ "errno", "", "", REC_TYPE_U32, REC_UNIT_NONE },
	{ "message", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "action", "", "", REC_TYPE_U8, REC_UNIT_NONE },
	{ "chunks", "", "", REC_TYPE_U64, REC_UNIT_COUNT },
	{ "events", "", "", REC_TYPE_U64, REC_UNIT_COUNT },
	{ "bytes", "", "", REC_TYPE_U64, REC_UNIT_BYTES },
};
/* "extra" declares these too */
static const rec_type extra_types[] = {
	{ REC_TYPE_ID_COND_WAIT, FLAGS_DTS, "rec.CondWait", "", "", "rec/Waits", 6, cond_fields },
	{ REC_TYPE_ID_IO, FLAGS_DTS, "rec.IO", "", "", "rec/IO", 6, io_fields },
	{ REC_TYPE_ID_CRASH, FLAGS_TS, "rec.Crash", "", "", "rec", 5, crash_fields },
};
static const rec_field wall_fields[] = {
	{ "state", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "weight", "", "", REC_TYPE_U32, REC_UNIT_COUNT },
	{ "period", "", "", REC_TYPE_U64, REC_UNIT_NANOS },
};
static const rec_type wall_type = { REC_TYPE_ID_WALL_SAMPLE, FLAGS_TS, "rec.WallSample", "", "",
				     "rec/Profiling", 3, wall_fields };
static const rec_type write_failed_type = { REC_TYPE_ID_WRITE_FAILED, REC_EVENT_HAS_DURATION,
					     "rec.WriteFailed", "", "", "rec", 6,
					     write_failed_fields };

static void put_all(const uint64_t *v, int n)
{
	for (int i = 0; i < n; i++)
		ck(rec_writer_put_u64(g.w, v[i]), "put");
	ck(rec_writer_end(g.w), "end");
}

static void sleep_event(uint64_t at, uint64_t dur, uint64_t th, uint64_t stack)
{
	ck(rec_writer_begin(g.w, REC_TYPE_ID_SLEEP, at, dur, th, stack), "begin");
	const uint64_t v[3] = { str("sleep"), dur, 0 };
	put_all(v, 3);
}

static void cond_event(uint64_t at, uint64_t dur, uint64_t th, uint64_t stack)
{
	ck(rec_writer_begin(g.w, REC_TYPE_ID_COND_WAIT, at, dur, th, stack), "begin");
	const uint64_t v[6] = { 0xc000, 0xab00, str("L-a"), 0, 0, 0 };
	put_all(v, 6);
}

static void lock_event(uint64_t at, uint64_t dur, uint64_t th, uint64_t stack, const char *lock,
		       uint64_t holder)
{
	ck(rec_writer_begin(g.w, REC_TYPE_ID_LOCK_WAIT, at, dur, th, stack), "begin");
	const uint64_t v[4] = { 0xab00, lock ? str(lock) : 0, holder, 0 };
	put_all(v, 4);
}

static void cpu_event(uint64_t at, uint64_t th, uint64_t stack, uint64_t period, uint64_t overruns)
{
	ck(rec_writer_begin(g.w, REC_TYPE_ID_CPU_SAMPLE, at, 0, th, stack), "begin");
	const uint64_t v[2] = { period, overruns };
	put_all(v, 2);
}

/* "extra": the events before the first request (chunk 0, before T0 + 1 s) */
static void startup_events(void)
{
	static const uint64_t cpu_stack[3] = { 1, 6, 0 };
	for (uint64_t j = 0; j < 3; j++)
		cpu_event(100 * MS + j * MS, 1, cpu_stack[j], 10 * MS, j % 2);
	sleep_event(150 * MS, 2 * MS, 1, 1);
	ck(rec_writer_begin(g.w, REC_TYPE_ID_ALLOC, 180 * MS, 0, 1, 3), "begin");
	const uint64_t a[4] = { 0x20000, 100, 1000, 1 };
	put_all(a, 4);
	cond_event(200 * MS - 1000, 7000, 2, 1);
	lock_event(200 * MS, 3000, 1, 3, "L-a", 502);
	lock_event(300 * MS, 5000, 1, 5, "L-a", 502);
	cond_event(400 * MS, 11000, 2, 5);
}

/* The "builtins" events of chunk k (at base), as the header lists them. */
static void builtin_events(uint64_t base, uint64_t k)
{
	static const uint64_t alloc_stack[6] = { 1, 3, 4, 5, 0, 3 };
	static const uint64_t wait_stack[6] = { 3, 5, 1, 4, 3, 5 };
	static const uint64_t sleep_stack[4] = { 1, 3, 5, 0 };
	static const uint64_t cpu_stack[6] = { 1, 6, 3, 0, 6, 5 };
	static const char *const locks[3] = { "L-a", "L-b", NULL };
	static const uint64_t holders[6] = { 502, 9999, 0, 0, 502, 9999 };
	for (uint64_t i = 0; i < 6; i++) {
		ck(rec_writer_begin(g.w, REC_TYPE_ID_ALLOC, base + 600 * MS + i * MS, 0, 1 + i % 2,
				    alloc_stack[i]), "begin");
		ck(rec_writer_put_u64(g.w, 0x10000 + 64 * i), "put");
		ck(rec_writer_put_u64(g.w, 16 * (i + 1)), "put");
		ck(rec_writer_put_u64(g.w, 4096 * (i + 1) + k), "put");
		ck(rec_writer_put_u64(g.w, i % 2), "put");
		ck(rec_writer_end(g.w), "end");
	}
	for (uint64_t j = 0; j < 6; j++) {
		const uint64_t at = base + 700 * MS + j * MS;
		if (extra && j == 0) /* the holder (502) sleeps into the wait */
			sleep_event(at - 500, 1500, 2, 5);
		ck(rec_writer_begin(g.w, REC_TYPE_ID_LOCK_WAIT, at, 2000 * (j + 1) + k,
				    1 + j % 2, wait_stack[j]), "begin");
		ck(rec_writer_put_u64(g.w, 0xab00 + 16 * (j % 3)), "put");
		ck(rec_writer_put_u64(g.w, locks[j % 3] ? str(locks[j % 3]) : 0), "put");
		ck(rec_writer_put_u64(g.w, holders[j]), "put");
		ck(rec_writer_put_u64(g.w, 0), "put");
		ck(rec_writer_end(g.w), "end");
		if (extra && j == 0) { /* then blocks in I/O, then runs */
			ck(rec_writer_begin(g.w, REC_TYPE_ID_IO, at + 1200, 300, 2, 1), "begin");
			ck(rec_writer_put_i64(g.w, 7), "put");
			const uint64_t io[5] = { str("read"), str("file"), str("/tmp/x"), 64, 0 };
			put_all(io, 5);
			cpu_event(at + 1600, 2, 5, 100, 0);
		}
		if (extra && j == 4) { /* the holder waits for another lock, then a condition */
			lock_event(at + 2000, 3000, 2, 5, "L-b", 0);
			cond_event(at + 6000, 2000, 2, 3);
		}
	}
	for (uint64_t j = 0; j < 4; j++) {
		ck(rec_writer_begin(g.w, REC_TYPE_ID_SLEEP, base + 800 * MS + j * MS, MS * (j + 1) + k, 1,
				    sleep_stack[j]), "begin");
		ck(rec_writer_put_u64(g.w, str("sleep")), "put");
		ck(rec_writer_put_u64(g.w, MS * (j + 1)), "put");
		ck(rec_writer_put_u64(g.w, 0), "put");
		ck(rec_writer_end(g.w), "end");
	}
	for (uint64_t j = 0; j < 6; j++) {
		ck(rec_writer_begin(g.w, REC_TYPE_ID_CPU_SAMPLE, base + 850 * MS + j * MS, 0, 1 + j % 2,
				    cpu_stack[j]), "begin");
		ck(rec_writer_put_u64(g.w, 10 * MS + k), "put");
		ck(rec_writer_put_u64(g.w, j % 3), "put");
		ck(rec_writer_end(g.w), "end");
	}
	/* "extra": wall samples of every state, one unknown to rec-view (other) */
	static const char *const states[8] = { "running", "lock", "cond", "sleep",
					       "io",      "poll", "wait", "zzz" };
	static const uint64_t wall_stack[8] = { 1, 3, 5, 0, 6, 1, 3, 2 };
	for (uint64_t j = 0; extra && j < 8; j++) {
		ck(rec_writer_begin(g.w, REC_TYPE_ID_WALL_SAMPLE, base + 860 * MS + j * MS, 0, 1 + j % 2,
				    wall_stack[j]), "begin");
		const uint64_t v[3] = { str(states[j]), j + 1, 5 * MS };
		put_all(v, 3);
	}
	/* "extra": two socket calls of equal length (4000 + k ns) at another
	 * site, the earlier one's peer the longest's (io-by-site) */
	for (uint64_t j = 0; extra && j < 2; j++) {
		ck(rec_writer_begin(g.w, REC_TYPE_ID_IO, base + 868 * MS + j * 100, 4000 + k, 1, 6),
		   "begin");
		ck(rec_writer_put_i64(g.w, 9), "put");
		const uint64_t io[5] = { str("recv"), str("socket"),
					 str(j ? "10.0.0.8:11211" : "10.0.0.7:11211"), 100 + k, 0 };
		put_all(io, 5);
	}
	const uint64_t drops[3][4] = { { 5 + k, 1, 0, 256 }, { 2, 2, 5, 257 }, { 7, 0, 9, 0 } };
	for (int d = 0; d < 3; d++) {
		ck(rec_writer_begin(g.w, REC_TYPE_ID_DROPPED, base + 870 * MS + (uint64_t)d * MS, 0, 0, 0),
		   "begin");
		for (int f = 0; f < 4; f++)
			ck(rec_writer_put_u64(g.w, drops[d][f]), "put");
		ck(rec_writer_end(g.w), "end");
		rec_writer_note_dropped(g.w, drops[d][0]);
	}
}

int main(int argc, char **argv)
{
	extra = argc > 3 && strcmp(argv[argc - 1], "extra") == 0;
	bool builtins = extra || (argc > 3 && strcmp(argv[argc - 1], "builtins") == 0);
	argc -= builtins;
	if (argc != 3 && argc != 5) {
		fprintf(stderr, "usage: rec_test_sql_gen OUT.rec CHUNKS [RUN_ID DAYS] [builtins|extra]\n");
		return 2;
	}
	int chunks = atoi(argv[2]);
	uint64_t run_id = argc == 5 ? strtoull(argv[3], NULL, 16) : 0x5a1;
	int64_t shift = argc == 5 ? atoll(argv[4]) * 86400 * (int64_t)SEC : 0;
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.run_id = run_id;
	o.pid = 777;
	o.process_start_ns = T0 + shift - (int64_t)SEC;
	o.anchor_wall_ns = T0 + shift;
	o.anchor_ticks = 0;
	o.tick_frequency = SEC;
	if (!rec_t_fgen_open(&g, "rec_test_sql_gen", argv[1], &o))
		return 1;
	rec_type types[] = {
		{ 256, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "app.Request",
		  "Request", "", "app", 8, req_fields },
		{ 257, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD, "app.Wait", "", "", "app", 1,
		  wait_fields },
		{ 258, 0, "app.Tick", "", "", "app", 1, tick_fields },
		{ 259, 0, "a.b", "", "", "app", 1, tick_fields },
		{ 260, 0, "a_b", "", "", "app", 1, tick_fields },
		{ 261, 0, "9lives", "", "", "app", 1, tick_fields },
	};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		ck(rec_writer_add_type(g.w, &types[i]), "add_type");
	for (size_t i = 0; builtins && i < sizeof builtin_types / sizeof builtin_types[0]; i++)
		ck(rec_writer_add_type(g.w, &builtin_types[i]), "add_type");
	for (size_t i = 0; extra && i < sizeof extra_types / sizeof extra_types[0]; i++)
		ck(rec_writer_add_type(g.w, &extra_types[i]), "add_type");
	if (extra)
		ck(rec_writer_add_type(g.w, &wall_type), "add_type");
	ck(rec_writer_define_thread(g.w, 1, 501, str("worker-a")), "thread");
	ck(rec_writer_define_thread(g.w, 2, 502, str("worker-b")), "thread");
	ck(rec_writer_define_module(g.w, 1, str("/usr/bin/app"), str("abcd"), 0x400000), "module");
	const char *fns[3] = { "leaf", "mid", "other" };
	for (int i = 0; i < 3; i++)
		ck(rec_writer_define_frame(g.w, (uint64_t)i + 1, str(fns[i]), 1, 0x100 * (uint64_t)(i + 1), 8),
		   "frame");
	const uint64_t s1[2] = { 1, 2 }, s2[2] = { 1, 3 };
	ck(rec_writer_define_stack(g.w, 1, 0, s1, 2), "stack");
	ck(rec_writer_define_stack(g.w, 2, 0, s2, 2), "stack");
	if (builtins) {
		ck(rec_writer_define_frame(g.w, 4, str("rec_mutex_lock"), 1, 0x400, 4), "frame");
		ck(rec_writer_define_frame(g.w, 5, 0, 1, 0x1234, 0), "frame");
		ck(rec_writer_define_frame(g.w, 6, str("ns;fn"), 1, 0x600, 8), "frame");
		const uint64_t s3[3] = { 4, 1, 2 }, s4[1] = { 4 }, s5[2] = { 5, 3 }, s6[4] = { 6, 2, 1, 2 };
		ck(rec_writer_define_stack(g.w, 3, 0, s3, 3), "stack");
		ck(rec_writer_define_stack(g.w, 4, 0, s4, 1), "stack");
		ck(rec_writer_define_stack(g.w, 5, 0, s5, 2), "stack");
		ck(rec_writer_define_stack(g.w, 6, 0, s6, 4), "stack");
		const rec_frame_inline inl[2] = { { str("inl_b"), str("inl.h"), 42 },
						  { str("inl_a"), str("inl.h"), 30 } };
		ck(rec_writer_define_frame_source(g.w, 1, 0, str("app.c"), 10, inl, 2), "frame source");
	}

	uint64_t req_dur = 0, wait_dur = 0, status500 = 0, bytes = 0;
	if (extra)
		startup_events();
	for (int k = 0; k < chunks && !g.failed; k++) {
		uint64_t base = (extra ? SEC : 0) + (uint64_t)k * SEC;
		for (uint64_t i = 0; i < 100; i++) {
			uint64_t th = i % 2 ? 2 : 1;
			ck(rec_writer_begin(g.w, 256, base + i * MS, (i + 1) * 1000, th, i % 2 ? 2 : 1), "begin");
			char path[16];
			snprintf(path, sizeof path, "/p/%u", (unsigned)(i % 4));
			ck(rec_writer_put_u64(g.w, str(path)), "put");
			ck(rec_writer_put_u64(g.w, i % 10 == 0 ? 500 : 200), "put");
			ck(rec_writer_put_u64(g.w, i * 10), "put");
			ck(rec_writer_put_i64(g.w, -(int64_t)i), "put");
			ck(rec_writer_put_u64(g.w, 3 - th), "put");
			ck(rec_writer_put_u64(g.w, (1ull << 63) + i), "put");
			ck(rec_writer_put_f64(g.w, (double)i / 4), "put");
			unsigned char blob[2] = { (unsigned char)k, (unsigned char)i };
			ck(rec_writer_put_bytes(g.w, blob, 2), "put");
			ck(rec_writer_end(g.w), "end");
			req_dur += (i + 1) * 1000;
			status500 += i % 10 == 0;
			bytes += i * 10;
		}
		for (uint64_t j = 0; j < 10; j++) {
			ck(rec_writer_begin(g.w, 257, base + 500 * MS + j * MS, 5000 * (j + 1), 1 + j % 2, 0),
			   "begin");
			ck(rec_writer_put_u64(g.w, str(j % 2 ? "L1" : "L0")), "put");
			ck(rec_writer_end(g.w), "end");
			wait_dur += 5000 * (j + 1);
		}
		if (builtins)
			builtin_events(base, (uint64_t)k);
		tick_event(258, base + 900 * MS, (uint64_t)k);
		if (k == 0)
			for (uint32_t t = 259; t <= 261; t++)
				tick_event(t, (extra ? SEC : 0) + 950 * MS, t);
		ck(rec_writer_flush(g.w), "flush");
	}
	if (extra) {
		/* the run crashes: a rec.Crash, its chunk, and no final chunk */
		ck(rec_writer_begin(g.w, REC_TYPE_ID_CRASH, 10 * SEC, 0, 1, 1), "begin");
		ck(rec_writer_put_u64(g.w, 11), "put");
		ck(rec_writer_put_i64(g.w, 1), "put");
		const uint64_t c[3] = { 0x10, 0, 501 };
		put_all(c, 3);
		ck(rec_writer_flush(g.w), "flush");
		rec_writer_abandon(g.w);
		g.w = NULL;
		/* a second run in the same file: a restart, with a write failure */
		int fd = g.failed ? -1 : open(argv[1], O_WRONLY | O_APPEND);
		if (fd < 0)
			return 1;
		o.run_id = run_id + 1;
		o.pid = 778;
		o.process_start_ns = T0 + shift + 19 * (int64_t)SEC;
		o.anchor_wall_ns = T0 + shift + 20 * (int64_t)SEC;
		ck(rec_writer_open_fd(&g.w, fd, &o), "open");
		if (!g.failed) {
			ck(rec_writer_add_type(g.w, &types[2]), "add_type");
			ck(rec_writer_add_type(g.w, &write_failed_type), "add_type");
			tick_event(258, 0, 99);
			ck(rec_writer_begin(g.w, REC_TYPE_ID_WRITE_FAILED, MS, 2 * MS, 0, 0), "begin");
			const uint64_t wf[6] = { 28, str("No space left on device"), 0, 3, 120, 4096 };
			put_all(wf, 6);
			ck(rec_writer_close(g.w), "close");
		}
		close(fd);
	} else {
		ck(rec_writer_close(g.w), "close");
	}
	if (g.failed)
		return 1;
	if (extra) {
		/* before the first request: CPU 10 ms (1 + 2 + 1), 2 lock waits of
		 * 8000 ns, cond waits 18000 ns, 1 sleep of 2 ms, 1 allocation of 1000 */
		printf("startup_cpu_ns=%llu\nstartup_lock_waits=2\nstartup_lock_wait_ns=8000\n"
		       "startup_cond_wait_ns=18000\nstartup_at_ns=%llu\n",
		       (unsigned long long)(40 * MS), (unsigned long long)(900 * MS));
		/* the holder's activity during its waits (contention-by-lock): per
		 * chunk 1000 sleeping, 300 in I/O, 100 running (wait 0), 3000 in a
		 * lock wait and 2000 in a cond wait (wait 4); and the first startup
		 * wait 3000 in a cond wait */
		/* wall samples: per chunk weights 1 ... 8 of 5 ms */
		printf("wall_samples=%d\nwall_ns=%llu\n", chunks * 8,
		       (unsigned long long)chunks * 36 * 5 * MS);
		/* rec.IO: per chunk k a file read of 300 ns and 64 bytes, two
		 * socket calls of 4000 + k ns and 100 + k bytes each */
		uint64_t sk = (uint64_t)chunks * (uint64_t)(chunks - 1) / 2;
		printf("io_calls=%d\nio_bytes=%llu\nio_ns=%llu\n", chunks * 3,
		       (unsigned long long)(chunks * 64 + 2 * (100 * (uint64_t)chunks + sk)),
		       (unsigned long long)(chunks * 300 + 2 * (4000 * (uint64_t)chunks + sk)));
		printf("holder_sleeping=%d\nholder_io=%d\nholder_running=%d\nholder_lock_wait=%d\n"
		       "holder_cond_wait=%d\n", chunks * 1000, chunks * 300, chunks * 100, chunks * 3000,
		       chunks * 2000 + 3000);
	}
	printf("requests=%d\nstatus500=%llu\nrequest_duration_ns=%llu\nbytes=%llu\n", chunks * 100,
	       (unsigned long long)status500, (unsigned long long)req_dur, (unsigned long long)bytes);
	printf("waits=%d\nwait_duration_ns=%llu\nticks=%d\n", chunks * 10,
	       (unsigned long long)wait_dur, chunks);
	if (builtins) {
		/* sum over k of 4096 (1 + ... + 6) + 6 k, and the sizes 16 (1 + ... + 6) */
		unsigned long long n = (unsigned long long)chunks;
		printf("allocs=%llu\nalloc_weight=%llu\nalloc_size=%llu\nlockwaits=%llu\nsleeps=%llu\n",
		       6 * n, 4096 * 21 * n + 6 * (n * (n - 1) / 2), 16 * 21 * n, 6 * n, 4 * n);
		/* CPU: sum over k and j of (10 ms + k) (1 + j % 3) = 12 (10 ms n + n (n - 1) / 2) */
		printf("cpu_samples=%llu\ncpu_ns=%llu\n", 6 * n, 12 * (10 * MS * n + n * (n - 1) / 2));
		printf("dropped=%llu\n", 14 * n + n * (n - 1) / 2);
	}
	return 0;
}
