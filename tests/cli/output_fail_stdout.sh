#!/usr/bin/env bash
# A failed write to standard output (it is /dev/full: every write fails with
# ENOSPC) of rec-summary (text, --json), rec-lockgraph (the default DOT),
# rec-print (text, --json), rec-flame (collapsed, html) and rec-timeline:
# each exits 1 (not killed by a signal) with exactly one stderr line,
# "TOOL: error writing standard output: No space left on device" -- the
# errno of the failed write itself, not whatever errno is left at exit.
# rec-summary --verify on a damaged file still reports its problems, and
# the failed output once.  A write that fails half-way (RLIMIT_FSIZE on a
# regular file: EFBIG) gives "... File too large" the same way.  The same
# commands with a writable standard output exit 0 and write something, so
# the failures are the output's.  (Exporters' --output/-o FILE failures:
# output_fail.sh and output_fail_message.sh.)
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
need_exe "$bin/rec-summary" "$bin/rec-lockgraph" "$bin/rec-print" "$bin/rec-flame" \
	"$bin/rec-timeline" "$tests/rec_test_flame_gen"
export TZ=UTC
"$tests/rec_test_flame_gen" "$tmp" >/dev/null || { echo "FAIL: rec_test_flame_gen"; exit 1; }
rec=$tmp/before.rec

cmds=(
	"rec-summary|$rec"
	"rec-summary|--json|$rec"
	"rec-lockgraph|$rec"
	"rec-lockgraph|--format|dot|$rec"
	"rec-print|$rec"
	"rec-print|--json|$rec"
	"rec-flame|$rec"
	"rec-flame|--format|html|$rec"
	"rec-timeline|$rec"
)

# The same commands to a regular file: exit 0 and some output.
for c in "${cmds[@]}"; do
	IFS='|' read -r -a a <<<"$c"
	rc=0
	"$bin/${a[0]}" "${a[@]:1}" >"$tmp/ok" 2>"$tmp/err" || rc=$?
	[ "$rc" = 0 ] || fail "${a[*]} >FILE: exit $rc: $(cat "$tmp/err")"
	[ -s "$tmp/ok" ] || fail "${a[*]} >FILE: no output"
done

# one_line REASON OUT TOOL ARGS...: TOOL ARGS >OUT exits 1 (no signal) with
# exactly one stderr line, "TOOL: error writing standard output: REASON"
one_line() {
	local reason=$1 out=$2 t=$3 rc=0 got n
	shift 3
	"$bin/$t" "$@" >"$out" 2>"$tmp/err" || rc=$?
	got=$(cat "$tmp/err")
	n=$(wc -l <"$tmp/err")
	[ "$rc" -lt 128 ] || fail "$t $* >$out: killed by signal $((rc - 128)): $got"
	[ "$rc" = 1 ] || fail "$t $* >$out: exit $rc, want 1"
	[ "$n" = 1 ] || fail "$t $* >$out: $n stderr lines, want 1: $got"
	case $got in *"$reason"*) ;; *) fail "$t $* >$out: stderr does not say '$reason': $got" ;; esac
	[ "$got" = "$t: error writing standard output: $reason" ] ||
		fail "$t $* >$out: stderr '$got', want '$t: error writing standard output: $reason'"
}

if [ -c /dev/full ] && [ -w /dev/full ]; then
	for c in "${cmds[@]}"; do
		IFS='|' read -r -a a <<<"$c"
		one_line "No space left on device" /dev/full "${a[@]}"
	done

	# problems of the input are still reported; the output's failure once
	cp "$rec" "$tmp/dmg.rec"
	size=$(stat -c %s "$tmp/dmg.rec")
	printf '\377\377\377\377' | dd of="$tmp/dmg.rec" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
	rc=0
	"$bin/rec-summary" --verify "$tmp/dmg.rec" >/dev/full 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "rec-summary --verify DAMAGED >/dev/full: exit $rc, want 1"
	grep -q "^rec-summary: $tmp/dmg.rec: chunk " "$tmp/err" ||
		fail "rec-summary --verify DAMAGED >/dev/full: the problem is not reported: $(cat "$tmp/err")"
	n=$(grep -c "standard output" "$tmp/err")
	[ "$n" = 1 ] && [ "$(tail -n 1 "$tmp/err")" = "rec-summary: error writing standard output: No space left on device" ] ||
		fail "rec-summary --verify DAMAGED >/dev/full: stderr '$(cat "$tmp/err")'"
	[ -c /dev/full ] || fail "/dev/full is no longer a character device"
else
	echo "(no writable character device /dev/full: the full-disk cases are skipped)"
fi

# a write that fails half-way (the file size limit: EFBIG) on a regular file
# that is standard output (not under make test-valgrind: the limit would cut
# valgrind's own log files).  rec-summary's output is smaller than the limit.
if [ "${REC_VALGRIND:-0}" != 1 ]; then
	for c in "rec-lockgraph|$rec" "rec-print|$rec" "rec-print|--json|$rec" "rec-flame|--format|html|$rec" \
		"rec-timeline|$rec"; do
		IFS='|' read -r -a a <<<"$c"
		rc=0
		(
			trap '' XFSZ
			ulimit -f 1 # KiB
			exec "$bin/${a[0]}" "${a[@]:1}"
		) >"$tmp/lim" 2>"$tmp/err" || rc=$?
		[ "$rc" = 1 ] && [ "$(cat "$tmp/err")" = "${a[0]}: error writing standard output: File too large" ] ||
			fail "${a[*]} >FILE (1 KiB limit): exit $rc, stderr '$(cat "$tmp/err")'"
	done
fi

cli_done output_fail_stdout
