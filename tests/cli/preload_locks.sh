#!/usr/bin/env bash
# The preload library's other locks (tests/helpers/plain_locks.c, built
# without librec): rec.LockOrder lock_a -> lock_b named by their symbols,
# none for lock_b -> lock_a taken by a trylock, and lock_b -> lock_c and
# lock_a -> lock_c for lock_c taken while holding both;
# the main thread's read-lock wait on config_rwlock behind thread "writer"
# (lockKind 1, the writer's tid as the holder, the duration the program
# measured itself); a condition wait through glibc's old GLIBC_2.2.5
# pthread_cond_wait (the program works: cond_ok 1; rec.CondWait of ~250 ms
# in thread "sleeper" on old_cond_lock); and under 4 threads hammering one
# mutex, every wait names another hammer thread as its holder (at most 2 %
# none: the instant the owner field is 0 as the lock changes hands).
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_locks" "$bin/rec-print"

preloaded locks "$tmp/l.rec" "" "$tests/plain_locks"
[ "$rc" = 0 ] || fail "plain_locks exit $rc: $(cat "$tmp/locks.err")"
[ "$(value locks cond_ok)" = 1 ] || fail "the old condition variable did not work"
"$bin/rec-print" --json "$tmp/l.rec" >"$tmp/l.json" || fail "rec-print failed"
python3 - "$tmp/l.json" "$(value locks main_tid)" "$(value locks writer_tid)" \
	"$(value locks sleeper_tid)" "$(value locks rd_wait_ms)" <<'PY' ||
import json, sys
path, main, writer, sleeper, rd_ms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
ev = json.load(open(path))["recording"]["events"]
of = lambda t: [e["values"] for e in ev if e["type"] == t]
bad = []
lo = [(o["heldName"], o["acquiredName"]) for o in of("rec.LockOrder")]
if sorted(lo) != [("lock_a", "lock_b"), ("lock_a", "lock_c"), ("lock_b", "lock_c")]:
    bad.append("lock order %s" % lo)
rw = [w for w in of("rec.LockWait") if w["lockName"] == "config_rwlock"]
if len(rw) != 1: bad.append("rwlock waits %s" % of("rec.LockWait"))
else:
    w = rw[0]
    if w["lockKind"] != 1 or w["holderOsThreadId"] != writer or w["eventThread"]["tid"] != main:
        bad.append("rwlock wait %s" % w)
    if abs(w["duration"] / 1e6 - rd_ms) > 5 or rd_ms < 100: bad.append("rwlock wait %.1f ms, measured %.1f" % (w["duration"] / 1e6, rd_ms))
cw = [c for c in of("rec.CondWait") if c["eventThread"]["tid"] == sleeper]
if len(cw) != 1 or cw[0]["mutexName"] != "old_cond_lock" or not (200 <= cw[0]["duration"] / 1e6 < 3000):
    bad.append("old cond waits %s" % cw)
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
	fail "the recording does not tell what the program did"

# Every wait names a thread that held the lock: 4 threads hammering one mutex
# (plain_locks hammer), every contended wait recorded (threshold 0); rounds
# until 300 waits.  The owner glibc keeps is 0 for an instant as the lock
# changes hands; the preload reads it again then (REC_HOLDER_REREADS).
# Under valgrind (one thread runs at a time) fewer waits: at least 30.
: >"$tmp/hammer.tsv"
for round in 1 2 3 4 5 6 7 8 9 10; do
	preloaded hammer "$tmp/h$round.rec" 'events=*;rec.LockWait:threshold=0:stack=off' "$tests/plain_locks" hammer
	[ "$rc" = 0 ] || fail "plain_locks hammer exit $rc: $(cat "$tmp/hammer.err")"
	"$bin/rec-print" --json --events rec.LockWait "$tmp/h$round.rec" >"$tmp/h.json" || fail "rec-print failed"
	python3 - "$tmp/h.json" "$(value hammer hammer_tid | cut -d' ' -f2 | tr '\n' ' ')" >>"$tmp/hammer.tsv" <<'PY' ||
import json, sys
tids = {int(t) for t in sys.argv[2].split()}
ws = [e["values"] for e in json.load(open(sys.argv[1]))["recording"]["events"] if e["values"]["lockName"] == "hammer_lock"]
unknown = sum(1 for w in ws if w["holderOsThreadId"] == 0)
wrong = sum(1 for w in ws if w["holderOsThreadId"] != 0 and (w["holderOsThreadId"] not in tids or w["holderOsThreadId"] == w["eventThread"]["tid"]))
print(len(ws), unknown, wrong)
PY
		fail "the hammer's waits could not be read"
	[ "$(awk '{ n += $1 } END { print n + 0 }' "$tmp/hammer.tsv")" -ge 300 ] && break
done
read -r waits unknown wrong < <(awk '{ n += $1; u += $2; w += $3 } END { print n + 0, u + 0, w + 0 }' "$tmp/hammer.tsv")
echo "hammer_lock: $waits waits, $unknown with no holder, $wrong naming a wrong one"
[ "$waits" -ge 30 ] || fail "the hammer made only $waits recorded waits"
[ "$wrong" = 0 ] || fail "$wrong waits name a holder that is not another hammer thread"
# Measured: 64 of 820 (7.8 %) without the rereads, 0-2 of 326-820 with them
[ $((unknown * 50)) -le "$waits" ] || fail "$unknown of $waits waits have no holder (more than 2 %)"
cli_done preload_locks
