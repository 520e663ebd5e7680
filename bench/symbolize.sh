#!/usr/bin/env bash
# bench/symbolize.sh [--quick] - the symbolization benchmark of issue 19:
#   1. cost per distinct address the recorder's background thread resolves
#      (stack_symbolizer.c over libdwfl: name, file, line, inline frames) on
#      addresses spread over libc's code with its debug file (libc6-dbg), the
#      first lookup (opening libc and its debug file) apart, and the cached
#      lookup of an address seen before (bench/symbolize_cost.c cost);
#   2. bytes per frame added to files: a CPU-sampled workload
#      (bench/symbolize_cost.c work, -O2 -g, libc with libc6-dbg) recorded
#      with REC_OPTIONS=symbolize=off (module + offset only) and the same
#      recording after rec-symbolize (names, files, lines, inline frames):
#      file bytes per distinct frame, and the FRAME_SOURCE section's raw and
#      stored bytes per entry (section headers of the symbolized file);
#   3. rec-symbolize throughput on a large recording (bench/gen_stacks.c: N
#      events with stacks; its frames name modules that do not exist, so this
#      is the copying cost with one failed module lookup per module) and on the
#      workload's recording (real modules), side by side with rec-scrub, which
#      re-encodes a recording the same way without symbolizing;
#   4. the background thread's extra CPU on the service benchmark:
#      requestwatch under a closed-loop load (bench/loadgen.c) recording with
#      REC_OPTIONS=symbolize=off, with the default (names; files and lines for
#      the program, not for libc) and with symbolize=all (libc's files and
#      lines too, from its debug file), alternately: the service's CPU per
#      request.
#
#   BUILD=build bash bench/symbolize.sh           full: N = 10M, 5 runs
#   BUILD=build bash bench/symbolize.sh --quick   quick: N = 1M, 3 runs
#
# Environment: SYM_N, SYM_RUNS, SYM_NO_MAKE=1 (use $BUILD as it is), SYM_REUSE=1
# (keep the gen_stacks recording of an earlier run with the same N).  Writes
# the markdown section to $BUILD/bench/symbolize.md and prints it; puts it into
# bench/RESULTS.md (in place of the earlier one) with SYM_APPEND=1.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh

quick_args 26 "$@"
if [ "$QUICK" = 1 ]; then
	N=${SYM_N:-1000000}; RUNS=${SYM_RUNS:-3}; MODE=quick
else
	N=${SYM_N:-10000000}; RUNS=${SYM_RUNS:-5}; MODE=full
fi
BUILD=${BUILD:-build}
OUT="$BUILD/bench"
DATA="$OUT/sym-data"
LOG="$OUT/symbolize-log.txt"
MD="$OUT/symbolize.md"
mkdir -p "$OUT" "$DATA"
: >"$LOG"
say() { printf '[symbolize %s] %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$LOG" >&2; }
die() { say "error: $*"; exit 1; }
dpkg-query -W -f='${Status}' libc6-dbg 2>/dev/null | grep -q "ok installed" ||
	die "libc6-dbg is not installed (apt-get install -y libc6-dbg)"
if [ "${SYM_NO_MAKE:-0}" != 1 ]; then
	say "building (make all BUILD=$BUILD)"
	make -s all BUILD="$BUILD" >>"$LOG" 2>&1 || die "make all failed (see $LOG)"
fi
BIN="$BUILD/bin"
bench_flags
COST="$OUT/symbolize_cost"
WORK="$OUT/symbolize_work"
GEN="$OUT/gen_stacks"
RUNSTAT="$OUT/runstat"
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -o "$COST" bench/symbolize_cost.c "$BUILD/lib/librec.a" $B_LIBS >>"$LOG" 2>&1 ||
	die "symbolize_cost.c does not compile (see $LOG)"
# the workload without librec (it would record itself to REC_OUTPUT too)
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -DSYMBOLIZE_WORK_ONLY -o "$WORK" bench/symbolize_cost.c >>"$LOG" 2>&1 ||
	die "symbolize_cost.c (work) does not compile (see $LOG)"
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -o "$GEN" bench/gen_stacks.c "$BUILD/lib/librec.a" $B_LIBS >>"$LOG" 2>&1 ||
	die "gen_stacks.c does not compile (see $LOG)"
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -o "$RUNSTAT" bench/runstat.c >>"$LOG" 2>&1 || die "runstat.c does not compile (see $LOG)"

# ---- 1. cost per distinct address
say "cost per distinct address ($RUNS runs of 5000 addresses)"
: >"$DATA/cost.txt"
for _ in $(seq "$RUNS"); do "$COST" cost 5000 >>"$DATA/cost.txt"; done
col() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p;s/^$1=\([0-9.]*\).*/\1/p" "$DATA/cost.txt" | median; }
rng() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p;s/^$1=\([0-9.]*\).*/\1/p" "$DATA/cost.txt" | sort -g | sed -n '1p;$p' | paste -sd- ; }
FIRST=$(col first_ms); DIST=$(col distinct_ns); CACHED=$(col cached_ns)
line1=$(head -1 "$DATA/cost.txt")
NAMED=$(kv named "$line1"); LINES=$(kv lines "$line1"); INL=$(kv inlined "$line1"); NADDR=$(kv n "$line1")

# ---- 2. bytes per frame
say "recording the workload (cpu 997 Hz, 3 s) with symbolize=on and =off"
"$BIN/rec-record" -q --cpu 997 -o "$DATA/on.rec" -- "$WORK" work 3 >>"$LOG"
REC_OPTIONS=symbolize=off "$BIN/rec-record" -q --cpu 997 -o "$DATA/off.rec" -- "$WORK" work 3 >>"$LOG"
"$BIN/rec-symbolize" "$DATA/off.rec" "$DATA/sym.rec" 2>>"$LOG"
frames() { "$BIN/rec-sql" "$1" "select count(*) from frames" | tail -1 | tr -d ' '; }
FR_OFF=$(frames "$DATA/off.rec"); FR_SYM=$(frames "$DATA/sym.rec")
SZ_OFF=$(stat -c %s "$DATA/off.rec"); SZ_SYM=$(stat -c %s "$DATA/sym.rec"); SZ_ON=$(stat -c %s "$DATA/on.rec")
FR_ON=$(frames "$DATA/on.rec")
SAMPLES=$("$BIN/rec-sql" "$DATA/sym.rec" "select count(*) from rec_CPUSample" | tail -1 | tr -d ' ')
INLINE_FR=$("$BIN/rec-print" --json --events rec.CPUSample "$DATA/sym.rec" | python3 -c '
import json, sys
seen = set()
for ev in json.load(sys.stdin)["recording"]["events"]:
    for f in ev["values"]["stackTrace"]["frames"]:
        if f["inline"]:
            seen.add((f["module"], f["moduleOffset"], f["function"], f["inline"]))
print(len(seen))')
read -r FS_ITEMS FS_RAW FS_STORED < <(python3 - "$DATA/sym.rec" <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
off = items = raw = stored = 0
while off + 128 <= len(b):
    hs, = struct.unpack_from("<I", b, off + 12)
    ps, = struct.unpack_from("<Q", b, off + 24)
    n, = struct.unpack_from("<H", b, off + 38)
    s = off + hs
    for _ in range(n):
        kind, _f, it, st, rw = struct.unpack_from("<HHIII", b, s)
        if kind == 9:
            items += it; raw += rw; stored += st
        s += 16 + st
    off += hs + ps
print(items, raw, stored)
EOF
)

# ---- 3. throughput
if [ "${SYM_REUSE:-0}" = 1 ] && [ -s "$DATA/big.rec" ] && [ "$(cat "$DATA/big.n" 2>/dev/null)" = "$N" ]; then
	say "gen_stacks: reusing $DATA/big.rec ($N events)"
else
	say "gen_stacks: $N events"
	"$GEN" --codec zstd "$N" "$DATA/big.rec" >>"$LOG"
	echo "$N" >"$DATA/big.n"
fi
REC_OPTIONS=symbolize=off "$BIN/rec-record" -q --cpu 997 -o "$DATA/off-big.rec" -- "$WORK" work 3 >>"$LOG"
timeit() { # NAME CMD...: median wall s, user+sys s, max rss KiB over RUNS
	local name=$1; shift
	: >"$DATA/t-$name.txt"
	for _ in $(seq "$RUNS"); do "$RUNSTAT" "$@" >>"$DATA/t-$name.txt" 2>>"$LOG"; done
}
timeit sym-big "$BIN/rec-symbolize" -q "$DATA/big.rec" "$DATA/big-sym.rec"
timeit scrub-big "$BIN/rec-scrub" -q --blank nosuchfield "$DATA/big.rec" "$DATA/big-scrub.rec"
timeit sym-work "$BIN/rec-symbolize" -q "$DATA/off-big.rec" "$DATA/work-sym.rec"
timeit scrub-work "$BIN/rec-scrub" -q --blank nosuchfield "$DATA/off-big.rec" "$DATA/work-scrub.rec"
stat_of() { # NAME wall|cpu|rss_kib: the median of runstat's "wall user sys maxrss status"
	case $2 in
	wall) awk '{print $1}' "$DATA/t-$1.txt" | median ;;
	cpu) awk '{printf "%.3f\n", $2 + $3}' "$DATA/t-$1.txt" | median ;;
	rss_kib) awk '{print $4}' "$DATA/t-$1.txt" | median ;;
	esac
}
WORK_EV=$("$BIN/rec-summary" --json "$DATA/off-big.rec" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
WORK_FR=$(frames "$DATA/off-big.rec")

# ---- 4. the background thread's extra CPU on the service benchmark
LG="$OUT/loadgen"
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -o "$LG" bench/loadgen.c >>"$LOG" 2>&1 || die "bench/loadgen.c does not compile (see $LOG)"
: >"$DATA/svc.txt"
for r in $(seq "$RUNS"); do
	for mode in off on all; do
		envs=(REC_OUTPUT="$DATA/svc-$mode.rec")
		[ "$mode" = on ] || envs+=("REC_OPTIONS=symbolize=$mode")
		say "service run $r/$RUNS, symbolize=$mode: loadgen closed --conns 4 --duration 4 --keepalive --path /requests/allocating"
		rm -f "$DATA/svc-$mode.rec"
		line=$(env "${envs[@]}" "$LG" closed --conns 4 --duration 4 --keepalive \
			--path /requests/allocating -- "$BIN/requestwatch" --port 0 2>>"$LOG")
		echo "$line" >>"$LOG"
		echo "mode=$mode ok=$(kv ok "$line") cpu=$(kv service_cpu_s "$line") throughput=$(kv throughput "$line")" >>"$DATA/svc.txt"
	done
done
svc() { # svc MODE KEY: median over runs (us_req: service CPU us per request)
	grep "^mode=$1 " "$DATA/svc.txt" | while read -r l; do
		if [ "$2" = us_req ]; then
			awk -v c="$(kv cpu "$l")" -v n="$(kv ok "$l")" 'BEGIN{ if (n > 0) printf "%.2f\n", c * 1e6 / n }'
		else kv "$2" "$l"; fi
	done | median
}
SVC_OFF=$(svc off us_req)
SVC_ON=$(svc on us_req)
SVC_ALL=$(svc all us_req)

commit=$(git rev-parse --short HEAD 2>/dev/null || echo "?")
load=$(cut -d' ' -f1-3 /proc/loadavg)
{
	echo "## Symbolization (issue 19; bench/symbolize.sh, $MODE: N = $N, $RUNS runs, median; commit $commit, $(date -u +%Y-%m-%dT%H:%MZ), load $load)"
	echo
	echo "The recorder's background thread resolves each distinct address once (libdwfl: symbol"
	echo "tables, the debug file by build-id, DWARF lines and inlined scopes) and caches it; the"
	echo "emitting thread never symbolizes, so its cost does not change (the hot-path benchmark of"
	echo "bench/run.sh is the check).  libc with libc6-dbg's debug file:"
	echo
	echo "| What (CPU time of the resolving thread) | Median (min-max) | Wall (median) |"
	echo "|---|---|---|"
	echo "| first address of libc (opens libc and its debug file) | $FIRST ms ($(rng first_ms)) | $(col wall_first_ms) ms |"
	echo "| each further distinct address (uncached) | $(awk -v v="$DIST" 'BEGIN{printf "%.1f", v/1000}') us ($(rng distinct_ns) ns) | $(awk -v v="$(col wall_distinct_ns)" 'BEGIN{printf "%.1f", v/1000}') us |"
	echo "| an address seen before (cached) | $CACHED ns ($(rng cached_ns)) | |"
	echo
	echo "Of the $NADDR addresses (spread evenly over libc's code): $NAMED named, $LINES with a line,"
	echo "$INL with inlined functions."
	echo
	echo "Bytes per frame: the workload (bench/symbolize_cost.c work, 3 s, CPU samples at 997 Hz):"
	echo
	echo "| Recording | File bytes | Frames (FRAMES entries) |"
	echo "|---|---|---|"
	echo "| symbolize=off (module + offset, flagged) | $SZ_OFF | $FR_OFF |"
	echo "| the same after rec-symbolize (names, files, lines, inline frames) | $SZ_SYM | $FR_SYM |"
	echo "| another run recorded with symbolize=on | $SZ_ON | $FR_ON |"
	echo
	echo "rec-symbolize added $((SZ_SYM - SZ_OFF)) bytes for $FR_SYM frames ($(awk -v a="$SZ_SYM" -v b="$SZ_OFF" -v f="$FR_SYM" 'BEGIN{printf "%.1f", (a-b)/f}') bytes per frame, compressed, strings included;"
	echo "$SAMPLES samples, $INLINE_FR distinct inlined functions at those addresses).  Its FRAME_SOURCE"
	echo "sections hold $FS_ITEMS entries in $FS_RAW raw bytes ($(awk -v r="$FS_RAW" -v n="$FS_ITEMS" 'BEGIN{printf "%.1f", n ? r/n : 0}') per entry), $FS_STORED stored."
	echo
	echo "rec-symbolize throughput (rec-scrub re-encodes the same way without symbolizing):"
	echo
	eps() { awk -v n="$1" -v t="$2" 'BEGIN{ if (t > 0) printf "%.2f M/s", n / t / 1e6; else print "n/a" }'; }
	echo "| Input | Events | Frames | rec-symbolize wall | CPU (user+sys) | events per CPU second | RSS | rec-scrub wall | rec-scrub CPU |"
	echo "|---|---|---|---|---|---|---|---|---|"
	echo "| gen_stacks (modules that do not exist) | $N | 2000 stacks | $(stat_of sym-big wall) s | $(stat_of sym-big cpu) s | $(eps "$N" "$(stat_of sym-big cpu)") | $(stat_of sym-big rss_kib) KiB | $(stat_of scrub-big wall) s | $(stat_of scrub-big cpu) s |"
	echo "| the workload, symbolize=off | $WORK_EV | $WORK_FR | $(stat_of sym-work wall) s | $(stat_of sym-work cpu) s | | $(stat_of sym-work rss_kib) KiB | $(stat_of scrub-work wall) s | $(stat_of scrub-work cpu) s |"
	echo
	echo "Wall times are of a shared 2-core machine at the load above: CPU time is the figure to compare."
	echo
	echo "The background thread's extra CPU on the service benchmark: requestwatch recording with"
	echo "REC_OUTPUT (CPU samples on) under \`loadgen closed --conns 4 --duration 4 --keepalive --path"
	echo "/requests/allocating\` (its time is in libc's malloc), with \`REC_OPTIONS=symbolize=off\` (module +"
	echo "offset only), the default (names; files, lines and inline frames for the program, libc's frames"
	echo "by name from its symbol table) and \`symbolize=all\` (libc's files and lines too, from its debug"
	echo "file's DWARF), alternately, $RUNS runs each; the service's CPU (user + sys, all its threads) per"
	echo "request, median:"
	echo
	echo "| symbolize | requests/s | service CPU per request |"
	echo "|---|---|---|"
	echo "| off | $(svc off throughput) | $SVC_OFF us |"
	echo "| on (default) | $(svc on throughput) | $SVC_ON us |"
	echo "| all | $(svc all throughput) | $SVC_ALL us |"
	echo
	echo "Symbolizing adds $(awk -v a="$SVC_ON" -v b="$SVC_OFF" 'BEGIN{ if (b > 0) printf "%+.2f us (%+.1f %%)", a - b, (a - b) * 100 / b; else print "n/a" }') of CPU per request with the default and"
	echo "$(awk -v a="$SVC_ALL" -v b="$SVC_OFF" 'BEGIN{ if (b > 0) printf "%+.2f us (%+.1f %%)", a - b, (a - b) * 100 / b; else print "n/a" }') with libc's lines, over a 4-second run: about"
	echo "$(awk -v a="$SVC_ON" -v b="$SVC_OFF" -v n="$(svc on ok)" 'BEGIN{ printf "%.0f", (a - b) * n / 1000 }') and $(awk -v a="$SVC_ALL" -v b="$SVC_OFF" -v n="$(svc all ok)" 'BEGIN{ printf "%.0f", (a - b) * n / 1000 }') ms of CPU in all.  Symbolizing is a start-up cost, not a rate (the first"
	echo "address of libc above opens libc and its debug file; later addresses are cached), but these runs"
	echo "serve about 80 requests a second of some 24 ms of CPU each, and their own spread (requests/s and"
	echo "CPU per request of runs alike, $DATA/svc.txt) is as large as these differences, more so on a"
	echo "loaded machine (the load is in the heading): bench/ANALYSIS.md has libc's DWARF read measured"
	echo "alone (65-82 ms of CPU)."
	echo
	echo "Rerun: \`BUILD=build bash bench/symbolize.sh\` (\`--quick\`: N = 1M)."
} >"$MD"
cat "$MD"
if [ "${SYM_APPEND:-0}" = 1 ]; then
	results_section "## Symbolization" "$MD"
fi
