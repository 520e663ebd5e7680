/* SPDX-License-Identifier: MIT */
/*
 * strbuf.c - a growing NUL-terminated string (cli.h, "growing strings"):
 * Graphviz labels, rec-record's REC_OPTIONS, rec-sql's declarations.
 */
#include "cli.h"

#include <stdlib.h>

void rec_cli_strbuf_add(rec_cli_strbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (b->len + n + 1 > cap)
			cap *= 2;
		b->s = rec_cli_xrealloc(b->s, cap);
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void rec_cli_strbuf_str(rec_cli_strbuf *b, const char *s)
{
	rec_cli_strbuf_add(b, s, strlen(s));
}

void rec_cli_strbuf_printf(rec_cli_strbuf *b, const char *fmt, ...)
{
	char tmp[512];
	size_t n;
	va_list ap;
	va_start(ap, fmt);
	char *s = rec_cli_vformat(tmp, sizeof tmp, &n, fmt, ap);
	va_end(ap);
	if (!s)
		return;
	rec_cli_strbuf_add(b, s, n);
	if (s != tmp)
		free(s);
}

void rec_cli_strbuf_reset(rec_cli_strbuf *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
}

void rec_cli_strbuf_free(rec_cli_strbuf *b)
{
	free(b->s);
	memset(b, 0, sizeof *b);
}
