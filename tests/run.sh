#!/usr/bin/env bash
# Runs every test: each cmocka unit binary in $BUILD/tests/test_*, then each
# tests/cli/*.sh script (a script passes by exiting 0).  Prints the cmocka
# output, then one closing line "N passed, N failed".
# Usage: BUILD=build bash tests/run.sh [FILTER]   (FILTER: substring of a test file name)
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
case "$BUILD" in /*) abs_build=$BUILD ;; *) abs_build=$PWD/$BUILD ;; esac
export REC_BIN="$abs_build/bin" REC_TESTS="$abs_build/tests" REC_ROOT="$PWD"
filter=${1:-}
passed=0 failed=0 failed_names=()

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	case "$t" in *"$filter"*) ;; *) continue ;; esac
	out=$("$t" 2>&1); rc=$?
	printf '%s\n' "$out"
	p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
	f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi  # crashed before its summary
	passed=$((passed + p)); failed=$((failed + f))
	[ "$f" -ne 0 ] && failed_names+=("$(basename "$t")")
done

for s in tests/cli/*.sh; do
	[ -f "$s" ] || continue
	case "$s" in *"$filter"*) ;; *) continue ;; esac
	name=$(basename "$s" .sh)
	log=$(mktemp)
	if bash "$s" >"$log" 2>&1; then
		echo "[       OK ] cli/$name"
		passed=$((passed + 1))
	else
		echo "[  FAILED  ] cli/$name"
		sed 's/^/    /' "$log"
		failed=$((failed + 1)); failed_names+=("cli/$name")
	fi
	rm -f "$log"
done

if [ "$failed" -ne 0 ]; then
	echo "failed: ${failed_names[*]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
