#!/usr/bin/env bash
# The duration and offset options of the tools that share the duration parser
# (rec_parse_duration, libfmt/common/duration.c, through tools/common/parse.c's
# rec_cli_parse_duration): rec-lockgraph --min-wait, --from, --to and
# rec-flame --from, --to, and the recorder's REC_OPTIONS threshold=.  Units
# ns, us, ms, s, m, min and h (a fraction allowed, a bare number is seconds)
# are accepted with their values; anything else is a usage error (exit 2, the option and the text
# named on stderr, "try 'TOOL --help'", nothing on stdout).
#
# The recording: tests/helpers/rec_test_flame_gen's before.rec (deterministic:
# six rec.LockWait of 2, 2, 2, 2, 2 and 10 ms, 4.20 to 4.40 s after the first
# event, 40 ms apart).  rec-lockgraph's DOT names how many lock waits it
# drew ("wait-for graph: N lock waits").
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
need_exe "$bin/rec-lockgraph" "$bin/rec-flame" "$tests/rec_test_flame_gen" "$tests/rec_test_durations"
export TZ=UTC
"$tests/rec_test_flame_gen" "$tmp" || { echo "FAIL: rec_test_flame_gen"; exit 1; }
rec=$tmp/before.rec

# waits ARGS...: the number of lock waits rec-lockgraph draws with ARGS
waits() {
	local rc=0
	"$bin/rec-lockgraph" "$@" "$rec" >"$tmp/g.dot" 2>"$tmp/g.err" || rc=$?
	[ "$rc" = 0 ] || { echo "exit$rc"; return; }
	sed -n 's/.*wait-for graph: \([0-9]*\) lock waits.*/\1/p' "$tmp/g.dot"
}
# expect N ARGS...
expect() {
	local want=$1 got
	shift
	got=$(waits "$@")
	[ "$got" = "$want" ] || fail "rec-lockgraph $*: $got lock waits, want $want ($(cat "$tmp/g.err"))"
}

expect 6
# --min-wait: the 10 ms wait alone stays for any threshold in (2 ms, 10 ms]
for d in 5ms 5000us 5000000ns 0.005s 0.005 0.0001m 0.0001min 0.000002h; do
	expect 1 --min-wait "$d" # 5 ms, 6 ms (m, min), 7.2 ms (h)
done
expect 0 --min-wait 0.000003h # 10.8 ms: h is more than 3333 s
expect 6 --min-wait 0.0000001h # 0.36 ms
expect 0 --min-wait 1h
expect 0 --min-wait 11ms
# --from/--to: offsets from the first event; the waits start at 4.20 .. 4.40 s
expect 6 --to 1h
expect 0 --from 1h
expect 2 --to 0.00118h  # 4.248 s
expect 4 --from 0.00118h
expect 2 --to 0.0708m   # 4.248 s
expect 2 --to 0.0708min
expect 2 --to 4248ms
expect 2 --to 4.248
expect 3 --from 1.5s --to 0.0012h # [1.5 s, 4.32 s): 4.20, 4.24, 4.28

# rec-flame --from/--to: the same parser; equal durations in different
# units give the same flame graph; 1h covers the whole recording
flame() { "$bin/rec-flame" --event rec.LockWait --weight count "$@" "$rec" 2>&1; }
all=$(flame)
[ "$(printf '%s\n' "$all" | awk '{ s += $NF } END { print s + 0 }')" = 6 ] || fail "rec-flame: not 6 lock waits: $all"
[ "$(flame --to 1h)" = "$all" ] || fail "rec-flame --to 1h differs from no --to"
[ -z "$(flame --from 1h)" ] || fail "rec-flame --from 1h is not empty: $(flame --from 1h)"
for t in 0.1s 0.36s 0.4s; do
	case $t in
	0.1s) alt="100ms 0.0016666666667m 0.00002777777778h" ;;
	0.36s) alt="360ms 360000us 0.006m 0.006min 0.0001h" ;;
	0.4s) alt="400000000ns 0.4 0.0066666666667min 0.00011111111111h" ;;
	esac
	want=$(flame --to "$t")
	for a in $alt; do
		[ "$(flame --to "$a")" = "$want" ] || fail "rec-flame --to $a differs from --to $t"
		[ "$(flame --from "$a")" = "$(flame --from "$t")" ] || fail "rec-flame --from $a differs from --from $t"
	done
done

# One grammar in the library and the tools (rec_parse_duration): a REC_OPTIONS
# events threshold keeps the lock waits that --min-wait keeps, for the same
# text.  rec_test_durations records waits of 59.5, 60 and 61 s with a test
# clock through the REC_OPTIONS parser; kept: those >= the threshold.
# Before the parsers were one, the recorder refused threshold=1min and
# threshold=60, and 1min did not exist for it.
# drawn REC_OPTIONS_THRESHOLD [LOCKGRAPH ARGS...]
drawn() {
	local th=$1 out=$tmp/th.rec
	shift
	rm -f "$out"
	"$tests/rec_test_durations" "$out" "events=rec.LockWait:threshold=$th" >"$tmp/th.err" 2>&1 ||
		{ echo "record:$(cat "$tmp/th.err")"; return; }
	"$bin/rec-lockgraph" "$@" "$out" 2>&1 | sed -n 's/.*wait-for graph: \([0-9]*\) lock waits.*/\1/p'
}
[ "$(drawn 0)" = 3 ] || fail "threshold=0: $(drawn 0) lock waits, want 3"
for d in 1min 1m 60 60s 60000ms 0.0166666666667h 59.75s; do
	[ "$(drawn "$d")" = 2 ] || fail "REC_OPTIONS threshold=$d: $(drawn "$d") lock waits, want 2"
	[ "$(drawn 0 --min-wait "$d")" = 2 ] || fail "--min-wait $d: $(drawn 0 --min-wait "$d") lock waits, want 2"
done
for d in 61s 1.0166666666667min; do
	[ "$(drawn "$d")" = 1 ] || fail "REC_OPTIONS threshold=$d: $(drawn "$d") lock waits, want 1"
	[ "$(drawn 0 --min-wait "$d")" = 1 ] || fail "--min-wait $d: $(drawn 0 --min-wait "$d") lock waits, want 1"
done

# rejected: exit 2, named on stderr, nothing on stdout
# reject TOOL REGEX ARGS...
reject() {
	local tool=$1 re=$2 rc=0
	shift 2
	"$bin/$tool" "$@" "$rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 2 ] || fail "$tool $*: exit $rc, want 2"
	[ ! -s "$tmp/out" ] || fail "$tool $*: wrote to stdout"
	grep -Eq "^$tool: $re" "$tmp/err" || fail "$tool $*: stderr '$(head -1 "$tmp/err")' does not match '$re'"
	[ "$(tail -n 1 "$tmp/err")" = "try '$tool --help'" ] || fail "$tool $*: no \"try '$tool --help'\""
}
for d in 1d 1H 1hr 2w 1.5.s h "10 ms" -1s 1e3s ""; do
	reject rec-lockgraph "--min-wait: '$d' is not a duration \(e\.g\. 10ms, 1\.5s\)$" --min-wait "$d"
done
reject rec-lockgraph "--to: '1d' is not a duration \(e\.g\. 10ms, 1\.5s\) nor a time" --to 1d
reject rec-lockgraph "--from: '3days' is not a duration \(e\.g\. 10ms, 1\.5s\) nor a time" --from 3days
reject rec-flame "--to: '1d' is not a duration \(e\.g\. 10ms, 1\.5s\) nor a time" --to 1d
reject rec-flame "--from: '1H' is not a duration \(e\.g\. 10ms, 1\.5s\) nor a time" --from 1H
reject rec-timeline "--from: '1H' is not a duration \(e\.g\. 10ms, 1\.5s\) nor a time" --from 1H

cli_done durations
