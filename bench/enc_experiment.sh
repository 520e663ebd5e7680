#!/usr/bin/env bash
# bench/enc_experiment.sh - the recordings and the run of bench/enc_experiment.c (issue 22,
# "the background thread's CPU per event": what other encodings of EVENTS would cost and
# save before one is built), one markdown table per recording on stdout, progress on stderr.
#
#   BUILD=build bash bench/enc_experiment.sh [--quick]
#
# Compiles bench/enc_experiment.c, gen_events.c, bgcost.c and loadgen.c with the Makefile's
# flags against $BUILD/lib/librec.a, records with codec none (the experiment reads the
# records; compression is what it measures):
#   gen_none.rec   gen_events --codec none 2000000 (the bytes goal's generator)
#   bg_none.rec    bgcost --codec none (8 threads, 25000 events/s, 4 s; the CPU goal's load)
#   rw.rec         requestwatch under `loadgen open --keepalive --rate 5000 --duration 4`,
#                  REC_OPTIONS=codec=none (a service's own events with the defaults)
# and runs `enc_experiment --reps 7 --markdown` over them (--quick: --reps 2), then
# `enc_experiment --take` (the writer's take of the same records against a memcpy) and
# `enc_experiment --streamed` (the section compressed in pieces, as the recorder does, with
# the caches written over between pieces; four streams each in its own frame).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
quick_args 16 "$@"
BUILD=${BUILD:-build}
if [ ! -f "$BUILD/lib/librec.a" ] || [ ! -x "$BUILD/bin/requestwatch" ]; then
	echo "enc_experiment: build first (make -j2 all BUILD=$BUILD)" >&2
	exit 1
fi
bench_flags
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
log() { echo "enc_experiment: $*" >&2; }
for p in enc_experiment gen_events bgcost; do
	# shellcheck disable=SC2086
	$B_CC $B_CFLAGS -Ibench -o "$TMP/$p" "bench/$p.c" "$BUILD/lib/librec.a" $B_LIBS
done
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -Ibench -o "$TMP/loadgen" bench/loadgen.c $B_LIBS
log "recording (load $(cut -d' ' -f1-3 /proc/loadavg))"
"$TMP/gen_events" --codec none 2000000 "$TMP/gen_none.rec" >&2
"$TMP/bgcost" --codec none --rate 25000 --threads 8 --seconds 4 "$TMP/bg_none.rec" >&2
REC_OUTPUT="$TMP/rw.rec" REC_OPTIONS=codec=none "$TMP/loadgen" open --keepalive --rate 5000 \
	--duration 4 -- "$BUILD/bin/requestwatch" --port 0 >"$TMP/loadgen.out"
REPS=7
[ "$QUICK" = 1 ] && REPS=2
log "measuring, --reps $REPS (load $(cut -d' ' -f1-3 /proc/loadavg))"
"$TMP/enc_experiment" --reps "$REPS" --markdown "$TMP/gen_none.rec" "$TMP/bg_none.rec" "$TMP/rw.rec"
echo
echo "The take (\`enc_experiment --take\`):"
echo
"$TMP/enc_experiment" --reps "$REPS" --take "$TMP/gen_none.rec" "$TMP/bg_none.rec" "$TMP/rw.rec" |
	sed 's/^/    /'
echo
echo "The section compressed in pieces (\`enc_experiment --streamed\`):"
echo
"$TMP/enc_experiment" --reps "$REPS" --streamed "$TMP/gen_none.rec" "$TMP/bg_none.rec" "$TMP/rw.rec" |
	sed 's/^/    /'
log "done (load $(cut -d' ' -f1-3 /proc/loadavg))"
