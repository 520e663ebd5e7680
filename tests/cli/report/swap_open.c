/* SPDX-License-Identifier: MIT */
/*
 * swap_open.c - a preload for tests/cli/report_changed.sh: a file that
 * changes between two readings.  With SWAP_OPEN="FROM:TO" the first open()
 * of the path FROM opens FROM, every later one opens TO instead; at exit
 * the number of opens of FROM is written to stderr as "swap_open: N".
 * Built by the test (cc -shared -fPIC), preloaded into rec-report.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int opens;

static const char *swapped(const char *path)
{
	const char *spec = getenv("SWAP_OPEN"), *colon = spec ? strchr(spec, ':') : NULL;
	if (!colon || !path || strlen(path) != (size_t)(colon - spec) ||
	    strncmp(path, spec, (size_t)(colon - spec)) != 0)
		return path;
	return opens++ ? colon + 1 : path;
}

static void report(void) __attribute__((destructor));
static void report(void)
{
	fprintf(stderr, "swap_open: %d\n", opens);
}

/* The real NAME (open or open64) on path, swapped, with the mode when
 * flags ask for one. */
static int real_open(const char *name, int (**real)(const char *, int, ...), const char *path,
		     int flags, va_list ap)
{
	if (!*real)
		*real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, name);
	mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
	return (*real)(swapped(path), flags, mode);
}

int open(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	va_list ap;
	va_start(ap, flags);
	int fd = real_open("open", &real, path, flags, ap);
	va_end(ap);
	return fd;
}

int open64(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	va_list ap;
	va_start(ap, flags);
	int fd = real_open("open64", &real, path, flags, ap);
	va_end(ap);
	return fd;
}
