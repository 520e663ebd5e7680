/* SPDX-License-Identifier: MIT */
/*
 * test_prefetch.c - prefetch.c, the next chunk's events decompressed on a
 * second thread: a multi-chunk recording read from a file and from memory,
 * in file order and in time order, gives every event once with its value
 * (the worker runs while it is read and is gone after rec_reader_close);
 * and when a chunk's stored events change on disk after the worker read
 * them, the reader decodes what the file holds now (here: damage, reported
 * as such), never the worker's stale copy.  More chunks than the worker
 * holds ahead, read fast, slowly and closed halfway; damage ahead of the
 * reader (spoiled events, a chunk header overwritten) reported, the other
 * chunks' events all read.  The worker's pre-scan (prescan() in prefetch.c)
 * spares the ordered reader's scan of the chunks whose records are in time
 * order and of Type_Ids below REC_PRESCAN_IDS, and the events, their order
 * and the counts are what the recording holds, also where a chunk is out of
 * order or holds a higher Type_Id (scanned as before).  With a selection
 * of the rarer types the worker joins the chunks sparse, and the events,
 * their offsets, order and counts are the same as from whole sections.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common_internal.h"
#include "read/read_internal.h"
#include "rec/rec.h"

#define NCHUNKS 4
#define PER 20000

static char tmpdir[] = "/tmp/test_prefetch.XXXXXX";

static const char *tpath(const char *name)
{
	static char buf[256];
	snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
	return buf;
}

typedef struct mem_sink {
	uint8_t *p;
	size_t n, cap;
} mem_sink;

static int mem_write(void *o, const void *b, size_t n)
{
	mem_sink *m = o;
	if (m->n + n > m->cap) {
		size_t c = (m->n + n) * 2;
		uint8_t *q = realloc(m->p, c);
		if (!q)
			return -ENOMEM;
		m->p = q;
		m->cap = c;
	}
	memcpy(m->p + m->n, b, n);
	m->n += n;
	return 0;
}

static const rec_field fields[] = {
	{ "n", "", "", REC_TYPE_U32, 0 },
	{ "x", "", "", REC_TYPE_U64, 0 },
};

/* splitmix64 of k: values that do not compress, so that a chunk's events
 * are far larger than the reader's 16 KiB read window */
static uint64_t mix(uint64_t z)
{
	z += 0x9E3779B97F4A7C15ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* A zstd writer into m (the writer copies the sink). */
static rec_writer *open_writer(mem_sink *m)
{
	rec_sink sk = { mem_write, NULL, m };
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.codec = REC_CODEC_ZSTD;
	o.anchor_wall_ns = 1000;
	o.anchor_ticks = 1;
	rec_writer *w;
	assert_int_equal(rec_writer_open(&w, &sk, &o), REC_OK);
	return w;
}

/* nchunks zstd chunks of PER events each (u32 n = the event's number, u64
 * x = mix(n));
 * chunk offsets in off[] (off[nchunks] = length). */
static mem_sink make_rec_n(uint64_t *off, int nchunks)
{
	mem_sink m = { 0 };
	rec_writer *w = open_writer(&m);
	rec_type t = { 1, REC_EVENT_HAS_THREAD, "p.T", "", "", "", 2, fields };
	assert_int_equal(rec_writer_add_type(w, &t), REC_OK);
	uint64_t name;
	assert_int_equal(rec_writer_intern_string(w, "main", 4, &name), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 7, name), REC_OK);
	uint32_t n = 0;
	for (int c = 0; c < nchunks; c++) {
		off[c] = m.n;
		for (int i = 0; i < PER; i++, n++) {
			assert_int_equal(rec_writer_begin(w, 1, 10 + n, 0, 1, 0), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, n), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, mix(n)), REC_OK);
			assert_int_equal(rec_writer_end(w), REC_OK);
		}
		if (c + 1 < nchunks)
			assert_int_equal(rec_writer_flush(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
	off[nchunks] = m.n;
	return m;
}

static mem_sink make_rec(uint64_t *off)
{
	return make_rec_n(off, NCHUNKS);
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* Threads of this process (/proc/self/task). */
static int nthreads(void)
{
	DIR *d = opendir("/proc/self/task");
	assert_non_null(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* The threads of this process once a joined thread has left
 * /proc/self/task: pthread_join returns when the kernel clears the thread's
 * tid, and the task can stay listed a moment longer on a loaded machine.
 * Waits up to 2 s for the count to fall to want; a thread that was not
 * joined never leaves, so the count stays above it. */
static int nthreads_settled(int want)
{
	int n = nthreads();
	for (int i = 0; i < 200 && n > want; i++) {
		usleep(10000);
		n = nthreads();
	}
	return n;
}

/* Every event of r, in order, has n = its position; the count. */
static uint64_t check_all(rec_reader *r)
{
	rec_event ev;
	rec_status st;
	uint64_t k = 0;
	while ((st = rec_reader_next_event(r, &ev)) == REC_OK) {
		assert_int_equal(ev.value_count, 2);
		assert_int_equal(ev.values[0].v.u, k);
		assert_int_equal(ev.values[1].v.u, mix(k));
		if (k == 0) /* the first chunk's events are loaded: the worker runs */
			assert_true(nthreads() >= 2);
		k++;
	}
	assert_int_equal(st, REC_END);
	return k;
}

static void t_same_events(void **state)
{
	(void)state;
	uint64_t off[NCHUNKS + 1];
	mem_sink m = make_rec(off);
	write_file(tpath("p.rec"), m.p, m.n);
	int before = nthreads();
	for (int ordered = 0; ordered < 2; ordered++) {
		rec_reader_options o = REC_READER_OPTIONS_INIT;
		o.flags = ordered ? REC_READ_ORDERED : 0;
		rec_reader *r;
		assert_int_equal(rec_reader_open_path(&r, tpath("p.rec"), &o), REC_OK);
		assert_int_equal(check_all(r), (uint64_t)NCHUNKS * PER);
		rec_reader_close(r);
		assert_int_equal(nthreads_settled(before), before);
		assert_int_equal(rec_reader_open_mem(&r, m.p, m.n, "mem", &o), REC_OK);
		assert_int_equal(check_all(r), (uint64_t)NCHUNKS * PER);
		rec_reader_close(r);
		assert_int_equal(nthreads_settled(before), before);
	}
	free(m.p);
}

/* Overwrite the second half of chunk ci's stored EVENTS bytes in the file
 * (beyond what the reader's read window may hold from before) and give the
 * chunk a payload checksum that matches, so that only decoding the new
 * bytes can tell. */
static void spoil_events(const char *path, const mem_sink *m, const uint64_t *off, int ci)
{
	rec_chunk_header h;
	const char *msg;
	const uint8_t *c = m->p + off[ci];
	assert_int_equal(rec_chunk_header_decode(c, REC_HEADER_SIZE_V1, &h, &msg), REC_OK);
	uint8_t *pl = malloc(h.payload_size);
	assert_non_null(pl);
	memcpy(pl, c + h.header_size, h.payload_size);
	size_t at = 0;
	bool found = false;
	for (uint32_t i = 0; i < h.section_count; i++) {
		rec_section_header sh;
		rec_section_header_decode(pl + at, &sh);
		at += REC_SECTION_HEADER_SIZE;
		if (sh.kind == REC_SECTION_EVENTS) {
			assert_true(sh.flags & REC_SECTION_COMPRESSED);
			assert_true(sh.stored_size > 8 * PER);
			for (size_t k = sh.stored_size / 2; k < sh.stored_size - 32; k++)
				pl[at + k] ^= 0x5a;
			found = true;
		}
		at += sh.stored_size;
	}
	assert_true(found);
	h.payload_crc = rec_crc32c(0, pl, h.payload_size);
	uint8_t hb[REC_HEADER_SIZE_V1];
	rec_chunk_header_encode(&h, hb);
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)off[ci], SEEK_SET), 0);
	assert_int_equal(fwrite(hb, 1, sizeof hb, f), sizeof hb);
	assert_int_equal(fwrite(pl, 1, h.payload_size, f), h.payload_size);
	assert_int_equal(fclose(f), 0);
	free(pl);
}

static void t_changed_underneath(void **state)
{
	(void)state;
	uint64_t off[NCHUNKS + 1];
	mem_sink m = make_rec(off);
	write_file(tpath("c.rec"), m.p, m.n);
	rec_reader *r;
	assert_int_equal(rec_reader_open_path(&r, tpath("c.rec"), NULL), REC_OK);
	rec_event ev;
	assert_int_equal(rec_reader_next_event(r, &ev), REC_OK);
	assert_int_equal(ev.values[0].v.u, 0);
	/* chunk 0's events are loaded: the worker reads and decompresses
	 * chunk 1 (given time to, so that its copy is the old one) */
	usleep(300 * 1000);
	spoil_events(tpath("c.rec"), &m, off, 1);
	uint64_t k = 1, problems = 0;
	rec_status st;
	for (;;) {
		st = rec_reader_next_event(r, &ev);
		if (st == REC_END)
			break;
		if (st != REC_OK) {
			const rec_problem *p = rec_reader_problem(r);
			assert_int_equal(p->chunk, 1);
			print_message("chunk 1: %s\n", p->message);
			problems++;
			assert_true(problems < 4);
			continue;
		}
		/* chunk 1's events are gone with its damage */
		if (k == PER)
			k = 2 * PER;
		assert_int_equal(ev.values[0].v.u, k);
		assert_int_equal(ev.values[1].v.u, mix(k));
		k++;
	}
	assert_int_equal(k, (uint64_t)NCHUNKS * PER);
	assert_true(problems >= 1);
	rec_reader_close(r);
	free(m.p);
}

/* More chunks than the worker holds ahead (MANY): read fast (the reader
 * then decompresses the chunks the worker has not reached, and the next
 * one while it waits for the worker's), read slowly (the worker fills its
 * slots and waits), and closed halfway (the worker stopped while it holds
 * chunks nobody takes): every event once, in order, and no thread left. */
#define MANY 14
static void t_many_ahead(void **state)
{
	(void)state;
	uint64_t off[MANY + 1];
	mem_sink m = make_rec_n(off, MANY);
	write_file(tpath("many.rec"), m.p, m.n);
	int before = nthreads();
	for (int ordered = 0; ordered < 2; ordered++) {
		rec_reader_options o = REC_READER_OPTIONS_INIT;
		o.flags = ordered ? REC_READ_ORDERED : 0;
		rec_reader *r;
		for (int rep = 0; rep < 3; rep++) {
			assert_int_equal(rec_reader_open_path(&r, tpath("many.rec"), &o), REC_OK);
			assert_int_equal(check_all(r), (uint64_t)MANY * PER);
			rec_reader_close(r);
			assert_int_equal(rec_reader_open_mem(&r, m.p, m.n, "mem", &o), REC_OK);
			assert_int_equal(check_all(r), (uint64_t)MANY * PER);
			rec_reader_close(r);
		}
		assert_int_equal(nthreads_settled(before), before);
		/* slowly: a pause at each chunk's first event */
		assert_int_equal(rec_reader_open_path(&r, tpath("many.rec"), &o), REC_OK);
		rec_event ev;
		rec_status st;
		uint64_t k = 0;
		while ((st = rec_reader_next_event(r, &ev)) == REC_OK) {
			assert_int_equal(ev.values[0].v.u, k);
			assert_int_equal(ev.values[1].v.u, mix(k));
			if (k % PER == 0)
				usleep(20 * 1000);
			k++;
		}
		assert_int_equal(st, REC_END);
		assert_int_equal(k, (uint64_t)MANY * PER);
		rec_reader_close(r);
		/* closed halfway, after the worker had time to fill its slots */
		assert_int_equal(rec_reader_open_path(&r, tpath("many.rec"), &o), REC_OK);
		for (k = 0; k < (uint64_t)PER * MANY / 2; k++) {
			assert_int_equal(rec_reader_next_event(r, &ev), REC_OK);
			assert_int_equal(ev.values[0].v.u, k);
			if (k == PER)
				usleep(100 * 1000);
		}
		rec_reader_close(r);
		assert_int_equal(nthreads_settled(before), before);
	}
	free(m.p);
}

/* Damage ahead of the reader: chunk 4's stored events spoiled (with a
 * payload checksum that matches them), chunk 8's header overwritten (the
 * worker's walk from header to header stops there; the reader finds chunk
 * 9 by its magic and the walk goes on from there).  Every event of the
 * other chunks comes once, in order, with its value; both damages are
 * reported. */
static void t_damage_ahead(void **state)
{
	(void)state;
	uint64_t off[MANY + 1];
	mem_sink m = make_rec_n(off, MANY);
	write_file(tpath("dmg.rec"), m.p, m.n);
	spoil_events(tpath("dmg.rec"), &m, off, 4);
	FILE *f = fopen(tpath("dmg.rec"), "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)off[8], SEEK_SET), 0);
	static const uint8_t junk[16] = "not a chunk head";
	assert_int_equal(fwrite(junk, 1, sizeof junk, f), sizeof junk);
	assert_int_equal(fclose(f), 0);
	for (int ordered = 0; ordered < 2; ordered++) {
		rec_reader_options o = REC_READER_OPTIONS_INIT;
		o.flags = ordered ? REC_READ_ORDERED : 0;
		rec_reader *r;
		assert_int_equal(rec_reader_open_path(&r, tpath("dmg.rec"), &o), REC_OK);
		rec_event ev;
		rec_status st;
		uint64_t k = 0, problems = 0;
		for (;;) {
			st = rec_reader_next_event(r, &ev);
			if (st == REC_END)
				break;
			if (st != REC_OK) {
				problems++;
				assert_true(problems < 10);
				continue;
			}
			/* the events of chunks 4 and 8 are gone with their damage */
			if (k == 4 * PER || k == 8 * PER)
				k += PER;
			assert_int_equal(ev.values[0].v.u, k);
			assert_int_equal(ev.values[1].v.u, mix(k));
			k++;
		}
		assert_int_equal(k, (uint64_t)MANY * PER);
		assert_true(problems >= 2);
		rec_reader_close(r);
	}
	free(m.p);
}

/* ---- the pre-scan --------------------------------------------------------------------- */

#define PS_CHUNKS 8
#define PS_UNSORTED 3 /* this chunk has one record earlier than the one before it */
#define PS_HIGHID 5   /* this one a record of type 300 */

typedef struct ps_ev {
	uint32_t type, n;
	uint64_t ticks;
} ps_ev;

static int cmp_ps(const void *a, const void *b)
{
	const ps_ev *x = a, *y = b;
	if (x->ticks != y->ticks)
		return x->ticks < y->ticks ? -1 : 1;
	return x->n < y->n ? -1 : x->n > y->n; /* equal times keep file order */
}

/* The end of an ordered read of a selection: every wanted event was
 * returned (k of nwant), the others counted as skipped, none late. */
static void check_end(rec_reader *r, rec_status st, size_t k, size_t nwant, uint64_t skipped)
{
	assert_int_equal(st, REC_END);
	assert_int_equal(k, nwant);
	rec_reader_stats rs;
	rec_reader_get_stats(r, &rs);
	assert_int_equal(rs.events, nwant);
	assert_int_equal(rs.events_skipped, skipped);
	assert_int_equal(rs.unknown_types, 0);
	assert_int_equal(rs.order_late, 0);
}

static void t_prescan(void **state)
{
	(void)state;
	mem_sink m = { 0 };
	rec_writer *w = open_writer(&m);
	static const uint32_t ids[] = { 1, 2, 300 };
	static const char *const names[] = { "p.T", "p.U", "p.V" };
	for (int i = 0; i < 3; i++) {
		rec_type t = { ids[i], REC_EVENT_HAS_THREAD, names[i], "", "", "", 2, fields };
		assert_int_equal(rec_writer_add_type(w, &t), REC_OK);
	}
	assert_int_equal(rec_writer_define_thread(w, 1, 7, 0), REC_OK);
	/* the events the ordered reader returns with types 1 and 300 selected */
	static ps_ev want[PS_CHUNKS * PER];
	size_t nwant = 0, chunk_first = 0;
	uint64_t skipped = 0;
	uint32_t n = 0;
	for (int c = 0; c < PS_CHUNKS; c++) {
		for (int j = 0; j < PER; j++, n++) {
			uint32_t type = j % 50 == 7 ? 2 : 1;
			uint64_t ticks = 10 + (uint64_t)n * 3;
			if (c == PS_UNSORTED && j == 100)
				ticks -= 3 * 40; /* before the 40 events before it */
			if (c == PS_HIGHID && j == 200)
				type = 300;
			assert_int_equal(rec_writer_begin(w, type, ticks, 0, 1, 0), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, n), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, mix(n)), REC_OK);
			assert_int_equal(rec_writer_end(w), REC_OK);
			if (type == 2)
				skipped++;
			else
				want[nwant++] = (ps_ev){ type, n, ticks };
		}
		/* chunks do not overlap: each is ordered alone */
		qsort(want + chunk_first, nwant - chunk_first, sizeof want[0], cmp_ps);
		chunk_first = nwant;
		if (c + 1 < PS_CHUNKS)
			assert_int_equal(rec_writer_flush(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
	write_file(tpath("ps.rec"), m.p, m.n);

	for (int src = 0; src < 2; src++) {
		rec_reader_options ro = REC_READER_OPTIONS_INIT;
		ro.flags = REC_READ_ORDERED;
		rec_reader *r;
		if (src == 0)
			assert_int_equal(rec_reader_open_path(&r, tpath("ps.rec"), &ro), REC_OK);
		else
			assert_int_equal(rec_reader_open_mem(&r, m.p, m.n, "mem", &ro), REC_OK);
		const uint32_t sel[] = { 1, 300 };
		assert_int_equal(rec_reader_select_type_ids(r, sel, 2), REC_OK);
		rec_event ev;
		rec_status st;
		size_t k = 0;
		uint64_t chunk = UINT64_MAX;
		while ((st = rec_reader_next_event(r, &ev)) == REC_OK) {
			if (ev.chunk->index != chunk) {
				/* a slow reader: the worker is ahead (also on a loaded
				 * machine, under valgrind) */
				chunk = ev.chunk->index;
				usleep(50000);
			}
			assert_true(k < nwant);
			assert_int_equal(ev.type->id, want[k].type);
			assert_int_equal(ev.values[0].v.u, want[k].n);
			assert_int_equal(ev.values[1].v.u, mix(want[k].n));
			assert_int_equal(ev.ticks, want[k].ticks);
			k++;
		}
		check_end(r, st, k, nwant, skipped);
		/* the pre-scan spared the scans of chunks 2, 4, 6 and 7 (some of
		 * them: the worker may take chunk 2 before the first scan asks for
		 * pre-scans), not the unsorted chunk's or the one with type 300 */
		assert_true(r->prescans_used >= 2);
		assert_true(r->prescans_used <= PS_CHUNKS - 4);
		rec_reader_close(r);
	}
	free(m.p);
}

/* The ordered reader with a selection of the rarer types: the worker joins
 * the coming chunks sparse (only the selected records, prefetch.c), and the
 * events, their order, their offsets in the section and the counts are
 * those of the whole section: p.T (1 record in 20, one chunk's out of
 * order, one chunk's with another METADATA: a type more) selected, p.U
 * passed over. */
#define SP_CHUNKS 10
#define SP_UNSORTED 4
#define SP_NEWTYPE 7
static void t_sparse(void **state)
{
	(void)state;
	mem_sink m = { 0 };
	rec_writer *w = open_writer(&m);
	rec_type tt = { 1, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_DURATION, "p.T", "", "", "", 2, fields };
	rec_type tu = { 2, REC_EVENT_HAS_THREAD, "p.U", "", "", "", 2, fields };
	assert_int_equal(rec_writer_add_type(w, &tt), REC_OK);
	assert_int_equal(rec_writer_add_type(w, &tu), REC_OK);
	assert_int_equal(rec_writer_define_thread(w, 1, 7, 0), REC_OK);
	static ps_ev want[SP_CHUNKS * PER];
	size_t nwant = 0, chunk_first = 0;
	uint64_t skipped = 0;
	uint32_t n = 0;
	for (int c = 0; c < SP_CHUNKS; c++) {
		if (c == SP_NEWTYPE) {
			rec_type tv = { 3, REC_EVENT_HAS_THREAD, "p.V", "", "", "", 2, fields };
			assert_int_equal(rec_writer_add_type(w, &tv), REC_OK);
		}
		for (int j = 0; j < PER; j++, n++) {
			uint32_t type = j % 20 == 7 ? 1 : 2;
			uint64_t ticks = 10 + (uint64_t)n * 3;
			if (c == SP_UNSORTED && j == 107)
				ticks -= 3 * 60; /* before the 3 selected events before it */
			if (c == SP_NEWTYPE && j == 300)
				type = 3;
			assert_int_equal(rec_writer_begin(w, type, ticks, type == 1 ? 5 + n % 7 : 0, 1, 0),
					 REC_OK);
			assert_int_equal(rec_writer_put_u64(w, n), REC_OK);
			assert_int_equal(rec_writer_put_u64(w, mix(n)), REC_OK);
			assert_int_equal(rec_writer_end(w), REC_OK);
			if (type == 1)
				want[nwant++] = (ps_ev){ type, n, ticks };
			else
				skipped++;
		}
		qsort(want + chunk_first, nwant - chunk_first, sizeof want[0], cmp_ps);
		chunk_first = nwant;
		if (c + 1 < SP_CHUNKS)
			assert_int_equal(rec_writer_flush(w), REC_OK);
	}
	assert_int_equal(rec_writer_close(w), REC_OK);
	write_file(tpath("sp.rec"), m.p, m.n);

	/* every event's offset in its section, read in file order without a
	 * selection (no sparse join there) */
	static uint32_t offset_of[SP_CHUNKS * PER];
	{
		rec_reader *r;
		assert_int_equal(rec_reader_open_path(&r, tpath("sp.rec"), NULL), REC_OK);
		rec_event ev;
		rec_status st;
		uint64_t k = 0;
		while ((st = rec_reader_next_event(r, &ev)) == REC_OK) {
			assert_int_equal(ev.values[0].v.u, k);
			offset_of[k++] = (uint32_t)ev.offset;
		}
		assert_int_equal(st, REC_END);
		assert_int_equal(k, n);
		assert_int_equal(r->sparse_used, 0);
		rec_reader_close(r);
	}
	for (int src = 0; src < 2; src++) {
		rec_reader_options ro = REC_READER_OPTIONS_INIT;
		ro.flags = REC_READ_ORDERED;
		rec_reader *r;
		if (src == 0)
			assert_int_equal(rec_reader_open_path(&r, tpath("sp.rec"), &ro), REC_OK);
		else
			assert_int_equal(rec_reader_open_mem(&r, m.p, m.n, "mem", &ro), REC_OK);
		const uint32_t sel[] = { 1 };
		assert_int_equal(rec_reader_select_type_ids(r, sel, 1), REC_OK);
		rec_event ev;
		rec_status st;
		size_t k = 0;
		uint64_t chunk = UINT64_MAX;
		while ((st = rec_reader_next_event(r, &ev)) == REC_OK) {
			if (ev.chunk->index != chunk) {
				chunk = ev.chunk->index;
				usleep(20000); /* a slow reader: the worker is ahead */
			}
			/* the first chunk too: read by the reader itself, after
			 * its plan, in a slot (it was joined whole before) */
			if (k == 0)
				assert_true(r->sparse_used >= 1);
			assert_true(k < nwant);
			assert_int_equal(ev.type->id, 1);
			assert_int_equal(ev.values[0].v.u, want[k].n);
			assert_int_equal(ev.values[1].v.u, mix(want[k].n));
			assert_int_equal(ev.ticks, want[k].ticks);
			assert_int_equal(ev.duration_ticks, 5 + want[k].n % 7);
			assert_int_equal(ev.offset, offset_of[want[k].n]);
			k++;
		}
		check_end(r, st, k, nwant, skipped);
		/* the first chunk and those the worker took after the
		 * selection was made, but not the one with p.V (its METADATA
		 * differs: the worker, ahead of this slow reader, joined it
		 * whole; scanned as before) */
		assert_true(r->sparse_used >= 2);
		assert_true(r->sparse_used <= SP_CHUNKS - 1);
		rec_reader_close(r);
	}
	free(m.p);
}

/* ---- digests made by the worker (rec_reader_digest_type()) ---- */

static const rec_field dig_fields[] = {
	{ "x", "", "", REC_TYPE_U64, 0 },
	{ "n", "", "", REC_TYPE_U32, 0 },
};

#define DG_CHUNKS 8

/* What the digests gave, by event number (0: not given). */
typedef struct dg_got {
	uint8_t given[DG_CHUNKS * PER];
	size_t n;
	uint64_t max_ticks;
	bool stacks; /* p.U has stacks: one in three without */
} dg_got;

static void dg_take(void *ctx, const rec_chunk_info *c, const rec_type *t, const rec_digest *d,
		    size_t n)
{
	dg_got *g = ctx;
	assert_string_equal(t->name, "p.U");
	for (size_t k = 0; k < n; k++) {
		uint64_t i = d[k].field[1];
		assert_true(i < DG_CHUNKS * PER);
		assert_int_equal(g->given[i], 0);
		g->given[i] = 1;
		assert_int_equal(d[k].field[0], mix(i));
		assert_int_equal(d[k].ticks, 10 + i * 3);
		assert_int_equal(d[k].wall_ns, rec_chunk_wall_ns(c, d[k].ticks));
		assert_non_null(d[k].thread);
		assert_int_equal(d[k].thread->os_tid, 7 + i % 2);
		if (g->stacks && i % 3) { /* its stack from the chunk's pool */
			assert_non_null(d[k].stack);
			assert_int_equal(d[k].stack->id, i % 3);
			assert_int_equal(d[k].stack->depth, i % 3);
		} else {
			assert_null(d[k].stack);
		}
		if (d[k].ticks > g->max_ticks)
			g->max_ticks = d[k].ticks;
		g->n++;
	}
}

/* A recording of zstd chunks big enough for the worker, of p.T (1 record in
 * 20: thread, duration) and p.U (the others: thread, and a stack (none in
 * one of three) or a duration by variant; fields x u64, n u32, both
 * digested), read ordered with p.U as digests: the worker's sparse joins
 * make them (the first chunk's too, joined by the reader in a slot), each
 * given once with its time, thread, stack and fields, before any p.T event after it in time; the p.T
 * events as with a type selection.  And p.T asked for as digests is not
 * digestible (its second field is 64 bits wide): returned as events. */
static void t_digest(void **state)
{
	(void)state;
	for (int variant = 0; variant < 2; variant++) {
		mem_sink m = { 0 };
		rec_writer *w = open_writer(&m);
		rec_type tt = { 1, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_DURATION, "p.T", "", "", "", 2,
				fields };
		unsigned uf = REC_EVENT_HAS_THREAD | (variant ? REC_EVENT_HAS_DURATION : REC_EVENT_HAS_STACK);
		rec_type tu = { 2, uf, "p.U", "", "", "", 2, dig_fields };
		assert_int_equal(rec_writer_add_type(w, &tt), REC_OK);
		assert_int_equal(rec_writer_add_type(w, &tu), REC_OK);
		assert_int_equal(rec_writer_define_thread(w, 1, 7, 0), REC_OK);
		assert_int_equal(rec_writer_define_thread(w, 2, 8, 0), REC_OK);
		const uint64_t frames[] = { 1, 1 };
		assert_int_equal(rec_writer_define_string(w, 1, "leaf", 4), REC_OK);
		assert_int_equal(rec_writer_define_frame(w, 1, 1, 0, 0x10, 0), REC_OK);
		assert_int_equal(rec_writer_define_stack(w, 1, 0, frames, 1), REC_OK);
		assert_int_equal(rec_writer_define_stack(w, 2, 0, frames, 2), REC_OK);
		size_t nt = 0, nu = 0;
		uint32_t n = 0;
		for (int c = 0; c < DG_CHUNKS; c++) {
			for (int j = 0; j < PER; j++, n++) {
				uint64_t ticks = 10 + (uint64_t)n * 3;
				bool t = j % 20 == 7;
				assert_int_equal(rec_writer_begin(w, t ? 1 : 2, ticks, t || variant ? 5 : 0,
								  1 + n % 2, t || variant ? 0 : n % 3),
						 REC_OK);
				if (t) {
					assert_int_equal(rec_writer_put_u64(w, n), REC_OK);
					assert_int_equal(rec_writer_put_u64(w, mix(n)), REC_OK);
					nt++;
				} else {
					assert_int_equal(rec_writer_put_u64(w, mix(n)), REC_OK);
					assert_int_equal(rec_writer_put_u64(w, n), REC_OK);
					nu++;
				}
				assert_int_equal(rec_writer_end(w), REC_OK);
			}
			if (c + 1 < DG_CHUNKS)
				assert_int_equal(rec_writer_flush(w), REC_OK);
		}
		assert_int_equal(rec_writer_close(w), REC_OK);
		rec_reader_options ro = REC_READER_OPTIONS_INIT;
		ro.flags = REC_READ_ORDERED;
		rec_reader *r;
		assert_int_equal(rec_reader_open_mem(&r, m.p, m.n, "mem", &ro), REC_OK);
		static dg_got g;
		memset(&g, 0, sizeof g);
		g.stacks = !variant;
		assert_int_equal(rec_reader_digest_type(r, "p.U", dg_take, &g), REC_OK);
		rec_event ev;
		rec_status st;
		size_t k = 0;
		uint64_t chunk = UINT64_MAX, last = 0;
		while ((st = rec_reader_next_event(r, &ev)) == REC_OK) {
			if (ev.chunk->index != chunk) {
				chunk = ev.chunk->index;
				usleep(20000); /* a slow reader: the worker is ahead */
			}
			assert_string_equal(ev.type->name, "p.T");
			assert_true(ev.ticks >= last);
			last = ev.ticks;
			/* every p.U before it given (they come in time order here) */
			assert_true(g.max_ticks + 3 >= ev.ticks);
			assert_int_equal(ev.values[1].v.u, mix(ev.values[0].v.u));
			k++;
		}
		check_end(r, st, k, nt, 0);
		assert_int_equal(g.n, nu);
		rec_reader_stats rs;
		rec_reader_get_stats(r, &rs);
		assert_int_equal(rs.events_digested, nu);
		assert_true(r->sparse_used >= 2);
		assert_true(r->sparse_used <= DG_CHUNKS);
		rec_reader_close(r);

		/* p.T cannot be digested: every event returned */
		assert_int_equal(rec_reader_open_mem(&r, m.p, m.n, "mem", &ro), REC_OK);
		assert_int_equal(rec_reader_digest_type(r, "p.T", dg_take, &g), REC_OK);
		k = 0;
		while ((st = rec_reader_next_event(r, &ev)) == REC_OK)
			k++;
		assert_int_equal(st, REC_END);
		assert_int_equal(k, nt + nu);
		rec_reader_get_stats(r, &rs);
		assert_int_equal(rs.events_digested, 0);
		rec_reader_close(r);
		free(m.p);
	}
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_same_events),
		cmocka_unit_test(t_changed_underneath),
		cmocka_unit_test(t_many_ahead),
		cmocka_unit_test(t_damage_ahead),
		cmocka_unit_test(t_prescan),
		cmocka_unit_test(t_sparse),
		cmocka_unit_test(t_digest),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
