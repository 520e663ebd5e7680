#!/usr/bin/env bash
# bench/p99budget.sh - what a background thread's CPU costs the persistent-connection p99
# (issue 22): the recorder against threads that do nothing but work in bursts.
#
#   BUILD=build bash bench/p99budget.sh [--quick] [--stdout]
#
# requestwatch with persistent connections (`loadgen open --keepalive`, GET /requests/fast,
# as bench/load.sh's k* settings) at P99B_RATE requests/s (default 25000) for
# P99B_DURATION s (8), P99B_RUNS rounds (7; --quick 3), the settings alternated in each
# round: off (recording off); on (REC_OUTPUT, the defaults); burn1, burn2, burn4, burn8
# (recording off, bench/burner.c preloaded: a thread that works 1 ms every 1000, 500, 250,
# 125 ms, walking a 4 MiB buffer: 1, 2, 4, 8 ms of CPU a second).  Each run: p50, p90, p99
# from loadgen, and the background thread's CPU a second (rec-writer or burner: its
# /proc schedstat time between 1.5 s and P99B_DURATION - 0.5 s into the run, read with
# bash builtins: a process forked during the load, even a `cat`, shows in the p99; off
# runs without the reads, the others with two).  The table
# gives medians over the rounds (min-max) and p99 against off round by round (the
# median change and the rounds above).  Writes the section "## What a background
# thread's CPU costs the p99" into bench/RESULTS.md (--stdout: prints it instead).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
stdout_args 19 "$@"
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
RATE=${P99B_RATE:-25000}
DUR=${P99B_DURATION:-8}
[ "$DUR" -ge 4 ] 2>/dev/null || { echo "p99budget: P99B_DURATION must be a whole number of seconds, at least 4" >&2; exit 2; }
RUNS=${P99B_RUNS:-7}
[ "$QUICK" = 1 ] && RUNS=${P99B_RUNS:-3}
SETTINGS="off on burn1 burn2 burn4 burn8"
LG="$BUILD/bench/loadgen"
RW="$BUILD/bin/requestwatch"
[ -x "$RW" ] || { echo "p99budget: $RW is missing (make all)" >&2; exit 1; }
bench_flags
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
log() { echo "p99budget: $*" >&2; }
mkdir -p "$BUILD/bench"
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -o "$LG" bench/loadgen.c $B_LIBS
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -shared -fPIC -o "$TMP/burner.so" bench/burner.c -lpthread

# thread_cpu PID COMM: CPU_NS = the CPU time in ns of PID's thread named COMM (empty if
# none).  Bash builtins only: a process forked while the load runs would show in its p99.
thread_cpu() {
	local t c a
	CPU_NS=""
	for t in /proc/"$1"/task/*; do
		{ read -r c <"$t/comm" && [ "$c" = "$2" ] && read -r a _ <"$t/schedstat"; } 2>/dev/null || continue
		CPU_NS=$a
		return
	done
}

# one SETTING: runs it, writes "p50 p90 p99 bg_ms_per_s" to $TMP/line
one() {
	local s=$1 env=(env -u REC_OUTPUT) comm="" lgpid spid="" c0="" c1="" bg=nan
	case "$s" in
	on) env=(env "REC_OUTPUT=$TMP/on.rec"); comm=rec-writer ;;
	burn*) env=(env -u REC_OUTPUT LD_PRELOAD="$TMP/burner.so" BURN_US=1000
		BURN_PERIOD_US=$((1000000 / ${s#burn}))); comm=burner ;;
	esac
	"${env[@]}" "$LG" open --keepalive --rate "$RATE" --duration "$DUR" -- "$RW" --port 0 \
		>"$TMP/out" 2>/dev/null &
	lgpid=$!
	if [ -n "$comm" ]; then
		sleep 1.5
		read -r spid _ <"/proc/$lgpid/task/$lgpid/children" || true # (no newline at its end: read fails, spid is set)
		if [ -n "$spid" ]; then thread_cpu "$spid" "$comm"; c0=$CPU_NS; fi
		sleep "$((DUR - 2))"
		if [ -n "$spid" ]; then thread_cpu "$spid" "$comm"; c1=$CPU_NS; fi
	fi
	wait "$lgpid" || { log "loadgen failed in setting $s"; return 1; }
	local out
	out=$(cat "$TMP/out")
	if [ -n "$c0" ] && [ -n "$c1" ]; then bg=$(awk -v a="$c0" -v b="$c1" -v d="$DUR" 'BEGIN {printf "%.3f", (b - a) / 1e6 / (d - 2)}'); fi
	echo "$(kv p50_us "$out") $(kv p90_us "$out") $(kv p99_us "$out") $bg" >"$TMP/line"
}

START=$(date -u '+%Y-%m-%d %H:%M')
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq 1 "$RUNS"); do
	for s in $SETTINGS; do
		one "$s" || { log "setting $s failed in round $r"; exit 1; }
		line=$(cat "$TMP/line")
		echo "$r $s $line" >>"$TMP/runs"
		log "round $r $s: p50 p90 p99 us, bg ms/s: $line"
	done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

section() {
	echo "## What a background thread's CPU costs the p99 (bench/p99budget.sh)"
	echo
	echo "requestwatch with 16 persistent connections at $RATE requests/s (\`loadgen open --keepalive\`,"
	echo "as bench/load.sh's k* settings), $DUR s a run, $RUNS rounds, the settings alternated in every"
	echo "round; started $START UTC at commit $(git rev-parse --short HEAD), load average $LOAD0 at the"
	echo "start and $LOAD1 at the end. off: recording off; on: recording on, the defaults; burnN:"
	echo "recording off and bench/burner.c preloaded, a thread that works 1 ms at a time, N ms of"
	echo "every second (nothing else: no recording). bg ms/s: the CPU a second of the background"
	echo "thread (rec-writer, burner) measured from /proc while the load ran. Medians over the"
	echo "rounds (min-max); p99 against off round by round: the median change and the rounds above."
	echo
	echo "| setting | bg ms/s | p50 us | p90 us | p99 us | p99 vs off | rounds above off |"
	echo "|---|---|---|---|---|---|---|"
	python3 - "$TMP/runs" "$SETTINGS" <<'PY'
import sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    r, s, *v = line.split()
    rows.setdefault(r, {})[s] = [float(x) for x in v]
def mm(xs):
    xs = [x for x in xs if x == x]
    if not xs:
        return "-"
    f = "%.1f" if max(xs) >= 10 else "%.2f"
    return (f + " (" + f + "-" + f + ")") % (st.median(xs), min(xs), max(xs))
for s in sys.argv[2].split():
    got = [v[s] for v in rows.values() if s in v]
    bg = "-" if s == "off" else mm([g[3] for g in got])
    ch = [100 * (v[s][2] / v["off"][2] - 1) for v in rows.values() if s in v and "off" in v]
    vs = "-" if s == "off" else "%+.1f %%" % st.median(ch)
    above = "-" if s == "off" else "%d of %d" % (sum(c > 0 for c in ch), len(ch))
    print("| %s | %s | %s | %s | %s | %s | %s |" % (s, bg, mm([g[0] for g in got]), mm([g[1] for g in got]),
                                                   mm([g[2] for g in got]), vs, above))
PY
}

section >"$TMP/section.md"
if [ "$STDOUT" = 1 ]; then cat "$TMP/section.md"; else results_section "## What a background thread's CPU costs the p99" "$TMP/section.md"; log "wrote bench/RESULTS.md"; fi
