/* SPDX-License-Identifier: MIT */
/*
 * test_crash.c - crash.c, the fatal-signal handler, in a real child
 * process (this program exec'd again with "crash-child PATH MODE": under
 * ASan with its own fatal-signal handling off, as tests/cli/recorder_crash.sh
 * does, and natively under valgrind, which does not follow an exec): the
 * child records from two threads with a flush interval longer than its
 * life, then dies of a real fault (a store to address 0x40), of SIGSEGV
 * sent by raise(), or of abort().  Checked: the child dies of that signal
 * (the previous disposition gets it back), and its file reads back clean
 * with every event emitted before the crash and one rec.Crash whose
 * signal, code, address, sender and thread are the truth.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rec/rec.h"
#include "rec/recorder.h"
#include "../../lib/tmpdir.h"

static char g_dir[256];
static char g_self[512]; /* this program's path */

#define FAULT_ADDR 0x40u
#define MAIN_EVENTS 100u
#define WORKER_EVENTS 500u

static const rec_field step_fields[] = {
	{ "seq", "Sequence", "", REC_TYPE_U64, REC_UNIT_COUNT },
};
static const rec_type step_def = { 0, REC_EVENT_HAS_THREAD, "test.Step", "Step", "", "test", 1,
				   step_fields };

/* ---- the child ----------------------------------------------------------------- */
static rec_event_type *g_step;

static void emit_steps(uint64_t from, uint64_t n)
{
	for (uint64_t i = from; i < from + n; i++) {
		rec_emit e;
		if (rec_emit_begin(&e, g_step)) {
			rec_emit_u64(&e, i);
			rec_emit_commit(&e);
		}
	}
}

static void *worker(void *arg)
{
	(void)arg;
	emit_steps(MAIN_EVENTS, WORKER_EVENTS);
	return NULL;
}

/* read at run time: the compiler sees no constant bad address */
static volatile uintptr_t g_fault_addr = FAULT_ADDR;

__attribute__((noinline)) static void crash_here(const char *mode)
{
	if (strcmp(mode, "fault") == 0)
		*(volatile int *)g_fault_addr = 1;
	else if (strcmp(mode, "raise") == 0)
		raise(SIGSEGV);
	else if (strcmp(mode, "abort") == 0)
		abort();
}

/* Records, then dies as MODE says; the exit statuses say what went wrong
 * before (the test expects death by a signal). */
static int crash_child(const char *path, const char *mode)
{
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	o.flush_interval_ms = 60000; /* nothing is written before the crash */
	o.full_policy = REC_FULL_WAIT;
	rec_recorder *r = NULL;
	if (rec_recorder_open(&r, &o) != REC_OK)
		return 3;
	if (rec_recorder_register_type(r, &step_def, 0, 0, &g_step) != REC_OK)
		return 4;
	emit_steps(0, MAIN_EVENTS);
	pthread_t th;
	if (pthread_create(&th, NULL, worker, NULL) != 0 || pthread_join(th, NULL) != 0)
		return 5;
	crash_here(mode);
	return 6; /* still alive */
}

/* ---- the test ------------------------------------------------------------------ */
typedef struct crash_seen {
	uint64_t steps, step_seq_sum, crashes;
	uint64_t signal, address, sender, os_tid, thread_os_tid, stack_depth;
	int64_t code;
	rec_status end;
} crash_seen;

static void read_crash_file(const char *path, crash_seen *c)
{
	memset(c, 0, sizeof *c);
	rec_reader *rd = NULL;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	const rec_chunk_info *ci;
	while (rec_reader_next_chunk(rd, &ci) == REC_OK)
		assert_int_equal(rec_reader_verify_chunk(rd), REC_OK);
	rec_reader_close(rd);
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	rec_event ev;
	while ((c->end = rec_reader_next_event(rd, &ev)) == REC_OK) {
		if (strcmp(ev.type->name, "test.Step") == 0) {
			c->steps++;
			c->step_seq_sum += ev.values[0].v.u;
		} else if (strcmp(ev.type->name, "rec.Crash") == 0) {
			assert_int_equal(ev.value_count, 5);
			c->crashes++;
			c->signal = ev.values[0].v.u;
			c->code = ev.values[1].v.i;
			c->address = ev.values[2].v.u;
			c->sender = ev.values[3].v.u;
			c->os_tid = ev.values[4].v.u;
			c->thread_os_tid = ev.thread ? ev.thread->os_tid : 0;
			c->stack_depth = ev.stack ? ev.stack->depth : 0;
		}
	}
	rec_reader_close(rd);
}

/* Runs the child in MODE on a new file; returns its pid, the wait status
 * in *ws. */
static pid_t run_child(const char *path, const char *mode, int *ws)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const char *asan = getenv("ASAN_OPTIONS");
		char opts[1024];
		snprintf(opts, sizeof opts, "%s%shandle_segv=0:handle_abort=0", asan ? asan : "",
			 asan && *asan ? ":" : "");
		setenv("ASAN_OPTIONS", opts, 1);
		execl(g_self, g_self, "crash-child", path, mode, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, ws, 0), pid);
	return pid;
}

static void check_common(const crash_seen *c, pid_t pid)
{
	assert_int_equal(c->end, REC_END);
	/* everything emitted before the crash, though no flush was due */
	assert_int_equal(c->steps, MAIN_EVENTS + WORKER_EVENTS);
	const uint64_t n = MAIN_EVENTS + WORKER_EVENTS;
	assert_int_equal(c->step_seq_sum, n * (n - 1) / 2);
	assert_int_equal(c->crashes, 1);
	/* the crashing thread is the child's main thread */
	assert_int_equal(c->os_tid, (uint64_t)pid);
	assert_int_equal(c->thread_os_tid, (uint64_t)pid);
	assert_true(c->stack_depth > 0);
}

/* The child run in mode, recording to FILE in the scratch directory, killed
 * by sig; its file read back into *c and checked as every crash is (its
 * signal sig).  The child's pid. */
static pid_t crashed(const char *file, const char *mode, int sig, crash_seen *c)
{
	char path[300];
	snprintf(path, sizeof path, "%s/%s", g_dir, file);
	int ws;
	pid_t pid = run_child(path, mode, &ws);
	assert_true(WIFSIGNALED(ws));
	assert_int_equal(WTERMSIG(ws), sig);
	read_crash_file(path, c);
	check_common(c, pid);
	assert_int_equal(c->signal, sig);
	return pid;
}

static void t_fault(void **state)
{
	(void)state;
	crash_seen c;
	crashed("fault.rec", "fault", SIGSEGV, &c);
	assert_true(c.code > 0); /* raised by the kernel */
	assert_int_equal(c.address, FAULT_ADDR);
	assert_int_equal(c.sender, 0);
}

static void t_raised(void **state)
{
	(void)state;
	crash_seen c;
	pid_t pid = crashed("raise.rec", "raise", SIGSEGV, &c);
	assert_true(c.code <= 0); /* sent */
	assert_int_equal(c.address, 0);
	assert_int_equal(c.sender, (uint64_t)pid);
}

static void t_abort(void **state)
{
	(void)state;
	crash_seen c;
	pid_t pid = crashed("abort.rec", "abort", SIGABRT, &c);
	assert_int_equal(c.address, 0);
	assert_int_equal(c.sender, (uint64_t)pid);
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "crash-child") == 0)
		return crash_child(argv[2], argv[3]);
	ssize_t n = readlink("/proc/self/exe", g_self, sizeof g_self - 1);
	if (n <= 0)
		return 1;
	g_self[n] = 0;
	if (rec_t_tmpdir_create(g_dir, sizeof g_dir, "rec-test-crash") != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_fault),
		cmocka_unit_test(t_raised),
		cmocka_unit_test(t_abort),
	};
	return rec_t_tmpdir_finish(g_dir, cmocka_run_group_tests(tests, NULL, NULL));
}
