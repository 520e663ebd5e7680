/* SPDX-License-Identifier: MIT */
/*
 * file_gen.c - test support: a checked writer for the programs that write
 * recordings for the CLI tests (file_gen.h).
 */
#include "file_gen.h"

#include <stdio.h>
#include <string.h>

void rec_t_fgen_ck(rec_t_fgen *g, rec_status st, const char *what)
{
	if (st != REC_OK && !g->failed) {
		fprintf(stderr, "%s: %s: %s (%s)\n", g->prog, what, rec_strerror(st),
			g->w ? rec_writer_errmsg(g->w) : "");
		g->failed = 1;
	}
}

bool rec_t_fgen_open(rec_t_fgen *g, const char *prog, const char *path, const rec_writer_options *o)
{
	g->prog = prog;
	g->w = NULL;
	g->failed = 0;
	rec_t_fgen_ck(g, rec_writer_open_path(&g->w, path, o), "open");
	return !g->failed;
}

uint64_t rec_t_fgen_str(rec_t_fgen *g, const char *s)
{
	uint64_t id = 0;
	rec_t_fgen_ck(g, rec_writer_intern_string(g->w, s, strlen(s), &id), "intern");
	return id;
}
