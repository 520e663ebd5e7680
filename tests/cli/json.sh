#!/usr/bin/env bash
# --json output of both tools parses with a real JSON parser (python3), on
# valid and damaged inputs, and its values are right: strings escaped (every
# control character as \u00XX, invalid UTF-8 as U+FFFD, valid UTF-8 kept),
# integers exact, stack traces cut with "truncated", times in ISO 8601.
set -uo pipefail
if [ ! -d "${REC_BIN:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/bin" ]; then REC_BIN=$BUILD/bin; fi
bin=${REC_BIN:?}
root=${REC_ROOT:?}
export TZ=UTC REC_BIN_DIR=$bin REC_ROOT_DIR=$root
exec python3 - <<'PY'
import glob, json, os, re, subprocess, sys

bin_dir, root = os.environ["REC_BIN_DIR"], os.environ["REC_ROOT_DIR"]
fails = []
def fail(m):
    fails.append(m); print("FAIL:", m)

def run(*args, env=None):
    p = subprocess.run([os.path.join(bin_dir, args[0]), *args[1:]], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env)
    return p.returncode, p.stdout, p.stderr

def parse(raw, what):
    try:
        text = raw.decode("utf-8")  # must be valid UTF-8
    except UnicodeDecodeError as e:
        fail(f"{what}: output is not UTF-8: {e}"); return None
    if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text):
        fail(f"{what}: raw control character in JSON output")
    try:
        return json.loads(text)
    except ValueError as e:
        fail(f"{what}: invalid JSON: {e}"); return None

files = sorted(glob.glob(os.path.join(root, "testdata", "*", "*.rec")))
for f in files:
    for args in (["rec-summary", "--json"], ["rec-summary", "--json", "--verify"],
                 ["rec-print", "--json"], ["rec-print", "--json", "--unsorted"],
                 ["rec-print", "--json", "--stack-depth", "0"]):
        rc, out, err = run(*args, f)
        doc = parse(out, f"{' '.join(args)} {os.path.basename(f)}")
        if doc is None:
            continue
        if args[0] == "rec-summary" and list(doc)[0] != "schema":
            fail(f"{f}: summary does not start with \"schema\"")
for g in glob.glob(os.path.join(root, "testdata", "valid", "*.json")):
    parse(open(g, "rb").read(), os.path.basename(g))

# Values of zstd.rec, as the generator wrote them.
zstd = os.path.join(root, "testdata", "valid", "zstd.rec")
rc, out, err = run("rec-print", "--json", "--events", "test.AllTypes", zstd)
evs = parse(out, "AllTypes")["recording"]["events"]
by_k = {}
for e in evs:
    by_k.setdefault(e["values"]["u8v"] - 200, e["values"])
v0, v1, v2 = by_k[0], by_k[1], by_k[2]
checks = [
    (v0["u64v"], 18446744073709551615), (v0["i64v"], -9223372036854775808),
    (v0["i32v"], -2147483648), (v0["u32v"], 4000000000), (v0["flag"], False), (v1["flag"], True),
    (v0["f64v"], 3.141592653589793), (v0["f32v"], 0.1), (v1["f64v"], 0.0),
    (v0["name"], "pool-mutex"), (v2["name"], None),
    (v1["name"], "quote\" back\\slash\nnewline\ttab\x01ctl caf\u00e9 bad\ufffd end"),
    (v1["message"], "tab\there \"quoted\""), (v0["payload"], "deadbeef00017f80"), (v2["payload"], ""),
    (v0["size"], 6 << 20), (v0["ratio"], 0.25), (v0["addr"], 0x7f00deadbeef), (v1["elapsed"], -850),
    (v0["wallclock"], "2026-12-02T10:14:03.123456789Z"), (v0["rate"], 100),
    (v0["wait"], 1502000), (v0["duration"], 250000), (v2["other"], None), (v2["where"], None),
    (v0["other"], {"name": "main", "tid": 4240}),
    (v0["eventThread"], {"name": "worker-1", "tid": 4242}),
    (v0["when"], "2026-12-02T10:14:03.122456789Z"), (v0["startTime"], "2026-12-02T10:14:03.123456789Z"),
]
for i, (got, want) in enumerate(checks):
    if got != want or type(got) != type(want):
        fail(f"AllTypes check {i}: got {got!r}, want {want!r}")
# the raw text uses \u00XX for control characters, \" and \\, and keeps UTF-8
raw = out.decode("utf-8")
for frag in ['quote\\" back\\\\slash\\u000anewline\\u0009tab\\u0001ctl caf\u00e9 bad\ufffd end']:
    if frag not in raw:
        fail(f"escaped form {frag!r} not in output")
# stacks: 7 frames cut at 5 -> truncated; recorder-truncated stack -> truncated
st = v0["stackTrace"]
if not (st["truncated"] is True and len(st["frames"]) == 3 and st["frames"][0]["function"] == "__poll"
        and st["frames"][1]["function"] is None and st["frames"][0]["module"].endswith("libc.so.6")):
    fail(f"recorder-truncated stack: {st}")
# every frame has the same keys, offsets as hex strings (spec/FORMAT.md, "Frames in text")
keys = ["function", "functionOffset", "module", "moduleOffset", "file", "line", "inline"]
if st["frames"][0] != {"function": "__poll", "functionOffset": "0x10", "module": "/lib/x86_64-linux-gnu/libc.so.6",
                       "moduleOffset": "0x10ab0", "file": None, "line": None, "inline": 0} or \
   st["frames"][1] != {"function": None, "functionOffset": None, "module": "/usr/bin/requestwatch",
                       "moduleOffset": "0x4444", "file": None, "line": None, "inline": 0} or \
   any(list(f) != keys for f in st["frames"]):
    fail(f"recorder-truncated stack: {st}")
deep = [e["values"]["stackTrace"] for e in evs if len(e["values"]["stackTrace"]["frames"]) == 5]
if not deep or not all(s["truncated"] for s in deep) or deep[0]["frames"][0]["function"] != "parse_header":
    fail(f"7-frame stack not cut to 5 with truncated: {deep[:1]}")
rc, out, err = run("rec-print", "--json", "--stack-depth", "10", "--events", "test.AllTypes", zstd)
full = [e["values"]["stackTrace"] for e in parse(out, "depth 10")["recording"]["events"]
        if len(e["values"]["stackTrace"]["frames"]) == 7]
if not full or any(s["truncated"] for s in full):
    fail("7-frame stack with --stack-depth 10 should be complete and not truncated")
if [f["function"] for f in full[0]["frames"]] != ["parse_header", "read_request", "handle_blocking",
                                                   "dispatch", "run_loop", "main", "__libc_start_main"]:
    fail(f"frame order (leaf first): {full[0]['frames']}")

# empty selection still gives a valid document; local time zone offsets
rc, out, err = run("rec-print", "--json", "--events", "app.Unused", zstd)
doc = parse(out, "empty selection")
if rc != 0 or doc != {"recording": {"events": []}}:
    fail(f"empty selection: exit {rc}, {doc}")
if os.path.exists("/usr/share/zoneinfo/Asia/Kolkata"):
    env = dict(os.environ, TZ="Asia/Kolkata")
    rc, out, err = run("rec-print", "--json", os.path.join(root, "testdata", "valid", "tiny.rec"), env=env)
    t = parse(out, "TZ=Asia/Kolkata")["recording"]["events"][0]["values"]["startTime"]
    if t != "2026-12-02T15:44:03.123456789+05:30":
        fail(f"local time with offset: {t}")
    rc, out, err = run("rec-summary", os.path.join(root, "testdata", "valid", "tiny.rec"), env=env)
    if b"15:44:03.123456789 (2026-12-02)" not in out:
        fail("rec-summary text does not use local time")
print(f"json: {len(files)} recordings, {len(fails)} failures")
sys.exit(1 if fails else 0)
PY
