#!/usr/bin/env bash
# A reader problem's message says what went wrong; its chunk and offset
# travel as the problem's fields, not in the text (issue 17, "The reader"):
# rec-check --json and rec-summary --json give the same message without
# "chunk C at offset O: " in front, and every tool's stderr line still names
# the place once, from the fields.  Damaged testdata files of several kinds:
# a payload checksum, an absurd Payload_Size, a newer major version,
# statistics that do not match the events.
set -uo pipefail
if [ ! -d "${REC_BIN:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/bin" ]; then REC_BIN=$BUILD/bin; fi
bin=${REC_BIN:?}
root=${REC_ROOT:?}
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

for name in corrupt-middle absurd-size future-major stats-mismatch; do
	f=$root/testdata/invalid/$name.rec
	"$bin/rec-check" --json "$f" >"$tmp/check" 2>"$tmp/check.err"
	"$bin/rec-summary" --json "$f" >"$tmp/summary" 2>"$tmp/summary.err"
	python3 - "$tmp/check" "$tmp/summary" "$tmp/check.err" "$f" <<'PY' || fail "$name"
import json, re, sys
check = json.load(open(sys.argv[1]))["files"][0]["problems"]
summary = json.load(open(sys.argv[2]))["problems"]
assert check, check
loc = re.compile(r"^(chunk -?\d+ )?at offset \d+")
for p in check + summary:
    assert not loc.match(p["message"]), p
    assert "chunk %s at offset" % p["chunk"] not in p["message"], p
# the text line: the place once, then the message
err = open(sys.argv[3]).read().splitlines()
p = check[0]
where = ("chunk %d at offset %d" % (p["chunk"], p["offset"])) if p["chunk"] is not None else ("at offset %d" % p["offset"])
want = "rec-check: %s: %s: %s" % (sys.argv[4], where, p["message"])
assert want in err, (want, err)
# rec-summary (which does not verify payloads) says the same of the chunks it reports
by_place = {(q["chunk"], q["offset"]): q["message"] for q in check}
for q in summary:
    if (q["chunk"], q["offset"]) in by_place:
        assert q["message"] == by_place[(q["chunk"], q["offset"])], (q, check)
PY
done

# The checksum problem of corrupt-middle.rec is the checksum and nothing else.
"$bin/rec-check" --json "$root/testdata/invalid/corrupt-middle.rec" >"$tmp/check" 2>/dev/null
grep -q '"message": "payload checksum mismatch (stored [0-9a-f]*, computed [0-9a-f]*)"' "$tmp/check" ||
	fail "corrupt-middle: the checksum message: $(cat "$tmp/check")"

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
