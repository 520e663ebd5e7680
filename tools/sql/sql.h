/* SPDX-License-Identifier: MIT */
/*
 * sql.h - rec-sql's parts (tools/sql/): the schema of spec/SCHEMA.md derived
 * from the inputs' METADATA (schema.c), the SQLite virtual-table module that
 * scans them through the reader (vtab.c), and the result formats (output.c).
 * Only tools/rec-sql.c and these files include it.
 */
#ifndef REC_TOOLS_SQL_H
#define REC_TOOLS_SQL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rec/rec.h"

/* The tables of spec/SCHEMA.md. */
typedef enum {
	SQL_T_EVENT,
	SQL_T_TYPES,
	SQL_T_CHUNKS,
	SQL_T_RUNS,
	SQL_T_THREADS,
	SQL_T_STACKS,
	SQL_T_FRAMES,
	SQL_T_DROPS
} sql_table_kind;

/* The fixed columns every event table starts with (SCHEMA.md). */
enum {
	SQL_EV_RECORDING,
	SQL_EV_RUN,
	SQL_EV_CHUNK_SEQ,
	SQL_EV_START,
	SQL_EV_DURATION,
	SQL_EV_THREAD_ID,
	SQL_EV_THREAD_NAME,
	SQL_EV_STACK,
	SQL_EV_FIXED
};

/* The columns of the fixed tables, in the order of their declarations
 * (schema.c); vtab.c produces them by these numbers. */
enum { SQL_TY_NAME, SQL_TY_TABLE, SQL_TY_CATEGORY, SQL_TY_LABEL, SQL_TY_DESCRIPTION, SQL_TY_EVENTS,
       SQL_TY_N };
enum { SQL_CH_RECORDING, SQL_CH_FILE, SQL_CH_INDEX, SQL_CH_OFFSET, SQL_CH_SIZE, SQL_CH_RUN,
       SQL_CH_SEQ, SQL_CH_PID, SQL_CH_CODEC, SQL_CH_START, SQL_CH_DURATION, SQL_CH_FIRST,
       SQL_CH_LAST, SQL_CH_EVENTS, SQL_CH_DROPPED, SQL_CH_PAYLOAD, SQL_CH_RAW, SQL_CH_FINAL,
       SQL_CH_N };
enum { SQL_RU_RECORDING, SQL_RU_RUN, SQL_RU_PID, SQL_RU_PSTART, SQL_RU_FIRST, SQL_RU_LAST,
       SQL_RU_CHUNKS, SQL_RU_EVENTS, SQL_RU_DROPPED, SQL_RU_CLEAN, SQL_RU_TRUNCATED,
       SQL_RU_CRASHES, SQL_RU_DAMAGED, SQL_RU_N };
enum { SQL_TH_RECORDING, SQL_TH_RUN, SQL_TH_ID, SQL_TH_NAME, SQL_TH_N };
enum { SQL_ST_RECORDING, SQL_ST_RUN, SQL_ST_ID, SQL_ST_POSITION, SQL_ST_FRAME, SQL_ST_DEPTH,
       SQL_ST_TRUNCATED, SQL_ST_N };
enum { SQL_FR_RECORDING, SQL_FR_RUN, SQL_FR_ID, SQL_FR_FUNCTION, SQL_FR_MODULE, SQL_FR_BUILD_ID,
       SQL_FR_MODULE_OFFSET, SQL_FR_FUNCTION_OFFSET, SQL_FR_FILE, SQL_FR_LINE, SQL_FR_INLINE,
       SQL_FR_N };
enum { SQL_DR_RECORDING, SQL_DR_RUN, SQL_DR_SEQ, SQL_DR_START, SQL_DR_THREAD_ID,
       SQL_DR_THREAD_NAME, SQL_DR_TYPE, SQL_DR_REASON, SQL_DR_REASON_NAME, SQL_DR_COUNT,
       SQL_DR_N };

/* A column of an event table after the fixed ones: a field, or the name
 * column of a thread field. */
typedef struct sql_col {
	char *name;    /* SQL name */
	char *field;   /* the field's name in METADATA */
	uint32_t type; /* rec_field_type */
	uint32_t unit; /* rec_unit */
	bool thread_name;
} sql_col;

typedef struct sql_table {
	sql_table_kind kind;
	char *name; /* SQL name */
	char *decl; /* CREATE TABLE name(...) with each column's unit as a comment */
	/* Event tables: */
	char *type_name, *category, *label, *description;
	uint64_t events; /* from the chunks' STATS */
	size_t ncols;
	sql_col *cols;
} sql_table;

typedef struct sql_run {
	size_t recording; /* 0-based file index */
	uint64_t run_id;
	uint32_t pid;
	int64_t process_start_ns;
	int64_t first_ns, last_ns; /* valid when events > 0 */
	uint64_t chunks, events, dropped;
	uint64_t first_seq, last_seq; /* the smallest and largest chunk Sequence */
	bool final;
	bool truncated;   /* the file ends inside a chunk after one of the run */
	uint64_t crashes; /* rec.Crash events, from STATS */
	uint64_t damaged; /* damaged chunks of its input counted to it (rec_sql_load) */
} sql_run;

/* A problem already reported (reported once, though several scans meet it). */
typedef struct sql_seen_problem {
	size_t file;
	int64_t chunk;
	uint64_t offset;
} sql_seen_problem;

typedef struct rec_sql {
	size_t nfiles;
	char *const *files;
	sql_table *tables;
	size_t ntables;
	sql_run *runs;
	size_t nruns;
	sql_seen_problem *seen;
	size_t nseen, seen_cap;
	bool damaged;            /* a problem was reported: exit 1 */
	bool u64_bits;           /* u64 fields as their 64 bits (an INTEGER that is
				  * negative above 2^63 - 1), not REAL: rec-export */
	uint64_t chunks_decoded; /* chunks whose events a scan read */
	uint64_t chunks_skipped; /* chunks a scan passed over by header and STATS */
	uint64_t *unsymbolized;  /* per file: frames rows whose module has a
				  * build-id but no name (rec_frame_unsymbolized) */
} rec_sql;

/* schema.c: read every chunk's header, METADATA and STATS of the files
 * (problems reported on stderr) and build the tables.  Returns false on
 * an input that cannot be opened (reported). */
bool rec_sql_load(rec_sql *s, size_t nfiles, char *const *files);
void rec_sql_free(rec_sql *s);
/* A column of any table, as engines other than SQLite need it: its values
 * have the rec_field_type type (a thread name column is REC_TYPE_STRING),
 * unit as --schema prints it ("" for none). */
typedef struct sql_column {
	const char *name;
	uint32_t type;
	const char *unit;
} sql_column;
size_t rec_sql_ncols(const sql_table *t);
void rec_sql_column(const sql_table *t, size_t i, sql_column *out);
/* Report a reader problem of file once (later reports of the same are
 * silent); marks s damaged. */
void rec_sql_problem(rec_sql *s, size_t file, const rec_problem *p, rec_status st);
/* The run id as SCHEMA.md spells it: 16 lowercase hex digits (buf >= 17). */
void rec_sql_run_id(char *buf, uint64_t id);

/* vtab.c: register the module and create every table of s in db's main
 * schema.  Returns SQLITE_OK or an error (message in db). */
int rec_sql_attach(sqlite3 *db, rec_sql *s);

/* view_support.c: what rec-view's SQL needs beyond the inputs' tables:
 * epoch_ns(X) (X: rec-sql's times are ns already), an empty table for
 * each built-in type the views read that the inputs do not declare, and
 * the view all_events over every event table of s. */
int rec_sql_view_support(sqlite3 *db, const rec_sql *s);

/* output.c: the formats of results. */
typedef enum { SQL_OUT_TEXT, SQL_OUT_CSV, SQL_OUT_JSONL } sql_out_format;
/* Run every statement of sql on db, printing each one's rows in format.
 * Returns 0, or 1 after printing "rec-sql: SQL error: ..." on stderr. */
int rec_sql_run(sqlite3 *db, const char *sql, sql_out_format format);
/* The current row of st as one JSON line (column names as keys) on the
 * rec_out buffer. */
void rec_sql_out_json_row(sqlite3_stmt *st, int ncol);

#endif /* REC_TOOLS_SQL_H */
