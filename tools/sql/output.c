/* SPDX-License-Identifier: MIT */
/*
 * output.c - rec-sql's results on standard output: aligned text (column
 * widths from the first SQL_TEXT_ROWS rows, so memory stays bounded), CSV
 * (RFC 4180) or JSON lines (one object per row, column names as keys).
 * NULL is empty in text and CSV, null in JSON; a real is printed with the
 * fewest digits that read back as the same double; a blob as x'hex' (hex
 * string in JSON).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cli.h"
#include "sql.h"

#define SQL_TEXT_ROWS 1000

/* The shortest %g form of v that reads back as v, with ".0" when it would
 * look like an integer. */
static size_t fmt_real(char *buf, size_t cap, double v)
{
	if (isnan(v))
		return (size_t)snprintf(buf, cap, "NaN");
	if (isinf(v))
		return (size_t)snprintf(buf, cap, v < 0 ? "-Inf" : "Inf");
	int n = 0;
	for (int prec = 15; prec <= 17; prec++) {
		n = snprintf(buf, cap, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (!strpbrk(buf, ".en") && (size_t)n + 2 < cap) {
		memcpy(buf + n, ".0", 3);
		n += 2;
	}
	return (size_t)n;
}

/* A cell as text (text and CSV formats); heap string. */
static char *cell_text(sqlite3_stmt *st, int i)
{
	char num[64];
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_NULL:
		return rec_cli_xstrdup("");
	case SQLITE_INTEGER:
		snprintf(num, sizeof num, "%lld", (long long)sqlite3_column_int64(st, i));
		return rec_cli_xstrdup(num);
	case SQLITE_FLOAT:
		fmt_real(num, sizeof num, sqlite3_column_double(st, i));
		return rec_cli_xstrdup(num);
	case SQLITE_BLOB: {
		static const char hx[] = "0123456789abcdef";
		const unsigned char *p = sqlite3_column_blob(st, i);
		size_t n = (size_t)sqlite3_column_bytes(st, i);
		char *s = rec_cli_xmalloc(2 * n + 4), *q = s;
		*q++ = 'x';
		*q++ = '\'';
		for (size_t k = 0; k < n; k++) {
			*q++ = hx[p[k] >> 4];
			*q++ = hx[p[k] & 15];
		}
		*q++ = '\'';
		*q = 0;
		return s;
	}
	default: {
		const char *p = (const char *)sqlite3_column_text(st, i);
		size_t n = (size_t)sqlite3_column_bytes(st, i);
		char *s = rec_cli_xmalloc(n + 1);
		memcpy(s, p ? p : "", n);
		s[n] = 0;
		return s;
	}
	}
}

/* ---- text ------------------------------------------------------------------------ */
/* Characters on screen (UTF-8 code points), control characters as two. */
static size_t width_of(const char *s)
{
	size_t w = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p & 0xC0) != 0x80)
			w += *p < 0x20 ? 2 : 1;
	return w;
}

/* s with control characters as \n, \t, \r or ^X: one row stays one line. */
static void out_text_cell(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p >= 0x20) {
			rec_out_char((char)*p);
			continue;
		}
		rec_out_char(*p == '\n' || *p == '\t' || *p == '\r' ? '\\' : '^');
		rec_out_char(*p == '\n' ? 'n' : *p == '\t' ? 't' : *p == '\r' ? 'r' : (char)(*p + '@'));
	}
}

static void out_pad(size_t n)
{
	while (n--)
		rec_out_char(' ');
}

typedef struct text_state {
	int ncol;
	size_t *width;
	bool *right; /* numbers right-aligned (by the first rows' types) */
	char **rows; /* buffered cells, ncol per row */
	size_t nrows;
	bool started;
} text_state;

static void text_line(const text_state *ts, char *const *cells)
{
	for (int i = 0; i < ts->ncol; i++) {
		size_t w = width_of(cells[i]);
		size_t pad = ts->width[i] > w ? ts->width[i] - w : 0;
		if (i > 0)
			REC_OUT_LIT("  ");
		if (ts->right[i])
			out_pad(pad);
		out_text_cell(cells[i]);
		if (!ts->right[i] && i + 1 < ts->ncol)
			out_pad(pad);
	}
	rec_out_char('\n');
}

static void text_flush(text_state *ts, sqlite3_stmt *st)
{
	if (!ts->started) {
		char **head = rec_cli_xmalloc((size_t)ts->ncol * sizeof(char *));
		char **rule = rec_cli_xmalloc((size_t)ts->ncol * sizeof(char *));
		for (int i = 0; i < ts->ncol; i++) {
			head[i] = (char *)sqlite3_column_name(st, i);
			if (!head[i])
				head[i] = (char *)"";
			size_t w = width_of(head[i]);
			if (w > ts->width[i])
				ts->width[i] = w;
		}
		text_line(ts, head);
		for (int i = 0; i < ts->ncol; i++) {
			rule[i] = rec_cli_xmalloc(ts->width[i] + 1);
			memset(rule[i], '-', ts->width[i]);
			rule[i][ts->width[i]] = 0;
		}
		text_line(ts, rule);
		for (int i = 0; i < ts->ncol; i++)
			free(rule[i]);
		free(rule);
		free(head);
		ts->started = true;
	}
	for (size_t r = 0; r < ts->nrows; r++) {
		text_line(ts, ts->rows + r * (size_t)ts->ncol);
		for (int i = 0; i < ts->ncol; i++)
			free(ts->rows[r * (size_t)ts->ncol + (size_t)i]);
	}
	ts->nrows = 0;
}

/* ---- CSV and JSON lines -------------------------------------------------------------- */
static void out_csv_cell(const char *s)
{
	if (!strpbrk(s, ",\"\r\n") && s[0] != ' ' && (s[0] == 0 || s[strlen(s) - 1] != ' ')) {
		rec_out_str(s);
		return;
	}
	rec_out_char('"');
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			rec_out_char('"');
		rec_out_char(*p);
	}
	rec_out_char('"');
}

void rec_sql_out_json_row(sqlite3_stmt *st, int ncol)
{
	rec_out_char('{');
	for (int i = 0; i < ncol; i++) {
		if (i)
			REC_OUT_LIT(", ");
		const char *name = sqlite3_column_name(st, i);
		rec_out_json_cstr(name ? name : "");
		REC_OUT_LIT(": ");
		switch (sqlite3_column_type(st, i)) {
		case SQLITE_NULL:
			REC_OUT_LIT("null");
			break;
		case SQLITE_INTEGER:
			rec_out_i64(sqlite3_column_int64(st, i));
			break;
		case SQLITE_FLOAT:
			rec_out_json_double(sqlite3_column_double(st, i));
			break;
		case SQLITE_BLOB:
			rec_out_hex_bytes_json(sqlite3_column_blob(st, i),
					       (size_t)sqlite3_column_bytes(st, i));
			break;
		default:
			rec_out_json_string((const char *)sqlite3_column_text(st, i),
					    (size_t)sqlite3_column_bytes(st, i));
			break;
		}
	}
	REC_OUT_LIT("}\n");
}

/* ---- statements ---------------------------------------------------------------------- */
static int run_one(sqlite3 *db, sqlite3_stmt *st, sql_out_format format)
{
	int ncol = sqlite3_column_count(st);
	text_state ts = { 0 };
	if (format == SQL_OUT_TEXT && ncol > 0) {
		ts.ncol = ncol;
		ts.width = rec_cli_xmalloc((size_t)ncol * sizeof(size_t));
		ts.right = rec_cli_xmalloc((size_t)ncol * sizeof(bool));
		ts.rows = rec_cli_xmalloc((size_t)ncol * SQL_TEXT_ROWS * sizeof(char *));
		for (int i = 0; i < ncol; i++) {
			ts.width[i] = 0;
			ts.right[i] = true;
		}
	}
	bool header = false;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		switch (format) {
		case SQL_OUT_TEXT:
			for (int i = 0; i < ncol; i++) {
				char *cell = cell_text(st, i);
				int t = sqlite3_column_type(st, i);
				if (!ts.started && t != SQLITE_INTEGER && t != SQLITE_FLOAT && t != SQLITE_NULL)
					ts.right[i] = false;
				size_t w = width_of(cell);
				if (!ts.started && w > ts.width[i])
					ts.width[i] = w;
				ts.rows[ts.nrows * (size_t)ncol + (size_t)i] = cell;
			}
			if (++ts.nrows == SQL_TEXT_ROWS)
				text_flush(&ts, st);
			break;
		case SQL_OUT_CSV:
			if (!header) {
				for (int i = 0; i < ncol; i++) {
					if (i)
						rec_out_char(',');
					const char *name = sqlite3_column_name(st, i);
					out_csv_cell(name ? name : "");
				}
				REC_OUT_LIT("\r\n");
				header = true;
			}
			for (int i = 0; i < ncol; i++) {
				if (i)
					rec_out_char(',');
				char *cell = cell_text(st, i);
				out_csv_cell(cell);
				free(cell);
			}
			REC_OUT_LIT("\r\n");
			break;
		case SQL_OUT_JSONL:
			rec_sql_out_json_row(st, ncol);
			break;
		}
	}
	if (format == SQL_OUT_TEXT && ncol > 0) {
		if (rc == SQLITE_DONE || ts.nrows > 0)
			text_flush(&ts, st);
		free(ts.width);
		free(ts.right);
		free(ts.rows);
	}
	if (rc != SQLITE_DONE) {
		rec_out_flush();
		rec_cli_error("SQL error: %s", sqlite3_errmsg(db));
		return 1;
	}
	return 0;
}

int rec_sql_run(sqlite3 *db, const char *sql, sql_out_format format)
{
	const char *tail = sql;
	while (tail && *tail) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK) {
			rec_out_flush();
			rec_cli_error("SQL error: %s", sqlite3_errmsg(db));
			return 1;
		}
		if (!st)
			continue; /* only spaces or a comment */
		int rc = run_one(db, st, format);
		sqlite3_finalize(st);
		if (rc)
			return rc;
	}
	return 0;
}
