/* SPDX-License-Identifier: MIT */
/*
 * rec-summary - what is in a recording: files, chunks, time range, runs and
 * restarts, a table of event types from chunk headers and statistics, and
 * counter totals (only the rec.Counter records are decoded, in the chunks
 * that have some).  Like `jfr summary`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/tools.h"
#include "rec/analysis.h"
#include "rec/rec.h"

static void out_pad(size_t n)
{
	while (n--)
		rec_out_char(' ');
}

static void out_label(const char *label)
{
	/* " Label:" padded to a fixed column, as jfr summary does. */
	rec_out_char(' ');
	rec_out_str(label);
	rec_out_char(':');
	size_t n = strlen(label) + 2;
	out_pad(n < 18 ? 18 - n : 1);
}

static void out_wall(int64_t ns)
{
	char b[64];
	rec_out_write(b, rec_fmt_wall(b, ns));
}

/* last - first, checked: a span that does not fit prints as the largest. */
static int64_t span_ns(int64_t first, int64_t last)
{
	int64_t d;
	if (__builtin_sub_overflow(last, first, &d))
		return INT64_MAX;
	return d;
}

static void out_duration(int64_t ns)
{
	char b[64];
	rec_out_write(b, rec_fmt_duration(b, ns));
}

static void out_size(uint64_t bytes)
{
	char b[64];
	if (bytes >= 1024) {
		rec_out_write(b, rec_fmt_bytes(b, bytes));
		REC_OUT_LIT(", ");
		rec_out_u64(bytes);
		REC_OUT_LIT(" bytes");
	} else {
		rec_out_write(b, rec_fmt_bytes(b, bytes));
	}
}

static size_t digits(uint64_t v)
{
	char b[24];
	return rec_fmt_u64(b, v);
}

static void out_run_id(uint64_t id)
{
	static const char hx[] = "0123456789abcdef";
	char b[16];
	for (int i = 0; i < 16; i++)
		b[i] = hx[(id >> (60 - 4 * i)) & 15];
	rec_out_write(b, 16);
}

/* Counter totals: name, total, resets, runs with samples. */
static void print_counters(const rec_summary_result *res)
{
	static const char h_name[] = "Counter", h_total[] = "Total", h_resets[] = "Resets",
			  h_runs[] = "Runs";
	size_t wn = sizeof h_name - 1, wt = sizeof h_total - 1, wr = sizeof h_resets - 1,
	       wu = sizeof h_runs - 1;
	for (size_t i = 0; i < res->counter_count; i++) {
		const rec_counter_total *c = &res->counters[i];
		if (strlen(c->name) > wn)
			wn = strlen(c->name);
		if (digits(c->total) > wt)
			wt = digits(c->total);
		if (digits(c->resets) > wr)
			wr = digits(c->resets);
		if (digits(c->runs) > wu)
			wu = digits(c->runs);
	}
	rec_out_char('\n');
	rec_out_char(' ');
	rec_out_str(h_name);
	out_pad(wn - (sizeof h_name - 1) + 2 + wt - (sizeof h_total - 1));
	rec_out_str(h_total);
	out_pad(2 + wr - (sizeof h_resets - 1));
	rec_out_str(h_resets);
	out_pad(2 + wu - (sizeof h_runs - 1));
	rec_out_str(h_runs);
	rec_out_char('\n');
	for (size_t i = 0; i < 1 + wn + 2 + wt + 2 + wr + 2 + wu; i++)
		rec_out_char('=');
	rec_out_char('\n');
	for (size_t i = 0; i < res->counter_count; i++) {
		const rec_counter_total *c = &res->counters[i];
		rec_out_char(' ');
		rec_out_str(c->name);
		out_pad(wn - strlen(c->name) + 2 + wt - digits(c->total));
		rec_out_u64(c->total);
		out_pad(2 + wr - digits(c->resets));
		rec_out_u64(c->resets);
		out_pad(2 + wu - digits(c->runs));
		rec_out_u64(c->runs);
		rec_out_char('\n');
	}
}

/* Drops by type and reason (REC_SUMMARY_DROPS), and what no rec.Dropped
 * accounts for: the statistics' dropped count beyond the rec.Dropped counts
 * read ("no rec.Dropped record"). */
static bool g_drops;

static uint64_t drops_unattributed(const rec_summary_result *res)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < res->drop_count; i++)
		sum += res->drops[i].count;
	return res->dropped > sum ? res->dropped - sum : 0;
}

static const char *drop_reason_str(uint32_t reason, char *buf, size_t size)
{
	const char *n = rec_drop_reason_name(reason);
	if (n)
		return n;
	if (reason == UINT32_MAX)
		return "(no reason field)";
	snprintf(buf, size, "reason %u", (unsigned)reason);
	return buf;
}

static void print_drops(const rec_summary_result *res)
{
	static const char h_type[] = "Dropped Type", h_count[] = "Count", h_reason[] = "Reason";
	static const char no_rec[] = "(no rec.Dropped record)";
	const uint64_t rest = drops_unattributed(res);
	size_t wn = sizeof h_type - 1, wc = sizeof h_count - 1, wr = sizeof h_reason - 1;
	char tmp[32];
	for (size_t i = 0; i < res->drop_count; i++) {
		const rec_summary_drop *d = &res->drops[i];
		if (strlen(d->type) > wn)
			wn = strlen(d->type);
		if (digits(d->count) > wc)
			wc = digits(d->count);
		if (strlen(drop_reason_str(d->reason, tmp, sizeof tmp)) > wr)
			wr = strlen(drop_reason_str(d->reason, tmp, sizeof tmp));
	}
	if (rest && sizeof no_rec - 1 > wn)
		wn = sizeof no_rec - 1;
	if (digits(rest) > wc)
		wc = digits(rest);
	rec_out_char('\n');
	rec_out_char(' ');
	rec_out_str(h_type);
	out_pad(wn - (sizeof h_type - 1) + 2 + wc - (sizeof h_count - 1));
	rec_out_str(h_count);
	REC_OUT_LIT("  ");
	rec_out_str(h_reason);
	rec_out_char('\n');
	for (size_t i = 0; i < 1 + wn + 2 + wc + 2 + wr; i++)
		rec_out_char('=');
	rec_out_char('\n');
	for (size_t i = 0; i <= res->drop_count; i++) {
		const char *name, *reason = "-";
		uint64_t count;
		if (i < res->drop_count) {
			name = res->drops[i].type;
			count = res->drops[i].count;
			reason = drop_reason_str(res->drops[i].reason, tmp, sizeof tmp);
		} else {
			name = no_rec;
			count = rest;
		}
		if (i >= res->drop_count && count == 0)
			continue;
		rec_out_char(' ');
		rec_out_str(name);
		out_pad(wn - strlen(name) + 2 + wc - digits(count));
		rec_out_u64(count);
		REC_OUT_LIT("  ");
		rec_out_str(reason);
		rec_out_char('\n');
	}
}

static void print_text(const rec_summary_result *res)
{
	for (size_t i = 0; i < res->file_count; i++) {
		const rec_summary_file *f = &res->files[i];
		out_label("File");
		rec_out_str(f->path);
		if (f->size) {
			REC_OUT_LIT(" (");
			out_size(f->size);
			rec_out_char(')');
		}
		rec_out_char('\n');
	}
	if (res->file_count > 1) {
		out_label("Total size");
		out_size(res->total_size);
		rec_out_char('\n');
	}
	out_label(res->version_count > 1 ? "Format versions" : "Format version");
	if (!res->version_count)
		REC_OUT_LIT("-");
	for (size_t i = 0; i < res->version_count; i++) {
		if (i)
			REC_OUT_LIT(", ");
		rec_out_u64(res->versions[i] >> 16);
		rec_out_char('.');
		rec_out_u64(res->versions[i] & 0xFFFF);
	}
	if (res->chunks_split) {
		/* what an older reader would refuse, said before it is tried */
		REC_OUT_LIT(" (EVENTS split in ");
		rec_out_u64(res->chunks_split);
		REC_OUT_LIT(" of ");
		rec_out_u64(res->chunks);
		REC_OUT_LIT(" chunks: readers before 1.3 refuse those)");
	}
	rec_out_char('\n');
	out_label("Codec");
	bool any = false;
	for (unsigned c = 0; c < 32; c++) {
		if (res->codecs & (1u << c)) {
			if (any)
				REC_OUT_LIT(", ");
			rec_out_str(rec_codec_name(c));
			any = true;
		}
	}
	if (!any)
		REC_OUT_LIT("-");
	rec_out_char('\n');
	out_label("Chunks");
	rec_out_u64(res->chunks);
	if (res->chunks_damaged || res->bytes_skipped) {
		REC_OUT_LIT(" (");
		rec_out_u64(res->chunks_damaged);
		REC_OUT_LIT(" damaged, ");
		rec_out_u64(res->bytes_skipped);
		REC_OUT_LIT(" bytes skipped)");
	}
	rec_out_char('\n');
	if (res->chunks_damaged) {
		/* Nothing of a damaged chunk is counted: say so beside the numbers. */
		out_label("Excluded");
		rec_out_u64(res->chunks_damaged);
		if (res->chunks_damaged == 1)
			REC_OUT_LIT(" damaged chunk: none of its events or statistics is counted");
		else
			REC_OUT_LIT(" damaged chunks: none of their events or statistics is counted");
		REC_OUT_LIT(" (listed on standard error)\n");
	}
	if (res->unknown_sections) {
		out_label("Skipped");
		rec_out_u64(res->unknown_sections);
		if (res->unknown_sections == 1)
			REC_OUT_LIT(" unknown section (newer format minor version)\n");
		else
			REC_OUT_LIT(" unknown sections (newer format minor version)\n");
	}
	if (res->chunks_unsupported) {
		out_label("Unsupported");
		rec_out_u64(res->chunks_unsupported);
		if (res->chunks_unsupported == 1)
			REC_OUT_LIT(" chunk of a newer major format version, stepped over\n");
		else
			REC_OUT_LIT(" chunks of a newer major format version, stepped over\n");
	}
	if (res->events) {
		out_label("First event");
		out_wall(res->first_wall_ns);
		rec_out_char('\n');
		out_label("Last event");
		out_wall(res->last_wall_ns);
		rec_out_char('\n');
		out_label("Duration");
		out_duration(span_ns(res->first_wall_ns, res->last_wall_ns));
		rec_out_char('\n');
	}
	out_label("Events");
	rec_out_u64(res->events);
	rec_out_char('\n');
	out_label("Dropped events");
	rec_out_u64(res->dropped);
	rec_out_char('\n');
	if (res->problem_count) {
		out_label("Problems");
		rec_out_u64(res->problem_count);
		REC_OUT_LIT(" (listed on standard error)\n");
	}
	out_label("Runs");
	rec_out_u64(res->run_count);
	if (res->run_count > 1) {
		REC_OUT_LIT(" (");
		rec_out_u64(res->restarts);
		if (res->restarts == 1)
			REC_OUT_LIT(" restart)");
		else
			REC_OUT_LIT(" restarts)");
	}
	rec_out_char('\n');
	for (size_t i = 0; i < res->run_count; i++) {
		const rec_summary_run *r = &res->runs[i];
		REC_OUT_LIT("   run ");
		out_run_id(r->run_id);
		REC_OUT_LIT("  pid ");
		rec_out_u64(r->pid);
		if (r->events) {
			REC_OUT_LIT("  start ");
			out_wall(r->first_wall_ns);
			REC_OUT_LIT("  duration ");
			out_duration(span_ns(r->first_wall_ns, r->last_wall_ns));
		}
		REC_OUT_LIT("  chunks ");
		rec_out_u64(r->chunks);
		REC_OUT_LIT("  events ");
		rec_out_u64(r->events);
		if (r->dropped) {
			REC_OUT_LIT("  dropped ");
			rec_out_u64(r->dropped);
		}
		REC_OUT_LIT("  ");
		rec_out_str(rec_run_end_name(r->ended));
		rec_out_char('\n');
	}

	if (res->counter_count)
		print_counters(res);
	if (g_drops && (res->drop_count || drops_unattributed(res)))
		print_drops(res);

	/* Event type table, like jfr summary. */
	static const char h_name[] = "Event Type", h_count[] = "Count", h_size[] = "Size (bytes)";
	size_t wn = sizeof h_name - 1, wc = sizeof h_count - 1, ws = sizeof h_size - 1;
	for (size_t i = 0; i < res->type_count; i++) {
		const rec_summary_type *t = &res->types[i];
		size_t n = strlen(t->name);
		if (n > wn)
			wn = n;
		if (digits(t->count) > wc)
			wc = digits(t->count);
		if (digits(t->bytes) > ws)
			ws = digits(t->bytes);
	}
	rec_out_char('\n');
	rec_out_char(' ');
	rec_out_str(h_name);
	out_pad(wn - (sizeof h_name - 1) + 2 + wc - (sizeof h_count - 1));
	rec_out_str(h_count);
	out_pad(2 + ws - (sizeof h_size - 1));
	rec_out_str(h_size);
	rec_out_char('\n');
	for (size_t i = 0; i < 1 + wn + 2 + wc + 2 + ws; i++)
		rec_out_char('=');
	rec_out_char('\n');
	for (size_t i = 0; i < res->type_count; i++) {
		const rec_summary_type *t = &res->types[i];
		rec_out_char(' ');
		rec_out_str(t->name);
		out_pad(wn - strlen(t->name) + 2 + wc - digits(t->count));
		rec_out_u64(t->count);
		out_pad(2 + ws - digits(t->bytes));
		rec_out_u64(t->bytes);
		rec_out_char('\n');
	}
}

static void json_time(rec_json *j, const char *key, int64_t ns)
{
	char b[64];
	rec_fmt_iso(b, ns);
	rec_json_key(j, key);
	rec_json_str(j, b);
}

static void print_json(const rec_summary_result *res, bool counters)
{
	rec_json j;
	memset(&j, 0, sizeof j);
	rec_json_begin_object(&j, false);
	rec_json_key(&j, "schema");
	rec_json_u64(&j, 1);
	rec_json_key(&j, "files");
	rec_json_begin_array(&j, false);
	for (size_t i = 0; i < res->file_count; i++) {
		const rec_summary_file *f = &res->files[i];
		rec_json_begin_object(&j, true);
		rec_json_key(&j, "path");
		rec_json_str(&j, f->path);
		rec_json_key(&j, "size");
		rec_json_u64(&j, f->size);
		rec_json_key(&j, "chunks");
		rec_json_u64(&j, f->chunks);
		rec_json_key(&j, "chunks_damaged");
		rec_json_u64(&j, f->chunks_damaged);
		rec_json_key(&j, "bytes_skipped");
		rec_json_u64(&j, f->bytes_skipped);
		rec_json_end_object(&j);
	}
	rec_json_end_array(&j);
	rec_json_key(&j, "total_size");
	rec_json_u64(&j, res->total_size);
	rec_json_key(&j, "versions");
	rec_json_begin_array(&j, true);
	for (size_t i = 0; i < res->version_count; i++) {
		char b[32];
		snprintf(b, sizeof b, "%u.%u", (unsigned)(res->versions[i] >> 16),
			 (unsigned)(res->versions[i] & 0xFFFF));
		rec_json_str(&j, b);
	}
	rec_json_end_array(&j);
	rec_json_key(&j, "codecs");
	rec_json_begin_array(&j, true);
	for (unsigned c = 0; c < 32; c++)
		if (res->codecs & (1u << c))
			rec_json_str(&j, rec_codec_name(c));
	rec_json_end_array(&j);
	rec_json_key(&j, "chunks");
	rec_json_u64(&j, res->chunks);
	rec_json_key(&j, "chunks_split");
	rec_json_u64(&j, res->chunks_split);
	rec_json_key(&j, "chunks_damaged");
	rec_json_u64(&j, res->chunks_damaged);
	rec_json_key(&j, "bytes_skipped");
	rec_json_u64(&j, res->bytes_skipped);
	rec_json_key(&j, "unknown_sections");
	rec_json_u64(&j, res->unknown_sections);
	if (res->events) {
		json_time(&j, "first_event", res->first_wall_ns);
		json_time(&j, "last_event", res->last_wall_ns);
		rec_json_key(&j, "first_event_ns");
		rec_json_i64(&j, res->first_wall_ns);
		rec_json_key(&j, "last_event_ns");
		rec_json_i64(&j, res->last_wall_ns);
		rec_json_key(&j, "duration_ns");
		rec_json_i64(&j, span_ns(res->first_wall_ns, res->last_wall_ns));
	} else {
		rec_json_key(&j, "first_event");
		rec_json_null(&j);
		rec_json_key(&j, "last_event");
		rec_json_null(&j);
	}
	rec_json_key(&j, "events");
	rec_json_u64(&j, res->events);
	rec_json_key(&j, "dropped");
	rec_json_u64(&j, res->dropped);
	if (g_drops && (res->drop_count || drops_unattributed(res))) {
		/* by type and reason; type null: no rec.Dropped record says
		 * (reason null) */
		rec_json_key(&j, "drops");
		rec_json_begin_array(&j, false);
		char tmp[32];
		for (size_t i = 0; i < res->drop_count; i++) {
			const rec_summary_drop *d = &res->drops[i];
			rec_json_begin_object(&j, true);
			rec_json_key(&j, "type");
			rec_json_str(&j, d->type);
			rec_json_key(&j, "reason");
			if (d->reason == UINT32_MAX)
				rec_json_null(&j);
			else
				rec_json_u64(&j, d->reason);
			rec_json_key(&j, "reason_name");
			rec_json_str(&j, drop_reason_str(d->reason, tmp, sizeof tmp));
			rec_json_key(&j, "count");
			rec_json_u64(&j, d->count);
			rec_json_end_object(&j);
		}
		const uint64_t rest = drops_unattributed(res);
		if (rest) {
			rec_json_begin_object(&j, true);
			rec_json_key(&j, "type");
			rec_json_null(&j);
			rec_json_key(&j, "reason");
			rec_json_null(&j);
			rec_json_key(&j, "reason_name");
			rec_json_str(&j, "no rec.Dropped record");
			rec_json_key(&j, "count");
			rec_json_u64(&j, rest);
			rec_json_end_object(&j);
		}
		rec_json_end_array(&j);
	}
	rec_json_key(&j, "runs");
	rec_json_begin_array(&j, false);
	for (size_t i = 0; i < res->run_count; i++) {
		const rec_summary_run *r = &res->runs[i];
		char id[24];
		snprintf(id, sizeof id, "%016" PRIx64, r->run_id);
		rec_json_begin_object(&j, true);
		rec_json_key(&j, "run_id");
		rec_json_str(&j, id);
		rec_json_key(&j, "pid");
		rec_json_u64(&j, r->pid);
		json_time(&j, "process_start", r->process_start_ns);
		if (r->events) {
			json_time(&j, "first_event", r->first_wall_ns);
			json_time(&j, "last_event", r->last_wall_ns);
			rec_json_key(&j, "duration_ns");
			rec_json_i64(&j, span_ns(r->first_wall_ns, r->last_wall_ns));
		}
		rec_json_key(&j, "chunks");
		rec_json_u64(&j, r->chunks);
		rec_json_key(&j, "events");
		rec_json_u64(&j, r->events);
		rec_json_key(&j, "dropped");
		rec_json_u64(&j, r->dropped);
		rec_json_key(&j, "ended");
		rec_json_str(&j, rec_run_end_name(r->ended));
		rec_json_key(&j, "file");
		rec_json_str(&j, r->file);
		rec_json_end_object(&j);
	}
	rec_json_end_array(&j);
	rec_json_key(&j, "restarts");
	rec_json_u64(&j, res->restarts);
	rec_json_key(&j, "types");
	rec_json_begin_array(&j, false);
	for (size_t i = 0; i < res->type_count; i++) {
		const rec_summary_type *t = &res->types[i];
		rec_json_begin_object(&j, true);
		rec_json_key(&j, "name");
		rec_json_str(&j, t->name);
		rec_json_key(&j, "label");
		rec_json_str(&j, t->label);
		rec_json_key(&j, "category");
		rec_json_str(&j, t->category);
		rec_json_key(&j, "count");
		rec_json_u64(&j, t->count);
		rec_json_key(&j, "bytes");
		rec_json_u64(&j, t->bytes);
		rec_json_end_object(&j);
	}
	rec_json_end_array(&j);
	rec_json_key(&j, "problems");
	rec_json_begin_array(&j, false);
	for (size_t i = 0; i < res->problem_count; i++) {
		const rec_summary_problem *p = &res->problems[i];
		rec_json_problem(&j, true, p->file, p->chunk, p->offset, p->status, p->message);
	}
	rec_json_end_array(&j);
	/* Keys added in schema 1 after its first release: counters,
	 * chunks_unsupported (additions only). */
	rec_json_key(&j, "counters");
	if (!counters) {
		rec_json_null(&j);
	} else {
		rec_json_begin_array(&j, false);
		for (size_t i = 0; i < res->counter_count; i++) {
			const rec_counter_total *c = &res->counters[i];
			rec_json_begin_object(&j, true);
			rec_json_key(&j, "name");
			rec_json_str(&j, c->name);
			rec_json_key(&j, "total");
			rec_json_u64(&j, c->total);
			rec_json_key(&j, "resets");
			rec_json_u64(&j, c->resets);
			rec_json_key(&j, "runs");
			rec_json_u64(&j, c->runs);
			rec_json_key(&j, "samples");
			rec_json_u64(&j, c->samples);
			rec_json_end_object(&j);
		}
		rec_json_end_array(&j);
	}
	rec_json_key(&j, "chunks_unsupported");
	rec_json_u64(&j, res->chunks_unsupported);
	rec_json_end_object(&j);
	rec_json_end(&j);
}

/* --verify found nothing wrong: one line that says what was checked. */
static void print_verified(const rec_summary_result *res)
{
	REC_OUT_LIT("\n Verified: ");
	rec_out_u64(res->chunks);
	rec_out_str(res->chunks == 1 ? " chunk" : " chunks");
	REC_OUT_LIT(" (header and payload checksums), ");
	rec_out_u64(res->events);
	rec_out_str(res->events == 1 ? " event" : " events");
	REC_OUT_LIT(" decoded against their types and pools, statistics match the events\n");
}

/* Every input into s; REC_EXIT_DATA if one could not be read.  *opened:
 * how many could be opened. */
static int add_inputs(rec_summary *s, const rec_cli_input *in, size_t n, uint32_t flags,
		      size_t *opened)
{
	int rc = REC_EXIT_OK;
	*opened = 0;
	for (size_t i = 0; i < n; i++) {
		const char *path = in[i].name;
		rec_reader *r = rec_cli_input_open(&in[i], flags & REC_SUMMARY_VERIFY ? REC_READ_VERIFY : 0);
		if (!r) {
			rc = REC_EXIT_DATA;
			continue;
		}
		(*opened)++;
		rec_status st = rec_summary_add_reader(s, r, path, flags);
		rec_reader_close(r);
		if (st != REC_OK) {
			rec_cli_file_error(path, "%s", rec_summary_errmsg(s));
			rc = REC_EXIT_DATA;
		}
	}
	return rc;
}

/* The problems, after the summary: stdout first, so both read in order on a
 * tty.  REC_EXIT_DATA if there is one. */
static int report_problems(const rec_summary_result *res)
{
	(void)rec_cli_out_sync(); /* a failure is reported once, by rec_cli_finish */
	int rc = REC_EXIT_OK;
	for (size_t i = 0; i < res->problem_count; i++) {
		const rec_summary_problem *p = &res->problems[i];
		rec_problem pr = { p->status, p->offset, p->chunk, p->message };
		rec_cli_problem(p->file, &pr, p->status);
		rc = REC_EXIT_DATA;
	}
	return rc;
}

int rec_summary_tool_run(const rec_summary_tool_opts *o, const rec_cli_input *in, size_t n,
			 FILE *out, FILE *err)
{
	rec_cli_set_streams(out ? out : stdout, err);
	int rc = rec_cli_inputs_check(in, n);
	if (rc != REC_EXIT_OK)
		return rc;
	const uint32_t flags = o->flags;
	rec_summary *s = NULL;
	if (rec_summary_open(&s) != REC_OK) {
		rec_cli_error("out of memory");
		return REC_EXIT_DATA;
	}
	size_t opened;
	rc = add_inputs(s, in, n, flags, &opened);
	if (!opened) {
		rec_summary_close(s);
		return rc; /* nothing could be read: no empty summary */
	}
	const rec_summary_result *res = rec_summary_get(s);
	g_drops = (flags & REC_SUMMARY_DROPS) != 0;
	if (o->json)
		print_json(res, (flags & REC_SUMMARY_COUNTERS) != 0);
	else
		print_text(res);
	if (!o->json && (flags & REC_SUMMARY_VERIFY) && !res->problem_count && rc == REC_EXIT_OK)
		print_verified(res);
	if (report_problems(res) != REC_EXIT_OK)
		rc = REC_EXIT_DATA;
	rec_summary_close(s);
	rec_out_flush();
	return rc;
}

#ifndef REC_TOOL_NO_MAIN
static const char usage_text[] =
	"Usage: rec-summary [OPTIONS] FILE...\n"
	"Summarize rec recordings: files, format versions, chunks, first and last\n"
	"event time, events and dropped events, runs (restarts) and, per event type,\n"
	"the count and encoded size, and counter totals.  Reads chunk headers and\n"
	"statistics, and decodes only the rec.Counter and rec.Dropped events of the\n"
	"chunks that have some (--no-counters: none).  Dropped events are listed\n"
	"by type and reason.  What is shown is checked first: a format 1.0 chunk's\n"
	"payload checksum, a 1.1 chunk's front checksum (section headers, metadata\n"
	"and statistics; its events are checked when decoded); a damaged chunk is\n"
	"reported (file, chunk, offset) and nothing of it is counted (\"Excluded\").\n"
	"FILE may be '-' for standard input.  Several files are summarized together\n"
	"(a run that spans files counts once).\n"
	"\n"
	"Options:\n"
	"  --json       one JSON object (\"schema\": 1) instead of text\n"
	"  --verify     also check every chunk completely (every event, pool\n"
	"               references, statistics against events) and report mismatches;\n"
	"               with nothing wrong, a last line says what was verified\n"
	"  --no-counters  no counter totals and no drops by type: read chunk headers\n"
	"               and statistics only\n"
	"  -h, --help   show this help and exit\n"
	"  --version    show the library version and exit\n"
	"\n"
	"Times are local wall-clock times (set TZ to choose the zone).\n"
	"\n"
	"--json keys: schema (1), files [{path, size, chunks, chunks_damaged,\n"
	"bytes_skipped}], total_size, versions, codecs, chunks, chunks_split (split\n"
	"EVENTS, format 1.3), chunks_damaged, bytes_skipped, unknown_sections,\n"
	"first_event, last_event (ISO 8601),\n"
	"first_event_ns, last_event_ns, duration_ns, events, dropped, drops [{type,\n"
	"reason, reason_name, count}] (when the input has rec.Dropped events, not\n"
	"with --no-counters; by count; type and reason null for dropped events no\n"
	"rec.Dropped accounts for), runs [{run_id,\n"
	"pid, process_start, first_event, last_event, duration_ns, chunks, events,\n"
	"dropped, ended (\"clean close\", \"crash event\", \"truncated\", \"no final\n"
	"chunk\"), file}], restarts, types [{name, label, category, count, bytes}]\n"
	"(by count, then name), problems [{file, chunk, offset, status, message}],\n"
	"counters [{name, total, resets, runs, samples}] (by name; null with\n"
	"--no-counters), chunks_unsupported.  Integers are JSON numbers: above\n"
	"2^53 they lose precision in JavaScript parsers.\n"
	"\n"
	"Counters (rec.Counter events): total is the sum over runs of what each run\n"
	"counted from its first sample, the counter's start (the recorder samples a\n"
	"counter when it is created, at 0, and when a recording opens): the\n"
	"increases between samples in timestamp order; a value at least 2^63\n"
	"lower wrapped past 2^64 - 1 and adds the distance forward; any other drop\n"
	"is a reset, after which counting went on from 0 (it adds the new value).\n"
	"resets counts them, runs the runs with samples of the counter.\n"
	"A chunk of a newer major format version cannot be read: it is stepped over,\n"
	"reported with its chunk index and offset, and counted (chunks_unsupported).\n"
	"\n"
	"Exit status: 0 success, 1 damaged or unreadable input (after printing the\n"
	"summary of what was readable), 2 usage error.\n";

enum { OPT_JSON = 256, OPT_VERIFY, OPT_NO_COUNTERS };

static const struct option long_opts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "no-counters", no_argument, NULL, OPT_NO_COUNTERS },
	REC_CLI_COMMON_OPTIONS,
};


int main(int argc, char **argv)
{
	rec_cli_init("rec-summary");
	rec_summary_tool_opts o = { .flags = REC_SUMMARY_COUNTERS | REC_SUMMARY_DROPS };
	int c;
	while ((c = rec_cli_getopt(argc, argv, "h", long_opts)) != -1) {
		switch (c) {
		case OPT_JSON: o.json = true; break;
		case OPT_VERIFY: o.flags |= REC_SUMMARY_VERIFY; break;
		case OPT_NO_COUNTERS: o.flags &= ~(REC_SUMMARY_COUNTERS | REC_SUMMARY_DROPS); break;
		default: rec_cli_common_option(c, usage_text);
		}
	}
	size_t n;
	rec_cli_input *in = rec_cli_operands(argc, argv, &n);
	int rc = rec_summary_tool_run(&o, in, n, NULL, NULL);
	free(in);
	return rec_cli_finish(rc);
}
#endif /* REC_TOOL_NO_MAIN */
