/* SPDX-License-Identifier: MIT */
/*
 * thread.c - the recording threads: each thread's buffers (one per open
 * recorder, on its TLS list t_list), registration with a recorder on the
 * first emit (a buffer from the free list or a new ring, rec.ThreadStart),
 * the thread's exit (rec.ThreadEnd; the buffer is handed to the background
 * thread as ORPHAN, or freed when the recorder is gone), the process-wide
 * set-up done once (the TLS key, fork handlers, membarrier) and fork: the
 * child switches off and forgets every inherited recorder.
 */
#include <link.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/recorder_internal.h"
#include "record/builtin_internal.h"
#include "record/stack_internal.h"

extern int rec_metrics_linked_; /* metrics.c: referenced so static links include it */

/* The calling thread's buffers, one per recorder it registered with (linked
 * by thread_next; only the thread itself walks it, also in its signal
 * handlers). */
static __thread rec_tbuf_full *t_list __attribute__((tls_model("initial-exec")));
/* Set up once per process (global_init): g_key's destructor is
 * thread_exit(); g_membarrier_ok: MEMBARRIER_CMD_PRIVATE_EXPEDITED works. */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_key;
static int g_key_ok;
static int g_membarrier_ok;

/* A full memory barrier on every thread of the process that runs now. */
void rec_process_barrier(void)
{
	if (g_membarrier_ok &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
		return;
	/* Fallback: changing a page's protection interrupts (IPI) every CPU
	 * that runs a thread of this process, which serializes them. */
	long pg = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		*(volatile char *)p = 1;
		mprotect(p, (size_t)pg, PROT_READ);
		munmap(p, (size_t)pg);
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void rec_tbuf_free(rec_tbuf_full *b)
{
	if (!b)
		return;
	if (b->has_ring)
		munmap(b->pub.base, b->cap);
	munmap(b, sizeof *b);
}

/* ---- the built-ins' thread hooks (builtin_internal.h) ------------------------------------ */

#define HOOKS_MAX 8
static pthread_mutex_t hooks_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf: taken alone */
static rec_thread_hook seen_hooks[HOOKS_MAX], exit_hooks[HOOKS_MAX];
static unsigned n_seen, n_exit; /* published with release after the slot is set */
uint64_t rec_thread_seen_gen_ = 1;
__thread uint64_t rec_thread_seen_tls_;

static rec_status hook_add(rec_thread_hook *tab, unsigned *n, rec_thread_hook fn)
{
	if (fn == NULL)
		return REC_OK;
	unsigned k = __atomic_load_n(n, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < k; i++)
		if (tab[i] == fn)
			return REC_OK;
	if (k == HOOKS_MAX)
		return REC_ERR_NOMEM;
	tab[k] = fn;
	__atomic_store_n(n, k + 1, __ATOMIC_RELEASE);
	return REC_OK;
}

rec_status rec_thread_hooks_add(rec_thread_hook seen, rec_thread_hook on_exit)
{
	pthread_mutex_lock(&hooks_lock);
	rec_status st = hook_add(seen_hooks, &n_seen, seen);
	if (st == REC_OK)
		st = hook_add(exit_hooks, &n_exit, on_exit);
	pthread_mutex_unlock(&hooks_lock);
	return st;
}

void rec_thread_seen_again(void)
{
	__atomic_add_fetch(&rec_thread_seen_gen_, 1, __ATOMIC_RELAXED);
}

void rec_thread_seen_slow_(void)
{
	/* The generation first: a hook that registers the thread comes back
	 * here through rec_thread_seen() and must find it seen. */
	rec_thread_seen_tls_ = __atomic_load_n(&rec_thread_seen_gen_, __ATOMIC_RELAXED);
	unsigned n = __atomic_load_n(&n_seen, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n; i++)
		seen_hooks[i]();
}

static void run_exit_hooks(void)
{
	unsigned n = __atomic_load_n(&n_exit, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n; i++)
		exit_hooks[i]();
}

static void thread_exit(void *arg)
{
	(void)arg;
	run_exit_hooks(); /* e.g. its last rec.Alloc, before rec.ThreadEnd */
	rec_tbuf_full *b = t_list, *next;
	t_list = NULL;
	for (; b; b = next) {
		next = b->thread_next;
		uint32_t stt = __atomic_load_n(&b->state, __ATOMIC_ACQUIRE);
		if (stt == REC_TB_LIVE) {
			rec_emit e;
			REC_TLS_TBUF_ = &b->pub;
			if (b->t_end && rec_emit_begin(&e, b->t_end)) {
				rec_emit_u64(&e, b->os_tid);
				rec_emit_u64(&e, b->name_id);
				rec_emit_commit(&e);
			}
			REC_TLS_TBUF_ = NULL;
			uint32_t expect = REC_TB_LIVE;
			if (__atomic_compare_exchange_n(&b->state, &expect, REC_TB_ORPHAN, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				continue; /* the background thread drains and frees it */
		}
		rec_tbuf_free(b); /* DETACHED: the recorder is gone */
	}
	REC_TLS_TBUF_ = NULL;
}

static void global_init(void);

/* Renames of a thread by another (rec_thread_renamed_tid_), counted under
 * rec_g_lock: a thread that read its name before taking the lock to
 * register reads it again if this moved meanwhile. */
static uint64_t g_renames_tid;

static rec_recorder *find_open(uint64_t gen)
{
	for (rec_recorder *r = rec_g_open; r; r = r->g_next)
		if (r->gen == gen)
			return r;
	return NULL;
}

/* Registrations between two drain rounds after which the background thread
 * is woken to reclaim the buffers of threads that exited (a service that
 * starts a thread per request would otherwise run out of buffer memory
 * between two flushes). */
#define REC_REG_WAKE 32u

void rec_tbuf_reset(rec_tbuf_full *b)
{
	uint8_t *base = b->pub.base;
	uint64_t cap = b->cap, populated = b->populated;
	memset(b, 0, sizeof *b);
	b->pub.base = base;
	b->cap = cap;
	b->populated = populated;
	b->has_ring = 1;
}

/* A buffer from r's free list (reset by the background thread when it put
 * it there, rec_tbuf_reset: the registering thread does not clear its 3 KB
 * of cold cache lines; its ring kept, counted in mem_used), or NULL.
 * Caller holds r->lock. */
static rec_tbuf_full *free_list_pop(rec_recorder *r)
{
	rec_tbuf_full *b = r->free_bufs;
	if (b)
		r->free_bufs = b->rec_next;
	return b;
}

/* b, from the free list or new, becomes the calling thread's (os_tid, named
 * name) in r: its thread id, on r's thread list.  Caller holds r->lock.
 * Returns whether to wake the background thread. */
static bool thread_link(rec_recorder *r, rec_tbuf_full *b, uint64_t os_tid, const char *name)
{
	b->r = r;
	b->t_end = r->t_end;
	b->os_tid = os_tid;
	memcpy(b->name, name, sizeof b->name);
	b->name[sizeof b->name - 1] = 0;
	b->thread_id = ++r->threads_registered;
	b->name_id = b->name[0] ? REC_THREAD_NAME_BASE + b->thread_id : 0;
	b->rec_next = r->threads;
	r->threads = b;
	__atomic_fetch_add(&r->st_threads, 1, __ATOMIC_RELAXED);
	/* Wake the background thread to reclaim exited threads' buffers when
	 * threads come and go quickly, or when memory runs short. */
	return ++r->regs_since_drain >= REC_REG_WAKE ||
	       (!r->free_bufs && r->mem_used + r->buf_size > r->memory_limit / 2);
}

/* Register the calling thread (os_tid, named name) with r.  Caller holds
 * rec_g_lock (r stays open).  A buffer of an exited thread is reused when
 * there is one; a new one is allocated outside r->lock (the memory
 * reserved first), so threads registering and the background thread do not
 * wait on a 256 KiB malloc. */
static rec_tbuf_full *thread_register(rec_recorder *r, uint64_t os_tid, const char *name)
{
	pthread_mutex_lock(&r->lock);
	rec_tbuf_full *b = free_list_pop(r);
	bool reserved = false, wake = false;
	if (b) /* the common case of a service's churn: one lock hold */
		wake = thread_link(r, b, os_tid, name);
	else if (r->mem_used + r->buf_size <= r->memory_limit) {
		r->mem_used += r->buf_size;
		reserved = true;
	}
	pthread_mutex_unlock(&r->lock);
	if (!b) {
		/* Mapped (zero, page-aligned), not malloc'ed: the caller holds
		 * rec_g_lock, and a thread that registers from inside the
		 * program's allocator lock (librec-preload.so records jemalloc's
		 * own mutexes in its background threads) must not find the
		 * allocator's locks taken under ours: a lock order inversion. */
		b = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b == MAP_FAILED)
			b = NULL;
		if (b) {
			if (reserved && (b->pub.base = rec_ring_alloc(r->buf_size, &b->populated)) != NULL) {
				b->has_ring = 1;
				b->cap = r->buf_size;
				reserved = false;
			}
		}
		pthread_mutex_lock(&r->lock);
		if (reserved) /* the memory was not used after all */
			r->mem_used -= r->buf_size;
		if (b)
			wake = thread_link(r, b, os_tid, name);
		pthread_mutex_unlock(&r->lock);
		if (!b)
			return NULL;
	}
	if (wake)
		rec_wake_bg(r);

	b->pub.mask = b->has_ring ? b->cap - 1 : 0;
	b->pub.head = 0;
	b->pub.wlimit = b->has_ring ? b->cap : 0;
	b->pub.kick_at = b->has_ring ? b->cap / 2 : UINT64_MAX;
	b->pub.gen = r->gen;
	b->pub.thread_len = (uint32_t)rec_varint_enc8(b->thread_id, &b->pub.thread_enc);
	return b;
}

/* The calling thread's buffer for recorder generation gen (registering if
 * needed and allowed). */
static rec_tbuf_full *thread_buffer(uint64_t gen, int in_signal)
{
	rec_tbuf_full *b, **pp;
	for (b = t_list; b; b = b->thread_next)
		if (b->pub.gen == gen && __atomic_load_n(&b->state, __ATOMIC_ACQUIRE) == REC_TB_LIVE) {
			REC_TLS_TBUF_ = &b->pub;
			return b;
		}
	if (in_signal)
		return NULL;
	/* Free the buffers of recorders that closed. */
	for (pp = &t_list; (b = *pp) != NULL;) {
		if (__atomic_load_n(&b->state, __ATOMIC_ACQUIRE) == REC_TB_DETACHED) {
			*pp = b->thread_next;
			if (REC_TLS_TBUF_ == &b->pub)
				REC_TLS_TBUF_ = NULL;
			rec_tbuf_free(b);
		} else {
			pp = &b->thread_next;
		}
	}
	rec_thread_global_init();
	/* The name before rec_g_lock, which every registering thread takes: it
	 * is a system call (prctl), and a thread that waited for the lock
	 * through another's would pay a futex wait and wake.  Read again under
	 * the lock if another thread renamed one meanwhile (the preload
	 * library: rec_thread_renamed_tid_ found no buffer of ours to rename). */
	const uint64_t os_tid = rec_builtin_tid(); /* cached: the sampler asks too */
	const uint64_t renames = __atomic_load_n(&g_renames_tid, __ATOMIC_ACQUIRE);
	char name[16] = ""; /* the kernel keeps 15 bytes */
	if (pthread_getname_np(pthread_self(), name, sizeof name) != 0)
		name[0] = 0;
	pthread_mutex_lock(&rec_g_lock);
	if (g_renames_tid != renames && pthread_getname_np(pthread_self(), name, sizeof name) != 0)
		name[0] = 0;
	rec_recorder *r = find_open(gen);
	b = (r && !r->closing) ? thread_register(r, os_tid, name) : NULL;
	rec_event_type *t_start = b ? r->t_start : NULL;
	pthread_mutex_unlock(&rec_g_lock);
	if (!b)
		return NULL;
	b->thread_next = t_list;
	t_list = b;
	REC_TLS_TBUF_ = &b->pub;
	if (g_key_ok)
		pthread_setspecific(g_key, (void *)1);
	/* The built-ins' seen hooks: the CPU sampler attaches it (no system
	 * call; stack bounds come later, see rec_stack_thread_register()). */
	rec_thread_seen();
	/* rec.ThreadStart (through the normal path: the buffer is ready). */
	rec_emit e;
	if (rec_emit_begin(&e, t_start)) {
		rec_emit_u64(&e, b->os_tid);
		rec_emit_u64(&e, b->name_id);
		rec_emit_commit(&e);
	}
	return b;
}

struct rec_tbuf_ *rec_emit_thread_slow_(rec_event_type *t, int in_signal)
{
	rec_tbuf_full *b = thread_buffer(__atomic_load_n(&t->gen, __ATOMIC_RELAXED), in_signal);
	if (b == NULL && in_signal) /* lost: its recorder says so (bg.c) */
		__atomic_add_fetch(&((rec_type_entry *)t)->nobuf_signal, 1, __ATOMIC_RELAXED);
	return b ? &b->pub : NULL;
}

rec_status rec_recorder_attach_thread(rec_recorder *r)
{
	if (!r)
		return REC_ERR_INVALID_ARG;
	return thread_buffer(r->gen, 0) ? REC_OK : REC_ERR_STATE;
}

uint64_t rec_recorder_thread_id(rec_recorder *r)
{
	rec_tbuf_full *b = r ? thread_buffer(r->gen, 0) : NULL;
	if (b)
		__atomic_store_n(&b->id_shared, 1u, __ATOMIC_RELAXED); /* never retired */
	return b ? b->thread_id : 0;
}

/* ---- for the fatal-signal handler (crash.c): async-signal-safe -------------------------- */
rec_tbuf_full *rec_thread_buffer_signal(rec_recorder *r)
{
	for (rec_tbuf_full *b = t_list; b; b = b->thread_next)
		if (b->pub.gen == r->gen && __atomic_load_n(&b->state, __ATOMIC_ACQUIRE) == REC_TB_LIVE)
			return b;
	return NULL;
}

/* ---- names ---------------------------------------------------------------------------- */
/* The thread named itself: its buffers not yet defined in their recorder's
 * writer (the background thread defines a new thread at its next round)
 * take the new name.  Under r->lock, as bg_define_later() copies it.  A
 * buffer already defined under the old name (a thread pool's worker that
 * renames itself for its task, a rename after the first second) ends
 * there, as at the thread's exit but without rec.ThreadEnd: the background
 * thread drains it and retires its thread id; and the thread registers
 * anew, a new thread id with the new name and a rec.ThreadStart of its own
 * (same OS thread id), for its events from then on.  A pool entry keeps
 * its meaning for the whole run (spec/FORMAT.md, Pools). */
void rec_thread_renamed_(const char *name)
{
	uint64_t again[8];
	unsigned n = 0;
	for (rec_tbuf_full **pp = &t_list, *b; (b = *pp) != NULL;) {
		if (__atomic_load_n(&b->state, __ATOMIC_ACQUIRE) != REC_TB_LIVE) {
			pp = &b->thread_next;
			continue;
		}
		rec_recorder *r = b->r;
		pthread_mutex_lock(&r->lock);
		int late = b->defined && !__atomic_load_n(&b->id_shared, __ATOMIC_RELAXED);
		if (!b->defined) {
			strncpy(b->name, name, sizeof b->name - 1);
			b->name[sizeof b->name - 1] = 0;
			b->name_id = b->name[0] ? REC_THREAD_NAME_BASE + b->thread_id : 0;
		}
		pthread_mutex_unlock(&r->lock);
		if (!late || n == sizeof again / sizeof again[0]) {
			pp = &b->thread_next;
			continue;
		}
		again[n++] = b->pub.gen;
		*pp = b->thread_next;
		if (REC_TLS_TBUF_ == &b->pub)
			REC_TLS_TBUF_ = NULL;
		uint32_t expect = REC_TB_LIVE;
		if (!__atomic_compare_exchange_n(&b->state, &expect, REC_TB_ORPHAN, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			rec_tbuf_free(b); /* DETACHED meanwhile: the recorder is gone */
	}
	for (unsigned i = 0; i < n; i++)
		(void)thread_buffer(again[i], 0); /* its name: pthread_getname_np's, the new one */
}

/* b, defined under its old name, goes on under a new thread id named
 * name: the records its owner commits from now on carry the new id (one
 * 8-byte store of pub.thread_enc, which the owner's emits copy whole), and
 * the background thread defines it, with a rec.ThreadStart at this time,
 * before it appends any of them (bg.c, drain_threads, after each drain).
 * The old id stays defined until the buffer is reclaimed: a record whose
 * emit copied it before the switch may still be committed.  The new id
 * must encode in as many bytes as the old one (the owner may have copied
 * the length already); a thread past that, or renamed REC_RENAMES_MAX
 * times this way, keeps its name (false).  Under r->lock. */
static bool switch_thread_id(rec_recorder *r, rec_tbuf_full *b, const char *name)
{
	if (b->renamed_at) { /* the new id is not defined yet: rename it */
		strncpy(b->name, name, sizeof b->name - 1);
		b->name[sizeof b->name - 1] = 0;
		b->name_id = b->name[0] ? REC_THREAD_NAME_BASE + b->thread_id : 0;
		return true;
	}
	uint64_t id = r->threads_registered + 1, enc;
	if (b->nold == REC_RENAMES_MAX || rec_varint_enc8(id, &enc) != b->pub.thread_len)
		return false;
	r->threads_registered = id;
	b->old_ids[(size_t)2 * b->nold] = b->thread_id;
	b->old_ids[(size_t)2 * b->nold + 1] = b->name_id;
	b->nold++;
	b->thread_id = id;
	strncpy(b->name, name, sizeof b->name - 1);
	b->name[sizeof b->name - 1] = 0;
	b->name_id = b->name[0] ? REC_THREAD_NAME_BASE + id : 0;
	uint64_t now = rec_type_ticks(r->t_start);
	__atomic_store_n(&b->renamed_at, now ? now : 1, __ATOMIC_RELEASE);
	__atomic_store_n(&b->pub.thread_enc, enc, __ATOMIC_RELEASE);
	__atomic_fetch_add(&r->st_threads, 1, __ATOMIC_RELAXED);
	return true;
}

/* Another thread (os_tid) was named: its buffers not yet defined in their
 * recorder's writer take the new name, as rec_thread_renamed_() does for
 * the calling thread; a buffer defined already goes on under a new thread
 * id with the new name (switch_thread_id).  rec_g_lock, then each r->lock
 * (atfork_prepare's order). */
void rec_thread_renamed_tid_(uint64_t os_tid, const char *name)
{
	pthread_mutex_lock(&rec_g_lock);
	__atomic_store_n(&g_renames_tid, g_renames_tid + 1, __ATOMIC_RELEASE);
	for (rec_recorder *r = rec_g_open; r; r = r->g_next) {
		pthread_mutex_lock(&r->lock);
		for (rec_tbuf_full *b = r->threads; b; b = b->rec_next) {
			if (b->os_tid != os_tid ||
			    __atomic_load_n(&b->state, __ATOMIC_ACQUIRE) != REC_TB_LIVE)
				continue;
			if (b->defined) {
				(void)switch_thread_id(r, b, name);
				continue;
			}
			strncpy(b->name, name, sizeof b->name - 1);
			b->name[sizeof b->name - 1] = 0;
			b->name_id = b->name[0] ? REC_THREAD_NAME_BASE + b->thread_id : 0;
		}
		pthread_mutex_unlock(&r->lock);
	}
	pthread_mutex_unlock(&rec_g_lock);
}

/* ---- fork ------------------------------------------------------------------------------ */
/* The recorder's walks of the loaded modules (rec_dl_iterate_phdr) hold
 * this, and fork takes it last: no thread of the recorder is inside
 * dl_iterate_phdr at a fork, whose loader lock glibc does not reset in the
 * child (a child that records, forks=on, would wait for it forever). */
static pthread_mutex_t g_dl_lock = PTHREAD_MUTEX_INITIALIZER;

int rec_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	pthread_mutex_lock(&g_dl_lock);
	int rc = dl_iterate_phdr(cb, arg);
	pthread_mutex_unlock(&g_dl_lock);
	return rc;
}

static void atfork_prepare(void)
{
	rec_clock_fork_lock(1);
	pthread_mutex_lock(&rec_g_lock);
	for (rec_recorder *r = rec_g_open; r; r = r->g_next)
		pthread_mutex_lock(&r->lock);
	pthread_mutex_lock(&g_dl_lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&g_dl_lock);
	for (rec_recorder *r = rec_g_open; r; r = r->g_next)
		pthread_mutex_unlock(&r->lock);
	pthread_mutex_unlock(&rec_g_lock);
	rec_clock_fork_lock(0);
}

/* The child: every inherited recorder is switched off and forgotten; its
 * memory is abandoned (the background thread does not exist here and its
 * locks may be held), the parent's file is never written. */
static void atfork_child(void)
{
	pthread_mutex_init(&g_dl_lock, NULL);
	for (rec_recorder *r = rec_g_open; r; r = r->g_next) {
		r->forked_child = 1;
		r->closing = 1;
		for (rec_type_entry *e = r->types; e; e = e->next)
			__atomic_store_n(&e->h.enabled, 0, __ATOMIC_RELAXED);
		for (rec_type_entry *e = rec_g_declared; e; e = e->next)
			if (e->h.gen == r->gen)
				__atomic_store_n(&e->h.enabled, 0, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&r->lock);
	}
	rec_g_open = NULL;
	__atomic_store_n(&rec_g_default, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&rec_g_sig_owner, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&rec_g_dump_pending, 0, __ATOMIC_RELAXED);
	rec_flight_atfork_child();
	rec_crash_atfork_child();
	pthread_mutex_unlock(&rec_g_lock);
	rec_clock_fork_lock(0);
}

static void global_init(void)
{
	g_key_ok = pthread_key_create(&g_key, thread_exit) == 0;
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	g_membarrier_ok =
		syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
	rec_env_linked_ = 1;
	rec_metrics_linked_ = 1; /* every default recording gets rec.ProcessStats (metrics.c) */
}

void rec_thread_global_init(void)
{
	pthread_once(&g_once, global_init);
}

