#!/usr/bin/env bash
# Regenerates the golden recordings of testdata/ and the tools' expected
# output on them.  `make testdata` runs it; tests/cli/golden.sh runs it into a
# temporary directory and diffs the result against testdata/.
#
# Usage: BUILD=build bash tests/make_testdata.sh [OUTDIR]   (default: testdata)
#   REC_BIN / REC_TESTS override $BUILD/bin and $BUILD/tests.
#
# Expected outputs (TZ=UTC, LC_ALL=C; tools run inside the directory so the
# file name in every message is the bare NAME.rec):
#   valid/NAME.rec     NAME.summary.txt NAME.summary.json NAME.events.txt NAME.events.json
#                      (each tool must exit 0 with an empty stderr, but for the note
#                      on frames without names that points to rec-symbolize)
#   invalid/NAME.rec   NAME.summary.{txt,err,exit} NAME.verify.{txt,err,exit}
#                      (rec-summary --verify) NAME.events.{txt,err,exit}
#   */NAME.facts       what the generator wrote; tests/cli/facts.sh checks the
#                      tools' numbers against it independently of the goldens.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
BUILD=${BUILD:-build}
case $BUILD in /*) base=$BUILD ;; *) base=$root/$BUILD ;; esac
bin=${REC_BIN:-$base/bin}
helpers=${REC_TESTS:-$base/tests}
out=${1:-testdata}
export TZ=UTC LC_ALL=C

for t in "$bin/rec-summary" "$bin/rec-print" "$helpers/gen_testdata"; do
	[ -x "$t" ] || { echo "make_testdata: $t is missing (run make first)" >&2; exit 1; }
done

mkdir -p "$out/valid" "$out/invalid"
rm -f "$out"/valid/*.rec "$out"/valid/*.facts "$out"/valid/*.txt "$out"/valid/*.json \
	"$out"/invalid/*.rec "$out"/invalid/*.facts "$out"/invalid/*.txt "$out"/invalid/*.err \
	"$out"/invalid/*.exit
"$helpers/gen_testdata" "$out"

cd "$out/valid"
for f in *.rec; do
	n=${f%.rec}
	for mode in summary.txt summary.json events.txt events.json; do
		case $mode in
		summary.txt) cmd=("$bin/rec-summary" "$f") ;;
		summary.json) cmd=("$bin/rec-summary" --json "$f") ;;
		events.txt) cmd=("$bin/rec-print" "$f") ;;
		events.json) cmd=("$bin/rec-print" --json "$f") ;;
		esac
		rc=0
		"${cmd[@]}" >"$n.$mode" 2>"$n.$mode.stderr" || rc=$?
		# the one line allowed: frames without names, pointing to rec-symbolize
		sed -i "/: note: [0-9]* frames\{0,1\} of modules with a build-id .*'rec-symbolize IN OUT/d" "$n.$mode.stderr"
		if [ "$rc" -ne 0 ] || [ -s "$n.$mode.stderr" ]; then
			echo "make_testdata: ${cmd[*]##*/} on valid/$f: exit $rc" >&2
			cat "$n.$mode.stderr" >&2
			exit 1
		fi
		rm -f "$n.$mode.stderr"
	done
done

cd ../invalid
for f in *.rec; do
	n=${f%.rec}
	rc=0
	"$bin/rec-summary" "$f" >"$n.summary.txt" 2>"$n.summary.err" || rc=$?
	echo "$rc" >"$n.summary.exit"
	rc=0
	"$bin/rec-summary" --verify "$f" >"$n.verify.txt" 2>"$n.verify.err" || rc=$?
	echo "$rc" >"$n.verify.exit"
	rc=0
	"$bin/rec-print" "$f" >"$n.events.txt" 2>"$n.events.err" || rc=$?
	echo "$rc" >"$n.events.exit"
done
cd "$root"

# Never trust what was just written blindly: check it against the generator's facts.
REC_BIN=$bin REC_DATA=$out bash tests/cli/facts.sh
echo "make_testdata: wrote $out/ and checked it against the generator's facts"
