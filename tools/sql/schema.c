/* SPDX-License-Identifier: MIT */
/*
 * schema.c - the tables of spec/SCHEMA.md for given inputs: one pass over
 * every chunk's header, METADATA and STATS (no events are decompressed)
 * names a table per event type, its columns from the fields, and collects
 * the runs; the fixed tables' declarations live here too.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/cli.h"
#include "sql.h"

/* A fixed column: its name, the rec_field_type its values have (the SQL
 * type of sql_type_of(), the Parquet type of rec-export) and its unit. */
typedef struct sql_coldef {
	const char *name;
	uint32_t type;
	const char *unit;
} sql_coldef;

static const sql_coldef types_cols[SQL_TY_N] = {
	[SQL_TY_NAME] = { "type_name", REC_TYPE_STRING, "" },
	[SQL_TY_TABLE] = { "table_name", REC_TYPE_STRING, "" },
	[SQL_TY_CATEGORY] = { "category", REC_TYPE_STRING, "" },
	[SQL_TY_LABEL] = { "label", REC_TYPE_STRING, "" },
	[SQL_TY_DESCRIPTION] = { "description", REC_TYPE_STRING, "" },
	[SQL_TY_EVENTS] = { "events", REC_TYPE_U64, "count, from STATS" },
};
static const sql_coldef chunks_cols[SQL_CH_N] = {
	[SQL_CH_RECORDING] = { "recording_id", REC_TYPE_U32, "input file, 1-based" },
	[SQL_CH_FILE] = { "file", REC_TYPE_STRING, "" },
	[SQL_CH_INDEX] = { "chunk_index", REC_TYPE_U64, "0-based in the file" },
	[SQL_CH_OFFSET] = { "offset", REC_TYPE_U64, "bytes" },
	[SQL_CH_SIZE] = { "size", REC_TYPE_U64, "bytes" },
	[SQL_CH_RUN] = { "run_id", REC_TYPE_STRING, "16 hex digits" },
	[SQL_CH_SEQ] = { "chunk_seq", REC_TYPE_U64, "" },
	[SQL_CH_PID] = { "pid", REC_TYPE_U32, "" },
	[SQL_CH_CODEC] = { "codec", REC_TYPE_STRING, "" },
	[SQL_CH_START] = { "start_ns", REC_TYPE_TIMESTAMP, "ns since the epoch" },
	[SQL_CH_DURATION] = { "duration_ns", REC_TYPE_DURATION, "ns" },
	[SQL_CH_FIRST] = { "first_event_ns", REC_TYPE_TIMESTAMP, "ns since the epoch" },
	[SQL_CH_LAST] = { "last_event_ns", REC_TYPE_TIMESTAMP, "ns since the epoch" },
	[SQL_CH_EVENTS] = { "events", REC_TYPE_U64, "count" },
	[SQL_CH_DROPPED] = { "dropped_events", REC_TYPE_U64, "count" },
	[SQL_CH_PAYLOAD] = { "payload_size", REC_TYPE_U64, "bytes" },
	[SQL_CH_RAW] = { "raw_size", REC_TYPE_U64, "bytes" },
	[SQL_CH_FINAL] = { "final", REC_TYPE_BOOL, "0 or 1" },
};
static const sql_coldef runs_cols[SQL_RU_N] = {
	[SQL_RU_RECORDING] = { "recording_id", REC_TYPE_U32, "" },
	[SQL_RU_RUN] = { "run_id", REC_TYPE_STRING, "" },
	[SQL_RU_PID] = { "pid", REC_TYPE_U32, "" },
	[SQL_RU_PSTART] = { "process_start_ns", REC_TYPE_TIMESTAMP, "ns since the epoch" },
	[SQL_RU_FIRST] = { "first_event_ns", REC_TYPE_TIMESTAMP, "ns since the epoch" },
	[SQL_RU_LAST] = { "last_event_ns", REC_TYPE_TIMESTAMP, "ns since the epoch" },
	[SQL_RU_CHUNKS] = { "chunks", REC_TYPE_U64, "count" },
	[SQL_RU_EVENTS] = { "events", REC_TYPE_U64, "count" },
	[SQL_RU_DROPPED] = { "dropped_events", REC_TYPE_U64, "count" },
	[SQL_RU_CLEAN] = { "clean_close", REC_TYPE_BOOL, "0 or 1" },
	[SQL_RU_TRUNCATED] = { "truncated", REC_TYPE_BOOL, "0 or 1" },
	[SQL_RU_CRASHES] = { "crash_events", REC_TYPE_U64, "count, from STATS" },
	[SQL_RU_DAMAGED] = { "damaged_chunks", REC_TYPE_U64, "count" },
};
static const sql_coldef threads_cols[SQL_TH_N] = {
	[SQL_TH_RECORDING] = { "recording_id", REC_TYPE_U32, "" },
	[SQL_TH_RUN] = { "run_id", REC_TYPE_STRING, "" },
	[SQL_TH_ID] = { "thread_id", REC_TYPE_THREAD, "OS thread id" },
	[SQL_TH_NAME] = { "name", REC_TYPE_STRING, "" },
};
static const sql_coldef stacks_cols[SQL_ST_N] = {
	[SQL_ST_RECORDING] = { "recording_id", REC_TYPE_U32, "" },
	[SQL_ST_RUN] = { "run_id", REC_TYPE_STRING, "" },
	[SQL_ST_ID] = { "stack_id", REC_TYPE_STACK, "" },
	[SQL_ST_POSITION] = { "position", REC_TYPE_U32, "0 = leaf" },
	[SQL_ST_FRAME] = { "frame_id", REC_TYPE_U64, "" },
	[SQL_ST_DEPTH] = { "depth", REC_TYPE_U32, "frames" },
	[SQL_ST_TRUNCATED] = { "truncated", REC_TYPE_BOOL, "0 or 1" },
};
static const sql_coldef frames_cols[SQL_FR_N] = {
	[SQL_FR_RECORDING] = { "recording_id", REC_TYPE_U32, "" },
	[SQL_FR_RUN] = { "run_id", REC_TYPE_STRING, "" },
	[SQL_FR_ID] = { "frame_id", REC_TYPE_U64, "" },
	[SQL_FR_FUNCTION] = { "function", REC_TYPE_STRING, "" },
	[SQL_FR_MODULE] = { "module", REC_TYPE_STRING, "path" },
	[SQL_FR_BUILD_ID] = { "build_id", REC_TYPE_STRING, "hex" },
	[SQL_FR_MODULE_OFFSET] = { "module_offset", REC_TYPE_U64, "bytes" },
	[SQL_FR_FUNCTION_OFFSET] = { "function_offset", REC_TYPE_U64, "bytes" },
	[SQL_FR_FILE] = { "file", REC_TYPE_STRING, "NULL: not recorded" },
	[SQL_FR_LINE] = { "line", REC_TYPE_U32, "NULL: not recorded" },
	[SQL_FR_INLINE] = { "inline_depth", REC_TYPE_U32, "" },
};
static const sql_coldef drops_cols[SQL_DR_N] = {
	[SQL_DR_RECORDING] = { "recording_id", REC_TYPE_U32, "" },
	[SQL_DR_RUN] = { "run_id", REC_TYPE_STRING, "" },
	[SQL_DR_SEQ] = { "chunk_seq", REC_TYPE_U64, "" },
	[SQL_DR_START] = { "start_ns", REC_TYPE_TIMESTAMP, "ns since the epoch" },
	[SQL_DR_THREAD_ID] = { "thread_id", REC_TYPE_THREAD, "OS thread id" },
	[SQL_DR_THREAD_NAME] = { "thread_name", REC_TYPE_STRING, "" },
	[SQL_DR_TYPE] = { "type_name", REC_TYPE_STRING, "" },
	[SQL_DR_REASON] = { "reason", REC_TYPE_U8, "" },
	[SQL_DR_REASON_NAME] = { "reason_name", REC_TYPE_STRING, "" },
	[SQL_DR_COUNT] = { "count", REC_TYPE_U64, "events" },
};
static const sql_coldef event_cols[SQL_EV_FIXED] = {
	[SQL_EV_RECORDING] = { "recording_id", REC_TYPE_U32, "" },
	[SQL_EV_RUN] = { "run_id", REC_TYPE_STRING, "" },
	[SQL_EV_CHUNK_SEQ] = { "chunk_seq", REC_TYPE_U64, "" },
	[SQL_EV_START] = { "start_ns", REC_TYPE_TIMESTAMP, "ns since the epoch" },
	[SQL_EV_DURATION] = { "duration_ns", REC_TYPE_DURATION, "ns" },
	[SQL_EV_THREAD_ID] = { "thread_id", REC_TYPE_THREAD, "OS thread id" },
	[SQL_EV_THREAD_NAME] = { "thread_name", REC_TYPE_STRING, "" },
	[SQL_EV_STACK] = { "stack_id", REC_TYPE_STACK, "" },
};

static const struct {
	sql_table_kind kind;
	const char *name;
	const sql_coldef *cols;
	size_t n;
} fixed_tables[] = {
	{ SQL_T_TYPES, "types", types_cols, SQL_TY_N },
	{ SQL_T_CHUNKS, "chunks", chunks_cols, SQL_CH_N },
	{ SQL_T_RUNS, "runs", runs_cols, SQL_RU_N },
	{ SQL_T_THREADS, "threads", threads_cols, SQL_TH_N },
	{ SQL_T_STACKS, "stacks", stacks_cols, SQL_ST_N },
	{ SQL_T_FRAMES, "frames", frames_cols, SQL_FR_N },
	{ SQL_T_DROPS, "drops", drops_cols, SQL_DR_N },
};
#define NFIXED (sizeof(fixed_tables) / sizeof(fixed_tables[0]))

void rec_sql_run_id(char *buf, uint64_t id)
{
	snprintf(buf, 17, "%016" PRIx64, id);
}

/* ---- building declarations -------------------------------------------------- */
/* '"name" TYPE' with its unit as a comment; a comma unless last. */
static void sb_col(rec_cli_strbuf *b, const char *name, const char *sqltype, const char *unit, bool last)
{
	rec_cli_strbuf_str(b, "  \"");
	rec_cli_strbuf_str(b, name);
	rec_cli_strbuf_str(b, "\" ");
	rec_cli_strbuf_str(b, sqltype);
	if (!last)
		rec_cli_strbuf_str(b, ",");
	if (unit && *unit) {
		rec_cli_strbuf_str(b, " -- ");
		rec_cli_strbuf_str(b, unit);
	}
	rec_cli_strbuf_str(b, "\n");
}

static const char *sql_type_of(uint32_t type)
{
	switch (type) {
	case REC_TYPE_F32:
	case REC_TYPE_F64:
		return "REAL";
	case REC_TYPE_STRING:
	case REC_TYPE_TEXT:
		return "TEXT";
	case REC_TYPE_BLOB:
		return "BLOB";
	case REC_TYPE_BOOL: case REC_TYPE_U8: case REC_TYPE_U16: case REC_TYPE_U32:
	case REC_TYPE_U64: case REC_TYPE_I8: case REC_TYPE_I16: case REC_TYPE_I32:
	case REC_TYPE_I64: case REC_TYPE_TIMESTAMP: case REC_TYPE_DURATION:
	case REC_TYPE_THREAD: case REC_TYPE_STACK:
		return "INTEGER";
	default:
		return "";
	}
}

static const char *unit_of(const sql_col *c)
{
	if (c->thread_name)
		return "";
	switch (c->type) {
	case REC_TYPE_TIMESTAMP:
		return "ns since the epoch";
	case REC_TYPE_DURATION:
		return "ns";
	case REC_TYPE_THREAD:
		return "OS thread id";
	case REC_TYPE_STACK:
		return "stack id";
	case REC_TYPE_BOOL:
		return "0 or 1";
	default:
		return rec_unit_name(c->unit);
	}
}

static char *fixed_decl(const char *name, const sql_coldef *cols, size_t n)
{
	rec_cli_strbuf b = { 0 };
	rec_cli_strbuf_str(&b, "CREATE TABLE \"");
	rec_cli_strbuf_str(&b, name);
	rec_cli_strbuf_str(&b, "\"(\n");
	for (size_t i = 0; i < n; i++)
		sb_col(&b, cols[i].name, sql_type_of(cols[i].type), cols[i].unit, i + 1 == n);
	rec_cli_strbuf_str(&b, ")");
	return b.s;
}

static char *event_decl(const sql_table *t)
{
	rec_cli_strbuf b = { 0 };
	rec_cli_strbuf_str(&b, "CREATE TABLE \"");
	rec_cli_strbuf_str(&b, t->name);
	rec_cli_strbuf_str(&b, "\"( -- ");
	/* a comment ends at a newline: the type's strings are cut there */
	char head[512];
	snprintf(head, sizeof head, "%s (%s)", t->type_name, t->category);
	for (char *q = head; *q; q++)
		if (*q == '\n' || *q == '\r')
			*q = ' ';
	rec_cli_strbuf_str(&b, head);
	rec_cli_strbuf_str(&b, "\n");
	for (size_t i = 0; i < SQL_EV_FIXED; i++)
		sb_col(&b, event_cols[i].name, sql_type_of(event_cols[i].type), event_cols[i].unit,
		       t->ncols == 0 && i + 1 == SQL_EV_FIXED);
	for (size_t i = 0; i < t->ncols; i++) {
		const sql_col *c = &t->cols[i];
		sb_col(&b, c->name, c->thread_name ? "TEXT" : sql_type_of(c->type), unit_of(c),
		       i + 1 == t->ncols);
	}
	rec_cli_strbuf_str(&b, ")");
	return b.s;
}

/* ---- columns, for the engines other than SQLite ----------------------------------- */
static const sql_coldef *fixed_cols(sql_table_kind kind, size_t *n)
{
	for (size_t i = 0; i < NFIXED; i++)
		if (fixed_tables[i].kind == kind) {
			*n = fixed_tables[i].n;
			return fixed_tables[i].cols;
		}
	*n = SQL_EV_FIXED;
	return event_cols;
}

size_t rec_sql_ncols(const sql_table *t)
{
	size_t n;
	fixed_cols(t->kind, &n);
	return t->kind == SQL_T_EVENT ? n + t->ncols : n;
}

void rec_sql_column(const sql_table *t, size_t i, sql_column *out)
{
	size_t n;
	const sql_coldef *cols = fixed_cols(t->kind, &n);
	if (i < n) {
		*out = (sql_column){ cols[i].name, cols[i].type, cols[i].unit };
		return;
	}
	const sql_col *c = &t->cols[i - n];
	*out = (sql_column){ c->name, c->thread_name ? REC_TYPE_STRING : c->type, unit_of(c) };
}

/* ---- names -------------------------------------------------------------------- */
static bool table_name_taken(const rec_sql *s, const char *name)
{
	for (size_t i = 0; i < s->ntables; i++)
		if (strcasecmp(s->tables[i].name, name) == 0)
			return true;
	return false;
}

static bool col_name_taken(const sql_table *t, const char *name)
{
	for (size_t i = 0; i < SQL_EV_FIXED; i++)
		if (strcasecmp(event_cols[i].name, name) == 0)
			return true;
	for (size_t i = 0; i < t->ncols; i++)
		if (strcasecmp(t->cols[i].name, name) == 0)
			return true;
	return false;
}

static void add_col(sql_table *t, const rec_field *f, bool thread_name)
{
	char *name = rec_cli_sql_ident(f->name, thread_name ? "_name" : "");
	while (col_name_taken(t, name)) {
		size_t n = strlen(name);
		char *p = rec_cli_xmalloc(n + 3);
		snprintf(p, n + 3, "f_%s", name);
		free(name);
		name = p;
	}
	t->cols = rec_cli_xrealloc(t->cols, (t->ncols + 1) * sizeof(*t->cols));
	sql_col *c = &t->cols[t->ncols++];
	c->name = name;
	c->field = rec_cli_xstrdup(f->name);
	c->type = f->type;
	c->unit = f->unit;
	c->thread_name = thread_name;
}

static sql_table *add_table(rec_sql *s)
{
	s->tables = rec_cli_xrealloc(s->tables, (s->ntables + 1) * sizeof(*s->tables));
	sql_table *t = &s->tables[s->ntables++];
	memset(t, 0, sizeof(*t));
	return t;
}

static sql_table *event_table(rec_sql *s, const char *type_name)
{
	for (size_t i = NFIXED; i < s->ntables; i++)
		if (strcmp(s->tables[i].type_name, type_name) == 0)
			return &s->tables[i];
	return NULL;
}

static void add_type(rec_sql *s, const rec_type *ty)
{
	char *name = rec_cli_sql_ident(ty->name, "");
	for (unsigned k = 2; table_name_taken(s, name); k++) {
		free(name);
		char suf[16];
		snprintf(suf, sizeof suf, "_%u", k);
		name = rec_cli_sql_ident(ty->name, suf);
	}
	sql_table *t = add_table(s);
	t->kind = SQL_T_EVENT;
	t->name = name;
	t->type_name = rec_cli_xstrdup(ty->name);
	t->category = rec_cli_xstrdup(ty->category ? ty->category : "");
	t->label = rec_cli_xstrdup(ty->label ? ty->label : "");
	t->description = rec_cli_xstrdup(ty->description ? ty->description : "");
	for (uint32_t f = 0; f < ty->field_count; f++) {
		add_col(t, &ty->fields[f], false);
		if (ty->fields[f].type == REC_TYPE_THREAD)
			add_col(t, &ty->fields[f], true);
	}
	t->decl = event_decl(t);
}

/* ---- problems, once ----------------------------------------------------------- */
void rec_sql_problem(rec_sql *s, size_t file, const rec_problem *p, rec_status st)
{
	s->damaged = true;
	int64_t chunk = p ? p->chunk : -1;
	uint64_t off = p ? p->offset : 0;
	for (size_t i = 0; i < s->nseen; i++)
		if (s->seen[i].file == file && s->seen[i].chunk == chunk && s->seen[i].offset == off)
			return;
	if (s->nseen == s->seen_cap) {
		s->seen_cap = s->seen_cap ? s->seen_cap * 2 : 16;
		s->seen = rec_cli_xrealloc(s->seen, s->seen_cap * sizeof(*s->seen));
	}
	s->seen[s->nseen++] = (sql_seen_problem){ file, chunk, off };
	rec_cli_problem(s->files[file], p, st);
}

/* ---- the pass over the inputs ---------------------------------------------------- */
static sql_run *run_of(rec_sql *s, size_t file, const rec_chunk_info *ci)
{
	for (size_t i = 0; i < s->nruns; i++)
		if (s->runs[i].recording == file && s->runs[i].run_id == ci->run_id)
			return &s->runs[i];
	s->runs = rec_cli_xrealloc(s->runs, (s->nruns + 1) * sizeof(*s->runs));
	sql_run *r = &s->runs[s->nruns++];
	memset(r, 0, sizeof(*r));
	r->recording = file;
	r->run_id = ci->run_id;
	r->pid = ci->pid;
	r->process_start_ns = ci->process_start_ns;
	return r;
}

static sql_run *note_chunk(rec_sql *s, size_t file, const rec_chunk_info *ci)
{
	for (uint32_t k = 0; k < ci->type_count; k++)
		if (!event_table(s, ci->types[k].name))
			add_type(s, &ci->types[k]);
	for (uint32_t k = 0; k < ci->type_stats_count; k++) {
		const rec_type_stats *ts = &ci->type_stats[k];
		sql_table *t = ts->type ? event_table(s, ts->type->name) : NULL;
		if (t)
			t->events += ts->count;
	}
	sql_run *r = run_of(s, file, ci);
	for (uint32_t k = 0; k < ci->type_stats_count; k++) {
		const rec_type_stats *ts = &ci->type_stats[k];
		if (ts->type && ts->type->name && strcmp(ts->type->name, "rec.Crash") == 0)
			r->crashes += ts->count;
	}
	if (r->chunks == 0 || ci->sequence < r->first_seq)
		r->first_seq = ci->sequence;
	if (r->chunks == 0 || ci->sequence > r->last_seq)
		r->last_seq = ci->sequence;
	r->chunks++;
	r->dropped += ci->dropped_events;
	if (ci->flags & REC_CHUNK_FINAL)
		r->final = true;
	if (ci->event_count > 0) {
		int64_t a = rec_chunk_wall_ns(ci, ci->first_ticks);
		int64_t b = rec_chunk_wall_ns(ci, ci->last_ticks);
		if (r->events == 0 || a < r->first_ns)
			r->first_ns = a;
		if (r->events == 0 || b > r->last_ns)
			r->last_ns = b;
		r->events += ci->event_count;
	}
	return r;
}

bool rec_sql_load(rec_sql *s, size_t nfiles, char *const *files)
{
	memset(s, 0, sizeof(*s));
	s->nfiles = nfiles;
	s->files = files;
	s->unsymbolized = rec_cli_xmalloc((nfiles ? nfiles : 1) * sizeof(*s->unsymbolized));
	memset(s->unsymbolized, 0, (nfiles ? nfiles : 1) * sizeof(*s->unsymbolized));
	for (size_t i = 0; i < NFIXED; i++) {
		sql_table *t = add_table(s);
		t->kind = fixed_tables[i].kind;
		t->name = rec_cli_xstrdup(fixed_tables[i].name);
		t->decl = fixed_decl(t->name, fixed_tables[i].cols, fixed_tables[i].n);
	}
	for (size_t f = 0; f < nfiles; f++) {
		rec_cli_input in = { .name = files[f] };
		rec_reader *r = rec_cli_input_open(&in, 0);
		if (!r)
			return false;
		size_t last_run = SIZE_MAX; /* the run of the file's last good chunk */
		/* A damaged chunk (the reader's count, as rec-view's) goes to the
		 * run of the good chunk before it, or after it when none was
		 * before: a damaged chunk names no run itself. */
		uint64_t pending = 0, counted = 0;
		for (;;) {
			const rec_chunk_info *ci;
			rec_status st = rec_reader_next_chunk(r, &ci);
			if (st == REC_END)
				break;
			if (st != REC_OK) {
				const rec_problem *p = rec_reader_problem(r);
				/* the file ends inside a chunk: its run (as rec-summary
				 * tells a truncated run) is the last good chunk's */
				if (((p && p->status) ? p->status : st) == REC_ERR_TRUNCATED &&
				    last_run != SIZE_MAX)
					s->runs[last_run].truncated = true;
				rec_sql_problem(s, f, p, st);
				if (st == REC_ERR_IO || st == REC_ERR_NOMEM)
					break;
				rec_reader_stats rs;
				memset(&rs, 0, sizeof rs);
				rec_reader_get_stats(r, &rs);
				if (rs.chunks_damaged > counted) {
					if (last_run != SIZE_MAX)
						s->runs[last_run].damaged += rs.chunks_damaged - counted;
					else
						pending += rs.chunks_damaged - counted;
					counted = rs.chunks_damaged;
				}
				continue;
			}
			last_run = (size_t)(note_chunk(s, f, ci) - s->runs);
			s->runs[last_run].damaged += pending;
			pending = 0;
		}
		rec_reader_stats rs;
		memset(&rs, 0, sizeof rs);
		rec_reader_get_stats(r, &rs);
		if (last_run != SIZE_MAX)
			s->runs[last_run].damaged += pending + (rs.chunks_damaged > counted ? rs.chunks_damaged - counted : 0);
		rec_reader_close(r);
	}
	return true;
}

void rec_sql_free(rec_sql *s)
{
	free(s->unsymbolized);
	s->unsymbolized = NULL;
	for (size_t i = 0; i < s->ntables; i++) {
		sql_table *t = &s->tables[i];
		for (size_t k = 0; k < t->ncols; k++) {
			free(t->cols[k].name);
			free(t->cols[k].field);
		}
		free(t->cols);
		free(t->name);
		free(t->decl);
		free(t->type_name);
		free(t->category);
		free(t->label);
		free(t->description);
	}
	free(s->tables);
	free(s->runs);
	free(s->seen);
	memset(s, 0, sizeof(*s));
}
