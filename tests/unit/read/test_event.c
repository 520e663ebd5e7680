/* SPDX-License-Identifier: MIT */
/*
 * test_event.c - event.c: decoding event records, file-order iteration
 * across chunks and within one (rec_reader_next_chunk_event), and full
 * verification of a chunk (rec_reader_verify_chunk).  Moved from
 * test_reader.c: t_chunk_events, t_verify_mismatch.  New: a real file of
 * many chunks read event by event and chunk by chunk gives the same
 * events, each decoded the same.
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
#include "../../lib/ordrec.h"
#include "../../lib/craft_chunk.h"

/* rec_reader_next_chunk_event(): the events of the entered chunk only, REC_END
 * at its end; a chunk passed over with rec_reader_next_chunk() is not read,
 * and the next chunk entered starts at its own first event. */
static void t_chunk_events(void **state)
{
	(void)state;
	membuf m = { 0 };
	rec_writer *w = ord_writer(&m, 7, 1700000000000000000);
	for (int i = 0, k = 0; i < 12; i++) {
		ord_put(w, ord_ticks[i], (uint32_t)i);
		if (i + 1 == ord_chunk_end[k]) {
			assert_int_equal(rec_writer_flush(w), REC_OK);
			k++;
		}
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
	rec_reader *r;
	assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "mem", NULL), REC_OK);
	rec_event ev;
	/* before any chunk: nothing */
	assert_int_equal(rec_reader_next_chunk_event(r, &ev), REC_END);
	const rec_chunk_info *ci;
	int seen[12] = { 0 };
	for (int k = 0; k < 3; k++) {
		assert_int_equal(rec_reader_next_chunk(r, &ci), REC_OK);
		if (k == 1)
			continue; /* passed over */
		int first = k == 0 ? 0 : ord_chunk_end[k - 1], n = 0;
		rec_status st;
		while ((st = rec_reader_next_chunk_event(r, &ev)) == REC_OK) {
			assert_int_equal(ev.chunk->index, (uint64_t)k);
			assert_int_equal(ev.values[0].v.u, (uint64_t)(first + n));
			seen[first + n]++;
			n++;
		}
		assert_int_equal(st, REC_END);
		assert_int_equal(n, ord_chunk_end[k] - first);
		assert_int_equal(rec_reader_next_chunk_event(r, &ev), REC_END);
	}
	for (int i = 0; i < 12; i++)
		assert_int_equal(seen[i], i >= 5 && i < 10 ? 0 : 1);
	rec_reader_stats st;
	rec_reader_get_stats(r, &st);
	assert_int_equal(st.events, 7);
	rec_reader_close(r);
	rec_reader_options o = REC_READER_OPTIONS_INIT;
	o.flags = REC_READ_ORDERED;
	assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "mem", &o), REC_OK);
	assert_int_equal(rec_reader_next_chunk_event(r, &ev), REC_ERR_STATE);
	assert_int_equal(rec_reader_next_chunk_event(NULL, &ev), REC_ERR_INVALID_ARG);
	rec_reader_close(r);
	free(m.p);
}

/* Statistics that disagree with the events: verification says which. */
static void t_verify_mismatch(void **state)
{
	(void)state;
	hsec s[3];
	memset(s, 0, sizeof(s));
	s[0].kind = REC_SECTION_METADATA;
	s[0].items = 1;
	rec_buf *b = &s[0].data;
	assert_true(rec_buf_varint(b, 1) && rec_buf_varint(b, 0));
	put_str(b, "v.T");
	put_str(b, "");
	put_str(b, "");
	put_str(b, "");
	assert_true(rec_buf_varint(b, 0));
	s[1].kind = REC_SECTION_EVENTS;
	s[1].items = 2;
	static const uint8_t ev[] = { 2, 1, 2, 2, 1, 4 }; /* ticks +1, +3 */
	assert_true(rec_buf_append(&s[1].data, ev, sizeof(ev)));
	s[2].kind = REC_SECTION_STATS;
	s[2].items = 1;
	b = &s[2].data;
	/* Says 3 events (there are 2): more than the section holds, so the
	 * chunk is implausible before verification (issue 16). */
	assert_true(rec_buf_varint(b, rec_zigzag(1)) && rec_buf_varint(b, rec_zigzag(3)) &&
		    rec_buf_varint(b, 0) && rec_buf_varint(b, 1) && rec_buf_varint(b, 1) &&
		    rec_buf_varint(b, 3) && rec_buf_varint(b, 6));
	rec_buf f = { 0 };
	craft_chunk(&f, 0, s, 3, 2, REC_CODEC_NONE, 3);
	rec_reader *r;
	assert_int_equal(rec_reader_open_mem(&r, f.data, f.len, "v", NULL), REC_OK);
	const rec_chunk_info *c;
	assert_int_equal(rec_reader_next_chunk(r, &c), REC_ERR_CORRUPT);
	const rec_problem *pr = rec_reader_problem(r);
	assert_int_equal(pr->chunk, 0);
	assert_non_null(strstr(pr->message, "implausible counts: STATS: type 1 has 3 events in 6 bytes"));
	rec_reader_close(r);
	/* Says 1 event (there are 2): plausible, only verification tells. */
	rec_buf_free(&f);
	s[2].data.len = 0;
	assert_true(rec_buf_varint(b, rec_zigzag(1)) && rec_buf_varint(b, rec_zigzag(3)) &&
		    rec_buf_varint(b, 0) && rec_buf_varint(b, 1) && rec_buf_varint(b, 1) &&
		    rec_buf_varint(b, 1) && rec_buf_varint(b, 6));
	craft_chunk(&f, 0, s, 3, 2, REC_CODEC_NONE, 3);
	assert_int_equal(rec_reader_open_mem(&r, f.data, f.len, "v", NULL), REC_OK);
	assert_int_equal(rec_reader_next_chunk(r, &c), REC_OK);
	assert_int_equal(rec_reader_verify_chunk(r), REC_ERR_CORRUPT);
	pr = rec_reader_problem(r);
	assert_int_equal(pr->chunk, 0);
	assert_non_null(strstr(pr->message, "has 1 events"));
	rec_reader_close(r);
	/* A header Duration_Ticks that disagrees with the events. */
	rec_buf_free(&f);
	s[2].data.len = 0;
	assert_true(rec_buf_varint(b, rec_zigzag(1)) && rec_buf_varint(b, rec_zigzag(3)) &&
		    rec_buf_varint(b, 0) && rec_buf_varint(b, 1) && rec_buf_varint(b, 1) &&
		    rec_buf_varint(b, 2) && rec_buf_varint(b, 6));
	craft_chunk(&f, 0, s, 3, 2, REC_CODEC_NONE, 4);
	assert_int_equal(rec_reader_open_mem(&r, f.data, f.len, "v", NULL), REC_OK);
	assert_int_equal(rec_reader_next_chunk(r, &c), REC_OK);
	assert_int_equal(rec_reader_verify_chunk(r), REC_ERR_CORRUPT);
	assert_non_null(strstr(rec_reader_problem(r)->message, "Duration_Ticks 4"));
	/* The events themselves are intact and still readable. */
	rec_event e;
	assert_int_equal(rec_reader_next_event(r, &e), REC_OK);
	assert_int_equal(e.ticks, 1001);
	assert_int_equal(rec_reader_next_event(r, &e), REC_OK);
	assert_int_equal(e.ticks, 1003);
	assert_int_equal(rec_reader_next_event(r, &e), REC_END);
	rec_reader_close(r);
	rec_buf_free(&f);
	for (int i = 0; i < 3; i++)
		rec_buf_free(&s[i].data);
}

/* Options and arguments. */
/* ---- the two iterations agree ------------------------------------------------------ */
static void t_two_iterations(void **state)
{
	(void)state;
	membuf m = { 0 };
	rec_writer *w = ord_writer(&m, 9, 1700000000000000000LL);
	const uint32_t n = 5000;
	uint32_t chunks = 1;
	for (uint32_t i = 0; i < n; i++) {
		ord_put(w, 1000 + (uint64_t)i * 3 + i % 7, i);
		if (i % 333 == 332) {
			assert_int_equal(rec_writer_flush(w), REC_OK);
			chunks++;
		}
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
	char path[] = "/tmp/test_event.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, m.p, m.len), (ssize_t)m.len);
	close(fd);
	typedef struct seen_ev {
		uint64_t ticks, chunk, offset, thread;
		int64_t wall;
		uint32_t seq;
	} seen_ev;
	seen_ev *a = calloc(n, sizeof *a);
	assert_non_null(a);
	rec_reader *r;
	rec_event ev;
	rec_status st;
	uint32_t k = 0;
	assert_int_equal(rec_reader_open_path(&r, path, NULL), REC_OK);
	while ((st = rec_reader_next_event(r, &ev)) == REC_OK) {
		assert_true(k < n);
		a[k] = (seen_ev){ ev.ticks, ev.chunk->index, ev.offset, ev.thread->os_tid, ev.wall_ns,
				  (uint32_t)ev.values[0].v.u };
		assert_int_equal(a[k].seq, k); /* file order */
		k++;
	}
	assert_int_equal(st, REC_END);
	assert_int_equal(k, n);
	rec_reader_close(r);
	assert_int_equal(rec_reader_open_path(&r, path, NULL), REC_OK);
	const rec_chunk_info *ci;
	uint32_t c = 0;
	k = 0;
	while (rec_reader_next_chunk(r, &ci) == REC_OK) {
		assert_int_equal(ci->index, c);
		uint64_t in_chunk = 0;
		while ((st = rec_reader_next_chunk_event(r, &ev)) == REC_OK) {
			assert_true(k < n);
			assert_int_equal(ev.ticks, a[k].ticks);
			assert_int_equal(ev.chunk->index, a[k].chunk);
			assert_int_equal(ev.offset, a[k].offset);
			assert_int_equal(ev.wall_ns, a[k].wall);
			assert_int_equal(ev.thread->os_tid, a[k].thread);
			assert_int_equal(ev.values[0].v.u, a[k].seq);
			k++;
			in_chunk++;
		}
		assert_int_equal(st, REC_END);
		assert_int_equal(in_chunk, ci->event_count);
		assert_int_equal(rec_reader_verify_chunk(r), REC_OK);
		c++;
	}
	assert_int_equal(k, n);
	assert_int_equal(c, chunks);
	rec_reader_close(r);
	unlink(path);
	free(a);
	free(m.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_chunk_events),
		cmocka_unit_test(t_verify_mismatch),
		cmocka_unit_test(t_two_iterations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
