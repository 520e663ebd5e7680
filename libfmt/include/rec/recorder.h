/* SPDX-License-Identifier: MIT */
/*
 * recorder.h - the in-process recorder: what a C service links to get a
 * flight recording of itself.  Threads emit typed events into their own
 * buffers (no lock, no system call, no allocation after a thread's first
 * event); a background thread drains the buffers every flush interval and
 * hands the records to the chunk writer (rec.h), which compresses and writes.
 *
 *   #include <rec/recorder.h>
 *
 *   static const rec_field req_fields[] = {
 *       { "path", "Path", "", REC_TYPE_STRING, REC_UNIT_NONE },
 *       { "status", "Status", "", REC_TYPE_U32, REC_UNIT_NONE },
 *   };
 *   static const rec_type req_def = { 0, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD,
 *       "app.Request", "Request", "One HTTP request", "app", 2, req_fields };
 *   rec_event_type *T_req;
 *   rec_type_declare(&req_def, 10 * 1000 * 1000, 0, &T_req);   // default recorder
 *   ...
 *   rec_span s; rec_emit e;
 *   rec_span_begin(&s, T_req);
 *   handle(...);
 *   if (rec_span_end(&s, &e)) {               // kept only if >= threshold
 *       rec_emit_string_dyn(&e, path);
 *       rec_emit_u64(&e, status);
 *       rec_emit_commit(&e);
 *   }
 *
 * Threading: every function may be called from any thread unless said
 * otherwise.  The emit functions are not async-signal-safe except through
 * rec_emit_begin_signal() (see there).
 *
 * Lifetimes: a rec_event_type handle stays valid until the process exits,
 * also after its recorder is closed (it is then permanently disabled), so
 * threads that still emit while (or after) the host closes the recorder
 * never touch freed memory.
 *
 * Environment (read once, by a library constructor):
 *   REC_OUTPUT=PATH     open the default recorder to PATH ("%p" = the pid)
 *                       and close it at exit (atexit), like JFR's
 *                       dumponexit.  What goes wrong then is said once on
 *                       stderr, one line ("rec: REC_OUTPUT=/x/y.rec: No such
 *                       file or directory; not recording"): a file that
 *                       cannot be opened, an invalid REC_OPTIONS (nothing is
 *                       recorded; the bad option and what it accepts are
 *                       named), the first failed write.  REC_OPTIONS
 *                       quiet=1 silences it.  The API never prints: it
 *                       returns errors (and calls on_error);
 *   REC_OPTIONS=...     see rec_recorder_options_parse();
 *   REC_CLOCK=mono      use CLOCK_MONOTONIC even where the TSC is invariant.
 *
 * Linking: a program that calls no rec function (it records only through
 * REC_OUTPUT) loses a plain -lrec to the linker's --as-needed, and a static
 * link leaves the constructor out: nothing is recorded, silently.  Link with
 * `pkg-config --libs rec` (or --static --libs with -static), which gives
 * -Wl,-u,rec_recorder_default -Wl,--push-state,--no-as-needed -lrec
 * -Wl,--pop-state.
 *
 * fork(): in the child, every recorder inherited from the parent is disabled:
 * its types stop recording, close()/dump() only release what is safe and
 * never write (the parent's file is not touched).  The child may open a new
 * recorder.  REC_OUTPUT is not restarted in the child.
 */
#ifndef LIBREC_RECORDER_H
#define LIBREC_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rec_recorder rec_recorder;
typedef struct rec_event_type rec_event_type;

/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */
typedef enum {
	REC_FULL_DROP = 0, /* a full thread buffer drops the event and counts it */
	REC_FULL_WAIT = 1  /* the emitting thread waits (spin, then sleep) for room */
} rec_full_policy;

/* rec_recorder_options.flags */
#define REC_RECORDER_FLIGHT 0x1u    /* flight-recorder mode: keep recent data in memory
				     * (whole chunks, one per flush interval; the newest
				     * is always kept), write it to path on
				     * rec_recorder_dump(), the dump signal, close, and
				     * at exit if still open */
#define REC_RECORDER_DEFAULT 0x2u   /* make this the process-wide default recorder
				     * (REC_ERR_STATE if one is open) */
#define REC_RECORDER_NO_SIGNAL 0x4u /* flight mode: install no signal handler */
#define REC_RECORDER_NO_CRASH 0x8u  /* install no fatal-signal (crash) handlers; they
				     * are on by default for a recorder with a path
				     * (REC_OPTIONS crash=0 sets this) */
#define REC_RECORDER_CRASH 0x10u    /* install them also for a recorder with a sink
				     * (REC_OPTIONS crash=1) */
#define REC_RECORDER_NO_SYMBOLIZE 0x20u /* frames keep module + offset only, flagged
				     * unsymbolized (REC_OPTIONS symbolize=off):
				     * no symbol or debug file is read while
				     * recording; rec-symbolize names them later */
#define REC_RECORDER_ALL_SOURCES 0x40u /* files, lines and inline frames for
				     * every module (REC_OPTIONS symbolize=all);
				     * by default the system's libraries (under
				     * /lib, /usr/lib, ...) get names only, the
				     * program and its own libraries all three */
#define REC_RECORDER_NO_SOURCES 0x80u /* names only: no file, line or inline
				     * frame for any module (symbolize=names) */

/* Error callback: called from the recorder's background thread (or from
 * open/close), never from an emitting thread's hot path, at most once per
 * failure kind (status) per recorder. */
typedef void (*rec_error_fn)(void *opaque, rec_status status, const char *message);
/* Tick source override (tests, deterministic goldens): must be monotonic and
 * safe to call from any thread. */
typedef uint64_t (*rec_clock_fn)(void *opaque);

typedef struct rec_recorder_options {
	uint32_t struct_size;        /* sizeof(rec_recorder_options) */
	uint32_t flags;              /* REC_RECORDER_* */
	const char *path;            /* output file (flight mode: dump target);
				      * copied.  Ignored when sink is set */
	const rec_sink *sink;        /* write here instead of path (copied; its
				      * opaque must outlive the recorder) */
	uint32_t codec;              /* rec_codec.  NOTE: as rec_writer_options,
				      * 0 is REC_CODEC_NONE; the INIT macro sets zstd */
	int32_t level;               /* 0 = codec default */
	uint32_t chunk_size;         /* raw event bytes that close a chunk; 0 = writer default */
	uint32_t flush_interval_ms;  /* drain + write a chunk this often; 0 = 1000 */
	uint64_t memory_limit;       /* total bytes of thread buffers; 0 = 32 MiB */
	uint32_t thread_buffer_size; /* bytes per thread (rounded up to a power of
				      * two, min 16 KiB); 0 = 256 KiB; its pages
				      * are put in place as the thread fills it,
				      * ahead of its writes.  A thread
				      * that would exceed memory_limit gets no
				      * buffer: its events are dropped and counted.
				      * Buffers of exited threads are drained and
				      * kept for the next threads (within the limit);
				      * the background thread is woken every 32
				      * thread registrations and when more than
				      * half the limit is in use, so a thread per
				      * request does not run out of buffers */
	uint32_t full_policy;        /* rec_full_policy */
	/* Flight-recorder mode (flags & REC_RECORDER_FLIGHT). */
	uint64_t max_age_ms;         /* drop chunks older than this; 0 = no age limit */
	uint64_t max_size;           /* bytes of encoded chunks kept; 0 = 64 MiB */
	int32_t dump_signal;         /* 0 = SIGUSR2; -1 = none */
	uint32_t events_layout;      /* rec_events_layout (rec.h); 0 = split with a codec */
	/* Which event types are on and how: comma-separated entries
	 * "PATTERN[:threshold=DUR][:stack=on|off][:enabled=on|off][:throttle=RATE]",
	 * PATTERN an exact name, a prefix ending in '*', or "*"; DUR as
	 * rec_parse_duration() (rec.h): 10ms, 1.5s, 1min, 5 (seconds), 0; RATE
	 * N/UNIT (UNIT ns us ms s m h d, as JFR's
	 * throttle: at most N per UNIT, the rest dropped and counted, reason
	 * REC_DROP_THROTTLED; spec/EVENTS.md) or off.  "-PATTERN" disables.
	 * The last matching entry wins.  If the list has any enabling entry
	 * (one with no option but throttle= does not count), types that match
	 * none are off (rec.Dropped is always on).  NULL or "" = every type on with its
	 * declared threshold and stack switch.  Copied. */
	const char *events;
	/* Clock override (tests).  clock != NULL: ticks come from clock(),
	 * clock_frequency ticks per second (0 = 1e9), and anchor_wall_ns is the
	 * wall time of tick 0 (0 = now - clock()/frequency). */
	rec_clock_fn clock;
	void *clock_opaque;
	uint64_t clock_frequency;
	int64_t anchor_wall_ns;
	/* Run identity (0 = random / getpid() / now), for deterministic output. */
	uint64_t run_id;
	uint32_t pid;
	uint32_t reserved1;          /* must be zero */
	int64_t process_start_ns;
	rec_error_fn on_error;       /* may be NULL */
	void *error_opaque;
	uint64_t reserved[4];        /* must be zero */
} rec_recorder_options;

#define REC_RECORDER_OPTIONS_INIT { sizeof(rec_recorder_options), 0, NULL, NULL, REC_CODEC_ZSTD, \
	0, 0, 0, 0, 0, REC_FULL_DROP, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, \
	{0, 0, 0, 0} }

/*! rec_recorder_options_parse() :
 *  Apply a REC_OPTIONS-style string to opts: comma-separated key=value with
 *  keys codec=none|zstd|lz4, level=N, layout=split|one, chunk=SIZE, flush=DUR, memory=SIZE,
 *  buffer=SIZE, full=drop|wait, flight=on|off, maxage=DUR, maxsize=SIZE,
 *  signal=N|none, crash=on|off|1|0 (fatal-signal handlers: REC_RECORDER_CRASH /
 *  REC_RECORDER_NO_CRASH), events=LIST (LIST uses ';' instead of ',' between entries),
 *  quiet=on|off|1|0 (REC_OPTIONS only: no message on stderr; nothing in opts),
 *  symbolize=on|all|names|off (on, the default: names, and files, lines and inline
 *  frames outside the system's libraries; all: REC_RECORDER_ALL_SOURCES; names:
 *  REC_RECORDER_NO_SOURCES; off: REC_RECORDER_NO_SYMBOLIZE),
 *  SIZE like 64MiB, 512KiB, 4096; DUR as rec_parse_duration() (rec.h): 500ms,
 *  1.5s, 1min, 2 (a bare number is seconds).
 *  String values are stored in storage (size bytes), which must outlive
 *  opts.  @return REC_OK or REC_ERR_INVALID_ARG with errbuf (may be NULL)
 *  naming the bad option and what its key accepts ("bad option 'codec=gzip'
 *  (codec is none, zstd or lz4)"). */
REC_API rec_status rec_recorder_options_parse(rec_recorder_options *opts, const char *text,
					      char *storage, size_t storage_size,
					      char *errbuf, size_t errbuf_size);

/* ------------------------------------------------------------------------ */
/* Open, close, dump                                                        */
/* ------------------------------------------------------------------------ */

/*! rec_recorder_open() :
 *  Start a recording; opts must give a path or a sink.  Starts the
 *  background thread.  A file that exists at the path is replaced here by a
 *  new empty file (created beside it as PATH.rec-new.PID and renamed over
 *  it, so the earlier bytes are gone from the path even if the process dies
 *  at once); the background thread frees the old file's blocks, so the
 *  program's start-up does not wait for that.  A file with other hard links,
 *  or reached through a symbolic link, keeps its inode and is emptied by the
 *  background thread before it writes.  On success
 *  *out owns the recorder; rec_recorder_close() ends it.
 *  @return REC_OK, REC_ERR_INVALID_ARG (bad options, reserved not zero),
 *          REC_ERR_IO (cannot create the file; errno says why), REC_ERR_NOMEM, REC_ERR_STATE
 *          (REC_RECORDER_DEFAULT while a default recorder is open). */
REC_API rec_status rec_recorder_open(rec_recorder **out, const rec_recorder_options *opts);

/*! rec_recorder_close() :
 *  Disable every type of r, wait for events being emitted right now to be
 *  committed, drain every buffer, write the last chunk flagged FINAL (flight
 *  mode: write the retained data to the path), stop the background thread
 *  and free.  Safe while other threads still emit: their emits after this
 *  point return false (not recorded, not counted as emitted); every event
 *  whose rec_emit_begin() returned true is in the file.  A thread stopped
 *  inside an emit (between begin and commit) for more than ~2 s is not
 *  waited for.  Must not be called from a periodic callback or listener.
 *  NULL is a no-op.
 *  @return the first error the recording met, or REC_OK. */
REC_API rec_status rec_recorder_close(rec_recorder *r);

/*! rec_recorder_dump() :
 *  Flight mode: write the retained chunks plus everything buffered now to
 *  path (NULL = the options' path) as a normal recording.  Normal mode:
 *  flush (path must be NULL).  Blocks until done. */
REC_API rec_status rec_recorder_dump(rec_recorder *r, const char *path);

/*! rec_recorder_flush() : drain every buffer and write a chunk now; blocks
 *  until the background thread has done it.
 *  @return REC_OK, or REC_ERR_IO when writing fails (the chunk is not in the
 *          file: e.g. ENOSPC), REC_ERR_STATE (closing, or after fork()). */
REC_API rec_status rec_recorder_flush(rec_recorder *r);

/*! rec_recorder_default() : the process-wide default recorder (opened with
 *  REC_RECORDER_DEFAULT or from REC_OUTPUT), or NULL. */
REC_API rec_recorder *rec_recorder_default(void);

/*! rec_recorder_run_id() : the Run_Id written in r's chunks. */
REC_API uint64_t rec_recorder_run_id(const rec_recorder *r);
/*! rec_recorder_tick_frequency() : ticks per second of r's timestamps.  With
 *  the TSC this is a first 200 us calibration, re-measured over the longer
 *  baseline (at least 5 ms since the process's first recorder opened) until
 *  the first chunk is built, then fixed for the recording. */
REC_API uint64_t rec_recorder_tick_frequency(const rec_recorder *r);

/* Running totals. */
typedef struct rec_recorder_stats {
	uint64_t events;        /* records handed to the writer (rec.Dropped included) */
	uint64_t dropped;       /* events lost: full buffers, no buffer, writer errors */
	uint64_t threads;       /* threads registered */
	uint64_t chunks;        /* chunks written (writer stats) */
	uint64_t bytes;         /* bytes written (writer stats) */
	uint64_t buffer_bytes;  /* thread buffer memory allocated now */
	uint64_t drains;        /* background drain rounds */
	uint64_t background_cpu_ns; /* CPU time the background thread used so far:
				 * draining, chunk encoding, compression, writes */
} rec_recorder_stats;
REC_API void rec_recorder_get_stats(rec_recorder *r, rec_recorder_stats *st);

/* ------------------------------------------------------------------------ */
/* Event types                                                              */
/* ------------------------------------------------------------------------ */
/* rec_recorder_register_type()/rec_type_declare() flags.  (Not REC_TYPE_*:
 * those are rec.h's field types, and REC_TYPE_STACK is the stack field.) */
#define REC_DECLARE_OFF 0x1u   /* off unless the options' events list enables it */
#define REC_DECLARE_STACK 0x2u /* capture a stack trace (needs REC_EVENT_HAS_STACK) */

/* Type ids 1..255 are reserved for the built-in rec.* types (spec/EVENTS.md);
 * def->id = 0 lets the recorder choose (>= 256). */
#define REC_TYPE_ID_USER_MIN 256u
/* The recorder's own built-in types (spec/EVENTS.md), always declared. */
#define REC_TYPE_ID_THREAD_START 1u /* rec.ThreadStart */
#define REC_TYPE_ID_THREAD_END 2u   /* rec.ThreadEnd */
#define REC_TYPE_ID_DROPPED 3u      /* rec.Dropped */
/* rec.Dropped "reason" values */
#define REC_DROP_FULL 0u      /* the thread's buffer was full */
#define REC_DROP_NO_BUFFER 1u /* memory limit reached: the thread got no buffer */
#define REC_DROP_NESTED 2u    /* begin inside another emit of the thread (signal) */
/* the writer rejected the record: its fields do not match the type, or it names a
 * thread, string or stack id the recorder never defined */
#define REC_DROP_REJECTED 3u
#define REC_DROP_WRITE_FAILED 4u /* in a chunk that could not be written (rec.WriteFailed) */
#define REC_DROP_THROTTLED 5u    /* over the type's throttle rate (events list "throttle=") */
#define REC_TYPE_ID_CRASH 4u        /* rec.Crash: a fatal signal (spec/EVENTS.md) */
#define REC_TYPE_ID_WRITE_FAILED 5u /* rec.WriteFailed: output writes failed, then recovered */
#define REC_TYPE_ID_PROCESS 6u      /* rec.Process: the recorded program, in every chunk */

/*! rec_recorder_register_type() :
 *  Declare an event type in r.  def (and what it points to) is copied.
 *  threshold_ns: duration events shorter than this are not kept.  The
 *  options' events list may override threshold, stack switch and on/off.
 *  *out: a handle valid until process exit.
 *  @return REC_OK, REC_ERR_INVALID_ARG (bad def: fields, reserved id, duplicate
 *          name or id), REC_ERR_NOMEM, REC_ERR_STATE (r closed). */
REC_API rec_status rec_recorder_register_type(rec_recorder *r, const rec_type *def,
					      uint64_t threshold_ns, uint32_t flags,
					      rec_event_type **out);

/*! rec_type_declare() :
 *  Declare a process-wide type that records into the default recorder: the
 *  handle is enabled while a default recorder is open (now or later) and
 *  disabled otherwise (an emit then costs one load and a branch).  def must
 *  stay valid for the process lifetime (typically static).  Built-in event
 *  sources use this.  Declaring the same def twice returns the same handle. */
REC_API rec_status rec_type_declare(const rec_type *def, uint64_t threshold_ns, uint32_t flags,
				    rec_event_type **out);

/*! rec_event_type_id() : the type id r writes (0 if not bound). */
REC_API uint32_t rec_event_type_id(const rec_event_type *t);

/* Default-recorder listener: fn(r, 1, opaque) right after a default recorder
 * opened (from its opening thread), fn(r, 0, opaque) when it starts closing
 * (before the final drain, so events emitted by fn are kept).  Registered
 * once for the process; if a default recorder is open already, fn(r, 1, ..)
 * is called immediately.  Built-ins use it to start/stop samplers. */
typedef void (*rec_default_listener)(rec_recorder *r, int opened, void *opaque);
REC_API rec_status rec_default_listen(rec_default_listener fn, void *opaque);

/* Periodic callback run by r's background thread every period_ms (>= the
 * flush interval granularity), before each drain; it emits with the normal
 * API (counters, gauges, process statistics).  Also run once at close before
 * the final drain.  A run may come up to an eighth of period_ms early, in a
 * wake-up the thread has for another reason (the flush, another task), so
 * that an idle recorder wakes once for all of them. */
typedef void (*rec_periodic_fn)(rec_recorder *r, void *opaque);
REC_API rec_status rec_recorder_add_periodic(rec_recorder *r, rec_periodic_fn fn, void *opaque,
					     uint32_t period_ms);
/* Change the period of the callback (fn, opaque) added to r to period_ms
 * (> 0); its next run is period_ms from now when the period changes (a
 * callback may change its own).  REC_ERR_STATE: r has no such callback. */
REC_API rec_status rec_recorder_set_periodic(rec_recorder *r, rec_periodic_fn fn, void *opaque,
					     uint32_t period_ms);

/* ------------------------------------------------------------------------ */
/* Strings, threads                                                         */
/* ------------------------------------------------------------------------ */
/* A string pool reference (a distinct type so the compiler catches a number
 * passed where a string is expected).  {0} is the null string. */
typedef struct rec_str { uint64_t id; } rec_str;

/*! rec_recorder_intern() :
 *  The stable string id of s in r (interned once; thread-safe; takes a lock
 *  and may allocate: call it outside hot paths and keep the result).
 *  Returns {0} on failure (NULL s, out of memory, r closed). */
REC_API rec_str rec_recorder_intern(rec_recorder *r, const char *s);
REC_API rec_str rec_recorder_intern_len(rec_recorder *r, const char *s, size_t len);

/*! rec_recorder_attach_thread() :
 *  Register the calling thread with r now (what its first event would do:
 *  buffer, OS tid, pthread name, rec.ThreadStart).  Needed before the thread
 *  emits from a signal handler.  @return REC_OK or an error. */
REC_API rec_status rec_recorder_attach_thread(rec_recorder *r);

/*! rec_recorder_thread_id() : the calling thread's thread-pool id in r
 *  (registering it if needed), 0 on failure.  For REC_TYPE_THREAD fields. */
REC_API uint64_t rec_recorder_thread_id(rec_recorder *r);

/* ------------------------------------------------------------------------ */
/* Emitting events                                                          */
/*                                                                          */
/*   rec_emit e;                                                            */
/*   if (rec_emit_begin(&e, T)) {       // false: type off / buffer full    */
/*       rec_emit_string(&e, s);        // exactly the type's fields, in    */
/*       rec_emit_u64(&e, n);           // declared order, one put each     */
/*       rec_emit_commit(&e);           // or rec_emit_cancel(&e)           */
/*   }                                                                      */
/*                                                                          */
/* Put functions by field type: bool/u8..u64/timestamp/duration:           */
/* rec_emit_u64; i8..i64: rec_emit_i64; f32: rec_emit_f32; f64:             */
/* rec_emit_f64; string: rec_emit_string (interned) or rec_emit_string_dyn; */
/* thread: rec_emit_thread; stack: rec_emit_stack_ref; text, blob:         */
/* rec_emit_bytes (values longer than REC_EMIT_MAX_BYTES are truncated).    */
/* A record whose fields do not match its type is rejected by the writer   */
/* and counted as dropped; the error callback reports it.                   */
/* Between begin and commit/cancel the thread must not begin another event */
/* of the same recorder (a nested begin returns false and counts a drop).   */
/* ------------------------------------------------------------------------ */
#define REC_EMIT_MAX_BYTES 4096u /* bytes per text/blob field value */

/* ---- private: layouts the inline emit path needs.  Not API. ----------- */
struct rec_tbuf_;
struct rec_event_type {
	uint32_t enabled;          /* the only thing a disabled emit reads */
	uint32_t flags;            /* REC_EVENT_HAS_* of the definition, REC_EVENT_THROTTLED_ */
	uint64_t gen;              /* recorder generation this handle writes to */
	uint64_t id_enc;           /* type id, uvarint-encoded, little-endian bytes */
	uint32_t id_len;
	uint32_t max_size;         /* bound on the record bytes (+ framing) */
	uint64_t threshold_ticks;
	uint32_t stack;            /* capture stacks */
	uint32_t clock_kind;       /* 0 TSC, 1 CLOCK_MONOTONIC ns, 2 callback */
	rec_clock_fn clock;
	void *clock_opaque;
	void *priv_;               /* recorder-private */
};

/* In rec_event_type.flags: the events list throttles the type. */
#define REC_EVENT_THROTTLED_ 0x80000000u

struct rec_tbuf_ {
	/* written by the owning thread only */
	uint8_t *base;
	uint64_t mask;             /* capacity - 1 (0: no buffer, every event drops) */
	uint64_t head;             /* next write position (monotonic) */
	uint64_t wlimit;           /* head may reach this without a check */
	uint64_t gen;              /* recorder generation */
	uint64_t kick_at;          /* head at which to wake the background thread */
	uint64_t thread_enc;       /* thread pool id, uvarint-encoded */
	uint32_t thread_len;
	uint32_t busy;             /* inside begin..commit (atomic) */
	uint64_t dropped;          /* unused (drops are counted by type, in the recorder) */
	uint64_t dropped_nested;   /* unused (as dropped) */
	uint64_t pub_head;         /* published head (release store at commit) */
	uint64_t pad_[4];
	/* written by the background thread */
	uint64_t tail __attribute__((aligned(64)));
	uint64_t pad2_[7];
};

#if defined(__GNUC__)
#define REC_INLINE_ static inline __attribute__((always_inline))
#define REC_LIKELY_(x) __builtin_expect(!!(x), 1)
#define REC_UNLIKELY_(x) __builtin_expect(!!(x), 0)
#else
#define REC_INLINE_ static inline
#define REC_LIKELY_(x) (x)
#define REC_UNLIKELY_(x) (x)
#endif

/* The calling thread's most recently used buffer.  librec's own code uses
 * it through a hidden alias (REC_TLS_TBUF_): a second copy of librec in the
 * process (the preload library, under a program that links librec.a and
 * exports its symbols) must not share this copy's slot. */
REC_API extern __thread struct rec_tbuf_ *rec_tls_tbuf_ __attribute__((tls_model("initial-exec")));
#ifdef REC_BUILDING_LIBRARY
extern __thread struct rec_tbuf_ *rec_tls_tbuf_self_
	__attribute__((visibility("hidden"), tls_model("initial-exec")));
#define REC_TLS_TBUF_ rec_tls_tbuf_self_
#else
#define REC_TLS_TBUF_ rec_tls_tbuf_
#endif

REC_API uint64_t rec_ticks_slow_(const rec_event_type *t);
REC_API struct rec_tbuf_ *rec_emit_thread_slow_(rec_event_type *t, int in_signal);
REC_API bool rec_emit_reserve_slow_(struct rec_tbuf_ *b, rec_event_type *t, uint32_t need,
				    int in_signal);
REC_API void rec_emit_kick_(struct rec_tbuf_ *b);
/* A nested begin (counted as dropped, reason nested, by type). */
REC_API void rec_emit_drop_nested_(struct rec_tbuf_ *b, rec_event_type *t);
/* Throttled type: true if the event fits the type's budget for the window
 * of ticks, else counts it as dropped (reason throttled) and returns false. */
REC_API bool rec_emit_throttle_(struct rec_tbuf_ *b, rec_event_type *t, uint64_t ticks);
REC_API uint64_t rec_emit_capture_stack_(struct rec_tbuf_ *b, rec_event_type *t, int in_signal);
REC_API uint64_t rec_emit_intern_pcs_(struct rec_tbuf_ *b, const uintptr_t *pcs, size_t n, int truncated);
REC_API uint64_t rec_emit_intern_dyn_(struct rec_tbuf_ *b, const char *s, size_t len);
/* ---- end of private part ----------------------------------------------- */

typedef struct rec_emit {
	uint8_t *p;              /* next byte */
	uint8_t *rec;            /* the record's 2-byte length slot */
	struct rec_tbuf_ *b;
	rec_event_type *t;
} rec_emit;

/*! rec_type_ticks() : now, in the ticks of t's recorder (0 if t is off).
 *  Built-ins time waits with it and pass the ticks to rec_emit_begin_at(). */
REC_INLINE_ uint64_t rec_type_ticks(const rec_event_type *t)
{
#if defined(__x86_64__) || defined(__i386__)
	if (REC_LIKELY_(t->clock_kind == 0)) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
	}
#endif
	return rec_ticks_slow_(t);
}

/*! rec_type_enabled() : one load and a branch. */
REC_INLINE_ bool rec_type_enabled(const rec_event_type *t)
{
	return REC_UNLIKELY_(__atomic_load_n(&t->enabled, __ATOMIC_RELAXED) != 0);
}

REC_INLINE_ uint8_t *rec_emit_varint_(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Common begin: ticks/duration given.  in_signal: never take a slow path
 * that locks or allocates. */
REC_INLINE_ bool rec_emit_begin_full_(rec_emit *e, rec_event_type *t, uint64_t ticks,
					uint64_t duration, int in_signal, const uintptr_t *pcs,
					size_t npcs, int truncated)
{
	struct rec_tbuf_ *b = REC_TLS_TBUF_;
	if (REC_UNLIKELY_(b == NULL || b->gen != t->gen)) {
		b = rec_emit_thread_slow_(t, in_signal);
		if (b == NULL)
			return false;
	}
	const uint64_t gen = b->gen;
	if (REC_UNLIKELY_(__atomic_load_n(&b->busy, __ATOMIC_RELAXED))) {
		rec_emit_drop_nested_(b, t);
		return false;
	}
	__atomic_store_n(&b->busy, 1u, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* Re-check after announcing: close() disables, then waits for busy == 0. */
	if (REC_UNLIKELY_(!__atomic_load_n(&t->enabled, __ATOMIC_ACQUIRE) ||
			  __atomic_load_n(&t->gen, __ATOMIC_RELAXED) != gen)) {
		__atomic_store_n(&b->busy, 0u, __ATOMIC_RELEASE);
		return false;
	}
	if (REC_UNLIKELY_(t->flags & REC_EVENT_THROTTLED_) && !rec_emit_throttle_(b, t, ticks)) {
		__atomic_store_n(&b->busy, 0u, __ATOMIC_RELEASE);
		return false;
	}
	if (REC_UNLIKELY_(b->head + t->max_size > b->wlimit) &&
	    !rec_emit_reserve_slow_(b, t, t->max_size, in_signal)) {
		__atomic_store_n(&b->busy, 0u, __ATOMIC_RELEASE);
		return false;
	}
	uint8_t *rec = b->base + (b->head & b->mask);
	uint8_t *p = rec + 2;
	memcpy(p, &t->id_enc, 8);
	p += t->id_len;
	p = rec_emit_varint_(p, ticks);
	uint32_t fl = t->flags;
	if (fl & REC_EVENT_HAS_DURATION)
		p = rec_emit_varint_(p, duration);
	if (fl & REC_EVENT_HAS_THREAD) {
		memcpy(p, &b->thread_enc, 8);
		p += b->thread_len;
	}
	if (fl & REC_EVENT_HAS_STACK) {
		uint64_t sid = 0;
		if (pcs)
			sid = rec_emit_intern_pcs_(b, pcs, npcs, truncated);
		else if (t->stack)
			sid = rec_emit_capture_stack_(b, t, in_signal);
		p = rec_emit_varint_(p, sid);
	}
	e->p = p;
	e->rec = rec;
	e->b = b;
	e->t = t;
	return true;
}

/*! rec_emit_begin() : start an instant event now.  @return false if the type
 *  is off or the event was dropped (nothing to do then). */
REC_INLINE_ bool rec_emit_begin(rec_emit *e, rec_event_type *t)
{
	if (REC_LIKELY_(!__atomic_load_n(&t->enabled, __ATOMIC_RELAXED)))
		return false;
	return rec_emit_begin_full_(e, t, rec_type_ticks(t), 0, 0, NULL, 0, 0);
}

/* The checks of the begin functions with a start and an end (type on, and a
 * duration type's threshold), then rec_emit_begin_full_(). */
REC_INLINE_ bool rec_emit_begin_span_(rec_emit *e, rec_event_type *t, uint64_t start_ticks,
				       uint64_t end_ticks, int signal, const uintptr_t *pcs,
				       size_t npcs, int truncated)
{
	if (REC_LIKELY_(!__atomic_load_n(&t->enabled, __ATOMIC_RELAXED)))
		return false;
	uint64_t d = end_ticks > start_ticks ? end_ticks - start_ticks : 0;
	if ((t->flags & REC_EVENT_HAS_DURATION) && d < t->threshold_ticks)
		return false;
	return rec_emit_begin_full_(e, t, start_ticks, d, signal, pcs, npcs, truncated);
}

/*! rec_emit_begin_at() : start an event that began at start_ticks and ended
 *  at end_ticks (rec_type_ticks()); for a duration type it is kept only if
 *  end - start >= the type's threshold. */
REC_INLINE_ bool rec_emit_begin_at(rec_emit *e, rec_event_type *t, uint64_t start_ticks,
				     uint64_t end_ticks)
{
	return rec_emit_begin_span_(e, t, start_ticks, end_ticks, 0, NULL, 0, 0);
}

/*! rec_emit_begin_signal() : as rec_emit_begin_at() (end_ticks 0 = instant
 *  at start_ticks), async-signal-safe: the thread must have emitted or been
 *  attached before (rec_recorder_attach_thread()), stack capture does not
 *  lock, and an event that interrupts an emit of the same thread is dropped
 *  and counted. */
REC_INLINE_ bool rec_emit_begin_signal(rec_emit *e, rec_event_type *t, uint64_t start_ticks,
					 uint64_t end_ticks)
{
	return rec_emit_begin_span_(e, t, start_ticks, end_ticks, 1, NULL, 0, 0);
}

/*! rec_emit_begin_signal_pcs() : as rec_emit_begin_signal(), with the stack
 *  given as captured entries (e.g. rec_stack_capture_ucontext() in a SIGPROF
 *  handler; leaf first, at most 128 used) instead of captured here.  The
 *  stack is interned without locks.  For a type with REC_EVENT_HAS_STACK. */
REC_INLINE_ bool rec_emit_begin_signal_pcs(rec_emit *e, rec_event_type *t, uint64_t start_ticks,
					     uint64_t end_ticks, const uintptr_t *pcs, size_t npcs,
					     int truncated)
{
	return rec_emit_begin_span_(e, t, start_ticks, end_ticks, 1, pcs, npcs, truncated);
}

/*! rec_emit_begin_pcs() : as rec_emit_begin_at(), with the stack given as
 *  captured entries (leaf first, at most 128 used) instead of captured
 *  here; npcs = 0 writes Stack 0 (no stack), for an event of a stack type
 *  that no code location stands for.  For a type with REC_EVENT_HAS_STACK. */
REC_INLINE_ bool rec_emit_begin_pcs(rec_emit *e, rec_event_type *t, uint64_t start_ticks,
				      uint64_t end_ticks, const uintptr_t *pcs, size_t npcs)
{
	static const uintptr_t none_[1] = { 0 };
	return rec_emit_begin_span_(e, t, start_ticks, end_ticks, 0, pcs ? pcs : none_,
				    pcs ? npcs : 0, 0);
}

REC_INLINE_ void rec_emit_u64(rec_emit *e, uint64_t v) { e->p = rec_emit_varint_(e->p, v); }
REC_INLINE_ void rec_emit_i64(rec_emit *e, int64_t v)
{
	e->p = rec_emit_varint_(e->p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}
REC_INLINE_ void rec_emit_bool(rec_emit *e, bool v) { *e->p++ = v ? 1 : 0; }
REC_INLINE_ void rec_emit_f64(rec_emit *e, double v)
{
	uint64_t u;
	memcpy(&u, &v, 8);
	for (int i = 0; i < 8; i++)
		*e->p++ = (uint8_t)(u >> (8 * i));
}
REC_INLINE_ void rec_emit_f32(rec_emit *e, float v)
{
	uint32_t u;
	memcpy(&u, &v, 4);
	for (int i = 0; i < 4; i++)
		*e->p++ = (uint8_t)(u >> (8 * i));
}
REC_INLINE_ void rec_emit_string(rec_emit *e, rec_str s) { e->p = rec_emit_varint_(e->p, s.id); }
/* Intern a dynamic string at emit time (a per-thread cache, then a locked
 * table; a never-seen string allocates once).  NULL writes the null string. */
REC_INLINE_ void rec_emit_string_dyn(rec_emit *e, const char *s)
{
	e->p = rec_emit_varint_(e->p, s ? rec_emit_intern_dyn_(e->b, s, strlen(s)) : 0);
}
REC_INLINE_ void rec_emit_string_dyn_len(rec_emit *e, const char *s, size_t len)
{
	e->p = rec_emit_varint_(e->p, s ? rec_emit_intern_dyn_(e->b, s, len) : 0);
}
/* A thread-pool id (rec_recorder_thread_id()), 0 = none. */
REC_INLINE_ void rec_emit_thread(rec_emit *e, uint64_t thread_id) { e->p = rec_emit_varint_(e->p, thread_id); }
/* The emitting thread itself. */
REC_INLINE_ void rec_emit_self(rec_emit *e)
{
	memcpy(e->p, &e->b->thread_enc, 8);
	e->p += e->b->thread_len;
}
REC_INLINE_ void rec_emit_stack_ref(rec_emit *e, uint64_t stack_id) { e->p = rec_emit_varint_(e->p, stack_id); }
/* text or blob; truncated to REC_EMIT_MAX_BYTES. */
REC_INLINE_ void rec_emit_bytes(rec_emit *e, const void *p, size_t len)
{
	if (len > REC_EMIT_MAX_BYTES)
		len = REC_EMIT_MAX_BYTES;
	e->p = rec_emit_varint_(e->p, len);
	if (len)
		memcpy(e->p, p, len);
	e->p += len;
}

/*! rec_emit_commit() : publish the event to the background thread. */
REC_INLINE_ void rec_emit_commit(rec_emit *e)
{
	struct rec_tbuf_ *b = e->b;
	size_t len = (size_t)(e->p - e->rec) - 2;
	e->rec[0] = (uint8_t)len;
	e->rec[1] = (uint8_t)(len >> 8);
	b->head += 2 + len;
	__atomic_store_n(&b->pub_head, b->head, __ATOMIC_RELEASE);
	if (REC_UNLIKELY_(b->head >= b->kick_at))
		rec_emit_kick_(b);
	__atomic_store_n(&b->busy, 0u, __ATOMIC_RELEASE); /* close() acquires it */
}

/*! rec_emit_cancel() : abandon a begun event (nothing is recorded). */
REC_INLINE_ void rec_emit_cancel(rec_emit *e)
{
	__atomic_store_n(&e->b->busy, 0u, __ATOMIC_RELEASE);
}

/* Duration events measured by the recorder:
 *   rec_span s; rec_span_begin(&s, T); ...work...;
 *   if (rec_span_end(&s, &e)) { ...fields...; rec_emit_commit(&e); } */
typedef struct rec_span {
	rec_event_type *t;
	uint64_t start;
	int on; /* 0: the type was off at begin */
} rec_span;

REC_INLINE_ void rec_span_begin(rec_span *s, rec_event_type *t)
{
	s->t = t;
	s->on = __atomic_load_n(&t->enabled, __ATOMIC_RELAXED) != 0;
	s->start = s->on ? rec_type_ticks(t) : 0;
}

/*! rec_span_end() : true (and e begun, with start time and duration) if the
 *  span is at least the type's threshold; the caller then puts the fields
 *  and commits. */
REC_INLINE_ bool rec_span_end(rec_span *s, rec_emit *e)
{
	if (REC_LIKELY_(!s->on))
		return false;
	return rec_emit_begin_at(e, s->t, s->start, rec_type_ticks(s->t));
}

#ifdef __cplusplus
}
#endif
#endif /* LIBREC_RECORDER_H */
