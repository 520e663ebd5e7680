/* SPDX-License-Identifier: MIT */
/*
 * rec_test_flame_gen - deterministic recordings for tests/cli/flame.sh and
 * tests/cli/flame_browser.sh, written with the writer API.
 *
 *   rec_test_flame_gen DIR    writes DIR/before.rec and DIR/after.rec
 *
 * Both have two threads (main tid 100, worker-1 tid 101), the built-in types
 * rec.CPUSample, rec.Alloc, rec.LockWait, rec.Sleep (as spec/EVENTS.md
 * declares them), a program type app.Query (D T S; fields rows u64, cpu
 * duration, label string) and app.Tick (T, no stack).  Events are 40 ms
 * apart from the recording start, in small chunks (several per file).
 * Frames include a name with ';', one with a newline, one without a function
 * (libapp.so+0x1234) and a truncated stack.
 *
 * before.rec, rec.CPUSample per stack (leaf last), 100 samples in all:
 *   main;run_loop;handle_request;compute_hash    main 30, worker-1 10
 *   main;run_loop;handle_request;parse_json      main 20
 *   main;run_loop;__poll                         worker-1 25
 *   main;odd;name                                main 5
 *   main;libapp.so+0x1234;line\nbreak            worker-1 5
 *   [truncated];handle_request;compute_hash      main 5
 * after.rec: compute_hash main 80, parse_json main 10, __poll worker-1 15,
 *   main;run_loop;handle_request;parse_json;compute_hash main 15 (new),
 *   main;render</script><b>x main 5 (new: a name to escape in HTML),
 *   the ';', newline and truncated stacks gone: 125 samples.
 *   Both: rec.Alloc, rec.LockWait, rec.Sleep and app.Query events as listed
 *   in events_*() below.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/rec.h"

static void check(rec_status st, const char *what)
{
	if (st != REC_OK) {
		fprintf(stderr, "rec_test_flame_gen: %s: %s\n", what, rec_strerror(st));
		exit(1);
	}
}

enum { T_ALLOC = 19, T_LOCKWAIT = 16, T_SLEEP = 18, T_CPU = 21, T_QUERY = 300, T_TICK = 301 };
enum { TH_MAIN = 1, TH_WORKER = 2 };
enum {
	F_MAIN = 1, F_RUN, F_HANDLE, F_PARSE, F_HASH, F_SEMI, F_NL, F_NOFUNC, F_POLL, F_SCRIPT, F_RECLOCK
};
enum { ST_HASH = 1, ST_PARSE, ST_POLL, ST_SEMI, ST_NL, ST_TRUNC, ST_NESTED, ST_SCRIPT, ST_RECLOCK };

#define FLAGS_DTS (REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK)
#define FLAGS_TS (REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK)
#define MS 1000000ull

static const rec_field f_cpu[] = {
	{ "period", "Period", "", REC_TYPE_U64, REC_UNIT_NANOS },
	{ "overruns", "Overruns", "", REC_TYPE_U32, REC_UNIT_COUNT },
};
static const rec_field f_alloc[] = {
	{ "address", "Address", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "size", "Size", "", REC_TYPE_U64, REC_UNIT_BYTES },
	{ "weight", "Weight", "", REC_TYPE_U64, REC_UNIT_BYTES },
	{ "sampled", "Sampled", "", REC_TYPE_BOOL, REC_UNIT_NONE },
};
static const rec_field f_lock[] = {
	{ "lockAddress", "Lock Address", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "lockName", "Lock Name", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "holderOsThreadId", "Holder", "", REC_TYPE_U64, REC_UNIT_NONE },
	{ "lockKind", "Lock Kind", "", REC_TYPE_U8, REC_UNIT_NONE },
};
static const rec_field f_sleep[] = {
	{ "kind", "Kind", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "requested", "Requested", "", REC_TYPE_U64, REC_UNIT_NANOS },
	{ "objectAddress", "Object", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
};
static const rec_field f_query[] = {
	{ "rows", "Rows", "", REC_TYPE_U64, REC_UNIT_COUNT },
	{ "cpu", "CPU Time", "", REC_TYPE_DURATION, REC_UNIT_NONE },
	{ "label", "Label", "", REC_TYPE_STRING, REC_UNIT_NONE },
};
static const rec_field f_tick[] = {
	{ "n", "N", "", REC_TYPE_U64, REC_UNIT_COUNT },
};

typedef struct gen {
	rec_writer *w;
	uint64_t t0;   /* ticks of the recording start */
	uint64_t next; /* index of the next event (40 ms apart) */
	uint64_t str;  /* next string id */
} gen;

static uint64_t str(gen *g, const char *s)
{
	uint64_t id = ++g->str;
	check(rec_writer_define_string(g->w, id, s, strlen(s)), "define_string");
	return id;
}

static void add_type(gen *g, uint32_t id, uint32_t flags, const char *name, const char *cat,
		     const rec_field *f, uint32_t n)
{
	rec_type t = { id, flags, name, name, "", cat, n, f };
	check(rec_writer_add_type(g->w, &t), "add_type");
}

static uint64_t tick(gen *g)
{
	return g->t0 + 40 * MS * g->next++;
}

static void pools(gen *g)
{
	check(rec_writer_define_thread(g->w, TH_MAIN, 100, str(g, "main")), "thread");
	check(rec_writer_define_thread(g->w, TH_WORKER, 101, str(g, "worker-1")), "thread");
	uint64_t mod = 1, libc = 2;
	check(rec_writer_define_module(g->w, mod, str(g, "/opt/app/lib/libapp.so"), 0, 0x400000),
	      "module");
	check(rec_writer_define_module(g->w, libc, str(g, "/lib/x86_64-linux-gnu/libc.so.6"), 0,
				       0x7f0000000000ull), "module");
	struct { uint64_t id; const char *fn; uint64_t mod, off; } fr[] = {
		{ F_MAIN, "main", mod, 0x100 }, { F_RUN, "run_loop", mod, 0x200 },
		{ F_HANDLE, "handle_request", mod, 0x300 }, { F_PARSE, "parse_json", mod, 0x400 },
		{ F_HASH, "compute_hash", mod, 0x500 }, { F_SEMI, "odd;name", mod, 0x600 },
		{ F_NL, "line\nbreak", mod, 0x700 }, { F_NOFUNC, NULL, mod, 0x1234 },
		{ F_POLL, "__poll", libc, 0x10ab0 }, { F_SCRIPT, "render</script><b>x", mod, 0x800 },
		{ F_RECLOCK, "rec_lock_wait_record_", mod, 0x900 },
	};
	for (size_t i = 0; i < sizeof fr / sizeof fr[0]; i++)
		check(rec_writer_define_frame(g->w, fr[i].id, fr[i].fn ? str(g, fr[i].fn) : 0,
					      fr[i].mod, fr[i].off, 0x10), "frame");
	/* leaf first */
	const uint64_t hash[] = { F_HASH, F_HANDLE, F_RUN, F_MAIN };
	const uint64_t parse[] = { F_PARSE, F_HANDLE, F_RUN, F_MAIN };
	const uint64_t poll[] = { F_POLL, F_RUN, F_MAIN };
	const uint64_t semi[] = { F_SEMI, F_MAIN };
	const uint64_t nl[] = { F_NL, F_NOFUNC, F_MAIN };
	const uint64_t trunc[] = { F_HASH, F_HANDLE };
	const uint64_t nested[] = { F_HASH, F_PARSE, F_HANDLE, F_RUN, F_MAIN };
	const uint64_t script[] = { F_SCRIPT, F_MAIN };
	const uint64_t reclock[] = { F_RECLOCK, F_PARSE, F_HANDLE, F_RUN, F_MAIN };
	check(rec_writer_define_stack(g->w, ST_HASH, 0, hash, 4), "stack");
	check(rec_writer_define_stack(g->w, ST_PARSE, 0, parse, 4), "stack");
	check(rec_writer_define_stack(g->w, ST_POLL, 0, poll, 3), "stack");
	check(rec_writer_define_stack(g->w, ST_SEMI, 0, semi, 2), "stack");
	check(rec_writer_define_stack(g->w, ST_NL, 0, nl, 3), "stack");
	check(rec_writer_define_stack(g->w, ST_TRUNC, REC_STACK_TRUNCATED, trunc, 2), "stack");
	check(rec_writer_define_stack(g->w, ST_NESTED, 0, nested, 5), "stack");
	check(rec_writer_define_stack(g->w, ST_SCRIPT, 0, script, 2), "stack");
	check(rec_writer_define_stack(g->w, ST_RECLOCK, 0, reclock, 5), "stack");
}

static void cpu(gen *g, uint64_t thread, uint64_t stack)
{
	check(rec_writer_begin(g->w, T_CPU, tick(g), 0, thread, stack), "begin");
	check(rec_writer_put_u64(g->w, 10 * MS), "period");
	check(rec_writer_put_u64(g->w, 0), "overruns");
	check(rec_writer_end(g->w), "end");
}

static void alloc(gen *g, uint64_t stack, uint64_t size)
{
	check(rec_writer_begin(g->w, T_ALLOC, tick(g), 0, TH_MAIN, stack), "begin");
	check(rec_writer_put_u64(g->w, 0x5000 + g->next), "address");
	check(rec_writer_put_u64(g->w, size), "size");
	check(rec_writer_put_u64(g->w, size), "weight");
	check(rec_writer_put_u64(g->w, 0), "sampled");
	check(rec_writer_end(g->w), "end");
}

static void lockwait(gen *g, uint64_t stack, uint64_t dur, uint64_t name)
{
	check(rec_writer_begin(g->w, T_LOCKWAIT, tick(g), dur, TH_WORKER, stack), "begin");
	check(rec_writer_put_u64(g->w, 0xabc0), "lockAddress");
	check(rec_writer_put_u64(g->w, name), "lockName");
	check(rec_writer_put_u64(g->w, 100), "holder");
	check(rec_writer_put_u64(g->w, 0), "lockKind");
	check(rec_writer_end(g->w), "end");
}

static void sleep_ev(gen *g, uint64_t stack, uint64_t dur, uint64_t kind)
{
	check(rec_writer_begin(g->w, T_SLEEP, tick(g), dur, TH_WORKER, stack), "begin");
	check(rec_writer_put_u64(g->w, kind), "kind");
	check(rec_writer_put_u64(g->w, dur), "requested");
	check(rec_writer_put_u64(g->w, 0), "object");
	check(rec_writer_end(g->w), "end");
}

static void query(gen *g, uint64_t stack, uint64_t rows, uint64_t cpu_ns, uint64_t label)
{
	check(rec_writer_begin(g->w, T_QUERY, tick(g), cpu_ns * 2, TH_MAIN, stack), "begin");
	check(rec_writer_put_u64(g->w, rows), "rows");
	check(rec_writer_put_u64(g->w, cpu_ns), "cpu");
	check(rec_writer_put_u64(g->w, label), "label");
	check(rec_writer_end(g->w), "end");
}

static void tick_ev(gen *g, uint64_t n)
{
	check(rec_writer_begin(g->w, T_TICK, tick(g), 0, TH_MAIN, 0), "begin");
	check(rec_writer_put_u64(g->w, n), "n");
	check(rec_writer_end(g->w), "end");
}

typedef struct sample { uint64_t thread, stack, count; } sample;

/* CPU samples interleaved deterministically: round-robin over the kinds
 * until each kind's count is used up. */
static void samples(gen *g, const sample *s, size_t n)
{
	uint64_t left[16];
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		left[i] = s[i].count;
		total += s[i].count;
	}
	for (size_t i = 0; total; i = (i + 1) % n) {
		if (!left[i])
			continue;
		cpu(g, s[i].thread, s[i].stack);
		left[i]--;
		total--;
	}
}

static void write_file(const char *path, bool after)
{
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.codec = REC_CODEC_ZSTD;
	o.chunk_events_size = 700; /* several chunks */
	o.run_id = after ? 0xf1a3e00000000002ull : 0xf1a3e00000000001ull;
	o.pid = after ? 4343 : 4242;
	o.process_start_ns = 1796206443000000000ll; /* 2026-12-02T10:14:03Z */
	o.tick_frequency = 1000000000u;
	o.anchor_wall_ns = 1796206443000000000ll + 500 * (int64_t)MS;
	o.anchor_ticks = 5000000000ull;
	gen g = { NULL, 5000000000ull, 0, 0 };
	check(rec_writer_open_path(&g.w, path, &o), "open");
	add_type(&g, T_LOCKWAIT, FLAGS_DTS, "rec.LockWait", "rec/Locks", f_lock, 4);
	add_type(&g, T_SLEEP, FLAGS_DTS, "rec.Sleep", "rec/Waits", f_sleep, 3);
	add_type(&g, T_ALLOC, FLAGS_TS, "rec.Alloc", "rec/Memory", f_alloc, 4);
	add_type(&g, T_CPU, FLAGS_TS, "rec.CPUSample", "rec/Profiling", f_cpu, 2);
	add_type(&g, T_QUERY, FLAGS_DTS, "app.Query", "app", f_query, 3);
	add_type(&g, T_TICK, REC_EVENT_HAS_THREAD, "app.Tick", "app", f_tick, 1);
	pools(&g);
	uint64_t s_mutex = str(&g, "global-mutex"), s_sleep = str(&g, "sleep"),
		 s_cond = str(&g, "cond"), s_q1 = str(&g, "select"), s_q2 = str(&g, "insert");
	if (!after) {
		const sample s[] = {
			{ TH_MAIN, ST_HASH, 30 }, { TH_WORKER, ST_HASH, 10 },
			{ TH_MAIN, ST_PARSE, 20 }, { TH_WORKER, ST_POLL, 25 },
			{ TH_MAIN, ST_SEMI, 5 }, { TH_WORKER, ST_NL, 5 },
			{ TH_MAIN, ST_TRUNC, 5 },
		};
		samples(&g, s, sizeof s / sizeof s[0]);
	} else {
		const sample s[] = {
			{ TH_MAIN, ST_HASH, 80 }, { TH_MAIN, ST_PARSE, 10 },
			{ TH_WORKER, ST_POLL, 15 }, { TH_MAIN, ST_NESTED, 15 },
			{ TH_MAIN, ST_SCRIPT, 5 },
		};
		samples(&g, s, sizeof s / sizeof s[0]);
	}
	/* allocations: 3 MiB under compute_hash, 1 MiB under parse_json */
	for (int i = 0; i < 3; i++)
		alloc(&g, ST_HASH, 1048576);
	for (int i = 0; i < 2; i++)
		alloc(&g, ST_PARSE, 524288);
	/* lock waits: 5 x 2 ms under parse_json (with librec's own leaf frame
	 * rec_lock_wait_record_, as the recorder's wrappers write them), 10 ms
	 * under __poll */
	for (int i = 0; i < 5; i++)
		lockwait(&g, ST_RECLOCK, 2 * MS, s_mutex);
	lockwait(&g, ST_POLL, 10 * MS, s_mutex);
	/* sleeps: 2 x 100 ms under __poll, one 7 ms cond wait under handle */
	sleep_ev(&g, ST_POLL, 100 * MS, s_sleep);
	sleep_ev(&g, ST_POLL, 100 * MS, s_sleep);
	sleep_ev(&g, ST_TRUNC, 7 * MS, s_cond);
	/* queries: rows 7 + 5 under compute_hash, 3 under parse_json */
	query(&g, ST_HASH, 7, 3 * MS, s_q1);
	query(&g, ST_HASH, 5, 1 * MS, s_q1);
	query(&g, ST_PARSE, 3, 2 * MS, s_q2);
	query(&g, 0, 1, 1 * MS, s_q2); /* no stack: skipped */
	tick_ev(&g, 1);
	check(rec_writer_close(g.w), "close");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: rec_test_flame_gen DIR\n");
		return 2;
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/before.rec", argv[1]);
	write_file(path, false);
	snprintf(path, sizeof path, "%s/after.rec", argv[1]);
	write_file(path, true);
	return 0;
}
