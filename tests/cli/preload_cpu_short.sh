#!/usr/bin/env bash
# CPU sampling of short threads (rec-record --cpu 997, a 1 ms period) in a
# program that knows nothing of rec (tests/helpers/plain_short_threads.c):
# 100 threads of 1 ms of CPU each, then 10 of 10 ms, one after another.  The
# kernel checks CPU-time timers at its tick (4 ms at HZ=250), so without the
# sampler's tail (libfmt/record/sampler.c, tail_periods()) a thread lost
# the expiries after its last tick: the 1 ms threads showed almost none of
# their CPU, the 10 ms ones about 80 % (20 threads of 5 ms: 61 of 100 ms).
#   - per group, the rec.CPUSample periods x (1 + overruns) of its threads
#     reconcile with the CPU time the threads' own clocks counted (within 3
#     periods + 10 %: each thread's count is its CPU / period rounded up or
#     down at random);
#   - every sample of those threads has short_thread_main on its stack:
#     the tail's stack is short_thread_main alone, the others' go through
#     short_spin;
#   - rec-view threads --json shows each thread's CPU as the same sum.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_short_threads" "$bin/rec-record" "$bin/rec-print" "$bin/rec-view"

rc=0
timeout 120 "$bin/rec-record" -q --cpu 997 -o "$tmp/s.rec" -- "$tests/plain_short_threads" 100:1 10:10 \
	>"$tmp/s.out" 2>"$tmp/s.err" || rc=$?
[ "$rc" = 0 ] || fail "plain_short_threads under rec-record: exit $rc: $(cat "$tmp/s.out" "$tmp/s.err")"
"$bin/rec-print" --json "$tmp/s.rec" >"$tmp/s.json" || fail "rec-print failed"
"$bin/rec-view" threads --json "$tmp/s.rec" >"$tmp/threads.json" || fail "rec-view threads failed"

python3 - "$tmp" <<'PY' || fail "the short threads' CPU samples do not reconcile (above)"
import collections, json, sys
d = sys.argv[1]
group, own = {}, collections.Counter()
for l in open(d + "/s.out"):
    f = l.split()
    if f[0] == "thread":
        group[int(f[2])] = int(f[1])
        own[int(f[1])] += int(f[3])
ev = json.load(open(d + "/s.json"))["recording"]["events"]
got, per_tid, bad = collections.Counter(), collections.Counter(), []
tails = 0
for e in ev:
    if e["type"] != "rec.CPUSample":
        continue
    v = e["values"]
    tid = v["eventThread"]["tid"]
    if tid not in group:
        continue
    ns = v["period"] * (1 + v["overruns"])
    got[group[tid]] += ns
    per_tid[tid] += ns
    fs = [f["function"] or "" for f in (v.get("stackTrace") or {}).get("frames", [])]
    if fs == ["short_thread_main"]:
        tails += 1
    elif "short_thread_main" not in fs or "short_spin" not in fs:
        bad.append("a sample of thread %d with stack %s" % (tid, fs))
period = 1e9 / 997
for g in sorted(own):
    want, have = own[g], got[g]
    tol = 3 * period + 0.10 * want
    line = "group %d: %.1f ms sampled, %.1f ms counted by the threads" % (g, have / 1e6, want / 1e6)
    print("  " + line)
    if abs(have - want) > tol:
        bad.append(line + " (tolerance %.1f ms)" % (tol / 1e6))
if tails == 0:
    bad.append("no tail sample (stack short_thread_main alone)")
tab = json.load(open(d + "/threads.json"))["tables"][0]
keys = [c["key"] for c in tab["columns"]]
for row in tab["rows"]:
    r = dict(zip(keys, row)) if isinstance(row, list) else row
    if r["tid"] in per_tid and r["cpu"] != per_tid[r["tid"]]:
        bad.append("rec-view threads: tid %d CPU %s, samples %d" % (r["tid"], r["cpu"], per_tid[r["tid"]]))
print("  %d tail samples" % tails)
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
cli_done preload_cpu_short
