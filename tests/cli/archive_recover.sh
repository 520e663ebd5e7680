#!/usr/bin/env bash
# rec-recover: a valid file is copied byte for byte (exit 0); from each
# damaged testdata file every intact chunk is kept byte for byte, the output
# passes rec-check, the dropped range and chunk are reported (exit 1); the
# events that survive are exactly the readable ones of the facts; pipes,
# a real truncation of a real file, usage errors.
set -uo pipefail
if [ ! -d "${REC_BIN:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/bin" ]; then REC_BIN=$BUILD/bin; fi
bin=${REC_BIN:?}
root=${REC_ROOT:?}
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

for f in "$root"/testdata/valid/*.rec; do
	n=$(basename "$f" .rec)
	rc=0; "$bin/rec-recover" "$f" "$tmp/$n.rec" 2>"$tmp/err" || rc=$?
	[ "$rc" = 0 ] || fail "$n: exit $rc: $(cat "$tmp/err")"
	cmp -s "$f" "$tmp/$n.rec" || fail "$n: copy differs"
	grep -q "dropped 0 chunks, 0 bytes" "$tmp/err" || fail "$n: $(cat "$tmp/err")"
done

for facts in "$root"/testdata/invalid/*.facts; do
	n=$(basename "$facts" .facts)
	f=$root/testdata/invalid/$n.rec
	off=$(awk '$1 == "damage" { print $5 }' "$facts")
	readable=$(awk '$1 == "readable_events" { print $2 }' "$facts")
	rc=0; "$bin/rec-recover" "$f" "$tmp/$n.rec" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "$n: exit $rc, want 1"
	[ -f "$tmp/$n.rec" ] || { fail "$n: no output"; continue; }
	"$bin/rec-check" -q "$tmp/$n.rec" >"$tmp/chk" 2>&1 || fail "$n: output does not check: $(cat "$tmp/chk")"
	grep -q "dropped [0-9]* bytes at offset" "$tmp/err" || fail "$n: no dropped range: $(cat "$tmp/err")"
	# every chunk the facts list as readable is in the output, byte for byte,
	# in order (its size from its header: Header_Size at 12, Payload_Size at 24)
	pos=0
	while read -r _ _ coff _ _; do
		hs=$(od -An -tu4 -j $((coff + 12)) -N4 "$f" | tr -d ' ')
		ps=$(od -An -tu8 -j $((coff + 24)) -N8 "$f" | tr -d ' ')
		len=$((hs + ps))
		cmp -s <(tail -c +$((coff + 1)) "$f" | head -c "$len") <(tail -c +$((pos + 1)) "$tmp/$n.rec" | head -c "$len") \
			|| fail "$n: chunk at $coff not copied byte for byte"
		pos=$((pos + len))
	done < <(grep '^chunk ' "$facts" | { [ "$n" = stats-mismatch ] && cat >/dev/null || cat; })
	[ "$pos" = "$(stat -c %s "$tmp/$n.rec")" ] || fail "$n: output has $(stat -c %s "$tmp/$n.rec") bytes, the kept chunks $pos"
	case $n in
	stats-mismatch) want=0 ;; # its only chunk fails verification
	*) want=$readable ;;
	esac
	ev=$("$bin/rec-print" "$tmp/$n.rec" | grep -c ' {$')
	[ "$ev" = "$want" ] || fail "$n: $ev events recovered, want $want"
done

# exact messages on the truncated tail
rc=0; "$bin/rec-recover" "$root/testdata/invalid/truncated-tail.rec" "$tmp/t.rec" 2>"$tmp/err" || rc=$?
grep -q "rec-recover: .*truncated-tail.rec: chunk 2 at offset 2694: truncated" "$tmp/err" || fail "truncated: $(cat "$tmp/err")"
grep -q "dropped 646 bytes at offset 2694 (to offset 3340)" "$tmp/err" || fail "truncated range: $(cat "$tmp/err")"
grep -q "kept 2 of 3 chunks (16 events, 2694 bytes); dropped 1 chunk, 646 bytes" "$tmp/err" || fail "truncated total: $(cat "$tmp/err")"
[ "$(stat -c %s "$tmp/t.rec")" = 2694 ] || fail "truncated: output size"

# a real file cut at many points: the output always checks, never grows
src=$root/testdata/valid/zstd.rec
size=$(stat -c %s "$src")
for cut in 1 100 127 128 129 1000 2000 3000 4000 $((size - 1)); do
	head -c "$cut" "$src" >"$tmp/cut.rec"
	rc=0; "$bin/rec-recover" "$tmp/cut.rec" "$tmp/cut.out" 2>/dev/null || rc=$?
	[ "$rc" = 1 ] || fail "cut $cut: exit $rc"
	"$bin/rec-check" -q "$tmp/cut.out" >/dev/null 2>&1 || fail "cut $cut: output does not check"
	[ "$(stat -c %s "$tmp/cut.out")" -le "$cut" ] || fail "cut $cut: output grew"
	cmp -s "$tmp/cut.out" <(head -c "$(stat -c %s "$tmp/cut.out")" "$src") || fail "cut $cut: not a prefix of the original"
done

# pipes in and out (the header of a piped chunk is rebuilt and checked)
rc=0; cat "$root/testdata/invalid/corrupt-middle.rec" | "$bin/rec-recover" - - >"$tmp/p.rec" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "pipe: exit $rc"
"$bin/rec-recover" "$root/testdata/invalid/corrupt-middle.rec" "$tmp/f.rec" 2>/dev/null
cmp -s "$tmp/p.rec" "$tmp/f.rec" || fail "pipe output differs from file output"
rc=0; cat "$root/testdata/valid/lz4.rec" | "$bin/rec-recover" - - >"$tmp/p.rec" 2>/dev/null || rc=$?
[ "$rc" = 0 ] && cmp -s "$tmp/p.rec" "$root/testdata/valid/lz4.rec" || fail "pipe valid: exit $rc"

# no partial output left behind when the input cannot be opened
rc=0; "$bin/rec-recover" "$tmp/nope.rec" "$tmp/o.rec" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && [ ! -e "$tmp/o.rec" ] || fail "missing input: exit $rc"
ls "$tmp" | grep -q '\.tmp\.' && fail "temporary file left"

# usage
cp "$root/testdata/valid/tiny.rec" "$tmp/same.rec"
rc=0; "$bin/rec-recover" "$tmp/same.rec" "$tmp/same.rec" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "same file" "$tmp/err" || fail "same file: exit $rc"
cmp -s "$tmp/same.rec" "$root/testdata/valid/tiny.rec" || fail "same file: input changed"
rc=0; "$bin/rec-recover" "$tmp/same.rec" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "one argument: exit $rc"
rc=0; "$bin/rec-recover" a b c 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "three arguments: exit $rc"
"$bin/rec-recover" --help | grep -q '^Usage: rec-recover' || fail "--help"

[ "$fails" = 0 ] && echo "archive_recover: ok"
exit $((fails != 0))
