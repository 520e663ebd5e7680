/* SPDX-License-Identifier: MIT */
/*
 * test_types.c - types.c: event types and the events list (the settings
 * grammar), with real recorders.  Moved from test_recorder.c: t_settings
 * (patterns, prefix, negation, a threshold overridden, a bad list refused).
 * New: every part of the grammar (enabled=, stack=, threshold=, throttle=,
 * spaces, the last matching entry winning) read back from the handles,
 * each malformed entry refused; type registration refuses a taken id or
 * name, the recorder's reserved ids and invalid definitions, and chooses
 * distinct ids from 256 up.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec/rec.h"
#include "rec/recorder.h"
#include "../../lib/tmpdir.h"

static char g_dir[256];

static void tmp_path(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", g_dir, name);
}

static rec_recorder *open_rec(const char *path, rec_recorder_options *o)
{
	rec_recorder *r = NULL;
	o->path = path;
	assert_int_equal(rec_recorder_open(&r, o), REC_OK);
	return r;
}

/* Events of type name in the file at path (its end checked). */
static size_t count_in_file(const char *path, const char *name)
{
	rec_reader *rd;
	rec_event e;
	rec_status st;
	size_t n = 0;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	while ((st = rec_reader_next_event(rd, &e)) == REC_OK)
		n += strcmp(e.type->name, name) == 0;
	rec_reader_close(rd);
	assert_int_equal(st, REC_END);
	return n;
}

static const rec_field ev_fields[] = {
	{ "name", "Name", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "seq", "Sequence", "", REC_TYPE_U64, REC_UNIT_COUNT },
	{ "delta", "Delta", "", REC_TYPE_I32, REC_UNIT_NONE },
};
static const rec_type ev_def = { 0, REC_EVENT_HAS_THREAD, "test.Ev", "Ev", "a test event", "test",
				 3, ev_fields };

static const rec_field span_fields[] = {
	{ "what", "What", "", REC_TYPE_STRING, REC_UNIT_NONE },
};
static const rec_type span_def = { 0, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD, "test.Span",
				   "Span", "", "test", 1, span_fields };

/* ---- events settings list (moved from test_recorder.c) ------------------------------------------------------------- */
static void t_settings(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "set.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.events = "test.Span:threshold=0,test.E*,-test.Ev";
	rec_recorder *r = open_rec(path, &o);
	static const rec_type other_def = { 0, 0, "test.Eother", "", "", "test", 0, NULL };
	static const rec_type off_def = { 0, 0, "zzz.Off", "", "", "test", 0, NULL };
	rec_event_type *ev, *sp, *other, *off;
	assert_int_equal(rec_recorder_register_type(r, &ev_def, 0, 0, &ev), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &span_def, 1000000000u, 0, &sp), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &other_def, 0, 0, &other), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &off_def, 0, 0, &off), REC_OK);
	assert_false(rec_type_enabled(ev));  /* -test.Ev wins (last) */
	assert_true(rec_type_enabled(sp));
	assert_true(rec_type_enabled(other)); /* test.E* */
	assert_false(rec_type_enabled(off)); /* not listed */
	rec_emit e = { 0 };
	rec_span s;
	rec_span_begin(&s, sp); /* 1 s declared threshold overridden to 0 */
	assert_true(rec_span_end(&s, &e));
	rec_emit_string(&e, (rec_str){ 0 });
	rec_emit_commit(&e);
	assert_int_equal(rec_recorder_close(r), REC_OK);
	assert_int_equal(count_in_file(path, "test.Span"), 1);

	/* a bad list is refused */
	o.events = "test.Span:threshold=abc";
	rec_recorder *r2 = NULL;
	assert_int_equal(rec_recorder_open(&r2, &o), REC_ERR_INVALID_ARG);
	/* reserved fields must be zero */
	o.events = NULL;
	o.reserved[1] = 1;
	assert_int_equal(rec_recorder_open(&r2, &o), REC_ERR_INVALID_ARG);
}

/* ---- the grammar, read back from the handles ---------------------------------------- */
static uint64_t g_ticks;
static uint64_t fixed_clock(void *opaque)
{
	(void)opaque;
	return g_ticks;
}

/* A recorder on a clock of 1e9 ticks per second (a threshold in ns is
 * its ticks) with events list events. */
static rec_recorder *open_list(const char *events, rec_status want)
{
	char path[300];
	tmp_path(path, sizeof path, "grammar.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	o.clock = fixed_clock;
	o.clock_frequency = 1000000000u;
	o.events = events;
	rec_recorder *r = NULL;
	assert_int_equal(rec_recorder_open(&r, &o), want);
	return r;
}

static const rec_type stk_def = { 0, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "app.Stack", "", "",
				  "app", 0, NULL };
static const rec_type a_def = { 0, REC_EVENT_HAS_DURATION, "app.A", "", "", "app", 0, NULL };
static const rec_type ab_def = { 0, REC_EVENT_HAS_DURATION, "app.AB", "", "", "app", 0, NULL };
static const rec_type b_def = { 0, 0, "other.B", "", "", "other", 0, NULL };

static void t_events_grammar(void **state)
{
	(void)state;
	rec_event_type *stk, *a, *ab, *b;
	/* per-entry options; spaces after commas; the last match wins */
	rec_recorder *r = open_list("app.*:threshold=2ms:stack=off, app.A:threshold=5us,"
				    "app.Stack:stack=on:throttle=100/s,  other.B:enabled=off",
				    REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &stk_def, 0, 0, &stk), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &a_def, 7, 0, &a), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &ab_def, 7, 0, &ab), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &b_def, 0, 0, &b), REC_OK);
	assert_true(rec_type_enabled(stk));
	assert_int_equal(stk->stack, 1);
	assert_true(stk->flags & REC_EVENT_THROTTLED_);
	assert_int_equal(stk->threshold_ticks, 2000000);
	assert_true(rec_type_enabled(a));
	assert_int_equal(a->threshold_ticks, 5000); /* app.A after app.* */
	assert_false(a->flags & REC_EVENT_THROTTLED_);
	assert_true(rec_type_enabled(ab));
	assert_int_equal(ab->threshold_ticks, 2000000); /* app.* only: "app.A" is not a prefix */
	assert_false(rec_type_enabled(b));
	assert_int_equal(rec_recorder_close(r), REC_OK);

	/* declared with a stack and a threshold: kept unless the list says */
	r = open_list("app.Stack:enabled=on,-app.AB", REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &stk_def, 0, REC_DECLARE_STACK, &stk), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &a_def, 3000, 0, &a), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &ab_def, 0, 0, &ab), REC_OK);
	assert_true(rec_type_enabled(stk));
	assert_int_equal(stk->stack, 1);
	assert_false(rec_type_enabled(a)); /* an enable list that does not name it */
	assert_false(rec_type_enabled(ab));
	assert_int_equal(rec_recorder_close(r), REC_OK);

	/* only negations and throttles: everything else stays on */
	r = open_list("-other.*,app.A:throttle=5/s", REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &a_def, 3000, 0, &a), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &ab_def, 0, 0, &ab), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &b_def, 0, 0, &b), REC_OK);
	assert_true(rec_type_enabled(a));
	assert_true(a->flags & REC_EVENT_THROTTLED_);
	assert_int_equal(a->threshold_ticks, 3000);
	assert_true(rec_type_enabled(ab));
	assert_false(rec_type_enabled(b));
	assert_int_equal(rec_recorder_close(r), REC_OK);

	/* malformed entries */
	static const char *const bad[] = {
		"app.A:threshold=abc", "app.A:stack=maybe", "app.A:enabled=2", "app.A:throttle=5",
		"app.A:throttle=/s",   "app.A:throttle=5/fortnight", "app.A:colour=red", "app.A:",
		"app.A:stack",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		print_message("refused: '%s'\n", bad[i]);
		assert_null(open_list(bad[i], REC_ERR_INVALID_ARG));
	}
}

/* ---- registration ---------------------------------------------------------------------- */
static void t_register(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "register.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	rec_recorder *r = open_rec(path, &o);
	rec_event_type *t[4], *x;
	static const rec_type d1 = { 0, 0, "reg.One", "", "", "", 0, NULL };
	static const rec_type d2 = { 0, 0, "reg.Two", "", "", "", 0, NULL };
	static const rec_type d300 = { 300, 0, "reg.Fixed", "", "", "", 0, NULL };
	static const rec_type d300b = { 300, 0, "reg.FixedAgain", "", "", "", 0, NULL };
	static const rec_type dropped = { REC_TYPE_ID_DROPPED, 0, "reg.Dropped", "", "", "", 0, NULL };
	static const rec_type process = { REC_TYPE_ID_PROCESS, 0, "reg.Process", "", "", "", 0, NULL };
	static const rec_type same_name = { 0, 0, "reg.One", "", "", "", 0, NULL };
	static const rec_type badflags = { 0, 0x100, "reg.Flags", "", "", "", 0, NULL };
	static const rec_type noname = { 0, 0, "", "", "", "", 0, NULL };
	static const rec_field badwire[] = { { "f", "", "", 7u, 0 } };
	static const rec_type badfield = { 0, 0, "reg.Wire", "", "", "", 1, badwire };
	static rec_field many[REC_MAX_FIELDS + 1];
	for (size_t i = 0; i < sizeof many / sizeof many[0]; i++)
		many[i] = (rec_field){ "f", "", "", REC_TYPE_U64, 0 };
	const rec_type toomany = { 0, 0, "reg.Many", "", "", "", REC_MAX_FIELDS + 1, many };

	assert_int_equal(rec_recorder_register_type(r, &d1, 0, 0, &t[0]), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &d2, 0, 0, &t[1]), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &d300, 0, 0, &t[2]), REC_OK);
	assert_true(rec_event_type_id(t[0]) >= REC_TYPE_ID_USER_MIN);
	assert_true(rec_event_type_id(t[1]) >= REC_TYPE_ID_USER_MIN);
	assert_true(rec_event_type_id(t[0]) != rec_event_type_id(t[1]));
	assert_int_equal(rec_event_type_id(t[2]), 300);
	assert_int_equal(rec_recorder_register_type(r, &d300b, 0, 0, &x), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_recorder_register_type(r, &same_name, 0, 0, &x), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_recorder_register_type(r, &dropped, 0, 0, &x), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_recorder_register_type(r, &process, 0, 0, &x), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_recorder_register_type(r, &badflags, 0, 0, &x), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_recorder_register_type(r, &noname, 0, 0, &x), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_recorder_register_type(r, &badfield, 0, 0, &x), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_recorder_register_type(r, &toomany, 0, 0, &x), REC_ERR_INVALID_ARG);
	/* the ones taken write, and come back under their ids */
	for (int i = 0; i < 3; i++) {
		rec_emit e = { 0 };
		assert_true(rec_emit_begin(&e, t[i]));
		rec_emit_commit(&e);
	}
	const uint32_t id0 = rec_event_type_id(t[0]), id1 = rec_event_type_id(t[1]);
	assert_int_equal(rec_recorder_close(r), REC_OK);
	rec_reader *rd;
	rec_event e;
	int seen = 0;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	while (rec_reader_next_event(rd, &e) == REC_OK) {
		if (strcmp(e.type->name, "reg.One") == 0 && e.type->id == id0)
			seen |= 1;
		if (strcmp(e.type->name, "reg.Two") == 0 && e.type->id == id1)
			seen |= 2;
		if (strcmp(e.type->name, "reg.Fixed") == 0 && e.type->id == 300)
			seen |= 4;
	}
	rec_reader_close(rd);
	assert_int_equal(seen, 7);
}

int main(void)
{
	if (rec_t_tmpdir_create(g_dir, sizeof g_dir, "rec-test-types") != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_settings),
		cmocka_unit_test(t_events_grammar),
		cmocka_unit_test(t_register),
	};
	return rec_t_tmpdir_finish(g_dir, cmocka_run_group_tests(tests, NULL, NULL));
}
