#!/usr/bin/env bash
# rec-view --sql (issue 21, "the views as SQL"): the SQL text rec-view prints
# for a view (spec/views/) gives, in rec-sql (SQLite over the .rec) and in
# DuckDB over `rec-export --format parquet` (each table a view over
# read_parquet('DS/type=TYPE/**/*.parquet', hive_partitioning = true), as
# spec/SCHEMA.md says; rec-sql reads it on standard input), exactly the numbers of rec-view --json's same
# columns, row by row in rec-view's order, for:
#   - the generated recording (tests/helpers/rec_test_sql_gen, 8 chunks,
#     with its built-in events): latency --type app.Request (alone, --by
#     path, --by status: an integer field), latency --type app.Wait --by
#     lockName, allocation-by-site, contention-by-lock, contention-by-site,
#     sleeps-by-site, hot-functions (sites: a function, a rec_ frame
#     skipped, a frame without a function, a stack of rec_ frames only, no
#     stack; an unnamed lock; a function with ';', one twice on a stack);
#     the counts sum to the generator's truth (800 requests, 80 waits, 48
#     allocations whose bytes are the weights, not the sizes: the SQL
#     summing size gives the sizes' sum, 48 lock waits, 32 sleeps, 48 CPU
#     samples and their CPU time, 140 events lost); recording's three
#     tables (recording, recording.runs, recording.drops: a type not known,
#     a reason without a name); the percent columns
#     (allocation-by-site, live-heap, hot-functions: within 1e-9), p99 and
#     holders of contention-by-lock/-site (p99 also equal to the true
#     nearest-rank value per lock), the holder's activity columns (exact in
#     rec-sql, within 2 us per wait in DuckDB: the demo's holder sleeps
#     while it holds the lock; the generator's holders are a named thread,
#     one rec-view has not seen yet at the first wait, a tid no event
#     names, and none) and
#     sleeps-by-site's p99;
#   - inline frames (the generator's frame 1 has two): rows of frames with
#     their inline_depth, file, line, the same in rec-sql, rec-sql --export's
#     SQLite file (read with python's sqlite3) and DuckDB over the Parquet
#     export; stacks joined with frames give the reader's full stack; the
#     sites stay the real frames and hot-functions counts the inlined
#     functions, as rec-view;
#   - the demo scenario (the real requestwatch, as tests/cli/sql_demo.sh):
#     contention-by-lock (quote-cache-lock, 3 waits), latency --type
#     app.Request --by path (10 requests), latency --type rec.LockWait,
#     allocation-by-site (its SQL joins rec_Alloc, stacks and frames),
#     contention-by-site, sleeps-by-site (the demo records no CPU samples);
#   - a view's other tables (VIEW.TABLE): requests.slowest (the --top
#     slowest spans, 10 without it; at a tie at the last row's wall time
#     their starts are not compared;
#     start within 1 us in DuckDB), startup.sleeps ... startup.cond_waits
#     (the demo has sleeps and allocations before its first request; the
#     tables rec-view leaves out must give no rows);
#   - the generated recording with "extra" (rec_test_sql_gen's header):
#     startup (at 900 ms) and its cpu, lock_waits and cond_waits tables with
#     rows, the holder activity columns of contention-by-lock/-site non-zero
#     in every kind (sleeping, cond wait, I/O, lock wait, running) and equal
#     to the generator's truth, recording's tables with two runs (a restart),
#     a crash and a write failure, io-by-site (a file read and two
#     socket calls of equal length per chunk: calls, bytes and total equal
#     the generator's, the longest's peer the earlier one's), wall-by-site (every state; its SQL
#     on the recording without wall samples gives no rows); a truncated copy of the generated file
#     whose run ended 'truncated' in rec-view, rec-sql and the Parquet runs;
#   - --top N: requests.slowest keeps N spans (25, 12, 4, 3 with --by),
#     another view (hot-functions --top 3) ends with LIMIT N;
#   - the comparison itself fails on one number changed by one, on a p99
#     or percentile off by more than 1/256 and on a percent off by 1e-6;
#   - views without SQL exit 2 saying why; latency without --type exits 2.
#   - a copy with a damaged chunk and a truncated tail: chunks_damaged (2)
#     and chunks (7) equal in rec-view and rec-sql, and the Parquet runs'
#     damaged_chunks sum to 2;
# DuckDB: lib/duckdb.sh (REC_SKIP_DUCKDB=1 skips the test without it).
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
need_exe "$bin/rec-view" "$bin/rec-sql" "$bin/rec-export" "$bin/requestwatch" "$tests/rec_test_sql_gen"
command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }
export TZ=UTC
duck_test=view_sql
# shellcheck source=tests/cli/lib/duckdb.sh
source "$(dirname "$0")/lib/duckdb.sh"

# ---- usage: views without SQL say why ------------------------------------------
"$bin/rec-view" --sql startup --type app.Request >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "its SQL takes no --type" "$tmp/err" ||
	fail "--sql startup --type: exit $rc: $(cat "$tmp/err")"
for v in requests allocation-by-span; do
	"$bin/rec-view" --sql $v >/dev/null 2>"$tmp/err"; rc=$?
	[ $rc = 2 ] && grep -q "give --type TYPE" "$tmp/err" || fail "--sql $v: exit $rc: $(cat "$tmp/err")"
done
# every view of --list has SQL
for v in $("$bin/rec-view" --list | cut -d' ' -f1); do
	"$bin/rec-view" --sql "$v" --type app.Request >/dev/null 2>&1 || "$bin/rec-view" --sql "$v" >/dev/null 2>&1 ||
		fail "rec-view --sql $v: no SQL"
done
"$bin/rec-view" --sql latency >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "give --type TYPE" "$tmp/err" || fail "--sql latency: exit $rc: $(cat "$tmp/err")"
"$bin/rec-view" --sql contention-by-lock --by x >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] || fail "--sql contention-by-lock --by x: exit $rc"

# check REC DS CASE... : each CASE is "VIEW[ OPTION...]" (the --type/--by of
# both rec-view --json and rec-view --sql); TRUTH is python: {case: {column:
# the sum of rec-view's column}}.
check() {
	local rec=$1 ds=$2 truth=$3
	shift 3
	python3 - "$rec" "$ds" "$truth" "$bin" "$@" <<'PY'
import json, os, re, subprocess, sys
rec, ds, truth, bindir = sys.argv[1:5]
cases = sys.argv[5:]
truth = eval(truth)
failures = []
def run(*a, stdin=None):
    return subprocess.run(list(a), check=True, stdout=subprocess.PIPE, text=True, timeout=120,
                          input=stdin).stdout
def num(v):
    # DuckDB prints 64-bit and larger integers as strings, a DOUBLE as a number
    if isinstance(v, str) and v.lstrip("-").isdigit():
        return int(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v
TEXT = ("by", "lock", "type", "site", "function", "reason", "thread", "stack", "kind", "before",
        "holders", "holder", "holder_site", "run_id", "ended")
# times DuckDB reads as microseconds: startup's at, recording.runs' start
# and duration within 1 us there (each end rounded down), else exact
DUCK_US = ("at", "start", "duration")
# rec-view's percentiles come from its histogram, within 1/256 of the true
# (nearest-rank) value the SQL gives: compared within that, the rest exactly
PCT = ("p50", "p90", "p99", "p99_9")
# contention's holder columns: exact in rec-sql; in DuckDB within 2 us per
# wait (its times are microseconds: the overlaps of the holder's events)
HOLDER_NS = ("holder_sleeping", "holder_cond_wait", "holder_io", "holder_lock_wait", "holder_other")
# percent columns: 100 x a / b in doubles, as rec-view computes them; equal
# within 1e-9 (relative: what JSON printing may round), else exactly
PERCENT = ("percent", "self_percent", "total_percent")
def norm(rows, keys):
    return [tuple(str(r[k]) if k in TEXT else num(r[k]) for k in keys) for r in rows]
# requests.slowest: start is ns from the first event; DuckDB's times are
# microseconds (within 1 us there); at a tie at the last row's wall time
# rec-view shows the spans its stream settled first, the SQL the earliest:
# their starts are not compared (spec/views/requests.slowest.sql)
def same(want, got, keys, duck=False, top=10):
    if len(want) != len(got):
        return False
    tie = want[-1][keys.index("wall")] if want and "wall" in keys and "start" in keys else None
    for w, g in zip(want, got):
        for k, a, b in zip(keys, w, g):
            if k == "start" and tie is not None:
                if w[keys.index("wall")] == tie and len(want) == top:
                    continue
                if abs(a - b) >= (1000 if duck else 1):
                    return False
            elif duck and k in DUCK_US and (a is None or b is None):
                if a != b:
                    return False
            elif duck and k in DUCK_US:
                if abs(a - b) >= 1000:
                    return False
            elif duck and k in HOLDER_NS:
                # the holder's overlaps from DuckDB's microsecond times:
                # within 2 us per wait (each end cut to the microsecond)
                if abs(a - b) > 2000 * w[keys.index("waits")]:
                    return False
            elif k in PCT:
                if not isinstance(b, int) or abs(a - b) * 256 > b:
                    return False
            elif k in PERCENT:
                if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or \
                        abs(a - b) > 1e-9 * max(abs(a), abs(b)):
                    return False
            elif a != b:
                return False
    return True
BOOL = ("sampled", "timed", "timedOut", "truncated", "final", "clean_close")
def duck_type(col, sqltype):
    if col == "start_ns" or col.endswith("_event_ns"):
        return "TIMESTAMPTZ"
    if col in BOOL:
        return "BOOLEAN"
    return {"INTEGER": "BIGINT", "TEXT": "VARCHAR", "REAL": "DOUBLE", "BLOB": "BLOB"}.get(sqltype, "VARCHAR")
for case in cases:
    args = case.split()
    view, opts = args[0], args[1:]
    top = int(opts[opts.index("--top") + 1]) if "--top" in opts else 10
    q = run(os.path.join(bindir, "rec-view"), "--sql", view, *opts)
    # VIEW.TABLE: that table of rec-view's VIEW (requests.slowest)
    view, _, tname = view.partition(".")
    doc = json.loads(run(os.path.join(bindir, "rec-view"), "--json", *opts, view, rec))
    absent = False
    if tname:
        doc["tables"] = [t for t in doc["tables"] if t["name"] == tname]
        # rec-view leaves out a table without rows (startup's per kind):
        # the SQL must give none, in both engines
        if not doc["tables"]:
            absent = True
            doc["tables"] = [{"name": tname, "columns": [{"key": "site"}], "rows": []}]
    sqlite = [json.loads(l) for l in run(os.path.join(bindir, "rec-sql"), "--format", "jsonl", rec, stdin=q).splitlines()]
    # the view's table with the SQL's columns (recording's SQL is its third)
    table = next((t for t in doc["tables"] if sqlite and
                  all(k in [c["key"] for c in t["columns"]] for k in sqlite[0])), doc["tables"][0])
    cols = [c["key"] for c in table["columns"]]
    keys = list(sqlite[0].keys()) if sqlite else cols
    missing = [k for k in keys if k not in cols]
    if missing:
        failures.append("%s: SQL columns %s not in rec-view's %s" % (case, missing, cols))
        continue
    # every table the SQL names, as DuckDB sees the Parquet export
    tables = {r["table_name"]: r["type_name"] for r in
              map(json.loads, run(os.path.join(bindir, "rec-sql"), "--format", "jsonl", rec,
                                  "SELECT type_name, table_name FROM types").splitlines())}
    tables.update({t: t for t in ("stacks", "frames", "threads", "runs", "chunks", "drops")})
    views = ["CREATE VIEW \"%s\" AS SELECT * FROM read_parquet('%s/type=%s/**/*.parquet', hive_partitioning = true)"
             % (t, ds, ty) for t, ty in tables.items()
             if re.search(r"\b%s\b" % t, q) and os.path.isdir("%s/type=%s" % (ds, ty))]
    # a table the SQL names without files (no events of the type: rec-sql
    # has it empty): an empty table of rec-sql's columns (spec/SCHEMA.md)
    for t in sorted(set(re.findall(r"\b(rec_[A-Za-z]+)\b", q))):
        if t in tables and os.path.isdir("%s/type=%s" % (ds, tables[t])):
            continue
        cols = [json.loads(l) for l in run(os.path.join(bindir, "rec-sql"), "--format", "jsonl", rec,
                "SELECT name, type FROM pragma_table_info('%s')" % t).splitlines()]
        views.append("CREATE TABLE \"%s\" (%s)" % (t, ", ".join('"%s" %s' % (c["name"], duck_type(c["name"], c["type"])) for c in cols)))
    if re.search(r"\ball_events\b", q):
        views.append("CREATE VIEW all_events AS SELECT recording_id, run_id, chunk_seq, start_ns, duration_ns, "
                     "thread_id, thread_name, stack_id, type FROM read_parquet('%s/type=*/**/*.parquet', "
                     "union_by_name = true, hive_partitioning = true) WHERE type NOT IN "
                     "('stacks', 'frames', 'threads', 'runs', 'chunks', 'drops')" % ds)
    out = run("node", os.environ["DUCKDB_QUERY"], *views, q).splitlines()
    duck = json.loads(out[-1])
    want = norm(table["rows"], keys)
    got_sqlite, got_duck = norm(sqlite, keys), norm(duck, keys)
    ok = (bool(want) or absent) and same(want, got_sqlite, keys, top=top) and \
        same(want, got_duck, keys, duck=True, top=top)
    print(("ok   " if ok else "FAIL ") + "%s: %s: %d rows %s%s" % (case, keys, len(want), want[:4],
          " (no such table in rec-view)" if absent else ""))
    if not ok:
        failures.append("%s:\n  rec-view %s\n  rec-sql  %s\n  duckdb   %s" % (case, want, got_sqlite, got_duck))
    # the percentiles the SQL gives are the true nearest-rank values of
    # the durations (rank ceil(p x n), computed here from rec-sql's rows),
    # and a percentile off by more than 1/256 fails the comparison
    if "p50" in keys:
        ty = opts[opts.index("--type") + 1]
        by = opts[opts.index("--by") + 1] if "--by" in opts else None
        col = "\"%s\"" % re.sub(r"[^A-Za-z0-9_]", "_", by) if by else "''"
        groups = {}
        for l in run(os.path.join(bindir, "rec-sql"), "--format", "jsonl", rec,
                     "SELECT %s AS v, duration_ns AS d FROM \"%s\" WHERE duration_ns IS NOT NULL%s"
                     % (col, re.sub(r"[^A-Za-z0-9_]", "_", ty), " AND %s IS NOT NULL" % col if by else "")).splitlines():
            r = json.loads(l)
            groups.setdefault(str(r["v"]), []).append(max(r["d"], 0))
        for row in sqlite:
            ds_ = sorted(groups[str(row["by"]) if by else ""])
            for k, p in (("p50", 50), ("p90", 90), ("p99", 99), ("p99_9", 99.9)):
                rank = max(1, -(-len(ds_) * int(p * 10) // 1000))
                if num(row[k]) != ds_[rank - 1]:
                    failures.append("%s: %s %s is %s, the true value %d" % (case, row.get("by", ""), k, row[k], ds_[rank - 1]))
        j = keys.index("p50")
        bad = [list(r) for r in got_sqlite]
        bad[0][j] += bad[0][j] // 128 + 2
        if same(want, [tuple(r) for r in bad], keys):
            failures.append("%s: the comparison missed a p50 off by more than 1/256" % case)
    # contention-by-lock's p99 is the true nearest-rank value of each lock's
    # waits (from rec-sql's rows of rec_LockWait)
    if view == "contention-by-lock":
        groups = {}
        for l in run(os.path.join(bindir, "rec-sql"), "--format", "jsonl", rec,
                     "SELECT lockName AS n, lockAddress AS a, duration_ns AS d FROM rec_LockWait").splitlines():
            r = json.loads(l)
            groups.setdefault(r["n"] if r["n"] is not None else "0x%x" % r["a"], []).append(r["d"])
        for row in sqlite:
            ds_ = sorted(groups[row["lock"]])
            if num(row["p99"]) != ds_[max(1, -(-len(ds_) * 99 // 100)) - 1]:
                failures.append("%s: %s p99 is %s, the true value %d" % (case, row["lock"], row["p99"],
                                ds_[max(1, -(-len(ds_) * 99 // 100)) - 1]))
    # a p99 (site and lock views) or a percent off by more than the
    # tolerance fails the comparison
    for k in ("p99", "percent", "self_percent", "total_percent", "holder_sleeping"):
        if k in keys and "p50" not in keys and want:
            j = keys.index(k)
            bad = [list(r) for r in got_sqlite]
            bad[0][j] += (bad[0][j] // 128 + 2 if k == "p99" else 1 if k == "holder_sleeping"
                          else max(abs(bad[0][j]) * 1e-6, 1e-6))
            if same(want, [tuple(r) for r in bad], keys):
                failures.append("%s: the comparison missed a %s off by more than its tolerance" % (case, k))
    for col, t in truth.get(case, {}).items():
        n = sum(num(r[col]) for r in table["rows"])
        if n != t:
            failures.append("%s: %s sums to %d, the truth is %d" % (case, col, n, t))
    # the comparison sees one number off by one
    if want:
        i = next(i for i, k in enumerate(keys) if k not in TEXT and k != "start")
        bad = [list(r) for r in got_sqlite]
        bad[-1][i] += 1
        if same(want, [tuple(r) for r in bad], keys, top=top):
            failures.append("%s: the comparison missed a changed number" % case)
for f in failures:
    print("FAIL " + f)
sys.exit(1 if failures else 0)
PY
}

# ---- the generated recording ------------------------------------------------------
gen=$tmp/gen.rec
"$tests/rec_test_sql_gen" "$gen" 8 builtins >"$tmp/truth" || fail "rec_test_sql_gen: exit $?"
# shellcheck disable=SC1090 # NAME=VALUE lines
. "$tmp/truth"
timeout 120 "$bin/rec-export" --format parquet -o "$tmp/gen_ds" "$gen" >/dev/null || fail "rec-export gen: exit $?"
# shellcheck disable=SC2154 # requests ... cpu_ns: set by . "$tmp/truth"
check "$gen" "$tmp/gen_ds" "{'latency --type app.Request': {'count': $requests},
	'latency --type app.Request --by path': {'count': $requests}, 'latency --type app.Wait --by lockName': {'count': $waits},
	'allocation-by-site': {'allocations': $allocs, 'bytes': $alloc_weight}, 'contention-by-lock': {'waits': $lockwaits},
	'contention-by-site': {'waits': $lockwaits}, 'sleeps-by-site': {'sleeps': $sleeps},
	'hot-functions': {'self_samples': $cpu_samples, 'self_cpu': $cpu_ns}, 'recording.drops': {'lost': $dropped},
	'recording': {'runs': 1, 'restarts': 0, 'crashes': 0, 'dropped': $dropped}, 'recording.runs': {'dropped': $dropped},
	'threads': {'cpu': $cpu_ns, 'allocated': $alloc_weight, 'lock_wait': 8 * 2000 * 21 + 6 * 28},
	'requests --type app.Request': {'spans': $requests}, 'requests --type app.Request --by path': {'spans': $requests},
	'allocation-by-span --type app.Request --by path': {'spans': $requests}}" \
	"latency --type app.Request" "latency --type app.Request --by path" \
	"latency --type app.Request --by status" "latency --type app.Wait --by lockName" \
	"latency --type rec.Sleep" \
	"allocation-by-site" "contention-by-lock" "contention-by-site" "sleeps-by-site" "hot-functions" \
	"recording" "recording.runs" "recording.drops" "threads" "live-heap" "startup" "requests --type app.Request" \
	"requests --type app.Request --by path" "allocation-by-span --type app.Request --by path" \
	"requests.slowest --type app.Request" "requests.slowest --type app.Request --by path" \
	"requests.slowest --type app.Request --top 25" "requests.slowest --type app.Request --by path --top 3" \
	"hot-functions --top 3" \
	"startup.sleeps" "startup.allocations" "startup.cpu" "startup.lock_waits" "startup.cond_waits" ||
	fail "generated recording: rec-view, rec-sql and DuckDB differ"

# ---- --top N: requests.slowest's N slowest spans, LIMIT N elsewhere ----------------
"$bin/rec-view" --sql requests.slowest --type app.Request --top 25 | grep -q 'rk <= 25$' ||
	fail "--sql requests.slowest --top 25 does not keep 25 spans"
"$bin/rec-view" --sql requests.slowest --type app.Request | grep -q 'rk <= 10$' ||
	fail "--sql requests.slowest without --top does not keep rec-view's default 10"
"$bin/rec-view" --sql hot-functions --top 3 | tail -n 1 | grep -qx 'LIMIT 3' ||
	fail "--sql hot-functions --top 3 has no LIMIT 3"

# ---- the generated recording with "extra" (rec_test_sql_gen's header): CPU
# samples, lock waits and cond waits before the first request (startup's
# per-kind tables with rows, at 900 ms), lock holders that sleep, block in
# I/O, wait for another lock or a condition and run while others wait, a
# crash, a restart (a second run in the file) and a write failure
xgen=$tmp/xgen.rec
"$tests/rec_test_sql_gen" "$xgen" 8 extra >"$tmp/xtruth" || fail "rec_test_sql_gen extra: exit $?"
# shellcheck disable=SC1090 # NAME=VALUE lines
. "$tmp/xtruth"
timeout 120 "$bin/rec-export" --format parquet -o "$tmp/xgen_ds" "$xgen" >/dev/null || fail "rec-export xgen: exit $?"
# shellcheck disable=SC2154 # startup_cpu_ns ... holder_cond_wait: set by . "$tmp/xtruth"
check "$xgen" "$tmp/xgen_ds" "{'startup': {'at': $startup_at_ns, 'cpu': $startup_cpu_ns, 'lock_waits': $startup_lock_waits,
	'lock_wait': $startup_lock_wait_ns, 'cond_wait': $startup_cond_wait_ns},
	'startup.cpu': {'total': $startup_cpu_ns}, 'startup.lock_waits': {'count': $startup_lock_waits, 'total': $startup_lock_wait_ns},
	'startup.cond_waits': {'total': $startup_cond_wait_ns},
	'contention-by-lock': {'holder_sleeping': $holder_sleeping, 'holder_io': $holder_io, 'holder_running': $holder_running,
		'holder_lock_wait': $holder_lock_wait, 'holder_cond_wait': $holder_cond_wait},
	'contention-by-site': {'holder_sleeping': $holder_sleeping, 'holder_io': $holder_io, 'holder_running': $holder_running,
		'holder_lock_wait': $holder_lock_wait, 'holder_cond_wait': $holder_cond_wait},
	'recording': {'files': 1, 'runs': 2, 'restarts': 1, 'crashes': 1, 'write_failures': 1, 'chunks_not_written': 3},
	'recording.runs': {'chunks': 10}, 'recording.drops': {'lost': $dropped},
	'wall-by-site': {'samples': $wall_samples, 'wall': $wall_ns},
	'io-by-site': {'calls': $io_calls, 'bytes': $io_bytes, 'total': $io_ns}}" \
	"wall-by-site" "io-by-site" "startup" "startup.sleeps" "startup.allocations" "startup.cpu" "startup.lock_waits" "startup.cond_waits" \
	"contention-by-lock" "contention-by-site" "recording" "recording.runs" "recording.drops" \
	"recording.runs --top 1" "recording.drops --top 1" \
	"threads" "hot-functions" "requests --type app.Request" "requests.slowest --type app.Request --top 12" ||
	fail "generated recording (extra): rec-view, rec-sql and DuckDB differ"
"$bin/rec-view" --sql recording.runs | "$bin/rec-sql" --format csv "$xgen" | tr -d '\r' | cut -d, -f8 | tr '\n' ' ' |
	grep -qx 'ended crash event clean close ' || fail "xgen: the runs did not end as generated"

# wall-by-site's SQL on a recording without rec.WallSample (rec-sql's empty
# table): no rows (rec-sql's CSV prints no header without rows), as
# rec-view has none
"$bin/rec-view" --sql wall-by-site | "$bin/rec-sql" --format csv "$gen" >"$tmp/nowall.csv" ||
	fail "wall-by-site's SQL without wall samples: exit $?"
[ ! -s "$tmp/nowall.csv" ] || fail "wall-by-site's SQL without wall samples: $(cat "$tmp/nowall.csv")"

# ---- a run whose file ends inside its last chunk: ended 'truncated' in
# rec-view and in rec-sql (which reports the chunk and exits 1), and the
# runs table's truncated column says so in the Parquet export too
sz=$(stat -c %s "$gen")
head -c $((sz - 10)) "$gen" >"$tmp/trunc.rec"
"$bin/rec-view" --sql recording.runs | "$bin/rec-sql" --format csv "$tmp/trunc.rec" >"$tmp/trunc.csv" 2>"$tmp/trunc.err"
rc=$?
[ $rc = 1 ] && grep -q truncated "$tmp/trunc.err" || fail "rec-sql on a truncated file: exit $rc: $(cat "$tmp/trunc.err")"
# (rec-view reports the damaged chunk too and exits 1)
"$bin/rec-view" --json recording "$tmp/trunc.rec" >"$tmp/trunc.json" 2>/dev/null
grep -q '"ended": "truncated"' "$tmp/trunc.json" || fail "rec-view recording: the truncated run did not end truncated"
[ "$(tail -n +2 "$tmp/trunc.csv" | tr -d '\r' | cut -d, -f8)" = truncated ] || fail "recording.runs: $(cat "$tmp/trunc.csv")"
timeout 120 "$bin/rec-export" --format parquet -o "$tmp/trunc_ds" "$tmp/trunc.rec" >/dev/null 2>&1
out=$(node "$DUCKDB_QUERY" "SELECT truncated, clean_close FROM read_parquet('$tmp/trunc_ds/type=runs/**/*.parquet')" | tail -n 1)
[ "$out" = '[{"truncated":true,"clean_close":false}]' ] || fail "Parquet runs of the truncated file: $out"

# ---- damaged chunks: the truncated copy with one byte of its 4th chunk's
# header changed too (its header checksum fails: the reader skips the
# chunk): rec-view recording's chunks_damaged, the recording SQL's in
# rec-sql (from runs.damaged_chunks) and in DuckDB over the Parquet export
# are all 2, and its chunks 7
off=$("$bin/rec-sql" --format csv "$tmp/trunc.rec" 'SELECT offset + 40 FROM chunks WHERE chunk_index = 3' 2>/dev/null |
	tail -n 1 | tr -d '\r')
[ -n "$off" ] || fail "no 4th chunk in the generated file"
cp "$tmp/trunc.rec" "$tmp/dmg.rec"
python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0x5a]))' \
	"$tmp/dmg.rec" "$off"
"$bin/rec-view" --json recording "$tmp/dmg.rec" >"$tmp/dmg.json" 2>/dev/null
view_dmg=$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["tables"][0]["rows"][0]; print(r["chunks_damaged"], r["chunks"])' "$tmp/dmg.json" 2>/dev/null)
sql_dmg=$("$bin/rec-view" --sql recording | "$bin/rec-sql" --format csv "$tmp/dmg.rec" 2>/dev/null | python3 -c 'import csv, sys; r = list(csv.DictReader(sys.stdin))[0]; print(r["chunks_damaged"], r["chunks"])')
rm -rf "$tmp/dmg_ds"
timeout 120 "$bin/rec-export" --format parquet -o "$tmp/dmg_ds" "$tmp/dmg.rec" >/dev/null 2>&1
duck_dmg=$(node "$DUCKDB_QUERY" "SELECT sum(damaged_chunks)::INTEGER AS d FROM read_parquet('$tmp/dmg_ds/type=runs/**/*.parquet')" | tail -n 1)
[ "$view_dmg" = "2 7" ] && [ "$sql_dmg" = "2 7" ] && [ "$duck_dmg" = '[{"d":2}]' ] ||
	fail "damaged and readable chunks: rec-view $view_dmg, rec-sql $sql_dmg, DuckDB $duck_dmg (want 2 7, 2)"

# ---- inline frames (format 1.2) are rows of frames, the same in rec-sql,
# rec-sql --export's SQLite file and the Parquet export: frame 1 (leaf) with
# inl_a (inline_depth 1, the outermost) and inl_b (2) inlined into it; the
# stacks table lists FRAMES entries only, and joined with frames in the order
# (position, inline_depth DESC) gives the reader's full stack
rm -f "$tmp/gen.sqlite"
"$bin/rec-sql" --export "$tmp/gen.sqlite" "$gen" || fail "rec-sql --export gen: exit $?"
python3 - "$gen" "$tmp/gen.sqlite" "$tmp/gen_ds" "$bin" <<'PY' || fail "inline frames: rec-sql, its SQLite export and DuckDB differ from the truth"
import json, os, sqlite3, subprocess, sys
rec, db, ds, bindir = sys.argv[1:5]
FR = ("SELECT frame_id, inline_depth, function, file, line, function_offset FROM frames "
      "ORDER BY frame_id, inline_depth")
ST = ("SELECT f.function FROM stacks s JOIN frames f ON f.recording_id = s.recording_id "
      "AND f.run_id = s.run_id AND f.frame_id = s.frame_id WHERE s.stack_id = 3 "
      "ORDER BY s.position, f.inline_depth DESC")
want_fr = [(1, 0, "leaf", "app.c", 10, 8), (1, 1, "inl_a", "inl.h", 30, None),
           (1, 2, "inl_b", "inl.h", 42, None), (2, 0, "mid", None, None, 8), (3, 0, "other", None, None, 8),
           (4, 0, "rec_mutex_lock", None, None, 4), (5, 0, "", None, None, 0), (6, 0, "ns;fn", None, None, 8)]
want_st = [("rec_mutex_lock",), ("inl_b",), ("inl_a",), ("leaf",), ("mid",)]
def sql(q):
    out = subprocess.run([os.path.join(bindir, "rec-sql"), "--format", "jsonl", rec, q], check=True,
                         stdout=subprocess.PIPE, text=True, timeout=120).stdout
    return [tuple(json.loads(l).values()) for l in out.splitlines()]
def duck(q):
    views = ["CREATE VIEW %s AS SELECT * FROM read_parquet('%s/type=%s/**/*.parquet', hive_partitioning = true)"
             % (t, ds, t) for t in ("frames", "stacks")]
    out = subprocess.run(["node", os.environ["DUCKDB_QUERY"], *views, q], check=True,
                         stdout=subprocess.PIPE, text=True, timeout=120).stdout.splitlines()
    return [tuple(int(v) if isinstance(v, str) and v.isdigit() else v for v in r.values())
            for r in json.loads(out[-1])]
con = sqlite3.connect(db)
fails = 0
for name, got_fr, got_st in (("rec-sql", sql(FR), sql(ST)),
                             ("SQLite export", con.execute(FR).fetchall(), con.execute(ST).fetchall()),
                             ("DuckDB", duck(FR), duck(ST))):
    ok = got_fr == want_fr and got_st == want_st
    print("%s %s: frames %s; stack 3 %s" % ("ok  " if ok else "FAIL", name, got_fr[:3], got_st))
    fails += not ok
# the comparison sees one changed depth
if [(a, 3 - b if a == 1 and b else b) + tuple(r) for a, b, *r in want_fr] == want_fr:
    fails += 1
sys.exit(1 if fails else 0)
PY

# the weights differ from the sizes: the SQL summing size would not pass
"$bin/rec-view" --sql allocation-by-site | sed 's/coalesce(a\.weight, a\.size, 0)/a.size/' |
	"$bin/rec-sql" --format csv "$gen" >"$tmp/by_size" || fail "allocation-by-site by size: exit $?"
got=$(tail -n +2 "$tmp/by_size" | awk -F, '{ n += $(NF - 1) } END { print n }')
# shellcheck disable=SC2154 # set by . "$tmp/truth"
[ "$got" = "$alloc_size" ] && [ "$alloc_size" != "$alloc_weight" ] ||
	fail "allocation-by-site summing size gives $got (sizes $alloc_size, weights $alloc_weight)"

# ---- the demo scenario (the real requestwatch) -----------------------------------------
BIN=$bin work=$tmp/demo server_pid=
mkdir -p "$work"
trap 'if declare -F rw_kill >/dev/null; then rw_kill; fi; rm -rf "$tmp"' EXIT
# shellcheck source=tests/cli/lib/requestwatch_scenario.sh
source "$(dirname "$0")/lib/requestwatch_scenario.sh"
demo=$work/run.rec
rw_start "$demo"
burst 4 /requests/blocking
burst 4 /requests/blocking-fixed
burst 1 /requests/fast
burst 1 /requests/allocating
rw_stop
[ "$(grep -c ' 200$' "$work/statuses")" -eq 10 ] || fail "expected 10 responses with 200"
timeout 120 "$bin/rec-export" --format parquet -o "$work/ds" "$demo" >/dev/null || fail "rec-export demo: exit $?"
check "$demo" "$work/ds" "{'latency --type app.Request --by path': {'count': 10},
	'requests --type app.Request --by path': {'spans': 10}, 'contention-by-lock': {'waits': 3}}" \
	"contention-by-lock" "latency --type app.Request --by path" "latency --type rec.LockWait" \
	"latency --type rec.Sleep" "allocation-by-site" "contention-by-site" "sleeps-by-site" \
	"threads" "live-heap" "startup" "requests --type app.Request" "requests --type app.Request --by path" \
	"allocation-by-span --type app.Request" "allocation-by-span --type app.Request --by path" \
	"requests.slowest --type app.Request" "requests.slowest --type app.Request --by path" \
	"startup.sleeps" "startup.allocations" "startup.cpu" "startup.lock_waits" "startup.cond_waits" \
	"recording" "recording.runs" "requests.slowest --type app.Request --top 4" ||
	fail "demo recording: rec-view, rec-sql and DuckDB differ"
"$bin/rec-view" --json contention-by-lock "$demo" | grep -q '"lock": "quote-cache-lock", "waits": 3' ||
	fail "demo: contention-by-lock has no quote-cache-lock with 3 waits"
cli_done view_sql
