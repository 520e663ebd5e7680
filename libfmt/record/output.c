/* SPDX-License-Identifier: MIT */
/*
 * output.c - where the recorder's chunks go.  The sink the writer calls
 * (rec_out_write/rec_out_flush: the recording's file, fd or the program's sink)
 * with its write-failure accounting (a chunk that cannot be written is
 * discarded and counted; rec.WriteFailed and rec.Dropped say so once a
 * write succeeds again; a removed file is reopened), and flight mode's
 * chunk store (chunks kept in memory within max_size/max_age, written out
 * by a dump, at exit, or on the dump signal).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/recorder_internal.h"

/* The dump signal of flight mode: installed by the first flight recorder
 * that opens with one (rec_g_sig_owner, g_old_sa: what it replaced), until
 * that recorder closes; the handler only sets rec_g_dump_pending and wakes
 * the owner's background thread, which dumps. */
int rec_g_dump_pending; /* atomic: set by the signal handler */
rec_recorder *rec_g_sig_owner;
static struct sigaction g_old_sa;
static int g_old_sig;

/* ---- flight-recorder chunk store -------------------------------------------------------- */
static void fl_evict(rec_recorder *r, uint64_t now)
{
	/* The newest chunk is always kept. */
	while (r->fl_head && r->fl_head != r->fl_tail && (r->fl_bytes > r->max_size ||
			      (r->max_age_ns && now - r->fl_head->mono_ns > r->max_age_ns))) {
		rec_fchunk *c = r->fl_head;
		r->fl_head = c->next;
		if (!r->fl_head)
			r->fl_tail = NULL;
		r->fl_bytes -= c->len;
		free(c);
	}
}

/* The writer's sink in flight mode: collect bytes, cut them into chunks. */
int rec_flight_write(void *opaque, const void *buf, size_t len)
{
	rec_recorder *r = opaque;
	if (!rec_buf_append(&r->fl_pending, buf, len))
		return -ENOMEM;
	for (;;) {
		rec_buf *p = &r->fl_pending;
		if (p->len < REC_PREFIX_SIZE)
			break;
		uint64_t total = (uint64_t)rec_le32(p->data + REC_HOFF_HEADER_SIZE) +
				 rec_le64(p->data + REC_HOFF_PAYLOAD_SIZE);
		if (p->len < total)
			break;
		rec_fchunk *c = malloc(sizeof *c + total);
		if (!c)
			return -ENOMEM;
		c->next = NULL;
		c->mono_ns = rec_clock_mono_ns();
		c->len = (size_t)total;
		memcpy(c->data, p->data, (size_t)total);
		memmove(p->data, p->data + total, p->len - (size_t)total);
		p->len -= (size_t)total;
		if (r->fl_tail)
			r->fl_tail->next = c;
		else
			r->fl_head = c;
		r->fl_tail = c;
		r->fl_bytes += c->len;
		fl_evict(r, c->mono_ns);
	}
	return 0;
}

rec_status rec_flight_dump(rec_recorder *r, const char *path)
{
	fl_evict(r, rec_clock_mono_ns());
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return REC_ERR_IO;
	rec_status st = REC_OK;
	for (rec_fchunk *c = r->fl_head; c && st == REC_OK; c = c->next) {
		size_t off = 0;
		while (off < c->len) {
			ssize_t n = write(fd, c->data + off, c->len - off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				st = REC_ERR_IO;
				break;
			}
			off += (size_t)n;
		}
	}
	if (close(fd) != 0 && st == REC_OK)
		st = REC_ERR_IO;
	return st;
}

/* At exit, flight recorders still open write what they kept to their path
 * (the program may have forgotten to close them; REC_OUTPUT's recorder is
 * closed by its own atexit handler, which runs first). */
static void flight_atexit(void)
{
	rec_recorder *list[64];
	size_t n = 0;
	pthread_mutex_lock(&rec_g_lock);
	for (rec_recorder *r = rec_g_open; r && n < 64; r = r->g_next)
		if ((r->flags & REC_RECORDER_FLIGHT) && !r->closing)
			list[n++] = r;
	pthread_mutex_unlock(&rec_g_lock);
	for (size_t i = 0; i < n; i++)
		(void)rec_recorder_dump(list[i], NULL);
}

/* Handlers between their look at the owner and their wake of it: the
 * owner's closing waits for none (rec_flight_closing), so a handler never
 * wakes a recorder that is freed. */
static int g_handlers;

static void dump_signal_handler(int sig)
{
	(void)sig;
	const int saved = errno;
	__atomic_store_n(&rec_g_dump_pending, 1, __ATOMIC_RELAXED);
	/* Wake the owner's background thread, which sleeps until its next
	 * deadline (it polled this flag every 50 ms before: issue 22). */
	__atomic_add_fetch(&g_handlers, 1, __ATOMIC_SEQ_CST);
	rec_recorder *o = __atomic_load_n(&rec_g_sig_owner, __ATOMIC_SEQ_CST);
	if (o)
		rec_wake_bg(o);
	__atomic_sub_fetch(&g_handlers, 1, __ATOMIC_SEQ_CST);
	errno = saved;
}

void rec_flight_opened(rec_recorder *r, uint32_t flags)
{
	static int flight_atexit_registered;
	if (!flight_atexit_registered)
		flight_atexit_registered = atexit(flight_atexit) == 0;
	if (!(flags & REC_RECORDER_NO_SIGNAL) && r->dump_signal > 0 && !rec_g_sig_owner) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = dump_signal_handler;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESTART;
		if (sigaction(r->dump_signal, &sa, &g_old_sa) == 0) {
			__atomic_store_n(&rec_g_sig_owner, r, __ATOMIC_RELAXED);
			g_old_sig = r->dump_signal;
		}
	}
}

void rec_flight_atfork_child(void)
{
	/* the child's one thread is in no handler */
	__atomic_store_n(&g_handlers, 0, __ATOMIC_RELAXED);
}

void rec_flight_closing(rec_recorder *r)
{
	if (rec_g_sig_owner == r) {
		sigaction(g_old_sig, &g_old_sa, NULL);
		__atomic_store_n(&rec_g_sig_owner, NULL, __ATOMIC_SEQ_CST);
		/* A handler that saw r before the store above ends within a few
		 * instructions (it takes no lock). */
		while (__atomic_load_n(&g_handlers, __ATOMIC_SEQ_CST))
			sched_yield();
	}
}

/* ---- output: the recorder's sink, write failures ------------------------------------------ */
/* The writer hands every chunk to rec_out_write() in one call (with w_lock held).
 * A chunk that cannot be written is discarded (the file is cut back to the
 * end of the last whole chunk, so the next chunk starts on a boundary) and
 * the writer is told it was written: it never turns sticky, later chunks
 * are tried again, and memory stays bounded.  Its events are counted as
 * dropped now; when a write succeeds again the background thread writes a
 * rec.WriteFailed and a rec.Dropped (reason 4). */
static int wf_kind(int err)
{
	switch (err) {
	case ENOSPC: return REC_WF_ENOSPC;
	case EIO: return REC_WF_EIO;
	case EFBIG: return REC_WF_EFBIG;
	default: return REC_WF_OTHER;
	}
}

/* Queue a report for on_error, once per kind per recorder (delivered by
 * rec_wf_deliver() without locks).  Caller holds w_lock. */
__attribute__((format(printf, 3, 4)))
static void wf_queue_report(rec_recorder *r, int kind, const char *fmt, ...)
{
	rec_output *o = &r->out;
	if (o->kinds_reported & (1u << kind))
		return;
	o->kinds_reported |= 1u << kind;
	o->report_pending |= 1u << kind;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(o->report_msg[kind], sizeof o->report_msg[kind], fmt, ap);
	va_end(ap);
}

/* Background thread, no lock held. */
void rec_wf_deliver(rec_recorder *r)
{
	char msgs[REC_WF_NKINDS][200];
	pthread_mutex_lock(&r->w_lock);
	uint32_t pend = r->out.report_pending;
	r->out.report_pending = 0;
	if (pend)
		memcpy(msgs, r->out.report_msg, sizeof msgs);
	pthread_mutex_unlock(&r->w_lock);
	for (int k = 0; k < REC_WF_NKINDS; k++) {
		if (!(pend & (1u << k)))
			continue;
		if (r->first_error == REC_OK)
			r->first_error = REC_ERR_IO;
		if (r->on_error)
			r->on_error(r->error_opaque, REC_ERR_IO, msgs[k]);
	}
}

static uint64_t chunk_event_count(const void *buf, size_t len)
{
	return len >= REC_HEADER_SIZE_V1 ? rec_le64((const uint8_t *)buf + 48) : 0;
}

void rec_tally_add(rec_type_tally *t, uint32_t id, uint64_t n)
{
	for (uint32_t i = 0; id && i < REC_TALLY_TYPES; i++) {
		if (t->id[i] == 0)
			t->id[i] = id;
		if (t->id[i] == id) {
			t->n[i] += n;
			return;
		}
	}
	t->other += n;
}

static void tally_merge(rec_type_tally *into, const rec_type_tally *from)
{
	for (uint32_t i = 0; i < REC_TALLY_TYPES && from->id[i]; i++)
		rec_tally_add(into, from->id[i], from->n[i]);
	into->other += from->other;
}

/* Events of a chunk that is lost: *events = records other than rec.Dropped
 * and rec.WriteFailed, *dropped = the counts its rec.Dropped records carry
 * (read with the reader; if it cannot, the header's Event_Count), and both
 * by type into *lost: an event under its own type, a rec.Dropped's count
 * under the type it names (its field "type", 0 if it has none). */
static void count_chunk(const void *buf, size_t len, uint64_t *events, uint64_t *dropped,
			rec_type_tally *lost)
{
	*events = chunk_event_count(buf, len);
	*dropped = 0;
	rec_type_tally t;
	memset(&t, 0, sizeof t);
	rec_reader *rd = NULL;
	if (rec_reader_open_mem(&rd, buf, len, "chunk", NULL) != REC_OK) {
		rec_tally_add(lost, 0, *events);
		return;
	}
	uint64_t ev = 0, dr = 0;
	rec_event e;
	rec_status st;
	while ((st = rec_reader_next_event(rd, &e)) == REC_OK) {
		if (e.type->id == REC_TYPE_ID_DROPPED && e.value_count >= 1) {
			dr += e.values[0].v.u;
			uint32_t ty = e.value_count >= 4 && e.values[3].present
					      ? (uint32_t)e.values[3].v.u
					      : 0;
			rec_tally_add(&t, ty, e.values[0].v.u);
		} else if (e.type->id != REC_TYPE_ID_WRITE_FAILED && e.type->id != REC_TYPE_ID_PROCESS) {
			ev++;
			rec_tally_add(&t, e.type->id, 1);
		}
	}
	rec_reader_close(rd);
	if (st == REC_END) {
		*events = ev;
		*dropped = dr;
		tally_merge(lost, &t);
	} else {
		rec_tally_add(lost, 0, *events);
	}
}

void rec_wf_merge(rec_wf_event *into, const rec_wf_event *e)
{
	if (!into->pending) {
		*into = *e;
		into->pending = 1;
		return;
	}
	into->end_ticks = e->end_ticks;
	into->chunks += e->chunks;
	into->events += e->events;
	into->dropped += e->dropped;
	into->bytes += e->bytes;
	tally_merge(&into->lost, &e->lost);
}

/* The file at the path existed: rec_recorder_open() opened it without
 * O_TRUNC (freeing an earlier recording's blocks took 0.5-0.7 ms of the
 * program's start-up here) and put a new empty file in its place
 * (old_fd: closing it frees the blocks), or, where it could not, left it to
 * be emptied in place.  The background thread does either as it starts,
 * before any chunk is written: without w_lock, which the opening thread
 * needs next; rec_out_write() does it first if it runs earlier. */
void rec_out_truncate(rec_recorder *r)
{
	rec_output *o = &r->out;
	if (!__atomic_load_n(&o->trunc_pending, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&o->trunc_lock);
	if (o->trunc_pending && o->old_fd >= 0) {
		close(o->old_fd);
		o->old_fd = -1;
		__atomic_store_n(&o->trunc_pending, 0, __ATOMIC_RELEASE);
	} else if (o->trunc_pending) {
		while (ftruncate(o->fd, 0) != 0) {
			if (errno != EINTR) {
				o->trunc_err = errno;
				break;
			}
		}
		__atomic_store_n(&o->trunc_pending, 0, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&o->trunc_lock);
}

/* w_lock held. */
static void out_truncate_report(rec_recorder *r)
{
	rec_output *o = &r->out;
	int err = o->trunc_err;
	if (!err)
		return;
	o->trunc_err = 0;
	char tmp[128];
	wf_queue_report(r, wf_kind(err),
			"recorder: cannot empty %s (%s): an earlier file's bytes follow the recording",
			r->path, strerror_r(err, tmp, sizeof tmp));
}

int rec_out_write(void *opaque, const void *buf, size_t len)
{
	rec_recorder *r = opaque;
	rec_output *o = &r->out;
	bool ok = true;
	int err = 0;

	rec_out_truncate(r);
	out_truncate_report(r);
	if (o->fd >= 0) {
		const uint8_t *p = buf;
		size_t left = len;
		while (left > 0) {
			ssize_t n = write(o->fd, p, left);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				err = n < 0 ? errno : EIO;
				ok = false;
				break;
			}
			p += n;
			left -= (size_t)n;
		}
	} else {
		int rc = r->sink.write(r->sink.opaque, buf, len);
		if (rc != 0) {
			ok = false;
			err = rc < 0 ? -rc : 0;
		}
	}
	if (ok) {
		o->off += len;
		o->since_chunks++;
		o->since_events += chunk_event_count(buf, len);
		o->since_bytes += len;
		if (o->failing) {
			o->failing = 0;
			o->cur.end_ticks = rec_now_ticks(r);
			rec_wf_merge(&o->done, &o->cur);
		}
		return 0;
	}
	if (o->fd >= 0) {
		/* Cut a partial chunk off (ENOSPC, EFBIG, EIO may leave one). */
		while (ftruncate(o->fd, (off_t)o->off) != 0 && errno == EINTR)
			;
		(void)lseek(o->fd, (off_t)o->off, SEEK_SET);
	}
	uint64_t ev, dr;
	rec_type_tally lost;
	memset(&lost, 0, sizeof lost);
	count_chunk(buf, len, &ev, &dr, &lost);
	if (!o->failing) {
		o->failing = 1;
		memset(&o->cur, 0, sizeof o->cur);
		o->cur.err = err;
		o->cur.start_ticks = rec_now_ticks(r);
		char tmp[128];
		const char *what = err ? strerror_r(err, tmp, sizeof tmp) : "the sink returned an error";
		wf_queue_report(r, wf_kind(err),
				"recorder: writing %s failed: %s; chunks are discarded and their events "
				"counted as dropped until a write succeeds",
				r->path && o->fd >= 0 ? r->path : "the sink", what);
	}
	o->cur.chunks++;
	o->cur.events += ev;
	o->cur.dropped += dr;
	o->cur.bytes += len;
	tally_merge(&o->cur.lost, &lost);
	o->chunks_lost++;
	o->bytes_lost += len;
	__atomic_fetch_add(&r->st_dropped, ev, __ATOMIC_RELAXED);
	return 0; /* the writer goes on: the next chunk is tried */
}

int rec_out_flush(void *opaque)
{
	rec_recorder *r = opaque;
	if (r->out.fd < 0 && r->sink.flush && r->sink.flush(r->sink.opaque) != 0)
		wf_queue_report(r, REC_WF_OTHER, "recorder: the sink's flush failed");
	return 0;
}

/* Once per flush round (w_lock held): was the file removed (st_nlink 0)?
 * Then create a new file at the path (O_EXCL; if a file appeared there
 * meanwhile, append to it) and write on there. */
void rec_out_check_removed(rec_recorder *r)
{
	rec_output *o = &r->out;
	struct stat sb;
	if (o->fd < 0 || !r->path || fstat(o->fd, &sb) != 0 || !S_ISREG(sb.st_mode))
		return;
	uint64_t now = rec_now_ticks(r);
	if (sb.st_nlink > 0) {
		o->chk_ticks = now;
		o->since_chunks = o->since_events = o->since_bytes = 0;
		return;
	}
	int fd = open(r->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EEXIST)
		fd = open(r->path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0) {
		char tmp[128];
		wf_queue_report(r, REC_WF_REOPEN,
				"recorder: %s was removed and cannot be created again (%s); "
				"writing on to the removed file", r->path,
				strerror_r(errno, tmp, sizeof tmp));
		return;
	}
	close(o->fd);
	o->fd = fd;
	off_t end = lseek(fd, 0, SEEK_END);
	o->off = end > 0 ? (uint64_t)end : 0;
	rec_wf_event e = { 1, 0, 1, o->chk_ticks, now, o->since_chunks, o->since_events, 0,
			   o->since_bytes, { { 0 }, { 0 }, 0 } };
	rec_wf_merge(&o->removed, &e);
	o->chk_ticks = now;
	o->since_chunks = o->since_events = o->since_bytes = 0;
	wf_queue_report(r, REC_WF_REMOVED,
			"recorder: %s was removed; the recording goes on in a new file at that path",
			r->path);
}

