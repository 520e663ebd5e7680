#!/usr/bin/env bash
# rec-timeline: the Chrome trace-event JSON (object form) parsed by python3's
# json module and checked event by event:
#   - a deterministic recording (rec_test_timeline_gen): thread tracks named
#     by thread_name metadata, X slices with exact ts/dur (us with ns
#     decimals), the lock wait as a slice named by its lock with all fields
#     in args, thread and process instants, counter and gauge "C" tracks;
#     the same from standard input and with --output;
#   - testdata/valid/zstd.rec (every field type): one trace event per event of
#     `rec-print --json --unsorted`, with ts/dur equal to its startTime and
#     duration;
#   - a truncated file: exit 1, the JSON still complete; usage errors exit 2.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
BIN=${REC_BIN:-}
[ -d "$BIN" ] || BIN=$BUILD/bin
TESTS=${REC_TESTS:-}
[ -d "$TESTS" ] || TESTS=$BUILD/tests
export TZ=UTC
fail() { echo "FAIL: $*" >&2; exit 1; }
for t in "$BIN/rec-timeline" "$BIN/rec-print" "$TESTS/rec_test_timeline_gen"; do
	[ -x "$t" ] || fail "$t missing"
done
command -v python3 >/dev/null || fail "python3 missing"
work=$(mktemp -d /tmp/timeline-test.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$TESTS/rec_test_timeline_gen" "$work/t.rec" || fail "rec_test_timeline_gen failed"
"$BIN/rec-timeline" "$work/t.rec" >"$work/t.json" || fail "rec-timeline exited $?"
"$BIN/rec-timeline" --output "$work/t2.json" "$work/t.rec" >"$work/t2.stdout" || fail "rec-timeline --output"
[ ! -s "$work/t2.stdout" ] || fail "--output also wrote to stdout"
cmp -s "$work/t.json" "$work/t2.json" || fail "--output differs from stdout"
"$BIN/rec-timeline" - <"$work/t.rec" >"$work/t3.json" || fail "rec-timeline - (stdin)"

python3 - "$work/t.json" "$work/t3.json" <<'EOF'
import json, re, sys
text = open(sys.argv[1]).read()
doc = json.loads(text)
failures = []
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)

check(set(doc) == {"traceEvents", "displayTimeUnit", "metadata"}, "object form: traceEvents, displayTimeUnit, metadata")
check(doc["displayTimeUnit"] == "ns", "displayTimeUnit ns")
md = doc["metadata"]
check(md["recordingStartWallNs"] == "1700000005000000000" and md["events"] == 7,
      "metadata: start 1700000005000000000, 7 events: %s" % md)
ev = doc["traceEvents"]
meta = [e for e in ev if e["ph"] == "M"]
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
check(names == {(4321, 501): "worker-a", (4321, 502): "worker-b"}, "thread_name metadata for both threads: %s" % names)
check(any(e["name"] == "process_name" and e["pid"] == 4321 for e in meta), "process_name metadata")
# every thread_name comes before that thread's first event
first_meta = {}
for i, e in enumerate(ev):
    key = (e["pid"], e["tid"])
    if e["ph"] == "M" and e["name"] == "thread_name":
        first_meta.setdefault(key, i)
    elif e["tid"] in (501, 502):
        check(first_meta.get(key, 10**9) < i, "thread_name of %s before its event %s" % (key, e["name"]))
rest = [e for e in ev if e["ph"] != "M"]
check(len(rest) == 8, "8 trace events besides metadata (the gauge's max a track of its own): %d" % len(rest))
def one(pred, what):
    m = [e for e in rest if pred(e)]
    check(len(m) == 1, what + " (found %d)" % len(m))
    return m[0] if m else {}
req = one(lambda e: e["name"] == "app.Request", "one app.Request")
check(req.get("ph") == "X" and req.get("ts") == 1234.567 and req.get("dur") == 2000.001 and
      req.get("pid") == 4321 and req.get("tid") == 501 and req.get("cat") == "app",
      "app.Request: X ts 1234.567 dur 2000.001 on 4321/501: %s" % req)
check(req.get("args") == {"path": "/a", "status": 200}, "app.Request args: %s" % req.get("args"))
check(re.search(r'"ts": 1234\.567, "dur": 2000\.001', text) is not None, "ts/dur written with 3 decimals")
lw = one(lambda e: e.get("cat") == "rec/Locks", "one lock wait")
check(lw.get("name") == "big-lock" and lw.get("ph") == "X" and lw.get("ts") == 1500.0 and
      lw.get("dur") == 750.25 and lw.get("tid") == 502, "lock wait: X named big-lock, ts 1500, dur 750.25: %s" % lw)
check(lw.get("args") == {"type": "rec.LockWait", "lockAddress": "0xdead0", "lockName": "big-lock",
                         "holderOsThreadId": 501, "lockKind": 0,
                         "stack": ["rec_lock_wait_record_+0x4", "handler+0x4", "main+0x4"]},
      "lock wait args: every field and the stack: %s" % lw.get("args"))
mk = one(lambda e: e["name"] == "app.Mark", "one app.Mark")
check(mk.get("ph") == "i" and mk.get("s") == "t" and mk.get("ts") == 3000.003 and mk.get("tid") == 502 and
      mk.get("args") == {"note": 'he said "hi"\n'}, "app.Mark: thread instant at 3000.003, escaped text: %s" % mk)
tk = one(lambda e: e["name"] == "app.Tick", "one app.Tick")
check(tk.get("ph") == "i" and tk.get("s") == "p" and tk.get("ts") == 5000.0 and tk.get("args") == {"n": 7},
      "app.Tick: process instant at 5000: %s" % tk)
cs = [(e["name"], e["ts"], e["args"]) for e in rest if e["ph"] == "C"]
check(cs == [("requests", 0.0, {"value": 0}), ("inflight", 4000.0, {"value": 2}),
             ("inflight (max)", 4000.0, {"max": 5}), ("requests", 4000.0, {"value": 1})],
      "counter tracks, a gauge's value and max apart (not stacked): %s" % cs)
check(all(e["pid"] == 4321 for e in ev), "every event has pid 4321")

stdin_doc = json.load(open(sys.argv[2]))
check(stdin_doc["traceEvents"] == doc["traceEvents"], "standard input gives the same events")
sys.exit(1 if failures else 0)
EOF

# Every event of a recording with every field type, against rec-print.
rec=testdata/valid/zstd.rec
"$BIN/rec-timeline" "$rec" >"$work/z.json" || fail "rec-timeline $rec"
"$BIN/rec-print" --json "$rec" >"$work/z.print.json" || fail "rec-print $rec"
python3 - "$work/z.json" "$work/z.print.json" <<'EOF'
import calendar, json, re, sys, time
doc = json.load(open(sys.argv[1]))
printed = json.load(open(sys.argv[2]))["recording"]["events"]
def ns(iso):
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{9})Z", iso)
    return calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")) * 10**9 + int(m.group(2))
base = int(doc["metadata"]["recordingStartWallNs"])
trace = [e for e in doc["traceEvents"] if e["ph"] != "M"]
bad = []
if len(trace) != len(printed):
    bad.append("%d trace events for %d printed events" % (len(trace), len(printed)))
starts = [ns(p["values"]["startTime"]) for p in printed]
if starts and min(starts) != base:
    bad.append("recordingStartWallNs %d is not the first event %d" % (base, min(starts)))
for t, p in zip(trace, printed):
    v = p["values"]
    want_ts = (ns(v["startTime"]) - base) / 1000
    if abs(t["ts"] - want_ts) > 1e-6:
        bad.append("%s: ts %r, expected %r" % (p["type"], t["ts"], want_ts))
    if "duration" in v:
        if t["ph"] != "X" or abs(t["dur"] - v["duration"] / 1000) > 1e-6:
            bad.append("%s: not an X slice of dur %r: %s" % (p["type"], v["duration"] / 1000, t))
    elif t["ph"] not in ("i", "C"):
        bad.append("%s: ph %s" % (p["type"], t["ph"]))
    tid = (v.get("eventThread") or {}).get("tid", 0)
    if t["tid"] != tid:
        bad.append("%s: tid %r, expected %r" % (p["type"], t["tid"], tid))
    if t["ph"] in ("X", "i") and t["name"] != p["type"] and t.get("cat") != "rec/Locks":
        bad.append("name %r for %r" % (t["name"], p["type"]))
    # every field of the event is in args
    fields = [k for k in v if k not in ("startTime", "duration", "eventThread", "stackTrace")]
    missing = [k for k in fields if k not in t["args"]]
    if t["ph"] != "C" and missing:
        bad.append("%s: args lack %s" % (p["type"], missing))
for b in bad[:20]:
    print("FAIL " + b)
print("ok   %d events of zstd.rec match rec-print" % len(trace) if not bad else "FAIL %d mismatches" % len(bad))
sys.exit(1 if bad else 0)
EOF

# Damaged input: what was readable, still a complete JSON document, exit 1.
size=$(stat -c %s "$rec")
head -c $((size - 20)) "$rec" >"$work/cut.rec"
rc=0
"$BIN/rec-timeline" "$work/cut.rec" >"$work/cut.json" 2>"$work/cut.err" || rc=$?
[ "$rc" -eq 1 ] || fail "truncated input: exit $rc, expected 1"
grep -q '^rec-timeline: ' "$work/cut.err" || fail "truncated input: no message on stderr"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/cut.json" || fail "truncated input: JSON not complete"

# Usage errors.
rc=0; "$BIN/rec-timeline" >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "no file: exit $rc, expected 2"
rc=0; "$BIN/rec-timeline" --bogus "$work/t.rec" >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "unknown option: exit $rc, expected 2"
"$BIN/rec-timeline" --help | grep -q '^Usage: rec-timeline' || fail "--help"
echo "timeline: ok"
