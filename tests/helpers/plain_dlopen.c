/* SPDX-License-Identifier: MIT */
/*
 * plain_dlopen.c - a program that knows nothing of rec (built without
 * librec) and loads a library while it runs, for the preload library's
 * tests:
 *   plain_dlopen LIBRARY
 * sleeps 20 ms (the recording is under way), dlopens LIBRARY, and calls its
 * plain_dl_run(): that function (tests/cli/preload_dlopen.sh builds it)
 * makes a lock wait and allocations in the library's own code.  Prints
 * "run N" (what plain_dl_run returned) and "main_tid N".
 */
#include <dlfcn.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: plain_dlopen LIBRARY\n");
		return 2;
	}
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		fprintf(stderr, "plain_dlopen: %s\n", dlerror());
		return 1;
	}
	int (*run)(void);
	*(void **)&run = dlsym(h, "plain_dl_run");
	if (run == NULL) {
		fprintf(stderr, "plain_dlopen: %s\n", dlerror());
		return 1;
	}
	printf("run %d\nmain_tid %ld\n", run(), (long)syscall(SYS_gettid));
	return 0;
}
