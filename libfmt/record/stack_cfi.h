/* SPDX-License-Identifier: MIT */
/*
 * stack_cfi.h - unwind tables: per loaded module, a compact sorted table
 * of "how to find the caller" rows made from the module's call-frame
 * information (.eh_frame, found through .eh_frame_hdr), and the walk of a
 * signal's interrupted stack over them.  Never installed.
 *
 * Tables are built off the hot path (rec_cfi_refresh(): in the CPU
 * sampler's background round, which also notices modules loaded or
 * unloaded since) into memory of their own (mmap, so a
 * preload library's malloc interposer is never involved), and published as
 * one immutable snapshot.  The walk (stack_unwind.c) only reads a snapshot
 * and the thread's stack within its known bounds: it never allocates,
 * locks or makes a system call, and a bad frame ends it.  A snapshot replaced by a newer
 * one is freed only once no walk is under way (rec_cfi_enter/leave count
 * them, in a cache line per group of threads), so a walk never reads freed
 * memory.
 *
 * A row covers the code from its offset to the next row's: where the
 * caller's frame (CFA) is, relative to the stack pointer or rbp, where the
 * return address and the caller's rbp are saved relative to it, or that
 * the return address is undefined: glibc marks so the outermost frames of
 * a thread (clone3's child, _start), which is how the walk knows it reached
 * the thread's root.  x86-64 only; on other targets no table is built and
 * the frame-pointer walk of stack_capture.c is used.
 */
#ifndef LIBREC_RECORD_STACK_CFI_H
#define LIBREC_RECORD_STACK_CFI_H

#include <stddef.h>
#include <stdint.h>

#include "rec/rec.h"

/* How the CFA is computed at a row. */
enum {
	REC_CFA_NONE = 0, /* no call-frame information here (gap between FDEs) */
	REC_CFA_SP,       /* CFA = rsp + cfa_off */
	REC_CFA_FP,       /* CFA = rbp + cfa_off */
	REC_CFA_PLT,      /* a PLT entry: CFA = rsp + 8, + 8 more from byte 11 of its 16 */
	REC_CFA_ROOT,     /* the return address is undefined: outermost frame */
	REC_CFA_BAD,      /* a rule the walk does not follow (expressions...) */
	REC_CFA_SIGNAL,   /* the kernel's signal frame (a CIE with 'S', glibc's
			   * __restore_rt): the interrupted context is at rsp */
};
/* How the caller's rbp is found at a row. */
enum {
	REC_FP_SAME = 0, /* rbp is unchanged */
	REC_FP_AT,       /* saved at CFA + fp_off */
	REC_FP_LOST,     /* saved somewhere the walk does not follow */
};

typedef struct rec_cfi_row {
	uint32_t off;    /* first byte covered: pc - module base */
	int32_t cfa_off;
	int16_t fp_off;
	int16_t ra_off;  /* return address at CFA + ra_off (-8 on x86-64) */
	uint8_t cfa_rule; /* REC_CFA_* */
	uint8_t fp_rule;  /* REC_FP_* */
	uint8_t pad[2];
} rec_cfi_row;

/* One module's rows and their index: index[p] is the first row whose off
 * is at least rows[0].off + p * REC_CFI_BUCKET (nindex entries, the last
 * is nrows), so a lookup searches a bucket of a few rows, not the table. */
#define REC_CFI_BUCKET_SHIFT 10
typedef struct rec_cfi_table {
	const rec_cfi_row *rows;  /* sorted by off, one per off; NULL/0: none */
	size_t nrows;
	const uint32_t *index;
	size_t nindex;
	size_t map_bytes;         /* size of the mapping holding both (0: not ours) */
} rec_cfi_table;

typedef struct rec_cfi_module {
	uintptr_t lo, hi;         /* its executable segments, [lo, hi) */
	uintptr_t base;           /* load bias (dlpi_addr) */
	const void *key;          /* dlpi_phdr: identifies the loaded module */
	rec_cfi_table t;
	int pending;              /* no table yet: a first snapshot's (below) */
} rec_cfi_module;

typedef struct rec_cfi_snapshot {
	struct rec_cfi_snapshot *retired_next; /* list of replaced snapshots */
	uint64_t gen;           /* 1, 2, ...: the snapshots in publishing order */
	size_t n;               /* modules, sorted by lo */
	size_t pending;         /* modules whose table is pending */
	size_t map_bytes;       /* size of this snapshot's mapping */
	rec_cfi_module m[];
} rec_cfi_snapshot;

/*! rec_cfi_refresh() : build tables for the modules loaded since the last
 *  call (dl_iterate_phdr's adds/subs counters say whether any changed;
 *  cheap when none did) and publish a new snapshot.  The first build comes
 *  in two snapshots: one with the tables of the modules on nearly every
 *  stack (the executable, libc, the dynamic loader, the vDSO and the module
 *  holding librec), the others marked pending, published as soon as those
 *  are built (about half the time: libc is the largest), then the whole.
 *  Normal context only
 *  (not a signal handler); serialized by a lock of its own (a leaf, but
 *  for the loader's lock dl_iterate_phdr takes inside it).  With
 *  REC_UNWIND=fp in the environment it builds nothing: stacks are
 *  frame-pointer walks, as before CFI.
 *  @return REC_OK, or REC_ERR_NOMEM (the old snapshot stays). */
rec_status rec_cfi_refresh(void);

/*! rec_cfi_want() : a recorder was opened, so every stack it captures
 *  should walk the tables: from now on rec_cfi_ensure() builds them if no
 *  one has yet.  rec_recorder_open() calls it instead of building them
 *  itself (a few ms the program's start-up would wait for); its background
 *  thread builds them as it starts.
 *  rec_cfi_ensure() : before a capture in normal context (not a signal
 *  handler): when tables are wanted and none were published yet, wait for
 *  the first snapshot (the background thread building it), or build it
 *  now, so that the same site never has two stacks, one walked over frame
 *  pointers before the tables existed and one over the tables after.  One
 *  load once they exist; nothing without a recorder.
 *  rec_cfi_ensure_all() : a walk in normal context met a module whose
 *  table is pending: wait for the whole snapshot (or build it), so that
 *  the walk, done again, follows that module's call-frame information as
 *  every later one will.  Stacks through the first snapshot's modules
 *  only, nearly all of a program's first ones, wait for those alone. */
void rec_cfi_want(void);
void rec_cfi_ensure(void);
void rec_cfi_ensure_all(void);

/* A walk under way: the slot its count is in (rec_cfi_enter), and whether
 * that slot is the thread's own. */
typedef struct rec_cfi_walk {
	unsigned slot;
	int own;
} rec_cfi_walk;

/* Slots of the walks' counts, each a cache line of its own: the shared
 * ones first, then the ones threads own. */
#define REC_CFI_SHARED_SLOTS 16
#define REC_CFI_WALK_SLOTS (REC_CFI_SHARED_SLOTS + 64)

/*! rec_cfi_enter() / rec_cfi_leave() : bracket a walk: the current
 *  snapshot (NULL if none was built) stays valid until leave(w).  The walk
 *  is counted in the thread's own slot (plain stores: see
 *  rec_cfi_walker_claim) or else in one of REC_CFI_SHARED_SLOTS cache
 *  lines picked by the address of the caller's stack (locked additions),
 *  so that threads capturing stacks at once do not take one line from
 *  each other (one shared count made a stack capture 5x dearer with two
 *  threads).  Async-signal-safe, reentrant. */
const rec_cfi_snapshot *rec_cfi_enter(rec_cfi_walk *w);
void rec_cfi_leave(const rec_cfi_walk *w);

/*! rec_cfi_walker_claim() : in normal context (not a signal handler),
 *  once per thread: give the calling thread a count slot of its own, if
 *  one is free and membarrier(PRIVATE_EXPEDITED) works (the refresh fences
 *  every thread before it reads those counts); given back when the thread
 *  exits.  rec_cfi_walker_own() : has it one? */
void rec_cfi_walker_claim(void);
int rec_cfi_walker_own(void);

/*! rec_cfi_module_of() : the module whose executable segments hold pc,
 *  or NULL.  Async-signal-safe. */
const rec_cfi_module *rec_cfi_module_of(const rec_cfi_snapshot *s, uintptr_t pc);

/*! rec_cfi_row_of() : the row covering pc in m, or NULL if none (no table,
 *  before its first row).  Async-signal-safe; reads a few cache lines: the
 *  bucket of the index, then a binary search inside it. */
const rec_cfi_row *rec_cfi_row_of(const rec_cfi_module *m, uintptr_t pc);

/*! rec_cfi_build() : the table of one module from its .eh_frame_hdr at hdr
 *  (in memory), reading only inside the n readable ranges [lo[i], hi[i])
 *  (the module's PT_LOAD segments); rows for code outside [code_lo,
 *  code_hi) are left out.  Hostile or damaged data gives fewer rows, never
 *  a read outside the ranges.  On success *t holds an mmap'd table
 *  (rec_cfi_free_table()); a module without usable information gives
 *  REC_OK with t->rows NULL.  For the unit tests and rec_cfi_refresh(). */
rec_status rec_cfi_build(const void *hdr, const uintptr_t *lo, const uintptr_t *hi, size_t n,
			 uintptr_t base, uintptr_t code_lo, uintptr_t code_hi, rec_cfi_table *t);
void rec_cfi_free_table(const rec_cfi_table *t);

/* ---- the walk (stack_unwind.c) ------------------------------------------ */

/* Why a walk ended. */
typedef enum rec_unwind_end {
	REC_UNWIND_ROOT = 0,   /* the CFI says the return address is undefined */
	REC_UNWIND_FULL,       /* the entries were full (deeper than max) */
	REC_UNWIND_NO_INFO,    /* a frame without CFI and no usable rbp chain */
	REC_UNWIND_BAD_FRAME,  /* a frame out of the stack's bounds or not going up */
	REC_UNWIND_STEPS,      /* the step bound (REC_UNWIND_MAX_STEPS) */
	REC_UNWIND_NO_TABLES,  /* no snapshot, no stack bounds, not x86-64 */
	REC_UNWIND_END_COUNT
} rec_unwind_end;

#define REC_UNWIND_MAX_STEPS 512

/*! rec_unwind_regs() : walk from pc (exact), sp and fp within the stack
 *  [lo, hi) over snapshot s, writing entries as rec_stack_capture_ucontext()
 *  does (pcs[0] = pc | REC_STACK_PC_EXACT, then return addresses; leading
 *  entries in librec dropped).  Every stack word read lies in [sp, hi) of
 *  the frame being unwound; no code is read.
 *  Async-signal-safe.  *end (may be NULL) says why it ended. */
size_t rec_unwind_regs(const rec_cfi_snapshot *s, uintptr_t pc, uintptr_t sp, uintptr_t fp,
		       uintptr_t lo, uintptr_t hi, uintptr_t *pcs, size_t max,
		       rec_unwind_end *end);

/*! rec_unwind_here() : the walk of the calling thread's own stack, for
 *  rec_stack_capture_ex(): from a frame's return address ra, with sp and fp
 *  as they are in the function ra returns into (the state a frame record
 *  gives: sp = the record's address + 16, fp = the rbp it saved), within
 *  the stack [lo, hi), over the current snapshot; the first skip frames
 *  (ra's, then its callers') are not written, then leading frames in librec
 *  are dropped; every entry is a return address.
 *  Async-signal-safe.  @return entries written, or (size_t)-1 when there is
 *  no snapshot (no tables built yet, REC_UNWIND=fp, not x86-64) or sp is
 *  outside [lo, hi): the caller walks frame pointers then.  *truncated (may
 *  be NULL) is set to 1 when the stack went deeper than max.  With pending
 *  not NULL, a walk that met a module whose table is pending (frame
 *  pointers served there) sets *pending to 1 and is not counted: the caller
 *  walks again after rec_cfi_ensure_all(). */
size_t rec_unwind_here(uintptr_t ra, uintptr_t sp, uintptr_t fp, uintptr_t lo, uintptr_t hi,
		       size_t skip, uintptr_t *pcs, size_t max, int *truncated, int *pending);

/*! rec_unwind_here_counts() : rec_unwind_here()'s walks by how they ended. */
void rec_unwind_here_counts(uint64_t counts[REC_UNWIND_END_COUNT]);

/*! rec_stack_capture_ucontext_ex() : rec_stack_capture_ucontext() that
 *  also says why the walk ended (*end may be NULL).  With tables (x86-64)
 *  it follows the CFI, frame pointers where a module has none; without, the
 *  frame-pointer walk (end: REC_UNWIND_NO_TABLES). */
size_t rec_stack_capture_ucontext_ex(const void *ucontext, uintptr_t *pcs, size_t max,
				     int *truncated, rec_unwind_end *end);

/*! rec_stack_capture_ucontext_fp() : the frame-pointer walk alone (what
 *  rec_stack_capture_ucontext() did before CFI; for the benchmark). */
size_t rec_stack_capture_ucontext_fp(const void *ucontext, uintptr_t *pcs, size_t max,
				     int *truncated);

/*! rec_unwind_counts() : walks by how they ended since the process
 *  started (counts[REC_UNWIND_END_COUNT]). */
void rec_unwind_counts(uint64_t counts[REC_UNWIND_END_COUNT]);

#endif /* LIBREC_RECORD_STACK_CFI_H */
