/* SPDX-License-Identifier: MIT */
/*
 * prefetch.c - decompressing the coming chunks' events on a second thread
 * while the current chunk's events are read.
 *
 * When a chunk's events are loaded from a file or memory (from the moment
 * its payload is checked, before its events are decompressed), a worker
 * thread walks the chunks that follow it (each header gives where the next one
 * starts), finds each one's EVENTS section and decompresses it into a slot
 * of its own, up to PF_SLOTS chunks ahead.  Nothing of that is presented:
 * when the reader later reaches such a chunk the usual way (every check,
 * the payload checksum, in order, each problem reported where it always
 * was), rec_rd_section() takes the slot's output instead of decompressing,
 * and only if the slot holds the very bytes the reader holds for the
 * section (same offset, sizes and codec; the stored bytes compared).  Else,
 * or when the slot failed, the section is decompressed as before.  So a
 * recording reads the same with or without the worker; it only takes less
 * wall time on a second core.
 *
 * The two threads share the work: when the reader reaches a chunk the
 * worker is still decompressing, it decompresses the next chunk nobody has
 * taken into a free slot meanwhile (rather than wait), and a chunk the
 * worker has not reached yet the reader decompresses itself (the worker
 * moves on past it).  A reader whose own work per chunk is small (a view
 * that passes over most records) so keeps both cores decompressing; one
 * whose work is large finds every chunk ready.
 *
 * An ordered reader with a selection of the rarer types (a view of lock
 * waits among CPU samples) tells the worker its selection by Type_Id
 * (rec_rd_prefetch_select, from its plan for a chunk made before that
 * chunk's events are decompressed; a slot started before there was one
 * takes it when it joins); a split section of a chunk with the same
 * METADATA bytes is then joined sparse: only the selected records are
 * written, one after the other, with their entries (time, where written,
 * offset in the section) for the ordered reader's scan, which takes them
 * instead of passing over every record (rec_events_join_sparse, order.c);
 * a chunk the worker has not reached (the first) the reader then joins
 * itself in a free slot the same way; the
 * records of a digested type (rec_reader_digest_type()) are not written
 * either, their digests are made instead.  Such a section goes only to that
 * scan; any other reader of the chunk gets it whole.
 *
 * At most PF_SLOTS extra decompressed sections (a slot's buffer and the
 * chunk's trade places): memory stays flat.  Pipes are read forward by the
 * reader alone and get no prefetch; nor does a reader whose thread cannot
 * be started, nor the chunks after one whose events are small or not
 * compressed (a hand-over would cost more than it saves).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read/read_internal.h"

typedef struct rec_prefetch rec_prefetch;

/* The least stored EVENTS bytes of a chunk for its successors to be
 * prefetched. */
#define PF_MIN_STORED ((uint32_t)64 * 1024)
/* Chunks decompressed ahead at most (the worker's and the reader's).  With
 * 2, a reader that took the chunk after the one the worker was running held
 * the second slot while the worker, done, waited for a free one: rec-view
 * latency of 10M gen_stacks events (a view that passes over 9 records in 10)
 * had its worker idle a third of the time; with 3, 151 -> 137 ms (medians of
 * 21 alternating runs), about 5 MiB more resident; views bound by their own
 * work per record unchanged. */
#define PF_SLOTS 3
/* The dense type ids the worker joins a split section for (a chunk with
 * larger ids is joined by the reader). */
#define PF_TYPE_IDS 4096u
/* pf->next when there is nothing to do, and while the reader itself reads
 * the header that tells where the next chunk starts. */
#define PF_NONE UINT64_MAX
#define PF_PENDING (UINT64_MAX - 1)

enum { SLOT_FREE, SLOT_RUNNING, SLOT_DONE, SLOT_FAILED };

typedef struct pf_slot {
	int state;
	uint64_t off;          /* file offset of the chunk header */
	uint64_t end;          /* where the chunk after it starts (0: unknown) */
	uint64_t stored_off;   /* file offset of the EVENTS stored bytes */
	uint32_t stored, raw;
	uint8_t codec;
	rec_buf payload;       /* the stored bytes of the EVENTS section */
	rec_bigbuf out;        /* decompressed (a split section: joined) */
	/* A split section (1.3): the METADATA bytes its join read the types'
	 * flags from (stored), the flags by id. */
	rec_buf meta;
	uint8_t *tf;
	rec_prescan *ps;       /* its records passed over (prescan below) */
	bool ps_ok;
	uint64_t start_ticks;  /* the header's, where the pre-scan's times start */
	/* A sparse join (pf_split): the reader's selection by Type_Id as the
	 * job started (act, nact: 0 for none) and the METADATA bytes it was
	 * made from; the result: only the selected records in out, their
	 * entries in ents. */
	uint8_t *act;
	size_t nact;
	rec_buf act_meta;
	bool dig;              /* act holds a digested type (3), of these fields */
	rec_evs_digfields digf;
	bool sparse;
	rec_bigbuf ents;
	rec_bigbuf digs;       /* rec_evs_dig: the digests of a sparse join */
	rec_evs_sparse sp;
} pf_slot;

struct rec_prefetch {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool quit;
	uint64_t next;         /* the next chunk nobody has taken, PF_NONE, PF_PENDING */
	bool prescan;          /* pre-scan what is decompressed (the reader's ordered scan takes it) */
	pf_slot slot[PF_SLOTS];
	/* the source and limits (size: refreshed by the reader) */
	int fd;
	uint64_t base;
	const uint8_t *mem;
	uint64_t size;
	uint64_t max_payload, max_section_raw;
	rec_codec_ctx *codec_ctx; /* the worker's */
	rec_codec_ctx *own_ctx;   /* the reader's, for the chunks it takes ahead */
	/* A split section's streams before the join: the worker's, and the
	 * reader's (its own split buffer: the reader joins chunks itself too,
	 * never at the same time as it takes one ahead). */
	rec_bigbuf wstreams;
	rec_bigbuf *rstreams;
	/* The ordered reader's selection by Type_Id for sparse joins
	 * (rec_rd_prefetch_select): nact 0 for none; the METADATA stored
	 * bytes of the chunk it was made for. */
	uint8_t act[PF_TYPE_IDS];
	size_t nact;
	rec_buf act_meta;
	bool dig;              /* a type digested (act 3), of these fields */
	rec_evs_digfields digf;
};

/* n bytes at file offset off into dst (false: short or error). */
static bool pf_read(const rec_prefetch *pf, uint64_t size, uint64_t off, void *dst, size_t n)
{
	if (off > size || n > size - off)
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

/* The header of slot s's chunk (s->off set) into *h, and s->end where the
 * next chunk starts (0: the header did not hold). */
static bool pf_head(const rec_prefetch *pf, uint64_t size, pf_slot *s, rec_chunk_header *h)
{
	uint8_t hb[REC_HEADER_SIZE_V1];
	uint64_t off = s->off;
	s->end = 0;
	if (!pf_read(pf, size, off, hb, REC_PREFIX_SIZE))
		return false;
	const char *msg;
	size_t avail = REC_PREFIX_SIZE;
	if (size - off >= sizeof hb && pf_read(pf, size, off, hb, sizeof hb))
		avail = sizeof hb;
	if (rec_chunk_header_decode(hb, avail, h, &msg) != REC_OK)
		return false;
	if (h->payload_size > pf->max_payload || h->payload_size > size - off - h->header_size)
		return false;
	s->end = off + h->header_size + h->payload_size;
	return true;
}

/* The records of the events from p to end, whose times start at ticks,
 * passed over as the ordered reader's scan passes over them (its frame
 * reading): into ps, false (nothing to take) at a frame that does not hold,
 * a Type_Id from REC_PRESCAN_IDS on or a time below the one before it. */
static bool prescan(const uint8_t *p, const uint8_t *end, uint64_t ticks, rec_prescan *ps)
{
	memset(ps->count, 0, sizeof ps->count);
	uint64_t n = 0, prev = 0;
	while (p < end) {
		uint64_t tid, d;
		REC_RD_PREFETCH(p);
		if (rec_rd_frame_next(&p, end, &tid, &d) != 0 || tid >= REC_PRESCAN_IDS)
			return false;
		ticks += (uint64_t)rec_unzigzag(d);
		if (n && ticks < prev)
			return false;
		prev = ticks;
		n++;
		if (!ps->count[tid]++)
			ps->first[tid] = ticks;
		ps->last[tid] = ticks;
	}
	ps->n = n;
	return true;
}

/* The reader's selection as it is now into slot s, its own copy (with the
 * lock held). */
static void slot_select(rec_prefetch *pf, pf_slot *s)
{
	if (pf->nact && (s->act || (s->act = malloc(PF_TYPE_IDS))) &&
	    rec_buf_reserve(&s->act_meta, pf->act_meta.len ? pf->act_meta.len : 1)) {
		memcpy(s->act, pf->act, pf->nact);
		memcpy(s->act_meta.data, pf->act_meta.data, pf->act_meta.len);
		s->act_meta.len = pf->act_meta.len;
		s->nact = pf->nact;
		s->dig = pf->dig;
		s->digf = pf->digf;
	}
}

/* A split EVENTS section (1.3) of items records, stored bytes in
 * s->payload, its chunk's METADATA in s->meta (stored): its four streams
 * decompressed one after the other into sb (the running thread's) and
 * joined into s->out,
 * the types' flags read from the METADATA as the reader will read them
 * (the reader takes the result only if its METADATA is these very bytes:
 * rec_rd_prefetch_take). */
static bool pf_split(pf_slot *s, const rec_section_header *sh, const rec_chunk_header *h,
		     uint16_t meta_flags, uint32_t meta_raw, rec_codec_ctx *ctx, rec_bigbuf *sb)
{
	uint32_t sst[REC_EVS_N], srw[REC_EVS_N];
	if (!rec_events_split_table_decode(s->payload.data, sh->stored_size, sh->raw_size, sst, srw))
		return false;
	if (!s->tf && !(s->tf = malloc(PF_TYPE_IDS)))
		return false;
	/* the types' flags, from METADATA decompressed into the streams'
	 * buffer before the streams go there */
	const uint8_t *meta = s->meta.data;
	if (meta_flags & REC_SECTION_COMPRESSED) {
		if (!rec_bigbuf_reserve(sb, meta_raw ? meta_raw : 1) ||
		    rec_codec_decompress(ctx, h->codec, s->meta.data, s->meta.len, sb->data,
					 meta_raw) != REC_OK)
			return false;
		meta = sb->data;
	} else if (meta_raw != s->meta.len) {
		return false;
	}
	if (!rec_events_meta_flags(meta, meta_raw, s->tf, PF_TYPE_IDS))
		return false;
	if (!rec_bigbuf_reserve(sb, (size_t)sh->raw_size + REC_EVS_READ_SLACK))
		return false;
	const uint8_t *in = (const uint8_t *)s->payload.data + REC_EVS_TABLE_SIZE;
	uint8_t *out = sb->data;
	const uint8_t *st[REC_EVS_N];
	size_t len[REC_EVS_N];
	for (int i = 0; i < REC_EVS_N; i++) {
		if (srw[i] && rec_codec_decompress(ctx, h->codec, in, sst[i], out, srw[i]) != REC_OK)
			return false;
		st[i] = out;
		len[i] = srw[i];
		in += sst[i];
		out += srw[i];
	}
	rec_evs_types ty = { s->tf, PF_TYPE_IDS, NULL, NULL };
	/* Sparse when the reader's selection was made for these very types. */
	s->sparse = s->nact && s->act_meta.len == s->meta.len &&
		    memcmp(s->act_meta.data, s->meta.data, s->meta.len) == 0;
	if (s->sparse) {
		/* Room for a quarter of the records, or for all of them when
		 * more are selected (then joined again). */
		size_t cap = sh->item_count / 4 + 64;
		/* Digests: room for every record (most are, or none). */
		size_t dcap = s->dig ? (size_t)sh->item_count + 1 : 0;
		if (dcap && !rec_bigbuf_reserve(&s->digs, dcap * sizeof(rec_evs_dig)))
			return false;
		for (int pass = 0; pass < 2; pass++) {
			if (!rec_bigbuf_reserve(&s->ents, cap * sizeof(rec_evs_ent)))
				return false;
			s->sp = (rec_evs_sparse){ .act = s->act, .nact = s->nact,
						  .start_ticks = h->start_ticks, .ents = s->ents.data,
						  .cap = s->ents.cap / sizeof(rec_evs_ent),
						  .digs = s->digs.data, .dcap = dcap, .dig = s->digf };
			if (rec_events_join_sparse(st, len, sh->item_count, &ty, s->out.data,
						   sh->raw_size, &s->sp))
				return true;
			if (!s->sp.overflow)
				return false;
			cap = (size_t)sh->item_count + 1;
		}
		return false;
	}
	uint32_t bad;
	return rec_events_join(st, len, sh->item_count, &ty, s->out.data, sh->raw_size, &bad) == NULL;
}

/* The rest of the job of slot s, whose header is h: its EVENTS section
 * decompressed (and pre-scanned when want_ps).  Runs without the lock: the
 * slot is the caller's while RUNNING. */
static bool pf_body(rec_prefetch *pf, uint64_t size, pf_slot *s, const rec_chunk_header *h,
		    rec_codec_ctx *ctx, bool want_ps)
{
	s->ps_ok = false;
	s->sparse = false;
	if (h->codec == REC_CODEC_NONE)
		return false;
	uint64_t at = s->off + h->header_size, pend = s->end;
	const bool split = (h->flags & REC_CHUNK_SPLIT_EVENTS) != 0;
	uint16_t meta_flags = 0;
	uint32_t meta_raw = 0;
	bool have_meta = false;
	for (uint32_t i = 0; i < h->section_count; i++) {
		uint8_t sb[REC_SECTION_HEADER_SIZE];
		if (pend - at < REC_SECTION_HEADER_SIZE || !pf_read(pf, size, at, sb, sizeof sb))
			return false;
		rec_section_header sh;
		rec_section_header_decode(sb, &sh);
		at += REC_SECTION_HEADER_SIZE;
		if (sh.stored_size > pend - at)
			return false;
		if (split && sh.kind == REC_SECTION_METADATA && !have_meta) {
			/* a split chunk's join needs its types' flags */
			s->meta.len = 0;
			if (sh.raw_size > pf->max_section_raw ||
			    !rec_buf_reserve(&s->meta, sh.stored_size ? sh.stored_size : 1) ||
			    !pf_read(pf, size, at, s->meta.data, sh.stored_size))
				return false;
			s->meta.len = sh.stored_size;
			meta_flags = sh.flags;
			meta_raw = sh.raw_size;
			have_meta = true;
		}
		if (sh.kind != REC_SECTION_EVENTS) {
			at += sh.stored_size;
			continue;
		}
		if (split && !have_meta)
			return false;
		if (!(sh.flags & REC_SECTION_COMPRESSED) || sh.raw_size > pf->max_section_raw)
			return false;
		s->payload.len = 0;
		if (!rec_buf_reserve(&s->payload, sh.stored_size ? sh.stored_size : 1) ||
		    !pf_read(pf, size, at, s->payload.data, sh.stored_size) ||
		    !rec_bigbuf_reserve(&s->out, (size_t)sh.raw_size + REC_EVS_SLACK))
			return false;
		if (split && !s->nact) {
			/* The reader starts the worker on the chunk after its
			 * first one before it has made its selection (payload.c):
			 * taken now, when the join needs it. */
			pthread_mutex_lock(&pf->mu);
			slot_select(pf, s);
			pthread_mutex_unlock(&pf->mu);
		}
		if (split) {
			if (!pf_split(s, &sh, h, meta_flags, meta_raw, ctx,
				      ctx == pf->codec_ctx ? &pf->wstreams : pf->rstreams))
				return false;
		} else if (rec_codec_decompress(ctx, h->codec, s->payload.data, sh.stored_size,
						s->out.data, sh.raw_size) != REC_OK) {
			return false;
		}
		s->stored_off = at;
		s->stored = sh.stored_size;
		s->raw = sh.raw_size;
		s->codec = h->codec;
		s->start_ticks = h->start_ticks;
		if (want_ps && !s->sparse && (s->ps || (s->ps = malloc(sizeof *s->ps))))
			s->ps_ok = prescan(s->out.data, (const uint8_t *)s->out.data + sh.raw_size,
					   h->start_ticks, s->ps);
		return true;
	}
	return false;
}

static pf_slot *free_slot(rec_prefetch *pf)
{
	for (int i = 0; i < PF_SLOTS; i++)
		if (pf->slot[i].state == SLOT_FREE)
			return &pf->slot[i];
	return NULL;
}

static pf_slot *slot_of(rec_prefetch *pf, uint64_t off)
{
	for (int i = 0; i < PF_SLOTS; i++)
		if (pf->slot[i].state != SLOT_FREE && pf->slot[i].off == off)
			return &pf->slot[i];
	return NULL;
}

/* Where the chunk after one ending at e starts: e, or PF_NONE at the end. */
static uint64_t next_after(const rec_prefetch *pf, uint64_t e)
{
	return e && e < pf->size && pf->size - e >= REC_HEADER_SIZE_V1 ? e : PF_NONE;
}

/* The chunk at off into slot s, run by the calling thread with ctx;
 * called and returns with the lock held.  On the walk (off is pf->next),
 * pf->next moves on to the chunk after it as soon as its header is read
 * (nothing more when the header did not hold, or at the end), so that the
 * other thread may take that one meanwhile. */
static void take_chunk(rec_prefetch *pf, pf_slot *s, uint64_t off, bool walk, rec_codec_ctx *ctx)
{
	s->off = off;
	s->state = SLOT_RUNNING;
	if (walk)
		pf->next = PF_PENDING;
	uint64_t size = pf->size;
	bool want_ps = pf->prescan;
	s->nact = 0;
	slot_select(pf, s);
	pthread_mutex_unlock(&pf->mu);
	rec_chunk_header h;
	bool ok = pf_head(pf, size, s, &h);
	pthread_mutex_lock(&pf->mu);
	if (walk && pf->next == PF_PENDING) /* unless the reader redirected the walk */
		pf->next = next_after(pf, s->end);
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
	ok = ok && pf_body(pf, size, s, &h, ctx, want_ps);
	pthread_mutex_lock(&pf->mu);
	s->state = ok ? SLOT_DONE : SLOT_FAILED;
	pthread_cond_broadcast(&pf->cv);
}

static void take_next(rec_prefetch *pf, pf_slot *s, rec_codec_ctx *ctx)
{
	take_chunk(pf, s, pf->next, true, ctx);
}

static void *pf_main(void *arg)
{
	rec_prefetch *pf = arg;
	pthread_mutex_lock(&pf->mu);
	for (;;) {
		pf_slot *s = NULL;
		while (!pf->quit && (pf->next >= PF_PENDING || !(s = free_slot(pf))))
			pthread_cond_wait(&pf->cv, &pf->mu);
		if (pf->quit)
			break;
		take_next(pf, s, pf->codec_ctx);
	}
	pthread_mutex_unlock(&pf->mu);
	return NULL;
}

static void pf_destroy(rec_prefetch *pf)
{
	rec_codec_ctx_free(pf->codec_ctx);
	rec_codec_ctx_free(pf->own_ctx);
	rec_bigbuf_free(&pf->wstreams);
	rec_buf_free(&pf->act_meta);
	for (int i = 0; i < PF_SLOTS; i++) {
		free(pf->slot[i].act);
		rec_buf_free(&pf->slot[i].act_meta);
		rec_bigbuf_free(&pf->slot[i].ents);
		rec_bigbuf_free(&pf->slot[i].digs);
		rec_buf_free(&pf->slot[i].payload);
		rec_bigbuf_free(&pf->slot[i].out);
		rec_buf_free(&pf->slot[i].meta);
		free(pf->slot[i].tf);
		free(pf->slot[i].ps);
	}
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
	pf->next = PF_NONE;
	pf->rstreams = &r->split;
	pf->codec_ctx = rec_codec_ctx_new();
	pf->own_ctx = rec_codec_ctx_new();
	if (!pf->codec_ctx || !pf->own_ctx) {
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
	pthread_mutex_lock(&pf->mu);
	pf->size = r->src.size;
	pf->prescan = r->prescan_wanted;
	/* What lies before c will not be asked for (c's own slot is taken
	 * next: this runs before c's events are). */
	for (int i = 0; i < PF_SLOTS; i++) {
		pf_slot *t = &pf->slot[i];
		if ((t->state == SLOT_DONE || t->state == SLOT_FAILED) && t->off < c->info.offset)
			t->state = SLOT_FREE;
	}
	/* The walk ahead goes on from the chunk after c, unless it already
	 * holds or passed it (the reader follows the same chain of headers). */
	bool on_chain = slot_of(pf, off) || pf->next == off || pf->next == PF_PENDING;
	if (!on_chain) {
		for (int i = 0; i < PF_SLOTS; i++) /* not on the reader's way */
			if (pf->slot[i].state == SLOT_DONE || pf->slot[i].state == SLOT_FAILED)
				pf->slot[i].state = SLOT_FREE;
		pf->next = off;
	}
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
}

bool rec_rd_prefetch_take(rec_reader *r, rec_rchunk *c, const rec_rsec *s,
			  const uint8_t *stored, rec_bigbuf *dst)
{
	rec_prefetch *pf = r->pf;
	if (!pf || s->kind != REC_SECTION_EVENTS)
		return false;
	uint64_t off = c->info.offset;
	pthread_mutex_lock(&pf->mu);
	pf_slot *t = slot_of(pf, off);
	if (!t) {
		/* Not reached by the worker: the reader decompresses it, the
		 * worker goes on after it. */
		if (pf->next == off)
			pf->next = next_after(pf, c->end);
		/* For the ordered scan with a selection (the first chunk, read
		 * before the worker had one), in a slot: joined sparse. */
		pf_slot *e = r->sparse_ok && pf->nact ? free_slot(pf) : NULL;
		if (!e) {
			pthread_cond_broadcast(&pf->cv);
			pthread_mutex_unlock(&pf->mu);
			return false;
		}
		take_chunk(pf, e, off, false, pf->own_ctx);
		t = e;
	}
	while (t->state == SLOT_RUNNING) {
		/* Rather than wait, decompress the chunk nobody took yet. */
		pf_slot *e = pf->next < PF_PENDING ? free_slot(pf) : NULL;
		if (e)
			take_next(pf, e, pf->own_ctx);
		else
			pthread_cond_wait(&pf->cv, &pf->mu);
	}
	bool ok = t->state == SLOT_DONE;
	uint64_t soff = off + c->info.header_size + s->poff;
	if (ok && (t->stored_off != soff || t->stored != s->stored || t->raw != s->raw ||
		   t->codec != c->h.codec || memcmp(t->payload.data, stored, s->stored) != 0))
		ok = false;
	if (ok && (c->h.flags & REC_CHUNK_SPLIT_EVENTS)) {
		/* joined by the types of these METADATA bytes: the reader's? */
		const rec_rsec *m = &c->secs[c->known[REC_SECTION_METADATA]];
		if (!c->payload || t->meta.len != m->stored ||
		    memcmp(t->meta.data, c->payload + m->poff, m->stored) != 0)
			ok = false;
	}
	/* A sparse section only for the ordered reader's scan, which takes
	 * its entries instead of reading the records (order.c). */
	if (ok && t->sparse && !r->sparse_ok)
		ok = false;
	/* Its entries copied into the chunk's own room (both buffers stay
	 * where their pages are: trading them put fresh pages under the
	 * worker's writes, a fault every 4 KiB). */
	if (ok && t->sparse) {
		if (rec_bigbuf_reserve(&c->oents, (t->sp.k ? t->sp.k : 1) * sizeof(rec_evs_ent)))
			memcpy(c->oents.data, t->ents.data, t->sp.k * sizeof(rec_evs_ent));
		else
			ok = false;
	}
	if (ok) {
		/* Trade buffers: the chunk gets the output, the slot the old one. */
		rec_bigbuf b = *dst;
		*dst = t->out;
		t->out = b;
		if (t->sparse) { /* and its entries' numbers, and its digests */
			rec_bigbuf d = r->digs;
			r->digs = t->digs;
			t->digs = d;
			c->ndigs = t->sp.dk;
			c->ev_sparse = true;
			c->sp_k = t->sp.k;
			c->sp_lo = t->sp.lo;
			c->sp_hi = t->sp.hi;
			c->sp_sorted = t->sp.sorted;
		}
		if (t->ps_ok && t->start_ticks == c->h.start_ticks) { /* and its pre-scan */
			rec_prescan *ps = c->ps;
			c->ps = t->ps;
			t->ps = ps;
			c->ps_valid = true;
		}
	}
	t->state = SLOT_FREE;
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
	return ok;
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

void rec_rd_prefetch_select(rec_reader *r, const rec_rchunk *c)
{
	rec_prefetch *pf = r->pf;
	if (!pf)
		return;
	const rec_rsec *m = c && c->known[REC_SECTION_METADATA] >= 0
				    ? &c->secs[c->known[REC_SECTION_METADATA]]
				    : NULL;
	pthread_mutex_lock(&pf->mu);
	pf->nact = 0;
	if (c && (c->h.flags & REC_CHUNK_SPLIT_EVENTS) && c->act && c->nact && c->payload && m &&
	    rec_buf_reserve(&pf->act_meta, m->stored ? m->stored : 1)) {
		size_t n = c->nact < PF_TYPE_IDS ? c->nact : PF_TYPE_IDS;
		memcpy(pf->act, c->act, n);
		memcpy(pf->act_meta.data, c->payload + m->poff, m->stored);
		pf->act_meta.len = m->stored;
		pf->nact = n;
		pf->dig = c->dig_ti != UINT32_MAX;
		pf->digf = c->dig;
	}
	pthread_mutex_unlock(&pf->mu);
}
