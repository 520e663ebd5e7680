/* SPDX-License-Identifier: MIT */
/*
 * rec/symbols.h - names, source lines and inline frames for an address in
 * an ELF module, from its symbol tables and its DWARF (elfutils' libdwfl):
 * the module file's .symtab and .dynsym, a separate debug file found by
 * build-id (DIR/.build-id/xx/yyyy.debug) or .gnu_debuglink in the debug
 * directories, a static executable's own tables.  The recorder's
 * background thread uses it for the running process; rec-symbolize uses it
 * for a recording's modules (build-id + offset) after the fact.
 *
 * Not thread-safe: one thread uses a rec_symbols.  Never call it from a
 * signal handler or an emitting thread (it reads files and allocates).
 */
#ifndef LIBREC_SYMBOLS_H
#define LIBREC_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "rec/rec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One function inlined at an address: its name and the source position in
 * it (for the innermost, the address's own line; for the others, the line
 * of the call that the next inner function was inlined at). */
typedef struct rec_inline_frame {
	const char *function; /* "" if DWARF has no name */
	const char *file;     /* "" if unknown */
	uint32_t line;        /* 0 if unknown */
} rec_inline_frame;

/* What rec_symbols_resolve() found.  Strings and the inlined array are
 * owned by the rec_symbols and valid until its next resolve or close. */
typedef struct rec_symbolized {
	const char *function;        /* the symbol (a function of the module), "" if none */
	uint64_t function_offset;    /* module_offset - the symbol's start; 0 if none */
	const char *file;            /* source file of the address in that function, "" if unknown */
	uint32_t line;               /* 0 if unknown */
	uint32_t inline_count;       /* functions inlined into it at the address */
	const rec_inline_frame *inlined; /* inline_count entries, innermost first */
} rec_symbolized;

typedef struct rec_symbols rec_symbols;

/*! rec_symbols_open() :
 *  debug_dirs: the directories searched for separate debug files, each by
 *  build-id (DIR/.build-id/xx/yyyy.debug) and by .gnu_debuglink (DIR plus
 *  the module's directory, and the module's own directory); NULL or 0
 *  dirs: /usr/lib/debug.  @return REC_OK, REC_ERR_NOMEM. */
REC_API rec_status rec_symbols_open(rec_symbols **out, const char *const *debug_dirs,
				    size_t ndirs);
REC_API void rec_symbols_close(rec_symbols *s);

/*! rec_symbols_module() :
 *  Make a module known: the ELF file at path if it exists and (when
 *  build_id is not "") has that build-id, else the file with that build-id
 *  in the debug directories (a debug file or the binary itself), loaded at
 *  load bias base (the module offsets are addresses minus base).
 *  @return REC_OK and a handle >= 1 in *handle; or REC_ERR_NOT_FOUND when no
 *  such file can be opened: *handle is then still a handle >= 1 of the
 *  module, in which nothing resolves (the next module gets the next one);
 *  REC_ERR_NOMEM (*handle 0). */
REC_API rec_status rec_symbols_module(rec_symbols *s, const char *path, const char *build_id,
				      uint64_t base, uint32_t *handle);

/*! rec_symbols_resolve() :
 *  Name, source position and inline chain of module_offset in the module.
 *  exact = 0: the offset is a return address, looked up at offset - 1
 *  (inside the call); 1: the address of an instruction (an interrupted
 *  pc).  Offsets in *out are of module_offset itself.
 *  @return REC_OK (possibly nothing found: "" and 0) or
 *  REC_ERR_INVALID_ARG / REC_ERR_NOMEM. */
REC_API rec_status rec_symbols_resolve(rec_symbols *s, uint32_t handle, uint64_t module_offset,
				       int exact, rec_symbolized *out);

/*! rec_symbols_function() :
 *  Only the function symbol at module_offset (exact as for
 *  rec_symbols_resolve()), from the symbol tables: no DWARF is read, so a
 *  module's first call does not load its debug information (only the debug
 *  file's symbol table when the module has none).  NULL if none;
 *  *function_offset (may be NULL) = module_offset - its start. */
REC_API const char *rec_symbols_function(rec_symbols *s, uint32_t handle, uint64_t module_offset,
					 int exact, uint64_t *function_offset);

/*! rec_symbols_data() :
 *  The data object (a global or static variable) of the module containing
 *  module_offset, or NULL; *offset (may be NULL) = module_offset - its
 *  start.  The name is owned by s. */
REC_API const char *rec_symbols_data(rec_symbols *s, uint32_t handle, uint64_t module_offset,
				     uint64_t *offset);

#ifdef __cplusplus
}
#endif
#endif /* LIBREC_SYMBOLS_H */
