/* SPDX-License-Identifier: MIT */
/*
 * metrics.h - counters, gauges, process statistics and log lines, recorded
 * into the default recorder (recorder.h) as the built-in events rec.Counter,
 * rec.Gauge, rec.ProcessStats and rec.Log (spec/EVENTS.md).
 *
 *   static rec_counter *served;
 *   static rec_gauge *queue;
 *   rec_counter_get("http.requests", &served);   // once, outside hot paths
 *   rec_gauge_get("http.queue", &queue);
 *   ...
 *   rec_counter_add(served, 1);                  // one relaxed atomic add
 *   rec_gauge_set(queue, depth);                 // a store, plus max tracking
 *   rec_log(REC_LOG_WARN, "slow backend: %d ms", ms);
 *
 * While a default recorder is open (REC_OUTPUT or REC_RECORDER_DEFAULT), its
 * background thread emits every counter and gauge every metrics period
 * (default 1 s) and once more at close, and a rec.ProcessStats every process
 * period (default 1 s), plus one when the recording opens.  Each counter's
 * start is sampled too: 0 when it is created while recording, its value
 * when a recording opens, so counter totals count from there
 * (spec/EVENTS.md, rec.Counter).  Counter and gauge values live in the
 * process, not in the recorder: a counter keeps counting while no
 * recording is open, and its rec.Counter events carry the value since the
 * counter was created.  A reader tells a restart (new Run_Id in the chunk
 * header, value starting over) from lost data (same Run_Id, gap).
 *
 * Threading: every function may be called from any thread.  Handles are
 * never freed (valid until the process exits).  Nothing here is
 * async-signal-safe except rec_counter_add(), rec_gauge_set() and
 * rec_gauge_add().
 */
#ifndef LIBREC_METRICS_H
#define LIBREC_METRICS_H

#include <stdarg.h>
#include <stdint.h>

#include "rec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Built-in type ids of this module (spec/EVENTS.md). */
#define REC_TYPE_ID_COUNTER 24u       /* rec.Counter */
#define REC_TYPE_ID_GAUGE 25u         /* rec.Gauge */
#define REC_TYPE_ID_PROCESS_STATS 26u /* rec.ProcessStats */
#define REC_TYPE_ID_LOG 27u           /* rec.Log */

#define REC_METRIC_NAME_MAX 255u /* bytes of a counter or gauge name */

typedef struct rec_counter rec_counter;
typedef struct rec_gauge rec_gauge;

/* ---- private: the cells the inline updates touch.  Not API. ------------ */
/* A rec_counter starts with this cell, alone on its 64-byte cache line. */
struct rec_counter_cell_ {
	uint64_t value;
};
/* A rec_gauge starts with this cell, alone on its 64-byte cache line. */
struct rec_gauge_cell_ {
	int64_t value;
	int64_t max; /* highest value since the last sample */
};
/* ---- end of private part ------------------------------------------------ */

/*! rec_counter_get() :
 *  The process-wide monotonic counter called name (created at 0 on first
 *  use; the same handle for the same name afterwards).  name: 1 to
 *  REC_METRIC_NAME_MAX bytes, copied.  Creating it while a default recorder
 *  is open records its start (a rec.Counter of 0) from the calling thread.
 *  Takes a lock and may allocate: call it once and keep the handle.
 *  @return REC_OK, REC_ERR_INVALID_ARG (NULL/empty/too long name, NULL out,
 *          the name is a gauge), REC_ERR_NOMEM. */
REC_API rec_status rec_counter_get(const char *name, rec_counter **out);

/*! rec_counter_add() : add n to c: one relaxed atomic add, no call, no lock. */
static inline void rec_counter_add(rec_counter *c, uint64_t n)
{
	__atomic_fetch_add(&((struct rec_counter_cell_ *)(void *)c)->value, n, __ATOMIC_RELAXED);
}

/*! rec_counter_value() : c's current value. */
static inline uint64_t rec_counter_value(const rec_counter *c)
{
	return __atomic_load_n(&((const struct rec_counter_cell_ *)(const void *)c)->value,
			       __ATOMIC_RELAXED);
}

/*! rec_gauge_get() : the process-wide gauge called name (created at 0), as
 *  rec_counter_get(); a name is either a counter or a gauge. */
REC_API rec_status rec_gauge_get(const char *name, rec_gauge **out);

/* Raise the gauge's max to at least v (lock-free). */
static inline void rec_gauge_max_(struct rec_gauge_cell_ *c, int64_t v)
{
	int64_t m = __atomic_load_n(&c->max, __ATOMIC_RELAXED);
	while (v > m && !__atomic_compare_exchange_n(&c->max, &m, v, 1, __ATOMIC_RELAXED,
						     __ATOMIC_RELAXED)) {
	}
}

/*! rec_gauge_set() : set g to v.  A relaxed store, plus a compare-and-swap
 *  when v is a new maximum since the last sample (sampled gauges hide
 *  spikes; the rec.Gauge event carries that maximum too). */
static inline void rec_gauge_set(rec_gauge *g, int64_t v)
{
	struct rec_gauge_cell_ *c = (struct rec_gauge_cell_ *)(void *)g;
	__atomic_store_n(&c->value, v, __ATOMIC_RELAXED);
	rec_gauge_max_(c, v);
}

/*! rec_gauge_add() : add delta (may be negative) to g atomically, tracking
 *  the maximum as rec_gauge_set(). */
static inline void rec_gauge_add(rec_gauge *g, int64_t delta)
{
	struct rec_gauge_cell_ *c = (struct rec_gauge_cell_ *)(void *)g;
	int64_t v = __atomic_add_fetch(&c->value, delta, __ATOMIC_RELAXED);
	rec_gauge_max_(c, v);
}

/*! rec_gauge_value() : g's current value. */
static inline int64_t rec_gauge_value(const rec_gauge *g)
{
	return __atomic_load_n(&((const struct rec_gauge_cell_ *)(const void *)g)->value,
			       __ATOMIC_RELAXED);
}

/*! rec_metrics_set_periods() :
 *  How often the background thread emits counters and gauges (metrics_ms)
 *  and rec.ProcessStats (process_ms); 0 keeps the current value (defaults:
 *  1000 and 1000, or REC_METRICS_PERIOD and REC_PROCESS_STATS_PERIOD from
 *  the environment at start-up, e.g. "500ms", "5s"; 1 ms to 1 h, other
 *  values are ignored).  Applies to default recorders opened afterwards (the
 *  recorder's flush interval bounds how often a periodic task can run).
 *  @return REC_OK. */
REC_API rec_status rec_metrics_set_periods(uint32_t metrics_ms, uint32_t process_ms);

/*! rec_metrics_sample() :
 *  Emit every counter and gauge now from the calling thread (what the
 *  periodic task does); each gauge's max restarts at its current value.
 *  @return REC_OK, or REC_ERR_STATE if no default recorder is open. */
REC_API rec_status rec_metrics_sample(void);

/*! rec_process_stats_sample() : emit one rec.ProcessStats now (the peak RSS
 *  interval restarts).  @return REC_OK, REC_ERR_STATE (no default recorder),
 *  REC_ERR_IO (/proc/self/status unreadable and getrusage() failed). */
REC_API rec_status rec_process_stats_sample(void);

/* The values a rec.ProcessStats event carries (spec/EVENTS.md). */
typedef struct rec_process_stats {
	uint64_t cpu_user_ns;   /* user CPU time of the process (getrusage) */
	uint64_t cpu_system_ns; /* system CPU time of the process */
	uint64_t rss;           /* resident set size now, bytes (VmRSS) */
	uint64_t rss_hwm;       /* peak RSS since process start, bytes (VmHWM) */
	uint32_t threads;       /* threads of the process (Threads:) */
} rec_process_stats;

/*! rec_process_stats_read() : read the statistics now (no event).
 *  @return REC_OK or REC_ERR_IO. */
REC_API rec_status rec_process_stats_read(rec_process_stats *st);

/* ---- log lines (rec.Log) ------------------------------------------------ */
/* Levels (the rec.Log "level" field; names from rec_log_level_name()). */
typedef enum {
	REC_LOG_TRACE = 0,
	REC_LOG_DEBUG = 1,
	REC_LOG_INFO = 2,
	REC_LOG_WARN = 3,
	REC_LOG_ERROR = 4,
	REC_LOG_FATAL = 5
} rec_log_level;

/*! rec_log_level_name() : "trace", "debug", "info", "warn", "error", "fatal",
 *  or "unknown"; never NULL. */
REC_API const char *rec_log_level_name(unsigned level);

/*! rec_log() :
 *  Record a rec.Log event (level, message formatted with printf rules,
 *  truncated to REC_EMIT_MAX_BYTES = 4096 bytes) on the calling thread.  Not
 *  for hot paths: it formats into a stack buffer (no allocation).  Does
 *  nothing (and formats nothing) when rec.Log is off or no default recorder
 *  is open.  Never prints.
 *  @return 1 if the event was recorded, 0 if not. */
REC_API int rec_log(unsigned level, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
/*! rec_logv() : rec_log() with a va_list. */
REC_API int rec_logv(unsigned level, const char *fmt, va_list ap)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 0)))
#endif
	;

#ifdef __cplusplus
}
#endif
#endif /* LIBREC_METRICS_H */
