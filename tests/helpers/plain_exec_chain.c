/* SPDX-License-Identifier: MIT */
/*
 * plain_exec_chain.c - a program that knows nothing of rec (built without
 * librec) and execs, for the preload library's forks=on tests:
 *   plain_exec_chain            sleeps 30 ms; forks a child that sleeps
 *                               20 ms and execs "plain_exec_chain child"
 *                               (execv); waits for it; prints "child_pid N"
 *                               and "child_status N", "main_pid N"; then
 *                               execs "plain_exec_chain final" itself
 *                               (execl, no fork)
 *   plain_exec_chain child      sleeps 50 ms, exits 3
 *   plain_exec_chain final      sleeps 60 ms, prints "final_pid N", exits 0
 * Every sleep is a nanosleep of its own length, so that the recording it
 * lands in says which image of which process made it.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void nap(long ms)
{
	struct timespec ts = { 0, ms * 1000 * 1000 };
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "child") == 0) {
		nap(50);
		return 3;
	}
	if (argc > 1 && strcmp(argv[1], "final") == 0) {
		nap(60);
		printf("final_pid %ld\n", (long)getpid());
		return 0;
	}
	nap(30);
	pid_t pid = fork();
	if (pid == 0) {
		nap(20);
		char *const args[] = { argv[0], (char *)"child", NULL };
		execv(argv[0], args);
		_exit(127);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	printf("child_pid %ld\nchild_status %d\nmain_pid %ld\n", (long)pid,
	       WIFEXITED(st) ? WEXITSTATUS(st) : -1, (long)getpid());
	fflush(stdout);
	execl(argv[0], argv[0], "final", (char *)NULL);
	return 127;
}
