#!/usr/bin/env bash
# Checks the tools' numbers against what the generator wrote (NAME.facts next
# to each recording), independently of the golden outputs:
#   - rec-summary --json: events, chunks, dropped, runs (id, pid, chunks, events,
#     how each ended), restarts, first/last event time, per-type counts; the
#     type counts add up to the total;
#   - rec-print --json and text: the number of events of each type equals the
#     generator's count (and rec-summary's); default order is by timestamp;
#   - damaged files: exactly the readable chunks' events come out, exit 1, and
#     stderr names the file, a chunk and the offset of the damage.
# Env: REC_BIN (tools), REC_DATA (default $REC_ROOT/testdata).
set -euo pipefail
# run.sh builds REC_BIN as $PWD/$BUILD/bin, which is wrong for an absolute BUILD.
for v in REC_BIN:bin REC_TESTS:tests; do
	n=${v%%:*} sub=${v#*:}
	if [ ! -d "${!n:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/$sub" ]; then export "$n=$BUILD/$sub"; fi
done
root=${REC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
data=${REC_DATA:-$root/testdata}
bin=${REC_BIN:?REC_BIN must point at the tools}
export TZ=UTC LC_ALL=C
export REC_BIN_DIR=$bin REC_DATA_DIR=$data
exec python3 - <<'PY'
import json, os, re, subprocess, sys

bin_dir = os.environ["REC_BIN_DIR"]
data = os.environ["REC_DATA_DIR"]
failures = []

def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)

def run(tool, *args, cwd):
    p = subprocess.run([os.path.join(bin_dir, tool), *args], cwd=cwd,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode("utf-8", "strict"), p.stderr.decode("utf-8", "replace")

def read_facts(path):
    f = {"types": {}, "type_bytes": {}, "runs": [], "chunks_at": []}
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        w = line.split()
        if w[0] == "type":
            f["types"][w[1]] = int(w[2])
            f["type_bytes"][w[1]] = int(w[4])
        elif w[0] == "run":
            r = {"run_id": w[1]}
            i = 2
            while i + 1 < len(w):
                r[w[i]] = w[i + 1]
                i += 2
            f["runs"].append(r)
        elif w[0] == "chunk":
            f["chunks_at"].append((int(w[2]), int(w[4])))
        elif w[0] == "runs":
            f["nruns"] = int(w[1])
        elif w[0] == "damage":
            f["damage"] = (w[1], int(w[4]))
        else:
            f[w[0]] = int(w[1])
    return f

def ended_word(s):
    return s.replace("-", " ")

def check_valid(name):
    d = os.path.join(data, "valid")
    rec = name + ".rec"
    facts = read_facts(os.path.join(d, name + ".facts"))
    rc, out, err = run("rec-summary", "--json", rec, cwd=d)
    if rc != 0 or err:
        fail(f"{rec}: rec-summary exit {rc}, stderr {err!r}")
        return
    s = json.loads(out)
    if s.get("schema") != 1 or list(s)[0] != "schema":
        fail(f"{rec}: summary JSON does not start with schema 1")
    for key in ("events", "chunks", "dropped"):
        if s[key] != facts[key]:
            fail(f"{rec}: summary {key} {s[key]} != generator {facts[key]}")
    if s["unknown_sections"] != facts.get("unknown_sections", 0):
        fail(f"{rec}: {s['unknown_sections']} unknown sections, generator added {facts.get('unknown_sections', 0)}")
    if s["chunks_damaged"] != 0 or s["bytes_skipped"] != 0 or s["problems"]:
        fail(f"{rec}: valid file has damage/problems: {s['problems']}")
    if len(s["runs"]) != facts["nruns"] or s["restarts"] != facts["nruns"] - 1:
        fail(f"{rec}: runs {len(s['runs'])} restarts {s['restarts']}, generator wrote {facts['nruns']} runs")
    for sr, fr in zip(s["runs"], facts["runs"]):
        want = (fr["run_id"], int(fr["pid"]), int(fr["chunks"]), int(fr["events"]),
                int(fr["dropped"]), ended_word(fr["ended"]))
        got = (sr["run_id"], sr["pid"], sr["chunks"], sr["events"], sr["dropped"], sr["ended"])
        if want != got:
            fail(f"{rec}: run {got} != generator {want}")
    if s.get("first_event_ns") != facts["first_wall_ns"] or s.get("last_event_ns") != facts["last_wall_ns"]:
        fail(f"{rec}: time range {s.get('first_event_ns')}..{s.get('last_event_ns')} != "
             f"generator {facts['first_wall_ns']}..{facts['last_wall_ns']}")
    stypes = {t["name"]: t for t in s["types"]}
    if set(stypes) != set(facts["types"]):
        fail(f"{rec}: summary types {sorted(stypes)} != generator {sorted(facts['types'])}")
    for n, c in facts["types"].items():
        t = stypes.get(n)
        if t is None:
            continue
        if t["count"] != c:
            fail(f"{rec}: summary count of {n} {t['count']} != generator {c}")
        if t["bytes"] != facts["type_bytes"][n]:
            fail(f"{rec}: summary bytes of {n} {t['bytes']} != generator's {facts['type_bytes'][n]}")
    rc, out, err = run("rec-summary", "--verify", "--json", rec, cwd=d)
    if rc != 0 or err or json.loads(out)["events"] != facts["events"]:
        fail(f"{rec}: rec-summary --verify exit {rc} stderr {err!r}")
    if sum(t["count"] for t in s["types"]) != s["events"]:
        fail(f"{rec}: type counts do not add up to {s['events']}")
    order = [(-t["count"], t["name"]) for t in s["types"]]
    if order != sorted(order):
        fail(f"{rec}: summary types not sorted by count desc, name")

    # rec-print --json: counts per type, time order
    for extra in ([], ["--unsorted"]):
        rc, out, err = run("rec-print", "--json", *extra, rec, cwd=d)
        # allowed on stderr: the note on frames without names (rec-symbolize)
        err = "".join(l for l in err.splitlines(True)
                      if not re.search(r": note: \d+ frames? of modules with a build-id .*'rec-symbolize IN OUT", l))
        if rc != 0 or err:
            fail(f"{rec}: rec-print --json {extra} exit {rc} stderr {err!r}")
            continue
        doc = json.loads(out)
        evs = doc["recording"]["events"]
        counts = {}
        for e in evs:
            counts[e["type"]] = counts.get(e["type"], 0) + 1
        want = {n: c for n, c in facts["types"].items() if c}
        if counts != want:
            fail(f"{rec}: rec-print --json {extra} counts {counts} != generator {want}")
        times = [e["values"]["startTime"] for e in evs]
        if not extra and times != sorted(times):
            fail(f"{rec}: rec-print events not in timestamp order")
        if extra and name == "zstd" and times == sorted(times):
            fail(f"{rec}: --unsorted output is sorted although the file is not")
    # text blocks per type
    rc, out, err = run("rec-print", rec, cwd=d)
    for n, c in facts["types"].items():
        blocks = len(re.findall("^" + re.escape(n) + " {$", out, re.M))
        if blocks != c:
            fail(f"{rec}: rec-print prints {blocks} blocks of {n}, generator wrote {c}")
    # --events with a glob selects exactly those
    rc, out, err = run("rec-print", "--json", "--events", "rec.*", rec, cwd=d)
    doc = json.loads(out)
    got = len(doc["recording"]["events"])
    want = sum(c for n, c in facts["types"].items() if n.startswith("rec."))
    if rc != 0 or got != want:
        fail(f"{rec}: --events 'rec.*' gave {got} events (exit {rc}), want {want}")

def check_invalid(name):
    d = os.path.join(data, "invalid")
    rec = name + ".rec"
    facts = read_facts(os.path.join(d, name + ".facts"))
    kind, off = facts["damage"]
    # Without --verify the summary reads headers and statistics only, but
    # only from chunks whose payload checksum holds: a damaged payload is
    # reported and none of its numbers are counted.  Statistics that lie
    # under a good checksum (stats) only --verify can tell.
    # Format 1.1 (Front_Checksum): a flip in STATS (front) is refused like a
    # bad payload checksum; a flip in EVENTS (events) leaves the statistics
    # checked, so the summary shows them all, exit 0; events and --verify
    # refuse the chunk.
    rc, out, err = run("rec-summary", "--json", rec, cwd=d)
    want_rc = 0 if kind in ("stats", "events") else 1
    if rc != want_rc:
        fail(f"{rec}: rec-summary exit {rc}, want {want_rc}")
    s = json.loads(out)
    if kind == "events" and (s["events"] != facts["written_events"] or s["problems"]):
        fail(f"{rec}: summary without --verify shows {s['events']} events, {s['problems']}; "
             f"the statistics are checked: want all {facts['written_events']}, no problem")
    if kind == "front" and not any(p["offset"] == off and "front checksum" in p["message"] for p in s["problems"]):
        fail(f"{rec}: summary does not report the front checksum at offset {off}: {s['problems']}")
    if kind in ("checksum", "front") and (s["events"] != facts["readable_events"] or s["chunks"] != facts["readable_chunks"]):
        fail(f"{rec}: summary without --verify shows {s['events']} events in {s['chunks']} chunks, "
             f"readable: {facts['readable_events']} in {facts['readable_chunks']}")
    if kind in ("checksum", "front") and not any(p["offset"] == off and "checksum" in p["message"] for p in s["problems"]):
        fail(f"{rec}: summary without --verify does not report the checksum at offset {off}: {s['problems']}")
    rc, out, err = run("rec-summary", "--verify", "--json", rec, cwd=d)
    if rc != 1:
        fail(f"{rec}: rec-summary --verify exit {rc}, want 1")
    s = json.loads(out)
    if s["events"] != facts["readable_events"] or s["chunks"] != facts["readable_chunks"]:
        fail(f"{rec}: summary {s['events']} events in {s['chunks']} chunks, readable: "
             f"{facts['readable_events']} in {facts['readable_chunks']}")
    if not s["problems"] or not any(p["offset"] == off for p in s["problems"]):
        fail(f"{rec}: no problem at offset {off}: {s['problems']}")
    if not re.search(re.escape(f"rec-summary: {rec}: ") + r"(chunk \d+ )?at offset " + str(off) + r": ", err):
        fail(f"{rec}: rec-summary stderr does not name file and offset {off}: {err!r}")
    if kind == "stats":
        # the events are fine, the statistics lie: only --verify can tell
        rc, out, err = run("rec-summary", "--json", rec, cwd=d)
        lied = json.loads(out)
        # the lie is plausible: the totals add up, one event moved between types
        if sum(x["count"] for x in lied["types"]) != facts["readable_events"]:
            fail(f"{rec}: summary without --verify should show the STATS' counts (same total)")
        if "statistics do not match the events" not in " ".join(p["message"] for p in s["problems"]):
            fail(f"{rec}: --verify problem does not say the statistics do not match: {s['problems']}")
    rc, out, err = run("rec-print", "--json", rec, cwd=d)
    want_rc = 0 if kind == "stats" else 1
    if rc != want_rc:
        fail(f"{rec}: rec-print exit {rc}, want {want_rc}")
    evs = json.loads(out)["recording"]["events"]
    if kind == "stats":
        # ... and per type the STATS' counts, not the events'
        counts = {}
        for e in evs:
            counts[e["type"]] = counts.get(e["type"], 0) + 1
        if counts == {x["name"]: x["count"] for x in lied["types"] if x["count"]}:
            fail(f"{rec}: summary without --verify should show the STATS' per-type counts, not {counts}")
    if len(evs) != facts["readable_events"]:
        fail(f"{rec}: rec-print printed {len(evs)} events, readable: {facts['readable_events']}")
    if kind != "stats" and not re.search(re.escape(f"rec-print: {rec}: ") + r"(chunk \d+ )?at offset " + str(off) + r": ", err):
        fail(f"{rec}: rec-print stderr does not name file and offset {off}: {err!r}")
    for r in facts["runs"]:
        if "ended" in r:
            got = [x["ended"] for x in s["runs"] if x["run_id"] == r["run_id"]]
            if got != [ended_word(r["ended"])]:
                fail(f"{rec}: run {r['run_id']} ended {got}, want {ended_word(r['ended'])}")

valid = sorted(f[:-4] for f in os.listdir(os.path.join(data, "valid")) if f.endswith(".rec"))
invalid = sorted(f[:-4] for f in os.listdir(os.path.join(data, "invalid")) if f.endswith(".rec"))
if set(valid) != {"tiny", "zstd", "lz4", "two-runs", "newer-minor", "tiny-1.1", "zstd-1.1", "frames-1.2", "split-1.3"}:
    fail(f"unexpected valid set {valid}")
for n in valid:
    check_valid(n)
for n in invalid:
    check_invalid(n)
tiny = os.path.getsize(os.path.join(data, "valid", "tiny.rec"))
if tiny >= 600:
    fail(f"tiny.rec is {tiny} bytes, must stay < 600 (spec example)")
print(f"facts: {len(valid)} valid and {len(invalid)} invalid recordings checked, {len(failures)} failures")
sys.exit(1 if failures else 0)
PY
