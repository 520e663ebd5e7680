/* SPDX-License-Identifier: MIT */
/*
 * plain_steps.c - a program that knows nothing of rec (built without
 * librec), for duration= (tests/cli/preload_duration.sh): 50 steps of a
 * 20 ms nanosleep (about 1 s), each printed as "step I NS" with the
 * CLOCK_REALTIME ns at which its sleep began, then exit status 4.
 */
#include <stdio.h>
#include <time.h>

int main(void)
{
	for (int i = 0; i < 50; i++) {
		struct timespec now, ts = { 0, 20 * 1000 * 1000 };
		clock_gettime(CLOCK_REALTIME, &now);
		printf("step %d %lld\n", i, (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
		fflush(stdout);
		if (nanosleep(&ts, NULL) != 0)
			return 1;
	}
	return 4;
}
