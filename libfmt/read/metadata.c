/* SPDX-License-Identifier: MIT */
/*
 * metadata.c - decoding a chunk's METADATA section: the event types, their
 * fields and decode kinds, and the type-id lookup (dense or sorted).
 */
#include <stdlib.h>
#include <string.h>

#include "read/read_internal.h"

/* ---- METADATA ------------------------------------------------------------------------ */
static bool d_str(rec_rd_dec *d, rec_arena *a, const char **out, size_t *outlen, const char *what)
{
	uint64_t n;
	if (!rec_rd_dec_u(d, &n, what))
		return false;
	if (n > REC_MAX_STRING) {
		d->what = what;
		d->st = REC_ERR_LIMIT;
		return false;
	}
	if (n > (uint64_t)(d->end - d->p)) {
		d->what = what;
		d->st = REC_ERR_CORRUPT;
		return false;
	}
	char *s = rec_arena_alloc(a, (size_t)n + 1);
	if (!s) {
		d->what = what;
		d->st = REC_ERR_NOMEM;
		return false;
	}
	memcpy(s, d->p, (size_t)n);
	s[n] = 0;
	d->p += n;
	*out = s;
	if (outlen)
		*outlen = (size_t)n;
	return true;
}

static uint8_t field_kind(uint32_t t)
{
	switch (t) {
	case REC_TYPE_BOOL: return REC_K_BOOL;
	case REC_TYPE_U8: return REC_K_U8;
	case REC_TYPE_U16: return REC_K_U16;
	case REC_TYPE_U32: return REC_K_U32;
	case REC_TYPE_U64: return REC_K_U64;
	case REC_TYPE_I8: return REC_K_I8;
	case REC_TYPE_I16: return REC_K_I16;
	case REC_TYPE_I32: return REC_K_I32;
	case REC_TYPE_I64: return REC_K_I64;
	case REC_TYPE_F32: return REC_K_F32;
	case REC_TYPE_F64: return REC_K_F64;
	case REC_TYPE_STRING: return REC_K_STRING;
	case REC_TYPE_TIMESTAMP: return REC_K_TIMESTAMP;
	case REC_TYPE_DURATION: return REC_K_DURATION;
	case REC_TYPE_THREAD: return REC_K_THREAD;
	case REC_TYPE_STACK: return REC_K_STACK;
	case REC_TYPE_BLOB: return REC_K_BLOB;
	case REC_TYPE_TEXT: return REC_K_TEXT;
	default: return (uint8_t)(REC_K_UNK0 + REC_WIRE_OF(t));
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

rec_status rec_rd_decode_metadata(rec_reader *r, rec_rchunk *c)
{
	const rec_rsec *s;
	rec_rd_dec d;
	rec_status st = rec_rd_dec_section(r, c, REC_SECTION_METADATA, &s, &d);
	if (st != REC_OK)
		return st;
	uint32_t n = s->items;
	/* Every type takes at least 7 bytes. */
	if ((uint64_t)n * 7 > s->raw)
		return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, s->hoff,
					    "section 1 (METADATA) declares %u types in %u bytes", n, s->raw);
	c->types = rec_arena_alloc(&c->arena, (size_t)n * sizeof(rec_type) + 1);
	c->kinds = rec_arena_alloc(&c->arena, (size_t)n * sizeof(uint8_t *) + 1);
	if (!c->types || !c->kinds)
		return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, s->hoff, "out of memory");
	uint64_t max_id = 0;
	uint32_t i;
	const char *bad = NULL;
	for (i = 0; i < n; i++) {
		rec_type *t = &c->types[i];
		uint64_t id, flags, fc;
		if (!rec_rd_dec_u(&d, &id, "type id") || !rec_rd_dec_u(&d, &flags, "type flags"))
			break;
		if (id == 0 || id > UINT32_MAX) {
			bad = "type id out of range";
			break;
		}
		t->id = (uint32_t)id;
		t->flags = (uint32_t)(flags & (REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD |
					       REC_EVENT_HAS_STACK));
		if (!d_str(&d, &c->arena, &t->name, NULL, "type name") ||
		    !d_str(&d, &c->arena, &t->label, NULL, "type label") ||
		    !d_str(&d, &c->arena, &t->description, NULL, "type description") ||
		    !d_str(&d, &c->arena, &t->category, NULL, "type category") ||
		    !rec_rd_dec_u(&d, &fc, "field count"))
			break;
		if (fc > REC_MAX_FIELDS) {
			d.st = REC_ERR_LIMIT;
			d.what = "field count (limit 1024)";
			break;
		}
		if (fc * 5 > (uint64_t)(d.end - d.p)) {
			bad = "field count larger than the section";
			break;
		}
		rec_field *f = rec_arena_alloc(&c->arena, (size_t)fc * sizeof(rec_field) + 1);
		uint8_t *k = rec_arena_alloc(&c->arena, (size_t)fc + 1);
		if (!f || !k) {
			d.st = REC_ERR_NOMEM;
			d.what = "fields";
			break;
		}
		uint64_t j;
		for (j = 0; j < fc; j++) {
			uint64_t ft, unit;
			if (!d_str(&d, &c->arena, &f[j].name, NULL, "field name") ||
			    !d_str(&d, &c->arena, &f[j].label, NULL, "field label") ||
			    !rec_rd_dec_u(&d, &ft, "field type") || !rec_rd_dec_u(&d, &unit, "field unit") ||
			    !d_str(&d, &c->arena, &f[j].description, NULL, "field description"))
				break;
			if (ft > UINT32_MAX || unit > UINT32_MAX) {
				bad = "field type or unit out of range";
				break;
			}
			if (REC_WIRE_OF(ft) > REC_WIRE_LENGTH) {
				return rec_rd_chunk_problem(
					r, c, REC_ERR_UNSUPPORTED, s->hoff,
					"section 1 (METADATA): field '%s' of type %u (%s) uses reserved wire class %u",
					f[j].name, t->id, t->name, (unsigned)REC_WIRE_OF(ft));
			}
			f[j].type = (uint32_t)ft;
			f[j].unit = (uint32_t)unit;
			k[j] = field_kind((uint32_t)ft);
		}
		if (j < fc)
			break;
		t->field_count = (uint32_t)fc;
		t->fields = f;
		c->kinds[i] = k;
		if (fc > c->max_fields)
			c->max_fields = (uint32_t)fc;
		if (id > max_id)
			max_id = id;
	}
	if (i < n) {
		if (!bad)
			bad = d.what;
		return rec_rd_chunk_problem(r, c, d.st != REC_OK ? d.st : REC_ERR_CORRUPT, s->hoff,
					    "section 1 (METADATA) is malformed: type %u: %s at byte %zu",
					    i, bad ? bad : "bad value", (size_t)(d.p - d.start));
	}
	c->info.types = c->types;
	c->info.type_count = n;
	/* Id lookup: a dense table for small ids, else a sorted index. */
	if (max_id < 65536 || max_id / 4 <= n) {
		c->dense_n = (uint32_t)max_id + 1;
		c->dense = rec_arena_alloc(&c->arena, (size_t)c->dense_n * sizeof(uint32_t));
		if (!c->dense)
			return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, s->hoff, "out of memory");
		memset(c->dense, 0, (size_t)c->dense_n * sizeof(uint32_t));
		for (i = 0; i < n; i++) {
			if (c->dense[c->types[i].id])
				return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, s->hoff,
							    "section 1 (METADATA): type id %u defined twice",
							    c->types[i].id);
			c->dense[c->types[i].id] = i + 1;
		}
	} else {
		uint64_t *keys = malloc((size_t)n * sizeof(uint64_t) + 1);
		c->sorted = rec_arena_alloc(&c->arena, (size_t)n * sizeof(uint32_t) + 1);
		if (!keys || !c->sorted) {
			free(keys);
			return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, s->hoff, "out of memory");
		}
		for (i = 0; i < n; i++)
			keys[i] = ((uint64_t)c->types[i].id << 32) | i;
		qsort(keys, n, sizeof(uint64_t), cmp_u64);
		for (i = 0; i < n; i++) {
			if (i && (keys[i] >> 32) == (keys[i - 1] >> 32)) {
				uint32_t dup = (uint32_t)(keys[i] >> 32);
				free(keys);
				return rec_rd_chunk_problem(r, c, REC_ERR_CORRUPT, s->hoff,
							    "section 1 (METADATA): type id %u defined twice",
							    dup);
			}
			c->sorted[i] = (uint32_t)keys[i];
		}
		free(keys);
	}
	return REC_OK;
}
