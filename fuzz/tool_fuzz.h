/* SPDX-License-Identifier: MIT */
/*
 * tool_fuzz.h - what the harnesses of the tools (print.c, flame.c,
 * lockgraph.c, timeline.c) share: the input as a rec_cli_input in memory
 * with the harness reader limits, the tool's output captured in memory
 * (open_memstream) for checks, messages to /dev/null.
 */
#ifndef REC_FUZZ_TOOL_FUZZ_H
#define REC_FUZZ_TOOL_FUZZ_H

#include <stdio.h>
#include <stdlib.h>

#include "../tools/common/tools.h"
#include "fuzz.h"

typedef struct rec_fuzz_tool {
	rec_reader_options ro;
	rec_cli_input in;
	FILE *out;   /* the open capture */
	char *buf;   /* the output after rec_fuzz_tool_end() */
	size_t len;
} rec_fuzz_tool;

static FILE *rec_fuzz_devnull;

#define REC_FUZZ_CHECK(cond, ...)                                      \
	do {                                                           \
		if (!(cond)) {                                         \
			fprintf(stderr, __VA_ARGS__);                  \
			fputc('\n', stderr);                           \
			abort();                                       \
		}                                                      \
	} while (0)

/* Once per process: the tools' output buffer and a sink for messages. */
static inline void rec_fuzz_tool_init(rec_fuzz_tool *t, const char *tool, const uint8_t *data,
				      size_t size)
{
	if (!rec_fuzz_devnull) {
		rec_cli_init(tool);
		rec_fuzz_devnull = fopen("/dev/null", "w");
		REC_FUZZ_CHECK(rec_fuzz_devnull, "cannot open /dev/null");
	}
	memset(t, 0, sizeof *t);
	t->ro = rec_fuzz_options(0);
	t->in.name = "fuzz.rec";
	t->in.data = data;
	t->in.size = size;
	t->in.base = &t->ro;
}

/* A fresh capture for one run of a tool. */
static inline FILE *rec_fuzz_tool_begin(rec_fuzz_tool *t)
{
	free(t->buf);
	t->buf = NULL;
	t->len = 0;
	t->out = open_memstream(&t->buf, &t->len);
	REC_FUZZ_CHECK(t->out, "open_memstream failed");
	return t->out;
}

/* End the run: the output is in t->buf, t->len; checks the exit code. */
static inline void rec_fuzz_tool_end(rec_fuzz_tool *t, int rc, const char *what)
{
	rec_cli_set_streams(NULL, NULL);
	rec_cli_problems_forget();
	REC_FUZZ_CHECK(fclose(t->out) == 0, "%s: closing the capture failed", what);
	t->out = NULL;
	REC_FUZZ_CHECK(rc >= REC_EXIT_OK && rc <= REC_EXIT_CYCLE, "%s: exit code %d", what, rc);
	rec_fuzz_touch(t->buf, t->len);
}

static inline void rec_fuzz_tool_free(rec_fuzz_tool *t)
{
	free(t->buf);
	t->buf = NULL;
}

#endif /* REC_FUZZ_TOOL_FUZZ_H */
