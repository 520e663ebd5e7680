#!/usr/bin/env bash
# The exact message of a failed output write (tests/cli/output_fail.sh checks
# that the line is there; this checks that it is the only one and gives the
# real reason): rec-flame -o (collapsed, html), rec-lockgraph --output (dot,
# svg, png, pdf) and rec-timeline --output on /dev/full exit 1 with exactly
# one stderr line "TOOL: /dev/full: write failed: No space left on device"
# (no "error writing standard output" line, no "agwrite failed", no
# Graphviz message); a write that fails half-way through a regular file
# (RLIMIT_FSIZE) gives exactly "TOOL: FILE: write failed: File too large".
# Their standard output on /dev/full gives exactly one line "TOOL: error
# writing standard output: ..." (with ENOSPC's text where the tool's own
# buffer made the write).  What they write to a FILE is what they write to
# standard output.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
need_exe "$bin/rec-flame" "$bin/rec-lockgraph" "$bin/rec-timeline" "$tests/rec_test_flame_gen"
export TZ=UTC
# Under SAN=1: Graphviz's and the font libraries' own leaks are not ours.
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$root/tests/cli/lockgraph/lsan.supp:print_suppressions=0"
"$tests/rec_test_flame_gen" "$tmp" >/dev/null || { echo "FAIL: rec_test_flame_gen"; exit 1; }
rec=$tmp/before.rec

# the file output is the standard output, byte for byte
check_same() { # NAME FILE-ARGS... -- STDOUT-ARGS...
	local name=$1 rc=0
	shift
	local a=() b=()
	while [ "$1" != -- ]; do a+=("$1"); shift; done
	shift
	b=("$@")
	"${a[@]}" 2>"$tmp/err" || rc=$?
	[ "$rc" = 0 ] || fail "$name: exit $rc: $(cat "$tmp/err")"
	"${b[@]}" >"$tmp/stdout" 2>/dev/null || fail "$name: to standard output failed"
	cmp -s "$tmp/file" "$tmp/stdout" || fail "$name: the file differs from the standard output"
}
check_same "flame collapsed" "$bin/rec-flame" -o "$tmp/file" "$rec" -- "$bin/rec-flame" "$rec"
check_same "flame html" "$bin/rec-flame" --format html -o "$tmp/file" "$rec" -- "$bin/rec-flame" --format html "$rec"
check_same "timeline" "$bin/rec-timeline" --output "$tmp/file" "$rec" -- "$bin/rec-timeline" "$rec"
check_same "lockgraph dot" "$bin/rec-lockgraph" --output "$tmp/file" "$rec" -- "$bin/rec-lockgraph" "$rec"
check_same "lockgraph svg" "$bin/rec-lockgraph" --format svg --output "$tmp/file" "$rec" -- "$bin/rec-lockgraph" --format svg "$rec"

# one_line WANT TOOL ARGS...: exit 1, nothing on stdout, stderr exactly WANT
one_line() {
	local want=$1 rc=0 got
	shift
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	got=$(cat "$tmp/err")
	[ "$rc" = 1 ] || fail "$*: exit $rc, want 1"
	[ ! -s "$tmp/out" ] || fail "$*: wrote to stdout"
	[ "$got" = "$want" ] || fail "$*: stderr '$got', want exactly '$want'"
}

if [ -c /dev/full ] && [ -w /dev/full ]; then
	full="write failed: No space left on device"
	one_line "rec-flame: /dev/full: $full" "$bin/rec-flame" -o /dev/full "$rec"
	one_line "rec-flame: /dev/full: $full" "$bin/rec-flame" --format html -o /dev/full "$rec"
	one_line "rec-timeline: /dev/full: $full" "$bin/rec-timeline" --output /dev/full "$rec"
	for f in dot svg png pdf; do
		one_line "rec-lockgraph: /dev/full: $full" "$bin/rec-lockgraph" --format "$f" --output /dev/full "$rec"
	done
	[ -c /dev/full ] || fail "/dev/full is no longer a character device"

	# standard output on /dev/full: one line
	for t in rec-flame rec-timeline; do
		rc=0; "$bin/$t" "$rec" >/dev/full 2>"$tmp/err" || rc=$?
		[ "$rc" = 1 ] || fail "$t >/dev/full: exit $rc, want 1"
		[ "$(cat "$tmp/err")" = "$t: error writing standard output: No space left on device" ] ||
			fail "$t >/dev/full: stderr '$(cat "$tmp/err")'"
	done
	rc=0; "$bin/rec-lockgraph" "$rec" >/dev/full 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "rec-lockgraph >/dev/full: exit $rc, want 1"
	if [ "$(wc -l <"$tmp/err")" != 1 ] || ! grep -q "^rec-lockgraph: error writing standard output: " "$tmp/err"; then
		fail "rec-lockgraph >/dev/full: stderr '$(cat "$tmp/err")'"
	fi
else
	echo "(no writable character device /dev/full: the full-disk cases are skipped)"
fi

# a write that fails half-way (the file size limit: EFBIG) on a regular file
efbig() { # WANT-TOOL ARGS...
	local t=$1 rc=0 got
	shift
	(
		trap '' XFSZ
		ulimit -f 1 # KiB
		exec "$@"
	) >"$tmp/out" 2>"$tmp/err" || rc=$?
	got=$(cat "$tmp/err")
	[ "$rc" = 1 ] || fail "$* (1 KiB limit): exit $rc, want 1"
	[ "$got" = "$t: $tmp/lim: write failed: File too large" ] ||
		fail "$* (1 KiB limit): stderr '$got'"
}
# (not under make test-valgrind: the limit would cut valgrind's own log files)
if [ "${REC_VALGRIND:-0}" != 1 ]; then
	efbig rec-flame "$bin/rec-flame" --format html -o "$tmp/lim" "$rec"
	efbig rec-timeline "$bin/rec-timeline" --output "$tmp/lim" "$rec"
	efbig rec-lockgraph "$bin/rec-lockgraph" --format svg --output "$tmp/lim" "$rec"
fi

cli_done output_fail_message
