#!/usr/bin/env bash
# bench/run.sh [--quick] - the reader/format benchmark of issues #2 and #7,
# side by side with JFR (jfr summary / jfr print) in the same run.
#
#   BUILD=build bash bench/run.sh           full: N = 10M events, 5 runs each
#   BUILD=build bash bench/run.sh --quick   quick: N = 500k events, 3 runs each
#   (then bench/exporters.sh, bench/lttng.sh, bench/load.sh, bench/profile.sh
#   append their sections, and RESULTS.md gets the leading table of issue #7)
#   (bench/sidebyside.sh's table goes first; bench/anchors.sh adds JFR 17 and 25)
#   (`make bench` / `make bench-quick` call this with BUILD set.)
#
# Environment overrides: BENCH_N, BENCH_N_SMALL (memory-flatness file),
# BENCH_RUNS, BENCH_JFR_PRINT_N (events in the file `jfr print` reads),
# BENCH_RESULTS (output file, default bench/RESULTS.md), BENCH_NO_HOT=1
# (skip the hot-path runs), BENCH_NO_MAKE=1 (use $BUILD as it is), BENCH_COMMIT
# (commit id to print when run from an exported tree).
#
# What it does: builds the library and tools (make all), compiles
# bench/gen_events.c with the Makefile's own flags and bench/jfr/BenchEvents.java
# with javac into $BUILD/bench/, generates the same event sequence with our
# writer (zstd, lz4, none) and with JFR, then times every reader several times
# and writes medians with min-max to bench/RESULTS.md.  bench/runstat.c runs
# each command: wall time around fork/exec/wait4, user+sys CPU time and peak
# RSS (ru_maxrss, what /usr/bin/time -f %M prints) from wait4's rusage; the
# report cross-checks one RSS figure with /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
ROOT=$PWD

quick_args 23 "$@"

if [ "$QUICK" = 1 ]; then
	N=${BENCH_N:-500000}; N_SMALL=${BENCH_N_SMALL:-200000}; RUNS=${BENCH_RUNS:-3}
	JFR_PRINT_N=${BENCH_JFR_PRINT_N:-20000}; HOT_N=100000; HOT_ROUNDS=3; HOTP_K=50000; HOTP_ROUNDS=9
	# and the JVM runs it can do without (seconds each here): jfr print --json,
	# JFR's hot path on 2 threads and with the type disabled, jfr in the scaling
	QUICK_LEAN=${BENCH_QUICK_LEAN:-1}
	# quick mode leaves out the exporter benchmark and the profiles (minutes
	# each on this machine) unless asked for
	BENCH_NO_EXPORTERS=${BENCH_NO_EXPORTERS:-1}; BENCH_NO_PROFILE=${BENCH_NO_PROFILE:-1}
	MODE="quick"
else
	N=${BENCH_N:-10000000}; N_SMALL=${BENCH_N_SMALL:-1000000}; RUNS=${BENCH_RUNS:-5}
	JFR_PRINT_N=${BENCH_JFR_PRINT_N:-1000000}; HOT_N=2000000; HOT_ROUNDS=7; HOTP_K=200000; HOTP_ROUNDS=31
	MODE="full"
	QUICK_LEAN=0
fi
BUILD=${BUILD:-build}
RESULTS=${BENCH_RESULTS:-bench/RESULTS.md}
OUT="$BUILD/bench"
DATA="$OUT/data"
LOG="$OUT/log.txt"
RAW="$OUT/raw.tsv"
BODY="$OUT/body.md"
mkdir -p "$OUT" "$DATA"
: >"$LOG"
printf 'name\trun\twall_s\tuser_s\tsys_s\tmaxrss_kb\n' >"$RAW"
T_START=$EPOCHREALTIME
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

say() { printf '[bench %s] %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$LOG" >&2; }
die() { say "error: $*"; exit 1; }

# ---- prerequisites ----------------------------------------------------------
if [ ! -x /usr/bin/time ]; then
	say "installing Debian's time package for /usr/bin/time"
	if [ "$(id -u)" = 0 ]; then
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time) >>"$LOG" 2>&1 ||
			die "apt-get install time failed (see $LOG)"
	else
		die "/usr/bin/time is missing: apt-get install time (as root)"
	fi
fi
for t in java javac jfr zstd; do
	command -v "$t" >/dev/null || die "$t not found (needs a JDK 17 with the jfr tool, and zstd)"
done

if [ "${BENCH_NO_MAKE:-0}" != 1 ]; then
	say "building (make all BUILD=$BUILD)"
	make -s all BUILD="$BUILD" >>"$LOG" 2>&1 || die "make all failed (see $LOG)"
fi
BIN="$BUILD/bin"
for t in rec-summary rec-print; do
	[ -x "$BIN/$t" ] || die "$BIN/$t is missing: the tools are not in yet"
done
[ -f "$BUILD/lib/librec.a" ] || die "$BUILD/lib/librec.a is missing"

# gen_events with exactly the flags of the Makefile's build (same make variables).
bench_flags
GEN="$OUT/gen_events"
GEN_CMD="$B_CC $B_CFLAGS -o $GEN bench/gen_events.c $BUILD/lib/librec.a $B_LIBS"
say "compiling gen_events: $GEN_CMD"
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -o "$GEN" bench/gen_events.c "$BUILD/lib/librec.a" $B_LIBS >>"$LOG" 2>&1 ||
	die "gen_events does not compile (see $LOG)"
RUNSTAT="$OUT/runstat"
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -o "$RUNSTAT" bench/runstat.c >>"$LOG" 2>&1 || die "runstat.c does not compile (see $LOG)"
HOTP="$OUT/hotpath"
HOTP_CMD="$B_CC $B_CFLAGS -o $HOTP bench/hotpath.c $BUILD/lib/librec.a $B_LIBS"
HAVE_HOTP=0
if [ "${BENCH_NO_HOT:-0}" != 1 ]; then
	# shellcheck disable=SC2086
	if $B_CC $B_CFLAGS -o "$HOTP" bench/hotpath.c "$BUILD/lib/librec.a" $B_LIBS >>"$LOG" 2>&1; then
		HAVE_HOTP=1
	else
		say "hotpath.c does not build (recorder not in yet?): hot-path table has the JFR anchor only"
	fi
fi
JCP="$OUT/jfr"
mkdir -p "$JCP"
javac -d "$JCP" bench/jfr/BenchEvents.java >>"$LOG" 2>&1 || die "javac failed (see $LOG)"

# ---- helpers ----------------------------------------------------------------
# stats FILE: one number per line -> "median min max"
stats() { sort -g "$1" | awk '{v[NR]=$1} END {if (NR==0) {print "nan nan nan"; exit}
	m = (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; print m, v[1], v[NR]}'; }
fmt() { awk -v x="$1" -v p="${2:-3}" 'BEGIN{ if (x=="nan"||x=="") print "n/a"; else printf "%.*f\n", p, x }'; }
# human count: 2300000 -> 2.30M
hc() { awk -v x="$1" 'BEGIN{ if (x=="nan"||x=="") {print "n/a"; exit}
	if (x>=1e6) printf "%.2fM\n", x/1e6; else if (x>=1e3) printf "%.1fk\n", x/1e3; else printf "%.1f\n", x }'; }
calc() { awk "BEGIN{ printf \"%.6g\n\", $1 }"; }
fsize() { stat -c %s "$1"; }

declare -A MED MIN MAX RSS CMD CPU
# measure NAME CMD...  (stdout to /dev/null; the command must exit 0)
# Every run goes through bench/runstat.c (wall, user+sys CPU, peak RSS).  A
# first run shorter than 0.5 s is a discarded warm-up; otherwise it counts.
measure() {
	local name=$1; shift
	local wf="$OUT/.walls" cf="$OUT/.cpus" ef="$OUT/.err" rss=0 r line w u s m rc
	CMD[$name]="$*"
	say "measure $name: $*"
	: >"$wf"; : >"$cf"
	# run 0: warm-up (discarded) when the command is short
	line=$("$RUNSTAT" "$@" 2>"$ef") || line="0 0 0 0 1"
	read -r w u s m rc <<<"$line"
	if [ "$rc" != 0 ]; then
		say "FAILED: $name (exit $rc): $(tail -3 "$ef" | tr '\n' ' ')"
		MED[$name]=nan; MIN[$name]=nan; MAX[$name]=nan; RSS[$name]=nan; CPU[$name]=nan
		return 0
	fi
	local first_counts=0
	awk -v w="$w" 'BEGIN{exit !(w >= 0.5)}' && first_counts=1
	for ((r = 1; r <= RUNS; r++)); do
		if [ "$r" -gt 1 ] || [ "$first_counts" = 0 ]; then
			line=$("$RUNSTAT" "$@" 2>"$ef") || line="0 0 0 0 1"
			read -r w u s m rc <<<"$line"
			[ "$rc" = 0 ] || { say "FAILED run $r: $name (exit $rc)"; continue; }
		fi
		echo "$w" >>"$wf"
		calc "$u + $s" >>"$cf"
		[ "$m" -gt "$rss" ] && rss=$m
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$r" "$w" "$u" "$s" "$m" >>"$RAW"
	done
	read -r MED[$name] MIN[$name] MAX[$name] < <(stats "$wf")
	read -r CPU[$name] _ _ < <(stats "$cf")
	RSS[$name]=$rss
	say "  $name: median $(fmt "${MED[$name]}" 4) s (min $(fmt "${MIN[$name]}" 4), max $(fmt "${MAX[$name]}" 4)), CPU $(fmt "${CPU[$name]}" 4) s, peak RSS ${rss} KB"
}

# kv KEY LINE: value of KEY=... in a line of key=value pairs

# ---- 1. our files, writer throughput, bytes/event ------------------------------
declare -A GEN_EPS_MED GEN_EPS_MIN GEN_EPS_MAX GEN_BPE
for codec in zstd lz4 none; do
	f="$DATA/ours-$codec-$N.rec"
	: >"$OUT/.eps"; : >"$OUT/.bpe"
	say "writer: $N events, codec $codec, $RUNS runs -> $f"
	for ((r = 1; r <= RUNS; r++)); do
		line=$("$GEN" --codec "$codec" "$N" "$f" 2>>"$LOG") || die "gen_events --codec $codec failed (see $LOG)"
		echo "$line" >>"$LOG"
		kv events_per_s "$line" >>"$OUT/.eps"
		kv bytes_per_event "$line" >>"$OUT/.bpe"
	done
	read -r GEN_EPS_MED[$codec] GEN_EPS_MIN[$codec] GEN_EPS_MAX[$codec] < <(stats "$OUT/.eps")
	read -r GEN_BPE[$codec] _ _ < <(stats "$OUT/.bpe")
	say "  $codec: $(hc "${GEN_EPS_MED[$codec]}") events/s, $(fmt "${GEN_BPE[$codec]}" 3) bytes/event"
done
OURS="$DATA/ours-zstd-$N.rec"
OURS_SMALL="$DATA/ours-zstd-$N_SMALL.rec"
"$GEN" --codec zstd "$N_SMALL" "$OURS_SMALL" >>"$LOG" 2>&1 || die "gen_events (small) failed"
OURS_NONE_Z3=$(zstd -3 -q -c "$DATA/ours-none-$N.rec" | wc -c)
# the same events with synthetic timestamps (ticks = i * 50): how much of the
# size is the clock's jitter
NOCLOCK_LINE=$("$GEN" --codec zstd --no-clock "$N" "$DATA/ours-zstd-noclock-$N.rec" 2>>"$LOG") || NOCLOCK_LINE=""
NOCLOCK_BPE=$(kv bytes_per_event "$NOCLOCK_LINE")
# ... and with value = 0 as well: what is left is framing, type, thread, string, count
CONST_LINE=$("$GEN" --codec zstd --no-clock --value-step 0 "$N" "$DATA/ours-zstd-const-$N.rec" 2>>"$LOG") || CONST_LINE=""
CONST_BPE=$(kv bytes_per_event "$CONST_LINE")

# ---- 2. the JFR files ------------------------------------------------------------
JFR="$DATA/jfr-$N.jfr"
JFR_P="$DATA/jfr-$JFR_PRINT_N.jfr"
say "JFR: writing $N events -> $JFR"
JFR_WRITE_LINE=$(java -cp "$JCP" BenchEvents write "$N" "$JFR" 2>>"$LOG") || die "BenchEvents write failed"
echo "$JFR_WRITE_LINE" >>"$LOG"
if [ "$JFR_PRINT_N" = "$N" ]; then
	JFR_P=$JFR
else
	java -cp "$JCP" BenchEvents write "$JFR_PRINT_N" "$JFR_P" >>"$LOG" 2>&1 || die "BenchEvents write failed"
fi
JFR_TINY="$DATA/jfr-1000.jfr"
java -cp "$JCP" BenchEvents write 1000 "$JFR_TINY" >>"$LOG" 2>&1 || die "BenchEvents write failed"
JFR_BYTES=$(fsize "$JFR")
JFR_Z3=$(zstd -3 -q -c "$JFR" | wc -c)
JFR_BPE=$(calc "$JFR_BYTES / $N")
JFR_Z3_BPE=$(calc "$JFR_Z3 / $N")
JFR_WRITE_EPS=$(kv events_per_s "$JFR_WRITE_LINE")

# ---- 3. readers ------------------------------------------------------------------
X=bench.Sample
measure sum_ours "$BIN/rec-summary" "$OURS"
measure sum_jfr jfr summary "$JFR"
measure print_ours "$BIN/rec-print" --events "$X" "$OURS"
measure print_ours_unsorted "$BIN/rec-print" --unsorted --events "$X" "$OURS"
measure json_ours "$BIN/rec-print" --json "$OURS"
measure print_jfr jfr print --events "$X" "$JFR_P"
if [ "$QUICK_LEAN" = 1 ]; then
	MED[json_jfr]=nan; MIN[json_jfr]=nan; MAX[json_jfr]=nan; RSS[json_jfr]=nan; CPU[json_jfr]=nan; CMD[json_jfr]="(not run in quick mode)"
else
	measure json_jfr jfr print --json "$JFR_P"
fi
# JVM start-up + fixed costs of the jfr tool: the same commands on a 1000-event file
measure print_jfr_tiny jfr print --events "$X" "$JFR_TINY"
if [ "$QUICK_LEAN" = 1 ]; then
	MED[json_jfr_tiny]=nan; MIN[json_jfr_tiny]=nan; MAX[json_jfr_tiny]=nan; RSS[json_jfr_tiny]=nan; CPU[json_jfr_tiny]=nan; CMD[json_jfr_tiny]="(not run in quick mode)"
else
	measure json_jfr_tiny jfr print --json "$JFR_TINY"
fi
# memory flatness: the same tools on the small file
measure sum_ours_small "$BIN/rec-summary" "$OURS_SMALL"
measure print_ours_small "$BIN/rec-print" --events "$X" "$OURS_SMALL"
measure print_ours_unsorted_small "$BIN/rec-print" --unsorted --events "$X" "$OURS_SMALL"
measure json_ours_small "$BIN/rec-print" --json "$OURS_SMALL"

# ---- 4. JFR hot path (anchor for the hot-path table) -------------------------------
declare -A HOT
if [ "$HAVE_HOTP" = 1 ]; then
	HOTP_RUN="$HOTP --events-per-round $HOTP_K --rounds $HOTP_ROUNDS $DATA/hotpath.rec"
	say "hot path (ours): $HOTP_RUN"
	# shellcheck disable=SC2086
	if HOTP_OUT=$($HOTP_RUN 2>>"$LOG"); then
		echo "$HOTP_OUT" >>"$LOG"
		while read -r line; do
			m=$(kv mode "$line"); th=$(kv threads "$line")
			if [ "$m" = paired ]; then # on / floor round by round (hotpath.c)
				HOT[pair.$th]=$(kv ratio_median "$line")
				HOT[pair_range.$th]="$(kv ratio_median "$line") ($(kv ratio_min "$line")-$(kv ratio_max "$line"))"
				HOT[pair_on.$th]=$(kv on_median "$line"); HOT[pair_floor.$th]=$(kv floor_median "$line")
				continue
			fi
			HOT[ours.$m.$th]="$(kv median "$line") ($(kv min "$line")-$(kv max "$line"))"
			HOT[ours_med.$m.$th]=$(kv median "$line")
			HOT[ours_min.$m.$th]=$(kv min "$line")
			HOT[ours_drop.$m.$th]=$(kv dropped "$line")
			HOT[ours_bg.$m.$th]=$(kv bgcpu "$line")
		done <<<"$HOTP_OUT"
	else
		say "hotpath failed (see $LOG)"; HAVE_HOTP=0
	fi
fi
if [ "${BENCH_NO_HOT:-0}" != 1 ]; then
	for th in 1 2; do
		for m in on stack disabled; do
			[ "$QUICK_LEAN" = 1 ] && { [ "$th" = 2 ] || [ "$m" = disabled ]; } && continue
			flag=""; [ "$m" = stack ] && flag=--stack; [ "$m" = disabled ] && flag=--disabled
			say "JFR hot path: $m, $th thread(s), $HOT_ROUNDS rounds of $HOT_N"
			# shellcheck disable=SC2086
			line=$(java -cp "$JCP" BenchEvents hot "$HOT_N" "$HOT_ROUNDS" "$th" $flag 2>>"$LOG") || line="failed"
			echo "$line" >>"$LOG"
			HOT[$m.$th]="$(kv median "$line") ($(kv min "$line")-$(kv max "$line"))"
			HOT[med.$m.$th]=$(kv median "$line")
			HOT[min.$m.$th]=$(kv min "$line")
		done
	done
fi

# ---- 4b. scaling (issue #7 item 5) ---------------------------------------------------
# Readers on 1k .. 100M events (ours), the JFR tools as far as their speed
# allows, and the hot path (bench/hotpath --scale N) on the same sizes.
declare -A SC
if [ "${BENCH_NO_SCALE:-0}" != 1 ]; then
	if [ "$QUICK" = 1 ]; then
		SCALE_SIZES=${BENCH_SCALE_SIZES:-"1000 100000 1000000"}; JFR_SUM_MAX=0; JFR_PRINT_MAX=0
	else
		SCALE_SIZES=${BENCH_SCALE_SIZES:-"1000 10000 100000 1000000 10000000 100000000"}; JFR_SUM_MAX=10000000; JFR_PRINT_MAX=1000000
	fi
	RUNS_SAVED=$RUNS
	for n in $SCALE_SIZES; do
		if [ "$n" = "$N" ]; then f=$OURS; else
			f="$DATA/scale-ours-$n.rec"
			say "scaling: writing $n events -> $f"
			"$GEN" --codec zstd "$n" "$f" >>"$LOG" 2>&1 || die "gen_events $n failed"
		fi
		SC[bytes.$n]=$(fsize "$f")
		# one run per reader on 100M events and more (minutes each otherwise)
		RUNS=$RUNS_SAVED; [ "$n" -ge 100000000 ] && RUNS=1
		SC[runs.$n]=$RUNS
		measure "sc_sum_$n" "$BIN/rec-summary" "$f"
		measure "sc_print_$n" "$BIN/rec-print" --events "$X" "$f"
		RUNS=$RUNS_SAVED
		[ "$f" = "$OURS" ] || rm -f "$f"
		if [ "$n" -le "$JFR_SUM_MAX" ] || [ "$n" -le "$JFR_PRINT_MAX" ]; then
			case "$n" in
			"$N") jf=$JFR ;;
			"$JFR_PRINT_N") jf=$JFR_P ;;
			1000) jf=$JFR_TINY ;;
			*) jf="$DATA/scale-jfr-$n.jfr"
			   java -cp "$JCP" BenchEvents write "$n" "$jf" >>"$LOG" 2>&1 || die "BenchEvents write $n failed" ;;
			esac
			if [ "$n" -le "$JFR_SUM_MAX" ]; then
				if [ "$jf" = "$JFR" ]; then   # measured above on the same file
					MED[sc_jsum_$n]=${MED[sum_jfr]}; RSS[sc_jsum_$n]=${RSS[sum_jfr]}
				else
					measure "sc_jsum_$n" jfr summary "$jf"
				fi
			fi
			if [ "$n" -le "$JFR_PRINT_MAX" ]; then
				if [ "$jf" = "$JFR_P" ]; then
					MED[sc_jprint_$n]=${MED[print_jfr]}; RSS[sc_jprint_$n]=${RSS[print_jfr]}
				elif [ "$jf" = "$JFR_TINY" ]; then
					MED[sc_jprint_$n]=${MED[print_jfr_tiny]}; RSS[sc_jprint_$n]=${RSS[print_jfr_tiny]}
				else
					measure "sc_jprint_$n" jfr print --events "$X" "$jf"
				fi
			fi
		fi
		if [ "$HAVE_HOTP" = 1 ]; then
			say "scaling: hot path, $n events: $HOTP --scale $n FILE"
			if line=$("$HOTP" --scale "$n" "$DATA/scale-hot.rec" 2>>"$LOG"); then
				echo "$line" >>"$LOG"
				SC[hot.$n]=$(kv ns_per_event "$line"); SC[hotmed.$n]=$(kv round_median "$line")
				SC[hotrss.$n]=$(kv maxrss_kb "$line"); SC[hotdrop.$n]=$(kv dropped "$line")
				SC[hotev.$n]=$(kv events "$line"); SC[hotbg.$n]=$(kv bgcpu "$line")
			else
				say "hotpath --scale $n failed (see $LOG)"
			fi
			rm -f "$DATA/scale-hot.rec"
		fi
	done
fi

# shellcheck disable=SC2086
TIME_XCHECK=$(/usr/bin/time -f %M ${CMD[print_ours]} 2>&1 >/dev/null | tail -1)
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
T_END=$EPOCHREALTIME
ELAPSED=$(calc "$T_END - $T_START")

# ---- 5. report -------------------------------------------------------------------
eps() { awk -v n="$1" -v t="$2" 'BEGIN{ if (t=="nan"||t<=0) print "nan"; else printf "%.0f\n", n/t }'; }
mbs() { awk -v b="$1" -v t="$2" 'BEGIN{ if (t=="nan"||t<=0) print "nan"; else printf "%.1f\n", b/t/1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a=="nan"||b=="nan"||b==0) print "nan"; else printf "%.2f\n", a/b }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a=="nan") print "n/a"; else print (a>=b) ? "yes" : "**no**" }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a=="nan") print "n/a"; else print (a<=b) ? "yes" : "**no**" }'; }
range() { echo "$(fmt "${MED[$1]}" "${2:-3}") s ($(fmt "${MIN[$1]}" "${2:-3}")-$(fmt "${MAX[$1]}" "${2:-3}"))"; }
mib() { awk -v k="$1" 'BEGIN{ if (k=="nan"||k=="") print "n/a"; else printf "%.1f MiB\n", k/1024 }'; }

OURS_BYTES=$(fsize "$OURS"); OURS_SMALL_BYTES=$(fsize "$OURS_SMALL"); JFR_P_BYTES=$(fsize "$JFR_P")
SUM_RATIO=$(ratio "${MED[sum_jfr]}" "${MED[sum_ours]}")
# jfr print's rate without its fixed start-up (measured on the 1000-event file),
# i.e. what it reaches on a large file; the goal ratios use this (favours JFR).
net() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a=="nan"||b=="nan"||a-b<=0) print "nan"; else printf "%.6f\n", a-b }'; }
P_OURS_EPS=$(eps "$N" "${MED[print_ours]}"); P_JFR_EPS=$(eps "$JFR_PRINT_N" "$(net "${MED[print_jfr]}" "${MED[print_jfr_tiny]}")")
J_OURS_EPS=$(eps "$N" "${MED[json_ours]}"); J_JFR_EPS=$(eps "$JFR_PRINT_N" "$(net "${MED[json_jfr]}" "${MED[json_jfr_tiny]}")")
P_JFR_EPS_RAW=$(eps "$JFR_PRINT_N" "${MED[print_jfr]}"); J_JFR_EPS_RAW=$(eps "$JFR_PRINT_N" "${MED[json_jfr]}")
PU_OURS_EPS=$(eps "$N" "${MED[print_ours_unsorted]}")
# The same on CPU time (user+sys of the process, all its threads): less
# sensitive to other jobs on this shared machine.
SUM_RATIO_CPU=$(ratio "${CPU[sum_jfr]}" "${CPU[sum_ours]}")
P_RATIO_CPU=$(ratio "$(eps "$N" "${CPU[print_ours]}")" "$(eps "$JFR_PRINT_N" "$(net "${CPU[print_jfr]}" "${CPU[print_jfr_tiny]}")")")
J_RATIO_CPU=$(ratio "$(eps "$N" "${CPU[json_ours]}")" "$(eps "$JFR_PRINT_N" "$(net "${CPU[json_jfr]}" "${CPU[json_jfr_tiny]}")")")
P_RATIO=$(ratio "$P_OURS_EPS" "$P_JFR_EPS"); J_RATIO=$(ratio "$J_OURS_EPS" "$J_JFR_EPS")
BPE_RATIO=$(ratio "${GEN_BPE[zstd]}" "$JFR_Z3_BPE")
BPE_RATIO_ISSUE=$(ratio "${GEN_BPE[zstd]}" 6.5)
# flat: peak RSS on the N file at most 1.25x that on the N_SMALL file (+1 MiB slack)
flat() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a=="nan"||b=="nan") print "n/a"; else print (a <= 1.25*b+1024) ? "yes" : "**no**" }'; }
FLAT_SUM=$(flat "${RSS[sum_ours]}" "${RSS[sum_ours_small]}")
FLAT_PRINT=$(flat "${RSS[print_ours]}" "${RSS[print_ours_small]}")
FLAT_PRINTU=$(flat "${RSS[print_ours_unsorted]}" "${RSS[print_ours_unsorted_small]}")
FLAT_JSON=$(flat "${RSS[json_ours]}" "${RSS[json_ours_small]}")
P_OURS_CPU_EPS=$(eps "$N" "${CPU[print_ours]}")
P_MET_CPU=$(awk -v r="$P_RATIO_CPU" -v e="$P_OURS_CPU_EPS" 'BEGIN{ if (r=="nan") print "n/a"; else print (r>=20 && e>=2300000) ? "yes" : "**no**" }')
P_MET=$(awk -v r="$P_RATIO" -v e="$P_OURS_EPS" 'BEGIN{ if (r=="nan") print "n/a"; else print (r>=20 && e>=2300000) ? "yes" : "**no**" }')
CPU_MODEL=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
GCCV=$("$B_CC" --version | head -1)
JAVAV=$(java -version 2>&1 | tr '\n' ' ' | sed 's/ *$//')
ZSTDV=$(pkg-config --modversion libzstd 2>/dev/null || echo "?")
LZ4V=$(pkg-config --modversion liblz4 2>/dev/null || echo "?")
LTTNG=$(apt-cache policy lttng-tools liblttng-ust-dev babeltrace2 2>/dev/null |
	awk '/^[a-z]/{p=$1} /Installed:/{i=$2} /Candidate:/{printf "%s installed %s, candidate %s; ", p, i, $2}')
# BENCH_COMMIT: name the commit when running from an exported tree (git archive)
GIT=${BENCH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo "?")}
if [ -z "${BENCH_COMMIT:-}" ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	GIT="$GIT (with uncommitted changes in the tree)"
fi
RUNCMD="bash bench/run.sh"; [ "$QUICK" = 1 ] && RUNCMD="bash bench/run.sh --quick"

{
cat <<EOF
## Readers and format against JFR (the goals of issue #2)

This part of the run took $(fmt "$ELAPSED" 0) s (load average $LOAD_START at its start, $LOAD_END at its end). N = $N events.

| figure | ours | JFR | ratio (wall) | ratio (CPU time) | goal | met? (wall) | met? (CPU) |
|---|---|---|---|---|---|---|---|
| summary wall time, $(hc "$N") events | $(range sum_ours 4) | $(range sum_jfr 3) | $(fmt "$SUM_RATIO" 1)x faster | $(fmt "$SUM_RATIO_CPU" 1)x | >= 50x | $(ge "$SUM_RATIO" 50) | $(ge "$SUM_RATIO_CPU" 50) |
| print text (\`--events $X\`), events/s | $(hc "$P_OURS_EPS")/s (CPU: $(hc "$P_OURS_CPU_EPS")/s) | $(hc "$P_JFR_EPS")/s | $(fmt "$P_RATIO" 1)x | $(fmt "$P_RATIO_CPU" 1)x | >= 20x and >= 2.3M/s | $P_MET | $P_MET_CPU |
| print \`--json\`, events/s | $(hc "$J_OURS_EPS")/s | $(hc "$J_JFR_EPS")/s | $(fmt "$J_RATIO" 1)x | $(fmt "$J_RATIO_CPU" 1)x | >= 20x (goal read as applying to --json too) | $(ge "$J_RATIO" 20) | $(ge "$J_RATIO_CPU" 20) |
| bytes/event, ours zstd (default level) vs JFR file after \`zstd -3\` | $(fmt "${GEN_BPE[zstd]}" 2) | $(fmt "$JFR_Z3_BPE" 2) | $(fmt "$BPE_RATIO" 2)x | | <= 0.8x | $(le "$BPE_RATIO" 0.8) | |
| same, against the issue's reference figure (6.5 B/event) | $(fmt "${GEN_BPE[zstd]}" 2) | 6.5 | $(fmt "$BPE_RATIO_ISSUE" 2)x | | <= 0.8x | $(le "$BPE_RATIO_ISSUE" 0.8) | |
| rec-summary peak RSS, $(hc "$N_SMALL") -> $(hc "$N") events | $(mib "${RSS[sum_ours_small]}") -> $(mib "${RSS[sum_ours]}") | $(mib "${RSS[sum_jfr]}") ($(hc "$N")) | | | flat | $FLAT_SUM | |
| rec-print --events peak RSS, $(hc "$N_SMALL") -> $(hc "$N") | $(mib "${RSS[print_ours_small]}") -> $(mib "${RSS[print_ours]}") | $(mib "${RSS[print_jfr]}") ($(hc "$JFR_PRINT_N")) | | | flat | $FLAT_PRINT | |
| rec-print --json peak RSS, $(hc "$N_SMALL") -> $(hc "$N") | $(mib "${RSS[json_ours_small]}") -> $(mib "${RSS[json_ours]}") | $(mib "${RSS[json_jfr]}") ($(hc "$JFR_PRINT_N")) | | | flat | $FLAT_JSON | |

"met? (wall)" is judged on the wall-time medians, as the goals are stated. "met? (CPU)" uses the
median user+sys CPU time of each process instead, which depends much less on the other jobs sharing
this machine (at the load averages above a process gets well under one core); JFR's CPU time
includes the JVM's JIT and GC threads, so its CPU ratios favour us somewhat more than wall ratios
on an idle machine would.

"Flat" here means: peak RSS on the $(hc "$N")-event file is at most 1.25x (+1 MiB) that on the
$(hc "$N_SMALL")-event file (a 4 MiB-raw chunk holds about 350k of these events, so both files span
several chunks). \`jfr print\` is timed on a $(hc "$JFR_PRINT_N")-event JFR file of the same event
sequence, because at its rate $(hc "$N") events would take about $(awk -v n="$N" -v e="$P_JFR_EPS" 'BEGIN{ if (e=="nan") print "?"; else printf "%.0f", n/e }') s per run (text). Its events/s
in the table exclude its fixed start-up cost (the median time of the same command on a 1000-event
file: $(fmt "${MED[print_jfr_tiny]}" 2) s text, $(fmt "${MED[json_jfr_tiny]}" 2) s JSON), which is the rate it reaches on a large file and
the comparison least favourable to us; with start-up included they are $(hc "$P_JFR_EPS_RAW")/s (text) and
$(hc "$J_JFR_EPS_RAW")/s (JSON). \`jfr summary\` reads the full $(hc "$N")-event file and its time includes JVM
start-up, as in issue #2's reference figure (0.86 s, 0.25 s of it start-up).

## Bytes per event ($(hc "$N") events)

| file | bytes | bytes/event |
|---|---|---|
| ours, zstd (the codec default: level 1, minMatch 4) | $(fsize "$DATA/ours-zstd-$N.rec") | $(fmt "${GEN_BPE[zstd]}" 3) |
| ours, lz4 | $(fsize "$DATA/ours-lz4-$N.rec") | $(fmt "${GEN_BPE[lz4]}" 3) |
| ours, none | $(fsize "$DATA/ours-none-$N.rec") | $(fmt "${GEN_BPE[none]}" 3) |
| ours, none, then \`zstd -3\` of the whole file | $OURS_NONE_Z3 | $(fmt "$(calc "$OURS_NONE_Z3 / $N")" 3) |
| ours, zstd, synthetic timestamps every 50 ns (\`--no-clock\`, one run) | $(fsize "$DATA/ours-zstd-noclock-$N.rec" 2>/dev/null || echo n/a) | $(fmt "${NOCLOCK_BPE:-nan}" 3) |
| ours, zstd, synthetic timestamps and value = 0 (\`--no-clock --value-step 0\`) | $(fsize "$DATA/ours-zstd-const-$N.rec" 2>/dev/null || echo n/a) | $(fmt "${CONST_BPE:-nan}" 3) |
| JFR (JDK 17), raw | $JFR_BYTES | $(fmt "$JFR_BPE" 3) |
| JFR, \`zstd -3\` of the whole file | $JFR_Z3 | $(fmt "$JFR_Z3_BPE" 3) |

Bytes/event of ours are medians over the $RUNS writer runs. Timestamps are real clock reads, so
the size depends a little on how fast the generator ran (slower runs have larger deltas): under load
it grows by a few percent. JFR's timestamps are real clock reads too. Where our compressed bytes go
(differences of the rows above): the clock's jitter in the timestamp deltas about
$(fmt "$(calc "${GEN_BPE[zstd]} - ${NOCLOCK_BPE:-0}")" 2) B/event, the i64 field \`value = i * 7919\` (an arithmetic sequence that
LZ matching cannot predict) about $(fmt "$(calc "${NOCLOCK_BPE:-0} - ${CONST_BPE:-0}")" 2) B/event, everything else $(fmt "${CONST_BPE:-nan}" 2) B/event. Note: JDK 17 writes this event's 12-character \`String\` field inline (encoding
byte, length, 12 bytes) rather than through its string pool, so the raw JFR figure here is higher
than the ~19 bytes/event quoted in issue #2; after \`zstd -3\` the difference mostly disappears.

## Readers

| tool | command | file | wall time, median (min-max) | CPU time | events/s | input MB/s | peak RSS |
|---|---|---|---|---|---|---|---|
EOF
row() { # name events bytes label
	echo "| $4 | \`${CMD[$1]}\` | $(hc "$2") events, $(awk -v b="$3" 'BEGIN{printf "%.1f MB", b/1e6}') | $(range "$1" 4) | $(fmt "${CPU[$1]}" 4) s | $(hc "$(eps "$2" "${MED[$1]}")") | $(fmt "$(mbs "$3" "${MED[$1]}")" 1) | $(mib "${RSS[$1]}") |"
}
row sum_ours "$N" "$OURS_BYTES" "rec-summary"
row sum_jfr "$N" "$JFR_BYTES" "jfr summary"
row print_ours "$N" "$OURS_BYTES" "rec-print text (sorted, the default)"
row print_ours_unsorted "$N" "$OURS_BYTES" "rec-print text --unsorted"
row print_jfr "$JFR_PRINT_N" "$JFR_P_BYTES" "jfr print"
row json_ours "$N" "$OURS_BYTES" "rec-print --json"
row json_jfr "$JFR_PRINT_N" "$JFR_P_BYTES" "jfr print --json"
row print_jfr_tiny 1000 "$(fsize "$JFR_TINY")" "jfr print (start-up: 1000 events)"
row json_jfr_tiny 1000 "$(fsize "$JFR_TINY")" "jfr print --json (start-up: 1000 events)"
row sum_ours_small "$N_SMALL" "$OURS_SMALL_BYTES" "rec-summary (small file)"
row print_ours_small "$N_SMALL" "$OURS_SMALL_BYTES" "rec-print text (small file)"
row print_ours_unsorted_small "$N_SMALL" "$OURS_SMALL_BYTES" "rec-print text --unsorted (small file)"
row json_ours_small "$N_SMALL" "$OURS_SMALL_BYTES" "rec-print --json (small file)"
cat <<EOF

Output goes to /dev/null. events/s and "input MB/s" (the recording's size) are per wall-time second.
CPU time is the median user+sys (all threads). Peak RSS is the largest ru_maxrss over the runs, read
by bench/runstat.c from wait4() exactly as GNU time does (cross-check: \`/usr/bin/time -f %M\` on
the rec-print text command above said $TIME_XCHECK KB); about 1 MiB of any figure is the memory of the
small parent the command was forked from, which the kernel's maxrss includes.

## Writer throughput (extra information)

| writer | events/s, median (min-max) |
|---|---|
| ours, \`gen_events --codec zstd\` | $(hc "${GEN_EPS_MED[zstd]}") ($(hc "${GEN_EPS_MIN[zstd]}")-$(hc "${GEN_EPS_MAX[zstd]}")) |
| ours, \`gen_events --codec lz4\` | $(hc "${GEN_EPS_MED[lz4]}") ($(hc "${GEN_EPS_MIN[lz4]}")-$(hc "${GEN_EPS_MAX[lz4]}")) |
| ours, \`gen_events --codec none\` | $(hc "${GEN_EPS_MED[none]}") ($(hc "${GEN_EPS_MIN[none]}")-$(hc "${GEN_EPS_MAX[none]}")) |
| JFR, \`BenchEvents write\` (one run, includes JIT warm-up) | $(hc "$JFR_WRITE_EPS") |

gen_events times open..close (event encoding through rec_writer_begin/put/end, a clock_gettime per
event, compression, write); it is not the recorder's hot path.
EOF
if [ "${BENCH_NO_HOT:-0}" != 1 ]; then
hx() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a==""||b==""||a=="nan"||b=="nan"||b<=0) print "n/a"; else printf "%.1fx\n", a/b }'; }
hv() { local v=${HOT[$1]:-}; echo "${v:-not measured}"; }
cat <<EOF

## Hot path (ns per event, per thread; issue #7 item 1)

Median (min-max) over rounds x threads. Ours: \`${HOTP_RUN:-bench/hotpath (recorder not built)}\`
($HOTP_ROUNDS rounds of $(hc "$HOTP_K") events per thread after warm-up rounds that write every page of the
16 MiB thread buffers once; the recorder is flushed between rounds outside the timed part, so a round never
drops). JFR:
\`java -cp $JCP BenchEvents hot $HOT_N $HOT_ROUNDS THREADS [--stack|--disabled]\` (2 warm-up rounds, then
$HOT_ROUNDS rounds of $(hc "$HOT_N") commits per thread with a recording to a file running). With the JFR type
disabled the JIT removes the whole commit, so its loop measures ~0 ns.

| case | ours, 1 thread | ours, 2 threads | JFR, 1 thread | JFR, 2 threads | JFR / ours, 1 thread: medians (minima) | goal |
|---|---|---|---|---|---|---|
| recording on | $(hv ours.on.1) | $(hv ours.on.2) | $(hv on.1) | $(hv on.2) | $(hx "${HOT[med.on.1]:-}" "${HOT[ours_med.on.1]:-}") ($(hx "${HOT[min.on.1]:-}" "${HOT[ours_min.on.1]:-}")) | >= 6x cheaper than JFR; <= 1.5x floor |
| on, stack traces | $(hv ours.stack.1) | $(hv ours.stack.2) | $(hv stack.1) | $(hv stack.2) | $(hx "${HOT[med.stack.1]:-}" "${HOT[ours_med.stack.1]:-}") ($(hx "${HOT[min.stack.1]:-}" "${HOT[ours_min.stack.1]:-}")) | >= 5x cheaper than JFR with stacks |
| type disabled | $(hv ours.disabled.1) | $(hv ours.disabled.2) | $(hv disabled.1) | $(hv disabled.2) | | |
| floor: rdtsc + plain stores of the same bytes | $(hv ours.floor.1) | $(hv ours.floor.2) | | | | |

Recording on vs the floor: medians $(hx "${HOT[ours_med.on.1]:-}" "${HOT[ours_med.floor.1]:-}") (1 thread), $(hx "${HOT[ours_med.on.2]:-}" "${HOT[ours_med.floor.2]:-}") (2 threads);
minima $(hx "${HOT[ours_min.on.1]:-}" "${HOT[ours_min.floor.1]:-}") (1 thread), $(hx "${HOT[ours_min.on.2]:-}" "${HOT[ours_min.floor.2]:-}") (2 threads); goal <= 1.5x.
Paired (hotpath's paired case: both in each round, one after the other, the ratio per round;
the goal is judged on it): 1 thread ${HOT[pair_range.1]:-n/a}x (on ${HOT[pair_on.1]:-n/a}, floor
${HOT[pair_floor.1]:-n/a} ns), 2 threads ${HOT[pair_range.2]:-n/a}x (on ${HOT[pair_on.2]:-n/a}, floor
${HOT[pair_floor.2]:-n/a} ns), median (min-max) over rounds x threads. A round of ours lasts a few
milliseconds, so on this shared machine a preempted round inflates the median; the minima are the
cost without interference.
Events dropped by the recorder: on ${HOT[ours_drop.on.1]:-n/a}/${HOT[ours_drop.on.2]:-n/a}, stack
${HOT[ours_drop.stack.1]:-n/a}/${HOT[ours_drop.stack.2]:-n/a} (1/2 threads).
Background CPU per recorded event (the recorder's writer thread: draining the thread buffers, chunk
encoding, zstd at the codec default, write; \`rec_recorder_stats.background_cpu_ns\` / events, whole recording):
recording on ${HOT[ours_bg.on.1]:-n/a} ns (1 thread), ${HOT[ours_bg.on.2]:-n/a} ns (2 threads); with stack
traces ${HOT[ours_bg.stack.1]:-n/a} / ${HOT[ours_bg.stack.2]:-n/a} ns. On a busy 2-core host this CPU
competes with the service; it is not part of the per-event hot-path figures above.
LTTng-UST: see the LTTng section below when \`bench/lttng.sh\` ran.
hotpath compiled with: \`$HOTP_CMD\`
EOF
fi
if [ "${BENCH_NO_SCALE:-0}" != 1 ]; then
npe() { awk -v t="$1" -v n="$2" 'BEGIN{ if (t==""||t=="nan") print "nan"; else printf "%.2f\n", t/n*1e9 }'; }
sec() { awk -v t="$1" 'BEGIN{ if (t==""||t=="nan") print "-"; else printf "%.4f\n", t }'; }
cat <<EOF

## Scaling (issue #7 item 5)

The same event sequence as above at every size (\`$GEN --codec zstd N FILE\`), readers timed through
bench/runstat ($RUNS runs each, median; a single run on 100M events and more). jfr summary runs up to
$(hc "$JFR_SUM_MAX") events and jfr print up to $(hc "$JFR_PRINT_MAX") (at its rate of about 25k events/s, 10M events would take
about 7 minutes per run, 100M over an hour; its 1M-event run already needs about 2 GiB), so above
those sizes only ours are measured. Hot path: \`$HOTP --scale N FILE\`: one thread, recording on, N
events in rounds of 200k with a flush between rounds (outside the timed part), after untimed warm-up
rounds that touch every page of the 16 MiB thread buffer; "mean" is total time / N, "round median"
the median over rounds of time / events (less sensitive to preemption); the peak RSS of that process
is the recorder's memory at its limit (16 MiB thread buffer, pools, chunk buffers) plus the program.

| events | file MB | rec-summary s | ns/event | peak RSS | rec-print s | ns/event | peak RSS | jfr summary s | peak RSS | jfr print s | peak RSS | hot path ns/event: mean; round median | hot path peak RSS | hot path dropped |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
EOF
for n in $SCALE_SIZES; do
	jsr=-; [ -n "${RSS[sc_jsum_$n]:-}" ] && jsr=$(mib "${RSS[sc_jsum_$n]}")
	jpr=-; [ -n "${RSS[sc_jprint_$n]:-}" ] && jpr=$(mib "${RSS[sc_jprint_$n]}")
	echo "| $(hc "$n") | $(awk -v b="${SC[bytes.$n]:-0}" 'BEGIN{printf "%.2f", b/1e6}') | $(sec "${MED[sc_sum_$n]:-}") | $(npe "${MED[sc_sum_$n]:-}" "$n") | $(mib "${RSS[sc_sum_$n]:-}") | $(sec "${MED[sc_print_$n]:-}") | $(npe "${MED[sc_print_$n]:-}" "$n") | $(mib "${RSS[sc_print_$n]:-}") | $(sec "${MED[sc_jsum_$n]:-}") | $jsr | $(sec "${MED[sc_jprint_$n]:-}") | $jpr | ${SC[hot.$n]:-n/a}; ${SC[hotmed.$n]:-n/a} | $(mib "${SC[hotrss.$n]:-}") | ${SC[hotdrop.$n]:-n/a} of ${SC[hotev.$n]:-n/a} |"
done
# flatness: the largest size against the reference size (1M; 100k when the largest is 1M)
SC_MAX=${SCALE_SIZES##* }
SC_REF=1000000; [ "$SC_MAX" -le 1000000 ] && SC_REF=100000
SC_LIN_SUM=$(ratio "$(npe "${MED[sc_sum_$SC_MAX]:-nan}" "$SC_MAX")" "$(npe "${MED[sc_sum_$SC_REF]:-nan}" "$SC_REF")")
SC_LIN_PRINT=$(ratio "$(npe "${MED[sc_print_$SC_MAX]:-nan}" "$SC_MAX")" "$(npe "${MED[sc_print_$SC_REF]:-nan}" "$SC_REF")")
SC_RSS_SUM=$(flat "${RSS[sc_sum_$SC_MAX]:-nan}" "${RSS[sc_sum_$SC_REF]:-nan}")
SC_RSS_PRINT=$(flat "${RSS[sc_print_$SC_MAX]:-nan}" "${RSS[sc_print_$SC_REF]:-nan}")
SC_HOT=$(ratio "${SC[hotmed.$SC_MAX]:-nan}" "${SC[hotmed.$SC_REF]:-nan}")
SC_HOT_RSS=$(flat "${SC[hotrss.$SC_MAX]:-nan}" "${SC[hotrss.$SC_REF]:-nan}")
cat <<EOF

Time per event at $(hc "$SC_MAX") events against $(hc "$SC_REF") (below that, process start-up dominates;
rec-summary reads only chunk headers and statistics, so its time grows with the number of chunks, not
of events): rec-summary $(fmt "$SC_LIN_SUM" 2)x, rec-print $(fmt "$SC_LIN_PRINT" 2)x, hot path (round medians)
$(fmt "$SC_HOT" 2)x (flat = at most 1.5x). Peak RSS at $(hc "$SC_MAX") against $(hc "$SC_REF") within 1.25x + 1 MiB:
rec-summary $SC_RSS_SUM, rec-print $SC_RSS_PRINT, hot path (the recorder) $SC_HOT_RSS.
EOF
fi
cat <<EOF

## Machine

- CPU: $CPU_MODEL, $(nproc) cores online (shared with other jobs)
- Kernel: $(uname -sr)
- Compiler: $GCCV
- libzstd $ZSTDV, liblz4 $LZ4V; zstd CLI $(zstd --version 2>/dev/null | sed -n 's/.*v\([0-9.]*\).*/\1/p')
- Java: $JAVAV
- LTTng / babeltrace2 (measured by bench/lttng.sh, section at the end): $LTTNG

## What each figure is, and the exact commands

- Event: type \`bench.Sample\` with a thread reference and 3 fields: \`name\` (pooled string,
  one of 16 12-character names, \`names[i % 16]\`), \`value\` (i64, \`i * 7919\`), \`count\` (i32,
  \`i % 1000\`); JFR's \`BenchEvents\` commits the same sequence as a \`jdk.jfr.Event\` (recording with
  only this event enabled, threshold 0, no stack traces).
- gen_events compiled with the Makefile's flags:
  \`$GEN_CMD\`
- Our files: \`$GEN --codec zstd|lz4|none $N $DATA/ours-CODEC-$N.rec\` ($RUNS runs each) and
  \`$GEN --codec zstd $N_SMALL $OURS_SMALL\`.
- JFR files: \`java -cp $JCP BenchEvents write $N $JFR\` (and $JFR_PRINT_N events to \`$JFR_P\`);
  compressed size: \`zstd -3 -q -c $JFR | wc -c\`.
- Readers: the commands in the Readers table, each run $RUNS times with stdout to /dev/null.
- Raw per-run numbers: \`$RAW\`; log: \`$LOG\`.
EOF
} >"$BODY"
say "wrote $BODY (${ELAPSED%.*} s)"

# ---- anchors, exporters and the load test with scripts of their own, appended ----------
# (BENCH_NO_LTTNG=1 / BENCH_NO_EXPORTERS=1 / BENCH_NO_LOAD=1 skip them; each prints one
# markdown section; lttng.sh and load.sh also leave key=value figures for the table below)
rm -f "$OUT/lttng.kv" "$OUT/load.kv"
if [ "${BENCH_NO_EXPORTERS:-0}" != 1 ]; then
	say "exporters: bench/exporters.sh"
	xq=""; [ "$QUICK" = 1 ] && xq=--quick
	if sec=$(EXP_NO_MAKE=1 BUILD="$BUILD" bash bench/exporters.sh $xq 2>>"$LOG"); then
		printf '\n%s\n' "$sec" >>"$BODY"
	else
		printf '\n## Exporters\n\nbench/exporters.sh failed; see %s\n' "$LOG" >>"$BODY"
	fi
fi
if [ "${BENCH_NO_LTTNG:-0}" != 1 ]; then
	say "LTTng-UST anchor: bench/lttng.sh"
	if [ "$QUICK" = 1 ]; then export LTTNG_N=${LTTNG_N:-300000} LTTNG_READ_RUNS=${LTTNG_READ_RUNS:-1} LTTNG_ROUNDS=${LTTNG_ROUNDS:-3} LTTNG_K=${LTTNG_K:-100000}; fi
	sec=$(BUILD="$BUILD" bash bench/lttng.sh 2>>"$LOG") || true
	printf '\n%s\n' "$sec" >>"$BODY"
fi
if [ "${BENCH_NO_LOAD:-0}" != 1 ]; then
	say "service under load: bench/load.sh"
	lq=""; [ "$QUICK" = 1 ] && lq=--quick
	sec=$(BUILD="$BUILD" bash bench/load.sh $lq 2>>"$LOG") || true
	printf '\n%s\n' "$sec" >>"$BODY"
fi
# issue 22: the side-by-side table (goes first in RESULTS.md) and the JFR anchors on both JDKs
SBS_SEC=""; rm -f "$OUT/sidebyside.kv" "$OUT/anchors.kv" "$OUT/bgcost.kv"; qq=""; [ "$QUICK" = 1 ] && qq=--quick
[ "${BENCH_NO_SIDEBYSIDE:-0}" != 1 ] && { say "side by side: bench/sidebyside.sh"; SBS_SEC=$(BUILD="$BUILD" bash bench/sidebyside.sh $qq 2>>"$LOG") || true; }
[ "${BENCH_NO_ANCHORS:-0}" != 1 ] && { say "anchors: bench/anchors.sh"; sec=$(BUILD="$BUILD" bash bench/anchors.sh $qq 2>>"$LOG") && printf '\n%s\n' "$sec" >>"$BODY"; }
[ "${BENCH_NO_BGCOST:-0}" = 1 ] || { say "background thread: bench/bgcost.sh"; printf '\n%s\n' "$(BUILD="$BUILD" bash bench/bgcost.sh $([ "$QUICK" = 1 ] && echo --quick) 2>>"$LOG" || echo "bench/bgcost.sh failed; see $LOG")" >>"$BODY"; }
[ "${BENCH_NO_COLDEMIT:-0}" = 1 ] || { say "cold-cache emit: bench/coldemit.sh"; printf '\n%s\n' "$(BUILD="$BUILD" bash bench/coldemit.sh --stdout $([ "$QUICK" = 1 ] && echo --quick) 2>>"$LOG" || echo "bench/coldemit.sh failed; see $LOG")" >>"$BODY"; }
[ "${BENCH_NO_P99BUDGET:-0}" = 1 ] || { say "background CPU and the p99: bench/p99budget.sh"; printf '\n%s\n' "$(BUILD="$BUILD" bash bench/p99budget.sh --stdout $([ "$QUICK" = 1 ] && echo --quick) 2>>"$LOG" || echo "bench/p99budget.sh failed; see $LOG")" >>"$BODY"; }
if [ "${BENCH_NO_PROFILE:-0}" != 1 ]; then
	say "profiles: bench/profile.sh"
	pq=""; [ "$QUICK" = 1 ] && pq=--quick
	sec=$(BUILD="$BUILD" bash bench/profile.sh $pq 2>>"$LOG") || true
	printf '\n%s\n' "$sec" >>"$BODY"
fi
[ "${BENCH_NO_VIEWS:-0}" = 1 ] || { say "views and SQL: bench/views.sh"; sec=$(VIEWS_NO_MAKE=1 BUILD="$BUILD" bash bench/views.sh --stdout $([ "$QUICK" = 1 ] && echo --quick) 2>>"$LOG") && printf '\n%s\n' "$sec" >>"$BODY"; }
[ "${BENCH_NO_PRELOAD:-0}" = 1 ] || { say "preload per call: bench/preload.sh"; sec=$(PRELOAD_QUICK="$QUICK" PRELOAD_NO_MAKE=1 PRELOAD_NO_UPDATE=1 BUILD="$BUILD" bash bench/preload.sh 2>>"$LOG") && printf '\n%s\n' "$sec" >>"$BODY"; } || true
[ "${BENCH_NO_UNWIND:-0}" = 1 ] || { say "stack unwinding: bench/unwind.sh"; sec=$(BUILD="$BUILD" bash bench/unwind.sh --print $([ "$QUICK" = 1 ] && echo --quick) 2>>"$LOG") || true; printf '\n%s\n' "$sec" >>"$BODY"; }
[ "${BENCH_NO_SYMBOLIZE:-0}" = 1 ] || { sq=""; [ "$QUICK" = 1 ] && sq=--quick; printf '\n%s\n' "$(SYM_NO_MAKE=1 BUILD="$BUILD" bash bench/symbolize.sh $sq 2>>"$LOG" || echo "## Symbolization: bench/symbolize.sh failed, see $LOG")" >>"$BODY"; }
if [ -f bench/ANALYSIS.md ]; then
	printf '\n' >>"$BODY"
	cat bench/ANALYSIS.md >>"$BODY"
fi

# ---- the leading table: every goal of issue #7 --------------------------------------------
declare -A LT LD
if [ -s "$OUT/lttng.kv" ]; then while IFS='=' read -r k v; do LT[$k]=$v; done <"$OUT/lttng.kv"; fi
if [ -s "$OUT/load.kv" ]; then while IFS='=' read -r k v; do LD[$k]=$v; done <"$OUT/load.kv"; fi
n2() { awk -v x="$1" -v p="${2:-2}" 'BEGIN{ if (x==""||x=="nan") print "n/a"; else printf "%.*f\n", p, x }'; }
r2() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a==""||b==""||a=="nan"||b=="nan"||b==0) print "nan"; else printf "%.2f\n", a/b }'; }
metge() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a==""||a=="nan") print "n/a"; else print (a>=b) ? "met" : "**missed**" }'; }
metle() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a==""||a=="nan") print "n/a"; else print (a<=b) ? "met" : "**missed**" }'; }
# pctd A B: percentage difference of A from B; within LIMIT -> met
pctd() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a==""||b==""||a=="nan"||b=="nan"||b==0) print "nan"; else printf "%.1f\n", (a-b)/b*100 }'; }
within() { awk -v d="$1" -v l="$2" 'BEGIN{ if (d==""||d=="nan") print "n/a"; else print (d<=l && d>=-l) ? "met" : "**missed**" }'; }
# "within" for latency and start-up: faster than off is fine
notworse() { awk -v d="$1" -v l="$2" 'BEGIN{ if (d==""||d=="nan") print "n/a"; else print (d<=l) ? "met" : "**missed**" }'; }
mt() { case "$1" in yes) echo met ;; n/a) echo n/a ;; *) echo "**missed**" ;; esac; }
ms() { awk -v u="$1" 'BEGIN{ if (u==""||u=="nan") print "n/a"; else printf "%.2f ms\n", u/1000 }'; }

H_ON=${HOT[ours_med.on.1]:-nan}; H_FLOOR=${HOT[ours_med.floor.1]:-nan}; H_STACK=${HOT[ours_med.stack.1]:-nan}
H_JFR=${HOT[med.on.1]:-nan}; H_JFRS=${HOT[med.stack.1]:-nan}
R_FLOOR=$(r2 "$H_ON" "$H_FLOOR"); R_FLOOR_MIN=$(r2 "${HOT[ours_min.on.1]:-nan}" "${HOT[ours_min.floor.1]:-nan}")
R_FLOOR2=$(r2 "${HOT[ours_med.on.2]:-nan}" "${HOT[ours_med.floor.2]:-nan}")
# the goal is judged on the paired case (both in each round) when there is one
R_FLOOR_J=${HOT[pair.1]:-$R_FLOOR}
R_FLOOR_HOW="separate cases"; [ -n "${HOT[pair.1]:-}" ] && R_FLOOR_HOW="paired rounds ${HOT[pair_range.1]}x, 2 threads ${HOT[pair_range.2]:-n/a}x; separate cases $(n2 "$R_FLOOR") x"
R_JFR=$(r2 "$H_JFR" "$H_ON"); R_JFRS=$(r2 "$H_JFRS" "$H_STACK")
R_JFR2=$(r2 "${HOT[med.on.2]:-nan}" "${HOT[ours_med.on.2]:-nan}")
R_LT=$(r2 "${LT[hot1]:-nan}" "${LT[ours1]:-nan}"); R_LT2=$(r2 "${LT[hot2]:-nan}" "${LT[ours2]:-nan}")
R_BPE_LT=$(r2 "${GEN_BPE[zstd]}" "${LT[bpe_z3]:-nan}")
SUM_EPS=$(eps "$N" "${MED[sum_ours]}")
R_SUM_BT=$(r2 "$SUM_EPS" "${LT[bt_dummy_eps]:-nan}"); R_PRINT_BT=$(r2 "$P_OURS_EPS" "${LT[bt_text_eps]:-nan}")
RUNCMD_Q="bash bench/run.sh"; [ "$QUICK" = 1 ] && RUNCMD_Q="bash bench/run.sh --quick"
T_ALL=$(calc "$EPOCHREALTIME - $T_START")
LOAD_FINAL=$(cut -d' ' -f1-3 /proc/loadavg)
{
cat <<EOF
# rec benchmarks: against JFR and LTTng-UST (issue #7)

Generated by \`BUILD=$BUILD $RUNCMD\` ($MODE mode; \`make bench\` / \`make bench-quick\`) on
$(date -u '+%Y-%m-%d %H:%M UTC'), commit $GIT; the whole run took $(fmt "$T_ALL" 0) s. Every figure comes from this
run and this file is rewritten by it. Times are **medians of several runs (min-max)** on a shared,
noisy 2-core machine (a virtual machine: its host runs other tenants' work, and its speed has been
seen to drift by tens of percent within minutes; other jobs in it show in the load average): load
average $LOAD_START at the start, $LOAD_FINAL at the end (the sections below give theirs). Goals are judged
on the medians.

EOF
[ -n "${SBS_SEC:-}" ] && printf '%s\n\n' "$SBS_SEC"
cat <<EOF
## Goals

| # | figure | ours | JFR | LTTng-UST / babeltrace2 | ratio | goal | met? |
|---|---|---|---|---|---|---|---|
| 1 | hot path, recording on, 1 thread, ns/event (floor: $(n2 "$H_FLOOR") ns, same binary) | $(n2 "$H_ON") | $(n2 "$H_JFR") | $(n2 "${LT[hot1]:-}") (ours in that run: $(n2 "${LT[ours1]:-}")) | $(n2 "$R_FLOOR_J") x floor ($R_FLOOR_HOW; minima $(n2 "$R_FLOOR_MIN") x; 2 threads $(n2 "$R_FLOOR2") x) | <= 1.5x floor | $(metle "$R_FLOOR_J" 1.5) |
| 1 | hot path vs JFR, 1 thread (2 threads: $(n2 "${HOT[ours_med.on.2]:-}") vs $(n2 "${HOT[med.on.2]:-}") ns, $(n2 "$R_JFR2")x) | $(n2 "$H_ON") | $(n2 "$H_JFR") | | $(n2 "$R_JFR")x cheaper | >= 6x | $(metge "$R_JFR" 6) |
| 1 | hot path vs LTTng-UST, 1 thread (bench/lttng.sh, same run; 2 threads $(n2 "$R_LT2")x) | $(n2 "${LT[ours1]:-}") | | $(n2 "${LT[hot1]:-}") | $(n2 "$R_LT")x cheaper | >= 8x | $(metge "$R_LT" 8) |
| 1 | hot path with stack traces vs JFR with stack traces, 1 thread | $(n2 "$H_STACK") | $(n2 "$H_JFRS") | | $(n2 "$R_JFRS")x cheaper | >= 5x | $(metge "$R_JFRS" 5) |
| 2 | bytes/event on disk, $(hc "$N") events: ours zstd vs the JFR file after \`zstd -3\` (LTTng trace after \`zstd -3\`: ratio ours/LTTng $(n2 "$R_BPE_LT")) | $(n2 "${GEN_BPE[zstd]}") | $(n2 "$JFR_Z3_BPE") (raw $(n2 "$JFR_BPE")) | $(n2 "${LT[bpe_z3]:-}") (raw $(n2 "${LT[bpe]:-}"), $(hc "${LT[bulk_events]:-nan}") events) | $(n2 "$BPE_RATIO")x | <= 0.8x of JFR | $(metle "$BPE_RATIO" 0.8) |
| 3 | rec-summary vs \`jfr summary\`, $(hc "$N") events, wall s | $(fmt "${MED[sum_ours]}" 4) | $(fmt "${MED[sum_jfr]}" 3) | | $(n2 "$SUM_RATIO" 1)x faster | >= 50x | $(metge "$SUM_RATIO" 50) |
| 3 | rec-print --events vs \`jfr print --events\` (JFR without its start-up), events/s | $(hc "$P_OURS_EPS") | $(hc "$P_JFR_EPS") | | $(n2 "$P_RATIO" 1)x faster | >= 20x | $(metge "$P_RATIO" 20) |
| 3 | rec-summary vs \`babeltrace2 -c sink.utils.dummy\` (the fastest babeltrace2 read), events/s | $(hc "$SUM_EPS") | | $(hc "${LT[bt_dummy_eps]:-nan}") | $(n2 "$R_SUM_BT" 1)x | faster (> 1x) | $(metge "$R_SUM_BT" 1.000001) |
| 3 | rec-print text vs \`babeltrace2\` text, events/s | $(hc "$P_OURS_EPS") | | $(hc "${LT[bt_text_eps]:-nan}") | $(n2 "$R_PRINT_BT" 1)x | faster (> 1x) | $(metge "$R_PRINT_BT" 1.000001) |
| 3 | peak RSS, $(hc "$N_SMALL") -> $(hc "$N") events: rec-summary; rec-print | $(mib "${RSS[sum_ours_small]}") -> $(mib "${RSS[sum_ours]}"); $(mib "${RSS[print_ours_small]}") -> $(mib "${RSS[print_ours]}") | $(mib "${RSS[sum_jfr]}"); $(mib "${RSS[print_jfr]}") ($(hc "$JFR_PRINT_N")) | | | does not grow with the file | $( [ "$FLAT_SUM" = yes ] && [ "$FLAT_PRINT" = yes ] && echo met || echo "**missed**") |
EOF
if [ -n "${LD[rate]:-}" ]; then
	for st in kon kall on all on8m; do
		[ -n "${LD[$st.p50_us]:-}" ] || continue
		base=off; rate=${LD[rate]}; cap=${LD[cap]:-0}; conn="a new connection per request"
		case $st in
		kon) lbl="recording on, defaults"; base=koff ;;
		kall) lbl="recording on, everything, stack traces on every event"; base=koff ;;
		on) lbl="recording on, defaults" ;;
		all) lbl="recording on, everything, stack traces on every event" ;;
		on8m) lbl="8 MiB connection stacks (--stack-kib 0), recording on, defaults"; base=off8m ;;
		esac
		case $st in k*) rate=${LD[ratek]:-?}; cap=${LD[capk]:-0}; conn="16 persistent connections" ;; esac
		for k in p50 p90 p99; do
			lim=2; [ "$k" = p99 ] && lim=5
			# paired round by round where load.sh gives it (each round its own rate), else the medians
			d=${LD[$st.d_${k}_us]:-$(pctd "${LD[$st.${k}_us]:-nan}" "${LD[$base.${k}_us]:-nan}")}
			echo "| 4 | service, $conn, at $rate req/s (the median of the rounds' rates: 70 % of the capacity measured at each round's start; $cap req/s before the rounds), $lbl: $k latency, median of ${LD[runs]} runs, against $base paired round by round | $(ms "${LD[$st.${k}_us]:-}") | | | $(n2 "$d" 1) % vs $base ($(ms "${LD[$base.${k}_us]:-}")) | within $lim % of off | $(notworse "$d" "$lim") |"
		done
		d=${LD[$st.d_cpu_us]:-$(pctd "${LD[$st.cpu_us]:-nan}" "${LD[$base.cpu_us]:-nan}")}
		echo "| 4 | same, $lbl: service CPU per request over its whole life (all its threads, start-up and shutdown included, from wait4), us | $(n2 "${LD[$st.cpu_us]:-}" 1) | | | $(n2 "$d" 1) % vs $base ($(n2 "${LD[$base.cpu_us]:-}" 1)) | (no goal: the recorder's start-up, spread over a short run's requests) | - |"
		if [ -n "${LD[$st.wcpu_us]:-}" ]; then
			d=${LD[$st.d_wcpu_us]:-$(pctd "${LD[$st.wcpu_us]:-nan}" "${LD[$base.wcpu_us]:-nan}")}
			# issue 22: the goal on persistent connections with the defaults
			if [ "$st" = kon ]; then goal="within +2 % of off"; verdict=$(notworse "$d" 2); else goal="(no goal)"; verdict=-; fi
			echo "| 4 | same, $lbl: service CPU per request at the load (from the first measured request to the last response, the process's CPU clock), us | $(n2 "${LD[$st.wcpu_us]:-}" 1) | | | $(n2 "$d" 1) % vs $base ($(n2 "${LD[$base.wcpu_us]:-}" 1)) | $goal | $verdict |"
		fi
		d=${LD[$st.d_throughput]:-$(pctd "${LD[$st.throughput]:-nan}" "${LD[$base.throughput]:-nan}")}
		echo "| 4 | same, $lbl: throughput, req/s | $(n2 "${LD[$st.throughput]:-}" 1) | | | $(n2 "$d" 1) % vs $base ($(n2 "${LD[$base.throughput]:-}" 1)) | within 1 % of off | $(within "$d" 1) |"
		echo "| 4 | same, $lbl: requests sent = app.Request recorded + requests lost with reported drops (all runs) | sent ${LD[$st.sent]:-n/a}, recorded ${LD[$st.requests]:-n/a}, events dropped ${LD[$st.dropped]:-n/a} | | | | agree exactly, or drops explain the difference | $(case "${LD[$st.agree]:-}" in yes) echo "met (difference all explained by drops)" ;; *NO*|"") echo "**missed** (${LD[$st.agree]:-n/a})" ;; *within*) echo "met (difference within the reported drops: ${LD[$st.agree]})" ;; *) echo "met except requests the client abandoned (${LD[$st.agree]})" ;; esac) |"
	done
	for st in on all; do
		d=$(awk -v a="${LD[$st.startup]:-nan}" -v b="${LD[off.startup]:-nan}" 'BEGIN{ if (a=="nan"||b=="nan") print "nan"; else printf "%.1f\n", a-b }')
		echo "| 4 | service start-up (exec to \"listening\"), $st vs off, ms | $(n2 "${LD[$st.startup]:-}" 1) | | | $(n2 "$d" 1) ms vs off ($(n2 "${LD[off.startup]:-}" 1)) | within 5 ms | $(notworse "$d" 5) |"
	done
fi
# issue 22: the anchors on both JDKs (bench/anchors.sh) and the side-by-side goals (bench/sidebyside.sh)
declare -A AN SB
if [ -s "$OUT/anchors.kv" ]; then while IFS='=' read -r k v; do AN[$k]=$v; done <"$OUT/anchors.kv"; fi
if [ -s "$OUT/sidebyside.kv" ]; then while IFS='=' read -r k v; do SB[$k]=$v; done <"$OUT/sidebyside.kv"; fi
for m in on duration; do
	[ -n "${AN[ours.$m.1]:-}" ] || continue
	for j in ${AN[jdks]:-}; do
		r=$(r2 "${AN[jfr$j.$m.1]:-nan}" "${AN[ours.$m.1]}"); rmin=$(r2 "${AN[jfr$j.$m.1.min]:-nan}" "${AN[ours.$m.1.min]:-nan}")
		if [ "$m" = on ]; then
			echo "| 1 | hot path vs JFR $j, commit-only event (like-for-like), 1 thread, ns (bench/anchors.sh; floor $(n2 "${AN[ours.floor.1]}"), ours/floor $(n2 "$(r2 "${AN[ours.on.1]}" "${AN[ours.floor.1]}")")x, minima $(n2 "$(r2 "${AN[ours.on.1.min]:-nan}" "${AN[ours.floor.1.min]:-nan}")")x) | $(n2 "${AN[ours.on.1]}") | $(n2 "${AN[jfr$j.on.1]:-}") | | $(n2 "$r")x cheaper (minima $(n2 "$rmin")x) | like-for-like (judged on the floor: <= 1.5x) | $(metle "$(r2 "${AN[ours.on.1]}" "${AN[ours.floor.1]}")" 1.5) (floor) |"
		else
			echo "| 1 | hot path vs JFR $j, duration event (begin/commit: two timestamps), 1 thread, ns (bench/anchors.sh) | $(n2 "${AN[ours.duration.1]}") | $(n2 "${AN[jfr$j.duration.1]:-}") | | $(n2 "$r")x cheaper (minima $(n2 "$rmin")x) | >= 6x | $(metge "$r" 6) |"
		fi
	done
done
# issue 22: the background thread's CPU per event (bench/bgcost.sh)
declare -A BG
if [ -s "$OUT/bgcost.kv" ]; then while IFS='=' read -r k v; do BG[$k]=$v; done <"$OUT/bgcost.kv"; fi
if [ -n "${BG[bg_ns]:-}" ]; then
	# the steady state is judged; the start-up's first seconds are shown beside it (an older
	# kv, without them, says nothing of them)
	su=""
	[ -n "${BG[bg_startup_ns_range]:-}" ] && su="; its first ${BG[bg_startup_secs]} s: ${BG[bg_startup_ns_range]} ns, ${BG[bg_startup_once_ms]} ms of CPU once"
	echo "| 7 | the recorder's background thread: CPU per event, default settings, steady state (draining, encoding, zstd, writing; bench/bgcost.sh: 8 threads, 25000 events/s, after ${BG[bg_steady_warm]:-1.5} s of recording$su), ns, median (min-max) | ${BG[bg_ns_range]} | | | | <= 100 ns | $(metle "${BG[bg_ns]}" 100) |"
fi
# sbs_cpu_row ARM TOOL LIMIT: a CPU goal of the side-by-side table (svc set), judged as its own
# goals table judges it: round by round (sidebyside.sh's ARM.vs_TOOL.cpu_pct, the median over
# rounds of this arm's CPU per request / the tool's - 1), so that the machine's drift between
# rounds moves both sides; the medians of the absolute figures are shown beside it.  Without the
# paired figure (a kv of an older sidebyside.sh) the medians are compared, and the row says so.
sbs_cpu_row() {
	local arm=$1 o=$2 lim=$3 lbl pct how verdict
	lbl="rec-record"; [ "$arm" = rec ] && lbl="rec (instrumented)"
	local on="$o"; [ "$o" = lttng ] && on="LTTng-UST"
	pct=${SB[$svc.$arm.vs_$o.cpu_pct]:-nan}
	if [ "$pct" != nan ]; then
		how="round by round $(awk -v p="$pct" 'BEGIN{ printf "%+.1f %%", p }')"
		verdict=$(awk -v p="$pct" -v ka="${SB[$svc.$arm.kinds]}" -v kb="${SB[$svc.$o.kinds]}" -v o="$o" \
			'BEGIN{ ok = (o == "perf") ? p <= 0 : p < 0; print (ok && ka > kb) ? "met" : "**missed**" }')
	else
		how="medians, no paired rounds"
		verdict=$(awk -v a="${SB[$svc.$arm.cpu_us]}" -v b="${SB[$svc.$o.cpu_us]}" -v ka="${SB[$svc.$arm.kinds]}" -v kb="${SB[$svc.$o.kinds]}" -v o="$o" \
			'BEGIN{ ok = (o == "perf") ? a <= b : a < b; print (ok && ka > kb) ? "met" : "**missed**" }')
	fi
	if [ "$o" = lttng ]; then
		echo "| 6 | same, CPU per request: $lbl vs $on (event kinds ${SB[$svc.$arm.kinds]} vs ${SB[$svc.$o.kinds]}; $how) | $(n2 "${SB[$svc.$arm.cpu_us]}" 1) us | | $(n2 "${SB[$svc.$o.cpu_us]}" 1) us | | $lim $on's, more kinds | $verdict |"
	else
		echo "| 6 | same, CPU per request: $lbl vs $on (event kinds ${SB[$svc.$arm.kinds]} vs ${SB[$svc.$o.kinds]}; $how) | $(n2 "${SB[$svc.$arm.cpu_us]}" 1) us | | | $on $(n2 "${SB[$svc.$o.cpu_us]}" 1) us | $lim $on's, more kinds | $verdict |"
	fi
}
for svc in rw mc; do
	[ -n "${SB[$svc.rec-record.p90_us]:-}" ] || continue
	sn=requestwatch; [ "$svc" = mc ] && sn=memcached
	echo "| 6 | side by side (first table), $sn at ${SB[$svc.rate]} req/s (70 % of capacity), rec-record: p90 vs off, median of paired runs | $(ms "${SB[$svc.rec-record.p90_us]}") | | | $(n2 "${SB[$svc.rec-record.d_p90_us]}" 1) % vs off ($(ms "${SB[$svc.off.p90_us]}")) | within 5 % of off | $(awk -v s="${SB[$svc.off.p90_spread]:-nan}" 'BEGIN{ exit !(s == "nan" || s > 2) }' && echo "not judged (off's own p90 varied ${SB[$svc.off.p90_spread]:-?}x between runs)" || notworse "${SB[$svc.rec-record.d_p90_us]}" 5) |"
	for o in perf heaptrack; do
		[ -n "${SB[$svc.$o.cpu_us]:-}" ] || continue
		lim="below"; [ "$o" = perf ] && lim="no more than"
		sbs_cpu_row rec-record "$o" "$lim"
	done
	if [ -n "${SB[$svc.lttng.cpu_us]:-}" ]; then
		sbs_cpu_row rec lttng below
	fi
done
if [ "${BENCH_NO_SCALE:-0}" != 1 ]; then
cat <<EOF
| 5 | scaling: time per event, $(hc "$SC_MAX") vs $(hc "$SC_REF") events: rec-summary; rec-print; hot path | $(n2 "$SC_LIN_SUM")x; $(n2 "$SC_LIN_PRINT")x; $(n2 "$SC_HOT")x | | | | flat (<= 1.5x) | $(metle "$SC_LIN_SUM" 1.5); $(metle "$SC_LIN_PRINT" 1.5); $(metle "$SC_HOT" 1.5) |
| 5 | scaling: peak RSS, $(hc "$SC_MAX") vs $(hc "$SC_REF"): rec-summary; rec-print; recorder (hot path) | $(mib "${RSS[sc_sum_$SC_MAX]:-}"); $(mib "${RSS[sc_print_$SC_MAX]:-}"); $(mib "${SC[hotrss.$SC_MAX]:-}") | | | | flat (<= 1.25x + 1 MiB) | $(mt "$SC_RSS_SUM"); $(mt "$SC_RSS_PRINT"); $(mt "$SC_HOT_RSS") |
EOF
fi
cat <<EOF

Sources: rows 1 from the hot-path section (ours and JFR) and the LTTng section (LTTng-UST and ours
measured in the same script run); row 2 from "Bytes per event" and the LTTng section; rows 3 from
"Readers" and the LTTng section (babeltrace2 on the LTTng trace of the same events); rows 4 from
"A service under load"; rows 5 from "Scaling" (flatness is judged against $(hc "${SC_REF:-0}") events: in quick mode
that file is smaller than one chunk, so the readers' memory still grows up to it). Where a goal is
missed, the profiles (bench/profile.sh, full mode) and the hand-written analysis at the end
(bench/ANALYSIS.md) say where the time goes.

## How to rerun

\`\`\`
make bench            # full: N=10M, 5 runs, scaling 1k..100M, load test 3 x 10 s per setting (9 settings)
make bench-quick      # quick (under 5 minutes, plus about 5 for the side-by-side table and the anchors): N=500k, 3 runs, jfr print on 20k events, scaling 1k/100k/1M,
                      # load test 3 x 2 s per setting (6 settings); no exporters, no profiles
BUILD=/tmp/b BENCH_N=2000000 BENCH_RUNS=3 bash bench/run.sh   # any size
\`\`\`
Skip parts with BENCH_NO_HOT=1, BENCH_NO_SCALE=1, BENCH_NO_EXPORTERS=1, BENCH_NO_LTTNG=1, BENCH_NO_LOAD=1,
BENCH_NO_PROFILE=1 (quick mode sets BENCH_NO_EXPORTERS=1 and BENCH_NO_PROFILE=1 unless they are given).
BENCH_NO_SIDEBYSIDE=1 and BENCH_NO_ANCHORS=1 skip bench/sidebyside.sh (the first table) and bench/anchors.sh;
BENCH_NO_COLDEMIT=1 skips bench/coldemit.sh (the emit under cold caches, before and after a change).
BENCH_NO_P99BUDGET=1 skips bench/p99budget.sh (the persistent-connection p99 against a thread that only burns CPU).

EOF
cat "$BODY"
} >"$RESULTS"
say "done: $RESULTS ($(fmt "$T_ALL" 0) s)"
