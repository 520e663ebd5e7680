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

/* ---- the exporters' output files --------------------------------------------- */

/* A FILE on the output's descriptor whose writes never fail: the first
 * failure's errno is kept (later bytes are dropped) and reported once when
 * the file is closed.  So a library writing into it (Graphviz, which exits
 * on a failed write) or the fast buffer (which would count it as a failure
 * of standard output) goes on, and the one message names the file and the
 * real reason. */
typedef struct export_file {
	FILE *f;
	int fd;
	int err;
	bool is_stdout; /* fd is standard output's: not closed, failure via rec_cli_out_failed */
	struct export_file *next;
} export_file;

static export_file *g_exports;

static ssize_t export_write(void *cookie, const char *buf, size_t len)
{
	export_file *x = cookie;
	const char *p = buf;
	size_t n = len;
	while (n && !x->err) {
		ssize_t k = write(x->fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			x->err = k < 0 ? errno : EIO;
			break;
		}
		p += k;
		n -= (size_t)k;
	}
	return (ssize_t)len;
}

static int export_close(void *cookie)
{
	export_file *x = cookie;
	if (x->is_stdout) {
		x->fd = -1;
		return 0;
	}
	if (x->fd >= 0 && close(x->fd) != 0 && !x->err && errno != EINTR)
		x->err = errno;
	x->fd = -1;
	return 0;
}

/* The FILE on x (fd set); false after "TOOL: NAME: reason" (x is freed,
 * its fd closed unless standard output's). */
static bool export_wrap(export_file *x, const char *name)
{
	cookie_io_functions_t io = { NULL, export_write, NULL, export_close };
	errno = 0;
	x->f = fopencookie(x, "w", io);
	if (!x->f) {
		rec_cli_file_error(name, "%s", strerror(errno ? errno : ENOMEM));
		if (!x->is_stdout)
			close(x->fd);
		free(x);
		return false;
	}
	x->next = g_exports;
	g_exports = x;
	return true;
}

FILE *rec_cli_export_open(const char *path, FILE *dflt)
{
	if (!path)
		return dflt;
	export_file *x = calloc(1, sizeof *x);
	if (!x) {
		rec_cli_file_error(path, "%s", strerror(ENOMEM));
		return NULL;
	}
	do
		x->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
	while (x->fd < 0 && errno == EINTR);
	if (x->fd < 0) {
		rec_cli_file_error(path, "%s", strerror(errno));
		free(x);
		return NULL;
	}
	return export_wrap(x, path) ? x->f : NULL;
}

FILE *rec_cli_export_stdout(FILE *dflt)
{
	if (dflt != stdout)
		return dflt;
	/* What is already in stdout's buffer goes first (its failure counts). */
	(void)rec_cli_out_sync();
	export_file *x = calloc(1, sizeof *x);
	if (!x) {
		rec_cli_error("%s", strerror(ENOMEM));
		return NULL;
	}
	x->fd = STDOUT_FILENO;
	x->is_stdout = true;
	return export_wrap(x, "standard output") ? x->f : NULL;
}

bool rec_cli_export_close(FILE *f, const char *path, FILE *dflt)
{
	if (!f || f == dflt)
		return true;
	export_file **pp = &g_exports;
	while (*pp && (*pp)->f != f)
		pp = &(*pp)->next;
	export_file *x = *pp;
	if (!x) { /* not ours: a plain FILE */
		errno = 0;
		if (ferror(f) | (fclose(f) != 0)) {
			rec_cli_file_error(path, "write failed: %s", strerror(errno ? errno : EIO));
			return false;
		}
		return true;
	}
	*pp = x->next;
	errno = 0;
	if (fclose(f) != 0 && !x->err) /* the cookie never fails: memory, at most */
		x->err = errno ? errno : EIO;
	int err = x->err;
	bool is_stdout = x->is_stdout;
	free(x);
	if (err) {
		if (is_stdout)
			rec_cli_out_failed(err); /* reported once, by rec_cli_finish */
		else
			rec_cli_file_error(path, "write failed: %s", strerror(err));
		return false;
	}
	return true;
}
