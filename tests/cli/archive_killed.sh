#!/usr/bin/env bash
# A recording process killed with SIGKILL while it writes (several times, at
# different moments): rec-check reports at most one problem, a truncated last
# chunk, never damage in the chunks before it; rec-recover keeps every whole
# chunk (exit 0 if the kill fell between chunks, 1 if it cut one) and its
# output checks OK.  This tests the archive tools on real crash leftovers;
# the recorder's own crash guarantees are tested by the recorder's tests.
set -uo pipefail
if [ ! -d "${REC_BIN:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/bin" ]; then REC_BIN=$BUILD/bin; fi
if [ ! -d "${REC_TESTS:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/tests" ]; then REC_TESTS=$BUILD/tests; fi
bin=${REC_BIN:?}
tests=${REC_TESTS:?}
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

killed=0
for delay in 0.05 0.1 0.2 0.3 0.5; do
	rm -f "$tmp"/k-*.rec
	REC_OPTIONS="chunk=65536,full=wait" REC_OUTPUT="$tmp/k-%p.rec" "$tests/rec_test_recorder_env" 50000000 &
	pid=$!
	sleep "$delay"
	kill -KILL "$pid" 2>/dev/null && killed=$((killed + 1))
	wait "$pid" 2>/dev/null
	f=$(ls "$tmp"/k-*.rec 2>/dev/null | head -1)
	[ -n "$f" ] || continue # killed before the file was created
	rc=0; "$bin/rec-check" "$f" >"$tmp/out" 2>"$tmp/err" || rc=$?
	case $rc in
	0) [ ! -s "$tmp/err" ] || fail "delay $delay: exit 0 with problems: $(cat "$tmp/err")" ;;
	1) [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q ": truncated: the chunk needs" "$tmp/err" \
		|| fail "delay $delay: problems other than one truncated tail: $(cat "$tmp/err")" ;;
	*) fail "delay $delay: rec-check exit $rc" ;;
	esac
	rc2=0; "$bin/rec-recover" -q "$f" "$tmp/rec.rec" 2>/dev/null || rc2=$?
	[ "$rc2" = "$rc" ] || fail "delay $delay: rec-recover exit $rc2, rec-check $rc"
	"$bin/rec-check" -q "$tmp/rec.rec" || fail "delay $delay: recovered file does not check"
	# the recovered file is the original minus at most its cut tail
	cmp -s "$tmp/rec.rec" <(head -c "$(stat -c %s "$tmp/rec.rec")" "$f") || fail "delay $delay: not a prefix"
	"$bin/rec-summary" "$tmp/rec.rec" | grep -q "no final chunk$" || [ ! -s "$tmp/rec.rec" ] \
		|| fail "delay $delay: a killed run must not end with a FINAL chunk"
done
[ "$killed" -ge 3 ] || fail "only $killed of 5 processes were still running when killed"

[ "$fails" = 0 ] && echo "archive_killed: ok"
exit $((fails != 0))
