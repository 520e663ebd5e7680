/* SPDX-License-Identifier: MIT */
/*
 * flame.c - fuzz rec-flame's code path (rec_flame_run, tools/rec-flame.c)
 * on an in-memory file: collapsed stacks of rec.CPUSample (every line
 * "FRAMES WEIGHT" with a decimal weight); HTML of rec.LockWait per thread,
 * reversed, with a hostile title and a time window (the page must hold as
 * many "</script" as its template, and its data must be valid JSON); the
 * differential graph (input against itself), collapsed ("FRAMES W0 W1")
 * and HTML, weighed by a field, with an --include expression and
 * --minwidth.
 */
#include <string.h>

#include "json_check.h"
#include "tool_fuzz.h"

/* Occurrences of what in [s, s + n) (memmem: one intercepted call per hit,
 * not a memcmp per byte, which libFuzzer's tracing makes slow). */
static size_t count(const char *s, size_t n, const char *what)
{
	size_t k = 0, w = strlen(what);
	const char *end = s + n, *p = s;
	while ((p = memmem(p, (size_t)(end - p), what, w)) != NULL) {
		k++;
		p += w;
	}
	return k;
}

/* Every line: frames, then one or (diff) two decimal weights. */
static void check_collapsed(const char *s, size_t n, int weights, const char *what)
{
	size_t i = 0;
	while (i < n) {
		const char *nl = memchr(s + i, '\n', n - i);
		REC_FUZZ_CHECK(nl, "%s: last line without a newline", what);
		size_t e = (size_t)(nl - s);
		for (int w = 0; w < weights; w++) {
			size_t d = e;
			while (d > i && s[d - 1] >= '0' && s[d - 1] <= '9')
				d--;
			REC_FUZZ_CHECK(d < e && d > i && s[d - 1] == ' ', "%s: line %.*s has no weight",
				       what, (int)(e - i), s + i);
			e = d - 1;
		}
		REC_FUZZ_CHECK(e > i, "%s: a line without frames", what);
		i = (size_t)(nl - s) + 1;
	}
}

/* One graph (tools/common/flame_html.h): its data is the only
 * "</script" besides the script's own end, valid JSON, and the page ends
 * with the script. */
static void check_html(const char *s, size_t n, const char *what)
{
	if (!n)
		return; /* nothing written: an error before the output */
	REC_FUZZ_CHECK(count(s, n, "</script") == 2, "%s: '</script' in the data", what);
	static const char head[] = "<script type=\"application/json\" class=\"rec-flame-data\">";
	const char *d = memmem(s, n, head, sizeof head - 1);
	REC_FUZZ_CHECK(d, "%s: no data section", what);
	d += sizeof head - 1;
	const char *e = memmem(d, (size_t)(s + n - d), "</script", 8);
	REC_FUZZ_CHECK(e, "%s: the data does not end", what);
	static const char tail[] = "</script>\n</body>\n</html>\n";
	REC_FUZZ_CHECK(n >= sizeof tail - 1 && memcmp(s + n - (sizeof tail - 1), tail, sizeof tail - 1) == 0,
		       "%s: the page does not end with its script", what);
	REC_FUZZ_CHECK(rec_fuzz_json_ok(d, (size_t)(e - d), false), "%s: the data is not JSON", what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rec_fuzz_tool t;
	rec_fuzz_tool_init(&t, "rec-flame", data, size);

	rec_flame_opts o = { .event = "rec.CPUSample", .min_pct = -1 };
	int rc = rec_flame_run(&o, &t.in, NULL, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
	rec_fuzz_tool_end(&t, rc, "flame collapsed");
	check_collapsed(t.buf, t.len, 1, "flame collapsed");

	rec_flame_opts h = { .event = "rec.LockWait", .html = true, .title = "<t>&\"</script>\x01",
			     .min_pct = -1, .flags = REC_STACKAGG_THREADS | REC_STACKAGG_REVERSE,
			     .window = { .from_kind = 1, .to_kind = 1, .from = 1000, .to = 3600000000000 },
			     .keep_rec = true };
	rc = rec_flame_run(&h, &t.in, NULL, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
	rec_fuzz_tool_end(&t, rc, "flame html");
	check_html(t.buf, t.len, "flame html");

	/* pprof: a gzip member whenever something was written */
	rec_flame_opts pp = { .event = "rec.LockWait", .pprof = true, .min_pct = -1,
			      .title = "t" };
	rc = rec_flame_run(&pp, &t.in, NULL, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
	rec_fuzz_tool_end(&t, rc, "flame pprof");
	REC_FUZZ_CHECK(!t.len || (t.len >= 18 && (uint8_t)t.buf[0] == 0x1f &&
				  (uint8_t)t.buf[1] == 0x8b),
		       "flame pprof: not gzip (%zu bytes)", t.len);

	static const char *const include[] = { "[a-z_]+|0x" };
	rec_flame_opts d = { .event = "rec.Alloc", .weight = "size", .min_pct = 0.5, .min_set = true,
			     .include = include, .ninclude = 1 };
	rc = rec_flame_run(&d, &t.in, &t.in, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
	rec_fuzz_tool_end(&t, rc, "flame --diff collapsed");
	if (rc != REC_EXIT_USAGE)
		check_collapsed(t.buf, t.len, 2, "flame --diff collapsed");

	d.event = "rec.CPUSample";
	d.weight = NULL;
	d.html = true;
	rc = rec_flame_run(&d, &t.in, &t.in, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
	rec_fuzz_tool_end(&t, rc, "flame --diff html");
	check_html(t.buf, t.len, "flame --diff html");
	rec_fuzz_tool_free(&t);
	return 0;
}
