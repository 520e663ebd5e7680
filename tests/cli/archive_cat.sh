#!/usr/bin/env bash
# Concatenation.  Plain `cat a b c` is a valid recording that reads as all of
# its parts (chunks, events, runs, restarts).  rec-cat: runs ordered by start
# whatever the argument order, each run's chunks back in sequence order after
# being shuffled, exact duplicate chunks removed and counted, damaged chunks
# left out and reported; byte-for-byte results compared with cat and cmp.
# Uses three runs recorded by the real recorder (REC_OUTPUT, small chunks).
set -uo pipefail
if [ ! -d "${REC_BIN:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/bin" ]; then REC_BIN=$BUILD/bin; fi
if [ ! -d "${REC_TESTS:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/tests" ]; then REC_TESTS=$BUILD/tests; fi
bin=${REC_BIN:?}
tests=${REC_TESTS:?}
root=${REC_ROOT:?}
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Three runs of a real recording process, one file each (%p = pid), in time order.
mkdir "$tmp/runs"
for i in 1 2 3; do
	REC_OPTIONS="chunk=16384,full=wait" REC_OUTPUT="$tmp/runs/run-$i-%p.rec" "$tests/rec_test_recorder_env" 20000 \
		|| fail "recording run $i"
done
set -- "$tmp"/runs/run-1-*.rec "$tmp"/runs/run-2-*.rec "$tmp"/runs/run-3-*.rec
a=$1 b=$2 c=$3
nchunks() { "$bin/rec-check" --json "$@" | python3 -c 'import json,sys; print(sum(f["chunks"] for f in json.load(sys.stdin)["files"]))'; }
nevents() { "$bin/rec-check" --json "$@" | python3 -c 'import json,sys; print(sum(f["events"] for f in json.load(sys.stdin)["files"]))'; }
ca=$(nchunks "$a"); cb=$(nchunks "$b"); cc=$(nchunks "$c")
[ "$ca" -ge 3 ] && [ "$cb" -ge 3 ] && [ "$cc" -ge 3 ] || fail "recordings too small: $ca $cb $cc chunks"
ev=$(nevents "$a" "$b" "$c")

# 1. plain cat reads as all of its parts
cat "$a" "$b" "$c" >"$tmp/cat.rec"
rc=0; "$bin/rec-check" "$tmp/cat.rec" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 0 ] && grep -q "OK, $((ca + cb + cc)) chunks, $ev events" "$tmp/out" || fail "cat: $(cat "$tmp/out")"
"$bin/rec-summary" --json "$tmp/cat.rec" >"$tmp/s.json" || fail "rec-summary cat.rec"
python3 - "$tmp/s.json" "$ev" <<'PY' || fail "cat: summary"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["events"] == int(sys.argv[2]), d["events"]
assert len(d["runs"]) == 3 and d["restarts"] == 2, d["runs"]
assert all(r["ended"] == "clean close" for r in d["runs"]), d["runs"]
PY
n=$("$bin/rec-print" --json "$tmp/cat.rec" | grep -c '"type": "app.HelperEvent"')
[ "$n" = 60000 ] || fail "cat: rec-print shows $n app.HelperEvent events, want 60000"

# 2. runs ordered by start whatever the argument order
rc=0; "$bin/rec-cat" -o "$tmp/o.rec" "$c" "$a" "$b" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] || fail "rec-cat c a b: exit $rc: $(cat "$tmp/err")"
cmp -s "$tmp/o.rec" "$tmp/cat.rec" || fail "rec-cat c a b differs from cat a b c"
grep -q "^rec-cat: 3 files: $((ca + cb + cc)) chunks of 3 runs written ([0-9]* bytes), 0 duplicate chunks removed" "$tmp/err" \
	|| fail "report: $(cat "$tmp/err")"
# --keep-order keeps the argument order
"$bin/rec-cat" -q --keep-order "$c" "$a" "$b" >"$tmp/k.rec" || fail "--keep-order exit"
cat "$c" "$a" "$b" | cmp -s - "$tmp/k.rec" || fail "--keep-order differs from cat c a b"

# 3. exact duplicates removed (whole files given twice, and a cat of them)
rc=0; "$bin/rec-cat" -o "$tmp/d.rec" "$a" "$b" "$a" "$tmp/cat.rec" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] || fail "dups: exit $rc"
cat "$a" "$b" "$c" | cmp -s - "$tmp/d.rec" || fail "dups: output is not a b c"
dup=$((ca + ca + cb))
grep -q ", $dup duplicate chunks removed" "$tmp/err" || fail "dups: want $dup removed: $(cat "$tmp/err")"

# 4. a run's chunks back in sequence order: split into one chunk per piece,
#    cat the pieces in reverse, rec-cat restores the original bytes
"$bin/rec-split" --by size=1 -o "$tmp/p" "$a" >"$tmp/pieces" || fail "split a"
[ "$(wc -l <"$tmp/pieces")" = "$ca" ] || fail "split a: $(wc -l <"$tmp/pieces") pieces, want $ca"
ls "$tmp"/p-*.rec | sort -r | xargs cat >"$tmp/rev.rec"
cmp -s "$tmp/rev.rec" "$a" && fail "reversed pieces equal the original (nothing to reorder)"
"$bin/rec-cat" -q -o "$tmp/fixed.rec" "$tmp/rev.rec" || fail "rec-cat rev.rec"
cmp -s "$tmp/fixed.rec" "$a" || fail "rec-cat did not restore the sequence order"
# the same with the pieces as separate arguments, shuffled and duplicated
ls "$tmp"/p-*.rec | sort -r >"$tmp/list"
"$bin/rec-cat" -q -o "$tmp/fixed2.rec" $(cat "$tmp/list") $(head -3 "$tmp/list") || fail "rec-cat pieces"
cmp -s "$tmp/fixed2.rec" "$a" || fail "rec-cat pieces did not restore the original"

# 5. damaged input: the damaged chunk is reported and left out, exit 1
inv=$root/testdata/invalid
rc=0; "$bin/rec-cat" -o "$tmp/dm.rec" "$inv/corrupt-middle.rec" "$root/testdata/valid/tiny.rec" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "damaged: exit $rc"
grep -q "corrupt-middle.rec: chunk 1 at offset 1177: payload checksum mismatch" "$tmp/err" || fail "damaged: $(cat "$tmp/err")"
grep -q "1 damaged chunk left out" "$tmp/err" || fail "damaged report: $(cat "$tmp/err")"
"$bin/rec-check" "$tmp/dm.rec" | grep -q "OK, 3 chunks, 20 events" || fail "damaged: output $("$bin/rec-check" "$tmp/dm.rec" 2>&1)"
rc=0; "$bin/rec-cat" -q -o "$tmp/tt.rec" "$inv/truncated-tail.rec" 2>/dev/null || rc=$?
[ "$rc" = 1 ] && "$bin/rec-check" -q "$tmp/tt.rec" || fail "truncated: exit $rc"

# 6. standard output by default; usage errors
"$bin/rec-cat" -q "$a" | cmp -s - "$a" || fail "stdout copy"
rc=0; "$bin/rec-cat" - <"$a" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "needs files" "$tmp/err" || fail "'-': exit $rc"
cp "$a" "$tmp/x.rec"
rc=0; "$bin/rec-cat" -o "$tmp/x.rec" "$tmp/x.rec" "$b" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && cmp -s "$tmp/x.rec" "$a" || fail "output is an input: exit $rc"
rc=0; "$bin/rec-cat" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "no file: exit $rc"
rc=0; "$bin/rec-cat" -q "$tmp/none.rec" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q "No such file" "$tmp/err" || fail "missing file: exit $rc"
"$bin/rec-cat" --help | grep -q '^Usage: rec-cat' || fail "--help"

[ "$fails" = 0 ] && echo "archive_cat: ok"
exit $((fails != 0))
