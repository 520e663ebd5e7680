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
 * pthread_setname_np, on the calling thread or on another (memcached's main
 * thread names its workers; the other thread's tid comes from its CPU clock
 * id): the name goes to the thread's rec.ThreadStart if the recorder has
 * not written the thread out yet (under this library it does so at the
 * next round that ends a chunk, by default within a second, or sooner when
 * its ring fills: bg.c, defer_new_threads), which covers the usual thread
 * named right after its start.  A thread that renames itself after that
 * (a pool's worker naming itself for its task) goes on under a new thread
 * id with the new name, with a rec.ThreadStart of its own (thread.c,
 * rec_thread_renamed_: a thread's pool entry keeps its meaning for the
 * whole run, spec/FORMAT.md, Pools); rec-view shows a tid under the name
 * it had last.  A rename of another thread after that switches the thread
 * id that thread's records carry to a new one with the new name (thread.c,
 * switch_thread_id: the renamer stores the new id's encoding, the
 * background thread defines it with a rec.ThreadStart at the rename's
 * time), up to REC_RENAMES_MAX times per thread and while the new id
 * encodes in as many bytes as the old one.
 */
#include "preload/preload_internal.h"
#include "record/builtin_internal.h"
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
		(void)rec_stack_thread_register(); /* exact bounds, while it holds no lock */
		rec_recorder *r = rec_recorder_default();
		if (r != NULL)
			(void)rec_recorder_attach_thread(r);
		/* + 1: symbolized as a return address would be (pc - 1), still the routine */
		rec_cpu_sampler_thread_root_((uintptr_t)a.fn + 1);
		(void)rec_cpu_sampler_attach_thread();
		rec_wall_attach_thread();
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
	if (rec_in_recorder_ == 0 && !__atomic_load_n(&rec_preload_hot_.on, __ATOMIC_RELAXED))
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
	__builtin_unreachable(); /* pthread_exit does not return */
}

REC_PRELOAD_API int pthread_setname_np(pthread_t th, const char *name)
{
	rec_preload_ensure();
	int rc = rec_real_.pthread_setname_np(th, name);
	if (rc == 0 && rec_preload_active()) {
		rec_in_recorder_++;
		clockid_t cid;
		if (pthread_equal(th, pthread_self()))
			rec_thread_renamed_(name);
		else if (pthread_getcpuclockid(th, &cid) == 0)
			/* the kernel's thread CPU clock id is ~tid << 3 | 6 */
			rec_thread_renamed_tid_((uint64_t)(uint32_t)~(cid >> 3), name);
		rec_in_recorder_--;
	}
	return rc;
}

/* fork: the recorder's fork handlers (thread.c, alloc.c, sampler.c) run
 * inside it, not as the program's locking.  The child is not recorded
 * (preload.c turns the interposers off in it) unless forks=on, when it
 * opens its own recording (preload.c, env.c) before returning; then no
 * program thread may be inside dl_iterate_phdr at the fork (phdr_guard.c:
 * the loader's lock it holds stays held in the child, where the recorder
 * walks the modules to symbolize). */
REC_PRELOAD_API pid_t fork(void)
{
	rec_preload_ensure();
	int saved = errno;
	int was_on = __atomic_load_n(&rec_preload_hot_.on, __ATOMIC_RELAXED);
	int guard = was_on && rec_preload_forks_;
	int held = guard ? rec_phdr_fork_begin_() : 0;
	rec_in_recorder_++;
	pid_t pid = rec_real_.fork();
	if (guard)
		rec_phdr_fork_end_(held, pid == 0);
	if (pid == 0 && was_on) {
		if (guard && !held)
			rec_phdr_fork_refused_();
		else
			rec_preload_fork_child();
		errno = saved;
	} else if (pid > 0) {
		errno = saved;
	}
	rec_in_recorder_--;
	return pid;
}
