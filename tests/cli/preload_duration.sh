#!/usr/bin/env bash
# duration= (rec-record --duration): a program that knows nothing of rec
# (tests/helpers/plain_steps.c: 50 sleeps of 20 ms, each step printed with
# its start time) recorded with duration=300ms,flush=200ms.  The program
# is unchanged (exit 4, its 50 steps printed, none of its sleeps cut short)
# and runs on well past the end; the recording is complete (rec-summary:
# one run, a clean close) and ends before 300 ms + one flush interval after
# its first event; the sleeps in it are those the program began before the
# end (at least 3, not all 50), and every one of them began before it.
# Then plain_exit (_exit after the end) and rec-record --duration 200ms.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_steps" "$tests/plain_exit" "$bin/rec-print" "$bin/rec-summary"

preloaded steps "$tmp/d.rec" "duration=300ms,flush=200ms" "$tests/plain_steps"
[ "$rc" = 4 ] || fail "plain_steps exit $rc, want 4: $(cat "$tmp/steps.err")"
[ -s "$tmp/steps.err" ] && fail "stderr: $(cat "$tmp/steps.err")"
[ "$(grep -c '^step ' "$tmp/steps.out")" = 50 ] || fail "$(grep -c '^step ' "$tmp/steps.out") of 50 steps printed"
"$bin/rec-summary" "$tmp/d.rec" >"$tmp/s.txt" || fail "rec-summary failed: $(cat "$tmp/s.txt")"
grep -q "^ Runs: *1$" "$tmp/s.txt" || fail "not one run: $(grep Runs "$tmp/s.txt")"
grep -q "clean close" "$tmp/s.txt" || fail "not closed cleanly: $(grep ' run ' "$tmp/s.txt")"
"$bin/rec-print" --json "$tmp/d.rec" >"$tmp/d.json" || fail "rec-print failed"

python3 - "$tmp/d.json" "$tmp/steps.out" <<'PY' || fail "the recording does not end at its duration"
import calendar, json, sys
def ns(iso):  # 2026-12-04T15:33:54.902548049Z
    whole, frac = iso.rstrip("Z").split(".")
    return calendar.timegm(__import__("time").strptime(whole, "%Y-%m-%dT%H:%M:%S")) * 10**9 + int(frac.ljust(9, "0"))
ev = json.load(open(sys.argv[1]))["recording"]["events"]
steps = [int(l.split()[2]) for l in open(sys.argv[2]) if l.startswith("step ")]
times = [ns(e["values"]["startTime"]) for e in ev]
first, last = min(times), max(times)
end = first + 300 * 10**6
bad = []
if last - first >= 500 * 10**6:
    bad.append("last event %.1f ms after the first, want < 300 ms + 200 ms flush" % ((last - first) / 1e6))
sl = [e["values"] for e in ev if e["type"] == "rec.Sleep"]
if not 3 <= len(sl) < 50:
    bad.append("%d sleeps recorded, want from 3 to 49" % len(sl))
for s in sl:
    if s["requested"] != 20 * 10**6 or s["duration"] < 20 * 10**6:
        bad.append("sleep %s" % s)
    if ns(s["startTime"]) >= end + 100 * 10**6:
        bad.append("a sleep began %.1f ms after the first event" % ((ns(s["startTime"]) - first) / 1e6))
began = [t for t in steps if t < last]
if len(sl) > len(began):
    bad.append("%d sleeps recorded, the program began %d before the last event" % (len(sl), len(began)))
if steps[-1] - first < 600 * 10**6:
    bad.append("the program's last step %.1f ms after the first event: it did not go on" % ((steps[-1] - first) / 1e6))
if steps[-1] - steps[0] < 49 * 20 * 10**6:
    bad.append("50 sleeps of 20 ms took %.1f ms: some were cut short" % ((steps[-1] - steps[0]) / 1e6))
print("\n".join(bad), file=sys.stderr)
print("recorded %.1f ms, %d sleeps; the program ran %.1f ms" % ((last - first) / 1e6, len(sl), (steps[-1] - steps[0]) / 1e6))
sys.exit(1 if bad else 0)
PY

# A program that leaves through _exit after the end (plain_exit: a 30 ms
# sleep, _exit(3)) with duration=10ms: exit 3, a clean close; its sleep,
# which ends 20 ms after the end, is in the recording only if the recorder's
# thread had not stopped it by then (a loaded machine), and then it began
# before the end, as above (within 100 ms of the first event).
preloaded exit "$tmp/x.rec" "duration=10ms" "$tests/plain_exit"
[ "$rc" = 3 ] || fail "plain_exit: exit $rc, want 3"
"$bin/rec-summary" "$tmp/x.rec" >"$tmp/x.txt" && grep -q "clean close" "$tmp/x.txt" ||
	fail "plain_exit duration=10ms: not closed cleanly: $(cat "$tmp/x.txt")"
"$bin/rec-print" --json-lines "$tmp/x.rec" >"$tmp/x.jsonl" || fail "plain_exit: rec-print failed"
python3 - "$tmp/x.jsonl" <<'PY' || fail "plain_exit: a sleep that began after the end was recorded"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
first = min(e["values"]["startTimeNs"] for e in ev)
late = [e for e in ev if e["type"] == "rec.Sleep" and e["values"]["startTimeNs"] >= first + 100 * 10**6]
sys.exit(1 if late else 0)
PY

# rec-record --duration passes it on: the same program, exit 4, a clean close
rc=0
"$bin/rec-record" -q --duration 200ms -o "$tmp/r.rec" -- "$tests/plain_steps" >"$tmp/r.out" 2>"$tmp/r.err" || rc=$?
[ "$rc" = 4 ] || fail "rec-record --duration: exit $rc, want 4: $(cat "$tmp/r.err")"
[ "$(grep -c '^step ' "$tmp/r.out")" = 50 ] || fail "rec-record --duration: $(grep -c '^step ' "$tmp/r.out") of 50 steps"
"$bin/rec-summary" "$tmp/r.rec" >"$tmp/r.txt" && grep -q "clean close" "$tmp/r.txt" ||
	fail "rec-record --duration: not closed cleanly: $(cat "$tmp/r.txt")"
n=$("$bin/rec-print" --json "$tmp/r.rec" | grep -c '"type": "rec.Sleep"')
[ "$n" -ge 1 ] && [ "$n" -lt 50 ] || fail "rec-record --duration 200ms: $n of 50 sleeps recorded"
cli_done preload_duration
