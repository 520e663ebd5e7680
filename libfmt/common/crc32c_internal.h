/* SPDX-License-Identifier: MIT */
/*
 * crc32c_internal.h - the two implementations behind rec_crc32c(), exposed so
 * tests can check that they agree.  Not for other library code: call
 * rec_crc32c(), which picks the fastest one.
 */
#ifndef LIBREC_CRC32C_INTERNAL_H
#define LIBREC_CRC32C_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Portable table-driven (slice-by-8) CRC32C; same contract as rec_crc32c(). */
uint32_t rec_crc32c_sw(uint32_t crc, const void *buf, size_t len);
/* true if this CPU has the SSE4.2 crc32 instruction (x86-64 only). */
bool rec_crc32c_hw_available(void);
/* SSE4.2 CRC32C; same contract as rec_crc32c().  Must only be called when
 * rec_crc32c_hw_available() is true (on other targets it is the software
 * version). */
uint32_t rec_crc32c_hw(uint32_t crc, const void *buf, size_t len);

#endif /* LIBREC_CRC32C_INTERNAL_H */
