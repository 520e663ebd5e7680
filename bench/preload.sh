#!/usr/bin/env bash
# bench/preload.sh [--quick] - the preload library's cost per call (issue 18,
# "Performance", first item): bench/preload_calls.c (a program that knows
# nothing of rec) times, inside itself, an uncontended pthread_mutex_lock +
# unlock pair, malloc + free of a service-like size mix, a 64-byte read of
# /dev/zero (a short call, under the I/O threshold) and a write + read
# through a pipe, and in the same binary the floor of a timed call: two
# reads of the TSC (the recorder's clock where it is invariant), two
# clock_gettime(CLOCK_MONOTONIC), and the same read timed by hand with two
# TSC reads around it.  It runs without the preload and with
# LD_PRELOAD=librec-preload.so (defaults: REC_OUTPUT only), alternately, RUNS
# times each, in the same script run.
#
#   BUILD=build bash bench/preload.sh           RUNS=9
#   BUILD=build bash bench/preload.sh --quick   RUNS=5
#
# Environment: PRELOAD_QUICK=1 (as --quick), PRELOAD_RUNS, PRELOAD_N (calls per round, default 50000; the
# system calls N/16), PRELOAD_ROUNDS (rounds per run, default 41),
# PRELOAD_NO_MAKE=1 (use $BUILD as it is), PRELOAD_NO_UPDATE=1 (do not touch
# bench/RESULTS.md).  Writes the markdown section to $BUILD/bench/preload.md,
# prints it, and puts it into bench/RESULTS.md in place of its earlier one
# (or before the hand-written analysis); bench/run.sh appends it to the file
# it writes.  Figures: per run, the median over its rounds; per setting, the
# median over the runs (min-max over the runs).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh

quick_args 24 "$@"
[ "${PRELOAD_QUICK:-0}" = 1 ] && QUICK=1
if [ "$QUICK" = 1 ]; then RUNS=${PRELOAD_RUNS:-5}; MODE=quick; else RUNS=${PRELOAD_RUNS:-9}; MODE=full; fi
N=${PRELOAD_N:-50000}
ROUNDS=${PRELOAD_ROUNDS:-41}
BUILD=${BUILD:-build}
OUT="$BUILD/bench"
DATA="$OUT/preload-data"
LOG="$OUT/preload-log.txt"
MD="$OUT/preload.md"
RESULTS=bench/RESULTS.md
mkdir -p "$OUT" "$DATA"
: >"$LOG"
say() { printf '[preload %s] %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$LOG" >&2; }
die() { say "error: $*"; exit 1; }
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

if [ "${PRELOAD_NO_MAKE:-0}" != 1 ]; then
	say "building (make all BUILD=$BUILD)"
	make -s all BUILD="$BUILD" >>"$LOG" 2>&1 || die "make all failed (see $LOG)"
fi
LIB=$(cd "$BUILD/lib" && pwd)/librec-preload.so
[ -f "$LIB" ] || die "$LIB is missing"
[ -x "$BUILD/bin/rec-summary" ] || die "$BUILD/bin/rec-summary is missing"
bench_flags
PROG="$OUT/preload_calls"
# The program is built with the Makefile's flags but links no part of rec.
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -o "$PROG" bench/preload_calls.c -pthread >>"$LOG" 2>&1 ||
	die "bench/preload_calls.c does not compile (see $LOG)"
# The floor of interposing at all: a minimal LD_PRELOAD wrapper of read and
# write (the TSC around the next definition, a threshold compare).
FLOOR_LIB="$OUT/preload_floor.so"
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -U_FORTIFY_SOURCE -fPIC -shared -o "$FLOOR_LIB" bench/preload_floor.c -ldl >>"$LOG" 2>&1 ||
	die "bench/preload_floor.c does not compile (see $LOG)"

# The recorder's clock here: the TSC if the CPU says it is invariant
# (libfmt/record/clock.c's test), else CLOCK_MONOTONIC.
if grep -qw constant_tsc /proc/cpuinfo && grep -qw nonstop_tsc /proc/cpuinfo; then
	CLOCK=tsc; CLOCK_NAME="the TSC (invariant: constant_tsc and nonstop_tsc)"
else
	CLOCK=mono; CLOCK_NAME="CLOCK_MONOTONIC (the TSC is not invariant here)"
fi

# heaptrack (Debian's package), for the single-threaded rows: it interposes
# no lock but starts a thread of its own, so what it adds to a
# single-threaded program's lock + unlock is what any preload with a thread
# costs there (glibc's single-threaded path ended), not an interposer's.
if ! command -v heaptrack >/dev/null && [ "$(id -u)" = 0 ]; then
	say "installing heaptrack (Debian's package)"
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq heaptrack) >>"$LOG" 2>&1 ||
		say "apt-get install heaptrack failed (see $LOG)"
fi
SETTINGS="off on floor soff son"
command -v heaptrack >/dev/null && SETTINGS="$SETTINGS sht"

KEYS="lock malloc read pipe read_tsc pipe_tsc clock2_tsc clock2_mono"
MINKEYS="lock_min malloc_min read_min pipe_min read_tsc_min pipe_tsc_min clock2_tsc_min clock2_mono_min"
for s in off on floor soff son sht; do for k in $KEYS $MINKEYS; do : >"$DATA/$s.$k"; done; done
REC="$DATA/calls.rec"
for ((r = 1; r <= RUNS; r++)); do
	# off/on: the program with its idle second thread; floor: it under the minimal
	# interposer; soff/son: single-threaded; sht: single-threaded under heaptrack
	for s in $SETTINGS; do
		single=""; case $s in s*) single=single ;; esac
		case $s in
		floor) line=$(env LD_PRELOAD="$FLOOR_LIB" "$PROG" "$N" "$ROUNDS" 2>>"$LOG") ||
			die "run $r ($s) under the minimal interposer failed (see $LOG)" ;;
		*on) line=$(env LD_PRELOAD="$LIB" REC_OUTPUT="$REC" "$PROG" "$N" "$ROUNDS" $single 2>>"$LOG") ||
			die "run $r ($s) with the preload failed (see $LOG)" ;;
		sht) line=$(heaptrack -o "$DATA/ht" "$PROG" "$N" "$ROUNDS" $single 2>>"$LOG" | grep 'lock=') ||
			die "run $r ($s) under heaptrack failed (see $LOG)"
			rm -f "$DATA"/ht.* ;;
		*) line=$("$PROG" "$N" "$ROUNDS" $single 2>>"$LOG") || die "run $r ($s) failed (see $LOG)" ;;
		esac
		echo "run=$r setting=$s $line" >>"$LOG"
		for k in $KEYS $MINKEYS; do kv "$k" "$line" >>"$DATA/$s.$k"; done
	done
	say "run $r of $RUNS done"
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# What the last run with the preload recorded (it did record).
SUMMARY=$("$BUILD/bin/rec-summary" "$REC" 2>>"$LOG") || die "rec-summary $REC failed"
events_of() { awk -v t="$1" '$1 == t { print $2; exit }' <<<"$SUMMARY"; }
EV_TOTAL=$(sed -n 's/^ *Events: *\([0-9]*\).*/\1/p' <<<"$SUMMARY" | head -1)
EV_ALLOC=$(events_of rec.Alloc); EV_CPU=$(events_of rec.CPUSample)
DROPPED=$(sed -n 's/^ *Dropped events: *\([0-9]*\).*/\1/p' <<<"$SUMMARY" | head -1)

# st SETTING KEY -> "median min max"
st() { sort -g "$DATA/$1.$2" | awk '{v[NR]=$1} END {if (NR==0) {print "nan nan nan"; exit}
	m = (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; print m, v[1], v[NR]}'; }
f2() { awk -v x="$1" 'BEGIN{ if (x=="nan"||x=="") print "n/a"; else printf "%.1f\n", x }'; }
cell() { local m lo hi; read -r m lo hi < <(st "$1" "$2"); echo "$(f2 "$m") ($(f2 "$lo")-$(f2 "$hi"))"; }
med() { st "$1" "$2" | cut -d' ' -f1; }
# Q: the same figures from each run's quietest round (its _min), median over the runs
qcell() { cell "$1" "$2_min"; }
qmed() { med "$1" "$2_min"; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN{ printf "%.1f\n", a-b }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN{ print (a <= b) ? "met" : "**missed**" }'; }

D_LOCK=$(sub "$(med on lock)" "$(med off lock)")
D_MALLOC=$(sub "$(med on malloc)" "$(med off malloc)")
D_READ=$(sub "$(med on read)" "$(med off read)")
D_PIPE=$(sub "$(med on pipe)" "$(med off pipe)")
D_HAND=$(sub "$(med off read_tsc)" "$(med off read)")
D_HAND_PIPE=$(sub "$(med off pipe_tsc)" "$(med off pipe)")
Q_HAND=$(sub "$(qmed off read_tsc)" "$(qmed off read)")
Q_HAND_PIPE=$(sub "$(qmed off pipe_tsc)" "$(qmed off pipe)")
Q_FLOOR=$(qmed off "clock2_$CLOCK")
Q_LOCK=$(sub "$(qmed on lock)" "$(qmed off lock)")
Q_MALLOC=$(sub "$(qmed on malloc)" "$(qmed off malloc)")
Q_READ=$(sub "$(qmed on read)" "$(qmed off read)")
Q_PIPE=$(sub "$(qmed on pipe)" "$(qmed off pipe)")
Q_FREAD=$(sub "$(qmed floor read)" "$(qmed off read)")
Q_FPIPE=$(sub "$(qmed floor pipe)" "$(qmed off pipe)")
Q_OWN_READ=$(sub "$Q_READ" "$Q_FREAD")
Q_OWN_PIPE=$(sub "$Q_PIPE" "$Q_FPIPE")
S_LOCK=$(sub "$(qmed son lock)" "$(qmed soff lock)")
S_MALLOC=$(sub "$(qmed son malloc)" "$(qmed soff malloc)")
if [[ " $SETTINGS " == *" sht "* ]]; then
	HT_LOCK=$(sub "$(qmed sht lock)" "$(qmed soff lock)")
	OWN_LOCK=$(sub "$S_LOCK" "$HT_LOCK")
	HT_ROWS="| single-threaded program: lock + unlock under heaptrack (it interposes no lock; its own thread) | $(qcell soff lock) | $(qcell sht lock) | $HT_LOCK | | |
| single-threaded program: lock + unlock, the preload's own part (its \"added\" minus heaptrack's) | | | $OWN_LOCK | <= 10 ns | $(le "$OWN_LOCK" 10) |"
	HT_TEXT="Under heaptrack (Debian's package, which interposes malloc and free but no lock, and runs a
thread of its own) the same single-threaded program's lock + unlock costs $HT_LOCK ns more than
without it: what a second thread costs there, whichever tool starts it. The preload's own part of
its $S_LOCK ns is the difference, $OWN_LOCK ns."
else
	HT_ROWS=""
	HT_TEXT="heaptrack is not installed: the row that separates the cost of a second thread from the
interposer's was not measured."
fi
GIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
CPU_MODEL=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)

{
cat <<EOF
## The preload library's cost per call (issue 18; bench/preload.sh)

Generated by \`BUILD=$BUILD bash bench/preload.sh$( [ "$QUICK" = 1 ] && echo " --quick")\` ($MODE mode) on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $GIT,
$(nproc) CPUs ($CPU_MODEL); load average $LOAD_START at the start, $LOAD_END at the end
(other jobs share the machine). bench/preload_calls.c, built with the Makefile's flags and no part of
rec, times each call inside itself: $ROUNDS rounds of $N calls ($((N / 16)) for the system calls)
per run, the cases' rounds interleaved, the median over the rounds; $RUNS runs without and $RUNS
with \`LD_PRELOAD=librec-preload.so REC_OUTPUT=...\` (the defaults: CPU samples at 100 Hz, an
allocation sampled every 512 KiB on average, rec.IO at 10 ms), alternately. Each cell is the
median over the runs (min-max over the runs), ns per call. The program keeps 8 MiB of 1 KiB
blocks allocated (under the preload some are sampled blocks still live, so every free looks its
address up, as in a service) and has a second thread waiting in \`read\` (glibc runs the mutexes
and malloc of a single-threaded process without atomic instructions, and no process is
single-threaded under the preload: its background thread). The recorder's clock here is
$CLOCK_NAME.

Each run's quietest round (the fastest of its $ROUNDS: the round least disturbed by the other jobs;
median over the runs, min-max):

| call | without | with the preload | added | goal | met? |
|---|---|---|---|---|---|
| \`pthread_mutex_lock\` + \`pthread_mutex_unlock\`, uncontended | $(qcell off lock) | $(qcell on lock) | $Q_LOCK | <= 10 ns, no clock | $(le "$Q_LOCK" 10) |
| \`malloc\` + \`free\`, 16 B-8 KiB (mean ~350 B) | $(qcell off malloc) | $(qcell on malloc) | $Q_MALLOC | <= 10 ns, no clock | $(le "$Q_MALLOC" 10) |
| \`read\` of 64 bytes from /dev/zero | $(qcell off read) | $(qcell on read) | $Q_READ | <= its two clock reads (the read timed by hand: $Q_HAND ns) | $(le "$Q_READ" "$Q_HAND") |
| \`write\` + \`read\` of 64 bytes through a pipe (two calls) | $(qcell off pipe) | $(qcell on pipe) | $Q_PIPE | <= their four clock reads (the calls timed by hand: $Q_HAND_PIPE ns) | $(le "$Q_PIPE" "$Q_HAND_PIPE") |
| floor: the /dev/zero \`read\` timed by hand (TSC before and after, a threshold compare) | $(qcell off read_tsc) | | $Q_HAND over the plain read | | |
| floor: the pipe's \`write\` and \`read\`, each timed by hand | $(qcell off pipe_tsc) | | $Q_HAND_PIPE over the plain calls | | |
| floor of interposing: the /dev/zero \`read\` under a minimal interposer (bench/preload_floor.c) | | $(qcell floor read) | $Q_FREAD (the preload: $Q_OWN_READ more) | | |
| floor of interposing: the pipe's \`write\` + \`read\` under it | | $(qcell floor pipe) | $Q_FPIPE (the preload: $Q_OWN_PIPE more) | | |
| floor: two TSC reads back to back | $(qcell off clock2_tsc) | $(qcell on clock2_tsc) | | | |
| floor: two \`clock_gettime(CLOCK_MONOTONIC)\` | $(qcell off clock2_mono) | $(qcell on clock2_mono) | | | |
| single-threaded program: lock + unlock | $(qcell soff lock) | $(qcell son lock) | $S_LOCK | <= 10 ns | $(le "$S_LOCK" 10) |
| single-threaded program: malloc + free | $(qcell soff malloc) | $(qcell son malloc) | $S_MALLOC | <= 10 ns | $(le "$S_MALLOC" 10) |
$HT_ROWS

The single-threaded rows: the same program without its idle thread. Without the preload glibc runs
its mutexes (and malloc's arena lock) without atomic instructions while a process has one thread;
the preload's background thread ends that, so a single-threaded program pays that difference too
(about what the two settings of the "without" column differ by), beside the interposers' own cost.
$HT_TEXT

Each run's median round (median over the runs, min-max), which the load on the machine inflates
(compare the floors with those above):

| call | without | with the preload | added | goal | met? |
|---|---|---|---|---|---|
| \`pthread_mutex_lock\` + \`pthread_mutex_unlock\`, uncontended | $(cell off lock) | $(cell on lock) | $D_LOCK | <= 10 ns, no clock | $(le "$D_LOCK" 10) |
| \`malloc\` + \`free\`, 16 B-8 KiB (mean ~350 B) | $(cell off malloc) | $(cell on malloc) | $D_MALLOC | <= 10 ns, no clock | $(le "$D_MALLOC" 10) |
| \`read\` of 64 bytes from /dev/zero | $(cell off read) | $(cell on read) | $D_READ | <= its two clock reads (the read timed by hand: $D_HAND ns) | $(le "$D_READ" "$D_HAND") |
| \`write\` + \`read\` of 64 bytes through a pipe (two calls) | $(cell off pipe) | $(cell on pipe) | $D_PIPE | <= their four clock reads (the calls timed by hand: $D_HAND_PIPE ns) | $(le "$D_PIPE" "$D_HAND_PIPE") |
| floor: the /dev/zero \`read\` timed by hand (TSC before and after, a threshold compare) | $(cell off read_tsc) | | $D_HAND over the plain read | | |
| floor: the pipe's \`write\` and \`read\`, each timed by hand | $(cell off pipe_tsc) | | $D_HAND_PIPE over the plain calls | | |
| floor: two TSC reads back to back | $(cell off clock2_tsc) | $(cell on clock2_tsc) | | | |
| floor: two \`clock_gettime(CLOCK_MONOTONIC)\` | $(cell off clock2_mono) | $(cell on clock2_mono) | | | |

"added" is the median with the preload minus the median without; the goals are judged on the
quietest rounds (what a call costs when nothing else runs; on this shared machine a busy moment
slows every figure, the floors with them: medians of the median rounds are shown for the record).
The lock and malloc paths read no clock (lock_interpose.c, alloc_interpose.c: a load says the
recorder records, a thread-local load that the thread is not inside it, then the held-lock push or
the sampling countdown, and for free one byte of a 4 KiB table of the live sampled blocks); a call
that is timed reads the recorder's clock twice, so its floor is its two clock reads, measured in
the same binary by timing the same call by hand (the program reads the TSC before and after it and
compares the difference with a threshold, as the preload does): two reads of the clock around a
system call cost more than two back to back ($(f2 "$Q_FLOOR") ns here, the preload's run
$(f2 "$(qmed on "clock2_$CLOCK")")), whose work the processor overlaps, so the goal is judged against the hand-timed
call, and the back-to-back reads are shown beside it. The "floor of interposing" rows run the
same program under bench/preload_floor.c instead, an LD_PRELOAD library whose \`read\` and \`write\`
do nothing but what a timed interposer must (the TSC before and after the next definition, found
once with \`dlsym(RTLD_NEXT)\`, and a threshold compare): what it adds over the hand-timed call is
the price of interposing at all (one more call and return, and an indirect call), which the
goal's floor does not include and no interposer avoids; the preload's own checks are what it adds
beyond that. The last
run with the preload recorded $EV_TOTAL events ($EV_ALLOC rec.Alloc, $EV_CPU rec.CPUSample; $DROPPED
dropped) into \`$REC\`. Raw lines per run: \`$LOG\`.
EOF
} >"$MD"
cat "$MD"

if [ "${PRELOAD_NO_UPDATE:-0}" != 1 ] && [ -f "$RESULTS" ]; then
	# Replace the section (its heading up to the next "## "), else put it
	# before the hand-written analysis, else at the end.
	awk -v md="$MD" '
		function put() { while ((getline l < md) > 0) print l; print ""; done = 1 }
		/^## The preload library.s cost per call/ { put(); skip = 1; next }
		skip && /^## / { skip = 0 }
		skip { next }
		!done && /^## Where the time goes/ { put() }
		{ print }
		END { if (!done) { print ""; while ((getline l < md) > 0) print l } }
	' "$RESULTS" >"$RESULTS.tmp" && mv "$RESULTS.tmp" "$RESULTS"
	say "updated $RESULTS"
fi
