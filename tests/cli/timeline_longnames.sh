#!/usr/bin/env bash
# rec-timeline cuts the names of event types, categories and fields longer
# than 4096 bytes to their first 4096 bytes (tools/common/values.c,
# rec_cli_json_quoted); a UTF-8 character cut in two becomes U+FFFD; a thread
# name is written whole.  The recording: tests/helpers/rec_test_longnames.c
# (names of 5000 bytes, and of exactly 4096 and 4097 bytes), read back with
# python3's JSON parser.  The values and the rest of the trace are unchanged.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
need_exe "$bin/rec-timeline" "$tests/rec_test_longnames"
export TZ=UTC

for len in 5000 4097 4096 100; do
	"$tests/rec_test_longnames" "$tmp/l$len.rec" "$len" || { fail "rec_test_longnames $len"; continue; }
	rc=0
	"$bin/rec-timeline" "$tmp/l$len.rec" >"$tmp/l$len.json" 2>"$tmp/l$len.err" || rc=$?
	[ "$rc" = 0 ] && [ ! -s "$tmp/l$len.err" ] || fail "len $len: exit $rc: $(head -c 300 "$tmp/l$len.err")"
	python3 - "$tmp/l$len.json" "$len" <<'PY' || fail "len $len: content"
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
CUT = 4096
def name(prefix, fill):  # as rec_test_longnames builds it
    s = prefix.encode()
    f = fill.encode()
    while len(s) < n:
        s += f
    return s[:n]
def cut(b):  # what the tool writes: the first 4096 bytes, decoded leniently
    return b[:CUT].decode("utf-8", errors="replace")
ok = True
def bad(m):
    global ok
    ok = False
    print(f"len {n}: {m}")
doc = json.load(open(path))
evs = doc["traceEvents"]
inst = [e for e in evs if e.get("ph") == "i"]
if len(inst) != 2:
    bad(f"{len(inst)} instant events, want 2")
    sys.exit(1)
L, U = inst
want_l = cut(name("app.L", "0123456789"))
if L["name"] != want_l:
    bad(f"type name: {len(L['name'].encode())} bytes {L['name'][:12]!r}...{L['name'][-8:]!r}, want {len(want_l.encode())}")
if L["cat"] != cut(name("cat.C", "0123456789")):
    bad(f"category: {len(L['cat'].encode())} bytes")
want_f = cut(name("f", "0123456789"))
if list(L["args"]) != [want_f] or L["args"][want_f] != 7:
    bad(f"field: {[(len(k.encode()), v) for k, v in L['args'].items()]}, want one key of {len(want_f.encode())} bytes = 7")
want_u = cut(name("app.U", "\u00e9"))
if U["name"] != want_u:
    bad(f"UTF-8 type name: {U['name'][-3:]!r}, want {want_u[-3:]!r}")
# "app.U" is 5 bytes, each e-acute 2: a cut at 4096 falls inside a character
if n > CUT and not U["name"].endswith("\ufffd"):
    bad("a character cut at 4096 bytes does not end in U+FFFD")
if n > CUT and len(L["name"].encode()) != CUT:
    bad(f"cut name is {len(L['name'].encode())} bytes, want {CUT}")
if n <= CUT and len(L["name"].encode()) != n:
    bad(f"a name of {n} bytes was changed")
th = [e for e in evs if e.get("ph") == "M" and e.get("name") == "thread_name" and e.get("tid") == 901]
want_t = name("thr", "0123456789").decode()
if len(th) != 1 or th[0]["args"]["name"] != want_t:
    bad(f"thread name: {[len(t['args']['name']) for t in th]}, want one of {n} bytes, whole")
if L.get("tid") != 901 or U.get("tid") != 901 or L.get("pid") != 777:
    bad(f"pid/tid: {L.get('pid')} {L.get('tid')} {U.get('tid')}")
if doc["metadata"]["events"] != 2:
    bad(f"metadata.events {doc['metadata']['events']}")
sys.exit(0 if ok else 1)
PY
done

cli_done timeline_longnames
