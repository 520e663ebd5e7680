/* SPDX-License-Identifier: MIT */
/*
 * report_timeline.h - the timeline of rec-report's HTML page: what each
 * thread did, as items of one lane per thread (OS tid), collected while the
 * events stream by in timestamp order and written as the page's JSON.
 *
 *   span        an event of the span types (--type, else every duration
 *               type whose name does not start with "rec."), labelled with
 *               its type and its --by value
 *   lock wait   rec.LockWait: the lock, the holder's tid at its start, and
 *               the parts charged to each holder (hand-offs)
 *   sleep       rec.Sleep (kind cond of older recordings: condition wait)
 *   cond wait   rec.CondWait: the mutex
 *   I/O         a duration event of a category rec/IO...
 *   CPU sample  rec.CPUSample: an instant standing for its period of CPU
 *
 * At most max items are kept (the first in time); the rest are counted per
 * kind, and the time the cut began is kept, for the page to say so.
 */
#ifndef REC_TOOLS_REPORT_TIMELINE_H
#define REC_TOOLS_REPORT_TIMELINE_H

#include <stdint.h>

#include "rec/rec.h"

typedef struct rec_report_timeline rec_report_timeline;

/* by, type: as rec-report's --by and --type (NULL: none); not copied. */
rec_report_timeline *rec_report_timeline_new(const char *by, const char *type, uint32_t max);
void rec_report_timeline_free(rec_report_timeline *t);
/* One event (from a REC_READ_ORDERED reader), used during the call only. */
void rec_report_timeline_add(rec_report_timeline *t, const rec_event *ev);
/* The first event's time (ns since the epoch; 0 before any event): the
 * page's offsets count from it. */
int64_t rec_report_timeline_start(const rec_report_timeline *t);
/* The JSON object {"start", "end", "max", "kinds", "seen", "kept", "cutAt",
 * "lanes": [[name, tid]...], "labels", "parts": [item, holderTid, start,
 * end, ...] (each kept lock wait split at its hand-offs: who held the lock
 * during each part, rec/lock_attrib.h), "items": [lane, kind, start, dur,
 * label, holderTid, ...]} through cli.h's output buffer; times in ns since
 * start ("start" itself: ns since the epoch as a string, beyond 2^53).
 * Call once, after the last event. */
void rec_report_timeline_json(rec_report_timeline *t);

#endif /* REC_TOOLS_REPORT_TIMELINE_H */
