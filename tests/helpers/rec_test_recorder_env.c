/* SPDX-License-Identifier: MIT */
/*
 * rec_test_recorder_env.c - exec'd by test_recorder: records only through
 * REC_OUTPUT/REC_OPTIONS (no open call).  argv[1] = events to emit on a
 * declared type; argv[2] = "expect-off": check that nothing records;
 * argv[2] = "flight-api" argv[3] = PATH: open a flight recorder with the API,
 * emit, and return from main without closing it (the recorder writes PATH
 * at exit); argv[2] = "close-self": emit, then close the REC_OUTPUT
 * recorder with rec_recorder_close(rec_recorder_default()) before exit (the
 * library's exit handler must not close it a second time); argv[2] =
 * "may-drop": emit, print "recorded=N" (the begins that returned true; a
 * throttle in REC_OPTIONS drops the others); argv[2] = "flush-close"
 * argv[3] = PATH: open a recorder on PATH with the API (for /dev/full: the
 * open works, every write fails), emit, then print "flush=STATUS
 * close=STATUS" (rec_strerror) on stdout; exits 0 only if both returned
 * REC_ERR_IO; argv[2] = "paced": one event every 10 ms (a recording that
 * ends before, duration=, drops the rest), print "recorded=N".
 * Exits 0 on success; returning from main finishes the recording (atexit).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rec/recorder.h"

static const rec_field fields[] = { { "i", "I", "", REC_TYPE_U64, REC_UNIT_COUNT } };
static const rec_type def = { 0, REC_EVENT_HAS_THREAD, "app.HelperEvent", "Helper Event", "", "app",
			      1, fields };

int main(int argc, char **argv)
{
	rec_event_type *t;
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10;
	int expect_off = argc > 2 && strcmp(argv[2], "expect-off") == 0;
	int paced = argc > 2 && strcmp(argv[2], "paced") == 0;
	int may_drop = paced || (argc > 2 && strcmp(argv[2], "may-drop") == 0);
	unsigned long recorded = 0;

	if (argc > 3 && strcmp(argv[2], "flight-api") == 0) {
		rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
		rec_recorder *r;
		o.path = argv[3];
		o.flags = REC_RECORDER_FLIGHT;
		if (rec_recorder_open(&r, &o) != REC_OK || rec_recorder_register_type(r, &def, 0, 0, &t) != REC_OK)
			return 5;
		for (unsigned long i = 0; i < n; i++) {
			rec_emit e;
			if (!rec_emit_begin(&e, t))
				return 6;
			rec_emit_u64(&e, i);
			rec_emit_commit(&e);
		}
		return 0; /* no close: written at exit */
	}
	if (argc > 3 && strcmp(argv[2], "flush-close") == 0) {
		rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
		rec_recorder *r;
		o.path = argv[3];
		if (rec_recorder_open(&r, &o) != REC_OK || rec_recorder_register_type(r, &def, 0, 0, &t) != REC_OK)
			return 5;
		for (unsigned long i = 0; i < n; i++) {
			rec_emit e;
			if (!rec_emit_begin(&e, t))
				return 6;
			rec_emit_u64(&e, i);
			rec_emit_commit(&e);
		}
		rec_status fs = rec_recorder_flush(r);
		rec_status cs = rec_recorder_close(r);
		printf("flush=%s close=%s\n", rec_strerror(fs), rec_strerror(cs));
		return fs == REC_ERR_IO && cs == REC_ERR_IO ? 0 : 9;
	}
	if (rec_type_declare(&def, 0, 0, &t) != REC_OK)
		return 2;
	if (expect_off != (rec_recorder_default() == NULL) || expect_off == rec_type_enabled(t))
		return 3;
	for (unsigned long i = 0; i < n; i++) {
		rec_emit e;
		if (rec_emit_begin(&e, t)) {
			rec_emit_u64(&e, i);
			rec_emit_commit(&e);
			recorded++;
		} else if (!expect_off && !may_drop) {
			return 4;
		}
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		if (paced && nanosleep(&ts, NULL) != 0)
			return 10;
	}
	if (may_drop)
		printf("recorded=%lu\n", recorded);
	if (argc > 2 && strcmp(argv[2], "close-self") == 0) {
		if (rec_recorder_close(rec_recorder_default()) != REC_OK)
			return 7;
		if (rec_recorder_default() != NULL || rec_type_enabled(t))
			return 8;
	}
	return 0;
}
