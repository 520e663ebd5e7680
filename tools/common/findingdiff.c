/* SPDX-License-Identifier: MIT */
/*
 * findingdiff.c - rec-report --baseline: the findings of a baseline and of
 * the recording matched by rule and subject (rec_findings_diff_* of the
 * library), printed as four groups (went away, appeared, changed, the
 * same) with each changed fact's before, after and change, then the tables
 * the rules read compared row by row (viewdiff.c).  Text or one JSON
 * document.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "findingdiff.h"
#include "viewdiff.h"
#include "viewtab.h"

/* The tables of rec_findings_table() that are compared, in this order. */
static const char *const tables[] = {
	"latency", "requests", "contention_by_lock", "allocation_by_site", "allocation_by_span",
};

enum { G_GONE, G_NEW, G_CHANGED, G_SAME, G_COUNT };
static const char *const group_titles[G_COUNT] = { "Went away", "Appeared", "Changed",
						    "The same" };
static const char *const group_keys[G_COUNT] = { "gone", "new", "changed", "same" };

static int group(const rec_findings_change *c)
{
	if (c->change == REC_VIEW_ROW_GONE)
		return G_GONE;
	if (c->change == REC_VIEW_ROW_NEW)
		return G_NEW;
	return c->changed ? G_CHANGED : G_SAME;
}

/* ---- text ---------------------------------------------------------------------- */

static void text_change(const rec_findings_change *c, size_t index, uint32_t width)
{
	const rec_finding *x = c->after ? c->after : c->before;
	rec_out_printf("%zu. [%s", index, rec_finding_severity_name(x->severity));
	if (c->before && c->after && c->before->severity != c->after->severity)
		rec_out_printf(", was %s", rec_finding_severity_name(c->before->severity));
	rec_out_printf("] %s: %s\n", x->rule, x->subject);
	rec_viewtab_wrapped(x->summary, 3, width);
	if (group(c) != G_CHANGED || !c->before || !c->after)
		return;
	REC_OUT_LIT("   Evidence, before -> after:\n");
	char b[4096], a[4096], d[128], r[64];
	for (size_t i = 0; i < c->fact_count; i++) {
		const rec_finding_fact *af = &c->after->facts[i], *bf = c->before_facts[i];
		rec_viewtab_fact_str(af, a, sizeof a);
		if (bf)
			rec_viewtab_fact_str(bf, b, sizeof b);
		else
			snprintf(b, sizeof b, "-");
		rec_out_printf("     %s: %s -> %s", af->title, b, a);
		rec_viewdiff_change_str(af->kind, &c->deltas[i], d, sizeof d);
		rec_viewdiff_rel_str(&c->deltas[i], r, sizeof r);
		if (d[0] && r[0])
			rec_out_printf(" (%s, %s)", d, r);
		else if (d[0])
			rec_out_printf(" (%s)", d);
		rec_out_char('\n');
	}
}

static bool print_text(const rec_findings *before, const char *baseline, const rec_findings *after,
		       const rec_cli_input *in, size_t n, const rec_findings_change *list,
		       size_t count, uint32_t width)
{
	size_t g[G_COUNT] = { 0 };
	for (size_t i = 0; i < count; i++)
		g[group(&list[i])]++;
	rec_out_printf("Findings of");
	rec_out_input_names(in, n);
	rec_out_printf(" against the baseline %s: %zu went away, %zu appeared, %zu changed, %zu the same\n",
		       baseline, g[G_GONE], g[G_NEW], g[G_CHANGED], g[G_SAME]);
	size_t index = 0;
	for (int k = 0; k < G_COUNT; k++) {
		if (!g[k])
			continue;
		rec_out_printf("\n%s:\n", group_titles[k]);
		for (size_t i = 0; i < count; i++)
			if (group(&list[i]) == k)
				text_change(&list[i], ++index, width);
	}
	bool ok = true;
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
		const rec_view_table *bt = rec_findings_table(before, tables[t]);
		const rec_view_table *at = rec_findings_table(after, tables[t]);
		if (bt || at)
			ok = rec_viewdiff_print(NULL, bt, at, 0, width > 160 ? width : 160) && ok;
	}
	return ok;
}

/* ---- JSON ---------------------------------------------------------------------- */

static void json_finding(rec_json *j, const rec_finding *x)
{
	if (!x) {
		rec_json_null(j);
		return;
	}
	rec_json_begin_object(j, false);
	rec_json_key(j, "severity");
	rec_json_str(j, rec_finding_severity_name(x->severity));
	rec_json_key(j, "summary");
	rec_json_str(j, x->summary);
	rec_json_key(j, "facts");
	rec_json_begin_object(j, false);
	for (size_t i = 0; i < x->fact_count; i++) {
		rec_json_key(j, x->facts[i].key);
		rec_viewtab_json_cell(j, x->facts[i].kind, &x->facts[i].value);
	}
	rec_json_end_object(j);
	rec_json_end_object(j);
}

static void json_change(rec_json *j, const rec_findings_change *c)
{
	const rec_finding *x = c->after ? c->after : c->before;
	rec_json_begin_object(j, false);
	rec_json_key(j, "change");
	rec_json_str(j, group_keys[group(c)]);
	rec_json_key(j, "rule");
	rec_json_str(j, x->rule);
	rec_json_key(j, "subject");
	rec_json_str(j, x->subject);
	rec_json_key(j, "before");
	json_finding(j, c->before);
	rec_json_key(j, "after");
	json_finding(j, c->after);
	rec_json_key(j, "facts");
	rec_json_begin_array(j, false);
	for (size_t i = 0; c->after && i < c->fact_count; i++) {
		const rec_finding_fact *af = &c->after->facts[i], *bf = c->before_facts[i];
		const rec_view_delta *d = &c->deltas[i];
		rec_json_begin_object(j, true);
		rec_viewtab_json_column(j, af->key, af->title, af->kind);
		rec_json_key(j, "before");
		if (bf)
			rec_viewtab_json_cell(j, bf->kind, &bf->value);
		else
			rec_json_null(j);
		rec_json_key(j, "after");
		rec_viewtab_json_cell(j, af->kind, &af->value);
		rec_json_key(j, "delta");
		rec_viewdiff_json_delta(j, af->kind, d, false);
		rec_json_key(j, "delta_pct");
		rec_viewdiff_json_delta(j, af->kind, d, true);
		rec_json_end_object(j);
	}
	rec_json_end_array(j);
	rec_json_end_object(j);
}

static bool print_json(const rec_findings *before, const char *baseline, const rec_findings *after,
		       const rec_cli_input *in, size_t n, const char *by,
		       const rec_findings_change *list, size_t count)
{
	rec_json j = { 0 };
	rec_json_head(&j, NULL, baseline, in, n, by);
	rec_json_key(&j, "findings");
	rec_json_begin_array(&j, false);
	for (size_t i = 0; i < count; i++)
		json_change(&j, &list[i]);
	rec_json_end_array(&j);
	rec_json_key(&j, "tables");
	rec_json_begin_array(&j, false);
	bool ok = true;
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
		const rec_view_table *bt = rec_findings_table(before, tables[t]);
		const rec_view_table *at = rec_findings_table(after, tables[t]);
		if (bt || at)
			ok = rec_viewdiff_print(&j, bt, at, 0, 0) && ok;
	}
	rec_json_end_array(&j);
	rec_json_end_object(&j);
	rec_json_end(&j);
	return ok;
}

bool rec_findingdiff_print(rec_findings *before, const char *baseline,
			   rec_findings *after, const rec_cli_input *in, size_t n,
			   const char *by, bool json, uint32_t width)
{
	const rec_finding *bl = NULL, *al = NULL;
	size_t bn = 0, an = 0;
	if (rec_findings_get(before, &bl, &bn) != REC_OK ||
	    rec_findings_get(after, &al, &an) != REC_OK)
		return false;
	rec_findings_diff *d = NULL;
	if (rec_findings_diff_open(&d, bl, bn, al, an) != REC_OK)
		return false;
	const rec_findings_change *list;
	size_t count;
	rec_findings_diff_get(d, &list, &count);
	bool ok = json ? print_json(before, baseline, after, in, n, by, list, count)
		       : print_text(before, baseline, after, in, n, list, count, width);
	rec_findings_diff_close(d);
	return ok;
}
