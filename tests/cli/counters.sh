#!/usr/bin/env bash
# Counter totals equal what the program counted (issue 16), end to end: real
# processes record through REC_OUTPUT (rec_test_counting), rec-summary
# shows the totals, text and --json:
#   - a run far shorter than one metrics period: 40/20/20 counted, 40/20/20
#     shown (each counter's start, 0, is sampled when it is created; the
#     only other sample is the one at close);
#   - five restarts whose last values are 8, 13, 23, 4 and 33, concatenated
#     with cat: 81 over 5 runs, no reset;
#   - a run killed by SIGKILL 1 s after it counted 40, with 100 ms metrics
#     and flush periods: 40 (the bound: a count made more than one metrics
#     period + one flush interval + 250 ms before the kill is in the file);
#   - a u64 counter that wraps during the recording (2^64 - 10 at the open,
#     +25): 25, no reset.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
need_exe "$bin/rec-summary" "$tests/rec_test_counting"
export TZ=UTC

# The counter lines of rec-summary's text output: "NAME TOTAL RESETS RUNS".
counters_text() { "$bin/rec-summary" "$1" | awk '/^ Counter /{on=1; getline; next} on && NF==4 {print $1, $2, $3, $4} on && NF==0 {on=0}'; }
# The counters of --json, the same way.
counters_json() {
	"$bin/rec-summary" --json "$1" | python3 -c '
import json, sys
for c in json.load(sys.stdin)["counters"]:
    print(c["name"], c["total"], c["resets"], c["runs"])'
}
check() { # FILE EXPECTED what
	local t j
	t=$(counters_text "$1")
	j=$(counters_json "$1")
	[ "$t" = "$2" ] || fail "$3 (text): got [$t], want [$2]"
	[ "$j" = "$2" ] || fail "$3 (--json): got [$j], want [$2]"
}

# --- a short run
REC_OUTPUT=$tmp/short.rec "$tests/rec_test_counting" jobs.submitted=40 jobs.done=20 jobs.failed=20 \
	|| fail "short run exit"
check "$tmp/short.rec" "jobs.done 20 0 1
jobs.failed 20 0 1
jobs.submitted 40 0 1" "a run under one metrics period"

# --- five restarts
: >"$tmp/all.rec"
for n in 8 13 23 4 33; do
	REC_OUTPUT=$tmp/one.rec "$tests/rec_test_counting" svc.requests=$n || fail "restart $n exit"
	cat "$tmp/one.rec" >>"$tmp/all.rec"
done
check "$tmp/all.rec" "svc.requests 81 0 5" "five restarts (8+13+23+4+33)"
"$bin/rec-summary" "$tmp/all.rec" | grep -q "Runs:  *5 (4 restarts)" || fail "five runs: $("$bin/rec-summary" "$tmp/all.rec" | grep Runs)"

# --- SIGKILL
REC_OUTPUT=$tmp/killed.rec REC_OPTIONS=flush=100ms REC_METRICS_PERIOD=100ms \
	"$tests/rec_test_counting" --wait "$tmp/counted" svc.killed=40 &
pid=$!
for _ in $(seq 300); do [ -e "$tmp/counted" ] && break; sleep 0.1; done
[ -e "$tmp/counted" ] || fail "the killed run did not count"
# 1 s; under valgrind (make test-valgrind: REC_TEST_SLOWDOWN > 1), where the
# recorder's thread runs one thread at a time with the program's, 6 s.
if awk -v s="${REC_TEST_SLOWDOWN:-1}" 'BEGIN { exit !(s + 0 > 1) }'; then sleep 6; else sleep 1; fi
{ kill -KILL "$pid"; wait "$pid"; rc=$?; } 2>/dev/null # (bash's "Killed" line too)
[ "$rc" -eq 137 ] || fail "the killed run ended with $rc, not by SIGKILL"
check "$tmp/killed.rec" "svc.killed 40 0 1" "a run killed 1 s after counting 40"

# --- a wrap
"$tests/rec_test_counting" --wrap "$tmp/wrap.rec" || fail "wrap run exit"
check "$tmp/wrap.rec" "wrap.count 25 0 1" "a counter that wraps past 2^64 - 1"

cli_done counters
