#!/usr/bin/env bash
# rec-sql (issue 21) on recordings whose truth the test knows:
#   - a generated 8-chunk recording (tests/helpers/rec_test_sql_gen.c prints
#     its counts and sums): counts, sums, fields of every kind, the table
#     names of spec/SCHEMA.md (a_b / a_b_2, t_9lives, f_start_ns), stacks,
#     frames, threads, chunks, runs and a join through them;
#   - time filters on start_ns pushed into the chunk scan: --stats counts the
#     chunks decoded, 1 of 8 for a 50 ms window (8 of 8 when start_ns+0 hides
#     the column from the planner, with the same rows), REAL bounds too
#     (a chunk is read when its STATS range, all types, meets the window);
#   - testdata/valid/*.rec: rows per event table equal rec-summary --json's
#     counts per type, chunks and runs equal its chunks and runs;
#   - drops: a real recorder run that throttles (rec_test_recorder_env
#     may-drop: 3000 attempts, "recorded=N"): one row, throttled, 3000 - N;
#   - two files: recording_id 1 and 2; --format csv and jsonl read back by
#     python3's csv and json, text aligned under a dashed rule; statements
#     from standard input (one bad statement: exit 1, the others run), and
#     on a terminal (a pty: the prompts on stderr, a statement over two lines);
#     --schema is SQL python3's sqlite3 executes; --export writes a database
#     python3's sqlite3 reads with the same numbers;
#   - a damaged chunk (testdata/invalid/events-1.1.rec): reported once though
#     three scans meet it, exit 1, rows = rec-print's events; usage errors.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
need_exe "$bin/rec-sql" "$bin/rec-summary" "$bin/rec-print" "$tests/rec_test_sql_gen" \
	"$tests/rec_test_recorder_env"
command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }
export TZ=UTC
sql() { timeout 60 "$bin/rec-sql" "$@"; }

gen=$tmp/gen.rec
"$tests/rec_test_sql_gen" "$gen" 8 >"$tmp/truth" || fail "rec_test_sql_gen: exit $?"
# shellcheck disable=SC1090 # NAME=VALUE lines
. "$tmp/truth"

# one value of a one-row, one-column query
one() { # FILE SQL
	sql --format csv "$1" "$2" | python3 -c 'import csv, sys; r = list(csv.reader(sys.stdin)); print(r[1][0] if len(r) > 1 else "")'
}
eq() { # WHAT GOT WANT
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

# ---- counts and sums against the generator's truth -------------------------
eq "requests" "$(one "$gen" 'SELECT count(*) FROM app_Request')" "$requests"
eq "request durations" "$(one "$gen" 'SELECT sum(duration_ns) FROM app_Request')" "$request_duration_ns"
eq "status 500" "$(one "$gen" 'SELECT count(*) FROM app_Request WHERE status = 500')" "$status500"
eq "bytes" "$(one "$gen" 'SELECT sum(bytes) FROM app_Request')" "$bytes"
eq "waits" "$(one "$gen" 'SELECT count(*) || "," || sum(duration_ns) FROM app_Wait')" "$waits,$wait_duration_ns"
eq "ticks" "$(one "$gen" 'SELECT count(*) || "," || sum(n) FROM app_Tick WHERE thread_id IS NULL AND duration_ns IS NULL')" "$ticks,28"
eq "clashing names" "$(one "$gen" 'SELECT (SELECT count(*) FROM a_b) || (SELECT count(*) FROM a_b_2) || (SELECT count(*) FROM t_9lives)')" "111"
eq "types" "$(one "$gen" "SELECT group_concat(type_name || '=' || table_name || ':' || events, ' ') FROM types")" \
	"app.Request=app_Request:$requests app.Wait=app_Wait:$waits app.Tick=app_Tick:$ticks a.b=a_b:1 a_b=a_b_2:1 9lives=t_9lives:1"
eq "f_start_ns" "$(one "$gen" 'SELECT sum(f_start_ns) FROM app_Request')" "$((-4950 * 8))"
eq "threads" "$(one "$gen" "SELECT thread_name || '>' || peer_name || ':' || count(*) FROM app_Request GROUP BY thread_name, peer_name ORDER BY 1 LIMIT 1")" "worker-a>worker-b:400"
eq "peer ids" "$(one "$gen" 'SELECT count(*) FROM app_Request WHERE peer + thread_id = 1003')" "$requests"
sql --format jsonl "$gen" "SELECT path, big, ratio, payload, chunk_seq, start_ns FROM app_Request WHERE start_ns = 1700000003005000000" >"$tmp/row.jsonl" ||
	fail "jsonl row: exit $?"
python3 - "$tmp/row.jsonl" <<'PY' || fail "fields of one event: $(cat "$tmp/row.jsonl")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert rows == [{"path": "/p/1", "big": float(2**63 + 5), "ratio": 1.25, "payload": "0305",
                 "chunk_seq": 3, "start_ns": 1700000003005000000}], rows
PY
eq "stacks" "$(one "$gen" "SELECT group_concat(stack_id || '.' || position || '=' || frame_id || '/' || depth, ' ') FROM stacks")" "1.0=1/2 1.1=2/2 2.0=1/2 2.1=3/2"
eq "frames" "$(one "$gen" "SELECT group_concat(frame_id || '=' || function || '@' || module || '#' || build_id || '+' || module_offset, ' ') FROM frames")" \
	"1=leaf@/usr/bin/app#abcd+256 2=mid@/usr/bin/app#abcd+512 3=other@/usr/bin/app#abcd+768"
eq "threads table" "$(one "$gen" "SELECT group_concat(thread_id || '=' || name, ' ') FROM threads")" "501=worker-a 502=worker-b"
eq "root frames" "$(one "$gen" "SELECT group_concat(f || ':' || n, ' ') FROM (SELECT f.function f, count(*) n FROM app_Request r JOIN stacks s ON s.run_id = r.run_id AND s.stack_id = r.stack_id AND s.position = s.depth - 1 JOIN frames f ON f.run_id = s.run_id AND f.frame_id = s.frame_id GROUP BY 1 ORDER BY 1)")" \
	"mid:400 other:400"
eq "chunks" "$(one "$gen" "SELECT count(*) || ',' || sum(events) || ',' || sum(final) || ',' || min(run_id) FROM chunks")" "9,$((requests + waits + ticks + 3)),1,00000000000005a1"
eq "runs" "$(one "$gen" "SELECT run_id || ',' || pid || ',' || chunks || ',' || events || ',' || clean_close || ',' || first_event_ns || ',' || last_event_ns FROM runs")" \
	"00000000000005a1,777,9,$((requests + waits + ticks + 3)),1,1700000000000000000,1700000007900000000"

# ---- time filters skip chunks before decompression ------------------------
window() { # WANT_ROWS WANT_DECODED WHERE
	local got
	got=$(sql --stats --format csv "$gen" "SELECT count(*) FROM app_Request WHERE $3" 2>"$tmp/stats" | sed -n '2{s/\r$//;p}')
	eq "rows where $3" "$got" "$1"
	grep -q "^rec-sql: chunks: $2 decoded, $((9 - $2)) skipped$" "$tmp/stats" ||
		fail "where $3: want $2 chunks decoded: $(cat "$tmp/stats")"
}
window "$requests" 8 "1"
window 51 1 "start_ns BETWEEN 1700000002000000000 AND 1700000002050000000"
window 51 8 "start_ns + 0 BETWEEN 1700000002000000000 AND 1700000002050000000"
# chunk 6's STATS range ends with its app.Tick at 6.9 s: it is read, without rows
window 100 2 "start_ns > 1700000006500000000"
window 100 2 "1700000006500000000 < start_ns"
window 1 1 "start_ns = 1700000005042000000"
window 0 1 "start_ns = 1700000005042000001"
window 500 6 "start_ns >= 1.7000000025e18"
window 300 3 "start_ns < 1700000002500000000 AND start_ns <= 1700000009000000000"
window 0 0 "start_ns > 1700000009000000000"

# ---- testdata: rows per type equal rec-summary's counts -------------------
for f in "$root"/testdata/valid/*.rec; do
	"$bin/rec-summary" --json "$f" >"$tmp/sum.json" || { fail "rec-summary $f: exit $?"; continue; }
	sql --schema "$f" >"$tmp/schema.sql" || fail "--schema $f: exit $?"
	sql --format jsonl "$f" "SELECT type_name, table_name FROM types" >"$tmp/tables.jsonl" || fail "types of $f: exit $?"
	python3 - "$tmp/sum.json" "$tmp/tables.jsonl" "$bin/rec-sql" "$f" <<'PY' || fail "$f: rec-sql and rec-summary differ"
import json, subprocess, sys
s = json.load(open(sys.argv[1]))
tables = {r["type_name"]: r["table_name"] for r in map(json.loads, open(sys.argv[2]))}
def q(sql):
    out = subprocess.run([sys.argv[3], "--format", "jsonl", sys.argv[4], sql], check=True,
                         capture_output=True, text=True).stdout
    return [json.loads(l) for l in out.splitlines()]
for t in s["types"]:
    n = q('SELECT count(*) AS n FROM "%s"' % tables[t["name"]])[0]["n"]
    assert n == t["count"], (t, n)
c = q("SELECT count(*) AS n, sum(events) AS e, sum(dropped_events) AS d FROM chunks")[0]
assert (c["n"], c["e"], c["d"] or 0) == (s["chunks"], s["events"], s["dropped"]), (c, s)
runs = q("SELECT run_id, pid, chunks, events FROM runs")
assert [(r["run_id"], r["pid"], r["chunks"], r["events"]) for r in runs] == \
       [(r["run_id"], r["pid"], r["chunks"], r["events"]) for r in s["runs"]], (runs, s["runs"])
print("ok  ", sys.argv[4].rsplit("/", 1)[-1], len(s["types"]), "types,", s["events"], "events")
PY
	python3 -c 'import sqlite3, sys; sqlite3.connect(":memory:").executescript(open(sys.argv[1]).read())' "$tmp/schema.sql" ||
		fail "--schema $f is not SQL: $(head -5 "$tmp/schema.sql")"
done

# ---- drops from a real recorder that throttles ----------------------------
out=$(REC_OUTPUT="$tmp/drop.rec" REC_OPTIONS="events=app.HelperEvent:throttle=100/h;rec.*" \
	timeout -k 5 60 "$tests/rec_test_recorder_env" 3000 may-drop 2>"$tmp/err") || fail "helper: exit $?: $(cat "$tmp/err")"
kept=${out#recorded=}
eq "drops" "$(one "$tmp/drop.rec" "SELECT type_name || ',' || reason_name || ',' || sum(count) FROM drops GROUP BY type_name, reason_name")" "app.HelperEvent,throttled,$((3000 - kept))"
eq "kept" "$(one "$tmp/drop.rec" "SELECT count(*) FROM app_HelperEvent")" "$kept"

# ---- two files, formats, standard input -----------------------------------
sql --format csv "$gen" "$gen" "SELECT recording_id, count(*) AS n, sum(duration_ns) AS d FROM app_Request GROUP BY 1" >"$tmp/two.csv" ||
	fail "two files: exit $?"
python3 - "$tmp/two.csv" "$requests" "$request_duration_ns" <<'PY' || fail "two files csv: $(cat "$tmp/two.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert rows == [{"recording_id": str(k), "n": sys.argv[2], "d": sys.argv[3]} for k in (1, 2)], rows
PY
sql --format csv "$gen" "SELECT 'a,b' AS x, 'say \"hi\"' AS y, NULL AS z, 1.5 AS w" >"$tmp/q.csv" || fail "csv quoting: exit $?"
python3 -c 'import csv,sys; r=list(csv.reader(open(sys.argv[1], newline=""))); assert r == [["x","y","z","w"],["a,b","say \"hi\"","","1.5"]], r' "$tmp/q.csv" ||
	fail "csv quoting: $(cat "$tmp/q.csv")"
sql "$gen" "SELECT path, count(*) AS n FROM app_Request GROUP BY path ORDER BY path" >"$tmp/text" || fail "text: exit $?"
printf 'path    n\n----  ---\n/p/0  200\n/p/1  200\n/p/2  200\n/p/3  200\n' | diff - "$tmp/text" >/dev/null ||
	fail "text layout: $(cat "$tmp/text")"
printf 'SELECT count(*) AS n\n  FROM app_Wait;\nSELECT nosuch FROM app_Wait;\nSELECT sum(duration_ns) AS d FROM app_Wait;\n' |
	sql --format jsonl "$gen" >"$tmp/stdin.out" 2>"$tmp/stdin.err"
rc=$?
eq "stdin exit" "$rc" 1
eq "stdin rows" "$(tr -d '\n' <"$tmp/stdin.out")" "{\"n\": $waits}{\"d\": $wait_duration_ns}"
grep -q '^rec-sql: SQL error: no such column: nosuch$' "$tmp/stdin.err" || fail "stdin error: $(cat "$tmp/stdin.err")"
grep -q 'rec-sql>' "$tmp/stdin.err" && fail "a prompt without a terminal"
# interactive on a terminal (a pty from python3): a prompt on stderr per
# statement, a continuation prompt inside one, each statement run once it
# is complete, end of input (^D) ends it
python3 - "$bin/rec-sql" "$gen" "$waits" <<'PY' || fail "interactive mode on a terminal"
import os, pty, subprocess, sys
m, s = pty.openpty()
p = subprocess.Popen([sys.argv[1], "--format", "jsonl", sys.argv[2]], stdin=s,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
os.close(s)
os.write(m, b"SELECT count(*) AS n\n  FROM app_Wait;\nSELECT 1 AS one;\n\x04")
out, err = p.communicate(timeout=60)
os.close(m)
want_out = '{"n": %s}\n{"one": 1}\n' % sys.argv[3]
want_err = "rec-sql> " + "   ...> " + "rec-sql> " + "rec-sql> " + "\n"
ok = p.returncode == 0 and out.decode() == want_out and err.decode() == want_err
print("%s interactive: exit %d, out %r, err %r" % ("ok  " if ok else "FAIL", p.returncode, out, err))
sys.exit(0 if ok else 1)
PY

# ---- --export: a real SQLite database ---------------------------------------
sql --export "$tmp/out.db" "$gen" "$tmp/drop.rec" || fail "--export: exit $?"
python3 - "$tmp/out.db" "$requests" "$request_duration_ns" "$((3000 - kept))" <<'PY' || fail "--export database"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
names = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
for t in ("types", "chunks", "runs", "threads", "stacks", "frames", "drops", "app_Request", "app_HelperEvent"):
    assert t in names, (t, names)
assert c.execute("SELECT count(*), sum(duration_ns) FROM app_Request").fetchone() == (int(sys.argv[2]), int(sys.argv[3]))
assert c.execute("SELECT sum(count) FROM drops WHERE recording_id = 2").fetchone() == (int(sys.argv[4]),)
assert c.execute("SELECT count(*) FROM frames").fetchone()[0] >= 3
PY
[ -z "$(ls "$tmp" | grep '\.tmp\.')" ] || fail "--export left a temporary file: $(ls "$tmp")"

# ---- a damaged chunk: reported once, exit 1 --------------------------------
bad=$root/testdata/invalid/events-1.1.rec
want=$("$bin/rec-print" "$bad" 2>/dev/null | grep -c '^rec\.LockWait')
sql --format csv "$bad" "SELECT count(*) FROM rec_LockWait; SELECT count(*) FROM rec_LockWait; SELECT count(*) FROM stacks" >"$tmp/bad.out" 2>"$tmp/bad.err"
rc=$?
eq "damaged exit" "$rc" 1
eq "damaged rows" "$(sed -n '2{s/\r$//;p}' "$tmp/bad.out")" "$want"
eq "damaged messages" "$(grep -c 'chunk 1 at offset 1177: payload checksum mismatch' "$tmp/bad.err")" 1

# ---- usage ----------------------------------------------------------------------
usage() { # REGEX ARGS...
	local re=$1 rc=0; shift
	"$bin/rec-sql" "$@" >"$tmp/u.out" 2>"$tmp/u.err" || rc=$?
	[ "$rc" = 2 ] && [ ! -s "$tmp/u.out" ] && grep -Eq "^rec-sql: $re" "$tmp/u.err" ||
		fail "rec-sql $*: exit $rc: $(cat "$tmp/u.err")"
}
usage "no input file"
usage "--format: 'xml' is not text, csv or jsonl" --format xml "$gen" "SELECT 1"
usage "standard input \('-'\) cannot be scanned" - "SELECT 1"
usage "--schema and --export exclude each other" --schema --export "$tmp/x.db" "$gen"
rc=0
"$bin/rec-sql" --help >"$tmp/help" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] && [ ! -s "$tmp/err" ] && grep -q '^Usage: rec-sql ' "$tmp/help" || fail "--help: exit $rc"
[[ "$("$bin/rec-sql" --version)" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "--version"
rc=0
sql "$tmp/missing.rec" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q "^rec-sql: $tmp/missing.rec: No such file or directory" "$tmp/err" || fail "missing file: exit $rc: $(cat "$tmp/err")"

cli_done sql
