/* SPDX-License-Identifier: MIT */
/*
 * gen_stacks - the exporter benchmark's recording (bench/exporters.sh; not
 * built by make).
 *
 * Writes N events with stack traces through the public writer API into FILE:
 * rec.CPUSample (flags T S: period, overruns, as spec/EVENTS.md) and, every
 * 10th event (k % 10 == 9), a rec.LockWait (flags D T S) on one of 8 named
 * locks, plus one rec.LockOrder per (thread, lock pair) so both graphs of
 * rec-lockgraph have work.  16 threads (event k is on thread k % 16), 2000
 * distinct stacks of depth 8..40 below two root frames (main, worker_loop);
 * everything is deterministic (splitmix64, ticks = k * 1000).
 *
 * The stack of pool index s is the one bench/jfr/StackEvents.java builds:
 * r = splitmix64 seeded with s + 1; depth = 8 + next(r) % 33; frame j (from
 * the root down) = f<next(r) % 8>.  Event k uses pool index
 * splitmix64(k) % 2000.  C frames are named "svc_f<d>" (Java: StackEvents.f<d>).
 *
 *   gen_stacks [--codec zstd|lz4|none] [--layout one|split] N FILE
 *
 * Prints: events=N samples=S lockwaits=L seconds=T bytes=B
 */
#include <stdio.h>
#include <string.h>

#include "common.h"

#define NSTACKS 2000u
#define NTHREADS 16u
#define NLOCKS 8u
#define NFUNCS 8u
#define ROOTS 2u
#define MAXDEPTH (40u + ROOTS)

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* splitmix64 step: state += golden gamma, return mix of the new state */
static uint64_t next_r(uint64_t *state)
{
	*state += 0x9E3779B97F4A7C15ull;
	return mix64(*state);
}

static int usage(void)
{
	fprintf(stderr, "usage: gen_stacks [--codec zstd|lz4|none] [--layout one|split] N FILE\n");
	return 2;
}

static int fail(const char *what, rec_status st, rec_writer *w)
{
	return bench_fail("gen_stacks", what, st, w);
}

static const rec_field cpu_fields[2] = {
	{ "period", "Period", "CPU time between samples", REC_TYPE_U64, REC_UNIT_NANOS },
	{ "overruns", "Overruns", "timer expirations merged", REC_TYPE_U32, REC_UNIT_COUNT },
};
static const rec_field wait_fields[4] = {
	{ "lockAddress", "Lock Address", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "lockName", "Lock Name", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "holderOsThreadId", "Holder OS Thread Id", "", REC_TYPE_U64, REC_UNIT_NONE },
	{ "lockKind", "Lock Kind", "", REC_TYPE_U8, REC_UNIT_NONE },
};
static const rec_field order_fields[4] = {
	{ "heldAddress", "Held Address", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "heldName", "Held Name", "", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "acquiredAddress", "Acquired Address", "", REC_TYPE_U64, REC_UNIT_ADDRESS },
	{ "acquiredName", "Acquired Name", "", REC_TYPE_STRING, REC_UNIT_NONE },
};

int main(int argc, char **argv)
{
	struct bench_out out = { .prog = "gen_stacks", .opts = REC_WRITER_OPTIONS_INIT };
	int rc = bench_out_open(&out, argc, argv, 0, NULL, NULL);
	if (rc != 0)
		return rc == 2 ? usage() : rc;
	rec_writer *w = out.w;
	const unsigned long long n = out.n;
	rec_status st = REC_OK;

	const rec_type types[3] = {
		{ 21, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "rec.CPUSample", "CPU Sample",
		  "a sample of a thread running on a CPU", "rec/Profiling", 2, cpu_fields },
		{ 16, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "rec.LockWait",
		  "Lock Wait", "a blocked lock acquisition", "rec/Locks", 4, wait_fields },
		{ 17, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "rec.LockOrder", "Lock Order",
		  "first acquisition of a lock while holding another", "rec/Locks", 4, order_fields },
	};
	for (int k = 0; k < 3; k++) {
		st = rec_writer_add_type(w, &types[k]);
		if (st != REC_OK)
			return fail("add_type", st, w);
	}

	/* frames: ids 1..NFUNCS are svc_f0..f7, then main, worker_loop */
	char buf[64];
	for (unsigned f = 0; f < NFUNCS + ROOTS; f++) {
		const char *name = f == NFUNCS ? "main" : f == NFUNCS + 1 ? "worker_loop" : NULL;
		if (!name) {
			snprintf(buf, sizeof buf, "svc_f%u", f);
			name = buf;
		}
		uint64_t sid = 0;
		st = rec_writer_intern_string(w, name, strlen(name), &sid);
		if (st == REC_OK)
			st = rec_writer_define_frame(w, f + 1, sid, 0, 0, 0);
		if (st != REC_OK)
			return fail("frame", st, w);
	}
	/* stacks 1..NSTACKS, leaf first */
	for (unsigned s = 0; s < NSTACKS; s++) {
		uint64_t r = s + 1, fr[MAXDEPTH], rootfirst[MAXDEPTH];
		unsigned depth = 8u + (unsigned)(next_r(&r) % 33u);
		rootfirst[0] = NFUNCS + 1; /* main */
		rootfirst[1] = NFUNCS + 2; /* worker_loop */
		for (unsigned j = 0; j < depth; j++)
			rootfirst[ROOTS + j] = 1 + next_r(&r) % NFUNCS;
		unsigned total = depth + ROOTS;
		for (unsigned j = 0; j < total; j++)
			fr[j] = rootfirst[total - 1 - j];
		st = rec_writer_define_stack(w, s + 1, 0, fr, total);
		if (st != REC_OK)
			return fail("define_stack", st, w);
	}
	for (unsigned t = 0; t < NTHREADS; t++) {
		uint64_t sid = 0;
		int len = snprintf(buf, sizeof buf, "worker-%u", t);
		st = rec_writer_intern_string(w, buf, (size_t)len, &sid);
		if (st == REC_OK)
			st = rec_writer_define_thread(w, t + 1, 10000 + t, sid);
		if (st != REC_OK)
			return fail("thread", st, w);
	}
	uint64_t lock_name[NLOCKS];
	for (unsigned l = 0; l < NLOCKS; l++) {
		int len = snprintf(buf, sizeof buf, "lock-%u", l);
		st = rec_writer_intern_string(w, buf, (size_t)len, &lock_name[l]);
		if (st != REC_OK)
			return fail("intern_string", st, w);
	}
#define LOCK_ADDR(l) (0x7f0000001000ull + (uint64_t)(l) * 0x40u)

	const uint64_t base = 1000000000ull;
	/* lock order: thread t takes lock (t % 8) then lock ((t + 1) % 8): a cycle */
	for (unsigned t = 0; t < NTHREADS; t++) {
		unsigned a = t % NLOCKS, b = (t + 1) % NLOCKS;
		st = rec_writer_begin(w, 17, base, 0, t + 1, 1 + (mix64(t) % NSTACKS));
		if (st == REC_OK)
			st = rec_writer_put_u64(w, LOCK_ADDR(a));
		if (st == REC_OK)
			st = rec_writer_put_u64(w, lock_name[a]);
		if (st == REC_OK)
			st = rec_writer_put_u64(w, LOCK_ADDR(b));
		if (st == REC_OK)
			st = rec_writer_put_u64(w, lock_name[b]);
		if (st == REC_OK)
			st = rec_writer_end(w);
		if (st != REC_OK)
			return fail("event", st, w);
	}

	unsigned long long samples = 0, waits = 0;
	for (unsigned long long k = 0; k < n; k++) {
		uint64_t h = mix64(k);
		uint64_t stack = 1 + h % NSTACKS;
		uint64_t thread = 1 + k % NTHREADS;
		uint64_t ticks = base + k * 1000u;
		if (k % 10 == 9) {
			unsigned l = (unsigned)((h >> 32) % NLOCKS);
			st = rec_writer_begin(w, 16, ticks, 20000u + (k % 1000u) * 100u, thread, stack);
			if (st == REC_OK)
				st = rec_writer_put_u64(w, LOCK_ADDR(l));
			if (st == REC_OK)
				st = rec_writer_put_u64(w, lock_name[l]);
			if (st == REC_OK)
				st = rec_writer_put_u64(w, 10000 + (thread % NTHREADS));
			if (st == REC_OK)
				st = rec_writer_put_u64(w, 0);
			waits++;
		} else {
			st = rec_writer_begin(w, 21, ticks, 0, thread, stack);
			if (st == REC_OK)
				st = rec_writer_put_u64(w, 10000000u);
			if (st == REC_OK)
				st = rec_writer_put_u64(w, 0);
			samples++;
		}
		if (st == REC_OK)
			st = rec_writer_end(w);
		if (st != REC_OK)
			return fail("event", st, w);
	}
	if (bench_out_close(&out) != 0)
		return 1;
	printf("events=%llu samples=%llu lockwaits=%llu seconds=%.3f bytes=%lld\n", n, samples, waits,
	       out.t1 - out.t0, out.size);
	return 0;
}
