/* SPDX-License-Identifier: MIT */
/*
 * rec.h - the public API of librec: the rec recording format, its chunk writer
 * and its reader.  See spec/FORMAT.md for the byte layout.
 *
 * Conventions
 *   - Every symbol is prefixed rec_ (functions, types) or REC_ (macros, enums).
 *   - Handles are opaque and come in open/close pairs; close(NULL) is a no-op.
 *   - Functions return rec_status; REC_OK is 0, REC_END (1) is not an error,
 *     errors are negative.  The library never prints, exits or aborts.
 *   - One handle is used by one thread at a time; different handles are
 *     independent.
 *   - Names of types, one meaning each:
 *       rec_type          an event type's description (id, name, fields), as
 *                         METADATA holds it: what the writer declares and
 *                         the reader describes (this header);
 *       rec_event_type    the recorder's handle of a registered event type
 *                         (recorder.h);
 *       rec_field_type    a field's type code, the REC_TYPE_<KIND> values
 *                         (REC_TYPE_U64, REC_TYPE_STACK ...): REC_TYPE_
 *                         followed by a kind means only that;
 *       REC_TYPE_ID_*     the built-in types' ids (recorder.h, builtins.h,
 *                         metrics.h);
 *       REC_EVENT_HAS_*   rec_type.flags: the header fields of every event;
 *       REC_DECLARE_*     registration flags of rec_type_declare() and
 *                         rec_recorder_register_type() (recorder.h).
 */
#ifndef LIBREC_REC_H
#define LIBREC_REC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && defined(REC_BUILDING_LIBRARY)
#define REC_API __attribute__((visibility("default")))
#else
#define REC_API
#endif

/* Library version. MAJOR: breaking API changes; MINOR: new, compatible
 * capabilities; PATCH: fixes.  The Makefile reads these three lines. */
#define REC_VERSION_MAJOR 0
#define REC_VERSION_MINOR 1
#define REC_VERSION_PATCH 0
#define REC_VERSION_NUMBER \
	(REC_VERSION_MAJOR * 10000 + REC_VERSION_MINOR * 100 + REC_VERSION_PATCH)

/* File-format version written in every chunk header (independent of the
 * library version).  A reader reads any minor of its major and refuses a
 * newer major. */
#define REC_FORMAT_MAJOR 1
#define REC_FORMAT_MINOR 3

/*! rec_version_number() : REC_VERSION_NUMBER of the library actually linked. */
REC_API unsigned rec_version_number(void);
/*! rec_version_string() : "MAJOR.MINOR.PATCH" of the library linked. */
REC_API const char *rec_version_string(void);

/* ------------------------------------------------------------------------ */
/* Status codes.  Values are ABI: never renumbered, only appended.          */
/* ------------------------------------------------------------------------ */
typedef enum {
	REC_OK = 0,
	REC_END = 1,                      /* no more items; not an error */
	REC_ERR_INVALID_ARG = -1,         /* caller passed something wrong */
	REC_ERR_NOMEM = -2,               /* allocation failed */
	REC_ERR_IO = -3,                  /* read/write/open failed (errno kept) */
	REC_ERR_BAD_MAGIC = -10,          /* bytes are not a rec chunk */
	REC_ERR_UNSUPPORTED_VERSION = -11,/* newer major version */
	REC_ERR_TRUNCATED = -12,          /* input ends inside a chunk */
	REC_ERR_CORRUPT = -13,            /* checksum or structure is wrong */
	REC_ERR_LIMIT = -14,              /* a declared size exceeds a limit */
	REC_ERR_UNSUPPORTED = -15,        /* unknown codec or reserved feature */
	REC_ERR_CODEC = -16,              /* compressor/decompressor failed */
	REC_ERR_STATE = -17,              /* call not valid in this state */
	REC_ERR_NOT_FOUND = -18           /* named thing does not exist */
} rec_status;

/*! rec_strerror() : a short English description of a status; never NULL. */
REC_API const char *rec_strerror(rec_status status);

/* ------------------------------------------------------------------------ */
/* Codecs, field types, units, type flags (all values are on-disk values).  */
/* ------------------------------------------------------------------------ */
typedef enum { REC_CODEC_NONE = 0, REC_CODEC_ZSTD = 1, REC_CODEC_LZ4 = 2 } rec_codec;

/*! rec_codec_name() : "none", "zstd", "lz4" or "unknown"; never NULL. */
REC_API const char *rec_codec_name(unsigned codec);

/* Wire classes: the low 3 bits of every field type code.  They tell a reader
 * how to skip a field even when it does not know the type. */
#define REC_WIRE_UVARINT 0u /* LEB128 unsigned */
#define REC_WIRE_SVARINT 1u /* zigzag, then LEB128 */
#define REC_WIRE_FIXED32 2u /* 4 bytes little-endian */
#define REC_WIRE_FIXED64 3u /* 8 bytes little-endian */
#define REC_WIRE_LENGTH 4u  /* LEB128 length, then that many bytes */
#define REC_WIRE_OF(type) ((type) & 7u)

typedef enum {
	REC_TYPE_BOOL = 0x08,
	REC_TYPE_U8 = 0x10,
	REC_TYPE_U16 = 0x18,
	REC_TYPE_U32 = 0x20,
	REC_TYPE_U64 = 0x28,
	REC_TYPE_I8 = 0x31,
	REC_TYPE_I16 = 0x39,
	REC_TYPE_I32 = 0x41,
	REC_TYPE_I64 = 0x49,
	REC_TYPE_F32 = 0x52,
	REC_TYPE_F64 = 0x5B,
	REC_TYPE_STRING = 0x60,    /* string pool reference (0 = null) */
	REC_TYPE_TIMESTAMP = 0x68, /* absolute ticks, chunk timebase */
	REC_TYPE_DURATION = 0x70,  /* ticks */
	REC_TYPE_THREAD = 0x78,    /* thread pool reference (0 = none) */
	REC_TYPE_STACK = 0x80,     /* stack pool reference (0 = none) */
	REC_TYPE_BLOB = 0x8C,      /* length-prefixed opaque bytes */
	REC_TYPE_TEXT = 0x94       /* length-prefixed UTF-8, not pooled */
} rec_field_type;

/*! rec_field_type_name() : "u64", "string", ... or "unknown"; never NULL. */
REC_API const char *rec_field_type_name(unsigned type);

typedef enum {
	REC_UNIT_NONE = 0,
	REC_UNIT_BYTES = 1,
	REC_UNIT_PERCENT = 2,  /* fraction: 0.25 means 25 % */
	REC_UNIT_ADDRESS = 3,  /* shown in hex */
	REC_UNIT_NANOS = 4,    /* integer nanoseconds (not ticks) */
	REC_UNIT_EPOCH_NS = 5, /* integer nanoseconds since the Unix epoch */
	REC_UNIT_COUNT = 6,
	REC_UNIT_HZ = 7
} rec_unit;

/*! rec_unit_name() : "bytes", "percent", ... ("" for NONE); never NULL. */
REC_API const char *rec_unit_name(unsigned unit);

/*! rec_parse_duration() : the one duration grammar of the project (REC_OPTIONS
 *  flush=, maxage= and threshold=, the REC_*_PERIOD variables, the tools'
 *  --min-wait, --from and --to): a decimal number, with a fraction ("1.5",
 *  ".5", "5."; up to 12 digits of it count), then a unit ns, us, ms, s, m or
 *  min (minutes), h, or no unit: seconds ("5" is 5 s, "0" is 0).  No sign,
 *  exponent or spaces.  s is len bytes (no NUL needed).  Stores nanoseconds,
 *  rounded to nearest, in *ns.
 *  @return REC_OK, or REC_ERR_INVALID_ARG if s is not of that form or the
 *          value is above INT64_MAX ns (*ns unchanged). */
REC_API rec_status rec_parse_duration(const char *s, size_t len, int64_t *ns);

/* Event type flags: which optional header fields every event of the type has. */
#define REC_EVENT_HAS_DURATION 0x1u
#define REC_EVENT_HAS_THREAD 0x2u
#define REC_EVENT_HAS_STACK 0x4u

/* Chunk header flags. */
#define REC_CHUNK_FINAL 0x1u /* last chunk of a run that closed cleanly */
#define REC_CHUNK_FRONT_CRC 0x2u /* 1.1: Front_Checksum (header bytes 112..115) holds */
#define REC_CHUNK_SPLIT_EVENTS 0x10000u /* 1.3: EVENTS in four streams (spec "Split EVENTS") */
#define REC_CHUNK_RESERVED_MASK 0xFFFE0000u /* reader rejects if set */

/* Limits a reader enforces by default (spec "Limits"). */
#define REC_MAX_HEADER_SIZE 4096u
#define REC_MAX_PAYLOAD_SIZE (256u * 1024u * 1024u) /* stored bytes per chunk */
#define REC_MAX_SECTION_RAW (256u * 1024u * 1024u)  /* decompressed section */
#define REC_MAX_STRING 1048576u                      /* one string, bytes */
#define REC_MAX_STACK_DEPTH 4096u
#define REC_MAX_FIELDS 1024u

/* ------------------------------------------------------------------------ */
/* Metadata descriptions (used by the writer to declare, the reader to      */
/* describe).                                                               */
/* ------------------------------------------------------------------------ */
typedef struct rec_field {
	const char *name;        /* identifier, e.g. "waitTime" */
	const char *label;       /* human label, e.g. "Wait Time" ("" if none) */
	const char *description; /* "" if none */
	uint32_t type;           /* rec_field_type (reader: may be unknown) */
	uint32_t unit;           /* rec_unit */
} rec_field;

typedef struct rec_type {
	uint32_t id;             /* numeric id, unique within a chunk, >= 1 */
	uint32_t flags;          /* REC_EVENT_HAS_* */
	const char *name;        /* dotted name, e.g. "rec.LockWait" */
	const char *label;
	const char *description;
	const char *category;    /* '/'-separated path, e.g. "rec/Locks" */
	uint32_t field_count;
	const rec_field *fields;
} rec_type;

/* ------------------------------------------------------------------------ */
/* Sinks: where a writer's bytes go.                                        */
/* ------------------------------------------------------------------------ */
typedef struct rec_sink {
	/* Write all len bytes or fail; returns 0 or a negative errno. */
	int (*write)(void *opaque, const void *buf, size_t len);
	/* Optional: make written bytes durable/visible; 0 or negative errno. */
	int (*flush)(void *opaque);
	void *opaque;
} rec_sink;

/* ------------------------------------------------------------------------ */
/* Writer: the chunk encoder.  It knows the format, not threads.            */
/* ------------------------------------------------------------------------ */
typedef struct rec_writer rec_writer;

/* How a chunk's EVENTS section is stored (spec "EVENTS", "Split EVENTS").
 * REC_EVENTS_SPLIT (format 1.3): the records cut into four streams of like
 * bytes, each compressed on its own: fewer bytes and less compression CPU;
 * a 1.2 reader refuses such a chunk, naming its flag.  Without a codec the
 * records are stored in one stream whatever is asked. */
typedef enum rec_events_layout {
	REC_EVENTS_DEFAULT = 0,
	REC_EVENTS_ONE_STREAM = 1, /* one stream, as every 1.0-1.2 writer */
	REC_EVENTS_SPLIT = 2
} rec_events_layout;

typedef struct rec_writer_options {
	uint32_t struct_size;      /* sizeof(rec_writer_options) */
	uint32_t codec;            /* rec_codec; default ZSTD */
	int32_t level;             /* codec level; 0 = codec default (zstd: split EVENTS' bodies at
	                            * zstd -3, its other streams at 1; other sections: 1, minMatch 4,
	                            * hashLog 13) */
	uint32_t chunk_events_size;/* raw event bytes that trigger a chunk; 0 = 4 MiB */
	uint64_t run_id;           /* 0 = random */
	uint32_t pid;              /* 0 = getpid() */
	uint32_t events_layout;    /* rec_events_layout; 0 = the default (REC_EVENTS_SPLIT with a codec) */
	int64_t process_start_ns;  /* wall ns since epoch; 0 = now */
	uint64_t tick_frequency;   /* ticks per second; 0 = 1e9 */
	/* One (wall, ticks) anchor converts ticks to wall time for every chunk.
	 * Both 0 = take CLOCK_REALTIME and CLOCK_MONOTONIC now (1e9 Hz only). */
	int64_t anchor_wall_ns;
	uint64_t anchor_ticks;
	uint64_t reserved[4];      /* must be zero */
} rec_writer_options;

#define REC_WRITER_OPTIONS_INIT { sizeof(rec_writer_options), REC_CODEC_ZSTD, 0, 0, 0, 0, 0, 0, 0, 0, 0, {0, 0, 0, 0} }

/*! rec_writer_open() :
 *  Create a writer that writes chunks to sink (copied; opaque must outlive the
 *  writer).  opts may be NULL for defaults.  On success *out owns a writer
 *  that rec_writer_close() frees. */
REC_API rec_status rec_writer_open(rec_writer **out, const rec_sink *sink,
				   const rec_writer_options *opts);
/*! rec_writer_open_fd() : as rec_writer_open() to a file descriptor the
 *  caller keeps owning (not closed by the writer). */
REC_API rec_status rec_writer_open_fd(rec_writer **out, int fd,
				      const rec_writer_options *opts);
/*! rec_writer_open_path() : as rec_writer_open() to a file created or
 *  truncated at path (mode 0644), closed by rec_writer_close(). */
REC_API rec_status rec_writer_open_path(rec_writer **out, const char *path,
					const rec_writer_options *opts);

/*! rec_writer_close() :
 *  Write the pending events as a last chunk flagged REC_CHUNK_FINAL (an empty
 *  final chunk if nothing is pending), then free everything.
 *  @return the first error seen while writing, or REC_OK.  NULL is a no-op. */
REC_API rec_status rec_writer_close(rec_writer *w);

/*! rec_writer_abandon() : free the writer without writing anything more
 *  (what a crash leaves: no FINAL chunk).  NULL is a no-op. */
REC_API void rec_writer_abandon(rec_writer *w);

/*! rec_writer_add_type() :
 *  Declare an event type.  Strings and the fields array are copied.  Ids are
 *  chosen by the caller, >= 1, unique.  Every chunk carries every type. */
REC_API rec_status rec_writer_add_type(rec_writer *w, const rec_type *type);

/* Constant pools.  Ids are >= 1 and stable for the writer's lifetime; 0
 * means "none".  A chunk carries exactly the entries its events reference
 * (and what those entries reference).  define_* use ids the caller chose;
 * intern_* assign the next free id (do not mix the two for one pool unless
 * the caller's ids stay below the interned ones). */
REC_API rec_status rec_writer_define_string(rec_writer *w, uint64_t id,
					    const char *s, size_t len);
REC_API rec_status rec_writer_intern_string(rec_writer *w, const char *s,
					    size_t len, uint64_t *id);
REC_API rec_status rec_writer_define_thread(rec_writer *w, uint64_t id,
					    uint64_t os_tid, uint64_t name_string);
REC_API rec_status rec_writer_define_module(rec_writer *w, uint64_t id,
					    uint64_t path_string,
					    uint64_t build_id_string,
					    uint64_t base);
REC_API rec_status rec_writer_define_frame(rec_writer *w, uint64_t id,
					   uint64_t function_string,
					   uint64_t module, uint64_t module_offset,
					   uint64_t function_offset);
/* Format 1.2 (section FRAME_SOURCE): where a frame is in the source, and
 * the functions inlined into it at its address.  flags: REC_FRAME_PC_EXACT
 * (Module_Offset is an instruction's address, not a return address: the
 * interrupted pc of a sample), REC_FRAME_UNSYMBOLIZED (the recorder did not
 * resolve names: rec-symbolize can); file and the inline entries' strings
 * are string ids (0: unknown), line 0 unknown; inl: inline_count functions
 * inlined at the address, innermost first (at most REC_MAX_INLINE), each
 * with its own position (the innermost's: the address's line; the others':
 * the line of the call the next inner one was inlined at); file and line
 * are then the frame's function's position (of the outermost inlined
 * call).  The frame must be defined (define_frame) first.  A frame's source
 * may be defined again with another value: chunks built from then on carry
 * the new one (the recorder adds file and line after the flags). */
#define REC_FRAME_PC_EXACT 0x1u
#define REC_FRAME_UNSYMBOLIZED 0x2u
#define REC_MAX_INLINE 64u
typedef struct rec_frame_inline {
	uint64_t function_string;
	uint64_t file_string;
	uint32_t line;
} rec_frame_inline;
REC_API rec_status rec_writer_define_frame_source(rec_writer *w, uint64_t frame_id,
						  uint32_t flags, uint64_t file_string,
						  uint32_t line, const rec_frame_inline *inl,
						  uint32_t inline_count);
/* frames: innermost (leaf) first. flags: REC_STACK_TRUNCATED if cut short. */
#define REC_STACK_TRUNCATED 0x1u
REC_API rec_status rec_writer_define_stack(rec_writer *w, uint64_t id,
					   uint32_t flags, const uint64_t *frames,
					   uint32_t depth);

/* Events, built field by field.  begin, then exactly the type's fields in
 * declared order with the matching put (the writer checks), then end.
 * duration/thread/stack are used only if the type's flags declare them. */
REC_API rec_status rec_writer_begin(rec_writer *w, uint32_t type_id,
				    uint64_t ticks, uint64_t duration_ticks,
				    uint64_t thread, uint64_t stack);
REC_API rec_status rec_writer_put_u64(rec_writer *w, uint64_t v);  /* bool, u*, string, timestamp, duration, thread, stack */
REC_API rec_status rec_writer_put_i64(rec_writer *w, int64_t v);   /* i* */
REC_API rec_status rec_writer_put_f64(rec_writer *w, double v);    /* f32 (converted), f64 */
REC_API rec_status rec_writer_put_bytes(rec_writer *w, const void *p, size_t len); /* blob, text */
REC_API rec_status rec_writer_end(rec_writer *w);

/*! rec_writer_append_records() :
 *  Append pre-encoded events in the interchange form (spec: "Record
 *  interchange form"): each record is uvarint Size, uvarint Type_Id, uvarint
 *  absolute Ticks, then the header fields and fields as on disk.  This is how
 *  the recorder hands over thread buffers.  The writer validates every record
 *  when it builds the chunk and rejects the whole call on malformed input. */
REC_API rec_status rec_writer_append_records(rec_writer *w, const void *buf,
					     size_t len);

/*! rec_writer_note_dropped() : add n to the current chunk's Dropped_Events
 *  statistic (the caller also writes rec.Dropped events). */
REC_API void rec_writer_note_dropped(rec_writer *w, uint64_t n);

/*! rec_writer_flush() : write pending events as one chunk now (nothing if
 *  none are pending), then call the sink's flush. */
REC_API rec_status rec_writer_flush(rec_writer *w);

/* For a writer fed by a long-running producer (the recorder).  Each is
 * safe to ignore for a writer that writes one file and closes it. */

/*! rec_writer_set_tick_frequency() : chunks built from now on carry
 *  Tick_Frequency f (> 0), and their Start_Wall_Ns follows it; chunks
 *  already built keep theirs.  (The recorder sets the TSC's frequency,
 *  measured over a longer baseline, before the first chunk.) */
REC_API void rec_writer_set_tick_frequency(rec_writer *w, uint64_t f);

/*! rec_writer_set_check_refs() : on != 0: rec_writer_append_records()
 *  rejects (REC_ERR_INVALID_ARG, the whole call) a record that references
 *  a thread, string or stack id not defined so far, instead of keeping it
 *  pending until one is; for a producer that defines everything its
 *  records may reference before appending them. */
REC_API void rec_writer_set_check_refs(rec_writer *w, int on);

/*! rec_writer_define_private_string() : as rec_writer_define_string(), but
 *  the string stays out of the content index: no other id is found by its
 *  content, so it can be retired (a thread's name). */
REC_API rec_status rec_writer_define_private_string(rec_writer *w, uint64_t id,
						    const char *s, size_t len);

/*! rec_writer_retire_entries() : forget the thread pool entry thread_id
 *  (> 0) and the private string string_id (0: none) at the next flush,
 *  once the records appended so far are in a chunk; a record appended
 *  after that must not reference them.  Keeps the pools of a producer with
 *  a thread per request from growing for the whole recording.
 *  REC_ERR_NOMEM: they stay defined (memory only). */
REC_API rec_status rec_writer_retire_entries(rec_writer *w, uint64_t thread_id,
					     uint64_t string_id);

/*! rec_writer_errmsg() : text of the last failure of this writer; never NULL. */
REC_API const char *rec_writer_errmsg(const rec_writer *w);

/* Running totals (for reconciliation and benchmarks). */
typedef struct rec_writer_stats {
	uint64_t chunks;
	uint64_t events;
	uint64_t raw_bytes;    /* uncompressed payload bytes written */
	uint64_t stored_bytes; /* bytes written to the sink, headers included */
	uint64_t dropped;      /* sum of rec_writer_note_dropped() */
} rec_writer_stats;
REC_API void rec_writer_get_stats(const rec_writer *w, rec_writer_stats *st);

/* ------------------------------------------------------------------------ */
/* Reader                                                                   */
/* ------------------------------------------------------------------------ */
typedef struct rec_reader rec_reader;

typedef struct rec_reader_options {
	uint32_t struct_size;      /* sizeof(rec_reader_options) */
	uint32_t flags;            /* REC_READ_* */
	uint64_t max_payload_size; /* 0 = REC_MAX_PAYLOAD_SIZE */
	uint64_t max_section_raw;  /* 0 = REC_MAX_SECTION_RAW */
	uint64_t max_order_window; /* bytes of decoded chunks held to sort; 0 = 512 MiB */
	uint64_t reserved[4];      /* must be zero */
} rec_reader_options;
#define REC_READER_OPTIONS_INIT { sizeof(rec_reader_options), 0, 0, 0, 0, {0, 0, 0, 0} }

#define REC_READ_ORDERED 0x1u /* rec_reader_next_event() in timestamp order */
#define REC_READ_VERIFY 0x2u  /* check every chunk's whole payload checksum
			       * before its header, metadata or statistics are
			       * returned.  Without it the same holds for a 1.0
			       * chunk; a 1.1 chunk's Front_Checksum (section
			       * headers, METADATA, STATS) is checked instead,
			       * and the whole payload when events are read */

/*! rec_reader_open_path() : open a file ("-" is standard input).
 *  name used in messages is the path.  The file is untrusted. */
REC_API rec_status rec_reader_open_path(rec_reader **out, const char *path,
					const rec_reader_options *opts);
/*! rec_reader_open_mem() : read from memory the caller keeps alive until
 *  close.  name is used in messages (may be NULL). */
REC_API rec_status rec_reader_open_mem(rec_reader **out, const void *buf,
				       size_t len, const char *name,
				       const rec_reader_options *opts);
/*! rec_reader_close() : NULL is a no-op.  (A reader of a file or memory
 *  whose events are read may run one helper thread that decompresses the
 *  next chunk ahead; it is joined here.) */
REC_API void rec_reader_close(rec_reader *r);

/* A problem met while reading.  The reader reports it and goes on. */
typedef struct rec_problem {
	rec_status status;
	uint64_t offset;      /* byte offset in the file */
	int64_t chunk;        /* chunk index (0-based, in file order) or -1 */
	const char *message;  /* what went wrong, e.g. "payload checksum mismatch" (the
			       * location is chunk and offset, not in the text); borrowed */
} rec_problem;

/*! rec_reader_problem() : the problem behind the last error returned by
 *  this reader; valid until the next call on r. */
REC_API const rec_problem *rec_reader_problem(const rec_reader *r);

/* What the reader knows of one chunk without decoding its events. */
typedef struct rec_type_stats {
	uint32_t type_id;
	const rec_type *type; /* NULL if the id has no metadata */
	uint64_t count;
	uint64_t bytes;       /* encoded bytes of these events */
} rec_type_stats;

typedef struct rec_chunk_info {
	uint64_t index;            /* 0-based, in file order */
	uint64_t offset;           /* file offset of the chunk header */
	uint64_t size;             /* header + payload bytes */
	uint16_t major, minor;
	uint32_t header_size;
	uint32_t flags;
	uint32_t codec;
	uint64_t payload_size;     /* stored */
	uint64_t raw_size;         /* decompressed */
	uint64_t event_count;
	int64_t start_wall_ns;
	uint64_t start_ticks;
	uint64_t tick_frequency;
	uint64_t duration_ticks;
	uint64_t run_id;
	int64_t process_start_ns;
	uint32_t pid;
	uint32_t sequence;
	/* From the STATS section. */
	uint64_t first_ticks, last_ticks; /* event time range (last includes durations) */
	uint64_t dropped_events;
	uint32_t type_stats_count;
	const rec_type_stats *type_stats;
	/* From the METADATA section. */
	uint32_t type_count;
	const rec_type *types;
	/* Forward compatibility: what this reader skipped in the chunk. */
	uint32_t unknown_sections;
} rec_chunk_info;

/*! rec_reader_next_chunk() :
 *  Advance to the next chunk, verify its payload checksum and read its
 *  header, metadata and statistics (events and pools are not decompressed).
 *  A chunk whose checksum fails is a problem, never returned as info.
 *  @return REC_OK with *info set (valid until the next chunk is entered),
 *          REC_END at the end of input, or an error: the chunk at that point
 *          is damaged; rec_reader_problem() says where and what, and the next
 *          call resumes at the next readable chunk. */
REC_API rec_status rec_reader_next_chunk(rec_reader *r, const rec_chunk_info **info);

/*! rec_reader_verify_chunk() : check the current chunk completely: payload
 *  checksum, every section, every event against metadata, every pool
 *  reference, and that statistics match the events. */
REC_API rec_status rec_reader_verify_chunk(rec_reader *r);

/* Decoded pool entries.  All are borrowed from the reader. */
typedef struct rec_module {
	uint64_t id;
	const char *path;
	const char *build_id; /* hex, "" if unknown */
	uint64_t base;
} rec_module;

typedef struct rec_frame {
	uint64_t id;
	const char *function;     /* "" if unknown */
	const rec_module *module; /* NULL if unknown */
	uint64_t module_offset;
	uint64_t function_offset;
	/* Format 1.2 (FRAME_SOURCE); "", 0, 0, 0 for a chunk without it. */
	const char *file;         /* source file ("" if unknown) */
	uint32_t line;            /* source line (0 if unknown) */
	uint32_t inline_depth;    /* 0: the function the code is in (a FRAMES
				   * entry); n: a function inlined n levels deep
				   * into it at this address.  A stack lists the
				   * inlined functions of a FRAMES entry before
				   * it, innermost (deepest) first, all with its
				   * id, module and module_offset. */
	uint32_t flags;           /* REC_FRAME_PC_EXACT, REC_FRAME_UNSYMBOLIZED */
} rec_frame;

/*! rec_frame_format() :
 *  A frame as every tool spells it in text (spec/FORMAT.md, "Frames in
 *  text"), like perf and gdb do:
 *    "function (file.c:214)"    named, with its source position (file: the
 *                               base name; ":214" left out without a line);
 *                               " [inlined]" follows for an inlined function
 *    "function+0xOFF (module)"  named (OFF: offset in the function; module:
 *                               the base name of its path; " (module)" left
 *                               out when the module is not known)
 *    "module+0xOFF"             no name (OFF: offset in the module)
 *    "0xOFF"                    neither name nor module
 *    "[unknown]"                fr is NULL (a frame the reader could not resolve)
 *  With REC_FRAME_FUNCTION, where frames are added up by function (flame
 *  graphs, call sites, graphs), a named frame is its function alone; a frame
 *  without a name is spelt as above in both forms.  Writes at most cap - 1
 *  bytes and a NUL (cap > 0; a longer text is cut); @return the length
 *  written. */
#define REC_FRAME_FUNCTION 0x1u
/* REC_FRAME_LINE: as REC_FRAME_FUNCTION, with ":LINE" after a named frame
 * whose line is known ("serve_blocking:214"; rec-flame --lines). */
#define REC_FRAME_LINE 0x2u
REC_API size_t rec_frame_format(const rec_frame *fr, unsigned flags, char *buf, size_t cap);
/*! rec_frame_unsymbolized() : 1 if fr (not an inlined one) is a frame of a
 *  module with a build-id that has no name or was recorded unsymbolized
 *  (REC_FRAME_UNSYMBOLIZED): rec-symbolize may name it from debug files. */
REC_API int rec_frame_unsymbolized(const rec_frame *fr);
/*! rec_frame_module_name() : the base name of fr's module path ("libc.so.6"),
 *  "" when fr or its module is not known. */
REC_API const char *rec_frame_module_name(const rec_frame *fr);

typedef struct rec_stack {
	uint64_t id;
	uint32_t flags;  /* REC_STACK_TRUNCATED */
	uint32_t depth;
	const rec_frame *const *frames; /* leaf first */
} rec_stack;

/*! rec_stack_site() : the index in s->frames of the event's call site, the
 *  frame the tools show as where it happened: 0, the leaf, since the
 *  recorder drops librec's own frames when it captures a stack
 *  (spec/EVENTS.md); in recordings made before it did, which begin with
 *  librec's functions (all named rec_*), the first frame not named rec_*
 *  (0 when every frame is).  An inlined function's frame (inline_depth > 0)
 *  is not a site: the site is the first frame of the code the program's
 *  function is in, as in the SQL's frames table.  0 for NULL or an empty
 *  stack. */
REC_API uint32_t rec_stack_site(const rec_stack *s);

/*! rec_writer_copy_frame_source() : for tools that re-encode a recording:
 *  define in w the frame source of s->frames[i] of a read stack, a FRAMES
 *  entry (inline_depth 0) already defined with its id, whose inlined
 *  functions are s->frames[first .. i-1] (strings interned); nothing when
 *  it has no source, flags or inline frames. */
REC_API rec_status rec_writer_copy_frame_source(rec_writer *w, const rec_stack *s,
						uint32_t first, uint32_t i);

typedef struct rec_thread {
	uint64_t id;
	uint64_t os_tid;
	const char *name; /* "" if unnamed */
} rec_thread;

typedef struct rec_value {
	uint32_t type; /* the field's rec_field_type */
	uint32_t present; /* 0 if the event ended before this field */
	union {
		uint64_t u;   /* bool, u*, timestamp, duration (ticks) */
		int64_t i;    /* i* */
		double f;     /* f32, f64 */
		struct { const char *ptr; size_t len; } s; /* string (NULL ptr = null ref), text, blob */
		const rec_thread *thread; /* NULL = none */
		const rec_stack *stack;   /* NULL = none */
	} v;
} rec_value;

typedef struct rec_event {
	const rec_type *type;
	const rec_chunk_info *chunk;
	uint64_t ticks;          /* absolute, chunk timebase */
	int64_t wall_ns;         /* ns since epoch */
	uint64_t duration_ticks; /* 0 if the type has none */
	int64_t duration_ns;
	const rec_thread *thread;/* NULL if none */
	const rec_stack *stack;  /* NULL if none */
	uint32_t value_count;    /* == type->field_count */
	const rec_value *values; /* parallel to type->fields */
	uint64_t offset;         /* offset of the record in the raw events section */
} rec_event;

/*! rec_reader_next_event() :
 *  Iterate all events of the input, entering chunks as needed (file order,
 *  or timestamp order with REC_READ_ORDERED).  Events of types without
 *  metadata are skipped and counted, as are those of types a selection
 *  leaves out (rec_reader_select_types()).
 *  @return REC_OK with *ev valid until the next call on r, REC_END at the end
 *          of input, or an error for one damaged chunk (see
 *          rec_reader_problem()); calling again continues after it. */
REC_API rec_status rec_reader_next_event(rec_reader *r, rec_event *ev);

/*! rec_reader_next_chunk_event() :
 *  As rec_reader_next_event() in file order, but only the events of the
 *  current chunk (the one rec_reader_next_chunk() entered): REC_END after
 *  its last event, without entering the next chunk.  The chunk's events are
 *  decompressed on the first call; a chunk rec_reader_next_chunk() passes
 *  over without this call never is (a scan that skips chunks by their
 *  header and statistics, such as a time window, costs no decompression).
 *  An error is one damaged chunk (see rec_reader_problem()); the next call
 *  then returns REC_END.  REC_ERR_STATE with REC_READ_ORDERED. */
REC_API rec_status rec_reader_next_chunk_event(rec_reader *r, rec_event *ev);

/* Totals of what the reader saw and skipped so far. */
typedef struct rec_reader_stats {
	uint64_t file_size;        /* 0 if unknown (a pipe) */
	uint64_t chunks;           /* chunks with a valid header */
	uint64_t chunks_damaged;   /* chunks reported as problems */
	uint64_t bytes_skipped;    /* bytes not part of any readable chunk */
	uint64_t events;           /* events returned */
	uint64_t unknown_types;    /* events skipped: type without metadata */
	uint64_t unknown_fields;   /* fields of unknown type skipped */
	uint64_t trailing_bytes;   /* bytes after the declared fields, skipped */
	uint64_t unknown_sections; /* sections of unknown kind skipped */
	uint64_t order_window_overflows; /* ORDERED: window cap hit, order approximate */
	uint64_t events_skipped;   /* events of types left out by rec_reader_select_types() */
	uint64_t frames_unsymbolized; /* frames of a module with a build-id but no name
					 (rec_frame_unsymbolized()), counted in each chunk
					 whose pools were read: rec-symbolize names them */
	uint64_t order_late;       /* ORDERED: events returned after one that started
				      later had been (they started before the chunks
				      already released ended: a duration longer than
				      the chunks between, or an emit descheduled across
				      chunks); order approximate there (spec "Order") */
	uint64_t events_digested;  /* events given as digests (rec_reader_digest_type()) */
} rec_reader_stats;
REC_API void rec_reader_get_stats(const rec_reader *r, rec_reader_stats *st);

/* Type selection: read only the events of some types.
 *
 * A consumer that needs a few types of a recording (a view of lock waits)
 * says which; the reader then passes over the records of the other types by
 * their Size prefix: their fields are not decoded, they are not returned by
 * rec_reader_next_event() or rec_reader_next_chunk_event() and, with
 * REC_READ_ORDERED, never enter the time ordering (a chunk without a wanted
 * event holds no memory in it).  They are counted in
 * rec_reader_stats.events_skipped.  Everything else stays as without a
 * selection: each chunk's checksums, the framing of all its records (Size,
 * Type_Id, Time_Delta) and their number against Item_Count are checked and
 * a damaged chunk is a problem as before; rec_chunk_info (dropped events,
 * type statistics, run and sequence) is the same; events of types without
 * metadata are counted in unknown_types as before.  Only what is inside a
 * skipped record's fields (a bad pool reference, a value too wide) goes
 * unnoticed; rec_reader_verify_chunk() still checks every record.
 *
 * The selection is resolved against each chunk's metadata, once per chunk
 * (when its events are first read): a type's id may differ between chunks,
 * its name does not. */

/*! rec_type_filter : nonzero when the events of type are wanted; called
 *  once per event type of each chunk's metadata. */
typedef int (*rec_type_filter)(void *ctx, const rec_type *type);

/*! rec_reader_select_types() :
 *  Read only the events of the types want accepts (want NULL: every type,
 *  the default).  ctx is passed to want and must stay valid while r reads.
 *  Replaces an earlier selection.
 *  @return REC_OK; REC_ERR_STATE once events of a chunk have been read
 *          (select before the first rec_reader_next_event() or
 *          rec_reader_next_chunk_event()); REC_ERR_INVALID_ARG for NULL r. */
REC_API rec_status rec_reader_select_types(rec_reader *r, rec_type_filter want, void *ctx);

/*! rec_reader_select_type_names() :
 *  As rec_reader_select_types() with the types whose name is one of
 *  names[0 .. count) (exact, case-sensitive; copied).  A name no chunk has
 *  selects nothing; count 0 selects no type at all.
 *  @return as rec_reader_select_types(), or REC_ERR_NOMEM. */
REC_API rec_status rec_reader_select_type_names(rec_reader *r, const char *const *names,
						size_t count);

/*! rec_reader_select_type_ids() :
 *  As rec_reader_select_types() with the types whose id is one of
 *  ids[0 .. count) (copied): for a writer whose ids are fixed (the built-in
 *  types, REC_TYPE_ID_*).
 *  @return as rec_reader_select_type_names(). */
REC_API rec_status rec_reader_select_type_ids(rec_reader *r, const uint32_t *ids, size_t count);

/* Digests: of the events of one frequent type, only when, on which thread,
 * with which stack and the first two fields.
 *
 * A consumer that needs that much of most records (a view that weighs what
 * each thread did by its CPU samples) has them without an event each: with
 * REC_READ_ORDERED, the records of the digested type are neither decoded
 * nor ordered nor returned by rec_reader_next_event(); each chunk's are
 * given to a callback, in file order, as the chunk is read: when an event is
 * returned, the digests of every event before it in time have been given
 * (as far as the order holds: order_late), and some after it may have been.
 * With a second core the reader's worker makes them as it decompresses.
 * They are counted in rec_reader_stats.events_digested.
 *
 * A chunk's type of that name is digested when its first two fields (as
 * many as it has) are unsigned integers (bool, u8-u64, timestamp, duration)
 * and the second at most 32 bits wide; otherwise its events are returned as
 * usual.  A digested record is checked as far as it is read (its frame, its
 * Thread, Stack and those fields, their widths); the fields after them are
 * not read.  A record whose digest does not hold is returned as an event
 * instead, so its problem is reported as usual; a digest whose Thread or
 * Stack is not in the chunk's pools is a problem of the chunk (the other
 * digests are given). */

/*! rec_digest : what a digest says of one event. */
typedef struct rec_digest {
	uint64_t ticks;           /* absolute, chunk timebase */
	int64_t wall_ns;          /* ns since epoch */
	const rec_thread *thread; /* NULL if none */
	const rec_stack *stack;   /* NULL if none */
	uint64_t field[2];        /* the type's first two fields (0 for one it lacks) */
} rec_digest;

/*! rec_digest_fn : n digests d[] of events of type in chunk (each valid
 *  during the call only, as are the threads and stacks they point to). */
typedef void (*rec_digest_fn)(void *ctx, const rec_chunk_info *chunk, const rec_type *type,
			      const rec_digest *d, size_t n);

/*! rec_reader_digest_type() :
 *  Give the events of the type named name (exact; copied) to fn as digests
 *  (name NULL: none, the default).  Replaces an earlier one.
 *  @return REC_OK; REC_ERR_STATE without REC_READ_ORDERED or once events
 *          were read; REC_ERR_INVALID_ARG for NULL r, or a name without fn;
 *          REC_ERR_NOMEM. */
REC_API rec_status rec_reader_digest_type(rec_reader *r, const char *name, rec_digest_fn fn,
					  void *ctx);

/*! rec_ticks_to_ns() : convert a tick difference to nanoseconds. */
REC_API int64_t rec_ticks_to_ns(int64_t ticks, uint64_t frequency);
/*! rec_chunk_wall_ns() : wall-clock ns since epoch of absolute ticks t. */
REC_API int64_t rec_chunk_wall_ns(const rec_chunk_info *c, uint64_t ticks);

#ifdef __cplusplus
}
#endif
#endif /* LIBREC_REC_H */
