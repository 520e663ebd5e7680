/* SPDX-License-Identifier: MIT */
/*
 * plain_wall.c - a program that knows nothing of rec, for the wall-clock
 * sampler's test (tests/cli/preload_wall.sh).  Its main thread waits in
 * every way the preload library marks, each in a function of its own, for a
 * known time, and spins on the CPU for a known time:
 *   wall_sleep   nanosleep 300 ms
 *   wall_poll    poll on an empty pipe, 300 ms timeout
 *   wall_select  select on an empty pipe, 200 ms timeout
 *   wall_epoll   epoll_wait on an empty pipe, 250 ms timeout
 *   wall_read    read of a pipe another thread writes to 300 ms later
 *   wall_cond    pthread_cond_wait until another thread signals, 300 ms later
 *   wall_lock    pthread_mutex_lock of a mutex another thread holds 300 ms
 *   wall_spin    400 ms on the CPU
 *   wall_churn   for 2 s, a 1 us nanosleep and a 0 ms poll, over and over:
 *                the most chances for a sampler signal to land in a call as
 *                the thread enters it (without the hand-off of
 *                wall_internal.h about 3 a second return EINTR at 1000 Hz)
 * and checks that no call failed with EINTR and none returned early (a
 * sleep shorter than asked, a poll/select/epoll timeout before its time).
 * Three helper threads (late_writer, cond_signaller, lock_holder) sleep
 * 300 ms each.  It prints "step NAME MS" and "helper NAME MS" (the times it
 * measured itself), "tid MAIN",
 * "churn CALLS", "eintr N", "early N" and exits 1 if N > 0 for either.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int eintr, early;
static int pipe_idle[2], pipe_late[2];
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int cond_flag, holding;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void check(int rc, const char *what)
{
	if (rc < 0 && errno == EINTR) {
		eintr++;
		fprintf(stderr, "plain_wall: %s: EINTR\n", what);
	} else if (rc < 0) {
		fprintf(stderr, "plain_wall: %s: %s\n", what, strerror(errno));
	}
}

static void check_time(double t0, double want_ms, const char *what)
{
	double got = now_ms() - t0;
	if (got < want_ms - 0.5) {
		early++;
		fprintf(stderr, "plain_wall: %s returned after %.1f ms, asked %.1f\n", what, got,
			want_ms);
	}
}

/* A helper thread's sleep; the time it took, measured, in helper_ms[who]. */
static double helper_ms[3];

static void sleep_ms(int ms, int who)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	double t0 = now_ms();
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	helper_ms[who] = now_ms() - t0;
}

static __attribute__((noinline)) void wall_sleep(void)
{
	struct timespec ts = { 0, 300 * 1000000L };
	double t0 = now_ms();
	check(nanosleep(&ts, NULL), "nanosleep");
	check_time(t0, 300, "nanosleep");
}

static __attribute__((noinline)) void wall_poll(void)
{
	struct pollfd p = { pipe_idle[0], POLLIN, 0 };
	double t0 = now_ms();
	check(poll(&p, 1, 300), "poll");
	check_time(t0, 300, "poll");
}

static __attribute__((noinline)) void wall_select(void)
{
	fd_set r;
	FD_ZERO(&r);
	FD_SET(pipe_idle[0], &r);
	struct timeval tv = { 0, 200 * 1000 };
	double t0 = now_ms();
	check(select(pipe_idle[0] + 1, &r, NULL, NULL, &tv), "select");
	check_time(t0, 200, "select");
}

static __attribute__((noinline)) void wall_epoll(void)
{
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = pipe_idle[0] };
	epoll_ctl(ep, EPOLL_CTL_ADD, pipe_idle[0], &ev);
	double t0 = now_ms();
	check(epoll_wait(ep, &ev, 1, 250), "epoll_wait");
	check_time(t0, 250, "epoll_wait");
	close(ep);
}

static void *late_writer(void *arg)
{
	(void)arg;
	sleep_ms(300, 0);
	if (write(pipe_late[1], "x", 1) != 1)
		perror("plain_wall: write");
	return NULL;
}

static __attribute__((noinline)) void wall_read(void)
{
	char c;
	check((int)read(pipe_late[0], &c, 1), "read");
}

static void *cond_signaller(void *arg)
{
	(void)arg;
	sleep_ms(300, 1);
	pthread_mutex_lock(&cond_lock);
	cond_flag = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&cond_lock);
	return NULL;
}

static __attribute__((noinline)) void wall_cond(void)
{
	pthread_mutex_lock(&cond_lock);
	while (!cond_flag)
		check(pthread_cond_wait(&cond, &cond_lock) ? -1 : 0, "pthread_cond_wait");
	pthread_mutex_unlock(&cond_lock);
}

static void *lock_holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&held_lock);
	__atomic_store_n(&holding, 1, __ATOMIC_RELEASE);
	sleep_ms(300, 2);
	pthread_mutex_unlock(&held_lock);
	return NULL;
}

static __attribute__((noinline)) void wall_lock(void)
{
	pthread_mutex_lock(&held_lock);
	pthread_mutex_unlock(&held_lock);
}

static volatile unsigned long sink;

static __attribute__((noinline)) void wall_spin(void)
{
	double t0 = now_ms();
	while (now_ms() - t0 < 400)
		for (int i = 0; i < 200000; i++) /* about 0.1 ms: few clock reads */
			sink += (unsigned long)i * 7u;
}

static __attribute__((noinline)) void wall_churn(void)
{
	/* 1 us sleeps (about 55 us with the default 50 us timer slack): a
	 * thread that is nearly always in a call and runs only between two, for
	 * 2 s: a signal sent while it runs is likely to land in the next call */
	double t0 = now_ms();
	long n = 0;
	while (now_ms() - t0 < 2000) {
		/* nothing but the calls between two calls */
		for (int i = 0; i < 256; i++, n++) {
			struct timespec ts = { 0, 1000L };
			struct pollfd p = { pipe_idle[0], POLLIN, 0 };
			check(nanosleep(&ts, NULL), "nanosleep (churn)");
			check(poll(&p, 1, 0), "poll (churn)");
		}
	}
	printf("churn %ld\n", n);
}

static void step(const char *name, void (*fn)(void))
{
	double t0 = now_ms();
	fn();
	printf("step %s %.3f\n", name, now_ms() - t0);
}

static volatile sig_atomic_t sigurg_calls;

static void on_sigurg(int sig)
{
	(void)sig;
	sigurg_calls++;
}

/* "own-sigurg": the program's own SIGURG handler, then 300 ms on the CPU
 * and a 300 ms sleep: the wall sampler must leave the handler alone (no
 * running samples from then on; a signal sent just before may still
 * arrive) and still sample the sleep. */
static int own_sigurg(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigurg;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGURG, &sa, NULL);
	printf("tid %ld\n", (long)syscall(SYS_gettid));
	double t0 = now_ms();
	while (now_ms() - t0 < 300)
		for (int i = 0; i < 200000; i++)
			sink += (unsigned long)i;
	step("wall_sleep", wall_sleep);
	printf("sigurg %d\neintr %d\nearly %d\n", (int)sigurg_calls, eintr, early);
	return eintr || early ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "own-sigurg") == 0)
		return own_sigurg();
	if (pipe(pipe_idle) != 0 || pipe(pipe_late) != 0) {
		perror("plain_wall: pipe");
		return 2;
	}
	printf("tid %ld\n", (long)syscall(SYS_gettid));
	pthread_t th;
	step("wall_sleep", wall_sleep);
	step("wall_poll", wall_poll);
	step("wall_select", wall_select);
	step("wall_epoll", wall_epoll);
	pthread_create(&th, NULL, late_writer, NULL);
	step("wall_read", wall_read);
	pthread_join(th, NULL);
	pthread_create(&th, NULL, cond_signaller, NULL);
	step("wall_cond", wall_cond);
	pthread_join(th, NULL);
	pthread_create(&th, NULL, lock_holder, NULL);
	while (!__atomic_load_n(&holding, __ATOMIC_ACQUIRE))
		sched_yield();
	step("wall_lock", wall_lock);
	pthread_join(th, NULL);
	step("wall_spin", wall_spin);
	step("wall_churn", wall_churn);
	printf("helper late_writer %.3f\nhelper cond_signaller %.3f\nhelper lock_holder %.3f\n",
	       helper_ms[0], helper_ms[1], helper_ms[2]);
	printf("eintr %d\nearly %d\n", eintr, early);
	return eintr || early ? 1 : 0;
}
