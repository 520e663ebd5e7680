/* SPDX-License-Identifier: MIT */
/*
 * test_output.c - output.c, the recorder's sink, when the output fails, for
 * real (was test_recorder_faults.c):
 * /dev/full (ENOSPC), RLIMIT_FSIZE in a child process (EFBIG, then the limit
 * is raised and writing recovers), the file removed while recording (a new
 * file at the path), a sink that fails for a while and one that hangs.
 * Checked: the host keeps running and its emits stay fast, on_error is
 * called once per kind, memory stays under the limit, lost events are
 * counted, the files read back clean (every chunk verified) with a
 * rec.WriteFailed, and the counts reconcile exactly:
 *   emit attempts + rec.ThreadStart = events in the file (rec.Dropped and
 *   rec.WriteFailed and rec.Process records excluded) + the counts of rec.Dropped.
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rec/rec.h"
#include "rec/recorder.h"
#include "../../lib/scale.h" /* time budgets x REC_TEST_SLOWDOWN under valgrind */
#include "../../lib/tmpdir.h" /* rec_t_tmpdir_*, rec_t_mono_ns, rec_t_sleep_ms */

static char g_dir[256];

static const rec_field work_fields[] = {
	{ "seq", "Seq", "", REC_TYPE_U64, REC_UNIT_NONE },
	{ "phase", "Phase", "", REC_TYPE_U32, REC_UNIT_NONE },
};
static const rec_type work_def = { 0, REC_EVENT_HAS_THREAD, "test.Work", "Work", "", "test", 2,
				   work_fields };

/* ---- errors ---------------------------------------------------------------- */
static int g_reports;
static char g_msg[4][256];

static void on_error(void *opaque, rec_status st, const char *msg)
{
	(void)opaque;
	(void)st;
	int n = __atomic_fetch_add(&g_reports, 1, __ATOMIC_SEQ_CST);
	if (n < 4)
		snprintf(g_msg[n], sizeof g_msg[n], "%s", msg);
}

/* ---- emitting -------------------------------------------------------------- */
static rec_event_type *T_work;
static uint64_t g_attempts, g_max_emit_ns;

static void emit_n(uint64_t n, uint32_t phase)
{
	static uint64_t seq;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t t0 = rec_t_mono_ns();
		rec_emit e;
		g_attempts++;
		if (rec_emit_begin(&e, T_work)) {
			rec_emit_u64(&e, seq++);
			rec_emit_u64(&e, phase);
			rec_emit_commit(&e);
		}
		uint64_t d = rec_t_mono_ns() - t0;
		if (d > g_max_emit_ns)
			g_max_emit_ns = d;
	}
}

static rec_recorder *open_rec(const char *path, const rec_sink *sink, uint32_t flush_ms)
{
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	o.sink = sink;
	o.flush_interval_ms = flush_ms;
	o.memory_limit = 1u << 20;
	o.thread_buffer_size = 64u << 10;
	o.codec = REC_CODEC_LZ4;
	o.on_error = on_error;
	rec_recorder *r = NULL;
	assert_int_equal(rec_recorder_open(&r, &o), REC_OK);
	assert_int_equal(rec_recorder_register_type(r, &work_def, 0, 0, &T_work), REC_OK);
	g_reports = 0;
	g_attempts = 0;
	g_max_emit_ns = 0;
	return r;
}

/* ---- reading back ---------------------------------------------------------- */
typedef struct scan {
	uint64_t chunks, problems;
	uint64_t work[3];      /* test.Work by phase */
	uint64_t work_seq_bad; /* a seq seen twice */
	uint64_t thread_start, other;
	uint64_t process;      /* rec.Process (one per chunk with records; not an emit) */
	uint64_t dropped[5];   /* rec.Dropped count by reason */
	uint64_t wf;           /* rec.WriteFailed events */
	uint64_t wf_errno, wf_action, wf_chunks, wf_events, wf_bytes, wf_dur;
	char wf_msg[128];
} scan;

static void scan_reader(rec_reader *rd, scan *s)
{
	memset(s, 0, sizeof *s);
	const rec_chunk_info *ci;
	rec_status st;
	while ((st = rec_reader_next_chunk(rd, &ci)) != REC_END) {
		if (st != REC_OK) {
			s->problems++;
			continue;
		}
		s->chunks++;
		if (rec_reader_verify_chunk(rd) != REC_OK)
			s->problems++;
	}
}

static void scan_events(rec_reader *rd, scan *s)
{
	rec_event e;
	rec_status st;
	static uint8_t seen[1u << 20];
	memset(s, 0, sizeof *s);
	memset(seen, 0, sizeof seen);
	while ((st = rec_reader_next_event(rd, &e)) != REC_END) {
		if (st != REC_OK) {
			s->problems++;
			continue;
		}
		const char *n = e.type->name;
		if (strcmp(n, "test.Work") == 0) {
			uint64_t seq = e.values[0].v.u, ph = e.values[1].v.u;
			assert_true(ph < 3);
			s->work[ph]++;
			if (seq < sizeof seen && seen[seq]++)
				s->work_seq_bad++;
		} else if (strcmp(n, "rec.ThreadStart") == 0) {
			s->thread_start++;
		} else if (strcmp(n, "rec.Dropped") == 0) {
			uint64_t reason = e.values[2].v.u;
			assert_true(reason < 5);
			s->dropped[reason] += e.values[0].v.u;
		} else if (strcmp(n, "rec.WriteFailed") == 0) {
			s->wf++;
			s->wf_errno = e.values[0].v.u;
			snprintf(s->wf_msg, sizeof s->wf_msg, "%.*s", (int)e.values[1].v.s.len,
				 e.values[1].v.s.ptr ? e.values[1].v.s.ptr : "");
			s->wf_action = e.values[2].v.u;
			s->wf_chunks = e.values[3].v.u;
			s->wf_events = e.values[4].v.u;
			s->wf_bytes = e.values[5].v.u;
			s->wf_dur = (uint64_t)e.duration_ns;
		} else if (strcmp(n, "rec.Process") == 0) {
			s->process++;
		} else {
			s->other++;
		}
	}
}

/* Both passes (chunks verified, then events) over a file, or over data/len
 * when path is NULL; the problems of both are added up. */
static void scan_both(const char *path, const void *data, size_t len, scan *s)
{
	scan ev;
	for (int pass = 0; pass < 2; pass++) {
		rec_reader *rd;
		rec_status st = path ? rec_reader_open_path(&rd, path, NULL)
				     : rec_reader_open_mem(&rd, data, len, "mem", NULL);
		assert_int_equal(st, REC_OK);
		if (pass == 0)
			scan_reader(rd, s);
		else
			scan_events(rd, &ev);
		rec_reader_close(rd);
	}
	ev.chunks = s->chunks;
	ev.problems += s->problems;
	*s = ev;
}

static void scan_file(const char *path, scan *s)
{
	scan_both(path, NULL, 0, s);
}

static void scan_mem(const void *data, size_t len, scan *s)
{
	scan_both(NULL, data, len, s);
}

static uint64_t sum_dropped(const scan *s)
{
	return s->dropped[0] + s->dropped[1] + s->dropped[2] + s->dropped[3] + s->dropped[4];
}

/* The counts reconcile exactly: emit attempts + the rec.ThreadStart = the
 * events in the file (rec.Dropped, rec.WriteFailed and rec.Process excluded) + the counts
 * of rec.Dropped. */
static void assert_reconciles(const scan *s, uint64_t attempts)
{
	uint64_t in_file = s->work[0] + s->work[1] + s->work[2] + s->thread_start + s->other;
	assert_int_equal(in_file + sum_dropped(s), attempts + 1);
}

/* ---- (a) /dev/full: ENOSPC forever ------------------------------------------ */
static void t_dev_full(void **state)
{
	(void)state;
	if (access("/dev/full", W_OK) != 0)
		skip();
	rec_recorder *r = open_rec("/dev/full", NULL, 20);
	uint64_t t0 = rec_t_mono_ns();
	rec_recorder_stats st;
	uint64_t max_buf = 0;
	for (int round = 0; round < 40; round++) {
		emit_n(5000, 0);
		rec_recorder_get_stats(r, &st);
		if (st.buffer_bytes > max_buf)
			max_buf = st.buffer_bytes;
		rec_t_sleep_ms(5);
	}
	uint64_t loop_ns = rec_t_mono_ns() - t0;
	assert_int_equal(rec_recorder_flush(r), REC_ERR_IO); /* the write error */
	rec_recorder_get_stats(r, &st);
	/* Everything was lost, and every loss is counted: the events of the
	 * discarded chunks (test.Work and the rec.ThreadStart) plus the
	 * events dropped at full buffers. */
	assert_int_equal(st.dropped, g_attempts + 1);
	assert_int_equal(st.chunks, 0);
	assert_int_equal(st.bytes, 0);
	assert_true(max_buf <= (1u << 20));
	assert_int_equal(g_reports, 1);
	assert_non_null(strstr(g_msg[0], "No space left on device"));
	/* The host ran on: 200000 emits in bounded time, no single emit
	 * waited for I/O. */
	assert_true(loop_ns < rec_t_budget_ns(5000000000ull));
	assert_true(g_max_emit_ns < rec_t_budget_ns(500000000ull));
	assert_int_equal(rec_recorder_close(r), REC_ERR_IO);
	assert_int_equal(g_reports, 1); /* the failed last chunk: same kind, not again */
}

/* ---- (b) RLIMIT_FSIZE in a child: EFBIG, then recovery ----------------------- */
static void t_fsize_recovers(void **state)
{
	(void)state;
	char path[300];
	snprintf(path, sizeof path, "%s/fsize.rec", g_dir);
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit rl, lim;
		if (getrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(10);
		lim.rlim_cur = 48 * 1024;
		lim.rlim_max = rl.rlim_max;
		if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
			_exit(11);
		rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
		o.path = path;
		o.flush_interval_ms = 20;
		o.codec = REC_CODEC_NONE; /* chunk sizes follow the events */
		o.on_error = on_error;
		rec_recorder *r;
		if (rec_recorder_open(&r, &o) != REC_OK ||
		    rec_recorder_register_type(r, &work_def, 0, 0, &T_work) != REC_OK)
			_exit(12);
		g_attempts = 0;
		g_reports = 0;
		/* phase 0 until the failure is reported (at most ~20 s) */
		for (int i = 0; i < 2000 && !__atomic_load_n(&g_reports, __ATOMIC_SEQ_CST); i++) {
			emit_n(300, 0);
			rec_t_sleep_ms(10);
		}
		if (g_reports != 1)
			_exit(13);
		emit_n(1000, 1); /* lost, unless a chunk fits below the limit */
		rec_status fs = rec_recorder_flush(r); /* REC_ERR_IO: lost */
		if (fs != REC_OK && fs != REC_ERR_IO)
			_exit(14);
		rec_recorder_stats st;
		rec_recorder_get_stats(r, &st);
		uint64_t lost_before = st.dropped;
		lim.rlim_cur = rl.rlim_cur;
		if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
			_exit(15);
		emit_n(1000, 2);
		rec_status cs = rec_recorder_close(r);
		char line[200];
		int n = snprintf(line, sizeof line, "%llu %d %llu %d %llu\n",
				 (unsigned long long)g_attempts, g_reports,
				 (unsigned long long)lost_before, (int)cs,
				 (unsigned long long)g_max_emit_ns);
		if (write(pfd[1], line, (size_t)n) != n)
			_exit(16);
		_exit(0);
	}
	close(pfd[1]);
	char buf[256] = "";
	ssize_t got = read(pfd[0], buf, sizeof buf - 1);
	close(pfd[0]);
	int ws;
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
	assert_true(got > 0);
	unsigned long long attempts, lost, max_emit;
	int reports, cs;
	assert_int_equal(sscanf(buf, "%llu %d %llu %d %llu", &attempts, &reports, &lost, &cs,
				&max_emit), 5);
	assert_int_equal(reports, 1);      /* once, EFBIG */
	assert_true(lost >= 1);
	assert_int_equal(cs, REC_ERR_IO);  /* close says the recording met an error */
	assert_true(max_emit < rec_t_budget_ns(500000000ull));

	scan s;
	scan_file(path, &s);
	assert_int_equal(s.problems, 0);   /* every chunk verifies: no partial chunk left */
	assert_int_equal(s.work_seq_bad, 0);
	assert_true(s.work[0] > 0);        /* before the failure */
	assert_true(s.work[1] < 1000);     /* during it: lost (a chunk that still
					    * fits below the limit is written) */
	assert_int_equal(s.work[2], 1000); /* after it: all there */
	/* One rec.WriteFailed per failure period (a small chunk that fits
	 * ends one); the last one is checked. */
	assert_true(s.wf >= 1);
	assert_int_equal(s.wf_errno, EFBIG);
	assert_int_equal(s.wf_action, 0);
	assert_non_null(strstr(s.wf_msg, "too large"));
	assert_true(s.wf_chunks >= 1);
	assert_true(s.wf_events >= 1);
	assert_true(s.wf_bytes > 0);
	assert_true(s.dropped[4] >= s.wf_events);
	assert_int_equal(s.dropped[4], lost); /* everything lost was lost writing */
	assert_reconciles(&s, attempts);
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	assert_true(sb.st_size > 48 * 1024); /* it grew past the old limit */
}

/* ---- (c) the file removed while recording ------------------------------------ */
static void t_file_removed(void **state)
{
	(void)state;
	char path[300], old[300];
	snprintf(path, sizeof path, "%s/removed.rec", g_dir);
	rec_recorder *r = open_rec(path, NULL, 20);
	emit_n(500, 0);
	assert_int_equal(rec_recorder_flush(r), REC_OK);
	int keep = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(keep >= 0);
	assert_int_equal(unlink(path), 0);
	emit_n(500, 1);
	assert_int_equal(rec_recorder_flush(r), REC_OK); /* notices at this round */
	assert_int_equal(access(path, F_OK), 0);         /* a new file is there */
	emit_n(500, 2);
	assert_int_equal(rec_recorder_close(r), REC_ERR_IO);
	assert_int_equal(g_reports, 1);
	assert_non_null(strstr(g_msg[0], "was removed"));

	scan a, b;
	snprintf(old, sizeof old, "/proc/self/fd/%d", keep);
	scan_file(old, &a);
	scan_file(path, &b);
	close(keep);
	assert_int_equal(a.problems, 0);
	assert_int_equal(b.problems, 0);
	assert_int_equal(a.work[0], 500);
	assert_int_equal(a.work[1] + a.work[2], 0);
	assert_int_equal(b.work[0], 0);
	assert_int_equal(b.work[1], 500);
	assert_int_equal(b.work[2], 500);
	assert_int_equal(b.wf, 1);
	assert_int_equal(b.wf_action, 1);
	assert_int_equal(a.wf + sum_dropped(&a) + sum_dropped(&b), 0);
}

/* ---- (d) a sink that fails for a while ------------------------------------- */
typedef struct memsink {
	uint8_t *data;
	size_t len, cap;
	int fail;          /* write returns -EIO while set */
	int hang_ms;       /* each write sleeps this long first */
	int fail_count;    /* the next fail_count writes return -EIO */
	uint64_t calls;
} memsink;

static int mem_write(void *opaque, const void *buf, size_t len)
{
	memsink *m = opaque;
	__atomic_add_fetch(&m->calls, 1, __ATOMIC_SEQ_CST);
	if (m->hang_ms)
		rec_t_sleep_ms(m->hang_ms);
	if (__atomic_load_n(&m->fail, __ATOMIC_SEQ_CST))
		return -EIO;
	if (m->fail_count > 0) {
		m->fail_count--;
		return -EIO;
	}
	if (m->len + len > m->cap) {
		size_t nc = (m->len + len) * 2;
		uint8_t *nd = realloc(m->data, nc);
		if (!nd)
			return -ENOMEM;
		m->data = nd;
		m->cap = nc;
	}
	memcpy(m->data + m->len, buf, len);
	m->len += len;
	return 0;
}

static void t_sink_fails_then_recovers(void **state)
{
	(void)state;
	memsink m = { 0 };
	rec_sink sink = { mem_write, NULL, &m };
	rec_recorder *r = open_rec(NULL, &sink, 20);
	emit_n(1000, 0);
	assert_int_equal(rec_recorder_flush(r), REC_OK);
	__atomic_store_n(&m.fail, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 5; i++) {
		emit_n(1000, 1);
		assert_int_equal(rec_recorder_flush(r), REC_ERR_IO);
	}
	assert_int_equal(g_reports, 1);
	assert_non_null(strstr(g_msg[0], "Input/output error"));
	rec_recorder_stats st;
	rec_recorder_get_stats(r, &st);
	assert_int_equal(st.dropped, 5000);
	__atomic_store_n(&m.fail, 0, __ATOMIC_SEQ_CST);
	emit_n(1000, 2);
	assert_int_equal(rec_recorder_flush(r), REC_OK); /* recovers */
	assert_int_equal(rec_recorder_flush(r), REC_OK); /* writes the rec.WriteFailed */
	/* The second failure is of the same kind: not reported again.  It
	 * ends in the last chunk, at close. */
	__atomic_store_n(&m.fail, 1, __ATOMIC_SEQ_CST);
	emit_n(100, 1);
	assert_int_equal(rec_recorder_flush(r), REC_ERR_IO);
	__atomic_store_n(&m.fail, 0, __ATOMIC_SEQ_CST);
	emit_n(100, 2);
	assert_int_equal(rec_recorder_close(r), REC_ERR_IO);
	assert_int_equal(g_reports, 1);

	scan s;
	scan_mem(m.data, m.len, &s);
	assert_int_equal(s.problems, 0);
	assert_int_equal(s.work[0], 1000);
	assert_int_equal(s.work[1], 0);
	assert_int_equal(s.work[2], 1100);
	assert_int_equal(s.wf, 2);
	assert_int_equal(s.wf_errno, EIO);
	assert_int_equal(s.wf_events, 100); /* the last one */
	assert_int_equal(s.wf_chunks, 1);
	assert_int_equal(s.dropped[4], 5100);
	assert_reconciles(&s, g_attempts);
	free(m.data);
}

/* ---- (e) closing while writes fail: the last chunk carries the failure ----- */
static void t_close_while_failing(void **state)
{
	(void)state;
	memsink m = { 0 };
	rec_sink sink = { mem_write, NULL, &m };
	rec_recorder *r = open_rec(NULL, &sink, 1000);
	emit_n(1000, 0);
	assert_int_equal(rec_recorder_flush(r), REC_OK);
	m.fail_count = 2; /* this flush's chunk and the chunk close tries first */
	emit_n(100, 1);
	assert_int_equal(rec_recorder_flush(r), REC_ERR_IO);
	emit_n(100, 1);
	assert_int_equal(rec_recorder_close(r), REC_ERR_IO);
	assert_int_equal(m.fail_count, 0);
	assert_int_equal(g_reports, 1);

	scan s;
	scan_mem(m.data, m.len, &s);
	assert_int_equal(s.problems, 0);
	assert_int_equal(s.work[0], 1000);
	assert_int_equal(s.work[1], 0);
	assert_int_equal(s.wf, 1);
	assert_int_equal(s.wf_chunks, 2);
	assert_int_equal(s.wf_events, 200);
	assert_int_equal(s.dropped[4], 200);
	assert_reconciles(&s, g_attempts);
	free(m.data);
}

/* ---- (f) a sink that hangs: emitting threads never wait for it --------------- */
static void t_sink_hangs(void **state)
{
	(void)state;
	memsink m = { 0 };
	m.hang_ms = 1000;
	m.fail = 1;
	rec_sink sink = { mem_write, NULL, &m };
	rec_recorder *r = open_rec(NULL, &sink, 10);
	uint64_t t0 = rec_t_mono_ns();
	for (int i = 0; i < 100; i++) {
		emit_n(2000, 1);
		rec_t_sleep_ms(10);
	}
	uint64_t loop_ns = rec_t_mono_ns() - t0;
	rec_recorder_stats st;
	rec_recorder_get_stats(r, &st);
	/* The buffer (64 KiB) fills while the background thread sits in the
	 * sink: events are dropped and counted, the emitting thread goes on. */
	assert_true(st.dropped > 0);
	/* (an emit that waited for the sink would take about a second) */
	assert_true(g_max_emit_ns < rec_t_budget_ns(500000000ull));
	assert_true(loop_ns < rec_t_budget_ns(10000000000ull));
	assert_true(st.buffer_bytes <= (1u << 20));
	rec_recorder_close(r);
	assert_int_equal(g_reports, 1);
	free(m.data);
}

int main(void)
{
	if (rec_t_tmpdir_create(g_dir, sizeof g_dir, "rec-faults") != 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_dev_full),
		cmocka_unit_test(t_fsize_recovers),
		cmocka_unit_test(t_file_removed),
		cmocka_unit_test(t_sink_fails_then_recovers),
		cmocka_unit_test(t_close_while_failing),
		cmocka_unit_test(t_sink_hangs),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	return rec_t_tmpdir_finish(g_dir, rc); /* kept after a failure */
}
