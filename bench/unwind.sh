#!/usr/bin/env bash
# bench/unwind.sh [--quick] [--print] - stack unwinding of CPU samples
# (issue 19, "complete stacks"): the cost per sample and the completeness of
# the three walks, and what the CFI walk costs the emitting thread's captures.
#
#   BUILD=build bash bench/unwind.sh [--quick] [--print]
#
# 1. cost per sample: bench/unwind_cost.c (compiled with -fomit-frame-pointer,
#    linked with $BUILD/lib/librec.a and Debian's libunwind, libunwind-dev,
#    installed when missing and root) runs 2 threads through code without
#    frame pointers (its own recursion, libc's qsort calling back into
#    malloc/free) with a 1 ms CPU-time timer each; every SIGPROF runs the
#    frame-pointer walk, librec's CFI table walk and libunwind on the same
#    ucontext (rotating order) and times each.  RUNS runs (5; quick 3) of
#    SECONDS s (3; quick 2): the median over runs of each run's median.
# 2. completeness on requestwatch under load: bench/loadgen.c closed loop,
#    4 keep-alive connections, DURATION s (4) on /requests/allocating,
#    recording (REC_OUTPUT) with CPU samples, alternately with
#    REC_UNWIND=fp (the frame-pointer walk: before) and the default (CFI:
#    after), RW_RUNS runs each (3; quick 2); bench/stack_roots.py judges the
#    last frame of every sample with eu-addr2line (elfutils, libc6-dbg).
# 3. the emitting thread: bench/hotpath's modes stack and on, linked with
#    this tree's librec.a, with REC_UNWIND=fp (the frame-pointer walk) and
#    the default (the CFI walk) alternately, HOT_RUNS runs each (5; quick 3),
#    median of the medians.
# Writes its section into bench/RESULTS.md (replacing an earlier one), or
# with --print to stdout only (bench/run.sh's hook).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
QUICK=0 PRINT=0
for a in "$@"; do
	case "$a" in
	--quick) QUICK=1 ;;
	--print) PRINT=1 ;;
	-h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "usage: bash bench/unwind.sh [--quick] [--print]" >&2; exit 2 ;;
	esac
done
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
OUT="$BUILD/bench/unwind"
LOG="$OUT/log.txt"
mkdir -p "$OUT"
: >"$LOG"
say() { printf '[unwind %s] %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$LOG" >&2; }
if [ "$QUICK" = 1 ]; then RUNS=3 SECS=2 RW_RUNS=2 HOT_RUNS=3; else RUNS=5 SECS=3 RW_RUNS=3 HOT_RUNS=5; fi
DURATION=${DURATION:-4}
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

for f in "$BUILD/lib/librec.a" "$BUILD/bin/requestwatch" "$BUILD/bin/rec-print"; do
	[ -e "$f" ] || { say "$f missing: make first"; exit 1; }
done
install_deb() { # install_deb PATH PACKAGE
	[ -e "$1" ] && return 0
	[ "$(id -u)" = 0 ] || return 1
	say "installing Debian's $2"
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2") >>"$LOG" 2>&1
}
install_deb /usr/include/x86_64-linux-gnu/libunwind.h libunwind-dev || { say "libunwind-dev missing"; exit 1; }
install_deb /usr/bin/eu-addr2line elfutils || { say "elfutils missing"; exit 1; }
install_deb /usr/lib/debug/.build-id libc6-dbg || { say "libc6-dbg missing"; exit 1; }
bench_flags

# ---- 1. cost per sample -------------------------------------------------------------
UC="$OUT/unwind_cost"
UC_CMD="$B_CC $B_CFLAGS -fomit-frame-pointer -Ilibfmt -o $UC bench/unwind_cost.c $BUILD/lib/librec.a $B_LIBS -lunwind"
say "compiling: $UC_CMD"
# shellcheck disable=SC2086
$UC_CMD >>"$LOG" 2>&1 || { say "bench/unwind_cost.c does not compile (see $LOG)"; exit 1; }
: >"$OUT/cost.txt"
for ((r = 1; r <= RUNS; r++)); do
	say "cost run $r/$RUNS: unwind_cost --seconds $SECS"
	"$UC" --seconds "$SECS" | tee -a "$LOG" | sed "s/^/run=$r /" >>"$OUT/cost.txt"
done
cf() { # cf WALK KEY: median over runs
	grep " walk=$1 " "$OUT/cost.txt" | while read -r l; do kv "$2" "$l"; done | median
}

# ---- 2. completeness on requestwatch under load -----------------------------------------
LG="$OUT/loadgen"
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -o "$LG" bench/loadgen.c >>"$LOG" 2>&1
: >"$OUT/roots.txt"
for ((r = 1; r <= RW_RUNS; r++)); do
	for mode in fp cfi; do
		rec="$OUT/rw-$mode.rec"
		rm -f "$rec"
		envs=(REC_OUTPUT="$rec")
		[ "$mode" = fp ] && envs+=(REC_UNWIND=fp)
		say "requestwatch run $r/$RW_RUNS, $mode: loadgen closed --conns 4 --duration $DURATION --keepalive --path /requests/allocating"
		line=$(env "${envs[@]}" "$LG" closed --conns 4 --duration "$DURATION" --keepalive \
			--path /requests/allocating -- "$BUILD/bin/requestwatch" --port 0 2>>"$LOG")
		echo "$line" >>"$LOG"
		"$BUILD/bin/rec-print" --json-lines --events rec.CPUSample --stack-depth 4096 "$rec" >"$OUT/samples.jsonl"
		roots=$(python3 bench/stack_roots.py "$OUT/samples.jsonl" "$BUILD/bin/requestwatch" --top 3)
		echo "$roots" >>"$LOG"
		echo "mode=$mode run=$r $(head -1 <<<"$roots") throughput=$(kv throughput "$line") cpu=$(kv service_cpu_s "$line")" >>"$OUT/roots.txt"
	done
done
rf() { # rf MODE KEY: median over runs, 1 decimal
	grep "^mode=$1 " "$OUT/roots.txt" | while read -r l; do kv "$2" "$l"; done | median |
		awk '{ if ($1 == "nan") print "n/a"; else printf "%.1f\n", $1 }'
}
rsum() { grep "^mode=$1 " "$OUT/roots.txt" | while read -r l; do kv "$2" "$l"; done | awk '{ s += $1 } END { print s + 0 }'; }

# ---- 3. the emitting thread: the two walks of rec_stack_capture --------------------------
# shellcheck disable=SC2086
$B_CC $B_CFLAGS -o "$OUT/hotpath" bench/hotpath.c "$BUILD/lib/librec.a" $B_LIBS >>"$LOG" 2>&1 && HOT_OK=1 || HOT_OK=0
[ "$HOT_OK" = 1 ] || say "hotpath did not build (see $LOG): no emitting-thread figures"
: >"$OUT/hot.txt"
if [ "$HOT_OK" = 1 ]; then
	for ((r = 1; r <= HOT_RUNS; r++)); do
		for v in fp cfi; do
			say "hotpath run $r/$HOT_RUNS, $v"
			if [ "$v" = fp ]; then export REC_UNWIND=fp; else unset REC_UNWIND; fi
			"$OUT/hotpath" --events-per-round 50000 --rounds 9 "$OUT/hot.rec" 2>>"$LOG" |
				grep -E '^mode=(on|stack) threads=1 ' | sed "s/^/v=$v /" >>"$OUT/hot.txt" || true
		done
	done
	unset REC_UNWIND
fi
hf() { # hf VERSION MODE [KEY]: median over runs of KEY (median ns/event)
	grep "^v=$1 mode=$2 threads=1 " "$OUT/hot.txt" | while read -r l; do kv "${3:-median}" "$l"; done | median
}
hmin() { # hmin VERSION MODE: the least min over runs (the machine's noise left out)
	grep "^v=$1 mode=$2 threads=1 " "$OUT/hot.txt" | while read -r l; do kv min "$l"; done | sort -g | head -1
}

# ---- the section ------------------------------------------------------------------------
SEC="$OUT/section.md"
{
echo "## Stack unwinding of CPU samples (bench/unwind.sh)"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), load average $LOAD0 at the start (2 cores shared with other work)."
echo "CPU samples, crash stacks and the stacks threads capture themselves are walked over librec's own tables of .eh_frame rows"
echo "(libfmt/record/stack_cfi.c, built off the hot path; stack_unwind.c walks them in the signal"
echo "handler), frame pointers where a module has no CFI; \`REC_UNWIND=fp\` keeps the frame-pointer walk."
echo
echo "### Cost per sample"
echo
echo "\`$UC --seconds $SECS\` ($RUNS runs; compiled with \`$UC_CMD\`): 2 threads in code without frame"
echo "pointers (recursion, qsort's callback into malloc/free), SIGPROF every 1 ms of each thread's CPU time,"
echo "the three walks timed on the same ucontext in the signal handler (cold caches, as in a real"
echo "profiler). ns per sample: median over runs of each run's median (and p90); frames per sample;"
echo "root: the share of samples whose walk ended at the thread's root (librec's: the CFI's undefined"
echo "return address; the others: the same last address)."
echo
echo "| walk | ns/sample median | p90 | frames/sample | reach the root |"
echo "|---|---:|---:|---:|---:|"
for w in fp cfi libunwind; do
	label=$w
	case $w in fp) label="frame pointers (before)" ;; cfi) label="**librec's CFI tables (chosen)**" ;; libunwind) label="libunwind 1.6 (Debian), unw_init_local2 + unw_step" ;; esac
	echo "| $label | $(cf "$w" median_ns) | $(cf "$w" p90_ns) | $(cf "$w" frames) | $(cf "$w" root_pct) % |"
done
echo
echo "Chosen: librec's tables. They cost $(awk -v a="$(cf cfi median_ns)" -v b="$(cf libunwind median_ns)" 'BEGIN{ if (b>0) printf "%.1fx", b/a; else print "n/a" }') less than libunwind per sample here,"
echo "read nothing but the snapshot and the thread's stack (libunwind validates addresses itself and keeps"
echo "caches of its own), and are built once per module off the hot path; the cost per sample is what"
echo "a walk of a cold table costs, a few cache lines per frame."
echo
echo "### Completeness: requestwatch under load"
echo
echo "\`loadgen closed --conns 4 --duration $DURATION --keepalive --path /requests/allocating -- requestwatch --port 0\`"
echo "recording with REC_OUTPUT (CPU samples every 10 ms of thread CPU time), $RW_RUNS runs each, alternately;"
echo "a sample reaches the root when eu-addr2line (libc6-dbg) names its last frame libc's start_thread/__clone3"
echo "or the program's main/_start (bench/stack_roots.py)."
echo
echo "| walk | CPU samples (all runs) | reach the root (median of runs) | frames/sample | requests/s | service CPU s |"
echo "|---|---:|---:|---:|---:|---:|"
echo "| frame pointers (REC_UNWIND=fp, before) | $(rsum fp samples) | $(rf fp pct) % | $(rf fp frames) | $(rf fp throughput) | $(rf fp cpu) |"
echo "| CFI tables (after) | $(rsum cfi samples) | $(rf cfi pct) % | $(rf cfi frames) | $(rf cfi throughput) | $(rf cfi cpu) |"
echo
echo "Samples that reach the root, all runs: before $(rsum fp rooted) of $(rsum fp samples), after $(rsum cfi rooted) of $(rsum cfi samples)."
echo
echo "### The emitting thread"
echo
if [ "$HOT_OK" = 1 ]; then
	echo "Stacks captured by the thread itself (rec_stack_capture: lock waits, sleeps, I/O and allocation"
	echo "samples, events of a type with stacks) walk the same tables, so they too go through libc and other"
	echo "code without frame pointers to the thread's root (tests/cli/record_memcached.sh: memcached's lock"
	echo "waits, sleeps and CPU samples; test_stack_unwind: a capture inside qsort's callback).  What it"
	echo "costs: \`hotpath --events-per-round 50000 --rounds 9\` (this tree's librec.a; its stacks are a few"
	echo "frames deep), with \`REC_UNWIND=fp\` (the frame-pointer walk) and the default (CFI), alternately,"
	echo "$HOT_RUNS runs each; ns per event, 1 thread: median of the runs' medians, and the least round of all"
	echo "runs (on a loaded machine the medians move with the other work; the least round does not):"
	echo
	echo "| mode | frame pointers median | CFI median | frame pointers least | CFI least |"
	echo "|---|---:|---:|---:|---:|"
	echo "| stack (a stack captured per event) | $(hf fp stack) | $(hf cfi stack) | $(hmin fp stack) | $(hmin cfi stack) |"
	echo "| on (no stack: the walk is not run) | $(hf fp on) | $(hf cfi on) | $(hmin fp on) | $(hmin cfi on) |"
	echo
	echo "The CFI walk looks up one row per frame; a process-wide cache of the rows last found (keyed by"
	echo "address and table generation, a seqlock per slot: stack_unwind.c) keeps that to a few loads,"
	echo "but the walk is a chain of dependent loads (row, then the frame's saved words, then the next row),"
	echo "where the frame-pointer walk has one.  An event without a stack pays nothing."
else
	echo "(not measured: hotpath did not build)"
fi
} >"$SEC"

if [ "$PRINT" = 1 ]; then
	cat "$SEC"
else
	R=bench/RESULTS.md
	python3 - "$R" "$SEC" <<'EOF'
import sys
path, sec = sys.argv[1], open(sys.argv[2]).read().rstrip("\n") + "\n"
text = open(path).read()
head = "## Stack unwinding of CPU samples"
i = text.find(head)
if i >= 0:
    j = text.find("\n## ", i + len(head))
    text = text[:i] + (text[j + 1:] if j >= 0 else "")
open(path, "w").write(text.rstrip("\n") + "\n\n" + sec)
EOF
	say "wrote the section into $R"
fi
