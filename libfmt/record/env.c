/* SPDX-License-Identifier: MIT */
/*
 * env.c - start the default recorder from the environment with no code
 * change beyond linking: REC_OUTPUT=run.rec (and REC_OPTIONS=...) open it in
 * a library constructor and an atexit handler closes it (FINAL chunk; in
 * flight mode the retained data is written to REC_OUTPUT), like JFR's
 * dumponexit=true.  Also the REC_OPTIONS parser and the size parser (the
 * duration parser is rec_parse_duration(), libfmt/common/duration.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rec/builtins.h"
#include "record/recorder_internal.h"
#include "record/builtin_internal.h"
#include "record/stack_internal.h"
#include "record/wall_internal.h"

int rec_env_linked_;

static int64_t parse_scaled(const char *s, size_t len, const char *const *units,
			    const int64_t *scale, size_t nunits)
{
	size_t i = 0;
	double v = 0, frac = 0, div = 1;
	bool digits = false, dot = false;
	for (; i < len; i++) {
		char c = s[i];
		if (c >= '0' && c <= '9') {
			digits = true;
			if (dot) {
				div *= 10;
				frac += (c - '0') / div;
			} else {
				v = v * 10 + (c - '0');
			}
		} else if (c == '.' && !dot) {
			dot = true;
		} else {
			break;
		}
	}
	if (!digits)
		return -1;
	v += frac;
	size_t ul = len - i;
	for (size_t u = 0; u < nunits; u++) {
		if (strlen(units[u]) == ul && strncmp(s + i, units[u], ul) == 0) {
			double r = v * (double)scale[u];
			if (r > 9.0e18)
				return -1;
			return (int64_t)(r + 0.5);
		}
	}
	return -1;
}

/* The one duration grammar (rec_parse_duration(), libfmt/common/duration.c),
 * as recorder_internal.h's -1-on-error helper. */
int64_t rec_parse_duration_ns(const char *s, size_t len)
{
	int64_t ns;
	return rec_parse_duration(s, len, &ns) == REC_OK ? ns : -1;
}

int64_t rec_parse_size(const char *s, size_t len)
{
	static const char *const units[] = { "", "B", "k", "K", "KiB", "KB", "M", "MiB", "MB",
					      "G", "GiB", "GB" };
	static const int64_t scale[] = { 1, 1, 1024, 1024, 1024, 1024, 1 << 20, 1 << 20,
					 1 << 20, 1 << 30, 1 << 30, 1 << 30 };
	return parse_scaled(s, len, units, scale, 12);
}

static bool key_is(const char *k, size_t kl, const char *name)
{
	return strlen(name) == kl && memcmp(k, name, kl) == 0;
}

#define REC_OPTION_KEYS                                                                    \
	"the options are codec, level, layout, chunk, flush, memory, buffer, full, flight, crash, " \
	"maxage, maxsize, signal, events, quiet, cpu, alloc, io, duration, forks, wall, symbolize"

/* What a key accepts, for the error message; NULL for an unknown key.  The
 * errors name the option and these (REC_OPTIONS=codec=gzip is
 * "bad option 'codec=gzip' (codec is none, zstd or lz4)"). */
static const char *option_values(const char *k, size_t kl)
{
	static const struct {
		const char *key, *values;
	} tab[] = {
		{ "codec", "codec is none, zstd or lz4" },
		{ "level", "level is an integer from -100 to 100" },
		{ "layout", "layout is split (format 1.3: EVENTS in four streams, the default) or "
			    "one (one stream, what readers of format 1.2 and older read)" },
		{ "chunk", "chunk is a size up to 256MiB, like 1MiB or 65536" },
		{ "flush", "flush is a duration from 1ms to below 1h, like 500ms or 2s" },
		{ "memory", "memory is a size, like 64MiB" },
		{ "buffer", "buffer is a size up to 1GiB, like 256KiB" },
		{ "full", "full is drop or wait" },
		{ "flight", "flight is on, off, 1 or 0" },
		{ "crash", "crash is on, off, 1 or 0" },
		{ "symbolize", "symbolize is on (names; files and lines outside the system's "
			       "libraries), all (files and lines everywhere), names or off (frames "
			       "keep module + offset for rec-symbolize)" },
		{ "maxage", "maxage is a duration, like 10min" },
		{ "maxsize", "maxsize is a size, like 64MiB" },
		{ "signal", "signal is a signal number from 1 to 64 or none" },
		{ "events", "events is PATTERN[:threshold=DUR][:stack=on|off][:enabled=on|off]"
			    "[:throttle=N/UNIT] entries separated by ';'" },
		{ "quiet", "quiet is on, off, 1 or 0" },
		{ "cpu", "cpu is a CPU sampling rate in Hz from 0 (off) to 10000" },
		{ "alloc", "alloc is the mean bytes between allocation samples, like 512KiB, "
			   "0 = off" },
		{ "forks", "forks is off (a forked child is not recorded) or on (each child "
			   "records into the file's name with its pid inserted)" },
		{ "wall", "wall is a wall-clock sampling rate in Hz from 0 (off) to 1000, for a "
			  "program recorded through the preload library (rec-record --wall)" },
		{ "io", "io is the blocking I/O threshold, a duration like 10ms" },
		{ "duration", "duration is how long to record, a duration above 0 like 10s "
			      "(the program goes on)" },
		{ "threshold", "unknown option; a threshold is set per type: "
			       "events=PATTERN:threshold=DUR" },
	};
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (key_is(k, kl, tab[i].key))
			return tab[i].values;
	return NULL;
}

static bool parse_quiet(const char *v, size_t vl, int *q)
{
	if ((vl == 2 && memcmp(v, "on", 2) == 0) || (vl == 1 && *v == '1'))
		*q = 1;
	else if ((vl == 3 && memcmp(v, "off", 3) == 0) || (vl == 1 && *v == '0'))
		*q = 0;
	else
		return false;
	return true;
}

/* The process-wide settings REC_OPTIONS may carry beside the recorder's
 * (they are no recorder option: env_start applies them): cpu=HZ (the CPU
 * sampling period 1/HZ, 0 = off), alloc=SIZE (rec_alloc_set_sample_interval,
 * 0 = off), io=DUR (rec.IO's threshold, for the preload library),
 * duration=DUR (close the recording DUR after it opened, above 0),
 * forks=on|off (a fork child records into its own file, or not at all:
 * rec_env_fork_child_()), wall=HZ (wall_sampler.c's rate, 0 = off).  *u is the value to apply. */
static bool parse_process_option(const char *k, size_t kl, const char *v, size_t vl, uint64_t *u)
{
	char buf[24];
	if (key_is(k, kl, "forks")) {
		int q = 0;
		bool ok = parse_quiet(v, vl, &q); /* the same on/off/1/0 */
		*u = (uint64_t)q;
		return ok;
	}
	if (key_is(k, kl, "alloc") || key_is(k, kl, "io") || key_is(k, kl, "duration")) {
		int64_t x = key_is(k, kl, "alloc") ? rec_parse_size(v, vl) : rec_parse_duration_ns(v, vl);
		*u = (uint64_t)x;
		return x > 0 || (x == 0 && !key_is(k, kl, "duration"));
	}
	/* cpu, wall: an integer number of Hz */
	if (vl == 0 || vl >= sizeof buf || strspn(v, "0123456789") < vl)
		return false;
	memcpy(buf, v, vl);
	buf[vl] = 0;
	unsigned long hz = strtoul(buf, NULL, 10);
	if (hz > (key_is(k, kl, "wall") ? 1000u : 10000u))
		return false;
	*u = hz == 0 ? 0 : 1000000000u / hz;
	return true;
}

static uint64_t g_env_duration_ns; /* duration=, 0 = until exit */
static int g_env_forks;             /* forks=on */

/* Apply cpu=, alloc=, io= and duration= of a REC_OPTIONS that parsed (the
 * last one wins). */
static void env_apply_process_options(const char *opt)
{
	for (const char *p = opt; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', n);
		uint64_t u;
		if (eq && parse_process_option(p, (size_t)(eq - p), eq + 1, n - (size_t)(eq - p) - 1,
					       &u)) {
			if (key_is(p, (size_t)(eq - p), "cpu"))
				rec_cpu_sampler_set_period(u);
			else if (key_is(p, (size_t)(eq - p), "alloc"))
				rec_alloc_set_sample_interval(u);
			else if (key_is(p, (size_t)(eq - p), "io"))
				rec_io_set_threshold(u);
			else if (key_is(p, (size_t)(eq - p), "duration"))
				g_env_duration_ns = u;
			else if (key_is(p, (size_t)(eq - p), "forks"))
				g_env_forks = (int)u;
			else if (key_is(p, (size_t)(eq - p), "wall"))
				rec_wall_set_period(u);
		}
		p = end ? end + 1 : p + n;
	}
}

/* Copy v (vl bytes) into storage; ';' becomes ',' (events lists). */
static const char *store(char **sp, size_t *left, const char *v, size_t vl)
{
	if (!*sp || vl >= *left)
		return NULL;
	char *out = *sp;
	for (size_t i = 0; i < vl; i++)
		out[i] = v[i] == ';' ? ',' : v[i];
	out[vl] = 0;
	*sp += vl + 1;
	*left -= vl + 1;
	return out;
}

rec_status rec_recorder_options_parse(rec_recorder_options *o, const char *text, char *storage,
				      size_t storage_size, char *errbuf, size_t errbuf_size)
{
	const char *p = text;
	char *sp = storage;
	size_t left = storage ? storage_size : 0;

	if (!o || !text)
		return REC_ERR_INVALID_ARG;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', n);
		if (n == 0) {
			p = end ? end + 1 : p + n;
			continue;
		}
		bool ok = eq != NULL;
		const char *accepted = eq ? NULL : "an option is key=value";
		if (ok) {
			const char *k = p, *v = eq + 1;
			size_t kl = (size_t)(eq - p), vl = n - kl - 1;
			int64_t x;
			accepted = option_values(k, kl);
			if (key_is(k, kl, "codec")) {
				if (vl == 4 && memcmp(v, "none", 4) == 0)
					o->codec = REC_CODEC_NONE;
				else if (vl == 4 && memcmp(v, "zstd", 4) == 0)
					o->codec = REC_CODEC_ZSTD;
				else if (vl == 3 && memcmp(v, "lz4", 3) == 0)
					o->codec = REC_CODEC_LZ4;
				else
					ok = false;
			} else if (key_is(k, kl, "layout")) {
				if (vl == 5 && memcmp(v, "split", 5) == 0)
					o->events_layout = REC_EVENTS_SPLIT;
				else if (vl == 3 && memcmp(v, "one", 3) == 0)
					o->events_layout = REC_EVENTS_ONE_STREAM;
				else
					ok = false;
			} else if (key_is(k, kl, "level")) {
				char buf[16];
				ok = vl > 0 && vl < sizeof buf;
				if (ok) {
					memcpy(buf, v, vl);
					buf[vl] = 0;
					char *e;
					long l = strtol(buf, &e, 10);
					ok = *e == 0 && l >= -100 && l <= 100;
					o->level = (int32_t)l;
				}
			} else if (key_is(k, kl, "chunk")) {
				ok = (x = rec_parse_size(v, vl)) > 0 && x <= (int64_t)REC_MAX_SECTION_RAW;
				o->chunk_size = (uint32_t)x;
			} else if (key_is(k, kl, "flush")) {
				ok = (x = rec_parse_duration_ns(v, vl)) >= 1000000 && x < 3600000000000;
				o->flush_interval_ms = (uint32_t)(x / 1000000);
			} else if (key_is(k, kl, "memory")) {
				ok = (x = rec_parse_size(v, vl)) > 0;
				o->memory_limit = (uint64_t)x;
			} else if (key_is(k, kl, "buffer")) {
				ok = (x = rec_parse_size(v, vl)) > 0 && x <= (1 << 30);
				o->thread_buffer_size = (uint32_t)x;
			} else if (key_is(k, kl, "full")) {
				if (vl == 4 && memcmp(v, "drop", 4) == 0)
					o->full_policy = REC_FULL_DROP;
				else if (vl == 4 && memcmp(v, "wait", 4) == 0)
					o->full_policy = REC_FULL_WAIT;
				else
					ok = false;
			} else if (key_is(k, kl, "flight")) {
				if ((vl == 2 && memcmp(v, "on", 2) == 0) || (vl == 1 && *v == '1'))
					o->flags |= REC_RECORDER_FLIGHT;
				else if ((vl == 3 && memcmp(v, "off", 3) == 0) || (vl == 1 && *v == '0'))
					o->flags &= ~REC_RECORDER_FLIGHT;
				else
					ok = false;
			} else if (key_is(k, kl, "crash")) {
				if ((vl == 2 && memcmp(v, "on", 2) == 0) || (vl == 1 && *v == '1'))
					o->flags = (o->flags & ~REC_RECORDER_NO_CRASH) | REC_RECORDER_CRASH;
				else if ((vl == 3 && memcmp(v, "off", 3) == 0) || (vl == 1 && *v == '0'))
					o->flags = (o->flags & ~REC_RECORDER_CRASH) | REC_RECORDER_NO_CRASH;
				else
					ok = false;
			} else if (key_is(k, kl, "symbolize")) {
				const uint32_t sym = REC_RECORDER_NO_SYMBOLIZE | REC_RECORDER_ALL_SOURCES |
						     REC_RECORDER_NO_SOURCES;
				if ((vl == 2 && memcmp(v, "on", 2) == 0) || (vl == 1 && *v == '1'))
					o->flags &= ~sym;
				else if (vl == 3 && memcmp(v, "all", 3) == 0)
					o->flags = (o->flags & ~sym) | REC_RECORDER_ALL_SOURCES;
				else if (vl == 5 && memcmp(v, "names", 5) == 0)
					o->flags = (o->flags & ~sym) | REC_RECORDER_NO_SOURCES;
				else if ((vl == 3 && memcmp(v, "off", 3) == 0) || (vl == 1 && *v == '0'))
					o->flags = (o->flags & ~sym) | REC_RECORDER_NO_SYMBOLIZE;
				else
					ok = false;
			} else if (key_is(k, kl, "maxage")) {
				ok = (x = rec_parse_duration_ns(v, vl)) >= 0;
				o->max_age_ms = (uint64_t)x / 1000000u;
			} else if (key_is(k, kl, "maxsize")) {
				ok = (x = rec_parse_size(v, vl)) > 0;
				o->max_size = (uint64_t)x;
			} else if (key_is(k, kl, "signal")) {
				if (vl == 4 && memcmp(v, "none", 4) == 0) {
					o->dump_signal = -1;
				} else {
					ok = (x = rec_parse_size(v, vl)) > 0 && x < 65;
					o->dump_signal = (int32_t)x;
				}
			} else if (key_is(k, kl, "events")) {
				const char *s = store(&sp, &left, v, vl);
				ok = s != NULL;
				o->events = s;
				if (!ok && storage && vl > 0)
					accepted = "a list that fits the storage given";
			} else if (key_is(k, kl, "quiet")) {
				int q;
				ok = parse_quiet(v, vl, &q); /* REC_OUTPUT's messages: env_start */
			} else if (key_is(k, kl, "cpu") || key_is(k, kl, "alloc") ||
				   key_is(k, kl, "io") || key_is(k, kl, "duration") ||
				   key_is(k, kl, "forks") || key_is(k, kl, "wall")) {
				uint64_t u;
				ok = parse_process_option(k, kl, v, vl, &u); /* applied by env_start */
			} else {
				ok = false;
			}
		}
		if (!ok) {
			if (errbuf && errbuf_size)
				snprintf(errbuf, errbuf_size, "bad option '%.*s' (%s)", (int)n, p,
					 accepted ? accepted : "unknown option; " REC_OPTION_KEYS);
			return REC_ERR_INVALID_ARG;
		}
		p = end ? end + 1 : p + n;
	}
	return REC_OK;
}

/* ---- REC_OUTPUT ----------------------------------------------------------- */
/* Started from the environment, the recorder's configuration is the user's
 * command line, so what goes wrong is said on stderr, one line in the shape
 * "rec: REC_OUTPUT=PATH: REASON; WHAT HAPPENS" (or REC_OPTIONS=TEXT), unless
 * REC_OPTIONS has quiet=1: a file that cannot be opened, a REC_OPTIONS that
 * is not valid (nothing is recorded then), and the first failed write (the
 * recorder drops chunks until a write succeeds).  The API itself
 * (rec_recorder_open() and the rest) never prints: it returns errors. */
static rec_recorder *g_env_recorder;
static char g_env_storage[4096];
static const char *g_env_file; /* the path opened (REC_OUTPUT, %p replaced) */
static int g_env_quiet;
static int g_env_write_said;
static rec_recorder_options g_env_options; /* as opened, for forks=on */

__attribute__((format(printf, 1, 2))) static void env_say(const char *fmt, ...)
{
	if (g_env_quiet)
		return;
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	/* One write: the line is not interleaved with the program's output. */
	ssize_t w;
	do
		w = write(STDERR_FILENO, line, (size_t)n);
	while (w < 0 && errno == EINTR);
}

int rec_env_quiet_(void)
{
	return g_env_quiet;
}

/* quiet=1|on|0|off anywhere in REC_OPTIONS (the last one wins); also when
 * the rest of it is not valid. */
static int env_quiet(const char *opt)
{
	int q = 0;
	for (const char *p = opt; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n > 6 && memcmp(p, "quiet=", 6) == 0)
			(void)parse_quiet(p + 6, n - 6, &q);
		p = end ? end + 1 : p + n;
	}
	return q;
}

/* The recorder's error callback (its background thread, or close): a
 * failed write is "recorder: writing PATH failed: REASON; ...". */
static void env_on_error(void *opaque, rec_status st, const char *msg)
{
	(void)opaque;
	if (st != REC_ERR_IO || !msg || !g_env_file)
		return;
	static const char pre[] = "recorder: writing ";
	size_t fl = strlen(g_env_file);
	if (strncmp(msg, pre, sizeof pre - 1) == 0 &&
	    strncmp(msg + sizeof pre - 1, g_env_file, fl) == 0 &&
	    strncmp(msg + sizeof pre - 1 + fl, " failed: ", 9) == 0) {
		const char *reason = msg + sizeof pre - 1 + fl + 9;
		if (__atomic_exchange_n(&g_env_write_said, 1, __ATOMIC_RELAXED))
			return; /* once, whatever the next failures' errno */
		env_say("rec: REC_OUTPUT=%s: %.*s; events are lost until a write succeeds",
			g_env_file, (int)strcspn(reason, ";"), reason);
		return;
	}
	if (strncmp(msg, "recorder: ", 10) == 0)
		msg += 10;
	env_say("rec: REC_OUTPUT=%s: %s", g_env_file, msg);
}

/* Close the recording REC_OUTPUT opened, once (exit, _exit or the
 * duration= timer, whichever comes first). */
static void env_close(void)
{
	rec_recorder *r = __atomic_exchange_n(&g_env_recorder, NULL, __ATOMIC_ACQ_REL);
	/* The program may have closed the recorder REC_OUTPUT started (it is
	 * the default recorder, reachable through rec_recorder_default()): then
	 * it is freed and must not be closed again. */
	if (r && rec_recorder_default() == r) {
		if (rec_env_stopping_ != NULL)
			rec_env_stopping_();
		rec_recorder_close(r);
	}
}

/* ---- duration= ------------------------------------------------------------- */
/* A thread of its own (all signals blocked) waits until the deadline on a
 * CLOCK_MONOTONIC condition variable and closes the recording as exit
 * would; exit before the deadline wakes it and joins it.  A fork child has
 * no timer (nor a recording). */
void (*rec_env_stopping_)(void);
static pthread_t g_timer;
static int g_timer_on;
static int g_timer_stop;
static int g_timer_atfork;
static struct timespec g_timer_deadline;
static pthread_mutex_t g_timer_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_timer_cond;

static void *timer_main(void *arg)
{
	(void)arg;
	int timed_out = 0;
	pthread_mutex_lock(&g_timer_lock);
	while (!g_timer_stop && !timed_out)
		timed_out = pthread_cond_timedwait(&g_timer_cond, &g_timer_lock,
						   &g_timer_deadline) == ETIMEDOUT;
	int fire = !g_timer_stop;
	pthread_mutex_unlock(&g_timer_lock);
	if (fire)
		env_close();
	return NULL;
}

static void timer_fork_child(void)
{
	g_timer_on = 0;
	g_timer_stop = 0;
	pthread_mutex_init(&g_timer_lock, NULL);
}

static void timer_start(uint64_t ns)
{
	pthread_condattr_t ca;
	if (pthread_condattr_init(&ca) != 0)
		return;
	int ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
		 pthread_cond_init(&g_timer_cond, &ca) == 0;
	pthread_condattr_destroy(&ca);
	if (!ok)
		return;
	clock_gettime(CLOCK_MONOTONIC, &g_timer_deadline);
	uint64_t t = (uint64_t)g_timer_deadline.tv_nsec + ns % 1000000000u;
	g_timer_deadline.tv_sec += (time_t)(ns / 1000000000u + t / 1000000000u);
	g_timer_deadline.tv_nsec = (long)(t % 1000000000u);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	g_timer_on = pthread_create(&g_timer, NULL, timer_main, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (g_timer_on && !g_timer_atfork++)
		(void)pthread_atfork(NULL, NULL, timer_fork_child);
	else
		env_say("rec: REC_OPTIONS=duration=: no timer thread; recording until exit");
}

static void timer_stop(void)
{
	if (!g_timer_on || pthread_equal(pthread_self(), g_timer))
		return;
	g_timer_on = 0;
	pthread_mutex_lock(&g_timer_lock);
	g_timer_stop = 1;
	pthread_cond_signal(&g_timer_cond);
	pthread_mutex_unlock(&g_timer_lock);
	pthread_join(g_timer, NULL); /* also lets a close it began finish */
}

static void env_atexit(void)
{
	timer_stop();
	env_close();
}

/* Library constructor; the preload library calls it first itself
 * (rec_env_start_(), recorder_internal.h), so it runs once. */
void rec_env_stop_(void)
{
	env_atexit();
}

__attribute__((constructor)) static void env_start(void)
{
	rec_env_start_(1);
	rec_env_start_duration_();
}

int rec_env_preload_;

static int first_module_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = (uintptr_t)info->dlpi_addr;
	return 1;
}

/* 1 when this copy of librec is a shared library (librec.so) and the
 * program's calls of the API reach another copy, one the loader found
 * first (the preload library, under rec-record): that copy records the
 * program; this one must not open REC_OUTPUT beside it. */
static int api_elsewhere(void)
{
	void *active = dlsym(RTLD_DEFAULT, "rec_recorder_open");
	Dl_info me, it;
	if (active == NULL || !dladdr((void *)&rec_env_start_, &me) || !dladdr(active, &it) ||
	    me.dli_fbase == it.dli_fbase)
		return 0;
	uintptr_t program = 0;
	dl_iterate_phdr(first_module_cb, &program);
	return (uintptr_t)me.dli_fbase != program; /* librec.a in the program: its calls are its own */
}

void rec_env_start_(int record)
{
	static int started;
	const char *out = getenv("REC_OUTPUT");
	const char *opt = getenv("REC_OPTIONS");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;

	rec_env_linked_ = 1;
	if (started++ || !record)
		return;
	if (!out || !*out)
		return;
	if (!rec_env_preload_ && api_elsewhere())
		return;
	g_env_quiet = env_quiet(opt);
	if (opt) {
		char err[512] = "";
		if (rec_recorder_options_parse(&o, opt, g_env_storage, sizeof g_env_storage, err,
					       sizeof err) != REC_OK) {
			env_say("rec: REC_OPTIONS=%s: %s; not recording", opt, err);
			return;
		}
		env_apply_process_options(opt);
	}
	/* "%p" in REC_OUTPUT is replaced by the pid (so that programs a recorded
	 * process execs, which inherit REC_OUTPUT, do not overwrite its file). */
	static char path[4096];
	const char *pp = strstr(out, "%p");
	if (pp) {
		int n = snprintf(path, sizeof path, "%.*s%d%s", (int)(pp - out), out, (int)getpid(),
				 pp + 2);
		if (n < 0 || (size_t)n >= sizeof path) {
			env_say("rec: REC_OUTPUT=%s: %s; not recording", out,
				"too long with %p replaced");
			return;
		}
		out = path;
	}
	/* A relative path is made absolute now: a program that changes
	 * directory (a daemon) must not move the file the recorder reopens
	 * (a removed file; flight mode's dump). */
	static char abs_path[4096 + 1024];
	char cwd[4096];
	if (out[0] != '/' && getcwd(cwd, sizeof cwd) != NULL) {
		int n = snprintf(abs_path, sizeof abs_path, "%s/%s", cwd, out);
		if (n > 0 && (size_t)n < sizeof abs_path)
			out = abs_path;
	}
	/* The preload library of this very process records REC_OUTPUT already
	 * (rec-record runs a program that links librec itself): this librec,
	 * a second recorder with its own state, writes a file of its own beside
	 * it, "out.rec" -> "out.librec.rec", instead of writing the same file. */
	static char sibling[sizeof abs_path + 16];
	const char *owner = getenv(REC_PRELOAD_OWNER_ENV);
	char me[24];
	snprintf(me, sizeof me, "%ld", (long)getpid());
	if (!rec_env_preload_ && owner != NULL && strcmp(owner, me) == 0) {
		const char *base = strrchr(out, '/');
		base = base ? base + 1 : out;
		const char *dot = strrchr(base, '.');
		int head = dot && dot != base ? (int)(dot - out) : (int)strlen(out);
		int n = snprintf(sibling, sizeof sibling, "%.*s.librec%s", head, out, out + head);
		if (n < 0 || (size_t)n >= sizeof sibling) {
			env_say("rec: REC_OUTPUT=%s: %s; not recording", out, "too long");
			return;
		}
		env_say("rec: this program links librec and runs under rec-record, whose preload "
			"library records %s: its own events (librec's API) go to %s", out, sibling);
		out = sibling;
	}
	o.path = out;
	o.flags |= REC_RECORDER_DEFAULT;
	o.on_error = env_on_error;
	g_env_options = o;
	g_env_file = out;
	rec_status st = rec_recorder_open(&g_env_recorder, &o);
	if (st != REC_OK) {
		int err = errno; /* kept by rec_recorder_open for REC_ERR_IO */
		char tmp[128];
		g_env_recorder = NULL;
		if (st == REC_ERR_IO)
			env_say("rec: REC_OUTPUT=%s: %s; not recording", out,
				strerror_r(err, tmp, sizeof tmp));
		else if (st == REC_ERR_INVALID_ARG && o.events)
			env_say("rec: REC_OPTIONS=%s: bad events list '%s' (%s); not recording", opt,
				o.events, option_values("events", 6));
		else
			env_say("rec: REC_OUTPUT=%s: %s; not recording", out, rec_strerror(st));
		return;
	}
	atexit(env_atexit);
}

static int g_timer_started;

void rec_env_start_duration_(void)
{
	if (g_env_duration_ns > 0 && g_env_recorder != NULL && !g_timer_started++)
		timer_start(g_env_duration_ns);
}

/* forks=on: the recording of a fork child, opened in the child (the
 * parent's was abandoned there by thread.c's atfork handler) with the
 * parent's options into the parent's path with the child's pid inserted
 * before the last extension ("/tmp/out.rec" -> "/tmp/out.4242.rec", a name
 * without one gets ".4242" appended); its duration= counts from there.
 * 1 if the child records. */
int rec_env_fork_child_(void)
{
	static char path[4096 + 1024 + 32];
	if (!g_env_forks || g_env_file == NULL)
		return 0;
	g_env_recorder = NULL;
	g_timer_started = 0;
	const char *base = strrchr(g_env_file, '/');
	base = base ? base + 1 : g_env_file;
	const char *dot = strrchr(base, '.');
	size_t head = dot && dot != base ? (size_t)(dot - g_env_file) : strlen(g_env_file);
	char copy[sizeof path];
	snprintf(copy, sizeof copy, "%s", g_env_file);
	int n = snprintf(path, sizeof path, "%.*s.%ld%s", (int)head, copy, (long)getpid(),
			 copy + head);
	if (n < 0 || (size_t)n >= sizeof path)
		return 0;
	rec_recorder_options o = g_env_options;
	o.path = path;
	g_env_file = path;
	g_env_write_said = 0;
	if (rec_recorder_open(&g_env_recorder, &o) != REC_OK) {
		int err = errno;
		char tmp[128];
		g_env_recorder = NULL;
		env_say("rec: REC_OUTPUT=%s: %s; the child %ld is not recorded", path,
			strerror_r(err, tmp, sizeof tmp), (long)getpid());
		return 0;
	}
	return 1;
}
