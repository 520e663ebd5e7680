/* SPDX-License-Identifier: MIT */
/*
 * pprof.h - a writer of the pprof profile format (profile.proto of
 * github.com/google/pprof: a protobuf message, gzip-compressed on disk), the
 * format `go tool pprof`, Pyroscope, Parca and Grafana read.  Independent of
 * the reader: the caller adds samples (a stack of locations, one value per
 * sample type, labels); the writer deduplicates strings, functions,
 * locations and mappings and encodes the message.
 *
 * Use:
 *   rec_pprof_open(&p, types, ntypes);            // [{"samples","count"}, ...]
 *   rec_pprof_set_time(p, start_ns, duration_ns); // optional
 *   rec_pprof_add_sample(p, locs, depth, values, labels, nlabels);  // each
 *   rec_pprof_encode(p, true, &bytes, &len);      // gzip; free(bytes)
 *   rec_pprof_close(p);
 *
 * What each piece becomes:
 *   - a location is identified by (module, build id, base, address,
 *     function, file, line); one Location per distinct one, with one Line
 *     (its function and line) when the function is known;
 *   - a Function per distinct (name, file);
 *   - a Mapping per distinct (module path, build id, base), in order of
 *     first sight except that the first one that is not a shared object
 *     (no ".so" in its base name) comes first: profile.proto's mapping[0],
 *     "the main binary", that consumers name the profile after; memory_start is
 *     the base, memory_limit one past the highest address seen in it,
 *     has_functions set when every location in it has a function (so
 *     consumers do not try to symbolize it again);
 *   - strings go once into the string table (entry 0 is "").
 * Memory: the distinct strings, functions, locations and mappings, and the
 * samples as added (callers aggregate first: one sample per distinct stack).
 */
#ifndef LIBREC_PPROF_H
#define LIBREC_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rec/rec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rec_pprof rec_pprof;

/* A sample type or a period type: "cpu"/"nanoseconds", "alloc_space"/"bytes". */
typedef struct rec_pprof_value_type {
	const char *type;
	const char *unit;
} rec_pprof_value_type;

/* One frame of a sample's stack. */
typedef struct rec_pprof_location {
	const char *function; /* NULL or "": unknown (the location has no Line) */
	const char *file;     /* source file, NULL or "" if unknown */
	int64_t line;         /* source line, 0 if unknown */
	const char *module;   /* the module's path, NULL or "": no mapping */
	const char *build_id; /* NULL or "" if unknown */
	uint64_t module_base; /* the module's load address */
	uint64_t address;     /* the instruction's address, 0 if unknown */
} rec_pprof_location;

/* A label of a sample: a string (str not NULL) or a number with a unit. */
typedef struct rec_pprof_label {
	const char *key;
	const char *str;      /* NULL: a numeric label */
	int64_t num;
	const char *num_unit; /* NULL or "": none */
} rec_pprof_label;

/*! rec_pprof_open() :
 *  An empty profile with ntypes (1..64) sample types; every sample has one
 *  value per type.  The default sample type is the last one.
 *  @return REC_OK with *out set (free with rec_pprof_close()),
 *          REC_ERR_INVALID_ARG, REC_ERR_NOMEM. */
REC_API rec_status rec_pprof_open(rec_pprof **out, const rec_pprof_value_type *types,
				  size_t ntypes);
/*! rec_pprof_close() : NULL is a no-op. */
REC_API void rec_pprof_close(rec_pprof *p);

/*! rec_pprof_set_default_type() : the sample type consumers show first. */
REC_API rec_status rec_pprof_set_default_type(rec_pprof *p, size_t index);
/*! rec_pprof_set_time() : time_nanos (start, ns since the epoch) and
 *  duration_nanos of the profile. */
REC_API void rec_pprof_set_time(rec_pprof *p, int64_t time_ns, int64_t duration_ns);
/*! rec_pprof_set_period() : period_type and period (what one sample stands
 *  for, e.g. "cpu"/"nanoseconds" 10000000). */
REC_API rec_status rec_pprof_set_period(rec_pprof *p, const rec_pprof_value_type *type,
					int64_t period);
/*! rec_pprof_add_comment() : a free-form comment line. */
REC_API rec_status rec_pprof_add_comment(rec_pprof *p, const char *text);

/*! rec_pprof_add_sample() :
 *  A sample: locs[0..depth) leaf first, values[] one per sample type,
 *  labels[0..nlabels).  Strings are copied.
 *  @return REC_OK, REC_ERR_INVALID_ARG, REC_ERR_NOMEM or REC_ERR_LIMIT
 *          (more than 2^32 - 2 distinct strings, functions, locations or
 *          mappings); the profile stays usable and the sample is not added. */
REC_API rec_status rec_pprof_add_sample(rec_pprof *p, const rec_pprof_location *locs,
					size_t depth, const int64_t *values,
					const rec_pprof_label *labels, size_t nlabels);

/*! rec_pprof_encode() :
 *  The profile as a serialized profile.proto message, gzip-compressed (as
 *  files are) when gzip is true.  *out is malloc'd (free it) with *len bytes.
 *  @return REC_OK, REC_ERR_NOMEM, REC_ERR_CODEC (zlib failed). */
REC_API rec_status rec_pprof_encode(rec_pprof *p, bool gzip, uint8_t **out, size_t *len);

/*! rec_pprof_errmsg() : text of the last failure; never NULL. */
REC_API const char *rec_pprof_errmsg(const rec_pprof *p);

#ifdef __cplusplus
}
#endif
#endif /* LIBREC_PPROF_H */
