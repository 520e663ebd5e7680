#!/usr/bin/env bash
# rec-summary --verify says what it verified when it found nothing wrong:
# one last line " Verified: N chunks (header and payload checksums), M events
# decoded against their types and pools, statistics match the events", N and
# M the summary's own chunk and event counts (from --json).  No such line
# without --verify, with --json (one JSON object, nothing on stderr), or when
# a chunk is damaged (the problems are listed on stderr, exit 1).
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, root, tmp, fail, need_exe, cli_done
need_exe "$bin/rec-summary"
export TZ=UTC

for f in "$root"/testdata/valid/*.rec; do
	name=$(basename "$f")
	rc=0
	"$bin/rec-summary" --verify "$f" >"$tmp/v.txt" 2>"$tmp/v.err" || rc=$?
	[ "$rc" = 0 ] || { fail "$name: --verify exit $rc: $(cat "$tmp/v.err")"; continue; }
	[ ! -s "$tmp/v.err" ] || fail "$name: --verify stderr: $(cat "$tmp/v.err")"
	"$bin/rec-summary" --json "$f" >"$tmp/s.json" || fail "$name: --json"
	read -r chunks events < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["chunks"], d["events"])' "$tmp/s.json")
	cu=chunks eu=events
	[ "$chunks" = 1 ] && cu=chunk
	[ "$events" = 1 ] && eu=event
	want=" Verified: $chunks $cu (header and payload checksums), $events $eu decoded against their types and pools, statistics match the events"
	[ "$(tail -n 1 "$tmp/v.txt")" = "$want" ] || fail "$name: last line '$(tail -n 1 "$tmp/v.txt")', want '$want'"
	[ "$(grep -c 'Verified:' "$tmp/v.txt")" = 1 ] || fail "$name: not one Verified line"
	# the rest is the summary without --verify
	"$bin/rec-summary" "$f" >"$tmp/plain.txt" || fail "$name: plain"
	head -n -2 "$tmp/v.txt" | cmp -s - "$tmp/plain.txt" || fail "$name: --verify changed the summary above its last line"
	! grep -q 'Verified' "$tmp/plain.txt" || fail "$name: a Verified line without --verify"
	rc=0
	"$bin/rec-summary" --verify --json "$f" >"$tmp/vj.json" 2>"$tmp/vj.err" || rc=$?
	[ "$rc" = 0 ] && [ ! -s "$tmp/vj.err" ] || fail "$name: --verify --json: exit $rc, stderr $(cat "$tmp/vj.err")"
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/vj.json" || fail "$name: --verify --json is not one JSON document"
done

# two files: the chunks and events of both
a=$root/testdata/valid/tiny.rec b=$root/testdata/valid/zstd.rec
"$bin/rec-summary" --verify "$a" "$b" >"$tmp/two.txt" || fail "two files: exit $?"
"$bin/rec-summary" --json "$a" "$b" >"$tmp/two.json"
read -r chunks events < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["chunks"], d["events"])' "$tmp/two.json")
grep -qx " Verified: $chunks chunks (header and payload checksums), $events events decoded against their types and pools, statistics match the events" "$tmp/two.txt" ||
	fail "two files: $(tail -n 1 "$tmp/two.txt")"

# a damaged chunk: no Verified line, the problem on stderr, exit 1
cp "$root/testdata/valid/zstd.rec" "$tmp/bad.rec"
size=$(stat -c %s "$tmp/bad.rec")
printf '\xa5' | dd of="$tmp/bad.rec" bs=1 seek=$((size / 2)) conv=notrunc status=none
rc=0
"$bin/rec-summary" --verify "$tmp/bad.rec" >"$tmp/bad.txt" 2>"$tmp/bad.err" || rc=$?
[ "$rc" = 1 ] || fail "damaged: exit $rc, want 1"
! grep -q 'Verified' "$tmp/bad.txt" || fail "damaged: says Verified"
[ -s "$tmp/bad.err" ] || fail "damaged: nothing on stderr"
# a file that cannot be opened next to a good one: no Verified line
rc=0
"$bin/rec-summary" --verify "$a" "$tmp/missing.rec" >"$tmp/miss.txt" 2>/dev/null || rc=$?
[ "$rc" = 1 ] && ! grep -q 'Verified' "$tmp/miss.txt" || fail "missing file: exit $rc, $(tail -n 1 "$tmp/miss.txt")"

cli_done summary_verify
