#!/usr/bin/env bash
# forks=on while another thread is inside dl_iterate_phdr: tests/helpers/
# plain_fork_phdr.c (without librec) has a thread walking the loaded modules
# in a loop, 300 us in its callback per module (the loader's lock held all
# that time), while its main thread forks 20 children one after the other;
# a child allocates 1 MiB and _exits 5, and the parent kills (and counts as
# hung) a child still running after 10 s.  Before the preload held forks
# back until the walks under way ended (phdr_guard.c), every child hung:
# the loader's lock stays held in a fork child, and the child's recorder
# walks the modules to symbolize its stacks.  Now (alloc=16KiB, so that
# every child has sampled allocations to symbolize): every child exits 5,
# none hangs, the thread walked, and each child's file f.PID.rec is one
# clean run of that pid with its sampled allocations, their frames named.
# And a walk that lasts (1.2 s per module): the fork goes on after a second,
# that one child unrecorded, stderr saying so.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_fork_phdr" "$bin/rec-print" "$bin/rec-summary"

for i in 1 2; do
	mkdir -p "$tmp/$i"
	preloaded "phdr$i" "$tmp/$i/f.rec" "forks=on,alloc=16KiB" "$tests/plain_fork_phdr" 20
	[ "$rc" = 0 ] || fail "run $i: exit $rc: $(cat "$tmp/phdr$i.err")"
	[ "$(value "phdr$i" hung)" = 0 ] || fail "run $i: $(value "phdr$i" hung) children hung"
	[ "$(value "phdr$i" children)" = 20 ] || fail "run $i: $(value "phdr$i" children) of 20 children exited 5"
	[ "$(value "phdr$i" walks)" -gt 0 ] || fail "run $i: the thread never walked the modules"
	grep -q 'dl_iterate_phdr' "$tmp/phdr$i.err" && fail "run $i: a child was not recorded: $(cat "$tmp/phdr$i.err")"
	parent=$(value "phdr$i" main_tid)
	"$bin/rec-summary" "$tmp/$i/f.rec" | grep -q " run [0-9a-f]*  pid $parent .*clean close" ||
		fail "run $i: f.rec is not the parent's clean run"
	n=0
	for f in "$tmp/$i"/f.*.rec; do
		[ -e "$f" ] || break
		n=$((n + 1))
		pid=${f##*/f.}
		pid=${pid%.rec}
		"$bin/rec-summary" "$f" >"$tmp/c.txt" || fail "$f: rec-summary failed"
		grep -q "^ Runs: *1$" "$tmp/c.txt" && grep -q " run [0-9a-f]*  pid $pid .*clean close" "$tmp/c.txt" ||
			fail "$f: not one clean run of pid $pid: $(grep ' run ' "$tmp/c.txt")"
		"$bin/rec-print" --events rec.Alloc "$f" >"$tmp/a.txt" || fail "$f: rec-print failed"
		grep -q "sampled = true" "$tmp/a.txt" || fail "$f: no sampled allocation (1 MiB allocated, one sampled per 16 KiB)"
		grep -Eq '^    (main|child)(\+0x[0-9a-f]+ \(plain_fork_phdr\)| \(plain_fork_phdr.c:[0-9]+\))' "$tmp/a.txt" ||
			fail "$f: the allocations' frames are not named: $(head -20 "$tmp/a.txt")"
	done
	[ "$n" = 20 ] || fail "run $i: $n children's files, want 20"
done

# A walk that does not end (its callback sleeps 1.2 s per module): the fork
# waits a second for it, then goes on; that child is not recorded (stderr
# says so), and nothing hangs.
mkdir -p "$tmp/slow"
preloaded slow "$tmp/slow/f.rec" "forks=on" "$tests/plain_fork_phdr" 1 1200000
[ "$rc" = 0 ] || fail "slow walk: exit $rc: $(cat "$tmp/slow.err")"
[ "$(value slow hung)" = 0 ] && [ "$(value slow children)" = 1 ] || fail "slow walk: $(cat "$tmp/slow.out")"
grep -q "^rec: a thread stayed inside dl_iterate_phdr through the fork: the child [0-9]* is not recorded$" "$tmp/slow.err" ||
	fail "slow walk: no message about the child: $(cat "$tmp/slow.err")"
[ "$(find "$tmp/slow" -name 'f.*.rec' | wc -l)" = 0 ] || fail "slow walk: the child recorded: $(ls "$tmp/slow")"
cli_done preload_fork_phdr
