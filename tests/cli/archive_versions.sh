#!/usr/bin/env bash
# Compatibility over years: one concatenated file mixing format versions,
# testdata/archive/mixed-versions.rec, kept as it is (never regenerated: an
# archive does not change when the generator does).  It is
#   tiny.rec (1.0, 1 chunk, 4 events, 506 bytes)
#   + newer-minor.rec (1.1: an unknown section, unknown type, trailing bytes;
#     1 chunk, 2 events, 527 bytes)
#   + the second chunk of future-major.rec (format 2.0, 1517 bytes, at offset 1033)
#   + zstd.rec (1.0, 3 chunks, 46 events, 4917 bytes, from offset 2550)
# as testdata/ held them on 2026-12-02 (`cat`, `tail -c`, `head -c`).
# Every tool reads the 5 chunks it can (52 events of 3 runs), reports the
# 2.0 chunk once as "chunk 2 at offset 1033: unsupported format version 2.0"
# with the file name, counts it, goes on to the chunks after it, and exits 1.
# The same holds for a file built now from the current testdata parts, where
# newer-minor.rec is 1.4 (one minor newer than the writer's 1.3) and
# zstd-1.1.rec (format 1.1, Front_Checksum) takes zstd.rec's place: 1.0, 1.4,
# 2.0 and 1.1 chunks in one file.  Then format 1.3's split EVENTS through
# the archive tools.  Then the
# archive tools on 1.1 chunks damaged in STATS or in EVENTS, from a pipe too.
set -uo pipefail
if [ ! -d "${REC_BIN:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/bin" ]; then REC_BIN=$BUILD/bin; fi
bin=${REC_BIN:?}
root=${REC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TZ=UTC LC_ALL=C
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# The file built from today's parts: cat, as concatenation is by design.
fm=$root/testdata/invalid/future-major.rec
off=$(sed -n 's/^damage version at offset //p' "$root/testdata/invalid/future-major.facts")
next=$(sed -n 's/^chunk offset \([0-9]*\) .*/\1/p' "$root/testdata/invalid/future-major.facts" | awk -v o="$off" '$1 > o' | head -1)
[ -n "$off" ] && [ -n "$next" ] || fail "future-major.facts: no offsets"
{ cat "$root/testdata/valid/tiny.rec" "$root/testdata/valid/newer-minor.rec"
  tail -c +$((off + 1)) "$fm" | head -c $((next - off))
  cat "$root/testdata/valid/zstd-1.1.rec"; } >"$tmp/now.rec"

check() { # FILE OFFSET_OF_THE_2.0_CHUNK EVENTS SIZE_OF_THE_2.0_CHUNK VERSIONS
	local f=$1 bad=$2 events=$3 skip=$4 versions=$5 name rc
	name=$(basename "$f")
	cd "$(dirname "$f")" || return
	msg="$name: chunk 2 at offset $bad: unsupported format version 2.0"

	rc=0; "$bin/rec-check" "$name" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "$name: rec-check exit $rc"
	[ "$(cat "$tmp/err")" = "rec-check: $msg" ] || fail "$name: rec-check stderr: $(cat "$tmp/err")"
	grep -qx "$name: DAMAGED, 1 of 6 chunks, $skip bytes skipped (1 of a newer major format version: not damaged, unreadable by this version)" "$tmp/out" \
		|| fail "$name: rec-check verdict: $(cat "$tmp/out")"
	"$bin/rec-check" --json "$name" >"$tmp/out" 2>/dev/null
	python3 -c '
import json, sys
f = json.load(open(sys.argv[4]))["files"][0]
assert (f["chunks"], f["chunks_damaged"], f["chunks_unsupported"], f["events"]) == (6, 1, 1, int(sys.argv[1])), f
assert f["bytes_skipped"] == int(sys.argv[2]), f
assert [(p["chunk"], p["offset"], p["status"]) for p in f["problems"]] == [(2, int(sys.argv[3]), "unsupported format version")], f
' "$events" "$skip" "$bad" "$tmp/out" || fail "$name: rec-check --json"

	rc=0; "$bin/rec-summary" --json "$name" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "$name: rec-summary exit $rc"
	[ "$(cat "$tmp/err")" = "rec-summary: $msg" ] || fail "$name: rec-summary stderr: $(cat "$tmp/err")"
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["events"] == int(sys.argv[2]), d["events"]
assert (d["chunks"], d["chunks_damaged"], d["chunks_unsupported"]) == (5, 1, 1), d
assert d["versions"] == sys.argv[4].split() and d["unknown_sections"] == 1, d
assert len(d["runs"]) == 3 and d["restarts"] == 2, d["runs"]
assert [(p["chunk"], p["offset"], p["message"]) for p in d["problems"]] == [(2, int(sys.argv[3]), "unsupported format version 2.0")], d["problems"]
' "$tmp/out" "$events" "$bad" "$versions" || fail "$name: rec-summary --json"
	"$bin/rec-summary" "$name" >"$tmp/out" 2>/dev/null
	grep -q "^ Unsupported: *1 chunk of a newer major format version, stepped over$" "$tmp/out" \
		|| fail "$name: rec-summary text does not count the skipped chunk"

	rc=0; "$bin/rec-print" --json --unsorted "$name" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "$name: rec-print exit $rc"
	[ "$(cat "$tmp/err")" = "rec-print: $msg" ] || fail "$name: rec-print stderr: $(cat "$tmp/err")"
	n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["recording"]["events"]))' "$tmp/out")
	[ "$n" = "$events" ] || fail "$name: rec-print printed $n events, want $events"

	# rec-recover: the readable chunks, byte for byte: the file without the 2.0 chunk
	rc=0; "$bin/rec-recover" "$name" "$tmp/rec.rec" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "$name: rec-recover exit $rc"
	grep -qx "rec-recover: $msg" "$tmp/err" || fail "$name: rec-recover: $(cat "$tmp/err")"
	grep -q "kept 5 of 6 chunks ($events events" "$tmp/err" && grep -q "1 of the dropped chunks is of a newer major format version" "$tmp/err" \
		|| fail "$name: rec-recover totals: $(cat "$tmp/err")"
	{ head -c "$bad" "$name"; tail -c +$((bad + skip + 1)) "$name"; } | cmp -s - "$tmp/rec.rec" \
		|| fail "$name: rec-recover output is not the file without its 2.0 chunk"
	"$bin/rec-check" -q "$tmp/rec.rec" || fail "$name: the recovered file does not check"

	# rec-cat and rec-split go on after the 2.0 chunk and say what they left out
	rc=0; "$bin/rec-cat" "$name" >"$tmp/cat.rec" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "$name: rec-cat exit $rc"
	grep -qx "rec-cat: $msg" "$tmp/err" && grep -q "5 chunks of 3 runs written.*1 damaged chunk left out (1 of a newer major format version)" "$tmp/err" \
		|| fail "$name: rec-cat: $(cat "$tmp/err")"
	rm -f "$tmp"/piece-*
	rc=0; "$bin/rec-split" --by run -o "$tmp/piece" "$name" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "$name: rec-split exit $rc"
	[ "$(wc -l <"$tmp/out")" = 3 ] || fail "$name: rec-split pieces: $(cat "$tmp/out")"
	grep -qx "rec-split: $msg" "$tmp/err" && grep -q "1 damaged chunk left out (1 of a newer major format version" "$tmp/err" \
		|| fail "$name: rec-split: $(cat "$tmp/err")"
	"$bin/rec-check" -q "$tmp"/piece-*.rec || fail "$name: split pieces do not check"

	# rec-scrub: reads past it too, reports it, exit 1
	rc=0; "$bin/rec-scrub" -q --blank '*.message' "$name" "$tmp/scrub.rec" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "$name: rec-scrub exit $rc"
	grep -q "offset $bad: unsupported format version 2.0" "$tmp/err" || fail "$name: rec-scrub: $(cat "$tmp/err")"
	sn=$("$bin/rec-summary" --json "$tmp/scrub.rec" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
	[ "$sn" = "$events" ] || fail "$name: rec-scrub kept $sn events, want $events"
	cd - >/dev/null || true
}

check "$root/testdata/archive/mixed-versions.rec" 1033 52 1517 "1.0 1.1"
now_bad=$(( $(stat -c %s "$root/testdata/valid/tiny.rec") + $(stat -c %s "$root/testdata/valid/newer-minor.rec") ))
now_events=0
for f in tiny newer-minor zstd-1.1; do
	n=$("$bin/rec-summary" --json "$root/testdata/valid/$f.rec" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
	now_events=$((now_events + n))
done
cp "$tmp/now.rec" "$tmp/now-mixed.rec"
check "$tmp/now-mixed.rec" "$now_bad" "$now_events" "$((next - off))" "1.0 1.1 1.4"

# Format 1.3 (testdata/valid/split-1.3.rec: two chunks with split EVENTS,
# one in one stream): checked, copied byte for byte by rec-cat, rec-recover
# and rec-split, re-encoded by rec-scrub into split chunks again, the same
# events throughout; after it, a 1.2 chunk (zstd-1.1.rec) in the same file.
s13=$root/testdata/valid/split-1.3.rec
"$bin/rec-check" -q "$s13" || fail "split-1.3: rec-check"
"$bin/rec-cat" "$s13" >"$tmp/s13-cat.rec" 2>"$tmp/err" && cmp -s "$s13" "$tmp/s13-cat.rec" \
	|| fail "split-1.3: rec-cat: $(cat "$tmp/err")"
"$bin/rec-recover" "$s13" "$tmp/s13-rec.rec" 2>"$tmp/err" && cmp -s "$s13" "$tmp/s13-rec.rec" \
	|| fail "split-1.3: rec-recover: $(cat "$tmp/err")"
rm -f "$tmp"/s13-piece-*
"$bin/rec-split" --by run -o "$tmp/s13-piece" "$s13" >"$tmp/out" 2>"$tmp/err" &&
	cmp -s "$s13" "$tmp/s13-piece-0001.rec" || fail "split-1.3: rec-split: $(cat "$tmp/out" "$tmp/err")"
"$bin/rec-scrub" -q --blank '*.message' "$s13" "$tmp/s13-scrub.rec" 2>"$tmp/err" || fail "split-1.3: rec-scrub: $(cat "$tmp/err")"
for f in "$s13" "$tmp/s13-scrub.rec"; do
	"$bin/rec-summary" --json "$f" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["events"] == 559 and d["versions"] == ["1.3"] and d["chunks"] == 3 and d["chunks_damaged"] == 0, d
' || fail "split-1.3: rec-summary --json $(basename "$f")"
done
cat "$s13" "$root/testdata/valid/zstd-1.1.rec" >"$tmp/s13-mixed.rec"
"$bin/rec-check" -q "$tmp/s13-mixed.rec" || fail "split-1.3 + zstd-1.1: rec-check"
n=$("$bin/rec-print" --json "$tmp/s13-mixed.rec" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["recording"]["events"]))')
[ "$n" = $((559 + 46)) ] || fail "split-1.3 + zstd-1.1: rec-print printed $n events"

# Format 1.1 damage (testdata/invalid/*-1.1.rec, 3 chunks of 8 events, chunk 1
# hit).  front-1.1: a STATS byte, so Front_Checksum fails and every tool
# leaves chunk 1 out.  events-1.1: an EVENTS byte: rec-summary shows the
# checked statistics of all 3 chunks (exit 0, from a file or a pipe), while
# the tools that read events or copy chunks verify the whole payload and
# leave chunk 1 out.
inv=$root/testdata/invalid
for f in front-1.1 events-1.1; do
	coff=$(sed -n 's/^damage [a-z]* at offset //p' "$inv/$f.facts")
	for src in file pipe; do
		rc=0
		if [ "$src" = file ]; then "$bin/rec-summary" --json "$inv/$f.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
		else "$bin/rec-summary" --json - <"$inv/$f.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?; fi
		want_rc=1 want_ev=16
		[ "$f" = events-1.1 ] && want_rc=0 want_ev=24
		[ "$rc" = "$want_rc" ] || fail "$f ($src): rec-summary exit $rc, want $want_rc"
		n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"])' "$tmp/out")
		[ "$n" = "$want_ev" ] || fail "$f ($src): rec-summary shows $n events, want $want_ev"
		if [ "$f" = front-1.1 ]; then
			grep -q "chunk 1 at offset $coff: front checksum mismatch" "$tmp/err" || fail "$f ($src): rec-summary: $(cat "$tmp/err")"
		else
			[ ! -s "$tmp/err" ] || fail "$f ($src): rec-summary stderr: $(cat "$tmp/err")"
		fi
		# events: the whole payload is checked, chunk 1's are refused
		rc=0
		if [ "$src" = file ]; then "$bin/rec-print" --json "$inv/$f.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
		else "$bin/rec-print" --json - <"$inv/$f.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?; fi
		[ "$rc" = 1 ] || fail "$f ($src): rec-print exit $rc"
		n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["recording"]["events"]))' "$tmp/out")
		[ "$n" = 16 ] || fail "$f ($src): rec-print printed $n events, want 16"
	done
	rc=0; "$bin/rec-cat" "$inv/$f.rec" >"$tmp/cat.rec" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "$f: rec-cat exit $rc"
	grep -q "1 damaged chunk left out" "$tmp/err" || fail "$f: rec-cat: $(cat "$tmp/err")"
	"$bin/rec-check" -q "$tmp/cat.rec" || fail "$f: rec-cat output does not check"
	rc=0; "$bin/rec-check" "$inv/$f.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "$f: rec-check exit $rc"
	grep -q "chunk 1 at offset $coff: .*checksum mismatch" "$tmp/err" || fail "$f: rec-check: $(cat "$tmp/err")"
	rc=0; "$bin/rec-recover" "$inv/$f.rec" "$tmp/rec.rec" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "$f: rec-recover exit $rc"
	grep -q "kept 2 of 3 chunks (16 events" "$tmp/err" || fail "$f: rec-recover: $(cat "$tmp/err")"
	"$bin/rec-check" -q "$tmp/rec.rec" || fail "$f: the recovered file does not check"
	rm -f "$tmp"/piece-*
	rc=0; "$bin/rec-split" --by run -o "$tmp/piece" "$inv/$f.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "$f: rec-split exit $rc"
	"$bin/rec-check" -q "$tmp"/piece-*.rec || fail "$f: split pieces do not check"
	rc=0; "$bin/rec-scrub" -q --blank '*.message' "$inv/$f.rec" "$tmp/scrub.rec" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "$f: rec-scrub exit $rc"
	sn=$("$bin/rec-summary" --json "$tmp/scrub.rec" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
	[ "$sn" = 16 ] || fail "$f: rec-scrub kept $sn events, want 16"
	"$bin/rec-check" -q "$tmp/scrub.rec" || fail "$f: the scrubbed file does not check"
done

[ "$fails" = 0 ] && echo "archive_versions: ok"
exit $((fails != 0))
