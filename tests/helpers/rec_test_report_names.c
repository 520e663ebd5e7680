/* SPDX-License-Identifier: MIT */
/*
 * rec_test_report_names - a recording whose strings attack an HTML page,
 * for tests/cli/report_browser.sh (rec-report -o page.html must show them
 * as text, never run them):
 *
 *   rec_test_report_names
 *
 * With the default recorder (REC_OUTPUT): a thread named "</script><b>"
 * (pthread names hold 15 bytes) runs an app.Job span whose field kind is
 * KIND below and, inside it, holds the rec_mutex named LOCK below while it
 * sleeps 80 ms; the main thread waits for that lock (one rec.LockWait
 * naming LOCK, held by "</script><b>").  Any of the strings
 * that ran would set window.__pwned.  Exits 0, or 1 with a message.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rec/builtins.h"
#include "rec/recorder.h"

#define LOCK "</script><img src=x onerror=\"window.__pwned='lock'\">"
#define KIND "</script><script>window.__pwned='kind'</script><!--"

static const rec_field job_fields[] = {
	{ "kind", "Kind", "", REC_TYPE_STRING, REC_UNIT_NONE },
};
static const rec_type job_def = { 0, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD, "app.Job", "Job",
				  "", "app", 1, job_fields };

static rec_mutex lock;
static rec_event_type *job;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held = PTHREAD_COND_INITIALIZER;
static int is_held;

static void *holder(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "</script><b>");
	rec_span s;
	rec_emit e;
	rec_span_begin(&s, job);
	rec_mutex_lock(&lock);
	pthread_mutex_lock(&m);
	is_held = 1;
	pthread_cond_signal(&held);
	pthread_mutex_unlock(&m);
	rec_sleep_ns(80 * 1000000u);
	rec_mutex_unlock(&lock);
	if (rec_span_end(&s, &e)) {
		rec_emit_string_dyn(&e, KIND);
		rec_emit_commit(&e);
	}
	return NULL;
}

int main(void)
{
	if (rec_type_declare(&job_def, 0, 0, &job) != REC_OK || !rec_recorder_default()) {
		fprintf(stderr, "rec_test_report_names: no default recorder (set REC_OUTPUT)\n");
		return 1;
	}
	if (rec_mutex_init(&lock, NULL, LOCK) != 0) {
		fprintf(stderr, "rec_test_report_names: rec_mutex_init failed\n");
		return 1;
	}
	pthread_t t;
	if (pthread_create(&t, NULL, holder, NULL) != 0) {
		fprintf(stderr, "rec_test_report_names: pthread_create failed\n");
		return 1;
	}
	pthread_mutex_lock(&m);
	while (!is_held)
		pthread_cond_wait(&held, &m);
	pthread_mutex_unlock(&m);
	rec_mutex_lock(&lock); /* waits ~80 ms: one rec.LockWait */
	rec_mutex_unlock(&lock);
	pthread_join(t, NULL);
	rec_mutex_destroy(&lock);
	return 0;
}
