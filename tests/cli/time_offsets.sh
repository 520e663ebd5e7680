#!/usr/bin/env bash
# --from/--to offsets count from the recording's first event, of any type,
# in rec-flame (whatever --event is chosen), rec-lockgraph and rec-timeline
# (its ts 0): rec-flame --event T --weight count --from F --to G counts
# exactly the events of type T whose time is in [first + F, first + G),
# computed here from rec-print --json; rec-lockgraph --from F counts the
# same lock waits; with --diff each recording counts from its own first
# event; offsets with standard input are a usage error.
# The recording: rec_test_flame_gen's before.rec and after.rec (CPU samples
# from 10:14:03.5, the other types only after 10:14:07.5, in later chunks).
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
need_exe "$bin/rec-flame" "$bin/rec-lockgraph" "$bin/rec-timeline" "$bin/rec-print" "$tests/rec_test_flame_gen"
export TZ=UTC
"$tests/rec_test_flame_gen" "$tmp" >/dev/null || { echo "FAIL: rec_test_flame_gen"; exit 1; }
rec=$tmp/before.rec
"$bin/rec-print" --json "$rec" >"$tmp/before.json" || fail "rec-print --json before.rec"
"$bin/rec-print" --json "$tmp/after.rec" >"$tmp/after.json" || fail "rec-print --json after.rec"

# want JSON TYPE FROM TO: events of TYPE with a stack in [first + FROM,
# first + TO) (ns; TO may be "inf"), first the earliest event of any type
want() {
	python3 - "$@" <<'PY'
import json, sys
from datetime import datetime
path, typ, lo, hi = sys.argv[1:5]
def ns(s):  # "2026-12-02T10:14:03.500000000Z"
    base, frac = s.rstrip("Z").split(".")
    t = datetime.strptime(base, "%Y-%m-%dT%H:%M:%S")
    return (int((t - datetime(1970, 1, 1)).total_seconds()) * 10**9 + int(frac.ljust(9, "0")))
ev = json.load(open(path))["recording"]["events"]
first = min(ns(e["values"]["startTime"]) for e in ev)
lo = first + int(lo)
hi = float("inf") if hi == "inf" else first + int(hi)
# (a flame graph counts the events with a stack)
print(sum(1 for e in ev if e["type"] == typ and e["values"].get("stackTrace")
          and lo <= ns(e["values"]["startTime"]) < hi))
PY
}
total() { awk '{ s += $NF } END { print s + 0 }'; }

# check TYPE FROM-NS TO-NS|inf FROM-OPT [TO-OPT]: rec-flame counts what
# want counts; the count in $n
check() {
	local typ=$1 lo=$2 hi=$3 args=(--from "$4") got
	[ $# -ge 5 ] && args+=(--to "$5")
	n=$(want "$tmp/before.json" "$typ" "$lo" "$hi")
	got=$("$bin/rec-flame" --event "$typ" --weight count "${args[@]}" "$rec" 2>/dev/null | total)
	[ "$got" = "$n" ] || fail "rec-flame --event $typ ${args[*]}: $got events, want $n"
}
check rec.LockWait 4000000000 inf 4s
[ "$n" = 6 ] || fail "the window from 4s holds $n lock waits, want the 6"
check rec.LockWait 4250000000 inf 4.25s
[ "$n" = 4 ] || fail "the window from 4.25s holds $n lock waits, want 4"
check rec.LockWait 4250000000 4350000000 4.25s 4.35s
check rec.Alloc 4050000000 4150000000 4050ms 4150ms
check app.Query 4600000000 inf 4.6s
check rec.Sleep 0 4500000000 0s 4.5s
check rec.CPUSample 1000000000 2000000000 1s 2s

# rec-lockgraph: the same lock waits
for f in 4s 4.25s 4.3s; do
	n=$("$bin/rec-flame" --event rec.LockWait --weight count --from "$f" "$rec" 2>/dev/null | total)
	"$bin/rec-lockgraph" --from "$f" "$rec" >"$tmp/g.dot" 2>/dev/null || fail "rec-lockgraph --from $f"
	grep -q "label=\"wait-for graph: $n lock waits\\\\n" "$tmp/g.dot" ||
		fail "rec-lockgraph --from $f: not the $n lock waits of rec-flame: $(grep -m1 'wait-for graph' "$tmp/g.dot")"
done

# rec-timeline: ts 0 is the first event (3.5 s before the first lock wait)
"$bin/rec-timeline" "$rec" >"$tmp/t.json" || fail "rec-timeline"
python3 - "$tmp/t.json" <<'PY' || fail "rec-timeline: the first lock wait is not at ts 4200000 us"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ts = [e["ts"] for e in ev if e.get("name") == "global-mutex"]  # the lock waits
cpu = [e["ts"] for e in ev if e.get("name") == "rec.CPUSample"]
sys.exit(0 if ts and min(ts) == 4200000 and cpu and min(cpu) == 0 else 1)
PY

# --diff: each recording from its own first event
lo=4250000000
wb=$(want "$tmp/before.json" rec.LockWait "$lo" inf)
wa=$(want "$tmp/after.json" rec.LockWait "$lo" inf)
"$bin/rec-flame" --event rec.LockWait --weight count --from 4.25s --diff "$rec" "$tmp/after.rec" >"$tmp/d" 2>/dev/null
got=$(awk '{ b += $(NF - 1); a += $NF } END { print b + 0, a + 0 }' "$tmp/d")
[ "$got" = "$wb $wa" ] || fail "rec-flame --diff --from 4.25s: before/after $got, want $wb $wa"

# standard input: offsets need a file
for t in rec-flame rec-lockgraph; do
	rc=0; "$bin/$t" --from 1s - <"$rec" >/dev/null 2>"$tmp/err" || rc=$?
	[ "$rc" = 2 ] || fail "$t --from 1s -: exit $rc, want 2"
	grep -q "need.* regular FILE (not standard input)" "$tmp/err" || fail "$t --from 1s -: $(cat "$tmp/err")"
done

cli_done time_offsets
