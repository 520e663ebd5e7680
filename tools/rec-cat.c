/* SPDX-License-Identifier: MIT */
/*
 * rec-cat - concatenate recordings, ordering runs by start time (each run's
 * chunks in sequence order) and removing exact duplicate chunks.  Plain
 * `cat a.rec b.rec` is already a valid recording (the format is a sequence
 * of self-contained chunks); rec-cat adds the order and the deduplication.
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

typedef struct entry {
	uint32_t file;
	uint32_t sequence;
	uint64_t offset, size;
	uint64_t run_id;
	int64_t process_start_ns;
	uint32_t pid;
	uint32_t hcrc, pcrc;
	int64_t start_wall_ns;
	size_t order;   /* input order */
	size_t run;     /* run ordinal (index into runs) */
	int dup;
} entry;

typedef struct run_info {
	uint64_t run_id;
	int64_t process_start_ns;
	uint32_t pid;
	int64_t start; /* earliest chunk start */
	size_t first;  /* input order of its first chunk */
} run_info;

static entry *ents;
static size_t nents, ecap;
static run_info *runs;
static size_t nruns, rcap;
static int *fds;
static const char **names;

static bool read_full(int fd, uint64_t off, void *buf, size_t n)
{
	size_t done = 0;
	while (done < n) {
		ssize_t k = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		done += (size_t)k;
	}
	return true;
}

#define STEP ((size_t)1 << 20)
static char *buf_a, *buf_b;

/* Same bytes?  -1 on a read error. */
static int same_bytes(const entry *a, const entry *b)
{
	for (uint64_t done = 0; done < a->size;) {
		size_t n = a->size - done < STEP ? (size_t)(a->size - done) : STEP;
		if (!read_full(fds[a->file], a->offset + done, buf_a, n) ||
		    !read_full(fds[b->file], b->offset + done, buf_b, n))
			return -1;
		if (memcmp(buf_a, buf_b, n) != 0)
			return 0;
		done += n;
	}
	return 1;
}

static size_t run_of(const rec_chunk_info *ci, size_t order)
{
	for (size_t i = nruns; i-- > 0;) /* recent runs first: chunks of a run are usually adjacent */
		if (runs[i].run_id == ci->run_id && runs[i].pid == ci->pid &&
		    runs[i].process_start_ns == ci->process_start_ns) {
			if (ci->start_wall_ns < runs[i].start)
				runs[i].start = ci->start_wall_ns;
			return i;
		}
	if (nruns == rcap) {
		rcap = rcap ? rcap * 2 : 16;
		runs = rec_cli_xrealloc(runs, rcap * sizeof(run_info));
	}
	run_info *r = &runs[nruns];
	r->run_id = ci->run_id;
	r->pid = ci->pid;
	r->process_start_ns = ci->process_start_ns;
	r->start = ci->start_wall_ns;
	r->first = order;
	return nruns++;
}

static int cmp_key(const void *pa, const void *pb)
{
	const entry *a = *(entry *const *)pa, *b = *(entry *const *)pb;
	if (a->hcrc != b->hcrc)
		return a->hcrc < b->hcrc ? -1 : 1;
	if (a->pcrc != b->pcrc)
		return a->pcrc < b->pcrc ? -1 : 1;
	if (a->size != b->size)
		return a->size < b->size ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static size_t *run_rank;

static int cmp_out(const void *pa, const void *pb)
{
	const entry *a = pa, *b = pb;
	if (a->run != b->run)
		return run_rank[a->run] < run_rank[b->run] ? -1 : 1;
	if (a->sequence != b->sequence)
		return a->sequence < b->sequence ? -1 : 1;
	if (a->start_wall_ns != b->start_wall_ns)
		return a->start_wall_ns < b->start_wall_ns ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static int cmp_run(const void *pa, const void *pb)
{
	const run_info *a = &runs[*(const size_t *)pa], *b = &runs[*(const size_t *)pb];
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->process_start_ns != b->process_start_ns)
		return a->process_start_ns < b->process_start_ns ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

/* One run's state (module-level: the qsort comparators read it). */
typedef struct cat_run {
	const rec_cli_input *in;
	size_t nfiles;
	rec_intact_tally t;
	uint64_t dups, dup_bytes, written, wbytes;
	int rc;
} cat_run;

/* The usage errors the inputs show: '-' or memory (read twice), the output
 * being one of them. */
static int check_inputs(const rec_cat_opts *o, const rec_cli_input *in, size_t n)
{
	int rc = rec_cli_inputs_check(in, n);
	if (rc != REC_EXIT_OK)
		return rc;
	const char *out = o->output;
	struct stat so;
	bool out_exists = out && strcmp(out, "-") != 0 && stat(out, &so) == 0;
	for (size_t i = 0; i < n; i++) {
		if (in[i].data || strcmp(in[i].name, "-") == 0)
			return rec_cli_usage_fail("'-': rec-cat reads its inputs twice and needs files "
						  "(plain cat concatenates a pipe)");
		struct stat si;
		if (out_exists && stat(in[i].name, &si) == 0 && si.st_dev == so.st_dev &&
		    si.st_ino == so.st_ino)
			return rec_cli_usage_fail("output %s is also an input", out);
	}
	return REC_EXIT_OK;
}

/* Pass 1: verify every chunk of file fi, note where it is and whose it is. */
static void scan_file(cat_run *c, size_t fi)
{
	fds[fi] = open(names[fi], O_RDONLY | O_CLOEXEC);
	if (fds[fi] < 0) {
		rec_cli_file_error(names[fi], "%s", strerror(errno));
		c->rc = REC_EXIT_DATA;
		return;
	}
	rec_reader *r = NULL; /* the input is a file: it opened above */
	rec_status st = rec_cli_input_reader(&c->in[fi], REC_READ_VERIFY, &r);
	if (st != REC_OK) {
		rec_cli_file_error(names[fi], "%s", rec_strerror(st));
		c->rc = REC_EXIT_DATA;
		return;
	}
	c->t.stopped = 0; /* per file */
	for (;;) {
		const rec_chunk_info *ci;
		st = rec_reader_next_intact(r, &ci, &c->t);
		if (st == REC_END)
			break;
		if (st != REC_OK) {
			rec_cli_problem(names[fi], rec_reader_problem(r), st);
			c->rc = REC_EXIT_DATA;
			if (c->t.stopped)
				break;
			continue;
		}
		if (nents == ecap) {
			ecap = ecap ? ecap * 2 : 256;
			ents = rec_cli_xrealloc(ents, ecap * sizeof(entry));
		}
		entry *e = &ents[nents];
		memset(e, 0, sizeof *e);
		e->file = (uint32_t)fi;
		e->sequence = ci->sequence;
		e->offset = ci->offset;
		e->size = ci->size;
		e->run_id = ci->run_id;
		e->pid = ci->pid;
		e->process_start_ns = ci->process_start_ns;
		e->start_wall_ns = ci->start_wall_ns;
		e->order = nents;
		e->run = run_of(ci, nents);
		rec_reader_chunk_checksums(r, &e->hcrc, &e->pcrc);
		nents++;
	}
	rec_reader_close(r);
}

/* Duplicates: same checksums and size, then same bytes; the first in input
 * order stays. */
static void mark_duplicates(cat_run *c)
{
	entry **by = rec_cli_xmalloc((nents ? nents : 1) * sizeof(entry *));
	for (size_t i = 0; i < nents; i++)
		by[i] = &ents[i];
	qsort(by, nents, sizeof(entry *), cmp_key);
	for (size_t i = 0; i < nents;) {
		size_t j = i + 1;
		while (j < nents && by[j]->hcrc == by[i]->hcrc && by[j]->pcrc == by[i]->pcrc &&
		       by[j]->size == by[i]->size)
			j++;
		for (size_t k = i + 1; k < j; k++) {
			for (size_t m = i; m < k; m++) {
				if (by[m]->dup)
					continue;
				int s = same_bytes(by[k], by[m]);
				if (s < 0) {
					rec_cli_error("read error while comparing chunks: %s", strerror(errno));
					c->rc = REC_EXIT_DATA;
					break;
				}
				if (s) {
					by[k]->dup = 1;
					c->dups++;
					c->dup_bytes += by[k]->size;
					break;
				}
			}
		}
		i = j;
	}
	free(by);
}

/* Order: runs by start, chunks of a run by sequence. */
static void order_chunks(void)
{
	size_t *idx = rec_cli_xmalloc((nruns ? nruns : 1) * sizeof(size_t));
	run_rank = rec_cli_xmalloc((nruns ? nruns : 1) * sizeof(size_t));
	for (size_t i = 0; i < nruns; i++)
		idx[i] = i;
	qsort(idx, nruns, sizeof(size_t), cmp_run);
	for (size_t i = 0; i < nruns; i++)
		run_rank[idx[i]] = i;
	qsort(ents, nents, sizeof(entry), cmp_out);
	free(idx);
}

/* Pass 2: copy the chunks kept into OUT.  0, 1 if reading or writing
 * failed, -1 if OUT could not be opened (reported). */
static int copy_chunks(cat_run *c, const char *out)
{
	rec_cli_outfile of;
	if (!rec_cli_outfile_open(&of, out))
		return -1;
	bool wfail = false;
	for (size_t i = 0; i < nents && !wfail; i++) {
		const entry *e = &ents[i];
		if (e->dup)
			continue;
		for (uint64_t done = 0; done < e->size;) {
			size_t n = e->size - done < STEP ? (size_t)(e->size - done) : STEP;
			if (!read_full(fds[e->file], e->offset + done, buf_a, n)) {
				rec_cli_file_error(names[e->file], "read error at offset %" PRIu64 ": %s",
						   e->offset + done, errno ? strerror(errno) : "file shrank");
				wfail = true;
				break;
			}
			if (!rec_cli_outfile_write(&of, buf_a, n)) {
				wfail = true;
				break;
			}
			done += n;
		}
		if (wfail)
			break;
		c->written++;
		c->wbytes += e->size;
	}
	if (wfail)
		rec_cli_outfile_discard(&of);
	else if (!rec_cli_outfile_commit(&of))
		wfail = true;
	return wfail ? 1 : 0;
}

/* The report line on stderr. */
static void report(const cat_run *c)
{
	size_t used_runs = 0;
	for (size_t r = 0; r < nruns; r++)
		for (size_t i = 0; i < nents; i++)
			if (ents[i].run == r && !ents[i].dup) {
				used_runs++;
				break;
			}
	const uint64_t damaged = c->t.damaged, unsupported = c->t.unsupported;
	char extra[192] = "";
	if (damaged && unsupported)
		snprintf(extra, sizeof extra, ", %" PRIu64 " damaged chunk%s left out (%" PRIu64
			 " of a newer major format version)", damaged, damaged == 1 ? "" : "s",
			 unsupported);
	else if (damaged)
		snprintf(extra, sizeof extra, ", %" PRIu64 " damaged chunk%s left out", damaged,
			 damaged == 1 ? "" : "s");
	const size_t nfiles = c->nfiles;
	rec_cli_error("%zu file%s: %" PRIu64 " chunk%s of %zu run%s written (%" PRIu64
		      " bytes), %" PRIu64 " duplicate chunk%s removed (%" PRIu64 " bytes)%s",
		      nfiles, nfiles == 1 ? "" : "s", c->written, c->written == 1 ? "" : "s", used_runs,
		      used_runs == 1 ? "" : "s", c->wbytes, c->dups, c->dups == 1 ? "" : "s",
		      c->dup_bytes, extra);
}

static void free_run(size_t nfiles)
{
	for (size_t i = 0; i < nfiles; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	free((void *)names);
	free(ents);
	free(runs);
	free(run_rank);
	free(buf_a);
	free(buf_b);
	fds = NULL;
	names = NULL;
	ents = NULL;
	runs = NULL;
	run_rank = NULL;
	buf_a = buf_b = NULL;
	nents = ecap = nruns = rcap = 0;
}

int rec_cat_run(const rec_cat_opts *o, const rec_cli_input *in, size_t n, FILE *out, FILE *err)
{
	rec_cli_set_streams(out ? out : stdout, err);
	int rc = check_inputs(o, in, n);
	if (rc != REC_EXIT_OK)
		return rc;
	cat_run c = { .in = in, .nfiles = n, .rc = REC_EXIT_OK };
	fds = rec_cli_xmalloc(n * sizeof(int));
	names = rec_cli_xmalloc(n * sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		fds[i] = -1;
		names[i] = in[i].name;
	}
	buf_a = rec_cli_xmalloc(STEP);
	buf_b = rec_cli_xmalloc(STEP);
	for (size_t fi = 0; fi < n; fi++)
		scan_file(&c, fi);
	mark_duplicates(&c);
	if (!o->keep_order && nents)
		order_chunks();
	const char *output = o->output && strcmp(o->output, "-") == 0 ? NULL : o->output;
	int copied = copy_chunks(&c, output);
	if (copied != 0)
		c.rc = REC_EXIT_DATA;
	if (!o->quiet && copied >= 0) /* no report when OUT could not be opened */
		report(&c);
	free_run(n);
	rec_out_flush();
	return c.rc;
}

#ifndef REC_TOOL_NO_MAIN
static const char usage_text[] =
	"Usage: rec-cat [OPTIONS] FILE...\n"
	"Concatenate recordings into one, chunk by chunk, byte for byte:\n"
	"  - runs (Run_Id, Pid, Process_Start) are ordered by the start time of\n"
	"    their first chunk, and each run's chunks by their sequence number;\n"
	"  - a chunk whose bytes are exactly those of a chunk already taken is\n"
	"    removed (checksums compared first, then every byte);\n"
	"  - every chunk is verified first; a damaged chunk is reported and left out.\n"
	"A plain `cat a.rec b.rec > c.rec` is also a valid recording (the format is\n"
	"a sequence of self-contained chunks): rec-cat only adds the order and the\n"
	"deduplication.  The inputs are read twice, so they must be files (not '-').\n"
	"What was done is reported on stderr:\n"
	"  rec-cat: 3 files: 12 chunks of 2 runs written, 4 duplicate chunks removed\n"
	"\n"
	"Options:\n"
	"  -o, --output=OUT  write to OUT instead of standard output; OUT must not be\n"
	"                    an input.  A regular file is replaced at the end through\n"
	"                    a temporary file (OUT.tmp.PID, renamed); a device or a\n"
	"                    FIFO is written directly, never replaced\n"
	"  --keep-order      keep the input order (only remove duplicates)\n"
	"  -q, --quiet       no report line\n"
	"  -h, --help        show this help and exit\n"
	"  --version         show the library version and exit\n"
	"\n"
	"Exit status: 0 success, 1 a damaged chunk was left out or an input could\n"
	"not be read or the output written, 2 usage error.\n";

enum { OPT_KEEP_ORDER = 256 };

static const struct option long_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "keep-order", no_argument, NULL, OPT_KEEP_ORDER },
	{ "quiet", no_argument, NULL, 'q' },
	REC_CLI_COMMON_OPTIONS,
};


int main(int argc, char **argv)
{
	rec_cli_init("rec-cat");
	rec_cat_opts o = { 0 };
	int c;
	while ((c = rec_cli_getopt(argc, argv, "ho:q", long_opts)) != -1) {
		switch (c) {
		case 'o': o.output = optarg; break;
		case 'q': o.quiet = true; break;
		case OPT_KEEP_ORDER: o.keep_order = true; break;
		default: rec_cli_common_option(c, usage_text);
		}
	}
	size_t n;
	rec_cli_input *in = rec_cli_operands(argc, argv, &n);
	int rc = rec_cat_run(&o, in, n, NULL, NULL);
	free(in);
	return rec_cli_finish(rc);
}
#endif /* REC_TOOL_NO_MAIN */
