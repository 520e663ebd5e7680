/* SPDX-License-Identifier: MIT */
/*
 * test_stack_symbol_dwarf.c - stack_symbol_dwarf.c, rec_symbols (rec/
 * symbols.h, over elfutils' libdwfl), on this very program: a call site's
 * function, function offset, source file and line, and the chain of
 * functions inlined at an address; a module whose file is gone found by
 * its build-id in a debug directory (DIR/.build-id/xx/yyyy.debug, here a
 * copy of this program); the symbol tables alone (rec_symbols_function).
 * Moved from test_stack_symbolizer.c: t_module_build_id (a module whose
 * file has another build-id, or does not exist, is refused).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rec/symbols.h"
#include "../../lib/readback.h" /* rec_t_self_build_id */
#include "../../lib/tmpdir.h"

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

static volatile uintptr_t g_ret;    /* a return address into dw_caller */
static volatile uintptr_t g_inl;    /* a return address inside dw_inlined, inlined into dw_outer */
static volatile int g_sink;
/* the source lines of the calls (set on the same line as the call) */
static volatile uint32_t g_call_line, g_inlined_line, g_outer_line;

static NOINLINE void dw_callee(void)
{
	g_ret = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

static NOINLINE void dw_caller(void)
{
	dw_callee(); g_call_line = __LINE__;
	__asm__ volatile("" ::: "memory");
}

static NOINLINE void dw_leaf(void)
{
	g_inl = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

static inline __attribute__((always_inline)) void dw_inlined(int k)
{
	g_sink += k;
	dw_leaf(); g_inlined_line = __LINE__;
	g_sink -= k;
}

static NOINLINE void dw_outer(int k)
{
	dw_inlined(k + 1); g_outer_line = __LINE__;
	__asm__ volatile("" ::: "memory");
}

/* This program's path and load bias. */
static void self(char *path, size_t cap, uint64_t *base)
{
	ssize_t n = readlink("/proc/self/exe", path, cap - 1);
	assert_true(n > 0);
	path[n] = 0;
	Dl_info di;
	assert_true(dladdr((void *)&dw_caller, &di) != 0);
	/* the load bias of a PIE is where its first segment is mapped (p_vaddr
	 * 0); of a fixed executable, 0 */
	*base = (uint64_t)(uintptr_t)di.dli_fbase;
	if (*base == 0x400000)
		*base = 0;
}

static void t_resolve_self(void **state)
{
	(void)state;
	dw_caller();
	dw_outer(3);
	char path[4096], bid[128];
	uint64_t base;
	self(path, sizeof path, &base);
	rec_t_self_build_id(bid, sizeof bid);
	rec_symbols *y;
	assert_int_equal(rec_symbols_open(&y, NULL, 0), REC_OK);
	uint32_t h = 0;
	assert_int_equal(rec_symbols_module(y, path, bid, base, &h), REC_OK);
	assert_true(h >= 1);

	/* a return address: the call's line in dw_caller */
	rec_symbolized d;
	const uint64_t off = g_ret - base;
	assert_int_equal(rec_symbols_resolve(y, h, off, 0, &d), REC_OK);
	assert_string_equal(d.function, "dw_caller");
	assert_non_null(strstr(d.file, "test_stack_symbol_dwarf.c"));
	assert_int_equal(d.line, g_call_line);
	assert_int_equal(d.inline_count, 0);
	uint64_t fo = 0;
	const char *fn = rec_symbols_function(y, h, off, 0, &fo);
	assert_non_null(fn);
	assert_string_equal(fn, "dw_caller");
	assert_int_equal(fo, d.function_offset);
	assert_int_equal(fo, off - ((uintptr_t)&dw_caller - base));

	/* inside an inlined function: the chain, innermost first */
	assert_int_equal(rec_symbols_resolve(y, h, g_inl - base, 0, &d), REC_OK);
	assert_string_equal(d.function, "dw_outer");
	assert_int_equal(d.inline_count, 1);
	assert_string_equal(d.inlined[0].function, "dw_inlined");
	assert_int_equal(d.inlined[0].line, g_inlined_line);
	assert_int_equal(d.line, g_outer_line);
	rec_symbols_close(y);
}

/* The module's file is gone: found by its build-id in a debug directory. */
static void t_by_build_id(void **state)
{
	(void)state;
	dw_caller();
	char path[4096], bid[128], dir[256], sub[512], dbg[1024], cmd[8192];
	uint64_t base;
	self(path, sizeof path, &base);
	rec_t_self_build_id(bid, sizeof bid);
	assert_int_equal(rec_t_tmpdir_create(dir, sizeof dir, "rec-test-dwarf"), 0);
	snprintf(sub, sizeof sub, "%s/.build-id/%.2s", dir, bid);
	snprintf(cmd, sizeof cmd, "mkdir -p '%s'", sub);
	assert_int_equal(system(cmd), 0);
	snprintf(dbg, sizeof dbg, "%s/%s.debug", sub, bid + 2);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path, dbg);
	assert_int_equal(system(cmd), 0);
	const char *dirs[] = { dir };
	rec_symbols *y;
	assert_int_equal(rec_symbols_open(&y, dirs, 1), REC_OK);
	uint32_t h = 0;
	assert_int_equal(rec_symbols_module(y, "/gone/test_stack_symbol_dwarf", bid, base, &h), REC_OK);
	assert_true(h >= 1);
	rec_symbolized d;
	assert_int_equal(rec_symbols_resolve(y, h, g_ret - base, 0, &d), REC_OK);
	assert_string_equal(d.function, "dw_caller");
	assert_int_equal(d.line, g_call_line);
	/* another build-id: not found there */
	char other[128];
	snprintf(other, sizeof other, "%s", bid);
	other[5] = other[5] == '0' ? '1' : '0';
	uint32_t h2 = 7;
	assert_int_equal(rec_symbols_module(y, "/gone/test_stack_symbol_dwarf", other, base, &h2),
			 REC_ERR_NOT_FOUND);
	/* its handle resolves nothing (the header says "a handle of 0"; the
	 * code hands out a handle of a module with no file) */
	assert_int_equal(rec_symbols_resolve(y, h2, g_ret - base, 0, &d), REC_OK);
	assert_string_equal(d.function, "");
	assert_null(rec_symbols_function(y, h2, g_ret - base, 0, NULL));
	rec_symbols_close(y);
	assert_int_equal(rec_t_tmpdir_remove(dir), 0);
}

/* rec_symbols opens a module only when its file has the recorded build-id. */
static void t_module_build_id(void **state)
{
	(void)state;
	rec_symbols *y;
	const char *none = "/nonexistent-rec-debug-dir";
	assert_int_equal(rec_symbols_open(&y, &none, 1), REC_OK);
	uint32_t h = 7;
	assert_int_equal(rec_symbols_module(y, "/proc/self/exe", "00112233445566778899", 0, &h),
			 REC_ERR_NOT_FOUND);
	rec_symbolized d;
	assert_int_equal(rec_symbols_resolve(y, h, 0x1234, 0, &d), REC_OK);
	assert_string_equal(d.function, "");
	assert_int_equal(rec_symbols_module(y, "/no/such/file", "", 0, &h), REC_ERR_NOT_FOUND);
	assert_null(rec_symbols_data(y, h, 0x10, NULL));
	assert_null(rec_symbols_function(y, 0, 0x10, 1, NULL));
	assert_int_equal(rec_symbols_resolve(y, 0, 0x10, 0, &d), REC_OK);
	assert_int_equal(rec_symbols_resolve(NULL, 1, 0x10, 0, &d), REC_ERR_INVALID_ARG);
	rec_symbols_close(y);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_module_build_id),
		cmocka_unit_test(t_resolve_self),
		cmocka_unit_test(t_by_build_id),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
