/* SPDX-License-Identifier: MIT */
/*
 * file_gen.h - test support: the writer of a program that writes a
 * recording to a file for a CLI test (tests/helpers/rec_test_*_gen.c,
 * rec_test_lock_dense.c): every call checked, the first failure said once
 * on stderr with the program's name and the writer's message, the later
 * ones quiet (the program exits 1 at the end).  No cmocka here: the objects
 * of tests/lib are linked into the helper programs too.
 *
 *   static rec_t_fgen g;
 *   if (!rec_t_fgen_open(&g, "rec_test_x_gen", argv[1], &opts))
 *           return 1;
 *   rec_t_fgen_ck(&g, rec_writer_begin(g.w, ...), "begin");
 *   ...
 *   rec_t_fgen_ck(&g, rec_writer_close(g.w), "close");
 *   return g.failed;
 */
#ifndef REC_TESTS_LIB_FILE_GEN_H
#define REC_TESTS_LIB_FILE_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "rec/rec.h"

typedef struct rec_t_fgen {
	const char *prog;
	rec_writer *w;
	int failed; /* 1 after a failure */
} rec_t_fgen;

/* Opens a writer on path with o (NULL: the defaults) into g->w.  false
 * (said) when it cannot. */
bool rec_t_fgen_open(rec_t_fgen *g, const char *prog, const char *path, const rec_writer_options *o);
/* The result st of what: the first failure said and noted in g->failed. */
void rec_t_fgen_ck(rec_t_fgen *g, rec_status st, const char *what);
/* s interned in g's writer: its string id (0 after a failure). */
uint64_t rec_t_fgen_str(rec_t_fgen *g, const char *s);

#endif /* REC_TESTS_LIB_FILE_GEN_H */
