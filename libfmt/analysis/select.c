/* SPDX-License-Identifier: MIT */
/*
 * select.c - which thread a user named: the --thread NAME|TID selection
 * of the analyses (rec_view, rec_lockgraph) and of the tools.
 */
#include <fnmatch.h>
#include <stdint.h>

#include "rec/analysis.h"

bool rec_thread_selected(const char *pattern, const rec_thread *t)
{
	if (!pattern)
		return true;
	if (!t)
		return false;
	/* All digits: an OS thread id (a thread may also be named so). */
	uint64_t v = 0;
	bool num = *pattern != 0;
	for (const char *p = pattern; *p && num; p++) {
		if (*p < '0' || *p > '9' || v > (UINT64_MAX - 9) / 10)
			num = false;
		else
			v = v * 10 + (uint64_t)(*p - '0');
	}
	if (num && t->os_tid == v)
		return true;
	return fnmatch(pattern, t->name ? t->name : "", 0) == 0;
}
