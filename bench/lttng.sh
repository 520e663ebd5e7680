#!/usr/bin/env bash
# bench/lttng.sh - the LTTng-UST anchor of issues #3 and #7: hot path ns/event
# (1 and 2 threads) of a tracepoint with the same 3 fields as bench/hotpath.c,
# bytes/event of the LTTng trace of 10M events, and babeltrace2 read speed,
# with our hot path run in the same run for the ratio.
#
#   BUILD=build bash bench/lttng.sh
#
# Prints a markdown section to stdout and writes it to $BUILD/bench/lttng.md,
# the figures as key=value lines to $BUILD/bench/lttng.kv (for bench/run.sh).
# Environment: BUILD (default build), LTTNG_N (bulk trace events, default
# 10000000), LTTNG_K (events per round per thread, default 200000),
# LTTNG_ROUNDS (timed rounds, default 5), LTTNG_WARM (warm-up rounds, 2),
# LTTNG_READ_RUNS (babeltrace2 runs per reader, default 3).
#
# What it does: installs lttng-tools, liblttng-ust-dev, babeltrace2 if missing
# (apt-get, as root); builds bench/lttng/lttng_hot.c + tp.c with the Makefile's
# flags; starts its own lttng-sessiond (--daemonize --no-kernel) with a private
# LTTNG_HOME in a temp dir; for each measurement creates a session, a UST
# channel in discard mode (4 MiB x 8 sub-buffers per CPU for the hot path,
# 8 MiB x 8 for the bulk trace), enables bench:sample, starts, runs the driver,
# stops, destroys; kills the daemon at exit (trap).  Discarded events =
# events emitted - events babeltrace2 counts in the trace (sink.utils.counter),
# cross-checked with the warning `lttng stop` prints.  If any step cannot work
# here, it prints "LTTng: not measured: <reason>" instead of figures.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
BUILD=${BUILD:-build}
OUT="$BUILD/bench"
MD="$OUT/lttng.md"
N=${LTTNG_N:-10000000}
K=${LTTNG_K:-200000}
ROUNDS=${LTTNG_ROUNDS:-5}
WARM=${LTTNG_WARM:-2}
READ_RUNS=${LTTNG_READ_RUNS:-3}
mkdir -p "$OUT"
LOG="$OUT/lttng-log.txt"
: >"$LOG"

say() { printf '[lttng %s] %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$LOG" >&2; }
not_measured() {
	local msg="LTTng: not measured: $*"
	: >"$OUT/lttng.kv"
	say "$msg"
	printf '## LTTng-UST anchor\n\n%s\n' "$msg" | tee "$MD"
	exit 0
}

# ---- prerequisites ----------------------------------------------------------
have_all() {
	command -v lttng >/dev/null && command -v lttng-sessiond >/dev/null &&
		command -v babeltrace2 >/dev/null &&
		echo '#include <lttng/tracepoint.h>' | ${CC:-cc} -E -x c - >/dev/null 2>&1
}
if ! have_all; then
	[ "$(id -u)" = 0 ] || not_measured "lttng-tools/liblttng-ust-dev/babeltrace2 missing and not root to apt-get install them"
	say "installing lttng-tools liblttng-ust-dev babeltrace2"
	pkgs="lttng-tools liblttng-ust-dev babeltrace2"
	# shellcheck disable=SC2086
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs >>"$LOG" 2>&1; then
		# shellcheck disable=SC2086
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs; } >>"$LOG" 2>&1 ||
			not_measured "apt-get install $pkgs failed (see $LOG)"
	fi
	have_all || not_measured "lttng, lttng-sessiond, babeltrace2 or <lttng/tracepoint.h> still missing after apt-get"
fi
LTTNG_VER=$(lttng --version 2>/dev/null | head -1)
UST_VER=$(dpkg-query -W -f '${Version}' liblttng-ust-dev 2>/dev/null || echo "?")
BT_VER=$(babeltrace2 --version 2>/dev/null | head -1)

# ---- build ------------------------------------------------------------------
bench_flags
LH="$OUT/lttng_hot"
LH_CMD="$B_CC $B_CFLAGS -Ibench/lttng -o $LH bench/lttng/lttng_hot.c bench/lttng/tp.c -llttng-ust -ldl -pthread"
say "compiling: $LH_CMD"
# shellcheck disable=SC2086
$LH_CMD >>"$LOG" 2>&1 || not_measured "the tracepoint provider does not compile: $LH_CMD (see $LOG)"

# our hot path, built the way bench/run.sh does when it is not there yet
HOTP="$OUT/hotpath"
HOTP_CMD="$B_CC $B_CFLAGS -o $HOTP bench/hotpath.c $BUILD/lib/librec.a $B_LIBS"
if [ ! -x "$HOTP" ]; then
	if [ ! -f "$BUILD/lib/librec.a" ]; then
		say "building the library (make all BUILD=$BUILD)"
		nice make -s all BUILD="$BUILD" >>"$LOG" 2>&1 || say "make all failed (see $LOG)"
	fi
	say "compiling hotpath: $HOTP_CMD"
	# shellcheck disable=SC2086
	$HOTP_CMD >>"$LOG" 2>&1 || say "hotpath does not build (see $LOG): no ratio"
fi

# ---- private session daemon -----------------------------------------------------
TMPD=$(mktemp -d /tmp/lttng-bench.XXXXXX)
export LTTNG_HOME="$TMPD/home"
mkdir -p "$LTTNG_HOME"
SD_PID=""
RUNDIR_EXISTED=0
[ -d /var/run/lttng ] && RUNDIR_EXISTED=1
cleanup() {
	# only our own daemon and our own sessions: never a daemon that was already running
	if [ -n "$SD_PID" ] && kill -0 "$SD_PID" 2>/dev/null; then
		lttng destroy bench-hot >/dev/null 2>&1 || true
		lttng destroy bench-bulk >/dev/null 2>&1 || true
		kill "$SD_PID" 2>/dev/null || true
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$SD_PID" 2>/dev/null || break; sleep 0.3; done
		kill -0 "$SD_PID" 2>/dev/null && kill -9 "$SD_PID" 2>/dev/null || true
	fi
	# as root the daemon's run directory is /var/run/lttng: remove it if we made it
	[ "$RUNDIR_EXISTED" = 1 ] || rmdir /var/run/lttng 2>/dev/null || true
	rm -rf "$TMPD"
}
trap cleanup EXIT

if pgrep -x lttng-sessiond >/dev/null; then
	not_measured "another lttng-sessiond is already running (pid $(pgrep -x lttng-sessiond | tr '\n' ' ')); not touching it"
fi
say "starting lttng-sessiond --daemonize --no-kernel (LTTNG_HOME=$LTTNG_HOME)"
lttng-sessiond --daemonize --no-kernel >>"$LOG" 2>&1 || not_measured "lttng-sessiond --daemonize failed (see $LOG)"
for _ in 1 2 3 4 5 6 7 8 9 10; do SD_PID=$(pgrep -o -x lttng-sessiond || true); [ -n "$SD_PID" ] && break; sleep 0.2; done
[ -n "$SD_PID" ] || not_measured "lttng-sessiond did not stay up"
say "lttng-sessiond pid $SD_PID"

# session NAME OUTDIR SUBBUF NUM: create + discard-mode channel + event + start
session_up() {
	lttng create "$1" --output="$2" >>"$LOG" 2>&1 || return 1
	lttng enable-channel -u -s "$1" ch --discard --subbuf-size="$3" --num-subbuf="$4" >>"$LOG" 2>&1 || return 1
	lttng enable-event -u -s "$1" -c ch 'bench:sample' >>"$LOG" 2>&1 || return 1
	lttng start "$1" >>"$LOG" 2>&1
}
# session_down NAME -> prints `lttng stop`'s discarded-events warning, if any
session_down() {
	local o
	o=$(lttng stop "$1" 2>&1) || true
	echo "$o" >>"$LOG"
	lttng destroy "$1" >>"$LOG" 2>&1 || true
	grep -io '[0-9]* events\{0,1\} \(were\|was\) discarded' <<<"$o" | grep -o '^[0-9]*' | head -1 || true
}
# counted TRACE -> "events discarded_event_messages" from sink.utils.counter
counted() {
	babeltrace2 "$1" -c sink.utils.counter 2>>"$LOG" | awk '
		/Event messages/ {e=$1} /Discarded event messages/ {d=$1} END {print e+0, d+0}'
}

# ---- 1. hot path, LTTng and ours in the same run --------------------------------------
HOT_TRACE="$TMPD/trace-hot"
session_up bench-hot "$HOT_TRACE" 4M 8 || not_measured "creating the session/channel/event failed (see $LOG)"
LH_RUN="$LH hot --events-per-round $K --rounds $ROUNDS --warm $WARM --pause-ms 300"
say "hot path (LTTng): nice $LH_RUN"
# shellcheck disable=SC2086
LH_OUT=$(nice $LH_RUN 2>>"$LOG") || not_measured "lttng_hot failed (see $LOG)"
echo "$LH_OUT" >>"$LOG"
HOT_STOP_DISC=$(session_down bench-hot)
read -r HOT_EVENTS HOT_DMSG < <(counted "$HOT_TRACE")
HOT_EMITTED=0
declare -A LT
while read -r line; do
	th=$(kv threads "$line")
	LT[med.$th]=$(kv median "$line"); LT[min.$th]=$(kv min "$line"); LT[max.$th]=$(kv max "$line")
	LT[cpu.$th]=$(kv cpu_median "$line"); LT[cpumin.$th]=$(kv cpu_min "$line")
	HOT_EMITTED=$((HOT_EMITTED + $(kv events "$line")))
done <<<"$LH_OUT"
HOT_DISC=$((HOT_EMITTED - HOT_EVENTS))
say "LTTng: 1 thread ${LT[med.1]} ns, 2 threads ${LT[med.2]} ns; emitted $HOT_EMITTED, in trace $HOT_EVENTS"
[ "$HOT_EVENTS" -gt 0 ] || not_measured "the session recorded no events (the application did not register with the session daemon?)"

declare -A OURS
HOTP_RUN="$HOTP --events-per-round $K --rounds $ROUNDS $TMPD/hotpath.rec"
if [ -x "$HOTP" ]; then
	say "hot path (ours): nice $HOTP_RUN"
	# shellcheck disable=SC2086
	if HOTP_OUT=$(nice $HOTP_RUN 2>>"$LOG"); then
		echo "$HOTP_OUT" >>"$LOG"
		while read -r line; do
			[ "$(kv mode "$line")" = on ] || continue
			th=$(kv threads "$line")
			OURS[med.$th]=$(kv median "$line"); OURS[min.$th]=$(kv min "$line"); OURS[max.$th]=$(kv max "$line")
			OURS[drop.$th]=$(kv dropped "$line")
		done <<<"$HOTP_OUT"
	else
		say "hotpath failed (see $LOG)"
	fi
fi

# ---- 2. bytes/event: a trace of N events -------------------------------------------
BULK_TRACE="$TMPD/trace-bulk"
session_up bench-bulk "$BULK_TRACE" 8M 8 || not_measured "creating the bulk session failed (see $LOG)"
BULK_RUN="$LH bulk $N --chunk 250000 --pause-ms 20"
say "bulk trace: nice $BULK_RUN"
# shellcheck disable=SC2086
BULK_OUT=$(nice $BULK_RUN 2>>"$LOG") || not_measured "lttng_hot bulk failed (see $LOG)"
echo "$BULK_OUT" >>"$LOG"
BULK_STOP_DISC=$(session_down bench-bulk)
BULK_BYTES=$(du -sb "$BULK_TRACE" | cut -f1)
BULK_Z3=$(tar -C "$BULK_TRACE" -cf - . | zstd -3 -q -c | wc -c)
read -r BULK_EVENTS BULK_DMSG < <(counted "$BULK_TRACE")
BULK_DISC=$((N - BULK_EVENTS))
BPE=$(awk -v b="$BULK_BYTES" -v n="$BULK_EVENTS" 'BEGIN{printf "%.3f", (n>0)?b/n:0}')
BPE_Z3=$(awk -v b="$BULK_Z3" -v n="$BULK_EVENTS" 'BEGIN{printf "%.3f", (n>0)?b/n:0}')
say "bulk: $BULK_EVENTS events in trace, $BULK_BYTES bytes ($BPE B/event), zstd -3 $BULK_Z3 ($BPE_Z3)"

# ---- 3. babeltrace2 read speed on that trace ----------------------------------------
# rate NAME CMD... : median wall time over READ_RUNS runs -> events/s
declare -A RD RDT
rate() {
	local name=$1; shift
	local f="$TMPD/.t" r t0 t1
	: >"$f"
	for ((r = 1; r <= READ_RUNS; r++)); do
		t0=$EPOCHREALTIME
		nice "$@" >/dev/null 2>>"$LOG" || { say "FAILED: $*"; RD[$name]=nan; RDT[$name]=nan; return 0; }
		t1=$EPOCHREALTIME
		awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f\n", b-a}' >>"$f"
	done
	RDT[$name]=$(median <"$f")
	RD[$name]=$(awk -v n="$BULK_EVENTS" -v t="${RDT[$name]}" 'BEGIN{printf "%.0f", n/t}')
	say "  $name: ${RDT[$name]} s, ${RD[$name]} events/s"
}
say "babeltrace2 text, $READ_RUNS runs"
rate text babeltrace2 "$BULK_TRACE"
say "babeltrace2 -c sink.utils.dummy, $READ_RUNS runs"
rate dummy babeltrace2 "$BULK_TRACE" -c sink.utils.dummy

# ---- 4. report --------------------------------------------------------------------
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a==""||b==""||a=="nan"||b=="nan"||b==0) print "n/a"; else printf "%.2fx\n", a/b }'; }
hc() { awk -v x="$1" 'BEGIN{ if (x=="nan"||x=="") {print "n/a"; exit}
	if (x>=1e6) printf "%.2fM\n", x/1e6; else if (x>=1e3) printf "%.1fk\n", x/1e3; else printf "%.1f\n", x }'; }
ours_cell() { [ -n "${OURS[med.$1]:-}" ] && echo "${OURS[med.$1]} (${OURS[min.$1]}-${OURS[max.$1]})" || echo "n/a"; }
disc_note() { [ -n "$1" ] && echo " (\`lttng stop\` warned: $1 discarded)" || echo " (\`lttng stop\` printed no discard warning)"; }
{
	echo "## LTTng-UST anchor (bench/lttng.sh)"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $LTTNG_VER, liblttng-ust $UST_VER, $BT_VER;"
	echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end. Hot path: median (min-max) over $ROUNDS rounds x threads"
	echo "of (round time / $K events), after $WARM warm-up rounds; LTTng channel in discard mode, 4 MiB x 8 sub-buffers"
	echo "per CPU, per-UID buffers, 300 ms pause between rounds (outside the timed part) so the consumer drains."
	echo
	echo "| figure | LTTng-UST | ours | LTTng/ours | command |"
	echo "|---|---|---|---|---|"
	echo "| hot path, 1 thread, ns/event | ${LT[med.1]} (${LT[min.1]}-${LT[max.1]}) | $(ours_cell 1) | $(ratio "${LT[med.1]}" "${OURS[med.1]:-}") (goal >= 8x) | \`$LH_RUN\`; ours: \`$HOTP_RUN\` (mode=on) |"
	echo "| hot path, 2 threads, ns/event per thread | ${LT[med.2]} (${LT[min.2]}-${LT[max.2]}) | $(ours_cell 2) | $(ratio "${LT[med.2]}" "${OURS[med.2]:-}") | same runs |"
	echo "| hot path, LTTng thread CPU time (CLOCK_THREAD_CPUTIME_ID), ns/event, median (min): 1 thread; 2 threads | ${LT[cpu.1]} (${LT[cpumin.1]}); ${LT[cpu.2]} (${LT[cpumin.2]}) | wall only (bench/hotpath.c) | min/min wall: $(ratio "${LT[min.1]}" "${OURS[min.1]:-}"); $(ratio "${LT[min.2]}" "${OURS[min.2]:-}") | same LTTng run; excludes preemption on a loaded host |"
	echo "| discarded events, hot-path session | $HOT_DISC of $HOT_EMITTED$(disc_note "$HOT_STOP_DISC") | dropped ${OURS[drop.1]:-n/a} (1 th), ${OURS[drop.2]:-n/a} (2 th) | | emitted - \`babeltrace2 TRACE -c sink.utils.counter\` events ($HOT_DMSG discarded-event messages) |"
	echo "| trace of $(hc "$N") events: bytes (du -b) | $BULK_BYTES | | | \`$BULK_RUN\`, channel 8 MiB x 8, discard mode; \`du -sb TRACE\` |"
	echo "| bytes/event (trace directory) | $BPE | | | du -b / events in trace |"
	echo "| bytes/event after \`zstd -3\` of the tar of the trace | $BPE_Z3 | | | \`tar -cf - TRACE \| zstd -3 \| wc -c\` |"
	echo "| discarded events, bulk trace | $BULK_DISC of $N$(disc_note "$BULK_STOP_DISC") | | | $N - counter events ($BULK_DMSG discarded-event messages) |"
	echo "| babeltrace2 text to /dev/null, events/s | $(hc "${RD[text]}") (${RDT[text]} s) | | | \`babeltrace2 TRACE >/dev/null\`, median of $READ_RUNS |"
	echo "| babeltrace2 \`-c sink.utils.dummy\`, events/s | $(hc "${RD[dummy]}") (${RDT[dummy]} s) | | | \`babeltrace2 TRACE -c sink.utils.dummy\`, median of $READ_RUNS |"
	echo
	echo "Build: \`$LH_CMD\`. The tracepoint (bench/lttng/tp.h) has lttng_ust_field_string (12-character"
	echo "names, 16 distinct), lttng_ust_field_integer int64 (i * 7919) and int32 (i % 1000), the value sequence"
	echo "of bench/hotpath.c. Wall-clock times on a shared 2-core machine; both drivers run under \`nice\`."
} | tee "$MD"
# key=value figures for bench/run.sh's leading table
{
	echo "hot1=${LT[med.1]}"; echo "hot1_min=${LT[min.1]}"; echo "hot2=${LT[med.2]}"
	echo "ours1=${OURS[med.1]:-nan}"; echo "ours1_min=${OURS[min.1]:-nan}"; echo "ours2=${OURS[med.2]:-nan}"
	echo "hot_discarded=$HOT_DISC"; echo "hot_emitted=$HOT_EMITTED"
	echo "bpe=$BPE"; echo "bpe_z3=$BPE_Z3"; echo "bulk_events=$BULK_EVENTS"; echo "bulk_discarded=$BULK_DISC"
	echo "bt_text_eps=${RD[text]}"; echo "bt_dummy_eps=${RD[dummy]}"
	echo "bt_text_s=${RDT[text]}"; echo "bt_dummy_s=${RDT[dummy]}"
} >"$OUT/lttng.kv"
say "wrote $MD and $OUT/lttng.kv"
