/* SPDX-License-Identifier: MIT */
/*
 * test_payload.c - payload.c, loading a chunk's payload: for the
 * statistics (rec_reader_next_chunk) a format 1.1 chunk's front (header,
 * section table, METADATA, STATS, covered by the Front_Checksum) is read
 * and its events are not, while a 1.0 chunk's whole payload must be read
 * for its checksum; measured on a real file with the kernel's count of
 * bytes read (/proc/self/io rchar).  Moved from test_reader_damage.c:
 * t_front_reads_little.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common_internal.h"
#include "rec/rec.h"
#include "../../lib/damage.h"
#include "../../lib/v10.h"




/* rec_reader_next_chunk() on a 1.1 file reads the section headers, METADATA
 * and STATS, not the EVENTS bytes (the kernel's count of bytes this process
 * read, /proc/self/io rchar, grows by a small part of the file); on the same
 * recording as 1.0 it reads every payload byte to check its checksum. */
static uint64_t rchar(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	assert_non_null(f);
	char line[128];
	uint64_t v = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "rchar: %llu", (unsigned long long *)&v) == 1)
			break;
	fclose(f);
	return v;
}

static void t_front_reads_little(void **state)
{
	(void)state;
	uint64_t off[5];
	membuf m = make_rec(4, 20000, REC_CODEC_NONE, off);
	for (int v10 = 0; v10 < 2; v10++) {
		if (v10)
			assert_int_equal(rec_t_to_v10(m.p, m.len), 4);
		write_file(tpath("little.rec"), m.p, m.len);
		rec_reader *r;
		assert_int_equal(rec_reader_open_path(&r, tpath("little.rec"), NULL), REC_OK);
		uint64_t before = rchar(), events = 0;
		const rec_chunk_info *c;
		rec_status st;
		while ((st = rec_reader_next_chunk(r, &c)) == REC_OK)
			events += c->event_count;
		uint64_t read = rchar() - before;
		assert_int_equal(st, REC_END);
		assert_int_equal(events, 80000);
		rec_reader_close(r);
		print_message("format 1.%d: read %llu of %zu bytes\n", 1 - v10, (unsigned long long)read, m.len);
		if (v10)
			assert_true(read >= m.len);
		else
			assert_true(read < m.len / 4);
	}
	free(m.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_front_reads_little),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
