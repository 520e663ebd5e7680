#!/usr/bin/env bash
# fork from a multithreaded program under the preload library
# (tests/helpers/plain_fork.c, without librec: 4 threads that lock and
# allocate, each forking 5 children that allocate, lock, sleep and exit 7):
# every child exits 7 (no deadlock on a lock the recorder held at the fork,
# none of the recorder's threads is missing in the child), the parent's
# recording is whole (rec-summary exit 0, one run, the parent's pid) and the
# children are not recorded (forks=off, the default): no event of a child's
# pid, no 20 ms sleep (only the children sleep).  Run 3 times.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_fork" "$bin/rec-print" "$bin/rec-summary"

for i in 1 2 3; do
	preloaded "fork$i" "$tmp/f$i.rec" "" "$tests/plain_fork"
	[ "$rc" = 0 ] || fail "run $i: exit $rc: $(cat "$tmp/fork$i.err")"
	[ "$(value "fork$i" children)" = 20 ] || fail "run $i: $(value "fork$i" children) of 20 children exited 7"
	"$bin/rec-summary" "$tmp/f$i.rec" >"$tmp/s$i.txt" || fail "run $i: rec-summary failed"
	grep -q "^ Runs: *1$" "$tmp/s$i.txt" || fail "run $i: not one run: $(grep Runs "$tmp/s$i.txt")"
	"$bin/rec-print" --json "$tmp/f$i.rec" >"$tmp/f$i.json" || fail "run $i: rec-print failed"
	pids=$(grep -o '"type": "rec.Process", "values": {[^}]*' "$tmp/f$i.json" | wc -l)
	[ "$pids" = 1 ] || fail "run $i: $pids rec.Process events"
	grep -q '"requested": 20000000' "$tmp/f$i.json" && fail "run $i: a child's sleep was recorded"
	grep -q '"type": "rec.LockWait"\|"type": "rec.Alloc"' "$tmp/f$i.json" ||
		fail "run $i: the parent's locks and allocations were not recorded"
done
cli_done preload_fork
