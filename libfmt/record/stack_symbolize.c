/* SPDX-License-Identifier: MIT */
/*
 * stack_symbolize.c - the background thread's half of stacks: the pcs of
 * stacks interned since its last round (intern.c) are resolved with the
 * symbolizer (stack_symbolizer.c) once per distinct pc, each becoming a
 * frame id (the frame map) whose function, module, offsets, source file,
 * line and inline frames are queued for the writer's pools (bg.c defines them before the stacks that use
 * them).  Background thread only: no locks but the string table's.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "record/recorder_internal.h"
#include "record/stack_cfi.h"
#include "record/stack_internal.h"

/* pc -> frame id map, background only. */
/* pc -> frame id map (open addressing, 0 = empty key), background only. */
struct rec_frame_map {
	uintptr_t *keys;
	uint64_t *vals;
	size_t n, count;
	/* Frames whose source (file, line, inline frames) is still to be
	 * resolved: names come first, sources within SOURCE_BUDGET_NS of the
	 * background thread's CPU time per round (reading a module's DWARF
	 * the first time, or a burst of new addresses, would otherwise hold
	 * up the round that drains the threads' buffers). */
	struct pending_src { uintptr_t pc; uint64_t fid; } *src;
	size_t nsrc, csrc, src_head;
	uint64_t busy_load_ns; /* monotonic time of the last DWARF read in a busy round */
	/* The DWARF the sources read stays in memory (libc's, inflated from
	 * Debian's libc6-dbg: ~17 MB resident, README) until no frame has
	 * needed a source for keep_ns; each time a frame needs it again after
	 * that, twice as long (release_idle). */
	uint64_t last_source_ns; /* monotonic time of the last source resolved; 0: none yet */
	uint64_t keep_ns;        /* 0: SYMBOLS_KEEP_NS */
	uint64_t released;       /* times the DWARF was let go */
	int reread;              /* a source was resolved since the last release */
};

#define SOURCE_BUDGET_NS 2000000 /* 2 ms of CPU per round */
#define SOURCE_BUSY_RECORDS 4096 /* a round that drained more is busy */
#define SOURCE_BUSY_LOAD_NS 1000000000u /* a first DWARF read in busy rounds: 1 a second */
#define SYMBOLS_KEEP_NS (UINT64_C(60) * 1000000000u) /* the first wait before letting it go */
#define SYMBOLS_KEEP_MAX_NS (UINT64_C(3600) * 1000000000u)

uint64_t rec_test_symbols_keep_ns_;

rec_frame_map *rec_frame_map_new(void)
{
	return calloc(1, sizeof(rec_frame_map));
}

void rec_frame_map_free(rec_frame_map *m)
{
	if (m) {
		free(m->keys);
		free(m->vals);
		free(m->src);
		free(m);
	}
}

uint64_t rec_frame_map_get(const rec_frame_map *m, uintptr_t k)
{
	if (!m->n)
		return 0;
	size_t i = (size_t)(rec_hash_pcs(&k, 1, 0) & (m->n - 1));
	while (m->keys[i]) {
		if (m->keys[i] == k)
			return m->vals[i];
		i = (i + 1) & (m->n - 1);
	}
	return 0;
}

static bool fmap_put(rec_frame_map *m, uintptr_t k, uint64_t v)
{
	if ((m->count + 1) * 2 > m->n) {
		size_t nn = m->n ? m->n * 2 : 1024;
		uintptr_t *nk = calloc(nn, sizeof *nk);
		uint64_t *nv = calloc(nn, sizeof *nv);
		if (!nk || !nv) {
			free(nk);
			free(nv);
			return false;
		}
		for (size_t i = 0; i < m->n; i++) {
			if (!m->keys[i])
				continue;
			size_t j = (size_t)(rec_hash_pcs(&m->keys[i], 1, 0) & (nn - 1));
			while (nk[j])
				j = (j + 1) & (nn - 1);
			nk[j] = m->keys[i];
			nv[j] = m->vals[i];
		}
		free(m->keys);
		free(m->vals);
		m->keys = nk;
		m->vals = nv;
		m->n = nn;
	}
	size_t i = (size_t)(rec_hash_pcs(&k, 1, 0) & (m->n - 1));
	while (m->keys[i])
		i = (i + 1) & (m->n - 1);
	m->keys[i] = k;
	m->vals[i] = v;
	m->count++;
	return true;
}


static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Queue the frame source of a symbol (flags, file, line, inline frames)
 * for the writer; false on allocation failure. */
static bool queue_source(rec_recorder *r, rec_bg_pending *pd, uint64_t fid, const rec_symbol *sym)
{
	if (!sym->flags && !(sym->file && sym->file[0]) && !sym->line && !sym->inline_count)
		return true;
	if (!rec_array_grow((void **)&pd->srcs, &pd->csrcs, pd->nsrcs + 1, sizeof *pd->srcs, 64))
		return false;
	rec_pending_frame f = { fid, 0, 0, 0, 0, 0, sym->flags, sym->line, 0, 0 };
	if (sym->file && sym->file[0])
		f.file = rec_intern_bg(r, sym->file);
	if (sym->inline_count) {
		if (pd->ninl + sym->inline_count > pd->cinl) {
			size_t nc = (pd->cinl + sym->inline_count) * 2;
			rec_frame_inline *ni = realloc(pd->inl, nc * sizeof *ni);
			if (!ni)
				return false;
			pd->inl = ni;
			pd->cinl = nc;
		}
		f.inl_off = (uint32_t)pd->ninl;
		f.inl_n = sym->inline_count;
		for (uint32_t q = 0; q < sym->inline_count; q++) {
			const rec_inline_frame *x = &sym->inlined[q];
			rec_frame_inline *y = &pd->inl[pd->ninl++];
			y->function_string = x->function[0] ? rec_intern_bg(r, x->function) : 0;
			y->file_string = x->file[0] ? rec_intern_bg(r, x->file) : 0;
			y->line = x->line;
		}
	}
	pd->srcs[pd->nsrcs++] = f;
	return true;
}

/* Resolve queued frame sources while this round's budget lasts.  The
 * last rounds of a closing recorder resolve all (nothing comes later), and
 * so does the round of a dump (a flight recording's file) or of an explicit
 * flush: what they write is complete.  A busy round (many records drained)
 * resolves those that read no DWARF for the first time (a few us each),
 * and at most one first read of a module's DWARF (libc's: some 50 ms of
 * CPU, which holds up the next drain while the threads fill their buffers)
 * every SOURCE_BUSY_LOAD_NS: so a program that keeps the recorder busy gets
 * its files and lines within seconds, not only in its last chunk.  The
 * entries left wait in their order for a later round. */
static void resolve_sources(rec_recorder *r, rec_bg_pending *pd)
{
	rec_frame_map *fm = r->frame_map;
	if (!r->symbolizer || fm->src_head == fm->nsrc)
		return;
	if (rec_symbolizer_sources(r->symbolizer) == REC_SOURCES_NONE) {
		fm->src_head = fm->nsrc = 0;
		return;
	}
	const bool all = __atomic_load_n(&r->closing, __ATOMIC_ACQUIRE) != 0 || pd->sources_all;
	const bool busy = !all && pd->drained > SOURCE_BUSY_RECORDS;
	const uint64_t t0 = thread_cpu_ns(), now = rec_clock_mono_ns();
	bool may_load = !busy || fm->busy_load_ns == 0 || now - fm->busy_load_ns >= SOURCE_BUSY_LOAD_NS;
	size_t keep = fm->src_head; /* entries before it stay for later */
	size_t i = keep;
	while (i < fm->nsrc && (all || thread_cpu_ns() - t0 < SOURCE_BUDGET_NS)) {
		struct pending_src p = fm->src[i++];
		if (busy && !rec_symbolizer_source_cheap(r->symbolizer, p.pc)) {
			if (!may_load) {
				fm->src[keep++] = p; /* a later round reads that DWARF */
				continue;
			}
			may_load = false;
			fm->busy_load_ns = now;
		}
		rec_symbol sym;
		if (rec_symbolizer_source(r->symbolizer, p.pc, &sym) != REC_OK ||
		    !queue_source(r, pd, p.fid, &sym)) {
			fm->src[keep++] = p;
			break;
		}
		fm->last_source_ns = now;
		if (fm->released && !fm->reread) { /* let go too early: keep it longer */
			fm->reread = 1;
			fm->keep_ns = fm->keep_ns * 2 < SYMBOLS_KEEP_MAX_NS ? fm->keep_ns * 2
									 : SYMBOLS_KEEP_MAX_NS;
		}
	}
	memmove(&fm->src[keep], &fm->src[i], (fm->nsrc - i) * sizeof *fm->src);
	fm->nsrc = keep + (fm->nsrc - i);
	if (fm->src_head == fm->nsrc)
		fm->src_head = fm->nsrc = 0;
}

/* Let the symbolizer's DWARF go once no frame has needed a source for
 * keep_ns and none waits for one (the next that does reads it again:
 * ~60 ms for libc's, rate-limited as any first read), and give the freed
 * pages back (the inflated sections are large blocks of the heap). */
static void release_idle(rec_recorder *r, rec_frame_map *fm)
{
	if (!fm->keep_ns)
		fm->keep_ns = rec_test_symbols_keep_ns_ ? rec_test_symbols_keep_ns_ : SYMBOLS_KEEP_NS;
	if (!r->symbolizer || !fm->last_source_ns || fm->nsrc != fm->src_head ||
	    rec_clock_mono_ns() - fm->last_source_ns < fm->keep_ns)
		return;
	fm->last_source_ns = 0; /* until a source is read again */
	if (rec_symbolizer_release(r->symbolizer)) {
		fm->released++;
		fm->reread = 0;
		(void)malloc_trim(0);
	}
}

uint64_t rec_bg_symbols_released_(const rec_recorder *r)
{
	return r->frame_map ? r->frame_map->released : 0;
}

/* Symbolize the pcs of stacks interned since the last round (strings get
 * interned, modules/frames queued).  Returns the last stack id to define. */
uint64_t rec_bg_symbolize(rec_recorder *r, rec_bg_pending *pd)
{
	rec_stacktab *st = &r->stacks;
	/* The unwind tables follow the modules loaded and unloaded since the
	 * last round (cheap when none were: stack_cfi.h), so the stacks the
	 * threads capture walk a dlopen'ed library's call-frame information. */
	(void)rec_cfi_refresh();
	uint64_t last = __atomic_load_n(&st->next_id, __ATOMIC_ACQUIRE);
	if (last > st->ents_cap)
		last = st->ents_cap;
	rec_frame_map *fm = r->frame_map;
	for (uint64_t id = st->defined_upto + 1; id <= last; id++) {
		rec_stackent *e = &st->ents[id - 1];
		if (e->defined || e->mapped || __atomic_load_n(&e->ready, __ATOMIC_ACQUIRE) != 1)
			continue;
		for (uint32_t k = 0; k < e->depth; k++) {
			uintptr_t pc = st->arena[e->off + k];
			if (rec_frame_map_get(fm, pc))
				continue;
			rec_symbol sym;
			memset(&sym, 0, sizeof sym);
			if (!r->symbolizer || rec_symbolizer_lookup(r->symbolizer, pc, &sym) != REC_OK) {
				sym.function = "";
				sym.module_path = "";
				sym.build_id = "";
				sym.module_offset = REC_STACK_PC(pc);
			}
			uint64_t fid = ++r->next_frame_id;
			if (!fmap_put(fm, pc, fid))
				return id - 1;
			rec_pending_frame f = { fid, 0, sym.module_index, sym.module_offset, sym.function_offset,
						0, sym.flags, sym.line, 0, 0 };
			if (sym.function && sym.function[0])
				f.fn = rec_intern_bg(r, sym.function);
			/* the frame's flags now; its file, line and inline frames
			 * within the budget, in this round or a later one */
			f.line = 0;
			if (sym.flags && !queue_source(r, pd, fid, &sym))
				return id - 1;
			if (!(sym.flags & REC_FRAME_UNSYMBOLIZED) && sym.module_index) {
				if (!rec_array_grow((void **)&fm->src, &fm->csrc, fm->nsrc + 1,
						    sizeof *fm->src, 256))
					return id - 1;
				fm->src[fm->nsrc].pc = pc;
				fm->src[fm->nsrc].fid = fid;
				fm->nsrc++;
			}
			if (sym.module_index) {
				if (sym.module_index >= pd->mod_defined_cap) {
					size_t nc = ((size_t)sym.module_index + 1) * 2;
					uint8_t *nd = realloc(pd->mod_defined, nc);
					if (!nd)
						return id - 1;
					memset(nd + pd->mod_defined_cap, 0, nc - pd->mod_defined_cap);
					pd->mod_defined = nd;
					pd->mod_defined_cap = nc;
				}
				if (!pd->mod_defined[sym.module_index]) {
					rec_pending_module m = { sym.module_index,
							     sym.module_path ? rec_intern_bg(r, sym.module_path) : 0,
							     sym.build_id ? rec_intern_bg(r, sym.build_id) : 0,
							     sym.module_base };
					if (!rec_array_grow((void **)&pd->mods, &pd->cmods, pd->nmods + 1,
							    sizeof *pd->mods, 16))
						return id - 1;
					pd->mods[pd->nmods++] = m;
					pd->mod_defined[sym.module_index] = 1;
				}
			}
			if (!rec_array_grow((void **)&pd->frames, &pd->cframes, pd->nframes + 1,
					    sizeof *pd->frames, 64))
				return id - 1;
			pd->frames[pd->nframes++] = f;
		}
		/* Only a stack seen ready here is defined in this round: one
		 * that a thread publishes after this look waits for the next
		 * round, which maps its pcs first. */
		e->mapped = 1;
	}
	resolve_sources(r, pd);
	release_idle(r, fm);
	return last;
}
