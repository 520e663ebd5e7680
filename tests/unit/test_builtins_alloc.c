/* SPDX-License-Identifier: MIT */
/*
 * test_builtins_alloc.c - rec.Alloc and rec.Free produced for real: exact
 * reports (768 x 8192 bytes must total 6,291,456), and the sampling
 * wrappers on real threads (sample count, weights summing to the bytes
 * allocated, frees of sampled blocks), recorded to a file and read back.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
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

/* ---- reported allocations: exact ------------------------------------------- */

void al_request(void **bufs);
__attribute__((noinline)) void al_request(void **bufs)
{
	for (int i = 0; i < 768; i++) {
		bufs[i] = malloc(8192);
		assert_non_null(bufs[i]);
		rec_alloc_report(bufs[i], 8192);
	}
}

static void t_reported_exact(void **state)
{
	(void)state;
	rec_start(NULL);
	static void *bufs[768];
	al_request(bufs);
	for (int i = 0; i < 768; i++) {
		rec_free_report(bufs[i]);
		free(bufs[i]);
	}
	rec_stop_and_load();
	uint64_t total = 0, n = 0, frees = 0;
	for (size_t i = 0; i < g_nev; i++) {
		const tev *e = &g_ev[i];
		if (strcmp(e->type, "rec.Alloc") == 0) {
			assert_int_equal(fu(e, "sampled"), 0);
			assert_int_equal(fu(e, "size"), 8192);
			assert_int_equal(fu(e, "weight"), 8192);
			assert_int_equal(fu(e, "address"), (uintptr_t)bufs[n]);
			assert_int_equal(e->tid, my_tid());
			char buf[128];
			assert_string_equal(first_user_frame(e, buf, sizeof(buf)), "al_request");
			total += fu(e, "size");
			n++;
		} else if (strcmp(e->type, "rec.Free") == 0) {
			assert_int_equal(fu(e, "sampled"), 0);
			assert_int_equal(fu(e, "size"), 0);
			assert_int_equal(fu(e, "address"), (uintptr_t)bufs[frees]);
			frees++;
		}
	}
	assert_int_equal(n, 768);
	assert_int_equal(total, 6291456);
	assert_int_equal(frees, 768);
}

/* ---- sampled malloc/free ---------------------------------------------------- */

#define SAMPLED_THREADS 2
#define SAMPLED_ALLOCS 20000
#define SAMPLED_SIZE 1000

void *al_sampled_worker(void *arg);
void *al_sampled_worker(void *arg)
{
	uint64_t *tid = arg;
	*tid = my_tid();
	static _Thread_local void *keep[64];
	for (int i = 0; i < SAMPLED_ALLOCS; i++) {
		void *p;
		switch (i % 4) {
		case 0: p = rec_malloc(SAMPLED_SIZE); break;
		case 1: p = rec_calloc(10, SAMPLED_SIZE / 10); break;
		case 2: p = rec_realloc(NULL, SAMPLED_SIZE); break;
		default:
			p = rec_malloc(SAMPLED_SIZE / 2);
			assert_non_null(p);
			p = rec_realloc(p, SAMPLED_SIZE); /* counts 500 + 1000 */
			break;
		}
		assert_non_null(p);
		memset(p, 1, SAMPLED_SIZE);
		void **slot = &keep[i % 64];
		rec_free(*slot);
		*slot = p;
	}
	for (int i = 0; i < 64; i++) {
		rec_free(keep[i]);
		keep[i] = NULL;
	}
	return NULL;
}

static void t_sampled(void **state)
{
	(void)state;
	rec_alloc_set_sample_interval(64 * 1024);
	assert_int_equal(rec_alloc_sample_interval(), 64 * 1024);
	rec_start(NULL);
	uint64_t tids[SAMPLED_THREADS];
	pthread_t th[SAMPLED_THREADS];
	for (int i = 0; i < SAMPLED_THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, al_sampled_worker, &tids[i]), 0);
	for (int i = 0; i < SAMPLED_THREADS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	rec_stop_and_load();
	rec_alloc_set_sample_interval(512 * 1024);

	/* Bytes each thread allocated through the wrappers. */
	const uint64_t per_thread = (uint64_t)SAMPLED_ALLOCS / 4 * (3 * SAMPLED_SIZE + SAMPLED_SIZE / 2 + SAMPLED_SIZE);
	for (int t = 0; t < SAMPLED_THREADS; t++) {
		uint64_t n = 0, weight = 0, frees = 0, no_stack = 0;
		for (size_t i = 0; i < g_nev; i++) {
			const tev *e = &g_ev[i];
			if (e->tid != tids[t])
				continue;
			if (strcmp(e->type, "rec.Alloc") == 0) {
				assert_int_equal(fu(e, "sampled"), 1);
				uint64_t sz = fu(e, "size");
				assert_true(sz == SAMPLED_SIZE || sz == SAMPLED_SIZE / 2);
				assert_true(fu(e, "weight") >= sz);
				/* Both threads sample the same call sites: the core's
				 * lock-free stack table may give up on an insert racing
				 * with a preempted one (no stack id); rare. */
				if (e->has_stack)
					assert_true(stack_has(e, "al_sampled_worker"));
				else
					no_stack++;
				weight += fu(e, "weight");
				n++;
			} else if (strcmp(e->type, "rec.Free") == 0) {
				assert_int_equal(fu(e, "sampled"), 1);
				uint64_t sz = fu(e, "size");
				assert_true(sz == SAMPLED_SIZE || sz == SAMPLED_SIZE / 2);
				frees++;
			}
		}
		/* ~per_thread / 64 KiB samples (~343); weights sum to the bytes
		 * allocated up to the last sample. */
		print_message("thread %d: %" PRIu64 " samples, weight %" PRIu64 " of %" PRIu64 " bytes, %" PRIu64 " frees\n",
			      t, n, weight, per_thread, frees);
		assert_true(n >= per_thread / 65536 / 2 && n <= per_thread / 65536 * 2);
		assert_true(weight <= per_thread);
		assert_true(weight >= per_thread - 2 * 1024 * 1024);
		/* Every sampled block was freed through rec_free/rec_realloc. */
		assert_int_equal(frees, n);
		assert_true(no_stack <= n / 50);
	}
}

/* Sampling off: the wrappers record nothing. */
static void t_sampling_off(void **state)
{
	(void)state;
	rec_alloc_set_sample_interval(0);
	rec_start(NULL);
	uint64_t tid;
	al_sampled_worker(&tid);
	rec_stop_and_load();
	rec_alloc_set_sample_interval(512 * 1024);
	assert_int_equal(count_type("rec.Alloc"), 0);
	assert_int_equal(count_type("rec.Free"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_reported_exact),
		cmocka_unit_test(t_sampled),
		cmocka_unit_test(t_sampling_off),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
