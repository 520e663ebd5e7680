/* SPDX-License-Identifier: MIT */
/*
 * values.c - values written the way every rec-* tool shows them (cli.h,
 * "values as the tools show them"): times, durations, sizes, threads, bytes.
 */
#include "cli.h"

void rec_out_wall(int64_t epoch_ns)
{
	char *p = rec_out_reserve(64);
	rec_out_commit(rec_fmt_wall(p, epoch_ns));
}

void rec_out_iso_quoted(int64_t epoch_ns)
{
	char *p = rec_out_reserve(64);
	p[0] = '"';
	size_t n = rec_fmt_iso(p + 1, epoch_ns);
	p[n + 1] = '"';
	rec_out_commit(n + 2);
}

void rec_out_duration(int64_t ns)
{
	char *p = rec_out_reserve(64);
	rec_out_commit(rec_fmt_duration(p, ns));
}

void rec_out_bytes(uint64_t bytes)
{
	char *p = rec_out_reserve(64);
	rec_out_commit(rec_fmt_bytes(p, bytes));
}

void rec_out_hex_bytes_json(const char *p, size_t len)
{
	static const char hx[] = "0123456789abcdef";
	rec_out_char('"');
	for (size_t i = 0; p && i < len; i++) {
		unsigned char c = (unsigned char)p[i];
		rec_out_char(hx[c >> 4]);
		rec_out_char(hx[c & 15]);
	}
	rec_out_char('"');
}

void rec_out_thread_json(const rec_thread *t)
{
	if (!t) {
		REC_OUT_LIT("null");
		return;
	}
	REC_OUT_LIT("{\"name\": ");
	rec_out_json_cstr(t->name ? t->name : "");
	REC_OUT_LIT(", \"tid\": ");
	rec_out_u64(t->os_tid);
	rec_out_char('}');
}

void rec_out_frame_json(const rec_frame *fr)
{
	if (!fr) {
		REC_OUT_LIT("null");
		return;
	}
	bool named = fr->function && *fr->function;
	REC_OUT_LIT("{\"function\": ");
	rec_out_json_cstr(named ? fr->function : NULL);
	REC_OUT_LIT(", \"functionOffset\": ");
	if (named && !fr->inline_depth) {
		rec_out_char('"');
		rec_out_hex(fr->function_offset);
		rec_out_char('"');
	} else {
		REC_OUT_LIT("null");
	}
	REC_OUT_LIT(", \"module\": ");
	rec_out_json_cstr(fr->module && fr->module->path && *fr->module->path ? fr->module->path : NULL);
	REC_OUT_LIT(", \"moduleOffset\": \"");
	rec_out_hex(fr->module_offset);
	REC_OUT_LIT("\", \"file\": ");
	rec_out_json_cstr(fr->file && *fr->file ? fr->file : NULL);
	REC_OUT_LIT(", \"line\": ");
	if (fr->line)
		rec_out_u64(fr->line);
	else
		REC_OUT_LIT("null");
	REC_OUT_LIT(", \"inline\": ");
	rec_out_u64(fr->inline_depth);
	rec_out_char('}');
}

char *rec_cli_json_quoted(const char *s, const char *suffix)
{
	rec_out_flush();
	size_t mark = rec_out_g.len;
	/* at most 6 x 4096 bytes: far below the buffer's size */
	rec_out_json_string(s ? s : "", s ? strnlen(s, 4096) : 0);
	rec_out_str(suffix);
	size_t n = rec_out_g.len - mark;
	char *p = rec_cli_xmalloc(n + 1);
	memcpy(p, rec_out_g.buf + mark, n);
	p[n] = 0;
	rec_out_g.len = mark;
	return p;
}

const char *rec_cli_chunk_type_name(const rec_event *ev, uint64_t id)
{
	for (uint32_t k = 0; k < ev->chunk->type_count; k++)
		if (ev->chunk->types[k].id == id)
			return ev->chunk->types[k].name;
	return NULL;
}

void rec_out_input_names(const rec_cli_input *in, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		rec_out_char(' ');
		rec_out_str(in[i].name);
	}
}
