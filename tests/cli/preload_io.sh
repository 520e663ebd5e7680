#!/usr/bin/env bash
# Blocking I/O under the preload library (tests/helpers/plain_io.c, without
# librec): rec.IO for the read on a pipe that waited ~60 ms for 100 bytes
# (kind pipe), the accept that waited ~50 ms for the loopback client (kind
# socket, the client's 127.0.0.1:PORT as the program printed it) and the
# recv of its 5 bytes ~40 ms later (at least 81 ms after accept began); none for the 1000 short preads of a
# file (under the 10 ms threshold).  With REC_OPTIONS io=1s: none.  The
# stack starts at the program's main.  rec-view io-by-site's rows are those
# events summed by site and kind (main/socket: accept and recv, the longer
# one's peer; main/pipe: the read), as rec-print shows them; none at 1s.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$tests/plain_io" "$bin/rec-print" "$bin/rec-view"

check() { # NAME WANT(list of call names, in order)
	python3 - "$tmp/$1.json" "$(value "$1" client_port)" "$2" <<'PY'
import calendar, json, re, sys, time
path, port, want = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
def ns(iso):  # "2026-12-05T04:44:22.123456789Z" -> ns since the epoch
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z", iso)
    return calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")) * 10**9 + int((m.group(2) or "0").ljust(9, "0"))
ev = [e["values"] for e in json.load(open(path))["recording"]["events"] if e["type"] == "rec.IO"]
ev.sort(key=lambda v: v["startTime"])
bad = []
if [v["call"] for v in ev] != want: bad.append("calls %s, want %s" % ([(v["call"], v["duration"]) for v in ev], want))
expect = {"read": ("pipe", "", 100, 60), "accept": ("socket", "127.0.0.1:%d" % port, 0, 50),
          "recv": ("socket", "127.0.0.1:%d" % port, 5, 40)}
for v in ev:
    if v["call"] not in expect: continue
    kind, addr, nbytes, ms = expect[v["call"]]
    if (v["kind"], v["address"], v["bytes"], v["error"]) != (kind, addr, nbytes, 0):
        bad.append("%s: %s" % (v["call"], v))
    # recv waits for bytes the client sends 40 ms after it connected, which
    # is before accept returned (by a scheduling delay on a loaded machine):
    # its own wait may be shorter, so accept's start to recv's end is what
    # must hold the client's 50 + 40 ms
    if v["call"] == "recv":
        acc = [a for a in ev if a["call"] == "accept"]
        span = (ns(v["startTime"]) + v["duration"] - ns(acc[0]["startTime"])) / 1e6 if acc else 0
        if not (0.9 * 90 <= span and v["duration"] / 1e6 < ms + 1000):
            bad.append("recv lasted %.1f ms, %.1f ms after accept began" % (v["duration"] / 1e6, span))
    elif not (ms * 0.9 <= v["duration"] / 1e6 < ms + 1000):
        bad.append("%s lasted %.1f ms" % (v["call"], v["duration"] / 1e6))
    # functions inlined at the call (glibc's _FORTIFY_SOURCE wrapper of read is
    # one, "read [inlined]") are not the program's frames
    frames = [f["function"] for f in (v.get("stackTrace") or {}).get("frames", []) if not f["inline"]]
    if frames[:1] != ["main"]: bad.append("%s stack %s" % (v["call"], frames))
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
}

# io-by-site (rec-view --json) against the rec.IO events of rec-print --json
check_view() { # NAME
	python3 - "$tmp/$1.json" "$tmp/$1.view.json" <<'PY'
import json, sys
ev = [e["values"] for e in json.load(open(sys.argv[1]))["recording"]["events"] if e["type"] == "rec.IO"]
rows = json.load(open(sys.argv[2]))["tables"][0]["rows"]
want = {}
for v in sorted(ev, key=lambda v: v["startTime"]):
    w = want.setdefault(("main", v["kind"]), {"calls": 0, "bytes": 0, "total": 0, "max": -1, "address": None})
    w["calls"] += 1; w["bytes"] += v["bytes"]; w["total"] += v["duration"]
    if v["duration"] > w["max"]: w["max"], w["address"] = v["duration"], v["address"]
got = {(r["site"], r["kind"]): {k: r[k] for k in ("calls", "bytes", "total", "max", "address")} for r in rows}
if got != want:
    print("FAIL: io-by-site %s, the events give %s" % (got, want)); sys.exit(1)
if [r["total"] for r in rows] != sorted((r["total"] for r in rows), reverse=True):
    print("FAIL: rows not by total: %s" % rows); sys.exit(1)
PY
}

for run in "default::read accept recv" "t1s:io=1s:"; do
	name=${run%%:*} rest=${run#*:}
	opt=${rest%%:*} want=${rest#*:}
	preloaded "$name" "$tmp/$name.rec" "$opt" "$tests/plain_io" "$tmp/$name.file"
	[ "$rc" = 0 ] || fail "$name: exit $rc: $(cat "$tmp/$name.err")"
	[ "$(value "$name" pipe_bytes)" = 100 ] && [ "$(value "$name" recv_bytes)" = 5 ] ||
		fail "$name: the program's I/O went wrong: $(cat "$tmp/$name.out")"
	"$bin/rec-print" --json "$tmp/$name.rec" >"$tmp/$name.json" || fail "$name: rec-print failed"
	check "$name" "$want" || fail "$name: the rec.IO events are not the program's blocking calls"
	"$bin/rec-view" --json io-by-site "$tmp/$name.rec" >"$tmp/$name.view.json" ||
		fail "$name: rec-view io-by-site failed"
	check_view "$name" || fail "$name: rec-view io-by-site is not the sum of the rec.IO events"
done
cli_done preload_io
