#!/usr/bin/env bash
# A program with its own allocator, recorded by rec-record, must not hang
# (issue 18, "It must not break the program"; tests/helpers/plain_ownalloc.c):
# its malloc/free stand before glibc's, guarded by a pthread mutex
# (heap_lock) that the preload library's interposers see, as they see
# jemalloc's in redis-server.  6 rounds of 8 new threads each (they wait on a
# condition variable for their round to start) run 3000 iterations: a new
# task lock, malloc and free under it (a new rec.LockOrder pair and a new
# lock name to intern each time).  Before the fix it hung (a thread
# interning a string under the recorder's lock called malloc, which waited
# for heap_lock, held by a thread whose lock bookkeeping waited for the
# recorder's lock): 9 of 10 runs of this program hung, measured on 2 loaded
# cores, and this script failed there with 3 of its 5 runs hung.  Here 5
# runs, each must end within 60 s (a hang: its threads' stacks are printed,
# then it is killed) with the program's exit status 0, "done", and every
# worker's 3000 iterations; each recording closed, with one rec.LockOrder
# task lock -> heap_lock per iteration of each worker (distinct task lock
# addresses; an event lost is in rec.Dropped, counted against it) up to
# the lock classes' bound: 64 distinct pairs per pair of call sites
# (lock_wrap.c), so the first 64 iterations for each heap_lock call site of
# the allocator that the iterations reach (malloc's and free's, at most 4).
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_ownalloc" "$bin/rec-record" "$bin/rec-print"
command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }

ROUNDS=6 WORKERS=8 ITERS=3000 RUNS=5 LIMIT=60
for run in $(seq 1 $RUNS); do
	out=$tmp/run$run
	"$bin/rec-record" -o "$out.rec" -- "$tests/plain_ownalloc" $ROUNDS $WORKERS $ITERS \
		>"$out.out" 2>"$out.err" &
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
			eu-stack -p "$prog" 2>&1 | grep -E '^TID|^#' | head -80
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
	"$bin/rec-print" --json "$out.rec" >"$out.json" || { fail "run $run: rec-print failed"; continue; }
	python3 - "$out.json" "$out.out" "$ITERS" $((ROUNDS * WORKERS)) <<'PY' || fail "run $run: the recording does not tell what the program did"
import collections, json, sys
path, outp, iters, nworkers = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
done = {}
for line in open(outp):
    f = line.split()
    if f and f[0] == "tid":
        done[int(f[1])] = int(f[3])
rec = json.load(open(path))["recording"]
ev = rec["events"]
bad = []
if len(done) != nworkers or any(n != iters for n in done.values()):
    bad.append("workers %d, iterations %s" % (len(done), sorted(set(done.values()))))
held = collections.defaultdict(set)
for e in ev:
    if e["type"] != "rec.LockOrder":
        continue
    v = e["values"]
    if v["acquiredName"] == "heap_lock" and v["heldName"].startswith("0x"):
        held[v["eventThread"]["tid"]].add(v["heldAddress"])
dropped = collections.Counter()  # rec.LockOrder (type 17) lost, by thread
for e in ev:
    if e["type"] == "rec.Dropped" and e["values"]["type"] == 17:
        t = e["values"]["thread"]
        dropped[t.get("tid") if isinstance(t, dict) else t] += e["values"]["count"]
BOUND, SITES = 64, 4  # lock_wrap.c's ORDER_PER_CLASSES; heap_lock's call sites
for tid, n in done.items():
    got = len(held.get(tid, ()))
    if got > min(n, SITES * BOUND) or got + dropped.get(tid, 0) < min(n, BOUND):
        bad.append("thread %d: %d task locks in rec.LockOrder, %d dropped, %d iterations" %
                   (tid, got, dropped.get(tid, 0), n))
for b in bad[:10]:
    print("FAIL:", b)
print("workers %d, rec.LockOrder task->heap_lock %d, dropped %d" %
      (len(done), sum(len(s) for s in held.values()), sum(dropped.values())))
sys.exit(1 if bad else 0)
PY
done
cli_done preload_deadlock
