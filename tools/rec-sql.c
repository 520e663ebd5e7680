/* SPDX-License-Identifier: MIT */
/*
 * rec-sql - SQL over recordings: every table of spec/SCHEMA.md as an SQLite
 * virtual table over the reader (tools/sql/), no import step.
 *
 *   rec-sql [OPTIONS] FILE... 'SELECT ...'    run the statements, print the rows
 *   rec-sql [OPTIONS] FILE...                 statements from standard input
 *   rec-sql --schema FILE...                  the tables, as CREATE TABLE
 *   rec-sql --export DB.sqlite FILE...        a SQLite database of the tables
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/tools.h"
#include "sql/sql.h"

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

static void print_schema(const rec_sql *s)
{
	for (size_t i = 0; i < s->ntables; i++) {
		rec_out_str(s->tables[i].decl);
		REC_OUT_LIT(";\n");
	}
}

/* The tables into a new SQLite file: PATH.tmp.PID, renamed over PATH. */
static int export_db(sqlite3 *db, const rec_sql *s, const char *path)
{
	size_t n = strlen(path) + 32;
	char *tmp = rec_cli_xmalloc(n);
	snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
	unlink(tmp);
	int rc = SQLITE_OK;
	sqlite3_stmt *st = NULL;
	rc = sqlite3_prepare_v2(db, "ATTACH DATABASE ? AS out", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 1, tmp, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	sqlite3_finalize(st);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "PRAGMA out.journal_mode = OFF; BEGIN", NULL, NULL, NULL);
	for (size_t i = 0; rc == SQLITE_OK && i < s->ntables; i++) {
		const char *decl = s->tables[i].decl + strlen("CREATE TABLE ");
		char *q = sqlite3_mprintf("CREATE TABLE out.%s; INSERT INTO out.\"%w\" SELECT * FROM temp.\"%w\"",
					  decl, s->tables[i].name, s->tables[i].name);
		rc = q ? sqlite3_exec(db, q, NULL, NULL, NULL) : SQLITE_NOMEM;
		sqlite3_free(q);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		rec_cli_file_error(path, "%s", sqlite3_errmsg(db));
	if (sqlite3_exec(db, "DETACH DATABASE out", NULL, NULL, NULL) != SQLITE_OK && rc == SQLITE_OK) {
		rec_cli_file_error(path, "%s", sqlite3_errmsg(db));
		rc = SQLITE_ERROR;
	}
	if (rc == SQLITE_OK && rename(tmp, path) != 0) {
		rec_cli_file_error(path, "%s", strerror(errno));
		rc = SQLITE_ERROR;
	}
	if (rc != SQLITE_OK)
		unlink(tmp);
	free(tmp);
	return rc == SQLITE_OK ? 0 : 1;
}

/* Statements from standard input, each run once sqlite3_complete() says
 * it is whole; the prompt (on stderr) only on a terminal. */
static int interactive(sqlite3 *db, sql_out_format format)
{
	bool tty = isatty(STDIN_FILENO);
	char *line = NULL;
	size_t cap = 0;
	rec_cli_strbuf b = { 0 }; /* the statement so far */
	int rc = 0;
	for (;;) {
		if (tty) {
			rec_cli_out_sync();
			fputs(b.len ? "   ...> " : "rec-sql> ", stderr);
		}
		ssize_t n = getline(&line, &cap, stdin);
		if (n < 0)
			break;
		rec_cli_strbuf_add(&b, line, (size_t)n);
		if (sqlite3_complete(b.s)) {
			rc |= rec_sql_run(db, b.s, format);
			rec_cli_strbuf_reset(&b);
			if (tty)
				rec_cli_out_sync();
		}
	}
	if (b.len > 0 && strspn(b.s, " \t\r\n") < b.len)
		rc |= rec_sql_run(db, b.s, format);
	if (tty)
		fputc('\n', stderr);
	free(line);
	rec_cli_strbuf_free(&b);
	return rc;
}


int rec_sql_tool_run(const rec_sql_tool_opts *o, const rec_cli_input *in, size_t n, FILE *out,
		     FILE *err)
{
	rec_cli_set_streams(out ? out : stdout, err);
	if (o->schema && o->export_path)
		return rec_cli_usage_fail("--schema and --export exclude each other");
	if ((o->schema || o->export_path) && o->query)
		return rec_cli_usage_fail("--query with %s", o->schema ? "--schema" : "--export");
	if (n < 1)
		return rec_cli_usage_fail("no input file");
	for (size_t i = 0; i < n; i++)
		if (strcmp(in[i].name, "-") == 0)
			return rec_cli_usage_fail("standard input ('-') cannot be scanned more than once: "
						  "give a file");
	char **files = rec_cli_xmalloc(n * sizeof(*files));
	for (size_t i = 0; i < n; i++)
		files[i] = (char *)in[i].name;
	rec_sql s;
	if (!rec_sql_load(&s, n, files)) {
		rec_sql_free(&s);
		free(files);
		return REC_EXIT_DATA;
	}
	sql_out_format format = (sql_out_format)o->format;
	int rc = 0;
	if (o->schema) {
		print_schema(&s);
	} else {
		sqlite3 *db = NULL;
		if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
			    SQLITE_OK ||
		    rec_sql_attach(db, &s) != SQLITE_OK || rec_sql_view_support(db, &s) != SQLITE_OK) {
			rec_cli_error("SQLite: %s", db ? sqlite3_errmsg(db) : "out of memory");
			rc = 1;
		} else if (o->export_path) {
			rc = export_db(db, &s, o->export_path);
		} else if (o->query) {
			rc = rec_sql_run(db, o->query, format);
		} else {
			rc = interactive(db, format);
		}
		sqlite3_close(db);
	}
	if (o->stats && rec_cli_out_sync())
		fprintf(rec_cli_err(), "rec-sql: chunks: %llu decoded, %llu skipped\n",
			(unsigned long long)s.chunks_decoded, (unsigned long long)s.chunks_skipped);
	if (s.damaged)
		rc = REC_EXIT_DATA;
	rec_sql_free(&s);
	free(files);
	return rc ? REC_EXIT_DATA : REC_EXIT_OK;
}

#ifndef REC_TOOL_NO_MAIN
static const char usage_text[] =
	"Usage: rec-sql [OPTIONS] FILE... [SQL]\n"
	"       rec-sql --schema FILE...\n"
	"       rec-sql --export DB.sqlite FILE...\n"
	"SQL over recordings (SQLite): one table per event type, named from the\n"
	"recording's metadata (rec.LockWait is rec_LockWait), and the tables types,\n"
	"chunks, runs, threads, stacks, frames and drops (spec/SCHEMA.md).  Tables are\n"
	"scans of the files, streamed; a condition on start_ns skips the chunks\n"
	"outside it before they are decompressed.\n"
	"\n"
	"The last operand is the SQL (one or more statements) when there are two or\n"
	"more and it does not name an existing file; without SQL, statements are read\n"
	"from standard input (with a prompt on a terminal), each run when complete.\n"
	"\n"
	"Options:\n"
	"  -f, --format F     rows as text (aligned, the default), csv or jsonl\n"
	"  -e, --query SQL    the SQL to run (every operand is then a file)\n"
	"      --schema       print the tables of the files as CREATE TABLE statements\n"
	"      --export DB    write the tables into a new SQLite database file DB\n"
	"                     (replaced if it exists)\n"
	"      --stats        at the end, on stderr: chunks decoded and skipped\n"
	"  -h, --help         show this help and exit\n"
	"      --version      print the library version and exit\n"
	"\n"
	"Examples:\n"
	"  rec-sql run.rec 'SELECT count(*), sum(duration_ns) FROM rec_LockWait'\n"
	"  rec-sql --format csv a.rec b.rec \\\n"
	"    'SELECT thread_name, count(*) FROM rec_CPUSample GROUP BY 1 ORDER BY 2 DESC'\n"
	"\n"
	"Exit status: 0 success, 1 damaged input, I/O or SQL error (after printing\n"
	"every row it could), 2 usage error.\n";

enum { OPT_SCHEMA = 256, OPT_EXPORT, OPT_STATS };

static const struct option long_opts[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "query", required_argument, NULL, 'e' },
	{ "schema", no_argument, NULL, OPT_SCHEMA },
	{ "export", required_argument, NULL, OPT_EXPORT },
	{ "stats", no_argument, NULL, OPT_STATS },
	REC_CLI_COMMON_OPTIONS,
};

int main(int argc, char **argv)
{
	rec_cli_init("rec-sql");
	rec_sql_tool_opts so = { .format = SQL_OUT_TEXT };
	int c;
	while ((c = rec_cli_getopt(argc, argv, "f:e:h", long_opts)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "text") == 0)
				so.format = SQL_OUT_TEXT;
			else if (strcmp(optarg, "csv") == 0)
				so.format = SQL_OUT_CSV;
			else if (strcmp(optarg, "jsonl") == 0)
				so.format = SQL_OUT_JSONL;
			else
				rec_cli_usage_error("--format: '%s' is not text, csv or jsonl", optarg);
			break;
		case 'e': so.query = optarg; break;
		case OPT_SCHEMA: so.schema = true; break;
		case OPT_EXPORT: so.export_path = optarg; break;
		case OPT_STATS: so.stats = true; break;
		default: rec_cli_common_option(c, usage_text);
		}
	}
	/* QUERY as the last operand when it names no file */
	int nfiles = argc - optind;
	if (!so.query && !so.schema && !so.export_path && nfiles >= 2 && !is_file(argv[argc - 1]))
		so.query = argv[--nfiles + optind];
	size_t n = (size_t)nfiles;
	rec_cli_input *in = rec_cli_xmalloc((n ? n : 1) * sizeof(*in));
	for (size_t i = 0; i < n; i++)
		in[i] = (rec_cli_input){ .name = argv[optind + (int)i] };
	int rc = rec_sql_tool_run(&so, in, n, NULL, NULL);
	free(in);
	return rec_cli_finish(rc);
}
#endif /* REC_TOOL_NO_MAIN */
