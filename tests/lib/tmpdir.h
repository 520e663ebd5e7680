/* SPDX-License-Identifier: MIT */
/*
 * tmpdir.h - test support: a private scratch directory per test program and
 * the small time helpers the recorder tests share (tests/unit/record/
 * test_output.c, test_recorder_stress.c).  No cmocka here: every
 * object in tests/lib is also linked into the tests/helpers programs.
 *
 *   char dir[256];
 *   if (rec_t_tmpdir_create(dir, sizeof dir, "rec-faults") != 0)
 *           return 1;
 *   int rc = cmocka_run_group_tests(tests, NULL, NULL);
 *   return rec_t_tmpdir_finish(dir, rc);
 */
#ifndef REC_TESTS_LIB_TMPDIR_H
#define REC_TESTS_LIB_TMPDIR_H

#include <stddef.h>
#include <stdint.h>

/* Creates a new directory /tmp/PREFIX-XXXXXX (mode 0700) and writes its path
 * to buf.  0, or -1 (errno set; buf too small: ENAMETOOLONG) with a message
 * on stderr. */
int rec_t_tmpdir_create(char *buf, size_t size, const char *prefix);

/* Removes dir and everything under it (no symlink is followed).  0, or -1
 * with a message on stderr naming what could not be removed. */
int rec_t_tmpdir_remove(const char *dir);

/* For main()'s return: the tests' result rc; when it is 0, the directory is
 * removed and a failure to remove it makes the result 1.  A failed run keeps
 * its directory for a look. */
int rec_t_tmpdir_finish(const char *dir, int rc);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t rec_t_mono_ns(void);

/* Sleeps ms milliseconds, resumed after signals. */
void rec_t_sleep_ms(long ms);

#endif
