#!/usr/bin/env bash
# rec-flame: golden collapsed output on the deterministic recordings of
# tests/helpers/rec_test_flame_gen (expected files in tests/cli/flame/*.out),
# --diff, --reverse, --threads, filters, time windows, presets and --weight,
# HTML output, usage errors (exit 2) and damaged input (exit 1).
# FLAME_UPDATE=1 rewrites the expected files (review the diff).
set -euo pipefail
# run.sh builds REC_BIN as $PWD/$BUILD/bin, which is wrong for an absolute BUILD.
for v in REC_BIN:bin REC_TESTS:tests; do
	n=${v%%:*} sub=${v#*:}
	if [ ! -d "${!n:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/$sub" ]; then export "$n=$BUILD/$sub"; fi
done
root=${REC_ROOT:?}
flame="${REC_BIN:?}/rec-flame"
exp="$root/tests/cli/flame"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"${REC_TESTS:?}/rec_test_flame_gen" "$tmp"
B="$tmp/before.rec" A="$tmp/after.rec"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# golden NAME ARGS...: exit 0, empty stderr, stdout == flame/NAME.out
golden() {
	local name=$1; shift
	local rc=0
	"$flame" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" -eq 0 ] || { fail "$name: exit $rc"; cat "$tmp/err"; return; }
	[ -s "$tmp/err" ] && { fail "$name: unexpected stderr"; cat "$tmp/err"; }
	if [ "${FLAME_UPDATE:-0}" = 1 ]; then
		cp "$tmp/out" "$exp/$name.out"
	elif ! diff -u "$exp/$name.out" "$tmp/out"; then
		fail "$name: output differs from tests/cli/flame/$name.out"
	fi
}

golden default "$B"
golden threads --threads "$B"
golden reverse --reverse "$B"
golden reverse-threads --reverse --threads "$B"
golden include --include 'compute_hash' "$B"
golden include-two --include '^parse' --include '^__poll$' "$B"
golden exclude --exclude '^__poll$' --exclude 'odd' "$B"
golden include-exclude --include 'handle_request' --exclude '^parse_json$' "$B"
golden window --from 1s --to 2s "$B"
golden window-from --from 3500ms "$B"
golden minwidth-pct --minwidth 10% "$B"
golden minwidth-weight --minwidth 21 "$B"
golden alloc --event rec.Alloc "$B"
golden lockwait --event rec.LockWait "$B"
golden lockwait-keep --event rec.LockWait --keep-recorder-frames "$B"
golden sleep --event rec.Sleep "$B"
golden query-count --event app.Query "$B"
golden query-rows --event app.Query --weight rows "$B"
golden query-cpu --event app.Query --weight cpu "$B"
golden query-duration --event app.Query --weight duration "$B"
golden diff --diff "$B" "$A"
golden diff-threads --diff "$B" "$A" --threads
golden after "$A"

# the same window given as absolute times (the recording starts at
# 2026-12-02T10:14:03.5Z), in UTC and in another zone, and as local time
cmp_same() { # NAME EXPECTED ARGS...
	local name=$1 want=$2; shift 2
	if ! "$flame" "$@" >"$tmp/out" 2>"$tmp/err"; then fail "$name: failed"; cat "$tmp/err"; return; fi
	diff -u "$exp/$want.out" "$tmp/out" || fail "$name: differs from $want.out"
}
cmp_same window-iso-utc window --from 2026-12-02T10:14:04.5Z --to 2026-12-02T10:14:05.500Z "$B"
cmp_same window-iso-zone window --from 2026-12-02T11:14:04.5+01:00 --to '2026-12-02 11:14:05.5+01:00' "$B"
TZ=UTC cmp_same window-iso-local window --from 2026-12-02T10:14:04.5 --to 2026-12-02T10:14:05.5 "$B"
cmp_same stdin default - <"$B"
cmp_same weight-count default --weight count "$B"

# collapsed lines are "frames weight" with a total of 100 samples
awk '!/^[^ ].* [0-9]+$/ { bad = 1 } { s += $NF } END { exit !(s == 100 && !bad) }' "$exp/default.out" ||
	fail "default.out: not 100 samples in collapsed lines"
# frame names: ';' replaced by ':', the newline by a space, no function -> module+0xOFF
grep -qx 'main;odd:name 5' "$exp/default.out" || fail "';' in a frame name not replaced"
grep -qx 'main;libapp.so+0x1234;line break 5' "$exp/default.out" || fail "newline/module+offset frame"
grep -qx '\[truncated\];handle_request;compute_hash 5' "$exp/default.out" || fail "truncated stack"
# a diff line has two weights; stacks of either input are there
grep -qx 'main;run_loop;__poll 25 15' "$exp/diff.out" || fail "diff line"
grep -qx 'main;odd:name 5 0' "$exp/diff.out" || fail "diff: stack only in BEFORE"

# --output: collapsed to a file; .html implies HTML; --format wins
"$flame" -o "$tmp/x.txt" "$B" && cmp -s "$tmp/x.txt" "$exp/default.out" || fail "--output FILE"
[ ! -s "$tmp/err" ] || true
"$flame" --output "$tmp/x.html" "$A" || fail "--output x.html"
head -c 15 "$tmp/x.html" | grep -q '<!DOCTYPE html>' || fail ".html output is not HTML"
"$flame" --output "$tmp/y.html" --format collapsed "$B" && cmp -s "$tmp/y.html" "$exp/default.out" ||
	fail "--format collapsed with a .html name"
"$flame" --format html --title 'T <&> "q"' "$A" >"$tmp/z.html" || fail "--format html"
grep -q '<title>T &lt;&amp;&gt; &quot;q&quot;</title>' "$tmp/z.html" || fail "title not escaped"
# self-contained: no external resource; the frame named "render</script><b>x"
# does not end the data script early
grep -Eqi '(src|href)=|https?:|@import|fetch\(|XMLHttpRequest' "$tmp/x.html" && fail "HTML refers to something outside"
[ "$(grep -o '</script>' "$tmp/x.html" | wc -l)" -eq 2 ] || fail "HTML: '</script>' not escaped in data"
grep -q 'render\\u003c/script\\u003e\\u003cb\\u003ex' "$tmp/x.html" || fail "HTML: escaped name missing"
# the embedded JSON parses and its tree adds up to the collapsed weights
node -e '
const fs = require("fs");
const h = fs.readFileSync(process.argv[1], "utf8");
const m = h.match(/<script type="application\/json" class="rec-flame-data">([\s\S]*?)<\/script>/);
const d = JSON.parse(m[1]);
let sum = 0;
(function w(n) { sum += n[1]; for (let i = 3; i < n.length; i++) w(n[i]); })(d.tree);
if (sum !== 125 || d.total !== 125 || d.unit !== "samples" || !d.names.includes("render</script><b>x")) {
	console.error("bad data", sum, d.total, d.unit); process.exit(1);
}' "$tmp/x.html" || fail "HTML data"

# help and version
"$flame" --help >"$tmp/out" && grep -q '^Usage: rec-flame' "$tmp/out" || fail "--help"
"$flame" --version >"$tmp/out" && [ -s "$tmp/out" ] || fail "--version"

# usage errors: exit 2, a message and the hint
usage() { # EXPECTED-TEXT ARGS...
	local want=$1; shift
	local rc=0
	"$flame" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" -eq 2 ] || { fail "usage ($*): exit $rc, want 2"; return; }
	[ -s "$tmp/out" ] && fail "usage ($*): wrote to stdout"
	grep -q -- "$want" "$tmp/err" || { fail "usage ($*): no '$want' in:"; cat "$tmp/err"; }
	grep -q "try 'rec-flame --help'" "$tmp/err" || fail "usage ($*): no hint"
}
usage 'no input file'
usage 'one input file expected' "$B" "$A"
usage 'needs the AFTER file' --diff "$B"
usage 'is not collapsed, html or pprof' --format svg "$B"
usage 'minwidth' --minwidth abc "$B"
usage 'minwidth' --minwidth 150% "$B"
usage 'is not a duration' --from yesterday "$B"
usage 'not after --from' --from 2s --to 1s "$B"
usage 'both be offsets' --from 1s --to 2026-12-02T10:14:05Z "$B"
usage 'include pattern' --include 'a(' "$B"
usage 'exclude pattern' --exclude '[z' "$B"
usage 'unrecognized option\|unknown option' --bogus "$B"
usage 'has no stack traces' --event app.Tick "$B"
usage "has no field 'nosuch'" --event app.Query --weight nosuch "$B"
usage 'not a number' --event app.Query --weight label "$B"
usage 'given twice' --diff - -

# an event type that is not in the recording: a usage error that lists the
# types it has, as rec-print does (issue 16: it was exit 0, empty output)
usage "no event type matches 'app.Nothing'; the input has: app.Query, app.Tick, rec.Alloc, rec.CPUSample, rec.LockWait, rec.Sleep" --event app.Nothing "$B"

# missing file: exit 1
rc=0; "$flame" "$tmp/nosuch.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 1 ] && grep -q 'nosuch.rec' "$tmp/err" || fail "missing file: exit $rc"

# damaged input: what was readable is written, the problem reported, exit 1
size=$(stat -c %s "$B")
head -c $((size - 100)) "$B" >"$tmp/cut.rec"
rc=0; "$flame" "$tmp/cut.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 1 ] || fail "truncated input: exit $rc, want 1"
grep -q 'cut.rec' "$tmp/err" || fail "truncated input: no report"
[ -s "$tmp/out" ] || fail "truncated input: nothing written"
if [ "${FLAME_UPDATE:-0}" = 1 ]; then cp "$tmp/out" "$exp/damaged-cut.out"; fi
diff -u "$exp/damaged-cut.out" "$tmp/out" || fail "truncated input: output differs"
# a flipped byte in the middle: that chunk is skipped, the others are read
cp "$B" "$tmp/flip.rec"
printf '\377' | dd of="$tmp/flip.rec" bs=1 seek=$((size / 2)) conv=notrunc status=none
rc=0; "$flame" "$tmp/flip.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 1 ] || fail "corrupt chunk: exit $rc, want 1"
grep -q 'flip.rec' "$tmp/err" || fail "corrupt chunk: no report"
if [ "${FLAME_UPDATE:-0}" = 1 ]; then cp "$tmp/out" "$exp/damaged-flip.out"; fi
diff -u "$exp/damaged-flip.out" "$tmp/out" || fail "corrupt chunk: output differs"
# fewer samples than the whole file, but some
n=$(awk '{ s += $NF } END { print s + 0 }' "$tmp/out")
[ "$n" -gt 0 ] && [ "$n" -lt 100 ] || fail "corrupt chunk: $n samples"
# --diff with a damaged AFTER still writes and exits 1
rc=0; "$flame" --diff "$B" "$tmp/cut.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 1 ] && [ -s "$tmp/out" ] || fail "diff with damaged input: exit $rc"

# every recording of testdata/ (valid and damaged): exit 0 or 1, never a crash
for f in "$root"/testdata/valid/*.rec "$root"/testdata/invalid/*.rec; do
	[ -f "$f" ] || continue
	for args in "" "--threads --format html" "--event rec.LockWait --reverse"; do
		rc=0
		# shellcheck disable=SC2086
		"$flame" $args "$f" >/dev/null 2>"$tmp/err" || rc=$?
		[ "$rc" -le 1 ] || { fail "$(basename "$f") [$args]: exit $rc"; head -3 "$tmp/err"; }
	done
done

if [ "$fails" -ne 0 ]; then
	echo "flame: $fails failure(s)"
	exit 1
fi
echo "flame: all checks passed"
