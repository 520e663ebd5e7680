/* SPDX-License-Identifier: MIT */
/*
 * stack_symbolizer.c - the symbolizer the recorder's background thread uses
 * (rec_symbolizer_*: loaded modules from dl_iterate_phdr, their .symtab read
 * from the file on first need, a cache of resolved entries) and the modules'
 * GNU build-ids (rec_module_build_id).  Not async-signal-safe: never called
 * from a signal handler.  Stack capture is beside it, in stack_capture.c;
 * the pc convention is in stack_internal.h.
 */
#include "common/common_internal.h"
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
#include <unistd.h>

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
	rec_dl_iterate_phdr(build_id_cb, &q);
	return q.len;
}

/* ---- symbolizer ------------------------------------------------------------- */

#define MAX_SEGS 16

typedef struct symtab_fn {
	uint64_t value, size; /* link-time address (module offset for PIE/DSO) */
	uint32_t name;        /* offset in the module's strtab copy */
	uint32_t type;        /* STT_FUNC or STT_OBJECT (data: rec_symbolizer_data) */
} symtab_fn;

typedef struct module {
	uintptr_t base;
	char *path;
	char *build_id; /* heap, lowercase hex or "" */
	char bid[2 * 64 + 1]; /* the build id found by scan_cb, copied after the walk */
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

struct rec_symbolizer {
	module *mods;
	size_t nmods, capmods;
	sym_entry *table;
	size_t cap, count; /* cap: power of two */
	rec_arena strs;
	char exe_path[4096];
};

static char *sym_strdup(rec_symbolizer *s, const char *str)
{
	return rec_arena_strndup(&s->strs, str, strlen(str));
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
	rec_arena_free(&s->strs);
	free(s);
}

/* The walk of the loaded modules (scan_cb) allocates nothing: it runs
 * under the loader's lock and g_dl_lock (thread.c), which a program thread
 * may wait for while it holds its allocator's locks (a lock name looked up
 * from inside jemalloc, lock_names.c), so a malloc there could wait for
 * that thread.  A new module's path points at the loader's and its build
 * id is in the entry: module_copy_new() copies them after the walk; a full
 * table stops the walk (full), grown after it, and the walk goes again. */
typedef struct scan_ctx {
	rec_symbolizer *s;
	int full;
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
		c->full = 1;
		return 1;
	}
	module *m = &s->mods[s->nmods];
	memset(m, 0, sizeof(*m));
	m->base = base;
	m->path = (char *)name; /* the loader's (or exe_path): copied after the walk */
	for (int i = 0; i < info->dlpi_phnum && m->nsegs < MAX_SEGS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		m->seg_lo[m->nsegs] = base + ph->p_vaddr;
		m->seg_hi[m->nsegs] = base + ph->p_vaddr + ph->p_memsz;
		m->nsegs++;
	}
	m->bid[0] = '\0';
	phdr_build_id(info, m->bid, sizeof(m->bid));
	s->nmods++;
	return 0;
}

/* After a walk: the modules from index from on get their own copies of
 * path and build id; false (those modules forgotten) when out of memory. */
static bool module_copy_new(rec_symbolizer *s, size_t from)
{
	for (size_t i = from; i < s->nmods; i++) {
		module *m = &s->mods[i];
		m->path = strdup(m->path);
		m->build_id = m->path ? strdup(m->bid) : NULL;
		if (m->build_id == NULL) {
			free(m->path);
			s->nmods = i;
			return false;
		}
	}
	return true;
}

/* Walk the loaded modules, adding the new ones; false when out of memory. */
static bool modules_scan(rec_symbolizer *s)
{
	scan_ctx c = { s, 0 };
	do {
		size_t from = s->nmods;
		c.full = 0;
		rec_dl_iterate_phdr(scan_cb, &c);
		if (!module_copy_new(s, from))
			return false;
		if (c.full) {
			size_t nc = s->capmods ? 2 * s->capmods : 16;
			module *nm = realloc(s->mods, nc * sizeof(*nm));
			if (nm == NULL)
				return false;
			s->mods = nm;
			s->capmods = nc;
		}
	} while (c.full);
	return true;
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
		if (pass == 0 && !modules_scan(s)) { /* maybe loaded since the last scan */
			*nomem = 1;
			return NULL;
		}
	}
	return NULL;
}

static int fn_cmp(const void *a, const void *b)
{
	const symtab_fn *x = a, *y = b;
	return x->value < y->value ? -1 : x->value > y->value;
}

static bool sym_wanted(const ElfW(Sym) *sym, const ElfW(Shdr) *strsec)
{
	unsigned type = sym->st_info & 0xf;
	return (type == STT_FUNC || type == STT_OBJECT) && sym->st_value != 0 &&
	       sym->st_shndx != SHN_UNDEF && sym->st_name < strsec->sh_size;
}

/* Load the function and data-object symbols of the module's file (.symtab,
 * else .dynsym). */
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
		if (sym_wanted(&syms[i], strsec))
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
		if (sym_wanted(&syms[i], strsec)) {
			symtab_fn *fn = &m->fns[m->nfns++];
			fn->value = syms[i].st_value;
			fn->size = syms[i].st_size;
			fn->name = syms[i].st_name;
			fn->type = syms[i].st_info & 0xf;
		}
	qsort(m->fns, m->nfns, sizeof(*m->fns), fn_cmp);
	m->symtab_state = 1;
out:
	munmap((void *)(uintptr_t)f, fsize);
}

/* Symbol of type (STT_FUNC, STT_OBJECT) containing link-time address a in
 * m's symtab, or NULL. */
static const char *symtab_lookup(module *m, uint64_t a, unsigned type, uint64_t *start)
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
		if (fn->type == type && a >= fn->value && a - fn->value < fn->size) {
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
		fname = symtab_lookup(m, at - m->base, STT_FUNC, &start);
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

const char *rec_symbolizer_data(rec_symbolizer *s, uintptr_t addr, uint64_t *offset)
{
	int nomem = 0;
	module *m = s != NULL ? find_module(s, addr, &nomem) : NULL;
	if (m == NULL)
		return NULL;
	uint64_t start = 0;
	const char *name = symtab_lookup(m, addr - m->base, STT_OBJECT, &start);
	if (name != NULL && offset != NULL)
		*offset = addr - m->base - start;
	return name;
}
