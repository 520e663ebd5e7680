/* SPDX-License-Identifier: MIT */
/*
 * source.c - where the reader's bytes come from: caller memory, a regular
 * file (pread at any offset, so skipped payloads are never read) or a pipe
 * (read forward only).  (The arena the reader allocates from is common/'s.)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/read_internal.h"

#define SRC_WINDOW ((size_t)256 * 1024)
#define SRC_MIN_READ ((size_t)16 * 1024)

rec_status rec_src_open_fd(rec_src *s, int fd, bool own_fd)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->own_fd = own_fd;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		s->err = errno;
		return REC_ERR_IO;
	}
	if (S_ISREG(st.st_mode)) {
		off_t cur = lseek(fd, 0, SEEK_CUR);
		if (cur >= 0) {
			s->seekable = true;
			s->base = (uint64_t)cur;
			s->size_known = true;
			s->size = (uint64_t)st.st_size > s->base ? (uint64_t)st.st_size - s->base : 0;
		}
	}
	s->cap = SRC_WINDOW;
	s->buf = malloc(s->cap);
	if (!s->buf)
		return REC_ERR_NOMEM;
	return REC_OK;
}

void rec_src_open_mem(rec_src *s, const void *buf, size_t len)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->mem = buf ? buf : (const uint8_t *)"";
	s->mem_len = buf ? len : 0;
	s->size = s->mem_len;
	s->size_known = true;
	s->seekable = true;
}

void rec_src_close(rec_src *s)
{
	if (s->own_fd && s->fd >= 0)
		close(s->fd);
	free(s->buf);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

void rec_src_refresh_size(rec_src *s)
{
	struct stat st;
	if (s->mem || !s->seekable || fstat(s->fd, &st) != 0)
		return;
	if ((uint64_t)st.st_size > s->base && (uint64_t)st.st_size - s->base > s->size)
		s->size = (uint64_t)st.st_size - s->base;
}

const uint8_t *rec_src_map(const rec_src *s, uint64_t off, size_t n)
{
	if (!s->mem || off > s->mem_len || n > s->mem_len - off)
		return NULL;
	return s->mem + off;
}

/* read() until n bytes or end of input; *got gets the bytes read. */
static rec_status fd_read_full(rec_src *s, uint8_t *dst, size_t n, size_t *got)
{
	size_t done = 0;
	while (done < n && !s->eof) {
		ssize_t k = read(s->fd, dst + done, n - done);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			s->err = errno;
			*got = done;
			return REC_ERR_IO;
		}
		if (k == 0) {
			s->eof = true;
			break;
		}
		done += (size_t)k;
	}
	s->stream_pos += done;
	*got = done;
	return REC_OK;
}

static rec_status fd_pread_full(rec_src *s, uint64_t off, uint8_t *dst, size_t n, size_t *got)
{
	size_t done = 0;
	while (done < n) {
		ssize_t k = pread(s->fd, dst + done, n - done, (off_t)(s->base + off + done));
		if (k < 0) {
			if (errno == EINTR)
				continue;
			s->err = errno;
			*got = done;
			return REC_ERR_IO;
		}
		if (k == 0)
			break;
		done += (size_t)k;
	}
	*got = done;
	return REC_OK;
}

/* Pipe: consume and drop input up to off. */
static rec_status fd_discard_to(rec_src *s, uint64_t off)
{
	while (s->stream_pos < off && !s->eof) {
		uint64_t want = off - s->stream_pos;
		size_t n = want < s->cap ? (size_t)want : s->cap;
		size_t got;
		rec_status st = fd_read_full(s, s->buf, n, &got);
		if (st != REC_OK)
			return st;
	}
	s->buf_off = s->stream_pos;
	s->buf_len = 0;
	return REC_OK;
}

rec_status rec_src_peek(rec_src *s, uint64_t off, size_t n, const uint8_t **p, size_t *got)
{
	if (s->mem) {
		if (off >= s->mem_len) {
			*p = s->mem + s->mem_len;
			*got = 0;
		} else {
			*p = s->mem + off;
			*got = (size_t)(s->mem_len - off);
		}
		return REC_OK;
	}
	if (off >= s->buf_off && off - s->buf_off <= s->buf_len &&
	    s->buf_len - (size_t)(off - s->buf_off) >= n) {
		*p = s->buf + (off - s->buf_off);
		*got = s->buf_len - (size_t)(off - s->buf_off);
		return REC_OK;
	}
	if (n > s->cap) {
		size_t ncap = s->cap;
		while (ncap < n)
			ncap *= 2;
		uint8_t *nb = realloc(s->buf, ncap);
		if (!nb)
			return REC_ERR_NOMEM;
		s->buf = nb;
		s->cap = ncap;
	}
	rec_status st;
	size_t k;
	if (s->seekable) {
		/* Read little more than asked: a summary reads a chunk's front
		 * and skips the rest, so large windows would read skipped bytes. */
		size_t want = n < SRC_MIN_READ ? SRC_MIN_READ : n;
		s->buf_off = off;
		s->buf_len = 0;
		st = fd_pread_full(s, off, s->buf, want, &k);
		s->buf_len = k;
	} else {
		if (off < s->buf_off) /* cannot go back in a pipe */
			return REC_ERR_STATE;
		if (off <= s->buf_off + s->buf_len) {
			size_t keep = s->buf_len - (size_t)(off - s->buf_off);
			memmove(s->buf, s->buf + (off - s->buf_off), keep);
			s->buf_off = off;
			s->buf_len = keep;
		} else {
			st = fd_discard_to(s, off);
			if (st != REC_OK)
				return st;
		}
		st = fd_read_full(s, s->buf + s->buf_len, s->cap - s->buf_len, &k);
		s->buf_len += k;
	}
	*p = s->buf;
	*got = s->buf_len;
	return st;
}

rec_status rec_src_read(rec_src *s, uint64_t off, size_t n, uint8_t *dst, size_t *got)
{
	*got = 0;
	if (s->mem) {
		if (off >= s->mem_len)
			return REC_OK;
		size_t k = s->mem_len - off < n ? (size_t)(s->mem_len - off) : n;
		memcpy(dst, s->mem + off, k);
		*got = k;
		return REC_OK;
	}
	size_t done = 0;
	/* What the window already holds. */
	if (off >= s->buf_off && off < s->buf_off + s->buf_len) {
		size_t have = s->buf_len - (size_t)(off - s->buf_off);
		done = have < n ? have : n;
		memcpy(dst, s->buf + (off - s->buf_off), done);
		if (!s->seekable && done == have) { /* consumed the window */
			s->buf_off += s->buf_len;
			s->buf_len = 0;
		}
	}
	if (done == n) {
		*got = n;
		return REC_OK;
	}
	uint64_t at = off + done;
	size_t k = 0;
	rec_status st;
	if (s->seekable) {
		st = fd_pread_full(s, at, dst + done, n - done, &k);
	} else {
		if (at < s->stream_pos)
			return REC_ERR_STATE;
		st = fd_discard_to(s, at);
		if (st == REC_OK)
			st = fd_read_full(s, dst + done, n - done, &k);
		s->buf_off = s->stream_pos;
		s->buf_len = 0;
	}
	*got = done + k;
	return st;
}

/* ---- big buffers ------------------------------------------------------------- */
#define HUGE_SZ ((size_t)2 * 1024 * 1024)
#define BIG_MIN HUGE_SZ /* smaller buffers come from malloc */

void rec_bigbuf_free(rec_bigbuf *b)
{
	if (b->data) {
		if (b->cap < BIG_MIN)
			free(b->data);
		else
			munmap(b->data, b->cap);
	}
	b->data = NULL;
	b->cap = 0;
}

bool rec_bigbuf_reserve(rec_bigbuf *b, size_t n)
{
	if (n <= b->cap && b->data)
		return true;
	/* An eighth more than asked, and grown by a quarter at least: a need
	 * that creeps up from chunk to chunk (their entries, a few bytes more
	 * each time) keeps its buffer, or moves it a few times, not at every
	 * chunk; each move puts fresh pages under its writes. */
	if (n <= SIZE_MAX / 2)
		n += n / 8;
	if (b->data && b->cap <= SIZE_MAX / 2 && n < b->cap + b->cap / 4)
		n = b->cap + b->cap / 4;
	rec_bigbuf_free(b);
	if (n == 0)
		n = 1;
	if (n < BIG_MIN) {
		b->data = malloc(n);
		if (!b->data)
			return false;
		b->cap = n;
		return true;
	}
	if (n > SIZE_MAX - 2 * HUGE_SZ)
		return false;
	size_t len = (n + HUGE_SZ - 1) & ~(HUGE_SZ - 1);
	size_t map = len + HUGE_SZ;
	uint8_t *p = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return false;
	/* Keep a 2 MiB-aligned extent, give back the slack around it. */
	uintptr_t a = ((uintptr_t)p + HUGE_SZ - 1) & ~(uintptr_t)(HUGE_SZ - 1);
	size_t head = (size_t)(a - (uintptr_t)p);
	if (head)
		munmap(p, head);
	if (map - head > len)
		munmap((uint8_t *)a + len, map - head - len);
#ifdef MADV_HUGEPAGE
	(void)madvise((void *)a, len, MADV_HUGEPAGE); /* a hint; failure is fine */
#endif
	b->data = (void *)a;
	b->cap = len;
	return true;
}
