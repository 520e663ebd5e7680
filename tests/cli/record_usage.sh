#!/usr/bin/env bash
# rec-record refuses, before the program starts, what cannot work: exit 2 and
# a message naming the problem (the program, which would leave a marker file,
# must not have run):
#   - bad options (--symbolize among them; through the recorder's own
#     parser, which also knows the preload library's keys cpu=, wall=,
#     alloc=, io=, duration=, forks= and refuses those it does not
#     implement; durations through the one grammar first), options that
#     need --flight, no program;
#   - a program not on PATH, not executable, a directory;
#   - a static executable (built here with -static when libc.a is there;
#     skipped with the reason otherwise), a set-uid and a set-gid copy of a
#     program (the loader ignores LD_PRELOAD for them);
#   - the preload library missing (rec-record copied with librec.so into a
#     directory without it: every place it looked is named); and found
#     in DIR/../lib/ and DIR/../lib/rec/ (a stand-in library).
# --help and --version as every tool has them.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
need_exe "$bin/rec-record" "$bin/rec-summary"

marker=$tmp/ran
# expect_refused "stderr regex" ARGS...: exit 2, the message, no marker.
expect_refused() {
	local re=$1 rc=0
	shift
	rm -f "$marker"
	"$bin/rec-record" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" -eq 2 ] || fail "rec-record $*: exit $rc, want 2"
	[ -s "$tmp/out" ] && fail "rec-record $*: wrote to stdout"
	grep -Eq "^rec-record: $re" "$tmp/err" ||
		{ fail "rec-record $*: stderr does not match 'rec-record: $re':"; cat "$tmp/err"; }
	[ -e "$marker" ] && fail "rec-record $*: the program ran"
	return 0
}
# expect_usage: expect_refused, and the last line is "try 'rec-record --help'".
expect_usage() {
	expect_refused "$@"
	[ "$(tail -n 1 "$tmp/err")" = "try 'rec-record --help'" ] ||
		fail "rec-record ${*:2}: last stderr line is not \"try 'rec-record --help'\""
}

touch_it=(touch "$marker")
expect_usage "unknown option '--bogus'" --bogus -- "${touch_it[@]}"
expect_usage "no program to record" -o "$tmp/x.rec"
expect_usage "no program to record" --
expect_usage "--cpu: bad option 'cpu=abc' \(cpu is a CPU sampling rate in Hz from 0 \(off\) to 10000\)" --cpu abc -- "${touch_it[@]}"
expect_usage "--cpu: bad option 'cpu=10001'" --cpu 10001 -- "${touch_it[@]}"
expect_usage "--wall: bad option 'wall=x'" --wall x -- "${touch_it[@]}"
expect_usage "--io-threshold: '5 ms' is not a duration" --io-threshold '5 ms' -- "${touch_it[@]}"
expect_usage "--duration: '-1s' is not a duration" --duration -1s -- "${touch_it[@]}"
expect_usage "--duration: bad option 'duration=0' \(duration is how long to record, a duration above 0" --duration 0 -- "${touch_it[@]}"
expect_usage "--alloc-interval: bad option 'alloc=12Q'" --alloc-interval 12Q -- "${touch_it[@]}"
expect_usage "--max-age needs --flight" --max-age 10s -- "${touch_it[@]}"
expect_usage "--max-size needs --flight" --max-size 1MiB -- "${touch_it[@]}"
expect_usage "--max-age: '1parsec' is not a duration" --flight --max-age 1parsec -- "${touch_it[@]}"
expect_usage "--max-size: bad option 'maxsize=lots'" --flight --max-size lots -- "${touch_it[@]}"
expect_usage "--events: bad events list 'rec.LockWait:threshold=soon'" \
	--events 'rec.LockWait:threshold=soon' -- "${touch_it[@]}"
expect_usage "--events: bad events list 'rec.LockWait,rec.Alloc:colour=red'" \
	--events 'rec.LockWait,rec.Alloc:colour=red' -- "${touch_it[@]}"
expect_usage "--symbolize: bad option 'symbolize=bogus' \(symbolize is on " --symbolize bogus -- "${touch_it[@]}"
expect_usage "-o: an empty file name" -o '' -- "${touch_it[@]}"

# The program: found on PATH as execvp finds it, refused when it cannot run.
expect_refused "no-such-program-here: no such program on PATH" -- no-such-program-here
expect_refused "$tmp/nothing: no such file" -- "$tmp/nothing"
mkdir "$tmp/dir"
expect_refused "$tmp/dir: Is a directory" -- "$tmp/dir"
printf '#!/bin/sh\ntouch "$1"\n' >"$tmp/script"
expect_refused "$tmp/script: Permission denied" -- "$tmp/script" "$marker"

# A static executable: no dynamic loader, so no LD_PRELOAD.
if [ -e "$(cc -print-file-name=libc.a 2>/dev/null)" ] && command -v cc >/dev/null; then
	printf '#include <stdio.h>\nint main(int c, char **v) { if (c > 1) fclose(fopen(v[1], "w")); return 0; }\n' >"$tmp/st.c"
	cc -static -o "$tmp/static" "$tmp/st.c" || fail "cc -static failed"
	expect_refused "$tmp/static: a static executable \(no dynamic loader\): the preload library cannot be loaded into it" \
		-- "$tmp/static" "$marker"
	# the same program linked dynamically is not refused for that reason
	cc -o "$tmp/dynamic" "$tmp/st.c" || fail "cc failed"
	"$bin/rec-record" -q -o "$tmp/dynamic.rec" -- "$tmp/dynamic" "$marker" 2>"$tmp/err"
	grep -q "static executable" "$tmp/err" && fail "a dynamic executable was called static"
else
	echo "skip: the static executable case (no libc.a: apt-get install libc6-dev)"
fi

# set-uid and set-gid programs: secure-execution mode ignores LD_PRELOAD.
touch_bin=$(command -v touch)
cp "$touch_bin" "$tmp/suid-touch" && chmod u+s "$tmp/suid-touch"
expect_refused "$tmp/suid-touch: set-uid: the dynamic loader ignores LD_PRELOAD for it" -- "$tmp/suid-touch" "$marker"
cp "$touch_bin" "$tmp/sgid-touch" && chmod g+s "$tmp/sgid-touch"
expect_refused "$tmp/sgid-touch: set-gid: the dynamic loader ignores LD_PRELOAD for it" -- "$tmp/sgid-touch" "$marker"
# found on PATH too
rm -f "$marker"
rc=0
PATH="$tmp:$PATH" "$bin/rec-record" -- suid-touch "$marker" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "^rec-record: $tmp/suid-touch: set-uid" "$tmp/err" && [ ! -e "$marker" ] ||
	fail "a set-uid program found on PATH: exit $rc, $(cat "$tmp/err")"

# The preload library missing: rec-record and librec.so alone in a tree.
real=${BUILD:-build}
case "$real" in /*) ;; *) real=$root/$real ;; esac
mkdir -p "$tmp/tree/bin" "$tmp/tree/lib"
cp "$real/bin/rec-record" "$tmp/tree/bin/" && cp -L "$real"/lib/librec.so.[0-9] "$tmp/tree/lib/" ||
	fail "cannot copy rec-record and librec.so from $real"
rc=0
"$tmp/tree/bin/rec-record" -- "${touch_it[@]}" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] || fail "no preload library: exit $rc, want 2"
grep -q "^rec-record: the preload library librec-preload.so is missing: looked for $tmp/tree/lib/librec-preload.so and $tmp/tree/lib/rec/librec-preload.so" "$tmp/err" ||
	{ fail "no preload library: message"; cat "$tmp/err"; }
[ -e "$marker" ] && fail "no preload library: the program ran"

# Where it finds the library: DIR/../lib/ (a build tree) and DIR/../lib/rec/
# (make install).  A library written here stands in for it (this is about
# the lookup): its constructor notes that it was loaded, and the program
# sees it first in LD_PRELOAD.
printf '#include <stdio.h>\n#include <stdlib.h>\n__attribute__((constructor)) static void mark(void) { const char *p = getenv("MARK_FILE"); FILE *f = p ? fopen(p, "w") : NULL; if (f) fclose(f); }\n' >"$tmp/stand_in.c"
if cc -shared -fPIC -o "$tmp/stand_in.so" "$tmp/stand_in.c"; then
	for sub in lib lib/rec; do
		rm -rf "$tmp/tree/lib/rec" "$tmp/tree/lib/librec-preload.so" "$marker" "$tmp/mark"
		mkdir -p "$tmp/tree/$sub" && cp "$tmp/stand_in.so" "$tmp/tree/$sub/librec-preload.so"
		rc=0
		MARK_FILE=$tmp/mark "$tmp/tree/bin/rec-record" -q -o "$tmp/tree.rec" -- sh -c 'echo "$LD_PRELOAD" >"$1"' _ "$marker" 2>"$tmp/err" || rc=$?
		[ "$rc" -eq 0 ] && [ -e "$tmp/mark" ] && [ "$(cat "$marker" 2>/dev/null)" = "$tmp/tree/$sub/librec-preload.so" ] ||
			fail "the library in $sub/: exit $rc, LD_PRELOAD '$(cat "$marker" 2>/dev/null)', loaded: $([ -e "$tmp/mark" ] && echo yes || echo no), $(cat "$tmp/err")"
	done
	# REC_OUTPUT in rec-record's own environment: librec records rec-record there, and it says so
	REC_OUTPUT=$tmp/self.rec "$tmp/tree/bin/rec-record" -q -o "$tmp/tree.rec" -- true 2>"$tmp/err" ||
		fail "REC_OUTPUT set: rec-record failed"
	grep -q "^rec-record: REC_OUTPUT=$tmp/self.rec is in rec-record's own environment: rec-record itself is recorded there" "$tmp/err" ||
		fail "REC_OUTPUT set: no message: $(cat "$tmp/err")"
else
	fail "cc -shared failed"
fi

# --help, --version
rc=0
"$bin/rec-record" --help >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ] && grep -q "^Usage: rec-record \[OPTIONS\] \[--\] PROGRAM" "$tmp/out" ||
	fail "--help: exit $rc, usage on stdout expected"
for o in --events --flight --max-age --max-size --duration --cpu --wall --alloc-interval \
	--io-threshold --follow-forks; do
	grep -q -- "$o" "$tmp/out" || fail "--help does not mention $o"
done
[ "$("$bin/rec-record" --version)" = "$("$bin/rec-summary" --version)" ] || fail "--version"

cli_done record_usage
