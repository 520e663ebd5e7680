#!/usr/bin/env bash
# A program with its own SIGPROF profiler under the preload library
# (tests/helpers/plain_sigprof.c, without librec: 200 ms of CPU, then its
# own SIGPROF handler through sigaction or signal and a 10 ms ITIMER_PROF,
# 300 ms of CPU): its handler is the one that runs (at least 15 of its ~30
# ticks), stderr says once that CPU sampling is off, and the recording has
# the CPU samples of the first 200 ms only (100 Hz: about 20; at most 26, where
# sampling on through the end would give about 50).  quiet=on: no message.
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
	[ "$n" -ge 5 ] && [ "$n" -le 26 ] || fail "$how: $n CPU samples, want about 20 (the first 200 ms)"
done
preloaded quiet "$tmp/q.rec" quiet=on "$tests/plain_sigprof" sigaction
[ "$rc" = 0 ] && [ ! -s "$tmp/quiet.err" ] || fail "quiet=on: exit $rc, stderr '$(cat "$tmp/quiet.err")'"
cli_done preload_sigprof
