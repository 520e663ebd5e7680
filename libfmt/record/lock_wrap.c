/* SPDX-License-Identifier: MIT */
/*
 * lock_wrap.c - rec_mutex / rec_rwlock wrappers: rec.LockWait for contended
 * acquisitions and rec.LockOrder for each new (held, acquired) pair of a
 * thread, and the condition waits over a rec_mutex (recorded by sleep.c's
 * rec.CondWait through builtin_internal.h).  Built on the public emit API of
 * recorder.h.
 *
 * Uncontended path: trylock, then a TLS read (the cached OS tid), a relaxed
 * store of the holder, and a push on the thread's held-lock stack.  Only
 * when the thread already holds other rec_ locks (and rec.LockOrder is on)
 * does it look the (held, acquired) pairs up in a small per-thread set.
 *
 * Contended path: read the holder (relaxed; a 0 read again while the lock
 * changes hands: REC_HOLDER_REREADS), take the time, block in
 * pthread, take the time again and let rec_emit_begin_at() keep the event
 * if the wait reached the type's threshold (default 10 us: shorter waits
 * are mostly the futex hand-off itself, and a stack capture would cost a
 * sizeable fraction of them).
 */
#include "rec/builtins.h"
#include "record/builtin_internal.h"
#include "record/stack_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- types ------------------------------------------------------------------ */

static const rec_field lock_wait_fields[] = {
	{ "lockAddress", "Lock Address", "address of the rec_mutex/rec_rwlock", REC_TYPE_U64,
	  REC_UNIT_ADDRESS },
	{ "lockName", "Lock Name", "name the program gave the lock, else 0x<address>",
	  REC_TYPE_STRING, REC_UNIT_NONE },
	{ "holderOsThreadId", "Holder", "OS thread id of the thread that held the lock when the wait "
	  "began (for a read-held rwlock: the last reader), 0 if not known", REC_TYPE_U64,
	  REC_UNIT_NONE },
	{ "lockKind", "Lock Kind", "0 mutex, 1 rwlock taken for reading, 2 rwlock taken for writing",
	  REC_TYPE_U8, REC_UNIT_NONE },
};
static const rec_type lock_wait_def = {
	REC_TYPE_ID_LOCK_WAIT, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK,
	"rec.LockWait", "Lock Wait", "A thread waited to acquire a lock", "rec/Locks",
	4, lock_wait_fields
};

static const rec_field lock_order_fields[] = {
	{ "heldAddress", "Held Lock", "address of the lock the thread held", REC_TYPE_U64,
	  REC_UNIT_ADDRESS },
	{ "heldName", "Held Lock Name", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "acquiredAddress", "Acquired Lock", "address of the lock it acquired while holding it",
	  REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "acquiredName", "Acquired Lock Name", "", REC_TYPE_STRING, REC_UNIT_NONE },
};
static const rec_type lock_order_def = {
	REC_TYPE_ID_LOCK_ORDER, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "rec.LockOrder",
	"Lock Order", "First time this thread acquired a lock while holding another",
	"rec/Locks", 4, lock_order_fields
};

static rec_event_type *T_wait, *T_order;
static int types_ready;
static pthread_once_t types_once = PTHREAD_ONCE_INIT;
static uint64_t epoch; /* bumped when a default recorder opens */

static void on_default(rec_recorder *r, int opened, void *opaque)
{
	(void)r;
	(void)opaque;
	if (opened)
		__atomic_add_fetch(&epoch, 1, __ATOMIC_RELAXED);
}

static void init_types(void)
{
	if (rec_type_declare(&lock_wait_def, REC_LOCK_WAIT_THRESHOLD_NS, REC_DECLARE_STACK, &T_wait) !=
	    REC_OK)
		T_wait = NULL;
	if (rec_type_declare(&lock_order_def, 0, REC_DECLARE_STACK, &T_order) != REC_OK)
		T_order = NULL;
	(void)rec_default_listen(on_default, NULL);
	__atomic_store_n(&types_ready, 1, __ATOMIC_RELEASE);
}

static inline void ensure_types(void)
{
	if (__builtin_expect(!__atomic_load_n(&types_ready, __ATOMIC_ACQUIRE), 0))
		pthread_once(&types_once, init_types);
}

/* ---- per-thread state ------------------------------------------------------- */

static __thread uint64_t tls_tid;
static int tid_decode_ok; /* the CPU-clock decoding below gave gettid() once */

/* The calling thread's id without a system call: Linux names a thread's
 * CPU-time clock ((~tid) << 3) | 6 (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)),
 * and glibc's and musl's pthread_getcpuclockid() build it from the tid they
 * keep for the thread.  0 if the clock id does not have that shape. */
static uint64_t tid_from_cpu_clock(void)
{
	clockid_t c;
	if (pthread_getcpuclockid(pthread_self(), &c) != 0 || (c & 7) != 6)
		return 0;
	return ~((uint32_t)c >> 3) & 0x1fffffffu; /* pid_max is at most 2^22 */
}

static void reset_tid_in_child(void) { tls_tid = 0; }
static pthread_once_t tid_once = PTHREAD_ONCE_INIT;
static void tid_init(void)
{
	(void)pthread_atfork(NULL, NULL, reset_tid_in_child);
	tid_decode_ok = tid_from_cpu_clock() == (uint64_t)syscall(SYS_gettid);
}

uint64_t rec_builtin_tid(void)
{
	if (__builtin_expect(tls_tid == 0, 0)) {
		pthread_once(&tid_once, tid_init);
		uint64_t t = tid_decode_ok ? tid_from_cpu_clock() : 0;
		tls_tid = t ? t : (uint64_t)syscall(SYS_gettid);
	}
	return tls_tid;
}

/* The pairs a thread recorded: an open-addressing set that starts at
 * PAIRS_MIN slots and doubles (a new mapping, rehashed) when 3/4 full, up
 * to PAIRS_MAX slots (1 MiB); beyond 3/4 of that it starts over, so a pair
 * is recorded again only after the thread took more than 49152 distinct
 * pairs (a server with a lock per object: memcached's item locks gave a
 * thread 5679 distinct pairs in 4 s, and a 384-pair set that restarted
 * recorded the same pairs about 34,000 times a second). */
#define PAIRS_MIN 512u
#define PAIRS_MAX 65536u

/* Lock classes, as the kernel's lockdep has them, bound what a lock array
 * costs: a class is the call site that took the lock (memcached's 4096
 * item locks are all taken in item_lock()), and a thread writes at most
 * ORDER_PER_CLASSES distinct pairs for one pair of classes (held lock's
 * site, acquired lock's site).  Past that bound the thread looks nothing
 * up for that pair of sites: a worker that nests an item lock and an LRU
 * lock stops probing a set of tens of thousands of pairs that misses the
 * cache on every nested acquisition.  Up to the bound every pair is
 * written, so a program whose threads take fewer distinct pairs at one
 * pair of sites (globals, a few per-object locks) loses nothing.  Up to
 * CLASSES_MAX pairs of classes per thread (beyond: unbounded, as before);
 * a lock whose site is not known (0: back on the stack after a condition
 * wait) has no class. */
#define ORDER_PER_CLASSES 64u
#define CLASSES_MAX 256u /* power of two */

typedef struct class_slot {
	uintptr_t held_site, acq_site; /* 0: free */
	uint32_t pairs;                /* distinct pairs written for these two sites */
} class_slot;


typedef struct pair_slot {
	uintptr_t held, acq;
} pair_slot;

typedef struct pair_set {
	uint64_t epoch;
	uint32_t count, cap; /* pairs in it; slots (a power of two) */
	uint32_t classes;    /* class slots in use */
	class_slot cls[CLASSES_MAX];
	pair_slot slot[];
} pair_set;

/* The held-lock stack (builtin_internal.h: the preload's inline fast paths
 * read it too). */
__thread uint32_t rec_held_depth_tls_, rec_held_overflow_tls_;
__thread rec_held_lock rec_held_tls_[REC_HELD_MAX];
static __thread pair_set *tls_pairs;

static pthread_key_t pairs_key;
static int pairs_key_ok;
static pthread_once_t pairs_key_once = PTHREAD_ONCE_INIT;
/* The set is mapped, not malloc'ed: a lock taken inside the program's
 * allocator (its own mutexes) must not call back into it. */
static size_t pairs_bytes(uint32_t cap) { return sizeof(pair_set) + cap * sizeof(pair_slot); }
static void free_pairs(void *p) { munmap(p, pairs_bytes(((pair_set *)p)->cap)); }
static pair_set *map_pairs(uint32_t cap)
{
	pair_set *ps = mmap(NULL, pairs_bytes(cap), PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ps == MAP_FAILED)
		return NULL;
	ps->cap = cap;
	return ps;
}
static void make_pairs_key(void) { pairs_key_ok = pthread_key_create(&pairs_key, free_pairs) == 0; }

/* The pair of classes the calling thread last found at its bound, and the
 * recording it was in: the same nesting again (a worker's item lock, then
 * its LRU lock) is skipped without touching the thread's set. */
typedef struct bound_memo {
	uintptr_t held_site, acq_site;
	uint64_t epoch;
} bound_memo;
static __thread bound_memo tls_bound;

/* Forget every pair and every class count (the memo with them). */
static void pairs_clear(pair_set *ps)
{
	memset(ps->slot, 0, ps->cap * sizeof(pair_slot));
	memset(ps->cls, 0, sizeof ps->cls);
	ps->count = 0;
	ps->classes = 0;
	tls_bound.epoch = UINT64_MAX;
}

static pair_set *thread_pairs(void)
{
	pair_set *ps = tls_pairs;
	if (ps == NULL) {
		pthread_once(&pairs_key_once, make_pairs_key);
		if (!pairs_key_ok)
			return NULL;
		ps = map_pairs(PAIRS_MIN);
		if (ps == NULL)
			return NULL;
		if (pthread_setspecific(pairs_key, ps) != 0) {
			free_pairs(ps);
			return NULL;
		}
		tls_pairs = ps;
	}
	uint64_t ep = __atomic_load_n(&epoch, __ATOMIC_RELAXED);
	if (ps->epoch != ep) {
		pairs_clear(ps);
		ps->epoch = ep;
	}
	return ps;
}

static inline size_t pair_hash(uintptr_t a, uintptr_t b, uint32_t cap)
{
	uint64_t h = ((uint64_t)a * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)b * 0xC2B2AE3D27D4EB4Full);
	return (size_t)(h >> 32) & (cap - 1);
}

/* Room for one more pair: double the set (or start over at PAIRS_MAX, or
 * when no memory) when it is 3/4 full.  Returns the set to use. */
static pair_set *pairs_room(pair_set *ps)
{
	if (ps->count < ps->cap / 4 * 3)
		return ps;
	pair_set *big = ps->cap < PAIRS_MAX ? map_pairs(ps->cap * 2) : NULL;
	if (big == NULL || pthread_setspecific(pairs_key, big) != 0) {
		if (big != NULL)
			free_pairs(big);
		pairs_clear(ps);
		return ps;
	}
	big->epoch = ps->epoch;
	memcpy(big->cls, ps->cls, sizeof ps->cls);
	big->classes = ps->classes;
	for (uint32_t i = 0; i < ps->cap; i++) {
		if (ps->slot[i].held == 0)
			continue;
		size_t h = pair_hash(ps->slot[i].held, ps->slot[i].acq, big->cap);
		while (big->slot[h].held != 0)
			h = (h + 1) & (big->cap - 1);
		big->slot[h] = ps->slot[i];
		big->count++;
	}
	free_pairs(ps);
	tls_pairs = big;
	return big;
}

/* 1 if (a, b) was in the set; else inserts it when insert is set. */
static int pair_seen(pair_set *ps, uintptr_t a, uintptr_t b, int insert)
{
	size_t h = pair_hash(a, b, ps->cap);
	while (ps->slot[h].held != 0) {
		if (ps->slot[h].held == a && ps->slot[h].acq == b)
			return 1;
		h = (h + 1) & (ps->cap - 1);
	}
	if (insert) {
		ps->slot[h].held = a;
		ps->slot[h].acq = b;
		ps->count++;
	}
	return 0;
}

/* The count of (held_site, acq_site), added when new; NULL when either
 * site is not known or the table is full. */
static class_slot *class_pair(pair_set *ps, uintptr_t held_site, uintptr_t acq_site)
{
	if (held_site == 0 || acq_site == 0)
		return NULL;
	size_t h = pair_hash(held_site, acq_site, CLASSES_MAX);
	for (uint32_t i = 0; i < CLASSES_MAX; i++, h = (h + 1) & (CLASSES_MAX - 1)) {
		class_slot *c = &ps->cls[h];
		if (c->held_site == held_site && c->acq_site == acq_site)
			return c;
		if (c->held_site == 0) {
			if (ps->classes >= CLASSES_MAX / 4 * 3)
				return NULL;
			c->held_site = held_site;
			c->acq_site = acq_site;
			ps->classes++;
			return c;
		}
	}
	return NULL;
}

/* ---- emitting ----------------------------------------------------------------- */

const char *(*rec_lock_name_hook_)(const void *lock);

static void emit_name(rec_emit *e, const void *lock, const char *name)
{
	if (name == NULL && rec_lock_name_hook_ != NULL)
		name = rec_lock_name_hook_(lock);
	if (name != NULL) {
		rec_emit_string_dyn(e, name);
	} else {
		char buf[32];
		int n = snprintf(buf, sizeof(buf), "0x%" PRIxPTR, (uintptr_t)lock);
		rec_emit_string_dyn_len(e, buf, n > 0 ? (size_t)n : 0);
	}
}

static __attribute__((noinline)) void rec_lock_order_record_(const void *lock, const char *name,
								   uintptr_t site)
{
	uint64_t ep = __atomic_load_n(&epoch, __ATOMIC_RELAXED);
	pair_set *ps = NULL;
	for (uint32_t i = 0; i < rec_held_depth_tls_; i++) {
		const rec_held_lock *h = &rec_held_tls_[i];
		if (h->lock == lock)
			continue;
		if (site != 0 && h->site == tls_bound.held_site && site == tls_bound.acq_site &&
		    ep == tls_bound.epoch)
			continue;
		if (ps == NULL && (ps = thread_pairs()) == NULL)
			return;
		class_slot *c = class_pair(ps, h->site, site);
		if (c != NULL && c->pairs >= ORDER_PER_CLASSES) {
			tls_bound = (bound_memo){ h->site, site, ep };
			continue;
		}
		if (pair_seen(ps, (uintptr_t)h->lock, (uintptr_t)lock, 0))
			continue;
		rec_emit e;
		if (!rec_emit_begin(&e, T_order))
			continue; /* off or dropped: try again next time */
		rec_emit_u64(&e, (uintptr_t)h->lock);
		emit_name(&e, h->lock, h->name);
		rec_emit_u64(&e, (uintptr_t)lock);
		emit_name(&e, lock, name);
		rec_emit_commit(&e);
		if (c != NULL)
			c->pairs++; /* before pairs_room(): it may move the set */
		ps = pairs_room(ps);
		(void)pair_seen(ps, (uintptr_t)h->lock, (uintptr_t)lock, 1);
	}
}

/* Put lock on the calling thread's held stack (counted past REC_HELD_MAX). */
static inline void held_push(const void *lock, const char *name, uintptr_t site)
{
	if (rec_held_depth_tls_ < REC_HELD_MAX) {
		rec_held_tls_[rec_held_depth_tls_].lock = lock;
		rec_held_tls_[rec_held_depth_tls_].name = name;
		rec_held_tls_[rec_held_depth_tls_].site = site;
		rec_held_depth_tls_++;
	} else {
		rec_held_overflow_tls_++;
	}
}

/* The calling thread now holds lock. */
static inline void note_acquired(const void *lock, const char *name, uintptr_t site)
{
	rec_thread_seen();
	if (rec_held_depth_tls_ > 0) {
		ensure_types();
		if (T_order != NULL && rec_type_enabled(T_order))
			rec_lock_order_record_(lock, name, site);
	}
	held_push(lock, name, site);
}

static inline void acquired(const void *lock, const char *name, uint64_t *holder, uint64_t tid,
			    uintptr_t site)
{
	__atomic_store_n(holder, tid, __ATOMIC_RELAXED);
	note_acquired(lock, name, site);
}

/* The calling thread took lock by a trylock: held, but no rec.LockOrder
 * pair with the locks it holds.  A trylock never waits, so taking it while
 * holding others cannot close a deadlock (the rule of the kernel's
 * lockdep); programs take locks out of order exactly this way on purpose
 * (memcached's LRU maintainer trylocks item locks under an LRU lock).  A
 * lock it acquires later while holding this one makes pairs as usual. */
static inline void tried(const void *lock, const char *name, uint64_t *holder, uint64_t tid,
			 uintptr_t site)
{
	__atomic_store_n(holder, tid, __ATOMIC_RELAXED);
	rec_thread_seen();
	held_push(lock, name, site);
}

static int still_held(const void *lock, uint32_t depth)
{
	for (uint32_t k = 0; k < depth; k++)
		if (rec_held_tls_[k].lock == lock)
			return 1;
	return 0;
}

/* Released out of order (not the most recent acquisition). */
static __attribute__((noinline)) int released_slow(const void *lock)
{
	for (uint32_t i = rec_held_depth_tls_; i-- > 0;) {
		if (rec_held_tls_[i].lock != lock)
			continue;
		memmove(&rec_held_tls_[i], &rec_held_tls_[i + 1], (rec_held_depth_tls_ - i - 1) * sizeof(rec_held_lock));
		rec_held_depth_tls_--;
		return still_held(lock, rec_held_depth_tls_);
	}
	if (rec_held_overflow_tls_ > 0)
		rec_held_overflow_tls_--;
	return 0;
}

/* The calling thread released lock; returns 1 if it still holds it
 * (recursive mutex, several read locks). */
static inline int released(const void *lock)
{
	uint32_t d = rec_held_depth_tls_;
	if (__builtin_expect(d > 0 && rec_held_overflow_tls_ == 0 && rec_held_tls_[d - 1].lock == lock, 1)) {
		rec_held_depth_tls_ = d - 1;
		return d == 1 ? 0 : still_held(lock, d - 1);
	}
	return released_slow(lock);
}

static __attribute__((noinline)) void rec_lock_wait_record_(const void *lock, const char *name,
							    uint64_t holder, unsigned kind,
							    uint64_t t0)
{
	uint64_t t1 = rec_type_ticks(T_wait);
	rec_emit e;
	if (!rec_emit_begin_at(&e, T_wait, t0, t1))
		return; /* shorter than the threshold, off, or dropped */
	rec_emit_u64(&e, (uintptr_t)lock);
	emit_name(&e, lock, name);
	rec_emit_u64(&e, holder);
	rec_emit_u64(&e, kind);
	rec_emit_commit(&e);
}

/* Whether rec.LockWait is on; if so *t0 gets the start of the wait. */
static inline int wait_begin(uint64_t *t0)
{
	ensure_types();
	if (T_wait == NULL || !rec_type_enabled(T_wait))
		return 0;
	*t0 = rec_type_ticks(T_wait);
	return 1;
}

/* ---- mutex -------------------------------------------------------------------- */

int rec_mutex_init(rec_mutex *m, const pthread_mutexattr_t *attr, const char *name)
{
	if (m == NULL)
		return EINVAL;
	m->name = name;
	m->holder = 0;
	return pthread_mutex_init(&m->mu, attr);
}

int rec_mutex_destroy(rec_mutex *m)
{
	if (m == NULL)
		return EINVAL;
	return pthread_mutex_destroy(&m->mu);
}

static __attribute__((noinline)) int rec_mutex_lock_contended_(rec_mutex *m, uint64_t tid,
								 uintptr_t site)
{
	uint64_t holder = __atomic_load_n(&m->holder, __ATOMIC_RELAXED);
	for (int i = 0; holder == 0 && i < REC_HOLDER_REREADS; i++) {
		rec_holder_pause(i);
		if (pthread_mutex_trylock(&m->mu) == 0) {
			acquired(m, m->name, &m->holder, tid, site);
			return 0;
		}
		holder = __atomic_load_n(&m->holder, __ATOMIC_RELAXED);
	}
	uint64_t t0 = 0;
	int on = wait_begin(&t0);
	int rc = pthread_mutex_lock(&m->mu);
	if (rc != 0)
		return rc;
	/* the holder first: recording the wait takes microseconds, which
	 * others would otherwise see as a held lock without a holder */
	__atomic_store_n(&m->holder, tid, __ATOMIC_RELAXED);
	if (on)
		rec_lock_wait_record_(m, m->name, holder, 0, t0);
	note_acquired(m, m->name, site);
	return 0;
}

int rec_mutex_lock(rec_mutex *m)
{
	uint64_t tid = rec_builtin_tid();
	uintptr_t site = (uintptr_t)__builtin_return_address(0);
	int rc = pthread_mutex_trylock(&m->mu);
	if (__builtin_expect(rc == 0, 1)) {
		acquired(m, m->name, &m->holder, tid, site);
		return 0;
	}
	if (rc != EBUSY)
		return rc;
	return rec_mutex_lock_contended_(m, tid, site);
}

int rec_mutex_trylock(rec_mutex *m)
{
	int rc = pthread_mutex_trylock(&m->mu);
	if (rc == 0)
		tried(m, m->name, &m->holder, rec_builtin_tid(),
		      (uintptr_t)__builtin_return_address(0));
	return rc;
}

/* m is released: off the held stack, and no holder unless the thread still
 * holds it (recursively). */
static inline void note_release(rec_mutex *m)
{
	if (!released(m))
		__atomic_store_n(&m->holder, 0, __ATOMIC_RELAXED);
}

int rec_mutex_unlock(rec_mutex *m)
{
	note_release(m);
	return pthread_mutex_unlock(&m->mu);
}

/* ---- condition waits over a rec_mutex ---------------------------------------- */
/* pthread releases the mutex inside the wait and takes it again before it
 * returns: the holder and the held stack follow, and sleep.c records the
 * wait as rec.CondWait (the interface the preload's interposers use too). */

static inline void note_reacquire(rec_mutex *m)
{
	__atomic_store_n(&m->holder, rec_builtin_tid(), __ATOMIC_RELAXED);
	/* Back on the held stack without a lock-order check: it is the same
	 * acquisition the thread made before waiting. */
	rec_lock_reacquired_(m, m->name);
}

int rec_cond_wait(pthread_cond_t *c, rec_mutex *m)
{
	uint64_t t0;
	int on = rec_cond_wait_begin_(&t0);
	note_release(m);
	int rc = pthread_cond_wait(c, &m->mu);
	note_reacquire(m);
	if (on)
		rec_cond_wait_end_(c, m, m->name, 0, false, false, t0);
	return rc;
}

int rec_cond_timedwait(pthread_cond_t *c, rec_mutex *m, const struct timespec *abstime)
{
	if (abstime == NULL) /* glibc's pthread_cond_timedwait would dereference it */
		return EINVAL;
	uint64_t t0;
	int on = rec_cond_wait_begin_(&t0);
	uint64_t requested = 0;
	/* The timeout relative to now, on the condition's clock
	 * (CLOCK_REALTIME unless the program set another: approximate). */
	struct timespec now;
	if (clock_gettime(CLOCK_REALTIME, &now) == 0) {
		int64_t d = ((int64_t)abstime->tv_sec - (int64_t)now.tv_sec) * 1000000000 +
			    ((int64_t)abstime->tv_nsec - (int64_t)now.tv_nsec);
		requested = d > 0 ? (uint64_t)d : 0;
	}
	note_release(m);
	int rc = pthread_cond_timedwait(c, &m->mu, abstime);
	note_reacquire(m);
	if (on)
		rec_cond_wait_end_(c, m, m->name, requested, true, rc == ETIMEDOUT, t0);
	return rc;
}

/* ---- rwlock ------------------------------------------------------------------- */

int rec_rwlock_init(rec_rwlock *l, const pthread_rwlockattr_t *attr, const char *name)
{
	if (l == NULL)
		return EINVAL;
	l->name = name;
	l->holder = 0;
	return pthread_rwlock_init(&l->rw, attr);
}

int rec_rwlock_destroy(rec_rwlock *l)
{
	if (l == NULL)
		return EINVAL;
	return pthread_rwlock_destroy(&l->rw);
}

static __attribute__((noinline)) int rec_rwlock_contended_(rec_rwlock *l, int write, uint64_t tid,
							     uintptr_t site)
{
	uint64_t holder = __atomic_load_n(&l->holder, __ATOMIC_RELAXED);
	/* read again while it changes hands, not while readers hold it (the
	 * holder field names the last reader, 0 once that one let go) */
	for (int i = 0; holder == 0 && !rec_rwlock_readers(&l->rw) && i < REC_HOLDER_REREADS; i++) {
		rec_holder_pause(i);
		if ((write ? pthread_rwlock_trywrlock(&l->rw) : pthread_rwlock_tryrdlock(&l->rw)) == 0) {
			acquired(l, l->name, &l->holder, tid, site);
			return 0;
		}
		holder = __atomic_load_n(&l->holder, __ATOMIC_RELAXED);
	}
	uint64_t t0 = 0;
	int on = wait_begin(&t0);
	int rc = write ? pthread_rwlock_wrlock(&l->rw) : pthread_rwlock_rdlock(&l->rw);
	if (rc != 0)
		return rc;
	__atomic_store_n(&l->holder, tid, __ATOMIC_RELAXED); /* first: as the mutex's */
	if (on)
		rec_lock_wait_record_(l, l->name, holder, write ? 2 : 1, t0);
	note_acquired(l, l->name, site);
	return 0;
}

/* The read (write 0) or write lock: tried first, waited for (and recorded)
 * when busy. */
static inline int rwlock_lock(rec_rwlock *l, int write, uintptr_t site)
{
	uint64_t tid = rec_builtin_tid();
	int rc = write ? pthread_rwlock_trywrlock(&l->rw) : pthread_rwlock_tryrdlock(&l->rw);
	if (__builtin_expect(rc == 0, 1)) {
		acquired(l, l->name, &l->holder, tid, site);
		return 0;
	}
	if (rc != EBUSY)
		return rc;
	return rec_rwlock_contended_(l, write, tid, site);
}

static inline int rwlock_try(rec_rwlock *l, int write, uintptr_t site)
{
	int rc = write ? pthread_rwlock_trywrlock(&l->rw) : pthread_rwlock_tryrdlock(&l->rw);
	if (rc == 0)
		tried(l, l->name, &l->holder, rec_builtin_tid(), site);
	return rc;
}

int rec_rwlock_rdlock(rec_rwlock *l)
{
	return rwlock_lock(l, 0, (uintptr_t)__builtin_return_address(0));
}

int rec_rwlock_wrlock(rec_rwlock *l)
{
	return rwlock_lock(l, 1, (uintptr_t)__builtin_return_address(0));
}

int rec_rwlock_tryrdlock(rec_rwlock *l)
{
	return rwlock_try(l, 0, (uintptr_t)__builtin_return_address(0));
}

int rec_rwlock_trywrlock(rec_rwlock *l)
{
	return rwlock_try(l, 1, (uintptr_t)__builtin_return_address(0));
}

int rec_rwlock_unlock(rec_rwlock *l)
{
	if (!released(l)) {
		/* Clear the holder only if it names us (another reader may have
		 * replaced it). */
		uint64_t me = rec_builtin_tid();
		if (__atomic_load_n(&l->holder, __ATOMIC_RELAXED) == me)
			__atomic_store_n(&l->holder, 0, __ATOMIC_RELAXED);
	}
	return pthread_rwlock_unlock(&l->rw);
}

/* ---- for the preload library's interposers (stack_internal.h) ---------------- */

void rec_lock_acquired_(const void *lock, const char *name, uintptr_t site)
{
	note_acquired(lock, name, site);
}

void rec_lock_tried_(const void *lock, const char *name, uintptr_t site)
{
	rec_thread_seen();
	held_push(lock, name, site);
}

void rec_lock_reacquired_(const void *lock, const char *name)
{
	held_push(lock, name, 0);
}


int rec_lock_released_slow_(const void *lock)
{
	return released(lock);
}

int rec_lock_wait_begin_(uint64_t *t0)
{
	return wait_begin(t0);
}

uint32_t rec_lock_held_count_(void)
{
	return rec_held_depth_tls_;
}

void rec_lock_wait_end_(const void *lock, const char *name, uint64_t holder, unsigned kind,
			uint64_t t0)
{
	rec_lock_wait_record_(lock, name, holder, kind, t0);
}
