/* SPDX-License-Identifier: MIT */
/*
 * stack_symbol_dwarf.c - rec_symbols (rec/symbols.h): the name, source file,
 * line and inline chain of an address in an ELF module, from elfutils'
 * libdwfl: symbols from .symtab or .dynsym (of the module or of its
 * separate debug file), DWARF line tables and inlined-subroutine scopes.
 * Debug files are found by libdwfl's standard lookup (build-id under each
 * debug directory's .build-id/, .gnu_debuglink beside the module and under
 * each debug directory); a module whose file is gone is opened by its
 * build-id in the debug directories.  No DWARF is parsed here by hand.
 * Used by the recorder's background thread (stack_symbolizer.c) and by
 * rec-symbolize; never by an emitting thread or a signal handler.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec/symbols.h"
#include "common/common_internal.h" /* rec_array_grow() */
#include "record/stack_internal.h"

#define MAX_INLINE 64 /* deeper inline chains are cut (never seen in practice) */

/* One symbol of a module's index: its absolute address range. */
typedef struct sym_ent {
	GElf_Addr start, size;
	const char *name; /* libdwfl's, valid while the Dwfl lives, or in the
			   * module's names (a symbol version cut off) */
	uint8_t type;     /* STT_FUNC (and IFUNC), STT_OBJECT (and TLS, COMMON) */
	uint8_t rank;     /* 0 global, 1 weak, 2 local: a smaller one wins at one address */
	uint8_t versioned; /* the name had "@VERSION" or "@@VERSION" */
} sym_ent;

typedef struct sym_module {
	Dwfl_Module *mod; /* NULL: nothing resolves */
	/* The module's function and data symbols sorted by address, built on
	 * first need from libdwfl's symbol table (dwfl_module_getsym_info;
	 * dwfl_module_addrinfo scans every symbol per call: 2 ms for libc). */
	sym_ent *syms;
	size_t nsyms;
	int syms_state; /* 0 not built, 1 built, -1 failed */
	GElf_Addr bias;  /* the module's load bias, once syms_state is 1 */
	int dwarf_read;  /* rec_symbols_resolve() ran on it: its DWARF is read */
	char *names;     /* the versioned symbols' names without the version */
} sym_module;

struct rec_symbols {
	Dwfl *dwfl;
	Dwfl_Callbacks cb;
	char *debug_path;  /* libdwfl's debuginfo_path: ":.debug:DIR:DIR" */
	char **dirs;       /* the debug directories, for opening by build-id */
	size_t ndirs;
	sym_module *mods;
	size_t nmods, capmods;
	unsigned seq;      /* module names */
	rec_inline_frame chain[MAX_INLINE + 1];
};

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

static bool file_has_build_id(const char *path, const char *build_id);

/* The modules are reported with their files: no lookup of an ELF file. */
static int no_find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		       char **file_name, Elf **elfp)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name, (void)elfp;
	return -1;
}

/* A module's separate debug file, on this machine only: by build-id under
 * the debug directories (libdwfl's dwfl_build_id_find_debuginfo), else by
 * .gnu_debuglink beside the module, in its .debug/ directory and under each
 * debug directory, taken only when its build-id is the module's.  Never
 * dwfl_standard_find_debuginfo: when that finds nothing it asks debuginfod
 * (libdebuginfod's debuginfod_begin initialises libcurl and OpenSSL), from
 * inside whatever the program was doing (a lock name looked up while
 * OpenSSL initialised itself deadlocked redis-server) and over the network. */
static int local_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
				Dwarf_Addr base, const char *file_name, const char *debuglink_file,
				GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
					      debuglink_file, debuglink_crc, debuginfo_file_name);
	if (fd >= 0)
		return fd;
	const rec_symbols *s = userdata ? *userdata : NULL;
	if (!s || !debuglink_file || !*debuglink_file || strchr(debuglink_file, '/') || !file_name)
		return -1;
	const unsigned char *bits = NULL;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n <= 0 || n > 64)
		return -1; /* no build-id to check a candidate against */
	static const char dig[] = "0123456789abcdef";
	char hex[2 * 64 + 1];
	for (size_t i = 0; i < (size_t)n; i++) {
		hex[2 * i] = dig[bits[i] >> 4];
		hex[2 * i + 1] = dig[bits[i] & 15];
	}
	hex[2 * (size_t)n] = 0;
	const char *slash = strrchr(file_name, '/');
	int dl = slash ? (int)(slash - file_name) : 0;
	char cand[4096];
	for (size_t k = 0; k < 2 + 2 * s->ndirs; k++) {
		int w;
		if (k == 0)
			w = snprintf(cand, sizeof cand, "%.*s/%s", dl, file_name, debuglink_file);
		else if (k == 1)
			w = snprintf(cand, sizeof cand, "%.*s/.debug/%s", dl, file_name, debuglink_file);
		else if (k % 2 == 0)
			w = snprintf(cand, sizeof cand, "%s%.*s/%s", s->dirs[(k - 2) / 2], dl, file_name,
				     debuglink_file);
		else
			w = snprintf(cand, sizeof cand, "%s/%s", s->dirs[(k - 2) / 2], debuglink_file);
		if (w <= 0 || (size_t)w >= sizeof cand || strcmp(cand, file_name) == 0 ||
		    !file_has_build_id(cand, hex))
			continue;
		fd = open(cand, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && debuginfo_file_name) {
			size_t len = strlen(cand) + 1;
			*debuginfo_file_name = malloc(len);
			if (*debuginfo_file_name)
				memcpy(*debuginfo_file_name, cand, len);
		}
		if (fd >= 0)
			return fd;
	}
	return -1;
}

rec_status rec_symbols_open(rec_symbols **out, const char *const *debug_dirs, size_t ndirs)
{
	static const char *const deflt[] = { "/usr/lib/debug" };
	if (!out)
		return REC_ERR_INVALID_ARG;
	*out = NULL;
	if (!debug_dirs || !ndirs) {
		debug_dirs = deflt;
		ndirs = 1;
	}
	rec_symbols *s = calloc(1, sizeof *s);
	if (!s)
		return REC_ERR_NOMEM;
	size_t cap = sizeof ":.debug", len = 0;
	for (size_t i = 0; i < ndirs; i++)
		cap += strlen(debug_dirs[i]) + 1 + PATH_MAX;
	s->debug_path = malloc(cap);
	s->dirs = calloc(ndirs, sizeof *s->dirs);
	if (!s->debug_path || !s->dirs) {
		rec_symbols_close(s);
		return REC_ERR_NOMEM;
	}
	/* "" (the module's own directory), ".debug" below it, then the dirs. */
	len = (size_t)snprintf(s->debug_path, cap, ":.debug");
	for (size_t i = 0; i < ndirs; i++) {
		/* libdwfl takes a relative directory as relative to the module's */
		char abs[PATH_MAX];
		const char *d = debug_dirs[i][0] != '/' && realpath(debug_dirs[i], abs) ? abs
											: debug_dirs[i];
		if (strchr(d, ':'))
			continue; /* cannot be said in debuginfo_path */
		int k = snprintf(s->debug_path + len, cap - len, ":%s", d);
		if (k < 0 || (size_t)k >= cap - len)
			continue;
		len += (size_t)k;
		if (!(s->dirs[s->ndirs++] = dup_str(d))) {
			rec_symbols_close(s);
			return REC_ERR_NOMEM;
		}
	}
	s->cb.find_elf = no_find_elf;
	s->cb.find_debuginfo = local_find_debuginfo;
	s->cb.section_address = dwfl_offline_section_address;
	s->cb.debuginfo_path = &s->debug_path;
	s->dwfl = dwfl_begin(&s->cb);
	if (!s->dwfl) {
		rec_symbols_close(s);
		return REC_ERR_NOMEM;
	}
	*out = s;
	return REC_OK;
}

void rec_symbols_close(rec_symbols *s)
{
	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	for (size_t i = 0; i < s->ndirs; i++)
		free(s->dirs[i]);
	free(s->dirs);
	free(s->debug_path);
	for (size_t i = 0; i < s->nmods; i++) {
		free(s->mods[i].syms);
		free(s->mods[i].names);
	}
	free(s->mods);
	free(s);
}

/* Lowercase hex of the file's GNU build-id into hex (cap >= 129); 0 if none. */
static size_t file_build_id(const char *path, char *hex, size_t cap)
{
	static const char dig[] = "0123456789abcdef";
	size_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e) {
		const void *p = NULL;
		ssize_t len = dwelf_elf_gnu_build_id(e, &p);
		if (len > 0 && (size_t)len * 2 + 1 <= cap) {
			for (ssize_t i = 0; i < len; i++) {
				hex[2 * i] = dig[((const uint8_t *)p)[i] >> 4];
				hex[2 * i + 1] = dig[((const uint8_t *)p)[i] & 15];
			}
			n = (size_t)len * 2;
		}
		elf_end(e);
	}
	close(fd);
	hex[n] = 0;
	return n;
}

static bool file_has_build_id(const char *path, const char *build_id)
{
	char hex[2 * 64 + 1];
	size_t n = file_build_id(path, hex, sizeof hex);
	return build_id[0] ? n > 0 && strcmp(hex, build_id) == 0 : access(path, R_OK) == 0;
}

/* A file with the build-id in the debug directories, into buf; false if none. */
static bool find_by_build_id(const rec_symbols *s, const char *build_id, char *buf, size_t cap)
{
	size_t n = strlen(build_id);
	if (n < 4 || n > 128)
		return false;
	for (size_t i = 0; i < s->ndirs; i++)
		for (int dbg = 1; dbg >= 0; dbg--) {
			int k = snprintf(buf, cap, "%s/.build-id/%.2s/%s%s", s->dirs[i], build_id,
					 build_id + 2, dbg ? ".debug" : "");
			if (k > 0 && (size_t)k < cap && file_has_build_id(buf, build_id))
				return true;
		}
	return false;
}

rec_status rec_symbols_module(rec_symbols *s, const char *path, const char *build_id,
			      uint64_t base, uint32_t *handle)
{
	if (!s || !handle)
		return REC_ERR_INVALID_ARG;
	*handle = 0;
	if (!path)
		path = "";
	if (!build_id)
		build_id = "";
	if (!rec_array_grow((void **)&s->mods, &s->capmods, s->nmods + 1, sizeof *s->mods, 16))
		return REC_ERR_NOMEM;
	char found[4096];
	const char *file = NULL;
	if (path[0] == '/' && file_has_build_id(path, build_id))
		file = path;
	else if (build_id[0] && find_by_build_id(s, build_id, found, sizeof found))
		file = found;
	sym_module *m = &s->mods[s->nmods];
	memset(m, 0, sizeof *m);
	if (file) {
		char name[32];
		snprintf(name, sizeof name, "m%u", ++s->seq);
		dwfl_report_begin_add(s->dwfl);
		m->mod = dwfl_report_elf(s->dwfl, name, file, -1, (GElf_Addr)base, true);
		dwfl_report_end(s->dwfl, NULL, NULL);
		void **ud = NULL;
		if (m->mod && dwfl_module_info(m->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL) && ud)
			*ud = s; /* for local_find_debuginfo */
	}
	s->nmods++;
	*handle = (uint32_t)s->nmods;
	return m->mod ? REC_OK : REC_ERR_NOT_FOUND;
}

static sym_module *module_of(const rec_symbols *s, uint32_t handle)
{
	return handle >= 1 && handle <= s->nmods && s->mods[handle - 1].mod ? &s->mods[handle - 1]
									     : NULL;
}

static int sym_cmp(const void *a, const void *b)
{
	const sym_ent *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->versioned > y->versioned) - (x->versioned < y->versioned);
}

/* A symbol table's name of a versioned symbol ("__libc_start_main@@GLIBC_2.34"
 * in libc's debug file: .dynsym keeps the version apart) is the name without
 * the version, as the dynamic linker, dladdr() and the program's source spell
 * it: a frame has one name whichever table named it. */
static size_t version_at(const char *name)
{
	const char *at = strchr(name, '@');
	return at != NULL && at != name ? (size_t)(at - name) : 0;
}

/* Build m's sorted symbol index (once). */
static bool module_symbols(sym_module *m)
{
	if (m->syms_state)
		return m->syms_state > 0;
	m->syms_state = -1;
	Dwarf_Addr bias = 0;
	if (dwfl_module_getelf(m->mod, &bias) == NULL)
		return false;
	m->bias = bias;
	int n = dwfl_module_getsymtab(m->mod);
	if (n <= 0)
		return false;
	size_t names_len = 0;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr = 0;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, NULL, NULL, NULL);
		size_t v = name ? version_at(name) : 0;
		names_len += v ? v + 1 : 0;
	}
	m->syms = malloc((size_t)n * sizeof *m->syms);
	m->names = names_len ? malloc(names_len) : NULL;
	if (!m->syms || (names_len && !m->names)) {
		free(m->syms);
		free(m->names);
		m->syms = NULL;
		m->names = NULL;
		return false;
	}
	size_t names_used = 0;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr = 0;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, NULL, NULL, NULL);
		if (!name || !*name || sym.st_shndx == SHN_UNDEF || addr == 0)
			continue;
		size_t v = version_at(name);
		if (v && names_used + v + 1 <= names_len) {
			memcpy(m->names + names_used, name, v);
			m->names[names_used + v] = '\0';
			name = m->names + names_used;
			names_used += v + 1;
		}
		int t = GELF_ST_TYPE(sym.st_info), b = GELF_ST_BIND(sym.st_info);
		uint8_t type;
		if (t == STT_FUNC || t == STT_GNU_IFUNC)
			type = STT_FUNC;
		else if (t == STT_OBJECT || t == STT_TLS || t == STT_COMMON)
			type = STT_OBJECT;
		else
			continue;
		sym_ent *e = &m->syms[m->nsyms++];
		e->start = addr;
		e->size = sym.st_size;
		e->name = name;
		e->type = type;
		e->rank = b == STB_GLOBAL ? 0 : b == STB_WEAK ? 1 : 2;
		e->versioned = v != 0;
	}
	qsort(m->syms, m->nsyms, sizeof *m->syms, sym_cmp);
	m->syms_state = 1;
	return true;
}

/* The symbol of type containing address a (absolute) with the highest
 * start, global before weak before local at one start; NULL if none.
 * A symbol without a size contains a only when it is the nearest below
 * and no sized one does. */
static const sym_ent *symbol_at(sym_module *m, GElf_Addr a, uint8_t type)
{
	if (!module_symbols(m) || !m->nsyms)
		return NULL;
	size_t lo = 0, hi = m->nsyms; /* first entry with start > a */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->syms[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	const sym_ent *unsized = NULL;
	for (size_t i = lo, k = 0; i-- > 0 && k < 64; k++) {
		const sym_ent *e = &m->syms[i];
		if (e->type != type)
			continue;
		if (e->size && a - e->start < e->size) {
			/* the first of this start in rank order */
			while (i > 0 && m->syms[i - 1].start == e->start && m->syms[i - 1].type == type &&
			       m->syms[i - 1].size)
				e = &m->syms[--i];
			return e;
		}
		if (!e->size && !unsized)
			unsized = e;
	}
	return type == STT_FUNC ? unsized : NULL;
}

/* A DIE's name as addr2line prints it: the linkage name if there is one,
 * else DW_AT_name, both through abstract origins. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	return n ? n : "";
}

static bool is_function(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

/* A function of librec's public headers (<rec/...h>, all named rec_*)
 * inlined into a program: its declaration's file is .../rec/NAME.h. */
static bool librec_api(Dwarf_Die *die, const char *name)
{
	if (strncmp(name, "rec_", 4) != 0)
		return false;
	const char *f = dwarf_decl_file(die);
	if (!f)
		return false;
	const char *slash = strrchr(f, '/');
	size_t n = strlen(f);
	return slash && slash - f >= 4 && memcmp(slash - 4, "/rec", 4) == 0 && n > 2 &&
	       strcmp(f + n - 2, ".h") == 0;
}

static bool is_container(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_module || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
}

static bool is_scope(int tag)
{
	return is_function(tag) || tag == DW_TAG_lexical_block || tag == DW_TAG_catch_block ||
	       tag == DW_TAG_try_block || tag == DW_TAG_with_stmt;
}

#define MAX_SCOPES 256

/* The child of parent (looking through namespaces and classes, a few
 * levels) that is a scope containing pc, into *out; the containers passed
 * are not scopes and are left out.  libdw's own DIE walk (dwarf_child,
 * dwarf_siblingof, dwarf_haspc), so only the siblings on the way are
 * visited, where dwarf_getscopes_die walks the whole unit. */
static bool scope_child(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out, int level)
{
	Dwarf_Die c;
	if (dwarf_child(parent, &c) != 0)
		return false;
	do {
		int tag = dwarf_tag(&c);
		if (is_scope(tag) && dwarf_haspc(&c, pc) > 0) {
			*out = c;
			return true;
		}
		if (is_container(tag) && level < 4 && dwarf_haschildren(&c) > 0 &&
		    scope_child(&c, pc, out, level + 1))
			return true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* The nesting of scopes containing pc (unit-relative) in the unit, innermost
 * first, into scopes (at most MAX_SCOPES); returns how many. */
static int pc_scopes(Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die *scopes)
{
	Dwarf_Die path[MAX_SCOPES];
	int d = 0;
	Dwarf_Die cur = *cudie;
	while (d < MAX_SCOPES && scope_child(&cur, pc, &path[d], 0)) {
		cur = path[d];
		d++;
	}
	for (int i = 0; i < d; i++)
		scopes[i] = path[d - 1 - i];
	return d;
}

/* The function chain at addr, innermost first, into s->chain: entry 0 the
 * innermost (inlined or not) function with the line of addr, each next one
 * the function it was inlined into with the line of that call.  Returns
 * the number of entries (0 without DWARF for addr); *low_pc the outermost
 * function's entry point (0 if unknown). */
static uint32_t inline_chain(rec_symbols *s, Dwfl_Module *mod, Dwarf_Addr addr, const char *file,
			     uint32_t line, Dwarf_Addr *low_pc)
{
	Dwarf_Addr bias = 0;
	*low_pc = 0;
	Dwarf_Die *cudie = dwfl_module_addrdie(mod, addr, &bias);
	if (!cudie)
		return 0;
	Dwarf_Die scopes[MAX_SCOPES];
	int n = pc_scopes(cudie, addr - bias, scopes);
	if (n <= 0)
		return 0;
	Dwarf_Files *files = NULL;
	if (dwarf_getsrcfiles(cudie, &files, NULL) != 0)
		files = NULL;
	uint32_t k = 0;
	int i = 0;
	bool api[MAX_INLINE + 1];
	while (i < n && !is_function(dwarf_tag(&scopes[i])))
		i++;
	if (i < n) {
		s->chain[k].function = die_name(&scopes[i]);
		s->chain[k].file = file;
		s->chain[k].line = line;
		api[k] = librec_api(&scopes[i], s->chain[k].function);
		k++;
	}
	for (; i < n && k <= MAX_INLINE; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		int j = i + 1;
		while (j < n && !is_function(dwarf_tag(&scopes[j])))
			j++;
		if (j >= n)
			break;
		Dwarf_Attribute a;
		Dwarf_Word v;
		const char *cf = NULL;
		uint32_t cl = 0;
		if (files && dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &v) == 0)
			cf = dwarf_filesrc(files, v, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &v) == 0)
			cl = v > UINT32_MAX ? 0 : (uint32_t)v;
		s->chain[k].function = die_name(&scopes[j]);
		s->chain[k].file = cf ? cf : "";
		s->chain[k].line = cl;
		api[k] = librec_api(&scopes[j], s->chain[k].function);
		k++;
		if (dwarf_tag(&scopes[j]) == DW_TAG_subprogram) {
			Dwarf_Addr lo;
			if (dwarf_lowpc(&scopes[j], &lo) == 0)
				*low_pc = lo + bias;
		}
		i = j - 1;
	}
	if (k == 1 && dwarf_tag(&scopes[0]) == DW_TAG_subprogram) {
		Dwarf_Addr lo;
		if (dwarf_lowpc(&scopes[0], &lo) == 0)
			*low_pc = lo + bias;
	}
	/* librec's own inline functions at the leaf (rec_emit_begin of
	 * <rec/recorder.h> inlined into the program) are the recorder's frames,
	 * left out like its out-of-line ones: the stack starts at the
	 * program's call, with the line of that call. */
	uint32_t drop = 0;
	while (drop + 1 < k && api[drop])
		drop++;
	if (drop) {
		memmove(s->chain, s->chain + drop, (k - drop) * sizeof *s->chain);
		k -= drop;
	}
	return k;
}

rec_status rec_symbols_resolve(rec_symbols *s, uint32_t handle, uint64_t module_offset,
			       int exact, rec_symbolized *out)
{
	if (!s || !out)
		return REC_ERR_INVALID_ARG;
	memset(out, 0, sizeof *out);
	out->function = "";
	out->file = "";
	sym_module *sm = module_of(s, handle);
	if (!sm || (!exact && module_offset == 0))
		return REC_OK;
	Dwfl_Module *mod = sm->mod;
	Dwarf_Addr bias = 0;
	/* The module's bias is the base it was reported at. */
	if (dwfl_module_getelf(mod, &bias) == NULL)
		return REC_OK;
	Dwarf_Addr pc = bias + module_offset;
	Dwarf_Addr at = exact ? pc : pc - 1;

	const sym_ent *fn = symbol_at(sm, at, STT_FUNC);
	if (fn) {
		out->function = fn->name;
		out->function_offset = pc - fn->start;
	}
	const char *file = "";
	int line = 0;
	sm->dwarf_read = 1; /* libdwfl reads the DWARF at the first of these */
	Dwfl_Line *ln = dwfl_module_getsrc(mod, at);
	if (ln) {
		const char *f = dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL);
		if (f)
			file = f;
		if (line < 0)
			line = 0;
	}
	Dwarf_Addr low_pc = 0;
	uint32_t k = inline_chain(s, mod, at, file, (uint32_t)line, &low_pc);
	if (k == 0) {
		out->file = file;
		out->line = (uint32_t)line;
		return REC_OK;
	}
	/* chain[k - 1] is the function the code is in; the others were inlined
	 * into it. */
	out->file = s->chain[k - 1].file;
	out->line = s->chain[k - 1].line;
	out->inline_count = k - 1;
	out->inlined = s->chain;
	if (!out->function[0] && s->chain[k - 1].function[0] && low_pc && low_pc <= at) {
		/* No symbol (a stripped table): DWARF names the function. */
		out->function = s->chain[k - 1].function;
		out->function_offset = pc - low_pc;
	}
	return REC_OK;
}

int rec_symbols_dwarf_read_(rec_symbols *s, uint32_t handle)
{
	const sym_module *sm = s ? module_of(s, handle) : NULL;
	return sm == NULL || sm->mod == NULL || sm->dwarf_read;
}

int rec_symbols_dwarf_held_(const rec_symbols *s)
{
	for (size_t i = 0; s && i < s->nmods; i++)
		if (s->mods[i].mod && s->mods[i].dwarf_read)
			return 1;
	return 0;
}

const char *rec_symbols_function(rec_symbols *s, uint32_t handle, uint64_t module_offset,
				 int exact, uint64_t *function_offset)
{
	sym_module *sm = s ? module_of(s, handle) : NULL;
	Dwarf_Addr bias = 0;
	if (!sm || (!exact && module_offset == 0) || dwfl_module_getelf(sm->mod, &bias) == NULL)
		return NULL;
	Dwarf_Addr pc = bias + module_offset;
	const sym_ent *fn = symbol_at(sm, exact ? pc : pc - 1, STT_FUNC);
	if (!fn)
		return NULL;
	if (function_offset)
		*function_offset = pc - fn->start;
	return fn->name;
}

const char *rec_symbols_data(rec_symbols *s, uint32_t handle, uint64_t module_offset,
			     uint64_t *offset)
{
	sym_module *sm = s ? module_of(s, handle) : NULL;
	Dwarf_Addr bias = 0;
	if (!sm || dwfl_module_getelf(sm->mod, &bias) == NULL)
		return NULL;
	const sym_ent *e = symbol_at(sm, bias + module_offset, STT_OBJECT);
	if (!e)
		return NULL;
	if (offset)
		*offset = bias + module_offset - e->start;
	return e->name;
}

const char *rec_symbols_built_name_(const rec_symbols *s, uint32_t handle, uint64_t module_offset,
				    int object, int exact, uint64_t *offset, int *built)
{
	sym_module *sm = s ? module_of(s, handle) : NULL;
	*built = sm != NULL && sm->syms_state > 0;
	if (!*built || (!object && !exact && module_offset == 0))
		return NULL;
	GElf_Addr a = sm->bias + module_offset - (!object && !exact);
	const sym_ent *e = symbol_at(sm, a, object ? STT_OBJECT : STT_FUNC);
	if (!e)
		return NULL;
	if (offset)
		*offset = sm->bias + module_offset - e->start;
	return e->name;
}
