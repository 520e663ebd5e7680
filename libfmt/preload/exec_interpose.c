/* SPDX-License-Identifier: MIT */
/*
 * exec_interpose.c - execve, execv, execvp, execvpe, execl, execlp, execle,
 * fexecve and execveat: the recording of this process is closed before the
 * new program replaces it, as at _exit (its last events written and its
 * FINAL chunk), instead of left cut where the exec found it.  The new
 * program gets the preload again through LD_PRELOAD, and under forks=on
 * records into a file of its own (preload.c).
 *
 * Only the process that opened the recording closes it: a vfork child runs
 * in its parent's memory until its exec, and must leave the parent's
 * recording alone (its pid is not the recording's).  The recording is
 * closed only when the exec should succeed (the file, or a file found on
 * PATH for the p variants, is executable): an exec that fails anyway (a
 * script whose interpreter is missing) leaves the rest of the process
 * unrecorded.  The l variants build the argument vector and call the v
 * ones' real functions (glibc's execl calls execve inside libc, where no
 * interposer sees it).
 */
#include "preload/preload_internal.h"
#include "record/recorder_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvp_fn)(const char *, char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

static void *real(void **slot, const char *name)
{
	void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (f == NULL) {
		f = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	}
	return f;
}
static void *s_execve, *s_execvp, *s_execvpe, *s_fexecve, *s_execveat;

/* An executable file at path, or (search) on PATH as execvp looks. */
static int runnable(const char *file, int search)
{
	if (file == NULL || !*file)
		return 0;
	if (!search || strchr(file, '/'))
		return access(file, X_OK) == 0;
	const char *path = getenv("PATH");
	if (path == NULL)
		path = "/bin:/usr/bin";
	char buf[PATH_MAX];
	for (const char *p = path;;) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		int k = n ? snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, file)
			  : snprintf(buf, sizeof buf, "%s", file);
		if (k > 0 && (size_t)k < sizeof buf && access(buf, X_OK) == 0)
			return 1;
		if (!end)
			return 0;
		p = end + 1;
	}
}

/* Before an exec that should succeed: close this process's recording. */
static void before_exec(int ok)
{
	if (!ok || !__atomic_load_n(&rec_preload_hot_.on, __ATOMIC_ACQUIRE) ||
	    rec_preload_pid_ != getpid())
		return;
	int saved = errno;
	unsigned in = rec_in_recorder_;
	rec_in_recorder_ = in + 1;
	__atomic_store_n(&rec_preload_hot_.on, 0, __ATOMIC_RELAXED);
	rec_env_stop_();
	rec_in_recorder_ = in;
	errno = saved;
}

REC_PRELOAD_API int execve(const char *path, char *const argv[], char *const envp[])
{
	before_exec(runnable(path, 0));
	return ((execve_fn)real(&s_execve, "execve"))(path, argv, envp);
}

REC_PRELOAD_API int execv(const char *path, char *const argv[])
{
	before_exec(runnable(path, 0));
	return ((execve_fn)real(&s_execve, "execve"))(path, argv, environ);
}

REC_PRELOAD_API int execvp(const char *file, char *const argv[])
{
	before_exec(runnable(file, 1));
	return ((execvp_fn)real(&s_execvp, "execvp"))(file, argv);
}

REC_PRELOAD_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
	before_exec(runnable(file, 1));
	return ((execvpe_fn)real(&s_execvpe, "execvpe"))(file, argv, envp);
}

REC_PRELOAD_API int fexecve(int fd, char *const argv[], char *const envp[])
{
	before_exec(fd >= 0);
	return ((fexecve_fn)real(&s_fexecve, "fexecve"))(fd, argv, envp);
}

REC_PRELOAD_API int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			     int flags)
{
	before_exec(dirfd >= 0 || path[0] == '/');
	return ((execveat_fn)real(&s_execveat, "execveat"))(dirfd, path, argv, envp, flags);
}

/* The l variants: arg0, ..., NULL (then envp for execle) into a vector
 * (on the stack up to 256 arguments, else allocated). */
enum { L_PATH, L_SEARCH, L_ENV };

static int exec_list(int how, const char *file, const char *arg0, va_list ap)
{
	va_list count;
	va_copy(count, ap);
	size_t n = 1;
	if (arg0 != NULL)
		while (va_arg(count, char *) != NULL)
			n++;
	va_end(count);
	char *small[256], **argv = small;
	if (n + 1 > sizeof small / sizeof small[0]) {
		argv = malloc((n + 1) * sizeof *argv);
		if (argv == NULL) {
			errno = E2BIG;
			return -1;
		}
	}
	argv[0] = (char *)arg0;
	for (size_t i = 1; i < n; i++)
		argv[i] = va_arg(ap, char *);
	argv[n] = NULL;
	if (arg0 != NULL)
		(void)va_arg(ap, char *); /* the NULL that ended the list */
	int rc;
	if (how == L_ENV) {
		char *const *envp = va_arg(ap, char *const *);
		rc = execve(file, argv, envp);
	} else {
		rc = how == L_SEARCH ? execvp(file, argv) : execv(file, argv);
	}
	if (argv != small) {
		int saved = errno;
		free(argv);
		errno = saved;
	}
	return rc;
}

REC_PRELOAD_API int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int rc = exec_list(L_PATH, path, arg, ap);
	va_end(ap);
	return rc;
}

REC_PRELOAD_API int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int rc = exec_list(L_SEARCH, file, arg, ap);
	va_end(ap);
	return rc;
}

REC_PRELOAD_API int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	int rc = exec_list(L_ENV, path, arg, ap);
	va_end(ap);
	return rc;
}
