#!/usr/bin/env bash
# Runs and restarts in one file: a crash loop of five runs written by the
# writer (rec_test_archive_counters: four runs end without a FINAL chunk, one
# closes cleanly).  rec-summary lists five runs and "4 restarts" and the
# counter totals over the restarts (tests/lib/counter_runs.c: requests
# +25, +2, a reset to 3 (+3, counted from 0) and +6, a start of 100 then +50,
# +0, +5 = 91 with 1 reset in 5 runs; errors +1, +4, then a reset 7 -> 3
# (+3) = 8 with 1 reset in 3 runs; last minus first would say 45 and 2), rec-check
# passes, rec-split --by run gives one valid piece per run, rec-cat of the
# pieces in reverse order gives back the original bytes (runs by start), and
# a truncated copy keeps every whole chunk (rec-recover).
set -uo pipefail
if [ ! -d "${REC_BIN:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/bin" ]; then REC_BIN=$BUILD/bin; fi
if [ ! -d "${REC_TESTS:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/tests" ]; then REC_TESTS=$BUILD/tests; fi
bin=${REC_BIN:?}
tests=${REC_TESTS:?}
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TZ=UTC
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$tests/rec_test_archive_counters" "$tmp/five.rec" || fail "helper"
"$bin/rec-check" "$tmp/five.rec" | grep -q "OK, 19 chunks, 38 events" || fail "rec-check: $("$bin/rec-check" "$tmp/five.rec" 2>&1)"
"$bin/rec-summary" "$tmp/five.rec" >"$tmp/s.txt" || fail "rec-summary exit"
grep -q "Runs:  *5 (4 restarts)" "$tmp/s.txt" || fail "summary: $(grep Runs "$tmp/s.txt")"
[ "$(grep -c 'no final chunk$' "$tmp/s.txt")" = 4 ] && [ "$(grep -c 'clean close$' "$tmp/s.txt")" = 1 ] || fail "run ends: $(cat "$tmp/s.txt")"
grep -q "^ requests  *91  *1  *5$" "$tmp/s.txt" && grep -q "^ errors  *8  *1  *3$" "$tmp/s.txt" \
	|| fail "summary counters: $(cat "$tmp/s.txt")"
"$bin/rec-summary" --json "$tmp/five.rec" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["restarts"] == 4, d["restarts"]
assert [r["pid"] for r in d["runs"]] == [1000, 1001, 1002, 1003, 1004], d["runs"]
c = {x["name"]: x for x in d["counters"]}
assert sorted(c) == ["errors", "requests"], c
assert (c["requests"]["total"], c["requests"]["resets"], c["requests"]["runs"], c["requests"]["samples"]) == (91, 1, 5, 13), c
assert (c["errors"]["total"], c["errors"]["resets"], c["errors"]["runs"], c["errors"]["samples"]) == (8, 1, 3, 7), c
' || fail "summary json"
# the same from standard input (one pass, no seeking back)
"$bin/rec-summary" --json - <"$tmp/five.rec" | python3 -c '
import json, sys
c = {x["name"]: (x["total"], x["resets"]) for x in json.load(sys.stdin)["counters"]}
assert c == {"requests": (91, 1), "errors": (8, 1)}, c
' || fail "summary json from stdin"
# --no-counters: headers and statistics only, "counters": null
"$bin/rec-summary" --json --no-counters "$tmp/five.rec" | python3 -c '
import json, sys
assert json.load(sys.stdin)["counters"] is None
' || fail "summary --no-counters"
"$bin/rec-summary" --no-counters "$tmp/five.rec" | grep -q "^ Counter " && fail "--no-counters prints counters"

"$bin/rec-split" --by run -o "$tmp/run" "$tmp/five.rec" >"$tmp/out" || fail "split exit"
[ "$(wc -l <"$tmp/out")" = 5 ] || fail "split: $(cat "$tmp/out")"
for i in 1 2 3 4 5; do
	p=$tmp/run-000$i.rec
	"$bin/rec-check" -q "$p" || fail "$p does not check"
	"$bin/rec-summary" --json "$p" | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert len(d['runs']) == 1 and d['runs'][0]['pid'] == 1000 + $i - 1 and d['restarts'] == 0, d['runs']
" || fail "piece $i is not run $i"
done
"$bin/rec-cat" -q "$tmp"/run-0005.rec "$tmp"/run-0003.rec "$tmp"/run-0001.rec "$tmp"/run-0004.rec "$tmp"/run-0002.rec >"$tmp/back.rec" || fail "cat exit"
cmp -s "$tmp/back.rec" "$tmp/five.rec" || fail "rec-cat of the runs in another order is not the original"

# cut in the middle of the last run's last chunk: every earlier chunk survives
size=$(stat -c %s "$tmp/five.rec")
head -c $((size - 20)) "$tmp/five.rec" >"$tmp/cut.rec"
rc=0; "$bin/rec-recover" "$tmp/cut.rec" "$tmp/rec.rec" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "recover: exit $rc"
grep -q "kept 18 of 19 chunks" "$tmp/err" || fail "recover: $(cat "$tmp/err")"
"$bin/rec-summary" "$tmp/rec.rec" | grep -q "Runs:  *5 (4 restarts)" || fail "recovered: runs"

[ "$fails" = 0 ] && echo "archive_runs: ok"
exit $((fails != 0))
