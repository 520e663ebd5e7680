#!/usr/bin/env bash
# A thread inside the program's own allocator, holding its lock, waits for
# another of its locks: the recorder names that lock without calling the
# allocator (issue 18, "It must not break the program").  redis-server hung
# this way under rec-record: jemalloc's thread, holding one of its mutexes,
# waited on another; the recorder, naming the lock for rec.LockWait, looked
# its caller's function up, the symbolizer allocated, and jemalloc waited
# for the mutex its own thread held.
#
# tests/helpers/plain_ownalloc.c with PLAIN_OWNALLOC_BINS=1: malloc and free
# take heap_lock, then a bin lock in memory the allocator mapped; a hog
# thread holds the bin lock 20 ms at a time.  The program exits 3
# ("re-entered") if its allocator is called by a thread already inside it.
# rec.LockOrder is left out in three of the four runs: with it, the bin
# lock's first event is a pair named without a caller, and the lookup of the
# caller's function (the path that allocated) is never taken.  Before the
# fix every run without rec.LockOrder re-entered the allocator (and hung).
# The workers are started by libc's pthread_create (as jemalloc starts its
# threads), so the recorder first meets them inside the allocator: their
# first stack capture found the stack's bounds with pthread_getattr_np,
# which called realloc (redis-server hung so too); with that path put back
# all four runs hung.
#
# Each run must end within 60 s with the program's status 0 and "done";
# the recording must show the bin lock's waits named 0x<address>@FUNCTION
# (without rec.LockOrder; the function of the first wait: heap_alloc, free,
# or the hog's own), workers waiting behind the hog, but no more such waits
# than the hog's holds (a worker reaches the bin lock only while holding
# heap_lock, so one waits per hold), and heap_lock named by its symbol.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_ownalloc" "$bin/rec-record" "$bin/rec-print"
command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }

LIMIT=60
for run in 1 2 3 4; do
	out=$tmp/run$run
	events='*,-rec.LockOrder'
	[ "$run" = 4 ] && events='*'
	PLAIN_OWNALLOC_BINS=1 "$bin/rec-record" --events "$events" -o "$out.rec" -- \
		"$tests/plain_ownalloc" 2 4 400000 >"$out.out" 2>"$out.err" &
	pid=$!
	waited=0
	while kill -0 "$pid" 2>/dev/null && [ $waited -lt $((LIMIT * 10)) ]; do
		sleep 0.1
		waited=$((waited + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		prog=$(pgrep -P "$pid" | head -1)
		fail "run $run: hung (still running after ${LIMIT} s)"
		if [ -n "$prog" ] && command -v eu-stack >/dev/null; then
			eu-stack -p "$prog" 2>&1 | grep -E '^TID|^#' | head -60
		fi
		[ -n "$prog" ] && kill -KILL "$prog" 2>/dev/null
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		continue
	fi
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" = 0 ] || { fail "run $run: exit status $rc: $(tail -3 "$out.err")"; continue; }
	grep -qx 'done' "$out.out" || { fail "run $run: the program did not finish"; continue; }
	"$bin/rec-print" --json --events rec.LockWait "$out.rec" >"$out.json" ||
		{ fail "run $run: rec-print failed"; continue; }
	python3 - "$out.json" "$out.out" "$run" <<'PY' || fail "run $run: the recording does not tell what the program did"
import json, re, sys
path, outp, run = sys.argv[1], sys.argv[2], int(sys.argv[3])
hog = holds = None
for line in open(outp):
    f = line.split()
    if f[:1] == ["hog"]:
        hog, holds = int(f[1]), int(f[3])
ev = [e["values"] for e in json.load(open(path))["recording"]["events"] if e["type"] == "rec.LockWait"]
heap = [v for v in ev if v["lockName"] == "heap_lock"]
bin_ = [v for v in ev if v["lockName"] not in ("heap_lock", "start_lock")]
names = sorted({v["lockName"] for v in bin_})
bad = []
if hog is None:
    bad.append("the hog did not report")
if not heap:
    bad.append("no wait on heap_lock named by its symbol")
if not bin_:
    bad.append("no wait on the bin lock")
elif len({v["lockAddress"] for v in bin_}) != 1:
    bad.append("waits on other locks: %s" % names)
if run != 4 and any(not re.fullmatch(r"0x[0-9a-f]+@(heap_alloc|free|hog)", n) for n in names):
    bad.append("the bin lock is named %s, not 0x<address>@FUNCTION" % names)
tid = lambda v: v["eventThread"]["tid"] if isinstance(v["eventThread"], dict) else v["eventThread"]
by_hog = [v for v in bin_ if v["holderOsThreadId"] == hog and tid(v) != hog]
if not by_hog:
    bad.append("no worker waited on the bin lock behind the hog (tid %s)" % hog)
if holds is not None and len(by_hog) > holds:
    bad.append("%d waits on the bin lock behind the hog, more than its %d holds" % (len(by_hog), holds))
for b in bad:
    print("FAIL:", b)
print("run %d: heap_lock waits %d; bin lock %s: %d waits (%d of workers behind the hog), hog holds %s" %
      (run, len(heap), names, len(bin_), len(by_hog), holds))
sys.exit(1 if bad else 0)
PY
done
cli_done preload_alloc_lockname
