/* SPDX-License-Identifier: MIT */
/*
 * typesel.c - event-type selections of the tools (cli.h, "event-type
 * selections"): which of a tool's name or category patterns matched a type
 * of the input, and the one usage error for a pattern that matched none,
 * with the names the input has.
 */
#include "cli.h"

#include <fnmatch.h>
#include <stdlib.h>

void rec_cli_typesel_init(rec_cli_typesel *s, const char *const *patterns, size_t count,
			  uint32_t flags)
{
	memset(s, 0, sizeof *s);
	s->patterns = patterns;
	s->count = count;
	s->flags = flags;
	s->hit = rec_cli_xmalloc((count ? count : 1) * sizeof *s->hit);
	memset(s->hit, 0, (count ? count : 1) * sizeof *s->hit);
}

void rec_cli_typesel_free(rec_cli_typesel *s)
{
	for (size_t i = 0; i < s->nseen; i++)
		free(s->seen[i]);
	free(s->seen);
	free(s->hit);
	memset(s, 0, sizeof *s);
}

static bool has_glob(const char *p) { return strpbrk(p, "*?[") != NULL; }

bool rec_cli_name_matches(const char *pattern, const char *name)
{
	return has_glob(pattern) ? fnmatch(pattern, name, 0) == 0 : strcmp(pattern, name) == 0;
}

bool rec_cli_category_matches(const char *pattern, const char *cat)
{
	if (rec_cli_name_matches(pattern, cat))
		return true;
	char buf[512];
	size_t n = strlen(cat);
	if (n >= sizeof buf)
		n = sizeof buf - 1;
	memcpy(buf, cat, n);
	buf[n] = 0;
	for (size_t i = n; i-- > 0;) {
		if (buf[i] == '/') {
			buf[i] = 0;
			if (rec_cli_name_matches(pattern, buf))
				return true;
		}
	}
	return false;
}

static void note(rec_cli_typesel *s, const char *name)
{
	if (!name || !*name)
		return;
	for (size_t i = 0; i < s->nseen; i++)
		if (strcmp(s->seen[i], name) == 0)
			return;
	if (s->nseen == s->capseen) {
		s->capseen = s->capseen ? s->capseen * 2 : 16;
		s->seen = rec_cli_xrealloc(s->seen, s->capseen * sizeof *s->seen);
	}
	s->seen[s->nseen++] = rec_cli_xstrdup(name);
}

bool rec_cli_typesel_type(rec_cli_typesel *s, const rec_type *t)
{
	bool cat = (s->flags & REC_CLI_TYPESEL_CATEGORY) != 0;
	const char *name = cat ? t->category : t->name;
	if (!name)
		name = "";
	note(s, name);
	bool sel = false;
	for (size_t i = 0; i < s->count; i++) {
		const char *p = s->patterns[i];
		bool m = cat ? rec_cli_category_matches(p, name)
		       : (s->flags & REC_CLI_TYPESEL_EXACT) ? strcmp(p, name) == 0
							   : rec_cli_name_matches(p, name);
		if (m) {
			s->hit[i] = true;
			sel = true;
		}
	}
	return sel;
}

void rec_cli_typesel_chunk(rec_cli_typesel *s, const rec_chunk_info *c)
{
	for (uint32_t i = 0; i < c->type_count; i++)
		(void)rec_cli_typesel_type(s, &c->types[i]);
}

static void scan_chunk(void *ctx, const rec_chunk_info *c) { rec_cli_typesel_chunk(ctx, c); }

bool rec_cli_typesel_scan(rec_cli_typesel *s, const rec_cli_input *in)
{
	return rec_cli_each_chunk(in, scan_chunk, s);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int rec_cli_typesel_check(const rec_cli_typesel *s)
{
	/* No type at all (no readable chunk yet): nothing a name could have
	 * matched, so not a usage error; the tool says what it read. */
	if (!s->nseen)
		return REC_EXIT_OK;
	for (size_t i = 0; i < s->count; i++) {
		if (s->hit[i])
			continue;
		static char list[8192];
		size_t len = 0;
		list[0] = 0;
		if (s->nseen) /* qsort(NULL, 0, ...) is undefined: found by fuzz/print.c */
			qsort(s->seen, s->nseen, sizeof *s->seen, str_cmp);
		for (size_t k = 0; k < s->nseen && len + 8 < sizeof list; k++) {
			int n = snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "",
					 s->seen[k]);
			if (n < 0 || (size_t)n >= sizeof list - len) {
				snprintf(list + len, sizeof list - len, ", ...");
				break;
			}
			len += (size_t)n;
		}
		return rec_cli_usage_fail("no event %s matches '%s'; the input has: %s",
					  (s->flags & REC_CLI_TYPESEL_CATEGORY) ? "category" : "type",
					  s->patterns[i], list);
	}
	return REC_EXIT_OK;
}
