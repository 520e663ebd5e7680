/* SPDX-License-Identifier: MIT */
/*
 * read_internal.h - the reader's private structures: the byte source, the
 * decoded chunk (metadata, statistics, pools, events) and the reader handle.
 * Shared by the .c files of libfmt/read only.  Never installed.
 *
 * The reader's files, one stage each, in the order a chunk meets them (as
 * zstd keeps frame, block and dictionary decoding apart):
 *   source.c    the bytes: a file, a pipe or memory
 *   reader.c    the handle (open, close), problems, reused chunk objects
 *   scan.c      finding chunk headers, recovery, reading one chunk
 *   sections.c  the section table, the front checksum, a section's bytes
 *   metadata.c  METADATA: event types, fields, the type-id lookup
 *   stats.c     STATS, and the plausibility of the header's and STATS' numbers
 *   payload.c   the payload and its checksum, the events section ready
 *   pool.c      the pools (strings, threads, modules, frames, stacks)
 *   select_types.c type selection: which types' records are passed over
 *   event.c     one record into a rec_event; file-order iteration
 *   order.c     timestamp-order iteration (REC_READ_ORDERED)
 *   prefetch.c  the coming chunks' events decompressed on a second thread
 *   archive.c   whole verified chunks (rec/archive.h)
 * What may call what: this layer uses common/ only (codecs, checksums,
 * varints, the chunk header) and is used through rec.h and rec/archive.h.
 */
#ifndef LIBREC_READ_INTERNAL_H
#define LIBREC_READ_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common_internal.h"
#include "rec/rec.h"

/* ---- byte source (source.c) --------------------------------------------- */
/* A file (seekable: pread; or a pipe: forward only) or caller memory.  All
 * offsets are file offsets (relative to where the input started). */
typedef struct rec_src {
	const uint8_t *mem; /* memory source, or NULL */
	uint64_t mem_len;
	int fd;             /* -1 for memory */
	bool own_fd;
	bool seekable;      /* regular file: pread at any offset */
	uint64_t base;      /* fd offset of file offset 0 (stdin may start later) */
	uint64_t size;      /* known size (regular file or memory), else 0 */
	bool size_known;
	/* Window buffer: bytes [buf_off, buf_off + buf_len) of the input. */
	uint8_t *buf;
	size_t cap;
	uint64_t buf_off;
	size_t buf_len;
	uint64_t stream_pos; /* pipe: bytes consumed from the fd so far */
	bool eof;            /* pipe: the fd reached end of input */
	int err;             /* errno of the last failed read */
} rec_src;

rec_status rec_src_open_fd(rec_src *s, int fd, bool own_fd);
void rec_src_open_mem(rec_src *s, const void *buf, size_t len);
void rec_src_close(rec_src *s);
/* Make bytes at off available: *p points at them, *got is how many are
 * available there (>= n unless the input ends first; may be more).  A pipe
 * cannot go back before the window.  Returns REC_ERR_IO on a read error. */
rec_status rec_src_peek(rec_src *s, uint64_t off, size_t n, const uint8_t **p, size_t *got);
/* Copy n bytes at off into dst; *got gets the bytes copied (short at end). */
rec_status rec_src_read(rec_src *s, uint64_t off, size_t n, uint8_t *dst, size_t *got);
/* Memory source: pointer to [off, off+n) without copying, or NULL. */
const uint8_t *rec_src_map(const rec_src *s, uint64_t off, size_t n);
/* Refresh the known size (a regular file that is still growing). */
void rec_src_refresh_size(rec_src *s);

/* ---- big buffers: decompressed sections, order entries ------------------ */
/* Large buffers are mapped in 2 MiB-aligned extents with transparent huge
 * pages requested, so filling them takes few page faults.  Reserving may
 * discard the contents. */
typedef struct rec_bigbuf {
	void *data;
	size_t cap;
} rec_bigbuf;
bool rec_bigbuf_reserve(rec_bigbuf *b, size_t n);
void rec_bigbuf_free(rec_bigbuf *b);

/* ---- a chunk being read -------------------------------------------------- */
#define REC_NKINDS 10 /* known section kinds are 1..9 */

typedef struct rec_rsec {
	uint16_t kind, flags;
	uint32_t items, stored, raw;
	uint64_t hoff; /* file offset of the section header */
	uint64_t poff; /* offset of the stored bytes inside the payload */
} rec_rsec;

/* Field decode kinds (one switch per field). */
enum {
	REC_K_BOOL, REC_K_U8, REC_K_U16, REC_K_U32, REC_K_U64,
	REC_K_I8, REC_K_I16, REC_K_I32, REC_K_I64,
	REC_K_F32, REC_K_F64,
	REC_K_STRING, REC_K_TIMESTAMP, REC_K_DURATION, REC_K_THREAD, REC_K_STACK,
	REC_K_BLOB, REC_K_TEXT,
	REC_K_UNK0, REC_K_UNK1, REC_K_UNK2, REC_K_UNK3, REC_K_UNK4
};

typedef struct rec_pstring {
	uint64_t id;
	const char *ptr;
	size_t len;
} rec_pstring;

typedef rec_evs_ent rec_oent; /* (ticks, off): common_internal.h */

/* What the prefetch worker found passing over a chunk's decompressed
 * EVENTS (prefetch.c), so that the ordered reader's scan need not pass over
 * them again (order.c): made only when every record's frame holds, every
 * Type_Id is below REC_PRESCAN_IDS and the record times never go down;
 * then per Type_Id its records and the times of its first and last. */
#define REC_PRESCAN_IDS 256
typedef struct rec_prescan {
	uint64_t n;                       /* records */
	uint64_t count[REC_PRESCAN_IDS];
	uint64_t first[REC_PRESCAN_IDS], last[REC_PRESCAN_IDS]; /* ticks */
} rec_prescan;

typedef struct rec_rchunk {
	rec_chunk_info info;
	rec_chunk_header h;
	uint64_t end;      /* file offset just after the payload */
	/* sections */
	rec_rsec *secs;
	uint32_t nsec, secs_cap;
	int known[REC_NKINDS]; /* index into secs, or -1 */
	/* payload (whole stored bytes), when loaded */
	rec_buf payload_buf;
	const uint8_t *payload;
	bool payload_checked; /* checksum verified */
	/* 1.1 Front_Checksum: the stored bytes of METADATA [0] and STATS [1] it
	 * covered, kept so that what is decoded is what was checked */
	const uint8_t *front[2];
	rec_buf front_buf[2];
	rec_bigbuf raw[REC_NKINDS]; /* decompressed sections */
	rec_buf tmp;             /* stored bytes read for one section */
	rec_arena arena;
	/* metadata */
	rec_type *types;
	uint8_t **kinds;       /* per type: decode kind per field */
	uint32_t *dense;       /* id -> type index + 1 (0: none), ids < dense_n */
	uint32_t dense_n;
	uint32_t *sorted;      /* type indexes sorted by id (sparse ids) */
	uint32_t max_fields;
	rec_type_stats *tstats;
	/* type selection (select_types.c): per type index, 1 if its events are
	 * returned; NULL: every type */
	uint8_t *want;
	/* the type index digested (rec_reader_digest_type(); UINT32_MAX: none),
	 * its fields digested (0-2) and their max (rec_evs_digest_body()) */
	uint32_t dig_ti;
	rec_evs_digfields dig;
	/* pools */
	bool pools_loaded;
	rec_pstring *strs;   size_t nstrs;
	rec_thread *threads; size_t nthreads;
	rec_module *modules; size_t nmodules;
	rec_frame *frames;   size_t nframes;
	rec_stack *stacks;   size_t nstacks;
	bool threads_dense, stacks_dense; /* the ids are 1..n: id's entry is [id - 1] */
	/* events */
	bool events_loaded;
	const uint8_t *ev, *ev_end;
	uint32_t ev_items;
	/* file-order cursor */
	const uint8_t *cur;
	uint64_t cur_ticks;
	uint64_t cur_count;
	bool done;     /* no more events will be returned from it */
	bool damaged;  /* reported as a problem */
	/* ordered mode */
	bool dead;
	bool scanned;
	bool count_mismatch; /* scanned: record count differs from Item_Count (reported once) */
	uint64_t min_ticks, max_ticks; /* event starts seen by the scan */
	size_t mem_bytes;
	rec_bigbuf oents;     /* rec_oent: its events sorted by ticks */
	size_t noents, ocur;
	bool seq;             /* its entered records are in time order already */
	bool ents_built;      /* oents holds them (else only room for them) */
	uint8_t *act;         /* by Type_Id < nact: 0 unknown, 1 passed over, 2 entered,
			       * 3 digested */
	uint32_t nact;
	bool planned;         /* act made, the worker told (rec_rd_order_plan()) */
	rec_prescan *ps;      /* its records passed over by the prefetch worker, */
	bool ps_valid;        /* when ps holds them (else the scan reads them) */
	/* Its events joined sparse by the prefetch worker (prefetch.c): only
	 * the selected records are in the section's buffer, one after the
	 * other from c->ev, and c->oents holds their sp_k entries in file
	 * order (each where it was written and where it stands in the
	 * section); the bytes after them are not records.  Only order.c's scan
	 * reads such a chunk. */
	bool ev_sparse;
	/* The record being decoded stands in the section this many bytes
	 * after where it is (a sparse chunk's; else 0): what ev->offset and
	 * the messages say. */
	size_t ev_shift;
	size_t ndigs;         /* its digests, in rec_reader.digs till given */
	bool digs_given;      /* to rec_reader_digest_type()'s callback */
	bool sp_sorted;
	size_t sp_k;
	uint64_t sp_lo, sp_hi;
	const uint8_t *walk;  /* a group of this chunk alone: the next record */
	uint64_t walk_ticks;  /* and the timestamp chain before it */
	struct rec_rchunk *next_free;
} rec_rchunk;

/* ---- ordered mode (order.c) ------------------------------------------------ */

typedef struct rec_order {
	bool started;
	bool input_end;
	bool emitting;
	rec_rchunk **held;   /* the group, in file order */
	uint32_t nheld, held_cap;
	uint32_t *heap;      /* held slots by their next entry (k-way merge) */
	uint32_t nheap;
	rec_bigbuf aux;      /* sort buffer */
	bool seq;            /* emitting one chunk in time order by walking it */
	size_t bytes;
	bool mixed;
	uint64_t run_id;
	uint64_t max_ticks;  /* group's latest event start (ticks of run_id) */
	int64_t max_wall;
	rec_rchunk *pending; /* loaded, starts the next group */
	bool returned;       /* an event was returned: last_wall is set */
	int64_t last_wall;   /* latest start returned (order_late below it) */
	/* Look-ahead of a seekable input (read once, from the chunk fronts):
	 * the chunks with events by offset, and for each the earliest start
	 * (wall ns, STATS First_Delta) of it and every chunk after it. */
	uint64_t *ahead_off;
	int64_t *ahead_min;
	size_t nahead;
} rec_order;

/* ---- the reader ------------------------------------------------------------ */
struct rec_reader {
	rec_src src;
	char *name;
	uint32_t flags;
	uint64_t max_payload, max_section_raw, max_window;
	rec_codec_ctx *codec;
	rec_problem problem;
	char msg[512];
	char detail[384];    /* what a decoder found wrong */
	rec_reader_stats stats;
	uint64_t pos;        /* file offset of the next chunk header */
	uint64_t next_index; /* index of the next chunk header found */
	uint64_t failed_size; /* size of the chunk the last rec_rd_read_chunk() found
			       * damaged after its header held, else 0 */
	bool at_end;
	rec_rchunk *cur;     /* chunk of next_chunk / file-order iteration */
	rec_rchunk *free_chunks;
	/* current event */
	rec_value *values;
	uint32_t values_cap;
	rec_buf spare_payload; /* a copied payload's buffer a held chunk let go (order.c),
				* for the next chunk read: its pages stay */
	rec_buf scratch;     /* text/blob copies of the current event */
	rec_bigbuf split;    /* a split EVENTS section's streams, decompressed (split_events.c) */
	rec_order ord;
	/* type selection (select_types.c) */
	rec_type_filter want;  /* NULL: every type */
	void *want_ctx;
	char **sel_names;      /* rec_reader_select_type_names()'s copies */
	size_t sel_nnames;
	uint32_t *sel_ids;     /* rec_reader_select_type_ids()'s copies */
	size_t sel_nids;
	bool events_started;   /* a chunk's events were loaded: selection fixed */
	/* rec_reader_digest_type() (NULL name: none) */
	char *dig_name;
	rec_digest_fn dig_fn;
	void *dig_ctx;
	/* rec_evs_dig: the digests of the chunk scanned last (its ndigs),
	 * given before another is scanned (order.c) */
	rec_bigbuf digs;
	/* the coming chunks' events decompressed on a second thread (prefetch.c) */
	struct rec_prefetch *pf;
	bool pf_failed;        /* no worker for this reader */
	bool prescan_wanted;   /* the ordered scan took the pre-scans (its last chunk) */
	bool sparse_ok;        /* order.c is loading a chunk: a sparse section will do */
	uint64_t prescans_used; /* chunks whose scan the pre-scan spared (tests) */
	uint64_t sparse_used;  /* chunks read from a sparse join (tests) */
};

/* reader.c */
#if defined(__GNUC__)
#define REC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define REC_PRINTF(a, b)
#endif
rec_status rec_rd_problem(rec_reader *r, rec_status st, uint64_t off, int64_t chunk,
			  const char *fmt, ...) REC_PRINTF(5, 6);
/* A problem of chunk c: marks it damaged (counted once). */
rec_status rec_rd_chunk_problem(rec_reader *r, rec_rchunk *c, rec_status st, uint64_t off,
				const char *fmt, ...) REC_PRINTF(5, 6);
rec_rchunk *rec_rd_chunk_get(rec_reader *r);
void rec_rd_chunk_put(rec_reader *r, rec_rchunk *c);
void rec_rd_chunk_destroy(rec_rchunk *c);
const char *rec_rd_kind_name(unsigned kind);

/* scan.c */
/* Read the next chunk header, section table, metadata and statistics into a
 * fresh chunk (for_events: load and check the payload first).  REC_OK with
 * *out, REC_END, or a problem. */
rec_status rec_rd_read_chunk(rec_reader *r, rec_rchunk **out, bool for_events);

/* sections.c */
/* The section headers of c (from its payload when loaded, else read), each
 * checked; a 1.1 chunk's Front_Checksum over them and the METADATA and
 * STATS bytes, which are kept in c->front for decoding. */
rec_status rec_rd_read_section_table(rec_reader *r, rec_rchunk *c);
/* Decompressed bytes of section index si of c. */
rec_status rec_rd_section(rec_reader *r, rec_rchunk *c, uint32_t si, const uint8_t **p);
/* The EVENTS section of a 1.3 split chunk (stored bytes sp) decompressed
 * stream by stream and joined into b (split_events.c); a problem of c when
 * it does not. */
rec_status rec_rd_split_events(rec_reader *r, rec_rchunk *c, const rec_rsec *s, const uint8_t *sp,
			       rec_bigbuf *b);

/* A cursor over a section's bytes for metadata.c and stats.c: on failure,
 * what names the value and st the status. */
typedef struct rec_rd_dec {
	const uint8_t *p, *end, *start;
	const char *what; /* set on failure */
	rec_status st;
} rec_rd_dec;
static inline bool rec_rd_dec_u(rec_rd_dec *d, uint64_t *v, const char *what)
{
	if (rec_varint_get(&d->p, d->end, v))
		return true;
	d->what = what;
	d->st = REC_ERR_CORRUPT;
	return false;
}
/* sections.c: a cursor over the decompressed bytes of c's section of kind
 * (one c has: METADATA, STATS); *s gets its header. */
rec_status rec_rd_dec_section(rec_reader *r, rec_rchunk *c, int kind, const rec_rsec **s,
			      rec_rd_dec *d);

/* metadata.c: c's types (c->types, c->kinds, the id lookup, c->info.types). */
rec_status rec_rd_decode_metadata(rec_reader *r, rec_rchunk *c);
/* stats.c: c's statistics into c->info; then whether the header's and the
 * statistics' numbers are possible for the chunk's sizes. */
rec_status rec_rd_decode_stats(rec_reader *r, rec_rchunk *c);
rec_status rec_rd_check_plausible(rec_reader *r, rec_rchunk *c);

/* payload.c */
/* The whole stored payload of c into c->payload (mapped or read). */
rec_status rec_rd_load_payload(rec_reader *r, rec_rchunk *c);
/* rec_rd_load_payload, then its checksum (once). */
rec_status rec_rd_check_payload(rec_reader *r, rec_rchunk *c);
/* Load the payload (verifying its checksum), pools and events section. */
rec_status rec_rd_load_events(rec_reader *r, rec_rchunk *c);
/* rec_rd_load_events for the calls that take the current chunk again
 * (rec_reader_verify_chunk, rec_reader_chunk_events): a chunk already found
 * damaged is a problem that says so, not a silent REC_ERR_CORRUPT. */
rec_status rec_rd_load_events_reported(rec_reader *r, rec_rchunk *c);
static inline int64_t rec_rd_wall(const rec_chunk_info *c, uint64_t ticks)
{
	uint64_t d = ticks - c->start_ticks;
	if (c->tick_frequency != 1000000000u)
		d = (uint64_t)rec_ticks_to_ns_internal((int64_t)d, c->tick_frequency);
	return (int64_t)((uint64_t)c->start_wall_ns + d);
}
int64_t rec_rd_ticks_ns(int64_t ticks, uint64_t freq);

static inline const rec_type *rec_rd_type(const rec_rchunk *c, uint64_t id, uint32_t *idx)
{
	if (id < c->dense_n) {
		uint32_t v = c->dense[id];
		if (!v)
			return NULL;
		*idx = v - 1;
		return &c->types[v - 1];
	}
	if (!c->sorted)
		return NULL;
	size_t lo = 0, hi = c->info.type_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t t = c->sorted[mid];
		if (c->types[t].id < id)
			lo = mid + 1;
		else if (c->types[t].id > id)
			hi = mid;
		else {
			*idx = t;
			return &c->types[t];
		}
	}
	return NULL;
}

/* pool.c */
rec_status rec_rd_load_pools(rec_reader *r, rec_rchunk *c);
const rec_pstring *rec_rd_string(const rec_rchunk *c, uint64_t id);
const rec_thread *rec_rd_thread(const rec_rchunk *c, uint64_t id);
const rec_stack *rec_rd_stack(const rec_rchunk *c, uint64_t id);
/* The same lookups with the direct slot (dense ids) tried inline: what an
 * event's thread and stack take per record. */
static inline const rec_thread *rec_rd_thread_at(const rec_rchunk *c, uint64_t id)
{
	if (c->threads_dense) /* no load of the entry: most events never read it */
		return id - 1 < c->nthreads ? &c->threads[id - 1] : NULL;
	if (id - 1 < c->nthreads && c->threads[id - 1].id == id)
		return &c->threads[id - 1];
	return rec_rd_thread(c, id);
}
static inline const rec_stack *rec_rd_stack_at(const rec_rchunk *c, uint64_t id)
{
	if (c->stacks_dense)
		return id - 1 < c->nstacks ? &c->stacks[id - 1] : NULL;
	if (id - 1 < c->nstacks && c->stacks[id - 1].id == id)
		return &c->stacks[id - 1];
	return rec_rd_stack(c, id);
}

/* event.c */
/* Decode the record at *pp (events of c) whose timestamp chain value before
 * it is *ticks.  Fills ev (values in r->values) unless the type is unknown
 * (*known = false).  REC_ERR_CORRUPT with r->msg filled on a bad record. */
rec_status rec_rd_decode_record(rec_reader *r, rec_rchunk *c, const uint8_t **pp,
				uint64_t *ticks, rec_event *ev, bool *known, bool fixed_ticks);
/* The same for the record at rec whose frame the caller read: Type_Id tid,
 * its fields from body to rend, its timestamp ticks. */
rec_status rec_rd_decode_framed(rec_reader *r, rec_rchunk *c, const uint8_t *rec,
				const uint8_t *body, const uint8_t *rend, uint64_t tid,
				uint64_t ticks, rec_event *ev, bool *known);

/* ---- record frames (order.c's scan and walk, prefetch.c's pre-scan) ---- */
#if defined(__GNUC__)
#define REC_RD_INLINE inline __attribute__((always_inline))
#else
#define REC_RD_INLINE inline
#endif
/* The passes over a chunk's records read its decompressed events once, in
 * order, each frame's Size telling where the next starts: in a section
 * larger than the core's cache (written there by zstd, or on the other
 * core) each new cache line was a stall the hardware did not fetch ahead
 * (the load of a frame's first byte took half of the scan's samples).
 * They ask for the line this many bytes ahead of the record they read. */
#define REC_RD_AHEAD_BYTES 1024
#if defined(__GNUC__)
/* (an address past the section's end is only a hint, never read: made as
 * an integer, not as a pointer past the object) */
#define REC_RD_PREFETCH(p) __builtin_prefetch((const void *)((uintptr_t)(p) + REC_RD_AHEAD_BYTES))
#else
#define REC_RD_PREFETCH(p) ((void)(p))
#endif

/* One record's frame at *pp (before end): its Size, Type_Id and
 * Time_Delta, *pp moved past it.  0: fine; 1: the Size crosses the end of
 * the section; 2: a malformed Type_Id or Time_Delta. */
static REC_RD_INLINE int rec_rd_frame_body(const uint8_t **pp, const uint8_t *end,
					   uint64_t *tid, uint64_t *d, const uint8_t **body)
{
	const uint8_t *p = *pp, *rec = p;
	uint64_t size;
	if (end - p >= 3 && p[0] < 0x80 && p[1] < 0x80) {
		/* the common frame: Size and Type_Id of one byte each */
		size = p[0];
		*tid = p[1];
		p += 2;
		if (size < 2 || size - 1 > (uint64_t)(end - p))
			return 1;
		rec_varint_res q = rec_varint_next(p, rec + 1 + size);
		if (!q.p)
			return 2;
		*d = q.v;
		*body = q.p;
		*pp = rec + 1 + size;
		return 0;
	}
	rec_varint_res q = rec_varint_next(p, end);
	if (!q.p)
		return 1;
	p = q.p;
	size = q.v;
	if (size < 2 || size > (uint64_t)(end - p))
		return 1;
	const uint8_t *rend = p + size;
	q = rec_varint_next(p, rend);
	if (!q.p)
		return 2;
	*tid = q.v;
	q = rec_varint_next(q.p, rend);
	if (!q.p)
		return 2;
	*d = q.v;
	*body = q.p;
	*pp = rend;
	return 0;
}

/* rec_rd_frame_body() without where the fields start. */
static REC_RD_INLINE int rec_rd_frame_next(const uint8_t **pp, const uint8_t *end, uint64_t *tid,
					   uint64_t *d)
{
	const uint8_t *body;
	return rec_rd_frame_body(pp, end, tid, d, &body);
}

/* select_types.c */
/* c->want from r's selection and c's metadata (NULL without a selection). */
rec_status rec_rd_select_chunk(rec_reader *r, rec_rchunk *c);
void rec_rd_select_free(rec_reader *r);
void rec_rd_digest_free(rec_reader *r);
/* Whether the events of c's type index ti are returned. */
static inline bool rec_rd_wanted(const rec_rchunk *c, uint32_t ti)
{
	return !c->want || c->want[ti];
}
/* The largest value of an unsigned decode kind (REC_K_*), 0 for the others
 * (event.c). */
uint64_t rec_rd_kind_umax(unsigned kind);

/* prefetch.c */
/* Have the worker decompress the EVENTS of the chunks after c, a few ahead
 * (a file or memory; nothing when no worker can be had). */
void rec_rd_prefetch_next(rec_reader *r, const rec_rchunk *c);
/* Section s of c, whose stored bytes are at stored: true with its
 * decompressed bytes in *dst when the worker (or the reader, ahead while it
 * waited for the worker) decompressed exactly these; with the worker's
 * pre-scan of them in c->ps when it made one (c->ps_valid). */
bool rec_rd_prefetch_take(rec_reader *r, rec_rchunk *c, const rec_rsec *s,
			  const uint8_t *stored, rec_bigbuf *dst);
/* The selection of c's scan (c->act by Type_Id) for the worker's sparse
 * joins of the chunks with the same METADATA; NULL: none (whole sections). */
void rec_rd_prefetch_select(rec_reader *r, const rec_rchunk *c);
/* Stop and free the worker. */
void rec_rd_prefetch_free(rec_reader *r);

/* order.c */
rec_status rec_rd_order_next(rec_reader *r, rec_event *ev);
void rec_rd_order_free(rec_reader *r);
/* What the ordered scan will do with c's records by Type_Id (c->act, from
 * its types and the reader's selection), told to the prefetch worker for
 * the chunks after c: made when c's events are loaded for the scan, before
 * they are decompressed (payload.c). */
void rec_rd_order_plan(rec_reader *r, rec_rchunk *c);

#endif /* LIBREC_READ_INTERNAL_H */
