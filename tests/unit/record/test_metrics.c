/* SPDX-License-Identifier: MIT */
/*
 * test_metrics.c - counters, gauges, process statistics and log lines
 * (rec/metrics.h) recorded by a real default recorder into a real file and
 * read back with the reader.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rec/archive.h"
#include "rec/counters.h"
#include "rec/metrics.h"
#include "rec/rec.h"
#include "rec/recorder.h"

#include "../../lib/asan.h"
#include "../../lib/child_exit.h"
#include "../../lib/scale.h"
#include "../../lib/tmpdir.h"

/* ---- a default recorder to a temporary file ------------------------------- */
static char rec_path[64];

/* A new empty file under /tmp; its name into p. */
static void new_path(char *p, size_t size)
{
	snprintf(p, size, "/tmp/test_metrics.XXXXXX");
	int fd = mkstemp(p);
	assert_true(fd >= 0);
	close(fd);
}


static void start_default_every(uint32_t period_ms)
{
	new_path(rec_path, sizeof rec_path);
	assert_int_equal(rec_metrics_set_periods(period_ms, period_ms), REC_OK);
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.flags = REC_RECORDER_DEFAULT;
	o.path = rec_path;
	o.flush_interval_ms = period_ms;
	rec_recorder *r = NULL;
	assert_int_equal(rec_recorder_open(&r, &o), REC_OK);
	assert_ptr_equal(rec_recorder_default(), r);
}

/* Long periods: the tests sample explicitly; the periodic tasks then run
 * only once more, at close. */
static void start_default(void) { start_default_every(3600 * 1000); }

static void stop_default(void)
{
	rec_recorder *r = rec_recorder_default();
	assert_non_null(r);
	assert_int_equal(rec_recorder_close(r), REC_OK);
	assert_null(rec_recorder_default());
}

/* ---- reading events back ------------------------------------------------- */
#define MAX_SEEN 64
typedef struct seen {
	size_t n;
	uint64_t u[MAX_SEEN][8];  /* unsigned values */
	int64_t i[MAX_SEEN][8];   /* signed values */
	char s[MAX_SEEN][8][256]; /* string/text values (truncated copy) */
	size_t len[MAX_SEEN][8];  /* full string/text lengths */
	char thread[MAX_SEEN][32];
	uint64_t ticks[MAX_SEEN];
} seen;

static const rec_value *field(const rec_event *ev, const char *name)
{
	for (uint32_t i = 0; i < ev->value_count; i++)
		if (strcmp(ev->type->fields[i].name, name) == 0)
			return &ev->values[i];
	return NULL;
}

/* Collect the events of type `type` (and, if name_filter, whose "name" field
 * equals it), in timestamp order, into *out. */
static void collect(const char *type, const char *name_filter, seen *out)
{
	memset(out, 0, sizeof *out);
	rec_reader *rd = NULL;
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.flags = REC_READ_ORDERED; /* timestamp order: samples come from two threads */
	assert_int_equal(rec_reader_open_path(&rd, rec_path, &ro), REC_OK);
	rec_event ev;
	rec_status st;
	while ((st = rec_reader_next_event(rd, &ev)) == REC_OK) {
		if (strcmp(ev.type->name, type) != 0)
			continue;
		if (name_filter) {
			const rec_value *nv = field(&ev, "name");
			assert_non_null(nv);
			if (!nv->v.s.ptr || strlen(name_filter) != nv->v.s.len ||
			    memcmp(nv->v.s.ptr, name_filter, nv->v.s.len) != 0)
				continue;
		}
		assert_true(out->n < MAX_SEEN);
		size_t k = out->n++;
		out->ticks[k] = ev.ticks;
		if (ev.thread && ev.thread->name)
			snprintf(out->thread[k], sizeof out->thread[k], "%s", ev.thread->name);
		for (uint32_t f = 0; f < ev.value_count && f < 8; f++) {
			const rec_value *v = &ev.values[f];
			assert_true(v->present);
			out->u[k][f] = v->v.u;
			out->i[k][f] = v->v.i;
			if (v->type == REC_TYPE_STRING || v->type == REC_TYPE_TEXT) {
				size_t n = v->v.s.ptr ? v->v.s.len : 0;
				out->len[k][f] = n;
				snprintf(out->s[k][f], sizeof out->s[k][f], "%.*s", (int)n,
					 v->v.s.ptr ? v->v.s.ptr : "");
			}
		}
	}
	assert_int_equal(st, REC_END);
	rec_reader_close(rd);
}

static void remove_file(void) { unlink(rec_path); }

/* The counter totals of the recording at path (rec-summary's, through
 * rec_counters_add_reader()); *runs (if not NULL) gets the runs counted. */
static uint64_t total_runs_of(const char *path, const char *name, uint64_t *runs)
{
	rec_reader *rd = NULL;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	rec_counters *c = NULL;
	assert_int_equal(rec_counters_open(&c), REC_OK);
	uint64_t damaged = 0;
	assert_int_equal(rec_counters_add_reader(c, rd, 0, &damaged), REC_OK);
	size_t n = 0;
	const rec_counter_total *t = rec_counters_get(c, &n);
	uint64_t total = UINT64_MAX;
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0) {
			total = t[i].total;
			if (runs)
				*runs = t[i].runs;
		}
	rec_counters_close(c);
	rec_reader_close(rd);
	if (total == UINT64_MAX)
		print_error("no counter %s in %s\n", name, path);
	assert_true(total != UINT64_MAX);
	return total;
}

static uint64_t total_of(const char *path, const char *name)
{
	return total_runs_of(path, name, NULL);
}

/* ---- counters ---------------------------------------------------------------- */
#define ADDERS 4
#define ADDS 200000

static void *adder(void *arg)
{
	rec_counter *c = NULL;
	assert_int_equal(rec_counter_get("test.adds", &c), REC_OK);
	uint64_t step = (uint64_t)(uintptr_t)arg;
	for (int i = 0; i < ADDS; i++)
		rec_counter_add(c, step);
	return NULL;
}

static void t_counter_sums_exactly(void **state)
{
	(void)state;
	start_default();
	rec_counter *c = NULL, *again = NULL;
	assert_int_equal(rec_counter_get("test.adds", &c), REC_OK);
	assert_int_equal(rec_counter_get("test.adds", &again), REC_OK);
	assert_ptr_equal(c, again);
	rec_gauge *g = NULL;
	assert_int_equal(rec_gauge_get("test.adds", &g), REC_ERR_INVALID_ARG); /* a counter */
	assert_null(g);
	assert_int_equal(rec_counter_value(c), 0);

	/* Before the threads: the sample says 0. */
	assert_int_equal(rec_metrics_sample(), REC_OK);
	pthread_t th[ADDERS];
	for (uintptr_t i = 0; i < ADDERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, adder, (void *)(i + 1)), 0);
	for (int i = 0; i < ADDERS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	uint64_t expected = (uint64_t)ADDS * (1 + 2 + 3 + 4);
	assert_int_equal(rec_counter_value(c), expected);
	assert_int_equal(rec_metrics_sample(), REC_OK);
	rec_counter_add(c, 5);
	stop_default(); /* the periodic task samples once more at close */

	seen s;
	collect("rec.Counter", "test.adds", &s);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.u[0][1], 0); /* its start, when it was created */
	assert_int_equal(s.u[1][1], 0);
	assert_int_equal(s.u[2][1], expected);
	assert_int_equal(s.u[3][1], expected + 5);
	assert_string_equal(s.s[0][0], "test.adds");
	assert_int_equal(total_of(rec_path, "test.adds"), expected + 5);
	remove_file();
}

static void t_gauge_max_between_samples(void **state)
{
	(void)state;
	start_default();
	rec_gauge *g = NULL;
	assert_int_equal(rec_gauge_get("test.queue", &g), REC_OK);
	rec_gauge_set(g, 5);
	assert_int_equal(rec_metrics_sample(), REC_OK);  /* 5, max 5 */
	rec_gauge_set(g, 100);                           /* a spike ... */
	rec_gauge_set(g, 7);                             /* ... hidden at the sample */
	assert_int_equal(rec_metrics_sample(), REC_OK);  /* 7, max 100 */
	rec_gauge_add(g, -10);                           /* -3 */
	assert_int_equal(rec_gauge_value(g), -3);
	assert_int_equal(rec_metrics_sample(), REC_OK);  /* -3, max 7 (held at the interval start) */
	rec_gauge_add(g, 50);                            /* 47 */
	rec_gauge_add(g, -40);                           /* 7 */
	stop_default();                                  /* 7, max 47 */

	seen s;
	collect("rec.Gauge", "test.queue", &s);
	assert_int_equal(s.n, 4);
	const int64_t want[4][2] = { { 5, 5 }, { 7, 100 }, { -3, 7 }, { 7, 47 } };
	for (size_t k = 0; k < 4; k++) {
		assert_int_equal(s.i[k][1], want[k][0]);
		assert_int_equal(s.i[k][2], want[k][1]);
	}
	remove_file();
}

/* ---- process statistics ----------------------------------------------------- */
enum { PS_CPU_USER, PS_CPU_SYS, PS_RSS, PS_RSS_PEAK, PS_RSS_HWM, PS_THREADS };
#define MIB (1024ull * 1024ull)

static void *parked(void *arg)
{
	int *fd = arg;
	char b;
	(void)!read(*fd, &b, 1); /* until the pipe closes */
	return NULL;
}

/* The descriptor of the process's /proc status file, found by its link
 * (/proc/PID/status), or -1. */
static int status_fd_of(pid_t pid)
{
	char want[64];
	snprintf(want, sizeof want, "/proc/%d/status", (int)pid);
	for (int fd = 3; fd < 1024; fd++) {
		char link[64], to[128];
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, to, sizeof to - 1);
		if (n > 0) {
			to[n] = '\0';
			if (strcmp(to, want) == 0)
				return fd;
		}
	}
	return -1;
}

/* The child of t_process_stats_kept_descriptor: 0 when its statistics are
 * its own after the fork and after it closed every descriptor and opened a
 * file of its own under the number the status file had. */
static int stats_child(const char *fake)
{
	rec_process_stats st;
	/* one thread here, four or more in the parent, whose status file
	 * the child's copy of the descriptor names */
	if (rec_process_stats_read(&st) != REC_OK || st.threads != 1 || st.rss == 0)
		return 1;
	int sfd = status_fd_of(getpid());
	if (sfd < 0)
		return 2;
	for (int fd = 3; fd < 1024; fd++) /* a daemon's close of everything */
		close(fd);
	int f = open(fake, O_RDONLY);
	if (f < 0 || (f != sfd && dup2(f, sfd) != sfd))
		return 3;
	/* the program's file under the old number is never read: it says
	 * 99 threads and 1 kB */
	if (rec_process_stats_read(&st) != REC_OK || st.threads != 1 || st.rss <= 1024)
		return 4;
	return 0;
}

static void t_process_stats_kept_descriptor(void **state)
{
	(void)state;
	char fake[64];
	new_path(fake, sizeof fake);
	FILE *ff = fopen(fake, "w");
	assert_non_null(ff);
	fputs("Name:\tfake\nVmHWM:\t1 kB\nVmRSS:\t1 kB\nThreads:\t99\n", ff);
	assert_int_equal(fclose(ff), 0);

	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, parked, &pfd[0]), 0);
	rec_process_stats st;
	assert_int_equal(rec_process_stats_read(&st), REC_OK);
	assert_true(st.threads >= 4);
	assert_true(status_fd_of(getpid()) >= 0); /* kept open */
	assert_int_equal(rec_process_stats_read(&st), REC_OK); /* read again through it */
	assert_true(st.threads >= 4);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		rec_t_child_exit(stats_child(fake));
	int ws = 0;
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
	close(pfd[1]);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	close(pfd[0]);
	unlink(fake);
}

static void t_process_stats_rss_and_threads(void **state)
{
	(void)state;
	rec_process_stats before;
	assert_int_equal(rec_process_stats_read(&before), REC_OK);
	assert_true(before.rss > 0);
	assert_true(before.rss_hwm >= before.rss);
	assert_true(before.threads >= 1);

	start_default();                    /* #0: the baseline at open */
	assert_int_equal(rec_process_stats_sample(), REC_OK); /* #1 */

	/* 64 MiB touched and kept: RSS grows by (nearly) that much. */
	size_t big = 64 * MIB;
	unsigned char *p = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	memset(p, 0xa5, big);
	assert_int_equal(rec_process_stats_sample(), REC_OK); /* #2 */
	assert_int_equal(munmap(p, big), 0);
	assert_int_equal(rec_process_stats_sample(), REC_OK); /* #3: back down */

	/* A spike between two samples, above the process high-water mark:
	 * the next sample's rssPeak still shows it. */
	rec_process_stats now;
	assert_int_equal(rec_process_stats_read(&now), REC_OK);
	size_t spike = (size_t)(now.rss_hwm - now.rss) + 32 * MIB;
	p = mmap(NULL, spike, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	memset(p, 0x5a, spike);
	assert_int_equal(munmap(p, spike), 0);

	/* Three more threads, parked. */
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, parked, &pfd[0]), 0);
	usleep(20000);
	assert_int_equal(rec_process_stats_sample(), REC_OK); /* #4 */
	close(pfd[1]);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	close(pfd[0]);
	stop_default();                     /* #5: the periodic task at close */

	seen s;
	collect("rec.ProcessStats", NULL, &s);
	assert_int_equal(s.n, 6);
	uint64_t *e1 = s.u[1], *e2 = s.u[2], *e3 = s.u[3], *e4 = s.u[4];
	/* RSS after the 64 MiB touch: at least 60 MiB more. */
	assert_true(e2[PS_RSS] >= e1[PS_RSS] + 60 * MIB);
	assert_true(e2[PS_RSS_PEAK] >= e2[PS_RSS]);
	/* After unmapping: RSS down again, but the interval's peak was e2's. */
	assert_true(e3[PS_RSS] + 60 * MIB <= e2[PS_RSS]);
	assert_true(e3[PS_RSS_PEAK] >= e2[PS_RSS]);
	/* The hidden spike: RSS is low at #4, rssPeak above the old high-water mark. */
	assert_true(e4[PS_RSS] + 30 * MIB <= e4[PS_RSS_PEAK]);
	assert_true(e4[PS_RSS_PEAK] >= now.rss_hwm + 30 * MIB);
	assert_true(e4[PS_RSS_HWM] >= e4[PS_RSS_PEAK]);
	/* Threads: the three parked ones are counted. */
	assert_true(e4[PS_THREADS] >= e3[PS_THREADS] + 3);
	/* CPU time never goes back; the memsets took some user+system time. */
	for (size_t k = 1; k < s.n; k++) {
		assert_true(s.u[k][PS_CPU_USER] >= s.u[k - 1][PS_CPU_USER]);
		assert_true(s.u[k][PS_CPU_SYS] >= s.u[k - 1][PS_CPU_SYS]);
	}
	assert_true(s.u[5][PS_CPU_USER] + s.u[5][PS_CPU_SYS] > s.u[1][PS_CPU_USER] + s.u[1][PS_CPU_SYS]);
	remove_file();
}

/* ---- the periodic tasks of the background thread --------------------------- */
static void t_periodic_samples(void **state)
{
	(void)state;
	rec_counter *c = NULL;
	rec_gauge *g = NULL;
	assert_int_equal(rec_counter_get("test.ticks", &c), REC_OK);
	assert_int_equal(rec_gauge_get("test.level", &g), REC_OK);
	uint64_t base = rec_counter_value(c);
	start_default_every(50);
	/* 20 steps of 25 ms: the counter grows, the gauge spikes once. */
	for (int i = 0; i < 20; i++) {
		rec_counter_add(c, 10);
		rec_gauge_set(g, i == 7 ? 1000 : i);
		usleep(25000);
	}
	stop_default();

	seen s, gs, ps;
	collect("rec.Counter", "test.ticks", &s);
	collect("rec.Gauge", "test.level", &gs);
	collect("rec.ProcessStats", NULL, &ps);
	/* ~500 ms at 50 ms: expect about 10 samples; allow a loaded machine. */
	assert_true(s.n >= 4);
	assert_true(gs.n >= 4);
	assert_true(ps.n >= 4);
	for (size_t k = 1; k < s.n; k++)
		assert_true(s.u[k][1] >= s.u[k - 1][1]); /* monotonic */
	assert_int_equal(s.u[s.n - 1][1], base + 200);  /* the sample at close has all */
	int64_t highest = 0;
	for (size_t k = 0; k < gs.n; k++) {
		assert_true(gs.i[k][2] >= gs.i[k][1]);
		if (gs.i[k][2] > highest)
			highest = gs.i[k][2];
	}
	assert_int_equal(highest, 1000); /* the spike, never the value at a sample */
	assert_int_equal(gs.i[gs.n - 1][1], 19);
	remove_file();
}

/* ---- REC_OUTPUT with the periods from the environment ------------------------ */
/* The child: this binary re-executed with --env-child, recording through
 * REC_OUTPUT (opened by the library before main, closed at exit). */
static int env_child(void)
{
	rec_counter *c = NULL;
	if (rec_counter_get("child.work", &c) != REC_OK || !rec_recorder_default())
		return 3;
	for (int i = 0; i < 30; i++) {
		rec_counter_add(c, 7);
		usleep(20000); /* 30 x 20 ms */
	}
	return 0;
}

static void t_rec_output_env_periods(void **state)
{
	(void)state;
	new_path(rec_path, sizeof rec_path);
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	assert_true(n > 0);
	self[n] = '\0';
	char out_env[128];
	snprintf(out_env, sizeof out_env, "REC_OUTPUT=%s", rec_path);
	char *const envp[] = { out_env, "REC_OPTIONS=flush=20ms", "REC_METRICS_PERIOD=50ms",
			       "REC_PROCESS_STATS_PERIOD=100ms", NULL };
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execle(self, self, "--env-child", (char *)NULL, envp);
		_exit(127);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	seen s, ps;
	collect("rec.Counter", "child.work", &s);
	collect("rec.ProcessStats", NULL, &ps);
	/* ~600 ms: at the 1 s defaults there would be 1 counter sample (at
	 * close) and 2 process samples (open, close); at 50/100 ms ~12 and ~7. */
	assert_true(s.n >= 5);
	assert_true(ps.n >= 4);
	assert_int_equal(s.u[s.n - 1][1], 30 * 7); /* complete at exit */
	for (size_t k = 1; k < s.n; k++)
		assert_true(s.u[k][1] >= s.u[k - 1][1]);
	remove_file();
}

/* ---- counter totals equal what the program counted ---------------------------- */
/* Counters created while recording: each starts with a sample of 0 (taken
 * when it is created), so a run shorter than one metrics period (here: one
 * hour) still counts everything: the only other sample is the one at close. */
static void t_counter_totals_short_run(void **state)
{
	(void)state;
	start_default();
	rec_counter *sub = NULL, *done = NULL, *failed = NULL;
	assert_int_equal(rec_counter_get("jobs.submitted", &sub), REC_OK);
	assert_int_equal(rec_counter_get("jobs.done", &done), REC_OK);
	assert_int_equal(rec_counter_get("jobs.failed", &failed), REC_OK);
	for (int i = 0; i < 40; i++) {
		rec_counter_add(sub, 1);
		rec_counter_add(i % 2 ? done : failed, 1);
	}
	stop_default();
	assert_int_equal(total_of(rec_path, "jobs.submitted"), 40);
	assert_int_equal(total_of(rec_path, "jobs.done"), 20);
	assert_int_equal(total_of(rec_path, "jobs.failed"), 20);
	remove_file();
}

/* A counter that existed before the recording opened: the recording samples
 * it when it opens, and counts from there (what was counted before it is
 * not this recording's).  Its u64 wraps during the recording: 2^64 - 10 at
 * the open, +5, then +20 past 2^64 - 1: the total is 25. */
static void t_counter_totals_from_open_and_wrap(void **state)
{
	(void)state;
	rec_counter *before = NULL, *wrap = NULL;
	assert_int_equal(rec_counter_get("test.before", &before), REC_OK);
	assert_int_equal(rec_counter_get("test.wrap", &wrap), REC_OK);
	rec_counter_add(before, 7);
	rec_counter_add(wrap, UINT64_MAX - 9);
	start_default();
	rec_counter_add(before, 3);
	rec_counter_add(wrap, 5);
	assert_int_equal(rec_metrics_sample(), REC_OK);
	rec_counter_add(wrap, 20);
	assert_int_equal(rec_counter_value(wrap), 15);
	stop_default();
	assert_int_equal(total_of(rec_path, "test.before"), 3);
	assert_int_equal(total_of(rec_path, "test.wrap"), 25);
	seen s;
	collect("rec.Counter", "test.wrap", &s);
	assert_int_equal(s.n, 3);
	assert_true(s.u[0][1] == UINT64_MAX - 9); /* the start, at open */
	remove_file();
}

/* A flight recorder's dump samples the counters first: the dump holds what
 * was counted up to it, although no periodic sample (one hour) ran. */
static void t_counter_totals_flight_dump(void **state)
{
	(void)state;
	new_path(rec_path, sizeof rec_path);
	char dump_path[80];
	snprintf(dump_path, sizeof dump_path, "%s.dump", rec_path);
	assert_int_equal(rec_metrics_set_periods(3600 * 1000, 3600 * 1000), REC_OK);
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.flags = REC_RECORDER_DEFAULT | REC_RECORDER_FLIGHT | REC_RECORDER_NO_SIGNAL;
	o.path = rec_path;
	o.flush_interval_ms = 3600 * 1000;
	rec_recorder *r = NULL;
	assert_int_equal(rec_recorder_open(&r, &o), REC_OK);
	rec_counter *c = NULL;
	assert_int_equal(rec_counter_get("test.dumped", &c), REC_OK);
	rec_counter_add(c, 5);
	assert_int_equal(rec_recorder_dump(r, dump_path), REC_OK);
	assert_int_equal(total_of(dump_path, "test.dumped"), 5);
	rec_counter_add(c, 2);
	stop_default();
	assert_int_equal(total_of(rec_path, "test.dumped"), 7);
	unlink(dump_path);
	remove_file();
}

/* This binary re-executed with --count-child MODE FD NAME N [NAME N ...],
 * recording through REC_OUTPUT: add N to each counter NAME, write one byte
 * to FD, then return from main (MODE "exit": the recording closes at exit)
 * or wait to be killed (MODE "wait"). */
static int count_child(int argc, char **argv)
{
	if (argc < 4 || !rec_recorder_default())
		return 3;
	int fd = (int)strtol(argv[3], NULL, 10);
	for (int i = 4; i + 1 < argc; i += 2) {
		rec_counter *c = NULL;
		if (rec_counter_get(argv[i], &c) != REC_OK)
			return 4;
		unsigned long n = strtoul(argv[i + 1], NULL, 10);
		for (unsigned long k = 0; k < n; k++)
			rec_counter_add(c, 1);
	}
	if (write(fd, "x", 1) != 1)
		return 5;
	if (strcmp(argv[2], "wait") == 0)
		for (;;)
			pause();
	return 0;
}

static char self_exe[4096];

/* Start the count child recording into path (extra REC_OPTIONS in opts);
 * *rfd gets the read end of its pipe.  *t0 (if not NULL) gets
 * CLOCK_REALTIME just before the fork. */
static pid_t spawn_counter(const char *path, const char *opts, const char *mode,
			   const char *const *counts, int *rfd, int64_t *t0)
{
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
	assert_true(n > 0);
	self_exe[n] = '\0';
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	char out_env[128], opt_env[128], fdarg[16];
	snprintf(out_env, sizeof out_env, "REC_OUTPUT=%s", path);
	snprintf(opt_env, sizeof opt_env, "REC_OPTIONS=%s", opts);
	snprintf(fdarg, sizeof fdarg, "%d", pfd[1]);
	char *const envp[] = { out_env, opt_env, "REC_METRICS_PERIOD=100ms", NULL };
	const char *argv[16] = { self_exe, "--count-child", mode, fdarg };
	int argc = 4;
	for (size_t i = 0; counts[i] && argc < 15; i++)
		argv[argc++] = counts[i];
	argv[argc] = NULL;
	struct timespec ts;
	assert_int_equal(clock_gettime(CLOCK_REALTIME, &ts), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		execve(self_exe, (char *const *)argv, envp);
		_exit(127);
	}
	if (t0)
		*t0 = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	close(pfd[1]);
	*rfd = pfd[0];
	return pid;
}

static void wait_exit_0(pid_t pid)
{
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void wait_counted(int rfd)
{
	char b;
	assert_int_equal(read(rfd, &b, 1), 1);
	close(rfd);
}

/* A service restarted five times: each run counts from 0 (its counter's
 * start sample) to its last value, 8, 13, 23, 4 and 33; the five
 * recordings concatenated (cat) total 81 over 5 runs.  Each run is shorter
 * than the metrics period's first sample after the counting, or not: the
 * total does not depend on it. */
static void t_counter_totals_five_restarts(void **state)
{
	(void)state;
	static const char *const last[5] = { "8", "13", "23", "4", "33" };
	char all[64];
	new_path(all, sizeof all);
	FILE *out = fopen(all, "wb");
	assert_non_null(out);
	for (int k = 0; k < 5; k++) {
		char one[64];
		new_path(one, sizeof one);
		const char *counts[] = { "svc.requests", last[k], NULL };
		int rfd;
		pid_t pid = spawn_counter(one, "flush=50ms", "exit", counts, &rfd, NULL);
		wait_counted(rfd);
		wait_exit_0(pid);
		FILE *in = fopen(one, "rb");
		assert_non_null(in);
		char buf[65536];
		size_t n;
		while ((n = fread(buf, 1, sizeof buf, in)) > 0)
			assert_int_equal(fwrite(buf, 1, n, out), n);
		fclose(in);
		unlink(one);
	}
	assert_int_equal(fclose(out), 0);
	uint64_t runs = 0;
	assert_int_equal(total_runs_of(all, "svc.requests", &runs), 81);
	assert_int_equal(runs, 5);
	unlink(all);
}

/* A run that ends by SIGKILL: the count is in the file once a sample that
 * holds it was flushed.  Bound: a count made more than one metrics period +
 * one flush interval + 250 ms before the kill (100 + 100 + 250 ms here) is
 * in the total.  The child counts 40, says so, and is killed 1 s later. */
static void t_counter_totals_sigkill(void **state)
{
	(void)state;
	new_path(rec_path, sizeof rec_path);
	const char *counts[] = { "svc.killed", "40", NULL };
	int rfd;
	pid_t pid = spawn_counter(rec_path, "flush=100ms", "wait", counts, &rfd, NULL);
	wait_counted(rfd);
	usleep(1000 * 1000);
	assert_int_equal(kill(pid, SIGKILL), 0);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_int_equal(total_of(rec_path, "svc.killed"), 40);
	remove_file();
}

/* ---- process_start --------------------------------------------------------------- */
/* A chunk header's Process_Start_Ns is the wall-clock time the process
 * started: within 20 ms of CLOCK_REALTIME taken just before its fork (the
 * kernel keeps the start in clock ticks of 10 ms; btime, the boot time in
 * whole seconds, was up to 1 s off). */
static void t_process_start(void **state)
{
	(void)state;
	for (int round = 0; round < 3; round++) {
		new_path(rec_path, sizeof rec_path);
		const char *counts[] = { NULL };
		int rfd;
		int64_t t0 = 0;
		pid_t pid = spawn_counter(rec_path, "flush=50ms", "exit", counts, &rfd, &t0);
		wait_counted(rfd);
		wait_exit_0(pid);
		rec_reader *rd = NULL;
		assert_int_equal(rec_reader_open_path(&rd, rec_path, NULL), REC_OK);
		const rec_chunk_info *ci = NULL;
		assert_int_equal(rec_reader_next_chunk(rd, &ci), REC_OK);
		int64_t start = ci->process_start_ns;
		assert_int_equal(ci->pid, (uint32_t)pid);
		rec_reader_close(rd);
		int64_t diff = start - t0;
		if (diff < -20000000 || diff > 20000000)
			print_error("process_start %lld ns from the fork\n", (long long)diff);
		assert_true(diff >= -20000000 && diff <= 20000000);
		remove_file();
	}
}

/* ---- log lines ------------------------------------------------------------------ */
static void t_log_levels_and_text(void **state)
{
	(void)state;
	assert_int_equal(rec_log(REC_LOG_INFO, "nobody records this"), 0); /* no recorder */
	assert_string_equal(rec_log_level_name(REC_LOG_WARN), "warn");
	assert_string_equal(rec_log_level_name(REC_LOG_FATAL), "fatal");
	assert_string_equal(rec_log_level_name(99), "unknown");

	/* Named before the recording: the name is taken when the thread
	 * registers (the baseline sample at open registers this thread). */
	pthread_setname_np(pthread_self(), "log-test");
	start_default();
	assert_int_equal(rec_log(REC_LOG_WARN, "disk %s at %d%%", "sda", 93), 1);
	char *long_msg = malloc(10000);
	assert_non_null(long_msg);
	memset(long_msg, 'x', 9999);
	long_msg[9999] = '\0';
	assert_int_equal(rec_log(REC_LOG_ERROR, "%s", long_msg), 1);
	free(long_msg);
	assert_int_equal(rec_log(REC_LOG_DEBUG, "%s", ""), 1);
	stop_default();

	seen s;
	collect("rec.Log", NULL, &s);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.u[0][0], REC_LOG_WARN);
	assert_string_equal(s.s[0][1], "disk sda at 93%");
	assert_int_equal(s.len[0][1], strlen("disk sda at 93%"));
	assert_string_equal(s.thread[0], "log-test");
	assert_int_equal(s.u[1][0], REC_LOG_ERROR);
	assert_int_equal(s.len[1][1], REC_EMIT_MAX_BYTES); /* truncated */
	assert_int_equal(s.u[2][0], REC_LOG_DEBUG);
	assert_int_equal(s.len[2][1], 0);
	remove_file();
}

/* ---- fork while another thread samples ----------------------------------- */
/* A fork while another thread samples the metrics (it holds their locks
 * while it emits): a child that opens a default recorder samples at once
 * (the counters' and the process's first samples), and must not wait for a
 * lock held by a thread it does not have (preload_fork_phdr saw a recording
 * child hang so, one in 20, under load).  20 children, 10 s each (13 of
 * them hung before the fix). */
static atomic_int g_fork_stop;
void *fm_sampler_thread(void *arg);
void *fm_sampler_thread(void *arg)
{
	(void)arg;
	while (!atomic_load(&g_fork_stop))
		(void)rec_metrics_sample();
	return NULL;
}

static void t_fork_while_sampling(void **state)
{
	(void)state;
	if (TEST_UNDER_ASAN) { /* the children allocate: asan.h */
		print_message("skipped under ASan: its allocator is not fork-safe\n");
		return;
	}
	rec_counter *c = NULL;
	for (int i = 0; i < 16; i++) {
		char name[32];
		snprintf(name, sizeof name, "fork.c%d", i);
		assert_int_equal(rec_counter_get(name, &c), REC_OK);
	}
	new_path(rec_path, sizeof rec_path);
	char child_path[80];
	snprintf(child_path, sizeof child_path, "%s.child", rec_path);
	/* the parent's default recorder: rec_metrics_sample() samples into it */
	rec_recorder_options po = REC_RECORDER_OPTIONS_INIT;
	po.path = rec_path;
	po.flags = REC_RECORDER_DEFAULT;
	rec_recorder *pr = NULL;
	assert_int_equal(rec_recorder_open(&pr, &po), REC_OK);
	atomic_store(&g_fork_stop, 0);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, fm_sampler_thread, NULL), 0);
	/* fewer children and more time under valgrind (scale.h) */
	const int children = (int)rec_t_scaled(20);
	const long wait_ms = (long)(rec_t_budget_ns(10ull * 1000 * 1000 * 1000) / 1000000);
	int hung = 0, bad = 0;
	for (int i = 0; i < children; i++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
			o.path = child_path;
			o.flags = REC_RECORDER_DEFAULT;
			rec_recorder *r = NULL;
			if (rec_recorder_open(&r, &o) != REC_OK)
				rec_t_child_exit(3);
			rec_t_child_exit(rec_recorder_close(r) == REC_OK ? 0 : 4);
		}
		int status = 0, done = 0;
		for (long ms = 0; ms < wait_ms && !done; ms++) {
			done = waitpid(pid, &status, WNOHANG) == pid;
			if (!done)
				rec_t_sleep_ms(1);
		}
		if (!done) {
			kill(pid, SIGKILL);
			(void)waitpid(pid, &status, 0);
			hung++;
		} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			bad++;
		}
	}
	atomic_store(&g_fork_stop, 1);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(rec_recorder_close(pr), REC_OK);
	unlink(child_path);
	remove_file();
	print_message("%d children: %d hung, %d failed\n", children, hung, bad);
	assert_int_equal(hung, 0);
	assert_int_equal(bad, 0);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--env-child") == 0)
		return env_child();
	if (argc >= 2 && strcmp(argv[1], "--count-child") == 0)
		return count_child(argc, argv);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_counter_sums_exactly),
		cmocka_unit_test(t_gauge_max_between_samples),
		cmocka_unit_test(t_process_stats_rss_and_threads),
		cmocka_unit_test(t_periodic_samples),
		cmocka_unit_test(t_rec_output_env_periods),
		cmocka_unit_test(t_log_levels_and_text),
		cmocka_unit_test(t_counter_totals_short_run),
		cmocka_unit_test(t_counter_totals_from_open_and_wrap),
		cmocka_unit_test(t_counter_totals_flight_dump),
		cmocka_unit_test(t_counter_totals_five_restarts),
		cmocka_unit_test(t_counter_totals_sigkill),
		cmocka_unit_test(t_process_start),
		cmocka_unit_test(t_process_stats_kept_descriptor),
		cmocka_unit_test(t_fork_while_sampling),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
