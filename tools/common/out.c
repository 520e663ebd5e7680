/* SPDX-License-Identifier: MIT */
/*
 * out.c - the fast buffered stdout of the tools (cli.h, "fast buffered stdout"):
 * the 1 MiB buffer, its flushing and write-failure accounting, the one
 * checked close of standard output (rec_cli_finish), decimal and hex numbers.
 */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

static int g_out_errno; /* of the fast buffer's first failed write */
rec_out_buf rec_out_g;

int rec_cli_finish(int rc)
{
	/* The reason is the errno of the first failed call (a later call that
	 * fails or succeeds may change errno): the fast buffer, rec_cli_out_sync
	 * and rec_cli_export_stdout keep it.  A write made directly to stdout
	 * otherwise (printf, Graphviz rendering png/pdf/svg) that failed left
	 * only ferror(): errno as it is on entry is then the best guess. */
	int entry_errno = errno;
	rec_out_flush();
	int failed = rec_out_g.failed, err = failed ? g_out_errno : 0;
	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (!failed)
			err = errno;
		failed = 1;
	}
	errno = 0;
	if (fclose(stdout) != 0) {
		if (!failed)
			err = errno;
		failed = 1;
	}
	if (failed) {
		if (!err)
			err = entry_errno;
		fprintf(rec_cli_err(), "%s: error writing standard output: %s\n", rec_cli_tool(),
			err ? strerror(err) : "write failed");
		return REC_EXIT_DATA;
	}
	return rc;
}

/* A full buffer goes straight to f's descriptor, after what stdio holds of
 * f: an fwrite() of it would first copy it into stdio's buffer (as large:
 * rec_cli_init), every byte a tool prints moved twice.  A smaller flush
 * (before a message on stderr, rec_cli_json_quoted's scratch) goes to
 * stdio, which gathers such pieces into one write: a write per piece would
 * be a system call per event for some tools, and a reader that stops early
 * (`| grep -q`) would see a tool killed by SIGPIPE where one write at exit
 * had gone through. */
#define REC_OUT_DIRECT_MIN ((size_t)64 << 10)

/* false (errno set) if a write failed. */
static bool write_direct(FILE *f, int fd)
{
	if (fflush(f) != 0)
		return false;
	const char *p = rec_out_g.buf;
	size_t n = rec_out_g.len;
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO;
			return false;
		}
		p += k;
		n -= (size_t)k;
	}
	return true;
}

void rec_out_flush(void)
{
	if (rec_out_g.len) {
		FILE *f = rec_out_g.file ? rec_out_g.file : stdout;
		int fd = rec_out_g.len >= REC_OUT_DIRECT_MIN ? fileno(f) : -1; /* -1: also a
										     * stream without one */
		if (!rec_out_g.failed &&
		    (fd >= 0 ? !write_direct(f, fd)
			     : fwrite(rec_out_g.buf, 1, rec_out_g.len, f) != rec_out_g.len)) {
			rec_cli_out_failed(errno);
		}
		rec_out_g.len = 0;
	}
}

void rec_cli_out_failed(int err)
{
	if (!rec_out_g.failed) {
		rec_out_g.failed = 1;
		g_out_errno = err ? err : EIO;
	}
}

bool rec_cli_out_sync(void)
{
	rec_out_flush();
	FILE *f = rec_out_g.file ? rec_out_g.file : stdout;
	errno = 0;
	if (fflush(f) != 0)
		rec_cli_out_failed(errno);
	return !rec_out_g.failed;
}

void rec_out_write_slow(const void *p, size_t n)
{
	const char *s = p;
	while (n) {
		if (rec_out_g.len == REC_OUT_SIZE)
			rec_out_flush();
		size_t room = REC_OUT_SIZE - rec_out_g.len;
		size_t k = n < room ? n : room;
		memcpy(rec_out_g.buf + rec_out_g.len, s, k);
		rec_out_g.len += k;
		s += k;
		n -= k;
	}
}

char *rec_cli_vformat(char *buf, size_t cap, size_t *len, const char *fmt, va_list ap)
{
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(buf, cap, fmt, ap);
	if (n < 0 || (size_t)n < cap) {
		va_end(again);
		*len = n < 0 ? 0 : (size_t)n;
		return n < 0 ? NULL : buf;
	}
	char *big = rec_cli_xmalloc((size_t)n + 1);
	vsnprintf(big, (size_t)n + 1, fmt, again);
	va_end(again);
	*len = (size_t)n;
	return big;
}

void rec_out_printf(const char *fmt, ...)
{
	char tmp[1024];
	size_t n;
	va_list ap;
	va_start(ap, fmt);
	char *s = rec_cli_vformat(tmp, sizeof tmp, &n, fmt, ap);
	va_end(ap);
	if (!s)
		return;
	rec_out_write(s, n);
	if (s != tmp)
		free(s);
}

static const char g_digits2[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static inline size_t count_digits(uint64_t v)
{
	size_t n = 1;
	for (;;) {
		if (v < 10) return n;
		if (v < 100) return n + 1;
		if (v < 1000) return n + 2;
		if (v < 10000) return n + 3;
		v /= 10000;
		n += 4;
	}
}

size_t rec_fmt_u64(char *p, uint64_t v)
{
	size_t n = count_digits(v);
	char *q = p + n;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		q -= 2;
		memcpy(q, g_digits2 + 2 * (size_t)r, 2);
	}
	if (v >= 10) {
		q -= 2;
		memcpy(q, g_digits2 + 2 * (size_t)v, 2);
	} else {
		*--q = (char)('0' + v);
	}
	return n;
}

size_t rec_fmt_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p = '-';
		return 1 + rec_fmt_u64(p + 1, (uint64_t)0 - (uint64_t)v);
	}
	return rec_fmt_u64(p, (uint64_t)v);
}

void rec_out_u64(uint64_t v)
{
	char *p = rec_out_reserve(24);
	rec_out_commit(rec_fmt_u64(p, v));
}

void rec_out_i64(int64_t v)
{
	char *p = rec_out_reserve(24);
	rec_out_commit(rec_fmt_i64(p, v));
}

void rec_out_hex(uint64_t v)
{
	static const char hx[] = "0123456789abcdef";
	char tmp[20];
	int n = 0;
	do {
		tmp[n++] = hx[v & 15];
		v >>= 4;
	} while (v);
	char *p = rec_out_reserve(20);
	p[0] = '0';
	p[1] = 'x';
	for (int i = 0; i < n; i++)
		p[2 + i] = tmp[n - 1 - i];
	rec_out_commit((size_t)n + 2);
}
