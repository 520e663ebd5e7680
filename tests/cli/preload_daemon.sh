#!/usr/bin/env bash
# A program that daemonizes under the preload library
# (tests/helpers/plain_daemon.c, without librec): it changes to / and closes
# every descriptor (close() one by one, close_range, closefrom), then waits
# on a lock, sleeps and writes 1000 lines to a file of its own.  REC_OUTPUT
# is relative (to the directory it started in): the recording is there,
# whole (rec-summary exit 0), with the 100 ms lock wait on daemon_lock and
# the sleep; the program's own file has exactly its 1000 lines (the
# recorder's descriptor was kept open, so no recording bytes went into it).
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_daemon" "$bin/rec-print" "$bin/rec-summary"
prog=$(cd "$tests" && pwd)/plain_daemon

for how in close range from; do
	mkdir -p "$tmp/$how"
	rc=0
	(cd "$tmp/$how" && timeout 60 env LD_PRELOAD="$preload" REC_OUTPUT=d.rec "$prog" "$tmp/$how/own.txt" "$how") \
		>"$tmp/$how.out" 2>"$tmp/$how.err" || rc=$?
	[ "$rc" = 0 ] || fail "$how: exit $rc: $(cat "$tmp/$how.err")"
	[ -e /d.rec ] && fail "$how: the recording went to /d.rec (the directory the program changed to)"
	want=$(for i in $(seq 0 999); do echo "daemon line $i"; done)
	[ "$(cat "$tmp/$how/own.txt")" = "$want" ] || fail "$how: the program's own file is not its 1000 lines"
	"$bin/rec-summary" "$tmp/$how/d.rec" >/dev/null 2>&1 || fail "$how: rec-summary of the recording failed"
	"$bin/rec-print" --json "$tmp/$how/d.rec" >"$tmp/$how.json" 2>/dev/null || fail "$how: rec-print failed"
	grep -q '"lockName": "daemon_lock"' "$tmp/$how.json" || fail "$how: no lock wait on daemon_lock"
	grep -q '"requested": 100000000' "$tmp/$how.json" || fail "$how: no 100 ms sleep"
done
cli_done preload_daemon
