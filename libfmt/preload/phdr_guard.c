/* SPDX-License-Identifier: MIT */
/*
 * phdr_guard.c - no fork while a program thread is inside dl_iterate_phdr,
 * when the child records (forks=on).
 *
 * dl_iterate_phdr holds the loader's dl_load_write_lock while it calls its
 * callback (a C++ unwinder finding the frame's module, a program listing
 * its libraries), and glibc does not reset that lock in a fork child: a
 * child forked meanwhile inherits it held by a thread that does not exist
 * there.  The recorder of a forks=on child walks the loaded modules when it
 * symbolizes its first stacks (its own walks, rec_dl_iterate_phdr, never
 * cross a fork: thread.c), so it waited there forever, and so did the
 * child's exit (tests/cli/preload_fork_phdr.sh).
 *
 * So the program's dl_iterate_phdr is interposed: the outermost call of a
 * thread holds a read lock of a writer-preferring rwlock for its whole walk,
 * and the fork interposer (thread_interpose.c), when the child will record,
 * takes the write lock before the real fork (new walks wait; the walks
 * under way end) and releases it in the parent; the child starts with the
 * lock free.  The recorder's own walks (a thread inside the recorder) do
 * not take it: thread.c's fork handler orders them.  A walk that does not
 * end within a second (its callback waits for something the forking thread
 * holds) does not hold the fork back: the fork goes on, and that child is
 * not recorded (one line on stderr says so, unless quiet=).
 *
 * And a program thread's walk runs inside the recorder (its callback's
 * calls are not recorded, its allocations not counted): the loader's lock
 * is never held while a program thread takes a lock of the recorder.  Else
 * a callback that recorded (a sleep's first event interns its string under
 * the recorder's lock) while another thread forked (the fork handler holds
 * the recorders' locks, then waits for the lock of the recorder's own
 * walks) and the recorder's writer walked (holding that lock, waiting for
 * the loader's) closed a cycle: all three waited forever, in the parent.
 */
#include "preload/preload_internal.h"
#include "record/recorder_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*walk_cb)(struct dl_phdr_info *, size_t, void *);
typedef int (*walk_fn)(walk_cb, void *);

static pthread_rwlock_t walks = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static const pthread_rwlock_t walks_init = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static __thread unsigned walk_depth;
static walk_fn real_walk;

REC_PRELOAD_API int dl_iterate_phdr(walk_cb cb, void *arg)
{
	walk_fn real = __atomic_load_n(&real_walk, __ATOMIC_ACQUIRE);
	if (real == NULL) {
		*(void **)&real = dlsym(RTLD_NEXT, "dl_iterate_phdr");
		if (real == NULL)
			return 0; /* no loader to walk */
		__atomic_store_n(&real_walk, real, __ATOMIC_RELEASE);
	}
	/* Before the real functions are known, inside the recorder and in
	 * nested walks (a callback that walks again): no lock. */
	if (!__atomic_load_n(&rec_real_ready_, __ATOMIC_ACQUIRE) || rec_in_recorder_ != 0 ||
	    walk_depth != 0) {
		walk_depth++;
		int rc = real(cb, arg);
		walk_depth--;
		return rc;
	}
	rec_real_.rw_rdlock(&walks);
	walk_depth = 1;
	rec_in_recorder_++;
	int rc = real(cb, arg);
	rec_in_recorder_--;
	walk_depth = 0;
	rec_real_.rw_unlock(&walks);
	return rc;
}

/* Before the real fork (thread_interpose.c): 1 if no program thread is
 * inside dl_iterate_phdr now and none can enter until rec_phdr_fork_end_();
 * 0 if one stayed inside for a second (the child must not record).  The
 * forking thread itself inside a walk (fork from its callback): 0. */
int rec_phdr_fork_begin_(void)
{
	if (walk_depth != 0 || !__atomic_load_n(&rec_real_ready_, __ATOMIC_ACQUIRE))
		return 0;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 1;
	return rec_real_.rw_timedwrlock(&walks, &until) == 0;
}

/* After the fork: held (rec_phdr_fork_begin_ gave 1) is released in the
 * parent; the child starts with the lock free. */
void rec_phdr_fork_end_(int held, int child)
{
	if (child)
		memcpy(&walks, &walks_init, sizeof walks);
	else if (held)
		rec_real_.rw_unlock(&walks);
}

/* The child of a fork that found a walk under way: not recorded. */
void rec_phdr_fork_refused_(void)
{
	if (rec_env_quiet_())
		return;
	char line[160];
	int n = snprintf(line, sizeof line,
			 "rec: a thread stayed inside dl_iterate_phdr through the fork: the child %ld "
			 "is not recorded\n",
			 (long)getpid());
	if (n > 0)
		(void)!write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}
