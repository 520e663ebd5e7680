/* SPDX-License-Identifier: MIT */
/*
 * options.c - option parsing of the tools (cli.h, "option parsing"): getopt with
 * usage errors, the one input operand, comma-separated lists, allocation
 * that exits on failure.
 */
#include "cli.h"

#include <stdlib.h>

int rec_cli_getopt(int argc, char *const argv[], const char *shortopts,
		   const struct option *longopts)
{
	opterr = 0;
	int prev = optind;
	int c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (c != '?' && c != ':')
		return c;
	/* Name the offending option as the user wrote it. */
	const char *arg = (prev < argc) ? argv[prev] : "";
	if (optind > prev && optind - 1 < argc && optind - 1 > 0)
		arg = argv[optind - 1];
	if (strncmp(arg, "--", 2) == 0) {
		/* A long option: unknown, ambiguous, or a missing/extra value. */
		const char *eq = strchr(arg, '=');
		size_t n = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
		const struct option *hit = NULL;
		int matches = 0;
		for (const struct option *o = longopts; o && o->name; o++) {
			if (strlen(o->name) < n || memcmp(o->name, arg + 2, n) != 0)
				continue; /* not a prefix of this option's name */
			if (strlen(o->name) == n) {
				hit = o;
				matches = 1;
				break;
			}
			hit = o;
			matches++;
		}
		if (matches == 1 && hit->has_arg == required_argument && !eq)
			rec_cli_usage_error("option '--%s' needs a value", hit->name);
		if (matches == 1 && hit->has_arg == no_argument && eq)
			rec_cli_usage_error("option '--%s' takes no value", hit->name);
		if (matches > 1)
			rec_cli_usage_error("ambiguous option '%.*s'", (int)(n + 2), arg);
		rec_cli_usage_error("unknown option '%.*s'", (int)(n + 2), arg);
	}
	if (c == ':' || (optopt > 0 && optopt < 256 && strchr(shortopts, optopt)))
		rec_cli_usage_error("option '-%c' needs a value", optopt);
	if (optopt > 0 && optopt < 256)
		rec_cli_usage_error("unknown option '-%c'", optopt);
	rec_cli_usage_error("unknown option '%s'", arg);
}

void rec_cli_common_option(int c, const char *usage_text)
{
	if (c == 'h')
		rec_cli_help(usage_text);
	if (c == REC_CLI_OPT_VERSION)
		rec_cli_version();
	rec_cli_usage_error("unexpected option");
}

const char *rec_cli_opt_nonempty(const char *option, const char *what, const char *s)
{
	if (!*s)
		rec_cli_usage_error("%s: empty %s", option, what);
	return s;
}

void rec_cli_opt_list(rec_cli_list *l, const char *option, const char *what, const char *csv)
{
	size_t before = l->count;
	rec_cli_list_add_csv(l, csv);
	if (l->count == before)
		rec_cli_usage_error("%s: no %s in '%s'", option, what, csv);
}

const char *rec_cli_one_file(int argc, char *const argv[])
{
	if (optind >= argc)
		rec_cli_usage_error("no input file");
	if (argc - optind > 1)
		rec_cli_usage_error("one input file only (got %d)", argc - optind);
	return argv[optind];
}

void *rec_cli_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		rec_cli_error("out of memory");
		exit(REC_EXIT_DATA);
	}
	return p;
}

void *rec_cli_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		rec_cli_error("out of memory");
		exit(REC_EXIT_DATA);
	}
	return q;
}

char *rec_cli_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = rec_cli_xmalloc(n);
	memcpy(p, s, n);
	return p;
}

void rec_cli_list_add_csv(rec_cli_list *l, const char *csv)
{
	char *copy = rec_cli_xstrdup(csv);
	l->copies = rec_cli_xrealloc(l->copies, (l->ncopies + 1) * sizeof *l->copies);
	l->copies[l->ncopies++] = copy;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!*tok)
			continue;
		if (l->count == l->cap) {
			l->cap = l->cap ? l->cap * 2 : 8;
			l->items = rec_cli_xrealloc(l->items, l->cap * sizeof *l->items);
		}
		l->items[l->count++] = tok;
	}
}

void rec_cli_list_free(rec_cli_list *l)
{
	for (size_t i = 0; i < l->ncopies; i++)
		free(l->copies[i]);
	free(l->copies);
	free(l->items);
	memset(l, 0, sizeof *l);
}
