/* SPDX-License-Identifier: MIT */
/*
 * preload.c - librec-preload.so: record a program that knows nothing of rec.
 *
 * CONTRACT (rec-record, tools/rec-record.c, builds on exactly this):
 *   LD_PRELOAD=<absolute path of librec-preload.so>, prepended to any
 *     LD_PRELOAD the program already has (':' between);
 *   REC_OUTPUT=<absolute path> of the recording ("%p" is replaced by the
 *     pid, as for librec);
 *   REC_OPTIONS=the grammar of rec_recorder_options_parse (recorder.h:
 *     key=value entries separated by ',', events=LIST with ';' between its
 *     entries, flight=on, maxage=, maxsize=, quiet=...) and the process-wide
 *     keys (env.c), REC_OPTIONS-only like quiet:
 *       cpu=HZ     CPU sampling rate, 0 = off (default 100 Hz: one sample
 *                  per 10 ms of a thread's CPU time);
 *       alloc=SIZE mean bytes between allocation samples, 0 = off
 *                  (default 512KiB);
 *       io=DUR     the blocking I/O threshold (rec.IO; default 10ms);
 *       forks=off  a forked child is not recorded (the default);
 *       forks=on   a forked child records into REC_OUTPUT's path (%p
 *                  replaced) with its pid inserted before the extension
 *                  (out.rec -> out.4242.rec), a file of its own, with the
 *                  same options (duration= counted from the fork); and so
 *                  does a program exec'd by a recorded process, into
 *                  REC_OUTPUT's path with its pid inserted, or ".PID-N"
 *                  (N = 2, 3 ...) when an earlier image of that pid has
 *                  the name (a fork child that exec'd: out.4242.rec is the
 *                  child until its exec, out.4242-2.rec the program it
 *                  exec'd; a program that exec'd itself: out.rec, then
 *                  out.PID.rec);
 *       duration=DUR  close the recording DUR after it opened, as exit
 *                  would (a FINAL chunk); the program goes on, its
 *                  interposers only calling the real functions.
 *       wall=HZ    wall-clock sampling rate, 0 = off (the default; record/wall_sampler.c).
 *     A bad key or value: one line on stderr saying what
 *     is wrong, and nothing is recorded (the program runs).
 *   REC_PRELOAD_RECORDING_PID removed from the environment (this library
 *     sets it for the programs a recording process execs: a process that
 *     finds another pid there does not record);
 *   Installed at $(PREFIX)/lib/rec/librec-preload.so; built at
 *   build/lib/librec-preload.so (rec-record looks at ../lib/ beside its own
 *   executable first).
 *
 * The library holds the recorder (the library objects, as librec.so) and
 * the interposers (one file each: real.c finds the real functions,
 * bootstrap_alloc.c serves dlsym's allocations, alloc_interpose.c,
 * lock_interpose.c, cond_interpose.c, sleep_interpose.c,
 * thread_interpose.c, io_interpose.c, fd_guard.c, sigprof_guard.c,
 * lock_names.c, exec_interpose.c, phdr_guard.c).  This file starts the default recorder
 * from REC_OUTPUT/REC_OPTIONS exactly as librec's constructor does
 * (env.c's rec_env_start_), first of the library's constructors, inside
 * the recorder (the main thread stays inside until the program starts, at
 * __libc_start_main, which this file interposes): the background thread the recorder starts is inside it for
 * its whole life, so the recorder's own allocations, locks and sleeps are
 * never recorded and never recurse into the interposers.  At exit a handler
 * registered after env.c's puts the exiting thread inside the recorder
 * before env.c's closes the recording.
 *
 * A fork child's recorder abandons the parent's recording (thread.c's
 * atfork_child): with forks=off its interposers only call the real
 * functions; with forks=on the fork interposer opens the child's own
 * (rec_preload_fork_child()), after waiting for the program's walks of
 * the loaded modules under way (phdr_guard.c).  An exec'd program gets the
 * preload again through LD_PRELOAD, which stays in the environment; the
 * exec interposers (exec_interpose.c) close the recording of the process
 * that execs first, as _exit does.  With forks=off the exec'd program does
 * not record: the recording process puts its pid in
 * REC_PRELOAD_RECORDING_PID, and a process with another pid there records
 * nothing (so system() and popen() do not truncate the parent's file); a
 * program that execs itself without forking (same pid) records again, into
 * REC_OUTPUT anew.  With forks=on every exec'd program (a pid there, its
 * own or another) records into a file of its own (exec_output() below; the
 * environment keeps REC_OUTPUT as it was, so the names of its own exec'd
 * programs derive from the same path).
 */
#include "preload/preload_internal.h"
#include "rec/builtins.h"
#include "record/builtin_internal.h"
#include "record/recorder_internal.h"
#include "record/stack_cfi.h"
#include "record/stack_internal.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The pid of the process that records, for the programs it execs (and a
 * librec linked into the program itself: recorder_internal.h). */
#define OWNER_ENV REC_PRELOAD_OWNER_ENV

rec_preload_hot rec_preload_hot_ __attribute__((aligned(64)));
rec_recorder *rec_preload_recorder_;
int rec_preload_forks_;
pid_t rec_preload_pid_;

/* forks= in REC_OPTIONS (the last one; on or 1), read before the recorder
 * starts: rec_env_start_ checks the whole of it. */
static int forks_on(void)
{
	const char *opt = getenv("REC_OPTIONS");
	int on = 0;
	for (const char *p = opt; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n > 6 && memcmp(p, "forks=", 6) == 0)
			on = (n == 8 && memcmp(p + 6, "on", 2) == 0) || (n == 7 && p[6] == '1');
		p = end ? end + 1 : p + n;
	}
	return on;
}

static void at_exit(void)
{
	/* This thread closes the recording next (env.c's handler): from here
	 * on nothing it does is recorded, and the interposers of the other
	 * threads let the recorder close. */
	rec_in_recorder_ = 1;
	__atomic_store_n(&rec_preload_hot_.on, 0, __ATOMIC_RELAXED);
	uint64_t n = __atomic_load_n(&rec_lock_names_given_up, __ATOMIC_RELAXED);
	if (n != 0 && !rec_env_quiet_())
		fprintf(stderr,
			"rec preload: %llu lock name lookups given up (another thread held the "
			"lookup for 50 ms): those events name their lock by its address\n",
			(unsigned long long)n);
}

/* In a fork child, and when the recording closes before exit (env.c's
 * duration= timer): the interposers only call the real functions. */
static void stop_recording(void)
{
	__atomic_store_n(&rec_preload_hot_.on, 0, __ATOMIC_RELAXED);
}

/* First of the library's constructors: the main thread is inside the
 * recorder from here until the program's own start (__libc_start_main
 * below), so the library objects' constructors (metrics, sampler, env.c)
 * and those of libraries loaded with the program run unrecorded. */
/* The range of this library's code: its frames are dropped from the top
 * of event stacks (intern.c). */
static int text_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	const uintptr_t me = (uintptr_t)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && me >= lo && me < hi) {
			rec_stack_hide_lo_ = rec_preload_hot_.text_lo = lo;
			rec_stack_hide_hi_ = rec_preload_hot_.text_hi = hi;
			return 1;
		}
	}
	return 0;
}

/* Before the program runs (no thread of its own yet), everything the
 * recorder would otherwise do once, lazily, on the first call of some
 * program thread inside an interposer, where that thread may hold the
 * program's own locks (its allocator's: jemalloc's mutexes are taken
 * through pthread_mutex_lock): declare and bind the built-in event types
 * (rec_type_declare allocates), the thread set-up (pthread_key_create,
 * pthread_atfork, which allocates), the stack capture's and the lock
 * names' tables (the symbolizer allocates).  See recorder_internal.h's
 * LOCK ORDER for the rule this keeps. */
static void init_eagerly(void)
{
	uint64_t t0 = 0;
	(void)rec_lock_wait_begin_(&t0); /* rec.LockWait, rec.LockOrder */
	(void)rec_sleep_type();          /* rec.Sleep, rec.CondWait */
	__atomic_store_n(&rec_preload_hot_.io, rec_io_type_(), __ATOMIC_RELEASE);     /* rec.IO */
	__atomic_store_n(&rec_preload_hot_.poll, rec_poll_type_(), __ATOMIC_RELEASE); /* rec.Poll */
	(void)rec_builtin_tid();
	/* The unwind tables, before the program's first instruction, so that
	 * its start-up's stacks (allocations, sleeps, lock waits before the
	 * recorder's thread got to them) walk libraries without frame
	 * pointers too: the first snapshot's (the program, libc, the loader:
	 * stack_cfi.h), a few ms, waited for here while the recorder's thread
	 * builds them; a stack through another library waits for the rest. */
	rec_cfi_ensure();
	uintptr_t pcs[4];
	int trunc = 0;
	(void)rec_stack_capture_ex(pcs, 4, 0, &trunc);
	/* From now on a thread that finds its stack bounds itself may be
	 * inside its allocator: /proc/self/maps, not pthread_getattr_np. */
	rec_stack_bounds_no_alloc_ = 1;
	rec_lock_names_init();
}

/* The default recorder is open: this thread records, the interposers on. */
static void record_here(void)
{
	rec_recorder *r = rec_recorder_default();
	/* a thread is named at the chunk that first holds its events
	 * (memcached names its workers from its main thread) */
	__atomic_store_n(&r->defer_new_threads, 1, __ATOMIC_RELAXED);
	(void)rec_recorder_attach_thread(r);
	(void)rec_cpu_sampler_attach_thread();
	rec_wall_attach_thread();
	rec_lock_names_start(r);
	rec_preload_recorder_ = r;
	rec_preload_pid_ = getpid();
	__atomic_store_n(&rec_preload_hot_.on, 1, __ATOMIC_RELEASE);
	rec_env_start_duration_();
}

/* forks=on, in a program exec'd by a recording process (by a fork child
 * of it, as system() and popen() do, or by the recorded program itself):
 * "REC_OUTPUT=" and its file's path, REC_OUTPUT's (%p replaced, made
 * absolute) with ".PID" inserted before the extension, as a fork child's
 * file is named (out.rec -> out.4242.rec; with "%p" the name as it is),
 * or ".PID-N" for the first N from
 * 2 whose file does not exist yet (the fork child that exec'd, or the
 * program that exec'd itself, holds ".PID").  0 if it cannot be made. */
static int exec_output(char *entry, size_t cap)
{
	const char *out = getenv("REC_OUTPUT");
	char base[4096], cwd[4096];
	if (out == NULL || !*out)
		return 0;
	const char *pp = strstr(out, "%p");
	int n = pp ? snprintf(base, sizeof base, "%.*s%ld%s", (int)(pp - out), out,
			      (long)getpid(), pp + 2)
		   : snprintf(base, sizeof base, "%s", out);
	if (n < 0 || (size_t)n >= sizeof base)
		return 0;
	if (base[0] != '/') {
		char rel[sizeof base];
		memcpy(rel, base, (size_t)n + 1);
		if (getcwd(cwd, sizeof cwd) == NULL)
			return 0;
		n = snprintf(base, sizeof base, "%s/%s", cwd, rel);
		if (n < 0 || (size_t)n >= sizeof base)
			return 0;
	}
	const char *name = strrchr(base, '/') + 1;
	const char *dot = strrchr(name, '.');
	int head = dot && dot != name ? (int)(dot - base) : n;
	for (int k = 1; k < 1000; k++) {
		char suffix[32];
		if (k == 1 && pp)
			suffix[0] = 0; /* "%p" made the name this pid's already */
		else if (k == 1)
			snprintf(suffix, sizeof suffix, ".%ld", (long)getpid());
		else
			snprintf(suffix, sizeof suffix, ".%ld-%d", (long)getpid(), k);
		int m = snprintf(entry, cap, "REC_OUTPUT=%.*s%s%s", head, base, suffix, base + head);
		if (m < 0 || (size_t)m >= cap)
			return 0;
		if (access(entry + 11, F_OK) != 0)
			return 1;
	}
	return 0;
}

__attribute__((constructor(101))) static void preload_start(void)
{
	/* The recorder's fork handlers first, before anything here calls
	 * malloc: an allocator of the program's own (jemalloc in redis-server)
	 * registers its handlers at its first call, and prepare handlers run
	 * last-registered first.  Registered before the allocator's, ours run
	 * after it took its locks, so no thread inside the allocator, holding
	 * them, can be waiting for ours (LOCK ORDER, recorder_internal.h).
	 * (pthread_key_create, pthread_atfork's first entries and membarrier
	 * allocate nothing.) */
	rec_thread_global_init();
	rec_preload_resolve();
	dl_iterate_phdr(text_cb, (void *)(uintptr_t)&text_cb);
	rec_in_recorder_ = 1;
	rec_env_preload_ = 1; /* this library's env.c (-Bsymbolic: its own copy) */
	rec_preload_forks_ = forks_on();
	/* A program this process (or one of its fork children) exec'd inherits
	 * LD_PRELOAD and REC_OUTPUT: it must not truncate the recording of its
	 * parent at the same path.  With forks=off it does not record; with
	 * forks=on it records into a file of its own (exec_output). */
	const char *owner = getenv(OWNER_ENV);
	char pid[24];
	snprintf(pid, sizeof pid, "%ld", (long)getpid());
	int record = owner == NULL || strcmp(owner, pid) == 0;
	rec_env_stopping_ = stop_recording;
	static char entry[4096 + 64];
	char *const root = owner != NULL && rec_preload_forks_ ? getenv("REC_OUTPUT") : NULL;
	if (root != NULL && exec_output(entry, sizeof entry)) {
		/* rec_env_start_ opens REC_OUTPUT: this file for the moment it
		 * reads it (it keeps the path, which stays in entry), then the
		 * environment is as it was, for the programs this one starts. */
		char *const saved = strdup(root);
		if (saved != NULL && putenv(entry) == 0) {
			rec_env_start_(1);
			(void)setenv("REC_OUTPUT", saved, 1);
			record = 1;
		}
		free(saved);
	}
	rec_env_start_(record);
	if (record && rec_recorder_default() != NULL)
		(void)setenv(OWNER_ENV, pid, 1);
	if (rec_recorder_default() != NULL) {
		(void)pthread_atfork(NULL, NULL, stop_recording);
		atexit(at_exit);
		init_eagerly();
		record_here();
	}
}

/* forks=on: the fork interposer's child (inside the recorder) opens its
 * own recording (env.c) and records as its parent did.  Its exec'd
 * programs still find the parent's pid in REC_PRELOAD_RECORDING_PID (no
 * setenv in a fork child: another thread may have held the environment's
 * lock) and do not record. */
void rec_preload_fork_child(void)
{
	if (rec_env_fork_child_())
		record_here();
}

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_main_fn)(main_fn, int, char **, void (*)(void), void (*)(void),
			     void (*)(void), void *);

/* The program starts (its _start calls this): its constructors and main
 * run recorded.  A program that does not start through glibc's
 * __libc_start_main leaves its main thread unrecorded. */
REC_PRELOAD_API int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
				      void (*fini)(void), void (*rtld_fini)(void), void *stack_end);
int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
		      void (*rtld_fini)(void), void *stack_end)
{
	start_main_fn real = (start_main_fn)dlsym(RTLD_NEXT, "__libc_start_main");
	rec_in_recorder_ = 0;
	return real(main, argc, argv, init, fini, rtld_fini, stack_end);
}

/* _exit skips the atexit handlers: close the recording first, as exit
 * would.  rec_env_stop_ closes only the recording this process opened
 * (none in a fork child with forks=off: its parent's is not its to close)
 * and, after duration= closed it, waits for the timer's close to end. */
REC_PRELOAD_API void _exit(int status)
{
	static void (*real)(int); /* does not return */
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "_exit");
	__atomic_store_n(&rec_preload_hot_.on, 0, __ATOMIC_RELAXED);
	rec_in_recorder_ = 1;
	rec_env_stop_();
	real(status);
	__builtin_unreachable(); /* _exit does not return */
}
