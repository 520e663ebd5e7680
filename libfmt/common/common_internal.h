/* SPDX-License-Identifier: MIT */
/*
 * common_internal.h - the encoding pieces shared by the writer and the
 * reader: little-endian access, LEB128 varints, zigzag, CRC32C, codecs,
 * a growable byte buffer, growable arrays and an arena, the analyses' name hash,
 * and the chunk/section header layouts; and the small helpers several
 * modules would otherwise write again (an error message into a handle's
 * errmsg, the 64-bit hash finalizer, the probe of an index table, the copy
 * of an optional string).  Written once;
 * a second varint decoder anywhere else is a defect.  Never installed.
 */
#ifndef LIBREC_COMMON_INTERNAL_H
#define LIBREC_COMMON_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rec/rec.h"

/* ---- little-endian fixed-width access (any alignment) ------------------- */
static inline uint16_t rec_le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t rec_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t rec_le64(const uint8_t *p) { return (uint64_t)rec_le32(p) | ((uint64_t)rec_le32(p + 4) << 32); }
static inline void rec_put_le16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void rec_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline void rec_put_le64(uint8_t *p, uint64_t v) { rec_put_le32(p, (uint32_t)v); rec_put_le32(p + 4, (uint32_t)(v >> 32)); }

/* ---- varints ------------------------------------------------------------ */
#define REC_VARINT_MAX 10 /* bytes of the longest uint64 LEB128 */

static inline uint64_t rec_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t rec_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* Encode v at p (which has REC_VARINT_MAX bytes of room); returns bytes used. */
static inline size_t rec_varint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}
static inline size_t rec_varint_len(uint64_t v)
{
	/* 1 + (significant bits - 1) / 7, without a loop whose branches
	 * mispredict on values of mixed lengths */
	return ((size_t)(64 - __builtin_clzll(v | 1)) * 9 + 64) >> 6;
}
/* Encode v at p with one 8-byte store (p has 8 bytes of room, and the bytes
 * after the varint may be overwritten) when it takes at most 8 bytes, else as
 * rec_varint_put(); the same bytes.  Returns bytes used. */
static inline __attribute__((always_inline)) size_t rec_varint_put_w8(uint8_t *p, uint64_t v)
{
	if (v >> 56)
		return rec_varint_put(p, v);
	const size_t n = rec_varint_len(v);
	uint64_t x = v; /* spread the 7-bit groups one to a byte */
	x = (x & 0x000000000FFFFFFFull) | ((x & 0x00FFFFFFF0000000ull) << 4);
	x = (x & 0x00003FFF00003FFFull) | ((x & 0x0FFFC0000FFFC000ull) << 2);
	x = (x & 0x007F007F007F007Full) | ((x & 0x3F803F803F803F80ull) << 1);
	x |= 0x8080808080808080ull & ((1ull << (8 * (n - 1))) - 1); /* continuation bits */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	memcpy(p, &x, 8);
	return n;
}

/* Decode a uvarint from [*pp, end).  On success advances *pp and returns
 * true.  Fails (returns false, *pp unchanged) when the input ends inside the
 * varint, when it is longer than 10 bytes, or when the 10th byte carries more
 * than the one bit a uint64 has left (overlong/overflowing encodings). */
bool rec_varint_get_slow(const uint8_t **pp, const uint8_t *end, uint64_t *out);
/* The same decode returning the value and its length (0: failure) in
 * registers, so an inlined caller's cursor need not live in memory. */
typedef struct rec_varint_vn {
	uint64_t v;
	size_t n;
} rec_varint_vn;
rec_varint_vn rec_varint_decode_slow(const uint8_t *p, const uint8_t *end);
/* The inline part of rec_varint_get(): a one- or two-byte varint
 * (timestamps' deltas, ids, small values).  Returns its length, 0 for
 * anything else. */
static inline __attribute__((always_inline)) size_t rec_varint_get_short(const uint8_t *p,
									 const uint8_t *end,
									 uint64_t *out)
{
	if (p < end && *p < 0x80) {
		*out = *p;
		return 1;
	}
	if (end - p >= 2 && p[1] < 0x80) {
		*out = (uint64_t)(p[0] & 0x7Fu) | ((uint64_t)p[1] << 7);
		return 2;
	}
	return 0;
}
static inline bool rec_varint_get(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	size_t n = rec_varint_get_short(*pp, end, out);
	if (n) {
		*pp += n;
		return true;
	}
	return rec_varint_get_slow(pp, end, out);
}

/* rec_varint_get() that takes no address of the caller's variables: the
 * position after the value (NULL when it fails as rec_varint_get() fails)
 * and the value, returned in two registers, so that a decoder's cursor
 * stays in a register.  Values of up to four bytes (ids, periods,
 * durations, thread ids) are decoded inline. */
typedef struct rec_varint_res {
	const uint8_t *p;
	uint64_t v;
} rec_varint_res;
rec_varint_res rec_varint_next_slow(const uint8_t *p, const uint8_t *end);
static inline rec_varint_res rec_varint_next(const uint8_t *p, const uint8_t *end)
{
	if (end - p >= 4) {
		uint64_t v = p[0] & 0x7Fu;
		if (p[0] < 0x80)
			return (rec_varint_res){ p + 1, v };
		v |= (uint64_t)(p[1] & 0x7Fu) << 7;
		if (p[1] < 0x80)
			return (rec_varint_res){ p + 2, v };
		v |= (uint64_t)(p[2] & 0x7Fu) << 14;
		if (p[2] < 0x80)
			return (rec_varint_res){ p + 3, v };
		if (p[3] < 0x80)
			return (rec_varint_res){ p + 4, v | (uint64_t)p[3] << 21 };
	}
	return rec_varint_next_slow(p, end);
}

/* An 8-byte little-endian load (any alignment) and the packing of its eight
 * 7-bit groups (bit 7 of each byte already clear) into the low 56 bits,
 * least significant group first: the wide decodes' pieces. */
static inline __attribute__((always_inline)) uint64_t rec_load_le64(const uint8_t *p)
{
	uint64_t x;
	memcpy(&x, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	return x;
}
static inline __attribute__((always_inline)) uint64_t rec_varint_pack7x8(uint64_t x)
{
	x = (x & 0x007F007F007F007Full) | ((x & 0x7F007F007F007F00ull) >> 1);
	x = (x & 0x00003FFF00003FFFull) | ((x & 0x3FFF00003FFF0000ull) >> 2);
	x = (x & 0x000000000FFFFFFFull) | ((x & 0x0FFFFFFF00000000ull) >> 4);
	return x;
}

/* The decode of a varint at p with at least 8 readable bytes from p (the
 * writer's take, where most records lie that far from the input's end): a
 * varint of 1-8 bytes with one unaligned load and no branch on its length.
 * n: its length, 0 for a varint of 9 or 10 bytes (decode those with
 * rec_varint_next(), which also rejects the malformed ones); overlong: 1
 * when it is not the shortest encoding of v (more than one byte, the last
 * 0x00), which the interchange form forbids. */
typedef struct rec_varint_w8 {
	uint64_t v;
	uint32_t n, overlong;
} rec_varint_w8;
static inline __attribute__((always_inline)) rec_varint_w8 rec_varint_next_w8(const uint8_t *p)
{
	const uint64_t x = rec_load_le64(p);
	rec_varint_w8 r;

	/* One or two bytes (sizes, type and pool ids, small values): branches
	 * that, predicted, let the next field's load start before this one is
	 * decoded. */
	if (!(x & 0x80u)) {
		r.v = x & 0x7Fu;
		r.n = 1;
		r.overlong = 0;
		return r;
	}
	if (!(x & 0x8000u)) {
		r.v = (x & 0x7Fu) | ((x >> 1) & 0x3F80u);
		r.n = 2;
		r.overlong = !(x & 0xFF00u);
		return r;
	}
	const uint64_t stop = ~x & 0x8080808080808080ull; /* bit 7 of each final candidate */
	const uint64_t keep = (stop ^ (stop - 1)) & x;     /* the bytes up to the first final one */
	const unsigned b = (unsigned)__builtin_ctzll(stop | (1ull << 63)); /* 8n - 1 */

	r.v = rec_varint_pack7x8(keep & 0x7F7F7F7F7F7F7F7Full);
	r.n = stop ? (b + 1) >> 3 : 0;
	r.overlong = b > 7 && (keep >> (b - 7)) == 0;
	return r;
}

/* ---- CRC32C (Castagnoli, reflected, poly 0x82F63B78, init/xorout ~0) --- */
/* rec_crc32c(0, buf, len) is the CRC of buf; pass a previous result as crc
 * to continue over more bytes.  Uses SSE4.2 when the CPU has it. */
uint32_t rec_crc32c(uint32_t crc, const void *buf, size_t len);

/* ---- names of the analyses ------------------------------------------------ */
/* FNV-1a steps over p[0..n) from h: the analyses' hash of names and keys
 * (each mixes in what it needs after it).  h is FNV's offset basis
 * 0xcbf29ce484222325 (stack aggregation) or REC_NAME_HASH_SEED, the value the
 * lock graph, the summary and the views have always started from (a digit
 * short of the basis; kept so that no table's layout changes). */
#define REC_NAME_HASH_SEED 1469598103934665603ull
static inline uint64_t rec_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* The last component of path (a module's file name in a frame). */
static inline const char *rec_base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* A copy of s (NULL for NULL); *nomem set true when the copy fails: the
 * optional strings the analyses' handles keep from their options. */
static inline char *rec_strdup_opt(const char *s, bool *nomem)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*nomem = true;
	return d;
}

/* ---- arena: stable allocations freed together ---------------------------- */
/* Blocks of 64 KiB, then each twice the last (a larger request gets its own
 * size).  The reader's chunk objects (types, pools, frames), the names the
 * analyses keep (summary, stack aggregation, lock graph) and the
 * symbolizer's strings.  A zeroed rec_arena is empty. */
typedef struct rec_arena_blk rec_arena_blk;
typedef struct rec_arena {
	rec_arena_blk *head;
} rec_arena;
void *rec_arena_alloc(rec_arena *a, size_t n); /* 16-byte aligned; NULL on failure */
/* A copy of s[0..n) with a NUL after it; NULL on failure. */
char *rec_arena_strndup(rec_arena *a, const char *s, size_t n);
void rec_arena_reset(rec_arena *a);            /* keeps one block for reuse */
void rec_arena_free(rec_arena *a);

/* ---- growable arrays ------------------------------------------------------ */
/* Make *arr (of *cap elements of elem bytes) hold at least need elements:
 * the capacity starts at first (when 0) and doubles.  false on allocation
 * failure or size overflow (*arr and *cap unchanged).  The one growth helper
 * of the analyses (stack aggregation, lock graph, summary) and of the
 * symbolizer's tables (stack_symbolize.c, stack_symbol_dwarf.c). */
bool rec_array_grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first);

/* ---- growable byte buffer ----------------------------------------------- */
typedef struct rec_buf {
	uint8_t *data;
	size_t len, cap;
} rec_buf;

void rec_buf_free(rec_buf *b);
/* Ensure room for extra more bytes; false on allocation failure. */
bool rec_buf_reserve(rec_buf *b, size_t extra);
static inline bool rec_buf_append(rec_buf *b, const void *p, size_t n)
{
	if (b->cap - b->len < n && !rec_buf_reserve(b, n))
		return false;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return true;
}
static inline bool rec_buf_varint(rec_buf *b, uint64_t v)
{
	if (b->cap - b->len < REC_VARINT_MAX && !rec_buf_reserve(b, REC_VARINT_MAX))
		return false;
	b->len += rec_varint_put(b->data + b->len, v);
	return true;
}
/* uvarint length followed by bytes (the format's "str"/LENGTH encoding). */
bool rec_buf_lenbytes(rec_buf *b, const void *p, size_t n);

/* ---- codecs ------------------------------------------------------------- */
/* Reusable (de)compression state (zstd contexts are expensive to create).
 * One per thread; NULL may be passed to the functions below to use a
 * temporary one. */
typedef struct rec_codec_ctx rec_codec_ctx;
rec_codec_ctx *rec_codec_ctx_new(void);
void rec_codec_ctx_free(rec_codec_ctx *ctx);
/* Worst-case compressed size of n raw bytes with codec. */
size_t rec_codec_bound(unsigned codec, size_t n);
/* Compress src into dst (capacity dst_cap >= bound).  *out_len gets the
 * compressed length.  level 0 = codec default. */
rec_status rec_codec_compress(rec_codec_ctx *ctx, unsigned codec, int level, const void *src,
			      size_t src_len, void *dst, size_t dst_cap, size_t *out_len);
/* Decompress exactly raw_len bytes into dst (capacity raw_len).  Any other
 * outcome (more or fewer bytes, malformed input, a frame that declares a
 * different size) is REC_ERR_CORRUPT; an unknown codec REC_ERR_UNSUPPORTED.
 * Safe on hostile input: never writes past dst + raw_len. */
rec_status rec_codec_decompress(rec_codec_ctx *ctx, unsigned codec, const void *src,
				size_t src_len, void *dst, size_t raw_len);
/* One zstd section compressed piece by piece (the writer's EVENTS, as the
 * records arrive), into one frame that states its content size as the spec
 * requires: begin (out gets a few reserved bytes), add each piece (flush:
 * end a block now, so the work is done now), end with the total raw size:
 * the frame is then out->data + *frame_off .. out->len.  Uses its own zstd
 * context in ctx (one-shot compression with ctx may run in between). */
rec_status rec_codec_zstream_begin(rec_codec_ctx *ctx, int level, rec_buf *out);
/* Bytes fed that the stream holds uncompressed (short of a whole block). */
size_t rec_codec_zstream_pending(const rec_codec_ctx *ctx);
rec_status rec_codec_zstream_add(rec_codec_ctx *ctx, const void *src, size_t len, rec_buf *out,
				 int flush);
rec_status rec_codec_zstream_end(rec_codec_ctx *ctx, rec_buf *out, size_t raw_len,
				 size_t *frame_off);

/* ---- chunk header (spec "Chunk header") ---------------------------------- */
#define REC_MAGIC_LEN 8
extern const uint8_t rec_magic[REC_MAGIC_LEN]; /* 89 52 45 43 0D 0A 1A 0A */
#define REC_HEADER_SIZE_V1 128u
#define REC_PREFIX_SIZE 32u /* bytes every major version keeps in place */
#define REC_SECTION_HEADER_SIZE 16u

/* Offsets of header fields. */
enum {
	REC_HOFF_MAGIC = 0,
	REC_HOFF_MAJOR = 8,
	REC_HOFF_MINOR = 10,
	REC_HOFF_HEADER_SIZE = 12,
	REC_HOFF_HEADER_CRC = 16,
	REC_HOFF_PAYLOAD_CRC = 20,
	REC_HOFF_PAYLOAD_SIZE = 24,
	REC_HOFF_FLAGS = 32,
	REC_HOFF_CODEC = 36,
	REC_HOFF_LEVEL = 37,
	REC_HOFF_SECTION_COUNT = 38,
	REC_HOFF_RAW_SIZE = 40,
	REC_HOFF_EVENT_COUNT = 48,
	REC_HOFF_START_WALL = 56,
	REC_HOFF_START_TICKS = 64,
	REC_HOFF_TICK_FREQ = 72,
	REC_HOFF_DURATION = 80,
	REC_HOFF_RUN_ID = 88,
	REC_HOFF_PROCESS_START = 96,
	REC_HOFF_PID = 104,
	REC_HOFF_SEQUENCE = 108,
	REC_HOFF_FRONT_CRC = 112 /* 1.1, with REC_CHUNK_FRONT_CRC */
	/* 116..127 Unused: written as zero, ignored by readers */
};

typedef struct rec_chunk_header {
	uint16_t major, minor;
	uint32_t header_size;
	uint32_t header_crc, payload_crc;
	uint64_t payload_size;
	uint32_t flags;
	uint8_t codec;
	int8_t level;
	uint16_t section_count;
	uint64_t raw_size;
	uint64_t event_count;
	int64_t start_wall_ns;
	uint64_t start_ticks;
	uint64_t tick_frequency;
	uint64_t duration_ticks;
	uint64_t run_id;
	int64_t process_start_ns;
	uint32_t pid;
	uint32_t sequence;
	uint32_t front_crc; /* bytes 112..115: Unused in 1.0, Front_Checksum in 1.1 */
} rec_chunk_header;

/* Serialize h into out[REC_HEADER_SIZE_V1], computing Header_Checksum (the
 * caller has set payload_crc).  h->header_crc is updated too. */
void rec_chunk_header_encode(rec_chunk_header *h, uint8_t out[REC_HEADER_SIZE_V1]);

/* Parse and validate a header from buf (avail bytes available, at least
 * REC_PREFIX_SIZE).  Checks magic, header size bounds, Header_Checksum,
 * major version, reserved flags, codec and tick frequency.  On an error,
 * *msg gets a static description.  Returns:
 *   REC_OK, REC_ERR_BAD_MAGIC, REC_ERR_TRUNCATED (avail < header_size),
 *   REC_ERR_CORRUPT (checksum/field), REC_ERR_UNSUPPORTED_VERSION,
 *   REC_ERR_UNSUPPORTED (reserved flag or unknown codec), REC_ERR_LIMIT. */
rec_status rec_chunk_header_decode(const uint8_t *buf, size_t avail, rec_chunk_header *h,
				   const char **msg);

/* Section kinds (spec "Sections"). */
enum {
	REC_SECTION_METADATA = 1,
	REC_SECTION_STATS = 2,
	REC_SECTION_STRINGS = 3,
	REC_SECTION_THREADS = 4,
	REC_SECTION_MODULES = 5,
	REC_SECTION_FRAMES = 6,
	REC_SECTION_STACKS = 7,
	REC_SECTION_EVENTS = 8,
	REC_SECTION_FRAME_SOURCE = 9 /* 1.2: frames' files, lines, inline frames */
};
#define REC_SECTION_COMPRESSED 0x1u

typedef struct rec_section_header {
	uint16_t kind;
	uint16_t flags;
	uint32_t item_count;
	uint32_t stored_size;
	uint32_t raw_size;
} rec_section_header;

void rec_section_header_encode(const rec_section_header *s, uint8_t out[REC_SECTION_HEADER_SIZE]);
void rec_section_header_decode(const uint8_t in[REC_SECTION_HEADER_SIZE], rec_section_header *s);

/* Split EVENTS (format 1.3, header flag REC_CHUNK_SPLIT_EVENTS;
 * events_split.c): the section's stored bytes are a table of the four
 * streams' Stored_Size and Raw_Size (u32 each, REC_EVS_TABLE_SIZE bytes),
 * then each stream compressed on its own with the chunk's codec. */
enum { REC_EVS_HEADS, REC_EVS_TIMES, REC_EVS_REFS, REC_EVS_BODIES, REC_EVS_N };
#define REC_EVS_TABLE_SIZE ((size_t)REC_EVS_N * 8u)
/* A type's flags for cutting its records: REC_EVENT_HAS_* | REC_EVS_KNOWN,
 * 0 for a Type_Id the chunk does not declare.  tf[id] for id < n, else
 * more(ctx, id) (NULL: undeclared). */
#define REC_EVS_KNOWN 0x80u
typedef struct rec_evs_types {
	const uint8_t *tf;
	size_t n;
	unsigned (*more)(const void *ctx, uint64_t id);
	const void *ctx;
} rec_evs_types;
/* Bytes of room past the end of the output (and of the streams, which lie
 * one after the other in the join) that events_split.c's copies need. */
#define REC_EVS_SLACK 16u
/* Append the records of [p, end) to the four streams; false if a record
 * does not frame, its type is undeclared, or out of memory. */
bool rec_events_split(const uint8_t *p, const uint8_t *end, const rec_evs_types *ty,
		      rec_buf out[REC_EVS_N]);
/* Join the four streams s[] (len[] bytes each, followed by at least
 * REC_EVS_READ_SLACK readable bytes: one after the other in one buffer with
 * that much room after the last, as the reader decompresses them) into the
 * items records of the section, raw bytes at dst, which has raw +
 * REC_EVS_SLACK bytes of room.  NULL when they join exactly, else what is
 * wrong, *bad_record the record where it was found. */
#define REC_EVS_READ_SLACK 32u
const char *rec_events_join(const uint8_t *const s[REC_EVS_N], const size_t len[REC_EVS_N],
			    uint32_t items, const rec_evs_types *ty, uint8_t *dst, size_t raw,
			    uint32_t *bad_record);
/* A sparse join: only the records of the selected types are written, one
 * after the other from dst (the bytes after them are left as they were:
 * the pages of the records passed over are never touched), with an entry
 * (timestamp, where it was written, where it stands in the section) per
 * record in file order; what an ordered reader that passes over most
 * records needs instead of the whole section.  The records of a digested type are not written either:
 * their digests are made instead (rec_evs_dig, in file order); a record
 * whose digest does not hold fails the join.  It accepts exactly what the join's fast path accepts
 * (every frame holds, the streams and Raw_Size add up); false otherwise,
 * or with overflow set when the selected records are more than cap. */
typedef struct rec_evs_ent {
	uint64_t ticks; /* the record's timestamp */
	uint32_t off;   /* its offset in the events section (a sparse join: in its output) */
	uint32_t at;    /* a sparse join: its offset in the events section */
} rec_evs_ent;
/* A digested record (rec_reader_digest_type()): its time, Thread and Stack
 * (pool ids, 0 none) and first two fields (uvarints; 0 for a field the type
 * does not have). */
typedef struct rec_evs_dig {
	uint64_t ticks;
	uint64_t f0;
	uint32_t thread;
	uint32_t f1;
	uint32_t stack;
} rec_evs_dig;
/* The fields a digest reads of its type's records: the first nf <= 2, each
 * at most its max (max[1] at most UINT32_MAX too). */
typedef struct rec_evs_digfields {
	unsigned nf;
	uint64_t max[2];
} rec_evs_digfields;
/* The digest of the record body at [p, end) whose frame is read (Duration,
 * Thread, Stack as flags f says, then the fields df says, the ones after
 * them not read): false when one of those is missing or does not decode, or
 * the thread or stack id (UINT32_MAX) or a field is above its max. */
bool rec_evs_digest_body(const uint8_t *p, const uint8_t *end, unsigned f,
			 const rec_evs_digfields *df, rec_evs_dig *d);
typedef struct rec_evs_sparse {
	const uint8_t *act;   /* by Type_Id < nact: 2 selected, 3 digested, else passed over */
	size_t nact;          /* (a record of an id from nact on: false) */
	uint64_t start_ticks; /* the chunk's, where the times start */
	rec_evs_ent *ents;    /* room for cap entries */
	size_t cap;
	rec_evs_dig *digs;    /* room for dcap digests (of the records of act 3) */
	size_t dcap;
	rec_evs_digfields dig; /* the digested fields (rec_evs_digest_body()) */
	/* results */
	size_t k;             /* entries made */
	size_t dk;            /* digests made, in file order */
	uint64_t lo, hi;      /* the earliest and latest of their times (k > 0) */
	bool sorted;          /* their times never go down */
	bool overflow;        /* more entries or digests than room */
} rec_evs_sparse;
bool rec_events_join_sparse(const uint8_t *const s[REC_EVS_N], const size_t len[REC_EVS_N],
			    uint32_t items, const rec_evs_types *ty, uint8_t *dst, size_t raw,
			    rec_evs_sparse *sp);
/* The types' flags of a METADATA section (raw bytes p..p+n) into tf[id]
 * (REC_EVENT_HAS_* | REC_EVS_KNOWN) for ids below cap, tf zeroed first:
 * what joining a split section needs, without a reader (the prefetch
 * worker).  false if the section does not decode or declares an id of cap
 * or more. */
bool rec_events_meta_flags(const uint8_t *p, size_t n, uint8_t *tf, size_t cap);
/* The stream table at p of a split section of stored bytes, raw bytes:
 * false unless the streams' sizes add up to the section's (and a stream is
 * empty in both or neither). */
bool rec_events_split_table_decode(const uint8_t *p, size_t stored, uint32_t raw,
				   uint32_t sstored[REC_EVS_N], uint32_t sraw[REC_EVS_N]);
void rec_events_split_table_encode(uint8_t *p, const uint32_t sstored[REC_EVS_N],
				   const uint32_t sraw[REC_EVS_N]);

/* Front_Checksum (spec "Front checksum", format 1.1): CRC32C over the payload
 * with the stored bytes of every section but METADATA and STATS left out,
 * that is every section header and the stored bytes of those two. */
static inline bool rec_section_in_front(uint16_t kind)
{
	return kind == REC_SECTION_METADATA || kind == REC_SECTION_STATS;
}
/* Whether a chunk header announces a Front_Checksum (minor >= 1 and the flag:
 * in a 1.0 chunk the bit is Unused and ignored). */
static inline bool rec_chunk_has_front_crc(const rec_chunk_header *h)
{
	return h->minor >= 1 && (h->flags & REC_CHUNK_FRONT_CRC);
}
/* Front_Checksum of a whole payload in memory; false if its section table
 * does not fit in size bytes. */
bool rec_front_checksum(const uint8_t *payload, uint64_t size, uint16_t section_count,
			uint32_t *crc);

/* ---- error messages of the analyses' handles ------------------------------ */
#define REC_ERRMSG_SIZE 256
/* Print fmt's message into msg and return st: the fail() of the handles
 * that keep char errmsg[REC_ERRMSG_SIZE] (stack aggregation, pprof, lock
 * graph). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
rec_status rec_errorf(char msg[REC_ERRMSG_SIZE], rec_status st, const char *fmt, ...);

/* ---- hashing ------------------------------------------------------------- */
/* MurmurHash3's 64-bit finalizer: every input bit moves every output bit
 * (the hash tables of pprof and stack aggregation, the end of the writer's
 * string hash). */
static inline uint64_t rec_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* The first free slot (0) from hash h in an index table of cap uint32_t
 * slots (cap a power of two) by linear probing: where a rebuild of the
 * analyses' index tables (entry index + 1 per slot) puts each entry. */
static inline uint32_t *rec_index_free_slot(uint32_t *tab, size_t cap, uint64_t h)
{
	size_t j = (size_t)h & (cap - 1);
	while (tab[j])
		j = (j + 1) & (cap - 1);
	return &tab[j];
}

/* ---- misc ---------------------------------------------------------------- */
/* ticks * 1e9 / freq without overflow (128-bit intermediate). */
int64_t rec_ticks_to_ns_internal(int64_t ticks, uint64_t freq);

#endif /* LIBREC_COMMON_INTERNAL_H */
