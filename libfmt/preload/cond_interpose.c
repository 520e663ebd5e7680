/* SPDX-License-Identifier: MIT */
/*
 * cond_interpose.c - pthread_cond_wait, pthread_cond_timedwait and
 * pthread_cond_clockwait as rec.CondWait (libfmt/record/sleep.c's
 * rec_cond_wait_begin_/end_): a thread idle until another wakes it, with
 * the condition, the mutex and its name, the timeout and whether it expired.
 * The mutex leaves the thread's held-lock stack during the wait and comes
 * back without a rec.LockOrder check (it is the same acquisition).
 *
 * glibc exports pthread_cond_wait and pthread_cond_timedwait twice:
 * GLIBC_2.3.2 (today's condition variable, the default a program links
 * against) and GLIBC_2.2.5 (the old one, for binaries linked before 2003).
 * Both are defined here under their versions (.symver; the version nodes
 * are in preload.map) and each calls the same version of the real one.
 * pthread_cond_clockwait has one version.
 */
#include "preload/preload_internal.h"
#include "record/builtin_internal.h"
#include "record/stack_internal.h"

#include <errno.h>

/* The program's call site (an interposer's return address). */
#define CALLER ((uintptr_t)__builtin_return_address(0))

typedef int (*wait_fn)(pthread_cond_t *, pthread_mutex_t *);
typedef int (*timedwait_fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);

/* The timeout from now on clock (CLOCK_REALTIME unless the program's
 * condition says otherwise: then approximate). */
static uint64_t timeout_ns(clockid_t clock, const struct timespec *abstime)
{
	struct timespec now;
	if (abstime == NULL || clock_gettime(clock, &now) != 0)
		return 0;
	int64_t d = ((int64_t)abstime->tv_sec - (int64_t)now.tv_sec) * 1000000000 +
		    ((int64_t)abstime->tv_nsec - (int64_t)now.tv_nsec);
	return d > 0 ? (uint64_t)d : 0;
}

typedef struct cond_call {
	wait_fn wait;
	timedwait_fn timedwait;
	int (*clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
	clockid_t clock;
	const struct timespec *abstime;
	uintptr_t caller; /* the program's call (for a lock with no symbol) */
} cond_call;

static int call(pthread_cond_t *c, pthread_mutex_t *m, const cond_call *k)
{
	if (k->clockwait)
		return k->clockwait(c, m, k->clock, k->abstime);
	if (k->timedwait)
		return k->timedwait(c, m, k->abstime);
	return k->wait ? k->wait(c, m) : EINVAL;
}

static __attribute__((noinline)) int cond_wait(pthread_cond_t *c, pthread_mutex_t *m,
					       const cond_call *k)
{
	if (!rec_preload_active())
		return call(c, m, k);
	const int timed = k->abstime != NULL;
	if (timed && (k->abstime->tv_nsec < 0 || k->abstime->tv_nsec >= 1000000000))
		return call(c, m, k); /* EINVAL, from the real one */
	rec_in_recorder_++;
	uint64_t t0 = 0, requested = timed ? timeout_ns(k->clock, k->abstime) : 0;
	int on = rec_cond_wait_begin_(&t0);
	(void)rec_lock_released_(m);
	rec_in_recorder_--;
	unsigned w = rec_wall_enter(REC_WALL_COND);
	int rc = call(c, m, k);
	rec_preload_wall_leave(w);
	rec_in_recorder_++;
	const char *name = rec_lock_name(m, k->caller);
	rec_lock_reacquired_(m, name);
	if (on)
		rec_cond_wait_end_(c, m, name, requested, timed, rc == ETIMEDOUT, t0);
	rec_in_recorder_--;
	return rc;
}

REC_PRELOAD_API int rec_preload_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
REC_PRELOAD_API int rec_preload_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
					       const struct timespec *abstime);
REC_PRELOAD_API int rec_preload_cond_wait_old(pthread_cond_t *c, pthread_mutex_t *m);
REC_PRELOAD_API int rec_preload_cond_timedwait_old(pthread_cond_t *c, pthread_mutex_t *m,
						   const struct timespec *abstime);
__asm__(".symver rec_preload_cond_wait, pthread_cond_wait@@GLIBC_2.3.2");
__asm__(".symver rec_preload_cond_timedwait, pthread_cond_timedwait@@GLIBC_2.3.2");
__asm__(".symver rec_preload_cond_wait_old, pthread_cond_wait@GLIBC_2.2.5");
__asm__(".symver rec_preload_cond_timedwait_old, pthread_cond_timedwait@GLIBC_2.2.5");

int rec_preload_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	rec_preload_ensure();
	cond_call k = { rec_real_.cond_wait, NULL, NULL, CLOCK_REALTIME, NULL, CALLER };
	return cond_wait(c, m, &k);
}

int rec_preload_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
			       const struct timespec *abstime)
{
	rec_preload_ensure();
	if (abstime == NULL) /* the real one would dereference it */
		return EINVAL;
	cond_call k = { NULL, rec_real_.cond_timedwait, NULL, CLOCK_REALTIME, abstime, CALLER };
	return cond_wait(c, m, &k);
}

int rec_preload_cond_wait_old(pthread_cond_t *c, pthread_mutex_t *m)
{
	rec_preload_ensure();
	cond_call k = { rec_real_.cond_wait_old, NULL, NULL, CLOCK_REALTIME, NULL, CALLER };
	return cond_wait(c, m, &k);
}

int rec_preload_cond_timedwait_old(pthread_cond_t *c, pthread_mutex_t *m,
				   const struct timespec *abstime)
{
	rec_preload_ensure();
	if (abstime == NULL)
		return EINVAL;
	cond_call k = { NULL, rec_real_.cond_timedwait_old, NULL, CLOCK_REALTIME, abstime, CALLER };
	return cond_wait(c, m, &k);
}

REC_PRELOAD_API int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
					   const struct timespec *abstime)
{
	rec_preload_ensure();
	if (rec_real_.cond_clockwait == NULL)
		return ENOSYS;
	cond_call k = { NULL, NULL, rec_real_.cond_clockwait, clock, abstime, CALLER };
	return cond_wait(c, m, &k);
}
