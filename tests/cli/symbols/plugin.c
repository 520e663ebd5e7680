/* SPDX-License-Identifier: MIT */
/* plugin.c - the library prog.c dlopen()s (tests/cli/symbols.sh): sleeps
 * from a function inlined into plugin_run(). */
#include <unistd.h>

volatile int plugin_sink;

static inline __attribute__((always_inline)) void plugin_nap(int us)
{
	plugin_sink++;
	usleep((useconds_t)us);
	plugin_sink++;
}

__attribute__((noinline, noclone)) void plugin_run(int n)
{
	for (int i = 0; i < n; i++)
		plugin_nap(1000);
}
