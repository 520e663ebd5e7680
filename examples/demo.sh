#!/usr/bin/env bash
# The README's main command (`make demo`): start the example service
# requestwatch with a recording, send it the scenario of issue 3, stop it with
# SIGINT, and show what the recording says about it.
#
#   BUILD=build bash examples/demo.sh      (make demo builds everything first)
#
# Output goes to $BUILD/demo/ (demo.rec, server.log, lock-graph.svg, lock-waits.html,
# report.html; plain.rec and plain/ for the same scenario against the plain build,
# recorded by rec-record).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
BIN="$BUILD/bin"
OUT="$BUILD/demo"
REC="$OUT/demo.rec"

for t in requestwatch rec-summary rec-print; do
	if [ ! -x "$BIN/$t" ]; then
		echo "demo: $BIN/$t is missing; run 'make BUILD=$BUILD' first" >&2
		exit 1
	fi
done
mkdir -p "$OUT"
rm -f "$REC" "$OUT/server.out" "$OUT/server.log"

server_pid=
cleanup() {
	if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
		rw_kill # the server, and under rec-record the program rec-record runs
	fi
}
trap cleanup EXIT

# burst N PATH: N concurrent GET requests to PATH, sent at the same moment;
# prints one line per request (tests/cli/lib/requestwatch_scenario.sh, which
# the tests that run this scenario use too).
rw_burst_show=1
# shellcheck source=tests/cli/lib/requestwatch_scenario.sh
source tests/cli/lib/requestwatch_scenario.sh

echo "== starting requestwatch (recording to $REC)"
REC_OUTPUT="$REC" "$BIN/requestwatch" --port 0 >"$OUT/server.out" 2>"$OUT/server.log" &
server_pid=$!
port=
for _ in $(seq 1 100); do  # the warm-up takes ~0.4 s; wait up to 10 s
	port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$OUT/server.out" 2>/dev/null || true)
	[ -n "$port" ] && break
	kill -0 "$server_pid" 2>/dev/null || { echo "demo: requestwatch exited early:" >&2; cat "$OUT/server.log" >&2; exit 1; }
	sleep 0.1
done
[ -n "$port" ] || { echo "demo: requestwatch did not start listening" >&2; exit 1; }
echo "   listening on 127.0.0.1:$port (after a warm-up: 256 x 16 KiB allocated, 400 ms sleep)"

echo "== 4 concurrent /requests/blocking (the mutex is held during a 150 ms refresh)"
burst 4 /requests/blocking
echo "== 4 concurrent /requests/blocking-fixed (refresh first, lock only to store)"
burst 4 /requests/blocking-fixed
echo "== 1 /requests/fast and 1 /requests/allocating (768 x 8 KiB)"
burst 1 /requests/fast
burst 1 /requests/allocating

echo "== SIGINT: the service stops accepting, joins its threads, the recording is finished at exit"
kill -INT "$server_pid"
for _ in $(seq 1 100); do
	kill -0 "$server_pid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$server_pid" 2>/dev/null; then
	echo "demo: requestwatch did not exit within 10 s of SIGINT" >&2
	exit 1
fi
rc=0
wait "$server_pid" || rc=$?
server_pid=
[ "$rc" -eq 0 ] || { echo "demo: requestwatch exited with $rc:" >&2; cat "$OUT/server.log" >&2; exit 1; }
echo "   exit status 0; recording: $REC ($(stat -c %s "$REC") bytes)"

echo
echo "== rec-summary demo.rec"
echo "   Look at: one run, ended by a clean close, nothing dropped; 10 app.Request; 9 rec.Sleep"
echo "   (the warm-up + 8 refreshes) but few rec.LockWait (3 of the 4 blocking requests queued);"
echo "   1024 rec.Alloc (256 at warm-up + 768 in /requests/allocating)."
"$BIN/rec-summary" "$REC"

echo
echo "== rec-print --events rec.LockWait,rec.Sleep --stack-depth 5 demo.rec"
echo "   Look at: the rec.LockWait events on \"quote-cache-lock\": conn threads serving"
echo "   /requests/blocking waited about 150, 300 and 450 ms (holderOsThreadId names the thread"
echo "   holding it: it sleeps 150 ms inside the lock, see the rec.Sleep with serve_blocking in"
echo "   its stack).  The blocking-fixed requests sleep the same 150 ms outside the lock"
echo "   (serve_blocking_fixed) and show no lock wait.  The first rec.Sleep is the 400 ms warm-up."
"$BIN/rec-print" --events rec.LockWait,rec.Sleep --stack-depth 5 "$REC" >"$OUT/locks-and-sleeps.txt"
lines=$(wc -l <"$OUT/locks-and-sleeps.txt")
head -n 150 "$OUT/locks-and-sleeps.txt"
if [ "$lines" -gt 150 ]; then
	echo "   ... ($((lines - 150)) more lines in $OUT/locks-and-sleeps.txt)"
fi
echo
echo "demo: recording kept in $REC"

# ---- pictures of the recording (rec-lockgraph; rec-flame's lock-wait flame graph) ----
echo
echo "== rec-lockgraph --format svg demo.rec: the wait-for graph as a picture"
echo "   Look at: \"quote-cache-lock\" is the heaviest lock (thickest outline); the conn threads"
echo "   of /requests/blocking point at it with their waits (count, total, max; wider = longer),"
echo "   and the dashed edge leads to the thread that held it meanwhile."
if [ -x "$BIN/rec-lockgraph" ]; then
	"$BIN/rec-lockgraph" --format svg --output "$OUT/lock-graph.svg" "$REC"
	echo "   lock graph (SVG, open it in a browser): $OUT/lock-graph.svg"
else
	echo "   (rec-lockgraph is not built: make BUILD=$BUILD)"
fi
if [ -x "$BIN/rec-flame" ]; then
	"$BIN/rec-flame" --event rec.LockWait --format html --title "demo.rec: lock waits" \
		--output "$OUT/lock-waits.html" "$REC"
	echo "   lock-wait flame graph (HTML): $OUT/lock-waits.html"
fi

# ---- the same story from a program nobody instrumented (issue 18) ----
# requestwatch-plain is requestwatch built without rec (plain pthread_mutex_lock,
# nanosleep, malloc); rec-record runs it with the preload library.
PLAIN="$OUT/plain.rec"
if [ -x "$BIN/rec-record" ] && [ -x "$BIN/requestwatch-plain" ] && [ -x "$BIN/rec-view" ]; then
	echo
	echo "== the same scenario against requestwatch-plain (built without rec), recorded by rec-record:"
	echo "   rec-record -o $PLAIN -- requestwatch-plain --port 0"
	work="$OUT/plain"
	mkdir -p "$work"
	rm -f "$PLAIN"
	fail() { echo "demo: $*" >&2; [ -f "$work/server.err" ] && cat "$work/server.err" >&2; exit 1; }
	rw_plain=1
	rw_record_opts=()
	rw_start "$PLAIN"
	burst 4 /requests/blocking
	burst 4 /requests/blocking-fixed
	burst 1 /requests/fast
	burst 1 /requests/allocating
	rw_stop
	echo "   exit status 0; recording: $PLAIN ($(stat -c %s "$PLAIN") bytes)"
	echo
	echo "== rec-view contention-by-lock, the instrumented build (demo.rec), then the plain one (plain.rec)"
	echo "   Look at: the same 3 waits of about 150, 300 and 450 ms behind the thread sleeping in"
	echo "   serve_blocking; the plain build's mutex is named by its symbol, quote_cache_lock."
	"$BIN/rec-view" contention-by-lock "$REC"
	"$BIN/rec-view" contention-by-lock "$PLAIN"
	echo
	echo "== rec-view allocation-by-site --top 3 plain.rec: the allocating request's 6 MiB, by call site"
	"$BIN/rec-view" allocation-by-site --top 3 "$PLAIN"
else
	echo
	echo "   (rec-record or requestwatch-plain is not built: make BUILD=$BUILD)"
fi

# ---- the answers: rec-report's findings, and its HTML page ----
if [ -x "$BIN/rec-report" ]; then
	echo
	echo "== rec-report --by path demo.rec: what is wrong, with the evidence"
	echo "   Look at: quote-cache-lock held by the thread serving /requests/blocking while it sleeps"
	echo "   in serve_blocking (the waiters' total and max); the lock dominating /requests/blocking's"
	echo "   latency; /requests/allocating allocating 6 MiB per request; the warm-up before the first"
	echo "   request.  Nothing on /requests/fast, no lock finding on /requests/blocking-fixed."
	"$BIN/rec-report" --by path "$REC"
	"$BIN/rec-report" --by path --output "$OUT/report.html" "$REC"
	echo
	echo "   HTML report (findings, latency per path, a timeline of the threads, the wait-for"
	echo "   graph, flame graphs; open it in a browser): $OUT/report.html"
fi
