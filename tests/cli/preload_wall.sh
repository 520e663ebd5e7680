#!/usr/bin/env bash
# Wall-clock sampling (rec-record --wall HZ, rec.WallSample) of a program
# that knows nothing of rec (tests/helpers/plain_wall.c, built without
# librec), recorded at 1000 Hz (a 1 ms period):
#   - the program exits 0: none of its sleeps, polls, selects, epoll_waits,
#     reads, condition and lock waits saw EINTR or returned early, also in
#     its 2 s churn of 1 us sleeps and 0 ms polls (without the hand-off of
#     libfmt/record/wall_internal.h that churn gets several EINTR);
#   - its main thread's wall samples, by state and site, reconcile with the
#     times the program measured itself: nanosleep 300 ms in wall_sleep
#     (state sleep), poll 300 ms in wall_poll, select 200 ms in wall_select,
#     epoll_wait 250 ms in wall_epoll (poll), a read that waited 300 ms in
#     wall_read (io), a condition wait of 300 ms in wall_cond (cond), a lock
#     wait of 300 ms in wall_lock (lock), 400 ms on the CPU in wall_spin
#     (running), 2 s in wall_churn (sleep, poll and running together):
#     weight x period within 4 periods + 3 % of the step's time; the helper
#     threads' 300 ms sleeps likewise (also on a loaded machine: the
#     sampler counts on a fixed grid of ticks, so a late wake of its thread
#     moves no tick from one state to another);
#   - rec-view wall-by-site --json: each site's wall time and its split by
#     state equal the sums of the samples' weight x period (exactly), and
#     its SQL (rec-view --sql wall-by-site) in rec-sql gives the same rows;
#   - rec-flame --wall: the folded total equals the sum of weight x period of
#     every sample, and so does the wall tab of rec-report's HTML page (the
#     flame-wall graph's data);
#   - a program with its own SIGURG handler keeps it (the handler runs at
#     most once, for a signal sent just before it was installed), stderr says
#     the running samples are off, its 300 ms spin has none, its sleep is
#     still sampled;
#   - --wall 1001 and --wall x are refused before the program starts (exit 2).
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_wall" "$bin/rec-record" "$bin/rec-print" "$bin/rec-view" "$bin/rec-flame" \
	"$bin/rec-report"

rc=0
timeout 120 "$bin/rec-record" -q --wall 1000 -o "$tmp/w.rec" -- "$tests/plain_wall" \
	>"$tmp/w.out" 2>"$tmp/w.err" || rc=$?
[ "$rc" = 0 ] || fail "plain_wall under rec-record --wall 1000: exit $rc: $(cat "$tmp/w.out" "$tmp/w.err")"
grep -qx "eintr 0" "$tmp/w.out" && grep -qx "early 0" "$tmp/w.out" || fail "EINTR or early return: $(cat "$tmp/w.out")"
"$bin/rec-print" --json "$tmp/w.rec" >"$tmp/w.json" || fail "rec-print failed"
"$bin/rec-view" wall-by-site --json "$tmp/w.rec" >"$tmp/view.json" || fail "rec-view wall-by-site failed"
"$bin/rec-flame" --wall "$tmp/w.rec" >"$tmp/w.folded" || fail "rec-flame --wall failed"
"$bin/rec-sql" -f jsonl -e "$("$bin/rec-view" --sql wall-by-site)" "$tmp/w.rec" >"$tmp/sql.jsonl" ||
	fail "rec-view --sql wall-by-site in rec-sql failed"
"$bin/rec-report" -o "$tmp/w.html" "$tmp/w.rec" >/dev/null 2>"$tmp/report.err" || fail "rec-report -o: $(cat "$tmp/report.err")"

python3 - "$tmp" <<'PY' || fail "the wall samples do not reconcile (above)"
import collections, json, re, sys
d = sys.argv[1]
out = dict(l.split(" ", 1) for l in open(d + "/w.out").read().splitlines() if not l.startswith("helper "))
steps = {l.split()[1]: float(l.split()[2]) for l in open(d + "/w.out") if l.split()[0] in ("step", "helper")}
main = int(out["tid"])
ev = json.load(open(d + "/w.json"))["recording"]["events"]
ws = [e["values"] for e in ev if e["type"] == "rec.WallSample"]
bad = []
if not ws:
    print("no rec.WallSample"); sys.exit(1)
periods = {v["period"] for v in ws}
if periods != {1000000}: bad.append("periods %s, want 1 ms" % periods)
frames = lambda v: [f["function"] or "" for f in (v.get("stackTrace") or {}).get("frames", [])]
def ns(v): return v["weight"] * v["period"]
by = collections.Counter()      # (thread is main, function on the stack, state) -> ns
for v in ws:
    fs = frames(v)
    fn = next((f for f in fs if f.startswith("wall_") or f in ("late_writer", "cond_signaller", "lock_holder")), "?")
    by[(v["eventThread"]["tid"] == main, fn, v["state"])] += ns(v)
ms = lambda x: x / 1e6
def near(got_ms, want_ms, what):
    tol = 4 + 0.03 * want_ms
    if abs(got_ms - want_ms) > tol:
        bad.append("%s: %.1f ms of wall samples, want %.1f +- %.1f" % (what, got_ms, want_ms, tol))
    else:
        print("  %-32s %7.1f ms sampled, %7.1f ms measured" % (what, got_ms, want_ms))
for fn, state in (("wall_sleep", "sleep"), ("wall_poll", "poll"), ("wall_select", "poll"),
                  ("wall_epoll", "poll"), ("wall_read", "io"), ("wall_cond", "cond"),
                  ("wall_lock", "lock"), ("wall_spin", "running")):
    near(ms(by[(True, fn, state)]), steps[fn], "%s (%s)" % (fn, state))
    other = sum(x for (m, f, s), x in by.items() if m and f == fn and s != state)
    if ms(other) > 4: bad.append("%s: %.1f ms in other states" % (fn, ms(other)))
near(ms(sum(x for (m, f, s), x in by.items() if m and f == "wall_churn")), steps["wall_churn"], "wall_churn (all states)")
for fn in ("late_writer", "cond_signaller", "lock_holder"):
    near(ms(by[(False, fn, "sleep")]), steps[fn], fn + " (sleep)")
# rec-view wall-by-site = the samples' sums by site (the first frame)
site = collections.defaultdict(collections.Counter)
for v in ws:
    # the site is the first frame of real code: inlined functions are not sites
    fr = [f for f in (v.get("stackTrace") or {}).get("frames", []) if not f.get("inline")]
    if not fr: s = "[no stack]"
    elif fr[0]["function"]: s = fr[0]["function"].replace(";", ":")
    else: s = "%s+0x%x" % ((fr[0]["module"] or "").rsplit("/", 1)[-1], int(fr[0]["moduleOffset"], 16))
    site[s]["wall"] += ns(v); site[s][v["state"]] += ns(v); site[s]["samples"] += 1
rows = json.load(open(d + "/view.json"))["tables"][0]["rows"]
if len(rows) != len(site): bad.append("rec-view: %d rows, the samples have %d sites" % (len(rows), len(site)))
for r in rows:
    want = site.get(r["site"])
    if want is None: bad.append("rec-view: site %r not in the samples" % r["site"]); continue
    for col in ("samples", "wall", "running", "lock", "cond", "sleep", "io", "poll", "wait"):
        if r[col] != want[col]: bad.append("rec-view %s %s: %s, the samples say %s" % (r["site"], col, r[col], want[col]))
sql = [json.loads(l) for l in open(d + "/sql.jsonl")]
if len(sql) != len(rows): bad.append("rec-sql: %d rows, rec-view %d" % (len(sql), len(rows)))
for a, b in zip(rows, sql):
    for col in ("site", "samples", "wall", "running", "lock", "cond", "sleep", "io", "poll", "wait", "other"):
        if a[col] != b[col]: bad.append("row %s: rec-view %s %r, its SQL %r" % (a["site"], col, a[col], b[col]))
total = sum(ns(v) for v in ws)
folded = sum(int(l.rsplit(" ", 1)[1]) for l in open(d + "/w.folded"))
if folded != total: bad.append("rec-flame --wall total %d, the samples' weight x period %d" % (folded, total))
m = re.search(r'id="flame-wall".*?class="rec-flame-data">(.*?)</script>', open(d + "/w.html").read(), re.S)
if not m: bad.append("rec-report's page has no flame-wall graph")
elif json.loads(m.group(1))["total"] != total:
    bad.append("rec-report's wall tab total %s, want %d" % (json.loads(m.group(1))["total"], total))
print("  %d wall samples, %.1f ms in all; rec-flame, rec-report and rec-view agree" % (len(ws), ms(total)))
for b in bad: print("  " + b)
sys.exit(1 if bad else 0)
PY

# the program's own SIGURG handler: left alone (a signal sent just before it
# was installed may still reach it: at most 1), said once on stderr; no
# running samples after it, the sleep still sampled
rc=0
timeout 60 "$bin/rec-record" -q --wall 1000 -o "$tmp/u.rec" -- "$tests/plain_wall" own-sigurg \
	>"$tmp/u.out" 2>"$tmp/u.err" || rc=$?
[ "$rc" = 0 ] || fail "plain_wall own-sigurg: exit $rc: $(cat "$tmp/u.out" "$tmp/u.err")"
[ "$(cat "$tmp/u.err")" = "rec: the program sets its own SIGURG handler; wall-clock samples of running threads are off for the rest of the recording (waits are still sampled)" ] ||
	fail "own SIGURG handler: stderr '$(cat "$tmp/u.err")'"
"$bin/rec-print" --json "$tmp/u.rec" >"$tmp/u.json" || fail "rec-print (own-sigurg) failed"
python3 - "$tmp" <<'PY' || fail "own SIGURG handler (above)"
import json, sys
d = sys.argv[1]
out = dict(l.split(" ", 1) for l in open(d + "/u.out").read().splitlines())
ws = [e["values"] for e in json.load(open(d + "/u.json"))["recording"]["events"] if e["type"] == "rec.WallSample"]
run = sum(v["weight"] * v["period"] for v in ws if v["state"] in ("running", "wait")) / 1e6
slept = sum(v["weight"] * v["period"] for v in ws if v["state"] == "sleep") / 1e6
want = float(out["step"].split()[1])
print("  own SIGURG handler: it ran %s times; running %.1f ms sampled (300 ms spun), sleep %.1f ms (%.1f measured)"
      % (out["sigurg"], run, slept, want))
bad = int(out["sigurg"]) > 1 or run > 10 or abs(slept - want) > 4 + 0.03 * want
sys.exit(1 if bad else 0)
PY

for v in 1001 x; do
	rc=0
	"$bin/rec-record" --wall "$v" -o "$tmp/bad.rec" -- "$tests/plain_wall" >"$tmp/bad.out" 2>"$tmp/bad.err" || rc=$?
	[ "$rc" = 2 ] && grep -q "wall" "$tmp/bad.err" && [ ! -s "$tmp/bad.out" ] ||
		fail "--wall $v: exit $rc, want 2 before the program runs: $(cat "$tmp/bad.err")"
done
cli_done preload_wall
