/* SPDX-License-Identifier: MIT */
/*
 * hotpath - ns per event of the recorder's emit path (bench/run.sh; not built
 * by make), for a 3-field event (a pooled ~12-character string, an i64 and an
 * i32, plus the thread reference) with the value sequence of gen_events.c.
 *
 *   hotpath [--throttle] [--events-per-round K] [--rounds R] FILE
 *   (--throttle: the modes on, throttle-pass and throttle-drop only)
 *
 * For 1 and 2 threads, modes:
 *   on        recording on (TSC timestamp, thread, 3 fields)
 *   stack     recording on with a stack trace captured per event
 *   disabled  the type is registered but off: one load and a branch
 *   duration  recording on, a duration event (the type has
 *             REC_EVENT_HAS_DURATION): rec_span_begin (a timestamp) before
 *             and rec_span_end (a second timestamp, start and duration
 *             written) after an empty body, then the 3 fields: the
 *             like-for-like of a JFR event with begin() and commit()
 *   throttle-pass (--throttle only) as on, with "throttle=1000000000/s":
 *             every event is checked against the type's budget and passes
 *   throttle-drop (--throttle only) as on, with "throttle=1/s": all but one
 *             event are throttled (counted as dropped, reason throttled)
 *   floor     in this binary, no recorder: rdtsc plus appending the same
 *             bytes (2-byte length slot, type id, ticks, thread, 3 fields as
 *             varints) to a thread-local ring buffer with plain stores and
 *             no checks at all
 *   paired    the floor and recording on in the same round, one after the
 *             other (alternating which goes first), each half timed:
 *             the ratio on / floor per round of each thread, so that the
 *             "<= 1.5x floor" goal compares the two in the same seconds
 *             (the separate cases run a minute apart: the full run of
 *             2026-12-07 measured the floor case at 18.3 ns and on at
 *             13.1, by hand 12.1 and 13.0).  Printed as
 *   mode=paired threads=1 ratio_median=R ratio_min=A ratio_max=B
 *               on_median=X floor_median=Y events=E dropped=D
 * Each thread emits K events per round (16 MiB thread buffers: a round of up to
 * ~300k events never fills them, so nothing drops), the recorder is flushed
 * between rounds outside the timed part, warm-up rounds run until every page
 * of the buffer has been written once (no first-touch page faults in the
 * timed rounds, as in a long-running process), and the median (min-max)
 * over rounds x threads of (round time / K) is printed, one line per case:
 *   mode=on threads=1 median=M min=A max=B events=E dropped=D
 *
 *   hotpath --scale N FILE
 *
 * Scaling (issue #7 item 5): one thread emits N events with recording on, in
 * rounds of up to 200k with a flush between rounds outside the timed part,
 * after untimed warm-up rounds that write every page of the thread buffer
 * once, and prints the mean ns per event over all N, the recorder's statistics and
 * the process's peak RSS (the recorder's memory: its 16 MiB thread buffer,
 * the pools, the writer's chunk buffers):
 *   mode=scale n=N ns_per_event=X rounds=R round_median=M events=E dropped=D
 *   maxrss_kb=K bgcpu=B
 * (ns_per_event: total time / N; round_median: the median over the rounds
 * of round time / events, less sensitive to preemption on a busy host).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "rec/recorder.h"
#include "common.h"
#include "tsc.h"

enum mode { M_ON, M_STACK, M_DISABLED, M_FLOOR, M_THR_PASS, M_THR_DROP, M_DURATION, M_PAIRED };
static const char *const mode_names[] = { "on", "stack", "disabled", "floor", "throttle-pass",
					  "throttle-drop", "duration", "paired" };

#define MAX_THREADS BENCH_MAX_THREADS
#define MAX_ROUNDS BENCH_MAX_ROUNDS

struct run {
	enum mode mode;
	rec_recorder *rec;
	rec_event_type *type;
	rec_str ids[16];
	struct bench_rounds b; /* k, rounds, warm and the timings */
	/* paired: each thread's timed rounds, ns per event of either half */
	int next_idx;
	double pair_on[MAX_THREADS][MAX_ROUNDS], pair_floor[MAX_THREADS][MAX_ROUNDS];
};
static __thread int pair_idx, pair_round; /* this thread's index, rounds so far */

/* ---- the floor: rdtsc + plain stores into a thread-local buffer --------- */
#define TBUF_SIZE (16u << 20)  /* the recorder's thread buffer size here */
#define FLOOR_SIZE TBUF_SIZE
static __thread uint8_t *floor_buf;
static __thread uint64_t floor_head;
static __thread uint64_t floor_ids[16];


static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* The recorder's record layout without any of its checks: precomputed
 * type-id and thread encodings stored as 8-byte words, varints for the rest,
 * a 2-byte length slot; the ring has 64 bytes of slack at its end instead of
 * a wrap check. */
static __attribute__((noinline)) void floor_round(long from, long k, const uint64_t *ids)
{
	uint8_t *buf = floor_buf;
	uint64_t head = floor_head;
	const uint64_t id_enc = 0x0280; /* uvarint 256: 80 02 */
	const uint64_t thread_enc = 1;
	for (long i = from; i < from + k; i++) {
		uint64_t t = bench_tsc();
		uint8_t *rec = buf + (head & (FLOOR_SIZE - 1));
		uint8_t *p = rec + 2;
		memcpy(p, &id_enc, 8);
		p += 2;
		p = put_varint(p, t);
		memcpy(p, &thread_enc, 8);
		p += 1;
		p = put_varint(p, ids[i & 15]);
		uint64_t v = (uint64_t)i * 7919u;
		p = put_varint(p, (v << 1) ^ (uint64_t)((int64_t)v >> 63));
		p = put_varint(p, (uint64_t)(i % 1000) << 1);
		size_t len = (size_t)(p - rec) - 2;
		rec[0] = (uint8_t)len;
		rec[1] = (uint8_t)(len >> 8);
		head += 2 + len;
		floor_head = head;
	}
}

static __attribute__((noinline)) void emit_round(struct run *r, long from, long k)
{
	rec_event_type *t = r->type;
	for (long i = from; i < from + k; i++) {
		rec_emit e;
		if (rec_emit_begin(&e, t)) {
			rec_emit_string(&e, r->ids[i & 15]);
			rec_emit_i64(&e, (int64_t)((uint64_t)i * 7919u));
			rec_emit_i64(&e, (int64_t)(i % 1000));
			rec_emit_commit(&e);
		}
	}
}

/* a duration event: begin (first timestamp), an empty body, end (second
 * timestamp; start and duration), the fields */
static __attribute__((noinline)) void span_round(struct run *r, long from, long k)
{
	rec_event_type *t = r->type;
	for (long i = from; i < from + k; i++) {
		rec_span s;
		rec_emit e;
		rec_span_begin(&s, t);
		if (rec_span_end(&s, &e)) {
			rec_emit_string(&e, r->ids[i & 15]);
			rec_emit_i64(&e, (int64_t)((uint64_t)i * 7919u));
			rec_emit_i64(&e, (int64_t)(i % 1000));
			rec_emit_commit(&e);
		}
	}
}

/* each thread, before its rounds: the floor's string ids and ring buffer */
static void thread_begin(void *ctx)
{
	struct run *r = ctx;
	for (int j = 0; j < 16; j++)
		floor_ids[j] = r->ids[j].id ? r->ids[j].id : (uint64_t)j + 1;
	if (r->mode == M_PAIRED) {
		pair_idx = __atomic_fetch_add(&r->next_idx, 1, __ATOMIC_RELAXED);
		pair_round = 0;
	}
	if ((r->mode == M_FLOOR || r->mode == M_PAIRED) && !(floor_buf = malloc(FLOOR_SIZE + 64))) {
		fprintf(stderr, "hotpath: out of memory\n");
		exit(1);
	}
	if (floor_buf)
		memset(floor_buf, 0, FLOOR_SIZE + 64); /* no page faults in the timed part */
}

static void thread_end(void *ctx)
{
	(void)ctx;
	free(floor_buf);
	floor_buf = NULL;
}

/* paired: the floor and recording on, one after the other in each round
 * (which goes first alternates), each half timed by itself, so that the
 * two are compared in the same seconds on the same core (a ratio per
 * round) rather than minutes apart in separate cases */
static void paired_round(struct run *r, long from, long k)
{
	double t[3];
	const int floor_first = pair_round & 1;
	t[0] = bench_now_ns();
	if (floor_first)
		floor_round(from, k, floor_ids);
	else
		emit_round(r, from, k);
	t[1] = bench_now_ns();
	if (floor_first)
		emit_round(r, from, k);
	else
		floor_round(from, k, floor_ids);
	t[2] = bench_now_ns();
	const int i = pair_round++ - r->b.warm;
	if (i >= 0 && i < MAX_ROUNDS && pair_idx < MAX_THREADS) {
		r->pair_floor[pair_idx][i] = (t[floor_first ? 1 : 2] - t[floor_first ? 0 : 1]) / (double)k;
		r->pair_on[pair_idx][i] = (t[floor_first ? 2 : 1] - t[floor_first ? 1 : 0]) / (double)k;
	}
}

/* the timed part of a round */
static void round_emit(void *ctx, long from, long k)
{
	struct run *r = ctx;
	if (r->mode == M_PAIRED)
		paired_round(r, from, k);
	else if (r->mode == M_FLOOR)
		floor_round(from, k, floor_ids);
	else if (r->mode == M_DURATION)
		span_round(r, from, k);
	else
		emit_round(r, from, k);
}

/* thread 0 drains the buffers between rounds, outside the timed part */
static void round_between(void *ctx)
{
	struct run *r = ctx;
	if (r->rec && r->mode != M_FLOOR)
		rec_recorder_flush(r->rec);
}

/* Opens the recorder on path (16 MiB thread buffers: a round of k events
 * fits, no drops), registers bench.Sample as mode wants it and interns the 16
 * names into r.  Returns 0, or 1 after a message (nothing left open). */
static int open_recorder(struct run *r, enum mode mode, const char *path)
{
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.path = path;
	o.thread_buffer_size = TBUF_SIZE;
	o.memory_limit = 256u << 20;
	o.flush_interval_ms = 1000;
	if (mode == M_THR_PASS)
		o.events = "bench.Sample:throttle=1000000000/s";
	else if (mode == M_THR_DROP)
		o.events = "bench.Sample:throttle=1/s";
	rec_status s = rec_recorder_open(&r->rec, &o);
	if (s != REC_OK) {
		fprintf(stderr, "hotpath: rec_recorder_open(%s): %s\n", path, rec_strerror(s));
		r->rec = NULL;
		return 1;
	}
	const rec_type def =
		bench_sample_type(0, REC_EVENT_HAS_THREAD | (mode == M_STACK ? REC_EVENT_HAS_STACK : 0) |
					     (mode == M_DURATION ? REC_EVENT_HAS_DURATION : 0));
	uint32_t flags = mode == M_STACK ? REC_DECLARE_STACK : mode == M_DISABLED ? REC_DECLARE_OFF : 0;
	s = rec_recorder_register_type(r->rec, &def, 0, flags, &r->type);
	if (s != REC_OK) {
		fprintf(stderr, "hotpath: register_type: %s\n", rec_strerror(s));
		goto fail;
	}
	for (int j = 0; j < 16; j++) {
		r->ids[j] = rec_recorder_intern(r->rec, bench_names[j]);
		if (r->ids[j].id == 0) {
			fprintf(stderr, "hotpath: intern failed\n");
			goto fail;
		}
	}
	return 0;
fail:
	rec_recorder_close(r->rec);
	r->rec = NULL;
	return 1;
}

static int run_case(enum mode mode, int threads, long k, int rounds, const char *path)
{
	struct run *r = calloc(1, sizeof(*r));
	if (!r) {
		fprintf(stderr, "hotpath: out of memory\n");
		return 1;
	}
	r->mode = mode;
	r->b.k = k;
	r->b.rounds = rounds;
	/* Warm up until every page of the thread buffer has been written once
	 * (about 28 bytes per event), as in a long-running process: the timed
	 * rounds then measure no first-touch page faults. */
	r->b.warm = (int)((TBUF_SIZE + (size_t)k * 28u - 1) / ((size_t)k * 28u)) + 1;
	r->b.ctx = r;
	r->b.thread_begin = thread_begin;
	r->b.thread_end = thread_end;
	r->b.emit = round_emit;
	r->b.between = round_between;
	rec_recorder_stats st = { 0 };
	if (mode != M_FLOOR && open_recorder(r, mode, path) != 0) {
		free(r);
		return 1;
	}
	if (bench_rounds_run(&r->b, threads, "hotpath") != 0) {
		if (r->rec)
			rec_recorder_close(r->rec);
		free(r);
		return 1;
	}
	int err = 0;
	if (r->rec) {
		rec_recorder_flush(r->rec);
		rec_recorder_get_stats(r->rec, &st);
		rec_status s = rec_recorder_close(r->rec);
		if (s != REC_OK) {
			fprintf(stderr, "hotpath: rec_recorder_close: %s\n", rec_strerror(s));
			err = 1;
		}
	}
	double all[MAX_THREADS * MAX_ROUNDS];
	size_t n = bench_rounds_gather(&r->b, threads, 0, all);
	double med = bench_sort_median(all, n);
	/* the background thread's CPU time (drain, encode, compress, write) per
	 * recorded event: the cost that competes with the host on a busy machine */
	double bg = st.events ? (double)st.background_cpu_ns / (double)st.events : 0;
	if (mode == M_PAIRED) {
		/* on / floor in each round of each thread; the halves' medians */
		double ratio[MAX_THREADS * MAX_ROUNDS], on[MAX_THREADS * MAX_ROUNDS],
			fl[MAX_THREADS * MAX_ROUNDS];
		size_t m = 0;
		for (int t = 0; t < threads; t++)
			for (int i = 0; i < rounds; i++, m++) {
				on[m] = r->pair_on[t][i];
				fl[m] = r->pair_floor[t][i];
				ratio[m] = fl[m] > 0 ? on[m] / fl[m] : 0;
			}
		double rmed = bench_sort_median(ratio, m), omed = bench_sort_median(on, m),
		       fmed = bench_sort_median(fl, m);
		printf("mode=paired threads=%d ratio_median=%.3f ratio_min=%.3f ratio_max=%.3f "
		       "on_median=%.2f floor_median=%.2f events=%llu dropped=%llu\n",
		       threads, rmed, ratio[0], ratio[m - 1], omed, fmed,
		       (unsigned long long)st.events, (unsigned long long)st.dropped);
		fflush(stdout);
		free(r);
		return err;
	}
	printf("mode=%s threads=%d median=%.2f min=%.2f max=%.2f events=%llu dropped=%llu bgcpu=%.1f\n",
	       mode_names[mode], threads, med, all[0], all[n - 1], (unsigned long long)st.events,
	       (unsigned long long)st.dropped, bg);
	fflush(stdout);
	free(r);
	return err;
}

/* --scale N: N events on one thread, rounds of up to 200k, flushes between. */
static int scale_run(long long n, const char *path)
{
	struct run *r = calloc(1, sizeof(*r));
	if (!r) {
		fprintf(stderr, "hotpath: out of memory\n");
		return 1;
	}
	if (open_recorder(r, M_ON, path) != 0) {
		free(r);
		return 1;
	}
	rec_recorder *rec = r->rec;
	/* warm-up, untimed: write every page of the thread buffer once (about 28
	 * bytes per event), as a long-running process has; these events are in
	 * the file too (events= counts them) */
	long warm = (long)(TBUF_SIZE / 28u) + 200000;
	for (long w = 0; w < warm; w += 200000) {
		emit_round(r, -1 - w - 200000, 200000);
		rec_recorder_flush(rec);
	}
	double total = 0;
	size_t nr = (size_t)((n + 199999) / 200000), ir = 0;
	double *per = calloc(nr, sizeof *per);
	if (!per) {
		fprintf(stderr, "hotpath: out of memory\n");
		rec_recorder_close(rec);
		free(r);
		return 1;
	}
	for (long long done = 0; done < n;) {
		long k = n - done < 200000 ? (long)(n - done) : 200000;
		double t0 = bench_now_ns();
		emit_round(r, (long)done, k);
		double dt = bench_now_ns() - t0;
		total += dt;
		per[ir++] = dt / (double)k;
		done += k;
		rec_recorder_flush(rec);
	}
	double med = bench_sort_median(per, ir);
	free(per);
	rec_recorder_stats st = { 0 };
	rec_recorder_get_stats(rec, &st);
	rec_status s = rec_recorder_close(rec);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("mode=scale n=%lld ns_per_event=%.2f rounds=%zu round_median=%.2f events=%llu dropped=%llu "
	       "maxrss_kb=%ld bgcpu=%.1f\n", n, total / (double)n, ir, med, (unsigned long long)st.events, (unsigned long long)st.dropped, ru.ru_maxrss,
	       st.events ? (double)st.background_cpu_ns / (double)st.events : 0);
	free(r);
	if (s != REC_OK) {
		fprintf(stderr, "hotpath: rec_recorder_close: %s\n", rec_strerror(s));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--scale") == 0) {
		long long n = strtoll(argv[2], NULL, 10);
		if (n <= 0) {
			fprintf(stderr, "usage: hotpath --scale N FILE\n");
			return 2;
		}
		return scale_run(n, argv[3]);
	}
	long k = 200000;
	int rounds = 9;
	int i = 1, throttle = 0;
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--throttle") == 0)
			throttle = 1;
		else if (strcmp(argv[i], "--events-per-round") == 0 && i + 1 < argc)
			k = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = (int)strtol(argv[++i], NULL, 10);
		else
			break;
	}
	if (argc - i != 1 || k <= 0 || rounds <= 0 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: hotpath [--throttle] [--events-per-round K] [--rounds R (1-%d)] FILE\n", MAX_ROUNDS);
		return 2;
	}
	const char *path = argv[i];
	int rc = 0;
	for (int threads = 1; threads <= MAX_THREADS; threads++) {
		for (int m = M_ON; m <= M_FLOOR; m++)
			if (!throttle || m == M_ON)
				rc |= run_case((enum mode)m, threads, k, rounds, path);
		if (!throttle) {
			rc |= run_case(M_DURATION, threads, k, rounds, path);
			rc |= run_case(M_PAIRED, threads, k, rounds, path);
		}
	}
	for (int threads = 1; throttle && threads <= MAX_THREADS; threads++)
		for (int m = M_THR_PASS; m <= M_THR_DROP; m++)
			rc |= run_case((enum mode)m, threads, k, rounds, path);
	return rc;
}
