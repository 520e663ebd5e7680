/* SPDX-License-Identifier: MIT */
/*
 * test_stats.c - stats.c: a chunk's STATS section (time range, dropped
 * events, per-type counts and bytes) and the plausibility of the numbers a
 * summary shows from the header and STATS alone.  Moved from
 * test_reader_damage.c: t_implausible_counts (counts and times that cannot
 * be true under good checksums).  New: the STATS of a recording made by
 * the real writer, chunk by chunk, equal what was written (events and
 * encoded bytes by type, dropped events, first and last ticks with
 * durations), and add up to the reader's and the summary's totals.
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
#include "rec/analysis.h"
#include "rec/rec.h"
#include "../../lib/damage.h"

/* Counts and times that cannot be true under good checksums (issue 16): a
 * header claiming 1e9 events, Dropped_Events of 2^63 in two chunks (a sum
 * that wraps to 0), Start_Wall_Ns = INT64_MIN.  Each chunk is reported as
 * damaged with its index and offset, the others are read, and the summary
 * counts nothing of it. */
static void t_implausible_counts(void **state)
{
	(void)state;
	for (int kind = 0; kind < 3; kind++) {
		uint64_t off[4];
		membuf m;
		if (kind == 1) {
			/* The writer states what it is told: 2^63 in chunks 1 and 2. */
			m = (membuf){ 0 };
			rec_sink sk = { mem_write, NULL, &m };
			rec_writer_options o = REC_WRITER_OPTIONS_INIT;
			o.anchor_wall_ns = 1000;
			o.anchor_ticks = 1;
			rec_writer *w;
			assert_int_equal(rec_writer_open(&w, &sk, &o), REC_OK);
			rec_type t = { 1, 0, "d.T", "", "", "", 0, NULL };
			assert_int_equal(rec_writer_add_type(w, &t), REC_OK);
			for (int c = 0; c < 3; c++) {
				off[c] = m.len;
				for (int i = 0; i < 4; i++) {
					assert_int_equal(rec_writer_begin(w, 1, 10 + (uint64_t)(4 * c + i), 0, 0, 0), REC_OK);
					assert_int_equal(rec_writer_end(w), REC_OK);
				}
				if (c)
					rec_writer_note_dropped(w, 1ull << 63);
				if (c < 2)
					assert_int_equal(rec_writer_flush(w), REC_OK);
			}
			assert_int_equal(rec_writer_close(w), REC_OK);
			off[3] = m.len;
		} else {
			m = make_rec(3, 4, REC_CODEC_ZSTD, off);
			uint8_t *h = m.p + off[1];
			if (kind == 0)
				rec_put_le64(h + REC_HOFF_EVENT_COUNT, 1000000000u);
			else
				rec_put_le64(h + REC_HOFF_START_WALL, (uint64_t)INT64_MIN);
			fix_header_crc(h);
		}
		static const char *const want[] = { "header Event_Count 1000000000 differs",
						    "Dropped_Events 9223372036854775808 over the plausible",
						    "Start_Wall_Ns -9223372036854775808" };
		int nbad = kind == 1 ? 2 : 1;
		rec_reader *r;
		assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "m", NULL), REC_OK);
		const rec_chunk_info *c;
		rec_status st;
		int ok = 0, bad = 0;
		while ((st = rec_reader_next_chunk(r, &c)) != REC_END) {
			if (st == REC_OK) {
				ok++;
				continue;
			}
			const rec_problem *p = rec_reader_problem(r);
			assert_int_equal(st, REC_ERR_CORRUPT);
			assert_int_equal(p->chunk, 1 + bad);
			assert_int_equal(p->offset, off[1 + bad]);
			assert_non_null(strstr(p->message, "implausible counts"));
			assert_non_null(strstr(p->message, want[kind]));
			bad++;
		}
		assert_int_equal(ok, 3 - nbad);
		assert_int_equal(bad, nbad);
		rec_reader_close(r);
		/* rec-print's path: the same chunks, the others' events. */
		outcome o;
		if (kind != 1) {
			drain_mem(m.p, m.len, REC_READ_ORDERED, &o);
			assert_int_equal(o.events, 8);
			assert_int_equal(o.problems, 1);
			assert_int_equal(o.pr[0].offset, off[1]);
		}
		/* The summary: nothing of the damaged chunks is counted. */
		rec_summary *sum;
		assert_int_equal(rec_summary_open(&sum), REC_OK);
		assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "m", NULL), REC_OK);
		assert_int_equal(rec_summary_add_reader(sum, r, "m", 0), REC_OK);
		rec_reader_close(r);
		const rec_summary_result *res = rec_summary_get(sum);
		assert_int_equal(res->chunks, (uint64_t)(3 - nbad));
		assert_int_equal(res->chunks_damaged, (uint64_t)nbad);
		assert_int_equal(res->events, 4u * (uint64_t)(3 - nbad));
		assert_int_equal(res->dropped, 0);
		assert_int_equal(res->problem_count, (size_t)nbad);
		assert_true(res->last_wall_ns >= res->first_wall_ns);
		assert_true(res->last_wall_ns - res->first_wall_ns < 1000000000);
		rec_summary_close(sum);
		free(m.p);
	}
}

/* ---- STATS against what was written ------------------------------------------------- */
static const rec_field two_fields[] = { { "v", "", "", REC_TYPE_U64, 0 } };

static void t_stats_values(void **state)
{
	(void)state;
	membuf m = { 0 };
	rec_sink sk = { mem_write, NULL, &m };
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.codec = REC_CODEC_ZSTD;
	o.anchor_wall_ns = 1700000000000000000;
	o.anchor_ticks = 1;
	o.tick_frequency = 1000000000u;
	rec_writer *w;
	assert_int_equal(rec_writer_open(&w, &sk, &o), REC_OK);
	rec_type a = { 1, 0, "s.A", "", "", "", 1, two_fields };
	rec_type b = { 2, REC_EVENT_HAS_DURATION, "s.B", "", "", "", 1, two_fields };
	assert_int_equal(rec_writer_add_type(w, &a), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &b), REC_OK);
	enum { CHUNKS = 4 };
	uint64_t na[CHUNKS], nb[CHUNKS], first[CHUNKS], last[CHUNKS], dropped[CHUNKS];
	uint64_t t = 1000, total = 0, total_dropped = 0;
	for (int c = 0; c < CHUNKS; c++) {
		na[c] = 10 + 7 * (uint64_t)c;
		nb[c] = 3 + (uint64_t)c;
		first[c] = t;
		last[c] = 0;
		for (uint64_t i = 0; i < na[c]; i++) {
			assert_int_equal(rec_writer_begin(w, 1, t, 0, 0, 0), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, i * 1000003u), REC_OK); /* varying sizes */
			assert_int_equal(rec_writer_end(w), REC_OK);
			last[c] = t > last[c] ? t : last[c];
			t += 5;
		}
		for (uint64_t i = 0; i < nb[c]; i++) {
			const uint64_t dur = 100 + 50 * i; /* the last B ends after the last A */
			assert_int_equal(rec_writer_begin(w, 2, t, dur, 0, 0), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, i), REC_OK);
			assert_int_equal(rec_writer_end(w), REC_OK);
			last[c] = t + dur > last[c] ? t + dur : last[c];
			t += 5;
		}
		dropped[c] = 11u * (uint64_t)c;
		if (dropped[c])
			rec_writer_note_dropped(w, dropped[c]);
		total += na[c] + nb[c];
		total_dropped += dropped[c];
		if (c + 1 < CHUNKS)
			assert_int_equal(rec_writer_flush(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);

	rec_reader *r;
	rec_reader_options ro = REC_READER_OPTIONS_INIT;
	ro.flags = REC_READ_VERIFY;
	assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "stats", &ro), REC_OK);
	const rec_chunk_info *ci;
	int c = 0;
	while (rec_reader_next_chunk(r, &ci) == REC_OK) {
		if (ci->event_count == 0 && c == CHUNKS)
			continue; /* a final chunk without events */
		assert_true(c < CHUNKS);
		assert_int_equal(ci->event_count, na[c] + nb[c]);
		assert_int_equal(ci->first_ticks, first[c]);
		assert_int_equal(ci->last_ticks, last[c]);
		assert_int_equal(ci->dropped_events, dropped[c]);
		assert_int_equal(ci->type_stats_count, 2);
		uint64_t bytes = 0;
		for (uint32_t k = 0; k < ci->type_stats_count; k++) {
			const rec_type_stats *ts = &ci->type_stats[k];
			assert_non_null(ts->type);
			assert_int_equal(ts->count, ts->type_id == 1 ? na[c] : nb[c]);
			assert_string_equal(ts->type->name, ts->type_id == 1 ? "s.A" : "s.B");
			assert_true(ts->bytes >= ts->count * 3); /* delta, value, size at least */
			bytes += ts->bytes;
		}
		assert_true(bytes <= ci->raw_size);
		/* the events decoded: as many of each type as STATS says */
		rec_event ev;
		uint64_t ka = 0, kb = 0;
		while (rec_reader_next_chunk_event(r, &ev) == REC_OK) {
			ka += ev.type->id == 1;
			kb += ev.type->id == 2;
		}
		assert_int_equal(ka, na[c]);
		assert_int_equal(kb, nb[c]);
		c++;
	}
	assert_int_equal(c, CHUNKS);
	rec_reader_stats rs;
	rec_reader_get_stats(r, &rs);
	assert_int_equal(rs.chunks_damaged, 0);
	rec_reader_close(r);

	/* the summary's totals are the sums of the chunks' STATS */
	rec_summary *sum;
	assert_int_equal(rec_summary_open(&sum), REC_OK);
	assert_int_equal(rec_reader_open_mem(&r, m.p, m.len, "stats", NULL), REC_OK);
	assert_int_equal(rec_summary_add_reader(sum, r, "stats", 0), REC_OK);
	rec_reader_close(r);
	const rec_summary_result *res = rec_summary_get(sum);
	assert_int_equal(res->events, total);
	assert_int_equal(res->dropped, total_dropped);
	assert_int_equal(res->chunks_damaged, 0);
	rec_summary_close(sum);
	free(m.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_implausible_counts),
		cmocka_unit_test(t_stats_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
