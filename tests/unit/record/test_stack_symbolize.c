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
 * for rec-symbolize, the same pcs still the same frames; a flight
 * recording dumped while busy has its frames' files and lines; a stack a
 * thread publishes while the background thread is between symbolizing and
 * defining a round's stacks is defined in the next round, its pcs mapped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec/rec.h"
#include "rec/recorder.h"
#include "record/recorder_internal.h"
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

/* A recorder into path (flags, a 20 ms flush) with test.Sym registered. */
static rec_recorder *open_sym(const char *path, uint32_t flags)
{
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	o.flags = flags;
	o.flush_interval_ms = 20;
	rec_recorder *r = NULL;
	assert_int_equal(rec_recorder_open(&r, &o), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &s_def, 0, REC_DECLARE_STACK, &g_t), REC_OK);
	return r;
}

static void record_and_read(uint32_t flags, sym_seen *s)
{
	char path[300];
	snprintf(path, sizeof path, "%s/sym-%u.rec", g_dir, flags);
	rec_recorder *r = open_sym(path, flags);
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

/* A flight recording dumped while the program is busy: every round of the
 * background thread is busy (more records than SOURCE_BUSY_RECORDS
 * drained), where it resolves the sources that need no first read of a
 * module's DWARF and at most one such read a second (it used to resolve
 * none until a quiet round or the close, so the chunks of a busy program,
 * and a dump of them, had no file or line: this test saw 0 of 1); and the
 * round of the dump resolves all.  A thread emits events without a stack as
 * fast as it can while another emits one with a stack from ss_path_a; the
 * dump is taken 300 ms later, still busy, and its frame has its line. */
static atomic_int g_busy_stop;
static rec_event_type *g_busy_t;

static void *busy(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&g_busy_stop, memory_order_relaxed)) {
		rec_emit e;
		if (rec_emit_begin(&e, g_busy_t)) {
			rec_emit_u64(&e, 7);
			rec_emit_commit(&e);
		}
	}
	return NULL;
}

static void *one_stack(void *arg)
{
	(void)arg;
	ss_path_a();
	return NULL;
}

static void t_dump_has_sources(void **state)
{
	(void)state;
	char path[300], dump[300];
	snprintf(path, sizeof path, "%s/flight.rec", g_dir);
	snprintf(dump, sizeof dump, "%s/flight-dump.rec", g_dir);
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	o.flags = REC_RECORDER_FLIGHT | REC_RECORDER_NO_SIGNAL;
	o.flush_interval_ms = 1000;
	o.max_age_ms = 60000;
	rec_recorder *r = NULL;
	assert_int_equal(rec_recorder_open(&r, &o), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &s_def, 0, REC_DECLARE_STACK, &g_t), REC_OK);
	static const rec_type busy_def = { 0, REC_EVENT_HAS_THREAD, "test.Busy", "", "", "test", 1,
					   f_fields };
	assert_int_equal(rec_recorder_register_type(r, &busy_def, 0, 0, &g_busy_t), REC_OK);
	atomic_store(&g_busy_stop, 0);
	pthread_t b, w;
	assert_int_equal(pthread_create(&b, NULL, busy, NULL), 0);
	usleep(200 * 1000); /* busy rounds under way */
	assert_int_equal(pthread_create(&w, NULL, one_stack, NULL), 0);
	assert_int_equal(pthread_join(w, NULL), 0);
	usleep(300 * 1000); /* a few busy rounds: names, no sources */
	assert_int_equal(rec_recorder_dump(r, dump), REC_OK);
	atomic_store(&g_busy_stop, 1);
	assert_int_equal(pthread_join(b, NULL), 0);
	assert_int_equal(rec_recorder_close(r), REC_OK);

	rec_reader *rd;
	assert_int_equal(rec_reader_open_path(&rd, dump, NULL), REC_OK);
	rec_event ev;
	rec_status st;
	uint64_t busy_n = 0, sym_n = 0, lines = 0;
	while ((st = rec_reader_next_event(rd, &ev)) == REC_OK) {
		if (strcmp(ev.type->name, "test.Busy") == 0) {
			busy_n++;
			continue;
		}
		if (strcmp(ev.type->name, "test.Sym") != 0)
			continue;
		sym_n++;
		assert_non_null(ev.stack);
		const rec_frame *leaf = ev.stack->frames[rec_stack_site(ev.stack)];
		assert_string_equal(leaf->function, "ss_emit");
		lines += leaf->line > 0 && strstr(leaf->file, "test_stack_symbolize.c") != NULL;
	}
	assert_int_equal(st, REC_END);
	rec_reader_close(rd);
	print_message("dump: %llu busy events, %llu with a stack, %llu of them with a line\n",
		      (unsigned long long)busy_n, (unsigned long long)sym_n, (unsigned long long)lines);
	assert_true(busy_n > 8192); /* the rounds were busy */
	assert_int_equal(sym_n, 1);
	assert_int_equal(lines, 1);
}

/* A thread claims a stack id, then is preempted before it publishes the
 * stack (rec_stack_intern: the id is taken, ready is set later).  The
 * background thread's symbolizer looks at the id first, not ready, and
 * skips it; the thread publishes it before the same round defines its
 * stacks.  The round used to define it then with frame ids it never mapped
 * (0), and the writer refused the stack and every record after it: the
 * close returned "invalid argument" (seen once in test_sampler under ASan
 * in CI).  Now it waits for the next round, which maps its pcs. */
static rec_recorder *g_late_r;
static uint64_t g_late_id;
static int g_late_calls;

static void publish_late(rec_recorder *r)
{
	if (r != g_late_r || g_late_calls++ != 0)
		return;
	__atomic_store_n(&r->stacks.ents[g_late_id - 1].ready, 1u, __ATOMIC_RELEASE);
}

static void t_stack_published_late(void **state)
{
	(void)state;
	char path[300];
	snprintf(path, sizeof path, "%s/late.rec", g_dir);
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	o.flush_interval_ms = 60000; /* rounds only when flushed */
	rec_recorder *r = NULL;
	assert_int_equal(rec_recorder_open(&r, &o), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &s_def, 0, REC_DECLARE_STACK, &g_t), REC_OK);
	assert_int_equal(rec_recorder_flush(r), REC_OK);
	/* what rec_stack_intern does up to publishing, with pcs in this file */
	rec_stacktab *st = &r->stacks;
	const uintptr_t pcs[2] = { (uintptr_t)&ss_path_a + 1, (uintptr_t)&worker + 1 };
	uint64_t off = __atomic_fetch_add(&st->arena_used, 2, __ATOMIC_RELAXED);
	uint64_t id = __atomic_fetch_add(&st->next_id, 1, __ATOMIC_RELAXED) + 1;
	memcpy(&st->arena[off], pcs, sizeof pcs);
	st->ents[id - 1].off = off;
	st->ents[id - 1].depth = 2;
	g_late_r = r;
	g_late_id = id;
	g_late_calls = 0;
	rec_test_after_symbolize_ = publish_late;
	assert_int_equal(rec_recorder_flush(r), REC_OK); /* published mid-round */
	assert_int_equal(g_late_calls, 1);
	assert_int_equal(__atomic_load_n(&st->ents[id - 1].ready, __ATOMIC_ACQUIRE), 1);
	assert_int_equal(st->ents[id - 1].defined, 0); /* not in the round it was late for */
	assert_int_equal(rec_recorder_flush(r), REC_OK);
	rec_test_after_symbolize_ = NULL;
	assert_int_equal(st->ents[id - 1].mapped, 1);
	assert_int_equal(st->ents[id - 1].defined, 1);
	assert_true(rec_frame_map_get(r->frame_map, pcs[0]) != 0);
	assert_true(rec_frame_map_get(r->frame_map, pcs[1]) != 0);
	pthread_t w;
	assert_int_equal(pthread_create(&w, NULL, one_stack, NULL), 0);
	assert_int_equal(pthread_join(w, NULL), 0);
	assert_int_equal(rec_recorder_close(r), REC_OK);

	rec_reader *rd;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	rec_event ev;
	rec_status rs;
	uint64_t n = 0;
	while ((rs = rec_reader_next_event(rd, &ev)) == REC_OK)
		if (strcmp(ev.type->name, "test.Sym") == 0) {
			n++;
			assert_string_equal(ev.stack->frames[rec_stack_site(ev.stack)]->function,
					    "ss_emit");
		}
	assert_int_equal(rs, REC_END);
	rec_reader_close(rd);
	assert_int_equal(n, 1);
}

/* ---- the DWARF let go when no frame needs it ---------------------------------------- */
static NOINLINE void ss_path_c(void)
{
	ss_emit(3);
	__asm__ volatile("" ::: "memory");
}

static uint64_t wait_released(rec_recorder *r, uint64_t at_least)
{
	for (int i = 0; i < 500 && rec_bg_symbols_released_(r) < at_least; i++)
		usleep(10 * 1000);
	return rec_bg_symbols_released_(r);
}

/* With the symbolizer's DWARF kept 100 ms after the last source it
 * resolved (a minute outside tests): once the frames of ss_path_a have
 * their sources and nothing comes, the background thread lets the DWARF
 * go; a new call path afterwards (ss_path_c) is named and gets its file
 * and line again, read anew, and the DWARF is let go again after twice the
 * wait.  Every frame of the recording is named, the callers by their own
 * functions, the same pc one frame id throughout. */
static void t_dwarf_let_go(void **state)
{
	(void)state;
	char path[300];
	snprintf(path, sizeof path, "%s/letgo.rec", g_dir);
	rec_test_symbols_keep_ns_ = 100u * 1000 * 1000;
	rec_recorder *r = open_sym(path, 0);
	ss_path_a();
	assert_int_equal(wait_released(r, 1), 1);
	ss_path_c();
	ss_path_a();
	uint64_t twice = wait_released(r, 2);
	print_message("let go %llu times\n", (unsigned long long)twice);
	assert_int_equal(twice, 2);
	assert_int_equal(rec_recorder_close(r), REC_OK);
	rec_test_symbols_keep_ns_ = 0;

	rec_reader *rd;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	rec_event ev;
	rec_status st;
	uint64_t n = 0, lines = 0, a_id = 0;
	while ((st = rec_reader_next_event(rd, &ev)) == REC_OK) {
		if (strcmp(ev.type->name, "test.Sym") != 0)
			continue;
		n++;
		uint32_t site = rec_stack_site(ev.stack);
		const rec_frame *leaf = ev.stack->frames[site], *caller = ev.stack->frames[site + 1];
		const uint64_t p = ev.values[0].v.u;
		assert_string_equal(leaf->function, "ss_emit");
		assert_string_equal(caller->function, p == 1 ? "ss_path_a" : "ss_path_c");
		/* The first event's chunk may be written before its caller's
		 * source is resolved (FORMAT.md, FRAME_SOURCE: a CPU budget of
		 * 2 ms a round, and under valgrind the first read of this
		 * binary's DWARF takes longer): the source of ss_path_a comes
		 * with a later chunk, so only the two events after the
		 * let-go are held to a line. */
		if (n > 1)
			lines += caller->line > 0 &&
				 strstr(caller->file, "test_stack_symbolize.c") != NULL;
		if (p == 1) {
			assert_true(a_id == 0 || a_id == caller->id);
			a_id = caller->id;
		}
	}
	assert_int_equal(st, REC_END);
	rec_reader_close(rd);
	assert_int_equal(n, 3);
	assert_int_equal(lines, 2); /* ss_path_c's source read after the first let-go */
}

int main(void)
{
	if (rec_t_tmpdir_create(g_dir, sizeof g_dir, "rec-test-symbolize") != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_frames_once_per_pc),
		cmocka_unit_test(t_symbolize_off),
		cmocka_unit_test(t_dump_has_sources),
		cmocka_unit_test(t_stack_published_late),
		cmocka_unit_test(t_dwarf_let_go),
	};
	return rec_t_tmpdir_finish(g_dir, cmocka_run_group_tests(tests, NULL, NULL));
}
