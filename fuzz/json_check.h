/* SPDX-License-Identifier: MIT */
/*
 * json_check.h - a strict JSON syntax check (RFC 8259) for the harnesses of
 * the tools that write JSON: rec_fuzz_json_ok() accepts exactly one value
 * with optional white space around it; strings must be valid UTF-8 when
 * utf8 is set.  Nesting is limited to 200 levels.
 */
#ifndef REC_FUZZ_JSON_CHECK_H
#define REC_FUZZ_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct rec_fuzz_json {
	const unsigned char *p, *end;
	bool utf8;
} rec_fuzz_json;

static inline void rec_fuzz_json_ws(rec_fuzz_json *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static inline bool rec_fuzz_json_digits(rec_fuzz_json *j)
{
	const unsigned char *s = j->p;
	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > s;
}

static inline bool rec_fuzz_json_number(rec_fuzz_json *j)
{
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (!rec_fuzz_json_digits(j))
		return false;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!rec_fuzz_json_digits(j))
			return false;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!rec_fuzz_json_digits(j))
			return false;
	}
	return true;
}

/* Length of a valid UTF-8 sequence at p, 0 if invalid. */
static inline size_t rec_fuzz_utf8(const unsigned char *p, size_t n)
{
	unsigned c = p[0];
	if (c < 0x80)
		return 1;
	size_t k = c >= 0xC2 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xF0 && c < 0xF5 ? 4 : 0;
	if (!k || n < k)
		return 0;
	for (size_t i = 1; i < k; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	if ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] >= 0xA0) || (c == 0xF0 && p[1] < 0x90) ||
	    (c == 0xF4 && p[1] >= 0x90))
		return 0;
	return k;
}

static inline bool rec_fuzz_json_string(rec_fuzz_json *j)
{
	if (j->p >= j->end || *j->p != '"')
		return false;
	j->p++;
	while (j->p < j->end) {
		unsigned char c = *j->p;
		if (c == '"') {
			j->p++;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c == '\\') {
			if (j->end - j->p < 2)
				return false;
			unsigned char e = j->p[1];
			if (e == 'u') {
				if (j->end - j->p < 6)
					return false;
				for (int i = 2; i < 6; i++) {
					unsigned char h = j->p[i];
					if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F')))
						return false;
				}
				j->p += 6;
				continue;
			}
			if (!strchr("\"\\/bfnrt", e) || !e)
				return false;
			j->p += 2;
			continue;
		}
		if (c >= 0x80 && j->utf8) {
			size_t k = rec_fuzz_utf8(j->p, (size_t)(j->end - j->p));
			if (!k)
				return false;
			j->p += k;
			continue;
		}
		j->p++;
	}
	return false;
}

static inline bool rec_fuzz_json_lit(rec_fuzz_json *j, const char *lit)
{
	size_t n = strlen(lit);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n) != 0)
		return false;
	j->p += n;
	return true;
}

static inline bool rec_fuzz_json_value(rec_fuzz_json *j, int depth)
{
	if (depth > 200)
		return false;
	rec_fuzz_json_ws(j);
	if (j->p >= j->end)
		return false;
	unsigned char c = *j->p;
	if (c == '{' || c == '[') {
		unsigned char close = c == '{' ? '}' : ']';
		j->p++;
		rec_fuzz_json_ws(j);
		if (j->p < j->end && *j->p == close) {
			j->p++;
			return true;
		}
		for (;;) {
			if (c == '{') {
				rec_fuzz_json_ws(j);
				if (!rec_fuzz_json_string(j))
					return false;
				rec_fuzz_json_ws(j);
				if (j->p >= j->end || *j->p++ != ':')
					return false;
			}
			if (!rec_fuzz_json_value(j, depth + 1))
				return false;
			rec_fuzz_json_ws(j);
			if (j->p >= j->end)
				return false;
			if (*j->p == ',') {
				j->p++;
				continue;
			}
			if (*j->p++ != close)
				return false;
			return true;
		}
	}
	if (c == '"')
		return rec_fuzz_json_string(j);
	if (c == 't')
		return rec_fuzz_json_lit(j, "true");
	if (c == 'f')
		return rec_fuzz_json_lit(j, "false");
	if (c == 'n')
		return rec_fuzz_json_lit(j, "null");
	return rec_fuzz_json_number(j);
}

/* Whether [p, p + n) is one JSON value (white space around it allowed). */
static inline bool rec_fuzz_json_ok(const char *p, size_t n, bool utf8)
{
	rec_fuzz_json j = { (const unsigned char *)p, (const unsigned char *)p + n, utf8 };
	if (!rec_fuzz_json_value(&j, 0))
		return false;
	rec_fuzz_json_ws(&j);
	return j.p == j.end;
}

#endif /* REC_FUZZ_JSON_CHECK_H */
