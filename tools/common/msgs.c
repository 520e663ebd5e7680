/* SPDX-License-Identifier: MIT */
/*
 * msgs.c - the tools' messages and exit codes (cli.h, "messages and exit codes"):
 * the tool name, where messages go, errors, reader problems, usage errors,
 * --version and --help.
 */
#include "cli.h"
#include "common/common_internal.h" /* rec_fnv1a */

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *g_tool = "rec";
static char g_stdout_buf[1u << 20];
static FILE *g_err; /* NULL: stderr */

#define ERR (g_err ? g_err : stderr)

void rec_cli_init(const char *tool)
{
	g_tool = tool;
	setvbuf(stdout, g_stdout_buf, _IOFBF, sizeof g_stdout_buf);
	rec_out_g.buf = malloc(REC_OUT_SIZE);
	if (!rec_out_g.buf) {
		fprintf(ERR, "%s: out of memory\n", g_tool);
		exit(REC_EXIT_DATA);
	}
	if (rec_version_number() != REC_VERSION_NUMBER) {
		fprintf(ERR, "%s: library version %s differs from the tool's %d.%d.%d\n", g_tool,
			rec_version_string(), REC_VERSION_MAJOR, REC_VERSION_MINOR, REC_VERSION_PATCH);
		exit(REC_EXIT_DATA);
	}
}

const char *rec_cli_tool(void) { return g_tool; }

void rec_cli_set_streams(FILE *out, FILE *err)
{
	rec_out_flush();
	rec_out_g.file = out;
	g_err = err;
}

FILE *rec_cli_err(void) { return ERR; }

void rec_cli_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(ERR, "%s: ", g_tool);
	va_start(ap, fmt);
	vfprintf(ERR, fmt, ap);
	va_end(ap);
	fputc('\n', ERR);
}

void rec_cli_file_error(const char *file, const char *fmt, ...)
{
	va_list ap;
	fprintf(ERR, "%s: %s: ", g_tool, file);
	va_start(ap, fmt);
	vfprintf(ERR, fmt, ap);
	va_end(ap);
	fputc('\n', ERR);
}

/* The problems said so far, a hash of each (file, chunk, offset, what), so
 * that a reading of the same inputs again (rec_cli_reading_again()) does
 * not say them twice. */
static rec_cli_idmap g_said;
static bool g_again;

void rec_cli_reading_again(void) { g_again = true; }

void rec_cli_problems_forget(void)
{
	rec_cli_idmap_free(&g_said);
	g_again = false;
}

void rec_cli_problem(const char *file, const rec_problem *p, rec_status status)
{
	uint64_t h = rec_fnv1a(REC_NAME_HASH_SEED, file, strlen(file) + 1);
	if (p) {
		h = rec_fnv1a(h, &p->chunk, sizeof p->chunk);
		h = rec_fnv1a(h, &p->offset, sizeof p->offset);
		if (p->message)
			h = rec_fnv1a(h, p->message, strlen(p->message));
	}
	h = rec_fnv1a(h, &status, sizeof status);
	if (!rec_cli_idmap_add(&g_said, h ? h : 1) && g_again)
		return;
	if (!p || !p->message || !*p->message) {
		if (p && p->chunk >= 0)
			fprintf(ERR, "%s: %s: chunk %" PRId64 " at offset %" PRIu64 ": %s\n", g_tool,
				file, p->chunk, p->offset, rec_strerror(p->status ? p->status : status));
		else if (p)
			fprintf(ERR, "%s: %s: at offset %" PRIu64 ": %s\n", g_tool, file, p->offset,
				rec_strerror(p->status ? p->status : status));
		else
			fprintf(ERR, "%s: %s: %s\n", g_tool, file, rec_strerror(status));
		return;
	}
	const char *msg = p->message; /* what went wrong; chunk and offset are fields */
	if (p->chunk >= 0)
		fprintf(ERR, "%s: %s: chunk %" PRId64 " at offset %" PRIu64 ": %s\n", g_tool, file,
			p->chunk, p->offset, msg);
	else
		fprintf(ERR, "%s: %s: at offset %" PRIu64 ": %s\n", g_tool, file, p->offset, msg);
}

static void usage_message(const char *fmt, va_list ap) REC_CLI_PRINTF(1, 0);
static void usage_message(const char *fmt, va_list ap)
{
	(void)rec_cli_out_sync();
	fprintf(ERR, "%s: ", g_tool);
	vfprintf(ERR, fmt, ap);
	fprintf(ERR, "\ntry '%s --help'\n", g_tool);
}

void rec_cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	usage_message(fmt, ap);
	va_end(ap);
	exit(REC_EXIT_USAGE);
}

int rec_cli_usage_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	usage_message(fmt, ap);
	va_end(ap);
	return REC_EXIT_USAGE;
}

void rec_cli_version(void)
{
	printf("%s\n", rec_version_string());
	exit(rec_cli_finish(REC_EXIT_OK));
}

void rec_cli_help(const char *text)
{
	fputs(text, stdout);
	exit(rec_cli_finish(REC_EXIT_OK));
}
