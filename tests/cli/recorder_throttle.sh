#!/usr/bin/env bash
# A throttle from the environment, end to end (issue 16): a process records
# through REC_OUTPUT with REC_OPTIONS=events=app.HelperEvent:throttle=100/h
# (tests/helpers/rec_test_recorder_env.c, "may-drop"): of 3000 events in a
# burst, one window's budget (10 per 6 min window) or two (the burst crosses
# a window edge) are recorded and the rest are counted as throttled under
# their type, exactly; rec-summary and rec-print name the reason and the type.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
helper=$tests/rec_test_recorder_env
need_exe "$helper"

out=$(REC_OUTPUT="$tmp/t.rec" REC_OPTIONS="events=app.HelperEvent:throttle=100/h;rec.*" \
	timeout -k 5 60 "$helper" 3000 may-drop 2>"$tmp/err") || fail "helper: exit $?: $(cat "$tmp/err")"
rec=${out#recorded=}
case $rec in 10 | 20) ;; *) fail "recorded $out, not 10 or 20" ;; esac
thr=$((3000 - rec))

"$bin/rec-summary" "$tmp/t.rec" >"$tmp/sum.txt" || fail "rec-summary: exit $?"
grep -Eq "^ app\.HelperEvent +$thr  throttled$" "$tmp/sum.txt" ||
	fail "rec-summary has no 'app.HelperEvent $thr throttled' row: $(cat "$tmp/sum.txt")"
"$bin/rec-summary" --json "$tmp/t.rec" >"$tmp/sum.json" || fail "rec-summary --json: exit $?"
python3 - "$tmp/sum.json" "$rec" "$thr" <<'PY' || fail "rec-summary --json: $(cat "$tmp/sum.json")"
import json, sys
s = json.load(open(sys.argv[1]))
rec, thr = int(sys.argv[2]), int(sys.argv[3])
types = {t["name"]: t["count"] for t in s["types"]}
assert types["app.HelperEvent"] == rec, types
assert s["dropped"] == thr, s["dropped"]
assert s["drops"] == [{"type": "app.HelperEvent", "reason": 5, "reason_name": "throttled",
                       "count": thr}], s["drops"]
PY
"$bin/rec-print" --events rec.Dropped "$tmp/t.rec" >"$tmp/print.txt" || fail "rec-print: exit $?"
grep -q "reason = throttled: over the throttle rate of app.HelperEvent" "$tmp/print.txt" ||
	fail "rec-print: reason not by name: $(cat "$tmp/print.txt")"
grep -q "type = app.HelperEvent" "$tmp/print.txt" || fail "rec-print: type not by name"
# rec-timeline (chrome trace) names them as rec-print --json does.
"$bin/rec-print" --json --events rec.Dropped "$tmp/t.rec" >"$tmp/print.json" || fail "rec-print --json: exit $?"
"$bin/rec-timeline" "$tmp/t.rec" >"$tmp/trace.json" || fail "rec-timeline: exit $?"
python3 - "$tmp/print.json" "$tmp/trace.json" "$thr" <<'PY' || fail "rec-timeline: drop reason/type not by name"
import json, sys
pj = [e["values"] for e in json.load(open(sys.argv[1]))["recording"]["events"]]
tr = [e["args"] for e in json.load(open(sys.argv[2]))["traceEvents"]
      if e.get("name") == "rec.Dropped"]
assert pj and len(tr) == len(pj), (len(tr), len(pj))
for a, v in zip(tr, pj):
    assert a["reasonName"] == v["reasonName"] == "throttled", (a, v)
    assert a["typeName"] == v["typeName"] == "app.HelperEvent", (a, v)
    assert a["reason"] == 5 and a["count"] == v["count"], (a, v)
assert sum(a["count"] for a in tr) == int(sys.argv[3])
PY

# A bad rate is refused: nothing is recorded (the helper then sees no recorder).
REC_OUTPUT="$tmp/bad.rec" REC_OPTIONS="events=app.HelperEvent:throttle=10/x" \
	timeout -k 5 60 "$helper" 10 expect-off >/dev/null 2>&1 || fail "throttle=10/x was not refused"

cli_done recorder_throttle
