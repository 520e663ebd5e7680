#!/usr/bin/env bash
# bench/bgcost.sh - what the recorder's background thread costs, before and after a
# change to it (issue 22: "The chunk burst", "The background thread's own CPU"), in one
# run with paired runs adjacent in time: its CPU per recorded event (thread CPU clock / events), its wake-ups a second
# (voluntary context switches), the largest single stretch of its work (the burst) and
# the file's bytes per event, with the default settings and the codecs and levels compared.
#
#   BUILD=build bash bench/bgcost.sh [--quick]
#
# "before" is the library of BGCOST_BASE (default 279e2ff, the last commit before the
# cheaper background thread; 8d8cd35 is the one before the streamed build), built from `git archive` in a temporary directory; "after" is
# $BUILD/lib/librec.a.  Both run the same driver, bench/bgcost.c (see its header for what
# each figure is), compiled with the Makefile's flags.  Settings:
#   default     REC_OUTPUT's default recorder, no REC_OPTIONS (what an unmodified service
#               gets), in its steady state: measured after BGCOST_STEADY_WARM seconds (6)
#               of recording, past the start-up's one-time work (the unwind tables, the
#               symbolizer's first read of libc's and the driver's debug information for
#               the CPU sampler's stacks, the first chunks growing their buffers: 1.0-2.4 s
#               into a run on the 2026-12-07 AMD host); the goal's row.  Its settings:
#               zstd's codec default (EVENTS' bodies at zstd -3, its other streams at
#               1: writer_split.c; other sections level 1 with minMatch 4: codec.c), the CPU
#               sampler and the process statistics on
#   start-up    the same, from the recorder's open (--warm 0: the thread's CPU since it
#               started) through BGCOST_STARTUP_SECONDS (6) of events after the driver's
#               0.3 s in qsort: what a service pays once as the recording starts; its excess
#               over as many seconds of the steady state is printed in ms of CPU
#   zstd N/lz4/none  a recorder opened by the program with that codec and level (no
#               sampler; zstd 0 is the codec's default level, none shows the thread's own
#               work without compression)
#   idle        the default recorder while the threads record nothing (--rate 0): its
#               wake-ups a second (issue 22: "cut the wake-ups that do no work")
# Each pair runs old then new; BGCOST_RUNS pairs per setting (3; --quick 1), medians with
# min-max.  Also gen_events' bytes per event (the bytes goal's generator: one thread
# through the writer API, 2M events) with either library, and (valgrind installed,
# BGCOST_CALLGRIND not 0) the background thread's instructions an event under callgrind,
# which this host's noise does not move.  Prints one markdown section on
# stdout (bench/run.sh appends it to RESULTS.md); progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
BASE=${BGCOST_BASE:-279e2ff}
RUNS=${BGCOST_RUNS:-3}
SECS=${BGCOST_SECONDS:-5}
STEADY_WARM=${BGCOST_STEADY_WARM:-6}
STARTUP_SECS=${BGCOST_STARTUP_SECONDS:-6}
if [ "${1:-}" = --quick ]; then RUNS=1; SECS=3; fi
RATE=${BGCOST_RATE:-25000}
THREADS=${BGCOST_THREADS:-8}

[ -f "$BUILD/lib/librec.a" ] || { echo "bgcost: $BUILD/lib/librec.a is missing" >&2; exit 1; }
bench_flags
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
log() { echo "bgcost: $*" >&2; }

# shellcheck disable=SC2086
$B_CC $B_CFLAGS -Ibench -o "$TMP/bgcost_new" bench/bgcost.c "$BUILD/lib/librec.a" $B_LIBS
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -Ibench -o "$TMP/gen_new" bench/gen_events.c "$BUILD/lib/librec.a" $B_LIBS
build_base bgcost "$BASE" "$TMP/old" build/lib/librec.a
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -Ibench -o "$TMP/bgcost_old" bench/bgcost.c "$TMP/old/build/lib/librec.a" $B_LIBS
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -Ibench -o "$TMP/gen_old" bench/gen_events.c "$TMP/old/build/lib/librec.a" $B_LIBS

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(date -u +%H:%M)
declare -A R # R[setting.lib.key] = space-separated values

one() { # SETTING LIB ARGS...
	local set=$1 lib=$2 line k secs=$SECS
	shift 2
	local f="$TMP/$lib.rec"
	rm -f "$f"
	if [ "$set" = idle ]; then
		line=$(env -u REC_OPTIONS REC_OUTPUT="$f" "$TMP/bgcost_$lib" --default --rate 0 \
			--threads "$THREADS" --seconds "$SECS") || { log "$set $lib failed"; return; }
	elif [ "$set" = default ]; then
		line=$(env -u REC_OPTIONS REC_OUTPUT="$f" "$TMP/bgcost_$lib" --default --rate "$RATE" \
			--threads "$THREADS" --warm "$STEADY_WARM" --seconds "$SECS") ||
			{ log "$set $lib failed"; return; }
	elif [ "$set" = start-up ]; then
		secs=$STARTUP_SECS
		line=$(env -u REC_OPTIONS REC_OUTPUT="$f" "$TMP/bgcost_$lib" --default --rate "$RATE" \
			--threads "$THREADS" --warm 0 --seconds "$secs") || { log "$set $lib failed"; return; }
	else
		line=$("$TMP/bgcost_$lib" --rate "$RATE" --threads "$THREADS" --seconds "$SECS" "$@" "$f") ||
			{ log "$set $lib failed"; return; }
	fi
	log "$set $lib: $line"
	for k in bg_ns_per_event wakeups_per_s burst_us bursts_over_1ms bytes_per_event dropped; do
		R[$set.$lib.$k]="${R[$set.$lib.$k]:-} $(kv $k "$line")"
	done
	R[$set.$lib.cpu_us_s]="${R[$set.$lib.cpu_us_s]:-} $(awk -v n="$(kv bg_ns_per_event "$line")" \
		-v e="$(kv events "$line")" -v s="$secs" 'BEGIN { printf "%.1f", n * e / s / 1000 }')"
}

SETTINGS=(default start-up "zstd 0" "zstd 3" "zstd 1" "zstd -1" lz4 none idle)
args_of() {
	case "$1" in
	default | start-up | idle) ;;
	lz4) echo "--codec lz4" ;;
	none) echo "--codec none" ;;
	*) echo "--codec zstd --level ${1#zstd }" ;;
	esac
}
for ((i = 0; i < RUNS; i++)); do
	for s in "${SETTINGS[@]}"; do
		# shellcheck disable=SC2046
		one "$s" old $(args_of "$s")
		# shellcheck disable=SC2046
		one "$s" new $(args_of "$s")
	done
done
GB_OLD="" GB_NEW=""
for ((i = 0; i < RUNS; i++)); do
	GB_OLD="$GB_OLD $(kv bytes_per_event "$("$TMP/gen_old" 2000000 "$TMP/g.rec")")"
	GB_NEW="$GB_NEW $(kv bytes_per_event "$("$TMP/gen_new" 2000000 "$TMP/g.rec")")"
done
# Instructions of the background thread an event (valgrind's callgrind counts
# them exactly, whatever else the host runs: the CPU clock of a 5-second run on
# a shared host moves by more than many changes).  File mode, zstd's default;
# two run lengths, so that the start-up's one-time work (the unwind tables,
# the symbolizer) cancels: (Ir of the long run - Ir of the short) / (events
# of the long - events of the short).  BGCOST_CALLGRIND=0 skips it.
IR_OLD="" IR_NEW=""
bg_ir() { # LIB SECONDS -> "Ir events" of its background thread
	local lib=$1 secs=$2 f ir ev
	rm -f "$TMP"/cg.* "$TMP/cg.rec"
	valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$TMP/cg.%p" \
		"$TMP/bgcost_$lib" --seconds "$secs" --warm 1 "$TMP/cg.rec" >/dev/null 2>&1 || return 1
	# the background thread's file: the one with rec_bg_main in it
	f=$(grep -l "rec_bg_main" "$TMP"/cg.*-* 2>/dev/null | head -1)
	[ -n "$f" ] || return 1
	ir=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$f" | head -1)
	ev=$("$BUILD/bin/rec-summary" "$TMP/cg.rec" 2>/dev/null | sed -n 's/^ *Events: *\([0-9]*\).*/\1/p' | head -1)
	[ -n "$ir" ] && [ -n "$ev" ] && echo "$ir $ev"
}
if [ "${BGCOST_CALLGRIND:-1}" != 0 ] && command -v valgrind >/dev/null; then
	for lib in old new; do
		log "callgrind: $lib, 1 s and 4 s"
		if a=$(bg_ir "$lib" 1) && b=$(bg_ir "$lib" 4); then
			v=$(awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ");
				if (y[2] > x[2]) printf "%.0f", (y[1] - x[1]) / (y[2] - x[2]) }')
			[ "$lib" = old ] && IR_OLD=$v || IR_NEW=$v
		fi
	done
fi
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# median (min-max) of a list of numbers
mm() {
	local v=$1 p=${2:-1}
	[ -n "${v// /}" ] || { echo "n/a"; return; }
	local m lo hi
	m=$(tr ' ' '\n' <<<"$v" | grep . | median)
	lo=$(tr ' ' '\n' <<<"$v" | grep . | sort -g | head -1)
	hi=$(tr ' ' '\n' <<<"$v" | grep . | sort -g | tail -1)
	awk -v m="$m" -v a="$lo" -v b="$hi" -v p="$p" 'BEGIN { printf "%.*f (%.*f-%.*f)\n", p, m, p, a, p, b }'
}
med() { tr ' ' '\n' <<<"$1" | grep . | median; }

NEW_COMMIT=$(git rev-parse --short HEAD)
echo "## Background thread cost (bench/bgcost.sh)"
echo
echo "The recorder's background thread while $THREADS threads record $RATE events/s (the 3-field event of"
echo "gen_events, in 2 ms slices) for $SECS s after a warm-up of 1.5 s (default: $STEADY_WARM s, its steady state;"
echo "start-up: from the open, its first $STARTUP_SECS s of events); before: the library of $BASE, after: $NEW_COMMIT"
echo "(this tree); $RUNS pair(s) per setting, old and new run back to back; median (min-max). Started"
echo "$START UTC, load average $LOAD0 at the start and $LOAD1 at the end (a shared 2-core machine: other"
echo "jobs ran meanwhile). CPU: the thread's CPU clock over the measured seconds / events the recorder"
echo "took; wake-ups: its voluntary context switches a second; burst: the largest stretch of its work"
echo "(its CPU clock read every 1 ms, consecutive growing readings summed); bursts > 1 ms: such"
echo "stretches over the measured seconds; bytes/event: the closed file / all events recorded; idle: the"
echo "default recorder while the threads record nothing (its CPU time a second instead of per event)."
echo
echo "| setting | library | bg CPU ns/event | wake-ups/s | largest burst us | bursts > 1 ms | bytes/event | dropped |"
echo "|---|---|---|---|---|---|---|---|"
for s in "${SETTINGS[@]}"; do
	for lib in old new; do
		name=$([ "$lib" = old ] && echo "before ($BASE)" || echo "after")
		ns=$(mm "${R[$s.$lib.bg_ns_per_event]:-}")
		[ "$s" = idle ] && ns="(no events) $(mm "${R[$s.$lib.cpu_us_s]:-}") us a second"
		echo "| $s | $name | $ns | $(mm "${R[$s.$lib.wakeups_per_s]:-}") |" \
			"$(mm "${R[$s.$lib.burst_us]:-}" 0) | $(mm "${R[$s.$lib.bursts_over_1ms]:-}" 0) |" \
			"$(mm "${R[$s.$lib.bytes_per_event]:-}" 3) | $(mm "${R[$s.$lib.dropped]:-}" 0) |"
	done
done
echo
echo "gen_events, 2M events through the writer API (zstd, the default level; the generator of the bytes goal,"
echo "row 2), bytes/event: before $(mm "$GB_OLD" 3), after $(mm "$GB_NEW" 3)."
echo
if [ -n "$IR_OLD" ] && [ -n "$IR_NEW" ]; then
	echo "Instructions of the background thread an event (callgrind, file mode with zstd's default: the"
	echo "difference between a 4-second and a 1-second run, so that start-up's one-time work cancels; exact"
	echo "counts, not moved by the host's noise): before $IR_OLD, after $IR_NEW" \
		"($(awk -v a="$IR_OLD" -v b="$IR_NEW" 'BEGIN { printf "%+.1f %%", (b - a) * 100 / a }'))."
	echo
fi
d=$(med "${R[default.new.bg_ns_per_event]:-}")
su=$(med "${R[start-up.new.bg_ns_per_event]:-}")
# the start-up's one-time CPU: its first seconds less as many of the steady state
once=$(awk -v a="$(med "${R[start-up.new.cpu_us_s]:-}")" -v b="$(med "${R[default.new.cpu_us_s]:-}")" \
	-v s="$STARTUP_SECS" 'BEGIN { if (a == "" || b == "") print "n/a"; else printf "%.1f", (a - b) * s / 1000 }')
echo "Goal (issue 22): background CPU at most 100 ns per event with the default settings, in the"
echo "steady state: after, median $(awk -v x="$d" 'BEGIN { if (x == "" || x == "nan") print "n/a"; else printf "%.1f", x }') ns:" \
	"$(awk -v x="$d" 'BEGIN { if (x == "" || x == "nan") print "not measured"; else if (x <= 100) print "met"; else print "missed" }')."
echo "The first $STARTUP_SECS s of a recording cost $(awk -v x="$su" 'BEGIN { if (x == "") print "n/a"; else printf "%.1f", x }') ns an event (the start-up row):" \
	"$once ms of CPU once, over $STARTUP_SECS s of the steady state (medians)."
# the figures for bench/run.sh's goals table (the leading table of RESULTS.md)
mkdir -p "$BUILD/bench"
{
	echo "bg_ns=$d"
	echo "bg_ns_range=$(mm "${R[default.new.bg_ns_per_event]:-}")"
	echo "bg_startup_ns_range=$(mm "${R[start-up.new.bg_ns_per_event]:-}")"
	echo "bg_startup_once_ms=$once"
	echo "bg_startup_secs=$STARTUP_SECS"
	echo "bg_steady_warm=$STEADY_WARM"
	echo "bytes_per_event=$(med "$GB_NEW")"
} >"$BUILD/bench/bgcost.kv"
