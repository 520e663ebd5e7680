/* SPDX-License-Identifier: MIT */
/*
 * chunk_scan.c - fuzz the chunk scanner and header decoder: the raw header
 * decoder on the first bytes, then rec_reader_next_chunk() over the whole
 * input (resynchronisation after damage, METADATA and STATS decoding), every
 * problem and every borrowed string touched.  Also checks that the scanner
 * makes progress: it must not return more results than the input can hold
 * chunks or damaged spots.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/common_internal.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= REC_PREFIX_SIZE) {
		rec_chunk_header h;
		const char *msg = NULL;
		rec_status st = rec_chunk_header_decode(data, size, &h, &msg);
		if (st != REC_OK)
			rec_fuzz_str(msg);
		else
			rec_fuzz_sink += h.payload_size + h.raw_size + h.header_size;
	}

	rec_reader *r = rec_fuzz_open(data, size, 0);
	if (!r)
		return 0;
	/* Every REC_OK is a chunk of at least a prefix, every error a damaged
	 * spot of at least one byte: more results than bytes is a loop. */
	uint64_t limit = (uint64_t)size + 16;
	uint64_t results = 0;
	for (;;) {
		const rec_chunk_info *info = NULL;
		rec_status st = rec_reader_next_chunk(r, &info);
		if (st == REC_END)
			break;
		if (++results > limit) {
			fprintf(stderr, "chunk_scan: no progress after %llu results on %zu bytes\n",
				(unsigned long long)results, size);
			abort();
		}
		if (st == REC_OK)
			rec_fuzz_chunk_info(info);
		else
			rec_fuzz_problem(r);
	}
	rec_reader_stats rs;
	rec_reader_get_stats(r, &rs);
	rec_fuzz_sink += rs.chunks + rs.chunks_damaged + rs.bytes_skipped;
	rec_reader_close(r);
	return 0;
}
