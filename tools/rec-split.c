/* SPDX-License-Identifier: MIT */
/*
 * rec-split - split a recording into pieces by run, by time window or by
 * size.  Each piece is a valid recording made of whole chunks, copied byte
 * for byte: a chunk is never cut.
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

typedef struct piece {
	char *name;
	uint64_t chunks, events, bytes;
	/* key */
	uint64_t run_id;
	int64_t process_start_ns;
	uint32_t pid;
	int64_t window;
} piece;

static piece *pieces;
static size_t npieces, pcap;
static int cur_fd = -1;
static size_t cur_piece = SIZE_MAX;
static const char *prefix;
static const rec_split_opts *g_o;

static int write_errno; /* of the last failed write to a piece, 0 if none */

static int fd_write(void *opaque, const void *buf, size_t len)
{
	(void)opaque;
	const char *p = buf;
	while (len) {
		ssize_t k = write(cur_fd, p, len);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			write_errno = errno;
			return -errno;
		}
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

static size_t new_piece(void)
{
	if (npieces == pcap) {
		pcap = pcap ? pcap * 2 : 16;
		pieces = rec_cli_xrealloc(pieces, pcap * sizeof(piece));
	}
	piece *p = &pieces[npieces];
	memset(p, 0, sizeof *p);
	size_t n = strlen(prefix) + 32;
	p->name = rec_cli_xmalloc(n);
	snprintf(p->name, n, "%s-%04zu.rec", prefix, npieces + 1);
	return npieces++;
}

/* Make piece i the one written to (created on first use, appended after). */
static bool switch_to(size_t i, bool fresh)
{
	if (i == cur_piece)
		return true;
	if (cur_fd >= 0 && close(cur_fd) != 0) {
		rec_cli_file_error(pieces[cur_piece].name, "%s", strerror(errno));
		cur_fd = -1;
		return false;
	}
	cur_fd = open(pieces[i].name,
		      O_WRONLY | O_CREAT | O_CLOEXEC | (fresh ? O_TRUNC : O_APPEND), 0644);
	if (cur_fd < 0) {
		rec_cli_file_error(pieces[i].name, "%s", strerror(errno));
		return false;
	}
	cur_piece = i;
	return true;
}

static int cmp_window(const void *a, const void *b)
{
	const piece *x = a, *y = b;
	return x->window < y->window ? -1 : x->window > y->window;
}

/* By time: renumber the pieces in window order (they were numbered as their
 * windows appeared).  Renames through temporary names. */
static bool renumber_by_window(void)
{
	piece *sorted = rec_cli_xmalloc((npieces ? npieces : 1) * sizeof(piece));
	memcpy(sorted, pieces, npieces * sizeof(piece));
	qsort(sorted, npieces, sizeof(piece), cmp_window);
	bool ok = true, moved = false;
	for (size_t i = 0; i < npieces; i++)
		moved = moved || sorted[i].name != pieces[i].name;
	if (!moved) {
		free(sorted);
		return true;
	}
	char **tmpn = rec_cli_xmalloc(npieces * sizeof(char *));
	for (size_t i = 0; i < npieces; i++) {
		size_t n = strlen(pieces[i].name) + 16;
		tmpn[i] = rec_cli_xmalloc(n);
		snprintf(tmpn[i], n, "%s.renumber", pieces[i].name);
		if (pieces[i].chunks && rename(pieces[i].name, tmpn[i]) != 0) {
			rec_cli_file_error(pieces[i].name, "%s", strerror(errno));
			ok = false;
		}
	}
	/* sorted[k] goes to the name pieces[k] had; its data is in tmpn[old]. */
	char **names = rec_cli_xmalloc(npieces * sizeof(char *));
	for (size_t k = 0; k < npieces; k++)
		names[k] = pieces[k].name;
	for (size_t k = 0; k < npieces && ok; k++) {
		size_t old = 0;
		while (pieces[old].name != sorted[k].name)
			old++;
		if (sorted[k].chunks && rename(tmpn[old], names[k]) != 0) {
			rec_cli_file_error(names[k], "%s", strerror(errno));
			ok = false;
		}
	}
	for (size_t k = 0; k < npieces; k++) {
		sorted[k].name = names[k];
		free(tmpn[k]);
	}
	memcpy(pieces, sorted, npieces * sizeof(piece));
	free(names);
	free(tmpn);
	free(sorted);
	return ok;
}

static void out_iso(int64_t ns)
{
	char b[64];
	rec_out_write(b, rec_fmt_iso(b, ns));
}

/* The piece chunk ci goes to (made when new: *fresh). */
static size_t piece_for(const rec_chunk_info *ci, uint64_t *cur_bytes, bool *fresh)
{
	size_t pi = SIZE_MAX;
	*fresh = false;
	const int by = g_o->by;
	if (by == REC_SPLIT_BY_SIZE) {
		/* The current piece while the chunk fits (a chunk larger than
		 * the limit gets a piece of its own). */
		if (npieces && (*cur_bytes + ci->size <= g_o->size || *cur_bytes == 0)) {
			pi = npieces - 1;
		} else {
			pi = new_piece();
			*fresh = true;
			*cur_bytes = 0;
		}
		*cur_bytes += ci->size;
		return pi;
	}
	int64_t w = 0;
	if (by == REC_SPLIT_BY_TIME) {
		int64_t t = ci->start_wall_ns, d = (int64_t)g_o->window_ns;
		w = t / d - (t % d < 0); /* floor */
	}
	for (size_t i = npieces; i-- > 0;) {
		const piece *p = &pieces[i];
		if (by == REC_SPLIT_BY_RUN ? (p->run_id == ci->run_id && p->pid == ci->pid &&
					      p->process_start_ns == ci->process_start_ns)
					   : p->window == w)
			return i;
	}
	pi = new_piece();
	*fresh = true;
	pieces[pi].run_id = ci->run_id;
	pieces[pi].pid = ci->pid;
	pieces[pi].process_start_ns = ci->process_start_ns;
	pieces[pi].window = w;
	return pi;
}

/* Every intact chunk of r into its piece.  false if writing failed
 * (reported); *rc is REC_EXIT_DATA after a reader problem. */
static bool split_chunks(rec_reader *r, const char *in, const struct stat *si, bool in_reg,
			 rec_intact_tally *tally, int *rc)
{
	rec_sink sink = { fd_write, NULL, NULL };
	uint64_t cur_bytes = 0;
	for (;;) {
		const rec_chunk_info *ci;
		rec_status st = rec_reader_next_intact(r, &ci, tally);
		if (st == REC_END)
			return true;
		if (st != REC_OK) {
			rec_cli_problem(in, rec_reader_problem(r), st);
			*rc = REC_EXIT_DATA;
			if (tally->stopped)
				return true;
			continue;
		}
		bool fresh;
		size_t pi = piece_for(ci, &cur_bytes, &fresh);
		if (fresh && in_reg) { /* the input must not be overwritten by a piece */
			struct stat sp;
			if (stat(pieces[pi].name, &sp) == 0 && sp.st_dev == si->st_dev &&
			    sp.st_ino == si->st_ino) {
				rec_cli_file_error(pieces[pi].name, "is the input; choose another --prefix");
				return false;
			}
		}
		if (!switch_to(pi, fresh))
			return false;
		uint64_t events = ci->event_count, size = ci->size;
		write_errno = 0;
		st = rec_reader_chunk_write(r, &sink);
		if (st != REC_OK) {
			if (write_errno) /* the piece could not be written: name it */
				rec_cli_file_error(pieces[pi].name, "%s", strerror(write_errno));
			else
				rec_cli_problem(in, rec_reader_problem(r), st);
			return false;
		}
		pieces[pi].chunks++;
		pieces[pi].events += events;
		pieces[pi].bytes += size;
	}
}

/* One line per piece on stdout (and the pieces' names freed). */
static void print_pieces(void)
{
	const uint64_t dur = g_o->window_ns;
	for (size_t i = 0; i < npieces; i++) {
		const piece *p = &pieces[i];
		if (!p->chunks) { /* its file could not be written */
			free(p->name);
			continue;
		}
		rec_out_printf("%s: %" PRIu64 " chunk%s, %" PRIu64 " events, %" PRIu64 " bytes", p->name,
			       p->chunks, p->chunks == 1 ? "" : "s", p->events, p->bytes);
		if (g_o->by == REC_SPLIT_BY_RUN) {
			rec_out_printf(", run %016" PRIx64 " pid %" PRIu32, p->run_id, p->pid);
		} else if (g_o->by == REC_SPLIT_BY_TIME) {
			REC_OUT_LIT(", window ");
			out_iso(p->window * (int64_t)dur);
			REC_OUT_LIT(" +");
			char b[64];
			rec_out_write(b, rec_fmt_duration(b, (int64_t)dur));
		} else if (p->bytes > g_o->size) {
			REC_OUT_LIT(" (one chunk larger than the size limit)");
		}
		rec_out_char('\n');
		free(p->name);
	}
}

/* After the pieces: the damaged chunks left out, on stderr. */
static void report_damaged(const char *in, const rec_intact_tally *tally)
{
	const uint64_t damaged = tally->damaged, unsupported = tally->unsupported;
	if (!damaged)
		return;
	rec_out_flush();
	fflush(rec_out_g.file ? rec_out_g.file : stdout);
	if (unsupported)
		rec_cli_file_error(in, "%" PRIu64 " damaged chunk%s left out (%" PRIu64
				   " of a newer major format version: unreadable by this version)",
				   damaged, damaged == 1 ? "" : "s", unsupported);
	else
		rec_cli_file_error(in, "%" PRIu64 " damaged chunk%s left out", damaged,
				   damaged == 1 ? "" : "s");
}

int rec_split_run(const rec_split_opts *o, const rec_cli_input *input, FILE *out, FILE *err)
{
	rec_cli_set_streams(out ? out : stdout, err);
	const char *in = input->name;
	if (o->by < REC_SPLIT_BY_RUN || o->by > REC_SPLIT_BY_SIZE ||
	    (o->by == REC_SPLIT_BY_TIME && (o->window_ns == 0 || o->window_ns > INT64_MAX)))
		return rec_cli_usage_fail("--by run|time=DUR|size=SIZE is required");
	char *defprefix = NULL;
	prefix = o->prefix;
	if (!prefix) {
		if (rec_cli_input_is_stdin(input)) {
			prefix = "rec-split";
		} else {
			defprefix = rec_cli_xstrdup(in);
			size_t n = strlen(defprefix);
			if (n > 4 && strcmp(defprefix + n - 4, ".rec") == 0)
				defprefix[n - 4] = '\0';
			prefix = defprefix;
		}
	}
	if (!*prefix) {
		free(defprefix);
		return rec_cli_usage_fail("empty prefix");
	}
	g_o = o;
	pieces = NULL;
	npieces = pcap = 0;
	cur_fd = -1;
	cur_piece = SIZE_MAX;

	rec_reader *r = rec_cli_input_open(input, REC_READ_VERIFY);
	if (!r) {
		free(defprefix);
		return REC_EXIT_DATA;
	}
	struct stat si;
	bool in_reg = !rec_cli_input_is_stdin(input) && !input->data && stat(in, &si) == 0;
	int rc = REC_EXIT_OK;
	rec_intact_tally tally;
	memset(&tally, 0, sizeof tally);
	bool failed = !split_chunks(r, in, &si, in_reg, &tally, &rc);
	rec_reader_close(r);
	if (cur_fd >= 0 && close(cur_fd) != 0) {
		rec_cli_file_error(pieces[cur_piece].name, "%s", strerror(errno));
		failed = true;
	}
	cur_fd = -1;
	if (o->by == REC_SPLIT_BY_TIME && !failed && !renumber_by_window())
		failed = true;
	print_pieces();
	free(pieces);
	pieces = NULL;
	report_damaged(in, &tally);
	free(defprefix);
	prefix = NULL;
	g_o = NULL;
	rec_out_flush();
	return failed ? REC_EXIT_DATA : rc;
}

#ifndef REC_TOOL_NO_MAIN
static const char usage_text[] =
	"Usage: rec-split --by run|time=DUR|size=SIZE [OPTIONS] FILE\n"
	"Split a recording into pieces PREFIX-0001.rec, PREFIX-0002.rec, ...  Each\n"
	"piece is a valid recording made of whole chunks copied byte for byte: a\n"
	"chunk is never cut, so a piece holds whole chunks only and time windows\n"
	"and sizes are met at chunk granularity.\n"
	"  --by run        one piece per run (Run_Id, Pid, Process_Start)\n"
	"  --by time=DUR   one piece per time window of DUR (500ms, 10s, 1.5min, 1h;\n"
	"                  units ns us ms s m min h, a bare number is seconds),\n"
	"                  windows aligned on multiples\n"
	"                  of DUR since the Unix epoch; a chunk goes to the window of\n"
	"                  its start time (Start_Wall_Ns)\n"
	"  --by size=SIZE  pieces of at most SIZE bytes (e.g. 64MiB; suffixes K, KiB,\n"
	"                  M, MiB, G, GiB are powers of 1024): a piece is closed\n"
	"                  before a chunk would make it exceed SIZE; a chunk larger\n"
	"                  than SIZE goes alone into its own piece\n"
	"Pieces are numbered by run in the order each run first appears in FILE, by\n"
	"time in window order, by size in file order (a piece whose chunks are not\n"
	"adjacent in FILE is appended to; each chunk keeps its order in FILE).\n"
	"Every chunk is verified first; a damaged chunk is reported and left out.\n"
	"One line per piece on stdout: its name, chunks, events, bytes and its run\n"
	"or window.  FILE may be '-' (standard input).\n"
	"\n"
	"Options:\n"
	"  -o, --prefix=PREFIX  piece names start with PREFIX (default: FILE without\n"
	"                       its .rec suffix; \"rec-split\" for standard input)\n"
	"  -h, --help           show this help and exit\n"
	"  --version            show the library version and exit\n"
	"\n"
	"Existing files with a piece's name are overwritten.\n"
	"Exit status: 0 success, 1 a damaged chunk was left out, or reading or\n"
	"writing failed, 2 usage error.\n";

enum { OPT_BY = 256 };

static const struct option long_opts[] = {
	{ "by", required_argument, NULL, OPT_BY },
	{ "prefix", required_argument, NULL, 'o' },
	REC_CLI_COMMON_OPTIONS,
};

/* "<digits><unit>" with unit among the given suffixes; overflow checked. */
static bool parse_scaled(const char *s, const char *const *units, const uint64_t *mult,
			 uint64_t *out)
{
	size_t n = 0;
	while (s[n] >= '0' && s[n] <= '9')
		n++;
	if (n == 0 || n > 19)
		return false;
	char num[24];
	memcpy(num, s, n);
	num[n] = '\0';
	uint64_t v;
	if (!rec_cli_parse_u64(num, 1, UINT64_MAX, &v))
		return false;
	const char *u = s + n;
	for (size_t i = 0; units[i]; i++) {
		if (strcmp(u, units[i]) == 0) {
			if (v > UINT64_MAX / mult[i])
				return false;
			*out = v * mult[i];
			return true;
		}
	}
	return false;
}

static const char *const size_units[] = { "", "B", "K", "KiB", "k", "M", "MiB", "G", "GiB", NULL };
static const uint64_t size_mult[] = { 1, 1, 1024, 1024, 1024, 1048576, 1048576, 1073741824ull,
				      1073741824ull };


int main(int argc, char **argv)
{
	rec_cli_init("rec-split");
	rec_split_opts o = { 0 };
	int c;
	while ((c = rec_cli_getopt(argc, argv, "ho:", long_opts)) != -1) {
		switch (c) {
		case OPT_BY:
			if (strcmp(optarg, "run") == 0) {
				o.by = REC_SPLIT_BY_RUN;
			} else if (strncmp(optarg, "time=", 5) == 0) {
				o.by = REC_SPLIT_BY_TIME;
				int64_t d; /* the tools' one duration grammar (cli.h) */
				if (!rec_cli_parse_duration(optarg + 5, &d) || d <= 0)
					rec_cli_usage_error("--by time=DUR: bad duration '%s' (e.g. 10s, 500ms, 1h)",
							    optarg + 5);
				o.window_ns = (uint64_t)d;
			} else if (strncmp(optarg, "size=", 5) == 0) {
				o.by = REC_SPLIT_BY_SIZE;
				if (!parse_scaled(optarg + 5, size_units, size_mult, &o.size))
					rec_cli_usage_error("--by size=SIZE: bad size '%s' (e.g. 64MiB, 4096)",
							    optarg + 5);
			} else {
				rec_cli_usage_error("--by: '%s' is not run, time=DUR or size=SIZE", optarg);
			}
			break;
		case 'o': o.prefix = optarg; break;
		default: rec_cli_common_option(c, usage_text);
		}
	}
	if (!o.by)
		rec_cli_usage_error("--by run|time=DUR|size=SIZE is required");
	if (argc - optind != 1)
		rec_cli_usage_error(argc - optind < 1 ? "no input file" : "one input file only");
	const rec_cli_input in = { .name = argv[optind] };
	return rec_cli_finish(rec_split_run(&o, &in, NULL, NULL));
}
#endif /* REC_TOOL_NO_MAIN */
