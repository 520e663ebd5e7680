/* SPDX-License-Identifier: MIT */
/*
 * window.c - the tools' --from/--to time window (cli.h, "time windows"):
 * parsing either an offset from the input's first event or a wall time,
 * the usage checks, and the bounds in wall nanoseconds.
 */
#include "cli.h"

void rec_cli_window_opt(rec_cli_window *w, bool to, const char *s)
{
	const char *option = to ? "--to" : "--from";
	int64_t v;
	int kind = rec_cli_parse_duration(s, &v) ? 1 : rec_cli_parse_iso_time(s, &v) ? 2 : 0;
	if (!kind)
		rec_cli_usage_error("%s: '%s' is not a duration (e.g. 10ms, 1.5s) nor a time "
				    "(2026-12-02T10:14:03[.frac][Z|+HH:MM])", option, s);
	if (to) {
		w->to_kind = kind;
		w->to = v;
	} else {
		w->from_kind = kind;
		w->from = v;
	}
}

void rec_cli_window_check(const rec_cli_window *w, bool rereadable)
{
	if (w->from_kind && w->to_kind && w->from_kind != w->to_kind)
		rec_cli_usage_error("--from and --to must both be offsets or both be times");
	if (w->from_kind && w->to_kind && w->to <= w->from)
		rec_cli_usage_error("--to is not after --from");
	if ((w->from_kind == 1 || w->to_kind == 1) && !rereadable)
		rec_cli_usage_error("--from/--to offsets need a regular FILE (not standard input)");
}

static int64_t add_sat(int64_t a, int64_t b)
{
	int64_t s;
	if (__builtin_add_overflow(a, b, &s))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return s;
}

void rec_cli_window_bounds(const rec_cli_window *w, const rec_cli_input *in, int64_t *lo,
			   int64_t *hi)
{
	*lo = INT64_MIN;
	*hi = INT64_MAX;
	int64_t start = 0;
	/* Offsets count from the input's first event; an input without one
	 * has no event to filter. */
	if ((w->from_kind == 1 || w->to_kind == 1) && !rec_cli_recording_start(in, false, &start))
		return;
	if (w->from_kind)
		*lo = w->from_kind == 1 ? add_sat(start, w->from) : w->from;
	if (w->to_kind)
		*hi = w->to_kind == 1 ? add_sat(start, w->to) : w->to;
}
