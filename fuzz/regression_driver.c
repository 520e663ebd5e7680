/* SPDX-License-Identifier: MIT */
/*
 * regression_driver.c - replay inputs through a harness's
 * LLVMFuzzerTestOneInput() without libFuzzer, so any compiler can run the
 * corpus and the crash regressions (make test).  Arguments are files or
 * directories (walked recursively, in sorted order).  Looks for crashes,
 * sanitizer reports and the harnesses' own aborts; no output is checked.
 * Exit 0 after "Tested N files: Success!", 1 on a usage or I/O error; a
 * crashing input dies with its name printed first.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static unsigned tested;

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (cap - len < 65536) {
			size_t ncap = cap ? cap * 2 : 65536;
			uint8_t *nb = realloc(buf, ncap);
			if (!nb) {
				fprintf(stderr, "replay: %s: out of memory\n", path);
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
			cap = ncap;
		}
		size_t n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	int err = ferror(f);
	fclose(f);
	if (err) {
		fprintf(stderr, "replay: %s: read error\n", path);
		free(buf);
		return -1;
	}
	/* An exact-size copy, so ASan catches a read one past the input. */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	if (len)
		memcpy(exact, buf, len);
	free(buf);
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	tested++;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path);

	DIR *d = opendir(path);
	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			char **nn = realloc(names, ncap * sizeof *nn);
			if (!nn) {
				rc = -1;
				break;
			}
			names = nn;
			cap = ncap;
		}
		size_t l = strlen(path) + 1 + strlen(e->d_name) + 1;
		if (!(names[n] = malloc(l))) {
			rc = -1;
			break;
		}
		snprintf(names[n], l, "%s/%s", path, e->d_name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, by_name);
	for (size_t i = 0; i < n; i++) {
		if (rc == 0 && replay(names[i]) != 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 1;
	}
	for (int i = 1; i < argc; i++)
		if (replay(argv[i]) != 0)
			return 1;
	fprintf(stderr, "Tested %u files: Success!\n", tested);
	return 0;
}
