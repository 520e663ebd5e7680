/* SPDX-License-Identifier: MIT */
/*
 * sqlname.c - the SQL name of an event type or field (spec/SCHEMA.md): every
 * character other than [A-Za-z0-9_] as '_', "t_" before a leading digit.
 * rec-sql names its tables and columns with it, rec-view --sql the tables
 * its SQL reads.
 */
#include <string.h>

#include "cli.h"

char *rec_cli_sql_ident(const char *s, const char *suffix)
{
	size_t n = strnlen(s, 4096), k = 0, ns = strlen(suffix);
	char *p = rec_cli_xmalloc(n + ns + 3);
	if (n == 0 || (s[0] >= '0' && s[0] <= '9')) {
		p[k++] = 't';
		p[k++] = '_';
	}
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  c == '_';
		p[k++] = ok ? c : '_';
	}
	memcpy(p + k, suffix, ns + 1);
	return p;
}
