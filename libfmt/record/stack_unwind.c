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
#include <ucontext.h>

#if defined(__GNUC__) || defined(__clang__)
#define REC_NO_ASAN __attribute__((no_sanitize_address))
#else
#define REC_NO_ASAN
#endif

static uint64_t g_ends[REC_UNWIND_END_COUNT];

void rec_unwind_counts(uint64_t counts[REC_UNWIND_END_COUNT])
{
	for (int i = 0; i < REC_UNWIND_END_COUNT; i++)
		counts[i] = __atomic_load_n(&g_ends[i], __ATOMIC_RELAXED);
}

/* The stack word at a, if [a, a + 8) lies in [lo, hi) and a is aligned. */
REC_NO_ASAN static inline int stack_word(uintptr_t a, uintptr_t lo, uintptr_t hi, uintptr_t *out)
{
	if (a < lo || a > hi - sizeof(uintptr_t) || (a & (sizeof(uintptr_t) - 1)) != 0)
		return 0;
	*out = *(const volatile uintptr_t *)a;
	return 1;
}


REC_NO_ASAN size_t rec_unwind_regs(const rec_cfi_snapshot *s, uintptr_t pc, uintptr_t sp,
				   uintptr_t fp, uintptr_t lo, uintptr_t hi, uintptr_t *pcs,
				   size_t max, rec_unwind_end *end)
{
	rec_unwind_end why = REC_UNWIND_NO_TABLES;
	size_t n = 0;
#if defined(__x86_64__)
	const uintptr_t word = sizeof(uintptr_t);
	int exact = 1;
	if (s == NULL || pcs == NULL || max == 0 || hi < lo + 2 * word || sp < lo || sp >= hi) {
		if (pcs != NULL && max > 0 && pc != 0 && !rec_stack_in_librec(pc))
			pcs[n++] = pc | REC_STACK_PC_EXACT;
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
		if (!(n == 0 && rec_stack_in_librec(pc))) {
			if (n >= max) {
				why = REC_UNWIND_FULL;
				break;
			}
			pcs[n++] = exact ? (pc | REC_STACK_PC_EXACT) : (pc & ~REC_STACK_PC_EXACT);
		}
		uintptr_t look = exact ? pc : pc - 1;
		const rec_cfi_row *row = rec_cfi_row_of(rec_cfi_module_of(s, look), look);
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
	(void)sp;
	(void)fp;
	(void)lo;
	(void)hi;
	if (pcs != NULL && max > 0 && pc != 0 && !rec_stack_in_librec(pc))
		pcs[n++] = pc | REC_STACK_PC_EXACT;
#endif
out:
	if (end)
		*end = why;
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
#if defined(__x86_64__)
	uintptr_t lo, hi;
	const rec_cfi_snapshot *s = rec_cfi_enter();
	if (s != NULL && rec_stack_thread_bounds(&lo, &hi)) {
		const ucontext_t *uc = (const ucontext_t *)ucontext;
		uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
		uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
		uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
		if (pc != 0 && sp >= lo && sp < hi) {
			rec_unwind_end why;
			size_t n = rec_unwind_regs(s, pc, sp, fp, lo, hi, pcs, max, &why);
			rec_cfi_leave();
			__atomic_add_fetch(&g_ends[why], 1, __ATOMIC_RELAXED);
			if (truncated && why == REC_UNWIND_FULL)
				*truncated = 1;
			if (end)
				*end = why;
			return n;
		}
	}
	rec_cfi_leave();
#endif
	__atomic_add_fetch(&g_ends[REC_UNWIND_NO_TABLES], 1, __ATOMIC_RELAXED);
	return rec_stack_capture_ucontext_fp(ucontext, pcs, max, truncated);
}
