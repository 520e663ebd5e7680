/* SPDX-License-Identifier: MIT */
/*
 * findingdiff.h - how rec-report --baseline prints before and after
 * (findingdiff.c): the findings that went away, appeared, changed or stayed
 * (the library's rec_findings_diff_*), then the tables the rules read
 * (latency, where the time of spans goes, contention per lock, allocation
 * per site and per span) compared row by row (viewdiff.h).
 */
#ifndef REC_TOOLS_FINDINGDIFF_H
#define REC_TOOLS_FINDINGDIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "rec/findings.h"

/* Compare the findings of the baseline (before, read from the file named
 * baseline) with those of the inputs (after): as text (lines wrapped at
 * width) or, with json, one JSON document ("schema": 1).  Both must have
 * been through rec_findings_get().  false when out of memory (nothing
 * printed). */
bool rec_findingdiff_print(rec_findings *before, const char *baseline,
			   rec_findings *after, const struct rec_cli_input *in, size_t n,
			   const char *by, bool json, uint32_t width);

#endif /* REC_TOOLS_FINDINGDIFF_H */
