/* SPDX-License-Identifier: MIT */
/*
 * sigprof_guard.c - sigaction and signal: a program that sets its own
 * SIGPROF disposition (its own profiler: gperftools, a setitimer
 * ITIMER_PROF loop) gets it, and the recorder's CPU sampling, which uses
 * SIGPROF, stops (its timers disarmed: the program's handler never sees the
 * recorder's signals after that).  Said once on stderr (not with
 * REC_OPTIONS quiet=on); the rest of the recording goes on.  A signal the
 * recorder sent just before may still reach the program's handler.  A
 * program that sets its own SIGURG disposition likewise turns off the wall
 * sampler's running-thread samples (wall_sampler.c; its blocked-call
 * samples go on).
 */
#include "preload/preload_internal.h"
#include "record/recorder_internal.h"
#include "rec/builtins.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static int said;

static void program_takes_sigprof(void)
{
	rec_in_recorder_++;
	rec_cpu_sampler_set_period(0);
	rec_in_recorder_--;
	if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED) || rec_env_quiet_())
		return;
	static const char msg[] = "rec: the program sets its own SIGPROF handler; CPU sampling "
				   "is off for the rest of the recording\n";
	(void)!write(STDERR_FILENO, msg, sizeof msg - 1);
}

REC_PRELOAD_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	rec_preload_ensure();
	if (sig == REC_WALL_SIGNAL && act != NULL && rec_preload_active())
		rec_wall_program_takes_signal();
	if (sig == SIGPROF && act != NULL && rec_preload_active())
		program_takes_sigprof();
	return rec_real_.sigaction(sig, act, old);
}

REC_PRELOAD_API sighandler_t signal(int sig, sighandler_t handler)
{
	rec_preload_ensure();
	if (sig == REC_WALL_SIGNAL && rec_preload_active())
		rec_wall_program_takes_signal();
	if (sig == SIGPROF && rec_preload_active())
		program_takes_sigprof();
	return rec_real_.signal(sig, handler);
}
