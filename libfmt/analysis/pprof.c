/* SPDX-License-Identifier: MIT */
/*
 * pprof.c - the pprof profile writer (see rec/pprof.h): deduplicating tables
 * of strings, functions, mappings and locations, the samples as added, and
 * the protobuf encoding of profile.proto's Profile message, gzip-compressed
 * with zlib.
 *
 * Protobuf wire format, as much of it as profile.proto needs: a field is a
 * key varint (field number << 3 | wire type) then its value; wire type 0 is
 * a varint (uint64, int64 as two's complement, bool), wire type 2 a length
 * varint then bytes (strings, nested messages, packed repeated varints).
 * The varints are LEB128, the format's own: rec_varint_put() and rec_buf of
 * common_internal.h, the project's one encoder.  Fields equal to zero are
 * left out (proto3 defaults), except the string table's entries, which are
 * positional.
 */
#include "rec/pprof.h"
#include "common/common_internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAX_IDS (UINT32_MAX - 1u)
#define MAX_TYPES 64

/* A table of distinct keys of four u64, each with an index (its order of
 * first sight). */
typedef struct tuptab {
	uint64_t (*keys)[4];
	size_t count, cap;
	uint32_t *tab; /* index + 1; 0 = empty */
	size_t tab_cap; /* power of two */
} tuptab;

typedef struct sample {
	size_t loc_off, lab_off;
	uint32_t depth, nlab;
} sample;

typedef struct label {
	uint64_t key, str, unit; /* string ids */
	int64_t num;
} label;

struct rec_pprof {
	size_t ntypes;
	uint64_t types[MAX_TYPES][2]; /* string ids */
	uint64_t default_type;        /* string id, 0: none set */
	int64_t time_ns, duration_ns;
	uint64_t period_type[2];
	int64_t period;
	uint64_t *comments;
	size_t ncomments, comments_cap;

	/* strings: bytes in arena, [soff[i], soff[i] + slen[i]) */
	rec_buf arena;
	size_t *soff, *slen;
	uint64_t *shash;
	size_t scount, scap;
	uint32_t *stab;
	size_t stab_cap;

	tuptab functions; /* (name, file) */
	tuptab mappings;  /* (file, build id, base) */
	uint64_t *map_limit;
	bool *map_all_fn;
	size_t map_cap;
	tuptab locations; /* (mapping id, address, function id, line) */

	sample *samples;
	size_t nsamples, samples_cap;
	uint64_t *locids;
	size_t nlocids, locids_cap;
	int64_t *values;
	size_t nvalues, values_cap;
	label *labels;
	size_t nlabels, labels_cap;

	char errmsg[REC_ERRMSG_SIZE];
};

static bool grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	return rec_array_grow(arr, cap, need, elem, 16);
}

/* ---- tables ----------------------------------------------------------------- */

static uint64_t tup_hash(const uint64_t k[4])
{
	return rec_mix64(k[0] ^ rec_mix64(k[1] ^ rec_mix64(k[2] ^ rec_mix64(k[3]))));
}

static bool tup_rehash(tuptab *t)
{
	size_t nc = t->tab_cap ? t->tab_cap * 2 : 256;
	uint32_t *n = calloc(nc, sizeof *n);
	if (!n)
		return false;
	for (size_t i = 0; i < t->count; i++)
		*rec_index_free_slot(n, nc, tup_hash(t->keys[i])) = (uint32_t)(i + 1);
	free(t->tab);
	t->tab = n;
	t->tab_cap = nc;
	return true;
}

/* The index of key k, added when new (*added).  REC_ERR_NOMEM/LIMIT. */
static rec_status tup_find(tuptab *t, const uint64_t k[4], uint32_t *idx, bool *added)
{
	*added = false;
	*idx = 0;
	if ((t->count + 1) * 2 > t->tab_cap && !tup_rehash(t))
		return REC_ERR_NOMEM;
	size_t mask = t->tab_cap - 1;
	size_t j = tup_hash(k) & mask;
	for (; t->tab[j]; j = (j + 1) & mask) {
		uint32_t i = t->tab[j] - 1;
		if (memcmp(t->keys[i], k, sizeof t->keys[i]) == 0) {
			*idx = i;
			return REC_OK;
		}
	}
	if (t->count >= MAX_IDS)
		return REC_ERR_LIMIT;
	if (!grow((void **)&t->keys, &t->cap, t->count + 1, sizeof *t->keys))
		return REC_ERR_NOMEM;
	memcpy(t->keys[t->count], k, sizeof t->keys[0]);
	t->tab[j] = (uint32_t)(t->count + 1);
	*idx = (uint32_t)t->count++;
	*added = true;
	return REC_OK;
}

static void tup_free(tuptab *t)
{
	free(t->keys);
	free(t->tab);
}

static uint64_t str_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return rec_mix64(h ^ n);
}

static bool str_rehash(rec_pprof *p)
{
	size_t nc = p->stab_cap ? p->stab_cap * 2 : 1024;
	uint32_t *n = calloc(nc, sizeof *n);
	if (!n)
		return false;
	for (size_t i = 0; i < p->scount; i++)
		*rec_index_free_slot(n, nc, p->shash[i]) = (uint32_t)(i + 1);
	free(p->stab);
	p->stab = n;
	p->stab_cap = nc;
	return true;
}

/* The string table index of s (NULL: ""). */
static rec_status str_id(rec_pprof *p, const char *s, uint64_t *id)
{
	if (!s)
		s = "";
	size_t n = strlen(s);
	uint64_t h = str_hash(s, n);
	if ((p->scount + 1) * 2 > p->stab_cap && !str_rehash(p))
		return rec_errorf(p->errmsg, REC_ERR_NOMEM, "out of memory");
	size_t mask = p->stab_cap - 1;
	size_t j = h & mask;
	for (; p->stab[j]; j = (j + 1) & mask) {
		uint32_t i = p->stab[j] - 1;
		if (p->shash[i] == h && p->slen[i] == n &&
		    memcmp(p->arena.data + p->soff[i], s, n) == 0) {
			*id = i;
			return REC_OK;
		}
	}
	if (p->scount >= MAX_IDS)
		return rec_errorf(p->errmsg, REC_ERR_LIMIT,
				  "more than %u distinct strings", (unsigned)MAX_IDS);
	size_t c1 = p->scap, c2 = p->scap, c3 = p->scap;
	if (!grow((void **)&p->soff, &c1, p->scount + 1, sizeof *p->soff) ||
	    !grow((void **)&p->slen, &c2, p->scount + 1, sizeof *p->slen) ||
	    !grow((void **)&p->shash, &c3, p->scount + 1, sizeof *p->shash))
		return rec_errorf(p->errmsg, REC_ERR_NOMEM, "out of memory");
	/* The three arrays grow together; their capacity is the smallest. */
	p->scap = c1 < c2 ? (c1 < c3 ? c1 : c3) : (c2 < c3 ? c2 : c3);
	size_t off = p->arena.len;
	if (!rec_buf_append(&p->arena, s, n))
		return rec_errorf(p->errmsg, REC_ERR_NOMEM, "out of memory");
	p->soff[p->scount] = off;
	p->slen[p->scount] = n;
	p->shash[p->scount] = h;
	p->stab[j] = (uint32_t)(p->scount + 1);
	*id = p->scount++;
	return REC_OK;
}

/* ---- building ---------------------------------------------------------------- */

rec_status rec_pprof_open(rec_pprof **out, const rec_pprof_value_type *types, size_t ntypes)
{
	if (!out)
		return REC_ERR_INVALID_ARG;
	*out = NULL;
	if (!types || ntypes == 0 || ntypes > MAX_TYPES)
		return REC_ERR_INVALID_ARG;
	rec_pprof *p = calloc(1, sizeof *p);
	if (!p)
		return REC_ERR_NOMEM;
	uint64_t empty;
	rec_status st = str_id(p, "", &empty); /* string_table[0] must be "" */
	p->ntypes = ntypes;
	for (size_t i = 0; st == REC_OK && i < ntypes; i++) {
		st = str_id(p, types[i].type, &p->types[i][0]);
		if (st == REC_OK)
			st = str_id(p, types[i].unit, &p->types[i][1]);
	}
	if (st != REC_OK) {
		rec_pprof_close(p);
		return st;
	}
	*out = p;
	return REC_OK;
}

void rec_pprof_close(rec_pprof *p)
{
	if (!p)
		return;
	free(p->comments);
	rec_buf_free(&p->arena);
	free(p->soff);
	free(p->slen);
	free(p->shash);
	free(p->stab);
	tup_free(&p->functions);
	tup_free(&p->mappings);
	tup_free(&p->locations);
	free(p->map_limit);
	free(p->map_all_fn);
	free(p->samples);
	free(p->locids);
	free(p->values);
	free(p->labels);
	free(p);
}

const char *rec_pprof_errmsg(const rec_pprof *p)
{
	return (p && p->errmsg[0]) ? p->errmsg : "no error";
}

rec_status rec_pprof_set_default_type(rec_pprof *p, size_t index)
{
	if (!p || index >= p->ntypes)
		return REC_ERR_INVALID_ARG;
	p->default_type = p->types[index][0];
	return REC_OK;
}

void rec_pprof_set_time(rec_pprof *p, int64_t time_ns, int64_t duration_ns)
{
	if (!p)
		return;
	p->time_ns = time_ns;
	p->duration_ns = duration_ns;
}

rec_status rec_pprof_set_period(rec_pprof *p, const rec_pprof_value_type *type, int64_t period)
{
	if (!p || !type)
		return REC_ERR_INVALID_ARG;
	rec_status st = str_id(p, type->type, &p->period_type[0]);
	if (st == REC_OK)
		st = str_id(p, type->unit, &p->period_type[1]);
	if (st == REC_OK)
		p->period = period;
	return st;
}

rec_status rec_pprof_add_comment(rec_pprof *p, const char *text)
{
	if (!p || !text)
		return REC_ERR_INVALID_ARG;
	uint64_t id;
	rec_status st = str_id(p, text, &id);
	if (st != REC_OK)
		return st;
	if (!grow((void **)&p->comments, &p->comments_cap, p->ncomments + 1, sizeof *p->comments))
		return rec_errorf(p->errmsg, REC_ERR_NOMEM, "out of memory");
	p->comments[p->ncomments++] = id;
	return REC_OK;
}

static rec_status tup_status(rec_pprof *p, rec_status st, const char *what)
{
	if (st == REC_ERR_LIMIT)
		return rec_errorf(p->errmsg, st,
				  "more than %u distinct %s", (unsigned)MAX_IDS, what);
	if (st != REC_OK)
		return rec_errorf(p->errmsg, st, "out of memory");
	return REC_OK;
}

/* The Location id (index + 1) of l. */
static rec_status location_id(rec_pprof *p, const rec_pprof_location *l, uint64_t *out)
{
	bool has_fn = l->function && l->function[0];
	uint64_t fn_id = 0, map_id = 0;
	bool added;
	uint32_t idx = 0;
	rec_status st;
	if (has_fn) {
		uint64_t k[4] = { 0, 0, 0, 0 };
		if ((st = str_id(p, l->function, &k[0])) != REC_OK ||
		    (st = str_id(p, l->file, &k[1])) != REC_OK)
			return st;
		if ((st = tup_status(p, tup_find(&p->functions, k, &idx, &added), "functions")))
			return st;
		fn_id = (uint64_t)idx + 1;
	}
	if (l->module && l->module[0]) {
		uint64_t k[4] = { 0, 0, l->module_base, 0 };
		if ((st = str_id(p, l->module, &k[0])) != REC_OK ||
		    (st = str_id(p, l->build_id, &k[1])) != REC_OK)
			return st;
		/* room for a new mapping's limit first: nothing to undo after */
		size_t c1 = p->map_cap, c2 = p->map_cap, need = p->mappings.count + 1;
		if (!grow((void **)&p->map_limit, &c1, need, sizeof *p->map_limit) ||
		    !grow((void **)&p->map_all_fn, &c2, need, sizeof *p->map_all_fn))
			return rec_errorf(p->errmsg, REC_ERR_NOMEM, "out of memory");
		p->map_cap = c1 < c2 ? c1 : c2;
		if ((st = tup_status(p, tup_find(&p->mappings, k, &idx, &added), "mappings")))
			return st;
		if (added) {
			p->map_limit[idx] = l->module_base;
			p->map_all_fn[idx] = true;
		}
		map_id = (uint64_t)idx + 1;
	}
	uint64_t k[4] = { map_id, l->address, fn_id, (uint64_t)l->line };
	if ((st = tup_status(p, tup_find(&p->locations, k, &idx, &added), "locations")))
		return st;
	if (added && map_id) {
		size_t m = map_id - 1;
		if (l->address >= p->map_limit[m])
			p->map_limit[m] = l->address == UINT64_MAX ? UINT64_MAX : l->address + 1;
		if (!has_fn)
			p->map_all_fn[m] = false;
	}
	*out = (uint64_t)idx + 1;
	return REC_OK;
}

rec_status rec_pprof_add_sample(rec_pprof *p, const rec_pprof_location *locs, size_t depth,
				const int64_t *values, const rec_pprof_label *labels, size_t nlabels)
{
	if (!p || (depth && !locs) || !values || (nlabels && !labels) || depth > UINT32_MAX ||
	    nlabels > UINT32_MAX)
		return REC_ERR_INVALID_ARG;
	if (!grow((void **)&p->samples, &p->samples_cap, p->nsamples + 1, sizeof *p->samples) ||
	    !grow((void **)&p->locids, &p->locids_cap, p->nlocids + depth, sizeof *p->locids) ||
	    !grow((void **)&p->values, &p->values_cap, p->nvalues + p->ntypes, sizeof *p->values) ||
	    !grow((void **)&p->labels, &p->labels_cap, p->nlabels + nlabels, sizeof *p->labels))
		return rec_errorf(p->errmsg, REC_ERR_NOMEM, "out of memory");
	rec_status st;
	for (size_t i = 0; i < depth; i++)
		if ((st = location_id(p, &locs[i], &p->locids[p->nlocids + i])) != REC_OK)
			return st;
	for (size_t i = 0; i < nlabels; i++) {
		const rec_pprof_label *l = &labels[i];
		label *d = &p->labels[p->nlabels + i];
		d->num = l->str ? 0 : l->num;
		d->str = d->unit = 0;
		if ((st = str_id(p, l->key, &d->key)) != REC_OK ||
		    (l->str && (st = str_id(p, l->str, &d->str)) != REC_OK) ||
		    (!l->str && l->num_unit && l->num_unit[0] &&
		     (st = str_id(p, l->num_unit, &d->unit)) != REC_OK))
			return st;
	}
	sample *s = &p->samples[p->nsamples++];
	s->loc_off = p->nlocids;
	s->depth = (uint32_t)depth;
	s->lab_off = p->nlabels;
	s->nlab = (uint32_t)nlabels;
	memcpy(p->values + p->nvalues, values, p->ntypes * sizeof *values);
	p->nlocids += depth;
	p->nvalues += p->ntypes;
	p->nlabels += nlabels;
	return REC_OK;
}

/* ---- encoding ------------------------------------------------------------------ */

enum { WT_VARINT = 0, WT_LEN = 2 };

static bool pb_key(rec_buf *b, unsigned field, unsigned wt)
{
	return rec_buf_varint(b, ((uint64_t)field << 3) | wt);
}

/* A varint field; zero (the default) is left out. */
static bool pb_uint(rec_buf *b, unsigned field, uint64_t v)
{
	return !v || (pb_key(b, field, WT_VARINT) && rec_buf_varint(b, v));
}

static bool pb_bytes(rec_buf *b, unsigned field, const void *data, size_t n)
{
	return pb_key(b, field, WT_LEN) && rec_buf_lenbytes(b, data, n);
}

/* A packed repeated varint field (int64 values as two's complement). */
static bool pb_packed(rec_buf *b, unsigned field, const uint64_t *v, size_t n)
{
	if (!n)
		return true;
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += rec_varint_len(v[i]);
	if (!pb_key(b, field, WT_LEN) || !rec_buf_varint(b, len) || !rec_buf_reserve(b, len))
		return false;
	for (size_t i = 0; i < n; i++)
		b->len += rec_varint_put(b->data + b->len, v[i]);
	return true;
}

static bool pb_value_type(rec_buf *b, rec_buf *m, unsigned field, const uint64_t t[2])
{
	m->len = 0;
	return pb_uint(m, 1, t[0]) && pb_uint(m, 2, t[1]) && pb_bytes(b, field, m->data, m->len);
}

static bool encode_samples(rec_pprof *p, rec_buf *b, rec_buf *m, rec_buf *m2)
{
	for (size_t i = 0; i < p->nsamples; i++) {
		const sample *s = &p->samples[i];
		m->len = 0;
		if (!pb_packed(m, 1, p->locids + s->loc_off, s->depth))
			return false;
		uint64_t vals[MAX_TYPES];
		for (size_t t = 0; t < p->ntypes; t++)
			vals[t] = (uint64_t)p->values[i * p->ntypes + t];
		if (!pb_packed(m, 2, vals, p->ntypes))
			return false;
		for (uint32_t k = 0; k < s->nlab; k++) {
			const label *l = &p->labels[s->lab_off + k];
			m2->len = 0;
			if (!pb_uint(m2, 1, l->key) || !pb_uint(m2, 2, l->str) ||
			    !pb_uint(m2, 3, (uint64_t)l->num) || !pb_uint(m2, 4, l->unit) ||
			    !pb_bytes(m, 3, m2->data, m2->len))
				return false;
		}
		if (!pb_bytes(b, 2, m->data, m->len))
			return false;
	}
	return true;
}

/* Whether string id is a shared object's path (".so" in its base name). */
static bool shared_object(const rec_pprof *p, uint64_t id)
{
	const char *s = (const char *)p->arena.data + p->soff[id];
	size_t n = p->slen[id], base = n;
	while (base > 0 && s[base - 1] != '/')
		base--;
	for (size_t i = base; i + 3 <= n; i++)
		if (memcmp(s + i, ".so", 3) == 0)
			return true;
	return false;
}

/* The main binary's mapping (index), mapping[0] in profile.proto's words:
 * the first mapping that is not a shared object; 0 when all are. */
static size_t main_mapping(const rec_pprof *p)
{
	for (size_t i = 0; i < p->mappings.count; i++)
		if (!shared_object(p, p->mappings.keys[i][0]))
			return i;
	return 0;
}

/* The id written for mapping index i: the main one swapped with the first. */
static uint64_t mapping_out_id(size_t main, size_t i)
{
	return (i == main ? 0 : i == 0 ? main : i) + 1;
}

static bool encode_tables(rec_pprof *p, rec_buf *b, rec_buf *m, rec_buf *m2)
{
	size_t main = main_mapping(p);
	for (size_t j = 0; j < p->mappings.count; j++) {
		size_t i = j == 0 ? main : j == main ? 0 : j; /* in id order */
		const uint64_t *k = p->mappings.keys[i];
		m->len = 0;
		if (!pb_uint(m, 1, j + 1) || !pb_uint(m, 2, k[2]) || !pb_uint(m, 3, p->map_limit[i]) ||
		    !pb_uint(m, 5, k[0]) || !pb_uint(m, 6, k[1]) ||
		    !pb_uint(m, 7, p->map_all_fn[i]) || !pb_bytes(b, 3, m->data, m->len))
			return false;
	}
	for (size_t i = 0; i < p->locations.count; i++) {
		const uint64_t *k = p->locations.keys[i];
		m->len = 0;
		if (!pb_uint(m, 1, i + 1) ||
		    !pb_uint(m, 2, k[0] ? mapping_out_id(main, (size_t)k[0] - 1) : 0) ||
		    !pb_uint(m, 3, k[1]))
			return false;
		if (k[2]) {
			m2->len = 0;
			if (!pb_uint(m2, 1, k[2]) || !pb_uint(m2, 2, k[3]) ||
			    !pb_bytes(m, 4, m2->data, m2->len))
				return false;
		}
		if (!pb_bytes(b, 4, m->data, m->len))
			return false;
	}
	for (size_t i = 0; i < p->functions.count; i++) {
		const uint64_t *k = p->functions.keys[i];
		m->len = 0;
		if (!pb_uint(m, 1, i + 1) || !pb_uint(m, 2, k[0]) || !pb_uint(m, 3, k[0]) ||
		    !pb_uint(m, 4, k[1]) || !pb_bytes(b, 5, m->data, m->len))
			return false;
	}
	for (size_t i = 0; i < p->scount; i++)
		if (!pb_bytes(b, 6, p->arena.data ? p->arena.data + p->soff[i] : (const uint8_t *)"",
			      p->slen[i]))
			return false;
	return true;
}

static bool encode(rec_pprof *p, rec_buf *b)
{
	rec_buf m = { 0 }, m2 = { 0 };
	bool ok = true;
	for (size_t i = 0; ok && i < p->ntypes; i++)
		ok = pb_value_type(b, &m, 1, p->types[i]);
	ok = ok && encode_samples(p, b, &m, &m2) && encode_tables(p, b, &m, &m2);
	ok = ok && pb_uint(b, 9, (uint64_t)p->time_ns) && pb_uint(b, 10, (uint64_t)p->duration_ns);
	if (ok && (p->period_type[0] || p->period_type[1]))
		ok = pb_value_type(b, &m, 11, p->period_type);
	ok = ok && pb_uint(b, 12, (uint64_t)p->period);
	ok = ok && pb_packed(b, 13, p->comments, p->ncomments);
	ok = ok && pb_uint(b, 14, p->default_type);
	rec_buf_free(&m);
	rec_buf_free(&m2);
	return ok;
}

/* gzip (RFC 1952) of in[0..n) into a malloc'd buffer. */
static rec_status gzip_bytes(rec_pprof *p, const uint8_t *in, size_t n, uint8_t **out,
			     size_t *len)
{
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	/* windowBits 15 + 16: a gzip header and trailer instead of zlib's */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return rec_errorf(p->errmsg, REC_ERR_CODEC,
				  "zlib: %s", zs.msg ? zs.msg : "deflateInit2 failed");
	size_t cap = n / 2 + 1024, used = 0;
	uint8_t *buf = malloc(cap);
	const uint8_t *next = in;
	size_t left = n;
	int rc = Z_OK;
	while (buf && rc != Z_STREAM_END) {
		if (cap - used < 1024) {
			uint8_t *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		uInt in_chunk = left > UINT_MAX ? UINT_MAX : (uInt)left;
		uInt out_chunk = cap - used > UINT_MAX ? UINT_MAX : (uInt)(cap - used);
		zs.next_in = (Bytef *)(uintptr_t)next;
		zs.avail_in = in_chunk;
		zs.next_out = buf + used;
		zs.avail_out = out_chunk;
		rc = deflate(&zs, left > in_chunk ? Z_NO_FLUSH : Z_FINISH);
		if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
			free(buf);
			deflateEnd(&zs);
			return rec_errorf(p->errmsg, REC_ERR_CODEC,
					  "zlib: deflate failed (%d)", rc);
		}
		size_t consumed = in_chunk - zs.avail_in;
		next += consumed;
		left -= consumed;
		used += out_chunk - zs.avail_out;
	}
	deflateEnd(&zs);
	if (!buf)
		return rec_errorf(p->errmsg, REC_ERR_NOMEM, "out of memory");
	*out = buf;
	*len = used;
	return REC_OK;
}

rec_status rec_pprof_encode(rec_pprof *p, bool gzip, uint8_t **out, size_t *len)
{
	if (!p || !out || !len)
		return REC_ERR_INVALID_ARG;
	*out = NULL;
	*len = 0;
	rec_buf b = { 0 };
	if (!rec_buf_reserve(&b, 1) || !encode(p, &b)) {
		rec_buf_free(&b);
		return rec_errorf(p->errmsg, REC_ERR_NOMEM, "out of memory");
	}
	if (!gzip) {
		*out = b.data;
		*len = b.len;
		return REC_OK;
	}
	rec_status st = gzip_bytes(p, b.data, b.len, out, len);
	rec_buf_free(&b);
	return st;
}
