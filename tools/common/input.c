/* SPDX-License-Identifier: MIT */
/*
 * input.c - what the rec-* tools do around a reader (cli.h, "inputs and the
 * event loop"): open a path or memory, the recording's start, the event
 * loop with problem reports, output files.
 */
#include "cli.h"

#include "rec/analysis.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>

bool rec_cli_input_is_stdin(const rec_cli_input *in)
{
	return !in->data && strcmp(in->name, "-") == 0;
}

int rec_cli_inputs_check(const rec_cli_input *in, size_t n)
{
	if (n == 0)
		return rec_cli_usage_fail("no input file");
	size_t stdin_count = 0;
	for (size_t i = 0; i < n; i++)
		if (rec_cli_input_is_stdin(&in[i]) && ++stdin_count > 1)
			return rec_cli_usage_fail("standard input ('-') given more than once");
	return REC_EXIT_OK;
}

rec_cli_input *rec_cli_operands(int argc, char *const argv[], size_t *n)
{
	*n = optind < argc ? (size_t)(argc - optind) : 0;
	rec_cli_input *in = rec_cli_xmalloc((*n ? *n : 1) * sizeof *in);
	for (size_t i = 0; i < *n; i++)
		in[i] = (rec_cli_input){ .name = argv[optind + (int)i] };
	if (rec_cli_inputs_check(in, *n) != REC_EXIT_OK)
		exit(REC_EXIT_USAGE);
	return in;
}

rec_status rec_cli_input_reader(const rec_cli_input *in, uint32_t flags, rec_reader **r)
{
	rec_reader_options o = REC_READER_OPTIONS_INIT;
	if (in->base)
		o = *in->base;
	o.flags = flags;
	if (in->data)
		return rec_reader_open_mem(r, in->data, in->size, in->name, &o);
	return rec_reader_open_path(r, in->name, &o);
}

rec_reader *rec_cli_input_open(const rec_cli_input *in, uint32_t flags)
{
	rec_reader *r = NULL;
	errno = 0;
	rec_status st = rec_cli_input_reader(in, flags, &r);
	if (st == REC_OK)
		return r;
	rec_out_flush();
	if (st == REC_ERR_IO && errno)
		rec_cli_file_error(in->name, "%s", strerror(errno));
	else
		rec_cli_file_error(in->name, "%s", rec_strerror(st));
	return NULL;
}

bool rec_cli_input_probe(const rec_cli_input *in)
{
	if (rec_cli_input_is_stdin(in))
		return true;
	rec_reader *r = rec_cli_input_open(in, 0);
	rec_reader_close(r);
	return r != NULL;
}

bool rec_cli_input_rereadable(const rec_cli_input *in)
{
	struct stat sb;
	if (in->data)
		return true;
	return strcmp(in->name, "-") != 0 && stat(in->name, &sb) == 0 && S_ISREG(sb.st_mode);
}

bool rec_cli_fatal_status(rec_status st)
{
	return st == REC_ERR_NOMEM || st == REC_ERR_IO || st == REC_ERR_INVALID_ARG ||
	       st == REC_ERR_STATE;
}

bool rec_cli_each_chunk(const rec_cli_input *in, rec_cli_chunk_fn fn, void *ctx)
{
	rec_reader *r = NULL;
	if (!rec_cli_input_rereadable(in) || rec_cli_input_reader(in, 0, &r) != REC_OK)
		return false;
	unsigned errors = 0;
	for (;;) {
		const rec_chunk_info *c = NULL;
		rec_status st = rec_reader_next_chunk(r, &c);
		if (st == REC_END)
			break;
		if (st != REC_OK) {
			if (rec_cli_fatal_status(st) || ++errors > 100000)
				break;
			continue;
		}
		fn(ctx, c);
	}
	rec_reader_close(r);
	return true;
}

typedef struct start_ctx {
	bool empty_chunks, have;
	int64_t start;
} start_ctx;

static void chunk_start(void *ctx, const rec_chunk_info *c)
{
	start_ctx *s = ctx;
	if (!c->event_count && !s->empty_chunks)
		return;
	int64_t w = c->event_count ? rec_chunk_wall_ns(c, c->first_ticks) : c->start_wall_ns;
	if (!s->have || w < s->start)
		s->start = w;
	s->have = true;
}

bool rec_cli_recording_start(const rec_cli_input *in, bool empty_chunks, int64_t *out)
{
	start_ctx s = { empty_chunks, false, 0 };
	if (!rec_cli_each_chunk(in, chunk_start, &s) || !s.have)
		return false;
	*out = s.start;
	return true;
}

bool rec_cli_note_unsymbolized;

void rec_cli_unsymbolized_count_note(const char *name, uint64_t n)
{
	if (n)
		rec_cli_file_error(name, "note: %" PRIu64 " frame%s of modules with a build-id %s no "
				   "name (module+offset only): 'rec-symbolize IN OUT [--debug-dir DIR]' "
				   "names %s from debug files", n, n == 1 ? "" : "s",
				   n == 1 ? "has" : "have", n == 1 ? "it" : "them");
}

void rec_cli_unsymbolized_note(rec_reader *r, const char *name)
{
	rec_reader_stats rs;
	memset(&rs, 0, sizeof rs);
	rec_reader_get_stats(r, &rs);
	rec_cli_unsymbolized_count_note(name, rs.frames_unsymbolized);
}

void rec_cli_order_note(rec_reader *r, const char *name)
{
	rec_reader_stats rs;
	memset(&rs, 0, sizeof rs);
	rec_reader_get_stats(r, &rs);
	if (rs.order_window_overflows)
		rec_cli_file_error(name, "warning: timestamp order is approximate in %" PRIu64
				   " place%s: overlapping chunks exceeded the reader's ordering window",
				   rs.order_window_overflows, rs.order_window_overflows == 1 ? "" : "s");
	if (rs.order_late)
		rec_cli_file_error(name, "warning: timestamp order is approximate: %" PRIu64 " event%s "
				   "came after events that started later (%s before chunks already "
				   "read had ended: a duration longer than the chunks between, or a "
				   "thread descheduled while it emitted)", rs.order_late,
				   rs.order_late == 1 ? "" : "s",
				   rs.order_late == 1 ? "it started" : "they started");
}

int rec_cli_each_event(rec_reader *r, const char *name, rec_cli_event_fn fn, void *ctx)
{
	int rc = REC_EXIT_OK;
	uint64_t last_off = UINT64_MAX;
	unsigned same = 0;
	rec_event ev;
	for (;;) {
		rec_status st = rec_reader_next_event(r, &ev);
		if (st == REC_OK) {
			int frc = fn(ctx, &ev);
			if (frc != REC_EXIT_OK)
				return frc > rc ? frc : rc;
			continue;
		}
		if (st == REC_END)
			break;
		const rec_problem *p = rec_reader_problem(r);
		rec_cli_problem(name, p, st);
		rc = REC_EXIT_DATA;
		if (rec_cli_fatal_status(st))
			break;
		uint64_t off = p ? p->offset : 0;
		if (off == last_off && ++same > 16)
			break; /* the reader does not advance: stop rather than loop */
		if (off != last_off)
			same = 0;
		last_off = off;
	}
	if (rec_cli_note_unsymbolized)
		rec_cli_unsymbolized_note(r, name);
	rec_cli_order_note(r, name);
	return rc;
}

int rec_cli_each_input_event(const rec_cli_input *in, size_t n, const rec_cli_event_pass *p)
{
	int rc = REC_EXIT_OK;
	for (size_t i = 0; i < n && !(p->stop && *p->stop); i++) {
		rec_reader *r = rec_cli_input_open(&in[i], REC_READ_ORDERED);
		if (!r) {
			rc = REC_EXIT_DATA;
			continue;
		}
		if (p->begin)
			p->begin(p->ctx, &in[i]);
		if ((p->filter && rec_reader_select_types(r, p->filter, p->filter_ctx) != REC_OK) ||
		    (p->digest_type && rec_reader_digest_type(r, p->digest_type, p->digest_fn,
							      p->digest_ctx) != REC_OK)) {
			rec_cli_file_error(in[i].name, "%s", rec_reader_problem(r)->message);
			rec_reader_close(r);
			rc = REC_EXIT_DATA;
			continue;
		}
		int frc = rec_cli_each_event(r, in[i].name, p->fn, p->ctx);
		rec_reader_close(r);
		if (frc > rc)
			rc = frc;
	}
	return rc;
}

int rec_cli_summary_inputs(rec_summary *s, const rec_cli_input *in, size_t n, uint32_t flags)
{
	int rc = REC_EXIT_OK;
	for (size_t i = 0; i < n; i++) {
		rec_reader *r = NULL;
		if (rec_cli_input_reader(&in[i], 0, &r) != REC_OK)
			continue; /* the event pass reports it */
		if (rec_summary_add_reader(s, r, in[i].name, flags) != REC_OK) {
			rec_cli_file_error(in[i].name, "%s", rec_summary_errmsg(s));
			rc = REC_EXIT_DATA;
		}
		rec_reader_close(r);
	}
	return rc;
}
