#!/usr/bin/env bash
# A program that runs others under the preload library
# (tests/helpers/plain_exec.c, without librec: system("sleep 0.2") and
# popen): its children inherit LD_PRELOAD (the preload carries on) but do not
# record (forks=off): the recording is the parent's alone and whole, one
# run and one rec.Process of the parent's pid, its 30 and 40 ms sleeps, and
# no 200 ms sleep of the child's sleep 0.2 (which would also have truncated
# the parent's file at the same REC_OUTPUT).
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_exec" "$bin/rec-print" "$bin/rec-summary"

preloaded exec "$tmp/e.rec" "" "$tests/plain_exec"
[ "$rc" = 0 ] || fail "plain_exec exit $rc: $(cat "$tmp/exec.err")"
[ "$(value exec system)" = 0 ] || fail "system() gave $(value exec system)"
[ "$(value exec child_preload)" = "$preload" ] || fail "the children's LD_PRELOAD is '$(value exec child_preload)'"
"$bin/rec-summary" "$tmp/e.rec" >"$tmp/s.txt" || fail "rec-summary failed"
grep -q "^ Runs: *1$" "$tmp/s.txt" || fail "not one run: $(grep Runs "$tmp/s.txt")"
"$bin/rec-print" --json "$tmp/e.rec" >"$tmp/e.json" || fail "rec-print failed"
[ "$(grep -c '"type": "rec.Process"' "$tmp/e.json")" = 1 ] || fail "not one rec.Process"
grep -q '"requested": 30000000' "$tmp/e.json" || fail "no 30 ms sleep"
grep -q '"requested": 40000000' "$tmp/e.json" || fail "no 40 ms sleep"
grep -q '"requested": 200000000' "$tmp/e.json" && fail "the child's sleep was recorded"
cli_done preload_exec
