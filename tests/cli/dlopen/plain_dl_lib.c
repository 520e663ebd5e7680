/* SPDX-License-Identifier: MIT */
/*
 * plain_dl_lib.c - the library tests/cli/preload_dlopen.sh builds (cc -shared)
 * and tests/helpers/plain_dlopen.c loads while it is recorded: plain_dl_run()
 * starts a thread that holds plain_dl_lock for 80 ms while the caller,
 * 20 ms later, waits for it (a lock wait of about 60 ms, in this library's
 * frames), then allocates 1 MiB in 4 KiB blocks.  Returns 1 + the blocks
 * allocated (257).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
static pthread_mutex_t plain_dl_lock = PTHREAD_MUTEX_INITIALIZER;
static void *volatile keep;
__attribute__((noinline)) static void plain_dl_nap(long ms)
{
	struct timespec ts = { 0, ms * 1000 * 1000 };
	nanosleep(&ts, NULL);
}
__attribute__((noinline)) static void *plain_dl_holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&plain_dl_lock);
	plain_dl_nap(80);
	pthread_mutex_unlock(&plain_dl_lock);
	return NULL;
}
__attribute__((noinline)) static int plain_dl_waiter(void)
{
	plain_dl_nap(20);
	pthread_mutex_lock(&plain_dl_lock);
	pthread_mutex_unlock(&plain_dl_lock);
	return 1;
}
__attribute__((noinline)) static int plain_dl_allocate(void)
{
	int n = 0;
	for (int i = 0; i < 256; i++) {
		char *p = malloc(4096);
		if (p != NULL) {
			p[0] = 1;
			n++;
		}
		keep = p;
	}
	return n;
}
int plain_dl_run(void);
int plain_dl_run(void)
{
	pthread_t th;
	if (pthread_create(&th, NULL, plain_dl_holder, NULL) != 0)
		return -1;
	int w = plain_dl_waiter();
	pthread_join(th, NULL);
	return w + plain_dl_allocate();
}
