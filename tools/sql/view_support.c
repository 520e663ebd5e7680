/* SPDX-License-Identifier: MIT */
/*
 * view_support.c - what rec-view's SQL (spec/views/, spec/SCHEMA.md "Views
 * as SQL") needs of rec-sql beyond the tables of the inputs:
 *
 *   - an empty table for each built-in type the views read (rec.Alloc,
 *     rec.Free, rec.LockWait, rec.CondWait, rec.Sleep, rec.IO,
 *     rec.CPUSample) that the inputs do not declare, with the columns
 *     spec/EVENTS.md gives it, so one query runs on a recording without,
 *     say, CPU samples;
 *   - the view all_events: the fixed columns of every event table of the
 *     inputs and the type's name (type), one query over the events of
 *     every type (rec-view threads counts them per thread);
 *   - epoch_ns(X): X, the identity on rec-sql's times (integers, ns since
 *     the epoch), so that a view reads a time as integer ns with the same
 *     text in DuckDB, whose epoch_ns() turns the Parquet export's
 *     TIMESTAMP WITH TIME ZONE into them.
 */
#include <stdbool.h>
#include <stdio.h>

#include "sql.h"

/* spec/EVENTS.md's fields, as SQL columns after the fixed ones */
static const struct {
	const char *table, *fields;
} builtin_tables[] = {
	{ "rec_Alloc", "address INTEGER, size INTEGER, weight INTEGER, sampled INTEGER" },
	{ "rec_Free", "address INTEGER, size INTEGER, sampled INTEGER" },
	{ "rec_LockWait", "lockAddress INTEGER, lockName TEXT, holderOsThreadId INTEGER, lockKind INTEGER" },
	{ "rec_CondWait", "condAddress INTEGER, mutexAddress INTEGER, mutexName TEXT, timeout INTEGER, "
			  "timed INTEGER, timedOut INTEGER" },
	{ "rec_Sleep", "kind TEXT, requested INTEGER, objectAddress INTEGER" },
	{ "rec_IO", "fd INTEGER, call TEXT, kind TEXT, address TEXT, bytes INTEGER, error INTEGER" },
	{ "rec_CPUSample", "period INTEGER, overruns INTEGER" },
	{ "rec_WallSample", "state TEXT, weight INTEGER, period INTEGER" },
	{ "rec_WriteFailed", "errno INTEGER, message TEXT, action INTEGER, chunks INTEGER, events INTEGER, "
			     "bytes INTEGER" },
};

static void epoch_ns(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	sqlite3_result_value(ctx, argv[0]);
}

/* CREATE TEMP VIEW all_events AS the union of every event table of s
 * (none: an empty one). */
static int all_events(sqlite3 *db, const rec_sql *s)
{
	char *q = sqlite3_mprintf("CREATE TEMP VIEW IF NOT EXISTS all_events AS ");
	bool any = false;
	for (size_t i = 0; q && i < s->ntables; i++) {
		if (s->tables[i].kind != SQL_T_EVENT)
			continue;
		char *n = sqlite3_mprintf("%s%sSELECT recording_id, run_id, chunk_seq, start_ns, duration_ns, "
					  "thread_id, thread_name, stack_id, %Q AS type FROM \"%w\"",
					  q, any ? " UNION ALL " : "", s->tables[i].type_name, s->tables[i].name);
		sqlite3_free(q);
		q = n;
		any = true;
	}
	if (q && !any) {
		char *n = sqlite3_mprintf("%sSELECT NULL AS recording_id, NULL AS run_id, NULL AS chunk_seq, "
					  "NULL AS start_ns, NULL AS duration_ns, NULL AS thread_id, "
					  "NULL AS thread_name, NULL AS stack_id, NULL AS type WHERE 0", q);
		sqlite3_free(q);
		q = n;
	}
	if (!q)
		return SQLITE_NOMEM;
	int rc = sqlite3_exec(db, q, NULL, NULL, NULL);
	sqlite3_free(q);
	return rc;
}

int rec_sql_view_support(sqlite3 *db, const rec_sql *s)
{
	int rc = sqlite3_create_function(db, "epoch_ns", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
					 epoch_ns, NULL, NULL);
	for (size_t i = 0; rc == SQLITE_OK && i < sizeof builtin_tables / sizeof builtin_tables[0]; i++) {
		char *q = sqlite3_mprintf("CREATE TEMP TABLE IF NOT EXISTS \"%w\"(recording_id INTEGER, "
					  "run_id TEXT, chunk_seq INTEGER, start_ns INTEGER, "
					  "duration_ns INTEGER, thread_id INTEGER, thread_name TEXT, "
					  "stack_id INTEGER, %s)",
					  builtin_tables[i].table, builtin_tables[i].fields);
		if (!q)
			return SQLITE_NOMEM;
		rc = sqlite3_exec(db, q, NULL, NULL, NULL);
		sqlite3_free(q);
	}
	return rc == SQLITE_OK ? all_events(db, s) : rc;
}
