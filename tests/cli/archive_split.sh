#!/usr/bin/env bash
# rec-split: every piece is a valid recording of whole chunks (rec-check OK),
# the pieces hold every chunk exactly once (cat of the pieces in order, and
# rec-cat of them, give back the input byte for byte), by run (one piece per
# run, each equal to that run's own file), by size (no piece above SIZE except
# a single larger chunk alone), by time (each chunk's start inside its
# piece's window); damaged input; usage errors.
set -uo pipefail
if [ ! -d "${REC_BIN:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/bin" ]; then REC_BIN=$BUILD/bin; fi
if [ ! -d "${REC_TESTS:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/tests" ]; then REC_TESTS=$BUILD/tests; fi
bin=${REC_BIN:?}
tests=${REC_TESTS:?}
root=${REC_ROOT:?}
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

mkdir "$tmp/runs"
# Only the helper's own events (events=app.HelperEvent; rec.Dropped is always
# on), so each run holds exactly 20000 whatever the machine's speed: the
# built-in types depend on time -- rec.ProcessStats is periodic (1 s), and the
# CPU sampler fires after 10 ms of thread CPU; under valgrind its SIGPROF
# interrupted an emit and added a rec.Dropped (reason 2, nested emit).
for i in 1 2 3; do
	REC_OPTIONS="chunk=16384,full=wait,events=app.HelperEvent" REC_OUTPUT="$tmp/runs/run-$i-%p.rec" "$tests/rec_test_recorder_env" 20000 \
		|| fail "recording run $i"
done
set -- "$tmp"/runs/run-1-*.rec "$tmp"/runs/run-2-*.rec "$tmp"/runs/run-3-*.rec
cat "$@" >"$tmp/all.rec"
total=$(stat -c %s "$tmp/all.rec")

pieces_ok() { # dir-prefix: every piece checks
	for p in "$1"-*.rec; do
		"$bin/rec-check" -q "$p" >/dev/null 2>&1 || fail "$p does not check"
	done
}

# by run: one piece per run, each byte-identical to that run's file
rc=0; "$bin/rec-split" --by run -o "$tmp/run" "$tmp/all.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] || fail "by run: exit $rc: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/out")" = 3 ] || fail "by run: $(cat "$tmp/out")"
cmp -s "$tmp/run-0001.rec" "$1" && cmp -s "$tmp/run-0002.rec" "$2" && cmp -s "$tmp/run-0003.rec" "$3" || fail "by run: pieces differ from the runs"
grep -q "^$tmp/run-0001.rec: [0-9]* chunks, 20000 events, [0-9]* bytes, run [0-9a-f]\{16\} pid [0-9]*$" "$tmp/out" || fail "by run line: $(head -1 "$tmp/out")"
pieces_ok "$tmp/run"
# a run spread over the file (runs interleaved) still makes one piece per run
"$bin/rec-split" --by size=1 -o "$tmp/one" "$1" >/dev/null || fail "split run 1"
"$bin/rec-split" --by size=1 -o "$tmp/two" "$2" >/dev/null || fail "split run 2"
paste -d'\n' <(ls "$tmp"/one-*.rec) <(ls "$tmp"/two-*.rec) | grep . | xargs cat >"$tmp/mix.rec"
"$bin/rec-split" --by run -o "$tmp/mix" "$tmp/mix.rec" >"$tmp/out" || fail "by run interleaved: exit"
cmp -s "$tmp/mix-0001.rec" "$1" && cmp -s "$tmp/mix-0002.rec" "$2" || fail "by run interleaved: pieces differ"

# by size: every piece <= SIZE (or one chunk alone), all chunks exactly once
for size in 1 20000 50KiB 1M; do
	rm -f "$tmp"/sz-*.rec
	rc=0; "$bin/rec-split" --by size=$size -o "$tmp/sz" "$tmp/all.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 0 ] || fail "size=$size: exit $rc"
	lim=$(python3 -c "s='$size'; m={'KiB':1024,'M':1<<20}; import re; n,u=re.match(r'(\d+)(.*)',s).groups(); print(int(n)*m.get(u,1))")
	ls "$tmp"/sz-*.rec | xargs cat | cmp -s - "$tmp/all.rec" || fail "size=$size: pieces do not add up to the input"
	for p in "$tmp"/sz-*.rec; do
		s=$(stat -c %s "$p")
		if [ "$s" -gt "$lim" ]; then
			grep -q "^$p: 1 chunk, .*(one chunk larger than the size limit)$" "$tmp/out" || fail "size=$size: $p has $s bytes"
		fi
	done
	case $size in 1|50KiB) pieces_ok "$tmp/sz" ;; esac
done
# a piece is closed before it would exceed SIZE: two pieces of 50KiB cannot merge
rm -f "$tmp"/sz-*.rec
"$bin/rec-split" --by size=50KiB -o "$tmp/sz" "$tmp/all.rec" >/dev/null
n=$(ls "$tmp"/sz-*.rec | wc -l)
[ "$n" -ge $(( (total + 51199) / 51200 )) ] || fail "size=50KiB: only $n pieces for $total bytes"
prev=
for p in "$tmp"/sz-*.rec; do
	if [ -n "$prev" ]; then
		first=$(od -An -tu8 -j 24 -N8 "$p" | tr -d ' ')
		[ $(( $(stat -c %s "$prev") + 128 + first )) -gt 51200 ] || fail "size: $prev could have taken the next chunk"
	fi
	prev=$p
done

# by time: the tools' one duration grammar (a fraction, min, a bare number
# is seconds): the same windows as time=20ms
for d in 0.02 0.02s 20000us 0.0003333333333333m; do
	rm -f "$tmp"/g-*.rec
	"$bin/rec-split" --by "time=$d" -o "$tmp/g" "$tmp/all.rec" >"$tmp/g.out" 2>"$tmp/err" || fail "time=$d: exit $?: $(cat "$tmp/err")"
	sed 's|/g-|/t-|' "$tmp/g.out" >"$tmp/g2.out"
	"$bin/rec-split" --by time=20ms -o "$tmp/t" "$tmp/all.rec" >"$tmp/t.out" 2>/dev/null
	cmp -s "$tmp/g2.out" "$tmp/t.out" || fail "time=$d: not the pieces of time=20ms"
done
rm -f "$tmp"/g-*.rec "$tmp"/t-*.rec
# by time: every chunk's start lies in its piece's window
rc=0; "$bin/rec-split" --by time=20ms -o "$tmp/t" "$tmp/all.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] || fail "time: exit $rc $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/out")" -ge 2 ] || fail "time=20ms: only $(wc -l <"$tmp/out") pieces"
pieces_ok "$tmp/t"
"$bin/rec-cat" -q "$tmp"/t-*.rec | cmp -s - "$tmp/all.rec" || fail "time: rec-cat of the pieces is not the input"
for p in "$tmp"/t-*.rec; do
	"$bin/rec-print" --json "$p" >/dev/null || fail "$p: rec-print"
	w=$(grep "^$p: " "$tmp/out" | sed -n 's/.*, window \([^ ]*\) +.*/\1/p')
	python3 - "$p" 20000000 "$w" <<'PY' || fail "time: $p has a chunk outside its window $w"
import datetime, struct, sys
data = open(sys.argv[1], "rb").read(); dur = int(sys.argv[2]); off = 0; wins = set()
while off < len(data):
    hs, = struct.unpack_from("<I", data, off + 12); ps, = struct.unpack_from("<Q", data, off + 24)
    wall, = struct.unpack_from("<q", data, off + 56)
    wins.add(wall // dur); off += hs + ps
assert len(wins) == 1, wins
sec, frac = sys.argv[3].rstrip("Z").split(".")
t = datetime.datetime.strptime(sec, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
listed = int(t.timestamp()) * 10**9 + int(frac)
assert wins == {listed // dur}, (wins, listed)
PY
done
# pieces are numbered in window order
sed -n 's/.*, window \([^ ]*\) +.*/\1/p' "$tmp/out" >"$tmp/wins"
sort -c "$tmp/wins" 2>/dev/null || fail "time: pieces not numbered in window order: $(cat "$tmp/wins")"
[ "$(sort -u "$tmp/wins" | wc -l)" = "$(wc -l <"$tmp/out")" ] || fail "time: two pieces for one window"
# runs concatenated in reverse (later run first): pieces still in window order
cat "$3" "$1" >"$tmp/rev.rec"
"$bin/rec-split" --by time=20ms -o "$tmp/rv" "$tmp/rev.rec" >"$tmp/out2" || fail "time reversed: exit"
sed -n 's/.*, window \([^ ]*\) +.*/\1/p' "$tmp/out2" | sort -c 2>/dev/null || fail "time reversed: order $(cat "$tmp/out2")"
"$bin/rec-cat" -q "$tmp"/rv-*.rec | cmp -s - <(cat "$1" "$3") || fail "time reversed: rec-cat of the pieces"
rc=0; "$bin/rec-split" --by time=1h -o "$tmp/h" "$tmp/all.rec" >"$tmp/out" || rc=$?
n=$(wc -l <"$tmp/out")
[ "$n" -le 2 ] && cat "$tmp"/h-*.rec | cmp -s - "$tmp/all.rec" || fail "time=1h: $n pieces"

# damaged input: damaged chunks left out and reported, pieces still valid
rc=0; "$bin/rec-split" --by size=1 -o "$tmp/dm" "$root/testdata/invalid/corrupt-middle.rec" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "damaged: exit $rc"
grep -q "chunk 1 at offset 1177: payload checksum mismatch" "$tmp/err" && grep -q "1 damaged chunk left out" "$tmp/err" || fail "damaged: $(cat "$tmp/err")"
[ "$(ls "$tmp"/dm-*.rec | wc -l)" = 2 ] || fail "damaged: $(cat "$tmp/out")"
pieces_ok "$tmp/dm"
# standard input, default prefix
(cd "$tmp" && "$bin/rec-split" --by run - <"$tmp/all.rec" >/dev/null) || fail "stdin"
cmp -s "$tmp/rec-split-0002.rec" "$2" || fail "stdin: default prefix pieces"
cp "$1" "$tmp/def.rec"
"$bin/rec-split" --by run "$tmp/def.rec" >/dev/null && cmp -s "$tmp/def-0001.rec" "$1" || fail "default prefix from FILE"

# usage
for args in "" "$tmp/all.rec" "--by bogus $tmp/all.rec" "--by time=0 $tmp/all.rec" "--by time=1d $tmp/all.rec" "--by time=xs $tmp/all.rec" \
	"--by size=0 $tmp/all.rec" "--by size=10X $tmp/all.rec" "--by run" "--by run a b"; do
	rc=0; "$bin/rec-split" $args >/dev/null 2>"$tmp/err" || rc=$?
	[ "$rc" = 2 ] && grep -q "try 'rec-split --help'" "$tmp/err" || fail "usage '$args': exit $rc"
done
"$bin/rec-split" --help | grep -q '^Usage: rec-split' || fail "--help"

[ "$fails" = 0 ] && echo "archive_split: ok"
exit $((fails != 0))
