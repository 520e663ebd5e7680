#!/usr/bin/env bash
# What the exporters do when their output FILE (rec-flame -o/--output,
# rec-lockgraph --output, rec-timeline --output) cannot be written: a file in
# a directory that does not exist, and /dev/full (every write fails with
# ENOSPC).  Each exits 1 with a line "TOOL: FILE: REASON" on stderr (for the
# missing directory "No such file or directory", for /dev/full "write failed:
# ..."), writes nothing on stdout and creates no file.  For rec-lockgraph's
# png and pdf (rendered by Graphviz) only the exit status and a non-empty
# stderr are checked here; tests/cli/output_fail_message.sh pins the exact
# one-line message of every format.  rec-print has no -o: its standard output on /dev/full gives
# "rec-print: error writing standard output: REASON", exit 1.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
need_exe "$bin/rec-flame" "$bin/rec-lockgraph" "$bin/rec-timeline" "$bin/rec-print" "$tests/rec_test_flame_gen"
export TZ=UTC
"$tests/rec_test_flame_gen" "$tmp" || { echo "FAIL: rec_test_flame_gen"; exit 1; }
rec=$tmp/before.rec
missing=$tmp/no-such-dir

# expect_fail WHERE REGEX TOOL ARGS...: exit 1, nothing on stdout, a stderr
# line matching "^TOOL: WHERE: REGEX$", WHERE not created when it is under $missing
expect_fail() {
	local where=$1 re=$2 tool=$3 rc=0
	shift 3
	"$bin/$tool" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "$tool $*: exit $rc, want 1 ($(cat "$tmp/err"))"
	[ ! -s "$tmp/out" ] || fail "$tool $*: wrote to stdout"
	grep -Fxq "$tool: $where: $re" "$tmp/err" 2>/dev/null || grep -Eq "^$tool: $where: $re\$" "$tmp/err" ||
		fail "$tool $*: no line '$tool: $where: $re' on stderr: $(cat "$tmp/err")"
	[ -e "$missing" ] && fail "$tool $*: created $missing"
}

# the tools do write these outputs when they can (the failures below are the output's)
"$bin/rec-flame" -o "$tmp/ok.txt" "$rec" && [ -s "$tmp/ok.txt" ] || fail "rec-flame -o a writable file"
"$bin/rec-lockgraph" --output "$tmp/ok.dot" "$rec" && [ -s "$tmp/ok.dot" ] || fail "rec-lockgraph --output a writable file"
"$bin/rec-timeline" --output "$tmp/ok.json" "$rec" && [ -s "$tmp/ok.json" ] || fail "rec-timeline --output a writable file"

# a directory that does not exist
enoent="No such file or directory"
expect_fail "$missing/x.folded" "$enoent" rec-flame -o "$missing/x.folded" "$rec"
expect_fail "$missing/x.folded" "$enoent" rec-flame --output "$missing/x.folded" "$rec"
expect_fail "$missing/x.html" "$enoent" rec-flame -o "$missing/x.html" "$rec"
for f in dot svg png pdf; do
	expect_fail "$missing/x.$f" "$enoent" rec-lockgraph --output "$missing/x.$f" "$rec"
done
expect_fail "$missing/x.json" "$enoent" rec-timeline --output "$missing/x.json" "$rec"

# /dev/full: every write fails (a character device: a tool that replaced it
# by a file, as a write-to-temporary-then-rename does as root, is caught below)
if [ -c /dev/full ] && [ -w /dev/full ]; then
	expect_fail /dev/full "write failed: .+" rec-flame -o /dev/full "$rec"
	expect_fail /dev/full "write failed: .+" rec-flame --format html -o /dev/full "$rec"
	expect_fail /dev/full "write failed: .+" rec-lockgraph --output /dev/full "$rec"
	expect_fail /dev/full "write failed: .+" rec-lockgraph --format svg --output /dev/full "$rec"
	expect_fail /dev/full "write failed: .+" rec-timeline --output /dev/full "$rec"
	for f in png pdf; do # exact message: output_fail_message.sh
		rc=0
		"$bin/rec-lockgraph" --format "$f" --output /dev/full "$rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
		[ "$rc" = 1 ] || fail "rec-lockgraph --format $f --output /dev/full: exit $rc, want 1"
		[ -s "$tmp/err" ] || fail "rec-lockgraph --format $f --output /dev/full: nothing on stderr"
		[ ! -s "$tmp/out" ] || fail "rec-lockgraph --format $f --output /dev/full: wrote to stdout"
	done
	rc=0
	"$bin/rec-print" "$rec" >/dev/full 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "rec-print >/dev/full: exit $rc, want 1"
	grep -q "^rec-print: error writing standard output: No space left on device$" "$tmp/err" ||
		fail "rec-print >/dev/full: $(cat "$tmp/err")"
	[ -c /dev/full ] || fail "/dev/full is no longer a character device"
else
	echo "(no writable character device /dev/full: the full-disk cases are skipped)"
fi

cli_done output_fail
