/* SPDX-License-Identifier: MIT */
/*
 * rec-timeline - export a recording to the Chrome trace-event JSON format
 * (the JSON object form) that Perfetto's UI and chrome://tracing open: one
 * track per thread, duration events as complete ("X") slices, other events
 * as instants ("i"), rec.Counter/rec.Gauge as counter tracks ("C"), lock
 * waits as slices named by the lock.  Streams: events are written in file
 * order as they are read, memory does not grow with the events.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/tools.h"
#include "rec/analysis.h"
#include "rec/rec.h"

/* ---- per-type cache ------------------------------------------------------------ */

enum fkind { F_BOOL, F_U, F_I, F_HEX, F_F, F_STR, F_BLOB, F_TS, F_DUR, F_THREAD, F_STACK, F_UNKNOWN,
	     F_DROP_REASON, F_DROP_TYPE /* rec.Dropped's reason and type */ };
enum ekind { E_SLICE, E_INSTANT, E_COUNTER, E_GAUGE, E_LOCK, E_PROC, E_PROGRAM };

typedef struct ttype {
	bool valid;
	uint64_t chunk_off;
	uint32_t gen, type_id;
	const rec_type *type;
	uint8_t ekind;
	char *name_json;   /* "\"name\"" */
	char *cat_json;    /* "\"cat\"" */
	uint32_t nfields;
	uint8_t *fkind;
	char **key_json;   /* "\"key\": " */
	int name_field;    /* counters: "name"; lock: "lockName" */
	int value_field, max_field, addr_field;
	/* rec.ProcessStats: the fields drawn as counter tracks */
	int rss_field, threads_field, user_field, system_field;
} ttype;

#define CACHE_SIZE 256u
static ttype g_cache[CACHE_SIZE];
static uint32_t g_gen = 1;

static enum fkind field_kind(uint32_t type, uint32_t unit)
{
	switch (type) {
	case REC_TYPE_BOOL: return F_BOOL;
	case REC_TYPE_U8: case REC_TYPE_U16: case REC_TYPE_U32: case REC_TYPE_U64:
		return unit == REC_UNIT_ADDRESS ? F_HEX : F_U;
	case REC_TYPE_I8: case REC_TYPE_I16: case REC_TYPE_I32: case REC_TYPE_I64:
		return unit == REC_UNIT_ADDRESS ? F_HEX : F_I;
	case REC_TYPE_F32: case REC_TYPE_F64: return F_F;
	case REC_TYPE_STRING: case REC_TYPE_TEXT: return F_STR;
	case REC_TYPE_BLOB: return F_BLOB;
	case REC_TYPE_TIMESTAMP: return F_TS;
	case REC_TYPE_DURATION: return F_DUR;
	case REC_TYPE_THREAD: return F_THREAD;
	case REC_TYPE_STACK: return F_STACK;
	default: return F_UNKNOWN;
	}
}

static void ttype_free(ttype *t)
{
	for (uint32_t i = 0; i < t->nfields; i++)
		free(t->key_json[i]);
	free(t->key_json);
	free(t->fkind);
	free(t->name_json);
	free(t->cat_json);
	memset(t, 0, sizeof *t);
}

static int find_field(const rec_type *t, const char *name, uint32_t type)
{
	for (uint32_t i = 0; i < t->field_count; i++)
		if (t->fields[i].name && strcmp(t->fields[i].name, name) == 0 &&
		    (!type || t->fields[i].type == type))
			return (int)i;
	return -1;
}

static void ttype_compile(ttype *tt, const rec_event *ev)
{
	const rec_type *t = ev->type;
	ttype_free(tt);
	tt->valid = true;
	tt->gen = g_gen;
	tt->chunk_off = ev->chunk->offset;
	tt->type_id = t->id;
	tt->type = t;
	const char *name = t->name ? t->name : "";
	tt->name_json = rec_cli_json_quoted(name, "");
	tt->cat_json = rec_cli_json_quoted(t->category && *t->category ? t->category : "rec", "");
	tt->nfields = t->field_count;
	tt->fkind = rec_cli_xmalloc(t->field_count + 1);
	tt->key_json = rec_cli_xmalloc((t->field_count + 1) * sizeof *tt->key_json);
	for (uint32_t i = 0; i < t->field_count; i++) {
		tt->fkind[i] = (uint8_t)field_kind(t->fields[i].type, t->fields[i].unit);
		tt->key_json[i] = rec_cli_json_quoted(t->fields[i].name, ": ");
		if (tt->fkind[i] == F_U && strcmp(name, "rec.Dropped") == 0 && t->fields[i].name) {
			if (strcmp(t->fields[i].name, "reason") == 0)
				tt->fkind[i] = F_DROP_REASON;
			else if (strcmp(t->fields[i].name, "type") == 0)
				tt->fkind[i] = F_DROP_TYPE;
		}
	}
	tt->name_field = tt->value_field = tt->max_field = tt->addr_field = -1;
	if (strcmp(name, "rec.Counter") == 0 || strcmp(name, "rec.Gauge") == 0) {
		tt->name_field = find_field(t, "name", REC_TYPE_STRING);
		tt->value_field = find_field(t, "value", 0);
		if (name[4] == 'G')
			tt->max_field = find_field(t, "max", 0);
		if (tt->name_field >= 0 && tt->value_field >= 0) {
			tt->ekind = name[4] == 'G' ? E_GAUGE : E_COUNTER;
			return;
		}
	}
	if (strcmp(name, "rec.Process") == 0 &&
	    (tt->name_field = find_field(t, "program", REC_TYPE_STRING)) >= 0) {
		tt->ekind = E_PROGRAM;
		return;
	}
	if (strcmp(name, "rec.ProcessStats") == 0) {
		tt->rss_field = find_field(t, "rss", 0);
		tt->threads_field = find_field(t, "threads", 0);
		tt->user_field = find_field(t, "cpuUser", 0);
		tt->system_field = find_field(t, "cpuSystem", 0);
		tt->ekind = E_PROC;
		return;
	}
	if (strcmp(name, "rec.LockWait") == 0 && (t->flags & REC_EVENT_HAS_DURATION)) {
		tt->name_field = find_field(t, "lockName", REC_TYPE_STRING);
		tt->addr_field = find_field(t, "lockAddress", 0);
		tt->ekind = E_LOCK;
		return;
	}
	tt->ekind = (t->flags & REC_EVENT_HAS_DURATION) ? E_SLICE : E_INSTANT;
}

static inline ttype *ttype_lookup(const rec_event *ev)
{
	uint64_t off = ev->chunk->offset;
	uint32_t id = ev->type->id;
	uint64_t h = (off * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)id * 0xC2B2AE3D27D4EB4Full);
	ttype *t = &g_cache[(h >> 40) & (CACHE_SIZE - 1)];
	if (!t->valid || t->chunk_off != off || t->type_id != id || t->gen != g_gen ||
	    t->type != ev->type)
		ttype_compile(t, ev);
	return t;
}

/* ---- threads seen (for thread_name metadata) ---------------------------------------- */

typedef struct tslot {
	uint64_t key;  /* pid << 32 ^ tid, +1 (0 = empty) */
	uint64_t name_hash;
} tslot;

static tslot *g_threads;
static size_t g_tcap, g_tn;

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static uint64_t hash_str(const char *s) { return hash_bytes(s, strlen(s)) | 1; }

/* The slot of key (inserted if absent, name_hash 0). */
static tslot *thread_slot(uint64_t key)
{
	if ((g_tn + 1) * 2 > g_tcap) {
		size_t nc = g_tcap ? g_tcap * 2 : 256;
		tslot *s = rec_cli_xmalloc(nc * sizeof *s);
		memset(s, 0, nc * sizeof *s);
		for (size_t i = 0; i < g_tcap; i++) {
			if (!g_threads[i].key)
				continue;
			size_t j = (g_threads[i].key * 0x9E3779B97F4A7C15ull >> 20) & (nc - 1);
			while (s[j].key)
				j = (j + 1) & (nc - 1);
			s[j] = g_threads[i];
		}
		free(g_threads);
		g_threads = s;
		g_tcap = nc;
	}
	size_t j = (key * 0x9E3779B97F4A7C15ull >> 20) & (g_tcap - 1);
	while (g_threads[j].key && g_threads[j].key != key)
		j = (j + 1) & (g_tcap - 1);
	if (!g_threads[j].key) {
		g_threads[j].key = key;
		g_threads[j].name_hash = 0;
		g_tn++;
	}
	return &g_threads[j];
}

/* ---- output ------------------------------------------------------------------------------ */

static int64_t g_base;       /* wall ns of ts 0 */
static bool g_have_base;
static bool g_first = true;  /* no event written yet */
static uint64_t g_written;

/* wall_ns - g_base, checked: wall times of two chunks (or a damaged tick)
 * can be further apart than an int64_t holds; saturate instead of wrapping. */
static int64_t since_base(int64_t wall_ns)
{
	int64_t d;
	if (__builtin_sub_overflow(wall_ns, g_base, &d))
		return wall_ns < g_base ? INT64_MIN : INT64_MAX;
	return d;
}

static void sep(void)
{
	if (g_first)
		g_first = false;
	else
		REC_OUT_LIT(",\n");
}

/* ns as microseconds with 3 decimals: "1234.567", "-0.001". */
static void out_us(int64_t ns)
{
	char *p = rec_out_reserve(32);
	size_t n = 0;
	uint64_t v;
	if (ns < 0) {
		p[n++] = '-';
		v = (uint64_t)0 - (uint64_t)ns;
	} else {
		v = (uint64_t)ns;
	}
	n += rec_fmt_u64(p + n, v / 1000);
	unsigned f = (unsigned)(v % 1000);
	p[n++] = '.';
	p[n++] = (char)('0' + f / 100);
	p[n++] = (char)('0' + f / 10 % 10);
	p[n++] = (char)('0' + f % 10);
	rec_out_commit(n);
}

static void out_frame(const rec_frame *fr)
{
	if (!fr) {
		REC_OUT_LIT("null");
		return;
	}
	char buf[4096];
	size_t n = rec_frame_format(fr, 0, buf, sizeof buf);
	rec_out_json_string(buf, n);
}

static void out_stack(const rec_stack *st)
{
	if (!st) {
		REC_OUT_LIT("null");
		return;
	}
	rec_out_char('[');
	for (uint32_t i = 0; i < st->depth; i++) {
		if (i)
			rec_out_char(',');
		out_frame(st->frames ? st->frames[i] : NULL);
	}
	rec_out_char(']');
}

static void out_value(uint8_t kind, const rec_value *v, const rec_event *ev)
{
	if (!v->present) {
		REC_OUT_LIT("null");
		return;
	}
	switch ((enum fkind)kind) {
	case F_BOOL:
		if (v->v.u)
			REC_OUT_LIT("true");
		else
			REC_OUT_LIT("false");
		break;
	case F_U: case F_DROP_REASON: case F_DROP_TYPE: rec_out_u64(v->v.u); break;
	case F_I: rec_out_i64(v->v.i); break;
	case F_HEX:
		rec_out_char('"');
		rec_out_hex(v->v.u);
		rec_out_char('"');
		break;
	case F_F: rec_out_json_double(v->v.f); break;
	case F_STR:
		if (v->v.s.ptr)
			rec_out_json_string(v->v.s.ptr, v->v.s.len);
		else
			REC_OUT_LIT("null");
		break;
	case F_BLOB: rec_out_hex_bytes_json(v->v.s.ptr, v->v.s.len); break;
	case F_TS: rec_out_iso_quoted(rec_chunk_wall_ns(ev->chunk, v->v.u)); break;
	case F_DUR:
		rec_out_i64(rec_ticks_to_ns(v->v.u > INT64_MAX ? INT64_MAX : (int64_t)v->v.u,
					    ev->chunk->tick_frequency));
		break;
	case F_THREAD: rec_out_thread_json(v->v.thread); break;
	case F_STACK: out_stack(v->v.stack); break;
	case F_UNKNOWN: REC_OUT_LIT("null"); break;
	}
}

/* After rec.Dropped's reason and type, their names as rec-print --json
 * gives them ("reasonName", "typeName"; null when not known). */
static void out_drop_name(uint8_t kind, const rec_value *v, const rec_event *ev)
{
	const char *n = NULL;
	if (kind == F_DROP_REASON) {
		REC_OUT_LIT(", \"reasonName\": ");
		n = v->present ? rec_drop_reason_name(v->v.u) : NULL;
	} else {
		REC_OUT_LIT(", \"typeName\": ");
		n = v->present && v->v.u ? rec_cli_chunk_type_name(ev, v->v.u) : NULL;
	}
	if (n)
		rec_out_json_string(n, strlen(n));
	else
		REC_OUT_LIT("null");
}

/* The fields (and the stack) as "key": value pairs, comma-separated. */
static void out_fields(const ttype *tt, const rec_event *ev, bool first)
{
	uint32_t n = ev->value_count < tt->nfields ? ev->value_count : tt->nfields;
	for (uint32_t i = 0; i < n; i++) {
		if (!first)
			REC_OUT_LIT(", ");
		first = false;
		rec_out_str(tt->key_json[i]);
		out_value(tt->fkind[i], &ev->values[i], ev);
		if (tt->fkind[i] == F_DROP_REASON || tt->fkind[i] == F_DROP_TYPE)
			out_drop_name(tt->fkind[i], &ev->values[i], ev);
	}
	if (ev->type->flags & REC_EVENT_HAS_STACK) {
		if (!first)
			REC_OUT_LIT(", ");
		REC_OUT_LIT("\"stack\": ");
		out_stack(ev->stack);
	}
}

static void out_args(const ttype *tt, const rec_event *ev)
{
	REC_OUT_LIT(", \"args\": {");
	out_fields(tt, ev, true);
	rec_out_char('}');
}

static void out_pid_tid(uint32_t pid, uint64_t tid)
{
	REC_OUT_LIT(", \"pid\": ");
	rec_out_u64(pid);
	REC_OUT_LIT(", \"tid\": ");
	rec_out_u64(tid);
}

/* thread_name (and, for a new pid, process_name) metadata before a thread's
 * first event, and again when its name changes. */
static void note_thread(uint32_t pid, const rec_thread *t)
{
	tslot *pslot = thread_slot(((uint64_t)pid << 32 | 0xFFFFFFFFu) + 1);
	if (!pslot->name_hash) {
		pslot->name_hash = 1;
		sep();
		REC_OUT_LIT("{\"name\": \"process_name\", \"ph\": \"M\"");
		out_pid_tid(pid, 0);
		REC_OUT_LIT(", \"args\": {\"name\": \"pid ");
		rec_out_u64(pid);
		REC_OUT_LIT("\"}}");
	}
	if (!t)
		return;
	const char *name = t->name && *t->name ? t->name : "";
	tslot *s = thread_slot((((uint64_t)pid << 32) ^ t->os_tid) + 1);
	uint64_t h = hash_str(name);
	if (s->name_hash == h)
		return;
	s->name_hash = h;
	sep();
	REC_OUT_LIT("{\"name\": \"thread_name\", \"ph\": \"M\"");
	out_pid_tid(pid, t->os_tid);
	REC_OUT_LIT(", \"args\": {\"name\": ");
	if (*name) {
		rec_out_json_cstr(name);
	} else {
		REC_OUT_LIT("\"tid ");
		rec_out_u64(t->os_tid);
		rec_out_char('"');
	}
	REC_OUT_LIT("}}");
}

/* A JSON string of s[0..len) followed by suffix (inside the quotes). */
static void out_json_suffixed(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);
	char *b = rec_cli_xmalloc(len + n + 1);
	memcpy(b, s, len);
	memcpy(b + len, suffix, n + 1);
	rec_out_json_string(b, len + n);
	free(b);
}

/* One counter event {"name": NAME, "ph": "C", ..., "args": {"value": V}}. */
static void out_counter_u64(const char *name, const rec_event *ev, uint32_t pid, uint64_t v)
{
	REC_OUT_LIT("{\"name\": ");
	rec_out_json_cstr(name);
	REC_OUT_LIT(", \"cat\": \"rec/Process\", \"ph\": \"C\", \"ts\": ");
	out_us(since_base(ev->wall_ns));
	out_pid_tid(pid, 0);
	REC_OUT_LIT(", \"args\": {\"value\": ");
	rec_out_u64(v);
	REC_OUT_LIT("}}");
}

static uint64_t field_u64(const rec_event *ev, int i, bool *ok)
{
	if (i < 0 || (uint32_t)i >= ev->value_count || !ev->values[i].present) {
		*ok = false;
		return 0;
	}
	return ev->values[i].v.u;
}

/* ev as an instant of the whole process (its fields as args). */
static void write_process_instant(const ttype *tt, const rec_event *ev, uint32_t pid)
{
	REC_OUT_LIT("{\"name\": ");
	rec_out_str(tt->name_json);
	REC_OUT_LIT(", \"cat\": ");
	rec_out_str(tt->cat_json);
	REC_OUT_LIT(", \"ph\": \"i\", \"s\": \"p\", \"ts\": ");
	out_us(since_base(ev->wall_ns));
	out_pid_tid(pid, 0);
	out_args(tt, ev);
	rec_out_char('}');
}

/* The previous rec.ProcessStats of the run being written (CPU use is the
 * difference of the cumulative times between two samples of one run). */
static struct {
	bool have;
	uint64_t run_id;
	int64_t wall_ns;
	uint64_t cpu_ns;
} g_prev_proc;

/* rec.ProcessStats as counter tracks: "process rss" (bytes), "process
 * threads", and "process cpu %" (user + system CPU over the wall time since
 * the run's previous sample, 100 = one core busy).  Each also stays an
 * instant with every field in its args. */
static void write_process_stats(const ttype *tt, const rec_event *ev, uint32_t pid)
{
	bool first = true; /* write_event wrote the first separator */
	bool ok = true;
	uint64_t rss = field_u64(ev, tt->rss_field, &ok);
	if (ok) {
		first = false;
		out_counter_u64("process rss", ev, pid, rss);
	}
	ok = true;
	uint64_t thr = field_u64(ev, tt->threads_field, &ok);
	if (ok) {
		if (!first)
			sep();
		first = false;
		out_counter_u64("process threads", ev, pid, thr);
	}
	ok = true;
	uint64_t cpu = field_u64(ev, tt->user_field, &ok) + field_u64(ev, tt->system_field, &ok);
	if (ok) {
		if (g_prev_proc.have && g_prev_proc.run_id == ev->chunk->run_id &&
		    ev->wall_ns > g_prev_proc.wall_ns && cpu >= g_prev_proc.cpu_ns) {
			double pct = (double)(cpu - g_prev_proc.cpu_ns) * 100.0 /
				     (double)(ev->wall_ns - g_prev_proc.wall_ns);
			if (!first)
				sep();
			first = false;
			REC_OUT_LIT("{\"name\": \"process cpu %\", \"cat\": \"rec/Process\", "
				    "\"ph\": \"C\", \"ts\": ");
			out_us(since_base(ev->wall_ns));
			out_pid_tid(pid, 0);
			REC_OUT_LIT(", \"args\": {\"value\": ");
			rec_out_json_double(pct);
			REC_OUT_LIT("}}");
		}
		g_prev_proc.have = true;
		g_prev_proc.run_id = ev->chunk->run_id;
		g_prev_proc.wall_ns = ev->wall_ns;
		g_prev_proc.cpu_ns = cpu;
	}
	if (!first)
		sep();
	write_process_instant(tt, ev, pid);
}

/* rec.Process: the process track is named by the program ("NAME" instead
 * of "pid N": a viewer shows the pid beside it), again when it changes (an
 * exec, a file of several programs); the instant keeps every field. */
static void write_program(const ttype *tt, const rec_event *ev, uint32_t pid)
{
	const rec_value *v = &ev->values[tt->name_field];
	if ((uint32_t)tt->name_field < ev->value_count && v->present && v->v.s.ptr && v->v.s.len) {
		tslot *pslot = thread_slot(((uint64_t)pid << 32 | 0xFFFFFFFFu) + 1);
		uint64_t h = hash_bytes(v->v.s.ptr, v->v.s.len) | 2; /* 1: "pid N" */
		if (pslot->name_hash != h) {
			pslot->name_hash = h;
			REC_OUT_LIT("{\"name\": \"process_name\", \"ph\": \"M\"");
			out_pid_tid(pid, 0);
			REC_OUT_LIT(", \"args\": {\"name\": ");
			rec_out_json_string(v->v.s.ptr, v->v.s.len);
			REC_OUT_LIT("}}");
			sep();
		}
	}
	write_process_instant(tt, ev, pid);
}

static void write_event(const rec_event *ev)
{
	ttype *tt = ttype_lookup(ev);
	uint32_t pid = ev->chunk->pid;
	if (!g_have_base) {
		const rec_chunk_info *c = ev->chunk;
		g_base = c->event_count ? rec_chunk_wall_ns(c, c->first_ticks) : ev->wall_ns;
		g_have_base = true;
	}
	note_thread(pid, ev->thread);
	uint64_t tid = ev->thread ? ev->thread->os_tid : 0;
	sep();
	g_written++;
	switch ((enum ekind)tt->ekind) {
	case E_COUNTER:
	case E_GAUGE: {
		const rec_value *nv = &ev->values[tt->name_field];
		REC_OUT_LIT("{\"name\": ");
		if ((uint32_t)tt->name_field < ev->value_count && nv->present && nv->v.s.ptr)
			rec_out_json_string(nv->v.s.ptr, nv->v.s.len);
		else
			REC_OUT_LIT("\"(unnamed)\"");
		REC_OUT_LIT(", \"cat\": ");
		rec_out_str(tt->cat_json);
		REC_OUT_LIT(", \"ph\": \"C\", \"ts\": ");
		out_us(since_base(ev->wall_ns));
		out_pid_tid(pid, tid);
		REC_OUT_LIT(", \"args\": {\"value\": ");
		if ((uint32_t)tt->value_field < ev->value_count)
			out_value(tt->fkind[tt->value_field], &ev->values[tt->value_field], ev);
		else
			REC_OUT_LIT("null");
		REC_OUT_LIT("}}");
		/* A gauge's max is a track of its own: the series of one counter
		 * event are drawn stacked, and value + max means nothing. */
		if (tt->max_field >= 0 && (uint32_t)tt->max_field < ev->value_count) {
			sep();
			REC_OUT_LIT("{\"name\": ");
			if ((uint32_t)tt->name_field < ev->value_count && nv->present && nv->v.s.ptr)
				out_json_suffixed(nv->v.s.ptr, nv->v.s.len, " (max)");
			else
				REC_OUT_LIT("\"(unnamed) (max)\"");
			REC_OUT_LIT(", \"cat\": ");
			rec_out_str(tt->cat_json);
			REC_OUT_LIT(", \"ph\": \"C\", \"ts\": ");
			out_us(since_base(ev->wall_ns));
			out_pid_tid(pid, tid);
			REC_OUT_LIT(", \"args\": {\"max\": ");
			out_value(tt->fkind[tt->max_field], &ev->values[tt->max_field], ev);
			REC_OUT_LIT("}}");
		}
		return;
	}
	case E_PROC:
		write_process_stats(tt, ev, pid);
		return;
	case E_PROGRAM:
		write_program(tt, ev, pid);
		return;
	case E_LOCK:
	case E_SLICE:
		REC_OUT_LIT("{\"name\": ");
		if (tt->ekind == E_LOCK) {
			const rec_value *nv = tt->name_field >= 0 && (uint32_t)tt->name_field < ev->value_count
						      ? &ev->values[tt->name_field] : NULL;
			const rec_value *av = tt->addr_field >= 0 && (uint32_t)tt->addr_field < ev->value_count
						      ? &ev->values[tt->addr_field] : NULL;
			if (nv && nv->present && nv->v.s.ptr && nv->v.s.len)
				rec_out_json_string(nv->v.s.ptr, nv->v.s.len);
			else if (av && av->present) {
				REC_OUT_LIT("\"lock ");
				rec_out_hex(av->v.u);
				rec_out_char('"');
			} else
				REC_OUT_LIT("\"lock\"");
		} else {
			rec_out_str(tt->name_json);
		}
		REC_OUT_LIT(", \"cat\": ");
		rec_out_str(tt->cat_json);
		REC_OUT_LIT(", \"ph\": \"X\", \"ts\": ");
		out_us(since_base(ev->wall_ns));
		REC_OUT_LIT(", \"dur\": ");
		out_us(ev->duration_ns > 0 ? ev->duration_ns : 0);
		out_pid_tid(pid, tid);
		if (tt->ekind == E_LOCK) {
			REC_OUT_LIT(", \"args\": {\"type\": ");
			rec_out_str(tt->name_json);
			out_fields(tt, ev, false);
			REC_OUT_LIT("}}");
			return;
		}
		out_args(tt, ev);
		rec_out_char('}');
		return;
	case E_INSTANT:
		REC_OUT_LIT("{\"name\": ");
		rec_out_str(tt->name_json);
		REC_OUT_LIT(", \"cat\": ");
		rec_out_str(tt->cat_json);
		if (ev->thread)
			REC_OUT_LIT(", \"ph\": \"i\", \"s\": \"t\", \"ts\": ");
		else
			REC_OUT_LIT(", \"ph\": \"i\", \"s\": \"p\", \"ts\": ");
		out_us(since_base(ev->wall_ns));
		out_pid_tid(pid, tid);
		out_args(tt, ev);
		rec_out_char('}');
		return;
	}
}

/* ---- the run ---------------------------------------------------------------------------- */

/* The selection: --events, --from/--to (on the event's start), --thread. */
static const rec_timeline_opts *g_o;
static rec_cli_typesel g_tsel;
static int64_t g_lo = INT64_MIN, g_hi = INT64_MAX;
static const rec_chunk_info *g_noted;

static int write_one(void *ctx, const rec_event *ev)
{
	(void)ctx;
	if (g_o->nevents && ev->chunk != g_noted) { /* the names of a pipe's chunks */
		g_noted = ev->chunk;
		rec_cli_typesel_chunk(&g_tsel, ev->chunk);
	}
	if (g_o->nevents && !rec_cli_typesel_type(&g_tsel, ev->type))
		return REC_EXIT_OK;
	if (ev->wall_ns < g_lo || ev->wall_ns >= g_hi)
		return REC_EXIT_OK;
	if (g_o->thread && !rec_thread_selected(g_o->thread, ev->thread))
		return REC_EXIT_OK;
	write_event(ev);
	return REC_EXIT_OK;
}


static int timeline(const rec_timeline_opts *o, const rec_cli_input *in, FILE *out)
{
	/* A name no type of the input has is a usage error before any output
	 * (a pipe: after reading it, as rec-print does). */
	bool scanned = !o->nevents || rec_cli_typesel_scan(&g_tsel, in);
	if (o->nevents && scanned && g_tsel.nseen && rec_cli_typesel_check(&g_tsel) != REC_EXIT_OK)
		return REC_EXIT_USAGE;
	rec_cli_window_bounds(&o->window, in, &g_lo, &g_hi);
	rec_reader *r = rec_cli_input_open(in, REC_READ_ORDERED);
	if (!r)
		return REC_EXIT_DATA;
	FILE *f = rec_cli_export_open(o->output, out);
	if (!f) {
		rec_reader_close(r);
		return REC_EXIT_DATA;
	}
	rec_cli_set_streams(f, rec_cli_err());
	g_have_base = rec_cli_recording_start(in, false, &g_base);

	REC_OUT_LIT("{\"traceEvents\": [\n");
	int rc = rec_cli_each_event(r, in->name, write_one, NULL);
	if (o->nevents && !scanned && rc == REC_EXIT_OK && g_tsel.nseen &&
	    rec_cli_typesel_check(&g_tsel) != REC_EXIT_OK)
		rc = REC_EXIT_USAGE; /* standard input: known only now */
	rec_reader_stats rs;
	rec_reader_get_stats(r, &rs);
	rec_reader_close(r);
	REC_OUT_LIT("\n],\n\"displayTimeUnit\": \"ns\",\n\"metadata\": {\"source\": \"rec-timeline\", \"version\": ");
	rec_out_json_cstr(rec_version_string());
	REC_OUT_LIT(", \"file\": ");
	rec_out_json_cstr(in->name);
	/* ns since the epoch are above 2^53: a string, so that JavaScript's
	 * numbers do not round it (a number would lose up to 128 ns). */
	REC_OUT_LIT(", \"recordingStartWallNs\": \"");
	rec_out_i64(g_have_base ? g_base : 0);
	rec_out_char('"');
	REC_OUT_LIT(", \"recordingStart\": ");
	if (g_have_base)
		rec_out_iso_quoted(g_base);
	else
		REC_OUT_LIT("null");
	REC_OUT_LIT(", \"events\": ");
	rec_out_u64(g_written);
	REC_OUT_LIT(", \"chunks\": ");
	rec_out_u64(rs.chunks);
	REC_OUT_LIT(", \"damagedChunks\": ");
	rec_out_u64(rs.chunks_damaged);
	REC_OUT_LIT("}}\n");
	rec_out_flush();
	rec_cli_set_streams(out, rec_cli_err());
	if (!rec_cli_export_close(f, o->output, out))
		rc = REC_EXIT_DATA;
	return rc;
}

int rec_timeline_run(const rec_timeline_opts *o, const rec_cli_input *in, FILE *out, FILE *err)
{
	if (!out)
		out = stdout;
	rec_cli_set_streams(out, err);
	g_gen++; /* forget the types of an earlier run */
	g_have_base = false;
	g_base = 0;
	g_first = true;
	g_written = 0;
	memset(&g_prev_proc, 0, sizeof g_prev_proc);
	g_o = o;
	g_noted = NULL;
	rec_cli_typesel_init(&g_tsel, o->events, o->nevents, 0);
	int rc = timeline(o, in, out);
	rec_cli_typesel_free(&g_tsel);
	g_o = NULL;
	rec_out_flush();
	for (size_t i = 0; i < CACHE_SIZE; i++)
		ttype_free(&g_cache[i]);
	free(g_threads);
	g_threads = NULL;
	g_tcap = g_tn = 0;
	return rc;
}

/* ---- main: the arguments ------------------------------------------------------------------ */
#ifndef REC_TOOL_NO_MAIN

static const char usage_text[] =
	"Usage: rec-timeline [OPTIONS] FILE\n"
	"Export a rec recording to the Chrome trace-event JSON format, which\n"
	"Perfetto's UI (ui.perfetto.dev, \"Open trace file\") and chrome://tracing\n"
	"open.  FILE may be '-' for standard input.\n"
	"\n"
	"  one track per thread (pid = the recorded process, tid = the OS thread id,\n"
	"  named by \"thread_name\" metadata events); events with a duration are\n"
	"  complete slices (\"X\"), rec.LockWait slices are named by the lock; other\n"
	"  events are instants (\"i\", thread-scoped, process-scoped without a\n"
	"  thread); rec.Counter and rec.Gauge are counter tracks (\"C\") named by the\n"
	"  counter (a gauge's max is the track \"NAME (max)\"), rec.ProcessStats the\n"
	"  tracks \"process rss\", \"process threads\" and \"process cpu %\" (100 = one\n"
	"  core, since the previous sample).  Events are in time order.\n"
	"  Every field is in the event's args (addresses as hex strings,\n"
	"  durations in ns, timestamps as ISO 8601 strings), the stack as \"stack\"\n"
	"  (leaf first).  ts and dur are microseconds with 3 decimals (ns precision)\n"
	"  since the recording's first event (metadata.recordingStartWallNs, ns\n"
	"  since the epoch as a string: above 2^53, a JSON number would round).\n"
	"\n"
	"Options:\n"
	"  -o, --output FILE  write there instead of standard output\n"
	"  --events NAME[,NAME...]  only events whose type name matches NAME (a\n"
	"                     name or a glob: 'rec.Lock*'); repeatable\n"
	"  --from T, --to T   only events that start in [from, to): T is an offset\n"
	"                     from the recording's first event (10ms, 1.5s) or a\n"
	"                     time (2026-12-02T10:14:03.5Z)\n"
	"  --thread NAME      only events of threads named NAME (a glob) or with OS\n"
	"                     tid NAME; process-wide events (counters) are left out\n"
	"  -h, --help         show this help and exit\n"
	"  --version          show the library version and exit\n"
	"\n"
	"Integers above 2^53 (large counters) lose precision in JavaScript parsers.\n"
	"Names of event types, categories and fields longer than 4096 bytes are cut\n"
	"to their first 4096 bytes (a character cut in two becomes U+FFFD); thread,\n"
	"lock and counter names and string values are written whole.\n"
	"-o/--output FILE that cannot be written (a missing directory, a full disk):\n"
	"\"rec-timeline: FILE: REASON\" on stderr, exit 1.\n"
	"Exit status: 0 success, 1 damaged or unreadable input (the JSON is still\n"
	"complete, with every readable event) or a failed write, 2 usage error.\n";

enum { OPT_EVENTS = 256, OPT_FROM, OPT_TO, OPT_THREAD };

static const struct option long_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "events", required_argument, NULL, OPT_EVENTS },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "thread", required_argument, NULL, OPT_THREAD },
	REC_CLI_COMMON_OPTIONS,
};

int main(int argc, char **argv)
{
	rec_cli_init("rec-timeline");
	rec_cli_note_unsymbolized = true; /* frames without names: say so on stderr */
	rec_timeline_opts o = { 0 };
	rec_cli_list events = { 0 };
	int c;
	while ((c = rec_cli_getopt(argc, argv, "ho:", long_opts)) != -1) {
		switch (c) {
		case 'o': o.output = rec_cli_opt_nonempty("--output", "file name", optarg); break;
		case OPT_EVENTS: rec_cli_opt_list(&events, "--events", "name", optarg); break;
		case OPT_FROM: rec_cli_window_opt(&o.window, false, optarg); break;
		case OPT_TO: rec_cli_window_opt(&o.window, true, optarg); break;
		case OPT_THREAD: o.thread = rec_cli_opt_nonempty("--thread", "value", optarg); break;
		default: rec_cli_common_option(c, usage_text);
		}
	}
	rec_cli_input in = { .name = rec_cli_one_file(argc, argv) };
	rec_cli_window_check(&o.window, rec_cli_input_rereadable(&in));
	o.events = (const char *const *)events.items;
	o.nevents = events.count;
	int rc = rec_timeline_run(&o, &in, NULL, NULL);
	rec_cli_list_free(&events);
	return rec_cli_finish(rc);
}
#endif /* REC_TOOL_NO_MAIN */
