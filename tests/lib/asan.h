/* SPDX-License-Identifier: MIT */
/*
 * asan.h - TEST_UNDER_ASAN: 1 in a build with AddressSanitizer (make
 * test-asan), else 0.  ASan's allocator is not fork-safe (a lock another
 * thread of the parent held at fork() stays held in the child), so a test
 * whose forked child allocates while the parent's threads run leaves that
 * part out under it.
 */
#ifndef REC_TESTS_LIB_ASAN_H
#define REC_TESTS_LIB_ASAN_H

#if defined(__SANITIZE_ADDRESS__)
#define TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_UNDER_ASAN 1
#endif
#endif
#ifndef TEST_UNDER_ASAN
#define TEST_UNDER_ASAN 0
#endif

#endif
