/* SPDX-License-Identifier: MIT */
/*
 * stack_capture.c - stack capture (async-signal-safe): the thread's stack
 * bounds, the capture of the calling thread's stack and the ucontext
 * variant for the CPU sampler; both follow the call-frame information of
 * stack_unwind.c where unwind tables exist, the frame-pointer walk here
 * where not.  See stack_internal.h for the pc convention and the safety
 * rules; the symbolizer is beside it, in stack_symbolizer.c.
 */
#include "record/builtin_internal.h"
#include "record/stack_internal.h"
#include "record/stack_cfi.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__GNUC__) || defined(__clang__)
#define REC_NO_ASAN __attribute__((no_sanitize_address))
#define REC_NOINLINE __attribute__((noinline))
#else
#define REC_NO_ASAN
#define REC_NOINLINE
#endif

/* ---- per-thread state ----------------------------------------------------- */

static __thread uintptr_t tls_stack_lo, tls_stack_hi;
static __thread int tls_in_signal;

/* Executable segments of the modules loaded when the first thread
 * registered: lets the signal-time walk check, without a system call,
 * that an address is code it may read (for the frameless-leaf heuristic
 * below).  Filled once; modules loaded later are not covered. */
#define MAX_EXEC_RANGES 256
static uintptr_t exec_lo[MAX_EXEC_RANGES], exec_hi[MAX_EXEC_RANGES];
static unsigned exec_count; /* published with release after filling */
static pthread_once_t exec_once = PTHREAD_ONCE_INIT;

static int exec_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	unsigned *n = arg;
	for (int i = 0; i < info->dlpi_phnum && *n < MAX_EXEC_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !(ph->p_flags & PF_R))
			continue;
		exec_lo[*n] = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
		exec_hi[*n] = exec_lo[*n] + ph->p_memsz;
		(*n)++;
	}
	return 0;
}

static void exec_init(void)
{
	unsigned n = 0;
	rec_dl_iterate_phdr(exec_cb, &n);
	__atomic_store_n(&exec_count, n, __ATOMIC_RELEASE);
}

/* Is [a, a + len) inside one cached executable segment? */
static int in_code(uintptr_t a, size_t len)
{
	unsigned n = __atomic_load_n(&exec_count, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n; i++)
		if (a >= exec_lo[i] && a < exec_hi[i] && exec_hi[i] - a >= len)
			return 1;
	return 0;
}

void rec_stack_exec_init(void)
{
	pthread_once(&exec_once, exec_init);
}

rec_status rec_stack_bounds_of(pthread_t th, uintptr_t *lo, uintptr_t *hi)
{
	rec_stack_exec_init();
	pthread_attr_t attr;
	if (pthread_getattr_np(th, &attr) != 0)
		return REC_ERR_STATE;
	void *addr = NULL;
	size_t size = 0;
	int rc = pthread_attr_getstack(&attr, &addr, &size);
	pthread_attr_destroy(&attr);
	if (rc != 0 || addr == NULL || size < 64)
		return REC_ERR_STATE;
	*lo = (uintptr_t)addr;
	*hi = (uintptr_t)addr + size;
	return REC_OK;
}

static rec_status register_bounds(void)
{
	if (tls_stack_hi != 0)
		return REC_OK;
	uintptr_t lo, hi;
	rec_status st = rec_stack_bounds_of(pthread_self(), &lo, &hi);
	if (st == REC_OK)
		rec_stack_set_bounds(lo, hi);
	return st;
}

rec_status rec_stack_thread_register(void)
{
	rec_status st = register_bounds(); /* first: the seen hooks use them */
	rec_thread_seen();
	return st;
}

void rec_stack_set_bounds(uintptr_t lo, uintptr_t hi)
{
	if (tls_stack_hi != 0 || hi <= lo)
		return;
	tls_stack_lo = lo;
	tls_stack_hi = hi;
}

/* Parse hex digits of /proc/self/maps. */
static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int bounds_from_maps(uintptr_t sp)
{
	if (tls_stack_hi != 0)
		return 1;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[4096];
	uintptr_t a = 0, b = 0;
	int field = 0; /* 0: start, 1: end, 2: rest of the line */
	int found = 0;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			char c = buf[i];
			if (c == '\n') {
				if (field == 2 && sp >= a && sp < b) {
					found = 1;
					break; /* [a, b) is the mapping */
				}
				a = b = 0;
				field = 0;
			} else if (field == 0) {
				int v = hexval(c);
				if (v >= 0)
					a = a << 4 | (uintptr_t)v;
				else
					field = c == '-' ? 1 : 2;
			} else if (field == 1) {
				int v = hexval(c);
				if (v >= 0)
					b = b << 4 | (uintptr_t)v;
				else
					field = 2;
			}
		}
		if (found)
			break;
	}
	close(fd);
	if (found)
		rec_stack_set_bounds(a, b);
	return found;
}

int rec_stack_bounds_no_alloc_;

/* The calling thread's bounds, found now if need be (sp: an address on its
 * stack).  Under the preload library a thread's first capture may happen
 * inside its allocator's locks (a pthread_mutex_trylock of jemalloc's, a
 * rec.LockOrder event), where pthread_getattr_np's realloc would wait for
 * the allocator's own lock: the stack's mapping is found in /proc/self/maps
 * instead (open and read into a buffer on the stack). */
static int bounds_here(uintptr_t sp)
{
	if (tls_stack_hi != 0)
		return 1;
	if (__atomic_load_n(&rec_stack_bounds_no_alloc_, __ATOMIC_RELAXED))
		return bounds_from_maps(sp);
	return register_bounds() == REC_OK;
}

int rec_stack_bounds_here(uintptr_t *lo, uintptr_t *hi)
{
	if (!bounds_here((uintptr_t)__builtin_frame_address(0)))
		return 0;
	*lo = tls_stack_lo;
	*hi = tls_stack_hi;
	return 1;
}

int rec_stack_bounds_signal(const void *ucontext)
{
	if (tls_stack_hi != 0)
		return 1;
	if (ucontext == NULL)
		return 0;
	const ucontext_t *uc = (const ucontext_t *)ucontext;
#if defined(__x86_64__)
	return bounds_from_maps((uintptr_t)uc->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
	return bounds_from_maps((uintptr_t)uc->uc_mcontext.sp);
#else
	(void)uc;
	return 0;
#endif
}

int rec_stack_thread_bounds(uintptr_t *lo, uintptr_t *hi)
{
	if (tls_stack_hi == 0)
		return 0;
	*lo = tls_stack_lo;
	*hi = tls_stack_hi;
	return 1;
}

void rec_stack_signal_enter(void) { tls_in_signal++; }
void rec_stack_signal_leave(void) { tls_in_signal--; }

/* ---- librec's own code ------------------------------------------------------- */

/* When librec is a shared object of its own (librec.so, the preload library
 * librec-preload.so), all of that module's code is the recorder's: the
 * linker puts code outside rec_text there, its PLT and the compiler's
 * helpers from libgcc (__udivti3, __cpu_indicator_init), and a CPU sample
 * that lands in one of them must not show a frame of the recorder
 * (cli/record_memcached saw one, in one run of four).  A module is taken as
 * librec's by its file name (librec*), as bench/stack_roots.py does: a
 * library or program that links librec.a into itself keeps rec_text alone,
 * since the rest of its code is its own.  The range is the executable
 * segment that holds rec_text. */
int rec_stack_librec_module_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	const uintptr_t me = (uintptr_t)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || me < lo || me >= hi)
			continue;
		const char *name = info->dlpi_name ? info->dlpi_name : "";
		const char *base = strrchr(name, '/');
		base = base ? base + 1 : name;
		if (strncmp(base, "librec", 6) == 0) {
			rec_stack_hide_lo_ = lo;
			rec_stack_hide_hi_ = hi;
		}
		return 1;
	}
	return 0;
}

/* Before the recorder can start (librec.so's and the preload library's
 * own constructors, default priority, come later; preload.c's, also 101,
 * sets the same range). */
__attribute__((constructor(101))) static void librec_module_range(void)
{
	if ((uintptr_t)__start_rec_text != (uintptr_t)__stop_rec_text && rec_stack_hide_hi_ == 0)
		(void)dl_iterate_phdr(rec_stack_librec_module_cb, (void *)(uintptr_t)__start_rec_text);
}

void rec_stack_librec_range(uintptr_t *lo, uintptr_t *hi)
{
	*lo = (uintptr_t)__start_rec_text;
	*hi = (uintptr_t)__stop_rec_text;
}

/* ---- the walk --------------------------------------------------------------- */

/* A frame record: [fp] = caller's frame pointer, [fp + 1 word] = return
 * address (x86-64 rbp chain; aarch64 x29/x30 frame record).  Every frame
 * pointer must lie in [lo, hi - 2 words], be word-aligned and be strictly
 * above the previous one; lo is at least the stack pointer of the frame the
 * walk started from, so every word read is between a live stack pointer and
 * the top of the thread's stack: mapped memory. */
REC_NO_ASAN static size_t walk(uintptr_t fp, uintptr_t lo, uintptr_t hi,
			       uintptr_t *pcs, size_t n, size_t max,
			       size_t skip, int *truncated)
{
	const uintptr_t word = sizeof(uintptr_t);
	if (hi < lo + 2 * word)
		return n;
	for (;;) {
		if (fp < lo || fp > hi - 2 * word || (fp & (word - 1)) != 0)
			break;
		const volatile uintptr_t *f = (const volatile uintptr_t *)fp;
		uintptr_t next = f[0], ret = f[1];
		if (ret < 4096)
			break; /* end of chain (or garbage) */
		if (skip > 0) {
			skip--;
		} else if (rec_stack_in_librec(ret)) {
			/* librec's own frame (a leading one, or the preload
			 * library's start routine at a thread's root): not part of
			 * the stack */
		} else {
			if (n >= max) {
				if (truncated)
					*truncated = 1;
				break;
			}
			pcs[n++] = ret & ~REC_STACK_PC_EXACT;
		}
		if (next <= fp)
			break;
		fp = next;
	}
	return n;
}

/* The walk from the frame of a public capture function (fp): that frame is
 * trusted (we are running in it); its return address is the first entry.
 * Where the unwind tables of stack_cfi.h exist (x86-64, once a recorder's
 * background thread or the CPU sampler built them) the callers come from
 * each module's call-frame information, as for a CPU sample, so a stack
 * taken inside a callback of libc (qsort's comparator, a function called by
 * a library built without frame pointers) still names every caller up to
 * the thread's root; the frame-pointer chain serves where there are none.
 * Always inlined into the noinline capture functions: fp is that
 * function's own frame. */
static inline __attribute__((always_inline)) size_t
capture_from(uintptr_t fp, uintptr_t *pcs, size_t max, size_t skip, int *truncated)
{
	if (truncated)
		*truncated = 0;
	if (pcs == NULL || max == 0)
		return 0;
	if (tls_stack_hi == 0 && tls_in_signal == 0)
		(void)bounds_here(fp);
#if defined(__x86_64__)
	if (tls_in_signal == 0) {
		rec_cfi_walker_claim();
		rec_cfi_ensure();
	}
	if (tls_stack_hi != 0 && fp >= tls_stack_lo && fp <= tls_stack_hi - 16) {
		/* librec's own frames, this one first, are left by their frame
		 * records (librec is built with frame pointers: the Makefile's
		 * OPT), the skipped ones among them: no table lookup for them;
		 * the walk of the tables starts in the first caller outside
		 * librec, with the registers its frame record gives: sp just
		 * above the record, rbp the one it saved. */
		uintptr_t f = fp, sk = skip;
		uintptr_t ret = ((const volatile uintptr_t *)f)[1];
		uintptr_t next = ((const volatile uintptr_t *)f)[0];
		while (rec_stack_in_librec(ret) && next > f && next <= tls_stack_hi - 16 &&
		       (next & 7) == 0) {
			if (sk > 0)
				sk--;
			f = next;
			ret = ((const volatile uintptr_t *)f)[1];
			next = ((const volatile uintptr_t *)f)[0];
		}
		int pending = 0;
		size_t n = rec_unwind_here(ret, f + 16, next, tls_stack_lo, tls_stack_hi, sk, pcs, max,
					   truncated, tls_in_signal == 0 ? &pending : NULL);
		if (pending) {
			/* through a module whose table the first snapshot
			 * lacks: again over the whole one, as later walks */
			rec_cfi_ensure_all();
			if (truncated)
				*truncated = 0;
			n = rec_unwind_here(ret, f + 16, next, tls_stack_lo, tls_stack_hi, sk, pcs,
					    max, truncated, NULL);
		}
		if (n != (size_t)-1)
			return n;
	}
#endif
	const volatile uintptr_t *f = (const volatile uintptr_t *)fp;
	uintptr_t next = f[0], ret = f[1];
	size_t n = 0;
	if (ret < 4096)
		return 0;
	if (skip > 0)
		skip--;
	else if (!rec_stack_in_librec(ret))
		pcs[n++] = ret & ~REC_STACK_PC_EXACT;
	if (tls_stack_hi == 0)
		return n; /* unknown bounds (unregistered, in a signal): leaf only */
	uintptr_t lo = tls_stack_lo;
	if (fp >= tls_stack_lo && fp < tls_stack_hi)
		lo = fp + 1; /* strictly above our frame */
	return walk(next, lo, tls_stack_hi, pcs, n, max, skip, truncated);
}

REC_NOINLINE REC_NO_ASAN size_t rec_stack_capture_ex(uintptr_t *pcs, size_t max,
						    size_t skip, int *truncated)
{
	return capture_from((uintptr_t)__builtin_frame_address(0), pcs, max, skip, truncated);
}

REC_NOINLINE REC_NO_ASAN size_t rec_stack_capture(uintptr_t *pcs, size_t max, size_t skip)
{
	return capture_from((uintptr_t)__builtin_frame_address(0), pcs, max, skip, NULL);
}

/* A signal's interrupted stack: the CFI walk of stack_unwind.c where the
 * unwind tables exist (x86-64), else the frame-pointer walk below. */
size_t rec_stack_capture_ucontext(const void *ucontext, uintptr_t *pcs, size_t max,
				  int *truncated)
{
	return rec_stack_capture_ucontext_ex(ucontext, pcs, max, truncated, NULL);
}

REC_NO_ASAN size_t rec_stack_capture_ucontext_fp(const void *ucontext, uintptr_t *pcs,
						 size_t max, int *truncated)
{
	if (truncated)
		*truncated = 0;
	if (ucontext == NULL || pcs == NULL || max == 0)
		return 0;
	const ucontext_t *uc = (const ucontext_t *)ucontext;
	uintptr_t pc, fp, sp;
#if defined(__x86_64__)
	pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
	pc = (uintptr_t)uc->uc_mcontext.pc;
	fp = (uintptr_t)uc->uc_mcontext.regs[29];
	sp = (uintptr_t)uc->uc_mcontext.sp;
#else
	(void)uc;
	return 0;
#endif
	size_t n = 0;
	if (pc == 0)
		return 0;
	if (!rec_stack_in_librec(pc))
		pcs[n++] = pc | REC_STACK_PC_EXACT;
	if (tls_stack_hi == 0)
		return n;
	uintptr_t lo = tls_stack_lo, hi = tls_stack_hi;
	if (sp < lo || sp >= hi)
		return n; /* interrupted on another stack (alt stack, coroutine) */
#if defined(__x86_64__)
	/* Frameless leaf (gcc gives leaf functions no frame; also the first
	 * instruction of any function): the return address is at [sp] and fp
	 * is still the caller's frame, so the walk would skip the caller.  If
	 * [sp] is an address in code right after a direct call (e8 rel32) whose
	 * target is at or shortly before pc, take it as the caller. */
	if ((sp & 7) == 0 && sp <= hi - sizeof(uintptr_t)) {
		uintptr_t ra = *(const volatile uintptr_t *)sp;
		if (ra > 5 && in_code(ra - 5, 5)) {
			const volatile uint8_t *c = (const volatile uint8_t *)(ra - 5);
			if (c[0] == 0xE8) {
				int32_t rel = (int32_t)((uint32_t)c[1] | (uint32_t)c[2] << 8 |
							(uint32_t)c[3] << 16 | (uint32_t)c[4] << 24);
				uintptr_t target = ra + (uintptr_t)(intptr_t)rel;
				int framed = 0;
				if (fp >= sp && fp <= hi - 2 * sizeof(uintptr_t) && (fp & 7) == 0)
					framed = ((const volatile uintptr_t *)fp)[1] == ra;
				if (target <= pc && pc - target < 65536 && !framed && n < max &&
				    !rec_stack_in_librec(ra))
					pcs[n++] = ra;
			}
		}
	}
#endif
	return walk(fp, sp, hi, pcs, n, max, 0, truncated);
}
