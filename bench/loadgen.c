/* SPDX-License-Identifier: MIT */
/*
 * loadgen - an open-loop HTTP/1.1 load generator for the example service
 * (bench/load.sh; not built by make).  One thread, epoll.  By default one
 * request per connection ("Connection: close", read to EOF); with
 * --keepalive, persistent connections: a request is sent on an idle open
 * connection if there is one, and its response ends after Content-Length.
 *
 *   loadgen open   --rate R --duration S [--warmup S] [--conns C] [common] [-- CMD ARG...]
 *   loadgen closed --conns C --duration S              [common] [-- CMD ARG...]
 *   loadgen startup                                    [common]  -- CMD ARG...
 *   common: [--port P] [--path /requests/fast] [--timeout S] [--keepalive]
 *           [--proto http|memcache] [--wait-port P] [--stop-signal INT|TERM]
 *           [--stop-exe PATH]
 *
 * open --keepalive: at most C connections (default 16, as wrk2's -c); a
 * request due while all C are busy is sent when one is free, and its
 * latency still runs from its scheduled time.  (Without --keepalive every
 * request opens its own connection and --conns is refused.)
 *
 * With "-- CMD ARG..." loadgen starts the service itself (stdout a pipe,
 * stderr inherited), times exec -> the line "listening on 127.0.0.1:PORT"
 * (start-up time, CLOCK_MONOTONIC from just before fork()), takes the port
 * from that line, runs the load, then sends SIGINT and waits for the exit
 * (the recording is finished at exit).  Without it, --port names a running
 * service.
 *
 * open: request i is due at t0 + i / R (a fixed schedule, whatever the
 * responses do: new connections are opened even while earlier requests are
 * still outstanding).  Latency is measured from each request's scheduled
 * (intended) send time to the end of its response (EOF after the response;
 * with --keepalive, its last Content-Length byte), not from the moment the
 * client got round to sending it, so a stall of the service or of the
 * client shows up in the latency of every request that was due during the
 * stall: the coordinated-omission correction of wrk2.  The uncorrected
 * figure (from connect(), or from the send on a kept-alive connection, to
 * the end of the response) is printed too.  Requests due during the first
 * --warmup seconds (default 1) are sent and counted but left out of the
 * latency percentiles.
 *
 * --proto memcache (implies --keepalive): the memcache text protocol
 * (bench/sidebyside.sh drives Debian's memcached with it).  Request i is
 * "set kK 0 0 32" with a 32-byte value when i % 10 == 0, else "get kK",
 * with K = (i / 10) % 1000: every get follows the set of its key, so it
 * hits once the first 1000 sets are in.  A response is complete at
 * "END\r\n" (get) or "STORED\r\n" (set) and ok then; ERROR,
 * CLIENT_ERROR and SERVER_ERROR lines count as errors.
 *
 * --wait-port P: the service is started on port P (its arguments say so)
 * and prints no "listening on" line: start-up ends at the first accepted
 * connect() to 127.0.0.1:P (tried every 5 ms, 60 s at most).
 * --stop-signal: the signal that stops the service (default INT).
 * --stop-exe PATH: the signal goes to the processes under CMD (its
 * descendants, from /proc) whose executable is PATH, not to CMD itself:
 * for a wrapper (rec-record, perf record, heaptrack) that must see the
 * program end by itself to finish its own output; loadgen still waits for
 * CMD, so wait4's rusage counts the wrapper, the program and every helper
 * process the wrapper waited for.
 *
 * closed: C connections in a loop (connect, request, read to EOF, again;
 * with --keepalive, requests one after another on C open connections) for
 * S seconds: the service's capacity (completed requests per second).
 *
 * Output: one line of key=value pairs on stdout, e.g.
 *   mode=open keepalive=0 connections=20000 rate=2000 duration=10 sent=20000
 *   ok=20000 errors=0 timeouts=0 throughput=1999.8 p50_us=.. p90_us=.. p99_us=.. p999_us=.. max_us=..
 *   raw_p50_us=.. raw_p99_us=.. late_max_us=.. startup_ms=.. service_cpu_s=..
 *   exit=0
 * connections = connections opened; sent = requests whose bytes were all
 * written; ok = responses with status 200; errors = connect/write/read failures and other statuses; timeouts =
 * requests without a full response after --timeout seconds (default 10).
 * late_max_us = the largest delay of an actual send behind its schedule;
 * service_cpu_s, service_minflt, service_csw = user + sys CPU time, minor
 * page faults and context switches of the service (all its threads, from
 * wait4's rusage), when loadgen started it.  window_cpu_s = the CPU time
 * of the service's processes (it and those below it once it had started)
 * from the first measured request's due time (after --warmup) to the last
 * response: the service at the load, without its start-up, warm-up and
 * shutdown (0 in closed mode or without CMD).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_EVENTS 256

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "loadgen: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ---- the service, when loadgen starts it ------------------------------------- */
static pid_t child = -1;
static int child_out = -1;
static unsigned wait_port;      /* --wait-port */
static int stop_signal = SIGINT; /* --stop-signal */
static const char *stop_exe;    /* --stop-exe */

/* --wait-port: true once a connect() to 127.0.0.1:port is accepted. */
static bool port_open(unsigned port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket");
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bool ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
	close(fd);
	return ok;
}

/* Starts argv with stdout a pipe; returns the start-up time in ns (fork ->
 * "listening on 127.0.0.1:PORT" read) and sets *port. */
static uint64_t start_service(char **argv, unsigned *port)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		die("pipe2");
	uint64_t t0 = now_ns();
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		if (dup2(p[1], 1) < 0)
			_exit(126);
		execvp(argv[0], argv);
		fprintf(stderr, "loadgen: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	child_out = p[0];
	if (wait_port) {
		for (int i = 0; i < 12000; i++) {
			if (port_open(wait_port)) {
				*port = wait_port;
				return now_ns() - t0;
			}
			int st;
			if (waitpid(child, &st, WNOHANG) == child) {
				fprintf(stderr, "loadgen: the service exited before port %u opened\n", wait_port);
				exit(1);
			}
			struct timespec ts = { 0, 5000000 };
			nanosleep(&ts, NULL);
		}
		fprintf(stderr, "loadgen: port %u did not open within 60 s\n", wait_port);
		exit(1);
	}
	char line[256];
	size_t len = 0;
	for (;;) {
		ssize_t n = read(child_out, line + len, 1); /* byte by byte: only the first line */
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "loadgen: the service exited before printing 'listening on'\n");
			exit(1);
		}
		if (line[len] == '\n' || len + 2 >= sizeof line) {
			line[len] = '\0';
			unsigned pt;
			if (sscanf(line, "listening on 127.0.0.1:%u", &pt) == 1) {
				*port = pt;
				return now_ns() - t0;
			}
			len = 0;
			continue;
		}
		len++;
	}
}

/* The parent pid of pid from /proc/PID/stat, or -1. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *e = strrchr(buf, ')'); /* the command name may hold spaces */
	long pp;
	if (!e || sscanf(e + 1, " %*c %ld", &pp) != 1)
		return -1;
	return (pid_t)pp;
}

/* Calls fn(pid, arg) for every process below child (from /proc); returns
 * how many fn counted (its return value summed). */
static int each_descendant(int (*fn)(pid_t, void *), void *arg)
{
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	int hit = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid == child)
			continue;
		for (pid_t p = parent_of((pid_t)pid), k = 0; p > 1 && k < 64; p = parent_of(p), k++)
			if (p == child) {
				hit += fn((pid_t)pid, arg);
				break;
			}
	}
	closedir(d);
	return hit;
}

struct sig_arg { const char *want; int sig; };

static int signal_if_exe(pid_t pid, void *p)
{
	const struct sig_arg *a = p;
	char link[64], exe[PATH_MAX];
	snprintf(link, sizeof link, "/proc/%ld/exe", (long)pid);
	ssize_t n = readlink(link, exe, sizeof exe - 1);
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	return strcmp(exe, a->want) == 0 && kill(pid, a->sig) == 0;
}

/* --stop-exe: sends sig to every descendant of child whose executable is
 * stop_exe; returns how many. */
static int signal_program(int sig)
{
	char want[PATH_MAX];
	if (!realpath(stop_exe, want))
		return 0;
	struct sig_arg a = { want, sig };
	return each_descendant(signal_if_exe, &a);
}

/* The measured window's CPU: the processes of the service (child and the
 * processes below it once it has started: a wrapper's program) are listed
 * once, before the load, and their CPU clocks (every thread's time, those
 * that ended included) read when the first measured request is due and
 * after the last response, so that the service's start-up, its warm-up
 * and its shutdown (a wrapper writing its output) are left out. */
#define MAX_TREE 64
static clockid_t tree_clock[MAX_TREE];
static int n_tree;

static int add_clock(pid_t pid, void *p)
{
	(void)p;
	if (n_tree < MAX_TREE && clock_getcpuclockid(pid, &tree_clock[n_tree]) == 0) {
		n_tree++;
		return 1;
	}
	return 0;
}

static void list_tree(void)
{
	n_tree = 0;
	(void)add_clock(child, NULL);
	(void)each_descendant(add_clock, NULL);
}

/* The CPU time of the listed processes, ns (a process that ended counts 0
 * from then on: the window's figure then says less than was spent). */
static uint64_t tree_cpu_ns(void)
{
	uint64_t sum = 0;
	for (int i = 0; i < n_tree; i++) {
		struct timespec ts;
		if (clock_gettime(tree_clock[i], &ts) == 0)
			sum += (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	return sum;
}

static double child_cpu_s; /* user + sys CPU time of the service, all threads */
static long child_minflt, child_csw; /* its minor page faults, context switches */

/* The stop signal, then wait (60 s max: a wrapper may write its output
 * first; then SIGKILL); returns the exit status or
 * 128 + signal. */
static int stop_service(void)
{
	if (child < 0)
		return 0;
	if (!stop_exe || signal_program(stop_signal) == 0)
		kill(child, stop_signal);
	int status = 0;
	struct rusage ru;
	memset(&ru, 0, sizeof ru);
	for (int i = 0; i < 6000; i++) {
		pid_t w = wait4(child, &status, WNOHANG, &ru);
		if (w == child)
			goto done;
		if (w < 0 && errno != EINTR)
			die("waitpid");
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "loadgen: the service did not exit within 60 s of its stop signal: SIGKILL\n");
	kill(child, SIGKILL);
	while (wait4(child, &status, 0, &ru) < 0 && errno == EINTR)
		;
done:
	child_cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		      (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	child_minflt = ru.ru_minflt;
	child_csw = ru.ru_nvcsw + ru.ru_nivcsw;
	child = -1;
	if (child_out >= 0) {
		char buf[4096]; /* whatever else it printed */
		while (read(child_out, buf, sizeof buf) > 0)
			;
		close(child_out);
		child_out = -1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- connections ---------------------------------------------------------------- */
enum cstate { C_FREE, C_CONNECTING, C_READING, C_IDLE };

typedef struct conn {
	int fd;
	enum cstate state;
	uint64_t intended; /* scheduled send time (open loop) */
	uint64_t started;  /* connect() called */
	char req[96];      /* this request's bytes */
	size_t req_len;
	size_t sent;       /* request bytes written */
	size_t got;        /* response bytes read (first 16 kept) */
	char head[16];
	bool counted;      /* in the percentiles */
	/* --keepalive: the response head as far as read, and its end */
	char hb[1024];
	size_t need;       /* response bytes in all (head + Content-Length), 0 = head not complete */
	bool server_close; /* the response said "Connection: close" */
	char tail[8];      /* --proto memcache: the response's last bytes */
	size_t tail_len;
} conn;

static conn *conns;
static size_t nconns;
static int *free_list;
static size_t nfree;
static int *idle_list; /* --keepalive: open connections without a request */
static size_t nidle;
static int ep;
static bool keepalive;
static uint64_t n_connections; /* connections opened */

static char request[512];
static size_t request_len;
static bool memcache;     /* --proto memcache */
static uint64_t req_seq;  /* requests begun: the memcache key sequence */
static struct sockaddr_in target;
static unsigned src_next; /* source address rotation 127.0.0.1 .. 127.0.0.250 */

static uint64_t n_sent, n_ok, n_err, n_timeout, n_started;
static uint64_t *lat, *raw;
static size_t n_lat, cap_lat;
static uint64_t late_max;
static uint64_t last_done; /* time of the last completed response */

static void lat_add(uint64_t corrected, uint64_t uncorrected)
{
	if (n_lat == cap_lat) {
		size_t nc = cap_lat ? cap_lat * 2 : 65536;
		uint64_t *a = realloc(lat, nc * sizeof *a), *b;
		if (!a)
			die("realloc");
		lat = a;
		b = realloc(raw, nc * sizeof *b);
		if (!b)
			die("realloc");
		raw = b;
		cap_lat = nc;
	}
	lat[n_lat] = corrected;
	raw[n_lat] = uncorrected;
	n_lat++;
}

static void close_conn(conn *c)
{
	if (c->fd >= 0) {
		epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
	}
	c->fd = -1;
	c->state = C_FREE;
	free_list[nfree++] = (int)(c - conns);
}

/* Requests in flight. */
static size_t busy(void)
{
	return nconns - nfree - nidle;
}

/* A request is over: counted, and its connection closed, or with
 * --keepalive kept for the next request when the response was complete and
 * did not say "Connection: close". */
static void finish(conn *c, bool ok, uint64_t t)
{
	if (ok && (memcache || (c->got >= 12 && memcmp(c->head, "HTTP/1.1 200", 12) == 0))) {
		n_ok++;
		last_done = t;
		if (c->counted)
			lat_add(t - c->intended, t - c->started);
	} else {
		n_err++;
	}
	if (ok && keepalive && c->need && !c->server_close && c->got == c->need) {
		c->state = C_IDLE; /* still in epoll: EPOLLRDHUP says if the service closes it */
		idle_list[nidle++] = (int)(c - conns);
	} else {
		close_conn(c);
	}
}

/* Sends the request on c (connected); false when the connection failed. */
static bool send_request(conn *c)
{
	while (c->sent < c->req_len) {
		ssize_t n = send(c->fd, c->req + c->sent, c->req_len - c->sent, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) { /* the rest at EPOLLOUT */
			if (c->state != C_CONNECTING) {
				c->state = C_CONNECTING;
				struct epoll_event ev = { .events = EPOLLOUT, .data.u32 = (uint32_t)(c - conns) };
				if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) != 0)
					die("epoll_ctl");
			}
			return true;
		}
		if (n <= 0)
			return false;
		c->sent += (size_t)n;
	}
	n_sent++;
	c->state = C_READING;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.u32 = (uint32_t)(c - conns) };
	if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) != 0)
		die("epoll_ctl");
	return true;
}

/* --keepalive: parses the response head once it is complete (Content-Length,
 * Connection: close); sets c->need. */
static void parse_head(conn *c)
{
	char *end = strstr(c->hb, "\r\n\r\n");
	if (!end)
		return;
	size_t clen = 0;
	bool have_len = false;
	for (char *l = strstr(c->hb, "\r\n"); l && l < end; l = strstr(l + 2, "\r\n")) {
		if (strncasecmp(l + 2, "Content-Length:", 15) == 0) {
			clen = strtoul(l + 17, NULL, 10);
			have_len = true;
		} else if (strncasecmp(l + 2, "Connection:", 11) == 0 && strncasecmp(l + 13, "close", 5) == 0) {
			c->server_close = true;
		}
	}
	if (!have_len) {
		c->server_close = true;
		c->need = SIZE_MAX; /* to EOF */
		return;
	}
	c->need = (size_t)(end + 4 - c->hb) + clen;
}

/* c's request state for a new request due at `intended`. */
static void begin_request(conn *c, uint64_t intended, bool counted)
{
	c->intended = intended;
	c->counted = counted;
	c->sent = c->got = c->need = 0;
	c->hb[0] = '\0';
	c->server_close = false;
	c->tail_len = 0;
	uint64_t i = req_seq++;
	if (!memcache) {
		memcpy(c->req, request, request_len);
		c->req_len = request_len;
	} else if (i % 10 == 0) {
		c->req_len = (size_t)snprintf(c->req, sizeof c->req,
					      "set k%llu 0 0 32\r\nvalue-%026llu\r\n",
					      (unsigned long long)(i / 10 % 1000), (unsigned long long)i);
	} else {
		c->req_len = (size_t)snprintf(c->req, sizeof c->req, "get k%llu\r\n",
					      (unsigned long long)(i / 10 % 1000));
	}
	c->started = now_ns();
}

/* --proto memcache: keeps the response's last bytes; 1 when it is complete
 * (END or STORED), -1 on an error line, 0 when more is due. */
static int memcache_done(conn *c, const char *buf, size_t n)
{
	size_t keep = sizeof c->tail;
	if (n >= keep) {
		memcpy(c->tail, buf + n - keep, keep);
		c->tail_len = keep;
	} else {
		size_t old = c->tail_len + n > keep ? keep - n : c->tail_len;
		memmove(c->tail, c->tail + c->tail_len - old, old);
		memcpy(c->tail + old, buf, n);
		c->tail_len = old + n;
	}
	if (c->tail_len >= 5 && memcmp(c->tail + c->tail_len - 5, "END\r\n", 5) == 0)
		return 1;
	if (c->tail_len >= 8 && memcmp(c->tail + c->tail_len - 8, "STORED\r\n", 8) == 0)
		return 1;
	if (c->tail_len >= 2 && memcmp(c->tail + c->tail_len - 2, "\r\n", 2) == 0 &&
	    c->got >= 5 && (memcmp(c->head, "ERROR", 5) == 0 || memcmp(c->head, "CLIENT_ERR", 10) == 0 ||
			    memcmp(c->head, "SERVER_ERR", 10) == 0))
		return -1;
	return 0;
}

/* Sends a request due at `intended` on an idle kept-alive connection, or
 * opens a non-blocking connection for it. */
static bool start_request(uint64_t intended, bool counted)
{
	while (nidle > 0) {
		conn *c = &conns[idle_list[--nidle]];
		begin_request(c, intended, counted);
		if (send_request(c)) {
			n_started++;
			return true;
		}
		close_conn(c); /* the service closed it meanwhile: another one */
	}
	if (nfree == 0)
		return false;
	conn *c = &conns[free_list[--nfree]];
	begin_request(c, intended, counted);
	n_started++;
	n_connections++;
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		fprintf(stderr, "loadgen: socket: %s\n", strerror(errno));
		finish(c, false, c->started);
		return true;
	}
	/* Many short connections: rotate the source address over 127.0.0.1-250
	 * so that the server side's TIME_WAIT entries do not exhaust the
	 * ephemeral ports of one (source, destination) pair. */
	int one = 1;
	(void)setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
	(void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	struct sockaddr_in src = { .sin_family = AF_INET };
	src.sin_addr.s_addr = htonl(0x7f000001u + (src_next++ % 250u));
	if (bind(c->fd, (struct sockaddr *)&src, sizeof src) != 0) {
		fprintf(stderr, "loadgen: bind: %s\n", strerror(errno));
		finish(c, false, c->started);
		return true;
	}
	if (connect(c->fd, (struct sockaddr *)&target, sizeof target) != 0 && errno != EINPROGRESS) {
		finish(c, false, c->started);
		return true;
	}
	c->state = C_CONNECTING;
	struct epoll_event ev = { .events = EPOLLOUT, .data.u32 = (uint32_t)(c - conns) };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0)
		die("epoll_ctl");
	return true;
}

static void on_event(conn *c, uint32_t events)
{
	if (c->state == C_CONNECTING) {
		int err = 0;
		socklen_t el = sizeof err;
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0) {
			finish(c, false, now_ns());
			return;
		}
		if (!send_request(c))
			finish(c, false, now_ns());
		return;
	}
	if (c->state == C_IDLE) { /* the service closed an idle connection */
		for (size_t k = 0; k < nidle; k++)
			if (idle_list[k] == (int)(c - conns)) {
				idle_list[k] = idle_list[--nidle];
				break;
			}
		close_conn(c);
		return;
	}
	if (c->state != C_READING)
		return;
	(void)events;
	char buf[4096];
	for (;;) {
		ssize_t n = recv(c->fd, buf, sizeof buf, 0);
		if (n > 0) {
			if (c->got < sizeof c->head) {
				size_t k = sizeof c->head - c->got;
				memcpy(c->head + c->got, buf, (size_t)n < k ? (size_t)n : k);
			}
			if (keepalive && !c->need && c->got + 1 < sizeof c->hb) {
				size_t k = sizeof c->hb - 1 - c->got;
				memcpy(c->hb + c->got, buf, (size_t)n < k ? (size_t)n : k);
				c->hb[c->got + ((size_t)n < k ? (size_t)n : k)] = '\0';
			}
			c->got += (size_t)n;
			if (memcache) {
				int d = memcache_done(c, buf, (size_t)n);
				if (d != 0) {
					c->need = c->got;
					finish(c, d > 0, now_ns());
					return;
				}
				continue;
			}
			if (keepalive && !c->need)
				parse_head(c);
			if (keepalive && c->need && !c->server_close && c->got >= c->need) {
				finish(c, c->got == c->need, now_ns());
				return;
			}
			continue;
		}
		if (n == 0) { /* EOF: complete, unless --keepalive knows more was due */
			finish(c, !keepalive || c->need == SIZE_MAX || (c->need && c->got == c->need), now_ns());
			return;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return;
		finish(c, false, now_ns());
		return;
	}
}

static void expire(uint64_t now, uint64_t timeout_ns)
{
	for (size_t i = 0; i < nconns; i++) {
		conn *c = &conns[i];
		if (c->state != C_FREE && c->state != C_IDLE && now > c->started && now - c->started > timeout_ns) {
			close_conn(c);
			n_timeout++;
		}
	}
}

/* Waits for socket events until `until` (absolute, CLOCK_MONOTONIC ns). */
static void poll_until(uint64_t until)
{
	struct epoll_event evs[MAX_EVENTS];
	uint64_t now = now_ns();
	uint64_t wait = until > now ? until - now : 0;
	struct timespec ts = { (time_t)(wait / 1000000000u), (long)(wait % 1000000000u) };
	int n = epoll_pwait2(ep, evs, MAX_EVENTS, &ts, NULL);
	if (n < 0) {
		if (errno == EINTR)
			return;
		die("epoll_pwait2");
	}
	for (int i = 0; i < n; i++)
		on_event(&conns[evs[i].data.u32], evs[i].events);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array, in microseconds. */
static double pct_us(const uint64_t *v, size_t n, double p)
{
	if (n == 0)
		return -1;
	size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return (double)v[rank - 1] / 1000.0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: loadgen open --rate R --duration S [--warmup S] [common] [-- CMD ARG...]\n"
		"       loadgen closed --conns C --duration S [common] [-- CMD ARG...]\n"
		"       loadgen startup [common] -- CMD ARG...\n"
		"common: [--port P] [--path PATH] [--timeout S] [--keepalive]\n"
		"        [--proto http|memcache] [--wait-port P] [--stop-signal INT|TERM] [--stop-exe PATH]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	const char *mode = argv[1];
	bool open_loop = strcmp(mode, "open") == 0, closed = strcmp(mode, "closed") == 0;
	bool startup_only = strcmp(mode, "startup") == 0;
	if (!open_loop && !closed && !startup_only)
		usage();
	double rate = 0, duration = 0, warmup = 1, timeout = 10;
	long nc = 0;
	unsigned port = 0;
	const char *path = "/requests/fast";
	char **cmd = NULL;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			cmd = argv + i + 1;
			if (!*cmd)
				usage();
			break;
		}
		if (strcmp(a, "--keepalive") == 0) {
			keepalive = true;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		const char *v = argv[++i];
		if (strcmp(a, "--rate") == 0)
			rate = atof(v);
		else if (strcmp(a, "--duration") == 0)
			duration = atof(v);
		else if (strcmp(a, "--warmup") == 0)
			warmup = atof(v);
		else if (strcmp(a, "--timeout") == 0)
			timeout = atof(v);
		else if (strcmp(a, "--conns") == 0)
			nc = atol(v);
		else if (strcmp(a, "--port") == 0)
			port = (unsigned)atol(v);
		else if (strcmp(a, "--path") == 0)
			path = v;
		else if (strcmp(a, "--proto") == 0 && (strcmp(v, "http") == 0 || strcmp(v, "memcache") == 0))
			memcache = strcmp(v, "memcache") == 0;
		else if (strcmp(a, "--wait-port") == 0)
			wait_port = (unsigned)atol(v);
		else if (strcmp(a, "--stop-signal") == 0 && (strcmp(v, "INT") == 0 || strcmp(v, "TERM") == 0))
			stop_signal = strcmp(v, "INT") == 0 ? SIGINT : SIGTERM;
		else if (strcmp(a, "--stop-exe") == 0)
			stop_exe = v;
		else
			usage();
	}
	if ((open_loop && (rate <= 0 || duration <= 0 || warmup < 0 || nc < 0 || (nc > 0 && !keepalive))) ||
	    (closed && (nc <= 0 || duration <= 0)) ||
	    (startup_only && !cmd) || (!cmd && port == 0) || timeout <= 0)
		usage();
	if (memcache)
		keepalive = true;
	signal(SIGPIPE, SIG_IGN);

	uint64_t startup_ns = 0;
	pid_t service_pid = 0;
	if (cmd) {
		startup_ns = start_service(cmd, &port);
		service_pid = child;
	}
	if (startup_only) {
		int st = stop_service();
		printf("mode=startup startup_ms=%.3f exit=%d\n", (double)startup_ns / 1e6, st);
		return st == 0 ? 0 : 1;
	}
	if (cmd && open_loop)
		list_tree(); /* for window_cpu_s */

	/* as many descriptors as allowed */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	nconns = closed || (keepalive && nc > 0) ? (size_t)nc
		 : keepalive			 ? 16
						 : (size_t)(rl.rlim_cur > 1100 ? rl.rlim_cur - 100 : 1000);
	if (nconns > 16384)
		nconns = 16384;
	conns = calloc(nconns, sizeof *conns);
	free_list = calloc(nconns, sizeof *free_list);
	idle_list = calloc(nconns, sizeof *idle_list);
	if (!conns || !free_list || !idle_list)
		die("calloc");
	for (size_t i = 0; i < nconns; i++) {
		conns[i].fd = -1;
		free_list[nfree++] = (int)(nconns - 1 - i);
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die("epoll_create1");
	request_len = (size_t)snprintf(request, sizeof request,
				       "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n", path,
				       keepalive ? "" : "Connection: close\r\n");
	target.sin_family = AF_INET;
	target.sin_port = htons((uint16_t)port);
	target.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

	uint64_t timeout_ns = (uint64_t)(timeout * 1e9);
	uint64_t t0 = now_ns() + 10000000u; /* 10 ms from now */
	uint64_t end = t0 + (uint64_t)(duration * 1e9);
	uint64_t no_slot = 0; /* open loop: requests due while every slot was busy */
	uint64_t last_expire = t0;
	uint64_t total = 0, i = 0;
	uint64_t window_cpu0 = 0; /* the service's CPU when the first measured request was due */
	if (open_loop) {
		total = (uint64_t)(rate * duration + 0.5);
		double interval = 1e9 / rate;
		uint64_t warm_n = (uint64_t)(rate * warmup + 0.5);
		while (i < total || busy() > 0) {
			uint64_t now = now_ns();
			while (i < total) {
				uint64_t due = t0 + (uint64_t)((double)i * interval);
				if (due > now)
					break;
				if (keepalive && nidle == 0 && nfree == 0)
					break; /* every connection busy: sent when one is free */
				if (now - due > late_max)
					late_max = now - due;
				if (i == warm_n && n_tree > 0)
					window_cpu0 = tree_cpu_ns();
				if (!start_request(due, i >= warm_n))
					no_slot++; /* counted as an error below */
				i++;
			}
			if (now - last_expire > 100000000u) {
				expire(now, timeout_ns);
				last_expire = now;
			}
			uint64_t next = i < total ? t0 + (uint64_t)((double)i * interval) : now + 100000000u;
			poll_until(next > now ? next : now + 100000000u);
		}
		n_err += no_slot;
	} else {
		/* closed loop: every slot busy all the time */
		while (now_ns() < t0)
			;
		for (size_t k = 0; k < nconns; k++)
			start_request(now_ns(), true);
		for (;;) {
			uint64_t now = now_ns();
			if (now >= end)
				break;
			while (nfree + nidle > 0 && now < end)
				start_request(now, true);
			poll_until(now + 10000000u < end ? now + 10000000u : end);
		}
		/* let the outstanding requests finish, not counted as completed in time */
		uint64_t done_ok = n_ok;
		while (busy() > 0 && now_ns() < end + timeout_ns)
			poll_until(now_ns() + 10000000u);
		expire(UINT64_MAX / 2, 0);
		n_ok = done_ok;
		total = n_started;
	}
	uint64_t t_end = now_ns();
	uint64_t window_cpu = n_tree > 0 && window_cpu0 > 0 ? tree_cpu_ns() - window_cpu0 : 0;
	while (nidle > 0)
		close_conn(&conns[idle_list[--nidle]]);
	int st = stop_service();

	qsort(lat, n_lat, sizeof *lat, cmp_u64);
	qsort(raw, n_lat, sizeof *raw, cmp_u64);
	double wall = (double)(t_end - t0) / 1e9;
	/* open loop: completed requests per second from the first scheduled send
	 * to the last response */
	double thr = closed ? (double)n_ok / duration
			    : (last_done > t0 ? (double)n_ok / ((double)(last_done - t0) / 1e9) : 0);
	printf("mode=%s keepalive=%d connections=%llu rate=%.1f duration=%.3f conns=%zu due=%llu sent=%llu ok=%llu errors=%llu "
	       "timeouts=%llu wall=%.3f throughput=%.1f measured=%zu p50_us=%.1f p90_us=%.1f p99_us=%.1f "
	       "p999_us=%.1f max_us=%.1f raw_p50_us=%.1f raw_p90_us=%.1f raw_p99_us=%.1f raw_p999_us=%.1f "
	       "late_max_us=%.1f startup_ms=%.3f service_cpu_s=%.3f service_minflt=%ld service_csw=%ld "
	       "window_cpu_s=%.3f service_pid=%ld exit=%d\n",
	       mode, keepalive, (unsigned long long)n_connections, rate, duration, nconns, (unsigned long long)total, (unsigned long long)n_sent,
	       (unsigned long long)n_ok, (unsigned long long)n_err, (unsigned long long)n_timeout, wall, thr,
	       n_lat, pct_us(lat, n_lat, 50), pct_us(lat, n_lat, 90), pct_us(lat, n_lat, 99),
	       pct_us(lat, n_lat, 99.9), n_lat ? (double)lat[n_lat - 1] / 1000.0 : -1,
	       pct_us(raw, n_lat, 50), pct_us(raw, n_lat, 90), pct_us(raw, n_lat, 99), pct_us(raw, n_lat, 99.9),
	       (double)late_max / 1000.0, (double)startup_ns / 1e6, child_cpu_s, child_minflt, child_csw, (double)window_cpu / 1e9, (long)service_pid, st);
	free(lat);
	free(raw);
	free(conns);
	free(free_list);
	free(idle_list);
	close(ep);
	return st == 0 ? 0 : 1;
}
