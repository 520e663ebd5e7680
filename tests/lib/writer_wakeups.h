/* SPDX-License-Identifier: MIT */
/*
 * writer_wakeups.h - how often the recorder's background thread woke: the
 * voluntary context switches of the thread named "rec-writer" (each round
 * ends in a futex wait, so each is one wake-up), from /proc/self/task.
 * -1: no such thread.
 */
#ifndef REC_TESTS_LIB_WRITER_WAKEUPS_H
#define REC_TESTS_LIB_WRITER_WAKEUPS_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>

static inline long rec_t_writer_wakeups(void)
{
	char path[300], line[256];
	long n = -1;
	DIR *d = opendir("/proc/self/task");
	if (d == NULL)
		return -1;
	struct dirent *de;
	while (n < 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", de->d_name);
		FILE *f = fopen(path, "r");
		if (f == NULL)
			continue;
		int is_writer = fgets(line, sizeof line, f) != NULL && strcmp(line, "rec-writer\n") == 0;
		fclose(f);
		if (!is_writer)
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/status", de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		while (fgets(line, sizeof line, f) != NULL)
			if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
				break;
		fclose(f);
	}
	closedir(d);
	return n;
}

#endif
