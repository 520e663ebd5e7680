/* SPDX-License-Identifier: MIT */
/*
 * test_recorder.c - the recorder core for real: real threads, real files,
 * read back with the real reader.  Round trip of typed fields, built-in
 * thread events, dynamic strings, durations under the threshold, stack
 * traces, many
 * short-lived threads, fork() in the host, flight-recorder dumps by API
 * call and by signal.  (The thread rings' pages: test_ring.c; REC_OUTPUT
 * and the options' text: test_env.c; the events settings list:
 * test_types.c; threads exiting with unflushed buffers and periodic
 * callbacks: test_bg.c.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rec/rec.h"
#include "rec/recorder.h"
#include "../../lib/asan.h"
#include "../../lib/child_exit.h"
#include "../../lib/writer_wakeups.h"
#include "../../lib/roundtrip.h"

static char g_dir[256];

static void tmp_path(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", g_dir, name);
}


static const rec_field span_fields[] = {
	{ "what", "What", "", REC_TYPE_STRING, REC_UNIT_NONE },
};
static const rec_type span_def = { 0, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD, "test.Span",
				   "Span", "", "test", 1, span_fields };

static const rec_field stk_fields[] = {
	{ "n", "N", "", REC_TYPE_U32, REC_UNIT_NONE },
};
static const rec_type stk_def = { 0, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "test.Stack",
				  "Stack", "", "test", 1, stk_fields };

/* ---- basic round trip ----------------------------------------------------------- */
/* The chunks of the file at path with the 1.3 SPLIT_EVENTS flag, of all
 * *chunks; every event read. */
static size_t split_chunks(const char *path, size_t *chunks, uint64_t *events)
{
	rec_reader *rd;
	const rec_chunk_info *ci;
	rec_event ev;
	size_t split = 0;
	*chunks = 0;
	*events = 0;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	while (rec_reader_next_chunk(rd, &ci) == REC_OK) {
		(*chunks)++;
		split += (ci->flags & REC_CHUNK_SPLIT_EVENTS) != 0;
		while (rec_reader_next_chunk_event(rd, &ev) == REC_OK)
			(*events)++;
	}
	rec_reader_close(rd);
	return split;
}

/* The recorder's chunks store their events in four streams (1.3) by
 * default, and in one stream with events_layout ONE_STREAM (REC_OPTIONS
 * layout=one); the same events either way. */
static void t_events_layout(void **state)
{
	(void)state;
	for (int one = 0; one < 2; one++) {
		char path[300];
		tmp_path(path, sizeof path, one ? "layout-one.rec" : "layout-split.rec");
		rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
		o.events = "test.*";
		if (one)
			o.events_layout = REC_EVENTS_ONE_STREAM;
		rec_recorder *r = rec_t_open_rec(path, &o);
		rec_event_type *t;
		assert_int_equal(rec_recorder_register_type(r, &rec_t_ev_def, 0, 0, &t), REC_OK);
		rec_str s = rec_recorder_intern(r, "layout");
		for (int i = 0; i < 20000; i++) {
			rec_emit e = { 0 };
			assert_true(rec_emit_begin(&e, t));
			rec_emit_string(&e, s);
			rec_emit_u64(&e, (uint64_t)i);
			rec_emit_i64(&e, -i);
			rec_emit_commit(&e);
			if (i % 5000 == 4999)
				assert_int_equal(rec_recorder_flush(r), REC_OK);
		}
		assert_int_equal(rec_recorder_close(r), REC_OK);
		size_t chunks;
		uint64_t events;
		size_t split = split_chunks(path, &chunks, &events);
		assert_true(events >= 20000);
		assert_true(chunks >= 4);
		if (one)
			assert_int_equal(split, 0);
		else
			assert_true(split >= 4); /* each flush's 5000 events */
	}
}

static void t_roundtrip(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "rt.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	rec_recorder *r = rec_t_open_rec(path, &o);
	rec_event_type *t;
	assert_int_equal(rec_recorder_register_type(r, &rec_t_ev_def, 0, 0, &t), REC_OK);
	assert_true(rec_event_type_id(t) >= REC_TYPE_ID_USER_MIN);
	/* the same name twice is refused */
	rec_event_type *t2;
	assert_int_equal(rec_recorder_register_type(r, &rec_t_ev_def, 0, 0, &t2), REC_ERR_INVALID_ARG);
	rec_str s = rec_recorder_intern(r, "hello-world!");
	assert_true(s.id != 0);
	assert_int_equal(rec_recorder_intern(r, "hello-world!").id, s.id);
	pthread_setname_np(pthread_self(), "rt-main");
	for (int i = 0; i < 100; i++) {
		rec_emit e = { 0 };
		assert_true(rec_emit_begin(&e, t));
		if (i % 2)
			rec_emit_string(&e, s);
		else
			rec_emit_string_dyn(&e, i % 4 ? "dyn-a" : "dyn-b");
		rec_emit_u64(&e, (uint64_t)i * 1000003u);
		rec_emit_i64(&e, -i);
		rec_emit_commit(&e);
	}
	uint64_t my_tid = (uint64_t)gettid();
	assert_int_equal(rec_recorder_close(r), REC_OK);
	/* After close the handle is still valid and off. */
	rec_emit e = { 0 };
	assert_false(rec_emit_begin(&e, t));

	rec_t_readback rb;
	rec_t_rb_read(path, &rb);
	assert_int_equal(rb.end, REC_END);
	assert_int_equal(rb.final_chunks, 1);
	assert_int_equal(rec_t_rb_count(&rb, "test.Ev"), 100);
	assert_int_equal(rec_t_rb_count(&rb, "rec.ThreadStart"), 1);
	assert_int_equal(rec_t_rb_count(&rb, "rec.Dropped"), 0);
	assert_true(rec_t_rb_count(&rb, "rec.Process") >= 1); /* one per chunk with records */
	assert_true(rec_t_rb_count(&rb, "rec.Process") <= rb.chunks);
	int k = 0;
	uint64_t prev = 0;
	for (size_t i = 0; i < rb.n; i++) {
		rec_t_evrec *x = &rb.ev[i];
		if (strcmp(x->type, "rec.ThreadStart") == 0) {
			assert_int_equal(x->u[0], my_tid);
			assert_string_equal(x->s[1], "rt-main");
			assert_int_equal(x->os_tid, my_tid);
			continue;
		}
		if (strcmp(x->type, "rec.Process") == 0) { /* the program, in every chunk */
			assert_string_equal(x->s[0], "test_recorder");
			assert_non_null(strstr(x->s[1], "/test_recorder"));
			assert_non_null(strstr(x->s[2], "test_recorder"));
			assert_int_equal(x->u[3], (uint64_t)getppid());
			continue;
		}
		assert_string_equal(x->type, "test.Ev");
		assert_string_equal(x->s[0], k % 2 ? "hello-world!" : (k % 4 ? "dyn-a" : "dyn-b"));
		assert_int_equal(x->u[1], (uint64_t)k * 1000003u);
		assert_int_equal(x->i[2], -k);
		assert_int_equal(x->os_tid, my_tid);
		assert_string_equal(x->thread_name, "rt-main");
		assert_true(x->ticks >= prev);
		prev = x->ticks;
		k++;
	}
	assert_true(rb.frequency >= 1000000u);
	rec_t_rb_free(&rb);
}

/* ---- dynamic strings: the per-thread cache ------------------------------------- */
/* The string of emit i: its length around the cache slots' copies (36
 * bytes by content, 44 by address) and beyond, its bytes from i % 97 (more
 * strings than the cache's 64 slots, so slots are taken over), written into
 * one of two buffers that the emits reuse (the same address with other
 * bytes, the same bytes at another address, and strings that differ only
 * after a copy's end). */
static size_t dyn_string(char *buf, int i)
{
	static const size_t lens[] = { 0, 1, 14, 35, 36, 37, 44, 45, 63, 200 };
	const size_t len = lens[i % 10];
	const int v = i % 97;
	for (size_t k = 0; k < len; k++)
		buf[k] = (char)('a' + (k + 7) % 26);
	if (len)
		buf[len - 1] = (char)('A' + v % 26); /* past the inline copy for 37, 63, 200 */
	if (len > 1)
		buf[0] = (char)('0' + v % 10);
	buf[len] = 0;
	return len;
}

static void t_dyn_strings(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "dyn.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	rec_recorder *r = rec_t_open_rec(path, &o);
	rec_event_type *t;
	assert_int_equal(rec_recorder_register_type(r, &rec_t_ev_def, 0, 0, &t), REC_OK);
	char buf[2][256];
	const int n = 4000;
	for (int i = 0; i < n; i++) {
		rec_emit e = { 0 };
		assert_true(rec_emit_begin(&e, t));
		char *b = buf[i % 3 == 0];
		rec_emit_string_dyn_len(&e, b, dyn_string(b, i));
		rec_emit_u64(&e, (uint64_t)i);
		rec_emit_i64(&e, 0);
		rec_emit_commit(&e);
	}
	assert_int_equal(rec_recorder_close(r), REC_OK);

	rec_reader *rd;
	assert_int_equal(rec_reader_open_path(&rd, path, NULL), REC_OK);
	rec_event ev;
	rec_status st;
	int seen = 0;
	char want[256];
	while ((st = rec_reader_next_event(rd, &ev)) == REC_OK) {
		if (strcmp(ev.type->name, "test.Ev") != 0)
			continue;
		const int i = (int)ev.values[1].v.u;
		assert_int_equal(i, seen);
		const size_t len = dyn_string(want, i);
		assert_non_null(ev.values[0].v.s.ptr);
		assert_int_equal(ev.values[0].v.s.len, len);
		assert_memory_equal(ev.values[0].v.s.ptr, want, len);
		seen++;
	}
	assert_int_equal(st, REC_END);
	rec_reader_close(rd);
	assert_int_equal(seen, n);
}

/* ---- a file that exists is replaced --------------------------------------------- */
/* rec_recorder_open() does not truncate (the background thread does, so the
 * program's start-up does not wait for the old blocks to be freed): the
 * recording must still end up alone in the file, also when the recorder is
 * closed at once. */
static void t_overwrite(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "over.rec");
	for (int round = 0; round < 2; round++) {
		FILE *f = fopen(path, "wb");
		assert_non_null(f);
		static uint8_t junk[64 * 1024];
		memset(junk, 0xAB, sizeof junk);
		for (int i = 0; i < 4; i++)
			assert_int_equal(fwrite(junk, 1, sizeof junk, f), sizeof junk);
		assert_int_equal(fclose(f), 0);

		rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
		rec_recorder *r = rec_t_open_rec(path, &o);
		rec_event_type *t;
		assert_int_equal(rec_recorder_register_type(r, &rec_t_ev_def, 0, 0, &t), REC_OK);
		int n = round == 0 ? 100 : 0; /* round 1: closed right after opening */
		for (int i = 0; i < n; i++) {
			rec_emit e = { 0 };
			assert_true(rec_emit_begin(&e, t));
			rec_emit_string_dyn(&e, "x");
			rec_emit_u64(&e, (uint64_t)i);
			rec_emit_i64(&e, i);
			rec_emit_commit(&e);
		}
		assert_int_equal(rec_recorder_close(r), REC_OK);

		struct stat sb;
		assert_int_equal(stat(path, &sb), 0);
		assert_true(sb.st_size > 0 && sb.st_size < 64 * 1024);
		rec_t_readback rb;
		rec_t_rb_read(path, &rb);
		assert_int_equal(rb.end, REC_END);
		assert_int_equal(rb.final_chunks, 1);
		assert_int_equal(rec_t_rb_count(&rb, "test.Ev"), (size_t)n);
		rec_t_rb_free(&rb);
	}
}

/* A process that dies right after opening (SIGKILL before its background
 * thread ran) must not leave an earlier recording at the path, where a
 * reader would take it for this run's: the path holds a new file from the
 * open on (the earlier one's blocks are freed later).  A file with a second
 * link is emptied in place instead (the other name must not keep the old
 * bytes either, once the background thread ran). */
static void write_junk(const char *path, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(fputc(0xAB, f), 0xAB);
	assert_int_equal(fclose(f), 0);
}

static void t_overwrite_killed(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "killed.rec");
	for (int round = 0; round < 5; round++) {
		write_junk(path, 256 * 1024);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
			o.path = path;
			rec_recorder *r = NULL;
			if (rec_recorder_open(&r, &o) != REC_OK)
				_exit(3);
			raise(SIGKILL);
			_exit(4);
		}
		int st = 0;
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
		struct stat sb;
		assert_int_equal(stat(path, &sb), 0);
		assert_true(sb.st_size < 64 * 1024); /* not the 256 KiB of junk */
		FILE *f = fopen(path, "rb");
		assert_non_null(f);
		int c = fgetc(f);
		assert_true(c == EOF || c != 0xAB);
		fclose(f);
	}
	/* a second name: emptied in place by the background thread */
	char other[320];
	snprintf(other, sizeof other, "%s.link", path);
	write_junk(path, 256 * 1024);
	unlink(other);
	assert_int_equal(link(path, other), 0);
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	rec_recorder *r = rec_t_open_rec(path, &o);
	assert_int_equal(rec_recorder_close(r), REC_OK);
	struct stat a, b;
	assert_int_equal(stat(path, &a), 0);
	assert_int_equal(stat(other, &b), 0);
	assert_true(a.st_ino == b.st_ino && a.st_size < 64 * 1024);
	rec_t_readback rb;
	rec_t_rb_read(other, &rb);
	assert_int_equal(rb.end, REC_END);
	assert_int_equal(rb.final_chunks, 1);
	rec_t_rb_free(&rb);
	unlink(other);
}

/* ---- durations and thresholds (deterministic clock) -------------------------------- */
static uint64_t g_fake_ticks;
static uint64_t fake_clock(void *opaque)
{
	(void)opaque;
	return __atomic_load_n(&g_fake_ticks, __ATOMIC_RELAXED);
}

static void t_threshold(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "thr.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.clock = fake_clock;
	o.clock_frequency = 1000000000u;
	o.anchor_wall_ns = 1700000000000000000;
	o.run_id = 42;
	g_fake_ticks = 1000;
	rec_recorder *r = rec_t_open_rec(path, &o);
	rec_event_type *t;
	assert_int_equal(rec_recorder_register_type(r, &span_def, 1000000 /* 1 ms */, 0, &t), REC_OK);
	rec_str s = rec_recorder_intern(r, "x");
	for (int i = 0; i < 10; i++) {
		rec_span sp;
		rec_emit e = { 0 };
		rec_span_begin(&sp, t);
		/* even: 999 us (below), odd: 1000 us + i (kept) */
		__atomic_fetch_add(&g_fake_ticks, i % 2 ? 1000000u + (uint64_t)i : 999000u, __ATOMIC_RELAXED);
		if (rec_span_end(&sp, &e)) {
			rec_emit_string(&e, s);
			rec_emit_commit(&e);
		}
		__atomic_fetch_add(&g_fake_ticks, 10u, __ATOMIC_RELAXED);
	}
	/* rec_emit_begin_at with explicit ticks */
	rec_emit e = { 0 };
	assert_false(rec_emit_begin_at(&e, t, 5000, 5000 + 999999));
	assert_true(rec_emit_begin_at(&e, t, 5000, 5000 + 1000000));
	rec_emit_string(&e, s);
	rec_emit_commit(&e);
	assert_int_equal(rec_recorder_close(r), REC_OK);

	rec_t_readback rb;
	rec_t_rb_read(path, &rb);
	assert_int_equal(rec_t_rb_count(&rb, "test.Span"), 6);
	int k = 1;
	for (size_t i = 0; i < rb.n; i++) {
		if (strcmp(rb.ev[i].type, "test.Span") != 0)
			continue;
		if (k < 10) {
			assert_int_equal(rb.ev[i].duration, 1000000u + (uint64_t)k);
			k += 2;
		} else {
			assert_int_equal(rb.ev[i].ticks, 5000);
			assert_int_equal(rb.ev[i].duration, 1000000u);
		}
	}
	assert_int_equal(rb.frequency, 1000000000u);
	rec_t_rb_free(&rb);
}

/* ---- stack traces -------------------------------------------------------------------------- */
void rec_test_stack_leaf(rec_event_type *t, uint32_t n);
__attribute__((noinline)) void rec_test_stack_leaf(rec_event_type *t, uint32_t n)
{
	rec_emit e = { 0 };
	if (rec_emit_begin(&e, t)) {
		rec_emit_u64(&e, n);
		rec_emit_commit(&e);
	}
	__asm__ __volatile__("" ::: "memory");
}

static void t_stack(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "stk.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	rec_recorder *r = rec_t_open_rec(path, &o);
	rec_event_type *t;
	assert_int_equal(rec_recorder_register_type(r, &stk_def, 0, REC_DECLARE_STACK, &t), REC_OK);
	for (uint32_t i = 0; i < 50; i++)
		rec_test_stack_leaf(t, i);
	assert_int_equal(rec_recorder_close(r), REC_OK);
	rec_t_readback rb;
	rec_t_rb_read(path, &rb);
	assert_int_equal(rec_t_rb_count(&rb, "test.Stack"), 50);
	for (size_t i = 0; i < rb.n; i++) {
		if (strcmp(rb.ev[i].type, "test.Stack") != 0)
			continue;
		assert_true(rb.ev[i].stack_depth >= 2);
		assert_string_equal(rb.ev[i].leaf_fn, "rec_test_stack_leaf");
	}
	rec_t_rb_free(&rb);
}

/* ---- threads exiting with unflushed buffers; many short-lived threads ------------------------ */

static void t_short_lived(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "short.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.flush_interval_ms = 20;
	o.thread_buffer_size = 16384;
	o.memory_limit = 8 * 16384; /* 8 live buffers for 200 threads: orphans must be freed */
	rec_recorder *r = rec_t_open_rec(path, &o);
	rec_event_type *t;
	assert_int_equal(rec_recorder_register_type(r, &rec_t_ev_def, 0, 0, &t), REC_OK);
	rec_str s = rec_recorder_intern(r, "short");
	const uint32_t rounds = 50, per = 4;
	rec_t_targ ta[4];
	for (uint32_t k = 0; k < rounds; k++) {
		pthread_t th[4];
		for (uint32_t i = 0; i < per; i++) {
			ta[i] = (rec_t_targ){ t, s, k * per + i, 20 };
			assert_int_equal(pthread_create(&th[i], NULL, rec_t_emit_n, &ta[i]), 0);
		}
		for (uint32_t i = 0; i < per; i++)
			pthread_join(th[i], NULL);
		assert_int_equal(rec_recorder_flush(r), REC_OK); /* orphans freed */
	}
	rec_recorder_stats st;
	rec_recorder_get_stats(r, &st);
	assert_int_equal(st.threads, rounds * per);
	assert_true(st.buffer_bytes <= 8 * 16384);
	/* 50 flushes wrote chunks: the background thread used CPU, and it is
	 * reported (bench/hotpath divides it by the events recorded) */
	assert_true(st.chunks >= 1);
	assert_true(st.background_cpu_ns > 0);
	assert_true(st.background_cpu_ns < 60ull * 1000000000ull);
	assert_int_equal(rec_recorder_close(r), REC_OK);
	rec_t_readback rb;
	rec_t_rb_read(path, &rb);
	/* emitted = in file + dropped (no-buffer threads drop everything) */
	size_t evs = rec_t_rb_count(&rb, "test.Ev"), starts = rec_t_rb_count(&rb, "rec.ThreadStart"),
	       ends = rec_t_rb_count(&rb, "rec.ThreadEnd");
	assert_int_equal(evs + starts + ends + rb.dropped_events, rounds * per * (20 + 2));
	assert_int_equal(rb.dropped_stat, rb.dropped_events);
	/* with a drain between rounds, buffers were recycled: nothing lost */
	assert_int_equal(evs, rounds * per * 20);
	assert_int_equal(starts, rounds * per);
	assert_int_equal(ends, rounds * per);
	rec_t_rb_free(&rb);
}

/* Each thread's events and rec.ThreadStart name its own kernel thread id
 * (the recorder reads it without a system call; gettid() is the truth). */
static void *emit_own_tid(void *a)
{
	rec_t_targ *ta = a;
	rec_t_emit_ev(ta->t, ta->s, (uint64_t)gettid(), (int64_t)ta->id);
	return NULL;
}

static void t_thread_tids(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "tids.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	rec_recorder *r = rec_t_open_rec(path, &o);
	rec_event_type *t;
	assert_int_equal(rec_recorder_register_type(r, &rec_t_ev_def, 0, 0, &t), REC_OK);
	rec_str s = rec_recorder_intern(r, "tid");
	enum { N = 6 };
	rec_t_targ ta[N];
	pthread_t th[N];
	for (uint32_t i = 0; i < N; i++) {
		ta[i] = (rec_t_targ){ t, s, i, 1 };
		assert_int_equal(pthread_create(&th[i], NULL, emit_own_tid, &ta[i]), 0);
	}
	for (uint32_t i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(rec_recorder_close(r), REC_OK);
	rec_t_readback rb;
	rec_t_rb_read(path, &rb);
	uint64_t tids[N] = { 0 };
	for (size_t i = 0; i < rb.n; i++)
		if (strcmp(rb.ev[i].type, "test.Ev") == 0) {
			assert_true(rb.ev[i].i[2] >= 0 && rb.ev[i].i[2] < N);
			assert_int_not_equal(rb.ev[i].u[1], 0);
			assert_int_equal(rb.ev[i].os_tid, rb.ev[i].u[1]);
			tids[rb.ev[i].i[2]] = rb.ev[i].u[1];
		}
	for (uint32_t k = 0; k < N; k++) {
		assert_int_not_equal(tids[k], 0);
		assert_int_not_equal(tids[k], (uint64_t)getpid());
		size_t starts = 0;
		for (size_t i = 0; i < rb.n; i++)
			if (strcmp(rb.ev[i].type, "rec.ThreadStart") == 0 && rb.ev[i].u[0] == tids[k])
				starts++;
		assert_int_equal(starts, 1);
	}
	rec_t_rb_free(&rb);
}

/* ---- fork ---------------------------------------------------------------------------------- */
static void t_fork(void **state)
{
	(void)state;
	char path[300], cpath[300];
	tmp_path(path, sizeof path, "parent.rec");
	tmp_path(cpath, sizeof cpath, "child.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.flush_interval_ms = 10;
	rec_recorder *r = rec_t_open_rec(path, &o);
	rec_event_type *t;
	assert_int_equal(rec_recorder_register_type(r, &rec_t_ev_def, 0, 0, &t), REC_OK);
	rec_str s = rec_recorder_intern(r, "parent");
	/* a background emitter keeps the recorder's locks busy around fork() */
	rec_t_targ bg = { t, s, 99, 20000 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, rec_t_emit_n, &bg), 0);
	for (int i = 0; i < 10; i++) {
		rec_emit e = { 0 };
		assert_true(rec_emit_begin(&e, t));
		rec_emit_string(&e, s);
		rec_emit_u64(&e, (uint64_t)i);
		rec_emit_i64(&e, 1);
		rec_emit_commit(&e);
	}
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int bad = 0;
		rec_emit e = { 0 };
		/* inherited recorder: off, nothing written, close is harmless */
		if (rec_emit_begin(&e, t))
			bad |= 1;
		if (rec_recorder_dump(r, NULL) != REC_ERR_STATE)
			bad |= 2;
		if (rec_recorder_close(r) != REC_OK)
			bad |= 4;
#if TEST_UNDER_ASAN
		/* ASan's allocator is not fork-safe (a lock held by another parent
		 * thread at fork() stays held in the child); glibc's malloc is, so
		 * the fresh-recorder part runs in the normal build only. */
		rec_t_child_exit(bad ? bad : 32);
#endif
		/* a fresh recorder works in the child */
		rec_recorder_options co = REC_RECORDER_OPTIONS_INIT;
		co.path = cpath;
		rec_recorder *cr = NULL;
		rec_event_type *ct = NULL;
		if (rec_recorder_open(&cr, &co) != REC_OK ||
		    rec_recorder_register_type(cr, &rec_t_ev_def, 0, 0, &ct) != REC_OK)
			rec_t_child_exit(8);
		for (int i = 0; i < 7; i++)
			if (rec_emit_begin(&e, ct)) {
				rec_emit_string(&e, rec_recorder_intern(cr, "child"));
				rec_emit_u64(&e, (uint64_t)gettid()); /* the child's, not the parent's */
				rec_emit_i64(&e, 2);
				rec_emit_commit(&e);
			}
		if (rec_recorder_close(cr) != REC_OK)
			bad |= 16;
		rec_t_child_exit(bad);
	}
	int ws;
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), TEST_UNDER_ASAN ? 32 : 0);
	for (int i = 10; i < 20; i++) {
		rec_emit e = { 0 };
		assert_true(rec_emit_begin(&e, t));
		rec_emit_string(&e, s);
		rec_emit_u64(&e, (uint64_t)i);
		rec_emit_i64(&e, 1);
		rec_emit_commit(&e);
	}
	pthread_join(th, NULL);
	assert_int_equal(rec_recorder_close(r), REC_OK);

	rec_t_readback rb;
	rec_t_rb_read(path, &rb);
	assert_int_equal(rb.end, REC_END);
	assert_int_equal(rb.final_chunks, 1);
	uint64_t next = 0, child = 0, bgn = 0;
	for (size_t i = 0; i < rb.n; i++) {
		if (strcmp(rb.ev[i].type, "test.Ev") != 0)
			continue;
		if (rb.ev[i].i[2] == 1)
			assert_int_equal(rb.ev[i].u[1], next++);
		else if (rb.ev[i].i[2] == 2)
			child++;
		else
			bgn++;
	}
	assert_int_equal(next, 20);
	assert_int_equal(child, 0);
	/* the emitter thread: every event (and its ThreadEnd) in the file or dropped */
	assert_int_equal(bgn + rec_t_rb_count(&rb, "rec.ThreadEnd") + rb.dropped_events, 20000 + 1);
	rec_t_rb_free(&rb);
	if (TEST_UNDER_ASAN)
		return;
	rec_t_rb_read(cpath, &rb);
	assert_int_equal(rec_t_rb_count(&rb, "test.Ev"), 7);
	size_t last = rb.n; /* the last test.Ev (rec.Process ends the chunk's records) */
	while (last && strcmp(rb.ev[last - 1].type, "test.Ev") != 0)
		last--;
	assert_true(last > 0);
	assert_string_equal(rb.ev[last - 1].s[0], "child");
	for (size_t i = 0; i < rb.n; i++)
		if (strcmp(rb.ev[i].type, "test.Ev") == 0) {
			assert_int_equal(rb.ev[i].u[1], (uint64_t)pid);
			assert_int_equal(rb.ev[i].os_tid, (uint64_t)pid);
		}
	rec_t_rb_free(&rb);
}

/* ---- flight recorder -------------------------------------------------------------------------- */
static void emit_marks(rec_event_type *t, rec_str s, int64_t mark, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		rec_emit e = { 0 };
		if (rec_emit_begin(&e, t)) {
			rec_emit_string(&e, s);
			rec_emit_u64(&e, i);
			rec_emit_i64(&e, mark);
			rec_emit_commit(&e);
		}
	}
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static size_t count_mark(const rec_t_readback *rb, int64_t mark)
{
	size_t n = 0;
	for (size_t i = 0; i < rb->n; i++)
		n += strcmp(rb->ev[i].type, "test.Ev") == 0 && rb->ev[i].i[2] == mark;
	return n;
}

static void t_flight_dump(void **state)
{
	(void)state;
	char path[300], dump[300];
	tmp_path(path, sizeof path, "flight-final.rec");
	tmp_path(dump, sizeof dump, "flight-dump.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.flags = REC_RECORDER_FLIGHT | REC_RECORDER_NO_SIGNAL;
	o.flush_interval_ms = 20;
	o.max_age_ms = 200;
	rec_recorder *r = rec_t_open_rec(path, &o);
	rec_event_type *t;
	assert_int_equal(rec_recorder_register_type(r, &rec_t_ev_def, 0, 0, &t), REC_OK);
	rec_str s = rec_recorder_intern(r, "flight");
	emit_marks(t, s, 1, 100); /* old */
	assert_int_equal(rec_recorder_flush(r), REC_OK);
	sleep_ms(500); /* older than max_age now */
	emit_marks(t, s, 2, 100); /* recent */
	assert_int_equal(rec_recorder_dump(r, dump), REC_OK);
	rec_t_readback rb;
	rec_t_rb_read(dump, &rb);
	assert_int_equal(rb.end, REC_END);
	assert_int_equal(count_mark(&rb, 1), 0);
	assert_int_equal(count_mark(&rb, 2), 100);
	rec_t_rb_free(&rb);
	/* nothing was written to the path before close */
	struct stat sb;
	assert_int_not_equal(stat(path, &sb), 0);
	emit_marks(t, s, 3, 10);
	assert_int_equal(rec_recorder_close(r), REC_OK);
	rec_t_rb_read(path, &rb);
	assert_int_equal(rb.final_chunks, 1);
	assert_int_equal(count_mark(&rb, 3), 10);
	rec_t_rb_free(&rb);

	/* by size: a tiny max_size keeps only the newest chunk (chunks are cut
	 * only by the explicit flush and by close here) */
	tmp_path(path, sizeof path, "flight-size.rec");
	o.max_age_ms = 0;
	o.max_size = 1;
	o.flush_interval_ms = 60000;
	r = rec_t_open_rec(path, &o);
	assert_int_equal(rec_recorder_register_type(r, &rec_t_ev_def, 0, 0, &t), REC_OK);
	s = rec_recorder_intern(r, "flight");
	emit_marks(t, s, 1, 100);
	assert_int_equal(rec_recorder_flush(r), REC_OK);
	emit_marks(t, s, 2, 50);
	assert_int_equal(rec_recorder_close(r), REC_OK);
	rec_t_rb_read(path, &rb);
	assert_int_equal(count_mark(&rb, 1), 0);
	assert_int_equal(count_mark(&rb, 2), 50);
	assert_int_equal(rb.final_chunks, 1);
	rec_t_rb_free(&rb);
}

static void t_flight_signal(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "flight-sig.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.flags = REC_RECORDER_FLIGHT;
	o.flush_interval_ms = 20;
	o.max_age_ms = 200;
	o.dump_signal = SIGUSR1;
	rec_recorder *r = rec_t_open_rec(path, &o);
	rec_event_type *t;
	assert_int_equal(rec_recorder_register_type(r, &rec_t_ev_def, 0, 0, &t), REC_OK);
	rec_str s = rec_recorder_intern(r, "sig");
	emit_marks(t, s, 1, 100);
	assert_int_equal(rec_recorder_flush(r), REC_OK);
	sleep_ms(500);
	emit_marks(t, s, 2, 40);
	struct stat sb;
	assert_int_not_equal(stat(path, &sb), 0);
	assert_int_equal(kill(getpid(), SIGUSR1), 0);
	int waited = 0;
	while (stat(path, &sb) != 0 && waited < 3000) {
		sleep_ms(10);
		waited += 10;
	}
	assert_int_equal(stat(path, &sb), 0);
	sleep_ms(100); /* let the dump finish writing */
	rec_t_readback rb;
	rec_t_rb_read(path, &rb);
	assert_int_equal(rb.end, REC_END);
	assert_int_equal(count_mark(&rb, 1), 0);
	assert_int_equal(count_mark(&rb, 2), 40);
	rec_t_rb_free(&rb);
	assert_int_equal(rec_recorder_close(r), REC_OK);
	/* the handler was removed: SIGUSR1 is back to its previous disposition */
	struct sigaction sa;
	sigaction(SIGUSR1, NULL, &sa);
	assert_true(sa.sa_handler == SIG_DFL);
}

/* An idle flight recorder sleeps until its flush interval (it polled the
 * dump signal's flag every 50 ms before: 20 wake-ups a second, issue 22);
 * the signal's handler wakes it, so the dump comes long before the flush
 * interval would have. */
static void t_flight_signal_idle(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "flight-idle.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.flags = REC_RECORDER_FLIGHT;
	o.flush_interval_ms = 10000;
	o.dump_signal = SIGUSR1;
	rec_recorder *r = rec_t_open_rec(path, &o);
	rec_event_type *t;
	assert_int_equal(rec_recorder_register_type(r, &rec_t_ev_def, 0, 0, &t), REC_OK);
	rec_str s = rec_recorder_intern(r, "idle");
	emit_marks(t, s, 3, 25);
	sleep_ms(300); /* the rounds after the marks slow down */
	long w0 = rec_t_writer_wakeups();
	sleep_ms(1000);
	long w1 = rec_t_writer_wakeups();
	print_message("idle flight recorder: %ld wake-ups in 1 s\n", w1 - w0);
	assert_true(w0 >= 0 && w1 >= w0);
	if (getenv("REC_TEST_SCALE") == NULL) /* valgrind serializes threads */
		assert_true(w1 - w0 <= 4);
	struct stat sb;
	assert_int_not_equal(stat(path, &sb), 0);
	assert_int_equal(kill(getpid(), SIGUSR1), 0);
	int waited = 0;
	while (stat(path, &sb) != 0 && waited < 5000) {
		sleep_ms(10);
		waited += 10;
	}
	print_message("dumped %d ms after the signal\n", waited);
	assert_int_equal(stat(path, &sb), 0);
	assert_true(waited < 5000); /* before the 10 s flush interval */
	assert_int_equal(rec_recorder_close(r), REC_OK);
	rec_t_readback rb;
	rec_t_rb_read(path, &rb);
	assert_int_equal(rb.end, REC_END);
	assert_int_equal(count_mark(&rb, 3), 25);
	rec_t_rb_free(&rb);
}

/* ---- a record that does not match its type ----------------------------------------------- */
static const rec_field two_fields[] = {
	{ "a", "A", "", REC_TYPE_U64, REC_UNIT_NONE },
	{ "b", "B", "", REC_TYPE_U64, REC_UNIT_NONE },
};
static const rec_type two_def = { 0, 0, "test.Two", "", "", "test", 2, two_fields };
static int g_err_calls;
static rec_status g_err_status;
static void on_error(void *opaque, rec_status st, const char *msg)
{
	(void)opaque;
	(void)msg;
	g_err_calls++;
	g_err_status = st;
}

static void t_rejected(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "rej.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.on_error = on_error;
	rec_recorder *r = rec_t_open_rec(path, &o);
	rec_event_type *t;
	assert_int_equal(rec_recorder_register_type(r, &two_def, 0, 0, &t), REC_OK);
	for (int round = 0; round < 2; round++) {
		for (uint64_t i = 0; i < 10; i++) {
			rec_emit e = { 0 };
			assert_true(rec_emit_begin(&e, t));
			rec_emit_u64(&e, i);
			if (i % 3) /* every third one misses a field */
				rec_emit_u64(&e, i);
			rec_emit_commit(&e);
		}
		assert_int_equal(rec_recorder_flush(r), REC_OK);
	}
	assert_int_equal(g_err_calls, 1); /* once per failure kind */
	assert_int_equal(g_err_status, REC_ERR_INVALID_ARG);
	assert_int_equal(rec_recorder_close(r), REC_ERR_INVALID_ARG);
	rec_t_readback rb;
	rec_t_rb_read(path, &rb);
	assert_int_equal(rb.end, REC_END);
	assert_int_equal(rec_t_rb_count(&rb, "test.Two"), 2 * 6);
	assert_int_equal(rb.dropped_events, 2 * 4);
	assert_int_equal(rb.dropped_stat, 2 * 4);
	for (size_t i = 0; i < rb.n; i++)
		if (strcmp(rb.ev[i].type, "rec.Dropped") == 0)
			assert_int_equal(rb.ev[i].u[2], REC_DROP_REJECTED);
	rec_t_rb_free(&rb);
}

/* A record naming a thread or string id the recorder never defined (a
 * program's mistake) is rejected and counted as dropped; the records around
 * it are written, and chunks keep being built (it used to block them all:
 * the writer kept it pending until close, and everything after it was lost). */
static const rec_field refs_fields[] = {
	{ "other", "Other", "", REC_TYPE_THREAD, REC_UNIT_NONE },
	{ "s", "S", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "n", "N", "", REC_TYPE_U64, REC_UNIT_NONE },
};
static const rec_type refs_def = { 0, REC_EVENT_HAS_THREAD, "test.Refs", "", "", "test", 3, refs_fields };

static void emit_refs(rec_event_type *t, uint64_t other, rec_str s, uint64_t n)
{
	rec_emit e = { 0 };
	assert_true(rec_emit_begin(&e, t));
	rec_emit_thread(&e, other);
	rec_emit_string(&e, s);
	rec_emit_u64(&e, n);
	rec_emit_commit(&e);
}

static void t_undefined_refs(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "refs.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.on_error = on_error;
	g_err_calls = 0;
	rec_recorder *r = rec_t_open_rec(path, &o);
	rec_event_type *t;
	assert_int_equal(rec_recorder_register_type(r, &refs_def, 0, 0, &t), REC_OK);
	uint64_t me = rec_recorder_thread_id(r);
	assert_int_not_equal(me, 0);
	rec_str s = rec_recorder_intern(r, "ok");
	uint64_t n = 0;
	for (int i = 0; i < 5; i++)
		emit_refs(t, me, s, n++);
	emit_refs(t, 987654321, s, 1000);          /* no such thread */
	emit_refs(t, me, (rec_str){ 55555 }, 1001); /* no such string */
	for (int i = 0; i < 5; i++)
		emit_refs(t, me, s, n++);
	assert_int_equal(rec_recorder_flush(r), REC_OK);
	rec_recorder_stats st;
	rec_recorder_get_stats(r, &st);
	assert_true(st.chunks >= 1);
	assert_int_equal(st.dropped, 2);
	for (int i = 0; i < 5; i++)
		emit_refs(t, me, s, n++);
	/* close says records were rejected, as for t_rejected's */
	assert_int_equal(rec_recorder_close(r), REC_ERR_INVALID_ARG);
	assert_true(g_err_calls >= 1);
	rec_t_readback rb;
	rec_t_rb_read(path, &rb);
	assert_int_equal(rb.end, REC_END);
	assert_int_equal(rec_t_rb_count(&rb, "test.Refs"), 15);
	assert_int_equal(rb.dropped_events, 2);
	assert_int_equal(rb.dropped_stat, 2);
	uint64_t next = 0;
	for (size_t i = 0; i < rb.n; i++) {
		if (strcmp(rb.ev[i].type, "rec.Dropped") == 0)
			assert_int_equal(rb.ev[i].u[2], REC_DROP_REJECTED);
		if (strcmp(rb.ev[i].type, "test.Refs") != 0)
			continue;
		assert_int_equal(rb.ev[i].u[2], next++);
		assert_int_equal(rb.ev[i].u[0], me);
		assert_string_equal(rb.ev[i].s[1], "ok");
	}
	rec_t_rb_free(&rb);
}

/* ---- emitting from a signal handler ---------------------------------------------------------- */
static rec_event_type *g_sig_type;
static int g_sig_result;
static const uintptr_t g_sig_pcs[3] = { 0x1000, 0x2000, 0x3000 };
static void sig_emit(int sig)
{
	(void)sig;
	rec_emit e;
	g_sig_result = 0;
	if (rec_emit_begin_signal_pcs(&e, g_sig_type, rec_type_ticks(g_sig_type), 0, g_sig_pcs, 3, 0)) {
		rec_emit_u64(&e, 77);
		rec_emit_commit(&e);
		g_sig_result = 1;
	}
}

static void t_signal(void **state)
{
	(void)state;
	char path[300];
	tmp_path(path, sizeof path, "sig.rec");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	rec_recorder *r = rec_t_open_rec(path, &o);
	assert_int_equal(rec_recorder_register_type(r, &stk_def, 0, 0, &g_sig_type), REC_OK);
	assert_int_equal(rec_recorder_attach_thread(r), REC_OK);
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = sig_emit;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	/* outside any emit: recorded, with the given stack */
	raise(SIGUSR1);
	assert_int_equal(g_sig_result, 1);
	/* interrupting an emit of the same thread: dropped and counted (reason 2) */
	rec_emit e = { 0 };
	assert_true(rec_emit_begin(&e, g_sig_type));
	raise(SIGUSR1);
	assert_int_equal(g_sig_result, 0);
	rec_emit_u64(&e, 5);
	rec_emit_commit(&e);
	sigaction(SIGUSR1, &old, NULL);
	assert_int_equal(rec_recorder_close(r), REC_OK);
	rec_t_readback rb;
	rec_t_rb_read(path, &rb);
	assert_int_equal(rec_t_rb_count(&rb, "test.Stack"), 2);
	assert_int_equal(rb.dropped_events, 1);
	for (size_t i = 0; i < rb.n; i++) {
		if (strcmp(rb.ev[i].type, "test.Stack") == 0 && rb.ev[i].u[0] == 77)
			assert_int_equal(rb.ev[i].stack_depth, 3);
		if (strcmp(rb.ev[i].type, "rec.Dropped") == 0)
			assert_int_equal(rb.ev[i].u[2], REC_DROP_NESTED);
	}
	rec_t_rb_free(&rb);
}

/* ---- deterministic output (clock and run identity injected) --------------------------------- */
static const rec_field det_fields[] = {
	{ "name", "Name", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "n", "N", "", REC_TYPE_U64, REC_UNIT_NONE },
};
static const rec_type det_def = { 0, REC_EVENT_HAS_DURATION, "test.Det", "", "", "test", 2,
				  det_fields };

static void record_det(const char *path)
{
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.clock = fake_clock;
	o.clock_frequency = 1000000u;
	o.anchor_wall_ns = 1700000000000000000;
	o.run_id = 0x1234;
	o.pid = 4321;
	o.process_start_ns = 1699999999000000000;
	o.events = "test.*"; /* rec.ThreadStart (OS thread ids) off */
	g_fake_ticks = 500;
	rec_recorder *r = rec_t_open_rec(path, &o);
	rec_event_type *t;
	assert_int_equal(rec_recorder_register_type(r, &det_def, 0, 0, &t), REC_OK);
	for (uint64_t i = 0; i < 100; i++) {
		rec_span sp;
		rec_emit e = { 0 };
		rec_span_begin(&sp, t);
		g_fake_ticks += 7 + i;
		assert_true(rec_span_end(&sp, &e));
		rec_emit_string_dyn(&e, i % 2 ? "odd" : "even");
		rec_emit_u64(&e, i);
		rec_emit_commit(&e);
	}
	assert_int_equal(rec_recorder_close(r), REC_OK);
}

static void t_deterministic(void **state)
{
	(void)state;
	char a[300], b[300];
	tmp_path(a, sizeof a, "det-a.rec");
	tmp_path(b, sizeof b, "det-b.rec");
	record_det(a);
	record_det(b);
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	assert_non_null(fa);
	assert_non_null(fb);
	static uint8_t ba[1 << 16], bb[1 << 16];
	size_t na = fread(ba, 1, sizeof ba, fa), nb = fread(bb, 1, sizeof bb, fb);
	fclose(fa);
	fclose(fb);
	assert_true(na > 128);
	assert_int_equal(na, nb);
	assert_memory_equal(ba, bb, na);
	rec_t_readback rb;
	rec_t_rb_read(a, &rb);
	assert_int_equal(rb.n, 100); /* "test.*": rec.Process is off too */
	assert_int_equal(rec_t_rb_count(&rb, "rec.Process"), 0);
	assert_int_equal(rb.frequency, 1000000u);
	assert_int_equal(rb.ev[99].duration, 7 + 99);
	rec_t_rb_free(&rb);
}

/* ---- default recorder and declared types -------------------------------------------------------- */
static const rec_field decl_fields[] = { { "v", "V", "", REC_TYPE_U64, REC_UNIT_NONE } };
static const rec_type decl_def = { 0, 0, "test.Declared", "", "", "test", 1, decl_fields };
static int g_listen_open, g_listen_close;
static void listener(rec_recorder *r, int opened, void *opaque)
{
	(void)r;
	(void)opaque;
	if (opened)
		g_listen_open++;
	else
		g_listen_close++;
}

static void t_default(void **state)
{
	(void)state;
	char path[300];
	rec_event_type *t;
	assert_int_equal(rec_type_declare(&decl_def, 0, 0, &t), REC_OK);
	rec_event_type *t2;
	assert_int_equal(rec_type_declare(&decl_def, 0, 0, &t2), REC_OK);
	assert_ptr_equal(t, t2);
	assert_false(rec_type_enabled(t));
	assert_null(rec_recorder_default());
	assert_int_equal(rec_default_listen(listener, NULL), REC_OK);
	for (int round = 0; round < 2; round++) {
		tmp_path(path, sizeof path, round ? "default2.rec" : "default1.rec");
		rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
		o.flags = REC_RECORDER_DEFAULT;
		rec_recorder *r = rec_t_open_rec(path, &o);
		assert_ptr_equal(rec_recorder_default(), r);
		rec_recorder *r2 = NULL;
		o.path = path;
		assert_int_equal(rec_recorder_open(&r2, &o), REC_ERR_STATE);
		assert_true(rec_type_enabled(t));
		for (uint64_t i = 0; i < 5 + (uint64_t)round; i++) {
			rec_emit e = { 0 };
			assert_true(rec_emit_begin(&e, t));
			rec_emit_u64(&e, i);
			rec_emit_commit(&e);
		}
		assert_int_equal(rec_recorder_close(r), REC_OK);
		assert_false(rec_type_enabled(t));
		assert_null(rec_recorder_default());
		rec_t_readback rb;
		rec_t_rb_read(path, &rb);
		assert_int_equal(rec_t_rb_count(&rb, "test.Declared"), 5 + (size_t)round);
		rec_t_rb_free(&rb);
	}
	assert_int_equal(g_listen_open, 2);
	assert_int_equal(g_listen_close, 2);
}

int main(void)
{
	snprintf(g_dir, sizeof g_dir, "/tmp/rec-test-recorder-%d", (int)getpid());
	mkdir(g_dir, 0700);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_roundtrip),     cmocka_unit_test(t_overwrite),
		cmocka_unit_test(t_dyn_strings),
		cmocka_unit_test(t_events_layout),
		cmocka_unit_test(t_overwrite_killed),
		cmocka_unit_test(t_threshold),
		cmocka_unit_test(t_stack),
		cmocka_unit_test(t_short_lived),
		cmocka_unit_test(t_thread_tids),
		cmocka_unit_test(t_fork),
		cmocka_unit_test(t_flight_dump),   cmocka_unit_test(t_flight_signal),
		cmocka_unit_test(t_flight_signal_idle),
		cmocka_unit_test(t_default),
		cmocka_unit_test(t_rejected),      cmocka_unit_test(t_undefined_refs),
		cmocka_unit_test(t_signal),        cmocka_unit_test(t_deterministic),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (rc == 0) {
		char cmd[300];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
		if (system(cmd) != 0)
			rc = 1;
	}
	return rc;
}
