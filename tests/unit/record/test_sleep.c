/* SPDX-License-Identifier: MIT */
/*
 * test_sleep.c - rec.Sleep and rec.CondWait (record/sleep.c) produced for
 * real: sleeps and condition waits (signalled and timed out) between real
 * threads, recorded to a file by the default recorder and read back with
 * the reader.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rec/builtins.h"
#include "rec/recorder.h"

#include "../../lib/readback.h"

/* ---- rec.Sleep -------------------------------------------------------------------- */

void sl_sleeper(void);
__attribute__((noinline)) void sl_sleeper(void)
{
	assert_int_equal(rec_sleep_ns(20u * 1000 * 1000), 0);
	assert_int_equal(rec_usleep(5000), 0);
	struct timespec ts = { 0, 7 * 1000 * 1000 };
	assert_int_equal(rec_nanosleep(&ts, NULL), 0);
}

static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static rec_mutex g_cmu = REC_MUTEX_INITIALIZER("cond.mutex");
static int g_flag;

void *cv_signaller(void *arg);
void *cv_signaller(void *arg)
{
	(void)arg;
	struct timespec ts = { 0, 30 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	assert_int_equal(rec_mutex_lock(&g_cmu), 0);
	g_flag = 1;
	pthread_cond_signal(&g_cond);
	assert_int_equal(rec_mutex_unlock(&g_cmu), 0);
	return NULL;
}

static void t_sleep_and_cond(void **state)
{
	(void)state;
	rec_t_start(NULL);
	sl_sleeper();
	g_flag = 0;
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, cv_signaller, NULL), 0);
	assert_int_equal(rec_mutex_lock(&g_cmu), 0);
	while (!g_flag)
		assert_int_equal(rec_cond_wait(&g_cond, &g_cmu), 0);
	/* A timed wait that times out 50 ms from now (under valgrind several
	 * ms can pass before the wrapper looks at the clock). */
	struct timespec abs;
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_nsec += 50 * 1000 * 1000;
	if (abs.tv_nsec >= 1000000000) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000;
	}
	assert_int_equal(rec_cond_timedwait(&g_cond, &g_cmu, &abs), ETIMEDOUT);
	assert_int_equal(g_cmu.holder, rec_t_my_tid()); /* holder restored after the wait */
	assert_int_equal(rec_mutex_unlock(&g_cmu), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	rec_t_stop_and_load();

	int sleeps = 0, conds = 0;
	const int64_t want_sleep[3] = { 20000000, 5000000, 7000000 };
	for (size_t i = 0; i < rec_t_nev; i++) {
		const rec_t_ev *e = &rec_t_evs[i];
		if (strcmp(e->type, "rec.Sleep") == 0) {
			/* Only the three sleeps: a condition wait is no rec.Sleep. */
			assert_int_equal(e->tid, rec_t_my_tid());
			assert_string_equal(rec_t_fs(e, "kind"), "sleep");
			assert_true(sleeps < 3);
			assert_int_equal(rec_t_fu(e, "requested"), (uint64_t)want_sleep[sleeps]);
			assert_true(e->dur_ns >= want_sleep[sleeps]);
			assert_int_equal(rec_t_fu(e, "objectAddress"), 0);
			char buf[128];
			assert_string_equal(rec_t_first_frame(e, buf, sizeof(buf)), "sl_sleeper");
			sleeps++;
		} else if (strcmp(e->type, "rec.CondWait") == 0) {
			assert_int_equal(e->tid, rec_t_my_tid());
			assert_int_equal(rec_t_fu(e, "condAddress"), (uintptr_t)&g_cond);
			assert_int_equal(rec_t_fu(e, "mutexAddress"), (uintptr_t)&g_cmu);
			assert_string_equal(rec_t_fs(e, "mutexName"), "cond.mutex");
			assert_true(e->has_stack);
			assert_true(rec_t_stack_has(e, "t_sleep_and_cond"));
			if (conds == 0) { /* woken by the signaller after ~30 ms */
				assert_int_equal(rec_t_fu(e, "timeout"), 0);
				assert_int_equal(rec_t_fu(e, "timed"), 0);
				assert_int_equal(rec_t_fu(e, "timedOut"), 0);
				assert_true(e->dur_ns >= 20 * 1000 * 1000);
			} else {          /* timed out */
				/* the timeout as the wrapper saw it at the start,
				 * and the wait lasted at least that (give or take
				 * 1 ms between the realtime and the event clocks) */
				const uint64_t to = rec_t_fu(e, "timeout");
				assert_true(to > 20 * 1000 * 1000);
				assert_true(to <= 50 * 1000 * 1000);
				assert_int_equal(rec_t_fu(e, "timed"), 1);
				assert_int_equal(rec_t_fu(e, "timedOut"), 1);
				assert_true((uint64_t)e->dur_ns + 1000 * 1000 >= to);
			}
			conds++;
		}
	}
	assert_int_equal(sleeps, 3);
	assert_int_equal(conds, 2);
}

/* One condition wait gives exactly one rec.CondWait and no rec.Sleep; one
 * sleep gives exactly one rec.Sleep and no rec.CondWait. */
static void t_cond_wait_own_type(void **state)
{
	(void)state;
	rec_t_start(NULL);
	g_flag = 0;
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, cv_signaller, NULL), 0);
	assert_int_equal(rec_mutex_lock(&g_cmu), 0);
	while (!g_flag)
		assert_int_equal(rec_cond_wait(&g_cond, &g_cmu), 0);
	assert_int_equal(rec_mutex_unlock(&g_cmu), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	rec_t_stop_and_load();
	/* Spurious wake-ups are allowed by POSIX: each wait is one event. */
	size_t waits = rec_t_count_type("rec.CondWait");
	assert_true(waits >= 1);
	assert_int_equal(rec_t_count_type("rec.Sleep"), 0);

	rec_t_start(NULL);
	assert_int_equal(rec_sleep_ns(2u * 1000 * 1000), 0);
	rec_t_stop_and_load();
	assert_int_equal(rec_t_count_type("rec.Sleep"), 1);
	assert_int_equal(rec_t_count_type("rec.CondWait"), 0);

	/* Its own events setting: off by name, the sleeps stay. */
	rec_t_start("-rec.CondWait");
	g_flag = 0;
	assert_int_equal(pthread_create(&th, NULL, cv_signaller, NULL), 0);
	assert_int_equal(rec_mutex_lock(&g_cmu), 0);
	while (!g_flag)
		assert_int_equal(rec_cond_wait(&g_cond, &g_cmu), 0);
	assert_int_equal(rec_mutex_unlock(&g_cmu), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(rec_sleep_ns(1000u * 1000), 0);
	rec_t_stop_and_load();
	assert_int_equal(rec_t_count_type("rec.CondWait"), 0);
	assert_int_equal(rec_t_count_type("rec.Sleep"), 1);

	/* and its own threshold: a 30 ms timed wait is kept at 5 ms, not at 1 s. */
	for (int pass = 0; pass < 2; pass++) {
		rec_t_start(pass == 0 ? "rec.CondWait:threshold=5ms" : "rec.CondWait:threshold=1s");
		struct timespec abs;
		clock_gettime(CLOCK_REALTIME, &abs);
		abs.tv_nsec += 30 * 1000 * 1000;
		if (abs.tv_nsec >= 1000000000) {
			abs.tv_sec++;
			abs.tv_nsec -= 1000000000;
		}
		assert_int_equal(rec_mutex_lock(&g_cmu), 0);
		int rc;
		while ((rc = rec_cond_timedwait(&g_cond, &g_cmu, &abs)) == 0)
			;
		assert_int_equal(rc, ETIMEDOUT);
		assert_int_equal(rec_mutex_unlock(&g_cmu), 0);
		rec_t_stop_and_load();
		size_t kept = 0;
		for (size_t i = 0; i < rec_t_nev; i++)
			if (strcmp(rec_t_evs[i].type, "rec.CondWait") == 0 &&
			    rec_t_fu(&rec_t_evs[i], "timedOut") == 1)
				kept++;
		assert_int_equal(kept, pass == 0 ? 1 : 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_sleep_and_cond),
		cmocka_unit_test(t_cond_wait_own_type),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
