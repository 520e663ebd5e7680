/* SPDX-License-Identifier: MIT */
/*
 * io_interpose.c - read, write, pread, pwrite, readv, writev, recv,
 * recvfrom, recvmsg, send, sendto, sendmsg, accept, accept4 and connect as
 * rec.IO (libfmt/record/io.c) when the call lasted at least the type's
 * threshold (default 10 ms; REC_OPTIONS io=DUR).  The fast path of a short
 * call (io_fast) is the real call between two reads of the TSC: a load says
 * the recorder records, a TLS load that the thread is not inside it, two
 * that rec.IO is declared and on, one that its clock is the TSC, a TLS
 * load that the thread is not listed for wall-clock sampling; anything else
 * (another clock, a thread whose blocking calls are marked for the wall
 * sampler: state "io", wall_internal.h) takes the general path, out of
 * line.  Only a call that lasted describes its descriptor (fstat;
 * getpeername for a socket, the /proc/self/fd link for a file).  poll,
 * select and epoll_wait (how an event loop idles) are poll_interpose.c's.
 */
/* This file defines read, recv & co.: not the fortified inline versions
 * <unistd.h> and <sys/socket.h> would declare for them. */
#undef _FORTIFY_SOURCE
#include "preload/preload_internal.h"
#include "record/builtin_internal.h"
#include "record/stack_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "rec/recorder.h"

typedef struct io_start {
	struct rec_event_type *t; /* NULL: not timing */
	uint64_t t0;
} io_start;

static inline io_start begin(void)
{
	io_start s = { NULL, 0 };
	if (!rec_preload_recording() || rec_in_recorder_ != 0) {
		rec_preload_ensure();
		return s;
	}
	struct rec_event_type *t = __atomic_load_n(&rec_preload_hot_.io, __ATOMIC_ACQUIRE);
	if (__builtin_expect(t == NULL, 0)) { /* declaring it is the recorder's work */
		rec_in_recorder_++;
		t = rec_io_type_();
		rec_in_recorder_--;
		__atomic_store_n(&rec_preload_hot_.io, t, __ATOMIC_RELEASE);
	}
	if (t != NULL && rec_type_enabled(t)) {
		s.t = t;
		s.t0 = rec_type_ticks(t);
	}
	return s;
}

static void describe(int fd, const char **kind, char *addr, size_t cap)
{
	struct stat st;
	addr[0] = 0;
	*kind = "other";
	if (fstat(fd, &st) != 0)
		return;
	if (S_ISSOCK(st.st_mode)) {
		*kind = "socket";
		struct sockaddr_storage ss = { 0 };
		socklen_t len = sizeof ss;
		if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0)
			return;
		char ip[INET6_ADDRSTRLEN];
		if (ss.ss_family == AF_INET) {
			const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
			if (inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip))
				snprintf(addr, cap, "%s:%u", ip, ntohs(in->sin_port));
		} else if (ss.ss_family == AF_INET6) {
			const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
			if (inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip))
				snprintf(addr, cap, "[%s]:%u", ip, ntohs(in6->sin6_port));
		} else if (ss.ss_family == AF_UNIX) {
			const struct sockaddr_un *un = (const struct sockaddr_un *)&ss;
			if (len > offsetof(struct sockaddr_un, sun_path) && un->sun_path[0])
				snprintf(addr, cap, "%s", un->sun_path);
		}
	} else if (S_ISFIFO(st.st_mode)) {
		*kind = "pipe";
	} else if (S_ISREG(st.st_mode)) {
		*kind = "file";
		char link[32];
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, addr, cap - 1);
		addr[n > 0 ? (size_t)n : 0] = 0;
	}
}

/* After the call: rc its result (bytes, or a descriptor for accept). */
static __attribute__((noinline)) void end_slow(io_start s, int fd, const char *call, ssize_t rc,
					       int is_bytes)
{
	uint64_t t1 = rec_type_ticks(s.t);
	int saved = errno;
	rec_in_recorder_++;
	const char *kind;
	char addr[256];
	describe(is_bytes || rc < 0 ? fd : (int)rc, &kind, addr, sizeof addr);
	rec_io_emit_(fd, call, kind, addr, is_bytes && rc > 0 ? (uint64_t)rc : 0, rc < 0 ? saved : 0,
		     s.t0, t1);
	rec_in_recorder_--;
	errno = saved;
}

/* The threshold check before the slow path: ticks of the type's clock. */
static inline void end(io_start s, int fd, const char *call, ssize_t rc, int is_bytes)
{
	if (s.t != NULL && rec_type_ticks(s.t) - s.t0 >= s.t->threshold_ticks)
		end_slow(s, fd, call, rc, is_bytes);
}

#define IO_CALL(call, fd, is_bytes, expr)            \
	do {                                         \
		io_start s_ = begin();               \
		unsigned w_ = rec_wall_enter(REC_WALL_IO); \
		ssize_t rc_ = (expr);                \
		rec_preload_wall_leave(w_);          \
		end(s_, fd, call, rc_, is_bytes);    \
		return rc_;                          \
	} while (0)

/* The fast path (issue 18: a short call's cost is its two clock reads):
 * the recorder records, the thread is not inside it, rec.IO is declared
 * and on, its clock is the TSC, and the thread is not listed for
 * wall-clock sampling (so the call need not be marked).  Then *tp is
 * rec.IO, and the call is the real one between two reads of the TSC, with
 * nothing live across it but the type, the start and the descriptor (the
 * path above holds more, and pays for it in saved registers).  Anything
 * else takes that path (IO_CALL, out of line). */
static inline __attribute__((always_inline)) int io_fast(struct rec_event_type **tp)
{
#if defined(__x86_64__) || defined(__i386__)
	if (!rec_preload_recording() || rec_in_recorder_ != 0)
		return 0;
	struct rec_event_type *t = __atomic_load_n(&rec_preload_hot_.io, __ATOMIC_ACQUIRE);
	if (t == NULL || !rec_type_enabled(t) || t->clock_kind != 0 ||
	    __atomic_load_n(&rec_wall_tls_.listed, __ATOMIC_RELAXED))
		return 0;
	*tp = t;
	return 1;
#else
	(void)tp;
	return 0;
#endif
}

static inline __attribute__((always_inline)) uint64_t io_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return 0;
#endif
}

/* The fast path's call lasted at least the threshold: the event; returns
 * rc (so that the fast path need not keep it across a call). */
static __attribute__((noinline)) ssize_t io_late(struct rec_event_type *t, uint64_t t0, int fd,
						 const char *call, ssize_t rc, int is_bytes)
{
	end_slow((io_start){ t, t0 }, fd, call, rc, is_bytes);
	return rc;
}

/* An interposer: name's fast path, and name_slow (IO_CALL) for the rest. */
#define IO_INTERPOSE(ret, name, is_bytes, params, args)                            \
	static __attribute__((noinline)) ret name##_slow params                    \
	{                                                                          \
		IO_CALL(#name, fd, is_bytes, rec_real_.name args);                 \
	}                                                                          \
	REC_PRELOAD_API ret name params                                            \
	{                                                                          \
		struct rec_event_type *t_;                                         \
		if (__builtin_expect(!io_fast(&t_), 0))                            \
			return name##_slow args;                                   \
		const uint64_t t0_ = io_tsc();                                     \
		const ret rc_ = rec_real_.name args;                               \
		if (__builtin_expect(io_tsc() - t0_ >= t_->threshold_ticks, 0))    \
			return (ret)io_late(t_, t0_, fd, #name, rc_, is_bytes);    \
		return rc_;                                                        \
	}

IO_INTERPOSE(ssize_t, read, 1, (int fd, void *buf, size_t n), (fd, buf, n))
IO_INTERPOSE(ssize_t, write, 1, (int fd, const void *buf, size_t n), (fd, buf, n))
IO_INTERPOSE(ssize_t, pread, 1, (int fd, void *buf, size_t n, off_t off), (fd, buf, n, off))
IO_INTERPOSE(ssize_t, pwrite, 1, (int fd, const void *buf, size_t n, off_t off), (fd, buf, n, off))
IO_INTERPOSE(ssize_t, readv, 1, (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt))
IO_INTERPOSE(ssize_t, writev, 1, (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt))
IO_INTERPOSE(ssize_t, recv, 1, (int fd, void *buf, size_t n, int flags), (fd, buf, n, flags))
IO_INTERPOSE(ssize_t, recvfrom, 1,
	     (int fd, void *buf, size_t n, int flags, struct sockaddr *from, socklen_t *len),
	     (fd, buf, n, flags, from, len))
IO_INTERPOSE(ssize_t, recvmsg, 1, (int fd, struct msghdr *msg, int flags), (fd, msg, flags))
IO_INTERPOSE(ssize_t, send, 1, (int fd, const void *buf, size_t n, int flags), (fd, buf, n, flags))
IO_INTERPOSE(ssize_t, sendto, 1,
	     (int fd, const void *buf, size_t n, int flags, const struct sockaddr *to, socklen_t len),
	     (fd, buf, n, flags, to, len))
IO_INTERPOSE(ssize_t, sendmsg, 1, (int fd, const struct msghdr *msg, int flags), (fd, msg, flags))
IO_INTERPOSE(int, accept, 0, (int fd, struct sockaddr *addr, socklen_t *len), (fd, addr, len))
IO_INTERPOSE(int, accept4, 0, (int fd, struct sockaddr *addr, socklen_t *len, int flags),
	     (fd, addr, len, flags))
IO_INTERPOSE(int, connect, 1, (int fd, const struct sockaddr *addr, socklen_t len), (fd, addr, len))
