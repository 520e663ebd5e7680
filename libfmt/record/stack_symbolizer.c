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

typedef struct module {
	uintptr_t base;
	char *path;
	char *build_id; /* heap, lowercase hex or "" */
	char bid[2 * 64 + 1]; /* the build id found by scan_cb, copied after the walk */
	uint32_t nsegs;
	uintptr_t seg_lo[MAX_SEGS], seg_hi[MAX_SEGS];
	/* The module in s->syms (libdwfl), opened on first need. */
	int sym_state; /* 0 not tried, 1 open, -1 unavailable */
	uint32_t sym_handle;
	int system; /* a library in the system's directories (not the executable) */
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
	rec_symbols *syms; /* names, lines, inline frames (stack_symbol_dwarf.c) */
	int syms_failed;
	int names_off;     /* REC_OPTIONS symbolize=off: module and offset only */
	int lines_off;     /* names only, no DWARF (rec_symbolizer_set_lines) */
	rec_sources_mode sources; /* whose sources rec_symbolizer_source() reads */
	char exe_path[4096];
};

static char *sym_strdup(rec_symbolizer *s, const char *str)
{
	return rec_arena_strndup(&s->strs, str, strlen(str));
}

/* The source of a resolved address (file, line, inline frames) into out, the
 * strings copied into the symbolizer's arena.  REC_ERR_NOMEM. */
static rec_status keep_source(rec_symbolizer *s, const rec_symbolized *d, rec_symbol *out)
{
	if (d->file[0] && !(out->file = sym_strdup(s, d->file)))
		return REC_ERR_NOMEM;
	out->line = d->line;
	if (d->inline_count) {
		rec_inline_frame *inl = rec_arena_alloc(&s->strs, d->inline_count * sizeof *inl);
		if (!inl)
			return REC_ERR_NOMEM;
		for (uint32_t i = 0; i < d->inline_count; i++) {
			inl[i].function = sym_strdup(s, d->inlined[i].function);
			inl[i].file = sym_strdup(s, d->inlined[i].file);
			inl[i].line = d->inlined[i].line;
			if (!inl[i].function || !inl[i].file)
				return REC_ERR_NOMEM;
		}
		out->inlined = inl;
		out->inline_count = d->inline_count;
	}
	return REC_OK;
}

rec_status rec_symbolizer_open(rec_symbolizer **out)
{
	if (out == NULL)
		return REC_ERR_INVALID_ARG;
	*out = NULL;
	rec_symbolizer *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return REC_ERR_NOMEM;
	/* The cache table, libdwfl and the executable's path come with the
	 * first lookup (the background thread's), not here: a recorder opens
	 * in the program's start-up. */
	*out = s;
	return REC_OK;
}

void rec_symbolizer_set_names(rec_symbolizer *s, int on)
{
	if (s)
		s->names_off = !on;
}

void rec_symbolizer_set_lines(rec_symbolizer *s, int on)
{
	if (s)
		s->lines_off = !on;
}

void rec_symbolizer_set_sources(rec_symbolizer *s, rec_sources_mode mode)
{
	if (s)
		s->sources = mode;
}

rec_sources_mode rec_symbolizer_sources(const rec_symbolizer *s)
{
	return s ? s->sources : REC_SOURCES_NONE;
}

int rec_symbolizer_system_path(const char *path)
{
	static const char *const dirs[] = { "/lib/",     "/lib32/",     "/lib64/",     "/libx32/",
					    "/usr/lib/", "/usr/lib32/", "/usr/lib64/", "/usr/libx32/" };
	if (path == NULL)
		return 0;
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		if (strncmp(path, dirs[i], strlen(dirs[i])) == 0)
			return 1;
	return 0;
}

/* Whether rec_symbolizer_source() reads m's DWARF. */
static int module_sources(const rec_symbolizer *s, const module *m)
{
	return s->sources == REC_SOURCES_ALL || (s->sources == REC_SOURCES_PROGRAM && !m->system);
}

int rec_symbolizer_release(rec_symbolizer *s)
{
	if (s == NULL || s->syms == NULL)
		return 0;
	const int held = rec_symbols_dwarf_held_(s->syms);
	rec_symbols_close(s->syms);
	s->syms = NULL;
	for (size_t i = 0; i < s->nmods; i++)
		if (s->mods[i].sym_state == 1)
			s->mods[i].sym_state = 0; /* opened again on need */
	return held;
}

void rec_symbolizer_close(rec_symbolizer *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nmods; i++) {
		free(s->mods[i].path);
		free(s->mods[i].build_id);
	}
	rec_symbols_close(s->syms);
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
	int index; /* of the module in the walk: the first is the program */
} scan_ctx;

static int scan_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	scan_ctx *c = arg;
	rec_symbolizer *s = c->s;
	uintptr_t base = (uintptr_t)info->dlpi_addr;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	/* The main program has an empty name (and so has the vdso on some
	 * systems: the vdso has no PT_INTERP but also no file; keep its name).
	 * A static executable has no PT_INTERP either: it is the first module. */
	bool is_exe = c->index++ == 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_INTERP)
			is_exe = true;
	const bool program = name[0] == '\0' && is_exe; /* libc has a PT_INTERP too */
	if (program) {
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
	m->system = !program && rec_symbolizer_system_path(name);
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
	scan_ctx c = { s, 0, 0 };
	do {
		size_t from = s->nmods;
		c.full = 0;
		c.index = 0;
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

/* The module's handle in s->syms (opened on first need), 0 if none. */
static uint32_t module_syms(rec_symbolizer *s, module *m)
{
	if (m->sym_state == 0) {
		m->sym_state = -1;
		if (!s->syms && !s->syms_failed && rec_symbols_open(&s->syms, NULL, 0) != REC_OK)
			s->syms_failed = 1;
		if (s->syms && m->path[0] == '/' &&
		    rec_symbols_module(s->syms, m->path, m->build_id, m->base, &m->sym_handle) == REC_OK)
			m->sym_state = 1;
	}
	return m->sym_state == 1 ? m->sym_handle : 0;
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

/* The exported symbol containing at from dladdr (the loader's dynamic
 * symbols: no file is read), into sym; false if none (or no memory). */
static bool dladdr_name(rec_symbolizer *s, uintptr_t at, uintptr_t pc, rec_symbol *sym)
{
	Dl_info di;
	if (dladdr((void *)at, &di) == 0 || di.dli_sname == NULL || di.dli_saddr == NULL ||
	    (uintptr_t)di.dli_saddr > at)
		return false;
	char *copy = sym_strdup(s, di.dli_sname);
	if (copy == NULL)
		return false;
	sym->function = copy;
	sym->function_offset = pc - (uintptr_t)di.dli_saddr;
	return true;
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
	out->file = "";
	out->module_offset = pc;
	if (entry & REC_STACK_PC_EXACT)
		out->flags |= REC_FRAME_PC_EXACT;
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
	if (m != NULL && s->names_off) {
		sym.flags |= REC_FRAME_UNSYMBOLIZED;
	} else if (m != NULL && s->lines_off && dladdr_name(s, at, pc, &sym)) {
		/* an exported name, from the loader's tables: no file read */
	} else if (m != NULL && s->lines_off && module_syms(s, m)) {
		uint64_t foff = 0;
		const char *fn = rec_symbols_function(s->syms, m->sym_handle, pc - m->base,
						      (entry & REC_STACK_PC_EXACT) != 0, &foff);
		if (fn && !(sym.function = sym_strdup(s, fn)))
			return REC_ERR_NOMEM;
		sym.function_offset = fn ? foff : 0;
	} else if (m != NULL && module_syms(s, m)) {
		rec_symbolized d;
		if (rec_symbols_resolve(s->syms, m->sym_handle, pc - m->base,
					(entry & REC_STACK_PC_EXACT) != 0, &d) == REC_OK) {
			if (d.function[0] && !(sym.function = sym_strdup(s, d.function)))
				return REC_ERR_NOMEM;
			sym.function_offset = d.function_offset;
			if (keep_source(s, &d, &sym) != REC_OK)
				return REC_ERR_NOMEM;
		}
	}
	Dl_info di;
	if (!sym.function[0] && !s->names_off && dladdr((void *)at, &di) != 0 &&
	    di.dli_sname != NULL && di.dli_saddr != NULL && (uintptr_t)di.dli_saddr <= at) {
		/* A module libdwfl could not open (deleted file, the vdso). */
		char *copy = sym_strdup(s, di.dli_sname);
		if (copy == NULL)
			return REC_ERR_NOMEM;
		sym.function = copy;
		sym.function_offset = pc - (uintptr_t)di.dli_saddr;
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
	if (m == NULL || !module_syms(s, m))
		return NULL;
	return rec_symbols_data(s->syms, m->sym_handle, addr - m->base, offset);
}

const char *rec_symbolizer_name_now(rec_symbolizer *s, uintptr_t addr, int object, int exact,
				    uint64_t *offset, int *ready)
{
	*ready = 0;
	if (s == NULL || s->names_off)
		return NULL;
	for (size_t i = 0; i < s->nmods; i++) { /* the modules known: no walk */
		module *m = &s->mods[i];
		for (uint32_t k = 0; k < m->nsegs; k++) {
			if (addr < m->seg_lo[k] || addr >= m->seg_hi[k])
				continue;
			if (m->sym_state != 1)
				return NULL;
			int built = 0;
			const char *n = rec_symbols_built_name_(s->syms, m->sym_handle, addr - m->base,
								object, exact, offset, &built);
			*ready = built;
			return n;
		}
	}
	*ready = object; /* data outside every module known: the heap or a stack */
	return NULL;
}

int rec_symbolizer_source_cheap(rec_symbolizer *s, uintptr_t entry)
{
	rec_symbol sym;
	if (s == NULL || rec_symbolizer_lookup(s, entry, &sym) != REC_OK || s->names_off ||
	    !s->lines_off || !sym.module_index)
		return 1;
	module *m = &s->mods[sym.module_index - 1];
	return !module_sources(s, m) || m->sym_state == -1 ||
	       (m->sym_state == 1 && rec_symbols_dwarf_read_(s->syms, m->sym_handle));
}

rec_status rec_symbolizer_source(rec_symbolizer *s, uintptr_t entry, rec_symbol *out)
{
	if (s == NULL || out == NULL)
		return REC_ERR_INVALID_ARG;
	rec_status st = rec_symbolizer_lookup(s, entry, out);
	if (st != REC_OK || s->names_off || !s->lines_off || !out->module_index)
		return st; /* with lines on, lookup resolved the source already */
	module *m = &s->mods[out->module_index - 1];
	if (!module_sources(s, m) || !module_syms(s, m))
		return REC_OK;
	uintptr_t pc = REC_STACK_PC(entry);
	rec_symbolized d;
	if (rec_symbols_resolve(s->syms, m->sym_handle, pc - m->base, (entry & REC_STACK_PC_EXACT) != 0,
				&d) != REC_OK)
		return REC_OK;
	return keep_source(s, &d, out);
}
