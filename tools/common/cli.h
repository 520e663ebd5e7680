/* SPDX-License-Identifier: MIT */
/*
 * cli.h - what every rec-* tool shares: messages and exit codes, option
 * parsing, a fast buffered stdout, JSON escaping and small JSON helpers,
 * human formatting of durations, sizes and wall-clock times.  The one
 * header the tools include; each section below names the file that
 * implements it (tools/common/).
 *
 * Conventions (STYLE.md, "CLI conventions"):
 *   - stdout carries data only; every diagnostic goes to stderr prefixed by
 *     the tool name: "rec-print: FILE: chunk 3 at offset 4096: payload
 *     checksum mismatch".
 *   - exit codes: REC_EXIT_OK 0, REC_EXIT_DATA 1 (damaged input, I/O, a
 *     failed write to stdout), REC_EXIT_USAGE 2 (usage error; the message
 *     ends with "try 'TOOL --help'").
 * Tools never decode recording bytes themselves: they use rec.h only.
 * What may call what: a tool's main (tools/rec-*.c, or tools/NAME/ for the
 * larger ones) calls the library's public headers (rec/NAME.h) and this
 * directory; never a libfmt/ internal header.
 */
#ifndef REC_TOOLS_CLI_H
#define REC_TOOLS_CLI_H

#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rec/rec.h"

#define REC_EXIT_OK 0
#define REC_EXIT_DATA 1
#define REC_EXIT_USAGE 2

#if defined(__GNUC__)
#define REC_CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define REC_CLI_NORETURN __attribute__((noreturn))
#else
#define REC_CLI_PRINTF(a, b)
#define REC_CLI_NORETURN
#endif

/* ---- messages and exit codes (msgs.c) -------------------------------------- */

/* Set the tool name used as message prefix (basename of argv[0] is NOT used:
 * messages always name the tool as installed, e.g. "rec-print").  Also gives
 * stdout a 1 MiB buffer.  Exits 1 if the linked library's version differs
 * from the headers the tool was built with. */
void rec_cli_init(const char *tool);
const char *rec_cli_tool(void);

/* Where the fast buffer (below) and every message of this file go: out
 * NULL is stdout, err NULL is stderr (the defaults).  Pending output is
 * flushed to the old stream first.  The tools' run functions (tools.h) set
 * them so that a harness can run a tool on memory with its own streams. */
void rec_cli_set_streams(FILE *out, FILE *err);
/* The stream messages go to (stderr unless set). */
FILE *rec_cli_err(void);

/* "TOOL: message\n" on stderr. */
void rec_cli_error(const char *fmt, ...) REC_CLI_PRINTF(1, 2);
/* "TOOL: FILE: message\n" on stderr. */
void rec_cli_file_error(const char *file, const char *fmt, ...) REC_CLI_PRINTF(2, 3);
/* A reader problem: "TOOL: FILE: chunk C at offset O: message\n" (without
 * "chunk C" when p->chunk is -1).  p may be NULL (then status is described). */
void rec_cli_problem(const char *file, const rec_problem *p, rec_status status);
/* The inputs are read again (rec-view and rec-report, when a first reading
 * is given up): a problem said already is not said again. */
void rec_cli_reading_again(void);
/* Forget the problems said (a harness that runs a tool many times). */
void rec_cli_problems_forget(void);
/* Usage error: "TOOL: message\ntry 'TOOL --help'\n" on stderr, exit 2. */
REC_CLI_NORETURN void rec_cli_usage_error(const char *fmt, ...) REC_CLI_PRINTF(1, 2);
/* The same message, without exiting: returns REC_EXIT_USAGE (for the run
 * functions, which never exit). */
int rec_cli_usage_fail(const char *fmt, ...) REC_CLI_PRINTF(1, 2);
/* Print the bare library version on stdout and exit 0 (after a checked close). */
REC_CLI_NORETURN void rec_cli_version(void);
/* Write text to stdout and exit 0 (after a checked close): for --help. */
REC_CLI_NORETURN void rec_cli_help(const char *text);

/* (out.c) Flush the fast buffer, then check ferror(stdout) and fclose(stdout).
 * Returns rc unchanged on success, REC_EXIT_DATA (after a message) if a
 * write failed.  Call it once, as "return rec_cli_finish(rc);". */
int rec_cli_finish(int rc);

/* Flush the fast buffer and then its stream (stdout unless set): every
 * failure keeps the errno of the failed call itself for rec_cli_finish's
 * one message.  Returns false if a write to it has failed (now or before).
 * Use it instead of a bare fflush(stdout) before messages or before writing
 * to standard output other than through the fast buffer. */
bool rec_cli_out_sync(void);
/* Record err as the reason of a failed write to standard output made
 * outside the fast buffer (the first failure wins); rec_cli_finish
 * reports it once. */
void rec_cli_out_failed(int err);

/* ---- option parsing (options.c; the values in parse.c) ---------------------- */

/* getopt_long() that turns its errors into usage errors (exit 2) with a
 * message naming the option.  Returns the option as getopt_long does, -1 at
 * the end of options.  opterr is off; never returns '?' or ':'. */
int rec_cli_getopt(int argc, char *const argv[], const char *shortopts,
		   const struct option *longopts);

/* The options every tool has, the last entries of its long options
 * (REC_CLI_COMMON_OPTIONS ends the table): -h/--help and --version.  The
 * option switch ends with "default: rec_cli_common_option(c, usage_text);":
 * -h prints the usage text (rec_cli_help), --version the library version
 * (rec_cli_version), anything else is a usage error; it never returns. */
#define REC_CLI_OPT_VERSION 4096
#define REC_CLI_COMMON_OPTIONS                                        \
	{ "help", no_argument, NULL, 'h' },                           \
	{ "version", no_argument, NULL, REC_CLI_OPT_VERSION },        \
	{ NULL, 0, NULL, 0 }
REC_CLI_NORETURN void rec_cli_common_option(int c, const char *usage_text);
/* The value of option (e.g. "--output"), or the usage error
 * "OPTION: empty WHAT" when it is "". */
const char *rec_cli_opt_nonempty(const char *option, const char *what, const char *s);

/* The only operand left after the options (argv[optind]), or a usage
 * error: "no input file", "one input file only (got N)". */
const char *rec_cli_one_file(int argc, char *const argv[]);

/* Parse a decimal unsigned integer in [min, max]; no sign, no spaces, no
 * trailing characters, overflow checked.  Returns false if invalid. */
bool rec_cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* As rec_cli_parse_u64, or a usage error naming the option on failure. */
uint64_t rec_cli_opt_u64(const char *option, const char *s, uint64_t min, uint64_t max);

/* Parse an absolute wall-clock time for --from/--to options:
 * "YYYY-MM-DDTHH:MM[:SS[.frac]][Z|+HH:MM|-HH:MM]" ('T' or ' ' between date
 * and time; ',' accepted for '.'); local time when no zone is given.  Stores
 * nanoseconds since the Unix epoch in *out; returns false if s is not of
 * that form or out of range. */
bool rec_cli_parse_iso_time(const char *s, int64_t *out);

/* Parse a duration or an offset with the library's one grammar,
 * rec_parse_duration() (rec.h): "10ms", "1.5s", "1min", "3" (a bare number
 * is seconds).  Stores nanoseconds; returns false if s is not of that form
 * or above INT64_MAX ns. */
bool rec_cli_parse_duration(const char *s, int64_t *out);

/* Split a comma-separated list into a growing array of strings (pointers
 * into a strdup'd copy; empty items are skipped).  Exits 1 on allocation
 * failure.  Free with rec_cli_list_free. */
typedef struct rec_cli_list {
	char **items;
	size_t count, cap;
	char **copies;
	size_t ncopies;
} rec_cli_list;
void rec_cli_list_add_csv(rec_cli_list *l, const char *csv);
void rec_cli_list_free(rec_cli_list *l);
/* rec_cli_list_add_csv, or the usage error "OPTION: no WHAT in 'CSV'" when
 * csv has no item. */
void rec_cli_opt_list(rec_cli_list *l, const char *option, const char *what, const char *csv);

/* Allocation that exits 1 with a message on failure (tools only). */
void *rec_cli_xmalloc(size_t n);
void *rec_cli_xrealloc(void *p, size_t n);
char *rec_cli_xstrdup(const char *s);

/* ---- fast buffered stdout (out.c) ------------------------------------------- */
/* A 1 MiB buffer flushed with fwrite(); much cheaper per call than stdio
 * when a tool writes millions of small pieces.  Do not mix with printf on
 * stdout without rec_out_flush() first. */
#define REC_OUT_SIZE (1u << 20)
typedef struct rec_out_buf {
	char *buf;
	size_t len;
	int failed;
	FILE *file; /* where rec_out_flush() writes; NULL: stdout */
} rec_out_buf;
extern rec_out_buf rec_out_g;

void rec_out_flush(void);
void rec_out_write_slow(const void *p, size_t n);
/* n bytes from s to d, n at most 32, without a call: most pieces a tool
 * writes (field names, numbers, short strings) are that short, and a call
 * with a length the processor cannot predict costs more than the copy.
 * Two overlapping moves of the widest size that fits cover every n. */
static inline void rec_out_copy_short(char *d, const char *s, size_t n)
{
	if (n >= 16) {
		uint64_t a[2], b[2];
		memcpy(a, s, 16);
		memcpy(b, s + n - 16, 16);
		memcpy(d, a, 16);
		memcpy(d + n - 16, b, 16);
	} else if (n >= 8) {
		uint64_t a, b;
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4) {
		uint32_t a, b;
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		memcpy(d, &a, 4);
		memcpy(d + n - 4, &b, 4);
	} else if (n) {
		char a = s[0], b = s[n / 2], c = s[n - 1];
		d[0] = a;
		d[n / 2] = b;
		d[n - 1] = c;
	}
}
static inline void rec_out_write(const void *p, size_t n)
{
	if (REC_OUT_SIZE - rec_out_g.len >= n) {
		if (n <= 32)
			rec_out_copy_short(rec_out_g.buf + rec_out_g.len, p, n);
		else
			memcpy(rec_out_g.buf + rec_out_g.len, p, n);
		rec_out_g.len += n;
	} else {
		rec_out_write_slow(p, n);
	}
}
/* Reserve n bytes (n <= 4096) and return where to write them. */
static inline char *rec_out_reserve(size_t n)
{
	if (REC_OUT_SIZE - rec_out_g.len < n)
		rec_out_flush();
	return rec_out_g.buf + rec_out_g.len;
}
static inline void rec_out_commit(size_t n) { rec_out_g.len += n; }
static inline void rec_out_char(char c)
{
	if (rec_out_g.len == REC_OUT_SIZE)
		rec_out_flush();
	rec_out_g.buf[rec_out_g.len++] = c;
}
static inline void rec_out_str(const char *s) { rec_out_write(s, strlen(s)); }
#define REC_OUT_LIT(s) rec_out_write((s), sizeof(s) - 1)
void rec_out_printf(const char *fmt, ...) REC_CLI_PRINTF(1, 2);
/* vsnprintf into buf (cap bytes), or into a heap string when longer (then
 * free it: the result is not buf); *len its length.  NULL on an encoding
 * error. */
char *rec_cli_vformat(char *buf, size_t cap, size_t *len, const char *fmt, va_list ap)
	REC_CLI_PRINTF(4, 0);

/* The SQL name of a type or field name (spec/SCHEMA.md) with suffix after
 * it, allocated (rec_cli_xmalloc): tools/common/sqlname.c. */
char *rec_cli_sql_ident(const char *s, const char *suffix);

/* Decimal digits of v written at p (room for 20); returns the length. */
size_t rec_fmt_u64(char *p, uint64_t v);
size_t rec_fmt_i64(char *p, int64_t v);
void rec_out_u64(uint64_t v);
void rec_out_i64(int64_t v);
void rec_out_hex(uint64_t v); /* "0x1a2b" */

/* ---- growing strings (strbuf.c) --------------------------------------------- */
/* A NUL-terminated string that grows as text is added (exits 1 when out of
 * memory, like rec_cli_xmalloc); s stays NULL until the first add.  Start
 * from { 0 }; free with rec_cli_strbuf_free. */
typedef struct rec_cli_strbuf {
	char *s;
	size_t len, cap;
} rec_cli_strbuf;
void rec_cli_strbuf_add(rec_cli_strbuf *b, const char *s, size_t n);
void rec_cli_strbuf_str(rec_cli_strbuf *b, const char *s);
void rec_cli_strbuf_printf(rec_cli_strbuf *b, const char *fmt, ...) REC_CLI_PRINTF(2, 3);
/* Empty again, keeping the memory. */
void rec_cli_strbuf_reset(rec_cli_strbuf *b);
void rec_cli_strbuf_free(rec_cli_strbuf *b);

/* ---- a map of ids (idmap.c) ------------------------------------------------- */
/* Nonzero 64-bit ids (pool ids, interned pointers) to values; exits 1 when
 * out of memory, like rec_cli_xmalloc.  Start from { 0 }. */
typedef struct rec_cli_idmap {
	uint64_t *k, *v;
	size_t cap, n;
} rec_cli_idmap;
/* The value of id (0 when just added: *fresh is then true). */
uint64_t *rec_cli_idmap_slot(rec_cli_idmap *m, uint64_t id, bool *fresh);
/* Add id; true if it was not there. */
bool rec_cli_idmap_add(rec_cli_idmap *m, uint64_t id);
/* Empty again, keeping the memory. */
void rec_cli_idmap_clear(rec_cli_idmap *m);
void rec_cli_idmap_free(rec_cli_idmap *m);

/* ---- JSON (json.c) ---------------------------------------------------------- */
/* Write s (len bytes) as a JSON string with quotes: '"' and '\\' escaped,
 * every control character (< 0x20 and 0x7F) as \u00XX, valid UTF-8 passed
 * through, each byte of invalid UTF-8 replaced by U+FFFD.  The same escaping
 * is used for quoted strings in text output. */
void rec_out_json_string(const char *s, size_t len);
static inline void rec_out_json_cstr(const char *s)
{
	if (s)
		rec_out_json_string(s, strlen(s));
	else
		REC_OUT_LIT("null");
}
/* A finite double with round-trip precision, or null for NaN/Inf. */
void rec_out_json_double(double v);

/* Minimal pretty JSON writer on the fast buffer: objects and arrays, keys
 * and values, commas and indentation handled.  Nesting up to 32 levels. */
typedef struct rec_json {
	int depth;
	bool first[32];
	bool compact[32];   /* this container on one line */
	bool after_key;
} rec_json;
void rec_json_begin_object(rec_json *j, bool compact);
void rec_json_end_object(rec_json *j);
void rec_json_begin_array(rec_json *j, bool compact);
void rec_json_end_array(rec_json *j);
void rec_json_key(rec_json *j, const char *key);
void rec_json_str(rec_json *j, const char *s);          /* NULL -> null */
void rec_json_strn(rec_json *j, const char *s, size_t n);
void rec_json_u64(rec_json *j, uint64_t v);
void rec_json_i64(rec_json *j, int64_t v);
void rec_json_double(rec_json *j, double v);
void rec_json_bool(rec_json *j, bool v);
void rec_json_null(rec_json *j);
void rec_json_raw(rec_json *j, const char *s);          /* a preformatted value */
/* Finish the document with a newline. */
void rec_json_end(rec_json *j);
/* The head of the tools' JSON documents: the object begun, "schema": 1,
 * "view" (when view is not NULL), "baseline": [baseline] (when not NULL),
 * "files": the inputs' names, "by" (null when by is NULL). */
struct rec_cli_input;
void rec_json_head(rec_json *j, const char *view, const char *baseline,
		   const struct rec_cli_input *in, size_t n, const char *by);
/* One problem as the tools' --json shows it, on one line:
 * {"file": ..., "chunk": C or null, "offset": O, "status": "...", "message": "..."}
 * ("file" only when with_file; a NULL file is null; chunk < 0 is null). */
void rec_json_problem(rec_json *j, bool with_file, const char *file, int64_t chunk,
		      uint64_t offset, rec_status status, const char *message);

/* ---- human formatting (human.c) --------------------------------------------- */
/* All write a NUL-terminated string into buf (cap >= 48) and return its length. */
/* "850 ns", "12.300 us", "1.502 ms", "12.345 s" (negative values get '-'). */
size_t rec_fmt_duration(char *buf, int64_t ns);
/* "512 bytes", "1.5 KiB", "6.0 MiB", ... "EiB". */
size_t rec_fmt_bytes(char *buf, uint64_t bytes);
/* Local wall-clock time with ns: "10:14:03.123456789 (2026-12-02)". */
size_t rec_fmt_wall(char *buf, int64_t epoch_ns);
/* ISO 8601 local time with ns and offset: "2026-12-02T10:14:03.123456789Z"
 * in UTC, "...+01:00" elsewhere. */
size_t rec_fmt_iso(char *buf, int64_t epoch_ns);

/* ---- values as the tools show them (values.c) ------------------------------- */
/* On the fast buffer: */
void rec_out_wall(int64_t epoch_ns);        /* rec_fmt_wall */
void rec_out_iso_quoted(int64_t epoch_ns);  /* "\"" rec_fmt_iso "\"" */
void rec_out_duration(int64_t ns);          /* rec_fmt_duration */
void rec_out_bytes(uint64_t bytes);         /* rec_fmt_bytes */
void rec_out_hex_bytes_json(const char *p, size_t len); /* "\"0a1b...\"" */
/* " NAME" for each input (a finding's command line, the text's heads). */
struct rec_cli_input;
void rec_out_input_names(const struct rec_cli_input *in, size_t n);
/* {"name": "...", "tid": N}, or null. */
void rec_out_thread_json(const rec_thread *t);
/* A frame as every JSON output gives it (spec/FORMAT.md, "Frames in text"),
 * the same keys always, offsets as hex strings like the text's:
 * {"function": "f" or null, "functionOffset": "0x1a" or null (no function),
 *  "module": "/path" or null, "moduleOffset": "0x891f5", "file": "/src/a.c"
 *  or null, "line": 214 or null, "inline": 0 (n: inlined n levels deep)};
 *  null for an unresolved frame. */
void rec_out_frame_json(const rec_frame *fr);
/* The name of the type with this id in an event's chunk (NULL: none). */
const char *rec_cli_chunk_type_name(const rec_event *ev, uint64_t id);
/* A NUL-terminated heap copy of s (NULL: "") JSON-quoted, then suffix; the
 * name is cut at 4096 bytes (longer ones exist only in hostile files).
 * Built through the fast buffer's escaper (flushes it first). */
char *rec_cli_json_quoted(const char *s, const char *suffix);

/* ---- time windows (window.c) ------------------------------------------------ */
/* --from T / --to T: T is an offset from the input's first event (a duration:
 * kind 1) or a wall time (ISO 8601: kind 2); events that start in [from, to). */
typedef struct rec_cli_window {
	int from_kind, to_kind; /* 0: not given */
	int64_t from, to;       /* ns: offset (kind 1) or since the epoch (kind 2) */
} rec_cli_window;
/* Parse the value of --from (to false) or --to; a usage error if it is
 * neither kind. */
void rec_cli_window_opt(rec_cli_window *w, bool to, const char *s);
/* The usage errors: mixed kinds, to not after from, offsets on an input
 * that cannot be read twice (the start is read first). */
void rec_cli_window_check(const rec_cli_window *w, bool rereadable);
/* The window in wall ns for this input, [*lo, *hi) (INT64_MIN/MAX when
 * open; offsets of an input without events leave it open). */
struct rec_cli_input;
void rec_cli_window_bounds(const rec_cli_window *w, const struct rec_cli_input *in, int64_t *lo,
			   int64_t *hi);

/* ---- inputs and the event loop (input.c) ------------------------------------ */
/* One input of a tool: a path ("-" is standard input) or bytes in memory
 * (the fuzzing harnesses), with the reader limits to use. */
typedef struct rec_cli_input {
	const char *name;        /* path, or the name used in messages */
	const void *data;        /* not NULL: read these size bytes instead */
	size_t size;
	const rec_reader_options *base; /* limits (flags are overridden); NULL: defaults */
} rec_cli_input;

/* The operands left after the options (argv[optind..]) as inputs by path,
 * checked by rec_cli_inputs_check (a usage error exits 2).  Free the array
 * with free(). */
rec_cli_input *rec_cli_operands(int argc, char *const argv[], size_t *n);
/* What a tool with FILE... operands refuses, for its run function (which
 * never exits): no input ("no input file"), standard input ('-') named
 * more than once.  REC_EXIT_OK, or REC_EXIT_USAGE after the message. */
int rec_cli_inputs_check(const rec_cli_input *in, size_t n);
/* Whether the input is standard input ('-' and not in memory). */
bool rec_cli_input_is_stdin(const rec_cli_input *in);

/* Open a reader with the given REC_READ_* flags, without any message. */
rec_status rec_cli_input_reader(const rec_cli_input *in, uint32_t flags, rec_reader **r);
/* Open a reader with the given REC_READ_* flags.  On failure report
 * "TOOL: NAME: reason" (errno's text for an I/O error) and return NULL. */
rec_reader *rec_cli_input_open(const rec_cli_input *in, uint32_t flags);
/* Whether the input can be opened at all (standard input is not tried):
 * false after rec_cli_input_open()'s message.  For an input whose absence
 * makes any output meaningless (a --baseline). */
bool rec_cli_input_probe(const rec_cli_input *in);
/* Whether the input can be read twice (memory or a regular file). */
bool rec_cli_input_rereadable(const rec_cli_input *in);
/* Every readable chunk's information to fn, without messages (a second
 * reader; the input must be rereadable; unreadable chunks are skipped).
 * Returns false if the input could not be opened. */
typedef void (*rec_cli_chunk_fn)(void *ctx, const rec_chunk_info *c);
bool rec_cli_each_chunk(const rec_cli_input *in, rec_cli_chunk_fn fn, void *ctx);
/* Wall time of the recording's first event from chunk statistics only (a
 * second reader; the input must be rereadable).  A chunk without events
 * counts with its start time when empty_chunks is true, else is skipped.
 * Returns false if no chunk counted. */
bool rec_cli_recording_start(const rec_cli_input *in, bool empty_chunks, int64_t *out);

/* Errors after which reading cannot go on (memory, I/O, misuse). */
bool rec_cli_fatal_status(rec_status st);
/* Every event of r to fn (in the reader's order).  Problems are reported
 * ("TOOL: NAME: chunk C at offset O: ...") and make the result
 * REC_EXIT_DATA; reading goes on past them unless fatal or the reader stops
 * advancing.  fn returns REC_EXIT_OK to go on, anything else to stop: that
 * value is returned (the larger of it and the problems' result). */
typedef int (*rec_cli_event_fn)(void *ctx, const rec_event *ev);
int rec_cli_each_event(rec_reader *r, const char *name, rec_cli_event_fn fn, void *ctx);
/* The exporters (rec-flame, rec-export, rec-timeline, rec-print --json) set
 * it: after each input rec_cli_each_event() says on stderr how many frames
 * of r had no name (rec_reader_stats.frames_unsymbolized) and that
 * rec-symbolize names them (rec_cli_unsymbolized_note). */
extern bool rec_cli_note_unsymbolized;
void rec_cli_unsymbolized_note(rec_reader *r, const char *name);
/* The same note for n frames (rec-export's frames table counts its rows). */
void rec_cli_unsymbolized_count_note(const char *name, uint64_t n);
/* After each input rec_cli_each_event() says on stderr where a
 * REC_READ_ORDERED reader's order was approximate (the window cap,
 * order_window_overflows; events returned late, order_late). */
void rec_cli_order_note(rec_reader *r, const char *name);

/* The event pass of the tools that read several inputs as one recording
 * (rec-view, rec-report): each input opened in timestamp order
 * (REC_READ_ORDERED), begin told of it (NULL: nothing), only the types
 * filter selects decoded (NULL: every type; rec_reader_select_types), its
 * events to fn through rec_cli_each_event().  An input that cannot be
 * opened or filtered is reported and makes the result REC_EXIT_DATA.  Once
 * *stop is true (stop NULL: never), no further input is read.  Returns the
 * largest exit code. */
typedef struct rec_cli_event_pass {
	void (*begin)(void *ctx, const rec_cli_input *in);
	rec_type_filter filter;
	void *filter_ctx;
	rec_cli_event_fn fn;
	void *ctx;
	const bool *stop;
	/* a type to take as digests (rec_reader_digest_type(); NULL: none) */
	const char *digest_type;
	rec_digest_fn digest_fn;
	void *digest_ctx;
} rec_cli_event_pass;
int rec_cli_each_input_event(const rec_cli_input *in, size_t n, const rec_cli_event_pass *p);
/* Every input that can be opened (the others are left to the event pass to
 * report) through rec_summary_add_reader(s, ..., flags): a failure is
 * reported ("TOOL: NAME: what") and makes the result REC_EXIT_DATA. */
struct rec_summary;
int rec_cli_summary_inputs(struct rec_summary *s, const rec_cli_input *in, size_t n,
			   uint32_t flags);


/* ---- output files of rec-cat, rec-scrub, rec-recover (outfile.c) ------------ */
/* OUT given on the command line.  A regular file (or a new name) is
 * replaced atomically: written to "OUT.tmp.PID" next to it, fsync'd and
 * renamed over OUT at the end (through a symlink: over the file it names;
 * the symlink stays).  Anything else that exists (after following
 * symlinks) -- a device like /dev/null or /dev/full, a FIFO -- is opened
 * directly (O_WRONLY|O_TRUNC, no O_CREAT) and written, never replaced.
 * NULL or "-" is standard output.  Every failure is reported once, as
 * "TOOL: OUT: reason" (errno's text of the failing call). */
typedef struct rec_cli_outfile {
	const char *path;  /* NULL: standard output */
	char *tmp;         /* the temporary file; NULL when written directly */
	char *target;      /* what a symlink names (renamed over); NULL: path */
	int fd;
	int err;           /* errno of the first failure, 0 if none */
} rec_cli_outfile;

/* Open OUT; false after the message. */
bool rec_cli_outfile_open(rec_cli_outfile *of, const char *path);
/* Write all len bytes; false after the message (later writes do nothing). */
bool rec_cli_outfile_write(rec_cli_outfile *of, const void *buf, size_t len);
/* A writer sink onto the file (rec_writer_open, rec_reader_chunk_write):
 * its failures are reported like rec_cli_outfile_write's. */
rec_sink rec_cli_outfile_sink(rec_cli_outfile *of);
/* Whether a failure was reported already. */
bool rec_cli_outfile_failed(const rec_cli_outfile *of);
/* Finish: fsync, close and rename the temporary file (close only, when
 * written directly; nothing for standard output).  After an earlier
 * failure, or if one of these fails, the temporary file is removed and OUT
 * is left as it was.  Returns false if anything failed. */
bool rec_cli_outfile_commit(rec_cli_outfile *of);
/* Give up: close and remove the temporary file (OUT is left as it was;
 * bytes written directly into a device or FIFO stay written). */
void rec_cli_outfile_discard(rec_cli_outfile *of);

/* The exporters' output files (rec-flame -o, rec-lockgraph and rec-timeline
 * --output), in outfile.c: created or truncated (no temporary file).  NULL
 * path: returns dflt.  On failure "TOOL: PATH: reason" and NULL.  Writes
 * into the FILE never fail: the first failed write's errno is kept, later
 * bytes are dropped, and rec_cli_export_close reports it once as
 * "TOOL: PATH: write failed: reason" (false).  Nothing to close when
 * f == dflt. */
FILE *rec_cli_export_open(const char *path, FILE *dflt);
bool rec_cli_export_close(FILE *f, const char *path, FILE *dflt);
/* The same kind of FILE on standard output's descriptor, for output that
 * does not go through the fast buffer (rec-lockgraph's DOT, written by
 * Graphviz): pending output of stdout is flushed first (rec_cli_out_sync),
 * the first failed write's errno is kept, and rec_cli_export_close(f, NULL,
 * dflt) hands it to rec_cli_out_failed, so rec_cli_finish prints the one
 * line "TOOL: error writing standard output: reason".  Returns dflt
 * unchanged when dflt is not stdout (a harness's stream), NULL after a
 * message if the FILE cannot be made. */
FILE *rec_cli_export_stdout(FILE *dflt);


/* ---- programs to run (program.c) --------------------------------------------- */
/* The file execvp(3) would run for name: name itself when it has a '/',
 * else the first executable regular file of that name in a PATH directory.
 * A heap copy (free it), or NULL with *err an errno (ENOENT: none found,
 * EACCES: one found but not executable). */
char *rec_cli_program_find(const char *name, int *err);
/* What path is, for a tool that runs it with LD_PRELOAD (rec-record):
 * a dynamically linked ELF executable (PT_INTERP), a static one (no
 * dynamic loader: LD_PRELOAD cannot work), not ELF (a script: its
 * interpreter runs), set-uid or set-gid (the loader ignores LD_PRELOAD in
 * secure-execution mode), or unreadable (*err is errno). */
typedef enum {
	REC_PROGRAM_DYNAMIC,
	REC_PROGRAM_STATIC,
	REC_PROGRAM_NOT_ELF,
	REC_PROGRAM_SETUID,
	REC_PROGRAM_SETGID,
	REC_PROGRAM_UNREADABLE
} rec_cli_program_kind;
rec_cli_program_kind rec_cli_program_check(const char *path, int *err);


/* ---- event-type selections ---------------------------------------------------
 * Every option that names event types (rec-print --events and --categories,
 * rec-flame --event, rec-scrub --include-events and --exclude-events) goes
 * through one of these, so that a name no type of the input has is the same
 * usage error everywhere: "TOOL: no event type matches 'X'; the input has:
 * a, b, c" (or "no event category matches"), exit 2.  A type counts when a
 * chunk's metadata declares it, with or without events.  An input without
 * any type (no readable chunk) has nothing to match: not a usage error.
 *
 *   rec_cli_typesel sel;
 *   rec_cli_typesel_init(&sel, patterns, n, 0);
 *   (void)rec_cli_typesel_scan(&sel, in);   // rereadable inputs: before output
 *   ... rec_cli_typesel_chunk(&sel, c) for the chunks read ...
 *   if (rec_cli_typesel_check(&sel) != REC_EXIT_OK) ...  // usage error, reported
 *   rec_cli_typesel_free(&sel);
 */
#define REC_CLI_TYPESEL_CATEGORY 0x1u /* patterns match categories (or a '/'-prefix) */
#define REC_CLI_TYPESEL_EXACT 0x2u    /* names match exactly (no glob) */
typedef struct rec_cli_typesel {
	const char *const *patterns;
	size_t count;
	uint32_t flags;      /* REC_CLI_TYPESEL_* */
	bool *hit;           /* parallel to patterns */
	char **seen;         /* the input's names (categories), for the message */
	size_t nseen, capseen;
} rec_cli_typesel;
void rec_cli_typesel_init(rec_cli_typesel *s, const char *const *patterns, size_t count,
			  uint32_t flags);
void rec_cli_typesel_free(rec_cli_typesel *s);
/* An exact name, or a glob with * ? [..] (fnmatch). */
bool rec_cli_name_matches(const char *pattern, const char *name);
/* As rec_cli_name_matches, or a '/'-prefix of cat matches ("rec" matches
 * "rec/Locks"). */
bool rec_cli_category_matches(const char *pattern, const char *cat);
/* Whether t matches one of the patterns; marks every pattern it matches and
 * notes its name (category) for the message. */
bool rec_cli_typesel_type(rec_cli_typesel *s, const rec_type *t);
/* rec_cli_typesel_type() on every type of c's metadata. */
void rec_cli_typesel_chunk(rec_cli_typesel *s, const rec_chunk_info *c);
/* The same for each readable chunk of a rereadable input (a second reader,
 * no message).  false if the input cannot be read twice: then note the
 * chunks while reading (rec_cli_typesel_chunk) and check at the end. */
bool rec_cli_typesel_scan(rec_cli_typesel *s, const rec_cli_input *in);
/* REC_EXIT_OK, or REC_EXIT_USAGE with the message for the first pattern that
 * matched nothing (through rec_cli_usage_fail). */
int rec_cli_typesel_check(const rec_cli_typesel *s);

#endif /* REC_TOOLS_CLI_H */
