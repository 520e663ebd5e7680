#!/usr/bin/env bash
# rec-report -o page.html in a real headless browser (Debian's chromium,
# installed with apt-get when absent and running as root; node drives it
# over the DevTools protocol: tests/cli/report/browser_check.js):
#   - the demo scenario (the real requestwatch: 4 concurrent
#     /requests/blocking, 4 /requests/blocking-fixed, 1 /requests/fast,
#     1 /requests/allocating), --by path: the findings rendered equal
#     rec-report --json's (rule, severity, subject, summary, every fact), the
#     findings first; a latency card per path whose numbers are rec-view
#     latency --by path's and whose bars hold every span; the timeline's
#     items per kind equal rec-summary's counts per type, a lane per thread,
#     everything drawn zoomed out; Zoom in halves the view, the wheel zooms
#     around the mouse, dragging pans, only what is visible is drawn, Reset;
#     hovering the longest lock wait names quote-cache-lock and its holder;
#     the parts of the waits charged to each holder (hand-offs) add up to
#     rec-lockgraph --all's held_total_ns per thread (--all: by default a
#     lock's holders past the three heaviest are one group node, no tid);
#     the wait-for graph as Graphviz SVG; each flame graph tab shows its
#     graph alone, with rec-flame's total for the same event type;
#   - rec_test_flame_big's 221,000 CPU samples: the timeline embeds the first
#     200,000, says that 21,000 CPU samples were left out, and draws all of
#     them or a zoomed part in under a second;
#   - -o on a damaged file (the page of what was readable, exit 1, the
#     damage reported once), an unwritable output (exit 1), -o with --json or --baseline
#     (exit 2);
#   - rec_test_report_names: a lock, a thread and a span field whose names
#     are HTML and script injections are shown as text and never run.
# Screenshots are kept in $REPORT_SCREENSHOTS when that is set.
# Without a browser the test FAILS, unless REC_SKIP_BROWSER=1.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
cd "$root" || exit 1
need_exe "$bin/rec-report" "$bin/rec-view" "$bin/rec-summary" "$bin/rec-flame" "$bin/requestwatch" \
	"$tests/rec_test_report_names" "$tests/rec_test_flame_big"
command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }
# Under SAN=1: Graphviz's and the font libraries' own leaks (the wait-for
# graph is rendered as rec-lockgraph renders it) are not ours.
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$PWD/tests/cli/lockgraph/lsan.supp"
# shellcheck source=tests/cli/lib/chromium.sh
source tests/cli/lib/chromium.sh
need_browser report_browser

BIN=$bin
work=$tmp
server_pid=
trap 'if declare -F rw_kill >/dev/null; then rw_kill; fi; rm -rf "$tmp"' EXIT
die() { echo "FAIL: $*"; [ -f "$work/server.err" ] && sed 's/^/  server: /' "$work/server.err"; exit 1; }
fail() { die "$@"; }
# shellcheck source=tests/cli/lib/requestwatch_scenario.sh
source tests/cli/lib/requestwatch_scenario.sh
rw_start "$tmp/demo.rec"
burst 4 /requests/blocking
burst 4 /requests/blocking-fixed
burst 1 /requests/fast
burst 1 /requests/allocating
rw_stop
REC_OUTPUT="$tmp/names.rec" timeout 60 "$tests/rec_test_report_names" || die "rec_test_report_names: exit $?"
"$tests/rec_test_flame_big" "$tmp/big.rec" 11000 1 1000 || die "rec_test_flame_big: exit $?" # 20 x 11000 + 1000 samples

fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
timeout 120 "$bin/rec-report" --by path -o "$tmp/demo.html" "$tmp/demo.rec" || fail "rec-report -o: exit $?"
timeout 120 "$bin/rec-report" --by path --json "$tmp/demo.rec" >"$tmp/demo.json" || fail "rec-report --json: exit $?"
timeout 120 "$bin/rec-report" --by kind -o "$tmp/names.html" "$tmp/names.rec" || fail "rec-report -o (names): exit $?"
timeout 300 "$bin/rec-report" -o "$tmp/big.html" "$tmp/big.rec" || fail "rec-report -o (big): exit $?"
# the page fetches nothing: no URL that would load anything
if grep -Eio '(src|href)="(https?:)?//[^"]*' "$tmp/demo.html" "$tmp/names.html" | grep -v 'www.w3.org' | head -3 | grep .; then
	fail "the page refers to a network resource"
fi
# -o on damaged input: the page of what was readable, exit 1, the damage said once;
# an output that cannot be written: exit 1 naming it; with --json: usage (2)
rc=0
"$bin/rec-report" -o "$tmp/bad.html" testdata/invalid/corrupt-middle.rec 2>"$tmp/bad.err" || rc=$?
if [ "$rc" -ne 1 ] || ! grep -q '</html>' "$tmp/bad.html"; then fail "damaged input: exit $rc, or no page"; fi
[ "$(grep -c 'checksum mismatch' "$tmp/bad.err")" -eq 1 ] || fail "damaged input: not reported once: $(cat "$tmp/bad.err")"
rc=0
"$bin/rec-report" -o "$tmp/no/such/dir.html" "$tmp/demo.rec" 2>"$tmp/nodir.err" || rc=$?
if [ "$rc" -ne 1 ] || ! grep -q "rec-report: $tmp/no/such/dir.html: " "$tmp/nodir.err"; then
	fail "unwritable output: exit $rc: $(cat "$tmp/nodir.err")"
fi
rc=0
"$bin/rec-report" -o "$tmp/x.html" --json "$tmp/demo.rec" 2>/dev/null || rc=$?
[ "$rc" -eq 2 ] || fail "-o with --json: exit $rc, not 2"
rc=0
"$bin/rec-report" -o "$tmp/y.html" --baseline "$tmp/demo.rec" "$tmp/demo.rec" 2>"$tmp/y.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "not with --baseline" "$tmp/y.err" && [ ! -e "$tmp/y.html" ] ||
	fail "-o with --baseline: exit $rc, not 2 with the reason and no page: $(cat "$tmp/y.err")"
# what the other tools say of the same file
timeout 120 "$bin/rec-view" latency --by path --json "$tmp/demo.rec" >"$tmp/latency.json" || fail "rec-view: exit $?"
timeout 120 "$bin/rec-summary" --json "$tmp/demo.rec" >"$tmp/summary.json" || fail "rec-summary: exit $?"
flame_total() { # EVENT: rec-flame's total weight (the sum of its collapsed stacks)
	timeout 120 "$bin/rec-flame" --event "$1" "$tmp/demo.rec" 2>/dev/null | awk '{ s += $NF } END { printf "%d\n", s }'
}
timeout 120 "$bin/rec-lockgraph" --all "$tmp/demo.rec" >"$tmp/demo.dot" 2>/dev/null || fail "rec-lockgraph: exit $?"
cpu=$(flame_total rec.CPUSample) alloc=$(flame_total rec.Alloc) lock=$(flame_total rec.LockWait)
wall=$(flame_total rec.WallSample) # 0: the instrumented demo has no wall samples (its tab is disabled)
if [ "$lock" -le 0 ] || [ "$alloc" -le 0 ]; then fail "rec-flame: no lock wait ($lock) or allocation ($alloc) weight"; fi
python3 - "$tmp" "$cpu" "$alloc" "$lock" "$wall" <<'PY' || fail "truth.json"
import json, sys
d, cpu, alloc, lock, wall = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
lat = json.load(open(d + "/latency.json"))["tables"][0]["rows"]
counts = {t["name"]: t["count"] for t in json.load(open(d + "/summary.json"))["types"]}
import re  # rec-lockgraph's wait-for graph: the time each thread made others wait
held = {m.group(1): int(m.group(2)) for m in
        re.finditer(r'"[^"]*\(tid (\d+)\)"\s*\[held_total_ns=(\d+)', open(d + "/demo.dot").read())}
for m in re.finditer(r'"\(holder unknown\)"\s*\[held_total_ns=(\d+)', open(d + "/demo.dot").read()):
    held["0"] = int(m.group(1))  # the parts no holder was known for (tid 0)
assert held, "no held_total_ns in rec-lockgraph's DOT"
json.dump({"latency": lat, "counts": counts, "flame": {"cpu": cpu, "alloc": alloc, "lock": lock, "wall": wall},
           "bigSamples": 20 * 11000 + 1000, "held": held,
           "firstNs": str(json.load(open(d + "/summary.json"))["first_event_ns"])},
          open(d + "/truth.json", "w"))
PY
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }

timeout 200 node tests/cli/report/browser_check.js "$chromium" "$tmp" || fails=$((fails + 1))
for f in report.png report-latency.png report-timeline.png report-graph.png report-zoomed.png report-flames.png \
	big-timeline.png names.png; do
	[ "$(head -c 8 "$tmp/$f" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$f is not a PNG"
done
if [ -n "${REPORT_SCREENSHOTS:-}" ]; then
	mkdir -p "$REPORT_SCREENSHOTS"
	cp "$tmp"/*.png "$tmp"/*.html "$REPORT_SCREENSHOTS/" 2>/dev/null
fi
[ "$fails" -eq 0 ] || { echo "report_browser: $fails failure(s)"; exit 1; }
echo "report_browser: passed"
