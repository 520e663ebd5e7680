/* SPDX-License-Identifier: MIT */
/*
 * gen_testdata - write the deterministic golden recordings of testdata/ with
 * the public writer API: fixed run ids, pids, process start times, clock
 * anchors and tick values, so every run produces the same bytes.
 *
 * Usage: gen_testdata OUTDIR
 *   writes OUTDIR/valid/{tiny,zstd,lz4,two-runs}.rec and
 *          OUTDIR/invalid/{truncated-tail,corrupt-middle,bad-magic,
 *                          future-major,absurd-size,stats-mismatch}.rec
 *   as format 1.0 (the writer writes 1.1; these keep testing 1.0 input, so
 *   each chunk is turned into 1.0: tests/lib/v10.h), and as format 1.1
 *   valid/{tiny-1.1,zstd-1.1}.rec, invalid/{front-1.1,events-1.1}.rec and
 *   valid/newer-minor.rec (1.4: one minor newer than the writer's),
 *   valid/frames-1.2.rec (1.2, frame sources) and valid/split-1.3.rec
 *   (1.3, split EVENTS; every other file is written in one stream)
 *   and next to each NAME.rec a NAME.facts file: what the generator wrote
 *   (events per type, chunks and their offsets, runs, dropped events, the
 *   first and last event time) for the CLI tests to check the tools'
 *   output against, independently of the tools.
 *
 * The damaged files are made from good recordings by editing bytes; the two
 * that need a valid header checksum over edited fields (future-major,
 * absurd-size) recompute it with the library's internal CRC32C.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/common_internal.h"
#include "rec/rec.h"
#include "../lib/membuf.h"
#include "../lib/v10.h"

#define ANCHOR_WALL 1796206443123456789ll /* 2026-12-02T10:14:03.123456789Z */
#define ANCHOR_TICKS 1000000000000ull
#define PROCESS_START 1796206438500000000ll /* 4.623456789 s earlier */

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...);
static void die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "gen_testdata: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void check(rec_status st, const char *what)
{
	if (st != REC_OK)
		die("%s: %s", what, rec_strerror(st));
}

/* ---- memory sink: keeps the bytes and where each chunk starts ------------- */

static void mem_append(membuf *dst, const membuf *src)
{
	if (mem_write(dst, src->p, src->len) != 0)
		die("out of memory");
}

/* ---- one run being generated, with what it wrote ------------------------------ */

#define MAX_TYPES 16
#define MAX_CHUNKS 64

typedef struct run {
	rec_writer *w;
	membuf out;
	uint64_t run_id;
	uint32_t pid;
	uint64_t freq;
	uint32_t type_ids[MAX_TYPES];
	const char *type_names[MAX_TYPES];
	uint32_t type_flags[MAX_TYPES];
	uint64_t type_counts[MAX_TYPES];
	uint64_t type_bytes[MAX_TYPES]; /* encoded record bytes, computed here from the spec */
	const rec_field *type_fields[MAX_TYPES];
	size_t ntypes;
	/* events of the chunk being filled: type, ticks and record body size
	 * without Time_Delta (known only when the chunk's records are ordered) */
	struct pend { size_t ti; uint64_t ticks; uint64_t body; uint32_t field; } *pend;
	size_t npend, pend_cap;
	uint64_t events, dropped;
	bool any;
	uint64_t first_ticks, last_ticks; /* min start, max start + duration */
	size_t chunk_offsets[MAX_CHUNKS];
	uint64_t chunk_events[MAX_CHUNKS];
	size_t nchunks;
	uint64_t pending; /* events since the last chunk */
	bool closed;      /* FINAL written */
	bool v11;         /* keep the writer's format 1.1; else made 1.0 at close */
	bool v12;         /* with v11: keep the writer's 1.2 (frame sources); else made 1.1 */
	bool v13;         /* with v12: keep the writer's 1.3 (split EVENTS); else made 1.2 */
} run;

/* Written in one stream (1.0-1.2), unless run_open_split(). */
static uint32_t open_layout = REC_EVENTS_ONE_STREAM;

static void run_open(run *r, unsigned codec, uint64_t run_id, uint32_t pid, uint64_t freq)
{
	memset(r, 0, sizeof *r);
	r->run_id = run_id;
	r->pid = pid;
	r->freq = freq;
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.codec = codec;
	o.level = codec == REC_CODEC_ZSTD ? 3 : 0;
	o.chunk_events_size = 64u << 20; /* chunks end where the generator flushes */
	o.run_id = run_id;
	o.pid = pid;
	o.process_start_ns = PROCESS_START;
	o.tick_frequency = freq;
	o.anchor_wall_ns = ANCHOR_WALL;
	o.anchor_ticks = ANCHOR_TICKS;
	o.events_layout = open_layout;
	rec_sink sink = { mem_write, NULL, &r->out };
	check(rec_writer_open(&r->w, &sink, &o), "rec_writer_open");
}

static void add_type(run *r, uint32_t id, uint32_t flags, const char *name, const char *label,
		     const char *descr, const char *category, const rec_field *fields, uint32_t n)
{
	rec_type t = { id, flags, name, label, descr, category, n, fields };
	check(rec_writer_add_type(r->w, &t), name);
	if (r->ntypes == MAX_TYPES)
		die("too many types");
	r->type_ids[r->ntypes] = id;
	r->type_names[r->ntypes] = name;
	r->type_flags[r->ntypes] = flags;
	r->type_fields[r->ntypes] = fields;
	r->ntypes++;
}

static size_t type_index(const run *r, uint32_t id)
{
	for (size_t i = 0; i < r->ntypes; i++)
		if (r->type_ids[i] == id)
			return i;
	die("unknown type id %u", id);
	return 0;
}

/* Encoded sizes, written from the spec (not the library's encoder), so the
 * per-type byte counts in the facts are an independent check of STATS. */
static uint64_t vlen(uint64_t v)
{
	uint64_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}
static uint64_t zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

static struct pend *cur_field(run *r)
{
	if (!r->npend)
		die("field outside an event");
	return &r->pend[r->npend - 1];
}

static rec_status put_u(run *r, uint64_t v)
{
	cur_field(r)->body += vlen(v);
	cur_field(r)->field++;
	return rec_writer_put_u64(r->w, v);
}

static rec_status put_i(run *r, int64_t v)
{
	cur_field(r)->body += vlen(zz(v));
	cur_field(r)->field++;
	return rec_writer_put_i64(r->w, v);
}

static rec_status put_f(run *r, double v)
{
	struct pend *pe = cur_field(r);
	pe->body += r->type_fields[pe->ti][pe->field].type == REC_TYPE_F32 ? 4 : 8;
	pe->field++;
	return rec_writer_put_f64(r->w, v);
}

static rec_status put_b(run *r, const void *p, size_t len)
{
	cur_field(r)->body += vlen(len) + len;
	cur_field(r)->field++;
	return rec_writer_put_bytes(r->w, p, len);
}

/* begin an event and account for it */
static void ev_begin(run *r, uint32_t type, uint64_t ticks, uint64_t dur, uint64_t thread,
		     uint64_t stack)
{
	size_t ti = type_index(r, type);
	if (!(r->type_flags[ti] & REC_EVENT_HAS_DURATION))
		dur = 0;
	check(rec_writer_begin(r->w, type, ticks, dur, thread, stack), "rec_writer_begin");
	if (r->npend == r->pend_cap) {
		r->pend_cap = r->pend_cap ? 2 * r->pend_cap : 64;
		r->pend = realloc(r->pend, r->pend_cap * sizeof *r->pend);
		if (!r->pend)
			die("out of memory");
	}
	uint32_t fl = r->type_flags[ti];
	uint64_t body = vlen(type);
	if (fl & REC_EVENT_HAS_DURATION)
		body += vlen(dur);
	if (fl & REC_EVENT_HAS_THREAD)
		body += vlen(thread);
	if (fl & REC_EVENT_HAS_STACK)
		body += vlen(stack);
	r->pend[r->npend++] = (struct pend){ ti, ticks, body, 0 };
	r->type_counts[ti]++;
	r->events++;
	r->pending++;
	if (!r->any || ticks < r->first_ticks)
		r->first_ticks = ticks;
	if (!r->any || ticks + dur > r->last_ticks)
		r->last_ticks = ticks + dur;
	r->any = true;
}

static void ev_end(run *r) { check(rec_writer_end(r->w), "rec_writer_end"); }

static void note_chunk(run *r, size_t before)
{
	if (r->out.len == before)
		return;
	if (r->nchunks == MAX_CHUNKS)
		die("too many chunks");
	/* Start_Ticks is the chunk's smallest event tick (what the 1.0 writer
	 * does; the spec lets a writer choose, so this is checked, not assumed:
	 * a different choice changes only the first record's size) */
	uint64_t start = UINT64_MAX, prev = 0;
	for (size_t i = 0; i < r->npend; i++)
		if (r->pend[i].ticks < start)
			start = r->pend[i].ticks;
	prev = start;
	for (size_t i = 0; i < r->npend; i++) {
		uint64_t body = r->pend[i].body + vlen(zz((int64_t)(r->pend[i].ticks - prev)));
		r->type_bytes[r->pend[i].ti] += vlen(body) + body;
		prev = r->pend[i].ticks;
	}
	r->npend = 0;
	r->chunk_offsets[r->nchunks] = before;
	r->chunk_events[r->nchunks] = r->pending;
	r->nchunks++;
	r->pending = 0;
}

static void run_flush(run *r)
{
	size_t before = r->out.len;
	check(rec_writer_flush(r->w), "rec_writer_flush");
	note_chunk(r, before);
}

static void run_close(run *r)
{
	size_t before = r->out.len;
	check(rec_writer_close(r->w), "rec_writer_close");
	r->w = NULL;
	note_chunk(r, before);
	if (!r->v11 && rec_t_to_v10(r->out.p, r->out.len) != r->nchunks)
		die("not every chunk became 1.0");
	if (r->v11 && !r->v12 && rec_t_to_v11(r->out.p, r->out.len) != r->nchunks)
		die("not every chunk became 1.1");
	if (r->v12 && !r->v13 && rec_t_to_v12(r->out.p, r->out.len) != r->nchunks)
		die("not every chunk became 1.2");
	r->closed = true;
	free(r->pend);
	r->pend = NULL;
}

static void run_abandon(run *r)
{
	run_flush(r);
	rec_writer_abandon(r->w);
	r->w = NULL;
	if (!r->v11 && rec_t_to_v10(r->out.p, r->out.len) != r->nchunks)
		die("not every chunk became 1.0");
	if (r->v11 && !r->v12 && rec_t_to_v11(r->out.p, r->out.len) != r->nchunks)
		die("not every chunk became 1.1");
	if (r->v12 && !r->v13 && rec_t_to_v12(r->out.p, r->out.len) != r->nchunks)
		die("not every chunk became 1.2");
	free(r->pend);
	r->pend = NULL;
}

static void dropped(run *r, uint64_t n)
{
	rec_writer_note_dropped(r->w, n);
	r->dropped += n;
}

/* wall ns of absolute ticks, the way the format defines it */
static int64_t wall_of(const run *r, uint64_t ticks)
{
	int64_t d = (int64_t)(ticks - ANCHOR_TICKS);
	__int128 ns = (__int128)d * 1000000000 / (__int128)r->freq;
	return ANCHOR_WALL + (int64_t)ns;
}

/* ---- facts ----------------------------------------------------------------------- */

static FILE *facts_open(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s.facts", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		die("%s: %s", path, strerror(errno));
	fprintf(f, "# what gen_testdata wrote into %s.rec (checked by tests/cli/facts.sh)\n", name);
	return f;
}

static void facts_close(FILE *f)
{
	if (ferror(f) || fclose(f) != 0)
		die("writing facts failed");
}

/* Facts of the good part of a file made of these runs in this order. */
static void facts_runs(FILE *f, run *const *runs, size_t n, size_t base_offset)
{
	uint64_t events = 0, dropped_n = 0, chunks = 0;
	bool any = false;
	int64_t first = 0, last = 0;
	size_t off = base_offset;
	for (size_t i = 0; i < n; i++) {
		const run *r = runs[i];
		events += r->events;
		dropped_n += r->dropped;
		chunks += r->nchunks;
		if (r->any) {
			int64_t a = wall_of(r, r->first_ticks), b = wall_of(r, r->last_ticks);
			if (!any || a < first)
				first = a;
			if (!any || b > last)
				last = b;
			any = true;
		}
		fprintf(f, "run %016" PRIx64 " pid %u chunks %zu events %" PRIu64 " dropped %" PRIu64
			   " ended %s\n",
			r->run_id, r->pid, r->nchunks, r->events, r->dropped,
			r->closed ? "clean-close" : "no-final-chunk");
		for (size_t c = 0; c < r->nchunks; c++)
			fprintf(f, "chunk offset %zu events %" PRIu64 "\n", off + r->chunk_offsets[c],
				r->chunk_events[c]);
		off += r->out.len;
	}
	fprintf(f, "events %" PRIu64 "\n", events);
	fprintf(f, "chunks %" PRIu64 "\n", chunks);
	fprintf(f, "dropped %" PRIu64 "\n", dropped_n);
	fprintf(f, "runs %zu\n", n);
	if (any) {
		fprintf(f, "first_wall_ns %" PRId64 "\n", first);
		fprintf(f, "last_wall_ns %" PRId64 "\n", last);
	}
	/* per type, summed over runs by name */
	const char *names[64];
	uint64_t counts[64], bytes[64];
	size_t nn = 0;
	for (size_t i = 0; i < n; i++) {
		for (size_t t = 0; t < runs[i]->ntypes; t++) {
			size_t k;
			for (k = 0; k < nn; k++)
				if (strcmp(names[k], runs[i]->type_names[t]) == 0)
					break;
			if (k == nn) {
				if (nn == 64)
					die("too many types");
				names[nn] = runs[i]->type_names[t];
				bytes[nn] = 0;
				counts[nn++] = 0;
			}
			counts[k] += runs[i]->type_counts[t];
			bytes[k] += runs[i]->type_bytes[t];
		}
	}
	for (size_t k = 0; k < nn; k++)
		fprintf(f, "type %s %" PRIu64 " bytes %" PRIu64 "\n", names[k], counts[k], bytes[k]);
}

static void write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s.rec", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		die("%s: %s", path, strerror(errno));
	if (len && fwrite(data, 1, len, f) != len)
		die("%s: write failed", path);
	if (fclose(f) != 0)
		die("%s: close failed", path);
}

/* ---- the content ---------------------------------------------------------------- */

enum {
	T_LOCKWAIT = 1,
	T_HEAP = 2,
	T_ALL = 3,
	T_CPU = 4,
	T_LOG = 5,
	T_UNUSED = 6,
};

static const rec_field f_lockwait[] = {
	{ "lock", "Lock", "", REC_TYPE_STRING, REC_UNIT_NONE },
};
static const rec_field f_heap[] = {
	{ "used", "Used", "", REC_TYPE_U64, REC_UNIT_BYTES },
};
static const rec_field f_all[] = {
	{ "flag", "Flag", "a bool", REC_TYPE_BOOL, REC_UNIT_NONE },
	{ "u8v", "U8", "", REC_TYPE_U8, REC_UNIT_NONE },
	{ "u16v", "U16", "", REC_TYPE_U16, REC_UNIT_NONE },
	{ "u32v", "U32", "", REC_TYPE_U32, REC_UNIT_COUNT },
	{ "u64v", "U64", "", REC_TYPE_U64, REC_UNIT_NONE },
	{ "i8v", "I8", "", REC_TYPE_I8, REC_UNIT_NONE },
	{ "i16v", "I16", "", REC_TYPE_I16, REC_UNIT_NONE },
	{ "i32v", "I32", "", REC_TYPE_I32, REC_UNIT_NONE },
	{ "i64v", "I64", "", REC_TYPE_I64, REC_UNIT_NONE },
	{ "f32v", "F32", "", REC_TYPE_F32, REC_UNIT_NONE },
	{ "f64v", "F64", "", REC_TYPE_F64, REC_UNIT_NONE },
	{ "name", "Name", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "when", "When", "", REC_TYPE_TIMESTAMP, REC_UNIT_NONE },
	{ "wait", "Wait", "", REC_TYPE_DURATION, REC_UNIT_NONE },
	{ "other", "Other Thread", "", REC_TYPE_THREAD, REC_UNIT_NONE },
	{ "where", "Where", "", REC_TYPE_STACK, REC_UNIT_NONE },
	{ "payload", "Payload", "", REC_TYPE_BLOB, REC_UNIT_NONE },
	{ "message", "Message", "", REC_TYPE_TEXT, REC_UNIT_NONE },
	{ "size", "Size", "", REC_TYPE_U64, REC_UNIT_BYTES },
	{ "ratio", "Ratio", "", REC_TYPE_F64, REC_UNIT_PERCENT },
	{ "addr", "Address", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "elapsed", "Elapsed", "", REC_TYPE_I64, REC_UNIT_NANOS },
	{ "wallclock", "Wall Clock", "", REC_TYPE_I64, REC_UNIT_EPOCH_NS },
	{ "rate", "Rate", "", REC_TYPE_U32, REC_UNIT_HZ },
};
static const rec_field f_cpu[] = {
	{ "state", "State", "", REC_TYPE_STRING, REC_UNIT_NONE },
};
static const rec_field f_log[] = {
	{ "level", "Level", "", REC_TYPE_U8, REC_UNIT_NONE },
	{ "message", "Message", "", REC_TYPE_TEXT, REC_UNIT_NONE },
};
static const rec_field f_unused[] = {
	{ "value", "Value", "", REC_TYPE_I32, REC_UNIT_NONE },
};

#define FLAGS_DTS (REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK)

/* Strings, threads, modules, frames and stacks shared by most files. */
enum {
	S_MUTEX = 1, S_WORKER, S_HANDLE, S_MODULE, S_MAIN, S_POOLMTX, S_MAINTHREAD, S_READ,
	S_PARSE, S_LIBC, S_POLL, S_DISPATCH, S_RUN, S_START, S_WEIRD, S_RUNNING, S_BLOCKED,
	S_BUILDID,
};

static void def_string(run *r, uint64_t id, const char *s)
{
	check(rec_writer_define_string(r->w, id, s, strlen(s)), "define_string");
}

static void pools_tiny(run *r)
{
	def_string(r, S_MUTEX, "global-mutex");
	def_string(r, S_WORKER, "worker-1");
	def_string(r, S_HANDLE, "handle_blocking");
	def_string(r, S_MODULE, "/usr/bin/requestwatch");
	def_string(r, S_MAIN, "main");
	check(rec_writer_define_thread(r->w, 1, 4242, S_WORKER), "define_thread");
	check(rec_writer_define_module(r->w, 1, S_MODULE, 0, 0x400000), "define_module");
	check(rec_writer_define_frame(r->w, 1, S_HANDLE, 1, 0x1234, 0x1a), "define_frame");
	check(rec_writer_define_frame(r->w, 2, S_MAIN, 1, 0x0f00, 0x40), "define_frame");
	uint64_t st[] = { 1, 2 };
	check(rec_writer_define_stack(r->w, 1, 0, st, 2), "define_stack");
}

static void pools_full(run *r)
{
	pools_tiny(r);
	def_string(r, S_POOLMTX, "pool-mutex");
	def_string(r, S_MAINTHREAD, "main");
	def_string(r, S_READ, "read_request");
	def_string(r, S_PARSE, "parse_header");
	def_string(r, S_LIBC, "/lib/x86_64-linux-gnu/libc.so.6");
	def_string(r, S_POLL, "__poll");
	def_string(r, S_DISPATCH, "dispatch");
	def_string(r, S_RUN, "run_loop");
	def_string(r, S_START, "__libc_start_main");
	def_string(r, S_WEIRD, "quote\" back\\slash\nnewline\ttab\x01" "ctl caf\xc3\xa9 bad\xff end");
	def_string(r, S_RUNNING, "running");
	def_string(r, S_BLOCKED, "blocked");
	def_string(r, S_BUILDID, "3f2a9c0d5b7e61aa");
	check(rec_writer_define_thread(r->w, 2, 4240, S_MAINTHREAD), "define_thread");
	check(rec_writer_define_module(r->w, 2, S_LIBC, S_BUILDID, 0x7f0000000000ull), "define_module");
	check(rec_writer_define_frame(r->w, 3, S_READ, 1, 0x2000, 0x8), "define_frame");
	check(rec_writer_define_frame(r->w, 4, S_PARSE, 1, 0x2100, 0x33), "define_frame");
	check(rec_writer_define_frame(r->w, 5, S_POLL, 2, 0x10ab0, 0x10), "define_frame");
	check(rec_writer_define_frame(r->w, 6, S_DISPATCH, 1, 0x3000, 0x5c), "define_frame");
	check(rec_writer_define_frame(r->w, 7, S_RUN, 1, 0x3400, 0x21), "define_frame");
	check(rec_writer_define_frame(r->w, 8, S_START, 2, 0x29d90, 0x80), "define_frame");
	check(rec_writer_define_frame(r->w, 9, 0, 1, 0x4444, 0), "define_frame"); /* no symbol */
	/* stack 2: 7 frames (cut at the default depth 5) */
	uint64_t deep[] = { 4, 3, 1, 6, 7, 2, 8 };
	check(rec_writer_define_stack(r->w, 2, 0, deep, 7), "define_stack");
	/* stack 3: 3 frames, flagged truncated by the recorder */
	uint64_t trunc[] = { 5, 9, 6 };
	check(rec_writer_define_stack(r->w, 3, REC_STACK_TRUNCATED, trunc, 3), "define_stack");
}

static void types_tiny(run *r)
{
	add_type(r, T_LOCKWAIT, FLAGS_DTS, "rec.LockWait", "Lock Wait", "", "rec/Locks", f_lockwait, 1);
	add_type(r, T_HEAP, 0, "rec.HeapUsage", "Heap Usage", "", "rec/Memory", f_heap, 1);
}

static void types_full(run *r)
{
	add_type(r, T_LOCKWAIT, FLAGS_DTS, "rec.LockWait", "Lock Wait",
		 "A thread waited for a mutex", "rec/Locks", f_lockwait, 1);
	add_type(r, T_HEAP, 0, "rec.HeapUsage", "Heap Usage", "Bytes in use", "rec/Memory", f_heap, 1);
	add_type(r, T_ALL, FLAGS_DTS, "test.AllTypes", "All Types", "One field of every type",
		 "test/Types", f_all, (uint32_t)(sizeof f_all / sizeof f_all[0]));
	add_type(r, T_CPU, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "rec.CpuSample", "CPU Sample",
		 "", "rec/Profiling", f_cpu, 1);
	add_type(r, T_LOG, REC_EVENT_HAS_THREAD, "app.Log", "Log", "", "app/Log", f_log, 2);
	add_type(r, T_UNUSED, 0, "app.Unused", "Unused", "declared, never emitted", "app/Misc", f_unused, 1);
}

static void lockwait(run *r, uint64_t t, uint64_t dur, uint64_t thread, uint64_t stack, uint64_t lock)
{
	ev_begin(r, T_LOCKWAIT, t, dur, thread, stack);
	check(put_u(r, lock), "put lock");
	ev_end(r);
}

static void heap(run *r, uint64_t t, uint64_t used)
{
	ev_begin(r, T_HEAP, t, 0, 0, 0);
	check(put_u(r, used), "put used");
	ev_end(r);
}

static void cpu(run *r, uint64_t t, uint64_t thread, uint64_t stack, uint64_t state)
{
	ev_begin(r, T_CPU, t, 0, thread, stack);
	check(put_u(r, state), "put state");
	ev_end(r);
}

static void logmsg(run *r, uint64_t t, uint64_t thread, unsigned level, const char *msg)
{
	ev_begin(r, T_LOG, t, 0, thread, 0);
	check(put_u(r, level), "put level");
	check(put_b(r, msg, strlen(msg)), "put message");
	ev_end(r);
}

static void alltypes(run *r, uint64_t t, unsigned k, uint64_t tick_per_us)
{
	static const uint8_t blob[] = { 0xde, 0xad, 0xbe, 0xef, 0x00, 0x01, 0x7f, 0x80 };
	ev_begin(r, T_ALL, t, (k + 1) * 250 * tick_per_us, 1 + (k & 1), k % 3 ? 2 : 3);
	check(put_u(r, k & 1), "bool");
	check(put_u(r, 200 + k), "u8");
	check(put_u(r, 65000 + k), "u16");
	check(put_u(r, 4000000000u + k), "u32");
	check(put_u(r, k == 0 ? UINT64_MAX : 9007199254740993ull + k), "u64");
	check(put_i(r, -100 - (int64_t)k), "i8");
	check(put_i(r, -32000 + (int64_t)k), "i16");
	check(put_i(r, k == 0 ? INT32_MIN : -7 * (int64_t)k), "i32");
	check(put_i(r, k == 0 ? INT64_MIN : (int64_t)k * 1000000007ll), "i64");
	check(put_f(r, 0.1 * (k + 1)), "f32");
	check(put_f(r, k == 1 ? -0.0 : 3.141592653589793 / (k + 1)), "f64");
	check(put_u(r, k == 2 ? 0 : (k & 1 ? S_WEIRD : S_POOLMTX)), "string");
	check(put_u(r, t - 1000 * tick_per_us), "timestamp");
	check(put_u(r, 1502 * tick_per_us + k), "duration");
	check(put_u(r, k == 2 ? 0 : 2), "thread");
	check(put_u(r, k == 2 ? 0 : 1), "stack");
	check(put_b(r, blob, k == 2 ? 0 : sizeof blob), "blob");
	const char *msg = k & 1 ? "tab\there \"quoted\"" : "plain text";
	check(put_b(r, msg, strlen(msg)), "text");
	check(put_u(r, (6ull << 20) + k * 512), "size");
	check(put_f(r, 0.25 * (k + 1)), "ratio");
	check(put_u(r, 0x7f00deadbeefull + k), "addr");
	check(put_i(r, k == 1 ? -850 : 1502000 * (int64_t)(k + 1)), "elapsed");
	check(put_i(r, ANCHOR_WALL + (int64_t)k * 1000000000ll), "wallclock");
	check(put_u(r, 100 * (k + 1)), "rate");
	ev_end(r);
}

/* A deterministic mix of events from tick t0 for n steps; us = ticks per µs. */
static void mix(run *r, uint64_t t0, unsigned n, uint64_t us, unsigned salt)
{
	uint32_t x = 0x12345678u ^ salt;
	for (unsigned i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		uint64_t t = t0 + (uint64_t)i * 700 * us + (x >> 16) % 300 * us;
		switch ((x >> 8) % 5) {
		case 0:
			/* committed at its end: its start is before earlier records */
			lockwait(r, t - 900 * us, (1 + x % 2000) * us, 1 + (i & 1), 1 + (i % 3),
				 (i & 1) ? S_POOLMTX : S_MUTEX);
			break;
		case 1: heap(r, t, (uint64_t)(x % 10000) * 4096 + 512); break;
		case 2: cpu(r, t, 1 + (i & 1), 1 + (x % 3), (x & 4) ? S_RUNNING : S_BLOCKED); break;
		case 3: logmsg(r, t, 2, x % 6, (x & 1) ? "request done" : "slow request: 1.5 s"); break;
		default: alltypes(r, t, i % 4, us); break;
		}
	}
}

/* NAME.rec and its facts from the closed run r. */
static void write_run(const char *dir, const char *name, run *r)
{
	write_file(dir, name, r->out.p, r->out.len);
	FILE *f = facts_open(dir, name);
	run *rs[] = { r };
	facts_runs(f, rs, 1, 0);
	facts_close(f);
	free(r->out.p);
}

static void gen_tiny(const char *dir, const char *name, bool v11)
{
	run r;
	run_open(&r, REC_CODEC_NONE, 0x5eed0000c0ffee01ull, 4242, 1000000000ull);
	r.v11 = v11;
	types_tiny(&r);
	pools_tiny(&r);
	uint64_t t = ANCHOR_TICKS;
	heap(&r, t, 6ull << 20);
	lockwait(&r, t + 100000, 1502000, 1, 1, S_MUTEX);
	lockwait(&r, t + 2000000, 850, 1, 1, S_MUTEX);
	heap(&r, t + 3000000, 512);
	run_close(&r);
	write_run(dir, name, &r);
}

/* frames-1.2: format 1.2's frame sources (FRAME_SOURCE): a frame with its
 * file, line and one inlined function, a frame with file and line, and a
 * frame recorded unsymbolized (symbolize=off: module with a build-id and
 * offset only, an exact pc). */
enum { S_FILE_RW = 100, S_FILE_PROTO, S_PARSE_LEN, S_BID2, S_LIBX };
static void gen_frames(const char *dir, const char *name)
{
	run r;
	run_open(&r, REC_CODEC_NONE, 0x5eed0000c0ffee12ull, 4343, 1000000000ull);
	r.v11 = r.v12 = true;
	types_tiny(&r);
	pools_tiny(&r);
	def_string(&r, S_FILE_RW, "/src/requestwatch.c");
	def_string(&r, S_FILE_PROTO, "/src/proto.h");
	def_string(&r, S_PARSE_LEN, "parse_len");
	def_string(&r, S_BID2, "5d0e11aa");
	def_string(&r, S_LIBX, "/usr/lib/libx.so.1");
	rec_frame_inline in1[] = { { S_PARSE_LEN, S_FILE_PROTO, 31 } };
	check(rec_writer_define_frame_source(r.w, 1, 0, S_FILE_RW, 214, in1, 1), "define_frame_source");
	check(rec_writer_define_frame_source(r.w, 2, 0, S_FILE_RW, 88, NULL, 0), "define_frame_source");
	check(rec_writer_define_module(r.w, 3, S_LIBX, S_BID2, 0x7f1000000000ull), "define_module");
	check(rec_writer_define_frame(r.w, 3, 0, 3, 0x1c40, 0), "define_frame");
	check(rec_writer_define_frame_source(r.w, 3, REC_FRAME_PC_EXACT | REC_FRAME_UNSYMBOLIZED, 0, 0,
					     NULL, 0), "define_frame_source");
	uint64_t st2[] = { 3, 1, 2 };
	check(rec_writer_define_stack(r.w, 2, 0, st2, 3), "define_stack");
	uint64_t t = ANCHOR_TICKS;
	lockwait(&r, t + 100000, 1502000, 1, 1, S_MUTEX);
	lockwait(&r, t + 2000000, 850, 1, 2, S_MUTEX);
	run_close(&r);
	write_run(dir, name, &r);
}

/* The full types in three chunks: every field type at least once in the
 * first, then n[k] mixed events from at_us[k] (salt k + first_salt) in
 * chunk k, drops noted in the second; closed. */
static void three_chunks(run *r, const unsigned n[3], const uint64_t at_us[3], unsigned first_salt,
			 uint64_t drops)
{
	types_full(r);
	pools_full(r);
	uint64_t us = 1000;
	for (unsigned k = 0; k < 4; k++)
		alltypes(r, ANCHOR_TICKS + k * 100 * us, k, us);
	for (unsigned c = 0; c < 3; c++) {
		mix(r, ANCHOR_TICKS + at_us[c] * us, n[c], us, first_salt + c);
		if (c == 1)
			dropped(r, drops);
		if (c < 2)
			run_flush(r);
	}
	run_close(r);
}

static void gen_zstd(const char *dir, const char *name, bool v11)
{
	run r;
	run_open(&r, REC_CODEC_ZSTD, 0x5eed0000c0ffee02ull, 5151, 1000000000ull);
	r.v11 = v11;
	three_chunks(&r, (const unsigned[]){ 12, 15, 15 }, (const uint64_t[]){ 500, 20000, 40000 }, 1, 3);
	write_run(dir, name, &r);
}

/* split-1.3: format 1.3's split EVENTS: zstd chunks of every field type
 * and a few hundred events each (a chunk of a dozen events is stored in
 * one stream, the split would not be smaller), and a last small chunk in
 * one stream beside them. */
static void gen_split(const char *dir, const char *name)
{
	run r;
	open_layout = REC_EVENTS_SPLIT;
	run_open(&r, REC_CODEC_ZSTD, 0x5eed0000c0ffee13ull, 5353, 1000000000ull);
	open_layout = REC_EVENTS_ONE_STREAM;
	r.v11 = r.v12 = r.v13 = true;
	three_chunks(&r, (const unsigned[]){ 300, 250, 5 }, (const uint64_t[]){ 500, 400000, 800000 }, 4, 2);
	/* the first two chunks split, the last in one stream */
	size_t off = 0;
	for (size_t i = 0; i < r.nchunks; i++) {
		const uint8_t *h = r.out.p + off;
		bool split = (rec_le32(h + REC_HOFF_FLAGS) & REC_CHUNK_SPLIT_EVENTS) != 0;
		if (split != (i < 2))
			die("split-1.3: chunk %zu is %s split", i, split ? "" : "not");
		off += rec_le32(h + REC_HOFF_HEADER_SIZE) + rec_le64(h + REC_HOFF_PAYLOAD_SIZE);
	}
	write_run(dir, name, &r);
}

static void gen_lz4(const char *dir)
{
	run r;
	/* a TSC-like 2.5 GHz clock: 5 ticks are exactly 2 ns */
	run_open(&r, REC_CODEC_LZ4, 0x5eed0000c0ffee03ull, 6161, 2500000000ull);
	types_full(&r);
	pools_full(&r);
	uint64_t us = 2500;
	mix(&r, ANCHOR_TICKS + 1000 * us, 20, us, 7);
	run_flush(&r);
	mix(&r, ANCHOR_TICKS + 30000 * us, 20, us, 8);
	run_close(&r);
	write_run(dir, "lz4", &r);
}

static void gen_two_runs(const char *dir)
{
	/* run A crashed (no FINAL chunk), run B is the restarted service */
	run a, b;
	run_open(&a, REC_CODEC_ZSTD, 0x5eed0000000000aaull, 1000, 1000000000ull);
	types_full(&a);
	pools_full(&a);
	mix(&a, ANCHOR_TICKS, 10, 1000, 11);
	run_flush(&a);
	mix(&a, ANCHOR_TICKS + 10000000, 10, 1000, 12);
	run_abandon(&a);
	run_open(&b, REC_CODEC_ZSTD, 0x5eed0000000000bbull, 1017, 1000000000ull);
	types_full(&b);
	pools_full(&b);
	mix(&b, ANCHOR_TICKS + 5000000000ull, 12, 1000, 13);
	run_close(&b);
	membuf all = { 0 };
	mem_append(&all, &a.out);
	mem_append(&all, &b.out);
	write_file(dir, "two-runs", all.p, all.len);
	FILE *f = facts_open(dir, "two-runs");
	run *rs[] = { &a, &b };
	facts_runs(f, rs, 2, 0);
	facts_close(f);
	free(a.out.p);
	free(b.out.p);
	free(all.p);
}

/* A 3-chunk zstd recording the damaged files start from. */
static void base3(run *r, uint64_t run_id, bool v11)
{
	run_open(r, REC_CODEC_ZSTD, run_id, 7171, 1000000000ull);
	r->v11 = v11;
	types_full(r);
	pools_full(r);
	mix(r, ANCHOR_TICKS, 8, 1000, 21);
	run_flush(r);
	mix(r, ANCHOR_TICKS + 10000000, 8, 1000, 22);
	run_flush(r);
	mix(r, ANCHOR_TICKS + 20000000, 8, 1000, 23);
	run_close(r);
	if (r->nchunks != 3)
		die("base recording has %zu chunks, want 3", r->nchunks);
}

static size_t chunk_end(const run *r, size_t i)
{
	return i + 1 < r->nchunks ? r->chunk_offsets[i + 1] : r->out.len;
}

/* Facts of a damaged file: the chunks that stay readable and the damage. */
static void facts_damaged(FILE *f, const run *r, const bool *good, size_t damaged_offset,
			  const char *damage)
{
	uint64_t events = 0, chunks = 0;
	for (size_t i = 0; i < r->nchunks; i++) {
		if (!good[i])
			continue;
		events += r->chunk_events[i];
		chunks++;
		fprintf(f, "chunk offset %zu events %" PRIu64 "\n", r->chunk_offsets[i], r->chunk_events[i]);
	}
	fprintf(f, "written_events %" PRIu64 "\n", r->events);
	fprintf(f, "readable_events %" PRIu64 "\n", events);
	fprintf(f, "readable_chunks %" PRIu64 "\n", chunks);
	fprintf(f, "damage %s at offset %zu\n", damage, damaged_offset);
}

/* Offset of the stored bytes of the chunk at `at`'s section of `kind`. */
static size_t stored_at(const uint8_t *p, size_t at, uint16_t kind, uint32_t *size)
{
	size_t o = at + REC_HEADER_SIZE_V1;
	for (unsigned i = 0; i < rec_le16(p + at + REC_HOFF_SECTION_COUNT); i++) {
		rec_section_header sh;
		rec_section_header_decode(p + o, &sh);
		if (sh.kind == kind) {
			*size = sh.stored_size;
			return o + REC_SECTION_HEADER_SIZE;
		}
		o += REC_SECTION_HEADER_SIZE + sh.stored_size;
	}
	die("no section of kind %u", kind);
	return 0;
}

static void fix_header_crc(uint8_t *h)
{
	uint32_t hs = rec_le32(h + REC_HOFF_HEADER_SIZE);
	rec_put_le32(h + REC_HOFF_HEADER_CRC, 0);
	rec_put_le32(h + REC_HOFF_HEADER_CRC, rec_crc32c(0, h, hs));
}

/* NAME: base3 in format 1.1 (run id seed), one byte flipped in the middle of
 * the second chunk's section kind; its facts say why the chunk is damaged
 * (reason). */
static void flipped_section_1_1(const char *dir, const char *name, uint64_t seed, uint16_t kind,
				const char *reason)
{
	run r;
	base3(&r, seed, true);
	uint32_t n;
	size_t pos = stored_at(r.out.p, r.chunk_offsets[1], kind, &n) + n / 2;
	r.out.p[pos] ^= 0x40;
	write_file(dir, name, r.out.p, r.out.len);
	FILE *f = facts_open(dir, name);
	bool good[3] = { true, false, true };
	facts_damaged(f, &r, good, r.chunk_offsets[1], reason);
	fprintf(f, "flipped_byte %zu\n", pos);
	fprintf(f, "run %016" PRIx64 " ended clean-close\n", r.run_id);
	facts_close(f);
	free(r.out.p);
}

static void gen_invalid(const char *dir)
{
	run r;
	/* truncated-tail: the last chunk is cut in the middle of its payload */
	base3(&r, 0x5eed0000dead0001ull, false);
	{
		size_t cut = r.chunk_offsets[2] + (chunk_end(&r, 2) - r.chunk_offsets[2]) / 2;
		write_file(dir, "truncated-tail", r.out.p, cut);
		FILE *f = facts_open(dir, "truncated-tail");
		bool good[3] = { true, true, false };
		facts_damaged(f, &r, good, r.chunk_offsets[2], "truncated");
		fprintf(f, "run %016" PRIx64 " ended truncated\n", r.run_id);
		facts_close(f);
	}
	free(r.out.p);

	/* corrupt-middle: one payload byte of the second chunk flipped */
	base3(&r, 0x5eed0000dead0002ull, false);
	{
		size_t pos = r.chunk_offsets[1] + REC_HEADER_SIZE_V1 +
			     (chunk_end(&r, 1) - r.chunk_offsets[1] - REC_HEADER_SIZE_V1) * 3 / 4;
		r.out.p[pos] ^= 0x40;
		write_file(dir, "corrupt-middle", r.out.p, r.out.len);
		FILE *f = facts_open(dir, "corrupt-middle");
		bool good[3] = { true, false, true };
		facts_damaged(f, &r, good, r.chunk_offsets[1], "checksum");
		fprintf(f, "flipped_byte %zu\n", pos);
		fprintf(f, "run %016" PRIx64 " ended clean-close\n", r.run_id);
		facts_close(f);
	}
	free(r.out.p);

	/* bad-magic: the first chunk's magic is broken; the reader resyncs */
	base3(&r, 0x5eed0000dead0003ull, false);
	{
		r.out.p[1] = 'X';
		write_file(dir, "bad-magic", r.out.p, r.out.len);
		FILE *f = facts_open(dir, "bad-magic");
		bool good[3] = { false, true, true };
		facts_damaged(f, &r, good, 0, "magic");
		fprintf(f, "skipped_bytes %zu\n", r.chunk_offsets[1]);
		facts_close(f);
	}
	free(r.out.p);

	/* future-major: the second chunk says major 2 (valid header checksum) */
	base3(&r, 0x5eed0000dead0004ull, false);
	{
		uint8_t *h = r.out.p + r.chunk_offsets[1];
		rec_put_le16(h + REC_HOFF_MAJOR, 2);
		fix_header_crc(h);
		write_file(dir, "future-major", r.out.p, r.out.len);
		FILE *f = facts_open(dir, "future-major");
		bool good[3] = { true, false, true };
		facts_damaged(f, &r, good, r.chunk_offsets[1], "version");
		facts_close(f);
	}
	free(r.out.p);

	/* absurd-size: the second chunk declares a 4 GiB payload (valid header checksum) */
	base3(&r, 0x5eed0000dead0005ull, false);
	{
		uint8_t *h = r.out.p + r.chunk_offsets[1];
		rec_put_le64(h + REC_HOFF_PAYLOAD_SIZE, 4ull << 30);
		fix_header_crc(h);
		write_file(dir, "absurd-size", r.out.p, r.out.len);
		FILE *f = facts_open(dir, "absurd-size");
		/* the header checksum holds but the size is over the limit: the
		 * reader resumes at the next good chunk header (spec, "Recovery"),
		 * so chunk 2 is read */
		bool good[3] = { true, false, true };
		facts_damaged(f, &r, good, r.chunk_offsets[1], "limit");
		facts_close(f);
	}
	free(r.out.p);

	/* front-1.1: format 1.1, one byte of the second chunk's STATS flipped:
	 * Front_Checksum fails, so even a summary refuses the chunk */
	flipped_section_1_1(dir, "front-1.1", 0x5eed0000dead0011ull, REC_SECTION_STATS, "front");
	/* events-1.1: format 1.1, one byte of the second chunk's EVENTS flipped:
	 * its header and STATS are checked by Front_Checksum and a summary shows
	 * them; its events are refused (payload checksum), and so is the chunk
	 * by a verifying reader */
	flipped_section_1_1(dir, "events-1.1", 0x5eed0000dead0012ull, REC_SECTION_EVENTS, "events");
}

/* stats-mismatch: a codec-none chunk whose STATS move one event from its
 * second type to its first (the totals still add up, so the lie is
 * plausible), with both checksums made valid again: only a verifying reader
 * (rec-summary --verify) can tell. */
static void gen_stats_mismatch(const char *dir)
{
	run r;
	run_open(&r, REC_CODEC_NONE, 0x5eed0000dead0006ull, 8181, 1000000000ull);
	types_tiny(&r);
	pools_tiny(&r);
	heap(&r, ANCHOR_TICKS, 1u << 20);
	lockwait(&r, ANCHOR_TICKS + 5000, 70000, 1, 1, S_MUTEX);
	heap(&r, ANCHOR_TICKS + 90000, 2u << 20);
	run_close(&r);
	uint8_t *h = r.out.p;
	size_t off = REC_HEADER_SIZE_V1, stats_off = 0;
	rec_section_header sh;
	for (unsigned i = 0; i < rec_le16(h + REC_HOFF_SECTION_COUNT); i++) {
		rec_section_header_decode(h + off, &sh);
		if (sh.kind == REC_SECTION_STATS) {
			stats_off = off;
			break;
		}
		off += REC_SECTION_HEADER_SIZE + sh.stored_size;
	}
	if (!stats_off || (sh.flags & REC_SECTION_COMPRESSED))
		die("stats-mismatch: no raw STATS section");
	const uint8_t *p = h + stats_off + REC_SECTION_HEADER_SIZE, *end = p + sh.stored_size;
	uint64_t v, type_id, count;
	for (int k = 0; k < 4; k++) /* First_Delta, Last_Delta, Dropped_Events, Type_Count */
		if (!rec_varint_get(&p, end, &v))
			die("stats-mismatch: bad STATS");
	uint8_t *count_at, *count2_at;
	uint64_t type2_id, count2, bytes;
	if (!rec_varint_get(&p, end, &type_id))
		die("stats-mismatch: bad STATS");
	count_at = (uint8_t *)p;
	if (!rec_varint_get(&p, end, &count) || count >= 127 || p != count_at + 1 ||
	    !rec_varint_get(&p, end, &bytes) || !rec_varint_get(&p, end, &type2_id))
		die("stats-mismatch: unexpected STATS entry");
	count2_at = (uint8_t *)p;
	if (!rec_varint_get(&p, end, &count2) || count2 < 1 || count2 >= 127 || p != count2_at + 1)
		die("stats-mismatch: unexpected second STATS entry");
	*count_at = (uint8_t)(count + 1);
	*count2_at = (uint8_t)(count2 - 1);
	uint64_t payload = rec_le64(h + REC_HOFF_PAYLOAD_SIZE);
	rec_put_le32(h + REC_HOFF_PAYLOAD_CRC, rec_crc32c(0, h + REC_HEADER_SIZE_V1, (size_t)payload));
	fix_header_crc(h);
	write_file(dir, "stats-mismatch", r.out.p, r.out.len);
	FILE *f = facts_open(dir, "stats-mismatch");
	bool good[1] = { true };
	facts_damaged(f, &r, good, stats_off, "stats");
	fprintf(f, "stats_type_id %" PRIu64 " claims %" PRIu64 " events, has %" PRIu64 "\n", type_id,
		count + 1, count);
	fprintf(f, "stats_type_id %" PRIu64 " claims %" PRIu64 " events, has %" PRIu64 "\n", type2_id,
		count2 - 1, count2);
	facts_close(f);
	free(r.out.p);
}

/* newer-minor: a chunk one minor version newer than the writer's (1.2,
 * codec none, with Front_Checksum as 1.1 defines it) with a section of a kind
 * this reader does not know appended: it must read it and skip the section
 * (spec "Introduction and conformance").  Valid, so it lives in valid/. */
static void gen_newer_minor(const char *dir)
{
	run r;
	run_open(&r, REC_CODEC_NONE, 0x5eed0000000011aaull, 9191, 1000000000ull);
	r.v11 = true;
	types_tiny(&r);
	pools_tiny(&r);
	heap(&r, ANCHOR_TICKS, 3u << 20);
	lockwait(&r, ANCHOR_TICKS + 1000, 20000, 1, 1, S_MUTEX);
	run_close(&r);
	static const char extra[] = "a section from the future";
	size_t n = sizeof extra - 1;
	membuf m = { 0 };
	if (mem_write(&m, r.out.p, r.out.len) != 0)
		die("out of memory");
	uint8_t sh[REC_SECTION_HEADER_SIZE];
	rec_section_header x = { 99, 0, 0, (uint32_t)n, (uint32_t)n };
	rec_section_header_encode(&x, sh);
	if (mem_write(&m, sh, sizeof sh) != 0 || mem_write(&m, extra, n) != 0)
		die("out of memory");
	uint8_t *h = m.p;
	rec_put_le16(h + REC_HOFF_MINOR, REC_FORMAT_MINOR + 1);
	rec_put_le16(h + REC_HOFF_SECTION_COUNT, (uint16_t)(rec_le16(h + REC_HOFF_SECTION_COUNT) + 1));
	rec_put_le64(h + REC_HOFF_RAW_SIZE, rec_le64(h + REC_HOFF_RAW_SIZE) + n);
	uint64_t payload = rec_le64(h + REC_HOFF_PAYLOAD_SIZE) + sizeof sh + n;
	rec_put_le64(h + REC_HOFF_PAYLOAD_SIZE, payload);
	rec_put_le32(h + REC_HOFF_PAYLOAD_CRC, rec_crc32c(0, h + REC_HEADER_SIZE_V1, (size_t)payload));
	uint32_t front;
	if (!rec_front_checksum(h + REC_HEADER_SIZE_V1, payload, rec_le16(h + REC_HOFF_SECTION_COUNT),
				&front))
		die("newer-minor: bad section table");
	rec_put_le32(h + REC_HOFF_FRONT_CRC, front);
	fix_header_crc(h);
	write_file(dir, "newer-minor", m.p, m.len);
	FILE *f = facts_open(dir, "newer-minor");
	run *rs[] = { &r };
	facts_runs(f, rs, 1, 0);
	fprintf(f, "unknown_sections 1\n");
	facts_close(f);
	free(m.p);
	free(r.out.p);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_testdata OUTDIR\n");
		return 2;
	}
	char valid[4096], invalid[4096];
	snprintf(valid, sizeof valid, "%s/valid", argv[1]);
	snprintf(invalid, sizeof invalid, "%s/invalid", argv[1]);
	if ((mkdir(argv[1], 0755) != 0 && errno != EEXIST) || (mkdir(valid, 0755) != 0 && errno != EEXIST) ||
	    (mkdir(invalid, 0755) != 0 && errno != EEXIST))
		die("mkdir %s: %s", argv[1], strerror(errno));
	gen_tiny(valid, "tiny", false);
	gen_tiny(valid, "tiny-1.1", true);
	gen_zstd(valid, "zstd", false);
	gen_zstd(valid, "zstd-1.1", true);
	gen_frames(valid, "frames-1.2");
	gen_split(valid, "split-1.3");
	gen_lz4(valid);
	gen_two_runs(valid);
	gen_newer_minor(valid);
	gen_invalid(invalid);
	gen_stats_mismatch(invalid);
	return 0;
}
