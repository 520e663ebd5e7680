/* SPDX-License-Identifier: MIT */
/*
 * test_process.c - process.c, rec.Process (which program a recording is
 * of), against /proc: in a real child process (this program exec'd again
 * with "process-child PATH EVENTS ARGS...") its program, executable,
 * command line and parent pid are what /proc/<child>/exe, its argv and
 * getppid say; one rec.Process at the start of every chunk that has
 * records, and none in a chunk without; a command line over 4096 bytes is
 * cut at 4096; "rec.Process:enabled=off", "-rec.Process", or an events
 * list that does not name it, leaves it out.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rec/rec.h"
#include "rec/recorder.h"
#include "../../lib/tmpdir.h"

static char g_dir[256];
static char g_self[512]; /* this program's path (readlink /proc/self/exe) */

static const rec_field tick_fields[] = {
	{ "seq", "Sequence", "", REC_TYPE_U64, REC_UNIT_COUNT },
};
static const rec_type tick_def = { 0, REC_EVENT_HAS_THREAD, "test.Tick", "Tick", "", "test", 1,
				   tick_fields };

/* ---- the child: three chunks with records (flushed one by one) ------------------ */
static int process_child(const char *path, const char *events)
{
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	o.flush_interval_ms = 60000; /* chunks only where the child flushes */
	o.events = *events ? events : NULL;
	rec_recorder *r = NULL;
	rec_event_type *t = NULL;
	if (rec_recorder_open(&r, &o) != REC_OK ||
	    rec_recorder_register_type(r, &tick_def, 0, 0, &t) != REC_OK)
		return 3;
	for (uint64_t c = 0; c < 3; c++) {
		for (uint64_t i = 0; i < 10; i++) {
			rec_emit e;
			if (rec_emit_begin(&e, t)) {
				rec_emit_u64(&e, c * 10 + i);
				rec_emit_commit(&e);
			}
		}
		if (rec_recorder_flush(r) != REC_OK)
			return 4;
	}
	/* a flush with nothing new: a chunk without records, or none */
	if (rec_recorder_flush(r) != REC_OK)
		return 5;
	return rec_recorder_close(r) == REC_OK ? 0 : 6;
}

/* ---- the test ------------------------------------------------------------------ */
typedef struct proc_seen {
	uint64_t chunks, chunks_with_ticks, processes, ticks;
	uint64_t process_in_empty; /* rec.Process in a chunk with no test.Tick */
	char program[256], exe[512], cmdline[8192];
	uint64_t ppid;
	int differ; /* two rec.Process records said different things */
} proc_seen;

static void copy_str(char *dst, size_t cap, const rec_value *v)
{
	size_t n = v->v.s.len < cap - 1 ? v->v.s.len : cap - 1;
	if (n)
		memcpy(dst, v->v.s.ptr, n);
	dst[n] = 0;
}

static void read_process(const char *path, proc_seen *s)
{
	memset(s, 0, sizeof *s);
	rec_reader *rd = NULL;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	const rec_chunk_info *ci;
	while (rec_reader_next_chunk(rd, &ci) == REC_OK) {
		assert_int_equal(rec_reader_verify_chunk(rd), REC_OK);
		s->chunks++;
		rec_event ev;
		uint64_t ticks = 0, procs = 0;
		rec_status st;
		while ((st = rec_reader_next_chunk_event(rd, &ev)) == REC_OK) {
			if (strcmp(ev.type->name, "test.Tick") == 0)
				ticks++;
			if (strcmp(ev.type->name, "rec.Process") == 0) {
				procs++;
				assert_int_equal(ev.value_count, 4);
				char prog[256], exe[512], cmd[8192];
				copy_str(prog, sizeof prog, &ev.values[0]);
				copy_str(exe, sizeof exe, &ev.values[1]);
				copy_str(cmd, sizeof cmd, &ev.values[2]);
				if (s->processes + procs > 1 &&
				    (strcmp(prog, s->program) || strcmp(exe, s->exe) ||
				     strcmp(cmd, s->cmdline) || s->ppid != ev.values[3].v.u))
					s->differ = 1;
				memcpy(s->program, prog, sizeof prog);
				memcpy(s->exe, exe, sizeof exe);
				memcpy(s->cmdline, cmd, sizeof cmd);
				s->ppid = ev.values[3].v.u;
			}
		}
		assert_int_equal(st, REC_END);
		s->ticks += ticks;
		s->processes += procs;
		s->chunks_with_ticks += ticks > 0;
		if (ticks == 0)
			s->process_in_empty += procs;
	}
	rec_reader_close(rd);
}

/* Runs the child (argv: process-child PATH EVENTS extra...) and waits for
 * it to exit 0. */
static void run_child(const char *path, const char *events, const char *extra1,
		      const char *extra2)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(g_self, g_self, "process-child", path, events, extra1, extra2, (char *)NULL);
		_exit(127);
	}
	int ws;
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
}

static void t_process_against_proc(void **state)
{
	(void)state;
	char path[300];
	snprintf(path, sizeof path, "%s/process.rec", g_dir);
	run_child(path, "", "two words", "x");
	proc_seen s;
	read_process(path, &s);
	print_message("%llu chunks, %llu with records, %llu rec.Process: program '%s' exe '%s' "
		      "command line '%s' parent %llu\n",
		      (unsigned long long)s.chunks, (unsigned long long)s.chunks_with_ticks,
		      (unsigned long long)s.processes, s.program, s.exe, s.cmdline,
		      (unsigned long long)s.ppid);
	assert_int_equal(s.ticks, 30);
	assert_true(s.chunks_with_ticks >= 3);
	/* one per chunk with records */
	assert_int_equal(s.processes, s.chunks_with_ticks);
	assert_int_equal(s.process_in_empty, 0);
	assert_int_equal(s.differ, 0);
	/* the child is this program exec'd: /proc/self/exe here is its
	 * executable; its argv joined by spaces; its parent is this process */
	assert_string_equal(s.exe, g_self);
	const char *base = strrchr(g_self, '/');
	assert_string_equal(s.program, base ? base + 1 : g_self);
	char want[1200];
	snprintf(want, sizeof want, "%s process-child %s  two words x", g_self, path);
	assert_string_equal(s.cmdline, want);
	assert_int_equal(s.ppid, (uint64_t)getpid());
}

/* A command line of more than 4096 bytes is cut at 4096. */
static void t_long_cmdline(void **state)
{
	(void)state;
	char path[300];
	snprintf(path, sizeof path, "%s/long.rec", g_dir);
	char *big = malloc(6001);
	assert_non_null(big);
	for (int i = 0; i < 6000; i++)
		big[i] = (char)('a' + i % 26);
	big[6000] = 0;
	run_child(path, "", big, "tail");
	proc_seen s;
	read_process(path, &s);
	char *want = malloc(8192);
	assert_non_null(want);
	snprintf(want, 8192, "%s process-child %s  %s tail", g_self, path, big);
	want[4096] = 0;
	assert_int_equal(strlen(s.cmdline), 4096);
	assert_string_equal(s.cmdline, want);
	assert_int_equal(s.processes, s.chunks_with_ticks);
	free(want);
	free(big);
}

/* The events list turns it off, like any type. */
static void t_off(void **state)
{
	(void)state;
	char path[300];
	proc_seen s;
	snprintf(path, sizeof path, "%s/off.rec", g_dir);
	run_child(path, "rec.Process:enabled=off", "x", "y");
	read_process(path, &s);
	assert_int_equal(s.ticks, 30);
	assert_int_equal(s.processes, 0);
	snprintf(path, sizeof path, "%s/neg.rec", g_dir);
	run_child(path, "-rec.Process", "x", "y");
	read_process(path, &s);
	assert_int_equal(s.ticks, 30);
	assert_int_equal(s.processes, 0);
	/* a list of types to record that does not name it */
	snprintf(path, sizeof path, "%s/list.rec", g_dir);
	run_child(path, "test.*", "x", "y");
	read_process(path, &s);
	assert_int_equal(s.ticks, 30);
	assert_int_equal(s.processes, 0);
	/* one that does */
	snprintf(path, sizeof path, "%s/named.rec", g_dir);
	run_child(path, "test.*,rec.Process", "x", "y");
	read_process(path, &s);
	assert_int_equal(s.ticks, 30);
	assert_int_equal(s.processes, s.chunks_with_ticks);
	assert_true(s.processes >= 3);
}

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "process-child") == 0)
		return process_child(argv[2], argv[3]);
	ssize_t n = readlink("/proc/self/exe", g_self, sizeof g_self - 1);
	if (n <= 0)
		return 1;
	g_self[n] = 0;
	if (rec_t_tmpdir_create(g_dir, sizeof g_dir, "rec-test-process") != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_process_against_proc),
		cmocka_unit_test(t_long_cmdline),
		cmocka_unit_test(t_off),
	};
	return rec_t_tmpdir_finish(g_dir, cmocka_run_group_tests(tests, NULL, NULL));
}
