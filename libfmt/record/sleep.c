/* SPDX-License-Identifier: MIT */
/*
 * sleep.c - sleep and condition-wait wrappers recording rec.Sleep (duration,
 * stack, kind "sleep" or "cond").  Built on the public emit API only.
 */
#include "rec/builtins.h"
#include "record/stack_internal.h"

#include <errno.h>
#include <stdint.h>
#include <time.h>

static const rec_field sleep_fields[] = {
	{ "kind", "Kind", "\"sleep\" (rec_sleep_ns, rec_nanosleep, rec_usleep) or \"cond\" "
	  "(rec_cond_wait, rec_cond_timedwait)", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "requested", "Requested", "sleep: the time asked for; cond: the timeout from the start of "
	  "the wait (0 = untimed wait)", REC_TYPE_U64, REC_UNIT_NANOS },
	{ "objectAddress", "Object", "cond: address of the condition variable; sleep: 0",
	  REC_TYPE_U64, REC_UNIT_ADDRESS },
};
static const rec_type sleep_def = {
	REC_TYPE_ID_SLEEP, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK,
	"rec.Sleep", "Sleep / Wait", "A thread slept or waited on a condition variable",
	"rec/Waits", 3, sleep_fields
};

static rec_event_type *T_sleep;
static int ready;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_type(void)
{
	if (rec_type_declare(&sleep_def, REC_SLEEP_THRESHOLD_NS, REC_TYPE_STACK, &T_sleep) != REC_OK)
		T_sleep = NULL;
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
}

rec_event_type *rec_sleep_type(void)
{
	if (__builtin_expect(!__atomic_load_n(&ready, __ATOMIC_ACQUIRE), 0))
		pthread_once(&once, init_type);
	return T_sleep;
}

/* The start of a wait: on = the type is on (else nothing is recorded). */
typedef struct wait_start {
	int on;
	uint64_t t0;
} wait_start;

static inline wait_start start_wait(void)
{
	wait_start w = { 0, 0 };
	rec_sampler_thread_seen();
	rec_event_type *t = rec_sleep_type();
	if (t != NULL && rec_type_enabled(t)) {
		w.on = 1;
		w.t0 = rec_type_ticks(t);
	}
	return w;
}

__attribute__((noinline)) void rec_sleep_emit(const char *kind, const void *object,
					      uint64_t requested_ns, uint64_t t0, uint64_t t1)
{
	rec_event_type *t = rec_sleep_type();
	if (t == NULL)
		return;
	rec_emit e;
	if (!rec_emit_begin_at(&e, t, t0, t1))
		return;
	rec_emit_string_dyn(&e, kind);
	rec_emit_u64(&e, requested_ns);
	rec_emit_u64(&e, (uintptr_t)object);
	rec_emit_commit(&e);
}

static inline void finish(const char *kind, const void *object, uint64_t requested, wait_start w)
{
	if (w.on)
		rec_sleep_emit(kind, object, requested, w.t0, rec_type_ticks(T_sleep));
}

int rec_sleep_ns(uint64_t ns)
{
	wait_start t0 = start_wait();
	struct timespec req = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) }, rem;
	int rc;
	while ((rc = nanosleep(&req, &rem)) != 0 && errno == EINTR)
		req = rem;
	int saved = errno;
	finish("sleep", NULL, ns, t0);
	errno = saved;
	return rc;
}

int rec_nanosleep(const struct timespec *req, struct timespec *rem)
{
	if (req == NULL) { /* what Linux's nanosleep answers; passing NULL on is undefined */
		errno = EFAULT;
		return -1;
	}
	wait_start t0 = start_wait();
	int rc = nanosleep(req, rem);
	int saved = errno;
	uint64_t requested = 0;
	if (req->tv_sec >= 0 && req->tv_nsec >= 0)
		requested = (uint64_t)req->tv_sec * 1000000000u + (uint64_t)req->tv_nsec;
	finish("sleep", NULL, requested, t0);
	errno = saved;
	return rc;
}

int rec_usleep(unsigned long usec)
{
	wait_start t0 = start_wait();
	struct timespec req = { (time_t)(usec / 1000000u), (long)(usec % 1000000u) * 1000 };
	int rc = nanosleep(&req, NULL);
	int saved = errno;
	finish("sleep", NULL, (uint64_t)usec * 1000u, t0);
	errno = saved;
	return rc;
}

int rec_cond_wait(pthread_cond_t *c, rec_mutex *m)
{
	wait_start t0 = start_wait();
	rec_locks_note_release(m);
	int rc = pthread_cond_wait(c, &m->mu);
	rec_locks_note_reacquire(m);
	finish("cond", c, 0, t0);
	return rc;
}

int rec_cond_timedwait(pthread_cond_t *c, rec_mutex *m, const struct timespec *abstime)
{
	if (abstime == NULL) /* glibc's pthread_cond_timedwait would dereference it */
		return EINVAL;
	wait_start t0 = start_wait();
	uint64_t requested = 0;
	/* The timeout relative to now, on the condition's clock
	 * (CLOCK_REALTIME unless the program set another: approximate). */
	struct timespec now;
	if (clock_gettime(CLOCK_REALTIME, &now) == 0) {
		int64_t d = ((int64_t)abstime->tv_sec - (int64_t)now.tv_sec) * 1000000000 +
			    ((int64_t)abstime->tv_nsec - (int64_t)now.tv_nsec);
		requested = d > 0 ? (uint64_t)d : 0;
	}
	rec_locks_note_release(m);
	int rc = pthread_cond_timedwait(c, &m->mu, abstime);
	rec_locks_note_reacquire(m);
	finish("cond", c, requested, t0);
	return rc;
}
