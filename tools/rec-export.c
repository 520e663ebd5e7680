/* SPDX-License-Identifier: MIT */
/*
 * rec-export - the tables of spec/SCHEMA.md as a dataset for other engines:
 * Apache Parquet (DuckDB, Spark, Trino, ClickHouse) or JSON lines, one
 * directory per table, Hive-partitioned by date and run
 * (DIR/type=app.Request/date=2026-12-03/run=RUN/part-FIRST-LAST.parquet).
 *
 *   rec-export [--format parquet|jsonl] -o DIR FILE...
 *   rec-export --format pprof [--event TYPE] [--weight FIELD] -o FILE.pb.gz FILE
 *
 * --format pprof is rec-flame --format pprof: the same function
 * (rec_flame_run() of tools/rec-flame.c, linked without its main()), so the
 * same profile byte for byte.
 *
 * The rows are those of rec-sql (the same virtual tables, tools/sql/),
 * streamed: memory holds a row group per open partition file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/cli.h"
#include "common/tools.h"
#include "export/dataset.h"
#include "export/parquet.h"
#include "sql/sql.h"

/* ---- Parquet types of the schema's columns ------------------------------------------ */
static rec_pq_column pq_column(const sql_column *c)
{
	rec_pq_column p = { .name = c->name, .unit = c->unit, .logical = REC_PQ_INT, .is_signed = true };
	switch (c->type) {
	case REC_TYPE_BOOL: p.physical = REC_PQ_BOOLEAN; p.logical = REC_PQ_NONE; break;
	case REC_TYPE_U8: p.physical = REC_PQ_INT32; p.bits = 8; p.is_signed = false; break;
	case REC_TYPE_U16: p.physical = REC_PQ_INT32; p.bits = 16; p.is_signed = false; break;
	case REC_TYPE_U32: p.physical = REC_PQ_INT32; p.bits = 32; p.is_signed = false; break;
	case REC_TYPE_I8: p.physical = REC_PQ_INT32; p.bits = 8; break;
	case REC_TYPE_I16: p.physical = REC_PQ_INT32; p.bits = 16; break;
	case REC_TYPE_I32: p.physical = REC_PQ_INT32; p.bits = 32; break;
	case REC_TYPE_U64: case REC_TYPE_STACK:
		p.physical = REC_PQ_INT64; p.bits = 64; p.is_signed = false; break;
	case REC_TYPE_I64: case REC_TYPE_DURATION: case REC_TYPE_THREAD:
		p.physical = REC_PQ_INT64; p.bits = 64; break;
	case REC_TYPE_TIMESTAMP: p.physical = REC_PQ_INT64; p.logical = REC_PQ_TIMESTAMP_NS; break;
	case REC_TYPE_F32: p.physical = REC_PQ_FLOAT; p.logical = REC_PQ_NONE; break;
	case REC_TYPE_F64: p.physical = REC_PQ_DOUBLE; p.logical = REC_PQ_NONE; break;
	case REC_TYPE_BLOB: p.physical = REC_PQ_BYTE_ARRAY; p.logical = REC_PQ_NONE; break;
	default: /* string, text, and types this reader does not know (always NULL) */
		p.physical = REC_PQ_BYTE_ARRAY; p.logical = REC_PQ_STRING; break;
	}
	return p;
}

/* ---- rows into partitions ------------------------------------------------------------ */
static const sql_run *find_run(const rec_sql *s, size_t recording, const char *run_hex)
{
	uint64_t id = strtoull(run_hex ? run_hex : "0", NULL, 16);
	for (size_t i = 0; i < s->nruns; i++)
		if (s->runs[i].recording == recording && s->runs[i].run_id == id)
			return &s->runs[i];
	return NULL;
}

/* The column holding the row's run_id (recording_id is column 0 in every
 * table but types). */
static int run_column(const sql_table *t)
{
	_Static_assert(SQL_EV_RUN == 1 && SQL_DR_RUN == 1 && SQL_RU_RUN == 1 && SQL_TH_RUN == 1 &&
			       SQL_ST_RUN == 1 && SQL_FR_RUN == 1,
		       "run_id is column 1 but in chunks");
	return t->kind == SQL_T_CHUNKS ? SQL_CH_RUN : 1;
}

/* The column holding the row's time, or -1 (the run's first event dates it). */
static int time_column(const sql_table *t)
{
	switch (t->kind) {
	case SQL_T_EVENT: return SQL_EV_START;
	case SQL_T_DROPS: return SQL_DR_START;
	case SQL_T_CHUNKS: return SQL_CH_START;
	default: return -1;
	}
}

static void pq_row(rec_pq_writer *w, sqlite3_stmt *st, int ncol)
{
	for (int i = 0; i < ncol; i++) {
		switch (sqlite3_column_type(st, i)) {
		case SQLITE_INTEGER: rec_pq_int(w, (size_t)i, sqlite3_column_int64(st, i)); break;
		case SQLITE_FLOAT: rec_pq_double(w, (size_t)i, sqlite3_column_double(st, i)); break;
		case SQLITE_TEXT: case SQLITE_BLOB: {
			const void *p = sqlite3_column_blob(st, i);
			rec_pq_bytes(w, (size_t)i, p, (size_t)sqlite3_column_bytes(st, i));
			break;
		}
		default: rec_pq_null(w, (size_t)i); break;
		}
	}
}

/* The directory value of table t: the event type's name, unless it is the
 * name of a fixed table (then the SQL table name, which is not). */
static const char *type_value(const rec_sql *s, const sql_table *t)
{
	if (t->kind != SQL_T_EVENT)
		return t->name;
	for (size_t i = 0; i < s->ntables; i++)
		if (s->tables[i].kind != SQL_T_EVENT && strcasecmp(s->tables[i].name, t->type_name) == 0)
			return t->name;
	return t->type_name;
}

/* The row groups being filled in a table's open Parquet files (one per
 * input, run and date) are written when they hold more than this. */
#define EXPORT_BUFFER_BYTES ((size_t)64 << 20)

/* Export table t; false after an error (reported). */
static bool export_table(sqlite3 *db, rec_sql *s, const sql_table *t, const rec_export_opts *o,
			 uint64_t *files, uint64_t *kept, uint64_t *rows)
{
	size_t ncols = rec_sql_ncols(t);
	rec_pq_column *cols = rec_cli_xmalloc((ncols ? ncols : 1) * sizeof(*cols));
	for (size_t i = 0; i < ncols; i++) {
		sql_column c;
		rec_sql_column(t, i, &c);
		cols[i] = pq_column(&c);
	}
	const rec_pq_kv kv[] = {
		{ "rec.table", t->name },
		{ "rec.type", t->kind == SQL_T_EVENT ? t->type_name : "" },
		{ "rec.schema", "spec/SCHEMA.md version 1" },
	};
	rec_ds_table ds;
	rec_ds_table_init(&ds, o->dir, type_value(s, t), o->format, cols, ncols, kv,
			  sizeof kv / sizeof kv[0], o->group_rows);
	char *q = sqlite3_mprintf("SELECT * FROM temp.\"%w\"", t->name);
	sqlite3_stmt *st = NULL;
	bool ok = q && sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK;
	sqlite3_free(q);
	if (!ok)
		rec_cli_error("SQLite: %s", sqlite3_errmsg(db));
	int tcol = time_column(t), rcol = run_column(t), rc = SQLITE_ROW;
	unsigned since_check = 0;
	int ncol = ok ? sqlite3_column_count(st) : 0;
	while (ok && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t recording = (size_t)sqlite3_column_int64(st, 0) - 1;
		const sql_run *r = find_run(s, recording, (const char *)sqlite3_column_text(st, rcol));
		if (!r)
			continue; /* cannot be: every row's run is in the first pass */
		int64_t when = tcol >= 0 ? sqlite3_column_int64(st, tcol)
					 : r->events ? r->first_ns : r->process_start_ns;
		rec_ds_file *f = rec_ds_file_for(&ds, recording, r->run_id, when, r->first_seq, r->last_seq);
		if (!f) {
			ok = false;
			break;
		}
		if (!f->f)
			continue; /* kept */
		if (o->format == REC_DS_PARQUET) {
			pq_row(f->pq, st, ncol);
			if (!rec_pq_end_row(f->pq)) {
				rec_cli_file_error(f->path, "%s", strerror(errno ? errno : ENOMEM));
				ok = false;
			}
		} else {
			if (rec_out_g.file != f->f) {
				rec_out_flush();
				rec_out_g.file = f->f;
			}
			rec_sql_out_json_row(st, ncol);
		}
		f->rows++;
		(*rows)++;
		if (++since_check == 4096) {
			since_check = 0;
			ok = rec_ds_table_bound(&ds, EXPORT_BUFFER_BYTES);
		}
	}
	if (ok && rc != SQLITE_DONE) {
		rec_cli_error("SQLite: %s", sqlite3_errmsg(db));
		ok = false;
	}
	sqlite3_finalize(st);
	rec_out_flush();
	rec_out_g.file = NULL;
	if (ok)
		ok = rec_ds_table_close(&ds);
	else
		rec_ds_table_abandon(&ds);
	*files += ds.written;
	*kept += ds.kept;
	free(cols);
	return ok;
}


int rec_export_run(const rec_export_opts *o, const rec_cli_input *in, size_t n, FILE *out,
		   FILE *err)
{
	rec_cli_set_streams(out ? out : stdout, err);
	if (!o->dir || !*o->dir)
		return rec_cli_usage_fail("no output directory (-o DIR)");
	if (n < 1)
		return rec_cli_usage_fail("no input file");
	for (size_t i = 0; i < n; i++)
		if (strcmp(in[i].name, "-") == 0)
			return rec_cli_usage_fail("standard input ('-') cannot be scanned more than once: "
						  "give a file");
	struct stat sb;
	if (stat(o->dir, &sb) == 0 && !S_ISDIR(sb.st_mode))
		return rec_cli_usage_fail("-o %s: not a directory", o->dir);
	char **names = rec_cli_xmalloc(n * sizeof(*names));
	for (size_t i = 0; i < n; i++)
		names[i] = (char *)in[i].name;
	rec_sql s;
	if (!rec_sql_load(&s, n, names)) {
		rec_sql_free(&s);
		free(names);
		return REC_EXIT_DATA;
	}
	/* Parquet's UINT64 columns get every bit; JSON lines are rec-sql's */
	s.u64_bits = o->format == REC_DS_PARQUET;
	int rc = REC_EXIT_OK;
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
	    rec_sql_attach(db, &s) != SQLITE_OK) {
		rec_cli_error("SQLite: %s", db ? sqlite3_errmsg(db) : "out of memory");
		rc = REC_EXIT_DATA;
	} else {
		size_t dn = strlen(o->dir) + 2;
		char *d = rec_cli_xmalloc(dn);
		snprintf(d, dn, "%s/", o->dir);
		if (!rec_ds_make_dirs(d))
			rc = REC_EXIT_DATA;
		free(d);
	}
	uint64_t files = 0, kept = 0, rows = 0;
	for (size_t i = 0; rc == REC_EXIT_OK && i < s.ntables; i++)
		if (s.tables[i].kind != SQL_T_TYPES && !export_table(db, &s, &s.tables[i], o, &files, &kept, &rows))
			rc = REC_EXIT_DATA;
	sqlite3_close(db);
	rec_out_printf("%s: %" PRIu64 " rows in %" PRIu64 " new files, %" PRIu64
		       " files kept as they were\n", o->dir, rows, files, kept);
	/* the frames table written: its rows of frames without names */
	for (size_t f = 0; f < s.nfiles; f++)
		rec_cli_unsymbolized_count_note(s.files[f], s.unsymbolized[f]);
	if (s.damaged)
		rc = REC_EXIT_DATA;
	rec_sql_free(&s);
	free(names);
	return rc;
}

#ifndef REC_TOOL_NO_MAIN
static const char usage_text[] =
	"Usage: rec-export [OPTIONS] -o DIR FILE...\n"
	"       rec-export --format pprof [--event TYPE] [--weight FIELD] -o OUT FILE\n"
	"Write the tables of recordings (spec/SCHEMA.md: one per event type, and\n"
	"runs, chunks, threads, stacks, frames, drops) as a dataset under DIR:\n"
	"  DIR/type=T/date=YYYY-MM-DD/run=RUN/part-FIRST-LAST.parquet\n"
	"T is the event type's name (app.Request) or the table's (stacks); the date\n"
	"is the events' start in UTC (the run's first event for tables without a\n"
	"time); FIRST-LAST the run's chunk sequence range in that file.  An existing\n"
	"file is never rewritten: exporting more recordings into DIR adds files.\n"
	"\n"
	"Options:\n"
	"  -o, --output DIR      the dataset's directory (created if missing)\n"
	"  -f, --format F        parquet (the default: zstd pages, statistics) or\n"
	"                        jsonl (one row per line, the same columns)\n"
	"                        or pprof: one event type's stacks as a gzipped\n"
	"                        profile.proto in the file OUT (go tool pprof,\n"
	"                        Pyroscope, Parca, Grafana), exactly what rec-flame\n"
	"                        --format pprof writes (spec/SCHEMA.md, \"Exports: pprof\")\n"
	"      --event TYPE      pprof: the event type (default rec.CPUSample)\n"
	"      --weight FIELD    pprof: what a stack is weighed by, as rec-flame's\n"
	"                        --weight (default: the type's preset)\n"
	"      --row-group N     rows per Parquet row group (default 131072)\n"
	"  -h, --help            show this help and exit\n"
	"      --version         print the library version and exit\n"
	"\n"
	"Examples:\n"
	"  rec-export -o archive run.rec\n"
	"  duckdb -c \"SELECT count(*) FROM read_parquet('archive/type=app.Request/**/*.parquet',\n"
	"                                             hive_partitioning = true)\"\n"
	"\n"
	"Exit status: 0 success, 1 damaged input or a failed write (the files\n"
	"written are complete and valid; the damaged chunks' rows are missing),\n"
	"2 usage error.\n";

enum { OPT_ROW_GROUP = 256, OPT_EVENT, OPT_WEIGHT };

static const struct option long_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "row-group", required_argument, NULL, OPT_ROW_GROUP },
	{ "event", required_argument, NULL, OPT_EVENT },
	{ "weight", required_argument, NULL, OPT_WEIGHT },
	REC_CLI_COMMON_OPTIONS,
};

int main(int argc, char **argv)
{
	rec_cli_init("rec-export");
	rec_cli_note_unsymbolized = true; /* frames without names: say so on stderr */
	rec_export_opts o = { .format = REC_DS_PARQUET, .group_rows = 131072 };
	rec_flame_opts fo = { .event = "rec.CPUSample", .min_pct = -1, .pprof = true };
	bool pprof = false;
	int c;
	while ((c = rec_cli_getopt(argc, argv, "o:f:h", long_opts)) != -1) {
		switch (c) {
		case 'o': o.dir = optarg; break;
		case 'f':
			if (strcmp(optarg, "parquet") == 0)
				o.format = REC_DS_PARQUET;
			else if (strcmp(optarg, "jsonl") == 0)
				o.format = REC_DS_JSONL;
			else if (strcmp(optarg, "pprof") == 0)
				pprof = true;
			else
				rec_cli_usage_error("--format: '%s' is not parquet, jsonl or pprof", optarg);
			break;
		case OPT_EVENT:
			fo.event = optarg;
			fo.event_given = true;
			break;
		case OPT_WEIGHT: fo.weight = optarg; break;
		case OPT_ROW_GROUP: {
			char *end;
			errno = 0;
			unsigned long long n = strtoull(optarg, &end, 10);
			if (errno || *end || n == 0 || n > 100000000 || optarg[0] == '-')
				rec_cli_usage_error("--row-group: '%s' is not a count of rows (1-100000000)", optarg);
			o.group_rows = (size_t)n;
			break;
		}
		default: rec_cli_common_option(c, usage_text);
		}
	}
	if (pprof) {
		if (!o.dir || !*o.dir)
			rec_cli_usage_error("--format pprof: no output file (-o FILE)");
		if (argc - optind != 1)
			rec_cli_usage_error("--format pprof: give one input FILE (as rec-flame)");
		fo.output = o.dir;
		rec_cli_input in = { .name = argv[optind] };
		return rec_cli_finish(rec_flame_run(&fo, &in, NULL, NULL, NULL));
	}
	if (fo.event_given || fo.weight)
		rec_cli_usage_error("--event and --weight are for --format pprof");
	size_t n;
	rec_cli_input *in = rec_cli_operands(argc, argv, &n);
	int rc = rec_export_run(&o, in, n, NULL, NULL);
	free(in);
	return rec_cli_finish(rc);
}
#endif /* REC_TOOL_NO_MAIN */
