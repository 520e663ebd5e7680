/* SPDX-License-Identifier: MIT */
/*
 * test_pprof.c - the pprof writer (rec/pprof.h): profiles built by hand are
 * encoded and read back with a small protobuf decoder written here (the
 * varints through the project's one decoder, rec_varint_get), field by field
 * as profile.proto numbers them: sample types, samples (packed location ids
 * and values, labels), mappings (limit = one past the highest address, build
 * id, has_functions), locations and their lines, functions, the string table
 * (entry 0 "", every string once), time, duration, period, comments, the
 * default sample type.  The gzip form inflates (zlib) to the same bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/common_internal.h"
#include "rec/pprof.h"

/* ---- a tiny protobuf decoder ------------------------------------------------ */

typedef struct field {
	uint32_t num, wt;
	uint64_t v;          /* wire type 0 */
	const uint8_t *p;    /* wire type 2 */
	size_t n;
} field;

/* The next field of [*pp, end); false at the end.  Fails the test on
 * anything but wire types 0 and 2. */
static bool next_field(const uint8_t **pp, const uint8_t *end, field *f)
{
	if (*pp >= end)
		return false;
	uint64_t key;
	assert_true(rec_varint_get(pp, end, &key));
	f->num = (uint32_t)(key >> 3);
	f->wt = (uint32_t)(key & 7);
	assert_true(f->num > 0);
	if (f->wt == 0) {
		assert_true(rec_varint_get(pp, end, &f->v));
	} else {
		assert_int_equal(f->wt, 2);
		uint64_t n;
		assert_true(rec_varint_get(pp, end, &n));
		assert_true(n <= (uint64_t)(end - *pp));
		f->p = *pp;
		f->n = (size_t)n;
		*pp += n;
	}
	return true;
}

/* The varints of a packed field. */
static size_t unpack(const field *f, uint64_t *out, size_t cap)
{
	assert_int_equal(f->wt, 2);
	const uint8_t *p = f->p, *end = f->p + f->n;
	size_t n = 0;
	while (p < end) {
		assert_true(n < cap);
		assert_true(rec_varint_get(&p, end, &out[n++]));
	}
	return n;
}

#define MAXN 64
typedef struct msg { /* the varint fields of a small message, by number */
	uint64_t v[16];
	field sub[16][8];    /* wire type 2 fields, by number */
	size_t nsub[16];
} msg;

static void decode_msg(const uint8_t *p, size_t n, msg *m)
{
	memset(m, 0, sizeof *m);
	const uint8_t *end = p + n;
	field f;
	while (next_field(&p, end, &f)) {
		assert_true(f.num < 16);
		if (f.wt == 0)
			m->v[f.num] = f.v;
		else {
			assert_true(m->nsub[f.num] < 8);
			m->sub[f.num][m->nsub[f.num]++] = f;
		}
	}
}

/* A decoded Profile. */
typedef struct profile {
	char *strings[256];
	size_t nstrings;
	field types[8], samples[MAXN], mappings[8], locations[MAXN], functions[MAXN], period_type;
	size_t ntypes, nsamples, nmappings, nlocations, nfunctions;
	uint64_t comments[8];
	size_t ncomments;
	int64_t time_ns, duration_ns, period, default_type;
} profile;

static void decode_profile(const uint8_t *p, size_t n, profile *pr)
{
	memset(pr, 0, sizeof *pr);
	const uint8_t *end = p + n;
	field f;
	while (next_field(&p, end, &f)) {
		switch (f.num) {
		case 1: assert_true(pr->ntypes < 8); pr->types[pr->ntypes++] = f; break;
		case 2: assert_true(pr->nsamples < MAXN); pr->samples[pr->nsamples++] = f; break;
		case 3: assert_true(pr->nmappings < 8); pr->mappings[pr->nmappings++] = f; break;
		case 4: assert_true(pr->nlocations < MAXN); pr->locations[pr->nlocations++] = f; break;
		case 5: assert_true(pr->nfunctions < MAXN); pr->functions[pr->nfunctions++] = f; break;
		case 6: {
			assert_int_equal(f.wt, 2);
			assert_true(pr->nstrings < 256);
			char *s = malloc(f.n + 1);
			assert_non_null(s);
			memcpy(s, f.p, f.n);
			s[f.n] = 0;
			pr->strings[pr->nstrings++] = s;
			break;
		}
		case 9: pr->time_ns = (int64_t)f.v; break;
		case 10: pr->duration_ns = (int64_t)f.v; break;
		case 11: pr->period_type = f; break;
		case 12: pr->period = (int64_t)f.v; break;
		case 13: pr->ncomments = unpack(&f, pr->comments, 8); break;
		case 14: pr->default_type = (int64_t)f.v; break;
		default: fail_msg("unexpected Profile field %u", f.num);
		}
	}
}

static void free_profile(profile *pr)
{
	for (size_t i = 0; i < pr->nstrings; i++)
		free(pr->strings[i]);
}

static const char *str(const profile *pr, uint64_t i)
{
	assert_true(i < pr->nstrings);
	return pr->strings[i];
}

/* The function name of location id (1-based), "" when it has no line. */
static const char *loc_function(const profile *pr, uint64_t id, msg *scratch)
{
	assert_true(id >= 1 && id <= pr->nlocations);
	decode_msg(pr->locations[id - 1].p, pr->locations[id - 1].n, scratch);
	assert_int_equal(scratch->v[1], id);
	if (!scratch->nsub[4])
		return "";
	msg line, fn;
	decode_msg(scratch->sub[4][0].p, scratch->sub[4][0].n, &line);
	uint64_t fid = line.v[1];
	assert_true(fid >= 1 && fid <= pr->nfunctions);
	decode_msg(pr->functions[fid - 1].p, pr->functions[fid - 1].n, &fn);
	assert_int_equal(fn.v[1], fid);
	return str(pr, fn.v[2]);
}

/* ---- tests ------------------------------------------------------------------- */

static const rec_pprof_value_type two_types[] = { { "contentions", "count" },
						   { "delay", "nanoseconds" } };

static void build_small(rec_pprof **out)
{
	rec_pprof *p = NULL;
	assert_int_equal(rec_pprof_open(&p, two_types, 2), REC_OK);
	/* leaf first */
	rec_pprof_location s1[] = {
		{ "parse_header", "http.c", 42, "/usr/bin/app", "abc123", 0x400000, 0x4020cd },
		{ "main", "main.c", 7, "/usr/bin/app", "abc123", 0x400000, 0x400ec0 },
	};
	rec_pprof_location s2[] = {
		{ NULL, NULL, 0, "/lib/libc.so.6", "", 0x7f0000000000, 0x7f0000010aa0 },
		{ "main", "main.c", 7, "/usr/bin/app", "abc123", 0x400000, 0x400ec0 },
	};
	rec_pprof_location s3[] = { { "[truncated]", NULL, 0, NULL, NULL, 0, 0 } };
	rec_pprof_label l1[] = { { "thread_name", "main", 0, NULL }, { "thread_id", NULL, 4240, NULL } };
	rec_pprof_label l2[] = { { "thread_name", "worker-1", 0, NULL },
				 { "bytes", NULL, 100, "bytes" } };
	int64_t v1[] = { 2, 1526000 }, v2[] = { 1, 375000 }, v3[] = { 3, 0 };
	assert_int_equal(rec_pprof_add_sample(p, s1, 2, v1, l1, 2), REC_OK);
	assert_int_equal(rec_pprof_add_sample(p, s2, 2, v2, l2, 2), REC_OK);
	assert_int_equal(rec_pprof_add_sample(p, s3, 1, v3, NULL, 0), REC_OK);
	rec_pprof_set_time(p, 1796206443123323789ll, 50900000);
	rec_pprof_value_type pt = { "delay", "nanoseconds" };
	assert_int_equal(rec_pprof_set_period(p, &pt, 1000), REC_OK);
	assert_int_equal(rec_pprof_add_comment(p, "a comment"), REC_OK);
	assert_int_equal(rec_pprof_set_default_type(p, 1), REC_OK);
	*out = p;
}

static void test_encode_decode(void **state)
{
	(void)state;
	rec_pprof *p;
	build_small(&p);
	uint8_t *raw = NULL;
	size_t len = 0;
	assert_int_equal(rec_pprof_encode(p, false, &raw, &len), REC_OK);
	profile pr;
	decode_profile(raw, len, &pr);
	msg m, m2;

	/* the string table: "" first, every string once */
	assert_true(pr.nstrings > 1);
	assert_string_equal(pr.strings[0], "");
	for (size_t i = 0; i < pr.nstrings; i++)
		for (size_t j = i + 1; j < pr.nstrings; j++)
			assert_string_not_equal(pr.strings[i], pr.strings[j]);

	/* sample types, default, time, period, comment */
	assert_int_equal(pr.ntypes, 2);
	decode_msg(pr.types[0].p, pr.types[0].n, &m);
	assert_string_equal(str(&pr, m.v[1]), "contentions");
	assert_string_equal(str(&pr, m.v[2]), "count");
	decode_msg(pr.types[1].p, pr.types[1].n, &m);
	assert_string_equal(str(&pr, m.v[1]), "delay");
	assert_string_equal(str(&pr, m.v[2]), "nanoseconds");
	assert_string_equal(str(&pr, (uint64_t)pr.default_type), "delay");
	assert_int_equal(pr.time_ns, 1796206443123323789ll);
	assert_int_equal(pr.duration_ns, 50900000);
	decode_msg(pr.period_type.p, pr.period_type.n, &m);
	assert_string_equal(str(&pr, m.v[1]), "delay");
	assert_int_equal(pr.period, 1000);
	assert_int_equal(pr.ncomments, 1);
	assert_string_equal(str(&pr, pr.comments[0]), "a comment");

	/* samples: locations leaf first, values, labels */
	assert_int_equal(pr.nsamples, 3);
	uint64_t ids[8], vals[8];
	decode_msg(pr.samples[0].p, pr.samples[0].n, &m);
	assert_int_equal(unpack(&m.sub[1][0], ids, 8), 2);
	assert_int_equal(unpack(&m.sub[2][0], vals, 8), 2);
	assert_int_equal(vals[0], 2);
	assert_int_equal(vals[1], 1526000);
	assert_string_equal(loc_function(&pr, ids[0], &m2), "parse_header");
	assert_string_equal(loc_function(&pr, ids[1], &m2), "main");
	uint64_t main_loc = ids[1];
	decode_msg(pr.samples[0].p, pr.samples[0].n, &m);
	assert_int_equal(m.nsub[3], 2);
	decode_msg(m.sub[3][0].p, m.sub[3][0].n, &m2);
	assert_string_equal(str(&pr, m2.v[1]), "thread_name");
	assert_string_equal(str(&pr, m2.v[2]), "main");
	decode_msg(pr.samples[0].p, pr.samples[0].n, &m);
	decode_msg(m.sub[3][1].p, m.sub[3][1].n, &m2);
	assert_string_equal(str(&pr, m2.v[1]), "thread_id");
	assert_int_equal(m2.v[2], 0);
	assert_int_equal(m2.v[3], 4240);

	decode_msg(pr.samples[1].p, pr.samples[1].n, &m);
	assert_int_equal(unpack(&m.sub[1][0], ids, 8), 2);
	assert_int_equal(ids[1], main_loc); /* the same location, once */
	assert_string_equal(loc_function(&pr, ids[0], &m2), ""); /* no function: no line */
	decode_msg(pr.samples[1].p, pr.samples[1].n, &m);
	decode_msg(m.sub[3][1].p, m.sub[3][1].n, &m2);
	assert_string_equal(str(&pr, m2.v[1]), "bytes");
	assert_int_equal(m2.v[3], 100);
	assert_string_equal(str(&pr, m2.v[4]), "bytes");

	decode_msg(pr.samples[2].p, pr.samples[2].n, &m);
	assert_int_equal(unpack(&m.sub[2][0], vals, 8), 2);
	assert_int_equal(vals[0], 3);
	assert_int_equal(vals[1], 0); /* zeros are in a packed field too */

	/* four distinct locations, three functions (main once) */
	assert_int_equal(pr.nlocations, 4);
	assert_int_equal(pr.nfunctions, 3);
	decode_msg(pr.locations[0].p, pr.locations[0].n, &m);
	assert_int_equal(m.v[3], 0x4020cd);
	decode_msg(m.sub[4][0].p, m.sub[4][0].n, &m2);
	assert_int_equal(m2.v[2], 42); /* the line */
	decode_msg(pr.functions[0].p, pr.functions[0].n, &m);
	assert_string_equal(str(&pr, m.v[2]), "parse_header");
	assert_string_equal(str(&pr, m.v[3]), "parse_header"); /* system_name */
	assert_string_equal(str(&pr, m.v[4]), "http.c");

	/* mappings: the app (functions everywhere) and libc (a location without) */
	assert_int_equal(pr.nmappings, 2);
	decode_msg(pr.mappings[0].p, pr.mappings[0].n, &m);
	assert_int_equal(m.v[1], 1);
	assert_int_equal(m.v[2], 0x400000);
	assert_int_equal(m.v[3], 0x4020ce); /* one past the highest address */
	assert_string_equal(str(&pr, m.v[5]), "/usr/bin/app");
	assert_string_equal(str(&pr, m.v[6]), "abc123");
	assert_int_equal(m.v[7], 1);
	decode_msg(pr.mappings[1].p, pr.mappings[1].n, &m);
	assert_string_equal(str(&pr, m.v[5]), "/lib/libc.so.6");
	assert_int_equal(m.v[6], 0); /* no build id: "" */
	assert_int_equal(m.v[7], 0);
	/* the truncated frame: a location without a mapping */
	decode_msg(pr.locations[3].p, pr.locations[3].n, &m);
	assert_int_equal(m.v[2], 0);
	assert_string_equal(loc_function(&pr, 4, &m2), "[truncated]");

	free_profile(&pr);

	/* gzip: a gzip member that inflates to the same message */
	uint8_t *gz = NULL;
	size_t gzlen = 0;
	assert_int_equal(rec_pprof_encode(p, true, &gz, &gzlen), REC_OK);
	assert_true(gzlen > 18);
	assert_int_equal(gz[0], 0x1f);
	assert_int_equal(gz[1], 0x8b);
	uint8_t *back = malloc(len + 16);
	assert_non_null(back);
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = gz;
	zs.avail_in = (uInt)gzlen;
	zs.next_out = back;
	zs.avail_out = (uInt)(len + 16);
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	assert_int_equal(zs.total_out, len);
	assert_memory_equal(back, raw, len);
	inflateEnd(&zs);
	free(back);
	free(gz);
	free(raw);
	rec_pprof_close(p);
}

/* An empty profile: the sample types and the string table only. */
static void test_empty(void **state)
{
	(void)state;
	rec_pprof *p = NULL;
	assert_int_equal(rec_pprof_open(&p, two_types, 2), REC_OK);
	uint8_t *raw = NULL;
	size_t len = 0;
	assert_int_equal(rec_pprof_encode(p, false, &raw, &len), REC_OK);
	profile pr;
	decode_profile(raw, len, &pr);
	assert_int_equal(pr.ntypes, 2);
	assert_int_equal(pr.nsamples + pr.nlocations + pr.nfunctions + pr.nmappings, 0);
	assert_int_equal(pr.nstrings, 5); /* "", contentions, count, delay, nanoseconds */
	assert_int_equal(pr.default_type, 0); /* unset: the last type */
	free_profile(&pr);
	free(raw);
	rec_pprof_close(p);
}

/* Many distinct stacks: the tables grow; ids stay those of first sight. */
static void test_many(void **state)
{
	(void)state;
	const rec_pprof_value_type one[] = { { "samples", "count" } };
	rec_pprof *p = NULL;
	assert_int_equal(rec_pprof_open(&p, one, 1), REC_OK);
	enum { N = 5000 };
	char name[32];
	int64_t total = 0;
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof name, "fn_%d", i);
		rec_pprof_location l[2] = { { name, NULL, 0, "/bin/x", NULL, 0x1000, 0x1000u + (uint64_t)i },
					    { "root", NULL, 0, "/bin/x", NULL, 0x1000, 0x1000 } };
		int64_t v = i + 1;
		total += v;
		assert_int_equal(rec_pprof_add_sample(p, l, 2, &v, NULL, 0), REC_OK);
	}
	uint8_t *raw = NULL;
	size_t len = 0;
	assert_int_equal(rec_pprof_encode(p, false, &raw, &len), REC_OK);
	/* count top-level fields without keeping them */
	const uint8_t *q = raw, *end = raw + len;
	field f;
	size_t nsamples = 0, nlocs = 0, nfns = 0, nmaps = 0, nstr = 0;
	int64_t sum = 0;
	while (next_field(&q, end, &f)) {
		if (f.num == 2) {
			msg m;
			uint64_t v;
			decode_msg(f.p, f.n, &m);
			assert_int_equal(unpack(&m.sub[2][0], &v, 1), 1);
			sum += (int64_t)v;
			nsamples++;
		}
		nlocs += f.num == 4;
		nfns += f.num == 5;
		nmaps += f.num == 3;
		nstr += f.num == 6;
	}
	assert_int_equal(nsamples, N);
	assert_int_equal(sum, total);
	assert_int_equal(nlocs, N + 1); /* fn_0 at root's address: a location of its own */
	assert_int_equal(nfns, N + 1);
	assert_int_equal(nmaps, 1);
	assert_int_equal(nstr, 1 + 2 + N + 1 + 1); /* "", samples, count, fn_*, /bin/x, root */
	free(raw);
	rec_pprof_close(p);
}

/* mapping[0] is the main binary: the first mapping not a shared object,
 * even when a library was seen first; locations follow the new ids. */
static void test_main_mapping_first(void **state)
{
	(void)state;
	const rec_pprof_value_type one[] = { { "samples", "count" } };
	rec_pprof *p = NULL;
	assert_int_equal(rec_pprof_open(&p, one, 1), REC_OK);
	rec_pprof_location l[] = {
		{ "__poll", NULL, 0, "/lib/x86_64-linux-gnu/libc.so.6", "aa", 0x7f0000000000, 0x7f0000001000 },
		{ "ld_thing", NULL, 0, "/lib64/ld-linux-x86-64.so.2", "bb", 0x7e0000000000, 0x7e0000000100 },
		{ "main", NULL, 0, "/usr/bin/app.so.d/app", "cc", 0x400000, 0x401000 },
	};
	int64_t v = 1;
	assert_int_equal(rec_pprof_add_sample(p, l, 3, &v, NULL, 0), REC_OK);
	uint8_t *raw = NULL;
	size_t len = 0;
	assert_int_equal(rec_pprof_encode(p, false, &raw, &len), REC_OK);
	profile pr;
	decode_profile(raw, len, &pr);
	msg m;
	assert_int_equal(pr.nmappings, 3);
	static const char *const want[] = { "/usr/bin/app.so.d/app", "/lib64/ld-linux-x86-64.so.2",
					    "/lib/x86_64-linux-gnu/libc.so.6" };
	for (size_t i = 0; i < 3; i++) {
		decode_msg(pr.mappings[i].p, pr.mappings[i].n, &m);
		assert_int_equal(m.v[1], i + 1);
		assert_string_equal(str(&pr, m.v[5]), want[i]);
	}
	/* locations in order of first sight, each with its mapping's new id */
	static const uint64_t want_map[] = { 3, 2, 1 };
	for (size_t i = 0; i < 3; i++) {
		decode_msg(pr.locations[i].p, pr.locations[i].n, &m);
		assert_int_equal(m.v[2], want_map[i]);
	}
	free_profile(&pr);
	free(raw);
	rec_pprof_close(p);
}

static void test_bad_args(void **state)
{
	(void)state;
	rec_pprof *p = NULL;
	assert_int_equal(rec_pprof_open(&p, two_types, 0), REC_ERR_INVALID_ARG);
	assert_null(p);
	assert_int_equal(rec_pprof_open(NULL, two_types, 2), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_pprof_open(&p, two_types, 2), REC_OK);
	assert_int_equal(rec_pprof_set_default_type(p, 2), REC_ERR_INVALID_ARG);
	assert_int_equal(rec_pprof_add_sample(p, NULL, 1, (const int64_t[]){ 1, 2 }, NULL, 0),
			 REC_ERR_INVALID_ARG);
	assert_int_equal(rec_pprof_add_sample(p, NULL, 0, NULL, NULL, 0), REC_ERR_INVALID_ARG);
	assert_string_equal(rec_pprof_errmsg(NULL), "no error");
	rec_pprof_close(p);
	rec_pprof_close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_decode),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_main_mapping_first),
		cmocka_unit_test(test_bad_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
