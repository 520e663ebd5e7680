/* SPDX-License-Identifier: MIT */
/*
 * test_thread.c - thread.c's thread hooks (builtin_internal.h), the one way
 * the recorder core tells the built-ins about threads: a "seen" hook runs
 * once per thread and hook generation (again after rec_thread_seen_again),
 * and from the registration of a thread that emits; an "exit" hook runs in
 * an exiting registered thread while its buffer is live, so what it emits is
 * in the file before that thread's rec.ThreadEnd.  Real threads, a real
 * recorder writing a real file, read back with the reader.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec/rec.h"
#include "rec/recorder.h"
#include "record/builtin_internal.h"

static __thread unsigned tls_seen;   /* seen_hook calls in this thread */
static __thread unsigned tls_seen_b; /* seen_hook_b calls */
static unsigned g_exit_calls;        /* exit_hook calls (all threads) */
static rec_event_type *g_last;       /* set: exit_hook emits test.Last */

static void seen_hook(void) { tls_seen++; }
static void seen_hook_b(void) { tls_seen_b++; }

static void exit_hook(void)
{
	__atomic_add_fetch(&g_exit_calls, 1, __ATOMIC_RELAXED);
	rec_event_type *t = __atomic_load_n(&g_last, __ATOMIC_ACQUIRE);
	rec_emit e;
	if (t != NULL && rec_emit_begin(&e, t)) {
		rec_emit_u64(&e, 7);
		rec_emit_commit(&e);
	}
}

static const rec_field one_field[] = {
	{ "n", "N", "", REC_TYPE_U64, REC_UNIT_NONE },
};
static const rec_type ev_def = { 0, REC_EVENT_HAS_THREAD, "test.Ev", "", "", "test", 1, one_field };
static const rec_type last_def = { 0, REC_EVENT_HAS_THREAD, "test.Last", "", "", "test", 1,
				   one_field };

static void t_seen_once_per_generation(void **state)
{
	(void)state;
	assert_int_equal(rec_thread_hooks_add(seen_hook, NULL), REC_OK);
	unsigned before = tls_seen;
	rec_thread_seen_again();
	rec_thread_seen();
	rec_thread_seen();
	rec_thread_seen();
	assert_int_equal(tls_seen, before + 1);
	rec_thread_seen_again();
	rec_thread_seen();
	rec_thread_seen();
	assert_int_equal(tls_seen, before + 2);
}

static void t_same_hook_once(void **state)
{
	(void)state;
	assert_int_equal(rec_thread_hooks_add(seen_hook_b, NULL), REC_OK);
	assert_int_equal(rec_thread_hooks_add(seen_hook_b, NULL), REC_OK);
	rec_thread_seen_again();
	unsigned before = tls_seen_b;
	rec_thread_seen();
	assert_int_equal(tls_seen_b, before + 1); /* not 2: added once */
	assert_int_equal(rec_thread_hooks_add(NULL, NULL), REC_OK);
}

/* Eight distinct hooks at most: the table is fixed (no allocation while
 * threads run the hooks lock-free). */
#define FILLER(n) static void filler_##n(void) {}
FILLER(0) FILLER(1) FILLER(2) FILLER(3) FILLER(4) FILLER(5) FILLER(6) FILLER(7) FILLER(8)
static void t_table_full(void **state)
{
	(void)state;
	rec_thread_hook f[] = { filler_0, filler_1, filler_2, filler_3, filler_4,
				filler_5, filler_6, filler_7, filler_8 };
	size_t ok = 0;
	rec_status last = REC_OK;
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		last = rec_thread_hooks_add(NULL, f[i]);
		if (last != REC_OK)
			break;
		ok++;
	}
	assert_int_equal(last, REC_ERR_NOMEM);
	assert_true(ok >= 1 && ok <= 8);
}

typedef struct worker_arg {
	rec_event_type *ev;
	unsigned seen_after_emit;
	uint64_t tid;
} worker_arg;

static void *worker(void *p)
{
	worker_arg *a = p;
	rec_emit e;
	if (rec_emit_begin(&e, a->ev)) { /* registers the thread: seen hooks run */
		rec_emit_u64(&e, 1);
		rec_emit_commit(&e);
	}
	a->seen_after_emit = tls_seen;
	a->tid = (uint64_t)gettid();
	return NULL;
}

static void t_registration_and_exit(void **state)
{
	(void)state;
	char dir[] = "/tmp/rec-test-thread-XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/t.rec", dir);
	assert_int_equal(rec_thread_hooks_add(seen_hook, exit_hook), REC_OK);

	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	rec_recorder *r = NULL;
	assert_int_equal(rec_recorder_open(&r, &o), REC_OK);
	worker_arg a = { 0 };
	rec_event_type *last = NULL;
	assert_int_equal(rec_recorder_register_type(r, &ev_def, 0, 0, &a.ev), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &last_def, 0, 0, &last), REC_OK);
	__atomic_store_n(&g_last, last, __ATOMIC_RELEASE);
	unsigned exits0 = __atomic_load_n(&g_exit_calls, __ATOMIC_RELAXED);

	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, worker, &a), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(a.seen_after_emit, 1); /* a new thread: once, at registration */
	assert_true(__atomic_load_n(&g_exit_calls, __ATOMIC_RELAXED) >= exits0 + 1);
	__atomic_store_n(&g_last, NULL, __ATOMIC_RELEASE);
	assert_int_equal(rec_recorder_close(r), REC_OK);

	/* The worker's test.Last is in the file, before its rec.ThreadEnd. */
	rec_reader *rd;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	rec_event e;
	long idx = 0, last_at = -1, end_at = -1;
	uint64_t last_ticks = 0, end_ticks = 0;
	while (rec_reader_next_event(rd, &e) == REC_OK) {
		idx++;
		if (!e.thread || e.thread->os_tid != a.tid)
			continue;
		if (strcmp(e.type->name, "test.Last") == 0) {
			assert_int_equal(e.values[0].v.u, 7);
			last_at = idx;
			last_ticks = e.ticks;
		} else if (strcmp(e.type->name, "rec.ThreadEnd") == 0) {
			end_at = idx;
			end_ticks = e.ticks;
		}
	}
	rec_reader_close(rd);
	assert_true(last_at > 0);
	assert_true(end_at > last_at);
	assert_true(end_ticks >= last_ticks);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_seen_once_per_generation),
		cmocka_unit_test(t_same_hook_once),
		cmocka_unit_test(t_registration_and_exit),
		cmocka_unit_test(t_table_full),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
