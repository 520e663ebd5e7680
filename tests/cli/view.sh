#!/usr/bin/env bash
# rec-view on the demo scenario (tests/cli/lib/requestwatch_scenario.sh: the
# real requestwatch under REC_OUTPUT, 4 concurrent /requests/blocking, 4
# /requests/blocking-fixed, one /requests/fast, one /requests/allocating),
# every number checked by parsing rec-view --json with python3:
#   - contention-by-lock: quote-cache-lock, 3 waits of about 150, 300 and
#     450 ms (total >= 400 ms, max >= 400 ms), all behind one holder whose
#     site during the waits is serve_blocking and who slept >= 400 ms of them;
#     contention-by-site: the waiters' site serve_blocking;
#   - requests --by path: the blocking spans' lock waits sorted are ~150/300/
#     450 ms, the slowest blocking request >= 500 ms and names
#     quote-cache-lock; the fixed endpoint < 10 ms of lock wait, under 350 ms;
#   - allocation-by-span --by path: /requests/allocating exactly 6,291,456 bytes;
#   - startup: before app.Request, a sleep >= 400 ms at warm_up and exactly
#     4 MiB (256 x 16 KiB) allocated;
#   - latency --by path: 4 blocking, 4 fixed; sleeps-by-site; threads;
#     recording (1 run, clean close, no drops);
# --from/--to offsets and --thread on the tool's path (--to 1us and --from 1h
# keep nothing, --from 100ms keeps the 8 requests, --thread 'conn-*' leaves
# the warm-up out of startup), and the text layout (a centred title, a dashed rule under the header,
# --width honoured with "...", --top counted), --list, usage errors (exit 2)
# and a truncated file (exit 1 after printing what was readable).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
BIN=${REC_BIN:-}
[ -d "$BIN" ] || BIN=$BUILD/bin
export TZ=UTC
for t in requestwatch rec-view; do
	[ -x "$BIN/$t" ] || { echo "FAIL: $BIN/$t missing" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "FAIL: python3 missing" >&2; exit 1; }

work=$(mktemp -d /tmp/view-test.XXXXXX)
server_pid=
cleanup() {
	if declare -F rw_kill >/dev/null; then rw_kill; fi
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$work/server.err" ] && sed 's/^/  server: /' "$work/server.err" >&2; exit 1; }

# shellcheck source=tests/cli/lib/requestwatch_scenario.sh
source tests/cli/lib/requestwatch_scenario.sh

rec="$work/run.rec"
rw_start "$rec"
burst 4 /requests/blocking
burst 4 /requests/blocking-fixed
burst 1 /requests/fast
burst 1 /requests/allocating
rw_stop
[ "$(grep -c ' 200$' "$work/statuses")" -eq 10 ] || fail "expected 10 responses with 200"

v() { timeout 60 "$BIN/rec-view" "$@"; }
v --json contention-by-lock "$rec" >"$work/lock.json" || fail "contention-by-lock failed"
v --json contention-by-site "$rec" >"$work/site.json" || fail "contention-by-site failed"
v --json requests --by path "$rec" >"$work/requests.json" || fail "requests failed"
v --json allocation-by-span --by path "$rec" >"$work/alloc.json" || fail "allocation-by-span failed"
v --json allocation-by-site "$rec" >"$work/allocsite.json" || fail "allocation-by-site failed"
v --json startup "$rec" >"$work/startup.json" || fail "startup failed"
v --json latency --by path "$rec" >"$work/latency.json" || fail "latency failed"
v --json sleeps-by-site "$rec" >"$work/sleeps.json" || fail "sleeps-by-site failed"
v --json threads "$rec" >"$work/threads.json" || fail "threads failed"
v --json recording "$rec" >"$work/recording.json" || fail "recording failed"

python3 - "$work" <<'EOF'
import json, os, sys
d = sys.argv[1]
MS = 1_000_000
failures = []
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
def tables(name):
    doc = json.load(open(os.path.join(d, name + ".json")))
    assert doc["schema"] == 1
    return {t["name"]: t for t in doc["tables"]}

t = tables("lock")["contention_by_lock"]["rows"]
check(len(t) == 1 and t[0]["lock"] == "quote-cache-lock", "one contended lock, quote-cache-lock: %s" % [r["lock"] for r in t])
r = t[0]
# the three waits behind the holder that sleeps inside the lock; the fixed
# endpoint's short holds can add a few short waits on a slow host (ASan in
# the fresh-clone CI: 5 waits, 2 of them at serve_blocking_fixed)
s = tables("site")["contention_by_site"]["rows"]
blk = [x for x in s if x["site"] == "serve_blocking"]
extra = [x for x in s if x["site"] != "serve_blocking"]
check(r["waits"] >= 3 and r["waits"] == 3 + sum(x["waits"] for x in extra),
      "3 waits at serve_blocking, others only elsewhere: %d" % r["waits"])
check(r["total"] >= 800 * MS, "total wait >= 800 ms (150 + 300 + 450): %.1f ms" % (r["total"] / MS))
check(400 * MS <= r["max"] <= 600 * MS, "max wait about 450 ms: %.1f ms" % (r["max"] / MS))
check(r["holder_site"] == "serve_blocking", "the holder's site is serve_blocking: %s" % r["holder_site"])
check(r["holders"].startswith("conn-") and r["holders"].split(",")[0].endswith("(3)")
      and (r["holders"].count("(") == 1 or extra),
      "one holder, conn-N, for the 3 waits: %s" % r["holders"])
check(r["holder_sleeping"] >= 400 * MS, "the holder slept >= 400 ms of the waits: %.1f ms" % (r["holder_sleeping"] / MS))
check(r["holder_sleeping"] + r["holder_other"] + r["holder_running"] + r["holder_cond_wait"]
      + r["holder_io"] + r["holder_lock_wait"] == r["total"], "the holder's parts add up to the total")

check(len(blk) == 1 and blk[0]["waits"] == 3 and all(x["site"] == "serve_blocking_fixed" for x in extra),
      "contention-by-site: serve_blocking, 3 waits: %s" % [(x["site"], x["waits"]) for x in s])

rq = tables("requests")
rows = {x["by"]: x for x in rq["requests"]["rows"]}
check(rows["/requests/blocking"]["spans"] == 4 and rows["/requests/blocking-fixed"]["spans"] == 4,
      "4 blocking and 4 fixed spans")
check(rows["/requests/blocking-fixed"]["lock_wait"] < 10 * MS,
      "the fixed endpoint waits < 10 ms on locks (mean): %.3f ms" % (rows["/requests/blocking-fixed"]["lock_wait"] / MS))
check(rows["/requests/blocking"]["sleep"] >= 140 * MS, "a blocking request sleeps ~150 ms (mean): %.1f ms"
      % (rows["/requests/blocking"]["sleep"] / MS))
slow = rq["slowest"]["rows"]
check(len(slow) == 10, "the 10 slowest spans: %d" % len(slow))
check(slow[0]["by"] == "/requests/blocking" and slow[0]["wall"] >= 500 * MS and slow[0]["lock"] == "quote-cache-lock",
      "the slowest is a blocking request >= 500 ms waiting on quote-cache-lock: %s %.1f ms %s"
      % (slow[0]["by"], slow[0]["wall"] / MS, slow[0]["lock"]))
bw = sorted(x["lock_wait"] for x in slow if x["by"] == "/requests/blocking")
check(len(bw) == 4 and bw[0] < 10 * MS and 100 * MS <= bw[1] <= 230 * MS and 250 * MS <= bw[2] <= 380 * MS
      and 400 * MS <= bw[3] <= 560 * MS, "blocking spans wait 0 / ~150 / ~300 / ~450 ms: %s" % [round(x / MS) for x in bw])
fx = [x for x in slow if x["by"] == "/requests/blocking-fixed"]
check(len(fx) == 4 and all(x["wall"] < 350 * MS and x["lock_wait"] < 10 * MS for x in fx),
      "every fixed request < 350 ms with < 10 ms lock wait")
for x in slow:
    parts = x["cpu"] + x["lock_wait"] + x["cond_wait"] + x["sleep"] + x["io"] + x["unaccounted"]
    if parts != x["wall"]:
        check(False, "a span's parts add up to its wall time: %s" % x)
        break

al = {x["by"]: x for x in tables("alloc")["allocation_by_span"]["rows"]}
check(al["/requests/allocating"]["bytes"] == 6291456, "the allocating request: 6,291,456 bytes: %d" % al["/requests/allocating"]["bytes"])
check(al["/requests/fast"]["bytes"] == 0, "the fast request allocates nothing through rec: %d" % al["/requests/fast"]["bytes"])
asite = {x["site"]: x for x in tables("allocsite")["allocation_by_site"]["rows"]}
check(asite.get("warm_up", {}).get("bytes") == 4194304, "allocation-by-site: warm_up 4 MiB")

st = tables("startup")
row = st["startup"]["rows"][0]
check(row["before"] == "app.Request", "startup ends at the first app.Request: %s" % row["before"])
check(row["sleep"] >= 400 * MS and row["sleeps"] == 1, "one sleep >= 400 ms before it: %.1f ms" % (row["sleep"] / MS))
check(row["allocated"] == 4194304 and row["allocations"] == 256, "256 allocations, 4 MiB, before it: %d" % row["allocated"])
check(row["at"] >= 400 * MS, "the first request starts >= 400 ms in: %.1f ms" % (row["at"] / MS))
check(st["sleeps"]["rows"][0]["site"] == "warm_up", "the warm-up sleep's site is warm_up")

lat = {x["by"]: x for x in tables("latency")["latency"]["rows"]}
check(lat["/requests/blocking"]["count"] == 4 and lat["/requests/blocking"]["max"] >= 500 * MS,
      "latency: 4 blocking, max >= 500 ms")
check(lat["/requests/blocking-fixed"]["count"] == 4 and lat["/requests/blocking-fixed"]["max"] < 350 * MS,
      "latency: 4 fixed, max < 350 ms")
b = lat["/requests/blocking"]
check(b["p50"] <= b["p90"] <= b["p99"] <= b["p99_9"] <= b["max"], "percentiles ordered")

sl = {x["site"]: x for x in tables("sleeps")["sleeps_by_site"]["rows"]}
check(sl["serve_blocking"]["sleeps"] == 4 and sl["serve_blocking_fixed"]["sleeps"] == 4 and sl["warm_up"]["sleeps"] == 1,
      "sleeps: 4 at serve_blocking, 4 at serve_blocking_fixed, 1 at warm_up")

th = tables("threads")["threads"]["rows"]
check(sum(1 for x in th if x["thread"].startswith("conn-")) == 10, "threads: 10 conn-N threads")
check(sum(x["lock_wait"] for x in th) == r["total"], "threads' lock waits add up to the lock's total")

rc = tables("recording")
check(rc["recording"]["rows"][0]["runs"] == 1 and rc["runs"]["rows"][0]["ended"] == "clean close",
      "recording: one run, clean close")
check(rc["recording"]["rows"][0]["dropped"] == 0 and rc["drops"]["rows"] == [], "recording: no drops")

if failures:
    sys.exit("FAIL: %d check(s)" % len(failures))
EOF

# --from/--to (offsets from the first event) and --thread reach the views.
v --json --to 1us latency "$rec" >"$work/to.json" || fail "--to failed"
v --json --from 1h latency "$rec" >"$work/from.json" || fail "--from failed"
v --json --from 100ms --to 1h latency --by path "$rec" >"$work/window.json" || fail "--from/--to failed"
v --json --thread 'conn-*' startup "$rec" >"$work/thread.json" || fail "--thread failed"
python3 - "$work" <<'EOF'
import json, os, sys
d = sys.argv[1]
def rows(name, table):
    doc = json.load(open(os.path.join(d, name + ".json")))
    return {t["name"]: t for t in doc["tables"]}[table]["rows"]
assert rows("to", "latency") == [], rows("to", "latency")
assert rows("from", "latency") == [], rows("from", "latency")
w = {r["by"]: r["count"] for r in rows("window", "latency")}
assert w.get("/requests/blocking") == 4 and w.get("/requests/blocking-fixed") == 4, w
t = rows("thread", "startup")[0]
first = rows("startup", "startup")[0]["at"]
assert t["sleeps"] == 0 and t["allocations"] == 0 and t["at"] == first, t  # main's warm-up is not conn-*
print("ok   --to 1us and --from 1h keep nothing, --from 100ms keeps the 8 requests, --thread conn-* no warm-up")
EOF

# Text: a centred title, header, dashes; --width cuts with "..."; --top.
v sleeps-by-site "$rec" >"$work/sleeps.txt" || fail "sleeps-by-site text failed"
sed -n 2p "$work/sleeps.txt" | grep -q '^ *Sleeps by Site$' || fail "no centred title: $(sed -n 2p "$work/sleeps.txt")"
sed -n 4p "$work/sleeps.txt" | grep -q '^Site  *Sleeps  *Total  *Mean  *P99  *Max$' || fail "header: $(sed -n 4p "$work/sleeps.txt")"
sed -n 5p "$work/sleeps.txt" | grep -Eq '^-+( -+){5}$' || fail "rule: $(sed -n 5p "$work/sleeps.txt")"
grep -Eq '^serve_blocking +4 ' "$work/sleeps.txt" || fail "no serve_blocking row"
v --width 60 sleeps-by-site "$rec" >"$work/narrow.txt" || fail "--width 60 failed"
awk 'length($0) > 60 { bad = 1 } END { exit bad }' "$work/narrow.txt" || fail "--width 60: a line is longer"
grep -q '^serve_\.\.\. ' "$work/narrow.txt" || fail "--width 60: no cut site: $(cat "$work/narrow.txt")"
v --top 1 sleeps-by-site "$rec" >"$work/top.txt" || fail "--top failed"
grep -q '^(1 of 3 rows: --top)$' "$work/top.txt" || fail "--top 1: $(cat "$work/top.txt")"

# --list: every view, one a line.
[ "$(v --list | wc -l)" -ge 14 ] || fail "--list lists fewer than 14 views"
for name in latency requests contention-by-lock contention-by-site allocation-by-site allocation-by-span \
	live-heap hot-functions sleeps-by-site io-by-site startup threads recording wall-by-site; do
	v --list | grep -q "^$name " || fail "--list lacks $name"
done

# Usage errors: exit 2, named.
usage() {
	local want=$1
	shift
	local rc=0
	"$BIN/rec-view" "$@" >"$work/u.out" 2>"$work/u.err" || rc=$?
	[ "$rc" -eq 2 ] && grep -q -e "$want" "$work/u.err" && [ ! -s "$work/u.out" ] ||
		fail "rec-view $*: exit $rc, stderr $(cat "$work/u.err"), stdout $(head -c 200 "$work/u.out")"
}
usage "'nosuch' is not a view" nosuch "$rec"
usage "does not split by a field" --by path threads "$rec"
usage "no .* event has a field 'nosuch'" --by nosuch latency "$rec"
usage "no event type matches 'app.Nothing'; the input has: " --type app.Nothing requests "$rec"
usage "no event type matches 'app.Nothing'" --type app.Nothing requests - <"$rec"
usage "no input file" latency
usage "no view" 
usage "is not a duration" --from 1x latency "$rec"

# A truncated file: what was readable, then exit 1.
size=$(stat -c %s "$rec")
head -c $((size - 100)) "$rec" >"$work/cut.rec"
rc=0
"$BIN/rec-view" latency "$work/cut.rec" >"$work/cut.out" 2>"$work/cut.err" || rc=$?
[ "$rc" -eq 1 ] || fail "truncated file: exit $rc"
grep -q "rec-view: $work/cut.rec: chunk" "$work/cut.err" || fail "truncated file: $(cat "$work/cut.err")"
grep -q '^app.Request ' "$work/cut.out" || fail "truncated file: nothing printed"

echo "view: ok"
