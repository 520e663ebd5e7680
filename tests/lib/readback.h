/* SPDX-License-Identifier: MIT */
/*
 * readback.h - test support shared by tests/unit/record/test_{alloc,sampler,lock_wrap,sleep}.c: open the
 * default recorder on a temporary file, close it and load every event of the
 * file back with the reader (rec_t_evs[0..rec_t_nev)), and helpers to look at
 * the loaded events (fields by name, counts by type, stacks, the test
 * program's build-id, the calling thread's OS tid).
 *
 * Header-only on purpose: the helpers assert with cmocka, and every
 * object in tests/lib (*.c) is also linked into the tests/helpers programs,
 * which are not linked with -lcmocka. Each including test gets its own
 * static copy (as before), so include it from one .c file per binary.
 * Include <stdarg.h> <stddef.h> <stdint.h> <setjmp.h> <cmocka.h> first.
 */
#ifndef REC_TESTS_LIB_READBACK_H
#define REC_TESTS_LIB_READBACK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rec/recorder.h"

typedef struct rec_t_ev {
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
} rec_t_ev;

static rec_t_ev *rec_t_evs;
static size_t rec_t_nev;
static rec_recorder *rec_t_rec;
static char rec_t_path[64];

static __attribute__((unused)) char *rec_t_xstrndup(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	assert_non_null(p);
	if (n)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static __attribute__((unused)) void rec_t_free_events(void)
{
	for (size_t i = 0; i < rec_t_nev; i++) {
		free(rec_t_evs[i].type);
		for (uint32_t k = 0; k < rec_t_evs[i].nf; k++) {
			free(rec_t_evs[i].f[k].name);
			free(rec_t_evs[i].f[k].s);
		}
		free(rec_t_evs[i].stack);
		free(rec_t_evs[i].user_module);
		free(rec_t_evs[i].user_build_id);
	}
	free(rec_t_evs);
	rec_t_evs = NULL;
	rec_t_nev = 0;
}

/* Open a default recorder writing to a fresh temporary file, writing a
 * chunk every flush_ms (0: the recorder's default, 1 s). */
static __attribute__((unused)) void rec_t_start_flush(const char *events, uint32_t flush_ms)
{
	strcpy(rec_t_path, "/tmp/rec-builtins-XXXXXX");
	int fd = mkstemp(rec_t_path);
	assert_true(fd >= 0);
	close(fd);
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.flags = REC_RECORDER_DEFAULT;
	o.path = rec_t_path;
	o.flush_interval_ms = flush_ms;
	o.events = events;
	assert_int_equal(rec_recorder_open(&rec_t_rec, &o), REC_OK);
	assert_ptr_equal(rec_recorder_default(), rec_t_rec);
}

/* The same with a chunk every 50 ms. */
static __attribute__((unused)) void rec_t_start(const char *events)
{
	rec_t_start_flush(events, 50);
}

/* Close the recorder and load every event of the file into rec_t_evs. */
static __attribute__((unused)) void rec_t_stop_and_load(void)
{
	rec_status closed = rec_recorder_close(rec_t_rec);
	rec_t_rec = NULL; /* closed, whatever it returned */
	assert_int_equal(closed, REC_OK);
	rec_t_free_events();
	rec_reader *r;
	assert_int_equal(rec_reader_open_path(&r, rec_t_path, NULL), REC_OK);
	size_t cap = 0;
	rec_event ev;
	rec_status st;
	while ((st = rec_reader_next_event(r, &ev)) == REC_OK) {
		if (rec_t_nev == cap) {
			cap = cap ? 2 * cap : 256;
			rec_t_evs = realloc(rec_t_evs, cap * sizeof(*rec_t_evs));
			assert_non_null(rec_t_evs);
		}
		rec_t_ev *t = &rec_t_evs[rec_t_nev++];
		memset(t, 0, sizeof(*t));
		t->type = rec_t_xstrndup(ev.type->name, strlen(ev.type->name));
		t->dur_ns = ev.duration_ns;
		t->wall_ns = ev.wall_ns;
		t->tid = ev.thread ? ev.thread->os_tid : 0;
		for (uint32_t k = 0; k < ev.value_count && k < 8; k++) {
			const rec_value *v = &ev.values[k];
			t->f[k].name = rec_t_xstrndup(ev.type->fields[k].name, strlen(ev.type->fields[k].name));
			if (v->type == REC_TYPE_STRING || v->type == REC_TYPE_TEXT) {
				if (v->v.s.ptr != NULL)
					t->f[k].s = rec_t_xstrndup(v->v.s.ptr, v->v.s.len);
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
		t->user_module = rec_t_xstrndup("", 0);
		t->user_build_id = rec_t_xstrndup("", 0);
		for (uint32_t k = 0; ev.stack != NULL && k < ev.stack->depth; k++) {
			const rec_frame *fr = ev.stack->frames[k];
			if (strncmp(fr->function, "rec_", 4) == 0)
				continue;
			if (fr->module != NULL) {
				free(t->user_module);
				free(t->user_build_id);
				t->user_module = rec_t_xstrndup(fr->module->path, strlen(fr->module->path));
				t->user_build_id = rec_t_xstrndup(fr->module->build_id, strlen(fr->module->build_id));
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
	unlink(rec_t_path);
}

static __attribute__((unused)) const char *rec_t_fs(const rec_t_ev *e, const char *name)
{
	for (uint32_t k = 0; k < e->nf; k++)
		if (strcmp(e->f[k].name, name) == 0)
			return e->f[k].s ? e->f[k].s : "";
	fail_msg("event %s has no field %s", e->type, name);
	return NULL;
}

static __attribute__((unused)) uint64_t rec_t_fu(const rec_t_ev *e, const char *name)
{
	for (uint32_t k = 0; k < e->nf; k++)
		if (strcmp(e->f[k].name, name) == 0)
			return e->f[k].u;
	fail_msg("event %s has no field %s", e->type, name);
	return 0;
}

static __attribute__((unused)) size_t rec_t_count_type(const char *type)
{
	size_t n = 0;
	for (size_t i = 0; i < rec_t_nev; i++)
		n += strcmp(rec_t_evs[i].type, type) == 0;
	return n;
}

/* Does the ';'-joined stack contain function fn as a whole frame? */
static __attribute__((unused)) int rec_t_stack_has(const rec_t_ev *e, const char *fn)
{
	size_t fl = strlen(fn);
	for (const char *p = e->stack; (p = strstr(p, fn)) != NULL; p += fl)
		if ((p == e->stack || p[-1] == ';') && (p[fl] == '\0' || p[fl] == ';' || p[fl] == '.'))
			return 1;
	return 0;
}

/* The first frame (the leaf): the program's call site, since the recorder
 * drops librec's own frames when it captures a stack. */
static __attribute__((unused)) const char *rec_t_first_frame(const rec_t_ev *e, char *buf, size_t cap)
{
	size_t n = strcspn(e->stack, ";");
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, e->stack, n);
	buf[n] = '\0';
	return buf;
}

/* The build-id of this test program, from `readelf -n`. */
static __attribute__((unused)) void rec_t_self_build_id(char *out, size_t cap)
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

static __attribute__((unused)) uint64_t rec_t_my_tid(void) { return (uint64_t)syscall(SYS_gettid); }

#endif /* REC_TESTS_LIB_READBACK_H */
