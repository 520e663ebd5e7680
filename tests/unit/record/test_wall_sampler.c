/* SPDX-License-Identifier: MIT */
/*
 * test_wall_sampler.c - wall_sampler.c, rec.WallSample: where a thread's
 * wall time goes.  The sampler runs only where the preload library's marker
 * symbol is defined (wall_internal.h); this test defines it, as the preload
 * library does, and marks a blocking call itself, as the interposers do
 * (rec_wall_enter/leave, rec_wall_emit_call_).  A real thread runs on the
 * CPU for a while, sleeps in a marked call, runs again: the recording must
 * give the call one "sleep" sample whose weight is the grid ticks the call
 * spanned, the rest of the thread's life "running" samples taken by the
 * signal with stacks in the running function, and every tick of its life
 * once (cli/preload_wall and cli/record_wall test it through rec-record).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rec/builtins.h"
#include "rec/recorder.h"
#include "record/wall_internal.h"
#include "../../lib/readback.h"
#include "../../lib/scale.h"

/* What the preload library defines: wall sampling runs in this process. */
const int rec_wall_preload_marker_ = 1;

#define PERIOD_NS 10000000u /* 100 Hz */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static volatile uint64_t g_sink;

void wall_burn(uint64_t ns);
__attribute__((noinline)) void wall_burn(uint64_t ns)
{
	uint64_t end = mono_ns() + ns, x = 1;
	while (mono_ns() < end) {
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		sched_yield(); /* valgrind runs one thread at a time: let the sampler's run */
	}
	g_sink += x;
}

typedef struct worker_out {
	uint64_t tid;
	uint64_t attach_tick, end_tick; /* the grid ticks of its life */
	uint32_t sleep_ticks;           /* what rec_wall_leave() said */
	uint64_t slept_ns;              /* how long the marked call took */
	uint64_t marked_ns;             /* and with its marks */
	uint64_t caught_up_tick;        /* the sampler had looked at it since */
	uint64_t handed, unemitted;     /* running ticks the sampler handed out, of
					 * them not emitted (no signal came since) */
	uint64_t in_calls;              /* ticks of its finished marked calls */
} worker_out;

static void worker_end(worker_out *o);

/* A worker's start, as the preload library's pthread_create does it:
 * registered with the recorder (a signal handler's emit cannot register
 * its thread) and attached to the wall sampler. */
static void worker_start(worker_out *o)
{
	o->tid = rec_t_my_tid();
	assert_int_equal(rec_recorder_attach_thread(rec_recorder_default()), REC_OK);
	rec_wall_attach_thread();
	o->attach_tick = rec_wall_tls_.attach_tick;
}

static void *worker(void *p)
{
	worker_out *o = p;
	worker_start(o);
	wall_burn(200000000u);
	/* a blocking call as the interposers mark it; the clock read inside
	 * the marks and outside them (a loaded host, valgrind above all, can
	 * keep the thread off the CPU for a period between the two) */
	const uint64_t out0 = mono_ns();
	unsigned k = rec_wall_enter(REC_WALL_SLEEP);
	assert_int_equal(k, REC_WALL_SLEEP);
	uint64_t t0 = mono_ns();
	struct timespec ts = { 0, 150000000 };
	nanosleep(&ts, NULL);
	o->slept_ns = mono_ns() - t0;
	o->sleep_ticks = rec_wall_leave(k);
	o->marked_ns = mono_ns() - out0;
	if (o->sleep_ticks)
		rec_wall_emit_call_(k, o->sleep_ticks);
	wall_burn(100000000u);
	worker_end(o);
	return NULL;
}

/* The end of a worker's life: until the sampler has looked at it at a
 * tick since it ran again (handed out every running tick up to t), then
 * into a marked call that never returns before the thread ends: the
 * sampler leaves a thread in a marked call alone, so what it handed out
 * stays put.  Two periods in the call let a look that began before it
 * end. */
static void worker_end(worker_out *o)
{
	rec_wall_thread *w = &rec_wall_tls_;
	uint64_t t = rec_wall_tick_now();
	for (int i = 0; i < 5000 && w->run_reported + w->call_ticks < t - o->attach_tick; i++)
		wall_burn(1000000u);
	o->caught_up_tick = t;
	(void)rec_wall_enter(REC_WALL_SLEEP);
	o->end_tick = rec_wall_tick_now();
	struct timespec two = { 0, 2 * PERIOD_NS };
	nanosleep(&two, NULL);
	o->handed = __atomic_load_n(&w->run_reported, __ATOMIC_ACQUIRE);
	o->unemitted = __atomic_load_n(&w->ticks_run, __ATOMIC_ACQUIRE);
	o->in_calls = __atomic_load_n(&w->call_ticks, __ATOMIC_ACQUIRE);
}

static void t_running_and_sleep(void **state)
{
	(void)state;
	rec_wall_set_period(PERIOD_NS);
	assert_int_equal(rec_wall_period(), PERIOD_NS);
	rec_t_start(NULL);
	worker_out o;
	memset(&o, 0, sizeof o);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, worker, &o), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	rec_t_stop_and_load();
	rec_wall_set_period(0);

	uint64_t running = 0, waiting = 0, sleeping = 0, n_running = 0, n_sleep = 0, in_burn = 0;
	uint64_t other = 0, n_wait = 0, wait_in_burn = 0;
	for (size_t i = 0; i < rec_t_nev; i++) {
		const rec_t_ev *e = &rec_t_evs[i];
		if (strcmp(e->type, "rec.WallSample") != 0 || e->tid != o.tid)
			continue;
		const char *st = rec_t_fs(e, "state");
		uint64_t w = rec_t_fu(e, "weight");
		assert_int_equal(rec_t_fu(e, "period"), PERIOD_NS);
		if (strcmp(st, "sleep") == 0) {
			sleeping += w;
			n_sleep++;
		} else if (strcmp(st, "wait") == 0) {
			waiting += w; /* signalled inside sched_yield (valgrind: a restarted call) */
			n_wait++;
			wait_in_burn += strstr(e->stack, "wall_burn") != NULL;
		} else if (strcmp(st, "running") == 0) {
			running += w;
			n_running++;
			in_burn += strstr(e->stack, "wall_burn") != NULL;
		} else {
			other += w;
		}
	}
	print_message("running %llu ticks in %llu samples (%llu in wall_burn), sleep %llu (leave "
		      "said %u, slept %.1f ms), wait %llu in %llu (%llu in wall_burn), other %llu; the "
		      "sampler handed out %llu running "
		      "ticks (%llu not emitted at the end), ticks %llu-%llu of the grid\n",
		      (unsigned long long)running, (unsigned long long)n_running,
		      (unsigned long long)in_burn, (unsigned long long)sleeping, o.sleep_ticks,
		      (double)o.slept_ns / 1e6, (unsigned long long)waiting, (unsigned long long)n_wait,
		      (unsigned long long)wait_in_burn, (unsigned long long)other,
		      (unsigned long long)o.handed, (unsigned long long)o.unemitted,
		      (unsigned long long)o.attach_tick, (unsigned long long)o.end_tick);
	/* the call: one sample, the ticks it spanned (its length in periods,
	 * give or take the one its ends fall in; at least the call's, at most
	 * the call's with its marks) */
	assert_int_equal(n_sleep, 1);
	assert_int_equal(sleeping, o.sleep_ticks);
	assert_int_equal(o.in_calls, o.sleep_ticks);
	const double spanned = (double)o.slept_ns / PERIOD_NS;
	const double marked = (double)o.marked_ns / PERIOD_NS;
	assert_true((double)o.sleep_ticks >= spanned - 1.0 && (double)o.sleep_ticks <= marked + 1.0);
	/* the rest running, taken by the signal in the burning function.
	 * Natively nearly all (29 or 30 of 30) say "running".  Valgrind (with
	 * REC_TEST_SCALE set) delivers a signal to a thread only where it
	 * gives up the CPU, here in sched_yield, so every sample there can
	 * say "wait" (the pc on the syscall instruction: 31 of 31 once in CI)
	 * and often unwinds no further than libc (3 of 12 once): there at
	 * least one sample, running or wait, in the burning function. */
	assert_int_equal(other, 0);
	if (getenv("REC_TEST_SCALE") == NULL) {
		assert_true(n_running > 0);
		assert_true(in_burn * 2 >= n_running);
	} else {
		assert_true(n_running + n_wait > 0);
		assert_true(in_burn + wait_in_burn >= 1);
	}
	/* every tick of its life once: each running tick handed out is in one
	 * sample (but those whose signal had not come yet), and the handed
	 * and the call's cover the grid from its attach to the last look */
	assert_int_equal(running + waiting, o.handed - o.unemitted);
	assert_true(o.handed + o.in_calls >= o.caught_up_tick - o.attach_tick);
	assert_true(o.handed + o.in_calls <= o.end_tick - o.attach_tick + 1);
}

/* A worker that holds an emit of its own open (begin, 60 ms, commit) while
 * the sampler signals it (a 10 ms period: several signals inside), as the
 * preload's call-end sample is open when a signal comes right after
 * rec_wall_leave(): the handler must not begin a nested emit (dropped, its
 * ticks with it) but leave the ticks for the next signal. */
static rec_event_type *g_ev_type;
static const rec_field busy_fields[] = { { "n", "N", "", REC_TYPE_U64, REC_UNIT_COUNT } };
static const rec_type busy_def = { 0, REC_EVENT_HAS_THREAD, "test.Busy", "Busy", "", "test", 1,
				   busy_fields };

static void *busy_worker(void *p)
{
	worker_out *o = p;
	worker_start(o);
	wall_burn(50000000u);
	rec_emit e = { 0 };
	assert_true(rec_emit_begin(&e, g_ev_type));
	wall_burn(60000000u); /* inside the emit */
	rec_emit_u64(&e, 1);
	rec_emit_commit(&e);
	wall_burn(50000000u);
	worker_end(o);
	return NULL;
}

static void t_signal_inside_emit(void **state)
{
	(void)state;
	rec_wall_set_period(PERIOD_NS);
	rec_t_start(NULL);
	assert_int_equal(rec_recorder_register_type(rec_recorder_default(), &busy_def, 0, 0,
						    &g_ev_type),
			 REC_OK);
	worker_out o;
	memset(&o, 0, sizeof o);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, busy_worker, &o), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	rec_t_stop_and_load();
	rec_wall_set_period(0);
	uint64_t emitted = 0, dropped = 0;
	for (size_t i = 0; i < rec_t_nev; i++) {
		const rec_t_ev *e = &rec_t_evs[i];
		if (strcmp(e->type, "rec.WallSample") == 0 && e->tid == o.tid)
			emitted += rec_t_fu(e, "weight");
		if (strcmp(e->type, "rec.Dropped") == 0 &&
		    rec_t_fu(e, "type") == REC_TYPE_ID_WALL_SAMPLE) /* (the CPU sampler's own
								 * signals drop nested) */
			dropped += rec_t_fu(e, "count");
	}
	print_message("handed %llu running ticks, %llu not emitted, %llu in samples, %llu events "
		      "of rec.WallSample dropped\n", (unsigned long long)o.handed, (unsigned long long)o.unemitted,
		      (unsigned long long)emitted, (unsigned long long)dropped);
	assert_true(o.handed >= 10); /* 160 ms of running at 10 ms */
	assert_int_equal(emitted, o.handed - o.unemitted);
	assert_int_equal(dropped, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_running_and_sleep),
		cmocka_unit_test(t_signal_inside_emit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
