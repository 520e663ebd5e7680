/* SPDX-License-Identifier: MIT */
/*
 * rec_test_durations - for tests/cli/durations.sh: that a REC_OPTIONS events
 * threshold and rec-lockgraph's --min-wait read a duration the same way.
 *
 *   rec_test_durations OUT OPTIONS
 *
 * Applies OPTIONS with rec_recorder_options_parse() (the REC_OPTIONS parser)
 * to a recorder writing OUT with a test clock (1 tick = 1 ns) and emits
 * three rec.LockWait (spec/EVENTS.md's fields) of 59.5 s, 60 s and 61 s, one
 * every 100 s, through rec_emit_begin_at(): the events list's threshold
 * decides which are kept.  Exits 0, or 1 with a message on stderr.
 */
#include <stdio.h>
#include <stdlib.h>

#include "rec/builtins.h" /* REC_TYPE_ID_LOCK_WAIT */
#include "rec/recorder.h"

static const rec_field wait_fields[] = {
	{ "lockAddress", "Lock Address", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "lockName", "Lock Name", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "holderOsThreadId", "Holder", "", REC_TYPE_U64, REC_UNIT_NONE },
	{ "lockKind", "Lock Kind", "", REC_TYPE_U8, REC_UNIT_NONE },
};
static const rec_type wait_def = { REC_TYPE_ID_LOCK_WAIT,
				   REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD |
					   REC_EVENT_HAS_STACK,
				   "rec.LockWait", "Lock Wait", "", "rec/Locks", 4, wait_fields };

static uint64_t g_now;
static uint64_t test_clock(void *opaque)
{
	(void)opaque;
	return __atomic_load_n(&g_now, __ATOMIC_RELAXED);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: rec_test_durations OUT OPTIONS\n");
		return 1;
	}
	static char storage[1024];
	char err[256] = "";
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	if (rec_recorder_options_parse(&o, argv[2], storage, sizeof storage, err, sizeof err) !=
	    REC_OK) {
		fprintf(stderr, "rec_test_durations: %s: %s\n", argv[2], err);
		return 1;
	}
	o.path = argv[1];
	o.flags |= REC_RECORDER_NO_CRASH;
	o.clock = test_clock;
	o.clock_frequency = 1000000000;
	o.anchor_wall_ns = 1700000000000000000;
	rec_recorder *r;
	rec_event_type *t;
	rec_status st = rec_recorder_open(&r, &o);
	if (st != REC_OK) {
		fprintf(stderr, "rec_test_durations: open: %s\n", rec_strerror(st));
		return 1;
	}
	if ((st = rec_recorder_register_type(r, &wait_def, 0, 0, &t)) != REC_OK) {
		fprintf(stderr, "rec_test_durations: register: %s\n", rec_strerror(st));
		return 1;
	}
	static const uint64_t waits_ns[] = { 59500000000ull, 60000000000ull, 61000000000ull };
	for (unsigned i = 0; i < 3; i++) {
		uint64_t start = 1000000000ull + i * 100000000000ull;
		__atomic_store_n(&g_now, start + waits_ns[i], __ATOMIC_RELAXED);
		rec_emit e = { 0 };
		if (rec_emit_begin_at(&e, t, start, start + waits_ns[i])) {
			rec_emit_u64(&e, 0x1000);
			rec_emit_string_dyn(&e, "slow-lock");
			rec_emit_u64(&e, 4242);
			rec_emit_u64(&e, 0);
			rec_emit_commit(&e);
		}
	}
	if ((st = rec_recorder_close(r)) != REC_OK) {
		fprintf(stderr, "rec_test_durations: close: %s\n", rec_strerror(st));
		return 1;
	}
	return 0;
}
