#!/usr/bin/env bash
# The seed story without instrumentation (issue 18): requestwatch built
# without rec (requestwatch-plain: plain pthread_mutex_lock, nanosleep,
# malloc) is recorded by rec-record through the preload library, driven
# through the scenario tests/cli/requestwatch.sh drives on the instrumented
# build, and the recording must say what that test's recording says:
#   - the 4 concurrent /requests/blocking: 3 lock waits on the global mutex,
#     named by its symbol quote_cache_lock, of about 150, 300 and 450 ms
#     (k x 150 ms, k = 1..3: at least k x 150 - 5 ms, under k x 150 + 100 ms),
#     each on a thread named conn-N, behind (holderOsThreadId) a thread that
#     was then in a 150 ms rec.Sleep with serve_blocking in its stack;
#   - the 4 /requests/blocking-fixed: each sleeps 150 ms in
#     serve_blocking_fixed, and no lock wait over 10 ms meanwhile;
#   - /requests/allocating: the rec.Alloc weights of the thread that served
#     it total 6,291,456 bytes, within the sampling error: with
#     --alloc-interval 4KiB the weights of a thread sum to exactly what it
#     allocated (the sampler's tail rule, rec/builtins.h), and besides its 768
#     x 8 KiB buffers that thread allocates a 6,144-byte array of pointers and
#     what libc needs: from 6,291,456 to 6,291,456 + 64 KiB;
#   - rec-record's report: the file, events and drops as rec-summary counts
#     them, the types listed with their counts, the commands to run next;
#   - the warm-up: one rec.Sleep of >= 400 ms that ends before the first
#     request is sent, and the weights of its thread's rec.Alloc samples
#     before that sleep: 256 x 16 KiB = 4,194,304 bytes within 64 KiB (the
#     bytes after its last sample before the sleep go to a later sample: at
#     a 4 KiB mean interval the 16 KiB blocks are each sampled with
#     probability 1 - e^-4, so the error is at most a few blocks).
# Times of the requests come from the test's clock around each burst (the
# plain build has no app.Request spans).  Needs the preload library.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
BIN=${REC_BIN:-}
[ -d "$BIN" ] || BIN=$BUILD/bin
export TZ=UTC

for t in rec-record requestwatch-plain rec-print rec-summary; do
	[ -x "$BIN/$t" ] || { echo "FAIL: $BIN/$t missing" >&2; exit 1; }
done
[ -r "$BUILD/lib/librec-preload.so" ] || { echo "FAIL: $BUILD/lib/librec-preload.so missing (the preload library)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 missing" >&2; exit 1; }
if [ "${SAN:-}" = 1 ]; then
	echo "skip: under SAN=1 (the ASan-built preload library in an ASan-built requestwatch-plain: the loader puts LD_PRELOAD before the program's ASan runtime)"
	exit 0
fi

work=$(mktemp -d /tmp/record-seed.XXXXXX)
server_pid=
cleanup() {
	if declare -F rw_kill >/dev/null; then rw_kill; fi
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$work/server.err" ] && sed 's/^/  server: /' "$work/server.err" >&2; exit 1; }

# shellcheck source=tests/cli/lib/requestwatch_scenario.sh
source tests/cli/lib/requestwatch_scenario.sh
rw_plain=1
rw_record_opts=(--alloc-interval 4KiB)

now() { date +%s%N; }
rec="$work/plain.rec"
rw_start "$rec"
t_first=$(now)
burst 4 /requests/blocking
t_fixed=$(now)
burst 4 /requests/blocking-fixed
t_fast=$(now)
burst 1 /requests/fast
t_alloc=$(now)
burst 1 /requests/allocating
t_end=$(now)
rw_stop

sort "$work/statuses" | uniq -c | sed 's/^/  responses: /'
[ "$(grep -c ' 200$' "$work/statuses")" -eq 10 ] || fail "expected 10 responses with 200"

timeout 60 "$BIN/rec-summary" --json "$rec" >"$work/summary.json" || fail "rec-summary --json failed"
timeout 60 "$BIN/rec-print" --json --stack-depth 16 "$rec" >"$work/events.json" || fail "rec-print --json failed"

python3 - "$work/events.json" "$work/summary.json" "$t_first" "$t_fixed" "$t_fast" "$t_alloc" "$t_end" "$work/server.err" "$rec" <<'EOF'
import calendar, json, re, sys, time

events = json.load(open(sys.argv[1]))["recording"]["events"]
summary = json.load(open(sys.argv[2]))
t_first, t_fixed, t_fast, t_alloc, t_end = (int(x) for x in sys.argv[3:8])
MS = 1_000_000
KIB = 1024
failures = []

def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)

def ns(iso):
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z", iso)
    t = calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")) * 10**9
    return t + int((m.group(2) or "0").ljust(9, "0"))

def by_type(name):
    out = []
    for e in events:
        if e["type"] == name:
            v = e["values"]
            start = ns(v["startTime"])
            th = v.get("eventThread") or {}
            frames = [f.get("function", "") for f in (v.get("stackTrace") or {}).get("frames", [])]
            out.append(dict(v, start=start, end=start + v.get("duration", 0), tid=th.get("tid"),
                            tname=th.get("name", ""), frames=frames))
    return out

types = {t["name"]: t["count"] for t in summary.get("types", [])}
print("     types:", types)
waits = by_type("rec.LockWait")
sleeps = by_type("rec.Sleep")
allocs = by_type("rec.Alloc")
check(bool(waits) and bool(sleeps) and bool(allocs),
      "the preload library recorded rec.LockWait (%d), rec.Sleep (%d) and rec.Alloc (%d) events"
      % (len(waits), len(sleeps), len(allocs)))

def in_window(e, lo, hi):
    return lo <= e["start"] and e["end"] <= hi

# --- the blocking requests: 3 waits of about 150, 300, 450 ms on quote_cache_lock
b_waits = [w for w in waits if in_window(w, t_first, t_fixed) and w["duration"] >= 100 * MS]
for w in b_waits:
    print("     wait %.1f ms on %r by %s (%s), holder %s" % (w["duration"] / MS, w.get("lockName"),
          w["tname"], w["tid"], w.get("holderOsThreadId")))
check(len(b_waits) == 3, "3 lock waits over 100 ms during the blocking requests: %d" % len(b_waits))
check(all(re.fullmatch(r"quote_cache_lock", w.get("lockName") or "") for w in b_waits),
      "every one on the lock named by its symbol quote_cache_lock: %s" % sorted({w.get("lockName") for w in b_waits}))
check(all(re.fullmatch(r"conn-\d+", w["tname"]) for w in b_waits),
      "every one on a thread named conn-N: %s" % [w["tname"] for w in b_waits])
ds = sorted(w["duration"] for w in b_waits)
# A wait starts when its request's thread reaches the lock: the four requests
# are sent together, but on a loaded machine a thread can get there some ms
# after the first one took the lock (a run at load average 8 had the third
# wait at 442.2 ms), so the lower bound allows 20 ms of that skew.
for k, d in enumerate(ds[:3], 1):
    check(k * 150 * MS - 20 * MS <= d < k * 150 * MS + 100 * MS,
          "wait %d is about %d ms: %.1f ms" % (k, k * 150, d / MS))
b_sleeps = [s for s in sleeps if in_window(s, t_first, t_fixed) and "serve_blocking" in s["frames"]]
check(len(b_sleeps) == 4 and all(s["duration"] >= 150 * MS for s in b_sleeps),
      "4 rec.Sleep of >= 150 ms with serve_blocking in the stack: %s"
      % [round(s["duration"] / MS, 1) for s in b_sleeps])
for w in b_waits:
    holder = [s for s in b_sleeps if s["tid"] == w.get("holderOsThreadId")
              and s["start"] - 2 * MS <= w["start"] <= s["end"]]
    check(len(holder) == 1 and holder[0]["tid"] != w["tid"],
          "the %.0f ms wait of %s is behind the thread that slept in serve_blocking then (tid %s)"
          % (w["duration"] / MS, w["tname"], w.get("holderOsThreadId")))

# --- the fixed requests: sleep outside the lock, no wait over 10 ms
f_waits = [w for w in waits if in_window(w, t_fixed, t_fast)]
worst = max((w["duration"] for w in f_waits), default=0)
check(worst <= 10 * MS, "no lock wait over 10 ms during the blocking-fixed requests: worst %.3f ms (%d events)"
      % (worst / MS, len(f_waits)))
f_sleeps = [s for s in sleeps if in_window(s, t_fixed, t_fast) and "serve_blocking_fixed" in s["frames"]]
check(len(f_sleeps) == 4 and all(s["duration"] >= 150 * MS for s in f_sleeps),
      "4 rec.Sleep of >= 150 ms in serve_blocking_fixed: %s" % [round(s["duration"] / MS, 1) for s in f_sleeps])

# --- the allocating request
a_tids = {a["tid"] for a in allocs if t_alloc <= a["start"] <= t_end and re.fullmatch(r"conn-\d+", a["tname"])}
check(len(a_tids) == 1, "one conn thread allocated during the allocating request: %s" % sorted(a_tids))
if len(a_tids) == 1:
    tid = a_tids.pop()
    mine = [a for a in allocs if a["tid"] == tid]
    total = sum(a["weight"] for a in mine)
    check(6291456 <= total <= 6291456 + 64 * KIB,
          "the rec.Alloc weights of its thread total 6,291,456 bytes (+ at most 64 KiB): %d in %d events"
          % (total, len(mine)))
    check(any("serve_allocating" in a["frames"] for a in mine),
          "its samples have serve_allocating in their stacks")

# --- the warm-up, before the first request
warm = [s for s in sleeps if s["duration"] >= 400 * MS and s["end"] <= t_first]
check(len(warm) == 1, "one rec.Sleep of >= 400 ms ends before the first request: %d" % len(warm))
if warm:
    w = warm[0]
    check("warm_up" in w["frames"], "it is in warm_up: %s" % w["frames"][:6])
    before = [a for a in allocs if a["tid"] == w["tid"] and a["start"] <= w["start"]]
    wbytes = sum(a["weight"] for a in before)
    check(abs(wbytes - 4194304) <= 64 * KIB,
          "the warm-up thread's rec.Alloc weights before its sleep: 4,194,304 bytes within 64 KiB: %d in %d events"
          % (wbytes, len(before)))
    check(any("warm_up" in a["frames"] for a in before), "its samples have warm_up in their stacks")

# --- one run, closed cleanly; nothing dropped but what rec.Dropped accounts for
runs = summary.get("runs", [])
check(len(runs) == 1 and runs[0].get("ended") == "clean close",
      "one run that ended with a clean close: %s" % [r.get("ended") for r in runs])
drops = sum(e["values"]["count"] for e in events if e["type"] == "rec.Dropped")
check(summary.get("dropped") == drops, "rec-summary's dropped (%s) = the rec.Dropped counts (%s)"
      % (summary.get("dropped"), drops))

# --- rec-record's report (on the server's stderr) says what rec-summary says
report = open(sys.argv[8]).read()
m = re.search(r"^rec-record: (\S+): .*, (\d+) events recorded, (\d+) dropped \(the program exited with status 0\)$",
              report, re.M)
check(bool(m) and m.group(1) == sys.argv[9] and int(m.group(2)) == summary["events"]
      and int(m.group(3)) == summary["dropped"],
      "rec-record's report names the file, %s events and %s dropped as rec-summary does (%d, %d)"
      % (m and m.group(2), m and m.group(3), summary["events"], summary["dropped"]))
m = re.search(r"^rec-record:   events: (.*)$", report, re.M)
listed = [] if not m else [(int(c), n) for c, n in re.findall(r"(\d+) (\S+?)(?:,|$)", m.group(1))]
want = [(t["count"], t["name"]) for t in summary["types"] if t["count"]][:8]  # rec-summary's order
check(listed == want, "its events line lists the types with rec-summary's counts, in its order: %s" % listed)
check("rec-view contention-by-lock " + sys.argv[9] in report, "it says what to run next")
sys.exit(1 if failures else 0)
EOF
