#!/usr/bin/env bash
# "-" reads standard input (a pipe: no seeking): both tools give the same
# output as on the file (the file name in messages aside), for valid and
# damaged recordings, and for several files given together.
set -uo pipefail
if [ ! -d "${REC_BIN:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/bin" ]; then REC_BIN=$BUILD/bin; fi
bin=${REC_BIN:?}
root=${REC_ROOT:?}
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TZ=UTC
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

for f in "$root"/testdata/valid/*.rec "$root"/testdata/invalid/*.rec; do
	n=$(basename "$f")
	for args in "rec-print" "rec-print --json" "rec-print --unsorted" "rec-summary --json"; do
		set -- $args
		tool=$1; shift
		rc1=0; rc2=0
		"$bin/$tool" "$@" "$f" >"$tmp/file.out" 2>"$tmp/file.err" || rc1=$?
		cat "$f" | "$bin/$tool" "$@" - >"$tmp/pipe.out" 2>"$tmp/pipe.err" || rc2=$?
		[ "$rc1" = "$rc2" ] || fail "$n: $args: exit $rc1 on the file, $rc2 on a pipe"
		if [ "$tool" = rec-summary ]; then
			# the summary names its input and the pipe has no known size
			python3 - "$tmp/file.out" "$tmp/pipe.out" <<'PY' || fail "$n: $args: pipe summary differs"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for k in ("events", "chunks", "dropped", "restarts", "types"):
    if a[k] != b[k]:
        sys.exit(f"{k}: {a[k]} != {b[k]}")
if [r["ended"] for r in a["runs"]] != [r["ended"] for r in b["runs"]]:
    sys.exit("runs differ")
if b["files"][0]["path"] != "-":
    sys.exit("stdin not named '-'")
PY
		else
			cmp -s "$tmp/file.out" "$tmp/pipe.out" || fail "$n: $args: pipe output differs"
			sed "s|$f|-|" "$tmp/file.err" | cmp -s - "$tmp/pipe.err" || {
				fail "$n: $args: pipe messages differ"; diff "$tmp/file.err" "$tmp/pipe.err"; }
		fi
	done
done

# several files, one of them stdin: events of all, in order of the arguments
v=$root/testdata/valid
a=$("$bin/rec-print" "$v/tiny.rec" "$v/lz4.rec" | grep -c ' {$')
b=$("$bin/rec-print" "$v/tiny.rec" - <"$v/lz4.rec" | grep -c ' {$')
t=$(( $(awk '$1 == "events" { print $2 }' "$v/tiny.facts") + $(awk '$1 == "events" { print $2 }' "$v/lz4.facts") ))
[ "$a" = "$t" ] && [ "$b" = "$t" ] || fail "two files: $a / $b events, want $t"
# two files of two runs: the summary counts both runs as restarts
r=$("$bin/rec-summary" --json "$v/tiny.rec" - <"$v/zstd.rec" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["runs"]), d["restarts"], len(d["files"]))')
[ "$r" = "2 1 2" ] || fail "summary of two files: runs/restarts/files = $r"

[ "$fails" -eq 0 ] && echo "stdin: ok"
exit $((fails > 0))
