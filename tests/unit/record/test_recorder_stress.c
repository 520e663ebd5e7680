/* SPDX-License-Identifier: MIT */
/*
 * test_recorder_stress.c - the recorder under load, for real: N threads x M
 * events into small buffers; every event is either in the file or in the
 * dropped count, exactly, per thread; nothing is duplicated; per-thread
 * order is preserved (a sequence number in a field).  Also: the wait policy
 * loses nothing, the memory limit drops (and counts) whole threads, and
 * closing while threads still emit neither crashes nor hangs and accounts
 * for every accepted event.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rec/rec.h"
#include "rec/recorder.h"
#include "../../lib/tmpdir.h" /* rec_t_tmpdir_*, rec_t_sleep_ms */

static char g_dir[256];

static const rec_field ev_fields[] = {
	{ "name", "Name", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "seq", "Sequence", "", REC_TYPE_U64, REC_UNIT_COUNT },
	{ "worker", "Worker", "", REC_TYPE_I32, REC_UNIT_NONE },
};
static const rec_type ev_def = { 0, REC_EVENT_HAS_THREAD, "test.Ev", "Ev", "", "test", 3,
				 ev_fields };

#define MAXW 8
#define MAXTID 4096

typedef struct tally {
	uint64_t events[MAXW];      /* test.Ev per worker */
	uint64_t by_tid[MAXTID];    /* every event with a header thread, by thread id */
	uint64_t dropped_tid[MAXTID];
	uint64_t dropped_reason[4];
	int64_t tid_of[MAXW];       /* thread pool id of worker w */
	uint64_t dropped_total, dropped_stat, starts, ends, dup_or_order_errors;
	uint64_t finals, chunks;
	rec_status end;
} tally;

static void tally_file(const char *path, tally *t, uint32_t workers)
{
	memset(t, 0, sizeof *t);
	for (uint32_t w = 0; w < MAXW; w++)
		t->tid_of[w] = -1;
	int64_t last_seq[MAXW];
	for (uint32_t w = 0; w < MAXW; w++)
		last_seq[w] = -1;
	rec_reader *rd;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	const rec_chunk_info *ci;
	while (rec_reader_next_chunk(rd, &ci) == REC_OK) {
		t->dropped_stat += ci->dropped_events;
		t->finals += (ci->flags & REC_CHUNK_FINAL) != 0;
		t->chunks++;
	}
	rec_reader_close(rd);
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	rec_event e;
	rec_status st;
	while ((st = rec_reader_next_event(rd, &e)) == REC_OK) {
		const char *name = e.type->name;
		uint64_t tid = e.thread ? e.thread->id : 0;
		assert_true(tid < MAXTID);
		if (tid)
			t->by_tid[tid]++;
		if (strcmp(name, "test.Ev") == 0) {
			int64_t w = e.values[2].v.i;
			assert_true(w >= 0 && w < (int64_t)workers);
			int64_t seq = (int64_t)e.values[1].v.u;
			if (seq <= last_seq[w])
				t->dup_or_order_errors++;
			last_seq[w] = seq;
			t->events[w]++;
			if (t->tid_of[w] < 0)
				t->tid_of[w] = (int64_t)tid;
			assert_int_equal(t->tid_of[w], (int64_t)tid);
			assert_non_null(e.values[0].v.s.ptr);
			assert_int_equal(e.values[0].v.s.len, 6);
			assert_memory_equal(e.values[0].v.s.ptr, "stress", 6);
		} else if (strcmp(name, "rec.Dropped") == 0) {
			uint64_t n = e.values[0].v.u;
			uint64_t dt = e.values[1].v.thread ? e.values[1].v.thread->id : 0;
			assert_true(dt < MAXTID);
			t->dropped_tid[dt] += n;
			t->dropped_total += n;
			assert_true(e.values[2].v.u < 4);
			t->dropped_reason[e.values[2].v.u] += n;
		} else if (strcmp(name, "rec.ThreadStart") == 0) {
			t->starts++;
		} else if (strcmp(name, "rec.ThreadEnd") == 0) {
			t->ends++;
		}
	}
	t->end = st;
	rec_reader_close(rd);
}

typedef struct warg {
	rec_event_type *t;
	rec_str s;
	uint32_t id;
	uint64_t n;          /* events to emit; 0 = until *stop */
	int *stop;
	uint64_t accepted;   /* begin() returned true */
	pthread_barrier_t *start;
	int pace;            /* sleep a little every 128 events (many drains in between) */
} warg;

static void *worker(void *a)
{
	warg *wa = a;
	if (wa->start)
		pthread_barrier_wait(wa->start);
	uint64_t i = 0;
	for (; wa->n ? i < wa->n : !__atomic_load_n(wa->stop, __ATOMIC_RELAXED); i++) {
		rec_emit e;
		if (rec_emit_begin(&e, wa->t)) {
			rec_emit_string(&e, wa->s);
			rec_emit_u64(&e, i);
			rec_emit_i64(&e, (int64_t)wa->id);
			rec_emit_commit(&e);
			__atomic_store_n(&wa->accepted, wa->accepted + 1, __ATOMIC_RELAXED);
		}
		if (wa->pace && i % 128 == 127) {
			struct timespec ts = { 0, 20000 };
			nanosleep(&ts, NULL);
		}
	}
	if (!wa->n)
		wa->n = i;
	return NULL;
}

static rec_recorder *open_rec(const char *name, char *path, size_t psz, rec_recorder_options *o,
			      rec_event_type **t)
{
	snprintf(path, psz, "%s/%s", g_dir, name);
	o->path = path;
	rec_recorder *r = NULL;
	assert_int_equal(rec_recorder_open(&r, o), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &ev_def, 0, 0, t), REC_OK);
	return r;
}

static void run_workers(warg *wa, uint32_t n)
{
	pthread_t th[MAXW];
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(pthread_create(&th[i], NULL, worker, &wa[i]), 0);
	for (uint32_t i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

/* Every event of worker w (its test.Ev, ThreadStart, ThreadEnd) is in the
 * file or in the dropped count of its thread. */
static void check_per_thread(const tally *t, const warg *wa, uint32_t n, uint64_t extra_per_thread)
{
	for (uint32_t w = 0; w < n; w++) {
		assert_true(t->tid_of[w] > 0);
		uint64_t tid = (uint64_t)t->tid_of[w];
		assert_int_equal(t->by_tid[tid] + t->dropped_tid[tid], wa[w].n + extra_per_thread);
	}
}

static void t_stress_drop(void **state)
{
	(void)state;
	char path[300];
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.thread_buffer_size = 16384;
	o.flush_interval_ms = 5;
	o.codec = REC_CODEC_LZ4;
	rec_event_type *t;
	rec_recorder *r = open_rec("drop.rec", path, sizeof path, &o, &t);
	rec_str s = rec_recorder_intern(r, "stress");
	const uint32_t n = 4;
	warg wa[MAXW];
	/* two fast workers overflow their buffers; two paced ones see many drains */
	for (uint32_t i = 0; i < n; i++)
		wa[i] = (warg){ t, s, i, i < 2 ? 200000 : 50000, NULL, 0, NULL, i >= 2 };
	run_workers(wa, n);
	assert_int_equal(rec_recorder_close(r), REC_OK);
	tally tl;
	tally_file(path, &tl, n);
	assert_int_equal(tl.end, REC_END);
	assert_int_equal(tl.finals, 1);
	assert_int_equal(tl.dup_or_order_errors, 0);
	uint64_t in_file = 0, emitted = 0;
	for (uint32_t w = 0; w < n; w++) {
		in_file += tl.events[w];
		emitted += wa[w].n;
		assert_int_equal(wa[w].accepted, tl.events[w]);
	}
	/* + ThreadStart and ThreadEnd of each worker */
	assert_int_equal(in_file + tl.starts + tl.ends + tl.dropped_total, emitted + 2 * n);
	assert_int_equal(tl.dropped_stat, tl.dropped_total);
	assert_int_equal(tl.dropped_reason[REC_DROP_FULL], tl.dropped_total);
	check_per_thread(&tl, wa, n, 2);
	print_message("stress drop: %llu emitted, %llu in file (paced workers: %llu, %llu), "
		      "%llu dropped, %llu chunks\n",
		      (unsigned long long)emitted, (unsigned long long)in_file,
		      (unsigned long long)tl.events[2], (unsigned long long)tl.events[3],
		      (unsigned long long)tl.dropped_total, (unsigned long long)tl.chunks);
}

static void t_stress_wait(void **state)
{
	(void)state;
	char path[300];
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.thread_buffer_size = 16384;
	o.flush_interval_ms = 5;
	o.full_policy = REC_FULL_WAIT;
	o.codec = REC_CODEC_LZ4;
	rec_event_type *t;
	rec_recorder *r = open_rec("wait.rec", path, sizeof path, &o, &t);
	rec_str s = rec_recorder_intern(r, "stress");
	const uint32_t n = 4;
	warg wa[MAXW];
	for (uint32_t i = 0; i < n; i++)
		wa[i] = (warg){ t, s, i, 50000, NULL, 0, NULL, 0 };
	run_workers(wa, n);
	assert_int_equal(rec_recorder_close(r), REC_OK);
	tally tl;
	tally_file(path, &tl, n);
	assert_int_equal(tl.dup_or_order_errors, 0);
	assert_int_equal(tl.dropped_total, 0);
	for (uint32_t w = 0; w < n; w++) {
		assert_int_equal(wa[w].accepted, 50000);
		assert_int_equal(tl.events[w], 50000);
	}
	assert_int_equal(tl.starts, n);
	assert_int_equal(tl.ends, n);
}

static void t_memory_limit(void **state)
{
	(void)state;
	char path[300];
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.thread_buffer_size = 65536;
	o.memory_limit = 2 * 65536; /* two of the four workers get a buffer */
	o.flush_interval_ms = 5;
	o.full_policy = REC_FULL_WAIT;
	rec_event_type *t;
	rec_recorder *r = open_rec("mem.rec", path, sizeof path, &o, &t);
	rec_str s = rec_recorder_intern(r, "stress");
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, 4);
	warg wa[MAXW];
	for (uint32_t i = 0; i < 4; i++)
		wa[i] = (warg){ t, s, i, 10000, NULL, 0, &bar, 0 };
	/* register all four before any exits: emit one event each first */
	run_workers(wa, 4);
	pthread_barrier_destroy(&bar);
	rec_recorder_stats st;
	rec_recorder_get_stats(r, &st);
	assert_true(st.buffer_bytes <= 2 * 65536);
	assert_int_equal(rec_recorder_close(r), REC_OK);
	tally tl;
	tally_file(path, &tl, 4);
	uint64_t with = 0, in_file = 0;
	for (uint32_t w = 0; w < 4; w++) {
		in_file += tl.events[w];
		with += tl.events[w] == 10000;
	}
	/* threads that got no buffer: everything dropped with reason 1 */
	assert_true(with >= 2);
	assert_int_equal(in_file + tl.starts + tl.ends + tl.dropped_total, 4 * 10002);
	assert_int_equal(tl.dropped_reason[REC_DROP_NO_BUFFER], tl.dropped_total);
	assert_int_equal(tl.dropped_total % 10002, 0);
}

typedef struct close_arg {
	rec_status st;
	rec_recorder *r;
} close_arg;

static void *closer(void *a)
{
	close_arg *c = a;
	rec_t_sleep_ms(30);
	c->st = rec_recorder_close(c->r);
	return NULL;
}

static void t_close_while_emitting(void **state)
{
	(void)state;
	for (int policy = 0; policy < 2; policy++) {
		char path[300];
		rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
		o.thread_buffer_size = 16384;
		o.flush_interval_ms = 5;
		o.full_policy = (uint32_t)policy;
		rec_event_type *t;
		rec_recorder *r = open_rec(policy ? "closew.rec" : "closed.rec", path, sizeof path, &o, &t);
		rec_str s = rec_recorder_intern(r, "stress");
		int stop = 0;
		warg wa[MAXW];
		pthread_t th[MAXW];
		for (uint32_t i = 0; i < 4; i++) {
			wa[i] = (warg){ t, s, i, 0, &stop, 0, NULL, 0 };
			assert_int_equal(pthread_create(&th[i], NULL, worker, &wa[i]), 0);
		}
		/* Every worker registered (its first event accepted) before close
		 * starts: a worker the machine had not run yet would never meet
		 * the recorder and have no rec.ThreadStart (seen under load). */
		for (uint32_t i = 0; i < 4; i++)
			for (int ms = 0; ms < 10000 && !__atomic_load_n(&wa[i].accepted, __ATOMIC_RELAXED); ms++)
				rec_t_sleep_ms(1);
		close_arg c = { REC_ERR_STATE, r };
		pthread_t cth;
		assert_int_equal(pthread_create(&cth, NULL, closer, &c), 0);
		pthread_join(cth, NULL); /* close returned while the workers run */
		assert_int_equal(c.st, REC_OK);
		rec_t_sleep_ms(20); /* they keep emitting into a closed recorder */
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		for (uint32_t i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		tally tl;
		tally_file(path, &tl, 4);
		assert_int_equal(tl.end, REC_END);
		assert_int_equal(tl.finals, 1);
		assert_int_equal(tl.dup_or_order_errors, 0);
		uint64_t accepted = 0, in_file = 0;
		for (uint32_t w = 0; w < 4; w++) {
			accepted += wa[w].accepted;
			in_file += tl.events[w];
			assert_true(wa[w].n > wa[w].accepted); /* kept calling after close */
		}
		assert_true(accepted > 0);
		/* every accepted event is in the file; refused ones were counted as
		 * dropped (full buffer, or a wait cut short by close) or came after
		 * close (not emitted); ThreadEnd came after close */
		assert_int_equal(in_file, accepted);
		uint64_t attempts = 0;
		for (uint32_t w = 0; w < 4; w++)
			attempts += wa[w].n;
		assert_true(in_file + tl.dropped_total <= attempts);
		assert_int_equal(tl.dropped_stat, tl.dropped_total);
		assert_int_equal(tl.starts, 4);
		assert_int_equal(tl.ends, 0);
	}
}

int main(void)
{
	if (rec_t_tmpdir_create(g_dir, sizeof g_dir, "rec-test-recorder-stress") != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_stress_drop),
		cmocka_unit_test(t_stress_wait),
		cmocka_unit_test(t_memory_limit),
		cmocka_unit_test(t_close_while_emitting),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	return rec_t_tmpdir_finish(g_dir, rc); /* kept after a failure */
}
