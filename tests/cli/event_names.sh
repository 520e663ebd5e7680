#!/usr/bin/env bash
# Every tool that takes event type names treats a name no type of the input
# has as rec-print does (one helper, tools/common/typesel.c): a usage error,
# exit 2, nothing on stdout, "TOOL: no event type matches 'NAME'; the input
# has: A, B, ..." (the same list in every tool) and "try 'TOOL --help'" on
# stderr; for a regular file before any output (rec-scrub: OUT is not
# created), for standard input once it is read (rec-print has printed what
# matched then; rec-scrub discards OUT).
# The tools: rec-print --events/--categories, rec-flame --event, rec-scrub
# --include-events/--exclude-events.  A type the metadata declares without
# events is not an error; neither is a name against an input with no type at
# all (an empty file).  Before, rec-flame --event rec.Bogus and rec-scrub
# exited 0 with nothing selected.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, root, tmp, fail, need_exe, cli_done
need_exe "$bin/rec-print" "$bin/rec-flame" "$bin/rec-scrub"
export TZ=UTC
z=$root/testdata/valid/zstd.rec
types="app.Log, app.Unused, rec.CpuSample, rec.HeapUsage, rec.LockWait, test.AllTypes"
cats="app/Log, app/Misc, rec/Locks, rec/Memory, rec/Profiling, test/Types"

# refused WHAT PATTERN LIST TOOL ARGS...: exit 2, the message, nothing on stdout
refused() {
	local what=$1 pat=$2 list=$3 tool=$4 rc=0
	shift 4
	"$bin/$tool" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 2 ] || fail "$tool $*: exit $rc, want 2 ($(head -1 "$tmp/err"))"
	[ -n "${allow_out:-}" ] || [ ! -s "$tmp/out" ] || fail "$tool $*: wrote to stdout"
	local want="$tool: no event $what matches '$pat'; the input has: $list"
	[ "$(head -n 1 "$tmp/err")" = "$want" ] || fail "$tool $*: '$(head -n 1 "$tmp/err")', want '$want'"
	[ "$(tail -n 1 "$tmp/err")" = "try '$tool --help'" ] || fail "$tool $*: no try line"
	[ "$(wc -l <"$tmp/err")" = 2 ] || fail "$tool $*: stderr has more: $(cat "$tmp/err")"
}

for src in file stdin; do
	if [ $src = file ]; then in=$z; else in=-; fi
	exec 3<"$z"
	refused type rec.Bogus "$types" rec-print --events rec.Bogus "$in" <&3
	exec 3<"$z"
	# standard input: rec-print prints what matched, then the error
	allow_out=$([ $src = stdin ] && echo 1)
	refused type 'nope*' "$types" rec-print --events 'rec.Lock*,nope*' "$in" <&3
	allow_out=
	exec 3<"$z"
	refused category bogus "$cats" rec-print --categories bogus "$in" <&3
	exec 3<"$z"
	refused type rec.Bogus "$types" rec-flame --event rec.Bogus "$in" <&3
	exec 3<"$z"
	refused type rec.LockWai "$types" rec-flame --event rec.LockWai -o "$tmp/f.html" "$in" <&3
	[ ! -e "$tmp/f.html" ] || fail "rec-flame ($src): wrote -o FILE for a bad --event"
	exec 3<"$z"
	refused type rec.Bogus "$types" rec-scrub --include-events rec.Bogus "$in" "$tmp/s.rec" <&3
	[ ! -e "$tmp/s.rec" ] || fail "rec-scrub --include-events ($src): OUT created"
	exec 3<"$z"
	refused type 'app.Lo?x' "$types" rec-scrub --exclude-events 'rec.Heap*,app.Lo?x' "$in" "$tmp/s.rec" <&3
	[ ! -e "$tmp/s.rec" ] || fail "rec-scrub --exclude-events ($src): OUT created"
	exec 3<&-
done
# rec-flame --diff: a type of either input is enough; of neither, refused
"$bin/rec-scrub" -q --exclude-events rec.LockWait "$z" "$tmp/nolock.rec" || fail "scrub rec.LockWait out"
"$bin/rec-flame" --event rec.LockWait --diff "$tmp/nolock.rec" "$z" >/dev/null 2>"$tmp/err" ||
	fail "rec-flame --diff, the type in AFTER only: exit $?: $(cat "$tmp/err")"
"$bin/rec-flame" --event rec.LockWait --diff "$z" "$tmp/nolock.rec" >/dev/null 2>"$tmp/err" ||
	fail "rec-flame --diff, the type in BEFORE only: exit $?: $(cat "$tmp/err")"
refused type rec.LockWait "app.Log, app.Unused, rec.CpuSample, rec.HeapUsage, test.AllTypes" \
	rec-flame --event rec.LockWait --diff "$tmp/nolock.rec" "$tmp/nolock.rec"

# declared without events: accepted
rc=0; "$bin/rec-print" --events app.Unused "$z" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] && [ ! -s "$tmp/out" ] || fail "rec-print --events app.Unused: exit $rc"
rc=0; "$bin/rec-flame" --event app.Unused "$z" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] && [ ! -s "$tmp/out" ] && grep -q "no app.Unused events" "$tmp/err" ||
	fail "rec-flame --event app.Unused: exit $rc, $(cat "$tmp/err")"
rc=0; "$bin/rec-scrub" -q --include-events 'app.Unused,rec.LockWait' "$z" "$tmp/u.rec" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] && [ -s "$tmp/u.rec" ] || fail "rec-scrub --include-events app.Unused: exit $rc, $(cat "$tmp/err")"
# names that match are accepted by all (globs too)
"$bin/rec-print" --events 'rec.Lock*' "$z" >/dev/null || fail "rec-print --events rec.Lock*"
"$bin/rec-flame" --event rec.LockWait "$z" >/dev/null || fail "rec-flame --event rec.LockWait"
"$bin/rec-scrub" -q --exclude-events 'rec.Heap*' "$z" "$tmp/x.rec" || fail "rec-scrub --exclude-events rec.Heap*"

# an input without any type: nothing to match a name against
: >"$tmp/empty.rec"
for cmd in "rec-print --events X" "rec-flame --event X" "rec-scrub -q --include-events X"; do
	rc=0
	# shellcheck disable=SC2086
	if [ "${cmd%% *}" = rec-scrub ]; then
		"$bin/"$cmd "$tmp/empty.rec" "$tmp/e.rec" >/dev/null 2>"$tmp/err" || rc=$?
	else
		"$bin/"$cmd "$tmp/empty.rec" >/dev/null 2>"$tmp/err" || rc=$?
	fi
	[ "$rc" = 0 ] || fail "$cmd on an empty file: exit $rc: $(cat "$tmp/err")"
done

cli_done event_names
