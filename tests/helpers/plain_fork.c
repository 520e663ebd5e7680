/* SPDX-License-Identifier: MIT */
/*
 * plain_fork.c - a program that knows nothing of rec (built without
 * librec), for the preload library's tests: 4 threads that allocate and
 * take a shared mutex in a loop while each of them forks 5 children; a
 * child allocates, takes a mutex of its own (not the shared one: another
 * parent thread may hold that at the fork, and no thread is left in the
 * child to release it), sleeps 20 ms in it and exits with status 7.  The parent checks
 * every child's status and prints "children N" (the children that exited
 * with 7) and "main_tid".
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define THREADS 4
#define FORKS 5

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t child_lock = PTHREAD_MUTEX_INITIALIZER; /* only children take it */
static int ok_children;
static void *volatile sink;

static void child(void)
{
	for (int i = 0; i < 100; i++) {
		sink = malloc(1000 + (size_t)i);
		free(sink);
	}
	pthread_mutex_lock(&child_lock);
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	pthread_mutex_unlock(&child_lock);
	_exit(7);
}

static void *work(void *arg)
{
	(void)arg;
	for (int f = 0; f < FORKS; f++) {
		for (int i = 0; i < 200; i++) {
			pthread_mutex_lock(&shared_lock);
			sink = malloc(64 + (size_t)i);
			free(sink);
			pthread_mutex_unlock(&shared_lock);
		}
		pid_t pid = fork();
		if (pid == 0)
			child();
		int st = 0;
		if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 7)
			__atomic_add_fetch(&ok_children, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int main(void)
{
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, work, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	printf("children %d\nmain_tid %ld\n", ok_children, (long)syscall(SYS_gettid));
	return 0;
}
