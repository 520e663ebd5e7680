/* SPDX-License-Identifier: MIT */
/*
 * io.c - the I/O waits: rec.IO, a blocking I/O call (read, write, recv,
 * send, accept, connect, ...) that lasted at least the type's threshold
 * (default 10 ms; REC_OPTIONS io=DUR sets it, rec_io_set_threshold), and
 * rec.Poll, a wait for descriptors to be ready (poll, select, epoll_wait
 * and their variants), off unless the events list names it (an event loop
 * idles there: "*,rec.Poll:threshold=50ms").  The events come from the
 * preload library's interposers (libfmt/preload/io_interpose.c,
 * poll_interpose.c), which time every call with two clock reads and
 * describe it only for the calls that lasted.  Built on the public emit
 * API only.
 */
#include "rec/builtins.h"
#include "record/builtin_internal.h"
#include "record/stack_internal.h"

#include <pthread.h>

static const rec_field io_fields[] = {
	{ "fd", "Descriptor", "the file descriptor", REC_TYPE_I64, REC_UNIT_NONE },
	{ "call", "Call", "the function: read, write, pread, pwrite, readv, writev, recv, recvfrom, "
	  "recvmsg, send, sendto, sendmsg, accept, accept4, connect", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "kind", "Kind", "socket, file, pipe or other", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "address", "Address", "a socket's peer (ip:port, [ip6]:port, a unix path; accept: the new "
	  "connection's peer), a file's path, else \"\"", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "bytes", "Bytes", "bytes read or written (0 for accept, connect, or an error)",
	  REC_TYPE_U64, REC_UNIT_BYTES },
	{ "error", "Error", "errno of a failed call, 0 if it succeeded", REC_TYPE_U64,
	  REC_UNIT_NONE },
};
static const rec_type io_def = {
	REC_TYPE_ID_IO, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK,
	"rec.IO", "Blocking I/O", "A read, write, accept or connect that blocked", "rec/IO", 6,
	io_fields
};

static rec_event_type *T_io;
static int ready;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static uint64_t g_threshold_ns = REC_IO_THRESHOLD_NS;

static void init_type(void)
{
	if (rec_type_declare(&io_def, __atomic_load_n(&g_threshold_ns, __ATOMIC_RELAXED),
			     REC_DECLARE_STACK, &T_io) != REC_OK)
		T_io = NULL;
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
}

void rec_io_set_threshold(uint64_t ns)
{
	__atomic_store_n(&g_threshold_ns, ns, __ATOMIC_RELAXED);
}

struct rec_event_type *rec_io_type_(void)
{
	if (__builtin_expect(!__atomic_load_n(&ready, __ATOMIC_ACQUIRE), 0))
		pthread_once(&once, init_type);
	return T_io;
}

void rec_io_emit_(int fd, const char *call, const char *kind, const char *address,
		  uint64_t bytes, int err, uint64_t t0, uint64_t t1)
{
	rec_emit e;
	if (T_io == NULL || !rec_emit_begin_at(&e, T_io, t0, t1))
		return;
	rec_emit_i64(&e, fd);
	rec_emit_string_dyn(&e, call);
	rec_emit_string_dyn(&e, kind);
	rec_emit_string_dyn(&e, address);
	rec_emit_u64(&e, bytes);
	rec_emit_u64(&e, err > 0 ? (uint64_t)err : 0);
	rec_emit_commit(&e);
}

static const rec_field poll_fields[] = {
	{ "call", "Call", "the function: poll, ppoll, select, pselect, epoll_wait, epoll_pwait, "
	  "epoll_pwait2", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "fd", "Descriptor", "the epoll descriptor (epoll_*), else -1", REC_TYPE_I64, REC_UNIT_NONE },
	{ "watched", "Watched", "descriptors asked about: poll's nfds, the descriptors in select's "
	  "sets; epoll_*: its maxevents", REC_TYPE_U64, REC_UNIT_COUNT },
	{ "timeout", "Timeout", "the timeout asked for, -1 for none (wait forever)", REC_TYPE_I64,
	  REC_UNIT_NANOS },
	{ "ready", "Ready", "the call's result: descriptors ready (0: the timeout passed; a failed "
	  "call: 0)", REC_TYPE_U64, REC_UNIT_COUNT },
	{ "error", "Error", "errno of a failed call (EINTR: a signal), 0 if it succeeded",
	  REC_TYPE_U64, REC_UNIT_NONE },
};
static const rec_type poll_def = {
	REC_TYPE_ID_POLL, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK,
	"rec.Poll", "Readiness Wait", "A poll, select or epoll_wait that waited for descriptors",
	"rec/Poll", 6, poll_fields
};

static rec_event_type *T_poll;
static int poll_ready;
static pthread_once_t poll_once = PTHREAD_ONCE_INIT;

static void init_poll_type(void)
{
	if (rec_type_declare(&poll_def, REC_POLL_THRESHOLD_NS, REC_DECLARE_STACK | REC_DECLARE_OFF,
			     &T_poll) != REC_OK)
		T_poll = NULL;
	__atomic_store_n(&poll_ready, 1, __ATOMIC_RELEASE);
}

struct rec_event_type *rec_poll_type_(void)
{
	if (__builtin_expect(!__atomic_load_n(&poll_ready, __ATOMIC_ACQUIRE), 0))
		pthread_once(&poll_once, init_poll_type);
	return T_poll;
}

void rec_poll_emit_(const char *call, int fd, uint64_t watched, int64_t timeout_ns, int rc,
		    int err, uint64_t t0, uint64_t t1)
{
	rec_emit e;
	if (T_poll == NULL || !rec_emit_begin_at(&e, T_poll, t0, t1))
		return;
	rec_emit_string_dyn(&e, call);
	rec_emit_i64(&e, fd);
	rec_emit_u64(&e, watched);
	rec_emit_i64(&e, timeout_ns);
	rec_emit_u64(&e, rc > 0 ? (uint64_t)rc : 0);
	rec_emit_u64(&e, rc < 0 && err > 0 ? (uint64_t)err : 0);
	rec_emit_commit(&e);
}
