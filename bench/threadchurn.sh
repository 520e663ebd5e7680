#!/usr/bin/env bash
# bench/threadchurn.sh - what the recorder costs per thread (issue 22: a service that
# starts a thread per connection), old library against new, recording off and on,
# alternated in one run.
#
#   BUILD=build bash bench/threadchurn.sh [--service | --preload]
#
# "old" is the library of THREADCHURN_BASE (a commit, default HEAD~1), built from
# `git archive` in a temporary directory; "new" is $BUILD/lib/librec.a (make all).
# 1. bench/threadchurn.c (see its header), linked with either library: THREADCHURN_THREADS
#    threads (20000) created and joined two at a time at THREADCHURN_RATE a second (6000,
#    about requestwatch's 70 % load), each naming itself and emitting one event;
#    THREADCHURN_RUNS rounds (7) of old-off, old-on, new-off, new-on.  Process CPU per thread
#    from wait4 (median, min-max) and its split (the threads' own, the creating thread's,
#    the background thread's).
# 2. with --service: requestwatch (examples/) of either library under
#    `loadgen open --rate LOAD_RATE --duration 6` (a new connection per request, as
#    bench/load.sh's settings off and on; LOAD_RATE default 6500), THREADCHURN_PAIRS rounds
#    (4) of old-off, old-on, new-off, new-on: service CPU per request, p50, p90, p99.
# 3. with --preload: bench/threadchurn.c built without rec (-DTHREADCHURN_PLAIN: no event
#    of its own) under LD_PRELOAD of either build's librec-preload.so, off (no REC_OUTPUT:
#    the library loaded, idle) and on (REC_OUTPUT: every thread registered by the preload's
#    pthread_create, CPU-sampled from its start); the same rounds and table as 1.
# Prints markdown on stdout; progress and every run's line on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
BASE=${THREADCHURN_BASE:-HEAD~1}
RUNS=${THREADCHURN_RUNS:-7}
N=${THREADCHURN_THREADS:-20000}
RATE=${THREADCHURN_RATE:-6000}
PAIRS=${THREADCHURN_PAIRS:-4}
SRATE=${LOAD_RATE:-6500}
SERVICE=0
PRELOAD=0
case "${1:-}" in
--service) SERVICE=1 ;;
--preload) PRELOAD=1 ;;
"") ;;
*) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
[ -f "$BUILD/lib/librec.a" ] || { echo "threadchurn: $BUILD/lib/librec.a is missing (make all)" >&2; exit 1; }
bench_flags
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
log() { echo "threadchurn: $*" >&2; }

OLD_TARGETS=(build/lib/librec.a)
[ "$SERVICE" = 1 ] && OLD_TARGETS+=(build/bin/requestwatch)
[ "$PRELOAD" = 1 ] && OLD_TARGETS+=(build/lib/librec-preload.so)
build_base threadchurn "$BASE" "$TMP/old" "${OLD_TARGETS[@]}"
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -Ibench -o "$TMP/churn_old" bench/threadchurn.c "$TMP/old/build/lib/librec.a" $B_LIBS
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -Ibench -o "$TMP/churn_new" bench/threadchurn.c "$BUILD/lib/librec.a" $B_LIBS

OLD=$(git rev-parse --short "$BASE")
NEW=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- libfmt || echo "+changes")
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(date -u +%H:%M)
mkdir -p "$TMP/out"
if [ "$PRELOAD" = 1 ]; then
	[ -f "$BUILD/lib/librec-preload.so" ] || { echo "threadchurn: $BUILD/lib/librec-preload.so is missing (make all)" >&2; exit 1; }
	# shellcheck disable=SC2086
	$B_CC $B_CFLAGS -Ibench -DTHREADCHURN_PLAIN -o "$TMP/churn_plain" bench/threadchurn.c -pthread
	for v in old new; do
		lib="$TMP/old/build/lib/librec-preload.so"
		[ $v = new ] && lib=$(cd "$BUILD/lib" && pwd)/librec-preload.so
		printf '#!/bin/sh\nexec env LD_PRELOAD=%s %s "$@"\n' "$lib" "$TMP/churn_plain" >"$TMP/preload_$v"
		chmod +x "$TMP/preload_$v"
	done
	TABLE=$("$TMP/churn_new" bench --runs "$RUNS" --threads "$N" --rate "$RATE" --out "$TMP/out" \
		old="$TMP/preload_old" new="$TMP/preload_new")
else
	TABLE=$("$TMP/churn_new" bench --runs "$RUNS" --threads "$N" --rate "$RATE" --out "$TMP/out" \
		old="$TMP/churn_old" new="$TMP/churn_new")
fi
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
WHAT="bench/threadchurn.sh"
[ "$PRELOAD" = 1 ] && WHAT="bench/threadchurn.sh --preload (a program without rec under LD_PRELOAD=librec-preload.so)"
echo "### Per thread: $WHAT (old $OLD, new $NEW)"
echo
echo "\`threadchurn bench --runs $RUNS --threads $N --rate $RATE\`, $START UTC, load average $LOAD0 before, $LOAD1 after:"
echo
echo "$TABLE"

[ "$SERVICE" = 1 ] || exit 0
# ---- requestwatch, a new connection per request -----------------------------------------
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -o "$TMP/loadgen" bench/loadgen.c
declare -A R
one() { # LIB (old|new) REC (off|on)
	local rw line
	if [ "$1" = old ]; then rw="$TMP/old/build/bin/requestwatch"; else rw="$BUILD/bin/requestwatch"; fi
	if [ "$2" = on ]; then
		line=$(env -u REC_OPTIONS REC_OUTPUT="$TMP/rw.rec" "$TMP/loadgen" open --rate "$SRATE" \
			--duration 6 --timeout 10 -- "$rw" --port 0)
	else
		line=$(env -u REC_OPTIONS -u REC_OUTPUT "$TMP/loadgen" open --rate "$SRATE" \
			--duration 6 --timeout 10 -- "$rw" --port 0)
	fi
	log "$1-$2: $line"
	local k=$1-$2
	R[$k.cpu]="${R[$k.cpu]:-} $(awk -v c="$(kv service_cpu_s "$line")" -v n="$(kv sent "$line")" 'BEGIN { printf "%.2f", c / n * 1e6 }')"
	R[$k.p50]="${R[$k.p50]:-} $(kv p50_us "$line")"
	R[$k.p90]="${R[$k.p90]:-} $(kv p90_us "$line")"
	R[$k.p99]="${R[$k.p99]:-} $(kv p99_us "$line")"
	R[$k.thr]="${R[$k.thr]:-} $(kv throughput "$line")"
}
mm() { # median (min-max) of a list
	local v m lo hi
	v=$(tr ' ' '\n' <<<"$1" | grep .)
	m=$(median <<<"$v"); lo=$(sort -g <<<"$v" | head -1); hi=$(sort -g <<<"$v" | tail -1)
	awk -v m="$m" -v a="$lo" -v b="$hi" 'BEGIN { printf "%.1f (%.1f-%.1f)", m, a, b }'
}
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(date -u +%H:%M)
for ((i = 0; i < PAIRS; i++)); do
	for v in old-off old-on new-off new-on; do one "${v%-*}" "${v#*-}"; done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
echo
echo "### requestwatch, a new connection per request (old $OLD, new $NEW)"
echo
echo "\`loadgen open --rate $SRATE --duration 6 -- requestwatch --port 0\`, $PAIRS rounds of old-off, old-on, new-off, new-on, $START UTC, load average $LOAD0 before, $LOAD1 after; median (min-max):"
echo
echo "| variant | service CPU per request, us | p50, us | p90, us | p99, us | throughput, requests/s |"
echo "|---|---|---|---|---|---|"
for v in old-off old-on new-off new-on; do
	echo "| $v | $(mm "${R[$v.cpu]}") | $(mm "${R[$v.p50]}") | $(mm "${R[$v.p90]}") | $(mm "${R[$v.p99]}") | $(mm "${R[$v.thr]}") |"
done
