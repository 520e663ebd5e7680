#!/usr/bin/env bash
# A chunk whose EVENTS section was compressed as a zstd stream while its
# records came (the writer since 2026-12-04): testdata/archive/streamed-1.1.rec,
# kept as it is (never regenerated).  It is `gen_events --no-clock 5000` of
# bench/ written that day: 1 chunk, 5000 bench.Sample events, its EVENTS one
# zstd frame written by a stream, whose header the writer rewrote to state the
# content size (descriptor byte 0x80 at the frame's offset 4: a 4-byte content
# size, not single-segment, which a one-shot compression of that size never
# writes).  Format 1.1, no byte of the spec changed: every reading tool reads
# it whole (the library of the commit before, 8d8cd35, too: rec-check OK,
# 5000 events), and the copying tools copy it byte for byte.  A file with
# one-shot frames is testdata/valid/zstd-1.1.rec (golden.sh).
set -u
bin=${REC_BIN:?}
root=${REC_ROOT:?}
f=$root/testdata/archive/streamed-1.1.rec
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

out=$("$bin/rec-check" "$f" 2>&1) || fail "rec-check: $out"
case $out in *"OK, 1 chunk, 5000 events"*) ;; *) fail "rec-check says: $out" ;; esac
sum=$("$bin/rec-summary" --verify "$f" 2>&1) || fail "rec-summary --verify: $sum"
grep -Eq '^ *Events: +5000$' <<<"$sum" || fail "rec-summary: no 'Events: 5000'"
grep -Eq '^ *bench.Sample +5000 ' <<<"$sum" || fail "rec-summary: bench.Sample count"
n=$("$bin/rec-print" --json-lines "$f" | grep -c '"type": *"bench.Sample"') || true
[ "$n" = 5000 ] || fail "rec-print --json-lines: $n bench.Sample events, want 5000"
# The values are gen_events' sequence: value = i * 7919, count = i % 1000.
last=$("$bin/rec-print" --json-lines "$f" | tail -1)
case $last in *'"value": 39587081'*'"count": 999'*) ;; *) fail "last event: $last" ;; esac
"$bin/rec-recover" "$f" "$tmp/r.rec" >/dev/null 2>&1 || fail "rec-recover exit"
cmp -s "$f" "$tmp/r.rec" || fail "rec-recover did not copy the chunk byte for byte"
"$bin/rec-cat" "$f" >"$tmp/c.rec" 2>/dev/null || fail "rec-cat exit"
cmp -s "$f" "$tmp/c.rec" || fail "rec-cat did not copy the chunk byte for byte"
[ "$fails" = 0 ] && echo "archive_streamed: ok"
exit $((fails > 0))
