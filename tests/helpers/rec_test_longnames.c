/* SPDX-License-Identifier: MIT */
/*
 * rec_test_longnames.c - writes a small recording with names longer than the
 * 4096 bytes the tools cut some of them at, for tests/cli/timeline_longnames.sh,
 * with the real writer (1 GHz ticks, pid 777, one chunk):
 *
 *   rec_test_longnames OUT.rec [LEN]      (LEN >= 16, default 5000)
 *
 * Names (every one exactly LEN bytes; the digits say where a cut fell):
 *   type "app.L" then the digits 0123456789 repeated   (category "cat.C"
 *        then digits, one u32 field "f" then digits), HAS_THREAD
 *   type "app.U" then "\xc3\xa9" (U+00E9) repeated (the last one cut to its
 *        first byte when LEN - 5 is odd), no fields, HAS_THREAD
 *   thread tid 901 named "thr" then digits
 * Events: app.L value 7 at 1 ms, app.U at 2 ms, both on thread 901.
 * Exits 0 on success, 1 on a writer error, 2 on a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/rec.h"

static rec_writer *w;
static int failed;

static void ck(rec_status st, const char *what)
{
	if (st != REC_OK && !failed) {
		fprintf(stderr, "rec_test_longnames: %s: %s (%s)\n", what, rec_strerror(st),
			w ? rec_writer_errmsg(w) : "");
		failed = 1;
	}
}

/* A malloc'd NUL-terminated name of len bytes: prefix, then fill repeated. */
static char *make_name(const char *prefix, const char *fill, size_t len)
{
	char *s = malloc(len + 1);
	if (!s) {
		fprintf(stderr, "rec_test_longnames: out of memory\n");
		exit(1);
	}
	size_t p = strlen(prefix), f = strlen(fill);
	memcpy(s, prefix, p);
	for (size_t i = p; i < len; i++)
		s[i] = fill[(i - p) % f];
	s[len] = '\0';
	return s;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: rec_test_longnames OUT.rec [LEN]\n");
		return 2;
	}
	char *end = NULL;
	unsigned long len = argc == 3 ? strtoul(argv[2], &end, 10) : 5000;
	if ((end && *end) || len < 16 || len > (1ul << 20)) {
		fprintf(stderr, "rec_test_longnames: LEN must be 16..1048576\n");
		return 2;
	}
	char *tname = make_name("app.L", "0123456789", len);
	char *cname = make_name("cat.C", "0123456789", len);
	char *fname = make_name("f", "0123456789", len);
	char *uname = make_name("app.U", "\xc3\xa9", len);
	char *thname = make_name("thr", "0123456789", len);

	rec_writer_options o = REC_WRITER_OPTIONS_INIT;
	o.run_id = 77;
	o.pid = 777;
	o.process_start_ns = 1700000000000000000ll;
	o.anchor_wall_ns = 1700000000000000000ll;
	o.anchor_ticks = 0;
	o.tick_frequency = 1000000000u;
	ck(rec_writer_open_path(&w, argv[1], &o), "open");
	if (!failed) {
		const rec_field fields[] = { { fname, "", "", REC_TYPE_U32, REC_UNIT_NONE } };
		const rec_type types[] = {
			{ 256, REC_EVENT_HAS_THREAD, tname, "", "", cname, 1, fields },
			{ 257, REC_EVENT_HAS_THREAD, uname, "", "", "app", 0, NULL },
		};
		for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
			ck(rec_writer_add_type(w, &types[i]), "add_type");
		uint64_t th = 0;
		ck(rec_writer_intern_string(w, thname, len, &th), "intern");
		ck(rec_writer_define_thread(w, 1, 901, th), "thread");
		ck(rec_writer_begin(w, 256, 1000000, 0, 1, 0), "begin");
		ck(rec_writer_put_u64(w, 7), "put");
		ck(rec_writer_end(w), "end");
		ck(rec_writer_begin(w, 257, 2000000, 0, 1, 0), "begin");
		ck(rec_writer_end(w), "end");
		ck(rec_writer_close(w), "close");
	}
	free(tname);
	free(cname);
	free(fname);
	free(uname);
	free(thname);
	return failed;
}
