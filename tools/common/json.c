/* SPDX-License-Identifier: MIT */
/*
 * json.c - JSON on the fast buffer (cli.h, "JSON"): string escaping, doubles, the
 * small pretty writer, a reader problem as --json shows it.
 */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 if invalid
 * (bad lead byte, bad continuation, overlong, surrogate, > U+10FFFF). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	if (c < 0xC2)
		return 0;
	if (c < 0xE0) {
		if (n < 2 || (s[1] & 0xC0) != 0x80)
			return 0;
		return 2;
	}
	if (c < 0xF0) {
		if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
			return 0;
		if (c == 0xE0 && s[1] < 0xA0)
			return 0; /* overlong */
		if (c == 0xED && s[1] >= 0xA0)
			return 0; /* surrogate */
		return 3;
	}
	if (c < 0xF5) {
		if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
			return 0;
		if (c == 0xF0 && s[1] < 0x90)
			return 0; /* overlong */
		if (c == 0xF4 && s[1] >= 0x90)
			return 0; /* > U+10FFFF */
		return 4;
	}
	return 0;
}

/* Whether JSON text holds byte c as it is (printable ASCII but '"' and
 * '\\'); the others are escaped, or checked as UTF-8. */
static inline bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7F && c != '"' && c != '\\';
}

/* The bytes of s[0..n) before the first that is not plain(), eight at a
 * time: in each word the bytes below 0x20 and those equal to '"', '\\'
 * or DEL get their high bit set by the usual borrow tricks (exact for the
 * lowest such byte, which is all that is used), and bytes of 0x80 and up
 * have it already. */
static inline uint64_t not_plain8(const unsigned char *p)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t w;
	memcpy(&w, p, 8);
	uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\'), d = w ^ (ones * 0x7F);
	return (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b) |
		((d - ones) & ~d) | w) &
	       high;
}

static size_t plain_run(const unsigned char *s, size_t n)
{
	size_t i = 0, k = n;
	if (n < 8) {
		while (i < n && plain(s[i]))
			i++;
		return i;
	}
	for (; n - i >= 8; i += 8) {
		uint64_t m = not_plain8(s + i);
		if (m) {
			k = i + ((size_t)__builtin_ctzll(m) >> 3);
			break;
		}
	}
	if (k == n && i < n) { /* the tail: the last eight bytes (some seen already) */
		uint64_t m = not_plain8(s + n - 8);
		if (m)
			k = n - 8 + ((size_t)__builtin_ctzll(m) >> 3);
	}
	/* The lowest flagged byte is a true one (a flag above it can only be a
	 * borrow's), so the bytes before it are plain.  (Were it not, the
	 * caller would still write that byte right: it looks at it alone.) */
	return k;
}

void rec_out_json_string(const char *str, size_t len)
{
	static const char hx[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	rec_out_char('"');
	size_t i = 0;
	while (i < len) {
		/* Fast run of plain printable ASCII. */
		size_t j = i + plain_run(s + i, len - i);
		if (j > i) {
			rec_out_write(s + i, j - i);
			i = j;
			if (i == len)
				break;
		}
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			rec_out_write(e, 2);
			i++;
		} else if (c < 0x20 || c == 0x7F) {
			char e[6] = { '\\', 'u', '0', '0', hx[c >> 4], hx[c & 15] };
			rec_out_write(e, 6);
			i++;
		} else {
			size_t k = utf8_seq(s + i, len - i);
			if (k) {
				rec_out_write(s + i, k);
				i += k;
			} else {
				rec_out_write("\xEF\xBF\xBD", 3); /* U+FFFD */
				i++;
			}
		}
	}
	rec_out_char('"');
}

void rec_out_json_double(double v)
{
	if (!isfinite(v)) {
		REC_OUT_LIT("null");
		return;
	}
	char tmp[40];
	int n = snprintf(tmp, sizeof tmp, "%.17g", v);
	/* Prefer the shortest representation that reads back the same. */
	for (int prec = 1; prec < 17; prec++) {
		char t2[40];
		int n2 = snprintf(t2, sizeof t2, "%.*g", prec, v);
		if (strtod(t2, NULL) == v) {
			memcpy(tmp, t2, (size_t)n2 + 1);
			n = n2;
			break;
		}
	}
	rec_out_write(tmp, (size_t)n);
}

static void json_indent(int depth)
{
	rec_out_char('\n');
	for (int i = 0; i < depth; i++)
		REC_OUT_LIT("  ");
}

/* Called before writing any value or key: comma and newline as needed. */
static void json_pre(rec_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth == 0)
		return;
	int d = j->depth;
	if (!j->first[d]) {
		rec_out_char(',');
		if (j->compact[d])
			rec_out_char(' ');
	}
	j->first[d] = false;
	if (!j->compact[d])
		json_indent(d);
}

static void json_open(rec_json *j, char c, bool compact)
{
	json_pre(j);
	rec_out_char(c);
	if (j->depth + 1 < (int)(sizeof j->first / sizeof j->first[0]))
		j->depth++;
	j->first[j->depth] = true;
	j->compact[j->depth] = compact || (j->depth > 1 && j->compact[j->depth - 1]);
}

static void json_close(rec_json *j, char c)
{
	bool empty = j->first[j->depth];
	bool compact = j->compact[j->depth];
	if (j->depth > 0)
		j->depth--;
	if (!compact && !empty)
		json_indent(j->depth);
	rec_out_char(c);
}

void rec_json_begin_object(rec_json *j, bool compact) { json_open(j, '{', compact); }
void rec_json_end_object(rec_json *j) { json_close(j, '}'); }

void rec_json_problem(rec_json *j, bool with_file, const char *file, int64_t chunk,
		      uint64_t offset, rec_status status, const char *message)
{
	rec_json_begin_object(j, true);
	if (with_file) {
		rec_json_key(j, "file");
		rec_json_str(j, file);
	}
	rec_json_key(j, "chunk");
	if (chunk >= 0)
		rec_json_i64(j, chunk);
	else
		rec_json_null(j);
	rec_json_key(j, "offset");
	rec_json_u64(j, offset);
	rec_json_key(j, "status");
	rec_json_str(j, rec_strerror(status));
	rec_json_key(j, "message");
	rec_json_str(j, message);
	rec_json_end_object(j);
}
void rec_json_begin_array(rec_json *j, bool compact) { json_open(j, '[', compact); }
void rec_json_end_array(rec_json *j) { json_close(j, ']'); }

void rec_json_key(rec_json *j, const char *key)
{
	json_pre(j);
	rec_out_json_cstr(key);
	REC_OUT_LIT(": ");
	j->after_key = true;
}

void rec_json_str(rec_json *j, const char *s)
{
	json_pre(j);
	rec_out_json_cstr(s);
}

void rec_json_strn(rec_json *j, const char *s, size_t n)
{
	json_pre(j);
	rec_out_json_string(s, n);
}

void rec_json_u64(rec_json *j, uint64_t v)
{
	json_pre(j);
	rec_out_u64(v);
}

void rec_json_i64(rec_json *j, int64_t v)
{
	json_pre(j);
	rec_out_i64(v);
}

void rec_json_double(rec_json *j, double v)
{
	json_pre(j);
	rec_out_json_double(v);
}

void rec_json_bool(rec_json *j, bool v)
{
	json_pre(j);
	if (v)
		REC_OUT_LIT("true");
	else
		REC_OUT_LIT("false");
}

void rec_json_null(rec_json *j)
{
	json_pre(j);
	REC_OUT_LIT("null");
}

void rec_json_raw(rec_json *j, const char *s)
{
	json_pre(j);
	rec_out_str(s);
}

void rec_json_end(rec_json *j)
{
	(void)j;
	rec_out_char('\n');
}

void rec_json_head(rec_json *j, const char *view, const char *baseline, const rec_cli_input *in,
		   size_t n, const char *by)
{
	rec_json_begin_object(j, false);
	rec_json_key(j, "schema");
	rec_json_u64(j, 1);
	if (view) {
		rec_json_key(j, "view");
		rec_json_str(j, view);
	}
	if (baseline) {
		rec_json_key(j, "baseline");
		rec_json_begin_array(j, true);
		rec_json_str(j, baseline);
		rec_json_end_array(j);
	}
	rec_json_key(j, "files");
	rec_json_begin_array(j, true);
	for (size_t i = 0; i < n; i++)
		rec_json_str(j, in[i].name);
	rec_json_end_array(j);
	rec_json_key(j, "by");
	rec_json_str(j, by);
}
