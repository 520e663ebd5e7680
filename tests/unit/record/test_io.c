/* SPDX-License-Identifier: MIT */
/*
 * test_io.c - io.c, rec.IO (a blocking I/O call that lasted at least the
 * type's threshold), through the entry the preload library's interposers
 * use (rec_io_emit_, builtin_internal.h) around real blocking calls: a
 * read on a pipe that a thread fills 30 ms later, a read of a regular
 * file, and a read that fails (EAGAIN on an empty non-blocking pipe),
 * the last two timed as if they had lasted.  Checked against the truth the test
 * knows: the threshold set by rec_io_set_threshold (REC_OPTIONS io=)
 * keeps the calls that lasted and drops the others, each event's fd, call,
 * kind, address, bytes, error and duration, and its stack naming the
 * function that made the call.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rec/builtins.h"
#include "rec/recorder.h"
#include "record/builtin_internal.h" /* rec_io_type_, rec_io_set_threshold, rec_io_emit_ */
#include "../../lib/readback.h"
#include "../../lib/tmpdir.h"

#define THRESHOLD_MS 15

typedef struct late_writer {
	int fd;
	long delay_ms;
} late_writer;

/* Set by the reader once it has read the clock before its read: the
 * writer's delay starts after that, so the read blocks for at least the
 * delay however slowly the reader got there (valgrind in the fresh-clone
 * CI, on a slow host: the reader reached its read more than 5 ms after the
 * writer had started a delay counted from its own start). */
static atomic_int g_reader_timed;

static void *write_late(void *arg)
{
	late_writer *lw = arg;
	for (int i = 0; i < 10000 && !atomic_load(&g_reader_timed); i++)
		rec_t_sleep_ms(1);
	rec_t_sleep_ms(lw->delay_ms);
	ssize_t w = write(lw->fd, "hello, pipe", 11);
	(void)w;
	return NULL;
}

static uint64_t ms_to_ticks(uint64_t ms)
{
	return ms * rec_recorder_tick_frequency(rec_t_rec) / 1000u;
}

/* A read that blocks until a thread writes, about 30 ms later. */
__attribute__((noinline)) static ssize_t io_test_blocking_read(int fd, char *buf, size_t n,
							       uint64_t *took_ticks)
{
	rec_event_type *t = rec_io_type_();
	uint64_t t0 = rec_type_ticks(t);
	atomic_store(&g_reader_timed, 1);
	ssize_t k = read(fd, buf, n);
	uint64_t t1 = rec_type_ticks(t);
	*took_ticks = t1 - t0;
	rec_io_emit_(fd, "read", "pipe", "", k > 0 ? (uint64_t)k : 0, k < 0 ? errno : 0, t0, t1);
	return k;
}

static void t_io_events(void **state)
{
	(void)state;
	rec_io_set_threshold((uint64_t)THRESHOLD_MS * 1000000u); /* before the type is declared */
	rec_t_start(NULL);
	rec_event_type *t = rec_io_type_();
	assert_non_null(t);
	assert_true(rec_type_enabled(t));

	/* 1: a pipe read that blocks ~30 ms: recorded */
	int p[2];
	assert_int_equal(pipe(p), 0);
	late_writer lw = { p[1], 30 };
	atomic_store(&g_reader_timed, 0);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, write_late, &lw), 0);
	char buf[64];
	uint64_t took = 0;
	assert_int_equal(io_test_blocking_read(p[0], buf, sizeof buf, &took), 11);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(took >= ms_to_ticks(25));

	/* 2: a file read that returned at once: under the threshold, dropped */
	char path[] = "/tmp/rec-test-io-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0123456789", 10), 10);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	uint64_t t0 = rec_type_ticks(t);
	ssize_t k = read(fd, buf, sizeof buf);
	assert_int_equal(k, 10);
	/* timed as lasting 1 ms (a measured time of a read this short is
	 * under the threshold unless a loaded machine preempted it: valgrind
	 * in the fresh-clone CI saw more than 15 ms) */
	rec_io_emit_(fd, "read", "file", path, (uint64_t)k, 0, t0, t0 + ms_to_ticks(1));
	/* 3: the same read timed as lasting 20 ms: recorded, with its path */
	rec_io_emit_(fd, "read", "file", path, (uint64_t)k, 0, t0, t0 + ms_to_ticks(20));
	close(fd);
	unlink(path);

	/* 4: a failed call (EAGAIN), timed as lasting 16 ms */
	int fl = fcntl(p[0], F_GETFL);
	assert_int_equal(fcntl(p[0], F_SETFL, fl | O_NONBLOCK), 0);
	t0 = rec_type_ticks(t);
	k = read(p[0], buf, sizeof buf);
	int err = errno;
	assert_int_equal(k, -1);
	assert_int_equal(err, EAGAIN);
	rec_io_emit_(p[0], "read", "pipe", "", 0, err, t0, t0 + ms_to_ticks(16));
	/* 5: 14 ms: just under, dropped */
	rec_io_emit_(p[0], "write", "pipe", "", 3, 0, t0, t0 + ms_to_ticks(14));
	close(p[0]);
	close(p[1]);

	rec_t_stop_and_load();
	assert_int_equal(rec_t_count_type("rec.IO"), 3);
	int seen = 0;
	for (size_t i = 0; i < rec_t_nev; i++) {
		const rec_t_ev *e = &rec_t_evs[i];
		if (strcmp(e->type, "rec.IO") != 0)
			continue;
		assert_int_equal(e->tid, rec_t_my_tid());
		assert_string_equal(rec_t_fs(e, "call"), "read");
		if (strcmp(rec_t_fs(e, "kind"), "file") == 0) { /* 3 */
			assert_string_equal(rec_t_fs(e, "address"), path);
			assert_int_equal(rec_t_fu(e, "bytes"), 10);
			assert_int_equal(rec_t_fu(e, "error"), 0);
			assert_true(e->dur_ns >= 19000000 && e->dur_ns <= 21000000);
			seen |= 1;
		} else if (rec_t_fu(e, "error") != 0) { /* 4 */
			assert_int_equal(rec_t_fu(e, "error"), EAGAIN);
			assert_int_equal(rec_t_fu(e, "bytes"), 0);
			assert_int_equal((int64_t)rec_t_fu(e, "fd"), p[0]);
			assert_true(e->dur_ns >= 15000000 && e->dur_ns <= 17000000);
			seen |= 2;
		} else { /* 1 */
			assert_string_equal(rec_t_fs(e, "kind"), "pipe");
			assert_string_equal(rec_t_fs(e, "address"), "");
			assert_int_equal(rec_t_fu(e, "bytes"), 11);
			assert_int_equal((int64_t)rec_t_fu(e, "fd"), p[0]);
			assert_true(e->dur_ns >= 25000000);
			assert_true(e->has_stack);
			assert_true(rec_t_stack_has(e, "io_test_blocking_read"));
			seen |= 4;
		}
	}
	assert_int_equal(seen, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_io_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
