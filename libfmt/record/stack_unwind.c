/* SPDX-License-Identifier: MIT */
/*
 * stack_unwind.c - the signal-time walk over the unwind tables of
 * stack_cfi.c: from an interrupted pc/sp/rbp, frame by frame, the CFA from
 * the row covering the pc, the return address and the caller's rbp read
 * from the stack at the row's offsets.  Frame pointers where a module has
 * no row; the kernel's signal frame (glibc's __restore_rt, whose CFI says
 * 'S') followed into the interrupted context.  Async-signal-safe: no
 * allocation, lock or system call; it reads only the snapshot and the
 * stack, every stack word between the unwound frame's stack pointer and the
 * top of the thread's stack (mapped memory), never code; a frame that does
 * not go up the stack, or leaves it, ends the walk.  See stack_cfi.h.
 */
#include "record/stack_cfi.h"
#include "record/stack_internal.h"

#include <stddef.h>
#include <string.h>
#include <ucontext.h>

#if defined(__GNUC__) || defined(__clang__)
#define REC_NO_ASAN __attribute__((no_sanitize_address))
#else
#define REC_NO_ASAN
#endif

/* How walks ended, counted in the walk's slot (rec_cfi_walk): the lines of
 * threads that walk at once apart, as the walks' counts in stack_cfi.c. */
static struct {
	uint64_t ends[REC_UNWIND_END_COUNT];      /* signals' interrupted stacks */
	uint64_t here_ends[REC_UNWIND_END_COUNT]; /* captures in the calling thread */
} __attribute__((aligned(128))) g_end_slots[REC_CFI_WALK_SLOTS];

/* In the thread's own slot a plain increment, else a locked one.  A walk in
 * a signal handler that interrupts the plain increment between its load and
 * its store goes uncounted: these counts are diagnostics for the tests
 * (rec_unwind_counts), not figures a tool prints. */
static void count_end(const rec_cfi_walk *w, uint64_t *slot_counts, rec_unwind_end why)
{
	if (w->own)
		__atomic_store_n(&slot_counts[why],
				 __atomic_load_n(&slot_counts[why], __ATOMIC_RELAXED) + 1,
				 __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&slot_counts[why], 1, __ATOMIC_RELAXED);
}

void rec_unwind_counts(uint64_t counts[REC_UNWIND_END_COUNT])
{
	for (int i = 0; i < REC_UNWIND_END_COUNT; i++) {
		counts[i] = 0;
		for (unsigned k = 0; k < REC_CFI_WALK_SLOTS; k++)
			counts[i] += __atomic_load_n(&g_end_slots[k].ends[i], __ATOMIC_RELAXED);
	}
}

void rec_unwind_here_counts(uint64_t counts[REC_UNWIND_END_COUNT])
{
	for (int i = 0; i < REC_UNWIND_END_COUNT; i++) {
		counts[i] = 0;
		for (unsigned k = 0; k < REC_CFI_WALK_SLOTS; k++)
			counts[i] += __atomic_load_n(&g_end_slots[k].here_ends[i], __ATOMIC_RELAXED);
	}
}

/* ---- the rows last looked up ------------------------------------------------
 * A walk looks up one row per frame: the module (a binary search over the
 * snapshot's), then the row (its index's bucket, a binary search in it), a
 * few dozen ns a frame.  Stacks repeat, so the rows found are kept in a
 * process-wide direct-mapped cache keyed by the address looked up and the
 * snapshot's generation: a hit is a handful of loads.  Each slot is a
 * seqlock: a writer makes its version odd (compare-and-swap: one writer, and
 * a signal handler interrupting it finds the slot busy and leaves it),
 * writes, and makes it even again; a reader takes the slot only if the
 * version was even and unchanged around its reads.  No lock, no wait:
 * async-signal-safe. */
#define ROW_CACHE_BITS 9

typedef struct row_slot {
	uint64_t ver; /* even: stable; odd: being written */
	uint64_t pc;  /* the address looked up */
	uint64_t gen; /* the snapshot's generation (0: empty) */
	uint64_t w[2]; /* the row (cfa_rule REC_CFA_NONE: there is none) */
} row_slot;

_Static_assert(sizeof(rec_cfi_row) == 2 * sizeof(uint64_t), "a row is two words");

static row_slot g_rows[1u << ROW_CACHE_BITS];

REC_NO_ASAN static inline const rec_cfi_row *row_lookup(const rec_cfi_snapshot *s, uintptr_t look,
							rec_cfi_row *out)
{
	row_slot *e = &g_rows[(size_t)(((uint64_t)look * UINT64_C(0x9E3779B97F4A7C15)) >>
				       (64 - ROW_CACHE_BITS))];
	uint64_t v = __atomic_load_n(&e->ver, __ATOMIC_ACQUIRE);
	uint64_t w[2];
	if ((v & 1) == 0 && __atomic_load_n(&e->pc, __ATOMIC_RELAXED) == look &&
	    __atomic_load_n(&e->gen, __ATOMIC_RELAXED) == s->gen) {
		w[0] = __atomic_load_n(&e->w[0], __ATOMIC_RELAXED);
		w[1] = __atomic_load_n(&e->w[1], __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&e->ver, __ATOMIC_RELAXED) == v) {
			memcpy(out, w, sizeof *out);
			return out->cfa_rule == REC_CFA_NONE ? NULL : out;
		}
	}
	const rec_cfi_row *row = rec_cfi_row_of(rec_cfi_module_of(s, look), look);
	if (row != NULL)
		*out = *row;
	else
		memset(out, 0, sizeof *out);
	if ((v & 1) == 0 && __atomic_compare_exchange_n(&e->ver, &v, v + 1, 0, __ATOMIC_ACQUIRE,
							 __ATOMIC_RELAXED)) {
		__atomic_thread_fence(__ATOMIC_RELEASE);
		memcpy(w, out, sizeof w);
		__atomic_store_n(&e->pc, (uint64_t)look, __ATOMIC_RELAXED);
		__atomic_store_n(&e->gen, s->gen, __ATOMIC_RELAXED);
		__atomic_store_n(&e->w[0], w[0], __ATOMIC_RELAXED);
		__atomic_store_n(&e->w[1], w[1], __ATOMIC_RELAXED);
		__atomic_store_n(&e->ver, v + 2, __ATOMIC_RELEASE);
	}
	return row != NULL ? out : NULL;
}

/* The stack word at a, if [a, a + 8) lies in [lo, hi) and a is aligned. */
REC_NO_ASAN static inline int stack_word(uintptr_t a, uintptr_t lo, uintptr_t hi, uintptr_t *out)
{
	if (a < lo || a > hi - sizeof(uintptr_t) || (a & (sizeof(uintptr_t) - 1)) != 0)
		return 0;
	*out = *(const volatile uintptr_t *)a;
	return 1;
}


/* The walk from pc (exact: an interrupted pc; else a return address), sp
 * and fp; the first skip frames are stepped over before anything is
 * written, then frames in librec are dropped (leading ones, and the preload
 * library's start routine between a thread's root and the program's). */
REC_NO_ASAN static size_t unwind(const rec_cfi_snapshot *s, uintptr_t pc, int exact, uintptr_t sp,
				 uintptr_t fp, uintptr_t lo, uintptr_t hi, size_t skip,
				 uintptr_t *pcs, size_t max, rec_unwind_end *end, int *pending)
{
	rec_unwind_end why = REC_UNWIND_NO_TABLES;
	size_t n = 0;
#if defined(__x86_64__)
	const uintptr_t word = sizeof(uintptr_t);
	if (s == NULL || pcs == NULL || max == 0 || hi < lo + 2 * word || sp < lo || sp >= hi) {
		if (skip == 0 && pcs != NULL && max > 0 && pc != 0 && !rec_stack_in_librec(pc))
			pcs[n++] = exact ? (pc | REC_STACK_PC_EXACT) : (pc & ~REC_STACK_PC_EXACT);
		goto out;
	}
	for (unsigned step = 0;; step++) {
		if (step >= REC_UNWIND_MAX_STEPS) {
			why = REC_UNWIND_STEPS;
			break;
		}
		if (pc < 4096) {
			why = REC_UNWIND_BAD_FRAME;
			break;
		}
		if (skip > 0) {
			skip--;
		} else if (!rec_stack_in_librec(pc)) { /* librec's frames are not the program's */
			if (n >= max) {
				why = REC_UNWIND_FULL;
				break;
			}
			pcs[n++] = exact ? (pc | REC_STACK_PC_EXACT) : (pc & ~REC_STACK_PC_EXACT);
		}
		uintptr_t look = exact ? pc : pc - 1;
		rec_cfi_row rowbuf;
		const rec_cfi_row *row = row_lookup(s, look, &rowbuf);
		uint8_t rule = row ? row->cfa_rule : REC_CFA_NONE;
		uintptr_t cfa, ra, nfp = fp;
		if (rule == REC_CFA_SIGNAL) {
			/* the kernel's rt_sigframe: the ucontext is at sp */
			uintptr_t g = sp + offsetof(ucontext_t, uc_mcontext.gregs);
			uintptr_t npc, nsp;
			if (!stack_word(g + REG_RIP * word, sp, hi, &npc) ||
			    !stack_word(g + REG_RSP * word, sp, hi, &nsp) ||
			    !stack_word(g + REG_RBP * word, sp, hi, &nfp) || nsp <= sp || nsp >= hi) {
				why = REC_UNWIND_BAD_FRAME;
				break;
			}
			pc = npc;
			sp = nsp;
			fp = nfp;
			exact = 1;
			continue;
		}
		if (rule == REC_CFA_ROOT) {
			why = REC_UNWIND_ROOT;
			break;
		}
		if (rule == REC_CFA_SP || rule == REC_CFA_FP || rule == REC_CFA_PLT) {
			if (rule == REC_CFA_PLT)
				cfa = sp + 8 + ((pc & 15) >= 11 ? 8 : 0);
			else
				cfa = (rule == REC_CFA_SP ? sp : fp) + (uintptr_t)(intptr_t)row->cfa_off;
			if (cfa <= sp || cfa > hi ||
			    !stack_word(cfa + (uintptr_t)(intptr_t)row->ra_off, sp, hi, &ra)) {
				why = REC_UNWIND_BAD_FRAME;
				break;
			}
			uintptr_t fpat = cfa + (uintptr_t)(intptr_t)row->fp_off;
			if (row->fp_rule == REC_FP_AT && fpat < sp) {
				/* below sp: an epilogue already popped rbp (compilers
				 * leave its rule as it was), so rbp is the caller's */
			} else if (row->fp_rule == REC_FP_AT) {
				if (!stack_word(fpat, sp, hi, &nfp)) {
					why = REC_UNWIND_BAD_FRAME;
					break;
				}
			} else if (row->fp_rule == REC_FP_LOST) {
				nfp = 0;
			}
		} else {
			/* a first snapshot without this module's table yet
			 * (stack_cfi.h): the rbp chain serves, and the caller
			 * may walk again over the whole snapshot */
			if (pending != NULL && s->pending != 0) {
				const rec_cfi_module *m = rec_cfi_module_of(s, look);
				if (m != NULL && m->pending)
					*pending = 1;
			}
			/* no CFI here: the rbp chain, if rbp is a frame above sp */
			if (fp < sp || !stack_word(fp, sp, hi, &nfp) || !stack_word(fp + word, sp, hi, &ra)) {
				why = REC_UNWIND_NO_INFO;
				break;
			}
			cfa = fp + 2 * word;
		}
		if (ra == 0) {
			why = REC_UNWIND_NO_INFO; /* a chain ended without CFI saying so */
			break;
		}
		pc = ra;
		sp = cfa;
		fp = nfp;
		exact = 0;
	}
#else
	(void)s;
	(void)pending;
	(void)sp;
	(void)fp;
	(void)lo;
	(void)hi;
	if (skip == 0 && pcs != NULL && max > 0 && pc != 0 && !rec_stack_in_librec(pc))
		pcs[n++] = exact ? (pc | REC_STACK_PC_EXACT) : (pc & ~REC_STACK_PC_EXACT);
#endif
out:
	if (end)
		*end = why;
	return n;
}

REC_NO_ASAN size_t rec_unwind_regs(const rec_cfi_snapshot *s, uintptr_t pc, uintptr_t sp,
				   uintptr_t fp, uintptr_t lo, uintptr_t hi, uintptr_t *pcs,
				   size_t max, rec_unwind_end *end)
{
	return unwind(s, pc, 1, sp, fp, lo, hi, 0, pcs, max, end, NULL);
}

REC_NO_ASAN size_t rec_unwind_here(uintptr_t ra, uintptr_t sp, uintptr_t fp, uintptr_t lo,
				   uintptr_t hi, size_t skip, uintptr_t *pcs, size_t max,
				   int *truncated, int *pending)
{
	rec_cfi_walk w;
	const rec_cfi_snapshot *s = rec_cfi_enter(&w);
	if (s == NULL) {
		rec_cfi_leave(&w);
		return (size_t)-1;
	}
	rec_unwind_end why;
	size_t n = unwind(s, ra, 0, sp, fp, lo, hi, skip, pcs, max, &why, pending);
	rec_cfi_leave(&w);
	if (why == REC_UNWIND_NO_TABLES)
		return (size_t)-1; /* sp outside [lo, hi), not x86-64 */
	if (pending != NULL && *pending)
		return n; /* walked again over the whole snapshot: counted then */
	count_end(&w, g_end_slots[w.slot].here_ends, why);
	if (truncated && why == REC_UNWIND_FULL)
		*truncated = 1;
	return n;
}

REC_NO_ASAN size_t rec_stack_capture_ucontext_ex(const void *ucontext, uintptr_t *pcs, size_t max,
						 int *truncated, rec_unwind_end *end)
{
	if (truncated)
		*truncated = 0;
	if (end)
		*end = REC_UNWIND_NO_TABLES;
	if (ucontext == NULL || pcs == NULL || max == 0)
		return 0;
	rec_cfi_walk w = { 0, 0 };
#if defined(__x86_64__)
	uintptr_t lo, hi;
	const rec_cfi_snapshot *s = rec_cfi_enter(&w);
	if (s != NULL && rec_stack_thread_bounds(&lo, &hi)) {
		const ucontext_t *uc = (const ucontext_t *)ucontext;
		uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
		uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
		uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
		if (pc != 0 && sp >= lo && sp < hi) {
			rec_unwind_end why;
			size_t n = rec_unwind_regs(s, pc, sp, fp, lo, hi, pcs, max, &why);
			rec_cfi_leave(&w);
			count_end(&w, g_end_slots[w.slot].ends, why);
			if (truncated && why == REC_UNWIND_FULL)
				*truncated = 1;
			if (end)
				*end = why;
			return n;
		}
	}
	rec_cfi_leave(&w);
#endif
	count_end(&w, g_end_slots[w.slot].ends, REC_UNWIND_NO_TABLES);
	return rec_stack_capture_ucontext_fp(ucontext, pcs, max, truncated);
}
