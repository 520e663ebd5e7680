/* SPDX-License-Identifier: MIT */
/*
 * roundtrip.h - test support shared by tests/unit/record/test_recorder.c,
 * test_bg.c and test_env.c: a recorder opened on a path, the test.Ev type
 * and the threads that emit it, and the file read back with the real reader
 * into flat records (type, ticks, thread, the first four values, the leaf
 * function) with its chunk counts.
 *
 * Header-only on purpose, like rec_t_readback.h: the helpers assert with cmocka,
 * and every object in tests/lib (*.c) is also linked into the tests/helpers
 * programs, which are not linked with -lcmocka.  Include it from one .c file
 * per binary, after <stdarg.h> <stddef.h> <stdint.h> <setjmp.h> <cmocka.h>.
 */
#ifndef REC_TESTS_LIB_ROUNDTRIP_H
#define REC_TESTS_LIB_ROUNDTRIP_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/rec.h"
#include "rec/recorder.h"

/* test.Ev: a string, a u64 and an i32, with the thread. */
static const rec_field rec_t_ev_fields[] __attribute__((unused)) = {
	{ "name", "Name", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "seq", "Sequence", "", REC_TYPE_U64, REC_UNIT_COUNT },
	{ "delta", "Delta", "", REC_TYPE_I32, REC_UNIT_NONE },
};
static const rec_type rec_t_ev_def __attribute__((unused)) = {
	0, REC_EVENT_HAS_THREAD, "test.Ev", "Ev", "a test event", "test", 3, rec_t_ev_fields
};

/* ---- reading back ---------------------------------------------------------- */
typedef struct rec_t_evrec {
	char type[32];
	uint64_t ticks, duration;
	uint64_t thread_id, os_tid;
	char thread_name[32];
	uint64_t u[4];
	int64_t i[4];
	char s[4][64];
	char leaf_fn[64];
	uint32_t stack_depth;
} rec_t_evrec;

typedef struct rec_t_readback {
	rec_t_evrec *ev;
	size_t n, cap;
	uint64_t chunks, final_chunks, dropped_stat, dropped_events, frequency;
	rec_status end;
} rec_t_readback;

static __attribute__((unused)) void rec_t_rb_free(rec_t_readback *rb)
{
	free(rb->ev);
	memset(rb, 0, sizeof *rb);
}

static __attribute__((unused)) void rec_t_rb_read(const char *path, rec_t_readback *rb)
{
	rec_reader *rd;
	memset(rb, 0, sizeof *rb);
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	const rec_chunk_info *ci;
	while (rec_reader_next_chunk(rd, &ci) == REC_OK) {
		rb->chunks++;
		if (ci->flags & REC_CHUNK_FINAL)
			rb->final_chunks++;
		rb->dropped_stat += ci->dropped_events;
		rb->frequency = ci->tick_frequency;
		assert_int_equal(rec_reader_verify_chunk(rd), REC_OK);
	}
	rec_reader_close(rd);

	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	rec_event e;
	rec_status st;
	while ((st = rec_reader_next_event(rd, &e)) == REC_OK) {
		if (rb->n == rb->cap) {
			rb->cap = rb->cap ? rb->cap * 2 : 1024;
			rb->ev = realloc(rb->ev, rb->cap * sizeof *rb->ev);
			assert_non_null(rb->ev);
		}
		rec_t_evrec *r = &rb->ev[rb->n++];
		memset(r, 0, sizeof *r);
		snprintf(r->type, sizeof r->type, "%s", e.type->name);
		r->ticks = e.ticks;
		r->duration = e.duration_ticks;
		if (e.thread) {
			r->thread_id = e.thread->id;
			r->os_tid = e.thread->os_tid;
			snprintf(r->thread_name, sizeof r->thread_name, "%s", e.thread->name);
		}
		if (e.stack) {
			r->stack_depth = e.stack->depth;
			if (e.stack->depth && e.stack->frames[0]->function)
				snprintf(r->leaf_fn, sizeof r->leaf_fn, "%s", e.stack->frames[0]->function);
		}
		for (uint32_t k = 0; k < e.value_count && k < 4; k++) {
			const rec_value *v = &e.values[k];
			switch (REC_WIRE_OF(v->type)) {
			case REC_WIRE_SVARINT: r->i[k] = v->v.i; break;
			default:
				if (v->type == REC_TYPE_STRING) {
					if (v->v.s.ptr)
						snprintf(r->s[k], sizeof r->s[k], "%.*s", (int)v->v.s.len,
							 v->v.s.ptr);
				} else if (v->type == REC_TYPE_THREAD) {
					r->u[k] = v->v.thread ? v->v.thread->id : 0;
				} else {
					r->u[k] = v->v.u;
				}
			}
		}
		if (strcmp(r->type, "rec.Dropped") == 0)
			rb->dropped_events += r->u[0];
	}
	rb->end = st;
	rec_reader_close(rd);
}

static __attribute__((unused)) size_t rec_t_rb_count(const rec_t_readback *rb, const char *type)
{
	size_t n = 0;
	for (size_t i = 0; i < rb->n; i++)
		n += strcmp(rb->ev[i].type, type) == 0;
	return n;
}

static __attribute__((unused)) rec_recorder *rec_t_open_rec(const char *path, rec_recorder_options *o)
{
	rec_recorder *r = NULL;
	o->path = path;
	assert_int_equal(rec_recorder_open(&r, o), REC_OK);
	return r;
}

/* ---- emitting test.Ev -------------------------------------------------------- */
typedef struct rec_t_targ {
	rec_event_type *t;
	rec_str s;
	uint32_t id, n;
} rec_t_targ;

/* One test.Ev (string, u64, i64), if the type is on. */
static __attribute__((unused)) void rec_t_emit_ev(rec_event_type *t, rec_str s, uint64_t u, int64_t i)
{
	rec_emit e = { 0 };
	if (rec_emit_begin(&e, t)) {
		rec_emit_string(&e, s);
		rec_emit_u64(&e, u);
		rec_emit_i64(&e, i);
		rec_emit_commit(&e);
	}
}

static __attribute__((unused)) void *rec_t_emit_n(void *a)
{
	rec_t_targ *ta = a;
	char name[16];
	snprintf(name, sizeof name, "w%u", ta->id);
	pthread_setname_np(pthread_self(), name);
	for (uint32_t i = 0; i < ta->n; i++)
		rec_t_emit_ev(ta->t, ta->s, i, (int64_t)ta->id);
	return NULL;
}

#endif /* REC_TESTS_LIB_ROUNDTRIP_H */
