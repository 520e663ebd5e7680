/* SPDX-License-Identifier: MIT */
/*
 * outfile.c - the output file of rec-cat, rec-scrub and rec-recover (see
 * cli.h, "output files"): a regular file (or a new name) is replaced
 * atomically through a temporary file next to it; anything else that exists
 * (a device such as /dev/null or /dev/full, a FIFO, a symlink to one) is
 * opened and written directly, never replaced.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *of_name(const rec_cli_outfile *of)
{
	return of->path ? of->path : "standard output";
}

/* Report the first failure only, with errno err. */
static bool of_fail(rec_cli_outfile *of, int err)
{
	if (!of->err) {
		of->err = err ? err : EIO;
		rec_cli_file_error(of_name(of), "%s", strerror(of->err));
	}
	return false;
}

bool rec_cli_outfile_open(rec_cli_outfile *of, const char *path)
{
	memset(of, 0, sizeof *of);
	of->fd = -1;
	if (!path || strcmp(path, "-") == 0) {
		rec_out_flush();
		fflush(stdout);
		of->fd = STDOUT_FILENO;
		return true;
	}
	of->path = path;
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* A device, a FIFO, a directory (open fails: EISDIR): write
		 * into it as a shell redirection would, never replace it. */
		int fd;
		do
			fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
		while (fd < 0 && errno == EINTR);
		if (fd < 0)
			return of_fail(of, errno);
		of->fd = fd;
		return true;
	}
	/* A regular file (or none yet): a temporary file next to it, renamed
	 * over it at the end.  Through a symlink, the file it names is
	 * replaced and the symlink stays. */
	const char *target = path;
	struct stat lst;
	if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		of->target = realpath(path, NULL);
		if (of->target)
			target = of->target;
	}
	size_t n = strlen(target) + 32;
	of->tmp = rec_cli_xmalloc(n);
	snprintf(of->tmp, n, "%s.tmp.%ld", target, (long)getpid());
	int fd;
	do
		fd = open(of->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		int err = errno;
		free(of->tmp);
		of->tmp = NULL;
		free(of->target);
		of->target = NULL;
		return of_fail(of, err);
	}
	of->fd = fd;
	return true;
}

bool rec_cli_outfile_write(rec_cli_outfile *of, const void *buf, size_t len)
{
	if (of->err)
		return false;
	const char *p = buf;
	while (len) {
		ssize_t k = write(of->fd, p, len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return of_fail(of, k < 0 ? errno : EIO);
		p += k;
		len -= (size_t)k;
	}
	return true;
}

static int of_sink_write(void *opaque, const void *buf, size_t len)
{
	rec_cli_outfile *of = opaque;
	if (rec_cli_outfile_write(of, buf, len))
		return 0;
	return -of->err;
}

rec_sink rec_cli_outfile_sink(rec_cli_outfile *of)
{
	rec_sink s = { of_sink_write, NULL, of };
	return s;
}

bool rec_cli_outfile_failed(const rec_cli_outfile *of) { return of->err != 0; }

static void of_free(rec_cli_outfile *of)
{
	free(of->tmp);
	of->tmp = NULL;
	free(of->target);
	of->target = NULL;
	of->fd = -1;
}

bool rec_cli_outfile_commit(rec_cli_outfile *of)
{
	if (!of->path) {
		of->fd = -1;
		return of->err == 0; /* standard output: rec_cli_finish closes it */
	}
	if (of->fd < 0)
		return false;
	if (!of->err && of->tmp && fsync(of->fd) != 0 && errno != EINVAL)
		of_fail(of, errno);
	if (close(of->fd) != 0 && errno != EINTR)
		of_fail(of, errno);
	if (of->tmp) {
		if (!of->err && rename(of->tmp, of->target ? of->target : of->path) != 0)
			of_fail(of, errno);
		if (of->err)
			unlink(of->tmp);
	}
	bool ok = of->err == 0;
	of_free(of);
	return ok;
}

void rec_cli_outfile_discard(rec_cli_outfile *of)
{
	if (of->path && of->fd >= 0) {
		close(of->fd);
		if (of->tmp)
			unlink(of->tmp);
	}
	of_free(of);
}
