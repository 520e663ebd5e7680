/* SPDX-License-Identifier: MIT */
/*
 * recorder.c - the recorder's lifecycle: open (in steps, see
 * rec_recorder_open), close, flush and dump, the default recorder and its
 * listeners, periodic callbacks, stats, the built-in types it registers.
 * The other concerns of the core are beside it (recorder_internal.h,
 * ARCHITECTURE): types.c, intern.c, thread.c, ring.c, output.c, bg.c and
 * the stack_*.c files.
 *
 * Close protocol (why a late emit never touches freed memory and every
 * accepted event is accounted for):
 *   1. close() removes r from the open list (no new thread registers), sets
 *      every type's `enabled` to 0;
 *   2. membarrier(PRIVATE_EXPEDITED) (an asymmetric fence: the emitter does
 *      `busy = 1; compiler barrier; load enabled`), then waits until no
 *      thread buffer of r has busy set: after this, every emit either saw
 *      enabled == 0 (returned false) or has committed;
 *   3. the background thread drains everything, writes rec.Dropped, closes
 *      the writer (FINAL chunk) and exits;
 *   4. each thread buffer still owned by a live thread is handed to that
 *      thread (DETACHED: it frees it on its next slow path or at exit); type
 *      handles are kept (disabled) until process exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "record/recorder_internal.h"
#include "record/stack_cfi.h"
#include "record/stack_internal.h"


REC_API __thread struct rec_tbuf_ *rec_tls_tbuf_ __attribute__((tls_model("initial-exec")));
extern __thread struct rec_tbuf_ *rec_tls_tbuf_self_
	__attribute__((alias("rec_tls_tbuf_"), visibility("hidden"), tls_model("initial-exec")));

/* What rec_g_lock guards, and the lock order of every lock of record/:
 * recorder_internal.h (LOCK ORDER). */
pthread_mutex_t rec_g_lock = PTHREAD_MUTEX_INITIALIZER;
rec_recorder *rec_g_open;
rec_recorder *rec_g_default;
uint64_t rec_g_gen;
rec_type_entry *rec_g_declared;
rec_type_entry *rec_g_retired;
#define MAX_LISTENERS 16
typedef struct listener {
	rec_default_listener fn;
	void *opaque;
} listener;
static listener g_listeners[MAX_LISTENERS];
static size_t g_nlisteners;
/* A default recorder is being opened (rec_g_lock): a second one fails. */
static int g_default_opening;


#define DEFAULT_FLUSH_MS 1000u
#define DEFAULT_MEMORY (32ull << 20)
#define DEFAULT_BUFFER (256u << 10)
#define MIN_BUFFER (16u << 10)
#define DEFAULT_MAX_SIZE (64ull << 20)

/* ---- small helpers ------------------------------------------------------- */
void rec_report(rec_recorder *r, rec_status st, const char *msg)
{
	unsigned bit = (unsigned)(-(int)st) & 63u;
	if (st == REC_OK)
		return;
	if (r->first_error == REC_OK)
		r->first_error = st;
	if (r->reported_errors & (1ull << bit))
		return;
	r->reported_errors |= 1ull << bit;
	if (r->on_error)
		r->on_error(r->error_opaque, st, msg);
}

uint64_t rec_ticks_slow_(const rec_event_type *t)
{
	if (t->clock_kind == REC_CLOCK_CALLBACK)
		return t->clock(t->clock_opaque);
	if (t->clock_kind == REC_CLOCK_TSC)
		return rec_clock_tsc();
	return rec_clock_mono_ns();
}

/* ---- built-in types ---------------------------------------------------------- */
static const rec_field thread_fields[] = {
	{ "osThreadId", "OS Thread Id", "Linux thread id (gettid)", REC_TYPE_U64, REC_UNIT_NONE },
	{ "name", "Name", "pthread name at registration", REC_TYPE_STRING, REC_UNIT_NONE },
};
static const rec_type def_thread_start = {
	REC_TYPE_ID_THREAD_START, REC_EVENT_HAS_THREAD, "rec.ThreadStart", "Thread Start",
	"A thread started recording", "rec/Threads", 2, thread_fields
};
static const rec_type def_thread_end = {
	REC_TYPE_ID_THREAD_END, REC_EVENT_HAS_THREAD, "rec.ThreadEnd", "Thread End",
	"A recorded thread exited", "rec/Threads", 2, thread_fields
};
static const rec_field dropped_fields[] = {
	{ "count", "Count", "events lost", REC_TYPE_U64, REC_UNIT_COUNT },
	{ "thread", "Thread", "thread whose events were lost", REC_TYPE_THREAD, REC_UNIT_NONE },
	{ "reason", "Reason",
	  "0 buffer full, 1 no buffer, 2 nested emit, 3 rejected, 4 write failed, 5 throttled",
	  REC_TYPE_U8, REC_UNIT_NONE },
	{ "type", "Event Type", "Type_Id of the lost events (0 = not known)", REC_TYPE_U32,
	  REC_UNIT_NONE },
};
static const rec_type def_dropped = {
	REC_TYPE_ID_DROPPED, 0, "rec.Dropped", "Dropped Events",
	"Events the recorder lost, by thread, event type and reason", "rec", 4, dropped_fields
};
static const rec_field crash_fields[] = {
	{ "signal", "Signal", "signal number (SIGSEGV 11, SIGBUS 7, SIGILL 4, SIGFPE 8, SIGABRT 6)",
	  REC_TYPE_U32, REC_UNIT_NONE },
	{ "code", "Code", "si_code: > 0 raised by the kernel (a fault), <= 0 sent (kill, raise, abort)",
	  REC_TYPE_I32, REC_UNIT_NONE },
	{ "address", "Address", "faulting address (si_addr) of a fault, else 0", REC_TYPE_U64,
	  REC_UNIT_ADDRESS },
	{ "senderPid", "Sender Pid", "pid that sent the signal (si_code <= 0), else 0", REC_TYPE_U32,
	  REC_UNIT_NONE },
	{ "osThreadId", "OS Thread Id", "Linux thread id of the crashing thread", REC_TYPE_U64,
	  REC_UNIT_NONE },
};
static const rec_type def_crash = {
	REC_TYPE_ID_CRASH, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "rec.Crash", "Crash",
	"A fatal signal reached the process; the host dies of it after this event", "rec", 5,
	crash_fields
};
static const rec_field write_failed_fields[] = {
	{ "errno", "Errno", "errno of the first failed write (0: the program's sink returned > 0)",
	  REC_TYPE_U32, REC_UNIT_NONE },
	{ "message", "Message", "what failed", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "action", "Action", "0 chunks discarded until a write succeeded, 1 file removed: reopened",
	  REC_TYPE_U8, REC_UNIT_NONE },
	{ "chunks", "Chunks", "chunks not written (action 1: written to the removed file)",
	  REC_TYPE_U64, REC_UNIT_COUNT },
	{ "events", "Events", "events in those chunks (rec.Dropped, rec.WriteFailed not counted)",
	  REC_TYPE_U64, REC_UNIT_COUNT },
	{ "bytes", "Bytes", "bytes of those chunks", REC_TYPE_U64, REC_UNIT_BYTES },
};
static const rec_type def_write_failed = {
	REC_TYPE_ID_WRITE_FAILED, REC_EVENT_HAS_DURATION, "rec.WriteFailed", "Write Failed",
	"The recording could not be written for a while (start and duration)", "rec", 6,
	write_failed_fields
};

/* ---- open / close ---------------------------------------------------------------------------- */
static void recorder_free(rec_recorder *r)
{
	if (!r)
		return;
	if (r->w)
		rec_writer_abandon(r->w);
	if (r->out.fd >= 0)
		close(r->out.fd);
	if (r->out.old_fd >= 0)
		close(r->out.old_fd);
	rec_strtab_free(&r->strs);
	rec_stacktab_free(&r->stacks);
	while (r->free_bufs) {
		rec_tbuf_full *b = r->free_bufs;
		r->free_bufs = b->rec_next;
		rec_tbuf_free(b);
	}
	free(r->periodic);
	rec_settings_free(r);
	rec_buf_free(&r->staging);
	rec_buf_free(&r->fl_pending);
	while (r->fl_head) {
		rec_fchunk *c = r->fl_head;
		r->fl_head = c->next;
		free(c);
	}
	if (r->symbolizer)
		rec_symbolizer_close(r->symbolizer);
	rec_frame_map_free(r->frame_map);
	free(r->path);
	free(r->dump_path);
	pthread_mutex_destroy(&r->lock);
	pthread_mutex_destroy(&r->w_lock);
	pthread_mutex_destroy(&r->req_lock);
	pthread_mutex_destroy(&r->dump_lock);
	pthread_mutex_destroy(&r->out.trunc_lock);
	pthread_cond_destroy(&r->req_cond);
	free(r);
}

static bool reserved_zero(const rec_recorder_options *o)
{
	for (size_t i = 0; i < 4; i++)
		if (o->reserved[i])
			return false;
	return o->events_layout <= REC_EVENTS_SPLIT && o->reserved1 == 0;
}

/* ---- open, in steps ------------------------------------------------------------------------- */
/* Step 1: o holds the caller's options (as many bytes as struct_size says,
 * the rest zero); false if they are not valid. */
static bool options_valid(const rec_recorder_options *o)
{
	return reserved_zero(o) && (o->path || o->sink) && o->codec <= REC_CODEC_LZ4 &&
	       o->full_policy <= REC_FULL_WAIT &&
	       !(o->flags & ~(REC_RECORDER_FLIGHT | REC_RECORDER_DEFAULT | REC_RECORDER_NO_SIGNAL |
			      REC_RECORDER_NO_CRASH | REC_RECORDER_CRASH |
			      REC_RECORDER_NO_SYMBOLIZE | REC_RECORDER_ALL_SOURCES |
			      REC_RECORDER_NO_SOURCES)) &&
	       !((o->flags & REC_RECORDER_FLIGHT) && !o->path) && !(o->sink && !o->sink->write);
}

/* Step 2: a new recorder with its locks and the options' limits (defaults
 * filled in), or NULL. */
static rec_recorder *recorder_new(const rec_recorder_options *o)
{
	rec_recorder *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->out.fd = -1;
	r->out.old_fd = -1;
	pthread_mutex_init(&r->lock, NULL);
	pthread_mutex_init(&r->w_lock, NULL);
	pthread_mutex_init(&r->req_lock, NULL);
	pthread_mutex_init(&r->dump_lock, NULL);
	pthread_mutex_init(&r->out.trunc_lock, NULL);
	pthread_cond_init(&r->req_cond, NULL);
	r->flags = o->flags;
	r->flush_ns = (uint64_t)(o->flush_interval_ms ? o->flush_interval_ms : DEFAULT_FLUSH_MS) * 1000000u;
	r->memory_limit = o->memory_limit ? o->memory_limit : DEFAULT_MEMORY;
	uint64_t bs = o->thread_buffer_size ? o->thread_buffer_size : DEFAULT_BUFFER;
	if (bs < MIN_BUFFER)
		bs = MIN_BUFFER;
	r->buf_size = MIN_BUFFER;
	while (r->buf_size < bs && r->buf_size < (1ull << 30))
		r->buf_size <<= 1;
	r->full_policy = o->full_policy;
	r->max_age_ns = o->max_age_ms * 1000000u;
	r->max_size = o->max_size ? o->max_size : DEFAULT_MAX_SIZE;
	r->dump_signal = o->dump_signal == 0 ? SIGUSR2 : o->dump_signal;
	r->on_error = o->on_error;
	r->error_opaque = o->error_opaque;
	r->next_type_id = REC_TYPE_ID_USER_MIN;
	return r;
}

/* Whose files, lines and inline frames the background thread resolves:
 * the flags, else REC_SYMBOLIZE_SOURCES in the environment (off, program or
 * all: for measurements, and for tests under valgrind, where reading libc's
 * DWARF takes the background thread seconds), else the program's. */
static rec_sources_mode sources_mode(uint32_t flags)
{
	if (flags & REC_RECORDER_NO_SOURCES)
		return REC_SOURCES_NONE;
	if (flags & REC_RECORDER_ALL_SOURCES)
		return REC_SOURCES_ALL;
	const char *e = getenv("REC_SYMBOLIZE_SOURCES");
	if (e && strcmp(e, "off") == 0)
		return REC_SOURCES_NONE;
	if (e && strcmp(e, "all") == 0)
		return REC_SOURCES_ALL;
	return REC_SOURCES_PROGRAM;
}

/* Step 3: r's own copy of the path, its settings (the events list), the
 * stack table, the frame map and (if it opens) the symbolizer. */
static rec_status recorder_tables(rec_recorder *r, const rec_recorder_options *o)
{
	rec_status st;
	if (o->path && !(r->path = strdup(o->path)))
		return REC_ERR_NOMEM;
	if (o->events && (st = rec_settings_parse(r, o->events)) != REC_OK)
		return st;
	if (!rec_stacktab_init(&r->stacks) || !(r->frame_map = rec_frame_map_new()))
		return REC_ERR_NOMEM;
	rec_symbolizer *sym = NULL;
	if (rec_symbolizer_open(&sym) == REC_OK) {
		rec_symbolizer_set_names(sym, !(o->flags & REC_RECORDER_NO_SYMBOLIZE));
		rec_symbolizer_set_lines(sym, 0); /* sources later, within a budget */
		rec_symbolizer_set_sources(sym, sources_mode(o->flags));
		r->symbolizer = sym;
	}
	return REC_OK;
}

/* Step 4: r's clock (the program's callback, else the TSC or CLOCK_MONOTONIC
 * as clock.c chose), the anchor pairing a wall time with a tick, and the
 * run id (random when not given). */
static void recorder_clock(rec_recorder *r, const rec_recorder_options *o, int64_t *anchor_wall,
			   uint64_t *anchor_ticks)
{
	if (o->clock) {
		r->clock_kind = REC_CLOCK_CALLBACK;
		r->clock = o->clock;
		r->clock_opaque = o->clock_opaque;
		r->frequency = o->clock_frequency ? o->clock_frequency : 1000000000u;
		if (o->anchor_wall_ns) {
			*anchor_wall = o->anchor_wall_ns;
			*anchor_ticks = 0;
		} else {
			*anchor_ticks = o->clock(o->clock_opaque);
			*anchor_wall = rec_clock_wall_ns();
		}
	} else {
		rec_clock_info ci;
		rec_clock_get(&ci);
		r->clock_kind = ci.kind;
		r->frequency = ci.frequency;
		rec_clock_anchor(ci.kind, anchor_wall, anchor_ticks);
	}
	r->run_id = o->run_id;
	while (r->run_id == 0) {
		if (getrandom(&r->run_id, sizeof r->run_id, 0) != (ssize_t)sizeof r->run_id)
			r->run_id = rec_clock_mono_ns() ^ ((uint64_t)getpid() << 32);
	}
}

/* An earlier recording at the path must never be read as this one's, not
 * even when the process dies before its background thread has run: a new,
 * empty file takes the path at once (created beside it, renamed over it),
 * and the earlier file stays open until the background thread closes it,
 * which frees its blocks there, not in the program's start-up.  Only for a
 * regular file with one link that is not reached through a symbolic link
 * (a rename would replace the link, or leave the other names holding the
 * old bytes); false when it cannot be done, and the caller empties the file
 * in place later (rec_out_truncate). */
static bool replace_earlier_file(rec_recorder *r, const char *path, const struct stat *sb)
{
	struct stat lsb;
	if (sb->st_nlink != 1 || lstat(path, &lsb) != 0 || !S_ISREG(lsb.st_mode) ||
	    lsb.st_ino != sb->st_ino || lsb.st_dev != sb->st_dev)
		return false;
	size_t n = strlen(path) + 48;
	char *tmp = malloc(n);
	if (!tmp)
		return false;
	snprintf(tmp, n, "%s.rec-new.%ld", path, (long)getpid());
	int fd;
	do
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, sb->st_mode & 07777);
	while (fd < 0 && errno == EINTR);
	bool ok = fd >= 0 && rename(tmp, path) == 0;
	if (!ok && fd >= 0) {
		unlink(tmp);
		close(fd);
	}
	free(tmp);
	if (ok) {
		r->out.old_fd = r->out.fd;
		r->out.fd = fd;
	}
	return ok;
}

/* Step 5a (not flight mode, no program sink): open the file; REC_ERR_IO
 * with errno set on failure.  A file with bytes in it is replaced by an
 * empty one (replace_earlier_file), or else emptied by the background
 * thread (rec_out_truncate). */
static rec_status open_output_file(rec_recorder *r, const char *path)
{
	do
		r->out.fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	while (r->out.fd < 0 && errno == EINTR);
	if (r->out.fd < 0)
		return REC_ERR_IO; /* REC_ERR_IO keeps errno (rec.h) */
	struct stat sb;
	bool stat_ok = fstat(r->out.fd, &sb) == 0;
	bool earlier = !stat_ok || (S_ISREG(sb.st_mode) && sb.st_size > 0);
	if (earlier && stat_ok)
		replace_earlier_file(r, path, &sb);
	r->out.trunc_pending = earlier;
	return REC_OK;
}

/* Step 5b: the chunk writer, over flight mode's chunk store or our own sink
 * over the file or the program's sink (write failures are handled there:
 * rec_out_write). */
static rec_status open_writer(rec_recorder *r, const rec_recorder_options *o, int64_t anchor_wall,
			      uint64_t anchor_ticks)
{
	rec_writer_options wo = REC_WRITER_OPTIONS_INIT;
	wo.codec = o->codec;
	wo.level = o->level;
	wo.events_layout = o->events_layout;
	wo.chunk_events_size = o->chunk_size;
	wo.run_id = r->run_id;
	wo.pid = o->pid;
	wo.process_start_ns = o->process_start_ns ? o->process_start_ns : rec_process_start_ns();
	wo.tick_frequency = r->frequency;
	wo.anchor_wall_ns = anchor_wall;
	wo.anchor_ticks = anchor_ticks;
	if (o->flags & REC_RECORDER_FLIGHT) {
		rec_sink s = { rec_flight_write, NULL, r };
		return rec_writer_open(&r->w, &s, &wo);
	}
	rec_sink s = { rec_out_write, rec_out_flush, r };
	if (o->sink)
		r->sink = *o->sink;
	return rec_writer_open(&r->w, &s, &wo);
}

/* Step 6 (no lock held; r is not published): the built-in types:
 * rec.ThreadStart, rec.ThreadEnd, rec.Crash (always on) as types of r,
 * rec.Dropped and rec.WriteFailed in the writer only (the background
 * thread writes them).  Each takes w_lock, then r->lock (LOCK ORDER). */
static rec_status register_builtin_types(rec_recorder *r)
{
	rec_status st = rec_type_register_open(r, &def_thread_start, 0, 0, &r->t_start);
	if (st == REC_OK)
		st = rec_type_register_open(r, &def_thread_end, 0, 0, &r->t_end);
	if (st == REC_OK) {
		st = rec_type_register_open(r, &def_crash, 0, 0, &r->t_crash);
		if (st == REC_OK) /* always on, like rec.Dropped */
			__atomic_store_n(&r->t_crash->enabled, 1u, __ATOMIC_RELEASE);
	}
	if (st == REC_OK) {
		pthread_mutex_lock(&r->w_lock);
		st = rec_writer_add_type(r->w, &def_dropped);
		if (st == REC_OK)
			st = rec_writer_add_type(r->w, &def_write_failed);
		if (st == REC_OK)
			st = rec_writer_add_type(r->w, &rec_def_process);
		pthread_mutex_unlock(&r->w_lock);
	}
	return st;
}

/* Step 7 failed: r's type entries stay valid (disabled) until process
 * exit, on the retired list. */
static void retire_types(rec_recorder *r)
{
	for (rec_type_entry *e = r->types; e; e = e->next)
		__atomic_store_n(&e->h.enabled, 0, __ATOMIC_RELEASE);
	rec_type_entry *e = r->types;
	while (e) {
		rec_type_entry *n = e->next;
		e->next = rec_g_retired;
		rec_g_retired = e;
		e = n;
	}
	r->types = NULL;
}

/* Step 8 (caller holds rec_g_lock; the background thread runs): r joins
 * the open list (threads may register from now on); the default recorder
 * binds the declared types; a flight recorder gets its at-exit dump and
 * dump signal. */
static void publish(rec_recorder *r, uint32_t flags)
{
	r->bg_started = 1;
	r->g_next = rec_g_open;
	rec_g_open = r;
	if (flags & REC_RECORDER_DEFAULT) {
		pthread_mutex_lock(&r->lock);
		for (rec_type_entry *e = rec_g_declared; e; e = e->next) {
			rec_status s2 = rec_type_bind_declared(r, e);
			if (s2 != REC_OK)
				rec_report(r, s2, "recorder: cannot declare a type in the writer");
		}
		pthread_mutex_unlock(&r->lock);
		/* last, with release: rec_recorder_default() reads it without
		 * rec_g_lock */
		__atomic_store_n(&rec_g_default, r, __ATOMIC_RELEASE);
	}
	if (flags & REC_RECORDER_FLIGHT)
		rec_flight_opened(r, flags);
}

/* Open: validate and copy the options (1), make the recorder (2), its
 * tables (3), clock (4), output and writer (5); then under rec_g_lock the
 * generation, the built-in types (6), the background thread (7) and
 * publishing (8); outside it the crash handler and the default recorder's
 * listeners (9).  Every failure before 8 frees r. */
rec_status rec_recorder_open(rec_recorder **out, const rec_recorder_options *opts_in)
{
	rec_recorder_options o;
	rec_status st;

	if (!out || !opts_in || opts_in->struct_size < offsetof(rec_recorder_options, reserved) ||
	    opts_in->struct_size > sizeof o)
		return REC_ERR_INVALID_ARG;
	*out = NULL;
	memset(&o, 0, sizeof o);
	memcpy(&o, opts_in, opts_in->struct_size);
	if (!options_valid(&o)) /* 1 */
		return REC_ERR_INVALID_ARG;
	rec_thread_global_init();

	rec_recorder *r = recorder_new(&o); /* 2 */
	if (!r)
		return REC_ERR_NOMEM;
	if ((st = recorder_tables(r, &o)) != REC_OK) { /* 3 */
		recorder_free(r);
		return st;
	}
	int64_t anchor_wall;
	uint64_t anchor_ticks;
	recorder_clock(r, &o, &anchor_wall, &anchor_ticks); /* 4 */
	if (!(o.flags & REC_RECORDER_FLIGHT) && !o.sink &&
	    (st = open_output_file(r, o.path)) != REC_OK) { /* 5 */
		int err = errno;
		recorder_free(r);
		errno = err;
		return st;
	}
	st = open_writer(r, &o, anchor_wall, anchor_ticks);
	r->out.chk_ticks = rec_now_ticks(r);
	if (st != REC_OK) {
		r->w = NULL;
		recorder_free(r);
		return st;
	}
	/* A record naming a thread, string or stack id this recorder never
	 * defined (a program's mistake) is rejected and counted as dropped
	 * (rec_bg_append), not kept pending where it would block every chunk. */
	rec_writer_set_check_refs(r->w, 1);

	/* The generation, and the default recorder's place taken, under
	 * rec_g_lock; the built-in types and the background thread (both
	 * allocate: malloc, a thread's stack and TLS) without it, r not
	 * published yet (LOCK ORDER: rec_g_lock's holders never call malloc). */
	const bool dflt = (o.flags & REC_RECORDER_DEFAULT) != 0;
	pthread_mutex_lock(&rec_g_lock);
	if (dflt && (rec_g_default || g_default_opening)) {
		pthread_mutex_unlock(&rec_g_lock);
		recorder_free(r);
		return REC_ERR_STATE;
	}
	if (dflt)
		g_default_opening = 1;
	r->gen = ++rec_g_gen;
	pthread_mutex_unlock(&rec_g_lock);
	if ((st = register_builtin_types(r)) != REC_OK) { /* 6 */
		pthread_mutex_lock(&rec_g_lock);
		g_default_opening = dflt ? 0 : g_default_opening;
		retire_types(r);
		pthread_mutex_unlock(&rec_g_lock);
		recorder_free(r);
		return st;
	}
	/* The unwind tables (stack_cfi.h): built by the background thread as
	 * it starts (5-7 ms for a program and a dozen libraries, on the other
	 * core while the program goes on; the first snapshot, the program's,
	 * libc's and the loader's, in about half of it), or by the first
	 * capture that comes before (rec_cfi_ensure), so that every stack the
	 * program captures walks the call-frame information; not here, where
	 * the program's start-up would wait for them. */
	rec_cfi_want();
	if (pthread_create(&r->bg, NULL, rec_bg_main, r) != 0) { /* 7 */
		pthread_mutex_lock(&rec_g_lock);
		g_default_opening = dflt ? 0 : g_default_opening;
		retire_types(r);
		pthread_mutex_unlock(&rec_g_lock);
		recorder_free(r);
		return REC_ERR_NOMEM;
	}
	pthread_mutex_lock(&rec_g_lock);
	if (dflt)
		g_default_opening = 0;
	publish(r, o.flags); /* 8 */
	size_t nl = (o.flags & REC_RECORDER_DEFAULT) ? g_nlisteners : 0;
	listener ls[MAX_LISTENERS];
	memcpy(ls, g_listeners, nl * sizeof ls[0]);
	pthread_mutex_unlock(&rec_g_lock);
	if (!(o.flags & REC_RECORDER_NO_CRASH) && (o.flags & REC_RECORDER_CRASH || !o.sink)) /* 9 */
		r->crash_on = rec_crash_install(r);
	for (size_t i = 0; i < nl; i++)
		ls[i].fn(r, 1, ls[i].opaque);
	*out = r;
	return REC_OK;
}

rec_status rec_recorder_close(rec_recorder *r)
{
	if (!r)
		return REC_OK;
	if (r->forked_child)
		return REC_OK; /* inherited across fork(): abandoned, see atfork_child */
	if (r->crash_on)
		rec_crash_uninstall(r);

	/* Listeners and periodic callbacks see the recorder a last time. */
	pthread_mutex_lock(&rec_g_lock);
	bool was_default = rec_g_default == r;
	size_t nl = was_default ? g_nlisteners : 0;
	listener ls[MAX_LISTENERS];
	memcpy(ls, g_listeners, nl * sizeof ls[0]);
	pthread_mutex_unlock(&rec_g_lock);
	for (size_t i = 0; i < nl; i++)
		ls[i].fn(r, 0, ls[i].opaque);
	rec_bg_request(r, REQ_PERIODIC, NULL);

	/* 1. Unpublish and disable. */
	pthread_mutex_lock(&rec_g_lock);
	for (rec_recorder **pp = &rec_g_open; *pp; pp = &(*pp)->g_next)
		if (*pp == r) {
			*pp = r->g_next;
			break;
		}
	if (rec_g_default == r)
		__atomic_store_n(&rec_g_default, NULL, __ATOMIC_RELEASE);
	rec_flight_closing(r);
	__atomic_store_n(&r->closing, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&r->lock);
	for (rec_type_entry *e = r->types; e; e = e->next)
		__atomic_store_n(&e->h.enabled, 0, __ATOMIC_RELEASE);
	for (rec_type_entry *e = rec_g_declared; e; e = e->next)
		if (e->h.gen == r->gen)
			__atomic_store_n(&e->h.enabled, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&r->lock);
	pthread_mutex_unlock(&rec_g_lock);

	/* 2. Wait for emits in flight (orphans are not freed while closing). */
	rec_process_barrier();
	pthread_mutex_lock(&r->lock);
	size_t nb = 0;
	for (rec_tbuf_full *b = r->threads; b; b = b->rec_next)
		nb++;
	pthread_mutex_unlock(&r->lock);
	/* allocated without r->lock (LOCK ORDER); r is unpublished, so its
	 * list only shrinks meanwhile */
	rec_tbuf_full **arr = nb ? malloc(nb * sizeof(rec_tbuf_full *)) : NULL;
	size_t k = 0;
	pthread_mutex_lock(&r->lock);
	for (rec_tbuf_full *b = arr ? r->threads : NULL; b && k < nb; b = b->rec_next)
		arr[k++] = b;
	pthread_mutex_unlock(&r->lock);
	for (size_t i = 0; i < k; i++) {
		for (unsigned spin = 0; __atomic_load_n(&arr[i]->pub.busy, __ATOMIC_ACQUIRE); spin++) {
			if (spin > 20000) /* ~2 s: a thread stopped inside an emit */
				break;
			if (spin < 100)
				sched_yield();
			else {
				struct timespec ts = { 0, 100000L };
				nanosleep(&ts, NULL);
			}
		}
	}
	free(arr);

	/* 3. Final drain, FINAL chunk, stop. */
	pthread_mutex_lock(&r->req_lock);
	r->stop = 1;
	uint64_t my = ++r->req_seq;
	pthread_mutex_unlock(&r->req_lock);
	rec_wake_bg(r);
	pthread_mutex_lock(&r->req_lock);
	while (r->done_seq < my)
		pthread_cond_wait(&r->req_cond, &r->req_lock);
	pthread_mutex_unlock(&r->req_lock);
	pthread_join(r->bg, NULL);

	/* 4. Hand buffers of live threads to them; free the orphans. */
	pthread_mutex_lock(&rec_g_lock);
	pthread_mutex_lock(&r->lock);
	for (rec_tbuf_full *b = r->threads, *next; b; b = next) {
		next = b->rec_next;
		uint32_t expect = REC_TB_LIVE;
		if (!__atomic_compare_exchange_n(&b->state, &expect, REC_TB_DETACHED, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			rec_tbuf_free(b);
	}
	r->threads = NULL;
	for (rec_type_entry *e = r->types, *n; e; e = n) {
		n = e->next;
		e->next = rec_g_retired;
		rec_g_retired = e;
	}
	r->types = NULL;
	for (rec_type_entry *e = rec_g_declared; e; e = e->next)
		if (e->h.gen == r->gen)
			__atomic_store_n(&e->h.gen, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&r->lock);
	pthread_mutex_unlock(&rec_g_lock);
	rec_status st = r->first_error;
	recorder_free(r);
	return st;
}

rec_status rec_recorder_flush(rec_recorder *r)
{
	if (!r)
		return REC_ERR_INVALID_ARG;
	if (r->forked_child || r->closing)
		return REC_ERR_STATE;
	return rec_bg_request(r, REQ_FLUSH, NULL);
}

rec_status rec_recorder_dump(rec_recorder *r, const char *path)
{
	if (!r)
		return REC_ERR_INVALID_ARG;
	if (r->forked_child || r->closing)
		return REC_ERR_STATE;
	if (!(r->flags & REC_RECORDER_FLIGHT))
		return path ? REC_ERR_INVALID_ARG : rec_bg_request(r, REQ_FLUSH, NULL);
	pthread_mutex_lock(&r->dump_lock);
	rec_status st = rec_bg_request(r, REQ_DUMP, path);
	pthread_mutex_unlock(&r->dump_lock);
	return st;
}

/* Without rec_g_lock (every thread that registers takes it; the CPU
 * sampler asks for each of them): the pointer is stored with release under
 * the lock, and the lock never kept it valid past the return anyway. */
rec_recorder *rec_recorder_default(void)
{
	return __atomic_load_n(&rec_g_default, __ATOMIC_ACQUIRE);
}

uint64_t rec_recorder_run_id(const rec_recorder *r) { return r ? r->run_id : 0; }
/* The frequency the chunks carry (refined until the first chunk). */
uint64_t rec_recorder_tick_frequency(const rec_recorder *r)
{
	return r ? __atomic_load_n(&r->frequency, __ATOMIC_RELAXED) : 0;
}

void rec_recorder_get_stats(rec_recorder *r, rec_recorder_stats *st)
{
	memset(st, 0, sizeof *st);
	if (!r)
		return;
	st->events = __atomic_load_n(&r->st_events, __ATOMIC_RELAXED);
	st->dropped = __atomic_load_n(&r->st_dropped, __ATOMIC_RELAXED);
	st->threads = __atomic_load_n(&r->st_threads, __ATOMIC_RELAXED);
	st->drains = __atomic_load_n(&r->st_drains, __ATOMIC_RELAXED);
	pthread_mutex_lock(&r->lock);
	st->buffer_bytes = r->mem_used;
	pthread_mutex_unlock(&r->lock);
	clockid_t cid;
	struct timespec ts;
	if (r->bg_started && pthread_getcpuclockid(r->bg, &cid) == 0 && clock_gettime(cid, &ts) == 0)
		st->background_cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	pthread_mutex_lock(&r->w_lock);
	if (r->w) {
		rec_writer_stats ws;
		rec_writer_get_stats(r->w, &ws);
		/* chunks that could not be written are not counted */
		st->chunks = ws.chunks - r->out.chunks_lost;
		st->bytes = ws.stored_bytes - r->out.bytes_lost;
	}
	pthread_mutex_unlock(&r->w_lock);
}

rec_status rec_default_listen(rec_default_listener fn, void *opaque)
{
	if (!fn)
		return REC_ERR_INVALID_ARG;
	pthread_mutex_lock(&rec_g_lock);
	if (g_nlisteners == MAX_LISTENERS) {
		pthread_mutex_unlock(&rec_g_lock);
		return REC_ERR_LIMIT;
	}
	g_listeners[g_nlisteners].fn = fn;
	g_listeners[g_nlisteners].opaque = opaque;
	g_nlisteners++;
	rec_recorder *r = rec_g_default;
	pthread_mutex_unlock(&rec_g_lock);
	if (r)
		fn(r, 1, opaque);
	return REC_OK;
}

rec_status rec_recorder_set_periodic(rec_recorder *r, rec_periodic_fn fn, void *opaque,
				     uint32_t period_ms)
{
	if (!r || !fn || period_ms == 0)
		return REC_ERR_INVALID_ARG;
	const uint64_t period = (uint64_t)period_ms * 1000000u;
	bool found = false;
	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->nperiodic; i++) {
		rec_periodic *p = &r->periodic[i];
		if (p->fn != fn || p->opaque != opaque)
			continue;
		found = true;
		if (p->period_ns != period) {
			p->period_ns = period;
			p->next_ns = rec_clock_mono_ns() + period;
		}
	}
	pthread_mutex_unlock(&r->lock);
	return found ? REC_OK : REC_ERR_STATE;
}

rec_status rec_recorder_add_periodic(rec_recorder *r, rec_periodic_fn fn, void *opaque,
				     uint32_t period_ms)
{
	if (!r || !fn || period_ms == 0)
		return REC_ERR_INVALID_ARG;
	/* The larger array is allocated without r->lock (LOCK ORDER). */
	rec_periodic *np = NULL, *old = NULL;
	size_t n = 0;
	pthread_mutex_lock(&r->lock);
	for (;;) {
		if (r->closing || r->forked_child) {
			pthread_mutex_unlock(&r->lock);
			free(np);
			return REC_ERR_STATE;
		}
		if (np && n == r->nperiodic)
			break;
		n = r->nperiodic;
		pthread_mutex_unlock(&r->lock);
		free(np);
		np = malloc((n + 1) * sizeof *np);
		if (!np)
			return REC_ERR_NOMEM;
		pthread_mutex_lock(&r->lock);
	}
	if (n)
		memcpy(np, r->periodic, n * sizeof *np);
	old = r->periodic;
	r->periodic = np;
	uint64_t period = (uint64_t)period_ms * 1000000u;
	r->periodic[r->nperiodic++] = (rec_periodic){ fn, opaque, period, rec_clock_mono_ns() + period };
	pthread_mutex_unlock(&r->lock);
	free(old);
	rec_wake_bg(r);
	return REC_OK;
}
