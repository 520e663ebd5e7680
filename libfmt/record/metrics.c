/* SPDX-License-Identifier: MIT */
/*
 * metrics.c - counters, gauges, process statistics and log lines
 * (rec/metrics.h), built on the public recorder API only: process-wide types
 * declared with rec_type_declare(), a default-recorder listener that adds two
 * periodic tasks to the recorder's background thread, and the normal emit
 * path.
 */
#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "rec/metrics.h"
#include "rec/recorder.h"
#include "record/recorder_internal.h" /* rec_parse_duration_ns() */

/* ---- event types ---------------------------------------------------------- */
static const rec_field counter_fields[] = {
	{ "name", "Name", "counter name", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "value", "Value", "total since the counter was created in this process", REC_TYPE_U64,
	  REC_UNIT_COUNT },
};
static const rec_type counter_def = {
	REC_TYPE_ID_COUNTER, 0, "rec.Counter", "Counter",
	"A monotonic counter's value, sampled periodically", "rec/Metrics",
	sizeof counter_fields / sizeof counter_fields[0], counter_fields,
};

static const rec_field gauge_fields[] = {
	{ "name", "Name", "gauge name", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "value", "Value", "value at the sample", REC_TYPE_I64, REC_UNIT_NONE },
	{ "max", "Maximum", "highest value set since the previous sample (>= value)", REC_TYPE_I64,
	  REC_UNIT_NONE },
};
static const rec_type gauge_def = {
	REC_TYPE_ID_GAUGE, 0, "rec.Gauge", "Gauge",
	"A gauge's value and its maximum since the previous sample", "rec/Metrics",
	sizeof gauge_fields / sizeof gauge_fields[0], gauge_fields,
};

static const rec_field process_fields[] = {
	{ "cpuUser", "User CPU", "user CPU time of the process since it started", REC_TYPE_U64,
	  REC_UNIT_NANOS },
	{ "cpuSystem", "System CPU", "system CPU time of the process since it started", REC_TYPE_U64,
	  REC_UNIT_NANOS },
	{ "rss", "RSS", "resident set size at the sample", REC_TYPE_U64, REC_UNIT_BYTES },
	{ "rssPeak", "Peak RSS", "highest RSS since the previous sample (see spec/EVENTS.md)",
	  REC_TYPE_U64, REC_UNIT_BYTES },
	{ "rssHwm", "RSS High-Water Mark", "highest RSS since the process started", REC_TYPE_U64,
	  REC_UNIT_BYTES },
	{ "threads", "Threads", "threads of the process", REC_TYPE_U32, REC_UNIT_COUNT },
};
static const rec_type process_def = {
	REC_TYPE_ID_PROCESS_STATS, 0, "rec.ProcessStats", "Process Statistics",
	"CPU time, memory and threads of the process, sampled periodically", "rec/Process",
	sizeof process_fields / sizeof process_fields[0], process_fields,
};

static const rec_field log_fields[] = {
	{ "level", "Level", "0 trace, 1 debug, 2 info, 3 warn, 4 error, 5 fatal", REC_TYPE_U8,
	  REC_UNIT_NONE },
	{ "message", "Message", "", REC_TYPE_TEXT, REC_UNIT_NONE },
};
static const rec_type log_def = {
	REC_TYPE_ID_LOG, REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "rec.Log", "Log Message",
	"A log line with a level", "rec/Log", sizeof log_fields / sizeof log_fields[0], log_fields,
};

static rec_event_type *t_counter, *t_gauge, *t_process, *t_log;
static rec_status init_status = REC_ERR_STATE;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* ---- the registry ---------------------------------------------------------- */
enum { KIND_COUNTER = 1, KIND_GAUGE = 2 };

typedef struct metric {
	/* First, alone on its cache line: what rec_counter_add()/rec_gauge_set()
	 * touch (metrics.h casts the handle to these cells). */
	alignas(64) union {
		struct rec_counter_cell_ counter;
		struct rec_gauge_cell_ gauge;
	} cell;
	/* Written once at creation, read by samplers: the next cache line. */
	alignas(64) struct metric *next;
	int kind;
	size_t name_len;
	char name[REC_METRIC_NAME_MAX + 1];
} metric;

_Static_assert(offsetof(metric, cell) == 0, "the cell is the handle");
_Static_assert(offsetof(metric, next) >= 64, "the cell has its own cache line");

/* registry_lock, process_lock, sample_lock: their place in the lock order
 * is in recorder_internal.h (LOCK ORDER). */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static metric *registry_head, *registry_tail; /* creation order */
static uint32_t metrics_period_ms = 1000, process_period_ms = 1000;

/* Process statistics state between samples (guarded by process_lock). */
static pthread_mutex_t process_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t last_rss, last_hwm;

/* /proc/self/status, kept open between samples and read with one pread (a
 * sample a second: its open, fstat, three reads through stdio and close
 * were a sixth of an idle recorder's background CPU, bench/bgcost.c's idle
 * setting 274 -> 225 us a second, medians of 5 alternated runs).  The descriptor is checked
 * before each read: a program that closes every descriptor as it
 * daemonizes may reuse its number for a file of its own, which is never
 * read (its device and inode differ: then it is forgotten, not closed), and
 * a fork child's copy names the parent's entry (closed in the child, as
 * getpid() changed).  status_lock guards them. */
static pthread_mutex_t status_lock = PTHREAD_MUTEX_INITIALIZER;
static int status_fd = -1;
static pid_t status_pid;
static dev_t status_dev;
static ino_t status_ino;

/* Serializes the samplers (the background thread's periodic task, the
 * opening thread's start samples, rec_metrics_sample() on any thread): a
 * counter's samples are then committed in the order their values were read,
 * so their timestamps order their values (spec/EVENTS.md, rec.Counter). */
static pthread_mutex_t sample_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_default_recorder(rec_recorder *r, int opened, void *opaque);

/* A period from the environment ("500ms", "2s"): 1 ms to 1 h, else 0. */
static uint32_t env_period_ms(const char *name)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	int64_t ns = rec_parse_duration_ns(v, strlen(v));
	if (ns < 1000000 || ns > 3600LL * 1000000000)
		return 0; /* the library never prints: a bad value keeps the default */
	return (uint32_t)(ns / 1000000);
}

/* A fork child has only the forking thread: the background thread of the
 * parent may have been sampling at the fork (process_lock or sample_lock
 * held while it emitted), and a recorder the child opens samples at once
 * (on_default_recorder): it waited for ever (tests/cli/preload_fork_phdr.sh,
 * one child in 20 under load).  What they guard is consistent between
 * operations or reset by that first sample; the registry only grows, at
 * its tail (an entry appended during the fork may be left out). */
static void metrics_fork_child(void)
{
	pthread_mutex_init(&registry_lock, NULL);
	pthread_mutex_init(&process_lock, NULL);
	pthread_mutex_init(&sample_lock, NULL);
	pthread_mutex_init(&status_lock, NULL);
}

static void metrics_init(void)
{
	(void)pthread_atfork(NULL, NULL, metrics_fork_child);
	/* Before the listener: a recorder REC_OUTPUT opened already gets them. */
	(void)rec_metrics_set_periods(env_period_ms("REC_METRICS_PERIOD"),
				      env_period_ms("REC_PROCESS_STATS_PERIOD"));
	rec_status st = rec_type_declare(&counter_def, 0, 0, &t_counter);
	if (st == REC_OK)
		st = rec_type_declare(&gauge_def, 0, 0, &t_gauge);
	if (st == REC_OK)
		st = rec_type_declare(&process_def, 0, 0, &t_process);
	if (st == REC_OK)
		st = rec_type_declare(&log_def, 0, 0, &t_log);
	if (st == REC_OK)
		st = rec_default_listen(on_default_recorder, NULL);
	init_status = st;
}

static rec_status ensure_init(void)
{
	if (pthread_once(&init_once, metrics_init) != 0)
		return REC_ERR_STATE;
	return init_status;
}

/* Linked in (any metrics function referenced): sample process statistics of
 * every default recorder, also one opened from REC_OUTPUT before main().
 * With the static library, metrics.o is linked only when something refers to
 * it: the recorder core can refer to rec_metrics_linked_ (as it does for
 * env.o) so that every recording has rec.ProcessStats. */
int rec_metrics_linked_;
__attribute__((constructor)) static void metrics_constructor(void)
{
	rec_metrics_linked_ = 1;
	(void)ensure_init();
}

static void emit_counter(const metric *m, uint64_t v)
{
	rec_emit e;
	if (rec_emit_begin(&e, t_counter)) {
		rec_emit_string_dyn_len(&e, m->name, m->name_len);
		rec_emit_u64(&e, v);
		rec_emit_commit(&e);
	}
}

static rec_status metric_get(const char *name, int kind, metric **out)
{
	if (!name || !out)
		return REC_ERR_INVALID_ARG;
	size_t len = strlen(name);
	if (len == 0 || len > REC_METRIC_NAME_MAX)
		return REC_ERR_INVALID_ARG;
	rec_status st = ensure_init();
	if (st != REC_OK)
		return st;
	if (pthread_mutex_lock(&registry_lock) != 0)
		return REC_ERR_STATE;
	metric *m;
	for (m = registry_head; m; m = m->next) {
		if (m->name_len == len && memcmp(m->name, name, len) == 0)
			break;
	}
	if (m) {
		st = m->kind == kind ? REC_OK : REC_ERR_INVALID_ARG;
	} else {
		m = aligned_alloc(alignof(metric), sizeof(metric));
		if (!m) {
			st = REC_ERR_NOMEM;
		} else {
			memset(m, 0, sizeof *m);
			m->kind = kind;
			m->name_len = len;
			memcpy(m->name, name, len + 1);
			/* A counter starts at 0: record that start now, while
			 * no sampler can see the counter yet, so every later
			 * sample of it is committed after this one.  Without
			 * an open default recorder there is nothing to record
			 * into; a recording opened later samples the counter
			 * when it opens (on_default_recorder). */
			if (kind == KIND_COUNTER)
				emit_counter(m, 0);
			if (registry_tail)
				registry_tail->next = m;
			else
				registry_head = m;
			registry_tail = m;
		}
	}
	pthread_mutex_unlock(&registry_lock);
	*out = st == REC_OK ? m : NULL;
	return st;
}

rec_status rec_counter_get(const char *name, rec_counter **out)
{
	metric *m = NULL;
	rec_status st = metric_get(name, KIND_COUNTER, &m);
	if (out)
		*out = (rec_counter *)(void *)m;
	return st;
}

rec_status rec_gauge_get(const char *name, rec_gauge **out)
{
	metric *m = NULL;
	rec_status st = metric_get(name, KIND_GAUGE, &m);
	if (out)
		*out = (rec_gauge *)(void *)m;
	return st;
}

rec_status rec_metrics_set_periods(uint32_t metrics_ms, uint32_t process_ms)
{
	if (pthread_mutex_lock(&registry_lock) != 0)
		return REC_ERR_STATE;
	if (metrics_ms)
		metrics_period_ms = metrics_ms;
	if (process_ms)
		process_period_ms = process_ms;
	pthread_mutex_unlock(&registry_lock);
	return REC_OK;
}

/* ---- sampling --------------------------------------------------------------- */
/* Every counter, and every gauge unless counters_only. */
static void sample_metrics_of(bool counters_only)
{
	/* The list only grows at the tail and entries are never freed: walk a
	 * snapshot of it without holding the lock while emitting. */
	if (pthread_mutex_lock(&registry_lock) != 0)
		return;
	metric *head = registry_head, *tail = registry_tail;
	pthread_mutex_unlock(&registry_lock);
	if (pthread_mutex_lock(&sample_lock) != 0)
		return;
	for (metric *m = head; m; m = m == tail ? NULL : m->next) {
		rec_emit e;
		if (m->kind == KIND_COUNTER) {
			emit_counter(m, __atomic_load_n(&m->cell.counter.value, __ATOMIC_RELAXED));
		} else if (!counters_only) {
			struct rec_gauge_cell_ *c = &m->cell.gauge;
			int64_t v = __atomic_load_n(&c->value, __ATOMIC_RELAXED);
			/* The next interval's max starts at the value now. */
			int64_t mx = __atomic_exchange_n(&c->max, v, __ATOMIC_RELAXED);
			if (mx < v)
				mx = v;
			if (rec_emit_begin(&e, t_gauge)) {
				rec_emit_string_dyn_len(&e, m->name, m->name_len);
				rec_emit_i64(&e, v);
				rec_emit_i64(&e, mx);
				rec_emit_commit(&e);
			}
		}
	}
	pthread_mutex_unlock(&sample_lock);
}

static void sample_metrics(void) { sample_metrics_of(false); }

rec_status rec_metrics_sample(void)
{
	rec_status st = ensure_init();
	if (st != REC_OK)
		return st;
	if (!rec_recorder_default())
		return REC_ERR_STATE;
	sample_metrics();
	return REC_OK;
}

/* "Name:   123 kB" -> 123 (the number, unit not applied). */
static bool status_field(const char *line, const char *key, uint64_t *out)
{
	size_t k = strlen(key);
	if (strncmp(line, key, k) != 0)
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(line + k, &end, 10);
	if (errno || end == line + k)
		return false;
	*out = v;
	return true;
}

static uint64_t timeval_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000u + (uint64_t)tv.tv_usec * 1000u;
}

static bool status_is_ours(void)
{
	struct stat sb;
	return fstat(status_fd, &sb) == 0 && sb.st_dev == status_dev && sb.st_ino == status_ino;
}

/* The contents of /proc/self/status in buf (NUL-terminated), or -1. */
static ssize_t read_status(char *buf, size_t cap)
{
	ssize_t n = -1;
	pthread_mutex_lock(&status_lock);
	pid_t pid = getpid();
	if (status_fd >= 0) {
		const bool ours = status_is_ours();
		if (pid != status_pid || !ours) {
			if (ours)
				close(status_fd); /* a fork child's copy of the parent's */
			status_fd = -1;
		}
	}
	if (status_fd < 0) {
		struct stat sb;
		int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && fstat(fd, &sb) != 0) {
			close(fd);
			fd = -1;
		}
		if (fd >= 0) {
			status_fd = fd;
			status_pid = pid;
			status_dev = sb.st_dev;
			status_ino = sb.st_ino;
		}
	}
	if (status_fd >= 0) {
		/* one read: the file is generated whole (about 1.4 KiB) */
		do
			n = pread(status_fd, buf, cap - 1, 0);
		while (n < 0 && errno == EINTR);
	}
	pthread_mutex_unlock(&status_lock);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

rec_status rec_process_stats_read(rec_process_stats *st)
{
	if (!st)
		return REC_ERR_INVALID_ARG;
	memset(st, 0, sizeof *st);
	struct rusage ru;
	bool have_ru = getrusage(RUSAGE_SELF, &ru) == 0;
	if (have_ru) {
		st->cpu_user_ns = timeval_ns(ru.ru_utime);
		st->cpu_system_ns = timeval_ns(ru.ru_stime);
		st->rss_hwm = (uint64_t)ru.ru_maxrss * 1024u; /* Linux: KiB */
	}
	char buf[4096];
	if (read_status(buf, sizeof buf) < 0)
		return have_ru ? REC_OK : REC_ERR_IO;
	uint64_t v;
	for (const char *line = buf; *line;) {
		const char *nl = strchr(line, '\n');
		if (status_field(line, "VmRSS:", &v))
			st->rss = v * 1024u;
		else if (status_field(line, "VmHWM:", &v))
			st->rss_hwm = v * 1024u;
		else if (status_field(line, "Threads:", &v))
			st->threads = (uint32_t)v;
		if (!nl)
			break;
		line = nl + 1;
	}
	return REC_OK;
}

static rec_status sample_process(void)
{
	rec_process_stats st;
	rec_status s = rec_process_stats_read(&st);
	if (s != REC_OK)
		return s;
	if (pthread_mutex_lock(&process_lock) != 0)
		return REC_ERR_STATE;
	/* Peak since the previous sample: exact when the process high-water
	 * mark rose in between (the new peak happened in this interval), else
	 * the larger of the two sampled RSS values (a lower bound). */
	uint64_t peak = st.rss_hwm > last_hwm ? st.rss_hwm : (last_rss > st.rss ? last_rss : st.rss);
	if (peak < st.rss)
		peak = st.rss;
	last_hwm = st.rss_hwm;
	last_rss = st.rss;
	rec_emit e;
	if (rec_emit_begin(&e, t_process)) {
		rec_emit_u64(&e, st.cpu_user_ns);
		rec_emit_u64(&e, st.cpu_system_ns);
		rec_emit_u64(&e, st.rss);
		rec_emit_u64(&e, peak);
		rec_emit_u64(&e, st.rss_hwm);
		rec_emit_u64(&e, st.threads);
		rec_emit_commit(&e);
	}
	pthread_mutex_unlock(&process_lock);
	return REC_OK;
}

rec_status rec_process_stats_sample(void)
{
	rec_status st = ensure_init();
	if (st != REC_OK)
		return st;
	if (!rec_recorder_default())
		return REC_ERR_STATE;
	return sample_process();
}

static void periodic_metrics(rec_recorder *r, void *opaque)
{
	(void)r;
	(void)opaque;
	sample_metrics();
}

static void periodic_process(rec_recorder *r, void *opaque)
{
	(void)r;
	(void)opaque;
	(void)sample_process();
}

static void on_default_recorder(rec_recorder *r, int opened, void *opaque)
{
	(void)opaque;
	if (!opened)
		return; /* the periodic tasks run once more at close by themselves */
	uint32_t mp = 1000, pp = 1000;
	if (pthread_mutex_lock(&registry_lock) == 0) {
		mp = metrics_period_ms;
		pp = process_period_ms;
		pthread_mutex_unlock(&registry_lock);
	}
	/* The start of every counter that exists already (counted before this
	 * recording: not this recording's count), before the periodic task
	 * exists, so it is each counter's first sample of the run. */
	sample_metrics_of(true);
	(void)rec_recorder_add_periodic(r, periodic_metrics, NULL, mp);
	(void)rec_recorder_add_periodic(r, periodic_process, NULL, pp);
	/* A baseline at the start of the recording; its rssPeak covers the time
	 * since process start (as the spec says for a recording's first sample). */
	if (pthread_mutex_lock(&process_lock) == 0) {
		last_rss = 0;
		last_hwm = 0;
		pthread_mutex_unlock(&process_lock);
	}
	(void)sample_process();
}

/* ---- log lines ----------------------------------------------------------------- */
const char *rec_log_level_name(unsigned level)
{
	static const char *const names[] = { "trace", "debug", "info", "warn", "error", "fatal" };
	return level < sizeof names / sizeof names[0] ? names[level] : "unknown";
}

int rec_logv(unsigned level, const char *fmt, va_list ap)
{
	if (!fmt || ensure_init() != REC_OK || !rec_type_enabled(t_log))
		return 0;
	char buf[REC_EMIT_MAX_BYTES + 1];
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	if (n < 0)
		return 0;
	size_t len = (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
	rec_emit e;
	if (!rec_emit_begin(&e, t_log))
		return 0;
	rec_emit_u64(&e, level > 255 ? 255 : level);
	rec_emit_bytes(&e, buf, len);
	rec_emit_commit(&e);
	return 1;
}

int rec_log(unsigned level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = rec_logv(level, fmt, ap);
	va_end(ap);
	return r;
}
