/* SPDX-License-Identifier: MIT */
/*
 * plain_rename.c - a program that knows nothing of rec (built without
 * librec) whose thread renames itself long after its start, for the
 * preload library's tests: the thread names itself "before" at its start,
 * sleeps 30 ms, waits 900 ms (the recorder has written it out under that
 * name by then: run with flush=100ms), names itself "after", sleeps 50 ms
 * and takes a mutex the main thread holds (the main thread sleeps 100 ms
 * in it: a lock wait of about 100 ms under the new name), then sleeps
 * 70 ms and exits.  A second thread is named by the main thread:
 * "o-before" right after its start (before it is written out), and
 * "o-after" once the worker renamed itself (long after it was written
 * out); it sleeps 30 ms before that rename and 50 ms after it.  Prints
 * "worker_tid N", "other_tid N" and "main_tid N".
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t renamed; /* not interposed: the main thread waits unrecorded */
static sem_t other_ready, other_go;
static long worker_tid, other_tid;

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

static void *other(void *arg)
{
	(void)arg;
	other_tid = (long)syscall(SYS_gettid);
	nap(30);
	sem_post(&other_ready);
	while (sem_wait(&other_go) != 0)
		;
	nap(50);
	return NULL;
}

int main(void)
{
	pthread_t th, ot;
	pthread_mutex_lock(&lock);
	if (sem_init(&renamed, 0, 0) != 0 || sem_init(&other_ready, 0, 0) != 0 ||
	    sem_init(&other_go, 0, 0) != 0)
		return 1;
	if (pthread_create(&th, NULL, worker, NULL) != 0 || pthread_create(&ot, NULL, other, NULL) != 0)
		return 1;
	pthread_setname_np(ot, "o-before");
	while (sem_wait(&other_ready) != 0)
		;
	while (sem_wait(&renamed) != 0)
		;
	pthread_setname_np(ot, "o-after");
	sem_post(&other_go);
	nap(100);
	pthread_mutex_unlock(&lock);
	pthread_join(th, NULL);
	pthread_join(ot, NULL);
	printf("worker_tid %ld\nother_tid %ld\nmain_tid %ld\n", worker_tid, other_tid,
	       (long)syscall(SYS_gettid));
	return 0;
}
