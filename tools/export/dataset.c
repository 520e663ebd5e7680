/* SPDX-License-Identifier: MIT */
/*
 * dataset.c - the partition files of rec-export's dataset (dataset.h):
 * Hive-style directories, unique names per run and chunk range, atomic
 * completion (temporary name, rename), existing files never rewritten.
 */
#include "dataset.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/cli.h"
#include "../sql/sql.h"

void rec_ds_date(int64_t epoch_ns, char *buf)
{
	int64_t s = epoch_ns / 1000000000;
	if (epoch_ns % 1000000000 < 0)
		s--;
	time_t t = (time_t)s;
	struct tm tm;
	if (!gmtime_r(&t, &tm) || strftime(buf, 16, "%Y-%m-%d", &tm) == 0)
		snprintf(buf, 16, "unknown");
}

/* "type=" and v with every byte other than [A-Za-z0-9._-] as %XX (Hive's
 * escaping of partition values). */
static char *type_dir(const char *v)
{
	size_t n = strlen(v);
	char *p = rec_cli_xmalloc(3 * n + 8), *q = p;
	q += sprintf(q, "type=");
	for (const unsigned char *s = (const unsigned char *)v; *s; s++) {
		bool ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			  (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-';
		if (ok)
			*q++ = (char)*s;
		else
			q += sprintf(q, "%%%02X", *s);
	}
	*q = 0;
	return p;
}

void rec_ds_table_init(rec_ds_table *t, const char *root, const char *type_value,
		       rec_ds_format format, const rec_pq_column *cols, size_t ncols,
		       const rec_pq_kv *kv, size_t nkv, size_t group_rows)
{
	memset(t, 0, sizeof(*t));
	t->root = root;
	t->type_dir = type_dir(type_value);
	t->format = format;
	t->cols = cols;
	t->ncols = ncols;
	t->kv = kv;
	t->nkv = nkv;
	t->group_rows = group_rows;
}

bool rec_ds_make_dirs(const char *path)
{
	char *p = rec_cli_xstrdup(path);
	bool ok = true;
	for (char *s = strchr(p + 1, '/'); s && ok; s = strchr(s + 1, '/')) {
		*s = 0;
		struct stat st;
		if (mkdir(p, 0777) != 0) {
			int err = errno;
			if (err != EEXIST || stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
				rec_cli_file_error(p, "%s", strerror(err == EEXIST ? ENOTDIR : err));
				ok = false;
			}
		}
		*s = '/';
	}
	free(p);
	return ok;
}

static bool open_file(rec_ds_table *t, rec_ds_file *f, uint64_t seq_first, uint64_t seq_last)
{
	char run[17];
	rec_sql_run_id(run, f->run);
	const char *ext = t->format == REC_DS_PARQUET ? "parquet" : "jsonl";
	size_t n = strlen(t->root) + strlen(t->type_dir) + 128;
	f->path = rec_cli_xmalloc(n);
	snprintf(f->path, n, "%s/%s/date=%s/run=%s/part-%" PRIu64 "-%" PRIu64 ".%s", t->root,
		 t->type_dir, f->date, run, seq_first, seq_last, ext);
	struct stat st;
	if (stat(f->path, &st) == 0) {
		t->kept++;
		return true; /* written by an earlier export: never rewritten */
	}
	if (!rec_ds_make_dirs(f->path))
		return false;
	n = strlen(f->path) + 32;
	f->tmp = rec_cli_xmalloc(n);
	snprintf(f->tmp, n, "%s.tmp.%ld", f->path, (long)getpid());
	f->f = fopen(f->tmp, "wb");
	if (!f->f) {
		rec_cli_file_error(f->tmp, "%s", strerror(errno));
		free(f->tmp);
		f->tmp = NULL;
		return false;
	}
	if (t->format == REC_DS_PARQUET) {
		f->pq = rec_pq_writer_create(f->f, t->cols, t->ncols, t->kv, t->nkv, t->group_rows);
		if (!f->pq) {
			rec_cli_file_error(f->tmp, "out of memory");
			return false;
		}
	}
	return true;
}

rec_ds_file *rec_ds_file_for(rec_ds_table *t, size_t recording, uint64_t run, int64_t epoch_ns,
			     uint64_t seq_first, uint64_t seq_last)
{
	char date[16];
	rec_ds_date(epoch_ns, date);
	if (t->last < t->nfiles) {
		rec_ds_file *f = &t->files[t->last];
		if (f->recording == recording && f->run == run && strcmp(f->date, date) == 0)
			return f;
	}
	for (size_t i = 0; i < t->nfiles; i++) {
		rec_ds_file *f = &t->files[i];
		if (f->recording == recording && f->run == run && strcmp(f->date, date) == 0) {
			t->last = i;
			return f;
		}
	}
	t->files = rec_cli_xrealloc(t->files, (t->nfiles + 1) * sizeof(*t->files));
	rec_ds_file *f = &t->files[t->nfiles];
	memset(f, 0, sizeof(*f));
	f->recording = recording;
	f->run = run;
	memcpy(f->date, date, sizeof date);
	t->last = t->nfiles++;
	return open_file(t, f, seq_first, seq_last) ? f : NULL;
}

bool rec_ds_table_bound(rec_ds_table *t, size_t budget)
{
	if (t->format != REC_DS_PARQUET || t->nfiles < 2)
		return true; /* one file bounds itself */
	size_t total = 0;
	for (size_t i = 0; i < t->nfiles; i++)
		if (t->files[i].pq)
			total += rec_pq_buffered(t->files[i].pq);
	if (total <= budget)
		return true;
	for (size_t i = 0; i < t->nfiles; i++) {
		rec_ds_file *f = &t->files[i];
		if (f->pq && rec_pq_buffered(f->pq) > 0 && !rec_pq_flush(f->pq)) {
			rec_cli_file_error(f->path, "%s", strerror(errno ? errno : ENOMEM));
			return false;
		}
	}
	return true;
}

static void drop_file(rec_ds_file *f)
{
	rec_pq_writer_free(f->pq);
	f->pq = NULL;
	if (f->f)
		fclose(f->f);
	f->f = NULL;
	if (f->tmp)
		unlink(f->tmp);
}

bool rec_ds_table_close(rec_ds_table *t)
{
	bool ok = true;
	for (size_t i = 0; i < t->nfiles; i++) {
		rec_ds_file *f = &t->files[i];
		if (!f->f)
			continue;
		bool good = t->format == REC_DS_PARQUET ? rec_pq_finish(f->pq) : fflush(f->f) == 0;
		int err = errno;
		rec_pq_writer_free(f->pq);
		f->pq = NULL;
		if (good && ferror(f->f)) {
			good = false;
			err = EIO;
		}
		if (fclose(f->f) != 0 && good) {
			good = false;
			err = errno;
		}
		f->f = NULL;
		if (good && rename(f->tmp, f->path) != 0) {
			good = false;
			err = errno;
		}
		if (!good) {
			rec_cli_file_error(f->path, "%s", strerror(err ? err : EIO));
			unlink(f->tmp);
			ok = false;
		} else {
			t->written++;
			free(f->tmp);
			f->tmp = NULL;
		}
	}
	rec_ds_table_abandon(t);
	return ok;
}

void rec_ds_table_abandon(rec_ds_table *t)
{
	for (size_t i = 0; i < t->nfiles; i++) {
		drop_file(&t->files[i]);
		free(t->files[i].path);
		free(t->files[i].tmp);
	}
	free(t->files);
	free(t->type_dir);
	t->files = NULL;
	t->type_dir = NULL;
	t->nfiles = 0;
}
