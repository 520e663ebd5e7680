/* SPDX-License-Identifier: MIT */
/*
 * membuf.h - test support: a growing buffer in memory as the writer's sink
 * (rec_sink sink = { mem_write, NULL, &m }), so that a test writes a real
 * recording with the real writer and reads it back with
 * rec_reader_open_mem(m.p, m.len).  Shared by the analysis tests
 * (tests/unit/analysis/test_view*.c, test_findings*.c) through
 * view_fixture.h and findings_fixture.h.  Free m.p when done.
 */
#ifndef REC_TESTS_LIB_MEMBUF_H
#define REC_TESTS_LIB_MEMBUF_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct membuf {
	unsigned char *p;
	size_t len, cap;
} membuf;

static __attribute__((unused))
int mem_write(void *opaque, const void *buf, size_t len)
{
	membuf *m = opaque;
	if (m->len + len > m->cap) {
		size_t nc = m->cap ? m->cap : 4096;
		while (nc < m->len + len)
			nc *= 2;
		unsigned char *np = realloc(m->p, nc);
		if (!np)
			return -12;
		m->p = np;
		m->cap = nc;
	}
	memcpy(m->p + m->len, buf, len);
	m->len += len;
	return 0;
}

#endif /* REC_TESTS_LIB_MEMBUF_H */
