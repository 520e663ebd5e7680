/* SPDX-License-Identifier: MIT */
/*
 * verify.c - fuzz rec_reader_verify_chunk() on every chunk the scanner
 * finds (payload checksum, every section, every event against metadata,
 * every pool reference, statistics against events), with and without
 * REC_READ_VERIFY.  A second verify of the same chunk must give the same
 * answer.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

static void scan(const uint8_t *data, size_t size, uint32_t flags)
{
	rec_reader *r = rec_fuzz_open(data, size, flags);
	if (!r)
		return;
	for (;;) {
		const rec_chunk_info *info = NULL;
		rec_status st = rec_reader_next_chunk(r, &info);
		if (st == REC_END)
			break;
		if (st != REC_OK) {
			rec_fuzz_problem(r);
			continue;
		}
		rec_fuzz_chunk_info(info);
		rec_status v1 = rec_reader_verify_chunk(r);
		if (v1 != REC_OK)
			rec_fuzz_problem(r);
		rec_status v2 = rec_reader_verify_chunk(r);
		if (v1 != v2) {
			fprintf(stderr, "verify: same chunk verified %d then %d\n", (int)v1, (int)v2);
			abort();
		}
	}
	rec_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	scan(data, size, 0);
	scan(data, size, REC_READ_VERIFY);
	return 0;
}
