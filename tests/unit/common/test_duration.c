/* SPDX-License-Identifier: MIT */
/*
 * test_duration.c - rec_parse_duration() (libfmt/common/duration.c), the one
 * duration grammar: the accepted forms and their values, what is refused,
 * and that the recorder's REC_OPTIONS keys (flush=, maxage=, an events
 * entry's threshold=) read it: threshold=1min keeps a 60 s span and drops
 * one of 59.999999999 s, like threshold=60 and threshold=60s.
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

static int64_t dur(const char *s)
{
	int64_t ns = -12345;
	if (rec_parse_duration(s, strlen(s), &ns) != REC_OK) {
		assert_int_equal(ns, -12345); /* unchanged on error */
		return -1;
	}
	return ns;
}

static void t_grammar(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int64_t ns;
	} ok[] = {
		{ "0", 0 },
		{ "0s", 0 },
		{ "5", 5000000000 }, /* a bare number is seconds */
		{ "1.5", 1500000000 },
		{ ".5", 500000000 },
		{ "5.", 5000000000 },
		{ "1.5s", 1500000000 },
		{ "10ms", 10000000 },
		{ "500us", 500000 },
		{ "100ns", 100 },
		{ "1m", 60000000000 },
		{ "1min", 60000000000 },
		{ "1.5min", 90000000000 },
		{ "1h", 3600000000000 },
		{ "0.000002h", 7200000 },
		{ "0.5ns", 1 },            /* rounded to nearest */
		{ "0.4ns", 0 },
		{ "0.0000000005", 1 },
		{ "1.0000000000009s", 1000000000 }, /* the 13th fraction digit is ignored */
		{ "0.333333333333h", 1199999999999 },
		{ "007ms", 7000000 },
		{ "9223372036854775807ns", INT64_MAX },
		{ "9223372036s", 9223372036000000000 },
		{ "2562047h", 2562047ll * 3600000000000ll },
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		int64_t got = dur(ok[i].s);
		if (got != ok[i].ns)
			fail_msg("'%s': %lld, want %lld", ok[i].s, (long long)got, (long long)ok[i].ns);
	}
	static const char *const bad[] = {
		"", "s", ".", ".s", "1d", "1H", "1hr", "1 s", " 1s", "1s ", "-1s", "+1s", "1e3s",
		"1.5.s", "1,5s", "0x10", "inf", "nan", "1mins", "1sec", "ms", "1ms1",
		"9223372036854775808ns", "9223372037s", "2562048h", "99999999999999999999999ns",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (dur(bad[i]) != -1)
			fail_msg("'%s' accepted as %lld", bad[i], (long long)dur(bad[i]));
	/* s is len bytes: no NUL needed, nothing after len read */
	int64_t ns = 0;
	assert_int_equal(rec_parse_duration("10ms,flush=1s", 4, &ns), REC_OK);
	assert_int_equal(ns, 10000000);
	assert_int_equal(rec_parse_duration("10ms", 3, &ns), REC_OK); /* "10m" */
	assert_int_equal(ns, 600000000000);
	assert_int_equal(rec_parse_duration("10ms", 0, &ns), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_parse_duration(NULL, 0, &ns), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_parse_duration("1s", 2, NULL), REC_ERR_INVALID_ARG);
}

/* REC_OPTIONS keys that take a duration read the same grammar. */
static void t_options(void **state)
{
	(void)state;
	char storage[256];
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	assert_int_equal(rec_recorder_options_parse(&o, "flush=2,maxage=1min", storage,
						    sizeof storage, NULL, 0),
			 REC_OK);
	assert_int_equal(o.flush_interval_ms, 2000);
	assert_int_equal(o.max_age_ms, 60000);
	assert_int_equal(rec_recorder_options_parse(&o, "flush=1.5s,maxage=0.5h", storage,
						    sizeof storage, NULL, 0),
			 REC_OK);
	assert_int_equal(o.flush_interval_ms, 1500);
	assert_int_equal(o.max_age_ms, 1800000);
	assert_int_equal(rec_recorder_options_parse(&o, "flush=1d", storage, sizeof storage, NULL,
						    0),
			 REC_ERR_INVALID_ARG);
}

static const rec_field span_fields[] = { { "i", "I", "", REC_TYPE_U32, REC_UNIT_NONE } };
static const rec_type span_def = { 0, REC_EVENT_HAS_DURATION, "test.Span", "Span", "", "test", 1,
				   span_fields };

static uint64_t g_now;
static uint64_t test_clock(void *opaque)
{
	(void)opaque;
	return g_now;
}

/* Spans of 59.999999999 s and 60 s under events=test.Span:threshold=TH:
 * which were recorded (bit 0: the shorter, bit 1: the 60 s one). */
static unsigned kept_with(const char *th)
{
	char path[300], text[128], storage[256];
	snprintf(path, sizeof path, "%s/span.rec", g_dir);
	snprintf(text, sizeof text, "events=test.Span:threshold=%s", th);
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	assert_int_equal(rec_recorder_options_parse(&o, text, storage, sizeof storage, NULL, 0),
			 REC_OK);
	o.path = path;
	o.flags |= REC_RECORDER_NO_CRASH;
	o.clock = test_clock;
	o.clock_frequency = 1000000000;
	rec_recorder *r = NULL;
	rec_status st = rec_recorder_open(&r, &o);
	if (st != REC_OK)
		fail_msg("threshold=%s: open: %s", th, rec_strerror(st));
	rec_event_type *t = NULL;
	assert_int_equal(rec_recorder_register_type(r, &span_def, 0, 0, &t), REC_OK);
	static const uint64_t d[2] = { 59999999999ull, 60000000000ull };
	for (uint32_t i = 0; i < 2; i++) {
		uint64_t start = 1000 + i * 100000000000ull;
		g_now = start + d[i];
		rec_emit e = { 0 };
		if (rec_emit_begin_at(&e, t, start, start + d[i])) {
			rec_emit_u64(&e, i);
			rec_emit_commit(&e);
		}
	}
	assert_int_equal(rec_recorder_close(r), REC_OK);
	rec_reader *rd = NULL;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	rec_event ev;
	unsigned kept = 0;
	while ((st = rec_reader_next_event(rd, &ev)) == REC_OK)
		if (strcmp(ev.type->name, "test.Span") == 0)
			kept |= 1u << ev.values[0].v.u;
	assert_int_equal(st, REC_END);
	rec_reader_close(rd);
	return kept;
}

static void t_threshold(void **state)
{
	(void)state;
	assert_int_equal(kept_with("0"), 3);
	assert_int_equal(kept_with("59.999999999"), 3);
	static const char *const minute[] = { "1min", "1m", "60", "60s", "60000ms", "60000000us",
					      "60000000000ns" };
	for (size_t i = 0; i < sizeof minute / sizeof minute[0]; i++)
		if (kept_with(minute[i]) != 2)
			fail_msg("threshold=%s: kept %u, want 2 (the 60 s span)", minute[i],
				 kept_with(minute[i]));
	assert_int_equal(kept_with("60.000000001"), 0);
}

int main(void)
{
	if (rec_t_tmpdir_create(g_dir, sizeof g_dir, "rec-duration") != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_grammar),
		cmocka_unit_test(t_options),
		cmocka_unit_test(t_threshold),
	};
	return rec_t_tmpdir_finish(g_dir, cmocka_run_group_tests(tests, NULL, NULL));
}
