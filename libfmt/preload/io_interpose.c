/* SPDX-License-Identifier: MIT */
/*
 * io_interpose.c - read, write, pread, pwrite, readv, writev, recv,
 * recvfrom, recvmsg, send, sendto, sendmsg, accept, accept4 and connect as
 * rec.IO (libfmt/record/io.c) when the call lasted at least the type's
 * threshold (default 10 ms; REC_OPTIONS io=DUR).  The fast path of a short
 * call is the real call between two reads of the recorder's clock (one load
 * says the recorder records, one TLS load that the thread is not inside
 * it, two that rec.IO is declared and on); only a
 * call that lasted describes its descriptor (fstat; getpeername for a
 * socket, the /proc/self/fd link for a file), in the slow path.
 * Every call is marked for wall-clock sampling (state "io":
 * wall_internal.h; one thread-local load when it is off).  poll, select
 * and epoll_wait (how an event loop idles) are poll_interpose.c's.
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

REC_PRELOAD_API ssize_t read(int fd, void *buf, size_t n)
{
	IO_CALL("read", fd, 1, rec_real_.read(fd, buf, n));
}

REC_PRELOAD_API ssize_t write(int fd, const void *buf, size_t n)
{
	IO_CALL("write", fd, 1, rec_real_.write(fd, buf, n));
}

REC_PRELOAD_API ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	IO_CALL("pread", fd, 1, rec_real_.pread(fd, buf, n, off));
}

REC_PRELOAD_API ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	IO_CALL("pwrite", fd, 1, rec_real_.pwrite(fd, buf, n, off));
}

REC_PRELOAD_API ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	IO_CALL("readv", fd, 1, rec_real_.readv(fd, iov, cnt));
}

REC_PRELOAD_API ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	IO_CALL("writev", fd, 1, rec_real_.writev(fd, iov, cnt));
}

REC_PRELOAD_API ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	IO_CALL("recv", fd, 1, rec_real_.recv(fd, buf, n, flags));
}

REC_PRELOAD_API ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *from,
				 socklen_t *len)
{
	IO_CALL("recvfrom", fd, 1, rec_real_.recvfrom(fd, buf, n, flags, from, len));
}

REC_PRELOAD_API ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	IO_CALL("recvmsg", fd, 1, rec_real_.recvmsg(fd, msg, flags));
}

REC_PRELOAD_API ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	IO_CALL("send", fd, 1, rec_real_.send(fd, buf, n, flags));
}

REC_PRELOAD_API ssize_t sendto(int fd, const void *buf, size_t n, int flags,
			       const struct sockaddr *to, socklen_t len)
{
	IO_CALL("sendto", fd, 1, rec_real_.sendto(fd, buf, n, flags, to, len));
}

REC_PRELOAD_API ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	IO_CALL("sendmsg", fd, 1, rec_real_.sendmsg(fd, msg, flags));
}

REC_PRELOAD_API int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	IO_CALL("accept", fd, 0, rec_real_.accept(fd, addr, len));
}

REC_PRELOAD_API int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	IO_CALL("accept4", fd, 0, rec_real_.accept4(fd, addr, len, flags));
}

REC_PRELOAD_API int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	IO_CALL("connect", fd, 1, rec_real_.connect(fd, addr, len));
}
