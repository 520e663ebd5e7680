/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h - what every harness in fuzz/ shares: the libFuzzer entry point's
 * prototype (so -Wmissing-prototypes holds when gcc builds the replay
 * binaries) and small helpers that read every byte a borrowed pointer from
 * the reader claims, so ASan sees an overrun as soon as it happens.
 */
#ifndef REC_FUZZ_H
#define REC_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rec/rec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reader limits used by the harnesses: well below the defaults so that one
 * input (at most -max_len=65536 bytes) cannot make a single run allocate
 * hundreds of MiB and trip -rss_limit_mb; the default limits themselves are
 * exercised by tests/cli/limits.sh. */
#define REC_FUZZ_MAX_SECTION_RAW (16u * 1024u * 1024u)
#define REC_FUZZ_MAX_ORDER_WINDOW (64u * 1024u * 1024u)

static inline rec_reader_options rec_fuzz_options(uint32_t flags)
{
	rec_reader_options o = REC_READER_OPTIONS_INIT;
	o.flags = flags;
	o.max_section_raw = REC_FUZZ_MAX_SECTION_RAW;
	o.max_order_window = REC_FUZZ_MAX_ORDER_WINDOW;
	return o;
}

/* A reader on the input with the harness limits and flags; NULL if the
 * input is refused (an empty or unreadable one). */
static inline rec_reader *rec_fuzz_open(const uint8_t *data, size_t size, uint32_t flags)
{
	rec_reader_options o = rec_fuzz_options(flags);
	rec_reader *r = NULL;
	if (rec_reader_open_mem(&r, data, size, "fuzz", &o) != REC_OK) {
		rec_reader_close(r);
		return NULL;
	}
	return r;
}

/* A sink the optimizer cannot drop. */
static volatile uint64_t rec_fuzz_sink;

static inline void rec_fuzz_touch(const void *p, size_t n)
{
	const volatile uint8_t *b = p;
	uint64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += b[i];
	rec_fuzz_sink += s;
}

static inline void rec_fuzz_str(const char *s)
{
	if (s)
		rec_fuzz_touch(s, strlen(s) + 1);
}

static inline void rec_fuzz_problem(const rec_reader *r)
{
	const rec_problem *p = rec_reader_problem(r);
	if (p) {
		rec_fuzz_str(p->message);
		rec_fuzz_sink += p->offset + (uint64_t)p->chunk + (uint64_t)(int64_t)p->status;
	}
}

static inline void rec_fuzz_type(const rec_type *t)
{
	if (!t)
		return;
	rec_fuzz_str(t->name);
	rec_fuzz_str(t->label);
	rec_fuzz_str(t->category);
	rec_fuzz_str(t->description);
	for (uint32_t i = 0; i < t->field_count; i++) {
		rec_fuzz_str(t->fields[i].name);
		rec_fuzz_str(t->fields[i].label);
		rec_fuzz_str(t->fields[i].description);
		rec_fuzz_sink += t->fields[i].type + t->fields[i].unit;
	}
}

static inline void rec_fuzz_chunk_info(const rec_chunk_info *c)
{
	if (!c)
		return;
	rec_fuzz_sink += c->index + c->offset + c->size + c->payload_size + c->raw_size +
			 c->event_count + c->first_ticks + c->last_ticks + c->dropped_events;
	for (uint32_t i = 0; i < c->type_stats_count; i++) {
		rec_fuzz_sink += c->type_stats[i].type_id + c->type_stats[i].count + c->type_stats[i].bytes;
		rec_fuzz_type(c->type_stats[i].type);
	}
	for (uint32_t i = 0; i < c->type_count; i++)
		rec_fuzz_type(&c->types[i]);
	rec_fuzz_sink += (uint64_t)rec_chunk_wall_ns(c, c->last_ticks);
}

#endif /* REC_FUZZ_H */
