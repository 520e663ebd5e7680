#!/usr/bin/env bash
# rec-export (issue 21), every file read by an independent reader: DuckDB
# (@duckdb/node-api from the npm registry, installed into $REC_DUCKDB_DIR,
# default /var/cache/rec-tests/duckdb or ~/.cache/rec-tests/duckdb, when
# missing; node from Debian; REC_SKIP_DUCKDB=1 skips the test without them).
#   - the generated recording of tests/helpers/rec_test_sql_gen.c (it prints
#     its truth): counts, sums, min/max of fields in DuckDB equal the truth
#     and rec-sql's answers on the same file; the column types (TIMESTAMP
#     WITH TIME ZONE, USMALLINT, UBIGINT exact above 2^63, BLOB, ...); the
#     hive partition columns type, date, run; a join events -> stacks ->
#     frames; chunks and runs;
#   - row groups of 100 rows: 8 groups, each with chunk_seq and start_ns
#     min/max statistics equal to its chunk's;
#   - testdata/valid/*.rec: rows per type equal rec-summary --json's counts,
#     and per table count, sum(duration_ns), min/max(start_ns) equal
#     rec-sql's (start_ns to the microsecond: DuckDB reads nanosecond UTC
#     timestamps as TIMESTAMP WITH TIME ZONE); chunks and runs;
#   - --format jsonl: the same rows, read back by python3;
#   - appending: a second run (another run id, 30 days later) adds files,
#     the first ones stay byte-identical, runs double; exporting the same
#     recording again writes nothing;
#   - a damaged chunk: exit 1, the chunk named once, the files written are
#     valid and hold rec-print's events; every testdata/invalid/*.rec: the
#     exit status of rec-sql --export, each file written read by DuckDB with
#     the rows rec-export counted; a write failure: exit 1, no temporary file
#     left; usage errors.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
need_exe "$bin/rec-export" "$bin/rec-sql" "$bin/rec-summary" "$bin/rec-print" "$tests/rec_test_sql_gen"
command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }
export TZ=UTC

# ---- DuckDB -----------------------------------------------------------------
duck_test="export"
# shellcheck source=tests/cli/lib/duckdb.sh
source "$(dirname "$0")/lib/duckdb.sh"
export REC_SQL=$bin/rec-sql REC_SUMMARY=$bin/rec-summary
exp() { timeout 120 "$bin/rec-export" "$@"; }

# ---- the generated recording --------------------------------------------------
gen=$tmp/gen.rec
"$tests/rec_test_sql_gen" "$gen" 8 >"$tmp/truth" || fail "rec_test_sql_gen: exit $?"
# shellcheck disable=SC1090 # NAME=VALUE lines
. "$tmp/truth"
ds=$tmp/ds
exp -o "$ds" "$gen" >"$tmp/out" 2>"$tmp/err" || fail "export: exit $?: $(cat "$tmp/err")"
[ -s "$tmp/err" ] && fail "export: stderr: $(cat "$tmp/err")"
# 891 events + 1 run + 2 threads + 4 stack rows + 3 frames + 9 chunks
grep -qx "$ds: 910 rows in 11 new files, 0 files kept as they were" "$tmp/out" || fail "summary: $(cat "$tmp/out")"
exp --row-group 100 -o "$tmp/ds100" "$gen" >/dev/null || fail "export --row-group 100: exit $?"

python3 - "$ds" "$tmp/ds100" "$gen" <<PY || fail "generated recording in DuckDB"
import json, os, subprocess, sys
ds, ds100, gen = sys.argv[1:4]
requests, request_duration_ns, status500, bytes = $requests, $request_duration_ns, $status500, $bytes
waits, wait_duration_ns, ticks = $waits, $wait_duration_ns, $ticks
def duck(*qs):
    out = subprocess.run(["node", os.environ["DUCKDB_QUERY"], *qs], check=True, stdout=subprocess.PIPE, text=True).stdout
    return [json.loads(l) for l in out.splitlines()]
def sql(f, q):
    out = subprocess.run([os.environ["REC_SQL"], "--format", "jsonl", f, q], check=True, capture_output=True, text=True).stdout
    return [json.loads(l) for l in out.splitlines()]
def t(d, name):
    return "read_parquet('%s/type=%s/**/*.parquet', hive_partitioning = true)" % (d, name)
R, S, F = t(ds, "app.Request"), t(ds, "stacks"), t(ds, "frames")
res = duck(
    "SELECT count(*) n, sum(duration_ns) d, count_if(status = 500) s5, sum(bytes) b, epoch_ns(min(start_ns)) lo, "
    "epoch_ns(max(start_ns)) hi, sum(f_start_ns) fs, sum(ratio) ratio, sum(big) big, max(big) bigmax, "
    "count(DISTINCT thread_name) th, sum(peer + thread_id) peers FROM " + R,
    "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM " + R + ")",
    "SELECT DISTINCT type, CAST(date AS VARCHAR) AS date, run FROM " + R,
    "SELECT string_agg(f || ':' || n, ' ' ORDER BY f) j FROM (SELECT f.function f, count(*) n FROM " + R + " r JOIN " + S +
    " s ON s.run_id = r.run_id AND s.stack_id = r.stack_id AND s.position = s.depth - 1 JOIN " + F +
    " f ON f.run_id = s.run_id AND f.frame_id = s.frame_id GROUP BY 1)",
    "SELECT count(*) n, sum(duration_ns) d FROM " + t(ds, "app.Wait"),
    "SELECT count(*) n, sum(n) s, count_if(thread_id IS NULL AND duration_ns IS NULL) bare FROM " + t(ds, "app.Tick"),
    "SELECT (SELECT count(*) FROM %s) + (SELECT count(*) FROM %s) + (SELECT count(*) FROM %s) n" % (t(ds, "a.b"), t(ds, "a_b"), t(ds, "9lives")),
    "SELECT count(*) n, sum(events) e, count_if(final) fin, min(run_id) r FROM " + t(ds, "chunks"),
    "SELECT run_id, pid, chunks, events, clean_close, epoch_ns(first_event_ns) f, epoch_ns(last_event_ns) l FROM " + t(ds, "runs"),
    "SELECT string_agg(thread_id || '=' || name, ' ' ORDER BY thread_id) j FROM " + t(ds, "threads"),
    "SELECT row_group_id g, path_in_schema c, stats_min_value lo, stats_max_value hi, stats_null_count nn, row_group_num_rows n "
    "FROM parquet_metadata('%s/type=app.Request/**/*.parquet') WHERE path_in_schema IN ('chunk_seq', 'start_ns', 'path') ORDER BY 1, 2" % ds100,
    "SELECT count(*) n, sum(duration_ns) d FROM " + t(ds100, "app.Request"),
    "SELECT count(*) n FROM %s WHERE start_ns >= make_timestamptz(1700000002000000::BIGINT) AND start_ns < make_timestamptz(1700000002050000::BIGINT)" % R,
)
(req, cols, parts, join, wait, tick, odd, chunks, runs, threads, stats, req100, window) = res
r = req[0]
want = dict(n=requests, d=request_duration_ns, s5=status500, b=bytes)
for k, v in want.items():
    assert int(r[k]) == int(v), (k, r[k], v)
s = sql(gen, "SELECT count(*) n, sum(duration_ns) d, sum(status = 500) s5, sum(bytes) b, min(start_ns) lo, max(start_ns) hi, "
        "sum(f_start_ns) fs, sum(ratio) ratio, count(DISTINCT thread_name) th, sum(peer + thread_id) peers FROM app_Request")[0]
for k in ("n", "d", "s5", "b", "lo", "hi", "fs", "th", "peers"):
    assert int(r[k]) == int(s[k]), ("rec-sql", k, r[k], s[k])
assert abs(float(r["ratio"]) - s["ratio"]) < 1e-9, (r["ratio"], s["ratio"])
# u64 above 2^63: exact in Parquet (rec-sql rounds it to a REAL)
assert int(r["big"]) == 8 * (100 * 2**63 + 4950), r["big"]
assert int(r["bigmax"]) == 2**63 + 99, r["bigmax"]
types = {c["column_name"]: c["column_type"] for c in cols}
want_types = {"recording_id": "UINTEGER", "run_id": "VARCHAR", "chunk_seq": "UBIGINT",
              "start_ns": "TIMESTAMP WITH TIME ZONE", "duration_ns": "BIGINT", "thread_id": "BIGINT",
              "thread_name": "VARCHAR", "stack_id": "UBIGINT", "path": "VARCHAR", "status": "USMALLINT",
              "bytes": "UBIGINT", "f_start_ns": "BIGINT", "peer": "BIGINT", "peer_name": "VARCHAR",
              "big": "UBIGINT", "ratio": "DOUBLE", "payload": "BLOB", "date": "DATE", "run": "VARCHAR",
              "type": "VARCHAR"}
assert types == want_types, types
assert parts == [{"type": "app.Request", "date": "2023-11-14", "run": "00000000000005a1"}], parts
assert join[0]["j"] == "mid:400 other:400", join
assert (int(wait[0]["n"]), int(wait[0]["d"])) == (waits, wait_duration_ns), wait
assert (int(tick[0]["n"]), int(tick[0]["s"]), int(tick[0]["bare"])) == (ticks, 28, ticks), tick
assert int(odd[0]["n"]) == 3, odd
total = requests + waits + ticks + 3
c = chunks[0]
assert (int(c["n"]), int(c["e"]), int(c["fin"]), c["r"]) == (9, total, 1, "00000000000005a1"), c
assert runs == [{"run_id": "00000000000005a1", "pid": 777, "chunks": "9", "events": str(total), "clean_close": True,
                 "f": "1700000000000000000", "l": "1700000007900000000"}], runs
assert threads[0]["j"] == "501=worker-a 502=worker-b", threads
# row groups of 100: group k is chunk k (100 requests each)
groups = {}
for row in stats:
    groups.setdefault(int(row["g"]), {})[row["c"]] = row
assert sorted(groups) == list(range(8)), sorted(groups)
for g, cs in groups.items():
    assert int(cs["chunk_seq"]["n"]) == 100
    assert (cs["chunk_seq"]["lo"], cs["chunk_seq"]["hi"]) == (str(g), str(g)), cs["chunk_seq"]
    assert cs["start_ns"]["lo"] == "2023-11-14 22:13:2%d+00" % g, cs["start_ns"]
    assert cs["start_ns"]["hi"] == "2023-11-14 22:13:2%d.099+00" % g, cs["start_ns"]
    assert (cs["path"]["lo"], cs["path"]["hi"], cs["path"]["nn"]) == ("/p/0", "/p/3", "0"), cs["path"]
assert (int(req100[0]["n"]), int(req100[0]["d"])) == (requests, request_duration_ns), req100
assert int(window[0]["n"]) == 50, window
print("ok   generated:", requests, "requests,", len(types), "columns, 8 row groups")
PY

# ---- testdata: every valid recording --------------------------------------------
for f in "$root"/testdata/valid/*.rec; do
	d=$tmp/valid/$(basename "$f" .rec)
	exp -o "$d" "$f" >/dev/null 2>"$tmp/err" || { fail "export $f: exit $?: $(cat "$tmp/err")"; continue; }
	"$bin/rec-summary" --json "$f" >"$tmp/sum.json" || { fail "rec-summary $f: exit $?"; continue; }
	python3 - "$d" "$f" "$tmp/sum.json" <<'PY' || fail "$f: DuckDB and rec-summary/rec-sql differ"
import json, os, re, subprocess, sys
d, f, sumf = sys.argv[1:4]
s = json.load(open(sumf))
def duck(*qs):
    out = subprocess.run(["node", os.environ["DUCKDB_QUERY"], *qs], check=True, stdout=subprocess.PIPE, text=True).stdout
    return [json.loads(l) for l in out.splitlines()]
def sql(q):
    out = subprocess.run([os.environ["REC_SQL"], "--format", "jsonl", f, q], check=True, capture_output=True, text=True).stdout
    return [json.loads(l) for l in out.splitlines()]
def esc(v):
    return re.sub(r"[^A-Za-z0-9._-]", lambda m: "".join("%%%02X" % b for b in m.group(0).encode()), v)
def t(name):
    return "read_parquet('%s/type=%s/**/*.parquet', hive_partitioning = true)" % (d, esc(name))
tables = {r["type_name"]: r["table_name"] for r in sql("SELECT type_name, table_name FROM types")}
fixed = {"types", "chunks", "runs", "threads", "stacks", "frames", "drops"}
present = [x for x in s["types"] if x["count"] > 0]
qs = []
for x in present:
    dirname = tables[x["name"]] if x["name"].lower() in fixed else x["name"]
    qs.append("SELECT count(*) n, sum(duration_ns) d, epoch_ns(min(start_ns)) lo, epoch_ns(max(start_ns)) hi FROM " + t(dirname))
qs.append("SELECT count(*) n, sum(events) e, sum(dropped_events) dr FROM " + t("chunks"))
qs.append("SELECT run_id, pid, chunks, events FROM %s ORDER BY run_id" % t("runs"))
res = duck(*qs)
for x, r in zip(present, res):
    q = sql('SELECT count(*) n, sum(duration_ns) d, min(start_ns) lo, max(start_ns) hi FROM "%s"' % tables[x["name"]])[0]
    got = [None if r[0][k] is None else int(r[0][k]) for k in ("n", "d", "lo", "hi")]
    assert got[0] == x["count"], (x, got)
    # DuckDB reads TIMESTAMP(NANOS, UTC) as TIMESTAMP WITH TIME ZONE: microseconds
    us = lambda v: None if v is None else v // 1000 * 1000
    assert got == [q["n"], q["d"], us(q["lo"]), us(q["hi"])], (x["name"], got, q)
c = res[-2][0]
assert (int(c["n"]), int(c["e"]), int(c["dr"])) == (s["chunks"], s["events"], s["dropped"]), (c, s)
runs = sorted((r["run_id"], r["pid"], r["chunks"], r["events"]) for r in s["runs"])
assert [(r["run_id"], r["pid"], int(r["chunks"]), int(r["events"])) for r in res[-1]] == runs, (res[-1], runs)
print("ok  ", os.path.basename(f), len(present), "tables,", s["events"], "events")
PY
done

# ---- JSON lines ---------------------------------------------------------------------
exp --format jsonl -o "$tmp/jl" "$gen" >/dev/null || fail "--format jsonl: exit $?"
python3 - "$tmp/jl" "$gen" <<PY || fail "jsonl rows"
import glob, json, os, subprocess, sys
d, gen = sys.argv[1:3]
files = glob.glob(d + "/type=app.Request/date=2023-11-14/run=00000000000005a1/part-0-8.jsonl")
assert len(files) == 1, glob.glob(d + "/**", recursive=True)
rows = [json.loads(l) for l in open(files[0])]
assert len(rows) == $requests and sum(r["duration_ns"] for r in rows) == $request_duration_ns
out = subprocess.run([os.environ["REC_SQL"], "--format", "jsonl", gen, "SELECT * FROM app_Request"], check=True,
                     capture_output=True, text=True).stdout
want = [json.loads(l) for l in out.splitlines()]
assert rows == want, (rows[0], want[0])
assert len(glob.glob(d + "/type=*/date=*/run=*/part-*.jsonl")) == 11
PY

# ---- appending a second run -------------------------------------------------------------
"$tests/rec_test_sql_gen" "$tmp/gen2.rec" 8 beef 30 >/dev/null || fail "rec_test_sql_gen 2: exit $?"
(cd "$ds" && find . -type f | sort | xargs md5sum) >"$tmp/before.md5"
exp -o "$ds" "$tmp/gen2.rec" >"$tmp/out" || fail "append: exit $?"
grep -qx "$ds: 910 rows in 11 new files, 0 files kept as they were" "$tmp/out" || fail "append summary: $(cat "$tmp/out")"
(cd "$ds" && md5sum --quiet -c "$tmp/before.md5") || fail "append changed the first files"
[ "$(find "$ds" -type f | wc -l)" = 22 ] || fail "append: $(find "$ds" -type f | wc -l) files, want 22"
exp -o "$ds" "$gen" >"$tmp/out" || fail "re-export: exit $?"
grep -qx "$ds: 0 rows in 0 new files, 11 files kept as they were" "$tmp/out" || fail "re-export summary: $(cat "$tmp/out")"
(cd "$ds" && md5sum --quiet -c "$tmp/before.md5") || fail "re-export changed the first files"
python3 - "$ds" <<PY || fail "appended dataset in DuckDB"
import json, os, subprocess, sys
d = sys.argv[1]
def t(name):
    return "read_parquet('%s/type=%s/**/*.parquet', hive_partitioning = true)" % (d, name)
out = subprocess.run(["node", os.environ["DUCKDB_QUERY"],
    "SELECT count(*) n, count(DISTINCT run_id) runs FROM " + t("runs"),
    "SELECT CAST(date AS VARCHAR) date, run, count(*) n, sum(duration_ns) d FROM %s GROUP BY ALL ORDER BY 1" % t("app.Request")],
    check=True, capture_output=True, text=True).stdout.splitlines()
runs, req = map(json.loads, out)
assert runs == [{"n": "2", "runs": "2"}], runs
assert req == [{"date": "2023-11-14", "run": "00000000000005a1", "n": "$requests", "d": "$request_duration_ns"},
               {"date": "2023-12-14", "run": "000000000000beef", "n": "$requests", "d": "$request_duration_ns"}], req
PY

# ---- damaged input, failed writes ----------------------------------------------------
bad=$root/testdata/invalid/events-1.1.rec
want=$("$bin/rec-print" "$bad" 2>/dev/null | grep -c '^rec\.LockWait')
exp -o "$tmp/bad" "$bad" >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] || fail "damaged: exit $rc, want 1"
[ "$(grep -c "^rec-export: $bad: chunk 1 at offset 1177: payload checksum mismatch" "$tmp/err")" = 1 ] ||
	fail "damaged: message: $(cat "$tmp/err")"
got=$(node "$DUCKDB_QUERY" "SELECT count(*) n FROM read_parquet('$tmp/bad/type=rec.LockWait/**/*.parquet')" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["n"])')
[ "$got" = "$want" ] || fail "damaged: $got LockWait rows in DuckDB, rec-print has $want"
[ -z "$(find "$tmp/bad" -name '*.tmp.*')" ] || fail "damaged: temporary files left"

# every damaged recording of testdata/invalid: the exit status of rec-sql
# --export (the same scans), no temporary file, every file DuckDB-readable
# with the rows the summary line counts
for f in "$root"/testdata/invalid/*.rec; do
	d=$tmp/invalid/$(basename "$f" .rec)
	exp -o "$d" "$f" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	"$bin/rec-sql" --export "$tmp/inv.db" "$f" >/dev/null 2>&1
	want=$?
	[ "$rc" = "$want" ] || fail "$f: exit $rc, rec-sql --export: $want: $(cat "$tmp/err")"
	[ -z "$(find "$d" -name '*.tmp.*' 2>/dev/null)" ] || fail "$f: temporary files left"
	rows=$(sed -n 's/^.*: \([0-9]*\) rows in .*/\1/p' "$tmp/out")
	[ -n "$rows" ] || { fail "$f: no summary line: $(cat "$tmp/out")"; continue; }
	got=0
	while IFS= read -r pq; do
		n=$(node "$DUCKDB_QUERY" "SELECT count(*) n FROM read_parquet('$pq')" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["n"])') ||
			{ fail "$pq: DuckDB cannot read it"; continue; }
		got=$((got + n))
	done < <(find "$d" -name '*.parquet' 2>/dev/null)
	[ "$got" = "$rows" ] || fail "$f: DuckDB reads $got rows, rec-export wrote $rows"
done

mkdir -p "$tmp/blocked"
: >"$tmp/blocked/type=app.Request"
exp -o "$tmp/blocked" "$gen" >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] && grep -qx "rec-export: $tmp/blocked/type=app.Request: Not a directory" "$tmp/err" ||
	fail "blocked directory: exit $rc: $(cat "$tmp/err")"
[ -z "$(find "$tmp/blocked" -name '*.tmp.*')" ] || fail "blocked: temporary files left"

# ---- usage --------------------------------------------------------------------------
usage() { # REGEX ARGS...
	local re=$1 rc=0; shift
	"$bin/rec-export" "$@" >"$tmp/u.out" 2>"$tmp/u.err" || rc=$?
	[ "$rc" = 2 ] && [ ! -s "$tmp/u.out" ] && grep -Eq "^rec-export: $re" "$tmp/u.err" ||
		fail "rec-export $*: exit $rc: $(cat "$tmp/u.err")"
}
usage "no output directory" "$gen"
usage "no input file" -o "$tmp/x"
usage "--format: 'csv' is not parquet, jsonl or pprof" --format csv -o "$tmp/x" "$gen"
usage "--row-group: '0' is not a count" --row-group 0 -o "$tmp/x" "$gen"
usage "-o $gen: not a directory" -o "$gen" "$gen"
rc=0
"$bin/rec-export" --help >"$tmp/help" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] && [ ! -s "$tmp/err" ] && grep -q '^Usage: rec-export ' "$tmp/help" || fail "--help: exit $rc"
[[ "$("$bin/rec-export" --version)" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "--version"
rc=0
exp -o "$tmp/m" "$tmp/missing.rec" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q "^rec-export: $tmp/missing.rec: No such file or directory" "$tmp/err" || fail "missing file: exit $rc: $(cat "$tmp/err")"

cli_done export
