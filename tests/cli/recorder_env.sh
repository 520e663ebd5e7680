#!/usr/bin/env bash
# A recorder started from the environment (REC_OUTPUT, REC_OPTIONS: the
# library's constructor, libfmt/record/env.c) says once on stderr what went
# wrong, in one line "rec: REC_OUTPUT=PATH: REASON; WHAT HAPPENS" (or
# REC_OPTIONS=TEXT), and the program runs on with its own exit status: a
# missing directory, a directory, /proc/version (not writable: refused at
# open, or as root every write fails), /dev/full (the open works, every
# write fails with ENOSPC: said once, when the writes fail), an invalid
# REC_OPTIONS (the bad option and what it accepts), wall= without the
# preload library (recorded without it).  REC_OPTIONS quiet=1
# silences all of it.  The API stays silent: rec_recorder_flush() and
# rec_recorder_close() on /dev/full return the write error and print nothing.
# The program: tests/helpers/rec_test_recorder_env (N events on a declared
# type; "expect-off": exits 0 only if nothing records).
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
helper=$tests/rec_test_recorder_env
need_exe "$helper" "$bin/rec-summary"

# run NAME OUTPUT OPTIONS ARGS...: the helper with REC_OUTPUT and
# REC_OPTIONS (unset if OPTIONS is "-"); stderr in $tmp/NAME.err, exit
# status in $rc
run() {
	local name=$1 out=$2 opt=$3
	shift 3
	rc=0
	if [ "$opt" = - ]; then
		env -u REC_OPTIONS REC_OUTPUT="$out" "$helper" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
	else
		REC_OUTPUT="$out" REC_OPTIONS="$opt" "$helper" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
	fi
}
# said NAME LINE OUTPUT OPTIONS ARGS...: exit 0, stderr is exactly LINE;
# then the same with quiet=1 added to REC_OPTIONS: exit 0, stderr empty
said() {
	local name=$1 line=$2 out=$3 opt=$4
	shift 4
	run "$name" "$out" "$opt" "$@"
	[ "$rc" = 0 ] || fail "$name: exit $rc, want 0 ($(cat "$tmp/$name.err"))"
	[ "$(cat "$tmp/$name.err")" = "$line" ] ||
		fail "$name: stderr '$(cat "$tmp/$name.err")', want '$line'"
	local q=quiet=1
	[ "$opt" = - ] || q="$opt,quiet=1"
	run "$name-quiet" "$out" "$q" "$@"
	[ "$rc" = 0 ] || fail "$name quiet=1: exit $rc, want 0"
	[ ! -s "$tmp/$name-quiet.err" ] || fail "$name quiet=1: stderr '$(cat "$tmp/$name-quiet.err")'"
	# quiet=1 first, and quiet=on, also silence it
	if [ "$opt" != - ]; then
		run "$name-quiet2" "$out" "quiet=on,$opt" "$@"
		[ "$rc" = 0 ] && [ ! -s "$tmp/$name-quiet2.err" ] ||
			fail "$name quiet=on first: exit $rc, stderr '$(cat "$tmp/$name-quiet2.err")'"
	fi
}

said missing "rec: REC_OUTPUT=$tmp/no/such/dir/x.rec: No such file or directory; not recording" \
	"$tmp/no/such/dir/x.rec" - 10 expect-off
# %p: the path opened is named
run missing-pid "$tmp/no/x-%p.rec" - 10 expect-off
[ "$rc" = 0 ] && grep -Eqx "rec: REC_OUTPUT=$tmp/no/x-[0-9]+\.rec: No such file or directory; not recording" "$tmp/missing-pid.err" &&
	[ "$(wc -l <"$tmp/missing-pid.err")" = 1 ] || fail "missing with %p: exit $rc, stderr '$(cat "$tmp/missing-pid.err")'"
mkdir "$tmp/dir"
said directory "rec: REC_OUTPUT=$tmp/dir: Is a directory; not recording" "$tmp/dir" - 10 expect-off
if [ "$(id -u)" = 0 ]; then
	# root opens it; the write fails
	said proc "rec: REC_OUTPUT=/proc/version: Input/output error; events are lost until a write succeeds" \
		/proc/version - 10
else
	said proc "rec: REC_OUTPUT=/proc/version: Permission denied; not recording" /proc/version - 10 expect-off
fi
said devfull "rec: REC_OUTPUT=/dev/full: No space left on device; events are lost until a write succeeds" \
	/dev/full - 10
# many chunks, every write failing: still one line
said devfull-many "rec: REC_OUTPUT=/dev/full: No space left on device; events are lost until a write succeeds" \
	/dev/full chunk=16384,flush=1ms,full=wait 200000

# invalid REC_OPTIONS: the bad option and what it accepts; nothing recorded
good=$tmp/good.rec
said codec "rec: REC_OPTIONS=codec=gzip: bad option 'codec=gzip' (codec is none, zstd or lz4); not recording" \
	"$good" codec=gzip 10 expect-off
said threshold "rec: REC_OPTIONS=threshold=5: bad option 'threshold=5' (unknown option; a threshold is set per type: events=PATTERN:threshold=DUR); not recording" \
	"$good" threshold=5 10 expect-off
said unknown "rec: REC_OPTIONS=flush=1s,colour=red: bad option 'colour=red' (unknown option; the options are codec, level, layout, chunk, flush, memory, buffer, full, flight, crash, maxage, maxsize, signal, events, quiet, cpu, alloc, io, duration, forks, wall, symbolize); not recording" \
	"$good" flush=1s,colour=red 10 expect-off
said flush "rec: REC_OPTIONS=flush=0: bad option 'flush=0' (flush is a duration from 1ms to below 1h, like 500ms or 2s); not recording" \
	"$good" flush=0 10 expect-off
said events "rec: REC_OPTIONS=events=app.*:threshold=1d: bad events list 'app.*:threshold=1d' (events is PATTERN[:threshold=DUR][:stack=on|off][:enabled=on|off][:throttle=N/UNIT] entries separated by ';'); not recording" \
	"$good" 'events=app.*:threshold=1d' 10 expect-off
said throttle "rec: REC_OPTIONS=events=app.*:throttle=10/x: bad events list 'app.*:throttle=10/x' (events is PATTERN[:threshold=DUR][:stack=on|off][:enabled=on|off][:throttle=N/UNIT] entries separated by ';'); not recording" \
	"$good" 'events=app.*:throttle=10/x' 10 expect-off
said noeq "rec: REC_OPTIONS=level: bad option 'level' (an option is key=value); not recording" \
	"$good" level 10 expect-off
[ ! -e "$good" ] || fail "an invalid REC_OPTIONS created $good"
said quiet-bad "rec: REC_OPTIONS=quiet=yes: bad option 'quiet=yes' (quiet is on, off, 1 or 0); not recording" \
	"$good" quiet=yes 10 expect-off
# wall= in a program linked with librec, not under the preload library: said,
# and the recording goes on without wall samples
said wall "rec: REC_OPTIONS=wall=100: wall= needs the preload library (rec-record --wall HZ); recording without wall-clock samples" \
	"$tmp/wall.rec" wall=100 10
[ -s "$tmp/wall.rec" ] || fail "wall=100 without the preload: no recording"

# valid settings say nothing and record; quiet=1 is a valid option
for opt in - quiet=1 quiet=0 "events=app.*:threshold=1min,flush=2"; do
	rm -f "$good"
	run ok "$good" "$opt" 25
	[ "$rc" = 0 ] && [ ! -s "$tmp/ok.err" ] || fail "REC_OPTIONS=$opt: exit $rc, stderr '$(cat "$tmp/ok.err")'"
	"$bin/rec-summary" --json --no-counters "$good" >"$tmp/ok.json" 2>&1 || fail "REC_OPTIONS=$opt: rec-summary: $(cat "$tmp/ok.json")"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); t={x["name"]:x["count"] for x in d["types"]}; sys.exit(t.get("app.HelperEvent")!=25)' "$tmp/ok.json" ||
		fail "REC_OPTIONS=$opt: not 25 app.HelperEvent: $(cat "$tmp/ok.json")"
done

# the API: flush and close return the write error, and nothing is printed
rc=0
env -u REC_OUTPUT -u REC_OPTIONS "$helper" 10 flush-close /dev/full >"$tmp/api.out" 2>"$tmp/api.err" || rc=$?
[ "$rc" = 0 ] || fail "API on /dev/full: exit $rc: $(cat "$tmp/api.out")"
[ "$(cat "$tmp/api.out")" = "flush=input/output error close=input/output error" ] ||
	fail "API on /dev/full: $(cat "$tmp/api.out")"
[ ! -s "$tmp/api.err" ] || fail "API on /dev/full printed: $(cat "$tmp/api.err")"

# duration=1s (env.c's timer; long enough for valgrind's start) on 200
# events 10 ms apart: the recording closes cleanly with the events emitted
# before then (3 to 199 of them, as many as the program saw accepted) and
# the program goes on to exit 0.
run paced "$tmp/paced.rec" "duration=1s" 200 paced
[ "$rc" = 0 ] || fail "paced: exit $rc: $(cat "$tmp/paced.err")"
got=$(sed -n 's/^recorded=//p' "$tmp/paced.out")
"$bin/rec-summary" "$tmp/paced.rec" >"$tmp/paced.txt" && grep -q "clean close" "$tmp/paced.txt" ||
	fail "paced: not closed cleanly: $(cat "$tmp/paced.txt")"
n=$(sed -n 's/^ app.HelperEvent *\([0-9]*\) .*/\1/p' "$tmp/paced.txt")
[ -n "$got" ] && [ "$got" -ge 3 ] && [ "$got" -lt 200 ] && [ "$n" = "$got" ] ||
	fail "paced duration=1s: $n events in the file, the program saw $got of 200 accepted"
cli_done recorder_env
