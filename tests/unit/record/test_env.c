/* SPDX-License-Identifier: MIT */
/*
 * test_env.c - env.c: the recorder started from the environment
 * (REC_OUTPUT, REC_OPTIONS) in a real exec'd helper, and the options' text
 * (rec_recorder_options_parse, rec_parse_size, rec_parse_duration_ns).
 * Moved from test_recorder.c: t_env_start, t_options_parse.  New: every
 * option's bad value is refused with an error naming the option and what
 * it accepts, at the edges of its range; a bad REC_OPTIONS and a failing
 * REC_OUTPUT are said on stderr once, in one line, and quiet=on says
 * nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rec/rec.h"
#include "rec/recorder.h"
#include "../../lib/roundtrip.h"
#include "record/recorder_internal.h" /* rec_parse_size, rec_parse_duration_ns */
#include "../../lib/tmpdir.h"

static char g_dir[256];

static void tmp_path(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", g_dir, name);
}

/* ---- REC_OUTPUT in an exec'd helper ------------------------------------------------------------ */
static void t_env_start(void **state)
{
	(void)state;
	char path[300], helper[512];
	tmp_path(path, sizeof path, "env.rec");
	/* the helper is built next to this test binary ($BUILD/tests) */
	char exe[400];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	assert_true(n > 0);
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	assert_non_null(slash);
	*slash = 0;
	snprintf(helper, sizeof helper, "%s/rec_test_recorder_env", exe);
	assert_int_equal(access(helper, X_OK), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("REC_OUTPUT", path, 1);
		setenv("REC_OPTIONS", "codec=lz4,flush=50ms,memory=4MiB,buffer=64KiB", 1);
		execl(helper, helper, "300", (char *)NULL);
		_exit(127);
	}
	int ws;
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
	rec_t_readback rb;
	rec_t_rb_read(path, &rb);
	assert_int_equal(rb.end, REC_END);
	assert_int_equal(rb.final_chunks, 1);
	assert_int_equal(rec_t_rb_count(&rb, "app.HelperEvent"), 300);
	for (size_t i = 0, k = 0; i < rb.n; i++)
		if (strcmp(rb.ev[i].type, "app.HelperEvent") == 0)
			assert_int_equal(rb.ev[i].u[0], k++);
	rec_t_rb_free(&rb);

	/* REC_OPTIONS flight=on: kept in memory, written to REC_OUTPUT at exit */
	char epath[300];
	tmp_path(epath, sizeof epath, "env-flight-%p.rec");
	pid = fork();
	if (pid == 0) {
		setenv("REC_OUTPUT", epath, 1);
		setenv("REC_OPTIONS", "flight=on,signal=none,maxsize=1MiB,events=app.*", 1);
		execl(helper, helper, "40", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
	tmp_path(epath, sizeof epath, "env-flight-");
	snprintf(epath + strlen(epath), sizeof epath - strlen(epath), "%d.rec", (int)pid);
	rec_t_rb_read(epath, &rb);
	assert_int_equal(rb.final_chunks, 1);
	assert_int_equal(rec_t_rb_count(&rb, "app.HelperEvent"), 40);
	assert_int_equal(rec_t_rb_count(&rb, "rec.ThreadStart"), 0); /* events=app.* */
	rec_t_rb_free(&rb);

	/* a flight recorder opened by the program and never closed is written at exit */
	char fpath[300];
	tmp_path(fpath, sizeof fpath, "flight-exit.rec");
	pid = fork();
	if (pid == 0) {
		unsetenv("REC_OUTPUT");
		execl(helper, helper, "25", "flight-api", fpath, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
	rec_t_rb_read(fpath, &rb);
	assert_int_equal(rb.end, REC_END);
	assert_int_equal(rec_t_rb_count(&rb, "app.HelperEvent"), 25);
	rec_t_rb_free(&rb);

	/* the program closes the REC_OUTPUT recorder itself: the exit handler
	 * must not close it again (was a use-after-free and a hang at exit) */
	char cpath[300];
	tmp_path(cpath, sizeof cpath, "env-close-self.rec");
	pid = fork();
	if (pid == 0) {
		setenv("REC_OUTPUT", cpath, 1);
		unsetenv("REC_OPTIONS");
		execl(helper, helper, "17", "close-self", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
	rec_t_rb_read(cpath, &rb);
	assert_int_equal(rb.end, REC_END);
	assert_int_equal(rb.final_chunks, 1);
	assert_int_equal(rec_t_rb_count(&rb, "app.HelperEvent"), 17);
	rec_t_rb_free(&rb);

	/* without REC_OUTPUT nothing is recorded and the declared type is off */
	pid = fork();
	if (pid == 0) {
		unsetenv("REC_OUTPUT");
		execl(helper, helper, "10", "expect-off", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
}

static void t_options_parse(void **state)
{
	(void)state;
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	char storage[256], err[128];
	assert_int_equal(rec_recorder_options_parse(&o, "codec=lz4,flush=500ms,memory=64MiB,"
						    "buffer=128KiB,full=wait,flight=on,maxage=2s,"
						    "maxsize=1MiB,signal=none,level=5,chunk=1MiB,"
						    "events=rec.LockWait:threshold=10ms:stack=on;app.*",
						    storage, sizeof storage, err, sizeof err),
			 REC_OK);
	assert_int_equal(o.codec, REC_CODEC_LZ4);
	assert_int_equal(o.flush_interval_ms, 500);
	assert_int_equal(o.memory_limit, 64u << 20);
	assert_int_equal(o.thread_buffer_size, 128u << 10);
	assert_int_equal(o.full_policy, REC_FULL_WAIT);
	assert_true(o.flags & REC_RECORDER_FLIGHT);
	assert_int_equal(o.max_age_ms, 2000);
	assert_int_equal(o.max_size, 1u << 20);
	assert_int_equal(o.dump_signal, -1);
	assert_int_equal(o.level, 5);
	assert_int_equal(o.chunk_size, 1u << 20);
	assert_string_equal(o.events, "rec.LockWait:threshold=10ms:stack=on,app.*");
	assert_int_equal(o.events_layout, REC_EVENTS_DEFAULT);
	assert_int_equal(rec_recorder_options_parse(&o, "layout=one", storage, sizeof storage, err,
						    sizeof err),
			 REC_OK);
	assert_int_equal(o.events_layout, REC_EVENTS_ONE_STREAM);
	assert_int_equal(rec_recorder_options_parse(&o, "layout=split", storage, sizeof storage, err,
						    sizeof err),
			 REC_OK);
	assert_int_equal(o.events_layout, REC_EVENTS_SPLIT);
	assert_int_equal(rec_recorder_options_parse(&o, "flush=fast", storage, sizeof storage, err,
						    sizeof err),
			 REC_ERR_INVALID_ARG);
	assert_non_null(strstr(err, "flush=fast"));
	assert_int_equal(rec_recorder_options_parse(&o, "bogus=1", storage, sizeof storage, NULL, 0),
			 REC_ERR_INVALID_ARG);
	/* symbolize: one of on (no flag), all, names, off; the last one given wins */
	const uint32_t sym = REC_RECORDER_NO_SYMBOLIZE | REC_RECORDER_ALL_SOURCES | REC_RECORDER_NO_SOURCES;
	static const struct {
		const char *text;
		uint32_t flags;
	} symb[] = { { "symbolize=all", REC_RECORDER_ALL_SOURCES },
		     { "symbolize=names", REC_RECORDER_NO_SOURCES },
		     { "symbolize=off", REC_RECORDER_NO_SYMBOLIZE },
		     { "symbolize=all,symbolize=on", 0 },
		     { "symbolize=off,symbolize=all", REC_RECORDER_ALL_SOURCES },
		     { "symbolize=0", REC_RECORDER_NO_SYMBOLIZE },
		     { "symbolize=1", 0 } };
	for (size_t i = 0; i < sizeof symb / sizeof symb[0]; i++) {
		o.flags = REC_RECORDER_FLIGHT | REC_RECORDER_NO_SOURCES;
		assert_int_equal(rec_recorder_options_parse(&o, symb[i].text, storage, sizeof storage, err,
							    sizeof err),
				 REC_OK);
		assert_int_equal(o.flags & sym, symb[i].flags);
		assert_true(o.flags & REC_RECORDER_FLIGHT);
	}
	assert_int_equal(rec_recorder_options_parse(&o, "symbolize=lines", storage, sizeof storage, err,
						    sizeof err),
			 REC_ERR_INVALID_ARG);
	assert_non_null(strstr(err, "symbolize is on"));
}


/* ---- every option's bad value, at the edges ----------------------------------- */
typedef struct bad_case {
	const char *text; /* REC_OPTIONS */
	const char *err;  /* the whole error */
} bad_case;

static void t_options_errors(void **state)
{
	(void)state;
	static const bad_case bad[] = {
		{ "codec=gzip", "bad option 'codec=gzip' (codec is none, zstd or lz4)" },
		{ "layout=two", "bad option 'layout=two' (layout is split (format 1.3: EVENTS in four "
				"streams, the default) or one (one stream, what readers of format 1.2 "
				"and older read))" },
		{ "level=101", "bad option 'level=101' (level is an integer from -100 to 100)" },
		{ "level=-101", "bad option 'level=-101' (level is an integer from -100 to 100)" },
		{ "level=1x", "bad option 'level=1x' (level is an integer from -100 to 100)" },
		{ "chunk=257MiB", "bad option 'chunk=257MiB' (chunk is a size up to 256MiB, like "
				  "1MiB or 65536)" },
		{ "flush=1h", "bad option 'flush=1h' (flush is a duration from 1ms to below 1h, "
			      "like 500ms or 2s)" },
		{ "flush=999us", "bad option 'flush=999us' (flush is a duration from 1ms to below "
				 "1h, like 500ms or 2s)" },
		{ "memory=0", "bad option 'memory=0' (memory is a size, like 64MiB)" },
		{ "buffer=1025MiB", "bad option 'buffer=1025MiB' (buffer is a size up to 1GiB, "
				    "like 256KiB)" },
		{ "full=block", "bad option 'full=block' (full is drop or wait)" },
		{ "flight=yes", "bad option 'flight=yes' (flight is on, off, 1 or 0)" },
		{ "signal=65", "bad option 'signal=65' (signal is a signal number from 1 to 64 or "
			       "none)" },
		{ "maxsize=12parsecs", "bad option 'maxsize=12parsecs' (maxsize is a size, like "
				       "64MiB)" },
		{ "codec", "bad option 'codec' (an option is key=value)" },
		{ "codec=lz4,threshold=5", "bad option 'threshold=5' (unknown option; a threshold "
					   "is set per type: events=PATTERN:threshold=DUR)" },
	};
	char storage[64], err[256];
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
		memset(err, 0, sizeof err);
		assert_int_equal(rec_recorder_options_parse(&o, bad[i].text, storage, sizeof storage,
							    err, sizeof err),
				 REC_ERR_INVALID_ARG);
		assert_string_equal(err, bad[i].err);
	}
	/* the edges that are in range, and empty entries */
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	assert_int_equal(rec_recorder_options_parse(&o, ",level=-100,,flush=1ms,buffer=1GiB,"
						    "signal=64,chunk=256MiB,full=drop,",
						    storage, sizeof storage, err, sizeof err),
			 REC_OK);
	assert_int_equal(o.level, -100);
	assert_int_equal(o.flush_interval_ms, 1);
	assert_int_equal(o.thread_buffer_size, 1u << 30);
	assert_int_equal(o.dump_signal, 64);
	assert_int_equal(o.chunk_size, 256u << 20);
	assert_int_equal(o.full_policy, REC_FULL_DROP);
	/* an events list longer than the storage given */
	char longer[200];
	snprintf(longer, sizeof longer, "events=%0100d", 7);
	assert_int_equal(rec_recorder_options_parse(&o, longer, storage, sizeof storage, err,
						    sizeof err),
			 REC_ERR_INVALID_ARG);
	assert_non_null(strstr(err, "(a list that fits the storage given)"));
	/* the sizes' units */
	assert_int_equal(rec_parse_size("65536", 5), 65536);
	assert_int_equal(rec_parse_size("1.5KiB", 6), 1536);
	assert_int_equal(rec_parse_size("2M", 2), 2 << 20);
	assert_int_equal(rec_parse_size("3GB", 3), INT64_C(3) << 30);
	assert_int_equal(rec_parse_size("3x", 2), -1);
	assert_int_equal(rec_parse_size("KiB", 3), -1);
	assert_int_equal(rec_parse_size("", 0), -1);
	assert_int_equal(rec_parse_duration_ns("500ms", 5), 500000000);
	assert_int_equal(rec_parse_duration_ns("2s", 2), 2000000000);
	assert_int_equal(rec_parse_duration_ns("fast", 4), -1);
}

/* ---- what goes wrong is said once ------------------------------------------------ */
/* Runs the helper (rec_test_recorder_env, next to this binary) with
 * REC_OUTPUT=out and REC_OPTIONS=opt (NULL: unset), its stderr into errf;
 * returns its wait status. */
static int run_helper(const char *out, const char *opt, const char *errf, const char *arg1,
		      const char *arg2)
{
	char exe[400], helper[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	assert_true(n > 0);
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	assert_non_null(slash);
	*slash = 0;
	snprintf(helper, sizeof helper, "%s/rec_test_recorder_env", exe);
	assert_int_equal(access(helper, X_OK), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(errf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || nul < 0 || dup2(fd, 2) < 0 || dup2(nul, 1) < 0)
			_exit(126);
		setenv("REC_OUTPUT", out, 1);
		if (opt)
			setenv("REC_OPTIONS", opt, 1);
		else
			unsetenv("REC_OPTIONS");
		execl(helper, helper, arg1, arg2, (char *)NULL);
		_exit(127);
	}
	int ws;
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	return ws;
}

/* The file's text (at most cap - 1 bytes). */
static void slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, cap - 1, f);
	buf[n] = 0;
	fclose(f);
}

static void t_env_said_once(void **state)
{
	(void)state;
	char out[300], errf[300], text[4096], want[600];
	tmp_path(errf, sizeof errf, "said.err");

	/* a bad REC_OPTIONS: one line, nothing recorded, no file */
	tmp_path(out, sizeof out, "bad-options.rec");
	int ws = run_helper(out, "flush=1s,full=block", errf, "10", "expect-off");
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
	slurp(errf, text, sizeof text);
	assert_string_equal(text, "rec: REC_OPTIONS=flush=1s,full=block: bad option 'full=block' "
				  "(full is drop or wait); not recording\n");
	assert_int_equal(access(out, F_OK), -1);

	/* the same with quiet=on: nothing said */
	ws = run_helper(out, "quiet=on,full=block", errf, "10", "expect-off");
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
	slurp(errf, text, sizeof text);
	assert_string_equal(text, "");

	/* a REC_OUTPUT in a directory that is not there */
	tmp_path(out, sizeof out, "no/such/dir/x.rec");
	ws = run_helper(out, NULL, errf, "10", "expect-off");
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
	slurp(errf, text, sizeof text);
	snprintf(want, sizeof want, "rec: REC_OUTPUT=%s: No such file or directory; not recording\n",
		 out);
	assert_string_equal(text, want);

	/* /dev/full: every chunk's write fails (one every 20 ms for 300 ms),
	 * said once */
	ws = run_helper("/dev/full", "flush=20ms", errf, "30", "paced");
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
	slurp(errf, text, sizeof text);
	assert_string_equal(text, "rec: REC_OUTPUT=/dev/full: No space left on device; events are "
				  "lost until a write succeeds\n");
}

int main(void)
{
	if (rec_t_tmpdir_create(g_dir, sizeof g_dir, "rec-test-env") != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_env_start),
		cmocka_unit_test(t_options_parse),
		cmocka_unit_test(t_options_errors),
		cmocka_unit_test(t_env_said_once),
	};
	return rec_t_tmpdir_finish(g_dir, cmocka_run_group_tests(tests, NULL, NULL));
}
