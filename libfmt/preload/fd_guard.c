/* SPDX-License-Identifier: MIT */
/*
 * fd_guard.c - close, close_range and closefrom keep the recording's file
 * open: a program that closes every descriptor as it daemonizes would
 * otherwise close the recorder's, and the next file it opens would get the
 * number and the recording's bytes.  Closing the recorder's descriptor
 * answers 0 (as if closed) and leaves it open; a range around it is closed
 * in two parts.  (dup2 or dup3 onto it is not guarded.)
 */
#include "preload/preload_internal.h"
#include "record/recorder_internal.h"

#include <errno.h>
#include <limits.h>
#include <unistd.h>

/* The recording's descriptor, -1 if none. */
static int rec_fd(void)
{
	if (!__atomic_load_n(&rec_preload_hot_.on, __ATOMIC_RELAXED) || rec_in_recorder_ > 0)
		return -1;
	rec_recorder *r = rec_preload_recorder_;
	return r != NULL ? __atomic_load_n(&r->out.fd, __ATOMIC_RELAXED) : -1;
}

REC_PRELOAD_API int close(int fd)
{
	rec_preload_ensure();
	if (fd >= 0 && fd == rec_fd())
		return 0;
	return rec_real_.close(fd);
}

REC_PRELOAD_API int close_range(unsigned first, unsigned last, int flags)
{
	rec_preload_ensure();
	int keep = rec_fd();
	if (keep < 0 || (unsigned)keep < first || (unsigned)keep > last)
		return rec_real_.close_range(first, last, flags);
	int rc = 0;
	if ((unsigned)keep > first)
		rc = rec_real_.close_range(first, (unsigned)keep - 1, flags);
	if (rc == 0 && (unsigned)keep < last)
		rc = rec_real_.close_range((unsigned)keep + 1, last, flags);
	return rc;
}

REC_PRELOAD_API void closefrom(int lowfd)
{
	rec_preload_ensure();
	if (close_range(lowfd < 0 ? 0 : (unsigned)lowfd, UINT_MAX, 0) == 0)
		return;
	/* No close_range in the kernel: one at a time, as glibc does. */
	long max = sysconf(_SC_OPEN_MAX);
	for (long fd = lowfd < 0 ? 0 : lowfd; fd < (max > 0 ? max : 1024); fd++)
		(void)close((int)fd);
}
