/* SPDX-License-Identifier: MIT */
/*
 * rec_test_archive_counters.c - writes the recording of tests/unit/
 * test_counters.c to argv[1]: five runs of a service (four end without a
 * FINAL chunk), counters "requests" (total 91, 1 reset) and "errors" (total
 * 8, 1 reset), for CLI tests of tools that show counter totals.
 * Exits 0 on success, 1 on any failure.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec/rec.h"

#include "../lib/counter_runs.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: rec_test_archive_counters OUT\n");
		return 2;
	}
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	for (int k = 0; k < 5; k++) {
		const char *failed = "";
		if (rec_t_counter_write_run(fd, k, &rec_t_counter_runs[k], &failed) != REC_OK) {
			fprintf(stderr, "rec_test_archive_counters: %s failed\n", failed);
			exit(1);
		}
	}
	return close(fd) == 0 ? 0 : 1;
}
