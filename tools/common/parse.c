/* SPDX-License-Identifier: MIT */
/*
 * parse.c - the values the tools' options take (cli.h, "option parsing"): decimal
 * numbers, absolute wall-clock times, durations (the library's one grammar,
 * rec_parse_duration).
 */
#include "cli.h"

#include <inttypes.h>
#include <time.h>

bool rec_cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (!s || !*s)
		return false;
	uint64_t v = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (v < min || v > max)
		return false;
	*out = v;
	return true;
}

uint64_t rec_cli_opt_u64(const char *option, const char *s, uint64_t min, uint64_t max)
{
	uint64_t v;
	if (!rec_cli_parse_u64(s, min, max, &v))
		rec_cli_usage_error("%s: '%s' is not a number from %" PRIu64 " to %" PRIu64, option, s,
				    min, max);
	return v;
}

/* ---- absolute times ------------------------------------------------------ */

static bool digits_n(const char **p, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*p)[i];
		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (c - '0');
	}
	*p += n;
	*out = v;
	return true;
}

/* See cli.h. */
bool rec_cli_parse_iso_time(const char *s, int64_t *out)
{
	const char *p = s;
	int Y, M, D, h, m, sec = 0;
	if (!digits_n(&p, 4, &Y) || *p++ != '-' || !digits_n(&p, 2, &M) || *p++ != '-' ||
	    !digits_n(&p, 2, &D) || (*p != 'T' && *p != ' '))
		return false;
	p++;
	if (!digits_n(&p, 2, &h) || *p++ != ':' || !digits_n(&p, 2, &m))
		return false;
	int64_t nsec = 0;
	if (*p == ':') {
		p++;
		if (!digits_n(&p, 2, &sec))
			return false;
		if (*p == '.' || *p == ',') {
			p++;
			int64_t mul = 100000000;
			if (*p < '0' || *p > '9')
				return false;
			while (*p >= '0' && *p <= '9') {
				nsec += (*p - '0') * mul;
				mul /= 10;
				p++;
			}
		}
	}
	if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
		return false;
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	tm.tm_year = Y - 1900;
	tm.tm_mon = M - 1;
	tm.tm_mday = D;
	tm.tm_hour = h;
	tm.tm_min = m;
	tm.tm_sec = sec;
	time_t t;
	if (*p == 0) {
		tm.tm_isdst = -1;
		t = mktime(&tm);
	} else {
		long off = 0;
		if (*p == 'Z' && p[1] == 0) {
			off = 0;
		} else if ((*p == '+' || *p == '-') && p[1]) {
			int sign = *p == '-' ? -1 : 1, oh, om;
			p++;
			if (!digits_n(&p, 2, &oh) || *p++ != ':' || !digits_n(&p, 2, &om) || *p)
				return false;
			off = sign * (oh * 3600L + om * 60L);
		} else {
			return false;
		}
		t = timegm(&tm) - off;
	}
	if (t == (time_t)-1 && !(Y == 1969 || Y == 1970))
		return false;
	if ((int64_t)t > INT64_MAX / 1000000000 - 1 || (int64_t)t < INT64_MIN / 1000000000 + 1)
		return false;
	*out = (int64_t)t * 1000000000 + nsec;
	return true;
}

/* See cli.h. */
bool rec_cli_parse_duration(const char *s, int64_t *out)
{
	return s && rec_parse_duration(s, strlen(s), out) == REC_OK;
}
