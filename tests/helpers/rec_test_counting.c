/* SPDX-License-Identifier: MIT */
/*
 * rec_test_counting.c - a program that counts, for tests/cli/counters.sh.
 *
 *   rec_test_counting [--wait FILE] NAME=N...
 *       records through REC_OUTPUT (opened by the library before main):
 *       adds N to counter NAME, one rec_counter_add() per unit, then returns
 *       from main (the recording closes at exit); with --wait, creates FILE
 *       once everything is counted and sleeps until it is killed.
 *   rec_test_counting --wrap PATH
 *       without REC_OUTPUT: counter "wrap.count" is at 2^64 - 10 before a
 *       default recorder opens on PATH; then +5, a sample, +20 (past
 *       2^64 - 1, to 15), and close: the recording counted 25.
 * Exits 0 on success, 1 on any failure, 2 on usage errors.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec/metrics.h"
#include "rec/recorder.h"

static int wrap(const char *path)
{
	rec_counter *c = NULL;
	if (rec_recorder_default() || rec_counter_get("wrap.count", &c) != REC_OK)
		return 1;
	rec_counter_add(c, UINT64_MAX - 9);
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.flags = REC_RECORDER_DEFAULT;
	o.path = path;
	rec_recorder *r = NULL;
	if (rec_recorder_open(&r, &o) != REC_OK)
		return 1;
	rec_counter_add(c, 5);
	if (rec_metrics_sample() != REC_OK)
		return 1;
	rec_counter_add(c, 20);
	if (rec_counter_value(c) != 15)
		return 1;
	return rec_recorder_close(r) == REC_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--wrap") == 0)
		return wrap(argv[2]);
	int i = 1;
	const char *wait_file = NULL;
	if (argc > 2 && strcmp(argv[1], "--wait") == 0) {
		wait_file = argv[2];
		i = 3;
	}
	if (!rec_recorder_default()) {
		fprintf(stderr, "rec_test_counting: no REC_OUTPUT recording\n");
		return 1;
	}
	for (; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		if (!eq || eq == argv[i] || (size_t)(eq - argv[i]) > REC_METRIC_NAME_MAX) {
			fprintf(stderr, "usage: rec_test_counting [--wait FILE] NAME=N...\n");
			return 2;
		}
		char name[REC_METRIC_NAME_MAX + 1];
		memcpy(name, argv[i], (size_t)(eq - argv[i]));
		name[eq - argv[i]] = '\0';
		rec_counter *c = NULL;
		if (rec_counter_get(name, &c) != REC_OK)
			return 1;
		unsigned long long n = strtoull(eq + 1, NULL, 10);
		for (unsigned long long k = 0; k < n; k++)
			rec_counter_add(c, 1);
	}
	if (wait_file) {
		int fd = open(wait_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0 || close(fd) != 0)
			return 1;
		for (;;)
			pause();
	}
	return 0;
}
