/* SPDX-License-Identifier: MIT */
/*
 * view_compare.c - before and after: two tables of the same view (one per
 * recording) matched row by row on the view's natural key, with the change
 * of every numeric column (rec/view.h, rec_view_diff_*).  rec-view
 * --baseline and rec-report --baseline print it.
 *
 * The natural keys are listed here per table name: the text columns that
 * name what a row is about (an event type and --by value, a lock, a site, a
 * thread name), not those that describe it (the holders of a lock, what
 * they did).  A key that occurs twice in a table (two threads with one
 * name) matches its k-th occurrence on the other side.  Tables that list
 * events (the slowest spans) or per-recording things (runs) have no
 * natural key and are not matched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_internal.h"

#define MAX_KEYS 3

/* Per table: the columns (JSON keys) that make a row's key; a table listed
 * with none has one row (matched with the other side's one row). */
static const struct natural_key {
	const char *table;
	const char *keys[MAX_KEYS];
} natural_keys[] = {
	{ "latency", { "type", "by" } },
	{ "requests", { "type", "by" } },
	{ "allocation_by_span", { "type", "by" } },
	{ "contention_by_lock", { "lock" } },
	{ "contention_by_site", { "site", "lock" } },
	{ "allocation_by_site", { "site" } },
	{ "live_heap", { "stack", "kind" } },
	{ "hot_functions", { "function" } },
	{ "sleeps_by_site", { "site" } },
	{ "io_by_site", { "site", "kind" } },
	{ "threads", { "thread" } },
	{ "drops", { "type", "reason" } },
	{ "startup", { NULL } },
	{ "sleeps", { "site" } },
	{ "allocations", { "site" } },
	{ "cpu", { "site" } },
	{ "lock_waits", { "site" } },
	{ "cond_waits", { "site" } },
	{ "recording", { NULL } },
};

/* Numeric columns that identify rather than measure: no change. */
static bool identity_column(const char *key)
{
	return strcmp(key, "tid") == 0 || strcmp(key, "pid") == 0;
}

struct rec_view_diff {
	rec_view_diff_table pub;
	bool *key, *compared;
	rec_view_diff_row *rows;
	rec_view_delta *deltas;
};

const char *rec_view_row_change_name(rec_view_row_change c)
{
	switch (c) {
	case REC_VIEW_ROW_BOTH: return "both";
	case REC_VIEW_ROW_NEW: return "new";
	case REC_VIEW_ROW_GONE: return "gone";
	}
	return "both";
}

rec_view_delta rec_view_cell_delta(rec_view_kind k, const rec_view_cell *before,
				   const rec_view_cell *after)
{
	rec_view_delta d = { .null = true, .rel_null = true };
	if (!before || !after || before->null || after->null)
		return d;
	switch (k) {
	case REC_VIEW_COUNT:
	case REC_VIEW_DURATION:
	case REC_VIEW_BYTES: {
		uint64_t a = after->u, b = before->u;
		/* exact in 64 bits: values beyond INT64_MAX are clamped */
		int64_t ai = a > INT64_MAX ? INT64_MAX : (int64_t)a;
		int64_t bi = b > INT64_MAX ? INT64_MAX : (int64_t)b;
		d.null = false;
		d.i = ai - bi;
		d.f = (double)d.i;
		if (b) {
			d.rel_null = false;
			d.rel = 100.0 * ((double)a - (double)b) / (double)b;
		}
		return d;
	}
	case REC_VIEW_PERCENT:
		d.null = false;
		d.f = after->f - before->f;
		if (before->f != 0.0) {
			d.rel_null = false;
			d.rel = 100.0 * d.f / before->f;
		}
		return d;
	case REC_VIEW_TEXT:
	case REC_VIEW_OFFSET:
	case REC_VIEW_TIME: return d;
	}
	return d;
}

void rec_view_diff_close(rec_view_diff *d)
{
	if (!d)
		return;
	free(d->key);
	free(d->compared);
	free(d->rows);
	free(d->deltas);
	free(d);
}

const rec_view_diff_table *rec_view_diff_get(const rec_view_diff *d)
{
	return d ? &d->pub : NULL;
}

static const struct natural_key *find_key(const char *name)
{
	for (size_t i = 0; i < sizeof natural_keys / sizeof natural_keys[0]; i++)
		if (strcmp(natural_keys[i].table, name) == 0)
			return &natural_keys[i];
	return NULL;
}

static bool same_columns(const rec_view_table *a, const rec_view_table *b)
{
	if (strcmp(a->name, b->name) != 0 || a->column_count != b->column_count)
		return false;
	for (size_t c = 0; c < a->column_count; c++)
		if (strcmp(a->columns[c].key, b->columns[c].key) != 0 ||
		    a->columns[c].kind != b->columns[c].kind)
			return false;
	return true;
}

/* A row's key as one string: the key cells separated by 0x1F (a null cell
 * is 0x01), then 0x1E and which occurrence of that key it is. */
static char *row_key(const rec_view_diff *d, const rec_view_cell *row, size_t occurrence)
{
	size_t len = 24;
	for (size_t c = 0; c < d->pub.column_count; c++)
		if (d->key[c])
			len += (row[c].null || !row[c].text ? 1 : strlen(row[c].text)) + 1;
	char *s = malloc(len);
	if (!s)
		return NULL;
	char *p = s;
	for (size_t c = 0; c < d->pub.column_count; c++) {
		if (!d->key[c])
			continue;
		if (row[c].null || !row[c].text) {
			*p++ = '\x01';
		} else {
			size_t n = strlen(row[c].text);
			memcpy(p, row[c].text, n);
			p += n;
		}
		*p++ = '\x1f';
	}
	snprintf(p, 24, "\x1e%zu", occurrence);
	return s;
}

/* Index every row of t by its key (and occurrence) in m (values: size_t
 * row index); keys[r] gets row r's key.  false when out of memory. */
static bool index_rows(const rec_view_diff *d, const rec_view_table *t, vmap *m, char **keys)
{
	vmap seen; /* key without occurrence -> count so far */
	rec_vi_vmap_init(&seen, sizeof(size_t));
	bool ok = true;
	for (size_t r = 0; r < t->row_count && ok; r++) {
		const rec_view_cell *row = &t->cells[r * t->column_count];
		char *k0 = row_key(d, row, 0);
		if (!k0) {
			ok = false;
			break;
		}
		size_t base = strrchr(k0, '\x1e') - k0;
		bool created;
		size_t si = rec_vi_vmap_get(&seen, k0, base, &created);
		free(k0);
		if (si == SIZE_MAX) {
			ok = false;
			break;
		}
		size_t *occ = vmap_at(&seen, si);
		keys[r] = row_key(d, row, (*occ)++);
		if (!keys[r]) {
			ok = false;
			break;
		}
		size_t mi = rec_vi_vmap_get(m, keys[r], strlen(keys[r]), &created);
		if (mi == SIZE_MAX) {
			ok = false;
			break;
		}
		*(size_t *)vmap_at(m, mi) = r;
	}
	rec_vi_vmap_free(&seen);
	return ok;
}

static void free_keys(char **keys, size_t n)
{
	for (size_t i = 0; keys && i < n; i++)
		free(keys[i]);
	free(keys);
}

/* Fill row i of the comparison: the sides and the change per column. */
static void set_row(rec_view_diff *d, size_t i, rec_view_row_change ch, const rec_view_cell *b,
		    const rec_view_cell *a)
{
	size_t nc = d->pub.column_count;
	rec_view_diff_row *row = &d->rows[i];
	row->change = ch;
	row->before = b;
	row->after = a;
	rec_view_delta *dl = &d->deltas[i * nc];
	row->delta = dl;
	bool changed = false;
	for (size_t c = 0; c < nc; c++) {
		rec_view_delta x = { .null = true, .rel_null = true };
		if (ch == REC_VIEW_ROW_BOTH && d->compared[c])
			x = rec_view_cell_delta(d->pub.columns[c].kind, &b[c], &a[c]);
		dl[c] = x;
		if (!x.null && (x.i != 0 || x.f != 0.0))
			changed = true;
		if (ch == REC_VIEW_ROW_BOTH && d->compared[c] && b[c].null != a[c].null)
			changed = true;
	}
	if (ch == REC_VIEW_ROW_NEW)
		d->pub.added++;
	else if (ch == REC_VIEW_ROW_GONE)
		d->pub.gone++;
	else if (changed)
		d->pub.changed++;
	else
		d->pub.same++;
}

rec_status rec_view_diff_open(rec_view_diff **out, const rec_view_table *before,
			      const rec_view_table *after, uint32_t top)
{
	if (!out)
		return REC_ERR_INVALID_ARG;
	*out = NULL;
	if (!before && !after)
		return REC_ERR_INVALID_ARG;
	if (before && after && !same_columns(before, after))
		return REC_ERR_INVALID_ARG;
	const rec_view_table *shape = after ? after : before;
	rec_view_diff *d = calloc(1, sizeof *d);
	if (!d)
		return REC_ERR_NOMEM;
	size_t nc = shape->column_count;
	d->pub.name = shape->name;
	d->pub.title = shape->title;
	d->pub.column_count = nc;
	d->pub.columns = shape->columns;
	d->key = calloc(nc ? nc : 1, sizeof *d->key);
	d->compared = calloc(nc ? nc : 1, sizeof *d->compared);
	if (!d->key || !d->compared) {
		rec_view_diff_close(d);
		return REC_ERR_NOMEM;
	}
	d->pub.key = d->key;
	d->pub.compared = d->compared;
	const struct natural_key *nk = find_key(shape->name);
	d->pub.keyed = nk != NULL;
	for (size_t c = 0; c < nc; c++) {
		const rec_view_column *col = &shape->columns[c];
		for (size_t k = 0; nk && k < MAX_KEYS && nk->keys[k]; k++)
			if (strcmp(nk->keys[k], col->key) == 0)
				d->key[c] = true;
		d->compared[c] = !d->key[c] && col->kind != REC_VIEW_TEXT &&
				 col->kind != REC_VIEW_OFFSET && col->kind != REC_VIEW_TIME &&
				 !identity_column(col->key);
	}
	if (!nk) {
		*out = d;
		return REC_OK;
	}
	size_t nb = before ? before->row_count : 0, na = after ? after->row_count : 0;
	size_t cap = nb + na;
	d->rows = calloc(cap ? cap : 1, sizeof *d->rows);
	d->deltas = calloc((cap ? cap : 1) * (nc ? nc : 1), sizeof *d->deltas);
	char **bkeys = calloc(nb ? nb : 1, sizeof *bkeys);
	char **akeys = calloc(na ? na : 1, sizeof *akeys);
	bool *matched = calloc(nb ? nb : 1, sizeof *matched);
	vmap bm, am;
	rec_vi_vmap_init(&bm, sizeof(size_t));
	rec_vi_vmap_init(&am, sizeof(size_t));
	bool ok = d->rows && d->deltas && bkeys && akeys && matched;
	if (ok && before)
		ok = index_rows(d, before, &bm, bkeys);
	if (ok && after)
		ok = index_rows(d, after, &am, akeys);
	size_t n = 0;
	for (size_t r = 0; ok && r < na; r++) {
		const rec_view_cell *a = &after->cells[r * nc];
		size_t bi = before ? rec_vi_vmap_find(&bm, akeys[r], strlen(akeys[r])) : SIZE_MAX;
		if (bi == SIZE_MAX) {
			set_row(d, n++, REC_VIEW_ROW_NEW, NULL, a);
			continue;
		}
		size_t br = *(size_t *)vmap_at(&bm, bi);
		matched[br] = true;
		set_row(d, n++, REC_VIEW_ROW_BOTH, &before->cells[br * nc], a);
	}
	for (size_t r = 0; ok && r < nb; r++)
		if (!matched[r])
			set_row(d, n++, REC_VIEW_ROW_GONE, &before->cells[r * nc], NULL);
	rec_vi_vmap_free(&bm);
	rec_vi_vmap_free(&am);
	free_keys(bkeys, nb);
	free_keys(akeys, na);
	free(matched);
	if (!ok) {
		rec_view_diff_close(d);
		return REC_ERR_NOMEM;
	}
	d->pub.rows = d->rows;
	d->pub.rows_total = n;
	d->pub.row_count = top && n > top ? top : n;
	*out = d;
	return REC_OK;
}
