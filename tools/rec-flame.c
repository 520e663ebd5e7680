/* SPDX-License-Identifier: MIT */
/*
 * rec-flame - flame graphs from a recording: collapsed stacks ("root;...;leaf
 * weight", the input of flamegraph.pl, speedscope and inferno), a
 * self-contained interactive HTML page, or a pprof profile (rec/pprof.h: go
 * tool pprof, Pyroscope, Parca, Grafana).  Stacks are aggregated by the
 * library (rec/stack_agg.h) while the recording streams by.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/cli.h"
#include "common/flame_html.h"
#include "common/flame_preset.h"
#include "common/tools.h"
#include "rec/pprof.h"
#include "rec/rec.h"
#include "rec/stack_agg.h"


/* What a weight is measured in. */
enum unit { U_SAMPLES, U_EVENTS, U_BYTES, U_NS, U_COUNT };
static const char *const unit_names[] = { "samples", "events", "bytes", "ns", "count" };

/* The run's options (rec_flame_run sets them); g_diff: a differential graph. */
static const rec_flame_opts *g_o;
static bool g_diff;

/* ---- event selection and weights ----------------------------------------- */

enum wkind { W_ONE, W_HEADER_DURATION, W_U, W_I, W_F, W_DURATION_FIELD, W_WALL };

typedef struct type_info {
	const rec_type *type;
	bool selected;
	enum wkind kind;
	uint32_t field;
} type_info;

static struct {
	type_info v[64];
	size_t n;
	const rec_chunk_info *chunk;
	uint64_t chunk_index, chunk_offset;
	enum unit unit;
	bool unit_set;
	uint64_t matched; /* events of the type seen */
	bool usage_failed; /* choose_weight() found a usage error */
	/* --from/--to: the window of the input being read, in wall ns (offsets
	 * added to its start: rec_cli_window_bounds) */
	int64_t lo, hi;
	bool note_chunks; /* an input was not scanned: note the types while reading */
} g_sel;

/* --event against the types of the inputs (cli.h's shared check). */
static rec_cli_typesel g_tsel;

/* --format pprof: every aggregated event adds 1 to column 0 (the count
 * sample type) and its measure to column 1 (the second sample type, when
 * there is one): see pp_types(). */
static struct {
	const char *count_type;  /* "samples", "contentions", ... */
	const char *value_type;  /* NULL: one sample type (the count) */
	char field[256];         /* the --weight field's name (the reader's
				  * metadata does not outlive the input) */
	const char *value_unit;
	bool cpu;                /* the measure is rec.CPUSample's CPU time */
	uint32_t period_field, overruns_field; /* of rec.CPUSample, or UINT32_MAX */
	uint64_t period;         /* the first sample's period */
	bool period_mixed;       /* samples with different periods */
	bool reported;           /* write_pprof() said what failed */
	bool have_time;
	int64_t first_ns, last_ns; /* events in the window, of any type */
} g_pp;

static void set_unit(enum unit u)
{
	g_sel.unit = u;
	g_sel.unit_set = true;
}

static enum unit field_unit(const rec_field *f)
{
	if (f->type == REC_TYPE_DURATION || f->unit == REC_UNIT_NANOS)
		return U_NS;
	if (f->unit == REC_UNIT_BYTES)
		return U_BYTES;
	return U_COUNT;
}

/* How events of ti's type weigh.  A usage error (reported) sets
 * g_sel.usage_failed. */
static void choose_weight(type_info *ti)
{
	const rec_type *t = ti->type;
	const char *w = g_o->weight;
	if (!(t->flags & REC_EVENT_HAS_STACK)) {
		rec_cli_usage_fail("event type %s has no stack traces", t->name);
		g_sel.usage_failed = true;
		return;
	}
	if (!w) { /* the type's preset (flame_preset.h) */
		const char *pf;
		switch (rec_flame_preset(t, &pf)) {
		case REC_FLAME_PRESET_ONE:
			ti->kind = W_ONE;
			set_unit(U_SAMPLES);
			return;
		case REC_FLAME_PRESET_DURATION:
			ti->kind = W_HEADER_DURATION;
			set_unit(U_NS);
			return;
		case REC_FLAME_PRESET_WALL:
			ti->kind = W_WALL;
			set_unit(U_NS);
			return;
		case REC_FLAME_PRESET_FIELD:
			w = pf;
			break;
		default:
			break;
		}
	}
	if (!w || strcmp(w, "count") == 0) {
		bool named_count = false;
		for (uint32_t i = 0; w && i < t->field_count; i++)
			named_count |= strcmp(t->fields[i].name, "count") == 0;
		if (!named_count) {
			ti->kind = W_ONE;
			set_unit(U_EVENTS);
			return;
		}
	}
	for (uint32_t i = 0; i < t->field_count; i++) {
		const rec_field *f = &t->fields[i];
		if (strcmp(f->name, w) != 0)
			continue;
		ti->field = i;
		switch (f->type) {
		case REC_TYPE_BOOL: case REC_TYPE_U8: case REC_TYPE_U16: case REC_TYPE_U32:
		case REC_TYPE_U64:
			ti->kind = W_U;
			break;
		case REC_TYPE_I8: case REC_TYPE_I16: case REC_TYPE_I32: case REC_TYPE_I64:
			ti->kind = W_I;
			break;
		case REC_TYPE_F32: case REC_TYPE_F64:
			ti->kind = W_F;
			break;
		case REC_TYPE_DURATION:
			ti->kind = W_DURATION_FIELD;
			break;
		default:
			rec_cli_usage_fail("--weight: field '%s' of %s is a %s, not a number", w,
					   t->name, rec_field_type_name(f->type));
			g_sel.usage_failed = true;
			return;
		}
		set_unit(field_unit(f));
		return;
	}
	if (strcmp(w, "duration") == 0 && (t->flags & REC_EVENT_HAS_DURATION)) {
		ti->kind = W_HEADER_DURATION;
		set_unit(U_NS);
		return;
	}
	char list[1024];
	size_t len = 0;
	list[0] = 0;
	for (uint32_t i = 0; i < t->field_count && len + 64 < sizeof list; i++) {
		int n = snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "",
				 t->fields[i].name);
		if (n > 0)
			len += (size_t)n;
	}
	rec_cli_usage_fail("--weight: %s has no field '%s' (fields: %s%s)", t->name, w,
			   len ? list : "none", (t->flags & REC_EVENT_HAS_DURATION) ? "; or duration" : "");
	g_sel.usage_failed = true;
}

static uint32_t field_index(const rec_type *t, const char *name)
{
	for (uint32_t i = 0; i < t->field_count; i++)
		if (strcmp(t->fields[i].name, name) == 0)
			return i;
	return UINT32_MAX;
}

/* The pprof sample types of the event type (name) weighed as ti says
 * (ti NULL: no event of the type was read): a count of the events first,
 * then what rec-flame weighs them by unless that is the count:
 *   rec.CPUSample   samples/count, cpu/nanoseconds (period x (1 + overruns))
 *   rec.LockWait    contentions/count, delay/nanoseconds
 *   rec.Sleep       sleeps/count, delay/nanoseconds
 *   rec.CondWait    waits/count, delay/nanoseconds
 *   rec.Alloc       allocations/count, alloc_space/bytes (the weight field)
 *   other types     events/count, then FIELD/unit for --weight FIELD
 *                   ("duration"/nanoseconds for the event's duration). */
static void pp_types_of(const char *name, const type_info *ti)
{
	bool cpu = strcmp(name, "rec.CPUSample") == 0, lock = strcmp(name, "rec.LockWait") == 0;
	bool sleep = strcmp(name, "rec.Sleep") == 0, cond = strcmp(name, "rec.CondWait") == 0;
	bool alloc = strcmp(name, "rec.Alloc") == 0, wall = strcmp(name, "rec.WallSample") == 0;
	g_pp.count_type = cpu ? "samples" : lock ? "contentions" : sleep ? "sleeps" : cond ? "waits"
			: alloc ? "allocations" : wall ? "samples" : "events";
	g_pp.value_type = NULL;
	g_pp.cpu = false;
	g_pp.period_field = g_pp.overruns_field = UINT32_MAX;
	if (!ti) {
		/* nothing read: the types rec-flame's presets would give */
		if (cpu || lock || sleep || cond || alloc || wall) {
			g_pp.value_type = cpu ? "cpu" : alloc ? "alloc_space" : wall ? "wall" : "delay";
			g_pp.value_unit = alloc ? "bytes" : "nanoseconds";
			g_pp.cpu = cpu;
		}
		if (g_o->weight && strcmp(g_o->weight, "count") != 0) {
			g_pp.value_type = g_o->weight;
			g_pp.value_unit = "count";
			g_pp.cpu = false;
		}
		return;
	}
	const rec_type *t = ti->type;
	if (ti->kind == W_ONE) {
		if (cpu && !g_o->weight) {
			g_pp.period_field = field_index(t, "period");
			g_pp.overruns_field = field_index(t, "overruns");
			if (g_pp.period_field != UINT32_MAX) {
				g_pp.cpu = true;
				g_pp.value_type = "cpu";
				g_pp.value_unit = "nanoseconds";
			}
		}
		return;
	}
	g_pp.value_unit = g_sel.unit == U_NS ? "nanoseconds" : g_sel.unit == U_BYTES ? "bytes"
											: "count";
	if (!g_o->weight && (lock || sleep || cond))
		g_pp.value_type = "delay";
	else if (!g_o->weight && alloc && strcmp(t->fields[ti->field].name, "weight") == 0)
		g_pp.value_type = "alloc_space";
	else if (ti->kind == W_WALL)
		g_pp.value_type = "wall";
	else if (ti->kind == W_HEADER_DURATION)
		g_pp.value_type = "duration";
	else {
		snprintf(g_pp.field, sizeof g_pp.field, "%s", t->fields[ti->field].name);
		g_pp.value_type = g_pp.field;
	}
}

static void pp_types(const type_info *ti)
{
	pp_types_of(ti->type->name, ti);
}

static uint64_t field_u64(const rec_event *ev, uint32_t i)
{
	if (i >= ev->value_count || !ev->values[i].present)
		return 0;
	return ev->values[i].v.u;
}

/* The second pprof value of ev: CPU ns of a sample, else its weight. */
static uint64_t pp_value(const rec_event *ev, uint64_t weight)
{
	if (!g_pp.cpu)
		return weight;
	uint64_t period = field_u64(ev, g_pp.period_field);
	uint64_t n = 1 + field_u64(ev, g_pp.overruns_field);
	if (!g_pp.period && !g_pp.period_mixed)
		g_pp.period = period;
	else if (period != g_pp.period)
		g_pp.period_mixed = true;
	return period && n > UINT64_MAX / period ? UINT64_MAX : period * n;
}

static type_info *lookup_type(const rec_event *ev)
{
	const rec_chunk_info *c = ev->chunk;
	if (c != g_sel.chunk || (c && (c->index != g_sel.chunk_index ||
				       c->offset != g_sel.chunk_offset))) {
		g_sel.n = 0;
		g_sel.chunk = c;
		if (c) {
			g_sel.chunk_index = c->index;
			g_sel.chunk_offset = c->offset;
			if (g_sel.note_chunks)
				rec_cli_typesel_chunk(&g_tsel, c);
		}
	}
	for (size_t i = 0; i < g_sel.n; i++)
		if (g_sel.v[i].type == ev->type)
			return &g_sel.v[i];
	if (g_sel.n == sizeof g_sel.v / sizeof g_sel.v[0])
		g_sel.n = 0;
	type_info *ti = &g_sel.v[g_sel.n++];
	memset(ti, 0, sizeof *ti);
	ti->type = ev->type;
	ti->selected = ev->type && ev->type->name && strcmp(ev->type->name, g_o->event) == 0;
	if (ti->selected) {
		choose_weight(ti);
		if (g_o->pprof && !g_sel.usage_failed)
			pp_types(ti);
	}
	return ti;
}

static uint64_t event_weight(const type_info *ti, const rec_event *ev)
{
	switch (ti->kind) {
	case W_ONE:
		return 1;
	case W_HEADER_DURATION:
		return ev->duration_ns > 0 ? (uint64_t)ev->duration_ns : 0;
	case W_WALL:
		return rec_flame_wall_ns(ev);
	default:
		break;
	}
	if (ti->field >= ev->value_count)
		return 0;
	const rec_value *v = &ev->values[ti->field];
	if (!v->present)
		return 0;
	switch (ti->kind) {
	case W_U:
		return v->v.u;
	case W_I:
		return v->v.i > 0 ? (uint64_t)v->v.i : 0;
	case W_F:
		return v->v.f > 0 ? (v->v.f >= 1.8e19 ? UINT64_MAX : (uint64_t)(v->v.f + 0.5)) : 0;
	case W_DURATION_FIELD: {
		int64_t ns = rec_ticks_to_ns(v->v.u > INT64_MAX ? INT64_MAX : (int64_t)v->v.u,
					     ev->chunk ? ev->chunk->tick_frequency : 1000000000u);
		return ns > 0 ? (uint64_t)ns : 0;
	}
	default:
		return 0;
	}
}

/* ---- reading --------------------------------------------------------------- */

typedef struct read_ctx {
	rec_stackagg *agg;
	const char *name;
} read_ctx;

static int add_one(void *ctx, const rec_event *ev)
{
	const read_ctx *rc = ctx;
	rec_stackagg *agg = rc->agg;
	type_info *ti = lookup_type(ev);
	if (g_sel.usage_failed)
		return REC_EXIT_USAGE;
	bool in_window = ev->wall_ns >= g_sel.lo && ev->wall_ns < g_sel.hi;
	if (g_o->pprof && in_window) {
		int64_t end = ev->duration_ns > 0 ? ev->wall_ns + ev->duration_ns : ev->wall_ns;
		if (!g_pp.have_time || ev->wall_ns < g_pp.first_ns)
			g_pp.first_ns = ev->wall_ns;
		if (!g_pp.have_time || end > g_pp.last_ns)
			g_pp.last_ns = end;
		g_pp.have_time = true;
	}
	if (!ti->selected)
		return REC_EXIT_OK;
	g_sel.matched++;
	if (!in_window)
		return REC_EXIT_OK;
	uint64_t w = event_weight(ti, ev);
	rec_status ast = g_o->pprof ? rec_stackagg_add_event_pair(agg, ev, 1, pp_value(ev, w))
				    : rec_stackagg_add_event(agg, ev, w);
	if (ast != REC_OK) {
		rec_cli_file_error(rc->name, "%s", rec_stackagg_errmsg(agg));
		return REC_EXIT_DATA;
	}
	return REC_EXIT_OK;
}

static int read_file(rec_stackagg *agg, const rec_cli_input *in, unsigned column)
{
	rec_reader *r = rec_cli_input_open(in, 0);
	if (!r)
		return REC_EXIT_DATA;
	(void)rec_stackagg_begin_input(agg, column);
	g_sel.n = 0;
	g_sel.chunk = NULL;
	g_sel.matched = 0;
	/* Offsets count from this input's start, its first event (as the
	 * offsets of rec-lockgraph and the ts 0 of rec-timeline); main() made
	 * sure the input can be read twice. */
	rec_cli_window_bounds(&g_o->window, in, &g_sel.lo, &g_sel.hi);
	read_ctx ctx = { agg, in->name };
	int rc = rec_cli_each_event(r, in->name, add_one, &ctx);
	if (!g_sel.matched && rc == REC_EXIT_OK &&
	    (!g_o->event_given || g_tsel.hit[0] || !g_tsel.nseen)) /* else: a usage error */
		rec_cli_file_error(in->name, "no %s events", g_o->event);
	rec_reader_close(r);
	return rc;
}

/* ---- output ---------------------------------------------------------------- */

static uint64_t g_min; /* frames with a total below this are omitted */

static bool narrow(const rec_stackagg_stack *s)
{
	uint64_t t = s->total[0] > s->total[1] ? s->total[0] : s->total[1];
	return t < g_min;
}

static int write_collapsed(rec_stackagg *agg)
{
	rec_stackagg_stack s;
	rec_status st;
	while ((st = rec_stackagg_next(agg, &s)) == REC_OK) {
		if (narrow(&s))
			continue;
		for (size_t i = 0; i < s.depth; i++) {
			if (i)
				rec_out_char(';');
			rec_out_str(s.frames[i]);
		}
		rec_out_char(' ');
		if (g_diff) {
			rec_out_u64(s.weight[0]);
			rec_out_char(' ');
		}
		rec_out_u64(g_diff ? s.weight[1] : s.weight[0]);
		rec_out_char('\n');
	}
	return st == REC_END ? REC_EXIT_OK : REC_EXIT_DATA;
}

static int write_html(rec_stackagg *agg)
{
	bool reverse = (g_o->flags & REC_STACKAGG_REVERSE) != 0;
	char deftitle[64];
	const char *title = g_o->title;
	if (!title) {
		snprintf(deftitle, sizeof deftitle, "%s%s", g_diff ? "Differential " : "",
			 reverse ? "icicle graph (callers)" : "flame graph");
		deftitle[0] = (char)(deftitle[0] == 'f' || deftitle[0] == 'i' ? deftitle[0] - 32
									      : deftitle[0]);
		title = deftitle;
	}
	rec_flame_graph g = { "flame", title, g_o->event, unit_names[g_sel.unit], reverse, g_diff,
			      g_min };
	rec_flame_html_page_begin(title);
	int rc = rec_flame_html_graph(agg, &g);
	rec_flame_html_page_end();
	return rc;
}

/* The frames of s (root first; the thread root frame first) as pprof
 * locations, leaf first, and the thread as labels. */
static size_t pp_stack(rec_stackagg *agg, const rec_stackagg_stack *s,
		       rec_pprof_location **locs, size_t *cap, rec_pprof_label *labels,
		       size_t *nlabels)
{
	size_t first = 0;
	*nlabels = 0;
	rec_stackagg_frame_info fi;
	if (s->depth && rec_stackagg_name_info(agg, s->frames[0], &fi) == REC_OK &&
	    (fi.kind == REC_STACKAGG_NAME_THREAD || fi.kind == REC_STACKAGG_NAME_NO_THREAD)) {
		first = 1;
		if (fi.kind == REC_STACKAGG_NAME_THREAD) {
			if (fi.thread_name[0])
				labels[(*nlabels)++] = (rec_pprof_label){ "thread_name", fi.thread_name, 0,
									  NULL };
			labels[(*nlabels)++] = (rec_pprof_label){ "thread_id", NULL,
								  (int64_t)(fi.os_tid & INT64_MAX),
								  NULL };
		}
	}
	if (s->depth > *cap) {
		*cap = s->depth;
		*locs = rec_cli_xrealloc(*locs, *cap * sizeof **locs);
	}
	size_t n = 0;
	for (size_t i = s->depth; i-- > first;) {
		rec_pprof_location *l = &(*locs)[n++];
		memset(l, 0, sizeof *l);
		/* the function is the frame as rec-flame prints it */
		l->function = s->frames[i];
		if (rec_stackagg_name_info(agg, s->frames[i], &fi) == REC_OK &&
		    fi.kind == REC_STACKAGG_NAME_FRAME) {
			l->module = fi.module;
			l->build_id = fi.build_id;
			l->file = fi.file;
			/* a function's line only where its lines are apart */
			l->line = (g_o->flags & REC_STACKAGG_LINES) ? fi.line : 0;
			l->module_base = fi.module_base;
			l->address = fi.module_base + fi.module_offset;
		}
	}
	return n;
}

static int64_t to_i64(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

static int write_pprof(rec_stackagg *agg)
{
	rec_pprof_value_type types[2] = { { g_pp.count_type, "count" },
					  { g_pp.value_type, g_pp.value_unit } };
	size_t ntypes = g_pp.value_type ? 2 : 1;
	rec_pprof *p = NULL;
	rec_status st = rec_pprof_open(&p, types, ntypes);
	if (st != REC_OK) {
		rec_cli_error("pprof: %s", rec_strerror(st));
		g_pp.reported = true;
		return REC_EXIT_DATA;
	}
	/* the sample type rec-flame weighs by: the count for 1 per event */
	bool by_count = g_pp.cpu || !g_pp.value_type;
	(void)rec_pprof_set_default_type(p, by_count ? 0 : 1);
	if (g_pp.have_time)
		rec_pprof_set_time(p, g_pp.first_ns, g_pp.last_ns - g_pp.first_ns);
	if (g_pp.cpu && g_pp.period && !g_pp.period_mixed)
		st = rec_pprof_set_period(p, &types[1], to_i64(g_pp.period));
	if (st == REC_OK && g_o->title)
		st = rec_pprof_add_comment(p, g_o->title);
	rec_pprof_location *locs = NULL;
	size_t cap = 0;
	rec_pprof_label labels[2];
	size_t nlabels;
	rec_stackagg_stack s;
	rec_status it = REC_OK;
	while (st == REC_OK && (it = rec_stackagg_next(agg, &s)) == REC_OK) {
		size_t depth = pp_stack(agg, &s, &locs, &cap, labels, &nlabels);
		if (!depth)
			continue; /* weight on a thread root alone: no stack */
		int64_t values[2] = { to_i64(s.weight[0]), to_i64(s.weight[1]) };
		st = rec_pprof_add_sample(p, locs, depth, values, labels, nlabels);
	}
	free(locs);
	if (st != REC_OK) {
		rec_cli_error("pprof: %s", rec_pprof_errmsg(p));
		g_pp.reported = true;
		rec_pprof_close(p);
		return REC_EXIT_DATA;
	}
	if (it != REC_END) {
		rec_pprof_close(p);
		return REC_EXIT_DATA; /* the caller reports the aggregation's error */
	}
	uint8_t *bytes = NULL;
	size_t len = 0;
	st = rec_pprof_encode(p, true, &bytes, &len);
	if (st != REC_OK) {
		rec_cli_error("pprof: %s", rec_pprof_errmsg(p));
		g_pp.reported = true;
		rec_pprof_close(p);
		return REC_EXIT_DATA;
	}
	rec_out_write(bytes, len);
	free(bytes);
	rec_pprof_close(p);
	return REC_EXIT_OK;
}

/* ---- the run --------------------------------------------------------------- */

static int flame(const rec_cli_input *in, const rec_cli_input *before, FILE *out)
{
	rec_stackagg_options ao = REC_STACKAGG_OPTIONS_INIT;
	ao.flags = g_o->flags | (g_o->keep_rec ? 0 : REC_STACKAGG_TRIM_RECORDER);
	if (g_o->pprof) /* threads become labels, frames locations */
		ao.flags |= REC_STACKAGG_THREADS | REC_STACKAGG_FRAME_INFO;
	if (g_o->html) /* the tooltips name the frames' source files */
		ao.flags |= REC_STACKAGG_FRAME_INFO;
	ao.include = g_o->include;
	ao.include_count = g_o->ninclude;
	ao.exclude = g_o->exclude;
	ao.exclude_count = g_o->nexclude;
	rec_stackagg *agg = NULL;
	rec_status st = rec_stackagg_open(&agg, &ao);
	if (st == REC_ERR_INVALID_ARG && agg) {
		char msg[256];
		snprintf(msg, sizeof msg, "%s", rec_stackagg_errmsg(agg));
		rec_stackagg_close(agg);
		return rec_cli_usage_fail("%s", msg);
	}
	if (st != REC_OK) {
		rec_cli_error("%s", agg ? rec_stackagg_errmsg(agg) : rec_strerror(st));
		rec_stackagg_close(agg);
		return REC_EXIT_DATA;
	}

	/* A type no input has is a usage error, before any output: found from
	 * the chunks' metadata first when the inputs can be read twice, else
	 * while reading. */
	bool scanned = !g_o->event_given || rec_cli_typesel_scan(&g_tsel, in);
	if (before && g_o->event_given)
		scanned = rec_cli_typesel_scan(&g_tsel, before) && scanned;
	g_sel.note_chunks = !scanned;
	if (scanned && rec_cli_typesel_check(&g_tsel) != REC_EXIT_OK) {
		rec_stackagg_close(agg);
		return REC_EXIT_USAGE;
	}
	int rc = REC_EXIT_OK;
	if (before) {
		rc = read_file(agg, before, 0);
		if (!g_sel.usage_failed) {
			int r2 = read_file(agg, in, 1);
			if (r2 > rc)
				rc = r2;
		}
	} else {
		rc = read_file(agg, in, 0);
	}
	if (g_sel.usage_failed || (!scanned && rec_cli_typesel_check(&g_tsel) != REC_EXIT_OK)) {
		rec_stackagg_close(agg);
		return REC_EXIT_USAGE;
	}
	if (!g_sel.unit_set)
		g_sel.unit = strcmp(g_o->event, "rec.CPUSample") == 0 ? U_SAMPLES : U_EVENTS;

	rec_stackagg_stats stats;
	rec_stackagg_get_stats(agg, &stats);
	unsigned col = g_diff ? 1 : 0;
	uint64_t total = stats.weight[col];
	if (g_diff && stats.weight[0] > total)
		total = stats.weight[0];
	if (g_o->min_set)
		g_min = g_o->min_pct >= 0 ? (uint64_t)((double)total * g_o->min_pct / 100.0 + 0.5)
					  : g_o->min_weight;

	st = rec_stackagg_rewind(agg);
	if (st != REC_OK) {
		rec_cli_error("%s", rec_stackagg_errmsg(agg));
		rec_stackagg_close(agg);
		return REC_EXIT_DATA;
	}
	FILE *f = rec_cli_export_open(g_o->output, out);
	if (!f) {
		rec_stackagg_close(agg);
		return REC_EXIT_DATA;
	}
	rec_cli_set_streams(f, rec_cli_err());
	int wrc = g_o->pprof ? write_pprof(agg) : g_o->html ? write_html(agg) : write_collapsed(agg);
	rec_out_flush();
	rec_cli_set_streams(out, rec_cli_err());
	if (wrc > rc) {
		if (!g_pp.reported)
			rec_cli_error("%s", rec_stackagg_errmsg(agg));
		rc = wrc;
	}
	rec_stackagg_close(agg);
	if (!rec_cli_export_close(f, g_o->output, out))
		rc = REC_EXIT_DATA;
	return rc;
}

int rec_flame_run(const rec_flame_opts *o, const rec_cli_input *in, const rec_cli_input *before,
		  FILE *out, FILE *err)
{
	if (!out)
		out = stdout;
	rec_cli_set_streams(out, err);
	g_o = o;
	g_diff = before != NULL;
	memset(&g_sel, 0, sizeof g_sel);
	memset(&g_pp, 0, sizeof g_pp);
	if (o->pprof)
		pp_types_of(o->event, NULL);
	g_min = 0;
	rec_cli_typesel_init(&g_tsel, &o->event, 1, REC_CLI_TYPESEL_EXACT);
	int rc = flame(in, before, out);
	rec_out_flush();
	rec_cli_typesel_free(&g_tsel);
	g_o = NULL;
	return rc;
}

/* ---- main: the arguments ------------------------------------------------------ */
#ifndef REC_TOOL_NO_MAIN

static const char usage_text[] =
	"Usage: rec-flame [OPTIONS] FILE\n"
	"       rec-flame [OPTIONS] --diff BEFORE AFTER\n"
	"Aggregate the stack traces of one event type of a recording into a flame\n"
	"graph: collapsed stacks \"root;caller;...;leaf WEIGHT\" (one line per distinct\n"
	"stack, sorted frame by frame) on standard output, or an interactive HTML page\n"
	"(self-contained: no network access) with zoom, search and tooltips.\n"
	"FILE may be '-' for standard input.\n"
	"\n"
	"What is weighed:\n"
	"  --event NAME      event type (default rec.CPUSample).  What weighs an\n"
	"                    event of each built-in type with a stack:\n"
	"                      rec.CPUSample  1 per event (samples)\n"
	"                      rec.Alloc      the weight field (bytes): for a sampled\n"
	"                                     allocation the bytes its thread allocated\n"
	"                                     since its previous sample, for a reported\n"
	"                                     one its size; so the total is the bytes\n"
	"                                     allocated (--weight size: the sampled\n"
	"                                     allocations' own sizes only)\n"
	"                      rec.LockWait   the event's duration (ns waited)\n"
	"                      rec.Sleep      the event's duration (ns slept)\n"
	"                      rec.CondWait   the event's duration (ns waited on a\n"
	"                                     condition variable)\n"
	"                      rec.WallSample weight x period (ns of wall time the\n"
	"                                     sample stands for, running or waiting)\n"
	"                      rec.Free, rec.LockOrder, rec.Crash, rec.Log\n"
	"                                     1 per event (events)\n"
	"                    any other type with a stack: 1 per event unless --weight\n"
	"  --wall            the same as --event rec.WallSample (rec-record --wall)\n"
	"  --weight FIELD    weigh by a numeric field of the event ('duration' is the\n"
	"                    event's duration in ns when the type has no such field,\n"
	"                    'count' is 1 per event)\n"
	"\n"
	"Output:\n"
	"  --format F        collapsed (default), html, or pprof: a gzip-compressed\n"
	"                    profile.proto (go tool pprof, Pyroscope, Parca, Grafana)\n"
	"                    with two sample types, a count of the events and what\n"
	"                    they weigh (rec.CPUSample: samples and cpu nanoseconds,\n"
	"                    rec.LockWait: contentions and delay nanoseconds,\n"
	"                    rec.Alloc: allocations and alloc_space bytes), the\n"
	"                    frames as functions, modules as mappings (with build\n"
	"                    ids) and threads as labels thread_name and thread_id;\n"
	"                    not with --diff, --reverse or --minwidth\n"
	"  -o, --output FILE write to FILE instead of standard output; a name ending\n"
	"                    in .html implies --format html, in .pb.gz or .pprof\n"
	"                    --format pprof\n"
	"  --title TEXT      title of the HTML page (pprof: a comment)\n"
	"  --minwidth W      omit frames narrower than W: a percentage of the total\n"
	"                    (\"0.5%\") or a weight (\"1000\")\n"
	"\n"
	"Shaping:\n"
	"  --threads         a root frame per thread: \"[NAME tid=TID]\"\n"
	"  --keep-recorder-frames\n"
	"                    keep librec's own leaf frames (rec_*) of recordings made\n"
	"                    before the recorder left them out; by default the leaf is\n"
	"                    the call site\n"
	"  --reverse         callers view: leaf functions at the root (HTML: icicle)\n"
	"  --lines           a frame with a source line is function:line (the lines of\n"
	"                    a function apart; inlined functions are frames anyway)\n"
	"  --include RE      keep only stacks with a frame matching RE (POSIX extended\n"
	"                    regular expression; repeatable: any of them)\n"
	"  --exclude RE      drop stacks with a frame matching RE (repeatable)\n"
	"  --from T, --to T  keep events in [from, to): T is an offset from the start\n"
	"                    of the recording (\"1.5s\", \"250ms\", \"90us\", \"2m\", \"1h\":\n"
	"                    units ns us ms s m min h; a bare number is seconds; needs\n"
	"                    a FILE, not '-') or a time \"2026-12-02T10:14:03.5\" (local\n"
	"                    time; add Z or +HH:MM for another zone)\n"
	"\n"
	"Differential flame graph:\n"
	"  --diff BEFORE     compare recording BEFORE with FILE (after).  Collapsed:\n"
	"                    \"stack BEFORE_WEIGHT AFTER_WEIGHT\" per stack of either\n"
	"                    (raw weights; the input of flamegraph.pl, as difffolded.pl\n"
	"                    writes it).  HTML: frames as wide as in AFTER, coloured by\n"
	"                    the change: red grew, blue shrank, more saturated = larger\n"
	"                    change.  When the totals differ, BEFORE is first scaled to\n"
	"                    AFTER's total (normalised), so colours show a change in\n"
	"                    share, not in volume.\n"
	"\n"
	"Other:\n"
	"  -h, --help        show this help and exit\n"
	"  --version         show the library version and exit\n"
	"\n"
	"An --event NAME that no type of the input has is a usage error that lists the\n"
	"types it has (as rec-print --events).\n"
	"Frames are function names, or MODULE+0xOFFSET when the function is unknown;\n"
	"';' in a name becomes ':', control characters become spaces.  The start of a\n"
	"recording (for --from/--to offsets) is the time of its first event, of any\n"
	"type (as for rec-lockgraph --from/--to and rec-timeline's ts 0); with --diff\n"
	"each recording's offsets count from its own start.\n"
	"\n"
	"-o FILE that cannot be written (a missing directory, a full disk):\n"
	"\"rec-flame: FILE: REASON\" on stderr, exit 1.\n"
	"\n"
	"Exit status: 0 success, 1 damaged or unreadable input (after writing what was\n"
	"readable) or a failed write, 2 usage error.\n";

enum {
	OPT_EVENT = 256, OPT_WEIGHT, OPT_FORMAT, OPT_TITLE, OPT_MINWIDTH, OPT_THREADS,
	OPT_REVERSE, OPT_LINES, OPT_KEEP_REC, OPT_INCLUDE, OPT_EXCLUDE, OPT_FROM, OPT_TO, OPT_DIFF,
	OPT_WALL
};

static const struct option long_opts[] = {
	{ "event", required_argument, NULL, OPT_EVENT },
	{ "weight", required_argument, NULL, OPT_WEIGHT },
	{ "wall", no_argument, NULL, OPT_WALL },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "output", required_argument, NULL, 'o' },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
	{ "threads", no_argument, NULL, OPT_THREADS },
	{ "reverse", no_argument, NULL, OPT_REVERSE },
	{ "lines", no_argument, NULL, OPT_LINES },
	{ "keep-recorder-frames", no_argument, NULL, OPT_KEEP_REC },
	{ "include", required_argument, NULL, OPT_INCLUDE },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "diff", required_argument, NULL, OPT_DIFF },
	REC_CLI_COMMON_OPTIONS,
};

static void add_pattern(const char ***list, size_t *n, const char *re)
{
	*list = rec_cli_xrealloc((void *)*list, (*n + 1) * sizeof **list);
	(*list)[(*n)++] = re;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void parse_minwidth(rec_flame_opts *o, const char *s)
{
	size_t n = strlen(s);
	o->min_set = true;
	o->min_pct = -1;
	if (n && s[n - 1] == '%') {
		char *end = NULL;
		errno = 0;
		double v = strtod(s, &end);
		if (errno || end != s + n - 1 || n == 1 || !(v >= 0 && v <= 100) || *s == '-' ||
		    *s == '+' || *s == ' ')
			rec_cli_usage_error("--minwidth: '%s' is not a percentage in 0..100%%", s);
		o->min_pct = v;
		return;
	}
	if (!rec_cli_parse_u64(s, 0, UINT64_MAX, &o->min_weight))
		rec_cli_usage_error("--minwidth: '%s' is neither a percentage (\"0.5%%\") nor a "
				    "weight", s);
}

int main(int argc, char **argv)
{
	rec_cli_init("rec-flame");
	rec_cli_note_unsymbolized = true; /* frames without names: say so on stderr */
	rec_flame_opts o = { .event = "rec.CPUSample", .min_pct = -1 };
	const char **include = NULL, **exclude = NULL;
	const char *diff = NULL;
	bool format_set = false;
	int c;
	while ((c = rec_cli_getopt(argc, argv, "ho:", long_opts)) != -1) {
		switch (c) {
		case OPT_EVENT:
			o.event = rec_cli_opt_nonempty("--event", "name", optarg);
			o.event_given = true;
			break;
		case OPT_WALL:
			o.event = "rec.WallSample";
			o.event_given = true;
			break;
		case OPT_WEIGHT: o.weight = rec_cli_opt_nonempty("--weight", "field name", optarg); break;
		case OPT_FORMAT:
			o.html = strcmp(optarg, "html") == 0;
			o.pprof = strcmp(optarg, "pprof") == 0;
			if (!o.html && !o.pprof && strcmp(optarg, "collapsed") != 0)
				rec_cli_usage_error("--format: '%s' is not collapsed, html or pprof",
						    optarg);
			format_set = true;
			break;
		case 'o': o.output = rec_cli_opt_nonempty("--output", "file name", optarg); break;
		case OPT_TITLE: o.title = optarg; break;
		case OPT_MINWIDTH: parse_minwidth(&o, optarg); break;
		case OPT_THREADS: o.flags |= REC_STACKAGG_THREADS; break;
		case OPT_REVERSE: o.flags |= REC_STACKAGG_REVERSE; break;
		case OPT_LINES: o.flags |= REC_STACKAGG_LINES; break;
		case OPT_KEEP_REC: o.keep_rec = true; break;
		case OPT_INCLUDE: add_pattern(&include, &o.ninclude, optarg); break;
		case OPT_EXCLUDE: add_pattern(&exclude, &o.nexclude, optarg); break;
		case OPT_FROM: rec_cli_window_opt(&o.window, false, optarg); break;
		case OPT_TO: rec_cli_window_opt(&o.window, true, optarg); break;
		case OPT_DIFF: diff = optarg; break;
		default: rec_cli_common_option(c, usage_text);
		}
	}
	if (optind >= argc)
		rec_cli_usage_error(diff ? "--diff BEFORE needs the AFTER file" : "no input file");
	if (argc - optind > 1)
		rec_cli_usage_error("one input file expected, got %d (for two, use --diff BEFORE AFTER)",
				    argc - optind);
	const char *file = argv[optind];
	if (diff && strcmp(diff, "-") == 0 && strcmp(file, "-") == 0)
		rec_cli_usage_error("standard input ('-') given twice");
	if (o.output && !format_set && (ends_with(o.output, ".html") || ends_with(o.output, ".htm")))
		o.html = true;
	if (o.output && !format_set && (ends_with(o.output, ".pb.gz") || ends_with(o.output, ".pprof")))
		o.pprof = true;
	if (o.pprof && diff)
		rec_cli_usage_error("--diff: not with --format pprof (go tool pprof -diff_base "
				    "compares two profiles)");
	if (o.pprof && (o.flags & REC_STACKAGG_REVERSE))
		rec_cli_usage_error("--reverse: not with --format pprof (the profile keeps whole "
				    "stacks; its viewers show callers)");
	if (o.pprof && o.min_set)
		rec_cli_usage_error("--minwidth: not with --format pprof (every stack is kept; "
				    "go tool pprof -nodefraction hides small ones)");
	rec_cli_window_check(&o.window, strcmp(file, "-") != 0 && !(diff && strcmp(diff, "-") == 0));
	o.include = include;
	o.exclude = exclude;
	rec_cli_input in = { .name = file }, before = { .name = diff };
	int rc = rec_flame_run(&o, &in, diff ? &before : NULL, NULL, NULL);
	free((void *)include);
	free((void *)exclude);
	return rec_cli_finish(rc);
}
#endif /* REC_TOOL_NO_MAIN */
