#!/usr/bin/env bash
# Usage errors exit 2 with a message naming the problem and "try 'TOOL --help'"
# on stderr (nothing on stdout); --help goes to stdout and exits 0; --version
# prints the bare library version.
set -uo pipefail
# run.sh builds REC_BIN as $PWD/$BUILD/bin, which is wrong for an absolute BUILD.
if [ ! -d "${REC_BIN:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/bin" ]; then REC_BIN=$BUILD/bin; fi
bin=${REC_BIN:?}
root=${REC_ROOT:?}
tiny=$root/testdata/valid/tiny.rec
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect_usage TOOL "stderr regex" ARGS...
expect_usage() {
	local tool=$1 re=$2; shift 2
	local rc=0
	"$bin/$tool" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" -ne 2 ]; then echo "FAIL: $tool $*: exit $rc, want 2"; fails=$((fails + 1)); fi
	if [ -s "$tmp/out" ]; then echo "FAIL: $tool $*: wrote to stdout"; fails=$((fails + 1)); fi
	if ! grep -Eq "^$tool: $re" "$tmp/err"; then
		echo "FAIL: $tool $*: stderr does not match '$tool: $re':"; cat "$tmp/err"; fails=$((fails + 1))
	fi
	if [ "$(tail -n 1 "$tmp/err")" != "try '$tool --help'" ]; then
		echo "FAIL: $tool $*: last stderr line is not \"try '$tool --help'\""; fails=$((fails + 1))
	fi
}

for t in rec-summary rec-print; do
	expect_usage $t "no input file"
	expect_usage $t "unknown option '--bogus'" --bogus "$tiny"
	expect_usage $t "unknown option '-z'" -z "$tiny"
	expect_usage $t "option '--json' takes no value" --json=yes "$tiny"
	expect_usage $t "standard input \('-'\) given more than once" - -

	rc=0
	"$bin/$t" --help >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" -ne 0 ] || [ -s "$tmp/err" ] || ! grep -q "^Usage: $t " "$tmp/out"; then
		echo "FAIL: $t --help: exit $rc, usage on stdout expected"; fails=$((fails + 1))
	fi
	"$bin/$t" -h | cmp -s - "$tmp/out" || { echo "FAIL: $t -h differs from --help"; fails=$((fails + 1)); }
	v=$("$bin/$t" --version) || { echo "FAIL: $t --version exit $?"; fails=$((fails + 1)); }
	if ! [[ "$v" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then echo "FAIL: $t --version printed '$v'"; fails=$((fails + 1)); fi
	# a write error on stdout is an error (exit 1), not silent success
	if [ -w /dev/full ]; then
		rc=0
		"$bin/$t" --help >/dev/full 2>"$tmp/err" || rc=$?
		if [ "$rc" -ne 1 ] || ! grep -q "^$t: error writing standard output" "$tmp/err"; then
			echo "FAIL: $t --help >/dev/full: exit $rc"; cat "$tmp/err"; fails=$((fails + 1))
		fi
	fi
	# a missing file is a data error (exit 1) naming the file
	rc=0
	"$bin/$t" "$tmp/missing.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" -ne 1 ] || ! grep -q "^$t: $tmp/missing.rec: No such file or directory" "$tmp/err"; then
		echo "FAIL: $t missing file: exit $rc"; cat "$tmp/err"; fails=$((fails + 1))
	fi
done

expect_usage rec-print "option '--stack-depth' needs a value" --stack-depth
expect_usage rec-print "--stack-depth: '-1' is not a number from 0 to 4096" --stack-depth -1 "$tiny"
expect_usage rec-print "--stack-depth: '4097' is not a number from 0 to 4096" --stack-depth 4097 "$tiny"
expect_usage rec-print "--stack-depth: '18446744073709551616' is not a number" --stack-depth 18446744073709551616 "$tiny"
expect_usage rec-print "--stack-depth: '5x' is not a number" --stack-depth 5x "$tiny"
expect_usage rec-print "option '--events' needs a value" --events

# rec-report
expect_usage rec-report "no input file"
expect_usage rec-report "unknown option '--bogus'" --bogus "$tiny"
expect_usage rec-report "-: not a regular file \(rec-report reads it twice\)" -
expect_usage rec-report "--rules takes no operands" --rules "$tiny"
rc=0
"$bin/rec-report" "$tmp/missing.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
if [ "$rc" -ne 1 ] || ! grep -q "^rec-report: $tmp/missing.rec: No such file or directory" "$tmp/err"; then
	echo "FAIL: rec-report missing file: exit $rc"; cat "$tmp/err"; fails=$((fails + 1))
fi

[ "$fails" -eq 0 ] && echo "usage: ok"
exit $((fails > 0))
