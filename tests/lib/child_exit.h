/* SPDX-License-Identifier: MIT */
/*
 * child_exit.h - how a test's forked child ends when the parent's recorder
 * was running.
 * memcheck checks a process for leaks when it exits.  In a forked child the
 * parent's other threads are gone, and whatever they held only in their
 * registers and stacks at fork() shows as "definitely lost" (the background
 * thread half-way through reading a module's DWARF: 7 KB of libdw's buffers,
 * in test_sampler under make test-valgrind).  A process image replaced by
 * exec is not checked, so the child ends by running `sh -c 'exit N'`: its
 * status is the same, and the parent's memory is checked in the parent.
 */
#ifndef REC_TESTS_LIB_CHILD_EXIT_H
#define REC_TESTS_LIB_CHILD_EXIT_H

#include <stdio.h>
#include <unistd.h>

static inline _Noreturn void rec_t_child_exit(int code)
{
	char cmd[24];
	snprintf(cmd, sizeof cmd, "exit %d", code & 255);
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	_exit(code); /* no shell: the status still reaches the parent */
}

#endif
