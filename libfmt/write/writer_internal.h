/* SPDX-License-Identifier: MIT */
/*
 * writer_internal.h - the state of a rec_writer (the chunk encoder) shared by
 * the files of libfmt/write.  Never installed.
 *
 *   writer.c        options, sinks, open/close, errors, types (METADATA)
 *   writer_pool.c   constant pools: id hash maps, define_*, intern_string
 *   writer_event.c  the event builder (begin/put/end), append_records
 *   writer_chunk.c  the open chunk: records taken as they come, closing it
 *
 * Data flow: events enter in the record interchange form (spec "Record
 * interchange form"): append_records takes a checked batch straight into
 * the open chunk (one decode), the builder's events and anything that must
 * wait go to w->pending first.  Taking a record transcodes its ticks to a
 * Time_Delta into w->events and marks every pool entry it references with
 * the chunk's mark; with zstd the EVENTS bytes are compressed as a stream
 * while the chunk fills.  At chunk_size (or on flush/close) the chunk is
 * closed: the marks closed over the pool references, header + sections
 * written with one sink write (writer_chunk.c).
 *
 * ARCHITECTURE of libfmt/write/: it may call common/ (varints, CRC,
 * codecs, buffers) and nothing else of libfmt; it knows pools, records and
 * chunks, not threads of a process or recorders.  Its users (the recorder,
 * the tools, the tests' generators) call only rec/rec.h's rec_writer_*; this
 * header is for write/'s own files and the writer's own unit tests.
 */
#ifndef LIBREC_WRITER_INTERNAL_H
#define LIBREC_WRITER_INTERNAL_H

#include "common/common_internal.h"

/* Limits of this writer (all keep a chunk inside the spec's "Limits"). */
#define REC_W_DEFAULT_CHUNK (4u << 20)  /* chunk_events_size 0 */
#define REC_W_MAX_CHUNK (32u << 20)     /* chunk_events_size is capped here */
#define REC_W_MAX_RECORD (16u << 20)    /* Size of one record */
#define REC_W_PENDING_CAP (64u << 20)   /* pending bytes (chunks cannot be built) */
/* A record grows by at most this many bytes when its absolute Ticks become a
 * Time_Delta (ticks varint +9, Size varint +1). */
#define REC_W_RECORD_GROWTH 20u
/* Raw EVENTS bytes of one chunk stay below this (a chunk ends earlier). */
#define REC_W_EVENTS_BUDGET (REC_MAX_SECTION_RAW / 2u)
#define REC_W_ERRMSG_SIZE 256
#define REC_W_SEEN 256 /* entries of a pool's "marked in this build" cache */

/* ---- event types ---------------------------------------------------------- */
enum { REC_W_REF_NONE = 0, REC_W_REF_STRING, REC_W_REF_THREAD, REC_W_REF_STACK };

typedef struct rec_wfield {
	uint32_t type;  /* rec_field_type */
	uint8_t wire;   /* REC_WIRE_* */
	uint8_t ref;    /* REC_W_REF_*: pool the value references */
	uint8_t is_f32;
	uint64_t umax;  /* wire UVARINT: largest value of the type */
	int64_t smin, smax; /* wire SVARINT: range of the type */
	uint64_t vmax;  /* wire UVARINT: umax; SVARINT: largest zigzag value in range */
} rec_wfield;

typedef struct rec_wtype {
	uint32_t id;
	uint32_t flags;       /* REC_EVENT_HAS_* */
	uint32_t nfields;
	uint32_t scan_fields; /* fields to decode at chunk build (through the last ref) */
	size_t fixed_max;     /* bytes a record needs at most, length fields excluded */
	rec_wfield *fields;
	char *name;
	/* Statistics of the chunk being built. */
	uint64_t count, bytes;
} rec_wtype;

/* ---- pools ---------------------------------------------------------------- */
enum {
	REC_W_STRINGS = 0,
	REC_W_THREADS,
	REC_W_MODULES,
	REC_W_FRAMES,
	REC_W_STACKS,
	REC_W_NPOOLS
};

/* One pool entry.  v[] by pool:
 *   strings: offset in sdata, length, content hash
 *   threads: os_tid, name string
 *   modules: path string, build-id string, base
 *   frames:  function string, module, module offset, function offset
 *   stacks:  flags, depth, byte offset of the frame ids in pool->data */
typedef struct rec_wentry {
	uint64_t id;   /* 0 = empty slot */
	uint64_t mark; /* build mark of the chunk that last referenced it */
	uint64_t v[4];
} rec_wentry;

typedef struct rec_wpool {
	rec_wentry *slots; /* open addressing, linear probing */
	size_t cap;        /* power of two (0 before the first insert) */
	size_t count;
	uint64_t max_id;
	rec_buf data;      /* strings: bytes; stacks: frame ids (u64) */
	uint64_t *used;    /* ids referenced by the chunk being built */
	size_t nused, used_cap;
	/* Ids known to be marked in the current build (direct-mapped, a hit
	 * saves the map lookup; cleared at each build). */
	uint64_t seen[REC_W_SEEN];
	const char *name;  /* "string", "thread", ... for messages */
} rec_wpool;

/* Content index of the string pool (intern_string): content hash -> id. */
typedef struct rec_wintern {
	uint64_t hash;
	uint64_t id; /* 0 = empty */
} rec_wintern;

/* ---- the writer ----------------------------------------------------------- */
struct rec_writer {
	rec_sink sink;
	int fd;          /* fd sinks: the descriptor; -1 otherwise */
	int own_fd;      /* open_path: close fd at rec_writer_close */

	/* Options, resolved. */
	unsigned codec;
	int level;
	int8_t header_level;
	size_t chunk_size;
	uint64_t run_id;
	uint32_t pid;
	int64_t process_start_ns;
	uint64_t tick_frequency;
	int64_t anchor_wall_ns;
	uint64_t anchor_ticks;

	/* Errors: sticky is REC_ERR_IO once a sink call failed. */
	rec_status sticky;
	char errmsg[REC_W_ERRMSG_SIZE];

	/* Types: owned pointers (stable while a record is being built). */
	rec_wtype **types;       /* declaration order */
	rec_wtype **types_by_id; /* sorted by id (STATS order) */
	size_t ntypes, types_cap;
	rec_wtype **type_map;    /* open addressing by id */
	size_t type_map_cap;
	rec_wtype *last_type;    /* begin() cache */
	rec_buf meta;            /* METADATA raw bytes of all types */
	rec_buf meta_raw;        /* the METADATA bytes the last chunk stored */
	rec_buf meta_stored;     /* and their stored form (writer_chunk.c) */
	uint16_t meta_flags;     /* its section flags */

	/* Pools. */
	rec_wpool pools[REC_W_NPOOLS];
	/* 1.2 FRAME_SOURCE entries by frame id: v[0] offset of the encoded
	 * entry (Flags ... inline entries) in fsrc.data, v[1] its length. */
	rec_wpool fsrc;
	rec_wintern *intern;
	size_t intern_cap, intern_count;
	/* Threads (and their private name strings) to forget once the records
	 * appended before rec_writer_retire_entries() are in a chunk (flush). */
	uint64_t *retire;        /* pairs: thread id, name string id (0: none) */
	size_t nretire, retire_cap;
	size_t str_holes;        /* bytes of removed strings in the strings' data */

	/* Pending records (interchange form) and the builder. */
	rec_buf pending;
	rec_wtype *cur;          /* type of the record being built, NULL if none */
	uint32_t cur_field;
	size_t cur_start;        /* offset of the record's Size byte in pending */
	uint64_t dropped_pending;
	/* A chunk could not be built (e.g. an undefined reference): the records
	 * stay pending; automatic builds wait for the next define_* or add_type
	 * (flush and close always try).  blockmsg says why. */
	int build_blocked;
	char blockmsg[REC_W_ERRMSG_SIZE];
	/* rec_writer_set_check_refs(): append_records rejects a record that
	 * references an undefined pool id; ref_last[pool] is the last id found
	 * defined (consecutive records mostly name the same thread; cleared
	 * when entries are removed). */
	int check_refs;
	uint64_t ref_last[REC_W_NPOOLS];

	/* The open chunk (writer_chunk.c): records are taken from pending into
	 * it as they arrive (rec_w_ingest: scanned, pool references marked,
	 * transcoded into events), and with zstd its EVENTS bytes are
	 * compressed as they accumulate (one frame, zout), so closing a chunk
	 * is left with the pools, STATS and the frame's end. */
	int c_open;              /* marks/stats reset for it (c_mark) */
	uint64_t c_count;        /* records in it */
	size_t c_in;             /* their interchange bytes (chunk_size counts these) */
	rec_buf c_first;         /* interchange bytes of its first record until c_fixed */
	int c_fixed;             /* Start_Ticks chosen, first record transcoded */
	uint64_t c_start, c_prev, c_min, c_max_end;
	size_t c_head;           /* events offset after the room for the first record */
	size_t c_ev0;            /* events offset of the EVENTS bytes (once c_fixed) */
	size_t c_zin;            /* events bytes fed to the stream (0: no stream) */
	int c_zended;            /* the stream was ended (a failed close): one-shot next */
	/* Split zstd streams, once the first slice is fed: records are cut
	 * straight into sbuf as they are taken (not into events), and the
	 * streams fed from there (writer_split.c rec_w_split_push). */
	int c_direct;
	size_t c_dlen;           /* EVENTS bytes taken that way */
	rec_buf zout;            /* the stream's output */

	/* Chunk state and scratch (reused across chunks). */
	uint64_t mark;           /* build attempt counter */
	uint32_t sequence;
	int have_prev;
	uint64_t prev_end_ticks;
	rec_buf events;          /* EVENTS raw */
	rec_buf scratch;         /* STATS / pool section raw */
	rec_buf out;             /* header + payload of the chunk */
	rec_codec_ctx *cctx;

	/* Split EVENTS (format 1.3; writer_split.c). */
	int split;                       /* chunks store EVENTS in four streams */
	rec_buf sbuf[REC_EVS_N];         /* the streams cut from EVENTS bytes, or taken
					  * straight into them (c_direct) */
	rec_buf szout[REC_EVS_N];        /* streamed: each stream's frame so far */
	rec_codec_ctx *sctx[REC_EVS_N];  /* streamed: each stream's compressor */
	uint64_t s_raw[REC_EVS_N];       /* streamed: bytes fed to each stream */
	int s_begun[REC_EVS_N];
	rec_buf ssec;                    /* the section's stored bytes, assembled */
	uint8_t *tf;                     /* type flags by id (rec_evs_types) */
	size_t ntf, tf_ntypes;

	rec_writer_stats stats;
	/* Unit tests only (test_writer_take.c): rec_w_take_checked() checks and
	 * places every record with check_scan(), never take_run(), so that the
	 * fast path can be compared with the path before it. */
	int take_no_run;
	/* Unit tests only (test_writer_chunk.c), each once: REC_W_FAIL_PUSH the
	 * next rec_w_split_push() fails (a stream's compressor out of memory),
	 * REC_W_FAIL_CLOSE the next close_chunk() fails right after it ended
	 * the streams of records cut as they were taken (as an allocation
	 * failing there would). */
	int test_fail;
};
enum { REC_W_FAIL_PUSH = 1, REC_W_FAIL_CLOSE = 2 };

/* Errors (writer.c).  Sets errmsg, returns st. */
rec_status rec_w_fail(rec_writer *w, rec_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
rec_wtype *rec_w_type_find_slow(const rec_writer *w, uint32_t id);
static inline rec_wtype *rec_w_type_find(rec_writer *w, uint32_t id)
{
	rec_wtype *t = w->last_type;
	if (t && t->id == id)
		return t;
	t = rec_w_type_find_slow(w, id);
	if (t)
		w->last_type = t;
	return t;
}

/* Split EVENTS (writer_split.c).  The open chunk's EVENTS bytes p..p+n cut
 * into the four streams and fed to their compressors (zstd, streamed);
 * false: the streams stopped (the chunk is then split in one step). */
bool rec_w_split_feed(rec_writer *w, const uint8_t *p, size_t n);
/* Feed what sbuf holds to the streams and empty it (false: the streams
 * stopped). */
bool rec_w_split_push(rec_writer *w);
/* The streamed section ended: its stored bytes in w->ssec.  false: not
 * streamed or failed (then split in one step, or store one stream). */
bool rec_w_split_end(rec_writer *w);
/* The section's records ev..ev+n split and compressed in one step into
 * w->ssec; false: failed, or not smaller than the records (store one
 * stream). */
bool rec_w_split_oneshot(rec_writer *w, const uint8_t *ev, size_t n);
/* A new chunk: the streams empty, none begun. */
void rec_w_split_reset(rec_writer *w);
void rec_w_split_free(rec_writer *w);

/* Pools (writer_pool.c). */
void rec_w_pools_init(rec_writer *w);
void rec_w_pools_free(rec_writer *w);
static inline size_t rec_w_hash_slot(uint64_t id, size_t cap)
{
	return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}
static inline rec_wentry *rec_w_pool_find(const rec_wpool *p, uint64_t id)
{
	size_t i, mask = p->cap - 1;
	if (!p->cap)
		return NULL;
	for (i = rec_w_hash_slot(id, p->cap);; i = (i + 1) & mask) {
		rec_wentry *e = &p->slots[i];
		if (e->id == id)
			return e;
		if (e->id == 0)
			return NULL;
	}
}

/* Chunks (writer_chunk.c).  Build chunks from the pending records: while
 * pending >= chunk_size (all == 0), or until nothing is pending (all != 0;
 * with final, the last chunk is flagged FINAL and written even if empty). */
rec_status rec_w_build_chunks(rec_writer *w, int all, int final);
/* Take the pending records into the open chunk (closing it at chunk_size);
 * stops at a record whose reference is not defined yet (build_blocked). */
rec_status rec_w_ingest(rec_writer *w);
/* Take the records [buf, buf + len) (validated, interchange form) into the
 * open chunk straight from the caller's buffer; what cannot be taken now
 * (an undefined reference) is appended to pending. */
rec_status rec_w_ingest_from(rec_writer *w, const uint8_t *buf, size_t len);
/* append_records' fast path: check every record as append_records does
 * and take it into the open chunk, in one decode.  1: all taken; 0:
 * nothing taken (something is wrong, or the batch would close the chunk):
 * the caller takes the checked path, which names the problem. */
int rec_w_take_checked(rec_writer *w, const uint8_t *buf, size_t len);
/* Raw EVENTS bytes the open chunk holds. */
size_t rec_w_open_bytes(const rec_writer *w);
/* Hand this many raw EVENTS bytes at a time to the zstd stream while a
 * chunk is open (zstd compresses a 128 KiB block whenever it has one). */
#define REC_W_STREAM_SLICE (32u << 10)

/* Sink write with sticky error handling (writer.c). */
rec_status rec_w_sink_write(rec_writer *w, const void *buf, size_t len);

/* The producer's controls are public (rec.h): rec_writer_set_tick_frequency,
 * rec_writer_set_check_refs, rec_writer_define_private_string,
 * rec_writer_retire_entries.  Here: what flush does with the retired
 * entries, and what the writer's own tests look at.
 *   rec_w_retire_now(): the forgetting itself (flush calls it with nothing
 *     pending);
 *   rec_w_pool_count(): entries of a pool (REC_W_*), for tests. */
void rec_w_retire_now(rec_writer *w);
size_t rec_w_pool_count(const rec_writer *w, int pool);

/* The names test_writer.c calls the public retirement calls by. */
static inline rec_status rec_w_define_string_private(rec_writer *w, uint64_t id, const char *s,
						     size_t len)
{
	return rec_writer_define_private_string(w, id, s, len);
}

static inline rec_status rec_w_retire_thread(rec_writer *w, uint64_t thread_id, uint64_t name_id)
{
	return rec_writer_retire_entries(w, thread_id, name_id);
}

#endif /* LIBREC_WRITER_INTERNAL_H */
