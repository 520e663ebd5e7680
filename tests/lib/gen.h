/* SPDX-License-Identifier: MIT */
/*
 * gen.h - test support shared by view_fixture.h and findings_fixture.h:
 * writing a recording event by event with the real writer into a membuf
 * (membuf.h): the time base (T0 ticks at WALL0, at(ms)), rec's own event
 * types with their fields and app.Request, the frames both fixtures name,
 * interned strings (str), and the events they write alike (sleep_ev,
 * req_ev).  Each fixture opens its writer with its own types, frames and
 * stacks (open_gen).
 *
 * Header-only, like readback.h (the helpers assert with cmocka): include it
 * after <stdarg.h> <stddef.h> <stdint.h> <setjmp.h> <cmocka.h>.
 */
#ifndef REC_TESTS_LIB_GEN_H
#define REC_TESTS_LIB_GEN_H

#include <stdint.h>
#include <string.h>

#include "rec/rec.h"

#include "membuf.h"

#ifndef REC_TESTS_LIB_OK
#define REC_TESTS_LIB_OK
/* ok(): the call returned REC_OK. */
static __attribute__((unused))
void ok(rec_status st) { assert_int_equal(st, REC_OK); }
#endif

#define T0 1000000000000ull
#define WALL0 1796206443000000000ll
#define MS 1000000ull
#define MIB (1024ull * 1024ull)

/* rec's own event types (their ids in every recording) and app.Request */
enum { T_DROPPED = 3, T_LOCKWAIT = 16, T_SLEEP = 18, T_ALLOC = 19, T_FREE = 20, T_CPU = 21,
       T_COND = 22, T_REQ = 300 };
enum { F_LOCKREC = 1, F_HANDLE, F_LOOP, F_WARMUP, F_HASH, F_FILL, F_SLEEPREC, F_MALLOCREC };

#define D_T_S (REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK)
#define T_S (REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK)

static __attribute__((unused)) const rec_field f_lock[] = {
	{ "lockAddress", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "lockName", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "holderOsThreadId", "", "", REC_TYPE_U64, REC_UNIT_NONE },
	{ "lockKind", "", "", REC_TYPE_U8, REC_UNIT_NONE },
};
static __attribute__((unused)) const rec_field f_sleep[] = {
	{ "kind", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "requested", "", "", REC_TYPE_U64, REC_UNIT_NANOS },
	{ "objectAddress", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
};
static __attribute__((unused)) const rec_field f_alloc[] = {
	{ "address", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "size", "", "", REC_TYPE_U64, REC_UNIT_BYTES },
	{ "weight", "", "", REC_TYPE_U64, REC_UNIT_BYTES },
	{ "sampled", "", "", REC_TYPE_BOOL, REC_UNIT_NONE },
};
static __attribute__((unused)) const rec_field f_cpu[] = {
	{ "period", "", "", REC_TYPE_U64, REC_UNIT_NANOS },
	{ "overruns", "", "", REC_TYPE_U32, REC_UNIT_COUNT },
};
static __attribute__((unused)) const rec_field f_req[] = {
	{ "path", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "status", "", "", REC_TYPE_U32, REC_UNIT_NONE },
};
static __attribute__((unused)) const rec_field f_dropped[] = {
	{ "count", "", "", REC_TYPE_U64, REC_UNIT_COUNT },
	{ "thread", "", "", REC_TYPE_THREAD, REC_UNIT_NONE },
	{ "reason", "", "", REC_TYPE_U8, REC_UNIT_NONE },
	{ "type", "", "", REC_TYPE_U32, REC_UNIT_NONE },
};

typedef struct gen {
	rec_writer *w;
	uint64_t str;
} gen;

static __attribute__((unused))
uint64_t str(gen *g, const char *s)
{
	uint64_t id = ++g->str;
	ok(rec_writer_define_string(g->w, id, s, strlen(s)));
	return id;
}

static __attribute__((unused))
uint64_t at(double ms) { return T0 + (uint64_t)(ms * (double)MS); }

/* A writer onto m (run 0xabc, pid 77, T0 ticks at WALL0, chunks of chunk
 * bytes of events), no string interned yet. */
static __attribute__((unused))
void gen_open(gen *g, membuf *m, uint32_t chunk)
{
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.run_id = 0xabc;
	o.pid = 77;
	o.process_start_ns = WALL0;
	o.anchor_wall_ns = WALL0;
	o.anchor_ticks = T0;
	o.chunk_events_size = chunk;
	rec_sink sink = { mem_write, NULL, m };
	g->str = 0;
	ok(rec_writer_open(&g->w, &sink, &o));
}

/* The frames F_LOCKREC .. F_MALLOCREC, their names interned in that order. */
static __attribute__((unused))
void gen_frames(gen *g)
{
	static const char *const fn[] = { "rec_mutex_lock_contended_", "handle", "main_loop",
					  "warmup", "hash", "cache_fill", "rec_sleep_ns",
					  "rec_malloc" };
	for (size_t i = 0; i < 8; i++)
		ok(rec_writer_define_frame(g->w, i + 1, str(g, fn[i]), 0, 0x100 * (i + 1), 4));
}

static __attribute__((unused))
void sleep_ev(gen *g, uint64_t th, uint64_t stack, double s, double e)
{
	ok(rec_writer_begin(g->w, T_SLEEP, at(s), at(e) - at(s), th, stack));
	ok(rec_writer_put_u64(g->w, str(g, "sleep")));
	ok(rec_writer_put_u64(g->w, at(e) - at(s)));
	ok(rec_writer_put_u64(g->w, 0));
	ok(rec_writer_end(g->w));
}

static __attribute__((unused))
void req_ev(gen *g, uint64_t th, double s, double e, const char *path)
{
	ok(rec_writer_begin(g->w, T_REQ, at(s), at(e) - at(s), th, 0));
	ok(rec_writer_put_u64(g->w, str(g, path)));
	ok(rec_writer_put_u64(g->w, 200));
	ok(rec_writer_end(g->w));
}

#endif /* REC_TESTS_LIB_GEN_H */
