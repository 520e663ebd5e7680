#!/usr/bin/env bash
# The tools on a real program's built-in allocation and wait events
# (tests/helpers/rec_test_builtin_waits: sampled rec_malloc & co. on four
# threads, a condition wait, a timed condition wait, a sleep):
#   - rec-flame --event rec.Alloc weighs by the weight field, so its total
#     is the bytes the program allocated, short only by the threads' tails
#     (the bytes after each thread's last sample: recorded without a stack,
#     so in no flame graph).  Stated error: under 12 x the 64 KiB sampling
#     interval per allocating thread (the odds of one tail being larger are
#     e^-12, about 6e-6) plus 1/50 of the samples (an insert into the
#     recorder's stack table may give up under contention: no stack).  The
#     size-weighted total of the old default is ~2.6 % of the bytes;
#   - the rec.Alloc weights in the file (rec-print --json), tails included,
#     sum to exactly the bytes allocated;
#   - the condition waits are rec.CondWait, not rec.Sleep: rec-flame
#     --event rec.CondWait weighs them by duration (ns) and shows the
#     waiting function, rec.Sleep shows only the sleep; rec-timeline has
#     them as slices ("X") on the waiting thread's track; rec-print prints
#     their fields.
set -euo pipefail
for v in REC_BIN:bin REC_TESTS:tests; do
	n=${v%%:*} sub=${v#*:}
	if [ ! -d "${!n:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/$sub" ]; then export "$n=$BUILD/$sub"; fi
done
bin=${REC_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

rec="$tmp/w.rec"
"${REC_TESTS:?}/rec_test_builtin_waits" "$rec" >"$tmp/prog.out"
bytes=$(awk '$1 == "bytes" { print $2 }' "$tmp/prog.out")
[ -n "$bytes" ] || { echo "FAIL: the program printed no byte count"; exit 1; }

# ---- rec.Alloc: the flame graph's total ------------------------------------------
"$bin/rec-flame" --event rec.Alloc "$rec" >"$tmp/alloc.folded" 2>"$tmp/err" || fail "rec-flame rec.Alloc: exit $?"
[ -s "$tmp/err" ] && { fail "rec-flame rec.Alloc: stderr"; cat "$tmp/err"; }
flame_total=$(awk '{ s += $NF } END { printf "%d", s }' "$tmp/alloc.folded")
"$bin/rec-print" --json --events rec.Alloc "$rec" >"$tmp/alloc.json" || fail "rec-print --json: exit $?"
python3 - "$tmp/alloc.json" "$bytes" "$flame_total" <<'EOF' || fail "rec.Alloc totals"
import json, sys
doc = json.load(open(sys.argv[1]))
bytes_, flame = int(sys.argv[2]), int(sys.argv[3])
evs = [e for e in doc["recording"]["events"] if e["type"] == "rec.Alloc"]
weights = sum(e["values"]["weight"] for e in evs)
sizes = sum(e["values"]["size"] for e in evs)
tails = [e for e in evs if e["values"]["size"] == 0]
samples = len(evs) - len(tails)
threads = 4
bound = threads * 12 * 65536 + (samples // 50 + 1) * 12 * 65536
print("bytes %d, weights in the file %d, flame total %d (%.3f %% short), sizes %d, "
      "%d samples, %d tails" % (bytes_, weights, flame, 100.0 * (bytes_ - flame) / bytes_,
                                sizes, samples, len(tails)))
ok = True
if weights != bytes_:
    print("FAIL: the weights sum to %d, not the %d bytes allocated" % (weights, bytes_)); ok = False
if flame > bytes_ or bytes_ - flame > bound:
    print("FAIL: flame total %d is not within %d below %d bytes" % (flame, bound, bytes_)); ok = False
for t in tails:
    v = t["values"]
    st = v.get("stackTrace")
    if v["address"] != 0 or not v["sampled"] or (st and st.get("frames")):
        print("FAIL: a tail record with an address or a stack: %r" % v); ok = False
sys.exit(0 if ok else 1)
EOF
grep -q ';alloc_large ' "$tmp/alloc.folded" || fail "rec.Alloc flame: no alloc_large stack"
grep -q ';alloc_small ' "$tmp/alloc.folded" || fail "rec.Alloc flame: no alloc_small stack"
# --weight size still gives the sampled allocations' own sizes.
"$bin/rec-flame" --event rec.Alloc --weight size "$rec" >"$tmp/size.folded" || fail "--weight size: exit $?"
size_total=$(awk '{ s += $NF } END { printf "%d", s }' "$tmp/size.folded")
[ "$size_total" -lt $((flame_total / 10)) ] || fail "--weight size total $size_total is not the sizes"

# ---- condition waits: their own type -----------------------------------------------
"$bin/rec-flame" --event rec.CondWait "$rec" >"$tmp/cond.folded" || fail "rec-flame rec.CondWait: exit $?"
cat "$tmp/cond.folded"
[ "$(wc -l <"$tmp/cond.folded")" -eq 1 ] || fail "rec.CondWait flame: not one stack"
grep -q ';wait_for_work [0-9]*$' "$tmp/cond.folded" || fail "rec.CondWait flame: not wait_for_work"
cond_ns=$(awk '{ s += $NF } END { printf "%d", s }' "$tmp/cond.folded")
# 50 ms until signalled + the 20 ms timeout (less the few us before the timed wait starts)
[ "$cond_ns" -ge 69000000 ] && [ "$cond_ns" -lt 2000000000 ] || fail "rec.CondWait weight $cond_ns ns"
"$bin/rec-flame" --event rec.Sleep "$rec" >"$tmp/sleep.folded" || fail "rec-flame rec.Sleep: exit $?"
cat "$tmp/sleep.folded"
grep -q 'wait_for_work' "$tmp/sleep.folded" && fail "rec.Sleep flame has the condition wait"
grep -q ';sleep_a_while [0-9]*$' "$tmp/sleep.folded" || fail "rec.Sleep flame: no sleep_a_while"
"$bin/rec-flame" --help | grep -q 'rec.CondWait   the event.s duration' || fail "--help: no rec.CondWait weight"
"$bin/rec-flame" --help | grep -q 'rec.Alloc      the weight field' || fail "--help: no rec.Alloc weight"

"$bin/rec-timeline" "$rec" >"$tmp/trace.json" || fail "rec-timeline: exit $?"
python3 - "$tmp/trace.json" <<'EOF' || fail "rec-timeline slices"
import json, sys
doc = json.load(open(sys.argv[1]))
evs = doc["traceEvents"] if isinstance(doc, dict) else doc
names = {e["args"]["name"]: e["tid"] for e in evs if e.get("ph") == "M" and e.get("name") == "thread_name"}
cond = [e for e in evs if e.get("name") == "rec.CondWait"]
sleep = [e for e in evs if e.get("name") == "rec.Sleep"]
ok = len(cond) == 2 and len(sleep) == 1
ok = ok and all(e["ph"] == "X" and e["tid"] == names.get("waiter") for e in cond)
ok = ok and sleep[0]["tid"] == names.get("sleeper") and "kind" in sleep[0]["args"]
ok = ok and sorted(e["args"]["timedOut"] for e in cond) == [False, True]
ok = ok and all(e["args"]["mutexName"] == "work-queue" for e in cond)
print("rec-timeline: %d rec.CondWait, %d rec.Sleep slices" % (len(cond), len(sleep)))
sys.exit(0 if ok else 1)
EOF

"$bin/rec-print" --events rec.CondWait "$rec" >"$tmp/cond.txt" || fail "rec-print rec.CondWait: exit $?"
[ "$(grep -c '^rec.CondWait {' "$tmp/cond.txt")" -eq 2 ] || fail "rec-print: not two rec.CondWait"
grep -q 'mutexName = "work-queue"' "$tmp/cond.txt" || fail "rec-print: no mutexName"
grep -q 'timedOut = true' "$tmp/cond.txt" || fail "rec-print: no timed-out wait"
"$bin/rec-print" --events rec.Sleep "$rec" >"$tmp/sleep.txt" || fail "rec-print rec.Sleep: exit $?"
[ "$(grep -c '^rec.Sleep {' "$tmp/sleep.txt")" -eq 1 ] || fail "rec-print: not one rec.Sleep"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "flame_builtins: ok"
