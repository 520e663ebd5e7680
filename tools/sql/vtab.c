/* SPDX-License-Identifier: MIT */
/*
 * vtab.c - the SQLite virtual-table module "rec": every table of
 * spec/SCHEMA.md is a scan of the inputs through the reader, streamed (one
 * chunk's events at a time), without an import.  An event table reads only
 * the chunks whose STATS count its type, and conditions on start_ns
 * (xBestIndex hands them to xFilter) skip the chunks whose STATS time range
 * is outside, before their events are decompressed.  SQLite still checks
 * every condition itself: the skipping only has to keep every row that can
 * match.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cli.h"
#include "rec/analysis.h"
#include "sql.h"

typedef struct sql_vtab {
	sqlite3_vtab base;
	rec_sql *s;
	sql_table *t;
} sql_vtab;

/* What the threads, stacks and frames scans have listed already. */
typedef struct sql_key {
	size_t file;
	uint64_t run, id;
	char *name; /* threads */
	bool used;
} sql_key;

typedef struct sql_keyset {
	sql_key *slots;
	size_t cap, count;
} sql_keyset;

/* A row a pool table has to give for the current event. */
typedef struct sql_item {
	const void *p;     /* rec_thread, rec_stack or rec_frame */
	uint32_t position; /* stacks: the frame's position (FRAMES entries only) */
	uint32_t index;    /* stacks: its index in the stack's frames */
} sql_item;

typedef struct sql_cursor {
	sqlite3_vtab_cursor base;
	rec_sql *s;
	sql_table *t;
	size_t file;
	rec_reader *r;
	const rec_chunk_info *ci;
	bool in_chunk, eof;
	const rec_type *type; /* event and drops tables: the type in the chunk */
	int *map;             /* event tables: column -> field index, -1: none */
	int drop_f[4];        /* drops: count, thread, reason, type */
	rec_event ev;
	int64_t lo, hi;       /* start_ns bounds, inclusive */
	sqlite3_int64 rowid;
	char run[17];
	size_t idx;           /* types, runs: the row's index */
	sql_item *items;      /* pool tables: rows of the current event */
	size_t nitems, icap, ipos;
	sql_keyset seen;
} sql_cursor;

/* ---- the key set ------------------------------------------------------------------ */
static uint64_t key_hash(size_t file, uint64_t run, uint64_t id, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ file;
	h = (h ^ run) * 1099511628211ull;
	h = (h ^ id) * 1099511628211ull;
	for (const char *p = name; p && *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h ^ (h >> 29);
}

static void keyset_clear(sql_keyset *k)
{
	for (size_t i = 0; i < k->cap; i++)
		free(k->slots[i].name);
	free(k->slots);
	memset(k, 0, sizeof(*k));
}

static sql_key *keyset_slot(sql_key *slots, size_t cap, size_t file, uint64_t run, uint64_t id,
			    const char *name)
{
	size_t i = (size_t)key_hash(file, run, id, name) & (cap - 1);
	for (;; i = (i + 1) & (cap - 1)) {
		sql_key *k = &slots[i];
		if (!k->used)
			return k;
		if (k->file == file && k->run == run && k->id == id &&
		    ((!name && !k->name) || (name && k->name && strcmp(k->name, name) == 0)))
			return k;
	}
}

/* Add the key; false if it was there. */
static bool keyset_add(sql_keyset *k, size_t file, uint64_t run, uint64_t id, const char *name)
{
	if ((k->count + 1) * 2 > k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 256;
		sql_key *ns = rec_cli_xmalloc(cap * sizeof(*ns));
		memset(ns, 0, cap * sizeof(*ns));
		for (size_t i = 0; i < k->cap; i++)
			if (k->slots[i].used)
				*keyset_slot(ns, cap, k->slots[i].file, k->slots[i].run, k->slots[i].id,
					     k->slots[i].name) = k->slots[i];
		free(k->slots);
		k->slots = ns;
		k->cap = cap;
	}
	sql_key *s = keyset_slot(k->slots, k->cap, file, run, id, name);
	if (s->used)
		return false;
	*s = (sql_key){ file, run, id, name ? rec_cli_xstrdup(name) : NULL, true };
	k->count++;
	return true;
}

/* ---- connecting ------------------------------------------------------------------- */
static int vt_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
		      sqlite3_vtab **out, char **err)
{
	rec_sql *s = aux;
	char *end;
	unsigned long i = argc > 3 ? strtoul(argv[3], &end, 10) : (unsigned long)-1;
	if (argc <= 3 || *end || i >= s->ntables) {
		*err = sqlite3_mprintf("rec: no such table (%d arguments, last \"%s\")", argc, argc ? argv[argc - 1] : "");
		return SQLITE_ERROR;
	}
	sql_table *t = &s->tables[i];
	int rc = sqlite3_declare_vtab(db, t->decl);
	if (rc != SQLITE_OK)
		return rc;
	sql_vtab *v = sqlite3_malloc(sizeof(*v));
	if (!v)
		return SQLITE_NOMEM;
	memset(v, 0, sizeof(*v));
	v->s = s;
	v->t = t;
	*out = &v->base;
	return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

/* The time column of the tables that have one (the same number in both). */
_Static_assert((int)SQL_EV_START == (int)SQL_DR_START, "start_ns is column 3 of event tables and drops");

static bool timed(const sql_table *t)
{
	return t->kind == SQL_T_EVENT || t->kind == SQL_T_DROPS;
}

/* Conditions on start_ns become xFilter arguments; idxStr has one letter per
 * argument: '=' EQ, '>' GT, 'g' GE, '<' LT, 'l' LE. */
static int vt_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	const sql_table *t = ((sql_vtab *)vt)->t;
	char ops[64];
	int n = 0;
	for (int i = 0; i < info->nConstraint && n < (int)sizeof(ops) - 1; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];
		if (!c->usable || !timed(t) || c->iColumn != SQL_EV_START)
			continue;
		char op = 0;
		switch (c->op) {
		case SQLITE_INDEX_CONSTRAINT_EQ: op = '='; break;
		case SQLITE_INDEX_CONSTRAINT_GT: op = '>'; break;
		case SQLITE_INDEX_CONSTRAINT_GE: op = 'g'; break;
		case SQLITE_INDEX_CONSTRAINT_LT: op = '<'; break;
		case SQLITE_INDEX_CONSTRAINT_LE: op = 'l'; break;
		default: break;
		}
		if (!op)
			continue;
		ops[n++] = op;
		info->aConstraintUsage[i].argvIndex = n;
		info->aConstraintUsage[i].omit = 0;
	}
	ops[n] = 0;
	double rows = t->kind == SQL_T_EVENT ? (double)t->events + 1 : 1e6;
	info->estimatedRows = (sqlite3_int64)rows;
	info->estimatedCost = rows / (n > 0 ? 10.0 * n : 1.0);
	info->idxNum = n;
	if (n > 0) {
		info->idxStr = sqlite3_mprintf("%s", ops);
		if (!info->idxStr)
			return SQLITE_NOMEM;
		info->needToFreeIdxStr = 1;
	}
	return SQLITE_OK;
}

/* ---- cursors ---------------------------------------------------------------------- */
static int vt_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	sql_cursor *c = sqlite3_malloc(sizeof(*c));
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	c->s = ((sql_vtab *)vt)->s;
	c->t = ((sql_vtab *)vt)->t;
	*out = &c->base;
	return SQLITE_OK;
}

static void cursor_reset(sql_cursor *c)
{
	rec_reader_close(c->r);
	c->r = NULL;
	c->ci = NULL;
	c->in_chunk = false;
	c->file = 0;
	c->idx = 0;
	c->nitems = c->ipos = 0;
	c->rowid = 0;
	c->eof = false;
	keyset_clear(&c->seen);
}

static int vt_close(sqlite3_vtab_cursor *cur)
{
	sql_cursor *c = (sql_cursor *)cur;
	cursor_reset(c);
	free(c->map);
	free(c->items);
	sqlite3_free(c);
	return SQLITE_OK;
}

static const rec_type *chunk_type(const rec_chunk_info *ci, const char *name)
{
	for (uint32_t k = 0; k < ci->type_count; k++)
		if (strcmp(ci->types[k].name, name) == 0)
			return &ci->types[k];
	return NULL;
}

static int field_index(const rec_type *ty, const char *name)
{
	for (uint32_t f = 0; ty && f < ty->field_count; f++)
		if (strcmp(ty->fields[f].name, name) == 0)
			return (int)f;
	return -1;
}

/* Whether the scan reads the chunk's events, and for a typed table the
 * type in it (c->type); false means it is passed over undecompressed. */
static bool want_chunk(sql_cursor *c, const rec_chunk_info *ci)
{
	if (ci->event_count == 0)
		return false;
	if (!timed(c->t))
		return true;
	const rec_type *ty = chunk_type(ci, c->t->kind == SQL_T_DROPS ? "rec.Dropped" : c->t->type_name);
	if (!ty)
		return false;
	if (ci->type_stats_count > 0) {
		uint64_t n = 0;
		for (uint32_t k = 0; k < ci->type_stats_count; k++)
			if (ci->type_stats[k].type_id == ty->id)
				n += ci->type_stats[k].count;
		if (n == 0)
			return false;
	}
	if (rec_chunk_wall_ns(ci, ci->first_ticks) > c->hi || rec_chunk_wall_ns(ci, ci->last_ticks) < c->lo)
		return false;
	c->type = ty;
	if (c->t->kind == SQL_T_EVENT) {
		for (size_t i = 0; i < c->t->ncols; i++)
			c->map[i] = field_index(ty, c->t->cols[i].field);
	} else {
		static const char *const names[4] = { "count", "thread", "reason", "type" };
		for (int i = 0; i < 4; i++)
			c->drop_f[i] = field_index(ty, names[i]);
	}
	return true;
}

/* The next event of the scan (of the table's type for typed tables): true
 * with c->ev, or false at the end of the inputs (c->eof). */
static bool next_event(sql_cursor *c)
{
	rec_sql *s = c->s;
	for (;;) {
		if (!c->r) {
			if (c->file >= s->nfiles) {
				c->eof = true;
				return false;
			}
			rec_cli_input in = { .name = s->files[c->file] };
			rec_status st = rec_cli_input_reader(&in, 0, &c->r);
			if (st != REC_OK) {
				rec_sql_problem(s, c->file, NULL, st);
				c->r = NULL;
				c->file++;
				continue;
			}
			rec_sql_run_id(c->run, 0);
		}
		if (!c->in_chunk) {
			rec_status st = rec_reader_next_chunk(c->r, &c->ci);
			if (st == REC_END || st == REC_ERR_IO || st == REC_ERR_NOMEM) {
				if (st != REC_END)
					rec_sql_problem(s, c->file, rec_reader_problem(c->r), st);
				rec_reader_close(c->r);
				c->r = NULL;
				c->file++;
				continue;
			}
			if (st != REC_OK) {
				rec_sql_problem(s, c->file, rec_reader_problem(c->r), st);
				continue;
			}
			if (!want_chunk(c, c->ci)) {
				s->chunks_skipped++;
				continue;
			}
			s->chunks_decoded++;
			rec_sql_run_id(c->run, c->ci->run_id);
			c->in_chunk = true;
		}
		rec_status st = rec_reader_next_chunk_event(c->r, &c->ev);
		if (st != REC_OK) {
			if (st != REC_END)
				rec_sql_problem(s, c->file, rec_reader_problem(c->r), st);
			c->in_chunk = false;
			continue;
		}
		if (timed(c->t) && (c->ev.type != c->type || c->ev.wall_ns < c->lo || c->ev.wall_ns > c->hi))
			continue;
		return true;
	}
}

static void add_item(sql_cursor *c, const void *p, uint32_t position, uint32_t index)
{
	if (c->nitems == c->icap) {
		c->icap = c->icap ? c->icap * 2 : 64;
		c->items = rec_cli_xrealloc(c->items, c->icap * sizeof(*c->items));
	}
	c->items[c->nitems++] = (sql_item){ p, position, index };
}

/* A frame the stacks table lists: a FRAMES entry.  The functions inlined
 * into it (format 1.2, inline_depth > 0, just before it in the reader's
 * stack, innermost first) are rows of frames only, with the entry's id and
 * their inline_depth, so a stack's position still counts FRAMES entries. */
static bool listed_frame(const rec_frame *f)
{
	return !f || f->inline_depth == 0;
}

static uint32_t listed_depth(const rec_stack *s)
{
	uint32_t n = 0;
	for (uint32_t k = 0; k < s->depth; k++)
		n += listed_frame(s->frames[k]);
	return n;
}

static void note_thread(sql_cursor *c, const rec_thread *t)
{
	if (t && keyset_add(&c->seen, c->file, c->ci->run_id, t->os_tid, t->name ? t->name : ""))
		add_item(c, t, 0, 0);
}

static void note_stack(sql_cursor *c, const rec_stack *st)
{
	if (!st)
		return;
	if (c->t->kind == SQL_T_STACKS) {
		if (keyset_add(&c->seen, c->file, c->ci->run_id, st->id, NULL))
			for (uint32_t k = 0, pos = 0; k < st->depth; k++)
				if (listed_frame(st->frames[k]))
					add_item(c, st, pos++, k);
		return;
	}
	/* frames: the frames not listed yet of a stack not seen yet (stack
	 * keys are named "stack", frame keys have no name) */
	if (!keyset_add(&c->seen, c->file, c->ci->run_id, st->id, "stack"))
		return;
	for (uint32_t k = 0; k < st->depth; k++) {
		const rec_frame *f = st->frames[k];
		if (!f || !listed_frame(f) || !keyset_add(&c->seen, c->file, c->ci->run_id, f->id, NULL))
			continue;
		add_item(c, f, 0, 0);
		if (rec_frame_unsymbolized(f))
			c->s->unsymbolized[c->file]++;
		/* then its inlined functions, inline_depth 1 (the outermost) on */
		for (uint32_t j = k; j > 0 && st->frames[j - 1] && st->frames[j - 1]->inline_depth > 0; j--)
			add_item(c, st->frames[j - 1], 0, 0);
	}
}

/* The pool rows the current event brings. */
static void pool_items(sql_cursor *c)
{
	c->nitems = c->ipos = 0;
	const rec_event *ev = &c->ev;
	bool threads = c->t->kind == SQL_T_THREADS;
	if (threads)
		note_thread(c, ev->thread);
	else
		note_stack(c, ev->stack);
	for (uint32_t k = 0; k < ev->value_count; k++) {
		const rec_value *v = &ev->values[k];
		if (!v->present)
			continue;
		if (threads && v->type == REC_TYPE_THREAD)
			note_thread(c, v->v.thread);
		else if (!threads && v->type == REC_TYPE_STACK)
			note_stack(c, v->v.stack);
	}
}

static int advance(sql_cursor *c)
{
	c->rowid++;
	switch (c->t->kind) {
	case SQL_T_TYPES:
		if (c->rowid > 1)
			c->idx++;
		while (c->idx < c->s->ntables && c->s->tables[c->idx].kind != SQL_T_EVENT)
			c->idx++;
		c->eof = c->idx >= c->s->ntables;
		return SQLITE_OK;
	case SQL_T_RUNS:
		c->idx = (size_t)c->rowid - 1;
		c->eof = c->idx >= c->s->nruns;
		return SQLITE_OK;
	case SQL_T_CHUNKS:
		for (;;) {
			if (!c->r) {
				if (c->file >= c->s->nfiles) {
					c->eof = true;
					return SQLITE_OK;
				}
				rec_cli_input in = { .name = c->s->files[c->file] };
				if (rec_cli_input_reader(&in, 0, &c->r) != REC_OK) {
					c->r = NULL;
					c->file++;
					continue;
				}
			}
			rec_status st = rec_reader_next_chunk(c->r, &c->ci);
			if (st == REC_OK) {
				rec_sql_run_id(c->run, c->ci->run_id);
				return SQLITE_OK;
			}
			if (st == REC_END || st == REC_ERR_IO || st == REC_ERR_NOMEM) {
				rec_reader_close(c->r);
				c->r = NULL;
				c->file++;
			}
			/* a damaged chunk: reported by the first pass */
		}
	case SQL_T_THREADS:
	case SQL_T_STACKS:
	case SQL_T_FRAMES:
		c->ipos++;
		while (c->ipos >= c->nitems) {
			if (!next_event(c))
				return SQLITE_OK;
			pool_items(c); /* from its first row */
		}
		return SQLITE_OK;
	case SQL_T_EVENT:
	case SQL_T_DROPS:
		next_event(c);
		return SQLITE_OK;
	}
	return SQLITE_OK;
}

/* v as an inclusive bound on an INTEGER column: for op '>' or 'g' a lower
 * bound, for '<' or 'l' an upper one, '=' both.  Values that are not
 * numbers bound nothing (SQLite decides). */
static void apply_bound(sql_cursor *c, char op, sqlite3_value *v)
{
	int t = sqlite3_value_numeric_type(v);
	int64_t lo = INT64_MIN, hi = INT64_MAX;
	if (t == SQLITE_INTEGER) {
		int64_t x = sqlite3_value_int64(v);
		switch (op) {
		case '=': lo = hi = x; break;
		case '>': lo = x == INT64_MAX ? INT64_MAX : x + 1; if (x == INT64_MAX) hi = INT64_MIN; break;
		case 'g': lo = x; break;
		case '<': hi = x == INT64_MIN ? INT64_MIN : x - 1; if (x == INT64_MIN) lo = INT64_MAX; break;
		case 'l': hi = x; break;
		default: break;
		}
	} else if (t == SQLITE_FLOAT) {
		double x = sqlite3_value_double(v);
		if (isnan(x))
			return;
		/* beyond +-2^63 a bound says all or nothing */
		double f = floor(x), cl = ceil(x);
		int64_t fi = f >= 9.2e18 ? INT64_MAX : f <= -9.2e18 ? INT64_MIN : (int64_t)f;
		int64_t ci = cl >= 9.2e18 ? INT64_MAX : cl <= -9.2e18 ? INT64_MIN : (int64_t)cl;
		switch (op) {
		case '=': if (f != x) { lo = INT64_MAX; hi = INT64_MIN; } else { lo = hi = fi; } break;
		case '>': lo = fi == INT64_MAX ? INT64_MAX : fi + 1; break;
		case 'g': lo = ci; break;
		case '<': hi = ci == INT64_MIN ? INT64_MIN : ci - 1; break;
		case 'l': hi = fi; break;
		default: break;
		}
	} else {
		return;
	}
	if (lo > c->lo)
		c->lo = lo;
	if (hi < c->hi)
		c->hi = hi;
}

static int vt_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
		     sqlite3_value **argv)
{
	sql_cursor *c = (sql_cursor *)cur;
	cursor_reset(c);
	c->lo = INT64_MIN;
	c->hi = INT64_MAX;
	for (int i = 0; i < argc && i < idx_num && idx_str && idx_str[i]; i++)
		apply_bound(c, idx_str[i], argv[i]);
	if (c->t->kind == SQL_T_EVENT && !c->map && c->t->ncols > 0)
		c->map = rec_cli_xmalloc(c->t->ncols * sizeof(int));
	if (c->lo > c->hi) {
		c->eof = true;
		return SQLITE_OK;
	}
	return advance(c);
}

static int vt_next(sqlite3_vtab_cursor *cur)
{
	return advance((sql_cursor *)cur);
}

static int vt_eof(sqlite3_vtab_cursor *cur)
{
	return ((sql_cursor *)cur)->eof;
}

static int vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = ((sql_cursor *)cur)->rowid;
	return SQLITE_OK;
}

/* ---- values ----------------------------------------------------------------------- */
static void result_u64(sqlite3_context *ctx, uint64_t u)
{
	if (u > (uint64_t)INT64_MAX)
		sqlite3_result_double(ctx, (double)u);
	else
		sqlite3_result_int64(ctx, (sqlite3_int64)u);
}

static void result_text(sqlite3_context *ctx, const char *s)
{
	if (s)
		sqlite3_result_text(ctx, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_result_null(ctx);
}

static void result_value(sqlite3_context *ctx, const rec_event *ev, const rec_value *v,
			 bool thread_name, bool u64_bits)
{
	if (!v->present) {
		sqlite3_result_null(ctx);
		return;
	}
	if (thread_name) {
		if (v->type == REC_TYPE_THREAD && v->v.thread)
			result_text(ctx, v->v.thread->name ? v->v.thread->name : "");
		else
			sqlite3_result_null(ctx);
		return;
	}
	switch (v->type) {
	case REC_TYPE_BOOL: case REC_TYPE_U8: case REC_TYPE_U16: case REC_TYPE_U32:
	case REC_TYPE_U64:
		if (u64_bits)
			sqlite3_result_int64(ctx, (sqlite3_int64)v->v.u);
		else
			result_u64(ctx, v->v.u);
		break;
	case REC_TYPE_I8: case REC_TYPE_I16: case REC_TYPE_I32: case REC_TYPE_I64:
		sqlite3_result_int64(ctx, v->v.i);
		break;
	case REC_TYPE_F32: case REC_TYPE_F64:
		sqlite3_result_double(ctx, v->v.f);
		break;
	case REC_TYPE_STRING: case REC_TYPE_TEXT:
		if (v->v.s.ptr)
			sqlite3_result_text64(ctx, v->v.s.ptr, v->v.s.len, SQLITE_TRANSIENT,
					      SQLITE_UTF8);
		else
			sqlite3_result_null(ctx);
		break;
	case REC_TYPE_BLOB:
		sqlite3_result_blob64(ctx, v->v.s.ptr ? v->v.s.ptr : "", v->v.s.len,
				      SQLITE_TRANSIENT);
		break;
	case REC_TYPE_TIMESTAMP:
		sqlite3_result_int64(ctx, rec_chunk_wall_ns(ev->chunk, v->v.u));
		break;
	case REC_TYPE_DURATION:
		sqlite3_result_int64(ctx, rec_ticks_to_ns((int64_t)v->v.u, ev->chunk->tick_frequency));
		break;
	case REC_TYPE_THREAD:
		if (v->v.thread)
			sqlite3_result_int64(ctx, (sqlite3_int64)v->v.thread->os_tid);
		else
			sqlite3_result_null(ctx);
		break;
	case REC_TYPE_STACK:
		if (v->v.stack)
			sqlite3_result_int64(ctx, (sqlite3_int64)v->v.stack->id);
		else
			sqlite3_result_null(ctx);
		break;
	default:
		sqlite3_result_null(ctx);
		break;
	}
}

static void event_column(sql_cursor *c, sqlite3_context *ctx, int col)
{
	const rec_event *ev = &c->ev;
	switch (col) {
	case SQL_EV_RECORDING: sqlite3_result_int64(ctx, (sqlite3_int64)c->file + 1); return;
	case SQL_EV_RUN: result_text(ctx, c->run); return;
	case SQL_EV_CHUNK_SEQ: sqlite3_result_int64(ctx, ev->chunk->sequence); return;
	case SQL_EV_START: sqlite3_result_int64(ctx, ev->wall_ns); return;
	case SQL_EV_DURATION:
		if (ev->type->flags & REC_EVENT_HAS_DURATION)
			sqlite3_result_int64(ctx, ev->duration_ns);
		else
			sqlite3_result_null(ctx);
		return;
	case SQL_EV_THREAD_ID:
		if (ev->thread)
			sqlite3_result_int64(ctx, (sqlite3_int64)ev->thread->os_tid);
		else
			sqlite3_result_null(ctx);
		return;
	case SQL_EV_THREAD_NAME:
		result_text(ctx, ev->thread ? (ev->thread->name ? ev->thread->name : "") : NULL);
		return;
	case SQL_EV_STACK:
		if (ev->stack)
			sqlite3_result_int64(ctx, (sqlite3_int64)ev->stack->id);
		else
			sqlite3_result_null(ctx);
		return;
	default:
		break;
	}
	size_t i = (size_t)col - SQL_EV_FIXED;
	int f = i < c->t->ncols ? c->map[i] : -1;
	if (f < 0 || (uint32_t)f >= ev->value_count) {
		sqlite3_result_null(ctx);
		return;
	}
	result_value(ctx, ev, &ev->values[f], c->t->cols[i].thread_name, c->s->u64_bits);
}

static const rec_value *drop_value(const sql_cursor *c, int which)
{
	int f = c->drop_f[which];
	return f >= 0 && (uint32_t)f < c->ev.value_count && c->ev.values[f].present ? &c->ev.values[f]
										    : NULL;
}

static void drops_column(sql_cursor *c, sqlite3_context *ctx, int col)
{
	const rec_value *count = drop_value(c, 0), *thread = drop_value(c, 1);
	const rec_value *reason = drop_value(c, 2), *type = drop_value(c, 3);
	const rec_thread *th = thread && thread->type == REC_TYPE_THREAD ? thread->v.thread : NULL;
	switch (col) {
	case SQL_DR_RECORDING: case SQL_DR_RUN: case SQL_DR_SEQ: case SQL_DR_START:
		event_column(c, ctx, col);
		return;
	case SQL_DR_THREAD_ID:
		if (th)
			sqlite3_result_int64(ctx, (sqlite3_int64)th->os_tid);
		else
			sqlite3_result_null(ctx);
		return;
	case SQL_DR_THREAD_NAME: result_text(ctx, th ? (th->name ? th->name : "") : NULL); return;
	case SQL_DR_TYPE:
		result_text(ctx, type && type->v.u ? rec_cli_chunk_type_name(&c->ev, type->v.u) : NULL);
		return;
	case SQL_DR_REASON:
		if (reason)
			result_u64(ctx, reason->v.u);
		else
			sqlite3_result_null(ctx);
		return;
	case SQL_DR_REASON_NAME: result_text(ctx, reason ? rec_drop_reason_name(reason->v.u) : NULL); return;
	case SQL_DR_COUNT:
		if (count)
			result_u64(ctx, count->v.u);
		else
			sqlite3_result_null(ctx);
		return;
	default:
		sqlite3_result_null(ctx);
		return;
	}
}

static void types_column(sql_cursor *c, sqlite3_context *ctx, int col)
{
	const sql_table *t = &c->s->tables[c->idx];
	switch (col) {
	case SQL_TY_NAME: result_text(ctx, t->type_name); return;
	case SQL_TY_TABLE: result_text(ctx, t->name); return;
	case SQL_TY_CATEGORY: result_text(ctx, t->category); return;
	case SQL_TY_LABEL: result_text(ctx, t->label); return;
	case SQL_TY_DESCRIPTION: result_text(ctx, t->description); return;
	case SQL_TY_EVENTS: result_u64(ctx, t->events); return;
	default: sqlite3_result_null(ctx); return;
	}
}

static void chunks_column(sql_cursor *c, sqlite3_context *ctx, int col)
{
	const rec_chunk_info *ci = c->ci;
	switch (col) {
	case SQL_CH_RECORDING: sqlite3_result_int64(ctx, (sqlite3_int64)c->file + 1); return;
	case SQL_CH_FILE: result_text(ctx, c->s->files[c->file]); return;
	case SQL_CH_INDEX: result_u64(ctx, ci->index); return;
	case SQL_CH_OFFSET: result_u64(ctx, ci->offset); return;
	case SQL_CH_SIZE: result_u64(ctx, ci->size); return;
	case SQL_CH_RUN: result_text(ctx, c->run); return;
	case SQL_CH_SEQ: sqlite3_result_int64(ctx, ci->sequence); return;
	case SQL_CH_PID: sqlite3_result_int64(ctx, ci->pid); return;
	case SQL_CH_CODEC: result_text(ctx, rec_codec_name(ci->codec)); return;
	case SQL_CH_START: sqlite3_result_int64(ctx, ci->start_wall_ns); return;
	case SQL_CH_DURATION:
		sqlite3_result_int64(ctx, rec_ticks_to_ns((int64_t)ci->duration_ticks, ci->tick_frequency));
		return;
	case SQL_CH_FIRST: case SQL_CH_LAST:
		if (ci->event_count == 0)
			sqlite3_result_null(ctx);
		else
			sqlite3_result_int64(ctx, rec_chunk_wall_ns(ci, col == SQL_CH_FIRST ? ci->first_ticks
											    : ci->last_ticks));
		return;
	case SQL_CH_EVENTS: result_u64(ctx, ci->event_count); return;
	case SQL_CH_DROPPED: result_u64(ctx, ci->dropped_events); return;
	case SQL_CH_PAYLOAD: result_u64(ctx, ci->payload_size); return;
	case SQL_CH_RAW: result_u64(ctx, ci->raw_size); return;
	case SQL_CH_FINAL: sqlite3_result_int(ctx, (ci->flags & REC_CHUNK_FINAL) != 0); return;
	default: sqlite3_result_null(ctx); return;
	}
}

static void runs_column(sql_cursor *c, sqlite3_context *ctx, int col)
{
	const sql_run *r = &c->s->runs[c->idx];
	char id[17];
	switch (col) {
	case SQL_RU_RECORDING: sqlite3_result_int64(ctx, (sqlite3_int64)r->recording + 1); return;
	case SQL_RU_RUN:
		rec_sql_run_id(id, r->run_id);
		result_text(ctx, id);
		return;
	case SQL_RU_PID: sqlite3_result_int64(ctx, r->pid); return;
	case SQL_RU_PSTART: sqlite3_result_int64(ctx, r->process_start_ns); return;
	case SQL_RU_FIRST: case SQL_RU_LAST:
		if (r->events == 0)
			sqlite3_result_null(ctx);
		else
			sqlite3_result_int64(ctx, col == SQL_RU_FIRST ? r->first_ns : r->last_ns);
		return;
	case SQL_RU_CHUNKS: result_u64(ctx, r->chunks); return;
	case SQL_RU_EVENTS: result_u64(ctx, r->events); return;
	case SQL_RU_DROPPED: result_u64(ctx, r->dropped); return;
	case SQL_RU_CLEAN: sqlite3_result_int(ctx, r->final); return;
	case SQL_RU_TRUNCATED: sqlite3_result_int(ctx, r->truncated); return;
	case SQL_RU_CRASHES: result_u64(ctx, r->crashes); return;
	case SQL_RU_DAMAGED: result_u64(ctx, r->damaged); return;
	default: sqlite3_result_null(ctx); return;
	}
}

static void pool_column(sql_cursor *c, sqlite3_context *ctx, int col)
{
	const sql_item *it = &c->items[c->ipos];
	/* the first two columns are recording_id, run_id in all three */
	if (col == 0) {
		sqlite3_result_int64(ctx, (sqlite3_int64)c->file + 1);
		return;
	}
	if (col == 1) {
		result_text(ctx, c->run);
		return;
	}
	if (c->t->kind == SQL_T_THREADS) {
		const rec_thread *t = it->p;
		if (col == SQL_TH_ID)
			sqlite3_result_int64(ctx, (sqlite3_int64)t->os_tid);
		else
			result_text(ctx, t->name ? t->name : "");
		return;
	}
	if (c->t->kind == SQL_T_STACKS) {
		const rec_stack *s = it->p;
		const rec_frame *f = s->frames[it->index];
		switch (col) {
		case SQL_ST_ID: result_u64(ctx, s->id); return;
		case SQL_ST_POSITION: sqlite3_result_int64(ctx, it->position); return;
		case SQL_ST_FRAME:
			if (f)
				result_u64(ctx, f->id);
			else
				sqlite3_result_null(ctx);
			return;
		case SQL_ST_DEPTH: sqlite3_result_int64(ctx, listed_depth(s)); return;
		case SQL_ST_TRUNCATED: sqlite3_result_int(ctx, (s->flags & REC_STACK_TRUNCATED) != 0); return;
		default: sqlite3_result_null(ctx); return;
		}
	}
	const rec_frame *f = it->p;
	switch (col) {
	case SQL_FR_ID: result_u64(ctx, f->id); return;
	case SQL_FR_FUNCTION: result_text(ctx, f->function ? f->function : ""); return;
	case SQL_FR_MODULE: result_text(ctx, f->module ? f->module->path : NULL); return;
	case SQL_FR_BUILD_ID: result_text(ctx, f->module ? f->module->build_id : NULL); return;
	case SQL_FR_MODULE_OFFSET: result_u64(ctx, f->module_offset); return;
	case SQL_FR_FUNCTION_OFFSET:
		if (f->inline_depth) /* an inlined function has no code of its own */
			sqlite3_result_null(ctx);
		else
			result_u64(ctx, f->function_offset);
		return;
	case SQL_FR_FILE:
		if (f->file && *f->file)
			result_text(ctx, f->file);
		else
			sqlite3_result_null(ctx);
		return;
	case SQL_FR_LINE:
		if (f->line)
			sqlite3_result_int64(ctx, f->line);
		else
			sqlite3_result_null(ctx);
		return;
	case SQL_FR_INLINE: sqlite3_result_int64(ctx, f->inline_depth); return;
	default: sqlite3_result_null(ctx); return;
	}
}

static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	sql_cursor *c = (sql_cursor *)cur;
	switch (c->t->kind) {
	case SQL_T_EVENT: event_column(c, ctx, col); break;
	case SQL_T_DROPS: drops_column(c, ctx, col); break;
	case SQL_T_TYPES: types_column(c, ctx, col); break;
	case SQL_T_CHUNKS: chunks_column(c, ctx, col); break;
	case SQL_T_RUNS: runs_column(c, ctx, col); break;
	case SQL_T_THREADS: case SQL_T_STACKS: case SQL_T_FRAMES: pool_column(c, ctx, col); break;
	}
	return SQLITE_OK;
}

static const sqlite3_module sql_module = {
	.iVersion = 1,
	.xCreate = vt_connect,
	.xConnect = vt_connect,
	.xBestIndex = vt_best_index,
	.xDisconnect = vt_disconnect,
	.xDestroy = vt_disconnect,
	.xOpen = vt_open,
	.xClose = vt_close,
	.xFilter = vt_filter,
	.xNext = vt_next,
	.xEof = vt_eof,
	.xColumn = vt_column,
	.xRowid = vt_rowid,
};

int rec_sql_attach(sqlite3 *db, rec_sql *s)
{
	int rc = sqlite3_create_module(db, "rec", &sql_module, s);
	for (size_t i = 0; rc == SQLITE_OK && i < s->ntables; i++) {
		char *q = sqlite3_mprintf("CREATE VIRTUAL TABLE temp.\"%w\" USING rec(%llu)",
					  s->tables[i].name, (unsigned long long)i);
		if (!q)
			return SQLITE_NOMEM;
		rc = sqlite3_exec(db, q, NULL, NULL, NULL);
		sqlite3_free(q);
	}
	return rc;
}
