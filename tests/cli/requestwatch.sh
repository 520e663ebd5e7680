#!/usr/bin/env bash
# Integration test: runs the demo scenario of issue 3 against the real
# requestwatch process with REC_OUTPUT (connection threads on 64 KiB stacks),
# then asserts from the recording alone,
# through `rec-print --json` and `rec-summary --json` parsed by python3:
#   - 10 app.Request events (4 blocking, 4 blocking-fixed, 1 fast, 1 allocating), all 200;
#   - the slowest blocking request >= 500 ms, lock waits on quote-cache-lock >= 400 ms;
#   - the slowest blocking-fixed request < 350 ms, no lock wait over 10 ms in one;
#   - the allocating request's rec.Alloc events (its thread, its time window)
#     total exactly 6,291,456 bytes;
#   - the warm-up's sleep (>= 400 ms) and allocations (256 x 16384) end before
#     the first request starts.
# Exits 0 on pass.  Needs $REC_BIN (tests/run.sh sets it) or BUILD.
set -euo pipefail
cd "$(dirname "$0")/../.."
# tests/run.sh sets REC_BIN to $PWD/$BUILD/bin, wrong for an absolute BUILD.
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
BIN=${REC_BIN:-}
[ -d "$BIN" ] || BIN=$BUILD/bin
export TZ=UTC

for t in requestwatch rec-print rec-summary; do
	[ -x "$BIN/$t" ] || { echo "FAIL: $BIN/$t missing" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "FAIL: python3 missing" >&2; exit 1; }

work=$(mktemp -d /tmp/requestwatch-test.XXXXXX)
server_pid=
cleanup() {
	if declare -F rw_kill >/dev/null; then rw_kill; fi
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$work/server.err" ] && sed 's/^/  server: /' "$work/server.err" >&2; exit 1; }

# rw_start, burst, rw_stop: the shared scenario.
# shellcheck source=tests/cli/lib/requestwatch_scenario.sh
source tests/cli/lib/requestwatch_scenario.sh

# --stack-kib: values that cannot work are refused (exit 2, named)
for bad in 10 -1 x 2000000; do
	rc=0
	"$BIN/requestwatch" --stack-kib "$bad" >/dev/null 2>"$work/arg.err" || rc=$?
	[ "$rc" -eq 2 ] && grep -q "bad --stack-kib '$bad'" "$work/arg.err" ||
		fail "requestwatch --stack-kib $bad: exit $rc, $(cat "$work/arg.err")"
done

# The scenario runs on the smallest stack allowed (64 KiB; the default is 256):
# the requests, the recorder's emit paths and the CPU sampler's signal handler
# must fit in it.
rec="$work/run.rec"
rw_start "$rec" --stack-kib 64

burst 4 /requests/blocking
burst 4 /requests/blocking-fixed
burst 1 /requests/fast
burst 1 /requests/allocating
burst 1 /requests/no-such-thing   # 404, the 11th request

rw_stop

sort "$work/statuses" | uniq -c | sed 's/^/  responses: /'
[ "$(grep -c ' 200$' "$work/statuses")" -eq 10 ] || fail "expected 10 responses with 200"
grep -q '^/requests/no-such-thing 404$' "$work/statuses" || fail "expected a 404 for an unknown path"

timeout 60 "$BIN/rec-summary" --json "$rec" >"$work/summary.json" || fail "rec-summary --json failed"
timeout 60 "$BIN/rec-print" --json \
	--events app.Request,rec.LockWait,rec.Sleep,rec.Alloc,rec.Counter,rec.Log,rec.Dropped "$rec" >"$work/events.json" ||
	fail "rec-print --json failed"

python3 - "$work/events.json" "$work/summary.json" <<'EOF'
import calendar, json, re, sys, time

events = json.load(open(sys.argv[1]))["recording"]["events"]
summary = json.load(open(sys.argv[2]))
MS = 1_000_000
failures = []

def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)

def ns(iso):
    """ISO-8601 with up to 9 fraction digits and a zone -> ns since epoch."""
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:?\d\d)?", iso)
    if not m:
        raise ValueError("bad time " + iso)
    t = calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")) * 10**9
    t += int((m.group(2) or "0").ljust(9, "0"))
    z = m.group(3)
    if z and z != "Z":
        sign = -1 if z[0] == "+" else 1
        hh, mm = int(z[1:3]), int(z[-2:])
        t += sign * (hh * 3600 + mm * 60) * 10**9
    return t

def by_type(name):
    out = []
    for e in events:
        if e["type"] == name:
            v = e["values"]
            start = ns(v["startTime"])
            out.append(dict(v, start=start, end=start + v.get("duration", 0),
                            tid=(v.get("eventThread") or {}).get("tid")))
    return out

reqs = by_type("app.Request")
waits = by_type("rec.LockWait")
sleeps = by_type("rec.Sleep")
allocs = [a for a in by_type("rec.Alloc") if a["sampled"] is False]  # reported, exact

def lock_name(w):
    return w["lockName"]

def alloc_size(a):
    return a["size"]

# --- requests
check(len(reqs) == 11, "as many app.Request events as requests sent (the scenario's 10 + one 404): %d"
      % len(reqs))
paths = {}
for r in reqs:
    paths.setdefault(r["path"], []).append(r)
for p, n in [("/requests/blocking", 4), ("/requests/blocking-fixed", 4),
             ("/requests/fast", 1), ("/requests/allocating", 1), ("/requests/no-such-thing", 1)]:
    check(len(paths.get(p, [])) == n, "%d app.Request with path %s: %d" % (n, p, len(paths.get(p, []))))
check(all(r["status"] == (404 if r["path"] == "/requests/no-such-thing" else 200) for r in reqs),
      "status 200 (404 for the unknown path) on every app.Request")
check(all(re.fullmatch(r"conn-\d+", (r.get("eventThread") or {}).get("name", "")) for r in reqs),
      "every request ran on a thread named conn-N")

blocking = paths.get("/requests/blocking", [])
fixed = paths.get("/requests/blocking-fixed", [])
slow_b = max((r["duration"] for r in blocking), default=0)
check(slow_b >= 500 * MS, "slowest blocking request >= 500 ms: %.1f ms" % (slow_b / MS))

# --- lock waits on the global mutex
global_waits = [w for w in waits if lock_name(w) == "quote-cache-lock"]
total_wait = sum(w["duration"] for w in global_waits)
check(total_wait >= 400 * MS,
      "lock waits on quote-cache-lock sum >= 400 ms: %.1f ms over %d events" % (total_wait / MS, len(global_waits)))

def inside(ev, r):
    return ev["tid"] == r["tid"] and ev["start"] >= r["start"] and ev["end"] <= r["end"]

b_waits = [w for w in global_waits if any(inside(w, r) for r in blocking)]
check(sum(w["duration"] for w in b_waits) >= 400 * MS,
      "of which inside blocking requests (same thread, inside the request) >= 400 ms: %.1f ms"
      % (sum(w["duration"] for w in b_waits) / MS))

slow_f = max((r["duration"] for r in fixed), default=10**12)
check(slow_f < 350 * MS, "slowest blocking-fixed request < 350 ms: %.1f ms" % (slow_f / MS))
f_waits = [w for w in waits if any(inside(w, r) for r in fixed)]
worst_f = max((w["duration"] for w in f_waits), default=0)
check(worst_f <= 10 * MS, "no lock wait over 10 ms inside a blocking-fixed request: worst %.3f ms (%d events)"
      % (worst_f / MS, len(f_waits)))
f_sleeps = [s for s in sleeps if any(inside(s, r) for r in fixed)]
check(len(f_sleeps) == 4 and all(s["duration"] >= 150 * MS for s in f_sleeps),
      "each blocking-fixed request slept 150 ms (rec.Sleep): %d" % len(f_sleeps))

# --- the allocating request
alloc_req = paths.get("/requests/allocating", [None])[0]
if alloc_req:
    mine = [a for a in allocs if a["tid"] == alloc_req["tid"]
            and alloc_req["start"] <= a["start"] <= alloc_req["end"]]
    total = sum(alloc_size(a) for a in mine)
    check(total == 6291456, "allocation events of the allocating request total 6,291,456 bytes: %d in %d events"
          % (total, len(mine)))
else:
    check(False, "the allocating request is recorded")

# --- the warm-up precedes the first request
first = min(r["start"] for r in reqs) if reqs else 0
warm_sleep = [s for s in sleeps if s["duration"] >= 400 * MS and s["end"] <= first]
check(len(warm_sleep) == 1, "the warm-up's 400 ms sleep ends before the first request: %d" % len(warm_sleep))
if warm_sleep:
    wt = warm_sleep[0]["tid"]
    warm_allocs = [a for a in allocs if a["tid"] == wt and a["start"] <= warm_sleep[0]["start"]]
    wbytes = sum(alloc_size(a) for a in warm_allocs)
    check(len(warm_allocs) == 256 and wbytes == 256 * 16384,
          "the warm-up's 256 allocations (4,194,304 bytes) precede its sleep: %d, %d bytes"
          % (len(warm_allocs), wbytes))
    check(all(a["end"] <= first for a in allocs if a["tid"] == wt),
          "every allocation of the warm-up thread precedes the first request")

# --- the service's own counter and log lines
served = [c["value"] for c in by_type("rec.Counter") if c["name"] == "requestwatch.requests"]
check(bool(served) and served[-1] == len(reqs),
      "last rec.Counter requestwatch.requests equals the requests recorded: %s" % served[-1:])
# rec-summary's counter total counts from the counter's start (a sample of 0
# when requestwatch created it), not from its first periodic sample: it
# equals the requests served (issue 16: it said 7 beside 10 app.Request)
ctot = {c["name"]: c for c in (summary.get("counters") or [])}.get("requestwatch.requests")
check(ctot is not None and ctot["total"] == len(reqs) and ctot["resets"] == 0 and ctot["runs"] == 1,
      "rec-summary's total of requestwatch.requests equals the %d app.Request events: %s"
      % (len(reqs), ctot))
check(bool(served) and served[0] == 0, "the counter's first sample is its start, 0: %s" % served[:1])
logs = [l["message"] for l in by_type("rec.Log")]
check(any(m.startswith("listening on 127.0.0.1:") for m in logs), "a rec.Log says where it listened")

# --- the summary agrees: one run, closed cleanly, drops accounted for
check(summary.get("schema") == 1, "rec-summary --json has schema 1")
runs = summary.get("runs", [])
check(len(runs) == 1 and runs[0].get("ended") == "clean close",
      "one run that ended with a clean close: %s" % [r.get("ended") for r in runs])
# The default recorder runs the CPU sampler (10 ms of thread CPU time): a
# SIGPROF that lands inside an emit of the same thread (likely under ASan,
# where the 768 rec.Alloc stack captures of the allocating request are slow)
# drops that one sample and counts it as reason 2.  Nothing else may drop
# here, and every drop must be accounted for by a rec.Dropped event.
drops = by_type("rec.Dropped")
for d in drops:
    print("     rec.Dropped:", json.dumps(d, sort_keys=True))
check(all(d["reason"] == 2 for d in drops),
      "the only drops are CPU samples that interrupted an emit (reason 2): %s" % sorted({d["reason"] for d in drops}))
check(summary.get("dropped") == sum(d["count"] for d in drops),
      "rec-summary's dropped (%s) is the sum of the rec.Dropped counts (%s)"
      % (summary.get("dropped"), sum(d["count"] for d in drops)))
types = {t["name"]: t["count"] for t in summary.get("types", [])}
check(types.get("app.Request") == len(reqs) and types.get("rec.LockWait", 0) >= 3,
      "rec-summary counts %s app.Request and %s rec.LockWait" % (types.get("app.Request"), types.get("rec.LockWait")))

sys.exit(1 if failures else 0)
EOF
