/* SPDX-License-Identifier: MIT */
/*
 * test_stack_symbolizer.c - the recorder's symbolizer over libdwfl
 * (stack_symbolizer.c, stack_symbol_dwarf.c) in this process: a function's
 * source file and line, data symbols (a static and a global variable, an
 * address inside one), names without DWARF (the lock names' mode),
 * symbolize=off (module and offset only, flagged), a library dlopen()ed
 * after the first lookup.  (rec_symbols itself, stack_symbol_dwarf.c:
 * test_stack_symbol_dwarf.c.)
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "record/stack_internal.h"
#include "rec/symbols.h"

#define NOINLINE __attribute__((noinline, noclone))

static int sym_static_counter[4];
int sym_global_table[16];
static volatile uintptr_t g_pc;

/* The return address into this function of a call to its callee. */
static NOINLINE void callee(void)
{
	g_pc = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

static NOINLINE void symb_caller(void)
{
	callee();
	__asm__ volatile("" ::: "memory");
}

static void t_function_file_line(void **state)
{
	(void)state;
	symb_caller();
	rec_symbolizer *s;
	assert_int_equal(rec_symbolizer_open(&s), REC_OK);
	rec_symbol sym;
	assert_int_equal(rec_symbolizer_lookup(s, g_pc, &sym), REC_OK);
	assert_string_equal(sym.function, "symb_caller");
	assert_non_null(strstr(sym.file, "test_stack_symbolizer.c"));
	/* the line of the call in symb_caller: the line after "static NOINLINE
	 * void symb_caller(void) {" */
	assert_true(sym.line > 30 && sym.line < 60);
	assert_int_equal(sym.flags, 0);
	assert_true(sym.build_id[0] != 0);
	rec_symbolizer_close(s);

	/* names only: no file or line */
	assert_int_equal(rec_symbolizer_open(&s), REC_OK);
	rec_symbolizer_set_lines(s, 0);
	assert_int_equal(rec_symbolizer_lookup(s, g_pc, &sym), REC_OK);
	assert_string_equal(sym.function, "symb_caller");
	assert_string_equal(sym.file, "");
	assert_int_equal(sym.line, 0);
	rec_symbolizer_close(s);

	/* symbolize=off: module and offset, flagged; the offset is the same */
	rec_symbol named;
	assert_int_equal(rec_symbolizer_open(&s), REC_OK);
	assert_int_equal(rec_symbolizer_lookup(s, g_pc, &named), REC_OK);
	uint64_t off = named.module_offset;
	rec_symbolizer_close(s);
	assert_int_equal(rec_symbolizer_open(&s), REC_OK);
	rec_symbolizer_set_names(s, 0);
	assert_int_equal(rec_symbolizer_lookup(s, g_pc, &sym), REC_OK);
	assert_string_equal(sym.function, "");
	assert_string_equal(sym.file, "");
	assert_int_equal(sym.flags, REC_FRAME_UNSYMBOLIZED);
	assert_int_equal(sym.module_offset, off);
	assert_non_null(strstr(sym.module_path, "test_stack_symbolizer"));
	/* an exact pc is flagged so */
	assert_int_equal(rec_symbolizer_lookup(s, g_pc | REC_STACK_PC_EXACT, &sym), REC_OK);
	assert_int_equal(sym.flags, REC_FRAME_UNSYMBOLIZED | REC_FRAME_PC_EXACT);
	rec_symbolizer_close(s);
}

static void t_data_symbols(void **state)
{
	(void)state;
	sym_static_counter[1]++;
	sym_global_table[3]++;
	rec_symbolizer *s;
	assert_int_equal(rec_symbolizer_open(&s), REC_OK);
	uint64_t off = 99;
	const char *n = rec_symbolizer_data(s, (uintptr_t)&sym_static_counter[0], &off);
	assert_non_null(n);
	assert_string_equal(n, "sym_static_counter");
	assert_int_equal(off, 0);
	n = rec_symbolizer_data(s, (uintptr_t)&sym_global_table[3], &off);
	assert_non_null(n);
	assert_string_equal(n, "sym_global_table");
	assert_int_equal(off, 3 * sizeof(int));
	/* a function's address is no data object; a stack address has no module */
	assert_null(rec_symbolizer_data(s, (uintptr_t)&symb_caller, NULL));
	int local = 0;
	assert_null(rec_symbolizer_data(s, (uintptr_t)&local, NULL));
	rec_symbolizer_close(s);
}

/* A library loaded after the symbolizer has seen the modules is found. */
static void t_dlopen_after(void **state)
{
	(void)state;
	rec_symbolizer *s;
	assert_int_equal(rec_symbolizer_open(&s), REC_OK);
	symb_caller();
	rec_symbol sym;
	assert_int_equal(rec_symbolizer_lookup(s, g_pc, &sym), REC_OK);
	/* SQLite (libsqlite3-dev is a build package): not linked into the tests */
	assert_null(dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_NOLOAD));
	void *h = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	void *fn = dlsym(h, "sqlite3_libversion");
	assert_non_null(fn);
	/* a return address one byte into sqlite3_libversion */
	assert_int_equal(rec_symbolizer_lookup(s, (uintptr_t)fn + 1, &sym), REC_OK);
	assert_non_null(strstr(sym.module_path, "libsqlite3.so"));
	assert_string_equal(sym.function, "sqlite3_libversion");
	assert_int_equal(sym.function_offset, 1);
	rec_symbolizer_close(s);
	dlclose(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_function_file_line),
		cmocka_unit_test(t_data_symbols),
		cmocka_unit_test(t_dlopen_after),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
