/* SPDX-License-Identifier: MIT */
/*
 * plain_daemon.c - a program that knows nothing of rec (built without
 * librec) and daemonizes as many do, for the preload library's tests:
 * chdir("/"), closes every descriptor (argv[2]: "close" one close() at a
 * time up to 1024, "range" close_range(0, ~0U, 0), "from" closefrom(0)),
 * opens /dev/null as 0, 1 and 2, then sleeps 100 ms inside a mutex while a
 * thread waits for it, and writes 1000 lines "daemon line N" to its own file
 * argv[1] (a new descriptor: the lowest free number).  Exit 0 if every
 * write succeeded.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t daemon_lock = PTHREAD_MUTEX_INITIALIZER;
static int holding;

static void *waiter(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&holding, __ATOMIC_ACQUIRE))
		sched_yield();
	pthread_mutex_lock(&daemon_lock);
	pthread_mutex_unlock(&daemon_lock);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 || chdir("/") != 0)
		return 2;
	if (strcmp(argv[2], "range") == 0)
		close_range(0, ~0U, 0);
	else if (strcmp(argv[2], "from") == 0)
		closefrom(0);
	else
		for (int fd = 0; fd < 1024; fd++)
			close(fd);
	for (int i = 0; i < 3; i++)
		if (open("/dev/null", O_RDWR) != i)
			return 3;
	pthread_t w;
	pthread_create(&w, NULL, waiter, NULL);
	pthread_mutex_lock(&daemon_lock);
	__atomic_store_n(&holding, 1, __ATOMIC_RELEASE);
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	pthread_mutex_unlock(&daemon_lock);
	pthread_join(w, NULL);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 4;
	for (int i = 0; i < 1000; i++) {
		char line[64];
		int n = snprintf(line, sizeof line, "daemon line %d\n", i);
		if (write(fd, line, (size_t)n) != n)
			return 5;
	}
	return close(fd) == 0 ? 0 : 6;
}
