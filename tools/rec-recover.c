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
#include "rec/archive.h"
#include "rec/rec.h"

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

enum { OPT_VERSION = 256 };

static const struct option long_opts[] = {
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

typedef struct range {
	uint64_t off, size;
} range;

int main(int argc, char **argv)
{
	rec_cli_init("rec-recover");
	bool quiet = false;
	int c;
	while ((c = rec_cli_getopt(argc, argv, "hq", long_opts)) != -1) {
		switch (c) {
		case 'q': quiet = true; break;
		case 'h': rec_cli_help(usage_text);
		case OPT_VERSION: rec_cli_version();
		default: rec_cli_usage_error("unexpected option");
		}
	}
	if (argc - optind != 2)
		rec_cli_usage_error(argc - optind < 2 ? "need IN and OUT" : "too many arguments");
	const char *in = argv[optind], *out = argv[optind + 1];
	bool to_stdout = strcmp(out, "-") == 0;
	struct stat si, so;
	bool in_reg = strcmp(in, "-") != 0 && stat(in, &si) == 0;
	if (!to_stdout && in_reg && stat(out, &so) == 0 && si.st_dev == so.st_dev &&
	    si.st_ino == so.st_ino)
		rec_cli_usage_error("OUT is the same file as IN");

	rec_status st;
	const rec_cli_input input = { in, NULL, 0, NULL };
	rec_reader *r = rec_cli_input_open(&input, REC_READ_VERIFY);
	if (!r) {
		return rec_cli_finish(REC_EXIT_DATA);
	}
	rec_cli_outfile of;
	if (!rec_cli_outfile_open(&of, out)) {
		rec_reader_close(r);
		return rec_cli_finish(REC_EXIT_DATA);
	}
	rec_sink sink = rec_cli_outfile_sink(&of);

	range *kept = NULL;
	size_t nkept = 0, kcap = 0;
	rec_intact_tally t;
	memset(&t, 0, sizeof t);
	bool failed = false, problems = false;
	for (;;) {
		const rec_chunk_info *ci;
		st = rec_reader_next_intact(r, &ci, &t);
		if (st == REC_END)
			break;
		if (st != REC_OK) {
			rec_cli_problem(in, rec_reader_problem(r), st);
			problems = true;
			if (t.stopped) {
				failed = true;
				break;
			}
			continue;
		}
		range rg = { ci->offset, ci->size };
		st = rec_reader_chunk_write(r, &sink);
		if (st != REC_OK) {
			if (!rec_cli_outfile_failed(&of)) /* else already reported, naming OUT */
				rec_cli_problem(in, rec_reader_problem(r), st);
			t.chunks--; /* intact, but not kept */
			t.events -= ci->event_count;
			t.bytes -= ci->size;
			failed = true;
			break;
		}
		if (nkept == kcap) {
			kcap = kcap ? kcap * 2 : 64;
			kept = rec_cli_xrealloc(kept, kcap * sizeof(range));
		}
		kept[nkept++] = rg;
	}
	const uint64_t chunks = t.chunks, damaged = t.damaged, events = t.events,
		       kept_bytes = t.bytes, bad_sizes = t.damaged_bytes, unsupported = t.unsupported;
	rec_reader_stats rs;
	rec_reader_get_stats(r, &rs);
	rec_reader_close(r);

	uint64_t size = in_reg && S_ISREG(si.st_mode) ? (uint64_t)si.st_size : rs.file_size;
	uint64_t dropped = size ? (size > kept_bytes ? size - kept_bytes : 0)
				: rs.bytes_skipped + bad_sizes;
	if (!quiet) {
		/* The dropped ranges: every byte of IN outside a kept chunk. */
		uint64_t at = 0;
		for (size_t i = 0; i <= nkept && size; i++) {
			uint64_t end = i < nkept ? kept[i].off : size;
			if (end > at)
				rec_cli_file_error(in, "dropped %" PRIu64 " bytes at offset %" PRIu64
					" (to offset %" PRIu64 ")", end - at, at, end);
			if (i < nkept)
				at = kept[i].off + kept[i].size;
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
	free(kept);
	if (failed)
		rec_cli_outfile_discard(&of);
	else if (!rec_cli_outfile_commit(&of))
		failed = true;
	int rc = failed || problems || damaged || dropped ? REC_EXIT_DATA : REC_EXIT_OK;
	return rec_cli_finish(rc);
}
