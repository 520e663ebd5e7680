/* SPDX-License-Identifier: MIT */
/*
 * test_stack_capture.c - frame-pointer capture and symbolization, for real: a chain
 * of noinline functions, the test binary's own build-id against readelf,
 * capture from a SIGUSR1 handler interrupting a spinning thread, and frame
 * chains with garbage frame pointers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <link.h>
#include <ucontext.h>
#include <unistd.h>

#include "record/stack_internal.h"
#include "record/stack_cfi.h"

#define NOINLINE __attribute__((noinline))

/* Exported (non-static) so dladdr finds them in the -rdynamic test binary. */
size_t stk_chain_leaf(uintptr_t *pcs, size_t max, size_t skip);
size_t stk_chain_b(uintptr_t *pcs, size_t max, size_t skip);
size_t stk_chain_c(uintptr_t *pcs, size_t max, size_t skip);
size_t stk_chain_d(uintptr_t *pcs, size_t max, size_t skip);
size_t stk_deep(int depth, uintptr_t *pcs, size_t max);
void stk_spin_leaf(void);
void stk_spin_mid(void);
int main(void);

static volatile size_t g_sink; /* keeps calls from becoming tail calls */

NOINLINE size_t stk_chain_leaf(uintptr_t *pcs, size_t max, size_t skip)
{
	size_t n = rec_stack_capture(pcs, max, skip);
	g_sink += n;
	return n;
}
NOINLINE size_t stk_chain_b(uintptr_t *pcs, size_t max, size_t skip)
{
	size_t n = stk_chain_leaf(pcs, max, skip);
	g_sink += n;
	return n;
}
NOINLINE size_t stk_chain_c(uintptr_t *pcs, size_t max, size_t skip)
{
	size_t n = stk_chain_b(pcs, max, skip);
	g_sink += n;
	return n;
}
NOINLINE size_t stk_chain_d(uintptr_t *pcs, size_t max, size_t skip)
{
	size_t n = stk_chain_c(pcs, max, skip);
	g_sink += n;
	return n;
}

/* Static: not in .dynsym, found through the .symtab fallback. */
static NOINLINE size_t stk_static_helper(uintptr_t *pcs, size_t max)
{
	size_t n = rec_stack_capture(pcs, max, 0);
	g_sink += n;
	return n;
}

static const char *fn_name(rec_symbolizer *s, uintptr_t e)
{
	rec_symbol sym;
	assert_int_equal(rec_symbolizer_lookup(s, e, &sym), REC_OK);
	return sym.function;
}

static void t_chain_order_and_names(void **state)
{
	(void)state;
	uintptr_t pcs[64];
	size_t n = stk_chain_d(pcs, 64, 0);
	assert_true(n >= 5);
	/* Return addresses lie just after the call inside each function, in
	 * order leaf first. */
	const uintptr_t fns[4] = { (uintptr_t)stk_chain_leaf, (uintptr_t)stk_chain_b,
				   (uintptr_t)stk_chain_c, (uintptr_t)stk_chain_d };
	for (int i = 0; i < 4; i++) {
		assert_true(pcs[i] > fns[i]);
		assert_true(pcs[i] - fns[i] < 256);
		assert_int_equal(pcs[i] & REC_STACK_PC_EXACT, 0);
	}
	rec_symbolizer *s;
	assert_int_equal(rec_symbolizer_open(&s), REC_OK);
	const char *want[5] = { "stk_chain_leaf", "stk_chain_b", "stk_chain_c", "stk_chain_d",
				"t_chain_order_and_names" };
	for (int i = 0; i < 4; i++)
		assert_string_equal(fn_name(s, pcs[i]), want[i]);
	/* The test function is static: named through .symtab. */
	assert_string_equal(fn_name(s, pcs[4]), want[4]);
	rec_symbol sym;
	assert_int_equal(rec_symbolizer_lookup(s, pcs[1], &sym), REC_OK);
	/* Offsets are of the original return address. */
	assert_int_equal(sym.function_offset, pcs[1] - fns[1]);
	assert_int_equal(sym.module_offset, pcs[1] - sym.module_base);
	assert_true(sym.module_index >= 1);
	assert_non_null(strstr(sym.module_path, "test_stack"));
	/* Cached lookups answer the same strings. */
	rec_symbol again;
	assert_int_equal(rec_symbolizer_lookup(s, pcs[1], &again), REC_OK);
	assert_ptr_equal(again.function, sym.function);
	assert_int_equal(again.module_offset, sym.module_offset);

	/* skip drops leaf frames. */
	uintptr_t pcs2[64];
	size_t n2 = stk_chain_d(pcs2, 64, 2);
	assert_int_equal(n2, n - 2);
	assert_string_equal(fn_name(s, pcs2[0]), "stk_chain_c");
	/* A static function, and a libc frame (exported name from dladdr). */
	n2 = stk_static_helper(pcs2, 64);
	assert_true(n2 >= 2);
	/* gcc may name a specialised clone "stk_static_helper.constprop.0". */
	assert_int_equal(strncmp(fn_name(s, pcs2[0]), "stk_static_helper", 17), 0);
	rec_symbolizer_close(s);
}

static NOINLINE size_t deep_ex(int depth, uintptr_t *pcs, size_t max, int *trunc)
{
	size_t n = depth <= 1 ? rec_stack_capture_ex(pcs, max, 0, trunc)
			      : deep_ex(depth - 1, pcs, max, trunc);
	g_sink += n;
	return n;
}

static void t_truncation(void **state)
{
	(void)state;
	uintptr_t pcs[2];
	int trunc = -1;
	size_t n = deep_ex(4, pcs, 2, &trunc);
	assert_int_equal(n, 2);
	assert_int_equal(trunc, 1);
	uintptr_t big[256];
	n = deep_ex(4, big, 256, &trunc);
	assert_true(n >= 4 && n < 256);
	assert_int_equal(trunc, 0);
}

/* ---- build-id against readelf -n ------------------------------------------ */

static void t_build_id_matches_readelf(void **state)
{
	(void)state;
	char cmd[4200], exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(len > 0);
	exe[len] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", exe);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[512], want[200] = "";
	while (fgets(line, sizeof(line), p) != NULL) {
		const char *b = strstr(line, "Build ID: ");
		if (b != NULL && sscanf(b + 10, "%199[0-9a-f]", want) == 1)
			break;
	}
	assert_int_equal(pclose(p), 0);
	assert_true(strlen(want) >= 16);

	rec_symbolizer *s;
	assert_int_equal(rec_symbolizer_open(&s), REC_OK);
	uintptr_t pcs[8];
	size_t n = stk_chain_leaf(pcs, 8, 0);
	assert_true(n >= 1);
	rec_symbol sym;
	assert_int_equal(rec_symbolizer_lookup(s, pcs[0], &sym), REC_OK);
	assert_string_equal(sym.build_id, want);
	char buf[200];
	assert_int_equal(rec_module_build_id((uintptr_t)sym.module_base, buf, sizeof(buf)), strlen(want));
	assert_string_equal(buf, want);
	/* A libc frame has libc's module and a build-id of its own. */
	assert_int_equal(rec_symbolizer_lookup(s, (uintptr_t)&getpid + 1, &sym), REC_OK);
	assert_non_null(strstr(sym.module_path, "libc"));
	assert_non_null(strstr(sym.function, "getpid")); /* getpid or its alias __getpid */
	assert_string_not_equal(sym.build_id, want);
	rec_symbolizer_close(s);
}

/* ---- capture from a signal handler ------------------------------------------ */

static atomic_int g_spin_stop, g_spinning, g_handled;
static uintptr_t g_sig_pcs[64], g_sig_plain[64];
static size_t g_sig_n, g_sig_plain_n;

NOINLINE void stk_spin_leaf(void)
{
	atomic_store(&g_spinning, 1);
	while (!atomic_load_explicit(&g_spin_stop, memory_order_relaxed))
		g_sink++;
}
NOINLINE void stk_spin_mid(void)
{
	stk_spin_leaf();
	g_sink++;
}

static void on_sigusr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	rec_stack_signal_enter();
	g_sig_n = rec_stack_capture_ucontext(uc, g_sig_pcs, 64, NULL);
	g_sig_plain_n = rec_stack_capture(g_sig_plain, 64, 0);
	rec_stack_signal_leave();
	atomic_store(&g_handled, 1);
}

static void *spin_thread(void *arg)
{
	(void)arg;
	assert_int_equal(rec_stack_thread_register(), REC_OK);
	stk_spin_mid();
	return NULL;
}

static void t_capture_in_signal_handler(void **state)
{
	(void)state;
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigusr1;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	atomic_store(&g_spin_stop, 0);
	atomic_store(&g_spinning, 0);
	atomic_store(&g_handled, 0);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, spin_thread, NULL), 0);
	while (!atomic_load(&g_spinning))
		sched_yield();
	usleep(2000);
	assert_int_equal(pthread_kill(th, SIGUSR1), 0);
	while (!atomic_load(&g_handled))
		sched_yield();
	atomic_store(&g_spin_stop, 1);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);

	rec_symbolizer *s;
	assert_int_equal(rec_symbolizer_open(&s), REC_OK);
	/* From the ucontext: exact leaf pc in the spinning function, then its
	 * callers. */
	assert_true(g_sig_n >= 3);
	assert_true((g_sig_pcs[0] & REC_STACK_PC_EXACT) != 0);
	assert_string_equal(fn_name(s, g_sig_pcs[0]), "stk_spin_leaf");
	/* gcc gives the leaf no frame (the interrupted frame pointer is
	 * stk_spin_mid's); the frameless-leaf heuristic still finds
	 * stk_spin_mid from the return address at the stack pointer. */
	assert_string_equal(fn_name(s, g_sig_pcs[1]), "stk_spin_mid");
	assert_string_equal(fn_name(s, g_sig_pcs[2]), "spin_thread");
	rec_symbol sym;
	assert_int_equal(rec_symbolizer_lookup(s, g_sig_pcs[0], &sym), REC_OK);
	assert_int_equal(sym.function_offset, REC_STACK_PC(g_sig_pcs[0]) - (uintptr_t)stk_spin_leaf);
	/* Plain capture from inside the handler walks through the signal
	 * frame into the interrupted thread's callers. */
	assert_true(g_sig_plain_n >= 3);
	assert_string_equal(fn_name(s, g_sig_plain[0]), "on_sigusr1");
	int found = 0;
	for (size_t i = 0; i < g_sig_plain_n; i++)
		if (strcmp(fn_name(s, g_sig_plain[i]), "spin_thread") == 0)
			found = 1;
	assert_true(found);
	rec_symbolizer_close(s);
}

/* ---- garbage frame pointers ---------------------------------------------- */

static void fake_uc(ucontext_t *uc, uintptr_t pc, uintptr_t fp, uintptr_t sp)
{
	memset(uc, 0, sizeof(*uc));
#if defined(__x86_64__)
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
	uc->uc_mcontext.gregs[REG_RBP] = (greg_t)fp;
	uc->uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
#elif defined(__aarch64__)
	uc->uc_mcontext.pc = pc;
	uc->uc_mcontext.regs[29] = fp;
	uc->uc_mcontext.sp = sp;
#endif
}

static void t_garbage_frame_pointers(void **state)
{
	(void)state;
	assert_int_equal(rec_stack_thread_register(), REC_OK);
	uintptr_t lo, hi;
	assert_true(rec_stack_thread_bounds(&lo, &hi));
	/* Fake frames on this stack: f0 -> f1 -> (bad link). */
	uintptr_t frames[16] __attribute__((aligned(16)));
	uintptr_t *f0 = &frames[0], *f1 = &frames[4];
	const uintptr_t pc = (uintptr_t)stk_chain_leaf + 4;
	const uintptr_t ra0 = (uintptr_t)stk_chain_b + 8, ra1 = (uintptr_t)stk_chain_c + 8;
	const uintptr_t bad_links[] = {
		0x12345678,                 /* unmapped, outside the stack */
		(uintptr_t)f0,              /* going down (a loop) */
		(uintptr_t)f1,              /* pointing at itself */
		(uintptr_t)&frames[6] + 3,  /* misaligned */
		hi,                         /* the first byte past the stack */
		hi - sizeof(uintptr_t),     /* no room for a frame record */
		~(uintptr_t)0 - 15,         /* kernel space */
	};
	uintptr_t pcs[16];
	ucontext_t uc;
	for (size_t i = 0; i < sizeof(bad_links) / sizeof(bad_links[0]); i++) {
		f0[0] = (uintptr_t)f1;
		f0[1] = ra0;
		f1[0] = bad_links[i];
		f1[1] = ra1;
		fake_uc(&uc, pc, (uintptr_t)f0, (uintptr_t)f0);
		size_t n = rec_stack_capture_ucontext(&uc, pcs, 16, NULL);
		assert_int_equal(n, 3); /* leaf, ra0, ra1, then stop */
		assert_int_equal(pcs[0], pc | REC_STACK_PC_EXACT);
		assert_int_equal(pcs[1], ra0);
		assert_int_equal(pcs[2], ra1);
	}
	/* A garbage frame pointer in the context itself: only the leaf. */
	const uintptr_t bad_fp[] = { 0, 0x1000, 0xdeadbeefdead, (uintptr_t)f0 + 1, hi + 4096,
				     (uintptr_t)&frames[0] - 4096 * 64 /* below sp */ };
	for (size_t i = 0; i < sizeof(bad_fp) / sizeof(bad_fp[0]); i++) {
		fake_uc(&uc, pc, bad_fp[i], (uintptr_t)f0);
		assert_int_equal(rec_stack_capture_ucontext(&uc, pcs, 16, NULL), 1);
	}
	/* A return address that is not one (0) ends the walk. */
	f0[0] = (uintptr_t)f1;
	f0[1] = 0;
	fake_uc(&uc, pc, (uintptr_t)f0, (uintptr_t)f0);
	assert_int_equal(rec_stack_capture_ucontext(&uc, pcs, 16, NULL), 1);
	/* Stack pointer not on this thread's stack (e.g. an alternate signal
	 * stack): only the leaf, nothing read through fp. */
	static uintptr_t not_stack[8];
	fake_uc(&uc, pc, (uintptr_t)&not_stack[0], (uintptr_t)&not_stack[0]);
	assert_int_equal(rec_stack_capture_ucontext(&uc, pcs, 16, NULL), 1);
	/* The same frames with a good end: the walk follows them. */
	f0[0] = (uintptr_t)f1;
	f0[1] = ra0;
	f1[0] = 0;
	f1[1] = ra1;
	fake_uc(&uc, pc, (uintptr_t)f0, (uintptr_t)f0);
	assert_int_equal(rec_stack_capture_ucontext(&uc, pcs, 16, NULL), 3);
}

/* ---- librec's own frames ----------------------------------------------------- */

/* The range is the section rec_text: it holds librec's functions (from
 * several of its files) and none of this program's, bounds exclusive. */
static void t_librec_range(void **state)
{
	(void)state;
	uintptr_t lo, hi;
	rec_stack_librec_range(&lo, &hi);
	assert_true(lo != 0 && lo < hi);
	const uintptr_t librec[] = {
		(uintptr_t)rec_stack_capture, (uintptr_t)rec_stack_capture_ucontext,
		(uintptr_t)rec_symbolizer_lookup, (uintptr_t)rec_parse_duration,
		(uintptr_t)rec_reader_open_path, (uintptr_t)rec_strerror,
	};
	for (size_t i = 0; i < sizeof(librec) / sizeof(librec[0]); i++) {
		assert_true(rec_stack_in_librec(librec[i]));
		assert_true(rec_stack_in_librec(librec[i] | REC_STACK_PC_EXACT));
	}
	const uintptr_t ours[] = { (uintptr_t)stk_chain_leaf, (uintptr_t)stk_chain_d,
				   (uintptr_t)fake_uc, (uintptr_t)main };
	for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		assert_false(rec_stack_in_librec(ours[i]));
	assert_true(rec_stack_in_librec(lo));
	assert_true(rec_stack_in_librec(hi - 1));
	assert_false(rec_stack_in_librec(lo - 1));
	assert_false(rec_stack_in_librec(hi));
	assert_false(rec_stack_in_librec(0));
}

/* When librec is a shared object of its own (librec.so, librec-preload.so)
 * all its code is the recorder's, also what the linker adds outside rec_text
 * (the PLT, libgcc's __udivti3): a CPU sample landing there showed a frame of
 * librec-preload.so in cli/record_memcached.  This program links librec.a,
 * so its constructor left the range empty; made-up modules show the rule:
 * the module whose executable segment holds the address counts when its file
 * is librec*, and only then. */
static void t_librec_module_range(void **state)
{
	(void)state;
	assert_int_equal(rec_stack_hide_lo_, 0); /* librec.a in this program */
	assert_int_equal(rec_stack_hide_hi_, 0);
	ElfW(Phdr) ph[2];
	memset(ph, 0, sizeof ph);
	ph[0].p_type = PT_LOAD; /* read-only data: not code */
	ph[0].p_flags = PF_R;
	ph[0].p_vaddr = 0;
	ph[0].p_memsz = 0x1000;
	ph[1].p_type = PT_LOAD;
	ph[1].p_flags = PF_R | PF_X;
	ph[1].p_vaddr = 0x1000;
	ph[1].p_memsz = 0x8000;
	struct dl_phdr_info info;
	memset(&info, 0, sizeof info);
	info.dlpi_addr = 0x7f0000000000;
	info.dlpi_phdr = ph;
	info.dlpi_phnum = 2;
	const uintptr_t in = 0x7f0000001000 + 0x20, plt = 0x7f0000001000, end = 0x7f0000009000;
	/* another library that holds the address (librec.a linked into it) */
	info.dlpi_name = "/usr/lib/libservice.so.1";
	assert_int_equal(rec_stack_librec_module_cb(&info, sizeof info, (void *)in), 1);
	assert_false(rec_stack_in_librec(in));
	/* the address is in no executable segment of this module */
	info.dlpi_name = "/opt/rec/lib/librec-preload.so";
	assert_int_equal(rec_stack_librec_module_cb(&info, sizeof info, (void *)0x7f0000000010), 0);
	assert_false(rec_stack_in_librec(in));
	/* librec's own module: its whole executable segment */
	assert_int_equal(rec_stack_librec_module_cb(&info, sizeof info, (void *)in), 1);
	assert_true(rec_stack_in_librec(in));
	assert_true(rec_stack_in_librec(plt));
	assert_true(rec_stack_in_librec(end - 1));
	assert_true(rec_stack_in_librec((end - 1) | REC_STACK_PC_EXACT));
	assert_false(rec_stack_in_librec(plt - 1));
	assert_false(rec_stack_in_librec(end));
	assert_false(rec_stack_in_librec((uintptr_t)stk_chain_leaf)); /* still the program's */
	assert_true(rec_stack_in_librec((uintptr_t)rec_stack_capture)); /* and rec_text librec's */
	info.dlpi_name = "librec.so.0";
	rec_stack_hide_lo_ = rec_stack_hide_hi_ = 0;
	assert_int_equal(rec_stack_librec_module_cb(&info, sizeof info, (void *)in), 1);
	assert_true(rec_stack_in_librec(plt));
	rec_stack_hide_lo_ = rec_stack_hide_hi_ = 0;
	assert_false(rec_stack_in_librec(plt));
}

/* Frames in librec are dropped, the leading ones from the interrupted pc on
 * and one below a program frame (the preload's start routine under a
 * thread function).  Fake frame-pointer frames: the
 * frame-pointer walk (the CFI walk drops them the same way: test_stack_unwind.c). */
static void t_librec_frames_dropped(void **state)
{
	(void)state;
	assert_int_equal(rec_stack_thread_register(), REC_OK);
	uintptr_t frames[16] __attribute__((aligned(16)));
	uintptr_t *f0 = &frames[0], *f1 = &frames[4], *f2 = &frames[8], *f3 = &frames[12];
	const uintptr_t pc = (uintptr_t)rec_stack_capture + 4;           /* librec */
	const uintptr_t ra0 = (uintptr_t)rec_symbolizer_lookup + 8;       /* librec */
	const uintptr_t ra1 = (uintptr_t)stk_chain_b + 8;                 /* ours */
	const uintptr_t ra2 = (uintptr_t)rec_parse_duration + 8;          /* librec again */
	const uintptr_t ra3 = (uintptr_t)stk_chain_c + 8;                 /* ours */
	f0[0] = (uintptr_t)f1, f0[1] = ra0;
	f1[0] = (uintptr_t)f2, f1[1] = ra1;
	f2[0] = (uintptr_t)f3, f2[1] = ra2;
	f3[0] = 0, f3[1] = ra3;
	uintptr_t pcs[16];
	ucontext_t uc;
	fake_uc(&uc, pc, (uintptr_t)f0, (uintptr_t)f0);
	assert_int_equal(rec_stack_capture_ucontext_fp(&uc, pcs, 16, NULL), 2);
	assert_int_equal(pcs[0], ra1);
	assert_int_equal(pcs[1], ra3); /* ra2, librec under a program frame: dropped too */
	/* max counts only what is kept: librec's frames take no slot */
	int trunc = 0;
	assert_int_equal(rec_stack_capture_ucontext_fp(&uc, pcs, 1, &trunc), 1);
	assert_int_equal(pcs[0], ra1);
	assert_true(trunc);
	/* A program pc stays, and so does everything under it. */
	fake_uc(&uc, (uintptr_t)stk_chain_leaf + 4, (uintptr_t)f0, (uintptr_t)f0);
	assert_int_equal(rec_stack_capture_ucontext_fp(&uc, pcs, 16, NULL), 3);
	assert_int_equal(pcs[0], ((uintptr_t)stk_chain_leaf + 4) | REC_STACK_PC_EXACT);
	assert_int_equal(pcs[1], ra1);
	assert_int_equal(pcs[2], ra3);
	/* A stack that is all librec (the recorder's own threads): empty. */
	f0[0] = (uintptr_t)f1, f0[1] = ra0;
	f1[0] = 0, f1[1] = ra2;
	fake_uc(&uc, pc, (uintptr_t)f0, (uintptr_t)f0);
	assert_int_equal(rec_stack_capture_ucontext_fp(&uc, pcs, 16, NULL), 0);
	/* A capture called by the program starts at the program's frame. */
	size_t n = stk_chain_leaf(pcs, 16, 0);
	assert_true(n >= 1);
	assert_false(rec_stack_in_librec(pcs[0]));
	rec_symbolizer *sym = NULL;
	assert_int_equal(rec_symbolizer_open(&sym), REC_OK);
	assert_string_equal(fn_name(sym, pcs[0]), "stk_chain_leaf");
	rec_symbolizer_close(sym);
}

/* Interrupted at a function's first instruction: the return address is at
 * the stack pointer and the frame pointer is still the caller's (the
 * frame-pointer walk's heuristic for code without CFI). */
static void t_frameless_leaf(void **state)
{
	(void)state;
	uintptr_t real[16];
	size_t n = stk_chain_d(real, 16, 0); /* real[1]: return into stk_chain_b */
	assert_true(n >= 4);
	uintptr_t frames[8] __attribute__((aligned(16)));
	frames[0] = real[1];            /* [sp]: return address into stk_chain_b */
	frames[2] = 0;                  /* stk_chain_b's frame: ends the chain */
	frames[3] = real[2];            /* return into stk_chain_c */
	ucontext_t uc;
	fake_uc(&uc, (uintptr_t)stk_chain_leaf, (uintptr_t)&frames[2], (uintptr_t)&frames[0]);
	uintptr_t pcs[16];
	n = rec_stack_capture_ucontext_fp(&uc, pcs, 16, NULL);
#if defined(__x86_64__)
	assert_int_equal(n, 3);
	assert_int_equal(pcs[1], real[1]);
	assert_int_equal(pcs[2], real[2]);
#else
	assert_int_equal(n, 2);
#endif
	/* [sp] holding data (not a return address after a call) adds nothing. */
	frames[0] = (uintptr_t)&frames[4];
	n = rec_stack_capture_ucontext_fp(&uc, pcs, 16, NULL);
	assert_int_equal(n, 2);
	assert_int_equal(pcs[1], real[2]);
}

/* A thread that never registered: capture registers it lazily outside
 * signal handlers, and works. */
static void *fresh_thread(void *arg)
{
	size_t *n = arg;
	uintptr_t pcs[32];
	*n = stk_chain_d(pcs, 32, 0);
	return NULL;
}

static void t_unregistered_thread(void **state)
{
	(void)state;
	pthread_t th;
	size_t n = 0;
	assert_int_equal(pthread_create(&th, NULL, fresh_thread, &n), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(n >= 5); /* four chain frames + fresh_thread (+ libc) */
}

/* ---- bounds for a signal handler, from /proc/self/maps ------------------ */

typedef struct maps_probe {
	int before, found;
	uintptr_t lo, hi, attr_lo, attr_hi, local;
	size_t n;
} maps_probe;

static void *maps_thread(void *arg)
{
	maps_probe *p = arg;
	uintptr_t lo, hi;
	p->before = rec_stack_thread_bounds(&lo, &hi); /* a new thread: none */
	ucontext_t uc;
	assert_int_equal(getcontext(&uc), 0);
	p->local = (uintptr_t)&uc;
	p->found = rec_stack_bounds_signal(&uc);
	if (rec_stack_thread_bounds(&lo, &hi)) {
		p->lo = lo;
		p->hi = hi;
	}
	uintptr_t pcs[32];
	int trunc = 0;
	p->n = rec_stack_capture_ucontext(&uc, pcs, 32, &trunc);
	assert_int_equal(rec_stack_bounds_of(pthread_self(), &p->attr_lo, &p->attr_hi), REC_OK);
	return NULL;
}

/* The fatal-signal handler's fallback: a thread without cached bounds gets
 * the mapping of its stack pointer, which holds pthread's stack, and the
 * walk from a ucontext then goes past the leaf. */
static void t_bounds_from_maps(void **state)
{
	(void)state;
	maps_probe p;
	memset(&p, 0, sizeof p);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, maps_thread, &p), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	print_message("maps [%#lx, %#lx), pthread [%#lx, %#lx), %zu frames\n", (unsigned long)p.lo,
		      (unsigned long)p.hi, (unsigned long)p.attr_lo, (unsigned long)p.attr_hi, p.n);
	assert_int_equal(p.before, 0);
	assert_int_equal(p.found, 1);
	assert_true(p.lo <= p.local && p.local < p.hi);
	assert_true(p.lo <= p.attr_lo && p.attr_hi <= p.hi);
	assert_true(p.n >= 2); /* the pc and start_thread's return address: without bounds, the pc only */
}

/* ---- cost of a 10-deep capture ------------------------------------------- */

NOINLINE size_t stk_deep(int depth, uintptr_t *pcs, size_t max)
{
	size_t n = depth <= 1 ? rec_stack_capture(pcs, max, 0) : stk_deep(depth - 1, pcs, max);
	g_sink += n;
	return n;
}

size_t stk_deep_nocap(int depth, uintptr_t *pcs, size_t max);
NOINLINE size_t stk_deep_nocap(int depth, uintptr_t *pcs, size_t max)
{
	size_t n = depth <= 1 ? (size_t)(pcs[0] & 1) + max : stk_deep_nocap(depth - 1, pcs, max);
	g_sink += n;
	return n;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: preemption-free */
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void t_capture_cost(void **state)
{
	(void)state;
	uintptr_t pcs[64];
	/* 10 frames below this function: stk_deep x 10 (leaf first). */
	size_t n = stk_deep(10, pcs, 10);
	assert_int_equal(n, 10);
	const int iters = 200000;
	double best = 1e30, base = 1e30;
	for (int round = 0; round < 5; round++) {
		double t0 = now_ns();
		for (int i = 0; i < iters; i++)
			stk_deep(10, pcs, 10);
		double t1 = now_ns();
		for (int i = 0; i < iters; i++)
			stk_deep_nocap(10, pcs, 10);
		double t2 = now_ns();
		best = (t1 - t0) / iters < best ? (t1 - t0) / iters : best;
		base = (t2 - t1) / iters < base ? (t2 - t1) / iters : base;
	}
	print_message("capture of a 10-deep stack: %.1f ns (the 10 calls alone: %.1f ns)\n",
		      best, base);
	assert_true(best > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_chain_order_and_names),
		cmocka_unit_test(t_truncation),
		cmocka_unit_test(t_build_id_matches_readelf),
		cmocka_unit_test(t_capture_in_signal_handler),
		cmocka_unit_test(t_garbage_frame_pointers),
		cmocka_unit_test(t_frameless_leaf),
		cmocka_unit_test(t_librec_range),
		cmocka_unit_test(t_librec_module_range),
		cmocka_unit_test(t_librec_frames_dropped),
		cmocka_unit_test(t_unregistered_thread),
		cmocka_unit_test(t_bounds_from_maps),
		cmocka_unit_test(t_capture_cost),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
