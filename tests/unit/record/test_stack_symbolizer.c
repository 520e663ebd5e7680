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
#include <stdio.h>
#include <unistd.h>
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

/* Whose sources are read: by default the program's and its own libraries',
 * not the system's libraries' (libc's DWARF from Debian's libc6-dbg costs
 * ~70 ms of CPU and ~16 MB), whose frames keep their names. */
static void t_sources_mode(void **state)
{
	(void)state;
	assert_true(rec_symbolizer_system_path("/lib/x86_64-linux-gnu/libc.so.6"));
	assert_true(rec_symbolizer_system_path("/usr/lib/x86_64-linux-gnu/libz.so.1"));
	assert_true(rec_symbolizer_system_path("/lib64/ld-linux-x86-64.so.2"));
	assert_true(rec_symbolizer_system_path("/usr/lib64/libfoo.so"));
	assert_false(rec_symbolizer_system_path("/usr/local/lib/libfoo.so"));
	assert_false(rec_symbolizer_system_path("/usr/libexec/foo"));
	assert_false(rec_symbolizer_system_path("/opt/app/lib/libfoo.so"));
	assert_false(rec_symbolizer_system_path("/library/libfoo.so"));
	assert_false(rec_symbolizer_system_path("/home/u/usr/lib/libfoo.so"));
	assert_false(rec_symbolizer_system_path(""));
	assert_false(rec_symbolizer_system_path(NULL));

	symb_caller();
	void *fn = dlsym(RTLD_DEFAULT, "getpid");
	assert_non_null(fn);
	Dl_info di;
	assert_true(dladdr(fn, &di) != 0);
	assert_true(rec_symbolizer_system_path(di.dli_fname)); /* libc, as the loader names it */
	const uintptr_t libc_pc = (uintptr_t)fn + 1;

	/* the default: the test program's file and line; libc's name only,
	 * and its DWARF is never read */
	rec_symbolizer *s;
	rec_symbol sym;
	assert_int_equal(rec_symbolizer_open(&s), REC_OK);
	rec_symbolizer_set_lines(s, 0);
	assert_int_equal(rec_symbolizer_sources(s), REC_SOURCES_PROGRAM);
	assert_true(rec_symbolizer_source_cheap(s, libc_pc));
	assert_int_equal(rec_symbolizer_source(s, libc_pc, &sym), REC_OK);
	assert_non_null(strstr(sym.function, "getpid")); /* __getpid */
	assert_string_equal(sym.file, "");
	assert_int_equal(sym.line, 0);
	assert_int_equal(sym.inline_count, 0);
	assert_int_equal(rec_symbolizer_release(s), 0); /* no DWARF was read */
	assert_int_equal(rec_symbolizer_source(s, g_pc, &sym), REC_OK);
	assert_string_equal(sym.function, "symb_caller");
	assert_non_null(strstr(sym.file, "test_stack_symbolizer.c"));
	assert_int_equal(rec_symbolizer_release(s), 1);
	rec_symbolizer_close(s);

	/* names only (symbolize=names): not even the program's */
	assert_int_equal(rec_symbolizer_open(&s), REC_OK);
	rec_symbolizer_set_lines(s, 0);
	rec_symbolizer_set_sources(s, REC_SOURCES_NONE);
	assert_int_equal(rec_symbolizer_source(s, g_pc, &sym), REC_OK);
	assert_string_equal(sym.function, "symb_caller");
	assert_string_equal(sym.file, "");
	assert_int_equal(rec_symbolizer_release(s), 0);
	rec_symbolizer_close(s);

	/* symbolize=all: libc's too, when its debug file is installed
	 * (libc6-dbg: /usr/lib/debug/.build-id/xx/yyyy.debug) */
	char bid[129], path[300];
	assert_true(rec_module_build_id((uintptr_t)di.dli_fbase, bid, sizeof bid) > 2);
	snprintf(path, sizeof path, "/usr/lib/debug/.build-id/%.2s/%s.debug", bid, bid + 2);
	assert_int_equal(rec_symbolizer_open(&s), REC_OK);
	rec_symbolizer_set_lines(s, 0);
	rec_symbolizer_set_sources(s, REC_SOURCES_ALL);
	if (access(path, R_OK) == 0) {
		assert_false(rec_symbolizer_source_cheap(s, libc_pc));
		assert_int_equal(rec_symbolizer_source(s, libc_pc, &sym), REC_OK);
		assert_non_null(strstr(sym.function, "getpid")); /* __getpid */
		assert_true(sym.file[0] != 0 && sym.line > 0);
		assert_int_equal(rec_symbolizer_release(s), 1);
	} else {
		print_message("libc's debug file %s is not installed: symbolize=all of libc not checked\n",
			      path);
	}
	rec_symbolizer_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_function_file_line),
		cmocka_unit_test(t_data_symbols),
		cmocka_unit_test(t_dlopen_after),
		cmocka_unit_test(t_sources_mode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
