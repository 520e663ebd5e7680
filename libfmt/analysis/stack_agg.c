/* SPDX-License-Identifier: MIT */
/*
 * stack_agg.c - stack aggregation (see rec/stack_agg.h): a tree of interned frame
 * names with a self weight per node and two columns, fed from reader events.
 *
 * Cost per event: one lookup in a per-run cache keyed by (stack id, thread
 * id) that gives the tree node of the whole path (pool ids keep their
 * meaning for a whole run: spec/FORMAT.md "Pools").  Only on a miss (once
 * per distinct stack of a run) are frame names built, interned, filtered
 * and the path walked.  Memory: the tree (one node per distinct path
 * prefix), the names, and the cache (distinct stacks of one run).
 */
#include "rec/stack_agg.h"
#include "common/common_internal.h"

#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_NODE UINT32_MAX   /* cache: the stack is filtered out */
#define MAX_NODES (UINT32_MAX - 1u)

typedef struct agg_node {
	uint32_t parent;
	uint32_t name;
	uint32_t slot;     /* weights in slots[slot - 1]; 0 = never weighed */
	uint64_t self[2];  /* copied from the slot by rewind */
	uint64_t total[2]; /* computed by rewind */
} agg_node;

typedef struct cache_entry {
	uint64_t stack_id;
	uint64_t thread_id;
	uint32_t gen;  /* entry valid when == a->gen */
	uint32_t slot; /* weight slot of the leaf node, or NO_NODE */
} cache_entry;

/* What a name was built from (REC_STACKAGG_FRAME_INFO). */
typedef struct agg_module {
	const char *path, *build_id;
	uint64_t base;
} agg_module;

typedef struct name_info {
	uint32_t kind;   /* REC_STACKAGG_NAME_* */
	uint32_t module; /* index into modules + 1; 0: none */
	const char *text; /* FRAME: the function; THREAD: the thread's name */
	uint64_t value;  /* FRAME: module offset; THREAD: os tid */
	const char *file; /* FRAME: source file ("" if unknown) */
	uint32_t line;    /* FRAME: source line (0 if unknown) */
} name_info;

/* Per-name filter state. */
#define NAME_CHECKED 0x1u
#define NAME_INCLUDED 0x2u
#define NAME_EXCLUDED 0x4u

struct rec_stackagg {
	uint32_t flags;
	int64_t from_ns, to_ns;
	regex_t *include;
	size_t include_count;
	regex_t *exclude;
	size_t exclude_count;

	/* names */
	rec_arena strings;
	const char **names;
	uint64_t *name_hash;
	uint8_t *name_flags;
	size_t name_count, name_cap;
	uint32_t *name_tab; /* name index + 1; 0 = empty */
	size_t name_tab_cap; /* power of two */
	name_info *info;     /* FRAME_INFO: of names [0, info_count) */
	size_t info_count, info_cap;
	agg_module *modules;
	size_t module_count, module_cap;

	/* tree: node 0 is the virtual root */
	agg_node *nodes;
	size_t node_count, node_cap;
	/* Self weights of weighed nodes, dense: what an event touches stays in a
	 * small array even when the tree is large. */
	uint64_t (*slots)[2];
	size_t slot_count, slot_cap;
	uint32_t *child_tab; /* node index; 0 = empty */
	size_t child_tab_cap;

	/* per-run cache */
	cache_entry *cache;
	size_t cache_cap, cache_count;
	uint32_t gen;
	uint64_t run_id;
	int64_t run_start;
	uint32_t run_pid;
	bool have_run;

	/* current input */
	unsigned column;
	bool have_origin;
	int64_t origin_ns;

	/* scratch */
	char *sbuf;
	size_t sbuf_cap;
	uint32_t *path;
	size_t path_cap;

	/* iteration */
	bool dirty;
	uint32_t *coff;   /* children of node i: cidx[coff[i] .. coff[i+1]) */
	uint32_t *cidx;
	uint32_t *it_node;
	uint32_t *it_pos;
	const char **it_path;
	size_t it_cap;
	size_t it_sp;
	bool it_started;

	rec_stackagg_stats stats;
	char errmsg[REC_ERRMSG_SIZE];
};

static bool grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	return rec_array_grow(arr, cap, need, elem, 16);
}

static uint64_t hash_bytes(const char *s, size_t n)
{
	return rec_mix64(rec_fnv1a(0xcbf29ce484222325ull, s, n) ^ n);
}

static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* ---- open / close -------------------------------------------------------- */

static rec_status compile_all(rec_stackagg *a, const char *const *src, size_t n, regex_t **out,
			      size_t *count, const char *what)
{
	if (!n)
		return REC_OK;
	if (!src)
		return rec_errorf(a->errmsg, REC_ERR_INVALID_ARG, "%s: NULL list", what);
	*out = calloc(n, sizeof **out);
	if (!*out)
		return rec_errorf(a->errmsg, REC_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (!src[i])
			return rec_errorf(a->errmsg, REC_ERR_INVALID_ARG, "%s: NULL pattern", what);
		int rc = regcomp(&(*out)[i], src[i], REG_EXTENDED | REG_NOSUB);
		if (rc != 0) {
			char msg[160];
			regerror(rc, &(*out)[i], msg, sizeof msg);
			return rec_errorf(a->errmsg, REC_ERR_INVALID_ARG,
					  "%s '%s': %s", what, src[i], msg);
		}
		(*count)++;
	}
	return REC_OK;
}

rec_status rec_stackagg_open(rec_stackagg **out, const rec_stackagg_options *opts)
{
	if (!out)
		return REC_ERR_INVALID_ARG;
	*out = NULL;
	rec_stackagg_options def = REC_STACKAGG_OPTIONS_INIT;
	if (!opts)
		opts = &def;
	rec_stackagg *a = calloc(1, sizeof *a);
	if (!a)
		return REC_ERR_NOMEM;
	*out = a;
	if (opts->struct_size < sizeof *opts)
		return rec_errorf(a->errmsg, REC_ERR_INVALID_ARG,
				  "options: struct_size %u is too small",
			    (unsigned)opts->struct_size);
	for (int i = 0; i < 4; i++)
		if (opts->reserved[i])
			return rec_errorf(a->errmsg, REC_ERR_INVALID_ARG,
					  "options: reserved fields must be zero");
	if (opts->flags & ~(uint32_t)0xFFu)
		return rec_errorf(a->errmsg, REC_ERR_INVALID_ARG, "options: unknown flags 0x%x",
			    (unsigned)opts->flags);
	a->flags = opts->flags;
	a->from_ns = opts->from_ns;
	a->to_ns = opts->to_ns;
	rec_status st = compile_all(a, opts->include, opts->include_count, &a->include,
				    &a->include_count, "include pattern");
	if (st == REC_OK)
		st = compile_all(a, opts->exclude, opts->exclude_count, &a->exclude,
				 &a->exclude_count, "exclude pattern");
	if (st != REC_OK)
		return st;
	a->nodes = malloc(1024 * sizeof *a->nodes);
	a->child_tab = calloc(2048, sizeof *a->child_tab);
	a->name_tab = calloc(1024, sizeof *a->name_tab);
	a->cache = calloc(256, sizeof *a->cache);
	if (!a->nodes || !a->child_tab || !a->name_tab || !a->cache)
		return rec_errorf(a->errmsg, REC_ERR_NOMEM, "out of memory");
	a->node_cap = 1024;
	a->child_tab_cap = 2048;
	a->name_tab_cap = 1024;
	a->cache_cap = 256;
	a->gen = 1;
	memset(&a->nodes[0], 0, sizeof a->nodes[0]);
	a->node_count = 1;
	a->dirty = true;
	return REC_OK;
}

void rec_stackagg_close(rec_stackagg *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->include_count; i++)
		regfree(&a->include[i]);
	for (size_t i = 0; i < a->exclude_count; i++)
		regfree(&a->exclude[i]);
	free(a->include);
	free(a->exclude);
	rec_arena_free(&a->strings);
	free(a->names);
	free(a->name_hash);
	free(a->name_flags);
	free(a->name_tab);
	free(a->info);
	free(a->modules);
	free(a->nodes);
	free(a->slots);
	free(a->child_tab);
	free(a->cache);
	free(a->sbuf);
	free(a->path);
	free(a->coff);
	free(a->cidx);
	free(a->it_node);
	free(a->it_pos);
	free(a->it_path);
	free(a);
}

const char *rec_stackagg_errmsg(const rec_stackagg *a)
{
	return (a && a->errmsg[0]) ? a->errmsg : "no error";
}

void rec_stackagg_get_stats(const rec_stackagg *a, rec_stackagg_stats *st)
{
	if (!st)
		return;
	memset(st, 0, sizeof *st);
	if (!a)
		return;
	*st = a->stats;
	st->nodes = a->node_count - 1;
	st->names = a->name_count;
}

rec_status rec_stackagg_begin_input(rec_stackagg *a, unsigned column)
{
	if (!a || column > 1)
		return REC_ERR_INVALID_ARG;
	a->column = column;
	a->have_origin = false;
	a->have_run = false;
	return REC_OK;
}

/* ---- names ---------------------------------------------------------------- */

static const char *str_save(rec_stackagg *a, const char *p, size_t n)
{
	return rec_arena_strndup(&a->strings, p, n);
}

static bool name_tab_rehash(rec_stackagg *a)
{
	size_t nc = a->name_tab_cap * 2;
	uint32_t *t = calloc(nc, sizeof *t);
	if (!t)
		return false;
	for (size_t i = 0; i < a->name_count; i++)
		*rec_index_free_slot(t, nc, a->name_hash[i]) = (uint32_t)(i + 1);
	free(a->name_tab);
	a->name_tab = t;
	a->name_tab_cap = nc;
	return true;
}

/* Intern s[0..n) (already sanitized).  Returns false on NOMEM. */
static bool intern(rec_stackagg *a, const char *s, size_t n, uint32_t *id)
{
	uint64_t h = hash_bytes(s, n);
	size_t mask = a->name_tab_cap - 1;
	size_t j = h & mask;
	while (a->name_tab[j]) {
		uint32_t k = a->name_tab[j] - 1;
		if (a->name_hash[k] == h && strncmp(a->names[k], s, n) == 0 && a->names[k][n] == 0) {
			*id = k;
			return true;
		}
		j = (j + 1) & mask;
	}
	if (a->name_count >= UINT32_MAX - 1 || a->name_count + 2 >= a->name_tab_cap)
		return false; /* (a full table: its growth failed before) */
	size_t need = a->name_count + 1;
	size_t c1 = a->name_cap, c2 = a->name_cap, c3 = a->name_cap;
	if (!grow((void **)&a->names, &c1, need, sizeof *a->names) ||
	    !grow((void **)&a->name_hash, &c2, need, sizeof *a->name_hash) ||
	    !grow((void **)&a->name_flags, &c3, need, sizeof *a->name_flags))
		return false;
	/* The three arrays grow together; their capacity is the smallest. */
	a->name_cap = c1 < c2 ? (c1 < c3 ? c1 : c3) : (c2 < c3 ? c2 : c3);
	const char *copy = str_save(a, s, n);
	if (!copy)
		return false;
	size_t k = a->name_count++;
	a->names[k] = copy;
	a->name_hash[k] = h;
	a->name_flags[k] = 0;
	a->name_tab[j] = (uint32_t)(k + 1);
	*id = (uint32_t)k;
	if (a->name_count * 2 > a->name_tab_cap)
		(void)name_tab_rehash(a); /* a fuller table still works */
	return true;
}

static bool sbuf_reserve(rec_stackagg *a, size_t n)
{
	return grow((void **)&a->sbuf, &a->sbuf_cap, n, 1);
}

/* Append s[0..n) to the scratch buffer at *off, replacing ';' and control
 * characters.  False on NOMEM. */
static bool sbuf_put(rec_stackagg *a, size_t *off, const char *s, size_t n)
{
	if (!sbuf_reserve(a, *off + n + 1))
		return false;
	char *d = a->sbuf + *off;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		d[i] = c == ';' ? ':' : (c < 0x20 || c == 0x7F) ? ' ' : (char)c;
	}
	*off += n;
	return true;
}

static bool intern_sanitized(rec_stackagg *a, const char *s, size_t n, uint32_t *id)
{
	size_t off = 0;
	if (!sbuf_put(a, &off, s, n))
		return false;
	return intern(a, a->sbuf, off, id);
}

static bool frame_name_only(rec_stackagg *a, const rec_frame *fr, uint32_t *id);
static bool thread_name_only(rec_stackagg *a, const rec_thread *t, uint32_t *id);

/* The entry of a name just interned, when FRAME_INFO keeps them (names made
 * without an entry before it get kind OTHER); NULL when it has one already
 * or the flag is off. */
static name_info *new_info(rec_stackagg *a, uint32_t id, bool *nomem)
{
	*nomem = false;
	if (!(a->flags & REC_STACKAGG_FRAME_INFO) || id < a->info_count)
		return NULL;
	if (!grow((void **)&a->info, &a->info_cap, (size_t)id + 1, sizeof *a->info)) {
		*nomem = true;
		return NULL;
	}
	memset(a->info + a->info_count, 0, ((size_t)id + 1 - a->info_count) * sizeof *a->info);
	a->info_count = (size_t)id + 1;
	return &a->info[id];
}

static const char *save_cstr(rec_stackagg *a, const char *s)
{
	return str_save(a, s ? s : "", s ? strlen(s) : 0);
}

/* The module entry (index + 1) of m, added on first sight; 0 on NOMEM. */
static uint32_t module_ref(rec_stackagg *a, const rec_module *m)
{
	const char *path = m->path ? m->path : "", *bid = m->build_id ? m->build_id : "";
	for (size_t i = 0; i < a->module_count; i++) {
		const agg_module *x = &a->modules[i];
		if (x->base == m->base && strcmp(x->path, path) == 0 && strcmp(x->build_id, bid) == 0)
			return (uint32_t)(i + 1);
	}
	if (a->module_count >= UINT32_MAX - 1 ||
	    !grow((void **)&a->modules, &a->module_cap, a->module_count + 1, sizeof *a->modules))
		return 0;
	agg_module *x = &a->modules[a->module_count];
	x->path = save_cstr(a, path);
	x->build_id = save_cstr(a, bid);
	x->base = m->base;
	if (!x->path || !x->build_id)
		return 0;
	return (uint32_t)++a->module_count;
}

static bool note_frame(rec_stackagg *a, uint32_t id, const rec_frame *fr)
{
	bool nomem;
	name_info *ni = new_info(a, id, &nomem);
	if (!ni || !fr)
		return !nomem;
	ni->kind = REC_STACKAGG_NAME_FRAME;
	ni->text = save_cstr(a, fr->function);
	ni->file = save_cstr(a, fr->file ? fr->file : "");
	ni->line = fr->line;
	if (!ni->text || !ni->file)
		return false;
	bool fn = fr->function && fr->function[0];
	ni->value = fn && fr->function_offset <= fr->module_offset
			    ? fr->module_offset - fr->function_offset : fr->module_offset;
	if (fr->module && !(ni->module = module_ref(a, fr->module)))
		return false;
	return true;
}

static bool note_thread(rec_stackagg *a, uint32_t id, const rec_thread *t)
{
	bool nomem;
	name_info *ni = new_info(a, id, &nomem);
	if (!ni)
		return !nomem;
	ni->kind = t ? REC_STACKAGG_NAME_THREAD : REC_STACKAGG_NAME_NO_THREAD;
	ni->text = save_cstr(a, t ? t->name : "");
	ni->value = t ? t->os_tid : 0;
	return ni->text != NULL;
}

static bool frame_name(rec_stackagg *a, const rec_frame *fr, uint32_t *id)
{
	return frame_name_only(a, fr, id) && note_frame(a, *id, fr);
}

static bool thread_name(rec_stackagg *a, const rec_thread *t, uint32_t *id)
{
	return thread_name_only(a, t, id) && note_thread(a, *id, t);
}

static bool frame_name_only(rec_stackagg *a, const rec_frame *fr, uint32_t *id)
{
	char buf[4096];
	size_t n = rec_frame_format(fr, (a->flags & REC_STACKAGG_LINES) ? REC_FRAME_LINE
									  : REC_FRAME_FUNCTION,
				    buf, sizeof buf);
	return intern_sanitized(a, buf, n, id);
}

static bool thread_name_only(rec_stackagg *a, const rec_thread *t, uint32_t *id)
{
	if (!t)
		return intern(a, "[no thread]", 11, id);
	char tid[40];
	int tn = snprintf(tid, sizeof tid, "tid=%llu]", (unsigned long long)t->os_tid);
	size_t off = 0;
	if (!sbuf_put(a, &off, "[", 1))
		return false;
	if (t->name && t->name[0]) {
		if (!sbuf_put(a, &off, t->name, strlen(t->name)) || !sbuf_put(a, &off, " ", 1))
			return false;
	}
	if (!sbuf_put(a, &off, tid, (size_t)tn))
		return false;
	return intern(a, a->sbuf, off, id);
}

static uint8_t name_filter(rec_stackagg *a, uint32_t id)
{
	uint8_t f = a->name_flags[id];
	if (f & NAME_CHECKED)
		return f;
	f = NAME_CHECKED;
	for (size_t i = 0; i < a->include_count; i++)
		if (regexec(&a->include[i], a->names[id], 0, NULL, 0) == 0) {
			f |= NAME_INCLUDED;
			break;
		}
	for (size_t i = 0; i < a->exclude_count; i++)
		if (regexec(&a->exclude[i], a->names[id], 0, NULL, 0) == 0) {
			f |= NAME_EXCLUDED;
			break;
		}
	a->name_flags[id] = f;
	return f;
}

/* ---- tree ------------------------------------------------------------------ */

static inline uint64_t child_hash(uint32_t parent, uint32_t name)
{
	return rec_mix64(((uint64_t)parent << 32) ^ name ^ 0x9e3779b97f4a7c15ull);
}

static bool child_tab_rehash(rec_stackagg *a)
{
	size_t nc = a->child_tab_cap * 2;
	uint32_t *t = calloc(nc, sizeof *t);
	if (!t)
		return false;
	for (size_t i = 1; i < a->node_count; i++) {
		uint64_t h = child_hash(a->nodes[i].parent, a->nodes[i].name);
		*rec_index_free_slot(t, nc, h) = (uint32_t)i;
	}
	free(a->child_tab);
	a->child_tab = t;
	a->child_tab_cap = nc;
	return true;
}

static rec_status child(rec_stackagg *a, uint32_t parent, uint32_t name, uint32_t *out)
{
	size_t mask = a->child_tab_cap - 1;
	size_t j = child_hash(parent, name) & mask;
	while (a->child_tab[j]) {
		uint32_t k = a->child_tab[j];
		if (a->nodes[k].parent == parent && a->nodes[k].name == name) {
			*out = k;
			return REC_OK;
		}
		j = (j + 1) & mask;
	}
	if (a->node_count >= MAX_NODES)
		return rec_errorf(a->errmsg, REC_ERR_LIMIT,
				  "more than %u tree nodes", (unsigned)MAX_NODES);
	if (a->node_count + 2 >= a->child_tab_cap ||
	    !grow((void **)&a->nodes, &a->node_cap, a->node_count + 1, sizeof *a->nodes))
		return rec_errorf(a->errmsg, REC_ERR_NOMEM, "out of memory");
	uint32_t k = (uint32_t)a->node_count++;
	agg_node *n = &a->nodes[k];
	n->parent = parent;
	n->name = name;
	n->slot = 0;
	n->self[0] = n->self[1] = 0;
	n->total[0] = n->total[1] = 0;
	a->child_tab[j] = k;
	a->dirty = true;
	if (a->node_count * 2 > a->child_tab_cap)
		(void)child_tab_rehash(a); /* still correct when it fails: just fuller */
	*out = k;
	return REC_OK;
}

static rec_status insert_path(rec_stackagg *a, const uint32_t *names, size_t n, uint32_t *leaf)
{
	uint32_t cur = 0;
	for (size_t i = 0; i < n; i++) {
		rec_status st = child(a, cur, names[i], &cur);
		if (st != REC_OK)
			return st;
	}
	*leaf = cur;
	return REC_OK;
}

/* The weight slot of a node, made on first use. */
static rec_status slot_of(rec_stackagg *a, uint32_t node, uint32_t *slot)
{
	*slot = UINT32_MAX; /* also on failure: callers read it only after REC_OK */
	agg_node *n = &a->nodes[node];
	if (!n->slot) {
		if (a->slot_count >= MAX_NODES ||
		    !grow((void **)&a->slots, &a->slot_cap, a->slot_count + 1, sizeof *a->slots))
			return rec_errorf(a->errmsg, REC_ERR_NOMEM, "out of memory");
		a->slots[a->slot_count][0] = a->slots[a->slot_count][1] = 0;
		n->slot = (uint32_t)++a->slot_count;
	}
	*slot = n->slot - 1;
	return REC_OK;
}

/* Add add[c] to column c of the slot, for each c in mask (bit c). */
static void add_weights(rec_stackagg *a, uint32_t slot, const uint64_t add[2], unsigned mask)
{
	uint64_t *w = a->slots[slot];
	bool was_zero = !w[0] && !w[1];
	for (unsigned c = 0; c < 2; c++) {
		if (!(mask & (1u << c)))
			continue;
		w[c] = sat_add(w[c], add[c]);
		a->stats.weight[c] = sat_add(a->stats.weight[c], add[c]);
	}
	if (was_zero && (w[0] || w[1]))
		a->stats.stacks++;
	a->dirty = true;
}

static void add_weight(rec_stackagg *a, uint32_t slot, uint64_t weight)
{
	uint64_t add[2] = { weight, weight };
	add_weights(a, slot, add, 1u << a->column);
}

static bool path_reserve(rec_stackagg *a, size_t n)
{
	return grow((void **)&a->path, &a->path_cap, n, sizeof *a->path);
}

/* Build the path of names of ev's stack (thread root, frames in the chosen
 * order, [truncated]) and find its node's weight slot; NO_NODE when
 * filtered out. */
static rec_status resolve(rec_stackagg *a, const rec_event *ev, uint32_t *leaf)
{
	const rec_stack *s = ev->stack;
	size_t depth = s->depth;
	/* leaf frames left out: an old recording's librec frames */
	size_t skip = (a->flags & REC_STACKAGG_TRIM_RECORDER) ? rec_stack_site(s) : 0;
	if (!path_reserve(a, depth + 2))
		return rec_errorf(a->errmsg, REC_ERR_NOMEM, "out of memory");
	size_t n = 0;
	if (a->flags & REC_STACKAGG_THREADS) {
		if (!thread_name(a, ev->thread, &a->path[n]))
			return rec_errorf(a->errmsg, REC_ERR_NOMEM, "out of memory");
		n++;
	}
	size_t first = n;
	bool trunc = (s->flags & REC_STACK_TRUNCATED) != 0;
	bool reverse = (a->flags & REC_STACKAGG_REVERSE) != 0;
	if (trunc && !reverse) {
		if (!intern(a, "[truncated]", 11, &a->path[n]))
			return rec_errorf(a->errmsg, REC_ERR_NOMEM, "out of memory");
		n++;
	}
	for (size_t i = 0; i < depth - skip; i++) {
		size_t k = reverse ? skip + i : depth - 1 - i;
		const rec_frame *fr = s->frames ? s->frames[k] : NULL;
		if (!frame_name(a, fr, &a->path[n]))
			return rec_errorf(a->errmsg, REC_ERR_NOMEM, "out of memory");
		n++;
	}
	if (trunc && reverse) {
		if (!intern(a, "[truncated]", 11, &a->path[n]))
			return rec_errorf(a->errmsg, REC_ERR_NOMEM, "out of memory");
		n++;
	}
	if (a->include_count || a->exclude_count) {
		bool inc = a->include_count == 0, exc = false;
		for (size_t i = first; i < n; i++) {
			uint8_t f = name_filter(a, a->path[i]);
			inc |= (f & NAME_INCLUDED) != 0;
			exc |= (f & NAME_EXCLUDED) != 0;
		}
		if (!inc || exc) {
			*leaf = NO_NODE;
			return REC_OK;
		}
	}
	uint32_t node;
	rec_status st = insert_path(a, a->path, n, &node);
	if (st != REC_OK)
		return st;
	return slot_of(a, node, leaf);
}

static bool cache_grow(rec_stackagg *a)
{
	size_t nc = a->cache_cap * 2;
	cache_entry *t = calloc(nc, sizeof *t);
	if (!t)
		return false;
	for (size_t i = 0; i < a->cache_cap; i++) {
		cache_entry *e = &a->cache[i];
		if (e->gen != a->gen)
			continue;
		size_t j = rec_mix64(e->stack_id * 31 + e->thread_id) & (nc - 1);
		while (t[j].gen == a->gen)
			j = (j + 1) & (nc - 1);
		t[j] = *e;
	}
	free(a->cache);
	a->cache = t;
	a->cache_cap = nc;
	return true;
}

static void cache_reset(rec_stackagg *a)
{
	a->cache_count = 0;
	if (++a->gen == 0) { /* wrapped: clear for real */
		memset(a->cache, 0, a->cache_cap * sizeof *a->cache);
		a->gen = 1;
	}
}

/* The weight slot of ev's stack, or NO_NODE when the event is not
 * aggregated (counted in the statistics). */
static rec_status event_slot(rec_stackagg *a, const rec_event *ev, uint32_t *out)
{
	*out = NO_NODE;
	a->stats.events++;
	const rec_chunk_info *c = ev->chunk;
	if (!a->have_origin) {
		a->origin_ns = c ? c->start_wall_ns : ev->wall_ns;
		a->have_origin = true;
	}
	if (a->flags & (REC_STACKAGG_FROM | REC_STACKAGG_TO)) {
		int64_t t = ev->wall_ns;
		if (a->flags & REC_STACKAGG_RELATIVE)
			t = (int64_t)((uint64_t)t - (uint64_t)a->origin_ns);
		if (((a->flags & REC_STACKAGG_FROM) && t < a->from_ns) ||
		    ((a->flags & REC_STACKAGG_TO) && t >= a->to_ns)) {
			a->stats.outside_window++;
			return REC_OK;
		}
	}
	if (!ev->stack || ev->stack->depth == 0) {
		a->stats.no_stack++;
		return REC_OK;
	}
	/* Stack and thread ids keep their meaning within one run (and are
	 * looked at afresh for events without chunk information). */
	if (!c || !a->have_run || c->run_id != a->run_id || c->pid != a->run_pid ||
	    c->process_start_ns != a->run_start) {
		cache_reset(a);
		a->have_run = c != NULL;
		if (c) {
			a->run_id = c->run_id;
			a->run_pid = c->pid;
			a->run_start = c->process_start_ns;
		}
	}
	uint64_t sid = ev->stack->id;
	uint64_t tid = (a->flags & REC_STACKAGG_THREADS) ? (ev->thread ? ev->thread->id : 0) : 0;
	size_t mask = a->cache_cap - 1;
	size_t j = rec_mix64(sid * 31 + tid) & mask;
	cache_entry *e;
	uint32_t slot = NO_NODE;
	for (;;) {
		e = &a->cache[j];
		if (e->gen != a->gen) {
			rec_status st = resolve(a, ev, &slot);
			if (st != REC_OK)
				return st;
			e->stack_id = sid;
			e->thread_id = tid;
			e->slot = slot;
			e->gen = a->gen;
			if (++a->cache_count * 2 > a->cache_cap)
				(void)cache_grow(a); /* a fuller cache still works */
			break;
		}
		if (e->stack_id == sid && e->thread_id == tid) {
			slot = e->slot;
			break;
		}
		j = (j + 1) & mask;
	}
	if (a->cache_count + 1 >= a->cache_cap) /* growth failed: never fill it up */
		cache_reset(a);
	if (slot == NO_NODE) {
		a->stats.filtered++;
		return REC_OK;
	}
	a->stats.aggregated++;
	*out = slot;
	return REC_OK;
}

rec_status rec_stackagg_add_event(rec_stackagg *a, const rec_event *ev, uint64_t weight)
{
	if (!a || !ev)
		return REC_ERR_INVALID_ARG;
	uint32_t slot;
	rec_status st = event_slot(a, ev, &slot);
	if (st == REC_OK && slot != NO_NODE)
		add_weight(a, slot, weight);
	return st;
}

rec_status rec_stackagg_add_event_pair(rec_stackagg *a, const rec_event *ev, uint64_t w0,
				       uint64_t w1)
{
	if (!a || !ev)
		return REC_ERR_INVALID_ARG;
	uint32_t slot;
	rec_status st = event_slot(a, ev, &slot);
	if (st == REC_OK && slot != NO_NODE) {
		uint64_t add[2] = { w0, w1 };
		add_weights(a, slot, add, 3u);
	}
	return st;
}

rec_status rec_stackagg_name_info(const rec_stackagg *a, const char *name,
				   rec_stackagg_frame_info *out)
{
	if (!a || !name || !out)
		return REC_ERR_INVALID_ARG;
	memset(out, 0, sizeof *out);
	out->function = out->module = out->build_id = out->thread_name = out->file = "";
	size_t n = strlen(name);
	uint64_t h = hash_bytes(name, n);
	size_t mask = a->name_tab_cap - 1;
	for (size_t j = h & mask; a->name_tab[j]; j = (j + 1) & mask) {
		uint32_t k = a->name_tab[j] - 1;
		if (a->name_hash[k] != h || strcmp(a->names[k], name) != 0)
			continue;
		if (k >= a->info_count)
			return REC_OK;
		const name_info *ni = &a->info[k];
		out->kind = ni->kind;
		if (ni->kind == REC_STACKAGG_NAME_FRAME) {
			out->function = ni->text;
			out->module_offset = ni->value;
			out->file = ni->file ? ni->file : "";
			out->line = ni->line;
			if (ni->module) {
				const agg_module *m = &a->modules[ni->module - 1];
				out->module = m->path;
				out->build_id = m->build_id;
				out->module_base = m->base;
			}
		} else if (ni->kind == REC_STACKAGG_NAME_THREAD) {
			out->thread_name = ni->text;
			out->os_tid = ni->value;
		}
		return REC_OK;
	}
	return REC_ERR_NOT_FOUND;
}

rec_status rec_stackagg_add_frames(rec_stackagg *a, const char *const *frames, size_t depth,
				   uint64_t weight)
{
	if (!a || (depth && !frames))
		return REC_ERR_INVALID_ARG;
	if (depth > SIZE_MAX / 8 || !path_reserve(a, depth + 1))
		return rec_errorf(a->errmsg, REC_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < depth; i++) {
		const char *f = frames[i] ? frames[i] : "[unknown]";
		if (!intern_sanitized(a, f, strlen(f), &a->path[i]))
			return rec_errorf(a->errmsg, REC_ERR_NOMEM, "out of memory");
	}
	uint32_t leaf;
	rec_status st = insert_path(a, a->path, depth, &leaf);
	if (st != REC_OK)
		return st;
	if (leaf == 0)
		return REC_OK; /* empty stack: nothing to weigh */
	uint32_t slot;
	st = slot_of(a, leaf, &slot);
	if (st != REC_OK)
		return st;
	add_weight(a, slot, weight);
	return REC_OK;
}

/* ---- iteration ------------------------------------------------------------- */

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

static int cmp_name_ref(const void *x, const void *y, void *ctx)
{
	const char *const *names = ctx;
	return strcmp(names[*(const uint32_t *)x], names[*(const uint32_t *)y]);
}

rec_status rec_stackagg_rewind(rec_stackagg *a)
{
	if (!a)
		return REC_ERR_INVALID_ARG;
	size_t n = a->node_count;
	/* totals: a child always has a higher index than its parent */
	for (size_t i = 0; i < n; i++) {
		agg_node *nd = &a->nodes[i];
		nd->self[0] = nd->slot ? a->slots[nd->slot - 1][0] : 0;
		nd->self[1] = nd->slot ? a->slots[nd->slot - 1][1] : 0;
		nd->total[0] = nd->self[0];
		nd->total[1] = nd->self[1];
	}
	for (size_t i = n - 1; i > 0; i--) {
		agg_node *c = &a->nodes[i], *p = &a->nodes[c->parent];
		p->total[0] = sat_add(p->total[0], c->total[0]);
		p->total[1] = sat_add(p->total[1], c->total[1]);
	}
	/* rank of every name in bytewise order */
	uint32_t *order = malloc((a->name_count + 1) * sizeof *order);
	uint32_t *rank = malloc((a->name_count + 1) * sizeof *rank);
	uint64_t *keys = malloc(n * sizeof *keys);
	uint32_t *coff = realloc(a->coff, (n + 1) * sizeof *coff);
	if (coff)
		a->coff = coff;
	uint32_t *cidx = realloc(a->cidx, n * sizeof *cidx);
	if (cidx)
		a->cidx = cidx;
	if (!order || !rank || !keys || !coff || !cidx) {
		free(order);
		free(rank);
		free(keys);
		return rec_errorf(a->errmsg, REC_ERR_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < a->name_count; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, a->name_count, sizeof *order, cmp_name_ref, (void *)a->names);
	for (size_t i = 0; i < a->name_count; i++)
		rank[order[i]] = (uint32_t)i;
	/* children grouped by parent, sorted by name rank: sort (parent, rank)
	 * keys; parent and rank are < 2^32, node index recovered from a map */
	memset(coff, 0, (n + 1) * sizeof *coff);
	for (size_t i = 1; i < n; i++)
		coff[a->nodes[i].parent + 1]++;
	for (size_t i = 0; i < n; i++)
		coff[i + 1] += coff[i];
	/* fill unsorted, then sort each segment by rank */
	uint32_t *fillpos = order; /* reuse when large enough */
	if (a->name_count + 1 < n) {
		free(order);
		fillpos = malloc(n * sizeof *fillpos);
		if (!fillpos) {
			free(rank);
			free(keys);
			return rec_errorf(a->errmsg, REC_ERR_NOMEM, "out of memory");
		}
	}
	memcpy(fillpos, coff, n * sizeof *fillpos);
	for (size_t i = 1; i < n; i++)
		cidx[fillpos[a->nodes[i].parent]++] = (uint32_t)i;
	for (size_t p = 0; p < n; p++) {
		uint32_t b = coff[p], e = coff[p + 1];
		if (e - b < 2)
			continue;
		for (uint32_t k = b; k < e; k++)
			keys[k - b] = ((uint64_t)rank[a->nodes[cidx[k]].name] << 32) | cidx[k];
		qsort(keys, e - b, sizeof *keys, cmp_u64);
		for (uint32_t k = b; k < e; k++)
			cidx[k] = (uint32_t)keys[k - b];
	}
	free(fillpos);
	free(rank);
	free(keys);
	/* iteration stack: as deep as the deepest node */
	size_t maxd = 1;
	{
		uint32_t *dep = malloc(n * sizeof *dep);
		if (!dep)
			return rec_errorf(a->errmsg, REC_ERR_NOMEM, "out of memory");
		dep[0] = 0;
		for (size_t i = 1; i < n; i++) {
			dep[i] = dep[a->nodes[i].parent] + 1;
			if (dep[i] > maxd)
				maxd = dep[i];
		}
		free(dep);
	}
	if (maxd + 1 > a->it_cap) {
		size_t cap = maxd + 1;
		uint32_t *in = realloc(a->it_node, cap * sizeof *in);
		if (in)
			a->it_node = in;
		uint32_t *ip = realloc(a->it_pos, cap * sizeof *ip);
		if (ip)
			a->it_pos = ip;
		const char **pp = realloc(a->it_path, cap * sizeof *pp);
		if (pp)
			a->it_path = pp;
		if (!in || !ip || !pp)
			return rec_errorf(a->errmsg, REC_ERR_NOMEM, "out of memory");
		a->it_cap = cap;
	}
	a->it_node[0] = 0;
	a->it_pos[0] = coff[0];
	a->it_sp = 1;
	a->dirty = false;
	return REC_OK;
}

rec_status rec_stackagg_next(rec_stackagg *a, rec_stackagg_stack *out)
{
	if (!a || !out)
		return REC_ERR_INVALID_ARG;
	if (a->dirty)
		return rec_errorf(a->errmsg, REC_ERR_STATE,
				  "rec_stackagg_rewind() not called since the last change");
	while (a->it_sp > 0) {
		size_t k = a->it_sp - 1;
		uint32_t n = a->it_node[k];
		if (a->it_pos[k] < a->coff[n + 1]) {
			uint32_t c = a->cidx[a->it_pos[k]++];
			a->it_node[a->it_sp] = c;
			a->it_pos[a->it_sp] = a->coff[c];
			a->it_path[a->it_sp - 1] = a->names[a->nodes[c].name];
			a->it_sp++;
			const agg_node *nd = &a->nodes[c];
			if (nd->self[0] || nd->self[1]) {
				out->depth = a->it_sp - 1;
				out->frames = a->it_path;
				out->weight[0] = nd->self[0];
				out->weight[1] = nd->self[1];
				out->total[0] = nd->total[0];
				out->total[1] = nd->total[1];
				return REC_OK;
			}
		} else {
			a->it_sp--;
		}
	}
	return REC_END;
}
