/* SPDX-License-Identifier: MIT */
/*
 * plain_poll.c - a program that knows nothing of rec and waits for
 * descriptors the ways an event loop does (tests/cli/preload_poll.sh):
 *   poll on an empty pipe, 60 ms timeout           (times out: 0)
 *   select on it, 40 ms                            (0)
 *   ppoll on it, 25 ms                             (0)
 *   epoll_wait, 8 events, 1 s, on a second pipe a thread writes to after
 *   30 ms                                          (1 ready)
 *   3 polls of 5 ms, then 2000 polls of 0 ms       (short ones)
 * Prints one line per long wait: "CALL FD WATCHED TIMEOUT_NS RC ELAPSED_NS"
 * (FD: the epoll descriptor, else -1), then "short 3 2000" and "done".
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static int wake[2];

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *writer(void *p)
{
	(void)p;
	struct timespec ts = { 0, 30000000 };
	nanosleep(&ts, NULL);
	if (write(wake[1], "x", 1) != 1)
		perror("write");
	return NULL;
}

static void report(const char *call, int fd, int watched, long long timeout_ns, int rc,
		   uint64_t t0)
{
	printf("%s %d %d %lld %d %llu\n", call, fd, watched, timeout_ns, rc,
	       (unsigned long long)(now_ns() - t0));
}

int main(void)
{
	int idle[2];
	if (pipe(idle) != 0 || pipe(wake) != 0)
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);

	struct pollfd pf = { idle[0], POLLIN, 0 };
	uint64_t t0 = now_ns();
	int rc = poll(&pf, 1, 60);
	report("poll", -1, 1, 60000000, rc, t0);

	fd_set rs;
	FD_ZERO(&rs);
	FD_SET(idle[0], &rs);
	struct timeval tv = { 0, 40000 };
	t0 = now_ns();
	rc = select(idle[0] + 1, &rs, NULL, NULL, &tv);
	report("select", -1, 1, 40000000, rc, t0);

	struct timespec ts = { 0, 25000000 };
	sigset_t none;
	sigemptyset(&none);
	t0 = now_ns();
	rc = ppoll(&pf, 1, &ts, &none);
	report("ppoll", -1, 1, 25000000, rc, t0);

	int ep = epoll_create1(0);
	struct epoll_event ee = { .events = EPOLLIN, .data.fd = wake[0] };
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, wake[0], &ee) != 0)
		return 1;
	pthread_t th;
	if (pthread_create(&th, NULL, writer, NULL) != 0)
		return 1;
	struct epoll_event got[8];
	t0 = now_ns();
	rc = epoll_wait(ep, got, 8, 1000);
	report("epoll_wait", ep, 8, 1000000000, rc, t0);
	pthread_join(th, NULL);

	int shorts = 0, zeros = 0;
	for (int i = 0; i < 3; i++)
		shorts += poll(&pf, 1, 5) == 0;
	for (int i = 0; i < 2000; i++)
		zeros += poll(&pf, 1, 0) == 0;
	printf("short %d %d\n", shorts, zeros);
	printf("done\n");
	return 0;
}
