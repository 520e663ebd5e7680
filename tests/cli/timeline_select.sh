#!/usr/bin/env bash
# rec-timeline selects like the other tools and draws the process as tracks:
#   - --events (names and globs; a name the file lacks is a usage error, also
#     from a pipe), --from/--to (offsets from the first event and wall times,
#     the same window both ways), --thread (a name glob or an OS tid), on the
#     deterministic recording of rec_test_timeline_gen, whose event times are
#     known: counter 0 us, app.Request 1234.567, lock wait 1500, app.Mark
#     3000.003, gauge and counter 4000, app.Tick 5000;
#   - rec.ProcessStats of a real process (rec_test_counting under REC_OUTPUT:
#     a sample at open and one at close) as the counter tracks "process rss",
#     "process threads" and "process cpu %" with the values rec-print --json
#     gives (cpu % = the cumulative CPU's increase over the wall time between
#     the two samples), the instant with every field kept;
#   - the process track named by the program: rec.Process (its executable and
#     command line in the args);
#   - usage errors exit 2: mixed offset and time, --to not after --from,
#     offsets on standard input, an empty --thread.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
need_exe "$bin/rec-timeline" "$bin/rec-print" "$tests/rec_test_timeline_gen" "$tests/rec_test_counting"
export TZ=UTC

"$tests/rec_test_timeline_gen" "$tmp/t.rec" || fail "rec_test_timeline_gen failed"

# names: the non-metadata events' names of a trace, in order, on one line
names() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(e["name"] for e in d["traceEvents"] if e["ph"] != "M"))' "$1"
}

# sel WANT ARGS...: rec-timeline ARGS on t.rec names exactly WANT
sel() {
	local want=$1
	shift
	"$bin/rec-timeline" "$@" "$tmp/t.rec" >"$tmp/sel.json" 2>"$tmp/sel.err" ||
		{ fail "rec-timeline $*: exit $? ($(cat "$tmp/sel.err"))"; return; }
	local got
	got=$(names "$tmp/sel.json")
	[ "$got" = "$want" ] || fail "rec-timeline $*: '$got', want '$want'"
}

sel "app.Request" --events app.Request
sel "app.Request app.Mark app.Tick" --events 'app.*'
sel "app.Request app.Tick" --events app.Request --events app.Tick
sel "app.Request app.Tick" --events app.Request,app.Tick
sel "big-lock app.Mark" --from 1.4ms --to 3.1ms
sel "big-lock app.Mark" --from 2023-11-14T22:13:25.0014Z --to 2023-11-14T22:13:25.0031Z
sel "app.Mark app.Tick" --from 3ms --events 'app.*'
sel "app.Request" --to 1.4ms --events 'app.*'
sel "big-lock app.Mark" --thread worker-b
sel "big-lock app.Mark" --thread 'worker-[b]'
sel "app.Request" --thread 501
sel "" --thread nobody

# a name the file does not have: exit 2 naming the types it has, nothing written
rc=0
"$bin/rec-timeline" --events app.Bogus "$tmp/t.rec" >"$tmp/bogus.out" 2>"$tmp/bogus.err" || rc=$?
[ "$rc" = 2 ] || fail "--events app.Bogus: exit $rc, want 2"
grep -q "app.Bogus" "$tmp/bogus.err" && grep -q "app.Request" "$tmp/bogus.err" ||
	fail "--events app.Bogus: message does not name it and the file's types: $(cat "$tmp/bogus.err")"
[ ! -s "$tmp/bogus.out" ] || fail "--events app.Bogus wrote output"
rc=0
"$bin/rec-timeline" --events app.Bogus - <"$tmp/t.rec" >/dev/null 2>"$tmp/bogus2.err" || rc=$?
[ "$rc" = 2 ] || fail "--events app.Bogus from a pipe: exit $rc, want 2"

# usage errors
for args in "--from 1ms --to 2023-11-14T22:13:25Z" "--from 3ms --to 2ms" "--thread=" \
	"--from soon"; do
	rc=0
	# shellcheck disable=SC2086 # the words are the arguments
	"$bin/rec-timeline" $args "$tmp/t.rec" </dev/null >/dev/null 2>"$tmp/usage.err" || rc=$?
	[ "$rc" = 2 ] || fail "rec-timeline $args: exit $rc, want 2 ($(cat "$tmp/usage.err"))"
done

rc=0
"$bin/rec-timeline" --from 1ms - <"$tmp/t.rec" >/dev/null 2>"$tmp/usage.err" || rc=$?
[ "$rc" = 2 ] && grep -q "standard input" "$tmp/usage.err" ||
	fail "rec-timeline --from 1ms - (offsets on a pipe): exit $rc ($(cat "$tmp/usage.err"))"

# rec.ProcessStats of a real process as counter tracks
REC_OUTPUT="$tmp/p.rec" "$tests/rec_test_counting" work=200000 || fail "rec_test_counting: exit $?"
"$bin/rec-timeline" "$tmp/p.rec" >"$tmp/p.json" || fail "rec-timeline p.rec: exit $?"
"$bin/rec-print" --json --events rec.ProcessStats "$tmp/p.rec" >"$tmp/p.print.json" ||
	fail "rec-print p.rec: exit $?"
python3 - "$tmp/p.json" "$tmp/p.print.json" <<'EOF' || fail "process tracks"
import calendar, json, re, sys, time
tr = json.load(open(sys.argv[1]))
pr = [e["values"] for e in json.load(open(sys.argv[2]))["recording"]["events"]]
base = int(tr["metadata"]["recordingStartWallNs"])
def ns(iso):
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{9})Z", iso)
    return calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")) * 10**9 + int(m.group(2))
assert len(pr) >= 2, pr
ev = tr["traceEvents"]
def track(name):
    return [(e["ts"], e["args"]["value"]) for e in ev if e["ph"] == "C" and e["name"] == name]
ts = [round((ns(v["startTime"]) - base) / 1000, 3) for v in pr]
assert track("process rss") == [(t, v["rss"]) for t, v in zip(ts, pr)], (track("process rss"), pr)
assert track("process threads") == [(t, v["threads"]) for t, v in zip(ts, pr)], track("process threads")
cpu = track("process cpu %")
assert len(cpu) == len(pr) - 1, cpu
for i, (t, pct) in enumerate(cpu):
    a, b = pr[i], pr[i + 1]
    want = (b["cpuUser"] + b["cpuSystem"] - a["cpuUser"] - a["cpuSystem"]) * 100.0 / \
        (ns(b["startTime"]) - ns(a["startTime"]))
    assert t == ts[i + 1] and abs(pct - want) <= 1e-6 * max(1.0, want), (t, pct, want)
# the process track is named by the program (rec.Process), after any "pid N"
pn = [e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"]
assert pn and pn[-1] == "rec_test_counting" and set(pn) <= {"rec_test_counting", "pid %d" % ev[0]["pid"]}, pn
procs = [e for e in ev if e["name"] == "rec.Process"]
assert procs and all(p["args"]["program"] == "rec_test_counting" and
                     p["args"]["executable"].endswith("/rec_test_counting") and
                     p["args"]["commandLine"].endswith("rec_test_counting work=200000")
                     for p in procs), procs
inst = [e for e in ev if e["name"] == "rec.ProcessStats"]
assert len(inst) == len(pr) and all(e["ph"] == "i" and e["s"] == "p" for e in inst), inst
assert [e["args"]["rss"] for e in inst] == [v["rss"] for v in pr]
EOF

cli_done timeline_select
