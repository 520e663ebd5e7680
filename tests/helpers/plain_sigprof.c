/* SPDX-License-Identifier: MIT */
/*
 * plain_sigprof.c - a program that knows nothing of rec (built without
 * librec) and profiles itself with SIGPROF: it burns 500 ms of CPU, then
 * installs its own SIGPROF handler (argv[1]: "sigaction" or "signal") and a
 * 10 ms ITIMER_PROF, burns 300 ms more and prints "ticks N", the signals
 * its handler got.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile sig_atomic_t ticks;
static volatile unsigned long spin;

static void on_prof(int sig)
{
	(void)sig;
	ticks++;
}

static void burn(double ms)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			spin += (unsigned long)i;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1e3 + (t.tv_nsec - t0.tv_nsec) / 1e6 < ms);
}

int main(int argc, char **argv)
{
	burn(500);
	if (argc > 1 && strcmp(argv[1], "signal") == 0) {
		signal(SIGPROF, on_prof);
	} else {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_prof;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGPROF, &sa, NULL);
	}
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
	setitimer(ITIMER_PROF, &it, NULL);
	burn(300);
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_PROF, &off, NULL);
	printf("ticks %d\n", (int)ticks);
	return 0;
}
