/* SPDX-License-Identifier: MIT */
/*
 * idmap.c - a map of nonzero 64-bit ids to values (cli.h, "a map of ids"):
 * open addressing, linear probing, doubled when half full.
 */
#include "cli.h"

#include <stdlib.h>

static size_t idmap_home(uint64_t id, size_t cap)
{
	return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

uint64_t *rec_cli_idmap_slot(rec_cli_idmap *m, uint64_t id, bool *fresh)
{
	if (m->n * 2 >= m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 256;
		uint64_t *nk = rec_cli_xmalloc(ncap * sizeof(uint64_t));
		uint64_t *nv = rec_cli_xmalloc(ncap * sizeof(uint64_t));
		memset(nk, 0, ncap * sizeof(uint64_t));
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->k[i])
				continue;
			size_t j = idmap_home(m->k[i], ncap);
			while (nk[j])
				j = (j + 1) & (ncap - 1);
			nk[j] = m->k[i];
			nv[j] = m->v[i];
		}
		free(m->k);
		free(m->v);
		m->k = nk;
		m->v = nv;
		m->cap = ncap;
	}
	for (size_t j = idmap_home(id, m->cap);; j = (j + 1) & (m->cap - 1)) {
		if (m->k[j] == id) {
			*fresh = false;
			return &m->v[j];
		}
		if (!m->k[j]) {
			m->k[j] = id;
			m->v[j] = 0;
			m->n++;
			*fresh = true;
			return &m->v[j];
		}
	}
}

bool rec_cli_idmap_add(rec_cli_idmap *m, uint64_t id)
{
	bool fresh;
	rec_cli_idmap_slot(m, id, &fresh);
	return fresh;
}

void rec_cli_idmap_clear(rec_cli_idmap *m)
{
	if (m->k)
		memset(m->k, 0, m->cap * sizeof(uint64_t));
	m->n = 0;
}

void rec_cli_idmap_free(rec_cli_idmap *m)
{
	free(m->k);
	free(m->v);
	memset(m, 0, sizeof *m);
}
