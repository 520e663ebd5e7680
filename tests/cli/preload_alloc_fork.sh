#!/usr/bin/env bash
# fork() in a recorded program whose own allocator has fork handlers, as
# jemalloc's (issue 18, "fork from a multithreaded program").  Prepare
# handlers run last-registered first and take locks: the allocator's take
# its heap and bin locks, the recorder's its own.  A recorder thread that
# calls the program's allocator while it holds a lock the recorder's handler
# takes hangs the fork.  It did: the background thread sorted the unwind
# tables it builds inside dl_iterate_phdr (under the lock the fork handler
# takes last) with glibc's qsort, which calls malloc for a large array; the
# allocator's prepare handler held heap_lock, the recorder's waited for the
# background thread, and the background thread for heap_lock.  Three runs of
# three hung before the fix.  The recorder also registers its fork handlers
# first in the preload library's constructor, before anything there calls
# the program's allocator (which registers its handlers at its first call),
# so its prepare handler runs after the allocator's.
#
# tests/helpers/plain_ownalloc.c with PLAIN_OWNALLOC_BINS=1 and
# PLAIN_OWNALLOC_FORK=1: the main thread forks 40 times a round while the
# workers allocate and a hog holds the bin lock.  Each of three runs must
# end within 60 s with status 0, "forks 120" and "done", and its recording
# must be whole: every worker's thread, waits on the allocator's locks.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_ownalloc" "$bin/rec-record" "$bin/rec-print"
command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }

for run in 1 2 3; do
	out=$tmp/run$run
	rc=0
	PLAIN_OWNALLOC_BINS=1 PLAIN_OWNALLOC_FORK=1 timeout -k 5 60 "$bin/rec-record" -o "$out.rec" -- \
		"$tests/plain_ownalloc" 3 4 2000 >"$out.out" 2>"$out.err" || rc=$?
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		fail "run $run: hung (killed after 60 s)"
		pkill -KILL -f "$tests/plain_ownalloc" 2>/dev/null
		continue
	fi
	[ "$rc" = 0 ] || fail "run $run: exit status $rc: $(tail -3 "$out.err")"
	grep -qx "forks 120" "$out.out" || fail "run $run: not 120 forks: $(grep forks "$out.out")"
	grep -qx done "$out.out" || fail "run $run: the program did not finish"
	"$bin/rec-print" --json "$out.rec" >"$out.json" 2>"$out.perr" || fail "run $run: rec-print: $(cat "$out.perr")"
	python3 - "$out.json" "$out.out" <<'PY' || fail "run $run: the recording does not show the run"
import json, sys
ev = json.load(open(sys.argv[1]))["recording"]["events"]
out = open(sys.argv[2]).read().split("\n")
workers = {int(l.split()[1]) for l in out if l.startswith("tid ")}
starts = {e["values"]["osThreadId"] for e in ev if e["type"] == "rec.ThreadStart"}
waits = [e for e in ev if e["type"] == "rec.LockWait"]
bad = []
if len(workers) != 12:
    bad.append("the program reported %d workers, not 12" % len(workers))
missing = workers - starts
if missing:
    bad.append("workers without rec.ThreadStart: %s" % sorted(missing))
alloc = [w for w in waits if w["values"].get("lockName") == "heap_lock"
         or str(w["values"].get("lockName", "")).startswith("0x")]
if not alloc:
    holds = [l.split()[3] for l in out if l.startswith("hog ")]
    bad.append("no lock wait on heap_lock or the bin lock: %d waits (on %s); the hog held the bin lock %s times"
               % (len(waits), sorted({str(w["values"].get("lockName")) for w in waits}), holds))
for b in bad:
    print("FAIL:", b)
print("%d workers recorded, %d lock waits, %d on the allocator's locks" % (len(workers - missing), len(waits), len(alloc)))
sys.exit(1 if bad else 0)
PY
done
cli_done preload_alloc_fork
