#!/usr/bin/env bash
# bench/views.sh [--quick] [--stdout] - the views and SQL benchmark of issues
# #20 and #21, side by side with JFR in one run:
#   - rec-view latency and contention-by-site against `jfr view
#     latencies-by-type` and `jfr view contention-by-site` of the Temurin 25
#     JDK (wall time, peak RSS; at N_SMALL and N events: memory flat in the
#     file size), and rec-report on the same file;
#   - rec-sql: a count(*) ... GROUP BY and the same with a time filter (the
#     chunks skipped, from rec-sql --stats), rec-export --format parquet
#     (events/s, bytes/event against the .rec file), the same two queries in
#     DuckDB over the export (node + @duckdb/node-api, as the tests install
#     it), beside `jfr print --json` read by DuckDB (what people do for JFR).
#
#   BUILD=build bash bench/views.sh           full: N = 10M (JSON path 20k), 5 runs
#   BUILD=build bash bench/views.sh --quick   quick: N = 1M (JSON path 5k), 3 runs
#
# Environment: VIEWS_N, VIEWS_N_SMALL, VIEWS_JSON_N, VIEWS_RUNS, VIEWS_NO_MAKE=1
# (use $BUILD as it is), VIEWS_BASE=COMMIT (also rec-view of that commit
# against this tree's on the N-event file: latency and contention-by-site,
# VIEWS_BASE_PAIRS runs each (default 11), old and new back to back in
# alternating order, wall and CPU), REC_DUCKDB_DIR (as tests/cli/lib/duckdb.sh), JDK25
# (default /usr/lib/jvm/temurin-25-jdk-amd64).  The recording is
# bench/gen_stacks.c's (90% rec.CPUSample, 10% rec.LockWait on 8 locks, 2000
# stacks, 16 threads); the JFR file is bench/jfr/ViewEvents.java's: the same
# events at the same stack paths, its lock waits as jdk.JavaMonitorEnter.
# Writes the markdown section to $BUILD/bench/views.md; with --stdout prints
# it (bench/run.sh's hook), else puts it into bench/RESULTS.md in place of its
# "## Views and SQL" section (appended when there is none).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh

stdout_args 25 "$@"
if [ "$QUICK" = 1 ]; then
	N=${VIEWS_N:-1000000}; N_SMALL=${VIEWS_N_SMALL:-100000}; JSON_N=${VIEWS_JSON_N:-5000}
	RUNS=${VIEWS_RUNS:-3}; MODE=quick
else
	N=${VIEWS_N:-10000000}; N_SMALL=${VIEWS_N_SMALL:-1000000}; JSON_N=${VIEWS_JSON_N:-20000}
	RUNS=${VIEWS_RUNS:-5}; MODE=full
fi
BUILD=${BUILD:-build}
OUT="$BUILD/bench"
DATA="$OUT/views-data"
LOG="$OUT/views-log.txt"
MD="$OUT/views.md"
mkdir -p "$OUT" "$DATA"
: >"$LOG"
say() { printf '[views %s] %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$LOG" >&2; }
die() { say "error: $*"; exit 1; }
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

JDK25=${JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}
JFR25="$JDK25/bin/jfr"
[ -x "$JFR25" ] && [ -x "$JDK25/bin/javac" ] || die "no Temurin 25 JDK at $JDK25 (jfr view needs JDK 21+)"
command -v node >/dev/null || die "node not found (apt-get install nodejs)"
dflt=/var/cache/rec-tests/duckdb
[ -d "$dflt" ] || dflt=${XDG_CACHE_HOME:-$HOME/.cache}/rec-tests/duckdb
export DUCKDB_DIR=${REC_DUCKDB_DIR:-$dflt}
if [ ! -f "$DUCKDB_DIR/node_modules/@duckdb/node-api/package.json" ]; then
	say "installing @duckdb/node-api into $DUCKDB_DIR (npm)"
	mkdir -p "$DUCKDB_DIR" &&
		timeout 600 npm install --prefix "$DUCKDB_DIR" --no-audit --no-fund @duckdb/node-api >>"$LOG" 2>&1 ||
		die "npm install @duckdb/node-api failed (see $LOG)"
fi
DUCK="node $PWD/tests/cli/export/duckdb_query.js"
DUCK_VERSION=$(node "$PWD/tests/cli/export/duckdb_query.js" "SELECT version() AS v" | sed 's/.*"v":"\([^"]*\)".*/\1/')

if [ "${VIEWS_NO_MAKE:-0}" != 1 ]; then
	say "building (make all BUILD=$BUILD)"
	make -s all BUILD="$BUILD" >>"$LOG" 2>&1 || die "make all failed (see $LOG)"
fi
BIN="$BUILD/bin"
for t in rec-view rec-report rec-sql rec-export; do
	[ -x "$BIN/$t" ] || die "$BIN/$t is missing"
done
bench_flags
GEN="$OUT/gen_stacks"
RUNSTAT="$OUT/runstat"
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -o "$GEN" bench/gen_stacks.c "$BUILD/lib/librec.a" $B_LIBS >>"$LOG" 2>&1 ||
	die "gen_stacks.c does not compile (see $LOG)"
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -o "$RUNSTAT" bench/runstat.c >>"$LOG" 2>&1 || die "runstat.c does not compile (see $LOG)"
JCP="$OUT/jfr25"
mkdir -p "$JCP"
"$JDK25/bin/javac" -d "$JCP" bench/jfr/ViewEvents.java >>"$LOG" 2>&1 || die "javac failed (see $LOG)"

# ---- the files ------------------------------------------------------------------------
REC="$DATA/views-$N.rec"; REC_SMALL="$DATA/views-$N_SMALL.rec"
JFR="$DATA/views-$N.jfr"; JFR_SMALL="$DATA/views-$N_SMALL.jfr"; JFR_JSON="$DATA/views-$JSON_N.jfr"
JFR_TINY="$DATA/views-16.jfr"
say "generating $REC and $REC_SMALL"
GEN_LINE=$("$GEN" "$N" "$REC") || die "gen_stacks failed"
"$GEN" "$N_SMALL" "$REC_SMALL" >>"$LOG" || die "gen_stacks failed"
say "$GEN_LINE"
say "generating $JFR, $JFR_SMALL, $JFR_JSON (Temurin 25)"
JGEN_LINE=$("$JDK25/bin/java" -cp "$JCP" ViewEvents "$N" "$JFR") || die "ViewEvents failed"
"$JDK25/bin/java" -cp "$JCP" ViewEvents "$N_SMALL" "$JFR_SMALL" >>"$LOG" || die "ViewEvents failed"
"$JDK25/bin/java" -cp "$JCP" ViewEvents "$JSON_N" "$JFR_JSON" >>"$LOG" || die "ViewEvents failed"
"$JDK25/bin/java" -cp "$JCP" ViewEvents 16 "$JFR_TINY" >>"$LOG" || die "ViewEvents failed"
say "$JGEN_LINE"
SAMPLES=$(kv samples "$GEN_LINE")
REC_BYTES=$(stat -c %s "$REC")
DS="$DATA/ds-$N"
rm -rf "$DS"
"$BIN/rec-export" --format parquet -o "$DS" "$REC" >>"$LOG" 2>&1 || die "rec-export failed (see $LOG)"
DS_BYTES=$(du -sb "$DS" | cut -f1)

# ---- the queries ------------------------------------------------------------------------
Q_GROUP="SELECT thread_name, count(*) AS n FROM rec_CPUSample GROUP BY thread_name ORDER BY thread_name"
read -r T0 T1 < <("$BIN/rec-sql" --format csv "$REC" "SELECT min(start_ns), max(start_ns) FROM rec_CPUSample" | tail -1 | tr -d '\r' | tr , ' ')
# the middle 10 %, [F0, F1) on whole microseconds
F0=$(( (T0 + (T1 - T0) * 45 / 100) / 1000 * 1000 )); F1=$(( (T0 + (T1 - T0) * 55 / 100) / 1000 * 1000 ))
Q_TIME="SELECT thread_name, count(*) AS n FROM rec_CPUSample WHERE start_ns >= $F0 AND start_ns < $F1 GROUP BY thread_name ORDER BY thread_name"
# DuckDB reads start_ns as a TIMESTAMP WITH TIME ZONE at microseconds (spec/SCHEMA.md): the
# same bounds as timestamps, so that its row-group statistics apply (epoch_ns(start_ns) would
# hide the column from them); on whole microseconds [F0, F1) selects the same rows
Q_TIME_DUCK="SELECT thread_name, count(*) AS n FROM rec_CPUSample WHERE start_ns >= make_timestamp($(( F0 / 1000 )))::TIMESTAMPTZ AND start_ns < make_timestamp($(( F1 / 1000 )))::TIMESTAMPTZ GROUP BY thread_name ORDER BY thread_name"
TZ_UTC="SET TimeZone = 'UTC'"
V_CPU="CREATE VIEW rec_CPUSample AS SELECT * FROM read_parquet('$DS/type=rec.CPUSample/**/*.parquet', hive_partitioning = true)"
JSON_TMP="$DATA/jfr-print.json"
Q_JSON="SELECT e.\"values\".eventThread.javaName AS thread_name, count(*) AS n FROM (SELECT unnest(recording.events) AS e FROM read_json('$JSON_TMP', maximum_object_size = 4000000000)) GROUP BY 1 ORDER BY 1"

# every engine gives the same counts
"$BIN/rec-sql" --format csv "$REC" "$Q_GROUP" | tail -n +2 | tr -d '"\r' >"$DATA/q_rec.csv"
$DUCK "$V_CPU" "$Q_GROUP" | tail -1 | python3 -c 'import json,sys; [print("%s,%s" % (r["thread_name"], r["n"])) for r in json.load(sys.stdin)]' >"$DATA/q_duck.csv"
cmp -s "$DATA/q_rec.csv" "$DATA/q_duck.csv" || die "rec-sql and DuckDB differ: $DATA/q_rec.csv $DATA/q_duck.csv"
"$BIN/rec-sql" --stats --format csv "$REC" "$Q_TIME" 2>"$DATA/stats" | tail -n +2 | tr -d '"\r' >"$DATA/qt_rec.csv"
$DUCK "$TZ_UTC" "$V_CPU" "$Q_TIME_DUCK" | tail -1 | python3 -c 'import json,sys; [print("%s,%s" % (r["thread_name"], r["n"])) for r in json.load(sys.stdin)]' >"$DATA/qt_duck.csv"
cmp -s "$DATA/qt_rec.csv" "$DATA/qt_duck.csv" || die "time-filtered: rec-sql and DuckDB differ"
TIME_ROWS=$(awk -F, '{ n += $2 } END { print n }' "$DATA/qt_rec.csv")
STATS_TIME=$(sed -n 's/^rec-sql: //p' "$DATA/stats" | tail -1)
"$BIN/rec-sql" --stats --format csv "$REC" "$Q_GROUP" 2>"$DATA/stats_all" >/dev/null
STATS_ALL=$(sed -n 's/^rec-sql: //p' "$DATA/stats_all" | tail -1)

declare -A WALL RSS CMD WMIN WMAX RMIN RMAX
# measure NAME "shell command"  (stdout to /dev/null via runstat)
measure() {
	local name=$1 cmd=$2 w=() r=() line i ws rss rc
	CMD[$name]=$cmd
	for ((i = 1; i <= RUNS; i++)); do
		line=$("$RUNSTAT" bash -c "set -o pipefail; $cmd" 2>>"$LOG") || die "$name failed: $cmd (see $LOG)"
		read -r ws _ _ rss rc <<<"$line"
		[ "$rc" = 0 ] || die "$name exited $rc: $cmd"
		w+=("$ws"); r+=("$rss")
		say "$name run $i: wall ${ws}s rss ${rss}KB"
	done
	WALL[$name]=$(printf '%s\n' "${w[@]}" | median)
	WMIN[$name]=$(printf '%s\n' "${w[@]}" | sort -g | head -1)
	WMAX[$name]=$(printf '%s\n' "${w[@]}" | sort -g | tail -1)
	RSS[$name]=$(printf '%s\n' "${r[@]}" | median)
	RMIN[$name]=$(printf '%s\n' "${r[@]}" | sort -g | head -1)
	RMAX[$name]=$(printf '%s\n' "${r[@]}" | sort -g | tail -1)
}

# the views, interleaved ours/JFR per size so the load falls on both alike
for sz in small big; do
	if [ $sz = big ]; then f=$REC; j=$JFR; else f=$REC_SMALL; j=$JFR_SMALL; fi
	measure "view-latency-$sz" "$BIN/rec-view latency $f"
	measure "jfr-latencies-$sz" "$JFR25 view latencies-by-type $j"
	measure "view-contention-$sz" "$BIN/rec-view contention-by-site $f"
	measure "jfr-contention-$sz" "$JFR25 view contention-by-site $j"
	measure "report-$sz" "$BIN/rec-report $f"
done
# SQL, export, DuckDB, the JFR JSON path
measure sql-group "$BIN/rec-sql $REC \"$Q_GROUP\""
measure sql-time "$BIN/rec-sql $REC \"$Q_TIME\""
measure export "rm -rf $DATA/ds-run && $BIN/rec-export --format parquet -o $DATA/ds-run $REC"
measure duck-group "$DUCK \"$V_CPU\" \"$Q_GROUP\""
measure duck-time "$DUCK \"$TZ_UTC\" \"$V_CPU\" \"$Q_TIME_DUCK\""
measure jfr-json "$JFR25 print --json --events bench.CPUSample $JFR_JSON >$JSON_TMP && $DUCK \"$Q_JSON\""
measure jfr-json-16 "$JFR25 print --json --events bench.CPUSample $JFR_TINY >$JSON_TMP && $DUCK \"$Q_JSON\""
"$JFR25" print --json --events bench.CPUSample "$JFR_JSON" >"$JSON_TMP"
JSON_BYTES=$(stat -c %s "$JSON_TMP")
JSON_SAMPLES=$($DUCK "SELECT count(*) AS n FROM (SELECT unnest(recording.events) AS e FROM read_json('$JSON_TMP', maximum_object_size = 4000000000))" | sed 's/.*"n":"*\([0-9]*\).*/\1/')
rm -f "$JSON_TMP"
rm -rf "$DATA/ds-run"

# ---- before/after: rec-view of VIEWS_BASE against this tree's, alternating ------------------
AB_MD="$DATA/ab.md"
: >"$AB_MD"
if [ -n "${VIEWS_BASE:-}" ]; then
	BASE_DIR="$OUT/views-base"
	rm -rf "$BASE_DIR"
	mkdir -p "$BASE_DIR"
	say "building rec-view of $VIEWS_BASE in $BASE_DIR"
	git archive "$VIEWS_BASE" | tar -x -C "$BASE_DIR" || die "git archive $VIEWS_BASE failed"
	make -s -C "$BASE_DIR" BUILD=build build/bin/rec-view >>"$LOG" 2>&1 || die "building $VIEWS_BASE failed (see $LOG)"
	PAIRS=${VIEWS_BASE_PAIRS:-11}
	{
		echo "Before/after: \`rec-view\` of $VIEWS_BASE (before) and of this tree (after) on the $N-event file, $PAIRS"
		echo "runs each, the two back to back in alternating order; median (min-max); CPU = user + sys."
		echo
		echo "| view | wall s, before | wall s, after | CPU s, before | CPU s, after |"
		echo "|---|---|---|---|---|"
	} >>"$AB_MD"
	for v in latency contention-by-site; do
		bw=() aw=() bc=() ac=()
		for ((i = 0; i < PAIRS; i++)); do
			for side in $([ $((i % 2)) = 0 ] && echo "b a" || echo "a b"); do
				bin=$BIN/rec-view
				[ "$side" = b ] && bin=$BASE_DIR/build/bin/rec-view
				line=$("$RUNSTAT" "$bin" "$v" "$REC" 2>>"$LOG") || die "rec-view $v failed ($bin)"
				read -r ws us ss _ rc <<<"$line"
				[ "$rc" = 0 ] || die "rec-view $v exited $rc ($bin)"
				cpu=$(awk -v u="$us" -v s="$ss" 'BEGIN{printf "%.6f", u + s}')
				if [ "$side" = b ]; then bw+=("$ws"); bc+=("$cpu"); else aw+=("$ws"); ac+=("$cpu"); fi
			done
		done
		abcell() { local m lo hi; m=$(printf '%s\n' "$@" | median); lo=$(printf '%s\n' "$@" | sort -g | head -1)
			hi=$(printf '%s\n' "$@" | sort -g | tail -1); awk -v m="$m" -v a="$lo" -v b="$hi" 'BEGIN{printf "%.3f (%.3f-%.3f)", m, a, b}'; }
		echo "| $v | $(abcell "${bw[@]}") | $(abcell "${aw[@]}") | $(abcell "${bc[@]}") | $(abcell "${ac[@]}") |" >>"$AB_MD"
		say "before/after $v done"
	done
fi

# ---- where the time goes: perf profiles of our commands on the N-event file ----------------
# (VIEWS_NO_PROFILE=1 skips; needs perf, Debian's linux-perf)
PROF_MD="$DATA/profile.md"
: >"$PROF_MD"
if [ "${VIEWS_NO_PROFILE:-0}" != 1 ] && command -v perf >/dev/null &&
	perf record -q -o "$DATA/probe.perf" -- true >>"$LOG" 2>&1; then
	for x in "rec-view latency" "rec-view contention-by-site" "rec-report" "rec-sql GROUP BY" "rec-export"; do
		case $x in
		"rec-sql GROUP BY") cmd=("$BIN/rec-sql" "$REC" "$Q_GROUP") ;;
		rec-export) rm -rf "$DATA/ds-prof"; cmd=("$BIN/rec-export" -o "$DATA/ds-prof" "$REC") ;;
		*) read -r -a w <<<"$x"; cmd=("$BIN/${w[0]}" "${w[@]:1}" "$REC") ;;
		esac
		say "profile: $x"
		perf record -q -F 499 -o "$DATA/prof.perf" -- "${cmd[@]}" >/dev/null 2>>"$LOG" || continue
		{
			echo "\`$x\` (perf record -F 499, self time by symbol, the symbols above 3 %):"
			echo
			echo '```'
			perf report -i "$DATA/prof.perf" --no-children --sort dso,symbol --percent-limit 3 --stdio 2>/dev/null |
				grep '%' | grep -v '^#' | sed -e 's/ *- *- *$//' -e 's/ *$//' | head -12
			echo '```'
			echo
		} >>"$PROF_MD"
	done
	rm -rf "$DATA/ds-prof" "$DATA/prof.perf" "$DATA/probe.perf"
fi

# ---- the section ------------------------------------------------------------------------
r3() { awk -v x="$1" 'BEGIN{printf "%.3f", x}'; }
mib() { awk -v x="$1" 'BEGIN{printf "%.1f", x/1024}'; }
eps() { awk -v n="$1" -v s="$2" 'BEGIN{ if (s>0) printf "%.0f", n/s; else print "n/a" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b>0) printf "%.1f", a/b; else print "n/a" }'; }
met() { awk -v x="$1" -v g="$2" 'BEGIN{ print (x >= g) ? "met" : "**missed**" }'; }
wcell() { echo "$(r3 "${WALL[$1]}") ($(r3 "${WMIN[$1]}")-$(r3 "${WMAX[$1]}"))"; }
rcell() { echo "$(mib "${RSS[$1]}") ($(mib "${RMIN[$1]}")-$(mib "${RMAX[$1]}"))"; }
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
R_LAT=$(ratio "${WALL[jfr-latencies-big]}" "${WALL[view-latency-big]}")
R_CON=$(ratio "${WALL[jfr-contention-big]}" "${WALL[view-contention-big]}")
R_REP=$(ratio "${WALL[report-big]}" "${WALL[view-contention-big]}")
R_REP_L=$(ratio "${WALL[report-big]}" "${WALL[view-latency-big]}")
R_MEM_L=$(ratio "${RSS[view-latency-big]}" "${RSS[view-latency-small]}")
R_MEM_C=$(ratio "${RSS[view-contention-big]}" "${RSS[view-contention-small]}")
R_MEM_JL=$(ratio "${RSS[jfr-latencies-big]}" "${RSS[jfr-latencies-small]}")
R_MEM_JC=$(ratio "${RSS[jfr-contention-big]}" "${RSS[jfr-contention-small]}")
SQL_EPS=$(eps "$SAMPLES" "${WALL[sql-group]}")
JSON_EPS=$(eps "$JSON_SAMPLES" "${WALL[jfr-json]}")
JSON_MEPS=$(awk -v n="$JSON_SAMPLES" -v a="${WALL[jfr-json]}" -v b="${WALL[jfr-json-16]}" 'BEGIN{ if (a>b) printf "%.0f", n/(a-b); else print "n/a" }')
R_SQL_JSON=$(ratio "$SQL_EPS" "$JSON_MEPS")
BPE_REC=$(awk -v b="$REC_BYTES" -v n="$N" 'BEGIN{printf "%.2f", b/n}')
BPE_PQ=$(awk -v b="$DS_BYTES" -v n="$N" 'BEGIN{printf "%.2f", b/n}')
R_PQ=$(ratio "$DS_BYTES" "$REC_BYTES")
R_DUCK=$(ratio "${WALL[sql-group]}" "${WALL[duck-group]}")
R_DUCK_T=$(ratio "${WALL[sql-time]}" "${WALL[duck-time]}")
{
	echo "## Views and SQL (issues #20, #21; bench/views.sh)"
	echo
	echo "$MODE run: $N events (memory: also $N_SMALL), $RUNS runs each, median (min-max); commit $COMMIT,"
	echo "$(date -u +%Y-%m-%dT%H:%MZ); load average at the start $LOAD_START, at the end $LOAD_END (2 cores, shared)."
	echo
	echo "Recording: \`bench/gen_stacks $N FILE\` -> $GEN_LINE"
	echo "(90% rec.CPUSample, 10% rec.LockWait on 8 locks, 2000 stacks of depth 8-40, 16 threads).  JFR (Temurin 25):"
	echo "\`java ViewEvents $N FILE\` -> $JGEN_LINE: the same events at the same stack paths from real"
	echo "Java frames, the lock waits as events named jdk.JavaMonitorEnter, the type both \`jfr view\`s read"
	echo "(bench/jfr/ViewEvents.java says why not real monitors).  The views do not print the same rows: rec-view's"
	echo "contention-by-site groups by call site and lock (64 rows) and adds p99 and the holders; jfr's groups by whole"
	echo "stack trace (2000 rows)."
	echo
	echo "| command | wall s, $N ev | peak RSS MiB, $N_SMALL ev | peak RSS MiB, $N ev | RSS $N / $N_SMALL |"
	echo "|---|---|---|---|---|"
	for x in view-latency jfr-latencies view-contention jfr-contention report; do
		m=$(ratio "${RSS[$x-big]}" "${RSS[$x-small]}")
		echo "| \`${CMD[$x-big]//$DATA\//}\` | $(wcell "$x-big") | $(rcell "$x-small") | $(rcell "$x-big") | $m |"
	done
	echo
	echo "| goal | figure | |"
	echo "|---|---|---|"
	echo "| rec-view latency >= 20x faster than jfr view latencies-by-type | ${R_LAT}x | $(met "$R_LAT" 20) |"
	echo "| rec-view contention-by-site >= 20x faster than jfr view contention-by-site | ${R_CON}x | $(met "$R_CON" 20) |"
	echo "| memory flat in the file size (peak RSS at $N over $N_SMALL events) | latency ${R_MEM_L}x, contention ${R_MEM_C}x (jfr: ${R_MEM_JL}x, ${R_MEM_JC}x) | $(awk -v a="$R_MEM_L" -v b="$R_MEM_C" 'BEGIN{ print (a <= 1.5 && b <= 1.5) ? "met" : "**missed**" }') |"
	echo "| rec-report within 2x of one rec-view | ${R_REP}x of contention-by-site, ${R_REP_L}x of latency | $(awk -v a="$R_REP" 'BEGIN{ print (a <= 2) ? "met" : "**missed**" }') |"
	echo
	echo "SQL: \`rec-sql FILE 'Q'\`, Q = \`$Q_GROUP\` (all $SAMPLES samples: $STATS_ALL),"
	echo "and with \`WHERE start_ns >= F0 AND start_ns < F1\` the middle 10 % of the time range ($TIME_ROWS rows; $STATS_TIME: the"
	echo "chunks outside the range are not decompressed).  DuckDB $DUCK_VERSION (node, @duckdb/node-api; the node start-up"
	echo "is in the figure) over \`rec-export --format parquet\`'s dataset, the table a view of"
	echo "\`read_parquet('DS/type=rec.CPUSample/**/*.parquet', hive_partitioning = true)\`, the filter on"
	echo "\`start_ns\` against \`make_timestamp(F0 / 1000)::TIMESTAMPTZ\` (UTC; F0, F1 whole microseconds); both engines give the same rows (checked).  The JFR path: \`jfr print --json --events"
	echo "bench.CPUSample FILE > F.json\`, then DuckDB \`read_json(F.json, maximum_object_size = 4e9)\` unnesting"
	echo "\`recording.events\` and grouping by \`eventThread.javaName\`, on $JSON_N events ($JSON_SAMPLES samples; $JSON_BYTES bytes of JSON,"
	echo "$(awk -v b="$JSON_BYTES" -v n="$JSON_SAMPLES" 'BEGIN{printf "%.0f", b/n}') per sample: at $N events it would be $(awk -v b="$JSON_BYTES" -v n="$JSON_N" -v N="$N" 'BEGIN{printf "%.0f", b/n*N/1e9}') GB), compared per event."
	echo
	echo "| figure | wall s | events/s | peak RSS MiB |"
	echo "|---|---|---|---|"
	echo "| rec-sql GROUP BY ($SAMPLES samples) | $(wcell sql-group) | $SQL_EPS | $(rcell sql-group) |"
	echo "| rec-sql GROUP BY, time-filtered | $(wcell sql-time) | | $(rcell sql-time) |"
	echo "| DuckDB over the Parquet export, GROUP BY | $(wcell duck-group) | $(eps "$SAMPLES" "${WALL[duck-group]}") | $(rcell duck-group) |"
	echo "| DuckDB over the Parquet export, time-filtered | $(wcell duck-time) | | $(rcell duck-time) |"
	echo "| rec-export --format parquet ($N events) | $(wcell export) | $(eps "$N" "${WALL[export]}") | $(rcell export) |"
	echo "| jfr print --json + DuckDB ($JSON_SAMPLES samples) | $(wcell jfr-json) | $JSON_EPS (marginal, less the 16-event run's $(r3 "${WALL[jfr-json-16]}") s: $JSON_MEPS) | $(rcell jfr-json) |"
	echo
	echo "| goal | figure | |"
	echo "|---|---|---|"
	echo "| rec-sql >= 10x faster than jfr print --json + DuckDB (events/s, JFR marginal) | ${R_SQL_JSON}x | $(met "$R_SQL_JSON" 10) |"
	echo "| Parquet export within 2x of the .rec file | $DS_BYTES bytes ($BPE_PQ B/event) against $REC_BYTES ($BPE_REC B/event): ${R_PQ}x | $(awk -v a="$R_PQ" 'BEGIN{ print (a <= 2) ? "met" : "**missed**" }') |"
	echo "| DuckDB over the export at least as fast as rec-sql | GROUP BY ${R_DUCK}x, time-filtered ${R_DUCK_T}x (rec-sql wall / DuckDB wall) | $(awk -v a="$R_DUCK" -v b="$R_DUCK_T" 'BEGIN{ print (a >= 1 && b >= 1) ? "met" : "**missed**" }') |"
	echo
	echo "Commands: as in the tables, through bench/runstat.c (wall around fork/exec/wait4, peak RSS = ru_maxrss),"
	echo "stdout to /dev/null; files under $DATA.  Rerun: \`BUILD=build bash bench/views.sh\`."
	if [ -s "$AB_MD" ]; then
		echo
		cat "$AB_MD"
	fi
	if [ -s "$PROF_MD" ]; then
		echo
		echo "### Where our time goes ($N events; perf, one run each after the measurements)"
		echo
		cat "$PROF_MD"
	fi
} >"$MD"
if [ "$STDOUT" = 1 ]; then
	cat "$MD"
else
	results_section "## Views and SQL" "$MD"
	say "wrote $MD and its section of bench/RESULTS.md"
fi
