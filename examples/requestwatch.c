/* SPDX-License-Identifier: MIT */
/*
 * requestwatch - a small HTTP/1.1 service instrumented with the rec recorder.
 *
 *   requestwatch [--port PORT] [--stack-kib K]
 *
 * PORT defaults to 8080 (0 picks a free port).  Connection threads get
 * K KiB of stack (default 256; 0 = the system default, RLIMIT_STACK, usually
 * 8 MiB).  glibc keeps the stacks of exited threads for reuse up to 40 MiB in
 * all: with 8 MiB stacks that is 4 threads, and a thread-per-connection
 * service with more connections in flight maps and faults in a fresh stack
 * for each new thread (bench/ANALYSIS.md measures it).
 *
 * It serves on 127.0.0.1 with plain sockets and one thread per connection
 * ("conn-N"; the accept thread is "accept").  Connections are persistent as
 * HTTP/1.1 says (one request after another on the same connection and
 * thread) unless the request says "Connection: close" (HTTP/1.0: unless it
 * says "Connection: keep-alive"); an idle connection is closed after 5 s.
 * Endpoints:
 *
 *   /requests/fast            returns the cached quote (no lock)
 *   /requests/blocking        takes the global "quote-cache-lock" mutex, then
 *                             sleeps 150 ms inside it (a slow refresh)
 *   /requests/blocking-fixed  sleeps 150 ms, then takes the mutex only to
 *                             store the result
 *   /requests/allocating      allocates 768 buffers of 8192 bytes (6,291,456
 *                             bytes), reports them, touches and frees them
 *
 * Before serving, a warm-up allocates 256 buffers of 16384 bytes and sleeps
 * 400 ms.  Then it prints "listening on 127.0.0.1:PORT" on stdout.
 *
 * Every request is an app.Request duration event (fields path, status).
 * Recording is on when REC_OUTPUT is set (the default recorder).  SIGINT or
 * SIGTERM stop accepting, join the connection threads, write the recording
 * out and exit 0 (the library's exit handler then closes it: FINAL chunk).
 *
 * Built with -DREQUESTWATCH_PLAIN (build/bin/requestwatch-plain) it neither
 * includes nor links rec: the same service with plain pthread_mutex_lock,
 * nanosleep and malloc calls, as a program nobody instrumented, for
 * rec-record (and its preload library) to record.  Its app.Request spans,
 * counter, gauge, log lines and allocation reports are not there.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#ifndef REQUESTWATCH_PLAIN
#include <rec/builtins.h>
#include <rec/metrics.h>
#include <rec/recorder.h>
#endif

#define SLOW_REFRESH_NS (150ull * 1000000ull)
#define WARMUP_SLEEP_NS (400ull * 1000000ull)
#define WARMUP_BUFFERS 256
#define WARMUP_BUFFER_SIZE 16384
#define ALLOC_BUFFERS 768
#define ALLOC_BUFFER_SIZE 8192

/* ---- the signal self-pipe ------------------------------------------------ */
static int stop_pipe[2] = { -1, -1 };

static void on_stop_signal(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;
	ssize_t n = write(stop_pipe[1], &b, 1); /* pipe is non-blocking */
	(void)n;
	errno = saved;
}

/* ---- the quote cache ----------------------------------------------------- */
static const char *const quotes[] = {
	"Premature optimization is the root of all evil.",
	"Make it work, make it right, make it fast.",
	"Measure. Don't tune for speed until you've measured.",
	"The cheapest, fastest and most reliable components are those that aren't there.",
};
#define QUOTE_COUNT (sizeof quotes / sizeof quotes[0])
static _Atomic unsigned cached_quote; /* read without the lock by /fast */
static unsigned refresh_count;        /* guarded by quote_lock */

/* ---- instrumentation ------------------------------------------------------ */
#ifndef REQUESTWATCH_PLAIN
/* The global mutex, named so lock-wait events say which lock it was. */
static rec_mutex quote_cache_lock = REC_MUTEX_INITIALIZER("quote-cache-lock");
#define app_mutex_lock rec_mutex_lock
#define app_mutex_unlock rec_mutex_unlock
#define app_sleep_ns rec_sleep_ns
#define app_alloc_report rec_alloc_report
#define app_log rec_log

/* app.Request: one duration event per request, on the connection thread. */
static const rec_field request_fields[] = {
	{ "path", "Path", "request path (query string removed)", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "status", "Status", "HTTP status code", REC_TYPE_U16, REC_UNIT_NONE },
};
/* It can carry a stack trace: off as declared (flags 0 below), on with
 * REC_OPTIONS=events=...:stack=on (bench/load.sh's "everything" setting). */
static const rec_type request_def = {
	0, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD | REC_EVENT_HAS_STACK, "app.Request", "HTTP Request",
	"One HTTP request served by requestwatch, from its parsed head to the response sent", "app",
	sizeof request_fields / sizeof request_fields[0], request_fields,
};
static rec_event_type *request_type;
static rec_counter *requests_served;
static rec_gauge *requests_in_flight;

/* Declared process-wide: records while the default recorder (REC_OUTPUT) is
 * open, costs a load and a branch otherwise. */
static int instrumentation_init(void)
{
	rec_status st = rec_type_declare(&request_def, 0, 0, &request_type);
	if (st == REC_OK)
		st = rec_counter_get("requestwatch.requests", &requests_served);
	if (st == REC_OK)
		st = rec_gauge_get("requestwatch.inFlight", &requests_in_flight);
	if (st != REC_OK) {
		fprintf(stderr, "requestwatch: recorder set-up failed: %s\n", rec_strerror(st));
		return -1;
	}
	return 0;
}

/* Finishes the recording.  The default recorder that REC_OUTPUT started
 * belongs to the library, which closes it at exit (an atexit handler writes
 * the FINAL chunk), so the program must not close it itself: here every
 * event so far is written now, so that a write error is reported and the
 * exit status says so; the atexit close then only adds the last events. */
static int instrumentation_finish(void)
{
	rec_recorder *r = rec_recorder_default();
	if (!r)
		return 0;
	rec_status st = rec_recorder_flush(r);
	if (st != REC_OK) {
		fprintf(stderr, "requestwatch: writing the recording failed: %s\n", rec_strerror(st));
		return -1;
	}
	return 0;
}

/* One request: the span begins when its head is parsed, ends after the
 * response was sent. */
typedef rec_span request_span;

static void request_begin(request_span *span)
{
	rec_span_begin(span, request_type);
	rec_gauge_add(requests_in_flight, 1);
}

static void request_end(request_span *span, const char *path, unsigned status)
{
	rec_gauge_add(requests_in_flight, -1);
	rec_counter_add(requests_served, 1);
	rec_emit e;
	if (rec_span_end(span, &e)) {
		/* Client-chosen paths of 404s are interned too: cap their length. */
		rec_emit_string_dyn_len(&e, path, strnlen(path, 128));
		rec_emit_u64(&e, status);
		rec_emit_commit(&e);
	}
}

static unsigned long long requests_count(void)
{
	return (unsigned long long)rec_counter_value(requests_served);
}
#else /* REQUESTWATCH_PLAIN: no rec at all */
/* The global mutex: a preload library names it by this symbol. */
static pthread_mutex_t quote_cache_lock = PTHREAD_MUTEX_INITIALIZER;
#define app_mutex_lock pthread_mutex_lock
#define app_mutex_unlock pthread_mutex_unlock
#define app_alloc_report(p, size) ((void)(p), (void)(size))
/* Log lines are the recorder's: here their arguments are only evaluated. */
#define app_log(level, ...) app_log_plain(__VA_ARGS__)
static void app_log_plain(const char *fmt, ...)
{
	(void)fmt;
}

static void app_sleep_ns(unsigned long long ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static _Atomic unsigned long long requests_served;
#ifdef REQUESTWATCH_LTTNG
/* bench/sidebyside.sh's LTTng-UST arm: app.Request as the tracepoint
 * requestwatch:request of bench/lttng/rw_tp.h (path, status, duration) */
#include "rw_tp.h"
typedef struct request_span {
	struct timespec begin;
} request_span;
#else
typedef struct request_span {
	char unused;
} request_span;
#endif

static int instrumentation_init(void)
{
	return 0;
}

static int instrumentation_finish(void)
{
	return 0;
}

static void request_begin(request_span *span)
{
#ifdef REQUESTWATCH_LTTNG
	clock_gettime(CLOCK_MONOTONIC, &span->begin);
#else
	(void)span;
#endif
}

static void request_end(request_span *span, const char *path, unsigned status)
{
#ifdef REQUESTWATCH_LTTNG
	rw_tp_request(&span->begin, path, status);
#else
	(void)span, (void)path, (void)status;
#endif
	atomic_fetch_add(&requests_served, 1);
}

static unsigned long long requests_count(void)
{
	return atomic_load(&requests_served);
}
#endif /* REQUESTWATCH_PLAIN */

/* ---- endpoints ------------------------------------------------------------ */
typedef struct response {
	unsigned status;
	char body[256];
} response;

static void serve_fast(response *r)
{
	unsigned q = atomic_load_explicit(&cached_quote, memory_order_relaxed);
	r->status = 200;
	snprintf(r->body, sizeof r->body, "%s\n", quotes[q % QUOTE_COUNT]);
}

/* The slow path: the refresh (a 150 ms sleep) happens with the lock held,
 * so concurrent requests queue up behind it. */
static void serve_blocking(response *r)
{
	app_mutex_lock(&quote_cache_lock);
	app_sleep_ns(SLOW_REFRESH_NS);
	unsigned q = ++refresh_count % QUOTE_COUNT;
	atomic_store_explicit(&cached_quote, q, memory_order_relaxed);
	app_mutex_unlock(&quote_cache_lock);
	r->status = 200;
	snprintf(r->body, sizeof r->body, "%s\n", quotes[q]);
}

/* The fix: refresh without the lock, take it only to store the result. */
static void serve_blocking_fixed(response *r)
{
	app_sleep_ns(SLOW_REFRESH_NS);
	app_mutex_lock(&quote_cache_lock);
	unsigned q = ++refresh_count % QUOTE_COUNT;
	atomic_store_explicit(&cached_quote, q, memory_order_relaxed);
	app_mutex_unlock(&quote_cache_lock);
	r->status = 200;
	snprintf(r->body, sizeof r->body, "%s\n", quotes[q]);
}

/* Writes every byte of p, then reads one byte per page back through a
 * volatile pointer, so the compiler cannot drop the stores as dead before
 * the free().  Returns the bytes read (to be used by the caller). */
static unsigned touch(void *p, size_t n, int byte)
{
	memset(p, byte, n);
	unsigned sum = 0;
	for (size_t i = 0; i < n; i += 4096)
		sum += ((volatile unsigned char *)p)[i];
	return sum;
}

/* Allocates 768 x 8192 bytes, reports each, touches them, frees them. */
static void serve_allocating(response *r)
{
	void **b = calloc(ALLOC_BUFFERS, sizeof *b);
	size_t n = 0, total = 0;
	unsigned sum = 0;
	if (b) {
		for (n = 0; n < ALLOC_BUFFERS; n++) {
			b[n] = malloc(ALLOC_BUFFER_SIZE);
			if (!b[n])
				break;
			app_alloc_report(b[n], ALLOC_BUFFER_SIZE); /* rec.Alloc, exact size */
			sum += touch(b[n], ALLOC_BUFFER_SIZE, (int)(n & 0xff));
			total += ALLOC_BUFFER_SIZE;
		}
		for (size_t i = 0; i < n; i++)
			free(b[i]);
		free(b);
	}
	if (n == ALLOC_BUFFERS) {
		r->status = 200;
		snprintf(r->body, sizeof r->body, "allocated %zu bytes in %zu buffers (checksum %u)\n",
			 total, n, sum);
	} else {
		r->status = 503;
		snprintf(r->body, sizeof r->body, "out of memory\n");
	}
}

/* ---- HTTP ----------------------------------------------------------------- */
static const char *status_text(unsigned status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 503: return "Service Unavailable";
	default: return "Error";
	}
}

static bool send_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* What a connection has received: the current request's head is data[0,
 * head); bytes after it (a pipelined next request) are kept for the next one. */
typedef struct reqbuf {
	char data[8192];
	size_t len;  /* bytes held */
	size_t head; /* length of the current request's head, 0 before one is read */
} reqbuf;

/* The end of the first head in b (just past its blank line), or 0. */
static size_t head_end(const reqbuf *b)
{
	for (size_t i = 0; i + 1 < b->len; i++) {
		if (b->data[i] != '\n')
			continue;
		if (b->data[i + 1] == '\n')
			return i + 2;
		if (b->data[i + 1] == '\r' && i + 2 < b->len && b->data[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* Reads the next request head into b (after dropping the previous one);
 * returns its length, or -1 when the peer closed, went quiet for 5 s, sent
 * too much, or the service is stopping.  Between requests on a kept-alive
 * connection it waits in poll() on the socket and the stop pipe, so an idle
 * connection does not hold up SIGINT. */
static ssize_t read_head(int fd, reqbuf *b, bool between_requests)
{
	memmove(b->data, b->data + b->head, b->len - b->head);
	b->len -= b->head;
	b->head = 0;
	for (;;) {
		size_t end = head_end(b);
		if (end) {
			b->head = end;
			return (ssize_t)end;
		}
		if (b->len + 1 >= sizeof b->data)
			return -1;
		if (between_requests && b->len == 0) {
			struct pollfd pfd[2] = {
				{ .fd = fd, .events = POLLIN },
				{ .fd = stop_pipe[0], .events = POLLIN },
			};
			int pr = poll(pfd, 2, 5000);
			if (pr < 0 && errno == EINTR)
				continue;
			if (pr <= 0 || pfd[1].revents)
				return -1;
		}
		ssize_t n = recv(fd, b->data + b->len, sizeof b->data - 1 - b->len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		b->len += (size_t)n;
	}
}

/* Whether the connection stays open after this request: HTTP/1.1 unless it
 * says "Connection: close", HTTP/1.0 only with "Connection: keep-alive".
 * head is NUL-terminated. */
static bool wants_keep_alive(const char *head, int minor)
{
	bool keep = minor >= 1;
	for (const char *l = strchr(head, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
		if (strncasecmp(l + 1, "Connection:", 11) != 0)
			continue;
		const char *v = l + 12, *eol = strchr(v, '\n');
		size_t n = eol ? (size_t)(eol - v) : strlen(v);
		char val[64];
		if (n >= sizeof val)
			n = sizeof val - 1;
		memcpy(val, v, n);
		val[n] = '\0';
		if (strcasestr(val, "close"))
			keep = false;
		else if (strcasestr(val, "keep-alive"))
			keep = true;
	}
	return keep;
}

typedef struct route {
	const char *path;
	void (*serve)(response *r);
} route;

static const route routes[] = {
	{ "/requests/fast", serve_fast },
	{ "/requests/blocking", serve_blocking },
	{ "/requests/blocking-fixed", serve_blocking_fixed },
	{ "/requests/allocating", serve_allocating },
};

/* Serves one request from b (its head already read); returns whether the
 * connection stays open for another. */
static bool handle_request(int fd, reqbuf *b)
{
	char path[1024] = "";
	response r = { 400, "bad request\n" };
	request_span span;

	request_begin(&span);

	/* the head as a string: the byte after it is put back below */
	char saved = b->data[b->head];
	b->data[b->head] = '\0';
	const char *head = b->data;
	int minor = 0;
	bool keep = false;
	char method[16];
	bool head_only = false;
	if (sscanf(head, "%15s %1023s HTTP/1.%d", method, path, &minor) != 3) {
		r.status = 400;
		snprintf(r.body, sizeof r.body, "bad request\n");
	} else if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		r.status = 405;
		snprintf(r.body, sizeof r.body, "method not allowed\n");
	} else {
		head_only = strcmp(method, "HEAD") == 0;
		keep = wants_keep_alive(head, minor);
		char *q = strchr(path, '?');
		if (q)
			*q = '\0';
		r.status = 404;
		snprintf(r.body, sizeof r.body, "not found\n");
		for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
			if (strcmp(path, routes[i].path) == 0) {
				routes[i].serve(&r);
				break;
			}
		}
	}

	b->data[b->head] = saved;

	char out[512];
	size_t body_len = strlen(r.body);
	int n = snprintf(out, sizeof out,
			 "HTTP/1.1 %u %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
			 "%s\r\n%s",
			 r.status, status_text(r.status), body_len,
			 !keep ? "Connection: close\r\n" : minor == 0 ? "Connection: keep-alive\r\n" : "",
			 head_only ? "" : r.body);
	if (n <= 0 || !send_all(fd, out, (size_t)n < sizeof out ? (size_t)n : sizeof out - 1))
		keep = false;
	request_end(&span, path, r.status);
	return keep;
}

/* ---- connection threads ------------------------------------------------------ */
typedef struct conn {
	pthread_t thread;
	int fd;
	unsigned number;
	_Atomic bool done;
	struct conn *next;
} conn;

static void *conn_main(void *arg)
{
	conn *c = arg;
	char name[16];
	snprintf(name, sizeof name, "conn-%u", c->number % 100000000u);
	pthread_setname_np(pthread_self(), name);
	struct timeval tv = { 5, 0 };
	(void)setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	(void)setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	reqbuf b;
	b.len = b.head = 0;
	for (bool again = false; read_head(c->fd, &b, again) >= 0; again = true)
		if (!handle_request(c->fd, &b))
			break;
	close(c->fd);
	atomic_store(&c->done, true);
	return NULL;
}

/* Joins finished connection threads (all of them when all is set). */
static void reap(conn **list, bool all)
{
	for (conn **pp = list; *pp;) {
		conn *c = *pp;
		if (all || atomic_load(&c->done)) {
			pthread_join(c->thread, NULL);
			*pp = c->next;
			free(c);
		} else {
			pp = &c->next;
		}
	}
}

typedef struct server {
	int listen_fd;
	const pthread_attr_t *attr; /* of the connection threads */
} server;

static void *accept_main(void *arg)
{
	server *s = arg;
	conn *live = NULL;
	unsigned next_number = 1;
	pthread_setname_np(pthread_self(), "accept");

	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = s->listen_fd, .events = POLLIN },
			{ .fd = stop_pipe[0], .events = POLLIN },
		};
		int pr = poll(pfd, 2, 1000);
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			perror("requestwatch: poll");
			break;
		}
		reap(&live, false);
		if (pfd[1].revents)
			break; /* SIGINT/SIGTERM */
		if (!(pfd[0].revents & POLLIN))
			continue;
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
				perror("requestwatch: accept");
			continue;
		}
		conn *c = calloc(1, sizeof *c);
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->number = next_number++;
		int err = pthread_create(&c->thread, s->attr, conn_main, c);
		if (err) {
			fprintf(stderr, "requestwatch: pthread_create: %s\n", strerror(err));
			close(fd);
			free(c);
			continue;
		}
		c->next = live;
		live = c;
	}
	close(s->listen_fd);
	s->listen_fd = -1;
	reap(&live, true);
	return NULL;
}

/* ---- start-up ------------------------------------------------------------------ */
/* Start-up: fill 256 x 16 KiB of buffers (reported), then wait 400 ms as if
 * for a backend, then release them; all before the first request.  Not
 * inlined into main, so that stacks name it. */
__attribute__((noinline)) static void warm_up(void)
{
	void **b = calloc(WARMUP_BUFFERS, sizeof *b);
	size_t n = 0;
	if (b) {
		for (n = 0; n < WARMUP_BUFFERS; n++) {
			b[n] = malloc(WARMUP_BUFFER_SIZE);
			if (!b[n])
				break;
			app_alloc_report(b[n], WARMUP_BUFFER_SIZE);
			(void)touch(b[n], WARMUP_BUFFER_SIZE, 0x5a);
		}
	}
	app_sleep_ns(WARMUP_SLEEP_NS); /* e.g. waiting for a backend to come up */
	for (size_t i = 0; i < n; i++)
		free(b[i]);
	free(b);
}

static int open_listener(unsigned port, unsigned *bound_port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("requestwatch: socket");
		return -1;
	}
	int one = 1;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		fprintf(stderr, "requestwatch: bind 127.0.0.1:%u: %s\n", port, strerror(errno));
		close(fd);
		return -1;
	}
	/* A deep accept queue: under an open-loop load a short stall of this
	 * process would otherwise overflow it, and the kernel's dropped SYNs
	 * come back only after its 1 s (then 3 s) retransmission timer. */
	if (listen(fd, SOMAXCONN) != 0) {
		perror("requestwatch: listen");
		close(fd);
		return -1;
	}
	socklen_t alen = sizeof a;
	if (getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
		perror("requestwatch: getsockname");
		close(fd);
		return -1;
	}
	*bound_port = ntohs(a.sin_port);
	return fd;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: requestwatch [--port PORT] [--stack-kib K]\n"
		   "  --port PORT      TCP port on 127.0.0.1 (default 8080; 0 picks a free one)\n"
		   "  --stack-kib K    stack of each connection thread in KiB (default 256;\n"
		   "                   0 = the system default)\n"
		   "Records to $REC_OUTPUT when it is set; SIGINT/SIGTERM stop it cleanly.\n");
}

/* If argv[*i] is option name ("--name VALUE" or "--name=VALUE"), its value
 * (advancing *i past a separate one), else NULL. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];
	if (strncmp(a, name, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] == '\0' && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}

/* A decimal in [0, max], or -1. */
static long parse_uint(const char *s, unsigned long max)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max || s[0] == '-')
		return -1;
	return (long)v;
}

int main(int argc, char **argv)
{
	long port = 8080, stack_kib = 256;
	for (int i = 1; i < argc; i++) {
		const char *v;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else if ((v = option_value(argc, argv, &i, "--port")) != NULL) {
			if ((port = parse_uint(v, 65535)) < 0) {
				fprintf(stderr, "requestwatch: bad port '%s'\n", v);
				return 2;
			}
		} else if ((v = option_value(argc, argv, &i, "--stack-kib")) != NULL) {
			/* 0, or at least 64 KiB: a request needs about 10 */
			stack_kib = parse_uint(v, 1024 * 1024);
			if (stack_kib < 0 || (stack_kib > 0 && stack_kib < 64)) {
				fprintf(stderr, "requestwatch: bad --stack-kib '%s' (0, or 64 to 1048576)\n", v);
				return 2;
			}
		} else {
			fprintf(stderr, "requestwatch: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	/* Connection threads' attributes: 0 keeps the system's default stack. */
	pthread_attr_t attr;
	if (pthread_attr_init(&attr) != 0 ||
	    (stack_kib && pthread_attr_setstacksize(&attr, (size_t)stack_kib * 1024) != 0)) {
		fprintf(stderr, "requestwatch: cannot set a %ld KiB thread stack\n", stack_kib);
		return 2;
	}

	if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
		perror("requestwatch: pipe2");
		return 1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0) {
		perror("requestwatch: sigaction");
		return 1;
	}

	/* With REC_OUTPUT set, the default recorder is already recording. */
	if (instrumentation_init() != 0)
		return 1;
	app_log(REC_LOG_INFO, "requestwatch starting: warm-up, then port %ld", port);
	warm_up();

	server s;
	s.attr = &attr;
	unsigned bound;
	s.listen_fd = open_listener((unsigned)port, &bound);
	if (s.listen_fd < 0) {
		app_log(REC_LOG_ERROR, "cannot listen on 127.0.0.1:%ld", port);
		(void)instrumentation_finish();
		return 1;
	}
	pthread_t acceptor;
	int err = pthread_create(&acceptor, NULL, accept_main, &s);
	if (err) {
		fprintf(stderr, "requestwatch: pthread_create: %s\n", strerror(err));
		close(s.listen_fd);
		(void)instrumentation_finish();
		return 1;
	}
	app_log(REC_LOG_INFO, "listening on 127.0.0.1:%u", bound);
	printf("listening on 127.0.0.1:%u\n", bound);
	fflush(stdout);
	pthread_join(acceptor, NULL); /* returns after SIGINT/SIGTERM, threads joined */
	pthread_attr_destroy(&attr);
	app_log(REC_LOG_INFO, "requestwatch stopped after %llu requests", requests_count());
	return instrumentation_finish() == 0 ? 0 : 1;
}
