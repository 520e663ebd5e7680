#!/usr/bin/env bash
# rec-print --json-lines (issue 21, "rec-print for machines"): one event object
# per line, the same objects as --json's events array in the same order,
# with every time also as integer ns since the epoch: "startTimeNs" beside
# "startTime", "NAMENs" after a time field NAME.  Checked by python3's json on
# testdata/valid/*.rec and a generated multi-chunk recording: the lines are
# --json's events once the *Ns keys are taken out, each *Ns is its ISO 8601
# string's instant to the ns, and the line count is rec-summary's event
# count; --events selects as with --json; --json with --json-lines is a
# usage error.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
need_exe "$bin/rec-print" "$bin/rec-summary" "$tests/rec_test_sql_gen"
command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }
export TZ=UTC

"$tests/rec_test_sql_gen" "$tmp/gen.rec" 4 >/dev/null || fail "rec_test_sql_gen: exit $?"
for f in "$root"/testdata/valid/*.rec "$tmp/gen.rec"; do
	"$bin/rec-print" --json "$f" >"$tmp/doc.json" || { fail "--json $f: exit $?"; continue; }
	"$bin/rec-print" --json-lines "$f" >"$tmp/lines.jsonl" || { fail "--json-lines $f: exit $?"; continue; }
	"$bin/rec-summary" --json "$f" >"$tmp/sum.json" || { fail "rec-summary $f: exit $?"; continue; }
	python3 - "$tmp/doc.json" "$tmp/lines.jsonl" "$tmp/sum.json" "$f" <<'PY' || fail "$f: --json-lines"
import calendar, json, re, sys
doc = json.load(open(sys.argv[1]))["recording"]["events"]
lines = open(sys.argv[2]).read().split("\n")
assert lines[-1] == "", "no newline at the end"
evs = [json.loads(l) for l in lines[:-1]]
def iso_ns(s):
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z", s)
    assert m, s
    sec = calendar.timegm(tuple(map(int, re.split("[-T:]", m.group(1)))) + (0, 0, 0))
    return sec * 10**9 + int((m.group(2) or "0").ljust(9, "0"))
ns_keys = 0
for e in evs:
    v = e["values"]
    for k in [k for k in v if k.endswith("Ns") and k[:-2] in v]:
        if isinstance(v[k[:-2]], str) and v[k] is not None:
            assert v[k] == iso_ns(v[k[:-2]]), (k, v[k], v[k[:-2]])
            ns_keys += 1
            del v[k]
assert evs == doc, "lines differ from --json's events"
assert len(evs) == json.load(open(sys.argv[3]))["events"], (len(evs),)
print("ok  ", sys.argv[4].rsplit("/", 1)[-1], len(evs), "events,", ns_keys, "times as ns")
PY
done
"$bin/rec-print" --json-lines --events app.Wait "$tmp/gen.rec" >"$tmp/w.jsonl" || fail "--events: exit $?"
[ "$(wc -l <"$tmp/w.jsonl")" = 40 ] && ! grep -qv '"type": "app.Wait"' "$tmp/w.jsonl" || fail "--events app.Wait: $(head -3 "$tmp/w.jsonl")"
rc=0
"$bin/rec-print" --json --json-lines "$tmp/gen.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && [ ! -s "$tmp/out" ] && grep -q "^rec-print: --json and --json-lines exclude each other" "$tmp/err" ||
	fail "--json --json-lines: exit $rc: $(cat "$tmp/err")"
cli_done print_jsonl
