/* SPDX-License-Identifier: MIT */
/*
 * types.c - event types: the events-list grammar of the settings
 * (REC_OPTIONS events=..., rec_recorder_options.events: on/off, stack,
 * threshold, throttle=N/UNIT per glob), how a setting applies to a type, and
 * type registration (rec_recorder_register_type; rec_type_declare for the
 * process-wide declared types, bound to the default recorder when it opens).
 * A registered type's handle (rec_type_entry) lives until process exit.
 */
#include <stdlib.h>
#include <string.h>

#include "record/recorder_internal.h"

/* ---- settings (events list) --------------------------------------------------- */
void rec_settings_free(rec_recorder *r)
{
	for (size_t i = 0; i < r->nsettings; i++)
		free(r->settings[i].pattern);
	free(r->settings);
	r->settings = NULL;
	r->nsettings = 0;
}

static bool parse_onoff(const char *v, size_t n, int *out)
{
	if ((n == 2 && memcmp(v, "on", 2) == 0) || (n == 4 && memcmp(v, "true", 4) == 0) ||
	    (n == 1 && v[0] == '1')) {
		*out = 1;
		return true;
	}
	if ((n == 3 && memcmp(v, "off", 3) == 0) || (n == 5 && memcmp(v, "false", 5) == 0) ||
	    (n == 1 && v[0] == '0')) {
		*out = 0;
		return true;
	}
	return false;
}

/* "N/UNIT" (JFR's throttle grammar: N a non-negative integer, UNIT ns, us,
 * ms, s, m, h or d) or "off". */
static bool parse_throttle(const char *v, size_t n, int64_t *count, uint64_t *unit_ns)
{
	if (n == 3 && memcmp(v, "off", 3) == 0) {
		*count = -2;
		*unit_ns = 0;
		return true;
	}
	const char *sl = memchr(v, '/', n);
	if (!sl || sl == v)
		return false;
	uint64_t c = 0;
	for (const char *q = v; q < sl; q++) {
		if (*q < '0' || *q > '9' || c > (UINT64_C(1) << 40))
			return false;
		c = c * 10 + (uint64_t)(*q - '0');
	}
	static const struct { const char *u; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
		{ "m", UINT64_C(60000000000) }, { "h", UINT64_C(3600000000000) },
		{ "d", UINT64_C(86400000000000) },
	};
	size_t ul = (size_t)(v + n - sl - 1);
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (ul == strlen(units[i].u) && memcmp(sl + 1, units[i].u, ul) == 0) {
			*count = (int64_t)c;
			*unit_ns = units[i].ns;
			return true;
		}
	return false;
}

rec_status rec_settings_parse(rec_recorder *r, const char *text)
{
	const char *p = text;
	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		while (n && (*p == ' ' || *p == '\t')) {
			p++;
			n--;
		}
		if (n) {
			rec_setting s = { NULL, 0, false, false, -1, -1, -1, -1, 0 };
			const char *q = p, *qe = p + n;
			const char *c = memchr(q, ':', n);
			size_t plen = c ? (size_t)(c - q) : n;
			if (*q == '-') {
				s.neg = true;
				q++;
				plen--;
			}
			if (plen && q[plen - 1] == '*') {
				s.prefix = true;
				plen--;
			}
			s.pattern = strndup(q, plen);
			s.plen = plen;
			if (!s.pattern)
				return REC_ERR_NOMEM;
			while (c && c < qe) {
				const char *opt = c + 1;
				const char *oe = memchr(opt, ':', (size_t)(qe - opt));
				if (!oe)
					oe = qe;
				const char *eq = memchr(opt, '=', (size_t)(oe - opt));
				bool ok = eq != NULL;
				if (ok) {
					size_t kl = (size_t)(eq - opt), vl = (size_t)(oe - eq - 1);
					if (kl == 9 && memcmp(opt, "threshold", 9) == 0) {
						s.threshold = rec_parse_duration_ns(eq + 1, vl);
						ok = s.threshold >= 0;
					} else if (kl == 5 && memcmp(opt, "stack", 5) == 0) {
						ok = parse_onoff(eq + 1, vl, &s.stack);
					} else if (kl == 7 && memcmp(opt, "enabled", 7) == 0) {
						ok = parse_onoff(eq + 1, vl, &s.enabled);
					} else if (kl == 8 && memcmp(opt, "throttle", 8) == 0) {
						ok = parse_throttle(eq + 1, vl, &s.throttle_n,
								    &s.throttle_unit_ns);
					} else {
						ok = false;
					}
				}
				if (!ok) {
					free(s.pattern);
					return REC_ERR_INVALID_ARG;
				}
				c = oe < qe ? oe : NULL;
			}
			rec_setting *ns = realloc(r->settings, (r->nsettings + 1) * sizeof *ns);
			if (!ns) {
				free(s.pattern);
				return REC_ERR_NOMEM;
			}
			r->settings = ns;
			r->settings[r->nsettings++] = s;
			/* An entry that only throttles limits what it matches
			 * without turning the others off. */
			const bool throttle_only = s.throttle_n != -1 && s.threshold < 0 &&
						   s.stack < 0 && s.enabled < 0;
			if (!s.neg && s.enabled != 0 && !throttle_only)
				r->settings_enable_list = true;
		}
		p = end ? end + 1 : NULL;
	}
	return REC_OK;
}

/* Effective settings of a type named name (*thr_n < 0: not throttled, else
 * *thr_n events per *thr_unit ns). */
static void settings_apply(const rec_recorder *r, const char *name, uint32_t decl_flags,
			   uint64_t *threshold_ns, int *enabled, int *stack, int64_t *thr_n,
			   uint64_t *thr_unit)
{
	*thr_n = -1;
	*thr_unit = 0;
	*enabled = !(decl_flags & REC_DECLARE_OFF) && !r->settings_enable_list;
	*stack = (decl_flags & REC_DECLARE_STACK) != 0;
	size_t nl = strlen(name);
	for (size_t i = 0; i < r->nsettings; i++) {
		const rec_setting *s = &r->settings[i];
		bool match = s->prefix ? (nl >= s->plen && memcmp(name, s->pattern, s->plen) == 0)
				       : (nl == s->plen && memcmp(name, s->pattern, nl) == 0);
		if (!match)
			continue;
		if (s->neg) {
			*enabled = 0;
			continue;
		}
		*enabled = s->enabled >= 0 ? s->enabled : 1;
		if (s->stack >= 0)
			*stack = s->stack;
		if (s->threshold >= 0)
			*threshold_ns = (uint64_t)s->threshold;
		if (s->throttle_n != -1) {
			*thr_n = s->throttle_n;
			*thr_unit = s->throttle_unit_ns;
		}
	}
}

bool rec_settings_enabled(const rec_recorder *r, const char *name)
{
	uint64_t thr = 0, unit = 0;
	int enabled = 0, stack = 0;
	int64_t n = 0;
	settings_apply(r, name, 0, &thr, &enabled, &stack, &n, &unit);
	(void)unit;
	return enabled != 0;
}

/* The throttle's window and budget: the window is a tenth of the rate's
 * unit when the rate is 10 or more per unit, else the whole unit, and at
 * least 10 ms; the budget is the rate times the window, rounded down
 * (1000/s: 100 events per 100 ms window; 5/s: 5 per 1 s; 10/ms: 100 per
 * 10 ms). */
static void throttle_window(uint64_t n, uint64_t unit_ns, uint64_t *window_ns, uint32_t *budget)
{
	uint64_t w = n >= 10 ? unit_ns / 10 : unit_ns;
	if (w < 10000000u)
		w = 10000000u;
	double b = (double)n * (double)w / (double)unit_ns;
	*window_ns = w;
	*budget = b >= 4294967295.0 ? UINT32_MAX : (uint32_t)b;
}

/* ---- types ---------------------------------------------------------------------- */
static bool type_max_size(const rec_type *def, uint32_t *out)
{
	uint64_t m = 2 + 8 + 10 + 10 + 10 + 10 + 8;
	for (uint32_t i = 0; i < def->field_count; i++) {
		switch (REC_WIRE_OF(def->fields[i].type)) {
		case REC_WIRE_UVARINT:
		case REC_WIRE_SVARINT: m += 10; break;
		case REC_WIRE_FIXED32: m += 4; break;
		case REC_WIRE_FIXED64: m += 8; break;
		case REC_WIRE_LENGTH: m += 5 + REC_EMIT_MAX_BYTES; break;
		default: return false;
		}
	}
	if (m > 60000)
		return false;
	*out = (uint32_t)m;
	return true;
}

static bool def_valid(const rec_type *def)
{
	if (!def || !def->name || !def->name[0] || def->field_count > REC_MAX_FIELDS ||
	    (def->field_count && !def->fields) ||
	    (def->flags & ~(REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK)))
		return false;
	for (uint32_t i = 0; i < def->field_count; i++)
		if (!def->fields[i].name || REC_WIRE_OF(def->fields[i].type) > REC_WIRE_LENGTH)
			return false;
	uint32_t m;
	return type_max_size(def, &m);
}

static bool id_taken(rec_recorder *r, uint32_t id, const char *name)
{
	for (rec_type_entry *e = r->types; e; e = e->next)
		if (e->id == id || strcmp(e->name, name) == 0)
			return true;
	for (rec_type_entry *e = rec_g_declared; e; e = e->next)
		if (e->h.gen == r->gen && (e->id == id || strcmp(e->decl_def->name, name) == 0))
			return true;
	return id == REC_TYPE_ID_DROPPED || id == REC_TYPE_ID_WRITE_FAILED || id == REC_TYPE_ID_PROCESS;
}

/* Bind handle e to r with id: compute the hot fields, enable per
 * settings (the writer knows the type already, or the background thread
 * adds it before the records that use it).  Caller holds r->lock (and
 * rec_g_lock for declared entries); allocates nothing, takes no lock. */
static void bind_handle(rec_recorder *r, rec_type_entry *e, const rec_type *def, uint32_t id,
			uint32_t max_size)
{
	int enabled, stack;
	int64_t thr_n;
	uint64_t thr_unit;
	uint64_t thr = e->threshold_ns;

	settings_apply(r, def->name, e->decl_flags, &thr, &enabled, &stack, &thr_n, &thr_unit);
	__atomic_store_n(&e->h.enabled, 0, __ATOMIC_RELEASE);
	e->id = id;
	e->h.flags = def->flags;
	if (thr_n >= 0) {
		uint64_t wns;
		throttle_window((uint64_t)thr_n, thr_unit, &wns, &e->thr_budget);
		e->thr_window_ticks = rec_ns_to_ticks(wns, __atomic_load_n(&r->frequency, __ATOMIC_RELAXED));
		if (e->thr_window_ticks == 0)
			e->thr_window_ticks = 1;
		__atomic_store_n(&e->thr_state, 0, __ATOMIC_RELAXED);
		e->h.flags |= REC_EVENT_THROTTLED_;
	}
	__atomic_store_n(&e->h.gen, r->gen, __ATOMIC_RELAXED);
	e->h.id_len = (uint32_t)rec_varint_enc8(id, &e->h.id_enc);
	e->h.max_size = max_size;
	e->h.threshold_ticks = rec_ns_to_ticks(thr, __atomic_load_n(&r->frequency, __ATOMIC_RELAXED));
	e->h.stack = stack && (def->flags & REC_EVENT_HAS_STACK);
	e->h.clock_kind = (uint32_t)r->clock_kind;
	e->h.clock = r->clock;
	e->h.clock_opaque = r->clock_opaque;
	e->h.priv_ = r;
	__atomic_store_n(&e->h.enabled, enabled ? 1u : 0u, __ATOMIC_RELEASE);
}

static uint32_t next_auto_id(rec_recorder *r, const char *name)
{
	while (id_taken(r, r->next_type_id, name) && r->next_type_id < UINT32_MAX)
		r->next_type_id++;
	return r->next_type_id++;
}

/* Caller holds r->lock (and rec_g_lock unless r is not published yet:
 * with_declared 0, no declared type is bound to it).  The id for def, 0 if
 * its id or name is taken. */
static uint32_t register_id(rec_recorder *r, const rec_type *def, int with_declared)
{
	uint32_t id = def->id;
	if (id == 0)
		id = next_auto_id(r, "\x01");
	for (rec_type_entry *x = r->types; x; x = x->next)
		if (x->id == id || strcmp(x->name, def->name) == 0)
			return 0;
	for (rec_type_entry *x = with_declared ? rec_g_declared : NULL; x; x = x->next)
		if (x->h.gen == r->gen && (x->id == id || strcmp(x->decl_def->name, def->name) == 0))
			return 0;
	if (id == REC_TYPE_ID_DROPPED || id == REC_TYPE_ID_WRITE_FAILED || id == REC_TYPE_ID_PROCESS)
		return 0;
	return id;
}

/* A zeroed entry on its own cache lines: the handle every emit reads
 * (enabled, threshold, clock) is the first 64 bytes, one line, and the
 * throttle's state, written by every emitting thread, has its own. */
static rec_type_entry *entry_alloc(void)
{
	size_t size = (sizeof(rec_type_entry) + 63) / 64 * 64;
	rec_type_entry *e = aligned_alloc(64, size);
	if (e != NULL)
		memset(e, 0, size);
	return e;
}

/* Register def with r: the entry is allocated first, the type added to the
 * writer under w_lock alone, r->lock (and rec_g_lock) taken only to choose
 * the id and to bind: LOCK ORDER (recorder_internal.h), their holders never
 * call malloc nor wait for w_lock.  with_declared: 0 at open (r not
 * published, caller holds no lock), 1 for rec_recorder_register_type. */
static rec_status register_type(rec_recorder *r, const rec_type *def, uint64_t threshold_ns,
				uint32_t flags, rec_event_type **out, int with_declared)
{
	uint32_t max_size;
	if (!type_max_size(def, &max_size))
		return REC_ERR_INVALID_ARG;
	rec_type_entry *e = entry_alloc();
	if (!e)
		return REC_ERR_NOMEM;
	e->name = strdup(def->name);
	if (!e->name) {
		free(e);
		return REC_ERR_NOMEM;
	}
	e->threshold_ns = threshold_ns;
	e->decl_flags = flags;
	rec_status st = REC_OK;
	pthread_mutex_lock(&r->w_lock); /* serializes registrations: the id stays ours */
	if (with_declared)
		pthread_mutex_lock(&rec_g_lock);
	pthread_mutex_lock(&r->lock);
	uint32_t id = 0;
	if (r->closing || r->forked_child || !r->w)
		st = REC_ERR_STATE;
	else if ((id = register_id(r, def, with_declared)) == 0)
		st = REC_ERR_INVALID_ARG;
	if (st == REC_OK) { /* listed (off) so that no other type takes its id or name */
		e->id = id;
		e->next = r->types;
		r->types = e;
	}
	pthread_mutex_unlock(&r->lock);
	if (with_declared)
		pthread_mutex_unlock(&rec_g_lock);
	if (st == REC_OK) {
		rec_type d = *def;
		d.id = id;
		st = rec_writer_add_type(r->w, &d);
	}
	if (id != 0) {
		pthread_mutex_lock(&r->lock);
		if (st == REC_OK) {
			bind_handle(r, e, def, id, max_size);
			*out = &e->h;
		} else {
			for (rec_type_entry **pp = &r->types; *pp; pp = &(*pp)->next)
				if (*pp == e) {
					*pp = e->next;
					break;
				}
		}
		pthread_mutex_unlock(&r->lock);
	}
	pthread_mutex_unlock(&r->w_lock);
	if (st != REC_OK) {
		free(e->name);
		free(e);
	}
	return st;
}

rec_status rec_type_register_open(rec_recorder *r, const rec_type *def, uint64_t threshold_ns,
				  uint32_t flags, rec_event_type **out)
{
	return register_type(r, def, threshold_ns, flags, out, 0);
}

rec_status rec_recorder_register_type(rec_recorder *r, const rec_type *def, uint64_t threshold_ns,
				      uint32_t flags, rec_event_type **out)
{
	if (!r || !out || !def_valid(def) || (flags & ~(REC_DECLARE_OFF | REC_DECLARE_STACK)) ||
	    (def->id != 0 && def->id < REC_TYPE_ID_USER_MIN && strncmp(def->name, "rec.", 4) != 0))
		return REC_ERR_INVALID_ARG;
	return register_type(r, def, threshold_ns, flags, out, 1);
}

/* Caller holds rec_g_lock and r->lock.  The handle is bound (and enabled)
 * now; the type goes to the writer with the background thread's next round
 * (rec_types_write_pending), before any record of it: a thread declaring a
 * type may be a program thread inside an interposer, and never waits for
 * w_lock (LOCK ORDER). */
rec_status rec_type_bind_declared(rec_recorder *r, rec_type_entry *e)
{
	uint32_t max_size;
	if (!type_max_size(e->decl_def, &max_size))
		return REC_ERR_INVALID_ARG;
	uint32_t id = e->decl_def->id;
	if (id == 0)
		id = next_auto_id(r, e->decl_def->name);
	bind_handle(r, e, e->decl_def, id, max_size);
	e->w_next = r->types_unwritten;
	r->types_unwritten = e;
	return REC_OK;
}

/* The background thread, under w_lock, before it appends a round's
 * records: the declared types bound since its last round, to the writer.
 * One the writer refuses is switched off and reported; its records already
 * taken are refused with it and counted as dropped (rec_bg_append). */
void rec_types_write_pending(rec_recorder *r)
{
	pthread_mutex_lock(&r->lock);
	rec_type_entry *list = r->types_unwritten, *rev = NULL;
	r->types_unwritten = NULL;
	pthread_mutex_unlock(&r->lock);
	while (list) { /* in the order they were declared */
		rec_type_entry *n = list->w_next;
		list->w_next = rev;
		rev = list;
		list = n;
	}
	for (rec_type_entry *e = rev; e; e = e->w_next) {
		rec_type d = *e->decl_def;
		d.id = e->id;
		rec_status st = rec_writer_add_type(r->w, &d);
		if (st != REC_OK) {
			__atomic_store_n(&e->h.enabled, 0, __ATOMIC_RELEASE);
			rec_report(r, st, "recorder: cannot declare a type in the writer");
		}
	}
}

/* Two definitions of one type: the same id, flags, name and fields (their
 * names, types and units).  Two copies of librec in one process (librec.so
 * and the preload library) each declare the built-in types from their own
 * tables; a declaration that agrees is the same type. */
static bool same_def(const rec_type *a, const rec_type *b)
{
	if (a->id != b->id || a->flags != b->flags || strcmp(a->name, b->name) != 0 ||
	    a->field_count != b->field_count)
		return false;
	for (uint32_t i = 0; i < a->field_count; i++)
		if (strcmp(a->fields[i].name, b->fields[i].name) != 0 ||
		    a->fields[i].type != b->fields[i].type || a->fields[i].unit != b->fields[i].unit)
			return false;
	return true;
}

rec_status rec_type_declare(const rec_type *def, uint64_t threshold_ns, uint32_t flags,
			    rec_event_type **out)
{
	if (!out || !def_valid(def) || (flags & ~(REC_DECLARE_OFF | REC_DECLARE_STACK)))
		return REC_ERR_INVALID_ARG;
	rec_status st = REC_OK;
	/* allocated before rec_g_lock: its holders never call malloc */
	rec_type_entry *e = entry_alloc();
	pthread_mutex_lock(&rec_g_lock);
	for (rec_type_entry *x = rec_g_declared; x; x = x->next) {
		if (x->decl_def == def || strcmp(x->decl_def->name, def->name) == 0) {
			*out = &x->h;
			pthread_mutex_unlock(&rec_g_lock);
			free(e);
			return x->decl_def == def || same_def(x->decl_def, def) ? REC_OK
										: REC_ERR_INVALID_ARG;
		}
	}
	if (!e) {
		pthread_mutex_unlock(&rec_g_lock);
		return REC_ERR_NOMEM;
	}
	e->decl_def = def;
	e->name = NULL;
	e->threshold_ns = threshold_ns;
	e->decl_flags = flags;
	e->h.clock_kind = REC_CLOCK_MONO;
	if (rec_g_default && !rec_g_default->closing) {
		pthread_mutex_lock(&rec_g_default->lock);
		st = rec_type_bind_declared(rec_g_default, e);
		pthread_mutex_unlock(&rec_g_default->lock);
		if (st != REC_OK)
			e->h.gen = 0;
	}
	e->next = rec_g_declared;
	/* published for bg.c's reading without the lock (entries are never
	 * removed nor freed) */
	__atomic_store_n(&rec_g_declared, e, __ATOMIC_RELEASE);
	*out = &e->h;
	pthread_mutex_unlock(&rec_g_lock);
	return st;
}

uint32_t rec_event_type_id(const rec_event_type *t)
{
	return t ? ((const rec_type_entry *)t)->id : 0;
}

