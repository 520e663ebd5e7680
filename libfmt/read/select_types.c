/* SPDX-License-Identifier: MIT */
/*
 * select_types.c - type selection (rec_reader_select_types() and its by-name and
 * by-id forms): which event types' records the reader returns.  The
 * selection is resolved once per chunk against its metadata into c->want
 * (one byte per type index); event.c and order.c pass over the records of
 * the other types by their Size, after their framing and timestamps.
 * And which type is given as digests (rec_reader_digest_type(), order.c).
 */
#include <stdlib.h>
#include <string.h>

#include "read/read_internal.h"

void rec_rd_select_free(rec_reader *r)
{
	for (size_t i = 0; i < r->sel_nnames; i++)
		free(r->sel_names[i]);
	free(r->sel_names);
	free(r->sel_ids);
	r->sel_names = NULL;
	r->sel_nnames = 0;
	r->sel_ids = NULL;
	r->sel_nids = 0;
	r->want = NULL;
	r->want_ctx = NULL;
}

void rec_rd_digest_free(rec_reader *r)
{
	free(r->dig_name);
	r->dig_name = NULL;
}

REC_API rec_status rec_reader_select_types(rec_reader *r, rec_type_filter want, void *ctx)
{
	if (!r)
		return REC_ERR_INVALID_ARG;
	if (r->events_started)
		return rec_rd_problem(r, REC_ERR_STATE, r->pos, -1,
				      "type selection after events were read");
	rec_rd_select_free(r);
	r->want = want;
	r->want_ctx = ctx;
	return REC_OK;
}

static int want_named(void *ctx, const rec_type *t)
{
	const rec_reader *r = ctx;
	if (!t->name)
		return 0;
	for (size_t i = 0; i < r->sel_nnames; i++)
		if (strcmp(r->sel_names[i], t->name) == 0)
			return 1;
	return 0;
}

static int want_id(void *ctx, const rec_type *t)
{
	const rec_reader *r = ctx;
	for (size_t i = 0; i < r->sel_nids; i++)
		if (r->sel_ids[i] == t->id)
			return 1;
	return 0;
}

REC_API rec_status rec_reader_select_type_names(rec_reader *r, const char *const *names,
						size_t count)
{
	if (!r || (count && !names))
		return REC_ERR_INVALID_ARG;
	for (size_t i = 0; i < count; i++)
		if (!names[i])
			return REC_ERR_INVALID_ARG;
	rec_status st = rec_reader_select_types(r, NULL, NULL);
	if (st != REC_OK)
		return st;
	char **copy = calloc(count ? count : 1, sizeof *copy);
	if (!copy)
		return REC_ERR_NOMEM;
	for (size_t i = 0; i < count; i++) {
		copy[i] = strdup(names[i]);
		if (!copy[i]) {
			while (i-- > 0)
				free(copy[i]);
			free(copy);
			return REC_ERR_NOMEM;
		}
	}
	r->sel_names = copy;
	r->sel_nnames = count;
	r->want = want_named;
	r->want_ctx = r;
	return REC_OK;
}

REC_API rec_status rec_reader_select_type_ids(rec_reader *r, const uint32_t *ids, size_t count)
{
	if (!r || (count && !ids))
		return REC_ERR_INVALID_ARG;
	rec_status st = rec_reader_select_types(r, NULL, NULL);
	if (st != REC_OK)
		return st;
	uint32_t *copy = malloc((count ? count : 1) * sizeof *copy);
	if (!copy)
		return REC_ERR_NOMEM;
	if (count)
		memcpy(copy, ids, count * sizeof *copy);
	r->sel_ids = copy;
	r->sel_nids = count;
	r->want = want_id;
	r->want_ctx = r;
	return REC_OK;
}

REC_API rec_status rec_reader_digest_type(rec_reader *r, const char *name, rec_digest_fn fn,
					  void *ctx)
{
	if (!r || (name && !fn))
		return REC_ERR_INVALID_ARG;
	if (!(r->flags & REC_READ_ORDERED) || r->events_started)
		return rec_rd_problem(r, REC_ERR_STATE, r->pos, -1,
				      r->events_started ? "digests asked for after events were read"
							: "digests need REC_READ_ORDERED");
	char *copy = NULL;
	if (name && !(copy = strdup(name)))
		return REC_ERR_NOMEM;
	free(r->dig_name);
	r->dig_name = copy;
	r->dig_fn = fn;
	r->dig_ctx = ctx;
	return REC_OK;
}

/* c->dig_ti and its fields: the type named r->dig_name whose first two
 * fields (as many as it has) can be digested. */
static void select_digest(const rec_reader *r, rec_rchunk *c)
{
	c->dig_ti = UINT32_MAX;
	if (!r->dig_name)
		return;
	for (uint32_t i = 0; i < c->info.type_count; i++) {
		const rec_type *t = &c->types[i];
		if (!t->name || strcmp(t->name, r->dig_name) != 0)
			continue;
		unsigned nf = t->field_count < 2 ? t->field_count : 2;
		uint64_t max[2] = { 0, 0 };
		for (unsigned f = 0; f < nf; f++)
			max[f] = rec_rd_kind_umax(c->kinds[i][f]);
		if ((nf > 0 && !max[0]) || (nf > 1 && (!max[1] || max[1] > UINT32_MAX)))
			return; /* returned as events */
		c->dig_ti = i;
		c->dig = (rec_evs_digfields){ nf, { max[0], max[1] } };
		return;
	}
}

rec_status rec_rd_select_chunk(rec_reader *r, rec_rchunk *c)
{
	r->events_started = true;
	c->want = NULL;
	select_digest(r, c);
	if (!r->want)
		return REC_OK;
	uint32_t n = c->info.type_count;
	uint8_t *w = rec_arena_alloc(&c->arena, n ? n : 1);
	if (!w)
		return rec_rd_chunk_problem(r, c, REC_ERR_NOMEM, c->info.offset, "out of memory");
	for (uint32_t i = 0; i < n; i++)
		w[i] = r->want(r->want_ctx, &c->types[i]) != 0;
	c->want = w;
	return REC_OK;
}
