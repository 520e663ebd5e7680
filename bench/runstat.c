/* SPDX-License-Identifier: MIT */
/*
 * runstat - run a command with stdout to /dev/null and print one line
 *   "wall_s user_s sys_s maxrss_kb exit_status"
 * (bench/run.sh; not built by make).  Wall time is CLOCK_MONOTONIC around
 * fork/exec/wait4; user/sys CPU time (all threads) and peak RSS come from
 * wait4()'s rusage: ru_maxrss is the figure `/usr/bin/time -f %M` prints (GNU
 * time reads it the same way).  The kernel's maxrss of a child includes the
 * memory of the process it was forked from, so this helper is a small C
 * program (about 1 MiB of floor), like GNU time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: runstat CMD [ARG...]\n");
		return 2;
	}
	double t0 = now_s();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "runstat: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(126);
		execvp(argv[1], argv + 1);
		fprintf(stderr, "runstat: %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	int status = 0;
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "runstat: wait4: %s\n", strerror(errno));
			return 1;
		}
	}
	double t1 = now_s();
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	printf("%.6f %.6f %.6f %ld %d\n", t1 - t0,
	       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss, code);
	return 0;
}
