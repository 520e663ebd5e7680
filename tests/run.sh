#!/usr/bin/env bash
# Runs every test: each cmocka unit binary in $BUILD/tests/test_*, then each
# tests/cli/*.sh script (a script passes by exiting 0).  Prints the cmocka
# output, then one closing line "N passed, N failed".
# Usage: BUILD=build bash tests/run.sh [FILTER]   (FILTER: substring of a test file name)
# REC_TEST_JOBS=N runs N tests at a time (the output keeps the same order);
# the tests named in REC_TEST_SOLO (e.g. "cli/requestwatch") run alone.
# REC_VALGRIND=1 runs everything under valgrind memcheck (make test-valgrind;
# see tests/valgrind.sh).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
case "$BUILD" in /*) abs_build=$BUILD ;; *) abs_build=$PWD/$BUILD ;; esac
export REC_BIN="$abs_build/bin" REC_TESTS="$abs_build/tests" REC_ROOT="$PWD"
filter=${1:-}
jobs=${REC_TEST_JOBS:-1}
passed=0 failed=0 failed_names=()
res=$(mktemp -d)
trap 'rm -rf "$res"' EXIT
vg=0
if [ "${REC_VALGRIND:-0}" = 1 ]; then
	vg=1
	. tests/valgrind.sh # defines vg_run, vg_script_env, vg_check (state under $res)
fi

# Each test writes its report to $res/N.out and "passed failed name" to $res/N.res.
run_unit() { # N PATH
	local out rc p f
	if [ "$vg" = 1 ]; then
		out=$(vg_run "$1" "$2" 2>&1); rc=$?
	else
		out=$("$2" 2>&1); rc=$?
	fi
	printf '%s\n' "$out" >"$res/$1.out"
	p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
	f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
	if [ "$vg" = 1 ] && ! vg_check "$1" >>"$res/$1.out"; then
		f=$((f + 1))
		[ "$rc" -eq 99 ] && rc=0 # valgrind's --error-exitcode: counted once
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi  # crashed before its summary
	echo "$p $f $(basename "$2")" >"$res/$1.res"
}

run_cli() { # N SCRIPT
	local name log ok=1
	name=$(basename "$2" .sh)
	log=$res/$1.log
	if [ "$vg" = 1 ]; then
		(vg_script_env "$1" "$name" && bash "$2") >"$log" 2>&1 || ok=0
		vg_check "$1" >>"$log" || ok=0
	else
		bash "$2" >"$log" 2>&1 || ok=0
	fi
	if [ "$ok" = 1 ]; then
		echo "[       OK ] cli/$name" >"$res/$1.out"
		echo "1 0 cli/$name" >"$res/$1.res"
	else
		{ echo "[  FAILED  ] cli/$name"; sed 's/^/    /' "$log"; } >"$res/$1.out"
		echo "0 1 cli/$name" >"$res/$1.res"
	fi
}

# The tests, in order: "unit PATH" or "cli SCRIPT".
items=()
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	case "$t" in *"$filter"*) ;; *) continue ;; esac
	items+=("unit $t")
done
for s in tests/cli/*.sh; do
	[ -f "$s" ] || continue
	case "$s" in *"$filter"*) ;; *) continue ;; esac
	items+=("cli $s")
done

next=0 # first test whose report is not printed yet
report() { # prints the finished reports in order, up to the first unfinished one
	local p f name
	while [ "$next" -lt "${#items[@]}" ] && [ -f "$res/$next.res" ]; do
		cat "$res/$next.out"
		read -r p f name <"$res/$next.res"
		passed=$((passed + p)); failed=$((failed + f))
		[ "$f" -ne 0 ] && failed_names+=("$name")
		next=$((next + 1))
	done
}
for i in "${!items[@]}"; do
	set -- ${items[$i]}
	solo=0
	case " ${REC_TEST_SOLO:-} " in *" cli/$(basename "$2" .sh) "*|*" $(basename "$2") "*) solo=1 ;; esac
	if [ "$jobs" -le 1 ] || [ "$solo" = 1 ]; then
		wait
		"run_$1" "$i" "$2"
	else
		while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; report; done
		"run_$1" "$i" "$2" &
	fi
	report
done
wait
report

if [ "$failed" -ne 0 ]; then
	echo "failed: ${failed_names[*]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
