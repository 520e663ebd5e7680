/* SPDX-License-Identifier: MIT */
/*
 * reader.c - the reader handle: open (a path, standard input, memory) and
 * close, its problem and totals, and the chunk objects it reuses.  What a
 * problem is: a status, a message saying what went wrong, and where (the
 * chunk index and file offset travel as rec_problem's fields, never in the
 * text).  Finding and reading chunks is scan.c's.
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
/* r's problem: st, where, and the message fmt makes of ap. */
static void set_problem(rec_reader *r, rec_status st, uint64_t off, int64_t chunk,
			const char *fmt, va_list ap) REC_PRINTF(5, 0);
static void set_problem(rec_reader *r, rec_status st, uint64_t off, int64_t chunk,
			const char *fmt, va_list ap)
{
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	r->problem.status = st;
	r->problem.offset = off;
	r->problem.chunk = chunk;
	r->problem.message = r->msg;
}

rec_status rec_rd_problem(rec_reader *r, rec_status st, uint64_t off, int64_t chunk,
			  const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	set_problem(r, st, off, chunk, fmt, ap);
	va_end(ap);
	return st;
}

rec_status rec_rd_chunk_problem(rec_reader *r, rec_rchunk *c, rec_status st, uint64_t off,
				const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	set_problem(r, st, off, (int64_t)c->info.index, fmt, ap);
	va_end(ap);
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
					     "MODULES", "FRAMES", "STACKS", "EVENTS",
					     "FRAME_SOURCE" };
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
	free(c->ps);
	free(c);
}

REC_API void rec_reader_close(rec_reader *r)
{
	if (!r)
		return;
	rec_rd_prefetch_free(r);
	rec_rd_order_free(r);
	rec_rd_select_free(r);
	rec_rd_digest_free(r);
	rec_rd_chunk_destroy(r->cur);
	while (r->free_chunks) {
		rec_rchunk *n = r->free_chunks->next_free;
		rec_rd_chunk_destroy(r->free_chunks);
		r->free_chunks = n;
	}
	rec_src_close(&r->src);
	rec_codec_ctx_free(r->codec);
	rec_buf_free(&r->spare_payload);
	rec_buf_free(&r->scratch);
	rec_bigbuf_free(&r->split);
	rec_bigbuf_free(&r->digs);
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
		rec_prescan *ps = c->ps;
		memset(c, 0, sizeof(*c));
		c->ps = ps; /* room kept; ps_valid false */
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
	c->dig_ti = UINT32_MAX;
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
