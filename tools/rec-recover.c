/* SPDX-License-Identifier: MIT */
/*
 * rec-recover - copy every intact (verified) chunk of a damaged or truncated
 * recording into a clean file, byte for byte, and say what was dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/tools.h"
#include "rec/archive.h"
#include "rec/rec.h"

typedef struct range {
	uint64_t off, size;
} range;

/* What was kept: the chunks' byte ranges and the tally. */
typedef struct recovered {
	range *kept;
	size_t nkept, kcap;
	rec_intact_tally t;
	bool failed, problems;
} recovered;

/* Copy every intact chunk of r into the sink, noting its range. */
static void copy_intact(recovered *k, rec_reader *r, const char *in, rec_cli_outfile *of)
{
	rec_sink sink = rec_cli_outfile_sink(of);
	for (;;) {
		const rec_chunk_info *ci;
		rec_status st = rec_reader_next_intact(r, &ci, &k->t);
		if (st == REC_END)
			break;
		if (st != REC_OK) {
			rec_cli_problem(in, rec_reader_problem(r), st);
			k->problems = true;
			if (k->t.stopped) {
				k->failed = true;
				break;
			}
			continue;
		}
		range rg = { ci->offset, ci->size };
		st = rec_reader_chunk_write(r, &sink);
		if (st != REC_OK) {
			if (!rec_cli_outfile_failed(of)) /* else already reported, naming OUT */
				rec_cli_problem(in, rec_reader_problem(r), st);
			k->t.chunks--; /* intact, but not kept */
			k->t.events -= ci->event_count;
			k->t.bytes -= ci->size;
			k->failed = true;
			break;
		}
		if (k->nkept == k->kcap) {
			k->kcap = k->kcap ? k->kcap * 2 : 64;
			k->kept = rec_cli_xrealloc(k->kept, k->kcap * sizeof(range));
		}
		k->kept[k->nkept++] = rg;
	}
}

/* The dropped ranges (every byte of IN outside a kept chunk), then the
 * totals, on stderr. */
static void report(const recovered *k, const char *in, uint64_t size, uint64_t dropped)
{
	const uint64_t chunks = k->t.chunks, damaged = k->t.damaged, events = k->t.events,
		       kept_bytes = k->t.bytes, unsupported = k->t.unsupported;
	uint64_t at = 0;
	for (size_t i = 0; i <= k->nkept && size; i++) {
		uint64_t end = i < k->nkept ? k->kept[i].off : size;
		if (end > at)
			rec_cli_file_error(in, "dropped %" PRIu64 " bytes at offset %" PRIu64
				" (to offset %" PRIu64 ")", end - at, at, end);
		if (i < k->nkept)
			at = k->kept[i].off + k->kept[i].size;
	}
	rec_cli_file_error(in, "kept %" PRIu64 " of %" PRIu64 " chunks (%" PRIu64
			   " events, %" PRIu64 " bytes); dropped %" PRIu64 " chunk%s, %" PRIu64
			   " bytes",
			   chunks, chunks + damaged, events, kept_bytes, damaged,
			   damaged == 1 ? "" : "s", dropped);
	if (unsupported)
		rec_cli_file_error(in, "%" PRIu64 " of the dropped chunks %s of a newer major "
				   "format version: not damaged, unreadable by this version "
				   "(keep IN for a newer reader)",
				   unsupported, unsupported == 1 ? "is" : "are");
}

int rec_recover_run(const rec_recover_opts *o, const rec_cli_input *input, FILE *out, FILE *err)
{
	rec_cli_set_streams(out ? out : stdout, err);
	const char *in = input->name, *outp = o->output ? o->output : "-";
	bool to_stdout = strcmp(outp, "-") == 0;
	struct stat si, so;
	bool in_reg = !rec_cli_input_is_stdin(input) && !input->data && stat(in, &si) == 0;
	if (!to_stdout && in_reg && stat(outp, &so) == 0 && si.st_dev == so.st_dev &&
	    si.st_ino == so.st_ino)
		return rec_cli_usage_fail("OUT is the same file as IN");

	rec_reader *r = rec_cli_input_open(input, REC_READ_VERIFY);
	if (!r)
		return REC_EXIT_DATA;
	rec_cli_outfile of;
	if (!rec_cli_outfile_open(&of, outp)) {
		rec_reader_close(r);
		return REC_EXIT_DATA;
	}
	recovered k;
	memset(&k, 0, sizeof k);
	copy_intact(&k, r, in, &of);
	rec_reader_stats rs;
	rec_reader_get_stats(r, &rs);
	rec_reader_close(r);

	uint64_t size = in_reg && S_ISREG(si.st_mode) ? (uint64_t)si.st_size : rs.file_size;
	uint64_t dropped = size ? (size > k.t.bytes ? size - k.t.bytes : 0)
				: rs.bytes_skipped + k.t.damaged_bytes;
	if (!o->quiet)
		report(&k, in, size, dropped);
	free(k.kept);
	bool failed = k.failed;
	if (failed)
		rec_cli_outfile_discard(&of);
	else if (!rec_cli_outfile_commit(&of))
		failed = true;
	rec_out_flush();
	return failed || k.problems || k.t.damaged || dropped ? REC_EXIT_DATA : REC_EXIT_OK;
}

#ifndef REC_TOOL_NO_MAIN
static const char usage_text[] =
	"Usage: rec-recover [OPTIONS] IN OUT\n"
	"Write every intact chunk of the recording IN into OUT, byte for byte and in\n"
	"the same order, and report on stderr what was dropped: each problem as\n"
	"  rec-recover: IN: chunk N at offset X: what\n"
	"then each dropped byte range and a total line.  A chunk is intact when its\n"
	"header and payload checksums hold and it verifies completely (sections,\n"
	"events, pool references, statistics).  A regular file OUT is written to a\n"
	"temporary file next to it and renamed at the end, so it never holds a\n"
	"partial copy; a device or a FIFO is written directly, never replaced.\n"
	"IN may be '-' (standard input) and OUT '-' (standard output).  OUT must not\n"
	"be IN.\n"
	"\n"
	"Options:\n"
	"  -q, --quiet  no line for dropped ranges and totals (problems are still\n"
	"               reported)\n"
	"  -h, --help   show this help and exit\n"
	"  --version    show the library version and exit\n"
	"\n"
	"Exit status: 0 nothing was lost (OUT is a byte copy of IN), 1 something was\n"
	"dropped or IN/OUT could not be read or written (OUT then holds the intact\n"
	"chunks, if it could be written), 2 usage error.\n"
	"A chunk of a newer major format version cannot be verified: it is dropped\n"
	"and named as such (keep IN: a newer rec-recover keeps it).\n";


static const struct option long_opts[] = {
	{ "quiet", no_argument, NULL, 'q' },
	REC_CLI_COMMON_OPTIONS,
};


int main(int argc, char **argv)
{
	rec_cli_init("rec-recover");
	rec_recover_opts o = { 0 };
	int c;
	while ((c = rec_cli_getopt(argc, argv, "hq", long_opts)) != -1) {
		switch (c) {
		case 'q': o.quiet = true; break;
		default: rec_cli_common_option(c, usage_text);
		}
	}
	if (argc - optind != 2)
		rec_cli_usage_error(argc - optind < 2 ? "need IN and OUT" : "too many arguments");
	const rec_cli_input in = { .name = argv[optind] };
	o.output = argv[optind + 1];
	return rec_cli_finish(rec_recover_run(&o, &in, NULL, NULL));
}
#endif /* REC_TOOL_NO_MAIN */
