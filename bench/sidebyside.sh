#!/usr/bin/env bash
# bench/sidebyside.sh [--quick] - issue 22 "the same service, the same load,
# the tools C teams use instead" and issue 18's server bullet: what recording
# costs a service next to perf record, heaptrack and LTTng-UST, in one run.
#
#   BUILD=build bash bench/sidebyside.sh           full: 3 runs x 10 s per arm
#   BUILD=build bash bench/sidebyside.sh --quick   quick: 3 runs x 3 s per arm
#   (bench/run.sh calls it; its table goes first in bench/RESULTS.md)
#
# Two services, each at 70 % of its own capacity (measured again at the start
# of every round), open loop (bench/loadgen.c,
# one thread, epoll, 16 persistent connections, latency from each request's
# scheduled time):
#  - requestwatch (examples/requestwatch.c), GET /requests/fast;
#  - Debian's memcached (unmodified, -t 4), the memcache text protocol
#    (loadgen --proto memcache: 90 % get, 10 % set of 32-byte values).
# Arms, interleaved run by run (off, A, B, ..., then again):
#   off        the program alone (requestwatch: requestwatch-plain, the
#              unmodified build; offi: the instrumented build, recording off)
#   rec        requestwatch's instrumented build, REC_OUTPUT only (defaults)
#   rec-record `rec-record -q -o F --` the unmodified program (defaults)
#   perf       `perf record -F 100 -g -o F --` (100 Hz: rec's default cpu=)
#   heaptrack  `heaptrack -o F --` (Debian's package)
#   lttng      (requestwatch only) requestwatch-plain built with the
#              tracepoint requestwatch:request (bench/lttng/rw_tp.h: path,
#              status, start, duration; vtid context) in place of
#              app.Request, a session with that event in a default UST
#              channel (discard mode), a private lttng-sessiond.
# Per run, from loadgen: p50/p90/p99/p99.9 latency, throughput; CPU per
# request = user+sys of wait4's rusage of the process loadgen started (the
# wrapper: perf, rec-record, heaptrack's shell with its interpreter and
# compressor, and the program they waited for) / requests sent; for lttng
# the session and consumer daemons' utime+stime (/proc/PID/stat, from
# `lttng start` to after `lttng stop`) are added.  Bytes written per second:
# the output's size / the program's lifetime (start-up + load).  What each
# recorded, from its own output: rec-summary --json; perf report --stats;
# heaptrack_print; babeltrace2 -c sink.utils.counter.
# Environment: SBS_DURATION, SBS_RUNS, SBS_RATE_RW, SBS_RATE_MC (requests/s
# instead of 70 % of capacity), SBS_NO_MEMCACHED=1, SBS_NO_LTTNG=1, SBS_ONLY=rw|mc
# (one service).
# Writes $BUILD/bench/sidebyside.md (also on stdout) and sidebyside.kv.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
quick_args 39 "$@"
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
if [ "$QUICK" = 1 ]; then
	DURATION=${SBS_DURATION:-3}; RUNS=${SBS_RUNS:-3}; CAPDUR=2
else
	DURATION=${SBS_DURATION:-10}; RUNS=${SBS_RUNS:-3}; CAPDUR=3
fi
HZ=100 # rec's default CPU sampling rate (cpu=, libfmt/preload/preload.c; the recorder's default)
OUT="$BUILD/bench"
DATA="$OUT/sbs-data"
LOG="$OUT/sbs-log.txt"
MD="$OUT/sidebyside.md"
KV="$OUT/sidebyside.kv"
rm -rf "$DATA"
mkdir -p "$OUT" "$DATA"
: >"$LOG"
: >"$KV"
say() { printf '[sidebyside %s] %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$LOG" >&2; }
die() { say "error: $*"; printf '## Side by side: rec, perf record, heaptrack, LTTng-UST\n\nnot measured: %s\n' "$*" | tee "$MD"; exit 0; }
BIN="$BUILD/bin"
for t in requestwatch requestwatch-plain rec-record rec-summary; do
	[ -x "$BIN/$t" ] || die "$BIN/$t is missing (make all BUILD=$BUILD)"
done
command -v python3 >/dev/null || die "python3 is missing"

# ---- tools, installed from Debian when missing ------------------------------------------
NOTES=()
need=()
command -v perf >/dev/null || need+=(linux-perf)
command -v heaptrack >/dev/null || need+=(heaptrack)
command -v memcached >/dev/null || need+=(memcached)
command -v lttng >/dev/null || need+=(lttng-tools)
command -v babeltrace2 >/dev/null || need+=(babeltrace2)
echo '#include <lttng/tracepoint.h>' | ${CC:-cc} -E -x c - >/dev/null 2>&1 || need+=(liblttng-ust-dev)
if [ "${#need[@]}" -gt 0 ]; then
	if [ "$(id -u)" = 0 ]; then
		say "installing ${need[*]}"
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") >>"$LOG" 2>&1 ||
			say "apt-get install ${need[*]} failed (see $LOG)"
	else
		say "missing ${need[*]} and not root: those arms are left out"
	fi
fi
HAVE_PERF=0; HAVE_HT=0; HAVE_MC=0; HAVE_LT=0
command -v perf >/dev/null && HAVE_PERF=1
command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null && HAVE_HT=1
command -v memcached >/dev/null && [ "${SBS_NO_MEMCACHED:-0}" != 1 ] && HAVE_MC=1
PARANOID=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo '?')
if [ "$HAVE_PERF" = 1 ]; then
	if [ "$(id -u)" != 0 ] && [ "$PARANOID" != '?' ] && [ "$PARANOID" -gt 1 ]; then
		HAVE_PERF=0; NOTES+=("perf record left out: perf_event_paranoid is $PARANOID and this is not root (as root: sysctl kernel.perf_event_paranoid=1)")
	elif ! perf record -q -F "$HZ" -g -o "$DATA/probe.data" -- true >>"$LOG" 2>&1; then
		HAVE_PERF=0; NOTES+=("perf record left out: it does not run here (see $LOG)")
	else
		PERF_EV=$(perf evlist -i "$DATA/probe.data" 2>/dev/null | head -1)
		NOTES+=("perf_event_paranoid is $PARANOID; the script runs as $( [ "$(id -u)" = 0 ] && echo root || echo "uid $(id -u)"), so it was left as it is (root is not restricted by it). perf samples \`${PERF_EV:-?}\` (a virtual machine without a hardware PMU gets cpu-clock).")
	fi
fi
PERF_VER=$(perf --version 2>/dev/null || echo '-')
HT_VER=$(heaptrack --version 2>/dev/null | head -1 || echo '-')
MC_VER=$(memcached -V 2>/dev/null || echo '-')

# ---- builds ---------------------------------------------------------------------------------
bench_flags
LG="$OUT/loadgen"
LG_CMD="$B_CC $B_CFLAGS -o $LG bench/loadgen.c"
say "compiling: $LG_CMD"
# shellcheck disable=SC2086
$LG_CMD >>"$LOG" 2>&1 || die "bench/loadgen.c does not compile (see $LOG)"
RW="$BIN/requestwatch"
RWP=$(readlink -f "$BIN/requestwatch-plain")
RWL="$OUT/requestwatch-lttng"
RWL_CMD="$B_CC -DREQUESTWATCH_PLAIN -DREQUESTWATCH_LTTNG -Ibench/lttng $B_CFLAGS -o $RWL examples/requestwatch.c bench/lttng/rw_tp.c -llttng-ust -ldl -pthread"
if [ "${SBS_NO_LTTNG:-0}" != 1 ] && command -v lttng >/dev/null && command -v lttng-sessiond >/dev/null && command -v babeltrace2 >/dev/null; then
	say "compiling: $RWL_CMD"
	# shellcheck disable=SC2086
	if $RWL_CMD >>"$LOG" 2>&1; then HAVE_LT=1; else NOTES+=("LTTng arm left out: $RWL_CMD failed (see $LOG)"); fi
fi
MC=$(readlink -f "$(command -v memcached 2>/dev/null || echo /usr/bin/memcached)")

# ---- LTTng: a private session daemon (as bench/lttng.sh) ---------------------------------------
SD_PID=""
TMPD=$(mktemp -d /tmp/sbs-bench.XXXXXX)
RUNDIR_EXISTED=0
[ -d /var/run/lttng ] && RUNDIR_EXISTED=1
cleanup() {
	if [ -n "$SD_PID" ] && kill -0 "$SD_PID" 2>/dev/null; then
		lttng destroy -a >/dev/null 2>&1 || true
		kill "$SD_PID" 2>/dev/null || true
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$SD_PID" 2>/dev/null || break; sleep 0.3; done
		kill -0 "$SD_PID" 2>/dev/null && kill -9 "$SD_PID" 2>/dev/null || true
	fi
	[ "$RUNDIR_EXISTED" = 1 ] || rmdir /var/run/lttng 2>/dev/null || true
	rm -rf "$TMPD"
}
trap cleanup EXIT
if [ "$HAVE_LT" = 1 ]; then
	export LTTNG_HOME="$TMPD/home"
	mkdir -p "$LTTNG_HOME"
	if pgrep -x lttng-sessiond >/dev/null; then
		HAVE_LT=0; NOTES+=("LTTng arm left out: another lttng-sessiond runs (not touched)")
	elif lttng-sessiond --daemonize --no-kernel >>"$LOG" 2>&1; then
		for _ in 1 2 3 4 5 6 7 8 9 10; do SD_PID=$(pgrep -o -x lttng-sessiond || true); [ -n "$SD_PID" ] && break; sleep 0.2; done
		[ -n "$SD_PID" ] || { HAVE_LT=0; NOTES+=("LTTng arm left out: lttng-sessiond did not stay up"); }
	else
		HAVE_LT=0; NOTES+=("LTTng arm left out: lttng-sessiond --daemonize failed (see $LOG)")
	fi
fi
LT_VER=$(lttng --version 2>/dev/null | head -1 || echo '-')
# daemon_ticks: utime+stime (clock ticks) of the session daemon and its children (consumerd)
daemon_ticks() {
	local p t=0 v
	for p in $SD_PID $(pgrep -P "$SD_PID" 2>/dev/null); do
		v=$(awk '{ s = $0; sub(/^.*\) /, "", s); split(s, f, " "); print f[12] + f[13] }' "/proc/$p/stat" 2>/dev/null || echo 0)
		t=$((t + v))
	done
	echo "$t"
}
CLK_TCK=$(getconf CLK_TCK)

# ---- arms ---------------------------------------------------------------------------------------
# ARM -> the command line (after loadgen's "--"), with $F the output file
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
RW_ARMS=(off offi rec rec-record)
[ "$HAVE_PERF" = 1 ] && RW_ARMS+=(perf)
[ "$HAVE_HT" = 1 ] && RW_ARMS+=(heaptrack)
[ "$HAVE_LT" = 1 ] && RW_ARMS+=(lttng)
MC_ARMS=()
if [ "$HAVE_MC" = 1 ]; then
	MC_ARMS=(off rec-record)
	[ "$HAVE_PERF" = 1 ] && MC_ARMS+=(perf)
	[ "$HAVE_HT" = 1 ] && MC_ARMS+=(heaptrack)
fi
SERVICES=(rw)
[ "$HAVE_MC" = 1 ] && SERVICES+=(mc)
if [ -n "${SBS_ONLY:-}" ]; then # one service: rw or mc
	[ "$SBS_ONLY" = rw ] || [ "$SBS_ONLY" = mc ] || die "SBS_ONLY: rw or mc, not $SBS_ONLY"
	[ "$SBS_ONLY" = rw ] || [ "$HAVE_MC" = 1 ] || die "SBS_ONLY=mc: memcached is not here"
	SERVICES=("$SBS_ONLY")
fi
arms_of() { if [ "$1" = rw ]; then echo "${RW_ARMS[@]}"; else echo "${MC_ARMS[@]}"; fi; }
# program SERVICE PORT -> the program's argv (one word a line)
program() {
	if [ "$1" = rw ]; then printf '%s\n' "$RWP" --port 0
	else printf '%s\n' "$MC" -u root -l 127.0.0.1 -p "$2" -t 4 -U 0; fi
}
# command SERVICE ARM PORT FILE -> the full command, one word a line
command_of() {
	local svc=$1 arm=$2 port=$3 f=$4
	case $arm in
	off) program "$svc" "$port" ;;
	offi) printf '%s\n' "$RW" --port 0 ;;
	rec) printf '%s\n' env "REC_OUTPUT=$f" "$RW" --port 0 ;;
	lttng) printf '%s\n' "$RWL" --port 0 ;;
	rec-record) printf '%s\n' "$BIN/rec-record" -q -o "$f" --; program "$svc" "$port" ;;
	perf) printf '%s\n' perf record -q -F "$HZ" -g -o "$f" --; program "$svc" "$port" ;;
	heaptrack) printf '%s\n' heaptrack -o "${f%.zst}" --; program "$svc" "$port" ;;
	esac
}
out_of() { # SERVICE ARM RUN -> the output file
	case $2 in
	off|offi) echo "" ;;
	rec|rec-record) echo "$DATA/$1-$2-$3.rec" ;;
	perf) echo "$DATA/$1-perf-$3.data" ;;
	heaptrack) echo "$DATA/$1-heaptrack-$3.zst" ;;
	lttng) echo "$DATA/$1-lttng-$3" ;;
	esac
}
exe_of() { if [ "$1" = rw ]; then if [ "$2" = offi ] || [ "$2" = rec ]; then readlink -f "$RW"; elif [ "$2" = lttng ]; then readlink -f "$RWL"; else echo "$RWP"; fi; else echo "$MC"; fi; }
lg_proto() { if [ "$1" = mc ]; then echo "--proto memcache"; else echo "--keepalive"; fi; }

# ---- 1. capacity: closed loop, 2 persistent connections, the program alone ----------------------------
# Measured again at the start of every round, and that round's open-loop rate
# is 70 % of it: this host's speed drifts 1.4-2x within the hour, and a rate
# fixed from one measurement at the start was, some rounds later, at or above
# the capacity of the moment (off's own p90 varied 6.5-15x between rounds,
# queueing, with every tool's p90 unjudgeable beside it).
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
T0=$EPOCHREALTIME
declare -A RATE CAP
calibrate() { # SVC ROUND: CAP[SVC] and RATE[SVC] for this round, appended to $DATA/SVC.cap and .rate
	local svc=$1 r=$2 port line cmd wp rv
	port=$(free_port)
	mapfile -t cmd < <(program "$svc" "$port")
	wp=(); [ "$svc" = mc ] && wp=(--wait-port "$port")
	# shellcheck disable=SC2046
	line=$("$LG" closed $(lg_proto "$svc") --conns 2 --duration "$CAPDUR" "${wp[@]}" --stop-signal TERM -- "${cmd[@]}" 2>>"$LOG") ||
		die "loadgen closed ($svc) failed: $line (see $LOG)"
	echo "capacity $svc round $r $line" >>"$LOG"
	CAP[$svc]=$(kv throughput "$line")
	echo "${CAP[$svc]}" >>"$DATA/$svc.cap"
	rv=SBS_RATE_RW; [ "$svc" = mc ] && rv=SBS_RATE_MC
	RATE[$svc]=${!rv:-$(awk -v c="${CAP[$svc]}" 'BEGIN{printf "%.0f", 0.7 * c}')}
	echo "${RATE[$svc]}" >>"$DATA/$svc.rate"
	say "round $r, $svc: capacity ${CAP[$svc]} requests/s (closed loop, 2 connections); open-loop rate ${RATE[$svc]}"
}
for svc in "${SERVICES[@]}"; do : >"$DATA/$svc.cap"; : >"$DATA/$svc.rate"; done

# ---- 2. the runs, interleaved ------------------------------------------------------------------------------
split_kv() { # PREFIX LINE: every key=value of LINE appended to $DATA/PREFIX.KEY
	awk -v pre="$DATA/$1." '{ for (i = 1; i <= NF; i++) { k = $i; sub(/=.*/, "", k); v = $i; sub(/^[^=]*=/, "", v); print v >> (pre k) } }' <<<"$2"
}
for ((r = 1; r <= RUNS; r++)); do
	for svc in "${SERVICES[@]}"; do
		calibrate "$svc" "$r"
		if [ "$r" = 1 ]; then
			# A warm-up, discarded: the first open-loop run of a session came out
			# with twice the p90 of the others (0.28 ms against 0.12-0.13 ms).
			port=$(free_port)
			mapfile -t cmd < <(command_of "$svc" off "$port" "")
			wp=(); [ "$svc" = mc ] && wp=(--wait-port "$port")
			# shellcheck disable=SC2046
			line=$("$LG" open $(lg_proto "$svc") --rate "${RATE[$svc]}" --duration "$CAPDUR" --timeout 10 "${wp[@]}" \
				--stop-signal TERM --stop-exe "$(exe_of "$svc" off)" -- "${cmd[@]}" 2>>"$LOG") || say "warm-up failed: $line"
			echo "warm-up $svc off $line" >>"$LOG"
		fi
		for arm in $(arms_of "$svc"); do
			port=$(free_port)
			f=$(out_of "$svc" "$arm" "$r")
			mapfile -t cmd < <(command_of "$svc" "$arm" "$port" "$f")
			wp=(); [ "$svc" = mc ] && wp=(--wait-port "$port")
			t_lt0=0
			if [ "$arm" = lttng ]; then
				lttng create "sbs$r" --output="$f" >>"$LOG" 2>&1 &&
					lttng enable-event -u -s "sbs$r" 'requestwatch:request' >>"$LOG" 2>&1 &&
					lttng add-context -u -s "sbs$r" -t vtid >>"$LOG" 2>&1 &&
					lttng start "sbs$r" >>"$LOG" 2>&1 || say "lttng session set-up failed (see $LOG)"
				t_lt0=$(daemon_ticks)
			fi
			load=$(cut -d' ' -f1 /proc/loadavg)
			say "run $r, $svc $arm (load $load): loadgen open $(lg_proto "$svc") --rate ${RATE[$svc]} --duration $DURATION -- ${cmd[*]}"
			# shellcheck disable=SC2046
			line=$("$LG" open $(lg_proto "$svc") --rate "${RATE[$svc]}" --duration "$DURATION" --timeout 10 "${wp[@]}" \
				--stop-signal TERM --stop-exe "$(exe_of "$svc" "$arm")" -- "${cmd[@]}" 2>>"$LOG") || say "loadgen/service failed: $line"
			extra_cpu=0
			if [ "$arm" = lttng ]; then
				lttng stop "sbs$r" >>"$LOG" 2>&1 || true
				extra_cpu=$(awk -v a="$t_lt0" -v b="$(daemon_ticks)" -v h="$CLK_TCK" 'BEGIN{printf "%.3f", (b - a) / h}')
				lttng destroy "sbs$r" >>"$LOG" 2>&1 || true
			fi
			echo "$svc $arm $r load=$load $line daemon_cpu_s=$extra_cpu" >>"$LOG"
			p="$svc.$arm"
			split_kv "$p" "$line"
			echo "$load" >>"$DATA/$p.load"
			sent=$(kv sent "$line")
			awk -v c="$(kv service_cpu_s "$line")" -v d="$extra_cpu" -v n="${sent:-0}" 'BEGIN{ if (n > 0) printf "%.2f\n", (c + d) / n * 1e6; else print "nan" }' >>"$DATA/$p.cpu_us"
			# bytes written per second of the program's life
			bytes=0
			if [ -n "$f" ] && [ -e "$f" ]; then bytes=$(du -sb "$f" | cut -f1); fi
			awk -v b="$bytes" -v w="$(kv wall "$line")" -v s="$(kv startup_ms "$line")" 'BEGIN{ t = w + s / 1000; if (t > 0) printf "%.0f\n", b / t; else print "nan" }' >>"$DATA/$p.bps"
			echo "$bytes" >>"$DATA/$p.bytes"
		done
	done
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- 3. what each recorded (the last run's output, read with the tool's own reader) -------------------------
# -> $DATA/SVC.ARM.what: "kinds|count|detail"
for svc in "${SERVICES[@]}"; do
	for arm in $(arms_of "$svc"); do
		f=$(out_of "$svc" "$arm" "$RUNS")
		w="-|-|-"
		case $arm in
		rec|rec-record)
			w=$("$BIN/rec-summary" --json "$f" 2>>"$LOG" | python3 -c '
import json, sys
d = json.load(sys.stdin)
t = sorted(((x["name"], x["count"]) for x in d["types"] if x["count"] > 0), key=lambda x: -x[1])
print("%d|%d|%s%s" % (len(t), d["events"], ", ".join("%s %d" % x for x in t), "; dropped %d" % d["dropped"] if d["dropped"] else ""))
' 2>>"$LOG") || w="?|?|rec-summary failed" ;;
		perf)
			# record kinds with content (the file format's bookkeeping records left out)
			w=$(perf report -i "$f" --stats 2>>"$LOG" | awk '
				/ events:/ { k = $1; n = $3; if (k == "TOTAL" || seen[k]++) next
					if (k ~ /^(FINISHED_ROUND|FINISHED_INIT|ID_INDEX|THREAD_MAP|CPU_MAP|TIME_CONV|STAT_CONFIG|STAT_ROUND|EVENT_UPDATE|HEADER_.*|BUILD_ID|FEATURE|COMPRESSED|AUXTRACE_INFO)$/) next
					kinds++; total += n; det = det (det == "" ? "" : ", ") k " " n }
				END { printf "%d|%d|%s\n", kinds, total, det }') || w="?|?|perf report failed"
			w="$w (SAMPLE: CPU samples with their call chains)" ;;
		heaptrack)
			w=$(heaptrack_print -f "$f" 2>>"$LOG" | awk '
				/^calls to allocation functions:/ { a = $5 }
				/^temporary memory allocations:/ { t = $4 }
				/^total memory leaked:/ { l = $4 }
				/^peak heap memory consumption:/ { p = $5 }
				END { printf "2|%s|allocation calls %s, each with its stack, and the frees that match them (temporary %s, leaked %s, peak heap %s)\n", a, a, t, l, p }') || w="?|?|heaptrack_print failed" ;;
		lttng)
			w=$(babeltrace2 "$f" -c sink.utils.counter 2>>"$LOG" | awk '
				/Event messages/ { e = $1 } /Discarded event messages/ { d = $1 }
				END { printf "1|%d|requestwatch:request %d (path, status, start, duration; vtid); discarded-event messages %d\n", e, e, d }') || w="?|?|babeltrace2 failed" ;;
		esac
		echo "$w" >"$DATA/$svc.$arm.what"
		say "$svc $arm recorded: $w"
	done
done
ELAPSED=$(awk -v a="$T0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.0f", b-a}')

# ---- 4. report ---------------------------------------------------------------------------------------------
med() { median <"$DATA/$1.$2"; }
cell() { # PREFIX KEY DIVISOR DIGITS -> "median (min-max)"
	local f="$DATA/$1.$2"
	[ -s "$f" ] || { echo "n/a"; return; }
	sort -g "$f" | awk -v d="${3:-1}" -v p="${4:-1}" '{ v[NR] = $1 } END {
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.*f (%.*f-%.*f)\n", p, m / d, p, v[1] / d, p, v[NR] / d }'
}
# pboth SVC A B KEY -> "median min max n" over runs r of (A's run r / B's run r - 1) in %
# ("nan" when no run has both): two arms compared round by round, as each is with off, so
# that a drift of the machine's speed between rounds (seen: whole rounds at 6.6 or 9.1 s of
# service CPU for the same requests) moves both sides of a ratio, not one median
pboth() {
	paste "$DATA/$1.$2.$4" "$DATA/$1.$3.$4" | awk '{ if ($2 > 0 && $1 != "nan" && $2 != "nan") printf "%.4f\n", ($1 - $2) / $2 * 100 }' |
		sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.4f %.1f %.1f %d\n", m, v[1], v[NR], NR }'
}
paired() { # SVC ARM KEY -> against off, round by round: "+x.y % (min..max)"
	pboth "$1" "$2" off "$3" | awk '$1 == "nan" { print "n/a"; next } { printf "%+.1f %% (%+.1f..%+.1f)\n", $1, $2, $3 }'
}
pmed() { # SVC ARM KEY -> the median paired % only ("nan" when none)
	pboth "$1" "$2" off "$3" | awk '{ print $1 }'
}
hbytes() { awk -v x="$1" 'BEGIN{ if (x == "nan" || x == "") print "n/a"; else if (x >= 1048576) printf "%.2f MiB/s\n", x / 1048576; else if (x >= 1024) printf "%.1f KiB/s\n", x / 1024; else printf "%.0f B/s\n", x }'; }
label() {
	case $1 in
	off) echo "off (the program alone)" ;;
	offi) echo "off, the instrumented build (recording off)" ;;
	rec) echo "**rec**, instrumented build, REC_OUTPUT (defaults)" ;;
	rec-record) echo "**rec-record** (defaults)" ;;
	perf) echo "perf record -F $HZ -g" ;;
	heaptrack) echo "heaptrack" ;;
	lttng) echo "LTTng-UST (requestwatch:request, vtid)" ;;
	esac
}
# verdict LINE: met / **missed** / n/a from an awk condition on numbers
verdict() { awk "BEGIN{ exit !($1) }" 2>/dev/null && echo met || echo "**missed**"; }
num() { local v; v=$(med "$1" "$2" 2>/dev/null) || v=nan; echo "${v:-nan}"; }
kinds() { local k; IFS='|' read -r k _ <"$DATA/$1.what"; case $k in ''|'?'|-) echo 0 ;; *) echo "$k" ;; esac; }
# spread SVC: max/min of off's p90 over the runs (how much the machine alone moved it)
spread() { sort -g "$DATA/$1.off.p90_us" | awk '{ v[NR] = $1 } END { if (NR == 0 || v[1] <= 0) print "nan"; else printf "%.1f\n", v[NR] / v[1] }'; }
# The goals of issues 22 and 18, judged on this run's medians
goals() {
	local svc arm d c k best bestarm
	echo "Goals (issue 22: rec records more kinds of events than any one of the others, at a lower CPU cost than"
	echo "heaptrack and LTTng-UST and no more than perf record; issue 18: rec-record's p90 within 5 % of off; a"
	echo "latency goal is not judged when off's own p90 varied more than 2x between its runs). A CPU goal is judged"
	echo "round by round: the median over rounds r of (this arm's CPU per request in round r / the other tool's in"
	echo "round r - 1), the arms of a round run one after the other within a minute; the medians of the absolute"
	echo "figures are beside it, but the machine's speed drifts between rounds, which moves them apart:"
	echo
	echo "| service | goal | figures (medians of paired runs) | met? |"
	echo "|---|---|---|---|"
	for svc in "${SERVICES[@]}"; do
		for arm in rec rec-record; do
			[ -f "$DATA/$svc.$arm.what" ] || continue
			if [ "$arm" = rec-record ]; then
				d=$(pmed "$svc" "$arm" p90_us)
				sp=$(spread "$svc")
				if [ "$d" = nan ]; then v=n/a
				elif awk -v s="$sp" 'BEGIN{ exit !(s > 2) }'; then v="not judged: off's own p90 varied ${sp}x between its runs (the machine's load, not the tool)"
				else v=$(verdict "$d <= 5"); fi
				echo "| $svc | rec-record p90 within 5 % of off | $(awk -v d="$d" 'BEGIN{printf "%+.1f %%", d}') (off's p90 $(cell "$svc.off" p90_us 1000 3) ms) | $v |"
			fi
			best=0; bestarm=-
			for o in perf heaptrack lttng; do
				[ -f "$DATA/$svc.$o.what" ] || continue
				k=$(kinds "$svc.$o"); [ "$k" -gt "$best" ] && { best=$k; bestarm=$o; }
			done
			k=$(kinds "$svc.$arm")
			echo "| $svc | $arm: more event kinds than any one other tool | $k vs $best ($bestarm) | $(verdict "$k > $best") |"
			c=$(num "$svc.$arm" cpu_us)
			for o in heaptrack lttng perf; do
				[ -f "$DATA/$svc.$o.what" ] || continue
				# the instrumented build is compared with LTTng (both record the requests), rec-record with the tools that attach
				{ [ "$arm" = rec ] && [ "$o" != lttng ]; } && continue
				{ [ "$arm" = rec-record ] && [ "$o" = lttng ]; } && continue
				oc=$(num "$svc.$o" cpu_us)
				read -r pm plo phi pn < <(pboth "$svc" "$arm" "$o" cpu_us)
				if [ "$pm" = nan ]; then
					fig="$c vs $oc us (medians; no paired runs)"; v=n/a
				else
					fig=$(awk -v m="$pm" -v lo="$plo" -v hi="$phi" -v n="$pn" -v c="$c" -v oc="$oc" \
						'BEGIN{ printf "%+.1f %% (%+.1f..%+.1f) over %d rounds; medians %s vs %s us", m, lo, hi, n, c, oc }')
					if [ "$o" = perf ]; then v=$(verdict "$pm <= 0"); else v=$(verdict "$pm < 0"); fi
				fi
				if [ "$o" = perf ]; then
					echo "| $svc | $arm CPU/request no more than perf record's (round by round) | $fig | $v |"
				else
					echo "| $svc | $arm CPU/request below $o's (round by round) | $fig | $v |"
				fi
			done
		done
	done
	echo
}
svc_name() { if [ "$1" = rw ]; then echo "requestwatch (GET /requests/fast, 16 persistent connections)"; else echo "memcached $MC_VER (-t 4; 90 % get / 10 % set, 16 persistent connections)"; fi; }
{
	echo "## Side by side: what recording costs a service next to perf record, heaptrack and LTTng-UST (issues 22 and 18; bench/sidebyside.sh)"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $ELAPSED s; $RUNS runs x $DURATION s per arm,"
	echo "the arms interleaved run by run (off, A, B, ..., then again). **Measured under load**: the machine's 2 cores"
	echo "are shared with other builds and tests; load average $LOAD_START at the start, $LOAD_END at the end, and the"
	echo "1-minute load at the start of each run is in the last column. Load generator and services share the 2 cores."
	echo "Each cell: median over the runs (min-max); \"vs off\": the median over runs r of (arm run r / off run r - 1)."
	echo
	for svc in "${SERVICES[@]}"; do
		echo "**$(svc_name "$svc")**: capacity $(cell "$svc" cap 1 0) requests/s (closed loop, 2 connections, the program alone, ${CAPDUR} s, measured at the start of each round: median (min-max) over the $RUNS rounds), open-loop rate 70 % of the round's: $(tr '\n' ' ' <"$DATA/$svc.rate" | sed 's/ $//') requests/s, round by round."
		echo
		echo "| arm | p50 ms | p90 ms | p99 ms | p99.9 ms | p90 vs off | throughput req/s | CPU us/request | CPU vs off | bytes written/s | event kinds | events | what it recorded (last run) | load |"
		echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
		for arm in $(arms_of "$svc"); do
			p="$svc.$arm"
			IFS='|' read -r kinds count detail <"$DATA/$p.what"
			if [ "$arm" = off ]; then vs="-"; vc="-"; else vs=$(paired "$svc" "$arm" p90_us); vc=$(paired "$svc" "$arm" cpu_us); fi
			echo "| $(label "$arm") | $(cell "$p" p50_us 1000 3) | $(cell "$p" p90_us 1000 3) | $(cell "$p" p99_us 1000 2) | $(cell "$p" p999_us 1000 2) | $vs | $(cell "$p" throughput 1 0) | $(cell "$p" cpu_us 1 1) | $vc | $(hbytes "$(med "$p" bps)") | $kinds | $count | $detail | $(tr '\n' ' ' <"$DATA/$p.load" | sed 's/ $//') |"
		done
		echo
	done
	goals
	echo "Commands (loadgen: \`$LG\`, built with \`$LG_CMD\`):"
	echo
	echo "- requestwatch: \`loadgen open --keepalive --rate R --duration $DURATION --stop-signal TERM --stop-exe PROGRAM -- CMD\`; memcached: \`loadgen open --proto memcache --rate R --duration $DURATION --wait-port P --stop-signal TERM --stop-exe $MC -- CMD\`, CMD being the program (\`$RWP --port 0\`, \`$MC -u root -l 127.0.0.1 -p P -t 4 -U 0\`) or the tool with it:"
	echo "  \`$BIN/rec-record -q -o F -- PROGRAM\`, \`perf record -q -F $HZ -g -o F -- PROGRAM\`, \`heaptrack -o F -- PROGRAM\`; rec: \`REC_OUTPUT=F $RW --port 0\`; LTTng: \`$RWL --port 0\` (built with \`$RWL_CMD\`) with \`lttng create; lttng enable-event -u requestwatch:request; lttng add-context -u -t vtid; lttng start\` before and \`lttng stop; lttng destroy\` after."
	echo "- The stop signal (SIGTERM) goes to the program itself (--stop-exe), so each tool sees it end and finishes its output as it does for a program that exits; loadgen waits for the tool."
	echo "- CPU/request: user+sys from wait4's rusage of the command loadgen started (the tool and every process it waited for: perf record with its workload and its build-id pass at the end; heaptrack's shell, the program, heaptrack_interpret and zstd; rec-record and the program), start-up and shutdown included, / requests sent; LTTng adds lttng-sessiond's and lttng-consumerd's utime+stime from \`lttng start\` to after \`lttng stop\` (/proc/PID/stat, ${CLK_TCK} Hz ticks)."
	echo "- Bytes written/s: the output's size (\`du -sb\`) / (start-up + load) of the run. Event kinds and events: rec: \`rec-summary --json\` (types with events); perf: \`perf report --stats\` (record kinds with content: the file format's bookkeeping records left out) ; heaptrack: \`heaptrack_print\` (allocations and their frees); LTTng: \`babeltrace2 TRACE -c sink.utils.counter\`."
	echo "- Versions: $PERF_VER; $HT_VER; $LT_VER; $MC_VER."
	for n in "${NOTES[@]}"; do echo "- $n"; done
	echo "- Raw lines: \`$LOG\`."
} | tee "$MD"

# ---- 5. key=value for bench/run.sh's leading table ----------------------------------------------------------
{
	for svc in "${SERVICES[@]}"; do
		echo "$svc.cap=$(med "$svc" cap)"; echo "$svc.rate=$(med "$svc" rate)"
		echo "$svc.arms=$(arms_of "$svc")"
		for arm in $(arms_of "$svc"); do
			p="$svc.$arm"
			for k in p50_us p90_us p99_us p999_us throughput cpu_us bps; do echo "$p.$k=$(med "$p" "$k")"; done
			if [ "$arm" != off ]; then
				for k in p50_us p90_us p99_us cpu_us throughput; do echo "$p.d_$k=$(pmed "$svc" "$arm" "$k")"; done
			fi
			IFS='|' read -r kinds count _ <"$DATA/$p.what"
			echo "$p.kinds=$kinds"; echo "$p.events=$count"
		done
	done
	for svc in "${SERVICES[@]}"; do echo "$svc.off.p90_spread=$(spread "$svc")"; done
	# the CPU goals as goals() judges them: rec and rec-record against each other tool,
	# round by round (the median %, "nan" without paired runs)
	for svc in "${SERVICES[@]}"; do
		for arm in rec rec-record; do
			[ -f "$DATA/$svc.$arm.what" ] || continue
			for o in perf heaptrack lttng; do
				[ -f "$DATA/$svc.$o.what" ] || continue
				echo "$svc.$arm.vs_$o.cpu_pct=$(pboth "$svc" "$arm" "$o" cpu_us | awk '{ print $1 }')"
			done
		done
	done
	echo "runs=$RUNS"; echo "duration=$DURATION"
	echo "load_start=$LOAD_START"; echo "load_end=$LOAD_END"
} >"$KV"
say "wrote $MD and $KV"
