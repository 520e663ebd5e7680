/* SPDX-License-Identifier: MIT */
/*
 * test_builtins_locks.c - rec.LockWait, rec.LockOrder and rec.Sleep produced
 * for real: contended mutexes and rwlocks between real threads, nested locks
 * in fixed orders, sleeps and condition waits, recorded to a file by the
 * default recorder and read back with the reader.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rec/builtins.h"
#include "rec/recorder.h"

/* ---- recording helpers (each test binary has its own copy) --------------- */

typedef struct tev {
	char *type;
	int64_t dur_ns;
	int64_t wall_ns;
	uint64_t tid; /* OS tid of the event's thread, 0 if none */
	uint32_t nf;
	struct {
		char *name;
		uint64_t u;
		char *s;
	} f[8];
	char *stack; /* function names joined by ';', leaf first ("" if none) */
	int has_stack; /* the event references a stack (id != 0) */
	char *user_module;   /* module path of the first frame not named rec_* */
	char *user_build_id; /* its build-id ("" if none) */
} tev;

static tev *g_ev;
static size_t g_nev;
static rec_recorder *g_rec;
static char g_path[64];

static char *xstrndup(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	assert_non_null(p);
	if (n)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static void free_events(void)
{
	for (size_t i = 0; i < g_nev; i++) {
		free(g_ev[i].type);
		for (uint32_t k = 0; k < g_ev[i].nf; k++) {
			free(g_ev[i].f[k].name);
			free(g_ev[i].f[k].s);
		}
		free(g_ev[i].stack);
		free(g_ev[i].user_module);
		free(g_ev[i].user_build_id);
	}
	free(g_ev);
	g_ev = NULL;
	g_nev = 0;
}

/* Open a default recorder writing to a fresh temporary file. */
static void rec_start(const char *events)
{
	strcpy(g_path, "/tmp/rec-builtins-XXXXXX");
	int fd = mkstemp(g_path);
	assert_true(fd >= 0);
	close(fd);
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.flags = REC_RECORDER_DEFAULT;
	o.path = g_path;
	o.flush_interval_ms = 50;
	o.events = events;
	assert_int_equal(rec_recorder_open(&g_rec, &o), REC_OK);
	assert_ptr_equal(rec_recorder_default(), g_rec);
}

/* Close the recorder and load every event of the file into g_ev. */
static void rec_stop_and_load(void)
{
	assert_int_equal(rec_recorder_close(g_rec), REC_OK);
	g_rec = NULL;
	free_events();
	rec_reader *r;
	assert_int_equal(rec_reader_open_path(&r, g_path, NULL), REC_OK);
	size_t cap = 0;
	rec_event ev;
	rec_status st;
	while ((st = rec_reader_next_event(r, &ev)) == REC_OK) {
		if (g_nev == cap) {
			cap = cap ? 2 * cap : 256;
			g_ev = realloc(g_ev, cap * sizeof(*g_ev));
			assert_non_null(g_ev);
		}
		tev *t = &g_ev[g_nev++];
		memset(t, 0, sizeof(*t));
		t->type = xstrndup(ev.type->name, strlen(ev.type->name));
		t->dur_ns = ev.duration_ns;
		t->wall_ns = ev.wall_ns;
		t->tid = ev.thread ? ev.thread->os_tid : 0;
		for (uint32_t k = 0; k < ev.value_count && k < 8; k++) {
			const rec_value *v = &ev.values[k];
			t->f[k].name = xstrndup(ev.type->fields[k].name, strlen(ev.type->fields[k].name));
			if (v->type == REC_TYPE_STRING || v->type == REC_TYPE_TEXT) {
				if (v->v.s.ptr != NULL)
					t->f[k].s = xstrndup(v->v.s.ptr, v->v.s.len);
			} else {
				t->f[k].u = v->v.u;
			}
			t->nf = k + 1;
		}
		size_t len = 0, scap = 256;
		t->stack = malloc(scap);
		assert_non_null(t->stack);
		t->stack[0] = '\0';
		t->has_stack = ev.stack != NULL;
		t->user_module = xstrndup("", 0);
		t->user_build_id = xstrndup("", 0);
		for (uint32_t k = 0; ev.stack != NULL && k < ev.stack->depth; k++) {
			const rec_frame *fr = ev.stack->frames[k];
			if (strncmp(fr->function, "rec_", 4) == 0)
				continue;
			if (fr->module != NULL) {
				free(t->user_module);
				free(t->user_build_id);
				t->user_module = xstrndup(fr->module->path, strlen(fr->module->path));
				t->user_build_id = xstrndup(fr->module->build_id, strlen(fr->module->build_id));
			}
			break;
		}
		if (ev.stack != NULL) {
			for (uint32_t k = 0; k < ev.stack->depth; k++) {
				const char *fn = ev.stack->frames[k]->function;
				size_t fl = strlen(fn);
				if (len + fl + 2 > scap) {
					scap = 2 * (len + fl + 2);
					t->stack = realloc(t->stack, scap);
					assert_non_null(t->stack);
				}
				if (k > 0)
					t->stack[len++] = ';';
				memcpy(t->stack + len, fn, fl);
				len += fl;
				t->stack[len] = '\0';
			}
		}
	}
	assert_int_equal(st, REC_END);
	rec_reader_close(r);
	unlink(g_path);
}

static __attribute__((unused)) const char *fs(const tev *e, const char *name)
{
	for (uint32_t k = 0; k < e->nf; k++)
		if (strcmp(e->f[k].name, name) == 0)
			return e->f[k].s ? e->f[k].s : "";
	fail_msg("event %s has no field %s", e->type, name);
	return NULL;
}

static uint64_t fu(const tev *e, const char *name)
{
	for (uint32_t k = 0; k < e->nf; k++)
		if (strcmp(e->f[k].name, name) == 0)
			return e->f[k].u;
	fail_msg("event %s has no field %s", e->type, name);
	return 0;
}

static __attribute__((unused)) size_t count_type(const char *type)
{
	size_t n = 0;
	for (size_t i = 0; i < g_nev; i++)
		n += strcmp(g_ev[i].type, type) == 0;
	return n;
}

/* Does the ';'-joined stack contain function fn as a whole frame? */
static __attribute__((unused)) int stack_has(const tev *e, const char *fn)
{
	size_t fl = strlen(fn);
	for (const char *p = e->stack; (p = strstr(p, fn)) != NULL; p += fl)
		if ((p == e->stack || p[-1] == ';') && (p[fl] == '\0' || p[fl] == ';' || p[fl] == '.'))
			return 1;
	return 0;
}

/* The first frame that is not librec's own (named rec_*): the call site. */
static __attribute__((unused)) const char *first_user_frame(const tev *e, char *buf, size_t cap)
{
	const char *p = e->stack;
	while (strncmp(p, "rec_", 4) == 0) {
		const char *semi = strchr(p, ';');
		if (semi == NULL)
			return "";
		p = semi + 1;
	}
	size_t n = strcspn(p, ";");
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

/* The build-id of this test program, from `readelf -n`. */
static __attribute__((unused)) void self_build_id(char *out, size_t cap)
{
	char exe[4096], cmd[4200], line[512];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(len > 0);
	exe[len] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", exe);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	out[0] = '\0';
	while (fgets(line, sizeof(line), p) != NULL) {
		const char *b = strstr(line, "Build ID: ");
		if (b != NULL) {
			size_t n = strspn(b + 10, "0123456789abcdef");
			if (n >= cap)
				n = cap - 1;
			memcpy(out, b + 10, n);
			out[n] = '\0';
		}
	}
	assert_int_equal(pclose(p), 0);
	assert_true(strlen(out) >= 16);
}

static uint64_t my_tid(void) { return (uint64_t)syscall(SYS_gettid); }

/* ---- rec.LockWait ------------------------------------------------------------ */

static rec_mutex g_mu = REC_MUTEX_INITIALIZER("test.mutex");
static atomic_int g_step;
static uint64_t g_holder_tid;

void *lk_holder_thread(void *arg);
void *lk_waiter_thread(void *arg);

void *lk_holder_thread(void *arg)
{
	(void)arg;
	g_holder_tid = my_tid();
	assert_int_equal(rec_mutex_lock(&g_mu), 0);
	atomic_store(&g_step, 1);            /* holding it */
	while (atomic_load(&g_step) != 2)    /* the waiter is about to lock */
		sched_yield();
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	assert_int_equal(rec_mutex_unlock(&g_mu), 0);
	return NULL;
}

void *lk_waiter_thread(void *arg)
{
	uint64_t *tid = arg;
	*tid = my_tid();
	while (atomic_load(&g_step) != 1)
		sched_yield();
	atomic_store(&g_step, 2);
	assert_int_equal(rec_mutex_lock(&g_mu), 0);
	assert_int_equal(rec_mutex_unlock(&g_mu), 0);
	return NULL;
}

static void t_lock_wait_contended(void **state)
{
	(void)state;
	rec_start(NULL);
	atomic_store(&g_step, 0);
	uint64_t waiter_tid = 0;
	pthread_t a, b;
	assert_int_equal(pthread_create(&a, NULL, lk_holder_thread, NULL), 0);
	assert_int_equal(pthread_create(&b, NULL, lk_waiter_thread, &waiter_tid), 0);
	assert_int_equal(pthread_join(a, NULL), 0);
	assert_int_equal(pthread_join(b, NULL), 0);
	/* Uncontended: no events. */
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(rec_mutex_lock(&g_mu), 0);
		assert_int_equal(rec_mutex_unlock(&g_mu), 0);
	}
	rec_stop_and_load();

	assert_int_equal(count_type("rec.LockWait"), 1);
	char bid[200];
	self_build_id(bid, sizeof(bid));
	for (size_t i = 0; i < g_nev; i++) {
		const tev *e = &g_ev[i];
		if (strcmp(e->type, "rec.LockWait") != 0)
			continue;
		/* The call site's frame names this program and its build-id. */
		assert_non_null(strstr(e->user_module, "test_builtins_locks"));
		assert_string_equal(e->user_build_id, bid);
		assert_string_equal(fs(e, "lockName"), "test.mutex");
		assert_int_equal(fu(e, "lockAddress"), (uintptr_t)&g_mu);
		assert_int_equal(fu(e, "holderOsThreadId"), g_holder_tid);
		assert_int_equal(fu(e, "lockKind"), 0);
		assert_int_equal(e->tid, waiter_tid);
		/* The holder slept 50 ms after the waiter announced itself. */
		assert_true(e->dur_ns >= 49 * 1000 * 1000);
		assert_true(e->dur_ns < 2000LL * 1000 * 1000);
		char buf[128];
		assert_string_equal(first_user_frame(e, buf, sizeof(buf)), "lk_waiter_thread");
	}
}

/* An unnamed lock is named by its address; rwlocks record their kind. */
static rec_rwlock g_rw = REC_RWLOCK_INITIALIZER(NULL);

void *rw_writer_thread(void *arg);
void *rw_writer_thread(void *arg)
{
	(void)arg;
	g_holder_tid = my_tid();
	assert_int_equal(rec_rwlock_wrlock(&g_rw), 0);
	atomic_store(&g_step, 1);
	while (atomic_load(&g_step) != 2)
		sched_yield();
	struct timespec ts = { 0, 30 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	assert_int_equal(rec_rwlock_unlock(&g_rw), 0);
	return NULL;
}

static void t_rwlock_wait(void **state)
{
	(void)state;
	rec_start(NULL);
	atomic_store(&g_step, 0);
	pthread_t a;
	assert_int_equal(pthread_create(&a, NULL, rw_writer_thread, NULL), 0);
	while (atomic_load(&g_step) != 1)
		sched_yield();
	atomic_store(&g_step, 2);
	assert_int_equal(rec_rwlock_rdlock(&g_rw), 0);
	assert_int_equal(rec_rwlock_unlock(&g_rw), 0);
	assert_int_equal(pthread_join(a, NULL), 0);
	rec_stop_and_load();
	assert_int_equal(count_type("rec.LockWait"), 1);
	char name[32];
	snprintf(name, sizeof(name), "0x%" PRIxPTR, (uintptr_t)&g_rw);
	for (size_t i = 0; i < g_nev; i++) {
		const tev *e = &g_ev[i];
		if (strcmp(e->type, "rec.LockWait") != 0)
			continue;
		assert_string_equal(fs(e, "lockName"), name);
		assert_int_equal(fu(e, "lockKind"), 1);
		assert_int_equal(fu(e, "holderOsThreadId"), g_holder_tid);
		assert_true(e->dur_ns >= 29 * 1000 * 1000);
		assert_int_equal(e->tid, my_tid());
	}
}

/* ---- rec.LockOrder -------------------------------------------------------------- */

static rec_mutex g_a = REC_MUTEX_INITIALIZER("lock.A");
static rec_mutex g_b = REC_MUTEX_INITIALIZER("lock.B");

void *order_ab_thread(void *arg);
void *order_ba_thread(void *arg);

void *order_ab_thread(void *arg)
{
	uint64_t *tid = arg;
	*tid = my_tid();
	for (int i = 0; i < 200; i++) {
		assert_int_equal(rec_mutex_lock(&g_a), 0);
		assert_int_equal(rec_mutex_lock(&g_b), 0);
		assert_int_equal(rec_mutex_unlock(&g_b), 0);
		assert_int_equal(rec_mutex_unlock(&g_a), 0);
	}
	return NULL;
}

void *order_ba_thread(void *arg)
{
	uint64_t *tid = arg;
	*tid = my_tid();
	for (int i = 0; i < 50; i++) {
		assert_int_equal(rec_mutex_lock(&g_b), 0);
		/* trylock: a B->A order without risking the deadlock */
		if (rec_mutex_trylock(&g_a) == 0)
			assert_int_equal(rec_mutex_unlock(&g_a), 0);
		assert_int_equal(rec_mutex_unlock(&g_b), 0);
	}
	return NULL;
}

static void t_lock_order_once_per_pair_per_thread(void **state)
{
	(void)state;
	rec_start(NULL);
	uint64_t t1 = 0, t2 = 0, t3 = 0;
	pthread_t a, b;
	assert_int_equal(pthread_create(&a, NULL, order_ab_thread, &t1), 0);
	assert_int_equal(pthread_create(&b, NULL, order_ab_thread, &t2), 0);
	assert_int_equal(pthread_join(a, NULL), 0);
	assert_int_equal(pthread_join(b, NULL), 0);
	assert_int_equal(pthread_create(&a, NULL, order_ba_thread, &t3), 0);
	assert_int_equal(pthread_join(a, NULL), 0);
	rec_stop_and_load();

	int ab1 = 0, ab2 = 0, ba3 = 0, no_stack = 0;
	for (size_t i = 0; i < g_nev; i++) {
		const tev *e = &g_ev[i];
		if (strcmp(e->type, "rec.LockOrder") != 0)
			continue;
		if (e->tid == t1 || e->tid == t2) {
			assert_string_equal(fs(e, "heldName"), "lock.A");
			assert_int_equal(fu(e, "heldAddress"), (uintptr_t)&g_a);
			assert_string_equal(fs(e, "acquiredName"), "lock.B");
			assert_int_equal(fu(e, "acquiredAddress"), (uintptr_t)&g_b);
			/* Two threads intern the same stack at the same time: the
			 * core's lock-free stack table may give up on one (no
			 * stack id) when the other is preempted mid-insert. */
			char buf[128];
			if (e->has_stack)
				assert_string_equal(first_user_frame(e, buf, sizeof(buf)), "order_ab_thread");
			else
				no_stack++;
			*(e->tid == t1 ? &ab1 : &ab2) += 1;
		} else {
			assert_int_equal(e->tid, t3);
			assert_string_equal(fs(e, "heldName"), "lock.B");
			assert_string_equal(fs(e, "acquiredName"), "lock.A");
			assert_true(stack_has(e, "order_ba_thread"));
			ba3++;
		}
	}
	assert_int_equal(ab1, 1);
	assert_int_equal(ab2, 1);
	assert_int_equal(ba3, 1);
	assert_true(no_stack <= 1);
}

/* A new recording sees the pairs again (the per-thread set restarts). */
static void t_lock_order_new_recording(void **state)
{
	(void)state;
	for (int round = 0; round < 2; round++) {
		rec_start(NULL);
		uint64_t t = 0;
		order_ab_thread(&t); /* this thread, both rounds */
		rec_stop_and_load();
		assert_int_equal(count_type("rec.LockOrder"), 1);
	}
}

/* ---- rec.Sleep -------------------------------------------------------------------- */

void sl_sleeper(void);
__attribute__((noinline)) void sl_sleeper(void)
{
	assert_int_equal(rec_sleep_ns(20u * 1000 * 1000), 0);
	assert_int_equal(rec_usleep(5000), 0);
	struct timespec ts = { 0, 7 * 1000 * 1000 };
	assert_int_equal(rec_nanosleep(&ts, NULL), 0);
}

static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static rec_mutex g_cmu = REC_MUTEX_INITIALIZER("cond.mutex");
static int g_flag;

void *cv_signaller(void *arg);
void *cv_signaller(void *arg)
{
	(void)arg;
	struct timespec ts = { 0, 30 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	assert_int_equal(rec_mutex_lock(&g_cmu), 0);
	g_flag = 1;
	pthread_cond_signal(&g_cond);
	assert_int_equal(rec_mutex_unlock(&g_cmu), 0);
	return NULL;
}

static void t_sleep_and_cond(void **state)
{
	(void)state;
	rec_start(NULL);
	sl_sleeper();
	g_flag = 0;
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, cv_signaller, NULL), 0);
	assert_int_equal(rec_mutex_lock(&g_cmu), 0);
	while (!g_flag)
		assert_int_equal(rec_cond_wait(&g_cond, &g_cmu), 0);
	/* A timed wait that times out after 15 ms. */
	struct timespec abs;
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_nsec += 15 * 1000 * 1000;
	if (abs.tv_nsec >= 1000000000) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000;
	}
	assert_int_equal(rec_cond_timedwait(&g_cond, &g_cmu, &abs), ETIMEDOUT);
	assert_int_equal(g_cmu.holder, my_tid()); /* holder restored after the wait */
	assert_int_equal(rec_mutex_unlock(&g_cmu), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	rec_stop_and_load();

	int sleeps = 0, conds = 0;
	const int64_t want_sleep[3] = { 20000000, 5000000, 7000000 };
	for (size_t i = 0; i < g_nev; i++) {
		const tev *e = &g_ev[i];
		if (strcmp(e->type, "rec.Sleep") != 0)
			continue;
		assert_int_equal(e->tid, my_tid());
		if (strcmp(fs(e, "kind"), "sleep") == 0) {
			assert_true(sleeps < 3);
			assert_int_equal(fu(e, "requested"), (uint64_t)want_sleep[sleeps]);
			assert_true(e->dur_ns >= want_sleep[sleeps]);
			assert_int_equal(fu(e, "objectAddress"), 0);
			char buf[128];
			assert_string_equal(first_user_frame(e, buf, sizeof(buf)), "sl_sleeper");
			sleeps++;
		} else {
			assert_string_equal(fs(e, "kind"), "cond");
			assert_int_equal(fu(e, "objectAddress"), (uintptr_t)&g_cond);
			assert_true(stack_has(e, "t_sleep_and_cond"));
			if (conds == 0) { /* woken by the signaller after ~30 ms */
				assert_int_equal(fu(e, "requested"), 0);
				assert_true(e->dur_ns >= 20 * 1000 * 1000);
			} else {          /* timed out */
				assert_true(fu(e, "requested") > 10 * 1000 * 1000);
				assert_true(fu(e, "requested") <= 15 * 1000 * 1000);
				assert_true(e->dur_ns >= 14 * 1000 * 1000);
			}
			conds++;
		}
	}
	assert_int_equal(sleeps, 3);
	assert_int_equal(conds, 2);
}

/* With no recorder open the wrappers are plain locks and sleeps. */
static void t_no_recorder(void **state)
{
	(void)state;
	assert_null(rec_recorder_default());
	assert_int_equal(rec_mutex_lock(&g_a), 0);
	assert_int_equal(rec_mutex_lock(&g_b), 0);
	assert_int_equal(g_b.holder, my_tid());
	assert_int_equal(rec_mutex_unlock(&g_b), 0);
	assert_int_equal(rec_mutex_unlock(&g_a), 0);
	assert_int_equal(g_a.holder, 0);
	assert_int_equal(rec_sleep_ns(1000), 0);
}

/* Out-of-order release and recursive mutexes keep the holder and the
 * held-lock stack right. */
static void t_held_stack(void **state)
{
	(void)state;
	rec_start(NULL);
	rec_mutex c;
	pthread_mutexattr_t at;
	assert_int_equal(pthread_mutexattr_init(&at), 0);
	assert_int_equal(pthread_mutexattr_settype(&at, PTHREAD_MUTEX_RECURSIVE), 0);
	assert_int_equal(rec_mutex_init(&c, &at, "recursive"), 0);
	assert_int_equal(pthread_mutexattr_destroy(&at), 0);
	assert_int_equal(rec_mutex_lock(&g_a), 0);
	assert_int_equal(rec_mutex_lock(&g_b), 0);
	assert_int_equal(rec_mutex_unlock(&g_a), 0); /* not the most recent */
	assert_int_equal(g_a.holder, 0);
	assert_int_equal(g_b.holder, my_tid());
	assert_int_equal(rec_mutex_lock(&c), 0);    /* B -> recursive */
	assert_int_equal(rec_mutex_lock(&c), 0);    /* again: no pair with itself */
	assert_int_equal(rec_mutex_unlock(&c), 0);
	assert_int_equal(c.holder, my_tid());       /* still held once */
	assert_int_equal(rec_mutex_unlock(&c), 0);
	assert_int_equal(c.holder, 0);
	assert_int_equal(rec_mutex_unlock(&g_b), 0);
	assert_int_equal(g_b.holder, 0);
	/* Nothing held now: taking A then B records A -> B. */
	assert_int_equal(rec_mutex_lock(&g_a), 0);
	assert_int_equal(rec_mutex_lock(&g_b), 0);
	assert_int_equal(rec_mutex_unlock(&g_b), 0);
	assert_int_equal(rec_mutex_unlock(&g_a), 0);
	rec_stop_and_load();
	assert_int_equal(rec_mutex_destroy(&c), 0);
	int ab = 0, a_b_then = 0, brec = 0;
	for (size_t i = 0; i < g_nev; i++) {
		const tev *e = &g_ev[i];
		if (strcmp(e->type, "rec.LockOrder") != 0)
			continue;
		const char *h = fs(e, "heldName"), *q = fs(e, "acquiredName");
		if (strcmp(h, "lock.A") == 0 && strcmp(q, "lock.B") == 0)
			ab++;
		else if (strcmp(h, "lock.B") == 0 && strcmp(q, "recursive") == 0)
			brec++;
		else
			a_b_then++;
	}
	assert_int_equal(ab, 1);
	assert_int_equal(brec, 1);
	assert_int_equal(a_b_then, 0); /* A was released: no A -> recursive */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_no_recorder),
		cmocka_unit_test(t_lock_wait_contended),
		cmocka_unit_test(t_rwlock_wait),
		cmocka_unit_test(t_lock_order_once_per_pair_per_thread),
		cmocka_unit_test(t_lock_order_new_recording),
		cmocka_unit_test(t_sleep_and_cond),
		cmocka_unit_test(t_held_stack),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
