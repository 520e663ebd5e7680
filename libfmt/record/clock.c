/* SPDX-License-Identifier: MIT */
/*
 * clock.c - the recorder's tick source: the TSC when it is invariant
 * (cpuid 0x80000007 EDX bit 8, and /proc/cpuinfo lists constant_tsc and
 * nonstop_tsc), calibrated against CLOCK_MONOTONIC; CLOCK_MONOTONIC
 * nanoseconds (frequency 1e9) otherwise.  REC_CLOCK=mono in the environment
 * forces the fallback (for measurements and tests).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "record/recorder_internal.h"

/* First in the lock order (recorder_internal.h, LOCK ORDER). */
static pthread_mutex_t g_clock_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_clock_done;
static rec_clock_info g_clock;
static uint64_t g_cal_tsc0, g_cal_mono0; /* first calibration point */
#define CAL_SPIN_NS UINT64_C(200000) /* the first estimate's baseline */

uint64_t rec_clock_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t rec_clock_wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

uint64_t rec_clock_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return rec_clock_mono_ns();
#endif
}

static bool tsc_invariant(const char **why)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	const char *env = getenv("REC_CLOCK");
	if (env && strcmp(env, "mono") == 0) {
		*why = "REC_CLOCK=mono";
		return false;
	}
	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) {
		*why = "cpuid has no leaf 0x80000007";
		return false;
	}
	__get_cpuid(0x80000007u, &a, &b, &c, &d);
	if (!(d & (1u << 8))) {
		*why = "cpuid: TSC not invariant";
		return false;
	}
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f) {
		*why = "cannot read /proc/cpuinfo";
		return false;
	}
	char line[4096];
	bool constant = false, nonstop = false, seen_flags = false;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		seen_flags = true;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break; /* the first CPU is representative */
	}
	fclose(f);
	if (!seen_flags || !constant || !nonstop) {
		*why = "/proc/cpuinfo lacks constant_tsc/nonstop_tsc";
		return false;
	}
	*why = "invariant TSC";
	return true;
#else
	*why = "not x86";
	return false;
#endif
}

/* A (tsc, mono) pair read as close together as possible: the tightest of a
 * few tries. */
static void pair_read(uint64_t *tsc, uint64_t *mono)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = rec_clock_tsc();
		uint64_t m = rec_clock_mono_ns();
		uint64_t t1 = rec_clock_tsc();
		if (t1 - t0 < best) {
			best = t1 - t0;
			*tsc = t0 + (t1 - t0) / 2;
			*mono = m;
		}
	}
}

static uint64_t freq_from(uint64_t tsc0, uint64_t mono0, uint64_t tsc1, uint64_t mono1)
{
	if (mono1 <= mono0 || tsc1 <= tsc0)
		return 0;
	return (uint64_t)((unsigned __int128)(tsc1 - tsc0) * 1000000000u / (mono1 - mono0));
}

void rec_clock_get(rec_clock_info *out)
{
	pthread_mutex_lock(&g_clock_lock);
	if (!g_clock_done) {
		const char *why;
		g_clock.kind = REC_CLOCK_MONO;
		g_clock.frequency = 1000000000u;
		if (tsc_invariant(&why)) {
			uint64_t t1, m1;
			pair_read(&g_cal_tsc0, &g_cal_mono0);
			/* A first estimate over 200 us of spinning: each end is
			 * read within ~30 ns, so it is within ~50 ppm (here
			 * -28..+29 ppm against 50 ms), enough for thresholds;
			 * recorders refine it as they run (below).  A sleep
			 * instead would cost the program's start-up over 1 ms
			 * of wall time on a VM (timer slack, the wake-up). */
			unsigned spins = 0; /* bounded: a clock that stands still fails */
			do
				pair_read(&t1, &m1);
			while (m1 - g_cal_mono0 < CAL_SPIN_NS && ++spins < 1000000u);
			uint64_t f = freq_from(g_cal_tsc0, g_cal_mono0, t1, m1);
			if (f >= 1000000u) {
				g_clock.kind = REC_CLOCK_TSC;
				g_clock.frequency = f;
			} else {
				why = "TSC calibration failed";
			}
		}
		g_clock.why = why;
		g_clock_done = 1;
	} else if (g_clock.kind == REC_CLOCK_TSC) {
		/* Refine over the longer baseline since the first calibration. */
		uint64_t t1, m1;
		pair_read(&t1, &m1);
		if (m1 - g_cal_mono0 > 5 * CAL_SPIN_NS) {
			uint64_t f = freq_from(g_cal_tsc0, g_cal_mono0, t1, m1);
			if (f >= 1000000u)
				g_clock.frequency = f;
		}
	}
	*out = g_clock;
	pthread_mutex_unlock(&g_clock_lock);
}

void rec_clock_settle(uint64_t min_ns)
{
	pthread_mutex_lock(&g_clock_lock);
	bool tsc = g_clock_done && g_clock.kind == REC_CLOCK_TSC;
	uint64_t m0 = g_cal_mono0;
	pthread_mutex_unlock(&g_clock_lock);
	if (!tsc)
		return;
	uint64_t now = rec_clock_mono_ns();
	if (now - m0 >= min_ns)
		return;
	uint64_t left = min_ns - (now - m0);
	struct timespec ts = { (time_t)(left / 1000000000u), (long)(left % 1000000000u) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The decimal number at the start of p (after blanks), or false when there
 * is none or it does not fit (what sscanf("%llu") would not report). */
static bool parse_ull(const char *p, unsigned long long *out)
{
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p < '0' || *p > '9')
		return false;
	char *end;
	int saved = errno;
	errno = 0;
	unsigned long long v = strtoull(p, &end, 10);
	bool ok = errno == 0 && end != p;
	errno = saved;
	if (ok)
		*out = v;
	return ok;
}

/* The wall-clock time of boot, in ns: CLOCK_REALTIME - CLOCK_BOOTTIME, read
 * as the closest of a few pairs (both move together; NTP slews realtime by
 * parts per million).  0 if either clock fails.  /proc/stat's "btime" is
 * that value cut to whole seconds: up to 1 s early. */
static int64_t boot_wall_ns(void)
{
	int64_t best_gap = INT64_MAX, boot = 0;
	for (int i = 0; i < 3; i++) {
		struct timespec a, b, w;
		if (clock_gettime(CLOCK_BOOTTIME, &a) != 0 || clock_gettime(CLOCK_REALTIME, &w) != 0 ||
		    clock_gettime(CLOCK_BOOTTIME, &b) != 0)
			return 0;
		int64_t an = (int64_t)a.tv_sec * 1000000000 + a.tv_nsec;
		int64_t bn = (int64_t)b.tv_sec * 1000000000 + b.tv_nsec;
		int64_t wn = (int64_t)w.tv_sec * 1000000000 + w.tv_nsec;
		if (bn - an < best_gap) {
			best_gap = bn - an;
			boot = wn - (an + (bn - an) / 2);
		}
	}
	return boot;
}

int64_t rec_process_start_ns(void)
{
	/* /proc/self/stat field 22: start time in clock ticks after boot
	 * (CLOCK_BOOTTIME, cut to whole ticks: up to one tick, 10 ms at
	 * 100 Hz, early), added to the boot's wall-clock time. */
	char buf[1024];
	FILE *f = fopen("/proc/self/stat", "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p)
		return 0;
	unsigned long long start = 0;
	int field = 2;
	for (p++; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	if (field != 22 || !parse_ull(p, &start))
		return 0;
	int64_t boot = boot_wall_ns();
	long hz = sysconf(_SC_CLK_TCK);
	if (boot <= 0 || hz <= 0)
		return 0;
	/* Whole seconds and the rest apart: start * 1e9 overflows after ~5.8 years
	 * of uptime at 100 ticks/s. */
	unsigned long long uhz = (unsigned long long)hz;
	unsigned long long since_boot = start / uhz * 1000000000ull + start % uhz * 1000000000ull / uhz;
	if (since_boot > (unsigned long long)INT64_MAX / 2 || boot > INT64_MAX / 2)
		return 0;
	return boot + (int64_t)since_boot;
}

void rec_clock_fork_lock(int take)
{
	if (take)
		pthread_mutex_lock(&g_clock_lock);
	else
		pthread_mutex_unlock(&g_clock_lock);
}

void rec_clock_anchor(int kind, int64_t *wall_ns, uint64_t *ticks)
{
	if (kind == REC_CLOCK_TSC) {
		uint64_t best = UINT64_MAX;
		for (int i = 0; i < 5; i++) {
			uint64_t t0 = rec_clock_tsc();
			int64_t w = rec_clock_wall_ns();
			uint64_t t1 = rec_clock_tsc();
			if (t1 - t0 < best) {
				best = t1 - t0;
				*ticks = t0 + (t1 - t0) / 2;
				*wall_ns = w;
			}
		}
	} else {
		uint64_t m0 = rec_clock_mono_ns();
		int64_t w = rec_clock_wall_ns();
		uint64_t m1 = rec_clock_mono_ns();
		*ticks = m0 + (m1 - m0) / 2;
		*wall_ns = w;
	}
}
