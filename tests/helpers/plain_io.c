/* SPDX-License-Identifier: MIT */
/*
 * plain_io.c - a program that knows nothing of rec (built without librec)
 * and blocks in I/O, for the preload library's tests:
 *   - read() on a pipe that a thread writes 100 bytes to after 60 ms;
 *   - accept() on a loopback TCP listener that a thread connects to after
 *     50 ms, then recv() of the 5 bytes it sends 40 ms later;
 *   - 1000 short reads of a file it wrote (argv[1]): none should block.
 * Prints "client_port" (the connecting socket's port) and "pipe_bytes",
 * "recv_bytes" (what the blocking calls returned).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

static int pipe_w, port;
static volatile int client_port;

static void nap(long ms)
{
	struct timespec ts = { 0, ms * 1000 * 1000 };
	nanosleep(&ts, NULL);
}

static void *pipe_writer(void *arg)
{
	(void)arg;
	char buf[100];
	memset(buf, 'p', sizeof buf);
	nap(60);
	if (write(pipe_w, buf, sizeof buf) != (ssize_t)sizeof buf)
		return NULL;
	return NULL;
}

static void *client(void *arg)
{
	(void)arg;
	nap(50);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(c, (struct sockaddr *)&a, sizeof a) != 0)
		return NULL;
	struct sockaddr_in me;
	socklen_t len = sizeof me;
	getsockname(c, (struct sockaddr *)&me, &len);
	client_port = ntohs(me.sin_port);
	nap(40);
	if (send(c, "hello", 5, 0) != 5)
		return NULL;
	nap(50);
	close(c);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	int p[2];
	if (pipe(p) != 0)
		return 3;
	pipe_w = p[1];
	pthread_t pw, cl;
	pthread_create(&pw, NULL, pipe_writer, NULL);
	char buf[200];
	ssize_t pipe_bytes = read(p[0], buf, sizeof buf);
	pthread_join(pw, NULL);

	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof a;
	if (bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 1) != 0 ||
	    getsockname(l, (struct sockaddr *)&a, &len) != 0)
		return 4;
	port = ntohs(a.sin_port);
	pthread_create(&cl, NULL, client, NULL);
	int s = accept(l, NULL, NULL);
	ssize_t got = s >= 0 ? recv(s, buf, sizeof buf, 0) : -1;
	pthread_join(cl, NULL);

	int f = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (f < 0 || write(f, buf, 100) != 100)
		return 5;
	for (int i = 0; i < 1000; i++)
		if (pread(f, buf, 100, 0) != 100)
			return 6;
	close(f);
	printf("client_port %d\npipe_bytes %zd\nrecv_bytes %zd\n", client_port, pipe_bytes, got);
	return 0;
}
