/* SPDX-License-Identifier: MIT */
/*
 * view_alloc.c - "allocation-by-site": rec.Alloc bytes (the weight field:
 * the bytes each event stands for, exact in total; size when a recording
 * has no weight) per call site; and "live-heap": the blocks (sampled or
 * reported, address not 0) not freed by the end of the input, by stack.
 * live-heap holds one entry per block alive at the time (the recorder tracks
 * at most 4096 sampled blocks at once), removed at its rec.Free.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_internal.h"

typedef struct site_row {
	uint32_t site;
	uint64_t count, bytes;
} site_row;

/* ---- a u64 -> block map with deletion (linear probing, backward shift) ---- */
typedef struct block {
	uint64_t key;       /* 0: empty */
	uint64_t size, weight;
	uint32_t stack;     /* interned stack text */
	bool sampled;       /* a sampled block (rec_malloc), else reported */
} block;

typedef struct alloc_state {
	vmap rows;          /* site_row by site, or by stack for live-heap */
	uint64_t total;
	block *blocks;
	size_t nblocks, cap;
} alloc_state;

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static block *blk_find(alloc_state *s, uint64_t key)
{
	if (!s->cap)
		return NULL;
	for (size_t i = mix(key) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		if (s->blocks[i].key == key)
			return &s->blocks[i];
		if (!s->blocks[i].key)
			return NULL;
	}
}

static bool blk_grow(alloc_state *s)
{
	size_t nc = s->cap ? s->cap * 2 : 1024;
	block *t = calloc(nc, sizeof *t);
	if (!t)
		return false;
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->blocks[i].key)
			continue;
		size_t j = mix(s->blocks[i].key) & (nc - 1);
		while (t[j].key)
			j = (j + 1) & (nc - 1);
		t[j] = s->blocks[i];
	}
	free(s->blocks);
	s->blocks = t;
	s->cap = nc;
	return true;
}

static block *blk_put(alloc_state *s, uint64_t key)
{
	block *b = blk_find(s, key);
	if (b)
		return b;
	if ((s->nblocks + 1) * 4 > s->cap * 3 && !blk_grow(s))
		return NULL;
	size_t i = mix(key) & (s->cap - 1);
	while (s->blocks[i].key)
		i = (i + 1) & (s->cap - 1);
	memset(&s->blocks[i], 0, sizeof s->blocks[i]);
	s->blocks[i].key = key;
	s->nblocks++;
	return &s->blocks[i];
}

static void blk_del(alloc_state *s, block *b)
{
	size_t mask = s->cap - 1;
	size_t i = (size_t)(b - s->blocks);
	b->key = 0;
	s->nblocks--;
	for (size_t j = (i + 1) & mask; s->blocks[j].key; j = (j + 1) & mask) {
		size_t h = mix(s->blocks[j].key) & mask;
		/* move j back into the hole i when its home is not in (i, j] */
		if (((j - h) & mask) >= ((j - i) & mask)) {
			s->blocks[i] = s->blocks[j];
			s->blocks[j].key = 0;
			i = j;
		}
	}
}

/* ---- common ---- */

static rec_status al_init(rec_view *v)
{
	alloc_state *s = v->state;
	rec_vi_vmap_init(&s->rows, sizeof(site_row));
	return REC_OK;
}

static void al_free(rec_view *v)
{
	alloc_state *s = v->state;
	rec_vi_vmap_free(&s->rows);
	free(s->blocks);
}

static rec_status add_row(rec_view *v, uint32_t key, uint64_t count, uint64_t bytes)
{
	alloc_state *s = v->state;
	site_row *r = rec_vi_id_row(&s->rows, key, NULL);
	if (!r)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	r->count += count;
	r->bytes += bytes;
	s->total += bytes;
	return REC_OK;
}

uint64_t rec_vi_alloc_bytes(const vtype *t, const rec_event *ev)
{
	int w = vt_field(t, ev, VF_WEIGHT);
	return w >= 0 ? ev->values[w].v.u : vt_u64(t, ev, VF_SIZE, 0);
}

static rec_status site_add(rec_view *v, const rec_event *ev, bool selected)
{
	if (!selected)
		return REC_OK;
	const vtype *vt = rec_vi_vtype(v, ev);
	if (vt->role != VT_ALLOC)
		return REC_OK;
	uint32_t site = rec_vi_ev_site(v, ev);
	if (site == UINT32_MAX)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	return add_row(v, site, 1, rec_vi_alloc_bytes(vt, ev));
}

static bool site_wants(const rec_view *v, const rec_type *t)
{
	(void)v;
	return rec_vi_named(t, "rec.Alloc");
}

static bool live_wants(const rec_view *v, const rec_type *t)
{
	(void)v;
	return rec_vi_named(t, "rec.Alloc") || rec_vi_named(t, "rec.Free");
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	rec_view *v = ctx;
	const site_row *x = a, *y = b;
	return rec_vi_rank(v, x->bytes, y->bytes, x->site, y->site, 0, 0);
}

static rec_status site_finish(rec_view *v)
{
	alloc_state *s = v->state;
	static const rec_view_column cols[] = {
		{ "Site", "site", REC_VIEW_TEXT },
		{ "Allocations", "allocations", REC_VIEW_COUNT },
		{ "Bytes", "bytes", REC_VIEW_BYTES },
		{ "Percent", "percent", REC_VIEW_PERCENT },
	};
	vtable *t = rec_vi_table(v, "allocation_by_site", "Allocation by Site", cols, 4);
	if (!t)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	rec_vi_sort(s->rows.vals, s->rows.n, sizeof(site_row), cmp_rows, v);
	for (size_t i = 0; i < s->rows.n; i++) {
		site_row *r = vmap_at(&s->rows, i);
		rec_view_cell *c = rec_vi_row(v, t);
		if (!c)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		rec_vi_cell_text(v, &c[0], view_name(v, r->site));
		cell_u(&c[1], r->count);
		cell_u(&c[2], r->bytes);
		cell_f(&c[3], s->total ? 100.0 * (double)r->bytes / (double)s->total : 0.0);
	}
	rec_vi_note(v, t, "bytes: rec.Alloc's weight (the bytes each event stands for); "
			"[no stack]: the bytes counted after a thread's last sample");
	rec_vi_cut(v, t, v->o.top);
	return REC_OK;
}

/* ---- live-heap ---- */

/* The stack, root first, "a;b;c": the real frames (not the functions
 * inlined into them, as the SQL's frames table has them), librec's leaf
 * frames left out. */
static uint32_t stack_text(rec_view *v, const rec_stack *st)
{
	if (!st || !st->depth || !st->frames)
		return rec_vi_intern(v, "[no stack]", 10);
	uint32_t skip = rec_stack_site(st);
	char buf[4096];
	size_t off = 0;
	if (st->flags & REC_STACK_TRUNCATED)
		off += (size_t)snprintf(buf, sizeof buf, "[truncated];");
	bool first = true;
	for (uint32_t k = st->depth; k > skip && off < sizeof buf - 1; k--) {
		if (st->frames[k - 1] && st->frames[k - 1]->inline_depth > 0)
			continue;
		uint32_t f = rec_vi_frame(v, st->frames[k - 1]);
		if (f == UINT32_MAX)
			return UINT32_MAX;
		off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s", first ? "" : ";",
					view_name(v, f));
		first = false;
	}
	if (off >= sizeof buf)
		off = sizeof buf - 1;
	return rec_vi_intern(v, buf, off);
}

static rec_status live_add(rec_view *v, const rec_event *ev, bool selected)
{
	alloc_state *s = v->state;
	const vtype *vt = rec_vi_vtype(v, ev);
	bool alloc = vt->role == VT_ALLOC, fr = vt->role == VT_FREE;
	if (!alloc && !fr)
		return REC_OK;
	uint64_t addr = vt_u64(vt, ev, VF_ADDRESS, 0);
	if (!addr)
		return REC_OK;
	uint64_t key = mix(addr) ^ ((uint64_t)(ev->chunk ? ev->chunk->pid : 0) << 1) ^
		       (ev->chunk ? ev->chunk->run_id : 0);
	if (!key)
		key = 1;
	if (fr) {
		block *b = blk_find(s, key);
		if (b)
			blk_del(s, b);
		return REC_OK;
	}
	if (!selected)
		return REC_OK;
	uint32_t st = stack_text(v, ev->stack);
	if (st == UINT32_MAX)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	block *b = blk_put(s, key);
	if (!b)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	b->size = vt_u64(vt, ev, VF_SIZE, 0);
	b->weight = rec_vi_alloc_bytes(vt, ev);
	b->stack = st;
	b->sampled = vt_u64(vt, ev, VF_SAMPLED, 0) != 0;
	return REC_OK;
}

typedef struct live_row {
	uint32_t stack, sampled;
	uint64_t blocks, bytes, weight;
} live_row;

static int cmp_live(const void *a, const void *b, void *ctx)
{
	rec_view *v = ctx;
	const live_row *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	int c = strcmp(view_name(v, x->stack), view_name(v, y->stack));
	return c ? c : (int)x->sampled - (int)y->sampled;
}

static rec_status live_finish(rec_view *v)
{
	alloc_state *s = v->state;
	vmap m;
	rec_vi_vmap_init(&m, sizeof(live_row));
	uint64_t total = 0;
	for (size_t i = 0; i < s->cap; i++) {
		const block *b = &s->blocks[i];
		if (!b->key)
			continue;
		uint32_t key[2] = { b->stack, b->sampled };
		size_t k = rec_vi_vmap_get(&m, (const char *)key, sizeof key, NULL);
		if (k == SIZE_MAX) {
			rec_vi_vmap_free(&m);
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		}
		live_row *r = vmap_at(&m, k);
		r->stack = b->stack;
		r->sampled = b->sampled;
		r->blocks++;
		r->bytes += b->size;
		r->weight += b->weight;
		total += b->size;
	}
	static const rec_view_column cols[] = {
		{ "Stack", "stack", REC_VIEW_TEXT },
		{ "Kind", "kind", REC_VIEW_TEXT },
		{ "Blocks", "blocks", REC_VIEW_COUNT },
		{ "Bytes", "bytes", REC_VIEW_BYTES },
		{ "Percent", "percent", REC_VIEW_PERCENT },
		{ "Weight", "weight", REC_VIEW_BYTES },
	};
	vtable *t = rec_vi_table(v, "live_heap", "Live Heap by Stack (not freed at the end)", cols, 6);
	if (!t) {
		rec_vi_vmap_free(&m);
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	}
	rec_vi_sort(m.vals, m.n, sizeof(live_row), cmp_live, v);
	for (size_t i = 0; i < m.n; i++) {
		live_row *r = vmap_at(&m, i);
		rec_view_cell *c = rec_vi_row(v, t);
		if (!c) {
			rec_vi_vmap_free(&m);
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		}
		rec_vi_cell_text(v, &c[0], view_name(v, r->stack));
		rec_vi_cell_text(v, &c[1], r->sampled ? "sampled" : "reported");
		cell_u(&c[2], r->blocks);
		cell_u(&c[3], r->bytes);
		cell_f(&c[4], total ? 100.0 * (double)r->bytes / (double)total : 0.0);
		cell_u(&c[5], r->weight);
	}
	rec_vi_vmap_free(&m);
	rec_vi_note(v, t, "blocks with an address without a rec.Free by the end: sampled (rec_malloc) "
			"and reported (rec_alloc_report) apart; Weight: the allocated bytes they stand for");
	rec_vi_cut(v, t, v->o.top);
	return REC_OK;
}

const view_impl rec_view_alloc_site = {
	"allocation-by-site", "allocated bytes (rec.Alloc weight) per call site",
	false, sizeof(alloc_state), al_init, site_add, NULL, site_finish, al_free, site_wants,
	NULL,
};

const view_impl rec_view_live_heap = {
	"live-heap", "blocks not freed by the end of the recording, by stack",
	false, sizeof(alloc_state), al_init, live_add, NULL, live_finish, al_free, live_wants,
	NULL,
};
