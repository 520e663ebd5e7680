#!/usr/bin/env bash
# rec-print --events / --categories: exact names, globs, comma lists,
# repeated options; a name that matches nothing is a usage error (exit 2)
# that lists the names the input has, before anything is printed for a
# regular file and after the events for standard input.
set -uo pipefail
if [ ! -d "${REC_BIN:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/bin" ]; then REC_BIN=$BUILD/bin; fi
bin=${REC_BIN:?}
d=${REC_ROOT:?}/testdata/valid
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TZ=UTC
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# count_blocks ARGS... : number of event blocks rec-print prints
count_blocks() { "$bin/rec-print" "$@" 2>/dev/null | grep -c ' {$'; }
# expected counts come from the generator's facts, not from the tools
fact() { awk -v t="$2" '$1 == "type" && $2 == t { print $3 }' "$d/$1.facts"; }

lw=$(fact zstd rec.LockWait); hu=$(fact zstd rec.HeapUsage); cs=$(fact zstd rec.CpuSample)
al=$(fact zstd test.AllTypes); lg=$(fact zstd app.Log)
[ "$(count_blocks --events rec.LockWait "$d/zstd.rec")" = "$lw" ] || fail "exact name"
[ "$(count_blocks --events rec.LockWait,rec.HeapUsage "$d/zstd.rec")" = "$((lw + hu))" ] || fail "comma list"
[ "$(count_blocks --events rec.LockWait --events app.Log "$d/zstd.rec")" = "$((lw + lg))" ] || fail "repeated --events"
[ "$(count_blocks --events 'rec.*' "$d/zstd.rec")" = "$((lw + hu + cs))" ] || fail "glob rec.*"
[ "$(count_blocks --events '*.Lock?ait' "$d/zstd.rec")" = "$lw" ] || fail "glob ?"
[ "$(count_blocks --categories rec "$d/zstd.rec")" = "$((lw + hu + cs))" ] || fail "category prefix rec"
[ "$(count_blocks --categories rec/Locks "$d/zstd.rec")" = "$lw" ] || fail "category rec/Locks"
[ "$(count_blocks --categories 'test/*' "$d/zstd.rec")" = "$al" ] || fail "category glob test/*"
[ "$(count_blocks --categories app --events rec.LockWait "$d/zstd.rec")" = "$((lg + lw))" ] || fail "--events or --categories"
[ "$(count_blocks --categories rec/ "$d/zstd.rec")" = "$((lw + hu + cs))" ] || fail "category prefix with a trailing /"
rc=0; "$bin/rec-print" --events , "$d/zstd.rec" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "^rec-print: --events: no name in ','" "$tmp/err" || fail "--events ',': exit $rc"
# a prefix must end at a '/': "re" is not a prefix category of "rec/Locks"
rc=0; "$bin/rec-print" --categories re "$d/zstd.rec" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "--categories re: exit $rc, want 2"

# unknown name: exit 2, nothing on stdout, the names listed
for f in zstd.rec "zstd.rec tiny.rec"; do
	rc=0
	(cd "$d" && "$bin/rec-print" --events rec.LockWait,rec.Nope $f) >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 2 ] || fail "unknown name ($f): exit $rc"
	[ -s "$tmp/out" ] && fail "unknown name ($f): printed events before failing"
	grep -q "^rec-print: no event type matches 'rec.Nope'; the input has: app.Log, app.Unused, rec.CpuSample, rec.HeapUsage, rec.LockWait, test.AllTypes$" "$tmp/err" ||
		{ fail "unknown name ($f): message"; cat "$tmp/err"; }
	grep -q "^try 'rec-print --help'$" "$tmp/err" || fail "unknown name: no try line"
done
rc=0
"$bin/rec-print" --categories nope/cat "$d/tiny.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q "no event category matches 'nope/cat'; the input has: rec/Locks, rec/Memory$" "$tmp/err" ||
	{ fail "unknown category: exit $rc"; cat "$tmp/err"; }
rc=0
"$bin/rec-print" --events 'zzz*' "$d/tiny.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] || fail "glob matching nothing: exit $rc"

# standard input: validated at the end (after printing the matching events)
rc=0
"$bin/rec-print" --events rec.LockWait,rec.Nope - <"$d/tiny.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] || fail "stdin unknown name: exit $rc"
[ "$(grep -c '^rec.LockWait {$' "$tmp/out")" = "$(fact tiny rec.LockWait)" ] || fail "stdin: matching events not printed"
grep -q "no event type matches 'rec.Nope'; the input has: rec.HeapUsage, rec.LockWait$" "$tmp/err" || fail "stdin: message"

[ "$fails" -eq 0 ] && echo "names: ok"
exit $((fails > 0))
