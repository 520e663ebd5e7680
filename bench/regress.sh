#!/usr/bin/env bash
# bench/regress.sh [--quick] [--stdout] - this tree against an older commit,
# in one run: "no regression" of issue #17 (the house split), or of any
# change.  Both trees are built with their own Makefile; each runs its own
# bench/hotpath.c (ns per event of the emit path, per mode and thread
# count), its own bench/gen_events.c (write speed) and its own rec-summary
# and rec-print over its own file of the same events (each
# reads what it wrote; the format may have gained a minor version since).
# The two sides alternate run by run, so a busy machine slows both alike;
# the table gives medians and new/old ratios.
#
#   BUILD=build bash bench/regress.sh           full: N = 5M events, 5 runs
#   BUILD=build bash bench/regress.sh --quick   quick: N = 1M events, 3 runs
#
# Environment: REGRESS_REV (the old commit; default 08ab87f, the last commit
# before issue #17 split recorder.c, chunk.c and cli.c), REGRESS_N,
# REGRESS_RUNS, REGRESS_NO_MAKE=1 (use $BUILD as it is).  Writes the markdown
# section to $BUILD/bench/regress.md; with --stdout prints it, else puts it
# into bench/RESULTS.md in place of its "## Before and after" section.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh

stdout_args 21 "$@"
if [ "$QUICK" = 1 ]; then
	N=${REGRESS_N:-1000000}; RUNS=${REGRESS_RUNS:-3}; HOT_K=50000; HOT_R=5; MODE=quick
else
	N=${REGRESS_N:-5000000}; RUNS=${REGRESS_RUNS:-5}; HOT_K=100000; HOT_R=9; MODE=full
fi
REV=${REGRESS_REV:-08ab87f}
BUILD=${BUILD:-build}
ROOT=$PWD
OUT="$ROOT/$BUILD/bench/regress"
LOG="$OUT/log.txt"
MD="$ROOT/$BUILD/bench/regress.md"
mkdir -p "$OUT"
: >"$LOG"
say() { printf '[regress %s] %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$LOG" >&2; }
die() { say "error: $*"; exit 1; }
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
OLD_ID=$(git rev-parse --short "$REV") || die "no commit $REV"
NEW_ID=$(git rev-parse --short HEAD)
NEW_DIRTY=""
if git status --porcelain --untracked-files=no | grep -q .; then NEW_DIRTY=" (with uncommitted changes)"; fi

# ---- the two builds --------------------------------------------------------------------
OLD_TREE="$OUT/tree-$OLD_ID"
if [ ! -d "$OLD_TREE" ]; then
	say "exporting $OLD_ID into $OLD_TREE"
	mkdir -p "$OLD_TREE"
	git archive "$OLD_ID" | tar -x -C "$OLD_TREE"
fi
say "building $OLD_ID (its own Makefile)"
make -C "$OLD_TREE" -j2 BUILD=build all >>"$LOG" 2>&1 || die "$OLD_ID does not build (see $LOG)"
if [ "${REGRESS_NO_MAKE:-0}" != 1 ]; then
	say "building this tree"
	make -j2 BUILD="$BUILD" all >>"$LOG" 2>&1 || die "this tree does not build (see $LOG)"
fi

# side TREE BUILD NAME: compile the side's bench programs with its own flags
side() {
	local tree=$1 build=$2 name=$3
	(cd "$tree" && BUILD=$build bench_flags &&
		$B_CC $B_CFLAGS -o "$OUT/$name-hotpath" bench/hotpath.c "$build/lib/librec.a" $B_LIBS &&
		$B_CC $B_CFLAGS -o "$OUT/$name-gen" bench/gen_events.c "$build/lib/librec.a" $B_LIBS &&
		$B_CC $B_CFLAGS -o "$OUT/runstat" bench/runstat.c) >>"$LOG" 2>&1 ||
		die "$name: the bench programs do not compile (see $LOG)"
	ln -sfn "$tree/$build/bin" "$OUT/$name-bin"
}
side "$OLD_TREE" build old
side "$ROOT" "$BUILD" new
RUNSTAT="$OUT/runstat"

# ---- the runs, alternating -------------------------------------------------------------
: >"$OUT/hot.txt"
: >"$OUT/tools.txt"
: >"$OUT/gen.txt"
say "N=$N events, $RUNS runs a side, load $LOAD_START"
for r in $(seq 1 "$RUNS"); do
	for s in old new; do
		# write: events/s of the writer (zstd, the default)
		line=$("$OUT/$s-gen" "$N" "$OUT/$s.rec") || die "$s gen_events failed"
		echo "$s $(kv events_per_s "$line")" >>"$OUT/gen.txt"
		# the emit path
		"$OUT/$s-hotpath" --events-per-round "$HOT_K" --rounds "$HOT_R" "$OUT/$s-hot.rec" 2>>"$LOG" |
			sed -n "s/^mode=\([a-z]*\) threads=\([0-9]\) median=\([0-9.]*\).*/$s \1-\2 \3/p" >>"$OUT/hot.txt" ||
			die "$s hotpath failed (see $LOG)"
		# the readers: wall seconds and peak RSS
		# (runstat prints: wall user sys maxrss_kb status; the tool's own
		# output goes to /dev/null inside runstat's child)
		for tool in summary print; do
			st=$("$RUNSTAT" sh -c 'exec "$0" "$1" >/dev/null' "$OUT/$s-bin/rec-$tool" "$OUT/$s.rec" 2>>"$LOG") ||
				die "$s rec-$tool failed (see $LOG)"
			read -r wall _ _ rss code <<<"$st"
			[ "$code" = 0 ] || die "$s rec-$tool exited $code (see $LOG)"
			echo "$s $tool $wall $rss" >>"$OUT/tools.txt"
		done
	done
	say "run $r of $RUNS done"
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- the table -------------------------------------------------------------------------
med() { awk -v s="$1" -v k="$2" -v c="$3" '$1 == s && $2 == k {print $c}' "$4" | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 == 0 || a == "nan" || b == "nan") print "n/a"; else printf "%.2f", b / a }'; }
{
	echo "## Before and after ($OLD_ID against $NEW_ID)"
	echo
	echo "\`bash bench/regress.sh\` ($MODE, $(date -u +%Y-%m-%d), load $LOAD_START at the start, $LOAD_END at the end):"
	echo "commit $OLD_ID (REGRESS_REV) against $NEW_ID$NEW_DIRTY, each built by its own Makefile and"
	echo "running its own bench programs, alternating run by run; medians of $RUNS runs (the hot path:"
	echo "of $RUNS runs' medians over $HOT_R rounds of $HOT_K events a thread). Lower is better except"
	echo "events/s; new/old above 1.00 is slower for times."
	echo
	echo "| measure | $OLD_ID | $NEW_ID | new/old |"
	echo "|---|---|---|---|"
	a=$(awk '$1 == "old" {print $2}' "$OUT/gen.txt" | median)
	b=$(awk '$1 == "new" {print $2}' "$OUT/gen.txt" | median)
	echo "| writer, events/s (gen_events, $N events, zstd) | $a | $b | $(ratio "$a" "$b") |"
	for k in $(awk '$1 == "new" {print $2}' "$OUT/hot.txt" | sort -u); do
		a=$(med old "$k" 3 "$OUT/hot.txt"); b=$(med new "$k" 3 "$OUT/hot.txt")
		echo "| emit path ns/event, ${k%-*}, ${k##*-} thread(s) | $a | $b | $(ratio "$a" "$b") |"
	done
	for tool in summary print; do
		a=$(med old "$tool" 3 "$OUT/tools.txt"); b=$(med new "$tool" 3 "$OUT/tools.txt")
		echo "| rec-$tool, wall s | $a | $b | $(ratio "$a" "$b") |"
		a=$(med old "$tool" 4 "$OUT/tools.txt"); b=$(med new "$tool" 4 "$OUT/tools.txt")
		echo "| rec-$tool, peak RSS KiB | $a | $b | $(ratio "$a" "$b") |"
	done
	echo
	echo "Raw runs: \`$BUILD/bench/regress/{gen,hot,tools}.txt\`."
} >"$MD"
if [ "$STDOUT" = 1 ]; then
	cat "$MD"
else
	results_section "## Before and after" "$MD"
	say "bench/RESULTS.md: section \"## Before and after\" written"
fi
