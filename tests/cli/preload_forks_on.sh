#!/usr/bin/env bash
# forks=on (rec-record --follow-forks): tests/helpers/plain_fork.c (without
# librec: 4 threads that lock and allocate, each forking 5 children that
# allocate, lock, sleep 20 ms and _exit 7) recorded with forks=on into
# f.rec.  Every child exits 7; the parent's file is its own (one run, the
# parent's pid, closed cleanly, no 20 ms sleep: only children sleep); each
# of the 20 children has its own file f.PID.rec, PID its pid: one run of
# that pid, closed cleanly, its one 20 ms sleep.  Run twice; then once
# through rec-record --follow-forks.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_fork" "$bin/rec-print" "$bin/rec-summary" "$bin/rec-record"

# check DIR PARENT_PID: f.rec and the children's files in DIR
check() {
	local dir=$1 parent=$2 n=0 f pid
	"$bin/rec-summary" "$dir/f.rec" >"$dir/s.txt" || fail "$dir: rec-summary f.rec failed"
	grep -q "^ Runs: *1$" "$dir/s.txt" || fail "$dir: f.rec: not one run"
	grep -q " run [0-9a-f]*  pid $parent .*clean close" "$dir/s.txt" ||
		fail "$dir: f.rec: not the parent's ($parent) clean run: $(grep ' run ' "$dir/s.txt")"
	"$bin/rec-print" --json "$dir/f.rec" | grep -q '"requested": 20000000' &&
		fail "$dir: a child's sleep is in the parent's file"
	for f in "$dir"/f.*.rec; do
		[ -e "$f" ] || break
		n=$((n + 1))
		pid=${f##*/f.}
		pid=${pid%.rec}
		[ "$pid" != "$parent" ] || fail "$f: the parent's pid"
		"$bin/rec-summary" "$f" >"$dir/c.txt" || fail "$f: rec-summary failed"
		grep -q "^ Runs: *1$" "$dir/c.txt" && grep -q " run [0-9a-f]*  pid $pid .*clean close" "$dir/c.txt" ||
			fail "$f: not one clean run of pid $pid: $(grep ' run ' "$dir/c.txt")"
		[ "$("$bin/rec-print" --json "$f" | grep -c '"requested": 20000000')" = 1 ] ||
			fail "$f: not the child's one 20 ms sleep"
	done
	[ "$n" = 20 ] || fail "$dir: $n children's files, want 20"
}

for i in 1 2; do
	mkdir -p "$tmp/$i"
	preloaded "fork$i" "$tmp/$i/f.rec" "forks=on" "$tests/plain_fork"
	[ "$rc" = 0 ] || fail "run $i: exit $rc: $(cat "$tmp/fork$i.err")"
	[ "$(value "fork$i" children)" = 20 ] || fail "run $i: $(value "fork$i" children) of 20 children exited 7"
	check "$tmp/$i" "$(value "fork$i" main_tid)"
done

mkdir -p "$tmp/r"
rc=0
"$bin/rec-record" -q --follow-forks -o "$tmp/r/f.rec" -- "$tests/plain_fork" >"$tmp/r.out" 2>"$tmp/r.err" || rc=$?
[ "$rc" = 0 ] || fail "rec-record --follow-forks: exit $rc: $(cat "$tmp/r.err")"
check "$tmp/r" "$(sed -n 's/^main_tid //p' "$tmp/r.out")"
cli_done preload_forks_on
