/* SPDX-License-Identifier: MIT */
/*
 * thread_interpose.c - pthread_create, pthread_exit, pthread_setname_np and
 * fork.
 *
 * fork runs inside the recorder (its fork handlers are the recorder's).
 *
 * pthread_create starts the new thread in thread_start(), which registers it
 * with the default recorder (rec.ThreadStart, rec.ThreadEnd at its exit) and
 * attaches it to the CPU sampler before the program's start routine runs,
 * so every thread is sampled, not only those that call rec.  A thread
 * created inside the recorder (its background thread) is inside it for its
 * whole life: nothing it does is recorded.  Once the start routine returns
 * (or the thread calls pthread_exit) the thread is inside the recorder too:
 * what runs then is TLS destructors (the recorder's own among them).
 *
 * pthread_setname_np on the calling thread: the name goes to its
 * rec.ThreadStart if the recorder has not written the thread out yet (it
 * does so at its next background round, by default within a second), which
 * covers the usual thread that names itself first.  A rename later, or of
 * another thread, is not recorded.
 */
#include "preload/preload_internal.h"
#include "record/stack_internal.h"
#include "rec/builtins.h"

#include <errno.h>
#include <unistd.h>

typedef struct start_arg {
	void *(*fn)(void *);
	void *arg;
	unsigned inside; /* created inside the recorder */
} start_arg;

static void *thread_start(void *p)
{
	start_arg a = *(start_arg *)p;
	rec_real_.free(p);
	rec_in_recorder_ = a.inside;
	if (rec_preload_active()) {
		rec_in_recorder_++;
		rec_recorder *r = rec_recorder_default();
		if (r != NULL)
			(void)rec_recorder_attach_thread(r);
		(void)rec_cpu_sampler_attach_thread();
		rec_in_recorder_--;
	}
	void *ret = a.fn(a.arg);
	rec_in_recorder_ = 1;
	return ret;
}

REC_PRELOAD_API int pthread_create(pthread_t *th, const pthread_attr_t *attr,
				   void *(*fn)(void *), void *arg)
{
	rec_preload_ensure();
	if (rec_in_recorder_ == 0 && !__atomic_load_n(&rec_preload_on_, __ATOMIC_RELAXED))
		return rec_real_.pthread_create(th, attr, fn, arg);
	start_arg *a = rec_real_.malloc(sizeof *a);
	if (a == NULL)
		return EAGAIN;
	a->fn = fn;
	a->arg = arg;
	a->inside = rec_in_recorder_ ? 1 : 0;
	int rc = rec_real_.pthread_create(th, attr, thread_start, a);
	if (rc != 0)
		rec_real_.free(a);
	return rc;
}

REC_PRELOAD_API void pthread_exit(void *ret)
{
	rec_preload_ensure();
	rec_in_recorder_ = 1;
	rec_real_.pthread_exit(ret);
}

REC_PRELOAD_API int pthread_setname_np(pthread_t th, const char *name)
{
	rec_preload_ensure();
	int rc = rec_real_.pthread_setname_np(th, name);
	if (rc == 0 && rec_preload_active() && pthread_equal(th, pthread_self())) {
		rec_in_recorder_++;
		rec_thread_renamed_(name);
		rec_in_recorder_--;
	}
	return rc;
}

/* fork: the recorder's fork handlers (thread.c, alloc.c, sampler.c) run
 * inside it, not as the program's locking.  The child is not recorded
 * (preload.c turns the interposers off in it) unless forks=on, when it
 * opens its own recording (preload.c, env.c) before returning. */
REC_PRELOAD_API pid_t fork(void)
{
	rec_preload_ensure();
	rec_in_recorder_++;
	int saved = errno;
	int was_on = __atomic_load_n(&rec_preload_on_, __ATOMIC_RELAXED);
	pid_t pid = rec_real_.fork();
	if (pid == 0 && was_on) {
		rec_preload_fork_child();
		errno = saved;
	}
	rec_in_recorder_--;
	return pid;
}
