#!/usr/bin/env bash
# Timestamp order across chunks (spec "Order"): `sleep 2.5` under rec-record
# leaves a 2.5 s rec.Sleep in the last of three 1-second chunks, after
# rec.ProcessStats that started later.  Read from the file (the reader reads
# the chunk fronts first) it comes in order and no tool warns; read from a
# pipe (no look-ahead; `cat |`, as `- <FILE` is a seekable file) it comes late and rec-print, rec-view and
# rec-timeline say so with the count; the events are the same either way.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
# shellcheck source=tests/cli/lib/preload.sh
source "$(dirname "$0")/lib/preload.sh"
need_exe "$bin/rec-record" "$bin/rec-print" "$bin/rec-view" "$bin/rec-timeline"
cd "$tmp" || exit 1

"$bin/rec-record" -q -o "$tmp/s.rec" -- sleep 2.5 </dev/null >/dev/null 2>"$tmp/rec.err" ||
	fail "rec-record sleep 2.5: $(cat "$tmp/rec.err")"
# ground truth: the sleep, and events that started after it in earlier chunks
"$bin/rec-print" --json-lines --unsorted "$tmp/s.rec" >"$tmp/file-order.jsonl" 2>/dev/null ||
	fail "rec-print --unsorted"
python3 - "$tmp/file-order.jsonl" >"$tmp/truth" <<'PY' || fail "no long sleep after later events in file order"
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
sleeps = [i for i, e in enumerate(evs) if e["type"] == "rec.Sleep"]
assert len(sleeps) == 1, sleeps
s = evs[sleeps[0]]
later_before = [e for e in evs[:sleeps[0]] if e["values"]["startTimeNs"] > s["values"]["startTimeNs"]]
assert later_before, "the sleep is not after later events in the file"
print(len(later_before))
PY
echo "file order: the 2.5 s sleep after $(cat "$tmp/truth") events that started later"

# late: events after one that started later, from rec-print's JSON lines
late() {
	python3 -c '
import json, sys
latest, late = None, 0
for l in open(sys.argv[1]):
    t = json.loads(l)["values"]["startTimeNs"]
    if latest is not None and t < latest:
        late += 1
    else:
        latest = t
print(late)' "$1"
}

"$bin/rec-print" --json-lines "$tmp/s.rec" >"$tmp/file.jsonl" 2>"$tmp/file.err" || fail "rec-print file"
[ "$(late "$tmp/file.jsonl")" = 0 ] || fail "file: $(late "$tmp/file.jsonl") events out of order"
grep -q "order" "$tmp/file.err" && fail "file: a warning with exact order: $(cat "$tmp/file.err")"

cat "$tmp/s.rec" | "$bin/rec-print" --json-lines - >"$tmp/pipe.jsonl" 2>"$tmp/pipe.err" || fail "rec-print pipe"
n=$(late "$tmp/pipe.jsonl")
[ "$n" -ge 1 ] || fail "pipe: no event late (the test means nothing)"
grep -q "warning: timestamp order is approximate: $n event" "$tmp/pipe.err" ||
	fail "pipe: rec-print does not say $n late: $(cat "$tmp/pipe.err")"
cmp -s <(sort "$tmp/file.jsonl") <(sort "$tmp/pipe.jsonl") || fail "pipe and file differ in events"

cat "$tmp/s.rec" | "$bin/rec-view" threads - >/dev/null 2>"$tmp/view.err" || fail "rec-view pipe"
grep -q "warning: timestamp order is approximate: $n event" "$tmp/view.err" ||
	fail "rec-view does not say it: $(cat "$tmp/view.err")"
"$bin/rec-view" threads "$tmp/s.rec" >/dev/null 2>"$tmp/view-file.err" || fail "rec-view file"
grep -q "order" "$tmp/view-file.err" && fail "rec-view file warns: $(cat "$tmp/view-file.err")"
cat "$tmp/s.rec" | "$bin/rec-timeline" -o "$tmp/t.json" - 2>"$tmp/tl.err" || fail "rec-timeline pipe"
grep -q "warning: timestamp order is approximate: $n event" "$tmp/tl.err" ||
	fail "rec-timeline does not say it: $(cat "$tmp/tl.err")"
echo "pipe: $n late, said by rec-print, rec-view, rec-timeline; file: none"
cli_done order_late
