/* SPDX-License-Identifier: MIT */
/*
 * rec_test_lockorder.c - a real program with a potential deadlock that never
 * happens: thread "order-ab" takes lock "alpha" then "beta"; after it has
 * finished (joined), thread "order-ba" takes "beta" then "alpha".  Recorded
 * with the default recorder and the rec_mutex wrappers, so the recording
 * holds two rec.LockOrder events (alpha -> beta, beta -> alpha) that
 * rec-lockgraph --graph order reports as a cycle.  A third lock "gamma",
 * always taken last, adds edges that are not on the cycle.
 *
 *   rec_test_lockorder OUT.rec
 * Exits 0 on success.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/builtins.h"
#include "rec/recorder.h"

static rec_mutex alpha = REC_MUTEX_INITIALIZER("alpha");
static rec_mutex beta = REC_MUTEX_INITIALIZER("beta");
static rec_mutex gamma_lock = REC_MUTEX_INITIALIZER("gamma");
static volatile unsigned counter;

/* Not static: -rdynamic exports them, so the stacks name them. */
void *take_alpha_then_beta(void *arg);
void *take_beta_then_alpha(void *arg);

__attribute__((noinline)) void *take_alpha_then_beta(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "order-ab");
	for (int i = 0; i < 3; i++) {
		rec_mutex_lock(&alpha);
		rec_mutex_lock(&beta);
		rec_mutex_lock(&gamma_lock);
		counter++;
		rec_mutex_unlock(&gamma_lock);
		rec_mutex_unlock(&beta);
		rec_mutex_unlock(&alpha);
	}
	return NULL;
}

__attribute__((noinline)) void *take_beta_then_alpha(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "order-ba");
	for (int i = 0; i < 3; i++) {
		rec_mutex_lock(&beta);
		rec_mutex_lock(&alpha);
		counter++;
		rec_mutex_unlock(&alpha);
		rec_mutex_unlock(&beta);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: rec_test_lockorder OUT.rec\n");
		return 2;
	}
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	o.flags = REC_RECORDER_DEFAULT;
	o.path = argv[1];
	rec_recorder *r = NULL;
	rec_status st = rec_recorder_open(&r, &o);
	if (st != REC_OK) {
		fprintf(stderr, "rec_test_lockorder: recorder: %s\n", rec_strerror(st));
		return 1;
	}
	/* One thread after the other: the opposite orders never overlap. */
	pthread_t t;
	if (pthread_create(&t, NULL, take_alpha_then_beta, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	if (pthread_create(&t, NULL, take_beta_then_alpha, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	st = rec_recorder_close(r);
	if (st != REC_OK) {
		fprintf(stderr, "rec_test_lockorder: close: %s\n", rec_strerror(st));
		return 1;
	}
	return counter == 6 ? 0 : 1;
}
