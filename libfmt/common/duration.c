/* SPDX-License-Identifier: MIT */
/*
 * duration.c - the one duration parser (rec.h, rec_parse_duration()): the
 * recorder's REC_OPTIONS (flush=, maxage=, an events entry's threshold=),
 * REC_METRICS_PERIOD and the other period variables, REC_CPU_SAMPLE_PERIOD,
 * and every tool's duration and offset options (--min-wait, --from, --to)
 * read durations with it, so they all have one grammar.
 */
#include <stdbool.h>
#include <string.h>

#include "rec/rec.h"

rec_status rec_parse_duration(const char *s, size_t len, int64_t *ns)
{
	static const struct {
		const char *name;
		size_t len;
		uint64_t mul;
	} units[] = {
		{ "", 0, 1000000000ull }, { "ns", 2, 1 },	       { "us", 2, 1000ull },
		{ "ms", 2, 1000000ull },  { "s", 1, 1000000000ull },   { "m", 1, 60000000000ull },
		{ "min", 3, 60000000000ull }, { "h", 1, 3600000000000ull },
	};
	if (!s || !ns)
		return REC_ERR_INVALID_ARG;
	size_t i = 0;
	uint64_t ip = 0, frac = 0, fdiv = 1;
	bool digits = false;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (ip > (UINT64_MAX - 9) / 10)
			return REC_ERR_INVALID_ARG;
		ip = ip * 10 + (uint64_t)(s[i] - '0');
		digits = true;
	}
	if (i < len && s[i] == '.') {
		/* Up to 12 digits of the fraction count (below a picosecond
		 * of an hour's unit); the rest are read and ignored. */
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
			if (fdiv < 1000000000000ull) {
				frac = frac * 10 + (uint64_t)(s[i] - '0');
				fdiv *= 10;
			}
			digits = true;
		}
	}
	if (!digits)
		return REC_ERR_INVALID_ARG;
	uint64_t mul = 0;
	for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
		if (units[u].len == len - i && memcmp(s + i, units[u].name, units[u].len) == 0)
			mul = units[u].mul;
	if (!mul || ip > (uint64_t)INT64_MAX / mul)
		return REC_ERR_INVALID_ARG;
	uint64_t v = ip * mul;
	/* frac / fdiv * mul, rounded to nearest, exactly: frac < fdiv <= 1e12
	 * and mul <= 3.6e12, so the product fits in 128 bits. */
	unsigned __int128 f = ((unsigned __int128)frac * mul + fdiv / 2) / fdiv;
	if (f > (uint64_t)INT64_MAX - v)
		return REC_ERR_INVALID_ARG;
	*ns = (int64_t)(v + (uint64_t)f);
	return REC_OK;
}
