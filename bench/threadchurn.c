/* SPDX-License-Identifier: MIT */
/*
 * bench/threadchurn.c - what the recorder costs per thread in a program that
 * starts a thread for each piece of work (issue 22: requestwatch with a new
 * connection per request).  Two roles:
 *
 *   threadchurn churn N [RATE]
 *       creates and joins N threads, two at a time (one per core here), a
 *       pair every 2/RATE s when RATE (threads a second) is given; each
 *       names itself "churn-K" (as requestwatch's connection threads do) and
 *       emits one event of a type declared process-wide, so it records when
 *       REC_OUTPUT opens the default recorder and is off otherwise.  Prints
 *       one line: threads=N wall_s=... cpu_s=... main_s=... writer_s=...
 *       (process CPU, the creating thread's, the background thread's
 *       "rec-writer" at the end of the churn, before the recording closes)
 *       and first_emit_ns: the threads' own CPU time (their CPU-time clock)
 *       in their one emit, per thread: with the recording on, the
 *       registration (buffer, name, CPU sampler, rec.ThreadStart).
 *
 *   threadchurn bench --runs K --threads N [--rate R] --out DIR LABEL=PROG...
 *       runs every PROG (a threadchurn binary, e.g. one per library build)
 *       as `PROG churn N R` (R default 6000: requestwatch's 70 % rate), recording off and on (REC_OUTPUT=DIR/LABEL.rec),
 *       all variants one after the other, K times (so slow phases of the
 *       shared machine hit every variant); each child's CPU comes from
 *       wait4 (user + system, the recording's close included).  Prints per
 *       variant the process CPU per thread, median (min-max) in us, and the
 *       median split of the churn: the threads' own CPU (process - main -
 *       writer), the creating thread's and the background thread's; and
 *       the threads the recorder registered during the churn (recorder
 *       stats: N, plus its own threads that registered meanwhile; fewer
 *       means the memory limit was reached before the background thread
 *       reclaimed exited threads' buffers: those threads cost less); and
 *       the median first emit.
 *
 * Built with -DTHREADCHURN_PLAIN the program knows nothing of rec (no event,
 * no recorder statistics: registered=0, first_emit_ns=0), for the preload
 * library (bench/threadchurn.sh --preload: its threads are registered by
 * the preload's pthread_create).
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef THREADCHURN_PLAIN
#include "rec/recorder.h"

static const rec_field churn_fields[] = {
	{ "n", "N", "the thread's number", REC_TYPE_U64, REC_UNIT_NONE },
};
static const rec_type churn_def = {
	0, REC_EVENT_HAS_THREAD, "bench.Churn", "Churn", "one event per churn thread", "Bench",
	1, churn_fields,
};
static rec_event_type *churn_type;
#endif
static uint64_t g_first_emit_ns; /* the threads' CPU time in their first emit, summed */

#ifndef THREADCHURN_PLAIN
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

static void *churn_main(void *arg)
{
	unsigned n = (unsigned)(uintptr_t)arg;
	char name[16];
	snprintf(name, sizeof name, "churn-%u", n % 100000000u);
	pthread_setname_np(pthread_self(), name);
#ifndef THREADCHURN_PLAIN
	uint64_t t0 = thread_cpu_ns();
	rec_emit e;
	if (rec_emit_begin(&e, churn_type)) {
		rec_emit_u64(&e, n);
		rec_emit_commit(&e);
	}
	__atomic_fetch_add(&g_first_emit_ns, thread_cpu_ns() - t0, __ATOMIC_RELAXED);
#endif
	return NULL;
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The CPU seconds of this process's thread named "rec-writer", 0 if none. */
static double writer_cpu_s(void)
{
	DIR *d = opendir("/proc/self/task");
	double s = 0;
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char path[320], comm[32] = "";
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof comm, f))
			comm[0] = 0;
		fclose(f);
		if (strncmp(comm, "rec-writer", 10) != 0)
			continue;
		/* the thread's CPU clock (CPUCLOCK_SCHED of a thread id):
		 * nanoseconds, where /proc's stat has 10 ms ticks */
		unsigned tid = (unsigned)strtoul(de->d_name, NULL, 10);
		struct timespec ts;
		if (clock_gettime((clockid_t)((~tid << 3) | 6), &ts) == 0)
			s += (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	}
	if (d)
		closedir(d);
	return s;
}

static int churn(unsigned n, double rate)
{
	struct { unsigned long long threads, drains; } rs0 = { 0, 0 }, rs = { 0, 0 };
#ifndef THREADCHURN_PLAIN
	if (rec_type_declare(&churn_def, 0, 0, &churn_type) != REC_OK) {
		fprintf(stderr, "threadchurn: rec_type_declare failed\n");
		return 1;
	}
	rec_recorder_stats st;
	rec_recorder *r = rec_recorder_default();
	if (r) {
		rec_recorder_get_stats(r, &st);
		rs0.threads = st.threads;
		rs0.drains = st.drains;
	}
#endif
	struct timespec due;
	clock_gettime(CLOCK_MONOTONIC, &due);
	double t0 = mono_s();
	for (unsigned i = 0; i < n; i += 2) {
		pthread_t th[2];
		if (rate > 0) { /* pair i/2 is due at t0 + i / rate */
			due.tv_nsec += (long)(2e9 / rate);
			while (due.tv_nsec >= 1000000000L) {
				due.tv_nsec -= 1000000000L;
				due.tv_sec++;
			}
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) == EINTR)
				;
		}
		unsigned k = n - i < 2 ? n - i : 2;
		for (unsigned j = 0; j < k; j++)
			if (pthread_create(&th[j], NULL, churn_main, (void *)(uintptr_t)(i + j)) != 0) {
				fprintf(stderr, "threadchurn: pthread_create failed\n");
				return 1;
			}
		for (unsigned j = 0; j < k; j++)
			pthread_join(th[j], NULL);
	}
	double wall = mono_s() - t0;
	struct rusage self, me;
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_THREAD, &me);
#ifndef THREADCHURN_PLAIN
	if (r) {
		rec_recorder_get_stats(r, &st);
		rs.threads = st.threads;
		rs.drains = st.drains;
	}
#endif
	printf("threads=%u wall_s=%.4f cpu_s=%.4f main_s=%.4f writer_s=%.4f registered=%llu "
	       "rounds=%llu first_emit_ns=%.0f\n",
	       n, wall, tv_s(self.ru_utime) + tv_s(self.ru_stime),
	       tv_s(me.ru_utime) + tv_s(me.ru_stime), writer_cpu_s(),
	       (unsigned long long)(rs.threads - rs0.threads),
	       (unsigned long long)(rs.drains - rs0.drains),
	       (double)__atomic_load_n(&g_first_emit_ns, __ATOMIC_RELAXED) / n);
	fflush(stdout);
	return 0;
}

/* ---- bench: the children, alternated ------------------------------------------------------ */
#define MAXV 16
#define MAXRUNS 64

typedef struct variant {
	char label[64];
	const char *prog;
	int on;
	double cpu[MAXRUNS], thr[MAXRUNS], main_[MAXRUNS], writer[MAXRUNS];
	double registered[MAXRUNS]; /* on: threads registered during the churn */
	double first[MAXRUNS];      /* the threads' CPU in their first emit, ns per thread */
} variant;

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(const double *v, int n, double *lo, double *hi)
{
	double s[MAXRUNS];
	memcpy(s, v, (size_t)n * sizeof *s);
	qsort(s, (size_t)n, sizeof *s, cmp_d);
	*lo = s[0];
	*hi = s[n - 1];
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static int run_one(variant *v, int run, unsigned n, const char *rate, const char *out)
{
	char path[4096], arg[32];
	snprintf(path, sizeof path, "%s/%s.rec", out, v->label);
	snprintf(arg, sizeof arg, "%u", n);
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		unsetenv("REC_OPTIONS");
		if (v->on)
			setenv("REC_OUTPUT", path, 1);
		else
			unsetenv("REC_OUTPUT");
		execl(v->prog, v->prog, "churn", arg, rate, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	char line[512];
	ssize_t len = read(fds[0], line, sizeof line - 1);
	close(fds[0]);
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    len <= 0)
		return -1;
	line[len] = 0;
	double cpu = tv_s(ru.ru_utime) + tv_s(ru.ru_stime), ccpu = 0, cmain = 0, cwriter = 0;
	const char *p;
	if ((p = strstr(line, "cpu_s=")) != NULL)
		ccpu = strtod(p + 6, NULL);
	if ((p = strstr(line, "main_s=")) != NULL)
		cmain = strtod(p + 7, NULL);
	if ((p = strstr(line, "writer_s=")) != NULL)
		cwriter = strtod(p + 9, NULL);
	if ((p = strstr(line, "registered=")) != NULL)
		v->registered[run] = (double)strtoull(p + 11, NULL, 10);
	if ((p = strstr(line, "first_emit_ns=")) != NULL)
		v->first[run] = strtod(p + 14, NULL);
	v->cpu[run] = cpu / n * 1e6;
	v->thr[run] = (ccpu - cmain - cwriter) / n * 1e6;
	v->main_[run] = cmain / n * 1e6;
	v->writer[run] = cwriter / n * 1e6;
	fprintf(stderr, "threadchurn: run %d %s: %.2f us/thread (threads %.2f, main %.2f, writer %.2f)\n",
		run + 1, v->label, v->cpu[run], v->thr[run], v->main_[run], v->writer[run]);
	return 0;
}

static int bench(int argc, char **argv)
{
	int runs = 5;
	unsigned n = 20000;
	const char *rate = "6000";
	const char *out = NULL;
	static variant vs[MAXV];
	int nv = 0;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = (int)strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			n = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--rate") && i + 1 < argc)
			rate = argv[++i];
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			out = argv[++i];
		else if (strchr(argv[i], '=') && nv + 2 <= MAXV) {
			const char *eq = strchr(argv[i], '=');
			for (int on = 0; on < 2; on++) {
				variant *v = &vs[nv++];
				snprintf(v->label, sizeof v->label, "%.*s-%s", (int)(eq - argv[i]), argv[i],
					 on ? "on" : "off");
				v->prog = eq + 1;
				v->on = on;
			}
		} else {
			fprintf(stderr, "threadchurn: bad argument %s\n", argv[i]);
			return 2;
		}
	}
	if (!out || nv == 0 || runs < 1 || runs > MAXRUNS || n == 0) {
		fprintf(stderr, "usage: threadchurn bench --runs K --threads N --out DIR LABEL=PROG...\n");
		return 2;
	}
	for (int r = 0; r < runs; r++)
		for (int i = 0; i < nv; i++)
			if (run_one(&vs[i], r, n, rate, out) != 0) {
				fprintf(stderr, "threadchurn: %s failed\n", vs[i].label);
				return 1;
			}
	printf("| variant | process CPU per thread, us (wait4) | threads' own | creating thread | background thread | threads registered | first emit, ns (thread CPU) |\n");
	printf("|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < nv; i++) {
		double lo, hi, m = median(vs[i].cpu, runs, &lo, &hi), a, b;
		double thr = median(vs[i].thr, runs, &a, &b), mn = median(vs[i].main_, runs, &a, &b);
		double wr = median(vs[i].writer, runs, &a, &b);
		double rg = median(vs[i].registered, runs, &a, &b), c, d;
		double fe = median(vs[i].first, runs, &c, &d);
		printf("| %s | %.2f (%.2f-%.2f) | %.2f | %.2f | %.2f | %.0f (%.0f-%.0f) | %.0f (%.0f-%.0f) |\n",
		       vs[i].label, m, lo, hi, thr, mn, wr, rg, a, b, fe, c, d);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "churn"))
		return churn((unsigned)strtoul(argv[2], NULL, 10), argc == 4 ? strtod(argv[3], NULL) : 0);
	if (argc >= 2 && !strcmp(argv[1], "bench"))
		return bench(argc, argv);
	fprintf(stderr, "usage: threadchurn churn N | threadchurn bench --runs K --threads N "
			"--out DIR LABEL=PROG...\n");
	return 2;
}
