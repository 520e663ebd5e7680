/* SPDX-License-Identifier: MIT */
/*
 * env.c - start the default recorder from the environment with no code
 * change beyond linking: REC_OUTPUT=run.rec (and REC_OPTIONS=...) open it in
 * a library constructor and an atexit handler closes it (FINAL chunk; in
 * flight mode the retained data is written to REC_OUTPUT), like JFR's
 * dumponexit=true.  Also the REC_OPTIONS parser and the size parser (the
 * duration parser is rec_parse_duration(), libfmt/common/duration.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/recorder_internal.h"

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
		if (ok) {
			const char *k = p, *v = eq + 1;
			size_t kl = (size_t)(eq - p), vl = n - kl - 1;
			int64_t x;
			if (key_is(k, kl, "codec")) {
				if (vl == 4 && memcmp(v, "none", 4) == 0)
					o->codec = REC_CODEC_NONE;
				else if (vl == 4 && memcmp(v, "zstd", 4) == 0)
					o->codec = REC_CODEC_ZSTD;
				else if (vl == 3 && memcmp(v, "lz4", 3) == 0)
					o->codec = REC_CODEC_LZ4;
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
			} else {
				ok = false;
			}
		}
		if (!ok) {
			if (errbuf && errbuf_size)
				snprintf(errbuf, errbuf_size, "bad option '%.*s'", (int)n, p);
			return REC_ERR_INVALID_ARG;
		}
		p = end ? end + 1 : p + n;
	}
	return REC_OK;
}

/* ---- REC_OUTPUT ----------------------------------------------------------- */
static rec_recorder *g_env_recorder;
static char g_env_storage[4096];

static void env_atexit(void)
{
	rec_recorder *r = g_env_recorder;
	g_env_recorder = NULL;
	/* The program may have closed the recorder REC_OUTPUT started (it is
	 * the default recorder, reachable through rec_recorder_default()): then
	 * it is freed and must not be closed again. */
	if (r && rec_recorder_default() == r)
		rec_recorder_close(r);
}

__attribute__((constructor)) static void env_start(void)
{
	const char *out = getenv("REC_OUTPUT");
	const char *opt = getenv("REC_OPTIONS");
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;

	rec_env_linked_ = 1;
	if (!out || !*out)
		return;
	if (opt && rec_recorder_options_parse(&o, opt, g_env_storage, sizeof g_env_storage, NULL,
					      0) != REC_OK)
		return; /* the library never prints: a bad REC_OPTIONS records nothing */
	/* "%p" in REC_OUTPUT is replaced by the pid (so that programs a recorded
	 * process execs, which inherit REC_OUTPUT, do not overwrite its file). */
	static char path[4096];
	const char *pp = strstr(out, "%p");
	if (pp) {
		int n = snprintf(path, sizeof path, "%.*s%d%s", (int)(pp - out), out, (int)getpid(),
				 pp + 2);
		if (n < 0 || (size_t)n >= sizeof path)
			return;
		out = path;
	}
	o.path = out;
	o.flags |= REC_RECORDER_DEFAULT;
	if (rec_recorder_open(&g_env_recorder, &o) != REC_OK) {
		g_env_recorder = NULL;
		return;
	}
	atexit(env_atexit);
}
