/* SPDX-License-Identifier: MIT */
/*
 * test_stack_symbolize.c - stack_symbolize.c, the background thread's half
 * of stacks: the pcs of the stacks threads captured are resolved once per
 * distinct pc, each becoming one frame (the frame map) with its function,
 * module, offsets, source file and line.  Real threads emit events with
 * stacks from two call paths of this file over several chunks; read back
 * with the real reader: each event's call site and caller are the
 * functions that made the call, with this file and a line; one pc is one
 * frame id in every event and chunk, two pcs two ids; and with symbolize
 * off (REC_RECORDER_NO_SYMBOLIZE) frames keep module and offset, flagged
 * for rec-symbolize, the same pcs still the same frames.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec/rec.h"
#include "rec/recorder.h"
#include "../../lib/tmpdir.h"

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

static char g_dir[256];

static const rec_field f_fields[] = { { "path", "", "", REC_TYPE_U32, 0 } };
static const rec_type s_def = { 0, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "test.Sym", "", "",
				"test", 1, f_fields };

static rec_event_type *g_t;

static NOINLINE void ss_emit(uint32_t path)
{
	rec_emit e;
	if (rec_emit_begin(&e, g_t)) {
		rec_emit_u64(&e, path);
		rec_emit_commit(&e);
	}
	__asm__ volatile("" ::: "memory");
}

static NOINLINE void ss_path_a(void)
{
	ss_emit(1);
	__asm__ volatile("" ::: "memory");
}

static NOINLINE void ss_path_b(void)
{
	ss_emit(2);
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200; i++) {
		if (i % 2)
			ss_path_a();
		else
			ss_path_b();
	}
	return NULL;
}

typedef struct sym_seen {
	uint64_t events, emit_id, a_id, b_id, bad;
	uint64_t emit_ids, a_ids, b_ids; /* how many distinct (at most 1 each) */
	uint32_t lines;                  /* frames with a source line */
} sym_seen;

static void note_id(uint64_t *id, uint64_t *distinct, uint64_t v)
{
	if (*id != v) {
		(*distinct)++;
		*id = v;
	}
}

static void record_and_read(uint32_t flags, sym_seen *s)
{
	char path[300];
	snprintf(path, sizeof path, "%s/sym-%u.rec", g_dir, flags);
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	o.flags = flags;
	o.flush_interval_ms = 20;
	rec_recorder *r = NULL;
	assert_int_equal(rec_recorder_open(&r, &o), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &s_def, 0, REC_DECLARE_STACK, &g_t), REC_OK);
	for (int round = 0; round < 3; round++) {
		pthread_t th[4];
		for (int i = 0; i < 4; i++)
			assert_int_equal(pthread_create(&th[i], NULL, worker, NULL), 0);
		for (int i = 0; i < 4; i++)
			assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(rec_recorder_flush(r), REC_OK); /* new chunks */
	}
	assert_int_equal(rec_recorder_close(r), REC_OK);

	memset(s, 0, sizeof *s);
	rec_reader *rd;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	rec_event ev;
	rec_status st;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	assert_true(n > 0);
	self[n] = 0;
	while ((st = rec_reader_next_event(rd, &ev)) == REC_OK) {
		if (strcmp(ev.type->name, "test.Sym") != 0)
			continue;
		s->events++;
		assert_non_null(ev.stack);
		uint32_t site = rec_stack_site(ev.stack);
		assert_true(site + 2 < ev.stack->depth);
		const rec_frame *leaf = ev.stack->frames[site], *caller = ev.stack->frames[site + 1];
		assert_non_null(leaf->module);
		assert_string_equal(leaf->module->path, self);
		assert_string_equal(caller->module->path, self);
		const uint64_t p = ev.values[0].v.u;
		if (flags & REC_RECORDER_NO_SYMBOLIZE) {
			assert_string_equal(leaf->function, "");
			assert_true(leaf->flags & REC_FRAME_UNSYMBOLIZED);
			assert_true(rec_frame_unsymbolized(leaf) || leaf->module->build_id[0] == 0);
		} else {
			assert_string_equal(leaf->function, "ss_emit");
			assert_string_equal(caller->function, p == 1 ? "ss_path_a" : "ss_path_b");
			s->lines += leaf->line > 0 && strstr(leaf->file, "test_stack_symbolize.c") != NULL;
		}
		note_id(&s->emit_id, &s->emit_ids, leaf->id);
		if (p == 1)
			note_id(&s->a_id, &s->a_ids, caller->id);
		else
			note_id(&s->b_id, &s->b_ids, caller->id);
		/* the two pcs in ss_emit (its call of the emit, inlined or not)
		 * are the same for both paths; the callers' are not */
		if (caller->module_offset == leaf->module_offset)
			s->bad++;
	}
	assert_int_equal(st, REC_END);
	rec_reader_close(rd);
}

static void t_frames_once_per_pc(void **state)
{
	(void)state;
	sym_seen s;
	record_and_read(0, &s);
	print_message("%llu events; frame ids: ss_emit %llu, ss_path_a %llu, ss_path_b %llu; %u "
		      "with a source line\n",
		      (unsigned long long)s.events, (unsigned long long)s.emit_id,
		      (unsigned long long)s.a_id, (unsigned long long)s.b_id, s.lines);
	assert_int_equal(s.events, 3 * 4 * 200);
	assert_int_equal(s.emit_ids, 1); /* one pc, one frame, in every chunk */
	assert_int_equal(s.a_ids, 1);
	assert_int_equal(s.b_ids, 1);
	assert_true(s.a_id != s.b_id && s.a_id != s.emit_id);
	assert_int_equal(s.bad, 0);
	/* source lines are resolved in the background within a budget per
	 * round: most frames have theirs */
	assert_true(s.lines > 0);
}

static void t_symbolize_off(void **state)
{
	(void)state;
	sym_seen s;
	record_and_read(REC_RECORDER_NO_SYMBOLIZE, &s);
	assert_int_equal(s.events, 3 * 4 * 200);
	assert_int_equal(s.emit_ids, 1);
	assert_int_equal(s.a_ids, 1);
	assert_int_equal(s.b_ids, 1);
	assert_true(s.a_id != s.b_id);
	assert_int_equal(s.lines, 0);
}

int main(void)
{
	if (rec_t_tmpdir_create(g_dir, sizeof g_dir, "rec-test-symbolize") != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_frames_once_per_pc),
		cmocka_unit_test(t_symbolize_off),
	};
	return rec_t_tmpdir_finish(g_dir, cmocka_run_group_tests(tests, NULL, NULL));
}
