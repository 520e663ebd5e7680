/* SPDX-License-Identifier: MIT */
/*
 * enc_experiment - issue 22 ("the background thread's CPU per event"): what
 * candidate encodings of the EVENTS section would cost and save, offline, on
 * the records of real recordings (not built by make; one command):
 *
 *   . bench/lib.sh && BUILD=build bench_flags && $B_CC $B_CFLAGS -o build/enc_experiment bench/enc_experiment.c build/lib/librec.a $B_LIBS
 *   build/enc_experiment [--reps N] [--markdown] [--take] FILE...
 *
 * (bench/enc_experiment.sh makes the recordings of bench/RESULTS.md and runs
 * it on them.)
 *
 * Each FILE is read with the reader library (file order); every chunk's
 * records are rebuilt from the decoded events (type, ticks, duration, thread,
 * stack, field values; a string field's pool id is the order in which the
 * chunk's records first name that string, as a writer numbers them) and
 * re-encoded, chunk by chunk (a chunk is compressed on its own, as the
 * format wants), by each candidate:
 *
 *   today    the 1.2 record: Size, Type_Id, Time_Delta (to the previous
 *            record), [Duration], [Thread], [Stack], Fields.  Its raw bytes
 *            are checked against the chunk's STATS (the sum of the types'
 *            bytes): "today_vs_stats" in the output, the sum over chunks of
 *            the absolute difference, in percent of the STATS bytes (not
 *            0 where the file's string ids or trailing bytes differ from
 *            what this program numbers and rebuilds).
 *   runs     the Thread field left out of every record; a 2-3 byte marker
 *            (Size 0, then the thread id) wherever the thread changes.
 *   tdelta   today's record with Time_Delta to the previous record of the
 *            same thread (the chunk's Start_Ticks for its first): what an
 *            emitting thread could write itself, knowing only its own past.
 *   runs+tdelta  both.
 *   delta    runs+tdelta, plus every numeric field (u*, i*, duration; wire class 0/1,
 *            not pool references) as the svarint difference to the same
 *            field of the previous record of the same type and thread; a
 *            timestamp field as the svarint difference to the record's tick.
 *   split    today's fields, but in four streams one after the other in the
 *            section (Size+Type_Id and markers; Time_Delta; Duration and
 *            Stack; Thread and Fields), so like bytes sit together.
 *   tdelta+split, runs+tdelta+split, delta+split  those values in split's
 *            streams.
 *
 * For each: raw bytes an event, the encode time (ns an event, from the
 * decoded records: the transcode part of the take only, not its decode,
 * checks and pool marks), and for zstd levels -5, -1, 1, 3, librec's default
 * (level "0": level 1 with minMatch 4 and hashLog 13 since 2026-12-06, level
 * 3's dfast with hashLog 15, chainLog 10 before: libfmt/common/codec.c) and
 * LZ4 (acceleration 1): compressed bytes and compression ns an event (each
 * chunk compressed --reps times, 5 by default, the fastest kept).  One line
 * per (file, candidate, compressor) on stdout:
 *
 *   file=F events=E chunks=C enc=NAME raw=B encode_ns=N codec=C c_bytes=B c_ns=N
 *
 * (--markdown: a table per file instead, the one in bench/RESULTS.md)
 *
 * --take measures, instead, what an emitter-side final encoding would take
 * off the background thread: the writer's take of each chunk's records in
 * the interchange form (absolute Ticks; stack references 0, no stacks
 * defined) through rec_writer_append_records() in batches of at most 64 KiB
 * and rec_writer_flush() (decode, checks, pool marks, transcode and the
 * chunk's build; codec none, a sink that discards), against a memcpy of the
 * same bytes, the fastest of --reps for each chunk:
 *
 *   file=F events=E interchange_bytes=B take_ns=N memcpy_ns=M *
 * plus a line per file: other_bytes_per_event (file bytes - raw EVENTS
 * bytes, over events: the sections and headers that are not EVENTS, an upper
 * bound of what they add compressed).
 *
 * --streamed [--round-events N] [--pollute KIB] measures, for today, split
 * and runs+tdelta+split at zstd -1 and librec's default, how the section
 * would be compressed by the background thread, which compresses a chunk
 * in pieces as records arrive, between which the program's threads run:
 *
 *   one      the section in one frame, one call (the tables above)
 *   four     (split layouts) each stream its own frame, one call each
 *   pieces   the section in one frame fed in rounds of N events' bytes
 *            (2500 by default: bgcost's 25,000 events/s at ten rounds a
 *            second), KIB KiB of memory written between rounds (4096 by
 *            default; 0: none) so that the tables come back cold, as they
 *            do in the recorder; the writing is not timed
 *   four-pieces  each stream its own frame, every frame fed its share of
 *            each round
 *   blocks   (split layouts) one frame; each round's share of the four
 *            streams put one after the other (a block of the round's
 *            records split in four) and fed as one piece: what a writer
 *            can stream, since the whole of a stream is not known before
 *            the chunk closes (the shares are each stream's bytes divided
 *            evenly between the rounds, not cut at records: an estimate)
 *
 *   file=F events=E enc=NAME layout=L codec=C c_bytes=B c_ns=N
 *
 * --per-stream [--round-events N] [--pollute KIB] takes split's four
 * streams apart: each stream alone in its own frame, fed in rounds as
 * --streamed's four-pieces, with each zstd compressor above; which stream
 * costs the compressor's time and which gives it its bytes (a writer may
 * choose a level per stream: the format says only that each stream is one
 * frame of the chunk's codec):
 *
 *   file=F events=E stream=S raw=B codec=C c_bytes=B c_ns=N
 *
 * Single-threaded; run it on a quiet host or read the ns as relative.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zstd.h>

#include "rec/rec.h"

static int g_reps = 5;
static int g_markdown;
static int g_take;
static int g_streamed;
static int g_per_stream;
static size_t g_round_events = 2500;
static size_t g_pollute_kib = 4096;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- decoded records ---------------------------------------------------- */

enum { V_NUM, V_SNUM, V_POOL, V_F32, V_F64, V_BYTES, V_TS, V_SKIP, V_THREAD, V_STACK };

struct val {
	uint8_t kind;
	uint64_t u;
	const void *p; /* V_BYTES: copied into the arena */
	uint32_t len;
};

struct rec {
	uint32_t type, flags, nv;
	uint64_t ticks, dur, thread, stack;
	uint32_t v0; /* first value in vals */
};

struct chunk {
	struct rec *r;
	size_t n, cap;
	struct val *v;
	size_t nv, vcap;
	char *arena;
	size_t alen, acap;
	uint64_t start_ticks;
	uint64_t stats_bytes; /* the sum of the types' bytes in STATS */
	/* string pool: ptr -> id, by first appearance */
	const void **sp;
	uint64_t *sid;
	size_t scap, scount;
	/* by id: the strings' bytes (--take defines them in a writer) */
	const void **sbptr;
	size_t *sblen;
	size_t sbcap;
};

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n);
	if (!q) {
		fprintf(stderr, "enc_experiment: out of memory\n");
		exit(1);
	}
	return q;
}

static uint64_t str_id(struct chunk *c, const void *ptr, size_t len)
{
	if (!ptr)
		return 0;
	if (c->scount * 2 >= c->scap) {
		size_t ncap = c->scap ? c->scap * 2 : 1024;
		const void **np = calloc(ncap, sizeof *np);
		uint64_t *ni = calloc(ncap, sizeof *ni);
		if (!np || !ni)
			exit(1);
		for (size_t i = 0; i < c->scap; i++) {
			if (!c->sp[i])
				continue;
			size_t h = ((uintptr_t)c->sp[i] >> 3) * 0x9E3779B97F4A7C15ull % ncap;
			while (np[h])
				h = (h + 1) % ncap;
			np[h] = c->sp[i];
			ni[h] = c->sid[i];
		}
		free(c->sp);
		free(c->sid);
		c->sp = np;
		c->sid = ni;
		c->scap = ncap;
	}
	size_t h = ((uintptr_t)ptr >> 3) * 0x9E3779B97F4A7C15ull % c->scap;
	while (c->sp[h]) {
		if (c->sp[h] == ptr)
			return c->sid[h];
		h = (h + 1) % c->scap;
	}
	c->sp[h] = ptr;
	c->sid[h] = ++c->scount;
	if (c->scount >= c->sbcap) {
		c->sbcap = c->sbcap ? c->sbcap * 2 : 1024;
		c->sbptr = xrealloc(c->sbptr, c->sbcap * sizeof *c->sbptr);
		c->sblen = xrealloc(c->sblen, c->sbcap * sizeof *c->sblen);
	}
	c->sbptr[c->scount] = ptr;
	c->sblen[c->scount] = len;
	return c->sid[h];
}

static void chunk_reset(struct chunk *c)
{
	c->n = c->nv = c->alen = 0;
	c->scount = 0;
	if (c->sp)
		memset(c->sp, 0, c->scap * sizeof *c->sp);
}

static void add_event(struct chunk *c, const rec_event *ev)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 4096;
		c->r = xrealloc(c->r, c->cap * sizeof *c->r);
	}
	struct rec *r = &c->r[c->n++];
	r->type = ev->type->id;
	r->flags = ev->type->flags;
	r->ticks = ev->ticks;
	r->dur = ev->duration_ticks;
	r->thread = ev->thread ? ev->thread->id : 0;
	r->stack = ev->stack ? ev->stack->id : 0;
	r->nv = ev->value_count;
	r->v0 = (uint32_t)c->nv;
	for (uint32_t i = 0; i < ev->value_count; i++) {
		if (c->nv == c->vcap) {
			c->vcap = c->vcap ? c->vcap * 2 : 16384;
			c->v = xrealloc(c->v, c->vcap * sizeof *c->v);
		}
		const rec_value *x = &ev->values[i];
		struct val *v = &c->v[c->nv++];
		memset(v, 0, sizeof *v);
		uint32_t t = x->type;
		if (!x->present) {
			v->kind = V_SKIP;
			continue;
		}
		switch (t) {
		case 0x60: v->kind = V_POOL; v->u = str_id(c, x->v.s.ptr, x->v.s.len); break;
		case 0x78: v->kind = V_THREAD; v->u = x->v.thread ? x->v.thread->id : 0; break;
		case 0x80: v->kind = V_STACK; v->u = x->v.stack ? x->v.stack->id : 0; break;
		case 0x68: v->kind = V_TS; v->u = x->v.u; break;
		default:
			switch (REC_WIRE_OF(t)) {
			case REC_WIRE_UVARINT: v->kind = V_NUM; v->u = x->v.u; break;
			case REC_WIRE_SVARINT: v->kind = V_SNUM; v->u = (uint64_t)x->v.i; break;
			case REC_WIRE_FIXED32: {
				float f = (float)x->v.f;
				uint32_t b;
				memcpy(&b, &f, 4);
				v->kind = V_F32;
				v->u = b;
				break;
			}
			case REC_WIRE_FIXED64: v->kind = V_F64; memcpy(&v->u, &x->v.f, 8); break;
			default:
				v->kind = V_BYTES;
				if (c->alen + x->v.s.len > c->acap) {
					c->acap = (c->alen + x->v.s.len) * 2 + 4096;
					c->arena = xrealloc(c->arena, c->acap);
				}
				memcpy(c->arena + c->alen, x->v.s.ptr, x->v.s.len);
				v->u = c->alen; /* offset; p set when encoding */
				v->len = (uint32_t)x->v.s.len;
				c->alen += x->v.s.len;
				break;
			}
		}
	}
}

/* ---- encoders ---------------------------------------------------------- */

struct out {
	uint8_t *b;
	size_t n, cap;
};

static inline void put_byte(struct out *o, uint8_t x)
{
	o->b[o->n++] = x;
}

static inline void put_uv(struct out *o, uint64_t x)
{
	while (x >= 0x80) {
		o->b[o->n++] = (uint8_t)(x | 0x80);
		x >>= 7;
	}
	o->b[o->n++] = (uint8_t)x;
}

static inline uint64_t zz(int64_t x)
{
	return ((uint64_t)x << 1) ^ (uint64_t)(x >> 63);
}

static inline void put_sv(struct out *o, int64_t x)
{
	put_uv(o, zz(x));
}

static inline size_t uv_len(uint64_t x)
{
	size_t n = 1;
	while (x >= 0x80) {
		x >>= 7;
		n++;
	}
	return n;
}

static void reserve(struct out *o, size_t need)
{
	if (o->n + need > o->cap) {
		o->cap = (o->n + need) * 2;
		o->b = xrealloc(o->b, o->cap);
	}
}

#define F_RUNS 1u
#define F_DELTA 2u
#define F_SPLIT 4u
#define F_TDELTA 8u /* Time_Delta to the previous record of the same thread */

/* per-(type, thread) state of the delta candidate */
struct dstate {
	uint32_t type;
	uint64_t thread;
	uint64_t tick; /* the thread's last tick (type 0 entries) */
	uint64_t *last; /* the fields of the type's last record on this thread */
	uint32_t nv;
	int used;
};

struct dtab {
	struct dstate *e;
	size_t cap;
	uint64_t *pool;
	size_t pn, pcap;
	size_t *used; /* indexes of the used entries */
	size_t nused;
};

static struct dstate *dfind(struct dtab *t, uint32_t type, uint64_t thread, uint32_t nv)
{
	size_t h = (type * 0x9E3779B1u ^ thread * 0x9E3779B97F4A7C15ull) % t->cap;
	while (t->e[h].used) {
		if (t->e[h].type == type && t->e[h].thread == thread)
			return &t->e[h];
		h = (h + 1) % t->cap;
	}
	struct dstate *d = &t->e[h];
	if (t->nused == t->cap / 2) {
		fprintf(stderr, "enc_experiment: delta table full\n");
		exit(1);
	}
	t->used[t->nused++] = h;
	d->used = 1;
	d->type = type;
	d->thread = thread;
	d->tick = 0;
	d->nv = nv;
	if (t->pn + nv > t->pcap) {
		fprintf(stderr, "enc_experiment: delta pool full\n");
		exit(1);
	}
	d->last = t->pool + t->pn;
	memset(d->last, 0, nv * sizeof *d->last);
	t->pn += nv;
	return d;
}

/* Encode chunk c with flags into o (streams concatenated, each preceded by
 * its length when F_SPLIT). */
static void encode(const struct chunk *c, unsigned flags, struct out *o, struct dtab *dt,
		   struct out s[4])
{
	uint64_t prev_tick = c->start_ticks, cur_thread = 0;
	struct out *hdr = o, *tim = o, *ctx = o, *fld = o;
	o->n = 0;
	if (dt && (flags & (F_DELTA | F_TDELTA))) {
		/* forget the previous chunk's state: only the entries it used */
		for (size_t i = 0; i < dt->nused; i++)
			dt->e[dt->used[i]].used = 0;
		dt->nused = 0;
		dt->pn = 0;
	}
	if (flags & F_SPLIT) {
		for (int i = 0; i < 4; i++)
			s[i].n = 0;
		hdr = &s[0];
		tim = &s[1];
		ctx = &s[2];
		fld = &s[3];
	}
	uint8_t body[1 << 16];
	for (size_t i = 0; i < c->n; i++) {
		const struct rec *r = &c->r[i];
		struct dstate *td = NULL, *fd = NULL;
		int64_t tdelta;
		if ((flags & (F_DELTA | F_TDELTA)) && dt) {
			td = dfind(dt, 0, r->thread, 0);
			tdelta = (int64_t)(r->ticks - (td->tick ? td->tick : c->start_ticks));
			td->tick = r->ticks;
			if (flags & F_DELTA)
				fd = dfind(dt, r->type, r->thread, r->nv);
		} else {
			tdelta = (int64_t)(r->ticks - prev_tick);
		}
		prev_tick = r->ticks;
		for (int k = 0; k < 4; k++)
			reserve(k == 0 ? hdr : k == 1 ? tim : k == 2 ? ctx : fld, 64);
		if ((flags & F_RUNS) && (r->flags & REC_EVENT_HAS_THREAD) && r->thread != cur_thread) {
			put_byte(hdr, 0);
			put_uv(hdr, r->thread);
			cur_thread = r->thread;
		}
		/* the body: everything after Type_Id that is not a stream of its own */
		struct out b = { body, 0, sizeof body };
		struct out *bt = (flags & F_SPLIT) ? tim : &b, *bc = (flags & F_SPLIT) ? ctx : &b,
			   *bf = (flags & F_SPLIT) ? fld : &b;
		size_t before = tim->n + ctx->n + fld->n;
		put_sv(bt, tdelta);
		if (r->flags & REC_EVENT_HAS_DURATION)
			put_uv(bc, r->dur);
		if ((r->flags & REC_EVENT_HAS_THREAD) && !(flags & F_RUNS))
			put_uv(bf, r->thread);
		if (r->flags & REC_EVENT_HAS_STACK)
			put_uv(bc, r->stack);
		for (uint32_t j = 0; j < r->nv; j++) {
			const struct val *v = &c->v[r->v0 + j];
			if (v->kind == V_BYTES)
				reserve(bf, v->len + 16);
			if (fd && (v->kind == V_NUM || v->kind == V_SNUM)) {
				put_sv(bf, (int64_t)(v->u - fd->last[j]));
				fd->last[j] = v->u;
				continue;
			}
			if (fd && v->kind == V_TS) {
				put_sv(bf, (int64_t)(v->u - r->ticks));
				continue;
			}
			switch (v->kind) {
			case V_NUM: case V_POOL: case V_TS: case V_THREAD: case V_STACK:
				put_uv(bf, v->u);
				break;
			case V_SNUM: put_sv(bf, (int64_t)v->u); break;
			case V_F32:
				memcpy(bf->b + bf->n, &v->u, 4);
				bf->n += 4;
				break;
			case V_F64:
				memcpy(bf->b + bf->n, &v->u, 8);
				bf->n += 8;
				break;
			case V_BYTES:
				put_uv(bf, v->len);
				memcpy(bf->b + bf->n, c->arena + v->u, v->len);
				bf->n += v->len;
				break;
			default: break;
			}
		}
		size_t blen = (flags & F_SPLIT) ? tim->n + ctx->n + fld->n - before : b.n;
		size_t size = uv_len(r->type) + blen;
		put_uv(hdr, size);
		put_uv(hdr, r->type);
		if (!(flags & F_SPLIT)) {
			reserve(o, b.n);
			memcpy(o->b + o->n, b.b, b.n);
			o->n += b.n;
		}
	}
	if (flags & F_SPLIT) {
		/* the section: four stream lengths, then the streams */
		struct out *dst = o;
		size_t total = s[0].n + s[1].n + s[2].n + s[3].n + 40;
		reserve(dst, total);
		for (int k = 1; k < 4; k++)
			put_uv(dst, s[k].n);
		for (int k = 0; k < 4; k++) {
			memcpy(dst->b + dst->n, s[k].b, s[k].n);
			dst->n += s[k].n;
		}
	}
}

/* ---- the take (--take) ------------------------------------------------ */

/* The chunk's records in the interchange form (spec/FORMAT.md "Record
 * interchange form": absolute Ticks), every stack reference 0 (this program
 * defines no stacks in the writer). */
static void encode_interchange(const struct chunk *c, struct out *o)
{
	uint8_t body[1 << 16];
	o->n = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct rec *r = &c->r[i];
		struct out b = { body, 0, sizeof body };
		put_uv(&b, r->ticks);
		if (r->flags & REC_EVENT_HAS_DURATION)
			put_uv(&b, r->dur);
		if (r->flags & REC_EVENT_HAS_THREAD)
			put_uv(&b, r->thread);
		if (r->flags & REC_EVENT_HAS_STACK)
			put_uv(&b, 0);
		for (uint32_t j = 0; j < r->nv; j++) {
			const struct val *v = &c->v[r->v0 + j];
			switch (v->kind) {
			case V_NUM: case V_POOL: case V_TS: case V_THREAD: put_uv(&b, v->u); break;
			case V_STACK: put_uv(&b, 0); break;
			case V_SNUM: put_sv(&b, (int64_t)v->u); break;
			case V_F32: memcpy(b.b + b.n, &v->u, 4); b.n += 4; break;
			case V_F64: memcpy(b.b + b.n, &v->u, 8); b.n += 8; break;
			case V_BYTES:
				put_uv(&b, v->len);
				memcpy(b.b + b.n, c->arena + v->u, v->len);
				b.n += v->len;
				break;
			default: break;
			}
		}
		reserve(o, b.n + 24);
		put_uv(o, uv_len(r->type) + b.n);
		put_uv(o, r->type);
		memcpy(o->b + o->n, b.b, b.n);
		o->n += b.n;
	}
}

static int null_write(void *opaque, const void *buf, size_t len)
{
	(void)opaque;
	(void)buf;
	(void)len;
	return 0;
}

static void define_thread_once(rec_writer *w, uint64_t id, uint8_t *seen, size_t cap)
{
	if (id == 0)
		return;
	if (id < cap) {
		if (seen[id])
			return;
		seen[id] = 1;
	}
	rec_writer_define_thread(w, id, id, 0);
}

/* the take's buffers: the interchange bytes and their copy */
static struct out ib;
static uint8_t *cp;
static size_t cpcap;

struct take_totals {
	double writer_ns, memcpy_ns;
	uint64_t bytes, events;
	int failed;
};

/* The writer's take of the chunk's records (codec none, a sink that
 * discards): rec_writer_append_records() in batches of at most 64 KiB, then
 * rec_writer_flush(), the fastest of --reps; and a memcpy of the same bytes. */
static void take_chunk(const struct chunk *c, const rec_chunk_info *info, struct take_totals *tt)
{
	encode_interchange(c, &ib);
	if (ib.n > cpcap) {
		cpcap = ib.n;
		cp = xrealloc(cp, cpcap);
	}
	double best = 1e30, bestcp = 1e30;
	uint8_t seen[4096];
	for (int rep = 0; rep < g_reps; rep++) {
		rec_sink sink = { null_write, NULL, NULL };
		rec_writer_options opts = REC_WRITER_OPTIONS_INIT;
		opts.codec = REC_CODEC_NONE;
		opts.chunk_events_size = 64u << 20;
		rec_writer *w;
		if (rec_writer_open(&w, &sink, &opts) != REC_OK) {
			tt->failed = 1;
			return;
		}
		for (uint32_t i = 0; i < info->type_count; i++)
			if (rec_writer_add_type(w, &info->types[i]) != REC_OK)
				tt->failed = 1;
		for (size_t id = 1; id <= c->scount; id++)
			rec_writer_define_string(w, id, c->sbptr[id], c->sblen[id]);
		memset(seen, 0, sizeof seen);
		for (size_t i = 0; i < c->n; i++) {
			define_thread_once(w, c->r[i].thread, seen, sizeof seen);
			for (uint32_t j = 0; j < c->r[i].nv; j++)
				if (c->v[c->r[i].v0 + j].kind == V_THREAD)
					define_thread_once(w, c->v[c->r[i].v0 + j].u, seen, sizeof seen);
		}
		double t0 = now_ns();
		size_t at = 0;
		while (at < ib.n) {
			/* whole records, at most 64 KiB (or one larger record) */
			size_t end = at;
			while (end < ib.n) {
				uint64_t sz = 0;
				unsigned sh = 0;
				size_t k = end;
				while (ib.b[k] & 0x80) {
					sz |= (uint64_t)(ib.b[k++] & 0x7f) << sh;
					sh += 7;
				}
				sz |= (uint64_t)ib.b[k++] << sh;
				if (end > at && k + sz - at > 65536)
					break;
				end = k + sz;
			}
			if (rec_writer_append_records(w, ib.b + at, end - at) != REC_OK)
				tt->failed = 1;
			at = end;
		}
		if (rec_writer_flush(w) != REC_OK)
			tt->failed = 1;
		double t1 = now_ns() - t0;
		rec_writer_close(w);
		if (t1 < best)
			best = t1;
		t0 = now_ns();
		memcpy(cp, ib.b, ib.n);
		t1 = now_ns() - t0;
		if (t1 < bestcp)
			bestcp = t1;
	}
	tt->writer_ns += best;
	tt->memcpy_ns += bestcp;
	tt->bytes += ib.n;
	tt->events += c->n;
}

/* ---- compressors ------------------------------------------------------- */

struct comp {
	const char *name;
	int zlevel; /* 99 = LZ4 */
	int libdefault;
};

static const struct comp COMPS[] = {
	{ "zstd-5", -5, 0 }, { "zstd-1", -1, 0 }, { "zstd1", 1, 0 },
	{ "zstd0 (librec default)", 1, 1 }, { "zstd3", 3, 0 }, { "lz4", 99, 0 },
};
#define NCOMP (sizeof COMPS / sizeof COMPS[0])

/* A context set to compressor k (librec's default: level 1 with minMatch 4
 * and hashLog 13, as libfmt/common/codec.c) for pledged bytes. */
static void set_params(ZSTD_CCtx *c, const struct comp *k, size_t pledged)
{
	ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, k->zlevel);
	if (k->libdefault) {
		ZSTD_CCtx_setParameter(c, ZSTD_c_minMatch, 4);
		ZSTD_CCtx_setParameter(c, ZSTD_c_hashLog, 13);
	}
	ZSTD_CCtx_setPledgedSrcSize(c, pledged);
}

static size_t compress_one(ZSTD_CCtx *cc, const struct comp *k, const struct out *src, uint8_t *dst,
			   size_t cap)
{
	if (k->zlevel == 99)
		return (size_t)LZ4_compress_default((const char *)src->b, (char *)dst, (int)src->n,
						    (int)cap);
	set_params(cc, k, src->n);
	size_t r = ZSTD_compress2(cc, dst, cap, src->b, src->n);
	if (ZSTD_isError(r)) {
		fprintf(stderr, "enc_experiment: zstd: %s\n", ZSTD_getErrorName(r));
		exit(1);
	}
	return r;
}

struct cand {
	const char *name;
	unsigned flags;
};

static const struct cand CANDS[] = {
	{ "today", 0 },
	{ "runs", F_RUNS },
	{ "tdelta", F_TDELTA },
	{ "runs+tdelta", F_RUNS | F_TDELTA },
	{ "delta", F_RUNS | F_DELTA },
	{ "split", F_SPLIT },
	{ "tdelta+split", F_TDELTA | F_SPLIT },
	{ "runs+tdelta+split", F_RUNS | F_TDELTA | F_SPLIT },
	{ "delta+split", F_RUNS | F_DELTA | F_SPLIT },
};
#define NCAND (sizeof CANDS / sizeof CANDS[0])

struct totals {
	uint64_t raw;
	double enc_ns;
	uint64_t cbytes[NCOMP];
	double cns[NCOMP];
};


/* the encoders' and compressors' buffers, kept from chunk to chunk */
static struct out o, s[4];
static uint8_t *dst;
static size_t dcap;
static ZSTD_CCtx *cc;
static ZSTD_CCtx *scc[4]; /* --streamed: a context per stream */
static uint8_t *pollution;
/* --streamed: the four streams as blocks of a round each (see "blocks"
 * above); the round boundaries in blk_end[] for compress_rounds */
static struct out blk;
static size_t *blk_end, blk_cap;

static void free_buffers(void)
{
	free(o.b);
	for (int k = 0; k < 4; k++)
		free(s[k].b);
	free(dst);
	ZSTD_freeCCtx(cc);
	free(ib.b);
	free(cp);
	for (int k = 0; k < 4; k++)
		ZSTD_freeCCtx(scc[k]);
	free(pollution);
	free(blk.b);
	free(blk_end);
}

static void do_chunk(struct chunk *c, struct totals *t, uint64_t *check_bad, struct dtab *dt)
{
	if (!cc)
		cc = ZSTD_createCCtx();
	for (size_t k = 0; k < NCAND; k++) {
		double best = 1e30;
		for (int rep = 0; rep < g_reps; rep++) {
			double t0 = now_ns();
			encode(c, CANDS[k].flags, &o, dt, s);
			double t1 = now_ns() - t0;
			if (t1 < best)
				best = t1;
		}
		t[k].raw += o.n;
		t[k].enc_ns += best;
		if (k == 0)
			*check_bad += o.n > c->stats_bytes ? o.n - c->stats_bytes
							   : c->stats_bytes - o.n;
		size_t need = ZSTD_compressBound(o.n) + (size_t)LZ4_compressBound((int)o.n) + 64;
		if (need > dcap) {
			dcap = need;
			dst = xrealloc(dst, dcap);
		}
		for (size_t m = 0; m < NCOMP; m++) {
			double cb = 1e30;
			size_t n = 0;
			for (int rep = 0; rep < g_reps; rep++) {
				double t0 = now_ns();
				n = compress_one(cc, &COMPS[m], &o, dst, dcap);
				double t1 = now_ns() - t0;
				if (t1 < cb)
					cb = t1;
			}
			t[k].cbytes[m] += n;
			t[k].cns[m] += cb;
		}
	}
}

/* ---- the section compressed in pieces (--streamed) ------------------------ */

enum { L_ONE, L_FOUR, L_PIECES, L_FOUR_PIECES, L_BLOCKS, NLAYOUT };
static const char *const LAYOUTS[NLAYOUT] = { "one", "four", "pieces", "four-pieces", "blocks" };
static const struct cand SCANDS[] = {
	{ "today", 0 },
	{ "split", F_SPLIT },
	{ "runs+tdelta+split", F_RUNS | F_TDELTA | F_SPLIT },
};
#define NSCAND (sizeof SCANDS / sizeof SCANDS[0])
static const int SCOMPS[] = { 1, 2, 3 }; /* COMPS[]: zstd-1, zstd1, librec's default */
#define NSCOMP (sizeof SCOMPS / sizeof SCOMPS[0])

struct stotals {
	uint64_t cbytes[NSCAND][NSCOMP][NLAYOUT];
	double cns[NSCAND][NSCOMP][NLAYOUT];
};

/* Compress n streams, each its own frame, in rounds: round r feeds every
 * stream bytes [r * len / rounds, (r + 1) * len / rounds) of it, then the
 * pollution is written (not timed).  Returns the ns spent in zstd; *bytes:
 * the frames' total size. */
static double compress_rounds(const struct comp *k, const struct out *src, int n, size_t rounds,
			      size_t *bytes)
{
	double ns = 0;
	size_t total = 0, off[4] = { 0 };
	uint8_t *d = dst;
	size_t left = dcap;
	for (int i = 0; i < n; i++) {
		if (!scc[i])
			scc[i] = ZSTD_createCCtx();
		set_params(scc[i], k, src[i].n);
	}
	for (size_t r = 0; r < rounds; r++) {
		double t0 = now_ns();
		for (int i = 0; i < n; i++) {
			size_t to = (r + 1 == rounds) ? src[i].n
				    : src == &blk   ? blk_end[r]
						    : (r + 1) * src[i].n / rounds;
			ZSTD_inBuffer in = { src[i].b + off[i], to - off[i], 0 };
			ZSTD_EndDirective e = (r + 1 == rounds) ? ZSTD_e_end : ZSTD_e_continue;
			size_t ret;
			do {
				ZSTD_outBuffer ob = { d, left, 0 };
				ret = ZSTD_compressStream2(scc[i], &ob, &in, e);
				if (ZSTD_isError(ret)) {
					fprintf(stderr, "enc_experiment: zstd: %s\n", ZSTD_getErrorName(ret));
					exit(1);
				}
				d += ob.pos;
				left -= ob.pos;
				total += ob.pos;
			} while (e == ZSTD_e_end ? ret != 0 : in.pos < in.size);
			off[i] = to;
		}
		ns += now_ns() - t0;
		if (g_pollute_kib && r + 1 < rounds) {
			memset(pollution, (int)(r & 0xff), g_pollute_kib << 10);
			__asm__ volatile("" ::"r"(pollution) : "memory");
		}
	}
	*bytes = total;
	return ns;
}

static void blocks_of(const struct out st[4], size_t rounds)
{
	size_t total = st[0].n + st[1].n + st[2].n + st[3].n, off[4] = { 0 };
	reserve(&blk, total + 64);
	blk.n = 0;
	if (rounds > blk_cap) {
		blk_cap = rounds;
		blk_end = xrealloc(blk_end, blk_cap * sizeof *blk_end);
	}
	for (size_t r = 0; r < rounds; r++) {
		for (int i = 0; i < 4; i++) {
			size_t to = (r + 1 == rounds) ? st[i].n : (r + 1) * st[i].n / rounds;
			memcpy(blk.b + blk.n, st[i].b + off[i], to - off[i]);
			blk.n += to - off[i];
			off[i] = to;
		}
		blk_end[r] = blk.n;
	}
}

static void do_chunk_streamed(struct chunk *c, struct stotals *t, struct dtab *dt)
{
	if (!pollution && g_pollute_kib)
		pollution = xrealloc(NULL, g_pollute_kib << 10);
	size_t rounds = (c->n + g_round_events - 1) / g_round_events;
	for (size_t k = 0; k < NSCAND; k++) {
		encode(c, SCANDS[k].flags, &o, dt, s);
		size_t need = 2 * (ZSTD_compressBound(o.n) + 4096);
		if (need > dcap) {
			dcap = need;
			dst = xrealloc(dst, dcap);
		}
		for (size_t m = 0; m < NSCOMP; m++) {
			const struct comp *cp_ = &COMPS[SCOMPS[m]];
			for (int l = 0; l < NLAYOUT; l++) {
				int four = l == L_FOUR || l == L_FOUR_PIECES;
				if ((four || l == L_BLOCKS) && !(SCANDS[k].flags & F_SPLIT))
					continue;
				if (l == L_BLOCKS) {
					blocks_of(&s[0], rounds);
					double best = 1e30;
					size_t n = 0;
					for (int rep = 0; rep < g_reps; rep++) {
						double ns = compress_rounds(cp_, &blk, 1, rounds, &n);
						if (ns < best)
							best = ns;
					}
					t->cbytes[k][m][l] += n;
					t->cns[k][m][l] += best;
					continue;
				}
				double best = 1e30;
				size_t n = 0;
				for (int rep = 0; rep < g_reps; rep++) {
					double ns = compress_rounds(cp_, four ? s : &o, four ? 4 : 1,
								    l >= L_PIECES ? rounds : 1, &n);
					if (ns < best)
						best = ns;
				}
				t->cbytes[k][m][l] += n;
				t->cns[k][m][l] += best;
			}
		}
	}
}

/* --per-stream: totals per stream and zstd compressor (COMPS[] but LZ4). */
#define NPS_COMP (NCOMP - 1)
struct ptotals {
	uint64_t raw[4];
	uint64_t cbytes[4][NPS_COMP];
	double cns[4][NPS_COMP];
};

static void do_chunk_per_stream(struct chunk *c, struct ptotals *t, struct dtab *dt)
{
	if (!pollution && g_pollute_kib)
		pollution = xrealloc(NULL, g_pollute_kib << 10);
	size_t rounds = (c->n + g_round_events - 1) / g_round_events;
	encode(c, F_SPLIT, &o, dt, s);
	size_t need = 2 * (ZSTD_compressBound(o.n) + 4096);
	if (need > dcap) {
		dcap = need;
		dst = xrealloc(dst, dcap);
	}
	for (int i = 0; i < 4; i++) {
		t->raw[i] += s[i].n;
		if (!s[i].n)
			continue;
		for (size_t m = 0; m < NPS_COMP; m++) {
			double best = 1e30;
			size_t n = 0;
			for (int rep = 0; rep < g_reps; rep++) {
				double ns = compress_rounds(&COMPS[m], &s[i], 1, rounds, &n);
				if (ns < best)
					best = ns;
			}
			t->cbytes[i][m] += n;
			t->cns[i][m] += best;
		}
	}
}

/* What run_file allocated for one recording. */
static void free_state(struct chunk *c, struct dtab *dt)
{
	free(dt->e);
	free(dt->pool);
	free(dt->used);
	free(c->r);
	free(c->v);
	free(c->arena);
	free(c->sp);
	free(c->sid);
	free(c->sbptr);
	free(c->sblen);
}

static int run_file(const char *path)
{
	rec_reader *r;
	rec_status st = rec_reader_open_path(&r, path, NULL);
	if (st != REC_OK) {
		fprintf(stderr, "enc_experiment: %s: %s\n", path, rec_strerror(st));
		return 1;
	}
	struct chunk c = { 0 };
	struct totals t[NCAND];
	memset(t, 0, sizeof t);
	struct dtab dt = { 0 };
	dt.cap = 1 << 16;
	dt.e = calloc(dt.cap, sizeof *dt.e);
	dt.pcap = 1 << 22;
	dt.pool = calloc(dt.pcap, sizeof *dt.pool);
	dt.used = calloc(dt.cap, sizeof *dt.used);
	uint64_t events = 0, chunks = 0, check_bad = 0, raw_events = 0;
	struct take_totals tt = { 0 };
	static struct stotals stt;
	memset(&stt, 0, sizeof stt);
	static struct ptotals ptt;
	memset(&ptt, 0, sizeof ptt);
	const rec_chunk_info *info;
	while ((st = rec_reader_next_chunk(r, &info)) == REC_OK) {
		chunk_reset(&c);
		c.start_ticks = info->start_ticks;
		c.stats_bytes = 0;
		for (uint32_t i = 0; i < info->type_stats_count; i++)
			c.stats_bytes += info->type_stats[i].bytes;
		rec_event ev;
		while ((st = rec_reader_next_chunk_event(r, &ev)) == REC_OK)
			add_event(&c, &ev);
		if (st != REC_END) {
			fprintf(stderr, "enc_experiment: %s: %s\n", path, rec_reader_problem(r)->message);
			return 1;
		}
		if (c.n == 0)
			continue;
		chunks++;
		events += c.n;
		raw_events += c.stats_bytes;
		if (g_take)
			take_chunk(&c, info, &tt);
		else if (g_streamed)
			do_chunk_streamed(&c, &stt, &dt);
		else if (g_per_stream)
			do_chunk_per_stream(&c, &ptt, &dt);
		else
			do_chunk(&c, t, &check_bad, &dt);
	}
	rec_reader_close(r);
	if (g_take) {
		const char *b = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		printf("file=%s events=%" PRIu64 " interchange_bytes=%.3f take_ns=%.1f memcpy_ns=%.1f%s\n", b,
		       tt.events, (double)tt.bytes / (double)tt.events, tt.writer_ns / (double)tt.events,
		       tt.memcpy_ns / (double)tt.events, tt.failed ? " (the writer refused some)" : "");
		free_state(&c, &dt);
		return tt.failed;
	}
	if (g_streamed) {
		const char *b = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		for (size_t k = 0; k < NSCAND; k++)
			for (size_t m = 0; m < NSCOMP; m++)
				for (int l = 0; l < NLAYOUT; l++) {
					if (!stt.cbytes[k][m][l])
						continue;
					printf("file=%s events=%" PRIu64 " enc=%s layout=%s codec=%s round_events=%zu "
					       "pollute_kib=%zu c_bytes=%.3f c_ns=%.1f\n",
					       b, events, SCANDS[k].name, LAYOUTS[l], COMPS[SCOMPS[m]].name,
					       g_round_events, g_pollute_kib,
					       (double)stt.cbytes[k][m][l] / (double)events,
					       stt.cns[k][m][l] / (double)events);
				}
		free_state(&c, &dt);
		return 0;
	}
	if (g_per_stream) {
		static const char *const SNAME[4] = { "heads", "times", "refs", "bodies" };
		const char *b = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		for (int i = 0; i < 4; i++)
			for (size_t m = 0; m < NPS_COMP; m++)
				if (ptt.raw[i])
					printf("file=%s events=%" PRIu64 " stream=%s raw=%.3f codec=%s "
					       "c_bytes=%.3f c_ns=%.1f\n",
					       b, events, SNAME[i], (double)ptt.raw[i] / (double)events,
					       COMPS[m].name, (double)ptt.cbytes[i][m] / (double)events,
					       ptt.cns[i][m] / (double)events);
		free_state(&c, &dt);
		return 0;
	}
	struct stat sb;
	stat(path, &sb);
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	printf("file=%s events=%" PRIu64 " chunks=%" PRIu64 " file_bytes=%lld other_bytes_per_event=%.3f today_vs_stats=%.3f%%\n",
	       base, events, chunks, (long long)sb.st_size,
	       (double)((uint64_t)sb.st_size - raw_events) / (double)events,
	       100.0 * (double)check_bad / (double)raw_events);
	if (g_markdown) {
		printf("\n%s: %" PRIu64 " events, %" PRIu64 " chunks; other sections %.3f bytes an event raw\n\n",
		       base, events, chunks, (double)((uint64_t)sb.st_size - raw_events) / (double)events);
		printf("| encoding | raw B/ev | encode ns/ev |");
		for (size_t m = 0; m < NCOMP; m++)
			printf(" %s B/ev, ns/ev |", COMPS[m].name);
		printf("\n|---|---|---|");
		for (size_t m = 0; m < NCOMP; m++)
			printf("---|");
		printf("\n");
		for (size_t k = 0; k < NCAND; k++) {
			printf("| %s | %.3f | %.1f |", CANDS[k].name, (double)t[k].raw / (double)events,
			       t[k].enc_ns / (double)events);
			for (size_t m = 0; m < NCOMP; m++)
				printf(" %.3f, %.1f |", (double)t[k].cbytes[m] / (double)events,
				       t[k].cns[m] / (double)events);
			printf("\n");
		}
	} else
	for (size_t k = 0; k < NCAND; k++)
		for (size_t m = 0; m < NCOMP; m++)
			printf("file=%s enc=%s raw=%.3f encode_ns=%.1f codec=%s c_bytes=%.3f c_ns=%.1f\n",
			       base, CANDS[k].name, (double)t[k].raw / (double)events,
			       t[k].enc_ns / (double)events, COMPS[m].name,
			       (double)t[k].cbytes[m] / (double)events, t[k].cns[m] / (double)events);
	free_state(&c, &dt);
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1, rc = 0;
	for (;;) {
		if (i + 1 < argc && strcmp(argv[i], "--reps") == 0) {
			g_reps = atoi(argv[i + 1]);
			i += 2;
		} else if (i < argc && strcmp(argv[i], "--markdown") == 0) {
			g_markdown = 1;
			i++;
		} else if (i < argc && strcmp(argv[i], "--take") == 0) {
			g_take = 1;
			i++;
		} else if (i < argc && strcmp(argv[i], "--streamed") == 0) {
			g_streamed = 1;
			i++;
		} else if (i < argc && strcmp(argv[i], "--per-stream") == 0) {
			g_per_stream = 1;
			i++;
		} else if (i + 1 < argc && strcmp(argv[i], "--round-events") == 0) {
			g_round_events = (size_t)strtoul(argv[i + 1], NULL, 10);
			if (g_round_events == 0)
				g_round_events = 1;
			i += 2;
		} else if (i + 1 < argc && strcmp(argv[i], "--pollute") == 0) {
			g_pollute_kib = (size_t)strtoul(argv[i + 1], NULL, 10);
			i += 2;
		} else {
			break;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "usage: enc_experiment [--reps N] [--markdown] [--take] [--streamed "
				"[--round-events N] [--pollute KIB]] [--per-stream] FILE...\n");
		return 2;
	}
	for (; i < argc; i++)
		rc |= run_file(argv[i]);
	free_buffers();
	return rc;
}
