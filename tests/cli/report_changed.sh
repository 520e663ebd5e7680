#!/usr/bin/env bash
# rec-report reads a file twice: its summary, then its events with the CPU
# samples as digests.  When the summary counts no event of a type of the
# user's (none named other than rec.*), no span can come, and the digests
# are counted as such (startup's CPU at once, none held for the requests
# view).  A file that changed in between (here: the second open of
# quiet.rec, a recording of an unmodified shell loop by rec-record, opens
# spans.rec instead, the CPU-bound app.Job spans of rec_test_findings, by
# tests/cli/report/swap_open.c preloaded) must not be counted so: the
# first span fails that pass, and rec-report reads the file a third time
# without digests (its summary, then its events: four opens in all).  Its
# findings are then those of spans.rec read alone (sampler-behind: a
# 100 us sampler), and nothing is said of the pass given up.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# (rec-record runs the program with the preload library: skipped under
# SAN=1, and run natively under valgrind, as the preload tests do)
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$bin/rec-report" "$build_dir/bin/rec-record" "$bin/rec-summary" "$tests/rec_test_findings"
command -v cc >/dev/null || { echo "skip: no C compiler to build the preload"; exit 0; }

swap=$tmp/swap_open.so
cc -shared -fPIC -O1 -o "$swap" "$root/tests/cli/report/swap_open.c" -ldl || fail "cc -shared failed"

"$build_dir/bin/rec-record" -q -o "$tmp/quiet.rec" --cpu 997 -- \
	sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done' || fail "rec-record: exit $?"
REC_CPU_SAMPLE_PERIOD=100us REC_OUTPUT="$tmp/spans.rec" timeout 60 "$tests/rec_test_findings" cpu 3 100 >/dev/null ||
	fail "rec_test_findings: exit $?"
"$bin/rec-summary" "$tmp/quiet.rec" >"$tmp/quiet.sum" || fail "rec-summary quiet.rec"
grep -Eq '^ rec\.CPUSample +[1-9]' "$tmp/quiet.sum" || fail "quiet.rec has no CPU sample: $(cat "$tmp/quiet.sum")"
awk 'NF == 3 && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ && $2 > 0 && $1 !~ /^rec\./ { bad = 1 } END { exit bad }' \
	"$tmp/quiet.sum" || fail "quiet.rec has events of a type not rec.*: $(cat "$tmp/quiet.sum")"
"$bin/rec-summary" "$tmp/spans.rec" | grep -Eq '^ app\.Job +3 ' || fail "spans.rec has not 3 app.Job"

# spans.rec read alone (its findings name the file: as quiet.rec)
mkdir -p "$tmp/alone"
cp "$tmp/spans.rec" "$tmp/alone/quiet.rec"
"$bin/rec-report" --json "$tmp/alone/quiet.rec" | sed "s|$tmp/alone/quiet.rec|$tmp/quiet.rec|g" >"$tmp/want.json" ||
	fail "rec-report spans.rec: exit $?"

SWAP_OPEN="$tmp/quiet.rec:$tmp/spans.rec" LD_PRELOAD="$swap" \
	"$bin/rec-report" --json "$tmp/quiet.rec" >"$tmp/got.json" 2>"$tmp/got.err"
rc=$?
[ "$rc" = 0 ] || fail "rec-report of the changed file: exit $rc: $(cat "$tmp/got.err")"
grep -qx 'swap_open: 4' "$tmp/got.err" || fail "not read twice, twice: $(cat "$tmp/got.err")"
[ "$(grep -cv '^swap_open: ' "$tmp/got.err")" = 0 ] || fail "said something: $(cat "$tmp/got.err")"
cmp -s "$tmp/want.json" "$tmp/got.json" || fail "findings differ from spans.rec's: $(diff "$tmp/want.json" "$tmp/got.json" | head -20)"
grep -q '"rule": *"sampler-behind"' "$tmp/want.json" ||
	fail "no sampler-behind in spans.rec (a 100 us sampler): $(head -c 600 "$tmp/want.json")"
cli_done cli/report_changed
