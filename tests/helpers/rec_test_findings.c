/* SPDX-License-Identifier: MIT */
/*
 * rec_test_findings - spans whose truth tests/cli/report.sh knows, for the
 * rules of rec-report the example service cannot trigger or must not.
 *
 *   rec_test_findings cpu N MS
 *
 * With the default recorder (REC_OUTPUT; REC_CPU_SAMPLE_PERIOD sets the CPU
 * sampler's period): the main thread, named "cruncher", attaches to the
 * recorder, waits 100 ms (the sampler arms its timer in a background round),
 * then runs N app.Job spans (field kind "hash") of MS ms of CPU each: a busy
 * loop on the thread's CPU clock, no sleep, lock or allocation inside.  So
 * the spans compute, they do not wait (waiting-not-computing must stay
 * silent), and with a sampler period shorter than the kernel's tick the CPU
 * samples carry overruns (sampler-behind).  Prints "spans=N cpu_ns=T" (T:
 * the thread's CPU time inside the spans, clock_gettime).  Exits 0, or 1
 * with a message on stderr.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rec/recorder.h"

static const rec_field job_fields[] = {
	{ "kind", "Kind", "", REC_TYPE_STRING, REC_UNIT_NONE },
};
static const rec_type job_def = { 0, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD, "app.Job", "Job",
				  "", "app", 1, job_fields };

static uint64_t cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static volatile uint64_t sink;

static void spin(uint64_t ns)
{
	uint64_t end = cpu_now() + ns;
	uint64_t h = 1469598103934665603ull;
	while (cpu_now() < end)
		for (int i = 0; i < 1000; i++)
			h = (h ^ (uint64_t)i) * 1099511628211ull;
	sink = h;
}

int main(int argc, char **argv)
{
	if (argc != 4 || strcmp(argv[1], "cpu") != 0) {
		fprintf(stderr, "usage: rec_test_findings cpu N MS\n");
		return 1;
	}
	unsigned long n = strtoul(argv[2], NULL, 10), ms = strtoul(argv[3], NULL, 10);
	rec_event_type *t;
	pthread_setname_np(pthread_self(), "cruncher");
	if (rec_type_declare(&job_def, 0, 0, &t) != REC_OK || !rec_recorder_default()) {
		fprintf(stderr, "rec_test_findings: no default recorder (set REC_OUTPUT)\n");
		return 1;
	}
	if (rec_recorder_attach_thread(rec_recorder_default()) != REC_OK) {
		fprintf(stderr, "rec_test_findings: cannot attach the thread\n");
		return 1;
	}
	struct timespec pause = { 0, 100000000 };
	nanosleep(&pause, NULL);
	uint64_t cpu = 0;
	for (unsigned long i = 0; i < n; i++) {
		rec_span s;
		rec_emit e;
		uint64_t c0 = cpu_now();
		rec_span_begin(&s, t);
		spin((uint64_t)ms * 1000000u);
		if (rec_span_end(&s, &e)) {
			rec_emit_string_dyn(&e, "hash");
			rec_emit_commit(&e);
		}
		cpu += cpu_now() - c0;
	}
	printf("spans=%lu cpu_ns=%llu\n", n, (unsigned long long)cpu);
	return 0;
}
