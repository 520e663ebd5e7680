/* SPDX-License-Identifier: MIT */
/*
 * plain_rename.c - a program that knows nothing of rec (built without
 * librec) whose thread renames itself long after its start, for the
 * preload library's tests: the thread names itself "before" at its start,
 * sleeps 30 ms, waits 900 ms (the recorder has written it out under that
 * name by then: run with flush=100ms), names itself "after", sleeps 50 ms
 * and takes a mutex the main thread holds (the main thread sleeps 100 ms
 * in it: a lock wait of about 100 ms under the new name), then sleeps
 * 70 ms and exits.  Prints "worker_tid N" and "main_tid N".
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t renamed; /* not interposed: the main thread waits unrecorded */
static long worker_tid;

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000 * 1000 };
	nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "before");
	worker_tid = (long)syscall(SYS_gettid);
	nap(30);
	nap(900);
	pthread_setname_np(pthread_self(), "after");
	nap(50);
	sem_post(&renamed);
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	nap(70);
	return NULL;
}

int main(void)
{
	pthread_t th;
	pthread_mutex_lock(&lock);
	if (sem_init(&renamed, 0, 0) != 0)
		return 1;
	if (pthread_create(&th, NULL, worker, NULL) != 0)
		return 1;
	while (sem_wait(&renamed) != 0)
		;
	nap(100);
	pthread_mutex_unlock(&lock);
	pthread_join(th, NULL);
	printf("worker_tid %ld\nmain_tid %ld\n", worker_tid, (long)syscall(SYS_gettid));
	return 0;
}
