/* SPDX-License-Identifier: MIT */
/*
 * sleep_interpose.c - nanosleep, clock_nanosleep, usleep and sleep as
 * rec.Sleep (libfmt/record/sleep.c's rec_sleep_emit: the time asked for,
 * the time slept, a stack) when the sleep reached the type's threshold.
 * The call itself is the real one, unchanged: its result, errno and the
 * remaining time are the program's.  Each is marked for wall-clock sampling
 * (state "sleep"; wall_internal.h): the sampler never signals a sleeping
 * thread, so no sleep is cut short by rec.  (glibc's sleep and usleep call its
 * nanosleep internally, not through these, so a sleep is one event.)
 */
#include "preload/preload_internal.h"
#include "record/builtin_internal.h"
#include "record/stack_internal.h"

#include <errno.h>
#include <unistd.h>

#include "rec/recorder.h"

static inline int begin(uint64_t *t0)
{
	if (!rec_preload_active())
		return 0;
	rec_in_recorder_++;
	struct rec_event_type *t = rec_sleep_type();
	rec_thread_seen();
	int on = t != NULL && rec_type_enabled(t);
	if (on)
		*t0 = rec_type_ticks(t);
	rec_in_recorder_--;
	return on;
}

static __attribute__((noinline)) void end(uint64_t requested, uint64_t t0)
{
	int saved = errno;
	rec_in_recorder_++;
	rec_sleep_emit(requested, t0, rec_type_ticks(rec_sleep_type()));
	rec_in_recorder_--;
	errno = saved;
}

static uint64_t ts_ns(const struct timespec *ts)
{
	if (ts == NULL || ts->tv_sec < 0 || ts->tv_nsec < 0)
		return 0;
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

REC_PRELOAD_API int nanosleep(const struct timespec *req, struct timespec *rem)
{
	rec_preload_ensure();
	uint64_t t0 = 0;
	int on = begin(&t0);
	unsigned w = rec_wall_enter(REC_WALL_SLEEP);
	int rc = rec_real_.nanosleep(req, rem);
	rec_preload_wall_leave(w);
	if (on)
		end(ts_ns(req), t0);
	return rc;
}

REC_PRELOAD_API int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req,
				    struct timespec *rem)
{
	rec_preload_ensure();
	uint64_t t0 = 0, requested = ts_ns(req);
	int on = begin(&t0);
	if (on && (flags & TIMER_ABSTIME)) {
		struct timespec now;
		uint64_t n = clock_gettime(clock, &now) == 0 ? ts_ns(&now) : requested;
		requested = requested > n ? requested - n : 0;
	}
	unsigned w = rec_wall_enter(REC_WALL_SLEEP);
	int rc = rec_real_.clock_nanosleep(clock, flags, req, rem);
	rec_preload_wall_leave(w);
	if (on)
		end(requested, t0);
	return rc;
}

REC_PRELOAD_API int usleep(useconds_t usec)
{
	rec_preload_ensure();
	uint64_t t0 = 0;
	int on = begin(&t0);
	unsigned w = rec_wall_enter(REC_WALL_SLEEP);
	int rc = rec_real_.usleep(usec);
	rec_preload_wall_leave(w);
	if (on)
		end((uint64_t)usec * 1000u, t0);
	return rc;
}

REC_PRELOAD_API unsigned int sleep(unsigned int seconds)
{
	rec_preload_ensure();
	uint64_t t0 = 0;
	int on = begin(&t0);
	unsigned w = rec_wall_enter(REC_WALL_SLEEP);
	unsigned left = rec_real_.sleep(seconds);
	rec_preload_wall_leave(w);
	if (on)
		end((uint64_t)seconds * 1000000000u, t0);
	return left;
}
