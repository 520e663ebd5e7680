#!/usr/bin/env bash
# Exec'd programs under forks=on (rec-record --follow-forks): tests/helpers/
# plain_exec_chain.c (without librec) sleeps 30 ms, forks a child that
# sleeps 20 ms and execs the program again ("child": sleeps 50 ms, exits 3),
# then execs itself without a fork ("final": sleeps 60 ms).  With forks=on
# into f.rec, each image of each process has a file of its own, closed
# cleanly (the exec interposers close a recording before the exec, as
# _exit does):
#   f.rec             the program (pid P) until its exec: the 30 ms sleep
#   f.C.rec           its fork child C until its exec: the 20 ms sleep
#   f.C-2.rec         the program C exec'd: the 50 ms sleep
#   f.P.rec           the program P exec'd: the 60 ms sleep
# each one run of its pid, with that one sleep and no other.  The default
# (forks=off) stays as it was: only f.rec, a program that execs itself
# records there anew (the final image's 60 ms sleep), the child records
# nothing.  Then the same through rec-record --follow-forks, whose exit
# status is the final image's (0), and whose report counts the 3 other
# files of its run (not an older one beside them).
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_exec_chain" "$bin/rec-print" "$bin/rec-summary" "$bin/rec-record"

# one FILE PID MS: FILE is one clean run of PID whose only sleep is MS ms
one() {
	local f=$1 pid=$2 ms=$3
	[ -f "$f" ] || fail "$f: missing"
	"$bin/rec-summary" "$f" >"$tmp/s.txt" || fail "$f: rec-summary failed"
	grep -q "^ Runs: *1$" "$tmp/s.txt" && grep -q " run [0-9a-f]*  pid $pid .*clean close" "$tmp/s.txt" ||
		fail "$f: not one clean run of pid $pid: $(grep ' run ' "$tmp/s.txt")"
	"$bin/rec-print" --json "$f" | grep -o '"requested": [0-9]*' >"$tmp/sl.txt"
	[ "$(cat "$tmp/sl.txt")" = "\"requested\": ${ms}000000" ] ||
		fail "$f: sleeps $(tr '\n' ' ' <"$tmp/sl.txt"), want only the ${ms} ms one"
}

# check DIR OUT: the four files of a forks=on run whose stdout is OUT
check() {
	local dir=$1 out=$2 p c n
	p=$(sed -n 's/^main_pid //p' "$out")
	c=$(sed -n 's/^child_pid //p' "$out")
	[ "$(sed -n 's/^child_status //p' "$out")" = 3 ] || fail "$dir: the exec'd child's status is not 3"
	[ "$(sed -n 's/^final_pid //p' "$out")" = "$p" ] || fail "$dir: the final image did not run in pid $p"
	one "$dir/f.rec" "$p" 30
	one "$dir/f.$c.rec" "$c" 20
	one "$dir/f.$c-2.rec" "$c" 50
	one "$dir/f.$p.rec" "$p" 60
	n=$(find "$dir" -name '*.rec' | wc -l)
	[ "$n" = 4 ] || fail "$dir: $n recordings, want 4: $(ls "$dir")"
}

mkdir -p "$tmp/on"
preloaded on "$tmp/on/f.rec" "forks=on" "$tests/plain_exec_chain"
[ "$rc" = 0 ] || fail "forks=on: exit $rc: $(cat "$tmp/on.err")"
check "$tmp/on" "$tmp/on.out"

mkdir -p "$tmp/off"
preloaded off "$tmp/off/f.rec" "" "$tests/plain_exec_chain"
[ "$rc" = 0 ] || fail "forks=off: exit $rc: $(cat "$tmp/off.err")"
one "$tmp/off/f.rec" "$(value off main_pid)" 60
[ "$(find "$tmp/off" -name '*.rec' | wc -l)" = 1 ] || fail "forks=off: more than f.rec: $(ls "$tmp/off")"

mkdir -p "$tmp/rr"
rc=0
"$bin/rec-record" -q --follow-forks -o "$tmp/rr/f.rec" -- "$tests/plain_exec_chain" >"$tmp/rr.out" 2>"$tmp/rr.err" || rc=$?
[ "$rc" = 0 ] || fail "rec-record --follow-forks: exit $rc: $(cat "$tmp/rr.err")"
check "$tmp/rr" "$tmp/rr.out"
# without -q its report counts the other files of this run (not an earlier run's)
touch -d '2 hours ago' "$tmp/rr/f.1.rec"
rm -f "$tmp/rr"/f.[0-9]*[0-9].rec "$tmp/rr"/f.*-2.rec
rc=0
"$bin/rec-record" --follow-forks -o "$tmp/rr/f.rec" -- "$tests/plain_exec_chain" >"$tmp/rr2.out" 2>"$tmp/rr2.err" || rc=$?
[ "$rc" = 0 ] || fail "rec-record --follow-forks (report): exit $rc"
grep -q "^rec-record:   --follow-forks: 3 more recordings beside it, one per child and exec'd program (f.PID.rec)$" "$tmp/rr2.err" ||
	fail "rec-record's report: $(cat "$tmp/rr2.err")"
cli_done preload_exec_forks
