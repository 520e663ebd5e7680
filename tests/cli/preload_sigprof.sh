#!/usr/bin/env bash
# A program with its own SIGPROF profiler under the preload library
# (tests/helpers/plain_sigprof.c, without librec: 500 ms of CPU, then its
# own SIGPROF handler through sigaction or signal and a 10 ms ITIMER_PROF,
# 300 ms of CPU): its handler is the one that runs (at least 15 of its ~30
# ticks), stderr says once that CPU sampling is off, and the recording has
# the CPU samples of the first 500 ms only (100 Hz: about 50, at most 60,
# where sampling on through the end would give about 80; at least 1: on a
# loaded machine the sampler's timers lose ticks, as many as half were seen
# with two other busy processes).  quiet=on: no message.
# REC_OPTIONS cpu=0 and cpu=50.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_sigprof" "$bin/rec-print"
msg="rec: the program sets its own SIGPROF handler; CPU sampling is off for the rest of the recording"

for how in sigaction signal; do
	preloaded "$how" "$tmp/$how.rec" "" "$tests/plain_sigprof" "$how"
	[ "$rc" = 0 ] || fail "$how: exit $rc"
	t=$(value "$how" ticks)
	[ "${t:-0}" -ge 15 ] || fail "$how: the program's handler got ${t:-no} ticks"
	[ "$(cat "$tmp/$how.err")" = "$msg" ] || fail "$how: stderr is '$(cat "$tmp/$how.err")'"
	n=$("$bin/rec-print" --json "$tmp/$how.rec" | grep -c '"type": "rec.CPUSample"')
	[ "$n" -ge 1 ] && [ "$n" -le 60 ] || fail "$how: $n CPU samples, want about 50 (the first 500 ms)"
done
preloaded quiet "$tmp/q.rec" quiet=on "$tests/plain_sigprof" sigaction
[ "$rc" = 0 ] && [ ! -s "$tmp/quiet.err" ] || fail "quiet=on: exit $rc, stderr '$(cat "$tmp/quiet.err")'"
# cpu=0: no CPU sampling at all (and nothing to say: the recorder's sampler
# is off); cpu=50: half the default's rate, about 25 samples in the first
# 500 ms (at most 35).  (Rates far above 100 Hz are not tested: CPU-time timers fire on
# the kernel's tick, 250 Hz here.)
preloaded off "$tmp/off.rec" cpu=0 "$tests/plain_sigprof" sigaction
[ "$rc" = 0 ] || fail "cpu=0: exit $rc"
n=$("$bin/rec-print" --json "$tmp/off.rec" | grep -c '"type": "rec.CPUSample"')
[ "$n" = 0 ] || fail "cpu=0: $n CPU samples"
preloaded slow "$tmp/slow.rec" cpu=50 "$tests/plain_sigprof" sigaction
n=$("$bin/rec-print" --json "$tmp/slow.rec" | grep -c '"type": "rec.CPUSample"')
[ "$n" -ge 1 ] && [ "$n" -le 35 ] || fail "cpu=50: $n CPU samples, want about 25 (the first 500 ms)"
cli_done preload_sigprof
