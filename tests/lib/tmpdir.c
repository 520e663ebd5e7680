/* SPDX-License-Identifier: MIT */
/* tmpdir.c - see tmpdir.h. */
#include "tmpdir.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int rec_t_tmpdir_create(char *buf, size_t size, const char *prefix)
{
	int n = snprintf(buf, size, "/tmp/%s-XXXXXX", prefix);
	if (n < 0 || (size_t)n >= size) {
		fprintf(stderr, "tmpdir: /tmp/%s-XXXXXX does not fit in %zu bytes\n", prefix, size);
		errno = ENAMETOOLONG;
		return -1;
	}
	if (!mkdtemp(buf)) {
		int e = errno;
		fprintf(stderr, "tmpdir: mkdtemp %s: %s\n", buf, strerror(e));
		errno = e;
		return -1;
	}
	return 0;
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	if (remove(path) != 0) {
		fprintf(stderr, "tmpdir: remove %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int rec_t_tmpdir_remove(const char *dir)
{
	/* depth first (FTW_DEPTH), not crossing into symlinked directories (FTW_PHYS) */
	return nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

int rec_t_tmpdir_finish(const char *dir, int rc)
{
	if (rc == 0 && rec_t_tmpdir_remove(dir) != 0)
		rc = 1;
	return rc;
}

uint64_t rec_t_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void rec_t_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}
