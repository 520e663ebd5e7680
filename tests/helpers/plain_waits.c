/* SPDX-License-Identifier: MIT */
/*
 * plain_waits.c - a program that knows nothing of rec (built without
 * librec), for the preload library's tests: plain pthread and libc calls.
 *   - thread "holder" takes the global quote_cache_lock and sleeps 300 ms in
 *     it (nanosleep) while the main thread waits to take it;
 *   - thread "waiter" waits on a condition variable (pthread_cond_wait)
 *     until the main thread signals it 200 ms later, then once more with
 *     pthread_cond_timedwait that times out after 100 ms;
 *   - the main thread sleeps with usleep (50 ms) and clock_nanosleep (60 ms).
 * It prints what it knows, one "key value" a line: the tids, the wait it
 * measured itself (ms).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t quote_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t state_cond = PTHREAD_COND_INITIALIZER;
static int holding, go;
static long holder_tid, waiter_tid;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *holder(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "holder");
	holder_tid = syscall(SYS_gettid);
	pthread_mutex_lock(&quote_cache_lock);
	__atomic_store_n(&holding, 1, __ATOMIC_RELEASE);
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	pthread_mutex_unlock(&quote_cache_lock);
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "waiter");
	waiter_tid = syscall(SYS_gettid);
	pthread_mutex_lock(&state_lock);
	while (!go)
		pthread_cond_wait(&state_cond, &state_lock);
	struct timespec abs;
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_nsec += 100 * 1000 * 1000;
	if (abs.tv_nsec >= 1000000000) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&state_cond, &state_lock, &abs);
	pthread_mutex_unlock(&state_lock);
	return NULL;
}

int main(void)
{
	pthread_t h, w;
	pthread_create(&w, NULL, waiter, NULL);
	pthread_create(&h, NULL, holder, NULL);
	while (!__atomic_load_n(&holding, __ATOMIC_ACQUIRE))
		sched_yield();
	double t0 = now_ms();
	pthread_mutex_lock(&quote_cache_lock);
	double waited = now_ms() - t0;
	pthread_mutex_unlock(&quote_cache_lock);

	usleep(50 * 1000);
	struct timespec ts = { 0, 60 * 1000 * 1000 };
	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);

	usleep(200 * 1000 - 110 * 1000); /* the waiter has waited ~200 ms in all */
	pthread_mutex_lock(&state_lock);
	go = 1;
	pthread_cond_signal(&state_cond);
	pthread_mutex_unlock(&state_lock);
	pthread_join(h, NULL);
	pthread_join(w, NULL);
	printf("main_tid %ld\nholder_tid %ld\nwaiter_tid %ld\nlock_wait_ms %.1f\nlock_addr %p\n",
	       (long)syscall(SYS_gettid), holder_tid, waiter_tid, waited, (void *)&quote_cache_lock);
	return 0;
}
