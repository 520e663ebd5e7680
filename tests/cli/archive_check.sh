#!/usr/bin/env bash
# rec-check: every valid testdata file is OK with its chunk and event counts
# (from the generator's facts); every invalid one is DAMAGED with one problem
# line naming the chunk and offset of the damage, exit 1; --json parses and
# agrees; several files, standard input, usage errors.
set -uo pipefail
if [ ! -d "${REC_BIN:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/bin" ]; then REC_BIN=$BUILD/bin; fi
bin=${REC_BIN:?}
root=${REC_ROOT:?}
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

for facts in "$root"/testdata/valid/*.facts; do
	n=$(basename "$facts" .facts)
	f=$root/testdata/valid/$n.rec
	chunks=$(grep -c '^chunk ' "$facts")
	events=$(awk '$1 == "chunk" { s += $5 } END { print s + 0 }' "$facts")
	rc=0; "$bin/rec-check" "$f" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 0 ] || fail "$n: exit $rc"
	[ ! -s "$tmp/err" ] || fail "$n: stderr: $(cat "$tmp/err")"
	s=s; [ "$chunks" = 1 ] && s=
	grep -qx "$f: OK, $chunks chunk$s, $events events" "$tmp/out" || fail "$n: verdict '$(cat "$tmp/out")', want $chunks chunks, $events events"
done

for facts in "$root"/testdata/invalid/*.facts; do
	n=$(basename "$facts" .facts)
	f=$root/testdata/invalid/$n.rec
	off=$(awk '$1 == "damage" { print $5 }' "$facts")
	kind=$(awk '$1 == "damage" { print $2 }' "$facts")
	rc=0; "$bin/rec-check" "$f" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "$n: exit $rc, want 1"
	grep -q "^$f: DAMAGED, " "$tmp/out" || fail "$n: verdict '$(cat "$tmp/out")'"
	[ "$(wc -l <"$tmp/err")" -ge 1 ] || fail "$n: no problem line"
	grep -q '^rec-check: ' "$tmp/err" || fail "$n: problem lines not prefixed: $(cat "$tmp/err")"
	case $kind in
	magic) grep -q "^rec-check: $f: at offset $off: " "$tmp/err" || fail "$n: $(cat "$tmp/err")" ;;
	stats) grep -q "^rec-check: $f: chunk 0 at offset $off: statistics do not match" "$tmp/err" || fail "$n: $(cat "$tmp/err")" ;;
	*) grep -q "^rec-check: $f: chunk [0-9]* at offset $off: " "$tmp/err" || fail "$n: $(cat "$tmp/err") (want offset $off)" ;;
	esac
	grep -q " bytes skipped\( (1 of a newer major format version: not damaged, unreadable by this version)\)\?$" "$tmp/out" || fail "$n: no bytes skipped in verdict"
done

# exact numbers on two files
rc=0; "$bin/rec-check" "$root/testdata/invalid/corrupt-middle.rec" >"$tmp/out" 2>/dev/null || rc=$?
grep -qx ".*corrupt-middle.rec: DAMAGED, 1 of 3 chunks, 1517 bytes skipped" "$tmp/out" || fail "corrupt-middle: $(cat "$tmp/out")"
rc=0; "$bin/rec-check" "$root/testdata/invalid/truncated-tail.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
grep -qx ".*truncated-tail.rec: DAMAGED, 1 of 3 chunks, 646 bytes skipped" "$tmp/out" || fail "truncated-tail: $(cat "$tmp/out")"
grep -q "chunk 2 at offset 2694: truncated" "$tmp/err" || fail "truncated-tail: $(cat "$tmp/err")"

# several files: one verdict each, exit 1 if any is damaged; order kept
rc=0; "$bin/rec-check" "$root/testdata/valid/zstd.rec" "$root/testdata/invalid/corrupt-middle.rec" "$root/testdata/valid/lz4.rec" >"$tmp/out" 2>/dev/null || rc=$?
[ "$rc" = 1 ] || fail "mixed files: exit $rc"
[ "$(wc -l <"$tmp/out")" = 3 ] || fail "mixed files: $(cat "$tmp/out")"
sed -n 2p "$tmp/out" | grep -q DAMAGED || fail "mixed files order: $(cat "$tmp/out")"
rc=0; "$bin/rec-check" -q "$root/testdata/valid/zstd.rec" "$root/testdata/valid/lz4.rec" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 0 ] && [ ! -s "$tmp/out" ] || fail "-q on good files: exit $rc, '$(cat "$tmp/out")'"

# standard input
rc=0; "$bin/rec-check" - <"$root/testdata/invalid/corrupt-middle.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -qx -- "-: DAMAGED, 1 of 3 chunks, 1517 bytes skipped" "$tmp/out" || fail "stdin: exit $rc, $(cat "$tmp/out")"
rc=0; cat "$root/testdata/valid/zstd.rec" | "$bin/rec-check" - >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 0 ] && grep -qx -- "-: OK, 3 chunks, 46 events" "$tmp/out" || fail "stdin pipe: exit $rc, $(cat "$tmp/out")"

# a missing file: message, exit 1, the other files still checked
rc=0; "$bin/rec-check" "$tmp/nope.rec" "$root/testdata/valid/tiny.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "missing file: exit $rc"
grep -q "rec-check: $tmp/nope.rec: No such file or directory" "$tmp/err" || fail "missing file: $(cat "$tmp/err")"
grep -q "tiny.rec: OK, 1 chunk, 4 events" "$tmp/out" || fail "missing file: $(cat "$tmp/out")"

# --json parses, agrees with the text verdicts
rc=0; "$bin/rec-check" --json "$root/testdata/valid/zstd.rec" "$root/testdata/invalid/corrupt-middle.rec" \
	"$root/testdata/invalid/bad-magic.rec" >"$tmp/j" 2>/dev/null || rc=$?
[ "$rc" = 1 ] || fail "--json: exit $rc"
python3 - "$tmp/j" <<'PY' || fail "--json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == 1 and d["ok"] is False, d
z, c, b = d["files"]
assert z["ok"] and z["chunks"] == 3 and z["events"] == 46 and z["bytes_skipped"] == 0 and z["problems"] == [], z
assert not c["ok"] and c["chunks"] == 3 and c["chunks_damaged"] == 1 and c["bytes_skipped"] == 1517, c
p = c["problems"][0]
assert p["chunk"] == 1 and p["offset"] == 1177 and "checksum" in p["message"] and p["status"], p
assert b["problems"][0]["chunk"] is None and b["problems"][0]["offset"] == 0 and b["bytes_skipped"] == 1177, b
assert c["intact_bytes"] + c["bytes_skipped"] == c["size"], c
PY
rc=0; "$bin/rec-check" --json "$root/testdata/valid/tiny.rec" >"$tmp/j" 2>&1 || rc=$?
[ "$rc" = 0 ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ok"] and d["files"][0]["events"] == 4' "$tmp/j" || fail "--json tiny: exit $rc"

# usage
rc=0; "$bin/rec-check" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "try 'rec-check --help'" "$tmp/err" || fail "no file: exit $rc"
rc=0; "$bin/rec-check" --bogus x >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "--bogus: exit $rc"
rc=0; "$bin/rec-check" - - </dev/null >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "stdin twice: exit $rc"
"$bin/rec-check" --help | grep -q '^Usage: rec-check' || fail "--help"

[ "$fails" = 0 ] && echo "archive_check: ok"
exit $((fails != 0))
