/* SPDX-License-Identifier: MIT */
/*
 * rec-print - print the events of recordings, one block per event in the
 * style of `jfr print`, or one JSON document like `jfr print --json`.
 *
 * Speed: output goes through the 1 MiB buffer of cli.h, integers and times
 * are formatted by hand (localtime once per second), and everything that
 * depends only on an event type (selection, labels, how each field is shown)
 * is decided once per (chunk, type) and cached.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/tools.h"
#include "rec/analysis.h"
#include "rec/rec.h"

/* ---- options and filters --------------------------------------------------- */

/* The run's options and which patterns matched (rec_print_run sets them):
 * the shared event-type selections of cli.h. */
static const rec_print_opts *g_o;
static rec_cli_typesel g_evsel, g_catsel;

static bool filtering(void) { return g_o->nevents || g_o->ncats; }

/* Whether a type is selected; marks the patterns it matches as used. */
static bool type_selected(const rec_type *t)
{
	bool by_name = rec_cli_typesel_type(&g_evsel, t);
	bool by_cat = rec_cli_typesel_type(&g_catsel, t);
	return !filtering() || by_name || by_cat;
}

static void note_chunk_types(const rec_chunk_info *c)
{
	rec_cli_typesel_chunk(&g_evsel, c);
	rec_cli_typesel_chunk(&g_catsel, c);
}

/* A usage error (REC_EXIT_USAGE) if a pattern matched nothing.  An input
 * with no event types yet (no chunk written, as in a recording that just
 * started) is not a usage error: nothing can match, so nothing is printed;
 * that is said once on stderr and the exit status stays 0. */
static int check_patterns(bool final)
{
	if (final && !g_evsel.nseen && !g_catsel.nseen)
		rec_cli_error("the input has no event types yet (no chunk with metadata): "
			      "nothing to select with --events or --categories");
	int rc = rec_cli_typesel_check(&g_evsel);
	return rc != REC_EXIT_OK ? rc : rec_cli_typesel_check(&g_catsel);
}

static void note_chunk(void *ctx, const rec_chunk_info *c)
{
	(void)ctx;
	note_chunk_types(c);
}

/* ---- per-type formatting cache ------------------------------------------------ */

enum kind {
	K_BOOL, K_U, K_I, K_U_BYTES, K_I_BYTES, K_HEX, K_U_NANOS, K_I_NANOS, K_U_EPOCH,
	K_I_EPOCH, K_U_PERCENT, K_I_PERCENT, K_U_HZ, K_I_HZ, K_F, K_F32, K_F_PERCENT, K_F_HZ,
	K_STRING, K_BLOB, K_TIMESTAMP, K_DURATION, K_THREAD, K_STACK, K_UNKNOWN,
	/* rec.Dropped's reason and type: printed by name (the number too in JSON) */
	K_DROP_REASON, K_DROP_TYPE
};

typedef struct fmt_field {
	uint8_t kind;
	char *text_prefix; /* "  name = " */
	size_t text_len;
	char *json_key;    /* ", \"name\": " */
	size_t json_len;
} fmt_field;

typedef struct fmt_type {
	bool valid, selected;
	uint32_t gen;       /* file number */
	uint64_t chunk_off; /* chunk offset in that file */
	uint32_t type_id;
	uint32_t flags;
	char *text_head;    /* "name {\n" */
	size_t text_head_len;
	char *json_head;    /* "{\"type\": \"name\", \"values\": {" */
	size_t json_head_len;
	uint32_t nfields;
	fmt_field *fields;
	int drop_type;      /* rec.Dropped: index of its "type" field, or -1 */
} fmt_type;

#define CACHE_SIZE 1024u
static fmt_type g_cache[CACHE_SIZE];
static uint32_t g_gen;

static enum kind field_kind(uint32_t type, uint32_t unit)
{
	switch (type) {
	case REC_TYPE_BOOL: return K_BOOL;
	case REC_TYPE_U8: case REC_TYPE_U16: case REC_TYPE_U32: case REC_TYPE_U64:
		switch (unit) {
		case REC_UNIT_BYTES: return K_U_BYTES;
		case REC_UNIT_ADDRESS: return K_HEX;
		case REC_UNIT_NANOS: return K_U_NANOS;
		case REC_UNIT_EPOCH_NS: return K_U_EPOCH;
		case REC_UNIT_PERCENT: return K_U_PERCENT;
		case REC_UNIT_HZ: return K_U_HZ;
		default: return K_U;
		}
	case REC_TYPE_I8: case REC_TYPE_I16: case REC_TYPE_I32: case REC_TYPE_I64:
		switch (unit) {
		case REC_UNIT_BYTES: return K_I_BYTES;
		case REC_UNIT_ADDRESS: return K_HEX;
		case REC_UNIT_NANOS: return K_I_NANOS;
		case REC_UNIT_EPOCH_NS: return K_I_EPOCH;
		case REC_UNIT_PERCENT: return K_I_PERCENT;
		case REC_UNIT_HZ: return K_I_HZ;
		default: return K_I;
		}
	case REC_TYPE_F32: case REC_TYPE_F64:
		switch (unit) {
		case REC_UNIT_PERCENT: return K_F_PERCENT;
		case REC_UNIT_HZ: return K_F_HZ;
		default: return type == REC_TYPE_F32 ? K_F32 : K_F;
		}
	case REC_TYPE_STRING: case REC_TYPE_TEXT: return K_STRING;
	case REC_TYPE_BLOB: return K_BLOB;
	case REC_TYPE_TIMESTAMP: return K_TIMESTAMP;
	case REC_TYPE_DURATION: return K_DURATION;
	case REC_TYPE_THREAD: return K_THREAD;
	case REC_TYPE_STACK: return K_STACK;
	default: return K_UNKNOWN;
	}
}

static char *xprintf(size_t *len, const char *fmt, ...) REC_CLI_PRINTF(2, 3);
static char *xprintf(size_t *len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	char *p = rec_cli_xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	*len = (size_t)n;
	return p;
}

static void fmt_free(fmt_type *f)
{
	for (uint32_t i = 0; i < f->nfields; i++) {
		free(f->fields[i].text_prefix);
		free(f->fields[i].json_key);
	}
	free(f->fields);
	free(f->text_head);
	free(f->json_head);
	memset(f, 0, sizeof *f);
}

static void fmt_compile(fmt_type *f, const rec_event *ev)
{
	const rec_type *t = ev->type;
	fmt_free(f);
	f->valid = true;
	f->gen = g_gen;
	f->chunk_off = ev->chunk->offset;
	f->type_id = t->id;
	f->flags = t->flags;
	note_chunk_types(ev->chunk);
	f->selected = type_selected(t);
	if (!f->selected)
		return;
	const char *name = t->name ? t->name : "";
	f->text_head = xprintf(&f->text_head_len, "%s {\n", name);
	char *qn = rec_cli_json_quoted(name, "");
	f->json_head = xprintf(&f->json_head_len, "{\"type\": %s, \"values\": {", qn);
	free(qn);
	f->nfields = t->field_count;
	f->fields = rec_cli_xmalloc((t->field_count ? t->field_count : 1) * sizeof *f->fields);
	f->drop_type = -1;
	const bool dropped = strcmp(name, "rec.Dropped") == 0;
	for (uint32_t i = 0; i < t->field_count; i++) {
		const rec_field *fd = &t->fields[i];
		fmt_field *ff = &f->fields[i];
		ff->kind = (uint8_t)field_kind(fd->type, fd->unit);
		if (dropped && ff->kind == K_U && fd->name && strcmp(fd->name, "reason") == 0)
			ff->kind = K_DROP_REASON;
		if (dropped && ff->kind == K_U && fd->name && strcmp(fd->name, "type") == 0) {
			ff->kind = K_DROP_TYPE;
			f->drop_type = (int)i;
		}
		ff->text_prefix = xprintf(&ff->text_len, "  %s = ", fd->name ? fd->name : "");
		char *qk = rec_cli_json_quoted(fd->name, "");
		ff->json_key = xprintf(&ff->json_len, ", %s: ", qk);
		free(qk);
	}
}

static inline fmt_type *fmt_lookup(const rec_event *ev)
{
	uint64_t off = ev->chunk->offset;
	uint32_t id = ev->type->id;
	uint64_t h = (off * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)id * 0xC2B2AE3D27D4EB4Full) ^ g_gen;
	fmt_type *f = &g_cache[(h >> 32) & (CACHE_SIZE - 1)];
	if (!f->valid || f->chunk_off != off || f->type_id != id || f->gen != g_gen)
		fmt_compile(f, ev);
	return f;
}

/* ---- value output -------------------------------------------------------------- */

/* Shortest decimal that reads back as the same value (as a float for f32). */
static void out_float(double v, bool f32)
{
	char tmp[48];
	if (isnan(v)) {
		REC_OUT_LIT("NaN");
		return;
	}
	if (isinf(v)) {
		if (v < 0)
			REC_OUT_LIT("-Infinity");
		else
			REC_OUT_LIT("Infinity");
		return;
	}
	int n = 0;
	for (int prec = 1; prec <= 17; prec++) {
		n = snprintf(tmp, sizeof tmp, "%.*g", prec, v);
		double back = strtod(tmp, NULL);
		if (f32 ? (float)back == (float)v : back == v)
			break;
	}
	/* Keep it a floating-point number for readers that tell them apart
	 * ("2.0", "-0.0", not "2", "-0"). */
	if (n > 0 && (size_t)n + 2 < sizeof tmp && !strpbrk(tmp, ".eEn")) {
		memcpy(tmp + n, ".0", 3);
		n += 2;
	}
	rec_out_write(tmp, (size_t)n);
}

static void out_percent(double fraction)
{
	char tmp[64];
	int n = snprintf(tmp, sizeof tmp, "%.2f %%", fraction * 100.0);
	rec_out_write(tmp, n > 0 ? (size_t)n : 0);
}

static void out_blob_text(const char *p, size_t len)
{
	static const char hx[] = "0123456789abcdef";
	size_t show = len > 32 ? 32 : len;
	REC_OUT_LIT("0x");
	for (size_t i = 0; i < show; i++) {
		unsigned char c = (unsigned char)p[i];
		rec_out_char(hx[c >> 4]);
		rec_out_char(hx[c & 15]);
	}
	if (show < len)
		REC_OUT_LIT("...");
	REC_OUT_LIT(" (");
	rec_out_bytes(len);
	rec_out_char(')');
}

/* Frames printed without a name that rec-symbolize could name (the
 * note at the end of the text output). */
static uint64_t g_unsymbolized;

static void out_frame_text(const rec_frame *fr)
{
	if (rec_frame_unsymbolized(fr))
		g_unsymbolized++;
	char buf[4096];
	size_t n = rec_frame_format(fr, 0, buf, sizeof buf);
	rec_out_write(buf, n);
}

static void out_thread_text(const rec_thread *t)
{
	if (!t) {
		REC_OUT_LIT("null");
		return;
	}
	rec_out_json_cstr(t->name ? t->name : "");
	REC_OUT_LIT(" (tid ");
	rec_out_u64(t->os_tid);
	rec_out_char(')');
}

static void out_stack_text(const rec_stack *st)
{
	if (!st) {
		REC_OUT_LIT("null\n");
		return;
	}
	REC_OUT_LIT("[\n");
	uint32_t n = st->depth < g_o->stack_depth ? st->depth : g_o->stack_depth;
	for (uint32_t i = 0; i < n; i++) {
		REC_OUT_LIT("    ");
		out_frame_text(st->frames ? st->frames[i] : NULL);
		rec_out_char('\n');
	}
	if (st->flags & REC_STACK_TRUNCATED)
		REC_OUT_LIT("    ... (truncated)\n");
	else if (n < st->depth)
		REC_OUT_LIT("    ...\n");
	REC_OUT_LIT("  ]\n");
}

static void out_stack_json(const rec_stack *st)
{
	if (!st) {
		REC_OUT_LIT("null");
		return;
	}
	uint32_t n = st->depth < g_o->stack_depth ? st->depth : g_o->stack_depth;
	bool trunc = (st->flags & REC_STACK_TRUNCATED) || n < st->depth;
	if (trunc)
		REC_OUT_LIT("{\"truncated\": true, \"frames\": [");
	else
		REC_OUT_LIT("{\"truncated\": false, \"frames\": [");
	for (uint32_t i = 0; i < n; i++) {
		const rec_frame *fr = st->frames ? st->frames[i] : NULL;
		if (i)
			REC_OUT_LIT(", ");
		if (!fr) {
			REC_OUT_LIT("null");
			continue;
		}
		rec_out_frame_json(fr);
	}
	REC_OUT_LIT("]}");
}

static void out_bool(bool b)
{
	if (b)
		REC_OUT_LIT("true");
	else
		REC_OUT_LIT("false");
}

/* The name of type id id in ev's chunk, NULL if it has no metadata for it. */
/* rec.Dropped's type: the lost events' type name; "not known" for 0. */
static const char *drop_type_name(const fmt_type *f, const rec_event *ev)
{
	if (f->drop_type < 0 || (uint32_t)f->drop_type >= ev->value_count ||
	    !ev->values[f->drop_type].present || ev->values[f->drop_type].v.u == 0)
		return NULL;
	return rec_cli_chunk_type_name(ev, ev->values[f->drop_type].v.u);
}

/* A string value, quoted and escaped as in JSON (also in the text output). */
static void out_string(const rec_value *v)
{
	if (v->v.s.ptr)
		rec_out_json_string(v->v.s.ptr, v->v.s.len);
	else
		REC_OUT_LIT("null");
}

static void out_value_text(const fmt_type *f, const fmt_field *ff, const rec_value *v,
			   const rec_event *ev)
{
	if (!v->present) {
		REC_OUT_LIT("N/A");
		return;
	}
	switch ((enum kind)ff->kind) {
	case K_BOOL: out_bool(v->v.u != 0); break;
	case K_U: rec_out_u64(v->v.u); break;
	case K_I: rec_out_i64(v->v.i); break;
	case K_U_BYTES: rec_out_bytes(v->v.u); break;
	case K_I_BYTES:
		if (v->v.i < 0) {
			rec_out_char('-');
			rec_out_bytes((uint64_t)0 - (uint64_t)v->v.i);
		} else {
			rec_out_bytes((uint64_t)v->v.i);
		}
		break;
	case K_HEX: rec_out_hex(v->v.u); break;
	case K_U_NANOS: rec_out_duration(v->v.u > INT64_MAX ? INT64_MAX : (int64_t)v->v.u); break;
	case K_I_NANOS: rec_out_duration(v->v.i); break;
	case K_U_EPOCH: rec_out_wall(v->v.u > INT64_MAX ? INT64_MAX : (int64_t)v->v.u); break;
	case K_I_EPOCH: rec_out_wall(v->v.i); break;
	case K_U_PERCENT: out_percent((double)v->v.u); break;
	case K_I_PERCENT: out_percent((double)v->v.i); break;
	case K_U_HZ: rec_out_u64(v->v.u); REC_OUT_LIT(" Hz"); break;
	case K_I_HZ: rec_out_i64(v->v.i); REC_OUT_LIT(" Hz"); break;
	case K_F: out_float(v->v.f, false); break;
	case K_F32: out_float(v->v.f, true); break;
	case K_F_PERCENT: out_percent(v->v.f); break;
	case K_F_HZ: out_float(v->v.f, false); REC_OUT_LIT(" Hz"); break;
	case K_STRING: out_string(v); break;
	case K_BLOB: out_blob_text(v->v.s.ptr, v->v.s.ptr ? v->v.s.len : 0); break;
	case K_TIMESTAMP: rec_out_wall(rec_chunk_wall_ns(ev->chunk, v->v.u)); break;
	case K_DURATION:
		rec_out_duration(rec_ticks_to_ns(v->v.u > INT64_MAX ? INT64_MAX : (int64_t)v->v.u,
					     ev->chunk->tick_frequency));
		break;
	case K_THREAD: out_thread_text(v->v.thread); break;
	case K_STACK: break; /* printed by the caller */
	case K_UNKNOWN: REC_OUT_LIT("(unknown field type)"); break;
	case K_DROP_REASON: {
		/* "rejected: fields do not match app.Job, or ..." */
		char buf[200];
		rec_out_str(rec_drop_reason_text(v->v.u, drop_type_name(f, ev), buf, sizeof buf));
		break;
	}
	case K_DROP_TYPE: {
		const char *n = v->v.u ? rec_cli_chunk_type_name(ev, v->v.u) : NULL;
		if (n)
			rec_out_str(n);
		else if (v->v.u == 0)
			REC_OUT_LIT("(not known)");
		else {
			REC_OUT_LIT("type id ");
			rec_out_u64(v->v.u);
		}
		break;
	}
	}
}

static void out_value_json(const fmt_field *ff, const rec_value *v, const rec_event *ev)
{
	if (!v->present) {
		REC_OUT_LIT("null");
		return;
	}
	switch ((enum kind)ff->kind) {
	case K_BOOL: out_bool(v->v.u != 0); break;
	case K_U: case K_U_BYTES: case K_HEX: case K_U_NANOS: case K_U_HZ:
		rec_out_u64(v->v.u);
		break;
	case K_I: case K_I_BYTES: case K_I_NANOS: case K_I_HZ:
		rec_out_i64(v->v.i);
		break;
	case K_U_EPOCH: rec_out_iso_quoted(v->v.u > INT64_MAX ? INT64_MAX : (int64_t)v->v.u); break;
	case K_I_EPOCH: rec_out_iso_quoted(v->v.i); break;
	case K_U_PERCENT: rec_out_u64(v->v.u); break;
	case K_I_PERCENT: rec_out_i64(v->v.i); break;
	case K_F: case K_F_PERCENT: case K_F_HZ:
		if (isfinite(v->v.f))
			out_float(v->v.f, false);
		else
			REC_OUT_LIT("null");
		break;
	case K_F32:
		if (isfinite(v->v.f))
			out_float(v->v.f, true);
		else
			REC_OUT_LIT("null");
		break;
	case K_STRING: out_string(v); break;
	case K_BLOB: rec_out_hex_bytes_json(v->v.s.ptr, v->v.s.ptr ? v->v.s.len : 0); break;
	case K_TIMESTAMP: rec_out_iso_quoted(rec_chunk_wall_ns(ev->chunk, v->v.u)); break;
	case K_DURATION:
		rec_out_i64(rec_ticks_to_ns(v->v.u > INT64_MAX ? INT64_MAX : (int64_t)v->v.u,
					    ev->chunk->tick_frequency));
		break;
	case K_THREAD: rec_out_thread_json(v->v.thread); break;
	case K_STACK: out_stack_json(v->v.stack); break;
	case K_UNKNOWN: REC_OUT_LIT("null"); break;
	case K_DROP_REASON: case K_DROP_TYPE: rec_out_u64(v->v.u); break;
	}
}

/* After rec.Dropped's reason and type: their names ("reasonName",
 * "typeName"; null when not known). */
static void out_name_json(const fmt_type *f, const fmt_field *ff, const rec_value *v,
			  const rec_event *ev)
{
	const char *n = NULL;
	if (ff->kind == K_DROP_REASON) {
		REC_OUT_LIT(", \"reasonName\": ");
		n = v->present ? rec_drop_reason_name(v->v.u) : NULL;
	} else {
		REC_OUT_LIT(", \"typeName\": ");
		n = v->present && v->v.u ? rec_cli_chunk_type_name(ev, v->v.u) : NULL;
	}
	(void)f;
	if (n)
		rec_out_json_string(n, strlen(n));
	else
		REC_OUT_LIT("null");
}

static void print_event_text(const fmt_type *f, const rec_event *ev)
{
	rec_out_write(f->text_head, f->text_head_len);
	REC_OUT_LIT("  startTime = ");
	rec_out_wall(ev->wall_ns);
	rec_out_char('\n');
	if (f->flags & REC_EVENT_HAS_DURATION) {
		REC_OUT_LIT("  duration = ");
		rec_out_duration(ev->duration_ns);
		rec_out_char('\n');
	}
	if (f->flags & REC_EVENT_HAS_THREAD) {
		REC_OUT_LIT("  eventThread = ");
		out_thread_text(ev->thread);
		rec_out_char('\n');
	}
	uint32_t n = ev->value_count < f->nfields ? ev->value_count : f->nfields;
	for (uint32_t i = 0; i < n; i++) {
		const fmt_field *ff = &f->fields[i];
		rec_out_write(ff->text_prefix, ff->text_len);
		if (ff->kind == K_STACK) {
			if (ev->values[i].present)
				out_stack_text(ev->values[i].v.stack);
			else
				REC_OUT_LIT("N/A\n");
			continue;
		}
		out_value_text(f, ff, &ev->values[i], ev);
		rec_out_char('\n');
	}
	if (f->flags & REC_EVENT_HAS_STACK) {
		REC_OUT_LIT("  stackTrace = ");
		out_stack_text(ev->stack);
	}
	REC_OUT_LIT("}\n\n");
}

static bool g_json_first = true;

/* --json-lines: after a time field (ISO 8601), the same time as integer ns
 * since the epoch under the field's name + "Ns" (its key is json_key,
 * ", \"NAME\": ", without the closing "\": "). */
static void out_epoch_ns_json(const fmt_field *ff, const rec_value *v, const rec_event *ev)
{
	int64_t ns;
	if (ff->kind == K_TIMESTAMP)
		ns = rec_chunk_wall_ns(ev->chunk, v->v.u);
	else if (ff->kind == K_U_EPOCH)
		ns = v->v.u > INT64_MAX ? INT64_MAX : (int64_t)v->v.u;
	else if (ff->kind == K_I_EPOCH)
		ns = v->v.i;
	else
		return;
	rec_out_write(ff->json_key, ff->json_len - 3);
	REC_OUT_LIT("Ns\": ");
	if (v->present)
		rec_out_i64(ns);
	else
		REC_OUT_LIT("null");
}

static void print_event_json(const fmt_type *f, const rec_event *ev)
{
	if (!g_json_first && !g_o->json_lines)
		REC_OUT_LIT(",\n");
	g_json_first = false;
	rec_out_write(f->json_head, f->json_head_len);
	REC_OUT_LIT("\"startTime\": ");
	rec_out_iso_quoted(ev->wall_ns);
	if (g_o->json_lines) {
		REC_OUT_LIT(", \"startTimeNs\": ");
		rec_out_i64(ev->wall_ns);
	}
	if (f->flags & REC_EVENT_HAS_DURATION) {
		REC_OUT_LIT(", \"duration\": ");
		rec_out_i64(ev->duration_ns);
	}
	if (f->flags & REC_EVENT_HAS_THREAD) {
		REC_OUT_LIT(", \"eventThread\": ");
		rec_out_thread_json(ev->thread);
	}
	uint32_t n = ev->value_count < f->nfields ? ev->value_count : f->nfields;
	for (uint32_t i = 0; i < n; i++) {
		const fmt_field *ff = &f->fields[i];
		rec_out_write(ff->json_key, ff->json_len);
		out_value_json(ff, &ev->values[i], ev);
		if (ff->kind == K_DROP_REASON || ff->kind == K_DROP_TYPE)
			out_name_json(f, ff, &ev->values[i], ev);
		if (g_o->json_lines)
			out_epoch_ns_json(ff, &ev->values[i], ev);
	}
	if (f->flags & REC_EVENT_HAS_STACK) {
		REC_OUT_LIT(", \"stackTrace\": ");
		out_stack_json(ev->stack);
	}
	if (g_o->json_lines)
		REC_OUT_LIT("}}\n");
	else
		REC_OUT_LIT("}}");
}

/* ---- the run ------------------------------------------------------------------------- */

static int print_one(void *ctx, const rec_event *ev)
{
	(void)ctx;
	fmt_type *f = fmt_lookup(ev);
	if (!f->selected)
		return REC_EXIT_OK;
	if (g_o->json)
		print_event_json(f, ev);
	else
		print_event_text(f, ev);
	return REC_EXIT_OK;
}

/* Print one input's events; returns the exit code contribution. */
static int print_file(const rec_cli_input *in)
{
	rec_reader *r = rec_cli_input_open(in, g_o->unsorted ? 0 : REC_READ_ORDERED);
	if (!r)
		return REC_EXIT_DATA;
	g_gen++;
	g_unsymbolized = 0;
	/* text: the note below, on stdout, counts the frames printed; JSON: on
	 * stderr, the frames without names that the file defines */
	rec_cli_note_unsymbolized = g_o->json || g_o->json_lines;
	int rc = rec_cli_each_event(r, in->name, print_one, NULL);
	if (g_unsymbolized && !g_o->json)
		rec_out_printf("note: %" PRIu64 " printed frame%s of modules with a build-id %s no name "
			    "(module+offset only): 'rec-symbolize IN OUT [--debug-dir DIR]' names "
			    "%s from debug files\n",
			    g_unsymbolized, g_unsymbolized == 1 ? "" : "s",
			    g_unsymbolized == 1 ? "has" : "have", g_unsymbolized == 1 ? "it" : "them");
	rec_reader_close(r);
	return rc;
}

static int print_all(const rec_cli_input *in, size_t n)
{
	if (filtering()) {
		bool all_rereadable = true;
		for (size_t i = 0; i < n; i++) {
			/* the chunk metadata only (cheap: no event is decoded), so
			 * that a bad name fails before anything is printed */
			(void)rec_cli_each_chunk(&in[i], note_chunk, NULL);
			all_rereadable &= rec_cli_input_rereadable(&in[i]);
		}
		if (all_rereadable && check_patterns(false) != REC_EXIT_OK)
			return REC_EXIT_USAGE;
	}
	int rc = REC_EXIT_OK;
	g_json_first = true;
	if (g_o->json && !g_o->json_lines)
		REC_OUT_LIT("{\"recording\": {\"events\": [\n");
	for (size_t i = 0; i < n; i++) {
		int frc = print_file(&in[i]);
		if (frc > rc)
			rc = frc;
	}
	if (g_o->json && !g_o->json_lines) {
		if (!g_json_first)
			rec_out_char('\n');
		REC_OUT_LIT("]}}\n");
	}
	if (filtering() && check_patterns(true) != REC_EXIT_OK)
		return REC_EXIT_USAGE; /* for pipes: only now do we know all the names */
	return rc;
}

int rec_print_run(const rec_print_opts *o, const rec_cli_input *in, size_t n, FILE *out,
		  FILE *err)
{
	if (!out)
		out = stdout;
	rec_cli_set_streams(out, err);
	g_o = o;
	rec_cli_typesel_init(&g_evsel, o->events, o->nevents, 0);
	rec_cli_typesel_init(&g_catsel, o->cats, o->ncats, REC_CLI_TYPESEL_CATEGORY);
	int rc = print_all(in, n);
	rec_out_flush();

	for (size_t i = 0; i < CACHE_SIZE; i++)
		fmt_free(&g_cache[i]);
	rec_cli_typesel_free(&g_evsel);
	rec_cli_typesel_free(&g_catsel);
	g_o = NULL;
	return rc;
}

/* ---- main: the arguments ------------------------------------------------------------- */
#ifndef REC_TOOL_NO_MAIN

static const char usage_text[] =
	"Usage: rec-print [OPTIONS] FILE...\n"
	"Print the events of rec recordings, one block per event (like jfr print).\n"
	"FILE may be '-' for standard input.  Files are printed one after another.\n"
	"\n"
	"Options:\n"
	"  --events NAME[,NAME...]     only events whose type name matches NAME\n"
	"                              (exact, or a glob with * ? [..]); repeatable\n"
	"  --categories CAT[,CAT...]   only events whose category path, or a\n"
	"                              '/'-prefix of it, matches CAT (exact or glob);\n"
	"                              repeatable.  With --events: either may match\n"
	"  --json                      one JSON document {\"recording\": {\"events\": [...]}}\n"
	"                              (integers are JSON numbers: values above 2^53\n"
	"                              lose precision in JavaScript parsers)\n"
	"  --json-lines                one JSON object per event and line, as in --json,\n"
	"                              with every time also as integer ns since the\n"
	"                              epoch (\"startTimeNs\", a time field's NAME + \"Ns\")\n"
	"  --stack-depth N             frames shown per stack trace (default 5, 0..4096)\n"
	"  --unsorted                  file order instead of timestamp order\n"
	"  -h, --help                  show this help and exit\n"
	"  --version                   show the library version and exit\n"
	"\n"
	"A NAME or CAT that matches no type of the input is an error that lists the\n"
	"names the input has (an input with no event types yet, such as a recording\n"
	"with no chunk written, prints nothing, says so, and exits 0).\n"
	"Times are local wall-clock times (set TZ to choose).\n"
	"Exit status: 0 success, 1 damaged or unreadable input (after printing every\n"
	"readable event), 2 usage error.\n";

enum { OPT_EVENTS = 256, OPT_CATEGORIES, OPT_JSON, OPT_STACK_DEPTH, OPT_UNSORTED,
       OPT_JSON_LINES };

static const struct option long_opts[] = {
	{ "events", required_argument, NULL, OPT_EVENTS },
	{ "categories", required_argument, NULL, OPT_CATEGORIES },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "json-lines", no_argument, NULL, OPT_JSON_LINES },
	{ "stack-depth", required_argument, NULL, OPT_STACK_DEPTH },
	{ "unsorted", no_argument, NULL, OPT_UNSORTED },
	REC_CLI_COMMON_OPTIONS,
};

int main(int argc, char **argv)
{
	rec_cli_init("rec-print");
	rec_cli_list events = { 0 }, cats = { 0 };
	rec_print_opts o = { .stack_depth = 5 };
	int c;
	while ((c = rec_cli_getopt(argc, argv, "h", long_opts)) != -1) {
		switch (c) {
		case OPT_EVENTS: rec_cli_opt_list(&events, "--events", "name", optarg); break;
		case OPT_CATEGORIES: {
			size_t before = cats.count;
			rec_cli_opt_list(&cats, "--categories", "category", optarg);
			/* "rec/Locks/" means the same as "rec/Locks" */
			for (size_t i = before; i < cats.count; i++) {
				char *cat = cats.items[i];
				size_t n = strlen(cat);
				while (n > 1 && cat[n - 1] == '/')
					cat[--n] = 0;
			}
			break;
		}
		case OPT_JSON: o.json = true; break;
		case OPT_JSON_LINES: o.json_lines = true; break;
		case OPT_STACK_DEPTH:
			o.stack_depth = (uint32_t)rec_cli_opt_u64("--stack-depth", optarg, 0,
								  REC_MAX_STACK_DEPTH);
			break;
		case OPT_UNSORTED: o.unsorted = true; break;
		default: rec_cli_common_option(c, usage_text);
		}
	}
	if (o.json && o.json_lines)
		rec_cli_usage_error("--json and --json-lines exclude each other");
	o.json = o.json || o.json_lines;
	size_t n;
	rec_cli_input *in = rec_cli_operands(argc, argv, &n);
	o.events = (const char *const *)events.items;
	o.nevents = events.count;
	o.cats = (const char *const *)cats.items;
	o.ncats = cats.count;
	int rc = rec_print_run(&o, in, n, NULL, NULL);
	free(in);
	rec_cli_list_free(&events);
	rec_cli_list_free(&cats);
	return rec_cli_finish(rc);
}
#endif /* REC_TOOL_NO_MAIN */
