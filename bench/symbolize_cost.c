/* SPDX-License-Identifier: MIT */
/*
 * symbolize_cost - the symbolization benchmark's program (bench/symbolize.sh;
 * not built by make).
 *
 *   symbolize_cost cost N
 *     The recorder's symbolizer (stack_symbolizer.c over libdwfl, what the
 *     background thread runs once per distinct address) on N distinct
 *     addresses spread evenly over libc's code, taken as return addresses:
 *     the first lookup (opens libc and its debug file), N - 1 more distinct
 *     ones (uncached), then all N again (cached).  Prints the thread's CPU
 *     time: first_ms=F distinct_ns=D cached_ns=C (per address), named=K
 *     lines=L inlined=I (how many got a name, a line, inline frames), and
 *     the wall times wall_first_ms, wall_distinct_ns.
 *
 *   symbolize_cost work SECONDS
 *     A CPU-bound workload for recording (sorting, hashing, string handling,
 *     allocation: libc's qsort, memcpy, malloc), with small functions that
 *     -O2 inlines.  Built apart with -DSYMBOLIZE_WORK_ONLY and without
 *     librec (bench/symbolize.sh): a program that links librec.a records
 *     itself to REC_OUTPUT too, and rec-record's preload library would then
 *     be a second recorder writing the same file.
 */
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "record/stack_internal.h"

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The calling thread's CPU time: what symbolizing costs the background
 * thread, whatever else the machine runs. */
__attribute__((unused)) static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- cost -------------------------------------------------------------- */
#ifndef SYMBOLIZE_WORK_ONLY

typedef struct text_range {
	uintptr_t probe, lo, hi;
} text_range;

static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	text_range *t = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && t->probe >= lo && t->probe < hi) {
			t->lo = lo;
			t->hi = hi;
			return 1;
		}
	}
	return 0;
}

static int cost(size_t n)
{
	text_range t = { (uintptr_t)(void *)&qsort, 0, 0 };
	dl_iterate_phdr(find_text, &t);
	if (!t.hi || n < 2) {
		fprintf(stderr, "symbolize_cost: libc's code not found\n");
		return 1;
	}
	uintptr_t *addr = malloc(n * sizeof *addr);
	if (!addr)
		return 1;
	size_t step = (t.hi - t.lo) / (n + 1);
	for (size_t i = 0; i < n; i++)
		addr[i] = t.lo + (i + 1) * step + 1; /* +1: a return address is looked up at -1 */
	rec_symbolizer *s;
	if (rec_symbolizer_open(&s) != REC_OK)
		return 1;
	rec_symbol sym;
	double t0 = cpu_ns(), w0 = now_ns();
	rec_symbolizer_lookup(s, addr[0], &sym);
	double t1 = cpu_ns(), w1 = now_ns();
	size_t named = 0, lines = 0, inl = 0;
	for (size_t i = 1; i < n; i++) {
		rec_symbolizer_lookup(s, addr[i], &sym);
		named += sym.function[0] != 0;
		lines += sym.line != 0;
		inl += sym.inline_count != 0;
	}
	double t2 = cpu_ns(), w2 = now_ns();
	for (size_t i = 0; i < n; i++)
		rec_symbolizer_lookup(s, addr[i], &sym);
	double t3 = cpu_ns();
	printf("first_ms=%.2f distinct_ns=%.0f cached_ns=%.1f named=%zu lines=%zu inlined=%zu n=%zu "
	       "wall_first_ms=%.2f wall_distinct_ns=%.0f\n",
	       (t1 - t0) / 1e6, (t2 - t1) / (double)(n - 1), (t3 - t2) / (double)n, named, lines, inl,
	       n - 1, (w1 - w0) / 1e6, (w2 - w1) / (double)(n - 1));
	rec_symbolizer_close(s);
	free(addr);
	return 0;
}
#endif

/* ---- work -------------------------------------------------------------- */

static inline uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

__attribute__((noinline)) static uint64_t sort_round(uint64_t seed, size_t n)
{
	uint64_t *v = malloc(n * sizeof *v);
	if (!v)
		return 0;
	for (size_t i = 0; i < n; i++)
		v[i] = mix(seed + i);
	qsort(v, n, sizeof *v, cmp_u64);
	uint64_t r = v[n / 2];
	free(v);
	return r;
}

static inline size_t fill_text(char *buf, size_t cap, uint64_t x)
{
	return (size_t)snprintf(buf, cap, "key-%llu-%llx", (unsigned long long)x,
				(unsigned long long)mix(x));
}

__attribute__((noinline)) static uint64_t string_round(uint64_t seed, size_t n)
{
	uint64_t h = 0;
	char buf[64], copy[64];
	for (size_t i = 0; i < n; i++) {
		size_t len = fill_text(buf, sizeof buf, seed + i);
		memcpy(copy, buf, len + 1);
		h += strlen(copy) + (uint64_t)(strchr(copy, '-') - copy);
	}
	return h;
}

static int work(double seconds)
{
	double end = now_ns() + seconds * 1e9;
	uint64_t acc = 0, k = 0;
	while (now_ns() < end) {
		acc += sort_round(k, 20000);
		acc += string_round(k, 20000);
		k++;
	}
	printf("rounds=%llu acc=%llx\n", (unsigned long long)k, (unsigned long long)acc);
	return 0;
}

int main(int argc, char **argv)
{
#ifndef SYMBOLIZE_WORK_ONLY
	if (argc == 3 && strcmp(argv[1], "cost") == 0)
		return cost((size_t)strtoull(argv[2], NULL, 10));
#endif
	if (argc == 3 && strcmp(argv[1], "work") == 0)
		return work(strtod(argv[2], NULL));
	fprintf(stderr, "usage: symbolize_cost cost N | work SECONDS\n");
	return 2;
}
