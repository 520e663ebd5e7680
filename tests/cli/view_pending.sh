#!/usr/bin/env bash
# rec-view startup and rec-report on a recording whose 2^21 + 2^16 CPU
# samples all come as digests ahead of its one span (tests/helpers/
# rec_test_pending_gen.c: the span at 1 ms, after 1000 samples of 1 us):
# more than the startup view holds one by one, and the span among the
# ones it summed, so the digests cannot say which samples came before it.
# Both tools read the file again with the CPU samples as events and give
# the true numbers (1000 samples, 1 ms of CPU at "hot", the span at
# +1 ms), saying nothing of the pass given up; the opens of the file are
# counted by tests/cli/report/swap_open.c preloaded (not under SAN=1,
# where a preload cannot come before ASan's runtime).
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
need_exe "$bin/rec-view" "$bin/rec-report" "$tests/rec_test_pending_gen"

f=$tmp/pending.rec
"$tests/rec_test_pending_gen" "$f" || fail "rec_test_pending_gen: exit $?"
count=()
if [ "${SAN:-}" != 1 ] && command -v cc >/dev/null; then
	cc -shared -fPIC -O1 -o "$tmp/swap_open.so" "$root/tests/cli/report/swap_open.c" -ldl ||
		fail "cc -shared failed"
	count=(env SWAP_OPEN="$f:$f" LD_PRELOAD="$tmp/swap_open.so")
fi

"${count[@]}" "$bin/rec-view" --json startup "$f" >"$tmp/v.json" 2>"$tmp/v.err" || fail "rec-view: exit $?: $(cat "$tmp/v.err")"
python3 - "$tmp/v.json" <<'PY' || fail "rec-view startup: $(head -c 1500 "$tmp/v.json")"
import json, sys
d = json.load(open(sys.argv[1]))
t = {x["name"]: x for x in d["tables"]}
s = t["startup"]["rows"][0]
assert s["before"] == "app.Request", s
assert s["at"] == 1000000, s
assert s["cpu"] == 1000000, s
c = t["cpu"]["rows"]
assert len(c) == 1 and c[0]["site"] == "hot" and c[0]["count"] == 1000 and c[0]["total"] == 1000000, c
PY
if [ ${#count[@]} -gt 0 ]; then
	grep -qx 'swap_open: 2' "$tmp/v.err" || fail "rec-view did not read the file twice: $(cat "$tmp/v.err")"
fi
[ "$(grep -cv '^swap_open: ' "$tmp/v.err")" = 0 ] || fail "rec-view said something: $(cat "$tmp/v.err")"

"${count[@]}" "$bin/rec-report" --json "$f" >"$tmp/r.json" 2>"$tmp/r.err" || fail "rec-report: exit $?: $(cat "$tmp/r.err")"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/r.json" || fail "rec-report: not JSON"
if [ ${#count[@]} -gt 0 ]; then
	grep -qx 'swap_open: 4' "$tmp/r.err" || fail "rec-report did not read the file twice, twice: $(cat "$tmp/r.err")"
fi
[ "$(grep -cv '^swap_open: ' "$tmp/r.err")" = 0 ] || fail "rec-report said something: $(cat "$tmp/r.err")"

# A damaged chunk among the samples (a payload checksum that fails; two
# chunks more samples, so that more than startup holds are left): both
# tools still read the file again, give the same numbers, and say the
# damage once (the reading again does not repeat what the first said),
# exit 1.
"$tests/rec_test_pending_gen" "$tmp/damaged.rec" 2 || fail "rec_test_pending_gen 2: exit $?"
printf '\377\377\377\377' | dd of="$tmp/damaged.rec" bs=1 seek=10000 conv=notrunc 2>/dev/null
dcount=()
[ ${#count[@]} -gt 0 ] && dcount=(env SWAP_OPEN="$tmp/damaged.rec:$tmp/damaged.rec" LD_PRELOAD="$tmp/swap_open.so")
for tool in rec-view rec-report; do
	args=(--json "$tmp/damaged.rec")
	[ "$tool" = rec-view ] && args=(--json startup "$tmp/damaged.rec")
	rc=0
	"${dcount[@]}" "$bin/$tool" "${args[@]}" >"$tmp/d.json" 2>"$tmp/d.err" || rc=$?
	[ "$rc" = 1 ] || fail "$tool on a damaged chunk: exit $rc, want 1: $(cat "$tmp/d.err")"
	grep -v '^swap_open: ' "$tmp/d.err" >"$tmp/d.said"
	[ "$(wc -l <"$tmp/d.said")" = 1 ] && grep -q 'chunk [0-9]* at offset [0-9]*: payload checksum mismatch' "$tmp/d.said" ||
		fail "$tool: the damage not said exactly once: $(cat "$tmp/d.err")"
	if [ ${#dcount[@]} -gt 0 ]; then
		want=2 # rec-report: its summary and events twice, and a summary that verifies every chunk
		[ "$tool" = rec-report ] && want=5
		grep -qx "swap_open: $want" "$tmp/d.err" || fail "$tool did not read the damaged file again: $(cat "$tmp/d.err")"
	fi
done
python3 - "$tmp/d.json" <<'PY' || fail "rec-report on the damaged file: not JSON"
import json, sys
json.load(open(sys.argv[1]))
PY
cli_done cli/view_pending
