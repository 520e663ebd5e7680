/* SPDX-License-Identifier: MIT */
/*
 * poll_interpose.c - poll, ppoll, select, pselect, epoll_wait,
 * epoll_pwait and epoll_pwait2, how an event loop idles: marked for wall-clock sampling
 * (state "poll"; libfmt/record/wall_sampler.c), so a thread waiting in one
 * is counted as waiting, never signalled, and gets one rec.WallSample when
 * the call returns.  They are recorded as rec.Poll (libfmt/record/io.c)
 * only when asked ("*,rec.Poll" in the events list; an event loop would
 * fill the recording with its idle calls): then each call reads the clock
 * twice and one that lasted the threshold (default 10 ms) is an event; off,
 * one load of the type's flag.  The call itself is the real one,
 * unchanged.  Also the preload's half of the wall
 * sampler: the call-end sample (rec_preload_wall_emit_) and the marker that
 * tells it the blocking calls are interposed.
 *
 * The real functions are found here on first use (dlsym(RTLD_NEXT), inside
 * the recorder), not in real.c's table.
 */
/* This file defines poll & co.: not the fortified inline versions. */
#undef _FORTIFY_SOURCE
#include "preload/preload_internal.h"
#include "record/builtin_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include "rec/recorder.h"

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

/* rec.Poll's timing, as io_interpose.c's: t NULL when it is off (the
 * default) or the thread is inside the recorder. */
typedef struct poll_start {
	struct rec_event_type *t;
	uint64_t t0;
} poll_start;

static inline poll_start begin(void)
{
	poll_start s = { NULL, 0 };
	if (!rec_preload_recording() || rec_in_recorder_ != 0)
		return s;
	struct rec_event_type *t = __atomic_load_n(&rec_preload_hot_.poll, __ATOMIC_ACQUIRE);
	if (__builtin_expect(t == NULL, 0)) { /* declared by the constructor: not yet */
		rec_in_recorder_++;
		t = rec_poll_type_();
		rec_in_recorder_--;
		__atomic_store_n(&rec_preload_hot_.poll, t, __ATOMIC_RELEASE);
	}
	if (t != NULL && rec_type_enabled(t)) {
		s.t = t;
		s.t0 = rec_type_ticks(t);
	}
	return s;
}

static __attribute__((noinline)) void end_slow(poll_start s, const char *call, int fd,
					       uint64_t watched, int64_t timeout_ns, int rc)
{
	uint64_t t1 = rec_type_ticks(s.t);
	int saved = errno;
	rec_in_recorder_++;
	rec_poll_emit_(call, fd, watched, timeout_ns, rc, saved, s.t0, t1);
	rec_in_recorder_--;
	errno = saved;
}

static int64_t ms_ns(int ms)
{
	return ms < 0 ? -1 : (int64_t)ms * 1000000;
}

static int64_t ts_ns(const struct timespec *ts)
{
	return ts == NULL ? -1 : (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static int64_t tv_ns(const struct timeval *tv)
{
	return tv == NULL ? -1 : (int64_t)tv->tv_sec * 1000000000 + (int64_t)tv->tv_usec * 1000;
}

/* The descriptors in select's sets (before the call: it rewrites them). */
static uint64_t select_watched(int n, const fd_set *r, const fd_set *w, const fd_set *e)
{
	uint64_t c = 0;
	for (int fd = 0; fd < n && fd < FD_SETSIZE; fd++)
		c += (r && FD_ISSET(fd, r)) || (w && FD_ISSET(fd, w)) || (e && FD_ISSET(fd, e));
	return c;
}

/* The call, marked for wall-clock sampling (state "poll"), timed for
 * rec.Poll when it is on; watched and timeout are evaluated only then
 * (select's count reads its sets before the call). */
#define POLL_CALL(call, fd, watched, timeout, expr)                                    \
	do {                                                                            \
		poll_start s_ = begin();                                                \
		uint64_t watched_ = s_.t ? (uint64_t)(watched) : 0;                     \
		int64_t timeout_ = s_.t ? (timeout) : 0;                                \
		unsigned w_ = rec_wall_enter(REC_WALL_POLL);                            \
		int rc_ = (expr);                                                       \
		rec_preload_wall_leave(w_);                                             \
		if (s_.t != NULL && rec_type_ticks(s_.t) - s_.t0 >= s_.t->threshold_ticks) \
			end_slow(s_, call, fd, watched_, timeout_, rc_);                \
		return rc_;                                                             \
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
	POLL_CALL("poll", -1, n, ms_ns(timeout), real_(fds, n, timeout));
}

REC_PRELOAD_API int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
			  const sigset_t *mask)
{
	REAL(ppoll_fn, "ppoll");
	POLL_CALL("ppoll", -1, n, ts_ns(timeout), real_(fds, n, timeout, mask));
}

REC_PRELOAD_API int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout)
{
	REAL(select_fn, "select");
	POLL_CALL("select", -1, select_watched(n, r, w, e), tv_ns(timeout),
		  real_(n, r, w, e, timeout));
}

REC_PRELOAD_API int pselect(int n, fd_set *r, fd_set *w, fd_set *e,
			    const struct timespec *timeout, const sigset_t *mask)
{
	REAL(pselect_fn, "pselect");
	POLL_CALL("pselect", -1, select_watched(n, r, w, e), ts_ns(timeout),
		  real_(n, r, w, e, timeout, mask));
}

REC_PRELOAD_API int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	REAL(epoll_wait_fn, "epoll_wait");
	POLL_CALL("epoll_wait", epfd, max > 0 ? max : 0, ms_ns(timeout),
		  real_(epfd, ev, max, timeout));
}

REC_PRELOAD_API int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
				const sigset_t *mask)
{
	REAL(epoll_pwait_fn, "epoll_pwait");
	POLL_CALL("epoll_pwait", epfd, max > 0 ? max : 0, ms_ns(timeout),
		  real_(epfd, ev, max, timeout, mask));
}

typedef int (*epoll_pwait2_fn)(int, struct epoll_event *, int, const struct timespec *,
			      const sigset_t *);

REC_PRELOAD_API int epoll_pwait2(int epfd, struct epoll_event *ev, int max,
				 const struct timespec *timeout, const sigset_t *mask)
{
	REAL(epoll_pwait2_fn, "epoll_pwait2");
	POLL_CALL("epoll_pwait2", epfd, max > 0 ? max : 0, ts_ns(timeout),
		  real_(epfd, ev, max, timeout, mask));
}

/* A program built with _FORTIFY_SOURCE calls these for poll and ppoll. */
typedef int (*poll_chk_fn)(struct pollfd *, nfds_t, int, size_t);
typedef int (*ppoll_chk_fn)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *,
			    size_t);

REC_PRELOAD_API int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	REAL(poll_chk_fn, "__poll_chk");
	POLL_CALL("poll", -1, n, ms_ns(timeout), real_(fds, n, timeout, fdslen));
}

REC_PRELOAD_API int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
				const sigset_t *mask, size_t fdslen);
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
		const sigset_t *mask, size_t fdslen)
{
	REAL(ppoll_chk_fn, "__ppoll_chk");
	POLL_CALL("ppoll", -1, n, ts_ns(timeout), real_(fds, n, timeout, mask, fdslen));
}
