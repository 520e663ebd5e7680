#!/usr/bin/env bash
# bench/profile.sh [--quick] - profiles behind the goals bench/run.sh found
# missed (issue #7, "say where the time goes"): the example service under the
# open-loop load with the recording off and on (perf record -g of the
# loadgen + service run, report restricted to the service's pid), the
# service's start-up with the recorder's TSC clock and with REC_CLOCK=mono,
# and the recorder's hot path (perf of bench/hotpath, mode on).
#
#   BUILD=build bash bench/profile.sh [--quick]
#
# Environment: PROF_RATE (requests/s; default the rate of the last
# bench/load.sh run from $BUILD/bench/load.kv, else 1000), PROF_DURATION
# (s, default 5; quick 3), PROF_STARTUP_RUNS (default 7; quick 5).
# Needs perf (Debian: linux-perf); without it, says so and prints the
# start-up part only.  Prints a markdown section, also written to
# $BUILD/bench/profile.md.  Run by bench/run.sh after bench/load.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
QUICK=0
[ "${1:-}" = --quick ] && QUICK=1
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
OUT="$BUILD/bench"
PD="$OUT/profile-data"
MD="$OUT/profile.md"
LOG="$OUT/profile-log.txt"
rm -rf "$PD"
mkdir -p "$PD"
: >"$LOG"
say() { printf '[profile %s] %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$LOG" >&2; }
if [ "$QUICK" = 1 ]; then DUR=${PROF_DURATION:-3}; SRUNS=${PROF_STARTUP_RUNS:-5}; else DUR=${PROF_DURATION:-5}; SRUNS=${PROF_STARTUP_RUNS:-7}; fi
RATE=${PROF_RATE:-}
if [ -z "$RATE" ] && [ -s "$OUT/load.kv" ]; then RATE=$(sed -n 's/^rate=//p' "$OUT/load.kv"); fi
RATE=${RATE:-1000}
RW="$BUILD/bin/requestwatch"
LG="$OUT/loadgen"
HOTP="$OUT/hotpath"
if [ ! -x "$LG" ]; then
	bench_flags
	# shellcheck disable=SC2086
	$B_CC $B_CFLAGS -o "$LG" bench/loadgen.c >>"$LOG" 2>&1
fi
HAVE_PERF=0
if command -v perf >/dev/null && perf record -q -o "$PD/probe.perf" -- true >>"$LOG" 2>&1; then HAVE_PERF=1; fi

{
echo "## Profiles (bench/profile.sh)"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg) at the start. $(perf --version 2>/dev/null || echo 'perf: not installed')."
echo
# ---- start-up: where the recorder's start-up time goes --------------------------------------
echo "### Start-up with the recorder: the TSC calibration"
echo
echo "\`loadgen startup -- requestwatch --port 0\` (fork -> \"listening\" line), $SRUNS runs per setting,"
echo "interleaved, median (min-max) ms. The recorder's clock (libfmt/record/clock.c) calibrates the TSC"
echo "against CLOCK_MONOTONIC over 200 us (spinning) when the first recorder opens; REC_CLOCK=mono"
echo "skips that (CLOCK_MONOTONIC timestamps, no calibration)."
echo
for ((r = 1; r <= SRUNS; r++)); do
	env -u REC_OUTPUT "$LG" startup -- "$RW" --port 0 2>>"$LOG" | sed -n 's/.*startup_ms=\([0-9.]*\).*/\1/p' >>"$PD/su.off"
	REC_OUTPUT="$PD/su.rec" "$LG" startup -- "$RW" --port 0 2>>"$LOG" | sed -n 's/.*startup_ms=\([0-9.]*\).*/\1/p' >>"$PD/su.on"
	REC_OUTPUT="$PD/su.rec" REC_CLOCK=mono "$LG" startup -- "$RW" --port 0 2>>"$LOG" | sed -n 's/.*startup_ms=\([0-9.]*\).*/\1/p' >>"$PD/su.mono"
done
echo "| setting | start-up ms | minus off |"
echo "|---|---|---|"
o=$(median <"$PD/su.off")
for s in off on mono; do
	m=$(median <"$PD/su.$s")
	lbl=$s; [ "$s" = on ] && lbl="REC_OUTPUT (TSC clock)"; [ "$s" = mono ] && lbl="REC_OUTPUT, REC_CLOCK=mono"
	echo "| $lbl | $m ($(sort -g "$PD/su.$s" | head -1)-$(sort -g "$PD/su.$s" | tail -1)) | $(awk -v a="$m" -v b="$o" 'BEGIN{printf "%+.1f", a-b}') |"
done
echo

if [ "$HAVE_PERF" = 0 ]; then
	echo "perf is not available here (install Debian's linux-perf): no CPU profiles."
else
# ---- the service under load ------------------------------------------------------------------
echo "### The service under the open-loop load, recording off and on"
echo
echo "\`perf record -F 499 -g -- loadgen open --rate $RATE --duration $DUR -- requestwatch --port 0\` (with"
echo "REC_OUTPUT for \"on\"); \`perf report --pid SERVICE --no-children --sort sym -g none\`: the top symbols of the"
echo "service process only (all its threads), share of its samples. Then, for \"on\", the symbols of the recorder"
echo "(rec_*, the thread-buffer, stack and pool code) with their callers."
echo
for s in off on; do
	f="$PD/load-$s.perf"
	if [ "$s" = on ]; then
		line=$(REC_OUTPUT="$PD/load-on.rec" perf record -q -F 499 -g -o "$f" -- "$LG" open --rate "$RATE" --duration "$DUR" -- "$RW" --port 0 2>>"$LOG") || true
	else
		line=$(env -u REC_OUTPUT perf record -q -F 499 -g -o "$f" -- "$LG" open --rate "$RATE" --duration "$DUR" -- "$RW" --port 0 2>>"$LOG") || true
	fi
	echo "$s: $line" >>"$LOG"
	pid=$(kv service_pid "$line")
	echo "**$s** (p50 $(kv p50_us "$line") us, p99 $(kv p99_us "$line") us, throughput $(kv throughput "$line") req/s, service CPU $(kv service_cpu_s "$line") s for $(kv sent "$line") requests):"
	echo
	echo '```'
	perf report -i "$f" --pid "$pid" --stdio --no-children --sort sym -g none --percent-limit 1.5 2>>"$LOG" |
		grep -v '^#' | grep -v '^$' | head -25 || true
	echo '```'
	echo
done
echo "Recorder code in the \"on\" profile (symbols of libfmt/record, share of the service's samples, with callers):"
echo
echo '```'
perf report -i "$PD/load-on.perf" --pid "$pid" --stdio --no-children --sort sym -g caller,0.5,callee --percent-limit 0.3 2>>"$LOG" |
	grep -v '^#' | awk '/^ +[0-9.]+%/ { keep = ($0 ~ /rec_|tbuf|thread_register|thread_buffer|bg_|ring_|stack_intern|strtab|sampler|posix_memalign|pool_/) } keep' |
	head -60 || true
echo '```'
echo
# ---- the hot path ----------------------------------------------------------------------------
if [ -x "$HOTP" ]; then
	echo "### The hot path (bench/hotpath, recording on)"
	echo
	echo "\`perf record -F 2999 -g -- hotpath --events-per-round 200000 --rounds 9 FILE\` (all modes run; the"
	echo "emit path is inlined into emit_round, the floor's into floor_round), top symbols:"
	echo
	perf record -q -F 2999 -g -o "$PD/hot.perf" -- "$HOTP" --events-per-round 200000 --rounds 9 "$PD/hot.rec" >>"$LOG" 2>&1 || true
	echo '```'
	perf report -i "$PD/hot.perf" --stdio --no-children --sort sym -g none --percent-limit 1 2>>"$LOG" | grep -v '^#' | grep -v '^$' | head -20 || true
	echo '```'
	echo
fi
fi
} | tee "$MD"
say "wrote $MD"
rm -f "$PD"/*.rec
