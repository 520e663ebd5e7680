#!/usr/bin/env bash
# rec-view recording on real recordings whose truth the test knows: a
# process records through REC_OUTPUT with REC_OPTIONS=events=
# app.HelperEvent:throttle=100/h (tests/helpers/rec_test_recorder_env.c,
# "may-drop": of 3000 events, 10 or 20 recorded, the rest throttled); two
# such runs concatenated (cat) are 2 runs, 1 restart.  The drops table is
# rec-summary's (the same numbers as rec-summary --json's "drops"), the
# totals its totals.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
helper=$tests/rec_test_recorder_env
need_exe "$helper" "$bin/rec-view" "$bin/rec-summary"

runs=()
for k in 1 2; do
	out=$(REC_OUTPUT="$tmp/t$k.rec" REC_OPTIONS="events=app.HelperEvent:throttle=100/h;rec.*" \
		timeout -k 5 60 "$helper" 3000 may-drop 2>"$tmp/err") || fail "helper: exit $?: $(cat "$tmp/err")"
	runs+=("${out#recorded=}")
done
cat "$tmp/t1.rec" "$tmp/t2.rec" >"$tmp/both.rec"

"$bin/rec-view" --json recording "$tmp/t1.rec" >"$tmp/one.json" || fail "rec-view recording: exit $?"
"$bin/rec-view" --json recording "$tmp/both.rec" >"$tmp/both.json" || fail "rec-view recording (2 runs): exit $?"
"$bin/rec-summary" --json "$tmp/both.rec" >"$tmp/sum.json" || fail "rec-summary --json: exit $?"
python3 - "$tmp" "${runs[0]}" "${runs[1]}" <<'PY' || fail "rec-view recording: $(cat "$tmp/one.json")"
import json, os, sys
d, r1, r2 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def tables(name):
    doc = json.load(open(os.path.join(d, name)))
    assert doc["schema"] == 1 and doc["view"] == "recording", doc
    return {t["name"]: t["rows"] for t in doc["tables"]}
one = tables("one.json")
assert one["drops"] == [{"type": "app.HelperEvent", "reason": "throttled", "lost": 3000 - r1}], one["drops"]
tot = one["recording"][0]
assert tot["dropped"] == 3000 - r1 and tot["runs"] == 1 and tot["restarts"] == 0 and tot["crashes"] == 0, tot
assert one["runs"][0]["ended"] == "clean close" and one["runs"][0]["dropped"] == 3000 - r1, one["runs"]
both = tables("both.json")
s = json.load(open(os.path.join(d, "sum.json")))
tot = both["recording"][0]
assert tot["runs"] == 2 and tot["restarts"] == 1, tot
assert tot["dropped"] == s["dropped"] == 6000 - r1 - r2, (tot, s["dropped"])
assert tot["events"] == s["events"] and tot["chunks"] == s["chunks"], (tot, s)
assert [(x["type"], x["reason"], x["lost"]) for x in both["drops"]] == \
       [(x["type"], x["reason_name"], x["count"]) for x in s["drops"]], (both["drops"], s["drops"])
assert [x["pid"] for x in both["runs"]] == [x["pid"] for x in s["runs"]], (both["runs"], s["runs"])
print("ok   drops %d + %d throttled, 2 runs, 1 restart" % (3000 - r1, 3000 - r2))
PY
"$bin/rec-view" recording "$tmp/t1.rec" >"$tmp/one.txt" || fail "rec-view recording text: exit $?"
grep -Eq "^app\.HelperEvent +throttled +$((3000 - runs[0]))$" "$tmp/one.txt" ||
	fail "no 'app.HelperEvent throttled N' row: $(cat "$tmp/one.txt")"

cli_done view_recording
