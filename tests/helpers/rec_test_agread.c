/* SPDX-License-Identifier: MIT */
/*
 * rec_test_agread.c - reads a DOT file back with Graphviz's agread and prints
 * what it holds, for tests/cli/lockgraph.sh:
 *   graph NAME directed=0|1 strict=0|1 nodes=N edges=E
 *   node NAME key=value ...        (every declared node attribute, sorted by key)
 *   edge TAIL -> HEAD key=value ...
 * Values are printed as stored (newlines as \n).  Exits 0, or 1 if the file
 * cannot be opened or parsed.
 *   rec_test_agread FILE.dot
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <graphviz/cgraph.h>

static void print_value(const char *v)
{
	for (const char *p = v; *p; p++) {
		if (*p == '\n')
			fputs("\\n", stdout);
		else
			putchar(*p);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void print_attrs(Agraph_t *g, void *obj, int kind)
{
	char *names[256];
	size_t n = 0;
	for (Agsym_t *s = agnxtattr(g, kind, NULL); s && n < 256; s = agnxtattr(g, kind, s))
		names[n++] = s->name;
	qsort(names, n, sizeof names[0], cmp_str);
	for (size_t i = 0; i < n; i++) {
		char *v = agget(obj, names[i]);
		printf(" %s=", names[i]);
		print_value(v ? v : "");
	}
	putchar('\n');
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: rec_test_agread FILE.dot\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	Agraph_t *g = agread(f, NULL);
	fclose(f);
	if (!g) {
		fprintf(stderr, "rec_test_agread: %s: agread failed\n", argv[1]);
		return 1;
	}
	printf("graph %s directed=%d strict=%d nodes=%d edges=%d\n", agnameof(g), agisdirected(g) ? 1 : 0,
	       agisstrict(g) ? 1 : 0, agnnodes(g), agnedges(g));
	for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n)) {
		printf("node %s", agnameof(n));
		print_attrs(g, n, AGNODE);
	}
	for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n)) {
		for (Agedge_t *e = agfstout(g, n); e; e = agnxtout(g, e)) {
			printf("edge %s -> %s", agnameof(agtail(e)), agnameof(aghead(e)));
			print_attrs(g, e, AGEDGE);
		}
	}
	agclose(g);
	if (fflush(stdout) != 0 || ferror(stdout))
		return 1;
	return 0;
}
