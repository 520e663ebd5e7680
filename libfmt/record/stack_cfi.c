/* SPDX-License-Identifier: MIT */
/*
 * stack_cfi.c - the unwind tables: each loaded module's .eh_frame (found
 * through its .eh_frame_hdr, read in memory) turned into a sorted array of
 * compact rows, and the snapshot of all modules the signal-time walk reads.
 * See stack_cfi.h.  The design follows async-profiler's (a per-module
 * table of frame descriptions built at library load, walked in the signal
 * handler); the code is our own.
 */
#include "record/stack_cfi.h"
#include "record/stack_internal.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/membarrier.h>

/* ---- bounded reads of module memory ---------------------------------------- */

typedef struct reader {
	const uintptr_t *lo, *hi;
	size_t n;
	int bad; /* a read fell outside: everything after is ignored */
	size_t last; /* the segment of the last read (reads come in runs) */
} reader;

/* rd_ok()'s search of the other segments (a read outside the last one's) */
static __attribute__((noinline)) int rd_ok_slow(reader *r, uintptr_t a, size_t len)
{
	if (r->bad)
		return 0;
	for (size_t i = 0; i < r->n; i++)
		if (a >= r->lo[i] && a < r->hi[i] && r->hi[i] - a >= len) {
			r->last = i;
			return 1;
		}
	r->bad = 1;
	return 0;
}

/* [a, a + len) readable: inside the segment of the last read (reads come
 * in runs: inline), or another. */
static inline int rd_ok(reader *r, uintptr_t a, size_t len)
{
	const size_t k = r->last;
	if (__builtin_expect(!r->bad && k < r->n && a >= r->lo[k] && a < r->hi[k] &&
				     r->hi[k] - a >= len, 1))
		return 1;
	return rd_ok_slow(r, a, len);
}

static inline uint64_t rd_u(reader *r, uintptr_t a, size_t len)
{
	if (a == 0 || !rd_ok(r, a, len)) { /* 0: never mapped (an indirect pointer read as 0) */
		r->bad = 1;
		return 0;
	}
	uint64_t v = 0;
	memcpy(&v, (const void *)a, len); /* little-endian targets only (x86-64) */
	return v;
}

/* A LEB128 at *p (signed: sign-extended SLEB128), advancing *p; 0 with
 * r->bad set when it runs past 10 bytes or off readable memory. */
static inline uint64_t rd_leb(reader *r, uintptr_t *p, int sign)
{
	uint64_t v = 0;
	unsigned shift = 0;
	/* A one-byte value (most of them: register numbers, small offsets)
	 * with a single bounds check. */
	if (*p != 0 && rd_ok(r, *p, 1)) {
		const uint8_t b = *(const uint8_t *)*p;
		if (!(b & 0x80)) {
			(*p)++;
			v = b;
			if (sign && (b & 0x40))
				v |= ~(uint64_t)0 << 7;
			return v;
		}
	}
	for (int i = 0; i < 10; i++) {
		uint8_t b = (uint8_t)rd_u(r, (*p)++, 1);
		if (r->bad)
			return 0;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (sign && shift < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << shift;
			return v;
		}
	}
	r->bad = 1;
	return 0;
}

static uint64_t rd_uleb(reader *r, uintptr_t *p)
{
	return rd_leb(r, p, 0);
}

static int64_t rd_sleb(reader *r, uintptr_t *p)
{
	return (int64_t)rd_leb(r, p, 1);
}

/* DW_EH_PE_* pointer encodings. */
#define PE_OMIT 0xff
#define PE_INDIRECT 0x80

/* Read a pointer of encoding enc at *p; datarel is the base of
 * DW_EH_PE_datarel (the .eh_frame_hdr's start there). */
static uintptr_t rd_enc(reader *r, uintptr_t *p, uint8_t enc, uintptr_t datarel)
{
	if (enc == PE_OMIT)
		return 0;
	uintptr_t at = *p;
	uint64_t v;
	switch (enc & 0x0f) {
	case 0x00: v = rd_u(r, at, 8); *p += 8; break;                 /* absptr */
	case 0x01: v = rd_uleb(r, p); break;
	case 0x02: v = rd_u(r, at, 2); *p += 2; break;
	case 0x03: v = rd_u(r, at, 4); *p += 4; break;
	case 0x04: v = rd_u(r, at, 8); *p += 8; break;
	case 0x09: v = (uint64_t)rd_sleb(r, p); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_u(r, at, 2); *p += 2; break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_u(r, at, 4); *p += 4; break;
	case 0x0c: v = rd_u(r, at, 8); *p += 8; break;
	default: r->bad = 1; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += at; break;      /* pcrel */
	case 0x30: v += datarel; break; /* datarel */
	default: r->bad = 1; return 0;  /* textrel, funcrel: not in .eh_frame */
	}
	if (enc & PE_INDIRECT)
		v = rd_u(r, (uintptr_t)v, 8);
	return (uintptr_t)v;
}

/* ---- the rows of one module -------------------------------------------------- */

typedef struct rows_buf {
	rec_cfi_row *v;
	size_t n, cap, bytes;
	int nomem;
} rows_buf;

static void rows_push(rows_buf *b, const rec_cfi_row *row)
{
	if (b->nomem)
		return;
	if (b->n == b->cap) {
		size_t nb = b->bytes ? b->bytes * 2 : 65536;
		void *p = b->v ? mremap(b->v, b->bytes, nb, MREMAP_MAYMOVE)
			       : mmap(NULL, nb, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			b->nomem = 1;
			return;
		}
#ifdef MADV_POPULATE_WRITE
		/* the new pages in one call: a fault a page costs ~14 us on a
		 * paravirtualized guest (ring.c), a third of the build's time */
		(void)madvise((char *)p + b->bytes, nb - b->bytes, MADV_POPULATE_WRITE);
#endif
		b->v = p;
		b->bytes = nb;
		b->cap = nb / sizeof(rec_cfi_row);
	}
	b->v[b->n++] = *row;
}

/* The state of the CFA program for the registers the walk uses. */
typedef struct cfi_state {
	uint8_t cfa_rule; /* REC_CFA_SP/FP/BAD (ROOT/PLT decided at emit) */
	int64_t cfa_off;
	uint8_t fp_rule;
	int64_t fp_off;
	int ra_undef;
	int ra_ok;        /* the return address is at CFA + ra_off */
	int64_t ra_off;
	int cfa_expr;     /* DW_CFA_def_cfa_expression seen */
} cfi_state;

typedef struct cie_info {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	int has_z;
	int signal;       /* 'S': the FDEs are of a signal frame */
	uintptr_t insns, insns_end;
} cie_info;

#define DW_REG_RBP 6
#define DW_REG_RSP 7

static void set_reg_rule(cfi_state *st, const cie_info *cie, uint64_t reg, int kind, int64_t off)
{
	/* kind: 0 offset(off), 1 undefined, 2 same value, 3 other (register,
	 * expression): not followed */
	if (reg == DW_REG_RBP) {
		st->fp_rule = kind == 0 ? REC_FP_AT : kind == 2 ? REC_FP_SAME : REC_FP_LOST;
		st->fp_off = off;
	} else if (reg == cie->ra_reg) {
		st->ra_undef = kind == 1;
		st->ra_ok = kind == 0;
		st->ra_off = off;
	}
}

static void emit_row(rows_buf *b, const cfi_state *st, uintptr_t pc, uintptr_t base,
		     uintptr_t code_lo, uintptr_t code_hi, int plt)
{
	if (pc < code_lo || pc >= code_hi || pc - base > UINT32_MAX)
		return;
	rec_cfi_row row;
	memset(&row, 0, sizeof row);
	row.off = (uint32_t)(pc - base);
	if (plt < 0) { /* a signal frame's FDE */
		row.cfa_rule = REC_CFA_SIGNAL;
	} else if (st->ra_undef) {
		row.cfa_rule = REC_CFA_ROOT;
	} else if (st->cfa_expr) {
		row.cfa_rule = plt ? REC_CFA_PLT : REC_CFA_BAD;
		row.ra_off = -8;
	} else if (!st->ra_ok || st->cfa_rule == REC_CFA_BAD || st->ra_off < INT16_MIN ||
		   st->ra_off > INT16_MAX || st->cfa_off < INT32_MIN || st->cfa_off > INT32_MAX ||
		   (st->fp_rule == REC_FP_AT && (st->fp_off < INT16_MIN || st->fp_off > INT16_MAX))) {
		row.cfa_rule = REC_CFA_BAD;
	} else {
		row.cfa_rule = st->cfa_rule;
		row.cfa_off = (int32_t)st->cfa_off;
		row.ra_off = (int16_t)st->ra_off;
		row.fp_rule = st->fp_rule;
		row.fp_off = st->fp_rule == REC_FP_AT ? (int16_t)st->fp_off : 0;
	}
	rows_push(b, &row);
}

#define MAX_REMEMBER 8

/* The CFA rule of a CFA register: rsp or rbp, else one the unwinder
 * cannot follow. */
static uint8_t cfa_reg_rule(uint64_t reg)
{
	return reg == DW_REG_RSP ? REC_CFA_SP : reg == DW_REG_RBP ? REC_CFA_FP : REC_CFA_BAD;
}

/* Run the CFA instructions [p, end); rows are emitted for FDE code from
 * *loc on when emit is set (an FDE's), not for a CIE's initial ones. */
static void run_cfa(reader *r, uintptr_t p, uintptr_t end, const cie_info *cie,
		    cfi_state *st, const cfi_state *initial, uintptr_t *loc, uintptr_t pc_end,
		    rows_buf *b, int emit, uintptr_t base, uintptr_t code_lo, uintptr_t code_hi,
		    int plt)
{
	cfi_state stack[MAX_REMEMBER];
	int depth = 0;
	while (p < end && !r->bad) {
		uint8_t op = (uint8_t)rd_u(r, p++, 1);
		uint64_t delta = 0;
		int advance = 0;
		switch (op >> 6) {
		case 1:
			delta = op & 0x3f;
			advance = 1;
			break;
		case 2:
			set_reg_rule(st, cie, op & 0x3f, 0, (int64_t)rd_uleb(r, &p) * cie->data_align);
			continue;
		case 3: /* restore */
			if (initial && (op & 0x3f) == DW_REG_RBP) {
				st->fp_rule = initial->fp_rule;
				st->fp_off = initial->fp_off;
			} else if (initial && (op & 0x3f) == cie->ra_reg) {
				st->ra_undef = initial->ra_undef;
				st->ra_ok = initial->ra_ok;
				st->ra_off = initial->ra_off;
			}
			continue;
		default:
			break;
		}
		if (!advance) {
			uint64_t reg;
			switch (op) {
			case 0x00: /* nop */
				break;
			case 0x01: /* set_loc */
				delta = 0;
				{
					uintptr_t to = rd_enc(r, &p, cie->fde_enc, 0);
					if (to > *loc)
						delta = (to - *loc) / (cie->code_align ? cie->code_align : 1);
				}
				advance = 1;
				break;
			case 0x02: delta = rd_u(r, p, 1); p += 1; advance = 1; break;
			case 0x03: delta = rd_u(r, p, 2); p += 2; advance = 1; break;
			case 0x04: delta = rd_u(r, p, 4); p += 4; advance = 1; break;
			case 0x05: /* offset_extended */
				reg = rd_uleb(r, &p);
				set_reg_rule(st, cie, reg, 0, (int64_t)rd_uleb(r, &p) * cie->data_align);
				break;
			case 0x06: /* restore_extended */
				reg = rd_uleb(r, &p);
				if (initial && reg == DW_REG_RBP) {
					st->fp_rule = initial->fp_rule;
					st->fp_off = initial->fp_off;
				} else if (initial && reg == cie->ra_reg) {
					st->ra_undef = initial->ra_undef;
					st->ra_ok = initial->ra_ok;
					st->ra_off = initial->ra_off;
				}
				break;
			case 0x07: /* undefined */
				set_reg_rule(st, cie, rd_uleb(r, &p), 1, 0);
				break;
			case 0x08: /* same_value */
				set_reg_rule(st, cie, rd_uleb(r, &p), 2, 0);
				break;
			case 0x09: /* register */
				reg = rd_uleb(r, &p);
				(void)rd_uleb(r, &p);
				set_reg_rule(st, cie, reg, 3, 0);
				break;
			case 0x0a: /* remember_state */
				if (depth < MAX_REMEMBER)
					stack[depth++] = *st;
				else
					r->bad = 1;
				break;
			case 0x0b: /* restore_state */
				if (depth > 0)
					*st = stack[--depth];
				else
					r->bad = 1;
				break;
			case 0x0c: /* def_cfa */
				reg = rd_uleb(r, &p);
				st->cfa_rule = cfa_reg_rule(reg);
				st->cfa_off = (int64_t)rd_uleb(r, &p);
				st->cfa_expr = 0;
				break;
			case 0x0d: /* def_cfa_register */
				reg = rd_uleb(r, &p);
				st->cfa_rule = cfa_reg_rule(reg);
				st->cfa_expr = 0;
				break;
			case 0x0e: /* def_cfa_offset */
				st->cfa_off = (int64_t)rd_uleb(r, &p);
				break;
			case 0x0f: /* def_cfa_expression */
				st->cfa_expr = 1;
				p += rd_uleb(r, &p);
				break;
			case 0x10: /* expression */
				reg = rd_uleb(r, &p);
				p += rd_uleb(r, &p);
				set_reg_rule(st, cie, reg, 3, 0);
				break;
			case 0x11: /* offset_extended_sf */
				reg = rd_uleb(r, &p);
				set_reg_rule(st, cie, reg, 0, rd_sleb(r, &p) * cie->data_align);
				break;
			case 0x12: /* def_cfa_sf */
				reg = rd_uleb(r, &p);
				st->cfa_rule = cfa_reg_rule(reg);
				st->cfa_off = rd_sleb(r, &p) * cie->data_align;
				st->cfa_expr = 0;
				break;
			case 0x13: /* def_cfa_offset_sf */
				st->cfa_off = rd_sleb(r, &p) * cie->data_align;
				break;
			case 0x14: /* val_offset */
				reg = rd_uleb(r, &p);
				(void)rd_uleb(r, &p);
				set_reg_rule(st, cie, reg, 3, 0);
				break;
			case 0x15: /* val_offset_sf */
				reg = rd_uleb(r, &p);
				(void)rd_sleb(r, &p);
				set_reg_rule(st, cie, reg, 3, 0);
				break;
			case 0x16: /* val_expression */
				reg = rd_uleb(r, &p);
				p += rd_uleb(r, &p);
				set_reg_rule(st, cie, reg, 3, 0);
				break;
			case 0x2e: /* GNU_args_size */
				(void)rd_uleb(r, &p);
				break;
			case 0x2f: /* GNU_negative_offset_extended */
				reg = rd_uleb(r, &p);
				set_reg_rule(st, cie, reg, 0, -(int64_t)rd_uleb(r, &p) * cie->data_align);
				break;
			default:
				r->bad = 1; /* unknown: stop reading this FDE */
				break;
			}
		}
		if (advance && emit) {
			uintptr_t next = *loc + (uintptr_t)(delta * cie->code_align);
			if (next < *loc || next > pc_end)
				next = pc_end;
			if (next != *loc)
				emit_row(b, st, *loc, base, code_lo, code_hi, plt);
			*loc = next;
		}
	}
}

/* The bounds of the CIE or FDE at *p: its length (4 bytes, or 0xffffffff
 * then 8), then [*p, *end) its readable contents.  0 for a zero length (the
 * terminator) or one that does not fit. */
static int rd_entry(reader *r, uintptr_t *p, uintptr_t *end)
{
	uint64_t len = rd_u(r, *p, 4);
	*p += 4;
	if (len == 0xffffffffu) {
		len = rd_u(r, *p, 8);
		*p += 8;
	}
	if (len == 0 || r->bad)
		return 0;
	*end = *p + len;
	return *end >= *p && rd_ok(r, *p, len);
}

/* Parse the CIE at c into *cie and run its initial instructions into *st. */
static int parse_cie(reader *r, uintptr_t c, cie_info *cie, cfi_state *st)
{
	uintptr_t p = c, end;
	if (!rd_entry(r, &p, &end))
		return 0;
	if (rd_u(r, p, 4) != 0)
		return 0; /* not a CIE */
	p += 4;
	uint8_t version = (uint8_t)rd_u(r, p++, 1);
	char aug[8];
	size_t na = 0;
	for (;;) {
		char ch = (char)rd_u(r, p++, 1);
		if (r->bad || p > end)
			return 0;
		if (ch == '\0')
			break;
		if (na + 1 >= sizeof aug)
			return 0;
		aug[na++] = ch;
	}
	aug[na] = '\0';
	memset(cie, 0, sizeof *cie);
	if (na >= 2 && aug[0] == 'e' && aug[1] == 'h')
		p += 8;
	cie->code_align = rd_uleb(r, &p);
	cie->data_align = rd_sleb(r, &p);
	cie->ra_reg = version == 1 ? rd_u(r, p++, 1) : rd_uleb(r, &p);
	cie->fde_enc = 0; /* absptr */
	if (aug[0] == 'z') {
		cie->has_z = 1;
		uint64_t alen = rd_uleb(r, &p);
		uintptr_t aend = p + alen;
		for (size_t i = 1; i < na && !r->bad; i++) {
			if (aug[i] == 'L') {
				p++;
			} else if (aug[i] == 'R') {
				cie->fde_enc = (uint8_t)rd_u(r, p++, 1);
			} else if (aug[i] == 'P') {
				uint8_t enc = (uint8_t)rd_u(r, p++, 1);
				(void)rd_enc(r, &p, (uint8_t)(enc & ~PE_INDIRECT), 0);
			} else if (aug[i] == 'S') {
				cie->signal = 1;
			} else if (aug[i] != 'B' && aug[i] != 'G') {
				break;
			}
		}
		p = aend;
	}
	if (r->bad || p > end)
		return 0;
	cie->insns = p;
	cie->insns_end = end;
	memset(st, 0, sizeof *st);
	st->cfa_rule = REC_CFA_BAD;
	st->fp_rule = REC_FP_SAME;
	uintptr_t loc = 0;
	run_cfa(r, cie->insns, cie->insns_end, cie, st, NULL, &loc, 0, NULL, 0, 0, 0, 0, 0);
	return !r->bad;
}

/* The last CIE parsed: a module's FDEs share a few CIEs, and each was
 * parsed (its initial instructions run) again for every FDE. */
typedef struct cie_cache {
	uintptr_t at; /* 0: none */
	cie_info cie;
	cfi_state initial;
} cie_cache;

/* Rows of the FDE at f (its code range, then a gap row at its end). */
static void parse_fde(reader *r, uintptr_t f, rows_buf *b, uintptr_t base, uintptr_t code_lo,
		      uintptr_t code_hi, uintptr_t plt_lo, uintptr_t plt_hi, cie_cache *cc)
{
	uintptr_t p = f, end;
	if (!rd_entry(r, &p, &end))
		return;
	uint32_t cie_ptr = (uint32_t)rd_u(r, p, 4);
	if (cie_ptr == 0)
		return; /* a CIE */
	uintptr_t c = p - cie_ptr;
	p += 4;
	if (cc->at != c) {
		cc->at = 0;
		if (!parse_cie(r, c, &cc->cie, &cc->initial))
			return;
		cc->at = c;
	}
	const cie_info *cie = &cc->cie;
	uintptr_t pc_begin = rd_enc(r, &p, cie->fde_enc, 0);
	uintptr_t range = rd_enc(r, &p, (uint8_t)(cie->fde_enc & 0x0f), 0);
	if (cie->has_z)
		p += rd_uleb(r, &p);
	if (r->bad || p > end || pc_begin + range < pc_begin)
		return;
	uintptr_t pc_end = pc_begin + range;
	/* plt: 1 a PLT entry, -1 a signal frame (emit_row) */
	int plt = cie->signal ? -1 : pc_begin >= plt_lo && pc_end <= plt_hi && plt_hi > plt_lo;
	cfi_state st = cc->initial;
	uintptr_t loc = pc_begin;
	run_cfa(r, p, end, cie, &st, &cc->initial, &loc, pc_end, b, 1, base, code_lo, code_hi, plt);
	if (r->bad)
		return;
	if (loc < pc_end)
		emit_row(b, &st, loc, base, code_lo, code_hi, plt);
	/* the gap after the FDE (replaced by the next FDE's first row if
	 * that starts here: see the sort) */
	cfi_state none;
	memset(&none, 0, sizeof none);
	rec_cfi_row gap;
	memset(&gap, 0, sizeof gap);
	if (pc_end >= code_lo && pc_end < code_hi && pc_end - base <= UINT32_MAX) {
		gap.off = (uint32_t)(pc_end - base);
		gap.cfa_rule = REC_CFA_NONE;
		gap.pad[0] = 1; /* a gap: sorts before a row at the same offset */
		rows_push(b, &gap);
	}
}

/* Row order: by offset, gaps first (a real row at the same offset wins). */
static int row_less(const rec_cfi_row *x, const rec_cfi_row *y)
{
	if (x->off != y->off)
		return x->off < y->off;
	return x->pad[0] > y->pad[0];
}

static void row_sift(rec_cfi_row *v, size_t i, size_t n)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && row_less(&v[m], &v[l]))
			m = l;
		if (l + 1 < n && row_less(&v[m], &v[l + 1]))
			m = l + 1;
		if (m == i)
			return;
		rec_cfi_row t = v[i];
		v[i] = v[m];
		v[m] = t;
		i = m;
	}
}

/* Heapsort in place: this runs inside dl_iterate_phdr (rec_dl_iterate_phdr
 * holds g_dl_lock, which the fork handler takes after the program's own
 * handlers), where nothing may call the program's malloc, and glibc's qsort
 * does for a large array (a program whose allocator's fork handler held its
 * lock then waited for g_dl_lock: tests/cli/preload_alloc_fork.sh). */
static void sort_rows(rec_cfi_row *v, size_t n)
{
	/* The rows come FDE by FDE in the order of .eh_frame_hdr's table,
	 * which is sorted by address, each FDE's rows in address order: they
	 * are in order already but for rare overlaps, and heapsort would take
	 * O(n log n) with a cache miss a step anyway (libc's 70 ms at the
	 * start of every recorded process, in a profile of memcached). */
	size_t k = 1;
	while (k < n && !row_less(&v[k], &v[k - 1]))
		k++;
	if (k >= n)
		return;
	for (size_t i = n / 2; i-- > 0;)
		row_sift(v, i, n);
	for (size_t end = n; end > 1; end--) {
		rec_cfi_row t = v[0];
		v[0] = v[end - 1];
		v[end - 1] = t;
		row_sift(v, 0, end - 1);
	}
}

static void free_rows(rec_cfi_row *rows, size_t map_bytes)
{
	if (rows != NULL && map_bytes != 0)
		munmap(rows, map_bytes);
}

void rec_cfi_free_table(const rec_cfi_table *t)
{
	free_rows((rec_cfi_row *)t->rows, t->map_bytes);
}

rec_status rec_cfi_build(const void *hdr, const uintptr_t *lo, const uintptr_t *hi, size_t n,
			 uintptr_t base, uintptr_t code_lo, uintptr_t code_hi, rec_cfi_table *t)
{
	memset(t, 0, sizeof *t);
	reader r = { lo, hi, n, 0, 0 };
	uintptr_t h = (uintptr_t)hdr;
	if (rd_u(&r, h, 1) != 1)
		return REC_OK;
	uint8_t eh_enc = (uint8_t)rd_u(&r, h + 1, 1);
	uint8_t cnt_enc = (uint8_t)rd_u(&r, h + 2, 1);
	uint8_t tab_enc = (uint8_t)rd_u(&r, h + 3, 1);
	uintptr_t p = h + 4;
	(void)rd_enc(&r, &p, eh_enc, h);
	uintptr_t count = rd_enc(&r, &p, cnt_enc, h);
	if (r.bad || cnt_enc == PE_OMIT || tab_enc == PE_OMIT || count == 0)
		return REC_OK;
	/* The PLT (for its expression rule): .plt is the executable range the
	 * module's FDE with a CFA expression covers; we do not know it from
	 * memory, so any FDE with a CFA expression of at most 64 KiB at the
	 * start of the code counts as the PLT (ld puts the .plt sections first). */
	uintptr_t plt_lo = code_lo, plt_hi = code_lo + 65536;
	rows_buf b = { NULL, 0, 0, 0, 0 };
	cie_cache cc = { 0 };
	for (uintptr_t i = 0; i < count && i < (uintptr_t)1 << 24; i++) {
		(void)rd_enc(&r, &p, tab_enc, h); /* initial location */
		uintptr_t fde = rd_enc(&r, &p, tab_enc, h);
		if (r.bad)
			break;
		reader fr = { lo, hi, n, 0, 0 }; /* a bad FDE loses only itself */
		parse_fde(&fr, fde, &b, base, code_lo, code_hi, plt_lo, plt_hi, &cc);
		if (b.nomem)
			break;
	}
	if (b.nomem) {
		free_rows(b.v, b.bytes);
		return REC_ERR_NOMEM;
	}
	if (b.n == 0) {
		free_rows(b.v, b.bytes);
		return REC_OK;
	}
	sort_rows(b.v, b.n);
	/* one row per offset: the last of equal offsets (a real row after a gap) */
	size_t w = 0;
	for (size_t i = 0; i < b.n; i++) {
		if (w > 0 && b.v[w - 1].off == b.v[i].off)
			w--;
		b.v[w] = b.v[i];
		b.v[w].pad[0] = 0;
		w++;
	}
	/* the index after the rows, in the same mapping */
	size_t nindex = ((size_t)(b.v[w - 1].off - b.v[0].off) >> REC_CFI_BUCKET_SHIFT) + 2;
	size_t need = w * sizeof(rec_cfi_row) + nindex * sizeof(uint32_t);
	if (need > b.bytes) {
		size_t nb = (need + 4095) & ~(size_t)4095;
		void *grown = mremap(b.v, b.bytes, nb, MREMAP_MAYMOVE);
		if (grown == MAP_FAILED) {
			free_rows(b.v, b.bytes);
			return REC_ERR_NOMEM;
		}
		b.v = grown;
		b.bytes = nb;
	}
	uint32_t *index = (uint32_t *)(void *)(b.v + w);
	size_t first = 0;
	for (size_t k = 0; k < nindex; k++) {
		uint64_t at = (uint64_t)b.v[0].off + ((uint64_t)k << REC_CFI_BUCKET_SHIFT);
		while (first < w && b.v[first].off < at)
			first++;
		index[k] = (uint32_t)first;
	}
	(void)mprotect(b.v, b.bytes, PROT_READ);
	t->rows = b.v;
	t->nrows = w;
	t->index = index;
	t->nindex = nindex;
	t->map_bytes = b.bytes;
	return REC_OK;
}

/* ---- the snapshot ------------------------------------------------------------ */

static pthread_mutex_t refresh_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf */
static rec_cfi_snapshot *g_current;        /* published (release) */
static rec_cfi_snapshot *g_retired;        /* replaced, not freed yet */
static unsigned long long g_adds, g_subs;  /* dl_iterate_phdr's at the last build */
static int g_built;
static int g_wanted;                       /* a recorder was opened (rec_cfi_want) */
/* A first build under way (before its first snapshot is published): how
 * many, and the condition rec_cfi_ensure() waits on for the publication. */
static pthread_mutex_t g_pub_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf */
static pthread_cond_t g_pub_cond = PTHREAD_COND_INITIALIZER;
static int g_building;

/* Walks under way, counted per slot (rec_cfi_enter).  Slots below
 * REC_CFI_SHARED_SLOTS are shared: a walk picks one by a hash of its stack
 * page and counts itself in and out with locked additions; the refresh
 * frees a replaced snapshot only when it read every slot 0 after
 * publishing the new one, and those four accesses are sequentially
 * consistent, so a walk whose increment the refresh's read did not see
 * comes after the publication in their one order and loads the new
 * snapshot.  The slots above are each one thread's own
 * (rec_cfi_walker_claim(): a thread's first capture in normal context,
 * given back by a key destructor at its exit): its walks count with plain
 * loads and stores, a compiler barrier between the count and the load of
 * the snapshot, and the refresh makes every running thread of the process
 * pass a full barrier (membarrier, PRIVATE_EXPEDITED) before it reads
 * them: the asymmetric fence of liburcu's memb flavour (either the refresh
 * sees the count or the walk sees the new snapshot).  A signal handler
 * interrupting the thread between its load and store of the count does a
 * whole walk of its own in between, so the count it leaves is the one it
 * found.  Own slots are handed out only once membarrier is registered. */
static struct {
	unsigned n;
	int owned; /* own slots: a thread has it */
} __attribute__((aligned(64))) g_walkers[REC_CFI_WALK_SLOTS];

/* This thread's own slot + 1; 0: not asked yet; -1: none (no membarrier,
 * all taken, or the thread is exiting). */
static __thread int tls_walk_slot;
static int g_own_ok; /* membarrier registered: own slots may be handed out */
static pthread_once_t walk_once = PTHREAD_ONCE_INIT;
static pthread_key_t walk_key;

static void walk_slot_release(void *arg)
{
	unsigned s = (unsigned)(uintptr_t)arg - 1;
	tls_walk_slot = -1; /* its last walks (signals) count in a shared slot */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&g_walkers[s].owned, 0, __ATOMIC_RELEASE);
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void register_atfork(void);

static void walk_init(void)
{
	pthread_once(&atfork_once, register_atfork);
	if (pthread_key_create(&walk_key, walk_slot_release) != 0)
		return;
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0)
		return;
	__atomic_store_n(&g_own_ok, 1, __ATOMIC_RELEASE);
}

void rec_cfi_walker_claim(void)
{
	if (tls_walk_slot != 0)
		return;
	tls_walk_slot = -1;
	pthread_once(&walk_once, walk_init);
	if (!__atomic_load_n(&g_own_ok, __ATOMIC_ACQUIRE))
		return;
	for (unsigned s = REC_CFI_SHARED_SLOTS; s < REC_CFI_WALK_SLOTS; s++) {
		int free_ = 0;
		if (__atomic_load_n(&g_walkers[s].owned, __ATOMIC_RELAXED) != 0 ||
		    !__atomic_compare_exchange_n(&g_walkers[s].owned, &free_, 1, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		if (pthread_setspecific(walk_key, (void *)(uintptr_t)(s + 1)) != 0) {
			__atomic_store_n(&g_walkers[s].owned, 0, __ATOMIC_RELEASE);
			return;
		}
		tls_walk_slot = (int)s + 1;
		return;
	}
}

int rec_cfi_walker_own(void)
{
	return tls_walk_slot > 0;
}

const rec_cfi_snapshot *rec_cfi_enter(rec_cfi_walk *w)
{
	int own = tls_walk_slot;
	if (own > 0) {
		w->slot = (unsigned)own - 1;
		w->own = 1;
		unsigned v = __atomic_load_n(&g_walkers[w->slot].n, __ATOMIC_RELAXED);
		__atomic_store_n(&g_walkers[w->slot].n, v + 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		return __atomic_load_n(&g_current, __ATOMIC_ACQUIRE);
	}
	/* the stack page of this frame: threads' stacks are pages apart */
	uint64_t page = (uint64_t)(uintptr_t)__builtin_frame_address(0) >> 12;
	w->slot = (unsigned)((page * 0x9E3779B97F4A7C15ull) >> 60) % REC_CFI_SHARED_SLOTS;
	w->own = 0;
	__atomic_add_fetch(&g_walkers[w->slot].n, 1, __ATOMIC_SEQ_CST);
	return __atomic_load_n(&g_current, __ATOMIC_SEQ_CST);
}

void rec_cfi_leave(const rec_cfi_walk *w)
{
	if (w->own) {
		unsigned v = __atomic_load_n(&g_walkers[w->slot].n, __ATOMIC_RELAXED);
		__atomic_store_n(&g_walkers[w->slot].n, v - 1, __ATOMIC_RELEASE);
		return;
	}
	__atomic_sub_fetch(&g_walkers[w->slot].n, 1, __ATOMIC_SEQ_CST);
}

/* No walk under way (after the publication of the current snapshot)?  With
 * own slots handed out, every running thread passes a full barrier first;
 * if that fails, it cannot tell: no. */
static int no_walkers(void)
{
	if (__atomic_load_n(&g_own_ok, __ATOMIC_ACQUIRE) &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
		return 0;
	for (unsigned i = 0; i < REC_CFI_WALK_SLOTS; i++)
		if (__atomic_load_n(&g_walkers[i].n, __ATOMIC_SEQ_CST) != 0)
			return 0;
	return 1;
}

const rec_cfi_module *rec_cfi_module_of(const rec_cfi_snapshot *s, uintptr_t pc)
{
	if (s == NULL)
		return NULL;
	size_t a = 0, b = s->n;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (pc < s->m[mid].lo)
			b = mid;
		else if (pc >= s->m[mid].hi)
			a = mid + 1;
		else
			return &s->m[mid];
	}
	return NULL;
}

const rec_cfi_row *rec_cfi_row_of(const rec_cfi_module *m, uintptr_t pc)
{
	if (m == NULL || m->t.nrows == 0 || pc < m->base || pc - m->base > UINT32_MAX)
		return NULL;
	const rec_cfi_table *t = &m->t;
	uint32_t off = (uint32_t)(pc - m->base);
	if (off < t->rows[0].off)
		return NULL;
	size_t p = (size_t)(off - t->rows[0].off) >> REC_CFI_BUCKET_SHIFT;
	size_t a, b; /* the first row with row.off > off is in [a, b] */
	if (p + 1 >= t->nindex) {
		a = t->nrows;
		b = t->nrows;
	} else {
		a = t->index[p];
		b = t->index[p + 1];
	}
	if (a > t->nrows || b > t->nrows || a > b)
		return NULL;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (t->rows[mid].off <= off)
			a = mid + 1;
		else
			b = mid;
	}
	return a == 0 ? NULL : &t->rows[a - 1];
}

typedef struct scan {
	rec_cfi_snapshot *old, *next;
	size_t cap;
	int nomem;
	unsigned long long adds, subs;
	int counted;
	int peek; /* stop at the first module: its adds and subs are the process's */
	int first; /* a first snapshot: only first_module()s get their tables */
	size_t seen; /* modules the walk has passed */
	uintptr_t ldso, vdso; /* the dynamic loader's load bias, the vDSO's ELF header */
} scan;

/* The modules on nearly every stack, whose tables a first snapshot holds:
 * the executable (the loader's first), the dynamic loader, the vDSO, libc
 * (the threads' roots, its callbacks) and the module holding this code
 * (the preload library's thread start routine). */
static int first_module(const scan *sc, const struct dl_phdr_info *info, uintptr_t code_lo,
			uintptr_t code_hi)
{
	uintptr_t self = (uintptr_t)&rec_cfi_refresh;
	if (sc->seen == 0 || (self >= code_lo && self < code_hi))
		return 1;
	if (sc->ldso != 0 && (uintptr_t)info->dlpi_addr == sc->ldso)
		return 1;
	if (sc->vdso != 0 && (uintptr_t)info->dlpi_phdr - sc->vdso < 4096)
		return 1;
	const char *name = info->dlpi_name, *base = name;
	for (const char *c = name; c != NULL && *c; c++)
		if (*c == '/')
			base = c + 1;
	return base != NULL && strncmp(base, "libc.so", 7) == 0;
}

static int count_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	scan *sc = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
		sc->adds = info->dlpi_adds;
		sc->subs = info->dlpi_subs;
		sc->counted = 1;
	}
	sc->cap++;
	return sc->peek && sc->counted;
}

#define MAX_SEGS 16

static int build_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	scan *sc = arg;
	if (sc->nomem || sc->next->n >= sc->cap)
		return 0;
	uintptr_t lo[MAX_SEGS], hi[MAX_SEGS];
	size_t nseg = 0;
	uintptr_t code_lo = UINTPTR_MAX, code_hi = 0;
	const void *hdr = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && nseg < MAX_SEGS) {
			lo[nseg] = a;
			hi[nseg] = a + ph->p_memsz;
			nseg++;
		}
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			if (a < code_lo)
				code_lo = a;
			if (a + ph->p_memsz > code_hi)
				code_hi = a + ph->p_memsz;
		}
		if (ph->p_type == PT_GNU_EH_FRAME)
			hdr = (const void *)a;
	}
	int first = first_module(sc, info, code_lo, code_hi);
	sc->seen++;
	if (code_hi <= code_lo)
		return 0;
	rec_cfi_module *m = &sc->next->m[sc->next->n];
	memset(m, 0, sizeof *m);
	m->lo = code_lo;
	m->hi = code_hi;
	m->base = (uintptr_t)info->dlpi_addr;
	m->key = info->dlpi_phdr;
	/* the same module in the old snapshot: share its rows */
	const rec_cfi_module *om = rec_cfi_module_of(sc->old, code_lo);
	if (om != NULL && !om->pending && om->key == m->key && om->base == m->base &&
	    om->lo == m->lo && om->hi == m->hi) {
		m->t = om->t;
		sc->next->n++;
		return 0;
	}
	if (sc->first && !first) {
		m->pending = 1;
		sc->next->pending++;
		sc->next->n++;
		return 0;
	}
	if (hdr != NULL) {
#ifdef MADV_POPULATE_READ
		/* .eh_frame follows .eh_frame_hdr at the end of their segment
		 * (after .rodata): its pages mapped in one call rather than a
		 * fault each (~14 us on a paravirtualized guest, ring.c), up to
		 * 16 MiB */
		for (size_t k = 0; k < nseg; k++)
			if ((uintptr_t)hdr >= lo[k] && (uintptr_t)hdr < hi[k]) {
				uintptr_t a = (uintptr_t)hdr & ~(uintptr_t)4095;
				uintptr_t e = (hi[k] + 4095) & ~(uintptr_t)4095;
				(void)madvise((void *)a, e - a < ((size_t)16 << 20) ? e - a : (size_t)16 << 20,
					      MADV_POPULATE_READ);
			}
#endif
		if (rec_cfi_build(hdr, lo, hi, nseg, m->base, code_lo, code_hi, &m->t) != REC_OK) {
			sc->nomem = 1;
			return 0;
		}
	}
	sc->next->n++;
	return 0;
}

static int mod_cmp(const void *a, const void *b)
{
	const rec_cfi_module *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Is rows used by a module of s? */
static int uses_rows(const rec_cfi_snapshot *s, const rec_cfi_row *rows)
{
	if (s != NULL)
		for (size_t i = 0; i < s->n; i++)
			if (s->m[i].t.rows == rows)
				return 1;
	return 0;
}

/* Free the retired snapshots (no walk can see them: called when no walk
 * is under way), and the rows none of the current snapshot's modules use. */
static void free_retired(void)
{
	rec_cfi_snapshot *cur = g_current;
	while (g_retired != NULL) {
		rec_cfi_snapshot *s = g_retired;
		g_retired = s->retired_next;
		for (size_t i = 0; i < s->n; i++) {
			const rec_cfi_row *rows = s->m[i].t.rows;
			if (rows == NULL || uses_rows(cur, rows))
				continue;
			int later = 0; /* shared with a retired snapshot still in the list */
			for (rec_cfi_snapshot *t = g_retired; t != NULL && !later; t = t->retired_next)
				later = uses_rows(t, rows);
			for (size_t j = i + 1; j < s->n && !later; j++)
				later = s->m[j].t.rows == rows;
			if (!later)
				rec_cfi_free_table(&s->m[i].t);
		}
		munmap(s, s->map_bytes);
	}
}

/* A fork child has only the forking thread: a refresh under way in
 * another thread of the parent left refresh_lock held for ever.  The
 * snapshot it may have been building was not published (the child keeps
 * the last one); retired ones it was freeing are at worst leaked. */
static void on_fork_child(void)
{
	pthread_mutex_init(&refresh_lock, NULL);
	pthread_mutex_init(&g_pub_lock, NULL);
	pthread_cond_init(&g_pub_cond, NULL);
	g_building = 0; /* the parent's builder is not in the child */
	/* No walk is under way in the only thread (fork is not called inside
	 * one): the counts of the parent's other threads go, and their own
	 * slots with them.  This thread keeps its slot if membarrier works
	 * here too. */
	int own = tls_walk_slot;
	if (own > 0 && (!__atomic_load_n(&g_own_ok, __ATOMIC_RELAXED) ||
			syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0)) {
		__atomic_store_n(&g_own_ok, 0, __ATOMIC_RELAXED);
		tls_walk_slot = -1;
		own = 0;
	}
	for (unsigned i = 0; i < REC_CFI_WALK_SLOTS; i++) {
		g_walkers[i].n = 0;
		if ((int)i + 1 != own)
			g_walkers[i].owned = 0;
	}
}

static int g_fp_only; /* REC_UNWIND=fp, read once (the sampler's rounds refresh 10 times a second) */
static void register_atfork(void)
{
	(void)pthread_atfork(NULL, NULL, on_fork_child);
	const char *env = getenv("REC_UNWIND");
	g_fp_only = env != NULL && strcmp(env, "fp") == 0;
}

#if defined(__x86_64__)
/* Build a snapshot (a first one: first set) over the modules loaded now
 * and publish it.  Under refresh_lock. */
static rec_status build_publish(int first)
{
	scan sc;
	memset(&sc, 0, sizeof sc);
	rec_dl_iterate_phdr(count_cb, &sc);
	sc.cap += 8; /* modules loaded between the two iterations */
	size_t bytes = sizeof(rec_cfi_snapshot) + sc.cap * sizeof(rec_cfi_module);
	bytes = (bytes + 4095) & ~(size_t)4095;
	rec_cfi_snapshot *next = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (next == MAP_FAILED)
		return REC_ERR_NOMEM;
	next->map_bytes = bytes;
	next->n = 0;
	next->pending = 0;
	next->retired_next = NULL;
	sc.old = g_current;
	sc.next = next;
	sc.first = first;
	sc.ldso = (uintptr_t)getauxval(AT_BASE);
	sc.vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	rec_dl_iterate_phdr(build_cb, &sc);
	if (sc.nomem) {
		/* rows built for new modules: free those the old snapshot lacks */
		for (size_t i = 0; i < next->n; i++)
			if (next->m[i].t.rows != NULL && !uses_rows(g_current, next->m[i].t.rows))
				rec_cfi_free_table(&next->m[i].t);
		munmap(next, bytes);
		return REC_ERR_NOMEM;
	}
	qsort(next->m, next->n, sizeof next->m[0], mod_cmp);
	rec_cfi_snapshot *old = g_current;
	next->gen = old != NULL ? old->gen + 1 : 1;
	__atomic_store_n(&g_current, next, __ATOMIC_SEQ_CST);
	if (old != NULL) {
		old->retired_next = g_retired;
		g_retired = old;
	}
	g_adds = sc.adds;
	g_subs = sc.subs;
	g_built = sc.counted;
	if (no_walkers())
		free_retired();
	return REC_OK;
}

/* The first snapshot is out (or its build failed): wake rec_cfi_ensure(). */
static void first_done(int *building)
{
	if (!*building)
		return;
	*building = 0;
	pthread_mutex_lock(&g_pub_lock);
	g_building--;
	pthread_cond_broadcast(&g_pub_cond);
	pthread_mutex_unlock(&g_pub_lock);
}
#endif

/* first_only: a first snapshot is enough (rec_cfi_ensure()). */
static rec_status refresh(int first_only)
{
#if !defined(__x86_64__)
	(void)first_only;
	return REC_OK;
#else
	pthread_once(&atfork_once, register_atfork);
	/* REC_UNWIND=fp: no tables, the frame-pointer walk (a way out, and the
	 * "before" of bench/unwind.sh) */
	if (g_fp_only) {
		/* nothing to build: rec_cfi_ensure() need not come back */
		__atomic_store_n(&g_wanted, 0, __ATOMIC_RELAXED);
		return REC_OK;
	}
	/* a first build: rec_cfi_ensure() waits for its first snapshot, not
	 * for refresh_lock */
	int building = 0;
	if (__atomic_load_n(&g_current, __ATOMIC_ACQUIRE) == NULL) {
		pthread_mutex_lock(&g_pub_lock);
		g_building++;
		pthread_mutex_unlock(&g_pub_lock);
		building = 1;
	}
	pthread_mutex_lock(&refresh_lock);
	scan sc;
	/* The background thread asks every round: the loader's counters of
	 * the first module answer it without a walk over all of them. */
	memset(&sc, 0, sizeof sc);
	sc.peek = 1;
	rec_dl_iterate_phdr(count_cb, &sc);
	rec_status st = REC_OK;
	if (g_built && sc.counted && sc.adds == g_adds && sc.subs == g_subs &&
	    (g_current->pending == 0 || first_only)) {
		if (g_retired != NULL && no_walkers())
			free_retired();
	} else {
		int fresh = 0; /* the snapshot just published is up to date */
		if (g_current == NULL) {
			st = build_publish(1);
			first_done(&building);
			fresh = 1;
		}
		if (st == REC_OK && !first_only && (!fresh || g_current->pending != 0))
			st = build_publish(0);
	}
	pthread_mutex_unlock(&refresh_lock);
	first_done(&building);
	return st;
#endif
}

rec_status rec_cfi_refresh(void)
{
	return refresh(0);
}

void rec_cfi_want(void)
{
	__atomic_store_n(&g_wanted, 1, __ATOMIC_RELAXED);
}

void rec_cfi_ensure(void)
{
	if (__atomic_load_n(&g_current, __ATOMIC_ACQUIRE) != NULL ||
	    !__atomic_load_n(&g_wanted, __ATOMIC_RELAXED))
		return;
	/* a thread building the first snapshot: wait for it, not for the
	 * whole build after it */
	pthread_mutex_lock(&g_pub_lock);
	while (g_building > 0 && __atomic_load_n(&g_current, __ATOMIC_ACQUIRE) == NULL)
		pthread_cond_wait(&g_pub_cond, &g_pub_lock);
	pthread_mutex_unlock(&g_pub_lock);
	if (__atomic_load_n(&g_current, __ATOMIC_ACQUIRE) == NULL &&
	    __atomic_load_n(&g_wanted, __ATOMIC_RELAXED))
		(void)refresh(1);
}

void rec_cfi_ensure_all(void)
{
	const rec_cfi_snapshot *s = __atomic_load_n(&g_current, __ATOMIC_ACQUIRE);
	if (s != NULL && s->pending != 0)
		(void)refresh(0);
}
