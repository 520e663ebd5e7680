#!/usr/bin/env bash
# The preload library records a program that knows nothing of rec
# (tests/helpers/plain_waits.c, built without librec) through plain pthread
# and libc calls: the main thread's wait for the global quote_cache_lock
# (rec.LockWait: about the 300 ms the program measured itself, the holder's
# tid as the program printed it, the lock's address and its symbol name, the
# stack in main), the holder's 300 ms nanosleep inside the lock and the main
# thread's usleep and clock_nanosleep (rec.Sleep, requested times exact),
# the waiter's pthread_cond_wait (~200 ms, untimed) and
# pthread_cond_timedwait (timed out after ~100 ms) as rec.CondWait, the
# threads named as they named themselves; nothing of the recorder's own
# (its writer thread has no waits).
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_waits" "$bin/rec-print"

preloaded waits "$tmp/w.rec" "" "$tests/plain_waits"
[ "$rc" = 0 ] || fail "plain_waits exit $rc: $(cat "$tmp/waits.err")"
[ -s "$tmp/waits.err" ] && fail "stderr: $(cat "$tmp/waits.err")"
"$bin/rec-print" --json "$tmp/w.rec" >"$tmp/w.json" || fail "rec-print failed"

python3 - "$tmp/w.json" "$(value waits main_tid)" "$(value waits holder_tid)" \
	"$(value waits waiter_tid)" "$(value waits lock_wait_ms)" "$(value waits lock_addr)" <<'PY' ||
import json, sys
path, main, holder, waiter, wait_ms, addr = sys.argv[1:]
main, holder, waiter, wait_ms, addr = int(main), int(holder), int(waiter), float(wait_ms), int(addr, 16)
ev = json.load(open(path))["recording"]["events"]
bad = []
def of(t, tid=None):
    return [e["values"] for e in ev if e["type"] == t and
            (tid is None or e["values"]["eventThread"]["tid"] == tid)]
def frames(v):
    return [f["function"] for f in v.get("stackTrace", {}).get("frames", [])] if v.get("stackTrace") else []
ms = lambda ns: ns / 1e6

waits = of("rec.LockWait")
lw = [w for w in waits if w["lockAddress"] == addr]
if len(lw) != 1:
    bad.append("want 1 rec.LockWait on quote_cache_lock, got %d (%s)" % (len(lw), waits))
else:
    w = lw[0]
    if w["eventThread"]["tid"] != main: bad.append("wait thread %s, want main %d" % (w["eventThread"], main))
    if w["holderOsThreadId"] != holder: bad.append("holder %d, want %d" % (w["holderOsThreadId"], holder))
    if w["lockName"] != "quote_cache_lock": bad.append("lock name %r" % w["lockName"])
    if abs(ms(w["duration"]) - wait_ms) > 5: bad.append("wait %.1f ms, the program measured %.1f" % (ms(w["duration"]), wait_ms))
    if not (250 <= wait_ms <= 1000): bad.append("the program waited %.1f ms (sleep 300 inside)" % wait_ms)
    if frames(w)[:1] != ["main"]: bad.append("wait stack %s, want main first" % frames(w))

sl = of("rec.Sleep")
def sleep_of(tid, req_ms):
    return [s for s in sl if s["eventThread"]["tid"] == tid and s["requested"] == req_ms * 1000000]
for tid, req, fn in ((holder, 300, "holder"), (main, 50, "main"), (main, 60, "main")):
    s = sleep_of(tid, req)
    if len(s) != 1: bad.append("want one %d ms sleep in thread %d, got %s" % (req, tid, s)); continue
    if not (req <= ms(s[0]["duration"]) < req + 500): bad.append("%d ms sleep lasted %.1f ms" % (req, ms(s[0]["duration"])))
    if frames(s[0])[:1] != [fn]: bad.append("%d ms sleep stack %s, want %s first" % (req, frames(s[0]), fn))

cw = of("rec.CondWait", waiter)
untimed = [c for c in cw if not c["timed"]]
timed = [c for c in cw if c["timed"]]
if len(untimed) != 1 or len(timed) != 1:
    bad.append("want one untimed and one timed rec.CondWait in the waiter, got %s" % cw)
else:
    if not (150 <= ms(untimed[0]["duration"]) < 2000): bad.append("cond wait %.1f ms, want ~200" % ms(untimed[0]["duration"]))
    if untimed[0]["mutexName"] != "state_lock": bad.append("cond mutex %r" % untimed[0]["mutexName"])
    if not timed[0]["timedOut"] or not (99 <= ms(timed[0]["duration"]) < 1000):
        bad.append("timed wait %s" % timed[0])
    if not (90 <= ms(timed[0]["timeout"]) <= 100): bad.append("timeout %s" % timed[0]["timeout"])
names = {e["values"]["osThreadId"]: e["values"]["name"] for e in ev if e["type"] == "rec.ThreadStart"}
if names.get(holder) != "holder" or names.get(waiter) != "waiter":
    bad.append("thread names %s" % names)
writer = [t for t, n in names.items() if n == "rec-writer"]
for t in ("rec.LockWait", "rec.Sleep", "rec.CondWait", "rec.Alloc"):
    if any(v["eventThread"]["tid"] in writer for v in of(t)):
        bad.append("the recorder's own thread has %s events" % t)
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
	fail "the recording does not tell what the program did"

# Not recording: no REC_OUTPUT, the program runs the same and writes nothing.
rc=0
LD_PRELOAD="$preload" env -u REC_OUTPUT "$tests/plain_waits" >"$tmp/off.out" 2>"$tmp/off.err" || rc=$?
[ "$rc" = 0 ] && [ ! -s "$tmp/off.err" ] || fail "without REC_OUTPUT: exit $rc, $(cat "$tmp/off.err")"
cli_done preload_waits
