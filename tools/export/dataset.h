/* SPDX-License-Identifier: MIT */
/*
 * dataset.h - the files of rec-export's dataset (spec/SCHEMA.md, "Parquet
 * and JSON lines"): for one table, a file per partition
 * DIR/type=T/date=YYYY-MM-DD/run=RUN/part-FIRST-LAST.EXT (FIRST, LAST: the
 * run's chunk Sequence range in that input), written to a temporary name
 * and renamed when complete; a file that exists already is kept as it is.
 */
#ifndef REC_TOOLS_DATASET_H
#define REC_TOOLS_DATASET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "parquet.h"

typedef enum { REC_DS_PARQUET, REC_DS_JSONL } rec_ds_format;

typedef struct rec_ds_file {
	size_t recording;
	uint64_t run;
	char date[16];
	char *path, *tmp;
	FILE *f;          /* NULL for a kept file */
	rec_pq_writer *pq; /* Parquet */
	uint64_t rows;
} rec_ds_file;

typedef struct rec_ds_table {
	const char *root;     /* DIR */
	char *type_dir;       /* "type=..." with the value escaped */
	rec_ds_format format;
	const rec_pq_column *cols;
	size_t ncols;
	const rec_pq_kv *kv;
	size_t nkv;
	size_t group_rows;
	rec_ds_file *files;
	size_t nfiles, last;
	uint64_t written, kept; /* files */
} rec_ds_table;

/* A table of the dataset under root, partition key type = type_value. */
void rec_ds_table_init(rec_ds_table *t, const char *root, const char *type_value,
		       rec_ds_format format, const rec_pq_column *cols, size_t ncols,
		       const rec_pq_kv *kv, size_t nkv, size_t group_rows);
/* The file for rows of (recording, run) dated epoch_ns, its name from the
 * run's chunk range; opened on first use.  NULL after an error (reported
 * on stderr). */
rec_ds_file *rec_ds_file_for(rec_ds_table *t, size_t recording, uint64_t run, int64_t epoch_ns,
			     uint64_t seq_first, uint64_t seq_last);
/* Parquet: when the row groups being filled in t's open files hold more
 * than budget bytes, write them (smaller row groups): memory stays bounded
 * however many partitions are open.  False after an error (reported). */
bool rec_ds_table_bound(rec_ds_table *t, size_t budget);
/* Complete every file (Parquet footer, rename into place); false if one
 * failed (reported; its temporary file removed). */
bool rec_ds_table_close(rec_ds_table *t);
/* Remove the temporary files of an abandoned table. */
void rec_ds_table_abandon(rec_ds_table *t);

/* mkdir -p of every directory before a '/' in path (the file's
 * directories; "DIR/" for DIR).  False after a message. */
bool rec_ds_make_dirs(const char *path);

/* The UTC date of epoch_ns as YYYY-MM-DD (buf >= 16). */
void rec_ds_date(int64_t epoch_ns, char *buf);

#endif /* REC_TOOLS_DATASET_H */
