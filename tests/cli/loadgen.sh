#!/usr/bin/env bash
# Test of the benchmark's load generator (bench/loadgen.c, which bench/load.sh
# compiles): a short open-loop run against the real requestwatch recording to
# a file, with a connection per request and with --keepalive, then a closed
# loop with --keepalive.  Every count must be exact: requests due = sent = ok
# = app.Request events in the recording; a connection per request opens one
# connection per request, --keepalive at most its 16 (here the service is
# idle enough for far fewer); the latency percentiles are ordered; the CPU
# at the load (window_cpu_s) lies within the whole life's and counts the
# processes below a wrapper.
# Exits 0 on pass.  Needs $REC_BIN (tests/run.sh sets it) or BUILD.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tmp, root, fail, need_exe, cli_done
need_exe "$bin/requestwatch" "$bin/rec-summary"
command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }
abort() { echo "FAIL: $*"; exit 1; }
work=$tmp

${CC:-cc} -O2 -std=c17 -Wall -Wextra -Werror -D_GNU_SOURCE -pthread -o "$work/loadgen" "$root/bench/loadgen.c" -lm ||
	abort "bench/loadgen.c does not compile"

# kv KEY LINE -> the value of KEY=... in LINE
kv() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

# refused: --conns without --keepalive in the open loop
rc=0
"$work/loadgen" open --rate 10 --duration 1 --conns 4 --port 1 >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "open --conns without --keepalive: exit $rc, expected 2 (usage)"

for mode in close keepalive; do
	f0=$fails
	ka=(); [ "$mode" = keepalive ] && ka=(--keepalive)
	rec="$work/$mode.rec"
	line=$(REC_OUTPUT="$rec" timeout 60 "$work/loadgen" open "${ka[@]}" --rate 400 --duration 2 --warmup 0.5 \
		-- "$bin/requestwatch" --port 0) || abort "$mode: loadgen exit $?: $line"
	echo "$mode: $line"
	due=$(kv due "$line"); sent=$(kv sent "$line"); ok=$(kv ok "$line"); conns=$(kv connections "$line")
	[ "$due" = 800 ] || fail "$mode: due=$due, expected 800 (400/s for 2 s)"
	[ "$sent" = 800 ] && [ "$ok" = 800 ] || fail "$mode: sent=$sent ok=$ok, expected 800 each"
	[ "$(kv errors "$line")" = 0 ] && [ "$(kv timeouts "$line")" = 0 ] || fail "$mode: errors or timeouts"
	[ "$(kv keepalive "$line")" = "$([ "$mode" = keepalive ] && echo 1 || echo 0)" ] || fail "$mode: keepalive= wrong"
	if [ "$mode" = close ]; then
		[ "$conns" = 800 ] || fail "close: connections=$conns, expected one per request (800)"
	else
		[ "$conns" -ge 1 ] && [ "$conns" -le 16 ] || fail "keepalive: connections=$conns, expected 1..16"
	fi
	measured=$(kv measured "$line")
	[ "$measured" = 600 ] || fail "$mode: measured=$measured, expected 600 (the first 0.5 s left out)"
	awk -v a="$(kv p50_us "$line")" -v b="$(kv p90_us "$line")" -v c="$(kv p99_us "$line")" -v m="$(kv max_us "$line")" \
		'BEGIN{ exit !(a > 0 && a <= b && b <= c && c <= m) }' || fail "$mode: percentiles out of order"
	n=$("$bin/rec-summary" --json "$rec" | python3 -c '
import json, sys
s = json.load(sys.stdin)
print({t["name"]: t["count"] for t in s["types"]}.get("app.Request", 0))')
	[ "$n" = 800 ] || fail "$mode: $n app.Request events in the recording, expected 800"
	# the CPU at the load is part of the CPU over the service's life
	awk -v w="$(kv window_cpu_s "$line")" -v c="$(kv service_cpu_s "$line")" 'BEGIN{ exit !(w > 0 && w <= c) }' ||
		fail "$mode: window_cpu_s=$(kv window_cpu_s "$line") not in (0, service_cpu_s=$(kv service_cpu_s "$line")]"
	[ "$fails" = "$f0" ] && echo "ok   $mode: 800 due, sent, answered 200 and recorded; $conns connections"
done

# The CPU at the load counts the processes below the command (a wrapper's
# program): here a shell that starts a process spinning on a core for the
# whole run, then requestwatch, and does nothing itself.  From the first
# measured request to the last response (1.5 s) the spinner alone uses
# nearly a core-second a second: without the processes below the shell the
# figure would be ~0; and it cannot exceed the shell's whole life (wait4
# counts the children it waited for).
f0=$fails
line=$(timeout 60 "$work/loadgen" open --rate 200 --duration 2 --warmup 0.5 --stop-exe "$bin/requestwatch" \
	-- bash -c '(while :; do :; done) & b=$!; "$1" --port 0; kill $b; wait $b 2>/dev/null; exit 0' sh "$bin/requestwatch") ||
	abort "wrapper: loadgen exit $?: $line"
echo "wrapper: $line"
w=$(kv window_cpu_s "$line"); c=$(kv service_cpu_s "$line"); wall=$(kv wall "$line")
[ "$(kv ok "$line")" = 400 ] || fail "wrapper: ok=$(kv ok "$line"), expected 400"
awk -v w="$w" -v c="$c" 'BEGIN{ exit !(w >= 0.3 * 1.5 && w <= c) }' ||
	fail "wrapper: window_cpu_s=$w, expected at least 0.45 s (a spinning process for 1.5 s) and at most service_cpu_s=$c"
[ "$fails" = "$f0" ] && echo "ok   wrapper: the CPU at the load $w s of the whole life's $c s (run of $wall s), the spinner below the shell counted"

# closed loop on 2 persistent connections: exactly 2 connections opened
line=$(timeout 60 "$work/loadgen" closed --keepalive --conns 2 --duration 1 -- "$bin/requestwatch" --port 0) ||
	abort "closed --keepalive: loadgen exit $?"
echo "closed: $line"
f0=$fails
[ "$(kv connections "$line")" = 2 ] || fail "closed --keepalive: connections=$(kv connections "$line"), expected 2"
[ "$(kv ok "$line")" -gt 100 ] && [ "$(kv errors "$line")" = 0 ] || fail "closed --keepalive: ok/errors"
[ "$fails" = "$f0" ] && echo "ok   closed loop --keepalive: $(kv ok "$line") requests on 2 connections"
cli_done loadgen
