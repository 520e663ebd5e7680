/* SPDX-License-Identifier: MIT */
/*
 * view_fixture.h - test support shared by the tests of rec/view.h's views
 * (tests/unit/analysis/test_view.c and test_view_MODULE.c, one per module of
 * libfmt/analysis/view_*.c): recording A written with the real writer (zstd,
 * small chunks, events written in commit order: a span after the events
 * inside it, as the recorder writes them), its event writers (for tests
 * that write their own recording with the same types, threads and stacks);
 * view_run.h (included) runs a view over a recording and looks up its
 * tables, rows and cells.
 *
 * Recording A (ms from the first event; threads main tid 100, worker-1 101,
 * worker-2 102):
 *   main      0-400 rec.Sleep at warmup; 1-4 ms four 1 MiB rec.Alloc at warmup
 *             (0x1000..0x4000), 5 ms rec.Free 0x1000; 10 ms a CPU sample
 *             (10 ms period, 1 overrun: 20 ms) in hash <- warmup;
 *             800-810 app.Request /get with nothing inside
 *   worker-2  500-700 app.Request /fill: 510-660 rec.Sleep at cache_fill
 *             (holding cache-lock), 670 a CPU sample (10 ms) hash <- handle
 *   worker-1  505-705 app.Request /get: 520-680 rec.LockWait on cache-lock held
 *             by worker-2, site handle; 681-686 rec.CondWait; 687 rec.Alloc
 *             2 MiB weight (size 1000, sampled) at handle; 690, 700 CPU
 *             samples (10 ms each)
 *   900       rec.Dropped: 7 rec.Alloc, buffer full
 *
 * Header-only, like readback.h: the helpers assert with cmocka, and the
 * objects of tests/lib are linked into tests/helpers programs too, which
 * have no cmocka.  Include it from one .c file per binary, after
 * <stdarg.h> <stddef.h> <stdint.h> <setjmp.h> <cmocka.h>; a test group
 * uses setup/teardown (they write and free rec_a).
 */
#ifndef REC_TESTS_LIB_VIEW_FIXTURE_H
#define REC_TESTS_LIB_VIEW_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rec/analysis.h"
#include "rec/rec.h"
#include "rec/view.h"

#include "view_run.h"
#include "gen.h"

enum { TH_MAIN = 1, TH_W1, TH_W2 };
enum { S_LOCK = 1, S_HOLD, S_WARM, S_CPU_WARM, S_CPU, S_ALLOC, S_ALLOC_WARM, S_COND };

static __attribute__((unused)) const rec_field f_cond[] = {
	{ "condAddress", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "mutexAddress", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "mutexName", "", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "timeout", "", "", REC_TYPE_U64, REC_UNIT_NANOS },
	{ "timed", "", "", REC_TYPE_BOOL, REC_UNIT_NONE },
	{ "timedOut", "", "", REC_TYPE_BOOL, REC_UNIT_NONE },
};
static __attribute__((unused)) const rec_field f_free[] = {
	{ "address", "", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "size", "", "", REC_TYPE_U64, REC_UNIT_BYTES },
	{ "sampled", "", "", REC_TYPE_BOOL, REC_UNIT_NONE },
};

static __attribute__((unused))
void open_gen(gen *g, membuf *m, uint32_t chunk)
{
	gen_open(g, m, chunk);
	const rec_type types[] = {
		{ T_DROPPED, 0, "rec.Dropped", "", "", "rec", 4, f_dropped },
		{ T_LOCKWAIT, D_T_S, "rec.LockWait", "", "", "rec/Locks", 4, f_lock },
		{ T_SLEEP, D_T_S, "rec.Sleep", "", "", "rec/Waits", 3, f_sleep },
		{ T_ALLOC, T_S, "rec.Alloc", "", "", "rec/Memory", 4, f_alloc },
		{ T_FREE, T_S, "rec.Free", "", "", "rec/Memory", 3, f_free },
		{ T_CPU, T_S, "rec.CPUSample", "", "", "rec/Profiling", 2, f_cpu },
		{ T_COND, D_T_S, "rec.CondWait", "", "", "rec/Waits", 6, f_cond },
		{ T_REQ, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD, "app.Request", "", "", "app", 2,
		  f_req },
	};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		ok(rec_writer_add_type(g->w, &types[i]));
	ok(rec_writer_define_thread(g->w, TH_MAIN, 100, str(g, "main")));
	ok(rec_writer_define_thread(g->w, TH_W1, 101, str(g, "worker-1")));
	ok(rec_writer_define_thread(g->w, TH_W2, 102, str(g, "worker-2")));
	gen_frames(g);
	const uint64_t s_lock[] = { F_LOCKREC, F_HANDLE, F_LOOP };
	const uint64_t s_hold[] = { F_SLEEPREC, F_FILL, F_LOOP };
	const uint64_t s_warm[] = { F_SLEEPREC, F_WARMUP };
	const uint64_t s_cpu_warm[] = { F_HASH, F_WARMUP };
	const uint64_t s_cpu[] = { F_HASH, F_HANDLE, F_LOOP };
	const uint64_t s_alloc[] = { F_MALLOCREC, F_HANDLE, F_LOOP };
	const uint64_t s_alloc_warm[] = { F_MALLOCREC, F_WARMUP };
	const uint64_t s_cond[] = { F_HANDLE, F_LOOP };
	ok(rec_writer_define_stack(g->w, S_LOCK, 0, s_lock, 3));
	ok(rec_writer_define_stack(g->w, S_HOLD, 0, s_hold, 3));
	ok(rec_writer_define_stack(g->w, S_WARM, 0, s_warm, 2));
	ok(rec_writer_define_stack(g->w, S_CPU_WARM, 0, s_cpu_warm, 2));
	ok(rec_writer_define_stack(g->w, S_CPU, 0, s_cpu, 3));
	ok(rec_writer_define_stack(g->w, S_ALLOC, 0, s_alloc, 3));
	ok(rec_writer_define_stack(g->w, S_ALLOC_WARM, 0, s_alloc_warm, 2));
	ok(rec_writer_define_stack(g->w, S_COND, 0, s_cond, 2));
}

static __attribute__((unused))
void alloc_ev(gen *g, uint64_t th, uint64_t stack, double t, uint64_t addr, uint64_t size,
	      uint64_t weight, bool sampled)
{
	ok(rec_writer_begin(g->w, T_ALLOC, at(t), 0, th, stack));
	ok(rec_writer_put_u64(g->w, addr));
	ok(rec_writer_put_u64(g->w, size));
	ok(rec_writer_put_u64(g->w, weight));
	ok(rec_writer_put_u64(g->w, sampled));
	ok(rec_writer_end(g->w));
}

static __attribute__((unused))
void cpu_ev(gen *g, uint64_t th, uint64_t stack, double t, uint32_t overruns)
{
	ok(rec_writer_begin(g->w, T_CPU, at(t), 0, th, stack));
	ok(rec_writer_put_u64(g->w, 10 * MS));
	ok(rec_writer_put_u64(g->w, overruns));
	ok(rec_writer_end(g->w));
}

/* Recording A, in commit order (each event when it ends). */
static __attribute__((unused))
void write_a(membuf *m)
{
	gen g;
	open_gen(&g, m, 100);
	for (int i = 0; i < 4; i++)
		alloc_ev(&g, TH_MAIN, S_ALLOC_WARM, 1 + i, 0x1000 * (uint64_t)(i + 1), MIB, MIB, false);
	ok(rec_writer_begin(g.w, T_FREE, at(5), 0, TH_MAIN, S_ALLOC_WARM));
	ok(rec_writer_put_u64(g.w, 0x1000));
	ok(rec_writer_put_u64(g.w, MIB));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_end(g.w));
	cpu_ev(&g, TH_MAIN, S_CPU_WARM, 10, 1);
	sleep_ev(&g, TH_MAIN, S_WARM, 0, 400);
	sleep_ev(&g, TH_W2, S_HOLD, 510, 660);
	cpu_ev(&g, TH_W2, S_CPU, 670, 0);
	ok(rec_writer_begin(g.w, T_LOCKWAIT, at(520), at(680) - at(520), TH_W1, S_LOCK));
	ok(rec_writer_put_u64(g.w, 0xbeef));
	ok(rec_writer_put_u64(g.w, str(&g, "cache-lock")));
	ok(rec_writer_put_u64(g.w, 102));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_end(g.w));
	ok(rec_writer_begin(g.w, T_COND, at(681), at(686) - at(681), TH_W1, S_COND));
	ok(rec_writer_put_u64(g.w, 0xc0));
	ok(rec_writer_put_u64(g.w, 0xbeef));
	ok(rec_writer_put_u64(g.w, str(&g, "cache-lock")));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_end(g.w));
	alloc_ev(&g, TH_W1, S_ALLOC, 687, 0x9000, 1000, 2 * MIB, true);
	cpu_ev(&g, TH_W1, S_CPU, 690, 0);
	req_ev(&g, TH_W2, 500, 700, "/fill");
	cpu_ev(&g, TH_W1, S_CPU, 700, 0);
	req_ev(&g, TH_W1, 505, 705, "/get");
	req_ev(&g, TH_MAIN, 800, 810, "/get");
	rec_writer_note_dropped(g.w, 7); /* the chunk's Dropped_Events, as the recorder keeps it */
	ok(rec_writer_begin(g.w, T_DROPPED, at(900), 0, 0, 0));
	ok(rec_writer_put_u64(g.w, 7));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_put_u64(g.w, 0));
	ok(rec_writer_put_u64(g.w, T_ALLOC));
	ok(rec_writer_end(g.w));
	ok(rec_writer_close(g.w));
}

/* ---- recording A, written once per test group ---- */

static __attribute__((unused)) membuf rec_a;

static __attribute__((unused))
int setup(void **state)
{
	(void)state;
	write_a(&rec_a);
	return 0;
}

static __attribute__((unused))
int teardown(void **state)
{
	(void)state;
	free(rec_a.p);
	return 0;
}

#endif /* REC_TESTS_LIB_VIEW_FIXTURE_H */
