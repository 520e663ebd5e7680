/* SPDX-License-Identifier: MIT */
/*
 * poll_interpose.c - poll, ppoll, select, pselect, epoll_wait,
 * epoll_pwait and epoll_pwait2, how an event loop idles: marked for wall-clock sampling
 * (state "poll"; libfmt/record/wall_sampler.c), so a thread waiting in one
 * is counted as waiting, never signalled, and gets one rec.WallSample when
 * the call returns.  They are not recorded as events of their own (an
 * event loop would fill the recording with its idle calls); the call
 * itself is the real one, unchanged.  Also the preload's half of the wall
 * sampler: the call-end sample (rec_preload_wall_emit_) and the marker that
 * tells it the blocking calls are interposed.
 *
 * The real functions are found here on first use (dlsym(RTLD_NEXT), inside
 * the recorder), not in real.c's table.
 */
/* This file defines poll & co.: not the fortified inline versions. */
#undef _FORTIFY_SOURCE
#include "preload/preload_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>

const int rec_wall_preload_marker_ = 1;

void rec_preload_wall_emit_(unsigned kind, uint32_t ticks)
{
	if (!rec_preload_active())
		return; /* inside the recorder (a start-up constructor): not the program's time */
	int saved = errno;
	rec_in_recorder_++;
	rec_wall_emit_call_(kind, ticks);
	rec_in_recorder_--;
	errno = saved;
}

/* The next definition of name, found once (inside the recorder: dlsym may
 * allocate). */
static void *next_fn(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (__builtin_expect(p == NULL, 0)) {
		rec_preload_ensure();
		rec_in_recorder_++;
		p = dlsym(RTLD_NEXT, name);
		rec_in_recorder_--;
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	}
	return p;
}

#define REAL(type, name)                                                 \
	static void *slot_;                                              \
	type real_ = (type)next_fn(&slot_, name);                        \
	if (real_ == NULL) {                                             \
		errno = ENOSYS;                                          \
		return -1;                                               \
	}

#define WALL_CALL(expr)                                      \
	do {                                                 \
		unsigned w_ = rec_wall_enter(REC_WALL_POLL); \
		int rc_ = (expr);                            \
		rec_preload_wall_leave(w_);                  \
		return rc_;                                  \
	} while (0)

typedef int (*poll_fn)(struct pollfd *, nfds_t, int);
typedef int (*ppoll_fn)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
typedef int (*select_fn)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
typedef int (*pselect_fn)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
			  const sigset_t *);
typedef int (*epoll_wait_fn)(int, struct epoll_event *, int, int);
typedef int (*epoll_pwait_fn)(int, struct epoll_event *, int, int, const sigset_t *);

REC_PRELOAD_API int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	REAL(poll_fn, "poll");
	WALL_CALL(real_(fds, n, timeout));
}

REC_PRELOAD_API int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
			  const sigset_t *mask)
{
	REAL(ppoll_fn, "ppoll");
	WALL_CALL(real_(fds, n, timeout, mask));
}

REC_PRELOAD_API int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout)
{
	REAL(select_fn, "select");
	WALL_CALL(real_(n, r, w, e, timeout));
}

REC_PRELOAD_API int pselect(int n, fd_set *r, fd_set *w, fd_set *e,
			    const struct timespec *timeout, const sigset_t *mask)
{
	REAL(pselect_fn, "pselect");
	WALL_CALL(real_(n, r, w, e, timeout, mask));
}

REC_PRELOAD_API int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	REAL(epoll_wait_fn, "epoll_wait");
	WALL_CALL(real_(epfd, ev, max, timeout));
}

REC_PRELOAD_API int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
				const sigset_t *mask)
{
	REAL(epoll_pwait_fn, "epoll_pwait");
	WALL_CALL(real_(epfd, ev, max, timeout, mask));
}

typedef int (*epoll_pwait2_fn)(int, struct epoll_event *, int, const struct timespec *,
			      const sigset_t *);

REC_PRELOAD_API int epoll_pwait2(int epfd, struct epoll_event *ev, int max,
				 const struct timespec *timeout, const sigset_t *mask)
{
	REAL(epoll_pwait2_fn, "epoll_pwait2");
	WALL_CALL(real_(epfd, ev, max, timeout, mask));
}

/* A program built with _FORTIFY_SOURCE calls these for poll and ppoll. */
typedef int (*poll_chk_fn)(struct pollfd *, nfds_t, int, size_t);
typedef int (*ppoll_chk_fn)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *,
			    size_t);

REC_PRELOAD_API int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	REAL(poll_chk_fn, "__poll_chk");
	WALL_CALL(real_(fds, n, timeout, fdslen));
}

REC_PRELOAD_API int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
				const sigset_t *mask, size_t fdslen);
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
		const sigset_t *mask, size_t fdslen)
{
	REAL(ppoll_chk_fn, "__ppoll_chk");
	WALL_CALL(real_(fds, n, timeout, mask, fdslen));
}
