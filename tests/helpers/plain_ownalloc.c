/* SPDX-License-Identifier: MIT */
/*
 * plain_ownalloc.c - a program that knows nothing of rec (built without
 * librec) and brings its own allocator, as redis-server brings jemalloc:
 * malloc, calloc, realloc, free and the aligned ones are defined here, so
 * they stand before glibc's in the process and the recorder's own
 * allocations come here too.  The allocator is guarded by one pthread mutex,
 * heap_lock (recursive, as a program's allocator may be re-entered from its
 * own hooks), taken through pthread_mutex_lock, so the preload library sees
 * it like any other lock of the program.
 *
 * Each of WORKERS threads, in ROUNDS rounds (new threads each round, which
 * first wait on a condition variable for the round to start), runs ITERS
 * iterations: allocate a task with its own mutex (never freed, so every
 * task lock is a new address, named "0x<address>" in the recording), lock
 * it, malloc and free a block under it (heap_lock taken while holding the
 * task lock: one new rec.LockOrder pair per iteration, with a new lock name
 * to intern), unlock.  Under the recorder before the fix this hung: a
 * thread interning a string under the recorder's lock called malloc, which
 * waited for heap_lock, held by a thread whose lock bookkeeping waited for
 * the recorder's lock.
 *
 * With PLAIN_OWNALLOC_BINS=1 in the environment it is more like jemalloc:
 * every allocation and free also takes a bin lock that lives in memory the
 * allocator mapped (not a variable: its events name it 0x<address>@FUNC)
 * while it holds heap_lock, and a hog thread holds the bin lock for 20 ms
 * at a time (spinning: no call the preload sees) while the workers run, so
 * a thread inside the allocator, holding heap_lock, waits for the bin lock
 * and its wait is an event.  The allocator must not be entered again by a
 * thread already inside it (the recorder allocating while it names the
 * lock, as it did inside redis-server's jemalloc, which then waited for its
 * own mutex): that prints "re-entered" and exits 3.  The workers are
 * started by libc's pthread_create, not the one the preload library
 * interposes (as jemalloc starts its threads), so the recorder meets them
 * first inside the allocator.  The hog prints "hog TID holds N" at the end.
 *
 * With PLAIN_OWNALLOC_FORK=1 as well, the allocator registers fork
 * handlers at its first call, as jemalloc does (pthread_atfork in its
 * initialization: in a preloaded process that is inside the preload
 * library's constructor): its prepare handler takes heap_lock and the bin
 * lock, the parent's and the child's release them.  The main thread forks
 * 40 times a round while the workers run (the child exits at once) and
 * prints "forks N".  A recorder thread that calls the program's allocator
 * while it holds a lock the recorder's own fork handler takes (the unwind
 * tables were sorted with glibc's qsort, which allocates, inside
 * dl_iterate_phdr) hangs the fork: the allocator's handler holds heap_lock
 * and the recorder's waits for its lock.
 *
 * Usage: plain_ownalloc [ROUNDS [WORKERS [ITERS]]].  Prints "round N" as
 * rounds end, "tid TID iters N" for every worker, and "done" at the end.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- the allocator ---------------------------------------------------------- */
#define HEAP_SIZE (UINT64_C(8) << 30) /* reserved, touched as used */
#define CLASSES 40
#define HDR 16u

pthread_mutex_t heap_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static uint8_t *heap_base, *heap_top, *heap_end;
static void *free_lists[CLASSES];

/* A block: HDR bytes before the pointer: its class (size 16 << class) and,
 * for an aligned block, the offset back to the start of its allocation. */
typedef struct hdr {
	uint32_t cls;
	uint32_t back;
	uint64_t pad;
} hdr;

static unsigned class_of(size_t n)
{
	unsigned c = 0;
	while (((size_t)16 << c) < n)
		c++;
	return c;
}

/* PLAIN_OWNALLOC_BINS: the bin lock (mapped), and the re-entry check. */
static int bins = -1;
static pthread_mutex_t *bin_lock;
static __thread int in_alloc;

static int forking;
static void fork_prepare(void);
static void fork_release(void);

static int bins_on(void)
{
	if (bins < 0) { /* the first call, before any thread: getenv allocates nothing */
		const char *e = getenv("PLAIN_OWNALLOC_BINS");
		bins = e != NULL && e[0] == '1';
		const char *f = getenv("PLAIN_OWNALLOC_FORK");
		forking = bins && f != NULL && f[0] == '1';
		if (forking && pthread_atfork(fork_prepare, fork_release, fork_release) != 0)
			_exit(5);
	}
	return bins;
}

static void enter(void)
{
	if (!bins_on())
		return;
	if (in_alloc) {
		static const char msg[] = "plain_ownalloc: re-entered: the allocator was called "
					  "by a thread already inside it\n";
		(void)!write(2, msg, sizeof msg - 1);
		_exit(3);
	}
	in_alloc = 1;
	pthread_mutex_lock(&heap_lock);
	if (bin_lock == NULL) {
		void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			_exit(4);
		pthread_mutexattr_t at;
		pthread_mutexattr_init(&at);
		pthread_mutexattr_settype(&at, PTHREAD_MUTEX_ERRORCHECK);
		pthread_mutex_init(m, &at);
		bin_lock = m;
	}
	pthread_mutex_lock(bin_lock);
}

/* jemalloc's prefork: every lock of the allocator, then the fork */
static void fork_prepare(void)
{
	pthread_mutex_lock(&heap_lock);
	if (bin_lock != NULL)
		pthread_mutex_lock(bin_lock);
}

static void fork_release(void)
{
	if (bin_lock != NULL)
		pthread_mutex_unlock(bin_lock);
	pthread_mutex_unlock(&heap_lock);
}

static void leave(void)
{
	if (!bins)
		return;
	pthread_mutex_unlock(bin_lock);
	pthread_mutex_unlock(&heap_lock);
	in_alloc = 0;
}

static void *heap_alloc(size_t n)
{
	if (n > ((size_t)1 << 40))
		return NULL;
	unsigned c = class_of(n + HDR);
	if (c >= CLASSES)
		return NULL;
	enter();
	pthread_mutex_lock(&heap_lock);
	if (heap_base == NULL) {
		void *m = mmap(NULL, HEAP_SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED) {
			pthread_mutex_unlock(&heap_lock);
			leave();
			return NULL;
		}
		heap_base = heap_top = m;
		heap_end = heap_base + HEAP_SIZE;
	}
	uint8_t *b = free_lists[c];
	if (b != NULL) {
		memcpy(&free_lists[c], b, sizeof(void *));
	} else if ((size_t)(heap_end - heap_top) >= ((size_t)16 << c)) {
		b = heap_top;
		heap_top += (size_t)16 << c;
	}
	pthread_mutex_unlock(&heap_lock);
	leave();
	if (b == NULL)
		return NULL;
	hdr h = { c, 0, 0 };
	memcpy(b, &h, sizeof h);
	return b + HDR;
}

static hdr *hdr_of(void *p)
{
	return (hdr *)((uint8_t *)p - HDR);
}

void free(void *p)
{
	if (p == NULL)
		return;
	hdr *h = hdr_of(p);
	uint8_t *b = (uint8_t *)h - h->back;
	unsigned c = ((hdr *)b)->cls;
	enter();
	pthread_mutex_lock(&heap_lock);
	memcpy(b, &free_lists[c], sizeof(void *));
	free_lists[c] = b;
	pthread_mutex_unlock(&heap_lock);
	leave();
}

void *malloc(size_t n)
{
	return heap_alloc(n);
}

size_t malloc_usable_size(void *p)
{
	if (p == NULL)
		return 0;
	hdr *h = hdr_of(p);
	uint8_t *b = (uint8_t *)h - h->back;
	return ((size_t)16 << ((hdr *)b)->cls) - HDR - h->back;
}

void *calloc(size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		return NULL;
	void *p = heap_alloc(n * size);
	if (p != NULL)
		memset(p, 0, n * size);
	return p;
}

void *realloc(void *p, size_t n)
{
	if (p == NULL)
		return malloc(n);
	if (n == 0) {
		free(p);
		return NULL;
	}
	size_t old = malloc_usable_size(p);
	if (n <= old)
		return p;
	void *q = malloc(n);
	if (q != NULL) {
		memcpy(q, p, old);
		free(p);
	}
	return q;
}

static void *aligned(size_t align, size_t n)
{
	if (align <= HDR)
		return malloc(n);
	if (align & (align - 1))
		return NULL;
	uint8_t *p = heap_alloc(n + align);
	if (p == NULL)
		return NULL;
	uint8_t *q = (uint8_t *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	if (q != p) {
		hdr h = { 0, (uint32_t)(q - p), 0 };
		memcpy(q - HDR, &h, sizeof h);
	}
	return q;
}

int posix_memalign(void **out, size_t align, size_t n)
{
	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	void *p = aligned(align, n);
	if (p == NULL)
		return ENOMEM;
	*out = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t n) { return aligned(align, n); }
void *memalign(size_t align, size_t n) { return aligned(align, n); }
void *valloc(size_t n) { return aligned(4096, n); }
void *pvalloc(size_t n) { return aligned(4096, (n + 4095) & ~(size_t)4095); }

/* ---- the program -------------------------------------------------------------- */
typedef struct task {
	pthread_mutex_t mu;
	uint64_t sum;
} task;

static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t start_cond = PTHREAD_COND_INITIALIZER;
static int round_started = -1;
static long iters = 2000;

typedef struct worker_arg {
	int round;
	long tid;
	long done;
} worker_arg;

static void *worker(void *p)
{
	worker_arg *a = p;
	a->tid = (long)syscall(SYS_gettid);
	pthread_mutex_lock(&start_lock);
	while (round_started < a->round)
		pthread_cond_wait(&start_cond, &start_lock);
	pthread_mutex_unlock(&start_lock);
	for (long i = 0; i < iters && bins_on(); i++) { /* the allocator's locks only */
		void *volatile b = malloc(32 + (size_t)(i % 200)); /* volatile: kept */
		free(b);
		a->done++;
	}
	for (long i = 0; i < iters && !bins_on(); i++) {
		task *t = malloc(sizeof *t);
		if (t == NULL)
			break;
		pthread_mutex_init(&t->mu, NULL);
		pthread_mutex_lock(&t->mu);
		char *b = malloc(32 + (size_t)(i % 200));
		if (b != NULL) {
			memset(b, (int)i, 32);
			t->sum += (uint8_t)b[7];
			free(b);
		}
		pthread_mutex_unlock(&t->mu);
		a->done++;
	}
	return NULL;
}

/* The hog: holds the bin lock 20 ms at a time (spinning on the clock),
 * 30 ms apart, until the workers are done. */
static int workers_done;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *hog(void *p)
{
	(void)p;
	long holds = 0;
	while (!__atomic_load_n(&workers_done, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(bin_lock);
		for (uint64_t end = now_ns() + 20000000u; now_ns() < end;)
			;
		pthread_mutex_unlock(bin_lock);
		holds++;
		struct timespec ts = { 0, 30000000 };
		nanosleep(&ts, NULL);
	}
	printf("hog %ld holds %ld\n", (long)syscall(SYS_gettid), holds);
	return NULL;
}

/* PLAIN_OWNALLOC_BINS: the workers are started by libc's pthread_create
 * itself, as jemalloc starts its background threads (through its own
 * pointer to the next definition): the preload library does not see them
 * start, and registers them at their first event, inside the allocator. */
typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static int create(pthread_t *th, void *(*fn)(void *), void *arg)
{
	static create_fn libc_create;
	if (bins_on() && libc_create == NULL) {
		void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
		libc_create = libc ? (create_fn)dlsym(libc, "pthread_create") : NULL;
		if (libc_create == NULL)
			return -1;
	}
	return libc_create ? libc_create(th, NULL, fn, arg) : pthread_create(th, NULL, fn, arg);
}

int main(int argc, char **argv)
{
	long forks = 0;
	int rounds = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 4;
	int workers = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 4;
	if (argc > 3)
		iters = strtol(argv[3], NULL, 10);
	if (rounds < 1 || workers < 1 || workers > 64 || iters < 1) {
		fprintf(stderr, "usage: plain_ownalloc [ROUNDS [WORKERS [ITERS]]]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_t hog_th;
	if (bins_on()) {
		enter(); /* the bin lock exists */
		leave();
		if (pthread_create(&hog_th, NULL, hog, NULL) != 0)
			return 1;
	}
	for (int r = 0; r < rounds; r++) {
		pthread_t th[64];
		worker_arg *args = calloc((size_t)workers, sizeof *args);
		if (args == NULL)
			return 1;
		for (int w = 0; w < workers; w++) {
			args[w].round = r;
			if (create(&th[w], worker, &args[w]) != 0)
				return 1;
		}
		pthread_mutex_lock(&start_lock);
		round_started = r;
		pthread_cond_broadcast(&start_cond);
		pthread_mutex_unlock(&start_lock);
		if (forking) /* while the workers run */
			for (int k = 0; k < 40; k++) {
				pid_t pid = fork();
				if (pid == 0)
					_exit(0);
				if (pid < 0 || waitpid(pid, NULL, 0) != pid)
					return 1;
				forks++;
			}
		for (int w = 0; w < workers; w++)
			pthread_join(th[w], NULL);
		for (int w = 0; w < workers; w++)
			printf("tid %ld iters %ld\n", args[w].tid, args[w].done);
		free(args);
		printf("round %d\n", r);
	}
	if (forking)
		printf("forks %ld\n", forks);
	__atomic_store_n(&workers_done, 1, __ATOMIC_RELEASE);
	if (bins_on())
		pthread_join(hog_th, NULL);
	printf("done\n");
	return 0;
}
