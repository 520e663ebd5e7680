/* SPDX-License-Identifier: MIT */
/*
 * rec_test_crash.c - a host that records from several threads and then dies
 * of a fatal signal, or meets write failures, for tests/cli/recorder_crash.sh
 * and tests/cli/recorder_write_fail.sh.
 *
 *   rec_test_crash MODE PATH
 *
 * Crash modes (the recorder is opened on PATH; 4 worker threads emit
 * app.Work {seq, worker} 1000 times each, then one thread named "crasher"
 * dies; before dying the program prints "crasher_tid=N" on stdout):
 *   segv      the crasher dereferences NULL (in crash_here())
 *   abort     the crasher calls abort()
 *   inemit    the crasher dereferences NULL between rec_emit_begin and commit
 *   inmalloc  one arena (M_ARENA_MAX=1), three threads hammer malloc/free and
 *             the crasher dies in a SIGALRM handler that interrupted its own
 *             malloc/free loop (so it most likely holds the malloc lock)
 *   bg        the recorder's background thread dies: a periodic callback
 *             dereferences NULL (after the workers' events were flushed)
 *   bgstuck   the crasher holds a mutex that a periodic callback (run by the
 *             background thread) then blocks on, and dies: the background
 *             thread cannot write, the handler's bounded wait runs out
 *   fresh     a thread that never emitted (not registered with the
 *             recorder) dies: the background thread writes its rec.Crash
 *   flight    as segv, the recorder in flight mode (REC_RECORDER_FLIGHT):
 *             the retained chunks are written to PATH at the crash
 *   nocrash   as segv, recorder opened with REC_RECORDER_NO_CRASH
 *   env       as segv, but the default recorder comes from REC_OUTPUT /
 *             REC_OPTIONS (PATH unused)
 *   chain     as segv, with a SIGSEGV handler installed before the recorder
 *             opened: it prints "previous handler" and exits with status 42
 * Write-failure modes:
 *   fsize     RLIMIT_FSIZE: soft limit 64 KiB (SIGXFSZ ignored): emit
 *             app.Work with worker 0 until the recorder reports the failure
 *             and then 2000 more (worker 1), raise the soft limit, emit 2000
 *             more (worker 2), close.  Prints "attempts=N reports=N
 *             dropped=N close=STATUS" on stdout.
 *   unlink    emit 500 (worker 0), flush, unlink PATH, emit 500 (worker 1),
 *             wait for the recorder to notice (two flush rounds), emit 500
 *             (worker 2), close.  Prints "attempts=N reports=N" and keeps
 *             the removed file: its content is copied to PATH.old first.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "rec/recorder.h"

#define WORKERS 4
#define PER_WORKER 1000

static rec_recorder *g_rec;
static rec_event_type *T_work;
static const char *g_mode;
static pthread_barrier_t g_bar;
static volatile int g_stop;
static uint64_t g_attempts;
static int g_reports;
static char g_report_msg[512];

static const rec_field work_fields[] = {
	{ "seq", "Seq", "", REC_TYPE_U64, REC_UNIT_NONE },
	{ "worker", "Worker", "", REC_TYPE_U32, REC_UNIT_NONE },
};
static const rec_type work_def = { 0, REC_EVENT_HAS_THREAD, "app.Work", "Work", "", "app", 2,
				   work_fields };

static void on_error(void *opaque, rec_status st, const char *msg)
{
	(void)opaque;
	(void)st;
	__atomic_add_fetch(&g_reports, 1, __ATOMIC_SEQ_CST);
	snprintf(g_report_msg, sizeof g_report_msg, "%s", msg);
}

static void emit_work(uint64_t seq, uint32_t worker)
{
	rec_emit e;
	g_attempts++;
	if (rec_emit_begin(&e, T_work)) {
		rec_emit_u64(&e, seq);
		rec_emit_u64(&e, worker);
		rec_emit_commit(&e);
	}
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* (not instrumented: UBSan would stop the program before the fault) */
__attribute__((noinline, no_sanitize("undefined"))) static void crash_here(void)
{
	int *volatile p = NULL;
	*p = 1;
	__asm__ __volatile__("" ::: "memory");
}

__attribute__((noinline)) static void abort_here(void)
{
	abort();
}

static void print_tid(void)
{
	printf("crasher_tid=%ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
}

/* ---- inmalloc ----------------------------------------------------------- */
static void on_alarm(int sig)
{
	(void)sig;
	crash_here();
}

static void *hammer(void *arg)
{
	(void)arg;
	while (!g_stop) {
		void *p[16];
		for (int i = 0; i < 16; i++)
			p[i] = malloc((size_t)(16 + i * 200));
		for (int i = 0; i < 16; i++)
			free(p[i]);
	}
	return NULL;
}

static void *fresh_thread(void *arg)
{
	(void)arg;
	print_tid();
	crash_here();
	return NULL;
}

static pthread_mutex_t g_stuck = PTHREAD_MUTEX_INITIALIZER;

static void bg_block(rec_recorder *r, void *opaque)
{
	(void)r;
	(void)opaque;
	pthread_mutex_lock(&g_stuck); /* held by the crasher: never returns */
	pthread_mutex_unlock(&g_stuck);
}

static void *worker(void *arg)
{
	uint32_t w = (uint32_t)(uintptr_t)arg;
	for (uint64_t i = 0; i < PER_WORKER; i++) {
		rec_emit e;
		if (rec_emit_begin(&e, T_work)) {
			rec_emit_u64(&e, i);
			rec_emit_u64(&e, w);
			rec_emit_commit(&e);
		}
	}
	pthread_barrier_wait(&g_bar); /* every worker emitted */
	if (w != 1) {
		for (;;)
			sleep_ms(1000);
	}
	if (strcmp(g_mode, "fresh") == 0) {
		pthread_t t;
		pthread_create(&t, NULL, fresh_thread, NULL);
		for (;;)
			sleep_ms(1000);
	}
	pthread_setname_np(pthread_self(), "crasher");
	rec_recorder_attach_thread(g_rec); /* not new: the name stays that of registration */
	print_tid();
	if (strcmp(g_mode, "abort") == 0) {
		abort_here();
	} else if (strcmp(g_mode, "inemit") == 0) {
		rec_emit e;
		if (rec_emit_begin(&e, T_work)) {
			rec_emit_u64(&e, 999999);
			crash_here();
			rec_emit_commit(&e);
		}
		crash_here();
	} else if (strcmp(g_mode, "bgstuck") == 0) {
		pthread_mutex_lock(&g_stuck);
		rec_recorder_add_periodic(g_rec, bg_block, NULL, 10);
		sleep_ms(300); /* the background thread is blocked by now */
		crash_here();
	} else if (strcmp(g_mode, "inmalloc") == 0) {
		pthread_t h[3];
#if defined(__SANITIZE_ADDRESS__)
		printf("sanitizer_allocator=1\n"); /* malloc is ASan's (see recorder_crash.sh) */
		fflush(stdout);
#endif
		mallopt(M_ARENA_MAX, 1);
		for (int i = 0; i < 3; i++)
			pthread_create(&h[i], NULL, hammer, NULL);
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_alarm;
		sigaction(SIGALRM, &sa, NULL);
		struct itimerval it = { { 0, 0 }, { 0, 200000 } };
		setitimer(ITIMER_REAL, &it, NULL);
		sigset_t ss;
		sigemptyset(&ss);
		sigaddset(&ss, SIGALRM);
		pthread_sigmask(SIG_UNBLOCK, &ss, NULL);
		hammer(NULL);
	} else {
		crash_here();
	}
	return NULL;
}

static void bg_crash(rec_recorder *r, void *opaque)
{
	(void)r;
	(void)opaque;
	print_tid();
	crash_here();
}

static void on_prev_segv(int sig)
{
	(void)sig;
	static const char msg[] = "previous handler\n";
	ssize_t n = write(1, msg, sizeof msg - 1);
	(void)n;
	_exit(42);
}

static int open_recorder(const char *path, uint32_t flags, uint32_t flush_ms)
{
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	o.flags = flags;
	o.flush_interval_ms = flush_ms;
	o.on_error = on_error;
	o.codec = REC_CODEC_LZ4;
	rec_status st = rec_recorder_open(&g_rec, &o);
	if (st != REC_OK) {
		fprintf(stderr, "open %s: %s\n", path, rec_strerror(st));
		return 1;
	}
	return rec_recorder_register_type(g_rec, &work_def, 0, 0, &T_work) == REC_OK ? 0 : 1;
}

static int crash_modes(const char *path)
{
	/* SIGALRM (inmalloc) goes to the crasher only: it alone unblocks it. */
	sigset_t ss;
	sigemptyset(&ss);
	sigaddset(&ss, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &ss, NULL);
	if (strcmp(g_mode, "chain") == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_prev_segv;
		sigaction(SIGSEGV, &sa, NULL);
	}
	if (strcmp(g_mode, "env") == 0) {
		g_rec = rec_recorder_default();
		if (!g_rec) {
			fprintf(stderr, "no default recorder (REC_OUTPUT?)\n");
			return 1;
		}
		if (rec_recorder_register_type(g_rec, &work_def, 0, 0, &T_work) != REC_OK)
			return 1;
	} else if (open_recorder(path,
				 strcmp(g_mode, "nocrash") == 0  ? REC_RECORDER_NO_CRASH
				 : strcmp(g_mode, "flight") == 0 ? REC_RECORDER_FLIGHT
								 : 0,
				 strcmp(g_mode, "bg") == 0 ? 50 : 10000)) {
		return 1;
	}
	if (strcmp(g_mode, "bg") == 0) {
		for (uint64_t i = 0; i < PER_WORKER; i++)
			emit_work(i, 0);
		rec_recorder_flush(g_rec);
		rec_recorder_add_periodic(g_rec, bg_crash, NULL, 50);
		for (;;)
			sleep_ms(1000);
	}
	pthread_barrier_init(&g_bar, NULL, WORKERS);
	pthread_t t[WORKERS];
	for (uintptr_t i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (;;)
		sleep_ms(1000);
	return 0;
}

static int fsize_mode(const char *path)
{
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl;
	getrlimit(RLIMIT_FSIZE, &rl);
	struct rlimit lim = { 64 * 1024, rl.rlim_max };
	if (setrlimit(RLIMIT_FSIZE, &lim) != 0) {
		perror("setrlimit");
		return 1;
	}
	if (open_recorder(path, 0, 20))
		return 1;
	uint64_t seq = 0;
	/* Phase 0 until the failure is reported (bounded: 20 s). */
	for (int round = 0; round < 2000 && !__atomic_load_n(&g_reports, __ATOMIC_SEQ_CST); round++) {
		for (int i = 0; i < 500; i++)
			emit_work(seq++, 0);
		sleep_ms(10);
	}
	if (!g_reports) {
		fprintf(stderr, "no write failure reported\n");
		return 1;
	}
	for (int i = 0; i < 2000; i++) {
		emit_work(seq++, 1);
		if (i % 500 == 499)
			sleep_ms(30);
	}
	rec_recorder_flush(g_rec);
	lim.rlim_cur = rl.rlim_cur;
	setrlimit(RLIMIT_FSIZE, &lim);
	for (int i = 0; i < 2000; i++) {
		emit_work(seq++, 2);
		if (i % 500 == 499)
			sleep_ms(30);
	}
	rec_recorder_stats st;
	rec_recorder_get_stats(g_rec, &st);
	rec_status cs = rec_recorder_close(g_rec);
	printf("attempts=%llu reports=%d dropped=%llu close=%d msg=%s\n",
	       (unsigned long long)g_attempts, g_reports, (unsigned long long)st.dropped, (int)cs,
	       g_report_msg);
	return 0;
}

static int unlink_mode(const char *path)
{
	if (open_recorder(path, 0, 20))
		return 1;
	uint64_t seq = 0;
	for (int i = 0; i < 500; i++)
		emit_work(seq++, 0);
	rec_recorder_flush(g_rec);
	int keep = open(path, O_RDONLY | O_CLOEXEC);
	if (keep < 0 || unlink(path) != 0) {
		perror("unlink");
		return 1;
	}
	for (int i = 0; i < 500; i++)
		emit_work(seq++, 1);
	rec_recorder_flush(g_rec);
	rec_recorder_flush(g_rec);
	for (int i = 0; i < 500; i++)
		emit_work(seq++, 2);
	rec_status cs = rec_recorder_close(g_rec);
	/* The removed file, as a reader holding it open would see it. */
	char old[4096];
	snprintf(old, sizeof old, "%s.old", path);
	int out = open(old, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		return 1;
	char buf[65536];
	ssize_t n;
	while ((n = read(keep, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n)
			return 1;
	close(out);
	close(keep);
	printf("attempts=%llu reports=%d close=%d msg=%s\n", (unsigned long long)g_attempts,
	       g_reports, (int)cs, g_report_msg);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: rec_test_crash MODE PATH\n");
		return 2;
	}
	g_mode = argv[1];
	if (strcmp(g_mode, "fsize") == 0)
		return fsize_mode(argv[2]);
	if (strcmp(g_mode, "unlink") == 0)
		return unlink_mode(argv[2]);
	return crash_modes(argv[2]);
}
