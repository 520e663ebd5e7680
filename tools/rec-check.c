/* SPDX-License-Identifier: MIT */
/*
 * rec-check - verify every chunk of recordings completely (checksums,
 * structure, every event against metadata, every pool reference, statistics
 * against events): one line per problem on stderr, a verdict per file, exit 1
 * on any damage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cli.h"
#include "common/tools.h"
#include "rec/archive.h"
#include "rec/rec.h"

typedef struct problem {
	int64_t chunk;
	uint64_t offset;
	rec_status status;
	char *message;
} problem;

typedef struct file_result {
	const rec_cli_input *in;
	const char *path;
	char *error;
	uint64_t size;
	uint64_t chunks, damaged, events, intact_bytes, skipped;
	uint64_t unsupported; /* of damaged: a newer major format version */
	problem *problems;
	size_t nproblems, cap;
} file_result;

static void add_problem(file_result *f, const rec_problem *p, rec_status st)
{
	if (f->nproblems == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 8;
		f->problems = rec_cli_xrealloc(f->problems, f->cap * sizeof(problem));
	}
	problem *q = &f->problems[f->nproblems++];
	q->chunk = p ? p->chunk : -1;
	q->offset = p ? p->offset : 0;
	q->status = p && p->status ? p->status : st;
	q->message = rec_cli_xstrdup(p && p->message ? p->message : rec_strerror(st));
}

/* Check one file; true if it is intact. */
static bool check_file(file_result *f)
{
	rec_reader *r = NULL;
	errno = 0;
	rec_status st = rec_cli_input_reader(f->in, REC_READ_VERIFY, &r);
	if (st != REC_OK) { /* rec_cli_input_open's message, the reason kept for --json */
		const char *why = st == REC_ERR_IO && errno ? strerror(errno) : rec_strerror(st);
		rec_cli_file_error(f->path, "%s", why);
		f->error = rec_cli_xstrdup(why);
		return false;
	}
	rec_intact_tally t;
	memset(&t, 0, sizeof t);
	for (;;) {
		const rec_chunk_info *ci;
		st = rec_reader_next_intact(r, &ci, &t);
		if (st == REC_END)
			break;
		if (st == REC_OK)
			continue;
		const rec_problem *p = rec_reader_problem(r);
		rec_cli_problem(f->path, p, st);
		add_problem(f, p, st);
		if (t.stopped)
			break; /* cannot go on */
	}
	f->chunks = t.chunks + t.damaged;
	f->damaged = t.damaged;
	f->unsupported = t.unsupported;
	f->events = t.events;
	f->intact_bytes = t.bytes;
	uint64_t bad_sizes = t.damaged_bytes; /* chunks with a good header that failed */
	rec_reader_stats rs;
	rec_reader_get_stats(r, &rs);
	rec_reader_close(r);
	struct stat sb;
	if (!rec_cli_input_is_stdin(f->in) && !f->in->data && stat(f->path, &sb) == 0 &&
	    S_ISREG(sb.st_mode))
		f->size = (uint64_t)sb.st_size;
	else
		f->size = rs.file_size;
	if (f->size)
		f->skipped = f->size > f->intact_bytes ? f->size - f->intact_bytes : 0;
	else /* a pipe: what the reader skipped plus the damaged chunks it framed */
		f->skipped = rs.bytes_skipped + bad_sizes;
	return f->damaged == 0 && f->nproblems == 0 && f->skipped == 0;
}

static void print_json(file_result *files, size_t n, bool all_ok)
{
	rec_json j;
	memset(&j, 0, sizeof j);
	rec_json_begin_object(&j, false);
	rec_json_key(&j, "schema");
	rec_json_u64(&j, 1);
	rec_json_key(&j, "ok");
	rec_json_bool(&j, all_ok);
	rec_json_key(&j, "files");
	rec_json_begin_array(&j, false);
	for (size_t i = 0; i < n; i++) {
		const file_result *f = &files[i];
		rec_json_begin_object(&j, false);
		rec_json_key(&j, "path");
		rec_json_str(&j, f->path);
		rec_json_key(&j, "ok");
		rec_json_bool(&j, !f->error && !f->damaged && !f->nproblems && !f->skipped);
		rec_json_key(&j, "size");
		rec_json_u64(&j, f->size);
		rec_json_key(&j, "chunks");
		rec_json_u64(&j, f->chunks);
		rec_json_key(&j, "chunks_damaged");
		rec_json_u64(&j, f->damaged);
		rec_json_key(&j, "events");
		rec_json_u64(&j, f->events);
		rec_json_key(&j, "intact_bytes");
		rec_json_u64(&j, f->intact_bytes);
		rec_json_key(&j, "bytes_skipped");
		rec_json_u64(&j, f->skipped);
		rec_json_key(&j, "error");
		rec_json_str(&j, f->error);
		rec_json_key(&j, "chunks_unsupported");
		rec_json_u64(&j, f->unsupported);
		rec_json_key(&j, "problems");
		rec_json_begin_array(&j, false);
		for (size_t k = 0; k < f->nproblems; k++) {
			const problem *p = &f->problems[k];
			rec_json_problem(&j, false, NULL, p->chunk, p->offset, p->status, p->message);
		}
		rec_json_end_array(&j);
		rec_json_end_object(&j);
	}
	rec_json_end_array(&j);
	rec_json_end_object(&j);
	rec_json_end(&j);
}

/* One verdict line on stdout. */
static void print_verdict(const file_result *f, bool ok, bool quiet)
{
	if (f->error) {
		rec_out_printf("%s: UNREADABLE\n", f->path);
	} else if (ok) {
		if (!quiet)
			rec_out_printf("%s: OK, %" PRIu64 " chunk%s, %" PRIu64 " event%s\n", f->path,
				       f->chunks, f->chunks == 1 ? "" : "s", f->events,
				       f->events == 1 ? "" : "s");
	} else {
		rec_out_printf("%s: DAMAGED, %" PRIu64 " of %" PRIu64 " chunk%s, %" PRIu64
			       " byte%s skipped",
			       f->path, f->damaged, f->chunks, f->chunks == 1 ? "" : "s",
			       f->skipped, f->skipped == 1 ? "" : "s");
		if (f->unsupported)
			rec_out_printf(" (%" PRIu64 " of a newer major format version: not damaged, "
				       "unreadable by this version)",
				       f->unsupported);
		rec_out_char('\n');
	}
	rec_out_flush();
	fflush(rec_out_g.file ? rec_out_g.file : stdout);
}

int rec_check_run(const rec_check_opts *o, const rec_cli_input *in, size_t n, FILE *out,
		  FILE *err)
{
	rec_cli_set_streams(out ? out : stdout, err);
	int rc = rec_cli_inputs_check(in, n);
	if (rc != REC_EXIT_OK)
		return rc;
	file_result *files = rec_cli_xmalloc(n * sizeof(file_result));
	memset(files, 0, n * sizeof(file_result));
	bool all_ok = true;
	for (size_t i = 0; i < n; i++) {
		file_result *f = &files[i];
		f->in = &in[i];
		f->path = in[i].name;
		bool ok = check_file(f);
		all_ok = all_ok && ok;
		if (!o->json)
			print_verdict(f, ok, o->quiet);
	}
	if (o->json)
		print_json(files, n, all_ok);
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < files[i].nproblems; k++)
			free(files[i].problems[k].message);
		free(files[i].problems);
		free(files[i].error);
	}
	free(files);
	rec_out_flush();
	return all_ok ? REC_EXIT_OK : REC_EXIT_DATA;
}

#ifndef REC_TOOL_NO_MAIN
static const char usage_text[] =
	"Usage: rec-check [OPTIONS] FILE...\n"
	"Verify every chunk of each recording completely: header and payload\n"
	"checksums, every section, every event against its metadata, every pool\n"
	"reference, and that the statistics match the events.  Each problem is one\n"
	"line on stderr:\n"
	"  rec-check: FILE: chunk N at offset X: what\n"
	"then one verdict per file on stdout:\n"
	"  FILE: OK, 41 chunks, 10000000 events\n"
	"  FILE: DAMAGED, 2 of 41 chunks, 123 bytes skipped\n"
	"(bytes skipped: bytes of the file that are not part of an intact chunk).\n"
	"A chunk of a newer major format version cannot be checked: it is reported\n"
	"(\"unsupported format version 2.0\", with its chunk index and offset),\n"
	"stepped over, counted among the damaged chunks and named in the verdict:\n"
	"  FILE: DAMAGED, 1 of 8 chunks, 1517 bytes skipped (1 of a newer major\n"
	"  format version: not damaged, unreadable by this version)\n"
	"FILE may be '-' for standard input.\n"
	"\n"
	"Options:\n"
	"  --json       one JSON object (\"schema\": 1) instead of the verdict lines\n"
	"  -q, --quiet  no verdict for intact files\n"
	"  -h, --help   show this help and exit\n"
	"  --version    show the library version and exit\n"
	"\n"
	"--json keys: schema (1), ok (all files intact), files [{path, ok, size,\n"
	"chunks, chunks_damaged, events, intact_bytes, bytes_skipped, error (null or\n"
	"why the file could not be read), problems [{chunk (null if none), offset,\n"
	"status, message}], chunks_unsupported (of chunks_damaged: chunks of a newer\n"
	"major format version)}].\n"
	"\n"
	"Exit status: 0 every chunk of every file is intact, 1 damage found or a\n"
	"file could not be read, 2 usage error.\n";

enum { OPT_JSON = 256 };

static const struct option long_opts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "quiet", no_argument, NULL, 'q' },
	REC_CLI_COMMON_OPTIONS,
};


int main(int argc, char **argv)
{
	rec_cli_init("rec-check");
	rec_check_opts o = { 0 };
	int c;
	while ((c = rec_cli_getopt(argc, argv, "hq", long_opts)) != -1) {
		switch (c) {
		case OPT_JSON: o.json = true; break;
		case 'q': o.quiet = true; break;
		default: rec_cli_common_option(c, usage_text);
		}
	}
	size_t n;
	rec_cli_input *in = rec_cli_operands(argc, argv, &n);
	int rc = rec_check_run(&o, in, n, NULL, NULL);
	free(in);
	return rec_cli_finish(rc);
}
#endif /* REC_TOOL_NO_MAIN */
