/* SPDX-License-Identifier: MIT */
/*
 * stack_capture.c - frame-pointer stack capture (async-signal-safe) and the
 * symbolizer the recorder's background thread uses.  See stack_internal.h
 * for the pc convention and the safety rules.
 */
#include "record/stack_internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
	dl_iterate_phdr(exec_cb, &n);
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

rec_status rec_stack_bounds_of(pthread_t th, uintptr_t *lo, uintptr_t *hi)
{
	pthread_once(&exec_once, exec_init);
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
	rec_sampler_thread_seen();
	return register_bounds();
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
 * trusted (we are running in it); its return address is the first entry. */
static inline __attribute__((always_inline)) size_t
capture_from(uintptr_t fp, uintptr_t *pcs, size_t max, size_t skip, int *truncated)
{
	if (truncated)
		*truncated = 0;
	if (pcs == NULL || max == 0)
		return 0;
	if (tls_stack_hi == 0 && tls_in_signal == 0)
		(void)register_bounds();
	const volatile uintptr_t *f = (const volatile uintptr_t *)fp;
	uintptr_t next = f[0], ret = f[1];
	size_t n = 0;
	if (ret < 4096)
		return 0;
	if (skip > 0)
		skip--;
	else
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

REC_NO_ASAN size_t rec_stack_capture_ucontext(const void *ucontext, uintptr_t *pcs,
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
				if (target <= pc && pc - target < 65536 && !framed && n < max)
					pcs[n++] = ra;
			}
		}
	}
#endif
	return walk(fp, sp, hi, pcs, n, max, 0, truncated);
}

/* ---- build-id ----------------------------------------------------------------- */

static const char hexdig[] = "0123456789abcdef";

static size_t note_build_id(const uint8_t *p, size_t len, size_t align,
			    char *buf, size_t cap)
{
	size_t off = 0;
	while (off + sizeof(ElfW(Nhdr)) <= len) {
		const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)(p + off);
		size_t namesz = nh->n_namesz, descsz = nh->n_descsz;
		size_t name_off = off + sizeof(ElfW(Nhdr));
		size_t desc_off = name_off + ((namesz + align - 1) & ~(align - 1));
		size_t next = desc_off + ((descsz + align - 1) & ~(align - 1));
		if (desc_off > len || descsz > len - desc_off || next <= off)
			break;
		if (nh->n_type == NT_GNU_BUILD_ID && namesz == 4 &&
		    memcmp(p + name_off, "GNU", 4) == 0) {
			if (cap == 0 || descsz * 2 + 1 > cap)
				return 0;
			for (size_t i = 0; i < descsz; i++) {
				buf[2 * i] = hexdig[p[desc_off + i] >> 4];
				buf[2 * i + 1] = hexdig[p[desc_off + i] & 15];
			}
			buf[2 * descsz] = '\0';
			return 2 * descsz;
		}
		off = next;
	}
	return 0;
}

static size_t phdr_build_id(const struct dl_phdr_info *info, char *buf, size_t cap)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		size_t align = ph->p_align == 8 ? 8 : 4;
		size_t n = note_build_id((const uint8_t *)(info->dlpi_addr + ph->p_vaddr),
					 ph->p_memsz, align, buf, cap);
		if (n > 0)
			return n;
	}
	return 0;
}

struct build_id_query {
	uintptr_t base;
	char *buf;
	size_t cap, len;
	int found;
};

static int build_id_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct build_id_query *q = arg;
	if ((uintptr_t)info->dlpi_addr != q->base)
		return 0;
	q->found = 1;
	q->len = phdr_build_id(info, q->buf, q->cap);
	return 1;
}

size_t rec_module_build_id(uintptr_t base, char *buf, size_t cap)
{
	struct build_id_query q = { base, buf, cap, 0, 0 };
	if (cap > 0)
		buf[0] = '\0';
	dl_iterate_phdr(build_id_cb, &q);
	return q.len;
}

/* ---- symbolizer ------------------------------------------------------------- */

#define MAX_SEGS 16

typedef struct symtab_fn {
	uint64_t value, size; /* link-time address (module offset for PIE/DSO) */
	uint32_t name;        /* offset in the module's strtab copy */
} symtab_fn;

typedef struct module {
	uintptr_t base;
	char *path;
	char *build_id; /* heap, lowercase hex or "" */
	uint32_t nsegs;
	uintptr_t seg_lo[MAX_SEGS], seg_hi[MAX_SEGS];
	/* .symtab of the file, loaded on first need. */
	int symtab_state; /* 0 not tried, 1 loaded, -1 unavailable */
	symtab_fn *fns;
	size_t nfns;
	char *strtab;
} module;

typedef struct sym_entry {
	uintptr_t key; /* captured entry; 0 = empty slot */
	rec_symbol sym;
} sym_entry;

typedef struct str_block {
	struct str_block *next;
	size_t used, cap;
	char data[];
} str_block;

struct rec_symbolizer {
	module *mods;
	size_t nmods, capmods;
	sym_entry *table;
	size_t cap, count; /* cap: power of two */
	str_block *strs;
	char exe_path[4096];
};

static char *sym_strdup(rec_symbolizer *s, const char *str)
{
	size_t len = strlen(str) + 1;
	str_block *b = s->strs;
	if (b == NULL || b->cap - b->used < len) {
		size_t cap = len > 16384 ? len : 16384;
		str_block *nb = malloc(sizeof(*nb) + cap);
		if (nb == NULL)
			return NULL;
		nb->next = b;
		nb->used = 0;
		nb->cap = cap;
		s->strs = nb;
		b = nb;
	}
	char *p = b->data + b->used;
	memcpy(p, str, len);
	b->used += len;
	return p;
}

rec_status rec_symbolizer_open(rec_symbolizer **out)
{
	if (out == NULL)
		return REC_ERR_INVALID_ARG;
	*out = NULL;
	rec_symbolizer *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return REC_ERR_NOMEM;
	/* The cache table and the executable's path come with the first
	 * lookup (the background thread's), not here: a recorder opens in the
	 * program's start-up. */
	*out = s;
	return REC_OK;
}

static void module_free_symtab(module *m)
{
	free(m->fns);
	free(m->strtab);
	m->fns = NULL;
	m->strtab = NULL;
	m->nfns = 0;
}

void rec_symbolizer_close(rec_symbolizer *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nmods; i++) {
		free(s->mods[i].path);
		free(s->mods[i].build_id);
		module_free_symtab(&s->mods[i]);
	}
	free(s->mods);
	free(s->table);
	for (str_block *b = s->strs; b != NULL;) {
		str_block *next = b->next;
		free(b);
		b = next;
	}
	free(s);
}

typedef struct scan_ctx {
	rec_symbolizer *s;
	int nomem;
} scan_ctx;

static int scan_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	scan_ctx *c = arg;
	rec_symbolizer *s = c->s;
	uintptr_t base = (uintptr_t)info->dlpi_addr;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	/* The main program has an empty name (and so has the vdso on some
	 * systems: the vdso has no PT_INTERP but also no file; keep its name). */
	bool is_exe = false;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_INTERP)
			is_exe = true;
	if (name[0] == '\0' && is_exe) {
		if (s->exe_path[0] == '\0') {
			ssize_t n = readlink("/proc/self/exe", s->exe_path, sizeof(s->exe_path) - 1);
			s->exe_path[n > 0 ? (size_t)n : 0] = '\0';
		}
		name = s->exe_path;
	}
	for (size_t i = 0; i < s->nmods; i++) /* already known */
		if (s->mods[i].base == base && strcmp(s->mods[i].path, name) == 0)
			return 0;
	if (s->nmods == s->capmods) {
		size_t nc = s->capmods ? 2 * s->capmods : 16;
		module *nm = realloc(s->mods, nc * sizeof(*nm));
		if (nm == NULL) {
			c->nomem = 1;
			return 1;
		}
		s->mods = nm;
		s->capmods = nc;
	}
	module *m = &s->mods[s->nmods];
	memset(m, 0, sizeof(*m));
	m->base = base;
	m->path = strdup(name);
	if (m->path == NULL) {
		c->nomem = 1;
		return 1;
	}
	for (int i = 0; i < info->dlpi_phnum && m->nsegs < MAX_SEGS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		m->seg_lo[m->nsegs] = base + ph->p_vaddr;
		m->seg_hi[m->nsegs] = base + ph->p_vaddr + ph->p_memsz;
		m->nsegs++;
	}
	char bid[2 * 64 + 1];
	bid[0] = '\0';
	phdr_build_id(info, bid, sizeof(bid));
	m->build_id = strdup(bid);
	if (m->build_id == NULL) {
		free(m->path);
		c->nomem = 1;
		return 1;
	}
	s->nmods++;
	return 0;
}

static module *find_module(rec_symbolizer *s, uintptr_t addr, int *nomem)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < s->nmods; i++) {
			module *m = &s->mods[i];
			for (uint32_t k = 0; k < m->nsegs; k++)
				if (addr >= m->seg_lo[k] && addr < m->seg_hi[k])
					return m;
		}
		if (pass == 0) { /* maybe loaded since the last scan */
			scan_ctx c = { s, 0 };
			dl_iterate_phdr(scan_cb, &c);
			if (c.nomem) {
				*nomem = 1;
				return NULL;
			}
		}
	}
	return NULL;
}

static int fn_cmp(const void *a, const void *b)
{
	const symtab_fn *x = a, *y = b;
	return x->value < y->value ? -1 : x->value > y->value;
}

/* Load the function symbols of the module's file (.symtab, else .dynsym). */
static void load_symtab(module *m)
{
	m->symtab_state = -1;
	if (m->path[0] != '/')
		return;
	int fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(ElfW(Ehdr))) {
		close(fd);
		return;
	}
	size_t fsize = (size_t)st.st_size;
	const uint8_t *f = mmap(NULL, fsize, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f == MAP_FAILED)
		return;
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)(const void *)f;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_shentsize != sizeof(ElfW(Shdr)) ||
	    eh->e_shoff == 0 || eh->e_shoff > fsize ||
	    (size_t)eh->e_shnum > (fsize - eh->e_shoff) / sizeof(ElfW(Shdr)))
		goto out;
	const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(const void *)(f + eh->e_shoff);
	const ElfW(Shdr) *symsec = NULL;
	for (int want = SHT_SYMTAB; symsec == NULL; want = SHT_DYNSYM) {
		for (size_t i = 0; i < eh->e_shnum; i++)
			if (sh[i].sh_type == (ElfW(Word))want) {
				symsec = &sh[i];
				break;
			}
		if (want == SHT_DYNSYM)
			break;
	}
	if (symsec == NULL || symsec->sh_link >= eh->e_shnum ||
	    symsec->sh_entsize != sizeof(ElfW(Sym)))
		goto out;
	const ElfW(Shdr) *strsec = &sh[symsec->sh_link];
	if (symsec->sh_offset > fsize || symsec->sh_size > fsize - symsec->sh_offset ||
	    strsec->sh_offset > fsize || strsec->sh_size > fsize - strsec->sh_offset ||
	    strsec->sh_size == 0 || strsec->sh_size > UINT32_MAX)
		goto out;
	const ElfW(Sym) *syms = (const ElfW(Sym) *)(const void *)(f + symsec->sh_offset);
	size_t nsyms = symsec->sh_size / sizeof(ElfW(Sym));
	size_t nf = 0;
	for (size_t i = 0; i < nsyms; i++)
		if (((syms[i].st_info) & 0xf) == STT_FUNC && syms[i].st_value != 0 &&
		    syms[i].st_shndx != SHN_UNDEF && syms[i].st_name < strsec->sh_size)
			nf++;
	if (nf == 0)
		goto out;
	m->fns = malloc(nf * sizeof(*m->fns));
	m->strtab = malloc(strsec->sh_size + 1);
	if (m->fns == NULL || m->strtab == NULL) {
		module_free_symtab(m);
		goto out;
	}
	memcpy(m->strtab, f + strsec->sh_offset, strsec->sh_size);
	m->strtab[strsec->sh_size] = '\0';
	for (size_t i = 0; i < nsyms; i++)
		if (((syms[i].st_info) & 0xf) == STT_FUNC && syms[i].st_value != 0 &&
		    syms[i].st_shndx != SHN_UNDEF && syms[i].st_name < strsec->sh_size) {
			symtab_fn *fn = &m->fns[m->nfns++];
			fn->value = syms[i].st_value;
			fn->size = syms[i].st_size;
			fn->name = syms[i].st_name;
		}
	qsort(m->fns, m->nfns, sizeof(*m->fns), fn_cmp);
	m->symtab_state = 1;
out:
	munmap((void *)(uintptr_t)f, fsize);
}

/* Function containing link-time address a in m's symtab, or NULL. */
static const char *symtab_lookup(module *m, uint64_t a, uint64_t *start)
{
	if (m->symtab_state == 0)
		load_symtab(m);
	if (m->symtab_state != 1)
		return NULL;
	size_t lo = 0, hi = m->nfns; /* last fn with value <= a */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->fns[mid].value <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo - 1 is the last symbol starting at or below a; look back over a
	 * few more for aliases and zero-sized neighbours. */
	for (size_t i = lo, k = 0; i-- > 0 && k < 32; k++) {
		const symtab_fn *fn = &m->fns[i];
		if (a >= fn->value && a - fn->value < fn->size) {
			*start = fn->value;
			return m->strtab + fn->name;
		}
	}
	return NULL;
}

static rec_status grow_table(rec_symbolizer *s)
{
	size_t ncap = s->cap ? s->cap * 2 : 1024;
	sym_entry *nt = calloc(ncap, sizeof(*nt));
	if (nt == NULL)
		return REC_ERR_NOMEM;
	for (size_t i = 0; i < s->cap; i++) {
		if (s->table[i].key == 0)
			continue;
		size_t h = (size_t)(s->table[i].key * 0x9E3779B97F4A7C15ull) & (ncap - 1);
		while (nt[h].key != 0)
			h = (h + 1) & (ncap - 1);
		nt[h] = s->table[i];
	}
	free(s->table);
	s->table = nt;
	s->cap = ncap;
	return REC_OK;
}

rec_status rec_symbolizer_lookup(rec_symbolizer *s, uintptr_t entry, rec_symbol *out)
{
	if (s == NULL || out == NULL)
		return REC_ERR_INVALID_ARG;
	uintptr_t pc = REC_STACK_PC(entry);
	memset(out, 0, sizeof(*out));
	out->function = "";
	out->module_path = "";
	out->build_id = "";
	out->module_offset = pc;
	if (pc == 0)
		return REC_OK;
	size_t h = (size_t)(entry * 0x9E3779B97F4A7C15ull) & (s->cap - 1);
	while (s->cap && s->table[h].key != 0) {
		if (s->table[h].key == entry) {
			*out = s->table[h].sym;
			return REC_OK;
		}
		h = (h + 1) & (s->cap - 1);
	}

	/* Resolve at the address inside the instruction that was executing:
	 * pc - 1 for a return address. */
	uintptr_t at = (entry & REC_STACK_PC_EXACT) ? pc : pc - 1;
	rec_symbol sym = *out;
	int nomem = 0;
	module *m = find_module(s, at, &nomem);
	if (nomem)
		return REC_ERR_NOMEM;
	if (m != NULL) {
		sym.module_path = m->path;
		sym.build_id = m->build_id;
		sym.module_base = m->base;
		sym.module_offset = pc - m->base;
		sym.module_index = (uint32_t)(m - s->mods) + 1;
	}
	Dl_info di;
	const char *fname = NULL;
	uintptr_t fstart = 0;
	if (dladdr((void *)at, &di) != 0 && di.dli_sname != NULL && di.dli_saddr != NULL &&
	    (uintptr_t)di.dli_saddr <= at) {
		fname = di.dli_sname;
		fstart = (uintptr_t)di.dli_saddr;
	} else if (m != NULL) {
		uint64_t start = 0;
		fname = symtab_lookup(m, at - m->base, &start);
		fstart = m->base + start;
	}
	if (fname != NULL) {
		char *copy = sym_strdup(s, fname);
		if (copy == NULL)
			return REC_ERR_NOMEM;
		sym.function = copy;
		sym.function_offset = pc - fstart;
	}

	if ((s->count + 1) * 4 > s->cap * 3 && grow_table(s) != REC_OK) {
		*out = sym; /* answer without caching */
		return REC_OK;
	}
	h = (size_t)(entry * 0x9E3779B97F4A7C15ull) & (s->cap - 1);
	while (s->table[h].key != 0)
		h = (h + 1) & (s->cap - 1);
	s->table[h].key = entry;
	s->table[h].sym = sym;
	s->count++;
	*out = sym;
	return REC_OK;
}
