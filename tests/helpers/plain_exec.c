/* SPDX-License-Identifier: MIT */
/*
 * plain_exec.c - a program that knows nothing of rec (built without
 * librec) and runs others: it sleeps 30 ms, runs system("sleep 0.2"),
 * reads popen("printf %s \"$LD_PRELOAD\"") (what its children inherit),
 * sleeps 40 ms.  Prints "system N" (system's exit status) and
 * "child_preload TEXT".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

static void nap(long ms)
{
	struct timespec ts = { 0, ms * 1000 * 1000 };
	nanosleep(&ts, NULL);
}

int main(void)
{
	nap(30);
	int st = system("sleep 0.2");
	char buf[4096] = "";
	FILE *p = popen("printf %s \"$LD_PRELOAD\"", "r");
	if (p == NULL || fgets(buf, sizeof buf, p) == NULL)
		buf[0] = 0;
	if (p != NULL)
		pclose(p);
	nap(40);
	printf("system %d\nchild_preload %s\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1, buf);
	return 0;
}
