#!/usr/bin/env bash
# rec-scrub: the content of the output is the content of the input minus what
# was removed or blanked, checked by comparing rec-print --json of both event
# by event (and rec-summary --json: runs, times, chunks, dropped, how runs
# ended): an identity scrub changes nothing; --exclude-events and
# --include-events remove exactly the matching types (from the metadata too);
# --blank sets exactly the chosen fields to "", empty, 0 or none; the EVENTS
# layout is the input's unless --layout says (rec-summary says which chunks
# are split).  On every valid testdata file and on a real recorder
# recording.  Damaged input, usage.
set -uo pipefail
if [ ! -d "${REC_BIN:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/bin" ]; then REC_BIN=$BUILD/bin; fi
if [ ! -d "${REC_TESTS:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/tests" ]; then REC_TESTS=$BUILD/tests; fi
bin=${REC_BIN:?}
tests=${REC_TESTS:?}
root=${REC_ROOT:?}
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TZ=UTC
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# compare IN OUT MODE ARG: rec-print --json of both; MODE none|exclude|include|blank
compare() {
	"$bin/rec-print" --json "$1" >"$tmp/a.json" 2>/dev/null
	"$bin/rec-print" --json "$2" >"$tmp/b.json" || { fail "rec-print $2"; return; }
	"$bin/rec-summary" --json "$1" >"$tmp/sa.json" 2>/dev/null
	"$bin/rec-summary" --json "$2" >"$tmp/sb.json" || { fail "rec-summary $2"; return; }
	python3 - "$tmp" "$3" "$4" <<'PY' || fail "$2: content differs ($3 $4)"
import fnmatch, json, sys
d, mode, arg = sys.argv[1:4]
a = json.load(open(d + "/a.json"))["recording"]["events"]
b = json.load(open(d + "/b.json"))["recording"]["events"]
pats = [p for p in arg.split(",") if p]
def tmatch(t): return any(fnmatch.fnmatchcase(t, p) for p in pats)
if mode == "exclude":
    want = [e for e in a if not tmatch(e["type"])]
elif mode == "include":
    want = [e for e in a if tmatch(e["type"])]
else:
    want = a
assert len(want) == len(b), (len(want), len(b))
# Pair the events by type, then time: events of different types within the
# 2 ns of truncation below (rec.Process beside rec.ProcessStats at close)
# may print in either order.
want.sort(key=lambda e: e["type"])
b.sort(key=lambda e: e["type"])
header = ("startTime", "duration", "eventThread", "stackTrace")
import re
iso = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{9})Z$")
import calendar, time
def iso_ns(m):
    return calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")) * 10**9 + int(m.group(2))
def same(v, w):
    # Ticks are kept exactly; with a tick frequency other than 1e9 a tick's
    # wall-clock ns is its chunk's Start_Wall_Ns plus a truncated offset,
    # and Start_Wall_Ns is itself truncated from the writer's anchor.  The
    # copy's anchor is the run's first chunk (one more truncation, and with
    # types removed a chunk's Start_Ticks can move): up to 2 ns either way.
    if v == w:
        return True
    if isinstance(v, str) and isinstance(w, str) and iso.match(v) and iso.match(w):
        return abs(iso_ns(iso.match(v)) - iso_ns(iso.match(w))) <= 2
    return False
blanked = 0
for x, y in zip(want, b):
    assert x["type"] == y["type"], (x["type"], y["type"])
    assert list(x["values"]) == list(y["values"]), (x, y)
    for k, v in x["values"].items():
        w = y["values"][k]
        bl = mode == "blank" and k not in header and any(
            (fnmatch.fnmatchcase(x["type"], p.rsplit(".", 1)[0]) and fnmatch.fnmatchcase(k, p.rsplit(".", 1)[1]))
            if "." in p else fnmatch.fnmatchcase(k, p) for p in pats)
        if not bl:
            assert same(v, w), (x["type"], k, v, w)
        else:
            blanked += 1
            if isinstance(v, str) and not v[:4].isdigit():
                assert w == "", (k, w)
            elif isinstance(v, bool):
                assert w is False, (k, w)
            elif isinstance(v, (int, float)):
                assert w == 0, (k, w)
            elif v is None:  # a null string blanks to "", a null reference stays null
                assert w in ("", None), (k, w)
            elif isinstance(v, dict):
                assert w is None, (k, w)
            else:  # a timestamp: tick 0, not the original
                assert isinstance(w, str), (k, w)
if mode == "blank":
    assert blanked > 0, "nothing was blanked"
sa, sb = json.load(open(d + "/sa.json")), json.load(open(d + "/sb.json"))
keys = ("run_id", "pid", "process_start", "dropped", "ended")
ra = [{k: r[k] for k in keys} for r in sa["runs"]]
rb = [{k: r[k] for k in keys} for r in sb["runs"]]
assert ra == rb, (ra, rb)
assert sa["restarts"] == sb["restarts"]
if mode in ("none", "blank"):
    for r, s in zip(sa["runs"], sb["runs"]):
        for k in ("chunks", "events", "first_event", "last_event"):
            assert same(r.get(k), s.get(k)), (k, r, s)
    assert [(t["name"], t["count"]) for t in sa["types"]] == [(t["name"], t["count"]) for t in sb["types"]]
else:
    names = {t["name"] for t in sb["types"]}
    assert all((not tmatch(n)) == (mode == "exclude") for n in names), names
PY
}

# Real recorder recording (several chunks, one run).
REC_OPTIONS="chunk=16384,full=wait" REC_OUTPUT="$tmp/real-%p.rec" "$tests/rec_test_recorder_env" 5000 || fail "recording"
real=$(ls "$tmp"/real-*.rec)

files="$root/testdata/valid/tiny.rec $root/testdata/valid/zstd.rec $root/testdata/valid/lz4.rec $root/testdata/valid/two-runs.rec $root/testdata/valid/newer-minor.rec $real"
for f in $files; do
	n=$(basename "$f" .rec)
	rc=0; "$bin/rec-scrub" --include-events='*' "$f" "$tmp/$n.id.rec" 2>"$tmp/err" || rc=$?
	[ "$rc" = 0 ] || fail "$n identity: exit $rc: $(cat "$tmp/err")"
	"$bin/rec-check" -q "$tmp/$n.id.rec" || fail "$n identity: output does not check"
	compare "$f" "$tmp/$n.id.rec" none ""
	grep -q "0 removed), 0 fields blanked" "$tmp/err" || fail "$n identity report: $(cat "$tmp/err")"
done

z=$root/testdata/valid/zstd.rec
# exclude / include
"$bin/rec-scrub" -q --exclude-events 'rec.Heap*' "$z" "$tmp/ex.rec" || fail "exclude exit"
compare "$z" "$tmp/ex.rec" exclude 'rec.Heap*'
"$bin/rec-scrub" -q --exclude-events 'rec.HeapUsage,test.*' "$z" "$tmp/ex2.rec" || fail "exclude 2 exit"
compare "$z" "$tmp/ex2.rec" exclude 'rec.HeapUsage,test.*'
"$bin/rec-scrub" -q --include-events 'test.AllTypes' "$z" "$tmp/in.rec" || fail "include exit"
compare "$z" "$tmp/in.rec" include 'test.AllTypes'
"$bin/rec-scrub" -q --exclude-events 'app.*' "$real" "$tmp/rx.rec" || fail "real exclude exit"
compare "$real" "$tmp/rx.rec" exclude 'app.*'
rc=0; "$bin/rec-scrub" --exclude-events 'rec.Heap*' "$z" "$tmp/ex.rec" 2>"$tmp/err" || rc=$?
n=$("$bin/rec-summary" --json "$z" | python3 -c 'import json,sys; print(sum(t["count"] for t in json.load(sys.stdin)["types"] if t["name"].startswith("rec.Heap")))')
grep -q "($n removed)" "$tmp/err" || fail "exclude report: $(cat "$tmp/err"), want $n removed"

# blank: one field of one type, a field of every type, every field of a type
"$bin/rec-scrub" -q --blank 'rec.LockWait.lock' "$root/testdata/valid/tiny.rec" "$tmp/b1.rec" || fail "blank 1 exit"
compare "$root/testdata/valid/tiny.rec" "$tmp/b1.rec" blank 'rec.LockWait.lock'
grep -q global-mutex "$tmp/b1.rec" && fail "blanked string still in the file (LockWait.lock)"
"$bin/rec-scrub" -q --blank 'name,message' "$z" "$tmp/b2.rec" || fail "blank 2 exit"
compare "$z" "$tmp/b2.rec" blank 'name,message'
"$bin/rec-scrub" -q --blank 'test.AllTypes.*' --blank '*.used' "$z" "$tmp/b3.rec" || fail "blank 3 exit"
compare "$z" "$tmp/b3.rec" blank 'test.AllTypes.*,*.used'
"$bin/rec-scrub" -q --blank 'app.*.i' "$real" "$tmp/b4.rec" || fail "blank real exit"
compare "$real" "$tmp/b4.rec" blank 'app.*.i'
# exclude and blank together
"$bin/rec-scrub" -q --exclude-events 'rec.CpuSample' --blank 'payload' "$z" "$tmp/b5.rec" || fail "combined exit"
"$bin/rec-scrub" -q --exclude-events 'rec.CpuSample' "$z" "$tmp/b5x.rec"
compare "$tmp/b5x.rec" "$tmp/b5.rec" blank 'payload'

# layout: kept as the input's by default (a one-stream file stays readable
# by readers before 1.3), converted with --layout (alone: a conversion)
split_of() { "$bin/rec-summary" --json "$1" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["chunks_split"], s["chunks"])'; }
sp=$root/testdata/valid/split-1.3.rec
[ "$(split_of "$sp")" = "2 3" ] || fail "split-1.3.rec: split chunks $(split_of "$sp"), want 2 of 3"
"$bin/rec-scrub" -q --include-events='*' "$sp" "$tmp/l0.rec" || fail "layout kept (split) exit"
[ "$(split_of "$tmp/l0.rec")" = "2 3" ] || fail "layout kept (split): $(split_of "$tmp/l0.rec"), want 2 of 3 as in the input (a chunk is split only when that is smaller)"
"$bin/rec-scrub" -q --include-events='*' "$z" "$tmp/l1.rec" || fail "layout kept (one) exit"
[ "$(split_of "$tmp/l1.rec")" = "0 3" ] || fail "layout kept (one stream): $(split_of "$tmp/l1.rec")"
"$bin/rec-scrub" -q --layout=one "$sp" "$tmp/l2.rec" || fail "--layout=one exit"
[ "$(split_of "$tmp/l2.rec")" = "0 3" ] || fail "--layout=one: $(split_of "$tmp/l2.rec")"
"$bin/rec-check" -q "$tmp/l2.rec" || fail "--layout=one: output does not check"
compare "$sp" "$tmp/l2.rec" none ""
"$bin/rec-summary" "$tmp/l2.rec" | grep -q 'EVENTS split' && fail "--layout=one: rec-summary still says split"
"$bin/rec-summary" "$sp" | grep -q 'EVENTS split in 2 of 3 chunks' || fail "rec-summary does not say which chunks are split"
"$bin/rec-scrub" -q --layout=split --blank name "$z" "$tmp/l3.rec" || fail "--layout=split exit"
[ "$(split_of "$tmp/l3.rec")" = "3 3" ] || fail "--layout=split: $(split_of "$tmp/l3.rec")"
compare "$z" "$tmp/l3.rec" blank name
rc=0; "$bin/rec-scrub" --layout=two "$z" "$tmp/l4.rec" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "not one or split" "$tmp/err" || fail "--layout=two: exit $rc"

# damaged input: damaged chunks left out (exit 1), the rest scrubbed
rc=0; "$bin/rec-scrub" --blank x "$root/testdata/invalid/corrupt-middle.rec" "$tmp/d.rec" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "damaged: exit $rc"
grep -q "chunk 1 at offset 1177: payload checksum mismatch" "$tmp/err" || fail "damaged: $(cat "$tmp/err")"
"$bin/rec-check" "$tmp/d.rec" | grep -q "OK, 2 chunks, 16 events" || fail "damaged: output"
rc=0; "$bin/rec-scrub" -q --blank x "$root/testdata/invalid/truncated-tail.rec" "$tmp/t.rec" 2>/dev/null || rc=$?
[ "$rc" = 1 ] || fail "truncated: exit $rc"
"$bin/rec-summary" --json "$tmp/t.rec" | python3 -c 'import json,sys; r=json.load(sys.stdin)["runs"]; assert r[0]["ended"] == "no final chunk", r' \
	|| fail "truncated: the run must not gain a FINAL chunk"
# pipes
cat "$z" | "$bin/rec-scrub" -q --blank name - - >"$tmp/p.rec" || fail "pipe exit"
compare "$z" "$tmp/p.rec" blank name

# usage
rc=0; "$bin/rec-scrub" "$z" "$tmp/u.rec" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "nothing to scrub" "$tmp/err" || fail "no option: exit $rc"
rc=0; "$bin/rec-scrub" --blank x "$z" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "one file: exit $rc"
cp "$z" "$tmp/same.rec"
rc=0; "$bin/rec-scrub" --blank x "$tmp/same.rec" "$tmp/same.rec" 2>/dev/null || rc=$?
[ "$rc" = 2 ] && cmp -s "$tmp/same.rec" "$z" || fail "same file: exit $rc"
"$bin/rec-scrub" --help | grep -q '^Usage: rec-scrub' || fail "--help"

[ "$fails" = 0 ] && echo "archive_scrub: ok"
exit $((fails != 0))
