/* SPDX-License-Identifier: MIT */
/*
 * events.c - fuzz full event iteration: pools (strings, threads, modules,
 * frames, stacks), event records and field decoding, once in file order and
 * once in timestamp order (REC_READ_ORDERED, which sorts and merges chunks),
 * and once so with the CPU samples as digests.
 * Every value the reader hands out is read completely: strings, texts and
 * blobs byte by byte, threads, stacks with all their frames and modules,
 * the frames' sources and inlined functions (format 1.2) and their text.
 */
#include "fuzz.h"

static void touch_frame(const rec_frame *f)
{
	if (!f)
		return;
	rec_fuzz_sink += f->id + f->module_offset + f->function_offset;
	rec_fuzz_str(f->function);
	/* format 1.2 (FRAME_SOURCE): source position, inline depth, flags; an
	 * inlined function's frame is the reader's own (arena) copy */
	rec_fuzz_str(f->file);
	rec_fuzz_sink += f->line + f->inline_depth + f->flags;
	char buf[256];
	rec_fuzz_sink += rec_frame_format(f, 0, buf, sizeof buf) +
			 rec_frame_format(f, REC_FRAME_LINE, buf, sizeof buf) +
			 (uint64_t)rec_frame_unsymbolized(f);
	if (f->module) {
		rec_fuzz_str(f->module->path);
		rec_fuzz_str(f->module->build_id);
		rec_fuzz_sink += f->module->base + f->module->id;
	}
}

static void touch_stack(const rec_stack *s)
{
	if (!s)
		return;
	rec_fuzz_sink += s->id + s->flags + s->depth;
	for (uint32_t i = 0; i < s->depth; i++)
		touch_frame(s->frames[i]);
}

static void touch_thread(const rec_thread *t)
{
	if (!t)
		return;
	rec_fuzz_sink += t->id + t->os_tid;
	rec_fuzz_str(t->name);
}

static void touch_event(const rec_event *ev)
{
	rec_fuzz_type(ev->type);
	rec_fuzz_chunk_info(ev->chunk);
	rec_fuzz_sink += ev->ticks + (uint64_t)ev->wall_ns + ev->duration_ticks +
			 (uint64_t)ev->duration_ns + ev->offset;
	touch_thread(ev->thread);
	touch_stack(ev->stack);
	for (uint32_t i = 0; i < ev->value_count; i++) {
		const rec_value *v = &ev->values[i];
		if (!v->present)
			continue;
		switch (v->type) {
		case REC_TYPE_STRING:
		case REC_TYPE_TEXT:
		case REC_TYPE_BLOB:
			if (v->v.s.ptr)
				rec_fuzz_touch(v->v.s.ptr, v->v.s.len);
			break;
		case REC_TYPE_THREAD:
			touch_thread(v->v.thread);
			break;
		case REC_TYPE_STACK:
			touch_stack(v->v.stack);
			break;
		default:
			rec_fuzz_sink += v->v.u;
			break;
		}
	}
}

/* A digest's every part read (rec_reader_digest_type()). */
static void touch_digests(void *ctx, const rec_chunk_info *c, const rec_type *t, const rec_digest *d,
			  size_t n)
{
	(void)ctx;
	rec_fuzz_chunk_info(c);
	rec_fuzz_type(t);
	for (size_t i = 0; i < n; i++) {
		rec_fuzz_sink += d[i].ticks + (uint64_t)d[i].wall_ns + d[i].field[0] + d[i].field[1];
		touch_thread(d[i].thread);
		touch_stack(d[i].stack);
	}
}

/* digest: in timestamp order, rec.CPUSample's events as digests */
static void iterate(const uint8_t *data, size_t size, uint32_t flags, bool digest)
{
	rec_reader *r = rec_fuzz_open(data, size, flags);
	if (!r)
		return;
	if (digest && rec_reader_digest_type(r, "rec.CPUSample", touch_digests, NULL) != REC_OK) {
		rec_reader_close(r);
		return;
	}
	for (;;) {
		rec_event ev;
		rec_status st = rec_reader_next_event(r, &ev);
		if (st == REC_END)
			break;
		if (st == REC_OK)
			touch_event(&ev);
		else
			rec_fuzz_problem(r);
	}
	rec_reader_stats rs;
	rec_reader_get_stats(r, &rs);
	rec_fuzz_sink += rs.events + rs.unknown_types + rs.order_window_overflows;
	rec_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	iterate(data, size, 0, false);
	iterate(data, size, REC_READ_ORDERED, false);
	iterate(data, size, REC_READ_ORDERED, true);
	return 0;
}
