/* SPDX-License-Identifier: MIT */
/*
 * plain_exit.c - a program that knows nothing of rec (built without
 * librec) and leaves through _exit: it sleeps 30 ms, then calls _exit(3)
 * (no atexit handlers run).
 */
#include <time.h>
#include <unistd.h>

int main(void)
{
	struct timespec ts = { 0, 30 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	_exit(3);
}
