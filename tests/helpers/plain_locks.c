/* SPDX-License-Identifier: MIT */
/*
 * plain_locks.c - a program that knows nothing of rec (built without
 * librec), for the preload library's tests, with the locks other than a
 * plain mutex:
 *   - lock order: the main thread takes lock_a then lock_b; then lock_b,
 *     lock_a by a trylock (no pair: a trylock never waits) and lock_c
 *     (pairs lock_b -> lock_c and lock_a -> lock_c: a lock taken by a
 *     trylock is held like any other);
 *   - rwlock: thread "writer" write-locks config_rwlock for 150 ms while the
 *     main thread waits to read-lock it;
 *   - the old condition variable: this file calls pthread_cond_wait and
 *     pthread_cond_signal at version GLIBC_2.2.5 (as a binary linked before
 *     2003 does); thread "sleeper" waits 100 ms until the main thread
 *     signals it.
 * Prints "main_tid", "writer_tid", "sleeper_tid", "rd_wait_ms" (the read
 * lock's wait as the program measured it) and "cond_ok 1" if the old
 * condition variable worked.
 *
 * plain_locks hammer: instead, 4 threads take hammer_lock 4000 times each,
 * holding it a moment (the lock changes hands often, its owner field 0 for
 * an instant each time); prints "hammer_tid K TID" for each.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__asm__(".symver pthread_cond_wait, pthread_cond_wait@GLIBC_2.2.5");
__asm__(".symver pthread_cond_signal, pthread_cond_signal@GLIBC_2.2.5");

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_c = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t config_rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t old_cond_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t old_cond = PTHREAD_COND_INITIALIZER;
static int writing, woken, cond_ok;
static long writer_tid, sleeper_tid;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *writer(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "writer");
	writer_tid = syscall(SYS_gettid);
	pthread_rwlock_wrlock(&config_rwlock);
	__atomic_store_n(&writing, 1, __ATOMIC_RELEASE);
	struct timespec ts = { 0, 150 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	pthread_rwlock_unlock(&config_rwlock);
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "sleeper");
	sleeper_tid = syscall(SYS_gettid);
	pthread_mutex_lock(&old_cond_lock);
	while (!woken)
		pthread_cond_wait(&old_cond, &old_cond_lock);
	cond_ok = 1;
	pthread_mutex_unlock(&old_cond_lock);
	return NULL;
}

#define HAMMER_THREADS 4
static pthread_mutex_t hammer_lock = PTHREAD_MUTEX_INITIALIZER;
static long hammer_tids[HAMMER_THREADS];

static void *hammer(void *arg)
{
	long *tid = arg;
	*tid = syscall(SYS_gettid);
	for (int i = 0; i < 4000; i++) {
		pthread_mutex_lock(&hammer_lock);
		for (volatile int spin = 0; spin < 200; spin++)
			;
		pthread_mutex_unlock(&hammer_lock);
		for (volatile int spin = 0; spin < 50; spin++)
			;
	}
	return NULL;
}

static int hammer_main(void)
{
	pthread_t th[HAMMER_THREADS];
	for (int k = 0; k < HAMMER_THREADS; k++)
		if (pthread_create(&th[k], NULL, hammer, &hammer_tids[k]) != 0)
			return 1;
	for (int k = 0; k < HAMMER_THREADS; k++)
		pthread_join(th[k], NULL);
	for (int k = 0; k < HAMMER_THREADS; k++)
		printf("hammer_tid %d %ld\n", k, hammer_tids[k]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "hammer") == 0)
		return hammer_main();
	pthread_t w, s;
	pthread_mutex_lock(&lock_a);
	pthread_mutex_lock(&lock_b);
	pthread_mutex_unlock(&lock_b);
	pthread_mutex_unlock(&lock_a);
	pthread_mutex_lock(&lock_b);
	if (pthread_mutex_trylock(&lock_a) != 0)
		return 1; /* nobody else holds it */
	pthread_mutex_lock(&lock_c);
	pthread_mutex_unlock(&lock_c);
	pthread_mutex_unlock(&lock_a);
	pthread_mutex_unlock(&lock_b);

	pthread_create(&s, NULL, sleeper, NULL);
	pthread_create(&w, NULL, writer, NULL);
	while (!__atomic_load_n(&writing, __ATOMIC_ACQUIRE))
		sched_yield();
	double t0 = now_ms();
	pthread_rwlock_rdlock(&config_rwlock);
	double waited = now_ms() - t0;
	pthread_rwlock_unlock(&config_rwlock);
	pthread_join(w, NULL);

	usleep(100 * 1000);
	pthread_mutex_lock(&old_cond_lock);
	woken = 1;
	pthread_cond_signal(&old_cond);
	pthread_mutex_unlock(&old_cond_lock);
	pthread_join(s, NULL);
	printf("main_tid %ld\nwriter_tid %ld\nsleeper_tid %ld\nrd_wait_ms %.1f\ncond_ok %d\n",
	       (long)syscall(SYS_gettid), writer_tid, sleeper_tid, waited, cond_ok);
	return 0;
}
