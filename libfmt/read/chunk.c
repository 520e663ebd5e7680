/* SPDX-License-Identifier: MIT */
/*
 * chunk.c - the reader handle, chunk scanning and recovery, the section
 * table, METADATA and STATS decoding, payload loading and checksums.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read/read_internal.h"

/* ---- problems ---------------------------------------------------------------- */
rec_status rec_rd_problem(rec_reader *r, rec_status st, uint64_t off, int64_t chunk,
			  const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->problem.status = st;
	r->problem.offset = off;
	r->problem.chunk = chunk;
	r->problem.message = r->msg;
	return st;
}

rec_status rec_rd_chunk_problem(rec_reader *r, rec_rchunk *c, rec_status st, uint64_t off,
				const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->problem.status = st;
	r->problem.offset = off;
	r->problem.chunk = (int64_t)c->info.index;
	r->problem.message = r->msg;
	if (!c->damaged)
		r->stats.chunks_damaged++;
	c->damaged = true;
	c->done = true;
	c->dead = true;
	return st;
}

const char *rec_rd_kind_name(unsigned kind)
{
	static const char *const names[] = { "?", "METADATA", "STATS", "STRINGS", "THREADS",
					     "MODULES", "FRAMES", "STACKS", "EVENTS" };
	return kind < REC_NKINDS && kind ? names[kind] : "unknown";
}

/* ---- time --------------------------------------------------------------------- */
int64_t rec_rd_ticks_ns(int64_t ticks, uint64_t freq)
{
	return rec_ticks_to_ns_internal(ticks, freq);
}

REC_API int64_t rec_chunk_wall_ns(const rec_chunk_info *c, uint64_t ticks)
{
	if (!c)
		return 0;
	return rec_rd_wall(c, ticks);
}

/* ---- open / close --------------------------------------------------------------- */
static rec_status reader_new(rec_reader **out, const char *name, const rec_reader_options *opts)
{
	if (opts) {
		if (opts->struct_size < sizeof(rec_reader_options))
			return REC_ERR_INVALID_ARG;
		for (size_t i = 0; i < sizeof(opts->reserved) / sizeof(opts->reserved[0]); i++)
			if (opts->reserved[i])
				return REC_ERR_INVALID_ARG;
		if (opts->flags & ~(uint32_t)(REC_READ_ORDERED | REC_READ_VERIFY))
			return REC_ERR_INVALID_ARG;
	}
	rec_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return REC_ERR_NOMEM;
	r->src.fd = -1;
	r->name = strdup(name ? name : "(memory)");
	r->codec = rec_codec_ctx_new();
	if (!r->name || !r->codec) {
		free(r->name);
		rec_codec_ctx_free(r->codec);
		free(r);
		return REC_ERR_NOMEM;
	}
	r->flags = opts ? opts->flags : 0;
	r->max_payload = opts && opts->max_payload_size ? opts->max_payload_size : (uint64_t)REC_MAX_PAYLOAD_SIZE;
	r->max_section_raw = opts && opts->max_section_raw ? opts->max_section_raw : (uint64_t)REC_MAX_SECTION_RAW;
	r->max_window = opts && opts->max_order_window ? opts->max_order_window : 512ull * 1024 * 1024;
	r->problem.chunk = -1;
	r->problem.message = "";
	*out = r;
	return REC_OK;
}

REC_API rec_status rec_reader_open_path(rec_reader **out, const char *path,
					const rec_reader_options *opts)
{
	if (!out || !path)
		return REC_ERR_INVALID_ARG;
	*out = NULL;
	rec_reader *r;
	rec_status st = reader_new(&r, path, opts);
	if (st != REC_OK)
		return st;
	int fd;
	bool own = true;
	if (strcmp(path, "-") == 0) {
		fd = STDIN_FILENO;
		own = false;
	} else {
		do
			fd = open(path, O_RDONLY | O_CLOEXEC);
		while (fd < 0 && errno == EINTR);
		if (fd < 0) {
			int e = errno;
			rec_reader_close(r);
			errno = e;
			return REC_ERR_IO;
		}
	}
	st = rec_src_open_fd(&r->src, fd, own);
	if (st != REC_OK) {
		int e = r->src.err;
		rec_reader_close(r);
		if (e)
			errno = e;
		return st;
	}
	r->stats.file_size = r->src.size_known ? r->src.size : 0;
	*out = r;
	return REC_OK;
}

REC_API rec_status rec_reader_open_mem(rec_reader **out, const void *buf, size_t len,
				       const char *name, const rec_reader_options *opts)
{
	if (!out || (!buf && len))
		return REC_ERR_INVALID_ARG;
	*out = NULL;
	rec_reader *r;
	rec_status st = reader_new(&r, name, opts);
	if (st != REC_OK)
		return st;
	rec_src_open_mem(&r->src, buf, len);
	r->stats.file_size = len;
	*out = r;
	return REC_OK;
}

void rec_rd_chunk_destroy(rec_rchunk *c)
{
	if (!c)
		return;
	free(c->secs);
	rec_buf_free(&c->payload_buf);
	for (int k = 0; k < REC_NKINDS; k++)
		rec_bigbuf_free(&c->raw[k]);
	rec_buf_free(&c->tmp);
	rec_buf_free(&c->front_buf[0]);
	rec_buf_free(&c->front_buf[1]);
	rec_arena_free(&c->arena);
	rec_bigbuf_free(&c->oents);
	free(c);
}

REC_API void rec_reader_close(rec_reader *r)
{
	if (!r)
		return;
	rec_rd_order_free(r);
	rec_rd_chunk_destroy(r->cur);
	while (r->free_chunks) {
		rec_rchunk *n = r->free_chunks->next_free;
		rec_rd_chunk_destroy(r->free_chunks);
		r->free_chunks = n;
	}
	rec_src_close(&r->src);
	rec_codec_ctx_free(r->codec);
	rec_buf_free(&r->scratch);
	free(r->values);
	free(r->name);
	free(r);
}

REC_API const rec_problem *rec_reader_problem(const rec_reader *r)
{
	return r ? &r->problem : NULL;
}

REC_API void rec_reader_get_stats(const rec_reader *r, rec_reader_stats *st)
{
	if (!st)
		return;
	if (!r) {
		memset(st, 0, sizeof(*st));
		return;
	}
	*st = r->stats;
}

/* ---- chunk objects (reused: their buffers keep their capacity) ------------------ */
rec_rchunk *rec_rd_chunk_get(rec_reader *r)
{
	rec_rchunk *c = r->free_chunks;
	if (c) {
		r->free_chunks = c->next_free;
		/* Keep the buffers, clear everything else. */
		rec_rsec *secs = c->secs;
		uint32_t secs_cap = c->secs_cap;
		rec_buf pb = c->payload_buf, tmp = c->tmp;
		rec_buf fb0 = c->front_buf[0], fb1 = c->front_buf[1];
		rec_bigbuf raw[REC_NKINDS], oents = c->oents;
		memcpy(raw, c->raw, sizeof(raw));
		rec_arena arena = c->arena;
		memset(c, 0, sizeof(*c));
		c->oents = oents;
		c->secs = secs;
		c->secs_cap = secs_cap;
		c->payload_buf = pb;
		c->payload_buf.len = 0;
		c->tmp = tmp;
		c->tmp.len = 0;
		c->front_buf[0] = fb0;
		c->front_buf[1] = fb1;
		memcpy(c->raw, raw, sizeof(raw));
		c->arena = arena;
		rec_arena_reset(&c->arena);
	} else {
		c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
	}
	for (int k = 0; k < REC_NKINDS; k++)
		c->known[k] = -1;
	return c;
}

void rec_rd_chunk_put(rec_reader *r, rec_rchunk *c)
{
	if (!c)
		return;
	/* Keep at most a few spare chunks; free very large payload buffers. */
	unsigned n = 0;
	for (rec_rchunk *f = r->free_chunks; f; f = f->next_free)
		n++;
	if (n >= 4) {
		rec_rd_chunk_destroy(c);
		return;
	}
	c->next_free = r->free_chunks;
	r->free_chunks = c;
}

/* ---- header scanning ----------------------------------------------------------------- */
static bool header_crc_ok(const uint8_t *b, uint32_t hs)
{
	static const uint8_t zero[4];
	uint32_t c = rec_crc32c(0, b, REC_HOFF_HEADER_CRC);
	c = rec_crc32c(c, zero, 4);
	c = rec_crc32c(c, b + REC_HOFF_PAYLOAD_CRC, hs - REC_HOFF_PAYLOAD_CRC);
	return c == rec_le32(b + REC_HOFF_HEADER_CRC);
}

/* Is there a complete chunk header with a good checksum at c? */
static bool good_header_at(rec_reader *r, uint64_t c)
{
	const uint8_t *p;
	size_t got;
	if (rec_src_peek(&r->src, c, REC_PREFIX_SIZE, &p, &got) != REC_OK || got < REC_PREFIX_SIZE ||
	    memcmp(p, rec_magic, REC_MAGIC_LEN) != 0)
		return false;
	uint32_t hs = rec_le32(p + REC_HOFF_HEADER_SIZE);
	if (hs < REC_PREFIX_SIZE || hs > REC_MAX_HEADER_SIZE)
		return false;
	if (rec_src_peek(&r->src, c, hs, &p, &got) != REC_OK || got < hs)
		return false;
	return header_crc_ok(p, hs);
}

/* Find the next offset >= from where a chunk header with a good checksum
 * starts, or where a chunk that the input cuts short starts (magic seen, not
 * enough bytes left to check it), or the end of the input.  Linear: each
 * candidate costs at most one header checksum. */
static rec_status scan_for_header(rec_reader *r, uint64_t from, uint64_t *found)
{
	uint64_t off = from;
	/* A magic whose header runs past the end of the input is a cut-off chunk
	 * only if no good header follows it: remember the first such place and
	 * keep looking (a damaged header near the end must not hide a good chunk
	 * after it). */
	uint64_t tail = UINT64_MAX;
	for (;;) {
		const uint8_t *p;
		size_t got;
		rec_status st = rec_src_peek(&r->src, off, (size_t)64 * 1024, &p, &got);
		if (st != REC_OK)
			return st;
		if (got == 0) {
			*found = tail != UINT64_MAX ? tail : off;
			return REC_OK;
		}
		const uint8_t *q = memchr(p, rec_magic[0], got);
		if (!q) {
			off += got;
			continue;
		}
		uint64_t c = off + (uint64_t)(q - p);
		st = rec_src_peek(&r->src, c, REC_PREFIX_SIZE, &p, &got);
		if (st != REC_OK)
			return st;
		size_t m = got < REC_MAGIC_LEN ? got : REC_MAGIC_LEN;
		if (memcmp(p, rec_magic, m) != 0) {
			off = c + 1;
			continue;
		}
		if (got < REC_PREFIX_SIZE) { /* a cut-off chunk at the end */
			*found = tail != UINT64_MAX ? tail : c;
			return REC_OK;
		}
		uint32_t hs = rec_le32(p + REC_HOFF_HEADER_SIZE);
		if (hs < REC_PREFIX_SIZE || hs > REC_MAX_HEADER_SIZE) {
			off = c + 1;
			continue;
		}
		st = rec_src_peek(&r->src, c, hs, &p, &got);
		if (st != REC_OK)
			return st;
		if (got < hs) {
			if (tail == UINT64_MAX)
				tail = c;
			off = c + 1;
			continue;
		}
		if (header_crc_ok(p, hs)) {
			*found = c;
			return REC_OK;
		}
		off = c + 1;
	}
}

static rec_status io_problem(rec_reader *r, uint64_t off, rec_status st)
{
	r->at_end = true;
	if (st == REC_ERR_IO)
		return rec_rd_problem(r, st, off, -1, "%s: read error at offset %llu: %s", r->name,
				      (unsigned long long)off, strerror(r->src.err));
	return rec_rd_problem(r, st, off, -1, "read failed at offset %llu: %s",
			      (unsigned long long)off, rec_strerror(st));
}

/* The input ends inside the chunk at off (whose index is idx). */
static rec_status truncated(rec_reader *r, uint64_t off, int64_t idx, uint64_t need, uint64_t have)
{
	r->at_end = true;
	r->stats.chunks_damaged++;
	r->stats.bytes_skipped += have;
	return rec_rd_problem(r, REC_ERR_TRUNCATED, off, idx,
			      "truncated: chunk at offset %llu needs %llu bytes, file ends after %llu",
			      (unsigned long long)off, (unsigned long long)need,
			      (unsigned long long)have);
}

/* A size for messages: "3 GiB", "256 MiB", "1.5 GiB", "900 bytes". */
static void fmt_size(char *b, size_t n, uint64_t v)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	if (v < 1024) {
		snprintf(b, n, "%llu bytes", (unsigned long long)v);
		return;
	}
	int u = 0;
	uint64_t scale = 1024;
	while (u < 5 && v / scale >= 1024) {
		scale *= 1024;
		u++;
	}
	if (v % scale == 0)
		snprintf(b, n, "%llu %s", (unsigned long long)(v / scale), units[u]);
	else
		snprintf(b, n, "%.1f %s", (double)v / (double)scale, units[u]);
}

/* ---- sections ----------------------------------------------------------------------- */
/* Stored bytes of section si, from the payload or read for this section. */
static rec_status section_stored(rec_reader *r, rec_rchunk *c, const rec_rsec *s,
				 const uint8_t **p)
{
	if (rec_section_in_front(s->kind) && c->front[s->kind == REC_SECTION_STATS]) {
		*p = c->front[s->kind == REC_SECTION_STATS];
		return REC_OK;
	}
	if (c->payload) {
		*p = c->payload + s->poff;
		return REC_OK;
	}
	uint64_t off = c->info.offset + c->info.header_size + s->poff;
	const uint8_t *m = rec_src_map(&r->src, off, s->stored);
	if (m) {
		*p = m;
		return REC_OK;
	}
	c->tmp.len = 0;
	if (!rec_buf_reserve(&c->tmp, s->stored ? s->stored : 1))
		return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, s->hoff, "out of memory");
	size_t got;
	rec_status st = rec_src_read(&r->src, off, s->stored, c->tmp.data, &got);
	if (st != REC_OK)
		return rec_rd_chunk_problem(r, c, st, off, "%s: read error at offset %llu",
					    r->name, (unsigned long long)off);
	if (got < s->stored)
		return rec_rd_chunk_problem(r, c, REC_ERR_TRUNCATED, off,
					    "truncated: section %u (%s) at offset %llu: file ends",
					    s->kind, rec_rd_kind_name(s->kind),
					    (unsigned long long)s->hoff);
	*p = c->tmp.data;
	return REC_OK;
}

rec_status rec_rd_section(rec_reader *r, rec_rchunk *c, uint32_t si, const uint8_t **p)
{
	const rec_rsec *s = &c->secs[si];
	const uint8_t *sp = NULL;
	*p = NULL; /* on every failure path too (callers read it only after REC_OK) */
	rec_status st = section_stored(r, c, s, &sp);
	if (st != REC_OK)
		return st;
	if (!(s->flags & REC_SECTION_COMPRESSED)) {
		*p = sp;
		return REC_OK;
	}
	rec_bigbuf *b = &c->raw[s->kind < REC_NKINDS ? s->kind : 0];
	if (!rec_bigbuf_reserve(b, s->raw))
		return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, s->hoff, "out of memory");
	st = rec_codec_decompress(r->codec, c->h.codec, sp, s->stored, b->data, s->raw);
	if (st != REC_OK)
		return rec_rd_chunk_problem(
			r, c, st == REC_ERR_NOMEM ? st : REC_ERR_CORRUPT, s->hoff,
			"section %u (%s) does not decompress: %s data does not decode to %u bytes",
			s->kind, rec_rd_kind_name(s->kind), rec_codec_name(c->h.codec), s->raw);
	*p = b->data;
	return REC_OK;
}

/* The stored bytes of a METADATA or STATS section, into c->front (format
 * 1.1: checked by Front_Checksum, then decoded from the same bytes).  Only
 * these are read: the EVENTS bytes stay on disk. */
static rec_status front_stored(rec_reader *r, rec_rchunk *c, const rec_rsec *s)
{
	int k = s->kind == REC_SECTION_STATS;
	uint64_t off = c->info.offset + c->info.header_size + s->poff;
	const uint8_t *m = c->payload ? c->payload + s->poff : rec_src_map(&r->src, off, s->stored);
	if (m) {
		c->front[k] = m;
		return REC_OK;
	}
	rec_buf *b = &c->front_buf[k];
	b->len = 0;
	if (!rec_buf_reserve(b, s->stored ? s->stored : 1))
		return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, s->hoff, "out of memory");
	size_t got;
	rec_status st = rec_src_read(&r->src, off, s->stored, b->data, &got);
	if (st != REC_OK)
		return rec_rd_chunk_problem(r, c, st, off, "%s: read error at offset %llu",
					    r->name, (unsigned long long)off);
	if (got < s->stored)
		return rec_rd_chunk_problem(r, c, REC_ERR_TRUNCATED, off,
					    "truncated: section %u (%s) at offset %llu: file ends",
					    s->kind, rec_rd_kind_name(s->kind),
					    (unsigned long long)s->hoff);
	b->len = s->stored;
	c->front[k] = b->data;
	return REC_OK;
}

static rec_status read_section_table(rec_reader *r, rec_rchunk *c)
{
	const bool front = rec_chunk_has_front_crc(&c->h);
	uint32_t fcrc = 0;
	uint64_t ps = c->h.payload_size;
	uint64_t at = 0; /* offset in payload */
	uint64_t pbase = c->info.offset + c->info.header_size;
	uint64_t raw_sum = 0;
	if (c->h.section_count > c->secs_cap) {
		rec_rsec *ns = realloc(c->secs, c->h.section_count * sizeof(*ns));
		if (!ns)
			return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, c->info.offset, "out of memory");
		c->secs = ns;
		c->secs_cap = c->h.section_count;
	}
	for (uint32_t i = 0; i < c->h.section_count; i++) {
		uint64_t hoff = pbase + at;
		if (ps - at < REC_SECTION_HEADER_SIZE)
			return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, hoff,
						    "section header %u at offset %llu crosses the end of the payload",
						    i, (unsigned long long)hoff);
		const uint8_t *p;
		if (c->payload) {
			p = c->payload + at;
		} else {
			size_t got;
			rec_status st = rec_src_peek(&r->src, hoff, REC_SECTION_HEADER_SIZE, &p, &got);
			if (st != REC_OK)
				return rec_rd_chunk_problem(r, c, st, hoff, "%s: read error at offset %llu",
							    r->name, (unsigned long long)hoff);
			if (got < REC_SECTION_HEADER_SIZE)
				return rec_rd_chunk_problem(r, c, REC_ERR_TRUNCATED, hoff,
							    "truncated: chunk at offset %llu: file ends in a section header",
							    (unsigned long long)c->info.offset);
		}
		rec_section_header sh;
		rec_section_header_decode(p, &sh);
		if (front)
			fcrc = rec_crc32c(fcrc, p, REC_SECTION_HEADER_SIZE);
		at += REC_SECTION_HEADER_SIZE;
		if (sh.stored_size > ps - at)
			return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, hoff,
						    "section %u (%s) at offset %llu: stored size %u crosses the end of the payload",
						    sh.kind, rec_rd_kind_name(sh.kind),
						    (unsigned long long)hoff, sh.stored_size);
		rec_rsec *s = &c->secs[c->nsec++];
		s->kind = sh.kind;
		s->flags = sh.flags;
		s->items = sh.item_count;
		s->stored = sh.stored_size;
		s->raw = sh.raw_size;
		s->hoff = hoff;
		s->poff = at;
		at += sh.stored_size;
		raw_sum += sh.raw_size;
		if (front && rec_section_in_front(sh.kind)) {
			rec_status st = front_stored(r, c, s);
			if (st != REC_OK)
				return st;
			fcrc = rec_crc32c(fcrc, c->front[sh.kind == REC_SECTION_STATS], sh.stored_size);
		}
		if (sh.kind == 0 || sh.kind >= REC_NKINDS) {
			c->info.unknown_sections++;
			r->stats.unknown_sections++;
			continue;
		}
		const char *kn = rec_rd_kind_name(sh.kind);
		if (c->known[sh.kind] >= 0)
			return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, hoff,
						    "section %u (%s) at offset %llu appears twice in the chunk",
						    sh.kind, kn, (unsigned long long)hoff);
		c->known[sh.kind] = (int)(c->nsec - 1);
		if ((sh.flags & REC_SECTION_COMPRESSED) && c->h.codec == REC_CODEC_NONE)
			return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, hoff,
						    "section %u (%s) is flagged compressed in a chunk without codec",
						    sh.kind, kn);
		if (!(sh.flags & REC_SECTION_COMPRESSED) && sh.stored_size != sh.raw_size)
			return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, hoff,
						    "section %u (%s) is stored raw but Stored_Size %u differs from Raw_Size %u",
						    sh.kind, kn, sh.stored_size, sh.raw_size);
		if (sh.raw_size > r->max_section_raw)
			return rec_rd_chunk_problem(r, c, REC_ERR_LIMIT, hoff,
						    "section %u (%s): Raw_Size %u exceeds the limit %llu",
						    sh.kind, kn, sh.raw_size,
						    (unsigned long long)r->max_section_raw);
		if (sh.item_count > sh.raw_size)
			return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, hoff,
						    "section %u (%s): Item_Count %u exceeds Raw_Size %u",
						    sh.kind, kn, sh.item_count, sh.raw_size);
	}
	(void)raw_sum;
	if (at != ps)
		return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, c->info.offset,
					    "sections cover %llu bytes but Payload_Size is %llu",
					    (unsigned long long)at, (unsigned long long)ps);
	if (front && fcrc != c->h.front_crc)
		return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, c->info.offset,
					    "front checksum mismatch (stored %08x, computed %08x)",
					    c->h.front_crc, fcrc);
	static const unsigned required[] = { REC_SECTION_METADATA, REC_SECTION_STATS,
					     REC_SECTION_EVENTS };
	for (size_t i = 0; i < 3; i++)
		if (c->known[required[i]] < 0)
			return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, c->info.offset,
						    "chunk at offset %llu has no %s section",
						    (unsigned long long)c->info.offset,
						    rec_rd_kind_name(required[i]));
	return REC_OK;
}

/* ---- METADATA ------------------------------------------------------------------------ */
typedef struct dec {
	const uint8_t *p, *end, *start;
	const char *what; /* set on failure */
	rec_status st;
} dec;

static bool d_u(dec *d, uint64_t *v, const char *what)
{
	if (rec_varint_get(&d->p, d->end, v))
		return true;
	d->what = what;
	d->st = REC_ERR_CORRUPT;
	return false;
}

static bool d_str(dec *d, rec_arena *a, const char **out, size_t *outlen, const char *what)
{
	uint64_t n;
	if (!d_u(d, &n, what))
		return false;
	if (n > REC_MAX_STRING) {
		d->what = what;
		d->st = REC_ERR_LIMIT;
		return false;
	}
	if (n > (uint64_t)(d->end - d->p)) {
		d->what = what;
		d->st = REC_ERR_CORRUPT;
		return false;
	}
	char *s = rec_arena_alloc(a, (size_t)n + 1);
	if (!s) {
		d->what = what;
		d->st = REC_ERR_NOMEM;
		return false;
	}
	memcpy(s, d->p, (size_t)n);
	s[n] = 0;
	d->p += n;
	*out = s;
	if (outlen)
		*outlen = (size_t)n;
	return true;
}

static uint8_t field_kind(uint32_t t)
{
	switch (t) {
	case REC_TYPE_BOOL: return REC_K_BOOL;
	case REC_TYPE_U8: return REC_K_U8;
	case REC_TYPE_U16: return REC_K_U16;
	case REC_TYPE_U32: return REC_K_U32;
	case REC_TYPE_U64: return REC_K_U64;
	case REC_TYPE_I8: return REC_K_I8;
	case REC_TYPE_I16: return REC_K_I16;
	case REC_TYPE_I32: return REC_K_I32;
	case REC_TYPE_I64: return REC_K_I64;
	case REC_TYPE_F32: return REC_K_F32;
	case REC_TYPE_F64: return REC_K_F64;
	case REC_TYPE_STRING: return REC_K_STRING;
	case REC_TYPE_TIMESTAMP: return REC_K_TIMESTAMP;
	case REC_TYPE_DURATION: return REC_K_DURATION;
	case REC_TYPE_THREAD: return REC_K_THREAD;
	case REC_TYPE_STACK: return REC_K_STACK;
	case REC_TYPE_BLOB: return REC_K_BLOB;
	case REC_TYPE_TEXT: return REC_K_TEXT;
	default: return (uint8_t)(REC_K_UNK0 + REC_WIRE_OF(t));
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static rec_status decode_metadata(rec_reader *r, rec_rchunk *c)
{
	const rec_rsec *s = &c->secs[c->known[REC_SECTION_METADATA]];
	const uint8_t *p;
	rec_status st = rec_rd_section(r, c, (uint32_t)c->known[REC_SECTION_METADATA], &p);
	if (st != REC_OK)
		return st;
	dec d = { p, p + s->raw, p, NULL, REC_OK };
	uint32_t n = s->items;
	/* Every type takes at least 7 bytes. */
	if ((uint64_t)n * 7 > s->raw)
		return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, s->hoff,
					    "section 1 (METADATA) declares %u types in %u bytes", n, s->raw);
	c->types = rec_arena_alloc(&c->arena, (size_t)n * sizeof(rec_type) + 1);
	c->kinds = rec_arena_alloc(&c->arena, (size_t)n * sizeof(uint8_t *) + 1);
	if (!c->types || !c->kinds)
		return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, s->hoff, "out of memory");
	uint64_t max_id = 0;
	uint32_t i;
	const char *bad = NULL;
	for (i = 0; i < n; i++) {
		rec_type *t = &c->types[i];
		uint64_t id, flags, fc;
		if (!d_u(&d, &id, "type id") || !d_u(&d, &flags, "type flags"))
			break;
		if (id == 0 || id > UINT32_MAX) {
			bad = "type id out of range";
			break;
		}
		t->id = (uint32_t)id;
		t->flags = (uint32_t)(flags & (REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD |
					       REC_EVENT_HAS_STACK));
		if (!d_str(&d, &c->arena, &t->name, NULL, "type name") ||
		    !d_str(&d, &c->arena, &t->label, NULL, "type label") ||
		    !d_str(&d, &c->arena, &t->description, NULL, "type description") ||
		    !d_str(&d, &c->arena, &t->category, NULL, "type category") ||
		    !d_u(&d, &fc, "field count"))
			break;
		if (fc > REC_MAX_FIELDS) {
			d.st = REC_ERR_LIMIT;
			d.what = "field count (limit 1024)";
			break;
		}
		if (fc * 5 > (uint64_t)(d.end - d.p)) {
			bad = "field count larger than the section";
			break;
		}
		rec_field *f = rec_arena_alloc(&c->arena, (size_t)fc * sizeof(rec_field) + 1);
		uint8_t *k = rec_arena_alloc(&c->arena, (size_t)fc + 1);
		if (!f || !k) {
			d.st = REC_ERR_NOMEM;
			d.what = "fields";
			break;
		}
		uint64_t j;
		for (j = 0; j < fc; j++) {
			uint64_t ft, unit;
			if (!d_str(&d, &c->arena, &f[j].name, NULL, "field name") ||
			    !d_str(&d, &c->arena, &f[j].label, NULL, "field label") ||
			    !d_u(&d, &ft, "field type") || !d_u(&d, &unit, "field unit") ||
			    !d_str(&d, &c->arena, &f[j].description, NULL, "field description"))
				break;
			if (ft > UINT32_MAX || unit > UINT32_MAX) {
				bad = "field type or unit out of range";
				break;
			}
			if (REC_WIRE_OF(ft) > REC_WIRE_LENGTH) {
				return rec_rd_chunk_problem(
					r, c, REC_ERR_UNSUPPORTED, s->hoff,
					"section 1 (METADATA): field '%s' of type %u (%s) uses reserved wire class %u",
					f[j].name, t->id, t->name, (unsigned)REC_WIRE_OF(ft));
			}
			f[j].type = (uint32_t)ft;
			f[j].unit = (uint32_t)unit;
			k[j] = field_kind((uint32_t)ft);
		}
		if (j < fc)
			break;
		t->field_count = (uint32_t)fc;
		t->fields = f;
		c->kinds[i] = k;
		if (fc > c->max_fields)
			c->max_fields = (uint32_t)fc;
		if (id > max_id)
			max_id = id;
	}
	if (i < n) {
		if (!bad)
			bad = d.what;
		return rec_rd_chunk_problem(r, c, d.st != REC_OK ? d.st : REC_ERR_CORRUPT, s->hoff,
					    "section 1 (METADATA) is malformed: type %u: %s at byte %zu",
					    i, bad ? bad : "bad value", (size_t)(d.p - d.start));
	}
	c->info.types = c->types;
	c->info.type_count = n;
	/* Id lookup: a dense table for small ids, else a sorted index. */
	if (max_id < 65536 || max_id / 4 <= n) {
		c->dense_n = (uint32_t)max_id + 1;
		c->dense = rec_arena_alloc(&c->arena, (size_t)c->dense_n * sizeof(uint32_t));
		if (!c->dense)
			return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, s->hoff, "out of memory");
		memset(c->dense, 0, (size_t)c->dense_n * sizeof(uint32_t));
		for (i = 0; i < n; i++) {
			if (c->dense[c->types[i].id])
				return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, s->hoff,
							    "section 1 (METADATA): type id %u defined twice",
							    c->types[i].id);
			c->dense[c->types[i].id] = i + 1;
		}
	} else {
		uint64_t *keys = malloc((size_t)n * sizeof(uint64_t) + 1);
		c->sorted = rec_arena_alloc(&c->arena, (size_t)n * sizeof(uint32_t) + 1);
		if (!keys || !c->sorted) {
			free(keys);
			return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, s->hoff, "out of memory");
		}
		for (i = 0; i < n; i++)
			keys[i] = ((uint64_t)c->types[i].id << 32) | i;
		qsort(keys, n, sizeof(uint64_t), cmp_u64);
		for (i = 0; i < n; i++) {
			if (i && (keys[i] >> 32) == (keys[i - 1] >> 32)) {
				uint32_t dup = (uint32_t)(keys[i] >> 32);
				free(keys);
				return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, s->hoff,
							    "section 1 (METADATA): type id %u defined twice",
							    dup);
			}
			c->sorted[i] = (uint32_t)keys[i];
		}
		free(keys);
	}
	return REC_OK;
}

/* ---- STATS ---------------------------------------------------------------------------- */
static rec_status decode_stats(rec_reader *r, rec_rchunk *c)
{
	const rec_rsec *s = &c->secs[c->known[REC_SECTION_STATS]];
	const uint8_t *p;
	rec_status st = rec_rd_section(r, c, (uint32_t)c->known[REC_SECTION_STATS], &p);
	if (st != REC_OK)
		return st;
	dec d = { p, p + s->raw, p, NULL, REC_OK };
	uint64_t first, last, dropped, tc;
	const char *bad = NULL;
	if (!d_u(&d, &first, "First_Delta") || !d_u(&d, &last, "Last_Delta") ||
	    !d_u(&d, &dropped, "Dropped_Events") || !d_u(&d, &tc, "Type_Count"))
		goto fail;
	if (tc != s->items) {
		bad = "Type_Count differs from Item_Count";
		goto fail;
	}
	if (tc * 3 > (uint64_t)(d.end - d.p)) {
		bad = "Type_Count larger than the section";
		goto fail;
	}
	c->tstats = rec_arena_alloc(&c->arena, (size_t)tc * sizeof(rec_type_stats) + 1);
	if (!c->tstats)
		return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, s->hoff, "out of memory");
	for (uint64_t i = 0; i < tc; i++) {
		uint64_t id;
		rec_type_stats *ts = &c->tstats[i];
		if (!d_u(&d, &id, "type id") || !d_u(&d, &ts->count, "count") ||
		    !d_u(&d, &ts->bytes, "bytes"))
			goto fail;
		if (id > UINT32_MAX) {
			bad = "type id out of range";
			goto fail;
		}
		uint32_t idx;
		ts->type_id = (uint32_t)id;
		ts->type = rec_rd_type(c, id, &idx);
	}
	c->info.first_ticks = c->h.start_ticks + (uint64_t)rec_unzigzag(first);
	c->info.last_ticks = c->h.start_ticks + (uint64_t)rec_unzigzag(last);
	c->info.dropped_events = dropped;
	c->info.type_stats_count = (uint32_t)tc;
	c->info.type_stats = c->tstats;
	return REC_OK;
fail:
	return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, s->hoff,
				    "section 2 (STATS) is malformed: %s at byte %zu",
				    bad ? bad : d.what, (size_t)(d.p - d.start));
}

/* ---- plausibility ------------------------------------------------------------------------ */
/* Counts and times a summary shows from the header and STATS alone must be
 * possible for the chunk's sizes (spec, "Limits", "Plausibility"); a chunk
 * whose numbers cannot be true is damaged, even under good checksums. */
#define REC_MIN_RECORD_BYTES 3u /* Size (1 byte) + Type_Id and Time_Delta (>= 2) */
#define REC_MAX_DROPPED_PER_CHUNK (1ull << 48)
#define REC_WALL_LIMIT (1ll << 62) /* |wall ns| below it: differences fit in i64 */

__extension__ typedef __int128 rd_i128;

static bool wall_ok(rd_i128 w)
{
	return w > -(rd_i128)REC_WALL_LIMIT && w < (rd_i128)REC_WALL_LIMIT;
}

/* Wall time of a tick delta from Start_Ticks, exactly (no saturation). */
static rd_i128 wall_of(const rec_chunk_header *h, int64_t dticks)
{
	return (rd_i128)h->start_wall_ns + (rd_i128)dticks * 1000000000 / (rd_i128)h->tick_frequency;
}

static rec_status check_plausible(rec_reader *r, rec_rchunk *c)
{
	const rec_chunk_header *h = &c->h;
	const rec_rsec *ev = &c->secs[c->known[REC_SECTION_EVENTS]];
	char why[200];
	why[0] = 0;
	uint64_t raw_sum = 0, count_sum = 0, bytes_sum = 0;
	for (uint32_t i = 0; i < c->nsec; i++)
		raw_sum += c->secs[i].raw; /* at most 65535 * 2^32: no overflow */
	if (h->event_count != ev->items) {
		snprintf(why, sizeof why, "header Event_Count %llu differs from the EVENTS Item_Count %u",
			 (unsigned long long)h->event_count, ev->items);
	} else if ((uint64_t)ev->items * REC_MIN_RECORD_BYTES > ev->raw) {
		snprintf(why, sizeof why, "%u events in %u bytes of EVENTS (each takes at least %u)",
			 ev->items, ev->raw, REC_MIN_RECORD_BYTES);
	} else if (raw_sum != h->raw_size) {
		snprintf(why, sizeof why, "header Raw_Size %llu differs from the sections' sum %llu",
			 (unsigned long long)h->raw_size, (unsigned long long)raw_sum);
	} else if (c->info.dropped_events > REC_MAX_DROPPED_PER_CHUNK) {
		snprintf(why, sizeof why, "Dropped_Events %llu over the plausible %llu per chunk",
			 (unsigned long long)c->info.dropped_events,
			 (unsigned long long)REC_MAX_DROPPED_PER_CHUNK);
	} else if (!wall_ok(h->start_wall_ns) || !wall_ok(h->process_start_ns)) {
		snprintf(why, sizeof why, "Start_Wall_Ns %lld or Process_Start_Ns %lld is not a plausible time (|ns| < 2^62)",
			 (long long)h->start_wall_ns, (long long)h->process_start_ns);
	}
	for (uint32_t i = 0; !why[0] && i < c->info.type_stats_count; i++) {
		const rec_type_stats *ts = &c->tstats[i];
		/* Each term is at most Raw_Size (< 2^32) after the checks below,
		 * and there are fewer than 2^32 terms: the sums cannot wrap. */
		if (ts->count > ev->items || ts->bytes > ev->raw ||
		    ts->count * REC_MIN_RECORD_BYTES > ts->bytes) {
			snprintf(why, sizeof why, "STATS: type %u has %llu events in %llu bytes (EVENTS: %u in %u)",
				 ts->type_id, (unsigned long long)ts->count,
				 (unsigned long long)ts->bytes, ev->items, ev->raw);
			break;
		}
		count_sum += ts->count;
		bytes_sum += ts->bytes;
	}
	if (!why[0] && (count_sum > ev->items || bytes_sum > ev->raw))
		snprintf(why, sizeof why, "STATS count %llu events in %llu bytes, EVENTS holds %u in %u",
			 (unsigned long long)count_sum, (unsigned long long)bytes_sum, ev->items, ev->raw);
	if (!why[0] && ev->items) {
		int64_t f = (int64_t)(c->info.first_ticks - h->start_ticks);
		int64_t l = (int64_t)(c->info.last_ticks - h->start_ticks);
		rd_i128 fw = wall_of(h, f), lw = wall_of(h, l);
		if (l < f)
			snprintf(why, sizeof why, "STATS Last_Delta %lld before First_Delta %lld",
				 (long long)l, (long long)f);
		else if (!wall_ok(fw) || !wall_ok(lw))
			snprintf(why, sizeof why, "event times out of range (First_Delta %lld, Last_Delta %lld ticks at %llu Hz from %lld ns)",
				 (long long)f, (long long)l, (unsigned long long)h->tick_frequency,
				 (long long)h->start_wall_ns);
	}
	if (!why[0])
		return REC_OK;
	return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, c->info.offset,
				    "implausible counts: %s",
				    why);
}

/* ---- payload ---------------------------------------------------------------------------- */
static rec_status load_payload(rec_reader *r, rec_rchunk *c)
{
	if (c->payload)
		return REC_OK;
	uint64_t poff = c->info.offset + c->info.header_size;
	size_t ps = (size_t)c->h.payload_size;
	const uint8_t *m = rec_src_map(&r->src, poff, ps);
	if (m) {
		c->payload = m;
		return REC_OK;
	}
	c->payload_buf.len = 0;
	size_t got = 0;
	rec_status st = REC_OK;
	if (r->src.seekable) {
		/* The size was checked against the file's. */
		if (!rec_buf_reserve(&c->payload_buf, ps ? ps : 1))
			return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, c->info.offset,
						    "out of memory for a payload of %zu bytes", ps);
		st = rec_src_read(&r->src, poff, ps, c->payload_buf.data, &got);
	} else {
		/* A pipe may end early: grow with what actually arrives, so a
		 * declared size allocates nothing the input does not back. */
		if (!rec_buf_reserve(&c->payload_buf, 1))
			return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, c->info.offset, "out of memory");
		while (got < ps && st == REC_OK) {
			size_t step = c->payload_buf.cap - got;
			if (step == 0) {
				size_t more = got < ((size_t)1 << 20) ? ((size_t)1 << 20) : got;
				if (more > ps - got)
					more = ps - got;
				c->payload_buf.len = got;
				if (!rec_buf_reserve(&c->payload_buf, more))
					return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, c->info.offset,
								    "out of memory for a payload of %zu bytes", ps);
				step = c->payload_buf.cap - got;
			}
			if (step > ps - got)
				step = ps - got;
			size_t k;
			st = rec_src_read(&r->src, poff + got, step, c->payload_buf.data + got, &k);
			got += k;
			if (k < step)
				break;
		}
	}
	if (st != REC_OK) {
		r->at_end = true;
		return rec_rd_chunk_problem(r, c, st, poff, "%s: read error at offset %llu: %s",
					    r->name, (unsigned long long)poff, strerror(r->src.err));
	}
	if (got < ps) {
		r->at_end = true;
		r->stats.bytes_skipped += c->info.header_size + got;
		return rec_rd_chunk_problem(r, c, REC_ERR_TRUNCATED, c->info.offset,
					    "truncated: chunk at offset %llu needs %llu bytes, file ends after %llu",
					    (unsigned long long)c->info.offset,
					    (unsigned long long)c->info.size,
					    (unsigned long long)c->info.header_size + got);
	}
	c->payload_buf.len = ps;
	c->payload = c->payload_buf.data;
	return REC_OK;
}

static rec_status check_payload(rec_reader *r, rec_rchunk *c)
{
	if (c->payload_checked)
		return REC_OK;
	rec_status st = load_payload(r, c);
	if (st != REC_OK)
		return st;
	uint32_t crc = rec_crc32c(0, c->payload, (size_t)c->h.payload_size);
	if (crc != c->h.payload_crc)
		return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, c->info.offset,
					    "payload checksum mismatch (stored %08x, computed %08x)",
					    c->h.payload_crc, crc);
	c->payload_checked = true;
	return REC_OK;
}

rec_status rec_rd_load_events(rec_reader *r, rec_rchunk *c)
{
	if (c->events_loaded)
		return REC_OK;
	if (c->damaged)
		return REC_ERR_CORRUPT;
	rec_status st = check_payload(r, c);
	if (st != REC_OK)
		return st;
	st = rec_rd_load_pools(r, c);
	if (st != REC_OK)
		return st;
	int si = c->known[REC_SECTION_EVENTS];
	const uint8_t *p;
	st = rec_rd_section(r, c, (uint32_t)si, &p);
	if (st != REC_OK)
		return st;
	c->ev = p;
	c->ev_end = p + c->secs[si].raw;
	c->ev_items = c->secs[si].items;
	c->cur = c->ev;
	c->cur_ticks = c->h.start_ticks;
	c->cur_count = 0;
	/* Room for the widest type's values. */
	if (c->max_fields > r->values_cap) {
		rec_value *nv = realloc(r->values, (size_t)c->max_fields * sizeof(rec_value));
		if (!nv)
			return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, c->info.offset, "out of memory");
		r->values = nv;
		r->values_cap = c->max_fields;
	}
	c->events_loaded = true;
	return REC_OK;
}

/* ---- reading one chunk -------------------------------------------------------------------- */
rec_status rec_rd_read_chunk(rec_reader *r, rec_rchunk **out, bool for_events)
{
	*out = NULL;
	r->failed_size = 0;
	if (r->at_end)
		return REC_END;
	uint64_t off = r->pos;
	const uint8_t *p;
	size_t got;
	rec_status st = rec_src_peek(&r->src, off, REC_PREFIX_SIZE, &p, &got);
	if (st != REC_OK)
		return io_problem(r, off, st);
	if (got == 0) {
		r->at_end = true;
		return REC_END;
	}
	size_t m = got < REC_MAGIC_LEN ? got : REC_MAGIC_LEN;
	bool magic = memcmp(p, rec_magic, m) == 0;
	if (magic) {
		int64_t idx = (int64_t)r->next_index;
		if (got < REC_PREFIX_SIZE) {
			r->next_index++;
			return truncated(r, off, idx, REC_PREFIX_SIZE, got);
		}
		uint32_t hs = rec_le32(p + REC_HOFF_HEADER_SIZE);
		if (hs >= REC_PREFIX_SIZE && hs <= REC_MAX_HEADER_SIZE) {
			st = rec_src_peek(&r->src, off, hs, &p, &got);
			if (st != REC_OK)
				return io_problem(r, off, st);
			if (got < hs) {
				/* Cut off, unless a good chunk header follows within
				 * the few bytes left: then this header is damaged. */
				uint64_t next;
				st = scan_for_header(r, off + 1, &next);
				if (st != REC_OK)
					return io_problem(r, off, st);
				if (!good_header_at(r, next)) {
					r->next_index++;
					return truncated(r, off, idx, hs, got);
				}
				goto damaged_header;
			}
			if (header_crc_ok(p, hs))
				goto good_header;
		}
		/* Damaged header: fall through to the scan. */
	}
damaged_header:
	{
		uint64_t next;
		st = scan_for_header(r, off + 1, &next);
		if (st != REC_OK)
			return io_problem(r, off, st);
		uint64_t n = next - off;
		r->stats.bytes_skipped += n;
		r->pos = next;
		if (magic) {
			int64_t idx = (int64_t)r->next_index++;
			r->stats.chunks_damaged++;
			return rec_rd_problem(r, REC_ERR_CORRUPT, off, idx,
					      "damaged chunk header at offset %llu (bad header checksum or size): skipped %llu bytes",
					      (unsigned long long)off, (unsigned long long)n);
		}
		return rec_rd_problem(r, REC_ERR_BAD_MAGIC, off, -1,
				      "skipped %llu bytes of garbage at offset %llu",
				      (unsigned long long)n, (unsigned long long)off);
	}

good_header:;
	int64_t idx = (int64_t)r->next_index++;
	uint32_t hs = rec_le32(p + REC_HOFF_HEADER_SIZE);
	uint64_t ps = rec_le64(p + REC_HOFF_PAYLOAD_SIZE);
	uint64_t end = off + hs;
	end = ps > UINT64_MAX - end ? UINT64_MAX : end + ps;
	r->stats.chunks++;
	rec_chunk_header h;
	const char *hmsg = NULL;
	st = rec_chunk_header_decode(p, got, &h, &hmsg);
	if (st != REC_OK) {
		r->pos = end;
		r->stats.chunks_damaged++;
		if (end == UINT64_MAX || (r->src.size_known && end > r->src.size))
			r->at_end = true;
		if (st == REC_ERR_UNSUPPORTED_VERSION)
			return rec_rd_problem(r, st, off, idx,
					      "unsupported format version %u.%u",
					      rec_le16(p + REC_HOFF_MAJOR), rec_le16(p + REC_HOFF_MINOR));
		if (st == REC_ERR_UNSUPPORTED && p[REC_HOFF_CODEC] > REC_CODEC_LZ4)
			return rec_rd_problem(r, st, off, idx,
					      "unknown codec %u",
					      p[REC_HOFF_CODEC]);
		if (st == REC_ERR_UNSUPPORTED)
			return rec_rd_problem(r, st, off, idx,
					      "reserved header flags set (0x%08x)",
					      rec_le32(p + REC_HOFF_FLAGS) & REC_CHUNK_RESERVED_MASK);
		return rec_rd_problem(r, st == REC_ERR_TRUNCATED ? REC_ERR_CORRUPT : st, off, idx,
				      "%s", hmsg ? hmsg : "bad header");
	}
	if (ps > r->max_payload) {
		/* The header is intact but its size cannot be used to step over
		 * the chunk (stepping 3 GiB would skip every chunk after it):
		 * resume at the next good chunk header after this one. */
		r->stats.chunks_damaged++;
		uint64_t next;
		st = scan_for_header(r, off + hs, &next);
		if (st != REC_OK)
			return io_problem(r, off, st);
		r->stats.bytes_skipped += next - off;
		r->pos = next;
		char want[32], lim[32];
		fmt_size(want, sizeof want, ps);
		fmt_size(lim, sizeof lim, r->max_payload);
		return rec_rd_problem(r, REC_ERR_LIMIT, off, idx,
				      "Payload_Size %llu exceeds the limit %llu "
				      "(the chunk declares %s, over the %s payload limit); skipped %llu bytes",
				      (unsigned long long)ps,
				      (unsigned long long)r->max_payload, want, lim,
				      (unsigned long long)(next - off));
	}
	if (r->src.size_known && end > r->src.size) {
		rec_src_refresh_size(&r->src);
		if (end > r->src.size) {
			r->stats.file_size = r->src.mem ? r->stats.file_size : r->src.size;
			/* Past the end of the input: a cut tail, unless a good chunk
			 * header follows (the size is wrong, or a cut file had more
			 * appended): then resume there. */
			uint64_t next;
			st = scan_for_header(r, off + hs, &next);
			if (st != REC_OK)
				return io_problem(r, off, st);
			if (next < r->src.size && good_header_at(r, next)) {
				r->stats.chunks_damaged++;
				r->stats.bytes_skipped += next - off;
				r->pos = next;
				return rec_rd_problem(r, REC_ERR_CORRUPT, off, idx,
						      "Payload_Size %llu runs past the end of the input "
						      "(%llu bytes left) but a chunk header follows at offset %llu; skipped %llu bytes",
						      (unsigned long long)ps,
						      (unsigned long long)(r->src.size - off - hs),
						      (unsigned long long)next, (unsigned long long)(next - off));
			}
			r->pos = r->src.size;
			return truncated(r, off, idx, end - off, r->src.size - off);
		}
		r->stats.file_size = r->src.size;
	}
	rec_rchunk *c = rec_rd_chunk_get(r);
	if (!c)
		return rec_rd_problem(r, REC_ERR_NOMEM, off, idx, "out of memory");
	c->h = h;
	c->end = end;
	rec_chunk_info *ci = &c->info;
	ci->index = (uint64_t)idx;
	ci->offset = off;
	ci->size = end - off;
	ci->major = h.major;
	ci->minor = h.minor;
	ci->header_size = h.header_size;
	ci->flags = h.flags;
	ci->codec = h.codec;
	ci->payload_size = h.payload_size;
	ci->raw_size = h.raw_size;
	ci->event_count = h.event_count;
	ci->start_wall_ns = h.start_wall_ns;
	ci->start_ticks = h.start_ticks;
	ci->tick_frequency = h.tick_frequency;
	ci->duration_ticks = h.duration_ticks;
	ci->run_id = h.run_id;
	ci->process_start_ns = h.process_start_ns;
	ci->pid = h.pid;
	ci->sequence = h.sequence;
	r->pos = end;

	/* Nothing of a chunk is presented from bytes nobody checked.  A 1.0
	 * chunk (or one without Front_Checksum) has only the whole payload's
	 * checksum, so it is read and checked whole, also when only the header,
	 * METADATA and STATS are wanted.  A 1.1 chunk's Front_Checksum covers
	 * exactly those (read_section_table checks it), so a summary reads the
	 * section headers, METADATA and STATS only and skips the EVENTS bytes;
	 * the whole payload is checked when events are read or on request. */
	if (!rec_chunk_has_front_crc(&c->h) || for_events || (r->flags & REC_READ_VERIFY))
		st = check_payload(r, c);
	else if (!r->src.seekable)
		st = load_payload(r, c); /* a pipe cannot come back for it */
	else
		st = REC_OK;
	if (st != REC_OK)
		goto fail;
	st = read_section_table(r, c);
	if (st == REC_OK)
		st = decode_metadata(r, c);
	if (st == REC_OK)
		st = decode_stats(r, c);
	if (st == REC_OK)
		st = check_plausible(r, c);
	if (st != REC_OK)
		goto fail;
	*out = c;
	return REC_OK;
fail:
	r->failed_size = c->info.size;
	rec_rd_chunk_put(r, c);
	return st;
}

REC_API rec_status rec_reader_next_chunk(rec_reader *r, const rec_chunk_info **info)
{
	if (!r || !info)
		return REC_ERR_INVALID_ARG;
	*info = NULL;
	if (r->ord.started)
		return rec_rd_problem(r, REC_ERR_STATE, r->pos, -1,
				      "rec_reader_next_chunk() after ordered event iteration started");
	if (r->cur) {
		rec_rd_chunk_put(r, r->cur);
		r->cur = NULL;
	}
	rec_rchunk *c;
	rec_status st = rec_rd_read_chunk(r, &c, false);
	if (st != REC_OK)
		return st;
	r->cur = c;
	*info = &c->info;
	return REC_OK;
}
