/* SPDX-License-Identifier: MIT */
/*
 * test_out.c - the tools' fast output buffer (tools/common/out.c, cli.h):
 * rec_out_write() of every short length (its inline two-move copies), and
 * rec_out_json_string() (eight bytes at a time) against an escaper written
 * here byte by byte from the rules: plain printable ASCII as it is, '"' and
 * '\\' with a backslash, control characters and DEL as \u00XX, valid UTF-8
 * as it is, any other byte as U+FFFD; every byte class at every position
 * of strings of 0 to 40 bytes, and random strings.  Flushing goes to the
 * file's descriptor (rec_out_flush writes it directly): what a tmpfile
 * holds after it is what was written, in order with stdio's own bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../tools/common/cli.h"

/* The buffer's bytes since the last reset. */
static void out_reset(void) { rec_out_g.len = 0; }

/* Length of a valid UTF-8 sequence at s (n bytes left), 0 if none: the
 * same rules as RFC 3629 (no overlong forms, no surrogates, <= U+10FFFF). */
static size_t ref_utf8(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t k;
	uint32_t cp, min;
	if (c >= 0xC2 && c <= 0xDF) {
		k = 2;
		cp = c & 0x1F;
		min = 0x80;
	} else if (c >= 0xE0 && c <= 0xEF) {
		k = 3;
		cp = c & 0x0F;
		min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		k = 4;
		cp = c & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n < k)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return k;
}

/* The escaped string, quotes included, into out (returns its length). */
static size_t ref_escape(const unsigned char *s, size_t n, char *out)
{
	size_t o = 0;
	out[o++] = '"';
	for (size_t i = 0; i < n;) {
		unsigned c = s[i];
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
			i++;
		} else if (c < 0x20 || c == 0x7F) {
			o += (size_t)sprintf(out + o, "\\u%04x", c);
			i++;
		} else if (c < 0x80) {
			out[o++] = (char)c;
			i++;
		} else {
			size_t k = ref_utf8(s + i, n - i);
			static const char fffd[3] = { '\xEF', '\xBF', '\xBD' }; /* U+FFFD */
			const char *from = k ? (const char *)s + i : fffd;
			size_t len = k ? k : 3;
			for (size_t b = 0; b < len; b++)
				out[o++] = from[b];
			i += k ? k : 1;
		}
	}
	out[o++] = '"';
	return o;
}

static void check_escape(const unsigned char *s, size_t n)
{
	char want[8 * 64 + 8];
	size_t wn = ref_escape(s, n, want);
	out_reset();
	rec_out_json_string((const char *)s, n);
	if (rec_out_g.len != wn || memcmp(rec_out_g.buf, want, wn) != 0) {
		fprintf(stderr, "string of %zu bytes:", n);
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, " %02x", s[i]);
		fprintf(stderr, "\nwant %.*s\ngot  %.*s\n", (int)wn, want, (int)rec_out_g.len,
			rec_out_g.buf);
		fail();
	}
}

/* Each byte class at each position of plain strings of 0..40 bytes, the
 * string in a buffer of its own length (ASan sees any read past it). */
static void t_escape_positions(void **state)
{
	(void)state;
	static const unsigned char odd[] = { 0x00, 0x01, 0x1F, '"', '\\', 0x7F, 0x80, 0xBF,
					     0xC3, 0xE2, 0xF0, 0xFF, ' ', '~', 0x20, 0x7E };
	for (size_t n = 0; n <= 40; n++) {
		unsigned char *s = malloc(n ? n : 1);
		assert_non_null(s);
		for (size_t i = 0; i < n; i++)
			s[i] = (unsigned char)('a' + i % 26);
		check_escape(s, n);
		for (size_t pos = 0; pos < n; pos++)
			for (size_t k = 0; k < sizeof odd; k++) {
				unsigned char keep = s[pos];
				s[pos] = odd[k];
				check_escape(s, n);
				s[pos] = keep;
			}
		/* a valid two- and three-byte character at each position */
		static const unsigned char euro[3] = { 0xE2, 0x82, 0xAC };  /* U+20AC */
		static const unsigned char eacute[3] = { 0xC3, 0xA9, 'z' }; /* U+00E9 */
		for (size_t pos = 0; pos + 3 <= n; pos++) {
			unsigned char keep[3];
			memcpy(keep, s + pos, 3);
			memcpy(s + pos, euro, 3);
			check_escape(s, n);
			memcpy(s + pos, eacute, 3);
			check_escape(s, n);
			memcpy(s + pos, keep, 3);
		}
		free(s);
	}
}

/* Random strings: mostly plain, some of every class. */
static void t_escape_random(void **state)
{
	(void)state;
	uint64_t x = 0x9E3779B97F4A7C15ull;
	unsigned char s[64];
	for (int round = 0; round < 20000; round++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t n = (size_t)(x % 64);
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			unsigned r = (unsigned)(x >> 32);
			s[i] = (r % 8) ? (unsigned char)(0x20 + r % 95) : (unsigned char)(r >> 8);
		}
		check_escape(s, n);
	}
}

/* rec_out_write of 0..100 bytes at every alignment of the buffer's end. */
static void t_write_lengths(void **state)
{
	(void)state;
	unsigned char src[128];
	char dots[40];
	for (size_t i = 0; i < sizeof src; i++)
		src[i] = (unsigned char)(i * 7 + 1);
	memset(dots, '.', sizeof dots);
	for (size_t pre = 0; pre < 8; pre++)
		for (size_t n = 0; n <= 100; n++) {
			out_reset();
			rec_out_write(dots, pre);
			rec_out_write(src, n);
			rec_out_char('|');
			assert_int_equal(rec_out_g.len, pre + n + 1);
			assert_memory_equal(rec_out_g.buf, dots, pre);
			if (n)
				assert_memory_equal(rec_out_g.buf + pre, src, n);
			assert_int_equal(rec_out_g.buf[pre + n], '|');
		}
	out_reset();
}

/* Flushed to a file: the buffer's bytes after what stdio holds of it, in
 * order, across many flushes of a full buffer. */
static void t_flush_order(void **state)
{
	(void)state;
	FILE *f = tmpfile();
	assert_non_null(f);
	rec_cli_set_streams(f, NULL);
	fputs("stdio first\n", f); /* held by stdio until the flush */
	size_t total = 0;
	char line[64];
	for (int i = 0; i < 100000; i++) {
		int k = snprintf(line, sizeof line, "line %d\n", i);
		rec_out_write(line, (size_t)k);
		total += (size_t)k;
	}
	rec_out_flush();
	fputs("stdio last\n", f);
	fflush(f);
	rewind(f);
	char *all = malloc(total + 64);
	assert_non_null(all);
	size_t got = fread(all, 1, total + 64, f);
	assert_int_equal(got, total + strlen("stdio first\n") + strlen("stdio last\n"));
	assert_memory_equal(all, "stdio first\nline 0\nline 1\n", 26);
	assert_memory_equal(all + got - strlen("line 99999\nstdio last\n"), "line 99999\nstdio last\n",
			    strlen("line 99999\nstdio last\n"));
	free(all);
	rec_cli_set_streams(stdout, NULL);
	fclose(f);
}

int main(void)
{
	rec_cli_init("test_out");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_escape_positions),
		cmocka_unit_test(t_escape_random),
		cmocka_unit_test(t_write_lengths),
		cmocka_unit_test(t_flush_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
