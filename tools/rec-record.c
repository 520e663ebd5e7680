/* SPDX-License-Identifier: MIT */
/*
 * rec-record - record an unmodified program, in the shape of `perf record`
 * and `heaptrack`:
 *
 *   rec-record [OPTIONS] -- PROGRAM [ARGS...]
 *
 * runs PROGRAM with the preload library (librec-preload.so, found next to
 * this executable) and everything it needs in the environment: LD_PRELOAD
 * (put before what LD_PRELOAD already holds), REC_OUTPUT (an absolute
 * path) and REC_OPTIONS (the recorder's keys, rec_recorder_options_parse(), plus the
 * preload's cpu=, wall=, alloc=, io=, duration=, forks=; appended to any
 * REC_OPTIONS already set, so the last word is ours).  The program keeps
 * its standard streams, its environment otherwise and its exit status (a
 * program killed by signal N: exit 128 + N, as a shell says).  While it
 * runs, SIGINT and SIGQUIT are ignored here (the terminal sends them to the
 * program too) and SIGTERM, SIGHUP and SIGUSR2 are passed on to it.
 *
 * What can be known before the program starts is checked then, exit 2
 * with the reason: the options (through the recorder's own parser, which
 * knows the preload's keys and refuses those it does not implement), the
 * program (found on PATH; not a static executable, not set-uid or set-gid:
 * the loader would ignore LD_PRELOAD), the preload library, and the output
 * (created before the program is started).  At the end it prints the
 * file, the events recorded and dropped, read back through rec_summary
 * (rec/analysis.h), and the commands to look at it.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/tools.h"
#include "rec/analysis.h"
#include "rec/recorder.h"
#include "rec/rec.h"

#define PRELOAD_NAME "librec-preload.so"

/* ---- options into REC_OPTIONS -------------------------------------------- */

/* ",key=value" (no comma first). */
static void sb_kv(rec_cli_strbuf *b, const char *key, const char *value)
{
	if (b->len)
		rec_cli_strbuf_str(b, ",");
	rec_cli_strbuf_str(b, key);
	rec_cli_strbuf_str(b, "=");
	rec_cli_strbuf_str(b, value);
}

/* Checks text with the recorder's own REC_OPTIONS parser; false after the
 * usage message naming option (its message names the bad value and what
 * the key accepts). */
static bool recorder_accepts(const char *option, const char *text)
{
	rec_recorder_options ro = REC_RECORDER_OPTIONS_INIT;
	char storage[4096], msg[256];
	if (strlen(text) >= sizeof storage) {
		rec_cli_usage_fail("%s: too long", option);
		return false;
	}
	if (rec_recorder_options_parse(&ro, text, storage, sizeof storage, msg, sizeof msg) != REC_OK) {
		rec_cli_usage_fail("%s: %s", option, msg);
		return false;
	}
	return true;
}

static int discard(void *opaque, const void *buf, size_t len)
{
	(void)opaque, (void)buf, (void)len;
	return 0;
}

/* The events list (',' between entries) as the recorder would take it: it
 * is parsed when a recorder opens, so one is opened here on a sink that
 * discards everything (no file, no crash handler) and closed again; its
 * threads are gone before the program is started. */
static bool events_accepted(const char *list)
{
	rec_recorder_options ro = REC_RECORDER_OPTIONS_INIT;
	rec_sink sink = { discard, NULL, NULL };
	ro.sink = &sink;
	ro.flags = REC_RECORDER_NO_CRASH;
	ro.events = list;
	rec_recorder *r = NULL;
	rec_status st = rec_recorder_open(&r, &ro);
	if (st == REC_OK)
		(void)rec_recorder_close(r);
	if (st == REC_ERR_INVALID_ARG) {
		rec_cli_usage_fail("--events: bad events list '%s' (entries "
				   "PATTERN[:threshold=DUR][:stack=on|off][:enabled=on|off][:throttle=N/UNIT], "
				   "-PATTERN, separated by ',')",
				   list);
		return false;
	}
	if (st != REC_OK)
		rec_cli_error("--events: cannot check the list: %s", rec_strerror(st));
	return st == REC_OK;
}

static bool check_duration(const char *option, const char *v)
{
	int64_t ns;
	if (rec_cli_parse_duration(v, &ns))
		return true;
	rec_cli_usage_fail("%s: '%s' is not a duration (e.g. 10ms, 1.5s, 1min)", option, v);
	return false;
}

/* The REC_OPTIONS value for o into b; false after a usage message. */
static bool build_options(const rec_record_opts *o, rec_cli_strbuf *b)
{
	if (!o->flight && (o->max_age || o->max_size)) {
		rec_cli_usage_fail("%s needs --flight", o->max_age ? "--max-age" : "--max-size");
		return false;
	}
	if (o->events) {
		/* REC_OPTIONS separates its keys by ',': the list's ',' become ';'. */
		char *list = rec_cli_xstrdup(o->events);
		for (char *p = list; *p; p++)
			if (*p == ',')
				*p = ';';
		rec_cli_strbuf one = { 0 };
		sb_kv(&one, "events", list);
		bool ok = recorder_accepts("--events", one.s) && events_accepted(o->events);
		if (ok)
			rec_cli_strbuf_str(b, one.s);
		free(one.s);
		free(list);
		if (!ok)
			return false;
	}
	if (o->flight) {
		sb_kv(b, "flight", "on");
		if (o->max_age) {
			if (!check_duration("--max-age", o->max_age))
				return false;
			sb_kv(b, "maxage", o->max_age);
		}
		if (o->max_size) {
			rec_cli_strbuf one = { 0 };
			sb_kv(&one, "maxsize", o->max_size);
			bool ok = recorder_accepts("--max-size", one.s);
			free(one.s);
			if (!ok)
				return false;
			sb_kv(b, "maxsize", o->max_size);
		}
	}
	/* The preload's keys (libfmt/preload/): the recorder's parser knows
	 * them, checks their values (rates in Hz, sizes) and refuses what the
	 * library does not do yet, so that is said before the program starts.
	 * Durations are checked here first, with the one grammar. */
	static const struct {
		const char *option, *key;
		size_t off;
		bool duration;
	} keys[] = {
		{ "--cpu", "cpu", offsetof(rec_record_opts, cpu_hz), false },
		{ "--wall", "wall", offsetof(rec_record_opts, wall_hz), false },
		{ "--alloc-interval", "alloc", offsetof(rec_record_opts, alloc_interval), false },
		{ "--io-threshold", "io", offsetof(rec_record_opts, io_threshold), true },
		{ "--duration", "duration", offsetof(rec_record_opts, duration), true },
		{ "--symbolize", "symbolize", offsetof(rec_record_opts, symbolize), false },
	};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *v = *(const char *const *)((const char *)o + keys[i].off);
		if (!v)
			continue;
		if (keys[i].duration && !check_duration(keys[i].option, v))
			return false;
		rec_cli_strbuf one = { 0 };
		sb_kv(&one, keys[i].key, v);
		bool ok = recorder_accepts(keys[i].option, one.s);
		free(one.s);
		if (!ok)
			return false;
		sb_kv(b, keys[i].key, v);
	}
	if (o->follow_forks) {
		if (!recorder_accepts("--follow-forks", "forks=on"))
			return false;
		sb_kv(b, "forks", "on");
	}
	return true;
}

/* ---- the preload library and the output ---------------------------------- */

/* The preload library next to this executable: DIR/../lib/ (a build tree,
 * build/bin -> build/lib) or DIR/../lib/rec/ (make install: PREFIX/bin ->
 * PREFIX/lib/rec); then next to the librec.so this process runs with
 * (LIBDIR/ or LIBDIR/rec/), which is where it is when /proc/self/exe is
 * not this program (under valgrind it is valgrind's).  A heap copy, or NULL
 * after the message. */
static char *join(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 1;
	char *p = rec_cli_xmalloc(n);
	snprintf(p, n, "%s%s", a, b);
	return p;
}

static char *find_preload(void)
{
	char exe[PATH_MAX], lib[PATH_MAX];
	exe[0] = lib[0] = '\0';
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
	Dl_info info;
	if (dladdr((void *)rec_summary_open, &info) && info.dli_fname &&
	    strlen(info.dli_fname) < sizeof lib)
		memcpy(lib, info.dli_fname, strlen(info.dli_fname) + 1);
	/* exe: the directory above this program's; lib: librec.so's; both as
	 * realpath gives them (for the message, and to look once per place). */
	char *slash, real[2][PATH_MAX];
	if ((slash = strrchr(exe, '/')))
		memcpy(slash, "/..", 4);
	if ((slash = strrchr(lib, '/')))
		*slash = '\0';
	if (!realpath(exe, real[0]))
		real[0][0] = '\0';
	if (!realpath(lib, real[1]))
		real[1][0] = '\0';
	const char *base[4] = { real[0], real[0], real[1], real[1] };
	static const char *const rel[4] = { "/lib", "/lib/rec", "", "/rec" };
	char *tried[4] = { NULL, NULL, NULL, NULL };
	size_t ntried = 0;
	char *found = NULL;
	for (size_t i = 0; i < 4 && !found; i++) {
		if (!base[i][0])
			continue;
		char *dir = join(base[i], rel[i]);
		char *file = join(dir, "/" PRELOAD_NAME);
		free(dir);
		bool seen = false;
		for (size_t j = 0; j < ntried; j++)
			seen |= strcmp(tried[j], file) == 0;
		if (seen) {
			free(file);
			continue;
		}
		if (access(file, R_OK) == 0)
			found = rec_cli_xstrdup(file);
		tried[ntried++] = file;
	}
	if (!found) {
		char *list = rec_cli_xstrdup(ntried ? "" : "(cannot find this program's directory)");
		for (size_t i = 0; i < ntried; i++) {
			char *a = join(list, i ? (i + 1 == ntried ? " and " : ", ") : "");
			char *b = join(a, tried[i]);
			free(a);
			free(list);
			list = b;
		}
		rec_cli_error("the preload library " PRELOAD_NAME " is missing: looked for %s "
			      "(build it with make, or install it with make install)",
			      list);
		free(list);
	}
	for (size_t i = 0; i < ntried; i++)
		free(tried[i]);
	return found;
}

/* The output's absolute path for the program's pid: o->output, or
 * PROGRAM-PID.rec, made absolute against the current directory (the
 * program may change directory).  A heap copy. */
static char *output_path(const rec_record_opts *o, const char *program, pid_t pid)
{
	char name[PATH_MAX];
	if (o->output)
		snprintf(name, sizeof name, "%s", o->output);
	else
		snprintf(name, sizeof name, "%s-%ld.rec", basename(program), (long)pid);
	if (name[0] == '/')
		return rec_cli_xstrdup(name);
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd))
		return rec_cli_xstrdup(name);
	size_t len = strlen(cwd) + strlen(name) + 2;
	char *abs = rec_cli_xmalloc(len);
	snprintf(abs, len, "%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd, name);
	return abs;
}

/* ---- running the program ----------------------------------------------- */

/* What the child reports through its close-on-exec pipe when it does not
 * get to run the program (nothing comes when exec succeeds). */
enum { CHILD_OUTPUT = 1, CHILD_ENV, CHILD_EXEC };
typedef struct child_report {
	int stage, err;
} child_report;

REC_CLI_NORETURN static void child_fail(int fd, int stage, int err)
{
	child_report r = { stage, err };
	ssize_t n = write(fd, &r, sizeof r);
	(void)n;
	_exit(127);
}

/* The environment variable name=value, with ours before what it held
 * (LD_PRELOAD: ':' between; REC_OPTIONS: ',' and ours after, so they win). */
static int env_join(const char *name, const char *ours, bool ours_first, char sep)
{
	const char *old = getenv(name);
	if (!old || !*old)
		return setenv(name, ours, 1);
	size_t len = strlen(old) + strlen(ours) + 2;
	char *v = malloc(len);
	if (!v)
		return -1;
	if (ours_first)
		snprintf(v, len, "%s%c%s", ours, sep, old);
	else
		snprintf(v, len, "%s%c%s", old, sep, ours);
	int rc = setenv(name, v, 1);
	free(v);
	return rc;
}

/* In the child: create the output, set the environment, run the program. */
REC_CLI_NORETURN static void child_main(const rec_record_opts *o, const char *path, char *const argv[],
					 const char *preload, const char *options, int report_fd,
					 const sigset_t *mask)
{
	char *out = output_path(o, argv[0], getpid());
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		int err = errno;
		free(out); /* nothing of this process is left at _exit or exec */
		child_fail(report_fd, CHILD_OUTPUT, err);
	}
	close(fd);
	int rc = setenv("REC_OUTPUT", out, 1);
	free(out);
	if (rc != 0 || env_join("LD_PRELOAD", preload, true, ':') != 0 ||
	    (*options && env_join("REC_OPTIONS", options, false, ',') != 0))
		child_fail(report_fd, CHILD_ENV, errno);
	sigprocmask(SIG_SETMASK, mask, NULL);
	execv(path, argv);
	child_fail(report_fd, CHILD_EXEC, errno);
}

static volatile sig_atomic_t g_child;

static void forward_signal(int sig)
{
	int saved = errno;
	if (g_child > 0)
		kill((pid_t)g_child, sig);
	errno = saved;
}

static const int forwarded[] = { SIGTERM, SIGHUP, SIGUSR2 };
static const int ignored[] = { SIGINT, SIGQUIT };
#define NSIG_HANDLED 5

/* Starts the program and waits for it; its exit status as a shell gives it
 * in *status.  false after a message (it did not start). */
static bool run_program(const rec_record_opts *o, const char *path, char *const argv[],
			const char *preload, const char *options, pid_t *pid_out, int *status)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		rec_cli_error("pipe: %s", strerror(errno));
		return false;
	}
	/* Signals to handle are blocked across fork, so that none is lost
	 * between the fork and the handlers being in place. */
	sigset_t block, old;
	sigemptyset(&block);
	for (size_t i = 0; i < 3; i++)
		sigaddset(&block, forwarded[i]);
	for (size_t i = 0; i < 2; i++)
		sigaddset(&block, ignored[i]);
	sigprocmask(SIG_BLOCK, &block, &old);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		rec_cli_error("fork: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(pfd[0]);
		close(pfd[1]);
		return false;
	}
	if (pid == 0) {
		close(pfd[0]);
		child_main(o, path, argv, preload, options, pfd[1], &old);
	}
	close(pfd[1]);
	*pid_out = pid;
	g_child = pid;
	struct sigaction sa, saved[NSIG_HANDLED];
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = forward_signal;
	for (size_t i = 0; i < 3; i++)
		sigaction(forwarded[i], &sa, &saved[i]);
	sa.sa_handler = SIG_IGN;
	for (size_t i = 0; i < 2; i++)
		sigaction(ignored[i], &sa, &saved[3 + i]);
	sigprocmask(SIG_SETMASK, &old, NULL);

	child_report r = { 0, 0 };
	ssize_t n;
	do
		n = read(pfd[0], &r, sizeof r);
	while (n < 0 && errno == EINTR);
	close(pfd[0]);

	int ws = 0;
	pid_t w;
	do
		w = waitpid(pid, &ws, 0);
	while (w < 0 && errno == EINTR);
	g_child = 0;
	for (size_t i = 0; i < 3; i++)
		sigaction(forwarded[i], &saved[i], NULL);
	for (size_t i = 0; i < 2; i++)
		sigaction(ignored[i], &saved[3 + i], NULL);

	if (n == (ssize_t)sizeof r && r.stage) {
		char *out = output_path(o, argv[0], pid);
		if (r.stage == CHILD_OUTPUT)
			rec_cli_file_error(out, "cannot create the recording: %s", strerror(r.err));
		else if (r.stage == CHILD_ENV)
			rec_cli_error("cannot set the environment: %s", strerror(r.err));
		else
			rec_cli_file_error(path, "cannot run it: %s", strerror(r.err));
		free(out);
		return false;
	}
	if (w < 0) {
		rec_cli_error("waitpid: %s", strerror(errno));
		*status = REC_EXIT_DATA;
	} else if (WIFSIGNALED(ws)) {
		*status = 128 + WTERMSIG(ws);
	} else {
		*status = WEXITSTATUS(ws);
	}
	return true;
}

/* ---- the report at the end ------------------------------------------------ */

static void report(const char *out, const char *program_status)
{
	FILE *e = rec_cli_err();
	const char *tool = rec_cli_tool();
	rec_summary *s = NULL;
	if (rec_summary_open(&s) != REC_OK) {
		rec_cli_error("out of memory");
		return;
	}
	if (rec_summary_add_path(s, out, REC_SUMMARY_DROPS) != REC_OK) {
		rec_cli_file_error(out, "cannot read the recording: %s", rec_summary_errmsg(s));
		rec_summary_close(s);
		return;
	}
	const rec_summary_result *res = rec_summary_get(s);
	char size[64], num[32];
	rec_fmt_bytes(size, res->total_size);
	if (!res->chunks) {
		fprintf(e, "%s: %s: nothing was recorded (%s; the preload library says why above, "
			   "unless REC_OPTIONS has quiet=on)\n",
			tool, out, program_status);
		rec_summary_close(s);
		return;
	}
	fprintf(e, "%s: %s: %s, %" PRIu64 " events recorded, %" PRIu64 " dropped (%s)\n", tool, out,
		size, res->events, res->dropped, program_status);
	/* Events per type, most first, on one line (types without events left out). */
	fprintf(e, "%s:   events:", tool);
	size_t shown = 0, more = 0;
	for (size_t i = 0; i < res->type_count; i++) {
		if (!res->types[i].count)
			continue;
		if (shown == 8) {
			more++;
			continue;
		}
		fprintf(e, "%s %" PRIu64 " %s", shown ? "," : "", res->types[i].count, res->types[i].name);
		shown++;
	}
	if (more)
		fprintf(e, ", and %zu more types", more);
	fputc('\n', e);
	if (res->drop_count) {
		fprintf(e, "%s:   dropped:", tool);
		for (size_t i = 0; i < res->drop_count && i < 8; i++) {
			const char *reason = rec_drop_reason_name(res->drops[i].reason);
			if (!reason) {
				snprintf(num, sizeof num, "reason %u", (unsigned)res->drops[i].reason);
				reason = num;
			}
			fprintf(e, "%s %" PRIu64 " %s (%s)", i ? "," : "", res->drops[i].count,
				res->drops[i].type, reason);
		}
		if (res->drop_count > 8)
			fprintf(e, ", and %zu more", res->drop_count - 8);
		fputc('\n', e);
	}
	if (res->problem_count)
		fprintf(e, "%s:   %zu problems reading it (a program killed before the recording was "
			   "finished leaves a cut end): rec-check %s\n",
			tool, res->problem_count, out);
	/* The flame graph's page beside the recording: FILE without .rec, .html. */
	size_t n = strlen(out);
	int stem = (int)(n > 4 && strcmp(out + n - 4, ".rec") == 0 ? n - 4 : n);
	fprintf(e, "%s: look at it with: rec-report %s\n", tool, out);
	fprintf(e, "%s:                   rec-view contention-by-lock %s   (rec-view --list: the others)\n",
		tool, out);
	fprintf(e, "%s:                   rec-flame -o %.*s.html %s   (CPU; --event rec.LockWait, rec.Alloc ...)\n",
		tool, stem, out, out);
	rec_summary_close(s);
}

/* --follow-forks: the recordings of children and exec'd programs beside out
 * (its name with ".PID" or ".PID-N" and more before the extension) written
 * since the program started (older ones are an earlier run's). */
static void report_forks(const char *out, time_t since)
{
	const char *slash = strrchr(out, '/');
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - out) : 1, slash ? out : ".");
	const char *name = slash ? slash + 1 : out;
	const char *dot = strrchr(name, '.');
	size_t stem = dot && dot != name ? (size_t)(dot - name) : strlen(name);
	const char *ext = name + stem;
	struct dirent **ents = NULL;
	int count = scandir(dir[0] ? dir : "/", &ents, NULL, alphasort);
	if (count < 0)
		return;
	unsigned long n = 0;
	for (int i = 0; i < count; i++) {
		const char *f = ents[i]->d_name;
		size_t fl = strlen(f), el = strlen(ext);
		char path[PATH_MAX];
		struct stat st;
		if (fl > stem + 1 + el && strncmp(f, name, stem) == 0 && f[stem] == '.' &&
		    f[stem + 1] >= '0' && f[stem + 1] <= '9' && strcmp(f + fl - el, ext) == 0 &&
		    snprintf(path, sizeof path, "%s/%s", dir, f) < (int)sizeof path &&
		    stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_mtime >= since)
			n++;
		free(ents[i]);
	}
	free(ents);
	fprintf(rec_cli_err(), "%s:   --follow-forks: %lu more recording%s beside it, one per child and "
		"exec'd program (%.*s.PID%s)\n", rec_cli_tool(), n, n == 1 ? "" : "s", (int)stem, name, ext);
}

/* ---- the run function -------------------------------------------------------- */

int rec_record_run(const rec_record_opts *o, char *const argv[], FILE *err)
{
	rec_cli_set_streams(NULL, err);
	if (!argv || !argv[0])
		return rec_cli_usage_fail("no program to record (rec-record [OPTIONS] -- PROGRAM [ARGS...])");
	rec_cli_strbuf options = { 0 };
	rec_cli_strbuf_str(&options, "");
	if (!build_options(o, &options)) {
		free(options.s);
		return REC_EXIT_USAGE;
	}
	int e = 0, rc = REC_EXIT_USAGE;
	char *path = rec_cli_program_find(argv[0], &e);
	char *preload = NULL;
	if (!path) {
		rec_cli_error("%s: %s", argv[0],
			      e == ENOENT ? (strchr(argv[0], '/') ? "no such file"
								   : "no such program on PATH")
					  : strerror(e));
		goto out;
	}
	rec_cli_program_kind kind = rec_cli_program_check(path, &e);
	switch (kind) {
	case REC_PROGRAM_DYNAMIC:
	case REC_PROGRAM_NOT_ELF:
		break;
	case REC_PROGRAM_STATIC:
		rec_cli_error("%s: a static executable (no dynamic loader): the preload library "
			      "cannot be loaded into it, nothing would be recorded",
			      path);
		goto out;
	case REC_PROGRAM_SETUID:
	case REC_PROGRAM_SETGID:
		rec_cli_error("%s: set-%cid: the dynamic loader ignores LD_PRELOAD for it "
			      "(secure-execution mode), nothing would be recorded",
			      path, kind == REC_PROGRAM_SETUID ? 'u' : 'g');
		goto out;
	case REC_PROGRAM_UNREADABLE:
		rec_cli_error("%s: %s", path, strerror(e));
		goto out;
	}
	preload = find_preload();
	if (!preload)
		goto out;
	pid_t pid = 0;
	int status = 0;
	time_t started = time(NULL);
	if (!run_program(o, path, argv, preload, options.s, &pid, &status))
		goto out;
	rc = status;
	if (!o->quiet) {
		char *out = output_path(o, argv[0], pid);
		char what[64];
		if (status > 128)
			snprintf(what, sizeof what, "the program was killed by signal %d", status - 128);
		else
			snprintf(what, sizeof what, "the program exited with status %d", status);
		report(out, what);
		if (o->follow_forks)
			report_forks(out, started);
		free(out);
	}
out:
	free(preload);
	free(path);
	free(options.s);
	return rc;
}

#ifndef REC_TOOL_NO_MAIN
static const char usage_text[] =
	"Usage: rec-record [OPTIONS] [--] PROGRAM [ARGS...]\n"
	"Runs PROGRAM with the preload library (" PRELOAD_NAME ") and records it, unmodified,\n"
	"from its first instruction to its exit: threads, CPU samples, lock waits, condition\n"
	"waits, sleeps, sampled allocations, blocking I/O.\n"
	"\n"
	"  -o, --output FILE       the recording (default: PROGRAM-PID.rec in the current directory)\n"
	"      --events LIST       which event types, the recorder's grammar (rec/recorder.h, events):\n"
	"                          '*,rec.LockWait:threshold=1ms,-rec.Sleep' (a list that names\n"
	"                          types records only those: '*' first keeps the others)\n"
	"      --flight            flight-recorder mode: recent data kept in memory, written on\n"
	"                          SIGUSR2, on a crash and at exit\n"
	"      --max-age DUR       with --flight: keep this much (e.g. 30s, 5min)\n"
	"      --max-size SIZE     with --flight: keep this many bytes (e.g. 64MiB)\n"
	"      --duration DUR      stop recording after DUR; the program goes on\n"
	"      --cpu HZ            CPU samples per second of a thread's CPU time (0: off)\n"
	"      --wall HZ           wall-clock samples of every thread, running or waiting, HZ\n"
	"                          times a second (1-1000; default off): rec.WallSample, state\n"
	"                          running, lock, cond, sleep, io or poll (poll/select/epoll waits;\n"
	"                          as events, rec.Poll, only when asked: --events '*,rec.Poll');\n"
	"                          a waiting thread is never interrupted (see rec-view wall-by-site,\n"
	"                          rec-flame --wall)\n"
	"      --alloc-interval SIZE  mean bytes between sampled allocations (e.g. 512KiB; 0: off)\n"
	"      --io-threshold DUR  record blocking reads, writes, accepts ... that last longer\n"
	"      --symbolize MODE    how frames are named while recording: on (the default: names\n"
	"                          everywhere; files, lines and inlined frames for the program and\n"
	"                          its libraries outside /lib and /usr/lib), all (those for the\n"
	"                          system's libraries too: libc's debug information costs ~70 ms\n"
	"                          of CPU and ~16 MB), names, or off (module+offset; rec-symbolize\n"
	"                          names them later)\n"
	"      --follow-forks      record each forked child and each exec'd program into FILE\n"
	"                          with its pid inserted (out.rec -> out.PID.rec; a second image\n"
	"                          of the same pid, exec'd: out.PID-2.rec); without it they are\n"
	"                          not recorded\n"
	"  -q, --quiet             no report at the end\n"
	"  -h, --help              this help\n"
	"      --version           the library version\n"
	"\n"
	"Durations: 10ms, 1.5s, 1min (a bare number is seconds).  Sizes: 4096, 512KiB, 64MiB.\n"
	"The program keeps its standard streams, environment and exit status (killed by\n"
	"signal N: 128+N); an existing LD_PRELOAD is kept after the preload library, and\n"
	"an existing REC_OPTIONS before these options.  SIGINT and SIGQUIT reach the program\n"
	"from the terminal; SIGTERM, SIGHUP and SIGUSR2 sent to rec-record are passed on.\n"
	"Exit: the program's status; 2 when it could not be started (bad options, no such\n"
	"program, a static or set-uid/set-gid executable, an output that cannot be created,\n"
	"no preload library).\n";

enum {
	OPT_EVENTS = 256,
	OPT_FLIGHT,
	OPT_MAX_AGE,
	OPT_MAX_SIZE,
	OPT_DURATION,
	OPT_CPU,
	OPT_WALL,
	OPT_ALLOC,
	OPT_IO,
	OPT_FORKS,
	OPT_SYMBOLIZE
};
static const struct option long_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "events", required_argument, NULL, OPT_EVENTS },
	{ "flight", no_argument, NULL, OPT_FLIGHT },
	{ "max-age", required_argument, NULL, OPT_MAX_AGE },
	{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "wall", required_argument, NULL, OPT_WALL },
	{ "alloc-interval", required_argument, NULL, OPT_ALLOC },
	{ "io-threshold", required_argument, NULL, OPT_IO },
	{ "follow-forks", no_argument, NULL, OPT_FORKS },
	{ "symbolize", required_argument, NULL, OPT_SYMBOLIZE },
	{ "quiet", no_argument, NULL, 'q' },
	REC_CLI_COMMON_OPTIONS,
};

int main(int argc, char **argv)
{
	rec_cli_init("rec-record");
	/* librec's constructor records every process it is in whose
	 * environment has REC_OUTPUT, so also this one: say so. */
	if (rec_recorder_default())
		rec_cli_error("REC_OUTPUT=%s is in rec-record's own environment: rec-record itself is "
			      "recorded there (the program's recording is -o's or PROGRAM-PID.rec; unset it)",
			      getenv("REC_OUTPUT") ? getenv("REC_OUTPUT") : "");
	rec_record_opts o = { 0 };
	int c;
	/* '+': options end at PROGRAM, whose own options are its own. */
	while ((c = rec_cli_getopt(argc, argv, "+o:qh", long_opts)) != -1) {
		switch (c) {
		case 'o': o.output = optarg; break;
		case OPT_EVENTS: o.events = optarg; break;
		case OPT_FLIGHT: o.flight = true; break;
		case OPT_MAX_AGE: o.max_age = optarg; break;
		case OPT_MAX_SIZE: o.max_size = optarg; break;
		case OPT_DURATION: o.duration = optarg; break;
		case OPT_CPU: o.cpu_hz = optarg; break;
		case OPT_WALL: o.wall_hz = optarg; break;
		case OPT_ALLOC: o.alloc_interval = optarg; break;
		case OPT_IO: o.io_threshold = optarg; break;
		case OPT_FORKS: o.follow_forks = true; break;
		case OPT_SYMBOLIZE: o.symbolize = optarg; break;
		case 'q': o.quiet = true; break;
		default: rec_cli_common_option(c, usage_text);
		}
	}
	if (o.output && !*o.output)
		rec_cli_usage_error("-o: an empty file name");
	if (optind >= argc)
		rec_cli_usage_error("no program to record (rec-record [OPTIONS] -- PROGRAM [ARGS...])");
	int rc = rec_record_run(&o, argv + optind, NULL);
	return rec_cli_finish(rc);
}
#endif /* REC_TOOL_NO_MAIN */
