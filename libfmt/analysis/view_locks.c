/* SPDX-License-Identifier: MIT */
/*
 * view_locks.c - "contention-by-lock" and "contention-by-site": rec.LockWait
 * per lock (or per waiter call site and lock): waits, total, max, p99, the
 * holders, and what the holders did while the others waited: the overlap of
 * each wait with the holder thread's sleeps, condition waits, I/O waits and
 * lock waits and its CPU samples (view_activity.c; each state at most the
 * wait's length per wait: a holder cannot run longer than the wait lasted,
 * whatever periods its samples claim), and the holder's call
 * site that overlapped most.  The holder is the one rec.LockWait names
 * (holderOsThreadId: the thread holding the lock when the wait began): the
 * whole wait is looked at on that thread.
 *
 * A wait is settled once the stream has passed its end (events come in
 * timestamp order), so pending waits are the waits in flight, not all; the
 * waits due at an event are settled in the order they came.  Until the
 * earliest end in flight (rec_view.act_wake) the CPU samples, most events,
 * are noted by rec_view_add_event() without a call here; a reader that gives
 * them as digests (rec_view_digest_type()) spares even that.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_internal.h"

#define MAX_HOLDERS 8
#define MAX_HSITES MAX_HOLDERS /* (a named_set) */

typedef struct pend_wait {
	int64_t s, e;
	uint64_t holder_tid;
	uint32_t pid;
	uint32_t lock, site;
	uint32_t row;    /* its row in rows, made when the wait came */
	uint64_t seq;    /* the order the waits came in */
} pend_wait;

/* A wait in flight by its end: the queue of them is in the order of their
 * ends, so the ones due are at its head. */
typedef struct pend_end {
	int64_t e;
	uint32_t slot;
} pend_end;

typedef struct named_ns {
	uint32_t name;
	uint64_t count, ns;
} named_ns;

/* A name's count and ns, kept apart from the names: what is looked through
 * at every wait is the names, one line, and one of these. */
typedef struct named_cnt {
	uint64_t count, ns;
} named_cnt;

typedef struct named_set {
	uint32_t name[MAX_HOLDERS];
	uint32_t n;
	named_cnt cnt[MAX_HOLDERS];
} named_set;

/* Waits settled into a row's histogram this many at a time: the row keeps
 * their lengths till then (a histogram is not touched at every wait). */
#define HIST_BATCH 16

typedef struct lock_row {
	/* what every wait settled in the row reads or writes, first (in two
	 * lines of 64 bytes, the holders' names in the second) */
	uint64_t waits, total, max;
	rec_histogram *h;
	uint64_t doing[ACT_KINDS];
	uint32_t holder[MAX_HOLDERS];
	uint32_t nholders, lock, site, nbatch;
	uint64_t cpu, other;
	named_cnt holder_cnt[MAX_HOLDERS];
	uint64_t batch[HIST_BATCH];
	named_set hsites;
} lock_row;

/* A holder seen before: its thread (index in v->threads), the name it had
 * then and the interned label of that name. */
typedef struct holder_ent {
	uint64_t tid;
	uint32_t pid;
	uint32_t thread, tname, label;
	bool used;
} holder_ent;
#define HOLDER_CACHE 64
#define ROW_CACHE 1024

/* What a pointer of a chunk's pools (numbered gen) was made into. */
typedef struct lk_ptr_ent {
	const void *p;
	uint32_t gen;
	uint32_t id;
	size_t len;
} lk_ptr_ent;
#define LK_NAMES 16
#define LK_SITES 2048

typedef struct lock_state {
	bool by_site;
	vmap rows;
	holder_ent holders[HOLDER_CACHE];
	/* rows by (lock, site): index + 1 of the row, 0 none */
	uint32_t row_key[ROW_CACHE][2], row_idx[ROW_CACHE];
	/* the waits in flight: in slots (a freed slot is taken again), and
	 * in the queue [qhead, qtail) of q by their ends */
	pend_wait *slots;
	uint32_t *free_slots;
	size_t nslots, nfree, cap;
	pend_end *q;
	size_t qhead, qtail, qcap;
	uint64_t seq;
	/* lock names by their pooled string, sites by their stack, for the
	 * chunk numbered gen (vtype.gen) */
	lk_ptr_ent names[LK_NAMES], sites[LK_SITES];
} lock_state;

/* The earliest time a wait may still ask about its holder's activity: the
 * start of the earliest wait in flight, or the latest event's (waits come
 * in the order they start). */
static int64_t lk_floor(const rec_view *v)
{
	const lock_state *s = v->state;
	if (!v->have_start)
		return INT64_MIN; /* an input's digests before its first event */
	int64_t floor = v->now;
	for (size_t i = s->qhead; i < s->qtail; i++)
		if (s->slots[s->q[i].slot].s < floor)
			floor = s->slots[s->q[i].slot].s;
	return floor;
}

static rec_status lk_init(rec_view *v)
{
	lock_state *s = v->state;
	s->by_site = v->impl == &rec_view_contention_site;
	rec_vi_vmap_init(&s->rows, sizeof(lock_row));
	/* the earliest end of the waits in flight (rec_view_add_event() notes
	 * the CPU samples before it) */
	v->act_wake = INT64_MAX;
	v->act_floor = lk_floor;
	return REC_OK;
}

static void lk_free(rec_view *v)
{
	lock_state *s = v->state;
	for (size_t i = 0; i < s->rows.n; i++)
		rec_histogram_close(((lock_row *)vmap_at(&s->rows, i))->h);
	rec_vi_vmap_free(&s->rows);
	free(s->slots);
	free(s->free_slots);
	free(s->q);
}

/* Count ns for name among the *n (at most cap) names of names, their counts
 * and ns in cnt. */
static void add_named(uint32_t *names, uint32_t *n, named_cnt *cnt, uint32_t cap, uint32_t name,
		      uint64_t ns)
{
	for (uint32_t i = 0; i < *n; i++)
		if (names[i] == name) {
			cnt[i].count++;
			cnt[i].ns += ns;
			return;
		}
	uint32_t i = *n;
	if (i >= cap) {
		/* Full: the lightest gives way (bounded; the heavy ones stay exact). */
		i = 0;
		for (uint32_t k = 1; k < cap; k++)
			if (cnt[k].ns < cnt[i].ns)
				i = k;
		if (cnt[i].ns >= ns)
			return;
	} else {
		(*n)++;
	}
	names[i] = name;
	cnt[i] = (named_cnt){ 1, ns };
}

/* The n names of names with their counts and ns (cnt) as named_ns, sorted
 * (cmp_named) into out; n. */
static int cmp_named(const void *a, const void *b, void *ctx);
static uint32_t named_sorted(const uint32_t *names, uint32_t n, const named_cnt *cnt,
			     named_ns *out)
{
	for (uint32_t i = 0; i < n; i++)
		out[i] = (named_ns){ names[i], cnt[i].count, cnt[i].ns };
	rec_vi_sort(out, n, sizeof *out, cmp_named, NULL);
	return n;
}

/* The lengths r keeps into its histogram. */
static rec_status flush_batch(rec_view *v, lock_row *r)
{
	for (uint32_t i = 0; i < r->nbatch; i++)
		if (rec_histogram_add(r->h, r->batch[i]) != REC_OK)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	r->nbatch = 0;
	return REC_OK;
}

/* The holder of w (NULL: none, or not seen) and its label interned in *hn
 * (UINT32_MAX when out of memory): a holder's thread and label are looked
 * up once while its name stays the same. */
static const vthread *holder_of(rec_view *v, const pend_wait *w, uint32_t *hn)
{
	lock_state *s = v->state;
	holder_ent *e = &s->holders[(w->holder_tid ^ w->pid) % HOLDER_CACHE];
	if (w->holder_tid && e->used && e->tid == w->holder_tid && e->pid == w->pid) {
		const vthread *h = vmap_at(&v->threads, e->thread);
		if (h->name == e->tname) {
			*hn = e->label;
			return h;
		}
	}
	char buf[40];
	const vthread *h = w->holder_tid ? rec_vi_thread_by_tid(v, w->pid, w->holder_tid) : NULL;
	/* known once something of it started by the wait's end (its CPU
	 * samples given as digests are known ahead of the events) */
	if (h && (!h->act || h->act->first_ns > w->e))
		h = NULL;
	const char *hl;
	if (!w->holder_tid)
		hl = "(unknown)";
	else if (h)
		hl = rec_vi_thread_label(v, h, buf, sizeof buf);
	else {
		snprintf(buf, sizeof buf, "tid=%" PRIu64, w->holder_tid);
		hl = buf;
	}
	*hn = rec_vi_intern(v, hl, strlen(hl));
	if (h && *hn != UINT32_MAX) {
		e->tid = w->holder_tid;
		e->pid = w->pid;
		e->thread = (uint32_t)(((const unsigned char *)h - v->threads.vals) / v->threads.esize);
		e->tname = h->name;
		e->label = *hn;
		e->used = true;
	}
	return h;
}

/* The row of (lock, site) (site 0 by lock), made when new: its index, or
 * SIZE_MAX when out of memory.  A row is made when its first wait comes
 * and filled in when a wait settles (its lock, site and histogram when the
 * first does, as the rows of the waits in flight are not shown). */
static size_t row_of(lock_state *s, uint32_t lock, uint32_t site)
{
	uint32_t key[2] = { lock, site };
	size_t slot = (size_t)(((uint64_t)lock * 0x9E3779B1u + site) * 0x9E3779B97F4A7C15ull >> 54) %
		      ROW_CACHE;
	if (s->row_idx[slot] && s->row_key[slot][0] == lock && s->row_key[slot][1] == site)
		return s->row_idx[slot] - 1;
	size_t i = rec_vi_vmap_get(&s->rows, (const char *)key, sizeof key, NULL);
	if (i != SIZE_MAX && i < UINT32_MAX) {
		s->row_key[slot][0] = lock;
		s->row_key[slot][1] = site;
		s->row_idx[slot] = (uint32_t)i + 1;
	}
	return i;
}

static rec_status settle(rec_view *v, const pend_wait *w)
{
	lock_state *s = v->state;
	size_t i = w->row;
	lock_row *r = vmap_at(&s->rows, i);
	if (!r->h) {
		r->lock = w->lock;
		r->site = w->site;
		if (rec_histogram_open(&r->h) != REC_OK)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	}
	uint64_t d = (uint64_t)(w->e - w->s);
	r->waits++;
	r->total += d;
	if (d > r->max)
		r->max = d;
	if (r->nbatch == HIST_BATCH) {
		rec_status st = flush_batch(v, r);
		if (st != REC_OK)
			return st;
	}
	r->batch[r->nbatch++] = d;
	uint32_t hn;
	const vthread *h = holder_of(v, w, &hn);
	r = vmap_at(&s->rows, i);
	if (hn != UINT32_MAX)
		add_named(r->holder, &r->nholders, r->holder_cnt, MAX_HOLDERS, hn, d);
	act_overlap ov;
	rec_vi_act_during(h, w->s, w->e, &ov);
	uint64_t seen = ov.cpu_ns;
	for (int k = 0; k < ACT_KINDS; k++) {
		r->doing[k] += ov.ns[k];
		seen += ov.ns[k];
	}
	r->cpu += ov.cpu_ns;
	r->other += seen < d ? d - seen : 0;
	if (ov.top_site != UINT32_MAX)
		add_named(r->hsites.name, &r->hsites.n, r->hsites.cnt, MAX_HSITES, ov.top_site,
			  ov.top_ns);
	return REC_OK;
}

/* Slots of waits (uint32_t) by the order the waits came in. */
static int cmp_seq(const void *a, const void *b, void *ctx)
{
	const lock_state *s = ctx;
	uint64_t x = s->slots[*(const uint32_t *)a].seq, y = s->slots[*(const uint32_t *)b].seq;
	return x < y ? -1 : x > y;
}

#if defined(__GNUC__)
#define LK_NOINLINE __attribute__((noinline))
#else
#define LK_NOINLINE
#endif

/* Settle the waits that ended before now (called once now reaches the
 * earliest end pending; out of line: most events settle nothing). */
static LK_NOINLINE rec_status settle_until(rec_view *v, int64_t now)
{
	lock_state *s = v->state;
	if (now < v->act_wake)
		return REC_OK;
	/* The ones due are the head of the queue (by their end): they are
	 * settled in the order they came, their slots freed. */
	size_t h = s->qhead, first = s->nfree, nfree = s->nfree;
	while (h < s->qtail && s->q[h].e < now)
		s->free_slots[nfree++] = s->q[h++].slot;
	if (h == s->qtail)
		h = s->qtail = 0; /* empty: the queue starts again at 0 */
	s->qhead = h;
	v->act_wake = h < s->qtail ? s->q[h].e : INT64_MAX;
	s->nfree = nfree;
	size_t ndue = nfree - first;
	if (ndue == 0)
		return REC_OK; /* (and free_slots may be NULL: no wait came yet) */
	uint32_t *due = s->free_slots + first;
	if (ndue > 8) {
		rec_vi_sort(due, ndue, sizeof *due, cmp_seq, s);
	} else {
		for (size_t i = 1; i < ndue; i++) {
			uint32_t x = due[i];
			size_t j = i;
			for (; j > 0 && s->slots[due[j - 1]].seq > s->slots[x].seq; j--)
				due[j] = due[j - 1];
			due[j] = x;
		}
	}
	for (size_t i = 0; i < ndue; i++) {
		rec_status st = settle(v, &s->slots[due[i]]);
		if (st != REC_OK)
			return st;
	}
	return REC_OK;
}

/* Room in s for one more wait in flight (a slot and a place in the
 * queue); false when out of memory. */
static bool pend_room(lock_state *s)
{
	if (s->nfree == 0 && s->nslots == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 16;
		if (nc > UINT32_MAX)
			return false;
		pend_wait *p = realloc(s->slots, nc * sizeof *p);
		if (!p)
			return false;
		s->slots = p;
		uint32_t *f = realloc(s->free_slots, nc * sizeof *f);
		if (!f)
			return false;
		s->free_slots = f;
		s->cap = nc;
	}
	if (s->qtail == s->qcap) {
		size_t n = s->qtail - s->qhead;
		if (s->qhead > 0 && n < s->qcap / 2) {
			memmove(s->q, s->q + s->qhead, n * sizeof *s->q);
		} else {
			size_t nc = s->qcap ? s->qcap * 2 : 16;
			pend_end *q = malloc(nc * sizeof *q);
			if (!q)
				return false;
			if (n)
				memcpy(q, s->q + s->qhead, n * sizeof *q);
			free(s->q);
			s->q = q;
			s->qcap = nc;
		}
		s->qhead = 0;
		s->qtail = n;
	}
	return true;
}

/* rec_vi_ev_str() of lock name val of ev (vt its type), the ones of the
 * chunk's string pool looked up here first. */
static uint32_t lk_name(rec_view *v, const vtype *vt, const rec_event *ev, const rec_value *val)
{
	lock_state *s = v->state;
	if (val->type != REC_TYPE_STRING) /* not pooled */
		return rec_vi_ev_str(v, ev, val);
	lk_ptr_ent *e = &s->names[((uintptr_t)val->v.s.ptr / 8) % LK_NAMES];
	if (e->p == val->v.s.ptr && e->gen == vt->gen && e->len == val->v.s.len)
		return e->id; /* (an empty entry has gen 0, never a type's) */
	uint32_t id = rec_vi_ev_str(v, ev, val);
	if (id != UINT32_MAX && vt->gen != UINT32_MAX) {
		e->p = val->v.s.ptr;
		e->gen = vt->gen;
		e->id = id;
		e->len = val->v.s.len;
	}
	return id;
}

/* rec_vi_ev_site() of ev (vt its type), by its stack looked up here first. */
static uint32_t lk_site(rec_view *v, const vtype *vt, const rec_event *ev)
{
	lock_state *s = v->state;
	lk_ptr_ent *e = &s->sites[((uintptr_t)ev->stack / sizeof(rec_stack)) % LK_SITES];
	if (e->p == ev->stack && e->gen == vt->gen)
		return e->id;
	uint32_t id = rec_vi_ev_site(v, ev);
	if (id != UINT32_MAX && vt->gen != UINT32_MAX) {
		e->p = ev->stack;
		e->gen = vt->gen;
		e->id = id;
	}
	return id;
}

/* A selected lock wait at site (its waiter's call site, rec_vi_ev_site()):
 * pending until the stream passes its end. */
static rec_status lk_add_wait(rec_view *v, const rec_event *ev, const vtype *vt, uint32_t site)
{
	lock_state *s = v->state;
	int li = vt_field(vt, ev, VF_LOCKNAME);
	uint32_t lock;
	if (li >= 0 && ev->values[li].v.s.ptr)
		lock = lk_name(v, vt, ev, &ev->values[li]);
	else {
		char buf[40];
		int n = snprintf(buf, sizeof buf, "0x%" PRIx64, vt_u64(vt, ev, VF_LOCKADDR, 0));
		lock = rec_vi_intern(v, buf, (size_t)n);
	}
	if (!s->by_site)
		site = 0;
	if (lock == UINT32_MAX || site == UINT32_MAX)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	size_t row = row_of(s, lock, site);
	if (row >= UINT32_MAX)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	if (!pend_room(s))
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	uint32_t slot = s->nfree ? s->free_slots[--s->nfree] : (uint32_t)s->nslots++;
	pend_wait *w = &s->slots[slot];
	/* into the queue by its end, after the ones that end at the same time */
	int64_t end = ev_end(ev);
	size_t k = s->qtail++;
	for (; k > s->qhead && s->q[k - 1].e > end; k--)
		s->q[k] = s->q[k - 1];
	s->q[k] = (pend_end){ end, slot };
	v->act_wake = s->q[s->qhead].e;
	w->seq = s->seq++;
	w->s = ev_start(ev);
	w->e = ev_end(ev);
	w->pid = ev->chunk ? ev->chunk->pid : 0;
	w->holder_tid = vt_u64(vt, ev, VF_HOLDER, 0);
	w->lock = lock;
	w->site = site;
	w->row = (uint32_t)row;
	return REC_OK;
}

/* An event not a CPU sample: a wait noted in its thread's activity (what
 * rec_vi_act_note_wait() does), and a selected lock wait added; the site
 * named once for both. */
static LK_NOINLINE rec_status lk_add_other(rec_view *v, const rec_event *ev, const vtype *vt,
					   bool selected)
{
	int kind = rec_vi_act_kind(vt, ev);
	if (kind < 0)
		return REC_OK; /* not a wait, so not a lock wait either */
	uint32_t site = lk_site(v, vt, ev);
	rec_vi_act_interval(v, ev, kind, site);
	if (!selected || vt->role != VT_LOCKWAIT)
		return REC_OK;
	return lk_add_wait(v, ev, vt, site);
}

/* (A CPU sample before v->act_wake, the earliest end in flight, is noted
 * by rec_view_add_event() without this call.) */
static rec_status lk_add(rec_view *v, const rec_event *ev, bool selected)
{
	if (ev_start(ev) >= v->act_wake) {
		rec_status st = settle_until(v, ev_start(ev));
		if (st != REC_OK)
			return st;
	}
	const vtype *vt = rec_vi_vtype(v, ev);
	if (vt->role == VT_CPU)
		return rec_vi_act_note_cpu(v, vt, ev);
	return lk_add_other(v, ev, vt, selected);
}

/* Lock waits, and what rec_vi_act_note() keeps of the holders. */
static bool lk_wants(const rec_view *v, const rec_type *t)
{
	(void)v;
	return rec_vi_act_wants(t);
}

static rec_status lk_end_input(rec_view *v)
{
	rec_status st = settle_until(v, INT64_MAX);
	rec_vi_act_digests_clear(v);
	return st;
}

static int cmp_named(const void *a, const void *b, void *ctx)
{
	(void)ctx;
	const named_ns *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	rec_view *v = ctx;
	const lock_row *x = a, *y = b;
	return rec_vi_rank(v, x->total, y->total, x->site, y->site, x->lock, y->lock);
}

static rec_status lk_finish(rec_view *v)
{
	lock_state *s = v->state;
	rec_view_column cols[16];
	size_t n = 0;
	if (s->by_site)
		cols[n++] = (rec_view_column){ "Site", "site", REC_VIEW_TEXT };
	cols[n++] = (rec_view_column){ "Lock", "lock", REC_VIEW_TEXT };
	cols[n++] = (rec_view_column){ "Waits", "waits", REC_VIEW_COUNT };
	cols[n++] = (rec_view_column){ "Total", "total", REC_VIEW_DURATION };
	cols[n++] = (rec_view_column){ "Max", "max", REC_VIEW_DURATION };
	cols[n++] = (rec_view_column){ "P99", "p99", REC_VIEW_DURATION };
	cols[n++] = (rec_view_column){ "Holders", "holders", REC_VIEW_TEXT };
	cols[n++] = (rec_view_column){ "Holder Site", "holder_site", REC_VIEW_TEXT };
	cols[n++] = (rec_view_column){ "Sleeping", "holder_sleeping", REC_VIEW_DURATION };
	cols[n++] = (rec_view_column){ "Cond Wait", "holder_cond_wait", REC_VIEW_DURATION };
	cols[n++] = (rec_view_column){ "I/O", "holder_io", REC_VIEW_DURATION };
	cols[n++] = (rec_view_column){ "Lock Wait", "holder_lock_wait", REC_VIEW_DURATION };
	cols[n++] = (rec_view_column){ "Running", "holder_running", REC_VIEW_DURATION };
	cols[n++] = (rec_view_column){ "Other", "holder_other", REC_VIEW_DURATION };
	vtable *t = rec_vi_table(v, s->by_site ? "contention_by_site" : "contention_by_lock",
			       s->by_site ? "Lock Contention by Site" : "Lock Contention by Lock", cols, n);
	if (!t)
		return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
	rec_vi_sort(s->rows.vals, s->rows.n, sizeof(lock_row), cmp_rows, v);
	for (size_t i = 0; i < s->rows.n; i++) {
		lock_row *r = vmap_at(&s->rows, i);
		if (!r->waits)
			continue; /* its waits never settled (an error stopped the input) */
		rec_view_cell *c = rec_vi_row(v, t);
		if (!c)
			return rec_vi_fail(v, REC_ERR_NOMEM, "out of memory");
		size_t k = 0;
		if (s->by_site)
			rec_vi_cell_text(v, &c[k++], view_name(v, r->site));
		rec_vi_cell_text(v, &c[k++], view_name(v, r->lock));
		cell_u(&c[k++], r->waits);
		cell_u(&c[k++], r->total);
		cell_u(&c[k++], r->max);
		rec_status st = flush_batch(v, r);
		if (st != REC_OK)
			return st;
		cell_u(&c[k++], rec_histogram_percentile(r->h, 99));
		named_ns holders[MAX_HOLDERS], hsites[MAX_HSITES];
		uint32_t nholders = named_sorted(r->holder, r->nholders, r->holder_cnt, holders);
		char buf[512];
		size_t off = 0;
		buf[0] = '\0';
		for (uint32_t h = 0; h < nholders && h < 3 && off < sizeof buf; h++)
			off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s (%" PRIu64 ")",
						h ? ", " : "", view_name(v, holders[h].name),
						holders[h].count);
		if (nholders > 3 && off < sizeof buf)
			snprintf(buf + off, sizeof buf - off, ", ...");
		rec_vi_cell_text(v, &c[k++], buf);
		if (named_sorted(r->hsites.name, r->hsites.n, r->hsites.cnt, hsites))
			rec_vi_cell_text(v, &c[k], view_name(v, hsites[0].name));
		k++;
		cell_u(&c[k++], r->doing[ACT_SLEEP]);
		cell_u(&c[k++], r->doing[ACT_COND]);
		cell_u(&c[k++], r->doing[ACT_IO]);
		cell_u(&c[k++], r->doing[ACT_LOCK]);
		cell_u(&c[k++], r->cpu);
		cell_u(&c[k++], r->other);
	}
	rec_vi_note(v, t, "holder: the thread holding the lock when each wait began; Sleeping ... "
			"Other: what it did during the waits (Running: its CPU samples' periods; "
			"each state counts at most the wait's length per wait; Other: no "
			"recorded activity)");
	rec_vi_cut(v, t, v->o.top);
	return REC_OK;
}

const view_impl rec_view_contention_lock = {
	"contention-by-lock",
	"lock waits per lock: waits, total, max, p99, holders and what they did meanwhile",
	false, sizeof(lock_state), lk_init, lk_add, lk_end_input, lk_finish, lk_free, lk_wants,
	rec_vi_act_digests,
};

const view_impl rec_view_contention_site = {
	"contention-by-site",
	"lock waits per waiter call site and lock, with the holders and what they did",
	false, sizeof(lock_state), lk_init, lk_add, lk_end_input, lk_finish, lk_free, lk_wants,
	rec_vi_act_digests,
};
