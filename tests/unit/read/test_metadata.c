/* SPDX-License-Identifier: MIT */
/*
 * test_metadata.c - metadata.c, decoding a chunk's METADATA section, on
 * hand-crafted chunks with valid checksums (nothing but the section's
 * bytes is wrong): the section cut at every length, a type id defined
 * twice, a type id 0, a field type out of range, more types than the
 * section can hold; each reported once as the chunk's problem, naming the
 * section, the type and the byte, at the section's offset in the file and
 * the chunk's index, and the chunks around it still read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common_internal.h"
#include "rec/rec.h"
#include "../../lib/damage.h"

/* A file of three chunks: good, one whose METADATA is md (n types), good.
 * Reads it from a real file; checks the good chunks' events come out and
 * returns the one problem (message in msg). */
static void three_chunks(const uint8_t *md, size_t len, uint32_t n, rec_problem *pr, char *msg,
			 uint64_t *bad_chunk_off)
{
	const hsec M = { REC_SECTION_METADATA, 1, 0, meta, sizeof(meta) };
	const hsec S = { REC_SECTION_STATS, 1, 0, stats, sizeof(stats) };
	const hsec E = { REC_SECTION_EVENTS, 1, 0, good_ev, sizeof(good_ev) };
	const hsec B = { REC_SECTION_METADATA, n, (uint32_t)len, md, len };
	hsec good[] = { M, S, E }, bad[] = { B, S, E };
	rec_buf f = { 0 };
	craft(&f, good, 3, 0, 0, 0);
	*bad_chunk_off = f.len;
	craft(&f, bad, 3, 0, 0, 0);
	craft(&f, good, 3, 0, 0, 0);
	char path[] = "/tmp/test_metadata.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, f.data, f.len), (ssize_t)f.len);
	close(fd);
	rec_reader *r;
	assert_int_equal(rec_reader_open_path(&r, path, NULL), REC_OK);
	rec_event ev;
	rec_status st;
	int events = 0, problems = 0;
	while ((st = rec_reader_next_event(r, &ev)) != REC_END) {
		if (st == REC_OK) {
			assert_string_equal(ev.type->name, "x");
			assert_int_equal(ev.values[0].v.u, 9);
			events++;
			continue;
		}
		assert_true(st < 0);
		*pr = *rec_reader_problem(r);
		snprintf(msg, 512, "%s", pr->message);
		problems++;
	}
	rec_reader_close(r);
	unlink(path);
	rec_buf_free(&f);
	assert_int_equal(events, 2);
	assert_int_equal(problems, 1);
}

static void t_cut_everywhere(void **state)
{
	(void)state;
	for (size_t cut = 1; cut < sizeof(meta); cut++) {
		rec_problem pr;
		char msg[512], want[128];
		uint64_t off;
		three_chunks(meta, cut, 1, &pr, msg, &off);
		print_message("METADATA cut to %zu bytes: %s\n", cut, msg);
		assert_int_equal(pr.chunk, 1);
		assert_int_equal(pr.offset, off + REC_HEADER_SIZE_V1); /* the section's header */
		assert_int_equal(pr.status, REC_ERR_CORRUPT);
		if (cut < 7) { /* a type takes at least 7 bytes */
			snprintf(want, sizeof want, "section 1 (METADATA) declares 1 types in %zu bytes",
				 cut);
			assert_string_equal(msg, want);
			continue;
		}
		assert_non_null(strstr(msg, "section 1 (METADATA) is malformed: type 0: "));
		/* the byte named is inside what is there */
		const char *at = strstr(msg, " at byte ");
		assert_non_null(at);
		assert_true(strtoul(at + 9, NULL, 10) <= cut);
	}
}

static void t_bad_values(void **state)
{
	(void)state;
	rec_problem pr;
	char msg[512];
	uint64_t off;
	/* the same type twice */
	uint8_t twice[2 * sizeof(meta)];
	memcpy(twice, meta, sizeof(meta));
	memcpy(twice + sizeof(meta), meta, sizeof(meta));
	three_chunks(twice, sizeof twice, 2, &pr, msg, &off);
	assert_string_equal(msg, "section 1 (METADATA): type id 1 defined twice");
	assert_int_equal(pr.chunk, 1);
	assert_int_equal(pr.offset, off + REC_HEADER_SIZE_V1);
	/* type id 0 */
	uint8_t m[sizeof(meta)];
	memcpy(m, meta, sizeof(meta));
	m[0] = 0;
	three_chunks(m, sizeof m, 1, &pr, msg, &off);
	assert_string_equal(msg, "section 1 (METADATA) is malformed: type 0: type id out of range "
				 "at byte 2");
	assert_int_equal(pr.chunk, 1);
	/* a field type past 32 bits (a 5-byte varint in place of 0x10) */
	uint8_t big[sizeof(meta) + 4];
	memcpy(big, meta, 11);
	static const uint8_t v33[] = { 0x90, 0x80, 0x80, 0x80, 0x10 };
	memcpy(big + 11, v33, sizeof v33);
	memcpy(big + 16, meta + 12, sizeof(meta) - 12);
	three_chunks(big, sizeof big, 1, &pr, msg, &off);
	assert_non_null(strstr(msg, "section 1 (METADATA) is malformed: type 0: field type or unit "
				    "out of range"));
	assert_int_equal(pr.offset, off + REC_HEADER_SIZE_V1);
	/* three types declared in 20 bytes */
	three_chunks(meta, sizeof(meta), 3, &pr, msg, &off);
	assert_string_equal(msg, "section 1 (METADATA) declares 3 types in 20 bytes");
	assert_int_equal(pr.chunk, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_cut_everywhere),
		cmocka_unit_test(t_bad_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
