/* SPDX-License-Identifier: MIT */
/* static.c - a statically linked program recording through librec.a
 * (REC_OUTPUT) for tests/cli/symbols.sh: a sleep from a function inlined
 * into st_worker(). */
#include <rec/builtins.h>

volatile int sink;

static inline __attribute__((always_inline)) void st_leaf(int us)
{
	sink++;
	rec_usleep((unsigned long)us);
	sink++;
}

__attribute__((noinline, noclone)) void st_worker(int n)
{
	for (int i = 0; i < n; i++)
		st_leaf(1000);
	sink++;
}

int main(void)
{
	st_worker(2);
	return sink == 0;
}
