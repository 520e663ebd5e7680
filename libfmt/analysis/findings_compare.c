/* SPDX-License-Identifier: MIT */
/*
 * findings_compare.c - before and after for findings (rec/findings.h,
 * rec_findings_diff_*): the findings of a baseline and of another recording
 * matched by rule and subject, the k-th occurrence of a pair before with
 * the k-th after; what appeared, what went away, and for those in both the
 * change of every fact (the same deltas as view_compare.c's cells).
 */
#include <stdlib.h>
#include <string.h>

#include "rec/findings.h"

typedef const rec_finding_fact *fact_ptr;

struct rec_findings_diff {
	rec_findings_change *list;
	size_t count;
	fact_ptr *facts;                  /* per change, its before_facts */
	rec_view_delta *deltas;
};

void rec_findings_diff_close(rec_findings_diff *d)
{
	if (!d)
		return;
	free(d->list);
	free(d->facts);
	free(d->deltas);
	free(d);
}

void rec_findings_diff_get(const rec_findings_diff *d, const rec_findings_change **list,
			   size_t *count)
{
	*list = d ? d->list : NULL;
	*count = d ? d->count : 0;
}

static bool same_subject(const rec_finding *a, const rec_finding *b)
{
	return strcmp(a->rule, b->rule) == 0 && strcmp(a->subject, b->subject) == 0;
}

/* Which occurrence of its rule and subject list[i] is. */
static size_t occurrence(const rec_finding *list, size_t i)
{
	size_t k = 0;
	for (size_t j = 0; j < i; j++)
		k += same_subject(&list[j], &list[i]);
	return k;
}

static const rec_finding_fact *find_fact(const rec_finding *x, const char *key)
{
	for (size_t i = 0; i < x->fact_count; i++)
		if (strcmp(x->facts[i].key, key) == 0)
			return &x->facts[i];
	return NULL;
}

/* Whether an after fact differs from before's of the same key (f, NULL
 * when before has none); *dl gets the delta. */
static bool fact_differs(const rec_finding_fact *f, const rec_finding_fact *af, rec_view_delta *dl)
{
	*dl = (rec_view_delta){ .null = true, .rel_null = true };
	if (!f || f->kind != af->kind)
		return true;
	*dl = rec_view_cell_delta(af->kind, &f->value, &af->value);
	if (f->value.null != af->value.null)
		return true;
	if (!dl->null)
		return dl->i != 0 || dl->f != 0.0;
	if (af->value.null)
		return false;
	if (af->kind == REC_VIEW_TEXT)
		return strcmp(f->value.text ? f->value.text : "", af->value.text ? af->value.text : "") != 0;
	return f->value.i != af->value.i; /* offsets and times */
}

/* Fill a change of a finding in both: per after fact, before's and the delta. */
static void compare_facts(rec_findings_change *c, fact_ptr *bf, rec_view_delta *dl)
{
	const rec_finding *b = c->before, *a = c->after;
	c->changed = b->severity != a->severity || b->fact_count != a->fact_count;
	c->fact_count = a->fact_count;
	c->before_facts = bf;
	c->deltas = dl;
	for (size_t i = 0; i < a->fact_count; i++) {
		bf[i] = find_fact(b, a->facts[i].key);
		if (fact_differs(bf[i], &a->facts[i], &dl[i]))
			c->changed = true;
	}
}

rec_status rec_findings_diff_open(rec_findings_diff **out, const rec_finding *before,
				  size_t before_count, const rec_finding *after, size_t after_count)
{
	if (!out || (before_count && !before) || (after_count && !after))
		return REC_ERR_INVALID_ARG;
	*out = NULL;
	rec_findings_diff *d = calloc(1, sizeof *d);
	if (!d)
		return REC_ERR_NOMEM;
	size_t cap = before_count + after_count, nf = 0;
	for (size_t i = 0; i < after_count; i++)
		nf += after[i].fact_count;
	d->list = calloc(cap ? cap : 1, sizeof *d->list);
	d->facts = calloc(nf ? nf : 1, sizeof(fact_ptr));
	d->deltas = calloc(nf ? nf : 1, sizeof *d->deltas);
	bool *matched = calloc(before_count ? before_count : 1, sizeof *matched);
	if (!d->list || !d->facts || !d->deltas || !matched) {
		free(matched);
		rec_findings_diff_close(d);
		return REC_ERR_NOMEM;
	}
	size_t used = 0;
	for (size_t i = 0; i < after_count; i++) {
		rec_findings_change *c = &d->list[d->count++];
		c->after = &after[i];
		c->change = REC_VIEW_ROW_NEW;
		size_t k = occurrence(after, i), seen = 0;
		for (size_t j = 0; j < before_count; j++) {
			if (!same_subject(&before[j], &after[i]) || seen++ != k)
				continue;
			matched[j] = true;
			c->before = &before[j];
			c->change = REC_VIEW_ROW_BOTH;
			compare_facts(c, &d->facts[used], &d->deltas[used]);
			used += after[i].fact_count;
			break;
		}
	}
	for (size_t j = 0; j < before_count; j++)
		if (!matched[j])
			d->list[d->count++] = (rec_findings_change){ .change = REC_VIEW_ROW_GONE,
								      .before = &before[j] };
	free(matched);
	*out = d;
	return REC_OK;
}
