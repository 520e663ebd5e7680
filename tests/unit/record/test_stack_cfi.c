/* SPDX-License-Identifier: MIT */
/*
 * test_stack_cfi.c - stack_cfi.c, the unwind tables built from a module's
 * .eh_frame_hdr/.eh_frame: a hand-made well-formed table gives exactly its
 * rows and every lookup finds the row at or before the pc; thousands of
 * damaged and random tables build without a fault and give sorted rows
 * that a walk over garbage survives; libc's real table has the rows the
 * walk ends on (a thread's root, the signal frame) and getpid's entry row;
 * a refresh without a module change keeps the snapshot.  Moved from
 * test_stack_unwind.c: t_bogus_tables, t_libc_table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/membarrier.h>

#include "record/stack_cfi.h"
#include "record/stack_internal.h"

/* ---- helpers (as test_stack_unwind.c) -------------------------------------------- */
static uint64_t g_rng = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return g_rng;
}

/* Code addresses to start from: this program's and libc's. */
static uintptr_t g_code[2][2];
static int code_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	int which = info->dlpi_name[0] == '\0' ? 0 : strstr(info->dlpi_name, "libc.so") ? 1 : -1;
	if (which < 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X)) {
			g_code[which][0] = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			g_code[which][1] = g_code[which][0] + info->dlpi_phdr[i].p_memsz;
		}
	return 0;
}

/* A well-formed .eh_frame_hdr + .eh_frame in buf (LEN bytes): one CIE
 * (CFA = rsp + 8, return address at CFA - 8) and nfde FDEs of 64 bytes of
 * "code" each at buf + 2048 + 64 i (push rbp; mov rsp, rbp: CFA = rsp + 16,
 * then rbp + 16, rbp saved at CFA - 16). */
static void put32(uint8_t *at, uint32_t v) { memcpy(at, &v, 4); }
static size_t make_table(uint8_t *buf, size_t len, unsigned nfde)
{
	memset(buf, 0, len);
	const size_t eh = 256; /* .eh_frame */
	buf[0] = 1, buf[1] = 0x1b, buf[2] = 0x03, buf[3] = 0x3b;
	put32(buf + 4, (uint32_t)(eh - 4));
	put32(buf + 8, nfde);
	static const uint8_t cie[] = { 0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b,
				       0x0c, 7, 8, 0x90, 1, 0, 0 };
	memcpy(buf + eh, cie, sizeof cie);
	size_t at = eh + sizeof cie;
	for (unsigned i = 0; i < nfde && at + 32 < 2048; i++) {
		uint8_t *f = buf + at;
		uintptr_t code = (uintptr_t)buf + 2048 + 64 * i;
		put32(f, 28);
		put32(f + 4, (uint32_t)(at + 4 - eh));                           /* CIE pointer */
		put32(f + 8, (uint32_t)(int32_t)(code - (uintptr_t)(f + 8)));     /* pcrel */
		put32(f + 12, 64);
		f[16] = 0;                                                        /* aug length */
		static const uint8_t ins[] = { 0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6, 0, 0, 0, 0, 0, 0, 0 };
		memcpy(f + 17, ins, sizeof ins);
		put32(buf + 12 + 8 * i, (uint32_t)(2048 + 64 * i));                /* datarel */
		put32(buf + 16 + 8 * i, (uint32_t)at);
		at += 32;
	}
	return at;
}

/* Bogus tables: damaged copies of a well-formed table, and random bytes,
 * build without reading outside their ranges (ASan would see it: the
 * buffers are heap blocks exactly that long), and walks over the rows built
 * from them end. */
static void t_bogus_tables(void **state)
{
	(void)state;
	assert_int_equal(rec_stack_thread_register(), REC_OK);
	dl_iterate_phdr(code_cb, NULL);
	uintptr_t lo, hi;
	assert_true(rec_stack_thread_bounds(&lo, &hi));
	enum { LEN = 4096 };
	uintptr_t junk[256] __attribute__((aligned(16)));
	uintptr_t pcs[64];
	size_t built = 0;
	/* the well-formed table: 3 rows per FDE and a gap after the last */
	{
		uint8_t *buf = malloc(LEN);
		assert_non_null(buf);
		make_table(buf, LEN, 8);
		uintptr_t rlo = (uintptr_t)buf, rhi = (uintptr_t)buf + LEN;
		rec_cfi_table t;
		assert_int_equal(rec_cfi_build(buf, &rlo, &rhi, 1, (uintptr_t)buf, 0, UINTPTR_MAX, &t),
				 REC_OK);
		const rec_cfi_row *rows = t.rows;
		assert_int_equal(t.nrows, 8 * 3 + 1);
		assert_int_equal(rows[0].off, 2048);
		assert_int_equal(rows[0].cfa_rule, REC_CFA_SP);
		assert_int_equal(rows[0].cfa_off, 8);
		assert_int_equal(rows[1].off, 2049);
		assert_int_equal(rows[1].cfa_off, 16);
		assert_int_equal(rows[1].fp_rule, REC_FP_AT);
		assert_int_equal(rows[1].fp_off, -16);
		assert_int_equal(rows[2].off, 2052);
		assert_int_equal(rows[2].cfa_rule, REC_CFA_FP);
		assert_int_equal(rows[3].off, 2048 + 64);
		assert_int_equal(rows[24].off, 2048 + 8 * 64);
		assert_int_equal(rows[24].cfa_rule, REC_CFA_NONE);
		/* lookups through the index: every byte of the code */
		rec_cfi_module m = { (uintptr_t)buf + 2048, (uintptr_t)buf + 4096, (uintptr_t)buf, NULL, t, 0 };
		for (uintptr_t pc = (uintptr_t)buf; pc < (uintptr_t)buf + 4096; pc++) {
			const rec_cfi_row *r = rec_cfi_row_of(&m, pc);
			size_t want = 0; /* the last row at or before pc, by a linear scan */
			while (want < t.nrows && rows[want].off <= pc - (uintptr_t)buf)
				want++;
			if (want == 0)
				assert_null(r);
			else
				assert_ptr_equal(r, &rows[want - 1]);
		}
		rec_cfi_free_table(&t);
		free(buf);
	}
	for (int it = 0; it < 3000; it++) {
		uint8_t *buf = malloc(LEN);
		assert_non_null(buf);
		if (it % 8 == 0) {
			for (size_t i = 0; i < LEN; i++)
				buf[i] = (uint8_t)rnd();
		} else {
			size_t end = make_table(buf, LEN, 1 + (unsigned)(rnd() % 40));
			for (int k = 1 + (int)(rnd() % 6); k > 0; k--)
				buf[rnd() % end] = (uint8_t)rnd(); /* damage */
		}
		uintptr_t rlo = (uintptr_t)buf, rhi = (uintptr_t)buf + LEN;
		rec_cfi_table t;
		rec_status st = rec_cfi_build(buf, &rlo, &rhi, 1, (uintptr_t)buf, 0, UINTPTR_MAX, &t);
		assert_int_equal(st, REC_OK);
		if (t.rows != NULL) {
			built++;
			for (size_t i = 1; i < t.nrows; i++)
				assert_true(t.rows[i - 1].off < t.rows[i].off);
			/* walk a garbage stack over a snapshot holding just these
			 * rows, as if they were this program's */
			rec_cfi_snapshot *s = calloc(1, sizeof *s + sizeof s->m[0]);
			assert_non_null(s);
			s->n = 1;
			s->m[0].lo = g_code[0][0];
			s->m[0].hi = g_code[0][1];
			s->m[0].base = g_code[0][0] - 2048;
			s->m[0].t = t;
			for (int w = 0; w < 20; w++) {
				for (size_t i = 0; i < 256; i++)
					junk[i] = (rnd() & 1) ? (uintptr_t)&junk[rnd() % 256]
							      : g_code[0][0] + (uintptr_t)(rnd() % 4096);
				size_t n = rec_unwind_regs(s, g_code[0][0] + (uintptr_t)(rnd() % 4096),
							   (uintptr_t)&junk[rnd() % 128], junk[rnd() % 256], lo,
							   hi, pcs, 64, NULL);
				assert_true(n <= 64);
			}
			free(s);
			rec_cfi_free_table(&t);
		}
		free(buf);
	}
	printf("  damaged tables that gave rows: %zu of 3000\n", built);
	assert_true(built > 1000); /* the damage reached the walk */
}

/* A real module's table: libc's has rows for clone3's root, the signal
 * frame of __restore_rt, and getpid; the rows are sorted and every lookup finds the row
 * at or before it. */
static void t_libc_table(void **state)
{
	(void)state;
	rec_cfi_walk cw;
	assert_int_equal(rec_cfi_refresh(), REC_OK);
	const rec_cfi_snapshot *s = rec_cfi_enter(&cw);
	assert_non_null(s);
	dl_iterate_phdr(code_cb, NULL);
	const rec_cfi_module *m = rec_cfi_module_of(s, g_code[1][0]); /* libc */
	assert_non_null(m);
	assert_ptr_equal(rec_cfi_module_of(s, (uintptr_t)&getpid), m);
	assert_true(m->t.nrows > 1000);
	size_t roots = 0, signals = 0;
	for (size_t i = 1; i < m->t.nrows; i++) {
		assert_true(m->t.rows[i - 1].off < m->t.rows[i].off);
		roots += m->t.rows[i].cfa_rule == REC_CFA_ROOT;
		signals += m->t.rows[i].cfa_rule == REC_CFA_SIGNAL;
	}
	assert_true(roots >= 1);   /* clone3's child (and clone's) */
	assert_true(signals >= 1); /* __restore_rt */
	const rec_cfi_row *r = rec_cfi_row_of(m, (uintptr_t)&getpid);
	assert_non_null(r);
	assert_int_equal(r->cfa_rule, REC_CFA_SP); /* at entry: CFA = rsp + 8 */
	assert_int_equal(r->cfa_off, 8);
	assert_int_equal(r->ra_off, -8);
	rec_cfi_leave(&cw);
	/* a second refresh with no module change keeps the snapshot */
	const rec_cfi_snapshot *a = rec_cfi_enter(&cw);
	rec_cfi_leave(&cw);
	assert_int_equal(rec_cfi_refresh(), REC_OK);
	const rec_cfi_snapshot *b = rec_cfi_enter(&cw);
	rec_cfi_leave(&cw);
	assert_ptr_equal(a, b);
	/* a library loaded since: the next refresh (which asks the loader's
	 * counters of the first module only) makes a snapshot that has it */
	assert_null(dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_NOLOAD));
	void *h = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	void *fn = dlsym(h, "sqlite3_libversion");
	assert_non_null(fn);
	const rec_cfi_snapshot *c = rec_cfi_enter(&cw);
	assert_null(rec_cfi_module_of(c, (uintptr_t)fn));
	rec_cfi_leave(&cw);
	assert_int_equal(rec_cfi_refresh(), REC_OK);
	c = rec_cfi_enter(&cw);
	assert_true(c != b);
	const rec_cfi_module *m2 = rec_cfi_module_of(c, (uintptr_t)fn);
	assert_non_null(m2);
	assert_non_null(rec_cfi_row_of(m2, (uintptr_t)fn));
	rec_cfi_leave(&cw);
}

/* A walk under way keeps the snapshot it entered with: a refresh that
 * replaces it (a library loaded since) retires it without unmapping it,
 * whichever thread walks and whichever slot counts the walk (a shared one
 * by locked additions, or the thread's own by plain stores, which the
 * refresh fences with membarrier before it reads them); once the walks
 * left, the next refresh frees it. */
static const rec_cfi_snapshot *g_walked;
static int g_walk_stage; /* 1: the thread entered; 2: it may leave */
static int g_walker_claims, g_walker_owned;

/* membarrier(PRIVATE_EXPEDITED) works here: threads get slots of their own */
static int own_slots_expected(void)
{
	long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	return q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0;
}

static void *walker_thread(void *arg)
{
	(void)arg;
	rec_cfi_walk w;
	if (g_walker_claims)
		rec_cfi_walker_claim();
	g_walker_owned = rec_cfi_walker_own();
	g_walked = rec_cfi_enter(&w);
	__atomic_store_n(&g_walk_stage, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&g_walk_stage, __ATOMIC_SEQ_CST) != 2)
		usleep(1000);
	rec_cfi_leave(&w);
	return NULL;
}

static int mapped(const void *p)
{
	unsigned char vec;
	void *page = (void *)((uintptr_t)p & ~(uintptr_t)4095);
	return mincore(page, 4096, &vec) == 0;
}

/* Loads a library this process has not loaded yet (its snapshot lacks it). */
static void *load_new_library(void)
{
	static const char *const names[] = { "libexpat.so.1", "libffi.so.8",  "libgmp.so.10",
					     "libxml2.so.2",  "libbz2.so.1",  "liblzma.so.5",
					     "libsqlite3.so.0" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		void *h = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD);
		if (h != NULL) {
			dlclose(h);
			continue;
		}
		if ((h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL)) != NULL)
			return h;
	}
	return NULL;
}

static void t_retired_kept_while_walking(void **state)
{
	(void)state;
	assert_int_equal(rec_cfi_refresh(), REC_OK);
	/* 0: this thread, a shared slot; 1: another thread, shared; 2: another
	 * thread, its own slot; 3: this thread, its own slot */
	for (int variant = 0; variant < 4; variant++) {
		int on_thread = variant == 1 || variant == 2, own = variant >= 2;
		rec_cfi_walk w;
		pthread_t th;
		const rec_cfi_snapshot *old;
		if (on_thread) {
			g_walk_stage = 0;
			g_walker_claims = own;
			assert_int_equal(pthread_create(&th, NULL, walker_thread, NULL), 0);
			while (__atomic_load_n(&g_walk_stage, __ATOMIC_SEQ_CST) != 1)
				usleep(1000);
			old = g_walked;
			assert_int_equal(g_walker_owned, own && own_slots_expected());
		} else {
			if (own)
				rec_cfi_walker_claim();
			assert_int_equal(rec_cfi_walker_own(), own && own_slots_expected());
			old = rec_cfi_enter(&w);
			assert_int_equal(w.own, own && own_slots_expected());
		}
		assert_non_null(old);
		assert_non_null(load_new_library());
		assert_int_equal(rec_cfi_refresh(), REC_OK);
		rec_cfi_walk w2;
		const rec_cfi_snapshot *cur = rec_cfi_enter(&w2);
		rec_cfi_leave(&w2);
		assert_true(cur != old);           /* replaced */
		assert_true(mapped(old));          /* and kept: a walk is in it */
		assert_true(old->n > 0 && old->m[0].hi > old->m[0].lo);
		if (on_thread) {
			__atomic_store_n(&g_walk_stage, 2, __ATOMIC_SEQ_CST);
			assert_int_equal(pthread_join(th, NULL), 0);
		} else {
			rec_cfi_leave(&w);
		}
		assert_int_equal(rec_cfi_refresh(), REC_OK); /* no change: frees the retired */
		assert_false(mapped(old));
	}
}

/* A thread's own slot is given back when it exits: more threads than there
 * are own slots, one after another, each gets one. */
static void *claim_thread(void *arg)
{
	rec_cfi_walker_claim();
	*(int *)arg = rec_cfi_walker_own();
	return NULL;
}

static void t_own_slots_given_back(void **state)
{
	(void)state;
	if (!own_slots_expected()) {
		print_message("membarrier(PRIVATE_EXPEDITED) is not available here: no own slots\n");
		return;
	}
	for (int i = 0; i < 3 * (REC_CFI_WALK_SLOTS - REC_CFI_SHARED_SLOTS); i++) {
		pthread_t th;
		int got = -1;
		assert_int_equal(pthread_create(&th, NULL, claim_thread, &got), 0);
		assert_int_equal(pthread_join(th, NULL), 0);
		assert_int_equal(got, 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_bogus_tables),
		cmocka_unit_test(t_libc_table),
		cmocka_unit_test(t_retired_kept_while_walking),
		cmocka_unit_test(t_own_slots_given_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
