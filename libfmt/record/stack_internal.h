/* SPDX-License-Identifier: MIT */
/*
 * stack_internal.h - stack capture (frame-pointer walk) and symbolization
 * for the recorder.  Never installed.
 *
 * Capture
 *   rec_stack_capture() (the calling thread's own stack: the wrappers, the
 *   preload's interposers, events with a stack) and
 *   rec_stack_capture_ucontext() (a signal's interrupted stack: the CPU and
 *   wall samplers, crash events) follow each module's call-frame
 *   information over the unwind tables of stack_cfi.h where they exist
 *   (x86-64: built when a recorder opens, by its background thread as
 *   modules are loaded, by the preload library before the program's first
 *   instruction; not with REC_UNWIND=fp), so a stack goes through code
 *   without frame pointers (libc, libevent, a Debian-built program) to the
 *   thread's root.  Elsewhere, and for a module without CFI, they walk the
 *   frame pointer chain (rbp on x86-64, x29 on aarch64).  They are async-
 *   signal-safe: no malloc, no locks, no stdio, no system call.  They never
 *   read a stack word outside the current thread's stack, and never follow a
 *   frame that is not strictly above the previous one, so a bad frame ends
 *   the walk early instead of crashing.  The CFI walk costs about 10 ns a
 *   frame against the frame-pointer walk's 1-2 (a cache of the rows looked
 *   up keeps it there: stack_unwind.c).
 *
 *   The thread's stack bounds are cached in thread-local storage by
 *   rec_stack_thread_register() (pthread_getattr_np; not async-signal-safe).
 *   rec_stack_capture() registers the thread itself on its first call when it
 *   is not running inside a signal handler of the recorder (see
 *   rec_stack_signal_enter()); in a signal handler only the cached bounds are
 *   used, and a thread without them yields just its leaf frame.
 *
 * The recorder's own frames
 *   A stack starts at the program's call site, for every source (the
 *   wrappers of lock_wrap.c, sleep.c and alloc.c, events with a captured
 *   stack, the CPU sampler, crash events, a preload library calling the same
 *   capture): every capture drops the leading entries whose address lies in
 *   librec's code, decided by address at capture time, not by name later.
 *   librec's code is one range, the section rec_text that the Makefile puts
 *   every librec function into (both in librec.a and librec.so; the linker's
 *   __start_rec_text/__stop_rec_text bound it in the module that holds
 *   librec).  Every librec frame is dropped, the leading ones (the
 *   recorder's own work) and those below a program frame: the preload
 *   library's interposers in front of libc that call back into the program
 *   (its start routine at the root of every thread, between start_thread
 *   and the program's; its exit under the program's atexit handlers), whose
 *   libc callers stay.  A CPU sample or crash that interrupted librec
 *   itself is charged to the program frame that called into librec.  Two
 *   compare instructions per frame.
 *
 * PC convention (what a captured entry means)
 *   Every captured entry is a *return address* (the instruction after a
 *   call) except an interrupted program counter taken from a ucontext (the
 *   leaf of a CPU sample), which is exact and is stored with
 *   REC_STACK_PC_EXACT (bit 63) set.  Entries are plain integers, so a stack
 *   can be hashed/interned as an array of uintptr_t with the flag included.
 *   The symbolizer resolves a return address at pc - 1 (inside the call
 *   instruction, so a call that is the last instruction of a function is
 *   still attributed to it) and an exact pc at pc.  It REPORTS offsets of the
 *   original address (flag stripped): module_offset = pc - module_base,
 *   function_offset = pc - symbol start, for both kinds.
 */
#ifndef LIBREC_RECORD_STACK_INTERNAL_H
#define LIBREC_RECORD_STACK_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rec/rec.h"
#include "rec/symbols.h"

/* Bit set on an entry that is an exact pc (not a return address). */
#define REC_STACK_PC_EXACT ((uintptr_t)1 << (sizeof(uintptr_t) * 8 - 1))
/* The address of an entry, flag stripped. */
#define REC_STACK_PC(e) ((e) & ~REC_STACK_PC_EXACT)

/*! rec_stack_thread_register() :
 *  Cache the calling thread's stack bounds in TLS (idempotent; cheap after
 *  the first call) and attach it to the CPU sampler (sampler.c) when
 *  sampling is on.  Call from a normal context.  The recorder does not call
 *  it when it registers a thread (pthread_getattr_np costs a system call):
 *  a capture from a normal context and the wall sampler's attach take the
 *  bounds themselves (rec_stack_bounds_here), and the CPU sampler's handler
 *  (at a thread's first sample) and the fatal-signal handler read
 *  /proc/self/maps (rec_stack_bounds_signal).
 *  @return REC_OK, or REC_ERR_STATE if the bounds cannot be determined. */
rec_status rec_stack_thread_register(void);

/*! rec_stack_thread_bounds() : the cached bounds [*lo, *hi) of the calling
 *  thread's stack; returns 0 if the thread is not registered. */
int rec_stack_thread_bounds(uintptr_t *lo, uintptr_t *hi);

/*! rec_stack_bounds_here() : the calling thread's stack bounds, found now if
 *  they are not cached: with pthread_getattr_np, or, when
 *  rec_stack_bounds_no_alloc_ is set (the preload library, whose threads may
 *  be inside their allocator's locks), from /proc/self/maps with open and
 *  read (the mapping that holds the stack pointer), allocating nothing.
 *  Returns 0 if they cannot be found.  Not from a signal handler. */
int rec_stack_bounds_here(uintptr_t *lo, uintptr_t *hi);
extern int rec_stack_bounds_no_alloc_;

/*! rec_stack_bounds_of() : the stack [*lo, *hi) of thread th
 *  (pthread_getattr_np: one system call, may malloc; th must be alive).
 *  The CPU sampler's background round takes a new thread's bounds with it,
 *  so registering a thread makes no system call for them. */
rec_status rec_stack_bounds_of(pthread_t th, uintptr_t *lo, uintptr_t *hi);

/*! rec_stack_exec_init() : record, once, the executable segments of the
 *  loaded modules (the signal-time walk's check that an address is code),
 *  as rec_stack_bounds_of() does on first use.  The background thread
 *  calls it before it builds the unwind tables: the build holds the
 *  modules' walk (rec_dl_iterate_phdr) for milliseconds, and an opening
 *  thread that registered its stack behind it waited for all of it (9 ms
 *  under strace in requestwatch's start-up). */
void rec_stack_exec_init(void);

/*! rec_stack_set_bounds() : set the calling thread's cached bounds unless
 *  it has some.  Async-signal-safe. */
void rec_stack_set_bounds(uintptr_t lo, uintptr_t hi);

/*! rec_stack_bounds_signal() : if the calling thread has no cached bounds,
 *  take the mapping that contains the interrupted stack pointer of ucontext
 *  from /proc/self/maps (open, read, close: async-signal-safe; for the
 *  fatal-signal handler and the CPU sampler's).  Returns 1 when the thread
 *  has bounds afterwards. */
int rec_stack_bounds_signal(const void *ucontext);

/*! rec_stack_signal_enter()/rec_stack_signal_leave() :
 *  Mark the calling thread as running a recorder signal handler, so that
 *  rec_stack_capture() never registers lazily (pthread_getattr_np may
 *  malloc).  Nesting is counted.  Async-signal-safe. */
void rec_stack_signal_enter(void);
void rec_stack_signal_leave(void);

/* The Makefile puts every function of librec into the section rec_text (see
 * its rec_text rule), and the linker defines these two symbols around it in
 * whatever module holds librec: the program when it links librec.a, librec.so
 * otherwise.  Hidden, so each module resolves its own; weak, so that a build
 * without the section links and skips nothing (start == stop == 0). */
extern const char __start_rec_text[] __attribute__((weak, visibility("hidden")));
extern const char __stop_rec_text[] __attribute__((weak, visibility("hidden")));
/* intern.c: the code of librec's own shared object (below). */
extern uintptr_t rec_stack_hide_lo_, rec_stack_hide_hi_;

/*! rec_stack_in_librec() : whether the address of a captured entry (flag
 *  ignored) lies in librec's code: the section rec_text of the module that
 *  holds this copy of librec, and when that module is librec's own
 *  (librec*.so) its whole code (PLT, libgcc's helpers).  Async-signal-safe
 *  (four compares); inline, since the walks ask it of every frame. */
static inline int rec_stack_in_librec(uintptr_t pc)
{
	pc = REC_STACK_PC(pc);
	return (pc >= (uintptr_t)__start_rec_text && pc < (uintptr_t)__stop_rec_text) ||
	       pc - rec_stack_hide_lo_ < rec_stack_hide_hi_ - rec_stack_hide_lo_;
}
/*! rec_stack_librec_module_cb() : dl_iterate_phdr's callback that finds the
 *  module holding the address arg and, when its file is librec*, sets
 *  rec_stack_hide_lo_/hi_ to its executable segment; 1 when found (a
 *  constructor calls it; tests call it with made-up modules). */
struct dl_phdr_info;
int rec_stack_librec_module_cb(struct dl_phdr_info *info, size_t size, void *arg);
/*! rec_stack_librec_range() : that range, [*lo, *hi); both 0 when librec
 *  was built without the section (nothing is dropped then). */
void rec_stack_librec_range(uintptr_t *lo, uintptr_t *hi);

/*! rec_stack_capture() :
 *  Capture up to max return addresses of the calling thread, leaf first.
 *  skip = 0: the first entry is the return address into the caller of
 *  rec_stack_capture() (i.e. the caller's own frame is the leaf); skip = n
 *  drops n more frames; then leading frames in librec are dropped too.  Async-signal-safe (see the header comment).
 *  @return the number of entries written to pcs (0..max).  *truncated (may be
 *          NULL) is set to 1 when the chain went deeper than max. */
size_t rec_stack_capture(uintptr_t *pcs, size_t max, size_t skip);
size_t rec_stack_capture_ex(uintptr_t *pcs, size_t max, size_t skip,
			    int *truncated);

/*! rec_stack_capture_ucontext() :
 *  Capture the stack of the code a signal interrupted, from the ucontext_t
 *  the kernel passed to an SA_SIGINFO handler: pcs[0] is the interrupted pc
 *  | REC_STACK_PC_EXACT, then the return addresses of its callers,
 *  validated against the interrupted stack pointer and the cached bounds of
 *  the thread.  Where the unwind tables of stack_cfi.h exist (x86-64, built
 *  by the CPU sampler's background round) the callers come from each module's
 *  call-frame information, through code without frame pointers, to the
 *  thread's root; otherwise (and where a module has no CFI) from the
 *  frame-pointer chain, where a function that has not set up its frame
 *  (entry, or a leaf without frame pointer) may lose its caller or end the
 *  walk early (rec_stack_capture_ucontext_fp()).
 *  Async-signal-safe.  @return entries written; *truncated as above. */
size_t rec_stack_capture_ucontext(const void *ucontext, uintptr_t *pcs,
				  size_t max, int *truncated);

/* ---- symbolization (background thread only: mallocs, takes the loader lock) */

typedef struct rec_symbol {
	const char *function;     /* "" if unknown */
	uint64_t function_offset; /* pc - symbol start (0 if function unknown) */
	const char *module_path;  /* "" if unknown */
	const char *build_id;     /* lowercase hex, "" if the module has none */
	uint64_t module_base;     /* load bias (dlpi_addr); 0 if unknown */
	uint64_t module_offset;   /* pc - module_base (pc if module unknown) */
	uint32_t module_index;    /* 1-based index of the module in this
				   * symbolizer (stable for its lifetime); 0 =
				   * no module */
	const char *file;         /* source file of the pc in function, "" if unknown */
	uint32_t line;            /* 0 if unknown */
	uint32_t flags;           /* REC_FRAME_PC_EXACT, REC_FRAME_UNSYMBOLIZED */
	uint32_t inline_count;    /* functions inlined into function at the pc */
	const rec_inline_frame *inlined; /* innermost first */
} rec_symbol;

typedef struct rec_symbolizer rec_symbolizer;

/*! rec_symbolizer_open() : a symbolizer with an empty cache. */
rec_status rec_symbolizer_open(rec_symbolizer **out);
/*! rec_symbolizer_set_names() : on = 0 (REC_OPTIONS symbolize=off): resolve
 *  only the module and its offset (the frames are flagged
 *  REC_FRAME_UNSYMBOLIZED, for rec-symbolize); 1 (the default): names,
 *  files, lines and inline frames too. */
void rec_symbolizer_set_names(rec_symbolizer *s, int on);
/*! rec_symbolizer_set_lines() : on = 0: names from the symbol tables only,
 *  no file, line or inline frames, so no DWARF is loaded (the preload
 *  library's lock names, looked up in the thread that waited); 1 (the
 *  default): all of them. */
void rec_symbolizer_set_lines(rec_symbolizer *s, int on);
/* Whose files, lines and inline frames rec_symbolizer_source() resolves. */
typedef enum {
	REC_SOURCES_PROGRAM = 0, /* the executable's and every library's outside the
				  * system's library directories (/lib, /lib64,
				  * /usr/lib, /usr/lib64, ...): reading a system
				  * library's DWARF (libc's from Debian's libc6-dbg:
				  * ~70 ms of CPU, ~17 MB) costs the program more
				  * than its lines tell; its frames keep their names */
	REC_SOURCES_ALL = 1,     /* every module's */
	REC_SOURCES_NONE = 2     /* none: names only */
} rec_sources_mode;
/*! rec_symbolizer_set_sources() : REC_SOURCES_PROGRAM by default. */
void rec_symbolizer_set_sources(rec_symbolizer *s, rec_sources_mode mode);
rec_sources_mode rec_symbolizer_sources(const rec_symbolizer *s);
/*! rec_symbolizer_system_path() : whether path names a file in one of the
 *  system's library directories (REC_SOURCES_PROGRAM leaves their sources). */
int rec_symbolizer_system_path(const char *path);
/*! rec_symbolizer_source() : the file, line and inline frames of an entry
 *  (out's function and module as rec_symbolizer_lookup() gives them, then
 *  file, line, inline_count and inlined; strings owned by s), whatever
 *  rec_symbolizer_set_lines() says: the background thread resolves names
 *  first and sources later, within a time budget per round
 *  (stack_symbolize.c).  Reads the module's DWARF on first need. */
rec_status rec_symbolizer_source(rec_symbolizer *s, uintptr_t entry, rec_symbol *out);
/*! rec_symbolizer_source_cheap() : whether rec_symbolizer_source() of
 *  entry reads no DWARF for the first time (its module's was read already,
 *  or there is none to read): a few microseconds, not the tens of
 *  milliseconds of a first read (libc's with its debug file: ~50 ms). */
int rec_symbolizer_source_cheap(rec_symbolizer *s, uintptr_t entry);
/*! rec_symbolizer_close() : frees it and every string it handed out. */
void rec_symbolizer_close(rec_symbolizer *s);

/*! rec_symbolizer_lookup() :
 *  Symbolize one captured entry (return address, or exact pc with
 *  REC_STACK_PC_EXACT).  Results are cached per entry; strings in *out are
 *  owned by the symbolizer and valid until rec_symbolizer_close().  Names,
 *  files, lines and inline frames come from rec_symbols (libdwfl: the
 *  module's .symtab/.dynsym, its debug file by build-id or debuglink under
 *  /usr/lib/debug, DWARF); dladdr() names what libdwfl cannot open.
 *  Not thread-safe: one thread (the recorder's writer) uses a symbolizer.
 *  @return REC_OK (possibly with an unknown function/module) or
 *          REC_ERR_NOMEM. */
rec_status rec_symbolizer_lookup(rec_symbolizer *s, uintptr_t entry,
				 rec_symbol *out);

/*! rec_symbolizer_data() :
 *  The data object (a global or static variable: STT_OBJECT in the module's
 *  symbol tables or its debug file's, through rec_symbols) that contains addr, or NULL; *offset (may
 *  be NULL) = addr - its start.  The name is owned by the symbolizer.  Not
 *  thread-safe, like rec_symbolizer_lookup(). */
const char *rec_symbolizer_data(rec_symbolizer *s, uintptr_t addr, uint64_t *offset);

/*! rec_symbolizer_name_now() :
 *  The function (object == 0; addr a return address unless exact) or the
 *  data object (object != 0) at addr, from what s has read already: no walk
 *  of the loaded modules, no file read, nothing allocated, no lock taken, so
 *  a thread that may hold its allocator's locks can call it (lock_names.c).
 *  NULL when there is none, or when addr's module or its symbol index is not
 *  loaded yet: *ready is 0 then, and rec_symbolizer_data() or
 *  rec_symbolizer_lookup() of an address in it (from a thread that may
 *  allocate) loads it.  Data outside every module known is ready (none):
 *  the heap or a stack, or a module loaded since s last walked them.  Not
 *  thread-safe, like rec_symbolizer_lookup(). */
const char *rec_symbolizer_name_now(rec_symbolizer *s, uintptr_t addr, int object, int exact,
				    uint64_t *offset, int *ready);

/*! rec_symbolizer_release() : closes libdwfl (the modules' symbol indexes
 *  and the DWARF it read, inflated from a compressed debug file) and
 *  forgets which modules it opened; the next lookup or source that needs
 *  one opens it again.  The entries resolved so far stay cached (their
 *  strings are s's).  Returns whether it held a module's DWARF. */
int rec_symbolizer_release(rec_symbolizer *s);

/* stack_symbol_dwarf.c: whether rec_symbols_resolve() ran on the module
 * (its DWARF is read), or it has nothing to read. */
int rec_symbols_dwarf_read_(rec_symbols *s, uint32_t handle);
/* stack_symbol_dwarf.c: whether rec_symbols_resolve() ran on a module
 * libdwfl opened (so it holds that module's DWARF). */
int rec_symbols_dwarf_held_(const rec_symbols *s);

/* stack_symbol_dwarf.c: rec_symbols_function() (object == 0) or
 * rec_symbols_data() from a module whose symbol index is built (*built),
 * else NULL: allocates nothing, reads nothing. */
const char *rec_symbols_built_name_(const rec_symbols *s, uint32_t handle, uint64_t module_offset,
				    int object, int exact, uint64_t *offset, int *built);

/*! rec_module_build_id() : lowercase hex build-id of the module loaded at
 *  load bias base (dl_iterate_phdr over PT_NOTE, NT_GNU_BUILD_ID) into
 *  buf (NUL-terminated); returns the hex length, 0 if none/unknown. */
size_t rec_module_build_id(uintptr_t base, char *buf, size_t cap);

/* ---- the loaded modules ------------------------------------------------ */

/* intern.c: rec_stack_hide_lo_/hi_ (declared above): the leading frames of
 * a captured event stack that lie in [lo, hi) are dropped: the code of
 * librec's own shared object (librec.so, librec-preload.so; set by
 * stack_capture.c's and preload.c's constructors); 0 when librec is linked
 * into the program. */

/* thread.c: dl_iterate_phdr for the recorder's own walks of the loaded
 * modules, never under way in a recorder thread at a fork. */
struct dl_phdr_info;
int rec_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg);

#endif /* LIBREC_RECORD_STACK_INTERNAL_H */
