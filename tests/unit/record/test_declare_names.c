/* SPDX-License-Identifier: MIT */
/*
 * test_declare_names.c - one translation unit with both public headers: the
 * field type REC_TYPE_STACK (rec.h) keeps its value after <rec/recorder.h>,
 * whose registration flags are REC_DECLARE_OFF and REC_DECLARE_STACK.  Until
 * they were renamed, recorder.h's "#define REC_TYPE_STACK 0x2u" replaced the
 * field type, and a type with a stack field was rejected at registration.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "rec/rec.h"
#include "rec/recorder.h"
#include "../../lib/tmpdir.h"

static char g_dir[256];

/* A stack field beside the event's own stack. */
static const rec_field where_fields[] = {
	{ "where", "Where", "", REC_TYPE_STACK, REC_UNIT_NONE },
	{ "n", "N", "", REC_TYPE_U32, REC_UNIT_NONE },
};
static const rec_type where_def = { 0, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "test.Where",
				    "Where", "", "test", 2, where_fields };
static const rec_type off_def = { 0, REC_EVENT_HAS_THREAD, "test.Off", "Off", "", "test", 1,
				  where_fields + 1 };

static void t_stack_field(void **state)
{
	(void)state;
	assert_int_equal(REC_TYPE_STACK, 0x80);
	assert_int_equal(REC_DECLARE_OFF, 0x1u);
	assert_int_equal(REC_DECLARE_STACK, 0x2u);
	char path[300];
	snprintf(path, sizeof path, "%s/where.rec", g_dir);
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	rec_recorder *r = NULL;
	assert_int_equal(rec_recorder_open(&r, &o), REC_OK);
	rec_event_type *t = NULL, *toff = NULL;
	assert_int_equal(rec_recorder_register_type(r, &where_def, 0, REC_DECLARE_STACK, &t),
			 REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &off_def, 0, REC_DECLARE_OFF, &toff),
			 REC_OK);
	for (uint32_t i = 0; i < 3; i++) {
		rec_emit e = { 0 };
		assert_true(rec_emit_begin(&e, t));
		rec_emit_stack_ref(&e, 0);
		rec_emit_u64(&e, i);
		rec_emit_commit(&e);
		assert_false(rec_emit_begin(&e, toff));
	}
	assert_int_equal(rec_recorder_close(r), REC_OK);

	rec_reader *rd = NULL;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	rec_event ev;
	rec_status st;
	unsigned seen = 0;
	while ((st = rec_reader_next_event(rd, &ev)) == REC_OK) {
		assert_string_not_equal(ev.type->name, "test.Off");
		if (strcmp(ev.type->name, "test.Where") != 0)
			continue;
		assert_int_equal(ev.value_count, 2);
		assert_int_equal(ev.type->fields[0].type, REC_TYPE_STACK);
		assert_int_equal(ev.values[0].type, REC_TYPE_STACK);
		assert_null(ev.values[0].v.stack);
		assert_non_null(ev.stack); /* REC_DECLARE_STACK: the event's own stack */
		assert_int_equal(ev.values[1].v.u, seen);
		seen++;
	}
	assert_int_equal(st, REC_END);
	assert_int_equal(seen, 3);
	rec_reader_close(rd);
}

int main(void)
{
	if (rec_t_tmpdir_create(g_dir, sizeof g_dir, "rec-declare") != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_stack_field),
	};
	return rec_t_tmpdir_finish(g_dir, cmocka_run_group_tests(tests, NULL, NULL));
}
