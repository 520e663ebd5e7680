/* SPDX-License-Identifier: MIT */
/*
 * pool.c - decoding the constant pools of a chunk (strings, threads,
 * modules, frames, stacks) into arrays sorted by id, resolving the
 * references between them, and looking entries up by id.
 */
#include <stdlib.h>
#include <string.h>

#include "read/read_internal.h"

/* Lookup in an array sorted by strictly increasing id: ids are usually
 * dense (1, 2, 3 ...), so try the direct slot first, then binary search. */
#define POOL_FIND(arr, n, id_)                                               \
	do {                                                                 \
		uint64_t id__ = (id_);                                       \
		if (id__ - 1 < (n) && (arr)[id__ - 1].id == id__)            \
			return &(arr)[id__ - 1];                             \
		size_t lo__ = 0, hi__ = (n);                                 \
		while (lo__ < hi__) {                                        \
			size_t mid__ = lo__ + (hi__ - lo__) / 2;             \
			if ((arr)[mid__].id < id__)                          \
				lo__ = mid__ + 1;                            \
			else if ((arr)[mid__].id > id__)                     \
				hi__ = mid__;                                \
			else                                                 \
				return &(arr)[mid__];                        \
		}                                                            \
		return NULL;                                                 \
	} while (0)

const rec_pstring *rec_rd_string(const rec_rchunk *c, uint64_t id)
{
	POOL_FIND(c->strs, c->nstrs, id);
}

const rec_thread *rec_rd_thread(const rec_rchunk *c, uint64_t id)
{
	POOL_FIND(c->threads, c->nthreads, id);
}

static const rec_module *find_module(const rec_rchunk *c, uint64_t id)
{
	POOL_FIND(c->modules, c->nmodules, id);
}

static const rec_frame *find_frame(const rec_rchunk *c, uint64_t id)
{
	POOL_FIND(c->frames, c->nframes, id);
}

const rec_stack *rec_rd_stack(const rec_rchunk *c, uint64_t id)
{
	POOL_FIND(c->stacks, c->nstacks, id);
}

typedef struct pdec {
	const uint8_t *p, *end, *start;
	uint64_t id;
} pdec;

static bool pv(pdec *d, uint64_t *v)
{
	return rec_varint_get(&d->p, d->end, v);
}

/* Next entry's id: a delta >= 1 from the previous one. */
static bool pid(pdec *d)
{
	uint64_t delta;
	if (!pv(d, &delta) || delta == 0 || delta > UINT64_MAX - d->id)
		return false;
	d->id += delta;
	return true;
}

/* Look a referenced string up: "" for id 0; false if missing. */
static bool ref_string(const rec_rchunk *c, uint64_t id, const char **out)
{
	if (id == 0) {
		*out = "";
		return true;
	}
	const rec_pstring *s = rec_rd_string(c, id);
	if (!s)
		return false;
	*out = s->ptr;
	return true;
}

/* Begin a pool: decompress it and allocate room for its entries.  Every
 * entry takes at least min_bytes, which bounds the allocation. */
static rec_status pool_begin(rec_reader *r, rec_rchunk *c, unsigned kind, size_t min_bytes,
			     size_t entry_size, pdec *d, void **arr, size_t *n)
{
	*arr = NULL;
	*n = 0;
	memset(d, 0, sizeof(*d));
	int si = c->known[kind];
	if (si < 0)
		return REC_OK;
	const rec_rsec *s = &c->secs[si];
	const uint8_t *p;
	rec_status st = rec_rd_section(r, c, (uint32_t)si, &p);
	if (st != REC_OK)
		return st;
	d->p = d->start = p;
	d->end = p + s->raw;
	if ((uint64_t)s->items * min_bytes > s->raw)
		return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, s->hoff,
					    "section %u (%s) declares %u entries in %u bytes", kind,
					    rec_rd_kind_name(kind), s->items, s->raw);
	*arr = rec_arena_alloc(&c->arena, (size_t)s->items * entry_size + 1);
	if (!*arr)
		return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, s->hoff, "out of memory");
	*n = s->items;
	return REC_OK;
}

static rec_status pool_bad(rec_reader *r, rec_rchunk *c, unsigned kind, size_t i, const pdec *d,
			   const char *what)
{
	const rec_rsec *s = &c->secs[c->known[kind]];
	return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, s->hoff,
				    "section %u (%s): entry %zu (id %llu) at byte %zu: %s", kind,
				    rec_rd_kind_name(kind), i, (unsigned long long)d->id,
				    (size_t)(d->p - d->start), what);
}

/* FRAME_SOURCE (1.2): Item_Count entries, each uvarint Id (a frame of the
 * chunk, increasing), uvarint Length, then Length bytes: Frame_Flags, File,
 * Line, Inline_Count, Inline_Count x (Function, File, Line), and bytes a
 * later version appends (skipped).  Sets the frames' file, line and flags;
 * *inl[i] / *ninl[i]: the inlined functions of frame i as frames. */
static rec_status load_frame_source(rec_reader *r, rec_rchunk *c, rec_frame ***inl_out,
				    uint32_t **ninl_out)
{
	pdec d;
	void *arr;
	size_t n;
	const unsigned K = REC_SECTION_FRAME_SOURCE;
	*inl_out = NULL;
	*ninl_out = NULL;
	rec_status st = pool_begin(r, c, K, 2, 1, &d, &arr, &n);
	if (st != REC_OK || n == 0)
		return st;
	if (c->nframes == 0) {
		d.id = 0;
		return pool_bad(r, c, K, 0, &d, "the chunk has no frames");
	}
	rec_frame **inl = rec_arena_alloc(&c->arena, c->nframes * sizeof(rec_frame *));
	uint32_t *ninl = rec_arena_alloc(&c->arena, c->nframes * sizeof *ninl);
	if (!inl || !ninl)
		return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, c->info.offset, "out of memory");
	memset(ninl, 0, c->nframes * sizeof *ninl);
	uint64_t prev = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t id, len, flags, file, line, count;
		if (!pv(&d, &id) || !pv(&d, &len))
			return pool_bad(r, c, K, i, &d, "malformed entry");
		d.id = id;
		if (id <= prev)
			return pool_bad(r, c, K, i, &d, "ids not increasing");
		prev = id;
		if (len > (uint64_t)(d.end - d.p))
			return pool_bad(r, c, K, i, &d, "entry crosses the end of the section");
		const rec_frame *fc = find_frame(c, id);
		if (!fc)
			return pool_bad(r, c, K, i, &d, "names a missing frame");
		rec_frame *f = &c->frames[fc - c->frames];
		pdec e = { d.p, d.p + len, d.start, id };
		d.p += len;
		if (!pv(&e, &flags) || !pv(&e, &file) || !pv(&e, &line) || !pv(&e, &count))
			return pool_bad(r, c, K, i, &e, "malformed entry");
		if (line > UINT32_MAX)
			return pool_bad(r, c, K, i, &e, "line out of range");
		if (count > REC_MAX_INLINE || count * 3 > (uint64_t)(e.end - e.p))
			return pool_bad(r, c, K, i, &e, "more inline frames than the limit of 64 or the entry");
		if (!ref_string(c, file, &f->file))
			return pool_bad(r, c, K, i, &e, "file references a missing string");
		f->line = (uint32_t)line;
		f->flags = (uint32_t)(flags & (REC_FRAME_PC_EXACT | REC_FRAME_UNSYMBOLIZED));
		size_t fi = (size_t)(f - c->frames);
		if (count == 0)
			continue;
		rec_frame *x = rec_arena_alloc(&c->arena, (size_t)count * sizeof *x);
		if (!x)
			return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, c->info.offset, "out of memory");
		for (uint64_t q = 0; q < count; q++) {
			uint64_t fn, ff, fl;
			if (!pv(&e, &fn) || !pv(&e, &ff) || !pv(&e, &fl))
				return pool_bad(r, c, K, i, &e, "malformed inline frame");
			if (fl > UINT32_MAX)
				return pool_bad(r, c, K, i, &e, "line out of range");
			x[q] = *f;
			if (!ref_string(c, fn, &x[q].function) || !ref_string(c, ff, &x[q].file))
				return pool_bad(r, c, K, i, &e, "inline frame references a missing string");
			x[q].function_offset = 0;
			x[q].line = (uint32_t)fl;
			x[q].inline_depth = (uint32_t)(count - q);
		}
		inl[fi] = x;
		ninl[fi] = (uint32_t)count;
	}
	*inl_out = inl;
	*ninl_out = ninl;
	return REC_OK;
}

rec_status rec_rd_load_pools(rec_reader *r, rec_rchunk *c)
{
	if (c->pools_loaded)
		return REC_OK;
	pdec d;
	void *arr;
	size_t n, i;
	rec_status st;

	/* STRINGS: copied once into the arena, NUL-terminated. */
	st = pool_begin(r, c, REC_SECTION_STRINGS, 2, sizeof(rec_pstring), &d, &arr, &n);
	if (st != REC_OK)
		return st;
	c->strs = arr;
	c->nstrs = n;
	if (n) {
		/* The bytes of all strings fit in the section: one block. */
		char *text = rec_arena_alloc(&c->arena, (size_t)(d.end - d.p) + n);
		if (!text)
			return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, c->info.offset, "out of memory");
		for (i = 0; i < n; i++) {
			uint64_t len;
			if (!pid(&d))
				return pool_bad(r, c, REC_SECTION_STRINGS, i, &d, "bad id delta");
			if (!pv(&d, &len))
				return pool_bad(r, c, REC_SECTION_STRINGS, i, &d, "bad length");
			if (len > REC_MAX_STRING)
				return pool_bad(r, c, REC_SECTION_STRINGS, i, &d,
						"string longer than the 1 MiB limit");
			if (len > (uint64_t)(d.end - d.p))
				return pool_bad(r, c, REC_SECTION_STRINGS, i, &d,
						"string crosses the end of the section");
			memcpy(text, d.p, (size_t)len);
			text[len] = 0;
			c->strs[i].id = d.id;
			c->strs[i].ptr = text;
			c->strs[i].len = (size_t)len;
			text += len + 1;
			d.p += len;
		}
	}

	/* THREADS */
	st = pool_begin(r, c, REC_SECTION_THREADS, 3, sizeof(rec_thread), &d, &arr, &n);
	if (st != REC_OK)
		return st;
	c->threads = arr;
	c->nthreads = n;
	for (i = 0; i < n; i++) {
		uint64_t name;
		rec_thread *t = &c->threads[i];
		if (!pid(&d) || !pv(&d, &t->os_tid) || !pv(&d, &name))
			return pool_bad(r, c, REC_SECTION_THREADS, i, &d, "malformed entry");
		t->id = d.id;
		if (!ref_string(c, name, &t->name))
			return pool_bad(r, c, REC_SECTION_THREADS, i, &d,
					"name references a missing string");
	}

	/* MODULES */
	st = pool_begin(r, c, REC_SECTION_MODULES, 4, sizeof(rec_module), &d, &arr, &n);
	if (st != REC_OK)
		return st;
	c->modules = arr;
	c->nmodules = n;
	for (i = 0; i < n; i++) {
		uint64_t path, build;
		rec_module *m = &c->modules[i];
		if (!pid(&d) || !pv(&d, &path) || !pv(&d, &build) || !pv(&d, &m->base))
			return pool_bad(r, c, REC_SECTION_MODULES, i, &d, "malformed entry");
		m->id = d.id;
		if (!ref_string(c, path, &m->path) || !ref_string(c, build, &m->build_id))
			return pool_bad(r, c, REC_SECTION_MODULES, i, &d,
					"references a missing string");
	}

	/* FRAMES */
	st = pool_begin(r, c, REC_SECTION_FRAMES, 5, sizeof(rec_frame), &d, &arr, &n);
	if (st != REC_OK)
		return st;
	c->frames = arr;
	c->nframes = n;
	for (i = 0; i < n; i++) {
		uint64_t fn, mod;
		rec_frame *f = &c->frames[i];
		if (!pid(&d) || !pv(&d, &fn) || !pv(&d, &mod) || !pv(&d, &f->module_offset) ||
		    !pv(&d, &f->function_offset))
			return pool_bad(r, c, REC_SECTION_FRAMES, i, &d, "malformed entry");
		f->id = d.id;
		if (!ref_string(c, fn, &f->function))
			return pool_bad(r, c, REC_SECTION_FRAMES, i, &d,
					"function references a missing string");
		f->module = NULL;
		if (mod && !(f->module = find_module(c, mod)))
			return pool_bad(r, c, REC_SECTION_FRAMES, i, &d,
					"references a missing module");
		f->file = "";
		f->line = 0;
		f->inline_depth = 0;
		f->flags = 0;
	}
	/* FRAME_SOURCE (1.2): files, lines and inline frames of frames. */
	rec_frame **inl = NULL; /* per frame: its inlined functions, innermost first */
	uint32_t *ninl = NULL;
	st = load_frame_source(r, c, &inl, &ninl);
	if (st != REC_OK)
		return st;
	for (i = 0; i < c->nframes; i++)
		r->stats.frames_unsymbolized += (uint64_t)rec_frame_unsymbolized(&c->frames[i]);
	size_t inline_budget = 65536 + (c->known[REC_SECTION_STACKS] >= 0
				? 4 * (size_t)c->secs[c->known[REC_SECTION_STACKS]].raw : 0);

	/* STACKS */
	st = pool_begin(r, c, REC_SECTION_STACKS, 3, sizeof(rec_stack), &d, &arr, &n);
	if (st != REC_OK)
		return st;
	c->stacks = arr;
	c->nstacks = n;
	for (i = 0; i < n; i++) {
		uint64_t flags, depth;
		rec_stack *s = &c->stacks[i];
		if (!pid(&d) || !pv(&d, &flags) || !pv(&d, &depth))
			return pool_bad(r, c, REC_SECTION_STACKS, i, &d, "malformed entry");
		s->id = d.id;
		if (depth > REC_MAX_STACK_DEPTH)
			return pool_bad(r, c, REC_SECTION_STACKS, i, &d,
					"depth exceeds the limit of 4096 frames");
		if (depth > (uint64_t)(d.end - d.p))
			return pool_bad(r, c, REC_SECTION_STACKS, i, &d,
					"depth larger than the section");
		const rec_frame **fr = rec_arena_alloc(&c->arena, (size_t)depth * sizeof(const rec_frame *) + 1);
		if (!fr)
			return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, c->info.offset, "out of memory");
		size_t extra = 0;
		for (uint64_t j = 0; j < depth; j++) {
			uint64_t fid;
			if (!pv(&d, &fid))
				return pool_bad(r, c, REC_SECTION_STACKS, i, &d, "malformed frame id");
			if (!(fr[j] = find_frame(c, fid)))
				return pool_bad(r, c, REC_SECTION_STACKS, i, &d,
						"references a missing frame");
			if (ninl)
				extra += ninl[fr[j] - c->frames];
		}
		s->flags = (uint32_t)(flags & REC_STACK_TRUNCATED);
		s->depth = (uint32_t)depth;
		s->frames = fr;
		if (extra && extra <= inline_budget) {
			/* Each frame's inlined functions before it, innermost first. */
			const rec_frame **x = rec_arena_alloc(&c->arena, ((size_t)depth + extra) *
								    sizeof(const rec_frame *));
			if (!x)
				return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, c->info.offset,
							    "out of memory");
			size_t k = 0;
			for (uint64_t j = 0; j < depth; j++) {
				size_t fi = (size_t)(fr[j] - c->frames);
				for (uint32_t q = 0; q < ninl[fi]; q++)
					x[k++] = &inl[fi][q];
				x[k++] = fr[j];
			}
			inline_budget -= extra;
			s->depth = (uint32_t)k;
			s->frames = x;
		}
	}
	/* Ids rise by at least 1 from 1 on: the last is the count exactly when
	 * the ids are 1..n, the direct slot of each (rec_rd_stack_at()). */
	c->threads_dense = c->nthreads && c->threads[c->nthreads - 1].id == c->nthreads;
	c->stacks_dense = c->nstacks && c->stacks[c->nstacks - 1].id == c->nstacks;
	c->pools_loaded = true;
	return REC_OK;
}
