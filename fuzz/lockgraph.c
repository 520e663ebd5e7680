/* SPDX-License-Identifier: MIT */
/*
 * lockgraph.c - fuzz rec-lockgraph's code path (rec_lockgraph_tool_run,
 * tools/rec-lockgraph.c) on an in-memory file: the wait-for graph with
 * every filter (--min-wait, --top, --thread glob, --from/--to offsets) and
 * the lock-order graph with --check (cycle reports), both written as DOT
 * with Graphviz's cgraph (agwrite) and read back with agmemread, which must
 * accept it.  Rendering (gvc dot layout to SVG/PNG/PDF) is left out: layout
 * costs milliseconds to seconds per graph, too slow for fuzzing, and is
 * Graphviz's code, not ours.
 */
#include <graphviz/cgraph.h>

#include "tool_fuzz.h"

static void check_dot(const rec_fuzz_tool *t, const char *what)
{
	if (!t->len)
		return; /* nothing written: an error before the output */
	char *copy = malloc(t->len + 1);
	REC_FUZZ_CHECK(copy, "out of memory");
	memcpy(copy, t->buf, t->len);
	copy[t->len] = 0;
	Agraph_t *g = agmemread(copy);
	REC_FUZZ_CHECK(g, "%s: agmemread rejects the DOT:\n%.*s", what,
		       (int)(t->len > 4000 ? 4000 : t->len), t->buf);
	rec_fuzz_sink += (uint64_t)agnnodes(g) + (uint64_t)agnedges(g);
	agclose(g);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rec_fuzz_tool t;
	rec_fuzz_tool_init(&t, "rec-lockgraph", data, size);

	rec_lockgraph_tool_opts w = { .format = "dot" };
	int rc = rec_lockgraph_tool_run(&w, &t.in, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
	rec_fuzz_tool_end(&t, rc, "lockgraph wait");
	check_dot(&t, "lockgraph wait");

	rec_lockgraph_tool_opts f = { .format = "dot", .min_wait_ns = 1000, .top = 2,
				      .thread = "*[0-9]*",
				      .window = { .from_kind = 1, .to_kind = 1, .from = 1000,
						  .to = 3600000000000 } };
	rc = rec_lockgraph_tool_run(&f, &t.in, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
	rec_fuzz_tool_end(&t, rc, "lockgraph wait filtered");
	check_dot(&t, "lockgraph wait filtered");

	rec_lockgraph_tool_opts o = { .order = true, .format = "dot", .check = true };
	rc = rec_lockgraph_tool_run(&o, &t.in, rec_fuzz_tool_begin(&t), rec_fuzz_devnull);
	rec_fuzz_tool_end(&t, rc, "lockgraph order");
	check_dot(&t, "lockgraph order");
	rec_fuzz_tool_free(&t);
	return 0;
}
