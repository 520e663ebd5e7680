#!/usr/bin/env bash
# rec-sql on the demo scenario (tests/cli/lib/requestwatch_scenario.sh: the
# real requestwatch under REC_OUTPUT, 4 concurrent /requests/blocking, 4
# /requests/blocking-fixed, one /requests/fast, one /requests/allocating):
# its numbers equal the other tools' on the same file:
#   - rows per event table = rec-summary --json's count per type, and the
#     chunks and events of the chunks table = its chunks and events;
#   - per lock: waits, total and max of rec_LockWait = rec-view
#     contention-by-lock's waits, total and max (quote-cache-lock, 3 waits
#     of 100 ms and more);
#   - per path: count, total and max of app_Request = rec-view latency;
#   - per path: rec_Alloc weight of the span's own thread inside each
#     app.Request = rec-view allocation-by-span's bytes (6 MiB for
#     /requests/allocating);
#   - the time filter: the requests with start_ns in the window of the first
#     and last request = all 10, with fewer chunks decoded than a full scan
#     of the file when the window leaves chunks out (start-up, shutdown).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
BIN=${REC_BIN:-}
[ -d "$BIN" ] || BIN=$BUILD/bin
export TZ=UTC
for t in requestwatch rec-sql rec-view rec-summary; do
	[ -x "$BIN/$t" ] || { echo "FAIL: $BIN/$t missing" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "FAIL: python3 missing" >&2; exit 1; }

work=$(mktemp -d /tmp/sql-demo-test.XXXXXX)
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

timeout 60 "$BIN/rec-summary" --json "$rec" >"$work/summary.json" || fail "rec-summary failed"
view() { timeout 60 "$BIN/rec-view" --json "$@" "$rec"; }
view contention-by-lock >"$work/contention-by-lock.json" || fail "rec-view contention-by-lock failed"
view latency --by path >"$work/latency.json" || fail "rec-view latency failed"
view allocation-by-span --by path >"$work/allocation-by-span.json" || fail "rec-view allocation-by-span failed"

python3 - "$work" "$BIN/rec-sql" "$rec" <<'EOF' || fail "rec-sql and the other tools differ"
import json, os, subprocess, sys
d, sql_bin, rec = sys.argv[1:4]
failures = []
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
def sql(q, stats=False):
    p = subprocess.run([sql_bin, "--format", "jsonl"] + (["--stats"] if stats else []) + [rec, q],
                       check=True, capture_output=True, text=True, timeout=60)
    rows = [json.loads(l) for l in p.stdout.splitlines()]
    return (rows, p.stderr) if stats else rows
def rows(view, table):
    doc = json.load(open(os.path.join(d, view + ".json")))
    return {t["name"]: t for t in doc["tables"]}[table]["rows"]

s = json.load(open(os.path.join(d, "summary.json")))
tables = {r["type_name"]: r["table_name"] for r in sql("SELECT type_name, table_name FROM types")}
for t in s["types"]:
    n = sql('SELECT count(*) AS n FROM "%s"' % tables[t["name"]])[0]["n"]
    check(n == t["count"], "%s: %d rows, rec-summary %d" % (t["name"], n, t["count"]))
c = sql("SELECT count(*) AS n, sum(events) AS e FROM chunks")[0]
check((c["n"], c["e"]) == (s["chunks"], s["events"]), "chunks %s = rec-summary %d chunks, %d events" % (c, s["chunks"], s["events"]))

got = sql("SELECT lockName AS lock, count(*) AS waits, sum(duration_ns) AS total, max(duration_ns) AS max "
          "FROM rec_LockWait GROUP BY lockName ORDER BY total DESC")
want = [{k: r[k] for k in ("lock", "waits", "total", "max")} for r in rows("contention-by-lock", "contention_by_lock")]
# the three waits behind the holder that sleeps 150 ms inside the lock; the
# fixed endpoint's short holds can add waits of a few ms on a slow host
# (ASan in the fresh-clone CI: 5 waits, 905 ms, the two extra 5 ms together)
long_waits = sql("SELECT count(*) AS n FROM rec_LockWait WHERE lockName = 'quote-cache-lock' "
                 "AND duration_ns >= 100000000")[0]["n"]
check(got == want and want and want[0]["lock"] == "quote-cache-lock" and want[0]["waits"] >= 3
      and long_waits == 3,
      "contention-by-lock: %s = %s; waits of 100 ms and more: %d (3)" % (got, want, long_waits))

got = sql("SELECT path AS by, count(*) AS count, sum(duration_ns) AS total, max(duration_ns) AS max "
          "FROM app_Request GROUP BY path ORDER BY total DESC")
want = [{k: r[k] for k in ("by", "count", "total", "max")} for r in rows("latency", "latency")]
check(got == want and sum(r["count"] for r in want) == 10, "latency --by path: %s = %s" % (got, want))

got = sql("SELECT r.path AS by, count(DISTINCT r.rowid) AS spans, coalesce(sum(a.weight), 0) AS bytes "
          "FROM app_Request r LEFT JOIN rec_Alloc a ON a.thread_id = r.thread_id AND a.run_id = r.run_id "
          "AND a.start_ns >= r.start_ns AND a.start_ns < r.start_ns + r.duration_ns "
          "GROUP BY r.path ORDER BY bytes DESC, r.path")
want = [{k: r[k] for k in ("by", "spans", "bytes")} for r in rows("allocation-by-span", "allocation_by_span")]
check(got == want and want[0]["by"] == "/requests/allocating" and want[0]["bytes"] == 6291456,
      "allocation-by-span --by path: %s = %s" % (got, want))

w = sql("SELECT min(start_ns) AS lo, max(start_ns) AS hi FROM app_Request")[0]
n, err = sql("SELECT count(*) AS n FROM app_Request WHERE start_ns BETWEEN %d AND %d" % (w["lo"], w["hi"]), stats=True)
full, err_full = sql("SELECT count(*) AS n FROM app_Request WHERE start_ns + 0 BETWEEN %d AND %d" % (w["lo"], w["hi"]), stats=True)
check(n == full == [{"n": 10}], "the window of the requests holds the 10 requests: %s %s" % (n, full))
dec = int(err.split("chunks: ")[1].split(" decoded")[0])
dec_full = int(err_full.split("chunks: ")[1].split(" decoded")[0])
check(dec <= dec_full, "the window decodes no more chunks than a full scan: %s / %s" % (err.strip(), err_full.strip()))
sys.exit(1 if failures else 0)
EOF
echo "sql_demo: ok"
