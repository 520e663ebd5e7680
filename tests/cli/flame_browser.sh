#!/usr/bin/env bash
# rec-flame's HTML page in a real headless browser (Debian's chromium,
# installed with apt-get when absent and running as root): the rendered
# frames have the expected names and widths, tooltips, search highlights
# with the matched percentage, zoom and reset, differential colours, units;
# and a profile of 30,802 frames (rec_test_flame_big): what is drawn stays
# bounded by the chart's width, search and zoom are timed in the page (the
# figures are printed) and must take under a second.
# Driven by tests/cli/flame/browser_check.js (node, standard library only,
# Chrome DevTools Protocol over --remote-debugging-pipe: tests/cli/lib/cdp.js).  Screenshots are
# kept in $FLAME_SCREENSHOTS when that is set.
# Without a browser the test FAILS, unless REC_SKIP_BROWSER=1.
set -euo pipefail
for v in REC_BIN:bin REC_TESTS:tests; do
	n=${v%%:*} sub=${v#*:}
	if [ ! -d "${!n:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/$sub" ]; then export "$n=$BUILD/$sub"; fi
done
root=${REC_ROOT:?}
flame="${REC_BIN:?}/rec-flame"

# shellcheck source=tests/cli/lib/chromium.sh
source "$root/tests/cli/lib/chromium.sh"
need_browser flame_browser

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"${REC_TESTS:?}/rec_test_flame_gen" "$tmp"
B="$tmp/before.rec" A="$tmp/after.rec"
"$flame" -o "$tmp/cpu.html" "$B"
"$flame" -o "$tmp/diff.html" --diff "$B" "$A"
"$flame" -o "$tmp/alloc.html" --event rec.Alloc "$B"
"$flame" -o "$tmp/lock.html" --event rec.LockWait "$B"
"$flame" -o "$tmp/reverse.html" --reverse "$B"
"${REC_TESTS:?}/rec_test_flame_big" "$tmp/big.rec"
"$flame" -o "$tmp/big.html" "$tmp/big.rec"
timeout 150 node "$root/tests/cli/flame/browser_check.js" "$chromium" "$tmp"
for f in cpu.png diff.png big.png; do
	# a real PNG of a real size
	[ "$(head -c 8 "$tmp/$f" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || { echo "FAIL: $f is not a PNG"; exit 1; }
	[ "$(stat -c %s "$tmp/$f")" -gt 5000 ] || { echo "FAIL: $f is too small"; exit 1; }
done
if [ -n "${FLAME_SCREENSHOTS:-}" ]; then
	mkdir -p "$FLAME_SCREENSHOTS"
	cp "$tmp"/*.png "$tmp"/*.html "$FLAME_SCREENSHOTS/"
fi
echo "flame_browser: passed"
