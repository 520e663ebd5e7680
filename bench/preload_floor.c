/* SPDX-License-Identifier: MIT */
/*
 * preload_floor - the least an LD_PRELOAD interposer that times a call can
 * cost (bench/preload.sh; not built by make): read and write wrapped the
 * way librec-preload.so's I/O interposers are at their core, and nothing
 * else.  Each reads the TSC, calls the next definition of the function
 * (dlsym(RTLD_NEXT), looked up once at load), reads the TSC again and
 * compares the difference with a threshold (10 ms at 1 GHz: never true
 * here).  What preload_calls' read costs under it, against the same read
 * timed by hand inside the program, is the price of interposing at all
 * (one more call and return, an indirect call), which no interposer
 * avoids; the preload's own checks are what it costs beyond that.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <unistd.h>

#include "tsc.h"

ssize_t read(int fd, void *buf, size_t n);
ssize_t write(int fd, const void *buf, size_t n);

static ssize_t (*next_read)(int, void *, size_t);
static ssize_t (*next_write)(int, const void *, size_t);
static volatile unsigned long over;

__attribute__((constructor)) static void resolve(void)
{
	next_read = (ssize_t(*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	next_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
}


#define THRESHOLD 10000000ull

ssize_t read(int fd, void *buf, size_t n)
{
	if (__builtin_expect(next_read == NULL, 0)) /* called before the constructor */
		resolve();
	uint64_t t0 = bench_tsc();
	ssize_t rc = next_read(fd, buf, n);
	if (bench_tsc() - t0 >= THRESHOLD)
		over++;
	return rc;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	if (__builtin_expect(next_write == NULL, 0))
		resolve();
	uint64_t t0 = bench_tsc();
	ssize_t rc = next_write(fd, buf, n);
	if (bench_tsc() - t0 >= THRESHOLD)
		over++;
	return rc;
}
