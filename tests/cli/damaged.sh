#!/usr/bin/env bash
# Damaged inputs: both tools print everything readable, then exit 1 with one
# message per problem on stderr naming the file, the chunk and the offset
# (offsets taken from the generator's facts).  Every prefix of a good file
# and some bit flips give exit 0 or 1, never a crash or a hang.
set -uo pipefail
if [ ! -d "${REC_BIN:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/bin" ]; then REC_BIN=$BUILD/bin; fi
bin=${REC_BIN:?}
root=${REC_ROOT:?}
inv=$root/testdata/invalid
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TZ=UTC
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

for facts in "$inv"/*.facts; do
	n=$(basename "$facts" .facts)
	f=$n.rec
	off=$(awk '$1 == "damage" { print $5 }' "$facts")
	readable=$(awk '$1 == "readable_events" { print $2 }' "$facts")
	kind=$(awk '$1 == "damage" { print $2 }' "$facts")
	rc=0
	(cd "$inv" && "$bin/rec-print" "$f") >"$tmp/out" 2>"$tmp/err" || rc=$?
	blocks=$(grep -c ' {$' "$tmp/out")
	[ "$blocks" = "$readable" ] || fail "$f: rec-print printed $blocks events, $readable are readable"
	if [ "$kind" = stats ]; then
		# events decode fine; only the statistics are wrong (rec-summary --verify)
		[ "$rc" = 0 ] && [ ! -s "$tmp/err" ] || fail "$f: rec-print exit $rc"
	else
		[ "$rc" = 1 ] || fail "$f: rec-print exit $rc, want 1"
		grep -Eq "^rec-print: $f: (chunk [0-9]+ )?at offset $off: .+" "$tmp/err" ||
			{ fail "$f: rec-print message does not name file and offset $off"; cat "$tmp/err"; }
	fi
	rc=0
	(cd "$inv" && "$bin/rec-summary" --verify "$f") >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "$f: rec-summary --verify exit $rc, want 1"
	grep -q '^ Event Type ' "$tmp/out" || fail "$f: rec-summary printed no summary before failing"
	grep -Eq "^rec-summary: $f: (chunk [0-9]+ )?at offset $off: .+" "$tmp/err" ||
		{ fail "$f: rec-summary message does not name file and offset $off"; cat "$tmp/err"; }
done
# a damaged chunk names its index: the second chunk (index 1) of corrupt-middle
grep -Eq "^rec-print: corrupt-middle.rec: chunk 1 at offset [0-9]+: payload checksum mismatch" \
	"$inv/corrupt-middle.events.err" || fail "corrupt-middle: expected 'chunk 1 ... payload checksum mismatch'"
grep -q "unsupported format version 2.0" "$inv/future-major.events.err" || fail "future-major: version not named"
grep -q "truncated" "$inv/truncated-tail.summary.txt" || fail "truncated-tail: run not reported as truncated"

# Counts that cannot be true under good checksums (rec_test_hostile): each
# tool names the chunk as damaged, counts nothing of it, and exits 1; the
# durations stay non-negative (a wrapped sum or a signed overflow, which the
# sanitizer builds abort on, made "Duration: -7427067817 s" and a total of 0
# dropped events out of two chunks of 2^63).
hostile=${REC_TESTS:-${BUILD:+$BUILD/tests}}/rec_test_hostile
if [ -x "$hostile" ]; then
	for k in billion-header:0:1 dropped-wrap:397:2 wall-min:394:1; do
		IFS=: read -r name off nbad <<<"$k"
		"$hostile" "$name" "$tmp/$name.rec" || { fail "$name: rec_test_hostile failed"; continue; }
		for tool in rec-summary rec-timeline rec-print; do
			rc=0
			"$bin/$tool" "$tmp/$name.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
			[ "$rc" = 1 ] || fail "$name: $tool exit $rc, want 1"
			grep -Eq "^$tool: $tmp/$name.rec: chunk [0-9]+ at offset $off: implausible counts: " "$tmp/err" ||
				{ fail "$name: $tool does not name the chunk at offset $off"; cat "$tmp/err"; }
			[ "$(grep -c 'implausible counts' "$tmp/err")" = "$nbad" ] || fail "$name: $tool: want $nbad damaged chunks"
			if [ "$tool" = rec-summary ]; then
				grep -q "^ Excluded: *$nbad damaged chunk" "$tmp/out" || fail "$name: summary does not say what it excluded"
				! grep -q -- "-[0-9.]* [a-z]*s\b" "$tmp/out" || fail "$name: a negative duration: $(grep Duration "$tmp/out")"
				grep -q "^ Dropped events:  0$" "$tmp/out" || fail "$name: $(grep Dropped "$tmp/out")"
			fi
		done
		rc=0
		"$bin/rec-summary" --json "$tmp/$name.rec" >"$tmp/out" 2>/dev/null || rc=$?
		python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); n=int(sys.argv[2])
assert s["chunks_damaged"] == n and len(s["problems"]) == n, s
assert s.get("duration_ns", 0) >= 0 and all(r.get("duration_ns", 0) >= 0 for r in s["runs"]), s' \
			"$tmp/out" "$nbad" || fail "$name: rec-summary --json"
	done
	# a record count that differs from Item_Count: sorted and --unsorted
	# print the same records (all that decode) and report it once, exit 1
	"$hostile" count-mismatch "$tmp/cm.rec" || fail "count-mismatch: rec_test_hostile failed"
	for order in "" --unsorted; do
		rc=0
		"$bin/rec-print" $order "$tmp/cm.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
		[ "$rc" = 1 ] || fail "count-mismatch: rec-print $order exit $rc, want 1"
		[ "$(grep -c '^test.Hostile {$' "$tmp/out")" = 5 ] ||
			fail "count-mismatch: rec-print $order printed $(grep -c '^test.Hostile {$' "$tmp/out") events, want 5"
		[ "$(grep -c 'holds 3 records but Item_Count is 2' "$tmp/err")" = 1 ] ||
			{ fail "count-mismatch: rec-print $order does not report the mismatch once"; cat "$tmp/err"; }
	done
else
	fail "rec_test_hostile not built ($hostile)"
fi

# A chunk whose header, METADATA and STATS are intact (format 1.1's front
# checksum) but whose events are not: every tool that finds the damage counts
# it as damaged and nothing of it as readable (it was counted twice, readable
# and damaged, by rec-view recording and rec-report): rec-check's verdict,
# rec-summary --verify, rec-view recording and rec-report's damaged-chunks
# agree on 2 readable + 1 damaged chunks and 31 events (46 less chunk 1's 15).
off=$("$bin/rec-sql" --format csv "$root/testdata/valid/zstd-1.1.rec" 'SELECT offset FROM chunks WHERE chunk_index = 2' 2>/dev/null | tail -n 1 | tr -d '\r')
cp "$root/testdata/valid/zstd-1.1.rec" "$tmp/ev.rec"
printf '\xa5' | dd of="$tmp/ev.rec" bs=1 seek=$((off - 2)) conv=notrunc status=none
"$bin/rec-check" "$tmp/ev.rec" >"$tmp/ev-check.txt" 2>&1
grep -q "DAMAGED, 1 of 3 chunks" "$tmp/ev-check.txt" || fail "ev.rec: rec-check: $(cat "$tmp/ev-check.txt")"
"$bin/rec-summary" --verify --json "$tmp/ev.rec" >"$tmp/ev-summary.json" 2>/dev/null
"$bin/rec-view" --json recording "$tmp/ev.rec" >"$tmp/ev-view.json" 2>/dev/null
"$bin/rec-report" --json "$tmp/ev.rec" >"$tmp/ev-report.json" 2>"$tmp/ev-report.err"
[ "$(grep -c 'payload checksum mismatch' "$tmp/ev-report.err")" = 1 ] || fail "ev.rec: rec-report reports the damage $(grep -c 'payload checksum mismatch' "$tmp/ev-report.err") times, want once"
python3 - "$tmp" <<'PY' || fail "ev.rec: the tools disagree on what is readable"
import json, sys
t = sys.argv[1]
s = json.load(open(t + "/ev-summary.json"))
v = json.load(open(t + "/ev-view.json"))["tables"][0]["rows"][0]
r = [f for f in json.load(open(t + "/ev-report.json"))["findings"] if f["rule"] == "damaged-chunks"]
facts = {x["key"]: x["value"] for x in r[0]["facts"]} if r else {}
got = [(s["chunks"], s["chunks_damaged"], s["events"]), (v["chunks"], v["chunks_damaged"], v["events"]),
       (facts.get("chunks"), facts.get("chunks_damaged"), None)]
want = [(2, 1, 31), (2, 1, 31), (2, 1, None)]
if got != want or "1 of 3 chunks" not in r[0]["summary"]:
    print("got", got, "want", want, r[0]["summary"] if r else "no damaged-chunks finding")
    sys.exit(1)
PY

# --events on a recording with no chunk yet is not a usage error: nothing
# printed, a note on stderr, exit 0 (empty file); a first chunk cut short is
# damage (exit 1), still no usage error.
: >"$tmp/empty.rec"
head -c 100 "$root/testdata/valid/tiny.rec" >"$tmp/cut.rec"
for f in empty:0 cut:1; do
	IFS=: read -r name want <<<"$f"
	for fmt in "" --json; do
		rc=0
		"$bin/rec-print" $fmt --events rec.LockWait "$tmp/$name.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
		[ "$rc" = "$want" ] || fail "$name: rec-print $fmt --events exit $rc, want $want: $(cat "$tmp/err")"
		grep -q "no event types yet" "$tmp/err" || fail "$name: rec-print --events does not say why nothing is printed"
		! grep -q "try 'rec-print --help'" "$tmp/err" || fail "$name: rec-print --events reports a usage error"
		if [ -n "$fmt" ]; then
			python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["recording"]["events"] == []' "$tmp/out" ||
				fail "$name: rec-print --json --events: not an empty document"
		else
			[ ! -s "$tmp/out" ] || fail "$name: rec-print --events printed something"
		fi
	done
done

# run_ok TOOL ARGS...: exit 0 or 1, and not killed by a signal (rc >= 128)
# nor by the hang timeout: 10 s, times REC_TEST_SLOWDOWN (make test-valgrind
# sets 30: there a start of rec-summary on a loaded machine took over 10 s).
hang_s=$(awk -v s="${REC_TEST_SLOWDOWN:-1}" 'BEGIN { s += 0; if (s < 1) s = 1; printf "%d", 10 * s + 0.5 }')
run_ok() {
	local rc=0
	timeout "$hang_s" "$@" >/dev/null 2>&1 || rc=$?
	if [ "$rc" -gt 1 ]; then fail "$* (on $label): exit $rc"; fi
}
# Sanitizer builds start ~10x slower: sample fewer cuts and flips there.
slow=1
case "$(ldd "$bin/rec-print" 2>/dev/null)" in *libasan*|*libubsan*) slow=4 ;; esac
for src in tiny zstd; do
	file=$root/testdata/valid/$src.rec
	size=$(stat -c %s "$file")
	step=$((3 * slow)); [ "$size" -gt 1000 ] && step=$((61 * slow))
	for ((i = 0; i < size; i += step)); do
		head -c "$i" "$file" >"$tmp/p.rec"
		label="$src.rec cut at $i"
		run_ok "$bin/rec-summary" --verify "$tmp/p.rec"
		run_ok "$bin/rec-print" --json "$tmp/p.rec"
	done
	# single-byte corruptions, deterministic positions
	for ((i = 3; i < size; i += size / (40 / slow) + 1)); do
		cp "$file" "$tmp/c.rec"
		printf '\xa5' | dd of="$tmp/c.rec" bs=1 seek="$i" conv=notrunc status=none
		label="$src.rec byte $i changed"
		run_ok "$bin/rec-summary" --verify "$tmp/c.rec"
		run_ok "$bin/rec-print" "$tmp/c.rec"
	done
done

[ "$fails" -eq 0 ] && echo "damaged: ok"
exit $((fails > 0))
