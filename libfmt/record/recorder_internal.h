/* SPDX-License-Identifier: MIT */
/*
 * recorder_internal.h - the recorder core's private structures: recorder,
 * type entries, thread buffers (one SPSC byte ring per thread and recorder),
 * the clock, the string and stack tables, and the calls its files make to
 * each other.  Never installed.
 *
 * ARCHITECTURE of libfmt/record/ (what may call what)
 *   The core, one concern a file:
 *     recorder.c   open/close/flush/dump, the default recorder, listeners,
 *                  periodic callbacks, stats (the lifecycle)
 *     types.c      event types, settings (the events-list grammar)
 *     intern.c     the string and stack intern tables
 *     thread.c     thread TLS, registration, exit, fork handling
 *     ring.c       the per-thread ring: memory, emit slow path, drain
 *     output.c     the sink, write-failure accounting, flight-mode store
 *     bg.c         the background thread and its round
 *     stack_capture.c, stack_symbolizer.c, stack_symbolize.c
 *                  capture (signal-safe), the ELF symbolizer, the
 *                  background thread's frames of new stacks
 *     clock.c, crash.c, env.c
 *                  the clock, the fatal-signal handler, REC_OUTPUT/REC_OPTIONS
 *   may call each other through this header and stack_internal.h, the
 *   writer only through its public API (rec/rec.h: rec_writer_*; never
 *   write/writer_internal.h), and common/.  Nothing here calls read/ or
 *   analysis/.
 *   The built-ins (lock_wrap.c, sleep.c, alloc.c, io.c, sampler.c,
 *   metrics.c) sit on the public API of recorder.h and builtins.h (emit,
 *   types, rec_default_listen, rec_recorder_add_periodic/set_periodic),
 *   stack_internal.h (capture) and builtin_internal.h (the core's thread
 *   hooks, rec_builtin_tid, and the interfaces they offer the preload
 *   library); sampler.c and metrics.c also include this header (metrics.c
 *   for rec_parse_duration_ns).  The core calls no built-in by name (a
 *   built-in that must see every thread registers thread hooks), except
 *   env.c, which sets the built-ins' options from REC_OPTIONS through their
 *   own interfaces (builtins.h; rec_io_set_threshold in builtin_internal.h);
 *   the built-ins do not call each other.
 *
 * Thread buffer ring (producer = the emitting thread, consumer = the
 * recorder's background thread):
 *   - positions head/tail grow monotonically; the byte at position p is
 *     base[p & mask];
 *   - a record is a 2-byte little-endian body length L (1..65535) followed by
 *     L bytes of the record interchange form WITHOUT its leading Size (that
 *     is: uvarint Type_Id, uvarint Ticks, header fields, fields); the
 *     background thread re-frames it with a uvarint Size;
 *   - a record never wraps: when fewer than 2 bytes remain before the end of
 *     the ring, or the 2 bytes there are 0, the reader skips to the start;
 *   - the producer publishes pub_head with a release store at commit; the
 *     consumer publishes tail with a release store after copying.
 */
#ifndef LIBREC_RECORDER_INTERNAL_H
#define LIBREC_RECORDER_INTERNAL_H

#include <linux/futex.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/common_internal.h"
#include "rec/rec.h"
#include "rec/recorder.h"

/* ---- clock (clock.c) ------------------------------------------------------ */
enum { REC_CLOCK_TSC = 0, REC_CLOCK_MONO = 1, REC_CLOCK_CALLBACK = 2 };

typedef struct rec_clock_info {
	int kind;              /* REC_CLOCK_TSC or REC_CLOCK_MONO */
	uint64_t frequency;    /* ticks per second */
	const char *why;       /* why this kind was chosen (static text) */
} rec_clock_info;

/* Decide once per process (cpuid invariant TSC + /proc/cpuinfo constant_tsc
 * and nonstop_tsc) and calibrate against CLOCK_MONOTONIC; later calls refine
 * the frequency over the longer baseline.  REC_CLOCK=mono forces the
 * fallback.  Thread-safe. */
void rec_clock_get(rec_clock_info *out);
/* With the TSC: sleep until at least min_ns have passed since the first
 * calibration (the background thread, before a frequency is fixed for a
 * recording: the first estimate's baseline is only 200 us). */
void rec_clock_settle(uint64_t min_ns);
uint64_t rec_clock_mono_ns(void);
int64_t rec_clock_wall_ns(void);
uint64_t rec_clock_tsc(void);
/* Wall-clock start of this process (ns since epoch, 1/CLK_TCK precision),
 * 0 if unknown. */
int64_t rec_process_start_ns(void);
/* fork(): take (1) / release (0) the clock's lock around fork. */
void rec_clock_fork_lock(int take);
/* A (wall ns, ticks) pair read as close together as possible. */
void rec_clock_anchor(int kind, int64_t *wall_ns, uint64_t *ticks);

/* ---- type entries ---------------------------------------------------------- */
typedef struct rec_type_entry {
	rec_event_type h;            /* first: the public handle */
	struct rec_type_entry *next; /* in the recorder's list or the declared list */
	struct rec_type_entry *w_next; /* declared, bound, not in the writer yet (r->lock) */
	const rec_type *decl_def;    /* rec_type_declare(): the static definition */
	uint64_t threshold_ns;
	uint32_t decl_flags;         /* REC_DECLARE_OFF, REC_DECLARE_STACK */
	uint32_t id;
	char *name;                  /* owned copy (register_type) */
	/* Throttle (events list "throttle=N/UNIT", h.flags REC_EVENT_THROTTLED_):
	 * at most thr_budget events per window of thr_window_ticks.  thr_state
	 * is the window number (high 32 bits) and the events let through in it
	 * (low 32), updated with compare-and-swap by every emitting thread: on
	 * its own cache line, away from the handle every emit reads. */
	uint64_t thr_window_ticks;
	uint32_t thr_budget;
	uint8_t thr_pad_[64];
	uint64_t thr_state;
	/* Emits of this type from a signal handler on a thread that has no
	 * buffer for the type's recorder (a signal handler cannot register
	 * one: thread.c), counted with an atomic add; the recorder's
	 * background thread reports them as rec.Dropped, reason "no buffer"
	 * (bg.c put_signal_drops), and subtracts what it reported. */
	uint64_t nobuf_signal;
	uint8_t thr_pad2_[48];
} rec_type_entry;

/* ---- thread buffers -------------------------------------------------------- */
/* A thread's name is its own string, id REC_THREAD_NAME_BASE + thread id, not
 * interned with the others: the thread, its name and their pool entries are
 * forgotten (rec_writer_retire_entries) once an exited thread's last records are
 * in a chunk, so a thread-per-request service does not grow the recorder's
 * and the writer's tables by a thread and a name per request. */
#define REC_THREAD_NAME_BASE (UINT64_C(1) << 32)

enum { REC_TB_LIVE = 0, REC_TB_ORPHAN = 1, REC_TB_DETACHED = 2 };

#define REC_DYN_CACHE 64u
/* The per-thread cache of dynamic strings (rec_emit_string_dyn), two
 * levels of REC_DYN_CACHE slots, each slot one cache line:
 *  - by address: the caller's pointer and length pick the slot, which holds
 *    a copy of the string (up to REC_DYN_PTR_INLINE bytes) to compare with,
 *    so the slot's line and the string's are read at once, neither waiting
 *    for the other (under cold caches the emit of a dynamic string cost
 *    twice a pre-interned one's, most of it a string-then-slot chain of
 *    misses: bench/coldemit.sh); the same bytes at the same address hit,
 *    whatever was written there in between;
 *  - by content: a hash of the bytes picks the slot (a string from a new
 *    buffer each time, or longer than the copies), compared with its copy
 *    (up to REC_DYN_INLINE bytes) or the interned string. */
#define REC_DYN_INLINE 36u
typedef struct rec_dyn_slot {
	uint64_t hash;
	uint64_t id;                     /* 0 = empty */
	const char *s;                   /* the interned copy */
	uint32_t len;
	char inl[REC_DYN_INLINE];        /* the first min(len, REC_DYN_INLINE) bytes */
} __attribute__((aligned(64))) rec_dyn_slot;
#define REC_DYN_PTR_INLINE 44u
typedef struct rec_dyn_ptr_slot {
	const char *ptr;                 /* the caller's string */
	uint64_t id;                     /* 0 = empty */
	uint32_t len;                    /* at most REC_DYN_PTR_INLINE */
	char inl[REC_DYN_PTR_INLINE];
} __attribute__((aligned(64))) rec_dyn_ptr_slot;

/* Drops by type, per thread buffer: the owning thread (and its signal
 * handlers) count, the background thread reports each non-zero increase
 * as one rec.Dropped (thread, type, reason) per chunk.  A slot's type_id
 * is claimed once (compare-and-swap from 0); a thread that drops events of
 * more than REC_DROP_SLOTS types counts the rest in drops_other (reported
 * as type 0, not known). */
enum { REC_DK_FULL = 0, REC_DK_NESTED = 1, REC_DK_THROTTLED = 2, REC_DK_N = 3 };
#define REC_DROP_SLOTS 16u
typedef struct rec_drop_slot {
	uint32_t type_id;                /* atomic; 0 = free */
	uint32_t pad_;
	uint64_t n[REC_DK_N];            /* atomic counts by kind */
} rec_drop_slot;

/* Renames of a thread by another thread, once it was defined, that its
 * buffer records (a further one is not recorded). */
#define REC_RENAMES_MAX 4

typedef struct rec_tbuf_full {
	struct rec_tbuf_ pub;            /* first: what the inline emit path uses */
	struct rec_recorder *r;          /* valid while the owner is inside an emit */
	struct rec_tbuf_full *thread_next; /* the owning thread's list */
	struct rec_tbuf_full *rec_next;  /* the recorder's list (r->lock) */
	uint32_t state;                  /* REC_TB_*, atomic */
	uint32_t has_ring;
	uint32_t reclaim;                /* background-only: orphan drained, to the free list */
	uint32_t defined;                /* background sets (r->lock): thread defined in the writer */
	uint32_t id_shared;              /* atomic: rec_recorder_thread_id() handed the id out */
	uint64_t cap;
	uint64_t populated;              /* ring bytes from base put in place (ring_grow) */
	uint64_t thread_id;
	uint64_t os_tid;
	uint64_t name_id;                /* REC_THREAD_NAME_BASE + thread_id, 0 = no name */
	char name[16];                   /* the thread's name at registration */
	/* Another thread renamed this one once it was defined (thread.c,
	 * rec_thread_renamed_tid_, under r->lock): its records carry a new
	 * thread id from then on (pub.thread_enc switched); renamed_at (ticks,
	 * 0 = none) until the background thread defines the new id with a
	 * rec.ThreadStart; the ids it had before retire with the buffer. */
	uint64_t renamed_at;             /* atomic */
	uint64_t defined_id;             /* background-only: the id it defined last */
	uint64_t old_ids[2 * REC_RENAMES_MAX]; /* pairs: thread id, name id */
	uint32_t nold;
	rec_event_type *t_end;           /* the recorder's rec.ThreadEnd handle */
	/* drops by type (owner and its signal handlers add) */
	rec_drop_slot drops[REC_DROP_SLOTS];
	uint64_t drops_other[REC_DK_N];
	/* background-only: what was reported of the above; pub.dropped_nested
	 * (counted by the inline code of programs built with older headers) */
	uint64_t drops_reported[REC_DROP_SLOTS][REC_DK_N];
	uint64_t other_reported[REC_DK_N];
	uint64_t nested_reported;
	/* owner-only: dynamic string cache */
	rec_dyn_ptr_slot dyn_ptr[REC_DYN_CACHE];
	rec_dyn_slot dyn[REC_DYN_CACHE];
} rec_tbuf_full;

/* ---- strings ---------------------------------------------------------------- */
typedef struct rec_strent {
	char *s;
	size_t len;
	uint64_t hash;
} rec_strent;

typedef struct rec_strtab {
	uint64_t *slots;   /* id per slot, 0 = empty */
	size_t nslots;     /* power of two */
	rec_strent *ents;  /* ents[id - 1] */
	size_t count, cap;
	/* the strings' bytes (intern.c: mapped chunks, never malloc'ed) */
	struct rec_str_chunk *chunks;
	char *arena;       /* free bytes of the newest chunk */
	size_t arena_left;
} rec_strtab;

/* ---- stacks (lock-free, insert-only; safe in signal handlers) --------------- */
#define REC_STACK_MAX_DEPTH 128u
typedef struct rec_stackent {
	uint64_t off;      /* index of the first pc in the arena */
	uint32_t depth;
	uint32_t flags;    /* REC_STACK_TRUNCATED */
	uint32_t ready;    /* set (release) once off/depth are valid */
	uint32_t mapped;   /* background: its pcs are in the frame map */
	uint32_t defined;  /* background: already given to the writer */
} rec_stackent;

typedef struct rec_stacktab {
	uint64_t *slot_hash;  /* 0 = free */
	uint32_t *slot_id;    /* 0 = being filled */
	size_t nslots;
	uintptr_t *arena;
	uint64_t arena_cap, arena_used; /* in pcs */
	rec_stackent *ents;   /* ents[id - 1] */
	uint64_t ents_cap, next_id;
	uint64_t defined_upto; /* background: ids <= this are all defined */
} rec_stacktab;

/* ---- flight-recorder chunk store ---------------------------------------------- */
typedef struct rec_fchunk {
	struct rec_fchunk *next;
	uint64_t mono_ns; /* when it was completed */
	size_t len;
	uint8_t data[];
} rec_fchunk;

typedef struct rec_periodic {
	rec_periodic_fn fn;
	void *opaque;
	uint64_t period_ns, next_ns;
} rec_periodic;

/* Parsed events-list entry. */
typedef struct rec_setting {
	char *pattern;
	size_t plen;
	bool prefix, neg;
	int enabled;       /* -1 unset, 0, 1 */
	int stack;         /* -1 unset, 0, 1 */
	int64_t threshold; /* -1 unset, else ns */
	int64_t throttle_n;        /* -1 unset, -2 off, else events per throttle_unit_ns */
	uint64_t throttle_unit_ns;
} rec_setting;

/* ---- fatal signals (crash.c) ------------------------------------------------ */
/* A rec.Crash the crashing thread could not put in its own buffer (not
 * registered, inside an emit, buffer full): the background thread writes it. */
typedef struct rec_crash_slot {
	uint32_t pending;  /* set (release) by the handler once the rest is valid */
	uint32_t sig;
	int32_t code;
	uint32_t sender_pid;
	uint64_t addr, os_tid, thread_id, stack_id, ticks;
} rec_crash_slot;

/* ---- output and write failures (output.c) ------------------------------------ */
enum { REC_WF_ENOSPC = 0, REC_WF_EIO, REC_WF_EFBIG, REC_WF_OTHER, REC_WF_REMOVED,
       REC_WF_REOPEN, REC_WF_NKINDS };

/* Counts by event type (rec.Dropped of reasons 3 and 4, written by the
 * background thread): up to REC_TALLY_TYPES types, the rest under type 0. */
#define REC_TALLY_TYPES 32u
typedef struct rec_type_tally {
	uint32_t id[REC_TALLY_TYPES];     /* 0 = free */
	uint64_t n[REC_TALLY_TYPES];
	uint64_t other;                  /* types past the table, or not known */
} rec_type_tally;

/* One rec.WriteFailed to write (a failure that ended, or a removed file). */
typedef struct rec_wf_event {
	int pending;
	int err;            /* errno (0: the program's sink returned > 0) */
	uint32_t action;    /* 0 chunks discarded, 1 file removed and reopened */
	uint64_t start_ticks, end_ticks;
	uint64_t chunks, events, dropped, bytes;
	rec_type_tally lost;  /* events + dropped by type */
} rec_wf_event;

/* The recorder's sink over the output (path: its own descriptor; sink: the
 * program's).  Everything is guarded by w_lock (the writer calls the sink
 * with it held). */
typedef struct rec_output {
	int fd;              /* path mode: the file; -1 otherwise */
	/* fd still holds an earlier file's bytes (rec_out_truncate; trunc_lock,
	 * see LOCK ORDER) */
	int trunc_pending, trunc_err;
	/* the earlier file at the path, replaced by a new one at open and kept
	 * open so that its blocks are freed when the background thread closes
	 * it (rec_out_truncate, trunc_pending set); -1: none */
	int old_fd;
	pthread_mutex_t trunc_lock;
	uint64_t off;        /* end of the last complete chunk in the file */
	/* the failure in progress */
	int failing;
	rec_wf_event cur;
	/* events for the background thread to write */
	rec_wf_event done, removed;
	/* removal check (once per flush round) */
	uint64_t chk_ticks;  /* last time the file was seen linked */
	uint64_t since_chunks, since_events, since_bytes;
	/* totals */
	uint64_t chunks_lost, bytes_lost;
	/* reports for on_error, delivered by the background thread without locks */
	uint32_t kinds_reported, report_pending;
	char report_msg[REC_WF_NKINDS][200];
} rec_output;

struct rec_recorder {
	uint64_t gen;
	struct rec_recorder *g_next;     /* open recorders (global lock) */
	uint32_t flags;
	int forked_child;                /* this process is a fork child: hands off */
	int closing;
	/* options */
	char *path;
	rec_sink sink;
	uint64_t flush_ns;
	uint64_t memory_limit, mem_used;
	uint64_t buf_size;
	uint32_t full_policy;
	uint64_t max_age_ns, max_size;
	int dump_signal;
	rec_setting *settings;
	size_t nsettings;
	bool settings_enable_list;
	rec_error_fn on_error;
	void *error_opaque;
	uint64_t reported_errors;        /* bitmask by -status */
	rec_status first_error;
	/* clock */
	int clock_kind;
	uint64_t frequency;
	rec_clock_fn clock;
	void *clock_opaque;
	uint64_t run_id;
	int freq_fixed;                  /* background: a chunk was built, frequency final */
	/* writer */
	rec_writer *w;
	pthread_mutex_t w_lock;          /* the writer, out (LOCK ORDER below) */
	/* shared state (lock; LOCK ORDER below) */
	pthread_mutex_t lock;
	rec_type_entry *types;
	uint32_t next_type_id;
	rec_event_type *t_start, *t_end;
	rec_tbuf_full *threads;
	/* Buffers (with their rings) of exited threads, drained and ready for
	 * the next thread that registers; counted in mem_used. */
	rec_tbuf_full *free_bufs;
	uint32_t regs_since_drain;       /* registrations since the last drain round */
	uint64_t threads_registered;     /* thread ids handed out (r->lock) */
	rec_strtab strs;
	rec_stacktab stacks;
	rec_periodic *periodic;
	size_t nperiodic;
	/* declared types bound to r, for the writer (rec_types_write_pending) */
	rec_type_entry *types_unwritten;
	/* background thread */
	pthread_t bg;
	int bg_started;
	void *bg_scratch;                /* the background thread's round scratch (bg_main) */
	uint32_t wake;                   /* futex word */
	pthread_mutex_t req_lock;        /* requests (LOCK ORDER below) */
	pthread_cond_t req_cond;
	uint64_t req_seq, done_seq;
	uint32_t req_flags;
	rec_status req_status;
	char *dump_path;
	pthread_mutex_t dump_lock;       /* one dump at a time (LOCK ORDER below) */
	int stop;
	/* background-only state */
	rec_buf staging;
	uint64_t defined_strings;
	uint64_t proc_program, proc_exe, proc_cmdline; /* rec.Process's strings (process.c) */
	uint32_t proc_ppid;
	uint64_t proc_chunk;             /* writer's chunk count when rec.Process was put */
	void *symbolizer;
	struct rec_frame_map *frame_map; /* pc -> frame id (stack_symbolize.c) */
	uint64_t next_frame_id, next_module_id;
	void *module_map;
	uint64_t last_flush_ns;
	int drops_defer;                 /* this round ends no chunk: rec.Dropped wait */
	/* atomic, set by librec-preload.so: a new thread is defined (and its
	 * records drained) at the next round that ends a chunk, not sooner,
	 * so the name it is given just after its start (by itself or by the
	 * thread that started it) is the one written */
	int defer_new_threads;
	/* flight mode */
	rec_fchunk *fl_head, *fl_tail;
	uint64_t fl_bytes;
	rec_buf fl_pending;
	/* stats (atomic) */
	uint64_t st_events, st_dropped, st_drains, st_threads;
	/* output and write failures */
	rec_output out;
	/* fatal signals (crash.c) */
	rec_event_type *t_crash;
	int crash_on;                    /* handlers installed for this recorder */
	uint32_t crash_req;              /* set by the handler: drain and write now */
	uint32_t crash_done;             /* futex word: the background thread did it */
	rec_crash_slot crash_slot;
};

/* ---- the open recorders and the declared types (recorder.c) --------------- */
/*
 * LOCK ORDER (the one place it is written; every lock of record/).  A lock
 * may be taken while holding only locks above it in this list, never one
 * below it.  Periodic callbacks (run_periodic) and the default recorder's
 * listeners run with none of these held; rec_report() calls the program's
 * on_error with whatever its caller holds (w_lock in bg_collect's step 9,
 * rec_g_lock and r->lock in open's step 8).
 *
 *   g_clock_lock   clock.c: the calibration.  Taken alone, and first of all
 *                  by the fork handler (atfork_prepare: clock, rec_g_lock,
 *                  every r->lock), so a fork child finds none held.
 *   sample_lock,   metrics.c: samplers, process statistics.  Held while
 *   process_lock   emitting: an emit may register the thread (rec_g_lock,
 *                  r->lock) or intern a string (r->lock).  registry_lock
 *                  (metrics.c) is a leaf: never held with another.
 *   reg_lock       alloc.c: held while emitting a thread's allocation tail
 *                  (on_default), so above rec_g_lock like sample_lock.
 *   dump_lock      r: serializes rec_recorder_dump(); held while it waits
 *                  on req_lock/req_cond for the background thread.
 *   w_lock         r's writer and r->out (the writer calls the sink with it
 *                  held: rec_out_write, rec_flight_write).  Its holders
 *                  call malloc all the time (the background thread's
 *                  round, a type's registration), so no thread that may
 *                  hold a lock of the program waits for it: see THE RULE.
 *                  Above rec_g_lock and r->lock: registering a type takes
 *                  w_lock, then them (types.c register_type), and the
 *                  background thread takes r->lock under it
 *                  (rec_types_write_pending).
 *   rec_g_lock     the open list, default recorder, declared types (below).
 *                  Held by open (the generation, publishing), close, thread
 *                  registration (thread_buffer), type registration and
 *                  rec_type_declare while they take r->lock.
 *   r->lock        r's types, strings, thread list, free list, memory
 *                  accounting.
 *   trunc_lock     r->out: emptying an earlier file's bytes; taken by
 *                  rec_out_write under w_lock, by the background thread
 *                  alone.
 *   req_lock       r's requests to the background thread (with req_cond);
 *                  taken alone, by the requester and by the background
 *                  thread between rounds, never with w_lock or r->lock.
 *
 * THE RULE (why a recorded program cannot deadlock in the recorder): a
 * thread inside an interposer of the preload library, or in any emit, may
 * hold the program's own locks: its allocator's (jemalloc's mutexes are
 * pthread mutexes, taken through the interposers, and a thread inside
 * jemalloc records them), or any lock the program holds around a call to
 * pthread_*.  Such a thread only ever waits for rec_g_lock and r->lock
 * (and the leaves below), and those are leaves towards the program: no
 * section under rec_g_lock or r->lock calls malloc, calloc, realloc or
 * free (the program's allocator, which may wait for a lock of the
 * program), waits for w_lock, or calls anything that does (pthread_create,
 * pthread_atfork).  What they need is allocated before the lock is taken
 * and swapped in under it, or mapped (mmap: a system call, no lock of the
 * program): thread buffers (thread.c), the string table and the strings'
 * bytes (intern.c: a lookup under the lock, the room made without it).  A
 * declared type is bound under them and given to the writer by the
 * background thread (types.c rec_type_bind_declared, bg.c step 9).  The
 * preload library also runs every once-only set-up (type declarations,
 * TLS keys, fork handlers, the lock names' symbol tables) in its
 * constructor, before the program has threads (preload.c init_eagerly).
 * With glibc's malloc the hazard does not arise: its arena locks are
 * internal (not pthread_mutex_lock, never interposed) and a thread inside
 * it never calls out while holding them, so a holder of our locks that
 * calls glibc's malloc always gets through; the rule is kept all the same.
 * Known exceptions: rec_report() may call the program's on_error under
 * them (open's step 8); a flight recorder's open registers its atexit
 * handler under rec_g_lock (rec_flight_opened).  The fork handler holds
 * them across the fork (atfork_prepare), and g_dl_lock (thread.c) too:
 * the preload library registers it first of all in its constructor,
 * before the program's allocator can register its own (jemalloc does at
 * its first call), so the allocator's prepare handler has taken its locks
 * before ours waits for any of ours; nothing done under g_dl_lock (inside
 * dl_iterate_phdr) calls malloc either (stack_cfi.c sorts without qsort,
 * which allocates: tests/cli/preload_alloc_fork.sh).  A program that
 * links librec and registers fork handlers before it opens a recorder
 * still has its handlers run after ours.
 *
 * Leaves, never held while taking another: registry_lock (metrics.c), the
 * sampler's reg_lock (sampler.c: its list of sampled threads and their
 * timers), g_install_lock (crash.c: installing the fatal-signal handlers),
 * refresh_lock (stack_cfi.c: building the unwind tables; the loader's lock
 * is taken under it by dl_iterate_phdr, so it is never taken under reg_lock).
 * The emit path (recorder.h's inline rec_emit_*) takes no lock: a thread's
 * first emit to a recorder registers it (rec_g_lock, then r->lock), and a
 * dynamic string is interned under r->lock.  The preload library's
 * names_lock (lock_names.c) is held while the symbolizer allocates (a
 * module loaded after start): a thread never waits for it more than 50 ms
 * (then it names the lock by its address, counted).
 */
/* rec_g_lock guards the list of open recorders (rec_g_open, linked by
 * g_next), the default recorder, the open generation (rec_g_gen: bumped by
 * every open, so a thread's cached buffer of a closed recorder is known
 * stale), the process-wide declared types and the retired type entries. */
extern pthread_mutex_t rec_g_lock;
extern rec_recorder *rec_g_open;
extern rec_recorder *rec_g_default; /* stored with release (rec_recorder_default) */
extern uint64_t rec_g_gen;
extern rec_type_entry *rec_g_declared;
extern rec_type_entry *rec_g_retired;

/* ---- small helpers ------------------------------------------------------------ */
static inline uint64_t rec_ns_to_ticks(uint64_t ns, uint64_t freq)
{
	return (uint64_t)((unsigned __int128)ns * freq / 1000000000u);
}

/* v as a varint in the first bytes of *enc (the 8 bytes an emit copies);
 * returns its length. */
static inline size_t rec_varint_enc8(uint64_t v, uint64_t *enc)
{
	uint8_t b[REC_VARINT_MAX] = { 0 };
	size_t n = rec_varint_put(b, v);
	memcpy(enc, b, 8);
	return n;
}

/* r's clock now, in r's ticks (async-signal-safe unless r's clock is a
 * callback that is not). */
static inline uint64_t rec_now_ticks(rec_recorder *r)
{
	if (r->clock_kind == REC_CLOCK_CALLBACK)
		return r->clock(r->clock_opaque);
	if (r->clock_kind == REC_CLOCK_TSC)
		return rec_clock_tsc();
	return rec_clock_mono_ns();
}

/* The recorder's futex words (r->wake, r->crash_done, a ring's wake word):
 * wake up to n waiters; wait while *word is val, at most timeout_ns.  Both
 * are one system call, async-signal-safe. */
static inline void rec_futex_wake(uint32_t *word, int n)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

static inline void rec_futex_wait(uint32_t *word, uint32_t val, uint64_t timeout_ns)
{
	struct timespec ts = { (time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u) };
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

/* Wake r's background thread (one system call, none when already woken;
 * async-signal-safe). */
static inline void rec_wake_bg(rec_recorder *r)
{
	if (__atomic_exchange_n(&r->wake, 1u, __ATOMIC_ACQ_REL) == 0)
		rec_futex_wake(&r->wake, 1);
}

/* ---- threads (thread.c) ------------------------------------------------------- */
/* rec_thread_global_init: the process-wide set-up, once (TLS key with the
 * thread-exit handler, fork handlers, membarrier registration).
 * rec_tbuf_free: unmap and free a thread buffer.  rec_tbuf_reset: a drained
 * buffer of an exited thread made to look like a new one, its ring kept
 * (the background thread, before it goes on the free list).
 * rec_process_barrier: a full memory barrier on every thread of the process
 * that runs now. */
void rec_thread_global_init(void);
void rec_tbuf_free(rec_tbuf_full *b);
void rec_tbuf_reset(rec_tbuf_full *b);
void rec_process_barrier(void);

/* ---- output and flight mode (output.c) -------------------------------------- */
/* The sink the writer calls (opaque: r; with w_lock held): rec_out_write,
 * rec_out_flush; flight mode's store instead of a sink: rec_flight_write.
 * The background thread, no lock held: rec_out_check_removed (reopen a
 * removed file), rec_out_truncate (cut the file back to its last whole
 * chunk), rec_wf_deliver (queued write-failure reports to on_error).
 * rec_flight_dump: the kept chunks to path (NULL: r's own).
 * rec_flight_opened (caller holds rec_g_lock; r is a flight recorder): the
 * at-exit dump, the dump signal when r may own it; rec_flight_closing:
 * r's dump signal handler goes. */
int rec_out_write(void *opaque, const void *buf, size_t len);
int rec_out_flush(void *opaque);
int rec_flight_write(void *opaque, const void *buf, size_t len);
void rec_out_check_removed(rec_recorder *r);
void rec_out_truncate(rec_recorder *r);
void rec_wf_deliver(rec_recorder *r);
void rec_tally_add(rec_type_tally *t, uint32_t id, uint64_t n);
void rec_wf_merge(rec_wf_event *into, const rec_wf_event *e);
rec_status rec_flight_dump(rec_recorder *r, const char *path);
void rec_flight_opened(rec_recorder *r, uint32_t flags);
void rec_flight_closing(rec_recorder *r);
/* The dump signal: pending (set by its handler, atomic) and the recorder
 * that installed it; a fork child clears both. */
extern int rec_g_dump_pending;
extern rec_recorder *rec_g_sig_owner;
/* A fork child: no dump signal handler is running (output.c). */
void rec_flight_atfork_child(void);

/* ---- the background thread's round (bg.c, stack_symbolize.c) ---------------- */
/* What a round of the background thread found to define in the writer
 * before the records that refer to it: frames and modules of new stacks
 * (rec_bg_symbolize), strings, threads, and the threads to retire. */
typedef struct rec_pending_frame {
	uint64_t id, fn, module, module_off, fn_off;
	/* 1.2 frame source: flags, file string, line, and inl_n inline frames
	 * at pd->inl[inl_off] (all 0: none to define) */
	uint64_t file;
	uint32_t flags, line, inl_off, inl_n;
} rec_pending_frame;
typedef struct rec_pending_module {
	uint64_t id, path, build_id, base;
} rec_pending_module;

typedef struct rec_pending_string {
	const char *s; /* the interned bytes (never move or go before close) */
	size_t len;
} rec_pending_string;
typedef struct rec_pending_thread {
	uint64_t id, os_tid, name_id;
	char name[16];
} rec_pending_thread;

typedef struct rec_bg_pending {
	rec_pending_frame *frames;
	size_t nframes, cframes;
	uint64_t drained;        /* records this round drained (a busy round resolves no sources) */
	bool sources_all;        /* a dump or flush was asked for: resolve every source now */
	rec_pending_frame *srcs; /* frame sources to define (1.2): id, file, flags, line, inl_* */
	size_t nsrcs, csrcs;
	rec_frame_inline *inl;   /* their inline frames */
	size_t ninl, cinl;
	rec_pending_module *mods;
	size_t nmods, cmods;
	uint8_t *mod_defined; /* by module index */
	size_t mod_defined_cap;
	rec_pending_string *strs; /* strings and threads to define this round */
	size_t cstrs;
	rec_pending_thread *thrs;
	size_t nthrs, cthrs;
	uint64_t *retire;     /* pairs: thread id, name id of reclaimed threads */
	size_t nretire, cretire;
} rec_bg_pending;

/* The background thread (bg.c): its body, a round's append of staging to
 * the writer, and a request from another thread (REQ_*, waits until done;
 * dump_path: REQ_DUMP's path, NULL for r's). */
#define REQ_FLUSH 0x1u
#define REQ_DUMP 0x2u
#define REQ_PERIODIC 0x4u
void *rec_bg_main(void *arg);
void rec_bg_append(rec_recorder *r, uint64_t records);
rec_status rec_bg_request(rec_recorder *r, uint32_t flags, const char *dump_path);

/* pc -> frame id of the stacks symbolized so far (stack_symbolize.c). */
typedef struct rec_frame_map rec_frame_map;
rec_frame_map *rec_frame_map_new(void);
void rec_frame_map_free(rec_frame_map *m);
uint64_t rec_frame_map_get(const rec_frame_map *m, uintptr_t k);
/* Symbolize the pcs of stacks interned since the last round (strings get
 * interned, modules/frames queued in pd).  Returns the last stack id to
 * define. */
uint64_t rec_bg_symbolize(rec_recorder *r, rec_bg_pending *pd);
/* Tests only (NULL otherwise): the background thread calls it between
 * symbolizing a round's stacks and defining them, so a test can publish a
 * stack in that window as a preempted thread would. */
extern void (*rec_test_after_symbolize_)(rec_recorder *r);
/* Tests only (0 otherwise): how long the symbolizer's DWARF is kept after
 * the last source it resolved, instead of a minute (stack_symbolize.c);
 * and how many times it was let go. */
extern uint64_t rec_test_symbols_keep_ns_;
uint64_t rec_bg_symbols_released_(const rec_recorder *r);

/* ---- errors (recorder.c) ------------------------------------------------------ */
/* Record st as r's first error if it is; tell on_error once per status. */
void rec_report(rec_recorder *r, rec_status st, const char *msg);

/* ---- event types and settings (types.c) ----------------------------------------- */
/* rec_settings_parse: r's events list (text) into r->settings;
 * rec_settings_free frees them.  rec_type_register_open: register def with
 * r while open makes it (r not published; no lock held: it takes w_lock,
 * then r->lock).  rec_type_bind_declared: bind a declared type's entry e to
 * r (caller holds rec_g_lock and r->lock), queued on r->types_unwritten
 * for rec_types_write_pending, which the background thread calls under
 * w_lock before appending a round's records. */
rec_status rec_settings_parse(rec_recorder *r, const char *text);
void rec_settings_free(rec_recorder *r);
/* Whether r's events list leaves a type of this name on (types on by default). */
bool rec_settings_enabled(const rec_recorder *r, const char *name);
rec_status rec_type_register_open(rec_recorder *r, const rec_type *def, uint64_t threshold_ns,
				  uint32_t flags, rec_event_type **out);
void rec_types_write_pending(rec_recorder *r);
rec_status rec_type_bind_declared(rec_recorder *r, rec_type_entry *e);

/* ---- ring (ring.c) ---------------------------------------------------------- */
/* Copy every published record of b into out as interchange records; returns
 * the number of records (false on allocation failure: nothing consumed). */
bool rec_ring_drain(rec_tbuf_full *b, rec_buf *out, uint64_t *records);
/* A ring of size bytes, its first pages populated (*populated: how many);
 * NULL on failure.  rec_ring_grow: the background thread populates more of
 * live buffer b's ring once the thread has used half of what is. */
uint8_t *rec_ring_alloc(size_t size, uint64_t *populated);
void rec_ring_grow(rec_tbuf_full *b);
/* Count one dropped event of type t in b, kind REC_DK_* (owner thread or
 * its signal handler; no lock). */
void rec_drop_count(rec_tbuf_full *b, const rec_event_type *t, int kind);

/* ---- fatal signals (crash.c) ---------------------------------------------- */
#define REC_CRASH_WAIT_NS 2000000000ull /* bounded wait for the final chunk */
/* Install the handlers for r (at most one recorder owns them; the first
 * that asks).  Returns true if r owns them now. */
bool rec_crash_install(rec_recorder *r);
/* Restore the previous dispositions if r owns the handlers (still ours),
 * and wait (bounded) for a handler using r to leave. */
void rec_crash_uninstall(rec_recorder *r);
void rec_crash_atfork_child(void);
/* For the handler (async-signal-safe): the calling thread's buffer in r or
 * NULL, never registers (thread.c); a stack interned without locks
 * (intern.c); r's clock and waking the background thread are the inline
 * rec_now_ticks() and rec_wake_bg() above. */
rec_tbuf_full *rec_thread_buffer_signal(rec_recorder *r);
uint64_t rec_stack_intern_signal(rec_recorder *r, const uintptr_t *pcs, size_t n, int truncated);

/* ---- env (env.c) ---------------------------------------------------------- */
extern int rec_env_linked_; /* referenced by recorder.c so env.o is linked */
/* env.c: open the default recorder from REC_OUTPUT/REC_OPTIONS (once; its
 * library constructor calls it, and the preload library's before that);
 * record = 0: never open it in this process. */
void rec_env_start_(int record);
/* env.c: start duration='s timer for the recording rec_env_start_ opened
 * (once; env.c's constructor calls it, the preload library first, once its
 * interposers record). */
void rec_env_start_duration_(void);
/* env.c: in a fork child (forks=on), open the child's own recording, into
 * REC_OUTPUT's path with the child's pid inserted; 1 if it records. */
int rec_env_fork_child_(void);
/* env.c: close the recorder REC_OUTPUT opened, as at exit (the preload
 * library's _exit). */
void rec_env_stop_(void);
/* env.c: called (if set) just before the recording REC_OUTPUT opened is
 * closed, by exit or by the duration= timer (the preload library stops its
 * interposers recording there). */
extern void (*rec_env_stopping_)(void);
/* env.c: REC_OPTIONS said quiet=on (messages on stderr are not wanted). */
int rec_env_quiet_(void);
/* The environment variable holding the pid of the process whose preload
 * library records (set by it once its recorder is open; preload.c), and
 * the preload library's own copy of env.c (set by it before it calls
 * rec_env_start_): a librec linked into the same program sees the pid is
 * its own and writes a file beside the preload's (env.c). */
#define REC_PRELOAD_OWNER_ENV "REC_PRELOAD_RECORDING_PID"
extern int rec_env_preload_;

/* ---- intern tables (intern.c) ------------------------------------------------ */
/* Hashes of the tables (never 0): bytes; pcs with their flags. */
uint64_t rec_hash_bytes(const void *p, size_t len);
uint64_t rec_hash_pcs(const uintptr_t *pcs, size_t n, uint32_t flags);
/* Strings (intern.c: their memory is mapped, never malloc'ed, and never
 * allocated under r->lock).  rec_intern_bg: the background thread's, takes
 * r->lock, also while closing.  rec_strtab_reserve: the background thread
 * keeps headroom in the table (its slots, entries and bytes), so that the
 * threads that intern seldom map anything.  rec_strtab_free: at close.
 * rec_strtab_rehash: rehash into slots (n of them, zeroed), returns the
 * old slots. */
void rec_strtab_reserve(rec_recorder *r);
void rec_strtab_free(rec_strtab *st);
uint64_t rec_intern_bg(rec_recorder *r, const char *s);
/* rec.Process (process.c): the type; the background thread reads and interns
 * the program's names at its start (init), and puts one record into staging
 * for each chunk that has records (put, under w_lock; like rec.Dropped it is
 * not counted in the statistics' events). */
extern const rec_type rec_def_process;
void rec_process_info_init(rec_recorder *r);
void rec_process_info_put(rec_recorder *r, uint64_t ticks);
uint64_t *rec_strtab_rehash(rec_strtab *st, uint64_t *slots, size_t n);
/* Stacks (lock-free; may_yield: not in a signal handler). */
bool rec_stacktab_init(rec_stacktab *st);
void rec_stacktab_free(rec_stacktab *st);
uint64_t rec_stack_intern(rec_stacktab *st, const uintptr_t *pcs, size_t n, uint32_t flags,
			  int may_yield);

/* ---- misc ------------------------------------------------------------------- */
int64_t rec_parse_duration_ns(const char *s, size_t len); /* -1 on error */
int64_t rec_parse_size(const char *s, size_t len);        /* -1 on error */

#endif /* LIBREC_RECORDER_INTERNAL_H */
