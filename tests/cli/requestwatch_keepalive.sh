#!/usr/bin/env bash
# Integration test: requestwatch's persistent connections (HTTP/1.1
# keep-alive, which bench/load.sh's k* settings drive), against the real
# process with REC_OUTPUT:
#   - HTTP/1.1: several requests on one connection, one after another and two
#     pipelined in one write, each answered in order with a Content-Length;
#     "Connection: close" gets "Connection: close" and then EOF;
#   - HTTP/1.0: closed after the response unless it asks for keep-alive;
#   - an idle kept-alive connection does not hold up SIGINT (the service
#     exits within 3 s, not after its 5 s idle timeout), and the client sees
#     EOF on it;
#   - the recording: one app.Request per request (7), the four of the first
#     connection on one thread, the others each on a thread of its own.
# Exits 0 on pass.  Needs $REC_BIN (tests/run.sh sets it) or BUILD.
set -euo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tmp, root, need_exe
cd "$root"
need_exe "$bin/requestwatch" "$bin/rec-print"
command -v python3 >/dev/null || { echo "FAIL: python3 missing" >&2; exit 1; }

BIN=$bin work=$tmp # what requestwatch_scenario.sh uses
server_pid=
client_pid=
cleanup() {
	if declare -F rw_kill >/dev/null; then rw_kill; fi
	[ -n "$client_pid" ] && kill "$client_pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
# the scenario's contract: print and exit 1
fail() { echo "FAIL: $*" >&2; [ -f "$work/server.err" ] && sed 's/^/  server: /' "$work/server.err" >&2; exit 1; }

# shellcheck source=tests/cli/lib/requestwatch_scenario.sh
source tests/cli/lib/requestwatch_scenario.sh
rec="$work/ka.rec"
rw_start "$rec"

# The client: prints "ok ..." / "FAIL ..." lines, touches $work/idle once its
# last connection is idle, then waits (10 s max) for the service to close it.
python3 - "$port" "$work/idle" >"$work/client.out" 2>&1 <<'EOF' &
import socket, sys, time
port, idle_flag = int(sys.argv[1]), sys.argv[2]
failures = []

def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)

def connect():
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s

class Reader:
    def __init__(self, s):
        self.s, self.buf = s, b""
    def response(self):
        """One response: (status, headers dict lower-case, body); None at EOF."""
        while b"\r\n\r\n" not in self.buf:
            d = self.s.recv(4096)
            if not d:
                return None
            self.buf += d
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        status = int(lines[0].split()[1])
        hdr = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
        n = int(hdr["content-length"])
        while len(self.buf) < n:
            d = self.s.recv(4096)
            if not d:
                return None
            self.buf += d
        body, self.buf = self.buf[:n], self.buf[n:]
        return status, hdr, body
    def eof(self):
        try:
            return self.buf == b"" and self.s.recv(1) == b""
        except socket.timeout:
            return False

def req(path, version="1.1", extra=""):
    return ("GET %s HTTP/%s\r\nHost: 127.0.0.1\r\n%s\r\n" % (path, version, extra)).encode()

# 1. HTTP/1.1: one after another, then two pipelined, the second closing
a = connect(); ra = Reader(a)
a.sendall(req("/requests/fast"))
r1 = ra.response()
check(r1 is not None and r1[0] == 200 and "connection" not in r1[1] and r1[2].endswith(b"\n"),
      "HTTP/1.1 request 1: 200, no Connection header, the body as long as Content-Length says")
a.sendall(req("/requests/no-such-thing"))
r2 = ra.response()
check(r2 is not None and r2[0] == 404, "request 2 on the same connection: 404")
a.sendall(req("/requests/fast") + req("/requests/fast", extra="Connection: close\r\n"))
r3, r4 = ra.response(), ra.response()
check(r3 is not None and r3[0] == 200 and "connection" not in r3[1], "pipelined request 3: 200, kept open")
check(r4 is not None and r4[0] == 200 and r4[1].get("connection") == "close",
      "pipelined request 4 (Connection: close): 200 with Connection: close")
check(ra.eof(), "then the service closes the connection (EOF)")
a.close()

# 2. HTTP/1.0 without keep-alive: closed after the response
b = connect(); rb = Reader(b)
b.sendall(req("/requests/fast", version="1.0"))
r5 = rb.response()
check(r5 is not None and r5[0] == 200 and r5[1].get("connection") == "close" and rb.eof(),
      "HTTP/1.0: 200, Connection: close, EOF")
b.close()

# 3. HTTP/1.0 with keep-alive: kept open, then left idle
c = connect(); rc = Reader(c)
c.sendall(req("/requests/fast", version="1.0", extra="Connection: keep-alive\r\n"))
r6 = rc.response()
check(r6 is not None and r6[0] == 200 and r6[1].get("connection") == "keep-alive",
      "HTTP/1.0 with Connection: keep-alive: 200, Connection: keep-alive")
c.sendall(req("/requests/fast", version="1.0", extra="Connection: keep-alive\r\n"))
r7 = rc.response()
check(r7 is not None and r7[0] == 200, "a second request on it: 200")
open(idle_flag, "w").close()
t0 = time.monotonic()
c.settimeout(10)
closed = rc.eof()
check(closed, "the idle connection is closed by the service's shutdown (after %.2f s)" % (time.monotonic() - t0))
sys.exit(1 if failures else 0)
EOF
client_pid=$!

for _ in $(seq 1 100); do
	[ -e "$work/idle" ] && break
	kill -0 "$client_pid" 2>/dev/null || break
	sleep 0.1
done
[ -e "$work/idle" ] || { cat "$work/client.out" >&2; fail "the client did not get to its idle connection"; }
t0=$EPOCHREALTIME
rw_stop
elapsed=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.2f", b - a}')
rc=0
wait "$client_pid" || rc=$?
client_pid=
cat "$work/client.out"
[ "$rc" -eq 0 ] || fail "client checks failed"
awk -v e="$elapsed" 'BEGIN{exit !(e < 3)}' || fail "SIGINT with an idle connection open took $elapsed s (>= 3 s)"
echo "ok   SIGINT with an idle kept-alive connection: the service exited in $elapsed s"

timeout 60 "$BIN/rec-print" --json --events app.Request "$rec" >"$work/events.json" || fail "rec-print --json failed"
python3 - "$work/events.json" <<'EOF'
import json, sys
ev = [e["values"] for e in json.load(open(sys.argv[1]))["recording"]["events"] if e["type"] == "app.Request"]
ev.sort(key=lambda v: v["startTime"])
tids = [(v.get("eventThread") or {}).get("tid") for v in ev]
statuses = [v["status"] for v in ev]
failures = []
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
check(len(ev) == 7, "7 app.Request events for the 7 requests: %d" % len(ev))
if len(ev) == 7:
    check(statuses == [200, 404, 200, 200, 200, 200, 200], "statuses in order: %s" % statuses)
    check(len(set(tids[:4])) == 1, "the first connection's 4 requests on one thread: %s" % tids[:4])
    check(len({tids[0], tids[4], tids[5]}) == 3 and tids[5] == tids[6],
          "the HTTP/1.0 connections each on a thread of their own: %s" % tids[4:])
sys.exit(1 if failures else 0)
EOF
echo "PASS requestwatch_keepalive"
