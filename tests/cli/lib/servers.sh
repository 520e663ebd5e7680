# shellcheck shell=bash
# servers.sh - sourced (not run) by tests/pending/record_memcached.sh and
# tests/pending/record_redis.sh (issue 18, "real programs nobody here
# wrote"): Debian's servers run alone and under rec-record on 127.0.0.1,
# driven by Debian's load generators; what their recordings must show.
# Not directly under tests/cli/ because tests/run.sh runs every
# tests/cli/*.sh as a test.  The sourcing script has sourced common.sh.
#
#   servers_setup PACKAGE...   the preload library, python3, SAN=1 (skip),
#                              apt-get install of the packages missing
#   run_memcached MODE         MODE plain or rec: memcached -t 4 under
#                              memcaslap for 3 s (values verified), a value
#                              set and read back, SIGTERM; sets mc_rc, mc_pid
#   run_redis MODE             redis-server under redis-benchmark (set, get,
#                              lpush, lpop), big lists UNLINKed (freed by
#                              bio_lazy_free), a value read back, SIGTERM;
#                              sets rd_rc, rd_pid
#   check_recording FILE PID EXE JSON   what the recording of EXE must show

servers_setup() {
	need_exe "$bin/rec-record" "$bin/rec-print" "$bin/rec-summary"
	real=${BUILD:-build}
	case "$real" in /*) ;; *) real=$root/$real ;; esac
	[ -r "$real/lib/librec-preload.so" ] || { echo "FAIL: $real/lib/librec-preload.so missing (the preload library)"; exit 1; }
	command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }
	if [ "${SAN:-}" = 1 ]; then
		echo "skip: under SAN=1 (the ASan-built preload library cannot load into Debian's servers, built without ASan)"
		exit 0
	fi

	missing=()
	for p in "$@"; do
		case $p in
		memcached) command -v memcached >/dev/null || missing+=(memcached) ;;
		libmemcached-tools) command -v memcaslap >/dev/null || missing+=(libmemcached-tools) ;;
		redis-server) command -v redis-server >/dev/null || missing+=(redis-server) ;;
		redis-tools) command -v redis-benchmark >/dev/null || missing+=(redis-tools) ;;
		elfutils) command -v eu-addr2line >/dev/null || missing+=(elfutils) ;;
		libc6-dbg) [ -e /usr/lib/debug/.build-id ] || missing+=(libc6-dbg) ;;
		esac
	done
	if [ "${#missing[@]}" -gt 0 ]; then
		echo "installing ${missing[*]}"
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >"$tmp/apt.log" 2>&1 ||
			{ echo "FAIL: apt-get install ${missing[*]}:"; tail -5 "$tmp/apt.log"; exit 1; }
	fi
}

server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then
		local c
		for c in $(pgrep -P "$server_pid" 2>/dev/null); do kill -KILL "$c" 2>/dev/null; done
		kill -KILL "$server_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# wait_port PORT: until something accepts on it (15 s)
wait_port() {
	for _ in $(seq 150); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		kill -0 "$server_pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# stop: SIGTERM, the exit status in $stop_rc (20 s)
stop() {
	kill -TERM "$server_pid"
	timeout 20 tail --pid="$server_pid" -f /dev/null || fail "$1: still running 20 s after SIGTERM"
	stop_rc=0
	wait "$server_pid" || stop_rc=$?
	server_pid=
}
# kv_check PROTO PORT: set a value and read it back through the server's protocol
kv_check() {
	python3 - "$1" "$2" <<'EOF'
import socket, sys
proto, port = sys.argv[1], int(sys.argv[2])
val = b"rec-record-%d-\x01\xff" % port
s = socket.create_connection(("127.0.0.1", port), timeout=10)
def until(end):
    b = b""
    while not b.endswith(end):
        c = s.recv(65536)
        if not c: break
        b += c
    return b
if proto == "memcache":
    s.sendall(b"set reckey 0 0 %d\r\n%s\r\n" % (len(val), val))
    assert until(b"\r\n") == b"STORED\r\n"
    s.sendall(b"get reckey\r\n")
    got = until(b"END\r\n")
    assert got == b"VALUE reckey 0 %d\r\n%s\r\nEND\r\n" % (len(val), val), got
else:
    s.sendall(b"*3\r\n$3\r\nSET\r\n$6\r\nreckey\r\n$%d\r\n%s\r\n" % (len(val), val))
    assert until(b"\r\n") == b"+OK\r\n"
    s.sendall(b"*2\r\n$3\r\nGET\r\n$6\r\nreckey\r\n")
    got = until(val + b"\r\n")
    assert got == b"$%d\r\n%s\r\n" % (len(val), val), got
EOF
}

# run_memcached MODE (plain|rec): start, load, check, stop; sets mc_rc, mc_pid
run_memcached() {
	local mode=$1 port
	port=$(free_port)
	# -m 1024: room for everything memcaslap sets in 3 s, so that a miss in
	# its verification is a wrong answer, never an eviction (at 64 MiB, the
	# default, a quiet machine's 590,000 operations evicted keys: 38 misses)
	local cmd=(memcached -u root -l 127.0.0.1 -p "$port" -t 4 -U 0 -m 1024)
	if [ "$mode" = rec ]; then
		"$bin/rec-record" -o "$tmp/memcached.rec" --events '*,rec.LockWait:threshold=20us' -- "${cmd[@]}" \
			>"$tmp/mc-$mode.out" 2>"$tmp/mc-$mode.err" &
	else
		"${cmd[@]}" >"$tmp/mc-$mode.out" 2>"$tmp/mc-$mode.err" &
	fi
	server_pid=$!
	wait_port "$port" || { fail "memcached ($mode) did not listen: $(cat "$tmp/mc-$mode.err")"; return; }
	mc_pid=$server_pid
	[ "$mode" = rec ] && mc_pid=$(pgrep -P "$server_pid" memcached)
	timeout 60 memcaslap -s "127.0.0.1:$port" -T 2 -c 16 -t 3s -v 0.1 >"$tmp/mc-$mode.load" 2>&1 ||
		fail "memcaslap ($mode) failed: $(tail -3 "$tmp/mc-$mode.load")"
	grep -q '^verify_failed: 0$' "$tmp/mc-$mode.load" && grep -q '^verify_misses: 0$' "$tmp/mc-$mode.load" ||
		fail "memcaslap ($mode): values read back wrong: $(grep verify "$tmp/mc-$mode.load")"
	local ops
	ops=$(sed -n 's/.*Ops: \([0-9]*\) TPS.*/\1/p' "$tmp/mc-$mode.load")
	[ "${ops:-0}" -gt 1000 ] || fail "memcaslap ($mode): ${ops:-no} operations in 3 s"
	echo "memcached ($mode): $ops operations in 3 s (memcaslap)"
	kv_check memcache "$port" || fail "memcached ($mode): a value set is not read back"
	stop "memcached ($mode)"
	mc_rc=$stop_rc
}

# run_redis MODE: the same for redis-server; sets rd_rc, rd_pid
run_redis() {
	local mode=$1 port
	port=$(free_port)
	local cmd=(redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no
		--lazyfree-lazy-user-del yes --dir "$tmp")
	if [ "$mode" = rec ]; then
		"$bin/rec-record" -o "$tmp/redis.rec" --events '*,rec.LockWait:threshold=20us' -- "${cmd[@]}" \
			>"$tmp/rd-$mode.out" 2>"$tmp/rd-$mode.err" &
	else
		"${cmd[@]}" >"$tmp/rd-$mode.out" 2>"$tmp/rd-$mode.err" &
	fi
	server_pid=$!
	wait_port "$port" || { fail "redis-server ($mode) did not listen: $(tail -3 "$tmp/rd-$mode.out")"; return; }
	rd_pid=$server_pid
	[ "$mode" = rec ] && rd_pid=$(pgrep -P "$server_pid" redis-server)
	timeout 60 redis-benchmark -p "$port" -c 20 -n 20000 -t set,get,lpush,lpop -q >"$tmp/rd-$mode.load" 2>&1 ||
		fail "redis-benchmark ($mode) failed: $(tail -3 "$tmp/rd-$mode.load")"
	local n
	n=$(tr '\r' '\n' <"$tmp/rd-$mode.load" | grep -c 'requests per second')
	[ "$n" -eq 4 ] || fail "redis-benchmark ($mode): $n of 4 tests reported: $(tr '\r' '\n' <"$tmp/rd-$mode.load" | tail -3)"
	tr '\r' '\n' <"$tmp/rd-$mode.load" | grep 'requests per second' | sed "s/^/redis-server ($mode): /"
	# big sets deleted with UNLINK are freed by the bio_lazy_free thread
	# (a set of 100,000 is a hash table: its free effort, 100,000, is above
	# redis's LAZYFREE_THRESHOLD, 64; a list of as many small numbers is a
	# few dozen listpack nodes, freed at once by the main thread)
	for i in 1 2 3; do
		redis-cli -p "$port" eval "for i=1,100000 do redis.call('sadd', KEYS[1], i) end" 1 "bigset$i" >/dev/null &&
			redis-cli -p "$port" unlink "bigset$i" >/dev/null || fail "redis-cli ($mode) sadd/unlink failed"
	done
	kv_check resp "$port" || fail "redis-server ($mode): a value set is not read back"
	stop "redis-server ($mode)"
	rd_rc=$stop_rc
}

# check_recording FILE PID EXE JSON-EXPECTATIONS (frames "in EXE" are in the
# file EXE resolves to on PATH: Debian's redis-server is a symbolic link to
# redis-check-rdb, the module path a recording names)
check_recording() {
	local module
	module=$(basename "$(readlink -f "$(command -v "$3")")")
	"$bin/rec-summary" --json "$1" >"$tmp/s.json" || { fail "rec-summary $1"; return; }
	# the types of interest that the recording has (naming one it has not is a usage error)
	local types
	types=$(python3 -c 'import json, sys; print(",".join(t["name"] for t in json.load(open(sys.argv[1]))["types"] if t["name"] in ("rec.CPUSample", "rec.LockWait", "rec.CondWait", "rec.ThreadStart")))' "$tmp/s.json")
	"$bin/rec-print" --json --events "${types:-rec.ThreadStart}" --stack-depth 32 "$1" >"$tmp/e.json" ||
		{ fail "rec-print $1"; return; }
	python3 - "$tmp/s.json" "$tmp/e.json" "$2" "$3" "$4" "$module" <<'EOF' || fail "the recording of $3"
import collections, json, re, sys
s = json.load(open(sys.argv[1]))
events = json.load(open(sys.argv[2]))["recording"]["events"]
pid, exe, want, module = int(sys.argv[3]), sys.argv[4], json.loads(sys.argv[5]), sys.argv[6]
bad = []
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + exe + ": " + what)
    if not ok: bad.append(what)
runs = s["runs"]
check(len(runs) == 1 and runs[0]["pid"] == pid and runs[0]["ended"] == "clean close",
      "one run of pid %d, closed cleanly: %s" % (pid, [(r["pid"], r["ended"]) for r in runs]))
names = collections.Counter()
tid_name = {}
for e in events:
    t = e["values"].get("eventThread") or {}
    if t.get("tid") is not None:
        tid_name[t["tid"]] = t.get("name", "")
for tid, n in tid_name.items():
    names[n] += 1
print("     threads:", dict(names))
for n, k in want["threads"].items():
    check(names[n] >= k, "%d+ threads named %s: %d" % (k, n, names[n]))
# A thread is named by its events: an idle one whose events all precede
# its naming (memcached names them from the main thread after starting
# them) keeps its first name, so of these some, not each, must show.
some = want.get("some_threads")
if some:
    seen = sorted(n for n in some["names"] if names[n])
    check(len(seen) >= some["at_least"], "%d+ of the threads %s by name: %s"
          % (some["at_least"], some["names"], seen))
def of(t):
    return [e["values"] for e in events if e["type"] == t]
cpu = of("rec.CPUSample")
own = [v for v in cpu if any((f.get("module") or "").endswith("/" + module) for f in (v.get("stackTrace") or {}).get("frames", []))]
check(len(own) >= 10, "CPU samples with frames in %s: %d of %d" % (module, len(own), len(cpu)))
fn = collections.Counter(f["function"] for v in own for f in v["stackTrace"]["frames"]
                         if (f.get("module") or "").endswith("/" + module) and f.get("function"))
print("     functions of %s in CPU samples: %s" % (module, fn.most_common(8)))
for f in want.get("functions", []):
    check(fn[f] > 0, "CPU samples in %s" % f)
if "named_frames" in want:
    check(sum(fn.values()) >= want["named_frames"], "%d+ frames of %s named by its symbols: %d"
          % (want["named_frames"], module, sum(fn.values())))
for t, pat in want.get("waits", {}).items():
    w = [v for v in of(t) if re.fullmatch(pat, (v.get("eventThread") or {}).get("name", ""))]
    names_w = collections.Counter(v.get("lockName") for v in w)
    print("     %s on %s threads: %d, by lock: %s" % (t, pat, len(w), names_w.most_common(5)))
    check(len(w) > 0, "%s events on threads named %s: %d" % (t, pat, len(w)))
sys.exit(1 if bad else 0)
EOF
}
