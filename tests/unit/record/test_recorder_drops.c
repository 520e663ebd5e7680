/* SPDX-License-Identifier: MIT */
/*
 * test_recorder_drops.c - drops say what was lost (spec/EVENTS.md,
 * rec.Dropped): every rec.Dropped names the type of the events it counts,
 * so "emitted = recorded + dropped" holds per type: full buffers, chunks
 * lost to write failures, records the writer rejects; the events list's
 * throttle=N/UNIT lets about N per unit through and counts the rest under
 * reason throttled, exactly; and the tools show drops by type and print
 * reasons and types by name.
 *
 * Real threads, real files, the real reader and the real tools (rec-print,
 * rec-summary from REC_BIN, as tests/run.sh sets it).
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
#include <time.h>

#include "rec/rec.h"
#include "rec/recorder.h"
#include "../../lib/tmpdir.h" /* rec_t_tmpdir_*, rec_t_mono_ns, rec_t_sleep_ms */

static char g_dir[256];

static const rec_field small_fields[] = {
	{ "seq", "Sequence", "", REC_TYPE_U64, REC_UNIT_COUNT },
};
static const rec_field big_fields[] = {
	{ "seq", "Sequence", "", REC_TYPE_U64, REC_UNIT_COUNT },
	{ "payload", "Payload", "", REC_TYPE_BLOB, REC_UNIT_NONE },
};
static const rec_type small_def = { 0, REC_EVENT_HAS_THREAD, "test.Small", "Small", "", "test", 1,
				    small_fields };
static const rec_type big_def = { 0, REC_EVENT_HAS_THREAD, "test.Big", "Big", "", "test", 2,
				  big_fields };
static const rec_type job_def = { 0, REC_EVENT_HAS_THREAD, "app.Job", "Job", "", "app", 1,
				  small_fields };

static void tmp_path(char *buf, size_t size, const char *name)
{
	int n = snprintf(buf, size, "%s/%s", g_dir, name);
	assert_true(n > 0 && (size_t)n < size);
}

/* What a file holds, by type id: events, and rec.Dropped counts by reason. */
#define MAXID 512
typedef struct tally {
	uint64_t events[MAXID];
	uint64_t dropped[MAXID][6];
	uint64_t dropped_total, dropped_stat, dropped_no_type, dropped_records;
	uint64_t dup_in_chunk; /* a (thread, type, reason) with two rec.Dropped in one chunk */
	rec_status end;
} tally;

static void tally_file(const char *path, tally *t)
{
	memset(t, 0, sizeof *t);
	rec_reader *rd = NULL;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	rec_event ev;
	uint64_t last_chunk = UINT64_MAX;
	enum { MAXKEYS = 4096 };
	static uint64_t keys[MAXKEYS];
	size_t nkeys = 0;
	while ((t->end = rec_reader_next_event(rd, &ev)) == REC_OK) {
		if (ev.chunk->index != last_chunk) {
			last_chunk = ev.chunk->index;
			t->dropped_stat += ev.chunk->dropped_events;
			nkeys = 0;
		}
		if (strcmp(ev.type->name, "rec.Dropped") == 0) {
			assert_int_equal(ev.value_count, 4);
			assert_string_equal(ev.type->fields[3].name, "type");
			uint64_t n = ev.values[0].v.u, reason = ev.values[2].v.u, id = ev.values[3].v.u;
			uint64_t thr = ev.values[1].v.thread ? ev.values[1].v.thread->id : 0;
			assert_true(reason < 6);
			assert_true(id < MAXID);
			if (id == 0)
				t->dropped_no_type += n;
			t->dropped[id][reason] += n;
			t->dropped_total += n;
			t->dropped_records++;
			uint64_t key = thr << 24 | id << 8 | reason;
			for (size_t k = 0; k < nkeys; k++)
				if (keys[k] == key)
					t->dup_in_chunk++;
			if (nkeys < MAXKEYS)
				keys[nkeys++] = key;
		} else if (ev.type->id < MAXID) {
			t->events[ev.type->id]++;
		}
	}
	rec_reader_close(rd);
}

static uint64_t dropped_of(const tally *t, uint32_t id)
{
	uint64_t s = 0;
	for (int k = 0; k < 6; k++)
		s += t->dropped[id][k];
	return s;
}

static char *run_tool(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	assert_non_null(buf);
	size_t k;
	while ((k = fread(buf + n, 1, cap - 1 - n, p)) > 0) {
		n += k;
		if (n == cap - 1) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[n] = 0;
	pclose(p);
	return buf;
}

/* ---- two types flooding small buffers -------------------------------------------- */

#define FLOOD_THREADS 4
#define SMALL_PER_THREAD 40000u
#define BIG_PER_THREAD 8000u

typedef struct flood_arg {
	rec_event_type *small, *big;
	uint64_t small_ok, big_ok; /* begins that returned true */
} flood_arg;

static void *flood(void *p)
{
	flood_arg *a = p;
	uint8_t payload[200];
	memset(payload, 0xab, sizeof payload);
	for (uint32_t i = 0; i < SMALL_PER_THREAD; i++) {
		rec_emit e = { 0 };
		if (rec_emit_begin(&e, a->small)) {
			rec_emit_u64(&e, i);
			rec_emit_commit(&e);
			a->small_ok++;
		}
		if (i % (SMALL_PER_THREAD / BIG_PER_THREAD) == 0 && rec_emit_begin(&e, a->big)) {
			rec_emit_u64(&e, i);
			rec_emit_bytes(&e, payload, sizeof payload);
			rec_emit_commit(&e);
			a->big_ok++;
		}
	}
	return NULL;
}

/* FLOOD_THREADS threads emit known counts of two types into 16 KiB buffers,
 * with the background thread flushing rarely: most events are dropped
 * (buffer full).  Per type: emitted = events of that type in the file + the
 * rec.Dropped counts of that type, exactly; no drop is of an unknown type;
 * one rec.Dropped per (thread, type, reason) per chunk. */
static void t_flood_two_types(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "flood.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	o.thread_buffer_size = 16384;
	o.flush_interval_ms = 200;
	rec_recorder *r = NULL;
	assert_int_equal(rec_recorder_open(&r, &o), REC_OK);
	rec_event_type *small, *big;
	assert_int_equal(rec_recorder_register_type(r, &small_def, 0, 0, &small), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &big_def, 0, 0, &big), REC_OK);
	pthread_t th[FLOOD_THREADS];
	flood_arg a[FLOOD_THREADS];
	for (int i = 0; i < FLOOD_THREADS; i++) {
		a[i] = (flood_arg){ small, big, 0, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, flood, &a[i]), 0);
	}
	uint64_t small_ok = 0, big_ok = 0;
	for (int i = 0; i < FLOOD_THREADS; i++) {
		pthread_join(th[i], NULL);
		small_ok += a[i].small_ok;
		big_ok += a[i].big_ok;
	}
	const uint32_t sid = rec_event_type_id(small), bid = rec_event_type_id(big);
	rec_recorder_stats st;
	assert_int_equal(rec_recorder_close(r), REC_OK);
	(void)st;

	tally t;
	tally_file(path, &t);
	assert_int_equal(t.end, REC_END);
	const uint64_t small_emitted = (uint64_t)FLOOD_THREADS * SMALL_PER_THREAD;
	const uint64_t big_emitted = (uint64_t)FLOOD_THREADS * BIG_PER_THREAD;
	print_message("flood: test.Small %llu recorded + %llu dropped, test.Big %llu + %llu\n",
		      (unsigned long long)t.events[sid], (unsigned long long)dropped_of(&t, sid),
		      (unsigned long long)t.events[bid], (unsigned long long)dropped_of(&t, bid));
	/* Both types really were flooded. */
	assert_true(dropped_of(&t, sid) > 0);
	assert_true(dropped_of(&t, bid) > 0);
	/* emitted = recorded + dropped, per type. */
	assert_int_equal(t.events[sid] + dropped_of(&t, sid), small_emitted);
	assert_int_equal(t.events[bid] + dropped_of(&t, bid), big_emitted);
	/* What begin returned true for is what is in the file. */
	assert_int_equal(t.events[sid], small_ok);
	assert_int_equal(t.events[bid], big_ok);
	assert_int_equal(t.dropped[sid][REC_DROP_FULL], dropped_of(&t, sid));
	assert_int_equal(t.dropped_no_type, 0);
	assert_int_equal(t.dup_in_chunk, 0);
	/* Dropped_Events of the chunks is the sum of the rec.Dropped counts. */
	assert_int_equal(t.dropped_stat, t.dropped_total);

	/* rec-summary --json shows the same drops per type (parsed by a real
	 * JSON parser), and they add up to "dropped" (rec.ThreadEnd may have
	 * been dropped too, at the threads' exit). */
	const char *bin = getenv("REC_BIN");
	if (!bin) {
		print_message("REC_BIN not set: rec-summary is not checked\n");
		return;
	}
	char cmd[1024], want[256];
	snprintf(cmd, sizeof cmd,
		 "'%s/rec-summary' --json '%s' | python3 -c 'import json, sys\n"
		 "d = json.load(sys.stdin)\n"
		 "assert sum(x[\"count\"] for x in d[\"drops\"]) == d[\"dropped\"]\n"
		 "for x in d[\"drops\"]:\n"
		 "    if x[\"type\"].startswith(\"test.\"): print(x[\"type\"], x[\"reason_name\"], "
		 "x[\"count\"])'",
		 bin, path);
	char *out = run_tool(cmd);
	snprintf(want, sizeof want, "test.Small buffer full %llu\ntest.Big buffer full %llu\n",
		 (unsigned long long)dropped_of(&t, sid), (unsigned long long)dropped_of(&t, bid));
	assert_string_equal(out, want);
	free(out);
}

/* ---- chunks lost to write failures ------------------------------------------------- */

typedef struct mem_sink {
	uint8_t *data;
	size_t len, cap;
	int fail; /* writes fail with ENOSPC while set */
	uint64_t failed;
} mem_sink;

static int mem_write(void *opaque, const void *buf, size_t len)
{
	mem_sink *m = opaque;
	if (__atomic_load_n(&m->fail, __ATOMIC_ACQUIRE)) {
		m->failed++;
		return -28; /* ENOSPC */
	}
	if (m->len + len > m->cap) {
		size_t nc = (m->len + len) * 2;
		uint8_t *p = realloc(m->data, nc);
		if (!p)
			return -12;
		m->data = p;
		m->cap = nc;
	}
	memcpy(m->data + m->len, buf, len);
	m->len += len;
	return 0;
}

/* Chunks that cannot be written: their events, and the drops their own
 * rec.Dropped counted (3000-byte events flooding a 16 KiB buffer while
 * writes fail),
 * come back as rec.Dropped reason 4 by type once writing recovers, so
 * emitted = recorded + dropped still holds per type. */
static void t_write_failed_by_type(void **state)
{
	(void)state;
	mem_sink m = { NULL, 0, 0, 0, 0 };
	rec_sink sink = { mem_write, NULL, &m };
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.sink = &sink;
	o.thread_buffer_size = 16384;
	o.flush_interval_ms = 60000;
	rec_recorder *r = NULL;
	assert_int_equal(rec_recorder_open(&r, &o), REC_OK);
	rec_event_type *small, *big;
	assert_int_equal(rec_recorder_register_type(r, &small_def, 0, 0, &small), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &big_def, 0, 0, &big), REC_OK);
	uint64_t small_n = 0, big_n = 0, small_lost = 0, big_lost = 0;
	static uint8_t payload[3000];
	memset(payload, 1, sizeof payload);
	for (int phase = 0; phase < 3; phase++) {
		__atomic_store_n(&m.fail, phase == 1, __ATOMIC_RELEASE);
		/* phase 1 floods: more than a 16 KiB buffer holds */
		const uint64_t n = phase == 1 ? 5000 : 50;
		for (uint64_t i = 0; i < n; i++) {
			rec_emit e = { 0 };
			if (rec_emit_begin(&e, small)) {
				rec_emit_u64(&e, i);
				rec_emit_commit(&e);
			}
			small_n++;
			small_lost += phase == 1;
			if (i % 4 == 0) {
				if (rec_emit_begin(&e, big)) {
					rec_emit_u64(&e, i);
					rec_emit_bytes(&e, payload, sizeof payload);
					rec_emit_commit(&e);
				}
				big_n++;
				big_lost += phase == 1;
			}
		}
		(void)rec_recorder_flush(r);
	}
	const uint32_t sid = rec_event_type_id(small), bid = rec_event_type_id(big);
	assert_int_equal(rec_recorder_close(r), REC_ERR_IO);
	assert_true(m.failed > 0);
	char path[300];
	tmp_path(path, sizeof path, "wf.rec");
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(m.data, 1, m.len, f), m.len);
	assert_int_equal(fclose(f), 0);
	free(m.data);
	tally t;
	tally_file(path, &t);
	assert_int_equal(t.end, REC_END);
	print_message("write failed: test.Small %llu recorded, %llu lost; test.Big %llu recorded, "
		      "%llu lost, %llu dropped (buffer full) outside the lost chunks\n",
		      (unsigned long long)t.events[sid],
		      (unsigned long long)t.dropped[sid][REC_DROP_WRITE_FAILED],
		      (unsigned long long)t.events[bid],
		      (unsigned long long)t.dropped[bid][REC_DROP_WRITE_FAILED],
		      (unsigned long long)t.dropped[bid][REC_DROP_FULL]);
	/* Everything of phase 1 (recorded or dropped then) is lost, by type:
	 * the 3000-byte test.Big overflowed the 16 KiB buffer, and the
	 * rec.Dropped that counted it went down with its chunk. */
	assert_int_equal(t.dropped[sid][REC_DROP_WRITE_FAILED], small_lost);
	assert_int_equal(t.dropped[bid][REC_DROP_WRITE_FAILED], big_lost);
	assert_int_equal(t.events[sid] + dropped_of(&t, sid), small_n);
	assert_int_equal(t.events[bid] + dropped_of(&t, bid), big_n);
	assert_int_equal(t.dropped_no_type, 0);
	assert_int_equal(t.dropped_stat, t.dropped_total);
}

/* ---- a throttled type ---------------------------------------------------------- */

#define THR_RATE 1000u /* per second */
#define THR_RUN_NS 1500000000ull
#define THR_THREADS 2

typedef struct thr_arg {
	rec_event_type *t;
	uint64_t start_ns;
	uint64_t attempts, ok;
} thr_arg;

/* Emits one event, then sleeps 50 us (with the sleep's slack about 6,000 to
 * 7,000 a second here), for THR_RUN_NS. */
static void *throttled(void *p)
{
	thr_arg *a = p;
	const struct timespec pause = { 0, 50000 };
	while (rec_t_mono_ns() - a->start_ns < THR_RUN_NS) {
		rec_emit e = { 0 };
		a->attempts++;
		if (rec_emit_begin(&e, a->t)) {
			rec_emit_u64(&e, a->attempts);
			rec_emit_commit(&e);
			a->ok++;
		}
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/* test.Small throttled to 1000/s, emitted by two threads (more than 4,000/s
 * in all, checked) for 1.5 s: about 1500 recorded (tolerance: two windows of the
 * throttle's budget, 2 x 100, since the 100 ms windows are aligned to the
 * clock, not to the test's start), every other attempt counted as
 * throttled (reason 5, type test.Small), exactly; an unthrottled type beside
 * it loses nothing. */
static void t_throttle_rate(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "throttle.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	o.events = "test.Small:throttle=1000/s,test.Big";
	rec_recorder *r = NULL;
	assert_int_equal(rec_recorder_open(&r, &o), REC_OK);
	rec_event_type *small, *big;
	assert_int_equal(rec_recorder_register_type(r, &small_def, 0, 0, &small), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &big_def, 0, 0, &big), REC_OK);
	pthread_t th[THR_THREADS];
	thr_arg a[THR_THREADS];
	const uint64_t t0 = rec_t_mono_ns();
	for (int i = 0; i < THR_THREADS; i++) {
		a[i] = (thr_arg){ small, t0, 0, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, throttled, &a[i]), 0);
	}
	uint64_t big_n = 0;
	while (rec_t_mono_ns() - t0 < THR_RUN_NS) {
		rec_emit e = { 0 };
		if (rec_emit_begin(&e, big)) {
			rec_emit_u64(&e, big_n);
			rec_emit_bytes(&e, "x", 1);
			rec_emit_commit(&e);
		}
		big_n++;
		rec_t_sleep_ms(10);
	}
	uint64_t attempts = 0, ok = 0;
	for (int i = 0; i < THR_THREADS; i++) {
		pthread_join(th[i], NULL);
		attempts += a[i].attempts;
		ok += a[i].ok;
	}
	const double secs = (double)(rec_t_mono_ns() - t0) / 1e9;
	const uint32_t sid = rec_event_type_id(small), bid = rec_event_type_id(big);
	assert_int_equal(rec_recorder_close(r), REC_OK);

	tally t;
	tally_file(path, &t);
	assert_int_equal(t.end, REC_END);
	print_message("throttle: %llu attempts in %.3f s (%.0f/s), %llu recorded, %llu throttled\n",
		      (unsigned long long)attempts, secs, (double)attempts / secs,
		      (unsigned long long)t.events[sid],
		      (unsigned long long)t.dropped[sid][REC_DROP_THROTTLED]);
	/* The emit rate was well above the throttle. */
	assert_true((double)attempts / secs > 4.0 * THR_RATE);
	/* About THR_RATE per second got through. */
	const double expect = THR_RATE * (double)THR_RUN_NS / 1e9;
	assert_true((double)t.events[sid] >= expect - 200.0);
	assert_true((double)t.events[sid] <= expect + 200.0);
	assert_int_equal(t.events[sid], ok);
	/* Exactly: emitted = recorded + throttled + other drops. */
	assert_int_equal(t.events[sid] + t.dropped[sid][REC_DROP_THROTTLED] +
				 (dropped_of(&t, sid) - t.dropped[sid][REC_DROP_THROTTLED]),
			 attempts);
	assert_int_equal(dropped_of(&t, sid), t.dropped[sid][REC_DROP_THROTTLED]);
	assert_int_equal(t.events[bid], big_n);
	assert_int_equal(dropped_of(&t, bid), 0);
	assert_int_equal(t.dup_in_chunk, 0);
	assert_int_equal(t.dropped_stat, t.dropped_total);
}

/* throttle=0/s records none and counts all; throttle=off lifts it; bad
 * values are refused; an entry that only throttles turns no other type
 * off. */
static void t_throttle_settings(void **state)
{
	(void)state;
	static const char *const bad[] = { "test.Small:throttle=10", "test.Small:throttle=/s",
					   "test.Small:throttle=10/x", "test.Small:throttle=-1/s",
					   "test.Small:throttle=1.5/s", "test.Small:throttle=" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char path[300];
		tmp_path(path, sizeof path, "bad.rec");
		rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
		o.path = path;
		o.events = bad[i];
		rec_recorder *r = NULL;
		assert_int_equal(rec_recorder_open(&r, &o), REC_ERR_INVALID_ARG);
	}
	/* REC_OPTIONS carries it too (';' between entries there). */
	{
		rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
		char storage[256], err[128];
		assert_int_equal(rec_recorder_options_parse(&o, "events=rec.Alloc:throttle=1000/s;app.*",
							    storage, sizeof storage, err, sizeof err),
				 REC_OK);
		assert_string_equal(o.events, "rec.Alloc:throttle=1000/s,app.*");
	}
	/* Beside an entry that enables, the list says which types are on. */
	{
		char path[300];
		tmp_path(path, sizeof path, "only.rec");
		rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
		o.path = path;
		o.events = "test.Small:throttle=10/s,app.Job";
		rec_recorder *r = NULL;
		assert_int_equal(rec_recorder_open(&r, &o), REC_OK);
		rec_event_type *small, *big;
		assert_int_equal(rec_recorder_register_type(r, &small_def, 0, 0, &small), REC_OK);
		assert_int_equal(rec_recorder_register_type(r, &big_def, 0, 0, &big), REC_OK);
		assert_true(rec_type_enabled(small));
		assert_false(rec_type_enabled(big));
		assert_int_equal(rec_recorder_close(r), REC_OK);
	}
	static const struct { const char *events; uint64_t kept; } cases[] = {
		{ "test.Small:throttle=0/s", 0 },
		{ "test.Small:throttle=0/s,test.Small:throttle=off", 500 },
		{ "test.Small:throttle=100/h", 10 }, /* 10 per 6 min window (a tenth of the unit) */
		{ "test.*:throttle=60/m", 6 },       /* 6 per 6 s window */
		{ "test.Small:throttle=5/s", 5 },    /* under 10 per unit: 5 per 1 s window */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char path[300];
		tmp_path(path, sizeof path, "thr.rec");
		rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
		o.path = path;
		o.events = cases[i].events;
		rec_recorder *r = NULL;
		assert_int_equal(rec_recorder_open(&r, &o), REC_OK);
		rec_event_type *small;
		assert_int_equal(rec_recorder_register_type(r, &small_def, 0, 0, &small), REC_OK);
		/* 500 in a burst: inside one window unless the burst crosses
		 * a window edge. */
		for (uint64_t k = 0; k < 500; k++) {
			rec_emit e = { 0 };
			if (rec_emit_begin(&e, small)) {
				rec_emit_u64(&e, k);
				rec_emit_commit(&e);
			}
		}
		/* A throttle-only list keeps the other types on. */
		rec_event_type *big;
		assert_int_equal(rec_recorder_register_type(r, &big_def, 0, 0, &big), REC_OK);
		assert_true(rec_type_enabled(big));
		const uint32_t sid = rec_event_type_id(small);
		assert_int_equal(rec_recorder_close(r), REC_OK);
		tally t;
		tally_file(path, &t);
		print_message("%s: %llu kept\n", cases[i].events, (unsigned long long)t.events[sid]);
		assert_int_equal(t.events[sid] + dropped_of(&t, sid), 500);
		assert_int_equal(t.dropped[sid][REC_DROP_THROTTLED], dropped_of(&t, sid));
		if (cases[i].kept == 500 || cases[i].kept == 0)
			assert_int_equal(t.events[sid], cases[i].kept);
		else /* a window edge inside the burst lets one more budget through */
			assert_true(t.events[sid] == cases[i].kept || t.events[sid] == 2 * cases[i].kept);
	}
}

/* ---- rejected records, by type, and the tools' names -------------------------------- */

/* Records of app.Job that miss their field are rejected by the writer: the
 * rec.Dropped that counts them names app.Job, and rec-print and
 * rec-summary say "rejected" and "app.Job", not numbers. */
static void t_rejected_by_type_and_names(void **state)
{
	(void)state;
	const char *bin = getenv("REC_BIN");
	char path[300];
	tmp_path(path, sizeof path, "rejected.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	rec_recorder *r = NULL;
	assert_int_equal(rec_recorder_open(&r, &o), REC_OK);
	rec_event_type *job, *small;
	assert_int_equal(rec_recorder_register_type(r, &job_def, 0, 0, &job), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &small_def, 0, 0, &small), REC_OK);
	for (uint64_t i = 0; i < 9; i++) {
		rec_emit e = { 0 };
		assert_true(rec_emit_begin(&e, job));
		if (i % 3) /* two in three miss their field */
			rec_emit_u64(&e, i);
		rec_emit_commit(&e);
		assert_true(rec_emit_begin(&e, small));
		rec_emit_u64(&e, i);
		rec_emit_commit(&e);
	}
	const uint32_t jid = rec_event_type_id(job), sid = rec_event_type_id(small);
	(void)rec_recorder_close(r); /* REC_ERR_INVALID_ARG: records were rejected */
	tally t;
	tally_file(path, &t);
	assert_int_equal(t.end, REC_END);
	assert_int_equal(t.events[jid], 6);
	assert_int_equal(t.dropped[jid][REC_DROP_REJECTED], 3);
	assert_int_equal(dropped_of(&t, jid), 3);
	assert_int_equal(t.events[sid], 9);
	assert_int_equal(dropped_of(&t, sid), 0);

	if (!bin) {
		print_message("REC_BIN not set: the tools' output is not checked\n");
		return;
	}
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "'%s/rec-print' --events rec.Dropped '%s'", bin, path);
	char *out = run_tool(cmd);
	assert_non_null(strstr(out, "reason = rejected: fields do not match app.Job"));
	assert_non_null(strstr(out, "type = app.Job\n"));
	assert_null(strstr(out, "reason = 3"));
	free(out);
	snprintf(cmd, sizeof cmd, "'%s/rec-print' --json --events rec.Dropped '%s'", bin, path);
	out = run_tool(cmd);
	assert_non_null(strstr(out, "\"reason\": 3, \"reasonName\": \"rejected\""));
	char want[128];
	snprintf(want, sizeof want, "\"type\": %u, \"typeName\": \"app.Job\"", (unsigned)jid);
	assert_non_null(strstr(out, want));
	free(out);
	snprintf(cmd, sizeof cmd, "'%s/rec-summary' '%s'", bin, path);
	out = run_tool(cmd);
	assert_non_null(strstr(out, " Dropped Type  Count  Reason\n"));
	assert_non_null(strstr(out, " app.Job           3  rejected\n"));
	free(out);
	snprintf(cmd, sizeof cmd, "'%s/rec-summary' --json '%s'", bin, path);
	out = run_tool(cmd);
	assert_non_null(strstr(out, "{\"type\": \"app.Job\", \"reason\": 3, \"reason_name\": "
				    "\"rejected\", \"count\": 3}"));
	free(out);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	if (rec_t_tmpdir_create(g_dir, sizeof g_dir, "rec-drops") != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_flood_two_types),
		cmocka_unit_test(t_write_failed_by_type),
		cmocka_unit_test(t_throttle_rate),
		cmocka_unit_test(t_throttle_settings),
		cmocka_unit_test(t_rejected_by_type_and_names),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	return rec_t_tmpdir_finish(g_dir, rc);
}
