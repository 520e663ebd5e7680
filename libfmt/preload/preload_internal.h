/* SPDX-License-Identifier: MIT */
/*
 * preload_internal.h - what the files of the preload library share: the real
 * functions (real.c), the per-thread "inside the recorder" flag, the
 * bootstrap allocator (bootstrap_alloc.c) and lock names (lock_names.c).
 * Never installed.
 *
 * What may call what: the interposers call the real functions (real.c), the
 * recorder's public API (rec/recorder.h, rec/builtins.h) and the
 * interfaces the built-ins offer the preload (record/builtin_internal.h),
 * plus stack capture (record/stack_internal.h); of the recorder core's
 * recorder_internal.h only env.c's start and stop (rec_env_start_ & co.,
 * librec's own constructor path, in preload.c and sigprof_guard.c) and the
 * output's descriptor (fd_guard.c, so a daemonizing program's close() does
 * not close the recording); never the writer or the reader.  The recorder
 * knows nothing of the preload beyond the hooks it sets (the lock-name
 * hook, the hidden code range).
 */
#ifndef LIBREC_PRELOAD_INTERNAL_H
#define LIBREC_PRELOAD_INTERNAL_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#define REC_PRELOAD_API __attribute__((visibility("default")))

/* The next definitions of the interposed functions (libc's, or another
 * preloaded library's), from dlsym(RTLD_NEXT) / dlvsym; filled by
 * rec_preload_resolve() (real.c) on the first interposed call. */
typedef struct rec_real {
	/* The calls a server makes per request first, so that the interposers'
	 * fast paths find them in the table's first two cache lines: a thread
	 * that wakes from epoll_wait or a futex finds the recorder's data
	 * evicted (its first interposed call paid one miss per line). */
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	ssize_t (*recv)(int, void *, size_t, int);
	ssize_t (*send)(int, const void *, size_t, int);
	int (*mutex_lock)(pthread_mutex_t *);
	int (*mutex_trylock)(pthread_mutex_t *);
	int (*mutex_unlock)(pthread_mutex_t *);
	/* the second cache line */
	void *(*malloc)(size_t);
	void (*free)(void *);
	ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
	ssize_t (*sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*writev)(int, const struct iovec *, int);
	void *(*calloc)(size_t, size_t);
	/* the rest */
	void *(*realloc)(void *, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	int (*mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
	int (*rw_rdlock)(pthread_rwlock_t *);
	int (*rw_wrlock)(pthread_rwlock_t *);
	int (*rw_tryrdlock)(pthread_rwlock_t *);
	int (*rw_trywrlock)(pthread_rwlock_t *);
	int (*rw_timedrdlock)(pthread_rwlock_t *, const struct timespec *);
	int (*rw_timedwrlock)(pthread_rwlock_t *, const struct timespec *);
	int (*rw_unlock)(pthread_rwlock_t *);
	int (*spin_lock)(pthread_spinlock_t *);
	int (*spin_trylock)(pthread_spinlock_t *);
	int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *);          /* GLIBC_2.3.2 */
	int (*cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
	int (*cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
			      const struct timespec *);
	int (*cond_wait_old)(pthread_cond_t *, pthread_mutex_t *);      /* GLIBC_2.2.5 */
	int (*cond_timedwait_old)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
	int (*nanosleep)(const struct timespec *, struct timespec *);
	int (*clock_nanosleep)(clockid_t, int, const struct timespec *, struct timespec *);
	int (*usleep)(unsigned);
	unsigned (*sleep)(unsigned);
	int (*pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	void (*pthread_exit)(void *); /* does not return */
	int (*pthread_setname_np)(pthread_t, const char *);
	pid_t (*fork)(void);
	int (*close)(int);
	int (*close_range)(unsigned, unsigned, int);
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	sighandler_t (*signal)(int, sighandler_t);
	ssize_t (*pread)(int, void *, size_t, off_t);
	ssize_t (*pwrite)(int, const void *, size_t, off_t);
	int (*accept)(int, struct sockaddr *, socklen_t *);
	int (*accept4)(int, struct sockaddr *, socklen_t *, int);
	int (*connect)(int, const struct sockaddr *, socklen_t);
} rec_real;

extern rec_real rec_real_ __attribute__((aligned(64)));
extern int rec_real_ready_; /* rec_real_ is filled */

/* Fill rec_real_ (once; allocations dlsym makes meanwhile go to the
 * bootstrap allocator). */
void rec_preload_resolve(void);
static inline void rec_preload_ensure(void)
{
	if (__builtin_expect(!__atomic_load_n(&rec_real_ready_, __ATOMIC_ACQUIRE), 0))
		rec_preload_resolve();
}

/* Set while the thread runs the recorder's code, or resolves the real
 * functions: interposers then call the real function and record nothing.
 * The recorder's background thread has it from its start (pthread_create
 * made under it passes it on), a program thread while an interposer calls
 * into the recorder.  A count, since recorder code may nest. */
extern __thread unsigned rec_in_recorder_ __attribute__((tls_model("initial-exec")));
/* What every interposer's fast path reads besides rec_real_, on one cache
 * line (a thread that wakes from a wait finds the recorder's data evicted,
 * and its first interposed call pays a miss per line it reads):
 *   on: 1 once the default recorder is open and recording (preload.c); 0
 *       again in a fork child and from exit on;
 *   io, poll: rec.IO's and rec.Poll's handles once declared
 *       (io_interpose.c, poll_interpose.c);
 *   text_lo, text_hi: this library's code (preload.c; lock_interpose.c
 *       tells the recorder's own lock calls by their return address). */
typedef struct rec_preload_hot {
	int on;
	struct rec_event_type *io, *poll;
	uintptr_t text_lo, text_hi;
} rec_preload_hot;
extern rec_preload_hot rec_preload_hot_ __attribute__((aligned(64)));
/* That recorder (valid while rec_preload_hot_.on is 1). */
extern struct rec_recorder *rec_preload_recorder_;

/* Record in this thread now: the recorder is on and the thread is not
 * inside it. */
static inline int rec_preload_active(void)
{
	return __builtin_expect(__atomic_load_n(&rec_preload_hot_.on, __ATOMIC_RELAXED) &&
					rec_in_recorder_ == 0,
				1);
}

/* preload.c: in a fork child (the fork interposer, inside the recorder),
 * record into the child's own file if forks=on. */
void rec_preload_fork_child(void);

/* bootstrap_alloc.c: a small static arena for the allocations made before
 * the real malloc is known (dlsym's own); its blocks are never freed. */
void *rec_boot_alloc(size_t size, size_t align);
int rec_boot_owns(const void *p);
size_t rec_boot_size(const void *p);

/* lock_names.c: the name of the lock at addr for its events: the symbol
 * of the program's or a library's data object that contains it
 * ("quote_cache_lock", "table+64"), else "0x<addr>@FUNCTION" with the
 * function at caller_pc (the first frame that waited on it), else NULL.
 * Cached per address; call inside the recorder.  Allocates nothing (the
 * caller may hold its allocator's locks): a name that needs a module not
 * read yet is 0x<addr> until the writer reads it. */
const char *rec_lock_name(const void *addr, uintptr_t caller_pc);
/* lock_names.c: the lock at addr named now, reading the modules of addr and
 * caller_pc if need be (allocates: call only from a thread that holds no
 * lock of the program's allocator); 0 if it was named already. */
int rec_lock_name_load(const void *addr, uintptr_t caller_pc);
/* lock_names.c: the symbolizer's tables of the modules loaded now, read in
 * the constructor; then by r's writer thread as modules are loaded
 * (rec_lock_names_start); names given up (the lookup's lock busy 50 ms). */
void rec_lock_names_init(void);
void rec_lock_names_start(struct rec_recorder *r); /* names_tick on r's writer */
extern uint64_t rec_lock_names_given_up;

/* Wall-clock sampling (libfmt/record/wall_internal.h): an interposed
 * blocking call is bracketed by rec_wall_enter(REC_WALL_KIND) and
 * rec_preload_wall_leave(), which emits the call's rec.WallSample (inside
 * the recorder, errno kept; poll_interpose.c) when the sampler counted
 * ticks during it. */
#include "record/wall_internal.h"
void rec_preload_wall_emit_(unsigned kind, uint32_t ticks);
static inline void rec_preload_wall_leave(unsigned marked)
{
	uint32_t n = rec_wall_leave(marked);
	if (__builtin_expect(n != 0, 0))
		rec_preload_wall_emit_(marked, n);
}

/* The interposers' fast path (issue 18, per-call cost): the recorder
 * records.  rec_preload_hot_.on is set after the real functions are resolved,
 * so that this also says rec_real_ is filled (no rec_preload_ensure()). */
static inline int rec_preload_recording(void)
{
	return __builtin_expect(__atomic_load_n(&rec_preload_hot_.on, __ATOMIC_ACQUIRE) != 0, 1);
}
/* bootstrap_alloc.c's arena, for free's address check without a call. */
#define REC_BOOT_SIZE ((size_t)64 * 1024)
extern unsigned char rec_boot_arena_[REC_BOOT_SIZE];
static inline int rec_boot_has(const void *p)
{
	return (const unsigned char *)p >= rec_boot_arena_ &&
	       (const unsigned char *)p < rec_boot_arena_ + REC_BOOT_SIZE;
}

/* preload.c: REC_OPTIONS has forks=on (a fork child and an exec'd program
 * record into files of their own). */
extern int rec_preload_forks_;
/* preload.c: the pid of the process whose recording is open (0: none). */
extern pid_t rec_preload_pid_;
/* phdr_guard.c: around the real fork when the child will record (no
 * program thread inside dl_iterate_phdr at the fork). */
int rec_phdr_fork_begin_(void);
void rec_phdr_fork_end_(int held, int child);
void rec_phdr_fork_refused_(void);

#endif /* LIBREC_PRELOAD_INTERNAL_H */
