/* SPDX-License-Identifier: MIT */
/*
 * prog.c - the program of tests/cli/symbols.sh, built there with -O2 -g:
 * sleeps (rec.Sleep, with a stack) from functions inlined two levels deep
 * into worker(), then from a library it dlopen()s after the recording
 * started (plugin.c), then from worker() again.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

volatile int sink;

static inline __attribute__((always_inline)) void leaf_sleep(int us)
{
	sink++;
	usleep((useconds_t)us);
	sink++;
}

static inline __attribute__((always_inline)) void middle(int us)
{
	sink += 2;
	leaf_sleep(us);
	sink += 3;
}

__attribute__((noinline, noclone)) void worker(int n)
{
	for (int i = 0; i < n; i++)
		middle(1000);
	sink++;
}

__attribute__((noinline, noclone)) void direct(void)
{
	usleep(1000);
	sink++;
}

int main(int argc, char **argv)
{
	worker(3);
	direct();
	if (argc > 1) {
		void *h = dlopen(argv[1], RTLD_NOW);
		if (!h) {
			fprintf(stderr, "prog: %s\n", dlerror());
			return 1;
		}
		void (*run)(int) = (void (*)(int))dlsym(h, "plugin_run");
		if (!run) {
			fprintf(stderr, "prog: no plugin_run\n");
			return 1;
		}
		run(2);
	}
	worker(1);
	return sink == 0;
}
