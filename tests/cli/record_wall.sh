#!/usr/bin/env bash
# "Latency bad, CPU calm" has a profile: requestwatch built without rec
# (requestwatch-plain) recorded by rec-record --wall 200 through the preload
# library, four concurrent /requests/blocking (each holds quote_cache_lock
# while it sleeps 150 ms):
#   - rec-view wall-by-site: the site serve_blocking holds the blocking
#     endpoint's time: its sleep state equals the rec.Sleep events of
#     serve_blocking (4 x ~150 ms) and its lock state the rec.LockWait events
#     there (~150 + 300 + 450 ms), each within 4 periods (20 ms) + 3 %;
#     at least 590 ms of sleep and 800 ms of lock wait;
#   - while the CPU samples with serve_blocking on their stack stand for at
#     most 20 ms of CPU time, and its running state for at most 10 ms;
#   - the main thread's pthread_join (a futex wait the preload does not
#     interpose) shows as state wait, for at least the time of the burst;
#   - rec-flame --wall's folded total is the samples' weight x period.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
BIN=${REC_BIN:-}
[ -d "$BIN" ] || BIN=$BUILD/bin
for t in rec-record requestwatch-plain rec-print rec-view rec-flame; do
	[ -x "$BIN/$t" ] || { echo "FAIL: $BIN/$t missing" >&2; exit 1; }
done
[ -r "$BUILD/lib/librec-preload.so" ] || { echo "FAIL: $BUILD/lib/librec-preload.so missing (the preload library)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 missing" >&2; exit 1; }
if [ "${SAN:-}" = 1 ]; then
	echo "skip: under SAN=1 (the ASan-built preload library in an ASan-built requestwatch-plain: the loader puts LD_PRELOAD before the program's ASan runtime)"
	exit 0
fi

work=$(mktemp -d /tmp/record-wall.XXXXXX)
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
rw_record_opts=(--wall 200)
now() { date +%s%N; }
rec="$work/wall.rec"
rw_start "$rec"
t0=$(now)
burst 4 /requests/blocking
t1=$(now)
rw_stop
[ "$(grep -c ' 200$' "$work/statuses")" -eq 4 ] || fail "expected 4 responses with 200: $(cat "$work/statuses")"

timeout 60 "$BIN/rec-print" --json "$rec" >"$work/events.json" || fail "rec-print --json failed"
timeout 60 "$BIN/rec-view" wall-by-site --json "$rec" >"$work/view.json" || fail "rec-view wall-by-site failed"
timeout 60 "$BIN/rec-view" wall-by-site "$rec" | sed 's/^/  /' | head -12
timeout 60 "$BIN/rec-flame" --wall "$rec" >"$work/wall.folded" || fail "rec-flame --wall failed"

python3 - "$work" "$(( (t1 - t0) / 1000000 ))" <<'PY' || fail "the wall profile of the blocking endpoint (above)"
import json, sys
work, burst_ms = sys.argv[1], int(sys.argv[2])
ev = json.load(open(work + "/events.json"))["recording"]["events"]
fns = lambda v: [f["function"] or "" for f in (v.get("stackTrace") or {}).get("frames", [])]
of = lambda t: [e["values"] for e in ev if e["type"] == t]
ms = lambda ns: ns / 1e6
bad = []
rows = {r["site"]: r for r in json.load(open(work + "/view.json"))["tables"][0]["rows"]}
sb = rows.get("serve_blocking")
if sb is None:
    print("  no serve_blocking row in wall-by-site: %s" % list(rows)); sys.exit(1)
sleeps = sum(v["duration"] for v in of("rec.Sleep") if "serve_blocking" in fns(v))
waits = sum(v["duration"] for v in of("rec.LockWait") if "serve_blocking" in fns(v))
for state, truth, floor in (("sleep", sleeps, 590), ("lock", waits, 800)):
    got, want = ms(sb[state]), ms(truth)
    tol = 20 + 0.03 * want
    print("  serve_blocking %-5s %7.1f ms of wall samples, %7.1f ms of %s events" %
          (state, got, want, "rec.Sleep" if state == "sleep" else "rec.LockWait"))
    if abs(got - want) > tol: bad.append("%s: %.1f ms, the events say %.1f (+- %.1f)" % (state, got, want, tol))
    if got < floor: bad.append("%s: %.1f ms, want at least %d" % (state, got, floor))
cpu = sum(v["period"] * (1 + v["overruns"]) for v in of("rec.CPUSample") if "serve_blocking" in fns(v))
print("  serve_blocking CPU   %7.1f ms of CPU samples, running %.1f ms of wall samples" % (ms(cpu), ms(sb["running"])))
if ms(cpu) > 20: bad.append("CPU samples in serve_blocking: %.1f ms, want at most 20" % ms(cpu))
if ms(sb["running"]) > 10: bad.append("running in serve_blocking: %.1f ms, want at most 10" % ms(sb["running"]))
ws = of("rec.WallSample")
wait = sum(v["weight"] * v["period"] for v in ws if v["state"] == "wait")
print("  state wait (the main thread's pthread_join): %.1f ms; the burst took %d ms" % (ms(wait), burst_ms))
if ms(wait) < burst_ms - 20: bad.append("wait state: %.1f ms, want at least the burst's %d ms" % (ms(wait), burst_ms))
total = sum(v["weight"] * v["period"] for v in ws)
flame = sum(int(l.rsplit(" ", 1)[1]) for l in open(work + "/wall.folded"))
if flame != total: bad.append("rec-flame --wall total %d, the samples' %d" % (flame, total))
for b in bad: print("  " + b)
sys.exit(1 if bad else 0)
PY
echo "record_wall: ok"
