#!/usr/bin/env bash
# Write failures of a recording host, checked with the real tools
# (tests/helpers/rec_test_crash.c):
#   fsize   RLIMIT_FSIZE (SIGXFSZ ignored): writes fail with EFBIG, the host
#           goes on, the failure is reported once; the limit is raised and
#           the recording goes on.  rec-check: clean (no partial chunk left);
#           a rec.WriteFailed (errno 27) with what was lost (no event when
#           the chunk that met the limit held only the recorder's own
#           records), rec.Dropped reason 4 for at least those events;
#           events before and after; the counts reconcile:
#           attempts + 1 rec.ThreadStart = events in the file + dropped.
#   unlink  the file removed while recording: a new file appears at the path
#           with a rec.WriteFailed (action 1); both files check clean and
#           hold every event between them.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
helper=$tests/rec_test_crash
need_exe "$helper"

# ---- fsize ----
rc=0
timeout -k 5 120 "$helper" fsize "$tmp/f.rec" >"$tmp/f.out" 2>"$tmp/f.err" || rc=$?
[ "$rc" = 0 ] || fail "fsize: exit $rc: $(cat "$tmp/f.err")"
grep -q "reports=1 " "$tmp/f.out" || fail "fsize: not reported exactly once: $(cat "$tmp/f.out")"
grep -q "File too large" "$tmp/f.out" || fail "fsize: message: $(cat "$tmp/f.out")"
"$bin/rec-check" -q "$tmp/f.rec" || fail "fsize: rec-check: $("$bin/rec-check" "$tmp/f.rec" 2>&1)"
"$bin/rec-print" --json "$tmp/f.rec" >"$tmp/f.json" || fail "fsize: rec-print"
"$bin/rec-summary" --json "$tmp/f.rec" >"$tmp/f.sum" || fail "fsize: rec-summary"
python3 - "$tmp/f.json" "$tmp/f.sum" "$tmp/f.out" <<'EOF' || fail "fsize: content"
import json, re, sys
evs = json.load(open(sys.argv[1]))["recording"]["events"]
summ = json.load(open(sys.argv[2]))
out = open(sys.argv[3]).read()
attempts = int(re.search(r"attempts=(\d+)", out).group(1))
dropped_stat = int(re.search(r"dropped=(\d+)", out).group(1))
ok = True
def bad(m):
    global ok
    ok = False
    print("fsize:", m)
work = [e["values"] for e in evs if e["type"] == "app.Work"]
by = {0: 0, 1: 0, 2: 0}
for v in work:
    by[v["worker"]] += 1
if by[0] == 0: bad("no events from before the failure")
if by[2] != 2000: bad(f"{by[2]} events after the limit was raised, want 2000")
wf = [e["values"] for e in evs if e["type"] == "rec.WriteFailed"]
if not wf: bad("no rec.WriteFailed")
for w in wf:
    # (the chunk that meets the limit may hold only the recorder's own
    # records, which the events field leaves out: events 0; which chunk
    # that is depends on timing.  What was lost reconciles below.)
    if w["errno"] != 27 or w["action"] != 0 or w["events"] < 0 or w["chunks"] <= 0 or w["bytes"] <= 0:
        bad(f"rec.WriteFailed {w}")
drops = [e["values"] for e in evs if e["type"] == "rec.Dropped"]
lost = sum(d["count"] for d in drops if d["reason"] == 4)
wf_events = sum(w["events"] for w in wf)
# reason 4 = the lost events + the counts of rec.Dropped records lost with them
if lost < wf_events:
    bad(f"rec.Dropped reason 4 {lost} < rec.WriteFailed events {wf_events}")
in_file = sum(1 for e in evs if e["type"] not in ("rec.Dropped", "rec.WriteFailed", "rec.Process"))
total_dropped = sum(d["count"] for d in drops)
if in_file + total_dropped != attempts + 1:
    bad(f"{in_file} in the file + {total_dropped} dropped != {attempts} attempts + 1 rec.ThreadStart")
if summ["dropped"] != total_dropped: bad(f"rec-summary dropped {summ['dropped']}, rec.Dropped {total_dropped}")
# each lost event is counted once in the recorder's statistics and once in
# the file (its own rec.Dropped, or folded into reason 4 when that was lost)
if dropped_stat != total_dropped:
    bad(f"stats dropped {dropped_stat}, rec.Dropped in the file {total_dropped}")
if summ["runs"][0]["ended"] != "clean close": bad(f"ended {summ['runs'][0]['ended']}")
sys.exit(0 if ok else 1)
EOF

# ---- unlink ----
rc=0
timeout -k 5 60 "$helper" unlink "$tmp/u.rec" >"$tmp/u.out" 2>"$tmp/u.err" || rc=$?
[ "$rc" = 0 ] || fail "unlink: exit $rc: $(cat "$tmp/u.err")"
grep -q "reports=1 " "$tmp/u.out" || fail "unlink: not reported exactly once: $(cat "$tmp/u.out")"
grep -q "was removed" "$tmp/u.out" || fail "unlink: message: $(cat "$tmp/u.out")"
[ -s "$tmp/u.rec" ] || fail "unlink: no new file at the path"
"$bin/rec-check" -q "$tmp/u.rec" "$tmp/u.rec.old" || fail "unlink: rec-check"
"$bin/rec-print" --json "$tmp/u.rec.old" >"$tmp/old.json" || fail "unlink: rec-print old"
"$bin/rec-print" --json "$tmp/u.rec" >"$tmp/new.json" || fail "unlink: rec-print new"
python3 - "$tmp/old.json" "$tmp/new.json" <<'EOF' || fail "unlink: content"
import json, sys
old = json.load(open(sys.argv[1]))["recording"]["events"]
new = json.load(open(sys.argv[2]))["recording"]["events"]
ok = True
def bad(m):
    global ok
    ok = False
    print("unlink:", m)
def work(evs, w):
    return sorted(e["values"]["seq"] for e in evs if e["type"] == "app.Work" and e["values"]["worker"] == w)
if work(old, 0) != list(range(0, 500)): bad("the removed file lacks events of before the removal")
if work(old, 1) or work(old, 2): bad("events of after the removal in the removed file")
if work(new, 1) != list(range(500, 1000)) or work(new, 2) != list(range(1000, 1500)):
    bad("the new file lacks events of after the removal")
wf = [e["values"] for e in new if e["type"] == "rec.WriteFailed"]
if len(wf) != 1 or wf[0]["action"] != 1:
    bad(f"rec.WriteFailed in the new file: {wf}")
if any(e["type"] == "rec.Dropped" for e in old + new): bad("events were dropped")
sys.exit(0 if ok else 1)
EOF
# the two files together are one run
"$bin/rec-summary" --json "$tmp/u.rec.old" "$tmp/u.rec" >"$tmp/u.sum" || fail "unlink: rec-summary"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); sys.exit(0 if len(s["runs"]) == 1 and s["runs"][0]["ended"] == "clean close" else 1)' \
	"$tmp/u.sum" || fail "unlink: the two files are not one cleanly closed run: $(cat "$tmp/u.sum")"

cli_done recorder_write_fail
