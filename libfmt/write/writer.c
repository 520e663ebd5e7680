/* SPDX-License-Identifier: MIT */
/*
 * writer.c - the rec_writer handle: options, sinks (callback, fd, path),
 * open/close/abandon/flush, error reporting, statistics and event types
 * (the METADATA section).  See writer_internal.h for the file map.
 *
 * Error model: argument errors (REC_ERR_INVALID_ARG, REC_ERR_STATE, ...)
 * are returned and described by rec_writer_errmsg() but leave the writer
 * usable.  A failed sink write or flush is sticky: every later call returns
 * REC_ERR_IO and errmsg keeps the text of that failure.
 *
 * Behaviour worth knowing (beyond rec.h):
 *   - a builder error (wrong put, value out of range, too few/many fields)
 *     discards the partial event; a put without begin is REC_ERR_STATE;
 *   - a chunk that references an undefined pool id is not written: its
 *     records stay pending.  flush/close return REC_ERR_INVALID_ARG naming
 *     the pool and id; automatic chunks (end, append_records) keep the event
 *     and retry after the next define_*; close then loses those events;
 *   - flush writes a chunk when events or dropped counts are pending;
 *   - fd sinks: flush does not fdatasync (too slow per chunk); bytes are in
 *     the kernel once write() returned.  open_path failures return
 *     REC_ERR_IO without a message (there is no writer to hold it).
 *   - pending bytes are capped (REC_W_PENDING_CAP); past it, begin and
 *     append_records return REC_ERR_LIMIT.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "write/writer_internal.h"

/* ---- errors ----------------------------------------------------------------- */

rec_status rec_w_fail(rec_writer *w, rec_status st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->errmsg, sizeof(w->errmsg), fmt, ap);
	va_end(ap);
	return st;
}

/* strerror_r in either flavour, into buf. */
static const char *err_text(int err, char *buf, size_t size)
{
#if defined(_GNU_SOURCE)
	return strerror_r(err, buf, size);
#else
	if (strerror_r(err, buf, size) != 0)
		snprintf(buf, size, "error %d", err);
	return buf;
#endif
}

/* Record a failed sink operation (rc: 0 or a negative errno) as sticky. */
static rec_status io_fail(rec_writer *w, const char *what, int rc)
{
	char tmp[128];

	if (rc < 0)
		rec_w_fail(w, REC_ERR_IO, "%s: %s", what, err_text(-rc, tmp, sizeof(tmp)));
	else
		rec_w_fail(w, REC_ERR_IO, "%s: sink returned %d", what, rc);
	w->sticky = REC_ERR_IO;
	return REC_ERR_IO;
}

rec_status rec_w_sink_write(rec_writer *w, const void *buf, size_t len)
{
	int rc;

	if (w->sticky)
		return w->sticky;
	rc = w->sink.write(w->sink.opaque, buf, len);
	if (rc != 0)
		return io_fail(w, "write", rc);
	return REC_OK;
}

const char *rec_writer_errmsg(const rec_writer *w)
{
	if (!w)
		return "no writer";
	return w->errmsg;
}

void rec_writer_get_stats(const rec_writer *w, rec_writer_stats *st)
{
	if (!st)
		return;
	if (!w) {
		memset(st, 0, sizeof(*st));
		return;
	}
	*st = w->stats;
}

/* ---- fd sink ------------------------------------------------------------------ */

/* write() everything, retrying on EINTR and short writes. */
static int fd_sink_write(void *opaque, const void *buf, size_t len)
{
	const rec_writer *w = opaque;
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = write(w->fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---- options ------------------------------------------------------------------ */

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t random_run_id(void)
{
	uint64_t v = 0;
	uint8_t *p = (uint8_t *)&v;
	size_t got = 0;

	while (got < sizeof(v)) {
		ssize_t n = getrandom(p + got, sizeof(v) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		got += (size_t)n;
	}
	if (got < sizeof(v)) {
		/* No getrandom (old kernel, seccomp): mix what is at hand. */
		v ^= (uint64_t)clock_ns(CLOCK_REALTIME) * 0x9E3779B97F4A7C15ull;
		v ^= (uint64_t)clock_ns(CLOCK_MONOTONIC) << 17;
		v ^= (uint64_t)getpid() << 40;
		v ^= (uint64_t)(uintptr_t)&v;
	}
	return v ? v : 1;
}

static rec_status apply_options(rec_writer *w, const rec_writer_options *user)
{
	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	const size_t min_size = offsetof(rec_writer_options, reserved);

	if (user) {
		size_t n = user->struct_size;
		if (n < min_size)
			return rec_w_fail(w, REC_ERR_INVALID_ARG,
					  "options: struct_size %u is smaller than %zu",
					  user->struct_size, min_size);
		if (n > sizeof(o)) {
			/* A newer caller: its extra fields must be zero. */
			const uint8_t *extra = (const uint8_t *)user + sizeof(o);
			if (n > 4096)
				return rec_w_fail(w, REC_ERR_INVALID_ARG,
						  "options: struct_size %zu is not plausible", n);
			for (size_t i = 0; i < n - sizeof(o); i++)
				if (extra[i])
					return rec_w_fail(w, REC_ERR_INVALID_ARG,
							  "options: unknown field at byte %zu is not zero",
							  sizeof(o) + i);
			n = sizeof(o);
		}
		memcpy(&o, user, n);
		if (n < sizeof(o))
			memset((uint8_t *)&o + n, 0, sizeof(o) - n);
	}
	if (o.events_layout > REC_EVENTS_SPLIT)
		return rec_w_fail(w, REC_ERR_INVALID_ARG, "options: events_layout %u is not a layout",
				  o.events_layout);
	for (size_t i = 0; i < sizeof(o.reserved) / sizeof(o.reserved[0]); i++)
		if (o.reserved[i])
			return rec_w_fail(w, REC_ERR_INVALID_ARG,
					  "options: reserved[%zu] must be zero", i);
	if (o.codec > REC_CODEC_LZ4)
		return rec_w_fail(w, REC_ERR_UNSUPPORTED, "options: unknown codec %u", o.codec);
	if (o.level < -128 || o.level > 127)
		return rec_w_fail(w, REC_ERR_INVALID_ARG,
				  "options: codec level %d out of range -128..127", (int)o.level);
	if (o.tick_frequency == 0)
		o.tick_frequency = 1000000000u;
	if (o.anchor_wall_ns == 0 && o.anchor_ticks == 0) {
		if (o.tick_frequency != 1000000000u)
			return rec_w_fail(w, REC_ERR_INVALID_ARG,
					  "options: tick_frequency %llu needs an explicit anchor "
					  "(anchor_wall_ns/anchor_ticks)",
					  (unsigned long long)o.tick_frequency);
		o.anchor_wall_ns = clock_ns(CLOCK_REALTIME);
		o.anchor_ticks = (uint64_t)clock_ns(CLOCK_MONOTONIC);
	}

	w->codec = o.codec;
	w->level = o.level;
	w->split = o.codec != REC_CODEC_NONE && o.events_layout != REC_EVENTS_ONE_STREAM;
	if (o.codec == REC_CODEC_ZSTD && o.level == 0)
		w->header_level = 1; /* the zstd level the codec default tunes (codec.c) */
	else if (o.codec == REC_CODEC_NONE)
		w->header_level = 0;
	else
		w->header_level = (int8_t)o.level;
	w->chunk_size = o.chunk_events_size ? o.chunk_events_size : REC_W_DEFAULT_CHUNK;
	if (w->chunk_size > REC_W_MAX_CHUNK)
		w->chunk_size = REC_W_MAX_CHUNK;
	w->run_id = o.run_id ? o.run_id : random_run_id();
	w->pid = o.pid ? o.pid : (uint32_t)getpid();
	w->process_start_ns = o.process_start_ns ? o.process_start_ns : clock_ns(CLOCK_REALTIME);
	w->tick_frequency = o.tick_frequency;
	w->anchor_wall_ns = o.anchor_wall_ns;
	w->anchor_ticks = o.anchor_ticks;
	return REC_OK;
}

void rec_writer_set_tick_frequency(rec_writer *w, uint64_t f)
{
	if (w && f)
		w->tick_frequency = f;
}

void rec_writer_set_check_refs(rec_writer *w, int on)
{
	if (w)
		w->check_refs = on != 0;
}

/* ---- open / close ----------------------------------------------------------- */

static void writer_free(rec_writer *w)
{
	for (size_t i = 0; i < w->ntypes; i++) {
		free(w->types[i]->fields);
		free(w->types[i]->name);
		free(w->types[i]);
	}
	free(w->types);
	free(w->types_by_id);
	free(w->type_map);
	rec_buf_free(&w->meta);
	rec_buf_free(&w->meta_raw);
	rec_buf_free(&w->meta_stored);
	rec_w_pools_free(w);
	rec_buf_free(&w->pending);
	rec_buf_free(&w->events);
	rec_buf_free(&w->c_first);
	rec_buf_free(&w->zout);
	rec_buf_free(&w->scratch);
	rec_buf_free(&w->out);
	rec_codec_ctx_free(w->cctx);
	rec_w_split_free(w);
	free(w);
}

/* Allocate a writer with options applied; the sink is set by the caller. */
static rec_status writer_new(rec_writer **out, const rec_writer_options *opts)
{
	rec_writer *w;
	rec_status st;

	w = calloc(1, sizeof(*w));
	if (!w)
		return REC_ERR_NOMEM;
	w->fd = -1;
	st = apply_options(w, opts);
	if (st != REC_OK) {
		free(w);
		return st;
	}
	rec_w_pools_init(w);
	w->cctx = rec_codec_ctx_new();
	if (!w->cctx) {
		writer_free(w);
		return REC_ERR_NOMEM;
	}
	*out = w;
	return REC_OK;
}

rec_status rec_writer_open(rec_writer **out, const rec_sink *sink, const rec_writer_options *opts)
{
	rec_writer *w;
	rec_status st;

	if (!out)
		return REC_ERR_INVALID_ARG;
	*out = NULL;
	if (!sink || !sink->write)
		return REC_ERR_INVALID_ARG;
	st = writer_new(&w, opts);
	if (st != REC_OK)
		return st;
	w->sink = *sink;
	*out = w;
	return REC_OK;
}

/* The fd sink's flush does nothing: fdatasync per chunk costs milliseconds.
 * The bytes are in the kernel once write() returned, so they survive a crash
 * of the process (not of the machine). */
rec_status rec_writer_open_fd(rec_writer **out, int fd, const rec_writer_options *opts)
{
	rec_writer *w;
	rec_status st;

	if (!out)
		return REC_ERR_INVALID_ARG;
	*out = NULL;
	if (fd < 0)
		return REC_ERR_INVALID_ARG;
	st = writer_new(&w, opts);
	if (st != REC_OK)
		return st;
	w->fd = fd;
	w->sink.write = fd_sink_write;
	w->sink.flush = NULL;
	w->sink.opaque = w;
	*out = w;
	return REC_OK;
}

rec_status rec_writer_open_path(rec_writer **out, const char *path, const rec_writer_options *opts)
{
	rec_status st;
	int fd;

	if (!out)
		return REC_ERR_INVALID_ARG;
	*out = NULL;
	if (!path)
		return REC_ERR_INVALID_ARG;
	/* Validate the options before creating or truncating the file. */
	{
		rec_writer probe;
		memset(&probe, 0, sizeof(probe));
		st = apply_options(&probe, opts);
		if (st != REC_OK)
			return st;
	}
	do
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return REC_ERR_IO;
	st = rec_writer_open_fd(out, fd, opts);
	if (st != REC_OK) {
		close(fd);
		return st;
	}
	(*out)->own_fd = 1;
	return REC_OK;
}

/* Discard a record left open by the builder. */
static void drop_open_record(rec_writer *w)
{
	if (w->cur) {
		w->pending.len = w->cur_start;
		w->cur = NULL;
	}
}

rec_status rec_writer_close(rec_writer *w)
{
	rec_status st;

	if (!w)
		return REC_OK;
	drop_open_record(w);
	st = w->sticky;
	if (st == REC_OK)
		st = rec_w_build_chunks(w, 1, 1);
	if (w->own_fd && w->fd >= 0) {
		if (close(w->fd) != 0 && st == REC_OK) {
			char tmp[128];
			rec_w_fail(w, REC_ERR_IO, "close: %s", err_text(errno, tmp, sizeof(tmp)));
			st = REC_ERR_IO;
		}
	}
	writer_free(w);
	return st;
}

void rec_writer_abandon(rec_writer *w)
{
	if (!w)
		return;
	if (w->own_fd && w->fd >= 0)
		close(w->fd);
	writer_free(w);
}

rec_status rec_writer_flush(rec_writer *w)
{
	rec_status st;

	if (!w)
		return REC_ERR_INVALID_ARG;
	if (w->sticky)
		return w->sticky;
	if (w->cur)
		return rec_w_fail(w, REC_ERR_STATE, "flush: an event is being built (call end first)");
	if (w->pending.len == 0 && w->dropped_pending == 0 && w->c_count == 0) {
		rec_w_retire_now(w);
		return REC_OK; /* nothing to write, no sink flush either */
	}
	st = rec_w_build_chunks(w, 1, 0);
	if (st != REC_OK)
		return st;
	rec_w_retire_now(w); /* every record appended so far is in a chunk */
	if (w->sink.flush) {
		int rc = w->sink.flush(w->sink.opaque);
		if (rc != 0)
			return io_fail(w, "flush", rc);
	}
	return REC_OK;
}

void rec_writer_note_dropped(rec_writer *w, uint64_t n)
{
	if (!w)
		return;
	w->dropped_pending = w->dropped_pending + n < n ? UINT64_MAX : w->dropped_pending + n;
	w->stats.dropped = w->stats.dropped + n < n ? UINT64_MAX : w->stats.dropped + n;
}

/* ---- event types ------------------------------------------------------------ */

rec_wtype *rec_w_type_find_slow(const rec_writer *w, uint32_t id)
{
	size_t i, mask;

	if (!w->type_map_cap)
		return NULL;
	mask = w->type_map_cap - 1;
	for (i = rec_w_hash_slot(id, w->type_map_cap);; i = (i + 1) & mask) {
		rec_wtype *t = w->type_map[i];
		if (!t)
			return NULL;
		if (t->id == id)
			return t;
	}
}

static void type_map_put(rec_wtype **map, size_t cap, rec_wtype *t)
{
	size_t i = rec_w_hash_slot(t->id, cap);

	while (map[i])
		i = (i + 1) & (cap - 1);
	map[i] = t;
}

/* Make room for one more type in the arrays and the map. */
static bool types_grow(rec_writer *w)
{
	if (w->ntypes == w->types_cap) {
		size_t cap = w->types_cap ? w->types_cap * 2 : 16;
		rec_wtype **a = realloc(w->types, cap * sizeof(rec_wtype *));
		if (!a)
			return false;
		w->types = a;
		a = realloc(w->types_by_id, cap * sizeof(rec_wtype *));
		if (!a)
			return false;
		w->types_by_id = a;
		w->types_cap = cap;
	}
	if ((w->ntypes + 1) * 2 > w->type_map_cap) {
		size_t cap = w->type_map_cap ? w->type_map_cap * 2 : 32;
		rec_wtype **map = calloc(cap, sizeof(rec_wtype *));
		if (!map)
			return false;
		for (size_t i = 0; i < w->ntypes; i++)
			type_map_put(map, cap, w->types[i]);
		free(w->type_map);
		w->type_map = map;
		w->type_map_cap = cap;
	}
	return true;
}

/* Fill f from a field type code; false if the code is not a known type. */
static bool field_class(uint32_t type, rec_wfield *f)
{
	memset(f, 0, sizeof(*f));
	f->type = type;
	f->wire = (uint8_t)REC_WIRE_OF(type);
	f->umax = UINT64_MAX;
	switch (type) {
	case REC_TYPE_BOOL: f->umax = 1; break;
	case REC_TYPE_U8: f->umax = UINT8_MAX; break;
	case REC_TYPE_U16: f->umax = UINT16_MAX; break;
	case REC_TYPE_U32: f->umax = UINT32_MAX; break;
	case REC_TYPE_U64:
	case REC_TYPE_TIMESTAMP:
	case REC_TYPE_DURATION: break;
	case REC_TYPE_STRING: f->ref = REC_W_REF_STRING; break;
	case REC_TYPE_THREAD: f->ref = REC_W_REF_THREAD; break;
	case REC_TYPE_STACK: f->ref = REC_W_REF_STACK; break;
	case REC_TYPE_I8: f->smin = INT8_MIN; f->smax = INT8_MAX; break;
	case REC_TYPE_I16: f->smin = INT16_MIN; f->smax = INT16_MAX; break;
	case REC_TYPE_I32: f->smin = INT32_MIN; f->smax = INT32_MAX; break;
	case REC_TYPE_I64: f->smin = INT64_MIN; f->smax = INT64_MAX; break;
	case REC_TYPE_F32: f->is_f32 = 1; break;
	case REC_TYPE_F64:
	case REC_TYPE_BLOB:
	case REC_TYPE_TEXT: break;
	default: return false;
	}
	/* The signed ranges are two's complement (-2^(k-1) .. 2^(k-1)-1), whose
	 * zigzag values are exactly 0 .. 2^k-1: one unsigned compare. */
	f->vmax = f->wire == REC_WIRE_SVARINT ? (uint64_t)f->smax * 2u + 1u : f->umax;
	return true;
}

static const char *nz(const char *s) { return s ? s : ""; }

static bool meta_str(rec_buf *b, const char *s) { return rec_buf_lenbytes(b, s, strlen(s)); }

rec_status rec_writer_add_type(rec_writer *w, const rec_type *type)
{
	rec_wtype *t;
	size_t meta_len, fixed;
	uint32_t scan = 0;

	if (!w)
		return REC_ERR_INVALID_ARG;
	if (w->sticky)
		return w->sticky;
	if (!type)
		return rec_w_fail(w, REC_ERR_INVALID_ARG, "add_type: type is NULL");
	if (type->id == 0)
		return rec_w_fail(w, REC_ERR_INVALID_ARG, "add_type: type id 0 (ids are >= 1)");
	if (!type->name || !type->name[0])
		return rec_w_fail(w, REC_ERR_INVALID_ARG, "add_type: type %u has no name", type->id);
	if (type->flags & ~(uint32_t)(REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK))
		return rec_w_fail(w, REC_ERR_INVALID_ARG, "add_type: type %s: unknown flags 0x%x",
				  type->name, type->flags);
	if (type->field_count > REC_MAX_FIELDS)
		return rec_w_fail(w, REC_ERR_INVALID_ARG, "add_type: type %s has %u fields (max %u)",
				  type->name, type->field_count, REC_MAX_FIELDS);
	if (type->field_count && !type->fields)
		return rec_w_fail(w, REC_ERR_INVALID_ARG, "add_type: type %s: fields is NULL",
				  type->name);
	if (rec_w_type_find_slow(w, type->id))
		return rec_w_fail(w, REC_ERR_INVALID_ARG, "add_type: type id %u is already declared",
				  type->id);
	for (size_t i = 0; i < w->ntypes; i++)
		if (strcmp(w->types[i]->name, type->name) == 0)
			return rec_w_fail(w, REC_ERR_INVALID_ARG,
					  "add_type: type name %s is already declared (id %u)",
					  type->name, w->types[i]->id);
	for (uint32_t i = 0; i < type->field_count; i++) {
		const rec_field *f = &type->fields[i];
		rec_wfield tmp;
		if (!f->name || !f->name[0])
			return rec_w_fail(w, REC_ERR_INVALID_ARG, "add_type: %s: field %u has no name",
					  type->name, i);
		if (!field_class(f->type, &tmp))
			return rec_w_fail(w, REC_ERR_INVALID_ARG,
					  "add_type: %s.%s: unknown field type 0x%x", type->name,
					  f->name, f->type);
		for (uint32_t j = 0; j < i; j++)
			if (strcmp(type->fields[j].name, f->name) == 0)
				return rec_w_fail(w, REC_ERR_INVALID_ARG,
						  "add_type: %s: field name %s appears twice",
						  type->name, f->name);
	}

	t = calloc(1, sizeof(*t));
	if (!t)
		return rec_w_fail(w, REC_ERR_NOMEM, "add_type: out of memory");
	t->name = strdup(type->name);
	t->fields = calloc(type->field_count ? type->field_count : 1, sizeof(*t->fields));
	if (!t->name || !t->fields || !types_grow(w)) {
		free(t->name);
		free(t->fields);
		free(t);
		return rec_w_fail(w, REC_ERR_NOMEM, "add_type: out of memory");
	}
	t->id = type->id;
	t->flags = type->flags;
	t->nfields = type->field_count;
	/* Size byte(s) + Type_Id + Ticks + three header fields, then fields. */
	fixed = 5 + 3 * REC_VARINT_MAX + 3 * REC_VARINT_MAX;
	for (uint32_t i = 0; i < type->field_count; i++) {
		field_class(type->fields[i].type, &t->fields[i]);
		if (t->fields[i].ref)
			scan = i + 1;
		fixed += REC_VARINT_MAX;
	}
	t->scan_fields = scan;
	t->fixed_max = fixed;

	/* METADATA entry (spec "METADATA"). */
	meta_len = w->meta.len;
	bool ok = rec_buf_varint(&w->meta, t->id) && rec_buf_varint(&w->meta, t->flags) &&
		  meta_str(&w->meta, t->name) && meta_str(&w->meta, nz(type->label)) &&
		  meta_str(&w->meta, nz(type->description)) &&
		  meta_str(&w->meta, nz(type->category)) &&
		  rec_buf_varint(&w->meta, t->nfields);
	for (uint32_t i = 0; ok && i < type->field_count; i++) {
		const rec_field *f = &type->fields[i];
		ok = meta_str(&w->meta, f->name) && meta_str(&w->meta, nz(f->label)) &&
		     rec_buf_varint(&w->meta, f->type) && rec_buf_varint(&w->meta, f->unit) &&
		     meta_str(&w->meta, nz(f->description));
	}
	if (!ok) {
		w->meta.len = meta_len;
		free(t->name);
		free(t->fields);
		free(t);
		return rec_w_fail(w, REC_ERR_NOMEM, "add_type: out of memory");
	}

	w->types[w->ntypes] = t;
	{
		/* insertion into the id-sorted array */
		size_t i = w->ntypes;
		while (i > 0 && w->types_by_id[i - 1]->id > t->id) {
			w->types_by_id[i] = w->types_by_id[i - 1];
			i--;
		}
		w->types_by_id[i] = t;
	}
	w->ntypes++;
	type_map_put(w->type_map, w->type_map_cap, t);
	w->build_blocked = 0;
	return REC_OK;
}
