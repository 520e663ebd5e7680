#!/usr/bin/env bash
# rec-record --flight: the ring mode through the preload library, and the
# signals rec-record passes on.  requestwatch-plain (no rec in it) runs under
# rec-record --flight --max-age 1min:
#   - while it runs nothing is written (the file rec-record created is empty);
#   - SIGUSR2 sent to rec-record reaches the program, whose recorder writes
#     what it keeps: one run, not finished ("no final chunk"), with the
#     warm-up's 400 ms rec.Sleep;
#   - a /requests/blocking request after that, then SIGTERM sent to
#     rec-record: the program stops cleanly (rec-record exits with its 0) and
#     the file ends with a clean close and holds the request's 150 ms sleep in
#     serve_blocking too;
#   - SIGINT sent to rec-record alone (not from a terminal) is ignored: the
#     program keeps serving.
# Needs the preload library.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
need_exe "$bin/rec-record" "$bin/requestwatch-plain" "$bin/rec-summary" "$bin/rec-print"
real=${BUILD:-build}
case "$real" in /*) ;; *) real=$root/$real ;; esac
[ -r "$real/lib/librec-preload.so" ] || { echo "FAIL: $real/lib/librec-preload.so missing (the preload library)"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }
if [ "${SAN:-}" = 1 ]; then
	echo "skip: under SAN=1 (the ASan-built preload library in an ASan-built requestwatch-plain: the loader puts LD_PRELOAD before the program's ASan runtime)"
	exit 0
fi

rr=
cleanup() {
	if [ -n "$rr" ]; then
		pkill -KILL -P "$rr" 2>/dev/null
		kill -KILL "$rr" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

rec=$tmp/flight.rec
# env --default-signal=INT: undo the SIGINT ignore bash gives background jobs
env --default-signal=INT "$bin/rec-record" -q --flight --max-age 1min -o "$rec" -- \
	"$bin/requestwatch-plain" --port 0 >"$tmp/out" 2>"$tmp/err" &
rr=$!
port=
for _ in $(seq 150); do
	port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$tmp/out")
	[ -n "$port" ] && break
	kill -0 "$rr" 2>/dev/null || { echo "FAIL: exited before listening: $(cat "$tmp/err")"; exit 1; }
	sleep 0.1
done
[ -n "$port" ] || { echo "FAIL: requestwatch-plain did not listen within 15 s"; exit 1; }

[ -e "$rec" ] && [ ! -s "$rec" ] || fail "flight mode: the file is not empty while the program runs ($(stat -c %s "$rec" 2>/dev/null) bytes)"

get() { # PATH: one request, its status
	python3 - "$port" "$1" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % sys.argv[2].encode())
data = b""
while True:
    c = s.recv(4096)
    if not c: break
    data += c
print(data.split(b" ", 2)[1].decode() if data else "none")
EOF
}

kill -USR2 "$rr"
for _ in $(seq 100); do [ -s "$rec" ] && break; sleep 0.05; done
sleep 0.3 # the dump is written by the program's recorder thread; let it finish
[ -s "$rec" ] || fail "SIGUSR2 to rec-record: nothing was written within 5 s"
"$bin/rec-summary" --json "$rec" >"$tmp/s1.json" 2>"$tmp/s1.err" || fail "rec-summary after SIGUSR2: $(cat "$tmp/s1.err")"
"$bin/rec-print" --json --events rec.Sleep --stack-depth 8 "$rec" >"$tmp/e1.json" 2>/dev/null || fail "rec-print after SIGUSR2"

kill -INT "$rr"
sleep 0.3
kill -0 "$rr" 2>/dev/null || fail "SIGINT to rec-record stopped it"
[ "$(get /requests/blocking)" = 200 ] || fail "/requests/blocking did not answer 200"

kill -TERM "$rr"
rc=0
timeout 15 tail --pid="$rr" -f /dev/null || fail "still running 15 s after SIGTERM"
wait "$rr" || rc=$?
rr=
[ "$rc" -eq 0 ] || fail "exit status $rc after SIGTERM, want requestwatch-plain's 0: $(cat "$tmp/err")"
"$bin/rec-summary" --json "$rec" >"$tmp/s2.json" || fail "rec-summary at the end"
"$bin/rec-print" --json --events rec.Sleep --stack-depth 8 "$rec" >"$tmp/e2.json" || fail "rec-print at the end"

python3 - "$tmp/s1.json" "$tmp/e1.json" "$tmp/s2.json" "$tmp/e2.json" <<'EOF' || fail "the recordings"
import json, sys
s1, e1, s2, e2 = (json.load(open(p)) for p in sys.argv[1:5])
bad = []
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok: bad.append(what)
def sleeps(e):
    out = []
    for ev in e["recording"]["events"]:
        v = ev["values"]
        fr = [f.get("function") for f in (v.get("stackTrace") or {}).get("frames", [])]
        out.append((v["duration"], fr))
    return out
r1 = s1["runs"]
check(len(r1) == 1 and r1[0]["ended"] == "no final chunk",
      "after SIGUSR2: one run, not finished: %s" % [r["ended"] for r in r1])
check(any(d >= 400_000_000 and "warm_up" in fr for d, fr in sleeps(e1)),
      "after SIGUSR2: the warm-up's 400 ms sleep: %s" % [round(d / 1e6) for d, _ in sleeps(e1)])
r2 = s2["runs"]
check(len(r2) == 1 and r2[0]["ended"] == "clean close" and r2[0]["run_id"] == (r1[0]["run_id"] if r1 else None),
      "at the end: the same run, closed cleanly: %s" % [(r["run_id"], r["ended"]) for r in r2])
check(any(d >= 150_000_000 and "serve_blocking" in fr for d, fr in sleeps(e2)),
      "at the end: the request's 150 ms sleep in serve_blocking: %s" % [round(d / 1e6) for d, _ in sleeps(e2)])
sys.exit(1 if bad else 0)
EOF

cli_done record_flight
