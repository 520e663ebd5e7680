/* SPDX-License-Identifier: MIT */
/*
 * rec_test_lossbound.c - a recording service to be killed with SIGKILL
 * (tests/cli/recorder_killed.sh).  Usage:
 *
 *   rec_test_lossbound OUT.rec PUB NTHREADS
 *
 * Opens a recorder on OUT.rec with the default options (flush interval 1 s,
 * zstd), then NTHREADS threads each emit test.Seq events {thread, seq, pad}
 * with seq 0, 1, 2, ... counting only committed events (an emit that the
 * recorder refuses is retried with the same seq), 4 events then a 250 us
 * sleep, about 10-15 k events per second and thread.  pad is 16 random bytes
 * so the chunks do not compress to nothing.
 *
 * What was committed when is published in the file PUB (mmap MAP_SHARED, so
 * it survives the kill), layout lb_pub below, all little-endian u64 (the
 * host's order; read by the same machine):
 *   header: magic "RECLOSS1", nthreads, flush_ns, pid, open_ns (CLOCK_MONOTONIC
 *   when rec_recorder_open() returned, 0 before), max_checkpoints;
 *   then per thread max_checkpoints entries {t_ns, seq + 1}: t_ns is a
 *   CLOCK_MONOTONIC time read after rec_emit_commit() of seq returned, so
 *   "seq was committed at or before t_ns".  An entry is written when 500 us
 *   passed since the thread's previous one; seq + 1 is stored last (release),
 *   so an entry with seq + 1 == 0 is absent and a torn entry is never read
 *   as a later time for a seq.
 * The process never closes the recorder: it runs until killed (or 60 s,
 * then exits 3 without closing, as a safety net).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "rec/recorder.h"

#define LB_MAX_THREADS 16u
#define LB_CHECKPOINTS 32768u /* 16 s at one entry per 500 us */
#define LB_CP_EVERY_NS 500000u

typedef struct lb_cp {
	uint64_t t_ns;
	uint64_t seq1; /* seq + 1; 0 = no entry */
} lb_cp;

typedef struct lb_pub {
	char magic[8];
	uint64_t nthreads;
	uint64_t flush_ns;
	uint64_t pid;
	uint64_t open_ns;
	uint64_t max_checkpoints;
	lb_cp cp[]; /* nthreads * max_checkpoints */
} lb_pub;

static const rec_field seq_fields[] = {
	{ "thread", "Thread index", "", REC_TYPE_U32, REC_UNIT_NONE },
	{ "seq", "Sequence", "committed events of the thread before this one", REC_TYPE_U64,
	  REC_UNIT_COUNT },
	{ "pad", "Padding", "random bytes", REC_TYPE_BLOB, REC_UNIT_NONE },
};
static const rec_type seq_def = { 0, REC_EVENT_HAS_THREAD, "test.Seq", "Sequence", "", "test", 3,
				  seq_fields };

static lb_pub *g_pub;
static rec_event_type *g_type;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *worker(void *arg)
{
	const uint32_t idx = (uint32_t)(uintptr_t)arg;
	lb_cp *cps = &g_pub->cp[(size_t)idx * LB_CHECKPOINTS];
	size_t ncp = 0;
	uint64_t seq = 0, last_cp = 0, x = 0x9E3779B97F4A7C15ull * (idx + 1);
	const struct timespec pause = { 0, 250000 };
	for (;;) {
		for (int k = 0; k < 4; k++) {
			uint8_t pad[16];
			for (size_t i = 0; i < sizeof pad; i += 8) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				memcpy(pad + i, &x, 8);
			}
			rec_emit e;
			if (!rec_emit_begin(&e, g_type))
				continue; /* not committed: the same seq again */
			rec_emit_u64(&e, idx);
			rec_emit_u64(&e, seq);
			rec_emit_bytes(&e, pad, sizeof pad);
			rec_emit_commit(&e);
			uint64_t t = mono_ns();
			if (ncp < LB_CHECKPOINTS && t - last_cp >= LB_CP_EVERY_NS) {
				__atomic_store_n(&cps[ncp].t_ns, t, __ATOMIC_RELAXED);
				__atomic_store_n(&cps[ncp].seq1, seq + 1, __ATOMIC_RELEASE);
				ncp++;
				last_cp = t;
			}
			seq++;
		}
		nanosleep(&pause, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: rec_test_lossbound OUT.rec PUB NTHREADS\n");
		return 2;
	}
	unsigned long n = strtoul(argv[3], NULL, 10);
	if (n == 0 || n > LB_MAX_THREADS) {
		fprintf(stderr, "rec_test_lossbound: NTHREADS must be 1..%u\n", LB_MAX_THREADS);
		return 2;
	}
	size_t size = sizeof(lb_pub) + n * LB_CHECKPOINTS * sizeof(lb_cp);
	int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
		fprintf(stderr, "rec_test_lossbound: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	g_pub = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (g_pub == MAP_FAILED) {
		fprintf(stderr, "rec_test_lossbound: mmap: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	memcpy(g_pub->magic, "RECLOSS1", 8);
	g_pub->nthreads = n;
	g_pub->flush_ns = 1000000000u; /* the default: flush_interval_ms 0 */
	g_pub->pid = (uint64_t)getpid();
	g_pub->max_checkpoints = LB_CHECKPOINTS;

	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT; /* defaults: flush 1 s, zstd */
	o.path = argv[1];
	rec_recorder *r = NULL;
	rec_status st = rec_recorder_open(&r, &o);
	if (st != REC_OK) {
		fprintf(stderr, "rec_test_lossbound: open %s: %s\n", argv[1], rec_strerror(st));
		return 1;
	}
	st = rec_recorder_register_type(r, &seq_def, 0, 0, &g_type);
	if (st != REC_OK) {
		fprintf(stderr, "rec_test_lossbound: register: %s\n", rec_strerror(st));
		return 1;
	}
	__atomic_store_n(&g_pub->open_ns, mono_ns(), __ATOMIC_RELEASE);
	for (unsigned long i = 0; i < n; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, worker, (void *)(uintptr_t)i) != 0) {
			fprintf(stderr, "rec_test_lossbound: pthread_create failed\n");
			return 1;
		}
	}
	sleep(60);
	_exit(3); /* not killed: the test went wrong; exit without closing */
}
