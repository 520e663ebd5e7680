#!/usr/bin/env bash
# Resource limits on hostile recordings (issue 6), written by
# $REC_TESTS/rec_test_hostile:
#  1. a 4 GiB chunk, a 2 GiB section, a billion events, a 2 GiB string, a
#     stack deeper than 4096 frames, a frame referencing a missing module and
#     a stack referencing a missing frame: every tool gives a clear error at
#     once (under 5 s) with its address space capped at 512 MiB (ulimit -v;
#     skipped for sanitizer builds, whose shadow memory needs terabytes of
#     address space) and dies of no signal;
#  2. a zstd bomb (64 MiB of zeros in ~2 KiB, declared as 4096 bytes, with and
#     without a content size in the frame) is stopped, under the same cap;
#  3. pathological but valid input -- many tiny chunks, garbage full of decoy
#     magics declaring 4096-byte headers, stacks of the maximum depth -- takes
#     CPU time linear in its size.  There is no operation counter in the
#     reader's API, so this compares CPU time (user+sys, less sensitive to the
#     machine's load than wall time) for N and 8N units: linear is ~8x,
#     quadratic ~64x; the budget allows 24x + 0.3 s, a 3x margin for noise (and the
#     sizes are chosen so that 8N takes ~0.1-1 s: a quadratic tool would
#     need 64x, well past the budget).
set -uo pipefail
if [ ! -d "${REC_BIN:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/bin" ]; then REC_BIN=$BUILD/bin; fi
if [ ! -d "${REC_TESTS:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/tests" ]; then REC_TESTS=$BUILD/tests; fi
bin=${REC_BIN:?}
hostile=${REC_TESTS:?}/rec_test_hostile
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cap_kib=524288
# (ldd's output is captured first: `ldd | grep -q` can end ldd with SIGPIPE under pipefail)
if case "$(ldd "$bin/rec-print" 2>/dev/null)" in *libasan*|*libubsan*) true ;; *) false ;; esac; then
	cap_kib=unlimited
	echo "note: sanitizer build: no ulimit -v"
fi

# run_capped OUT ERR CMD...: runs CMD under the cap and a 20 s timeout;
# sets rc and ms (wall milliseconds).
run_capped() {
	local out=$1 err=$2; shift 2
	local t0 t1
	t0=$(date +%s%N)
	( ulimit -v "$cap_kib"; exec timeout 20 "$@" ) >"$out" 2>"$err"
	rc=$?
	t1=$(date +%s%N)
	ms=$(( (t1 - t0) / 1000000 ))
}

tools=("rec-print" "rec-print --json" "rec-summary" "rec-summary --verify" "rec-flame" "rec-timeline" "rec-lockgraph")

# case  expected message (grep -E) from the tools that decode it
expect() {
	local k=$1 msg=$2 f=$tmp/$1.rec
	"$hostile" "$k" "$f" || { fail "$k: rec_test_hostile failed"; return; }
	for args in "${tools[@]}"; do
		# shellcheck disable=SC2086
		set -- $args
		local tool=$1; shift
		run_capped "$tmp/out" "$tmp/err" "$bin/$tool" "$@" "$f"
		if [ "$rc" -ge 124 ]; then
			fail "$k: $args: exit $rc (signal or timeout after $ms ms): $(head -c 400 "$tmp/err")"
			continue
		fi
		[ "$ms" -lt 5000 ] || fail "$k: $args: took $ms ms"
		grep -q 'AddressSanitizer\|runtime error\|LeakSanitizer' "$tmp/err" && fail "$k: $args: sanitizer report: $(head -c 600 "$tmp/err")"
		# rec-summary without --verify reads only headers, METADATA and
		# STATS: pool and event damage is not its business.
		case "$k:$args" in
		huge-string:rec-summary|missing-*:rec-summary|too-deep:rec-summary|zstd-bomb*:rec-summary) continue ;;
		esac
		[ "$rc" -ne 0 ] || fail "$k: $args: exit 0 on a hostile file"
		grep -Eq "$msg" "$tmp/err" || fail "$k: $args: stderr lacks /$msg/: $(head -c 400 "$tmp/err")"
	done
}

expect huge-chunk 'Payload_Size 4294967296 exceeds the limit'
expect huge-section 'Raw_Size 2147483648 exceeds the limit'
expect billion-events 'Item_Count 1000000000 exceeds Raw_Size'
expect huge-string 'string longer than the 1 MiB limit'
expect too-deep 'depth exceeds the limit of 4096 frames'
expect missing-module 'references a missing module'
expect missing-frame 'references a missing frame'
expect zstd-bomb 'does not decompress'
expect zstd-bomb-nosize 'does not decompress'

# The files are really what they claim (so the checks above mean something).
"$hostile" huge-chunk "$tmp/hc.rec"
off=$(LC_ALL=C grep -obUaP '\x89REC\r' "$tmp/hc.rec" | sed -n 2p | cut -d: -f1)
[ -n "$off" ] && [ "$(od -An -tu8 -j $((off + 24)) -N8 "$tmp/hc.rec" | tr -d ' ')" = 4294967296 ] ||
	fail "huge-chunk: second header does not declare 4 GiB"
"$hostile" zstd-bomb "$tmp/zb.rec" && sz=$(stat -c %s "$tmp/zb.rec") && [ "$sz" -lt 8192 ] ||
	fail "zstd-bomb: file is not tiny"
off=$(LC_ALL=C grep -obUaP '\x28\xb5\x2f\xfd' "$tmp/zb.rec" | head -1 | cut -d: -f1)
tail -c +$((off + 1)) "$tmp/zb.rec" | zstd -dc 2>/dev/null | head -c 70000000 | wc -c >"$tmp/zbsize"
[ "$(cat "$tmp/zbsize")" -eq 67108864 ] || fail "zstd-bomb: payload does not expand to 64 MiB ($(cat "$tmp/zbsize"))"

# cpu_of ARGS...: user+sys seconds of the command (under the cap).
cpu_of() {
	( ulimit -v "$cap_kib"; exec /usr/bin/time -f '%U %S' -o "$tmp/time" timeout 120 "$@" ) >/dev/null 2>"$tmp/err"
	local r=$?
	[ "$r" -lt 124 ] || fail "$*: exit $r: $(head -c 300 "$tmp/err")"
	# time writes "Command exited with non-zero status N" first then.
	tail -1 "$tmp/time" | awk '{printf "%.2f\n", $1 + $2}'
}

linear() {
	local k=$1 n=$2 f1=$tmp/lin1.rec f8=$tmp/lin8.rec
	"$hostile" "$k" "$f1" "$n" && "$hostile" "$k" "$f8" $((8 * n)) || { fail "$k: rec_test_hostile failed"; return; }
	for args in "rec-print" "rec-summary --verify" "rec-flame --event test.Hostile" "rec-timeline"; do
		# shellcheck disable=SC2086
		set -- $args
		local tool=$1; shift
		local c1 c8
		c1=$(cpu_of "$bin/$tool" "$@" "$f1")
		c8=$(cpu_of "$bin/$tool" "$@" "$f8")
		echo "$k: $args: N=$n ${c1} s, 8N ${c8} s ($(stat -c %s "$f8") bytes)"
		awk -v a="$c1" -v b="$c8" 'BEGIN { exit !(b <= 24 * a + 0.3) }' ||
			fail "$k: $args: $c1 s for N=$n but $c8 s for 8N (worse than linear)"
	done
}

linear many-chunks 2000
linear decoys 4000
linear deep-stacks 50

# The decoys really make the reader work, and it finds the chunk behind them.
"$hostile" decoys "$tmp/dec.rec" 100
"$bin/rec-print" "$tmp/dec.rec" >"$tmp/out" 2>"$tmp/err"
[ "$(grep -c '^test.Hostile {' "$tmp/out")" -eq 2 ] || fail "decoys: the 2 events after the decoys are not printed"
grep -q 'skipped 10496 bytes' "$tmp/err" || fail "decoys: skipped bytes not reported: $(cat "$tmp/err")"

# A decoy magic within 4096 bytes of the end of the file whose Header_Size
# runs past the end is not a cut-off chunk when a good chunk follows it: the
# reader reports the damaged header and reads the chunk behind it (it used to
# report "truncated" and stop).
"$hostile" decoys-tail "$tmp/dt.rec" 10
n=$("$bin/rec-print" "$tmp/dt.rec" 2>"$tmp/err" | grep -c '^test.Hostile {')
[ "$n" -eq 2 ] || fail "decoys-tail: $n of 2 events after decoys near the end of the file"
grep -q 'at offset 0: damaged chunk header' "$tmp/err" || fail "decoys-tail: damaged header not reported: $(cat "$tmp/err")"

[ "$fails" -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "limits: all checks passed"
