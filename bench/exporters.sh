#!/usr/bin/env bash
# bench/exporters.sh [--quick] - the exporter benchmark of issue #4: time and
# peak RSS of rec-flame (collapsed, html), rec-lockgraph (wait, order) and
# rec-timeline on a recording of N events with stacks, peak RSS at N_SMALL vs
# N (memory must follow distinct stacks, not events), and rec-flame's
# collapsed output against what a JFR user would do for the same samples:
# `jfr print --json --stack-depth 64 --events bench.CPUSample FILE |
#  python3 bench/jfr/collapse.py`.
#
#   BUILD=build bash bench/exporters.sh           full: N = 10M, JFR N = 20k, 3 runs
#   BUILD=build bash bench/exporters.sh --quick   quick: N = 1M, JFR N = 5k, 3 runs
#
# Environment: EXP_N, EXP_N_SMALL, EXP_JFR_N, EXP_RUNS, EXP_NO_MAKE=1 (use
# $BUILD as it is).  Writes the markdown section to $BUILD/bench/exporters.md
# and prints it.  bench/gen_stacks.c writes our recording (90% rec.CPUSample,
# 10% rec.LockWait, 16 rec.LockOrder, 2000 distinct stacks of depth 8-40 +
# 2 roots, 16 threads); bench/jfr/StackEvents.java commits the same stacks
# (same paths, from real Java frames) as JFR events.  Each command runs
# through bench/runstat.c (wall, user+sys CPU, peak RSS); medians are shown.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh

quick_args 20 "$@"
if [ "$QUICK" = 1 ]; then
	N=${EXP_N:-1000000}; N_SMALL=${EXP_N_SMALL:-100000}; JFR_N=${EXP_JFR_N:-5000}; MODE=quick
else
	N=${EXP_N:-10000000}; N_SMALL=${EXP_N_SMALL:-1000000}; JFR_N=${EXP_JFR_N:-20000}; MODE=full
fi
RUNS=${EXP_RUNS:-3}
BUILD=${BUILD:-build}
OUT="$BUILD/bench"
DATA="$OUT/exp-data"
LOG="$OUT/exporters-log.txt"
MD="$OUT/exporters.md"
mkdir -p "$OUT" "$DATA"
: >"$LOG"
say() { printf '[exporters %s] %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$LOG" >&2; }
die() { say "error: $*"; exit 1; }
for t in java javac jfr python3; do
	command -v "$t" >/dev/null || die "$t not found (needs a JDK 17 with the jfr tool, python3)"
done
if [ "${EXP_NO_MAKE:-0}" != 1 ]; then
	say "building (make all BUILD=$BUILD)"
	make -s all BUILD="$BUILD" >>"$LOG" 2>&1 || die "make all failed (see $LOG)"
fi
BIN="$BUILD/bin"
for t in rec-flame rec-lockgraph rec-timeline; do
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
JCP="$OUT/jfr"
mkdir -p "$JCP"
javac -d "$JCP" bench/jfr/StackEvents.java >>"$LOG" 2>&1 || die "javac failed (see $LOG)"

REC="$DATA/stacks-$N.rec"
REC_SMALL="$DATA/stacks-$N_SMALL.rec"
JFR="$DATA/stacks-$JFR_N.jfr"
say "generating $REC ($N events)"
GEN_LINE=$("$GEN" "$N" "$REC") || die "gen_stacks failed"
say "$GEN_LINE"
"$GEN" "$N_SMALL" "$REC_SMALL" >>"$LOG" || die "gen_stacks failed"
say "generating $JFR ($JFR_N events)"
JGEN_LINE=$(java -cp "$JCP" StackEvents "$JFR_N" "$JFR") || die "StackEvents failed"
JFR_TINY="$DATA/stacks-16.jfr"
java -cp "$JCP" StackEvents 16 "$JFR_TINY" >>"$LOG" || die "StackEvents failed"
say "$JGEN_LINE"
SAMPLES=$(sed -n 's/.*samples=\([0-9]*\).*/\1/p' <<<"$GEN_LINE")

declare -A WALL CPU RSS CMD
# measure NAME "shell command"  (stdout to /dev/null via runstat)
measure() {
	local name=$1 cmd=$2 w=() c=() r=() line
	CMD[$name]=$cmd
	for ((i = 1; i <= RUNS; i++)); do
		line=$("$RUNSTAT" bash -c "set -o pipefail; $cmd" 2>>"$LOG") || die "$name failed: $cmd (see $LOG)"
		read -r ws us ss rss rc <<<"$line"
		[ "$rc" = 0 ] || die "$name exited $rc: $cmd"
		w+=("$ws"); c+=("$(awk -v u="$us" -v s="$ss" 'BEGIN{print u+s}')"); r+=("$rss")
		say "$name run $i: wall ${ws}s cpu $(awk -v u="$us" -v s="$ss" 'BEGIN{print u+s}')s rss ${rss}KB"
	done
	WALL[$name]=$(printf '%s\n' "${w[@]}" | median)
	CPU[$name]=$(printf '%s\n' "${c[@]}" | median)
	RSS[$name]=$(printf '%s\n' "${r[@]}" | median)
}

F="$BIN/rec-flame"; L="$BIN/rec-lockgraph"; T="$BIN/rec-timeline"
for f in "$REC" "$REC_SMALL"; do
	sz=$([ "$f" = "$REC" ] && echo big || echo small)
	measure "flame-collapsed-$sz" "$F $f"
	measure "flame-html-$sz" "$F --format html $f"
	measure "lockgraph-wait-$sz" "$L --graph wait $f"
	measure "lockgraph-order-$sz" "$L --graph order $f 2>/dev/null"
	measure "timeline-$sz" "$T $f"
done
measure "jfr-collapse" "jfr print --json --stack-depth 64 --events bench.CPUSample $JFR | python3 bench/jfr/collapse.py 2>/dev/null"
# the same on 16 events: the fixed cost (two JVM/Python start-ups), subtracted for the marginal rate
measure "jfr-collapse-16" "jfr print --json --stack-depth 64 --events bench.CPUSample $JFR_TINY | python3 bench/jfr/collapse.py 2>/dev/null"
# the JSON alone, to split the JFR time between jfr print and the script
measure "jfr-print" "jfr print --json --stack-depth 64 --events bench.CPUSample $JFR"

# cross-checks: same folded format, same number of distinct stacks (ours)
OURS_LINES=$("$F" "$REC" | wc -l)
JFR_LINES=$(jfr print --json --stack-depth 64 --events bench.CPUSample "$JFR" | python3 bench/jfr/collapse.py 2>/dev/null | wc -l)
JSON_BYTES=$(jfr print --json --stack-depth 64 --events bench.CPUSample "$JFR" | wc -c)

r3() { awk -v x="$1" 'BEGIN{printf "%.3f", x}'; }
mib() { awk -v x="$1" 'BEGIN{printf "%.1f", x/1024}'; }
eps() { awk -v n="$1" -v s="$2" 'BEGIN{ if (s>0) printf "%.0f", n/s; else print "n/a" }'; }
OURS_EPS=$(eps "$SAMPLES" "${WALL[flame-collapsed-big]}")
JFR_EPS=$(eps "$JFR_N" "${WALL[jfr-collapse]}")
JFR_MEPS=$(awk -v n="$JFR_N" -v a="${WALL[jfr-collapse]}" -v b="${WALL[jfr-collapse-16]}" 'BEGIN{ if (a>b) printf "%.0f", (n-16)/(a-b); else print "n/a" }')
RATIO_M=$(awk -v a="$OURS_EPS" -v b="$JFR_MEPS" 'BEGIN{ if (b>0) printf "%.0f", a/b; else print "n/a" }')
RATIO=$(awk -v a="$OURS_EPS" -v b="$JFR_EPS" 'BEGIN{ if (b>0) printf "%.0f", a/b; else print "n/a" }')
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)

{
	echo "## Exporters ($MODE run: $N events, $RUNS runs each, median; commit $COMMIT, $(date -u +%Y-%m-%dT%H:%MZ))"
	echo
	echo "Recording: \`bench/gen_stacks $N FILE\` -> $GEN_LINE"
	echo "(90% rec.CPUSample, 10% rec.LockWait on 8 locks, 16 rec.LockOrder forming one cycle; 2000 distinct stacks"
	echo "of depth 8-40 below 2 root frames; 16 threads).  JFR: \`java StackEvents $JFR_N FILE\` -> $JGEN_LINE"
	echo "(the same 2000 stack paths as real Java frames, 16 threads).  Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "| figure | ours | JFR path | ratio |"
	echo "|---|---|---|---|"
	echo "| collapsed stacks, wall (s) | $(r3 "${WALL[flame-collapsed-big]}") for $SAMPLES samples ($N events) | $(r3 "${WALL[jfr-collapse]}") for $JFR_N samples | |"
	echo "| collapsed stacks, samples/s (wall) | $OURS_EPS | $JFR_EPS | ${RATIO}x |"
	echo "| collapsed stacks, marginal samples/s (JFR: ($JFR_N-16) / (wall($JFR_N) - wall(16 events) = $(r3 "${WALL[jfr-collapse-16]}") s)) | $OURS_EPS | $JFR_MEPS | ${RATIO_M}x |"
	echo "| collapsed stacks, CPU s (user+sys) | $(r3 "${CPU[flame-collapsed-big]}") | $(r3 "${CPU[jfr-collapse]}") (jfr print alone: wall $(r3 "${WALL[jfr-print]}"), CPU $(r3 "${CPU[jfr-print]}"), $JSON_BYTES bytes of JSON) | |"
	echo "| collapsed stacks, peak RSS (MiB) | $(mib "${RSS[flame-collapsed-big]}") | $(mib "${RSS[jfr-collapse]}") | |"
	echo "| distinct stacks in the output | $OURS_LINES | $JFR_LINES (of $JFR_N samples) | |"
	echo
	echo "| exporter | wall s ($N ev) | CPU s | events/s | peak RSS MiB ($N_SMALL ev) | peak RSS MiB ($N ev) |"
	echo "|---|---|---|---|---|---|"
	for x in flame-collapsed flame-html lockgraph-wait lockgraph-order timeline; do
		echo "| $x | $(r3 "${WALL[$x-big]}") | $(r3 "${CPU[$x-big]}") | $(eps "$N" "${WALL[$x-big]}") | $(mib "${RSS[$x-small]}") | $(mib "${RSS[$x-big]}") |"
	done
	echo
	echo "Commands (stdout to /dev/null through bench/runstat; FILE = the $N-event recording):"
	echo
	echo '```'
	for x in flame-collapsed flame-html lockgraph-wait lockgraph-order timeline; do
		echo "${CMD[$x-big]}"
	done
	echo "${CMD[jfr-collapse]}"
	echo '```'
	echo
	echo "The JFR side runs on $JFR_N events, not $N: \`jfr print --json\` writes every frame in full"
	echo "(method, class, class loader, package, module: about $(awk -v b="$JSON_BYTES" -v n="$JFR_N" 'BEGIN{printf "%.0f", b/n}') bytes of JSON per event),"
	echo "so the comparison is per sample (samples/s).  \`--stack-depth 64\` is needed: \`jfr print\` shows 5 frames by default."
} >"$MD"
cat "$MD"
