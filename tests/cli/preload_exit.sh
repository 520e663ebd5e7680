#!/usr/bin/env bash
# A program that leaves through _exit under the preload library
# (tests/helpers/plain_exit.c, without librec): its exit status is kept (3)
# and the recording is closed as at exit (rec-summary: a clean close), with
# the program's 30 ms sleep in it.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_exit" "$bin/rec-print" "$bin/rec-summary"

preloaded exit "$tmp/x.rec" "" "$tests/plain_exit"
[ "$rc" = 3 ] || fail "exit status $rc, want 3"
"$bin/rec-summary" "$tmp/x.rec" >"$tmp/s.txt" || fail "rec-summary failed"
grep -q "clean close" "$tmp/s.txt" || fail "the recording was not closed: $(grep -i run "$tmp/s.txt")"
"$bin/rec-print" --json "$tmp/x.rec" | grep -q '"requested": 30000000' || fail "no 30 ms sleep"
cli_done preload_exit
