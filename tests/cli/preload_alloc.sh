#!/usr/bin/env bash
# The preload library samples every allocation of a program that knows
# nothing of rec (tests/helpers/plain_alloc.c, built without librec: 4
# threads through malloc, calloc, realloc, posix_memalign, aligned_alloc,
# memalign and valloc, a constructor that mallocs before main, dlsym and
# dlerror allocating inside libdl) with REC_OPTIONS=alloc=64KiB:
#   - the rec.Alloc weights sum to the bytes the program says it asked for,
#     plus what libc allocated on its behalf (stdio's buffer, dlerror's
#     message): at most 64 KiB more, never less;
#   - every rec.Free is of a sampled block (same address and size, after it);
#   - the sampled blocks still allocated at exit, by weight, estimate the
#     8 MiB the program kept: within 30 % (about 128 samples at 64 KiB: the
#     standard error is ~9 %);
#   - the threads are named as they named themselves.
# Then alloc=0 (sampling off): no rec.Alloc at all.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_alloc" "$bin/rec-print"

preloaded alloc "$tmp/a.rec" alloc=64KiB "$tests/plain_alloc"
[ "$rc" = 0 ] || fail "plain_alloc exit $rc: $(cat "$tmp/alloc.err")"
[ -s "$tmp/alloc.err" ] && fail "stderr: $(cat "$tmp/alloc.err")"
"$bin/rec-print" --json "$tmp/a.rec" >"$tmp/a.json" || fail "rec-print failed"
python3 - "$tmp/a.json" "$(value alloc allocated)" "$(value alloc live)" <<'PY' ||
import json, sys
path, allocated, live = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ev = json.load(open(path))["recording"]["events"]
ev.sort(key=lambda e: e["values"]["startTime"])
bad = []
weight = sum(e["values"]["weight"] for e in ev if e["type"] == "rec.Alloc")
if not (allocated <= weight <= allocated + 65536):
    bad.append("weights sum to %d, the program allocated %d" % (weight, allocated))
blocks = {}
for e in ev:
    v = e["values"]
    if e["type"] == "rec.Alloc" and v["address"]:
        blocks[v["address"]] = v
    elif e["type"] == "rec.Free":
        a = blocks.pop(v["address"], None)
        if a is None or a["size"] != v["size"] or not v["sampled"]:
            bad.append("rec.Free of a block not sampled: %s" % v)
est = sum(v["weight"] for v in blocks.values())
if abs(est - live) > 0.3 * live:
    bad.append("live sampled blocks weigh %d, the program kept %d" % (est, live))
names = sorted(e["values"]["name"] for e in ev if e["type"] == "rec.ThreadStart")
for n in ("alloc-0", "alloc-1", "alloc-2", "alloc-3"):
    if n not in names: bad.append("no thread %s in %s" % (n, names))
print("allocated %d, weights %d; live %d, estimated %d" % (allocated, weight, live, est))
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
	fail "the allocations recorded are not the program's"

preloaded off "$tmp/off.rec" alloc=0 "$tests/plain_alloc"
[ "$rc" = 0 ] || fail "alloc=0: exit $rc: $(cat "$tmp/off.err")"
n=$("$bin/rec-print" --json "$tmp/off.rec" | grep -c '"type": "rec.Alloc"')
[ "$n" = 0 ] || fail "alloc=0 recorded $n rec.Alloc"
cli_done preload_alloc
