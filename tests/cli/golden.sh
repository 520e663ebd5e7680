#!/usr/bin/env bash
# Golden test: regenerate every recording and every expected output into a
# temporary directory (tests/make_testdata.sh, which also runs the facts
# checks) and require them to be identical to testdata/: the generator is
# deterministic and the tools' output on those files must not change unnoticed.
set -euo pipefail
# run.sh builds REC_BIN as $PWD/$BUILD/bin, which is wrong for an absolute BUILD.
for v in REC_BIN:bin REC_TESTS:tests; do
	n=${v%%:*} sub=${v#*:}
	if [ ! -d "${!n:-}" ] && [ -n "${BUILD:-}" ] && [ -d "$BUILD/$sub" ]; then export "$n=$BUILD/$sub"; fi
done
root=${REC_ROOT:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
REC_BIN=${REC_BIN:?} REC_TESTS=${REC_TESTS:?} bash "$root/tests/make_testdata.sh" "$tmp/testdata" >"$tmp/log" 2>&1 || {
	cat "$tmp/log"; echo "golden: make_testdata failed"; exit 1; }
status=0
for d in valid invalid; do
	for f in "$tmp/testdata/$d"/*; do
		g="$root/testdata/$d/$(basename "$f")"
		if [ ! -f "$g" ]; then
			echo "golden: testdata/$d/$(basename "$f") is missing (run make testdata)"; status=1
		elif ! cmp -s "$f" "$g"; then
			echo "golden: testdata/$d/$(basename "$f") differs:"
			case "$f" in
			*.rec) cmp "$f" "$g" || true ;;
			*) diff -u "$g" "$f" | head -40 ;;
			esac
			status=1
		fi
	done
	# Expected outputs of a generated recording that the tools no longer
	# produce are stale (other files in testdata/ belong to other tests).
	for r in "$tmp/testdata/$d"/*.rec; do
		stem=$(basename "$r" .rec)
		for g in "$root/testdata/$d/$stem".*; do
			[ -e "$g" ] || continue
			[ -f "$tmp/testdata/$d/$(basename "$g")" ] || { echo "golden: stale file testdata/$d/$(basename "$g")"; status=1; }
		done
	done
done
exit $status
