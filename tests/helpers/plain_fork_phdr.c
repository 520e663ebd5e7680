/* SPDX-License-Identifier: MIT */
/*
 * plain_fork_phdr.c - a program that knows nothing of rec (built without
 * librec), for the preload library's tests: a thread walks the loaded
 * modules with dl_iterate_phdr in a loop, sleeping PAUSE us in its callback
 * for every module (argument 2, default 300; the loader's lock is held all
 * that time, as in a C++ unwinder that is slow), while the main thread
 * forks CHILDREN children one after the other (argument 1, default 20); a
 * PAUSE of a second or more ends each walk after its first module.  A child allocates (1 MiB
 * in 4 KiB blocks, so that it has sampled allocations with stacks to
 * symbolize), sleeps 2 ms and _exits 5.  The parent waits up to 10 s for
 * each; a child still running then is killed (SIGKILL) and counted as hung.
 * It prints "children N" (those that exited 5), "hung N", "walks N" (the
 * walks the thread made; above 0, or nothing was tested) and "main_tid".
 */
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int stop;
static long pause_cb_us = 300;
static long walks;
static void *volatile sink;

static void pause_us(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };
	nanosleep(&ts, NULL);
}

static int slow_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	(void)arg;
	pause_us(pause_cb_us);
	/* a pause of a second or more: one module per walk (the walk lasts
	 * that pause); and every walk ends when the program does */
	return pause_cb_us >= 1000000 || __atomic_load_n(&stop, __ATOMIC_RELAXED);
}

static void *walker(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		dl_iterate_phdr(slow_cb, NULL);
		__atomic_add_fetch(&walks, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void child(void)
{
	for (int i = 0; i < 256; i++) {
		char *p = malloc(4096);
		if (p != NULL)
			p[0] = 1;
		sink = p;
	}
	pause_us(2000);
	_exit(5);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20, ok = 0, hung = 0;
	if (argc > 2)
		pause_cb_us = atol(argv[2]);
	pthread_t th;
	if (pthread_create(&th, NULL, walker, NULL) != 0)
		return 1;
	pause_us(5000);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0)
			child();
		if (pid < 0)
			return 1;
		int st = 0, done = 0;
		for (int t = 0; t < 10000 && !done; t++) {
			pid_t w = waitpid(pid, &st, WNOHANG);
			if (w == pid)
				done = 1;
			else
				pause_us(1000);
		}
		if (!done) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			hung++;
		} else if (WIFEXITED(st) && WEXITSTATUS(st) == 5) {
			ok++;
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	printf("children %d\nhung %d\nwalks %ld\nmain_tid %ld\n", ok, hung,
	       __atomic_load_n(&walks, __ATOMIC_RELAXED), (long)syscall(SYS_gettid));
	return 0;
}
