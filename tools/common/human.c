/* SPDX-License-Identifier: MIT */
/*
 * human.c - human formatting (cli.h, "human formatting"): durations, sizes,
 * wall-clock and ISO 8601 times.
 */
#include "cli.h"

#include <time.h>

size_t rec_fmt_duration(char *buf, int64_t ns)
{
	char *p = buf;
	uint64_t v;
	if (ns < 0) {
		*p++ = '-';
		v = (uint64_t)0 - (uint64_t)ns;
	} else {
		v = (uint64_t)ns;
	}
	if (v < 1000) {
		p += rec_fmt_u64(p, v);
		memcpy(p, " ns", 4);
		return (size_t)(p + 3 - buf);
	}
	/* Three decimals of the largest unit that keeps the integer part >= 1,
	 * rounded half up; a rounding that reaches 1000 moves to the next unit. */
	static const struct { uint64_t div; const char *name; } units[] = {
		{ 1000ull, " us" }, { 1000000ull, " ms" }, { 1000000000ull, " s" },
	};
	int u = v < 1000000ull ? 0 : v < 1000000000ull ? 1 : 2;
	uint64_t milli = (v + units[u].div / 2000) / (units[u].div / 1000); /* value * 1000 */
	if (u < 2 && milli >= 1000000) {
		u++;
		milli = (v + units[u].div / 2000) / (units[u].div / 1000);
	}
	p += rec_fmt_u64(p, milli / 1000);
	*p++ = '.';
	unsigned f = (unsigned)(milli % 1000);
	*p++ = (char)('0' + f / 100);
	*p++ = (char)('0' + f / 10 % 10);
	*p++ = (char)('0' + f % 10);
	size_t ul = strlen(units[u].name);
	memcpy(p, units[u].name, ul + 1);
	return (size_t)(p + ul - buf);
}

size_t rec_fmt_bytes(char *buf, uint64_t bytes)
{
	if (bytes < 1024) {
		size_t n = rec_fmt_u64(buf, bytes);
		memcpy(buf + n, bytes == 1 ? " byte" : " bytes", bytes == 1 ? 6 : 7);
		return n + (bytes == 1 ? 5 : 6);
	}
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes / 1024.0;
	int u = 0;
	while (v >= 1023.95 && u < 5) {
		v /= 1024.0;
		u++;
	}
	int n = snprintf(buf, 48, "%.1f %s", v, units[u]);
	return n > 0 ? (size_t)n : 0;
}

/* Cache of the last second formatted: events come in bursts within one
 * second, and localtime_r() is the expensive part. */
typedef struct wall_cache {
	int64_t sec;
	bool valid;
	char hms[16];   /* "10:14:03" */
	char date[16];  /* "2026-12-02" */
	char zone[16];  /* "Z" or "+01:00" */
} wall_cache;
static wall_cache g_wall;

static void wall_split(int64_t epoch_ns, int64_t *sec, uint32_t *nsec)
{
	int64_t s = epoch_ns / 1000000000;
	int64_t r = epoch_ns % 1000000000;
	if (r < 0) {
		r += 1000000000;
		s--;
	}
	*sec = s;
	*nsec = (uint32_t)r;
}

static void wall_fill(int64_t sec)
{
	if (g_wall.valid && g_wall.sec == sec)
		return;
	time_t t = (time_t)sec;
	struct tm tm;
	if (!localtime_r(&t, &tm)) {
		memset(&tm, 0, sizeof tm);
		tm.tm_year = 70;
		tm.tm_mday = 1;
	}
	snprintf(g_wall.hms, sizeof g_wall.hms, "%02d:%02d:%02d", tm.tm_hour % 100, tm.tm_min % 100,
		 tm.tm_sec % 100);
	long long year = (long long)tm.tm_year + 1900;
	if (year < 0 || year > 9999)
		year = year < 0 ? 0 : 9999;
	snprintf(g_wall.date, sizeof g_wall.date, "%04lld-%02d-%02d", year, (tm.tm_mon + 1) % 100,
		 tm.tm_mday % 100);
	long off = tm.tm_gmtoff;
	if (off == 0) {
		strcpy(g_wall.zone, "Z");
	} else {
		char sign = off < 0 ? '-' : '+';
		if (off < 0)
			off = -off;
		snprintf(g_wall.zone, sizeof g_wall.zone, "%c%02ld:%02ld", sign, (off / 3600) % 100,
			 (off / 60) % 60);
	}
	g_wall.sec = sec;
	g_wall.valid = true;
}

/* Three digits of v (< 1000) at p. */
static inline void put3(char *p, uint32_t v)
{
	uint32_t h = v / 100, t = v % 100;
	p[0] = (char)('0' + h);
	p[1] = (char)('0' + t / 10);
	p[2] = (char)('0' + t % 10);
}

/* The nine digits of nsec (< 10^9) at p, in three groups (constant
 * divisions, which the compiler makes multiplications, three at a time in
 * parallel instead of nine in a chain). */
static char *put_nanos(char *p, uint32_t nsec)
{
	uint32_t a = nsec / 1000000, r = nsec % 1000000;
	put3(p, a % 1000);
	put3(p + 3, r / 1000);
	put3(p + 6, r % 1000);
	return p + 9;
}

/* g_wall for the second of epoch_ns; its nanoseconds. */
static uint32_t wall_at(int64_t epoch_ns)
{
	int64_t sec;
	uint32_t nsec;
	wall_split(epoch_ns, &sec, &nsec);
	wall_fill(sec);
	return nsec;
}

/* "HH:MM:SS.nnnnnnnnn" of g_wall at p; the end. */
static char *put_hms_nanos(char *p, uint32_t nsec)
{
	memcpy(p, g_wall.hms, 8);
	p += 8;
	*p++ = '.';
	return put_nanos(p, nsec);
}

size_t rec_fmt_wall(char *buf, int64_t epoch_ns)
{
	char *p = put_hms_nanos(buf, wall_at(epoch_ns));
	*p++ = ' ';
	*p++ = '(';
	memcpy(p, g_wall.date, 10);
	p += 10;
	*p++ = ')';
	*p = 0;
	return (size_t)(p - buf);
}

size_t rec_fmt_iso(char *buf, int64_t epoch_ns)
{
	uint32_t nsec = wall_at(epoch_ns);
	char *p = buf;
	memcpy(p, g_wall.date, 10);
	p += 10;
	*p++ = 'T';
	p = put_hms_nanos(p, nsec);
	size_t zl = strlen(g_wall.zone);
	memcpy(p, g_wall.zone, zl + 1);
	return (size_t)(p + zl - buf);
}
