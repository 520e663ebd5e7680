/* SPDX-License-Identifier: MIT */
/*
 * real.c - the real functions behind the interposers: dlsym(RTLD_NEXT, ...)
 * finds the next definition (libc's, or that of a library preloaded after
 * this one, so a program's own malloc replacement keeps its blocks), once,
 * on the first interposed call.  The pthread_cond_* functions exist in two
 * versions in glibc (GLIBC_2.3.2, the current condition variable, and
 * GLIBC_2.2.5, the old one, a pointer to a new one): dlvsym takes each, and
 * cond_interpose.c defines both versions so that the one the program linked
 * against runs.
 *
 * dlsym may allocate (its error buffer): while this thread resolves, the
 * malloc interposers take memory from the bootstrap allocator, as heaptrack
 * and most malloc interposers do.
 */
#include "preload/preload_internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

rec_real rec_real_ __attribute__((aligned(64)));
int rec_real_ready_;
__thread unsigned rec_in_recorder_ __attribute__((tls_model("initial-exec")));

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *next(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (p == NULL) {
		/* Without the real function there is nothing to call: say which
		 * and stop, as the dynamic linker does for a missing symbol. */
		static const char msg[] = "rec: librec-preload.so: no definition of ";
		(void)!write(2, msg, sizeof msg - 1);
		(void)!write(2, name, __builtin_strlen(name));
		(void)!write(2, "\n", 1);
		_exit(127);
	}
	return p;
}

static void *next_version(const char *name, const char *version)
{
	void *p = dlvsym(RTLD_NEXT, name, version);
	return p != NULL ? p : dlsym(RTLD_NEXT, name);
}

#define NEXT(field, name) (*(void **)&rec_real_.field = next(name))
#define NEXT_OPT(field, name) (*(void **)&rec_real_.field = dlsym(RTLD_NEXT, name))

static void resolve(void)
{
	rec_in_recorder_++;
	NEXT(malloc, "malloc");
	NEXT(calloc, "calloc");
	NEXT(realloc, "realloc");
	NEXT(free, "free");
	NEXT(posix_memalign, "posix_memalign");
	NEXT(aligned_alloc, "aligned_alloc");
	NEXT_OPT(memalign, "memalign");
	NEXT_OPT(valloc, "valloc");
	NEXT_OPT(pvalloc, "pvalloc");
	NEXT(mutex_lock, "pthread_mutex_lock");
	NEXT(mutex_trylock, "pthread_mutex_trylock");
	NEXT(mutex_timedlock, "pthread_mutex_timedlock");
	NEXT(mutex_unlock, "pthread_mutex_unlock");
	NEXT(rw_rdlock, "pthread_rwlock_rdlock");
	NEXT(rw_wrlock, "pthread_rwlock_wrlock");
	NEXT(rw_tryrdlock, "pthread_rwlock_tryrdlock");
	NEXT(rw_trywrlock, "pthread_rwlock_trywrlock");
	NEXT(rw_timedrdlock, "pthread_rwlock_timedrdlock");
	NEXT(rw_timedwrlock, "pthread_rwlock_timedwrlock");
	NEXT(rw_unlock, "pthread_rwlock_unlock");
	NEXT(spin_lock, "pthread_spin_lock");
	NEXT(spin_trylock, "pthread_spin_trylock");
	*(void **)&rec_real_.cond_wait = next_version("pthread_cond_wait", "GLIBC_2.3.2");
	*(void **)&rec_real_.cond_timedwait = next_version("pthread_cond_timedwait", "GLIBC_2.3.2");
	NEXT_OPT(cond_clockwait, "pthread_cond_clockwait");
	*(void **)&rec_real_.cond_wait_old = next_version("pthread_cond_wait", "GLIBC_2.2.5");
	*(void **)&rec_real_.cond_timedwait_old =
		next_version("pthread_cond_timedwait", "GLIBC_2.2.5");
	NEXT(nanosleep, "nanosleep");
	NEXT(clock_nanosleep, "clock_nanosleep");
	NEXT(usleep, "usleep");
	NEXT(sleep, "sleep");
	NEXT(pthread_create, "pthread_create");
	NEXT(pthread_exit, "pthread_exit");
	NEXT(pthread_setname_np, "pthread_setname_np");
	NEXT(fork, "fork");
	NEXT(close, "close");
	NEXT(close_range, "close_range");
	NEXT(sigaction, "sigaction");
	NEXT(signal, "signal");
	NEXT(read, "read");
	NEXT(write, "write");
	NEXT(pread, "pread");
	NEXT(pwrite, "pwrite");
	NEXT(readv, "readv");
	NEXT(writev, "writev");
	NEXT(recv, "recv");
	NEXT(recvfrom, "recvfrom");
	NEXT(recvmsg, "recvmsg");
	NEXT(send, "send");
	NEXT(sendto, "sendto");
	NEXT(sendmsg, "sendmsg");
	NEXT(accept, "accept");
	NEXT(accept4, "accept4");
	NEXT(connect, "connect");
	__atomic_store_n(&rec_real_ready_, 1, __ATOMIC_RELEASE);
	rec_in_recorder_--;
}

void rec_preload_resolve(void)
{
	pthread_once(&once, resolve);
}
