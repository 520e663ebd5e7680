/* SPDX-License-Identifier: MIT */
/*
 * sleep.c - sleep wrappers recording rec.Sleep, and rec.CondWait's type and
 * event (duration, stack; a condition wait is a thread idle until another
 * wakes it, not a sleep, so the two are separate types that views and flame
 * graphs can tell apart) for the condition waits of lock_wrap.c and the
 * preload library (builtin_internal.h).  Built on the public emit API only.
 */
#include "rec/builtins.h"
#include "record/builtin_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static const rec_field sleep_fields[] = {
	{ "kind", "Kind", "\"sleep\" (rec_sleep_ns, rec_nanosleep, rec_usleep); recordings "
	  "made before rec.CondWait existed also have \"cond\" (condition waits)",
	  REC_TYPE_STRING, REC_UNIT_NONE },
	{ "requested", "Requested", "the time asked for", REC_TYPE_U64, REC_UNIT_NANOS },
	{ "objectAddress", "Object", "0 (older recordings: the condition variable of a \"cond\" "
	  "wait)", REC_TYPE_U64, REC_UNIT_ADDRESS },
};
static const rec_type sleep_def = {
	REC_TYPE_ID_SLEEP, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK,
	"rec.Sleep", "Sleep", "A thread slept", "rec/Waits", 3, sleep_fields
};

static const rec_field cond_wait_fields[] = {
	{ "condAddress", "Condition", "address of the pthread_cond_t", REC_TYPE_U64,
	  REC_UNIT_ADDRESS },
	{ "mutexAddress", "Mutex", "address of the rec_mutex released during the wait",
	  REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "mutexName", "Mutex Name", "name the program gave the mutex, else 0x<address>",
	  REC_TYPE_STRING, REC_UNIT_NONE },
	{ "timeout", "Timeout", "rec_cond_timedwait: the timeout measured from the start of the "
	  "wait; 0 = an untimed wait (rec_cond_wait)", REC_TYPE_U64, REC_UNIT_NANOS },
	{ "timed", "Timed", "true: rec_cond_timedwait; false: rec_cond_wait", REC_TYPE_BOOL,
	  REC_UNIT_NONE },
	{ "timedOut", "Timed Out", "true: the wait ended by its timeout (ETIMEDOUT)",
	  REC_TYPE_BOOL, REC_UNIT_NONE },
};
static const rec_type cond_wait_def = {
	REC_TYPE_ID_COND_WAIT, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK,
	"rec.CondWait", "Condition Wait", "A thread waited on a condition variable", "rec/Waits",
	6, cond_wait_fields
};

static rec_event_type *T_sleep, *T_cond;
static int ready;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_type(void)
{
	if (rec_type_declare(&sleep_def, REC_SLEEP_THRESHOLD_NS, REC_DECLARE_STACK, &T_sleep) != REC_OK)
		T_sleep = NULL;
	if (rec_type_declare(&cond_wait_def, REC_COND_WAIT_THRESHOLD_NS, REC_DECLARE_STACK, &T_cond) !=
	    REC_OK)
		T_cond = NULL;
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
}

static inline void ensure_types(void)
{
	if (__builtin_expect(!__atomic_load_n(&ready, __ATOMIC_ACQUIRE), 0))
		pthread_once(&once, init_type);
}

rec_event_type *rec_sleep_type(void)
{
	ensure_types();
	return T_sleep;
}

/* The start of a wait: on = the type is on (else nothing is recorded). */
typedef struct wait_start {
	int on;
	uint64_t t0;
} wait_start;

static inline wait_start start_wait(rec_event_type *t)
{
	wait_start w = { 0, 0 };
	rec_thread_seen();
	if (t != NULL && rec_type_enabled(t)) {
		w.on = 1;
		w.t0 = rec_type_ticks(t);
	}
	return w;
}

__attribute__((noinline)) void rec_sleep_emit(uint64_t requested_ns, uint64_t t0, uint64_t t1)
{
	rec_event_type *t = rec_sleep_type();
	if (t == NULL)
		return;
	rec_emit e;
	if (!rec_emit_begin_at(&e, t, t0, t1))
		return;
	rec_emit_string_dyn(&e, "sleep");
	rec_emit_u64(&e, requested_ns);
	rec_emit_u64(&e, 0);
	rec_emit_commit(&e);
}

static inline void finish(uint64_t requested, wait_start w)
{
	if (w.on)
		rec_sleep_emit(requested, w.t0, rec_type_ticks(T_sleep));
}

static __attribute__((noinline)) void cond_wait_emit(const void *c, const void *m,
						     const char *mname, uint64_t timeout_ns,
						     bool timed, bool timed_out, uint64_t t0,
						     uint64_t t1)
{
	rec_emit e;
	if (!rec_emit_begin_at(&e, T_cond, t0, t1))
		return;
	rec_emit_u64(&e, (uintptr_t)c);
	rec_emit_u64(&e, (uintptr_t)m);
	if (mname != NULL) {
		rec_emit_string_dyn(&e, mname);
	} else {
		char buf[32];
		int n = snprintf(buf, sizeof buf, "0x%" PRIxPTR, (uintptr_t)m);
		rec_emit_string_dyn_len(&e, buf, n > 0 ? (size_t)n : 0);
	}
	rec_emit_u64(&e, timeout_ns);
	rec_emit_bool(&e, timed);
	rec_emit_bool(&e, timed_out);
	rec_emit_commit(&e);
}

int rec_cond_wait_begin_(uint64_t *t0)
{
	ensure_types();
	wait_start w = start_wait(T_cond);
	*t0 = w.t0;
	return w.on;
}

void rec_cond_wait_end_(const void *c, const void *m, const char *mname, uint64_t timeout_ns,
			bool timed, bool timed_out, uint64_t t0)
{
	cond_wait_emit(c, m, mname, timeout_ns, timed, timed_out, t0, rec_type_ticks(T_cond));
}

int rec_sleep_ns(uint64_t ns)
{
	wait_start t0 = start_wait(rec_sleep_type());
	struct timespec req = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) }, rem;
	int rc;
	while ((rc = nanosleep(&req, &rem)) != 0 && errno == EINTR)
		req = rem;
	int saved = errno;
	finish(ns, t0);
	errno = saved;
	return rc;
}

int rec_nanosleep(const struct timespec *req, struct timespec *rem)
{
	if (req == NULL) { /* what Linux's nanosleep answers; passing NULL on is undefined */
		errno = EFAULT;
		return -1;
	}
	wait_start t0 = start_wait(rec_sleep_type());
	int rc = nanosleep(req, rem);
	int saved = errno;
	uint64_t requested = 0;
	if (req->tv_sec >= 0 && req->tv_nsec >= 0)
		requested = (uint64_t)req->tv_sec * 1000000000u + (uint64_t)req->tv_nsec;
	finish(requested, t0);
	errno = saved;
	return rc;
}

int rec_usleep(unsigned long usec)
{
	wait_start t0 = start_wait(rec_sleep_type());
	struct timespec req = { (time_t)(usec / 1000000u), (long)(usec % 1000000u) * 1000 };
	int rc = nanosleep(&req, NULL);
	int saved = errno;
	finish((uint64_t)usec * 1000u, t0);
	errno = saved;
	return rc;
}
