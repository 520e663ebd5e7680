/* SPDX-License-Identifier: MIT */
/*
 * prefetch.c - decompressing the next chunk's events on a second thread
 * while the current chunk's events are read.
 *
 * When a chunk's events are loaded from a file or memory, a worker thread
 * reads the chunk that starts where it ends (header, payload), finds its
 * EVENTS section and decompresses it into a buffer of its own.  Nothing of
 * that is presented: when the reader later reaches that chunk the usual way
 * (every check, the payload checksum, in order, each problem reported where
 * it always was), rec_rd_section() takes the worker's output instead of
 * decompressing, and only if the worker decompressed the very bytes the
 * reader holds for the section (same offset, sizes and codec; the stored
 * bytes compared).  Else, or when the worker failed, the section is
 * decompressed as before.  So a recording reads the same with or without
 * the worker; it only takes less wall time on a second core.
 *
 * One job at a time, one extra decompressed section (the worker's buffer
 * and the chunk's trade places): memory stays flat.  Pipes are read
 * forward by the reader alone and get no prefetch; nor does a reader whose
 * thread cannot be started, nor the chunk after one whose events are small
 * or not compressed (a hand-over would cost more than it saves).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read/read_internal.h"

typedef struct rec_prefetch rec_prefetch;

/* The least stored EVENTS bytes of a chunk for its successor to be
 * prefetched. */
#define PF_MIN_STORED ((uint32_t)64 * 1024)

struct rec_prefetch {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool busy;    /* a job is queued or running */
	bool running; /* the worker took it */
	bool quit;
	/* the job (written by the reader while idle, read by the worker) */
	uint64_t off;          /* file offset of the chunk header */
	/* the result (written by the worker, read by the reader once idle) */
	bool ok;
	uint64_t stored_off;   /* file offset of the EVENTS stored bytes */
	uint32_t stored, raw;
	uint8_t codec;
	rec_buf payload;       /* the stored bytes of the EVENTS section */
	rec_bigbuf out;        /* decompressed */
	/* the source and limits (fixed) */
	int fd;
	uint64_t base;
	const uint8_t *mem;
	uint64_t size;
	uint64_t max_payload, max_section_raw;
	rec_codec_ctx *codec_ctx;
};

/* n bytes at file offset off into dst (false: short or error). */
static bool pf_read(const rec_prefetch *pf, uint64_t off, void *dst, size_t n)
{
	if (off > pf->size || n > pf->size - off)
		return false;
	if (pf->mem) {
		memcpy(dst, pf->mem + off, n);
		return true;
	}
	size_t done = 0;
	while (done < n) {
		ssize_t k = pread(pf->fd, (uint8_t *)dst + done, n - done,
				  (off_t)(pf->base + off + done));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		done += (size_t)k;
	}
	return true;
}

/* The job: the chunk at pf->off, its EVENTS section decompressed. */
static bool pf_run(rec_prefetch *pf)
{
	uint8_t hb[REC_HEADER_SIZE_V1];
	uint64_t off = pf->off;
	if (!pf_read(pf, off, hb, REC_PREFIX_SIZE))
		return false;
	rec_chunk_header h;
	const char *msg;
	size_t avail = REC_PREFIX_SIZE;
	if (pf->size - off >= sizeof hb && pf_read(pf, off, hb, sizeof hb))
		avail = sizeof hb;
	if (rec_chunk_header_decode(hb, avail, &h, &msg) != REC_OK)
		return false;
	if (h.payload_size > pf->max_payload || h.payload_size > pf->size - off - h.header_size ||
	    h.codec == REC_CODEC_NONE)
		return false;
	uint64_t at = off + h.header_size, pend = at + h.payload_size;
	for (uint32_t i = 0; i < h.section_count; i++) {
		uint8_t sb[REC_SECTION_HEADER_SIZE];
		if (pend - at < REC_SECTION_HEADER_SIZE || !pf_read(pf, at, sb, sizeof sb))
			return false;
		rec_section_header sh;
		rec_section_header_decode(sb, &sh);
		at += REC_SECTION_HEADER_SIZE;
		if (sh.stored_size > pend - at)
			return false;
		if (sh.kind != REC_SECTION_EVENTS) {
			at += sh.stored_size;
			continue;
		}
		if (!(sh.flags & REC_SECTION_COMPRESSED) || sh.raw_size > pf->max_section_raw)
			return false;
		pf->payload.len = 0;
		if (!rec_buf_reserve(&pf->payload, sh.stored_size ? sh.stored_size : 1) ||
		    !pf_read(pf, at, pf->payload.data, sh.stored_size) ||
		    !rec_bigbuf_reserve(&pf->out, sh.raw_size))
			return false;
		if (rec_codec_decompress(pf->codec_ctx, h.codec, pf->payload.data, sh.stored_size,
					 pf->out.data, sh.raw_size) != REC_OK)
			return false;
		pf->stored_off = at;
		pf->stored = sh.stored_size;
		pf->raw = sh.raw_size;
		pf->codec = h.codec;
		return true;
	}
	return false;
}

static void *pf_main(void *arg)
{
	rec_prefetch *pf = arg;
	pthread_mutex_lock(&pf->mu);
	for (;;) {
		while (!pf->busy && !pf->quit)
			pthread_cond_wait(&pf->cv, &pf->mu);
		if (pf->quit)
			break;
		pf->running = true;
		pthread_mutex_unlock(&pf->mu);
		bool ok = pf_run(pf);
		pthread_mutex_lock(&pf->mu);
		pf->ok = ok;
		pf->busy = false;
		pf->running = false;
		pthread_cond_broadcast(&pf->cv);
	}
	pthread_mutex_unlock(&pf->mu);
	return NULL;
}

/* Wait until the worker is idle; a job it has not taken yet is withdrawn
 * (on a busy machine its thread may not run soon: the reader does the work
 * itself rather than wait for it).  Whether a job ran to its end. */
static bool pf_wait(rec_prefetch *pf)
{
	pthread_mutex_lock(&pf->mu);
	bool ran = true;
	if (pf->busy && !pf->running) {
		pf->busy = false;
		pf->ok = false;
		ran = false;
	}
	while (pf->busy)
		pthread_cond_wait(&pf->cv, &pf->mu);
	pthread_mutex_unlock(&pf->mu);
	return ran;
}

static void pf_destroy(rec_prefetch *pf)
{
	rec_codec_ctx_free(pf->codec_ctx);
	rec_buf_free(&pf->payload);
	rec_bigbuf_free(&pf->out);
	free(pf);
}

/* The worker, started on first use (NULL: none for this reader). */
static rec_prefetch *pf_get(rec_reader *r)
{
	if (r->pf || r->pf_failed)
		return r->pf;
	r->pf_failed = true;
	if (!r->src.seekable || (!r->src.mem && r->src.fd < 0))
		return NULL;
	rec_prefetch *pf = calloc(1, sizeof *pf);
	if (!pf)
		return NULL;
	pf->fd = r->src.fd;
	pf->base = r->src.base;
	pf->mem = r->src.mem;
	pf->max_payload = r->max_payload;
	pf->max_section_raw = r->max_section_raw;
	pf->codec_ctx = rec_codec_ctx_new();
	if (!pf->codec_ctx) {
		pf_destroy(pf);
		return NULL;
	}
	if (pthread_mutex_init(&pf->mu, NULL) != 0) {
		pf_destroy(pf);
		return NULL;
	}
	if (pthread_cond_init(&pf->cv, NULL) != 0) {
		pthread_mutex_destroy(&pf->mu);
		pf_destroy(pf);
		return NULL;
	}
	if (pthread_create(&pf->thread, NULL, pf_main, pf) != 0) {
		pthread_cond_destroy(&pf->cv);
		pthread_mutex_destroy(&pf->mu);
		pf_destroy(pf);
		return NULL;
	}
	r->pf = pf;
	r->pf_failed = false;
	return pf;
}

void rec_rd_prefetch_next(rec_reader *r, const rec_rchunk *c)
{
	uint64_t off = c->end;
	/* Chunks like this one are worth a second thread: compressed events
	 * of some size (small ones decompress faster than a hand-over). */
	const rec_rsec *s = &c->secs[c->known[REC_SECTION_EVENTS]];
	if (!(s->flags & REC_SECTION_COMPRESSED) || s->stored < PF_MIN_STORED)
		return;
	/* Something to read after c: at least a header prefix. */
	if (!r->src.size_known || off >= r->src.size || r->src.size - off < REC_HEADER_SIZE_V1)
		return;
	rec_prefetch *pf = pf_get(r);
	if (!pf)
		return;
	pf_wait(pf);
	pthread_mutex_lock(&pf->mu);
	pf->off = off;
	pf->size = r->src.size;
	pf->ok = false;
	pf->busy = true;
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
}

bool rec_rd_prefetch_take(rec_reader *r, const rec_rchunk *c, const rec_rsec *s,
			  const uint8_t *stored, rec_bigbuf *dst)
{
	rec_prefetch *pf = r->pf;
	if (!pf || s->kind != REC_SECTION_EVENTS)
		return false;
	pthread_mutex_lock(&pf->mu);
	bool mine = pf->off == c->info.offset && (pf->busy || pf->ok);
	pthread_mutex_unlock(&pf->mu);
	if (!mine || !pf_wait(pf))
		return false;
	uint64_t soff = c->info.offset + c->info.header_size + s->poff;
	if (!pf->ok || pf->stored_off != soff || pf->stored != s->stored || pf->raw != s->raw ||
	    pf->codec != c->h.codec || memcmp(pf->payload.data, stored, s->stored) != 0)
		return false;
	/* Trade buffers: the chunk gets the output, the worker the old one. */
	rec_bigbuf t = *dst;
	*dst = pf->out;
	pf->out = t;
	pf->ok = false;
	return true;
}

void rec_rd_prefetch_free(rec_reader *r)
{
	rec_prefetch *pf = r->pf;
	if (!pf)
		return;
	pthread_mutex_lock(&pf->mu);
	pf->quit = true;
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
	pthread_join(pf->thread, NULL);
	pthread_cond_destroy(&pf->cv);
	pthread_mutex_destroy(&pf->mu);
	pf_destroy(pf);
	r->pf = NULL;
}
