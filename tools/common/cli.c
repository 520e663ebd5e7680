/* SPDX-License-Identifier: MIT */
/*
 * cli.c - shared helpers of the rec-* tools (see cli.h).
 */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>

static const char *g_tool = "rec";
static char g_stdout_buf[1u << 20];
static FILE *g_err; /* NULL: stderr */
static int g_out_errno; /* of the fast buffer's first failed write */
rec_out_buf rec_out_g;

#define ERR (g_err ? g_err : stderr)

/* ---- messages ------------------------------------------------------------ */

void rec_cli_init(const char *tool)
{
	g_tool = tool;
	setvbuf(stdout, g_stdout_buf, _IOFBF, sizeof g_stdout_buf);
	rec_out_g.buf = malloc(REC_OUT_SIZE);
	if (!rec_out_g.buf) {
		fprintf(ERR, "%s: out of memory\n", g_tool);
		exit(REC_EXIT_DATA);
	}
	if (rec_version_number() != REC_VERSION_NUMBER) {
		fprintf(ERR, "%s: library version %s differs from the tool's %d.%d.%d\n", g_tool,
			rec_version_string(), REC_VERSION_MAJOR, REC_VERSION_MINOR, REC_VERSION_PATCH);
		exit(REC_EXIT_DATA);
	}
}

const char *rec_cli_tool(void) { return g_tool; }

void rec_cli_set_streams(FILE *out, FILE *err)
{
	rec_out_flush();
	rec_out_g.file = out;
	g_err = err;
}

FILE *rec_cli_err(void) { return ERR; }

void rec_cli_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(ERR, "%s: ", g_tool);
	va_start(ap, fmt);
	vfprintf(ERR, fmt, ap);
	va_end(ap);
	fputc('\n', ERR);
}

void rec_cli_file_error(const char *file, const char *fmt, ...)
{
	va_list ap;
	fprintf(ERR, "%s: %s: ", g_tool, file);
	va_start(ap, fmt);
	vfprintf(ERR, fmt, ap);
	va_end(ap);
	fputc('\n', ERR);
}

/* The reader's messages may already start with "chunk C at offset O: ";
 * the tool prints that location itself, so drop it from the message. */
static const char *strip_location(const char *msg, int64_t chunk, uint64_t offset)
{
	/* "chunk C at offset O: " or "at offset O: " (any O: the reader may
	 * name the chunk's offset while the problem points into it). */
	(void)chunk;
	(void)offset;
	const char *p = msg;
	if (strncmp(p, "chunk ", 6) == 0) {
		p += 6;
		if (*p < '0' || *p > '9')
			return msg;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p != ' ')
			return msg;
		p++;
	}
	if (strncmp(p, "at offset ", 10) != 0)
		return msg;
	p += 10;
	if (*p < '0' || *p > '9')
		return msg;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p[0] != ':' || p[1] != ' ')
		return msg;
	return p + 2;
}

void rec_cli_problem(const char *file, const rec_problem *p, rec_status status)
{
	if (!p || !p->message || !*p->message) {
		if (p && p->chunk >= 0)
			fprintf(ERR, "%s: %s: chunk %" PRId64 " at offset %" PRIu64 ": %s\n", g_tool,
				file, p->chunk, p->offset, rec_strerror(p->status ? p->status : status));
		else if (p)
			fprintf(ERR, "%s: %s: at offset %" PRIu64 ": %s\n", g_tool, file, p->offset,
				rec_strerror(p->status ? p->status : status));
		else
			fprintf(ERR, "%s: %s: %s\n", g_tool, file, rec_strerror(status));
		return;
	}
	const char *msg = strip_location(p->message, p->chunk, p->offset);
	if (p->chunk >= 0)
		fprintf(ERR, "%s: %s: chunk %" PRId64 " at offset %" PRIu64 ": %s\n", g_tool, file,
			p->chunk, p->offset, msg);
	else
		fprintf(ERR, "%s: %s: at offset %" PRIu64 ": %s\n", g_tool, file, p->offset, msg);
}

static void usage_message(const char *fmt, va_list ap) REC_CLI_PRINTF(1, 0);
static void usage_message(const char *fmt, va_list ap)
{
	(void)rec_cli_out_sync();
	fprintf(ERR, "%s: ", g_tool);
	vfprintf(ERR, fmt, ap);
	fprintf(ERR, "\ntry '%s --help'\n", g_tool);
}

void rec_cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	usage_message(fmt, ap);
	va_end(ap);
	exit(REC_EXIT_USAGE);
}

int rec_cli_usage_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	usage_message(fmt, ap);
	va_end(ap);
	return REC_EXIT_USAGE;
}

void rec_cli_version(void)
{
	printf("%s\n", rec_version_string());
	exit(rec_cli_finish(REC_EXIT_OK));
}

void rec_cli_help(const char *text)
{
	fputs(text, stdout);
	exit(rec_cli_finish(REC_EXIT_OK));
}

int rec_cli_finish(int rc)
{
	/* The reason is the errno of the first failed call (a later call that
	 * fails or succeeds may change errno): the fast buffer, rec_cli_out_sync
	 * and rec_cli_export_stdout keep it.  A write made directly to stdout
	 * otherwise (printf, Graphviz rendering png/pdf/svg) that failed left
	 * only ferror(): errno as it is on entry is then the best guess. */
	int entry_errno = errno;
	rec_out_flush();
	int failed = rec_out_g.failed, err = failed ? g_out_errno : 0;
	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (!failed)
			err = errno;
		failed = 1;
	}
	errno = 0;
	if (fclose(stdout) != 0) {
		if (!failed)
			err = errno;
		failed = 1;
	}
	if (failed) {
		if (!err)
			err = entry_errno;
		fprintf(ERR, "%s: error writing standard output: %s\n", g_tool,
			err ? strerror(err) : "write failed");
		return REC_EXIT_DATA;
	}
	return rc;
}

/* ---- options -------------------------------------------------------------- */

int rec_cli_getopt(int argc, char *const argv[], const char *shortopts,
		   const struct option *longopts)
{
	opterr = 0;
	int prev = optind;
	int c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (c != '?' && c != ':')
		return c;
	/* Name the offending option as the user wrote it. */
	const char *arg = (prev < argc) ? argv[prev] : "";
	if (optind > prev && optind - 1 < argc && optind - 1 > 0)
		arg = argv[optind - 1];
	if (strncmp(arg, "--", 2) == 0) {
		/* A long option: unknown, ambiguous, or a missing/extra value. */
		const char *eq = strchr(arg, '=');
		size_t n = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
		const struct option *hit = NULL;
		int matches = 0;
		for (const struct option *o = longopts; o && o->name; o++) {
			if (strlen(o->name) < n || memcmp(o->name, arg + 2, n) != 0)
				continue; /* not a prefix of this option's name */
			if (strlen(o->name) == n) {
				hit = o;
				matches = 1;
				break;
			}
			hit = o;
			matches++;
		}
		if (matches == 1 && hit->has_arg == required_argument && !eq)
			rec_cli_usage_error("option '--%s' needs a value", hit->name);
		if (matches == 1 && hit->has_arg == no_argument && eq)
			rec_cli_usage_error("option '--%s' takes no value", hit->name);
		if (matches > 1)
			rec_cli_usage_error("ambiguous option '%.*s'", (int)(n + 2), arg);
		rec_cli_usage_error("unknown option '%.*s'", (int)(n + 2), arg);
	}
	if (c == ':' || (optopt > 0 && optopt < 256 && strchr(shortopts, optopt)))
		rec_cli_usage_error("option '-%c' needs a value", optopt);
	if (optopt > 0 && optopt < 256)
		rec_cli_usage_error("unknown option '-%c'", optopt);
	rec_cli_usage_error("unknown option '%s'", arg);
}

const char *rec_cli_one_file(int argc, char *const argv[])
{
	if (optind >= argc)
		rec_cli_usage_error("no input file");
	if (argc - optind > 1)
		rec_cli_usage_error("one input file only (got %d)", argc - optind);
	return argv[optind];
}

bool rec_cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (!s || !*s)
		return false;
	uint64_t v = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (v < min || v > max)
		return false;
	*out = v;
	return true;
}

uint64_t rec_cli_opt_u64(const char *option, const char *s, uint64_t min, uint64_t max)
{
	uint64_t v;
	if (!rec_cli_parse_u64(s, min, max, &v))
		rec_cli_usage_error("%s: '%s' is not a number from %" PRIu64 " to %" PRIu64, option, s,
				    min, max);
	return v;
}

/* ---- absolute times ------------------------------------------------------ */

static bool digits_n(const char **p, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*p)[i];
		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (c - '0');
	}
	*p += n;
	*out = v;
	return true;
}

/* See cli.h. */
bool rec_cli_parse_iso_time(const char *s, int64_t *out)
{
	const char *p = s;
	int Y, M, D, h, m, sec = 0;
	if (!digits_n(&p, 4, &Y) || *p++ != '-' || !digits_n(&p, 2, &M) || *p++ != '-' ||
	    !digits_n(&p, 2, &D) || (*p != 'T' && *p != ' '))
		return false;
	p++;
	if (!digits_n(&p, 2, &h) || *p++ != ':' || !digits_n(&p, 2, &m))
		return false;
	int64_t nsec = 0;
	if (*p == ':') {
		p++;
		if (!digits_n(&p, 2, &sec))
			return false;
		if (*p == '.' || *p == ',') {
			p++;
			int64_t mul = 100000000;
			if (*p < '0' || *p > '9')
				return false;
			while (*p >= '0' && *p <= '9') {
				nsec += (*p - '0') * mul;
				mul /= 10;
				p++;
			}
		}
	}
	if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
		return false;
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	tm.tm_year = Y - 1900;
	tm.tm_mon = M - 1;
	tm.tm_mday = D;
	tm.tm_hour = h;
	tm.tm_min = m;
	tm.tm_sec = sec;
	time_t t;
	if (*p == 0) {
		tm.tm_isdst = -1;
		t = mktime(&tm);
	} else {
		long off = 0;
		if (*p == 'Z' && p[1] == 0) {
			off = 0;
		} else if ((*p == '+' || *p == '-') && p[1]) {
			int sign = *p == '-' ? -1 : 1, oh, om;
			p++;
			if (!digits_n(&p, 2, &oh) || *p++ != ':' || !digits_n(&p, 2, &om) || *p)
				return false;
			off = sign * (oh * 3600L + om * 60L);
		} else {
			return false;
		}
		t = timegm(&tm) - off;
	}
	if (t == (time_t)-1 && !(Y == 1969 || Y == 1970))
		return false;
	if ((int64_t)t > INT64_MAX / 1000000000 - 1 || (int64_t)t < INT64_MIN / 1000000000 + 1)
		return false;
	*out = (int64_t)t * 1000000000 + nsec;
	return true;
}

/* See cli.h. */
bool rec_cli_parse_duration(const char *s, int64_t *out)
{
	return s && rec_parse_duration(s, strlen(s), out) == REC_OK;
}

void *rec_cli_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		rec_cli_error("out of memory");
		exit(REC_EXIT_DATA);
	}
	return p;
}

void *rec_cli_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		rec_cli_error("out of memory");
		exit(REC_EXIT_DATA);
	}
	return q;
}

char *rec_cli_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = rec_cli_xmalloc(n);
	memcpy(p, s, n);
	return p;
}

void rec_cli_list_add_csv(rec_cli_list *l, const char *csv)
{
	char *copy = rec_cli_xstrdup(csv);
	l->copies = rec_cli_xrealloc(l->copies, (l->ncopies + 1) * sizeof *l->copies);
	l->copies[l->ncopies++] = copy;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!*tok)
			continue;
		if (l->count == l->cap) {
			l->cap = l->cap ? l->cap * 2 : 8;
			l->items = rec_cli_xrealloc(l->items, l->cap * sizeof *l->items);
		}
		l->items[l->count++] = tok;
	}
}

void rec_cli_list_free(rec_cli_list *l)
{
	for (size_t i = 0; i < l->ncopies; i++)
		free(l->copies[i]);
	free(l->copies);
	free(l->items);
	memset(l, 0, sizeof *l);
}

/* ---- fast stdout ------------------------------------------------------------ */

void rec_out_flush(void)
{
	if (rec_out_g.len) {
		FILE *f = rec_out_g.file ? rec_out_g.file : stdout;
		if (!rec_out_g.failed && fwrite(rec_out_g.buf, 1, rec_out_g.len, f) != rec_out_g.len) {
			rec_cli_out_failed(errno);
		}
		rec_out_g.len = 0;
	}
}

void rec_cli_out_failed(int err)
{
	if (!rec_out_g.failed) {
		rec_out_g.failed = 1;
		g_out_errno = err ? err : EIO;
	}
}

bool rec_cli_out_sync(void)
{
	rec_out_flush();
	FILE *f = rec_out_g.file ? rec_out_g.file : stdout;
	errno = 0;
	if (fflush(f) != 0)
		rec_cli_out_failed(errno);
	return !rec_out_g.failed;
}

void rec_out_write_slow(const void *p, size_t n)
{
	const char *s = p;
	while (n) {
		if (rec_out_g.len == REC_OUT_SIZE)
			rec_out_flush();
		size_t room = REC_OUT_SIZE - rec_out_g.len;
		size_t k = n < room ? n : room;
		memcpy(rec_out_g.buf + rec_out_g.len, s, k);
		rec_out_g.len += k;
		s += k;
		n -= k;
	}
}

void rec_out_printf(const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof tmp) {
		rec_out_write(tmp, (size_t)n);
		return;
	}
	char *big = rec_cli_xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	rec_out_write(big, (size_t)n);
	free(big);
}

static const char g_digits2[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static inline size_t count_digits(uint64_t v)
{
	size_t n = 1;
	for (;;) {
		if (v < 10) return n;
		if (v < 100) return n + 1;
		if (v < 1000) return n + 2;
		if (v < 10000) return n + 3;
		v /= 10000;
		n += 4;
	}
}

size_t rec_fmt_u64(char *p, uint64_t v)
{
	size_t n = count_digits(v);
	char *q = p + n;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		q -= 2;
		memcpy(q, g_digits2 + 2 * (size_t)r, 2);
	}
	if (v >= 10) {
		q -= 2;
		memcpy(q, g_digits2 + 2 * (size_t)v, 2);
	} else {
		*--q = (char)('0' + v);
	}
	return n;
}

size_t rec_fmt_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p = '-';
		return 1 + rec_fmt_u64(p + 1, (uint64_t)0 - (uint64_t)v);
	}
	return rec_fmt_u64(p, (uint64_t)v);
}

void rec_out_u64(uint64_t v)
{
	char *p = rec_out_reserve(24);
	rec_out_commit(rec_fmt_u64(p, v));
}

void rec_out_i64(int64_t v)
{
	char *p = rec_out_reserve(24);
	rec_out_commit(rec_fmt_i64(p, v));
}

void rec_out_hex(uint64_t v)
{
	static const char hx[] = "0123456789abcdef";
	char tmp[20];
	int n = 0;
	do {
		tmp[n++] = hx[v & 15];
		v >>= 4;
	} while (v);
	char *p = rec_out_reserve(20);
	p[0] = '0';
	p[1] = 'x';
	for (int i = 0; i < n; i++)
		p[2 + i] = tmp[n - 1 - i];
	rec_out_commit((size_t)n + 2);
}

/* ---- JSON ---------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 if invalid
 * (bad lead byte, bad continuation, overlong, surrogate, > U+10FFFF). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	if (c < 0xC2)
		return 0;
	if (c < 0xE0) {
		if (n < 2 || (s[1] & 0xC0) != 0x80)
			return 0;
		return 2;
	}
	if (c < 0xF0) {
		if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
			return 0;
		if (c == 0xE0 && s[1] < 0xA0)
			return 0; /* overlong */
		if (c == 0xED && s[1] >= 0xA0)
			return 0; /* surrogate */
		return 3;
	}
	if (c < 0xF5) {
		if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
			return 0;
		if (c == 0xF0 && s[1] < 0x90)
			return 0; /* overlong */
		if (c == 0xF4 && s[1] >= 0x90)
			return 0; /* > U+10FFFF */
		return 4;
	}
	return 0;
}

void rec_out_json_string(const char *str, size_t len)
{
	static const char hx[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	rec_out_char('"');
	size_t i = 0;
	while (i < len) {
		/* Fast run of plain printable ASCII. */
		size_t j = i;
		while (j < len && s[j] >= 0x20 && s[j] < 0x7F && s[j] != '"' && s[j] != '\\')
			j++;
		if (j > i) {
			rec_out_write(s + i, j - i);
			i = j;
			if (i == len)
				break;
		}
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			rec_out_write(e, 2);
			i++;
		} else if (c < 0x20 || c == 0x7F) {
			char e[6] = { '\\', 'u', '0', '0', hx[c >> 4], hx[c & 15] };
			rec_out_write(e, 6);
			i++;
		} else {
			size_t k = utf8_seq(s + i, len - i);
			if (k) {
				rec_out_write(s + i, k);
				i += k;
			} else {
				rec_out_write("\xEF\xBF\xBD", 3); /* U+FFFD */
				i++;
			}
		}
	}
	rec_out_char('"');
}

void rec_out_json_double(double v)
{
	if (!isfinite(v)) {
		REC_OUT_LIT("null");
		return;
	}
	char tmp[40];
	int n = snprintf(tmp, sizeof tmp, "%.17g", v);
	/* Prefer the shortest representation that reads back the same. */
	for (int prec = 1; prec < 17; prec++) {
		char t2[40];
		int n2 = snprintf(t2, sizeof t2, "%.*g", prec, v);
		if (strtod(t2, NULL) == v) {
			memcpy(tmp, t2, (size_t)n2 + 1);
			n = n2;
			break;
		}
	}
	rec_out_write(tmp, (size_t)n);
}

static void json_indent(int depth)
{
	rec_out_char('\n');
	for (int i = 0; i < depth; i++)
		REC_OUT_LIT("  ");
}

/* Called before writing any value or key: comma and newline as needed. */
static void json_pre(rec_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth == 0)
		return;
	int d = j->depth;
	if (!j->first[d]) {
		rec_out_char(',');
		if (j->compact[d])
			rec_out_char(' ');
	}
	j->first[d] = false;
	if (!j->compact[d])
		json_indent(d);
}

static void json_open(rec_json *j, char c, bool compact)
{
	json_pre(j);
	rec_out_char(c);
	if (j->depth + 1 < (int)(sizeof j->first / sizeof j->first[0]))
		j->depth++;
	j->first[j->depth] = true;
	j->compact[j->depth] = compact || (j->depth > 1 && j->compact[j->depth - 1]);
}

static void json_close(rec_json *j, char c)
{
	bool empty = j->first[j->depth];
	bool compact = j->compact[j->depth];
	if (j->depth > 0)
		j->depth--;
	if (!compact && !empty)
		json_indent(j->depth);
	rec_out_char(c);
}

void rec_json_begin_object(rec_json *j, bool compact) { json_open(j, '{', compact); }
void rec_json_end_object(rec_json *j) { json_close(j, '}'); }

void rec_json_problem(rec_json *j, bool with_file, const char *file, int64_t chunk,
		      uint64_t offset, rec_status status, const char *message)
{
	rec_json_begin_object(j, true);
	if (with_file) {
		rec_json_key(j, "file");
		rec_json_str(j, file);
	}
	rec_json_key(j, "chunk");
	if (chunk >= 0)
		rec_json_i64(j, chunk);
	else
		rec_json_null(j);
	rec_json_key(j, "offset");
	rec_json_u64(j, offset);
	rec_json_key(j, "status");
	rec_json_str(j, rec_strerror(status));
	rec_json_key(j, "message");
	rec_json_str(j, message);
	rec_json_end_object(j);
}
void rec_json_begin_array(rec_json *j, bool compact) { json_open(j, '[', compact); }
void rec_json_end_array(rec_json *j) { json_close(j, ']'); }

void rec_json_key(rec_json *j, const char *key)
{
	json_pre(j);
	rec_out_json_cstr(key);
	REC_OUT_LIT(": ");
	j->after_key = true;
}

void rec_json_str(rec_json *j, const char *s)
{
	json_pre(j);
	rec_out_json_cstr(s);
}

void rec_json_strn(rec_json *j, const char *s, size_t n)
{
	json_pre(j);
	rec_out_json_string(s, n);
}

void rec_json_u64(rec_json *j, uint64_t v)
{
	json_pre(j);
	rec_out_u64(v);
}

void rec_json_i64(rec_json *j, int64_t v)
{
	json_pre(j);
	rec_out_i64(v);
}

void rec_json_double(rec_json *j, double v)
{
	json_pre(j);
	rec_out_json_double(v);
}

void rec_json_bool(rec_json *j, bool v)
{
	json_pre(j);
	if (v)
		REC_OUT_LIT("true");
	else
		REC_OUT_LIT("false");
}

void rec_json_null(rec_json *j)
{
	json_pre(j);
	REC_OUT_LIT("null");
}

void rec_json_raw(rec_json *j, const char *s)
{
	json_pre(j);
	rec_out_str(s);
}

void rec_json_end(rec_json *j)
{
	(void)j;
	rec_out_char('\n');
}

/* ---- human formatting --------------------------------------------------------- */

size_t rec_fmt_duration(char *buf, int64_t ns)
{
	char *p = buf;
	uint64_t v;
	if (ns < 0) {
		*p++ = '-';
		v = (uint64_t)0 - (uint64_t)ns;
	} else {
		v = (uint64_t)ns;
	}
	if (v < 1000) {
		p += rec_fmt_u64(p, v);
		memcpy(p, " ns", 4);
		return (size_t)(p + 3 - buf);
	}
	/* Three decimals of the largest unit that keeps the integer part >= 1,
	 * rounded half up; a rounding that reaches 1000 moves to the next unit. */
	static const struct { uint64_t div; const char *name; } units[] = {
		{ 1000ull, " us" }, { 1000000ull, " ms" }, { 1000000000ull, " s" },
	};
	int u = v < 1000000ull ? 0 : v < 1000000000ull ? 1 : 2;
	uint64_t milli = (v + units[u].div / 2000) / (units[u].div / 1000); /* value * 1000 */
	if (u < 2 && milli >= 1000000) {
		u++;
		milli = (v + units[u].div / 2000) / (units[u].div / 1000);
	}
	p += rec_fmt_u64(p, milli / 1000);
	*p++ = '.';
	unsigned f = (unsigned)(milli % 1000);
	*p++ = (char)('0' + f / 100);
	*p++ = (char)('0' + f / 10 % 10);
	*p++ = (char)('0' + f % 10);
	size_t ul = strlen(units[u].name);
	memcpy(p, units[u].name, ul + 1);
	return (size_t)(p + ul - buf);
}

size_t rec_fmt_bytes(char *buf, uint64_t bytes)
{
	if (bytes < 1024) {
		size_t n = rec_fmt_u64(buf, bytes);
		memcpy(buf + n, bytes == 1 ? " byte" : " bytes", bytes == 1 ? 6 : 7);
		return n + (bytes == 1 ? 5 : 6);
	}
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes / 1024.0;
	int u = 0;
	while (v >= 1023.95 && u < 5) {
		v /= 1024.0;
		u++;
	}
	int n = snprintf(buf, 48, "%.1f %s", v, units[u]);
	return n > 0 ? (size_t)n : 0;
}

/* Cache of the last second formatted: events come in bursts within one
 * second, and localtime_r() is the expensive part. */
typedef struct wall_cache {
	int64_t sec;
	bool valid;
	char hms[16];   /* "10:14:03" */
	char date[16];  /* "2026-12-02" */
	char zone[16];  /* "Z" or "+01:00" */
} wall_cache;
static wall_cache g_wall;

static void wall_split(int64_t epoch_ns, int64_t *sec, uint32_t *nsec)
{
	int64_t s = epoch_ns / 1000000000;
	int64_t r = epoch_ns % 1000000000;
	if (r < 0) {
		r += 1000000000;
		s--;
	}
	*sec = s;
	*nsec = (uint32_t)r;
}

static void wall_fill(int64_t sec)
{
	if (g_wall.valid && g_wall.sec == sec)
		return;
	time_t t = (time_t)sec;
	struct tm tm;
	if (!localtime_r(&t, &tm)) {
		memset(&tm, 0, sizeof tm);
		tm.tm_year = 70;
		tm.tm_mday = 1;
	}
	snprintf(g_wall.hms, sizeof g_wall.hms, "%02d:%02d:%02d", tm.tm_hour % 100, tm.tm_min % 100,
		 tm.tm_sec % 100);
	long long year = (long long)tm.tm_year + 1900;
	if (year < 0 || year > 9999)
		year = year < 0 ? 0 : 9999;
	snprintf(g_wall.date, sizeof g_wall.date, "%04lld-%02d-%02d", year, (tm.tm_mon + 1) % 100,
		 tm.tm_mday % 100);
	long off = tm.tm_gmtoff;
	if (off == 0) {
		strcpy(g_wall.zone, "Z");
	} else {
		char sign = off < 0 ? '-' : '+';
		if (off < 0)
			off = -off;
		snprintf(g_wall.zone, sizeof g_wall.zone, "%c%02ld:%02ld", sign, (off / 3600) % 100,
			 (off / 60) % 60);
	}
	g_wall.sec = sec;
	g_wall.valid = true;
}

static char *put_nanos(char *p, uint32_t nsec)
{
	for (int i = 8; i >= 0; i--) {
		p[i] = (char)('0' + nsec % 10);
		nsec /= 10;
	}
	return p + 9;
}

size_t rec_fmt_wall(char *buf, int64_t epoch_ns)
{
	int64_t sec;
	uint32_t nsec;
	wall_split(epoch_ns, &sec, &nsec);
	wall_fill(sec);
	char *p = buf;
	memcpy(p, g_wall.hms, 8);
	p += 8;
	*p++ = '.';
	p = put_nanos(p, nsec);
	*p++ = ' ';
	*p++ = '(';
	memcpy(p, g_wall.date, 10);
	p += 10;
	*p++ = ')';
	*p = 0;
	return (size_t)(p - buf);
}

size_t rec_fmt_iso(char *buf, int64_t epoch_ns)
{
	int64_t sec;
	uint32_t nsec;
	wall_split(epoch_ns, &sec, &nsec);
	wall_fill(sec);
	char *p = buf;
	memcpy(p, g_wall.date, 10);
	p += 10;
	*p++ = 'T';
	memcpy(p, g_wall.hms, 8);
	p += 8;
	*p++ = '.';
	p = put_nanos(p, nsec);
	size_t zl = strlen(g_wall.zone);
	memcpy(p, g_wall.zone, zl + 1);
	return (size_t)(p + zl - buf);
}
