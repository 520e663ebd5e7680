/* SPDX-License-Identifier: MIT */
/*
 * test_ring.c - ring.c, the per-thread SPSC byte ring, for real: a real
 * thread writes records of varying sizes through a small ring many times
 * over (a record never wraps: the producer skips the ring's end, the
 * drain follows), and every record comes back from the file intact and in
 * order; a full ring with the drop policy drops, and what it dropped is
 * counted exactly (rec.Dropped, reason buffer full); the ring's pages are
 * put in place ahead of the thread's writes (moved from test_recorder.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "rec/rec.h"
#include "rec/recorder.h"
#include "../../lib/scale.h"  /* rec_t_scaled: less work under valgrind */
#include "../../lib/tmpdir.h" /* rec_t_tmpdir_*, rec_t_sleep_ms */

static char g_dir[256];

static void tmp_path(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", g_dir, name);
}

static const rec_field var_fields[] = {
	{ "seq", "Sequence", "", REC_TYPE_U64, REC_UNIT_COUNT },
	{ "payload", "Payload", "", REC_TYPE_BLOB, REC_UNIT_NONE },
};
static const rec_type var_def = { 0, REC_EVENT_HAS_THREAD, "test.Var", "Var", "", "test", 2,
				  var_fields };

/* The payload of record seq: its length and bytes follow from seq, so a
 * record read back is checked byte by byte. */
static size_t payload_len(uint64_t seq)
{
	return (size_t)(seq * 7919u % 301u);
}

static void payload_fill(uint64_t seq, uint8_t *p)
{
	size_t n = payload_len(seq);
	for (size_t k = 0; k < n; k++)
		p[k] = (uint8_t)(seq * 31u + k);
}

typedef struct writer_arg {
	rec_event_type *t;
	uint64_t n;         /* records to emit */
	uint64_t ok;        /* begins that returned true */
	uint64_t head, cap; /* the thread's ring at the end: bytes written, size */
} writer_arg;

static void *write_records(void *p)
{
	writer_arg *a = p;
	uint8_t payload[301];
	for (uint64_t i = 0; i < a->n; i++) {
		rec_emit e;
		if (!rec_emit_begin(&e, a->t))
			continue;
		payload_fill(i, payload);
		rec_emit_u64(&e, i);
		rec_emit_bytes(&e, payload, payload_len(i));
		rec_emit_commit(&e);
		a->ok++;
	}
	const struct rec_tbuf_ *b = rec_tls_tbuf_;
	if (b) {
		a->head = b->head;
		a->cap = (uint64_t)b->mask + 1;
	}
	return NULL;
}

/* What a file holds: test.Var records (their seqs checked in order, their
 * payloads byte by byte) and the rec.Dropped counts of test.Var by reason. */
typedef struct seen {
	uint64_t records, bad_payload, out_of_order, last_seq;
	uint64_t dropped[6], dropped_other_type;
	uint64_t dropped_stat; /* the chunks' Dropped_Events */
	rec_status end;
} seen;

static void read_back(const char *path, uint32_t type_id, seen *s)
{
	memset(s, 0, sizeof *s);
	rec_reader *rd = NULL;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	rec_event ev;
	uint8_t want[301];
	uint64_t last_chunk = UINT64_MAX;
	while ((s->end = rec_reader_next_event(rd, &ev)) == REC_OK) {
		if (ev.chunk->index != last_chunk) {
			last_chunk = ev.chunk->index;
			s->dropped_stat += ev.chunk->dropped_events;
		}
		if (strcmp(ev.type->name, "rec.Dropped") == 0) {
			uint64_t n = ev.values[0].v.u, reason = ev.values[2].v.u;
			assert_true(reason < 6);
			if (ev.values[3].v.u == type_id)
				s->dropped[reason] += n;
			else
				s->dropped_other_type += n;
			continue;
		}
		if (ev.type->id != type_id)
			continue;
		uint64_t seq = ev.values[0].v.u;
		if (s->records > 0 && seq <= s->last_seq)
			s->out_of_order++;
		s->last_seq = seq;
		s->records++;
		payload_fill(seq, want);
		if (ev.values[1].v.s.len != payload_len(seq) ||
		    (payload_len(seq) && memcmp(ev.values[1].v.s.ptr, want, payload_len(seq)) != 0))
			s->bad_payload++;
	}
	rec_reader_close(rd);
}

/* ---- wrap-around ------------------------------------------------------------ */
/* A 16 KiB ring written over many times with records of 0..300 payload
 * bytes (the end of the ring falls at every offset), the thread waiting
 * when it is full: every record is in the file, in order, intact, none
 * dropped. */
static void t_wrap_around(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "wrap.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	o.thread_buffer_size = 16384;
	o.flush_interval_ms = 20;
	o.full_policy = REC_FULL_WAIT;
	rec_recorder *r = NULL;
	assert_int_equal(rec_recorder_open(&r, &o), REC_OK);
	writer_arg a = { 0 };
	a.n = rec_t_scaled(60000);
	assert_int_equal(rec_recorder_register_type(r, &var_def, 0, 0, &a.t), REC_OK);
	const uint32_t id = rec_event_type_id(a.t);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, write_records, &a), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(rec_recorder_close(r), REC_OK);

	print_message("wrap: %llu records, %llu ring bytes through a ring of %llu (%.1f times "
		      "round)\n",
		      (unsigned long long)a.n, (unsigned long long)a.head,
		      (unsigned long long)a.cap, a.cap ? (double)a.head / (double)a.cap : 0.0);
	assert_int_equal(a.cap, 16384);
	assert_true(a.head > 20 * a.cap); /* the ring really wrapped, many times */
	assert_int_equal(a.ok, a.n);
	seen s;
	read_back(path, id, &s);
	assert_int_equal(s.end, REC_END);
	assert_int_equal(s.records, a.n);
	assert_int_equal(s.last_seq, a.n - 1);
	assert_int_equal(s.out_of_order, 0);
	assert_int_equal(s.bad_payload, 0);
	for (int k = 0; k < 6; k++)
		assert_int_equal(s.dropped[k], 0);
	assert_int_equal(s.dropped_stat, 0);
}

/* ---- a full ring drops, and counts ------------------------------------------- */
/* The same records into a 16 KiB ring with the drop policy and a
 * background thread that drains only when woken (flush every 10 s): the
 * ring fills, records are dropped, and emitted = recorded + dropped (buffer
 * full, of this type) exactly; what begin let through is what the file
 * has, in order and intact. */
static void t_full_drops_counted(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "full.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	o.thread_buffer_size = 16384;
	o.flush_interval_ms = 10000;
	o.full_policy = REC_FULL_DROP;
	rec_recorder *r = NULL;
	assert_int_equal(rec_recorder_open(&r, &o), REC_OK);
	writer_arg a = { 0 };
	a.n = rec_t_scaled(200000);
	assert_int_equal(rec_recorder_register_type(r, &var_def, 0, 0, &a.t), REC_OK);
	const uint32_t id = rec_event_type_id(a.t);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, write_records, &a), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(rec_recorder_close(r), REC_OK);

	seen s;
	read_back(path, id, &s);
	print_message("full ring: %llu emitted, %llu recorded, %llu dropped (buffer full)\n",
		      (unsigned long long)a.n, (unsigned long long)s.records,
		      (unsigned long long)s.dropped[REC_DROP_FULL]);
	assert_int_equal(s.end, REC_END);
	assert_true(s.dropped[REC_DROP_FULL] > 0); /* the ring was full */
	assert_true(s.records > 0);
	assert_int_equal(s.records, a.ok);
	assert_int_equal(s.records + s.dropped[REC_DROP_FULL], a.n);
	for (int k = 1; k < 6; k++)
		assert_int_equal(s.dropped[k], 0);
	assert_int_equal(s.out_of_order, 0);
	assert_int_equal(s.bad_payload, 0);
	/* the chunks' Dropped_Events add up to the rec.Dropped counts (the
	 * thread's rec.ThreadEnd may be among them, of another type) */
	assert_int_equal(s.dropped_stat, s.dropped[REC_DROP_FULL] + s.dropped_other_type);
}

/* ---- the ring's pages (moved from test_recorder.c) ---------------------------- */
/* A thread's ring pages are in place before the thread writes them: the
 * first 16 KiB at registration, the rest put in place by the background
 * thread as the thread uses the ring, so an emitting thread takes no page
 * fault on it (faulting 256 KiB in a page at a time costs the thread 64
 * faults, ~1 ms on the benchmark's virtual machine, in the middle of its
 * work), and a thread that writes little keeps 16 KiB resident. */
static const rec_field ev_fields[] = {
	{ "name", "Name", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "seq", "Sequence", "", REC_TYPE_U64, REC_UNIT_COUNT },
	{ "delta", "Delta", "", REC_TYPE_I32, REC_UNIT_NONE },
};
static const rec_type ev_def = { 0, REC_EVENT_HAS_THREAD, "test.Ev", "Ev", "a test event", "test",
				 3, ev_fields };

/* One test.Ev (string, u64, i64), if the type is on. */
static void emit_ev(rec_event_type *t, rec_str s, uint64_t u, int64_t i)
{
	rec_emit e;
	if (rec_emit_begin(&e, t)) {
		rec_emit_string(&e, s);
		rec_emit_u64(&e, u);
		rec_emit_i64(&e, i);
		rec_emit_commit(&e);
	}
}

typedef struct ring_probe {
	rec_event_type *t;
	rec_str s;
	size_t pages, first, idle, after;
	long faults;
	uint64_t emitted;
	int mincore_rc;
} ring_probe;

static long thread_minflt(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_minflt : -1;
}

/* Resident pages of the calling thread's ring (-1: mincore failed). */
static long ring_resident(const struct rec_tbuf_ *b, size_t pages)
{
	unsigned char vec[1024];
	if (pages > sizeof vec || mincore(b->base, (size_t)b->mask + 1, vec) != 0)
		return -1;
	long n = 0;
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	return n;
}

static void *ring_probe_thread(void *a)
{
	ring_probe *p = a;
	emit_ev(p->t, p->s, 0, 0); /* registers: the ring is allocated here */
	p->emitted = 1;
	const struct rec_tbuf_ *b = rec_tls_tbuf_;
	if (!b || !b->mask)
		return NULL;
	const size_t cap = (size_t)b->mask + 1, page = (size_t)sysconf(_SC_PAGESIZE);
	p->pages = cap / page;
	long n = ring_resident(b, p->pages);
	p->mincore_rc = n < 0 ? -1 : 0;
	p->first = n < 0 ? 0 : (size_t)n;
	/* A few events, then rounds go by: nothing more is put in place. */
	for (int i = 0; i < 9; i++)
		emit_ev(p->t, p->s, p->emitted++, 1);
	rec_t_sleep_ms(50);
	n = ring_resident(b, p->pages);
	p->idle = n < 0 ? 0 : (size_t)n;
	/* Write the ring over twice at about 1 KiB a millisecond (10 KiB per
	 * round of the background thread), waiting when it is full. */
	long f0 = thread_minflt();
	uint64_t next = b->head;
	while (b->head < 2 * (uint64_t)cap) {
		emit_ev(p->t, p->s, p->emitted++, 1);
		if (b->head >= next) {
			next = b->head + 1024;
			rec_t_sleep_ms(1);
		}
	}
	p->faults = thread_minflt() - f0;
	n = ring_resident(b, p->pages);
	p->after = n < 0 ? 0 : (size_t)n;
	return NULL;
}

static void t_ring_resident(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "ring.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	o.flush_interval_ms = 10;
	o.full_policy = REC_FULL_WAIT;
	rec_recorder *r = NULL;
	assert_int_equal(rec_recorder_open(&r, &o), REC_OK); /* default ring: 256 KiB */
	ring_probe p;
	memset(&p, 0, sizeof p);
	assert_int_equal(rec_recorder_register_type(r, &ev_def, 0, 0, &p.t), REC_OK);
	p.s = rec_recorder_intern(r, "ring");
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, ring_probe_thread, &p), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	const uint32_t id = rec_event_type_id(p.t);
	assert_int_equal(rec_recorder_close(r), REC_OK);
	print_message("ring of %zu pages: %zu resident at registration, %zu after 10 events and "
		      "5 rounds, %zu after writing it twice over with %ld page faults (%llu "
		      "events)\n",
		      p.pages, p.first, p.idle, p.after, p.faults, (unsigned long long)p.emitted);
	assert_int_equal(p.pages, 64);
	assert_int_equal(p.mincore_rc, 0);
	assert_int_equal(p.first, 4); /* 16 KiB */
	assert_int_equal(p.idle, 4);
	assert_int_equal(p.after, 64);
	/* Valgrind and ASan fault in their own shadow memory on this thread's
	 * behalf (ASan: 8 pages for 256 KiB); a ring faulted in by the thread
	 * takes 60.  A round late under load costs a few. */
	if (getenv("REC_TEST_SCALE") == NULL)
		assert_true(p.faults <= 16);
	rec_reader *rd = NULL;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	rec_event ev;
	rec_status rs;
	uint64_t n = 0, dropped = 0, last_chunk = UINT64_MAX;
	while ((rs = rec_reader_next_event(rd, &ev)) == REC_OK) {
		if (ev.chunk->index != last_chunk) {
			last_chunk = ev.chunk->index;
			dropped += ev.chunk->dropped_events;
		}
		n += ev.type->id == id;
	}
	rec_reader_close(rd);
	assert_int_equal(rs, REC_END);
	assert_int_equal(n, p.emitted);
	assert_int_equal(dropped, 0);
}

int main(void)
{
	if (rec_t_tmpdir_create(g_dir, sizeof g_dir, "rec-test-ring") != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_wrap_around),
		cmocka_unit_test(t_full_drops_counted),
		cmocka_unit_test(t_ring_resident),
	};
	return rec_t_tmpdir_finish(g_dir, cmocka_run_group_tests(tests, NULL, NULL));
}
